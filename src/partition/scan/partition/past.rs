//! Batches of a segment that reach the next segment's base offset (`segment_past_next_base`).
//!
//! A segment's file name is its base offset, and Kafka finds the segment of an offset by
//! that name alone (`LogSegments.floorSegment`): a segment's batches are meant to end below
//! the next segment's base. Nothing on the load path compares them (`LogLoader` recovers and
//! indexes each segment on its own; `LogSegment.recover` range-checks a batch against its own
//! segment's base only), so a segment left holding offsets at or past the next one's base —
//! a crash between `LocalLog.createAndDeleteSegment`'s new segment and the old one's
//! deletion (`truncateFullyAndStartAt`), or files copied together from two histories — is
//! kept as it is. When the next segment's first batch does not start after those offsets,
//! the replay's `offset_regression` already names the overlap: this finding is for the
//! rest (the next segment empty, or starting further on).

use crate::finding::{Finding, Kind};
use crate::partition::event::BatchEvent;
use crate::partition::state::PartitionContext;
use serde_json::json;

/// The first batch of a segment reaching the next segment's base offset.
#[derive(Debug, Clone, Copy)]
struct Hit {
    segment: u32,
    offset: i64,
    position: u64,
    /// The last offset of the segment's last batch (what the next segment's first batch
    /// is compared with, as the replay compares consecutive batches).
    last: i64,
}

/// Follows the segments' batches in replay order, segment by segment.
#[derive(Debug, Default)]
pub(super) struct PastNextBase {
    /// The base offset of each local segment, in walk order (`BatchEvent::segment`).
    bases: Vec<i64>,
    /// The current segment's first and last batch offsets, as the replay reads them.
    first: Option<i64>,
    last: Option<i64>,
    /// The current segment's first batch recovery keeps that reaches the next base.
    hit: Option<Hit>,
    /// The previous segment's, judged once the current segment's first batch is known.
    pending: Option<Hit>,
}

impl PastNextBase {
    pub(super) fn new(bases: Vec<i64>) -> Self {
        PastNextBase {
            bases,
            ..Default::default()
        }
    }

    /// One batch of the current segment, in file order (`kept`: recovery keeps it).
    #[inline]
    pub(super) fn batch(&mut self, ev: &BatchEvent, kept: bool) {
        self.first.get_or_insert(ev.base_offset);
        self.last = Some(ev.last_offset);
        if !kept || self.hit.is_some() {
            return;
        }
        let next = self.bases.get(ev.segment as usize + 1);
        if next.is_some_and(|&n| ev.last_offset >= n) {
            self.hit = Some(Hit {
                segment: ev.segment,
                offset: ev.base_offset,
                position: ev.position,
                last: 0,
            });
        }
    }

    /// The current segment (`read`: replayed; not: past a `--max-bytes` cut, unknown) is
    /// over: the previous segment's hit is reported unless this segment's first batch does
    /// not start after it (the replay's `offset_regression` says so).
    pub(super) fn end_segment(
        &mut self,
        ctx: &PartitionContext,
        read: bool,
        out: &mut Vec<Finding>,
    ) {
        let (first, last) = (self.first.take(), self.last.take());
        if let Some(p) = self.pending.take()
            && read
            && first.is_none_or(|f| f > p.last)
        {
            out.push(self.finding(ctx, p, first));
        }
        self.pending = (self.hit.take()).filter(|_| read).map(|h| Hit {
            last: last.unwrap_or(h.offset),
            ..h
        });
    }

    fn finding(&self, ctx: &PartitionContext, h: Hit, next_first: Option<i64>) -> Finding {
        let k = h.segment as usize;
        let name = |i: usize| ctx.segment_names.get(i).cloned().unwrap_or_default();
        let (seg, next_name) = (name(k), name(k + 1));
        let (base, next) = (self.bases[k], self.bases[k + 1]);
        let last_segment = self.bases.len() == k + 2;
        let reuse = if next_first.is_none() && last_segment {
            format!(
                "; {next_name} is the last segment and holds no batch, so the log end offset the load sets is its base offset {next} (the active segment's readNextOffset), and the next appends write offsets {next}..{} again: two different records per offset, one per segment",
                h.last
            )
        } else {
            String::new()
        };
        Finding::new(
            Kind::SegmentPastNextBase,
            &ctx.topic,
            ctx.partition,
            format!(
                "{seg}: batches from offset {} up to {} reach the next segment's base offset {next} ({next_name}{})",
                h.offset,
                h.last,
                match next_first {
                    Some(f) => format!(", whose first batch is at offset {f}"),
                    None => ", which holds no batch".to_string(),
                }
            ),
        )
        .segment(seg)
        .position(h.position)
        .offset(h.offset)
        .evidence(json!({
            "segment_base_offset": base,
            "next_segment": next_name,
            "next_segment_base_offset": next,
            "first_offset": h.offset,
            "last_offset": h.last,
            "next_segment_first_offset": next_first,
        }))
        .broker(format!(
            "not checked on load (LogLoader recovers each segment on its own, and LogSegment.recover range-checks a batch against its own segment's base only): kept. A read finds its segment by base offset (LogSegments.floorSegment), so offsets {next}..{} are served from this segment to a fetch that starts below {next} and reads on, and looked up in {next_name} by one that starts at or past it{reuse}",
            h.last
        ))
        .client_error("consumer: no exception — a consumer fetching from below the next segment's base may receive this segment's records at offsets the log serves other records at to a fetch starting there")
        .remediation("compare with the other replicas' copies of this partition; the batches past the next segment's base are left from a truncation or roll that did not finish (or from files copied together): once this broker is stopped, moving the partition directory aside lets it fetch the partition again from the leader")
    }
}
