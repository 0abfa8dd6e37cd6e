//! An empty group of one protocol given to the other: no conversion, the old group is
//! deleted and a new one created (`GroupMetadataManager.maybeDeleteEmptyClassicGroup`,
//! `maybeDeleteEmptyConsumerGroup`).

use super::{GROUP, classic, classic_typed, cm, current_with, epochs, member_meta};
use crate::kafka_groupaudit_cases::{
    Coord, classic_tombstone, commit, g, group_epoch, target, target_epoch, tombstone, tp,
};
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::Spec;

/// The records of `testConsumerGroupHeartbeatWithEmptyClassicGroup`'s heartbeat after the
/// classic group's tombstone: the new member's subscription, group epoch 1, its (empty)
/// target assignment, target epoch 1, its current assignment (Stable at epoch 1).
fn first_member_joins() -> Vec<Spec> {
    vec![
        member_meta(GROUP, "member-id", None, &["foo", "bar"], false),
        group_epoch(GROUP, 1),
        target(GROUP, "member-id", &[]),
        target_epoch(GROUP, 1),
        current_with(GROUP, "member-id", (1, 0, 0), &[], &[]),
    ]
}

/// `GroupMetadataManagerTest.testConsumerGroupHeartbeatWithEmptyClassicGroup`: the group
/// record of an Empty classic group created without a protocol type (written with protocol
/// type "", loaded as a simple group), offsets committed to it, then a consumer-protocol
/// heartbeat: `getOrMaybeCreateConsumerGroup` finds an empty classic group, writes its
/// tombstone and a new consumer group. The load gives a consumer group at epoch 1 with the
/// member and the group id's offsets; no finding.
/// Near misses, both without the tombstone: the simple group gives way to the consumer
/// group (`getOrMaybeCreatePersistedConsumerGroup` replaces a simple classic group) and
/// nothing is found; an empty group of protocol type `consumer` is not simple, and the
/// first consumer record fails the load ("Group … is not a consumer group").
#[test]
fn an_empty_classic_group_is_deleted_for_a_new_consumer_group() {
    let build = |protocol_type: &str, tombstone: bool| {
        let mut c = Coord::new();
        c.batch(GROUP, vec![classic_typed(GROUP, protocol_type, 0, &[])]);
        c.batch(GROUP, vec![commit(GROUP, "foo", 0, 42)]);
        let mut recs = Vec::new();
        if tombstone {
            recs.push(classic_tombstone(GROUP));
        }
        recs.extend(first_member_joins());
        c.batch(GROUP, recs);
        c.load()
    };
    for (protocol_type, tombstone) in [("", true), ("consumer", true), ("", false)] {
        let l = build(protocol_type, tombstone);
        l.assert_no_alarm();
        l.assert_no_group_finding();
        let c = l.group(GROUP);
        assert_eq!((c.group_type, c.epoch), (GroupType::Consumer, 1));
        assert_eq!(epochs(c), vec![("member-id".to_string(), 1)]);
        assert_eq!(l.offsets(GROUP), vec![tp("foo", 0, 42)]);
    }

    let l = build("consumer", false);
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
    assert_eq!(l.group(GROUP).group_type, GroupType::Classic);
}

/// `GroupMetadataManagerTest.testClassicGroupJoinWithEmptyConsumerGroup`: an empty consumer
/// group as `ConsumerGroupBuilder(groupId, 10)` writes it (group epoch 10, target
/// assignment epoch 0), an offset, then a JoinGroup: `maybeDeleteEmptyConsumerGroup` writes
/// the target assignment metadata, subscription metadata and group epoch tombstones, and
/// once the rebalance completes the classic group's record (generation 1, the joined
/// member). The load deletes the consumer group in the order its tombstones require and
/// gives the classic group with the offset; no finding.
/// Near miss: without the target assignment metadata tombstone, the group's tombstone meets
/// a target assignment epoch that is not -1 (`replay(ConsumerGroupMetadataKey, null)`
/// throws "did not receive ConsumerGroupTargetAssignmentMetadataValue tombstone").
#[test]
fn an_empty_consumer_group_is_deleted_for_a_new_classic_group() {
    let build = |target_tombstone: bool| {
        let mut c = Coord::new();
        c.batch(GROUP, vec![group_epoch(GROUP, 10), target_epoch(GROUP, 0)]);
        c.batch(GROUP, vec![commit(GROUP, "bar", 3, 99)]);
        let mut recs = Vec::new();
        if target_tombstone {
            recs.push(tombstone(6, g(GROUP)));
        }
        recs.extend([tombstone(4, g(GROUP)), tombstone(3, g(GROUP))]);
        c.batch(GROUP, recs);
        let joined = [cm("member-id", &["bar"], ("bar", &[3]))];
        c.batch(GROUP, vec![classic(GROUP, 1, &joined)]);
        c.load()
    };
    let l = build(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let c = l.group(GROUP);
    assert_eq!((c.group_type, c.epoch), (GroupType::Classic, 1));
    assert!(!c.simple);
    assert_eq!(c.members.keys().collect::<Vec<_>>(), vec!["member-id"]);
    assert_eq!(l.offsets(GROUP), vec![tp("bar", 3, 99)]);

    let l = build(false);
    l.assert_reported(Kind::GroupTombstonesIncomplete, GROUP);
    let f = l.verdict.scan.findings.iter();
    let f: Vec<_> = f
        .filter(|f| f.kind == Kind::GroupTombstonesIncomplete)
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].evidence["load_fails"], true);
}
