//! Remote segments in the object layout of Aiven's tiered-storage plugin
//! (`io.aiven.kafka.tieredstorage`), written from a [`TieredManifest`]'s
//! `LocalTieredStorage` segments: per segment a `.log` object (the segment cut into chunks,
//! each zstd-compressed alone when compressing, concatenated), an `.indexes` object and a
//! `.rsm-manifest` (`SegmentManifestV1` as JSON: a `fixed` chunk index without
//! compression, a `variable` one with it, its sizes encoded as `ChunkSizesBinaryCodec`
//! does, zstd-compressed and base64'd as `TransformedChunksSerializer` does), at the key
//! `ObjectKeyFactory` builds. An encoder of its own: it shares nothing with the reader.

use super::files::uuid_text;
use super::remote_log::{RemoteSegment, TieredManifest};
use base64::Engine;
use std::path::Path;

/// How the objects are written.
#[derive(Debug, Clone)]
pub struct AivenLayout {
    /// `chunk.size`.
    pub chunk_size: usize,
    /// `compression.enabled`.
    pub compression: bool,
    /// `encryption.enabled`: the chunks are scrambled and the manifest has `encryption`.
    pub encryption: bool,
    /// `key.prefix`.
    pub prefix: String,
}

impl Default for AivenLayout {
    fn default() -> Self {
        AivenLayout {
            chunk_size: 100,
            compression: true,
            encryption: false,
            prefix: String::new(),
        }
    }
}

/// `ObjectKeyFactory.mainPath` of `s`.
pub fn main_path(s: &RemoteSegment) -> String {
    format!(
        "{}-{}/{}/{:020}-{}",
        s.topic,
        uuid_text(&s.topic_id),
        s.partition,
        s.start_offset,
        uuid_text(&s.id)
    )
}

/// `ChunkSizesBinaryCodec.encode`.
pub fn encode_chunk_sizes(values: &[u32]) -> Vec<u8> {
    let mut out = (values.len() as i32).to_be_bytes().to_vec();
    let Some((&last, rest)) = values.split_last() else {
        return out;
    };
    if rest.is_empty() {
        out.extend_from_slice(&last.to_be_bytes());
        return out;
    }
    let base = *rest.iter().min().unwrap_or(&0);
    let width = rest
        .iter()
        .map(|v| match v - base {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            0x1_0000..=0xff_ffff => 3,
            _ => 4,
        })
        .max()
        .unwrap_or(1);
    out.extend_from_slice(&base.to_be_bytes());
    out.push(width as u8);
    for v in rest {
        out.extend_from_slice(&(v - base).to_be_bytes()[4 - width..]);
    }
    out.extend_from_slice(&last.to_be_bytes());
    out
}

/// `SegmentCustomMetadataSerde.serialize` of the fields given.
pub fn encode_custom_metadata(
    remote_size: Option<i64>,
    prefix: Option<&str>,
    key: Option<&str>,
) -> Vec<u8> {
    fn uvarint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let mut fields: Vec<(u64, Vec<u8>)> = Vec::new();
    if let Some(n) = remote_size {
        let mut f = Vec::new();
        uvarint(&mut f, ((n << 1) ^ (n >> 63)) as u64);
        fields.push((0, f));
    }
    for (tag, s) in [(1, prefix), (2, key)] {
        if let Some(s) = s {
            let mut f = Vec::new();
            uvarint(&mut f, s.len() as u64 + 1);
            f.extend_from_slice(s.as_bytes());
            fields.push((tag, f));
        }
    }
    if fields.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    uvarint(&mut out, fields.len() as u64);
    for (tag, f) in fields {
        uvarint(&mut out, tag);
        uvarint(&mut out, f.len() as u64);
        out.extend_from_slice(&f);
    }
    out
}

