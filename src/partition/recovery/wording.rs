//! How an integrity finding words what the broker's recovery does with its bytes, from
//! the segment plan ([`SegmentPlan`]).

use super::plan::{DamageFate, Fate, SegmentPlan};
use super::*;

/// Say in an integrity finding's `broker_behaviour` what the broker's recovery does with
/// the damaged bytes, from the plan: the truncation point itself, bytes removed with it,
/// a segment deleted after an earlier truncation, or damage no recovery looks at (then
/// the broker serves it, and the finding says what readers see). Other kinds, and
/// findings in recovered segments that do not stop recovery, are left as they are.
/// `walk`: the walk of the finding's segment (where recovery stops in it, what a read of
/// its tail's entry does); `compacted`: the partition is treated as compacted (what the log
/// cleaner does with a partial batch it reads).
pub(crate) fn word_integrity_finding(
    f: &mut Finding,
    plan: &SegmentPlan,
    walk: Option<&RecoverWalk>,
    clean_shutdown: Option<bool>,
    recovery_point: Option<i64>,
    high_watermark: Option<i64>,
    compacted: bool,
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
    // An invalid batch recovery reads past (its size and CRC hold: `LogSegment.recover`
    // stops only where the walk of its segment stops) keeps what its rule said of an
    // append and of the readers; what the load does to its bytes, when it does anything,
    // is added after it.
    let passed = f.kind == Kind::InvalidBatch
        && walk
            .and_then(|w| w.stop.as_deref())
            .is_none_or(|s| s.0 != pos);
    let on_append = match f.kind {
        _ if passed => "",
        Kind::CrcMismatch => "rejected on append (CorruptRecordException); ",
        Kind::InvalidBatch => {
            "rejected on append (InvalidRecordException / CorruptRecordException); "
        }
        _ => "",
    };
    let set = |f: &mut Finding, text: String| {
        f.broker_behaviour = match passed {
            true => format!("{}; and {text}", f.broker_behaviour),
            false => text,
        };
    };
    // The load fails before any recovery: nothing is done with these bytes.
    if let Some(why) = &plan.load_fails {
        set(
            f,
            format!(
                "{on_append}the next start fails before any recovery, so nothing is done with these bytes: {why}"
            ),
        );
        return;
    }
    let fate = plan.fate(&seg, pos);
    // Not recovered by the plan's unclean pass, which starts at the last segment because
    // the recovery point could not be read: whether recovery runs on it is not known, so
    // no fate is recorded (the triage then decides without one).
    let fate_unknown = fate == Fate::NotRecovered && plan.recovery_point_unread;
    if let Some(e) = f.evidence.as_object_mut().filter(|_| !fate_unknown) {
        let truncated = !matches!(fate, Fate::NotRecovered | Fate::Recovered);
        let recorded = DamageFate {
            fate,
            log_end_offset_after: plan.log_end_after.filter(|_| truncated),
            high_watermark,
        };
        if let Ok(v) = serde_json::to_value(recorded) {
            e.insert("recovery".into(), v);
        }
    }
    let at = At {
        plan,
        walk,
        seg: &seg,
        pos,
        on_append,
        passed,
    };
    let Some(text) = fate_text(f, fate, &at, clean_shutdown, recovery_point, compacted) else {
        return;
    };
    set(f, text);
    if let Some(hw) =
        super::crash_tail::routine_crash_tail(f, plan, walk, clean_shutdown, high_watermark)
    {
        f.severity = crate::finding::Severity::Warning;
        f.broker_behaviour.push_str(&format!(
            " — the routine end of an active segment cut by a crash (LogLoader.recoverLog logs it at WARN): the cut removes only offsets at or above the checkpointed high watermark {hw}, which no acks=all producer was answered for unless the high watermark moved past them after its last checkpoint (then the leader's copy still holds them); an acks=1 producer may have been answered"
        ));
        if let Some(e) = f.evidence.as_object_mut() {
            e.insert("routine_crash_tail".into(), serde_json::json!(true));
        }
    }
}

/// Where a finding's bytes are, and what its wording starts from ([`word_integrity_finding`]).
struct At<'a> {
    plan: &'a SegmentPlan,
    walk: Option<&'a RecoverWalk>,
    seg: &'a str,
    pos: u64,
    /// What an append did, said first (empty when the finding's own words say it).
    on_append: &'static str,
    /// An invalid batch recovery reads past.
    passed: bool,
}

