//! The checkpoint files against the log: `leader-epoch-checkpoint` against the epochs of
//! the batches, the log dir's high watermark, recovery point and log start offset against
//! the partition's offsets, and transactions left open below the log start.

use super::epoch_load::{self, ConstructorRead};
use super::{load_checked, mk, name_of, served};
use crate::discover::layout::PartitionDir;
use crate::finding::{Finding, Kind, Severity};
use crate::partition::epochs::AppendPathCache;
use crate::partition::scan::PartitionReport;
use crate::read::format::checkpoint::parse_leader_epoch_checkpoint;
use crate::read::segment::FileClass;
use crate::verify::VerifyOptions;
use serde_json::json;

/// The partition's entries in the log dir's offset checkpoints.
pub(super) struct OffsetCheckpoints {
    pub recovery_point: Option<i64>,
    pub log_start: Option<i64>,
    pub high_watermark: Option<i64>,
    /// `cleaner-offset-checkpoint`: the offset the log cleaner has cleaned up to.
    pub cleaned_to: Option<i64>,
}

/// What the offset checkpoint checks know of the log the broker loads.
#[derive(Clone, Copy)]
pub(super) struct LoadedLog {
    /// The log end the load reads once recovered (`RecoveryPrediction::log_end_recovered`),
    /// else the walk's end.
    pub log_end: Option<i64>,
    /// Remote-storage enabled as klogscan knows it (`PartitionReport::tiered`).
    pub remote_log_enabled: bool,
}

/// Check `leader-epoch-checkpoint` against the caches the batches' epochs give
/// (`compare_epochs`), as the broker's `LeaderEpochFileCache` constructor loads it
/// (`epoch_load`: since 2.7 each entry through `assign`, which throws on a negative one;
/// before, the entries as read).
pub(super) fn check_leader_epochs(
    p: &PartitionDir,
    r: &PartitionReport,
    opts: &VerifyOptions,
    (clean_shutdown, recovery_point): (Option<bool>, crate::partition::recovery::CheckpointEntry),
    out: &mut Vec<Finding>,
) {
    let (first_offset, leo) = (r.carried.first_offset, r.log_end_offset);
    // The file, or a directory standing in its place (refused by the load: named, not
    // taken for an absent file); a FIFO there discovery named and never listed.
    if let Some(path) = crate::cluster::epoch_file::standing_in(p)
        && let Some(bytes) = load_checked(&path, FileClass::Checkpoint, opts, r, out)
    {
        match parse_leader_epoch_checkpoint(&bytes) {
            Err(e) => {
                let (throws, older) =
                    super::small_files::checkpoint_throws(e.throws, opts.broker_version);
                out.push(
                    mk(
                        r,
                        Kind::LeaderEpochCheckpointMismatch,
                        "leader-epoch-checkpoint",
                        format!("leader-epoch-checkpoint: {e}"),
                    )
                    // Every reading stops at least this partition's load: an error, as a
                    // refused `partition.metadata` is (`small_files::partition_load_fate`).
                    .severity(Severity::Error)
                    .evidence(json!({"error": e.to_string(), "java_exception": throws.name()}))
                    .broker(super::small_files::partition_load_fate(
                        r,
                        "leader-epoch-checkpoint",
                        "the LeaderEpochFileCache it builds",
                        throws,
                        older,
                        opts.broker_version,
                    )),
                )
            }
            Ok(entries) => {
                let read = ConstructorRead::of_partition(p, r, opts.broker_version);
                if read != ConstructorRead::AsRead
                    && let Some(bad) =
                        (entries.iter()).position(|e| e.epoch < 0 || e.start_offset < 0)
                {
                    out.push(epoch_load::negative_entry(r, &entries, bad, read));
                    return;
                }
                let raw: Vec<(i32, i64)> =
                    entries.iter().map(|e| (e.epoch, e.start_offset)).collect();
                let back = epoch_load::goes_back(&raw);
                // The cache the load holds: what a 2.7+ constructor's `assign` of each entry
                // leaves (a file going back, for a version not known, is judged as 2.7+ loads
                // it and the reading before 2.7 said apart); before 2.7, the entries as read.
                let assigns =
                    read == ConstructorRead::Assign || (read == ConstructorRead::Unknown && back);
                let ck = match assigns {
                    true => epoch_load::assigned(&entries),
                    false => raw.clone(),
                };
                let (rebuilt, append) = (&r.carried.leader_epochs[..], &r.carried.append_epochs);
                let log_start = cache_log_start(p, r);
                // Whether the log start the cache was cut to is on record: written at a clean
                // shutdown (`LogManager.shutdown` checkpoints every log's start), or the metadata
                // log's, which its snapshots set.
                let load = LoadFacts {
                    start_recorded: clean_shutdown == Some(true) || p.is_kraft_metadata(),
                    clean: clean_shutdown == Some(true),
                    recovered_from: recovered_from(r, recovery_point),
                };
                let wrong = (assigns || !back)
                    .then(|| {
                        compare_epochs(&ck, rebuilt, append, first_offset, log_start, leo, load)
                    })
                    .flatten();
                let said = match back {
                    true => epoch_load::going_back(&ck, read, wrong),
                    false => wrong.map(|m| (Severity::Warning, m)),
                };
                if let Some((severity, msg)) = said {
                    let mut evidence = json!({"checkpoint": raw, "from_batches": rebuilt});
                    if append.entries[..] != *rebuilt {
                        evidence["append_path"] = json!(append.entries);
                    }
                    if back && assigns {
                        evidence["loaded_by_assign"] = json!(ck);
                    }
                    out.push(
                    mk(r, Kind::LeaderEpochCheckpointMismatch, "leader-epoch-checkpoint", format!("leader-epoch-checkpoint: {msg}"))
                        .severity(severity)
                        .evidence(evidence)
                        .broker(served(r, "the broker loads the checkpoint, then adds epochs from recovered batches only; a wrong cache makes followers truncate to the wrong offset (OffsetsForLeaderEpoch) after a leader change", "the load of a -delete copy cuts the cache back from offset 0 (truncateFromEndAsyncFlush: no entry is left) and the directory is deleted: no follower asks it for an epoch")),
                );
                }
            }
        }
    }
}

