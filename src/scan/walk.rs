//! The walk of one segment: framing, CRC and header checks of every entry (the rules in
//! `integrity`), the compact events the replay consumes, the entries `verify`'s index checks
//! need, and where `LogSegment.recover` would stop — sequentially, or in parallel pieces for
//! a large segment, mapped behind the SIGBUS guard or read in bounded chunks.

use super::integrity::{
    OFFSETS_TOPIC, OffsetsCheck, check_offset_range, check_records, check_v2_header, crc_finding,
    invalid_batch, legacy_range,
};
use super::{EventPool, SegmentScan, Truncation, file_name, segment_finding};
use crate::event::BatchEvent;
use crate::finding::{Finding, Kind};
use crate::format::index::{LogBatches, LogBatchesBuilder};
use crate::format::{self, Classified, Compression, Decompressor, Tail, TimestampType, classify};
use crate::recovery::CRC_STOP;
use crate::results::{ProgressUpdate, ScanOptions};
use crate::segment::{self, ReadPolicy};
use crate::state::PartitionContext;
use rayon::prelude::*;
use serde_json::json;
use std::path::Path;

/// Entries too large to hold whole, checked streaming (`Walker::item`).
mod bigbatch;

/// Walks one segment, or one piece of it: per-entry checks and events.
pub(super) struct Walker<'a> {
    ctx: &'a PartitionContext,
    name: &'a str,
    idx: u32,
    base: i64,
    opts: &'a ScanOptions,
    out: SegmentScan,
    /// This walk's events (moved into `out.events` when it ends).
    events: Vec<BatchEvent>,
    dec: Decompressor,
    first_bad: Option<(u64, Option<i64>, String)>,
    batches: Option<LogBatchesBuilder>,
    /// Decompressed bytes this walk may produce ([`ScanOptions::max_decompressed_per_file`];
    /// a piece of a segment gets its share, so the result does not depend on threads).
    budget: u64,
    /// Compressed batches not decompressed because the budget was spent: (count, first
    /// position, its offset).
    over_budget: Option<(u64, u64, i64)>,
}

impl<'a> Walker<'a> {
    pub(super) fn new(
        ctx: &'a PartitionContext,
        name: &'a str,
        idx: u32,
        base: i64,
        opts: &'a ScanOptions,
        events: Vec<BatchEvent>,
    ) -> Self {
        Walker {
            ctx,
            name,
            idx,
            base,
            opts,
            out: SegmentScan {
                events: Vec::new(),
                log_batches: None,
                unreadable: false,
                name: name.to_string(),
                base,
                cut: false,
                findings: Vec::new(),
                bytes: 0,
                records: 0,
                max_timestamp: i64::MIN,
                truncation: None,
                collected: crate::walked::Collector::new(
                    &ctx.topic,
                    opts.collect_batch_keys(ctx),
                    opts.max_decompressed,
                ),
            },
            events,
            dec: Decompressor::new(opts.max_decompressed),
            first_bad: None,
            batches: opts.collect_log_batches.then(LogBatchesBuilder::default),
            budget: opts.max_decompressed_per_file,
            over_budget: None,
        }
    }

    /// True (and the batch counted as skipped) when the segment's decompression budget is
    /// spent: the compressed batch at `pos` is then not decompressed.
    fn budget_spent(&mut self, pos: u64, offset: i64) -> bool {
        if self.dec.total_out() < self.budget {
            return false;
        }
        match &mut self.over_budget {
            Some((n, ..)) => *n += 1,
            None => self.over_budget = Some((1, pos, offset)),
        }
        true
    }

    /// The first entry where `LogSegment.recover` stops on this walk (later ones don't
    /// matter to it); `reason` is built only for the first.
    fn stop_at(&mut self, position: u64, offset: Option<i64>, reason: impl FnOnce() -> String) {
        if self.first_bad.is_none() {
            self.first_bad = Some((position, offset, reason()));
        }
    }

