//! Decompression of batch payloads (what Kafka's `Compression.wrapForInput` streams do for
//! each codec id of `CompressionType`) into a reused buffer, with a size cap so a
//! decompression bomb yields an error value, never an out-of-memory.
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

mod gzip;
mod lz4;
mod snappy;

pub use lz4::xxhash32;

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
        // Where the last frame ended (`None`: none has).
        let mut frame_end = None;
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
            if hint == 0 {
                frame_end = Some(pos);
            }
            if consumed == 0 && produced == 0 {
                if pos >= input.len() && zstd_jni_ends_quietly(frame_end, input.len()) {
                    break;
                }
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

/// How many compressed bytes zstd-jni's `ZstdInputStreamNoFinalizer` reads from its
/// source at a time (`recommendedDInSize`: libzstd's `ZSTD_DStreamInSize`, the largest
/// block and its 3-byte header).
const ZSTD_JNI_READ: usize = (128 << 10) + 3;

/// Whether Kafka's zstd reader (zstd-jni 1.5.6 under `ZstdCompression.wrapForInput`) takes
/// input that ends inside a frame for the end of the stream rather than an error, given
/// where the last whole frame ended. `ZstdInputStreamNoFinalizer.readInternal` fails with
/// "Truncated source" at the end of its source only when no frame has finished since its
/// last successful read: it reads `ZSTD_JNI_READ` bytes at a time from the batch's start,
/// each read clears the flag and each finished frame sets it. So input ending inside a frame
/// (a partial header, a cut frame) after a frame that finished within the last read's bytes
/// just ends the records (what the cut frame gave is kept); anything else is an error.
fn zstd_jni_ends_quietly(frame_end: Option<usize>, len: usize) -> bool {
    let last_read = len.saturating_sub(1) / ZSTD_JNI_READ * ZSTD_JNI_READ;
    frame_end.is_some_and(|end| end > last_read)
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
