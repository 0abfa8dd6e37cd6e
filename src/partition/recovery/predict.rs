//! `verify`'s prediction: the segment plan plus the log start, the snapshots, the
//! producer-state rebuild and the first replay error of `LogLoader.load`.

use super::after_load::{AfterLoad, after_load, bases_after};
use super::chain;
use super::ending::Ending;
use super::load_stop::Stop;
use super::replays;
use super::snapshot_fates::{corrupt_fates, replaced_at_recovery, snapshot_fates};
use super::*;
use crate::discover::layout::{OffsetNameStep, java_name_order};
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// A snapshot as the prediction sees it.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotInput {
    pub offset: i64,
    pub name: String,
    pub valid: bool,
    /// The producers a load of it keeps (`ProducerStateManager.loadFromSnapshot` drops the
    /// entries expired at load; the load is taken at the copy's reference time), and those
    /// of them with an open transaction; empty when it does not parse.
    pub producers: (Vec<i64>, Vec<i64>),
}

/// Everything the prediction needs.
pub(crate) struct PredictInput<'a> {
    /// The KRaft metadata log (`KafkaMetadataLog`'s load: see `metadata_log_state`).
    pub metadata_log: bool,
    pub clean_shutdown: Option<bool>,
    /// The partition's entries in the log dir's recovery-point and log-start checkpoints.
    pub recovery_point: CheckpointEntry,
    pub log_start_checkpoint: CheckpointEntry,
    /// The log is remote-storage enabled (KIP-405) as far as klogscan knows: the
    /// `__remote_log_metadata` in the inputs names its remote segments
    /// (`PartitionReport::tiered`). `LogLoader.load`'s `isRemoteLogEnabled` then keeps the
    /// log start checkpoint as it is, below the first local segment too. `false` when it
    /// is not known.
    pub remote_log_enabled: bool,
    pub high_watermark: Option<i64>,
    pub first_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub segments: Vec<SegmentInput>,
    pub snapshots: Vec<SnapshotInput>,
    pub leftovers: Vec<LeftoverAction>,
    pub load_rules: &'a [Finding],
    pub broker_version: Option<BrokerVersion>,
    pub producers: usize,
    /// Each producer the walk's replay knows, with the offset and time of its last batch
    /// or marker: those at or above the replay's start are rebuilt by it.
    pub producer_last_offsets: Vec<crate::partition::state::LastActivity>,
    /// The time a load is taken at (the copy's reference time; 0: none known).
    pub ref_time: i64,
    pub open_transactions: usize,
    /// The producers of the walk's open transactions.
    pub open_producers: Vec<i64>,
    /// What the scan's truncation leaves open (its plan's, computed from the replay).
    pub after_truncation: Option<&'a super::reopened::AfterTruncation>,
    pub delete_dir: bool,
    /// The walk checked the CRCs (`ScanOptions::check_crc`): without it a recovered
    /// segment's stop point is unknown.
    pub crc_checked: bool,
    /// The regular files of the directory whose names the load parses as offsets and
    /// cannot (`discover::layout::unparseable_offset_name`), with the step that throws.
    pub unparseable_names: Vec<(String, OffsetNameStep)>,
    /// Why the load cannot be followed (`aliases::Aliases::apply`: a segment of a negative
    /// base, or an empty segment created inside another's offsets): the outcome is then
    /// unknown, as without CRC checks.
    pub unmodelled: Option<String>,
}

/// How many producers, and open transactions, the broker holds once a rebuild that
/// recovered no segment is done (`ProducerStateManager.truncateAndReload`, then
/// `UnifiedLog.rebuildProducerState`'s replay of `[replay_from, log end)`): those the loaded
/// snapshot `snap` keeps, and every producer with a batch or marker at or above
/// `replay_from`. A producer that wrote only in segments deleted since (retention,
/// `DeleteRecords`) lives on in the snapshot, its open transaction too
/// (`loadProducerEntry`); one that wrote only below the replay's start and is not in the
/// snapshot is gone. Without a known start, the walk's counts.
fn rebuilt_counts(
    inp: &PredictInput<'_>,
    snap: Option<&SnapshotInput>,
    replay_from: Option<i64>,
) -> (usize, usize) {
    let Some(from) = replay_from else {
        return (inp.producers, inp.open_transactions);
    };
    let replayed: BTreeSet<i64> = inp
        .producer_last_offsets
        .iter()
        .filter(|a| a.offset >= from)
        .map(|a| a.producer_id)
        .collect();
    counts_with(inp, &replayed, snap)
}