/// What the load does to `f`'s bytes of fate `fate`, in words (`None`: nothing to say).
fn fate_text(
    f: &Finding,
    fate: Fate,
    at: &At<'_>,
    clean_shutdown: Option<bool>,
    recovery_point: Option<i64>,
    compacted: bool,
) -> Option<String> {
    let At {
        plan,
        walk,
        seg,
        pos,
        on_append,
        passed,
    } = *at;
    Some(match fate {
        Fate::TruncatedHere => {
            let t = plan.truncation_of(seg)?;
            let deletes = plan.truncation.as_ref() == Some(t);
            let why = plan
                .recovered
                .iter()
                .find(|(s, _)| *s == seg)
                .map_or("recovery", |(_, w)| w.as_ref());
            let deleted = match if deletes { plan.deleted.len() } else { 0 } {
                0 => String::new(),
                1 => format!(" and deletes the later segment {}", plan.deleted[0]),
                n => format!(
                    " and deletes the {n} later segments ({} … {})",
                    plan.deleted[0],
                    plan.deleted[n - 1]
                ),
            };
            let crc = match plan.crc_unchecked {
                true => {
                    "; CRC not checked (--no-crc): it may stop at an earlier batch whose CRC fails"
                }
                false => "",
            };
            let start = match plan.recovery_point_unread {
                true => {
                    "; the recovery point is unknown (klogscan could not read recovery-point-offset-checkpoint): recovery may start at an earlier segment and stop there"
                }
                false => "",
            };
            format!(
                "{on_append}on the next start LogSegment.recover runs on {seg} ({why}), stops here and truncates the file to byte {} (log end offset {}){deleted}{crc}{start}",
                t.position, t.offset
            )
        }
        Fate::RemovedByTruncation => {
            let t = plan.truncation_of(seg)?;
            format!(
                "{on_append}removed on the next start: recovery truncates {seg} at byte {} ({}), before this point",
                t.position, t.reason
            )
        }
        Fate::Deleted => match (plan.emptied, &plan.truncation) {
            (Some(e), _) => format!(
                "{on_append}deleted on the next start with every segment: once recovered the log ends at offset {} (the last segment's next offset), below its log start checkpoint {}, so LogLoader deletes every segment and opens one empty segment at {}",
                e.log_end, e.log_start, e.log_start
            ),
            (None, Some(t)) => format!(
                "{on_append}deleted on the next start with its whole segment: recovery truncates the earlier segment {} at byte {} ({}) and deletes every later segment",
                t.segment, t.position, t.reason
            ),
            (None, None) => return None,
        },
        // Recovery would read past it: nothing happens to it at load.
        Fate::NotRecovered | Fate::Recovered if passed => return None,
        // The plan's unclean pass starts at the last segment (`recovery_start`): an
        // earlier one is recovered when the unknown recovery point lies in or below it.
        Fate::NotRecovered if plan.recovery_point_unread => format!(
            "{on_append}not noticed on load if the broker's recovery point lies past this segment: after the unclean shutdown LogSegment.recover runs from the segment holding the recovery point, and klogscan could not read recovery-point-offset-checkpoint (a broker that cannot read it either starts at offset 0 and recovers this segment too); if not recovered, {}",
            readers_text(f, plan, walk, seg, pos)
        ),
        Fate::NotRecovered => {
            let why = why_not_recovered(plan, clean_shutdown, recovery_point);
            format!(
                "{on_append}not noticed on load ({why}); {}{}",
                readers_text(f, plan, walk, seg, pos),
                uncleanable(f, plan, seg, compacted)
            )
        }
        Fate::Recovered => return None,
    })
}

/// Why no recovery runs on a segment the plan does not recover: a `-delete` copy, a clean
/// shutdown, a recovery point of `Long.MAX_VALUE` or one past the segment.
fn why_not_recovered(
    plan: &SegmentPlan,
    clean_shutdown: Option<bool>,
    recovery_point: Option<i64>,
) -> String {
    match clean_shutdown {
        _ if plan.delete_dir => {
            "the directory is a -delete copy: LogLoader.load never runs recoverLog on it"
                .to_string()
        }
        Some(true) => {
            "the last shutdown was clean, so LogSegment.recover does not run on it"
                .to_string()
        }
        _ if recovery_point == Some(i64::MAX) => {
            "the recovery point is Long.MAX_VALUE: LogLoader.recoverLog asks LogSegments.values for the empty range [MAX, MAX), so LogSegment.recover runs on no segment".to_string()
        }
        _ => format!(
            "the segment lies below the recovery point {}, so LogSegment.recover does not run on it",
            recovery_point.unwrap_or(0)
        ),
    }
}

