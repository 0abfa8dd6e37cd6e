//! `verify`'s prediction: the segment plan plus the log start, the snapshots, the
//! producer-state rebuild and the first replay error of `LogLoader.load`.

use super::*;
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
    /// Each producer the walk's replay knows, with the offset and time of its last batch
    /// or marker: those at or above the replay's start are rebuilt by it.
    pub producer_last_offsets: Vec<crate::partition::state::LastActivity>,
    /// The time a load is taken at (the copy's reference time; 0: none known).
    pub ref_time: i64,
    pub open_transactions: usize,
    /// The producers of the walk's open transactions.
    pub open_producers: Vec<i64>,
    pub delete_dir: bool,
    /// The walk checked the CRCs (`ScanOptions::check_crc`): without it a recovered
    /// segment's stop point is unknown.
    pub crc_checked: bool,
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
    let (kept, kept_open) = snap.map_or((&[][..], &[][..]), |s| (&s.producers.0[..], &s.producers.1[..]));
    let producers = replayed.union(&kept.iter().copied().collect()).count();
    // An open transaction the replay meets is the walk's; one of a producer the replay
    // does not meet is the snapshot's.
    let open = inp.open_producers.iter().filter(|p| replayed.contains(p)).count()
        + kept_open.iter().filter(|p| !replayed.contains(p)).count();
    (producers, open)
}

/// How many producers, and open transactions, the broker holds once a load that recovered
/// segments is done. Each recovered segment is recovered by a producer-state manager of its
/// own (`LogLoader.recoverSegment`): rebuilt up to the segment's base
/// (`UnifiedLog.rebuildProducerState`, whose `truncateAndReload` deletes every snapshot
/// above that base, so none on disk above the first recovered segment's base survives)
/// from the newest snapshot below it, then a snapshot at the segment's end. The final
/// rebuild to the log end loads the last of those, and every snapshot load drops the
/// producers expired at that time (`ProducerStateManager.loadFromSnapshot`,
/// `isProducerExpired`: no open transaction, last timestamp a day or more before). So a
/// producer the walk knows is kept when its last batch or marker lies at or above the last
/// recovered segment's end (replayed), or lies at or above the first recovery's snapshot
/// (without one, the log start or the first recovered segment's base, whichever is lower:
/// `LogSegment.recover` replays the whole segment) and it is not expired at the load
/// (taken at the reference time); below that it is the snapshot's to keep, as without
/// recovery.
fn recovered_counts(
    inp: &PredictInput<'_>,
    recovered: &[SegmentRecovery],
    usable: &[&SnapshotInput],
    log_start: Option<i64>,
    log_end: Option<i64>,
) -> (usize, usize) {
    let segs = &inp.segments;
    let at = |name: &str| segs.iter().position(|s| s.name == name);
    let (Some(first), Some(last)) = (
        recovered.first().and_then(|r| at(&r.segment)),
        recovered.last().and_then(|r| at(&r.segment)),
    ) else {
        return (inp.producers, inp.open_transactions);
    };
    // Where the last recovered segment's snapshot is taken: its next offset once recovered.
    let Some(end) = segs[last]
        .walk
        .as_ref()
        .map(|w| w.next_offset)
        .or_else(|| segs.get(last + 1).map(|s| s.base))
        .or(log_end)
    else {
        return (inp.producers, inp.open_transactions);
    };
    // The first recovery's rebuild: the newest snapshot at or below its segment's base.
    let base = segs[first].base;
    let snap = usable.iter().copied().filter(|s| s.offset <= base).max_by_key(|s| s.offset);
    // `LogSegment.recover` replays every batch of the segment, below the log start too.
    let Some(from) = snap.map(|s| s.offset).or(log_start.map(|l| l.min(base))) else {
        return (inp.producers, inp.open_transactions);
    };
    let open: BTreeSet<i64> = inp.open_producers.iter().copied().collect();
    let now = inp.ref_time;
    let kept_by_walk: BTreeSet<i64> = inp
        .producer_last_offsets
        .iter()
        .filter(|a| a.offset >= from)
        .filter(|a| {
            let gap = if a.timestamp < 0 {
                Some(i64::MAX)
            } else {
                (now > 0).then(|| now.saturating_sub(a.timestamp))
            };
            a.offset >= end
                || !crate::partition::state::producer_expired(open.contains(&a.producer_id), gap)
        })
        .map(|a| a.producer_id)
        .collect();
    let (kept, kept_open) = snap.map_or((&[][..], &[][..]), |s| (&s.producers.0[..], &s.producers.1[..]));
    let producers = kept_by_walk.union(&kept.iter().copied().collect()).count();
    let open_count = inp
        .open_producers
        .iter()
        .filter(|p| kept_by_walk.contains(p))
        .count()
        + kept_open.iter().filter(|p| !kept_by_walk.contains(p)).count();
    (producers, open_count)
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
        inp.crc_checked,
    );
    let recovered: Vec<SegmentRecovery> = plan
        .recovered
        .iter()
        .map(|(segment, reason)| SegmentRecovery {
            segment: segment.clone(),
            reason: reason.clone(),
        })
        .collect();
    let truncation = plan.truncation.clone().map(Box::new);
    let mut deleted = plan.deleted.clone();
    let mut leo_after = plan.log_end_after;
    let outcome_unknown = plan.outcome_unknown.clone();
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
    let (usable, has_snapshot_files) = snapshot_fates(
        &inp.snapshots,
        segs,
        leo_after,
        log_start_after,
        &mut leftovers,
    );
    let snap = usable.iter().copied().max_by_key(|s| s.offset);
    // LogLoader.recoverSegment ends with producerStateManager.takeSnapshot(): a segment
    // recovered at load leaves a snapshot, so the rebuild is not skipped then.
    let skipped = !has_snapshot_files && inp.clean_shutdown == Some(true) && recovered.is_empty();
    let replay_from = if skipped {
        None
    } else {
        snap.map(|s| s.offset).or(log_start_after)
    };
    let whole = leo_after == inp.log_end_offset && deleted.is_empty() && outcome_unknown.is_none();
    // A segment recovered at load rebuilds the state through snapshots of its own
    // (`LogLoader.recoverSegment`).
    let counts = if skipped {
        Some((0, 0))
    } else if !recovered.is_empty() {
        whole.then(|| recovered_counts(&inp, &recovered, &usable, log_start_after, leo_after))
    } else {
        whole.then(|| rebuilt_counts(&inp, snap, replay_from))
    };
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
        producers: counts.map(|c| c.0),
        open_transactions: counts.map(|c| c.1),
    };
    let replayed = Replayed {
        snapshots: &usable,
        log_start: log_start_after,
        from: replay_from,
        log_end: leo_after,
    };
    let load_failure = load_failure(&inp, &recovered, from_idx, replayed);
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
) -> (Vec<&'s SnapshotInput>, bool) {
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
    // The clean-shutdown shortcut looks at the snapshots left after the stray ones are
    // removed (`removeStraySnapshots` runs first); corrupt, beyond-log and below-log-start
    // snapshots are only deleted later, by `truncateAndReload`, so they still count.
    let has_snapshot_files = snapshots.iter().any(|s| !is_stray(s.offset));
    (usable, has_snapshot_files)
}

