//! `LogSegment.readNextOffset` of a segment read as it is (no recovery rebuilt its offset
//! index first): the offset index's last entry gives where the read starts, and the log's
//! batch headers from there give the offset returned. Kafka's classes: `OffsetIndex`
//! (`lastOffset`, `lookup` → `AbstractIndex.indexSlotRangeFor`), `LogSegment`
//! (`readNextOffset`, `read`, `translateOffset`), `FileRecords.searchForOffsetWithSize`,
//! `FileLogInputStream.nextBatch`.
//!
//! What the broker does, in order:
//! 1. The target is the index's last entry's offset — every whole 8-byte slot counts, as
//!    the index is opened at its length (`AbstractIndex`: entries = length / 8) — or the
//!    segment's base when the index has no slot.
//! 2. The index is searched for the largest entry at or below the target (a binary search
//!    of the last 1024 slots first when the target lies after the first of them); no such
//!    entry gives position 0. A negative position reads from 0.
//! 3. From there the batch headers are framed (`nextBatch`: it stops when 17 bytes or
//!    fewer are left or an entry runs past the end, and throws for a size field below 14),
//!    up to the first batch whose last offset reaches the target: none gives the base.
//! 4. The read from that batch to the end of the file is framed again; the last whole
//!    batch gives the offset returned (its last offset + 1).
//!
//! A batch's last offset is its offset field for magic 0 and 1; for any other magic the
//! 61-byte v2 header is read (base offset + last offset delta), and a header running past
//! the end of the file throws `KafkaException`.

use super::OffsetIndex;
use crate::batch::{HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_MESSAGE_SIZE, V2_HEADER_SIZE};
use crate::bytes::{be_i32, be_i64};

/// `AbstractIndex.warmEntries` for 8-byte entries (8192 bytes of slots).
const WARM_ENTRIES: usize = 8192 / super::OFFSET_ENTRY_SIZE;

/// What `LogSegment.readNextOffset` does with a segment's offset index and `.log` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct NextOffsetRead {
    /// `OffsetIndex.lastOffset`: the last slot's offset, the base with no slot.
    pub index_last_offset: i64,
    /// Where the read starts: the position `OffsetIndex.lookup` gives for that offset
    /// (0 for a negative one or no entry at or below it).
    pub start_position: u64,
    pub outcome: NextOffsetOutcome,
}

/// How the read ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum NextOffsetOutcome {
    /// The first batch at or after the start position whose last offset reaches the
    /// index's last offset is at `found`; the last whole batch framed from there is at
    /// `last`, and `next_offset` is its last offset + 1.
    Batch {
        found: u64,
        last: u64,
        next_offset: i64,
    },
    /// No batch from the start position reaches the index's last offset (`translateOffset`
    /// gives null): the segment's base offset.
    Base,
    /// `FileLogInputStream.nextBatch` throws `CorruptRecordException` at `position`: a size
    /// field below 14 with more than 17 bytes left.
    SizeBelowMinimum { position: u64, size: i32 },
    /// A v2 batch header (61 bytes) at `position` runs past the end of the file:
    /// `loadBatchHeader` throws `KafkaException`.
    HeaderPastEnd { position: u64 },
}

impl NextOffsetRead {
    /// The offset `readNextOffset` returns for a segment based at `base`, or `None` when it
    /// throws.
    pub fn next_offset(&self, base: i64) -> Option<i64> {
        match self.outcome {
            NextOffsetOutcome::Batch { next_offset, .. } => Some(next_offset),
            NextOffsetOutcome::Base => Some(base),
            _ => None,
        }
    }
}

impl OffsetIndex<'_> {
    /// `OffsetIndex.lastOffset`: the offset of the last whole slot (a zero slot of an
    /// untrimmed file included), the base offset when the file holds none.
    pub fn last_offset(&self) -> i64 {
        let slots = self.layout().slots;
        slots
            .checked_sub(1)
            .and_then(|i| self.slot(i))
            .map_or(self.base_offset(), |e| e.offset)
    }

    /// `OffsetIndex.lookup`: `(offset, position)` of the largest entry at or below
    /// `target`, by Kafka's search (`AbstractIndex.indexSlotRangeFor`: the warm last 1024
    /// slots first, then the rest), over every whole slot; `(base, 0)` when there is none.
    /// On an index whose offsets do not increase this is the slot that search lands on.
    pub fn lookup(&self, target: i64) -> (i64, i32) {
        let none = (self.base_offset(), 0);
        let entries = self.layout().slots;
        let at = |i: usize| self.slot(i).map_or(none, |e| (e.offset, e.position));
        if entries == 0 {
            return none;
        }
        let first_hot = entries.saturating_sub(1 + WARM_ENTRIES);
        let slot = if at(first_hot).0 < target {
            binary_search(&at, target, first_hot, entries - 1)
        } else if at(0).0 > target {
            return none;
        } else {
            binary_search(&at, target, 0, first_hot)
        };
        at(slot)
    }
}

