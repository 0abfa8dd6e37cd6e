//! What the frames of a bundle hold: each a JSON document, except the fingerprints
//! (`super::fingerprint`).
//!
//! In order: one [`Header`], one [`FileInventory`], per partition directory one
//! [`PartitionFrame`] (followed by its fingerprints when its walk kept batch keys), one
//! [`Rest`], the end frame.

use crate::discover::compaction::ClusterMetadata;
use crate::discover::layout::{DirKind, Inventory};
use crate::finding::Finding;
use crate::partition::state::ReplayOutcome;
use crate::results::{PartitionResult, ScanOptions};
use serde::{Deserialize, Serialize};

/// The first frame: who wrote the bundle, from what, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// `klogscan`.
    pub tool: String,
    /// The version of the klogscan that collected it.
    pub tool_version: String,
    /// [`crate::results::RESULT_FORMAT_VERSION`] of its partition results.
    pub result_format_version: u32,
    /// [`crate::partition::walked::FORMAT_VERSION`] of their cluster inputs.
    pub cluster_inputs_version: u32,
    /// The paths `collect` was given, as given (a merge's report lists them as `inputs`).
    pub inputs: Vec<String>,
    /// The log dirs found under them, each with its owner.
    pub log_dirs: Vec<LogDirIdentity>,
    /// The options the per-partition stage ran with.
    pub options: RecordedOptions,
}

/// A log dir and what its `meta.properties` says (`cluster.id`; `node.id`, or
/// `broker.id` in a v0 file): `None` when absent or unreadable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogDirIdentity {
    pub path: String,
    pub cluster_id: Option<String>,
    pub node_id: Option<i32>,
    /// True when `cluster_id` was given to `collect` (`--cluster-id ID=PATH`) for a log
    /// dir whose `meta.properties` names no cluster; absent (false) when it was read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cluster_id_given: bool,
    /// Its `directory.id` and the file's `version` (absent in bundles of earlier builds:
    /// the rules that need them stay silent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_version: Option<i32>,
}

/// The scan options that shape the per-partition results: bundles collected with
/// different ones do not merge into one scan's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedOptions {
    pub check_crc: bool,
    pub deep: bool,
    pub now_ms: Option<i64>,
    pub hanging_after_ms: i64,
    pub max_bytes: Option<u64>,
    pub max_decompressed: usize,
    pub max_decompressed_per_file: u64,
    pub compacted_topics: Vec<String>,
    pub follow_symlinks: bool,
    /// `--remote-storage` was given: each tiered partition's remote segments were replayed
    /// before its local ones (the storage itself is given to the merge again, whose
    /// checks walk its objects). Since format 4.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remote_history: bool,
}

impl RecordedOptions {
    /// The options of `o` that shape results.
    pub fn of(o: &ScanOptions) -> Self {
        RecordedOptions {
            check_crc: o.check_crc,
            deep: o.deep,
            now_ms: o.now_ms,
            hanging_after_ms: o.replay.hanging_after_ms,
            max_bytes: o.max_bytes,
            max_decompressed: o.max_decompressed,
            max_decompressed_per_file: o.max_decompressed_per_file,
            compacted_topics: o.compacted_topics.clone(),
            follow_symlinks: o.follow_symlinks,
            remote_history: o.remote_storage.is_some(),
        }
    }

    /// `base` with these options (threads, progress, what to keep and the remote storage
    /// stay `base`'s).
    pub fn apply(&self, base: &ScanOptions) -> ScanOptions {
        let mut o = ScanOptions {
            check_crc: self.check_crc,
            deep: self.deep,
            now_ms: self.now_ms,
            max_bytes: self.max_bytes,
            max_decompressed: self.max_decompressed,
            max_decompressed_per_file: self.max_decompressed_per_file,
            compacted_topics: self.compacted_topics.clone(),
            follow_symlinks: self.follow_symlinks,
            ..base.clone()
        };
        o.replay.hanging_after_ms = self.hanging_after_ms;
        o
    }
}

/// Every file discovery found, by directory, and the paths it could not read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileInventory {
    pub log_dirs: Vec<DirFiles>,
    pub partitions: Vec<PartitionDirFiles>,
    /// Paths that could not be read, with the reason (`Inventory::errors`).
    pub errors: Vec<(String, String)>,
    /// Those of them that are input errors (`Inventory::input_errors`).
    pub input_errors: Vec<(String, String)>,
}

