//! Log-entry framing (common to every magic) and the zero-copy v2 record-batch header view.
//!
//! Kafka's classes: `FileLogInputStream` (framing: offset i64 + size i32 + the entry),
//! `DefaultRecordBatch` (the v2 header and its CRC-32C), `LegacyRecord` (magic 0/1).

use super::bytes::{be_i16, be_i32, be_i64, be_u32, java_increment_sequence};
use super::error::{FormatError, Problem};

/// `offset(8) + size(4)`: bytes before the `size` counted region.
pub const LOG_OVERHEAD: usize = 12;
/// Bytes up to and including the magic byte.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// Size of the v2 batch header.
pub const V2_HEADER_SIZE: usize = 61;
/// Smallest legal `size` of any entry (a v0 message).
pub const MIN_MESSAGE_SIZE: i32 = 14;

/// Compression codec (attribute bits 0–2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
    /// Codec ids 5–7: Kafka throws "Unknown compression type id".
    Unknown(u8),
}

impl Compression {
    pub fn from_id(id: u8) -> Self {
        match id & 0x07 {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            n => Compression::Unknown(n),
        }
    }
    /// The name kafka-dump-log prints (`compresscodec:`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
            Compression::Unknown(_) => "unknown",
        }
    }
}

/// Timestamp type (attribute bit 3; magic 0 has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum TimestampType {
    NoTimestampType,
    CreateTime,
    LogAppendTime,
}

impl TimestampType {
    /// The name kafka-dump-log prints before the timestamp.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::NoTimestampType => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// One framed entry of a `.log` file: a v2 batch or a legacy (v0/v1) message,
/// exactly `12 + size` bytes. Nothing inside has been validated yet except the frame.
#[derive(Debug, Clone, Copy)]
pub struct RawEntry<'a> {
    /// Byte position of the entry in the file (or slice plus base).
    pub position: u64,
    /// The whole entry, `12 + size` bytes.
    pub bytes: &'a [u8],
}

impl<'a> RawEntry<'a> {
    /// The first 8 bytes: v2 base offset, or legacy (last) offset.
    pub fn offset(&self) -> i64 {
        be_i64(self.bytes, 0)
    }
    /// The `size` field.
    pub fn size_field(&self) -> i32 {
        be_i32(self.bytes, 8)
    }
    /// Total entry size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    pub fn magic(&self) -> i8 {
        self.bytes[16] as i8
    }
    /// A v2 view when the magic is ≥ 2 (Kafka hands magic > 2 to the v2 code, where it
    /// fails the CRC). Fails when the entry is shorter than the 61-byte v2 header.
    pub fn as_v2(&self) -> Result<BatchView<'a>, FormatError> {
        BatchView::new(self.bytes, self.position)
    }
}

/// How a walk over a `.log` file ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Tail {
    /// The last entry ended exactly at the end of the data.
    Clean,
    /// A partial entry: a plausible header whose entry runs past the end (a crash while
    /// appending). `declared` is the entry's full length, `available` what is present.
    Partial {
        position: u64,
        declared: u64,
        available: u64,
        /// The entry's offset field (its first 8 bytes are always present: a partial
        /// entry has at least its 12-byte header). For v2, the batch's base offset.
        offset: i64,
    },
    /// Only zero bytes from `position` to the end (a preallocated segment after a crash).
    ZeroFilled { position: u64, len: u64 },
    /// Bytes from `position` to the end that do not frame as an entry.
    Garbage {
        position: u64,
        len: u64,
        reason: Unframed,
    },
    /// A plausible entry header (offset ≥ 0, magic 0–2) whose size field is impossible: below
    /// the 14-byte minimum, or running past the end of the largest possible segment. The
    /// walk cannot continue past a corrupt length; `len` counts the bytes from `position` on.
    CorruptEntry {
        position: u64,
        len: u64,
        size: i32,
        reason: Unframed,
    },
}

