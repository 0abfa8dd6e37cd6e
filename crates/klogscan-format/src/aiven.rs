//! The object layout of Aiven's tiered-storage plugin for Kafka
//! (`io.aiven.kafka.tieredstorage.RemoteStorageManager`), in a bucket or a copy of one.
//!
//! Each remote segment is three objects under
//! `<prefix><topic>-<topic uuid>/<partition>/<start offset, 20 digits>-<segment uuid>`
//! (`ObjectKeyFactory.mainPath`): `.log` (the segment's bytes, transformed chunk by chunk
//! and concatenated), `.indexes` (the indexes, concatenated) and `.rsm-manifest` (JSON,
//! `SegmentManifestV1`): `version` "1", `chunkIndex`, `segmentIndexes`, `compression`
//! (each chunk zstd-compressed alone), `encryption` (present when the chunks are
//! AES-GCM-encrypted with a data key only the broker's key ring opens).
//!
//! The chunk index splits the original file into chunks of `originalChunkSize` bytes (the
//! last one shorter); `fixed` gives every transformed chunk one size (and the last its
//! own), `variable` lists each transformed size, encoded by `ChunkSizesBinaryCodec`,
//! zstd-compressed and base64'd (`TransformedChunksSerializer`).
//!
//! The segment's custom metadata (`SegmentCustomMetadataSerde`) is a tagged-fields
//! section: tag 0 `remote_size` (varlong), 1 `object_prefix` and 2 `object_key` (compact
//! strings); the plugin builds a segment's keys from them when present.

use serde_json::Value;
use std::fmt;

/// The manifest's object suffix.
pub const MANIFEST_SUFFIX: &str = ".rsm-manifest";
/// The segment's bytes.
pub const LOG_SUFFIX: &str = ".log";
/// The indexes.
pub const INDEXES_SUFFIX: &str = ".indexes";

/// The most bytes the encoded transformed chunk sizes may decompress to
/// (`TransformedChunksDeserializer.MAX_DECOMPRESSED_SIZE`).
pub const MAX_CHUNK_SIZES_BYTES: usize = 10 * 1024 * 1024;

/// Why a manifest or custom metadata does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AivenError(pub String);

impl fmt::Display for AivenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AivenError {}

fn err<T>(s: impl Into<String>) -> Result<T, AivenError> {
    Err(AivenError(s.into()))
}

/// One chunk: where it is in the original file and in the transformed object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub id: usize,
    pub original_position: u64,
    pub original_size: u32,
    pub transformed_position: u64,
    pub transformed_size: u32,
}

/// The transformed chunk sizes of a chunk index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transformed {
    /// `FixedSizeChunkIndex`: every chunk `size` bytes, the last `last` (never materialized:
    /// a chunk size of 1 byte is allowed).
    Fixed { size: u32, last: u32, count: usize },
    /// `VariableSizeChunkIndex`: each chunk's size (bounded by the encoded list's
    /// [`MAX_CHUNK_SIZES_BYTES`]).
    Variable(Vec<u32>),
}

/// `FixedSizeChunkIndex` / `VariableSizeChunkIndex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkIndex {
    pub original_chunk_size: u32,
    pub original_file_size: u32,
    pub transformed: Transformed,
}

impl ChunkIndex {
    /// The number of chunks.
    pub fn count(&self) -> usize {
        match &self.transformed {
            Transformed::Fixed { count, .. } => *count,
            Transformed::Variable(v) => v.len(),
        }
    }

    fn transformed_at(&self, i: usize) -> u32 {
        match &self.transformed {
            Transformed::Fixed { size, last, count } => {
                if i + 1 == *count {
                    *last
                } else {
                    *size
                }
            }
            Transformed::Variable(v) => v[i],
        }
    }

    /// `AbstractChunkIndex.materializeChunks`, one chunk at a time: every chunk with its
    /// positions.
    pub fn chunks(&self) -> impl Iterator<Item = Chunk> + '_ {
        let count = self.count();
        let (mut orig, mut trans) = (0u64, 0u64);
        (0..count).map(move |i| {
            let size = if i + 1 == count {
                (self.original_file_size as u64)
                    .saturating_sub((count as u64 - 1) * self.original_chunk_size as u64)
                    as u32
            } else {
                self.original_chunk_size
            };
            let t = self.transformed_at(i);
            let c = Chunk {
                id: i,
                original_position: orig,
                original_size: size,
                transformed_position: trans,
                transformed_size: t,
            };
            orig += size as u64;
            trans += t as u64;
            c
        })
    }

    /// The transformed object's size the index describes.
    pub fn transformed_size(&self) -> u64 {
        match &self.transformed {
            Transformed::Fixed { size, last, count } => {
                (*count as u64).saturating_sub(1) * *size as u64
                    + if *count > 0 { *last as u64 } else { 0 }
            }
            Transformed::Variable(v) => v.iter().map(|&t| t as u64).sum(),
        }
    }
}

