//! One partition's scan: its segments walked as units (whole segments, or pieces of large
//! ones, [`super::pieces`]) in parallel, and replayed in offset order through the
//! producer-state machine while later units are walked ([`ahead`]).
//!
//! The walk runs ahead of the replay by at most two windows: up to [`UNITS_PER_THREAD`]
//! units per thread, and `threads` (at most 16) [`PIECE`]s of bytes, per window. Memory is
//! bounded by that, not by the partition or by a segment; many small segments are many
//! units in flight. The replay order (unit by unit, event by event) is the order of one
//! sequential walk, so the output does not depend on the thread count.

use super::indexes::SegmentIndexes;
use super::pieces::{self, PIECE, Piece, Split, SplitAcc};
use super::walk::scan_segment;
use super::{PartitionReport, ScanOptions, Truncation, TxnCounts, partition_context};
use crate::discover::layout::{self, PartitionDir};
use crate::finding::Finding;
use crate::partition::epochs;
use crate::partition::event::BatchEvent;
use crate::partition::recovery::{self, RecoverCheck, SegmentWalk};
use crate::partition::results::Carried;
use crate::partition::state::ReplayOptions;
use crate::partition::state::{PartitionContext, Replay};
use crate::partition::timeline;
use crate::partition::walked::KeepBudget;
use crate::read::format::index::IndexVerdicts;
use crate::read::segment;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Units (segments or pieces) per thread in one window: small segments are many per
/// window (10 000 segments of 16 KiB made 5 000 windows of two, each a join of the walk
/// and the replay, and one thread idle most of the time). Since the walk runs ahead unit
/// by unit ([`ahead`]) this only bounds the units in flight.
pub(super) const UNITS_PER_THREAD: usize = 16;

/// Event buffers handed back after a unit's replay, reused by later walks: a fresh
/// `Vec` per segment meant page faults and kernel page clearing for every new event page
/// (≈ 7 % of a scan's cycles in `clear_page_erms`). Holds buffers of at most `limit`
/// events of capacity in all (what two windows of pieces need; more would only be memory
/// held for nothing).
pub(super) struct EventPool {
    free: std::sync::Mutex<(Vec<Vec<BatchEvent>>, usize)>,
    limit: usize,
}

impl EventPool {
    /// A pool for windows of `threads` threads.
    pub(super) fn new(threads: usize) -> Self {
        EventPool {
            free: std::sync::Mutex::new((Vec::new(), 0)),
            limit: 2 * window_bytes(threads, PIECE) as usize / 100,
        }
    }
    pub(super) fn take(&self) -> Vec<BatchEvent> {
        self.free
            .lock()
            .ok()
            .and_then(|mut f| {
                let v = f.0.pop()?;
                f.1 -= v.capacity();
                Some(v)
            })
            .unwrap_or_default()
    }
    pub(super) fn give(&self, mut v: Vec<BatchEvent>) {
        v.clear();
        if v.capacity() == 0 {
            return;
        }
        if let Ok(mut f) = self.free.lock()
            && f.1 + v.capacity() <= self.limit
        {
            f.1 += v.capacity();
            f.0.push(v);
        }
    }
}

/// What one segment's walk produced (a whole segment; for a split one, without events).
pub(super) struct SegmentScan {
    /// In walk order.
    pub events: Vec<BatchEvent>,
    /// With `collect_index_verdicts`: the segment's index checks against this same walk.
    pub index_verdicts: Option<IndexVerdicts>,
    /// The file could not be read: no recovery verdict for it.
    pub unreadable: bool,
    pub name: String,
    pub base: i64,
    /// `--max-bytes` stopped the walk before the end of the file: what follows the last
    /// whole entry read is unknown, not damaged.
    pub cut: bool,
    pub findings: Vec<Finding>,
    /// `--deep`: keyless records on a compacted topic, counted (one finding a partition).
    pub keyless: super::keyless::Keyless,
    pub bytes: u64,
    pub records: u64,
    pub max_timestamp: i64,
    /// The newest timestamp a broker's clock set ([`crate::partition::event::BatchEvent::broker_stamped`]).
    pub broker_timestamp: i64,
    /// Where `LogSegment.recover` stops on the segment: `(position, why, offset there)`.
    pub stop: Option<(u64, recovery::StopReason, Option<i64>)>,
    /// Where its bytes stop framing before its end, and how.
    pub tail: Option<(u64, recovery::StopReason)>,
    /// What the cluster checks need of this segment ([`crate::partition::walked`]).
    pub collected: crate::partition::walked::Collector,
}

