//! The tiered-storage findings of one user partition, from its replayed remote log
//! ([`super::replay::PartitionLog`]) and, per replica, the broker's own view of the log:
//! its checkpointed log start offset, its local log start and end, its leader-epoch
//! lineage.

use super::expiry::{Deleting, Expiry, breached_by_log_start};
use super::lineage::{Lineage, OutsideLineage, within_lineage};
use super::replay::{EventAt, PartitionLog, RemoteSegment, StateEvent, UserPartition};
use crate::finding::{Finding, Kind, Severity};
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::remote_log::SegmentState;
use serde::Serialize;

/// A replica's view of its log, what the checks compare the remote log with.
#[derive(Debug, Clone, Default)]
pub struct ReplicaView {
    /// The partition's `log-start-offset-checkpoint` entry (every tiered partition has
    /// one: `LogManager.checkpointLogStartOffsetsInDir` writes it when remote storage is
    /// enabled).
    pub log_start_offset: Option<i64>,
    /// Base offset of the first local segment.
    pub local_log_start: Option<i64>,
    pub log_end_offset: Option<i64>,
    /// `leader-epoch-checkpoint`, when it reads.
    pub lineage: Option<Lineage>,
    /// The `leader-epoch-checkpoint` that could not be read (`lineage` is then `None`
    /// for want of reading it, not for want of the file): the verdicts resting on the
    /// lineage are not given.
    pub lineage_unread: Option<crate::cluster::epoch_file::Unread>,
}

/// A remote segment as findings show it.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentEvidence {
    pub segment_id: String,
    pub start_offset: i64,
    pub end_offset: i64,
    pub leader_epochs: Vec<(i32, i64)>,
    pub segment_size_in_bytes: i32,
    pub state: &'static str,
    pub copied_by_broker: i32,
    pub history: Vec<StateEvent>,
}

impl SegmentEvidence {
    pub fn of(s: &RemoteSegment) -> Self {
        SegmentEvidence {
            segment_id: encode_uuid(&s.id),
            start_offset: s.start_offset,
            end_offset: s.end_offset,
            leader_epochs: s.leader_epochs.clone(),
            segment_size_in_bytes: s.segment_size_in_bytes,
            state: s.state.name(),
            copied_by_broker: s.copied_by(),
            history: s.history.clone(),
        }
    }
}

fn finding(kind: Kind, up: &UserPartition, offset: i64, message: String) -> Finding {
    Finding::new(kind, &up.topic, up.partition, message).offset(offset)
}

fn evidence<T: Serialize>(f: Finding, e: &T) -> Finding {
    f.evidence(serde_json::to_value(e).unwrap_or_default())
}

#[derive(Serialize)]
struct Unfinished<'a> {
    segment: SegmentEvidence,
    /// The latest event of the partition, written after the segment's last one.
    partition_last_event: Option<EventAt>,
    /// Other segments whose copy started at the same start offset (retries).
    retried_by: Vec<String>,
    /// Later segments, finished, holding every offset it holds (a copy's only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    covered_by: Vec<String>,
    /// The log start offset the segment lies wholly below, when the leader's next
    /// expiration run deletes it by the log-start rule (a copy's only).
    #[serde(skip_serializing_if = "Option::is_none")]
    below_log_start: Option<i64>,
    topic_id: &'a str,
}