/// What the log cleaner does with a partial batch kept in a segment of a compacted log
/// below its active one: every pass rewrites all the segments below the first uncleanable
/// offset (`Cleaner.doClean`), so the next one reads the segment, finds no whole batch
/// where the declared size runs past the end and throws (`Cleaner.cleanInto` →
/// `growBuffersOrFail`); `CleanerThread.tryCleanFilthiestLog` marks the partition
/// uncleanable, and `grabFilthiestCompactedLog` and `deletableLogs` skip it from then on.
/// The active segment is never cleaned, nor a `-delete` copy, nor a log not compacted:
/// nothing there.
fn uncleanable(f: &Finding, plan: &SegmentPlan, seg: &str, compacted: bool) -> &'static str {
    let active = plan.last_segment.as_deref() == Some(seg);
    if f.kind != Kind::TruncatedBatch || !compacted || plan.delete_dir || active {
        return "";
    }
    "; and while the topic's cleanup.policy includes compact (the partition is treated as compacted), the log cleaner's next pass over the log reads this segment (Cleaner.doClean rewrites every segment below the first uncleanable offset), finds no whole batch here and throws (Cleaner.cleanInto → growBuffersOrFail): LogCleanerManager marks the partition uncleanable, and it is neither compacted nor, under compact,delete, trimmed by retention again until the segment is repaired (the mark lives in memory: after a restart the next pass throws again)"
}

/// What readers meet at damage no recovery looks at (`seg` at byte `pos`), by the
/// finding's kind: nothing in a `-delete` copy, a load that fails reading the last
/// segment's end, a consumer's `CorruptRecordException`, a reader stopping at a partial
/// batch.
fn readers_text(
    f: &Finding,
    plan: &SegmentPlan,
    walk: Option<&RecoverWalk>,
    seg: &str,
    pos: u64,
) -> &'static str {
    let throws_at_load = plan.last_segment.as_deref() == Some(seg)
        && plan
            .unrecovered
            .iter()
            .any(|(s, p, why)| *s == seg && *p == pos && why.zero_tail_throws());
    match f.kind {
        _ if plan.delete_dir => {
            "no reader meets it: LogManager schedules the directory for deletion once it is loaded, and nothing is served from it"
        }
        _ if throws_at_load => {
            "but the load reads this last segment's end (LogLoader.recoverLog → LogSegment.readNextOffset) and FileLogInputStream.nextBatch throws CorruptRecordException at this entry (a size field below 14 bytes), which the load does not catch: the broker does not start"
        }
        Kind::CrcMismatch => {
            "the broker serves the bytes as they are: a consumer fetching this entry meets what the finding's client error says (a v2 batch: a KafkaException, not retriable, until the application seeks past it); a follower's fetch of it fails with CorruptRecordException"
        }
        Kind::InvalidBatch => {
            "the broker serves the bytes as they are: a consumer fetching this batch meets what the finding's client error says"
        }
        _ if throws_when_framed(f, walk) => {
            "the broker serves the segment as it is: a reader reaching this entry throws CorruptRecordException (its size field is below 14 bytes), and so does a producer-state rebuild at load that replays this segment before any recovery cuts it (the prediction's load failure says whether one does; then the broker does not start)"
        }
        Kind::TruncatedBatch => {
            "the broker keeps these bytes and counts them in the segment's size (FileRecords takes the file's length): a reader stops at this entry, since its declared size runs past the end — but in the last (active) segment the next appends land after them, behind a header whose declared size then reaches into the new batches, so readers take the partial batch and the start of the new data as one damaged batch"
        }
        _ => {
            "the broker serves the segment as it is, these bytes included: a reader stops here only when fewer than 18 bytes are left or the declared size runs past the end; otherwise it frames them as a batch, which fails its CRC check"
        }
    }
}

/// True when `FileLogInputStream.nextBatch` throws at the entry a tail finding `f` names
/// (a zero-filled tail, or bytes that do not frame): the walk of its segment ends there in
/// a size field below 14 with 18 bytes or more from it ([`StopReason::read_throws`]).
fn throws_when_framed(f: &Finding, walk: Option<&RecoverWalk>) -> bool {
    if !matches!(f.kind, Kind::PreallocatedTail | Kind::TrailingBytes) {
        return false;
    }
    let Some((w, (at, how))) = walk.and_then(|w| Some((w, w.tail.as_deref()?))) else {
        return false;
    };
    f.position == Some(*at) && how.read_throws(w.len.saturating_sub(*at)).is_some()
}
