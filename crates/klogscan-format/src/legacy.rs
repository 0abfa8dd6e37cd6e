//! Legacy message format, magic 0 and magic 1 (`LegacyRecord`, `AbstractLegacyRecordBatch`).
//!
//! OWNER: legacy helper (wrapper decompression and inner iteration pending).

use super::batch::{Compression, LOG_OVERHEAD, MIN_MESSAGE_SIZE, RawEntry, TimestampType};
use super::bytes::{be_i32, be_i64, be_u32};
use super::error::{FormatError, Problem};

/// A zero-copy view of one legacy message entry (`offset(8) size(4) crc(4) magic(1) …`).
#[derive(Debug, Clone, Copy)]
pub struct LegacyMessage<'a> {
    bytes: &'a [u8],
    position: u64,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
}

impl<'a> LegacyMessage<'a> {
    /// Parse the message fields of a framed legacy entry.
    pub fn new(entry: RawEntry<'a>) -> Result<Self, FormatError> {
        let b = entry.bytes;
        let pos = entry.position;
        let magic = b[16] as i8;
        if !(0..=1).contains(&magic) {
            return Err(FormatError::new(
                "legacy message",
                "magic",
                pos + 16,
                Problem::OutOfRange {
                    value: i64::from(magic),
                },
            ));
        }
        let key_at = if magic == 0 { 18 } else { 26 };
        if b.len() < key_at + 4 {
            return Err(FormatError::truncated(
                "legacy message",
                "keyLength",
                pos,
                (key_at + 4) as u64,
                b.len() as u64,
            ));
        }
        let (key, value_at) = field(b, key_at, pos, "keyLength", "key")?;
        if b.len() < value_at + 4 {
            return Err(FormatError::truncated(
                "legacy message",
                "valueLength",
                pos + value_at as u64,
                4,
                (b.len() - value_at) as u64,
            ));
        }
        // Bytes after the value (covered by the CRC) are no error: `LegacyRecord.key` and
        // `value` read each field by its own length (`Utils.sizeDelimited`) within the
        // entry, and `LegacyRecord.ensureValid` checks only the size (at least 14) and the
        // CRC (`SimpleLegacyRecordTest.testIsValidWithTooSmallBuffer`,
        // `testIsValidWithChecksumMismatch`): every reader takes the message and ignores them.
        let (value, _end) = field(b, value_at, pos, "valueLength", "value")?;
        Ok(LegacyMessage {
            bytes: b,
            position: pos,
            key,
            value,
        })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    pub fn position(&self) -> u64 {
        self.position
    }
    /// The entry's offset: for a compressed wrapper, the offset of its last inner message.
    pub fn offset(&self) -> i64 {
        be_i64(self.bytes, 0)
    }
    pub fn size(&self) -> usize {
        self.bytes.len()
    }
    pub fn crc(&self) -> u32 {
        be_u32(self.bytes, 12)
    }
    pub fn magic(&self) -> u8 {
        self.bytes[16]
    }
    pub fn attributes(&self) -> u8 {
        self.bytes[17]
    }
    pub fn compression(&self) -> Compression {
        Compression::from_id(self.attributes())
    }
    pub fn timestamp_type(&self) -> TimestampType {
        if self.magic() == 0 {
            TimestampType::NoTimestampType
        } else if self.attributes() & 0x08 != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }
    /// The timestamp (magic 1), or -1 (magic 0).
    pub fn timestamp(&self) -> i64 {
        if self.magic() == 0 {
            -1
        } else {
            be_i64(self.bytes, 18)
        }
    }
    pub fn key(&self) -> Option<&'a [u8]> {
        self.key
    }
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }
    /// CRC-32 (IEEE) over magic..end.
    pub fn compute_crc(&self) -> u32 {
        crc32fast::hash(&self.bytes[16..])
    }
    pub fn is_valid(&self) -> bool {
        self.compute_crc() == self.crc()
    }
}

fn field<'a>(
    b: &'a [u8],
    at: usize,
    pos: u64,
    len_field: &'static str,
    field: &'static str,
) -> Result<(Option<&'a [u8]>, usize), FormatError> {
    let len = be_i32(b, at);
    let start = at + 4;
    if len < 0 {
        return Ok((None, start));
    }
    let end = start + len as usize;
    if end > b.len() {
        return Err(FormatError::truncated(
            "legacy message",
            field,
            pos + start as u64,
            len as u64,
            (b.len() - start) as u64,
        ))
        .map_err(|e| FormatError {
            field: if field == "key" { len_field } else { field },
            ..e
        });
    }
    Ok((Some(&b[start..end]), end))
}