/// `remote_copy_unfinished` and `remote_delete_unfinished`: segments left in
/// COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED while later events of the partition
/// show the broker moved on. The last event of a partition may be a copy or a delete in
/// flight: it alone is never reported. A copy has moved on only when a later copy of the
/// partition started: since 3.9 (KAFKA-16853) copying and expiration run as separate
/// tasks, so deletions of older segments follow a copy still uploading.
pub fn unfinished(up: &UserPartition, log: &PartitionLog, views: &[ReplicaView]) -> Vec<Finding> {
    let topic_id = encode_uuid(&up.topic_id);
    let mut out = Vec::new();
    for (i, s) in log.segments.iter().enumerate() {
        let (kind, what) = match s.state {
            SegmentState::CopyStarted => (Kind::RemoteCopyUnfinished, "copy"),
            SegmentState::DeleteStarted => (Kind::RemoteDeleteUnfinished, "delete"),
            _ => continue,
        };
        // Proof that the task moved on without it: for a copy, a later copy of another
        // segment; for a delete, a later delete event of another segment. Copies and
        // expiration run as two tasks (3.9+, KAFKA-16853: their own thread pools; before,
        // one run copies then cleans up), so a copy's events after a delete say nothing of
        // it: the delete may be in flight, or retried by the next cleanup (a failed delete
        // ends the run, and the next publishes DELETE_SEGMENT_STARTED for it again).
        let moved_on = match kind {
            Kind::RemoteCopyUnfinished => log
                .segments
                .iter()
                .any(|o| o.id != s.id && o.history.first().is_some_and(|e| e.at > s.last_event())),
            _ => log.expiration_moved_on(s),
        };
        if !moved_on {
            continue;
        }
        let retried_by: Vec<String> = log
            .segments
            .iter()
            .filter(|o| o.id != s.id && o.start_offset == s.start_offset)
            .map(|o| encode_uuid(&o.id))
            .collect();
        // A later copy, finished and still readable, of every offset it holds: a copier
        // stopped mid-upload (a broker crash: the copy task deletes its own failed copies,
        // `RemoteLogManager.copyLogSegment`) whose work the next copy redid
        // (`copyLogSegmentsToRemote` starts past the highest finished offset only); the
        // expiration lists such a segment and deletes it with the others once retention
        // reaches it (`RLMExpirationTask.cleanupExpiredRemoteLogSegments`).
        let covered_by: Vec<String> = match kind {
            Kind::RemoteCopyUnfinished => super::cover::covering_copies(log, s)
                .iter()
                .map(|o| encode_uuid(&o.id))
                .collect(),
            _ => Vec::new(),
        };
        // Nothing to serve below the log start, and the next run deletes it there.
        let below = match kind {
            Kind::RemoteCopyUnfinished if covered_by.is_empty() => {
                super::expiry::below_log_start(log, i, s, views)
            }
            _ => None,
        };
        let msg = if kind == Kind::RemoteCopyUnfinished {
            format!(
                "remote segment {} (offsets {}..={}) was never marked COPY_SEGMENT_FINISHED although a later copy of the partition started: no read uses its objects, which stay until retention deletes the segment{}",
                encode_uuid(&s.id),
                s.start_offset,
                s.end_offset,
                match (covered_by.is_empty(), retried_by.is_empty()) {
                    _ if below.is_some() => format!(
                        " (wholly below the log start offset {}: nothing to serve there, and the leader's next expiration run deletes it by the log-start rule, as it deletes the finished segments below)",
                        below.unwrap_or_default()
                    ),
                    (false, _) => format!(
                        " (its offsets copied again by {}, finished: the remains of a copy stopped mid-upload, as a broker crash leaves them, nothing unserved)",
                        covered_by.join(", ")
                    ),
                    (true, false) => format!(" (copy retried as {})", retried_by.join(", ")),
                    (true, true) => String::new(),
                }
            )
        } else {
            format!(
                "remote segment {} (offsets {}..={}) has a {what} started (DELETE_SEGMENT_STARTED) and never finished although later events follow",
                encode_uuid(&s.id),
                s.start_offset,
                s.end_offset
            )
        };
        let behaviour = if kind == Kind::RemoteCopyUnfinished {
            "RemoteLogManager reads only COPY_SEGMENT_FINISHED segments; retention lists unfinished copies too (listRemoteLogSegments) and deletes one once it breaches the log start, retention.ms or retention.bytes, so a segment left in COPY_SEGMENT_STARTED keeps its objects in remote storage until then (KAFKA-17062, KAFKA-17428)"
        } else {
            "a later cleanup deleted other segments without retrying this one: RemoteLogManager's expiration retries a DELETE_SEGMENT_STARTED segment (publishing DELETE_SEGMENT_STARTED again) in every run that reaches it — a run stops at the first segment it may not delete yet —, so this one was left behind (not listed under the current leader epochs, or its retries stopped); its objects may be half deleted and no read uses the segment"
        };
        let mut f = finding(kind, up, s.start_offset, msg).broker(behaviour);
        if covered_by.is_empty() && below.is_none() {
            f = f.remediation("check the remote storage for the segment's objects and the broker logs of the leader for copy/delete errors");
        } else {
            f.severity = Severity::Info;
        }
        out.push(evidence(
            f,
            &Unfinished {
                segment: SegmentEvidence::of(s),
                partition_last_event: log.last_event,
                retried_by,
                covered_by,
                below_log_start: below,
                topic_id: &topic_id,
            },
        ));
    }
    out
}

