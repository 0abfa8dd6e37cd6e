//! Decompression of batch payloads (`kafka-format.md` §6) into a reused buffer, with a
//! size cap so a decompression bomb yields an error value, never an out-of-memory.
//!
//! OWNER: codec helper. Interface fixed; implementation pending.

use super::batch::Compression;
use super::error::{FormatError, Problem};

/// Default cap on the decompressed size of one batch: 256 MiB.
pub const DEFAULT_MAX_DECOMPRESSED: usize = 256 << 20;

/// Reusable decompression state: output buffer (and codec contexts), reused across
/// batches so the hot path does not allocate per batch.
pub struct Decompressor {
    out: Vec<u8>,
    limit: usize,
}

impl Default for Decompressor {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_DECOMPRESSED)
    }
}

impl Decompressor {
    /// A decompressor whose output may not exceed `limit` bytes per call.
    pub fn new(limit: usize) -> Self {
        Decompressor {
            out: Vec::new(),
            limit,
        }
    }

    /// The configured cap.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Decompress `input`, written with `codec`, and return the output.
    ///
    /// `legacy_lz4` relaxes the LZ4 frame header checksum (magic 0 data written before
    /// Kafka 0.10 carries the broken KAFKA-3160 checksum). Errors name the codec's
    /// structure and the byte position inside `input`.
    pub fn decompress(
        &mut self,
        codec: Compression,
        input: &[u8],
        legacy_lz4: bool,
    ) -> Result<&[u8], FormatError> {
        let _ = (input, legacy_lz4);
        self.out.clear();
        match codec {
            Compression::None => Err(FormatError::new(
                "batch",
                "attributes",
                0,
                Problem::Invalid("decompress called for an uncompressed payload"),
            )),
            _ => Err(FormatError::new(
                "codec",
                "payload",
                0,
                Problem::Invalid("codec not implemented"),
            )),
        }
    }
}