/// Why the bytes a walk stopped at do not frame as an entry: the `reason` of a
/// [`Tail::Garbage`] or a [`Tail::CorruptEntry`]. Typed, so that a reader decides on it
/// (an entry whose size field is below the 14-byte minimum is one
/// `FileLogInputStream.nextBatch` throws `CorruptRecordException` at, when 18 bytes or more
/// are left); shown and serialized as its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Unframed {
    /// The size field is below the 14-byte minimum (`LegacyRecord.RECORD_OVERHEAD_V0`).
    #[serde(rename = "entry size below the 14-byte minimum")]
    SizeBelowMinimum,
    /// The magic byte is not 0, 1 or 2.
    #[serde(rename = "magic byte is not 0, 1 or 2")]
    UnknownMagic,
    /// The offset is negative (and the entry is not one recovery keeps below zero).
    #[serde(rename = "negative offset")]
    NegativeOffset,
    /// Fewer bytes than an entry header up to its magic byte, not zeros nor a partial entry.
    #[serde(rename = "fragment shorter than an entry header")]
    ShortFragment,
    /// The size field runs past the largest possible segment (2^31 − 1 bytes).
    #[serde(rename = "entry size runs past the largest possible segment")]
    SizePastLargestSegment,
}

impl Unframed {
    /// The reason in words (as shown and serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Unframed::SizeBelowMinimum => "entry size below the 14-byte minimum",
            Unframed::UnknownMagic => "magic byte is not 0, 1 or 2",
            Unframed::NegativeOffset => "negative offset",
            Unframed::ShortFragment => "fragment shorter than an entry header",
            Unframed::SizePastLargestSegment => "entry size runs past the largest possible segment",
        }
    }
}

impl std::fmt::Display for Unframed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Tail {
    /// Byte position where a broker's recovery would truncate this file, if anywhere.
    pub fn truncation_position(&self) -> Option<u64> {
        match *self {
            Tail::Clean => None,
            Tail::Partial { position, .. }
            | Tail::ZeroFilled { position, .. }
            | Tail::Garbage { position, .. }
            | Tail::CorruptEntry { position, .. } => Some(position),
        }
    }
}

/// Walks the entries of a `.log` file image as `FileLogInputStream.nextBatch` does, but never
/// throws: the iterator yields whole entries and then stops; [`Entries::tail`] says how
/// the data ended.
///
/// Differences from the broker, on purpose: an entry whose magic is not 0, 1 or 2, or
/// whose offset is negative, stops the walk and is classified as garbage; this keeps a
/// corrupt length from producing a cascade of nonsense entries. (The broker would fail the
/// CRC of such bytes.) Exceptions, where the broker's CRC holds: an entry whose magic is
/// outside 0–2 is an entry when the CRC of the reader `FileLogInputStream.nextBatch`
/// picks for it holds (`kept_unknown_magic`: the v2 CRC does not cover the magic byte).
/// An entry whose CRC holds and whose last offset is negative fails
/// `LogSegment.recover`'s offset range check instead — `LogSegmentOffsetOverflowException`,
/// a split of the segment — which is not modelled here.) One exception: a v2 batch at a negative base
/// offset whose CRC holds and whose last offset is not negative is an entry, as the broker
/// takes it — neither the CRC nor `FileLogInputStream.nextBatch` covers the offset's sign,
/// and `LogSegment.recover` range-checks only the batch's last offset, so recovery keeps it.
/// (Its offsets then lie within 2^31 below zero: no arithmetic on them overflows.)
#[derive(Debug, Clone)]
pub struct Entries<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    tail: Option<Tail>,
    more_follows: bool,
    need_more: Option<u64>,
}

