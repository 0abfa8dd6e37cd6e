//! Transactional offset commits and their markers (`OffsetMetadataManagerTest`,
//! `GroupCoordinatorShardTest`).

use super::*;

/// `OffsetMetadataManagerTest.testReplayTransactionEndMarkerWithCommit` and
/// `GroupCoordinatorShardTest.testReplayEndTransactionMarker`: a COMMIT marker moves its
/// producer's pending offsets into the group's committed offsets (over an older regular
/// commit of the partition), an ABORT marker drops them, and a marker of a producer with
/// nothing pending changes nothing and fails nothing.
#[test]
fn a_commit_marker_applies_its_producers_offsets_and_an_abort_drops_them() {
    let write = |commit_5: bool| {
        let mut c = Coord::new();
        c.batch("foo", vec![commit("foo", "bar", 0, 99)]);
        c.txn(5, "foo", vec![commit("foo", "bar", 0, 100)]);
        c.txn(6, "foo", vec![commit("foo", "bar", 1, 200)]);
        c.marker(1, "foo", true);
        if commit_5 {
            c.marker(5, "foo", true);
        }
        c.marker(6, "foo", false);
        c.load()
    };
    let l = write(true);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 100)]);
    assert_eq!(l.pending, vec![]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: without producer 5's marker its commit stays pending over the regular
    // one, and the open transaction is reported.
    let l = write(false);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 99)]);
    assert_eq!(l.pending, vec![pending(5, "foo", "bar", 0, 100)]);
    l.assert_reported(Kind::GroupOffsetsPendingInHangingTransaction, "foo");
}

/// `OffsetMetadataManagerTest.testOffsetCommitsNumberMetricWithTransactionalOffsets`: three
/// producers' pending commits over two partitions, all committed, leave two offsets (one
/// per partition; of the two commits of one partition, the one written later holds).
#[test]
fn three_producers_commits_of_two_partitions_leave_two_offsets() {
    let write = |abort_5: bool| {
        let mut c = Coord::new();
        c.txn(4, "foo", vec![commit("foo", "bar", 0, 100)]);
        c.txn(5, "foo", vec![commit("foo", "bar", 0, 101)]);
        c.txn(6, "foo", vec![commit("foo", "bar", 1, 200)]);
        c.marker(4, "foo", true);
        c.marker(5, "foo", !abort_5);
        c.marker(6, "foo", true);
        c.load()
    };
    let l = write(false);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 101), tp("bar", 1, 200)]);
    assert_eq!(l.pending, vec![]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: producer 5 aborts, and producer 4's offset holds.
    let l = write(true);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 100), tp("bar", 1, 200)]);
    l.assert_no_alarm();
}

