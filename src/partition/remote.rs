//! The remote part of a tiered partition's history (KIP-405), as the per-partition scan
//! takes it: the remote segments a fetch would read, in offset order, each replayed through
//! the same walker and producer-state replay as the local segments, before them.
//!
//! Which segments these are is decided above this room (`cluster::tiering::history`, from
//! the replayed `__remote_log_metadata` and the remote storage given); here they are only
//! walked. Where a remote segment's offsets reach the local log, the local log wins from
//! its first offset, as `UnifiedLog.read` serves every offset at or above the local log
//! start from the local segments.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// How to get at a remote segment's bytes as a `.log` file.
#[derive(Clone)]
pub enum RemoteSource {
    /// A plain file (Kafka's `LocalTieredStorage`).
    File(PathBuf),
    /// Bytes that must be rebuilt first (chunked and compressed objects): the closure writes
    /// the segment into an unnamed temporary file, removed when dropped.
    Rebuilt(Arc<dyn Fn() -> std::io::Result<tempfile::NamedTempFile> + Send + Sync>),
    /// Not readable at all (encrypted objects, …): why.
    Unreadable(String),
}

impl std::fmt::Debug for RemoteSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteSource::File(p) => write!(f, "File({})", p.display()),
            RemoteSource::Rebuilt(_) => f.write_str("Rebuilt"),
            RemoteSource::Unreadable(why) => write!(f, "Unreadable({why})"),
        }
    }
}

/// One remote segment to replay.
#[derive(Debug, Clone)]
pub struct RemoteSegmentInput {
    /// How findings and the report name it (the object's name).
    pub name: String,
    pub start_offset: i64,
    pub end_offset: i64,
    /// Batches ending below this offset are not replayed (an earlier remote segment
    /// already covered them).
    pub replay_from: i64,
    pub source: RemoteSource,
}

/// The remote segments of each partition directory (by its path), in offset order.
#[derive(Debug, Clone, Default)]
pub struct RemoteHistory {
    pub by_dir: HashMap<PathBuf, Vec<RemoteSegmentInput>>,
}

impl RemoteHistory {
    /// The remote segments to replay before the local log of the directory at `path`.
    pub fn of(&self, path: &std::path::Path) -> &[RemoteSegmentInput] {
        self.by_dir.get(path).map_or(&[], Vec::as_slice)
    }
}

/// What the walk of one remote object found it holds (`cluster::tiering` compares it with
/// the segment's metadata).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WalkedLog {
    pub bytes: u64,
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// Bytes from the first that do not frame as a whole entry to the end (a bad tail).
    pub invalid_bytes: u64,
    /// `(partitionLeaderEpoch, first offset)` at each change of epoch of the v2 batches
    /// (what `LeaderEpochFileCache` would hold for the segment).
    pub leader_epochs: Vec<(i32, i64)>,
}

/// One remote object walked as a segment: what it holds, and the walk's integrity findings
/// (as the local walk words them, named by the object; `cluster::tiering` reports them as
/// findings about remote data).
#[derive(Debug, Clone, Default)]
pub struct ObjectWalk {
    pub walked: WalkedLog,
    pub findings: Vec<crate::finding::Finding>,
}

/// What the replay of a partition's remote segments covered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteReplayed {
    /// Remote segments walked.
    pub segments: u64,
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
    /// First and last offsets replayed from remote segments.
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// Remote segments that could not be read, with why (the replay went on past them:
    /// producer state may miss what they held).
    pub unread: Vec<(String, String)>,
}