/// The producers the walk's replay brings (`from_walk`) and those the loaded snapshot
/// `snap` keeps, and their open transactions: one the walk's replay meets is the walk's,
/// one of a producer it does not meet is the snapshot's.
fn counts_with(
    inp: &PredictInput<'_>,
    from_walk: &BTreeSet<i64>,
    snap: Option<&SnapshotInput>,
) -> (usize, usize) {
    let (kept, kept_open) = snap.map_or((&[][..], &[][..]), |s| {
        (&s.producers.0[..], &s.producers.1[..])
    });
    let producers = from_walk.union(&kept.iter().copied().collect()).count();
    let open = inp
        .open_producers
        .iter()
        .filter(|p| from_walk.contains(p))
        .count()
        + kept_open.iter().filter(|p| !from_walk.contains(p)).count();
    (producers, open)
}

/// How many producers, and open transactions, the broker holds once a load that recovers
/// segments is done ([`chain`]). The first recovery's rebuild loads a snapshot on disk (or
/// none: the log start); from there every producer is replayed, by the rebuilds and the
/// segments' recoveries, and written into the snapshots they leave, and every snapshot load
/// drops the producers expired at that time (`ProducerStateManager.loadFromSnapshot`,
/// `isProducerExpired`: no open transaction, last timestamp a day or more before). So a
/// producer the walk knows is kept when its last batch or marker lies at or above the
/// snapshot the final rebuild loads (replayed by it), or at or above the first rebuild's
/// start (or the first recovered segment's base, when lower: `LogSegment.recover` replays
/// the whole segment) and it is not expired at the load, taken at the reference time;
/// below that it is the first snapshot's to keep, as without recovery.
fn recovered_counts(
    inp: &PredictInput<'_>,
    c: &chain::Chain,
    log_start: Option<i64>,
) -> (usize, usize) {
    // No snapshot left: the final rebuild replays from the log start, nothing else kept.
    let (Some(end), Some((origin, from))) = (c.last, c.origin) else {
        return rebuilt_counts(inp, None, log_start);
    };
    let snap = origin.and_then(|o| inp.snapshots.iter().find(|s| s.valid && s.offset == o));
    let open: BTreeSet<i64> = inp.open_producers.iter().copied().collect();
    let kept_by_walk: BTreeSet<i64> = inp
        .producer_last_offsets
        .iter()
        .filter(|a| a.offset >= from)
        .filter(|a| {
            a.offset >= end
                || !crate::partition::state::expired_at_load(
                    open.contains(&a.producer_id),
                    a.timestamp,
                    inp.ref_time,
                    super::producer_expiration_ms(inp.broker_version),
                )
        })
        .map(|a| a.producer_id)
        .collect();
    counts_with(inp, &kept_by_walk, snap)
}

/// `unrecovered_corruption`: the damage no recovery looks at, and why.
/// When the load fails (`fails`), the log is not served, so no reader meets the damage
/// while it does.
fn unrecovered_texts(inp: &PredictInput<'_>, plan: &SegmentPlan, fails: bool) -> Vec<String> {
    let not_run = if fails {
        "recovery does not reach it and the load fails first (load_failure): the broker does not serve this log, so no reader meets it while the load fails"
    } else if inp.delete_dir {
        "a -delete directory is loaded without recovery, then deleted: no reader meets it"
    } else if inp.clean_shutdown == Some(true) {
        "after a clean shutdown recovery does not run on it; the broker trusts it and readers will fail there"
    } else if plan.recovery_point_unread {
        "recovery runs on it only if the recovery point, which klogscan could not read, lies in or below this segment; otherwise the broker trusts it and readers will fail there"
    } else {
        "below the recovery point: recovery does not run on it; the broker trusts it and readers will fail there"
    };
    plan.unrecovered
        .iter()
        .map(|(name, pos, why)| format!("{name} at byte {pos}: {why} ({not_run})"))
        .collect()
}

