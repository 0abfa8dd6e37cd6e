//! Big-endian fixed-width reads and Kafka's zigzag varints over `&[u8]`.
//!
//! Fixed reads take an array reference so the bounds check happens once, at the caller.

use super::error::{FormatError, Problem};

#[inline]
pub fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
#[allow(dead_code)]
pub fn be_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
pub fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
#[inline]
pub fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
#[inline]
pub fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// Why [`uvarint_at`] found no varint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UvarintEnd {
    /// The bytes ended after `read` bytes, each with the continuation bit set.
    Truncated { read: usize },
    /// Five bytes with the continuation bit set (more than a u32 holds).
    TooLong,
}

/// Kafka's unsigned varint (`ByteUtils.readUnsignedVarint`: LEB128, at most 5 bytes) at
/// `pos` of `buf`: the value and the bytes it took. The one varint reader of the format
/// layer ([`Cursor::uvarint`] and the schema reader of `format::groups` use it).
#[inline]
pub fn uvarint_at(buf: &[u8], pos: usize) -> Result<(u32, usize), UvarintEnd> {
    let mut value: u32 = 0;
    for i in 0..5 {
        let Some(&b) = buf.get(pos.saturating_add(i)) else {
            return Err(UvarintEnd::Truncated { read: i });
        };
        value |= ((b & 0x7f) as u32) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(UvarintEnd::TooLong)
}

/// A cursor over a byte slice that reads Kafka varints and lengths, reporting errors
/// with the structure name and the position inside the slice (plus `base`).
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    structure: &'static str,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], base: u64, structure: &'static str) -> Self {
        Cursor {
            buf,
            pos: 0,
            base,
            structure,
        }
    }
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }
    #[inline]
    pub fn abs(&self) -> u64 {
        self.base + self.pos as u64
    }
    #[cold]
    #[inline(never)]
    pub fn err(&self, field: &'static str, problem: Problem) -> FormatError {
        FormatError::new(self.structure, field, self.abs(), problem)
    }

    /// Unsigned LEB128 varint, at most 5 bytes (Kafka's `readUnsignedVarint`).
    #[inline]
    pub fn uvarint(&mut self, field: &'static str) -> Result<u32, FormatError> {
        // One-byte values (most record fields) without the loop.
        if let Some(&b) = self.buf.get(self.pos)
            && b & 0x80 == 0
        {
            self.pos += 1;
            return Ok(b as u32);
        }
        // Two-byte values (most record lengths, and key and value lengths of 64 to 8191
        // bytes, zigzag-encoded) without the loop either: `lo`'s high bit is set here.
        if let Some(&[lo, hi]) = self.buf.get(self.pos..self.pos + 2)
            && hi & 0x80 == 0
        {
            self.pos += 2;
            return Ok((lo & 0x7f) as u32 | (hi as u32) << 7);
        }
        self.uvarint_long(field)
    }

    #[inline(never)]
    fn uvarint_long(&mut self, field: &'static str) -> Result<u32, FormatError> {
        match uvarint_at(self.buf, self.pos) {
            Ok((value, n)) => {
                self.pos += n;
                Ok(value)
            }
            Err(UvarintEnd::Truncated { read }) => Err(FormatError::truncated(
                self.structure,
                field,
                self.abs(),
                read as u64 + 1,
                read as u64,
            )),
            Err(UvarintEnd::TooLong) => Err(self.err(field, Problem::VarintTooLong)),
        }
    }

    /// Signed zigzag varint (int32).
    #[inline]
    pub fn varint(&mut self, field: &'static str) -> Result<i32, FormatError> {
        let u = self.uvarint(field)?;
        Ok(((u >> 1) as i32) ^ -((u & 1) as i32))
    }

    /// Signed zigzag varlong (int64), at most 10 bytes.
    #[inline]
    pub fn varlong(&mut self, field: &'static str) -> Result<i64, FormatError> {
        if let Some(&b) = self.buf.get(self.pos)
            && b & 0x80 == 0
        {
            self.pos += 1;
            return Ok(((b >> 1) as i64) ^ -((b & 1) as i64));
        }
        self.varlong_long(field)
    }

    #[inline(never)]
    fn varlong_long(&mut self, field: &'static str) -> Result<i64, FormatError> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos + i) else {
                return Err(FormatError::truncated(
                    self.structure,
                    field,
                    self.abs(),
                    i as u64 + 1,
                    i as u64,
                ));
            };
            value |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        Err(self.err(field, Problem::VarintTooLong))
    }

    #[inline]
    pub fn u8(&mut self, field: &'static str) -> Result<u8, FormatError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| FormatError::truncated(self.structure, field, self.abs(), 1, 0))?;
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    pub fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], FormatError> {
        if self.remaining() < n {
            return Err(FormatError::truncated(
                self.structure,
                field,
                self.abs(),
                n as u64,
                self.remaining() as u64,
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn i16(&mut self, field: &'static str) -> Result<i16, FormatError> {
        self.take(2, field).map(|b| be_i16(b, 0))
    }
    pub fn i32(&mut self, field: &'static str) -> Result<i32, FormatError> {
        self.take(4, field).map(|b| be_i32(b, 0))
    }
    pub fn i64(&mut self, field: &'static str) -> Result<i64, FormatError> {
        self.take(8, field).map(|b| be_i64(b, 0))
    }

    /// A varint length followed by that many bytes; any negative length is null
    /// (Kafka reads every negative key/value length as null).
    #[inline]
    pub fn nullable_bytes(
        &mut self,
        len_field: &'static str,
        field: &'static str,
    ) -> Result<Option<&'a [u8]>, FormatError> {
        let len = self.varint(len_field)?;
        if len < 0 {
            return Ok(None);
        }
        self.take(len as usize, field).map(Some)
    }

    /// A length prefix of Kafka's message schemas: compact (uvarint `length + 1`, 0 for
    /// null) when `flexible`, else int32 when `wide` (bytes, arrays) or int16 (strings).
    /// `None` for null (any negative length).
    pub fn schema_len(
        &mut self,
        flexible: bool,
        wide: bool,
        field: &'static str,
    ) -> Result<Option<usize>, FormatError> {
        let n: i64 = if flexible {
            self.uvarint(field)? as i64 - 1
        } else if wide {
            self.i32(field)? as i64
        } else {
            self.i16(field)? as i64
        };
        Ok(usize::try_from(n).ok())
    }

    /// A nullable schema string (int16 or compact length, see [`Cursor::schema_len`]): its
    /// bytes, borrowed; `None` for null. Callers decide how to decode the UTF-8.
    pub fn schema_string(
        &mut self,
        flexible: bool,
        field: &'static str,
    ) -> Result<Option<&'a [u8]>, FormatError> {
        self.schema_sized(flexible, false, field)
    }

    /// Nullable schema bytes (int32 or compact length): borrowed; `None` for null.
    pub fn schema_bytes(
        &mut self,
        flexible: bool,
        field: &'static str,
    ) -> Result<Option<&'a [u8]>, FormatError> {
        self.schema_sized(flexible, true, field)
    }

    fn schema_sized(
        &mut self,
        flexible: bool,
        wide: bool,
        field: &'static str,
    ) -> Result<Option<&'a [u8]>, FormatError> {
        match self.schema_len(flexible, wide, field)? {
            None => Ok(None),
            Some(n) => self.take(n, field).map(Some),
        }
    }

    /// A schema array's element count (int32 or compact); `None` for null. A count larger
    /// than the bytes left is an error (every element takes at least one byte), so a
    /// crafted count cannot make a caller loop or allocate.
    pub fn schema_array_len(
        &mut self,
        flexible: bool,
        field: &'static str,
    ) -> Result<Option<usize>, FormatError> {
        let Some(n) = self.schema_len(flexible, true, field)? else {
            return Ok(None);
        };
        if n > self.remaining() {
            return Err(self.err(field, Problem::OutOfRange { value: n as i64 }));
        }
        Ok(Some(n))
    }

    /// A tagged-field section (uvarint count, then per field uvarint tag, uvarint size and
    /// the bytes), calling `on` for each `(tag, bytes)`.
    pub fn tagged_fields(&mut self, mut on: impl FnMut(u32, &'a [u8])) -> Result<(), FormatError> {
        let n = self.uvarint("taggedFieldsCount")?;
        for _ in 0..n {
            let tag = self.uvarint("tag")?;
            let size = self.uvarint("tagSize")?;
            on(tag, self.take(size as usize, "taggedField")?);
        }
        Ok(())
    }
}