/// The segments readable from remote storage: COPY_SEGMENT_FINISHED.
fn finished(log: &PartitionLog) -> impl Iterator<Item = &RemoteSegment> {
    finished_at(log).map(|(_, s)| s)
}

/// [`finished`] with each segment's index in [`PartitionLog::segments`].
fn finished_at(log: &PartitionLog) -> impl Iterator<Item = (usize, &RemoteSegment)> {
    log.segments
        .iter()
        .enumerate()
        .filter(|(_, s)| s.state == SegmentState::CopyFinished)
}

fn deleting(s: &RemoteSegment) -> bool {
    matches!(
        s.state,
        SegmentState::DeleteStarted | SegmentState::DeleteFinished
    )
}

#[derive(Serialize)]
struct Gap {
    first_missing_offset: i64,
    last_missing_offset: i64,
    log_start_offset: i64,
    local_log_start_offset: i64,
    /// The segments serving the offsets on each side of the gap.
    previous_segment: Option<SegmentEvidence>,
    next_segment: Option<SegmentEvidence>,
    /// Deleted segments that held offsets of the gap.
    deleted_segments: Vec<SegmentEvidence>,
    /// Finished segments that hold offsets of the gap but are not served there: replaced
    /// in their epoch's offset map by a later copy, or of another epoch than the replica's
    /// lineage gives these offsets.
    unserved_segments: Vec<SegmentEvidence>,
}

/// A range of offsets no segment serves, with the segments serving its neighbours.
type Missing<'a> = (
    i64,
    i64,
    Option<&'a RemoteSegment>,
    Option<&'a RemoteSegment>,
);

/// The ranges of `start..local` the cache of `log` does not serve to a replica with
/// `lineage` ([`super::epochs::served`]).
fn unserved<'a>(
    log: &'a PartitionLog,
    lineage: Option<&Lineage>,
    start: i64,
    local: i64,
) -> Vec<Missing<'a>> {
    let mut missing = Vec::new();
    let mut cursor = start;
    let mut prev: Option<&RemoteSegment> = None;
    for s in super::epochs::served(log, lineage, start, local - 1) {
        if s.last < cursor {
            continue;
        }
        let seg = &log.segments[s.segment];
        if s.first > cursor {
            missing.push((cursor, s.first - 1, prev, Some(seg)));
        }
        cursor = s.last.saturating_add(1);
        prev = Some(seg);
    }
    if cursor < local {
        missing.push((cursor, local - 1, prev, None));
    }
    missing
}

/// `remote_segment_gap`: offsets in [log start, local log start) the remote log metadata
/// cache does not serve: `RemoteLogManager.read` looks each offset up in the leader epoch
/// the replica's lineage gives it, in that epoch's offset map of COPY_SEGMENT_FINISHED
/// segments ([`super::epochs`]). A gap at the log start that deleted segments held exactly
/// is a checkpoint written before the retention run that deleted them: not reported.
pub fn gaps(up: &UserPartition, log: &PartitionLog, view: &ReplicaView) -> Vec<Finding> {
    // A partition whose replay holds no record of a segment is not tiered as far as the
    // metadata shows: nothing to hold its log against.
    if log.segments.is_empty() && log.ignored.is_empty() {
        return Vec::new();
    }
    gap_findings(up, log, view)
        .into_iter()
        .map(|g| g.1)
        .collect()
}

/// Whether a finished segment of `log` serves some offsets (the cache of a broker that
/// applied every record serves them).
pub fn serves_any(log: &PartitionLog) -> bool {
    finished(log).next().is_some()
}