/// `OffsetMetadataManagerTest.testDeleteGroupAllOffsetsWithPendingTransactionalOffsets` and
/// `OffsetMetadataManagerTest.testDeleteGroupAllOffsets`: deleting a group writes one
/// offset tombstone per partition it holds an offset of, committed or pending in an open
/// transaction (written once for a partition that is both), then the group's tombstone;
/// after the load none of the offsets is held, and the transaction's later COMMIT marker
/// applies none of its pending offsets.
#[test]
fn a_group_deleted_with_pending_offsets_holds_none_after_the_commit_marker() {
    let write = |tombstone_pending_only: bool| {
        let mut c = Coord::new();
        c.batch("foo", vec![classic("foo", 0, &[])]);
        c.batch(
            "foo",
            vec![
                commit("foo", "bar-0", 0, 100),
                commit("foo", "bar-0", 1, 100),
                commit("foo", "bar-1", 0, 100),
            ],
        );
        c.txn(
            10,
            "foo",
            vec![
                commit("foo", "bar-1", 0, 101),
                commit("foo", "bar-2", 0, 100),
            ],
        );
        let mut deletion = vec![
            offset_tombstone("foo", "bar-1", 0),
            offset_tombstone("foo", "bar-0", 0),
            offset_tombstone("foo", "bar-0", 1),
        ];
        if tombstone_pending_only {
            deletion.push(offset_tombstone("foo", "bar-2", 0));
        }
        deletion.push(classic_tombstone("foo"));
        c.batch("foo", deletion);
        c.marker(10, "foo", true);
        c.load()
    };
    let l = write(true);
    assert!(l.live("foo").is_none(), "{:#?}", l.groups);
    let foo = l.deleted("foo").expect("foo deleted");
    assert_eq!(offsets_of(foo), vec![]);
    assert_eq!(l.pending, vec![]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: without the tombstone of the partition only the transaction held, the
    // COMMIT marker applies it after the group's deletion.
    let l = write(false);
    let foo = l.deleted("foo").expect("foo deleted");
    assert_eq!(offsets_of(foo), vec![tp("bar-2", 0, 100)]);
}

/// `OffsetMetadataManagerTest.testConsumerGroupOffsetDeleteWithPendingTransactionalOffsets`
/// and `OffsetMetadataManagerTest.testGenericGroupOffsetDeleteWithPendingTransactionalOffsets`:
/// an OffsetDelete of a partition the group (consumer or classic, not subscribed to the
/// topic) only holds a pending transactional offset of writes the partition's tombstone,
/// which drops the pending offset: the transaction's COMMIT marker applies nothing.
#[test]
fn an_offset_delete_clears_a_pending_commit_before_its_marker() {
    let write = |delete_first: bool| {
        let mut c = Coord::new();
        c.batch("foo", vec![group_epoch("foo", 1), target_epoch("foo", 1)]);
        c.batch("qux", vec![classic("qux", 0, &[])]);
        for (pid, group) in [(10, "foo"), (11, "qux")] {
            if delete_first {
                c.batch(group, vec![offset_tombstone(group, "bar", 0)]);
            }
            c.txn(pid, group, vec![commit(group, "bar", 0, 100)]);
            if !delete_first {
                c.batch(group, vec![offset_tombstone(group, "bar", 0)]);
            }
            c.marker(pid, group, true);
        }
        c.load()
    };
    let l = write(false);
    assert_eq!(l.group("foo").group_type, GroupType::Consumer);
    assert_eq!(l.offsets("foo"), vec![]);
    assert_eq!(l.group("qux").group_type, GroupType::Classic);
    assert_eq!(l.offsets("qux"), vec![]);
    assert_eq!(l.pending, vec![]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: a tombstone written before the transactional commit deletes nothing the
    // commit writes later; the marker applies it.
    let l = write(true);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 100)]);
    assert_eq!(l.offsets("qux"), vec![tp("bar", 0, 100)]);
    l.assert_no_alarm();
}

/// `GroupCoordinatorShardTest.testReplayTransactionalOffsetCommit`: offset commits of both
/// key versions (0 and 1) in transactional batches reach the offset manager with their
/// batch's producer id: pending until that producer's marker, committed by it.
#[test]
fn transactional_commits_of_both_key_versions_wait_for_their_marker() {
    let write = |markers: bool| {
        let mut c = Coord::new();
        c.txn(100, "foo", vec![commit_key0("foo", "bar", 0, 10)]);
        c.txn(101, "foo", vec![commit("foo", "bar", 1, 11)]);
        if markers {
            c.marker(100, "foo", true);
            c.marker(101, "foo", true);
        }
        c.load()
    };
    let l = write(true);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 10), tp("bar", 1, 11)]);
    assert_eq!(l.pending, vec![]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: without the markers both stay pending, each under its producer id.
    let l = write(false);
    assert_eq!(l.offsets("foo"), vec![]);
    assert_eq!(
        l.pending,
        vec![
            pending(100, "foo", "bar", 0, 10),
            pending(101, "foo", "bar", 1, 11)
        ]
    );
    l.assert_reported(Kind::GroupOffsetsPendingInHangingTransaction, "foo");
}

/// `GroupCoordinatorShardTest.testReplayOffsetCommitWithNullValue`: offset tombstones of
/// both key versions reach the offset manager as a deletion of the group's offset of the
/// partition, whichever key version the commit had.
#[test]
fn offset_tombstones_of_both_key_versions_remove_the_offset() {
    let write = |other_partition: bool| {
        let mut c = Coord::new();
        c.batch(
            "foo",
            vec![
                commit("foo", "bar", 0, 10),
                commit_key0("foo", "bar", 1, 11),
            ],
        );
        let p = if other_partition { 2 } else { 0 };
        c.batch(
            "foo",
            vec![
                offset_tombstone_key0("foo", "bar", p),
                offset_tombstone("foo", "bar", p + 1),
            ],
        );
        c.load()
    };
    let l = write(false);
    assert_eq!(l.offsets("foo"), vec![]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: tombstones of other partitions remove neither offset.
    let l = write(true);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 10), tp("bar", 1, 11)]);
}
