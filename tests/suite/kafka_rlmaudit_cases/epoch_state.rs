//! `RemoteLogLeaderEpochStateTest`, the methods no test cited: one leader epoch's offset map
//! and unreferenced set, driven in Kafka's test by direct calls, here by the copies and
//! deletions whose records make those calls (`RemoteLogMetadataCache` hands each finished
//! copy to every epoch it spans).

use super::{OwnCopy, check, check_own, copied, gap, metadata, one, replayed, storage};
use crate::kafka_quiet_tiered_cases::history;
use crate::kafka_remote_manager_cases::partition;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::remote_log::{DELETE_SEGMENT_FINISHED, TieredLog};

/// `RemoteLogLeaderEpochStateTest.handleSegmentWithCopySegmentFinishedStateForMultipleOverlappingSegments`:
/// four copies in epoch 0 finish in turn — s1 [10,100], s2 [5,150], s3 [148,155], s4
/// [4,200] (the leaders' own rolls: each with an object of its own, s4 the local log's
/// segment). Each of s2 and s4 reaches the epoch's highest offset and moves every entry at or
/// above its start out of the map; s3 does not, and goes in at 148; s4 then moves it out
/// too. The map is {4: s4}: 4..=200 are served by s4 (log start 4, local log from 201), the
/// others are listed, unreferenced. Nothing reported; the replay reads s4 alone. Near miss:
/// s3 finishes last — it ends at 155, below the highest 200, so it goes in at 148 beside s4
/// without moving it: 156..=200, held by s4, are served by no lookup (the floor entry of 156
/// is s3): a gap naming s4 unserved.
#[test]
fn multiple_overlapping_copies_leave_the_widest_in_the_map() {
    let build = |s3_last: bool| {
        let mut t = TieredLog::new(partition(&[&[(0, 4)], &[(0, 197)], &[(0, 10)]]));
        let s1 = OwnCopy::new(&mut t, 10, &[(0, 91)]);
        let s2 = OwnCopy::new(&mut t, 5, &[(0, 146)]);
        let s3 = OwnCopy::new(&mut t, 148, &[(0, 8)]);
        s1.copy(&mut t, true);
        s2.copy(&mut t, true);
        if s3_last {
            t.copy(1);
            s3.copy(&mut t, true);
        } else {
            s3.copy(&mut t, true);
            t.copy(1);
        }
        t.local_from(2);
        t.log_start(4);
        check_own(t, &[&s1, &s2, &s3])
    };
    let c = build(false);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(storage(&c), vec![]);
    assert_eq!(copied(&c), vec![(4, 200), (5, 150), (10, 100), (148, 155)]);
    assert_eq!(replayed(&c), (1, Some(4), Some(200)));

    let c = build(true);
    assert_eq!(gap(&c), (156, 200));
    let g = one(&c, Kind::RemoteSegmentGap);
    let unserved = g.evidence["unserved_segments"].as_array().unwrap();
    assert_eq!(unserved.len(), 1, "{unserved:#?}");
    assert_eq!(unserved[0]["start_offset"], 4);
}

/// `RemoteLogLeaderEpochStateTest.testListAllRemoteLogSegmentsShouldReturnSortedSegments`: in
/// epoch 0, s1 [0,4] started and never finished; s2 [5,10], s3 [11,100] and s4 [9,150]
/// finished in that order (s4 another leader's roll). s4 reaches the highest offset and moves
/// s3 out of the map; s2, below its start, stays: the map {5: s2, 9: s4}, the listing s1,
/// s2, s4, s3 by start offset. A consumer from the log start 5 is served 5..=10 by s2, then
/// 11..=150 by s4: no gap, the replay reads both. s1, below the log start, is one the next
/// expiration run deletes by the log-start rule (listed, unreferenced, in epoch 0):
/// `remote_copy_unfinished` as info. Near miss: s3 finishes after s4 — it ends at 100, below
/// the highest 150, so it goes in at 11 without moving s4: 101..=150 are a gap.
#[test]
fn a_listing_holds_copies_in_flight_and_moved_out_copies() {
    let build = |s3_last: bool| {
        let layout: [&[(i32, usize)]; 5] =
            [&[(0, 5)], &[(0, 6)], &[(0, 90)], &[(0, 50)], &[(0, 10)]];
        let mut t = TieredLog::new(partition(&layout));
        t.copy_started(0);
        t.copy(1);
        let s4 = OwnCopy::new(&mut t, 9, &[(0, 142)]);
        if s3_last {
            s4.copy(&mut t, true);
            t.copy(2);
        } else {
            t.copy(2);
            s4.copy(&mut t, true);
        }
        t.local_from(4);
        t.log_start(5);
        check_own(t, &[&s4])
    };
    let c = build(false);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteCopyUnfinished, 0, Severity::Info)]
    );
    assert_eq!(storage(&c), vec![]);
    assert_eq!(copied(&c), vec![(5, 10), (9, 150), (11, 100)]);
    assert_eq!(replayed(&c), (2, Some(5), Some(150)));

    let c = build(true);
    assert_eq!(gap(&c), (101, 150));
}

/// `RemoteLogLeaderEpochStateTest.handleSegmentWithDeleteSegmentFinishedState`: a copy
/// started (listed, unreferenced) and deleted — as `RemoteLogManager.copyLogSegment` cleans
/// up a failed copy: DELETE_SEGMENT_STARTED, then FINISHED — leaves every listing; the retry
/// under a new id is copied and served. Nothing reported. Near miss: the FINISHED straight
/// after the STARTED copy, an invalid transition the cache drops
/// (`RemoteLogSegmentState.isValidTransition`): the segment stays a copy in flight, listed,
/// and with later copies started it is an unfinished copy (info: the retry at its start
/// holds its offsets).
#[test]
fn a_copy_deleted_before_it_finished_leaves_every_listing() {
    let build = |skip_delete_started: bool| {
        let mut t = history();
        let a = t.copy_started(0);
        if skip_delete_started {
            t.update(a, DELETE_SEGMENT_FINISHED);
        } else {
            t.delete(a);
        }
        t.copy(0);
        t.copy(1);
        t.local_from(2);
        t.log_start(0);
        check(vec![t], |_| {})
    };
    let c = build(false);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(copied(&c), vec![(0, 19), (20, 39)]);
    assert_eq!(replayed(&c), (2, Some(0), Some(39)));
    let c = build(true);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteCopyUnfinished, 0, Severity::Info)]
    );
    let f = one(&c, Kind::RemoteCopyUnfinished);
    assert_eq!(f.evidence["segment"]["state"], "COPY_SEGMENT_STARTED");
    assert_eq!(copied(&c), vec![(0, 19), (20, 39)]);
}

/// `RemoteLogLeaderEpochStateTest.testListAllRemoteLogSegmentsOnEmpty`: epochs 1 and 2 of
/// `orders-0` have no remote segment (only [0,19] and [20,39], epoch 0, are copied): their
/// listings are empty, and nothing needs them while the local log starts at 40. Nothing
/// reported. Near miss: the local log from 60 — [40,59] (epoch 1) gone locally without a
/// copy: epoch 1's empty map serves none of it, a gap.
#[test]
fn an_epoch_without_copies_lists_nothing() {
    let build = |local_from: usize| {
        let mut t = history();
        t.copy(0);
        t.copy(1);
        t.local_from(local_from);
        t.log_start(0);
        check(vec![t], |_| {})
    };
    let c = build(2);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(replayed(&c), (2, Some(0), Some(39)));
    let c = build(3);
    assert_eq!(gap(&c), (40, 59));
}
