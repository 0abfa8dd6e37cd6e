//! The cross-checks of `verify`: every file of a partition against the log, one module a
//! file kind. [`verify_one`] runs them in order and feeds the recovery prediction.

mod checkpoints;
mod epoch_load;
mod index;
mod kraft;
mod leftovers;
mod names;
mod small_files;
mod snapshot;
mod timeindex;
mod txnindex;

pub(crate) use leftovers::log_dir_findings;

use super::VerifyOptions;
use crate::discover::layout::{DirKind, LogDir, PartitionDir, SegmentFiles};
use crate::finding::{Finding, Kind};
use crate::partition::recovery::{
    self as predict, Checkpoint, CheckpointEntry, LogDirFiles, PredictInput, SegmentInput, lookup,
};
use crate::partition::scan::PartitionReport;
use crate::partition::state::LastActivity;
use crate::read::format::index::{IndexVerdicts, KEPT_PROBLEMS};
use crate::read::segment::{self, FileClass, FileData, load};
use serde_json::json;
use std::path::Path;

/// Most entries listed in one finding's evidence.
const EVIDENCE_CAP: usize = 20;
// The index verdicts keep at least the entries the evidence lists.
const _: () = assert!(KEPT_PROBLEMS >= EVIDENCE_CAP);

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
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

/// A `-delete` copy: `LogManager.loadLog` loads it only to queue it for deletion
/// (`LogLoader.load` runs no `recoverLog` on it), so nothing fetches from it, looks
/// anything up through its indexes or takes producer state or epochs from it.
fn delete_copy(r: &PartitionReport) -> bool {
    r.source.copy == crate::finding::CopyKind::Delete
}

/// The broker text of a finding about what readers, followers or the loaded state meet:
/// `live` for a copy the broker keeps, `deleted` for a `-delete` copy.
fn served(r: &PartitionReport, live: &'static str, deleted: &'static str) -> &'static str {
    if delete_copy(r) { deleted } else { live }
}

fn mk(r: &PartitionReport, kind: Kind, file: &str, msg: String) -> Finding {
    Finding::new(kind, &r.topic, r.partition, msg).segment(file)
}

/// The finding of a file the format layer rejects: the error at its position, with its
/// structure, field and problem as evidence.
fn format_error(
    r: &PartitionReport,
    kind: Kind,
    file: &str,
    e: &crate::read::format::error::FormatError,
) -> Finding {
    mk(r, kind, file, format!("{file}: {e}"))
        .position(e.position)
        .evidence(json!({"structure": e.structure, "field": e.field, "error_position": e.position, "problem": e.problem.to_string()}))
}

/// One segment under check: its files, and what the scan's walk of its log collected.
struct SegmentCtx<'a> {
    r: &'a PartitionReport,
    opts: &'a VerifyOptions,
    files: &'a SegmentFiles,
    /// Its position among the partition's segments that have a `.log` (the scan's
    /// `AbortedTxn::segment`).
    ordinal: usize,
    log_name: String,
    /// The segment's index checks against the scan's walk of the log (`None` when the
    /// scan could not read it).
    verdicts: Option<&'a IndexVerdicts>,
    /// The loading broker runs the index sanity checks at load (before 2.3).
    pre_2_3: bool,
    missing_index: bool,
}

