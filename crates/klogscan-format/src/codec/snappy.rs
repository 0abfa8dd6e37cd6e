//! snappy payloads: the xerial snappy-java framing (a header, then length-prefixed raw
//! blocks; concatenated streams joined by a repeated header), or one raw snappy block when
//! the xerial magic is absent, as librdkafka writes it.

use super::{Decompressor, XERIAL_MAGIC, ensure_len};
use crate::error::{FormatError, Problem};

impl Decompressor {
    pub(super) fn snappy(&mut self, input: &[u8]) -> Result<usize, FormatError> {
        if input.len() >= 16 && input[..8] == XERIAL_MAGIC {
            return self.xerial(input);
        }
        if input.is_empty() {
            return Err(FormatError::truncated("snappy block", "length", 0, 1, 0));
        }
        self.snappy_block(input, 0, 0, "snappy block")
    }

    /// Decode one raw snappy block found at `at` in the input, appending at `filled`.
    fn snappy_block(
        &mut self,
        block: &[u8],
        at: usize,
        filled: usize,
        structure: &'static str,
    ) -> Result<usize, FormatError> {
        let len = snap::raw::decompress_len(block).map_err(|_| {
            FormatError::new(
                structure,
                "uncompressedLength",
                at as u64,
                Problem::Invalid("bad snappy length varint"),
            )
        })?;
        if len > self.limit - filled {
            return Err(self.too_large(structure, "uncompressedLength", at));
        }
        // No snappy element expands more than 64/3 times (a 3-byte copy of 64 bytes): a
        // larger declared length is corrupt, and must not make us allocate it.
        if len > block.len().saturating_mul(22) {
            return Err(FormatError::new(
                structure,
                "uncompressedLength",
                at as u64,
                Problem::Invalid("declared length exceeds what the snappy block can expand to"),
            ));
        }
        ensure_len(&mut self.out, filled + len, self.limit);
        let n = self
            .snappy
            .decompress(block, &mut self.out[filled..filled + len])
            .map_err(|_| {
                FormatError::new(
                    structure,
                    "block",
                    at as u64,
                    Problem::Invalid("corrupt snappy block"),
                )
            })?;
        if n != len {
            return Err(FormatError::new(
                structure,
                "block",
                at as u64,
                Problem::Mismatch {
                    expected: len as i64,
                    found: n as i64,
                },
            ));
        }
        Ok(filled + len)
    }

    fn xerial(&mut self, input: &[u8]) -> Result<usize, FormatError> {
        // The first header is known by its magic alone (`SnappyInputStream.readHeader`
        // checks no version there; the caller saw the magic and 16 bytes).
        let mut pos = 16;
        let mut filled = 0usize;
        loop {
            let rest = input.len() - pos;
            if rest == 0 {
                break;
            }
            if rest < 4 {
                // snappy-java ends the stream when fewer than 4 bytes remain.
                break;
            }
            if input[pos..pos + 4] == XERIAL_MAGIC[..4] {
                // A joined stream's header (`SnappyInputStream.hasNextChunk`): cut short
                // it fails, with the whole magic its version is checked, without it the
                // stream ends there (Kafka's reader then finds the records it has).
                match joined_header(input, pos)? {
                    Some(next) => pos = next,
                    None => break,
                }
                continue;
            }
            let len = crate::bytes::be_i32(input, pos);
            if len < 0 {
                return Err(FormatError::new(
                    "xerial snappy chunk",
                    "compressedLength",
                    pos as u64,
                    Problem::OutOfRange { value: len as i64 },
                ));
            }
            let len = len as usize;
            let start = pos + 4;
            if len > input.len() - start {
                return Err(FormatError::truncated(
                    "xerial snappy chunk",
                    "block",
                    start as u64,
                    len as u64,
                    (input.len() - start) as u64,
                ));
            }
            filled = self.snappy_block(
                &input[start..start + len],
                start,
                filled,
                "xerial snappy chunk",
            )?;
            pos = start + len;
        }
        Ok(filled)
    }
}

/// Parse the header of a joined xerial stream at `at` (its first four bytes are the
/// magic's): the position after it, or `None` when the rest of the magic differs (snappy-java
/// 1.1.10 `hasNextChunk` then reports no further chunk).
fn joined_header(input: &[u8], at: usize) -> Result<Option<usize>, FormatError> {
    const S: &str = "xerial snappy stream";
    let rest = input.len() - at;
    if rest < 16 {
        return Err(FormatError::truncated(
            S,
            "header",
            at as u64,
            16,
            rest as u64,
        ));
    }
    if input[at..at + 8] != XERIAL_MAGIC {
        return Ok(None);
    }
    let version = crate::bytes::be_i32(input, at + 8);
    if version < 1 {
        return Err(FormatError::new(
            S,
            "version",
            (at + 8) as u64,
            Problem::OutOfRange {
                value: version as i64,
            },
        ));
    }
    Ok(Some(at + 16))
}
