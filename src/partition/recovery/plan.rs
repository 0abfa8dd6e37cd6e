//! The segment plan: which segments `LogLoader` recovers, where `LogSegment.recover`
//! truncates, which later segments are deleted and which damage is never looked at
//! (`LogLoader.recoverLog`, `LogSegment.recover`), and how integrity findings word that.

use super::*;

/// Which segments recovery runs on, where it truncates, what it deletes, and which damage
/// it never sees: the segment part of the prediction, shared by `scan` and `verify`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SegmentPlan {
    /// Recovered segments and why, in order (the usual reasons are shared texts, not a
    /// copy per partition).
    pub recovered: Vec<(String, std::borrow::Cow<'static, str>)>,
    /// The truncation that decides the log end (after an unclean shutdown: the first
    /// stop among the recovered segments; otherwise the first load-time recovery's).
    pub truncation: Option<TruncationPrediction>,
    /// Segments deleted after the truncation.
    pub deleted: Vec<String>,
    /// `(segment, position, why)` of damage in segments recovery does not run on (the
    /// walk's stop in each).
    pub unrecovered: Vec<(String, u64, StopReason)>,
    /// Log end offset after recovery (`None`: unchanged from the walk).
    pub log_end_after: Option<i64>,
    /// Every truncation made at load by a segment recovered for a missing or corrupt index
    /// (each truncates its own segment and deletes nothing after it).
    #[serde(default)]
    pub load_truncations: Vec<TruncationPrediction>,
    /// The directory is a `-delete` one: `recoverLog` never runs on it.
    #[serde(default)]
    pub delete_dir: bool,
    /// The last segment's name: the load reads its end (`readNextOffset`) whether or not
    /// it is recovered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_segment: Option<String>,
    /// Set when where recovery stops cannot be known, and why (`--no-crc` with a segment
    /// recovered, a recovery point or log start checkpoint klogscan could not read): then
    /// `truncation` is the latest point recovery can stop at and `deleted` the fewest
    /// segments it deletes.
    #[serde(default)]
    pub outcome_unknown: Option<String>,
    /// CRCs were not checked (`--no-crc`) and a segment is recovered: where
    /// `LogSegment.recover` stops in it is not seen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub crc_unchecked: bool,
    /// After an unclean shutdown, klogscan could not read the log dir's
    /// `recovery-point-offset-checkpoint` (`CheckpointEntry::Unread`) and a segment
    /// before the last is left for the unclean pass: it starts at a segment not known
    /// here, so the plan recovers only the segments recovered whatever the recovery point
    /// (`recovery_start`: the last one, and those recovered at load); whether the others
    /// are is unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovery_point_unread: bool,
    /// klogscan could not read the log dir's `log-start-offset-checkpoint`
    /// (`CheckpointEntry::Unread`) that the broker may read: the log start is at least the
    /// first segment's base, how far above it is unknown (what the cluster checks count
    /// from the log start rests on that).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_start_unread: bool,
    /// The transactions the truncation leaves open (`truncation` set and the replay
    /// finished; see [`super::reopened`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_truncation: Option<Box<super::reopened::AfterTruncation>>,
    /// Segments a completed swap deletes before the load (`swaps`): their bytes are never
    /// recovered nor served again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<String>,
    /// Set when the log ends below its log start checkpoint once recovered: the load then
    /// deletes every segment and starts one empty segment at the checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emptied: Option<Emptied>,
    /// Set when the load fails before it recovers anything, and why: since 3.0 the first
    /// pass of `LogLoader.load` reads each `.log.swap` segment's end (and opens its
    /// indexes) before any recovery, whatever the shutdown, and a throw there fails the
    /// load (`swaps::unreadable`). Nothing is then recovered, truncated, deleted or
    /// replaced: the plan is empty but for this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_fails: Option<String>,
}

