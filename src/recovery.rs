//! The recovery model: what a broker's `LogLoader` does with a partition on its next start
//! (`kafka-format.md` §1.5, §9; `kafka-semantics.md` §3.3) — the analogue of Kafka's
//! `LogLoader.load` / `recoverLog` / `LogSegment.recover`
//! (storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java,
//! LogSegment.java).
//!
//! One model serves every command: the scan's walk of each segment ends in a
//! [`RecoverWalk`] (where `LogSegment.recover` would stop on that segment and why, fed by
//! [`RecoverCheck`] from the walk's own events — no second read of the bytes), and
//! `predict` decides, from the clean-shutdown marker and the recovery-point checkpoint,
//! which segments are recovered, where the log is truncated, which later segments are
//! deleted and which damage the broker never looks at. `scan`'s `truncation` and the wording
//! of its integrity findings, and `verify`'s prediction, both come from here.
use crate::finding::{Finding, Kind};
use crate::format::checkpoint::{OffsetCheckpointEntry, TextFileKind, parse_offset_checkpoint};
use crate::layout::LogDir;
use crate::segment::{FileClass, MmapMode, load};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `index.interval.bytes` default: recovery adds an index entry after more than this many
/// bytes (the point where a non-monotonic offset raises `InvalidOffsetException`).
pub(crate) const INDEX_INTERVAL_BYTES: u64 = 4096;

/// A broker version (`major.minor.patch`), for version-dependent load behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct BrokerVersion(pub u32, pub u32, pub u32);

impl std::str::FromStr for BrokerVersion {
    type Err = String;
    /// Parse `2.4.0`, `2.4`, `3` (missing parts are 0; a `-suffix` is ignored).
    fn from_str(s: &str) -> Result<Self, String> {
        let core = s.split(['-', '+']).next().unwrap_or("");
        let mut parts = core.split('.').map(|p| p.parse::<u32>());
        let mut next = |required: bool| match parts.next() {
            Some(Ok(n)) => Ok(n),
            None if !required => Ok(0),
            _ => Err(format!(
                "invalid broker version {s:?} (expected e.g. 2.4.0)"
            )),
        };
        Ok(BrokerVersion(next(true)?, next(false)?, next(false)?))
    }
}

impl std::fmt::Display for BrokerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

pub(crate) type Checkpoint = Option<Result<Vec<OffsetCheckpointEntry>, String>>;

/// The log-dir level files, read once per log dir.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogDirFiles {
    pub has_markers: bool,
    pub clean_shutdown: bool,
    pub recovery_points: Checkpoint,
    pub log_starts: Checkpoint,
    pub high_watermarks: Checkpoint,
}