/// How the load reads a `.txnindex`: the mapping mode, and whether the stated broker reads
/// an entry's whole int16 version (4.4+, `partition::recovery::txnindex_verdict`).
fn txn_index_read(opts: &super::VerifyOptions) -> (crate::read::segment::MmapMode, bool) {
    let whole = crate::partition::recovery::reads_whole_txn_index_version(opts.broker_version);
    (opts.scan.mmap, whole)
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
    let ck = offset_checkpoints(files, topic, part);
    let mut clean_shutdown = files.map(|f| f.clean_shutdown);
    // The KRaft metadata log's load ignores the log dir's files (the checkpoint checks
    // still read them as they are): the prediction takes KafkaMetadataLog's state.
    let metadata_log = crate::discover::layout::is_kraft_metadata(topic);
    // What the load reads of the recovery point and log start: an entry, none, or a file
    // klogscan could not read (the broker may: the entry is unknown).
    let entry = |c: fn(&LogDirFiles) -> &Checkpoint| {
        files.map_or(CheckpointEntry::Read(None), |f| {
            CheckpointEntry::of(c(f), topic, part)
        })
    };
    let mut load_rp = entry(|f| &f.recovery_points);
    let mut load_start = entry(|f| &f.log_starts);
    if metadata_log {
        let (clean, rp, start) = crate::partition::recovery::metadata_log_state();
        clean_shutdown = clean;
        (load_rp, load_start) = (CheckpointEntry::Read(rp), CheckpointEntry::Read(start));
    }

    let before_3_0 = (opts.broker_version).is_some_and(|v| v < super::BrokerVersion(3, 0, 0));
    // Before 3.0 each swap replaces the segments its recovered offsets cover, read off
    // the segments' walks (their next offsets).
    let swaps = (!p.partial)
        .then(|| crate::partition::recovery::swaps::CompletedSwaps::of(p))
        .flatten()
        .map(|sw| match before_3_0 {
            true => sw.before_3_0(&loaded_segments(r)),
            false => sw,
        });
    // Segment files under names the broker does not give them: what the load does instead.
    let aliases = crate::partition::recovery::aliases::Aliases::of(p);
    let name_fates = names::NameFates {
        fates: aliases.fates(p, swaps.as_ref()),
        adopted: aliases.adopted(p, swaps.as_ref()),
    };
    let unparseable_names = names::unparseable_names(p, r, out);
    kraft::check_snapshot_names(p, r, out);
    kraft::check_topic_id(p, r, opts, out);
    kraft::check_quorum_state(p, r, opts, out);
    // The indexes the load reads: a kept segment's index `.swap` files renamed over its own.
    let loaded = crate::partition::recovery::swaps::with_index_swaps(p, swaps.as_ref(), before_3_0);
    let mut leftovers = leftovers::partition_leftovers(
        (p, &loaded, before_3_0),
        r,
        swaps.as_ref(),
        &name_fates,
        out,
    );
    names::noncanonical_actions(&name_fates, &mut leftovers);
    let mut segments = check_segments(&loaded, r, opts, swaps.as_ref(), out);
    let (mut snapshots, twins) = snapshot::check_snapshots(p, r, opts, out);
    let read = txn_index_read(opts);
    // The load completes the swaps before anything else: it recovers the swapped-in
    // segments, and the files in the swapped range (snapshots too) are gone.
    if let Some(sw) = &swaps {
        segments = sw.apply(segments, p, read).0;
        drop_swapped_snapshots(sw, &mut snapshots, &mut leftovers);
    }
    // What `LogSegment.readNextOffset` reads of the last segment when no recovery runs on
    // it first (a swapped-in one's through its swapped index; the scan's prediction reads
    // the same).
    if !p.partial {
        crate::partition::recovery::last_read::attach(
            &mut segments,
            (p.path.as_path(), &loaded.segments),
            (clean_shutdown, !before_3_0),
            opts.scan.mmap,
            opts.scan.max_bytes,
        );
    }
    // The segments opened under the broker's names for the aliases (created empty where
    // no file has that name).
    let (segments, unmodelled) = aliases.apply(segments, p, swaps.as_ref(), read);
    // A -delete copy's producer state is rebuilt only to offset 0, and the log dir's
    // offset checkpoints hold no entry of its own (`LogManager.asyncDelete` rewrites them
    // without it: an entry under its name is a live log's), so neither check is its.
    // (A -stray copy's entries are the live log's too: `check_offsets` says which of its
    // checks still hold.)
    let judged = !delete_copy(r);
    checkpoints::check_leader_epochs(p, r, opts, (clean_shutdown, load_rp), out);
    small_files::check_partition_metadata(p, r, opts, out);
    // A log whose remote segments the inputs' `__remote_log_metadata` names is
    // remote-storage enabled (`UnifiedLog.remoteLogEnabled`); otherwise klogscan does not
    // know, and models a local-only log.
    let remote_log_enabled = r.tiered.is_some();

    // The actions as startup would take them all; a load that fails stops short of some.
    let actions: Vec<(String, String)> = (leftovers.iter())
        .map(|l| (l.file.clone(), l.action.clone()))
        .collect();
    let prediction = predict::predict(PredictInput {
        metadata_log,
        clean_shutdown,
        recovery_point: load_rp,
        log_start_checkpoint: load_start,
        remote_log_enabled,
        high_watermark: ck.high_watermark,
        first_offset: r.carried.first_offset,
        log_end_offset: r.log_end_offset,
        segments,
        snapshots,
        leftovers,
        load_rules,
        broker_version: opts.broker_version,
        producers: r.producers,
        producer_last_offsets: last_activity(r),
        ref_time: r.ref_time,
        open_transactions: r.carried.outcome.open.len(),
        open_producers: r
            .carried
            .outcome
            .open
            .iter()
            .map(|t| t.producer_id)
            .collect(),
        after_truncation: r.carried.recovery.after_truncation.as_deref(),
        delete_dir: matches!(p.kind, Some(DirKind::Delete { .. })),
        crc_checked: opts.scan.check_crc,
        unparseable_names,
        unmodelled,
    });
    if judged {
        // The entries are held against the log end the load reads once recovered, as
        // the prediction has it (`LogLoader.recoverLog`: the last segment's
        // `readNextOffset`); the walk's end when it is not known.
        let log = checkpoints::LoadedLog {
            log_end: (prediction.log_end_recovered).or(r.log_end_offset),
            remote_log_enabled,
        };
        checkpoints::check_offsets(p, r, &ck, log, out);
        snapshot::check_missing(p, r, &prediction, out);
        snapshot::reopened_after_load(r, &prediction, out);
    }
    rebuilt_at_load(&prediction, out);
    snapshot::corrupt_unread(r, &prediction, out);
    twins.drop_unread_beyond_log(r, &prediction, out);
    twins.apply(r, out);
    leftovers::not_reached(&actions, &prediction, out);
    prediction
}

