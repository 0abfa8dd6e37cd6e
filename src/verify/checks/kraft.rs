//! `metadata_snapshot_inconsistent`: a live KRaft metadata log (`__cluster_metadata-0`)
//! whose segments start above every snapshot it holds. `KafkaMetadataLog.recoverSnapshots`
//! (run by `KafkaMetadataLog.apply` once `UnifiedLog` has loaded the segments) keeps the
//! snapshots at or above the log start offset and, when that offset is above 0, requires
//! one of them: the state below the log start is in no file. Without it, it throws
//! `IllegalStateException` ("Inconsistent snapshot state") and the node does not start.
//!
//! `unparseable_file_name` of such a log's snapshot names: `recoverSnapshots` first gives
//! every name of the directory to `Snapshots.parse`, which reads a name ending
//! `.checkpoint` (`.checkpoint.part`, `.checkpoint.deleted`) at fixed widths and throws on
//! a renamed one (`discover::layout::kraft_snapshot_name`); nothing catches it.

use super::{mk, name_of};
use crate::cluster::leadership::load::inconsistent_snapshots;
use crate::discover::layout::{KraftSnapshotName, PartitionDir, kraft_snapshot_name};
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

/// The `unparseable_file_name` findings of `p`, a live metadata log copy, for each file
/// whose name `Snapshots.parse` throws on (discovery left it unrecognised, or took it for a
/// `.checkpoint.part`/`.checkpoint.deleted` leftover). The prediction follows `UnifiedLog`'s
/// load, complete before `recoverSnapshots` lists the snapshots, so it names no load failure
/// for them (as for `metadata_snapshot_inconsistent`).
pub(super) fn check_snapshot_names(p: &PartitionDir, r: &PartitionReport, out: &mut Vec<Finding>) {
    if !p.is_kraft_metadata() || !r.source.copy.is_live() {
        return;
    }
    let mut bad: Vec<(String, &'static str, &std::path::Path)> = p
        .unknown
        .iter()
        .chain(p.leftovers.iter().map(|(_, path)| path))
        .filter_map(|path| {
            let name = name_of(path);
            match kraft_snapshot_name(&name) {
                KraftSnapshotName::Throws(e) => Some((name, e, path.as_path())),
                _ => None,
            }
        })
        .collect();
    bad.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, exception, path) in bad {
        out.push(
            mk(
                r,
                Kind::UnparseableFileName,
                &name,
                format!(
                    "{name}: KafkaMetadataLog reads this name as a KRaft snapshot's (<20-digit end offset>-<10-digit epoch>.checkpoint) and cannot ({exception}): the node does not start"
                ),
            )
            .evidence(json!({
                "file": path.display().to_string(),
                "parsed_by": "kraft_snapshots",
                "exception": exception,
            }))
            .broker(format!(
                "KafkaMetadataLog.apply → recoverSnapshots, after UnifiedLog's load of the segments: Snapshots.parse reads the end offset and the epoch at fixed widths and throws {exception}; nothing catches it, so the node (broker or controller) does not start"
            ))
            .client_error("none from this file: the node does not start, so its clients fail over to other nodes or wait")
            .remediation(format!(
                "with the node stopped, move {name} out of the partition directory, or give it back its name <endOffset, 20 digits>-<epoch, 10 digits>.checkpoint if it is a renamed snapshot"
            )),
        );
    }
}