/// The local log start after the load: the log start, or the first segment left when it
/// lies above (an emptied log restarts at its log start).
fn local_log_start(
    log_start: Option<i64>,
    segs: &[SegmentInput],
    deleted: &[String],
) -> Option<i64> {
    log_start.map(|s| {
        segs.iter()
            .find(|x| !deleted.contains(&x.name))
            .map_or(s, |f| s.max(f.base))
    })
}

/// The snapshots the recoveries leave ([`chain::chain`]): each recovered segment's rebuild
/// deletes the snapshots above its base, and each recovery leaves one at its segment's end.
fn recoveries_chain(
    inp: &PredictInput<'_>,
    from_idx: usize,
    log_start_after: Option<i64>,
    leo_after: Option<i64>,
    truncation: Option<&TruncationPrediction>,
) -> Option<chain::Chain> {
    let segs = &inp.segments;
    let unclean = inp.clean_shutdown != Some(true) && !inp.delete_dir;
    chain::chain(&chain::ChainInput {
        segments: segs,
        snapshots: inp
            .snapshots
            .iter()
            .filter(|s| s.valid)
            .map(|s| s.offset)
            .collect(),
        corrupt_snapshots: inp
            .snapshots
            .iter()
            .filter(|s| !s.valid)
            .map(|s| s.offset)
            .collect(),
        log_start_checkpoint: inp.log_start_checkpoint.known().unwrap_or(0),
        log_start: log_start_after,
        log_end: leo_after,
        clean_shutdown: inp.clean_shutdown,
        unclean_from: (unclean && !segs.is_empty()).then_some(from_idx),
        // The unclean pass's truncation (one in a segment recovered for its index deletes
        // nothing after it): never in a segment recovered for its index.
        truncated: truncation
            .and_then(|t| segs.iter().position(|s| s.name == t.segment))
            .filter(|&i| !segs[i].missing_index && segs[i].corrupt_index.is_none()),
    })
}

/// The segments `plan` recovers, and why.
fn recovered_list(plan: &SegmentPlan) -> Vec<SegmentRecovery> {
    (plan.recovered.iter())
        .map(|(segment, reason)| SegmentRecovery {
            segment: segment.clone(),
            reason: reason.clone(),
        })
        .collect()
}

/// The log start a load keeps (`LogLoader.load`'s `newLogStartOffset`): the checkpoint
/// or the first segment's base, the higher — but for a remote-storage-enabled log
/// (`remote`; `isRemoteLogEnabled`) the checkpoint itself, below the local log too: the
/// offsets under the first local segment are in remote storage
/// (`LogLoaderTest.testLogStartOffsetWhenRemoteStorageIsEnabled`). Without an entry the
/// remote-enabled broker starts from 0; klogscan, whose inputs may lack the log dir's
/// files, keeps the first base then.
fn log_start_kept(checkpoint: Option<i64>, segs: &[SegmentInput], remote: bool) -> Option<i64> {
    match (checkpoint, segs.first().map(|s| s.base)) {
        (Some(c), Some(_)) if remote => Some(c),
        (Some(c), Some(b)) => Some(c.max(b)),
        (c, b) => c.or(b),
    }
}

