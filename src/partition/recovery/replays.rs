//! The producer-state replays of a load, in the broker's order, and the first of them that
//! throws: a batch that breaks a rule the replay enforces (the walk's load-rule findings),
//! and — in a rebuild's replay (`UnifiedLog.rebuildProducerState` →
//! `loadProducersFromRecords`) — the bytes of a segment no recovery has cut yet where the
//! walk stopped framing it.
//!
//! What a rebuild's replay of `[from, to)` reads: the segments `LogSegments.values(from, to)`
//! gives (from the one holding `from`, its floor, up to those based below `to`); of each,
//! from the first batch whose last offset reaches `max(base, from)` to the file's end —
//! except in the segment holding `to` (`floorSegment`), which it reads up to the first
//! batch whose last offset reaches `to` (`LogSegment.translateOffset`, which itself frames
//! the batches from an index entry on until it finds one, so it reads to the file's end
//! when none does). Both reads frame with `FileLogInputStream.nextBatch`: an entry with a
//! size below 14 and at least 18 bytes from it throws `CorruptRecordException`; and each
//! control batch with a producer id is decoded (`ProducerAppendInfo.append` →
//! `EndTransactionMarker.deserialize`), so a malformed COMMIT/ABORT throws
//! `InvalidRecordException`, a control type other than those two
//! `IllegalArgumentException`, and a null key or COMMIT/ABORT value
//! `NullPointerException`. None is caught by the load, nor an `IOException`: the broker
//! does not start. A segment's recovery (`LogSegment.recover`) catches the first two and
//! truncates — at a malformed COMMIT/ABORT after it, which it keeps, so the next replay
//! reading it throws —, but not `IllegalArgumentException` nor `NullPointerException`: its
//! range is listed too (for the load rules and that throw), without a read of its stop.

use super::chain;
use super::{
    BrokerVersion, ControlThrow, Finding, Kind, LoadFailure, ReadThrows, SegmentInput, StopReason,
    TxnIndexThrow,
};

/// What a rebuild's replay reads of the log.
pub(super) struct Reads {
    /// The segments the log holds when it runs: the first `held` (a segment recovered at
    /// load for its index is added to the log only once recovered).
    pub held: usize,
    /// Those of them recovered before it (cut at their stop).
    pub recovered: Vec<usize>,
}

/// A recovery step: its segment (index) and whether it is recovered for its index
/// ([`chain::Step`]); `None`: the final rebuild.
pub(super) type StepId = Option<(usize, bool)>;

/// One replay of `[from, to)` of the load.
pub(super) struct Replay {
    pub from: i64,
    pub to: i64,
    /// What it is, for the failure's message.
    pub what: String,
    /// A segment's recovery: the segment (index).
    pub recovers: Option<usize>,
    /// The recovery step it belongs to (its rebuild or the segment's own): the segment
    /// (index) and whether it is recovered for its index ([`chain::Step`]); `None`: the
    /// final rebuild.
    pub step: StepId,
    /// A rebuild's replay: what it reads. `None`: a segment's recovery.
    pub reads: Option<Reads>,
    /// The snapshot file on disk before the load that the state it starts from descends
    /// from ([`chain::Step::origin`]; `None`: an empty state at the log start).
    pub origin: Option<i64>,
}

/// The replays each recovery step runs, in the broker's order: its rebuild
/// `[snapshot, base)`, then the segment `[base, end)`.
pub(super) fn step_replays<'a>(
    segs: &[SegmentInput],
    steps: impl Iterator<Item = &'a chain::Step>,
) -> Vec<Replay> {
    let mut replays = Vec::new();
    let mut recovered: Vec<usize> = Vec::new();
    for step in steps {
        let (base, name) = (step.base, &segs[step.seg].name);
        if let Some((from, loaded)) = step.rebuild {
            let what = loaded.map_or_else(
                || format!("the log start {from}"),
                |o| format!("the snapshot at {o}"),
            );
            replays.push(Replay {
                from,
                to: base,
                what: format!(
                    "rebuilding the producer state up to offset {base} to recover segment {name} (from {what})"
                ),
                recovers: None,
                step: Some((step.seg, step.for_index)),
                reads: Some(Reads {
                    held: if step.for_index { step.seg } else { segs.len() },
                    recovered: recovered.clone(),
                }),
                origin: step.origin,
            });
        }
        let why = if step.for_index {
            "at load (its index is missing or corrupt; "
        } else {
            "after the unclean shutdown ("
        };
        replays.push(Replay {
            from: base,
            to: step.end,
            what: format!(
                "recovering segment {name} {why}producer state rebuilt up to offset {base})"
            ),
            recovers: Some(step.seg),
            step: Some((step.seg, step.for_index)),
            reads: None,
            origin: step.origin,
        });
        recovered.push(step.seg);
    }
    replays
}