/// The entries of `topic`-`part` in the log dir's offset checkpoints (`files`: the log
/// dir's, when it has its markers).
fn offset_checkpoints(
    files: Option<&LogDirFiles>,
    topic: &str,
    part: i32,
) -> checkpoints::OffsetCheckpoints {
    checkpoints::OffsetCheckpoints {
        recovery_point: files.and_then(|f| lookup(&f.recovery_points, topic, part)),
        log_start: files.and_then(|f| lookup(&f.log_starts, topic, part)),
        high_watermark: files.and_then(|f| lookup(&f.high_watermarks, topic, part)),
        cleaned_to: files.and_then(|f| lookup(&f.cleaner_offsets, topic, part)),
    }
}

/// The producer snapshots in the range the swaps replace are deleted with its segments:
/// out of `snapshots`, into `leftovers` as what startup does with them.
fn drop_swapped_snapshots(
    sw: &crate::partition::recovery::swaps::CompletedSwaps,
    snapshots: &mut Vec<predict::SnapshotInput>,
    leftovers: &mut Vec<crate::partition::recovery::LeftoverAction>,
) {
    snapshots.retain(|s| {
        let gone = sw.clears(s.offset);
        if gone {
            leftovers.push(crate::partition::recovery::LeftoverAction {
                file: s.name.clone(),
                kind: "snapshot_in_swapped_range".into(),
                action: format!(
                    "deleted at startup with the segments the swaps replace (its offset lies in the swapped range [{}, {}))",
                    sw.from, sw.to
                ),
            });
        }
        !gone
    });
}

/// `(base, name, next offset)` of each segment the scan walked (`None`: not read), as
/// `swaps::CompletedSwaps::before_3_0` takes them.
fn loaded_segments(r: &PartitionReport) -> Vec<(i64, String, Option<i64>)> {
    (r.carried.segment_walks.iter())
        .map(|w| {
            let name = w.name.text().into_owned();
            (w.base_offset, name, w.walk.as_ref().map(|w| w.next_offset))
        })
        .collect()
}

