//! Big-endian fixed-width reads and Kafka's zigzag varints over `&[u8]`.
//!
//! Fixed reads take an array reference so the bounds check happens once, at the caller.

use super::error::{FormatError, Problem};

#[inline]
pub(crate) fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
#[allow(dead_code)]
pub(crate) fn be_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
pub(crate) fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
#[inline]
pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
#[inline]
pub(crate) fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().unwrap())
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
        self.uvarint_long(field)
    }

    #[inline(never)]
    fn uvarint_long(&mut self, field: &'static str) -> Result<u32, FormatError> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let Some(&b) = self.buf.get(self.pos + i) else {
                return Err(FormatError::truncated(
                    self.structure,
                    field,
                    self.abs(),
                    i as u64 + 1,
                    i as u64,
                ));
            };
            value |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(value);
            }
        }
        Err(self.err(field, Problem::VarintTooLong))
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

/// Kafka's sequence arithmetic: `base + delta` wrapping past `i32::MAX` to 0.
/// A base of -1 (no sequence) stays -1.
pub fn increment_sequence(base: i32, delta: i32) -> i32 {
    if base < 0 {
        return -1;
    }
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
    fn sequence_wraps_to_zero() {
        assert_eq!(increment_sequence(i32::MAX, 1), 0);
        assert_eq!(increment_sequence(5, 3), 8);
        assert_eq!(increment_sequence(-1, 3), -1);
        assert_eq!(decrement_sequence(0, 1), i32::MAX);
        assert_eq!(decrement_sequence(8, 3), 5);
    }
}