/// The gaps of a replica whose broker's consumer stopped at the record whose finding's
/// key is `stop` (`remote_metadata_consumer_stopped`): `seen`, the log its cache holds
/// (`None`: no record of the partition came before the stop, so it holds no segment of it
/// and serves none of the range), against `full`, every record's. A gap some of whose
/// offsets `full` serves follows from the stop: it is linked to the stop's finding.
/// With the replica's `leader-epoch-checkpoint` unread, what `full` serves in the epochs
/// its lineage gives is unknown: no gap is linked.
pub fn stopped_gaps(
    up: &UserPartition,
    seen: Option<&PartitionLog>,
    full: &PartitionLog,
    view: &ReplicaView,
    stop: (&str, EventAt),
) -> Vec<Finding> {
    let empty = PartitionLog::default();
    let log = match seen {
        Some(log) if !log.segments.is_empty() => log,
        // The same log as every broker's: nothing follows from the stop.
        _ if !serves_any(full) => return seen.map_or_else(Vec::new, |l| gaps(up, l, view)),
        _ => &empty,
    };
    let (Some(start), Some(local)) = (view.log_start_offset, view.local_log_start) else {
        return Vec::new();
    };
    let everything = unserved(full, view.lineage.as_ref(), start, local);
    let (key, at) = stop;
    gap_findings(up, log, view)
        .into_iter()
        .map(|((first, last), mut f)| {
            // Whether every record's log serves the gap rests on the lineage (the epoch
            // each offset is looked up in): with the file unread, the gap is not laid on
            // the stop.
            let also_missing = view.lineage_unread.is_some()
                || everything.iter().any(|m| m.0 <= first && last <= m.1);
            if also_missing {
                return f;
            }
            f.message.push_str(&format!(
                "; this broker's metadata consumer stopped at __remote_log_metadata-{} offset {} (remote_metadata_consumer_stopped), {}",
                at.metadata_partition,
                at.offset,
                if log.segments.is_empty() {
                    "before any record of the partition: its cache holds none of the partition's segments"
                } else {
                    "before records that finish segments serving offsets of the gap"
                }
            ));
            f.caused_by(key)
        })
        .collect()
}