/// The final rebuild's replay `[from, to)`, once every step has run, over the state
/// descending from the snapshot file `origin` (`None`: the log start's empty state).
pub(super) fn final_replay<'a>(
    segs: &[SegmentInput],
    steps: impl Iterator<Item = &'a chain::Step>,
    (from, to): (i64, i64),
    origin: Option<i64>,
) -> Replay {
    Replay {
        from,
        to,
        what: format!("replaying the producer state from offset {from}"),
        recovers: None,
        step: None,
        reads: Some(Reads {
            held: segs.len(),
            recovered: steps.map(|s| s.seg).collect(),
        }),
        origin,
    }
}

/// What the replays check: the walk's load-rule findings and the broker's version, and
/// the snapshot files on disk (which producers a load of each keeps).
pub(super) struct Rules<'a> {
    pub load_rules: &'a [Finding],
    pub broker_version: Option<BrokerVersion>,
    pub snapshots: &'a [super::SnapshotInput],
}

/// The first failure, in the replays' order: within one replay, the earlier segment's,
/// and in one segment the lower offset's (a stop lies after every batch of its segment
/// the replay reads). With it, the recovery step of the replay that throws
/// ([`Replay::step`]; `None`: the final rebuild).
pub(super) fn replay_failure(
    rules: &Rules<'_>,
    segs: &[SegmentInput],
    replays: &[Replay],
) -> Option<(StepId, Box<LoadFailure>)> {
    for r in replays {
        let seg_of = |o: i64| segs.iter().rposition(|s| s.base <= o).unwrap_or(0);
        let rule = rule_failure(rules, r).map(|(o, f)| ((seg_of(o), o), f));
        let stop = stop_failure(segs, r).map(|(i, f)| ((i, i64::MAX), f));
        let control = control_failure(segs, r).map(|(i, o, f)| ((i, o), f));
        let txn = r.recovers.and_then(|i| {
            let t = segs.get(i)?.walk.as_ref()?.txn_index_throw.as_deref()?;
            Some(((i, t.offset), txn_index_at(&segs[i], &r.what, t)))
        });
        let first = [rule, control, txn, stop]
            .into_iter()
            .flatten()
            .min_by_key(|c| c.0);
        if let Some((_, f)) = first {
            return Some((r.step, f));
        }
    }
    None
}

