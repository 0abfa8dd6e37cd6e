//! Views over the three index files of a segment: the offset index (`.index`), the time
//! index (`.timeindex`) and the transaction index (`.txnindex`), plus a helper that checks
//! offset/time index entries against the segment's `.log` bytes.
//!
//! Reference: `kafka-format.md` §7 (layouts, preallocation, the zero tail, sanity checks),
//! `kafka-semantics.md` §2 (`.txnindex` meaning) and §7.2 (what DumpLogSegments verifies).
//!
//! The views never fail on construction and never panic: every entry read is bounds-checked
//! once by slot arithmetic. Problems are reported by [`OffsetIndex::check`],
//! [`TimeIndex::check`], [`TxnIndex::check`] (as [`FormatError`]s) and by the Kafka sanity
//! checks ([`IndexSanityError`]), which carry the exact text the broker throws.

use super::batch::BatchView;
use super::bytes::{be_i32, be_i64};
use super::control::ControlType;
use super::error::{FormatError, Problem};
use super::{Entries, Tail};
use crate::format::{Classified, batch_control, classify};

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

/// How the slots of an index file are used (§7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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
/// (§7.4). [`IndexSanityError::kafka_message`] renders the broker's exact message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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

// ---------------------------------------------------------------------------------------
// Offset index
// ---------------------------------------------------------------------------------------

/// One offset-index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct OffsetEntry {
    /// Slot number (entry `i` starts at byte `8 * i`).
    pub slot: usize,
    pub relative_offset: i32,
    /// `baseOffset + relativeOffset` (wrapping, never panics).
    pub offset: i64,
    /// Byte position in the `.log` file.
    pub position: i32,
}

/// A zero-copy view of an offset index (`.index`, §7.1) and its segment's base offset.
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

    /// Kafka's `OffsetIndex.sanityCheck` (§7.4), on all `floor(len/8)` slots as Kafka
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

// ---------------------------------------------------------------------------------------
// Time index
// ---------------------------------------------------------------------------------------

/// One time-index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TimeEntry {
    /// Slot number (entry `i` starts at byte `12 * i`).
    pub slot: usize,
    /// Largest timestamp seen so far in the segment.
    pub timestamp: i64,
    pub relative_offset: i32,
    /// `baseOffset + relativeOffset` (wrapping).
    pub offset: i64,
}

/// A zero-copy view of a time index (`.timeindex`, §7.2) and its segment's base offset.
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

    /// Kafka's `TimeIndex.sanityCheck` (§7.4) over all `floor(len/12)` slots. An untrimmed
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

// ---------------------------------------------------------------------------------------
// Transaction index
// ---------------------------------------------------------------------------------------

/// One `AbortedTxn` entry of a `.txnindex` (absolute offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AbortedTxn {
    /// Slot number (entry `i` starts at byte `34 * i`).
    pub slot: usize,
    /// The version as Kafka reads it: the high byte of the int16, signed.
    pub version: i8,
    /// The full int16 as written.
    pub version_i16: i16,
    pub producer_id: i64,
    pub first_offset: i64,
    /// Offset of the ABORT marker.
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// Kafka's `AbortedTxn.toString()`.
    pub fn kafka_string(&self) -> String {
        format!(
            "AbortedTxn(version={}, producerId={}, firstOffset={}, lastOffset={}, lastStableOffset={})",
            self.version,
            self.producer_id,
            self.first_offset,
            self.last_offset,
            self.last_stable_offset
        )
    }
}

/// Why the broker's load-time `TransactionIndex.sanityCheck` would throw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnSanityError {
    pub txn: AbortedTxn,
    pub base_offset: i64,
}

impl TxnSanityError {
    /// The `CorruptIndexException` message, with `abs_path` for the index file.
    pub fn kafka_message(&self, abs_path: &str) -> String {
        format!(
            "Last offset of aborted transaction {} in index {abs_path} is less than start offset {}",
            self.txn.kafka_string(),
            self.base_offset
        )
    }
}

/// A zero-copy view of a transaction index (`.txnindex`, §7.5).
#[derive(Debug, Clone, Copy)]
pub struct TxnIndex<'a> {
    bytes: &'a [u8],
    base_offset: i64,
}

