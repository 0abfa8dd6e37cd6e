//! The data-directory walker: finds partition directories under any mix of broker log
//! dirs, partition dirs, single files and directories above them (names as `LocalLog`
//! and `UnifiedLog` give them).
//!
//! Entry points: [`discover`], [`parse_partition_dir_name`], [`parse_segment_file_name`],
//! [`parse_leftover_name`]. The discovery rules are documented on [`discover`].

use std::path::{Path, PathBuf};
pub use thin_vec::ThinVec;

mod inputs;
mod kraft_log;
mod kraft_names;
mod names;
mod walker;
pub use inputs::classify_input_file;
pub use kraft_log::{Recovered, latest_kraft_snapshot, metadata_log_start};
pub use kraft_names::{
    KraftSnapshotFate, KraftSnapshotName, canonical_snapshot_name, kafka_snapshot_file_name,
    kraft_snapshot_fate, kraft_snapshot_id, kraft_snapshot_name, newest_snapshot_end,
};
pub use names::{
    FileKind, LEADER_EPOCH_CHECKPOINT, LOG_DIR_MARKERS, NoncanonicalName, OffsetNameStep,
    PARTITION_METADATA, REMOTE_LOG_INDEX_CACHE, canonical_segment_name,
    is_compacted_internal_topic, is_internal_topic, is_kraft_metadata, is_streams_changelog_name,
    java_name_order, kafka_offset_of_name, noncanonical_segment_name, parse_leftover_name,
    parse_partition_dir_name, parse_segment_file_name, segment_file_role, unparseable_offset_name,
};
use names::{PartFile, classify_partition_file, is_log_dir_marker};
pub use walker::{DiscoverOptions, MAX_DEPTH, discover, discover_with};

/// A topic-partition, as parsed from a directory name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[non_exhaustive]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl std::fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// The kind of partition directory (its name's suffix: `LocalLog`'s `-delete`, `-future`,
/// `-stray`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DirKind {
    /// `<topic>-<partition>`
    Normal,
    /// `<topic>-<partition>.<uuid>-delete`: waiting for asynchronous deletion.
    Delete { unique_id: String },
    /// `<topic>-<partition>.<uuid>-future`: destination of a replica move between log dirs.
    Future { unique_id: String },
    /// `<topic>-<partition>.<uuid>-stray`: a KRaft replica the broker should not own.
    Stray { unique_id: String },
}

/// The files of one segment, sharing a 20-digit base-offset prefix (the names the broker
/// gives them, `LogFileUtils.logFile` and the like: another name of the same number is
/// never read by the broker, see [`noncanonical_segment_name`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentFiles {
    pub base_offset: i64,
    pub log: Option<PathBuf>,
    pub index: Option<PathBuf>,
    pub timeindex: Option<PathBuf>,
    pub txnindex: Option<PathBuf>,
}

/// A producer-state snapshot file, `<offset>.snapshot`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnapshotFile {
    /// Exclusive end offset of the state it holds.
    pub offset: i64,
    pub path: PathBuf,
}

/// What a leftover file is (a suffix `LogLoader` acts on at startup).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LeftoverKind {
    /// `*.deleted`: scheduled for deletion; startup deletes it.
    Deleted,
    /// `*.cleaned`: unfinished cleaner/split output; startup deletes it.
    Cleaned,
    /// `*.swap`: finished cleaned segment halfway through replacement; startup completes the swap.
    Swap,
    /// `*.tmp`: leftover of an interrupted atomic checkpoint write.
    Tmp,
}

