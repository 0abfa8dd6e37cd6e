//! The producer-state snapshots of a load that recovers segments, step by step
//! (`LogLoader.recoverSegment`, `UnifiedLog.rebuildProducerState`,
//! `ProducerStateManager.truncateAndReload` and `removeStraySnapshots`): which snapshot each
//! recovery's rebuild loads and what it replays, which snapshots the recoveries delete and
//! write, and which one the final rebuild loads.
//!
//! Each recovered segment gets a producer-state manager of its own, rebuilt up to the
//! segment's base: its `truncateAndReload` deletes every snapshot above that base and at or
//! below the log start checkpoint, loads the newest left (the log start without one) and
//! replays up to the base, then snapshots there; the segment's recovery replays the
//! segment and snapshots at its end. Segments recovered for a missing or corrupt index come
//! first (`loadSegmentFiles`, in offset order), then after an unclean shutdown every segment
//! from the recovery point on (`recoverLog`, those already recovered for their index again),
//! up to a truncation. Before the final rebuild the stray snapshots are removed (kept: those
//! at a segment base, and the newest other one when it lies above every base); that rebuild
//! deletes the snapshots above the log end and at or below the log start, and loads the
//! newest left, or skips after a clean shutdown when none is left.

use super::SegmentInput;
use std::collections::BTreeSet;

/// One recovery, in the broker's order.
pub(super) struct Step {
    /// The segment (index into the prediction's segments).
    pub seg: usize,
    /// Recovered at load for a missing or corrupt index (else after an unclean shutdown).
    pub for_index: bool,
    /// What its rebuild replays before the segment, `[from, base)`, and the snapshot it
    /// loads (`None`: none, from the log start); `None` when it replays nothing.
    pub rebuild: Option<(i64, Option<i64>)>,
    /// Where the rebuild starts: the snapshot it loads, or the log start.
    pub start: i64,
    /// The snapshot it loads.
    pub loaded: Option<i64>,
    pub base: i64,
    /// The segment's end once recovered (its snapshot's offset).
    pub end: i64,
}

/// The recoveries of a load and the snapshot its final rebuild loads.
pub(super) struct Chain {
    pub steps: Vec<Step>,
    /// The offsets of the valid snapshot files on disk before the load that a recovery's
    /// rebuild deletes and no later recovery writes again, each with the base of the
    /// segment whose recovery deletes it last.
    pub deleted: Vec<(i64, i64)>,
    /// The snapshot the final rebuild loads (`None`: none left).
    pub last: Option<i64>,
    /// After a clean shutdown with no snapshot left the final rebuild is skipped.
    pub skipped: bool,
}

/// What the chain reads of the prediction.
pub(super) struct ChainInput<'a> {
    pub segments: &'a [SegmentInput],
    /// Offsets of the valid snapshot files on disk.
    pub snapshots: Vec<i64>,
    /// The log start checkpoint (0 without one: the broker's default).
    pub log_start_checkpoint: i64,
    /// The log start once loaded (the checkpoint or the first segment's base, the higher).
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
    pub clean_shutdown: Option<bool>,
    /// Recovery runs after the unclean shutdown (not after a clean one, not in a `-delete`
    /// directory), from the segment holding the recovery point.
    pub unclean_from: Option<usize>,
    /// The segment a recovery truncates: the later ones are deleted, not recovered.
    pub truncated: Option<usize>,
}

impl ChainInput<'_> {
    fn end_of(&self, i: usize) -> i64 {
        let s = &self.segments[i];
        s.walk
            .as_ref()
            .map(|w| w.next_offset)
            .or_else(|| self.segments.get(i + 1).map(|n| n.base))
            .or(self.log_end)
            .unwrap_or(s.base)
    }
}

