//! Records inside a v2 batch (`DefaultRecord.readFrom`), iterated zero-copy over the
//! uncompressed records section.

use super::bytes::Cursor;
use super::error::{FormatError, Problem};

/// One v2 record, borrowing from the records section.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Position of the record's length varint inside the records section.
    pub position: u32,
    /// The record body length (the first varint).
    pub length: i32,
    pub attributes: u8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers_count: i32,
    /// The encoded headers, parsed lazily by [`Record::headers`].
    pub headers_bytes: &'a [u8],
    headers_base: u64,
}

impl<'a> Record<'a> {
    /// Size of the key, or -1 for a null key (what kafka-dump-log prints as `keySize`).
    pub fn key_size(&self) -> i32 {
        self.key.map_or(-1, |k| k.len() as i32)
    }
    /// Size of the value, or -1 for a null value.
    pub fn value_size(&self) -> i32 {
        self.value.map_or(-1, |v| v.len() as i32)
    }
    /// The record's headers.
    pub fn headers(&self) -> Headers<'a> {
        Headers {
            cur: Cursor::new(self.headers_bytes, self.headers_base, "record header"),
            left: self.headers_count.max(0) as u32,
        }
    }
}

/// A record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    pub key: &'a [u8],
    pub value: Option<&'a [u8]>,
}

/// Iterator over a record's headers (already validated when the record was read).
#[derive(Debug, Clone)]
pub struct Headers<'a> {
    cur: Cursor<'a>,
    left: u32,
}

impl<'a> Iterator for Headers<'a> {
    type Item = Header<'a>;
    fn next(&mut self) -> Option<Header<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Validated by `read_header` when the record was parsed.
        let klen = self.cur.varint("headerKeyLength").ok()?;
        let key = self.cur.take(klen.max(0) as usize, "headerKey").ok()?;
        let value = self
            .cur
            .nullable_bytes("headerValueLength", "headerValue")
            .ok()?;
        Some(Header { key, value })
    }
}

fn read_header(cur: &mut Cursor<'_>) -> Result<(), FormatError> {
    // A refused value is named at its field's first byte, not after it.
    let at = cur.abs();
    let klen = cur.varint("headerKeyLength")?;
    if klen < 0 {
        return Err(FormatError::new(
            "record",
            "headerKeyLength",
            at,
            Problem::OutOfRange { value: klen as i64 },
        ));
    }
    cur.take(klen as usize, "headerKey")?;
    cur.nullable_bytes("headerValueLength", "headerValue")?;
    Ok(())
}

/// The problem of a batch whose record count is 0 over records bytes (no reader reads
/// them: `DefaultRecordBatch.iterator` returns no record for a count of 0).
pub const COUNT_0_OVER_BYTES: &str =
    "records count 0 over records bytes: Kafka's record iterators read none of them";

/// Reads exactly `count` records from an uncompressed records section, then checks that
/// nothing is left over ("Incorrect declared batch size, records still remaining"). A count
/// of 0 reads nothing; bytes after the header are then refused in words of their own
/// (Kafka's iterators read none of them: `DefaultRecordBatch.iterator`).
///
/// The iterator is fallible: it yields `Err` once and then ends.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    cur: Cursor<'a>,
    left: i32,
    done: bool,
}

impl<'a> Records<'a> {
    /// `data` is the uncompressed records section; `count` the batch's recordsCount.
    /// Errors carry positions inside `data` plus `base`.
    pub fn new(data: &'a [u8], count: i32, base: u64) -> Self {
        Records {
            cur: Cursor::new(data, base, "record"),
            left: count,
            done: false,
        }
    }

