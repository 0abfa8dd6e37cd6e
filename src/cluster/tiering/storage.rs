//! The remote segments themselves (`--remote-storage`), in the layout of Kafka's
//! `LocalTieredStorage` (`storage/src/test/java/.../LocalTieredStorage.java`,
//! `RemoteTopicPartitionDirectory`, `RemoteLogSegmentFileset`):
//! `<root>/kafka-tiered-storage/<topic>-<partition>-<topicUuid>/<startOffset, 20 digits>-
//! <segmentUuid>.{log,index,timeindex,txnindex,leader_epoch_checkpoint,snapshot}`, the
//! transaction index alone optional.
//!
//! Each finished segment's files must be there; its `.log` is walked with the walker of
//! the local segments (the same integrity checks, [`crate::partition::scan::walk_object`])
//! and must hold exactly the metadata's size and offsets. What the walk finds damaged is
//! reported as damage of the remote copy ([`super::corrupt`]), once per remote segment.

use super::checks::SegmentEvidence;
use super::replay::{PartitionLog, RemoteSegment, UserPartition};
use super::txn_index::{self, IndexHeld, RemoteAborts};
use crate::finding::{Finding, Kind};
use crate::partition::remote::RemoteSource;
use crate::partition::results::ScanOptions;
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::remote_log::{
    LocalTieredFileType, SegmentState, parse_local_tiered_file, parse_local_tiered_partition_dir,
};
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

pub use crate::partition::remote::WalkedLog;

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
    /// What the walk found damaged in the object (at most [`super::corrupt::LISTED`]).
    damaged: Vec<super::corrupt::Damaged>,
    damaged_count: usize,
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
    aborts: Option<&RemoteAborts<'_>>,
) -> Vec<Finding> {
    let found = partition_files(root, up);
    let finished = || {
        log.segments
            .iter()
            .filter(|s| s.state == SegmentState::CopyFinished)
    };
    if found.is_none() && super::aiven::any_objects(root, up, finished()) {
        return finished()
            .flat_map(|s| check_aiven(root, up, s, opts, aborts))
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
        out.extend(judge(up, s, Ok(path), path, None, opts));
        let txn_index = set.and_then(|f| f.get(&LocalTieredFileType::TransactionIndex));
        // (its size read only for a segment flagged empty)
        let flagged = txn_index.filter(|_| s.txn_index_empty);
        let sized = flagged.and_then(|t| Some((t, std::fs::metadata(t).ok()?.len())));
        if let Some(f) = sized.and_then(|(t, bytes)| txn_index::hidden(up, s, t, bytes, "object")) {
            out.push(f);
        }
        out.extend(txn_index::judge(
            up,
            s,
            aborts,
            IndexHeld::Object(txn_index.map(PathBuf::as_path)),
        ));
    }
    out
}