/// Each gap of `log` in [log start, local log start) as a replica sees it: its offsets
/// and its finding.
fn gap_findings(
    up: &UserPartition,
    log: &PartitionLog,
    view: &ReplicaView,
) -> Vec<((i64, i64), Finding)> {
    let (Some(start), Some(local)) = (view.log_start_offset, view.local_log_start) else {
        return Vec::new();
    };
    if start >= local {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (first, last, prev, next) in unserved(log, view.lineage.as_ref(), start, local) {
        let overlapping = |s: &&RemoteSegment| s.start_offset <= last && s.end_offset >= first;
        let held: Vec<&RemoteSegment> = log
            .segments
            .iter()
            .filter(|s| deleting(s))
            .filter(overlapping)
            .collect();
        if first == start && covers(&held, first, last) {
            continue;
        }
        let hidden: Vec<&RemoteSegment> = finished(log).filter(overlapping).collect();
        let mut msg = format!(
            "offsets {first}..={last} are neither served by a finished remote segment nor in the local log (log start {start}, local log start {local}): fetches there fail"
        );
        if !hidden.is_empty() {
            let names: Vec<String> = hidden
                .iter()
                .map(|s| {
                    format!(
                        "{} ({}..={})",
                        encode_uuid(&s.id),
                        s.start_offset,
                        s.end_offset
                    )
                })
                .collect();
            msg.push_str(&format!(
                "; finished segment(s) {} hold them, but the lookup in the offsets' leader epoch does not reach them (replaced in the epoch's offset map by a later copy, or of another epoch)",
                names.join(", ")
            ));
        }
        let f = finding(Kind::RemoteSegmentGap, up, first, msg)
            .broker("a fetch between the log start offset and the local log start offset is served from remote storage: RemoteLogManager.read takes the offset's leader epoch from the replica's leader-epoch cache and asks RemoteLogMetadataCache for the finished segment mapped at the greatest start offset at or below it in that epoch, which must reach the offset; with none, the fetch fails with OFFSET_OUT_OF_RANGE")
            .client_error("consumer: OFFSET_OUT_OF_RANGE at the first missing offset (FetchCollector) — with auto.offset.reset=earliest the position goes back to the log start, below the gap, so the consumer re-reads up to it and meets it again, in a loop; with latest it skips to the log end (everything after the gap too); with none the application gets OffsetOutOfRangeException")
            .remediation("look for the segment in remote storage (a copy never finished, a segment deleted early, a later copy that hides it); otherwise the data of these offsets is lost");
        out.push((
            (first, last),
            evidence(
                f,
                &Gap {
                    first_missing_offset: first,
                    last_missing_offset: last,
                    log_start_offset: start,
                    local_log_start_offset: local,
                    previous_segment: prev.map(SegmentEvidence::of),
                    next_segment: next.map(SegmentEvidence::of),
                    deleted_segments: held.iter().map(|s| SegmentEvidence::of(s)).collect(),
                    unserved_segments: hidden.iter().map(|s| SegmentEvidence::of(s)).collect(),
                },
            ),
        ));
    }
    out
}

/// Whether `segs` hold every offset of `first..=last`.
fn covers(segs: &[&RemoteSegment], first: i64, last: i64) -> bool {
    let mut v: Vec<(i64, i64)> = segs
        .iter()
        .map(|s| (s.start_offset, s.end_offset))
        .collect();
    v.sort();
    let mut cursor = first;
    for (s, e) in v {
        if s > cursor {
            return false;
        }
        cursor = cursor.max(e.saturating_add(1));
        if cursor > last {
            return true;
        }
    }
    cursor > last
}

#[derive(Serialize)]
struct Abandoned {
    segment: SegmentEvidence,
    #[serde(flatten)]
    why: OutsideLineage,
    /// When the leader's expiration deletes it.
    expiry: Option<Expiry>,
    /// The lineage the segment was judged against: the replica's, truncated at the log
    /// start as its broker holds it, filtered as `RemoteLogManager` does.
    lineage: Vec<(i32, i64)>,
    log_start_offset: i64,
    log_end_offset: i64,
}

/// The replica's lineage as its broker holds it: truncated at the checkpointed log start
/// (`LogLoader.load`, and every move of the log start).
pub(super) fn loaded_lineage(view: &ReplicaView) -> Option<Lineage> {
    let l = view.lineage.as_ref()?;
    Some(match view.log_start_offset {
        Some(start) => l.truncated_from_start(start),
        None => l.clone(),
    })
}

/// What an abandoned segment's [`Expiry`] says, and the finding's severity: a segment the
/// next run deletes is passing (info).
fn expiry_text(e: Option<Expiry>) -> (String, Severity) {
    match e {
        Some(Expiry::NextRun { earliest_epoch }) => (
            format!(
                "retention deletes it on the leader's next expiration run (all its epochs are below the epoch cache's earliest, {earliest_epoch})"
            ),
            Severity::Info,
        ),
        Some(Expiry::LogStartReaches {
            log_start_offset,
            first_epoch,
        }) => (
            format!(
                "time and size retention pass it over; it is deleted once the log start offset reaches {log_start_offset} (the epoch cache's first epoch is then {first_epoch}, at or above all its epochs)"
            ),
            Severity::Warning,
        ),
        Some(Expiry::Never {
            segment_epoch,
            latest_epoch,
            unlisted_in_segment_epoch: false,
        }) => (
            format!(
                "no retention rule deletes it while the lineage has no epoch at or above its epoch {segment_epoch} (the lineage's latest is {latest_epoch})"
            ),
            Severity::Warning,
        ),
        Some(Expiry::Never {
            segment_epoch,
            latest_epoch,
            unlisted_in_segment_epoch: true,
        }) => (
            format!(
                "no retention rule deletes it while the lineage has no epoch above its epoch {segment_epoch} (the lineage's latest is {latest_epoch}): a later copy at the same start replaced it in epoch {segment_epoch}'s offset map, so that epoch's listing, which the log-start rule walks, does not hold it"
            ),
            Severity::Warning,
        ),
        Some(Expiry::Unlisted) => (
            "no retention rule ever deletes it: a later copy at the same start offset replaced it in each of its epochs' offset maps without marking it unreferenced, so no per-epoch listing the leader's expiration walks holds it; it stays in remote storage until the partition is deleted".into(),
            Severity::Warning,
        ),
        None => ("retention passes it over".into(), Severity::Warning),
    }
}

/// `remote_segment_abandoned_lineage`: a finished segment at or above the log start
/// whose epochs `RemoteLogManager.isRemoteSegmentWithinLeaderEpochs` (3.7.1 on, KAFKA-16511)
/// rejects against the replica's lineage as its broker holds it, with when retention
/// deletes it ([`super::expiry`]). Only segments ending below the replica's log end are
/// judged: one beyond it is either truncated away or not yet replicated here (two readings).
/// Without a lineage (no `leader-epoch-checkpoint`, or one that could not be read) none is.
pub fn abandoned(up: &UserPartition, log: &PartitionLog, view: &ReplicaView) -> Vec<Finding> {
    let (Some(start), Some(leo), Some(loaded)) = (
        view.log_start_offset,
        view.log_end_offset,
        loaded_lineage(view),
    ) else {
        return Vec::new();
    };
    if loaded.is_empty() {
        return Vec::new();
    }
    let filtered = loaded.filtered();
    let mut out = Vec::new();
    for (i, s) in finished_at(log) {
        if s.end_offset < start || s.end_offset >= leo {
            continue;
        }
        let seg = Lineage::new(s.leader_epochs.iter().copied());
        let Some(why) = within_lineage(&seg, s.end_offset, leo, &filtered) else {
            continue;
        };
        let listed = log.epochs.listed_epochs(i, s);
        let expiry = super::expiry::expiry(&s.leader_epochs, s.end_offset, &loaded, &listed);
        let (when, severity) = expiry_text(expiry);
        // In no listing is in no offset map either: no read finds it.
        let reads = if expiry == Some(Expiry::Unlisted) {
            "no fetch reads it either (no epoch's offset map holds it)"
        } else {
            "until then a fetch of an offset its epochs serve reads it"
        };
        let msg = format!(
            "remote segment {} (offsets {}..={}, epochs {:?}) is not in the partition's leader-epoch lineage {:?}: {when}; {reads}",
            encode_uuid(&s.id),
            s.start_offset,
            s.end_offset,
            s.leader_epochs,
            filtered.entries()
        );
        let f = finding(Kind::RemoteSegmentAbandonedLineage, up, s.start_offset, msg)
            .severity(severity)
            .broker("RemoteLogManager's expiration (cleanupExpiredRemoteLogSegments) applies time and size retention only to segments inside the leader-epoch lineage (isRemoteSegmentWithinLeaderEpochs) and passes this one over; it deletes it regardless once all its epochs are below the epoch cache's earliest (deleteLogSegmentsDueToLeaderEpochCacheTruncation, every run) or, its end below the log start, at or below the cache's first epoch (isSegmentBreachByLogStartOffset) — the cache is truncated at the log start as it moves. Reads apply no lineage check: RemoteLogManager.read looks the offset up in the epoch the leader's cache gives it and returns the segment found from there on, past that epoch's end, so a fetch starting where this segment serves gets the abandoned leader's batches")
            .remediation("the segment holds data of an abandoned leader (unclean election or truncation); unless retention deletes it soon, delete its objects and metadata once no consumer needs it");
        out.push(evidence(
            f,
            &Abandoned {
                segment: SegmentEvidence::of(s),
                why,
                expiry,
                lineage: filtered.entries(),
                log_start_offset: start,
                log_end_offset: leo,
            },
        ));
    }
    out
}

/// How finished segments below the log start read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum StartReading {
    /// A retention run moved the log start to the local log start and deletes the segments
    /// below it one at a time (deletions under way or waiting).
    RetentionInProgress,
    /// No deletion begun: a retention run between moving the log start and its first
    /// delete, or a log start reset to the local one (two readings).
    RetentionWindowOrReset,
    /// The log start at the local one with the epoch cache not following it: KAFKA-15351's
    /// shape.
    LogStartReset,
    /// Retention's log-start rule cannot delete them: they stay.
    NotDeletable,
}