/// A directory's files: name and size in bytes (`None`: its size could not be read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirFiles {
    pub path: String,
    pub files: Vec<(String, Option<u64>)>,
}

/// A partition directory: what discovery made of its name, where it is, the topic id of
/// its `partition.metadata` (read by the replica comparison), and its files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionDirFiles {
    pub path: String,
    /// Topic and partition from the directory's name (`None`: not a partition name).
    pub tp: Option<(String, i32)>,
    pub kind: Option<DirKind>,
    pub log_dir: Option<String>,
    pub topic_id: Option<[u8; 16]>,
    pub files: Vec<(String, Option<u64>)>,
    /// The cluster id given to `collect` (`--cluster-id ID=PATH`) for a partition
    /// directory outside any log dir (no `meta.properties` to record it with); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_id_given: Option<String>,
}

/// One partition directory's results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PartitionFrame {
    /// The per-partition stage's results; the walk's batch keys are not in it but in the
    /// fingerprint frame that follows when `fingerprints` is set.
    pub result: PartitionResult,
    /// The replay's conclusion (its transactions are `result.txns`).
    pub outcome: ReplayOutcome,
    pub fingerprints: bool,
    /// The report's fields its JSON form leaves out that the cluster stage reads: the
    /// `(leader epoch, start offset)` lineage of its batches (the leadership checks) and
    /// its log dir (whose checkpoints the leadership and tiering checks read). Since
    /// format 2.
    #[serde(default)]
    pub leader_epochs: Vec<(i32, i64)>,
    #[serde(default)]
    pub log_dir: Option<String>,
    /// What the recovery model predicts for a partition whose next start truncates its
    /// log (absent for every other): what the lost-data check (`cluster::lost`) reads.
    /// Since format 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryInputs>,
    /// The damaged (CRC-bad) batches its replay read, local and remote: the merge links
    /// what the replay derived from remote ones to the remote copy's finding
    /// (`cluster::tiering::corrupt::link_remote_damage`), and the lost-data check reads a
    /// copy's own damage (`cluster::lost`: a copy damaged in the lost range holds nothing).
    /// Remote ones since format 4, local ones too since format 6; a damaged batch's
    /// `first_after` and `lone_marker` (the links past its own producer's next batch) are
    /// optional fields of the same format: a bundle without them links only the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<crate::partition::causes::DamagedBatch>,
}

/// A truncating partition's recovery plan and, when its own loss is measured
/// (`truncation` or load-time truncations), its segments as the walk left them: names,
/// base offsets, and the batches and records recovery removes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RecoveryInputs {
    pub plan: crate::partition::recovery::SegmentPlan,
    pub segments: Vec<crate::partition::recovery::SegmentWalk>,
}

impl RecoveryInputs {
    /// `p`'s recovery plan and segment walks, moved out of it, when its recovery truncates
    /// the log (what `cluster::lost` reads, of the partition or of a copy of it).
    pub fn take(p: &mut crate::results::PartitionReport) -> Option<RecoveryInputs> {
        let plan = &p.carried.recovery;
        let truncates = plan.truncation.is_some() || !plan.load_truncations.is_empty();
        let end_moves = plan.log_end_after.is_some() && plan.log_end_after != p.log_end_offset;
        if !truncates && !end_moves {
            return None;
        }
        Some(RecoveryInputs {
            plan: p.carried.recovery.take(),
            segments: std::mem::take(&mut p.carried.segment_walks).into(),
        })
    }

    /// Put them back into `p` (a merge's report).
    pub fn restore(self, p: &mut crate::results::PartitionReport) {
        p.carried.recovery.set(self.plan);
        p.carried.segment_walks = self.segments.into();
    }
}

