//! Leftovers: the log dir's own findings (`unclean_shutdown`, leftovers, unreadable
//! checkpoints) and a partition's leftover files, directory kind and orphaned indexes,
//! with what the broker's startup does with each (`LogLoader.removeTempFilesAndCollectSwapFiles`).

use super::{mk, name_of};
use crate::discover::layout::{DirKind, LeftoverKind, LogDir, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::partition::recovery::swaps::CompletedSwaps;
use crate::partition::recovery::{LeftoverAction, LogDirFiles};
use crate::partition::scan::PartitionReport;
use crate::read::format::checkpoint::TextFileKind;
use serde_json::json;

/// Findings about the log dir itself: `unclean_shutdown`, its leftovers, unreadable
/// checkpoints.
pub(crate) fn log_dir_findings(ld: &LogDir, files: &LogDirFiles) -> Vec<Finding> {
    let mut out = Vec::new();
    if !files.has_markers {
        return out;
    }
    let dir = ld.path.display().to_string();
    if !files.clean_shutdown {
        out.push(
            Finding::new(
                Kind::UncleanShutdown,
                "",
                -1,
                format!("{dir}: no .kafka_cleanshutdown: the next start recovers every partition from its recovery point"),
            )
            .segment(dir.clone())
            .evidence(json!({"log_dir": dir}))
            .broker("LogManager treats the directory as not cleanly shut down: LogLoader runs LogSegment.recover on every segment at or above each partition's recovery point (CRC check, index rebuild, truncation at the first invalid batch)"),
        );
    }
    for (kind, path) in &ld.leftovers {
        let (action, _) = leftover_action(*kind, &name_of(path), &[]);
        out.push(
            Finding::new(
                Kind::LeftoverFile,
                "",
                -1,
                format!("{dir}: leftover {}: {action}", name_of(path)),
            )
            .segment(name_of(path))
            .evidence(json!({"file": path.display().to_string(), "leftover": kind}))
            .broker(action),
        );
    }
    for (c, kind) in [
        (
            &files.recovery_points,
            TextFileKind::RecoveryPointOffsetCheckpoint,
        ),
        (&files.log_starts, TextFileKind::LogStartOffsetCheckpoint),
        (
            &files.high_watermarks,
            TextFileKind::ReplicationOffsetCheckpoint,
        ),
    ] {
        if let Some(Err(e)) = c {
            let consequence = match kind {
                TextFileKind::RecoveryPointOffsetCheckpoint => {
                    "the broker uses recovery point 0 for every partition of the directory (full recovery after an unclean shutdown)"
                }
                TextFileKind::LogStartOffsetCheckpoint => {
                    "the broker uses each partition's first segment base offset as its log start"
                }
                _ => "the broker starts with no high watermark for the directory's partitions",
            };
            out.push(
                Finding::new(
                    Kind::CheckpointInconsistent,
                    "",
                    -1,
                    format!("{dir}: {kind} cannot be read: {e}"),
                )
                .segment(kind.file_name())
                .evidence(json!({"file": kind.file_name(), "error": e}))
                .broker(consequence),
            );
        }
    }
    out
}

/// What startup does with a leftover (`LogLoader.removeTempFilesAndCollectSwapFiles`). `swaps` are the
/// partition's other leftovers, for the unfinished-split rule.
fn leftover_action(
    kind: LeftoverKind,
    name: &str,
    cleaned_offsets: &[i64],
) -> (String, &'static str) {
    let num: Option<i64> = name.split('.').next().and_then(|n| n.parse().ok());
    match kind {
        LeftoverKind::Deleted if name.ends_with(".checkpoint.deleted") => (
            "left alone by LogLoader (a KRaft snapshot scheduled for deletion: the Raft layer deletes it)".into(),
            "deleted",
        ),
        LeftoverKind::Deleted => ("deleted at startup (it was scheduled for deletion)".into(), "deleted"),
        LeftoverKind::Cleaned => (
            "deleted at startup (unfinished cleaner or split output)".into(),
            "cleaned",
        ),
        LeftoverKind::Swap
            if num.is_some_and(|n| cleaned_offsets.iter().any(|&c| n >= c)) =>
        {
            (
                "deleted at startup (belongs to an unfinished split: a .cleaned file at or below its offset exists)".into(),
                "swap",
            )
        }
        LeftoverKind::Swap => (
            "swap completed at startup: segment files whose base offset falls in the swapped range are deleted, then the suffix is dropped".into(),
            "swap",
        ),
        LeftoverKind::Tmp if name.ends_with(".checkpoint.part") => (
            "deleted by the Raft layer at startup (interrupted KRaft snapshot write)".into(),
            "tmp",
        ),
        LeftoverKind::Tmp => (
            "ignored; overwritten at the next atomic write of that file (interrupted checkpoint write)".into(),
            "tmp",
        ),
    }
}

/// A partition's leftovers, directory kind and orphaned indexes: one `leftover_file`
/// finding each, and the actions the recovery prediction lists.
pub(super) fn partition_leftovers(
    p: &PartitionDir,
    r: &PartitionReport,
    swaps: Option<&CompletedSwaps>,
    out: &mut Vec<Finding>,
) -> Vec<LeftoverAction> {
    let mut leftovers = Vec::new();
    let cleaned: Vec<i64> = p
        .leftovers
        .iter()
        .filter(|(k, _)| *k == LeftoverKind::Cleaned)
        .filter_map(|(_, path)| name_of(path).split('.').next()?.parse().ok())
        .collect();
    // One range, from the lowest swap base to the highest next offset among them, is
    // cleared of every other file before the swaps are renamed (`swaps`); a segment at a
    // swapped-in base is overwritten by the rename. Named once (the first 20), whatever
    // the number of swaps.
    let completed: std::collections::HashSet<&std::path::Path> = swaps
        .map(|sw| sw.segments.iter().map(|s| s.path.as_path()).collect())
        .unwrap_or_default();
    let replaced = swaps.map(|sw| {
        let names: Vec<String> = p
            .segments
            .iter()
            .filter(|s| sw.removes(s.base_offset))
            .filter_map(|s| s.log.as_deref().map(name_of))
            .collect();
        match names.len() {
            0 => "no segment".to_string(),
            n if n > 20 => format!("{} and {} more", names[..20].join(", "), n - 20),
            _ => names.join(", "),
        }
    });
    for (kind, path) in &p.leftovers {
        let name = name_of(path);
        let (action, k) = leftover_action(*kind, &name, &cleaned);
        let mut action = action;
        if let (Some(sw), Some(replaced)) = (swaps, &replaced)
            && completed.contains(path.as_path())
        {
            action = format!(
                "swap completed at startup: range [{}, {}) replaces {replaced} then {name} is renamed to {}",
                sw.from,
                sw.to,
                name.trim_end_matches(".swap")
            );
        }
        out.push(
            mk(
                r,
                Kind::LeftoverFile,
                &name,
                format!("leftover {name}: {action}"),
            )
            .evidence(json!({"file": path.display().to_string(), "leftover": kind}))
            .broker(action.clone()),
        );
        leftovers.push(LeftoverAction {
            file: name,
            kind: k.into(),
            action,
        });
    }
    if let Some(kind) = &p.kind {
        let what = match kind {
            DirKind::Normal => None,
            DirKind::Delete { .. } => Some((
                "delete_dir",
                "loaded without recovery, then deleted: LogLoader.load skips recoverLog for a -delete directory (recovery point and log end 0, the leader-epoch cache emptied, the producer state rebuilt only to offset 0) and LogManager.loadLog queues the log for deletion (removed once file.delete.delay.ms, 60 s by default, has passed)",
            )),
            DirKind::Future { .. } => Some((
                "future_dir",
                "loaded as a future replica (the destination of a move between log dirs)",
            )),
            DirKind::Stray { .. } => Some((
                "stray_dir",
                "kept as a stray log; deleted once the controller confirms the broker does not own the partition",
            )),
        };
        if let Some((k, action)) = what {
            let name = name_of(&p.path);
            out.push(
                mk(
                    r,
                    Kind::LeftoverFile,
                    &name,
                    format!("directory {name}: {action}"),
                )
                .evidence(json!({"dir": p.path.display().to_string(), "dir_kind": kind}))
                .broker(action),
            );
            leftovers.push(LeftoverAction {
                file: name,
                kind: k.into(),
                action: action.into(),
            });
        }
    }
    for s in p.orphan_indexes() {
        for f in [&s.index, &s.timeindex, &s.txnindex].into_iter().flatten() {
            let name = name_of(f);
            let action = "deleted at startup (orphaned index file: its .log is missing)";
            out.push(
                mk(r, Kind::LeftoverFile, &name, format!("{name}: {action}"))
                    .evidence(json!({"file": f.display().to_string()}))
                    .broker(action),
            );
            leftovers.push(LeftoverAction {
                file: name,
                kind: "orphan_index".into(),
                action: action.into(),
            });
        }
    }
    leftovers
}