/// `LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd` (run by `recoverLog`, whatever the
/// shutdown, never for a `-delete` directory): when the last segment's next offset after
/// recovery is below the log start checkpoint, every segment is deleted, the producer
/// state is emptied (`ProducerStateManager.truncateFullyAndStartAt`), the leader-epoch
/// cache cleared, and `recoverLog` opens one new empty segment based at the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Emptied {
    /// The log end offset recovery left (the last segment's next offset).
    pub log_end: i64,
    /// The log start checkpoint: the new segment's base, the log start and end after.
    pub log_start: i64,
}

impl SegmentPlan {
    /// What recovery does to the byte at `position` of `segment`: truncated there (or
    /// removed after the truncation point), deleted with a later segment, never looked at,
    /// or recovered without effect.
    pub(crate) fn fate(&self, segment: &str, position: u64) -> Fate {
        if self.emptied.is_some() {
            return Fate::Deleted;
        }
        for t in self.truncation.iter().chain(&self.load_truncations) {
            if t.segment == segment && position >= t.position {
                return if position == t.position {
                    Fate::TruncatedHere
                } else {
                    Fate::RemovedByTruncation
                };
            }
        }
        if self
            .deleted
            .iter()
            .chain(&self.replaced)
            .any(|d| d == segment)
        {
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
    pub(crate) fn truncation_of(&self, segment: &str) -> Option<&TruncationPrediction> {
        self.truncation
            .iter()
            .chain(&self.load_truncations)
            .find(|t| t.segment == segment)
    }
}

/// What recovery does to a damaged byte (`SegmentPlan::fate`). Serialized (snake_case) in the `recovery` evidence of
/// integrity findings ([`DamageFate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Fate {
    TruncatedHere,
    RemovedByTruncation,
    Deleted,
    Recovered,
    NotRecovered,
}

/// What the load-time check of a segment's `.txnindex` (`LogSegment.sanityCheck` →
/// `TransactionIndex.sanityCheck`, run at every load whatever the shutdown state) does.
pub(crate) enum TxnIndexVerdict {
    /// Passes, or unreadable (the file checks report that).
    Sound,
    /// `CorruptIndexException`: LogLoader recovers the segment; the reason, in the words
    /// `verify` reports.
    Corrupt(String),
    /// `KafkaException` (an entry of an unknown version): the load fails; Kafka's message.
    LoadFails(String),
}

/// [`TxnIndexVerdict`] of the `.txnindex` at `path` for base offset `base_offset`; Kafka's
/// messages name the file `shown` (the path the broker reads it at); `whole_version`: the
/// broker reads an entry's whole version (4.4+, [`super::reads_whole_txn_index_version`]).
pub(crate) fn txnindex_verdict(
    path: &Path,
    shown: &str,
    base_offset: i64,
    (mode, whole_version): (crate::read::segment::MmapMode, bool),
) -> TxnIndexVerdict {
    use crate::read::format::index::{TxnIndex, TxnSanityProblem};
    let Ok(bytes) =
        crate::read::segment::load(path, crate::read::segment::FileClass::Index, mode, None)
    else {
        return TxnIndexVerdict::Sound;
    };
    let index = TxnIndex::new(&bytes, base_offset);
    let checked = match whole_version {
        true => index.sanity_check_since_4_4(),
        false => index.sanity_check(),
    };
    match checked {
        Ok(()) => TxnIndexVerdict::Sound,
        Err(e) => match e.problem {
            TxnSanityProblem::LastOffsetBelowBase => TxnIndexVerdict::Corrupt(format!(
                "corrupt transaction index: {}",
                e.kafka_message(shown)
            )),
            _ => TxnIndexVerdict::LoadFails(e.kafka_message(shown)),
        },
    }
}

/// The reason LogLoader recovers a segment for its `.txnindex`, or `None`
/// ([`txnindex_verdict`]): the same text `verify` reports, so both commands plan the same
/// recovery. An entry of an unknown version fails the load instead (`verify`'s load
/// failure), and is `None` here.
pub(crate) fn txnindex_corruption(
    path: &Path,
    base_offset: i64,
    read: (crate::read::segment::MmapMode, bool),
) -> Option<String> {
    match txnindex_verdict(path, &path.display().to_string(), base_offset, read) {
        TxnIndexVerdict::Corrupt(why) => Some(why),
        _ => None,
    }
}

/// What the next start does with the bytes of an integrity finding: the `recovery` key of
/// its evidence (`crc_mismatch`, `truncated_batch`, `trailing_bytes`, `preallocated_tail`,
/// `invalid_batch`), read back as this type by the triage's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DamageFate {
    /// Truncated here, removed by an earlier truncation, deleted with its segment, never
    /// looked at (served as it is), or recovered without effect.
    pub fate: Fate,
    /// The log end offset after the next start, when recovery truncates.
    pub log_end_offset_after: Option<i64>,
    /// The partition's checkpointed high watermark (`replication-offset-checkpoint`), when
    /// the log dir holds one.
    pub high_watermark: Option<i64>,
}

