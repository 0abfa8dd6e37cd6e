//! The scan engine: per partition, walk every segment (in parallel), turn batches into
//! events, replay them through the producer-state machine, and collect findings.
//!
//! Segments of one partition are processed in windows (up to as many segments as there
//! are threads, closed early at 64 MiB): the window's segments are walked in parallel
//! (framing, CRC, header checks, optional record decoding) — a mapped segment of 64 MiB or
//! more in ~32 MiB pieces, themselves in parallel — and their events are then replayed in
//! offset order while the next window is walked. Memory is bounded by two windows, not by
//! the partition; the output does not depend on the thread count.

use crate::results::summarise;
mod integrity;
mod walk;
use walk::{PIECE, scan_segment};

pub use crate::results::{
    PartitionReport, Progress, ProgressUpdate, ScanOptions, ScanReport, SeverityCounts, Summary,
    Truncation, TxnCounts,
};

use crate::event::{BatchEvent, Classified, classify};
use crate::finding::{Finding, Kind};
use crate::format::TimestampType;
use crate::format::index::LogBatches;
use crate::layout::{self, Inventory, PartitionDir};
use crate::recovery::{self, RecoverCheck, SegmentWalk};
use crate::segment::{self, ReadPolicy};
use crate::state::{PartitionContext, Replay, ReplayOutcome, SealedReplay};
use rayon::prelude::*;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Default of [`ScanOptions::max_decompressed_per_file`]: 4 GiB (16 batches at the
/// per-batch cap; real segments of 1 GiB decompress to a few GiB at most).
pub const DEFAULT_MAX_DECOMPRESSED_PER_FILE: u64 =
    crate::results::DEFAULT_MAX_DECOMPRESSED_PER_FILE;

/// The most worker threads a scan uses (`--threads` above it is capped: 10 000 threads
/// cost minutes of thread creation and window bookkeeping, and gain nothing).
pub const MAX_THREADS: usize = 256;

/// Run `f` on a rayon pool with `threads` workers (at most [`MAX_THREADS`]; the global
/// pool when `None`).
pub fn with_threads<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> R {
    match threads {
        Some(n) => match rayon::ThreadPoolBuilder::new()
            .num_threads(n.clamp(1, MAX_THREADS))
            .build()
        {
            Ok(pool) => pool.install(f),
            Err(_) => f(),
        },
        None => f(),
    }
}

/// Scan an already discovered inventory.
pub fn scan_inventory(inv: &Inventory, opts: &ScanOptions) -> ScanReport {
    let selected: Vec<&PartitionDir> = inv
        .partitions
        .iter()
        .filter(|p| selected(p, opts))
        .collect();
    // Which partitions' walks keep batch keys for the replica comparison.
    let opts = &ScanOptions {
        copied_partitions: crate::walked::CopiedPartitions::of(selected.iter().copied()),
        ..opts.clone()
    };
    let window = opts
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .clamp(1, MAX_THREADS);
    let total_bytes: u64 = selected
        .iter()
        .flat_map(|p| p.segments.iter().filter_map(|s| s.log.as_deref()))
        .filter_map(|l| std::fs::metadata(l).ok().map(|m| m.len()))
        .sum();
    opts.progress.emit(ProgressUpdate::Start {
        partitions: selected.len() as u64,
        bytes: total_bytes,
    });
    // The log dirs' checkpoints and shutdown marker, read once per log dir.
    let log_dirs: HashMap<&Path, recovery::LogDirFiles> = inv
        .log_dirs
        .iter()
        .map(|ld| (ld.path.as_path(), recovery::LogDirFiles::read(ld)))
        .collect();
    // Identity of each log dir, and what the inputs say about cleanup policies.
    let identities = crate::identity::Identities::load(inv);
    let compaction = crate::compaction::Knowledge::load(
        inv,
        &identities,
        &opts.compacted_topics,
        opts.max_bytes,
        opts.max_decompressed,
    );
    // Two windows are in flight per partition (one replayed, one walked).
    let pool = EventPool::new(2 * window);
    let scanned: Vec<(PartitionReport, SealedReplay, _)> = with_threads(opts.threads, || {
        selected
            .par_iter()
            .map(|p| {
                let files = p.log_dir.as_deref().and_then(|d| log_dirs.get(d));
                let source = identities.source(p);
                let reason = compaction.reason(p, &source);
                let compacted = reason.map(|r| r != crate::compaction::Reason::MetadataDelete);
                let mut r = scan_partition(p, opts, window, files, compacted, &pool);
                r.0.source = source;
                if p.is_internal() {
                    r.0.compacted_from = Some("internal topic".into());
                } else if let Some(why) = reason {
                    r.0.compacted_from = Some(why.describe().into());
                }
                opts.progress.emit(ProgressUpdate::PartitionDone);
                // Only what the conclusion needs outlives the partition's scan (#11).
                (r.0, r.1.seal(opts.keep_producers), r.2)
            })
            .collect()
    });

    // Reference time: the newest batch timestamp of each log dir (or of the partition
    // alone), over every partition of the log dir whether selected or not, so that
    // `--topic`/`--partition` never move it (unselected ones: their newest segment's
    // headers).
    let newest = reference_times(inv, &selected, &scanned, opts);

    let mut report = ScanReport {
        errors: inv.errors.clone(),
        ..Default::default()
    };
    for (mut r, replay, mut findings) in scanned {
        let key = reference_key(inv, r.log_dir.as_deref(), &r.path);
        let (ref_time, ref_source) = match opts.now_ms {
            Some(now) => (now, RefSource::Given),
            None => newest
                .get(&key)
                .cloned()
                .map_or((0, RefSource::None), |(t, from)| {
                    (t.max(0), RefSource::Newest(from))
                }),
        };
        let outcome = replay.finish(ref_time, &mut findings);
        crate::causes::link_damage(&mut findings, &r.damaged);
        crate::causes::link_zombie_chain(&mut findings);
        for f in findings
            .iter_mut()
            .filter(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
        {
            if let Some(e) = f.evidence.as_object_mut() {
                e.insert("reference_time".into(), ref_source.evidence(ref_time));
            }
        }
        if r.partially_read {
            // The end of the log was not read: a transaction open at the read limit may
            // well be closed after it. No live-partition verdict rests on unread bytes.
            findings
                .retain(|f| !matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction));
        }
        crate::identity::apply_source(&r.source, &mut findings);
        r.ref_time = ref_time;
        r.log_start_offset = outcome.log_start_offset.or(r.log_start_offset);
        r.log_end_offset = outcome.log_end_offset.or(r.log_end_offset);
        r.last_stable_offset = if r.partially_read {
            None
        } else {
            outcome.last_stable_offset
        };
        r.transactions = TxnCounts {
            committed: outcome.txn_stats.committed,
            aborted: outcome.txn_stats.aborted,
            open: outcome.open.len() as u64,
        };
        r.producers = outcome.producer_count;
        r.outcome = outcome;
        findings.sort_by_key(|f| (f.offset.unwrap_or(i64::MAX), f.position.unwrap_or(u64::MAX)));
        let start = report.findings.len();
        report.findings.extend(findings);
        r.finding_range = start..report.findings.len();
        report.partitions.push(r);
    }
    for (path, why) in inv.errors.iter().filter(|e| !inv.is_input_error(e)) {
        report.findings.push(
            Finding::new(
                Kind::UnreadableFile,
                "",
                -1,
                format!("cannot read {}: {why}", path.display()),
            )
            .segment(path.display().to_string())
            .broker("not applicable: the analysis of this path is incomplete"),
        );
    }
    crate::finding::assign_ids(&mut report.findings);
    report.summary = summarise(&report);
    report
}

fn selected(p: &PartitionDir, opts: &ScanOptions) -> bool {
    let (topic, part) = match &p.tp {
        Some(tp) => (tp.topic.as_str(), tp.partition),
        None => ("", -1),
    };
    opts.topic.as_deref().is_none_or(|g| glob_match(g, topic))
        && opts.partition.is_none_or(|n| n == part)
}

/// Where a partition's reference time came from.
enum RefSource {
    /// `--now`.
    Given,
    /// The newest batch timestamp of the log dir (or the partition alone), and where.
    Newest(String),
    /// No timestamp anywhere.
    None,
}

impl RefSource {
    fn evidence(&self, t: i64) -> serde_json::Value {
        match self {
            RefSource::Given => json!({"ms": t, "source": "--now"}),
            RefSource::Newest(from) => {
                json!({"ms": t, "source": format!("newest batch timestamp: {from}")})
            }
            RefSource::None => json!({"ms": t, "source": "no batch timestamp found"}),
        }
    }
}

/// The newest trusted batch timestamp per log dir (key: log dir, or the partition path
/// when it has none), with the partition it came from. Scanned partitions give theirs;
/// the other partitions of the same log dirs are read for their newest non-empty
/// segment's batch headers (CRC-checked: a flipped bit must not move the time).
fn reference_times(
    inv: &Inventory,
    selected: &[&PartitionDir],
    scanned: &[(PartitionReport, SealedReplay, Vec<Finding>)],
    opts: &ScanOptions,
) -> HashMap<Option<PathBuf>, (i64, String)> {
    let mut newest: HashMap<Option<PathBuf>, (i64, String)> = HashMap::new();
    let mut offer = |key: Option<PathBuf>, t: i64, from: String| {
        if t == i64::MIN {
            return;
        }
        let e = newest.entry(key).or_insert((i64::MIN, String::new()));
        if t > e.0 {
            *e = (t, from);
        }
    };
    for (r, _, _) in scanned {
        let key = reference_key(inv, r.log_dir.as_deref(), &r.path);
        offer(key, r.max_timestamp, r.path.clone());
    }
    let chosen: std::collections::HashSet<&Path> =
        selected.iter().map(|p| p.path.as_path()).collect();
    let dirs: std::collections::HashSet<&Path> = selected
        .iter()
        .filter_map(|p| p.log_dir.as_deref())
        .filter(|d| is_broker_log_dir(inv, d))
        .collect();
    let others: Vec<&PartitionDir> = inv
        .partitions
        .iter()
        .filter(|p| !chosen.contains(p.path.as_path()))
        .filter(|p| p.log_dir.as_deref().is_some_and(|d| dirs.contains(d)))
        .collect();
    let found: Vec<(Option<PathBuf>, i64, String)> = with_threads(opts.threads, || {
        others
            .par_iter()
            .filter_map(|p| {
                let t = newest_segment_timestamp(p, opts)?;
                Some((p.log_dir.clone(), t, p.path.display().to_string()))
            })
            .collect()
    });
    for (key, t, from) in found {
        offer(key, t, from);
    }
    newest
}

/// Whether `dir` is known to be one broker's log dir: it holds a broker file
/// (`meta.properties`, a checkpoint, `.kafka_cleanshutdown`, …). A directory recognised only
/// because it holds several partition directories (a hand-over of copies taken at different
/// times) is not: its partitions do not share a timeline.
fn is_broker_log_dir(inv: &Inventory, dir: &Path) -> bool {
    inv.log_dirs
        .iter()
        .any(|l| l.path == dir && l.has_markers())
}

/// Which partitions share a reference time: those of one broker log dir; otherwise each
/// partition alone.
fn reference_key(inv: &Inventory, log_dir: Option<&Path>, path: &str) -> Option<PathBuf> {
    match log_dir {
        Some(d) if is_broker_log_dir(inv, d) => Some(d.to_path_buf()),
        _ => Some(PathBuf::from(path)),
    }
}

/// The newest CRC-valid batch timestamp of a partition's newest segment that has one.
fn newest_segment_timestamp(p: &PartitionDir, opts: &ScanOptions) -> Option<i64> {
    for s in p.segments.iter().rev() {
        let Some(log) = s.log.as_deref() else {
            continue;
        };
        let mut newest = i64::MIN;
        let _ = segment::walk_entries(log, ReadPolicy::Read, opts.max_bytes, |e| {
            let ev = match classify(e) {
                Classified::V2(b) => BatchEvent::from_v2(&b, 0, opts.check_crc),
                Classified::Legacy(m) => BatchEvent::from_legacy(&m, 0, opts.check_crc),
                Classified::Invalid(_) => return,
            };
            if ev.crc_valid && ev.timestamp_type != TimestampType::NoTimestampType {
                newest = newest.max(ev.max_timestamp);
            }
        });
        if newest != i64::MIN {
            return Some(newest);
        }
    }
    None
}

/// Shell-style glob with `*` and `?`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0usize, 0usize, None::<usize>, 0usize);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            pi += 1;
            mark = ti;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The context the replay needs, derived from the partition directory.
pub fn partition_context(p: &PartitionDir) -> PartitionContext {
    let (topic, partition) = match &p.tp {
        Some(tp) => (tp.topic.clone(), tp.partition),
        None => (String::new(), -1),
    };
    let internal = layout::is_internal_topic(&topic);
    PartitionContext {
        kraft_metadata: layout::is_kraft_metadata(&topic),
        compacted: if internal { Some(true) } else { None },
        internal,
        segment_names: p
            .segments
            .iter()
            .filter_map(|s| s.log.as_deref().map(file_name))
            .collect(),
        log_start_offset: None,
        topic,
        partition,
    }
}

/// Event buffers handed back after a window's replay, reused by later walks: a fresh
/// `Vec` per segment meant page faults and kernel page clearing for every new event page
/// (≈ 7 % of a scan's cycles in `clear_page_erms`). Holds at most `limit` buffers.
struct EventPool {
    free: std::sync::Mutex<Vec<Vec<BatchEvent>>>,
    limit: usize,
}

impl EventPool {
    fn new(limit: usize) -> Self {
        EventPool {
            free: std::sync::Mutex::new(Vec::new()),
            limit,
        }
    }
    fn take(&self) -> Vec<BatchEvent> {
        self.free
            .lock()
            .ok()
            .and_then(|mut f| f.pop())
            .unwrap_or_default()
    }
    fn give(&self, mut v: Vec<BatchEvent>) {
        v.clear();
        if v.capacity() == 0 {
            return;
        }
        if let Ok(mut f) = self.free.lock()
            && f.len() < self.limit
        {
            f.push(v);
        }
    }
}

/// What one segment's walk produced.
struct SegmentScan {
    /// In walk order (one buffer per piece of the segment).
    events: Vec<Vec<BatchEvent>>,
    /// With `collect_log_batches`: every entry's position and offsets (for `verify`'s
    /// index checks), from this same walk.
    log_batches: Option<LogBatches>,
    /// The file could not be read: no recovery verdict for it.
    unreadable: bool,
    name: String,
    base: i64,
    /// `--max-bytes` stopped the walk before the end of the file: what follows the last
    /// whole entry read is unknown, not damaged.
    cut: bool,
    findings: Vec<Finding>,
    bytes: u64,
    records: u64,
    max_timestamp: i64,
    truncation: Option<Truncation>,
    /// What the cluster checks need of this segment ([`crate::walked`]).
    collected: crate::walked::Collector,
}

fn scan_partition(
    p: &PartitionDir,
    opts: &ScanOptions,
    window: usize,
    log_dir: Option<&recovery::LogDirFiles>,
    compacted: Option<bool>,
    pool: &EventPool,
) -> (PartitionReport, Replay, Vec<Finding>) {
    let mut ctx = partition_context(p);
    // What the inputs say about the topic's cleanup policy (internal topics stay compacted).
    ctx.compacted = ctx.compacted.or(compacted);
    let compacted = ctx.compacted;
    let (clean_shutdown, recovery_point, checkpointed_log_start, _) =
        recovery::LogDirFiles::partition_state(log_dir, &ctx.topic, ctx.partition);
    // A file the user named alone: the directory was not listed, so the shutdown state
    // and indexes are unknown (the model assumes an unclean shutdown, indexes present).
    let (clean_shutdown, recovery_point) = if p.partial {
        (None, None)
    } else {
        (clean_shutdown, recovery_point)
    };
    let logs: Vec<(i64, &Path)> = p
        .segments
        .iter()
        .filter_map(|s| s.log.as_deref().map(|l| (s.base_offset, l)))
        .collect();
    let active = logs.len().saturating_sub(1);
    let mut report = PartitionReport {
        topic: ctx.topic.clone(),
        partition: ctx.partition,
        path: p.path.display().to_string(),
        segments: logs.len(),
        batches: 0,
        records: 0,
        control_batches: 0,
        bytes: 0,
        // The broker's log start: max(checkpoint, first segment's base offset).
        log_start_offset: match (checkpointed_log_start, logs.first().map(|l| l.0)) {
            (Some(c), Some(b)) => Some(c.max(b)),
            (c, b) => c.or(b),
        },
        log_end_offset: None,
        last_stable_offset: None,
        ref_time: 0,
        transactions: TxnCounts::default(),
        producers: 0,
        truncation: None,
        source: crate::finding::Source::default(),
        compacted,
        compacted_from: None,
        max_timestamp: i64::MIN,
        outcome: ReplayOutcome::default(),
        log_dir: p.log_dir.clone(),
        first_offset: None,
        finding_range: 0..0,
        leader_epochs: Vec::new(),
        snapshot_states: Vec::new(),
        cluster_inputs: crate::walked::ClusterInputs::new(
            &ctx.topic,
            opts.collect_batch_keys(&ctx),
        ),
        segment_walks: Vec::new(),
        damaged: Vec::new(),
        partially_read: false,
        recovery: recovery::SegmentPlan::default(),
        log_batches: Vec::new(),
    };
    let mut pending_snapshots: Vec<i64> = if opts.capture_snapshots {
        let mut v: Vec<i64> = p.snapshots.iter().map(|s| s.offset).collect();
        v.sort_unstable();
        v.dedup();
        v.reverse(); // pop from the smallest
        v
    } else {
        Vec::new()
    };
    // Only a checkpointed log start moves the LSO clamp: without one the broker uses the
    // first segment's base offset, at or below every batch.
    ctx.log_start_offset = checkpointed_log_start.and(report.log_start_offset);
    let mut findings = Vec::new();
    let mut damaged: Vec<crate::causes::DamagedBatch> = Vec::new();
    // Producer id → its damaged batch still waiting for the producer's next batch.
    let mut awaiting_next: HashMap<i64, usize> = HashMap::new();
    let mut replay = Replay::new(ctx.clone(), opts.replay);
    // `__consumer_offsets`: the group coordinator's load, fed from this walk (#9).
    let mut groups = crate::groups::load::replay_for(&ctx.topic, ctx.partition, &report.path);
    // Walk window k + 1 (in parallel) while window k is replayed: the replay is sequential
    // by nature, the walk is not, so overlapping them keeps every thread busy on one big
    // partition. The replay order (window by window, segment by segment) is unchanged, so
    // the output does not depend on the thread count.
    let walk = |first: usize, chunk: &[(i64, &Path)]| -> Vec<SegmentScan> {
        chunk
            .par_iter()
            .enumerate()
            .map(|(i, (base, path))| {
                let idx = first + i;
                // The newest segment may still be appended to or truncated by a running
                // broker; so may any file the user named directly (we cannot tell which of
                // them is live). Read those; map only sealed segments of a whole directory.
                let policy = segment::policy(opts.mmap, idx == active || p.partial);
                scan_segment(&ctx, idx as u32, *base, path, policy, opts, pool)
            })
            .collect()
    };
    let mut replay_window = |results: Vec<SegmentScan>| {
        for mut seg in results {
            let collected = std::mem::take(&mut seg.collected);
            let sink = groups
                .as_mut()
                .map(|g| g as &mut dyn crate::walked::RecordSink);
            report.cluster_inputs.absorb(&seg.name, collected, sink);
            // Past a segment cut by --max-bytes the log's continuity is unknown: later
            // segments are not replayed (their producers would seem to skip sequences).
            if report.partially_read {
                // Unread as far as the model knows: no verdict on it, but it keeps its place
                // (the recovery point's segment is found among all segments).
                report.segment_walks.push(SegmentWalk {
                    name: seg.name.clone(),
                    base_offset: seg.base,
                    walk: None,
                });
                if opts.collect_log_batches {
                    report.log_batches.push(None);
                }
                seg.events.into_iter().for_each(|v| pool.give(v));
                continue;
            }
            // Recovery's view of this segment, from the same events: every batch before
            // the walk's first bad entry, in file order.
            let first_bad = seg
                .truncation
                .as_ref()
                .map(|t| (t.position, t.reason.clone(), t.offset));
            let mut check = RecoverCheck::new(seg.base);
            for ev in seg.events.iter().flatten() {
                if first_bad.as_ref().is_none_or(|(p, _, _)| ev.position < *p) {
                    check.batch(ev.last_offset, ev.size);
                }
                while let Some(&n) = pending_snapshots.last() {
                    if ev.base_offset < n {
                        break;
                    }
                    report.snapshot_states.push((n, replay.producers()));
                    pending_snapshots.pop();
                }
                report.first_offset.get_or_insert(ev.base_offset);
                let le = ev.partition_leader_epoch;
                if ev.magic >= 2
                    && le >= 0
                    && report.leader_epochs.last().is_none_or(|&(e, _)| le > e)
                {
                    report.leader_epochs.push((le, ev.base_offset));
                }
                report.batches += 1;
                if ev.is_control {
                    report.control_batches += 1;
                }
                // A batch whose CRC fails is reported (crc_mismatch) and still fed to the
                // replay with its header fields, as the broker's producer-state rebuild
                // reads them (no CRC check there); what the replay derives from it is
                // linked to the damage (`causes::link_damage`).
                if ev.has_producer_id()
                    && let Some(i) = awaiting_next.remove(&ev.producer_id)
                {
                    damaged[i].next_of_producer = Some(ev.base_offset);
                }
                if !ev.crc_valid {
                    if ev.has_producer_id() {
                        awaiting_next.insert(ev.producer_id, damaged.len());
                    }
                    damaged.push(crate::causes::DamagedBatch::of(ev));
                }
                replay.apply(ev, &mut findings);
            }
            report.partially_read |= seg.cut;
            report.segment_walks.push(SegmentWalk {
                name: seg.name.clone(),
                base_offset: seg.base,
                walk: (!seg.unreadable).then(|| check.finish(first_bad, seg.bytes)),
            });
            if opts.collect_log_batches {
                report.log_batches.push(seg.log_batches);
            }
            seg.events.into_iter().for_each(|v| pool.give(v));
            report.records += seg.records;
            report.bytes += seg.bytes;
            report.max_timestamp = report.max_timestamp.max(seg.max_timestamp);
            findings.extend(seg.findings);
        }
    };
    let chunks = windows(&logs, window);
    let mut walked = chunks.first().map(|r| walk(r.start, &logs[r.clone()]));
    for k in 0..chunks.len() {
        let Some(cur) = walked.take() else { break };
        match chunks.get(k + 1) {
            Some(next) => {
                let next = next.clone();
                let ((), n) = rayon::join(|| replay_window(cur), || walk(next.start, &logs[next]));
                walked = Some(n);
            }
            None => replay_window(cur),
        }
    }
    while let Some(n) = pending_snapshots.pop() {
        report.snapshot_states.push((n, replay.producers()));
    }
    if let Some(g) = groups {
        report.cluster_inputs.group_anomalies = Some(crate::groups::load::finish_anomalies(g));
    }
    apply_recovery(
        p,
        &mut report,
        clean_shutdown,
        recovery_point,
        opts.mmap,
        &mut findings,
    );
    report.damaged = damaged;
    (report, replay, findings)
}

/// Run the recovery model over the walked segments: the partition's `truncation` is the
/// one the broker's recovery makes, and the integrity findings say what recovery does
/// with their bytes (truncate there, delete with a later segment, or never look).
fn apply_recovery(
    p: &PartitionDir,
    report: &mut PartitionReport,
    clean_shutdown: Option<bool>,
    recovery_point: Option<i64>,
    mmap: segment::MmapMode,
    findings: &mut [Finding],
) {
    let inputs: Vec<recovery::SegmentInput> = report
        .segment_walks
        .iter()
        .map(|w| recovery::SegmentInput {
            name: w.name.clone(),
            base: w.base_offset,
            missing_index: !p.partial
                && p.segments
                    .iter()
                    .find(|s| s.base_offset == w.base_offset && s.log.is_some())
                    .is_some_and(|s| s.index.is_none()),
            // A corrupt .txnindex makes LogLoader recover the segment at load, like a
            // missing offset index (verify reports the same reason).
            corrupt_index: (!p.partial)
                .then(|| {
                    p.segments
                        .iter()
                        .find(|s| s.base_offset == w.base_offset && s.log.is_some())
                        .and_then(|s| s.txnindex.as_deref())
                        .and_then(|t| recovery::txnindex_corruption(t, w.base_offset, mmap))
                })
                .flatten(),
            walk: w.walk.clone(),
        })
        .collect();
    let delete_dir = matches!(p.kind, Some(layout::DirKind::Delete { .. }));
    let plan = recovery::plan_segments(
        clean_shutdown,
        recovery_point,
        delete_dir,
        &inputs,
        report.log_end_offset,
    );
    report.truncation = plan.truncation.as_ref().map(|t| Truncation {
        segment: t.segment.clone(),
        position: t.position,
        offset: t.first_removed_offset,
        reason: t.reason.clone(),
    });
    for f in findings.iter_mut() {
        recovery::word_integrity_finding(f, &plan, clean_shutdown, recovery_point);
    }
    report.recovery = plan;
}

/// Split a partition's segments into windows walked together: at most `threads`
/// segments, and a window closes early once it holds two [`PIECE`]s of bytes (a large
/// segment is split into pieces that keep every thread busy on its own, and a smaller
/// window lets its replay start sooner, overlapping the next walk).
fn windows(logs: &[(i64, &Path)], threads: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0u64;
    for (i, (_, path)) in logs.iter().enumerate() {
        bytes += std::fs::metadata(path).map_or(0, |m| m.len());
        if i + 1 - start >= threads.max(1) || bytes >= 2 * PIECE as u64 {
            out.push(start..i + 1);
            start = i + 1;
            bytes = 0;
        }
    }
    if start < logs.len() {
        out.push(start..logs.len());
    }
    out
}

fn segment_finding(
    ctx: &PartitionContext,
    kind: Kind,
    segment: &str,
    position: u64,
    message: String,
) -> Finding {
    Finding::new(kind, &ctx.topic, ctx.partition, message)
        .segment(segment)
        .position(position)
}

#[cfg(all(test, feature = "testkit"))]
mod piece_tests {
    use super::walk::scan_segment_in;
    use super::*;
    use crate::format;
    use crate::testkit::{
        Batch, Codec, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Target,
    };

    /// One partition with a single large segment; `fault` damages it.
    fn segment(dir: &Path, fault: Option<FaultKind>) -> PathBuf {
        let mut p = PartitionBuilder::new("big", 0).segment_bytes(1 << 30);
        let (a, b) = (Producer::idempotent(7, 0), Producer::idempotent(8, 1));
        let codecs = [Codec::None, Codec::Lz4, Codec::Zstd];
        for i in 0..600 {
            p.append(
                Batch::new(if i % 3 == 0 { b } else { a })
                    .records(1 + i % 9)
                    .codec(codecs[i % 3]),
            );
        }
        if let Some(f) = fault {
            p.fault(Target::Log(0), f);
        }
        LogDirBuilder::new(1).partition(p).write(dir).unwrap();
        dir.join("big-0").join("00000000000000000000.log")
    }

    /// The walk of `path` in pieces of `piece` bytes, mapped and read: both must give
    /// the same result, which is returned.
    fn walk(path: &Path, piece: usize) -> SegmentScan {
        let inv = layout::discover(&[path.parent().unwrap().to_path_buf()]);
        let ctx = partition_context(&inv.partitions[0]);
        let opts = ScanOptions::default();
        let pool = EventPool::new(4);
        let [mapped, read] = [ReadPolicy::Map, ReadPolicy::Read].map(|policy| {
            with_threads(Some(3), || {
                scan_segment_in(&ctx, 0, 0, path, policy, &opts, &pool, piece)
            })
        });
        assert_eq!(
            mapped.events.len(),
            read.events.len(),
            "piece {piece}: mapped and read split differently"
        );
        same(&mapped, &read);
        mapped
    }

    fn same(a: &SegmentScan, b: &SegmentScan) {
        let ev = |s: &SegmentScan| s.events.iter().flatten().copied().collect::<Vec<_>>();
        assert_eq!(ev(a), ev(b));
        assert_eq!(a.findings, b.findings);
        assert_eq!(
            (a.bytes, a.records, a.max_timestamp),
            (b.bytes, b.records, b.max_timestamp)
        );
        assert_eq!(a.truncation, b.truncation);
    }

    #[test]
    fn pieces_give_the_sequential_walk() {
        let tmp = tempfile::tempdir().unwrap();
        let log = segment(&tmp.path().join("d"), None);
        let whole = walk(&log, usize::MAX);
        assert_eq!(whole.events.len(), 1);
        assert!(whole.events[0].len() >= 600);
        for piece in [1000, 4096, 20_000] {
            let split = walk(&log, piece);
            assert!(split.events.len() > 2, "piece {piece}: not split");
            same(&split, &whole);
        }
    }

    #[test]
    fn damaged_segments_fall_back_or_chain_to_the_same_result() {
        let faults = [
            FaultKind::FlipByte {
                position: 30_000,
                mask: 0x40,
            },
            FaultKind::Truncate { len: 1000 },
        ];
        for (i, f) in faults.into_iter().enumerate() {
            let tmp = tempfile::tempdir().unwrap();
            let log = segment(&tmp.path().join(format!("d{i}")), Some(f));
            let whole = walk(&log, usize::MAX);
            assert!(
                whole.truncation.is_some() || !whole.findings.is_empty(),
                "fault {i} left no trace"
            );
            for piece in [1000, 4096, 20_000] {
                same(&walk(&log, piece), &whole);
            }
        }
    }

    #[test]
    fn sync_point_needs_a_valid_batch_followed_by_a_header() {
        let tmp = tempfile::tempdir().unwrap();
        let log = segment(&tmp.path().join("d"), None);
        let data = std::fs::read(&log).unwrap();
        let mut starts = Vec::new();
        format::Entries::new(&data, 0).for_each(|e| starts.push(e.position as usize));
        for from in [1usize, 777, 5000, 12_345] {
            let want = starts.iter().copied().find(|&s| s >= from);
            assert_eq!(
                segment::sync_point(&data, from, 1 << 20, PIECE, true),
                want,
                "from {from}"
            );
        }
        assert_eq!(
            segment::sync_point(&data, data.len(), 100, PIECE, true),
            None
        );
        // A window cut exactly after a batch: that batch is a sync point only when the
        // window is the file's end (otherwise its next header is unseen).
        let cut = &data[..starts[3]];
        assert_eq!(
            segment::sync_point(cut, starts[2], 1 << 20, PIECE, true),
            Some(starts[2])
        );
        assert_eq!(
            segment::sync_point(cut, starts[2], 1 << 20, PIECE, false),
            None
        );
        assert_eq!(
            segment::sync_point(cut, starts[1], 1 << 20, PIECE, false),
            Some(starts[1])
        );
        assert_eq!(segment::sync_point(&[0u8; 10], 0, 100, PIECE, true), None);
    }
}
