//! The producer-state snapshots of a load that recovers segments, step by step
//! (`LogLoader.recoverSegment`, `UnifiedLog.rebuildProducerState`,
//! `ProducerStateManager.truncateAndReload` and `removeStraySnapshots`): which snapshot each
//! recovery's rebuild loads and what it replays, which snapshots the recoveries delete and
//! write, and which one the final rebuild loads.
//!
//! Each recovered segment gets a producer-state manager of its own, rebuilt up to the
//! segment's base: its `truncateAndReload` deletes every snapshot above that base and at or
//! below the log start checkpoint, loads the newest left (the log start without one) and
//! replays up to the base, snapshotting on its way at the last two bases of the segments
//! the log holds then (at load, those opened before the segment: the two just below it;
//! after an unclean shutdown, the whole log's) and at the base; the segment's recovery
//! replays the segment and snapshots at its end. Segments recovered for a missing or corrupt index come
//! first (`loadSegmentFiles`, in offset order), then after an unclean shutdown every segment
//! from the recovery point on (`recoverLog`, those already recovered for their index again),
//! up to a truncation. Before the final rebuild the stray snapshots are removed (kept: those
//! at a segment base, and the newest other one when it lies above every base); that rebuild
//! deletes the snapshots above the log end and at or below the log start, and loads the
//! newest left, or skips after a clean shutdown when none is left.

use super::SegmentInput;
use crate::discover::layout::java_name_order;
use std::collections::{BTreeMap, BTreeSet};

/// One recovery, in the broker's order.
pub(super) struct Step {
    /// The segment (index into the prediction's segments).
    pub seg: usize,
    /// Recovered at load for a missing or corrupt index (else after an unclean shutdown).
    pub for_index: bool,
    /// What its rebuild replays before the segment, `[from, base)`, and the snapshot it
    /// loads (`None`: none, from the log start); `None` when it replays nothing.
    pub rebuild: Option<(i64, Option<i64>)>,
    /// The snapshot file on disk before the load that the producer state this step
    /// recovers the segment over descends from (`None`: a replay from the log start, an
    /// empty state there).
    pub origin: Option<i64>,
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
    /// What its state descends from: the snapshot on disk before the load (`None`: a
    /// replay from the log start) and the first offset replayed since (`None`: no
    /// snapshot is loaded at the end).
    pub origin: Option<(Option<i64>, i64)>,
    /// After a clean shutdown with no snapshot left the final rebuild is skipped.
    pub skipped: bool,
    /// The snapshot files (offsets, ascending) left once the final rebuild's
    /// `truncateAndReload` has cut them, before that rebuild writes its own.
    pub files: Vec<i64>,
    /// The corrupt snapshot files on disk before the load that a rebuild reads: the newest
    /// left when it loads, `loadFromSnapshot` throws `CorruptSnapshotException` on each and
    /// deletes it before it tries the next older one.
    pub corrupt_read: Vec<i64>,
    /// The corrupt ones a recovery's rebuild deletes unread (its `truncateAndReload` keeps
    /// no snapshot above the segment's base), each with that segment's base. Those in
    /// neither list stay on disk unread (a newer valid one is loaded first), or go with
    /// the final rebuild's cut and the stray removal (the prediction's own fates).
    pub corrupt_unread: Vec<(i64, i64)>,
}

