//! Current assignments whose release records the log cleaner dropped, as a load after the
//! cleaner meets them (`GroupMetadataManagerTest.testReplay{Consumer,Streams}GroupCurrentMember
//! Assignment*WithCompaction`, KAFKA-19862).

use super::one_load_failure;
use crate::kafka_groupaudit_cases::{BAR_ID, Coord, FOO_ID, Loaded, current, gm, parts};
use crate::kafka_streams_cases as streams;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

const GROUP: &str = "fooup";

/// `topicId:partition` as the listing names a consumer group's partition.
fn p(topic_id: &str, partition: i32) -> String {
    format!("{topic_id}:{partition}")
}

/// A consumer group member's current assignment (STABLE) with `AssignmentEpochs`
/// (KIP-1251, tag 0) at `assigned_at` for every partition.
fn current_with_epochs(m: &str, epoch: i32, p: &[(&str, &[i32])], assigned_at: i32) -> Spec {
    let mut tps = parts(p);
    for t in tps.as_array_mut().unwrap() {
        let n = t["partitions"].as_array().unwrap().len();
        t["assignmentEpochs"] = json!(vec![assigned_at; n]);
    }
    (
        8,
        gm(GROUP, m),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": 0,
                   "assignedPartitions": tps, "partitionsPendingRevocation": []}),
        )),
    )
}

/// One record per batch, as the coordinator writes each heartbeat's records.
fn load(recs: Vec<Spec>) -> Loaded {
    let mut c = Coord::new();
    for r in recs {
        c.batch(GROUP, vec![r]);
    }
    c.load()
}