    pub(super) fn entry(&mut self, entry: format::RawEntry<'_>) {
        let (ctx, name, idx, base, opts) = (self.ctx, self.name, self.idx, self.base, self.opts);
        let pos = entry.position;
        // What the cluster checks need of this entry, kept by the same walk (#9).
        if self.out.collected.wants() {
            self.out.collected.entry(entry, idx);
        }
        let classified = classify(entry);
        if let Some(b) = &mut self.batches {
            b.entry(&classified, pos, entry.offset());
        }
        let ev = match classified {
            Classified::V2(b) => {
                let ev = BatchEvent::from_v2(&b, idx, opts.check_crc);
                check_v2_header(ctx, name, &b, &ev, base, &mut self.out.findings);
                if !ev.crc_valid {
                    self.stop_at(pos, Some(ev.base_offset), || CRC_STOP.into());
                }
                // Recovery decodes the control record of every batch with a producer id; a
                // malformed one throws InvalidRecordException, and the segment is truncated
                // there (kafka-semantics §8 rule 11).
                if ev.crc_valid
                    && ev.has_producer_id()
                    && matches!(ev.control, Some(crate::event::ControlInfo::Malformed))
                {
                    self.stop_at(pos, Some(ev.base_offset), || {
                        "malformed control record (recovery throws InvalidRecordException)".into()
                    });
                }
                // Rule 32: records of the group coordinator's log. Uncompressed batches
                // (the coordinator's default) are read always, compressed ones with --deep;
                // either way each batch's records are walked once.
                let offsets_check = ctx.topic == OFFSETS_TOPIC && ev.crc_valid && !b.is_control();
                let skip = ev.crc_valid
                    && b.compression() != Compression::None
                    && (opts.deep || offsets_check)
                    && self.budget_spent(pos, ev.base_offset);
                if skip {
                    // Budget spent: header and CRC checks only for this batch.
                } else if opts.deep && ev.crc_valid {
                    let mut check = offsets_check.then(OffsetsCheck::default);
                    check_records(
                        ctx,
                        name,
                        &b,
                        &mut self.dec,
                        check.as_mut(),
                        &mut self.out.findings,
                    );
                    if let Some(c) = check {
                        c.report(ctx, name, &b, &mut self.out.findings);
                    }
                } else if offsets_check && b.compression() == Compression::None {
                    let mut check = OffsetsCheck::default();
                    if let Ok(records) = format::batch_records(&b, &mut self.dec) {
                        for r in records.map_while(Result::ok) {
                            check.record(&b, &r);
                        }
                    }
                    check.report(ctx, name, &b, &mut self.out.findings);
                }
                self.out.records += ev.records_count.max(0) as u64;
                ev
            }
            Classified::Legacy(m) => {
                let mut ev = BatchEvent::from_legacy(&m, idx, opts.check_crc);
                if !ev.crc_valid {
                    self.out
                        .findings
                        .push(crc_finding(ctx, name, &ev, m.crc(), m.compute_crc()));
                    self.stop_at(pos, Some(ev.last_offset), || CRC_STOP.into());
                    self.out.records += 1;
                } else if m.compression() != Compression::None
                    && !self.budget_spent(pos, ev.last_offset)
                {
                    match legacy_range(&m, &mut self.dec) {
                        Ok((first, count)) => {
                            ev.base_offset = first;
                            ev.records_count = count as i32;
                            self.out.records += count as u64;
                        }
                        Err(e) => {
                            self.out.findings.push(invalid_batch(
                                ctx,
                                name,
                                pos,
                                Some(ev.last_offset),
                                &e,
                            ));
                            self.out.records += 1;
                        }
                    }
                } else {
                    self.out.records += 1;
                }
                check_offset_range(ctx, name, &ev, base, &mut self.out.findings);
                ev
            }
            Classified::Invalid(e) => {
                let (magic, offset) = (entry.magic(), entry.offset());
                self.out
                    .findings
                    .push(invalid_batch(ctx, name, pos, Some(offset), &e));
                // A v2 batch shorter than its 61-byte header fails `ensureValid`, so recovery
                // truncates there. A legacy message is only checked for size ≥ 14 and its CRC
                // (kafka-format §9): unparseable key/value lengths under a valid CRC are
                // not a truncation point.
                let legacy_crc_ok = magic < 2
                    && entry.len() >= 16
                    && crate::format::bytes::be_u32(entry.bytes, 12)
                        == crc32fast::hash(&entry.bytes[16..]);
                if !legacy_crc_ok {
                    self.stop_at(pos, Some(offset), || format!("invalid batch: {e}"));
                }
                return;
            }
        };
        // A batch whose CRC fails cannot be trusted: its timestamp must not move the
        // reference time (a flipped bit could make every open transaction "hanging").
        if ev.crc_valid && ev.timestamp_type != TimestampType::NoTimestampType {
            self.out.max_timestamp = self.out.max_timestamp.max(ev.max_timestamp);
        }
        self.events.push(ev);
    }