/// What the chain reads of the prediction.
pub(super) struct ChainInput<'a> {
    pub segments: &'a [SegmentInput],
    /// Offsets of the valid snapshot files on disk.
    pub snapshots: Vec<i64>,
    /// Offsets of the corrupt ones (deleted by a load that reaches them; they still count
    /// as files for the stray removal and the clean-shutdown skip).
    pub corrupt_snapshots: Vec<i64>,
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
            .map(|w| w.state_end.unwrap_or(w.next_offset))
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
    // `loadSegmentFiles` meets the segments in name order: their offsets' order, unless a
    // noncanonical name makes it open one elsewhere (`SegmentInput::opened_as`).
    let reordered = segs.iter().any(|s| s.opened_as.is_some());
    if reordered {
        order.sort_by(|a, b| java_name_order(segs[a.0].load_name(), segs[b.0].load_name()));
    }
    if let Some(from) = inp.unclean_from {
        let to = inp.truncated.unwrap_or(segs.len().saturating_sub(1));
        order.extend((from..=to).filter(|&i| i < segs.len()).map(|i| (i, false)));
    }
    if order.is_empty() {
        return None;
    }
    let on_disk: BTreeSet<i64> = inp.snapshots.iter().copied().collect();
    // The corrupt files still on disk as written (a file a recovery writes again at one
    // of their offsets is a valid one).
    let mut corrupt: BTreeSet<i64> = inp.corrupt_snapshots.iter().copied().collect();
    let (mut corrupt_read, mut corrupt_unread) = (Vec::new(), Vec::new());
    // Every snapshot file, each with where its state comes from: the snapshot on disk it
    // descends from (`None`: a replay from the log start) and that replay's first offset.
    let mut snaps: BTreeMap<i64, (Option<i64>, i64)> = on_disk
        .iter()
        .chain(&corrupt)
        .map(|&o| (o, (Some(o), o)))
        .collect();
    let mut deleted = BTreeMap::new();
    let log_start = inp.log_start.unwrap_or(segs[0].base);
    let ckpt = inp.log_start_checkpoint;
    let mut steps = Vec::with_capacity(order.len());
    let bases: Vec<i64> = segs.iter().map(|s| s.base).collect();
    for (seg, for_index) in order {
        let base = segs[seg].base;
        // truncateAndReload(log start checkpoint, base), then loadFromSnapshot: a corrupt
        // file it reaches is deleted and the next older one tried.
        let gone = keep_within(&mut snaps, ckpt, base);
        for o in gone.into_iter() {
            if corrupt.remove(&o) {
                corrupt_unread.push((o, base));
            } else if on_disk.contains(&o) {
                deleted.insert(o, base);
            }
        }
        let (loaded, lineage) = load_newest(&mut snaps, (&mut corrupt, &mut corrupt_read));
        let start = loaded.unwrap_or(log_start);
        let lineage = lineage.unwrap_or((None, log_start.min(base)));
        let rebuild = (start < base).then_some((start, loaded));
        // takeSnapshot writes when the map end lies above the last snapshot's offset (the
        // loaded one, else the log start checkpoint): on the rebuild's way at each of the
        // last two bases of the log's segments below this one (`rebuildProducerState`'s
        // `offsetsToSnapshot`, from the segments the log holds then: at load, only those
        // opened before this one, since `loadSegmentFiles` adds a segment once its
        // recovery is done — the two bases just below it; after an unclean shutdown the
        // whole log's last two, of which only the second-last can lie below), after the
        // rebuild at the base, after the recovery at the segment's end.
        let reopened;
        let held: &[i64] = match (for_index, reordered) {
            (false, _) => &bases,
            (true, false) => &bases[..seg],
            (true, true) => {
                reopened = opened_before(segs, seg);
                &reopened
            }
        };
        let mut last_snap = loaded.unwrap_or(ckpt);
        for &b in &held[held.len().saturating_sub(2)..] {
            if b < base && b > last_snap {
                snaps.insert(b, lineage);
                last_snap = b;
            }
        }
        if base > last_snap {
            snaps.insert(base, lineage);
            last_snap = base;
        }
        let end = inp.end_of(seg);
        if end > last_snap {
            snaps.insert(end, lineage);
        }
        steps.push(Step {
            seg,
            for_index,
            rebuild,
            origin: lineage.0,
            base,
            end,
        });
    }
    // removeStraySnapshots over the segments left
    let kept_segs = inp.truncated.map_or(segs.len(), |t| t + 1);
    let bases: BTreeSet<i64> = segs[..kept_segs].iter().map(|s| s.base).collect();
    let max_base = bases.last().copied();
    let newest_stray = snaps.keys().rev().find(|o| !bases.contains(o)).copied();
    snaps.retain(|o, _| {
        bases.contains(o) || (Some(*o) == newest_stray && max_base.is_none_or(|b| *o >= b))
    });
    let skipped = snaps.is_empty() && inp.clean_shutdown == Some(true);
    // The final rebuild: truncateAndReload(log start, log end), then loadFromSnapshot.
    let (low, high) = (
        inp.log_start.unwrap_or(i64::MIN),
        inp.log_end.unwrap_or(i64::MAX),
    );
    let gone = keep_within(&mut snaps, low, high);
    let (last, lineage) = load_newest(&mut snaps, (&mut corrupt, &mut corrupt_read));
    // A file a recovery deleted and another wrote again at the same offset is still there
    // (the final rebuild's own deletions are the prediction's snapshot fates).
    deleted.retain(|o, _| !snaps.contains_key(o) && !gone.contains(o));
    Some(Chain {
        steps,
        deleted: deleted.into_iter().collect(),
        last,
        origin: lineage,
        skipped,
        files: snaps.keys().copied().collect(),
        corrupt_read,
        corrupt_unread,
    })
}

