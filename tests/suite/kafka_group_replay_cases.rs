//! The new group coordinator's replay of `__consumer_offsets` (Kafka 4.x
//! `GroupCoordinatorShard.replay` → `GroupMetadataManager.replay(...)` /
//! `OffsetMetadataManager.replay`), reproduced as partitions on disk: the `testReplay*`
//! cases of the group coordinator's `GroupMetadataManagerTest` and
//! `GroupCoordinatorShardTest` for consumer groups (KIP-848), the record sequences its
//! heartbeat tests expect for an online upgrade (classic → consumer) and downgrade
//! (consumer → classic), the tombstone order of `ConsumerGroup.createGroupTombstoneRecords`
//! (group deletion and expiration) and what the replay throws on when that order is broken,
//! and how the loader (`CoordinatorLoaderImpl`) hands a batch's producer id to
//! `OffsetMetadataManager.replay`.
//!
//! Kafka sources read: apache/kafka trunk of 2024-10 and a trunk import of 2025-10
//! (`group-coordinator/src/main/java/org/apache/kafka/coordinator/group/*.java`,
//! `coordinator-common/.../runtime/CoordinatorLoaderImpl.java`). Only facts are written here.
#![cfg(feature = "testkit")]

use base64::Engine;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::groups::{
    Group, GroupState, GroupType, GroupsOptions, list_groups, replay_partition_dir,
};
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};
use std::path::Path;

const NOW: i64 = klogscan::testkit::scenario::DEFAULT_START_MS + 86_400_000;
const GROUP: &str = "group-id";
/// Topic ids of `foo` and `bar` (Kafka's URL-safe base64).
const FOO: &str = "AAAAAAAAAAAAAAAAAAAAAQ";
const BAR: &str = "AAAAAAAAAAAAAAAAAAAAAg";

fn opts() -> ScanOptions {
    ScanOptions::default().with_now_ms(NOW)
}

fn scan(dir: &Path) -> ScanReport {
    request::run(&Request::new([dir]).with_options(opts()))
        .unwrap()
        .report
}

fn groups_of(dir: &Path) -> Vec<Group> {
    let inv = request::discover(&[dir.to_path_buf()], &opts()).unwrap();
    let all = GroupsOptions {
        include_deleted: true,
        ..Default::default()
    };
    list_groups(&inv, &all)
}

/// The log's groups (deleted ones included) and the scan's report.
fn load(log: &GroupLog) -> (Vec<Group>, ScanReport) {
    let d = tempfile::tempdir().unwrap();
    log.write(d.path(), 0).unwrap();
    (groups_of(d.path()), scan(d.path()))
}

fn group_findings(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| {
            matches!(
                f.kind,
                Kind::GroupLoadFailure
                    | Kind::GroupDeletionUnfinished
                    | Kind::GroupTombstonesIncomplete
                    | Kind::GroupEpochRegression
            )
        })
        .collect()
}

fn assert_clean(r: &ScanReport) {
    let serious: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .collect();
    assert!(group_findings(r).is_empty(), "{:#?}", group_findings(r));
    assert!(serious.is_empty(), "{serious:#?}");
}

fn live<'a>(groups: &'a [Group], id: &str) -> Option<&'a Group> {
    groups
        .iter()
        .find(|g| g.group_id == id && g.state == GroupState::Live)
}

fn offsets(g: &Group) -> Vec<(String, i32, i64)> {
    let mut v: Vec<_> = g
        .offsets
        .iter()
        .map(|c| (c.topic.clone(), c.partition, c.offset))
        .collect();
    v.sort();
    v
}

fn g(id: &str) -> Value {
    json!({ "groupId": id })
}

fn gm(id: &str, m: &str) -> Value {
    json!({ "groupId": id, "memberId": m })
}

fn commit(id: &str, topic: &str, partition: i32, offset: i64) -> Spec {
    (
        1,
        json!({"group": id, "topic": topic, "partition": partition}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": -1, "commitTimestamp": 1}),
        )),
    )
}

fn commit_tombstone(id: &str, topic: &str, partition: i32) -> Spec {
    (
        1,
        json!({"group": id, "topic": topic, "partition": partition}),
        None,
    )
}

fn tombstone(t: i16, key: Value) -> Spec {
    (t, key, None)
}