fn read_checkpoint(path: Option<&Path>, kind: TextFileKind) -> Checkpoint {
    let path = path?;
    Some(
        match load(path, FileClass::Checkpoint, MmapMode::Never, None) {
            Ok(b) => parse_offset_checkpoint(&b, kind).map_err(|e| e.to_string()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        },
    )
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

impl LogDirFiles {
    /// `(clean shutdown, recovery point, log start checkpoint, high watermark)` of one
    /// partition. Without the broker's marker files the log dir is unknown: `None`s (the
    /// model then assumes an unclean shutdown from offset 0).
    pub(crate) fn partition_state(
        files: Option<&LogDirFiles>,
        topic: &str,
        partition: i32,
    ) -> (Option<bool>, Option<i64>, Option<i64>, Option<i64>) {
        match files.filter(|f| f.has_markers) {
            Some(f) => (
                Some(f.clean_shutdown),
                lookup(&f.recovery_points, topic, partition),
                lookup(&f.log_starts, topic, partition),
                lookup(&f.high_watermarks, topic, partition),
            ),
            None => (None, None, None, None),
        }
    }

    pub(crate) fn read(ld: &LogDir) -> LogDirFiles {
        LogDirFiles {
            has_markers: ld.has_markers(),
            clean_shutdown: ld.clean_shutdown.is_some(),
            recovery_points: read_checkpoint(
                ld.recovery_point_checkpoint.as_deref(),
                TextFileKind::RecoveryPointOffsetCheckpoint,
            ),
            log_starts: read_checkpoint(
                ld.log_start_offset_checkpoint.as_deref(),
                TextFileKind::LogStartOffsetCheckpoint,
            ),
            high_watermarks: read_checkpoint(
                ld.replication_offset_checkpoint.as_deref(),
                TextFileKind::ReplicationOffsetCheckpoint,
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
    /// `stray_dir`, `corrupt_snapshot`.
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
    /// `corrupt transaction index: …`, `corrupt offset index: …` (brokers < 2.3).
    pub reason: String,
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
    /// the log start offset).
    pub snapshot: Option<String>,
    pub snapshot_offset: Option<i64>,
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
    /// (a bare partition directory): the prediction then assumes an unclean shutdown.
    pub clean_shutdown: Option<bool>,
    /// This partition's entry in `recovery-point-offset-checkpoint` (`None`: no entry, or no
    /// readable checkpoint; the broker then uses 0).
    pub recovery_point: Option<i64>,
    /// `log-start-offset-checkpoint` entry.
    pub log_start_checkpoint: Option<i64>,
    /// `replication-offset-checkpoint` entry (high watermark).
    pub high_watermark: Option<i64>,
    /// First batch offset and log end offset as found.
    pub first_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    /// Log start offset and log end offset after loading.
    pub log_start_offset_after: Option<i64>,
    pub log_end_offset_after: Option<i64>,
    /// Leftovers, orphaned indexes and snapshots removed or renamed at startup.
    pub leftovers: Vec<LeftoverAction>,
    /// Segments recovered (indexes rebuilt, batches CRC-checked), in order.
    pub recovered_segments: Vec<SegmentRecovery>,
    /// The truncation, if recovery finds invalid bytes.
    pub truncation: Option<TruncationPrediction>,
    /// Segments deleted after the truncation (renamed `.deleted`, then removed).
    pub deleted_segments: Vec<String>,
    /// Corruption recovery would NOT see (segments it does not recover).
    pub unrecovered_corruption: Vec<String>,
    pub producer_state: ProducerRebuild,
    pub load_failure: Option<LoadFailure>,
    /// Set when the outcome of recovery cannot be predicted, and why: with `--no-crc` no
    /// CRC was checked, while `LogSegment.recover` checks every batch's CRC on the segments
    /// it runs on and stops at the first mismatch. `truncation` is then the latest point
    /// recovery can stop at (it may stop earlier, or where none is predicted),
    /// `deleted_segments` the fewest it deletes, and `log_end_offset_after` is `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome_unknown: Option<String>,
}

/// How `LogSegment.recover` would end on one segment (`kafka-format.md` §9: `ensureValid`
/// of the outer entry, `ensureOffsetInRange`, index appends every
/// `INDEX_INTERVAL_BYTES`, the producer-state update that decodes control records, the
/// tail). Built by [`RecoverCheck`] from the scan's walk of the segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecoverWalk {
    /// Where the file would be truncated to, when recovery stops before its end:
    /// `(byte position, why, offset of the first removed batch when readable)`.
    pub stop: Option<(u64, String, Option<i64>)>,
    /// Next offset after the last valid batch (base offset when none).
    pub next_offset: i64,
    /// File length (bytes read).
    pub len: u64,
    /// A batch whose offsets do not fit the base offset (recovery splits the segment).
    pub overflow: bool,
}

/// Why recovery stops at a batch whose CRC fails (`ensureValid`).
pub const CRC_STOP: &str = "CRC mismatch (CorruptRecordException)";

/// One segment as the walk left it: its name, base offset, and how recovery would end on
/// it (`None`: the file could not be read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SegmentWalk {
    pub name: String,
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
pub struct RecoverCheck {
    base: i64,
    next: i64,
    since: u64,
    last_indexed: Option<i64>,
    overflow: bool,
    emptied: Option<String>,
}

impl RecoverCheck {
    /// A check of the segment whose base offset is `base`.
    pub fn new(base: i64) -> Self {
        RecoverCheck {
            base,
            next: base,
            since: 0,
            last_indexed: None,
            overflow: false,
            emptied: None,
        }
    }

    /// One batch that passed `ensureValid`, before the segment's first bad entry.
    pub fn batch(&mut self, last_offset: i64, size: u32) {
        if self.emptied.is_some() {
            return;
        }
        let rel = last_offset.checked_sub(self.base);
        if rel.is_none_or(|r| !(0..=i32::MAX as i64).contains(&r)) {
            self.overflow = true;
        }
        if self.since > INDEX_INTERVAL_BYTES {
            if let Some(l) = self.last_indexed.filter(|&l| last_offset <= l) {
                self.emptied = Some(format!(
                    "offset {last_offset} not above the last indexed offset {l} (InvalidOffsetException): the segment is emptied"
                ));
                return;
            }
            self.last_indexed = Some(last_offset);
            self.since = 0;
        }
        self.since += size as u64;
        self.next = last_offset.saturating_add(1);
    }

    /// Conclude with the walk's first bad entry (`(position, why, offset)`) and the number
    /// of bytes read.
    pub fn finish(self, first_bad: Option<(u64, String, Option<i64>)>, len: u64) -> RecoverWalk {
        match self.emptied {
            Some(why) => RecoverWalk {
                stop: Some((0, why, Some(self.base))),
                next_offset: self.base,
                len,
                overflow: self.overflow,
            },
            None => RecoverWalk {
                stop: first_bad,
                next_offset: self.next,
                len,
                overflow: self.overflow,
            },
        }
    }
}

/// Which segments recovery runs on, where it truncates, what it deletes, and which damage
/// it never sees: the segment part of the prediction, shared by `scan` and `verify`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SegmentPlan {
    /// Recovered segments and why, in order.
    pub recovered: Vec<(String, String)>,
    /// The truncation that decides the log end (after an unclean shutdown: the first
    /// stop among the recovered segments; otherwise the first load-time recovery's).
    pub truncation: Option<TruncationPrediction>,
    /// Segments deleted after the truncation.
    pub deleted: Vec<String>,
    /// `(segment, position, why)` of damage in segments recovery does not run on.
    pub unrecovered: Vec<(String, u64, String)>,
    /// Log end offset after recovery (`None`: unchanged from the walk).
    pub log_end_after: Option<i64>,
    /// Every truncation made at load by a segment recovered for a missing or corrupt index
    /// (each truncates its own segment and deletes nothing after it).
    #[serde(default)]
    pub load_truncations: Vec<TruncationPrediction>,
    /// The directory is a `-delete` one: `recoverLog` never runs on it.
    #[serde(default)]
    pub delete_dir: bool,
}

impl SegmentPlan {
    /// What recovery does to the byte at `position` of `segment`: truncated there (or
    /// removed after the truncation point), deleted with a later segment, never looked at,
    /// or recovered without effect.
    pub fn fate(&self, segment: &str, position: u64) -> Fate {
        for t in self.truncation.iter().chain(&self.load_truncations) {
            if t.segment == segment && position >= t.position {
                return if position == t.position {
                    Fate::TruncatedHere
                } else {
                    Fate::RemovedByTruncation
                };
            }
        }
        if self.deleted.iter().any(|d| d == segment) {
            return Fate::Deleted;
        }
        if self.recovered.iter().any(|(s, _)| s == segment) {
            return Fate::Recovered;
        }
        Fate::NotRecovered
    }
}

impl SegmentPlan {
    /// The truncation made in `segment` (by the unclean pass or at load), if any.
    pub fn truncation_of(&self, segment: &str) -> Option<&TruncationPrediction> {
        self.truncation
            .iter()
            .chain(&self.load_truncations)
            .find(|t| t.segment == segment)
    }
}

/// See [`SegmentPlan::fate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fate {
    TruncatedHere,
    RemovedByTruncation,
    Deleted,
    Recovered,
    NotRecovered,
}

/// The load-time verdict of a segment's `.txnindex` (`LogSegment.sanityCheck` →
/// `TransactionIndex.sanityCheck`, run at every load whatever the shutdown state): the
/// reason LogLoader recovers the segment (`CorruptIndexException`), or `None`. The same
/// text `verify` reports, so both commands plan the same recovery. An unreadable file is
/// `None` here (the file checks report it).
pub fn txnindex_corruption(
    path: &Path,
    base_offset: i64,
    mode: crate::segment::MmapMode,
) -> Option<String> {
    let bytes = crate::segment::load(path, crate::segment::FileClass::Index, mode, None).ok()?;
    let t = crate::format::index::TxnIndex::new(&bytes, base_offset);
    let e = t.sanity_check().err()?;
    Some(format!(
        "corrupt transaction index: {}",
        e.kafka_message(&path.display().to_string())
    ))
}

/// Say in an integrity finding's `broker_behaviour` what the broker's recovery does with
/// the damaged bytes, from the plan: the truncation point itself, bytes removed with it,
/// a segment deleted after an earlier truncation, or damage no recovery looks at (then
/// the broker serves it, and the finding says what readers see). Other kinds, and
/// findings in recovered segments that do not stop recovery, are left as they are.
pub fn word_integrity_finding(
    f: &mut Finding,
    plan: &SegmentPlan,
    clean_shutdown: Option<bool>,
    recovery_point: Option<i64>,
) {
    if !matches!(
        f.kind,
        Kind::CrcMismatch
            | Kind::TruncatedBatch
            | Kind::TrailingBytes
            | Kind::PreallocatedTail
            | Kind::InvalidBatch
    ) {
        return;
    }
    let (Some(seg), Some(pos)) = (f.segment.clone(), f.position) else {
        return;
    };
    let on_append = match f.kind {
        Kind::CrcMismatch => "rejected on append (CorruptRecordException); ",
        Kind::InvalidBatch => {
            "rejected on append (InvalidRecordException / CorruptRecordException); "
        }
        _ => "",
    };
    let text = match plan.fate(&seg, pos) {
        Fate::TruncatedHere => {
            let Some(t) = plan.truncation_of(&seg) else {
                return;
            };
            let deletes = plan.truncation.as_ref() == Some(t);
            let why = plan
                .recovered
                .iter()
                .find(|(s, _)| *s == seg)
                .map_or("recovery", |(_, w)| w.as_str());
            let deleted = match if deletes { plan.deleted.len() } else { 0 } {
                0 => String::new(),
                1 => format!(" and deletes the later segment {}", plan.deleted[0]),
                n => format!(
                    " and deletes the {n} later segments ({} … {})",
                    plan.deleted[0],
                    plan.deleted[n - 1]
                ),
            };
            format!(
                "{on_append}on the next start LogSegment.recover runs on {seg} ({why}), stops here and truncates the file to byte {} (log end offset {}){deleted}",
                t.position, t.offset
            )
        }
        Fate::RemovedByTruncation => {
            let Some(t) = plan.truncation_of(&seg) else {
                return;
            };
            format!(
                "{on_append}removed on the next start: recovery truncates {seg} at byte {} ({}), before this point",
                t.position, t.reason
            )
        }
        Fate::Deleted => {
            let Some(t) = &plan.truncation else { return };
            format!(
                "{on_append}deleted on the next start with its whole segment: recovery truncates the earlier segment {} at byte {} ({}) and deletes every later segment",
                t.segment, t.position, t.reason
            )
        }
        Fate::NotRecovered => {
            let why = match clean_shutdown {
                _ if plan.delete_dir => {
                    "the directory is a -delete copy queued for deletion, so LogLoader does not recover it"
                        .to_string()
                }
                Some(true) => {
                    "the last shutdown was clean, so LogSegment.recover does not run on it"
                        .to_string()
                }
                _ => format!(
                    "the segment lies below the recovery point {}, so LogSegment.recover does not run on it",
                    recovery_point.unwrap_or(0)
                ),
            };
            let readers = match f.kind {
                Kind::CrcMismatch | Kind::InvalidBatch => {
                    "the broker serves the bytes as they are: a consumer (or follower) fetching this batch gets CorruptRecordException and cannot move past it without seeking"
                }
                _ => "the broker serves the segment as it is: readers stop at this position",
            };
            format!("{on_append}not noticed on load ({why}); {readers}")
        }
        Fate::Recovered => return,
    };
    f.broker_behaviour = text;
}

/// The segment part of `LogLoader`: load-time recoveries (missing or corrupt index, even
/// after a clean shutdown), then — after an unclean shutdown, unless the directory is a
/// `-delete` one — every segment from the one holding the recovery point, stopping at the
/// first that truncates (later segments are deleted).
pub fn plan_segments(
    clean_shutdown: Option<bool>,
    recovery_point: Option<i64>,
    delete_dir: bool,
    segs: &[SegmentInput],
    log_end_offset: Option<i64>,
) -> SegmentPlan {
    let unclean = clean_shutdown != Some(true) && !delete_dir;
    let rp = recovery_point.unwrap_or(0);
    // The segment holding the recovery point: the last whose base ≤ rp (else the first).
    let from_idx = segs.iter().rposition(|s| s.base <= rp).unwrap_or(0);
    let mut plan = SegmentPlan {
        log_end_after: log_end_offset,
        delete_dir,
        ..Default::default()
    };
    let mut load_truncations: Vec<TruncationPrediction> = Vec::new();
    for s in segs {
        let reason = if s.missing_index {
            Some("missing offset index".to_string())
        } else {
            s.corrupt_index.clone()
        };
        // LogLoader.loadSegmentFiles recovers such a segment at load whatever the
        // shutdown state (NoSuchFileException / CorruptIndexException): it truncates that
        // segment and deletes nothing after it.
        if let Some(reason) = reason {
            plan.recovered.push((s.name.clone(), reason));
            if let Some(t) = s.walk.as_ref().and_then(|w| truncation_of(s, w)) {
                load_truncations.push(t);
            }
        }
    }
    if unclean {
        for (i, s) in segs.iter().enumerate().skip(from_idx) {
            let reason = if clean_shutdown.is_none() {
                "shutdown state unknown (no log dir): assumed unclean".to_string()
            } else {
                "unclean shutdown (segment at or above the recovery point)".to_string()
            };
            let at_load = s.missing_index || s.corrupt_index.is_some();
            if at_load {
                // Already recovered (and truncated) at load: recovering it again in
                // recoverLog truncates 0 bytes, so it neither stops the pass nor deletes
                // later segments.
                continue;
            }
            plan.recovered.push((s.name.clone(), reason));
            if let Some(t) = s.walk.as_ref().and_then(|w| truncation_of(s, w)) {
                plan.log_end_after = Some(t.offset);
                plan.truncation = Some(t);
                plan.deleted = segs[i + 1..].iter().map(|s| s.name.clone()).collect();
                break;
            }
        }
    }
    // A load-time truncation of the last segment (that survives) sets the log end.
    if plan.truncation.is_none()
        && let Some(t) = load_truncations
            .iter()
            .find(|t| segs.last().is_some_and(|s| s.name == t.segment))
    {
        plan.log_end_after = Some(t.offset);
    }
    if plan.truncation.is_none() {
        plan.truncation = load_truncations.first().cloned();
    }
    // Load-time truncations in segments the unclean pass deleted do not matter.
    load_truncations.retain(|t| !plan.deleted.contains(&t.segment));
    plan.load_truncations = load_truncations;
    for s in segs {
        if plan.recovered.iter().any(|(r, _)| *r == s.name) {
            continue;
        }
        if let Some(w) = &s.walk
            && let Some((pos, why, _)) = &w.stop
        {
            plan.unrecovered.push((s.name.clone(), *pos, why.clone()));
        }
    }
    plan
}

/// One segment as the prediction sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SegmentInput {
    pub name: String,
    pub base: i64,
    pub missing_index: bool,
    /// `CorruptIndexException` at load (txn index sanity; offset/time index before 2.3).
    pub corrupt_index: Option<String>,
    pub walk: Option<RecoverWalk>,
}

/// A snapshot as the prediction sees it.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotInput {
    pub offset: i64,
    pub name: String,
    pub valid: bool,
}

