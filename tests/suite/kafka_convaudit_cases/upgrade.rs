//! Online upgrades (`GroupMetadataManager.convertToConsumerGroup`): a classic group with
//! members meets its first consumer-protocol member.

use super::{
    BAR, ClassicMember, FOO, GROUP, classic, cm, current_with, epochs, member_meta,
    member_tombstones,
};
use crate::kafka_groupaudit_cases::{
    Coord, classic_tombstone, commit, group_epoch, offset_tombstone, partition_metadata, target,
    target_epoch, tp,
};
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::Spec;

/// `convertToConsumerGroup`'s records for a classic group at `generation` with `members`:
/// the classic group's tombstone (`ClassicGroup.createGroupTombstoneRecords`), then
/// `ConsumerGroup.fromClassicGroup` written by `createConsumerGroupRecords` — every
/// member's subscription (with its `ClassicMemberMetadata`), the group epoch = the
/// generation, each member's target assignment = its classic assignment, the target
/// assignment epoch = the generation, each member's current assignment (Stable at the
/// generation).
pub(super) fn conversion(group: &str, generation: i32, members: &[ClassicMember<'_>]) -> Vec<Spec> {
    let id_of = |name: &str| if name == FOO.0 { FOO.1 } else { BAR.1 };
    let mut v = vec![classic_tombstone(group)];
    for m in members {
        v.push(member_meta(group, m.id, m.instance, m.topics, true));
    }
    v.push(group_epoch(group, generation));
    for m in members {
        v.push(target(group, m.id, &[(id_of(m.assigned.0), m.assigned.1)]));
    }
    v.push(target_epoch(group, generation));
    for m in members {
        let held = [(id_of(m.assigned.0), m.assigned.1)];
        v.push(current_with(
            group,
            m.id,
            (generation, generation, 0),
            &held,
            &[],
        ));
    }
    v
}

/// The classic group of the PreparingRebalance and CompletingRebalance tests: member-id-1
/// holds foo-0 and foo-1, member-id-2 holds bar-0, both subscribed to foo and bar.
fn two_members() -> [ClassicMember<'static>; 2] {
    [
        cm("member-id-1", &["foo", "bar"], ("foo", &[0, 1])),
        cm("member-id-2", &["foo", "bar"], ("bar", &[0])),
    ]
}

/// Member 3 (consumer protocol) joins the converted group: its subscription, the
/// subscription metadata computed anew, the group epoch bumped to `epoch`, the new targets
/// of members 1 and 3, the target epoch, member 3's current assignment
/// (UNRELEASED_PARTITIONS: foo-1 is still member 1's).
fn member_3_joins(epoch: i32) -> Vec<Spec> {
    vec![
        member_meta(GROUP, "member-id-3", None, &["foo", "bar"], false),
        partition_metadata(GROUP),
        group_epoch(GROUP, epoch),
        target(GROUP, "member-id-1", &[(FOO.1, &[0])]),
        target(GROUP, "member-id-3", &[(FOO.1, &[1])]),
        target_epoch(GROUP, epoch),
        current_with(GROUP, "member-id-3", (epoch, epoch - 1, 2), &[], &[]),
    ]
}

/// The classic group at `generation` with offsets foo-0, foo-1 and bar-0 committed.
fn classic_with_offsets(generation: i32) -> Coord {
    let mut c = Coord::new();
    c.batch(GROUP, vec![classic(GROUP, generation, &two_members())]);
    c.batch(
        GROUP,
        vec![
            commit(GROUP, "foo", 0, 10),
            commit(GROUP, "foo", 1, 11),
            commit(GROUP, "bar", 0, 20),
        ],
    );
    c
}

/// `GroupMetadataManagerTest.testConsumerGroupHeartbeatWithPreparingRebalanceClassicGroup`
/// (and `ConsumerGroupTest.testFromClassicGroup`, the group that conversion builds): a
/// classic group of generation 0 rebalancing (its leader rejoined: in memory only, the log
/// holds its Stable record) meets member 3's heartbeat; the coordinator writes the classic
/// tombstone, the consumer group at epoch 0 with members 1 and 2, then member 3's join at
/// epoch 1, in one batch. The load gives a consumer group at epoch 1 with the three
/// members and the three offsets committed to the classic group; no finding.
/// Near miss: the group deleted instead (`DeleteGroups`: the offsets' tombstones, then the
/// group's) and the same consumer group created: it loads the same, without an offset.
#[test]
fn upgrade_of_a_rebalancing_classic_group_keeps_its_offsets() {
    let mut c = classic_with_offsets(0);
    let mut recs = conversion(GROUP, 0, &two_members());
    recs.extend(member_3_joins(1));
    c.batch(GROUP, recs.clone());
    let l = c.load();
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!(g.group_type, GroupType::Consumer);
    assert_eq!((g.epoch, g.assignment_epoch), (1, 1));
    let want = [("member-id-1", 0), ("member-id-2", 0), ("member-id-3", 1)];
    let want: Vec<(String, i32)> = want.iter().map(|(m, e)| (m.to_string(), *e)).collect();
    assert_eq!(epochs(g), want);
    assert_eq!(g.members["member-id-1"].assigned.len(), 2);
    assert!(g.members["member-id-3"].assigned.is_empty());
    assert_eq!(
        g.target_assignment["member-id-2"],
        g.members["member-id-2"].assigned
    );
    assert_eq!(
        l.offsets(GROUP),
        vec![tp("bar", 0, 20), tp("foo", 0, 10), tp("foo", 1, 11)]
    );
    // The live consumer group stands for the id: the removed classic group is not listed.
    assert!(l.deleted(GROUP).is_none());

    let mut deleted = classic_with_offsets(0);
    let mut recs = vec![
        offset_tombstone(GROUP, "foo", 0),
        offset_tombstone(GROUP, "foo", 1),
        offset_tombstone(GROUP, "bar", 0),
    ];
    recs.extend(conversion(GROUP, 0, &two_members()));
    recs.extend(member_3_joins(1));
    deleted.batch(GROUP, recs);
    let l = deleted.load();
    l.assert_no_group_finding();
    assert_eq!(l.group(GROUP).group_type, GroupType::Consumer);
    assert!(l.offsets(GROUP).is_empty());
}

/// `GroupMetadataManagerTest.testConsumerGroupHeartbeatWithCompletingRebalanceClassicGroup`:
/// a classic group of generation 1 waiting for its SyncGroup meets member 3's heartbeat;
/// the conversion completes the pending joins and syncs with REBALANCE_IN_PROGRESS, so no
/// classic record follows it: the consumer group at epoch 1, then member 3's join at
/// epoch 2. The load gives a consumer group at epoch 2; no finding.
/// Near miss: a classic group record of generation 2 after the conversion (what a sync the
/// conversion had not cancelled would write) replaces the consumer group
/// (`replay(GroupMetadataKey, GroupMetadataValue)` puts a classic group in place of any),
/// and member 3's next heartbeat record then meets a classic group with members:
/// `getOrMaybeCreatePersistedConsumerGroup` throws, the load fails.
#[test]
fn upgrade_of_a_classic_group_completing_its_rebalance() {
    let mut c = classic_with_offsets(1);
    let mut recs = conversion(GROUP, 1, &two_members());
    recs.extend(member_3_joins(2));
    c.batch(GROUP, recs);
    let l = c.load();
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!(
        (g.group_type, g.epoch, g.assignment_epoch),
        (GroupType::Consumer, 2, 2)
    );
    assert_eq!(g.members["member-id-1"].member_epoch, 1);
    assert_eq!(l.offsets(GROUP).len(), 3);

    let mut late = c.clone();
    late.batch(GROUP, vec![classic(GROUP, 2, &two_members())]);
    late.batch(
        GROUP,
        vec![current_with(
            GROUP,
            "member-id-3",
            (2, 2, 0),
            &[(FOO.1, &[1])],
            &[],
        )],
    );
    let l = late.load();
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 2));
}