/// `[(topic id, partitions)]` as a record's topic-partition list.
fn parts(list: &[(&str, &[i32])]) -> Value {
    Value::Array(
        list.iter()
            .map(|(t, p)| json!({"topicId": t, "partitions": p}))
            .collect(),
    )
}

fn member_metadata(id: &str, m: &str, topics: &[&str]) -> Spec {
    (
        5,
        gm(id, m),
        Some((
            0,
            json!({"clientId": "client-id", "clientHost": "client-host", "subscribedTopicNames": topics,
                   "rebalanceTimeoutMs": 5000, "serverAssignor": "range"}),
        )),
    )
}

fn group_epoch(id: &str, epoch: i32) -> Spec {
    (3, g(id), Some((0, json!({"epoch": epoch}))))
}

fn target_member(id: &str, m: &str, p: &[(&str, &[i32])]) -> Spec {
    (
        7,
        gm(id, m),
        Some((0, json!({"topicPartitions": parts(p)}))),
    )
}

fn target_epoch(id: &str, epoch: i32) -> Spec {
    (6, g(id), Some((0, json!({"assignmentEpoch": epoch}))))
}

fn current(id: &str, m: &str, epoch: i32, prev: i32, state: i8, p: &[(&str, &[i32])]) -> Spec {
    (
        8,
        gm(id, m),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": prev, "state": state,
                   "assignedPartitions": parts(p), "partitionsPendingRevocation": []}),
        )),
    )
}

fn partition_metadata(id: &str) -> Spec {
    (
        4,
        g(id),
        Some((
            0,
            json!({"topics": [
                {"topicId": FOO, "topicName": "foo", "numPartitions": 1, "partitionMetadata": []},
                {"topicId": BAR, "topicName": "bar", "numPartitions": 1, "partitionMetadata": []}]}),
        )),
    )
}

