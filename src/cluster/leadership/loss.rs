//! What an unclean election cost on the replicas in the inputs.
//!
//! The new leader's epoch starts where its log ended when it was elected (the batches it
//! writes carry that epoch: the first one's base offset is the epoch's start offset, the
//! entry a broker's `LeaderEpochFileCache` keeps). A replica of the previous leader captured
//! before it followed the new leader (its own lineage holds no epoch at or above the new
//! one) still holds what it had at the election: the offsets from the new epoch's start to
//! its log end are the ones the new leader's lineage lacks. `replication-offset-checkpoint`
//! is written periodically (`ReplicaManager.checkpointHighWatermarks`), so the high watermark
//! it holds is at most the true one: the offsets below it were acknowledged to `acks=all`
//! producers, a lower bound of acknowledged data lost.

use super::elections::Election;
use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::discover::layout::Inventory;
use crate::finding::Source;
use crate::partition::results::PartitionReport;
use crate::read::format::checkpoint::{TextFileKind, parse_offset_checkpoint};
use serde::Serialize;

/// A replica of a partition in the inputs.
pub(crate) struct Copy<'a> {
    pub index: usize,
    pub report: &'a PartitionReport,
}

impl Copy<'_> {
    fn broker(&self) -> Option<i32> {
        self.report.source.broker_id
    }
    fn max_epoch(&self) -> Option<i32> {
        self.report
            .carried
            .leader_epochs
            .iter()
            .map(|(e, _)| *e)
            .max()
    }
}

/// The live copies of `topic`-`partition` in `report` of the cluster of `meta`.
pub(crate) fn copies<'a>(
    report: &'a ScanReport,
    meta: &Source,
    topic: &str,
    partition: i32,
) -> Vec<Copy<'a>> {
    report
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.topic == topic
                && p.partition == partition
                && p.source.copy.is_live()
                && same_cluster(meta, &p.source).is_same()
        })
        .map(|(index, report)| Copy { index, report })
        .collect()
}

/// Whether the partition directory at `path` holds another incarnation of the topic than
/// `topic_id` (its `partition.metadata` names another id; unknown: not another). A topic
/// deleted and created again under its name has a new id and epochs of its own
/// (`RemoveTopicRecord` ends the id; replicas are bound to theirs by `partition.metadata`).
pub(crate) fn other_incarnation(inv: &Inventory, path: &str, topic_id: &[u8; 16]) -> bool {
    inv.partitions
        .iter()
        .find(|d| d.path.display().to_string() == path)
        .and_then(|d| crate::cluster::replicas::topic_id_in(inv, d))
        .is_some_and(|id| id != *topic_id)
}

/// [`copies`] of the incarnation `topic_id` only (the copies of another are left out).
pub(crate) fn copies_of<'a>(
    report: &'a ScanReport,
    inv: &Inventory,
    meta: &Source,
    (topic, partition): (&str, i32),
    topic_id: &[u8; 16],
) -> Vec<Copy<'a>> {
    let mut c = copies(report, meta, topic, partition);
    c.retain(|c| !other_incarnation(inv, &c.report.path, topic_id));
    c
}

/// The start offset of leader epoch `epoch` in the copies, preferring the copy of broker
/// `leader`: `(offset, broker of the copy that shows it)`.
pub(crate) fn epoch_start(
    copies: &[Copy<'_>],
    epoch: i32,
    leader: Option<i32>,
) -> Option<(i64, Option<i32>)> {
    let start = |c: &Copy<'_>| {
        c.report
            .carried
            .leader_epochs
            .iter()
            .find(|(e, _)| *e == epoch)
            .map(|(_, o)| (*o, c.broker()))
    };
    copies
        .iter()
        .filter(|c| leader.is_some() && c.broker() == leader)
        .find_map(start)
        .or_else(|| copies.iter().find_map(start))
}

/// The previous leader's copy, as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OldLeaderCopy {
    pub broker: i32,
    pub path: String,
    /// Its log end offset.
    pub log_end_offset: Option<i64>,
    /// Its highest leader epoch (below the new one: it had not followed the new leader).
    pub max_epoch: Option<i32>,
    /// Its log dir's `replication-offset-checkpoint` entry for the partition.
    pub checkpointed_high_watermark: Option<i64>,
    /// Where it truncates when it follows the new leader, when the new leader's replica is
    /// among the inputs and that point lies below the new epoch's start (their lineages
    /// fork earlier: `AbstractFetcherThread.getOffsetTruncationState`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncates_to: Option<i64>,
    /// Offsets from the new epoch's start (or the earlier truncation point) to its log end
    /// that the new leader's lineage lacks.
    pub lost_offsets: Option<i64>,
    /// Of those, how many lie below the checkpointed high watermark (acknowledged).
    pub lost_below_high_watermark: Option<i64>,
}

/// The cost of one unclean election, as the inputs show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// The new leader's epoch start offset.
    pub start_offset: Option<i64>,
    /// The broker whose copy shows it.
    pub start_offset_from_broker: Option<i32>,
    /// Why the start offset is unknown.
    pub start_offset_unknown: Option<String>,
    pub old_leader_copy: Option<OldLeaderCopy>,
    /// Why the old leader's copy says nothing of the loss (absent, or already following).
    pub old_leader_copy_unused: Option<String>,
}

