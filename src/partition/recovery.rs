//! The recovery model: what a broker's `LogLoader` does with a partition on its next start
//! — the analogue of Kafka's `LogLoader.load` / `recoverLog` / `LogSegment.recover`
//! (storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java,
//! LogSegment.java).
//!
//! One model serves every command: the scan's walk of each segment ends in a
//! [`RecoverWalk`] (where `LogSegment.recover` would stop on that segment and why, fed by
//! `RecoverCheck` from the walk's own events — no second read of the bytes), and
//! `predict` decides, from the clean-shutdown marker and the recovery-point checkpoint,
//! which segments are recovered, where the log is truncated, which later segments are
//! deleted and which damage the broker never looks at. `scan`'s `truncation` and the wording
//! of its integrity findings, and `verify`'s prediction, both come from here.

mod after_load;
pub(crate) mod alias_texts;
pub(crate) mod aliases;
mod chain;
pub mod control_throw;
mod crash_tail;
mod ending;
pub(crate) mod last_read;
mod load_stop;
pub mod metadata_snapshots;
mod plan;
mod predict;
pub mod reopened;
mod replays;
mod snapshot_fates;
mod stop;
pub(crate) mod swaps;
mod version;
mod wording;
pub use control_throw::ControlThrow;
pub use plan::{DamageFate, Emptied, Fate, SegmentPlan};
pub(crate) use plan::{
    SegmentInput, TxnIndexVerdict, plan_segments, txnindex_corruption, txnindex_verdict,
};
pub(crate) use predict::{PredictInput, SnapshotInput, predict};
pub(crate) use stop::ReadThrows;
pub use stop::{StopReason, SwappedTail};
pub use version::{BrokerVersion, producer_expiration_ms, reads_whole_txn_index_version};
pub(crate) use wording::word_integrity_finding;

use crate::discover::layout::LogDir;
use crate::finding::{Finding, Kind};
use crate::read::format::checkpoint::{
    JavaThrows, OffsetCheckpointEntry, TextFileKind, parse_offset_checkpoint,
};
use crate::read::segment::{FileClass, MmapMode, load};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `index.interval.bytes` default: recovery adds an index entry after more than this many
/// bytes (the point where a non-monotonic offset raises `InvalidOffsetException`).
pub(crate) const INDEX_INTERVAL_BYTES: u64 = 4096;

pub(crate) type Checkpoint = Option<Result<Vec<OffsetCheckpointEntry>, CheckpointError>>;

/// Why a log dir's offset checkpoint gave no entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CheckpointError {
    /// klogscan could not read the file (permission, I/O): what it holds is not known here,
    /// and the broker may read it fine (discovery names it on stderr: exit 2).
    Unreadable(String),
    /// Its content does not parse: the broker's read fails as well, with the exception
    /// `throws` (which decides whether the log dir goes offline).
    Invalid { message: String, throws: JavaThrows },
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointError::Unreadable(e) | CheckpointError::Invalid { message: e, .. } => {
                f.write_str(e)
            }
        }
    }
}

/// The log-dir level files, read once per log dir.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogDirFiles {
    pub has_markers: bool,
    pub clean_shutdown: bool,
    pub recovery_points: Checkpoint,
    pub log_starts: Checkpoint,
    pub high_watermarks: Checkpoint,
    /// The log cleaner's `cleaner-offset-checkpoint` (how far each compacted partition is
    /// cleaned).
    pub cleaner_offsets: Checkpoint,
    /// The log dir's path, shared by the reports of its partitions
    /// ([`crate::partition::results::PartitionReport::log_dir`]: one allocation per log
    /// dir, not one per partition).
    pub path: Option<std::sync::Arc<Path>>,
}

fn read_checkpoint(path: Option<&Path>, kind: TextFileKind) -> Checkpoint {
    let path = path?;
    Some(
        match load(path, FileClass::Checkpoint, MmapMode::Never, None) {
            Ok(b) => parse_offset_checkpoint(&b, kind).map_err(|e| CheckpointError::Invalid {
                message: e.to_string(),
                throws: e.throws,
            }),
            Err(e) => Err(CheckpointError::Unreadable(format!(
                "cannot read {}: {e}",
                path.display()
            ))),
        },
    )
}