/// One message of a legacy entry: an inner message of a compressed wrapper, or the entry
/// itself when it is not compressed.
#[derive(Debug, Clone, Copy)]
pub struct InnerMessage<'a> {
    /// The message (for inner messages, positions are inside the decompressed set).
    pub message: LegacyMessage<'a>,
    /// Absolute offset (magic 0: as stored; magic 1: wrapper offset − last relative + relative).
    pub offset: i64,
    /// Effective timestamp (a LogAppendTime wrapper imposes its own on its inner messages,
    /// as `AbstractLegacyRecordBatch.DeepRecordsIterator` does).
    pub timestamp: i64,
    pub timestamp_type: TimestampType,
}

/// Iterator over the messages of a legacy entry (fallible: yields one `Err` then ends).
///
/// Built by [`LegacyMessage::inner_messages`]. For a compressed wrapper the inner framing
/// has already been walked once (to find the last relative offset), so framing errors are
/// reported by `inner_messages` itself; the iterator reports per-message errors (a message
/// that does not parse, nested compression).
pub struct InnerMessages<'d> {
    state: State<'d>,
}

enum State<'d> {
    Single(Option<InnerMessage<'d>>),
    Wrapper(WrapperWalk<'d>),
    Done,
}

struct WrapperWalk<'d> {
    /// The decompressed message set.
    data: &'d [u8],
    /// Position of the next inner entry in `data`.
    pos: usize,
    /// Inner entries left to yield (counted by the pre-walk).
    left: u32,
    /// Added to a magic 1 inner (relative) offset; `None` for magic 0 (absolute).
    base: Option<i64>,
    /// Wrapper magic.
    magic: u8,
    /// The wrapper timestamp when it is imposed (LogAppendTime wrapper, magic 1).
    imposed: Option<i64>,
    wrapper_type: TimestampType,
}

impl<'d> InnerMessages<'d> {
    /// The number of messages the iterator yields when no error occurs.
    pub fn len_hint(&self) -> u32 {
        match &self.state {
            State::Single(Some(_)) => 1,
            State::Wrapper(w) => w.left,
            _ => 0,
        }
    }
}

impl<'d> Iterator for InnerMessages<'d> {
    type Item = Result<InnerMessage<'d>, FormatError>;
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.state {
            State::Single(m) => {
                let m = m.take();
                self.state = State::Done;
                m.map(Ok)
            }
            State::Done => None,
            State::Wrapper(w) => {
                if w.left == 0 {
                    self.state = State::Done;
                    return None;
                }
                match w.next_message() {
                    Ok(m) => Some(Ok(m)),
                    Err(e) => {
                        self.state = State::Done;
                        Some(Err(e))
                    }
                }
            }
        }
    }
}

impl<'d> WrapperWalk<'d> {
    fn next_message(&mut self) -> Result<InnerMessage<'d>, FormatError> {
        // The pre-walk checked the framing of `left` entries from here.
        let size = be_i32(self.data, self.pos + 8) as usize;
        let total = LOG_OVERHEAD + size;
        let entry = RawEntry {
            position: self.pos as u64,
            bytes: &self.data[self.pos..self.pos + total],
        };
        self.pos += total;
        self.left -= 1;
        let message = LegacyMessage::new(entry)?;
        if message.compression() != Compression::None {
            return Err(FormatError::new(
                "legacy inner message",
                "attributes",
                entry.position + 17,
                Problem::Invalid("inner messages must not be compressed"),
            ));
        }
        let stored = message.offset();
        let offset = match self.base {
            Some(base) => base.wrapping_add(stored),
            None => stored,
        };
        let (timestamp, timestamp_type) = if message.magic() == 0 {
            (-1, TimestampType::NoTimestampType)
        } else if self.magic == 0 {
            (message.timestamp(), TimestampType::NoTimestampType)
        } else {
            (
                self.imposed.unwrap_or(message.timestamp()),
                self.wrapper_type,
            )
        };
        Ok(InnerMessage {
            message,
            offset,
            timestamp,
            timestamp_type,
        })
    }
}

/// The absolute offsets of an entry's first and last message, and how many it holds.
pub type OffsetRange = (i64, i64, u32);

/// What a walk over the inner framing found.
struct InnerFraming {
    count: u32,
    first: i64,
    last: i64,
    /// The first inner entry whose offset is not above the previous one's: (position in
    /// the decompressed set, previous offset, its offset).
    not_increasing: Option<(usize, i64, i64)>,
}