pub(crate) fn predict(mut inp: PredictInput<'_>) -> RecoveryPrediction {
    let from_idx = super::plan::recovery_start(inp.recovery_point, &inp.segments);
    let segs = &inp.segments;
    let mut plan = plan_segments(
        inp.clean_shutdown,
        inp.recovery_point,
        inp.log_start_checkpoint,
        inp.delete_dir,
        segs,
        inp.log_end_offset,
        inp.crc_checked,
    );
    if inp.metadata_log {
        plan.for_metadata_log();
    }
    plan.not_followed(inp.unmodelled.as_deref());
    let recovered = recovered_list(&plan);
    let truncation = plan.truncation.clone().map(Box::new);
    let ending = Ending::of(&plan);
    let outcome_unknown = plan.outcome_unknown.clone();
    let unrecovered = unrecovered_texts(&inp, &plan, false);
    // The ending's offsets (an emptied log restarts at the checkpoint, a -delete one ends
    // at 0).
    let log_start_ck = inp.log_start_checkpoint.known();
    let log_start_kept = log_start_kept(log_start_ck, segs, inp.remote_log_enabled);
    let ends = ending.offsets(&plan, segs, log_start_ck, log_start_kept);
    let (deleted, leo_after, log_start_after) = (ends.deleted, ends.log_end, ends.log_start);
    let mut leftovers = std::mem::take(&mut inp.leftovers);
    let (usable, corrupt, has_snapshot_files) = snapshot_fates(
        &inp.snapshots,
        segs,
        leo_after,
        log_start_after,
        &mut leftovers,
    );
    ending.leftovers(&mut leftovers);
    let snap = usable.iter().copied().max_by_key(|s| s.offset);
    // A load that fails before any recovery runs none.
    let chain = recoveries_chain(
        &inp,
        from_idx,
        log_start_after,
        leo_after,
        truncation.as_deref(),
    )
    .filter(|_| plan.load_fails.is_none());
    let (snapshot, skipped) = loaded_snapshot(
        chain.as_ref(),
        (snap, &usable, has_snapshot_files),
        inp.clean_shutdown,
        &mut leftovers,
    );
    let loaded = snap.map(|s| s.offset);
    corrupt_fates(&corrupt, chain.as_ref(), loaded, &mut leftovers);
    let skipped = ending.skipped(skipped, inp.clean_shutdown);
    let snapshot_at = snapshot.as_ref().map(|s| s.0);
    let replay_from = (!skipped)
        .then(|| ending.replay_from().or(snapshot_at.or(log_start_after)))
        .flatten();
    // Kept whole: nothing removed (an empty last segment may end it above its last batch).
    let whole = (leo_after == inp.log_end_offset || plan.truncation.is_none())
        && deleted.is_empty()
        && outcome_unknown.is_none();
    // Where the log ends is known when the ending, not the recovery, sets it.
    let end_known = outcome_unknown.is_none() || !ending.kept();
    let counts = if skipped || !ending.kept() {
        Some((0, 0))
    } else if let Some(c) = &chain {
        whole.then(|| recovered_counts(&inp, c, log_start_after))
    } else {
        whole.then(|| rebuilt_counts(&inp, snap, replay_from))
    };
    // Untouched: the final state descends from the very file it loads.
    let written_at_load = chain
        .as_ref()
        .is_some_and(|c| c.last.is_some() && c.origin.map(|(o, _)| o) != Some(c.last));
    let mut producer_state = ProducerRebuild {
        snapshot_written_at_load: written_at_load,
        snapshot_offset: snapshot.as_ref().map(|s| s.0),
        snapshot: snapshot.map(|s| s.1),
        skipped,
        replay_from,
        replay_to: leo_after.filter(|_| !skipped && end_known),
        producers: counts.map(|c| c.0),
        open_transactions: counts.map(|c| c.1).or_else(|| {
            let truncated = truncation.is_some() && outcome_unknown.is_none();
            truncated
                .then(|| open_after_truncation(&inp, chain.as_ref(), leo_after))
                .flatten()
        }),
        snapshots_after_load: None,
        origin: final_origin(ending, chain.as_ref(), snapshot_at),
    };
    ending.rebuild(&mut producer_state);
    let keeps = ending.kept() && !skipped;
    let kept = kept_files(chain.as_ref(), keeps, (&usable, &corrupt), loaded);
    producer_state.snapshots_after_load = after_load(AfterLoad {
        kept,
        bases: bases_after(segs, &deleted, ends.created.as_deref()),
        loaded: producer_state.snapshot_offset,
        log_start: log_start_after,
        log_end: leo_after.filter(|_| end_known),
        skipped,
    });
    let from = (replay_from, producer_state.origin);
    let mut pr = RecoveryPrediction {
        clean_shutdown: inp.clean_shutdown,
        recovery_point: inp.recovery_point.known(),
        log_start_checkpoint: log_start_ck,
        unread_checkpoints: unread_checkpoints(&inp),
        high_watermark: inp.high_watermark,
        first_offset: inp.first_offset,
        log_end_offset: inp.log_end_offset,
        // Unread, the checkpoint may raise the log start above the first segment's base.
        log_start_offset_after: log_start_after.filter(|_| !inp.log_start_checkpoint.is_unread()),
        log_end_offset_after: leo_after.filter(|_| end_known),
        log_end_recovered: (ending.recovered_end(leo_after))
            .filter(|_| outcome_unknown.is_none() && !segs.is_empty()),
        recovery_point_after: ending
            .recovery_point(
                inp.clean_shutdown,
                inp.recovery_point,
                !segs.is_empty(),
                leo_after,
                local_log_start(log_start_after, segs, &deleted),
            )
            .filter(|_| end_known),
        // No segment to load: created at the log start checkpoint, unknown when unread.
        created_segment: ends.created.filter(|_| {
            !segs.is_empty() || inp.delete_dir || !inp.log_start_checkpoint.is_unread()
        }),
        leftovers,
        recovered_segments: recovered,
        truncation,
        deleted_segments: deleted,
        unrecovered_corruption: unrecovered,
        producer_state,
        load_failure: None,
        load_stops_at: None,
        outcome_unknown,
    };
    where_it_fails(&mut pr, &inp, &plan, chain.as_ref(), (from, leo_after));
    if pr.load_failure.is_some() {
        pr.unrecovered_corruption = unrecovered_texts(&inp, &plan, true);
    }
    pr
}