/// One partition's entry in a log dir's recovery-point or log-start checkpoint, as its
/// next load reads it: `LogManager.loadLogs` reads each file once per log dir (a read that
/// fails is caught: no entries, with a warning) and `LogManager.loadLog` takes the
/// partition's entry, `0` without one (`getOrDefault(topicPartition, 0L)`), for
/// `UnifiedLog`'s `recoveryPoint` and `logStartOffset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckpointEntry {
    /// What the broker reads: the entry, or `None` — no entry, no file, or a file that does
    /// not parse (the broker's read fails too): the load then uses 0.
    Read(Option<i64>),
    /// The file is there and klogscan could not read it (permission, I/O,
    /// [`CheckpointError::Unreadable`]): the broker may read it, so the entry is unknown.
    Unread,
}

impl CheckpointEntry {
    /// The entry when it is known to be there.
    pub(crate) fn known(self) -> Option<i64> {
        match self {
            CheckpointEntry::Read(v) => v,
            CheckpointEntry::Unread => None,
        }
    }

    pub(crate) fn is_unread(self) -> bool {
        self == CheckpointEntry::Unread
    }

    /// This partition's entry in `c`.
    pub(crate) fn of(c: &Checkpoint, topic: &str, partition: i32) -> CheckpointEntry {
        match c {
            Some(Err(CheckpointError::Unreadable(_))) => CheckpointEntry::Unread,
            _ => CheckpointEntry::Read(lookup(c, topic, partition)),
        }
    }
}

pub(crate) fn lookup(c: &Checkpoint, topic: &str, partition: i32) -> Option<i64> {
    match c {
        Some(Ok(v)) => v
            .iter()
            .rev()
            .find(|e| e.topic == topic && e.partition == partition)
            .map(|e| e.offset),
        _ => None,
    }
}

/// How `KafkaMetadataLog.apply` loads the KRaft metadata log, whatever the log dir's files
/// say: `(clean shutdown, recovery point, log start checkpoint)` = `(false, 0, 0)` — every
/// segment is recovered (`LogSegment.recover`) at every start, clean or not.
pub(crate) fn metadata_log_state() -> (Option<bool>, Option<i64>, Option<i64>) {
    (Some(false), Some(0), Some(0))
}

impl LogDirFiles {
    /// `(clean shutdown, recovery point, log start checkpoint, high watermark)` of one
    /// partition. Without the broker's marker files the log dir is unknown: `None`s (the
    /// model then assumes an unclean shutdown from offset 0). The KRaft metadata log is
    /// loaded by `KafkaMetadataLog.apply`, never by `LogManager.loadLogs`: log start 0,
    /// recovery point 0 and the last shutdown taken as unclean, at every start
    /// ([`metadata_log_state`]), whatever the log dir's checkpoints hold or whether
    /// klogscan could read them.
    pub(crate) fn partition_state(
        files: Option<&LogDirFiles>,
        topic: &str,
        partition: i32,
    ) -> (Option<bool>, CheckpointEntry, CheckpointEntry, Option<i64>) {
        if crate::discover::layout::is_kraft_metadata(topic) {
            let (clean, rp, start) = metadata_log_state();
            return (
                clean,
                CheckpointEntry::Read(rp),
                CheckpointEntry::Read(start),
                None,
            );
        }
        match files.filter(|f| f.has_markers) {
            Some(f) => (
                Some(f.clean_shutdown),
                CheckpointEntry::of(&f.recovery_points, topic, partition),
                CheckpointEntry::of(&f.log_starts, topic, partition),
                lookup(&f.high_watermarks, topic, partition),
            ),
            None => (
                None,
                CheckpointEntry::Read(None),
                CheckpointEntry::Read(None),
                None,
            ),
        }
    }

