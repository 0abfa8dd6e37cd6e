//! The leader epochs the data replicas carry against the ones the history gave.
//!
//! A leader stamps its epoch on every batch it appends (`partitionLeaderEpoch`) and a
//! broker's `LeaderEpochFileCache` keeps `(epoch, start offset)` per epoch it saw; every
//! epoch either names comes from a `PartitionChangeRecord` (or `PartitionRecord`) that gave
//! the partition a live leader at that epoch. An epoch inside the span the history covers
//! (from its first state of the partition to its latest) that the history never gave with
//! a leader is a `leader_epoch_checkpoint_mismatch`, whether the batches carry it or the
//! replica's `leader-epoch-checkpoint` names it. Epochs below the first state (before the
//! snapshot) or above the latest (the metadata copy may be older than the data) are not
//! judged.

use super::ClusterHistory;
use crate::cluster::report::ScanReport;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::read::format::checkpoint::parse_leader_epoch_checkpoint;
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
        let given: BTreeSet<i32> = h
            .leader_epochs(&p.topic, p.partition)
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        let file: Vec<(i32, i64)> = match dir.map(|d| checkpoint_entries(inv, d)) {
            Some(Ok(entries)) => entries,
            Some(Err((path, e))) => {
                // Its epochs are not judged: said (once: the consumer and tiering checks
                // may have needed it too), never taken for a file naming none.
                if !report
                    .findings
                    .iter()
                    .any(|g| g.names_unreadable_file(&path))
                {
                    out.push((Some(i), unreadable(p, &path, &e)));
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
            if epoch < span.0 || epoch > span.1 || given.contains(&epoch) || !said.insert(epoch) {
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
                        "{what} leader epoch {epoch}, which the KRaft metadata history never gave {}-{} with a leader (it gave {:?} between epochs {} and {})",
                        p.topic, p.partition, evidence.history_epochs, span.0, span.1
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

/// The `(epoch, start offset)` entries of `d`'s `leader-epoch-checkpoint` (none when
/// absent or malformed: `verify` reports those), or the file that could not be read.
fn checkpoint_entries(
    inv: &Inventory,
    d: &PartitionDir,
) -> Result<Vec<(i32, i64)>, (std::path::PathBuf, std::io::Error)> {
    let found = d.leader_epoch_checkpoint.as_deref();
    let mut failed = None;
    let read = |f: &std::path::Path| {
        std::fs::read(f)
            .map_err(|e| failed = Some((f.to_path_buf(), e)))
            .ok()
    };
    let bytes = inv.small_file(
        &d.path,
        found,
        crate::discover::layout::LEADER_EPOCH_CHECKPOINT,
        read,
    );
    if let Some(f) = failed {
        return Err(f);
    }
    let Some(bytes) = bytes else {
        return Ok(Vec::new());
    };
    Ok(parse_leader_epoch_checkpoint(&bytes)
        .map(|es| es.iter().map(|e| (e.epoch, e.start_offset)).collect())
        .unwrap_or_default())
}

/// The `unreadable_file` finding of the `leader-epoch-checkpoint` of `p` (as `verify`
/// words it, so that a run saying both says it once).
fn unreadable(
    p: &crate::partition::results::PartitionReport,
    path: &std::path::Path,
    e: &std::io::Error,
) -> Finding {
    Finding::new(
        Kind::UnreadableFile,
        &p.topic,
        p.partition,
        format!("cannot read {}: {e}", path.display()),
    )
    .segment(crate::discover::layout::LEADER_EPOCH_CHECKPOINT)
    .evidence(serde_json::json!({
        "reason": crate::read::segment::error_reason(e).unwrap_or("io_error"),
        "error": e.to_string(),
    }))
    .broker(
        "not applicable: the epochs this file names were not checked against the metadata history",
    )
}