impl DamageFate {
    /// The fate recorded in a finding's evidence, if any.
    pub fn of(f: &Finding) -> Option<DamageFate> {
        serde_json::from_value(f.evidence.get("recovery")?.clone()).ok()
    }
}

/// Why a segment is recovered after the log dir's unclean shutdown (what
/// [`SegmentPlan::for_metadata_log`] rewords for the metadata log, compared as this value,
/// never by its words).
const UNCLEAN_REASON: &str = "unclean shutdown (segment at or above the recovery point)";

/// Why the KRaft metadata log's segments are recovered at every start.
const METADATA_LOG_REASON: &str = "the KRaft metadata log is recovered from offset 0 at every start (KafkaMetadataLog: recovery point 0, last shutdown taken as unclean)";

impl SegmentPlan {
    /// Mark the outcome unknown for `why` (the load does what the model does not follow:
    /// `aliases::Aliases::apply`), after any other reason.
    pub(crate) fn not_followed(&mut self, why: Option<&str>) {
        if let Some(why) = why {
            self.outcome_unknown = Some(match self.outcome_unknown.take() {
                Some(crc) => format!("{why}; {crc}"),
                None => why.to_owned(),
            });
        }
    }

    /// The plan of the KRaft metadata log (made from [`super::metadata_log_state`]): its
    /// segments are recovered because `KafkaMetadataLog` always recovers them, not
    /// because of the log dir's shutdown state — the reasons say so.
    pub(crate) fn for_metadata_log(&mut self) {
        for (_, reason) in &mut self.recovered {
            if *reason == UNCLEAN_REASON {
                *reason = METADATA_LOG_REASON.into();
            }
        }
    }
}

/// Where the unclean pass starts (`LogLoader.recoverLog`: `segments.values(recoveryPoint,
/// Long.MAX_VALUE)`, from the segment holding the recovery point, `LogSegments.floorKey`):
/// the index of the last segment whose base is at or below the recovery point (the first
/// when none is; 0 without an entry, `LogManager.loadLog`'s default). Unread (klogscan
/// could not read the checkpoint, the broker may): the last segment, the one the pass
/// recovers whatever the entry — the broker checkpoints `UnifiedLog.recoveryPoint`, never
/// above the log end, and an entry past the last base still starts at the last segment.
/// One value is apart: `Long.MAX_VALUE` (a hand-edited file, the trick to skip recovery)
/// asks `LogSegments.values` for the empty range `[MAX, MAX)`, so no segment is recovered:
/// `segs.len()`, past the last.
pub(crate) fn recovery_start(recovery_point: CheckpointEntry, segs: &[SegmentInput]) -> usize {
    match recovery_point {
        CheckpointEntry::Unread => segs.len().saturating_sub(1),
        CheckpointEntry::Read(Some(i64::MAX)) => segs.len(),
        CheckpointEntry::Read(rp) => {
            let rp = rp.unwrap_or(0);
            segs.iter().rposition(|s| s.base <= rp).unwrap_or(0)
        }
    }
}