/// `AbstractIndex.binarySearch` for the largest lower bound over slots `[begin, end]`.
fn binary_search(at: &dyn Fn(usize) -> (i64, i32), target: i64, begin: usize, end: usize) -> usize {
    let (mut lo, mut hi) = (begin, end);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let found = at(mid).0;
        match found.cmp(&target) {
            std::cmp::Ordering::Greater => hi = mid - 1,
            std::cmp::Ordering::Less => lo = mid,
            std::cmp::Ordering::Equal => return mid,
        }
    }
    lo
}

/// One framed entry: its position and total length.
struct Framed {
    position: u64,
    len: u64,
}

/// The `.log` bytes from `origin` to the end of the file.
struct Tail<'a> {
    bytes: &'a [u8],
    origin: u64,
}

impl Tail<'_> {
    fn end(&self) -> i64 {
        (self.origin + self.bytes.len() as u64) as i64
    }
    fn at(&self, pos: u64) -> usize {
        (pos - self.origin) as usize
    }

    /// `FileLogInputStream.nextBatch` at `pos`: `Ok(None)` at the end (17 bytes or fewer
    /// left, or an entry running past the end).
    fn next_batch(&self, pos: u64) -> Result<Option<Framed>, NextOffsetOutcome> {
        let (end, p) = (self.end(), pos as i64);
        if p >= end - HEADER_SIZE_UP_TO_MAGIC as i64 || pos < self.origin {
            return Ok(None);
        }
        let size = be_i32(self.bytes, self.at(pos) + 8);
        if size < MIN_MESSAGE_SIZE {
            return Err(NextOffsetOutcome::SizeBelowMinimum {
                position: pos,
                size,
            });
        }
        if p > end - LOG_OVERHEAD as i64 - i64::from(size) {
            return Ok(None);
        }
        Ok(Some(Framed {
            position: pos,
            len: LOG_OVERHEAD as u64 + size as u64,
        }))
    }

    /// The entry's last offset as `FileChannelRecordBatch.lastOffset` reads it.
    fn last_offset(&self, b: &Framed) -> Result<i64, NextOffsetOutcome> {
        let at = self.at(b.position);
        let magic = self.bytes[at + 16] as i8;
        if magic < 2 {
            return Ok(be_i64(self.bytes, at));
        }
        if at + V2_HEADER_SIZE > self.bytes.len() {
            return Err(NextOffsetOutcome::HeaderPastEnd {
                position: b.position,
            });
        }
        Ok(be_i64(self.bytes, at).wrapping_add(i64::from(be_i32(self.bytes, at + 23))))
    }
}

impl OffsetIndex<'_> {
    /// `(target, position)` of `readNextOffset`'s read: the index's last offset and where
    /// its lookup starts the read (a negative position reads from 0).
    pub fn read_start(&self) -> (i64, u64) {
        let target = self.last_offset();
        (target, u64::try_from(self.lookup(target).1).unwrap_or(0))
    }
}

/// `LogSegment.readNextOffset` of a segment whose offset index is `index` and whose `.log`
/// holds `log` (the whole file).
pub fn read_next_offset(index: &OffsetIndex<'_>, log: &[u8]) -> NextOffsetRead {
    read_next_offset_in(index, log, 0)
}

/// [`read_next_offset`] given the `.log`'s bytes from `origin` to the end of the file,
/// `origin` at or below where the read starts ([`OffsetIndex::read_start`]) or at the end
/// of the file.
pub fn read_next_offset_in(index: &OffsetIndex<'_>, log: &[u8], origin: u64) -> NextOffsetRead {
    let (target, start) = index.read_start();
    let tail = Tail { bytes: log, origin };
    NextOffsetRead {
        index_last_offset: target,
        start_position: start,
        outcome: outcome(&tail, target, start).unwrap_or_else(|thrown| thrown),
    }
}

fn outcome(
    log: &Tail<'_>,
    target: i64,
    start: u64,
) -> Result<NextOffsetOutcome, NextOffsetOutcome> {
    // `FileRecords.searchForOffsetWithSize`.
    let mut pos = start;
    let found = loop {
        let Some(b) = log.next_batch(pos)? else {
            return Ok(NextOffsetOutcome::Base);
        };
        if log.last_offset(&b)? >= target {
            break b;
        }
        pos = b.position + b.len;
    };
    // `read(found)` to the end of the file, then `lastBatch().nextOffset()`.
    let at = found.position;
    let mut last = found;
    while let Some(b) = log.next_batch(last.position + last.len)? {
        last = b;
    }
    Ok(NextOffsetOutcome::Batch {
        found: at,
        last: last.position,
        next_offset: log.last_offset(&last)?.wrapping_add(1),
    })
}
