//! Views over the three index files of a segment: the offset index (`.index`), the time
//! index (`.timeindex`) and the transaction index (`.txnindex`), plus a helper that checks
//! offset/time index entries against the segment's `.log` bytes.
//!
//! Kafka's classes: `AbstractIndex` (preallocation, the zero tail, trimming on close),
//! `OffsetIndex` / `TimeIndex` (layouts, `sanityCheck`), `TransactionIndex` (aborted
//! transactions), and `DumpLogSegments.dumpIndex` / `dumpTimeIndex` (what the tool verifies).
//!
//! The views never fail on construction and never panic: every entry read is bounds-checked
//! once by slot arithmetic. Problems are reported by [`OffsetIndex::check`],
//! [`TimeIndex::check`], [`TxnIndex::check`] (as
//! [`FormatError`](super::error::FormatError)s) and by the Kafka sanity
//! checks ([`IndexSanityError`]), which carry the exact text the broker throws.

mod join;
mod log_check;
mod next_offset;
mod offset;
#[cfg(test)]
mod tests;
mod time;
mod txn;

pub use join::*;
pub use log_check::*;
pub use next_offset::*;
pub use offset::*;
pub use time::*;
pub use txn::*;

use super::bytes::be_i32;

/// Size of an offset-index entry: relativeOffset i32 + position i32.
pub const OFFSET_ENTRY_SIZE: usize = 8;
/// Size of a time-index entry: timestamp i64 + relativeOffset i32.
pub const TIME_ENTRY_SIZE: usize = 12;
/// Size of a transaction-index entry (`AbortedTxn`).
pub const TXN_ENTRY_SIZE: usize = 34;
/// Length of a preallocated offset index with the default `log.index.size.max.bytes` (10 MiB).
pub const PREALLOCATED_OFFSET_INDEX_LEN: u64 = 10_485_760;
/// Length of a preallocated time index with the default maximum (10 MiB rounded down to 12).
pub const PREALLOCATED_TIME_INDEX_LEN: u64 = 10_485_756;

/// How the slots of an index file are used (`AbstractIndex`: entries, then the
/// preallocated zero tail until the file is trimmed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct IndexLayout {
    /// `floor(len / entrySize)`: what Kafka takes as the entry count when it opens the file.
    pub slots: usize,
    /// Slots holding data: everything before the first slot after slot 0 whose relative
    /// offset is 0 (DumpLogSegments' heuristic).
    pub used: usize,
    /// Slots after the used ones (0 for a trimmed file).
    pub tail_slots: usize,
    /// Every byte of the tail slots is zero (the preallocated, never-written part).
    pub tail_all_zero: bool,
    /// Bytes after the last whole slot (`len % entrySize`); non-zero is corrupt.
    pub trailing_bytes: usize,
}

impl IndexLayout {
    fn compute(bytes: &[u8], entry_size: usize, rel_offset_at: usize) -> IndexLayout {
        let slots = bytes.len() / entry_size;
        let mut used = slots;
        for i in 1..slots {
            if be_i32(bytes, i * entry_size + rel_offset_at) == 0 {
                used = i;
                break;
            }
        }
        let tail = &bytes[used * entry_size..slots * entry_size];
        IndexLayout {
            slots,
            used,
            tail_slots: slots - used,
            tail_all_zero: tail.iter().all(|&b| b == 0),
            trailing_bytes: bytes.len() % entry_size,
        }
    }

    /// No slots after the used ones: the file was trimmed (`trimToValidSize`) or never
    /// preallocated.
    pub fn is_trimmed(&self) -> bool {
        self.tail_slots == 0
    }
}

/// Why Kafka's `sanityCheck` of an offset or time index would throw `CorruptIndexException`
/// (`OffsetIndex.sanityCheck`, `TimeIndex.sanityCheck`). [`IndexSanityError::kafka_message`] renders the broker's exact message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum IndexSanityError {
    /// Offset index: the last slot's offset is below the base offset.
    OffsetBelowBase { last_offset: i64, base_offset: i64 },
    /// Time index: the last slot's timestamp is below the first slot's.
    TimestampBelowFirst {
        last_timestamp: i64,
        first_timestamp: i64,
    },
    /// Time index: the last slot's offset is below the base offset.
    TimeOffsetBelowBase { last_offset: i64, base_offset: i64 },
    /// The length is not a multiple of the entry size.
    BadLength { len: u64, entry_size: usize },
}

impl IndexSanityError {
    /// The message of Kafka's `CorruptIndexException` (storage-module wording, Kafka 3.5+:
    /// `OffsetIndex.java` / `TimeIndex.java`; the Scala `OffsetIndex` of ≤ 3.4 put the
    /// offset-index path in parentheses and ended with a period), with `abs_path` standing
    /// for `file.getAbsolutePath()`.
    pub fn kafka_message(&self, abs_path: &str) -> String {
        match *self {
            IndexSanityError::OffsetBelowBase {
                last_offset,
                base_offset,
            } => format!(
                "Corrupt index found, index file {abs_path} has non-zero size but the last \
                 offset is {last_offset} which is less than the base offset {base_offset}"
            ),
            IndexSanityError::TimestampBelowFirst {
                last_timestamp,
                first_timestamp,
            } => format!(
                "Corrupt time index found, time index file ({abs_path}) has non-zero size but \
                 the last timestamp is {last_timestamp} which is less than the first timestamp \
                 {first_timestamp}"
            ),
            IndexSanityError::TimeOffsetBelowBase {
                last_offset,
                base_offset,
            } => format!(
                "Corrupt time index found, time index file ({abs_path}) has non-zero size but \
                 the last offset is {last_offset} which is less than the first offset {base_offset}"
            ),
            IndexSanityError::BadLength { len, entry_size } if entry_size == TIME_ENTRY_SIZE => {
                format!(
                    "Time index file {abs_path} is corrupt, found {len} bytes which is neither \
                     positive nor a multiple of {entry_size}"
                )
            }
            IndexSanityError::BadLength { len, entry_size } => format!(
                "Index file {abs_path} is corrupt, found {len} bytes which is neither positive \
                 nor a multiple of {entry_size}"
            ),
        }
    }
}
