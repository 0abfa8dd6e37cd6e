//! The cluster's leadership history, replayed offline from the KRaft metadata log
//! (`__cluster_metadata-0`): per partition the leaders, leader epochs, ISR, ELR and recovery
//! state the controller gave it, broker registrations and fencing, topic creation and
//! deletion, and the configs that decide elections; the elections among them that chose a
//! leader outside the ISR, and what those cost on the replicas in the inputs.
//!
//! * [`load`]: the metadata log as a typed list of records ([`MetadataLog`], serializable:
//!   the replay's whole input);
//! * [`replay`]: the history ([`History`]), as the broker's metadata loader applies records;
//! * [`elections`]: leader changes and how each new leader was chosen;
//! * `check`: the findings (`unclean_leader_election`, the metadata log's own notes), the
//!   leader epochs of the data replicas against the history, and the `caused_by` links of
//!   replica divergences and hanging transactions to the election they follow from;
//! * `stray`: the live partition directories the image at the log's end no longer assigns
//!   to their broker (`stray_replica`);
//! * `future`: the `-future` copies the image already assigns to their log dir, which the
//!   broker's next start makes its live log (`abandoned_future_replica`);
//! * `directories`: the directory ids the image registers for each broker
//!   ([`RegisteredDirs`], carried by the report for `verify`'s broker checks).
//!
//! Several brokers of one cluster each keep a copy of the metadata log; per cluster the
//! copy that reaches furthest is replayed, once.

pub mod elections;
pub mod load;
pub mod replay;

mod check;
mod clean;
mod directories;
mod epochs;
mod future;
mod links;
mod loss;
mod notes;
mod quorum_conflict;
mod quorum_state;
mod refused;
mod stray;
pub mod view;

pub use check::{run, run_over};
pub use directories::RegisteredDirs;
pub use elections::{Choice, Election};
pub use load::{MetadataLog, QuorumEvent, QuorumState, SnapshotId, Undecodable};
pub use replay::{History, MetaEntry, PartitionState, Step, Timeline};

use crate::cluster::report::ScanReport;
use crate::discover::identity::{ClusterKey, Identities, same_cluster};
use crate::discover::layout::Inventory;
use crate::finding::Source;
use std::collections::BTreeMap;

/// The replayed metadata log of one cluster.
#[derive(Debug, Clone)]
pub struct ClusterHistory {
    /// Where the replayed copy was read.
    pub source: Source,
    pub log: MetadataLog,
    pub history: History,
    pub elections: Vec<Election>,
    /// The `quorum-state` of every live copy of the cluster's metadata log, the replayed one
    /// included: `(partition directory, what its start reads)`.
    pub quorum_states: Vec<(String, QuorumState)>,
}

impl ClusterHistory {
    /// Replay a decoded metadata log.
    pub fn from_log(source: Source, log: MetadataLog) -> Self {
        let history = replay::replay_with_gaps(&log.entries, &log.gaps);
        let elections = elections::all(&history);
        ClusterHistory {
            source,
            log,
            history,
            elections,
            quorum_states: Vec::new(),
        }
    }

    /// The history of `source`'s cluster among `histories`, when exactly one speaks for it
    /// (`None`: none, or two that `same_cluster` cannot tell apart).
    pub fn of_cluster<'h>(histories: &'h [ClusterHistory], source: &Source) -> Option<&'h Self> {
        let mut of = histories
            .iter()
            .filter(|h| same_cluster(&h.source, source).is_same());
        match (of.next(), of.next()) {
            (Some(h), None) => Some(h),
            _ => None,
        }
    }

    /// `metadata.version` as the replayed log leaves it (its last `FeatureLevelRecord`;
    /// `None`: the log sets none).
    pub fn metadata_version(&self) -> Option<i16> {
        self.history.metadata_versions.last().map(|(_, l)| *l)
    }

    /// The timeline of `topic`-`partition`: its live incarnation, else the newest removed one.
    pub fn timeline(&self, topic: &str, partition: i32) -> Option<&Timeline> {
        let mut found: Option<&Timeline> = None;
        for t in self.history.partitions.values() {
            if t.topic == topic && t.partition == partition {
                let better = match found {
                    None => true,
                    Some(f) => {
                        f.removed_at.is_some() && t.removed_at.is_none()
                            || f.removed_at.is_some()
                                && t.removed_at.is_some()
                                && t.removed_at > f.removed_at
                    }
                };
                if better {
                    found = Some(t);
                }
            }
        }
        found
    }

    /// The timeline of `topic`-`partition`'s live incarnation and the state the history
    /// leaves it in, when that state names a live leader and nothing of the log was left
    /// unread (a gap may hide a later leader change, and past it the replay's leader epochs
    /// may be stale: [`MetadataLog::gaps`]); `None` otherwise, and for a removed topic.
    pub fn current_leader(
        &self,
        topic: &str,
        partition: i32,
    ) -> Option<(&Timeline, &PartitionState)> {
        if !self.log.gaps.is_empty() {
            return None;
        }
        let t = self
            .timeline(topic, partition)
            .filter(|t| t.removed_at.is_none())?;
        let now = t.current().filter(|s| s.leader >= 0)?;
        Some((t, now))
    }

    /// The leader epochs the history gave `topic`-`partition` with a live leader, in order:
    /// `(epoch, leader)`. Epochs below the first state the history holds are unknown to it.
    pub fn leader_epochs(&self, topic: &str, partition: i32) -> Vec<(i32, i32)> {
        let mut out: Vec<(i32, i32)> = Vec::new();
        for s in self
            .timeline(topic, partition)
            .iter()
            .flat_map(|t| &t.steps)
        {
            let st = &s.state;
            if st.leader >= 0 && out.last().is_none_or(|(e, _)| *e != st.leader_epoch) {
                out.push((st.leader_epoch, st.leader));
            }
        }
        out
    }

    /// The epoch lineage of `topic`-`partition`: every leader epoch the history gave it with a
    /// live leader, and the offset that epoch starts at when a replica in `report` (of this
    /// cluster) wrote in it (`None`: no input shows it).
    pub fn lineage(
        &self,
        report: &ScanReport,
        topic: &str,
        partition: i32,
    ) -> Vec<(i32, Option<i64>)> {
        let copies = loss::copies(report, &self.source, topic, partition);
        self.leader_epochs(topic, partition)
            .into_iter()
            .map(|(e, leader)| {
                (
                    e,
                    loss::epoch_start(&copies, e, Some(leader)).map(|(o, _)| o),
                )
            })
            .collect()
    }
}

