//! Online downgrades (`GroupMetadataManager.convertToClassicGroup`): the last
//! consumer-protocol member of a consumer group goes (fenced on a timeout, or replaced by a
//! classic-protocol static member), and the rest use the classic protocol.

use super::{
    BAR, ClassicMember, FOO, GROUP, classic, cm, consumer_tombstones, current_with, epochs,
    member_meta, member_tombstones,
};
use crate::kafka_groupaudit_cases::{
    Coord, commit, group_epoch, partition_metadata, target, target_epoch, tp,
};
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;

/// A consumer group at epoch 10 (`ConsumerGroupBuilder(groupId, 10)` with its assignment
/// epoch 10): member-1 uses the classic protocol (its `ClassicMemberMetadata`) and holds
/// foo-0; `m2` (static `instance` when given) uses the consumer protocol and holds bar-0;
/// both reconciled at epoch 10. Offsets foo-0 and bar-0 are committed.
fn consumer_group_at_10(m2: &str, instance: Option<&str>) -> Coord {
    let mut c = Coord::new();
    c.batch(
        GROUP,
        vec![
            member_meta(GROUP, "member-1", None, &["foo", "bar"], true),
            member_meta(GROUP, m2, instance, &["foo", "bar"], false),
            partition_metadata(GROUP),
            group_epoch(GROUP, 10),
            target(GROUP, "member-1", &[(FOO.1, &[0])]),
            target(GROUP, m2, &[(BAR.1, &[0])]),
            target_epoch(GROUP, 10),
            current_with(GROUP, "member-1", (10, 9, 0), &[(FOO.1, &[0])], &[]),
            current_with(GROUP, m2, (10, 9, 0), &[(BAR.1, &[0])], &[]),
        ],
    );
    c.batch(
        GROUP,
        vec![commit(GROUP, "foo", 0, 5), commit(GROUP, "bar", 0, 6)],
    );
    c
}

/// The classic group `ClassicGroup.fromConsumerGroup` builds for the members left,
/// written by `createClassicGroupRecords`: generation = the consumer group's epoch,
/// protocol `range`, the first member added as leader (`ClassicGroup.add`), each member's
/// assignment = its target assignment.
fn downgraded(generation: i32, members: &[ClassicMember<'_>]) -> super::Spec {
    classic(GROUP, generation, members)
}

/// `GroupMetadataManagerTest.testLastConsumerProtocolMemberRebalanceTimeoutInConsumerGroup`
/// (and `ClassicGroupTest.testFromConsumerGroupWithoutJoiningMember`, the classic group
/// written): member-2, the only consumer-protocol member, heartbeats a new subscription;
/// the group goes to epoch 11 and member-2 must revoke bar-0 (UNREVOKED_PARTITIONS, bar-0
/// pending revocation); it misses its rebalance timeout and is fenced, which downgrades the
/// group: `createGroupTombstoneRecords` for both members, then the classic group at
/// generation 11 with member-1, assigned its target. The load gives that classic group, the
/// offsets kept; no finding.
/// Near miss: member-2's three tombstones missing from the downgrade (tombstones for
/// member-1 only): the target assignment metadata tombstone meets a target assignment that
/// still has member-2 (`replay(ConsumerGroupTargetAssignmentMetadataKey, null)` throws).
#[test]
fn downgrade_when_the_last_consumer_protocol_member_is_fenced() {
    let build = |both: bool| {
        let mut c = consumer_group_at_10("member-2", None);
        c.batch(
            GROUP,
            vec![
                member_meta(GROUP, "member-2", None, &["foo"], false),
                group_epoch(GROUP, 11),
                target(GROUP, "member-2", &[]),
                target_epoch(GROUP, 11),
                current_with(GROUP, "member-2", (10, 9, 1), &[], &[(BAR.1, &[0])]),
            ],
        );
        let members: &[&str] = if both {
            &["member-1", "member-2"]
        } else {
            &["member-1"]
        };
        let mut recs = consumer_tombstones(GROUP, members);
        recs.push(downgraded(
            11,
            &[cm("member-1", &["foo", "bar"], ("foo", &[0]))],
        ));
        c.batch(GROUP, recs);
        c.load()
    };
    let l = build(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 11));
    assert!(!g.simple);
    assert_eq!(epochs(g), vec![("member-1".to_string(), 11)]);
    assert_eq!(l.offsets(GROUP), vec![tp("bar", 0, 6), tp("foo", 0, 5)]);

    let l = build(false);
    l.assert_reported(Kind::GroupTombstonesIncomplete, GROUP);
}

/// `GroupMetadataManagerTest.testLastConsumerProtocolMemberSessionTimeoutInConsumerGroup`:
/// member-2 misses its session timeout in a stable group; the fencing downgrades the
/// group at once: both members' tombstones, the consumer group's, then the classic group at
/// generation 10 with member-1. The load gives it; no finding.
/// Near miss: the downgrade not taken (`validateOnlineDowngradeWithFencedMember`: the
/// downgrade policy off, or, as `testNoConversionWhenSizeExceedsClassicMaxGroupSize` sets
/// up, more members left than `group.classic.max.size`): only member-2's tombstones and the
/// bumped epoch 11 are written (`consumerGroupFenceMember`), and the group stays a consumer
/// group whose remaining member uses the classic protocol.
#[test]
fn downgrade_on_a_session_timeout_and_the_group_that_stays_without_it() {
    let mut c = consumer_group_at_10("member-2", None);
    let mut recs = consumer_tombstones(GROUP, &["member-1", "member-2"]);
    recs.push(downgraded(
        10,
        &[cm("member-1", &["foo", "bar"], ("foo", &[0]))],
    ));
    let mut downgrade = c.clone();
    downgrade.batch(GROUP, recs);
    let l = downgrade.load();
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 10));
    assert_eq!(l.offsets(GROUP).len(), 2);

    let mut recs = member_tombstones(GROUP, "member-2");
    recs.push(group_epoch(GROUP, 11));
    c.batch(GROUP, recs);
    let l = c.load();
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Consumer, 11));
    assert_eq!(epochs(g), vec![("member-1".to_string(), 10)]);
    assert_eq!(l.offsets(GROUP).len(), 2);
}