/// Bytes after which a window closes.
fn window_bytes(threads: usize, piece: usize) -> u64 {
    threads.clamp(1, 16) as u64 * piece as u64
}

/// One unit of a partition's walk.
enum Unit {
    /// A whole segment (by index), walked sequentially.
    Segment(usize),
    /// Piece `k` of a split segment.
    Piece(Arc<Split>, usize),
}

/// A unit, walked (one per unit of a window, moved once: the size does not matter).
#[allow(clippy::large_enum_variant)]
enum Walked<'a> {
    Segment(SegmentScan),
    Piece(pieces::PieceWalk<'a>),
}

/// Hands out a partition's units one by one in file order (splitting a large segment when
/// its turn comes, so at most one split segment per partition is open at a time).
struct Cursor<'p> {
    logs: &'p [(i64, &'p Path)],
    /// The files of each segment of `logs`.
    segs: &'p [&'p layout::SegmentFiles],
    mmap: segment::MmapMode,
    /// Each segment's length, bounded by `--max-bytes`.
    sizes: &'p [u64],
    next: usize,
    split: Option<(Arc<Split>, usize)>,
    /// Units, and bytes, of one window: the walk runs at most two windows ahead.
    units: usize,
    bytes: u64,
    piece: usize,
}

impl Cursor<'_> {
    /// The next unit in file order, with its size in bytes (`None` after the last).
    fn next_unit(&mut self, opts: &ScanOptions) -> Option<(Unit, u64)> {
        loop {
            if let Some((s, k)) = self.split.take() {
                let bytes = s.piece_len(k) as u64;
                if k + 1 < s.pieces() {
                    self.split = Some((s.clone(), k + 1));
                }
                return Some((Unit::Piece(s, k), bytes));
            }
            let &(base, path) = self.logs.get(self.next)?;
            let idx = self.next;
            self.next += 1;
            let size = self.sizes[idx];
            let policy = segment::policy(self.mmap, size);
            if size >= 2 * self.piece as u64
                && let Some(mut s) = Split::new(idx, base, path, policy, opts, self.piece)
            {
                // `verify`: the keys every piece matches are read once, before the pieces.
                s.indexes = (self.segs.get(idx))
                    .filter(|_| opts.collect_index_verdicts)
                    .map(|f| SegmentIndexes::load(f, opts.mmap));
                self.split = Some((Arc::new(s), 0));
                continue;
            }
            return Some((Unit::Segment(idx), size));
        }
    }
}

/// The replay side of a partition's scan: everything the units' events change.
struct Run<'a> {
    ctx: &'a PartitionContext,
    opts: &'a ScanOptions,
    pool: &'a EventPool,
    report: PartitionReport,
    replay: Replay,
    findings: Vec<Finding>,
    keyless: super::keyless::Keyless,
    /// The damaged batches, noted as the replay reads them (`causes::link_damage`).
    damage: crate::partition::causes::DamageTracker,
    pending_snapshots: Vec<i64>,
    /// The split segment being replayed and its recovery check.
    split: Option<(SplitAcc<'a>, RecoverCheck)>,
    /// `__consumer_offsets`: the group coordinator's load, fed from this walk.
    groups: Option<crate::partition::groups::replay::Replay>,
    /// `__share_group_state`: the share coordinator's load, fed from this walk.
    share: Option<crate::partition::share_state::ShareStateReplay>,
    /// With `collect_timelines`: the partition's timeline, fed from this walk.
    timeline: Option<timeline::Collector>,
    /// `__transaction_state`: what the walks may still keep of its records.
    keep: &'a KeepBudget,
    /// Batches reaching the next segment's base offset (`segment_past_next_base`).
    past: past::PastNextBase,
}

