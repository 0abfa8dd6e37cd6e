//! Each KIP-848 consumer group record type replayed on its own, value and tombstone
//! (`GroupMetadataManagerTest.testReplayConsumerGroup*`, the methods not cited before).

use super::*;

/// `GroupMetadataManagerTest.testReplayConsumerGroupMemberMetadata` (and the routing of
/// `GroupCoordinatorShardTest.testReplayConsumerGroupMemberMetadata`): a member metadata
/// value for an unknown group creates the consumer group and the member, with the
/// member's client id, host, rack and subscription.
#[test]
fn a_member_record_alone_creates_the_group_and_its_member() {
    let mut c = Coord::new();
    c.batch("foo", vec![member("foo", "member")]);
    let l = c.load();
    let foo = l.group("foo");
    assert_eq!(foo.group_type, GroupType::Consumer);
    assert_eq!(foo.epoch, 0);
    let m = &foo.members["member"];
    assert_eq!(
        (
            m.client_id.as_str(),
            m.client_host.as_str(),
            m.rack_id.as_deref()
        ),
        ("clientid", "clienthost", Some("rackid"))
    );
    assert_eq!(m.subscribed_topics, vec!["foo".to_string()]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: its tombstone right after removes the member (its epoch is 0, not yet
    // given an assignment: `LEAVE_GROUP_MEMBER_EPOCH` is -1) — the load throws.
    let mut c = Coord::new();
    c.batch("foo", vec![member("foo", "member")]);
    c.batch("foo", vec![tombstone(5, gm("foo", "member"))]);
    let l = c.load();
    assert!(l.group("foo").members.contains_key("member"));
    l.assert_reported(Kind::GroupTombstonesIncomplete, "foo");
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupMemberMetadataTombstone` (and
/// `GroupCoordinatorShardTest.testReplayConsumerGroupMemberMetadataWithNullValue`): a
/// member metadata tombstone of a member the group does not have, or of a group that
/// does not exist, is ignored: no member, no group created.
#[test]
fn a_member_tombstone_of_an_unknown_member_or_group_is_ignored() {
    let mut c = Coord::new();
    c.batch("foo", vec![group_epoch("foo", 10)]);
    c.batch("foo", vec![tombstone(5, gm("foo", "m1"))]);
    c.batch("bar", vec![tombstone(5, gm("bar", "m1"))]);
    let l = c.load();
    let foo = l.group("foo");
    assert_eq!(foo.epoch, 10);
    assert!(foo.members.is_empty(), "{foo:#?}");
    assert!(!l.knows("bar"), "{:#?}", l.groups);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: a member that holds an assignment (member epoch 10) and is tombstoned
    // before its current assignment: the load throws.
    let mut c = Coord::new();
    c.batch(
        "foo",
        vec![
            group_epoch("foo", 10),
            member("foo", "m1"),
            current("foo", "m1", 10, 9, 0, &[]),
        ],
    );
    c.batch("foo", vec![tombstone(5, gm("foo", "m1"))]);
    let l = c.load();
    l.assert_reported(Kind::GroupTombstonesIncomplete, "foo");
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupPartitionMetadata` and
/// `GroupMetadataManagerTest.testReplayConsumerGroupPartitionMetadataTombstone` (and
/// `GroupCoordinatorShardTest.testReplayConsumerGroupPartitionMetadata`,
/// `GroupCoordinatorShardTest.testReplayConsumerGroupPartitionMetadataWithNullValue`):
/// a partition metadata value creates the consumer group that holds it; its tombstone for a
/// group that does not exist is ignored.
#[test]
fn partition_metadata_creates_the_group_and_its_lone_tombstone_is_ignored() {
    let mut c = Coord::new();
    c.batch("foo", vec![partition_metadata("foo")]);
    c.batch("bar", vec![tombstone(4, g("bar"))]);
    let l = c.load();
    assert_eq!(l.group("foo").group_type, GroupType::Consumer);
    assert!(!l.knows("bar"), "{:#?}", l.groups);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the tombstone of an existing group's partition metadata clears the
    // metadata, not the group.
    let mut c = Coord::new();
    c.batch("foo", vec![partition_metadata("foo")]);
    c.batch("foo", vec![tombstone(4, g("foo"))]);
    let l = c.load();
    assert_eq!(l.group("foo").group_type, GroupType::Consumer);
    l.assert_no_alarm();
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupTargetAssignmentMember` and
/// `GroupMetadataManagerTest.testReplayConsumerGroupTargetAssignmentMemberTombstone` (and
/// `GroupCoordinatorShardTest.testReplayConsumerGroupTargetAssignmentMember`,
/// `GroupCoordinatorShardTest.testReplayConsumerGroupTargetAssignmentMemberKeyWithNullValue`): a member's target assignment
/// creates the group and records the member's target partitions; the tombstone for a
/// group that does not exist is ignored.
#[test]
fn a_target_assignment_creates_the_group_and_its_lone_tombstone_is_ignored() {
    let mut c = Coord::new();
    c.batch("foo", vec![target("foo", "m1", &[(FOO_ID, &[0, 1, 2])])]);
    c.batch("bar", vec![tombstone(7, gm("bar", "m1"))]);
    let l = c.load();
    let foo = l.group("foo");
    assert_eq!(foo.group_type, GroupType::Consumer);
    let want: Vec<String> = (0..3).map(|p| format!("{FOO_ID}:{p}")).collect();
    assert_eq!(foo.target_assignment.get("m1"), Some(&want));
    assert!(!l.knows("bar"), "{:#?}", l.groups);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the tombstone after the value removes the member's target.
    let mut c = Coord::new();
    c.batch("foo", vec![target("foo", "m1", &[(FOO_ID, &[0, 1, 2])])]);
    c.batch("foo", vec![tombstone(7, gm("foo", "m1"))]);
    let l = c.load();
    assert!(l.group("foo").target_assignment.is_empty());
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupTargetAssignmentMetadata` and
/// `GroupMetadataManagerTest.testReplayConsumerGroupTargetAssignmentMetadataTombstone` (and
/// `GroupCoordinatorShardTest.testReplayConsumerGroupTargetAssignmentMetadata`,
/// `GroupCoordinatorShardTest.testReplayConsumerGroupTargetAssignmentMetadataWithNullValue`): the target assignment metadata
/// creates the group with that assignment epoch (its group epoch still 0); its tombstone
/// for a group that does not exist is ignored.
#[test]
fn a_target_assignment_epoch_creates_the_group_and_its_lone_tombstone_is_ignored() {
    let mut c = Coord::new();
    c.batch("foo", vec![target_epoch("foo", 10)]);
    c.batch("bar", vec![tombstone(6, g("bar"))]);
    let l = c.load();
    let foo = l.group("foo");
    assert_eq!(
        (foo.group_type, foo.epoch, foo.assignment_epoch),
        (GroupType::Consumer, 0, 10)
    );
    assert!(!l.knows("bar"), "{:#?}", l.groups);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the tombstone after the value sets the group's assignment epoch to -1.
    let mut c = Coord::new();
    c.batch("foo", vec![target_epoch("foo", 10)]);
    c.batch("foo", vec![tombstone(6, g("foo"))]);
    let l = c.load();
    assert_eq!(l.group("foo").assignment_epoch, -1);
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupCurrentMemberAssignment` and
/// `GroupMetadataManagerTest.testReplayConsumerGroupCurrentMemberAssignmentTombstone` (and
/// `GroupCoordinatorShardTest.testReplayConsumerGroupCurrentMemberAssignment`,
/// `GroupCoordinatorShardTest.testReplayConsumerGroupCurrentMemberAssignmentWithNullValue`): a current assignment creates the
/// group and the member with its epochs, state and assigned partitions; its tombstone for a
/// member the group does not have, or for a group that does not exist, is ignored.
#[test]
fn a_current_assignment_creates_the_member_and_its_lone_tombstone_is_ignored() {
    let mut c = Coord::new();
    // Member epoch 10 after 9, UNRELEASED_PARTITIONS (2).
    c.batch(
        "bar",
        vec![current("bar", "member", 10, 9, 2, &[(FOO_ID, &[0, 1, 2])])],
    );
    c.batch("foo", vec![group_epoch("foo", 10)]);
    c.batch("foo", vec![tombstone(8, gm("foo", "m1"))]);
    c.batch("baz", vec![tombstone(8, gm("baz", "m1"))]);
    let l = c.load();
    let bar = l.group("bar");
    assert_eq!(bar.group_type, GroupType::Consumer);
    let m = &bar.members["member"];
    assert_eq!(
        (m.member_epoch, m.previous_member_epoch, m.state),
        (10, 9, 2)
    );
    let want: Vec<String> = (0..3).map(|p| format!("{FOO_ID}:{p}")).collect();
    assert_eq!(m.assigned, want);
    assert!(l.group("foo").members.is_empty());
    assert!(!l.knows("baz"), "{:#?}", l.groups);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the tombstone of a member the group has puts it at the leave epoch (-1)
    // with nothing assigned; the member stays until its metadata tombstone.
    let mut c = Coord::new();
    c.batch(
        "bar",
        vec![current("bar", "member", 10, 9, 2, &[(FOO_ID, &[0, 1, 2])])],
    );
    c.batch("bar", vec![tombstone(8, gm("bar", "member"))]);
    let l = c.load();
    let m = &l.group("bar").members["member"];
    assert_eq!((m.member_epoch, m.assigned.len()), (-1, 0));
}