/// The partitions each member of the live group holds.
fn assigned(l: &Loaded, m: &str) -> Vec<String> {
    l.group(GROUP).members[m].assigned.clone()
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupCurrentMemberAssignmentWithCompaction`:
/// A holds foo-0 at epoch 11; A's release of it is gone (compacted); B claims foo-0 at epoch
/// 12; A moves to foo-1 at 13. Since KAFKA-19862 (4.0.2, 4.1.2, 4.2.0) the claim at a newer
/// member epoch replaces A's (`ConsumerGroup.addPartitionEpochs`) and A's move removes
/// nothing B holds (`removePartitionEpochs` only logs): foo-0 at 12 with B, foo-1 at 13 with
/// A. klogscan: B holds foo-0, A foo-1; one `group_load_failure` at B's record, scoped to
/// the releases before KAFKA-19862.
/// Near misses: A's release record kept (the uncompacted log): no finding; B's claim at
/// epoch 11, A's own: a failure of every 4.x release (`kafka_4`).
#[test]
fn a_newer_consumer_claim_over_a_compacted_release_loads_since_kafka_19862() {
    let a11 = current(GROUP, "memberIdA", 11, 10, 0, &[(FOO_ID, &[0])]);
    let b12 = current(GROUP, "memberIdB", 12, 11, 0, &[(FOO_ID, &[0])]);
    let a13 = current(GROUP, "memberIdA", 13, 12, 0, &[(FOO_ID, &[1])]);
    let l = load(vec![a11.clone(), b12.clone(), a13.clone()]);
    assert_eq!(assigned(&l, "memberIdA"), [p(FOO_ID, 1)]);
    assert_eq!(assigned(&l, "memberIdB"), [p(FOO_ID, 0)]);
    let f = one_load_failure(&l);
    assert_eq!(f.offset, Some(1));
    assert_eq!(f.evidence["load_fails_in"], "kafka_4_before_kafka_19862");
    assert_eq!(f.evidence["member_id"], "memberIdB");

    // Near miss: the release the cleaner dropped, kept.
    let released = current(GROUP, "memberIdA", 12, 11, 0, &[]);
    let l = load(vec![a11.clone(), released, b12, a13.clone()]);
    assert_eq!(assigned(&l, "memberIdB"), [p(FOO_ID, 0)]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: B's claim at A's own epoch: every release throws.
    let b11 = current(GROUP, "memberIdB", 11, 10, 0, &[(FOO_ID, &[0])]);
    let l = load(vec![a11, b11, a13]);
    let f = one_load_failure(&l);
    assert_eq!(
        (f.offset, &f.evidence["load_fails_in"]),
        (Some(1), &json!("kafka_4"))
    );
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupCurrentMemberAssignmentUnownedTopicWithCompaction`:
/// A holds foo-0 at 11 (its release compacted away); B claims foo-0 at member epoch 12
/// (its `AssignmentEpochs` say 11: the member epoch is what the load compares), then
/// gives it up at 13; A moves to bar-0 at 14, its removal of foo-0 meeting a topic nobody
/// holds (only logged since KAFKA-19862). Kafka: foo-0 unowned, bar-0 with A at 14.
/// klogscan: A holds bar-0, B nothing; one failure at B's claim, scoped to the releases
/// before KAFKA-19862.
/// Near miss: B's claim never given up: A's bar-0 is quiet but B still holds foo-0.
#[test]
fn a_release_of_a_topic_nobody_holds_after_compaction_loads_since_kafka_19862() {
    let recs = |b_gives_up: bool| {
        let mut v = vec![
            current_with_epochs("memberIdA", 11, &[(FOO_ID, &[0])], 11),
            current_with_epochs("memberIdB", 12, &[(FOO_ID, &[0])], 11),
        ];
        if b_gives_up {
            v.push(current_with_epochs("memberIdB", 13, &[], 13));
        }
        v.push(current_with_epochs("memberIdA", 14, &[(BAR_ID, &[0])], 14));
        v
    };
    let l = load(recs(true));
    assert_eq!(assigned(&l, "memberIdA"), [p(BAR_ID, 0)]);
    assert!(assigned(&l, "memberIdB").is_empty());
    let f = one_load_failure(&l);
    assert_eq!(f.offset, Some(1));
    assert_eq!(f.evidence["load_fails_in"], "kafka_4_before_kafka_19862");

    // Near miss: B keeps foo-0.
    let l = load(recs(false));
    assert_eq!(assigned(&l, "memberIdB"), [p(FOO_ID, 0)]);
    assert_eq!(assigned(&l, "memberIdA"), [p(BAR_ID, 0)]);
    assert_eq!(one_load_failure(&l).offset, Some(1));
}

/// A streams member's current assignment (STABLE) of active tasks `active`.
fn task_owner(m: &str, epoch: i32, active: &[i32]) -> Spec {
    streams::current(GROUP, m, (epoch, epoch - 1, streams::STABLE), active, &[])
}

/// `GroupMetadataManagerTest.testReplayStreamsGroupCurrentMemberAssignmentWithCompaction`:
/// members A (process A) and B (process B); A holds task 0 at 11, its release compacted
/// away; B claims task 0 at 12; A moves to task 1 at 13. Since KAFKA-19862 (4.1.2, 4.2.0)
/// `StreamsGroup.addTaskProcessId` sets B's process on task 0 and only logs A's, whatever
/// the epochs: task 0 with B, task 1 with A. Before it (4.1.0, 4.1.1, the first releases
/// with streams groups) the claim throws.
/// klogscan: task 0 with B, task 1 with A; one `group_load_failure` at B's claim scoped to
/// the releases before KAFKA-19862 (was `kafka_4`: every release).
/// Near miss: A's release record kept: no finding.
#[test]
fn a_streams_claim_over_a_compacted_release_loads_since_kafka_19862() {
    let members = vec![
        streams::member(GROUP, "memberIdA", "processIdA"),
        streams::member(GROUP, "memberIdB", "processIdB"),
    ];
    let build = |released: bool| {
        let mut v = members.clone();
        v.push(task_owner("memberIdA", 11, &[0]));
        if released {
            v.push(task_owner("memberIdA", 12, &[]));
        }
        v.push(task_owner("memberIdB", 12, &[0]));
        v.push(task_owner("memberIdA", 13, &[1]));
        load(v)
    };
    let l = build(false);
    assert_eq!(assigned(&l, "memberIdA"), [streams::task(1)]);
    assert_eq!(assigned(&l, "memberIdB"), [streams::task(0)]);
    let f = one_load_failure(&l);
    assert_eq!(f.offset, Some(3));
    assert_eq!(f.evidence["load_fails_in"], "kafka_4_before_kafka_19862");
    assert_eq!(
        f.evidence["kafka_message"],
        format!(
            "Cannot set the process ID of {}-0 to processIdB because the partition is still owned by process ID processIdA",
            streams::SUB
        )
    );
    assert!(f.broker_behaviour.contains("4.1.2"), "{f:#?}");

    // Near miss: the uncompacted log.
    let l = build(true);
    assert_eq!(assigned(&l, "memberIdB"), [streams::task(0)]);
    l.assert_no_group_finding();
    l.assert_no_alarm();
}

/// `GroupMetadataManagerTest.testReplayStreamsGroupCurrentMemberAssignmentUnownedTopologyWithCompaction`:
/// A holds a task at 11 (release compacted away); B claims it at 12 and gives it up at 13;
/// A moves to another task at 14, its removal meeting a subtopology nobody holds (only
/// logged since KAFKA-19862). Kafka: the first task unowned, the second with A. The Kafka
/// test's two subtopologies are one here (tasks 0 and 1 of [`streams::SUB`]): after B's
/// release the subtopology holds nothing, the branch A's removal meets.
/// klogscan: A holds task 1, B nothing; one failure at B's claim, scoped.
/// Near misses: A's release kept (uncompacted): no finding; B's claim from A's own epoch:
/// scoped the same (a streams claim is judged whatever the epochs, unlike a consumer's).
#[test]
fn a_streams_release_of_a_subtopology_nobody_holds_loads_since_kafka_19862() {
    let build = |b_epoch: i32, a_released: bool| {
        let mut v = vec![
            streams::member(GROUP, "memberIdA", "processIdA"),
            streams::member(GROUP, "memberIdB", "processIdB"),
            task_owner("memberIdA", 11, &[0]),
        ];
        if a_released {
            v.push(task_owner("memberIdA", 12, &[]));
        }
        v.push(task_owner("memberIdB", b_epoch, &[0]));
        v.push(task_owner("memberIdB", 13, &[]));
        v.push(task_owner("memberIdA", 14, &[1]));
        load(v)
    };
    let l = build(12, false);
    assert_eq!(assigned(&l, "memberIdA"), [streams::task(1)]);
    assert!(assigned(&l, "memberIdB").is_empty());
    let f = one_load_failure(&l);
    assert_eq!(f.offset, Some(3));
    assert_eq!(f.evidence["load_fails_in"], "kafka_4_before_kafka_19862");

    // Near miss: the uncompacted log.
    let l = build(12, true);
    assert_eq!(assigned(&l, "memberIdA"), [streams::task(1)]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // B's claim at A's epoch: the same scope.
    let l = build(11, false);
    let f = one_load_failure(&l);
    assert_eq!(f.evidence["load_fails_in"], "kafka_4_before_kafka_19862");
}