/// The checks of one finished segment in the Aiven plugin's layout.
fn check_aiven(
    root: &Path,
    up: &UserPartition,
    s: &RemoteSegment,
    opts: &ScanOptions,
    aborts: Option<&RemoteAborts<'_>>,
) -> Vec<Finding> {
    let o = super::aiven::objects(root, up, s);
    let missing = o.missing();
    if !missing.is_empty() {
        return vec![missing_finding(up, s, Some(o.key.clone()), missing)];
    }
    let (Some(manifest), Some(log)) = (o.manifest.as_deref(), o.log.as_deref()) else {
        return Vec::new();
    };
    let m = match super::aiven::read_manifest(manifest) {
        Ok(m) => m,
        Err(e) => {
            let why = format!("{}: {e}", manifest.display());
            return judge(up, s, Err(why), log, None, opts);
        }
    };
    // The manifest states the transaction index's own size, encrypted objects included.
    let what = "(as its manifest states it)";
    let hidden = (m.txn_index_size)
        .and_then(|n| txn_index::hidden(up, s, manifest, n.into(), what))
        .into_iter()
        .chain(txn_index::judge(up, s, aborts, {
            // The index's entries where the `.indexes` object holds them untransformed,
            // else their number from the manifest's size (read only where a replay of the
            // remote history can judge them).
            let read = (aborts.and(o.indexes.as_deref())).and_then(|i| {
                Some((
                    i,
                    super::aiven::read_txn_index(i, &m, txn_index::MAX_TXN_INDEX_BYTES)?,
                ))
            });
            match read {
                Some((path, bytes)) => IndexHeld::Read(path, bytes),
                None => IndexHeld::Counted(manifest, m.txn_index_size),
            }
        }));
    if m.encrypted {
        return [encrypted_finding(up, s, log, &m)]
            .into_iter()
            .chain(hidden)
            .collect();
    }
    // The segment's size is the original size the manifest declares (the rebuild stops at
    // the metadata's).
    let declared = Some(m.chunk_index.original_file_size as u64);
    let mut out = match super::aiven::rebuild(log, &m, super::aiven::rebuild_limit(s, opts)) {
        Ok(tmp) => judge(up, s, Ok(tmp.path()), log, declared, opts),
        Err(e) => judge(up, s, Err(e.to_string()), log, declared, opts),
    };
    out.extend(hidden);
    out
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
            format!(
                " (the manifest and object disagree with it: {})",
                differences.join(", ")
            )
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
        .client_error("consumer: no exception — the fetch of these offsets returns UNKNOWN_SERVER_ERROR (RemoteLogReader's RemoteStorageException maps to no error code of its own); the consumer logs a warning (\"Unknown server error while fetching offset\"), retries, and stays at that offset while its lag grows")
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

/// The findings of the segment whose bytes are at `readable` (or could not be had, why),
/// the object `shown` (whose original size is `declared` when its bytes were rebuilt): one
/// cause, one finding. An object whose size is not the
/// metadata's (or that cannot be read) is not the copied segment: `remote_segment_mismatch`,
/// what its walk found damaged folded into it. Else damage the walk found is
/// `remote_segment_corrupt`, the differences from the metadata it explains folded into
/// it; else differences alone are `remote_segment_mismatch`. The walk's notes on limits
/// of this analysis (decompression budget, batches too large to decode) are kept as they
/// are.
fn judge(
    up: &UserPartition,
    s: &RemoteSegment,
    readable: Result<&Path, String>,
    shown: &Path,
    declared: Option<u64>,
    opts: &ScanOptions,
) -> Vec<Finding> {
    let name = shown.display().to_string();
    let walk = readable.and_then(|p| {
        crate::partition::scan::walk_object(&up.topic, up.partition, &name, s.start_offset, p, opts)
            .map_err(|e| e.to_string())
    });
    let (walked, error, found) = match walk {
        Ok(mut w) => {
            w.walked.bytes = declared.unwrap_or(w.walked.bytes);
            (Some(w.walked), None, w.findings)
        }
        Err(e) => (None, Some(e), Vec::new()),
    };
    let (limits, damage): (Vec<Finding>, Vec<Finding>) = found
        .into_iter()
        .partition(super::corrupt::is_analysis_limit);
    let differences = differences(s, walked.as_ref(), opts);
    let mut out = limits;
    let whole_object = differences.contains(&"size") || differences.contains(&"unreadable");
    if !damage.is_empty() && !whole_object {
        out.push(super::corrupt::finding(
            up,
            s,
            &name,
            walked,
            differences,
            &damage,
        ));
    } else if !differences.is_empty() {
        out.push(mismatch_finding(
            up,
            s,
            &name,
            walked,
            error,
            differences,
            &damage,
        ));
    }
    out
}

/// What the walked object contradicts of the segment's metadata.
fn differences(
    s: &RemoteSegment,
    walked: Option<&WalkedLog>,
    opts: &ScanOptions,
) -> Vec<&'static str> {
    let Some(w) = walked else {
        return vec!["unreadable"];
    };
    let whole = opts.max_bytes.is_none();
    let mut differences = Vec::new();
    if whole && w.bytes != s.segment_size_in_bytes as u64 {
        differences.push("size");
    }
    if w.first_offset.is_some_and(|o| o != s.start_offset) {
        differences.push("start_offset");
    }
    if whole && w.last_offset != Some(s.end_offset) {
        differences.push("end_offset");
    }
    if whole && w.invalid_bytes > 0 {
        differences.push("invalid_bytes");
    }
    // The metadata's epochs are the leader-epoch cache's entries for the segment's range
    // (`RemoteLogManager.copyLogSegment`): each must be where the batches' epochs change
    // (entries with no batch of their own are left out, as by `buildFilteredLeaderEpochMap`),
    // over the offsets the object holds.
    if whole && !epochs_agree(&s.leader_epochs, &w.leader_epochs, w.last_offset) {
        differences.push("leader_epochs");
    }
    differences
}

/// `remote_segment_mismatch`: the object `file` against the metadata of `s`; `damage`, what
/// its walk found damaged, is folded into the evidence (the object is not the copied
/// segment: its damage follows from that).
fn mismatch_finding(
    up: &UserPartition,
    s: &RemoteSegment,
    file: &str,
    walked: Option<WalkedLog>,
    error: Option<String>,
    differences: Vec<&'static str>,
    damage: &[Finding],
) -> Finding {
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
    Finding::new(Kind::RemoteSegmentMismatch, &up.topic, up.partition, msg)
        .offset(s.start_offset)
        .segment(file)
        .broker("RemoteLogManager trusts the metadata: it reads the object from the position the remote offset index gives, so a fetch of the missing or shifted offsets returns the wrong batches or none")
        .remediation("re-copy the segment from a replica that still holds it locally, or restore the object")
        .evidence(
            serde_json::to_value(Mismatch {
                segment: SegmentEvidence::of(s),
                file: file.to_string(),
                walked,
                error,
                differences,
                damaged: super::corrupt::damaged(damage),
                damaged_count: damage.len(),
            })
            .unwrap_or_default(),
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
                let limit = super::aiven::rebuild_limit(s, opts);
                RemoteSource::Rebuilt(std::sync::Arc::new(move || {
                    super::aiven::rebuild(&at, &m, limit)
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
