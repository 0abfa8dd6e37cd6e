//! The data-directory walker: finds partition directories under any mix of broker log
//! dirs, partition dirs, single files and directories above them (`kafka-format.md` §1).
//!
//! OWNER: layout helper (types fixed; `discover` and the name parsers pending).

use std::path::PathBuf;

/// A topic-partition, as parsed from a directory name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl std::fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// The kind of partition directory (§1.2).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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

/// The files of one segment, sharing a 20-digit base-offset prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SegmentFiles {
    pub base_offset: i64,
    pub log: Option<PathBuf>,
    pub index: Option<PathBuf>,
    pub timeindex: Option<PathBuf>,
    pub txnindex: Option<PathBuf>,
}

/// A producer-state snapshot file, `<offset>.snapshot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// Exclusive end offset of the state it holds.
    pub offset: i64,
    pub path: PathBuf,
}

/// What a leftover file is (§1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
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
pub struct PartitionDir {
    pub path: PathBuf,
    pub tp: Option<TopicPartition>,
    pub kind: Option<DirKind>,
    /// Segments sorted by base offset. A segment may lack a `.log` (orphaned index).
    pub segments: Vec<SegmentFiles>,
    /// Producer snapshots sorted by offset.
    pub snapshots: Vec<SnapshotFile>,
    pub leader_epoch_checkpoint: Option<PathBuf>,
    pub partition_metadata: Option<PathBuf>,
    /// KRaft snapshots, `<endOffset>-<epoch>.checkpoint` (same batch format as `.log`).
    pub kraft_snapshots: Vec<PathBuf>,
    /// `quorum-state` (KRaft metadata log only).
    pub quorum_state: Option<PathBuf>,
    pub leftovers: Vec<(LeftoverKind, PathBuf)>,
    /// Files no rule recognised: listed, never fatal.
    pub unknown: Vec<PathBuf>,
    /// The log dir (a `log.dirs` entry) holding this partition, when known.
    pub log_dir: Option<PathBuf>,
    /// True when the user named single files rather than a directory: only those files are
    /// in `segments`/`snapshots`, and the rest of the directory was not listed.
    pub partial: bool,
}

/// A broker log directory (one `log.dirs` entry).
#[derive(Debug, Clone, Default)]
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
    pub leftovers: Vec<(LeftoverKind, PathBuf)>,
    pub unknown: Vec<PathBuf>,
}

/// Everything found under the given paths.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub log_dirs: Vec<LogDir>,
    /// Sorted by (topic, partition, path).
    pub partitions: Vec<PartitionDir>,
    /// Paths that could not be read, with the reason.
    pub errors: Vec<(PathBuf, String)>,
}

/// Placeholder until the walker lands.
pub fn discover(paths: &[PathBuf]) -> Inventory {
    let _ = paths;
    Inventory::default()
}

/// Internal topics (compacted, written by coordinators).
pub fn is_internal_topic(topic: &str) -> bool {
    matches!(
        topic,
        "__consumer_offsets"
            | "__transaction_state"
            | "__share_group_state"
            | "__remote_log_metadata"
    )
}

/// The KRaft metadata log.
pub fn is_kraft_metadata(topic: &str) -> bool {
    topic == "__cluster_metadata"
}
