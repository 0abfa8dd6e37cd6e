//! What the group metadata records of the 2026-08 trunk carry as a load replays them: the
//! metadata hash that replaced the consumer group's partition metadata (KIP-848's
//! `SubscriptionMetadata` → `MetadataHash`, KAFKA-17747), and the KIP-1331 topology
//! description epochs of a streams group's metadata.

use crate::kafka_groupaudit_cases::{
    Coord, FOO_ID, current, g, group_epoch, member, partition_metadata, target, target_epoch,
    tombstone,
};
use crate::kafka_streams_cases as streams;
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupState;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

const GROUP: &str = "fooup";
const HASH: i64 = 0x1234_5678_9abc;

/// `GroupMetadataManagerTest.testSubscriptionUpgradeToMetadataHash`: a group written by
/// `ConsumerGroupBuilder(fooup, 10)` (member at 10 holding foo 0–5, target at 10) and the
/// old `ConsumerGroupPartitionMetadata` (type 4) record; the next heartbeat writes the group
/// epoch 11 with the topics' metadata hash, the type 4 tombstone, the target assignment
/// metadata at 11 and the member's current assignment at 11. The load
/// (`replay(ConsumerGroupMetadataKey, …)` sets epoch and hash; the type 4 tombstone of an
/// existing group is ignored): group epoch 11, hash, target at 11, the member at 11 with
/// its six partitions. klogscan: the same, no finding. Near miss: the heartbeat's target
/// assignment metadata record missing: the member at 11 is above the target epoch 10
/// (`group_epoch_regression`).
#[test]
fn an_upgrade_to_the_metadata_hash_loads_at_the_new_epoch() {
    let all: &[i32] = &[0, 1, 2, 3, 4, 5];
    let build = |with_target: bool| {
        let mut c = Coord::new();
        c.batch(
            GROUP,
            vec![
                member(GROUP, "m1"),
                group_epoch(GROUP, 10),
                target(GROUP, "m1", &[(FOO_ID, all)]),
                target_epoch(GROUP, 10),
                current(GROUP, "m1", 10, 9, 0, &[(FOO_ID, all)]),
            ],
        );
        c.batch(GROUP, vec![partition_metadata(GROUP)]);
        let hashed: Spec = (
            3,
            g(GROUP),
            Some((0, json!({"epoch": 11, "metadataHash": HASH}))),
        );
        let mut heartbeat = vec![hashed, tombstone(4, g(GROUP))];
        if with_target {
            let v = json!({"assignmentEpoch": 11, "assignmentTimestamp": 1_700_000_000_000i64});
            heartbeat.push((6, g(GROUP), Some((0, v))));
        }
        heartbeat.push(current(GROUP, "m1", 11, 10, 0, &[(FOO_ID, all)]));
        c.batch(GROUP, heartbeat);
        c.load()
    };
    let l = build(true);
    let grp = l.group(GROUP);
    assert_eq!(
        (grp.epoch, grp.metadata_hash, grp.assignment_epoch),
        (11, HASH, 11)
    );
    let m = &grp.members["m1"];
    assert_eq!(
        (m.member_epoch, m.previous_member_epoch, m.assigned.len()),
        (11, 10, 6)
    );
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: no target assignment metadata at 11.
    let l = build(false);
    assert_eq!(l.group(GROUP).assignment_epoch, 10);
    l.assert_reported(Kind::GroupEpochRegression, GROUP);
}

/// `GroupMetadataManagerTest.testStreamsGroupMetadataReplayRoundTripsTopologyDescriptionEpochs`
/// (KIP-1331): the streams group metadata's stored and failed description epochs (tags 2
/// and 3) are what the latest record says: 7 and 5, then -1 and -1 (the defaults, absent
/// from the bytes) overwrite them. klogscan: the same two epochs after each record, no
/// finding. Near miss: the second record without the stored epoch's tag but with -2 (the
/// deletion barrier) — the latest wins there too: stored -2 (and the deletion it marks
/// reported as unfinished).
#[test]
fn the_latest_streams_metadata_sets_both_description_epochs() {
    let meta = |epoch: i32, stored: i32, failed: i32| -> Spec {
        let mut v = json!({"epoch": epoch, "metadataHash": 0, "validatedTopologyEpoch": -1});
        if stored != -1 {
            v["storedDescriptionTopologyEpoch"] = json!(stored);
        }
        if failed != -1 {
            v["failedDescriptionTopologyEpoch"] = json!(failed);
        }
        (17, g("streams-group"), Some((0, v)))
    };
    let mut c = Coord::new();
    c.batch("streams-group", vec![meta(1, 7, 5)]);
    let l = c.load();
    let d = &l.group("streams-group").description;
    assert_eq!((d.stored, d.failed), (7, 5));
    l.assert_no_group_finding();
    c.batch("streams-group", vec![meta(2, -1, -1)]);
    let l = c.load();
    let grp = l.group("streams-group");
    assert_eq!(
        (grp.epoch, grp.description.stored, grp.description.failed),
        (2, -1, -1)
    );
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the latest record says -2.
    let mut c = Coord::new();
    c.batch("streams-group", vec![meta(1, 7, 5), meta(2, -2, -1)]);
    c.batch(
        "streams-group",
        vec![streams::target_epoch("streams-group", 2)],
    );
    let l = c.load();
    let grp = l
        .groups
        .iter()
        .find(|g| g.group_id == "streams-group")
        .unwrap();
    assert_eq!(grp.state, GroupState::DeletionUnfinished);
    assert_eq!((grp.description.stored, grp.description.failed), (-2, -1));
    l.assert_reported(Kind::GroupDeletionUnfinished, "streams-group");
}
