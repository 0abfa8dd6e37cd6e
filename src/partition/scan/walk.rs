//! The walk of one segment: framing, CRC and header checks of every entry (the rules in
//! `integrity`), the compact events the replay consumes, the entries `verify`'s index checks
//! need, and where `LogSegment.recover` would stop — sequentially, or in parallel pieces for
//! a large segment, mapped behind the SIGBUS guard or read in bounded chunks.

use super::indexes::SegmentIndexes;
use super::integrity::{
    OffsetsCheck, check_legacy_records, check_offset_range, check_records, check_v2_header,
    coordinator_topic, crc_finding, invalid_batch, legacy_range,
};
use super::{EventPool, SegmentScan, segment_finding};
use crate::discover::layout::SegmentFiles;
use crate::finding::{Finding, Kind};
use crate::partition::event::BatchEvent;
use crate::partition::recovery::StopReason;
use crate::partition::results::{ProgressUpdate, ScanOptions};
use crate::partition::state::PartitionContext;
use crate::read::format::index::IndexMatcher;
use crate::read::format::{
    self, Classified, Compression, Decompressor, Tail, TimestampType, classify,
};
use crate::read::segment::{self, ReadPolicy};
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
    pub(super) out: SegmentScan,
    /// This walk's events (moved into `out.events` when it ends).
    pub(super) events: Vec<BatchEvent>,
    dec: Decompressor,
    pub(super) first_bad: Option<(u64, Option<i64>, StopReason)>,
    /// `verify`: what this walk finds at the keys of the segment's indexes.
    pub(super) batches: Option<IndexMatcher>,
    /// `verify`, a walk of a whole segment: its indexes, checked when the walk ends.
    pub(super) indexes: Option<&'a super::indexes::SegmentIndexes>,
    /// Decompressed bytes this walk may produce ([`ScanOptions::max_decompressed_per_file`];
    /// a piece of a segment gets its share, so the result does not depend on threads).
    pub(super) budget: u64,
    /// Compressed batches not decompressed because the budget was spent: (count, first
    /// position, its offset).
    pub(super) over_budget: Option<(u64, u64, i64)>,
    /// `--deep`: keyless records on a compacted topic, one finding when the walk ends.
    pub(super) keyless: super::keyless::Keyless,
}

impl<'a> Walker<'a> {
    pub(super) fn new(
        ctx: &'a PartitionContext,
        name: &'a str,
        idx: u32,
        base: i64,
        opts: &'a ScanOptions,
        events: Vec<BatchEvent>,
        keep: u64,
    ) -> Self {
        Walker {
            ctx,
            name,
            idx,
            base,
            opts,
            out: SegmentScan {
                events: Vec::new(),
                index_verdicts: None,
                unreadable: false,
                name: name.to_string(),
                base,
                cut: false,
                findings: Vec::new(),
                keyless: Default::default(),
                bytes: 0,
                records: 0,
                max_timestamp: i64::MIN,
                broker_timestamp: i64::MIN,
                stop: None,
                tail: None,
                collected: crate::partition::walked::Collector::new(
                    &ctx.topic,
                    opts.collect_batch_keys(ctx),
                    opts.max_decompressed,
                )
                .keep_at_most(keep),
            },
            events,
            dec: Decompressor::new(opts.max_decompressed),
            first_bad: None,
            batches: None,
            indexes: None,
            budget: opts.max_decompressed_per_file,
            over_budget: None,
            keyless: Default::default(),
        }
    }

