//! gzip payloads as Java's `GZIPInputStream` reads them: members one after another, each
//! header checked (RFC 1952), its deflate stream inflated, its CRC-32 and ISIZE verified;
//! bytes after a complete member that do not start another are ignored.

use super::{Decompressor, le_u32, window};
use crate::error::{FormatError, Problem};

impl Decompressor {
    pub(super) fn gzip(&mut self, input: &[u8]) -> Result<usize, FormatError> {
        const S: &str = "gzip stream";
        let limit = self.limit;
        let inflate = self
            .inflate
            .get_or_insert_with(|| flate2::Decompress::new(false));
        let out = &mut self.out;
        let mut pos = gzip_header(input, 0)?;
        let mut filled = 0usize;
        loop {
            inflate.reset(false);
            let member_start = filled;
            // Inflate one member.
            loop {
                let at_cap = filled >= limit;
                let mut probe = [0u8; 1];
                let dst: &mut [u8] = if at_cap {
                    &mut probe
                } else {
                    window(out, filled, limit)
                };
                let (in0, out0) = (inflate.total_in(), inflate.total_out());
                let status = inflate
                    .decompress(&input[pos..], dst, flate2::FlushDecompress::None)
                    .map_err(|_| {
                        FormatError::new(
                            S,
                            "deflate data",
                            pos as u64,
                            Problem::Invalid("corrupt deflate data"),
                        )
                    })?;
                let consumed = (inflate.total_in() - in0) as usize;
                let produced = (inflate.total_out() - out0) as usize;
                pos += consumed;
                if at_cap && produced > 0 {
                    return Err(FormatError::new(
                        S,
                        "deflate data",
                        pos as u64,
                        Problem::TooLarge {
                            limit: limit as u64,
                        },
                    ));
                }
                filled += produced;
                if status == flate2::Status::StreamEnd {
                    break;
                }
                if consumed == 0 && produced == 0 {
                    if pos >= input.len() {
                        return Err(FormatError::new(
                            S,
                            "deflate data",
                            pos as u64,
                            Problem::Invalid("gzip member ends before its deflate stream"),
                        ));
                    }
                    return Err(FormatError::new(
                        S,
                        "deflate data",
                        pos as u64,
                        Problem::Invalid("deflate stream makes no progress"),
                    ));
                }
            }
            // Trailer: CRC-32 and ISIZE, both little-endian.
            if input.len() - pos < 8 {
                return Err(FormatError::truncated(
                    S,
                    "trailer",
                    pos as u64,
                    8,
                    (input.len() - pos) as u64,
                ));
            }
            let stored_crc = le_u32(input, pos);
            let computed = crc32fast::hash(&out[member_start..filled]);
            if stored_crc != computed {
                return Err(FormatError::new(
                    S,
                    "crc32",
                    pos as u64,
                    Problem::Checksum {
                        stored: stored_crc,
                        computed,
                    },
                ));
            }
            let isize = le_u32(input, pos + 4);
            let actual = (filled - member_start) as u32;
            if isize != actual {
                return Err(FormatError::new(
                    S,
                    "isize",
                    (pos + 4) as u64,
                    Problem::Mismatch {
                        expected: actual as i64,
                        found: isize as i64,
                    },
                ));
            }
            pos += 8;
            // Another member, if what follows reads as a gzip header; anything else is
            // ignored, as GZIPInputStream does.
            if pos >= input.len() {
                break;
            }
            match gzip_header(input, pos) {
                Ok(p) => pos = p,
                Err(_) => break,
            }
        }
        Ok(filled)
    }
}

/// Parse a gzip member header (RFC 1952) at `at`; return the position after it.
fn gzip_header(input: &[u8], at: usize) -> Result<usize, FormatError> {
    const S: &str = "gzip stream";
    let rest = input.len() - at;
    if rest < 10 {
        return Err(FormatError::truncated(
            S,
            "header",
            at as u64,
            10,
            rest as u64,
        ));
    }
    let h = &input[at..];
    if h[0] != 0x1f || h[1] != 0x8b {
        return Err(FormatError::new(
            S,
            "magic",
            at as u64,
            Problem::Mismatch {
                expected: 0x1f8b,
                found: ((h[0] as i64) << 8) | h[1] as i64,
            },
        ));
    }
    if h[2] != 8 {
        return Err(FormatError::new(
            S,
            "compressionMethod",
            (at + 2) as u64,
            Problem::OutOfRange { value: h[2] as i64 },
        ));
    }
    let flags = h[3];
    let mut p = 10usize;
    if flags & 0x04 != 0 {
        if h.len() - p < 2 {
            return Err(FormatError::truncated(
                S,
                "extraLength",
                (at + p) as u64,
                2,
                (h.len() - p) as u64,
            ));
        }
        let xlen = u16::from_le_bytes([h[p], h[p + 1]]) as usize;
        p += 2;
        if h.len() - p < xlen {
            return Err(FormatError::truncated(
                S,
                "extra",
                (at + p) as u64,
                xlen as u64,
                (h.len() - p) as u64,
            ));
        }
        p += xlen;
    }
    for (bit, field) in [(0x08u8, "name"), (0x10u8, "comment")] {
        if flags & bit != 0 {
            match h[p..].iter().position(|&b| b == 0) {
                Some(n) => p += n + 1,
                None => {
                    return Err(FormatError::new(
                        S,
                        field,
                        (at + p) as u64,
                        Problem::Invalid("unterminated gzip header string"),
                    ));
                }
            }
        }
    }
    if flags & 0x02 != 0 {
        if h.len() - p < 2 {
            return Err(FormatError::truncated(
                S,
                "headerCrc",
                (at + p) as u64,
                2,
                (h.len() - p) as u64,
            ));
        }
        let stored = u16::from_le_bytes([h[p], h[p + 1]]) as u32;
        let computed = crc32fast::hash(&h[..p]) & 0xFFFF;
        if stored != computed {
            return Err(FormatError::new(
                S,
                "headerCrc",
                (at + p) as u64,
                Problem::Checksum { stored, computed },
            ));
        }
        p += 2;
    }
    Ok(at + p)
}