/// Write every remote segment of `m` still in its `LocalTieredStorage` directory as the
/// plugin's objects under `root` (at `prefix` + main path). Returns the keys written
/// (without suffix).
pub fn write_aiven(
    m: &TieredManifest,
    root: &Path,
    layout: &AivenLayout,
) -> std::io::Result<Vec<String>> {
    let mut keys = Vec::new();
    for s in &m.segments {
        let local = |ext: &str| {
            m.remote_partition_dir
                .join(format!("{:020}-{}{ext}", s.start_offset, uuid_text(&s.id)))
        };
        let Ok(data) = std::fs::read(local(".log")) else {
            continue;
        };
        let key = format!("{}{}", layout.prefix, main_path(s));
        let at = |suffix: &str| root.join(format!("{key}{suffix}"));
        std::fs::create_dir_all(at(".log").parent().unwrap_or(root))?;
        let mut object = Vec::new();
        let mut sizes = Vec::new();
        for chunk in data.chunks(layout.chunk_size.max(1)) {
            let mut t = if layout.compression {
                zstd::bulk::compress(chunk, 3)?
            } else {
                chunk.to_vec()
            };
            if layout.encryption {
                t = stand_in_cipher(&t);
            }
            sizes.push(t.len() as u32);
            object.extend_from_slice(&t);
        }
        std::fs::write(at(".log"), &object)?;
        // Every index of the segment in one object, each at the position the manifest
        // states with its stored size (`SegmentIndexesV1Builder`); the transaction index
        // only when the copy had one (`LogSegmentData.transactionIndex`).
        let mut indexes = Vec::new();
        let mut places = Vec::new();
        for ext in [
            ".index",
            ".timeindex",
            ".snapshot",
            ".leader_epoch_checkpoint",
            ".txnindex",
        ] {
            let bytes = std::fs::read(local(ext));
            if ext == ".txnindex" && bytes.is_err() {
                places.push(None);
                continue;
            }
            let mut bytes = bytes.unwrap_or_default();
            if layout.encryption {
                // Each index encrypted on its own (`RemoteStorageManager.transformIndex`,
                // never compressed).
                bytes = stand_in_cipher(&bytes);
            }
            places.push(Some((indexes.len(), bytes.len())));
            indexes.extend(bytes);
        }
        std::fs::write(at(".indexes"), &indexes)?;
        std::fs::write(
            at(".rsm-manifest"),
            manifest(&data, &sizes, &places, layout),
        )?;
        keys.push(key);
    }
    Ok(keys)
}

/// Stands for the plugin's AES-GCM: an IV and a tag (28 bytes) around scrambled bytes.
fn stand_in_cipher(plain: &[u8]) -> Vec<u8> {
    [
        vec![0x11; 12],
        plain.iter().map(|b| b ^ 0xa5).collect(),
        vec![0; 16],
    ]
    .concat()
}

/// Replace `m`'s `LocalTieredStorage` files by the plugin's objects of the same segments,
/// at the same root (what a run given that root as `--remote-storage` then reads): the
/// keys written.
pub fn replace_local_tiered(
    m: &TieredManifest,
    layout: &AivenLayout,
) -> std::io::Result<Vec<String>> {
    let bucket = m.remote_root.with_extension("aiven");
    let keys = write_aiven(m, &bucket, layout)?;
    std::fs::remove_dir_all(&m.remote_root)?;
    std::fs::rename(&bucket, &m.remote_root)?;
    Ok(keys)
}

/// The manifest of a segment of `data` in chunks of `sizes`, its indexes (offset,
/// timestamp, producer snapshot, leader epochs, transaction) at `places` in the `.indexes`
/// object.
fn manifest(
    data: &[u8],
    sizes: &[u32],
    places: &[Option<(usize, usize)>],
    layout: &AivenLayout,
) -> String {
    let chunk_index = if layout.compression || layout.encryption {
        let encoded = zstd::bulk::compress(&encode_chunk_sizes(sizes), 3).unwrap_or_default();
        serde_json::json!({
            "type": "variable",
            "originalChunkSize": layout.chunk_size,
            "originalFileSize": data.len(),
            "transformedChunks": base64::engine::general_purpose::STANDARD.encode(encoded),
        })
    } else {
        serde_json::json!({
            "type": "fixed",
            "originalChunkSize": layout.chunk_size,
            "originalFileSize": data.len(),
            "transformedChunkSize": layout.chunk_size,
            "finalTransformedChunkSize": sizes.last().copied().unwrap_or(0),
        })
    };
    let index = |i: usize| match places.get(i).copied().flatten() {
        Some((position, size)) => serde_json::json!({"position": position, "size": size}),
        None if i == 4 => serde_json::Value::Null,
        None => serde_json::json!({"position": 0, "size": 0}),
    };
    let mut m = serde_json::json!({
        "version": "1",
        "chunkIndex": chunk_index,
        "segmentIndexes": {
            "offset": index(0),
            "timestamp": index(1),
            "producerSnapshot": index(2),
            "leaderEpoch": index(3),
            "transaction": index(4),
        },
        "compression": layout.compression,
    });
    if layout.encryption {
        m["encryption"] = serde_json::json!({"dataKey": "kek-1:AAAA", "aad": "AAAA"});
    }
    m.to_string()
}
