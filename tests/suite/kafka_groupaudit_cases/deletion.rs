//! What a group's deletion writes, and the load of it (`GroupMetadataManagerTest`'s
//! `createGroupTombstoneRecords` / `maybeDeleteGroup` cases).

use super::*;

/// `GroupMetadataManagerTest.testConsumerGroupDelete` and
/// `GroupMetadataManagerTest.testConsumerGroupMaybeDelete`: an empty consumer group is
/// deleted with three tombstones, in this order: its target assignment metadata, its
/// partition metadata, its group metadata; the load replays them into no group. A group
/// that still has a member gets no tombstones from `maybeDeleteGroup`.
#[test]
fn an_empty_consumer_group_deleted_in_order_is_gone() {
    let mut c = Coord::new();
    c.batch(
        "group-id",
        vec![
            group_epoch("group-id", 10),
            partition_metadata("group-id"),
            target_epoch("group-id", 10),
        ],
    );
    c.batch(
        "group-id",
        vec![
            tombstone(6, g("group-id")),
            tombstone(4, g("group-id")),
            tombstone(3, g("group-id")),
        ],
    );
    let l = c.load();
    assert!(l.live("group-id").is_none(), "{:#?}", l.groups);
    assert_eq!(
        l.deleted("group-id").unwrap().group_type,
        GroupType::Consumer
    );
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the same tombstones while a member is left (what `maybeDeleteGroup` would
    // not write): the group's tombstone fails the load, and the group stays.
    let mut c = Coord::new();
    c.batch(
        "group-id",
        vec![
            group_epoch("group-id", 10),
            partition_metadata("group-id"),
            target_epoch("group-id", 10),
            member("group-id", "member"),
            current("group-id", "member", 10, 10, 0, &[]),
        ],
    );
    c.batch(
        "group-id",
        vec![
            tombstone(6, g("group-id")),
            tombstone(4, g("group-id")),
            tombstone(3, g("group-id")),
        ],
    );
    let l = c.load();
    assert!(l.live("group-id").is_some(), "{:#?}", l.groups);
    l.assert_reported(Kind::GroupTombstonesIncomplete, "group-id");
}

/// `GroupMetadataManagerTest.testClassicGroupDelete`,
/// `GroupMetadataManagerTest.testClassicGroupMaybeDelete` and
/// `GroupCoordinatorShardTest.testReplayGroupMetadataWithNullValue`: a classic group is
/// deleted with the one group metadata tombstone, which the load replays as the group's
/// removal; `maybeDeleteGroup` of an unknown group id writes nothing.
#[test]
fn a_classic_group_is_deleted_by_its_one_tombstone() {
    let mut c = Coord::new();
    c.batch("group-id", vec![classic("group-id", 0, &[])]);
    c.batch("group-id", vec![classic_tombstone("group-id")]);
    let l = c.load();
    assert!(l.live("group-id").is_none(), "{:#?}", l.groups);
    assert_eq!(
        l.deleted("group-id").unwrap().group_type,
        GroupType::Classic
    );
    assert!(!l.knows("invalid-group-id"));
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: without the tombstone (a group in PreparingRebalance, which
    // `maybeDeleteGroup` leaves) the group lives.
    let mut c = Coord::new();
    c.batch("group-id", vec![classic("group-id", 0, &[])]);
    let l = c.load();
    assert_eq!(l.group("group-id").group_type, GroupType::Classic);
    assert!(l.deleted("group-id").is_none());
}

/// `GroupMetadataManagerTest.testShareGroupDelete`: an empty share group is deleted with
/// the tombstones of its target assignment metadata, its partition metadata (record type 9
/// in the release of that test, retired since) and its group metadata, in that order; the
/// load replays them into no group.
#[test]
fn an_empty_share_group_deleted_in_order_is_gone() {
    let id = "share-group-id";
    let partition_metadata = json!({"topics": [{"topicId": BAR_ID, "topicName": "bar",
        "numPartitions": 10, "partitionMetadata": []}]});
    let write = |target_tombstone: bool| {
        let mut c = Coord::new();
        c.batch(
            id,
            vec![
                (11, g(id), Some((0, json!({"epoch": 10})))),
                (9, g(id), Some((0, partition_metadata.clone()))),
                (12, g(id), Some((0, json!({"assignmentEpoch": 10})))),
            ],
        );
        let mut deletion = Vec::new();
        if target_tombstone {
            deletion.push(tombstone(12, g(id)));
        }
        deletion.extend([tombstone(9, g(id)), tombstone(11, g(id))]);
        c.batch(id, deletion);
        c.load()
    };
    let l = write(true);
    assert!(l.live(id).is_none(), "{:#?}", l.groups);
    assert_eq!(l.deleted(id).unwrap().group_type, GroupType::Share);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: without the target assignment metadata tombstone the group's tombstone
    // finds its assignment epoch still set: the load throws.
    let l = write(false);
    assert!(l.live(id).is_some(), "{:#?}", l.groups);
    l.assert_reported(Kind::GroupTombstonesIncomplete, id);
}
