//! `GroupMetadataManager.replay(...)` for the share group records (types 10–15) and the
//! record orders the coordinator writes for a share group: a member joining and being
//! fenced (`shareGroupFenceMember`), the group deleted (`ShareGroup.createGroupTombstoneRecords`).

use super::{BAR, FOO, g, gm, load, tomb, v0};
use klogscan::finding::Kind;
use klogscan::partition::groups::{GroupState, GroupType};
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::json;

fn member(id: &str, m: &str) -> Spec {
    v0(
        10,
        gm(id, m),
        json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["foo"]}),
    )
}
fn epoch(id: &str, e: i32) -> Spec {
    v0(11, g(id), json!({"epoch": e, "metadataHash": 2}))
}
fn target(id: &str, m: &str) -> Spec {
    v0(
        13,
        gm(id, m),
        json!({"topicPartitions": [{"topicId": FOO, "partitions": [0, 1, 2]}]}),
    )
}
fn target_epoch(id: &str, e: i32) -> Spec {
    v0(12, g(id), json!({"assignmentEpoch": e}))
}
fn current(id: &str, m: &str, e: i32) -> Spec {
    v0(
        14,
        gm(id, m),
        json!({"memberEpoch": e, "previousMemberEpoch": e - 1, "state": 0,
        "assignedPartitions": [{"topicId": FOO, "partitions": [0, 1, 2]}]}),
    )
}
fn state_metadata(id: &str) -> Spec {
    v0(
        15,
        g(id),
        json!({"initializingTopics": [], "initializedTopics": [{"topicId": FOO, "topicName": "foo", "partitions": [0, 1, 2]}],
        "deletingTopics": [{"topicId": BAR, "topicName": "bar"}]}),
    )
}

/// Two members join share group `sg` (the heartbeat's order: subscription, group epoch,
/// target assignment, its epoch, current assignment); both are assigned the same three
/// partitions of foo, as a share group's assignor does (a share partition has no single
/// owner), and the share-partition state is initialized.
fn two_members() -> GroupLog {
    let mut log = GroupLog::new();
    log.batch(vec![
        member("sg", "m1"),
        epoch("sg", 1),
        target("sg", "m1"),
        target_epoch("sg", 1),
        current("sg", "m1", 1),
    ]);
    log.batch(vec![state_metadata("sg")]);
    log.batch(vec![
        member("sg", "m2"),
        epoch("sg", 2),
        target("sg", "m1"),
        target("sg", "m2"),
        target_epoch("sg", 2),
    ]);
    log.batch(vec![current("sg", "m2", 2), current("sg", "m1", 2)]);
    log
}

/// `GroupMetadataManagerTest.testShareGroupRecordsNoExceptionOnReplay`: each share record
/// (member metadata, group metadata, target assignment metadata and member, current
/// assignment, state partition metadata) replayed alone on an empty coordinator throws
/// nothing; each creates its share group (`getOrMaybeCreatePersistedShareGroup(…, true)`).
#[test]
fn each_share_record_alone_replays_and_creates_its_group() {
    let mut log = GroupLog::new();
    log.batch(vec![
        member("a", "m"),
        epoch("b", 2),
        target_epoch("c", 5),
        target("d", "m"),
        current("e", "m", 5),
        state_metadata("f"),
    ]);
    let l = load(&log);
    l.assert_clean();
    for id in ["a", "b", "c", "d", "e", "f"] {
        assert_eq!(
            l.live(id).map(|x| x.group_type),
            Some(GroupType::Share),
            "{id}"
        );
    }
}

/// A healthy share group: two members sharing partitions, one fenced in
/// `GroupMetadataManager.shareGroupFenceMember`'s order (current assignment, target
/// assignment and subscription tombstones, then the group epoch bumped), then the group
/// deleted in `ShareGroup.createGroupTombstoneRecords`' order (current assignments, target
/// assignments, target metadata, subscriptions, state partition metadata, group epoch):
/// no finding, and the group is deleted.
#[test]
fn a_share_group_lifecycle_in_the_coordinators_order_is_clean() {
    let mut log = two_members();
    log.batch(vec![
        tomb(14, gm("sg", "m2")),
        tomb(13, gm("sg", "m2")),
        tomb(10, gm("sg", "m2")),
        epoch("sg", 3),
    ]);
    let live = load(&log);
    live.assert_clean();
    let sg = live.live("sg").unwrap();
    assert_eq!(
        (sg.epoch, sg.members.len(), sg.target_assignment.len()),
        (3, 1, 1)
    );

    log.batch(vec![
        tomb(14, gm("sg", "m1")),
        tomb(13, gm("sg", "m1")),
        tomb(12, g("sg")),
        tomb(10, gm("sg", "m1")),
        tomb(15, g("sg")),
        tomb(11, g("sg")),
    ]);
    let gone = load(&log);
    gone.assert_clean();
    assert_eq!(
        gone.any("sg").iter().map(|x| x.state).collect::<Vec<_>>(),
        [GroupState::Deleted]
    );
}