impl<'a> TxnIndex<'a> {
    /// A view over the whole file; `base_offset` comes from the file name.
    pub fn new(bytes: &'a [u8], base_offset: i64) -> Self {
        TxnIndex { bytes, base_offset }
    }
    /// The segment base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// Number of whole 34-byte entries.
    pub fn len(&self) -> usize {
        self.bytes.len() / TXN_ENTRY_SIZE
    }
    /// No whole entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of a trailing fragment shorter than an entry (Kafka ignores them).
    pub fn trailing_bytes(&self) -> usize {
        self.bytes.len() % TXN_ENTRY_SIZE
    }
    /// Entry `i`, `None` past the last whole entry.
    pub fn get(&self, i: usize) -> Option<AbortedTxn> {
        let at = i.checked_mul(TXN_ENTRY_SIZE)?;
        let end = at.checked_add(TXN_ENTRY_SIZE)?;
        let b = self.bytes.get(at..end)?;
        Some(AbortedTxn {
            slot: i,
            version: b[0] as i8,
            version_i16: i16::from_be_bytes([b[0], b[1]]),
            producer_id: be_i64(b, 2),
            first_offset: be_i64(b, 10),
            last_offset: be_i64(b, 18),
            last_stable_offset: be_i64(b, 26),
        })
    }
    /// Every whole entry, in file order (the trailing fragment is not yielded).
    pub fn entries(&self) -> impl Iterator<Item = AbortedTxn> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    /// Kafka's load-time `TransactionIndex.sanityCheck`: every lastOffset ≥ base offset.
    pub fn sanity_check(&self) -> Result<(), TxnSanityError> {
        match self.entries().find(|t| t.last_offset < self.base_offset) {
            Some(txn) => Err(TxnSanityError {
                txn,
                base_offset: self.base_offset,
            }),
            None => Ok(()),
        }
    }

