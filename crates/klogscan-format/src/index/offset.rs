//! The offset index (`.index`, Kafka's `OffsetIndex`): a zero-copy view, its format check
//! and the broker's sanity check.

use super::*;
use crate::bytes::be_i32;
use crate::error::{FormatError, Problem};

/// One offset-index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct OffsetEntry {
    /// Slot number (entry `i` starts at byte `8 * i`).
    pub slot: usize,
    pub relative_offset: i32,
    /// `baseOffset + relativeOffset` (wrapping, never panics).
    pub offset: i64,
    /// Byte position in the `.log` file.
    pub position: i32,
}

/// A zero-copy view of an offset index (`.index`: 8-byte entries) and its segment's base offset.
#[derive(Debug, Clone, Copy)]
pub struct OffsetIndex<'a> {
    bytes: &'a [u8],
    base_offset: i64,
}

impl<'a> OffsetIndex<'a> {
    /// A view over the whole file; `base_offset` comes from the file name.
    pub fn new(bytes: &'a [u8], base_offset: i64) -> Self {
        OffsetIndex { bytes, base_offset }
    }
    /// The segment base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// File length in bytes.
    pub fn len_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }
    /// Slot usage: used slots, zero tail, trailing bytes.
    pub fn layout(&self) -> IndexLayout {
        IndexLayout::compute(self.bytes, OFFSET_ENTRY_SIZE, 0)
    }
    /// The file has the broker's preallocated length (an active or crashed segment).
    pub fn is_preallocated_size(&self) -> bool {
        self.len_bytes() == PREALLOCATED_OFFSET_INDEX_LEN
    }
    /// Entry in slot `i` (any slot, used or tail), `None` past the last whole slot.
    pub fn slot(&self, i: usize) -> Option<OffsetEntry> {
        let at = i.checked_mul(OFFSET_ENTRY_SIZE)?;
        let end = at.checked_add(OFFSET_ENTRY_SIZE)?;
        if end > self.bytes.len() {
            return None;
        }
        let rel = be_i32(self.bytes, at);
        Some(OffsetEntry {
            slot: i,
            relative_offset: rel,
            offset: self.base_offset.wrapping_add(rel as i64),
            position: be_i32(self.bytes, at + 4),
        })
    }
    /// The used entries (stops at the zero tail, like DumpLogSegments).
    pub fn entries(&self) -> impl Iterator<Item = OffsetEntry> + '_ {
        let used = self.layout().used;
        (0..used).filter_map(move |i| self.slot(i))
    }

    /// Kafka's `OffsetIndex.sanityCheck`, on all `floor(len/8)` slots as Kafka
    /// counts them (so an untrimmed file's zero last slot passes).
    pub fn sanity_check(&self) -> Result<(), IndexSanityError> {
        let slots = self.bytes.len() / OFFSET_ENTRY_SIZE;
        if slots > 0
            && let Some(last) = self.slot(slots - 1)
            && last.offset < self.base_offset
        {
            return Err(IndexSanityError::OffsetBelowBase {
                last_offset: last.offset,
                base_offset: self.base_offset,
            });
        }
        if !self.bytes.len().is_multiple_of(OFFSET_ENTRY_SIZE) {
            return Err(IndexSanityError::BadLength {
                len: self.len_bytes(),
                entry_size: OFFSET_ENTRY_SIZE,
            });
        }
        Ok(())
    }

    /// Structural checks of the used entries: length a multiple of 8, relative offsets
    /// non-negative and strictly increasing, positions non-negative and strictly increasing.
    /// Returns the first problem.
    pub fn check(&self) -> Result<(), FormatError> {
        let layout = self.layout();
        if layout.trailing_bytes != 0 {
            return Err(FormatError::new(
                "offset index",
                "length",
                (layout.slots * OFFSET_ENTRY_SIZE) as u64,
                Problem::Invalid("length is not a multiple of 8"),
            ));
        }
        let mut prev: Option<OffsetEntry> = None;
        for e in self.entries() {
            let at = (e.slot * OFFSET_ENTRY_SIZE) as u64;
            if e.relative_offset < 0 {
                return Err(FormatError::new(
                    "offset index",
                    "relativeOffset",
                    at,
                    Problem::OutOfRange {
                        value: e.relative_offset as i64,
                    },
                ));
            }
            if e.position < 0 {
                return Err(FormatError::new(
                    "offset index",
                    "position",
                    at + 4,
                    Problem::OutOfRange {
                        value: e.position as i64,
                    },
                ));
            }
            if let Some(p) = prev {
                if e.relative_offset <= p.relative_offset {
                    return Err(FormatError::new(
                        "offset index",
                        "relativeOffset",
                        at,
                        Problem::Invalid("offset not greater than the previous entry's"),
                    ));
                }
                if e.position <= p.position {
                    return Err(FormatError::new(
                        "offset index",
                        "position",
                        at + 4,
                        Problem::Invalid("position not greater than the previous entry's"),
                    ));
                }
            }
            prev = Some(e);
        }
        Ok(())
    }
}
