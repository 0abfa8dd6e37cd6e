//! The per-partition stage's typed results: the options of a scan, each partition's report
//! ([`PartitionReport`]), the versioned form that crosses processes ([`PartitionResult`]),
//! and the stage's whole output ([`PartitionStage`]) that the cluster stage turns into the
//! report (`cluster::report::ScanReport`).

use crate::finding::{Finding, Severity};
use crate::partition::state::{ReplayOptions, ReplayOutcome};
use crate::read::format;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod lean;
pub(crate) use lean::Lean;
mod carried;
pub(crate) use carried::Carried;

/// Options of a scan.
///
/// Start from [`ScanOptions::default`] and change what differs with the `with_*` setters
/// (each takes and returns the options, so they chain):
///
/// ```
/// use klogscan::results::ScanOptions;
/// let opts = ScanOptions::default().with_deep(true).with_threads(2).with_topic("orders*");
/// assert_eq!(opts.threads, Some(2));
/// ```
///
/// The fields stay public for reading and for `opts.field = value;`, but the struct is
/// `#[non_exhaustive]`: outside this crate it cannot be built by a struct literal, so a new
/// option never breaks a caller.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScanOptions {
    /// Verify batch CRCs (on by default; `--no-crc` turns it off).
    pub check_crc: bool,
    /// Decode records (decompressing) and check record-level structure (`--deep`).
    pub deep: bool,
    /// Worker threads (`None`: one per core).
    pub threads: Option<usize>,
    /// Reference time in ms (`--now`); default: newest batch timestamp of the log dir.
    pub now_ms: Option<i64>,
    /// Replay tunables (hanging-transaction threshold).
    pub replay: ReplayOptions,
    /// Only topics matching this glob (`*`, `?`, `[...]` classes, `\` escapes the next
    /// character).
    pub topic: Option<String>,
    /// Only this partition number.
    pub partition: Option<i32>,
    /// Read at most this many bytes of each segment.
    pub max_bytes: Option<u64>,
    /// Cap on one batch's decompressed size.
    pub max_decompressed: usize,
    /// Called as work completes (for progress bars).
    pub progress: Progress,
    /// Capture the replayed producer state at each `.snapshot` file's offset (for `verify`).
    pub capture_snapshots: bool,
    /// Keep every producer's final state ([`PartitionReport::producer_states`]; for
    /// `producers`); when false only their number is kept and each partition's producer
    /// table is freed as soon as its batches are replayed.
    pub keep_producers: bool,
    /// Keep every joined cluster transaction in `ScanReport::transactions` (for
    /// `txns --cluster`); when false only their statistics and findings are kept
    /// (300 000 transactions cost ≈ 400 bytes each as `ClusterTxn`s).
    pub keep_cluster_txns: bool,
    /// Topics declared compacted (`--compacted`), besides what the inputs prove (internal
    /// topics, the log dir's `cleaner-offset-checkpoint`, `cleanup.policy` records of the
    /// same cluster's KRaft metadata log).
    pub compacted_topics: Vec<String>,
    /// Check each segment's offset, time and transaction index against the scan's own walk
    /// of its `.log` (for `verify`; not a second read of the log), keeping per segment only
    /// the verdicts (in the report's internal part), nothing per log entry.
    pub collect_index_verdicts: bool,
    /// `--mmap`: whether sealed segments may be mapped ([`crate::read::segment::policy`]).
    pub mmap: crate::read::segment::MmapMode,
    /// Budget of decompressed bytes per segment (`--max-decompressed-per-file`): once
    /// spent, later compressed batches of the segment are not decompressed (reported as
    /// `decompression_budget_exceeded`). Bounds the work crafted compression can cause
    /// (400 zstd batches of 256 MiB each fit in 3 MB).
    pub max_decompressed_per_file: u64,
    /// `--follow`: follow symlinks met during discovery (see
    /// [`crate::discover::layout::DiscoverOptions`]).
    pub follow_symlinks: bool,
    /// The topic-partitions held by more than one selected directory (copies from several
    /// brokers, `-future` dirs): their walks keep a batch key per batch for the replica
    /// comparison ([`crate::partition::walked`]). Filled by the scan from the inventory.
    pub copied_partitions: crate::partition::walked::CopiedPartitions,
    /// `--remote-storage`: the tiered storage's remote segments (`cluster::tiering`).
    pub remote_storage: Option<PathBuf>,
    /// Collect each partition's timeline during its walk ([`PartitionReport::timeline`],
    /// what the HTML report draws; bounded per partition, see
    /// [`crate::partition::timeline`]). Off by default: the other outputs draw none.
    pub collect_timelines: bool,
    /// With `collect_timelines`: producers that get a lane of their own in every
    /// timeline, however many producers share the partition (`--producer-id`).
    pub timeline_producers: Vec<i64>,
    /// `--cluster-id ID=PATH`: the cluster of directories copied without
    /// `meta.properties` (`discover::identity::given`), applied to the inventory
    /// after discovery.
    pub cluster_ids: Vec<crate::discover::identity::GivenClusterId>,
    /// `--coordinator-tolerance`: how far (ms) a partition's marker or open data may lie
    /// outside a coordinator transaction's window and still be that transaction's, in the
    /// cross-partition join (`cluster::txns::TxnOptions::coordinator_tolerance_ms`).
    pub coordinator_tolerance_ms: i64,
    /// `--marker-delay`: without the coordinator's records (TV0/1), how long after the
    /// coordinator's Prepare record a transaction's first marker may land
    /// (`cluster::txns::TxnOptions::marker_delay_ms`).
    pub marker_delay_ms: i64,
    /// How many bytes of a `__transaction_state` partition's records its walk keeps for
    /// the cluster stage ([`crate::partition::walked`]); a partition holding more keeps
    /// none, and the cluster stage reads its segments again, streaming, instead.
    /// `collect` keeps them all (a bundle carries them).
    pub keep_coordinator_bytes: u64,
    /// `verify --broker-version`: the release whose behaviour the cluster-stage rules that
    /// depend on it describe (`stray_replica`, the `group_load_failure`s scoped before a
    /// fix); `None`: unknown, every release range is described.
    pub broker_version: Option<crate::partition::recovery::BrokerVersion>,
}

