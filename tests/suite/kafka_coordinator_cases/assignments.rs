//! `__consumer_offsets`: the members' current assignments of consumer and streams groups,
//! as the 4.x coordinator's load keeps who holds each partition or active task
//! (`ConsumerGroupTest` / `StreamsGroupTest` of the group coordinator: `updateMember` with
//! `addPartitionEpochs` / `addTaskProcessId`), and the target assignment epoch a modern
//! group starts with (`ModernGroup`'s `TimelineInteger`).

use super::groups::*;
use super::*;
use klogscan::finding::Kind;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::{Value, json};

const TOPIC: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

/// The current assignment (type 8) of `member` at `epoch`: `assigned` and `pending`
/// (revocation) partitions of [`TOPIC`].
fn current(member: &str, epoch: i32, assigned: &[i32], pending: &[i32]) -> Spec {
    let parts = |p: &[i32]| -> Value {
        if p.is_empty() {
            json!([])
        } else {
            json!([{"topicId": TOPIC, "partitions": p}])
        }
    };
    (
        8,
        json!({"groupId": GROUP, "memberId": member}),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": 0,
                   "assignedPartitions": parts(assigned), "partitionsPendingRevocation": parts(pending)}),
        )),
    )
}

/// The load failures of the report (the findings whose record the load throws on).
fn load_failures(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .collect()
}

/// `ConsumerGroupTest.testUpdatingMemberUpdatesPartitionEpochWhenPartitionIsNotReleased`:
/// m2's current assignment names foo-1 while m1 still holds it, at the same epoch 10 —
/// `addPartitionEpochs` throws, in every 4.x release (KAFKA-19862 accepts only a claim at
/// a higher epoch). At epoch 11 (a newer claim) only the releases before KAFKA-19862
/// throw; the finding says which. The partition still held as pending revocation clashes
/// the same way (the field is read).
#[test]
fn a_partition_still_held_by_another_member_fails_the_load() {
    for (m1, m2_epoch, scope) in [
        (current("m1", 10, &[1], &[]), 10, "kafka_4"),
        (
            current("m1", 10, &[1], &[]),
            11,
            "kafka_4_before_kafka_19862",
        ),
        (
            current("m1", 10, &[0], &[1]),
            11,
            "kafka_4_before_kafka_19862",
        ),
    ] {
        let mut log = GroupLog::new();
        log.batch(vec![m1]);
        log.batch(vec![current("m2", m2_epoch, &[1], &[])]);
        let (groups, r) = load(&log);
        let f = load_failures(&r);
        assert_eq!(f.len(), 1, "{:#?}", r.findings);
        let (f, e) = (f[0], &f[0].evidence);
        assert_eq!(f.offset, Some(1));
        assert_eq!(
            e["kafka_message"],
            format!(
                "Cannot set the epoch of {TOPIC}-1 to {m2_epoch} because the partition is still owned at epoch 10"
            )
        );
        assert_eq!(e["load_fails_in"], scope, "{f:#?}");
        assert_eq!(
            (
                e["member_id"].as_str(),
                e["claims"][0]["holder_member"].as_str()
            ),
            (Some("m2"), Some("m1"))
        );
        let before_fix_only = scope != "kafka_4";
        assert_eq!(
            f.broker_behaviour
                .contains("Releases with KAFKA-19862 load it"),
            before_fix_only,
            "{}",
            f.broker_behaviour
        );
        assert_eq!(
            f.message.contains("releases with it accept"),
            before_fix_only,
            "{}",
            f.message
        );
        // The replay goes on with m2 as the holder (what the releases that load it keep).
        let g = live(&groups).unwrap();
        assert_eq!(g.members["m2"].assigned, [format!("{TOPIC}:1")]);
    }
}