    pub(crate) fn read(ld: &LogDir) -> LogDirFiles {
        // A checkpoint discovery found and did not take (a FIFO, a symlink not followed)
        // is one klogscan could not read, never an absent one.
        let read = |path: Option<&Path>, kind: TextFileKind| {
            read_checkpoint(path, kind).or_else(|| {
                let (at, why) = (ld.unread_checkpoints.iter())
                    .find(|(p, _)| p.file_name().is_some_and(|n| n == kind.file_name()))?;
                Some(Err(CheckpointError::Unreadable(format!(
                    "cannot read {}: {why}",
                    at.display()
                ))))
            })
        };
        LogDirFiles {
            path: Some(std::sync::Arc::from(ld.path.as_path())),
            has_markers: ld.has_markers(),
            clean_shutdown: ld.clean_shutdown.is_some(),
            recovery_points: read(
                ld.recovery_point_checkpoint.as_deref(),
                TextFileKind::RecoveryPointOffsetCheckpoint,
            ),
            log_starts: read(
                ld.log_start_offset_checkpoint.as_deref(),
                TextFileKind::LogStartOffsetCheckpoint,
            ),
            high_watermarks: read(
                ld.replication_offset_checkpoint.as_deref(),
                TextFileKind::ReplicationOffsetCheckpoint,
            ),
            cleaner_offsets: read(
                ld.cleaner_offset_checkpoint.as_deref(),
                TextFileKind::CleanerOffsetCheckpoint,
            ),
        }
    }
}

/// What startup does with a leftover file, an orphaned index or a stray snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LeftoverAction {
    /// File (or directory) name.
    pub file: String,
    /// `deleted`, `cleaned`, `swap`, `tmp`, `orphan_index`, `stray_snapshot`,
    /// `snapshot_beyond_log`, `snapshot_below_log_start`, `delete_dir`, `future_dir`,
    /// `stray_dir`, `corrupt_snapshot`, `snapshot_replaced_at_recovery`,
    /// `leader_epoch_cache_cleared`.
    pub kind: String,
    /// What the broker does with it, in words.
    pub action: String,
}

/// A segment that `LogSegment.recover` would run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SegmentRecovery {
    /// The `.log` file name.
    pub segment: String,
    /// Why: `unclean shutdown (at or above the recovery point)`, `missing offset index`,
    /// `corrupt transaction index: …`, `corrupt offset index: …` (brokers < 2.3). The
    /// fixed texts are shared, not copied per partition.
    pub reason: std::borrow::Cow<'static, str>,
}

/// Where recovery truncates the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TruncationPrediction {
    /// The `.log` file truncated.
    pub segment: String,
    /// Byte position the file is truncated to (its new size).
    pub position: u64,
    /// The offset the log is truncated to (the segment's next offset afterwards: the last
    /// valid batch's last offset + 1, or the segment's base offset).
    pub offset: i64,
    /// Bytes removed from this segment.
    pub bytes_removed: u64,
    /// Offset of the first removed batch, when one could be read there.
    pub first_removed_offset: Option<i64>,
    /// Why recovery stopped there (CRC mismatch, partial batch, …).
    pub reason: String,
}

/// How the producer state would be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProducerRebuild {
    /// The snapshot loaded (the newest valid one at or below the log end offset and above
    /// the log start offset; when segments are recovered at load, the newest one the
    /// recoveries leave, usually written by the last at the log end).
    pub snapshot: Option<String>,
    pub snapshot_offset: Option<i64>,
    /// The snapshot loaded is one the load's recoveries write (a new file, or one on disk
    /// deleted and written again with the recovered state), not a file as it is on disk.
    pub snapshot_written_at_load: bool,
    /// True when the broker skips the rebuild (no snapshot left once the stray ones are
    /// removed, after a clean shutdown): all producer state, open transactions included, is
    /// forgotten.
    pub skipped: bool,
    /// Offsets replayed from the log, `[replay_from, replay_to)`.
    pub replay_from: Option<i64>,
    pub replay_to: Option<i64>,
    /// Producers and open transactions after the rebuild, when the log is kept whole
    /// (`None` when truncation removes batches).
    pub producers: Option<usize>,
    pub open_transactions: Option<usize>,
    /// The snapshot files (offsets, ascending) the partition directory holds once loaded:
    /// those the load keeps or its recoveries write, and those the final rebuild writes
    /// (`UnifiedLog.rebuildProducerState`: at the last two segment bases it passes and at
    /// the log end; empty ones there when it is skipped). `None` when not derived.
    pub snapshots_after_load: Option<Vec<i64>>,
    /// The producer snapshot on disk (its offset) the loaded state descends from: the one
    /// the final rebuild loads, or the first the recoveries' chain loads; `None` when the
    /// state is rebuilt from an empty one at the log start (or not at all). Not part of
    /// the report: `verify`'s checks read it.
    #[serde(skip)]
    pub(crate) origin: Option<i64>,
}