/// Default of [`ScanOptions::keep_coordinator_bytes`]: 16 MiB (≈ 55 000 records).
pub const DEFAULT_KEEP_COORDINATOR_BYTES: u64 = 16 << 20;

/// Default of [`ScanOptions::coordinator_tolerance_ms`]: 30 s.
pub const DEFAULT_COORDINATOR_TOLERANCE_MS: i64 = 30_000;
/// Default of [`ScanOptions::marker_delay_ms`]: 100 ms.
pub const DEFAULT_MARKER_DELAY_MS: i64 = 100;

impl ScanOptions {
    /// Verify batch CRCs ([`Self::check_crc`]).
    #[must_use]
    pub fn with_check_crc(mut self, on: bool) -> Self {
        self.check_crc = on;
        self
    }
    /// Decode records and check record-level structure ([`Self::deep`]).
    #[must_use]
    pub fn with_deep(mut self, on: bool) -> Self {
        self.deep = on;
        self
    }
    /// Worker threads ([`Self::threads`]; `None`: one per core).
    #[must_use]
    pub fn with_threads(mut self, n: impl Into<Option<usize>>) -> Self {
        self.threads = n.into();
        self
    }
    /// Reference time in ms ([`Self::now_ms`]; `None`: the newest batch timestamp).
    #[must_use]
    pub fn with_now_ms(mut self, ms: impl Into<Option<i64>>) -> Self {
        self.now_ms = ms.into();
        self
    }
    /// Replay tunables ([`Self::replay`]).
    #[must_use]
    pub fn with_replay(mut self, replay: ReplayOptions) -> Self {
        self.replay = replay;
        self
    }
    /// Age after which an open transaction is reported as hanging (the one replay
    /// tunable, `ReplayOptions::hanging_after_ms`).
    #[must_use]
    pub fn with_hanging_after_ms(mut self, ms: i64) -> Self {
        self.replay.hanging_after_ms = ms;
        self
    }
    /// Only topics matching this glob ([`Self::topic`]).
    #[must_use]
    pub fn with_topic(mut self, glob: impl Into<String>) -> Self {
        self.topic = Some(glob.into());
        self
    }
    /// Only this partition number ([`Self::partition`]; `None`: every partition).
    #[must_use]
    pub fn with_partition(mut self, partition: impl Into<Option<i32>>) -> Self {
        self.partition = partition.into();
        self
    }
    /// Read at most this many bytes of each segment ([`Self::max_bytes`]; `None`: all).
    #[must_use]
    pub fn with_max_bytes(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.max_bytes = bytes.into();
        self
    }
    /// Cap on one batch's decompressed size ([`Self::max_decompressed`]).
    #[must_use]
    pub fn with_max_decompressed(mut self, bytes: usize) -> Self {
        self.max_decompressed = bytes;
        self
    }
    /// Budget of decompressed bytes per segment ([`Self::max_decompressed_per_file`]).
    #[must_use]
    pub fn with_max_decompressed_per_file(mut self, bytes: u64) -> Self {
        self.max_decompressed_per_file = bytes;
        self
    }
    /// The progress callback ([`Self::progress`]).
    #[must_use]
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = progress;
        self
    }
    /// Capture the producer state at each snapshot's offset ([`Self::capture_snapshots`]).
    #[must_use]
    pub fn with_capture_snapshots(mut self, on: bool) -> Self {
        self.capture_snapshots = on;
        self
    }
    /// Keep every producer's final state ([`Self::keep_producers`]).
    #[must_use]
    pub fn with_keep_producers(mut self, on: bool) -> Self {
        self.keep_producers = on;
        self
    }
    /// Keep every joined cluster transaction ([`Self::keep_cluster_txns`]).
    #[must_use]
    pub fn with_keep_cluster_txns(mut self, on: bool) -> Self {
        self.keep_cluster_txns = on;
        self
    }
    /// Topics declared compacted ([`Self::compacted_topics`]), replacing any set before.
    #[must_use]
    pub fn with_compacted_topics<S: Into<String>>(
        mut self,
        topics: impl IntoIterator<Item = S>,
    ) -> Self {
        self.compacted_topics = topics.into_iter().map(Into::into).collect();
        self
    }
    /// Check each segment's indexes against the walk ([`Self::collect_index_verdicts`]).
    #[must_use]
    pub fn with_collect_index_verdicts(mut self, on: bool) -> Self {
        self.collect_index_verdicts = on;
        self
    }
    /// Whether sealed segments may be mapped ([`Self::mmap`]).
    #[must_use]
    pub fn with_mmap(mut self, mode: crate::read::segment::MmapMode) -> Self {
        self.mmap = mode;
        self
    }
    /// Follow symlinks met during discovery ([`Self::follow_symlinks`]).
    #[must_use]
    pub fn with_follow_symlinks(mut self, on: bool) -> Self {
        self.follow_symlinks = on;
        self
    }
    /// The tiered storage's remote segments ([`Self::remote_storage`]; `None`: none).
    #[must_use]
    pub fn with_remote_storage(mut self, root: impl Into<Option<PathBuf>>) -> Self {
        self.remote_storage = root.into();
        self
    }
    /// The cluster of directories copied without `meta.properties`
    /// ([`Self::cluster_ids`], `--cluster-id ID=PATH`).
    #[must_use]
    pub fn with_cluster_ids(
        mut self,
        ids: impl IntoIterator<Item = crate::discover::identity::GivenClusterId>,
    ) -> Self {
        self.cluster_ids = ids.into_iter().collect();
        self
    }
    /// Collect each partition's timeline during its walk ([`Self::collect_timelines`]).
    #[must_use]
    pub fn with_collect_timelines(mut self, on: bool) -> Self {
        self.collect_timelines = on;
        self
    }
    /// Producers with a lane of their own in every timeline ([`Self::timeline_producers`]).
    #[must_use]
    pub fn with_timeline_producers(mut self, ids: impl IntoIterator<Item = i64>) -> Self {
        self.timeline_producers = ids.into_iter().collect();
        self
    }
    /// Bytes of a `__transaction_state` partition's records its walk keeps
    /// ([`Self::keep_coordinator_bytes`]).
    #[must_use]
    pub fn with_keep_coordinator_bytes(mut self, bytes: u64) -> Self {
        self.keep_coordinator_bytes = bytes;
        self
    }

    /// Whether the walk of a partition keeps its batch keys (see
    /// [`Self::copied_partitions`]).
    pub(crate) fn collect_batch_keys(
        &self,
        ctx: &crate::partition::state::PartitionContext,
    ) -> bool {
        self.copied_partitions.contains(&ctx.topic, ctx.partition)
    }
}

