//! The remote segments themselves (`--remote-storage`), in the layout of Kafka's
//! `LocalTieredStorage` (`storage/src/test/java/.../LocalTieredStorage.java`,
//! `RemoteTopicPartitionDirectory`, `RemoteLogSegmentFileset`):
//! `<root>/kafka-tiered-storage/<topic>-<partition>-<topicUuid>/<startOffset, 20 digits>-
//! <segmentUuid>.{log,index,timeindex,txnindex,leader_epoch_checkpoint,snapshot}`, the
//! transaction index alone optional.
//!
//! Each finished segment's files must be there; its `.log` is walked with the walker of
//! the local segments and must hold exactly the metadata's size and offsets.

use super::checks::SegmentEvidence;
use super::replay::{PartitionLog, RemoteSegment, UserPartition};
use crate::finding::{Finding, Kind};
use crate::partition::results::ScanOptions;
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::remote_log::{
    LocalTieredFileType, SegmentState, parse_local_tiered_file, parse_local_tiered_partition_dir,
};
use crate::partition::remote::RemoteSource;
use crate::read::segment::{Item, ReadPolicy, walk_entries_items};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `LocalTieredStorage`'s root directory name under the configured `dir`.
pub const LOCAL_TIERED_ROOT: &str = "kafka-tiered-storage";

/// The files of one remote segment found in the storage, by type.
pub type Fileset = BTreeMap<LocalTieredFileType, PathBuf>;

/// The remote directory of `up` under `root` (which may be the configured `dir` or its
/// `kafka-tiered-storage/`), and its segments' files by segment uuid.
pub fn partition_files(
    root: &Path,
    up: &UserPartition,
) -> Option<(PathBuf, BTreeMap<[u8; 16], Fileset>)> {
    let base = if root.join(LOCAL_TIERED_ROOT).is_dir() {
        root.join(LOCAL_TIERED_ROOT)
    } else {
        root.to_path_buf()
    };
    let dir = std::fs::read_dir(&base).ok()?.flatten().find_map(|e| {
        let name = e.file_name();
        let (topic, partition, id) = parse_local_tiered_partition_dir(name.to_str()?)?;
        (topic == up.topic && partition == up.partition && id == up.topic_id).then(|| e.path())
    })?;
    let mut files: BTreeMap<[u8; 16], Fileset> = BTreeMap::new();
    for e in std::fs::read_dir(&dir).ok()?.flatten() {
        let name = e.file_name();
        if let Some((_, id, t)) = name.to_str().and_then(parse_local_tiered_file) {
            files.entry(id).or_default().insert(t, e.path());
        }
    }
    Some((dir, files))
}

/// What the walk of a remote `.log` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalkedLog {
    pub bytes: u64,
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// Bytes after the last whole batch.
    pub invalid_bytes: u64,
    /// `(partitionLeaderEpoch, first offset)` at each change of epoch of the v2 batches
    /// (what `LeaderEpochFileCache` would hold for the segment).
    pub leader_epochs: Vec<(i32, i64)>,
}

/// Walk a remote `.log` with the local segments' walker: size, first and last offsets.
pub fn walk_log(path: &Path, opts: &ScanOptions) -> std::io::Result<WalkedLog> {
    let mut first = None;
    let mut last = None;
    let mut valid = 0u64;
    let mut epochs: Vec<(i32, i64)> = Vec::new();
    let (_, _) = walk_entries_items(path, ReadPolicy::Read, opts.max_bytes, |item| {
        let (base, last_off, len, epoch) = match item {
            Item::Entry(e) => {
                let v2 = e.as_v2().ok();
                let base = e.offset();
                (
                    v2.as_ref().map_or(base, |b| b.base_offset()),
                    v2.as_ref().map_or(base, |b| b.last_offset()),
                    e.len() as u64,
                    v2.as_ref().map(|b| b.partition_leader_epoch()),
                )
            }
            Item::Big(b) => {
                let base = i64::from_be_bytes(b.header[..8].try_into().unwrap_or([0; 8]));
                let epoch = i32::from_be_bytes(b.header[12..16].try_into().unwrap_or([0; 4]));
                let delta = i32::from_be_bytes(b.header[23..27].try_into().unwrap_or([0; 4]));
                let v2 = b.magic() >= 2;
                (
                    base,
                    base.saturating_add(delta as i64),
                    b.len,
                    v2.then_some(epoch),
                )
            }
        };
        if let Some(e) = epoch.filter(|e| *e >= 0)
            && epochs.last().is_none_or(|l| l.0 != e)
        {
            epochs.push((e, base));
        }
        first.get_or_insert(base);
        last = Some(last_off);
        valid += len;
    })?;
    let bytes = std::fs::metadata(path)?.len();
    Ok(WalkedLog {
        bytes,
        first_offset: first,
        last_offset: last,
        invalid_bytes: bytes.saturating_sub(valid),
        leader_epochs: epochs,
    })
}