/// Every cluster's metadata history in `inv`: per cluster (its `cluster.id`, or the log dir
/// without one) the most up-to-date live `__cluster_metadata` copy: the epoch of its last
/// batch first, then its end offset.
pub fn load_all(
    inv: &Inventory,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Vec<ClusterHistory> {
    load_all_read(inv, max_bytes, max_decompressed).0
}

/// [`load_all`], and the files of every live copy that could not be read
/// ([`MetadataLog::unread`], chosen copy or not): `(path, why)`.
pub fn load_all_read(
    inv: &Inventory,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> (Vec<ClusterHistory>, Vec<(std::path::PathBuf, String)>) {
    let ids = Identities::load(inv);
    let mut unread = Vec::new();
    let mut best: BTreeMap<ClusterKey, (Source, MetadataLog)> = BTreeMap::new();
    let mut quorum_states: BTreeMap<ClusterKey, Vec<(String, QuorumState)>> = BTreeMap::new();
    for p in inv.partitions.iter().filter(|p| p.is_kraft_metadata()) {
        let source = ids.source(p);
        if !source.copy.is_live() {
            continue;
        }
        let log = match &inv.recorded {
            // An inventory rebuilt from bundles: the log their collects decoded.
            Some(r) => r
                .metadata_logs
                .get(&p.path)
                .and_then(|json| serde_json::from_str(json).ok())
                .unwrap_or_else(|| MetadataLog {
                    path: p.path.display().to_string(),
                    ..Default::default()
                }),
            None => read_copy(inv, p, max_bytes, max_decompressed),
        };
        unread.extend(log.unread.iter().map(|(p, why)| (p.into(), why.clone())));
        let key = ClusterKey::of(&source);
        if let Some(q) = &log.quorum_state {
            let states = quorum_states.entry(key.clone()).or_default();
            states.push((log.path.clone(), q.clone()));
        }
        // The most up-to-date copy as KRaft orders logs (`OffsetAndEpoch.compareTo`, the
        // epoch first: `KafkaRaftClient`'s log comparison in elections): a former
        // leader's longer tail at an older epoch was never committed (its followers
        // truncated it on fetch), while the copy at the newer epoch holds what was.
        let further = best
            .get(&key)
            .is_none_or(|(_, b)| (log.last_epoch, log.end_offset) > (b.last_epoch, b.end_offset));
        if further {
            best.insert(key, (source, log));
        }
    }
    let histories = best
        .into_iter()
        .map(|(key, (s, l))| {
            let mut h = ClusterHistory::from_log(s, l);
            h.quorum_states = quorum_states.remove(&key).unwrap_or_default();
            h
        })
        .collect();
    (histories, unread)
}

/// The decoded metadata log of the `__cluster_metadata` directory `p` of `inv`, with its
/// log dir's `bootstrap.checkpoint` (what [`load_all`] replays, what a bundle carries).
pub fn read_copy(
    inv: &Inventory,
    p: &crate::discover::layout::PartitionDir,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> MetadataLog {
    let mut log = load::read_metadata_dir(p, max_bytes, max_decompressed);
    let bootstrap = inv
        .log_dirs
        .iter()
        .find(|l| Some(&l.path) == p.log_dir.as_ref())
        .and_then(|l| l.bootstrap_checkpoint.as_ref());
    if let Some(b) = bootstrap {
        load::read_bootstrap(b, max_bytes, max_decompressed, &mut log);
    }
    log
}

/// The `history` command's data: every cluster's history in `inv` under `filter`.
pub fn views(inv: &Inventory, filter: &view::HistoryFilter) -> Vec<view::ClusterView> {
    views_read(inv, filter).0
}

/// [`views`], and the metadata files that could not be read ([`load_all_read`]).
pub fn views_read(
    inv: &Inventory,
    filter: &view::HistoryFilter,
) -> (Vec<view::ClusterView>, Vec<(std::path::PathBuf, String)>) {
    let (histories, unread) = load_all_read(
        inv,
        None,
        crate::read::format::codec::DEFAULT_MAX_DECOMPRESSED,
    );
    let views = histories.iter().map(|h| view::view(h, filter)).collect();
    (views, unread)
}
