//! `metadata_snapshot_inconsistent`: a live KRaft metadata log (`__cluster_metadata-0`)
//! whose segments start above every snapshot it holds. `KafkaMetadataLog.recoverSnapshots`
//! (run by `KafkaMetadataLog.apply` once `UnifiedLog` has loaded the segments) keeps the
//! snapshots at or above the log start offset and, when that offset is above 0, requires
//! one of them: the state below the log start is in no file. Without it, it throws
//! `IllegalStateException` ("Inconsistent snapshot state") and the node does not start.

use super::{mk, name_of};
use crate::cluster::leadership::load::inconsistent_snapshots;
use crate::discover::layout::PartitionDir;
use crate::finding::{Finding, Kind};
use crate::partition::scan::PartitionReport;
use serde_json::json;

/// The finding of `p`, a live metadata log copy whose start no snapshot reaches.
pub(super) fn check_snapshot_state(p: &PartitionDir, r: &PartitionReport, out: &mut Vec<Finding>) {
    // A copy the broker does not load as its metadata log (`-delete`, `-future`, `-stray`)
    // is never opened by KafkaMetadataLog.apply.
    if !p.is_kraft_metadata() || !r.source.copy.is_live() {
        return;
    }
    let Some(bad) = inconsistent_snapshots(p) else {
        return;
    };
    let latest_below = bad.below.last();
    let msg = format!(
        "the metadata log starts at offset {} and no snapshot reaches it ({}): offsets {}–{} are in no file; KafkaMetadataLog.recoverSnapshots throws IllegalStateException (Inconsistent snapshot state) and the node does not start",
        bad.log_start,
        latest_below.map_or("none on disk".to_string(), |s| format!(
            "the latest, {}, ends at {}",
            s.file, s.end_offset
        )),
        latest_below.map_or(0, |s| s.end_offset),
        bad.log_start - 1,
    );
    out.push(
        mk(r, Kind::MetadataSnapshotInconsistent, &name_of(&p.path), msg)
            .offset(bad.log_start)
            .evidence(json!({
                "log_start_offset": bad.log_start,
                "snapshots_below_log_start": bad.below.iter().map(|s| json!({
                    "file": s.file, "end_offset": s.end_offset, "epoch": s.epoch,
                })).collect::<Vec<_>>(),
            }))
            .broker("KafkaMetadataLog.apply → recoverSnapshots throws IllegalStateException before the raft client starts: the node (broker or controller) does not start")
            .remediation("restore the removed snapshot (<endOffset>-<epoch>.checkpoint) or segment files, from a backup or from another node's copy of the same metadata log, while the node is stopped"),
    );
}
