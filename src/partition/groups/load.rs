//! Reading `__consumer_offsets` partitions for the group replay (the only I/O of
//! `groups`), the `groups` listing, and the pipeline's cluster check ([`cluster_check`]).

use super::model::{Group, GroupType};
use super::replay::{Input, Replay};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::partition::walked::{LogRecord, RecordSink};
use crate::read::format::groups::CONSUMER_OFFSETS_TOPIC;
use rayon::prelude::*;

/// Options of `klogscan groups`.
#[derive(Debug, Clone, Default)]
pub struct GroupsOptions {
    /// Only this group id.
    pub group: Option<String>,
    /// Only groups of this type.
    pub group_type: Option<GroupType>,
    /// Also list deleted groups.
    pub include_deleted: bool,
    pub max_bytes: Option<u64>,
    /// Decompression cap per batch (0: the scan's default).
    pub max_decompressed: usize,
}

/// Replay one `__consumer_offsets` partition directory: every batch in offset order,
/// transactional offset commits held until their marker. Unreadable segments and
/// batches that do not frame end the replay of that segment (the scan reports them).
/// (The scan replays the partitions it walks itself, from that walk: see
/// [`crate::partition::walked`].)
pub fn replay_partition_dir(p: &PartitionDir, max_bytes: Option<u64>, max_dec: usize) -> Replay {
    let partition = p.tp.as_ref().map_or(-1, |tp| tp.partition);
    let mut r = Replay::new(partition, &p.path.display().to_string());
    crate::partition::walked::collect_dir(p, false, max_bytes, max_dec, Some(&mut r));
    r.finish();
    r
}

/// The group replay consumes the walk's records in offset order.
impl RecordSink for Replay {
    fn record(&mut self, rec: &LogRecord, segment: &str) {
        Replay::record(
            self,
            Input {
                offset: rec.offset,
                producer_id: rec.producer_id,
                idempotent_producer_id: rec.idempotent_producer_id,
                key: rec.key.as_deref(),
                value: rec.value.as_deref(),
                position: rec.position,
                segment,
            },
        );
    }
    fn marker(&mut self, producer_id: i64, commit: bool) {
        Replay::marker(self, producer_id, commit);
    }
    fn unread(&mut self, segment: &str, message: &str) {
        self.unread.push(format!("{segment}: {message}"));
    }
}

/// A group replay for a partition of `topic`, when it is `__consumer_offsets` (the scan
/// feeds it from its walk and keeps [`finish_anomalies`]' result).
pub(crate) fn replay_for(topic: &str, partition: i32, path: &str) -> Option<Replay> {
    (topic == CONSUMER_OFFSETS_TOPIC).then(|| Replay::new(partition, path))
}

/// End the replay and keep only what the cluster checks read: its anomalies, and its
/// groups and committed offsets ([`group_offsets`]). `whole`: the log was read to its end
/// (else no end-of-log check runs: [`Replay::finish_read`]).
pub(crate) fn finish_anomalies(
    mut r: Replay,
    whole: bool,
) -> (
    Vec<crate::partition::walked::GroupAnomaly>,
    crate::partition::walked::GroupOffsets,
) {
    r.finish_read(whole);
    let offsets = group_offsets(&r);
    (r.anomalies, offsets)
}

/// The live groups of a finished replay and their committed offsets, applied and pending.
pub fn group_offsets(r: &Replay) -> crate::partition::walked::GroupOffsets {
    use crate::partition::walked::{GroupCommit, GroupOffsets};
    let commit = |group: &str, c: &super::model::Committed, pending: Option<i64>| GroupCommit {
        group: group.to_string(),
        commit: c.clone(),
        pending_producer: pending,
        expiry: None,
    };
    let pending: std::collections::HashSet<(&str, &str, i32)> = r
        .pending_commits()
        .map(|(_, g, c)| (g, c.topic.as_str(), c.partition))
        .collect();
    let mut commits: Vec<GroupCommit> = r
        .groups
        .values()
        .flat_map(|g| {
            g.offsets.iter().map(|c| GroupCommit {
                expiry: (!pending.contains(&(g.group_id.as_str(), c.topic.as_str(), c.partition)))
                    .then(|| super::expiry::of(g, c))
                    .flatten(),
                ..commit(&g.group_id, c, None)
            })
        })
        .collect();
    commits.extend(
        r.pending_commits()
            .map(|(pid, g, c)| commit(g, c, Some(pid))),
    );
    GroupOffsets {
        groups: r
            .groups
            .values()
            .map(|g| (g.group_id.clone(), g.group_type.as_str().to_string()))
            .collect(),
        commits,
    }
}

pub(crate) fn is_offsets_dir(p: &PartitionDir) -> bool {
    p.tp.as_ref()
        .is_some_and(|tp| tp.topic == CONSUMER_OFFSETS_TOPIC)
}

/// The groups of every `__consumer_offsets` partition of `inv`, filtered, sorted by
/// group id then partition directory.
pub fn list_groups(inv: &Inventory, opts: &GroupsOptions) -> Vec<Group> {
    list_groups_read(inv, opts).0
}

/// [`list_groups`], and what could not be read: `(partition directory, why)` per batch
/// or segment whose records the replay did not get (the groups may miss them).
pub fn list_groups_read(
    inv: &Inventory,
    opts: &GroupsOptions,
) -> (Vec<Group>, Vec<(std::path::PathBuf, String)>) {
    let mut out = Vec::new();
    let mut unread = Vec::new();
    let ids = crate::discover::identity::Identities::load(inv);
    let clusters: std::collections::BTreeMap<String, Option<String>> = inv
        .partitions
        .iter()
        .filter(|p| is_offsets_dir(p))
        .map(|p| {
            let cluster = ids.source(p).cluster_id.map(|c| c.to_string());
            (p.path.display().to_string(), cluster)
        })
        .collect();
    let replays: Vec<Replay> = inv
        .partitions
        .par_iter()
        .filter(|p| is_offsets_dir(p))
        .map(|p| replay_partition_dir(p, opts.max_bytes, opts.max_decompressed))
        .collect();
    for r in replays {
        unread.extend(
            r.unread
                .into_iter()
                .map(|why| (std::path::PathBuf::from(&r.path), why)),
        );
        let cluster = clusters.get(&r.path).cloned().flatten();
        let mut live = r.groups;
        for g in live.values_mut() {
            g.cluster_id.clone_from(&cluster);
        }
        let deleted: Vec<Group> = r
            .deleted
            .into_values()
            .filter(|g| opts.include_deleted && !live.contains_key(&g.group_id))
            .map(|mut g| {
                g.cluster_id.clone_from(&cluster);
                g
            })
            .collect();
        out.extend(live.into_values().chain(deleted).filter(|g| {
            opts.group.as_ref().is_none_or(|id| *id == g.group_id)
                && opts.group_type.is_none_or(|t| t == g.group_type)
        }));
    }
    out.sort_by(|a, b| (&a.group_id, &a.path).cmp(&(&b.group_id, &b.path)));
    (out, unread)
}
