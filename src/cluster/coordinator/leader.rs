//! Which copy of a `__transaction_state` partition the coordinator loads, when the
//! cluster's KRaft metadata log names the partition's leader.
//!
//! The broker the metadata image makes leader of `__transaction_state-N` becomes its
//! coordinator (`BrokerMetadataPublisher.onMetadataUpdate` → `TransactionCoordinator.
//! onElection` for the partitions of `topicDelta.localChanges(brokerId).leaders`) and loads
//! its own log (`TransactionStateManager.loadTransactionsForTxnTopicPartition` reads
//! `replicaManager.getLog` of its own replica up to the log end); the broker that stops
//! leading drops its cache (`onResignation`) and, as a follower, truncates what the new
//! leader does not hold. Another copy's longer tail (records its leader appended above
//! the high watermark, never fetched by the new leader) is no coordinator's state.
//!
//! The leader is taken from the metadata log only when the evidence reads one way
//! ([`LeaderCopies::of`]); otherwise the view and the join keep the copy with the
//! highest offsets. `--transactional-id` resolves its producer ids through the same choice
//! ([`LeaderCopies::loads`]), so its selection follows the copy the findings follow.

use super::TRANSACTION_STATE_TOPIC;
use super::model::CoordModel;
use crate::discover::identity::{ClusterKey, Identities};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::Source;
use crate::partition::recovery::BrokerVersion;
use crate::partition::results::ScanOptions;
use std::collections::{BTreeMap, BTreeSet};

/// What a cluster's metadata log says of the current leader of one `__transaction_state`
/// partition: its broker, its leader epoch and the topic id of the topic's live
/// incarnation (given by the pipeline from the leadership history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedLeader {
    pub broker: i32,
    pub leader_epoch: i32,
    pub topic_id: [u8; 16],
}

/// The `__transaction_state` partition copies (by directory) that the metadata log's
/// current leader holds: what the coordinator loads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderCopies {
    paths: BTreeSet<String>,
    /// The other copies (live or not) of the partitions whose leader's copy is in `paths`:
    /// no coordinator's state.
    unloaded: BTreeSet<String>,
    /// The copies (live or not) whose cluster is known to run Kafka 4.3 or later
    /// ([`Self::loaded_by_kafka_4_3`]).
    since_4_3: BTreeSet<String>,
}