/// A partition directory and everything in it.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PartitionDir {
    pub path: PathBuf,
    pub tp: Option<TopicPartition>,
    pub kind: Option<DirKind>,
    /// Segments sorted by base offset. A segment may lack a `.log` (orphaned index).
    pub segments: ThinVec<SegmentFiles>,
    /// Producer snapshots sorted by offset.
    pub snapshots: ThinVec<SnapshotFile>,
    pub leader_epoch_checkpoint: Option<PathBuf>,
    pub partition_metadata: Option<PathBuf>,
    /// KRaft snapshots, `<endOffset>-<epoch>.checkpoint` (same batch format as `.log`).
    pub kraft_snapshots: ThinVec<PathBuf>,
    /// `quorum-state` (KRaft metadata log only).
    pub quorum_state: Option<PathBuf>,
    pub leftovers: ThinVec<(LeftoverKind, PathBuf)>,
    /// Files no rule recognised: listed, never fatal to the analysis (one whose name the
    /// broker's load cannot parse as an offset, [`unparseable_offset_name`], fails that
    /// load: `verify` reports it). Also here: segment files under a name the broker does
    /// not give them ([`noncanonical_segment_name`]: `5.log`, `…0500.copy.log`), which its
    /// load never reads (`verify` reports what it does instead), and, when symlinks are not
    /// followed, symlinks named like Kafka files (never read; the name checks look at them
    /// as the broker's listing would, following them to see whether they are files).
    pub unknown: ThinVec<PathBuf>,
    /// The log dir (a `log.dirs` entry) holding this partition, when known.
    pub log_dir: Option<PathBuf>,
    /// True when the user named single files rather than a directory: only those files are
    /// in `segments`/`snapshots`, and the rest of the directory was not listed.
    pub partial: bool,
    /// Base offset → index in `segments` while files are added (discovery finds a file's
    /// segment in O(1), not by a search of the segments: 10 000 segments were quadratic).
    segment_slots: SegmentSlots,
}

/// [`PartitionDir`]'s discovery-time index of its segments (dropped once sorted; boxed so
/// that a sorted directory keeps one null pointer of it, not an empty map's 48 bytes).
#[derive(Clone, Default)]
#[allow(clippy::box_collection)] // the box is the point: 8 bytes inline, not 48
struct SegmentSlots(Option<Box<std::collections::HashMap<i64, usize>>>);

impl std::fmt::Debug for SegmentSlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("..")
    }
}

/// A broker log directory (one `log.dirs` entry).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LogDir {
    pub path: PathBuf,
    pub meta_properties: Option<PathBuf>,
    pub recovery_point_checkpoint: Option<PathBuf>,
    pub log_start_offset_checkpoint: Option<PathBuf>,
    pub replication_offset_checkpoint: Option<PathBuf>,
    pub cleaner_offset_checkpoint: Option<PathBuf>,
    /// `.kafka_cleanshutdown`, present only after a clean shutdown.
    pub clean_shutdown: Option<PathBuf>,
    pub bootstrap_checkpoint: Option<PathBuf>,
    /// `.lock` (held by a running broker; its presence alone tells nothing).
    pub lock: Option<PathBuf>,
    pub leftovers: Vec<(LeftoverKind, PathBuf)>,
    pub unknown: Vec<PathBuf>,
    /// The log dir's offset checkpoints ([`OFFSET_CHECKPOINTS`]) the listing found and did
    /// not take, with why: a FIFO or other special file, a symlink not followed (each an
    /// error of discovery, said where listed). The broker reads them
    /// (`LogManager.loadLogs`; it follows symlinks, and a FIFO blocks its read): they are
    /// there, unread by klogscan, never absent.
    pub unread_checkpoints: Vec<(PathBuf, String)>,
}

/// The log dir's offset checkpoints, read by every partition's load or by the cluster
/// stage: the recovery point and log start (`LogManager.loadLogs`), the high watermark
/// (`ReplicaManager`), the log cleaner's offsets (`LogCleanerManager`).
pub const OFFSET_CHECKPOINTS: [&str; 4] = [
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
];

/// Everything found under the given paths.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Inventory {
    pub log_dirs: Vec<LogDir>,
    /// Sorted by (topic, partition, path).
    pub partitions: Vec<PartitionDir>,
    /// Paths that could not be read, with the reason.
    pub errors: Vec<(PathBuf, String)>,
    /// The given paths that are not Kafka data or do not exist (also in `errors`): input
    /// errors, reported on stderr, never as findings (see [`classify_input_file`]).
    pub input_errors: Vec<(PathBuf, String)>,
    /// For an inventory rebuilt from evidence bundles (`bundle::merge`), whose files are on
    /// other machines: what the bundles recorded of the files the cluster stage reads.
    /// Its readers take it instead of the files; `None` for a discovered inventory.
    pub recorded: Option<std::sync::Arc<Recorded>>,
    /// Cluster ids given for directories whose `meta.properties` is missing
    /// (`--cluster-id ID=PATH`), by log dir path and partition directory path
    /// (`crate::discover::identity::apply_given`); empty when none was given.
    pub given_cluster_ids: std::collections::BTreeMap<PathBuf, String>,
}