/// Walk the inner entries of a decompressed wrapper value: sizes < 14 are errors, an
/// incomplete trailing entry is ignored (as Kafka does), zero entries is an error.
fn walk_inner(data: &[u8]) -> Result<InnerFraming, FormatError> {
    const S: &str = "legacy inner message";
    let mut pos = 0usize;
    let mut count = 0u32;
    let (mut first, mut last) = (0i64, 0i64);
    let mut not_increasing = None;
    while data.len() - pos >= LOG_OVERHEAD {
        let size = be_i32(data, pos + 8);
        if size < MIN_MESSAGE_SIZE {
            return Err(FormatError::new(
                S,
                "size",
                (pos + 8) as u64,
                Problem::OutOfRange { value: size as i64 },
            ));
        }
        let total = LOG_OVERHEAD + size as usize;
        if total > data.len() - pos {
            // Incomplete trailing inner entry: ignored silently, as Kafka does.
            break;
        }
        let offset = be_i64(data, pos);
        if count == 0 {
            first = offset;
        } else if offset <= last && not_increasing.is_none() {
            not_increasing = Some((pos, last, offset));
        }
        last = offset;
        count = count.saturating_add(1);
        pos += total;
    }
    if count == 0 {
        return Err(FormatError::new(
            S,
            "value",
            0,
            Problem::Invalid("compressed wrapper holds no inner messages"),
        ));
    }
    Ok(InnerFraming {
        count,
        first,
        last,
        not_increasing,
    })
}

impl<'a> LegacyMessage<'a> {
    /// Position of the value inside the entry (valid when the value is present).
    fn value_at(&self) -> u64 {
        let len = self.value.map_or(0, |v| v.len());
        self.position + (self.bytes.len() - len) as u64
    }