impl LeaderCopies {
    /// For each `__transaction_state` partition of each cluster in `inv` (its live copies),
    /// the copy on the broker `named` gives as its leader (`named(source, partition)`, from
    /// the cluster's metadata log). No copy is chosen, and the highest offsets decide as
    /// before, when: `named` gives none (no metadata log of the cluster, or one that cannot
    /// say: see `ClusterHistory::current_leader`); the leader holds no live copy, or two
    /// (two log dirs of one broker); its copy's `partition.metadata` names another topic
    /// id (another incarnation); or a copy's `leader-epoch-checkpoint` names a leader
    /// epoch above the metadata log's (the data is newer than the metadata log read: the
    /// leader it names may have changed since), or cannot be read. Where a copy is chosen,
    /// the partition's other copies of the cluster, live or not (`-delete`, `-future`), are
    /// no coordinator's state ([`Self::loads`]).
    pub fn of(inv: &Inventory, named: impl Fn(&Source, i32) -> Option<NamedLeader>) -> Self {
        let ids = Identities::load(inv);
        type Copies<'a> = Vec<(&'a PartitionDir, Source)>;
        let mut groups: BTreeMap<(ClusterKey, i32), Copies<'_>> = BTreeMap::new();
        let mut not_live: BTreeMap<(ClusterKey, i32), Vec<&PartitionDir>> = BTreeMap::new();
        for p in &inv.partitions {
            let tp = p.tp.as_ref();
            let Some(tp) = tp.filter(|tp| tp.topic == TRANSACTION_STATE_TOPIC) else {
                continue;
            };
            let src = ids.source(p);
            let key = (ClusterKey::of(&src), tp.partition);
            if src.copy.is_live() {
                groups.entry(key).or_default().push((p, src));
            } else {
                not_live.entry(key).or_default().push(p);
            }
        }
        let mut out = LeaderCopies::default();
        for (key, copies) in &groups {
            let partition = &key.1;
            let Some(l) = named(&copies[0].1, *partition) else {
                continue;
            };
            let on_leader: Vec<&PartitionDir> = (copies.iter())
                .filter(|(_, s)| s.broker_id == Some(l.broker))
                .map(|(p, _)| *p)
                .collect();
            let [p] = on_leader[..] else {
                continue;
            };
            if inv.topic_id(p).is_some_and(|id| id != l.topic_id) {
                continue;
            }
            let newer = |c: &PartitionDir| match crate::cluster::epoch_file::read(inv, c) {
                Ok(entries) => (entries.iter().flatten()).any(|e| e.epoch > l.leader_epoch),
                Err(_) => true,
            };
            if copies.iter().any(|(c, _)| newer(c)) {
                continue;
            }
            out.paths.insert(p.path.display().to_string());
            let others = (copies.iter().map(|(c, _)| *c))
                .chain(not_live.get(key).into_iter().flatten().copied())
                .filter(|c| !std::ptr::eq(*c, p));
            (out.unloaded).extend(others.map(|c| c.path.display().to_string()));
        }
        out
    }

    /// [`Self::of`], with the copies of every `__transaction_state` partition loaded by
    /// Kafka 4.3 or later: all of them when `opts` gives that release (`verify
    /// --broker-version`), else those whose cluster `finalized_4_3` says finalizes
    /// `metadata.version` 4.3-IV0 or later in its metadata log (no earlier broker joins
    /// such a cluster: `ClusterControlManager.registerBroker` refuses a broker that does
    /// not support the finalized level).
    pub fn with_release(
        mut self,
        inv: &Inventory,
        opts: &ScanOptions,
        finalized_4_3: impl Fn(&Source) -> bool,
    ) -> Self {
        let given = (opts.broker_version).is_some_and(|v| v >= BrokerVersion(4, 3, 0));
        let ids = Identities::load(inv);
        for p in &inv.partitions {
            let tp = p.tp.as_ref();
            if tp.is_some_and(|tp| tp.topic == TRANSACTION_STATE_TOPIC)
                && (given || finalized_4_3(&ids.source(p)))
            {
                self.since_4_3.insert(p.path.display().to_string());
            }
        }
        self
    }

    /// No copy chosen, and the release `opts` gives ([`Self::with_release`]): for a run
    /// without a replay of the metadata logs.
    pub fn of_release(inv: &Inventory, opts: &ScanOptions) -> Self {
        LeaderCopies::default().with_release(inv, opts, |_| false)
    }

    /// Whether the coordinator that loads the copy at `path` is known to run Kafka 4.3 or
    /// later ([`Self::with_release`]): it skips a value of an unknown version and completes
    /// a transaction at epoch 32767 (`super::model::Replay::loaded_by_kafka_4_3`).
    pub fn loaded_by_kafka_4_3(&self, path: &str) -> bool {
        self.since_4_3.contains(path)
    }

    /// Whether the copy at `path` is the one the named leader holds.
    pub fn contains(&self, path: &str) -> bool {
        self.paths.contains(path)
    }

    /// Whether the coordinator's state may be read from the copy at `path`: any copy of a
    /// partition whose leader's copy is not named (each id's value then comes from the
    /// copy with the highest offset, as before), and of one whose is, that copy alone (the
    /// others, live or not, hold no coordinator's state). What `--transactional-id`
    /// resolves through ([`super::CoordinatorView::load_as`]).
    pub fn loads(&self, path: &str) -> bool {
        !self.unloaded.contains(path)
    }

    /// Mark each model of `models` whose copy is the named leader's
    /// ([`CoordModel::leader_copy`]).
    pub fn mark(&self, models: &mut [CoordModel]) {
        for m in models {
            m.leader_copy = self.contains(&m.origin.path);
        }
    }
}