/// The checkpointed high watermark of `p` in its log dir's `replication-offset-checkpoint`.
fn checkpointed_hw(inv: &Inventory, p: &PartitionReport) -> Option<i64> {
    let ld = inv
        .log_dirs
        .iter()
        .find(|l| p.carried.log_dir.as_deref() == Some(l.path.as_path()))?;
    let found = ld.replication_offset_checkpoint.as_deref();
    let read = |f: &std::path::Path| std::fs::read(f).ok();
    let bytes = inv.small_file(&ld.path, found, "replication-offset-checkpoint", read)?;
    parse_offset_checkpoint(&bytes, TextFileKind::ReplicationOffsetCheckpoint)
        .ok()?
        .into_iter()
        .find(|e| e.topic == p.topic && e.partition == p.partition)
        .map(|e| e.offset)
}

/// The lineage copy `c`'s broker answers from
/// ([`crate::cluster::epoch_file::answering_lineage`]).
fn answering(inv: &Inventory, c: &Copy<'_>) -> Vec<(i32, i64)> {
    let dir = (inv.partitions.iter()).find(|d| d.path.display().to_string() == c.report.path);
    crate::cluster::epoch_file::answering_lineage(inv, dir, c.report)
}

/// Where epoch `epoch` starts in the new leader's answering lineage `l` when no batch of
/// it is in the inputs: its entry (assigned at election, `maybeAssignEpochStartOffset`),
/// else — the same leader given epoch `next` before writing (assigning `next` at the same
/// offset replaced it in the cache) — where `next` starts, the lineage holding an epoch
/// below both.
fn start_in_lineage(l: &[(i32, i64)], epoch: i32, next: Option<i32>) -> Option<i64> {
    if let Some(&(_, s)) = l.iter().find(|(e, _)| *e == epoch) {
        return Some(s);
    }
    let next = next?;
    let covered = l.iter().any(|(e, _)| *e < epoch);
    let at = l.iter().find(|(e, _)| *e > epoch)?;
    (covered && at.0 == next).then_some(at.1)
}

/// The loss of election `e` over `copies`; `next`: the epoch the history gives the
/// partition next when it has the same leader.
pub(crate) fn of_election(
    e: &Election,
    copies: &[Copy<'_>],
    inv: &Inventory,
    next: Option<i32>,
) -> Loss {
    let new_leader = copies.iter().find(|n| n.broker() == Some(e.leader));
    let new_lineage = new_leader.map(|n| answering(inv, n));
    let start = epoch_start(copies, e.leader_epoch, Some(e.leader)).or_else(|| {
        let s = start_in_lineage(new_lineage.as_deref()?, e.leader_epoch, next)?;
        Some((s, Some(e.leader)))
    });
    let mut loss = Loss {
        start_offset: start.map(|s| s.0),
        start_offset_from_broker: start.and_then(|s| s.1),
        start_offset_unknown: None,
        old_leader_copy: None,
        old_leader_copy_unused: None,
    };
    if start.is_none() {
        loss.start_offset_unknown = Some(if copies.is_empty() {
            "no replica of the partition is among the inputs".into()
        } else {
            format!(
                "no replica among the inputs holds a batch of leader epoch {}",
                e.leader_epoch
            )
        });
    }
    let Some(old) = e.last_live_leader.filter(|b| *b != e.leader) else {
        loss.old_leader_copy_unused = Some(match e.last_live_leader {
            // KIP-966: the last known leader elected again (LastKnownElr).
            Some(_) => "the last live leader is the broker elected again (the last known leader): no other leader's copy to measure against".into(),
            None => "the history holds no earlier leader".into(),
        });
        return loss;
    };
    let Some(c) = copies.iter().find(|c| c.broker() == Some(old)) else {
        loss.old_leader_copy_unused = Some(format!(
            "the previous leader's (broker {old}) replica is not among the inputs"
        ));
        return loss;
    };
    if c.max_epoch().is_some_and(|m| m >= e.leader_epoch) {
        loss.old_leader_copy_unused = Some(format!(
            "broker {old}'s replica already holds leader epoch {} or later: it followed the new leader and truncated",
            e.leader_epoch
        ));
        return loss;
    }
    let hw = checkpointed_hw(inv, c.report);
    let leo = c.report.log_end_offset;
    // The new leader's replica tells where the old one truncates when it follows: below
    // the new epoch's start when their lineages fork earlier.
    let truncates_to = new_leader
        .zip(new_lineage.as_deref())
        .and_then(|(n, nl)| {
            crate::cluster::replicas::truncation_point(
                &answering(inv, c),
                leo?,
                nl,
                n.report.log_end_offset?,
            )
        })
        .filter(|&t| loss.start_offset.is_some_and(|s| t < s));
    let from = truncates_to.or(loss.start_offset);
    let lost = match (from, leo) {
        (Some(s), Some(l)) => Some(l.saturating_sub(s).max(0)),
        _ => None,
    };
    let below = match (from, leo, hw) {
        (Some(s), Some(l), Some(h)) => Some(h.min(l).saturating_sub(s).max(0)),
        _ => None,
    };
    loss.old_leader_copy = Some(OldLeaderCopy {
        broker: old,
        path: c.report.path.clone(),
        log_end_offset: leo,
        max_epoch: c.max_epoch(),
        checkpointed_high_watermark: hw,
        truncates_to,
        lost_offsets: lost,
        lost_below_high_watermark: below,
    });
    loss
}
