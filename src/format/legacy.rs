//! Legacy message format, magic 0 and magic 1 (`kafka-format.md` §4).
//!
//! OWNER: legacy helper (wrapper decompression and inner iteration pending).

use super::batch::{Compression, RawEntry, TimestampType};
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
        let magic = b[16];
        if magic > 1 {
            return Err(FormatError::new(
                "legacy message",
                "magic",
                pos + 16,
                Problem::OutOfRange {
                    value: magic as i64,
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
        let (value, end) = field(b, value_at, pos, "valueLength", "value")?;
        if end != b.len() {
            return Err(FormatError::new(
                "legacy message",
                "size",
                pos + 8,
                Problem::Mismatch {
                    expected: (end - 12) as i64,
                    found: (b.len() - 12) as i64,
                },
            ));
        }
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
    /// Effective timestamp (§4.6: a LogAppendTime wrapper imposes its own).
    pub timestamp: i64,
    pub timestamp_type: TimestampType,
}

/// Iterator over the messages of a legacy entry (fallible: yields one `Err` then ends).
pub struct InnerMessages<'d> {
    _todo: std::marker::PhantomData<&'d ()>,
}

impl<'d> Iterator for InnerMessages<'d> {
    type Item = Result<InnerMessage<'d>, FormatError>;
    fn next(&mut self) -> Option<Self::Item> {
        None
    }
}

impl<'a> LegacyMessage<'a> {
    /// The messages of this entry, decompressing a wrapper into `dec`.
    pub fn inner_messages<'d>(
        &self,
        dec: &'d mut super::codec::Decompressor,
    ) -> Result<InnerMessages<'d>, FormatError>
    where
        'a: 'd,
    {
        let _ = dec;
        Ok(InnerMessages {
            _todo: std::marker::PhantomData,
        })
    }
}
