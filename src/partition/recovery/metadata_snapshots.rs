//! The KRaft metadata log's snapshots as `KafkaMetadataLog.apply` takes them at start
//! (`recoverSnapshots`, run once `UnifiedLog` has loaded the segments): the snapshots at or
//! above the log start offset are kept and, when that offset is above 0, one of them is
//! required — the state below the log start is in no other file. Without it,
//! `recoverSnapshots` throws `IllegalStateException` ("Inconsistent snapshot state") and the
//! node does not start: `metadata_snapshot_inconsistent`, which `scan` reports (the
//! metadata log's own files prove the next start fails) and `verify` carries. The
//! leadership history reads the same model (`cluster::leadership::load`).

use crate::discover::layout::{DirKind, PartitionDir, kraft_snapshot_id};
use crate::finding::{Finding, Kind};
use serde_json::json;

mod reader;
pub(crate) use reader::{latest_snapshot, snapshot_read_finding};

/// A KRaft snapshot file `<endOffset>-<epoch>.checkpoint` of the metadata log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KraftSnapshotFile {
    pub file: String,
    pub end_offset: i64,
    pub epoch: i32,
}

/// The log start offset `UnifiedLog`'s load gives the metadata log (`KafkaMetadataLog.apply`
/// opens it with log start 0: the first segment's base offset, else 0).
pub fn metadata_log_start(p: &PartitionDir) -> i64 {
    p.segments
        .iter()
        .filter(|s| s.log.is_some())
        .map(|s| s.base_offset)
        .min()
        .unwrap_or(0)
        .max(0)
}

/// The KRaft snapshots of `p` whose names `Snapshots.parse` reads (at its fixed widths), by
/// end offset.
pub fn kraft_snapshots(p: &PartitionDir) -> Vec<KraftSnapshotFile> {
    let mut out: Vec<KraftSnapshotFile> = p
        .kraft_snapshots
        .iter()
        .filter_map(|path| {
            let file = path.file_name()?.to_str()?.to_string();
            let (end_offset, epoch) = kraft_snapshot_id(&file)?;
            Some(KraftSnapshotFile {
                file,
                end_offset,
                epoch,
            })
        })
        .collect();
    out.sort_by_key(|s| (s.end_offset, s.epoch));
    out
}

/// A metadata log whose start is above every snapshot (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InconsistentSnapshots {
    /// The log start offset (the first segment's base offset).
    pub log_start: i64,
    /// The snapshots below it, by end offset (none is kept).
    pub below: Vec<KraftSnapshotFile>,
}

/// [`InconsistentSnapshots`] of `p`, when its files make the node's start fail.
pub fn inconsistent_snapshots(p: &PartitionDir) -> Option<InconsistentSnapshots> {
    let start = metadata_log_start(p);
    let snapshots = kraft_snapshots(p);
    (start > 0 && snapshots.iter().all(|s| s.end_offset < start)).then_some(InconsistentSnapshots {
        log_start: start,
        below: snapshots,
    })
}

/// The `metadata_snapshot_inconsistent` finding of `p` (`segment` = the directory's name),
/// a live metadata log copy whose start no snapshot reaches. A copy the broker does not
/// load as its metadata log (`-delete`, `-future`, `-stray`) is never opened by
/// `KafkaMetadataLog.apply`: none.
pub(crate) fn snapshot_state_finding(
    p: &PartitionDir,
    topic: &str,
    partition: i32,
) -> Option<Finding> {
    let live = matches!(p.kind, None | Some(DirKind::Normal));
    if !p.is_kraft_metadata() || !live {
        return None;
    }
    let bad = inconsistent_snapshots(p)?;
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
    let dir = p
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(
        Finding::new(Kind::MetadataSnapshotInconsistent, topic, partition, msg)
            .segment(dir)
            .offset(bad.log_start)
            .evidence(json!({
                "log_start_offset": bad.log_start,
                "snapshots_below_log_start": bad.below.iter().map(|s| json!({
                    "file": s.file, "end_offset": s.end_offset, "epoch": s.epoch,
                })).collect::<Vec<_>>(),
            }))
            .broker("KafkaMetadataLog.apply → recoverSnapshots throws IllegalStateException before the raft client starts: the node (broker or controller) does not start")
            .remediation("restore the removed snapshot (<endOffset>-<epoch>.checkpoint) or segment files, from a backup or from another node's copy of the same metadata log, while the node is stopped"),
    )
}