/// The hand-overs the coordinator writes load clean: `ConsumerGroupTest.
/// testUpdatingMemberUpdatesPartitionEpochWhenPartitionIsReassignedBeforeBeingRevoked`
/// (foo-1 pending revocation at epoch 10, assigned again to the same member at 11), a
/// partition taken once its holder's next assignment (or its tombstone) let it go, and
/// the testkit's consumer group (m1 gives partition 1 up before m2 names it). Share
/// groups track no holder (a share partition is shared): two members on one partition
/// load clean. A group deleted and created again starts with no holder.
#[test]
fn partitions_handed_over_in_the_coordinators_order_load_clean() {
    let mut log = GroupLog::new();
    log.batch(vec![current("m1", 10, &[], &[1])]);
    log.batch(vec![current("m1", 11, &[1], &[])]);
    log.batch(vec![current("m1", 12, &[0], &[])]);
    log.batch(vec![current("m2", 12, &[1], &[])]);
    log.batch(vec![(8, json!({"groupId": GROUP, "memberId": "m2"}), None)]);
    log.batch(vec![current("m3", 13, &[1], &[])]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    let g = live(&groups).unwrap();
    assert_eq!(g.members["m3"].assigned, [format!("{TOPIC}:1")]);
    assert!(g.members["m2"].assigned.is_empty());

    let mut log = GroupLog::new();
    log.batch(vec![current("m1", 10, &[0], &[1])]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    let m1 = &live(&groups).unwrap().members["m1"];
    assert_eq!(m1.pending_revocation, [format!("{TOPIC}:1")]);

    let mut log = GroupLog::new();
    klogscan::testkit::group_scenarios::consumer_group(&mut log, GROUP);
    let (groups, r) = load(&log);
    assert_clean(&r);
    let g = live(&groups).unwrap();
    assert_eq!(g.members["m1"].assigned, [format!("{TOPIC}:0")]);

    let share = |m: &str| -> Spec {
        (
            14,
            json!({"groupId": "sg", "memberId": m}),
            Some((
                0,
                json!({"memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
                       "assignedPartitions": [{"topicId": TOPIC, "partitions": [0, 1]}]}),
            )),
        )
    };
    // Their member metadata first, as the coordinator writes it (a current assignment
    // for a group the load does not hold yet throws in Kafka 4.0, before KAFKA-19453).
    let joined = |m: &str| -> Spec {
        (
            10,
            json!({"groupId": "sg", "memberId": m}),
            Some((
                0,
                json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["foo"]}),
            )),
        )
    };
    let mut log = GroupLog::new();
    log.batch(vec![joined("s1"), joined("s2"), share("s1"), share("s2")]);
    assert_clean(&load(&log).1);

    let mut log = GroupLog::new();
    log.batch(vec![current("m1", 10, &[1], &[])]);
    log.batch(vec![
        (8, json!({"groupId": GROUP, "memberId": "m1"}), None),
        (6, json!({"groupId": GROUP}), None),
        (5, json!({"groupId": GROUP, "memberId": "m1"}), None),
        (3, json!({"groupId": GROUP}), None),
    ]);
    log.batch(vec![current("m2", 1, &[1], &[])]);
    assert_clean(&load(&log).1);
}