/// What to do about the transaction open at `first_offset` in a copy whose next start
/// forgets it ([`ProducerRebuild::skipped`]; `broker`: the copy's broker, when known).
/// `UnifiedLog.rebuildProducerState` takes empty snapshots instead of reading the log, so
/// `ProducerStateManager` holds no ongoing transaction: the first unstable offset is gone
/// and the last stable offset is the high watermark; the transaction never completes there,
/// so no `.txnindex` entry filters its records; `DescribeProducers` lists nothing at its
/// offset. A marker fetched later closes nothing in that state
/// (`ProducerAppendInfo.appendEndTxnMarker` completes only an open transaction).
pub(crate) fn forgotten_transaction_note(first_offset: i64, broker: Option<i32>) -> String {
    let (who, whose) = match broker {
        Some(b) => (format!("broker {b}"), format!("Broker {b}")),
        None => ("the broker".to_string(), "The broker".to_string()),
    };
    format!(
        "{whose} forgets this transaction at its next start (clean shutdown, no producer snapshot: the producer-state rebuild is skipped): its copy's last stable offset then moves past offset {first_offset}, read_committed consumers read the transaction's records as if committed, and while it leads an abort finds no open transaction at offset {first_offset}. Run the abort before {who} starts again, through the partition's current leader (another replica; with no other replica, no abort can run first). {whose}'s own copy still forgets the transaction: the ABORT marker it fetches after the start closes nothing there"
    )
}

/// Why the partition would fail to load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LoadFailure {
    /// The finding kind that causes it.
    pub kind: String,
    pub offset: Option<i64>,
    /// The exception the broker throws.
    pub exception: String,
    pub message: String,
}

