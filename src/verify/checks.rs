//! The cross-checks of `verify`: every file of a partition against the log.

use super::VerifyOptions;
use crate::finding::{Finding, Kind, Severity};
use crate::format::checkpoint::{TextFileKind, parse_leader_epoch_checkpoint};
use crate::format::index::{
    LogBatches, OffsetCheck, OffsetIndex, TimeCheck, TimeIndex, TxnIndex, check_offset_index,
    check_time_index,
};
use crate::format::snapshot::{ProducerSnapshot, kafka_message};
use crate::layout::{DirKind, LeftoverKind, LogDir, PartitionDir};
use crate::recovery::{
    self as predict, LeftoverAction, LogDirFiles, PredictInput, RecoverWalk, SegmentInput,
    SnapshotInput, lookup,
};
use crate::scan::PartitionReport;
use crate::segment::{self, FileClass, FileData, load};
use crate::state::ProducerState;
use serde_json::json;
use std::path::Path;

/// Most entries listed in one finding's evidence.
const EVIDENCE_CAP: usize = 20;

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

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

/// What startup does with a leftover (`kafka-format.md` §1.5). `swaps` are the
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

/// The `unreadable_file` finding of a file a cross-check needed.
fn unreadable(r: &PartitionReport, path: &Path, e: &std::io::Error) -> Finding {
    mk(
        r,
        Kind::UnreadableFile,
        &name_of(path),
        format!("cannot read {}: {e}", path.display()),
    )
    .evidence(
        json!({"reason": segment::error_reason(e).unwrap_or("io_error"), "error": e.to_string()}),
    )
    .broker("not applicable: the cross-checks of this file did not run")
}

/// Load a file a cross-check needs ([`segment::load`]: bounded, mapped or read per
/// `--mmap`); an unreadable one is an `unreadable_file` finding, never a silent skip.
fn load_checked(
    path: &Path,
    class: FileClass,
    opts: &VerifyOptions,
    r: &PartitionReport,
    out: &mut Vec<Finding>,
) -> Option<FileData> {
    match load(path, class, opts.scan.mmap, None) {
        Ok(d) => Some(d),
        Err(e) => {
            out.push(unreadable(r, path, &e));
            None
        }
    }
}

/// After a mapped file was used: if it changed under the map, what was concluded from
/// it is void; say so.
fn report_if_changed(data: &FileData, path: &Path, r: &PartitionReport, out: &mut Vec<Finding>) {
    if let Err(e) = data.check_unchanged() {
        out.push(unreadable(r, path, &e));
    }
}

fn mk(r: &PartitionReport, kind: Kind, file: &str, msg: String) -> Finding {
    Finding::new(kind, &r.topic, r.partition, msg).segment(file)
}