/// The snapshot the final rebuild loads `(offset, file name)`, and whether the rebuild is
/// skipped: without recoveries, the newest usable snapshot file (skipped after a clean
/// shutdown that left none); with them, the last one their chain writes (the files it
/// replaces become `leftovers`).
fn loaded_snapshot(
    chain: Option<&chain::Chain>,
    (snap, usable, has_snapshot_files): (Option<&SnapshotInput>, &[&SnapshotInput], bool),
    clean_shutdown: Option<bool>,
    leftovers: &mut Vec<LeftoverAction>,
) -> (Option<(i64, String)>, bool) {
    match chain {
        None => (
            snap.map(|s| (s.offset, s.name.clone())),
            !has_snapshot_files && clean_shutdown == Some(true),
        ),
        Some(c) => {
            leftovers.extend(replaced_at_recovery(c, usable));
            (c.last.map(|o| (o, format!("{o:020}.snapshot"))), c.skipped)
        }
    }
}

/// The load's first failure ([`load_failure`]), and the prediction cut back to what the
/// load does before it ([`super::load_stop::cut`]).
fn where_it_fails(
    pr: &mut RecoveryPrediction,
    inp: &PredictInput<'_>,
    plan: &SegmentPlan,
    chain: Option<&chain::Chain>,
    (from, leo_after): ((Option<i64>, Option<i64>), Option<i64>),
) {
    // `recoverLog` reads the end of the last segment left: never in a `-delete` directory
    // (no `recoverLog`), and a recovered one after a truncation deleted the later ones.
    let reads_last = !inp.delete_dir && plan.deleted.is_empty();
    let recovered = (&pr.recovered_segments[..], reads_last);
    let Some((failure, stop)) = load_failure(inp, chain, from, leo_after, recovered) else {
        return;
    };
    pr.load_failure = Some(failure);
    super::load_stop::cut(pr, &stop, &inp.segments, chain);
}

/// The log dir's checkpoints this load reads that klogscan could not read
/// ([`RecoveryPrediction::unread_checkpoints`]).
fn unread_checkpoints(inp: &PredictInput<'_>) -> Vec<String> {
    use crate::read::format::checkpoint::TextFileKind;
    [
        (
            inp.recovery_point,
            TextFileKind::RecoveryPointOffsetCheckpoint,
        ),
        (
            inp.log_start_checkpoint,
            TextFileKind::LogStartOffsetCheckpoint,
        ),
    ]
    .into_iter()
    .filter(|(e, _)| e.is_unread())
    .map(|(_, k)| k.file_name().to_owned())
    .collect()
}

/// The open transactions once a truncation leaves the log ending at `leo_after`, when the
/// scan's truncation is this one (same log end). The state the load ends with descends
/// from one snapshot file on disk at most — the one the recoveries' chain loads
/// ([`chain::Chain::origin`]; none: a replay from the log start) — so only that file's
/// open transactions count; without a chain, any valid snapshot at or below that end may
/// be the one.
fn open_after_truncation(
    inp: &PredictInput<'_>,
    chain: Option<&chain::Chain>,
    leo_after: Option<i64>,
) -> Option<usize> {
    let a = inp.after_truncation.filter(|a| Some(a.end) == leo_after)?;
    let origin = chain.map(|c| c.origin.and_then(|o| o.0));
    let loaded = inp
        .snapshots
        .iter()
        .filter(|s| s.valid && s.offset <= a.end && origin.is_none_or(|o| Some(s.offset) == o));
    a.open_count(loaded.flat_map(|s| &s.producers.1))
}