/// What klogscan needs of a `.rsm-manifest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentManifest {
    pub chunk_index: ChunkIndex,
    /// Chunks are zstd-compressed.
    pub compression: bool,
    /// Chunks are encrypted (`encryption` present).
    pub encrypted: bool,
    /// The size of the segment's transaction index inside its `.indexes` object
    /// (`segmentIndexes.transaction.size`): the plugin never compresses an index
    /// (`RemoteStorageManager.transformIndex`), so this is the index's own bytes, plus the
    /// cipher's IV and tag (28 bytes with AES-GCM, fewer than one 34-byte entry) when the
    /// segment is encrypted, and one byte more from plugin versions whose chunk range ended
    /// one past its last byte; `None` when the manifest has none (`transaction` null: the
    /// copy was given no transaction index) or states none readable.
    pub txn_index_size: Option<u32>,
    /// Where that index starts in the `.indexes` object
    /// (`segmentIndexes.transaction.position`).
    pub txn_index_position: Option<u32>,
}

fn int_field(v: &Value, name: &str) -> Result<u32, AivenError> {
    match v.get(name).and_then(Value::as_i64) {
        Some(n) if (0..=i32::MAX as i64).contains(&n) => Ok(n as u32),
        Some(n) => err(format!("{name} must be non-negative, {n} given")),
        None => err(format!("missing integer field {name}")),
    }
}

/// `(original size + chunk size - 1) / chunk size` without overflow.
fn chunk_count(chunk: u32, file: u32) -> usize {
    (file as u64).div_ceil(chunk as u64) as usize
}

/// Parse a `.rsm-manifest` (version 1) as the plugin's JSON mapper reads it.
pub fn parse_manifest(bytes: &[u8]) -> Result<SegmentManifest, AivenError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| AivenError(e.to_string()))?;
    match v.get("version").and_then(Value::as_str) {
        Some("1") => {}
        other => return err(format!("unknown manifest version {other:?}")),
    }
    let ci = v
        .get("chunkIndex")
        .ok_or(AivenError("missing chunkIndex".into()))?;
    let original_chunk_size = int_field(ci, "originalChunkSize")?;
    if original_chunk_size == 0 {
        return err("Original chunk size must be positive, 0 given");
    }
    let original_file_size = int_field(ci, "originalFileSize")?;
    let transformed = match ci.get("type").and_then(Value::as_str) {
        Some("fixed") => {
            let size = int_field(ci, "transformedChunkSize")?;
            let last = int_field(ci, "finalTransformedChunkSize")?;
            Transformed::Fixed {
                size,
                last,
                count: chunk_count(original_chunk_size, original_file_size),
            }
        }
        Some("variable") => {
            let text = ci
                .get("transformedChunks")
                .and_then(Value::as_str)
                .ok_or(AivenError("missing transformedChunks".into()))?;
            let v = decode_transformed_chunks(text)?;
            if v.len() != chunk_count(original_chunk_size, original_file_size) {
                return err(format!(
                    "{} transformed chunk sizes for {} chunks",
                    v.len(),
                    chunk_count(original_chunk_size, original_file_size)
                ));
            }
            Transformed::Variable(v)
        }
        other => return err(format!("unknown chunk index type {other:?}")),
    };
    let compression = v
        .get("compression")
        .and_then(Value::as_bool)
        .ok_or(AivenError("missing compression".into()))?;
    let encrypted = v.get("encryption").is_some_and(|e| !e.is_null());
    let txn_index = |field: &str| {
        (v.get("segmentIndexes"))
            .and_then(|i| i.get("transaction"))
            .and_then(|t| t.get(field))
            .and_then(Value::as_i64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let (txn_index_size, txn_index_position) = (txn_index("size"), txn_index("position"));
    Ok(SegmentManifest {
        chunk_index: ChunkIndex {
            original_chunk_size,
            original_file_size,
            transformed,
        },
        compression,
        encrypted,
        txn_index_size,
        txn_index_position,
    })
}

/// `TransformedChunksDeserializer`: base64, zstd (at most [`MAX_CHUNK_SIZES_BYTES`]), then
/// [`decode_chunk_sizes`].
pub fn decode_transformed_chunks(text: &str) -> Result<Vec<u32>, AivenError> {
    use base64::Engine;
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| AivenError(format!("transformedChunks: {e}")))?;
    let bin = zstd::bulk::decompress(&compressed, MAX_CHUNK_SIZES_BYTES)
        .map_err(|e| AivenError(format!("transformedChunks: {e}")))?;
    decode_chunk_sizes(&bin)
}