    pub(super) fn ctx(&self) -> &'a PartitionContext {
        self.ctx
    }

    pub(super) fn opts(&self) -> &'a ScanOptions {
        self.opts
    }

    pub(super) fn name(&self) -> &'a str {
        self.name
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
    fn stop_at(&mut self, position: u64, offset: Option<i64>, reason: impl FnOnce() -> StopReason) {
        if self.first_bad.is_none() {
            self.first_bad = Some((position, offset, reason()));
        }
    }

    pub(super) fn entry(&mut self, entry: format::RawEntry<'_>) {
        let (ctx, name, idx, base, opts) = (self.ctx, self.name, self.idx, self.base, self.opts);
        let pos = entry.position;
        // What the cluster checks need of this entry, kept by the same walk.
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
                    self.stop_at(pos, Some(ev.base_offset), || StopReason::CrcMismatch);
                }
                // Recovery decodes the control record of every batch with a producer id
                // (`LogSegment.recover` → `updateProducerState` → `ProducerAppendInfo.append`),
                // after counting the batch as valid: a malformed COMMIT/ABORT throws
                // InvalidRecordException, caught there, and the segment is truncated right
                // after the batch, which stays (`RecoverCheck` notes the throw; the offset of
                // the first batch removed, if any, is the next event's).
                // A null key or COMMIT/ABORT value throws NullPointerException instead,
                // which `recover` does not catch: no truncation (`ControlInfo::Null`).
                if ev.crc_valid
                    && ev.has_producer_id()
                    && matches!(
                        ev.control,
                        Some(crate::partition::event::ControlInfo::Malformed)
                    )
                {
                    let end = pos.saturating_add(u64::from(ev.size));
                    self.stop_at(end, None, || StopReason::MalformedControl);
                }
                // Rule 32: records of the group coordinator's log. Uncompressed batches
                // (the coordinator's default) are read always, compressed ones with --deep;
                // either way each batch's records are walked once.
                let coordinator = coordinator_topic(&ctx.topic);
                let offsets_check = coordinator.is_some() && ev.crc_valid && !b.is_control();
                let skip = ev.crc_valid
                    && b.compression() != Compression::None
                    && (opts.deep || offsets_check)
                    && self.budget_spent(pos, ev.base_offset);
                if skip {
                    // Budget spent: header and CRC checks only for this batch.
                } else if opts.deep && ev.crc_valid {
                    let mut check = coordinator.filter(|_| offsets_check).map(OffsetsCheck::new);
                    check_records(
                        ctx,
                        name,
                        &b,
                        &mut self.dec,
                        check.as_mut(),
                        &mut self.keyless,
                        &mut self.out.findings,
                    );
                    if let Some(c) = check {
                        c.report(ctx, name, &b, &mut self.out.findings);
                    }
                } else if let Some(topic) = coordinator.filter(|_| offsets_check)
                    && b.compression() == Compression::None
                {
                    let mut check = OffsetsCheck::new(topic);
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
            Classified::Legacy(m) => self.legacy_entry(&m, pos),
            Classified::Invalid(e) => {
                let (magic, offset) = (entry.magic(), entry.offset());
                self.out
                    .findings
                    .push(invalid_batch(ctx, name, pos, Some(offset), &e));
                // A v2 batch shorter than its 61-byte header fails `ensureValid`, so recovery
                // truncates there. A legacy message is only checked for size ≥ 14 and its CRC
                // (`LegacyRecord.ensureValid`): unparseable key/value lengths under a valid CRC are
                // not a truncation point.
                let legacy_crc_ok = magic < 2
                    && entry.len() >= 16
                    && crate::read::format::bytes::be_u32(entry.bytes, 12)
                        == crc32fast::hash(&entry.bytes[16..]);
                if legacy_crc_ok {
                    // Still a valid batch to `LogSegment.recover`: the recovery check must
                    // count it (index interval, offset range, next offset), in file order.
                    self.events.push(BatchEvent::recovery_only(
                        idx,
                        pos,
                        u32::try_from(entry.len()).unwrap_or(u32::MAX),
                        magic,
                        offset,
                    ));
                } else {
                    self.stop_at(pos, Some(offset), || StopReason::InvalidBatch {
                        error: e.to_string(),
                    });
                }
                return;
            }
        };
        // A batch whose CRC fails cannot be trusted: its timestamp must not move the
        // reference time (a flipped bit could make every open transaction "hanging").
        if ev.crc_valid && ev.timestamp_type != TimestampType::NoTimestampType {
            self.out.max_timestamp = self.out.max_timestamp.max(ev.max_timestamp);
            if ev.broker_stamped() {
                self.out.broker_timestamp = self.out.broker_timestamp.max(ev.max_timestamp);
            }
        }
        self.events.push(ev);
    }

    /// A legacy (magic 0/1) message of the walk at byte `pos`: its CRC, its wrapper's inner
    /// range (and, with `--deep`, its inner messages), its offset range.
    fn legacy_entry(&mut self, m: &format::LegacyMessage<'_>, pos: u64) -> BatchEvent {
        let (ctx, name, idx, base, opts) = (self.ctx, self.name, self.idx, self.base, self.opts);
        let mut ev = BatchEvent::from_legacy(m, idx, opts.check_crc);
        let mut inner = None;
        if !ev.crc_valid {
            self.out
                .findings
                .push(crc_finding(ctx, name, &ev, m.crc(), m.compute_crc()));
            self.stop_at(pos, Some(ev.last_offset), || StopReason::CrcMismatch);
            self.out.records += 1;
        } else if m.compression() != Compression::None && !self.budget_spent(pos, ev.last_offset) {
            // `--deep` opens the wrapper once for its range and its inner messages.
            let range = if opts.deep {
                m.checked_inner_messages(&mut self.dec).map(|(r, i)| {
                    inner = Some(i);
                    (r.0, r.2)
                })
            } else {
                legacy_range(m, &mut self.dec)
            };
            match range {
                Ok((first, count)) => {
                    ev.base_offset = first;
                    ev.records_count = count as i32;
                    self.out.records += count as u64;
                }
                Err(e) => {
                    let mut f = invalid_batch(ctx, name, pos, Some(ev.last_offset), &e);
                    if e.structure == "legacy inner message" && e.field == "offset" {
                        // LogValidator rewrites a legacy wrapper's inner offsets on
                        // append rather than refusing them: a broker never writes this.
                        f = f.broker("never written by a correct broker (LogValidator assigns a legacy wrapper's inner offsets on append); readers take the records as stored: a consumer drops those whose offset is below its position, so after the first record at a repeated offset the others are skipped silently");
                    }
                    self.out.findings.push(f);
                    self.out.records += 1;
                }
            }
        } else {
            self.out.records += 1;
            if opts.deep && m.compression() == Compression::None {
                inner = m.inner_messages(&mut self.dec).ok();
            }
        }
        if let Some(inner) = inner {
            check_legacy_records(
                ctx,
                name,
                m,
                inner,
                &mut self.keyless,
                &mut self.out.findings,
            );
        }
        check_offset_range(ctx, name, &ev, base, &mut self.out.findings);
        ev
    }

    /// Conclude with how the file ended (findings for a bad tail, the truncation point).
    pub(super) fn finish(mut self, tail: Tail) -> SegmentScan {
        let (ctx, name) = (self.ctx, self.name);
        self.out.keyless = std::mem::take(&mut self.keyless);
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
            }
        }
        // Recovery stops at the tail unless an entry before it failed. (An impossible size
        // is not taken as throwing when the load reads the segment's end: that read starts
        // at the offset index's last entry, which may lie after it.)
        if let Some((position, reason, offset)) = StopReason::of_tail(tail) {
            self.out.tail = Some((position, reason.clone()));
            self.stop_at(position, offset, || reason);
        }
        if let (Some(b), Some(ix)) = (self.batches.take(), self.indexes) {
            self.out.index_verdicts = Some(ix.verdicts(&b.finish(tail_seen, self.out.bytes)));
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
        self.out.stop = self
            .first_bad
            .map(|(position, offset, reason)| (position, reason, offset));
        self.out.events = self.events;
        self.out
    }
}

