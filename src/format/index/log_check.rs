//! Offset and time index entries checked against the batches of their segment's `.log`
//! (`kafka-format.md` §7.3, `kafka-semantics.md` §7.2: what DumpLogSegments verifies).

use super::*;

use crate::format::batch::BatchView;
use crate::format::control::ControlType;
use crate::format::{Classified, Entries, Tail, batch_control, classify};

/// What the index checks need to know about one entry of a `.log` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct LogBatch {
    /// Byte position of the entry in the `.log` file.
    pub position: u64,
    /// First offset: v2 baseOffset; for a legacy entry, the previous entry's last offset + 1
    /// (a compressed wrapper's first inner offset is not in its header).
    pub base_offset: i64,
    /// Last offset (v2 `baseOffset + lastOffsetDelta`, legacy entry offset).
    pub last_offset: i64,
    /// v2 maxTimestamp or the legacy message timestamp; `None` when the header is unreadable.
    pub max_timestamp: Option<i64>,
    /// The producer id when the entry is a control batch whose record is an ABORT marker:
    /// what a `.txnindex` entry's lastOffset points at (`ProducerAppendInfo.appendEndTxnMarker`
    /// completes the transaction at the marker batch's base offset; only aborts are indexed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_marker_of: Option<i64>,
}

/// The entries of a `.log` image, in file order, and how the walk ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogBatches {
    pub batches: Vec<LogBatch>,
    pub tail: Tail,
    /// Bytes of whole entries (where the tail starts).
    pub valid_len: u64,
    last_offsets_sorted: bool,
}

/// The producer id of a control batch holding an ABORT marker. A control record that does
/// not decode is no marker: the broker could not have completed a transaction with it.
fn abort_marker_of(v: &BatchView<'_>) -> Option<i64> {
    if !v.is_control() {
        return None;
    }
    match batch_control(v) {
        Ok(Some(c)) if c.kind() == ControlType::Abort => Some(v.producer_id()),
        _ => None,
    }
}

/// Collects the [`LogBatch`]es of a `.log` in file order, from whichever walk reads it
/// (the scan's, or [`LogBatches::from_log`]): one rule for what an entry contributes.
#[derive(Debug, Default)]
pub struct LogBatchesBuilder {
    batches: Vec<LogBatch>,
    prev_last: Option<i64>,
}

impl LogBatchesBuilder {
    /// One framed entry at `position` whose header offset field is `offset`.
    pub fn entry(&mut self, c: &Classified<'_>, position: u64, offset: i64) {
        let b = match c {
            Classified::V2(v) => LogBatch {
                position: v.position(),
                base_offset: v.base_offset(),
                last_offset: v.last_offset(),
                max_timestamp: Some(v.max_timestamp()),
                abort_marker_of: abort_marker_of(v),
            },
            Classified::Legacy(m) => LogBatch {
                position: m.position(),
                base_offset: self
                    .prev_last
                    .map_or(m.offset(), |p| p.wrapping_add(1).min(m.offset())),
                last_offset: m.offset(),
                max_timestamp: Some(m.timestamp()),
                abort_marker_of: None,
            },
            Classified::Invalid(_) => LogBatch {
                position,
                base_offset: offset,
                last_offset: offset,
                max_timestamp: None,
                abort_marker_of: None,
            },
        };
        self.prev_last = Some(b.last_offset);
        self.batches.push(b);
    }

    /// Conclude with how the walk ended and the length read.
    pub fn finish(self, tail: Tail, len: u64) -> LogBatches {
        let valid_len = tail.truncation_position().unwrap_or(len);
        let last_offsets_sorted = self
            .batches
            .windows(2)
            .all(|w| w[0].last_offset < w[1].last_offset);
        LogBatches {
            batches: self.batches,
            tail,
            valid_len,
            last_offsets_sorted,
        }
    }
}

impl LogBatches {
    /// Walk `log` (a whole `.log` file) with [`Entries`].
    pub fn from_log(log: &[u8]) -> LogBatches {
        let mut entries = Entries::new(log, 0);
        let mut b = LogBatchesBuilder::default();
        for raw in entries.by_ref() {
            b.entry(&classify(raw), raw.position, raw.offset());
        }
        let tail = entries.tail().unwrap_or(Tail::Clean);
        b.finish(tail, log.len() as u64)
    }

    /// Concatenate the batches of consecutive pieces of one file (each built by its own
    /// [`LogBatchesBuilder`]); the last piece's tail and length end the whole.
    pub fn concat(parts: Vec<LogBatches>) -> Option<LogBatches> {
        let mut it = parts.into_iter();
        let mut all = it.next()?;
        for p in it {
            all.batches.extend(p.batches);
            all.tail = p.tail;
            all.valid_len = p.valid_len;
        }
        all.last_offsets_sorted = all
            .batches
            .windows(2)
            .all(|w| w[0].last_offset < w[1].last_offset);
        Some(all)
    }

    /// The batch starting exactly at byte `position`.
    pub fn at_position(&self, position: u64) -> Option<&LogBatch> {
        self.batches
            .binary_search_by_key(&position, |b| b.position)
            .ok()
            .map(|i| &self.batches[i])
    }

    /// The first batch whose last offset is ≥ `offset` (what DumpLogSegments searches for).
    pub fn first_ending_at_or_after(&self, offset: i64) -> Option<&LogBatch> {
        if self.last_offsets_sorted {
            let i = self.batches.partition_point(|b| b.last_offset < offset);
            self.batches.get(i)
        } else {
            self.batches.iter().find(|b| b.last_offset >= offset)
        }
    }
}