    /// Conclude with how the file ended (findings for a bad tail, the truncation point).
    pub(super) fn finish(mut self, tail: Tail) -> SegmentScan {
        let (ctx, name) = (self.ctx, self.name);
        let tail_seen = tail;
        match tail {
            Tail::Clean => {}
            Tail::Partial {
                position,
                declared,
                available,
                offset,
            } => {
                self.out.findings.push(
                segment_finding(
                    ctx,
                    Kind::TruncatedBatch,
                    name,
                    position,
                    format!("{name}: partial batch at byte {position} (base offset {offset}): {declared} bytes declared, {available} present"),
                )
                .offset(offset)
                .evidence(json!({"declared_size": declared, "available": available, "base_offset": offset}))
                .broker("recovery truncates the log at this position (the partial batch is dropped)"),
            );
                self.stop_at(position, Some(offset), || {
                    format!("partial batch ({declared} bytes declared, {available} present)")
                });
            }
            Tail::ZeroFilled { position, len } => {
                self.out.findings.push(
                segment_finding(
                    ctx,
                    Kind::PreallocatedTail,
                    name,
                    position,
                    format!("{name}: {len} zero bytes after the last batch at byte {position} (preallocated segment)"),
                )
                .evidence(json!({"length": len}))
                .broker("recovery truncates the zero-filled tail; normal after a crash with log.preallocate=true"),
            );
                self.stop_at(position, None, || {
                    format!("{len} zero bytes (preallocated tail)")
                });
            }
            Tail::Garbage {
                position,
                len,
                reason,
            } => {
                self.out.findings.push(
                segment_finding(
                    ctx,
                    Kind::TrailingBytes,
                    name,
                    position,
                    format!("{name}: {len} bytes at byte {position} do not frame as a batch ({reason})"),
                )
                .evidence(json!({"length": len, "reason": reason}))
                .broker("recovery truncates the log at this position; kafka-dump-log prints \"Found N invalid bytes\""),
            );
                self.stop_at(position, None, || {
                    format!("{len} bytes that do not frame as a batch ({reason})")
                });
            }
            Tail::CorruptEntry {
                position,
                len,
                size,
                reason,
            } => {
                self.out.findings.push(
                segment_finding(
                    ctx,
                    Kind::InvalidBatch,
                    name,
                    position,
                    format!(
                        "{name}: entry at byte {position} has an impossible size field {size} ({reason}); \
                         the {len} bytes from there cannot be framed"
                    ),
                )
                .evidence(json!({"structure": "log entry", "field": "size", "size": size, "reason": reason, "unframed_bytes": len}))
                .broker("recovery stops at this entry (CorruptRecordException) and truncates the log here, dropping every later batch of the segment and all later segments"),
            );
                self.stop_at(position, None, || {
                    format!("entry size {size} impossible ({reason})")
                });
            }
        }
        if let Some(b) = self.batches.take() {
            self.out.log_batches = Some(b.finish(tail_seen, self.out.bytes));
        }
        if let Some((n, position, offset)) = self.over_budget {
            let budget = self.opts.max_decompressed_per_file;
            self.out.findings.push(
                segment_finding(
                    ctx,
                    Kind::DecompressionBudgetExceeded,
                    name,
                    position,
                    format!(
                        "{name}: {n} compressed batch(es) from offset {offset} (byte {position}) on were not decompressed: the segment's decompressed bytes reached the budget of {budget} bytes; their records were not checked"
                    ),
                )
                .offset(offset)
                .evidence(json!({"skipped_batches": n, "budget_bytes": budget}))
                .broker("not applicable: a limit of this analysis (--max-decompressed-per-file), not of the data")
                .remediation("re-run with a larger --max-decompressed-per-file to check these records"),
            );
        }
        self.out.truncation = self.first_bad.map(|(position, offset, reason)| Truncation {
            segment: name.to_string(),
            position,
            offset,
            reason,
        });
        self.out.events.push(self.events);
        self.out
    }
}

/// Segments at least twice this size are walked in pieces of about this size, in
/// parallel (see [`scan_pieces`]).
pub(super) const PIECE: usize = 32 << 20;

/// Where a segment's bytes come from, for [`scan_pieces`].
pub(super) enum PieceSource {
    /// Mapped (a sealed segment).
    Mapped(segment::FileData),
    /// Read with positional reads through one handle (so every piece reads the same
    /// file even if the path is replaced meanwhile) up to `size`, the length seen at the
    /// start (a segment that may still be appended to: bytes written later are not read,
    /// as in the sequential walk).
    Read { file: std::fs::File, size: u64 },
}