/// The streams group's records of member `m` of process `process` (`None`: no member
/// metadata) holding `active` and `standby` tasks of subtopology "sub" at epoch 1.
fn streams_member(m: &str, process: Option<&str>, active: &[i32], standby: &[i32]) -> Vec<Spec> {
    let key = json!({"groupId": "app", "memberId": m});
    let tasks = |p: &[i32]| -> Value {
        if p.is_empty() {
            json!([])
        } else {
            json!([{"subtopologyId": "sub", "partitions": p}])
        }
    };
    let mut out = Vec::new();
    if let Some(p) = process {
        out.push(metadata(m, p));
    }
    out.push((
        22,
        key,
        Some((
            0,
            json!({"memberEpoch": 1, "previousMemberEpoch": 0, "state": 0, "activeTasks": tasks(active),
                   "standbyTasks": tasks(standby), "warmupTasks": [], "activeTasksPendingRevocation": [],
                   "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []}),
        )),
    ));
    out
}

/// A streams member's metadata (type 19) with its process id.
fn metadata(m: &str, process: &str) -> Spec {
    (
        19,
        json!({"groupId": "app", "memberId": m}),
        Some((
            0,
            json!({"clientId": "c", "clientHost": "/h", "rebalanceTimeoutMs": 30000,
                   "topologyEpoch": 1, "processId": process, "clientTags": []}),
        )),
    )
}

/// `StreamsGroupTest.testUpdatingMemberUpdatesTaskProcessIdWhenPartitionIsNotReleased`:
/// an active task still held by another member fails the load (`addTaskProcessId`, any
/// epoch) in the releases before KAFKA-19862 (4.1.0, 4.1.1); since, it loads. Standby tasks may be held by several processes: no clash. A
/// member whose process id is not known when its current assignment is replayed is not
/// tracked (what its later metadata record does depends on the release): no verdict.
#[test]
fn a_streams_active_task_still_held_fails_the_load_a_standby_does_not() {
    let mut log = GroupLog::new();
    log.batch(streams_member("w1", Some("process"), &[1], &[]));
    log.batch(streams_member("w2", Some("process"), &[1], &[]));
    let (_, r) = load(&log);
    let f = load_failures(&r);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(
        f[0].evidence["kafka_message"],
        "Cannot set the process ID of sub-1 to process because the partition is still owned by process ID process"
    );
    assert_eq!(f[0].evidence["load_fails_in"], "kafka_4_before_kafka_19862");
    assert_eq!(f[0].offset, Some(3));

    let mut log = GroupLog::new();
    log.batch(streams_member("w1", Some("p1"), &[0], &[1]));
    log.batch(streams_member("w2", Some("p2"), &[1], &[0]));
    assert_clean(&load(&log).1);

    let mut log = GroupLog::new();
    log.batch(streams_member("w1", Some("p1"), &[1], &[]));
    log.batch(streams_member("w2", None, &[1], &[]));
    log.batch(vec![metadata("w2", "p2")]);
    assert_clean(&load(&log).1);
}

/// `GroupMetadataManagerTest.testReplayStreamsGroupEpochTombstoneExisting` (and the
/// consumer and share twins): a modern group's target assignment epoch starts at 0
/// (`ModernGroup`'s `TimelineInteger`), and only the target assignment metadata tombstone
/// sets the -1 the group's tombstone requires — a group metadata value then its tombstone,
/// nothing between, fails the load ("… did not receive …TargetAssignmentMetadataValue
/// tombstone"). The listing shows the 0.
#[test]
fn a_group_tombstone_needs_the_target_assignment_metadata_tombstone_first() {
    for (meta, target) in [(3, 6), (11, 12), (17, 20)] {
        let mut log = GroupLog::new();
        log.batch(vec![(
            meta,
            json!({"groupId": GROUP}),
            Some((0, json!({"epoch": 1}))),
        )]);
        let (groups, r) = load(&log);
        assert_clean(&r);
        assert_eq!(live(&groups).unwrap().assignment_epoch, 0);
        log.batch(vec![(meta, json!({"groupId": GROUP}), None)]);
        let (groups, r) = load(&log);
        let f: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.evidence["load_fails"] == true)
            .collect();
        assert_eq!(f.len(), 1, "type {meta}: {:#?}", r.findings);
        assert_eq!(
            (
                f[0].kind,
                f[0].offset,
                f[0].evidence["assignment_epoch"].as_i64()
            ),
            (Kind::GroupTombstonesIncomplete, Some(1), Some(0))
        );
        assert!(f[0].message.contains("starts with"), "{}", f[0].message);
        assert!(live(&groups).is_some(), "the tombstone is skipped");
        // The coordinator's order: the target assignment metadata tombstone first.
        let mut log = GroupLog::new();
        log.batch(vec![(
            meta,
            json!({"groupId": GROUP}),
            Some((0, json!({"epoch": 1}))),
        )]);
        log.batch(vec![
            (target, json!({"groupId": GROUP}), None),
            (meta, json!({"groupId": GROUP}), None),
        ]);
        let (groups, r) = load(&log);
        assert_clean(&r);
        assert!(live(&groups).is_none());
    }
}

/// klogscan's own check that a member's epoch does not pass the target assignment epoch
/// compares only with an epoch a target assignment metadata value set: a group whose log
/// holds none (compacted away) is at 0 only by default, and a member at epoch 5 there is
/// no regression; once the log holds epoch 3, it is.
#[test]
fn a_member_epoch_is_compared_only_with_an_assignment_epoch_the_log_holds() {
    let mut log = GroupLog::new();
    log.batch(vec![current("m1", 5, &[0], &[])]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    assert_eq!(live(&groups).unwrap().assignment_epoch, 0);
    let mut log = GroupLog::new();
    log.batch(vec![(
        6,
        json!({"groupId": GROUP}),
        Some((0, json!({"assignmentEpoch": 3}))),
    )]);
    log.batch(vec![current("m1", 5, &[0], &[])]);
    let (_, r) = load(&log);
    let kinds: Vec<_> = r.findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [Kind::GroupEpochRegression], "{:#?}", r.findings);
}
