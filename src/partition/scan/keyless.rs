//! `--deep` on a partition treated as compacted: records without a key.
//!
//! The broker refuses them on a compacted topic (`LogValidator.validateRecord`: "Compacted
//! topic cannot accept message without key"), so on disk they were written before the
//! topic's policy became `compact`, or by a broker that did not validate. The log cleaner
//! drops every keyless record it meets in the range it cleans, counting it as an invalid
//! message (`LogCleaner.shouldRetainRecord`: no key, not retained; "Found N invalid
//! messages during compaction"). So these records disappear at the next cleaning of their
//! segments: consumers read them until then, never after.
//!
//! Internal topics are left out: the coordinators' logs always carry keys (a record of
//! theirs that does not decode is their own rule's), and `__remote_log_metadata` is written
//! without keys and never compacted; the KRaft metadata log is not cleaned by the log
//! cleaner.
//!
//! Each walk counts them ([`Keyless`], one finding when it ends); [`coalesce`] makes the
//! walks' findings one per partition (one cause: the topic's records predate its policy),
//! counting them all.

use super::segment_finding;
use crate::finding::{Finding, Kind};
use crate::partition::state::PartitionContext;
use serde_json::json;

/// Whether the rule applies to this partition: its topic's current policy is known to
/// include `compact` (`--compacted`, the KRaft metadata log). A `cleaner-offset-checkpoint`
/// entry alone says the log was cleaned once; the topic may have turned to `delete` since
/// (the cleaner keeps the entry), and then nothing drops these records: silent.
pub(super) fn applies(ctx: &PartitionContext) -> bool {
    ctx.compact_policy && !ctx.internal && !ctx.kraft_metadata
}

/// Keyless records seen in one batch: `(count, first offset, last offset)`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct BatchKeyless(Option<(u64, i64, i64)>);

impl BatchKeyless {
    /// One record of the batch at `offset`, with or without its key.
    pub fn record(&mut self, offset: i64, has_key: bool) {
        if has_key {
            return;
        }
        self.0 = Some(match self.0 {
            None => (1, offset, offset),
            Some((n, first, _)) => (n + 1, first, offset),
        });
    }
}

/// What one walk saw of keyless records: counted as its batches are checked, made one
/// finding when the walk ends (memory does not grow with the batches holding them).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Keyless {
    records: u64,
    batches: u64,
    first: i64,
    last: i64,
    /// The first batch holding any: its position, and its offset in findings (a v2
    /// batch's base offset, a legacy wrapper's offset).
    at: Option<(u64, i64)>,
}

impl Keyless {
    /// Add the batch at `position` (`batch_offset`) that `b` counted.
    pub fn add(&mut self, b: BatchKeyless, position: u64, batch_offset: i64) {
        let Some((n, first, last)) = b.0 else { return };
        if self.at.is_none() {
            self.at = Some((position, batch_offset));
            (self.first, self.last) = (first, last);
        }
        self.records += n;
        self.batches += 1;
        self.first = self.first.min(first);
        self.last = self.last.max(last);
    }

    /// The walk's finding, if it saw any keyless record.
    pub fn finding(&self, ctx: &PartitionContext, name: &str) -> Option<Finding> {
        let (position, batch_offset) = self.at?;
        let (n, b, first, last) = (self.records, self.batches, self.first, self.last);
        Some(
            segment_finding(
                ctx,
                Kind::KeylessRecordOnCompactedTopic,
                name,
                position,
                message(n, b, first, last),
            )
            .offset(batch_offset)
            .evidence(json!({"keyless_records": n, "batches": b, "first_offset": first, "last_offset": last}))
            .broker("refused on append to a compacted topic (LogValidator: \"Compacted topic cannot accept message without key\"); the log cleaner drops these records when it cleans their segments (LogCleaner.shouldRetainRecord: counted as invalid messages)")
            .client_error("none: consumers read these records until the cleaner removes them, then never again")
            .remediation("if the records matter, copy them out (`klogscan dump --deep-iteration --print-data-log`) before the cleaner runs; producers of a compacted topic must set a key"),
        )
    }
}

fn message(records: u64, batches: u64, first: i64, last: i64) -> String {
    let s = |n: u64| if n == 1 { "" } else { "s" };
    format!(
        "{records} record{} without a key in {batches} batch{} (offsets {first}..={last}) on a topic treated as compacted: the log cleaner drops them when it cleans their segments",
        s(records),
        if batches == 1 { "" } else { "es" }
    )
}

/// One finding of this kind per partition: the first walk's, counting every walk's records
/// (findings of one partition's walks — a segment's, or a piece's — in any order).
pub(super) fn coalesce(findings: &mut Vec<Finding>) {
    let is = |f: &Finding| f.kind == Kind::KeylessRecordOnCompactedTopic;
    if findings.iter().filter(|f| is(f)).count() < 2 {
        return;
    }
    let num = |f: &Finding, k: &str| f.evidence[k].as_i64().unwrap_or(0);
    let (mut records, mut batches, mut first, mut last) = (0u64, 0u64, i64::MAX, i64::MIN);
    let mut keep: Option<usize> = None;
    for (i, f) in findings.iter().enumerate().filter(|(_, f)| is(f)) {
        records += num(f, "keyless_records") as u64;
        batches += num(f, "batches") as u64;
        first = first.min(num(f, "first_offset"));
        last = last.max(num(f, "last_offset"));
        if keep.is_none_or(|k| (f.offset, f.position) < (findings[k].offset, findings[k].position))
        {
            keep = Some(i);
        }
    }
    let Some(keep) = keep else { return };
    let mut i = 0;
    findings.retain(|f| {
        i += 1;
        i - 1 == keep || !is(f)
    });
    let f = findings
        .iter_mut()
        .find(|f| is(f))
        .expect("the kept finding");
    f.message = message(records, batches, first, last);
    f.evidence = json!({"keyless_records": records, "batches": batches, "first_offset": first, "last_offset": last});
}