/// Walk a large segment in [`PIECE`]-sized pieces, in parallel: piece k starts at the
/// first batch (CRC-valid) at or after `k × PIECE` and ends where piece k + 1 starts.
/// The result is used only if every piece's walk lands exactly on the next piece's start
/// (so the pieces chain as one sequential walk would); otherwise — a false sync, a corrupt
/// region, a read error, a file truncated under us — `None`, and the caller walks the
/// segment sequentially. The pieces depend on the file only, never on the thread count.
/// `None` too for files too small to split.
///
/// Mapped segments are walked over the map; `read()` segments (the newest of a partition)
/// are read piece by piece in [`segment::CHUNK_SIZE`] chunks with positional reads through
/// one shared handle, so one huge partition's live segment also uses every thread.
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_pieces(
    ctx: &PartitionContext,
    name: &str,
    idx: u32,
    base: i64,
    path: &Path,
    policy: ReadPolicy,
    opts: &ScanOptions,
    pool: &EventPool,
    piece: usize,
) -> Option<SegmentScan> {
    let piece = piece.max(1);
    let file_len = std::fs::metadata(path).ok()?.len();
    let cut = opts.max_bytes.is_some_and(|m| file_len > m);
    let size = opts.max_bytes.map_or(file_len, |m| m.min(file_len));
    if size < 2 * piece as u64 {
        return None;
    }
    let source = match policy {
        ReadPolicy::Map => {
            let data = segment::read_file(path, ReadPolicy::Map, opts.max_bytes).ok()?;
            if !data.is_mapped() {
                return None;
            }
            PieceSource::Mapped(data)
        }
        ReadPolicy::Read => PieceSource::Read {
            file: segment::open_regular(path).ok()?.0,
            size,
        },
    };
    let len = match &source {
        PieceSource::Mapped(data) => data.len(),
        PieceSource::Read { size, .. } => usize::try_from(*size).ok()?,
    };
    let mut starts = vec![0usize];
    let mut window = Vec::new();
    for k in 1..len.div_ceil(piece) {
        let from = k * piece;
        let found = match &source {
            PieceSource::Mapped(data) => segment::mapped_sync_point(data, from, piece, PIECE),
            PieceSource::Read { file, .. } => {
                segment::read_sync_point(file, from, piece, len, &mut window).ok()?
            }
        };
        if let Some(p) = found {
            starts.push(p);
        }
    }
    let changed = |e: &std::io::Error| {
        let mut w = Walker::new(ctx, name, idx, base, opts, Vec::new());
        w.batches = None;
        w.out.findings.push(changed_finding(ctx, name, path, e));
        w.out.events.push(w.events);
        w.out.unreadable = true;
        Some(w.out)
    };
    if let PieceSource::Mapped(data) = &source
        && let Err(e) = data.check_unchanged()
    {
        // The sync-point search read zeros where the file was: it changed under the map.
        return changed(&e);
    }
    if starts.len() < 2 {
        return None;
    }
    let walked: Vec<Option<(Walker, Option<Tail>, bool)>> = (0..starts.len())
        .into_par_iter()
        .map(|k| {
            let start = starts[k];
            let stop = starts.get(k + 1).copied();
            let mut w = Walker::new(ctx, name, idx, base, opts, pool.take());
            // This piece's share of the segment's decompression budget.
            let share = stop.unwrap_or(len).saturating_sub(start) as u128;
            w.budget =
                (u128::from(opts.max_decompressed_per_file) * share / len.max(1) as u128) as u64;
            // Both sources walk `[start, stop)` only: a piece chains when its entries tile
            // that range exactly (`segment::PieceEnd`).
            let end = match &source {
                PieceSource::Mapped(data) => {
                    let to = stop.unwrap_or(len);
                    let mut entries =
                        format::Entries::new(data.get(start..to).unwrap_or(&[]), start as u64);
                    for e in entries.by_ref() {
                        w.item(segment::mapped_item(data, e));
                    }
                    data.release_range(start, to);
                    let tail = entries.tail().unwrap_or(Tail::Clean);
                    match stop {
                        None => segment::PieceEnd::End(tail),
                        Some(_) if matches!(tail, Tail::Clean) => segment::PieceEnd::Chained,
                        Some(_) => segment::PieceEnd::Broken,
                    }
                }
                PieceSource::Read { file, size } => {
                    let stop = stop.map(|s| s as u64);
                    segment::walk_read_piece_items(file, start as u64, stop, *size, |e| {
                        w.item(e);
                        std::ops::ControlFlow::Continue(())
                    })
                    .ok()?
                }
            };
            Some(match end {
                segment::PieceEnd::Chained => (w, None, true),
                segment::PieceEnd::Broken => (w, None, false),
                segment::PieceEnd::End(tail) => (w, Some(tail), true),
            })
        })
        .collect();
    if let PieceSource::Mapped(data) = &source {
        data.release();
        if let Err(e) = data.check_unchanged() {
            // Nothing walked from the map can be trusted, and a second walk would see a
            // different file: the segment is reported as not analysed.
            for (w, _, _) in walked.into_iter().flatten() {
                pool.give(w.events);
            }
            return changed(&e);
        }
    }
    if !walked
        .iter()
        .all(|r| r.as_ref().is_some_and(|(_, _, c)| *c))
    {
        for (w, _, _) in walked.into_iter().flatten() {
            pool.give(w.events);
        }
        return None;
    }
    let mut all = Walker::new(ctx, name, idx, base, opts, Vec::new());
    all.batches = None;
    let mut tail = Tail::Clean;
    let mut parts = Vec::new();
    for (mut w, t, _) in walked.into_iter().flatten() {
        if let Some(b) = w.batches.take() {
            parts.push(b.finish(Tail::Clean, 0));
        }
        all.out.events.push(w.events);
        all.out.collected.append(w.out.collected);
        all.out.findings.extend(w.out.findings);
        all.out.records += w.out.records;
        all.out.max_timestamp = all.out.max_timestamp.max(w.out.max_timestamp);
        if all.first_bad.is_none() {
            all.first_bad = w.first_bad;
        }
        all.over_budget = match (all.over_budget, w.over_budget) {
            (Some((a, p, o)), Some((b, ..))) => Some((a + b, p, o)),
            (a, b) => a.or(b),
        };
        if let Some(t) = t {
            tail = t;
        }
    }
    all.out.bytes = len as u64;
    opts.progress.emit(ProgressUpdate::Bytes(len as u64));
    let tail = if cut { Tail::Clean } else { tail };
    let mut out = all.finish(tail);
    out.cut = cut;
    if let Some(mut lb) = LogBatches::concat(parts) {
        lb.tail = tail;
        lb.valid_len = tail.truncation_position().unwrap_or(len as u64);
        out.log_batches = Some(lb);
    }
    Some(out)
}