/// `GroupMetadataManagerTest.testConsumerGroupHeartbeatToClassicGroupFromExistingStaticMember`:
/// the classic group's only member is static (`instance-id`, foo-0); it rejoins with the
/// consumer protocol under a new member id. The coordinator converts the group (the static
/// member at epoch 0), replaces the member (`replaceMember`: the old id's current
/// assignment, target and subscription tombstoned, the new id's written with the old
/// assignment at the old epoch), then bumps the group to epoch 1 with the new member's
/// consumer-protocol subscription (its `ClassicMemberMetadata` gone). The load gives a
/// consumer group at epoch 1 whose one member is the new id, static, holding foo-0; no
/// finding. Near miss: the replacement without the old id's tombstones: the new id's
/// current assignment claims foo-0, which the old id holds at the same epoch 0
/// (`ConsumerGroup.updateMember` → `addPartitionEpochs` throws): the load fails.
#[test]
fn upgrade_by_a_static_member_rejoining_under_a_new_id() {
    let old = [ClassicMember {
        id: "member-id",
        instance: Some("instance-id"),
        topics: &["foo"],
        assigned: ("foo", &[0]),
    }];
    let foo0: &[(&str, &[i32])] = &[(FOO.1, &[0])];
    let replacement = |tombstones: bool| {
        let mut c = Coord::new();
        c.batch(
            GROUP,
            vec![classic(GROUP, 0, &old), commit(GROUP, "foo", 0, 7)],
        );
        let mut recs = conversion(GROUP, 0, &old);
        if tombstones {
            recs.extend(member_tombstones(GROUP, "member-id"));
        }
        recs.extend([
            member_meta(GROUP, "new-member-id", Some("instance-id"), &["foo"], true),
            target(GROUP, "new-member-id", foo0),
            current_with(GROUP, "new-member-id", (0, 0, 0), foo0, &[]),
            member_meta(GROUP, "new-member-id", Some("instance-id"), &["foo"], false),
            partition_metadata(GROUP),
            group_epoch(GROUP, 1),
            target(GROUP, "new-member-id", foo0),
            target_epoch(GROUP, 1),
            current_with(GROUP, "new-member-id", (1, 0, 0), foo0, &[]),
        ]);
        c.batch(GROUP, recs);
        c.load()
    };
    let l = replacement(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Consumer, 1));
    assert_eq!(epochs(g), vec![("new-member-id".to_string(), 1)]);
    let m = &g.members["new-member-id"];
    assert_eq!(m.instance_id.as_deref(), Some("instance-id"));
    assert_eq!(m.assigned, vec![format!("{}:0", FOO.1)]);
    assert_eq!(l.offsets(GROUP), vec![tp("foo", 0, 7)]);

    let l = replacement(false);
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
}