/// Everything the prediction needs.
pub(crate) struct PredictInput<'a> {
    pub clean_shutdown: Option<bool>,
    pub recovery_point: Option<i64>,
    pub log_start_checkpoint: Option<i64>,
    pub high_watermark: Option<i64>,
    pub first_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub segments: Vec<SegmentInput>,
    pub snapshots: Vec<SnapshotInput>,
    pub leftovers: Vec<LeftoverAction>,
    pub load_rules: &'a [Finding],
    pub broker_version: Option<BrokerVersion>,
    pub producers: usize,
    pub open_transactions: usize,
    pub delete_dir: bool,
    /// The walk checked the CRCs (`ScanOptions::check_crc`): without it a recovered
    /// segment's stop point is unknown.
    pub crc_checked: bool,
}

pub(crate) fn predict(mut inp: PredictInput<'_>) -> RecoveryPrediction {
    let rp = inp.recovery_point.unwrap_or(0);
    let from_idx = inp.segments.iter().rposition(|s| s.base <= rp).unwrap_or(0);
    let segs = &inp.segments;
    let plan = plan_segments(
        inp.clean_shutdown,
        inp.recovery_point,
        inp.delete_dir,
        segs,
        inp.log_end_offset,
    );
    let recovered: Vec<SegmentRecovery> = plan
        .recovered
        .iter()
        .map(|(segment, reason)| SegmentRecovery {
            segment: segment.clone(),
            reason: reason.clone(),
        })
        .collect();
    let truncation = plan.truncation.clone();
    let mut deleted = plan.deleted.clone();
    let mut leo_after = plan.log_end_after;
    let outcome_unknown = crc_unknown(inp.crc_checked, &recovered);
    let unrecovered: Vec<String> = plan
        .unrecovered
        .iter()
        .map(|(name, pos, why)| {
            let not_run = if inp.clean_shutdown == Some(true) {
                "after a clean shutdown recovery does not run on it"
            } else {
                "below the recovery point: recovery does not run on it"
            };
            format!("{name} at byte {pos}: {why} ({not_run}; the broker trusts it and readers will fail there)")
        })
        .collect();
    // Log start, and the case where the log ends below it.
    let first_base = segs.first().map(|s| s.base);
    let mut log_start_after = match (inp.log_start_checkpoint, first_base) {
        (Some(c), Some(b)) => Some(c.max(b)),
        (c, b) => c.or(b),
    };
    if let (Some(ls), Some(leo)) = (inp.log_start_checkpoint, leo_after)
        && leo < ls
    {
        deleted = segs.iter().map(|s| s.name.clone()).collect();
        leo_after = Some(ls);
        log_start_after = Some(ls);
    }
    let mut leftovers = std::mem::take(&mut inp.leftovers);
    let (snap, has_snapshot_files) = snapshot_fates(
        &inp.snapshots,
        segs,
        leo_after,
        log_start_after,
        &mut leftovers,
    );
    // LogLoader.recoverSegment ends with producerStateManager.takeSnapshot(): a segment
    // recovered at load leaves a snapshot, so the rebuild is not skipped then.
    let skipped = !has_snapshot_files && inp.clean_shutdown == Some(true) && recovered.is_empty();
    let replay_from = if skipped {
        None
    } else {
        snap.map(|s| s.offset).or(log_start_after)
    };
    let whole = leo_after == inp.log_end_offset && deleted.is_empty() && outcome_unknown.is_none();
    let producer_state = ProducerRebuild {
        snapshot: snap.map(|s| s.name.clone()),
        snapshot_offset: snap.map(|s| s.offset),
        skipped,
        replay_from,
        replay_to: if skipped || outcome_unknown.is_some() {
            None
        } else {
            leo_after
        },
        producers: if skipped {
            Some(0)
        } else {
            whole.then_some(inp.producers)
        },
        open_transactions: if skipped {
            Some(0)
        } else {
            whole.then_some(inp.open_transactions)
        },
    };
    let load_failure = load_failure(&inp, &recovered, from_idx, replay_from, leo_after);
    RecoveryPrediction {
        clean_shutdown: inp.clean_shutdown,
        recovery_point: inp.recovery_point,
        log_start_checkpoint: inp.log_start_checkpoint,
        high_watermark: inp.high_watermark,
        first_offset: inp.first_offset,
        log_end_offset: inp.log_end_offset,
        log_start_offset_after: log_start_after,
        log_end_offset_after: leo_after.filter(|_| outcome_unknown.is_none()),
        leftovers,
        recovered_segments: recovered,
        truncation,
        deleted_segments: deleted,
        unrecovered_corruption: unrecovered,
        producer_state,
        load_failure,
        outcome_unknown,
    }
}