/// The snapshot files left before the final rebuild writes its own: the recoveries'
/// chain's, else the usable ones and the corrupt ones below the snapshot `loaded`, never
/// read ([`corrupt_fates`]); none when the log is not kept or the rebuild skipped.
fn kept_files(
    chain: Option<&chain::Chain>,
    kept: bool,
    (usable, corrupt): (&[&SnapshotInput], &[&SnapshotInput]),
    loaded: Option<i64>,
) -> Vec<i64> {
    match (chain, kept) {
        (_, false) => Vec::new(),
        (Some(c), true) => c.files.clone(),
        (None, true) => {
            let unread = |s: &&&SnapshotInput| loaded.is_some_and(|l| l > s.offset);
            let unread = corrupt.iter().filter(unread);
            usable.iter().chain(unread).map(|s| s.offset).collect()
        }
    }
}

/// The snapshot file on disk the final rebuild's state descends from: the one it loads
/// (`loaded`), or, after recoveries, the one their chain loaded first (`None`: the log
/// start's empty state, as in a `-delete` directory's replay from 0).
fn final_origin(ending: Ending, chain: Option<&chain::Chain>, loaded: Option<i64>) -> Option<i64> {
    match chain {
        _ if ending.replay_from().is_some() => None,
        Some(c) => c.origin.and_then(|(o, _)| o),
        None => loaded,
    }
}

/// The first replay error the broker meets while loading, in its order: each recovery's
/// rebuild `[snapshot, base)` and segment `[base, end)` ([`chain`]: a rule broken there
/// throws however new the newest snapshot on disk was; the segment's end lies below any
/// truncation point), then the final rebuild's replay `[replay_from, log end)`; in a
/// rebuild's replay, also where a segment no recovery has cut yet stops framing or holds a
/// malformed marker ([`replays`]). Before all of them, a file name the load cannot parse as
/// an offset ([`name_failures`]).
fn load_failure(
    inp: &PredictInput<'_>,
    chain: Option<&chain::Chain>,
    (replay_from, origin): (Option<i64>, Option<i64>),
    leo_after: Option<i64>,
    (recovered, reads_last): (&[SegmentRecovery], bool),
) -> Option<(Box<LoadFailure>, Stop)> {
    let segs = &inp.segments;
    let rules = replays::Rules {
        load_rules: inp.load_rules,
        broker_version: inp.broker_version,
        snapshots: &inp.snapshots,
    };
    let at_step = |(step, f): (replays::StepId, Box<LoadFailure>)| {
        let stop = step.map_or(Stop::FinalRebuild, |(seg, for_index)| {
            Stop::Recovery(seg, for_index)
        });
        (f, stop)
    };
    let (first, in_loop) = name_failures(inp);
    if let Some((f, stop)) = first {
        return Some((f, stop));
    }
    if let Some(f) = super::swaps::unreadable(segs) {
        return Some((f, Stop::SwapRead));
    }
    if let Some((stop, failure)) = segment_files_failure(segs, in_loop) {
        let before = chain
            .map_or(&[][..], |c| &c.steps[..])
            .iter()
            .filter(|st| st.for_index && stop.after(&segs[st.seg]));
        let replays = replays::step_replays(segs, before);
        let recovers = failure.kind == Kind::OffsetRegression.id();
        return replays::replay_failure(&rules, segs, &replays)
            .map(at_step)
            .or(Some((failure, stop.stop(recovers))));
    }
    if let Some(f) = super::swaps::open_failure_before_3_0(segs) {
        return Some((f, Stop::SwapCompletion));
    }
    let steps = chain.map_or(&[][..], |c| &c.steps[..]);
    let replays = replays::step_replays(segs, steps.iter());
    // After the recoveries, `recoverLog` reads the last segment's end
    // (`deleteSegmentsIfLogStartGreaterThanLogEnd` → `readNextOffset`), before the final
    // rebuild's replay.
    if let Some(f) = replays::replay_failure(&rules, segs, &replays) {
        return Some(at_step(f));
    }
    if let Some(f) =
        (super::last_read::last_segment_unreadable(segs, recovered)).filter(|_| reads_last)
    {
        return Some((f, Stop::LogEnd));
    }
    let (Some(from), Some(to)) = (replay_from, leo_after) else {
        return None;
    };
    let last = replays::final_replay(segs, steps.iter(), (from, to), origin);
    replays::replay_failure(&rules, segs, std::slice::from_ref(&last)).map(at_step)
}