/// The log start offset the broker last truncated the epoch cache from
/// (`truncateFromStart`): the partition's log start offset (`log-start-offset-checkpoint`,
/// else the first segment's base). The KRaft metadata log keeps its log start in no
/// checkpoint: `KafkaMetadataLog.deleteBeforeSnapshot` moves it to a snapshot's end offset
/// (through `UnifiedLog.maybeIncrementLogStartOffset`, which truncates the cache there) and
/// forgets the older snapshots, while `KafkaMetadataLog.apply` reopens the log from log
/// start 0 (its first segment). There the earliest `<endOffset>-<epoch>.checkpoint` left
/// counts too.
fn cache_log_start(p: &PartitionDir, r: &PartitionReport) -> Option<i64> {
    let snapshot = p
        .kraft_snapshots
        .iter()
        .filter(|_| p.is_kraft_metadata())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?;
            crate::discover::layout::parse_segment_file_name(name).map(|(o, _)| o)
        })
        .min();
    match (r.log_start_offset, snapshot) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Check the log dir's offset checkpoints against the log (`log`: its end as the load
/// reads it), and transactions open below the log start offset.
///
/// A `-stray` copy has no entry of its own: `LogManager.loadLog` keeps a stray log in
/// `strayLogs`, never in `currentLogs`/`futureLogs`, so neither the recovery-point and
/// log-start checkpoints (`checkpointLogRecoveryOffsets`, `checkpointLogStartOffsets`:
/// `logsByDir`), nor `ReplicaManager`'s high-watermark checkpoint, nor the cleaner's
/// (`LogCleanerManager`, over the cleaner's logs) ever write one for it: an entry under
/// its name is the live log's. So, as for a `-delete` copy, the high watermark, recovery
/// point, cleaner and last-stable-offset checks are not its. What the load does with the
/// entries still is: `loadLog` hands the stray the entries under the partition's name,
/// and `LogLoader.recoverLog` runs on it, so a log start entry above its end empties it
/// (`deleteSegmentsIfLogStartGreaterThanLogEnd`): that warning stays.
pub(super) fn check_offsets(
    p: &PartitionDir,
    r: &PartitionReport,
    ck: &OffsetCheckpoints,
    log: LoadedLog,
    out: &mut Vec<Finding>,
) {
    let (topic, part) = (r.topic.as_str(), r.partition);
    let (first_offset, leo) = (r.carried.first_offset, log.log_end);
    let stray = r.source.copy == crate::finding::CopyKind::Stray;
    let log_start_ck = ck.log_start;
    // --- offset checkpoints vs the log --------------------------------------------------------
    if let Some(l) = leo.filter(|_| !stray) {
        above_log_end(p, r, ck, l, out);
    }
    // The log cleaner never cleans past the last stable offset
    // (`LogCleanerManager.cleanableOffsets` bounds the dirty range by the first unstable
    // offset), and its checkpoint records where a pass ended: a checkpoint above the first
    // offset of a transaction open at the log's end means the transaction was decided
    // when the cleaner passed it — its marker is gone since.
    // A transaction begun below the log start holds the last stable offset at the log
    // start (`UnifiedLog.maybeIncrementFirstUnstableOffset`), and the cleaner's checkpoint
    // is reset up to the log start (`LogCleanerManager.cleanableOffsets`): those are
    // `lso_below_log_start`'s, not a lost marker.
    let log_start = log_start_ck.max(r.log_start_offset).unwrap_or(i64::MIN);
    if let Some(c) = ck.cleaned_to.filter(|_| !stray)
        && !r.partially_read
        && let Some(t) = r
            .carried
            .outcome
            .open
            .iter()
            .filter(|t| t.first_offset >= log_start && t.first_offset < c)
            .min_by_key(|t| t.first_offset)
    {
        out.push(
            mk(
                r,
                Kind::CheckpointInconsistent,
                &name_of(&p.path),
                format!(
                    "cleaner-offset-checkpoint {c} is above offset {} where producer {}'s transaction begins, still open in the log: the cleaner never passes the last stable offset, so the transaction was decided when it cleaned there and its COMMIT/ABORT marker has been lost since",
                    t.first_offset, t.producer_id
                ),
            )
            .offset(t.first_offset)
            .producer(t.producer_id, t.producer_epoch)
            .evidence(json!({"checkpoint": "cleaner-offset-checkpoint", "checkpoint_offset": c, "open_transaction_first_offset": t.first_offset}))
            .broker("LogCleanerManager.cleanableOffsets stops every cleaning pass at the first unstable offset; the broker's state holds the transaction open and the coordinator, which decided it, sends no marker again: the last stable offset stays at its first offset")
            .remediation("look for what removed the marker (a truncation after the cleaner's pass, a replica restored from an older copy); if the transaction hangs, abort it with kafka-transactions.sh abort --start-offset at its first offset"),
        );
    }
    if let (Some(ls), Some(f)) = (log_start_ck, first_offset) {
        let beyond = leo.is_some_and(|l| ls > l);
        // Below the first offset: a stale entry, but for a remote-enabled log, whose
        // start lies in remote storage below its local log
        // (`LogManager.checkpointLogStartOffsetsInDir` writes it for every such log,
        // `LogManagerTest.testCheckpointLogStartOffsetForRemoteTopic`; `LogLoader.load`
        // keeps it), and for a stray copy, whose entry is the live log's, not its own.
        let stale = ls < f && !log.remote_log_enabled && !stray;
        if stale || beyond {
            let (sev, msg, consequence) = if beyond && stray {
                (
                    Severity::Warning,
                    format!(
                        "log start offset {ls} (log-start-offset-checkpoint: the live log's entry, which the load hands this stray copy) is above its log end offset {}",
                        leo.unwrap_or(0)
                    ),
                    "at load the broker deletes every segment of this stray copy and starts it empty at that log start offset (LogManager.loadLog passes it the entry under the partition's name and LogLoader.recoverLog runs on it): its records are gone, although it is never served",
                )
            } else if beyond {
                (
                    Severity::Warning,
                    format!(
                        "log start offset {ls} (log-start-offset-checkpoint) is above the log end offset {}",
                        leo.unwrap_or(0)
                    ),
                    "at load the broker deletes every segment and starts an empty log at the checkpointed log start offset",
                )
            } else {
                (
                    Severity::Info,
                    format!(
                        "log start offset {ls} (log-start-offset-checkpoint) is below the first offset {f}: the checkpoint is stale"
                    ),
                    "the broker uses the first segment's base offset when it is higher",
                )
            };
            out.push(
                mk(r, Kind::CheckpointInconsistent, &name_of(&p.path), msg)
                    .severity(sev)
                    .offset(ls)
                    .evidence(
                        json!({"log_start_offset": ls, "first_offset": f, "log_end_offset": leo}),
                    )
                    .broker(consequence),
            );
        }
    }
    let log_start = log_start_ck.or(r.log_start_offset).filter(|_| !stray);
    if let Some(ls) = log_start {
        for t in r
            .carried
            .outcome
            .open
            .iter()
            .filter(|t| t.first_offset < ls)
        {
            out.push(
                Finding::new(Kind::LsoBelowLogStart, topic, part, format!(
                    "producer {} has a transaction open since offset {} below the log start offset {ls}: the last stable offset stays at {ls} until it is aborted",
                    t.producer_id, t.first_offset))
                    .offset(t.first_offset)
                    .producer(t.producer_id, t.producer_epoch)
                    .evidence(json!({"first_offset": t.first_offset, "log_start_offset": ls}))
                    .broker("the broker clamps the first unstable offset up to the log start offset: LSO = log start offset, read_committed consumers and the cleaner stop there")
                    .remediation(crate::partition::state::text::abort_command(topic, part, t.first_offset)),
            );
        }
    }
}