/// What a broker's `LogLoader` would do with one partition on the next start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RecoveryPrediction {
    /// `.kafka_cleanshutdown` present in the log dir; `None` when the log dir is unknown
    /// (a bare partition directory) or holds none of a log dir's files (`meta.properties`,
    /// the checkpoints: a directory taken as a log dir only because it holds partitions):
    /// the prediction then assumes an unclean shutdown.
    pub clean_shutdown: Option<bool>,
    /// This partition's entry in `recovery-point-offset-checkpoint` (`None`: no entry, or a
    /// checkpoint that does not parse, where the broker uses 0; or one klogscan could not
    /// read, named in `unread_checkpoints`, where the entry is unknown).
    pub recovery_point: Option<i64>,
    /// `log-start-offset-checkpoint` entry (`None` as for `recovery_point`).
    pub log_start_checkpoint: Option<i64>,
    /// The log dir's checkpoints this load reads that klogscan could not read (permission,
    /// I/O; named on stderr too): `recovery-point-offset-checkpoint`,
    /// `log-start-offset-checkpoint`. The broker may read them: their entries are unknown,
    /// not absent (`outcome_unknown` says what that leaves unknown).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread_checkpoints: Vec<String>,
    /// `replication-offset-checkpoint` entry (high watermark).
    pub high_watermark: Option<i64>,
    /// First batch offset and log end offset as found.
    pub first_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    /// Log start offset and log end offset after loading.
    pub log_start_offset_after: Option<i64>,
    pub log_end_offset_after: Option<i64>,
    /// The log end the load reads once recovery is over, before it compares it with the
    /// log start checkpoint (`LogLoader.recoverLog`: the last segment's `readNextOffset`,
    /// its base when it holds no batch; `deleteSegmentsIfLogStartGreaterThanLogEnd`): the
    /// end `verify` holds the log dir's checkpoint entries against (one model for both).
    /// `None` when it is not known (an unknown outcome, a load that fails, a `-delete`
    /// directory, no segment at all): the checks then take the walk's end.
    #[serde(skip)]
    pub(crate) log_end_recovered: Option<i64>,
    /// The recovery point the load leaves (`RecoveryOffsets.newRecoveryPoint`): the log end
    /// after a clean shutdown that left the log whole, else the checkpointed recovery point
    /// (0 without an entry) bounded by the log end; 0 for a `-delete` directory. Then
    /// raised to the local log start by `UnifiedLog`'s constructor, for every directory.
    /// `None` when the log end is unknown.
    pub recovery_point_after: Option<i64>,
    /// The segment the load opens when none is left: at the log start checkpoint when the
    /// log ends below it (every segment deleted), or in a directory with no segment (at the
    /// checkpoint, at 0 for a `-delete` directory).
    pub created_segment: Option<String>,
    /// Leftovers, orphaned indexes and snapshots removed or renamed at startup.
    pub leftovers: Vec<LeftoverAction>,
    /// Segments recovered (indexes rebuilt, batches CRC-checked), in order.
    pub recovered_segments: Vec<SegmentRecovery>,
    /// The truncation, if recovery finds invalid bytes (boxed, as `load_failure`: rare,
    /// and a verification keeps every partition's prediction to the end).
    pub truncation: Option<Box<TruncationPrediction>>,
    /// Segments the load deletes (renamed `.deleted`, then removed): those after the
    /// truncation; every segment when the log ends below its log start checkpoint, or in
    /// a `-delete` directory (deleted with it once loaded).
    pub deleted_segments: Vec<String>,
    /// Corruption recovery would NOT see (segments it does not recover).
    pub unrecovered_corruption: Vec<String>,
    pub producer_state: ProducerRebuild,
    pub load_failure: Option<Box<LoadFailure>>,
    /// With a `load_failure`, the step of the load that throws (`before_load`,
    /// `first_pass`, `swap_read`, `segment_files`, `swap_completion`, `recovery`,
    /// `log_end`, `producer_state_rebuild`): the prediction then holds only what the steps
    /// before it do — no log start, log end or recovery point after the load, no producer
    /// state but the failing rebuild's start, no snapshots after load, and the leftover
    /// actions of later steps read `not reached`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_stops_at: Option<String>,
    /// Set when the outcome of recovery cannot be predicted, and why: with `--no-crc` no
    /// CRC was checked, while `LogSegment.recover` checks every batch's CRC on the segments
    /// it runs on and stops at the first mismatch; after an unclean shutdown klogscan could
    /// not read the recovery point (`unread_checkpoints`), where the unclean pass starts,
    /// and the prediction recovers only the segments recovered whatever it is (the last
    /// one, and those recovered at load); klogscan could not read the log start
    /// checkpoint, which the load compares with the log end. `truncation` is then the
    /// latest point recovery can stop at (it may stop earlier, or where none is predicted),
    /// `deleted_segments` the fewest it deletes, and `log_end_offset_after` is `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome_unknown: Option<String>,
}