/// What evidence bundles recorded of the small files the cluster stage reads, keyed by
/// path (see [`Inventory::recorded`]).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Recorded {
    /// Each log dir's `meta.properties` (its fields `None`: absent or unreadable).
    pub meta_properties: std::collections::HashMap<PathBuf, RecordedMeta>,
    /// Per partition directory, at the index of the inventory's `partitions` it was
    /// recorded with: what was recorded of its own files (by position, not by path: a
    /// merge holds every partition of a cluster, and a path key each cost more than the
    /// record). Read through [`Inventory::recorded_partition`].
    pub partitions: Vec<RecordedPartition>,
    /// Indices into `partitions` in the order of their directories' paths (as bytes).
    pub by_path: Vec<u32>,
    /// Each `__cluster_metadata` directory's facts, as the cluster stage serialised them
    /// (`cluster::compaction`); opaque here.
    pub cluster_metadata: std::collections::HashMap<PathBuf, String>,
    /// The small broker files the cluster stage reads (`log-start-offset-checkpoint`,
    /// `replication-offset-checkpoint`, and a `leader-epoch-checkpoint` of a directory
    /// that is not one of `partitions`), by path, as the collect read them.
    pub small_files: std::collections::HashMap<PathBuf, String>,
    /// The small files of the same kinds (a `leader-epoch-checkpoint`) that the collect
    /// could not read, by path: not absent, unread (`cluster::epoch_file` names them as
    /// the scan of the same directories does).
    pub unread: std::collections::HashMap<PathBuf, RecordedUnread>,
    /// Each live `__cluster_metadata` directory's decoded metadata log (with its log dir's
    /// `bootstrap.checkpoint`), as the leadership stage serialised it; opaque here.
    pub metadata_logs: std::collections::HashMap<PathBuf, String>,
    /// Each `__cluster_metadata` directory's newest complete snapshot's end offset
    /// ([`newest_snapshot_end`] of the files its collect listed).
    pub kraft_snapshot_ends: std::collections::HashMap<PathBuf, i64>,
    /// The log dirs that hold a broker's files but no `.kafka_cleanshutdown` (running, or
    /// not shut down cleanly), from the files each collect listed.
    pub unclean_shutdown: std::collections::HashSet<PathBuf>,
    /// The log dirs that hold a broker's files (`LOG_DIR_MARKERS`), from the files each
    /// collect listed ([`Inventory::broker_log_dir`]).
    pub broker_log_dirs: std::collections::HashSet<PathBuf>,
}

/// Why the collect of a bundle could not read a small file.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordedUnread {
    /// The `evidence.reason` of its `unreadable_file` finding (`io_error`, `special_file`, …).
    pub reason: String,
    /// The operating system's error, or what is in the file's place.
    pub error: String,
}

/// What a bundle recorded of one log dir's `meta.properties`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordedMeta {
    /// `cluster.id`.
    pub cluster_id: Option<String>,
    /// `node.id` (v1) or `broker.id` (v0).
    pub node_id: Option<i32>,
    /// `directory.id` (since 3.7), as Kafka prints it.
    pub directory_id: Option<String>,
    /// The file's `version` (0: ZooKeeper-era, 1: KRaft).
    pub version: Option<i32>,
}

impl RecordedMeta {
    pub fn new(
        cluster_id: Option<String>,
        node_id: Option<i32>,
        directory_id: Option<String>,
        version: Option<i32>,
    ) -> Self {
        RecordedMeta {
            cluster_id,
            node_id,
            directory_id,
            version,
        }
    }
}

