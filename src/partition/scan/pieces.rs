//! Large segments in pieces, streamed to the replay (bounded event windows).
//!
//! A segment of at least two pieces is split at CRC-valid batch boundaries
//! ([`segment::sync_point`]) into pieces of about `piece` bytes. The pieces are units of the
//! partition's walk like whole segments: walked in parallel, replayed in order, each as
//! soon as it is walked — a segment's events never wait for the whole segment.
//! A piece is replayed only once the piece before it is known to end exactly where it
//! starts (so its start is an entry boundary of the sequential walk). A piece that does not
//! chain to the next one (a false sync, damage, a read error, a file changed under us) ends
//! the parallel walk of its segment: the rest of the segment from that piece's start is
//! walked sequentially, its events handed to the replay every [`FLUSH_EVENTS`]. Pieces
//! depend on the file only, never on the thread count, and the events replayed are those of
//! one sequential walk, in the same order.

use super::indexes::SegmentIndexes;
use super::walk::{Walker, changed_finding};
use super::{EventPool, SegmentScan};
use crate::partition::event::BatchEvent;
use crate::partition::results::{ProgressUpdate, ScanOptions};
use crate::partition::state::PartitionContext;
use crate::read::format::index::LogMatches;
use crate::read::format::{self, Tail};
use crate::read::segment::{self, PieceEnd, ReadPolicy};
use std::ops::ControlFlow;
use std::path::Path;

/// Pieces of about this size; segments of at least twice this size are split. Small
/// enough that the events of the pieces in flight stay bounded (≈ 1 event of ~112 bytes
/// per batch: 4 MiB of 93-byte batches are ≈ 5 MB of events; two windows of two pieces
/// in flight at 2 threads). 8 MiB pieces put `verify` of 300 000 open transactions at
/// 2 threads at 129-130 MiB of peak RSS, 4 MiB at 121 MiB; on the 2 GiB synth dir the
/// instruction count is the same (+0.3 %, docs/performance.md).
pub(super) const PIECE: usize = 4 << 20;

/// Events a sequential walk of the rest of a segment hands to the replay at once.
pub(super) const FLUSH_EVENTS: usize = 1 << 16;

/// Where a split segment's bytes come from.
enum Source {
    /// Mapped (a sealed segment).
    Mapped(segment::FileData),
    /// Read with positional reads through one handle (so every piece reads the same file
    /// even if the path is replaced meanwhile) up to `size`, the length seen at the start
    /// (a segment that may still be appended to: bytes written later are not read, as in
    /// the sequential walk).
    Read { file: segment::Handle, size: u64 },
}

/// A segment split into pieces.
pub(super) struct Split {
    /// Index of the segment in the partition.
    pub idx: usize,
    pub base: i64,
    path: std::path::PathBuf,
    source: Source,
    /// Start of each piece; piece k ends where piece k + 1 starts (the last at `len`).
    starts: Vec<usize>,
    /// Bytes walked (the file's length, or `--max-bytes`).
    len: usize,
    /// `--max-bytes` stopped the walk before the end of the file.
    cut: bool,
    /// `verify`: the segment's indexes, whose keys every piece's walk matches.
    pub(super) indexes: Option<SegmentIndexes>,
}

