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
//! Each walk counts them ([`Keyless`]); the counts of a partition's walks are merged into
//! one finding (one cause: the topic's records predate its policy).

use super::segment_finding;
use crate::finding::{Finding, Kind};
use crate::partition::state::PartitionContext;
use serde_json::json;

/// Whether the rule applies to this partition: its topic's current policy is known to
/// include `compact` (`--compacted`, the KRaft metadata log), and it is a live copy (the
/// scan leaves `compact_policy` false for a `-future`/`-delete`/`-stray` one). A `cleaner-offset-checkpoint`
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

/// What a walk saw of keyless records: counted as its batches are checked, merged over a
/// split segment's pieces and over the partition's segments, one finding at the end
/// (memory does not grow with the batches holding them).
#[derive(Debug, Default, Clone)]
pub(crate) struct Keyless {
    records: u64,
    batches: u64,
    first: i64,
    last: i64,
    /// The first batch holding any: its segment, position and offset in findings (a v2
    /// batch's base offset, a legacy wrapper's offset).
    at: Option<(String, u64, i64)>,
}

impl Keyless {
    /// Add the batch of segment `name` at `position` (`batch_offset`) that `b` counted.
    pub fn add(&mut self, b: BatchKeyless, name: &str, position: u64, batch_offset: i64) {
        let Some((n, first, last)) = b.0 else { return };
        self.merge(Keyless {
            records: n,
            batches: 1,
            first,
            last,
            at: Some((name.to_string(), position, batch_offset)),
        });
    }

    /// Take in what another walk of the same partition saw (the batch with the lower
    /// offset names the finding).
    pub fn merge(&mut self, o: Keyless) {
        let Some(at) = o.at else { return };
        match &self.at {
            Some(mine) if mine.2 <= at.2 => {}
            _ => self.at = Some(at),
        }
        if self.batches == 0 {
            (self.first, self.last) = (o.first, o.last);
        }
        self.records += o.records;
        self.batches += o.batches;
        self.first = self.first.min(o.first);
        self.last = self.last.max(o.last);
    }

    /// The partition's finding, if any keyless record was seen.
    pub fn finding(&self, ctx: &PartitionContext) -> Option<Finding> {
        let (name, position, batch_offset) = self.at.as_ref()?;
        let (n, b, first, last) = (self.records, self.batches, self.first, self.last);
        Some(
            segment_finding(
                ctx,
                Kind::KeylessRecordOnCompactedTopic,
                name,
                *position,
                message(n, b, first, last),
            )
            .offset(*batch_offset)
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