#[derive(Serialize)]
struct StartMismatch {
    reading: StartReading,
    log_start_offset: i64,
    local_log_start_offset: Option<i64>,
    lowest_remote_offset: i64,
    /// The log start equals the local log start.
    log_start_at_local_start: bool,
    /// Whether retention's log-start rule (all epochs at or below the first epoch of the
    /// lineage truncated at the log start) deletes every one of the segments.
    deletable_by_log_start_rule: bool,
    /// The first offset of the replica's `leader-epoch-checkpoint`: below the log start, the
    /// cache was not truncated when the log start was set.
    lineage_first_offset: Option<i64>,
    /// A segment below the log start left DELETE_SEGMENT_STARTED.
    delete_pending: Option<SegmentEvidence>,
    /// The segment below the log start whose deletion is the partition's latest event.
    last_deleted: Option<SegmentEvidence>,
    segments: Vec<SegmentEvidence>,
    /// The ids of those of `segments` in none of their epochs' listings
    /// (`RemoteLogLeaderEpochState.listAllRemoteLogSegments`): no retention rule finds them.
    unlisted_segments: Vec<String>,
}

/// Which reading of [`StartReading`] holds; `None`: the next run deletes the segments and
/// nothing is reported. `deletable`: `None` without a lineage.
fn start_reading(
    at_local: bool,
    deletable: Option<bool>,
    deleting: bool,
    behind: bool,
) -> Option<StartReading> {
    Some(match (at_local, deletable) {
        (false, Some(true)) => return None,
        (false, _) => StartReading::NotDeletable,
        (true, d) if deleting && d != Some(false) => StartReading::RetentionInProgress,
        (true, _) if behind && !deleting => StartReading::LogStartReset,
        (true, Some(false)) => StartReading::NotDeletable,
        (true, _) => StartReading::RetentionWindowOrReset,
    })
}