impl Split {
    /// Split segment `idx` into pieces of about `piece` bytes; `None` when it is too small
    /// (under two pieces), cannot be mapped or read, or no second piece start is found
    /// (then it is walked whole). A map that changed during the search gives one piece.
    pub(super) fn new(
        idx: usize,
        base: i64,
        path: &Path,
        policy: ReadPolicy,
        opts: &ScanOptions,
        piece: usize,
    ) -> Option<Split> {
        let piece = piece.max(1);
        let file_len = std::fs::metadata(path).ok()?.len();
        let cut = opts.max_bytes.is_some_and(|m| file_len > m);
        let size = opts.max_bytes.map_or(file_len, |m| m.min(file_len));
        if size < 2 * piece as u64 {
            return None;
        }
        // A segment ending in a hole (preallocated, sparse) is walked whole: that walk
        // reads only up to the hole (`segment::data_end`), where splitting would search
        // the hole's zeros for batch starts.
        let file = segment::open_regular(path).ok()?.0;
        if segment::data_end(&file, size) < size {
            return None;
        }
        // A map that cannot be made (an address-space limit) falls back to chunked reads
        // of the pieces, never to reading the whole segment into memory.
        let mapped = match policy {
            ReadPolicy::Map => segment::map_file(path, opts.max_bytes).ok()?,
            ReadPolicy::Read => None,
        };
        let (source, file) = match mapped {
            Some(data) => (Source::Mapped(data), Some(file)),
            None => (Source::Read { file, size }, None),
        };
        let len = match &source {
            Source::Mapped(data) => data.len(),
            Source::Read { size, .. } => usize::try_from(*size).ok()?,
        };
        let mut starts = vec![0usize];
        let mut window = Vec::new();
        // The search reads a batch or two at each piece boundary: under the map's
        // sequential advice each of those faults would read the kernel's whole read-ahead
        // window there, the whole segment before its first piece is walked, and on a cold
        // page cache the walk would never overlap the reading (docs/performance.md).
        if let Source::Mapped(data) = &source {
            data.advise_random(true);
        }
        for k in 1..len.div_ceil(piece) {
            let from = k * piece;
            if starts.last().is_some_and(|&s| s >= from) {
                continue; // a batch larger than a piece: the next start is beyond it
            }
            let found = match &source {
                Source::Mapped(data) => {
                    segment::mapped_sync_point_uncached(data, file.as_ref(), from, piece, PIECE)
                }
                Source::Read { file, .. } => {
                    segment::read_sync_point(file, from, piece, len, &mut window).ok()?
                }
            };
            if let Some(p) = found.filter(|&p| p < len) {
                starts.push(p);
            }
        }
        // The search read zeros where the file was: it changed under the map. One piece
        // then, whose walk sees the change and reports the segment as not analysed.
        let changed = match &source {
            Source::Mapped(data) => {
                // The search reads pages all over the file: none stays resident.
                data.release();
                data.advise_random(false);
                data.check_unchanged().is_err()
            }
            Source::Read { .. } => false,
        };
        if changed {
            starts.truncate(1);
        }
        (starts.len() >= 2 || changed).then(|| Split {
            idx,
            base,
            path: path.to_path_buf(),
            source,
            starts,
            len,
            cut,
            indexes: None,
        })
    }

    /// Number of pieces.
    pub(super) fn pieces(&self) -> usize {
        self.starts.len()
    }

    /// Bytes of piece `k`.
    pub(super) fn piece_len(&self, k: usize) -> usize {
        let (start, stop) = self.range(k);
        stop.unwrap_or(self.len).saturating_sub(start)
    }

    pub(super) fn range(&self, k: usize) -> (usize, Option<usize>) {
        (self.starts[k], self.starts.get(k + 1).copied())
    }

    /// A walker of `[start, stop)` with that range's share of the segment's decompression
    /// budget (so the result does not depend on threads), keeping at most `keep` bytes of
    /// coordinator records (`walked::KeepBudget::remaining`).
    fn walker<'a>(
        &self,
        ctx: &'a PartitionContext,
        opts: &'a ScanOptions,
        events: Vec<BatchEvent>,
        (start, stop): (usize, usize),
        keep: u64,
    ) -> Walker<'a> {
        let name = ctx.segment_names.get(self.idx).map_or("", String::as_str);
        let mut w = Walker::new(ctx, name, self.idx as u32, self.base, opts, events, keep);
        w.batches = self.indexes.as_ref().map(SegmentIndexes::matcher);
        let share = stop.saturating_sub(start) as u128;
        w.budget =
            (u128::from(opts.max_decompressed_per_file) * share / self.len.max(1) as u128) as u64;
        w
    }
}

/// One piece, walked.
pub(super) struct PieceWalk<'a> {
    pub split: std::sync::Arc<Split>,
    pub k: usize,
    w: Walker<'a>,
    /// How the piece ended; `None` when it could not be read or the map changed.
    end: Option<PieceEnd>,
}

impl PieceWalk<'_> {
    /// Its events (for a piece not replayed).
    pub(super) fn into_events(self) -> Vec<BatchEvent> {
        self.w.events
    }
}

/// What a mapped walk asks the CPU for ahead of its cursor: every byte when it reads
/// every byte (the CRC, `--deep`), else the next header.
pub(super) fn ahead(opts: &ScanOptions) -> segment::Ahead {
    if opts.check_crc || opts.deep {
        segment::Ahead::Bytes
    } else {
        segment::Ahead::Header
    }
}