/// Default of [`ScanOptions::max_decompressed_per_file`]: 4 GiB (16 batches at the
/// per-batch cap; real segments of 1 GiB decompress to a few GiB at most).
pub const DEFAULT_MAX_DECOMPRESSED_PER_FILE: u64 = 4 << 30;

/// What [`Progress`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressUpdate {
    /// The scan starts: totals over the selected partitions.
    Start { partitions: u64, bytes: u64 },
    /// A segment was read.
    Bytes(u64),
    /// A partition was finished.
    PartitionDone,
}

/// A progress callback (cheap to clone; a no-op by default).
#[derive(Clone, Default)]
pub struct Progress(Option<std::sync::Arc<dyn Fn(ProgressUpdate) + Send + Sync>>);

impl Progress {
    /// Report to `f`.
    pub fn new(f: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        Progress(Some(std::sync::Arc::new(f)))
    }
    /// Is anything listening (a caller may skip work done only for the report)?
    pub(crate) fn is_on(&self) -> bool {
        self.0.is_some()
    }
    pub(crate) fn emit(&self, u: ProgressUpdate) {
        if let Some(f) = &self.0 {
            f(u)
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(callback)"
        } else {
            "Progress(none)"
        })
    }
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            check_crc: true,
            deep: false,
            threads: None,
            now_ms: None,
            replay: ReplayOptions::default(),
            topic: None,
            partition: None,
            max_bytes: None,
            max_decompressed: format::codec::DEFAULT_MAX_DECOMPRESSED,
            progress: Progress::default(),
            capture_snapshots: false,
            keep_producers: true,
            keep_cluster_txns: true,
            collect_index_verdicts: false,
            mmap: crate::read::segment::MmapMode::Auto,
            max_decompressed_per_file: DEFAULT_MAX_DECOMPRESSED_PER_FILE,
            follow_symlinks: false,
            compacted_topics: Vec::new(),
            copied_partitions: Default::default(),
            remote_storage: None,
            collect_timelines: false,
            timeline_producers: Vec::new(),
            cluster_ids: Vec::new(),
            coordinator_tolerance_ms: DEFAULT_COORDINATOR_TOLERANCE_MS,
            marker_delay_ms: DEFAULT_MARKER_DELAY_MS,
            keep_coordinator_bytes: DEFAULT_KEEP_COORDINATOR_BYTES,
            broker_version: None,
        }
    }
}