/// Where `loadSegmentFiles` throws: at a segment (the name the loop meets it under) or at
/// a file name.
enum LoopStop<'a> {
    Segment(String),
    Name(&'a str),
}

impl LoopStop<'_> {
    /// True when the loop has opened segment `s` (and run its index recovery) before it
    /// throws here.
    fn after(&self, s: &SegmentInput) -> bool {
        let at = match self {
            LoopStop::Segment(name) => name.as_str(),
            LoopStop::Name(name) => name,
        };
        java_name_order(s.load_name(), at) == Ordering::Less
    }

    /// The load's stop there; `recovers`: the segment's recovery throws.
    fn stop(&self, recovers: bool) -> Stop {
        match self {
            LoopStop::Segment(at) => Stop::SegmentFiles {
                at: at.clone(),
                recovers,
            },
            LoopStop::Name(at) => Stop::SegmentFiles {
                at: (*at).to_owned(),
                recovers: false,
            },
        }
    }
}

/// The first failure of `LogLoader.loadSegmentFiles`, which checks every segment's files
/// in name order before the log is recovered or its producer state rebuilt: a segment
/// recovered there whose recovery throws, a `.txnindex` that throws when checked, or
/// `name`, the first segment file's name it cannot parse as an offset. Such a failure
/// comes before all but the index recoveries of the segments named before it (same loop).
fn segment_files_failure<'a>(
    segs: &[SegmentInput],
    name: Option<NamedFailure<'a>>,
) -> Option<(LoopStop<'a>, Box<LoadFailure>)> {
    // In the loop's order: the segments' own names' unless a noncanonical name of one
    // comes first (`SegmentInput::opened_as`).
    let mut order: Vec<&SegmentInput> = segs.iter().collect();
    if segs.iter().any(|s| s.opened_as.is_some()) {
        order.sort_by(|a, b| java_name_order(a.load_name(), b.load_name()));
    }
    let at_segment = order.into_iter().find_map(|s| {
        // Opened first: `FileRecords` refuses a file above `Integer.MAX_VALUE` bytes
        // (`FileRecordsTest.testOpenOversizeFile`); no broker writes one
        // (`FileRecords.append` refuses to pass the limit).
        if let Some(len) = s.oversize {
            return Some((s, Box::new(LoadFailure {
                kind: Kind::PreallocatedTail.id().into(),
                offset: None,
                exception: "KafkaException".into(),
                message: format!(
                    "opening segment {} at load (LogLoader.loadSegmentFiles → LogSegment.open → FileRecords.open, segments in name order) throws KafkaException: the file is {len} bytes, above the maximum segment size {} (Integer.MAX_VALUE) FileRecords opens; LogManager.loadLogs rethrows it (the broker does not start)",
                    s.name,
                    i32::MAX
                ),
            })));
        }
        // Recovered at load, its transaction index append throws before any later
        // offset index append can (`LogSegment.recover` stops at the first throw).
        let txn = s.walk.as_ref().and_then(|w| w.txn_index_throw.as_deref());
        if let Some(t) = txn.filter(|_| s.missing_index || s.corrupt_index.is_some()) {
            let what = format!("recovering segment {} at load ({})", s.name, s.at_load_step());
            return Some((s, replays::txn_index_at(s, &what, t)));
        }
        if let Some(why) = super::throws_at_load(s) {
            let offset = s.walk.as_ref().and_then(|w| w.stop.as_deref()).and_then(|st| st.2);
            return Some((s, Box::new(LoadFailure {
                kind: Kind::OffsetRegression.id().into(),
                offset,
                exception: "InvalidOffsetException".into(),
                message: format!(
                    "recovering segment {} at load ({}) throws InvalidOffsetException — {why}; only recoverLog catches it (to empty the segment), the load-time recoveries do not, so the log fails to load and LogManager.loadLogs rethrows it (the broker does not start)",
                    s.name, s.at_load_step()
                ),
            })));
        }
        let msg = s.load_error.as_ref()?;
        Some((s, Box::new(LoadFailure {
            kind: Kind::TxnindexMismatch.id().into(),
            offset: None,
            exception: "KafkaException".into(),
            message: format!(
                "checking segment {}'s indexes at load (LogLoader.loadSegmentFiles, segments in name order, before the unclean-shutdown recovery and the producer-state rebuild) throws KafkaException: {msg}",
                s.name
            ),
        })))
    });
    let stop = |s: &SegmentInput| LoopStop::Segment(s.load_name().to_owned());
    match (at_segment, name) {
        (Some((s, f)), Some((n, _))) if java_name_order(s.load_name(), n) == Ordering::Less => {
            Some((stop(s), f))
        }
        (_, Some((n, f))) => Some((LoopStop::Name(n), f)),
        (Some((s, f)), None) => Some((stop(s), f)),
        (None, None) => None,
    }
}