/// Walk a whole segment sequentially (large segments are split into pieces by the
/// partition's walk, `pieces`); with [`ScanOptions::collect_index_verdicts`], its indexes
/// are read first and checked against the walk when it ends.
pub(super) fn scan_segment(
    ctx: &PartitionContext,
    idx: u32,
    seg: &SegmentFiles,
    policy: ReadPolicy,
    opts: &ScanOptions,
    pool: &EventPool,
    keep: u64,
) -> SegmentScan {
    let (base, path) = (seg.base_offset, seg.log.as_deref().unwrap_or(Path::new("")));
    let name = ctx
        .segment_names
        .get(idx as usize)
        .cloned()
        .unwrap_or_default();
    let indexes = opts
        .collect_index_verdicts
        .then(|| SegmentIndexes::load(seg, opts.mmap));
    let mut w = Walker::new(ctx, &name, idx, base, opts, pool.take(), keep);
    w.batches = indexes.as_ref().map(SegmentIndexes::matcher);
    w.indexes = indexes.as_ref();
    let file_len = std::fs::metadata(path).map_or(0, |m| m.len());
    let how = super::pieces::ahead(opts);
    let walked = segment::walk_items_ahead(path, policy, opts.max_bytes, how, |item| w.item(item));
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
            if segment::changed_during_read(&e) {
                // What the walk saw came (partly) from zero pages or a shorter file:
                // drop it all, the segment is reported as not analysed.
                w.out.findings.clear();
                w.events.clear();
                w.out.records = 0;
                w.out.max_timestamp = i64::MIN;
                w.out.broker_timestamp = i64::MIN;
                w.out.collected.clear();
            }
            w.out.findings.push(changed_finding(ctx, &name, path, &e));
            w.out.events = w.events;
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