/// The message of a [`StartReading`].
fn start_message(
    reading: StartReading,
    start: i64,
    lowest: i64,
    del: &Deleting,
    lineage_first: Option<i64>,
    unlisted: &[String],
) -> String {
    let id = |s: &RemoteSegment| encode_uuid(&s.id);
    match reading {
        StartReading::RetentionInProgress => {
            let how = match (del.pending, del.last_deleted) {
                (Some(p), _) if del.pending_is_last => format!(
                    "segment {}'s delete started and has not finished: in flight, or it failed and ended the run",
                    id(p)
                ),
                (Some(p), _) => format!(
                    "blocked on segment {}: its delete started and never finished, and a later cleanup deleted other segments without retrying it",
                    id(p)
                ),
                (None, Some(d)) => {
                    format!("the partition's latest event deletes segment {}", id(d))
                }
                (None, None) => String::new(),
            };
            format!(
                "retention in progress: the checkpointed log start offset {start} equals the local log start and finished remote segments still hold offsets from {lowest}; a retention run moved the log start past them and deletes them one at a time ({how}); the next run deletes what is left by the log-start rule"
            )
        }
        StartReading::RetentionWindowOrReset => format!(
            "the checkpointed log start offset {start} equals the local log start while finished remote segments hold offsets from {lowest} and no deletion of them has begun: either a retention run moved the log start and had not begun deleting (the broker stopped or leadership moved in between; the next run deletes them by the log-start rule), or the log start was reset to the local log start at a restart (KAFKA-15351, 3.5 brokers) — the metadata cannot tell which; the offsets below it are no longer readable either way"
        ),
        StartReading::LogStartReset => format!(
            "the checkpointed log start offset {start} equals the local log start while finished remote segments hold offsets from {lowest} and the leader-epoch-checkpoint still starts at offset {}, below it: the log start was set without the epoch cache following it (retention and DeleteRecords truncate the cache as they move the log start) — the shape of a log start reset to the local log start at a restart (KAFKA-15351: consumers can no longer read the remote data below it), and also of a follower that built its state from remote storage (TierStateMachine.buildRemoteLogAuxState moves the log start first, then loads the leader's whole epoch cache from the remote segment, untrimmed), whose leader's next expiration run deletes the segments: the files cannot tell which",
            lineage_first.unwrap_or(start)
        ),
        StartReading::NotDeletable if lineage_first.is_none() => format!(
            "finished remote segments hold offsets from {lowest}, below the checkpointed log start offset {start}, and without a readable leader-epoch lineage retention's log-start rule deletes none of them: they stay in remote storage"
        ),
        StartReading::NotDeletable if !unlisted.is_empty() => format!(
            "finished remote segments hold offsets from {lowest}, below the checkpointed log start offset {start}, and retention cannot delete them all: no per-epoch segment listing, which is all the leader's expiration walks, holds segment(s) {} (a later copy at the same start offset replaced each in its epochs' offset maps without marking it unreferenced), so they stay in remote storage until the partition is deleted",
            unlisted.join(", ")
        ),
        StartReading::NotDeletable => format!(
            "finished remote segments hold offsets from {lowest}, below the checkpointed log start offset {start}, and retention's log-start rule cannot delete them (their epochs are above the first epoch of the lineage at the log start): they stay in remote storage"
        ),
    }
}

