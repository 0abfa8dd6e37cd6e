use super::*;
use crate::read::format::remote_log::SegmentState;
use std::collections::BTreeSet;

/// A finished segment `start..=end` with `epochs` (epoch, first offset).
fn seg(n: u8, start: i64, end: i64, epochs: &[(i32, i64)]) -> RemoteSegment {
    RemoteSegment {
        id: [n; 16],
        start_offset: start,
        end_offset: end,
        leader_epochs: epochs.to_vec(),
        segment_size_in_bytes: 0,
        max_timestamp_ms: 0,
        custom_metadata: None,
        txn_index_empty: false,
        state: SegmentState::CopyFinished,
        history: Vec::new(),
    }
}

/// A log whose segments finished in the order given.
fn finished(segments: Vec<RemoteSegment>) -> PartitionLog {
    let mut log = PartitionLog::default();
    for (i, s) in segments.iter().enumerate() {
        log.epochs.copy_finished(i, s);
    }
    log.segments = segments;
    log
}

fn lineage(e: &[(i32, i64)]) -> Lineage {
    Lineage::new(e.iter().copied())
}

fn ranges(v: &[Served]) -> Vec<(i64, i64, usize)> {
    v.iter().map(|s| (s.first, s.last, s.segment)).collect()
}

// RemoteLogLeaderEpochStateTest.handleSegmentWithCopySegmentFinishedState
#[test]
fn finished_segments_are_found_by_floor_entry() {
    let mut st = EpochState::default();
    st.copy_finished(10, 1, 100);
    st.copy_finished(101, 2, 200);
    assert_eq!(st.offsets.len(), 2);
    assert_eq!(st.offsets.range(..=90).next_back(), Some((&10, &1)));
    assert_eq!(st.offsets.range(..=150).next_back(), Some((&101, &2)));
    assert_eq!(st.highest, Some(200));
}

// RemoteLogLeaderEpochStateTest.handleSegmentWithCopySegmentFinishedStateForOverlappingSegments
// and …ForMultipleOverlappingSegments
#[test]
fn a_segment_reaching_the_highest_offset_replaces_the_entries_above_its_start() {
    let mut st = EpochState::default();
    st.copy_finished(10, 1, 100);
    st.copy_finished(5, 2, 150);
    assert_eq!(st.offsets, BTreeMap::from([(5, 2)]));
    assert_eq!(st.highest, Some(150));
    st.copy_finished(148, 3, 155);
    assert_eq!(st.offsets, BTreeMap::from([(5, 2), (148, 3)]));
    st.copy_finished(4, 4, 200);
    assert_eq!(st.offsets, BTreeMap::from([(4, 4)]));
    assert_eq!(st.highest, Some(200));
    // the entries moved out are unreferenced: still listed
    assert_eq!(st.unreferenced, BTreeSet::from([1, 2, 3]));
}

// RemoteLogLeaderEpochStateTest.handleSegmentWithCopySegmentFinishedStateForDuplicateSegments
// and …ForSegmentsWithSameStartOffset
#[test]
fn the_later_copy_at_the_same_start_takes_the_entry() {
    let mut st = EpochState::default();
    st.copy_finished(10, 1, 100);
    st.copy_finished(10, 2, 100);
    assert_eq!(st.offsets, BTreeMap::from([(10, 2)]));
    // each earlier copy reached no further than the highest offset: moved out, unreferenced
    assert_eq!(st.unreferenced, BTreeSet::from([1]));
    st.copy_finished(10, 3, 150);
    assert_eq!(st.offsets, BTreeMap::from([(10, 3)]));
    assert_eq!(st.highest, Some(150));
    assert_eq!(st.unreferenced, BTreeSet::from([1, 2]));
    assert!(st.lists(10, 2) && st.lists(10, 3));
}

/// The order those tests leave out: a shorter copy at the same start, finished later. The
/// highest offset (150) is above its end, so nothing is moved out, but its entry replaces
/// the longer one's.
#[test]
fn a_shorter_copy_at_the_same_start_replaces_the_longer_one() {
    let mut st = EpochState::default();
    st.copy_finished(10, 1, 150);
    st.copy_finished(10, 2, 100);
    assert_eq!(st.offsets, BTreeMap::from([(10, 2)]));
    assert_eq!(st.highest, Some(150));
    // the map's put dropped the longer one: in neither the map nor the unreferenced set,
    // so the epoch's listing (listAllRemoteLogSegments) does not hold it
    assert!(st.unreferenced.is_empty());
    assert!(!st.lists(10, 1));
    assert!(st.lists(10, 2));
}