impl<'a> Run<'a> {
    /// Replay `events` of one segment, in file order; `first_bad`: the position of the
    /// segment's first bad entry so far (recovery counts only the batches before it).
    fn events(&mut self, check: &mut RecoverCheck, first_bad: Option<u64>, events: &[BatchEvent]) {
        let report = &mut self.report;
        for ev in events {
            let kept = first_bad.is_none_or(|p| ev.position < p);
            if !ev.is_recovery_only() {
                self.past.batch(ev, kept);
            }
            if kept {
                check.batch(ev.last_offset, ev.max_timestamp, ev.size);
                check.producer_state(ev, self.replay.has_open_txn(ev.producer_id));
            } else {
                check.removed(ev.base_offset);
            }
            check.count(ev.records_count, ev.crc_valid, kept);
            epochs::note_batch(&mut report.carried, ev);
            if ev.is_recovery_only() {
                // Not replayed, but the broker's log holds it: it ends the log when last.
                self.replay.extend_log_end(ev.last_offset);
                continue;
            }
            while let Some(&n) = self.pending_snapshots.last() {
                if ev.base_offset < n {
                    break;
                }
                report
                    .carried
                    .rare_mut()
                    .snapshot_states
                    .push((n, self.replay.producers()));
                self.pending_snapshots.pop();
            }
            report.carried.first_offset.get_or_insert(ev.base_offset);
            report.batches += 1;
            if let Some(t) = &mut self.timeline {
                t.batch(ev);
            }
            if ev.is_control {
                report.control_batches += 1;
            }
            (self.damage).apply(&mut self.replay, ev, None, &mut self.findings);
        }
    }

    /// Replay one batch of a remote segment `[start, end]` (`--remote-storage`, before
    /// the local log), its damage tracked as the local batches' is.
    fn apply_remote(&mut self, ev: &BatchEvent, segment: (i64, i64)) {
        (self.damage).apply(&mut self.replay, ev, Some(segment), &mut self.findings);
    }

    /// Past a segment cut by --max-bytes the log's continuity is unknown: later segments
    /// are not replayed (their producers would seem to skip sequences). Unread as far as
    /// the model knows: no verdict on it, but it keeps its place (the recovery point's
    /// segment is found among all segments).
    fn unread(&mut self, name: String, base: i64) {
        self.past.end_segment(self.ctx, false, &mut self.findings);
        self.report.carried.segment_walks.push(SegmentWalk {
            name: crate::partition::walked::SegmentName::of(&name),
            base_offset: base,
            walk: None,
        });
        if self.opts.collect_index_verdicts {
            self.report.carried.rare_mut().index_verdicts.push(None);
        }
    }

    /// What the cluster checks need of segment `name` (every segment, in order, replayed or
    /// not: `segment_names` is what batch keys' segment numbers index).
    fn absorb(&mut self, name: &str, mut collected: crate::partition::walked::Collector) {
        self.report.carried.segment_names.push(name);
        self.keep.take(&mut collected);
        let sink = match (&mut self.groups, &mut self.share) {
            (Some(g), _) => Some(g as &mut dyn crate::partition::walked::RecordSink),
            (None, Some(s)) => Some(s as &mut dyn crate::partition::walked::RecordSink),
            (None, None) => None,
        };
        self.report
            .carried
            .cluster_inputs
            .absorb(name, collected, sink);
    }

    /// A segment's walk is over (its events replayed): what it adds to the report.
    fn end_segment(&mut self, mut seg: SegmentScan, check: RecoverCheck) {
        self.absorb(&seg.name, std::mem::take(&mut seg.collected));
        let first_bad = seg.stop.take();
        let report = &mut self.report;
        report.partially_read |= seg.cut;
        report.carried.segment_walks.push(SegmentWalk {
            name: crate::partition::walked::SegmentName::of(&seg.name),
            base_offset: seg.base,
            walk: (!seg.unreadable).then(|| check.finish(first_bad, seg.tail.take(), seg.bytes)),
        });
        if self.opts.collect_index_verdicts {
            report
                .carried
                .rare_mut()
                .index_verdicts
                .push(seg.index_verdicts);
        }
        report.records += seg.records;
        report.bytes += seg.bytes;
        report.carried.max_timestamp = report.carried.max_timestamp.max(seg.max_timestamp);
        report.carried.broker_timestamp = report.carried.broker_timestamp.max(seg.broker_timestamp);
        self.findings.extend(seg.findings);
        self.keyless.merge(seg.keyless);
        (self.past).end_segment(self.ctx, !seg.unreadable, &mut self.findings);
    }

