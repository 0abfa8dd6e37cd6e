//! LZ4 payloads as Kafka's own frame reader (`Lz4BlockInputStream`) reads them: one
//! frame, its header checksum skipped for magic 0 data (KAFKA-3160), block checksums
//! verified, the content checksum read but not verified.

use super::{Decompressor, LZ4_FRAME_MAGIC, ensure_len, le_u32};
use crate::error::{FormatError, Problem};

impl Decompressor {
    pub(super) fn lz4(&mut self, input: &[u8], legacy: bool) -> Result<usize, FormatError> {
        const S: &str = LZ4_FRAME;
        let Lz4Frame {
            block_checksum,
            content_checksum,
            max_block,
            mut pos,
        } = lz4_frame_header(input, legacy)?;
        let mut filled = 0usize;
        loop {
            if input.len() - pos < 4 {
                return Err(FormatError::truncated(
                    S,
                    "blockSize",
                    pos as u64,
                    4,
                    (input.len() - pos) as u64,
                ));
            }
            let raw = le_u32(input, pos);
            let size_at = pos;
            pos += 4;
            if raw == 0 {
                // End mark; the content checksum is read but not verified (as Kafka).
                if content_checksum && input.len() - pos < 4 {
                    return Err(FormatError::truncated(
                        S,
                        "contentChecksum",
                        pos as u64,
                        4,
                        (input.len() - pos) as u64,
                    ));
                }
                break;
            }
            let stored_raw = raw & 0x8000_0000 != 0;
            let size = (raw & 0x7FFF_FFFF) as usize;
            if size > max_block {
                return Err(FormatError::new(
                    S,
                    "blockSize",
                    size_at as u64,
                    Problem::OutOfRange { value: size as i64 },
                ));
            }
            if input.len() - pos < size {
                return Err(FormatError::truncated(
                    S,
                    "block",
                    pos as u64,
                    size as u64,
                    (input.len() - pos) as u64,
                ));
            }
            let block = &input[pos..pos + size];
            if block_checksum {
                let at = pos + size;
                if input.len() - at < 4 {
                    return Err(FormatError::truncated(
                        S,
                        "blockChecksum",
                        at as u64,
                        4,
                        (input.len() - at) as u64,
                    ));
                }
                let stored = le_u32(input, at);
                let computed = xxhash32(block, 0);
                if stored != computed {
                    return Err(FormatError::new(
                        S,
                        "blockChecksum",
                        at as u64,
                        Problem::Checksum { stored, computed },
                    ));
                }
            }
            if stored_raw {
                if size > self.limit - filled {
                    return Err(self.too_large(S, "block", pos));
                }
                ensure_len(&mut self.out, filled + size, self.limit);
                self.out[filled..filled + size].copy_from_slice(block);
                filled += size;
            } else {
                let room = self.limit - filled;
                let avail = max_block.min(room);
                ensure_len(&mut self.out, filled + avail, self.limit);
                match lz4_block(block, &mut self.out[filled..filled + avail]) {
                    Ok(n) => filled += n,
                    Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                        if avail < max_block =>
                    {
                        return Err(self.too_large(S, "block", pos));
                    }
                    Err(_) => {
                        return Err(FormatError::new(
                            S,
                            "block",
                            pos as u64,
                            Problem::Invalid("corrupt lz4 block"),
                        ));
                    }
                }
            }
            pos += size + if block_checksum { 4 } else { 0 };
        }
        Ok(filled)
    }
}

/// The name of the LZ4 frame structure in errors.
const LZ4_FRAME: &str = "lz4 frame";

/// What an LZ4 frame's header says about its blocks.
struct Lz4Frame {
    block_checksum: bool,
    content_checksum: bool,
    max_block: usize,
    /// The position of the first block's size.
    pos: usize,
}

/// Check an LZ4 frame's header (magic, FLG, BD, optional content size, header checksum —
/// skipped for Kafka's pre-0.10 `legacy` framing, whose checksum covers the magic too).
fn lz4_frame_header(input: &[u8], legacy: bool) -> Result<Lz4Frame, FormatError> {
    const S: &str = LZ4_FRAME;
    if input.len() < 7 {
        return Err(FormatError::truncated(
            S,
            "header",
            0,
            7,
            input.len() as u64,
        ));
    }
    let magic = le_u32(input, 0);
    if magic != LZ4_FRAME_MAGIC {
        return Err(FormatError::new(
            S,
            "magic",
            0,
            Problem::Mismatch {
                expected: LZ4_FRAME_MAGIC as i64,
                found: magic as i64,
            },
        ));
    }
    let flg = input[4];
    if flg >> 6 != 1 {
        return Err(FormatError::new(
            S,
            "FLG",
            4,
            Problem::Invalid("lz4 frame version is not 1"),
        ));
    }
    if flg & 0x03 != 0 {
        return Err(FormatError::new(
            S,
            "FLG",
            4,
            Problem::Invalid("lz4 FLG reserved bits (dictionary id) are set"),
        ));
    }
    if flg & 0x20 == 0 {
        return Err(FormatError::new(
            S,
            "FLG",
            4,
            Problem::Invalid("lz4 dependent blocks are not supported"),
        ));
    }
    let block_checksum = flg & 0x10 != 0;
    let content_size = flg & 0x08 != 0;
    let content_checksum = flg & 0x04 != 0;
    let bd = input[5];
    if bd & 0x8F != 0 {
        return Err(FormatError::new(
            S,
            "BD",
            5,
            Problem::Invalid("lz4 BD reserved bits are set"),
        ));
    }
    let size_id = (bd >> 4) & 0x07;
    if size_id < 4 {
        return Err(FormatError::new(
            S,
            "BD",
            5,
            Problem::OutOfRange {
                value: size_id as i64,
            },
        ));
    }
    let max_block = 1usize << (2 * size_id as usize + 8);
    let mut pos = 6;
    if content_size {
        if input.len() - pos < 8 {
            return Err(FormatError::truncated(
                S,
                "contentSize",
                pos as u64,
                8,
                (input.len() - pos) as u64,
            ));
        }
        pos += 8;
    }
    if pos >= input.len() {
        return Err(FormatError::truncated(S, "HC", pos as u64, 1, 0));
    }
    if !legacy {
        let computed = ((xxhash32(&input[4..pos], 0) >> 8) & 0xFF) as u8;
        let stored = input[pos];
        if stored != computed {
            return Err(FormatError::new(
                S,
                "HC",
                pos as u64,
                Problem::Checksum {
                    stored: stored as u32,
                    computed: computed as u32,
                },
            ));
        }
    }
    Ok(Lz4Frame {
        block_checksum,
        content_checksum,
        max_block,
        pos: pos + 1,
    })
}

/// xxHash32 (the LZ4 frame checksum), by the `twox-hash` crate.
pub fn xxhash32(data: &[u8], seed: u32) -> u32 {
    twox_hash::XxHash32::oneshot(seed, data)
}

/// One LZ4 block into `out`. Kept out of line: when `lz4_flex`'s decoder was inlined into
/// [`Decompressor::decompress`], LLVM chose a slower copy path (`copy_within` + `memcpy`
/// calls; 43 % more instructions for an lz4 `scan --deep` under callgrind).
#[inline(never)]
fn lz4_block(input: &[u8], out: &mut [u8]) -> Result<usize, lz4_flex::block::DecompressError> {
    lz4_flex::block::decompress_into(input, out)
}