// RemoteLogLeaderEpochStateTest.handleSegmentWithCopySegmentStartedState and
// …DeleteSegmentFinishedState
#[test]
fn a_copy_in_flight_is_listed_until_it_finishes_or_is_deleted() {
    let mut st = EpochState::default();
    st.copy_started(1);
    assert_eq!(st.unreferenced, BTreeSet::from([1]));
    st.copy_finished(10, 1, 100);
    assert!(st.unreferenced.is_empty());
    assert!(st.lists(10, 1));
    st.copy_started(2);
    st.delete_finished(2);
    assert!(st.unreferenced.is_empty());
}

// RemoteLogLeaderEpochStateTest.handleSegmentWithDeleteSegmentStartedState
#[test]
fn a_delete_removes_only_its_own_entry() {
    let mut st = EpochState::default();
    st.copy_finished(10, 1, 100);
    st.copy_finished(101, 2, 200);
    st.delete_started(10, 1);
    st.delete_started(101, 2);
    assert!(st.offsets.is_empty());
    assert_eq!(st.highest, Some(200), "a deletion does not lower it");
    // listed, unreferenced, until the deletion finishes (each run retries it)
    assert_eq!(st.unreferenced, BTreeSet::from([1, 2]));
    st.delete_finished(1);
    st.delete_finished(2);
    assert!(st.unreferenced.is_empty());
    st.copy_finished(10, 3, 100);
    st.delete_started(10, 1);
    assert_eq!(st.offsets, BTreeMap::from([(10, 3)]));
}

/// `RemoteLogMetadataCache.remoteLogSegmentMetadata`: the floor entry in the epoch, then
/// the segment's end in that epoch (the next epoch's start less one).
#[test]
fn lookup_needs_the_floor_segment_to_reach_the_offset_in_the_epoch() {
    let log = finished(vec![
        seg(1, 0, 39, &[(0, 0)]),
        seg(2, 0, 19, &[(0, 0)]),
        seg(3, 40, 79, &[(1, 40), (2, 70)]),
    ]);
    let at = |e, o| log.epochs.lookup(&log.segments, e, o);
    assert_eq!(at(0, 10), Some(1));
    assert_eq!(at(0, 25), None, "[0,19] hides [0,39]");
    assert_eq!(at(1, 69), Some(2));
    assert_eq!(at(1, 70), None, "70 is epoch 2 in the segment");
    assert_eq!(at(2, 70), Some(2));
    assert_eq!(at(2, 60), None, "below the epoch's first entry");
    assert_eq!(at(3, 70), None, "no such epoch");
}

#[test]
fn served_ranges_follow_the_lookup() {
    // [0,39] then [20,29] in epoch 0: 30..=39 falls on [20,29].
    let log = finished(vec![seg(1, 0, 39, &[(0, 0)]), seg(2, 20, 29, &[(0, 20)])]);
    let all = served(&log, Some(&lineage(&[(0, 0)])), 0, 99);
    assert_eq!(ranges(&all), vec![(0, 19, 0), (20, 29, 1)]);
    // Clipped to the range asked.
    let some = served(&log, Some(&lineage(&[(0, 0)])), 5, 25);
    assert_eq!(ranges(&some), vec![(5, 19, 0), (20, 25, 1)]);
}

#[test]
fn offsets_are_looked_up_in_the_lineages_epoch() {
    // The segment says epoch 3 from 50; the replica's lineage says epoch 1 until 69.
    let log = finished(vec![seg(1, 40, 59, &[(1, 40), (3, 50)])]);
    let with = served(&log, Some(&lineage(&[(0, 0), (1, 40), (2, 70)])), 40, 59);
    assert_eq!(ranges(&with), vec![(40, 49, 0)]);
    // Without a lineage any epoch's lookup counts.
    let without = served(&log, None, 40, 59);
    assert_eq!(ranges(&without), vec![(40, 49, 0), (50, 59, 0)]);
    let empty = served(&log, Some(&lineage(&[])), 40, 59);
    assert_eq!(ranges(&empty), ranges(&without));
}