/// How `LogSegment.recover` would end on one segment (`ensureValid`
/// of the outer entry, `ensureOffsetInRange`, index appends every
/// `INDEX_INTERVAL_BYTES`, the producer-state update that decodes control records, the
/// tail). Built by `RecoverCheck` from the scan's walk of the segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecoverWalk {
    /// Where the file would be truncated to, when recovery stops before its end:
    /// `(byte position, why, offset of the first removed batch when readable)`.
    /// Boxed: rare, and a verification keeps every segment's walk until its checks.
    pub stop: Option<Box<(u64, StopReason, Option<i64>)>>,
    /// Where the file's bytes stop framing before its end, and how (`None`: the last entry
    /// ends at the end of the file): the stop, or bytes after an earlier one — what the
    /// words of the tail's finding say of a read that gets there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<Box<(u64, StopReason)>>,
    /// Next offset after the last valid batch (base offset when none).
    pub next_offset: i64,
    /// File length (bytes read).
    pub len: u64,
    /// A batch whose offsets do not fit the base offset (recovery splits the segment).
    pub overflow: bool,
    /// Batches the walk read in the segment, and the records of those whose CRC holds (a
    /// damaged batch's record count is not trusted).
    #[serde(default)]
    pub batches: u64,
    #[serde(default)]
    pub records: u64,
    /// Of those, the batches and records at or after `stop` (what recovery removes).
    #[serde(default)]
    pub removed_batches: u64,
    #[serde(default)]
    pub removed_records: u64,
    /// The producer state's map end the recovery leaves, where its end snapshot is taken
    /// (`LogLoader.recoverSegment` → `takeSnapshot`), when it is not `next_offset`:
    /// `LogSegment.recover` updates the state (and `updateMapEndOffset`) only for batches
    /// of magic 2, and not for a control batch whose record throws — after legacy entries
    /// or such a batch the state ends before the segment does (at the base without a v2
    /// batch). `None`: at `next_offset` (a bundle of an earlier klogscan says nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_end: Option<i64>,
    /// The first control batch with a producer id whose record the producer-state update
    /// cannot take, before recovery stops: kept by the recovery, and thrown at by every
    /// replay that reads it ([`ControlThrow`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_throw: Option<Box<ControlThrow>>,
    /// The first ABORT whose append to the transaction index throws, before recovery
    /// stops ([`TxnIndexThrow`]): every recovery of the segment fails the load there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn_index_throw: Option<Box<TxnIndexThrow>>,
}

/// An ABORT marker whose aborted transaction `LogSegment.recover` cannot append to the
/// segment's transaction index: the recovery resets the index, then its producer-state
/// update (`updateProducerState` → `updateTxnIndex`) appends an `AbortedTxn` for every
/// ABORT that completes a transaction (`ProducerAppendInfo.appendEndTxnMarker`: the
/// producer had one open), whose last offset is the marker's offset; and
/// `TransactionIndex.append` throws `IllegalArgumentException` when it is not above the
/// last appended one's. `recover` catches only `CorruptRecordException` and
/// `InvalidRecordException`, and neither `recoverLog` nor `LogLoader.loadSegmentFiles`
/// catches it: the load fails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TxnIndexThrow {
    /// Byte position and offset of the ABORT marker.
    pub position: u64,
    pub offset: i64,
    /// The last offset of the aborted transaction appended before it in the recovery.
    pub last: i64,
}

/// The reason a segment recovered at load (missing or corrupt offset index) makes the load
/// fail: its recovery throws `InvalidOffsetException`, which `LogLoader.loadSegmentFiles`
/// does not catch (only `recoverLog` turns it into a truncation), so `UnifiedLog` is not
/// created and `LogManager.loadLogs` fails (the broker does not start).
pub(crate) fn throws_at_load(s: &plan::SegmentInput) -> Option<&StopReason> {
    if !(s.missing_index || s.corrupt_index.is_some()) {
        return None;
    }
    let (_, why, _) = s.walk.as_ref()?.stop.as_deref()?;
    why.invalid_offset().then_some(why)
}

/// One segment as the walk left it: its name, base offset, and how recovery would end on
/// it (`None`: the file could not be read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SegmentWalk {
    /// The `.log` file name (of the broker's form: kept as its base offset).
    pub(crate) name: crate::partition::walked::SegmentName,
    pub base_offset: i64,
    pub walk: Option<RecoverWalk>,
}