/// What evidence bundles recorded of one partition directory's files.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RecordedPartition {
    /// Its `partition.metadata` topic id (`None`: absent or unreadable).
    pub topic_id: Option<[u8; 16]>,
    /// Its `leader-epoch-checkpoint` (`None`: absent or unreadable).
    pub leader_epoch_checkpoint: Option<Box<str>>,
    /// Whether a `partition.metadata` file is there, read or not (what
    /// `PartitionDir::partition_metadata` says of a directory on disk: an absent topic id
    /// is a missing file only when this is false).
    pub partition_metadata: bool,
}

impl RecordedPartition {
    pub fn new(topic_id: Option<[u8; 16]>, partition_metadata: bool) -> Self {
        RecordedPartition {
            topic_id,
            leader_epoch_checkpoint: None,
            partition_metadata,
        }
    }
}

impl Inventory {
    /// The bytes of the small broker file `name` of directory `dir`, found by discovery at
    /// `found`: read by `read` from a discovered inventory, taken from what the bundles
    /// recorded for one rebuilt from them (`None`: absent or unreadable).
    pub fn small_file(
        &self,
        dir: &Path,
        found: Option<&Path>,
        name: &str,
        read: impl FnOnce(&Path) -> Option<Vec<u8>>,
    ) -> Option<Vec<u8>> {
        let Some(r) = &self.recorded else {
            return read(found?);
        };
        if name == LEADER_EPOCH_CHECKPOINT
            && let Some(text) = self
                .recorded_partition(dir)
                .and_then(|p| p.leader_epoch_checkpoint.as_deref())
        {
            return Some(text.as_bytes().to_vec());
        }
        r.small_files
            .get(&dir.join(name))
            .map(|s| s.as_bytes().to_vec())
    }

    /// Whether the log dir at `dir` holds a broker's files but no `.kafka_cleanshutdown`:
    /// its broker was running when they were read (`LogManager.loadLogs` deletes the file
    /// at start) or did not shut down cleanly (false for a directory that is no broker's
    /// log dir, or not in this inventory).
    pub fn unclean_shutdown(&self, dir: &Path) -> bool {
        match &self.recorded {
            Some(r) => r.unclean_shutdown.contains(dir),
            None => self
                .log_dirs
                .iter()
                .find(|l| l.path == dir)
                .is_some_and(|l| l.has_markers() && l.clean_shutdown.is_none()),
        }
    }

    /// Whether `dir` is one broker's log dir: it holds a broker file (`LOG_DIR_MARKERS`:
    /// `meta.properties`, a checkpoint, …), from the files each collect listed in an
    /// inventory rebuilt from bundles. A directory recognised only because it holds
    /// several partition directories (copies handed over together) is not.
    pub fn broker_log_dir(&self, dir: &Path) -> bool {
        match &self.recorded {
            Some(r) => r.broker_log_dirs.contains(dir),
            None => self
                .log_dirs
                .iter()
                .any(|l| l.path == dir && l.has_markers()),
        }
    }

    /// The topic id of `p`'s `partition.metadata`: read from the file
    /// ([`PartitionDir::read_topic_id`]), or what a bundle recorded of it for an inventory
    /// rebuilt from bundles.
    pub(crate) fn topic_id(&self, p: &PartitionDir) -> Option<[u8; 16]> {
        match &self.recorded {
            Some(_) => self.recorded_partition(&p.path).and_then(|r| r.topic_id),
            None => p.read_topic_id(),
        }
    }

    /// What the bundles recorded of the partition directory at `dir` (`None`: not one of
    /// this inventory's partitions, or a discovered inventory).
    pub fn recorded_partition(&self, dir: &Path) -> Option<&RecordedPartition> {
        let r = self.recorded.as_ref()?;
        if r.partitions.len() != self.partitions.len() {
            return None;
        }
        let at = r
            .by_path
            .binary_search_by(|&i| {
                self.partitions[i as usize]
                    .path
                    .as_os_str()
                    .cmp(dir.as_os_str())
            })
            .ok()?;
        r.partitions.get(r.by_path[at] as usize)
    }