/// `LeaderEpochFileCache.epochForOffset`: an offset at an entry's start is that entry's
/// epoch (the first in epoch order when several start there); between starts, the epoch
/// of the entry before the first one starting above it.
#[test]
fn epoch_ranges_are_epoch_for_offset() {
    assert_eq!(
        epoch_ranges(&lineage(&[(0, 0), (1, 40), (2, 70)])),
        vec![(0, 0, 39), (1, 40, 69), (2, 70, i64::MAX)]
    );
    assert_eq!(
        epoch_ranges(&lineage(&[(0, 0), (1, 0), (2, 5)])),
        vec![(0, 0, 0), (1, 1, 4), (2, 5, i64::MAX)]
    );
    // Entries not ascending: below the first epoch's start nothing has an epoch.
    assert_eq!(
        epoch_ranges(&lineage(&[(0, 50), (1, 10)])),
        vec![(0, 50, 50), (1, 51, i64::MAX)]
    );
    assert_eq!(
        epoch_ranges(&lineage(&[(4, 100)])),
        vec![(4, 100, i64::MAX)]
    );
    assert_eq!(epoch_ranges(&lineage(&[])), vec![]);
}

/// [`epoch_ranges`] against `epochForOffset` itself, offset by offset.
#[test]
fn epoch_ranges_agree_with_the_loop_of_epoch_for_offset() {
    let epoch_for_offset = |l: &[(i32, i64)], o: i64| -> Option<i32> {
        let mut previous = None;
        for &(e, s) in l {
            if s == o {
                return Some(e);
            }
            if s > o {
                return previous;
            }
            previous = Some(e);
        }
        previous
    };
    let cases: &[&[(i32, i64)]] = &[
        &[(0, 0), (1, 40), (2, 70)],
        &[(0, 0), (1, 0), (2, 5), (3, 5), (4, 9)],
        &[(0, 50), (1, 10), (2, 30), (3, 60)],
        &[(2, 7)],
    ];
    for l in cases {
        let r = epoch_ranges(&lineage(l));
        for o in -2..100 {
            let got = r.iter().find(|x| x.1 <= o && o <= x.2).map(|x| x.0);
            assert_eq!(got, epoch_for_offset(l, o), "{l:?} at {o}");
        }
    }
}

/// [`served`] against the lookup itself, offset by offset, on copies finished and deleted
/// in an order that replaces, hides and removes entries across two epochs.
#[test]
fn served_agrees_with_the_lookup_offset_by_offset() {
    let segments = vec![
        seg(1, 0, 39, &[(0, 0)]),
        seg(2, 0, 19, &[(0, 0)]),
        seg(3, 20, 29, &[(0, 20)]),
        seg(4, 30, 59, &[(0, 30), (1, 45)]),
        seg(5, 45, 79, &[(1, 45)]),
        seg(6, 60, 69, &[(1, 60)]),
        seg(7, 10, 89, &[(0, 10), (1, 50)]),
    ];
    let mut log = PartitionLog::default();
    for (i, s) in segments.iter().enumerate() {
        log.epochs.copy_finished(i, s);
        if i == 4 {
            log.epochs.delete_started(2, &segments[2]);
        }
    }
    log.segments = segments;
    for l in [vec![(0, 0), (1, 45)], vec![(0, 0), (1, 50)], vec![(1, 0)]] {
        let l = lineage(&l);
        let got = served(&log, Some(&l), 0, 99);
        let ranges = epoch_ranges(&l);
        for o in 0..100 {
            let epoch = ranges.iter().find(|r| r.1 <= o && o <= r.2).map(|r| r.0);
            let want = epoch.and_then(|e| log.epochs.lookup(&log.segments, e, o));
            let have = got
                .iter()
                .find(|s| s.first <= o && o <= s.last)
                .map(|s| s.segment);
            assert_eq!(have, want, "{:?} at {o}", l.entries());
        }
    }
}

/// [`EpochMaps::listed_epochs`]: the unclean-election shape — A's [0,99] of epoch 0, then
/// B's [0,99] with epoch 0 to 49 and epoch 1 from 50: B's part of epoch 0 ends below the
/// epoch's highest (99), so its entry replaces A's without moving it out. A is in no listing;
/// B in both of its epochs. The other order (B first, A last) moves B out: both listed.
#[test]
fn listed_epochs_follow_the_maps_and_the_unreferenced_sets() {
    let a = seg(1, 0, 99, &[(0, 0)]);
    let b = seg(2, 0, 99, &[(0, 0), (1, 50)]);
    let log = finished(vec![a.clone(), b.clone()]);
    assert_eq!(log.epochs.listed_epochs(0, &a), Vec::<i32>::new());
    assert_eq!(log.epochs.listed_epochs(1, &b), vec![0, 1]);
    let log = finished(vec![b.clone(), a.clone()]);
    assert_eq!(log.epochs.listed_epochs(0, &b), vec![0, 1]);
    assert_eq!(log.epochs.listed_epochs(1, &a), vec![0]);
}