/// The segment part of `LogLoader`: load-time recoveries (missing or corrupt index, even
/// after a clean shutdown), then — after an unclean shutdown, unless the directory is a
/// `-delete` one — every segment from the one holding the recovery point
/// ([`recovery_start`]), stopping at the first that truncates (later segments are
/// deleted). For the KRaft metadata log the caller passes [`super::metadata_log_state`]
/// and then [`SegmentPlan::for_metadata_log`].
pub(crate) fn plan_segments(
    clean_shutdown: Option<bool>,
    recovery_point: CheckpointEntry,
    log_start_checkpoint: CheckpointEntry,
    delete_dir: bool,
    segs: &[SegmentInput],
    log_end_offset: Option<i64>,
    crc_checked: bool,
) -> SegmentPlan {
    let unclean = clean_shutdown != Some(true) && !delete_dir;
    let from_idx = recovery_start(recovery_point, segs);
    let mut plan = SegmentPlan {
        log_end_after: log_end_offset,
        delete_dir,
        last_segment: segs.last().map(|s| s.name.clone()),
        ..Default::default()
    };
    // The first pass throws before any recovery: nothing of the rest happens.
    if let Some(f) = super::swaps::unreadable(segs) {
        plan.load_fails = Some(format!("{}: {}", f.exception, f.message));
        return plan;
    }
    let mut load_truncations: Vec<TruncationPrediction> = Vec::new();
    for s in segs {
        let reason: Option<std::borrow::Cow<'static, str>> = if s.missing_index && s.created {
            Some(
                format!(
                    "missing offset index (created empty at load for {})",
                    s.opened_as.as_deref().unwrap_or_default()
                )
                .into(),
            )
        } else if s.missing_index {
            Some("missing offset index".into())
        } else {
            s.corrupt_index.clone().map(Into::into)
        };
        // LogLoader.loadSegmentFiles recovers such a segment at load whatever the
        // shutdown state (NoSuchFileException / CorruptIndexException): it truncates that
        // segment and deletes nothing after it.
        if let Some(reason) = reason {
            plan.recovered.push((s.name.clone(), reason));
            // An InvalidOffsetException there fails the load instead (`throws_at_load`):
            // nothing is truncated.
            if super::throws_at_load(s).is_none()
                && let Some(t) = s.walk.as_ref().and_then(|w| truncation_of(s, w))
            {
                load_truncations.push(t);
            }
        }
    }
    if unclean {
        for (i, s) in segs.iter().enumerate().skip(from_idx) {
            let reason: std::borrow::Cow<'static, str> = if clean_shutdown.is_none() {
                "shutdown state unknown (no log dir files): assumed unclean".into()
            } else {
                UNCLEAN_REASON.into()
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
    // By name, once (a scan over `recovered` per segment was quadratic in segments).
    let recovered: std::collections::HashSet<&str> =
        plan.recovered.iter().map(|(r, _)| r.as_str()).collect();
    for s in segs {
        if recovered.contains(s.name.as_str()) {
            continue;
        }
        if let Some(w) = &s.walk
            && let Some((pos, why, _)) = w.stop.as_deref()
        {
            plan.unrecovered.push((s.name.clone(), *pos, why.clone()));
        }
    }
    plan.crc_unchecked = !crc_checked && !plan.recovered.is_empty();
    // Unread, the recovery point decides nothing when no segment before the last is left
    // for the unclean pass (each recovered at load already, or none at all).
    plan.recovery_point_unread = unclean
        && recovery_point.is_unread()
        && segs.split_last().is_some_and(|(_, earlier)| {
            earlier
                .iter()
                .any(|s| !s.missing_index && s.corrupt_index.is_none())
        });
    let log_start_unread = !delete_dir && log_start_checkpoint.is_unread();
    plan.log_start_unread = log_start_unread;
    plan.outcome_unknown = unknown_outcome(&plan, log_start_unread);
    // `recoverLog` ends with `deleteSegmentsIfLogStartGreaterThanLogEnd` (a `-delete`
    // directory never gets there). With `--no-crc` the end is only the latest recovery can
    // leave: one below the checkpoint empties the log wherever recovery stops. A
    // checkpoint klogscan could not read empties nothing here (the fewest deleted: the
    // outcome says it is unknown).
    if !delete_dir
        && let Some(log_start) = log_start_checkpoint.known()
        && let Some(log_end) = end_after_recovery(&plan, segs)
        && log_end < log_start
    {
        plan.emptied = Some(Emptied { log_end, log_start });
        plan.log_end_after = Some(log_start);
        // Damage in segments recovery skipped goes with them.
        plan.unrecovered.clear();
    } else if let Some(end) = end_after_recovery(&plan, segs)
        && plan.log_end_after.is_some_and(|l| end != l)
    {
        // The broker's log end is the last segment's next offset: an empty last segment
        // ends the log at its base, above the last batch when compaction removed the
        // offsets between, below the walk's end when the load replaces the last segment
        // (a swap's, a segment created for a noncanonical name). (A log without a batch
        // keeps its unknown end: `None`.)
        plan.log_end_after = Some(end);
    }
    plan
}

/// What `LogLoader` compares with the log start checkpoint: the next offset of the last
/// segment left once recovered (`LogSegment.readNextOffset`, its base when it holds no
/// batch) — the truncation offset when the unclean pass deleted the segments after it.
fn end_after_recovery(plan: &SegmentPlan, segs: &[SegmentInput]) -> Option<i64> {
    if !plan.deleted.is_empty() {
        return plan.truncation.as_ref().map(|t| t.offset);
    }
    let last = segs.last()?;
    // A last segment no recovery runs on is read as it is: `readNextOffset` frames batch
    // headers to the end without a CRC check, so a damaged batch does not end it there (the
    // walk's next offset stops before the first bad entry; the log's framed end does not).
    // Without a bad entry the walk's next offset is that framed end (an empty segment's
    // base included).
    if !plan.recovered.iter().any(|(name, _)| *name == last.name) {
        // It frames them from the offset index's last entry on (`translateOffset`), not
        // from byte 0: where the index and the log disagree, what that read returns (the
        // base when it finds nothing: a `.log` cut below the entry). Unread (no marker, a
        // created segment, a file not read) or throwing (the load failure):
        // the walk's end, as before.
        if let Some(end) = last
            .read_next
            .as_ref()
            .filter(|_| !plan.delete_dir && last.opened_as.is_none() && !last.created)
            .and_then(|r| r.next_offset(last.base))
        {
            return Some(end);
        }
        return match &last.walk {
            Some(w) if w.stop.is_some() => plan.log_end_after.or(Some(w.next_offset)),
            Some(w) => Some(w.next_offset),
            None => plan.log_end_after,
        };
    }
    last.walk
        .as_ref()
        .map(|w| w.next_offset)
        .or(plan.log_end_after)
}

/// Why where recovery stops cannot be known, in words: `scan`'s `truncation_unknown` and
/// `verify`'s `outcome_unknown` both come from here.
///
/// - The recovery point klogscan could not read ([`SegmentPlan::recovery_point_unread`]):
///   `LogManager.loadLogs` reads it from `recovery-point-offset-checkpoint` (a broker
///   that cannot read it either uses 0 and recovers every segment), and the unclean pass
///   starts at the segment holding it.
/// - The log start checkpoint klogscan could not read (`log_start_unread`):
///   `LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd` deletes every segment when the
///   log ends below it, whatever the shutdown, and the log start kept is at least the
///   first segment's base (`LogLoader.load`: `max(logStartOffsetCheckpoint, first base)`).
/// - Without CRC checks (`--no-crc`) the walk cannot see where `LogSegment.recover` stops
///   on the segments it runs on (`batch.ensureValid()` checks each batch's CRC first).
fn unknown_outcome(plan: &SegmentPlan, log_start_unread: bool) -> Option<String> {
    let mut why: Vec<String> = Vec::new();
    if plan.recovery_point_unread {
        why.push("recovery point unknown: klogscan could not read the log dir's recovery-point-offset-checkpoint, which the broker may read (LogManager.loadLogs), and after the unclean shutdown recovery starts at the segment holding that recovery point (a broker that cannot read the file either starts at offset 0 and recovers every segment); only the segments recovered whatever it is are predicted, and recovery may also run on earlier ones and truncate there".into());
    }
    if log_start_unread {
        why.push("log start unknown: klogscan could not read the log dir's log-start-offset-checkpoint, which the broker may read (LogManager.loadLogs): the log start is at least the first segment's base, and a checkpointed log start above the log end once recovered makes the load delete every segment (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd)".into());
    }
    if plan.crc_unchecked {
        why.push(format!(
            "CRC not checked (--no-crc): LogSegment.recover checks the CRC of every batch of the {} recovered segment(s) and may truncate before any point predicted here",
            plan.recovered.len()
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// One segment as the prediction sees it.
#[derive(Debug, Clone)]
pub(crate) struct SegmentInput {
    pub name: String,
    pub base: i64,
    pub missing_index: bool,
    /// Why the load recovers the segment at load other than a missing offset index:
    /// `CorruptIndexException` (txn index sanity; offset/time index before 2.3), or, for a
    /// swapped-in segment before 3.0, the completion of its swap
    /// (`swaps::SWAP_RECOVERY_BEFORE_3_0`).
    pub corrupt_index: Option<String>,
    /// What fails this segment's load (`KafkaException` of a transaction index entry of an
    /// unknown version, from `LogSegment.sanityCheck`), with Kafka's message.
    pub load_error: Option<String>,
    pub walk: Option<RecoverWalk>,
    /// The name at which `loadSegmentFiles` opens the segment when it is not the segment's
    /// own: a file under a noncanonical name of its offset ([`super::aliases`]) that the
    /// loop meets first (`+5.log` sorts before every 20-digit name), or that makes the load
    /// create the segment.
    pub opened_as: Option<String>,
    /// The load creates this segment, empty (`LogSegment.open` of a name no file has, for
    /// the noncanonical name `opened_as`).
    pub created: bool,
    /// What `LogSegment.readNextOffset` reads of this segment's files as they are (its
    /// offset index's last entry, then the `.log` from there): set for the last segment of
    /// the directory ([`super::last_read`]); `None` when not read (another segment, a
    /// created one, a file that cannot be read); a swapped-in last segment is read through
    /// its swapped index (or from byte 0 without one).
    pub read_next: Option<crate::read::format::index::NextOffsetRead>,
    /// A swapped-in segment's index file that opening the swap segment throws at (a
    /// directory at `N.index.swap` or `N.txnindex.swap`): what and why, in words
    /// (`swaps::CompletedSwaps::apply`).
    pub open_error: Option<String>,
    /// The `.log` file's size when it is above `Integer.MAX_VALUE` bytes: `FileRecords`
    /// refuses to open it (`KafkaException`), so `LogSegment.open` throws for it at load.
    pub oversize: Option<u64>,
}

impl SegmentInput {
    /// Why this segment is recovered at load, and by which step, in a load failure's words.
    pub(crate) fn at_load_step(&self) -> &'static str {
        match self.corrupt_index.as_deref() {
            Some(super::swaps::SWAP_RECOVERY_BEFORE_3_0) => {
                "completing its swap: brokers before 3.0 recover every .log.swap segment in Log.completeSwapOperations, after Log.loadSegmentFiles"
            }
            _ => {
                "its offset index is missing or corrupt: LogLoader.loadSegmentFiles, segments in name order"
            }
        }
    }

    /// The name under which `LogLoader.loadSegmentFiles` meets the segment, in its name
    /// order (a swapped-in segment's `.swap` suffix is gone by then).
    pub(crate) fn load_name(&self) -> &str {
        match &self.opened_as {
            Some(alias) => alias,
            None => self.name.strip_suffix(".swap").unwrap_or(&self.name),
        }
    }
}

fn truncation_of(s: &SegmentInput, w: &RecoverWalk) -> Option<TruncationPrediction> {
    let (position, reason, first) = w.stop.as_deref()?;
    Some(TruncationPrediction {
        segment: s.name.clone(),
        position: *position,
        offset: w.next_offset,
        bytes_removed: w.len.saturating_sub(*position),
        first_removed_offset: *first,
        reason: reason.to_string(),
    })
}