/// The live log's offset checkpoint entries above its log end `l`: the high watermark, the
/// recovery point and the cleaner's entry.
fn above_log_end(
    p: &PartitionDir,
    r: &PartitionReport,
    ck: &OffsetCheckpoints,
    l: i64,
    out: &mut Vec<Finding>,
) {
    for (what, v, consequence) in [
        (
            "high watermark (replication-offset-checkpoint)",
            ck.high_watermark,
            "the broker clamps the high watermark to the log end offset at load; records acknowledged with acks=all above it are gone",
        ),
        (
            "recovery point (recovery-point-offset-checkpoint)",
            ck.recovery_point,
            "the checkpoint says flushed data exists that the log does not hold: data was lost after the flush was recorded",
        ),
        (
            "cleaner checkpoint (cleaner-offset-checkpoint)",
            // The entry is the live log's (a -future or -delete copy is not it).
            ck.cleaned_to.filter(|_| r.source.copy.is_live()),
            "LogCleanerManager.cleanableOffsets warns that the checkpointed dirty offset is larger than the log end offset (data at the end of the log was lost after a cleaning pass recorded it: a truncation through the broker lowers the entry first, LogCleanerManager.maybeTruncateCheckpoint), resets the first dirty offset to the log start and cleans the whole log again",
        ),
    ] {
        if let Some(v) = v
            && v > l
        {
            out.push(
                mk(
                    r,
                    Kind::CheckpointInconsistent,
                    &name_of(&p.path),
                    format!("{what} {v} is above the log end offset {l}"),
                )
                .offset(l)
                .evidence(json!({"checkpoint_offset": v, "log_end_offset": l}))
                .broker(consequence),
            );
        }
    }
}