impl<'a> Entries<'a> {
    /// Walk `data`, reporting positions as `base + index`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Entries {
            data,
            pos: 0,
            base,
            tail: None,
            more_follows: false,
            need_more: None,
        }
    }

    /// Walk a chunk of a larger file: when an entry (or its header) continues past the end
    /// of `data`, the walk stops without a tail and [`Entries::need_more`] gives the
    /// position to continue from once more bytes are available.
    pub fn chunk(data: &'a [u8], base: u64) -> Self {
        Entries {
            more_follows: true,
            ..Self::new(data, base)
        }
    }

    /// For a chunk walk: the position of an entry that did not fit in the chunk.
    pub fn need_more(&self) -> Option<u64> {
        self.need_more
    }
    /// Position (relative to `base`) of the next entry.
    pub fn offset_in_data(&self) -> usize {
        self.pos
    }
    /// How the data ended. `None` until the iterator has returned `None`.
    pub fn tail(&self) -> Option<Tail> {
        self.tail
    }

    fn finish(&mut self, tail: Tail) -> Option<RawEntry<'a>> {
        self.tail = Some(tail);
        self.pos = self.data.len();
        None
    }

    fn classify_rest(&self, reason: Unframed) -> Tail {
        let rest = &self.data[self.pos..];
        let position = self.base + self.pos as u64;
        if rest.iter().all(|&b| b == 0) {
            Tail::ZeroFilled {
                position,
                len: rest.len() as u64,
            }
        } else {
            Tail::Garbage {
                position,
                len: rest.len() as u64,
                reason,
            }
        }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = RawEntry<'a>;

    fn next(&mut self) -> Option<RawEntry<'a>> {
        if self.tail.is_some() || self.need_more.is_some() {
            return None;
        }
        let remaining = self.data.len() - self.pos;
        if remaining == 0 {
            return self.finish(Tail::Clean);
        }
        let position = self.base + self.pos as u64;
        if self.more_follows && remaining <= HEADER_SIZE_UP_TO_MAGIC {
            self.need_more = Some(position);
            self.pos = self.data.len();
            return None;
        }
        if remaining <= HEADER_SIZE_UP_TO_MAGIC {
            // The broker stops silently here; for us it is a fragment.
            let rest = &self.data[self.pos..];
            if rest.iter().all(|&b| b == 0) {
                return self.finish(Tail::ZeroFilled {
                    position,
                    len: remaining as u64,
                });
            }
            // A fragment is a partial entry if its size field (when present) is plausible.
            if remaining >= LOG_OVERHEAD {
                let size = be_i32(rest, 8);
                if size >= MIN_MESSAGE_SIZE && be_i64(rest, 0) >= 0 {
                    return self.finish(Tail::Partial {
                        position,
                        declared: LOG_OVERHEAD as u64 + size as u64,
                        available: remaining as u64,
                        offset: be_i64(rest, 0),
                    });
                }
            }
            return self.finish(Tail::Garbage {
                position,
                len: remaining as u64,
                reason: Unframed::ShortFragment,
            });
        }
        let head = &self.data[self.pos..];
        let offset = be_i64(head, 0);
        let size = be_i32(head, 8);
        let magic = head[16] as i8;
        if size < MIN_MESSAGE_SIZE {
            let mut t = self.classify_rest(Unframed::SizeBelowMinimum);
            if let Tail::Garbage { len, reason, .. } = t
                && (0..=2).contains(&magic)
                && offset >= 0
                && head[..HEADER_SIZE_UP_TO_MAGIC].iter().any(|&b| b != 0)
            {
                t = Tail::CorruptEntry {
                    position,
                    len,
                    size,
                    reason,
                };
            }
            return self.finish(t);
        }
        let total = LOG_OVERHEAD + size as usize;
        // A chunk walk asks for the rest of an entry cut by its chunk before judging it.
        let judged = total <= remaining || !self.more_follows;
        if !(0..=2).contains(&magic)
            && judged
            && !(total <= remaining && kept_unknown_magic(&head[..total], magic))
        {
            let t = self.classify_rest(Unframed::UnknownMagic);
            return self.finish(t);
        }
        if offset < 0 && judged && !(total <= remaining && kept_below_zero(&head[..total], magic)) {
            let t = self.classify_rest(Unframed::NegativeOffset);
            return self.finish(t);
        }
        // No segment reaches past 2^31 − 1 bytes: such a size is a corrupt length field,
        // not a batch cut short by a crash.
        if position.saturating_add(total as u64) > i32::MAX as u64 {
            return self.finish(Tail::CorruptEntry {
                position,
                len: remaining as u64,
                size,
                reason: Unframed::SizePastLargestSegment,
            });
        }
        if total > remaining && self.more_follows {
            self.need_more = Some(position);
            self.pos = self.data.len();
            return None;
        }
        if total > remaining {
            return self.finish(Tail::Partial {
                position,
                declared: total as u64,
                available: remaining as u64,
                offset: be_i64(head, 0),
            });
        }
        let bytes = &head[..total];
        self.pos += total;
        Some(RawEntry { position, bytes })
    }
}

