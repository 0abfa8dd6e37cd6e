//! `--remote-storage` over the object layout of Aiven's tiered-storage plugin
//! ([`crate::read::format::aiven`]): a mounted bucket or a downloaded prefix.
//!
//! A segment's objects are looked up at the keys the plugin builds
//! (`ObjectKeyFactory.key`): the prefix and main path of the segment's custom metadata
//! when it has them, else the main path from the segment's identity; each key is tried
//! under the root with its prefix and without it (a downloaded prefix). The `.log` object
//! is rebuilt through its `.rsm-manifest` chunk index (zstd chunks decompressed, one at a
//! time) into an unnamed temporary file the local segments' walker reads. Encrypted
//! objects cannot be read without the broker's key ring: they are reported
//! (`remote_segment_unreadable`) and only what the manifest and the object sizes show is
//! checked.

use super::replay::{RemoteSegment, UserPartition};
use crate::read::format::aiven::{
    self, CustomMetadata, INDEXES_SUFFIX, LOG_SUFFIX, MANIFEST_SUFFIX, SegmentManifest,
};
use crate::read::format::checkpoint::encode_uuid;
use crate::read::segment::{FileClass, MmapMode, load};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Largest manifest read (a manifest is a few hundred bytes; a variable chunk index of a
/// 2 GiB segment in 4 KiB chunks is well under this).
const MAX_MANIFEST: u64 = 16 << 20;

/// Where a segment's three objects are (each `None` when absent).
#[derive(Debug, Clone)]
pub struct Objects {
    /// The key the objects were found at (or the first key tried).
    pub key: String,
    pub manifest: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub indexes: Option<PathBuf>,
}

impl Objects {
    /// The object suffixes absent.
    pub fn missing(&self) -> Vec<&'static str> {
        [
            (&self.manifest, MANIFEST_SUFFIX),
            (&self.log, LOG_SUFFIX),
            (&self.indexes, INDEXES_SUFFIX),
        ]
        .into_iter()
        .filter(|(p, _)| p.is_none())
        .map(|(_, s)| s)
        .collect()
    }
}

/// The keys (without suffix) the plugin would have written segment `s` of `up` at,
/// most likely first.
pub fn keys(up: &UserPartition, s: &RemoteSegment) -> Vec<String> {
    let main = aiven::main_path(
        &up.topic,
        &encode_uuid(&up.topic_id),
        up.partition,
        s.start_offset,
        &encode_uuid(&s.id),
    );
    let custom = s
        .custom_metadata
        .as_deref()
        .and_then(|b| aiven::parse_custom_metadata(b).ok())
        .unwrap_or_default();
    let CustomMetadata {
        object_prefix,
        object_key,
        ..
    } = custom;
    let main = object_key.unwrap_or(main);
    let mut out = Vec::new();
    if let Some(prefix) = object_prefix.filter(|p| !p.is_empty()) {
        out.push(format!("{prefix}{main}"));
    }
    out.push(main);
    out
}

/// A key as a path under `root` (keys use `/`); `None` for a key that would leave it.
pub fn under(root: &Path, key: &str) -> Option<PathBuf> {
    let mut p = root.to_path_buf();
    for part in key.split('/').filter(|s| !s.is_empty()) {
        if part == ".." || part == "." {
            return None;
        }
        p.push(part);
    }
    Some(p)
}

/// Segment `s`'s objects under `root`: at the first key where any of them exists.
pub fn objects(root: &Path, up: &UserPartition, s: &RemoteSegment) -> Objects {
    let ks = keys(up, s);
    let found = |key: &str, suffix: &str| {
        under(root, &format!("{key}{suffix}")).filter(|p| p.is_file())
    };
    for key in &ks {
        let o = Objects {
            key: key.clone(),
            manifest: found(key, MANIFEST_SUFFIX),
            log: found(key, LOG_SUFFIX),
            indexes: found(key, INDEXES_SUFFIX),
        };
        if o.manifest.is_some() || o.log.is_some() || o.indexes.is_some() {
            return o;
        }
    }
    Objects {
        key: ks.into_iter().next().unwrap_or_default(),
        manifest: None,
        log: None,
        indexes: None,
    }
}

/// Whether any finished segment of the partition has an object under `root` in this
/// layout (then the storage is read as the plugin's).
pub fn any_objects<'a>(
    root: &Path,
    up: &UserPartition,
    segments: impl IntoIterator<Item = &'a RemoteSegment>,
) -> bool {
    segments
        .into_iter()
        .any(|s| objects(root, up, s).missing().len() < 3)
}

/// Read and parse a `.rsm-manifest`.
pub fn read_manifest(path: &Path) -> Result<SegmentManifest, String> {
    let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if len > MAX_MANIFEST {
        return Err(format!("manifest of {len} bytes (more than {MAX_MANIFEST})"));
    }
    let data = load(path, FileClass::Checkpoint, MmapMode::Never, None).map_err(|e| e.to_string())?;
    aiven::parse_manifest(&data).map_err(|e| e.to_string())
}

/// Rebuild the segment's bytes from its `.log` object and manifest into an unnamed
/// temporary file (removed when dropped). Encrypted chunks cannot be rebuilt.
pub fn rebuild(log: &Path, m: &SegmentManifest) -> std::io::Result<tempfile::NamedTempFile> {
    let invalid = |s: String| std::io::Error::new(std::io::ErrorKind::InvalidData, s);
    if m.encrypted {
        return Err(invalid("the object is encrypted".into()));
    }
    // Through the read layer: an object inside an uncompressed archive is read in place.
    let (src, have) = crate::read::segment::open_regular(log)?;
    let want = m.chunk_index.transformed_size();
    if have != want {
        return Err(invalid(format!(
            "the .log object has {have} bytes, its chunk index describes {want}"
        )));
    }
    let mut out = tempfile::NamedTempFile::new()?;
    let mut buf = Vec::new();
    for c in m.chunk_index.chunks() {
        buf.resize(c.transformed_size as usize, 0);
        src.read_exact_at(&mut buf, c.transformed_position)?;
        if m.compression {
            let plain = zstd::bulk::decompress(&buf, c.original_size as usize)
                .map_err(|e| invalid(format!("chunk {}: {e}", c.id)))?;
            if plain.len() != c.original_size as usize {
                return Err(invalid(format!(
                    "chunk {} decompresses to {} bytes, the index says {}",
                    c.id,
                    plain.len(),
                    c.original_size
                )));
            }
            out.write_all(&plain)?;
        } else {
            if c.transformed_size != c.original_size {
                return Err(invalid(format!(
                    "chunk {} is {} bytes untransformed, the index says {}",
                    c.id, c.transformed_size, c.original_size
                )));
            }
            out.write_all(&buf)?;
        }
    }
    out.flush()?;
    Ok(out)
}