/// `GroupMetadataManagerTest.testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember`
/// (and `ClassicGroupTest.testFromConsumerGroupWithJoiningMember`): static member-2
/// (`instance-id`), the last consumer-protocol member, is replaced by a JoinGroup with the
/// same instance id. The coordinator tombstones the old member id, writes the new id (its
/// subscription, target bar-0, current assignment at epoch 0, then its classic-protocol
/// subscription and current assignment at epoch 10), then downgrades with
/// `createGroupTombstoneRecordsWithReplacedMember` — the tombstones name the joining id
/// where the leaving one was — and the classic group at generation 10 with member-1 and the
/// new id, assigned the old member's target. The load gives that classic group; no finding.
/// Near miss: the downgrade's tombstones naming the leaving id (`createGroupTombstoneRecords`
/// without the replacement): the new id's records stay, and the target assignment metadata
/// tombstone meets its target assignment: the load fails.
#[test]
fn downgrade_when_the_last_consumer_protocol_static_member_is_replaced() {
    let build = |replaced: bool| {
        let mut c = consumer_group_at_10("old-member-2", Some("instance-id"));
        let bar0: &[(&str, &[i32])] = &[(BAR.1, &[0])];
        let mut recs = member_tombstones(GROUP, "old-member-2");
        recs.extend([
            member_meta(
                GROUP,
                "new-member-2",
                Some("instance-id"),
                &["foo", "bar"],
                false,
            ),
            target(GROUP, "new-member-2", bar0),
            current_with(GROUP, "new-member-2", (0, 0, 0), bar0, &[]),
            member_meta(
                GROUP,
                "new-member-2",
                Some("instance-id"),
                &["foo", "bar"],
                true,
            ),
            current_with(GROUP, "new-member-2", (10, 0, 0), bar0, &[]),
        ]);
        let named = if replaced {
            "new-member-2"
        } else {
            "old-member-2"
        };
        recs.extend(consumer_tombstones(GROUP, &["member-1", named]));
        let new2 = ClassicMember {
            id: "new-member-2",
            instance: Some("instance-id"),
            topics: &["foo", "bar"],
            assigned: ("bar", &[0]),
        };
        recs.push(downgraded(
            10,
            &[cm("member-1", &["foo", "bar"], ("foo", &[0])), new2],
        ));
        c.batch(GROUP, recs);
        c.load()
    };
    let l = build(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 10));
    let ids: Vec<&str> = g.members.keys().map(String::as_str).collect();
    assert_eq!(ids, vec!["member-1", "new-member-2"]);
    let m = &g.members["new-member-2"];
    assert_eq!(m.instance_id.as_deref(), Some("instance-id"));
    assert_eq!(l.offsets(GROUP), vec![tp("bar", 0, 6), tp("foo", 0, 5)]);

    let l = build(false);
    l.assert_reported(Kind::GroupTombstonesIncomplete, GROUP);
}

/// `GroupMetadataManagerTest.testLastConsumerProtocolMemberLeavingConsumerGroupByAdminApi`
/// (a later trunk): four members — member-1 and static member-2 use the classic protocol,
/// member-3 and static member-4 the consumer protocol —; the admin removes members 2, 3 and
/// 4 at once (`RemoveMembersFromConsumerGroup`, member-4 by instance id), which downgrades
/// the group: the tombstones name all four members (the removed ones too), then the classic
/// group with member-1. The load gives it; no finding.
/// Near miss: tombstones for the three removed members only: member-1's records stay and the
/// target assignment metadata tombstone meets its target assignment: the load fails.
#[test]
fn downgrade_when_the_admin_removes_the_consumer_protocol_members() {
    let build = |all: bool| {
        let mut c = Coord::new();
        let ms: [(&str, Option<&str>, bool, &[i32]); 4] = [
            ("member-1", None, true, &[0]),
            ("member-2", Some("instance-2"), true, &[1]),
            ("member-3", None, false, &[2]),
            ("member-4", Some("instance-4"), false, &[3]),
        ];
        let mut recs = Vec::new();
        for (m, instance, classic, _) in ms {
            recs.push(member_meta(GROUP, m, instance, &["foo"], classic));
        }
        recs.push(group_epoch(GROUP, 10));
        for (m, _, _, p) in ms {
            recs.push(target(GROUP, m, &[(FOO.1, p)]));
        }
        recs.push(target_epoch(GROUP, 10));
        for (m, _, _, p) in ms {
            recs.push(current_with(GROUP, m, (10, 9, 0), &[(FOO.1, p)], &[]));
        }
        c.batch(GROUP, recs);
        let named: &[&str] = if all {
            &["member-1", "member-2", "member-3", "member-4"]
        } else {
            &["member-2", "member-3", "member-4"]
        };
        let mut down = consumer_tombstones(GROUP, named);
        down.push(downgraded(10, &[cm("member-1", &["foo"], ("foo", &[0]))]));
        c.batch(GROUP, down);
        c.load()
    };
    let l = build(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 10));
    assert_eq!(epochs(g), vec![("member-1".to_string(), 10)]);

    build(false).assert_reported(Kind::GroupTombstonesIncomplete, GROUP);
}