/// Index findings of a segment the next load recovers for another reason: the load
/// rebuilds its offset, time and transaction indexes (`LogSegment.recover` resets all
/// three before it reads the batches), so the files as they are serve no read after the
/// restart — stale indexes of an active segment after a crash are the normal case
/// (`LogLoaderTest.testCorruptIndexRebuild`). Such findings become info, their broker text
/// saying so. A finding about the very index that makes the load recover the segment (a
/// missing offset index, a corrupt transaction index) is the cause and stays as it is, and
/// so does every finding of a load that fails before it recovers anything.
fn rebuilt_at_load(prediction: &predict::RecoveryPrediction, out: &mut [Finding]) {
    // A load that fails (a check at load throws before any recovery runs) rebuilds nothing.
    if prediction.load_failure.is_some() {
        return;
    }
    for f in out.iter_mut() {
        let own = match f.kind {
            Kind::IndexMismatch | Kind::IndexCorrupt => "offset index",
            Kind::TimeindexMismatch => "time index",
            Kind::TxnindexMismatch => "transaction index",
            _ => continue,
        };
        let Some(seg) = f.segment.as_deref() else {
            continue;
        };
        let log = format!("{}.log", seg.rsplit_once('.').map_or(seg, |(stem, _)| stem));
        let Some(rec) = prediction
            .recovered_segments
            .iter()
            .find(|s| s.segment == log && !s.reason.contains(own))
            // An assumed unclean shutdown (no log dir files) is no ground to judge by.
            .filter(|s| !s.reason.starts_with("shutdown state unknown"))
        else {
            continue;
        };
        f.severity = crate::finding::Severity::Info;
        f.client_error = Some(
            "none after the restart: the load rebuilds this index (a broker still running on it serves reads through it until then)".into(),
        );
        f.broker_behaviour = format!(
            "rebuilt at the next load: the segment is recovered at load ({}) and LogSegment.recover resets and rebuilds its offset, time and transaction indexes before reading its batches, so this {own} as it is serves no read after the restart (a broker still running on it reads it until then)",
            rec.reason
        );
    }
}

/// Each producer of the walk's replay with the offset and time of its last batch or
/// marker: from the producers' final states when the scan kept them, else from what it
/// kept for this.
fn last_activity(r: &PartitionReport) -> Vec<LastActivity> {
    let o = &r.carried.outcome;
    if o.producers.is_empty() {
        o.last_activity.clone()
    } else {
        o.producers
            .iter()
            .map(|p| LastActivity {
                producer_id: p.producer_id,
                offset: p.last_activity(),
                timestamp: p.last_timestamp,
            })
            .collect()
    }
}

/// The offset, time and transaction index of every segment with a `.log`; returns what
/// the recovery prediction needs of each segment.
fn check_segments(
    p: &PartitionDir,
    r: &PartitionReport,
    opts: &VerifyOptions,
    swaps: Option<&crate::partition::recovery::swaps::CompletedSwaps>,
    out: &mut Vec<Finding>,
) -> Vec<SegmentInput> {
    // A segment a completed swap deletes (or overwrites) before the load is never checked
    // by it: its files are the swap's leftovers, not the log the broker loads.
    let gone = |base: i64| swaps.is_some_and(|sw| sw.removes(base));
    // Numbered before the filter: the ordinal is the walk's segment number.
    let logs = p
        .segments
        .iter()
        .filter(|s| s.log.is_some())
        .enumerate()
        .filter(|(_, s)| !gone(s.base_offset));
    let pre_2_3 = opts
        .broker_version
        .is_some_and(|v| v < super::BrokerVersion(2, 3, 0));
    let mut seg_inputs = Vec::new();
    for (i, s) in logs {
        let Some(log_path) = s.log.as_deref() else {
            continue;
        };
        let log_name = name_of(log_path);
        // The scan walked this segment once: its index checks and recovery verdict come
        // from that walk (`None` when the file was unreadable; the scan reported it).
        let k = r
            .carried
            .segment_walks
            .iter()
            .position(|w| w.base_offset == s.base_offset && w.name == log_name);
        let c = SegmentCtx {
            r,
            opts,
            files: s,
            ordinal: i,
            log_name,
            verdicts: k.and_then(|k| r.carried.index_verdict(k)),
            pre_2_3,
            missing_index: s.index.is_none(),
        };
        let (mut corrupt_index, mut load_error) = (None, None);
        index::check(&c, &mut corrupt_index, out);
        timeindex::check(&c, &mut corrupt_index, out);
        txnindex::check(&c, &mut corrupt_index, &mut load_error, out);
        seg_inputs.push(SegmentInput {
            name: c.log_name,
            base: s.base_offset,
            missing_index: c.missing_index,
            corrupt_index,
            load_error,
            walk: k.and_then(|k| r.carried.segment_walks[k].walk.clone()),
            opened_as: None,
            created: false,
            read_next: None,
            open_error: None,
            oversize: (s.log.as_deref())
                .and_then(|l| std::fs::metadata(l).ok())
                .map(|m| m.len())
                .filter(|&n| n > i32::MAX as u64),
        });
    }
    seg_inputs
}