#[derive(Serialize)]
struct Missing {
    segment: SegmentEvidence,
    remote_partition_dir: Option<String>,
    missing_files: Vec<&'static str>,
}

#[derive(Serialize)]
struct Mismatch {
    segment: SegmentEvidence,
    file: String,
    walked: Option<WalkedLog>,
    error: Option<String>,
    differences: Vec<&'static str>,
}

/// `remote_segment_missing` / `remote_segment_mismatch` for every COPY_SEGMENT_FINISHED
/// segment of `log` against the storage at `root`: in `LocalTieredStorage`'s layout when
/// the partition's directory is there, else in the Aiven plugin's when any of its
/// objects is ([`super::aiven`]).
pub fn check(
    root: &Path,
    up: &UserPartition,
    log: &PartitionLog,
    opts: &ScanOptions,
) -> Vec<Finding> {
    let found = partition_files(root, up);
    let finished = || {
        log.segments
            .iter()
            .filter(|s| s.state == SegmentState::CopyFinished)
    };
    if found.is_none() && super::aiven::any_objects(root, up, finished()) {
        return finished()
            .filter_map(|s| check_aiven(root, up, s, opts))
            .collect();
    }
    let empty = BTreeMap::new();
    let (dir, files) = match &found {
        Some((d, f)) => (Some(d.display().to_string()), f),
        None => (None, &empty),
    };
    let mut out = Vec::new();
    for s in finished() {
        let set = files.get(&s.id);
        let missing: Vec<&'static str> = LocalTieredFileType::ALL
            .into_iter()
            .filter(|t| !t.optional() && set.is_none_or(|f| !f.contains_key(t)))
            .map(LocalTieredFileType::suffix)
            .collect();
        if !missing.is_empty() {
            out.push(missing_finding(up, s, dir.clone(), missing));
            continue;
        }
        let Some(path) = set.and_then(|f| f.get(&LocalTieredFileType::Segment)) else {
            continue;
        };
        if let Some(f) = mismatch(up, s, Ok(path), path, opts) {
            out.push(f);
        }
    }
    out
}

/// The checks of one finished segment in the Aiven plugin's layout.
fn check_aiven(
    root: &Path,
    up: &UserPartition,
    s: &RemoteSegment,
    opts: &ScanOptions,
) -> Option<Finding> {
    let o = super::aiven::objects(root, up, s);
    let missing = o.missing();
    if !missing.is_empty() {
        return Some(missing_finding(up, s, Some(o.key.clone()), missing));
    }
    let (manifest, log) = (o.manifest.as_deref()?, o.log.as_deref()?);
    let m = match super::aiven::read_manifest(manifest) {
        Ok(m) => m,
        Err(e) => return mismatch(up, s, Err(format!("{}: {e}", manifest.display())), log, opts),
    };
    if m.encrypted {
        return Some(encrypted_finding(up, s, log, &m));
    }
    match super::aiven::rebuild(log, &m) {
        Ok(tmp) => mismatch(up, s, Ok(tmp.path()), log, opts),
        Err(e) => mismatch(up, s, Err(e.to_string()), log, opts),
    }
}