    /// Structural checks: no trailing fragment, version byte not above 0 (Kafka throws
    /// "Unexpected aborted transaction version"), lastOffset strictly increasing,
    /// firstOffset ≤ lastOffset.
    pub fn check(&self) -> Result<(), FormatError> {
        let mut prev: Option<AbortedTxn> = None;
        for t in self.entries() {
            let at = (t.slot * TXN_ENTRY_SIZE) as u64;
            if t.version > 0 {
                return Err(FormatError::new(
                    "transaction index",
                    "version",
                    at,
                    Problem::OutOfRange {
                        value: t.version as i64,
                    },
                ));
            }
            if t.first_offset > t.last_offset {
                return Err(FormatError::new(
                    "transaction index",
                    "firstOffset",
                    at + 10,
                    Problem::Invalid("firstOffset is after lastOffset"),
                ));
            }
            if let Some(p) = prev
                && t.last_offset <= p.last_offset
            {
                return Err(FormatError::new(
                    "transaction index",
                    "lastOffset",
                    at + 18,
                    Problem::Invalid("lastOffset not greater than the previous entry's"),
                ));
            }
            prev = Some(t);
        }
        if self.trailing_bytes() != 0 {
            return Err(FormatError::new(
                "transaction index",
                "length",
                (self.len() * TXN_ENTRY_SIZE) as u64,
                Problem::Truncated {
                    needed: TXN_ENTRY_SIZE as u64,
                    available: self.trailing_bytes() as u64,
                },
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Checking indexes against the log
// ---------------------------------------------------------------------------------------

/// What the index checks need to know about one entry of a `.log` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_bytes(entries: &[(i32, i32)]) -> Vec<u8> {
        let mut v = Vec::new();
        for &(r, p) in entries {
            v.extend_from_slice(&r.to_be_bytes());
            v.extend_from_slice(&p.to_be_bytes());
        }
        v
    }

    #[test]
    fn time_entry_inside_a_batch_is_right_only_with_the_batch_max_timestamp() {
        let e = |ts: i64, off: i64| TimeEntry {
            slot: 0,
            timestamp: ts,
            relative_offset: off as i32,
            offset: off,
        };
        let inside = |ts: Option<i64>| TimeCheck::InsideBatch {
            batch_last_offset: 11,
            log_timestamp: ts,
        };
        let ok = TimeEntryCheck {
            entry: e(100, 10),
            check: inside(Some(100)),
            out_of_order_after: None,
        };
        assert!(!ok.is_problem());
        let wrong_ts = TimeEntryCheck {
            check: inside(Some(99)),
            ..ok
        };
        assert!(wrong_ts.is_problem());
        let unordered = TimeEntryCheck {
            out_of_order_after: Some(200),
            ..ok
        };
        assert!(unordered.is_problem());
        let missing = TimeEntryCheck {
            check: TimeCheck::NotFound {
                found_log_offset: -1,
            },
            ..ok
        };
        assert!(missing.is_problem());
    }

    fn time_bytes(entries: &[(i64, i32)]) -> Vec<u8> {
        let mut v = Vec::new();
        for &(t, r) in entries {
            v.extend_from_slice(&t.to_be_bytes());
            v.extend_from_slice(&r.to_be_bytes());
        }
        v
    }

    #[test]
    fn offset_index_trimmed() {
        let b = offset_bytes(&[(3, 4730), (7, 9571)]);
        let idx = OffsetIndex::new(&b, 100);
        let l = idx.layout();
        assert_eq!(
            (l.slots, l.used, l.tail_slots, l.trailing_bytes),
            (2, 2, 0, 0)
        );
        assert!(l.is_trimmed());
        let e: Vec<_> = idx.entries().map(|e| (e.offset, e.position)).collect();
        assert_eq!(e, vec![(103, 4730), (107, 9571)]);
        assert_eq!(idx.check(), Ok(()));
        assert_eq!(idx.sanity_check(), Ok(()));
    }

    #[test]
    fn offset_index_untrimmed_zero_tail() {
        let mut b = offset_bytes(&[(3, 4730), (7, 9571)]);
        b.resize(8 * 10, 0);
        let idx = OffsetIndex::new(&b, 100);
        let l = idx.layout();
        assert_eq!((l.slots, l.used, l.tail_slots), (10, 2, 8));
        assert!(l.tail_all_zero && !l.is_trimmed());
        assert_eq!(idx.entries().count(), 2);
        // Kafka's offset sanity check passes an untrimmed file (last offset == base).
        assert_eq!(idx.sanity_check(), Ok(()));
        // A tail slot with relative offset 0 but a non-zero position is not "all zero".
        b[8 * 5 + 7] = 1;
        let l = OffsetIndex::new(&b, 100).layout();
        assert_eq!(l.used, 2);
        assert!(!l.tail_all_zero);
    }

    #[test]
    fn offset_index_errors() {
        // bad size
        let mut b = offset_bytes(&[(3, 4730)]);
        b.push(0);
        let idx = OffsetIndex::new(&b, 0);
        assert_eq!(idx.check().unwrap_err().field, "length");
        assert_eq!(
            idx.sanity_check(),
            Err(IndexSanityError::BadLength {
                len: 9,
                entry_size: 8
            })
        );
        assert_eq!(
            idx.sanity_check().unwrap_err().kafka_message("/d/x.index"),
            "Index file /d/x.index is corrupt, found 9 bytes which is neither positive nor a multiple of 8"
        );
        // offsets not increasing
        let b = offset_bytes(&[(7, 100), (5, 200)]);
        let e = OffsetIndex::new(&b, 0).check().unwrap_err();
        assert_eq!((e.field, e.position), ("relativeOffset", 8));
        // positions not increasing
        let b = offset_bytes(&[(5, 200), (7, 200)]);
        let e = OffsetIndex::new(&b, 0).check().unwrap_err();
        assert_eq!((e.field, e.position), ("position", 12));
        // negative relative offset → last offset below base
        let b = offset_bytes(&[(-5, 200)]);
        let idx = OffsetIndex::new(&b, 10);
        assert_eq!(idx.check().unwrap_err().field, "relativeOffset");
        let s = idx.sanity_check().unwrap_err();
        assert_eq!(
            s,
            IndexSanityError::OffsetBelowBase {
                last_offset: 5,
                base_offset: 10
            }
        );
        assert_eq!(
            s.kafka_message("/p"),
            "Corrupt index found, index file /p has non-zero size but the last offset is 5 \
             which is less than the base offset 10"
        );
    }

    #[test]
    fn time_index_untrimmed_fails_kafka_sanity() {
        let mut b = time_bytes(&[(1000, 3), (2000, 7)]);
        b.resize(12 * 6, 0);
        let idx = TimeIndex::new(&b, 50);
        let l = idx.layout();
        assert_eq!((l.slots, l.used, l.tail_slots), (6, 2, 4));
        assert!(l.tail_all_zero);
        assert_eq!(idx.check(), Ok(()));
        let s = idx.sanity_check().unwrap_err();
        assert_eq!(
            s,
            IndexSanityError::TimestampBelowFirst {
                last_timestamp: 0,
                first_timestamp: 1000
            }
        );
        assert_eq!(
            s.kafka_message("/t"),
            "Corrupt time index found, time index file (/t) has non-zero size but the last \
             timestamp is 0 which is less than the first timestamp 1000"
        );
        // trimmed: passes
        let b = time_bytes(&[(1000, 3), (2000, 7)]);
        assert_eq!(TimeIndex::new(&b, 50).sanity_check(), Ok(()));
    }

    #[test]
    fn time_index_errors() {
        let b = time_bytes(&[(1000, 3), (1000, 7)]);
        let e = TimeIndex::new(&b, 0).check().unwrap_err();
        assert_eq!((e.field, e.position), ("timestamp", 12));
        let b = time_bytes(&[(1000, 7), (2000, 3)]);
        let e = TimeIndex::new(&b, 0).check().unwrap_err();
        assert_eq!((e.field, e.position), ("relativeOffset", 20));
        // equal offsets are allowed (offsets never decrease)
        let b = time_bytes(&[(1000, 7), (2000, 7)]);
        assert_eq!(TimeIndex::new(&b, 0).check(), Ok(()));
        let mut b = time_bytes(&[(1000, 7)]);
        b.extend_from_slice(&[1, 2, 3]);
        let idx = TimeIndex::new(&b, 0);
        assert_eq!(idx.check().unwrap_err().field, "length");
        assert_eq!(
            idx.sanity_check().unwrap_err().kafka_message("/t"),
            "Time index file /t is corrupt, found 15 bytes which is neither positive nor a multiple of 12"
        );
        let b = time_bytes(&[(1000, -1)]);
        let s = TimeIndex::new(&b, 10).sanity_check().unwrap_err();
        assert_eq!(
            s.kafka_message("/t"),
            "Corrupt time index found, time index file (/t) has non-zero size but the last \
             offset is 9 which is less than the first offset 10"
        );
    }

    fn txn(version: i16, pid: i64, first: i64, last: i64, lso: i64) -> Vec<u8> {
        let mut v = version.to_be_bytes().to_vec();
        for x in [pid, first, last, lso] {
            v.extend_from_slice(&x.to_be_bytes());
        }
        v
    }

    #[test]
    fn txn_index() {
        let mut b = txn(0, 7, 90, 120, 121);
        b.extend(txn(0, 8, 95, 130, 131));
        let idx = TxnIndex::new(&b, 100);
        assert_eq!(idx.len(), 2);
        assert_eq!(idx.check(), Ok(()));
        assert_eq!(idx.sanity_check(), Ok(()));
        let t: Vec<_> = idx.entries().collect();
        assert_eq!(
            (
                t[1].producer_id,
                t[1].first_offset,
                t[1].last_offset,
                t[1].last_stable_offset
            ),
            (8, 95, 130, 131)
        );
        // trailing fragment: ignored by the reader, reported by check
        b.extend_from_slice(&[0; 10]);
        let idx = TxnIndex::new(&b, 100);
        assert_eq!((idx.len(), idx.trailing_bytes()), (2, 10));
        assert_eq!(idx.check().unwrap_err().field, "length");
        // not increasing
        let mut b = txn(0, 7, 90, 130, 131);
        b.extend(txn(0, 8, 95, 120, 121));
        assert_eq!(
            TxnIndex::new(&b, 0).check().unwrap_err().field,
            "lastOffset"
        );
        // Kafka reads the high byte: 0x0100 is version 1 → rejected; 0x0001 reads as 0.
        let b = txn(0x0100, 7, 90, 120, 121);
        assert_eq!(TxnIndex::new(&b, 0).check().unwrap_err().field, "version");
        let b = txn(0x0001, 7, 90, 120, 121);
        let t = TxnIndex::new(&b, 0).get(0).unwrap();
        assert_eq!((t.version, t.version_i16), (0, 1));
        // sanity: lastOffset below the base offset
        let b = txn(0, 7, 90, 99, 100);
        let e = TxnIndex::new(&b, 100).sanity_check().unwrap_err();
        assert_eq!(
            e.kafka_message("/x.txnindex"),
            "Last offset of aborted transaction AbortedTxn(version=0, producerId=7, \
             firstOffset=90, lastOffset=99, lastStableOffset=100) in index /x.txnindex is \
             less than start offset 100"
        );
    }

    /// A minimal v2 batch header (61 bytes, no records) for log-check tests.
    fn v2_batch(base: i64, last_delta: i32, max_ts: i64) -> Vec<u8> {
        let mut b = vec![0u8; 61];
        b[..8].copy_from_slice(&base.to_be_bytes());
        b[8..12].copy_from_slice(&49i32.to_be_bytes());
        b[16] = 2;
        b[23..27].copy_from_slice(&last_delta.to_be_bytes());
        b[35..43].copy_from_slice(&max_ts.to_be_bytes());
        b
    }

    #[test]
    fn checks_against_log() {
        let mut log = v2_batch(0, 1, 10); // pos 0, offsets 0..1
        log.extend(v2_batch(2, 2, 20)); // pos 61, offsets 2..4
        log.extend(v2_batch(5, 0, 30)); // pos 122, offset 5
        let lb = LogBatches::from_log(&log);
        assert_eq!(lb.batches.len(), 3);
        assert_eq!(lb.tail, Tail::Clean);
        let oi = offset_bytes(&[(4, 61), (5, 61), (5, 100), (9, 183), (3, 122)]);
        let c = check_offset_index(&OffsetIndex::new(&oi, 0), &lb);
        let kinds: Vec<_> = c.iter().map(|c| c.check).collect();
        assert_eq!(
            kinds,
            vec![
                OffsetCheck::Exact,
                OffsetCheck::FollowerChunk {
                    batch_last_offset: 4
                },
                OffsetCheck::NotABatchStart,
                OffsetCheck::BeyondLog,
                OffsetCheck::Mismatch {
                    batch_last_offset: 5
                },
            ]
        );
        assert_eq!(c[1].log_offset(), 4);
        assert_eq!(c[3].log_offset(), -1);
        let ti = time_bytes(&[(20, 4), (25, 5), (24, 3), (40, 9)]);
        let c = check_time_index(&TimeIndex::new(&ti, 0), &lb);
        assert_eq!(c[0].check, TimeCheck::Exact);
        assert_eq!(c[0].out_of_order_after, None);
        assert_eq!(
            c[1].check,
            TimeCheck::TimestampMismatch { log_timestamp: 30 }
        );
        assert_eq!(
            c[2].check,
            TimeCheck::InsideBatch {
                batch_last_offset: 4,
                log_timestamp: Some(20)
            }
        );
        assert_eq!(c[2].out_of_order_after, Some(25));
        assert_eq!(
            c[3].check,
            TimeCheck::NotFound {
                found_log_offset: -1
            }
        );
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400), base in proptest::num::i64::ANY) {
            let oi = OffsetIndex::new(&bytes, base);
            let ol = oi.layout();
            let _ = (oi.check(), oi.sanity_check());
            proptest::prop_assert_eq!(ol.slots, bytes.len() / 8);
            proptest::prop_assert_eq!(ol.used + ol.tail_slots, ol.slots);
            proptest::prop_assert_eq!(oi.entries().count(), ol.used);
            let ti = TimeIndex::new(&bytes, base);
            let tl = ti.layout();
            let _ = (ti.check(), ti.sanity_check());
            proptest::prop_assert_eq!(ti.entries().count(), tl.used);
            let xi = TxnIndex::new(&bytes, base);
            let _ = (xi.check(), xi.sanity_check());
            proptest::prop_assert_eq!(xi.entries().count() * 34 + xi.trailing_bytes(), bytes.len());
            let lb = LogBatches::from_log(&bytes);
            proptest::prop_assert!(lb.valid_len <= bytes.len() as u64);
            proptest::prop_assert_eq!(check_offset_index(&oi, &lb).len(), ol.used);
            proptest::prop_assert_eq!(check_time_index(&ti, &lb).len(), tl.used);
        }
    }
}