/// Zigzag-encode and append a varint (used by the testkit and by tests).
pub fn put_varint(out: &mut Vec<u8>, v: i32) {
    put_uvarint(out, ((v << 1) ^ (v >> 31)) as u32);
}

/// Append an unsigned varint.
pub fn put_uvarint(out: &mut Vec<u8>, mut u: u32) {
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

/// Zigzag-encode and append a varlong.
pub fn put_varlong(out: &mut Vec<u8>, v: i64) {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

/// A record's sequence (`DefaultRecord.readFrom`): `base + delta` wrapping past `i32::MAX`
/// to 0, -1 for any negative base (a batch's last sequence differs for negative bases other
/// than -1: `BatchView::last_sequence`).
pub fn increment_sequence(base: i32, delta: i32) -> i32 {
    if base < 0 {
        return -1;
    }
    java_increment_sequence(base, delta)
}

/// `DefaultRecordBatch.incrementSequence` itself, for any base: what
/// `DefaultRecordBatch.lastSequence()` gives for every base but -1 (`NO_SEQUENCE`), other
/// negative bases included (bytes no producer writes, stored under producer id -1, whose
/// sequences the broker does not check).
pub fn java_increment_sequence(base: i32, delta: i32) -> i32 {
    // Java int arithmetic (wrapping), so corrupt deltas give Kafka's value, never a panic.
    if base > i32::MAX.wrapping_sub(delta) {
        delta
            .wrapping_sub(i32::MAX.wrapping_sub(base))
            .wrapping_sub(1)
    } else {
        base.wrapping_add(delta)
    }
}

/// Kafka's `decrementSequence`: the inverse of [`increment_sequence`].
pub fn decrement_sequence(seq: i32, delta: i32) -> i32 {
    if seq < delta {
        i32::MAX
            .wrapping_sub(delta.wrapping_sub(seq))
            .wrapping_add(1)
    } else {
        seq.wrapping_sub(delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_examples_from_the_reference() {
        for (n, enc) in [
            (0i32, vec![0x00u8]),
            (-1, vec![0x01]),
            (1, vec![0x02]),
            (-2, vec![0x03]),
            (63, vec![0x7e]),
            (64, vec![0x80, 0x01]),
            (300, vec![0xd8, 0x04]),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, n);
            assert_eq!(out, enc, "encoding {n}");
            let mut c = Cursor::new(&enc, 0, "test");
            assert_eq!(c.varint("v").unwrap(), n);
            assert_eq!(c.remaining(), 0);
        }
    }

    #[test]
    fn varint_limits() {
        let too_long = [0x80u8, 0x80, 0x80, 0x80, 0x80, 0x01];
        let mut c = Cursor::new(&too_long, 10, "record");
        let e = c.varint("length").unwrap_err();
        assert_eq!(e.problem, Problem::VarintTooLong);
        assert_eq!(e.position, 10);
        let short = [0x80u8];
        let mut c = Cursor::new(&short, 0, "record");
        assert!(matches!(
            c.varint("length").unwrap_err().problem,
            Problem::Truncated { .. }
        ));
        for v in [i64::MIN, -1, 0, 1, i64::MAX, 1 << 40] {
            let mut out = Vec::new();
            put_varlong(&mut out, v);
            assert_eq!(Cursor::new(&out, 0, "t").varlong("v").unwrap(), v);
        }
    }

    #[test]
    fn one_and_two_byte_varints_read_as_the_loop_reads_them() {
        // Every one- and two-byte encoding (non-minimal ones too, which Kafka's reader
        // accepts), followed by a byte or not: the inline paths give the loop's value and
        // length.
        for lo in 0..=255u8 {
            for hi in 0..=255u8 {
                for buf in [&[lo, hi][..], &[lo, hi, 0x01][..]] {
                    let mut c = Cursor::new(buf, 0, "t");
                    match (c.uvarint("v"), uvarint_at(buf, 0)) {
                        (Ok(v), Ok((want, n))) => assert_eq!((v, c.position()), (want, n)),
                        (Err(e), Err(_)) => assert_eq!(e.field, "v"),
                        (got, want) => panic!("{buf:?}: {got:?} against {want:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn schema_strings_compact_and_int16_borrow_the_bytes() {
        // compact "ab", compact null, int16 "xyz", int16 null (-1)
        let buf = [3u8, b'a', b'b', 0, 0, 3, b'x', b'y', b'z', 0xff, 0xff];
        let mut c = Cursor::new(&buf, 100, "record");
        let s = c.schema_string(true, "name").unwrap().unwrap();
        assert_eq!(s, b"ab");
        assert!(std::ptr::eq(s.as_ptr(), buf[1..].as_ptr()));
        assert_eq!(c.schema_string(true, "name").unwrap(), None);
        assert_eq!(c.schema_string(false, "host").unwrap(), Some(&b"xyz"[..]));
        assert_eq!(c.schema_string(false, "host").unwrap(), None);
        assert_eq!(c.remaining(), 0);
        // a length past the end names the field and the position after the prefix
        let short = [0u8, 9, b'a'];
        let e = Cursor::new(&short, 100, "record")
            .schema_string(false, "topic")
            .unwrap_err();
        assert_eq!((e.structure, e.field, e.position), ("record", "topic", 102));
        assert!(matches!(e.problem, Problem::Truncated { .. }));
    }

    #[test]
    fn schema_bytes_and_array_counts() {
        let buf = [0u8, 0, 0, 2, 7, 8, 0xff, 0xff, 0xff, 0xff];
        let mut c = Cursor::new(&buf, 0, "t");
        assert_eq!(c.schema_bytes(false, "b").unwrap(), Some(&[7u8, 8][..]));
        assert_eq!(c.schema_bytes(false, "b").unwrap(), None);
        // int32 count 2 with 2 bytes left is accepted, 3 is not; compact 0 is null
        let ok = [0u8, 0, 0, 2, 1, 1];
        assert_eq!(
            Cursor::new(&ok, 0, "t")
                .schema_array_len(false, "n")
                .unwrap(),
            Some(2)
        );
        let bad = [0u8, 0, 0, 3, 1, 1];
        let e = Cursor::new(&bad, 50, "t")
            .schema_array_len(false, "n")
            .unwrap_err();
        assert_eq!((e.field, e.position), ("n", 54));
        assert_eq!(e.problem, Problem::OutOfRange { value: 3 });
        assert_eq!(
            Cursor::new(&[0u8], 0, "t")
                .schema_array_len(true, "n")
                .unwrap(),
            None
        );
    }

    #[test]
    fn tagged_fields_and_the_shared_uvarint() {
        // two tagged fields: tag 3 = [9], tag 300 = [] ; then one byte of something else
        let buf = [2u8, 3, 1, 9, 0xac, 0x02, 0, 0x55];
        let mut c = Cursor::new(&buf, 0, "t");
        let mut seen = Vec::new();
        c.tagged_fields(|t, b| seen.push((t, b.to_vec()))).unwrap();
        assert_eq!(seen, vec![(3, vec![9]), (300, vec![])]);
        assert_eq!(c.rest(), &[0x55]);
        // a size past the end is an error naming the tagged field
        let e = Cursor::new(&[1u8, 0, 5, 1], 0, "t")
            .tagged_fields(|_, _| {})
            .unwrap_err();
        assert_eq!(e.field, "taggedField");
        assert_eq!(uvarint_at(&[0xac, 0x02], 0), Ok((300, 2)));
        assert_eq!(
            uvarint_at(&[0x80, 0x80], 0),
            Err(UvarintEnd::Truncated { read: 2 })
        );
        assert_eq!(uvarint_at(&[0xff; 6], 1), Err(UvarintEnd::TooLong));
        assert_eq!(
            uvarint_at(&[], usize::MAX),
            Err(UvarintEnd::Truncated { read: 0 })
        );
    }

    #[test]
    fn sequence_wraps_to_zero() {
        assert_eq!(increment_sequence(i32::MAX, 1), 0);
        assert_eq!(increment_sequence(5, 3), 8);
        assert_eq!(increment_sequence(-1, 3), -1);
        assert_eq!(decrement_sequence(0, 1), i32::MAX);
        assert_eq!(decrement_sequence(8, 3), 5);
    }
}