    /// Every unit replayed: the snapshots still pending see the final state, the group
    /// replay and the timeline are finished.
    fn finish(self) -> (PartitionReport, Replay, Vec<Finding>) {
        let Run {
            ctx,
            mut report,
            replay,
            mut findings,
            keyless,
            damage,
            mut pending_snapshots,
            groups,
            share,
            timeline,
            ..
        } = self;
        while let Some(n) = pending_snapshots.pop() {
            report
                .carried
                .rare_mut()
                .snapshot_states
                .push((n, replay.producers()));
        }
        findings.extend(keyless.finding(ctx));
        if let Some(s) = share {
            s.conclude(ctx, &mut report, &mut findings);
        }
        if let Some(g) = groups {
            let (anomalies, offsets) =
                crate::partition::groups::load::finish_anomalies(g, !report.partially_read);
            report.carried.cluster_inputs.group_anomalies = Some(anomalies.into());
            report.carried.cluster_inputs.group_offsets = Some(Box::new(offsets));
        }
        report.carried.cluster_inputs.finish();
        report
            .carried
            .set_damaged(damage.finish(!report.partially_read));
        report
            .carried
            .set_timeline(timeline.and_then(timeline::Collector::finish).map(Box::new));
        (report, replay, findings)
    }

    fn unit(&mut self, walked: Walked<'a>) {
        match walked {
            Walked::Segment(mut seg) => {
                let events = std::mem::take(&mut seg.events);
                if self.report.partially_read {
                    self.absorb(&seg.name, std::mem::take(&mut seg.collected));
                    self.unread(seg.name, seg.base);
                } else {
                    // Recovery's view of this segment, from the same events: every batch
                    // before the walk's first bad entry, in file order.
                    let mut check = RecoverCheck::new(seg.base);
                    let first_bad = seg.stop.as_ref().map(|t| t.0);
                    self.events(&mut check, first_bad, &events);
                    self.end_segment(seg, check);
                }
                self.pool.give(events);
            }
            Walked::Piece(pw) => self.piece(pw),
        }
    }

    fn piece(&mut self, pw: pieces::PieceWalk<'a>) {
        let (split, k) = (pw.split.clone(), pw.k);
        if k == 0 {
            let mut acc = SplitAcc::new(self.ctx, self.opts, split.clone(), self.keep.remaining());
            if self.report.partially_read {
                let name = self
                    .ctx
                    .segment_names
                    .get(split.idx)
                    .cloned()
                    .unwrap_or_default();
                self.unread(name, split.base);
                acc.done = true;
            }
            self.split = Some((acc, RecoverCheck::new(split.base)));
        }
        let Some((mut acc, mut check)) = self.split.take() else {
            self.pool.give(pw.into_events());
            return;
        };
        if !Arc::ptr_eq(&acc.split, &split) || acc.next != k {
            self.pool.give(pw.into_events());
            self.split = Some((acc, check));
            return;
        }
        if acc.done {
            // Not replayed (past a cut): only what the cluster checks need is kept.
            let (events, last) = acc.skip(pw);
            self.pool.give(events);
            if last {
                let name = self
                    .ctx
                    .segment_names
                    .get(split.idx)
                    .cloned()
                    .unwrap_or_default();
                let collected = acc.take_collected();
                self.absorb(&name, collected);
            }
            self.split = Some((acc, check));
            return;
        }
        let pool = self.pool;
        match acc.piece(pw, pool) {
            Piece::Replay {
                events,
                first_bad,
                end,
            } => {
                self.events(&mut check, first_bad, &events);
                pool.give(events);
                match end {
                    Some(tail) => self.end_segment(acc.finish(tail), check),
                    None => self.split = Some((acc, check)),
                }
            }
            Piece::Broken(k) => {
                let rest = acc.walk_rest(k, pool, &mut |evs, first_bad| {
                    self.events(&mut check, first_bad, evs)
                });
                let seg = match rest {
                    Ok(tail) => acc.finish(tail),
                    Err(e) => acc.finish_unreadable(&e),
                };
                self.end_segment(seg, check);
            }
        }
    }
}