/// Whether `entry`, a whole entry whose magic is not 0, 1 or 2, is one `LogSegment.recover`
/// keeps. `FileLogInputStream.nextBatch` checks no magic: below 2 (negative too) it hands
/// the entry to the legacy reader, whose `LegacyRecord.ensureValid` checks the size and
/// the CRC-32 stored before the magic, computed from the magic on; from 2 up to the v2
/// reader, whose `DefaultRecordBatch.ensureValid` checks the CRC-32C from the attributes on
/// (the magic byte is outside it: a flipped bit there leaves the CRC holding). Recovery
/// keeps such an entry when that reader's CRC holds; a reader fails on it (the client's
/// `ByteBufferLogInputStream` refuses a magic outside 0–2: the walk reports it).
fn kept_unknown_magic(entry: &[u8], magic: i8) -> bool {
    if magic > 2 {
        entry.len() >= V2_HEADER_SIZE
            && be_i32(entry, 17) as u32 == crate::crc::crc32c(&entry[21..])
    } else {
        entry.len() > 16 && be_i32(entry, 12) as u32 == crc32fast::hash(&entry[16..])
    }
}

/// Whether `entry`, a whole entry of the given magic at a negative offset, is one
/// `LogSegment.recover` keeps: a v2 batch whose CRC (crc32c from the attributes on, which
/// does not cover the offset) holds and whose last offset (`baseOffset + lastOffsetDelta`)
/// is not negative — recovery range-checks that last offset only (`ensureOffsetInRange`).
/// A legacy entry's offset is its last offset, so a negative one fails that check
/// (`LogSegmentOffsetOverflowException`), as does a v2 batch ending below zero.
fn kept_below_zero(entry: &[u8], magic: i8) -> bool {
    magic >= 2
        && entry.len() >= V2_HEADER_SIZE
        && be_i64(entry, 0).saturating_add(i64::from(be_i32(entry, 23))) >= 0
        && be_i32(entry, 17) as u32 == crate::crc::crc32c(&entry[21..])
}

/// A zero-copy view of a v2 record batch. Construction checks only that the 61-byte
/// header is present; every accessor is then infallible.
#[derive(Debug, Clone, Copy)]
pub struct BatchView<'a> {
    bytes: &'a [u8],
    /// The first [`V2_HEADER_SIZE`] bytes of `bytes`: the header's fields are read at
    /// fixed offsets of an array, with no bounds check per field.
    head: &'a [u8; V2_HEADER_SIZE],
    position: u64,
}

impl<'a> BatchView<'a> {
    /// A view over `bytes`, which must be the whole entry (`12 + batchLength` bytes).
    /// If `bytes` is longer, the view is cut to the declared length when it fits.
    pub fn new(bytes: &'a [u8], position: u64) -> Result<Self, FormatError> {
        let Some(head) = bytes.first_chunk::<V2_HEADER_SIZE>() else {
            return Err(FormatError::truncated(
                "record batch",
                "header",
                position,
                V2_HEADER_SIZE as u64,
                bytes.len() as u64,
            ));
        };
        let declared = be_i32(head, 8);
        if declared < (V2_HEADER_SIZE - LOG_OVERHEAD) as i32 {
            return Err(FormatError::new(
                "record batch",
                "batchLength",
                position + 8,
                Problem::OutOfRange {
                    value: declared as i64,
                },
            ));
        }
        let total = LOG_OVERHEAD + declared as usize;
        if total > bytes.len() {
            return Err(FormatError::truncated(
                "record batch",
                "batchLength",
                position + 8,
                total as u64,
                bytes.len() as u64,
            ));
        }
        Ok(BatchView {
            bytes: &bytes[..total],
            head,
            position,
        })
    }