/// The epoch the cache `list` (ascending `(epoch, start)`) assigns to offset `o`.
fn epoch_at(list: &[(i32, i64)], o: i64) -> Option<i32> {
    list.iter().rev().find(|(_, s)| *s <= o).map(|(e, _)| *e)
}

/// What recovery's lineage is called in the findings.
const RECOVERY_LINEAGE: &str = "the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache)";

/// The offsets the comparison covers: from the first batch (`first`) to the log end
/// offset, with the log start offset the cache was truncated from (`cache_log_start`).
#[derive(Clone, Copy)]
struct Span {
    first: i64,
    log_start: i64,
    leo: i64,
}

/// A reading of the batches: how the cache a broker built from them is judged where the
/// reading holds no epoch (below its first entry).
#[derive(Clone, Copy)]
enum Reading {
    /// `LogSegment.recover`'s lineage: it holds no epoch only below the first batch that
    /// carries one, and the checkpoint is not judged there.
    Recovery,
    /// The append path's cache: below its first entry lie batches whose epochs it dropped
    /// (a lower epoch's `assign` truncated them, or a legacy batch cleared it), so the
    /// checkpoint holds no epoch there either — unless an entry from before the log's first
    /// batch survived: one below every epoch the cache holds (`assign` drops none of
    /// those), starting no later than the log start or the first batch (the later of the
    /// two), and no legacy batch since.
    Append { cleared: bool },
}

/// Where the checkpoint `ck` and the cache `reading` give different epochs: `(offset,
/// checkpoint's epoch, reading's epoch)`.
type Disagreement = (i64, Option<i32>, Option<i32>);

