//! `--remote-storage s3://bucket/prefix` (and `gs://`, `az://`, … : what
//! `object_store::parse_url` takes), with the `remote-object-store` feature: the objects of
//! every COPY_SEGMENT_FINISHED remote segment are fetched, read-only (HEAD and ranged GETs,
//! never a LIST, a PUT or a DELETE), into a temporary directory laid out as the store, which
//! the rest of the run reads as a `--remote-storage DIR` ([`super::storage`],
//! [`super::aiven`]). Only the keys a segment's objects can have are fetched, in both
//! layouts: `LocalTieredStorage`'s and the Aiven plugin's. Each object is copied in ranges of
//! [`RANGE`] bytes: memory stays bounded whatever the segment size.
//!
//! Credentials come from the environment, as `object_store`'s builders read it
//! (`AWS_*`, `GOOGLE_*`, `AZURE_*`).

use super::MetadataReplay;
use super::replay::{RemoteSegment, UserPartition};
use crate::read::format::aiven::{INDEXES_SUFFIX, LOG_SUFFIX, MANIFEST_SUFFIX};
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::remote_log::{LocalTieredFileType, SegmentState};
use object_store::{ObjectStore, ObjectStoreExt, path::Path as StorePath};
use std::io::Write;

/// Bytes per ranged GET.
pub const RANGE: u64 = 8 << 20;

/// The keys (relative to the store's prefix) segment `s` of `up` may have objects at.
pub fn segment_keys(up: &UserPartition, s: &RemoteSegment) -> Vec<String> {
    let mut out = Vec::new();
    let dir = format!(
        "{}/{}-{}-{}",
        super::storage::LOCAL_TIERED_ROOT,
        up.topic,
        up.partition,
        encode_uuid(&up.topic_id)
    );
    for t in LocalTieredFileType::ALL {
        out.push(format!(
            "{dir}/{:020}-{}{}",
            s.start_offset,
            encode_uuid(&s.id),
            t.suffix()
        ));
    }
    for key in super::aiven::keys(up, s) {
        for suffix in [MANIFEST_SUFFIX, LOG_SUFFIX, INDEXES_SUFFIX] {
            out.push(format!("{key}{suffix}"));
        }
    }
    out
}

/// Fetch the objects of every finished remote segment `replayed` names (the run's one
/// replay of the remote log metadata) from the store at `url` into a new temporary
/// directory.
pub fn mirror(url: &str, replayed: &MetadataReplay) -> Result<tempfile::TempDir, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    let (store, prefix) = object_store::parse_url(&parsed).map_err(|e| format!("{url}: {e}"))?;
    mirror_from(store.as_ref(), &prefix, replayed)
}

/// [`mirror`] from an opened store (tests use `object_store::memory::InMemory`).
pub fn mirror_from(
    store: &dyn ObjectStore,
    prefix: &StorePath,
    replayed: &MetadataReplay,
) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    // Every log some broker's cache may hold (one stopped early may still serve a segment
    // deleted later), each segment fetched once.
    let mut fetched = std::collections::HashSet::new();
    for (up, log) in replayed.replay.every_log() {
        for s in log
            .segments
            .iter()
            .filter(|s| s.state == SegmentState::CopyFinished)
            .filter(|s| fetched.insert(s.id))
        {
            for key in segment_keys(up, s) {
                let Some(to) = super::aiven::under(dir.path(), &key) else {
                    continue;
                };
                let mut from = prefix.clone();
                for part in key.split('/').filter(|p| !p.is_empty()) {
                    from = from.join(part);
                }
                rt.block_on(copy(store, &from, &to))
                    .map_err(|e| format!("{from}: {e}"))?;
            }
        }
    }
    Ok(dir)
}

/// Copy one object (absent: nothing, not an error) in ranges.
async fn copy(
    store: &dyn ObjectStore,
    from: &StorePath,
    to: &std::path::Path,
) -> Result<(), String> {
    let meta = match store.head(from).await {
        Ok(m) => m,
        Err(object_store::Error::NotFound { .. }) => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    let mut out = std::fs::File::create(to).map_err(|e| e.to_string())?;
    let mut at = 0u64;
    while at < meta.size {
        let end = (at + RANGE).min(meta.size);
        let bytes = store
            .get_range(from, at..end)
            .await
            .map_err(|e| e.to_string())?;
        out.write_all(&bytes).map_err(|e| e.to_string())?;
        at = end;
    }
    Ok(())
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use super::*;
    use crate::cluster::report::ScanReport;
    use crate::partition::results::ScanOptions;
    use crate::testkit::remote_log::TieredLog;
    use crate::testkit::{Batch, PartitionBuilder, Producer};

    /// The objects of a `LocalTieredStorage` tree put in an in-memory store under a
    /// prefix, fetched back as they were.
    #[test]
    fn mirror_fetches_the_finished_segments_objects() {
        let d = tempfile::tempdir().unwrap();
        let mut p = PartitionBuilder::new("orders", 0);
        for i in 0..3 {
            if i > 0 {
                p.roll();
            }
            p.append(Batch::new(Producer::PLAIN).records(10));
        }
        let mut t = TieredLog::new(p);
        t.copy(0);
        t.copy(1);
        t.local_from(2);
        let m = t.write(d.path()).unwrap();
        let store = object_store::memory::InMemory::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let prefix = StorePath::from("bucket-prefix");
        for e in walk(&m.remote_root) {
            let rel = e
                .strip_prefix(&m.remote_root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let mut to = prefix.clone();
            for part in rel.split('/') {
                to = to.join(part);
            }
            let bytes = std::fs::read(&e).unwrap();
            rt.block_on(store.put(&to, bytes.into())).unwrap();
        }
        let inv = crate::discover::layout::discover(&[m.log_dir.clone()]);
        let opts = ScanOptions::default();
        let replayed = MetadataReplay::of(&ScanReport::default(), &inv, &opts);
        let dir = mirror_from(&store, &prefix, &replayed).unwrap();
        let mut got: Vec<String> = walk(dir.path())
            .iter()
            .map(|p| {
                p.strip_prefix(dir.path())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        got.sort();
        // Five files per finished segment (no transaction index), byte for byte.
        assert_eq!(got.len(), 10, "{got:?}");
        for rel in &got {
            let a = std::fs::read(dir.path().join(rel)).unwrap();
            assert_eq!(a, std::fs::read(m.remote_root.join(rel)).unwrap(), "{rel}");
        }
    }

    /// Built without the cloud backends (`remote-object-store-core` alone), a bucket URL is
    /// an error said to the user, not a panic.
    #[cfg(not(feature = "remote-object-store"))]
    #[test]
    fn cloud_url_without_backends_is_an_error() {
        let e = mirror("s3://bucket/prefix", &MetadataReplay::default()).unwrap_err();
        assert!(e.starts_with("s3://bucket/prefix: "), "{e}");
    }

    fn walk(root: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        let mut todo = vec![root.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                if e.path().is_dir() {
                    todo.push(e.path());
                } else {
                    out.push(e.path());
                }
            }
        }
        out
    }
}
