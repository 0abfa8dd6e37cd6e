//! Decompression of batch payloads (`kafka-format.md` §6) into a reused buffer, with a
//! size cap so a decompression bomb yields an error value, never an out-of-memory.
//!
//! Every codec is read the way Kafka's reader reads it:
//! - gzip: multi-member, trailing junk after a complete member ignored (`GZIPInputStream`),
//!   member CRC-32 and ISIZE verified;
//! - snappy: xerial snappy-java framing (concatenated streams joined by a re-header), or
//!   one raw snappy block when the xerial magic is absent (librdkafka);
//! - lz4: Kafka's LZ4 frame reader (one frame; header checksum skipped for magic 0 data,
//!   KAFKA-3160; block checksums verified; content checksum read, not verified);
//! - zstd: streaming, several frames and skippable frames.
//!
//! Declared sizes are never trusted: the output grows only as data is actually produced
//! and never past the cap, so the allocation is bounded by the cap.

use super::batch::Compression;
use super::error::{FormatError, Problem};

/// Default cap on the decompressed size of one batch: 256 MiB.
pub const DEFAULT_MAX_DECOMPRESSED: usize = 256 << 20;

/// The xerial snappy-java stream magic.
pub const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// The LZ4 frame magic (read little-endian).
pub const LZ4_FRAME_MAGIC: u32 = 0x184D_2204;

/// Smallest step by which the output buffer grows for streaming codecs.
const MIN_GROW: usize = 32 << 10;

/// Reusable decompression state: output buffer (and codec contexts), reused across
/// batches so the hot path does not allocate per batch.
pub struct Decompressor {
    /// Initialised high-water area; the output of the last call is `out[..filled]`.
    out: Vec<u8>,
    limit: usize,
    inflate: Option<flate2::Decompress>,
    zstd: Option<zstd::stream::raw::Decoder<'static>>,
    snappy: snap::raw::Decoder,
    /// Bytes produced over every call (a call stopped by the cap counts as the cap): the
    /// work done, for budgets over many batches.
    total_out: u64,
}

impl Default for Decompressor {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_DECOMPRESSED)
    }
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor")
            .field("limit", &self.limit)
            .field("buffer", &self.out.len())
            .finish_non_exhaustive()
    }
}

impl Decompressor {
    /// A decompressor whose output may not exceed `limit` bytes per call.
    pub fn new(limit: usize) -> Self {
        Decompressor {
            out: Vec::new(),
            limit,
            inflate: None,
            zstd: None,
            snappy: snap::raw::Decoder::new(),
            total_out: 0,
        }
    }

    /// Bytes decompressed by this decompressor so far (over all calls; a call that hit
    /// the cap counts as the cap).
    pub fn total_out(&self) -> u64 {
        self.total_out
    }

    /// The configured cap.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Decompress `input`, written with `codec`, and return the output.
    ///
    /// `legacy_lz4` relaxes the LZ4 frame header checksum (magic 0 data written before
    /// Kafka 0.10 carries the broken KAFKA-3160 checksum). Errors name the codec's
    /// structure and the byte position inside `input`. Output beyond the cap is
    /// [`Problem::TooLarge`].
    pub fn decompress(
        &mut self,
        codec: Compression,
        input: &[u8],
        legacy_lz4: bool,
    ) -> Result<&[u8], FormatError> {
        let filled = match codec {
            Compression::None => {
                return Err(FormatError::new(
                    "batch",
                    "attributes",
                    0,
                    Problem::Invalid("decompress called for an uncompressed payload"),
                ));
            }
            Compression::Unknown(id) => {
                return Err(FormatError::new(
                    "batch",
                    "attributes",
                    0,
                    Problem::OutOfRange { value: id as i64 },
                ));
            }
            Compression::Gzip => self.gzip(input),
            Compression::Snappy => self.snappy(input),
            Compression::Lz4 => self.lz4(input, legacy_lz4),
            Compression::Zstd => self.zstd(input),
        };
        let filled = match filled {
            Ok(n) => {
                self.total_out = self.total_out.saturating_add(n as u64);
                n
            }
            Err(e) => {
                if matches!(e.problem, Problem::TooLarge { .. }) {
                    self.total_out = self.total_out.saturating_add(self.limit as u64);
                }
                return Err(e);
            }
        };
        Ok(&self.out[..filled])
    }

    fn too_large(&self, structure: &'static str, field: &'static str, pos: usize) -> FormatError {
        FormatError::new(
            structure,
            field,
            pos as u64,
            Problem::TooLarge {
                limit: self.limit as u64,
            },
        )
    }

    // ---------------------------------------------------------------- gzip