/// Transaction counts of a partition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnCounts {
    pub committed: u64,
    pub aborted: u64,
    pub open: u64,
}

/// Where a broker's recovery would truncate a partition's log, if it recovered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    pub segment: String,
    pub position: u64,
    /// Offset of the first batch that would be removed (when one is readable there).
    pub offset: Option<i64>,
    pub reason: String,
}

/// The per-partition part of the report. It reads back (`Deserialize`) from its JSON
/// form; the fields not in that form (the replay outcome, the walk's positions) come back
/// empty: [`PartitionResult`] carries what the cluster checks need besides.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PartitionReport {
    pub topic: String,
    pub partition: i32,
    pub path: String,
    pub segments: usize,
    pub batches: u64,
    /// Every record, control records included.
    pub records: u64,
    pub control_batches: u64,
    pub bytes: u64,
    pub log_start_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub last_stable_offset: Option<i64>,
    /// Reference time used for the hanging-transaction rule (ms).
    pub ref_time: i64,
    pub transactions: TxnCounts,
    pub producers: usize,
    /// `--max-bytes` stopped the walk inside a segment: the analysis covers the log up to
    /// there (later segments are not replayed), and no verdict rests on the unread bytes
    /// (no truncation at the limit, no hanging transaction, no LSO).
    pub partially_read: bool,
    /// First place a broker's recovery would truncate (first corrupt batch or bad tail;
    /// boxed: rare, and every report is kept to the end of the command).
    pub truncation: Option<Box<Truncation>>,
    /// Set when where recovery truncates cannot be known, and why (the same model and words
    /// as `verify`'s `outcome_unknown`): with `--no-crc` no CRC was checked, while
    /// `LogSegment.recover` checks every batch's CRC on the segments it runs on. `truncation`
    /// is then the latest point recovery can stop at (or `None`: it may still stop anywhere
    /// in the recovered segments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation_unknown: Option<String>,
    /// Set when the next load fails before it recovers anything, and why (the same model
    /// and words as `verify`'s `load_failure`: `Exception: message`): since 3.0 the first
    /// pass of `LogLoader.load` reads every `.log.swap` segment's end before any recovery.
    /// `truncation` is then `None`: no recovery runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_failure: Option<String>,
    /// This partition's entry in the log dir's `replication-offset-checkpoint` (the high
    /// watermark as last checkpointed; `None`: no entry, no readable checkpoint, or a file
    /// named on its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_watermark: Option<i64>,
    /// Cluster, broker, log dir, path and copy kind of this directory (see
    /// `crate::discover::identity`); every finding of the partition carries the same.
    pub source: crate::finding::Source,
    /// Whether the partition is treated as compacted (`null`: unknown), and why:
    /// `internal topic`, `--compacted`, `cleaner-offset-checkpoint`, or the cluster's KRaft
    /// metadata log's effective policy (`cleanup.policy …`, or `log.cleanup.policy …` with
    /// the broker level that decided: `discover::compaction::Reason::describe`).
    pub compacted: Option<bool>,
    pub compacted_from: Option<String>,
    /// What the analysis hands the later stages besides the JSON form (replay outcome,
    /// recovery plan, what the walk kept for the cluster checks); read it with the
    /// accessors ([`Self::outcome`], [`Self::leader_epochs`], …).
    #[serde(skip)]
    pub(crate) carried: Carried,
    /// Tiered storage: where the partition's history lives, remote and local (set by
    /// `cluster::tiering` for partitions with `__remote_log_metadata` events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiered: Option<Box<TieredRanges>>,
}

