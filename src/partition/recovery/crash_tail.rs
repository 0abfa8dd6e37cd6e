//! The routine end of an active segment cut by a crash: what `LogSegment.recover` cuts and
//! `LogLoader.recoverLog` logs at WARN (a partial last batch, or a torn write into a
//! preallocated segment's zeros) above the checkpointed high watermark.

use super::*;

/// The checkpointed high watermark when `f` is the torn end of the last segment a crash
/// left (`LogSegment.recover` cuts it, `LogLoader.recoverLog` warns): an unclean shutdown,
/// recovery cutting the last segment here and deleting nothing, every removed offset at or
/// above that high watermark, and the damage a partial batch — or a batch whose CRC fails
/// followed by nothing but the file's zeros (a torn write into a preallocated segment).
pub(super) fn routine_crash_tail(
    f: &Finding,
    plan: &SegmentPlan,
    walk: Option<&RecoverWalk>,
    clean_shutdown: Option<bool>,
    high_watermark: Option<i64>,
) -> Option<i64> {
    let (seg, pos) = (f.segment.as_deref()?, f.position?);
    let t = plan.truncation.as_ref()?;
    let torn = match f.kind {
        Kind::TruncatedBatch => true,
        Kind::CrcMismatch => walk.is_some_and(|w| {
            w.removed_batches == 1
                && matches!(
                    w.tail.as_deref(),
                    Some((
                        _,
                        StopReason::ZeroFilled { .. } | StopReason::PartialBatch { .. }
                    ))
                )
        }),
        _ => false,
    };
    let hw = high_watermark?;
    (torn
        && clean_shutdown == Some(false)
        && plan.deleted.is_empty()
        && plan.last_segment.as_deref() == Some(seg)
        && t.segment == seg
        && t.position == pos
        && t.offset >= hw)
        .then_some(hw)
}
