//! The leader epochs the data replicas carry against the ones the history gave.
//!
//! A leader stamps its epoch on every batch it appends (`partitionLeaderEpoch`) and a
//! broker's `LeaderEpochFileCache` keeps `(epoch, start offset)` per epoch it saw; every
//! epoch either names comes from a `PartitionChangeRecord` (or `PartitionRecord`) that gave
//! the partition a live leader at that epoch. An epoch inside the span the history covers
//! (from its first state of the partition to its latest) that the history never gave with
//! a leader is a `leader_epoch_checkpoint_mismatch`, whether the batches carry it or the
//! replica's `leader-epoch-checkpoint` names it. Epochs below the first state (before the
//! snapshot) are not judged, nor those above the latest (the metadata copy may be older
//! than the data) — unless the history is the node's own metadata replica and both its log
//! dir and the replica's were shut down cleanly (`.kafka_cleanshutdown`): a broker appends
//! as leader at the epoch its image gives (`Partition.makeLeader` → `appendAsLeader`) and
//! fetches as follower only at the epoch it knows (the leader answers another
//! `currentLeaderEpoch` with FENCED/UNKNOWN_LEADER_EPOCH, `Partition.fetchRecords`), and
//! its image is what its metadata replica committed, which nothing removes — so every
//! epoch its data names is in that replica, and one above its latest is not that node's.

use super::ClusterHistory;
use crate::cluster::epoch_file;
use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::{Finding, Kind};
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Serialize)]
struct EpochEvidence<'a> {
    epoch: i32,
    start_offset: i64,
    /// `batches` (the batches' partitionLeaderEpoch) or `leader-epoch-checkpoint`.
    from: &'static str,
    history_epochs: Vec<i32>,
    history_span: (i32, i32),
    metadata_log: &'a str,
}

/// The findings for the replicas of `h`'s cluster in `report`, with their partition index.
pub(super) fn check(
    h: &ClusterHistory,
    report: &ScanReport,
    inv: &Inventory,
) -> Vec<(Option<usize>, Finding)> {
    let mut out = Vec::new();
    for (i, p) in report.partitions.iter().enumerate() {
        if !p.source.copy.is_live()
            || p.topic == "__cluster_metadata"
            || !crate::discover::identity::same_cluster(&h.source, &p.source).is_same()
        {
            continue;
        }
        let Some(t) = h.timeline(&p.topic, p.partition) else {
            continue;
        };
        // Another incarnation of the topic (deleted and created again under the same name)
        // has other epochs.
        let dir = inv
            .partitions
            .iter()
            .find(|d| d.path.display().to_string() == p.path);
        if dir
            .and_then(|d| crate::cluster::replicas::topic_id_in(inv, d))
            .is_some_and(|id| id != t.topic_id)
        {
            continue;
        }
        let (Some(first), Some(last)) = (t.steps.first(), t.current()) else {
            continue;
        };
        // A record the replay could not apply before the partition's latest change: the
        // epochs it inferred past it may be off (a `PartitionChangeRecord` carries none),
        // so the files are not held to them.
        if h.log.gaps.iter().any(|&g| g < last.offset) {
            continue;
        }
        let span = (first.state.leader_epoch, last.leader_epoch);
        // Above the span too when this node's own replica, shut down with the data, is
        // the history.
        let whole = own_clean_replica(h, inv, p);
        let given: BTreeSet<i32> = h
            .leader_epochs(&p.topic, p.partition)
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        let file: Vec<(i32, i64)> = match dir.map(|d| epoch_file::read(inv, d)) {
            Some(Ok(entries)) => entries
                .unwrap_or_default()
                .iter()
                .map(|e| (e.epoch, e.start_offset))
                .collect(),
            Some(Err(u)) => {
                // Its epochs are not judged: said (once: discovery, the consumer and
                // tiering checks may have named it), never taken for a file naming none.
                if epoch_file::to_name(&u, report.findings.iter()) {
                    out.push((Some(i), epoch_file::finding(p, &u, UNREAD_EPOCHS)));
                }
                Vec::new()
            }
            None => Vec::new(),
        };
        let named = p
            .carried
            .leader_epochs
            .iter()
            .map(|e| (*e, "batches"))
            .chain(file.iter().map(|e| (*e, "leader-epoch-checkpoint")));
        let mut said = BTreeSet::new();
        for ((epoch, start), from) in named {
            if epoch < span.0
                || (epoch > span.1 && !whole)
                || given.contains(&epoch)
                || !said.insert(epoch)
            {
                continue;
            }
            let evidence = EpochEvidence {
                epoch,
                start_offset: start,
                from,
                history_epochs: given.iter().copied().collect(),
                history_span: span,
                metadata_log: &h.log.path,
            };
            let what = if from == "batches" {
                format!("batches from offset {start} carry")
            } else {
                format!("leader-epoch-checkpoint names (from offset {start})")
            };
            out.push((
                Some(i),
                Finding::new(
                    Kind::LeaderEpochCheckpointMismatch,
                    &p.topic,
                    p.partition,
                    format!(
                        "{what} leader epoch {epoch}, which the KRaft metadata history never gave {}-{} with a leader (it gave {:?} between epochs {} and {}){}",
                        p.topic,
                        p.partition,
                        evidence.history_epochs,
                        span.0,
                        span.1,
                        if epoch > span.1 {
                            "; the history is this node's own metadata replica, shut down cleanly with the data, which holds every epoch the node applied: the data was not written by this node as it is"
                        } else {
                            ""
                        }
                    ),
                )
                .offset(start)
                .evidence(serde_json::to_value(&evidence).unwrap_or_default())
                .broker("a broker appends as leader only at the epoch the controller gave it; followers copy the leader's epochs")
                .remediation("check that the metadata log and the data directory come from the same cluster and incarnation of the topic"),
            ));
        }
    }
    out
}

/// Whether `h` is the metadata replica of `p`'s own node and both their log dirs were shut
/// down cleanly (each a broker log dir holding `.kafka_cleanshutdown`): the replica then
/// holds every epoch the node applied before the data was last written.
fn own_clean_replica(
    h: &ClusterHistory,
    inv: &Inventory,
    p: &crate::partition::results::PartitionReport,
) -> bool {
    let clean = |d: Option<&str>| {
        d.map(std::path::Path::new)
            .is_some_and(|d| inv.broker_log_dir(d) && !inv.unclean_shutdown(d))
    };
    h.source.broker_id.is_some()
        && h.source.broker_id == p.source.broker_id
        && clean(h.source.log_dir.as_deref())
        && clean(p.source.log_dir.as_deref())
}

/// What the `unreadable_file` finding of a replica's `leader-epoch-checkpoint` says was
/// not given.
const UNREAD_EPOCHS: &str =
    "not applicable: the epochs this file names were not checked against the metadata history";