/// Scan one partition: `threads` walk its units ahead of the replay; large segments are
/// split into pieces of `piece` bytes. A tiered partition's `remote` segments are
/// replayed first ([`super::remote`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_partition(
    p: &PartitionDir,
    opts: &ScanOptions,
    threads: usize,
    piece: usize,
    log_dir: Option<&recovery::LogDirFiles>,
    (compacted, compact_policy, replay): (Option<bool>, bool, ReplayOptions),
    pool: &EventPool,
    remote: &[crate::partition::remote::RemoteSegmentInput],
) -> (PartitionReport, Replay, Vec<Finding>) {
    let mut ctx = partition_context(p);
    // Remote segments are named after the local ones (events index these names).
    ctx.segment_names
        .extend(remote.iter().map(|s| s.name.clone()));
    // What the inputs say about the topic's cleanup policy (the coordinators' internal
    // topics stay compacted).
    ctx.compacted = ctx.compacted.or(compacted);
    ctx.compact_policy = compact_policy;
    let dir = DirState::of(p, log_dir, &ctx);
    let logs: Vec<(i64, &Path)> = p
        .segments
        .iter()
        .filter_map(|s| s.log.as_deref().map(|l| (s.base_offset, l)))
        .collect();
    // The indexes the load reads: a kept segment's index `.swap` files renamed over its own.
    // (`scan` models a current broker.)
    // The swaps the load completes first (read once, for the indexes and the plan).
    let swaps = (!p.partial)
        .then(|| recovery::swaps::CompletedSwaps::of(p))
        .flatten();
    let loaded = recovery::swaps::with_index_swaps(p, swaps.as_ref(), false);
    let segs: Vec<&layout::SegmentFiles> = (loaded.segments.iter())
        .filter(|s| s.log.is_some())
        .collect();
    let mut report = initial_report(p, &ctx, opts, &logs, (&dir, log_dir));
    if !remote.is_empty() {
        // With the remote history read, the log start is the checkpoint (the remote log
        // start) or the first remote segment.
        report.log_start_offset = dir
            .checkpointed_log_start
            .known()
            .or(remote.first().map(|s| s.start_offset));
    }
    // Only a checkpointed log start moves the LSO clamp: without one the broker uses the
    // first segment's base offset, at or below every batch.
    ctx.log_start_offset = dir
        .checkpointed_log_start
        .known()
        .and(report.log_start_offset);
    let ctx = &ctx;
    let keep = KeepBudget::new(opts.keep_coordinator_bytes);
    let mut run = Run {
        ctx,
        opts,
        pool,
        report,
        replay: Replay::new(ctx.clone(), replay),
        findings: Vec::new(),
        keyless: Default::default(),
        damage: Default::default(),
        pending_snapshots: snapshot_offsets(p, opts),
        split: None,
        groups: crate::partition::groups::load::replay_for(
            &ctx.topic,
            ctx.partition,
            &p.path.display().to_string(),
        ),
        share: crate::partition::share_state::ShareStateReplay::for_partition(p, ctx),
        timeline: opts.collect_timelines.then(|| {
            timeline::Collector::new(timeline::Limits::default(), &opts.timeline_producers)
        }),
        keep: &keep,
        past: past::PastNextBase::new(logs.iter().map(|&(base, _)| base).collect()),
    };
    if remote.is_empty()
        && !ctx.kraft_metadata
        && let Some(&(base, _)) = logs.first()
    {
        // Retention moved the log start: the broker's producer state below it.
        if let Err((path, e)) = super::seed::seed_replay(p, base, opts.mmap, &mut run.replay) {
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            run.findings
                .push(super::walk::changed_finding(ctx, &name, &path, &e).broker(
                "not applicable: the replay starts without the producer state this snapshot holds",
            ));
        }
    }
    if !remote.is_empty() {
        let (replayed, cut) = super::remote::replay_remote(
            ctx,
            opts,
            pool,
            remote,
            logs.len(),
            logs.first().map(|l| l.0),
            &mut |ev, segment| run.apply_remote(ev, segment),
        );
        run.report.partially_read |= cut;
        run.report.tiered = Some(Box::new(crate::partition::results::TieredRanges {
            replayed: Some(replayed),
            ..Default::default()
        }));
    }
    walk_units(&mut run, &logs, &segs, threads, piece);
    let (mut report, replay, mut findings) = run.finish();
    apply_recovery(
        (p, &loaded.segments, swaps.as_ref()),
        &mut report,
        &dir,
        opts,
        &mut findings,
    );
    // A metadata log whose start no snapshot reaches: the node's next start fails.
    findings.extend(recovery::metadata_snapshots::snapshot_state_finding(
        p,
        &report.topic,
        report.partition,
    ));
    // A latest snapshot the node's snapshot reader refuses: its next start fails too.
    findings.extend(recovery::metadata_snapshots::snapshot_read_finding(
        p,
        &report.topic,
        report.partition,
        opts.max_bytes,
        opts.max_decompressed,
    ));
    // A record every start decodes that the raft client's reader refuses (Kafka 3.8+: the
    // start fails), and names read as snapshot ids that no file is opened under.
    findings.extend(recovery::metadata_snapshots::log_read_finding(
        p,
        &report.topic,
        report.partition,
        opts.max_bytes,
        opts.max_decompressed,
    ));
    findings.extend(recovery::metadata_snapshots::snapshot_name_findings(
        p,
        &report.topic,
        report.partition,
        opts.max_bytes,
        opts.max_decompressed,
    ));
    drop_inert_recovery(&mut report, opts);
    release_spare_capacity(&mut report);
    findings.shrink_to_fit();
    (report, replay, findings)
}