/// A load failure at a file name.
type NamedFailure<'a> = (&'a str, Box<LoadFailure>);

/// The load failures of file names the load cannot parse as offsets
/// (`LogFileUtils.offsetFromFileName`: `Long.parseLong` of the text before the first `.`
/// throws `NumberFormatException`, which no step of the load catches and which is not an
/// `IOException`, so the log dir is not taken offline and the broker's start fails): the
/// first that throws before `loadSegmentFiles` (a `.snapshot` name while the producer-state
/// manager is built, then a `.cleaned` or `.swap` one in the first pass), and the first
/// segment file's name in name order, which `loadSegmentFiles` meets after the files
/// named before it. In the first pass (`LogLoader.removeTempFilesAndCollectSwapFiles`,
/// 3.0 and later) a `.cleaned` name throws while the directory is listed, a `.swap` one
/// only once the listing is over (sorting the swaps against the lowest `.cleaned` offset),
/// so any `.cleaned` one comes first; before 3.0 both throw in the listing
/// (`Log.removeTempFilesAndCollectSwapFiles` deletes a swap's base's indexes there), whose
/// order is the file system's (name order taken).
fn name_failures<'a>(
    inp: &'a PredictInput<'_>,
) -> (Option<(Box<LoadFailure>, Stop)>, Option<NamedFailure<'a>>) {
    let failure = |name: &str, step: OffsetNameStep| {
        let start = if inp.metadata_log {
            "KafkaMetadataLog.apply throws it and the node does not start"
        } else {
            "LogManager.loadLogs rethrows it and the broker does not start"
        };
        Box::new(LoadFailure {
            kind: Kind::UnparseableFileName.id().into(),
            offset: None,
            exception: "NumberFormatException".into(),
            message: format!(
                "{} ({}) meets {name}: the text before its first '.' is not a number, so Long.parseLong throws NumberFormatException; it is not an IOException, so the log dir is not taken offline: {start}",
                step.when(),
                step.method()
            ),
        })
    };
    let before_3_0 = (inp.broker_version).is_some_and(|v| v < BrokerVersion(3, 0, 0));
    // Thrown in the first pass's listing (else after it).
    let in_listing = |n: &str| before_3_0 || n.ends_with(".cleaned");
    let mut names: Vec<&(String, OffsetNameStep)> = inp.unparseable_names.iter().collect();
    names.sort_by(|a, b| {
        (a.1.cmp(&b.1))
            .then_with(|| in_listing(&b.0).cmp(&in_listing(&a.0)))
            .then_with(|| java_name_order(&a.0, &b.0))
    });
    let first = names
        .iter()
        .find(|(_, s)| *s != OffsetNameStep::SegmentFiles)
        .map(|(n, s)| {
            let stop = match s {
                OffsetNameStep::ProducerSnapshots => Stop::BeforeLoad,
                _ if in_listing(n) => Stop::TempListing,
                _ => Stop::TempSwaps,
            };
            (failure(n, *s), stop)
        });
    let in_loop = names
        .iter()
        .find(|(_, s)| *s == OffsetNameStep::SegmentFiles)
        .map(|(n, s)| (n.as_str(), failure(n, *s)));
    (first, in_loop)
}