    fn gzip(&mut self, input: &[u8]) -> Result<usize, FormatError> {
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

    // ---------------------------------------------------------------- snappy

    fn snappy(&mut self, input: &[u8]) -> Result<usize, FormatError> {
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
        let mut pos = xerial_header(input, 0)?;
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
                pos = xerial_header(input, pos)?;
                continue;
            }
            let len = super::bytes::be_i32(input, pos);
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

    // ---------------------------------------------------------------- lz4

    fn lz4(&mut self, input: &[u8], legacy: bool) -> Result<usize, FormatError> {
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

    // ---------------------------------------------------------------- zstd

    fn zstd(&mut self, input: &[u8]) -> Result<usize, FormatError> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        const S: &str = "zstd frame";
        if input.is_empty() {
            return Err(FormatError::truncated(S, "magic", 0, 4, 0));
        }
        let limit = self.limit;
        let dec = match &mut self.zstd {
            Some(d) => {
                d.reinit().map_err(|_| {
                    FormatError::new(S, "context", 0, Problem::Invalid("zstd reset failed"))
                })?;
                d
            }
            None => self
                .zstd
                .insert(zstd::stream::raw::Decoder::new().map_err(|_| {
                    FormatError::new(S, "context", 0, Problem::Invalid("zstd init failed"))
                })?),
        };
        let out = &mut self.out;
        let mut pos = 0usize;
        let mut filled = 0usize;
        loop {
            let at_cap = filled >= limit;
            let mut probe = [0u8; 1];
            let dst: &mut [u8] = if at_cap {
                &mut probe
            } else {
                window(out, filled, limit)
            };
            let mut inb = InBuffer::around(&input[pos..]);
            let mut outb = OutBuffer::around(dst);
            let hint = dec.run(&mut inb, &mut outb).map_err(|_| {
                FormatError::new(S, "data", pos as u64, Problem::Invalid("corrupt zstd data"))
            })?;
            let consumed = inb.pos();
            let produced = outb.pos();
            pos += consumed;
            if at_cap && produced > 0 {
                return Err(FormatError::new(
                    S,
                    "data",
                    pos as u64,
                    Problem::TooLarge {
                        limit: limit as u64,
                    },
                ));
            }
            filled += produced;
            if hint == 0 && pos >= input.len() {
                // The last frame is complete and flushed, and no input is left.
                break;
            }
            if consumed == 0 && produced == 0 {
                if pos >= input.len() {
                    return Err(FormatError::new(
                        S,
                        "data",
                        pos as u64,
                        Problem::Invalid("zstd frame ends early"),
                    ));
                }
                return Err(FormatError::new(
                    S,
                    "data",
                    pos as u64,
                    Problem::Invalid("zstd stream makes no progress"),
                ));
            }
        }
        Ok(filled)
    }
}

/// Make `out[filled..]` non-empty (filled < limit), growing geometrically, never past
/// `limit`, and return it.
fn window(out: &mut Vec<u8>, filled: usize, limit: usize) -> &mut [u8] {
    if out.len() <= filled {
        let want = filled
            .saturating_add(filled.max(MIN_GROW))
            .min(limit)
            .max(filled + 1);
        ensure_len(out, want, limit);
    }
    let end = out.len().min(limit);
    &mut out[filled..end]
}

/// Grow `out` (initialised, zero-filled) to at least `need` bytes, with a capacity that
/// never exceeds `limit` (callers guarantee `need <= limit`).
fn ensure_len(out: &mut Vec<u8>, need: usize, limit: usize) {
    if out.len() >= need {
        return;
    }
    if out.capacity() < need {
        let target = out
            .capacity()
            .saturating_mul(2)
            .max(need)
            .min(limit.max(need));
        out.reserve_exact(target - out.len());
    }
    out.resize(need, 0);
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
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

/// Parse a xerial snappy-java header at `at`; return the position after it.
fn xerial_header(input: &[u8], at: usize) -> Result<usize, FormatError> {
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
        return Err(FormatError::new(
            S,
            "magic",
            at as u64,
            Problem::Invalid("bad xerial snappy magic"),
        ));
    }
    let version = super::bytes::be_i32(input, at + 8);
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
    Ok(at + 16)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxhash32_known_vectors() {
        // Reference values of the xxHash specification's implementation.
        assert_eq!(xxhash32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxhash32(b"a", 0), 0x550D_7456);
        assert_eq!(xxhash32(b"abc", 0), 0x32D1_53FF);
        assert_eq!(
            xxhash32(b"Nobody inspects the spammish repetition", 0),
            0xE229_3B2F
        );
    }

    #[test]
    fn window_never_exceeds_limit() {
        let mut v = Vec::new();
        let w = window(&mut v, 0, 10).len();
        assert_eq!(w, 10);
        assert!(v.capacity() <= 10);
    }
}