/// `GroupMetadataManagerTest.testConsumerGroupHeartbeatToClassicGroupWithEmptyAssignmentMember`
/// (a later trunk): member 1 joined the classic group and the rebalance completed at
/// generation 1, but it never synced, so the group record holds its assignment as no
/// bytes; member 2 (consumer protocol) then converts the group: member 1 with an empty
/// target and current assignment at epoch 1, member 2 at epoch 2. The load reads the empty
/// assignment as none and gives the consumer group at epoch 2; no finding.
/// Near miss: without the classic group's tombstone the first consumer record meets the
/// classic group (it has a member: not simple) and the load fails.
#[test]
fn upgrade_of_a_classic_group_whose_member_never_synced() {
    let build = |with_tombstone: bool| {
        let (t, k, v) = classic(GROUP, 1, &[cm("member-1", &["foo"], ("foo", &[]))]);
        let (version, mut v) = v.unwrap();
        v["members"][0]["assignment"] = serde_json::json!("");
        let mut c = Coord::new();
        c.batch(GROUP, vec![(t, k, Some((version, v)))]);
        let mut recs = conversion(GROUP, 1, &[cm("member-1", &["foo"], ("foo", &[]))]);
        if !with_tombstone {
            recs.remove(0);
        }
        recs.extend([
            member_meta(GROUP, "member-2", None, &["foo"], false),
            group_epoch(GROUP, 2),
            target(GROUP, "member-2", &[]),
            target_epoch(GROUP, 2),
            current_with(GROUP, "member-2", (2, 0, 0), &[], &[]),
        ]);
        c.batch(GROUP, recs);
        c.load()
    };
    let l = build(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Consumer, 2));
    let want = vec![("member-1".to_string(), 1), ("member-2".to_string(), 2)];
    assert_eq!(epochs(g), want);
    assert!(g.members["member-1"].assigned.is_empty());

    build(false).assert_reported(Kind::GroupLoadFailure, GROUP);
}