/// Feeds [`RecoverWalk`] from a segment's batches in file order, as `LogSegment.recover`
/// meets them. The walk itself decides where the first entry that fails `ensureValid` (or
/// whose control record throws) is — [`RecoverCheck::finish`] takes it — and gives every
/// batch before that point to [`RecoverCheck::batch`]; the check adds what only the order
/// of valid batches shows: a non-increasing offset where an index entry is appended
/// (`InvalidOffsetException`: the segment is emptied) and offsets outside the segment's
/// int32 range (a split).
#[derive(Debug, Clone)]
pub(crate) struct RecoverCheck {
    base: i64,
    next: i64,
    since: u64,
    last_indexed: Option<i64>,
    /// The largest batch max timestamp so far and the last offset of its batch
    /// (`maxTimestampAndOffsetSoFar`), and the time index's last entry once one is
    /// appended (`TimeIndex.lastEntry`): `timeIndex.maybeAppend` at each index point and
    /// at the end throws `InvalidOffsetException` for an offset below that entry's.
    max_timestamp: (i64, i64),
    time_last: Option<(i64, i64)>,
    overflow: bool,
    emptied: Option<StopReason>,
    /// `(batches, records)` read, and of those before the first bad entry.
    read: (u64, u64),
    kept: (u64, u64),
    /// The producer state's map end so far (`None`: no v2 batch yet), once fed
    /// ([`RecoverCheck::producer_state`]: a swapped-in segment's walk is not).
    state: Option<Option<i64>>,
    control_throw: Option<ControlThrow>,
    /// The last offset of the last aborted transaction the recovery appends to the
    /// transaction index (`TransactionIndex.lastOffset`; reset at the start), and the
    /// first append that throws.
    aborted_last: Option<i64>,
    txn_index_throw: Option<TxnIndexThrow>,
    /// The offset of the first batch after the first bad entry.
    first_removed: Option<i64>,
}

impl RecoverCheck {
    /// A check of the segment whose base offset is `base`.
    pub fn new(base: i64) -> Self {
        RecoverCheck {
            base,
            next: base,
            since: 0,
            last_indexed: None,
            max_timestamp: (-1, -1),
            time_last: None,
            overflow: false,
            emptied: None,
            read: (0, 0),
            kept: (0, 0),
            state: None,
            control_throw: None,
            aborted_last: None,
            txn_index_throw: None,
            first_removed: None,
        }
    }

    /// The producer-state update of batch `ev`, kept by the recovery and given to
    /// [`RecoverCheck::batch`] first (`LogSegment.recover` → `updateProducerState`, for
    /// magic ≥ 2 only): the map end moves past it, unless its control record throws
    /// ([`ControlThrow`]; the first such batch ends the updates). `txn_open`: producer
    /// `ev.producer_id` has a transaction open before `ev`, so an ABORT appends to the
    /// transaction index ([`TxnIndexThrow`]; the first throw ends the updates too).
    pub fn producer_state(&mut self, ev: &crate::partition::event::BatchEvent, txn_open: bool) {
        let end = self.state.get_or_insert(None);
        let stopped = self.control_throw.is_some() || self.txn_index_throw.is_some();
        if self.emptied.is_some() || stopped || ev.magic < 2 {
            return;
        }
        if let Some(t) = ControlThrow::of(ev) {
            self.control_throw = Some(t);
            return;
        }
        // `updateTxnIndex`: only an ABORT that completes a transaction appends.
        if txn_open && ev.has_producer_id() && ev.marker().is_some_and(|(commit, _)| !commit) {
            if let Some(last) = self.aborted_last.filter(|&l| l >= ev.base_offset) {
                self.txn_index_throw = Some(TxnIndexThrow {
                    position: ev.position,
                    offset: ev.base_offset,
                    last,
                });
                return;
            }
            self.aborted_last = Some(ev.base_offset);
        }
        *end = Some(ev.last_offset.saturating_add(1));
    }

    /// A batch at or after the first bad entry, at `offset` (the first names the stop's
    /// first removed offset when the stop itself does not: after a malformed marker).
    pub fn removed(&mut self, offset: i64) {
        self.first_removed.get_or_insert(offset);
    }

    /// Count one batch the walk read (every batch, before or after the first bad entry):
    /// its records when its CRC holds; `kept` when it lies before the first bad entry.
    pub fn count(&mut self, records: i32, crc_valid: bool, kept: bool) {
        let r = if crc_valid { records.max(0) as u64 } else { 0 };
        self.read = (self.read.0 + 1, self.read.1 + r);
        if kept {
            self.kept = (self.kept.0 + 1, self.kept.1 + r);
        }
    }