#[derive(Serialize)]
struct Encrypted {
    segment: SegmentEvidence,
    file: String,
    original_file_size: u32,
    object_bytes: Option<u64>,
    chunk_index_bytes: u64,
    /// What the manifest and the object's size contradict of the metadata.
    differences: Vec<&'static str>,
}

/// `remote_segment_unreadable`: an encrypted segment; what can be checked without its
/// bytes (the manifest's original size against the metadata, the object's size against
/// the chunk index) is said in the evidence and the message.
fn encrypted_finding(
    up: &UserPartition,
    s: &RemoteSegment,
    log: &Path,
    m: &crate::read::format::aiven::SegmentManifest,
) -> Finding {
    let object_bytes = std::fs::metadata(log).ok().map(|md| md.len());
    let mut differences = Vec::new();
    if m.chunk_index.original_file_size as i64 != s.segment_size_in_bytes as i64 {
        differences.push("size");
    }
    if object_bytes != Some(m.chunk_index.transformed_size()) {
        differences.push("object_size");
    }
    let msg = format!(
        "remote segment {} (offsets {}..={}) is encrypted: its batches were not read, only its metadata checked{}",
        encode_uuid(&s.id),
        s.start_offset,
        s.end_offset,
        if differences.is_empty() {
            String::new()
        } else {
            format!(" (the manifest and object disagree with it: {})", differences.join(", "))
        }
    );
    Finding::new(Kind::RemoteSegmentUnreadable, &up.topic, up.partition, msg)
        .offset(s.start_offset)
        .segment(log.display().to_string())
        .broker("not applicable: the broker decrypts the chunks with its key ring; this analysis has no key")
        .remediation("to check the segment's batches, fetch it through the broker (or decrypt the chunks with the plugin's key ring) and scan the result")
        .evidence(
            serde_json::to_value(Encrypted {
                segment: SegmentEvidence::of(s),
                file: log.display().to_string(),
                original_file_size: m.chunk_index.original_file_size,
                object_bytes,
                chunk_index_bytes: m.chunk_index.transformed_size(),
                differences,
            })
            .unwrap_or_default(),
        )
}

fn missing_finding(
    up: &UserPartition,
    s: &RemoteSegment,
    dir: Option<String>,
    missing: Vec<&'static str>,
) -> Finding {
    let msg = format!(
        "remote segment {} (offsets {}..={}) is COPY_SEGMENT_FINISHED but the remote storage lacks its {}",
        encode_uuid(&s.id),
        s.start_offset,
        s.end_offset,
        missing.join(", ")
    );
    let f = Finding::new(Kind::RemoteSegmentMissing, &up.topic, up.partition, msg)
        .offset(s.start_offset)
        .broker("a fetch of these offsets reads the segment from remote storage: RemoteStorageManager.fetchLogSegment fails (RemoteResourceNotFoundException) and the fetch returns an error")
        .client_error("KafkaStorageException (retriable) on every fetch of these offsets")
        .remediation("restore the objects from a backup of the bucket; otherwise these offsets are lost and consumers must skip them");
    f.evidence(
        serde_json::to_value(Missing {
            segment: SegmentEvidence::of(s),
            remote_partition_dir: dir,
            missing_files: missing,
        })
        .unwrap_or_default(),
    )
}