/// Why a partition is treated as compacted ([`PartitionReport::compaction`]); in a
/// finding's evidence as `stated` or `cleaner_traces`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compaction {
    /// The inputs state the policy ([`PartitionReport::compacted`] is `Some(true)`: an
    /// internal topic, `--compacted`, the `cleaner-offset-checkpoint`, the metadata log's
    /// `cleanup.policy`).
    Stated,
    /// Nothing states the policy, but the batches carry the log cleaner's traces
    /// ([`ReplayOutcome::cleaner_traces`]): the verdict rests on that reading. Kafka's
    /// `LogCleanerTest` cleans through `Cleaner.clean` directly, so its data has no
    /// `cleaner-offset-checkpoint` (only `LogCleanerManager.doneCleaning` writes one); a
    /// partition directory handed in without its log dir has none either.
    CleanerTraces,
}

impl PartitionReport {
    /// The producer-state replay's outcome: every producer's final state (with
    /// [`ScanOptions::keep_producers`]), the open and aborted transactions, the statistics.
    pub fn outcome(&self) -> &ReplayOutcome {
        &self.carried.outcome
    }
    /// Whether the partition is treated as compacted, and on what ground: the same reading
    /// the producer-state replay made (`Replay::treated_as_compacted`): the stated policy,
    /// else the cleaner's traces in the batches; `None` when the policy is stated as
    /// `delete`, or unknown with no trace of the cleaner.
    pub fn compaction(&self) -> Option<Compaction> {
        match self.compacted {
            Some(true) => Some(Compaction::Stated),
            Some(false) => None,
            None => self
                .carried
                .outcome
                .cleaner_traces
                .then_some(Compaction::CleanerTraces),
        }
    }
    /// Every producer's final state (empty unless [`ScanOptions::keep_producers`]).
    pub fn producer_states(&self) -> &[crate::partition::state::ProducerState] {
        &self.carried.outcome.producers
    }
    /// Newest batch timestamp seen (`None`: no batch was read).
    pub fn max_timestamp(&self) -> Option<i64> {
        (self.carried.max_timestamp != i64::MIN).then_some(self.carried.max_timestamp)
    }
    /// Offset of the first batch (may be above the first segment's base offset).
    pub fn first_offset(&self) -> Option<i64> {
        self.carried.first_offset
    }
    /// The log dir holding the partition directory (`None`: a file named on its own).
    pub fn log_dir(&self) -> Option<&std::path::Path> {
        self.carried.log_dir.as_deref()
    }
    /// `(leaderEpoch, startOffset)` as a broker rebuilds the leader-epoch cache from the
    /// batches (`LeaderEpochFileCache.assign`).
    pub fn leader_epochs(&self) -> &[(i32, i64)] {
        &self.carried.leader_epochs
    }
    /// What the walk kept for the cluster checks (see [`crate::partition::walked`]).
    pub fn cluster_inputs(&self) -> &crate::partition::walked::ClusterInputs {
        &self.carried.cluster_inputs
    }
    /// The file names of the partition's segments with a `.log`, in walk order: what the
    /// segment numbers of [`Self::cluster_inputs`] index.
    pub fn segment_names(&self) -> &crate::partition::walked::SegmentNames {
        &self.carried.segment_names
    }
    /// With [`ScanOptions::collect_timelines`]: what the HTML timeline draws.
    pub fn timeline(&self) -> Option<&crate::partition::timeline::Timeline> {
        self.carried.timeline()
    }
}