/// Verdict on one offset-index entry against the log (§7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum OffsetCheck {
    /// A batch starts at the position and its lastOffset equals the entry offset.
    Exact,
    /// A batch starts at the position and ends before the entry offset, and the entry
    /// offset ends a later batch: a follower appended several batches at once (§7.1).
    /// DumpLogSegments still reports it as a mismatch.
    FollowerChunk { batch_last_offset: i64 },
    /// A batch starts at the position but its lastOffset does not fit the entry.
    Mismatch { batch_last_offset: i64 },
    /// The position is inside the log but no entry starts there.
    NotABatchStart,
    /// The position is at or past the end of the log's whole entries.
    BeyondLog,
}

/// One offset-index entry and its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct OffsetEntryCheck {
    pub entry: OffsetEntry,
    pub check: OffsetCheck,
}

impl OffsetEntryCheck {
    /// The "log offset" DumpLogSegments would report for this entry: the lastOffset of the
    /// batch at the position, `-1` when no batch can be read there.
    pub fn log_offset(&self) -> i64 {
        match self.check {
            OffsetCheck::Exact => self.entry.offset,
            OffsetCheck::FollowerChunk { batch_last_offset }
            | OffsetCheck::Mismatch { batch_last_offset } => batch_last_offset,
            OffsetCheck::NotABatchStart | OffsetCheck::BeyondLog => -1,
        }
    }
}

/// Check every used offset-index entry against the log's batches.
pub fn check_offset_index(index: &OffsetIndex<'_>, log: &LogBatches) -> Vec<OffsetEntryCheck> {
    index
        .entries()
        .map(|entry| {
            let check = if entry.position < 0 || entry.position as u64 >= log.valid_len {
                OffsetCheck::BeyondLog
            } else {
                match log.at_position(entry.position as u64) {
                    None => OffsetCheck::NotABatchStart,
                    Some(b) if b.last_offset == entry.offset => OffsetCheck::Exact,
                    Some(b)
                        if b.last_offset < entry.offset
                            && log
                                .first_ending_at_or_after(entry.offset)
                                .is_some_and(|n| n.last_offset == entry.offset) =>
                    {
                        OffsetCheck::FollowerChunk {
                            batch_last_offset: b.last_offset,
                        }
                    }
                    Some(b) => OffsetCheck::Mismatch {
                        batch_last_offset: b.last_offset,
                    },
                }
            };
            OffsetEntryCheck { entry, check }
        })
        .collect()
}

/// Verdict on one time-index entry against the log (§7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TimeCheck {
    /// The batch whose lastOffset is the indexed offset has the indexed max timestamp.
    Exact,
    /// That batch exists but its max timestamp differs.
    TimestampMismatch { log_timestamp: i64 },
    /// The indexed offset falls inside a batch (not its last offset): older brokers indexed
    /// the record offset. Acceptable per §7.2; DumpLogSegments reports "not found".
    InsideBatch {
        batch_last_offset: i64,
        log_timestamp: Option<i64>,
    },
    /// No batch ends at the indexed offset; `found_log_offset` is the lastOffset of the first
    /// batch ending after it, `-1` when none.
    NotFound { found_log_offset: i64 },
}

/// One time-index entry, its verdict, and the ordering check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct TimeEntryCheck {
    pub entry: TimeEntry,
    pub check: TimeCheck,
    /// The previous entry's timestamp when it is ≥ this one's (not strictly increasing).
    /// The first entry is compared with -1, as DumpLogSegments does.
    pub out_of_order_after: Option<i64>,
}

impl TimeEntryCheck {
    /// The one time-index rule that `verify`, `dump` and `dump --verify-index-only` judge
    /// by: an entry is wrong when no batch holds its offset, when the batch holding it does
    /// not have the indexed timestamp as its max timestamp, or when the timestamps do not
    /// increase. An offset inside a batch (not its last offset) whose batch has the indexed
    /// max timestamp is right: the broker indexed the offset of the record with the
    /// largest timestamp (`offsetOfMaxTimestamp`, KAFKA-16310), which real 3.x brokers
    /// write (e.g. for coordinator batches of several records); kafka-dump-log still prints
    /// it under "The following indexed offsets are not found in the log.".
    pub fn is_problem(&self) -> bool {
        let wrong = match self.check {
            TimeCheck::Exact => false,
            TimeCheck::InsideBatch { log_timestamp, .. } => {
                log_timestamp != Some(self.entry.timestamp)
            }
            TimeCheck::TimestampMismatch { .. } | TimeCheck::NotFound { .. } => true,
        };
        wrong || self.out_of_order_after.is_some()
    }
}

/// Check every used time-index entry against the log's batches.
pub fn check_time_index(index: &TimeIndex<'_>, log: &LogBatches) -> Vec<TimeEntryCheck> {
    let mut prev = -1i64;
    index
        .entries()
        .map(|entry| {
            let check = match log.first_ending_at_or_after(entry.offset) {
                None => TimeCheck::NotFound {
                    found_log_offset: -1,
                },
                Some(b) if b.last_offset == entry.offset => match b.max_timestamp {
                    Some(ts) if ts == entry.timestamp => TimeCheck::Exact,
                    Some(ts) => TimeCheck::TimestampMismatch { log_timestamp: ts },
                    None => TimeCheck::TimestampMismatch { log_timestamp: -1 },
                },
                Some(b) if b.base_offset <= entry.offset => TimeCheck::InsideBatch {
                    batch_last_offset: b.last_offset,
                    log_timestamp: b.max_timestamp,
                },
                Some(b) => TimeCheck::NotFound {
                    found_log_offset: b.last_offset,
                },
            };
            let out_of_order_after = (prev >= entry.timestamp).then_some(prev);
            prev = entry.timestamp;
            TimeEntryCheck {
                entry,
                check,
                out_of_order_after,
            }
        })
        .collect()
}