/// The first replay error the broker meets while loading, in its order (see the comment
/// inside); `from_idx` is the segment holding the recovery point.
/// What the rebuilds of a load replay from: the snapshots the load can use, the log start,
/// the final rebuild's start (`None`: skipped) and the log end after recovery.
struct Replayed<'s> {
    snapshots: &'s [&'s SnapshotInput],
    log_start: Option<i64>,
    from: Option<i64>,
    log_end: Option<i64>,
}

fn load_failure(
    inp: &PredictInput<'_>,
    recovered: &[SegmentRecovery],
    from_idx: usize,
    replayed: Replayed<'_>,
) -> Option<Box<LoadFailure>> {
    let segs = &inp.segments;
    let unclean = inp.clean_shutdown != Some(true) && !inp.delete_dir;
    // Load failures: replay errors in the order the broker meets them. First the segments
    // recovered at load (missing/corrupt index), then those recovered after an unclean
    // shutdown. Each recovery (`LogLoader.recoverSegment`) first rebuilds the producer
    // state up to the segment's base from the newest snapshot at or below it (the log
    // start without one; that rebuild's `truncateAndReload` deletes the snapshots above
    // the base), then replays the segment's valid batches and leaves a snapshot at its end:
    // a rule broken in `[snapshot, base)` or in `[base, end)` (end: below any truncation
    // point) throws however new the newest snapshot was. Then the final rebuild's replay,
    // from the newest snapshot left.
    let mut ranges: Vec<(i64, i64, String)> = Vec::new();
    let seg_end = |i: usize| -> Option<i64> {
        match &segs[i].walk {
            Some(w) => Some(w.next_offset),
            None => segs.get(i + 1).map(|n| n.base).or(inp.log_end_offset),
        }
    };
    // (segment, recovered for its index rather than after an unclean shutdown)
    let mut recoveries: Vec<(usize, bool)> = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        if s.missing_index || s.corrupt_index.is_some() {
            recoveries.push((i, true));
        }
    }
    if unclean {
        for r in recovered {
            match segs.iter().position(|s| s.name == r.segment) {
                Some(i) if i >= from_idx => recoveries.push((i, false)),
                _ => {}
            }
        }
    }
    let mut snaps: BTreeSet<i64> = replayed.snapshots.iter().map(|s| s.offset).collect();
    for (i, for_index) in recoveries {
        let Some(end) = seg_end(i) else { continue };
        let (base, name) = (segs[i].base, &segs[i].name);
        let from = snaps.range(..=base).next_back().copied();
        match from.or(replayed.log_start) {
            Some(f) if f < base => ranges.push((
                f,
                base,
                format!(
                    "rebuilding the producer state up to offset {base} to recover segment {name} (from {})",
                    from.map_or_else(|| format!("the log start {f}"), |o| format!("the snapshot at {o}"))
                ),
            )),
            _ => {}
        }
        let why = if for_index {
            "at load (its index is missing or corrupt; "
        } else {
            "after the unclean shutdown ("
        };
        ranges.push((
            base,
            end,
            format!("recovering segment {name} {why}producer state rebuilt up to offset {base})"),
        ));
        snaps.retain(|o| *o <= base);
        snaps.insert(end);
    }
    // The final rebuild replays from the newest snapshot left: the one on disk, or the last
    // recovery's.
    let last = replayed.log_end.and_then(|to| snaps.range(..=to).next_back().copied());
    let from = if ranges.is_empty() { replayed.from } else { last.or(replayed.from) };
    if let (Some(from), Some(to)) = (from, replayed.log_end) {
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
                load_failure = Some(Box::new(LoadFailure {
                    kind: f.kind.id().into(),
                    offset: Some(o),
                    exception: exception.into(),
                    message: format!("{what} throws {exception} at offset {o}: {}", f.message),
                }));
                break 'ranges;
            }
        }
    }
    load_failure
}
