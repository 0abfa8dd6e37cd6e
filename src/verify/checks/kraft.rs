//! `unparseable_file_name` of a live KRaft metadata log's (`__cluster_metadata-0`)
//! snapshot names: `KafkaMetadataLog.recoverSnapshots` (run by `KafkaMetadataLog.apply`
//! once `UnifiedLog` has loaded the segments) first gives every name of the directory to
//! `Snapshots.parse`, which reads a name ending `.checkpoint` (`.checkpoint.part`,
//! `.checkpoint.deleted`) at fixed widths and throws on a renamed one
//! (`discover::layout::kraft_snapshot_name`); nothing catches it. (Its other start
//! failure, `metadata_snapshot_inconsistent`, is the scan's:
//! `partition::recovery::metadata_snapshots`, carried here.)

use super::{mk, name_of};
use crate::discover::layout::{KraftSnapshotName, PartitionDir, kraft_snapshot_name};
use crate::finding::{Finding, Kind};
use crate::partition::scan::PartitionReport;
use serde_json::json;

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