/// `remote_log_start_mismatch`: finished segments wholly below the checkpointed log
/// start, read as `StartReading` says. Below a log start elsewhere than the local log
/// start, segments the next run deletes by the log-start rule are not reported; with the
/// replica's `leader-epoch-checkpoint` unread, nothing is.
pub fn log_start_mismatch(
    up: &UserPartition,
    log: &PartitionLog,
    view: &ReplicaView,
) -> Vec<Finding> {
    let Some(start) = view.log_start_offset else {
        return Vec::new();
    };
    // Which reading holds, and whether there is one to give, rests on the lineage (the
    // log-start rule, the epoch cache behind the log start): with the file unread, none
    // is given — not the one of a replica without the file.
    if view.lineage_unread.is_some() {
        return Vec::new();
    }
    // Each with the epochs whose listing holds it: what the run walks.
    let below: Vec<(&RemoteSegment, Vec<i32>)> = finished_at(log)
        .filter(|(_, s)| s.end_offset < start)
        .map(|(i, s)| (s, log.epochs.listed_epochs(i, s)))
        .collect();
    let Some(lowest) = below.iter().map(|s| s.0.start_offset).min() else {
        return Vec::new();
    };
    let loaded = loaded_lineage(view).filter(|l| !l.is_empty());
    // RemoteLogRetentionHandler.isSegmentBreachByLogStartOffset, or
    // deleteLogSegmentsDueToLeaderEpochCacheTruncation, on what the listings hold
    let deletable = loaded.as_ref().and_then(|l| {
        below
            .iter()
            .map(|(s, listed)| breached_by_log_start(s, l, listed))
            .try_fold(true, |all, d| Some(all && d?))
    });
    // Only with a lineage is a segment's deletion judged: the message names these then.
    let unlisted: Vec<String> = below
        .iter()
        .filter(|(_, listed)| loaded.is_some() && listed.is_empty())
        .map(|(s, _)| encode_uuid(&s.id))
        .collect();
    let lineage_first = view.lineage.as_ref().and_then(|l| l.first()).map(|e| e.1);
    let behind = lineage_first.is_some_and(|o| o < start);
    let del = super::expiry::deleting(log, start);
    let at_local = view.local_log_start == Some(start);
    let Some(reading) = start_reading(at_local, deletable, del.any(), behind) else {
        return Vec::new();
    };
    let msg = start_message(reading, start, lowest, &del, lineage_first, &unlisted);
    let passing = matches!(
        reading,
        StartReading::RetentionInProgress | StartReading::RetentionWindowOrReset
    );
    // Two readings (a reset, or a follower rebuilt from remote storage): info.
    let two = reading == StartReading::LogStartReset;
    let f = finding(Kind::RemoteLogStartMismatch, up, lowest, msg)
        .severity(if passing || two { Severity::Info } else { Severity::Warning })
        .broker("RemoteLogManager's expiration (cleanupExpiredRemoteLogSegments) moves the log start first (handleLogStartOffsetUpdate) and then deletes the segments below it one at a time; a RemoteStorageException from one delete ends the run and the rest wait for the next, which retries DELETE_SEGMENT_STARTED segments and deletes a segment below the log start when all its epochs are at or below the epoch cache's first (isSegmentBreachByLogStartOffset). Fetches below the log start fail with OFFSET_OUT_OF_RANGE")
        .remediation(if two {
            "compare with the other replicas' log-start-offset-checkpoint and leader-epoch-checkpoint: on a follower rebuilt from remote storage nothing is wrong (the leader's next expiration deletes the segments); if the log start was reset at a restart (KAFKA-15351), the remote data below it is no longer reachable"
        } else if passing {
            "nothing, if the next expiration runs finish the deletion; a delete that keeps failing shows in the leader's log (the remote storage refusing it)"
        } else {
            "compare with the other replicas' log-start-offset-checkpoint; if the log start was reset at a restart, the remote data below it is no longer reachable"
        });
    vec![evidence(
        f,
        &StartMismatch {
            reading,
            log_start_offset: start,
            local_log_start_offset: view.local_log_start,
            lowest_remote_offset: lowest,
            log_start_at_local_start: at_local,
            deletable_by_log_start_rule: deletable == Some(true),
            lineage_first_offset: lineage_first,
            delete_pending: del.pending.map(SegmentEvidence::of),
            last_deleted: del.last_deleted.map(SegmentEvidence::of),
            segments: below.iter().map(|s| SegmentEvidence::of(s.0)).collect(),
            unlisted_segments: unlisted,
        },
    )]
}

/// The remote and local offset ranges of a replica, for the report.
pub fn ranges(log: &PartitionLog, view: &ReplicaView) -> crate::partition::results::TieredRanges {
    let mut remote: Vec<(i64, i64)> = finished(log)
        .map(|s| (s.start_offset, s.end_offset))
        .collect();
    remote.sort();
    crate::partition::results::TieredRanges {
        log_start_offset: view.log_start_offset,
        remote,
        local_log_start_offset: view.local_log_start,
        log_end_offset: view.log_end_offset,
        replayed: None,
    }
}