/// Run every cross-check of one partition, push the findings, and predict its recovery.
pub(crate) fn verify_one(
    p: &PartitionDir,
    ld: Option<(&LogDir, &LogDirFiles)>,
    r: &PartitionReport,
    opts: &VerifyOptions,
    load_rules: &[Finding],
    out: &mut Vec<Finding>,
) -> predict::RecoveryPrediction {
    let (topic, part) = (r.topic.as_str(), r.partition);
    let files = ld.map(|(_, f)| f).filter(|f| f.has_markers);
    let recovery_point = files.and_then(|f| lookup(&f.recovery_points, topic, part));
    let log_start_ck = files.and_then(|f| lookup(&f.log_starts, topic, part));
    let hw = files.and_then(|f| lookup(&f.high_watermarks, topic, part));
    let clean_shutdown = files.map(|f| f.clean_shutdown);
    let first_offset = r.first_offset;
    let leo = r.outcome.log_end_offset;
    let delete_dir = matches!(p.kind, Some(DirKind::Delete { .. }));

    // --- leftovers, partition directory kinds, orphaned indexes -------------------------
    let mut leftovers = Vec::new();
    let cleaned: Vec<i64> = p
        .leftovers
        .iter()
        .filter(|(k, _)| *k == LeftoverKind::Cleaned)
        .filter_map(|(_, path)| name_of(path).split('.').next()?.parse().ok())
        .collect();
    for (kind, path) in &p.leftovers {
        let name = name_of(path);
        let (action, k) = leftover_action(*kind, &name, &cleaned);
        let mut action = action;
        if *kind == LeftoverKind::Swap
            && name.ends_with(".log.swap")
            && !action.starts_with("deleted")
            && let Ok(b) = load(path, FileClass::Log, opts.scan.mmap, None)
        {
            let base: i64 = name
                .split('.')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let next = LogBatches::from_log(&b)
                .batches
                .last()
                .map_or(base, |x| x.last_offset.wrapping_add(1));
            let replaced: Vec<String> = p
                .segments
                .iter()
                .filter(|s| s.base_offset >= base && s.base_offset < next)
                .filter_map(|s| s.log.as_deref().map(name_of))
                .collect();
            action = format!(
                "swap completed at startup: range [{base}, {next}) replaces {} then {name} is renamed to {}",
                if replaced.is_empty() {
                    "no segment".to_string()
                } else {
                    replaced.join(", ")
                },
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
                "queued for asynchronous deletion at startup (not loaded)",
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

    // --- per segment: offset index, time index, transaction index ------------------------
    let logs: Vec<&crate::layout::SegmentFiles> =
        p.segments.iter().filter(|s| s.log.is_some()).collect();
    let pre_2_3 = opts
        .broker_version
        .is_some_and(|v| v < super::BrokerVersion(2, 3, 0));
    let mut seg_inputs = Vec::new();
    for (i, s) in logs.iter().enumerate() {
        let Some(log_path) = s.log.as_deref() else {
            continue;
        };
        let log_name = name_of(log_path);
        // The scan walked this segment once: its entries and recovery verdict come from
        // that walk (`None` when the file was unreadable; the scan reported it).
        let k = r
            .segment_walks
            .iter()
            .position(|w| w.base_offset == s.base_offset && w.name == log_name);
        let walk: Option<RecoverWalk> = k.and_then(|k| r.segment_walks[k].walk.clone());
        let batches: Option<&LogBatches> = k.and_then(|k| r.log_batches.get(k)?.as_ref());
        let mut corrupt_index: Option<String> = None;
        // Offset index.
        let missing_index = s.index.is_none();
        if missing_index {
            out.push(
                mk(r, Kind::IndexCorrupt, &log_name, format!("{log_name}: no offset index: the broker recovers this segment at load (rebuilds its indexes)"))
                    .severity(Severity::Info)
                    .evidence(json!({"missing": format!("{:020}.index", s.base_offset)}))
                    .broker("NoSuchFileException at load: LogLoader runs LogSegment.recover on the segment (CRC check, index rebuild, truncation at the first invalid batch), even after a clean shutdown"),
            );
        }
        if let (Some(ipath), Some(lb)) = (s.index.as_deref(), batches)
            && let Some(bytes) = load_checked(ipath, FileClass::Index, opts, r, out)
        {
            report_if_changed(&bytes, ipath, r, out);
            let iname = name_of(ipath);
            let idx = OffsetIndex::new(&bytes, s.base_offset);
            let abs = ipath.display().to_string();
            if let Err(e) = idx.sanity_check() {
                if pre_2_3 {
                    corrupt_index =
                        Some(format!("corrupt offset index: {}", e.kafka_message(&abs)));
                }
                out.push(
                    mk(r, Kind::IndexCorrupt, &iname, format!("{iname}: {}", e.kafka_message(&abs)))
                        .evidence(json!({"sanity": e, "length": idx.len_bytes()}))
                        .broker("CorruptIndexException from sanityCheck: brokers before 2.3 recover the segment at load; later brokers do not check at load and misread lookups until the segment is recovered"),
                );
            } else if let Err(e) = idx.check() {
                out.push(
                    mk(r, Kind::IndexCorrupt, &iname, format!("{iname}: {e}"))
                        .position(e.position)
                        .evidence(json!({"structure": e.structure, "field": e.field, "error_position": e.position, "problem": e.problem.to_string()}))
                        .broker("not checked at load (since 2.3); offset lookups through this index land on wrong positions until the segment is recovered (InvalidOffsetException on append past it)"),
                );
            }
            let bad: Vec<_> = check_offset_index(&idx, lb)
                .into_iter()
                .filter(|c| {
                    !matches!(
                        c.check,
                        OffsetCheck::Exact | OffsetCheck::FollowerChunk { .. }
                    )
                })
                .collect();
            if let Some(first) = bad.first() {
                let ev: Vec<_> = bad.iter().take(EVIDENCE_CAP).map(|c| json!({"slot": c.entry.slot, "offset": c.entry.offset, "position": c.entry.position, "check": c.check, "log_offset": c.log_offset()})).collect();
                out.push(
                    mk(r, Kind::IndexMismatch, &iname, format!(
                        "{iname}: {} of {} entries do not point at a batch ending at their offset; first: slot {} offset {} position {} ({})",
                        bad.len(), idx.layout().used, first.entry.slot, first.entry.offset, first.entry.position, describe_offset_check(&first.check)))
                        .offset(first.entry.offset)
                        .position(first.entry.position.max(0) as u64)
                        .evidence(json!({"mismatches": bad.len(), "entries": ev}))
                        .broker("not checked at load: fetches and offset lookups start from the wrong byte position (consumers may get OffsetOutOfRange or skip/repeat batches) until recovery rebuilds the index"),
                );
            }
        }
        // Time index.
        if let (Some(tpath), Some(lb)) = (s.timeindex.as_deref(), batches)
            && let Some(bytes) = load_checked(tpath, FileClass::Index, opts, r, out)
        {
            report_if_changed(&bytes, tpath, r, out);
            let tname = name_of(tpath);
            let tidx = TimeIndex::new(&bytes, s.base_offset);
            let layout = tidx.layout();
            if layout.trailing_bytes != 0 {
                out.push(
                    mk(r, Kind::IndexCorrupt, &tname, format!("{tname}: {} bytes is not a multiple of 12", tidx.len_bytes()))
                        .evidence(json!({"length": tidx.len_bytes(), "trailing_bytes": layout.trailing_bytes}))
                        .broker("CorruptIndexException from the time index sanityCheck (run at load before 2.3); timestamp lookups misbehave"),
                );
                if pre_2_3 && corrupt_index.is_none() {
                    corrupt_index = Some("corrupt time index: length not a multiple of 12".into());
                }
            }
            let checks = check_time_index(&tidx, lb);
            let bad: Vec<_> = checks.iter().filter(|c| c.is_problem()).collect();
            if let Some(first) = bad.first() {
                let ev: Vec<_> = bad.iter().take(EVIDENCE_CAP).map(|c| json!({"slot": c.entry.slot, "timestamp": c.entry.timestamp, "offset": c.entry.offset, "check": c.check, "out_of_order_after": c.out_of_order_after})).collect();
                let what = match (first.out_of_order_after, first.check) {
                    (Some(prev), _) => format!(
                        "timestamp {} not above the previous entry's {prev}",
                        first.entry.timestamp
                    ),
                    (_, TimeCheck::TimestampMismatch { log_timestamp }) => format!(
                        "indexed timestamp {} but the batch ending at offset {} has max timestamp {log_timestamp}",
                        first.entry.timestamp, first.entry.offset
                    ),
                    (_, TimeCheck::NotFound { found_log_offset }) => format!(
                        "no batch ends at offset {} (next batch ends at {found_log_offset})",
                        first.entry.offset
                    ),
                    _ => String::new(),
                };
                out.push(
                    mk(r, Kind::TimeindexMismatch, &tname, format!("{tname}: {} of {} entries disagree with the log; first: slot {}: {what}", bad.len(), layout.used, first.entry.slot))
                        .offset(first.entry.offset)
                        .evidence(json!({"mismatches": bad.len(), "entries": ev}))
                        .broker("not checked at load: ListOffsets by timestamp and time-based retention use these entries until recovery rebuilds the index"),
                );
            }
        }
        // Transaction index.
        let expected: Vec<&crate::state::AbortedTxn> = r
            .outcome
            .aborted
            .iter()
            .filter(|a| a.segment as usize == i)
            .collect();
        let txn_bytes = s
            .txnindex
            .as_deref()
            .and_then(|t| load_checked(t, FileClass::Index, opts, r, out));
        let tname = s
            .txnindex
            .as_deref()
            .map(name_of)
            .unwrap_or_else(|| format!("{:020}.txnindex", s.base_offset));
        let actual: Vec<crate::format::index::AbortedTxn> = match &txn_bytes {
            Some(b) => {
                let t = TxnIndex::new(b, s.base_offset);
                if let Err(e) = t.sanity_check() {
                    let msg = e.kafka_message(
                        &s.txnindex
                            .as_deref()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
                    );
                    corrupt_index = Some(format!("corrupt transaction index: {msg}"));
                    out.push(
                        mk(r, Kind::TxnindexMismatch, &tname, format!("{tname}: {msg}"))
                            .offset(e.txn.last_offset)
                            .evidence(json!({"entry": e.txn}))
                            .broker("CorruptIndexException at load: LogLoader recovers the segment and rebuilds the transaction index from the markers"),
                    );
                } else if let Err(e) = t.check() {
                    out.push(
                        mk(r, Kind::TxnindexMismatch, &tname, format!("{tname}: {e}"))
                            .position(e.position)
                            .evidence(json!({"structure": e.structure, "field": e.field, "error_position": e.position, "problem": e.problem.to_string()}))
                            .broker("not checked at load beyond lastOffset ≥ base offset; read_committed fetches collect aborted transactions from it as it is"),
                    );
                }
                t.entries().collect()
            }
            None => Vec::new(),
        };
        // Before the first offset held, the log cannot confirm or refute: an entry whose
        // transaction began in deleted segments is unknown, not wrong, as long as a batch
        // (its ABORT marker) ends at its lastOffset.
        let held_from = r.first_offset.unwrap_or(i64::MAX);
        let marker_at = |o: i64| {
            batches.is_some_and(|lb| {
                lb.batches
                    .iter()
                    .any(|b| b.last_offset == o && b.base_offset == o)
            })
        };
        let before_start = |a: &crate::format::index::AbortedTxn| {
            (a.first_offset < held_from || a.last_stable_offset < held_from)
                && marker_at(a.last_offset)
        };
        let mut missing = Vec::new();
        let mut wrong = Vec::new();
        for e in &expected {
            match actual.iter().find(|a| a.producer_id == e.producer_id && a.last_offset == e.last_offset) {
                None => missing.push(json!({"producer_id": e.producer_id, "first_offset": e.first_offset, "last_offset": e.last_offset, "last_stable_offset": e.last_stable_offset})),
                Some(a) if before_start(a) => {}
                Some(a) if a.first_offset != e.first_offset || a.last_stable_offset != e.last_stable_offset => wrong.push(json!({
                    "producer_id": e.producer_id, "last_offset": e.last_offset,
                    "first_offset": a.first_offset, "expected_first_offset": e.first_offset,
                    "last_stable_offset": a.last_stable_offset, "expected_last_stable_offset": e.last_stable_offset})),
                Some(_) => {}
            }
        }
        let extra: Vec<_> = actual
            .iter()
            .filter(|a| !before_start(a))
            .filter(|a| !expected.iter().any(|e| e.producer_id == a.producer_id && e.last_offset == a.last_offset))
            .map(|a| json!({"producer_id": a.producer_id, "first_offset": a.first_offset, "last_offset": a.last_offset, "last_stable_offset": a.last_stable_offset}))
            .collect();
        // No .txnindex and no offset index: the broker recovers this segment at load
        // (missing offset index) and LogSegment.recover rebuilds the transaction index from
        // the markers, so nothing is missing from the index it will serve (the evidence may
        // simply not include the segment's index files).
        if s.txnindex.is_none() && missing_index {
            missing.clear();
        }
        for (list, what, consequence) in [
            (
                &missing,
                "aborted transactions missing from",
                "read_committed consumers receive the aborted records of these transactions (the broker never rebuilds a .txnindex below the recovery point)",
            ),
            (
                &extra,
                "entries with no matching ABORT marker in",
                "read_committed consumers drop these producers' records from firstOffset up to the next marker, hiding committed data",
            ),
            (
                &wrong,
                "entries with a wrong firstOffset or lastStableOffset in",
                "read_committed consumers drop the wrong range, or the broker stops collecting aborted transactions too early",
            ),
        ] {
            if list.is_empty() {
                continue;
            }
            let off = list[0].get("last_offset").and_then(|v| v.as_i64());
            let mut f = mk(r, Kind::TxnindexMismatch, &tname, format!("{tname}: {} {what} the index (recomputed from the markers of {log_name})", list.len()))
                .evidence(json!({"entries": list.iter().take(EVIDENCE_CAP).collect::<Vec<_>>(), "count": list.len(), "expected": expected.len(), "indexed": actual.len()}))
                .broker(consequence);
            if let Some(o) = off {
                f = f.offset(o);
            }
            out.push(f);
        }
        seg_inputs.push(SegmentInput {
            name: log_name,
            base: s.base_offset,
            missing_index,
            corrupt_index,
            walk,
        });
    }

    // --- producer snapshots -------------------------------------------------------------
    let mut snap_inputs = Vec::new();
    for sf in &p.snapshots {
        let name = name_of(&sf.path);
        let Some(bytes) = load_checked(&sf.path, FileClass::ProducerSnapshot, opts, r, out) else {
            continue;
        };
        let parsed = ProducerSnapshot::parse(&bytes);
        snap_inputs.push(SnapshotInput {
            offset: sf.offset,
            name: name.clone(),
            valid: parsed.is_ok(),
        });
        let snap = match parsed {
            Ok(s) => s,
            Err(e) => {
                out.push(
                    mk(r, Kind::SnapshotCorrupt, &name, format!("{name}: {}", kafka_message(&e)))
                        .offset(sf.offset)
                        .evidence(json!({"structure": e.structure, "field": e.field, "error_position": e.position, "problem": e.problem.to_string(), "length": bytes.len()}))
                        .broker("CorruptSnapshotException at load: the broker deletes the snapshot and falls back to the next older one (or a full replay of the log)"),
                );
                continue;
            }
        };
        if leo.is_some_and(|l| sf.offset > l) {
            out.push(
                mk(r, Kind::SnapshotMismatch, &name, format!("{name}: snapshot at offset {} is above the log end offset {}: it covers data the log no longer holds", sf.offset, leo.unwrap_or(0)))
                    .offset(sf.offset)
                    .evidence(json!({"snapshot_offset": sf.offset, "log_end_offset": leo}))
                    .broker("deleted at load (snapshots above the log end offset are removed); the state is rebuilt from an older snapshot"),
            );
            continue;
        }
        if first_offset.is_none_or(|f| sf.offset <= f) {
            continue; // nothing of the log lies below N: nothing to compare with
        }
        let Some((_, state)) = r.snapshot_states.iter().find(|(n, _)| *n == sf.offset) else {
            continue;
        };
        let diffs = compare_snapshot(&snap, state, first_offset.unwrap_or(0));
        if let Some(first) = diffs.first() {
            out.push(
                mk(r, Kind::SnapshotMismatch, &name, format!("{name}: {} producer(s) differ from the state rebuilt from offsets below {}; first: {}", diffs.len(), sf.offset, first.0))
                    .offset(sf.offset)
                    .evidence(json!({"snapshot_offset": sf.offset, "differences": diffs.iter().take(EVIDENCE_CAP).map(|d| d.1.clone()).collect::<Vec<_>>()}))
                    .broker("loaded as is when it is the newest valid snapshot: the broker's producer state (open transactions, sequences, epochs) is then what the snapshot says, not what the log says"),
            );
        }
    }
    // Only after a clean shutdown does the broker skip the rebuild when no snapshot exists
    // (`ProducerStateManager`/`LogLoader`: `isEmpty && hadCleanShutdown`); otherwise it
    // replays the log from its start and finds the open transactions.
    if !logs.is_empty()
        && p.snapshots.is_empty()
        && !r.outcome.open.is_empty()
        && clean_shutdown == Some(true)
        // a segment recovered at load leaves a snapshot (recoverSegment → takeSnapshot)
        && seg_inputs
            .iter()
            .all(|s| !s.missing_index && s.corrupt_index.is_none())
    {
        out.push(
            mk(r, Kind::SnapshotMismatch, &name_of(&p.path), format!("no producer snapshot although {} transaction(s) are open: after a clean shutdown the broker skips the rebuild and forgets them", r.outcome.open.len()))
                .offset(r.outcome.open[0].first_offset)
                .evidence(json!({"open": r.outcome.open}))
                .broker("with no snapshot and a clean shutdown, rebuildProducerState skips the log scan: every producer state, open transactions included, is lost (their data reads as committed)"),
        );
    }

    // --- leader-epoch-checkpoint ----------------------------------------------------------
    if let Some(path) = &p.leader_epoch_checkpoint
        && let Some(bytes) = load_checked(path, FileClass::Checkpoint, opts, r, out)
    {
        match parse_leader_epoch_checkpoint(&bytes) {
            Err(e) => out.push(
                mk(r, Kind::LeaderEpochCheckpointMismatch, "leader-epoch-checkpoint", format!("leader-epoch-checkpoint: {e}"))
                    .evidence(json!({"error": e.to_string()}))
                    .broker("the broker fails to read the checkpoint (KafkaStorageException for the log dir)"),
            ),
            Ok(entries) => {
                let ck: Vec<(i32, i64)> = entries.iter().map(|e| (e.epoch, e.start_offset)).collect();
                if let Some(msg) = compare_epochs(&ck, &r.leader_epochs, first_offset, leo) {
                    out.push(
                        mk(r, Kind::LeaderEpochCheckpointMismatch, "leader-epoch-checkpoint", format!("leader-epoch-checkpoint: {msg}"))
                            .evidence(json!({"checkpoint": ck, "from_batches": r.leader_epochs}))
                            .broker("the broker loads the checkpoint, then adds epochs from recovered batches only; a wrong cache makes followers truncate to the wrong offset (OffsetsForLeaderEpoch) after a leader change"),
                    );
                }
            }
        }
    }

    // --- offset checkpoints vs the log --------------------------------------------------------
    if let Some(l) = leo {
        for (what, v, consequence) in [
            (
                "high watermark (replication-offset-checkpoint)",
                hw,
                "the broker clamps the high watermark to the log end offset at load; records acknowledged with acks=all above it are gone",
            ),
            (
                "recovery point (recovery-point-offset-checkpoint)",
                recovery_point,
                "the checkpoint says flushed data exists that the log does not hold: data was lost after the flush was recorded",
            ),
        ] {
            if let Some(v) = v
                && v > l
            {
                out.push(
                    mk(
                        r,
                        Kind::CheckpointInconsistent,
                        &name_of(&p.path),
                        format!("{what} {v} is above the log end offset {l}"),
                    )
                    .offset(l)
                    .evidence(json!({"checkpoint_offset": v, "log_end_offset": l}))
                    .broker(consequence),
                );
            }
        }
    }
    if let (Some(ls), Some(f)) = (log_start_ck, first_offset) {
        let beyond = leo.is_some_and(|l| ls > l);
        if ls < f || beyond {
            let (sev, msg, consequence) = if beyond {
                (
                    Severity::Warning,
                    format!(
                        "log start offset {ls} (log-start-offset-checkpoint) is above the log end offset {}",
                        leo.unwrap_or(0)
                    ),
                    "at load the broker deletes every segment and starts an empty log at the checkpointed log start offset",
                )
            } else {
                (
                    Severity::Info,
                    format!(
                        "log start offset {ls} (log-start-offset-checkpoint) is below the first offset {f}: the checkpoint is stale"
                    ),
                    "the broker uses the first segment's base offset when it is higher",
                )
            };
            out.push(
                mk(r, Kind::CheckpointInconsistent, &name_of(&p.path), msg)
                    .severity(sev)
                    .offset(ls)
                    .evidence(
                        json!({"log_start_offset": ls, "first_offset": f, "log_end_offset": leo}),
                    )
                    .broker(consequence),
            );
        }
    }
    let log_start = log_start_ck.or(r.log_start_offset);
    if let Some(ls) = log_start {
        for t in r.outcome.open.iter().filter(|t| t.first_offset < ls) {
            out.push(
                Finding::new(Kind::LsoBelowLogStart, topic, part, format!(
                    "producer {} has a transaction open since offset {} below the log start offset {ls}: the last stable offset stays at {ls} until it is aborted",
                    t.producer_id, t.first_offset))
                    .offset(t.first_offset)
                    .producer(t.producer_id, t.producer_epoch)
                    .evidence(json!({"first_offset": t.first_offset, "log_start_offset": ls}))
                    .broker("the broker clamps the first unstable offset up to the log start offset: LSO = log start offset, read_committed consumers and the cleaner stop there")
                    .remediation(format!("kafka-transactions.sh --bootstrap-server … abort --topic {topic} --partition {part} --start-offset {}", t.first_offset)),
            );
        }
    }

    predict::predict(PredictInput {
        clean_shutdown,
        recovery_point,
        log_start_checkpoint: log_start_ck,
        high_watermark: hw,
        first_offset,
        log_end_offset: leo,
        segments: seg_inputs,
        snapshots: snap_inputs,
        leftovers,
        load_rules,
        broker_version: opts.broker_version,
        producers: r.producers,
        open_transactions: r.outcome.open.len(),
        delete_dir,
    })
}

fn describe_offset_check(c: &OffsetCheck) -> String {
    match *c {
        OffsetCheck::Exact => "exact".into(),
        OffsetCheck::FollowerChunk { batch_last_offset } => {
            format!("follower chunk ending at {batch_last_offset}")
        }
        OffsetCheck::Mismatch { batch_last_offset } => {
            format!("the batch there ends at offset {batch_last_offset}")
        }
        OffsetCheck::NotABatchStart => "no batch starts there".into(),
        OffsetCheck::BeyondLog => "beyond the end of the log".into(),
    }
}

/// Compare one snapshot with the replayed state at its offset (rule 29). Returns one line
/// and one evidence object per differing producer.
fn compare_snapshot(
    snap: &ProducerSnapshot<'_>,
    state: &[ProducerState],
    log_first: i64,
) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for e in snap.entries() {
        let Some(s) = state.iter().find(|s| s.producer_id == e.producer_id) else {
            if e.last_offset >= log_first || e.current_txn_first_offset >= log_first {
                out.push((
                    format!("producer {} is in the snapshot but wrote nothing below its offset", e.producer_id),
                    json!({"producer_id": e.producer_id, "problem": "unknown_producer", "snapshot": e}),
                ));
            }
            continue;
        };
        let mut fields: Vec<(&str, i64, i64)> = Vec::new();
        let txn = s.current_txn_first_offset.unwrap_or(-1);
        if e.current_txn_first_offset != txn
            && !(e.current_txn_first_offset >= 0
                && e.current_txn_first_offset < log_first
                && txn >= 0)
        {
            fields.push(("current_txn_first_offset", e.current_txn_first_offset, txn));
        }
        if e.producer_epoch != s.producer_epoch {
            fields.push(("epoch", e.producer_epoch as i64, s.producer_epoch as i64));
        }
        // The producer's last data batch lies below the first offset held (retention
        // deleted it) and only a marker remains: the marker keeps the batch metadata in the
        // broker's entry, the log cannot show it. Unknown, not wrong.
        let data_before_start =
            e.last_offset >= 0 && e.last_offset < log_first && s.last_offset < 0;
        if e.last_offset != s.last_offset && !data_before_start {
            fields.push(("last_offset", e.last_offset, s.last_offset));
        }
        if e.last_offset >= 0 && s.last_offset >= 0 {
            if e.last_sequence != s.last_sequence {
                fields.push((
                    "last_sequence",
                    e.last_sequence as i64,
                    s.last_sequence as i64,
                ));
            }
            if e.offset_delta != s.offset_delta {
                fields.push(("offset_delta", e.offset_delta as i64, s.offset_delta as i64));
            }
        }
        if s.coordinator_epoch >= 0 && e.coordinator_epoch != s.coordinator_epoch {
            fields.push((
                "coordinator_epoch",
                e.coordinator_epoch as i64,
                s.coordinator_epoch as i64,
            ));
        }
        if e.timestamp != s.last_timestamp {
            fields.push(("timestamp", e.timestamp, s.last_timestamp));
        }
        if fields.is_empty() {
            continue;
        }
        let mut problem = "fields_differ";
        let line = if e.current_txn_first_offset >= 0 && txn < 0 {
            problem = "keeps_closed_transaction";
            format!(
                "producer {} keeps a transaction open from offset {} that the log closed",
                e.producer_id, e.current_txn_first_offset
            )
        } else if e.current_txn_first_offset < 0 && txn >= 0 {
            problem = "open_transaction_missing";
            format!(
                "producer {} has a transaction open since offset {txn} in the log but none in the snapshot",
                e.producer_id
            )
        } else {
            let (f, a, b) = fields[0];
            format!(
                "producer {}: {f} is {a} in the snapshot, {b} in the log",
                e.producer_id
            )
        };
        out.push((line, json!({
            "producer_id": e.producer_id,
            "problem": problem,
            "fields": fields.iter().map(|(f, a, b)| json!({"field": f, "snapshot": a, "log": b})).collect::<Vec<_>>(),
        })));
    }
    for s in state {
        if let Some(first) = s.current_txn_first_offset
            && !snap.entries().any(|e| e.producer_id == s.producer_id)
        {
            out.push((
                format!("producer {} with a transaction open since offset {first} is missing from the snapshot", s.producer_id),
                json!({"producer_id": s.producer_id, "problem": "open_transaction_missing", "current_txn_first_offset": first}),
            ));
        }
    }
    out
}

/// The epoch the cache `list` (ascending `(epoch, start)`) assigns to offset `o`.
fn epoch_at(list: &[(i32, i64)], o: i64) -> Option<i32> {
    list.iter().rev().find(|(_, s)| *s <= o).map(|(e, _)| *e)
}

/// Compare `leader-epoch-checkpoint` with the epochs rebuilt from the batches.
fn compare_epochs(
    ck: &[(i32, i64)],
    rebuilt: &[(i32, i64)],
    first: Option<i64>,
    leo: Option<i64>,
) -> Option<String> {
    if ck.windows(2).any(|w| w[1].0 <= w[0].0 || w[1].1 < w[0].1) {
        return Some("entries are not in ascending epoch and offset order".into());
    }
    let (Some(first), Some(leo)) = (first, leo) else {
        return None;
    };
    if let Some((e, s)) = ck.iter().find(|(_, s)| *s > leo) {
        return Some(format!(
            "epoch {e} starts at offset {s}, above the log end offset {leo}"
        ));
    }
    // Every boundary inside the log: both caches must give the same epoch there.
    let mut points: Vec<i64> = ck
        .iter()
        .chain(rebuilt)
        .map(|(_, s)| (*s).max(first))
        .filter(|s| *s < leo)
        .collect();
    points.sort_unstable();
    points.dedup();
    let ck_first = ck.first().map(|c| c.1)?;
    for o in points {
        if o < ck_first {
            continue; // batches older than the checkpoint's first entry (it was truncated from the start)
        }
        let (a, b) = (epoch_at(ck, o), epoch_at(rebuilt, o));
        if b.is_some() && a != b {
            return Some(format!(
                "at offset {o} the checkpoint gives epoch {} but the batches carry epoch {}",
                a.map_or("none".into(), |e| e.to_string()),
                b.map_or("none".into(), |e| e.to_string())
            ));
        }
    }
    if ck.is_empty() {
        return None;
    }
    None
}