/// `ChunkSizesBinaryCodec.decode`: int32 count; for one value the value; for more, an
/// int32 base, one byte of bytes per value, `count - 1` big-endian values of that width
/// added to the base, and the last value in full.
pub fn decode_chunk_sizes(b: &[u8]) -> Result<Vec<u32>, AivenError> {
    let int = |at: usize| -> Result<i32, AivenError> {
        b.get(at..at + 4)
            .map(|s| i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
            .ok_or(AivenError(format!("chunk sizes end at byte {at}")))
    };
    let count = int(0)?;
    let value = |v: i64| -> Result<u32, AivenError> {
        u32::try_from(v)
            .ok()
            .filter(|v| *v <= i32::MAX as u32)
            .ok_or(AivenError(format!("chunk size {v} out of range")))
    };
    match count {
        0 => Ok(Vec::new()),
        1 => Ok(vec![value(int(4)? as i64)?]),
        n if n < 0 => err(format!("negative chunk count {n}")),
        n => {
            let base = int(4)? as i64;
            let width = *b
                .get(8)
                .ok_or(AivenError("chunk sizes end at byte 8".into()))?
                as usize;
            if !(1..=4).contains(&width) {
                return err(format!("{width} bytes per chunk size"));
            }
            let n = n as usize;
            let need = 9 + (n - 1) * width + 4;
            if b.len() < need {
                return err(format!("{} bytes of chunk sizes, {need} needed", b.len()));
            }
            let mut out = Vec::with_capacity(n);
            for i in 0..n - 1 {
                let at = 9 + i * width;
                let v = b[at..at + width]
                    .iter()
                    .fold(0i64, |acc, &x| (acc << 8) | x as i64);
                out.push(value(base + v)?);
            }
            out.push(value(int(9 + (n - 1) * width)? as i64)?);
            Ok(out)
        }
    }
}

/// `SegmentCustomMetadataSerde.deserialize`: the fields the plugin wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomMetadata {
    pub remote_size: Option<i64>,
    pub object_prefix: Option<String>,
    pub object_key: Option<String>,
}

/// An unsigned varint of at most `bits` bits (35: a varint, 70: a varlong).
fn unsigned(b: &[u8], at: &mut usize, bits: u32) -> Result<u64, AivenError> {
    let mut v = 0u64;
    for shift in (0..bits).step_by(7) {
        let x = *b
            .get(*at)
            .ok_or(AivenError("custom metadata ends inside a varint".into()))?;
        *at += 1;
        v |= ((x & 0x7f) as u64).checked_shl(shift).unwrap_or(0);
        if x & 0x80 == 0 {
            return Ok(v);
        }
    }
    err("custom metadata: varint too long")
}

fn uvarint(b: &[u8], at: &mut usize) -> Result<u64, AivenError> {
    unsigned(b, at, 35)
}

/// Read the custom metadata bytes of a segment written by the plugin (empty: no field).
pub fn parse_custom_metadata(b: &[u8]) -> Result<CustomMetadata, AivenError> {
    let mut out = CustomMetadata::default();
    if b.is_empty() {
        return Ok(out);
    }
    let mut at = 0usize;
    let n = uvarint(b, &mut at)?;
    for _ in 0..n {
        let tag = uvarint(b, &mut at)?;
        let size = uvarint(b, &mut at)? as usize;
        let field = b
            .get(at..at.saturating_add(size))
            .ok_or(AivenError(format!(
                "custom metadata tag {tag} runs past the end"
            )))?;
        at += size;
        let string = || -> Result<String, AivenError> {
            let mut p = 0usize;
            let len = uvarint(field, &mut p)?;
            let len = usize::try_from(len.checked_sub(1).ok_or(AivenError(format!(
                "custom metadata tag {tag}: null string"
            )))?)
            .unwrap_or(usize::MAX);
            let s = field
                .get(p..p.saturating_add(len))
                .ok_or(AivenError(format!(
                    "custom metadata tag {tag}: short string"
                )))?;
            String::from_utf8(s.to_vec())
                .map_err(|_| AivenError(format!("custom metadata tag {tag}: not UTF-8")))
        };
        match tag {
            0 => {
                let mut p = 0usize;
                let z = unsigned(field, &mut p, 70)?;
                out.remote_size = Some((z >> 1) as i64 ^ -((z & 1) as i64));
            }
            1 => out.object_prefix = Some(string()?),
            2 => out.object_key = Some(string()?),
            _ => return err(format!("custom metadata: unknown tag {tag}")),
        }
    }
    Ok(out)
}