/// The consumer protocol's subscription (version 0: topics, null user data), base64.
fn subscription(topics: &[&str]) -> String {
    let mut b = 0i16.to_be_bytes().to_vec();
    b.extend((topics.len() as i32).to_be_bytes());
    for t in topics {
        b.extend((t.len() as i16).to_be_bytes());
        b.extend(t.as_bytes());
    }
    b.extend((-1i32).to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The consumer protocol's assignment (version 0: one partition of each topic, null user
/// data), base64.
fn assignment(topics: &[&str]) -> String {
    let mut b = 0i16.to_be_bytes().to_vec();
    b.extend((topics.len() as i32).to_be_bytes());
    for t in topics {
        b.extend((t.len() as i16).to_be_bytes());
        b.extend(t.as_bytes());
        b.extend(1i32.to_be_bytes());
        b.extend(0i32.to_be_bytes());
    }
    b.extend((-1i32).to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A classic group record (value version 3) of protocol type `consumer`, protocol
/// `range`, with `members` (each subscribed to foo and bar, assigned foo-0 and bar-0).
fn classic(id: &str, generation: i32, members: &[&str]) -> Spec {
    let ms: Vec<Value> = members
        .iter()
        .map(|m| {
            json!({"memberId": m, "clientId": "client-id", "clientHost": "client-host",
                   "rebalanceTimeout": 10000, "sessionTimeout": 5000,
                   "subscription": subscription(&["foo", "bar"]), "assignment": assignment(&["foo", "bar"])})
        })
        .collect();
    let (protocol, leader) = match members.first() {
        Some(m) => (json!("range"), json!(m)),
        None => (Value::Null, Value::Null),
    };
    (
        2,
        json!({"group": id}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": generation, "protocol": protocol,
                   "leader": leader, "currentStateTimestamp": 1, "members": ms}),
        )),
    )
}

/// A consumer group at epoch 10 with members m1 (foo-0) and m2 (bar-0), reconciled (as
/// `testLastConsumerProtocolMemberLeavingConsumerGroup` builds it), and two offsets.
fn consumer_group_at_10(log: &mut GroupLog, id: &str) {
    log.batch(vec![
        member_metadata(id, "m1", &["foo"]),
        member_metadata(id, "m2", &["foo", "bar"]),
        partition_metadata(id),
        group_epoch(id, 10),
        target_member(id, "m1", &[(FOO, &[0])]),
        target_member(id, "m2", &[(BAR, &[0])]),
        target_epoch(id, 10),
        current(id, "m1", 10, 9, 0, &[(FOO, &[0])]),
        current(id, "m2", 10, 9, 0, &[(BAR, &[0])]),
    ]);
    log.batch(vec![commit(id, "foo", 0, 100), commit(id, "bar", 0, 200)]);
}

/// `ConsumerGroup.createGroupTombstoneRecords` for members m1 and m2: current assignments,
/// target assignment members, target assignment metadata, member subscriptions, the
/// subscription (partition) metadata, the group epoch.
fn consumer_tombstones(id: &str) -> Vec<Spec> {
    vec![
        tombstone(8, gm(id, "m1")),
        tombstone(8, gm(id, "m2")),
        tombstone(7, gm(id, "m1")),
        tombstone(7, gm(id, "m2")),
        tombstone(6, g(id)),
        tombstone(5, gm(id, "m1")),
        tombstone(5, gm(id, "m2")),
        tombstone(4, g(id)),
        tombstone(3, g(id)),
    ]
}

/// `GroupMetadataManagerTest.testConsumerGroupHeartbeatWithStableClassicGroup` (online
/// upgrade, `GroupMetadataManager.convertToConsumerGroup`): a stable classic group with
/// member 1 and committed offsets; a consumer-protocol member 2 joins and the coordinator
/// writes the classic group's tombstone, then the consumer group built from it at epoch 0
/// (member 1's subscription, epoch, target assignment, its epoch, member 1's current
/// assignment at epoch 0), then member 2's join at epoch 1. The replay removes the classic
/// group (`replay(GroupMetadataKey, null)` → `removeGroup`), creates the consumer group
/// from its first record (`getOrMaybeCreatePersistedConsumerGroup`), and the offsets —
/// kept by `OffsetMetadataManager` per group id — stay. No finding.
#[test]
fn online_upgrade_from_classic_to_consumer_group() {
    let mut log = GroupLog::new();
    log.batch(vec![classic(GROUP, 1, &["member-id-1"])]);
    log.batch(vec![
        commit(GROUP, "foo", 0, 10),
        commit(GROUP, "bar", 0, 20),
    ]);
    log.batch(vec![
        tombstone(2, json!({"group": GROUP})),
        member_metadata(GROUP, "member-id-1", &["foo", "bar"]),
        group_epoch(GROUP, 0),
        target_member(GROUP, "member-id-1", &[(FOO, &[0]), (BAR, &[0])]),
        target_epoch(GROUP, 0),
        current(GROUP, "member-id-1", 0, 0, 0, &[(FOO, &[0]), (BAR, &[0])]),
        member_metadata(GROUP, "member-id-2", &["foo", "bar"]),
        partition_metadata(GROUP),
        group_epoch(GROUP, 1),
        target_member(GROUP, "member-id-2", &[(BAR, &[0])]),
        target_member(GROUP, "member-id-1", &[(FOO, &[0])]),
        target_epoch(GROUP, 1),
        // Member 2 waits for bar-0, which member 1 still holds (UNRELEASED_PARTITIONS).
        current(GROUP, "member-id-2", 1, 0, 2, &[]),
    ]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    let c = live(&groups, GROUP).expect("the consumer group is live");
    assert_eq!(c.group_type, GroupType::Consumer);
    assert_eq!((c.epoch, c.assignment_epoch), (1, 1));
    let epochs: Vec<(&str, i32)> = c
        .members
        .values()
        .map(|m| (m.member_id.as_str(), m.member_epoch))
        .collect();
    assert_eq!(epochs, vec![("member-id-1", 0), ("member-id-2", 1)]);
    assert_eq!(
        offsets(c),
        vec![("bar".into(), 0, 20), ("foo".into(), 0, 10)]
    );
}

/// `GroupMetadataManagerTest.testLastConsumerProtocolMemberLeavingConsumerGroup` (online
/// downgrade, `GroupMetadataManager.convertToClassicGroup`): the last consumer-protocol
/// member of a consumer group at epoch 10 leaves; the coordinator writes the consumer
/// group's tombstones (`createGroupTombstoneRecords`) and then the classic group
/// (`ClassicGroup.fromConsumerGroup`: generation = the group epoch, the remaining
/// classic-protocol member). The replay deletes the consumer group in order and loads the
/// classic group; offsets stay. No finding.
#[test]
fn online_downgrade_from_consumer_to_classic_group() {
    let mut log = GroupLog::new();
    consumer_group_at_10(&mut log, GROUP);
    let mut downgrade = consumer_tombstones(GROUP);
    downgrade.push(classic(GROUP, 10, &["m1"]));
    log.batch(downgrade);
    let (groups, r) = load(&log);
    assert_clean(&r);
    let c = live(&groups, GROUP).expect("the classic group is live");
    assert_eq!(c.group_type, GroupType::Classic);
    assert!(!c.simple);
    assert_eq!(c.epoch, 10);
    assert_eq!(c.members.keys().collect::<Vec<_>>(), vec!["m1"]);
    assert_eq!(
        offsets(c),
        vec![("bar".into(), 0, 200), ("foo".into(), 0, 100)]
    );
}

/// `GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`: a classic group
/// value puts a classic group in place of whatever the id holds, a live consumer group
/// included (no type check, no exception). A consumer record after it, on the other hand,
/// meets a classic group that is not simple: `getOrMaybeCreatePersistedConsumerGroup`
/// throws "Group … is not a consumer group", a tombstone as much as a value (the
/// exception is not `GroupIdNotFoundException`, which only a missing group raises).
#[test]
fn a_classic_record_replaces_a_consumer_group_and_consumer_records_after_it_fail() {
    let mut base = GroupLog::new();
    consumer_group_at_10(&mut base, GROUP);
    base.batch(vec![classic(GROUP, 3, &["m1"])]);
    let (groups, r) = load(&base);
    assert!(
        !group_findings(&r)
            .iter()
            .any(|f| f.kind == Kind::GroupLoadFailure),
        "{:#?}",
        group_findings(&r)
    );
    let c = live(&groups, GROUP).expect("live");
    assert_eq!((c.group_type, c.epoch), (GroupType::Classic, 3));

    for after in [
        current(GROUP, "m1", 11, 10, 0, &[(FOO, &[0])]),
        tombstone(8, gm(GROUP, "m2")),
    ] {
        let mut log = base.clone();
        log.batch(vec![after]);
        let (_, r) = load(&log);
        let f: Vec<_> = group_findings(&r)
            .into_iter()
            .filter(|f| f.kind == Kind::GroupLoadFailure)
            .collect();
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].offset, Some(12), "{f:#?}");
        assert_eq!(f[0].evidence["existing_group_type"], "classic");
    }
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupMetadataTombstone`,
/// `…PartitionMetadataTombstone`, `…TargetAssignmentMemberTombstone`,
/// `…TargetAssignmentMetadataTombstone`, `…MemberMetadataTombstone` and
/// `…CurrentMemberAssignmentTombstone` (`GroupCoordinatorShardTest.testReplay*WithNullValue`
/// dispatch to them): a consumer-group tombstone for a group that does not exist is a no-op
/// (no group is created), and a member tombstone for a member the group does not have is
/// one too.
#[test]
fn consumer_tombstones_for_unknown_groups_and_members_are_no_ops() {
    let mut log = GroupLog::new();
    log.batch(vec![
        tombstone(3, g("bar")),
        tombstone(4, g("bar")),
        tombstone(7, gm("bar", "m1")),
        tombstone(6, g("bar")),
        tombstone(5, gm("bar", "m1")),
        tombstone(8, gm("bar", "m1")),
    ]);
    log.batch(vec![group_epoch("foo", 10)]);
    log.batch(vec![
        tombstone(5, gm("foo", "m1")),
        tombstone(8, gm("foo", "m1")),
    ]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    assert!(!groups.iter().any(|g| g.group_id == "bar"), "{groups:#?}");
    let foo = live(&groups, "foo").expect("foo is live");
    assert_eq!((foo.group_type, foo.epoch), (GroupType::Consumer, 10));
    assert!(foo.members.is_empty());
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupMetadata`, `…PartitionMetadata`,
/// `…TargetAssignmentMember`, `…TargetAssignmentMetadata`, `…MemberMetadata` and
/// `…CurrentMemberAssignment`: each value alone creates its consumer group (and member).
/// A member's current assignment at epoch 10 in a group whose epochs the log never set is
/// what that test replays: no finding.
#[test]
fn each_consumer_value_alone_creates_its_group() {
    let mut log = GroupLog::new();
    log.batch(vec![
        group_epoch("g3", 10),
        partition_metadata("g4"),
        member_metadata("g5", "member", &["foo"]),
        target_epoch("g6", 10),
        target_member("g7", "m1", &[(FOO, &[0, 1, 2])]),
        current("g8", "member", 10, 9, 2, &[(FOO, &[0, 1, 2])]),
    ]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    for id in ["g3", "g4", "g5", "g6", "g7", "g8"] {
        let x = live(&groups, id).unwrap_or_else(|| panic!("{id} not created"));
        assert_eq!(x.group_type, GroupType::Consumer, "{id}");
    }
    assert_eq!(live(&groups, "g3").unwrap().epoch, 10);
    assert_eq!(live(&groups, "g6").unwrap().assignment_epoch, 10);
    assert!(live(&groups, "g5").unwrap().members.contains_key("member"));
    assert_eq!(
        live(&groups, "g7").unwrap().target_assignment["m1"].len(),
        3
    );
    assert_eq!(
        live(&groups, "g8").unwrap().members["member"].member_epoch,
        10
    );
}

/// `GroupCoordinatorShardTest.testDeleteGroups` with `OffsetMetadataManager.deleteAllOffsets`
/// and `ConsumerGroup.createGroupTombstoneRecords`: offsets first, then the consumer group's
/// tombstones in the coordinator's order. The group is deleted; no finding.
#[test]
fn consumer_group_deleted_in_the_coordinators_order() {
    let mut log = GroupLog::new();
    consumer_group_at_10(&mut log, GROUP);
    let mut del = vec![
        commit_tombstone(GROUP, "foo", 0),
        commit_tombstone(GROUP, "bar", 0),
    ];
    del.extend(consumer_tombstones(GROUP));
    log.batch(del);
    let (groups, r) = load(&log);
    assert_clean(&r);
    assert!(live(&groups, GROUP).is_none());
    let d = groups
        .iter()
        .find(|g| g.group_id == GROUP && g.state == GroupState::Deleted)
        .expect("listed as deleted");
    assert_eq!(d.group_type, GroupType::Consumer);
    assert!(d.offsets.is_empty());
}

/// `GroupMetadataManager.replay(ConsumerGroupMemberMetadataKey, null)`,
/// `replay(ConsumerGroupTargetAssignmentMetadataKey, null)` and
/// `replay(ConsumerGroupMetadataKey, null)` throw on tombstones out of
/// `createGroupTombstoneRecords`' order: a member tombstoned before its current assignment
/// (epoch not -1), a member tombstoned while its target assignment remains, the target
/// assignment metadata tombstoned while target members remain, the group tombstoned while
/// members remain. Each fails the load at that record.
#[test]
fn tombstones_out_of_the_coordinators_order_fail_the_load() {
    let cases: Vec<(&str, Vec<Spec>)> = vec![
        (
            "member before its current assignment",
            vec![tombstone(5, gm(GROUP, "m1"))],
        ),
        (
            "member before its target assignment",
            vec![tombstone(8, gm(GROUP, "m1")), tombstone(5, gm(GROUP, "m1"))],
        ),
        (
            "target metadata before target members",
            vec![tombstone(8, gm(GROUP, "m1")), tombstone(6, g(GROUP))],
        ),
        ("group before members", vec![tombstone(3, g(GROUP))]),
    ];
    for (what, tail) in cases {
        let mut log = GroupLog::new();
        consumer_group_at_10(&mut log, GROUP);
        let n = tail.len() as i64;
        log.batch(tail);
        let (_, r) = load(&log);
        let f = group_findings(&r);
        let at = 11 + n - 1;
        assert!(
            f.iter().any(|f| f.kind == Kind::GroupTombstonesIncomplete
                && f.offset == Some(at)
                && f.evidence["load_fails"] == true),
            "{what}: {f:#?}"
        );
    }
}

/// `GroupMetadataManager.getOrMaybeCreatePersistedConsumerGroup` replaces a *simple* classic
/// group (created by `OffsetMetadataManager.replay` for offsets committed without a group)
/// with a new consumer group even for a tombstone (`createIfNotExists` = false only
/// matters when no group exists). A consumer group metadata tombstone for such an id
/// therefore meets a fresh consumer group whose target assignment epoch is 0, not -1
/// (`ModernGroup`), and throws ("did not receive ConsumerGroupTargetAssignmentMetadataValue
/// tombstone"). With the target assignment metadata tombstone first, both load.
#[test]
fn a_consumer_group_tombstone_over_a_simple_group() {
    let mut log = GroupLog::new();
    log.batch(vec![commit(GROUP, "foo", 0, 5)]);
    log.batch(vec![tombstone(3, g(GROUP))]);
    let (_, r) = load(&log);
    let f = group_findings(&r);
    assert!(
        f.iter().any(|f| f.kind == Kind::GroupTombstonesIncomplete
            && f.offset == Some(1)
            && f.evidence["load_fails"] == true),
        "{f:#?}"
    );

    let mut ok = GroupLog::new();
    ok.batch(vec![commit(GROUP, "foo", 0, 5)]);
    ok.batch(vec![
        commit_tombstone(GROUP, "foo", 0),
        tombstone(6, g(GROUP)),
        tombstone(3, g(GROUP)),
    ]);
    let (groups, r) = load(&ok);
    assert_clean(&r);
    assert!(live(&groups, GROUP).is_none(), "{groups:#?}");
}

/// `GroupCoordinatorShardTest.testCleanupGroupMetadata` (`cleanupExpiredOffsets` then
/// `maybeDeleteGroup`): an empty classic group whose offsets expired: the offset tombstone,
/// then the group's tombstone. The group is deleted, no offset left, no finding.
#[test]
fn expired_offsets_then_the_empty_classic_group_deleted() {
    let mut log = GroupLog::new();
    log.batch(vec![classic(GROUP, 5, &[])]);
    log.batch(vec![commit(GROUP, "topic", 0, 7)]);
    log.batch(vec![
        commit_tombstone(GROUP, "topic", 0),
        tombstone(2, json!({"group": GROUP})),
    ]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    assert!(live(&groups, GROUP).is_none());
    let d = groups
        .iter()
        .find(|g| g.group_id == GROUP)
        .expect("listed as deleted");
    assert_eq!(d.state, GroupState::Deleted);
    assert!(d.offsets.is_empty());
}

/// The same expiration for an empty consumer group (`ConsumerGroup.isEmpty`, all members
/// gone): `maybeDeleteGroup` writes `createGroupTombstoneRecords` of a group without
/// members: target assignment metadata, subscription metadata, group epoch. No finding.
#[test]
fn expired_offsets_then_the_empty_consumer_group_deleted() {
    let mut log = GroupLog::new();
    consumer_group_at_10(&mut log, GROUP);
    // Both members leave (current assignment, target member, member; new epoch 11).
    log.batch(vec![
        tombstone(8, gm(GROUP, "m1")),
        tombstone(7, gm(GROUP, "m1")),
        tombstone(5, gm(GROUP, "m1")),
        tombstone(8, gm(GROUP, "m2")),
        tombstone(7, gm(GROUP, "m2")),
        tombstone(5, gm(GROUP, "m2")),
        group_epoch(GROUP, 11),
        target_epoch(GROUP, 11),
    ]);
    log.batch(vec![
        commit_tombstone(GROUP, "foo", 0),
        commit_tombstone(GROUP, "bar", 0),
        tombstone(6, g(GROUP)),
        tombstone(4, g(GROUP)),
        tombstone(3, g(GROUP)),
    ]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    assert!(live(&groups, GROUP).is_none());
}

/// `GroupMetadataManager.getOrMaybeCreatePersistedShareGroup` (4.x): a share group record
/// for an id held by any other group — a simple classic group too — throws "Group … is not
/// a share group" (only consumer groups may replace a simple group).
#[test]
fn a_share_record_for_a_simple_group_fails_the_load() {
    let mut log = GroupLog::new();
    log.batch(vec![commit(GROUP, "foo", 0, 5)]);
    log.batch(vec![(11, g(GROUP), Some((0, json!({"epoch": 1}))))]);
    let (_, r) = load(&log);
    let f = group_findings(&r);
    assert!(
        f.iter().any(|f| f.kind == Kind::GroupLoadFailure
            && f.offset == Some(1)
            && f.evidence["existing_is_simple"] == true),
        "{f:#?}"
    );
}

/// `CoordinatorRecordSerde.deserialize` (KAFKA-18672, `UnknownRecordVersionException`):
/// a consumer group value of a version the schema does not define (only 0) is not skipped
/// the way an unknown record type is (`GroupCoordinatorShardTest.testReplayWithUnsupportedVersion`
/// / `CoordinatorLoaderImpl` catches only `UnknownRecordTypeException`): the load fails.
#[test]
fn a_consumer_group_value_of_an_unknown_version_fails_the_load() {
    let (k, _) = record(3, g(GROUP), None);
    // Version 1, then the version-0 body (epoch 7, no tagged fields).
    let mut v = 1i16.to_be_bytes().to_vec();
    v.extend(7i32.to_be_bytes());
    v.push(0);
    let mut log = GroupLog::new();
    log.raw(vec![(k, Some(v))]);
    let (_, r) = load(&log);
    assert!(
        r.findings
            .iter()
            .any(|f| f.kind == Kind::OffsetsRecordUndecodable && f.offset == Some(0)),
        "{:#?}",
        r.findings
    );
    assert!(
        group_findings(&r)
            .iter()
            .any(|f| f.kind == Kind::GroupLoadFailure && f.offset == Some(0)),
        "{:#?}",
        group_findings(&r)
    );
}

/// `CoordinatorLoaderImpl` hands every batch's producer id to `GroupCoordinatorShard.replay`,
/// and `OffsetMetadataManager.replay` keeps an offset commit pending whenever that id is
/// not `NO_PRODUCER_ID` (-1) — it does not look at the batch's transactional flag. An
/// offset commit in an *idempotent*, non-transactional batch (producer id 7; what a
/// producer with the admin client id `__admin_client`, allowed to write internal topics,
/// sends by default) is therefore held pending by the 4.x load and never applied (no marker
/// ever comes for it): a stable OffsetFetch gets UNSTABLE_OFFSET_COMMIT. Kafka 3.x
/// (`GroupMetadataManager.doLoadGroupsAndOffsets`) tests `batch.isTransactional` and applies
/// it. With the release unknown the replay keeps the 3.x reading (applied, as the record
/// says) and `group_offset_commit_in_idempotent_batch` says what 4.x does, one finding per
/// group and producer id at its first commit.
fn idempotent_commits(p: &mut PartitionBuilder, producer: Producer, commits: &[(&str, i32, i64)]) {
    let recs: Vec<Rec> = commits
        .iter()
        .map(|(t, n, o)| {
            let (k, v) = record(
                1,
                json!({"group": GROUP, "topic": t, "partition": n}),
                Some((
                    3,
                    json!({"offset": o, "leaderEpoch": -1, "commitTimestamp": 1}),
                )),
            );
            Rec::kv(k, v.unwrap())
        })
        .collect();
    let mut b = Batch::new(producer);
    for r in recs {
        b = b.record(r);
    }
    p.append(b);
}

fn idempotent_findings(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::GroupOffsetCommitInIdempotentBatch)
        .collect()
}

#[test]
fn an_idempotent_batch_s_offset_commits_stay_pending_in_kafka_4() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("__consumer_offsets", 0);
    idempotent_commits(
        &mut p,
        Producer::idempotent(7, 0),
        &[("foo", 0, 42), ("foo", 1, 9)],
    );
    idempotent_commits(&mut p, Producer::idempotent(7, 0), &[("bar", 0, 5)]);
    p.write(d.path()).unwrap();
    // The 3.x reading: applied, nothing pending as a transaction.
    let groups = groups_of(d.path());
    let g = live(&groups, GROUP).expect("the simple group exists");
    assert_eq!(
        offsets(g),
        vec![
            ("bar".to_string(), 0, 5),
            ("foo".to_string(), 0, 42),
            ("foo".to_string(), 1, 9)
        ]
    );
    let inv = request::discover(&[d.path().to_path_buf()], &opts()).unwrap();
    let replay = replay_partition_dir(&inv.partitions[0], None, 0);
    assert_eq!(replay.pending_commits().count(), 0);
    // The 4.x reading, said once for the group and producer, at its first commit.
    let r = scan(d.path());
    let f = idempotent_findings(&r);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!((f[0].offset, f[0].severity), (Some(0), Severity::Warning));
    assert_eq!(f[0].evidence["producer_id"], 7);
    assert_eq!(f[0].evidence["pending_count"], 3);
    assert_eq!(f[0].evidence["group"], GROUP);
    assert_eq!(
        f[0].evidence["pending_offsets"][0],
        json!({"topic": "foo", "partition": 0, "offset": 42, "record_offset": 0})
    );
    assert!(
        f[0].broker_behaviour.contains("Kafka 4.x"),
        "{}",
        f[0].broker_behaviour
    );
    assert!(
        f[0].broker_behaviour.contains("Kafka 3.x"),
        "{}",
        f[0].broker_behaviour
    );
    assert!(
        f[0].client_error
            .as_deref()
            .unwrap_or_default()
            .contains("UNSTABLE_OFFSET_COMMIT"),
        "{:?}",
        f[0].client_error
    );
}

/// The negative twins: commits in batches without a producer id (the coordinator's own,
/// id -1) and in a transaction's batch are no such case; a tombstone of the key
/// (`OffsetMetadataManager.replay` drops the key's pending offsets) and a marker of the
/// producer id (`replayEndTransactionMarker`) end what a 4.x load held pending.
#[test]
fn commits_without_a_producer_id_or_cleared_later_are_not_stuck() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("__consumer_offsets", 0);
    idempotent_commits(&mut p, Producer::PLAIN, &[("foo", 0, 1)]);
    idempotent_commits(&mut p, Producer::transactional(8, 0), &[("foo", 1, 2)]);
    p.commit(Producer::transactional(8, 0), 0);
    // Producer 7's commit to foo-2, then the key's tombstone.
    idempotent_commits(&mut p, Producer::idempotent(7, 0), &[("foo", 2, 3)]);
    let (k, _) = record(
        1,
        json!({"group": GROUP, "topic": "foo", "partition": 2}),
        None,
    );
    p.append(Batch::new(Producer::PLAIN).record(Rec::tombstone(k)));
    // Producer 9's commit, then a marker of producer id 9.
    idempotent_commits(&mut p, Producer::idempotent(9, 0), &[("bar", 0, 4)]);
    p.abort(Producer::transactional(9, 0), 0);
    p.write(d.path()).unwrap();
    let r = scan(d.path());
    assert!(
        idempotent_findings(&r).is_empty(),
        "{:#?}",
        idempotent_findings(&r)
    );
}

/// `OffsetMetadataManager.replay` creates the simple classic group for a transactional
/// offset commit's group when it replays the pending value, before any marker, so an ABORT
/// (`replayEndTransactionMarker`, which only drops the pending offsets) leaves the group in
/// place, empty. `GroupCoordinatorShard.replay` passes the producer id only to offset
/// commits: a consumer-group record in the same transactional batch is applied at once,
/// whatever the marker says.
#[test]
fn an_aborted_transaction_leaves_its_simple_group_and_its_group_records() {
    let mut log = GroupLog::new();
    log.txn_batch(
        5,
        vec![commit("txn-group", "foo", 0, 3), group_epoch("cg", 4)],
    );
    log.marker(5, false);
    let (groups, r) = load(&log);
    assert!(group_findings(&r).is_empty(), "{:#?}", group_findings(&r));
    let s = live(&groups, "txn-group").expect("the simple group stays");
    assert!(s.simple && s.offsets.is_empty(), "{s:#?}");
    let cg = live(&groups, "cg").expect("applied without waiting for the marker");
    assert_eq!((cg.group_type, cg.epoch), (GroupType::Consumer, 4));
}

/// The finding travels in a bundle (the replay's anomalies are in the partition's cluster
/// inputs): `collect` + `merge` give the scan's report byte for byte.
#[test]
fn an_idempotent_batch_finding_is_the_same_after_collect_and_merge() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("__consumer_offsets", 0);
    idempotent_commits(&mut p, Producer::idempotent(7, 0), &[("foo", 0, 42)]);
    p.write(d.path()).unwrap();
    let dirs = [d.path().to_path_buf()];
    let scanned = klogscan::pipeline::scan(&dirs, &ScanOptions::default());
    assert_eq!(idempotent_findings(&scanned).len(), 1);
    let out = tempfile::tempdir().unwrap();
    let f = out.path().join("b.klb");
    let w = std::fs::File::create(&f).unwrap();
    klogscan::bundle::collect(&dirs, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
    let merged = klogscan::bundle::merge(&[f], &ScanOptions::default()).unwrap();
    assert_eq!(
        crate::common::json(scanned),
        crate::common::json(merged.report)
    );
}