/// What loading does with each snapshot (`LogLoader`: `removeStraySnapshots`, then
/// `truncateAndReload` and `loadProducerState`): the deleted ones are added to `leftovers`.
/// Returns the snapshot loaded, and whether snapshot files remain once the strays are
/// removed (the clean-shutdown shortcut looks at those).
fn snapshot_fates<'s>(
    snapshots: &'s [SnapshotInput],
    segs: &[SegmentInput],
    leo_after: Option<i64>,
    log_start_after: Option<i64>,
    leftovers: &mut Vec<LeftoverAction>,
) -> (Option<&'s SnapshotInput>, bool) {
    // Snapshots: corrupt ones are deleted at load (fallback to older), strays deleted,
    // those beyond the new log end or at/below the log start deleted.
    let bases: Vec<i64> = segs.iter().map(|s| s.base).collect();
    let newest = snapshots.iter().map(|s| s.offset).max();
    let last_base = bases.last().copied();
    let mut usable: Vec<&SnapshotInput> = Vec::new();
    let is_stray = |offset: i64| {
        let kept_newest = Some(offset) == newest && last_base.is_none_or(|b| offset > b);
        !bases.contains(&offset) && !kept_newest
    };
    for s in snapshots {
        let stray = is_stray(s.offset);
        let (kind, action) = if leo_after.is_some_and(|l| s.offset > l) {
            (
                "snapshot_beyond_log",
                "deleted: above the log end offset after loading",
            )
        } else if log_start_after.is_some_and(|l| s.offset <= l) {
            (
                "snapshot_below_log_start",
                "deleted: at or below the log start offset",
            )
        } else if stray {
            (
                "stray_snapshot",
                "deleted: matches no segment base offset and is not the newest",
            )
        } else if !s.valid {
            (
                "corrupt_snapshot",
                "deleted when loaded (CorruptSnapshotException); the next older snapshot is used",
            )
        } else {
            usable.push(s);
            continue;
        };
        leftovers.push(LeftoverAction {
            file: s.name.clone(),
            kind: kind.into(),
            action: action.into(),
        });
    }
    let snap = usable.into_iter().max_by_key(|s| s.offset);
    // The clean-shutdown shortcut looks at the snapshots left after the stray ones are
    // removed (`removeStraySnapshots` runs first); corrupt, beyond-log and below-log-start
    // snapshots are only deleted later, by `truncateAndReload`, so they still count.
    let has_snapshot_files = snapshots.iter().any(|s| !is_stray(s.offset));
    (snap, has_snapshot_files)
}