    /// Decompress a wrapper's value and walk its framing. Errors from the codec carry
    /// file positions (value position + position in the compressed value); framing errors
    /// carry positions inside the decompressed set.
    fn open_wrapper<'d>(
        &self,
        dec: &'d mut super::codec::Decompressor,
    ) -> Result<(&'d [u8], InnerFraming), FormatError> {
        let codec = self.compression();
        if let Compression::Unknown(id) = codec {
            return Err(FormatError::new(
                "legacy message",
                "attributes",
                self.position + 17,
                Problem::OutOfRange { value: id as i64 },
            ));
        }
        if codec == Compression::Zstd {
            return Err(FormatError::new(
                "legacy message",
                "attributes",
                self.position + 17,
                Problem::Invalid("zstd compression is not allowed for magic < 2"),
            ));
        }
        let Some(value) = self.value else {
            return Err(FormatError::new(
                "legacy message",
                "value",
                self.value_at(),
                Problem::Invalid("compressed wrapper has a null value"),
            ));
        };
        let data = dec
            .decompress(codec, value, self.magic() == 0)
            .map_err(|e| e.at(self.value_at()))?;
        let framing = walk_inner(data)?;
        Ok((data, framing))
    }

    /// The base added to magic 1 relative inner offsets (the wrapper's offset is the last
    /// inner's absolute offset: `DeepRecordsIterator`), or `None` for magic 0.
    fn relative_base(&self, last_inner: i64) -> Result<Option<i64>, FormatError> {
        if self.magic() == 0 {
            return Ok(None);
        }
        let wrapper = self.offset();
        if wrapper == 0 {
            // Certain librdkafka versions produce wrapper offset 0; Kafka uses base 0.
            return Ok(Some(0));
        }
        if wrapper < last_inner {
            return Err(FormatError::new(
                "legacy message",
                "offset",
                self.position,
                Problem::Invalid(
                    "wrapper offset is less than the last inner relative offset and not zero",
                ),
            ));
        }
        Ok(Some(wrapper.wrapping_sub(last_inner)))
    }

    /// The messages of this entry, decompressing a wrapper into `dec`.
    ///
    /// An uncompressed entry yields itself once. A compressed wrapper is decompressed
    /// (codec from the attributes; LZ4 header checksum relaxed for magic 0) and its inner
    /// messages are yielded with absolute offsets and effective timestamps (`DeepRecordsIterator`).
    /// Errors here: unknown codec, zstd wrapper, null value, codec errors, inner framing
    /// errors (size < 14, no inner message), a wrapper offset below the last inner
    /// relative offset. Per-message errors come from the iterator.
    pub fn inner_messages<'d>(
        &self,
        dec: &'d mut super::codec::Decompressor,
    ) -> Result<InnerMessages<'d>, FormatError>
    where
        'a: 'd,
    {
        if self.compression() == Compression::None {
            return Ok(InnerMessages {
                state: State::Single(Some(InnerMessage {
                    message: *self,
                    offset: self.offset(),
                    timestamp: self.timestamp(),
                    timestamp_type: self.timestamp_type(),
                })),
            });
        }
        let (data, framing) = self.open_wrapper(dec)?;
        let base = self.relative_base(framing.last)?;
        Ok(self.wrapper_walk(data, &framing, base))
    }

    /// The iterator over a wrapper's decompressed inner messages `data`.
    fn wrapper_walk<'d>(
        &self,
        data: &'d [u8],
        framing: &InnerFraming,
        base: Option<i64>,
    ) -> InnerMessages<'d> {
        let wrapper_type = self.timestamp_type();
        let imposed = (self.magic() == 1 && wrapper_type == TimestampType::LogAppendTime)
            .then(|| self.timestamp());
        InnerMessages {
            state: State::Wrapper(WrapperWalk {
                data,
                pos: 0,
                left: framing.count,
                base,
                magic: self.magic(),
                imposed,
                wrapper_type,
            }),
        }
    }

    /// [`LegacyMessage::checked_offset_range`] and [`LegacyMessage::inner_messages`] from
    /// one decompression of the wrapper (what `--deep` reads of a legacy entry).
    pub fn checked_inner_messages<'d>(
        &self,
        dec: &'d mut super::codec::Decompressor,
    ) -> Result<(OffsetRange, InnerMessages<'d>), FormatError>
    where
        'a: 'd,
    {
        if self.compression() == Compression::None {
            let o = self.offset();
            return Ok(((o, o, 1), self.inner_messages(dec)?));
        }
        let (data, framing) = self.open_wrapper(dec)?;
        let (base, range) = self.checked_range(&framing)?;
        Ok((range, self.wrapper_walk(data, &framing, base)))
    }

    /// A wrapper's absolute offset range from its inner framing, refusing inner offsets
    /// that do not strictly increase; with the base its relative offsets take.
    fn checked_range(
        &self,
        framing: &InnerFraming,
    ) -> Result<(Option<i64>, OffsetRange), FormatError> {
        if let Some((pos, prev, offset)) = framing.not_increasing {
            return Err(FormatError::new(
                "legacy inner message",
                "offset",
                pos as u64,
                Problem::Invalid(if offset == prev {
                    "inner offset repeats the previous inner offset"
                } else {
                    "inner offset is below the previous inner offset"
                }),
            ));
        }
        let base = self.relative_base(framing.last)?;
        let range = match base {
            None => (framing.first, framing.last, framing.count),
            Some(b) => (
                b.wrapping_add(framing.first),
                b.wrapping_add(framing.last),
                framing.count,
            ),
        };
        Ok((base, range))
    }

    /// The absolute offsets of the first and last message of this entry and the number of
    /// messages, without iterating them (an uncompressed entry: its own offset, count 1).
    ///
    /// For a wrapper this decompresses into `dec` and walks the inner framing only.
    pub fn offset_range(
        &self,
        dec: &mut super::codec::Decompressor,
    ) -> Result<(i64, i64, u32), FormatError> {
        if self.compression() == Compression::None {
            return Ok((self.offset(), self.offset(), 1));
        }
        let (_, framing) = self.open_wrapper(dec)?;
        match self.relative_base(framing.last)? {
            None => Ok((framing.first, framing.last, framing.count)),
            Some(base) => Ok((
                base.wrapping_add(framing.first),
                base.wrapping_add(framing.last),
                framing.count,
            )),
        }
    }

    /// [`LegacyMessage::offset_range`], and an error when the inner offsets of a wrapper
    /// do not strictly increase (`0, 0, 0`): a broker assigns consecutive offsets to the
    /// inner messages on append (`LogValidator`, in-place or reassigned), so a stored
    /// wrapper never repeats one; consumers would see several records at one offset. The
    /// error's position is inside the decompressed message set.
    pub fn checked_offset_range(
        &self,
        dec: &mut super::codec::Decompressor,
    ) -> Result<(i64, i64, u32), FormatError> {
        if self.compression() != Compression::None {
            let (_, framing) = self.open_wrapper(dec)?;
            return Ok(self.checked_range(&framing)?.1);
        }
        self.offset_range(dec)
    }
}
