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
use std::io::{Read, Seek, SeekFrom, Write};
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
    let found =
        |key: &str, suffix: &str| under(root, &format!("{key}{suffix}")).filter(|p| p.is_file());
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
        return Err(format!(
            "manifest of {len} bytes (more than {MAX_MANIFEST})"
        ));
    }
    let data =
        load(path, FileClass::Checkpoint, MmapMode::Never, None).map_err(|e| e.to_string())?;
    aiven::parse_manifest(&data).map_err(|e| e.to_string())
}

/// The transaction index of an unencrypted segment, read from its `.indexes` object at the
/// place the manifest `m` states: the plugin stores each index untransformed unless the
/// segment is encrypted (`RemoteStorageManager.transformIndex` never compresses) and
/// `fetchIndex` reads exactly that range. `None`: encrypted, no index stated, a range
/// beyond the object or above `max` bytes, or unreadable.
pub fn read_txn_index(indexes: &Path, m: &SegmentManifest, max: u64) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    if m.encrypted {
        return None;
    }
    let (position, size) = (
        u64::from(m.txn_index_position?),
        u64::from(m.txn_index_size?),
    );
    let len = std::fs::metadata(indexes).ok()?.len();
    if size > max || position.checked_add(size)? > len {
        return None;
    }
    let mut f = std::fs::File::open(indexes).ok()?;
    f.seek(SeekFrom::Start(position)).ok()?;
    let mut bytes = Vec::new();
    f.take(size).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 == size).then_some(bytes)
}

/// Bytes copied at a time from a chunk into the rebuilt segment: what a rebuild holds of
/// the segment at once, whatever its chunks' declared sizes.
pub const COPY_BUF: usize = 64 << 10;

/// The largest zstd window a chunk's frame may ask for (2^27 bytes, zstd's own default limit
/// for decompression, `ZSTD_WINDOWLOG_LIMIT_DEFAULT`); a frame asking more is refused
/// rather than given the memory.
pub const MAX_WINDOW_LOG: u32 = 27;

/// How many bytes of segment `s` to rebuild: never more than its metadata's size (what the
/// broker copied; a manifest declaring more is a different object, reported by the size
/// the manifest declares) nor than one byte past `--max-bytes` (the walk reads no further,
/// and the byte more tells it the object was cut).
pub fn rebuild_limit(s: &RemoteSegment, opts: &crate::partition::results::ScanOptions) -> u64 {
    let copied = s.segment_size_in_bytes.max(0) as u64;
    opts.max_bytes
        .map_or(copied, |m| m.saturating_add(1).min(copied))
}

/// Rebuild the first `limit` bytes of the segment from its `.log` object and manifest into
/// an unnamed temporary file (removed when dropped). Encrypted chunks cannot be rebuilt.
pub fn rebuild(
    log: &Path,
    m: &SegmentManifest,
    limit: u64,
) -> std::io::Result<tempfile::NamedTempFile> {
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
    let mut out = std::io::BufWriter::new(tempfile::NamedTempFile::new()?);
    rebuild_into(&mut src.reader(), m, limit, &mut out)?;
    out.into_inner().map_err(|e| e.into_error())
}

fn invalid(s: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, s)
}

/// The chunks of `src` (the `.log` object) through manifest `m` into `out`, streamed: each
/// chunk is read and decompressed [`COPY_BUF`] bytes at a time, so memory does not follow
/// the chunk sizes the manifest declares. Stops after `limit` bytes of the original (later
/// chunks are not read). A chunk must give exactly its original size (checked when the
/// limit does not cut it). Returns the bytes written.
pub fn rebuild_into(
    src: &mut (impl Read + Seek),
    m: &SegmentManifest,
    limit: u64,
    out: &mut impl Write,
) -> std::io::Result<u64> {
    let mut buf = vec![0u8; COPY_BUF];
    let mut written = 0u64;
    for c in m.chunk_index.chunks() {
        if written >= limit {
            break;
        }
        if !m.compression && c.transformed_size != c.original_size {
            return Err(invalid(format!(
                "chunk {} is {} bytes untransformed, the index says {}",
                c.id, c.transformed_size, c.original_size
            )));
        }
        src.seek(SeekFrom::Start(c.transformed_position))?;
        let raw = (&mut *src).take(c.transformed_size as u64);
        let want = (c.original_size as u64).min(limit - written);
        let whole = want == c.original_size as u64;
        let got = if m.compression {
            let mut d = zstd::stream::read::Decoder::new(raw)
                .map_err(|e| invalid(format!("chunk {}: {e}", c.id)))?;
            d.window_log_max(MAX_WINDOW_LOG)?;
            copy_chunk(&mut d, out, want, whole, &mut buf)
        } else {
            copy_chunk(&mut { raw }, out, want, whole, &mut buf)
        }
        .map_err(|e| invalid(format!("chunk {}: {e}", c.id)))?;
        if got > want {
            return Err(invalid(format!(
                "chunk {} gives more than the {} bytes the index says",
                c.id, c.original_size
            )));
        }
        if got < want {
            return Err(invalid(format!(
                "chunk {} gives {got} bytes, the index says {}",
                c.id, c.original_size
            )));
        }
        written += want;
    }
    out.flush()?;
    Ok(written)
}