    /// `TimeIndex.maybeAppend(maxTimestampSoFar, shallowOffsetOfMaxTimestampSoFar)`: `Err`
    /// with why when it throws `InvalidOffsetException`.
    fn time_index_append(&mut self) -> Result<(), StopReason> {
        let (ts, offset) = self.max_timestamp;
        if let Some((_, last)) = self.time_last.filter(|&(_, last)| offset < last) {
            return Err(StopReason::TimeIndexBelowLast { offset, last });
        }
        if ts > self.time_last.map_or(-1, |t| t.0) {
            self.time_last = Some((ts, offset));
        }
        Ok(())
    }

    /// One batch that passed `ensureValid`, before the segment's first bad entry, with its
    /// max timestamp (the batch header's; a legacy message's own).
    pub fn batch(&mut self, last_offset: i64, max_timestamp: i64, size: u32) {
        if self.emptied.is_some() {
            return;
        }
        if max_timestamp > self.max_timestamp.0 {
            self.max_timestamp = (max_timestamp, last_offset);
        }
        let rel = last_offset.checked_sub(self.base);
        if rel.is_none_or(|r| !(0..=i32::MAX as i64).contains(&r)) {
            self.overflow = true;
        }
        if self.since > INDEX_INTERVAL_BYTES {
            if let Some(l) = self.last_indexed.filter(|&l| last_offset <= l) {
                self.emptied = Some(StopReason::OffsetNotAboveIndexed {
                    offset: last_offset,
                    last: l,
                });
                return;
            }
            self.last_indexed = Some(last_offset);
            if let Err(why) = self.time_index_append() {
                self.emptied = Some(why);
                return;
            }
            self.since = 0;
        }
        self.since += size as u64;
        self.next = last_offset.saturating_add(1);
    }

    /// Conclude with the walk's first bad entry (`(position, why, offset)`), where its bytes
    /// stop framing (`tail`: `(position, how)`) and the number of bytes read.
    pub fn finish(
        mut self,
        first_bad: Option<(u64, StopReason, Option<i64>)>,
        tail: Option<(u64, StopReason)>,
        len: u64,
    ) -> RecoverWalk {
        let tail = tail.map(Box::new);
        // A malformed marker last in its file: the recovery keeps it and truncates nothing.
        let first_bad = first_bad
            .filter(|(p, why, _)| !(*why == StopReason::MalformedControl && *p >= len))
            .map(|(p, why, o)| (p, why, o.or(self.first_removed)));
        let state_end = match self.state {
            Some(end) if self.emptied.is_none() => {
                Some(end.unwrap_or(self.base)).filter(|&e| e != self.next)
            }
            _ => None,
        };
        let control_throw = self.control_throw.take().map(Box::new);
        let txn_index_throw = self.txn_index_throw.take().map(Box::new);
        // The time index's last append, after the truncation (`maybeAppend(…, true)`).
        if self.emptied.is_none()
            && let Err(why) = self.time_index_append()
        {
            self.emptied = Some(why);
        }
        let (batches, records) = self.read;
        match self.emptied {
            Some(why) => RecoverWalk {
                stop: Some(Box::new((0, why, Some(self.base)))),
                tail,
                next_offset: self.base,
                len,
                overflow: self.overflow,
                batches,
                records,
                removed_batches: batches,
                removed_records: records,
                state_end: None,
                control_throw: None,
                // Thrown before the index append that empties the segment.
                txn_index_throw,
            },
            None => RecoverWalk {
                removed_batches: if first_bad.is_some() {
                    batches - self.kept.0
                } else {
                    0
                },
                removed_records: if first_bad.is_some() {
                    records - self.kept.1
                } else {
                    0
                },
                stop: first_bad.map(Box::new),
                tail,
                next_offset: self.next,
                len,
                overflow: self.overflow,
                batches,
                records,
                state_end,
                control_throw,
                txn_index_throw,
            },
        }
    }
}