/// Walk piece `k` of `split`: `[start, stop)` only (a piece chains when its entries tile
/// that range exactly); `keep` as [`Split::walker`].
pub(super) fn walk_piece<'a>(
    ctx: &'a PartitionContext,
    opts: &'a ScanOptions,
    pool: &EventPool,
    (split, k): (std::sync::Arc<Split>, usize),
    keep: u64,
) -> PieceWalk<'a> {
    let (start, stop) = split.range(k);
    let to = stop.unwrap_or(split.len);
    let mut w = split.walker(ctx, opts, pool.take(), (start, to), keep);
    let end = match &split.source {
        Source::Mapped(data) => {
            let mut entries =
                format::Entries::new(data.get(start..to).unwrap_or(&[]), start as u64);
            let how = ahead(opts);
            for e in entries.by_ref() {
                w.item(segment::mapped_item(data, e, how));
            }
            data.release_range(start, to);
            let tail = entries.tail().unwrap_or(Tail::Clean);
            match stop {
                _ if data.check_unchanged().is_err() => None,
                None => Some(PieceEnd::End(tail)),
                Some(_) if matches!(tail, Tail::Clean) => Some(PieceEnd::Chained),
                Some(_) => Some(PieceEnd::Broken),
            }
        }
        Source::Read { file, size } => {
            let stop = stop.map(|s| s as u64);
            segment::walk_read_piece_items(file, start as u64, stop, *size, |e| {
                w.item(e);
                ControlFlow::Continue(())
            })
            .ok()
        }
    };
    PieceWalk { split, k, w, end }
}

/// A split segment being replayed: what its walk found so far, as one sequential walk
/// would have it.
pub(super) struct SplitAcc<'a> {
    pub split: std::sync::Arc<Split>,
    /// Findings, counters, the first bad entry and the skipped-budget count so far.
    all: Walker<'a>,
    /// `verify`: what the walks of the pieces replayed so far found at the index keys.
    matches: Option<LogMatches>,
    /// The next piece this segment's replay expects.
    pub next: usize,
    /// The segment is concluded (or was not replayed): its remaining pieces are dropped.
    pub done: bool,
}

/// What happened to a piece handed to [`SplitAcc::piece`].
pub(super) enum Piece {
    /// Its events, to replay now (`first_bad`: the segment's first bad position so far);
    /// `Some(tail)` when the segment ends with it.
    Replay {
        events: Vec<BatchEvent>,
        first_bad: Option<u64>,
        end: Option<Tail>,
    },
    /// It does not chain to the next piece: the rest of the segment must be walked
    /// sequentially from its start ([`SplitAcc::walk_rest`]).
    Broken(usize),
}

impl<'a> SplitAcc<'a> {
    pub(super) fn new(
        ctx: &'a PartitionContext,
        opts: &'a ScanOptions,
        split: std::sync::Arc<Split>,
        keep: u64,
    ) -> Self {
        let mut all = split.walker(ctx, opts, Vec::new(), (0, 0), keep);
        all.batches = None;
        SplitAcc {
            split,
            all,
            matches: None,
            next: 0,
            done: false,
        }
    }

    /// The segment's first bad position so far, `w` being the walk after the ones taken.
    fn first_bad(&self, w: &Walker<'_>) -> Option<u64> {
        self.all
            .first_bad
            .as_ref()
            .or(w.first_bad.as_ref())
            .map(|b| b.0)
    }

    /// Take what a walk of part of the segment found (its events stay the caller's).
    fn absorb(&mut self, w: &mut Walker<'_>) {
        let later = std::mem::take(&mut w.out.collected);
        self.all.out.collected.append(later);
        if let Some(b) = w.batches.take() {
            let later = b.finish(Tail::Clean, 0);
            match &mut self.matches {
                Some(m) => m.append(later),
                None => self.matches = Some(later),
            }
        }
        self.all.out.findings.append(&mut w.out.findings);
        self.all.keyless.merge(std::mem::take(&mut w.keyless));
        self.all.out.records += w.out.records;
        self.all.out.max_timestamp = self.all.out.max_timestamp.max(w.out.max_timestamp);
        self.all.out.broker_timestamp = (self.all.out.broker_timestamp).max(w.out.broker_timestamp);
        if self.all.first_bad.is_none() {
            self.all.first_bad = w.first_bad.take();
        }
        self.all.over_budget = match (self.all.over_budget, w.over_budget) {
            (Some((a, p, o)), Some((b, ..))) => Some((a + b, p, o)),
            (a, b) => a.or(b),
        };
    }

    /// The next piece, walked: its events to replay, or [`Piece::Broken`].
    pub(super) fn piece(&mut self, mut pw: PieceWalk<'a>, pool: &EventPool) -> Piece {
        let k = self.next;
        self.next += 1;
        match pw.end {
            Some(PieceEnd::Chained) | Some(PieceEnd::End(_)) => {
                let first_bad = self.first_bad(&pw.w);
                self.absorb(&mut pw.w);
                Piece::Replay {
                    events: std::mem::take(&mut pw.w.events),
                    first_bad,
                    end: match pw.end {
                        Some(PieceEnd::End(tail)) => Some(tail),
                        _ => None,
                    },
                }
            }
            _ => {
                pool.give(std::mem::take(&mut pw.w.events));
                Piece::Broken(k)
            }
        }
    }