/// Copy up to `want` bytes of `r` into `out` through `buf`; with `whole`, one byte more is
/// tried (a chunk longer than its original size gives `want + 1`).
fn copy_chunk(
    r: &mut impl Read,
    out: &mut impl Write,
    want: u64,
    whole: bool,
    buf: &mut [u8],
) -> std::io::Result<u64> {
    let mut got = 0u64;
    while got < want {
        let n = (want - got).min(buf.len() as u64) as usize;
        let k = r.read(&mut buf[..n])?;
        if k == 0 {
            return Ok(got);
        }
        out.write_all(&buf[..k])?;
        got += k as u64;
    }
    if whole && r.read(&mut buf[..1])? > 0 {
        return Ok(got + 1);
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::format::aiven::{ChunkIndex, Transformed};
    use std::io::Cursor;

    /// Counts what a rebuild writes: the bytes, and the largest single write.
    #[derive(Default)]
    struct Counting {
        bytes: Vec<u8>,
        largest: usize,
    }

    impl Write for Counting {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.largest = self.largest.max(b.len());
            self.bytes.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Counts the bytes read from the object.
    struct CountingReader<R> {
        inner: R,
        read: u64,
    }

    impl<R: Read> Read for CountingReader<R> {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(b)?;
            self.read += n as u64;
            Ok(n)
        }
    }

    impl<R: Seek> Seek for CountingReader<R> {
        fn seek(&mut self, p: SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(p)
        }
    }

    /// `original` cut into chunks of `chunk` bytes, each zstd-compressed alone (the
    /// plugin's `compression.enabled`): the `.log` object and its manifest.
    fn compressed(original: &[u8], chunk: usize) -> (Vec<u8>, SegmentManifest) {
        let mut object = Vec::new();
        let mut sizes = Vec::new();
        for c in original.chunks(chunk) {
            let z = zstd::bulk::compress(c, 3).unwrap();
            sizes.push(z.len() as u32);
            object.extend_from_slice(&z);
        }
        let m = SegmentManifest {
            chunk_index: ChunkIndex {
                original_chunk_size: chunk as u32,
                original_file_size: original.len() as u32,
                transformed: Transformed::Variable(sizes),
            },
            compression: true,
            encrypted: false,
            txn_index_size: None,
            txn_index_position: None,
        };
        (object, m)
    }

    fn segment_bytes(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    /// Chunks of 1 MiB are rebuilt exactly, never more than `COPY_BUF` bytes at a time.
    #[test]
    fn chunks_are_streamed_in_bounded_pieces() {
        let original = segment_bytes(3 << 20);
        let (object, m) = compressed(&original, 1 << 20);
        let mut out = Counting::default();
        let n = rebuild_into(&mut Cursor::new(object), &m, u64::MAX, &mut out).unwrap();
        assert_eq!(n, original.len() as u64);
        assert!(out.bytes == original);
        assert!(out.largest <= COPY_BUF, "{}", out.largest);
    }

    /// A manifest declaring a 1 GiB chunk over a frame of 100 bytes: the 100 bytes are
    /// written, then the chunk is refused for its size (nothing sized by the declaration).
    #[test]
    fn declared_chunk_size_is_not_trusted() {
        let (object, mut m) = compressed(&segment_bytes(100), 100);
        m.chunk_index.original_chunk_size = 1 << 30;
        m.chunk_index.original_file_size = 1 << 30;
        let mut out = Counting::default();
        let e = rebuild_into(&mut Cursor::new(object), &m, u64::MAX, &mut out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "chunk 0 gives 100 bytes, the index says 1073741824"
        );
        assert_eq!(out.bytes.len(), 100);
    }

    /// A chunk that decompresses to more than its original size is refused.
    #[test]
    fn chunk_longer_than_declared_is_refused() {
        let (object, mut m) = compressed(&segment_bytes(100), 100);
        m.chunk_index.original_chunk_size = 60;
        m.chunk_index.original_file_size = 60;
        let e = rebuild_into(
            &mut Cursor::new(object),
            &m,
            u64::MAX,
            &mut Counting::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "chunk 0 gives more than the 60 bytes the index says"
        );
    }

    /// The limit stops the rebuild: exactly that many bytes, and the chunks past it are
    /// never read.
    #[test]
    fn limit_stops_before_later_chunks() {
        let original = segment_bytes(4 << 20);
        let (object, m) = compressed(&original, 1 << 20);
        let sizes = match &m.chunk_index.transformed {
            Transformed::Variable(v) => v.clone(),
            Transformed::Fixed { .. } => unreachable!(),
        };
        let limit = (1 << 20) + 1000;
        let mut src = CountingReader {
            inner: Cursor::new(object),
            read: 0,
        };
        let mut out = Counting::default();
        assert_eq!(rebuild_into(&mut src, &m, limit, &mut out).unwrap(), limit);
        assert!(out.bytes[..] == original[..limit as usize]);
        assert!(src.read <= (sizes[0] + sizes[1]) as u64, "{}", src.read);
    }

    /// A frame asking for a window above 2^MAX_WINDOW_LOG is refused, not given the memory.
    #[test]
    fn frame_with_a_huge_window_is_refused() {
        let original = segment_bytes(1000);
        let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        enc.long_distance_matching(true).unwrap();
        enc.window_log(MAX_WINDOW_LOG + 1).unwrap();
        enc.write_all(&original).unwrap();
        let frame = enc.finish().unwrap();
        let (_, mut m) = compressed(&original, 1000);
        m.chunk_index.transformed = Transformed::Variable(vec![frame.len() as u32]);
        let mut out = Counting::default();
        let e = rebuild_into(&mut Cursor::new(frame), &m, u64::MAX, &mut out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "chunk 0: Frame requires too much memory for decoding"
        );
        assert!(out.bytes.is_empty());
    }
}