    /// True when `e` (an entry of `errors`) is an input error.
    pub fn is_input_error(&self, e: &(PathBuf, String)) -> bool {
        self.input_errors.contains(e)
    }
}

// ---------------------------------------------------------------------------------------
// Methods

impl PartitionDir {
    /// The topic id its `partition.metadata` names, read from the file (`None`: absent or
    /// unreadable; `verify` reports a bad file).
    pub(crate) fn read_topic_id(&self) -> Option<[u8; 16]> {
        use crate::read::segment::{FileClass, MmapMode, load};
        let bytes = load(
            self.partition_metadata.as_ref()?,
            FileClass::Checkpoint,
            MmapMode::Never,
            None,
        )
        .ok()?;
        crate::read::format::checkpoint::parse_partition_metadata(&bytes)
            .ok()
            .map(|m| m.topic_id)
    }

    /// The newest segment that has a `.log`: the one the broker may still be appending to,
    /// so the scan reads it with `read()` rather than mmap. `None` without any `.log`.
    pub fn active_segment(&self) -> Option<&SegmentFiles> {
        self.segments.iter().rev().find(|s| s.log.is_some())
    }

    /// True for `__cluster_metadata-*` (the KRaft metadata log).
    pub fn is_kraft_metadata(&self) -> bool {
        self.tp
            .as_ref()
            .is_some_and(|tp| is_kraft_metadata(&tp.topic))
    }

    /// True for the broker's internal topics (see [`is_internal_topic`]).
    pub fn is_internal(&self) -> bool {
        self.tp
            .as_ref()
            .is_some_and(|tp| is_internal_topic(&tp.topic))
    }

    /// The file names of the segments with a `.log`, in order: what a walk's segment
    /// numbers index (`partition::walked::SegmentNames`).
    pub fn log_names(&self) -> Vec<String> {
        self.segments
            .iter()
            .filter_map(|s| s.log.as_deref())
            .map(|log| {
                log.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Segments with an index file but no `.log` (the broker deletes such indexes).
    pub fn orphan_indexes(&self) -> impl Iterator<Item = &SegmentFiles> {
        self.segments.iter().filter(|s| s.log.is_none())
    }

    /// Add a file named explicitly on the command line: as [`PartitionDir::add_file`], but a
    /// segment file named by its offset in another width than the broker's (`5.log`) is
    /// read as the segment of that offset: the user asked for that file, and a partial
    /// directory predicts no load.
    fn add_given_file(&mut self, name: &str, path: PathBuf) {
        if let PartFile::Noncanonical(..) = classify_partition_file(name)
            && let Some((off, kind)) = parse_segment_file_name(name)
        {
            return self.add_numbered(off, kind, path);
        }
        self.add_file(name, path)
    }

    fn add_file(&mut self, name: &str, path: PathBuf) {
        match classify_partition_file(name) {
            PartFile::Numbered(off, FileKind::ProducerSnapshot) => {
                self.snapshots.push(SnapshotFile { offset: off, path })
            }
            PartFile::Numbered(_, FileKind::KraftSnapshot { .. }) => {
                self.kraft_snapshots.push(path)
            }
            PartFile::Numbered(off, kind) => self.add_numbered(off, kind, path),
            // Never read by the broker under this name: not a segment.
            PartFile::Noncanonical(..) => self.unknown.push(path),
            PartFile::LeaderEpoch => {
                set_or_unknown(&mut self.leader_epoch_checkpoint, path, &mut self.unknown)
            }
            PartFile::PartitionMetadata => {
                set_or_unknown(&mut self.partition_metadata, path, &mut self.unknown)
            }
            PartFile::QuorumState => {
                set_or_unknown(&mut self.quorum_state, path, &mut self.unknown)
            }
            PartFile::Leftover(kind, _) => self.leftovers.push((kind, path)),
            PartFile::Unknown => self.unknown.push(path),
        }
    }

    /// Add the segment file `kind` of base `off` (a second file of the same slot goes to
    /// `unknown`).
    fn add_numbered(&mut self, off: i64, kind: FileKind, path: PathBuf) {
        let slots = self.segment_slots.0.get_or_insert_with(Default::default);
        if slots.len() != self.segments.len() {
            // Segments added or reordered without the index (after `sort`).
            slots.clear();
            slots.extend(
                self.segments
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.base_offset, i)),
            );
        }
        let i = *slots.entry(off).or_insert_with(|| {
            self.segments.push(SegmentFiles {
                base_offset: off,
                ..Default::default()
            });
            self.segments.len() - 1
        });
        let seg = &mut self.segments[i];
        let slot = match kind {
            FileKind::Log => &mut seg.log,
            FileKind::Index => &mut seg.index,
            FileKind::TimeIndex => &mut seg.timeindex,
            _ => &mut seg.txnindex,
        };
        if slot.is_none() {
            *slot = Some(path);
        } else {
            // Two files of one slot (files given explicitly: `0.log` and `000…0.log`).
            self.unknown.push(path);
        }
    }

    fn sort(&mut self) {
        self.segments.sort_by_key(|s| s.base_offset);
        self.segment_slots = SegmentSlots::default();
        self.snapshots
            .sort_by(|a, b| (a.offset, &a.path).cmp(&(b.offset, &b.path)));
        self.kraft_snapshots.sort_by_key(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (
                parse_segment_file_name(&name).map(|(o, k)| match k {
                    FileKind::KraftSnapshot { epoch } => (o, epoch),
                    _ => (o, 0),
                }),
                p.clone(),
            )
        });
        self.leftovers.sort_by(|a, b| a.1.cmp(&b.1));
        self.unknown.sort();
        // The inventory lives as long as the scan: no spare capacity per partition.
        self.segments.shrink_to_fit();
        self.snapshots.shrink_to_fit();
        self.kraft_snapshots.shrink_to_fit();
        self.leftovers.shrink_to_fit();
        self.unknown.shrink_to_fit();
    }
}