/// `remote_segment_mismatch` for the segment whose bytes are at `readable` (or could not
/// be had, why), the object `shown`.
fn mismatch(
    up: &UserPartition,
    s: &RemoteSegment,
    readable: Result<&Path, String>,
    shown: &Path,
    opts: &ScanOptions,
) -> Option<Finding> {
    let path = shown;
    let (walked, error) = match readable.and_then(|p| walk_log(p, opts).map_err(|e| e.to_string())) {
        Ok(w) => (Some(w), None),
        Err(e) => (None, Some(e)),
    };
    let mut differences = Vec::new();
    if let Some(w) = &walked {
        if opts.max_bytes.is_none() && w.bytes != s.segment_size_in_bytes as u64 {
            differences.push("size");
        }
        if w.first_offset.is_some_and(|o| o != s.start_offset) {
            differences.push("start_offset");
        }
        if opts.max_bytes.is_none() && w.last_offset != Some(s.end_offset) {
            differences.push("end_offset");
        }
        if w.invalid_bytes > 0 && opts.max_bytes.is_none() {
            differences.push("invalid_bytes");
        }
        // The metadata's epochs are the leader-epoch cache's entries for the segment's
        // range (`RemoteLogManager.copyLogSegment`): each must be where the batches'
        // epochs change (entries with no batch of their own are left out, as by
        // `buildFilteredLeaderEpochMap`), over the offsets the object holds.
        if opts.max_bytes.is_none()
            && !epochs_agree(&s.leader_epochs, &w.leader_epochs, w.last_offset)
        {
            differences.push("leader_epochs");
        }
    } else {
        differences.push("unreadable");
    }
    if differences.is_empty() {
        return None;
    }
    let msg = format!(
        "remote segment {} differs from its metadata ({}): metadata says offsets {}..={} in {} bytes, the object holds {}",
        encode_uuid(&s.id),
        differences.join(", "),
        s.start_offset,
        s.end_offset,
        s.segment_size_in_bytes,
        walked.as_ref().map_or_else(
            || format!("nothing readable ({})", error.clone().unwrap_or_default()),
            |w| format!(
                "offsets {:?}..={:?} in {} bytes",
                w.first_offset, w.last_offset, w.bytes
            )
        )
    );
    let f = Finding::new(Kind::RemoteSegmentMismatch, &up.topic, up.partition, msg)
        .offset(s.start_offset)
        .segment(path.display().to_string())
        .broker("RemoteLogManager trusts the metadata: it reads the object from the position the remote offset index gives, so a fetch of the missing or shifted offsets returns the wrong batches or none")
        .remediation("re-copy the segment from a replica that still holds it locally, or restore the object");
    Some(
        f.evidence(
            serde_json::to_value(Mismatch {
                segment: SegmentEvidence::of(s),
                file: path.display().to_string(),
                walked,
                error,
                differences,
            })
            .unwrap_or_default(),
        ),
    )
}

/// Whether the metadata's epochs and the batches' agree: the same epochs with the same
/// first offsets, once epochs without a record of their own are left out of the
/// metadata's (an epoch followed by another at the same offset).
fn epochs_agree(metadata: &[(i32, i64)], walked: &[(i32, i64)], last: Option<i64>) -> bool {
    let filtered = super::lineage::Lineage::new(metadata.iter().copied()).filtered();
    let held: Vec<(i32, i64)> = filtered
        .entries()
        .into_iter()
        .filter(|e| last.is_some_and(|l| e.1 <= l))
        .collect();
    held == walked
}

/// Each remote segment of `up` found under `root`, by segment id: its object name and how
/// to read its `.log` (what the scan replays, [`super::history`]).
pub fn locate(
    root: &Path,
    up: &UserPartition,
    log: &PartitionLog,
    opts: &ScanOptions,
) -> super::history::Located {
    let mut out = super::history::Located::new();
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    if let Some((_, files)) = partition_files(root, up) {
        for (id, set) in files {
            if let Some(p) = set.get(&LocalTieredFileType::Segment) {
                out.insert(id, (name(p), RemoteSource::File(p.clone())));
            }
        }
        return out;
    }
    let _ = opts;
    for s in log
        .segments
        .iter()
        .filter(|s| s.state == SegmentState::CopyFinished)
    {
        let o = super::aiven::objects(root, up, s);
        let (Some(manifest), Some(log)) = (o.manifest, o.log) else {
            continue;
        };
        let source = match super::aiven::read_manifest(&manifest) {
            Ok(m) if m.encrypted => RemoteSource::Unreadable("the object is encrypted".into()),
            Ok(m) => {
                let at = log.clone();
                RemoteSource::Rebuilt(std::sync::Arc::new(move || {
                    super::aiven::rebuild(&at, &m)
                }))
            }
            Err(e) => RemoteSource::Unreadable(format!("{}: {e}", manifest.display())),
        };
        out.insert(s.id, (name(&log), source));
    }
    out
}

/// Whether `--remote-storage` names an object store (`scheme://…`) rather than a directory.
pub fn is_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric())
    })
}