/// `GroupMetadataManagerTest.testShareGroupDeleteTombstones`: an empty share group at
/// epoch 10 is deleted by its target assignment metadata, state partition metadata and
/// epoch tombstones. No finding.
#[test]
fn an_empty_share_group_is_deleted_by_three_tombstones() {
    let mut log = GroupLog::new();
    log.batch(vec![
        epoch("sg", 10),
        target_epoch("sg", 10),
        state_metadata("sg"),
    ]);
    log.batch(vec![
        tomb(12, g("sg")),
        tomb(15, g("sg")),
        tomb(11, g("sg")),
    ]);
    let l = load(&log);
    l.assert_clean();
    assert!(l.live("sg").is_none());
}

/// `GroupMetadataManager.replay(ShareGroupMemberMetadataKey, null)` throws for a member
/// whose epoch is not -1 ("… with invalid leave group epoch"), `replay(ShareGroupTargetAssignmentMetadataKey, null)`
/// while a member's target assignment remains, and `replay(ShareGroupMetadataKey, null)`
/// while the target assignment still has members — unlike a streams group's tombstone,
/// which does not look at its target assignment.
#[test]
fn share_tombstones_out_of_order_fail_the_load() {
    let case = |t: Vec<Spec>, want: &str| {
        let mut log = two_members();
        log.batch(t);
        let l = load(&log);
        let f = l.of(Kind::GroupTombstonesIncomplete);
        assert_eq!(f.len(), 1, "{want}: {:#?}", l.findings);
        assert!(f[0].message.contains(want), "{}", f[0].message);
        assert_eq!(f[0].evidence["load_fails"], true);
    };
    case(
        vec![tomb(10, gm("sg", "m2"))],
        "current assignment was not tombstoned",
    );
    case(
        vec![tomb(14, gm("sg", "m2")), tomb(10, gm("sg", "m2"))],
        "target assignment was not tombstoned",
    );
    case(vec![tomb(12, g("sg"))], "still has 2 members");
}

/// The group tombstone's target-assignment check, share against streams: after the target
/// assignment metadata's tombstone (epoch -1) a target assignment value of a member that
/// never joined arrives. `replay(ShareGroupMetadataKey, null)` then throws ("… the target
/// assignment still has 1 members"); `replay(StreamsGroupMetadataKey, null)` checks only
/// members and the target assignment epoch, and removes the group.
#[test]
fn a_leftover_target_assignment_blocks_a_share_group_tombstone_only() {
    let mut share = GroupLog::new();
    share.batch(vec![
        epoch("sg", 1),
        tomb(12, g("sg")),
        target("sg", "m3"),
        tomb(11, g("sg")),
    ]);
    let l = load(&share);
    let f = l.of(Kind::GroupTombstonesIncomplete);
    assert_eq!((f.len(), f[0].offset), (1, Some(3)), "{:#?}", l.findings);
    assert!(
        f[0].message
            .contains("target assignment still has 1 members"),
        "{}",
        f[0].message
    );

    let mut streams = GroupLog::new();
    let tasks = json!([{"subtopologyId": "0", "partitions": [0]}]);
    streams.batch(vec![
        v0(17, g("st"), json!({"epoch": 1, "metadataHash": 0})),
        tomb(20, g("st")),
        v0(
            21,
            gm("st", "m3"),
            json!({"activeTasks": tasks, "standbyTasks": [], "warmupTasks": []}),
        ),
        tomb(17, g("st")),
    ]);
    let l = load(&streams);
    // The load goes through; klogscan's own end-of-log check still points at m3's target
    // assignment, which stays live after the tombstone (compaction would keep it).
    let f = l.group_findings();
    assert!(
        f.iter().all(|f| f.evidence["load_fails"] == false),
        "{f:#?}"
    );
    assert!(l.of(Kind::GroupLoadFailure).is_empty());
    assert!(l.live("st").is_none());
}

/// `GroupMetadataManager.replay(ShareGroupStatePartitionMetadataKey, …)`: a tombstone for a
/// group that does not exist is ignored (no group created); a value or a tombstone for a
/// group of another type throws from `getOrMaybeCreatePersistedShareGroup` ("Group cg is not
/// a share group", an `IllegalStateException` the replay does not catch).
#[test]
fn share_state_partition_metadata_for_missing_or_foreign_groups() {
    let mut log = GroupLog::new();
    log.batch(vec![tomb(15, g("nobody"))]);
    let l = load(&log);
    l.assert_clean();
    assert!(l.groups.is_empty(), "{:#?}", l.groups);

    for last in [state_metadata("cg"), tomb(15, g("cg"))] {
        let mut log = GroupLog::new();
        log.batch(vec![v0(3, g("cg"), json!({"epoch": 1})), last]);
        let l = load(&log);
        let f = l.of(Kind::GroupLoadFailure);
        assert_eq!((f.len(), f[0].offset), (1, Some(1)), "{:#?}", l.findings);
        assert_eq!(l.live("cg").unwrap().group_type, GroupType::Consumer);
    }
}