fn set_or_unknown(slot: &mut Option<PathBuf>, path: PathBuf, unknown: &mut impl Extend<PathBuf>) {
    if slot.is_none() {
        *slot = Some(path);
    } else {
        unknown.extend([path]);
    }
}

impl LogDir {
    /// True when at least one log-dir marker file (`LOG_DIR_MARKERS`) was found here; false for a directory
    /// recognised only because it holds several partition directories.
    pub fn has_markers(&self) -> bool {
        self.meta_properties.is_some()
            || self.recovery_point_checkpoint.is_some()
            || self.log_start_offset_checkpoint.is_some()
            || self.replication_offset_checkpoint.is_some()
            || self.cleaner_offset_checkpoint.is_some()
            || self.clean_shutdown.is_some()
            || self.bootstrap_checkpoint.is_some()
    }

    /// Keep `path`, found under `name` and not read for `why`, when it is one of the log
    /// dir's offset checkpoints ([`LogDir::unread_checkpoints`]).
    fn add_unread(&mut self, name: &str, path: PathBuf, why: &str) {
        if OFFSET_CHECKPOINTS.contains(&name) {
            self.unread_checkpoints.push((path, why.to_owned()));
        }
    }

    fn add_file(&mut self, name: &str, path: PathBuf) {
        let slot = match name {
            "meta.properties" => &mut self.meta_properties,
            "recovery-point-offset-checkpoint" => &mut self.recovery_point_checkpoint,
            "log-start-offset-checkpoint" => &mut self.log_start_offset_checkpoint,
            "replication-offset-checkpoint" => &mut self.replication_offset_checkpoint,
            "cleaner-offset-checkpoint" => &mut self.cleaner_offset_checkpoint,
            ".kafka_cleanshutdown" => &mut self.clean_shutdown,
            "bootstrap.checkpoint" => &mut self.bootstrap_checkpoint,
            ".lock" => &mut self.lock,
            _ => {
                match parse_leftover_name(name) {
                    Some((kind, _)) => self.leftovers.push((kind, path)),
                    None => self.unknown.push(path),
                }
                return;
            }
        };
        set_or_unknown(slot, path, &mut self.unknown);
    }
}
