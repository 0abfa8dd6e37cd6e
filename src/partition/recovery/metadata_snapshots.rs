//! The KRaft metadata log's snapshots as `KafkaMetadataLog.apply` takes them at start
//! (`recoverSnapshots`, run once `UnifiedLog` has loaded the segments): the snapshots at or
//! above the log start offset are kept and, when that offset is above 0, one of them is
//! required — the state below the log start is in no other file. Without it,
//! `recoverSnapshots` throws `IllegalStateException` ("Inconsistent snapshot state") and the
//! node does not start: `metadata_snapshot_inconsistent`, which `scan` reports (the
//! metadata log's own files prove the next start fails) and `verify` carries. The
//! leadership history reads the same model (`cluster::leadership::load`).

use crate::discover::layout::{
    DirKind, KraftSnapshotFate, PartitionDir, kraft_snapshot_fate, kraft_snapshot_id,
};
use crate::finding::{Finding, Kind};
use serde_json::json;

mod log_read;
mod names;
mod reader;
pub(crate) use log_read::log_read_finding;
pub(crate) use names::snapshot_name_findings;
pub(crate) use reader::{latest_snapshot, snapshot_read_finding};

/// A KRaft snapshot file `<endOffset>-<epoch>.checkpoint` of the metadata log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KraftSnapshotFile {
    pub file: String,
    pub end_offset: i64,
    pub epoch: i32,
}

/// The log start offset the node's load gives the metadata log (shared with every reader
/// of `__cluster_metadata`: `discover::layout::kraft_log`).
pub use crate::discover::layout::metadata_log_start;

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

/// A snapshot id `recoverSnapshots` keeps at start: a name `Snapshots.parse` reads, neither
/// partial nor deleted, at or above the log start (`KraftSnapshotFate::Retained`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetainedId {
    pub file: String,
    pub end_offset: i64,
    pub epoch: i32,
    /// Under the name Kafka opens the id by; else no file is opened for it unless a
    /// canonical file of the same id stands beside it.
    pub canonical: bool,
}

/// Every name of `p`'s directory with its fate at start (`recoverSnapshots` lists the whole
/// directory): the KRaft snapshots, the files discovery did not recognise and the
/// leftovers (`.checkpoint.part`, `.checkpoint.deleted`), by name.
pub fn snapshot_fates(p: &PartitionDir) -> Vec<(String, KraftSnapshotFate)> {
    let start = metadata_log_start(p);
    let mut out: Vec<(String, KraftSnapshotFate)> = (p.kraft_snapshots.iter())
        .chain(p.unknown.iter())
        .chain(p.leftovers.iter().map(|(_, path)| path))
        .filter_map(|path| path.file_name()?.to_str().map(str::to_string))
        .map(|name| {
            let fate = kraft_snapshot_fate(&name, start);
            (name, fate)
        })
        .filter(|(_, f)| *f != KraftSnapshotFate::Ignored)
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// The ids `recoverSnapshots` keeps (see [`RetainedId`]), by (end offset, epoch, name).
pub fn retained_ids(p: &PartitionDir) -> Vec<RetainedId> {
    let mut out: Vec<RetainedId> = snapshot_fates(p)
        .into_iter()
        .filter_map(|(file, fate)| match fate {
            KraftSnapshotFate::Retained {
                end_offset,
                epoch,
                canonical,
            } => Some(RetainedId {
                file,
                end_offset,
                epoch,
                canonical,
            }),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| (a.end_offset, a.epoch, &a.file).cmp(&(b.end_offset, b.epoch, &b.file)));
    out
}

/// The latest id `recoverSnapshots` keeps (`KafkaMetadataLog.latestSnapshotId`: the
/// greatest `OffsetAndEpoch`, the epoch first), whatever its file's name.
pub fn latest_retained_id(p: &PartitionDir) -> Option<RetainedId> {
    retained_ids(p)
        .into_iter()
        .max_by_key(|r| (r.epoch, r.end_offset, r.canonical))
}

/// A metadata log whose start is above every snapshot (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InconsistentSnapshots {
    /// The log start offset (the first segment's base offset).
    pub log_start: i64,
    /// The snapshots below it, by end offset (none is kept).
    pub below: Vec<KraftSnapshotFile>,
}

/// [`InconsistentSnapshots`] of `p`, when its files make the node's start fail. Every id
/// `recoverSnapshots` keeps counts, under Kafka's name or another it parses to the same
/// id (a file under such a name passes this check and fails later:
/// `metadata_snapshot_misnamed`).
pub fn inconsistent_snapshots(p: &PartitionDir) -> Option<InconsistentSnapshots> {
    let start = metadata_log_start(p);
    let snapshots = kraft_snapshots(p);
    (start > 0 && retained_ids(p).is_empty()).then_some(InconsistentSnapshots {
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
