//! Whether later copies redid an unfinished one (`remote_copy_unfinished`'s reading of a
//! copier stopped mid-upload).

use super::replay::{PartitionLog, RemoteSegment};
use crate::read::format::remote_log::SegmentState;

/// The later copies, finished and still standing, that together hold every offset of the
/// unfinished copy `s` at the leader epochs `s` gives them (the new leader uploads its own
/// whole segments, rolled where it rolled them: `RemoteLogManager.candidateLogSegments`);
/// empty when they leave any offset out or disagree on an offset's epoch (a copy of another
/// lineage: reads look a segment up by the offset's epoch, `fetchRemoteLogSegmentMetadata`).
pub(super) fn covering_copies<'a>(
    log: &'a PartitionLog,
    s: &RemoteSegment,
) -> Vec<&'a RemoteSegment> {
    let mut later: Vec<&RemoteSegment> = (log.segments.iter())
        .filter(|o| o.id != s.id && o.state == SegmentState::CopyFinished)
        .filter(|o| o.history.first().is_some_and(|e| e.at > s.last_event()))
        .filter(|o| o.start_offset <= s.end_offset && o.end_offset >= s.start_offset)
        .collect();
    later.sort_by_key(|o| (o.start_offset, std::cmp::Reverse(o.end_offset)));
    let mut used = Vec::new();
    let mut next = s.start_offset;
    for o in later {
        if next > s.end_offset {
            break;
        }
        if o.start_offset > next {
            return Vec::new();
        }
        if o.end_offset < next {
            continue;
        }
        // Every epoch start inside the shared range, and its first offset, read the same.
        let to = o.end_offset.min(s.end_offset);
        let points = (o.leader_epochs.iter().chain(&s.leader_epochs))
            .map(|&(_, at)| at)
            .filter(|&at| at > next && at <= to)
            .chain([next]);
        if points
            .into_iter()
            .any(|at| epoch_at(o, at) != epoch_at(s, at))
        {
            return Vec::new();
        }
        used.push(o);
        next = o.end_offset.saturating_add(1);
    }
    if next > s.end_offset {
        used
    } else {
        Vec::new()
    }
}

/// The leader epoch segment `s` gives `offset` (its epoch starting last at or below it).
fn epoch_at(s: &RemoteSegment, offset: i64) -> Option<i32> {
    (s.leader_epochs.iter())
        .filter(|&&(_, start)| start <= offset)
        .max_by_key(|&&(_, start)| start)
        .map(|&(e, _)| e)
}