    /// A piece of a segment that is not replayed (past a `--max-bytes` cut): what the
    /// cluster checks need of it is still kept; its events are returned. `true` with the
    /// segment's last piece (then [`SplitAcc::take_collected`]).
    pub(super) fn skip(&mut self, mut pw: PieceWalk<'a>) -> (Vec<BatchEvent>, bool) {
        self.next += 1;
        let later = std::mem::take(&mut pw.w.out.collected);
        self.all.out.collected.append(later);
        (
            std::mem::take(&mut pw.w.events),
            self.next == self.split.pieces(),
        )
    }

    /// What the cluster checks need of the segment (of the pieces walked so far).
    pub(super) fn take_collected(&mut self) -> crate::partition::walked::Collector {
        std::mem::take(&mut self.all.out.collected)
    }

    /// Walk the segment sequentially from the start of piece `k` to its end, handing the
    /// events to `flush` (with the segment's first bad position so far) every
    /// [`FLUSH_EVENTS`] and at the end. `Err` when the rest could not be read or changed
    /// under us (the events of the walk not yet handed over are then dropped).
    pub(super) fn walk_rest(
        &mut self,
        k: usize,
        pool: &EventPool,
        flush: &mut dyn FnMut(&[BatchEvent], Option<u64>),
    ) -> std::io::Result<Tail> {
        let split = self.split.clone();
        let (start, _) = split.range(k);
        let (ctx, opts) = (self.all.ctx(), self.all.opts());
        let keep = self.all.out.collected.room();
        let mut w = split.walker(ctx, opts, pool.take(), (start, split.len), keep);
        let this = &*self;
        let mut step = |w: &mut Walker<'_>, e: segment::Item<'_>| {
            w.item(e);
            if w.events.len() >= FLUSH_EVENTS {
                flush(&w.events, this.first_bad(w));
                w.events.clear();
            }
        };
        let walked = match &split.source {
            Source::Mapped(data) => {
                let mut entries =
                    format::Entries::new(data.get(start..split.len).unwrap_or(&[]), start as u64);
                let mut released = start;
                let how = ahead(opts);
                for e in entries.by_ref() {
                    let at = e.position as usize;
                    if at - released >= segment::RELEASE_STEP {
                        data.release_range(released, at);
                        released = at;
                    }
                    step(&mut w, segment::mapped_item(data, e, how));
                }
                data.release();
                data.check_unchanged()
                    .map(|()| entries.tail().unwrap_or(Tail::Clean))
            }
            Source::Read { file, size } => {
                segment::walk_read_piece_items(file, start as u64, None, *size, |e| {
                    step(&mut w, e);
                    ControlFlow::Continue(())
                })
                .and_then(|end| match end {
                    PieceEnd::End(tail) => Ok(tail),
                    _ => Err(std::io::Error::other("the walk stopped before the end")),
                })
            }
        };
        match walked {
            Ok(tail) => {
                let first_bad = self.first_bad(&w);
                flush(&w.events, first_bad);
                self.absorb(&mut w);
                pool.give(std::mem::take(&mut w.events));
                Ok(tail)
            }
            Err(e) => {
                if !segment::changed_during_read(&e) {
                    let first_bad = self.first_bad(&w);
                    flush(&w.events, first_bad);
                    self.absorb(&mut w);
                }
                pool.give(std::mem::take(&mut w.events));
                Err(e)
            }
        }
    }

    /// Conclude the segment with how it ended (its events are all replayed).
    pub(super) fn finish(mut self, tail: Tail) -> SegmentScan {
        self.done = true;
        let split = self.split.clone();
        let len = split.len as u64;
        self.all.out.bytes = len;
        self.all.opts().progress.emit(ProgressUpdate::Bytes(len));
        let tail = if split.cut { Tail::Clean } else { tail };
        let mut out = self.all.finish(tail);
        out.cut = split.cut;
        if let (Some(mut m), Some(ix)) = (self.matches.take(), split.indexes.as_ref()) {
            m.tail = tail;
            m.valid_len = tail.truncation_position().unwrap_or(len);
            out.index_verdicts = Some(ix.verdicts(&m));
        }
        out
    }

    /// Conclude a segment whose rest could not be read: not analysed (`unreadable_file`).
    pub(super) fn finish_unreadable(self, e: &std::io::Error) -> SegmentScan {
        let (ctx, name) = (self.all.ctx(), self.all.name());
        let mut out = self.all.out;
        out.findings
            .push(changed_finding(ctx, name, &self.split.path, e));
        out.unreadable = true;
        out
    }
}