/// The bases (ascending) of the segments `loadSegmentFiles` has opened when it opens
/// segment `seg`: those it meets before it in name order.
fn opened_before(segs: &[SegmentInput], seg: usize) -> Vec<i64> {
    let at = segs[seg].load_name();
    segs.iter()
        .filter(|s| java_name_order(s.load_name(), at) == std::cmp::Ordering::Less)
        .map(|s| s.base)
        .collect()
}

/// `truncateAndReload`'s cut: keeps the snapshots in `(low, high]`, returns the others.
fn keep_within<V>(snaps: &mut BTreeMap<i64, V>, low: i64, high: i64) -> Vec<i64> {
    let mut gone: Vec<i64> = match high.checked_add(1) {
        Some(h) => snaps.split_off(&h).into_keys().collect(),
        None => Vec::new(),
    };
    if let Some(l) = low.checked_add(1) {
        let kept = snaps.split_off(&l);
        gone.extend(std::mem::replace(snaps, kept).into_keys());
    }
    gone
}

/// `loadFromSnapshot`: the newest snapshot, each corrupt one reached deleted on the way
/// (out of `corrupt`, into `read`); its offset and lineage.
fn load_newest(
    snaps: &mut BTreeMap<i64, (Option<i64>, i64)>,
    (corrupt, read): (&mut BTreeSet<i64>, &mut Vec<i64>),
) -> (Option<i64>, Option<(Option<i64>, i64)>) {
    while let Some((&o, &lineage)) = snaps.last_key_value() {
        if lineage.0 == Some(o) && corrupt.remove(&o) {
            snaps.remove(&o);
            read.push(o);
            continue;
        }
        return (Some(o), Some(lineage));
    }
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(base: i64, missing_index: bool, next_offset: Option<i64>) -> SegmentInput {
        SegmentInput {
            name: format!("{base:020}.log"),
            base,
            missing_index,
            corrupt_index: None,
            load_error: None,
            opened_as: None,
            created: false,
            read_next: None,
            open_error: None,
            oversize: None,
            walk: next_offset.map(crate::partition::recovery::aliases::empty_walk),
        }
    }

    fn input<'a>(segments: &'a [SegmentInput], snapshots: &[i64]) -> ChainInput<'a> {
        ChainInput {
            segments,
            snapshots: snapshots.to_vec(),
            corrupt_snapshots: Vec::new(),
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
        let segs = [
            seg(0, false, None),
            seg(10, false, None),
            seg(20, false, None),
        ];
        let c = chain(&input(&segs, &[10, 20, 30])).unwrap();
        let steps: Vec<_> = c.steps.iter().map(|s| (s.seg, s.rebuild, s.end)).collect();
        assert_eq!(steps, [(1, None, 20), (2, None, 30)]);
        assert_eq!(c.origin, Some((Some(10), 10)));
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
        let segs = [
            seg(0, false, Some(5)),
            seg(10, false, None),
            seg(20, true, Some(30)),
        ];
        let mut inp = input(&segs, &[10, 20, 30]);
        inp.unclean_from = Some(0);
        inp.truncated = Some(0);
        inp.log_end = Some(5);
        let c = chain(&inp).unwrap();
        let steps: Vec<_> = c
            .steps
            .iter()
            .map(|s| (s.seg, s.for_index, s.rebuild))
            .collect();
        assert_eq!(steps, [(2, true, None), (0, false, None)]);
        // the index recovery loaded the snapshot at 20: no rebuild from the log start
        assert_eq!(c.last, Some(5));
        assert_eq!(c.deleted, [(10, 0), (20, 0), (30, 0)]);
    }

    /// `loadSegmentFiles` meets the segments in name order: a noncanonical name of segment
    /// 20 that sorts before every 20-digit name (`+20.log`) makes the loop open (and, its
    /// index missing, recover) it first, with no segment opened before it, so its rebuild
    /// snapshots at no lower base; the recovery of 0 then deletes the snapshots above 0 and
    /// leaves one at its end, 10, the one the final rebuild loads. In offset order the
    /// recovery of 20 would come last and leave 30.
    #[test]
    fn a_name_sorting_first_opens_its_segment_first() {
        let mut segs = [
            seg(0, true, Some(10)),
            seg(10, false, Some(20)),
            seg(20, true, Some(30)),
        ];
        let mut inp = input(&segs, &[]);
        inp.unclean_from = None;
        inp.clean_shutdown = Some(true);
        let c = chain(&inp).unwrap();
        let order: Vec<_> = c.steps.iter().map(|s| s.seg).collect();
        assert_eq!((order, c.last), (vec![0, 2], Some(30)));
        segs[2].opened_as = Some("+20.log".into());
        let mut inp = input(&segs, &[]);
        inp.unclean_from = None;
        inp.clean_shutdown = Some(true);
        let c = chain(&inp).unwrap();
        let order: Vec<_> = c.steps.iter().map(|s| s.seg).collect();
        assert_eq!((order, c.last), (vec![2, 0], Some(10)));
        assert_eq!(c.steps[0].rebuild, Some((0, None)));
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

    /// No log start checkpoint (a log start at the first segment's base is not
    /// checkpointed): the rebuild before recovering segment 1000 for its missing index
    /// snapshots at 1000 (above the checkpoint's 0), the recovery at 1990 (a stray below the
    /// last base, removed); the clean shutdown's 2500 is deleted. A snapshot is left at a
    /// base, so the final rebuild is not skipped; it deletes that one too (at the log start)
    /// and replays from the log start.
    #[test]
    fn the_base_snapshot_is_written_above_the_checkpoint_not_the_log_start() {
        let segs = [seg(1000, true, Some(1990)), seg(2000, false, None)];
        let mut inp = input(&segs, &[2500]);
        inp.unclean_from = None;
        inp.clean_shutdown = Some(true);
        inp.log_start = Some(1000);
        inp.log_end = Some(2500);
        let c = chain(&inp).unwrap();
        assert!(!c.skipped);
        assert_eq!((c.last, c.origin), (None, None));
        assert_eq!(c.deleted, [(2500, 1000)]);
    }

    /// An empty segment at 1000 (a topic emptied by retention) with its roll snapshot:
    /// the recovery loads it and writes nothing; the final rebuild deletes it (at the log
    /// start) and loads nothing, so nothing descends from it.
    #[test]
    fn nothing_is_loaded_when_the_only_snapshot_is_at_the_log_start() {
        let segs = [seg(1000, false, Some(1000))];
        let mut inp = input(&segs, &[1000]);
        inp.unclean_from = Some(0);
        inp.log_start = Some(1000);
        inp.log_end = Some(1000);
        let c = chain(&inp).unwrap();
        assert_eq!(c.steps[0].rebuild, None);
        assert_eq!((c.last, c.origin), (None, None));
        assert!(!c.skipped);
    }

    /// Segments 0/10/20/30 (log end 40), those at `missing` without an offset index.
    fn four(missing: &[i64]) -> Vec<SegmentInput> {
        [0, 10, 20, 30]
            .iter()
            .map(|&b| seg(b, missing.contains(&b), Some(b + 10)))
            .collect()
    }

    /// After a clean shutdown, with no snapshot, segments 20 and 30 without an offset index:
    /// the recovery of 20 at load rebuilds over the segments opened before it (0 and 10:
    /// a snapshot at 10 on its way, then at 20) and leaves 30, the recovery of 30 loads 30
    /// and leaves 40 — Kafka's 10, 20, 30, 40, not the log's second-last base alone. With
    /// only 30 without an index, the same four (its rebuild passes 10 and 20). The last
    /// segment recovered after an unclean shutdown instead rebuilds over the whole log, of
    /// whose last two bases only 20 lies below it: 20, 30, 40.
    #[test]
    fn a_recovery_at_load_snapshots_the_two_bases_opened_before_it() {
        for missing in [&[20, 30][..], &[30]] {
            let segs = four(missing);
            let mut inp = input(&segs, &[]);
            inp.unclean_from = None;
            inp.clean_shutdown = Some(true);
            inp.log_end = Some(40);
            let c = chain(&inp).unwrap();
            assert_eq!(c.files, [10, 20, 30, 40], "{missing:?}");
            assert_eq!(c.last, Some(40));
        }
        let segs = four(&[]);
        let mut inp = input(&segs, &[]);
        inp.unclean_from = Some(3);
        inp.log_end = Some(40);
        assert_eq!(chain(&inp).unwrap().files, [20, 30, 40]);
    }

    /// Offsets at the ends of the range do not overflow.
    #[test]
    fn extreme_offsets_do_not_overflow() {
        let segs = [seg(i64::MAX, true, None)];
        let mut inp = input(&segs, &[i64::MAX]);
        inp.log_start_checkpoint = i64::MAX;
        inp.unclean_from = Some(0);
        inp.log_start = Some(i64::MAX);
        inp.log_end = None;
        let c = chain(&inp).unwrap();
        assert_eq!(c.steps.len(), 2);
    }
}