/// A tiered partition's offsets: the log start, the remote segments a fetch can read
/// (COPY_SEGMENT_FINISHED), the local log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TieredRanges {
    /// The `log-start-offset-checkpoint` entry.
    pub log_start_offset: Option<i64>,
    /// `[start, end]` of each finished remote segment, ascending.
    pub remote: Vec<(i64, i64)>,
    /// The first local segment's base offset.
    pub local_log_start_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    /// With `--remote-storage`: what the scan replayed of the remote segments before the
    /// local log ([`crate::partition::remote`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed: Option<crate::partition::remote::RemoteReplayed>,
}

/// The version of [`PartitionResult`]'s serialised form.
pub const RESULT_FORMAT_VERSION: u32 = 1;

/// One partition's finished results as the cluster checks consume them
/// (`pipeline::run_cluster_checks`): written by the process that walked the
/// partition, read by the one that runs the cluster checks (`Serialize + Deserialize`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionResult {
    /// [`RESULT_FORMAT_VERSION`].
    pub format_version: u32,
    pub partition: PartitionReport,
    /// The partition's findings (the coordinator's confirmation amends its transaction
    /// findings).
    pub findings: Vec<Finding>,
    /// The partition's transactions, for the cluster-wide join.
    pub txns: Vec<crate::partition::state::txnrec::TxnRecord>,
    /// What the partition's walk kept for the cluster checks.
    pub cluster_inputs: crate::partition::walked::ClusterInputs,
    /// The file names of its segments with a `.log`, in walk order (what the segment
    /// numbers of `cluster_inputs` index). Absent from results of cluster inputs version
    /// 1, which held them (refused for that version).
    #[serde(default)]
    pub segment_names: crate::partition::walked::SegmentNames,
    /// The partition's timeline, when its walk collected one (absent from results
    /// written without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::partition::timeline::Timeline>,
}

/// Why `ScanReport::from_partition_results` refused its input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultFormatError {
    /// A result of another format version.
    #[error("partition result format version {found}, this build reads {RESULT_FORMAT_VERSION}")]
    Version { found: u32 },
    /// Cluster inputs of another format version.
    #[error(
        "cluster inputs format version {found}, this build reads {}",
        crate::partition::walked::FORMAT_VERSION
    )]
    InputsVersion { found: u32 },
}

/// Counts over the whole scan.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub partitions: usize,
    pub segments: usize,
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
    pub findings: SeverityCounts,
    /// The `-future`/`-delete`/`-stray` copies among `partitions`, and their findings
    /// (also counted in `findings`).
    pub non_live: crate::discover::identity::NonLiveCounts,
    /// With filters (`--topic`, `--producer-id`, …): the partitions analysed before the
    /// filters chose what is shown (`partitions` counts those shown). Absent without filters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysed: Option<usize>,
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SeverityCounts {
    pub error: u64,
    pub warning: u64,
    pub info: u64,
}

/// The result of a scan: what was read, what was concluded, what was found.
/// What the per-partition stage hands the cluster stage: every partition's report, their
/// findings (each partition's `finding_range` indexes them), the paths
/// that could not be read, and the summary.
#[derive(Debug, Clone, Default)]
pub struct PartitionStage {
    pub partitions: Vec<PartitionReport>,
    /// Sorted by topic, partition, offset within each partition's range.
    pub findings: Vec<Finding>,
    /// Paths that could not be read at all.
    pub errors: Vec<(PathBuf, String)>,
    pub summary: Summary,
}

pub(crate) fn severity_counts(findings: &[Finding]) -> SeverityCounts {
    let mut c = SeverityCounts::default();
    for f in findings {
        match f.severity {
            Severity::Error => c.error += 1,
            Severity::Warning => c.warning += 1,
            Severity::Info => c.info += 1,
        }
    }
    c
}

/// The summary of partitions and their findings.
pub(crate) fn summarise(partitions: &[PartitionReport], findings: &[Finding]) -> Summary {
    let mut s = Summary {
        partitions: partitions.len(),
        ..Default::default()
    };
    for p in partitions {
        s.segments += p.segments;
        s.batches += p.batches;
        s.records += p.records;
        s.bytes += p.bytes;
    }
    s.findings = severity_counts(findings);
    s.non_live = non_live_counts(partitions, findings);
    s
}

pub(crate) fn non_live_counts(
    partitions: &[PartitionReport],
    findings: &[Finding],
) -> crate::discover::identity::NonLiveCounts {
    crate::discover::identity::non_live_counts(partitions.iter().map(|p| &p.source), findings)
}