/// `ObjectKeyFactory.mainPath`: `<topic>-<topic uuid>/<partition>/<start, 20 digits>-<segment uuid>`
/// (uuids as Kafka prints them).
pub fn main_path(
    topic: &str,
    topic_uuid: &str,
    partition: i32,
    start_offset: i64,
    segment_uuid: &str,
) -> String {
    format!("{topic}-{topic_uuid}/{partition}/{start_offset:020}-{segment_uuid}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ChunkSizesBinaryCodec.encode` of [100, 300, 200, 7] (base 100, one byte each,
    /// the last in full).
    #[test]
    fn chunk_sizes_several_values() {
        let mut b = Vec::new();
        b.extend_from_slice(&4i32.to_be_bytes());
        b.extend_from_slice(&100i32.to_be_bytes());
        b.push(1);
        b.extend_from_slice(&[0, 200, 100]);
        b.extend_from_slice(&7i32.to_be_bytes());
        assert_eq!(decode_chunk_sizes(&b).unwrap(), vec![100, 300, 200, 7]);
        assert!(decode_chunk_sizes(&b[..b.len() - 1]).is_err());
        assert_eq!(
            decode_chunk_sizes(&[0, 0, 0, 1, 0, 0, 1, 0]).unwrap(),
            vec![256]
        );
        assert_eq!(
            decode_chunk_sizes(&[0, 0, 0, 0]).unwrap(),
            Vec::<u32>::new()
        );
    }

    /// `SegmentCustomMetadataSerdeTest.shouldSerDeSomeFields`: remote_size 100 and
    /// object_key "foo" serialize to 11 bytes.
    #[test]
    fn custom_metadata_as_the_plugin_test() {
        // 2 tags; tag 0 size 1 varlong 200 (zigzag 100) needs 2 bytes: size 2.
        let b = [2u8, 0, 2, 0xc8, 0x01, 2, 4, 4, b'f', b'o', b'o'];
        assert_eq!(b.len(), 11);
        let m = parse_custom_metadata(&b).unwrap();
        assert_eq!(m.remote_size, Some(100));
        assert_eq!(m.object_key.as_deref(), Some("foo"));
        assert_eq!(m.object_prefix, None);
        assert_eq!(
            parse_custom_metadata(&[]).unwrap(),
            CustomMetadata::default()
        );
        assert!(parse_custom_metadata(&b[..7]).is_err());
    }

    #[test]
    fn fixed_manifest_chunks() {
        let m = parse_manifest(
            br#"{"version":"1","chunkIndex":{"type":"fixed","originalChunkSize":10,"originalFileSize":25,"transformedChunkSize":10,"finalTransformedChunkSize":5},"segmentIndexes":{},"compression":false}"#,
        )
        .unwrap();
        assert!(!m.encrypted && !m.compression);
        let c: Vec<Chunk> = m.chunk_index.chunks().collect();
        assert_eq!(c.len(), 3);
        assert_eq!(m.chunk_index.transformed_size(), 25);
        assert_eq!((c[2].original_position, c[2].original_size), (20, 5));
        assert_eq!((c[2].transformed_position, c[2].transformed_size), (20, 5));
        assert!(parse_manifest(br#"{"version":"2"}"#).is_err());
        assert!(parse_manifest(b"not json").is_err());
        assert_eq!(m.txn_index_size, None);
    }

    /// `SegmentIndexesV1.transaction`: the index's position and size in the `.indexes`
    /// object, or null when the copy was given no transaction index.
    #[test]
    fn manifest_transaction_index_size() {
        let with = |transaction: &str| {
            let text = format!(
                r#"{{"version":"1","chunkIndex":{{"type":"fixed","originalChunkSize":10,"originalFileSize":5,"transformedChunkSize":10,"finalTransformedChunkSize":5}},"segmentIndexes":{{"offset":{{"position":0,"size":8}},"transaction":{transaction}}},"compression":false}}"#
            );
            let m = parse_manifest(text.as_bytes()).unwrap();
            (m.txn_index_position, m.txn_index_size)
        };
        assert_eq!(with(r#"{"position":8,"size":34}"#), (Some(8), Some(34)));
        assert_eq!(with(r#"{"position":8,"size":0}"#), (Some(8), Some(0)));
        assert_eq!(with("null"), (None, None));
        assert_eq!(with(r#"{"position":8,"size":-1}"#), (Some(8), None));
        assert_eq!(with(r#"{"position":-8,"size":34}"#), (None, Some(34)));
    }
}
