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
//! `InvalidRecordException`. Neither is caught by the load, nor an `IOException`: the broker
//! does not start. A segment's recovery (`LogSegment.recover`) catches both and truncates
//! there instead; its range is listed too (for the load rules), without a read of its stop.

use super::chain;
use super::{BrokerVersion, Finding, Kind, LoadFailure, ReadThrows, SegmentInput, StopReason};

/// What a rebuild's replay reads of the log.
pub(super) struct Reads {
    /// The segments the log holds when it runs: the first `held` (a segment recovered at
    /// load for its index is added to the log only once recovered).
    pub held: usize,
    /// Those of them recovered before it (cut at their stop).
    pub recovered: Vec<usize>,
}

/// One replay of `[from, to)` of the load.
pub(super) struct Replay {
    pub from: i64,
    pub to: i64,
    /// What it is, for the failure's message.
    pub what: String,
    /// A rebuild's replay: what it reads. `None`: a segment's recovery.
    pub reads: Option<Reads>,
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
                reads: Some(Reads {
                    held: if step.for_index { step.seg } else { segs.len() },
                    recovered: recovered.clone(),
                }),
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
            reads: None,
        });
        recovered.push(step.seg);
    }
    replays
}

/// The final rebuild's replay `[from, to)`, once every step has run.
pub(super) fn final_replay<'a>(
    segs: &[SegmentInput],
    steps: impl Iterator<Item = &'a chain::Step>,
    from: i64,
    to: i64,
) -> Replay {
    Replay {
        from,
        to,
        what: format!("replaying the producer state from offset {from}"),
        reads: Some(Reads {
            held: segs.len(),
            recovered: steps.map(|s| s.seg).collect(),
        }),
    }
}

/// What the replays check: the walk's load-rule findings and the broker's version.
pub(super) struct Rules<'a> {
    pub load_rules: &'a [Finding],
    pub broker_version: Option<BrokerVersion>,
}

/// The first failure, in the replays' order: within one replay, the earlier segment's
/// (a load rule's batch lies before any stop of its own segment).
pub(super) fn replay_failure(
    rules: &Rules<'_>,
    segs: &[SegmentInput],
    replays: &[Replay],
) -> Option<Box<LoadFailure>> {
    for r in replays {
        let rule = rule_failure(rules, r);
        let stop = stop_failure(segs, r);
        let failure = match (rule, stop) {
            (Some((o, f)), Some((i, g))) => {
                let at = segs.iter().rposition(|s| s.base <= o).unwrap_or(0);
                if at <= i { f } else { g }
            }
            (Some((_, f)), None) => f,
            (None, Some((_, g))) => g,
            (None, None) => continue,
        };
        return Some(failure);
    }
    None
}

/// The first batch of `r` whose load rule makes the replay throw, with its offset.
fn rule_failure(rules: &Rules<'_>, r: &Replay) -> Option<(i64, Box<LoadFailure>)> {
    let old_broker = rules
        .broker_version
        .is_some_and(|v| v <= BrokerVersion(2, 4, 0));
    for f in rules.load_rules {
        let Some(o) = f.offset else { continue };
        if o < r.from || o >= r.to {
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

/// Where a walk stopped, as a rebuild's read meets it.
enum StopRead {
    /// An entry whose size is below 14 with at least 18 bytes from it.
    Throws(ReadThrows),
    /// A malformed COMMIT/ABORT with a producer id, at this base offset.
    Marker(i64),
}

/// What a rebuild's read does at a stop `why` with `left` bytes from it to the file's end
/// (`first`: the offset of the batch there).
fn stop_read(why: &StopReason, left: u64, first: Option<i64>) -> Option<StopRead> {
    if let Some(t) = why.read_throws(left) {
        return Some(StopRead::Throws(t));
    }
    match why {
        StopReason::MalformedControl => first.map(StopRead::Marker),
        _ => None,
    }
}

/// The first stop of a segment no recovery has cut that the rebuild's replay `r` reads and
/// throws at, with the segment's index. A segment whose walk is unknown ends the search
/// (what it holds may throw first); a stop that does not throw, or whose read the evidence
/// does not decide, is passed.
fn stop_failure(segs: &[SegmentInput], r: &Replay) -> Option<(usize, Box<LoadFailure>)> {
    let reads = r.reads.as_ref()?;
    let held = &segs[..reads.held.min(segs.len())];
    for (i, s) in held.iter().enumerate() {
        if s.base >= r.to {
            break;
        }
        let next = held.get(i + 1).map(|n| n.base);
        // Below the segment holding `from` (`floorKey`): not read.
        if next.is_some_and(|n| n <= r.from) || reads.recovered.contains(&i) {
            continue;
        }
        let w = s.walk.as_ref()?;
        let Some((pos, why, first)) = w.stop.as_deref() else {
            continue;
        };
        let Some(read) = stop_read(why, w.len.saturating_sub(*pos), *first) else {
            continue;
        };
        let start = s.base.max(r.from);
        // The segment holding `to` is read up to the first batch reaching `to`.
        let holds_to = next.is_none_or(|n| n > r.to);
        let failure = match read {
            StopRead::Throws(how) => {
                let zeros = how == ReadThrows::ZeroTail;
                let cut_before = holds_to && w.next_offset > r.to;
                // A corrupt length may hide batches the index points into: the read is
                // known to start before it only when a batch before it reaches `start`.
                if cut_before || (!zeros && start >= w.next_offset) {
                    continue;
                }
                throws_at(s, r, *pos, why, how)
            }
            // Whether the batch lies below `to` in the segment holding it is not known
            // (its last offset is not kept): silent there.
            StopRead::Marker(m) => {
                if m < start || m >= r.to || holds_to {
                    continue;
                }
                marker_at(s, r, *pos, m)
            }
        };
        return Some((i, failure));
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

fn marker_at(s: &SegmentInput, r: &Replay, pos: u64, m: i64) -> Box<LoadFailure> {
    Box::new(LoadFailure {
        kind: Kind::InvalidBatch.id().into(),
        offset: Some(m),
        exception: "InvalidRecordException".into(),
        message: format!(
            "{} throws InvalidRecordException at offset {m} (segment {}, byte {pos}, which no recovery has cut before it): the control record of the batch there is malformed, and the replay decodes it (loadProducersFromRecords → ProducerAppendInfo.append → EndTransactionMarker.deserialize); LogSegment.recover would truncate there, the rebuild does not catch it (the broker does not start)",
            r.what, s.name
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