    /// The whole batch bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// Byte position of the batch in its file.
    pub fn position(&self) -> u64 {
        self.position
    }
    /// Size on disk, `12 + batchLength`.
    pub fn size(&self) -> usize {
        self.bytes.len()
    }
    pub fn base_offset(&self) -> i64 {
        be_i64(self.head, 0)
    }
    pub fn batch_length(&self) -> i32 {
        be_i32(self.head, 8)
    }
    pub fn partition_leader_epoch(&self) -> i32 {
        be_i32(self.head, 12)
    }
    pub fn magic(&self) -> i8 {
        self.head[16] as i8
    }
    /// The stored CRC-32C.
    pub fn crc(&self) -> u32 {
        be_u32(self.head, 17)
    }
    /// The full 16-bit attributes field (Kafka only uses the low byte).
    pub fn attributes(&self) -> i16 {
        be_i16(self.head, 21)
    }
    fn attr(&self) -> u8 {
        self.head[22]
    }
    pub fn compression(&self) -> Compression {
        Compression::from_id(self.attr())
    }
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attr() & 0x08 != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }
    pub fn is_transactional(&self) -> bool {
        self.attr() & 0x10 != 0
    }
    pub fn is_control(&self) -> bool {
        self.attr() & 0x20 != 0
    }
    /// Bit 6: baseTimestamp holds the delete horizon (the batch went through the cleaner).
    pub fn has_delete_horizon(&self) -> bool {
        self.attr() & 0x40 != 0
    }
    /// The delete horizon, when bit 6 is set.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.has_delete_horizon().then(|| self.base_timestamp())
    }
    /// Attribute bits Kafka never sets (7–15).
    pub fn unused_attribute_bits(&self) -> u16 {
        (self.attributes() as u16) & 0xff80
    }
    pub fn last_offset_delta(&self) -> i32 {
        be_i32(self.head, 23)
    }
    pub fn base_timestamp(&self) -> i64 {
        be_i64(self.head, 27)
    }
    pub fn max_timestamp(&self) -> i64 {
        be_i64(self.head, 35)
    }
    pub fn producer_id(&self) -> i64 {
        be_i64(self.head, 43)
    }
    pub fn producer_epoch(&self) -> i16 {
        be_i16(self.head, 51)
    }
    pub fn base_sequence(&self) -> i32 {
        be_i32(self.head, 53)
    }
    pub fn records_count(&self) -> i32 {
        be_i32(self.head, 57)
    }
    /// `baseOffset + lastOffsetDelta`, saturated at the i64 range (a crafted header can
    /// overflow it: see [`BatchView::checked_last_offset`]; never a wrapped number).
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .saturating_add(self.last_offset_delta() as i64)
    }
    /// `baseOffset + lastOffsetDelta`, `None` when it overflows i64 (or the next offset
    /// would: the log end offset must be representable).
    pub fn checked_last_offset(&self) -> Option<i64> {
        let last = self
            .base_offset()
            .checked_add(self.last_offset_delta() as i64)?;
        last.checked_add(1).map(|_| last)
    }
    pub fn next_offset(&self) -> i64 {
        self.last_offset().saturating_add(1)
    }
    /// Last sequence with Kafka's wrap-around (`DefaultRecordBatch.lastSequence`): -1 for a
    /// base sequence of -1 (`NO_SEQUENCE`) only; any other base, other negative ones too
    /// (bytes no producer writes), goes through the wrap-around arithmetic, as the load's
    /// `ProducerAppendInfo` takes it. A record's own sequence is -1 for every negative base
    /// ([`crate::bytes::increment_sequence`], as `DefaultRecord.readFrom`).
    pub fn last_sequence(&self) -> i32 {
        match self.base_sequence() {
            -1 => -1,
            base => java_increment_sequence(base, self.last_offset_delta()),
        }
    }
    pub fn has_producer_id(&self) -> bool {
        self.producer_id() > -1
    }
    /// The records section, compressed or not (bytes 61..end).
    pub fn records_bytes(&self) -> &'a [u8] {
        &self.bytes[V2_HEADER_SIZE..]
    }
    /// CRC-32C over bytes 21..end.
    pub fn compute_crc(&self) -> u32 {
        crate::crc::crc32c(&self.bytes[21..])
    }
    /// Kafka's `isValid`: the header is complete (guaranteed by construction) and the CRC matches.
    pub fn is_valid(&self) -> bool {
        self.compute_crc() == self.crc()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tail's reason is shown and serialized as the same words (reports, `dump`'s JSON
    /// summary and findings' evidence print them), and read back as the same reason.
    #[test]
    fn an_unframed_reason_is_its_words() {
        for r in [
            Unframed::SizeBelowMinimum,
            Unframed::UnknownMagic,
            Unframed::NegativeOffset,
            Unframed::ShortFragment,
            Unframed::SizePastLargestSegment,
        ] {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{r}\""));
            assert_eq!(serde_json::from_str::<Unframed>(&json).unwrap(), r);
        }
        let mut e = Entries::new(&[0xff; 30], 0);
        assert!(e.next().is_none());
        let json = serde_json::to_value(e.tail()).unwrap();
        assert_eq!(json["reason"], "entry size below the 14-byte minimum");
    }

    #[test]
    fn tail_classification() {
        // empty
        let mut e = Entries::new(&[], 0);
        assert!(e.next().is_none());
        assert_eq!(e.tail(), Some(Tail::Clean));
        // zeros
        let z = [0u8; 100];
        let mut e = Entries::new(&z, 1000);
        assert!(e.next().is_none());
        assert_eq!(
            e.tail(),
            Some(Tail::ZeroFilled {
                position: 1000,
                len: 100
            })
        );
        // partial: offset 5, size 100, magic 2, but only 40 bytes
        let mut p = vec![0u8; 40];
        p[..8].copy_from_slice(&5i64.to_be_bytes());
        p[8..12].copy_from_slice(&100i32.to_be_bytes());
        p[16] = 2;
        let mut e = Entries::new(&p, 0);
        assert!(e.next().is_none());
        assert_eq!(
            e.tail(),
            Some(Tail::Partial {
                position: 0,
                declared: 112,
                available: 40,
                offset: 5
            })
        );
        // garbage
        let g = [0xffu8; 30];
        let mut e = Entries::new(&g, 0);
        assert!(e.next().is_none());
        assert!(matches!(
            e.tail(),
            Some(Tail::Garbage {
                position: 0,
                len: 30,
                ..
            })
        ));
    }

    /// An entry of `magic` at `offset` with `body` after its 17-byte header, its CRC set
    /// (`crc_ok`) or off by one.
    fn entry(offset: i64, magic: u8, body: &[u8], crc_ok: bool) -> Vec<u8> {
        let mut e = offset.to_be_bytes().to_vec();
        e.extend_from_slice(&((5 + body.len()) as i32).to_be_bytes());
        e.extend_from_slice(&[0; 4]);
        e.push(magic);
        e.extend_from_slice(body);
        let v2 = magic as i8 >= 2;
        let crc = match v2 {
            true => crate::crc::crc32c(&e[21..]),
            false => crc32fast::hash(&e[16..]),
        };
        let crc = if crc_ok { crc } else { crc ^ 1 };
        match v2 {
            true => e[17..21].copy_from_slice(&crc.to_be_bytes()),
            false => e[12..16].copy_from_slice(&crc.to_be_bytes()),
        }
        e
    }

    /// `FileLogInputStream.nextBatch` checks no magic: above 1 the entry goes to the v2
    /// reader (whose CRC-32C starts after the magic byte), below 2 — negative too — to the
    /// legacy one (whose CRC-32 starts at it). Recovery keeps an entry whose reader's CRC
    /// holds, so the walk yields it (the scan reports it: consumers refuse the magic).
    /// Twins stay garbage: the same entries under a CRC that fails, and a magic-3 entry
    /// checked as legacy (its CRC-32 set, not its CRC-32C).
    #[test]
    fn an_unknown_magic_is_an_entry_when_its_readers_crc_holds() {
        let v2_body = {
            let mut b = vec![0u8; 6];
            b.extend_from_slice(&0i32.to_be_bytes());
            b.resize(60, 7);
            b
        };
        for (magic, body) in [
            (3u8, &v2_body[..]),
            (0x82, &[7u8; 60][..]),
            (0xff, &[9u8; 20][..]),
        ] {
            let mut data = entry(10, magic, body, true);
            data.extend(entry(11, 2, &v2_body, true));
            let mut e = Entries::new(&data, 0);
            let first = e.next().expect("kept");
            assert_eq!(first.magic(), magic as i8);
            assert!(e.next().is_some(), "the walk goes on after it");
            assert!(e.next().is_none());
            assert_eq!(e.tail(), Some(Tail::Clean), "magic {magic}");
            // Cut by a chunk: the rest is asked for before it is judged.
            let mut c = Entries::chunk(&data[..30], 0);
            assert!(c.next().is_none());
            assert_eq!(c.need_more(), Some(0), "magic {magic}");
        }
        let mut legacy_crc_on_v3 = entry(10, 1, &v2_body, true);
        legacy_crc_on_v3[16] = 3;
        let crc = crc32fast::hash(&legacy_crc_on_v3[16..]);
        legacy_crc_on_v3[12..16].copy_from_slice(&crc.to_be_bytes());
        for (what, bad) in [
            ("magic 3, bad CRC-32C", entry(10, 3, &v2_body, false)),
            ("magic -126, bad CRC-32", entry(10, 0x82, &[7u8; 60], false)),
            ("magic 3 under a legacy CRC", legacy_crc_on_v3),
        ] {
            let mut e = Entries::new(&bad, 0);
            assert!(e.next().is_none(), "{what}");
            assert!(
                matches!(
                    e.tail(),
                    Some(Tail::Garbage {
                        position: 0,
                        reason: Unframed::UnknownMagic,
                        ..
                    })
                ),
                "{what}: {:?}",
                e.tail()
            );
        }
    }

    /// `FileLogInputStream.nextBatch` frames an entry whatever its offset's sign, the CRC
    /// does not cover the offset, and recovery range-checks the last offset only: a v2
    /// batch at base offset −1 ending at 2 under a CRC that holds is an entry. Twins stay
    /// garbage, as before: its CRC off by one; a batch ending below zero; a legacy entry at
    /// −1 (its offset is its last).
    #[test]
    fn a_negative_base_offset_is_an_entry_when_recovery_keeps_it() {
        // attributes and lastOffsetDelta (bytes 21..27 of the entry), then the rest.
        let body = |delta: i32| {
            let mut b = vec![0u8; 6];
            b.extend_from_slice(&delta.to_be_bytes());
            b.resize(60, 7);
            b
        };
        let mut data = entry(-1, 2, &body(3), true);
        data.extend(entry(3, 2, &body(0), true));
        let mut e = Entries::new(&data, 0);
        assert_eq!(e.by_ref().count(), 2);
        assert_eq!(e.tail(), Some(Tail::Clean));
        // A chunk cut inside it asks for the rest rather than judging it.
        let mut c = Entries::chunk(&data[..40], 0);
        assert!(c.next().is_none());
        assert_eq!(c.need_more(), Some(0));
        for (what, bad) in [
            ("bad CRC", entry(-1, 2, &body(3), false)),
            ("ends below zero", entry(-5, 2, &body(3), true)),
            ("legacy v0", entry(-1, 0, &[7u8; 60], true)),
            ("legacy v1", entry(-1, 1, &[7u8; 60], true)),
        ] {
            let mut e = Entries::new(&bad, 0);
            assert!(e.next().is_none(), "{what}");
            assert!(
                matches!(
                    e.tail(),
                    Some(Tail::Garbage {
                        position: 0,
                        reason: Unframed::NegativeOffset,
                        ..
                    })
                ),
                "{what}: {:?}",
                e.tail()
            );
        }
    }
}
