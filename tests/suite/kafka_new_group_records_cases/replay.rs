//! `GroupMetadataManager.replay(...)` for the streams and share records (`GroupMetadataManagerTest`'s
//! `testReplayStreamsGroup*` and share cases), and the tombstone orders of
//! `StreamsGroup.createGroupTombstoneRecords`, `ShareGroup.createGroupTombstoneRecords` and
//! `GroupMetadataManager.shareGroupFenceMember`.

use super::{g, gm, load, tomb, v0};
use klogscan::finding::Kind;
use klogscan::partition::groups::{GroupState, GroupType};
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::{Value, json};

fn tasks(p: &[i32]) -> Value {
    json!([{"subtopologyId": "subtopology-1", "partitions": p}])
}

fn s_member(id: &str, m: &str) -> Spec {
    v0(
        19,
        gm(id, m),
        json!({"clientId": "c", "clientHost": "/h", "rebalanceTimeoutMs": 1000,
        "topologyEpoch": 10, "processId": format!("p-{m}"), "clientTags": []}),
    )
}
fn s_meta(id: &str, epoch: i32) -> Spec {
    v0(17, g(id), json!({"epoch": epoch, "metadataHash": 0}))
}
fn s_target(id: &str, m: &str, active: &[i32]) -> Spec {
    v0(
        21,
        gm(id, m),
        json!({"activeTasks": tasks(active), "standbyTasks": [], "warmupTasks": []}),
    )
}
fn s_target_epoch(id: &str, epoch: i32) -> Spec {
    v0(20, g(id), json!({"assignmentEpoch": epoch}))
}
fn s_current(id: &str, m: &str, epoch: i32, active: &[i32]) -> Spec {
    v0(
        22,
        gm(id, m),
        json!({"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": 0,
        "activeTasks": tasks(active), "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
        "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []}),
    )
}
fn s_topology(id: &str, epoch: i32) -> Spec {
    v0(
        23,
        g(id),
        json!({"epoch": epoch, "subtopologies": [{"subtopologyId": "subtopology-1",
        "sourceTopics": ["source-topic"], "sourceTopicRegex": [], "stateChangelogTopics": [],
        "repartitionSinkTopics": ["sink-topic"], "repartitionSourceTopics": [], "copartitionGroups": []}]}),
    )
}

/// `new StreamsGroupBuilder("foo", 10)` with a target assignment epoch of 10, member m1
/// (reconciled at epoch 10) and its target assignment, as the tests' context replays it.
fn streams_foo() -> Vec<Spec> {
    vec![
        s_topology("foo", 10),
        s_member("foo", "m1"),
        s_meta("foo", 10),
        s_target("foo", "m1", &[0, 1, 2]),
        s_target_epoch("foo", 10),
        s_current("foo", "m1", 10, &[0, 1, 2]),
    ]
}

/// `testReplayStreamsGroupMemberMetadata`, `…Metadata`, `…TargetAssignmentMember`,
/// `…TargetAssignmentMetadata`, `…CurrentMemberAssignment` and `…Topology`: each value
/// alone creates its streams group (`getOrMaybeCreatePersistedStreamsGroup(…, true)`)
/// and, for a member record, its member. No finding.
#[test]
fn each_streams_value_alone_creates_its_group() {
    let mut log = GroupLog::new();
    log.batch(vec![
        s_member("a", "member"),
        s_meta("b", 10),
        s_target("c", "m1", &[0, 1, 2]),
        s_target_epoch("d", 10),
        s_current("e", "member", 10, &[0, 1, 2]),
        s_topology("f", 12),
    ]);
    let l = load(&log);
    l.assert_clean();
    for id in ["a", "b", "c", "d", "e", "f"] {
        assert_eq!(
            l.live(id).map(|x| x.group_type),
            Some(GroupType::Streams),
            "{id}"
        );
    }
    assert_eq!(
        l.live("a").unwrap().members["member"].topology_epoch,
        Some(10)
    );
    assert_eq!(l.live("b").unwrap().epoch, 10);
    assert_eq!(l.live("c").unwrap().target_assignment["m1"].len(), 3);
    assert_eq!(l.live("d").unwrap().assignment_epoch, 10);
    assert_eq!(l.live("e").unwrap().members["member"].member_epoch, 10);
    assert_eq!(l.live("f").unwrap().topology.as_ref().unwrap().epoch, 12);
}

/// `testReplayStreamsGroupMemberMetadataTombstoneNotExisting`, `…EpochTombstoneNotExisting`,
/// `…TargetAssignmentMemberTombstoneNonExisting`, `…TargetAssignmentMetadataTombstoneNotExisting`,
/// `…CurrentMemberAssignmentTombstoneNotExisting` and `…TopologyTombstoneNotExists`: a
/// tombstone for a streams group that does not exist, or for a member the group does not
/// have, is a no-op (no group is created).
#[test]
fn streams_tombstones_for_missing_groups_or_members_are_no_ops() {
    let mut log = GroupLog::new();
    log.batch(vec![
        s_meta("foo", 10),
        tomb(19, gm("foo", "m1")),
        tomb(22, gm("foo", "m1")),
        tomb(23, g("foo")),
        tomb(19, gm("bar", "m1")),
        tomb(17, g("bar")),
        tomb(21, gm("bar", "m1")),
        tomb(20, g("bar")),
        tomb(22, gm("bar", "m1")),
        tomb(23, g("bar")),
    ]);
    let l = load(&log);
    l.assert_clean();
    assert!(l.live("foo").unwrap().members.is_empty());
    assert!(l.any("bar").is_empty(), "{:#?}", l.any("bar"));
}

/// `testReplayStreamsGroupMemberMetadataTombstoneExisting`: the member's tombstone throws
/// before its current assignment's tombstone, and again before its target assignment's;
/// after both it removes the member. The load stops at the first: one finding there.
#[test]
fn a_streams_member_tombstone_needs_its_assignments_tombstoned_first() {
    let mut log = GroupLog::new();
    log.batch(streams_foo());
    log.batch(vec![tomb(19, gm("foo", "m1"))]);
    let early = load(&log);
    let f = early.of(Kind::GroupTombstonesIncomplete);
    assert_eq!(
        (f.len(), f[0].offset),
        (1, Some(6)),
        "{:#?}",
        early.findings
    );
    assert_eq!(f[0].evidence["load_fails"], true);

    let mut log = GroupLog::new();
    log.batch(streams_foo());
    log.batch(vec![tomb(22, gm("foo", "m1")), tomb(19, gm("foo", "m1"))]);
    let no_target = load(&log);
    let f = no_target.of(Kind::GroupTombstonesIncomplete);
    assert_eq!(
        (f.len(), f[0].offset),
        (1, Some(7)),
        "{:#?}",
        no_target.findings
    );
    assert!(
        f[0].message.contains("target assignment"),
        "{}",
        f[0].message
    );

    let mut log = GroupLog::new();
    log.batch(streams_foo());
    log.batch(vec![
        tomb(22, gm("foo", "m1")),
        tomb(21, gm("foo", "m1")),
        tomb(19, gm("foo", "m1")),
    ]);
    let ok = load(&log);
    ok.assert_clean();
    assert!(ok.live("foo").unwrap().members.is_empty());
}

/// `testReplayStreamsGroupEpochTombstoneExisting` and `…TargetAssignmentMetadataTombstoneExisting`:
/// the group's tombstone throws while it has a member, and again while its target
/// assignment epoch is not -1; the target assignment metadata tombstone throws while a
/// member's target assignment remains. In `StreamsGroup.createGroupTombstoneRecords`' order
/// (current assignments, target assignments, target metadata, members, group, then the
/// topology — after the group is gone, a no-op) the group is deleted cleanly.
#[test]
fn a_streams_group_tombstone_needs_the_coordinators_order() {
    let order = |t: &[Spec]| {
        let mut log = GroupLog::new();
        log.batch(streams_foo());
        log.batch(t.to_vec());
        load(&log)
    };
    let members = order(&[tomb(17, g("foo"))]);
    assert!(
        members.of(Kind::GroupTombstonesIncomplete)[0]
            .message
            .contains("1 members"),
        "{:#?}",
        members.findings
    );
    let epoch = order(&[
        tomb(21, gm("foo", "m1")),
        tomb(22, gm("foo", "m1")),
        tomb(19, gm("foo", "m1")),
        tomb(17, g("foo")),
    ]);
    let f = epoch.of(Kind::GroupTombstonesIncomplete);
    assert_eq!(
        (f.len(), f[0].offset),
        (1, Some(9)),
        "{:#?}",
        epoch.findings
    );
    let target = order(&[tomb(20, g("foo"))]);
    assert_eq!(
        target.of(Kind::GroupTombstonesIncomplete).len(),
        1,
        "{:#?}",
        target.findings
    );

    let ok = order(&[
        tomb(22, gm("foo", "m1")),
        tomb(21, gm("foo", "m1")),
        tomb(20, g("foo")),
        tomb(19, gm("foo", "m1")),
        tomb(17, g("foo")),
        tomb(23, g("foo")),
    ]);
    ok.assert_clean();
    assert!(ok.live("foo").is_none());
    assert_eq!(ok.any("foo")[0].state, GroupState::Deleted);
}

/// `testReplayStreamsGroupCurrentMemberAssignmentTombstoneExisting` and
/// `…TopologyTombstoneExists`: the current assignment's tombstone keeps the member at
/// epoch -1/-1 with no tasks; the topology's tombstone clears the group's topology.
#[test]
fn streams_current_assignment_and_topology_tombstones_reset_their_state() {
    let mut log = GroupLog::new();
    log.batch(streams_foo());
    log.batch(vec![tomb(22, gm("foo", "m1")), tomb(23, g("foo"))]);
    let l = load(&log);
    l.assert_clean();
    let foo = l.live("foo").unwrap();
    let m = &foo.members["m1"];
    assert_eq!((m.member_epoch, m.previous_member_epoch), (-1, -1));
    assert!(m.assigned.is_empty() && m.pending_revocation.is_empty());
    assert!(foo.topology.is_none());
}