/// The first offset where `ck` and `reading` disagree, if any. Both are compared at every
/// boundary of either inside the log (an entry below the first batch counts from it) and at
/// the log start offset. Below the log start, offsets under the checkpoint's first entry are
/// not judged: `truncateFromStart(logStartOffset)` (`LogLoader.load`,
/// `UnifiedLog.maybeIncrementLogStartOffset`) removed the entries there. At or above the log
/// start they are: `assign` never moves an epoch's start offset up, and `truncateFromStart`
/// moves the first entry to the log start offset exactly, so a checkpoint can hold no epoch
/// there only where the reading holds none either.
fn disagreement(
    ck: &[(i32, i64)],
    reading: &[(i32, i64)],
    how: Reading,
    span: Span,
) -> Option<Disagreement> {
    let ck_first = ck.first().map_or(i64::MAX, |e| e.1);
    let from = span.log_start.max(span.first);
    let mut points: Vec<i64> = ck
        .iter()
        .chain(reading)
        .map(|(_, s)| (*s).max(span.first))
        .chain([from])
        .filter(|s| *s < span.leo)
        .collect();
    points.sort_unstable();
    points.dedup();
    points.into_iter().find_map(|o| {
        if o < ck_first && o < span.log_start {
            return None;
        }
        let (a, b) = (epoch_at(ck, o), epoch_at(reading, o));
        let agrees = a == b
            || match (b, how) {
                (Some(_), _) => false,
                (None, Reading::Recovery) => true,
                (None, Reading::Append { cleared }) => {
                    // The checkpoint's entry at `o` must be a survivor.
                    let entry = ck.iter().rev().find(|(_, s)| *s <= o);
                    !cleared
                        && entry.is_some_and(|&(e, s)| {
                            s <= from && reading.first().is_none_or(|&(e1, _)| e < e1)
                        })
                }
            };
        (!agrees).then_some((o, a, b))
    })
}

/// Whether the append path's cache is empty as well over the log, or agrees with an empty
/// file (`Reading::Append`): the file `clearAndFlush` leaves after a legacy batch.
fn ck_all_empty_by_append(append: &AppendPathCache, span: Span) -> bool {
    let how = Reading::Append {
        cleared: append.cleared,
    };
    disagreement(&[], &append.entries, how, span).is_none()
}

fn epoch_text(e: Option<i32>) -> String {
    e.map_or("none".into(), |e| e.to_string())
}

/// The base offset of the segment an unclean shutdown's load recovers from
/// (`LogLoader.recoverLog`: the segment holding the recovery point — 0 without an entry —
/// and every later one); `None` when the entry is unknown (a checkpoint klogscan could not
/// read) or no segment has a log.
fn recovered_from(
    r: &PartitionReport,
    recovery_point: crate::partition::recovery::CheckpointEntry,
) -> Option<i64> {
    let rp = match recovery_point {
        crate::partition::recovery::CheckpointEntry::Read(v) => v.unwrap_or(0),
        crate::partition::recovery::CheckpointEntry::Unread => return None,
    };
    let mut bases = (r.carried.segment_names.iter())
        .filter_map(|n| crate::discover::layout::parse_segment_file_name(&n).map(|(b, _)| b));
    let first = bases.next()?;
    Some(bases.take_while(|&b| b <= rp).last().unwrap_or(first))
}

/// What the next load of the partition does that the comparison needs.
#[derive(Clone, Copy)]
struct LoadFacts {
    /// The log start the cache was cut to is on record: written at a clean shutdown
    /// (`LogManager.shutdown` checkpoints every log's start), or the metadata log's, which
    /// its snapshots set.
    start_recorded: bool,
    /// The broker shut down cleanly: the load recovers no segment.
    clean: bool,
    /// The base offset of the first segment the load recovers (`LogSegment.recover`
    /// assigns the epochs of its batches and every later segment's), if any.
    recovered_from: Option<i64>,
}