/// Walk the partition's units ahead of `run`'s replay (in parallel, up to two windows of
/// bytes and units): the replay is sequential by nature, the walk is not, so overlapping
/// them keeps every thread busy on one big partition.
fn walk_units<'a>(
    run: &mut Run<'a>,
    logs: &[(i64, &Path)],
    segs: &'a [&'a layout::SegmentFiles],
    threads: usize,
    piece: usize,
) {
    let (ctx, opts, pool, keep) = (run.ctx, run.opts, run.pool, run.keep);
    // Every segment under the one read policy (`segment::policy`: under `auto` mapped
    // unless small, the newest too; a file changing under its map is reported, not a
    // signal). One `stat` per segment, spread over the threads: 10 000 segments stat'ed
    // one after the other kept the second thread idle for ≈ 10 ms.
    let sizes: Vec<u64> = logs
        .par_iter()
        .map(|(_, l)| std::fs::metadata(l).map_or(0, |m| m.len()))
        .map(|len| len.min(opts.max_bytes.unwrap_or(u64::MAX)))
        .collect();
    let mut cursor = Cursor {
        logs,
        segs,
        mmap: opts.mmap,
        sizes: &sizes,
        next: 0,
        split: None,
        units: threads.max(1) * UNITS_PER_THREAD,
        bytes: window_bytes(threads, piece),
        piece,
    };
    let walk = |u: Unit| match u {
        Unit::Segment(idx) => {
            let policy = segment::policy(opts.mmap, sizes[idx]);
            let keep = keep.remaining();
            Walked::Segment(scan_segment(
                ctx, idx as u32, segs[idx], policy, opts, pool, keep,
            ))
        }
        Unit::Piece(split, k) => Walked::Piece(pieces::walk_piece(
            ctx,
            opts,
            pool,
            (split, k),
            keep.remaining(),
        )),
    };
    ahead::walk_ahead(
        2 * cursor.bytes,
        2 * cursor.units,
        || cursor.next_unit(opts),
        walk,
        |w| run.unit(w),
    );
}