/// What follows the partitions.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Rest {
    /// Findings of no partition (unreadable paths, unread metadata batches), in the
    /// scan's order.
    pub findings: Vec<Finding>,
    /// What each live `__cluster_metadata` directory says (cleanup policies, partition
    /// counts), by path: the cluster stage reads it for the coordinator's partition count.
    pub cluster_metadata: Vec<(String, ClusterMetadata)>,
    /// The small files the cluster stage reads, by path: each partition directory's
    /// `leader-epoch-checkpoint` (the leadership and tiering checks' lineage), each log
    /// dir's `log-start-offset-checkpoint` (tiering) and `replication-offset-checkpoint`
    /// (the high watermark an unclean election's loss is measured against). Since format 2.
    #[serde(default)]
    pub small_files: Vec<(String, String)>,
    /// The files of `small_files`' kinds the collect could not read (no permission, a
    /// directory in a `leader-epoch-checkpoint`'s place), by path, with why: the merge
    /// names them as the scan does (`cluster::epoch_file`). Since format 9.
    pub unread_small_files: Vec<(String, crate::discover::layout::RecordedUnread)>,
    /// Each live `__cluster_metadata` directory's metadata log, decoded as the leadership
    /// stage replays it (`cluster::leadership::read_copy`), by path. Since format 2.
    #[serde(default)]
    pub metadata_logs: Vec<(String, crate::cluster::leadership::MetadataLog)>,
}

/// The file names and sizes of `dir`'s entries among `paths`.
fn files_of<'a>(
    paths: impl IntoIterator<Item = &'a std::path::PathBuf>,
) -> Vec<(String, Option<u64>)> {
    let mut out: Vec<(String, Option<u64>)> = paths
        .into_iter()
        .map(|p| {
            let name = p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            (name, std::fs::symlink_metadata(p).ok().map(|m| m.len()))
        })
        .collect();
    out.sort();
    out
}

impl FileInventory {
    /// Free the lists of files (what discovery found, with sizes), keeping the
    /// directories.
    pub fn drop_file_lists(&mut self) {
        for d in &mut self.log_dirs {
            d.files = Vec::new();
        }
        for p in &mut self.partitions {
            p.files = Vec::new();
        }
    }

    /// The inventory of `inv` (one `lstat` per file).
    pub fn of(inv: &Inventory) -> Self {
        let log_dirs = inv
            .log_dirs
            .iter()
            .map(|ld| {
                let named = [
                    &ld.meta_properties,
                    &ld.recovery_point_checkpoint,
                    &ld.log_start_offset_checkpoint,
                    &ld.replication_offset_checkpoint,
                    &ld.cleaner_offset_checkpoint,
                    &ld.clean_shutdown,
                    &ld.bootstrap_checkpoint,
                    &ld.lock,
                ];
                let paths = named
                    .into_iter()
                    .flatten()
                    .chain(ld.leftovers.iter().map(|(_, p)| p))
                    .chain(&ld.unknown);
                DirFiles {
                    path: ld.path.display().to_string(),
                    files: files_of(paths),
                }
            })
            .collect();
        let partitions = inv
            .partitions
            .iter()
            .map(|p| {
                let segs = p.segments.iter().flat_map(|s| {
                    [&s.log, &s.index, &s.timeindex, &s.txnindex]
                        .into_iter()
                        .flatten()
                });
                let paths = segs
                    .chain(p.snapshots.iter().map(|s| &s.path))
                    .chain(&p.leader_epoch_checkpoint)
                    .chain(&p.partition_metadata)
                    .chain(&p.kraft_snapshots)
                    .chain(&p.quorum_state)
                    .chain(p.leftovers.iter().map(|(_, p)| p))
                    .chain(&p.unknown);
                PartitionDirFiles {
                    path: p.path.display().to_string(),
                    tp: p.tp.as_ref().map(|tp| (tp.topic.clone(), tp.partition)),
                    kind: p.kind.clone(),
                    log_dir: p.log_dir.as_ref().map(|d| d.display().to_string()),
                    topic_id: crate::cluster::replicas::topic_id(p),
                    files: files_of(paths),
                    cluster_id_given: p
                        .log_dir
                        .is_none()
                        .then(|| inv.given_cluster_ids.get(&p.path).cloned())
                        .flatten(),
                }
            })
            .collect();
        let pairs = |v: &[(std::path::PathBuf, String)]| {
            v.iter()
                .map(|(p, why)| (p.display().to_string(), why.clone()))
                .collect()
        };
        FileInventory {
            log_dirs,
            partitions,
            errors: pairs(&inv.errors),
            input_errors: pairs(&inv.input_errors),
        }
    }
}