/// The segments the rebuild's replay `r` reads, in order, each with its index and whether
/// it holds `to` (read up to the first batch reaching `to`): from the one holding `from`
/// (`floorKey`; those below it are not read) to the last based below `to`, among the ones
/// the replay holds. `None` when `r` reads no segment list.
fn read_segments<'a>(
    segs: &'a [SegmentInput],
    r: &'a Replay,
) -> Option<impl Iterator<Item = (usize, &'a SegmentInput, bool)> + 'a> {
    let held = &segs[..r.reads.as_ref()?.held.min(segs.len())];
    Some(
        held.iter()
            .enumerate()
            .take_while(move |(_, s)| s.base < r.to)
            .filter_map(move |(i, s)| {
                let next = held.get(i + 1).map(|n| n.base);
                next.is_none_or(|n| n > r.from)
                    .then(|| (i, s, next.is_none_or(|n| n > r.to)))
            }),
    )
}

/// The first control batch the replay `r` reads whose record throws ([`ControlThrow`]),
/// with its segment and offset. A segment's recovery throws at its own batch only when
/// it does not catch the throw (another type than COMMIT/ABORT, a null field:
/// [`ControlThrow::caught_by_recovery`]); a rebuild's replay at any it reads:
/// from the first batch reaching `max(base, from)`, and in the segment holding `to` up to
/// the first batch reaching `to`. Recovered segments included: the recovery keeps it.
fn control_failure(segs: &[SegmentInput], r: &Replay) -> Option<(usize, i64, Box<LoadFailure>)> {
    if let Some(i) = r.recovers {
        let c = segs.get(i)?.walk.as_ref()?.control_throw.as_deref()?;
        return (!c.caught_by_recovery()).then(|| (i, c.offset, control_at(&segs[i], r, c)));
    }
    for (i, s, holds_to) in read_segments(segs, r)? {
        let Some(c) = s.walk.as_ref().and_then(|w| w.control_throw.as_deref()) else {
            continue;
        };
        if c.last_offset >= s.base.max(r.from) && (!holds_to || c.last_offset < r.to) {
            return Some((i, c.offset, control_at(s, r, c)));
        }
    }
    None
}

/// False for a rule 22 finding read against the producer snapshot at the first held
/// segment (evidence `snapshot_offset`) when the replay `r` does not hold that epoch:
/// `ProducerAppendInfo.appendEndTxnMarker` checks a marker against the producer entry the
/// replay's state has, and here only a load from that snapshot (or a later one on disk,
/// written from the same state) puts the deleted marker's coordinator epoch there. The
/// load deletes every snapshot at or below the log start it passes before loading one
/// (`ProducerStateManager.truncateAndReload`: the log start checkpoint in a recovery's
/// rebuild, the loaded log start — never below the first segment's base — in the final
/// one), so a replay from an empty state at the log start (`origin` `None`) has no entry
/// for the producer and accepts the marker; nor does one whose snapshot drops the entry
/// as expired at the load (`loadFromSnapshot` → `isProducerExpired`). True for any other
/// finding.
fn holds_seeded_epoch(rules: &Rules<'_>, r: &Replay, f: &Finding) -> bool {
    let Some(seed) = f.evidence.get("snapshot_offset").and_then(|v| v.as_i64()) else {
        return true;
    };
    let Some(origin) = r.origin.filter(|&o| o >= seed) else {
        return false;
    };
    let kept = |s: &&super::SnapshotInput| s.valid && s.offset == origin;
    let pid = f.producer_id;
    rules
        .snapshots
        .iter()
        .find(kept)
        .is_some_and(|s| pid.is_some_and(|p| s.producers.0.contains(&p)))
}

/// The first batch of `r` whose load rule makes the replay throw, with its offset.
fn rule_failure(rules: &Rules<'_>, r: &Replay) -> Option<(i64, Box<LoadFailure>)> {
    let old_broker = rules
        .broker_version
        .is_some_and(|v| v <= BrokerVersion(2, 4, 0));
    for f in rules.load_rules {
        let Some(o) = f.offset else { continue };
        if o < r.from || o >= r.to || !holds_seeded_epoch(rules, r, f) {
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
            let what = &r.what;
            return Some((
                o,
                Box::new(LoadFailure {
                    kind: f.kind.id().into(),
                    offset: Some(o),
                    exception: exception.into(),
                    message: format!("{what} throws {exception} at offset {o}: {}", f.message),
                }),
            ));
        }
    }
    None
}

/// The first stop of a segment no recovery has cut that the rebuild's replay `r` reads and
/// throws at, with the segment's index. A segment whose walk is unknown ends the search
/// (what it holds may throw first); a stop that does not throw, or whose read the evidence
/// does not decide, is passed.
fn stop_failure(segs: &[SegmentInput], r: &Replay) -> Option<(usize, Box<LoadFailure>)> {
    let recovered = &r.reads.as_ref()?.recovered;
    for (i, s, holds_to) in read_segments(segs, r)? {
        if recovered.contains(&i) {
            continue;
        }
        let w = s.walk.as_ref()?;
        let Some((pos, why, _)) = w.stop.as_deref() else {
            continue;
        };
        let Some(how) = why.read_throws(w.len.saturating_sub(*pos)) else {
            continue;
        };
        let start = s.base.max(r.from);
        // The segment holding `to` is read up to the first batch reaching `to` (`holds_to`).
        let zeros = how == ReadThrows::ZeroTail;
        let cut_before = holds_to && w.next_offset > r.to;
        // A corrupt length may hide batches the index points into: the read is known to
        // start before it only when a batch before it reaches `start`.
        if cut_before || (!zeros && start >= w.next_offset) {
            continue;
        }
        return Some((i, throws_at(s, r, *pos, why, how)));
    }
    None
}

fn throws_at(
    s: &SegmentInput,
    r: &Replay,
    pos: u64,
    why: &StopReason,
    how: ReadThrows,
) -> Box<LoadFailure> {
    let kind = match how {
        ReadThrows::ZeroTail => Kind::PreallocatedTail,
        ReadThrows::BelowMinimum { header: true } => Kind::InvalidBatch,
        ReadThrows::BelowMinimum { header: false } => Kind::TrailingBytes,
    };
    Box::new(LoadFailure {
        kind: kind.id().into(),
        offset: None,
        exception: "CorruptRecordException".into(),
        message: format!(
            "{} throws CorruptRecordException in segment {} at byte {pos}, which no recovery has cut before it — {why}: UnifiedLog.rebuildProducerState reads the segment's batches (LogSegment.read → loadProducersFromRecords) and FileLogInputStream.nextBatch throws for a size below 14 bytes; the load does not catch it (the broker does not start)",
            r.what, s.name
        ),
    })
}

fn control_at(s: &SegmentInput, r: &Replay, c: &ControlThrow) -> Box<LoadFailure> {
    let (m, pos, exception) = (c.offset, c.position, c.exception());
    let caught = if !c.caught_by_recovery() {
        "neither LogSegment.recover nor the load catches it"
    } else {
        "LogSegment.recover catches it but keeps the batch (it counts the batch as valid before the update), so every later replay that reads it throws, and the load does not catch that"
    };
    Box::new(LoadFailure {
        kind: Kind::InvalidBatch.id().into(),
        offset: Some(m),
        exception: exception.into(),
        message: format!(
            "{} throws {exception} at offset {m} (segment {}, byte {pos}): {}; the producer-state update decodes the control record of every batch with a producer id (ProducerAppendInfo.append); {caught} (the broker does not start)",
            r.what,
            s.name,
            c.what()
        ),
    })
}

/// The load failure of segment `s`'s recovery (`what`) at its ABORT whose append to the
/// transaction index throws ([`TxnIndexThrow`]).
pub(super) fn txn_index_at(s: &SegmentInput, what: &str, t: &TxnIndexThrow) -> Box<LoadFailure> {
    let (m, pos, last) = (t.offset, t.position, t.last);
    Box::new(LoadFailure {
        kind: Kind::OffsetRegression.id().into(),
        offset: Some(m),
        exception: "IllegalArgumentException".into(),
        message: format!(
            "{what} throws IllegalArgumentException at offset {m} (segment {}, byte {pos}): the ABORT marker there completes a transaction, and the recovery appends its aborted transaction to the segment's transaction index (LogSegment.updateProducerState → updateTxnIndex), whose last offset {m} is not above the last appended one's, {last} (TransactionIndex.append: the last offsets must increase); LogSegment.recover catches only CorruptRecordException and InvalidRecordException, and the load does not catch it (the broker does not start)",
            s.name
        ),
    })
}

#[cfg(test)]
mod tests {
    use crate::read::format::{Entries, Tail};

    /// The walk's stop reasons this module reads come from the format layer's tails.
    #[test]
    fn a_size_below_the_minimum_names_the_reason_read_here() {
        let mut data = vec![0u8; 40];
        data[20] = 1; // a zero header, not all zeros: garbage
        let mut e = Entries::new(&data, 0);
        assert!(e.next().is_none());
        let Some(Tail::Garbage { reason, .. }) = e.tail() else {
            panic!("{:?}", e.tail())
        };
        assert_eq!(reason, crate::read::format::Unframed::SizeBelowMinimum);
    }
}