/// Run the recovery model over the walked segments: the partition's `truncation` is the
/// one the broker's recovery makes, and the integrity findings say what recovery does
/// with their bytes (truncate there, delete with a later segment, or never look).
fn apply_recovery(
    (p, loaded, swaps): (
        &PartitionDir,
        &[layout::SegmentFiles],
        Option<&recovery::swaps::CompletedSwaps>,
    ),
    report: &mut PartitionReport,
    dir: &DirState,
    opts: &ScanOptions,
    findings: &mut Vec<Finding>,
) {
    let (clean_shutdown, recovery_point) = (dir.clean_shutdown, dir.recovery_point);
    let log_start_checkpoint = dir.checkpointed_log_start;
    let mmap = opts.mmap;
    // How the load reads a `.txnindex` (the whole entry version since 4.4).
    let txn_read = (
        mmap,
        recovery::reads_whole_txn_index_version(opts.broker_version),
    );
    // Each walk's segment files, by base offset (one lookup per segment, not a scan of
    // the partition's segments: 10 000 segments made that quadratic).
    let files: HashMap<i64, &layout::SegmentFiles> = loaded
        .iter()
        .filter(|s| s.log.is_some())
        .rev()
        .map(|s| (s.base_offset, s))
        .collect();
    let inputs: Vec<recovery::SegmentInput> = report
        .carried
        .segment_walks
        .iter()
        .map(|w| recovery::SegmentInput {
            name: w.name.text().into_owned(),
            base: w.base_offset,
            missing_index: !p.partial
                && files.get(&w.base_offset).is_some_and(|s| s.index.is_none()),
            // A corrupt .txnindex makes LogLoader recover the segment at load, like a
            // missing offset index (verify reports the same reason).
            corrupt_index: (!p.partial)
                .then(|| {
                    files
                        .get(&w.base_offset)
                        .and_then(|s| s.txnindex.as_deref())
                        .and_then(|t| recovery::txnindex_corruption(t, w.base_offset, txn_read))
                })
                .flatten(),
            // What fails the load is `verify`'s to predict; the scan plans the recovery.
            load_error: None,
            walk: w.walk.clone(),
            opened_as: None,
            created: false,
            read_next: None,
            open_error: None,
            oversize: None,
        })
        .collect();
    // The segments the load sees once it has completed the swaps it finds.
    let (mut inputs, replaced) = match swaps {
        Some(s) => s.apply(inputs, p, txn_read),
        None => (inputs, Vec::new()),
    };
    // What `LogSegment.readNextOffset` reads of the last segment when no recovery runs on
    // it first (a swapped-in one's through its swapped index).
    if !p.partial {
        let files = (p.path.as_path(), loaded);
        recovery::last_read::attach(
            &mut inputs,
            files,
            (clean_shutdown, true),
            mmap,
            opts.max_bytes,
        );
    }
    // The segments the load opens under the broker's names for files found under others
    // (created empty when no file has that name): never the bytes of those files.
    let aliases = recovery::aliases::Aliases::of(p);
    let (inputs, unmodelled) = aliases.apply(inputs, p, swaps, txn_read);
    let delete_dir = matches!(p.kind, Some(layout::DirKind::Delete { .. }));
    let mut plan = recovery::plan_segments(
        clean_shutdown,
        recovery_point,
        log_start_checkpoint,
        delete_dir,
        &inputs,
        report.log_end_offset,
        opts.check_crc,
    );
    if crate::discover::layout::is_kraft_metadata(&report.topic) {
        plan.for_metadata_log();
    }
    plan.not_followed(unmodelled.as_deref());
    // A load that fails in its first pass replaces nothing.
    if plan.load_fails.is_none() {
        plan.replaced = replaced;
    }
    report.truncation = plan.truncation.as_ref().map(|t| {
        Box::new(Truncation {
            segment: t.segment.clone(),
            position: t.position,
            offset: t.first_removed_offset,
            reason: t.reason.clone(),
        })
    });
    // Without CRC checks the truncation is only the latest point recovery can stop at.
    report.truncation_unknown = plan.outcome_unknown.clone();
    // The load fails before any recovery (`verify`'s `load_failure` says the same).
    report.load_failure = plan.load_fails.clone();
    // The segments' walks, by segment (one lookup a finding; none made without findings).
    let walks: HashMap<&str, &recovery::RecoverWalk> = (inputs.iter())
        .filter(|_| !findings.is_empty())
        .filter_map(|s| Some((s.name.as_str(), s.walk.as_ref()?)))
        .collect();
    for f in findings.iter_mut() {
        let walk = f.segment.as_deref().and_then(|s| walks.get(s).copied());
        recovery::word_integrity_finding(
            f,
            &plan,
            walk,
            clean_shutdown,
            recovery_point.known(),
            report.high_watermark,
            report.compacted == Some(true),
        );
    }
    report.carried.recovery.set(plan);
    // A log read whole that holds no batch ends at its last segment's base (the replay,
    // which takes the end from batches, has none; `conclude` takes this one).
    let walks = &report.carried.segment_walks;
    let empty_end = recovery::last_read::empty_log_end(walks);
    report.log_end_offset = empty_end.filter(|_| !report.partially_read);
    // Those files are not read; say what the load does with each instead.
    if !aliases.is_empty() {
        let fates = aliases.fates(p, swaps);
        findings.extend(recovery::alias_texts::alias_findings(
            &report.topic,
            report.partition,
            &fates,
        ));
    }
}

#[cfg(all(test, feature = "testkit"))]
mod tests;

mod ahead;

mod release;
use release::{drop_inert_recovery, release_spare_capacity};

mod initial;
use initial::{DirState, initial_report, snapshot_offsets};
mod past;