pub(super) fn scan_segment(
    ctx: &PartitionContext,
    idx: u32,
    base: i64,
    path: &Path,
    policy: ReadPolicy,
    opts: &ScanOptions,
    pool: &EventPool,
) -> SegmentScan {
    scan_segment_in(ctx, idx, base, path, policy, opts, pool, PIECE)
}

/// [`scan_segment`] with pieces of `piece` bytes (`usize::MAX`: never split).
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_segment_in(
    ctx: &PartitionContext,
    idx: u32,
    base: i64,
    path: &Path,
    policy: ReadPolicy,
    opts: &ScanOptions,
    pool: &EventPool,
    piece: usize,
) -> SegmentScan {
    let name = file_name(path);
    if piece < usize::MAX / 2
        && let Some(s) = scan_pieces(ctx, &name, idx, base, path, policy, opts, pool, piece)
    {
        return s;
    }
    let mut w = Walker::new(ctx, &name, idx, base, opts, pool.take());
    let file_len = std::fs::metadata(path).map_or(0, |m| m.len());
    let walked = segment::walk_entries_items(path, policy, opts.max_bytes, |item| w.item(item));
    match walked {
        Ok((tail, len)) => {
            w.out.bytes = len;
            opts.progress.emit(ProgressUpdate::Bytes(len));
            // The user's read limit is not damage: no tail finding, no truncation there.
            if opts.max_bytes.is_some_and(|m| file_len > m) {
                let mut out = w.finish(Tail::Clean);
                out.cut = true;
                return out;
            }
            w.finish(tail)
        }
        Err(e) => {
            if segment::error_reason(&e) == Some("changed_during_read") {
                // What the walk saw came (partly) from zero pages or a shorter file:
                // drop it all, the segment is reported as not analysed.
                w.out.findings.clear();
                w.events.clear();
                w.out.records = 0;
                w.out.max_timestamp = i64::MIN;
                w.out.collected.clear();
            }
            w.out.findings.push(changed_finding(ctx, &name, path, &e));
            w.out.events.push(w.events);
            w.out.unreadable = true;
            w.out
        }
    }
}

/// The `unreadable_file` finding of a segment that could not be (fully) read; its
/// evidence says why (`reason`: `io_error`, `special_file`, `changed_during_read`,
/// `too_large`).
pub(super) fn changed_finding(
    ctx: &PartitionContext,
    name: &str,
    path: &Path,
    e: &std::io::Error,
) -> Finding {
    segment_finding(
        ctx,
        Kind::UnreadableFile,
        name,
        0,
        format!("cannot read {}: {e}", path.display()),
    )
    .evidence(
        json!({"reason": segment::error_reason(e).unwrap_or("io_error"), "error": e.to_string()}),
    )
    .broker("not applicable: this segment was not (fully) analysed")
}
