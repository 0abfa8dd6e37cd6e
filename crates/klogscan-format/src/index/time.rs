//! The time index (`.timeindex`, Kafka's `TimeIndex`): a zero-copy view, its format
//! check and the broker's sanity check.

use super::*;
use crate::bytes::{be_i32, be_i64};
use crate::error::{FormatError, Problem};

/// One time-index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct TimeEntry {
    /// Slot number (entry `i` starts at byte `12 * i`).
    pub slot: usize,
    /// Largest timestamp seen so far in the segment.
    pub timestamp: i64,
    pub relative_offset: i32,
    /// `baseOffset + relativeOffset` (wrapping).
    pub offset: i64,
}

/// A zero-copy view of a time index (`.timeindex`: 12-byte entries) and its segment's base offset.
#[derive(Debug, Clone, Copy)]
pub struct TimeIndex<'a> {
    bytes: &'a [u8],
    base_offset: i64,
}

impl<'a> TimeIndex<'a> {
    /// A view over the whole file; `base_offset` comes from the file name.
    pub fn new(bytes: &'a [u8], base_offset: i64) -> Self {
        TimeIndex { bytes, base_offset }
    }
    /// The segment base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// File length in bytes.
    pub fn len_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }
    /// Slot usage (a slot after slot 0 with relative offset 0 starts the tail).
    pub fn layout(&self) -> IndexLayout {
        IndexLayout::compute(self.bytes, TIME_ENTRY_SIZE, 8)
    }
    /// The file has the broker's preallocated length.
    pub fn is_preallocated_size(&self) -> bool {
        self.len_bytes() == PREALLOCATED_TIME_INDEX_LEN
    }
    /// Entry in slot `i`, `None` past the last whole slot.
    pub fn slot(&self, i: usize) -> Option<TimeEntry> {
        let at = i.checked_mul(TIME_ENTRY_SIZE)?;
        let end = at.checked_add(TIME_ENTRY_SIZE)?;
        if end > self.bytes.len() {
            return None;
        }
        let rel = be_i32(self.bytes, at + 8);
        Some(TimeEntry {
            slot: i,
            timestamp: be_i64(self.bytes, at),
            relative_offset: rel,
            offset: self.base_offset.wrapping_add(rel as i64),
        })
    }
    /// The used entries (stops at the zero tail).
    pub fn entries(&self) -> impl Iterator<Item = TimeEntry> + '_ {
        let used = self.layout().used;
        (0..used).filter_map(move |i| self.slot(i))
    }

    /// Kafka's `TimeIndex.sanityCheck` over all `floor(len/12)` slots. An untrimmed
    /// time index fails it (its last slot has timestamp 0).
    pub fn sanity_check(&self) -> Result<(), IndexSanityError> {
        let slots = self.bytes.len() / TIME_ENTRY_SIZE;
        if slots > 0
            && let (Some(first), Some(last)) = (self.slot(0), self.slot(slots - 1))
        {
            if last.timestamp < first.timestamp {
                return Err(IndexSanityError::TimestampBelowFirst {
                    last_timestamp: last.timestamp,
                    first_timestamp: first.timestamp,
                });
            }
            if last.offset < self.base_offset {
                return Err(IndexSanityError::TimeOffsetBelowBase {
                    last_offset: last.offset,
                    base_offset: self.base_offset,
                });
            }
        }
        if !self.bytes.len().is_multiple_of(TIME_ENTRY_SIZE) {
            return Err(IndexSanityError::BadLength {
                len: self.len_bytes(),
                entry_size: TIME_ENTRY_SIZE,
            });
        }
        Ok(())
    }

    /// Structural checks of the used entries: length a multiple of 12, relative offsets
    /// non-negative and never decreasing, timestamps strictly increasing.
    pub fn check(&self) -> Result<(), FormatError> {
        let layout = self.layout();
        if layout.trailing_bytes != 0 {
            return Err(FormatError::new(
                "time index",
                "length",
                (layout.slots * TIME_ENTRY_SIZE) as u64,
                Problem::Invalid("length is not a multiple of 12"),
            ));
        }
        let mut prev: Option<TimeEntry> = None;
        for e in self.entries() {
            let at = (e.slot * TIME_ENTRY_SIZE) as u64;
            if e.relative_offset < 0 {
                return Err(FormatError::new(
                    "time index",
                    "relativeOffset",
                    at + 8,
                    Problem::OutOfRange {
                        value: e.relative_offset as i64,
                    },
                ));
            }
            if let Some(p) = prev {
                if e.timestamp <= p.timestamp {
                    return Err(FormatError::new(
                        "time index",
                        "timestamp",
                        at,
                        Problem::Invalid("timestamp not greater than the previous entry's"),
                    ));
                }
                if e.relative_offset < p.relative_offset {
                    return Err(FormatError::new(
                        "time index",
                        "relativeOffset",
                        at + 8,
                        Problem::Invalid("offset smaller than the previous entry's"),
                    ));
                }
            }
            prev = Some(e);
        }
        Ok(())
    }
}