    #[inline]
    fn read(&mut self) -> Result<Record<'a>, FormatError> {
        let position = self.cur.position() as u32;
        let length_at = self.cur.abs();
        let length = self.cur.varint("length")?;
        if length < 0 || length as usize > self.cur.remaining() {
            return Err(FormatError::new(
                "record",
                "length",
                length_at,
                Problem::Invalid("invalid record size"),
            ));
        }
        let body_start = self.cur.position();
        let attributes = self.cur.u8("attributes")?;
        let timestamp_delta = self.cur.varlong("timestampDelta")?;
        let offset_delta = self.cur.varint("offsetDelta")?;
        let key = self.cur.nullable_bytes("keyLength", "key")?;
        let value = self.cur.nullable_bytes("valueLength", "value")?;
        let count_at = self.cur.abs();
        let headers_count = self.cur.varint("headersCount")?;
        if headers_count < 0 || headers_count as usize > self.cur.remaining() {
            return Err(FormatError::new(
                "record",
                "headersCount",
                count_at,
                Problem::OutOfRange {
                    value: headers_count as i64,
                },
            ));
        }
        let headers_base = self.cur.abs();
        let headers_start = self.cur.position();
        let all = self.cur.clone();
        for _ in 0..headers_count {
            read_header(&mut self.cur)?;
        }
        let headers_bytes = &all.rest()[..self.cur.position() - headers_start];
        let consumed = self.cur.position() - body_start;
        if consumed != length as usize {
            return Err(FormatError::new(
                "record",
                "length",
                self.cur.abs(),
                Problem::Mismatch {
                    expected: length as i64,
                    found: consumed as i64,
                },
            ));
        }
        Ok(Record {
            position,
            length,
            attributes,
            timestamp_delta,
            offset_delta,
            key,
            value,
            headers_count,
            headers_bytes,
            headers_base,
        })
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, FormatError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.left < 0 {
            self.done = true;
            return Some(Err(self.cur.err(
                "recordsCount",
                Problem::OutOfRange {
                    value: self.left as i64,
                },
            )));
        }
        if self.left == 0 {
            self.done = true;
            if self.cur.remaining() != 0 && self.cur.position() == 0 {
                // A count of 0 over records bytes: Kafka's iterators return no record and
                // check nothing (`DefaultRecordBatch.iterator` returns an empty iterator;
                // `RecordIterator` checks the leftovers only after its last declared
                // record), so a reader sees none of these bytes; no Kafka writer leaves
                // them (the cleaner's empty batch is the bare header, and the leader
                // refuses a count of 0, `LogValidator.validateBatch`).
                return Some(Err(self
                    .cur
                    .err("recordsCount", Problem::Invalid(COUNT_0_OVER_BYTES))));
            }
            if self.cur.remaining() != 0 {
                return Some(Err(self.cur.err(
                    "recordsCount",
                    Problem::Invalid("incorrect declared batch size, records still remaining"),
                )));
            }
            return None;
        }
        self.left -= 1;
        match self.read() {
            Ok(r) => Some(Ok(r)),
            Err(mut e) => {
                self.done = true;
                if let Problem::Truncated { .. } = e.problem {
                    e.problem =
                        Problem::Invalid("incorrect declared batch size, premature EOF reached");
                }
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::{put_varint, put_varlong};

    fn rec(
        out: &mut Vec<u8>,
        ts: i64,
        od: i32,
        key: Option<&[u8]>,
        val: Option<&[u8]>,
        hdrs: &[(&[u8], Option<&[u8]>)],
    ) {
        let mut body = vec![0u8];
        put_varlong(&mut body, ts);
        put_varint(&mut body, od);
        for f in [key, val] {
            match f {
                None => put_varint(&mut body, -1),
                Some(b) => {
                    put_varint(&mut body, b.len() as i32);
                    body.extend_from_slice(b);
                }
            }
        }
        put_varint(&mut body, hdrs.len() as i32);
        for (k, v) in hdrs {
            put_varint(&mut body, k.len() as i32);
            body.extend_from_slice(k);
            match v {
                None => put_varint(&mut body, -1),
                Some(b) => {
                    put_varint(&mut body, b.len() as i32);
                    body.extend_from_slice(b);
                }
            }
        }
        put_varint(out, body.len() as i32);
        out.extend_from_slice(&body);
    }

    #[test]
    fn reads_records_and_headers() {
        let mut data = Vec::new();
        rec(
            &mut data,
            0,
            0,
            Some(b"k"),
            Some(b"v1"),
            &[(b"h1", Some(b"x")), (b"h2", None)],
        );
        rec(&mut data, 5, 1, None, None, &[]);
        let rs: Vec<_> = Records::new(&data, 2, 0).collect::<Result<_, _>>().unwrap();
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[0].key, Some(&b"k"[..]));
        let h: Vec<_> = rs[0].headers().collect();
        assert_eq!(
            h,
            vec![
                Header {
                    key: b"h1",
                    value: Some(b"x")
                },
                Header {
                    key: b"h2",
                    value: None
                }
            ]
        );
        assert_eq!(rs[1].key_size(), -1);
        assert_eq!(rs[1].offset_delta, 1);
        // count too high → premature EOF; too low → leftover
        assert!(Records::new(&data, 3, 0).any(|r| r.is_err()));
        assert!(Records::new(&data, 1, 0).any(|r| r.is_err()));
    }
}