/// Compare `leader-epoch-checkpoint` with the epoch caches the batches give: recovery's
/// lineage (`rebuilt`) and the append path's cache (`append`). A broker that appended the
/// batches itself (a leader writing them, a follower fetching them) wrote the append path's
/// cache, where a batch of a lower epoch than the latest truncates the entries from it on
/// (`LeaderEpochFileCache.maybeTruncateNonMonotonicEntries`); a broker that recovered them
/// (`LogSegment.recover`, which assigns only epochs above the latest) rebuilt recovery's
/// lineage. While epochs only grow the two are one; after an epoch regression or a legacy
/// batch a file equal to either is one Kafka writes.
///
/// `ck` is the cache the constructor loads, ascending (`epoch_load`: the file's entries, or
/// what `assign` leaves of them).
fn compare_epochs(
    ck: &[(i32, i64)],
    rebuilt: &[(i32, i64)],
    append: &AppendPathCache,
    first: Option<i64>,
    log_start: Option<i64>,
    leo: Option<i64>,
    load: LoadFacts,
) -> Option<String> {
    let start_recorded = load.start_recorded;
    let (Some(first), Some(leo)) = (first, leo) else {
        return None;
    };
    // Entries from the log end on are the load's own to drop (`LogLoader.load` cuts the
    // cache at the log end, `truncateFromEndAsyncFlush`): after an unclean shutdown the
    // checkpoint, flushed when an epoch is assigned, is often ahead of the unflushed data,
    // and a leader assigns its epoch at the log end before it appends. What is compared
    // is what the load keeps.
    let kept = ck.iter().take_while(|(_, s)| *s < leo).count();
    let had_entries = !ck.is_empty();
    let ck = &ck[..kept];
    let span = Span {
        first,
        log_start: log_start.unwrap_or(first),
        leo,
    };
    let (o, a, b) = disagreement(ck, rebuilt, Reading::Recovery, span)?;
    let Some(&(e0, s0)) = ck.first() else {
        // No entry (a file written empty, or left without any line by a crash: its async
        // flush, `truncateFromEndAsyncFlush`, is not synced; `CheckpointReadBuffer.read`
        // takes a file without a line as no entry) while the batches carry epochs: the
        // load keeps an empty cache and adds epochs only from the batches recovery replays
        // (`LogSegment.recover`); nothing rebuilds the rest. Not when the append path's
        // cache is empty too (`UnifiedLog.append` empties it on a v0/v1 batch,
        // `clearAndFlush`: the file it writes). After an unclean shutdown, not when the file
        // held an entry at or past the log end (a `DeleteRecords` to the log end moves the
        // cache's one entry there before a crash, and the load drops it: two readings), nor
        // when the recovery replays every segment holding an epoch (it rebuilds them all).
        if ck_all_empty_by_append(append, span) {
            return None;
        }
        let rebuilt_by_recovery = load
            .recovered_from
            .is_some_and(|b| rebuilt.first().is_none_or(|&(_, s)| s >= b));
        if !load.clean && (had_entries || rebuilt_by_recovery) {
            return None;
        }
        return Some(format!(
            "the checkpoint holds no entry, but from offset {o} {RECOVERY_LINEAGE} gives epoch {}: the broker loads an empty leader-epoch cache (only the batches a recovery replays add epochs back), so until it leads again OffsetsForLeaderEpoch answers an undefined offset for every earlier epoch — a follower truncates to its high watermark and a consumer's committed leader epoch cannot be validated",
            epoch_text(b)
        ));
    };
    if a.is_none() && epoch_at(rebuilt, s0) == Some(e0) && !start_recorded {
        // Two readings: `DeleteRecords` (or retention) to s0 moved the cache's first entry
        // there (`truncateFromStartAsyncFlush`, flushed right after), while
        // `log-start-offset-checkpoint`, written every
        // `log.flush.start.offset.checkpoint.interval.ms` and at a clean shutdown, still held
        // the older log start when the broker stopped uncleanly: silent.
        return None;
    }
    let mut msg = if a.is_none() {
        // Below the checkpoint's first entry, at or above the log start (`disagreement`
        // skips the offsets below both), where the batches carry an epoch.
        format!(
            "the checkpoint's first entry (epoch {e0} from offset {s0}) starts above the log start offset {}, but at offset {o} {RECOVERY_LINEAGE} gives epoch {}: assign never moves an epoch's start offset up, and truncateFromStart moves the first entry to the log start offset exactly",
            span.log_start,
            epoch_text(b)
        )
    } else {
        format!(
            "at offset {o} the checkpoint gives epoch {} but {RECOVERY_LINEAGE} gives epoch {}",
            epoch_text(a),
            epoch_text(b)
        )
    };
    if append.entries != rebuilt {
        let how = Reading::Append {
            cleared: append.cleared,
        };
        let (o, a, b) = disagreement(ck, &append.entries, how, span)?;
        let entries: Vec<String> = append
            .entries
            .iter()
            .map(|(e, s)| format!("{e} from {s}"))
            .collect();
        msg.push_str(&format!(
            "; nor is it the cache the append path leaves (each batch's epoch assigned in turn, a lower one dropping the entries from it on: {}), which gives epoch {} at offset {o} where the checkpoint gives {}",
            if entries.is_empty() { "empty".into() } else { entries.join(", ") },
            epoch_text(b),
            epoch_text(a)
        ));
    }
    Some(msg)
}