/// The first replay error the broker meets while loading, in its order (see the comment
/// inside); `from_idx` is the segment holding the recovery point.
fn load_failure(
    inp: &PredictInput<'_>,
    recovered: &[SegmentRecovery],
    from_idx: usize,
    replay_from: Option<i64>,
    leo_after: Option<i64>,
) -> Option<LoadFailure> {
    let segs = &inp.segments;
    let unclean = inp.clean_shutdown != Some(true) && !inp.delete_dir;
    // Load failures: replay errors in the order the broker meets them. First the segments
    // recovered at load (missing/corrupt index), then those recovered after an unclean
    // shutdown: `recoverSegment` rebuilds the producer state up to the segment's base and
    // replays the segment's valid batches, so a rule broken in `[base, end)` (end: below any
    // truncation point) throws however new the newest snapshot is. Then the rebuild's replay
    // `[replay_from, replay_to)`.
    let mut ranges: Vec<(i64, i64, String)> = Vec::new();
    let seg_end = |i: usize| -> Option<i64> {
        match &segs[i].walk {
            Some(w) => Some(w.next_offset),
            None => segs.get(i + 1).map(|n| n.base).or(inp.log_end_offset),
        }
    };
    for (i, s) in segs.iter().enumerate() {
        if (s.missing_index || s.corrupt_index.is_some())
            && let Some(end) = seg_end(i)
        {
            ranges.push((
                s.base,
                end,
                format!(
                    "recovering segment {} at load (its index is missing or corrupt; producer state rebuilt up to offset {})",
                    s.name, s.base
                ),
            ));
        }
    }
    if unclean {
        for r in recovered {
            let Some(i) = segs.iter().position(|s| s.name == r.segment) else {
                continue;
            };
            if i < from_idx {
                continue;
            }
            if let Some(end) = seg_end(i) {
                ranges.push((
                    segs[i].base,
                    end,
                    format!(
                        "recovering segment {} after the unclean shutdown (producer state rebuilt up to offset {})",
                        segs[i].name, segs[i].base
                    ),
                ));
            }
        }
    }
    if let (Some(from), Some(to)) = (replay_from, leo_after) {
        ranges.push((
            from,
            to,
            format!("replaying the producer state from offset {from}"),
        ));
    }
    let old_broker = inp
        .broker_version
        .is_some_and(|v| v <= BrokerVersion(2, 4, 0));
    let mut load_failure = None;
    'ranges: for (from, to, what) in &ranges {
        for f in inp.load_rules {
            let Some(o) = f.offset else { continue };
            if o < *from || o >= *to {
                continue;
            }
            let (exception, fails) = match f.kind {
                Kind::NonTransactionalWriteInTransaction => ("InvalidTxnStateException", true),
                Kind::CoordinatorEpochRegression => {
                    ("TransactionCoordinatorFencedException", old_broker)
                }
                _ => ("", false),
            };
            if fails {
                load_failure = Some(LoadFailure {
                    kind: f.kind.id().into(),
                    offset: Some(o),
                    exception: exception.into(),
                    message: format!("{what} throws {exception} at offset {o}: {}", f.message),
                });
                break 'ranges;
            }
        }
    }
    load_failure
}

/// Without CRC checks (`--no-crc`) the walk cannot see where `LogSegment.recover` stops on
/// the segments it runs on (`batch.ensureValid()` checks each batch's CRC first,
/// `kafka-format.md` §9): the outcome is unknown when any segment is recovered.
fn crc_unknown(crc_checked: bool, recovered: &[SegmentRecovery]) -> Option<String> {
    if crc_checked || recovered.is_empty() {
        return None;
    }
    Some(format!(
        "CRC not checked (--no-crc): LogSegment.recover checks the CRC of every batch of the {} recovered segment(s) and may truncate before any point predicted here",
        recovered.len()
    ))
}

fn truncation_of(s: &SegmentInput, w: &RecoverWalk) -> Option<TruncationPrediction> {
    let (position, reason, first) = w.stop.as_ref()?;
    Some(TruncationPrediction {
        segment: s.name.clone(),
        position: *position,
        offset: w.next_offset,
        bytes_removed: w.len.saturating_sub(*position),
        first_removed_offset: *first,
        reason: reason.clone(),
    })
}