/// The chain of a load, or `None` when it recovers no segment.
pub(super) fn chain(inp: &ChainInput<'_>) -> Option<Chain> {
    let segs = inp.segments;
    let mut order: Vec<(usize, bool)> = (0..segs.len())
        .filter(|&i| segs[i].missing_index || segs[i].corrupt_index.is_some())
        .map(|i| (i, true))
        .collect();
    if let Some(from) = inp.unclean_from {
        let to = inp.truncated.unwrap_or(segs.len().saturating_sub(1));
        order.extend((from..=to).filter(|&i| i < segs.len()).map(|i| (i, false)));
    }
    if order.is_empty() {
        return None;
    }
    let on_disk: BTreeSet<i64> = inp.snapshots.iter().copied().collect();
    let mut snaps = on_disk.clone();
    let mut deleted = std::collections::BTreeMap::new();
    let log_start = inp.log_start.unwrap_or(segs[0].base);
    let mut steps = Vec::with_capacity(order.len());
    for (seg, for_index) in order {
        let base = segs[seg].base;
        // truncateAndReload(log start checkpoint, base)
        let above = snaps.split_off(&(base + 1));
        let at_or_below_start = {
            let kept = snaps.split_off(&(inp.log_start_checkpoint + 1));
            std::mem::replace(&mut snaps, kept)
        };
        for o in above.iter().chain(&at_or_below_start) {
            if on_disk.contains(o) {
                deleted.insert(*o, base);
            }
        }
        let loaded = snaps.last().copied();
        let start = loaded.unwrap_or(log_start);
        let rebuild = (start < base).then_some((start, loaded));
        if rebuild.is_some() {
            snaps.insert(base);
        }
        let end = inp.end_of(seg);
        if end > start.max(base) {
            snaps.insert(end);
        }
        steps.push(Step {
            seg,
            for_index,
            rebuild,
            start,
            loaded,
            base,
            end,
        });
    }
    // removeStraySnapshots over the segments left
    let kept_segs = inp.truncated.map_or(segs.len(), |t| t + 1);
    let bases: BTreeSet<i64> = segs[..kept_segs].iter().map(|s| s.base).collect();
    let max_base = bases.last().copied();
    let newest_stray = snaps.iter().rev().find(|o| !bases.contains(o)).copied();
    snaps.retain(|o| {
        bases.contains(o) || (Some(*o) == newest_stray && max_base.is_none_or(|b| *o >= b))
    });
    // A file a recovery deleted and another wrote again at the same offset is still there.
    deleted.retain(|o, _| !snaps.contains(o));
    let skipped = snaps.is_empty() && inp.clean_shutdown == Some(true);
    // truncateAndReload(log start, log end)
    let last = snaps
        .iter()
        .rev()
        .find(|o| inp.log_end.is_none_or(|e| **o <= e) && inp.log_start.is_none_or(|s| **o > s))
        .copied();
    Some(Chain {
        steps,
        deleted: deleted.into_iter().collect(),
        last,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::recovery::RecoverWalk;

    fn seg(base: i64, missing_index: bool, next_offset: Option<i64>) -> SegmentInput {
        SegmentInput {
            name: format!("{base:020}.log"),
            base,
            missing_index,
            corrupt_index: None,
            walk: next_offset.map(|next_offset| RecoverWalk {
                stop: None,
                next_offset,
                len: 0,
                overflow: false,
                batches: 0,
                records: 0,
                removed_batches: 0,
                removed_records: 0,
            }),
        }
    }

    fn input<'a>(segments: &'a [SegmentInput], snapshots: &[i64]) -> ChainInput<'a> {
        ChainInput {
            segments,
            snapshots: snapshots.to_vec(),
            log_start_checkpoint: 0,
            log_start: Some(0),
            log_end: Some(30),
            clean_shutdown: Some(false),
            unclean_from: Some(1),
            truncated: None,
        }
    }

    /// Recovery point in segment 10 of 0/10/20 (log end 30), snapshots at 10, 20 and 30:
    /// the recovery of 10 loads the snapshot at its base and deletes 20 and 30, each
    /// recovery writes one at its segment's end again, the final rebuild loads 30, and no
    /// file is gone for good.
    #[test]
    fn recoveries_rewrite_the_snapshots_above_the_first_recovered_base() {
        let segs = [seg(0, false, None), seg(10, false, None), seg(20, false, None)];
        let c = chain(&input(&segs, &[10, 20, 30])).unwrap();
        let steps: Vec<_> = c.steps.iter().map(|s| (s.seg, s.loaded, s.rebuild, s.end)).collect();
        assert_eq!(steps, [(1, Some(10), None, 20), (2, Some(20), None, 30)]);
        assert_eq!(c.last, Some(30));
        assert!(c.deleted.is_empty());
        assert!(!c.skipped);
        // Without the snapshot at 10, the first rebuild replays [0, 10) from the log start
        // and snapshots at 10; the snapshot at 20 is deleted and written again.
        let c = chain(&input(&segs, &[20, 30])).unwrap();
        assert_eq!(c.steps[0].rebuild, Some((0, None)));
        assert_eq!(c.last, Some(30));
        assert!(c.deleted.is_empty());
        // Without an unclean shutdown nothing is recovered: no chain.
        let mut clean = input(&segs, &[10, 20, 30]);
        clean.unclean_from = None;
        clean.clean_shutdown = Some(true);
        assert!(chain(&clean).is_none());
    }

    /// Segment 20's index is missing, and the unclean recovery truncates segment 0 at 5:
    /// the index recovery runs first and loads the snapshot at 20 (not one from the log
    /// start: the snapshots above the truncation still exist then); the recovery of 0 then
    /// deletes every snapshot above 0 and leaves one at 5, the segments after it deleted, so
    /// the snapshots at 10, 20 and 30 are gone for good and 5 is loaded.
    #[test]
    fn index_recoveries_run_first_and_see_every_snapshot() {
        let segs = [seg(0, false, Some(5)), seg(10, false, None), seg(20, true, Some(30))];
        let mut inp = input(&segs, &[10, 20, 30]);
        inp.unclean_from = Some(0);
        inp.truncated = Some(0);
        inp.log_end = Some(5);
        let c = chain(&inp).unwrap();
        let steps: Vec<_> = c.steps.iter().map(|s| (s.seg, s.for_index, s.rebuild)).collect();
        assert_eq!(steps, [(2, true, None), (0, false, None)]);
        assert_eq!(c.steps[0].loaded, Some(20));
        assert_eq!(c.last, Some(5));
        assert_eq!(c.deleted, [(10, 0), (20, 0), (30, 0)]);
    }

    /// After a clean shutdown a segment recovered for its missing index whose end is not the
    /// next base (a compacted segment) leaves a stray snapshot, removed before the final
    /// rebuild; with no other snapshot the rebuild is skipped.
    #[test]
    fn a_stray_end_snapshot_is_removed_and_the_rebuild_skipped() {
        let segs = [seg(0, true, Some(8)), seg(10, false, None)];
        let mut inp = input(&segs, &[]);
        inp.unclean_from = None;
        inp.clean_shutdown = Some(true);
        inp.log_end = Some(20);
        let c = chain(&inp).unwrap();
        assert_eq!(c.steps[0].end, 8);
        assert_eq!(c.last, None);
        assert!(c.skipped);
    }
}
