//! Kafka's KRaft controller and metadata-image unit tests, reproduced as metadata-log bytes
//! on disk and replayed by klogscan's leadership history.
//!
//! * `PartitionChangeBuilderTest` and `ReplicationControlManagerTest`
//!   (metadata/src/test/java/org/apache/kafka/controller/): the `PartitionRecord` /
//!   `PartitionChangeRecord`s the controller writes in each case, with the broker
//!   fencing and config records around them, written into `__cluster_metadata-0` with the
//!   testkit's writers; klogscan must give the same leader, leader epoch, partition epoch,
//!   ISR, ELR and recovery state, and judge each election as Kafka's builder made it
//!   (clean from the ISR, clean from the ELR, or unclean).
//! * `PartitionRegistrationTest` (metadata/src/test/java/org/apache/kafka/metadata/): how a
//!   `PartitionChangeRecord` merges (absent fields kept, reassignment fields, directories).
//! * `TopicsImageTest` / `ReplicationControlManagerTest.testDeleteTopics`: a topic deleted
//!   and created again under its name is a new topic id with a history of its own.
//!
//! A test marked `#[ignore = "divergence: …"]` holds Kafka's answer where klogscan gives
//! another.
#![cfg(feature = "testkit")]

use crate::common::kraft::{T0, findings, history};
use klogscan::cluster::leadership::{Choice, ClusterHistory};
use klogscan::finding::{Finding, Kind};
use klogscan::read::format::metadata::{
    BrokerRegistrationChange, MetaRecord, PartitionChange, PartitionRecord, RESOURCE_BROKER,
    RESOURCE_TOPIC, RegisterBroker, TopicId,
};
use klogscan::testkit::LogDirBuilder;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::metadata::MetadataLogBuilder;
use tempfile::TempDir;

// ----- helpers ----------------------------------------------------------------------------

/// `orders`' id (the one the testkit's `partition.metadata` names).
fn oid() -> TopicId {
    topic_id_for("orders")
}

fn topic_as(id: TopicId) -> MetaRecord {
    MetaRecord::Topic {
        name: "orders".into(),
        topic_id: id,
    }
}

fn topic() -> MetaRecord {
    topic_as(oid())
}

/// `metadata.version` at feature `level` (`MetadataVersion`: 2 = 3.1-IV0, 3 = 3.2-IV0,
/// 13 = 3.6-IV1, 17 = 3.7-IV2, 23 = 4.0-IV1).
fn mv(level: i16) -> MetaRecord {
    MetaRecord::FeatureLevel {
        name: "metadata.version".into(),
        feature_level: level,
    }
}

fn register(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8 + 1; 16],
        broker_epoch: 100 + i64::from(id),
        ..Default::default()
    })
}

/// `BrokerRegistrationChangeRecord` fencing (`true`) or unfencing broker `id`.
fn fence(id: i32, fenced: bool) -> MetaRecord {
    MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
        broker_id: id,
        broker_epoch: 100 + i64::from(id),
        fenced: if fenced { 1 } else { -1 },
        ..Default::default()
    })
}

/// `orders-<p>` of incarnation `id` created on `replicas`, ISR `isr`, led by `leader` at leader
/// and partition epoch `epoch`.
fn part_of(
    id: TopicId,
    p: i32,
    replicas: &[i32],
    isr: &[i32],
    leader: i32,
    epoch: i32,
) -> PartitionRecord {
    PartitionRecord {
        partition_id: p,
        topic_id: id,
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        leader,
        leader_epoch: epoch,
        partition_epoch: epoch,
        ..Default::default()
    }
}

fn part(p: i32, replicas: &[i32], isr: &[i32], leader: i32, epoch: i32) -> MetaRecord {
    MetaRecord::Partition(part_of(oid(), p, replicas, isr, leader, epoch))
}

/// A `PartitionChangeRecord` of `orders-<p>` of incarnation `id`, as `f` sets it.
fn change_of(id: TopicId, p: i32, f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    let mut c = PartitionChange {
        partition_id: p,
        topic_id: id,
        ..Default::default()
    };
    f(&mut c);
    MetaRecord::PartitionChange(c)
}

fn change(p: i32, f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    change_of(oid(), p, f)
}

/// A log dir of broker 1 (cluster `c1`) holding only a metadata log of `batches` (one
/// metadata batch each, one ms apart).
fn log_of(batches: &[Vec<MetaRecord>]) -> TempDir {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .write(d.path())
        .unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    for b in batches {
        m.batch(b);
        m.advance(1);
    }
    m.write(d.path()).unwrap();
    d
}

/// The history of a metadata log holding `records`, one record per batch.
fn replay(records: &[MetaRecord]) -> (TempDir, ClusterHistory) {
    let batches: Vec<Vec<MetaRecord>> = records.iter().map(|r| vec![r.clone()]).collect();
    let d = log_of(&batches);
    let h = history(d.path());
    (d, h)
}

/// `(leader, leader epoch, partition epoch)` after each record of `orders-<p>` (its live
/// incarnation).
fn epochs(h: &ClusterHistory, p: i32) -> Vec<(i32, i32, i32)> {
    h.timeline("orders", p)
        .unwrap()
        .steps
        .iter()
        .map(|s| {
            (
                s.state.leader,
                s.state.leader_epoch,
                s.state.partition_epoch,
            )
        })
        .collect()
}

/// `(partition, new leader, choice)` of every election in the history, in partition order.
fn choices(h: &ClusterHistory) -> Vec<(i32, i32, Choice)> {
    h.elections
        .iter()
        .map(|e| (e.partition, e.leader, e.choice))
        .collect()
}

/// `scan`'s `unclean_leader_election` findings of the metadata log under `d` (and
/// `verify`'s, which must be the same number).
fn unclean(d: &TempDir) -> Vec<Finding> {
    let (s, v) = findings(d.path(), Kind::UncleanLeaderElection);
    assert_eq!(s.len(), v.len(), "scan {s:#?} verify {v:#?}");
    s
}

// ----- leader recovery state (KIP-704) ----------------------------------------------------

/// `PartitionChangeBuilderTest.testUncleanSetsLeaderRecoveringState`: replicas [1, 2, 3],
/// ISR [2, 3], no leader; only broker 1 is acceptable and the election is UNCLEAN. Kafka
/// writes leader 1, ISR [1] and — only when `MetadataVersion.isLeaderRecoverySupported`
/// (3.2-IV0, feature level 3) — leader recovery state RECOVERING. Under 3.1-IV0 (level 2)
/// the record carries no recovery state and the merged state stays RECOVERED. Either way the
/// election is unclean (1 was outside the ISR) and the scan reports it, once.
#[test]
fn unclean_election_sets_recovering_only_with_leader_recovery_support() {
    for (level, writes_recovering) in [(2, false), (3, true)] {
        let (d, h) = replay(&[
            mv(level),
            topic(),
            part(0, &[1, 2, 3], &[2, 3], -1, 100),
            change(0, |c| {
                c.leader = 1;
                c.isr = Some(vec![1]);
                if writes_recovering {
                    c.leader_recovery_state = 1;
                }
            }),
        ]);
        assert_eq!(choices(&h), vec![(0, 1, Choice::Unclean)], "level {level}");
        let e = &h.elections[0];
        assert_eq!(
            (e.leader_epoch, e.recovery_state_after),
            (101, i8::from(writes_recovering)),
            "level {level}"
        );
        assert_eq!(unclean(&d).len(), 1, "level {level}");
    }
}

/// `PartitionChangeBuilderTest.testChangeInLeadershipDoesNotChangeRecoveryState` (leader
/// recovery unsupported, 3.1-IV0): replicas [1, 2, 3], ISR [1], leader 1. The leader goes
/// offline (leader -1, the ISR keeps its last member: ELR is off), then 1 is elected again
/// from the ISR. Both records carry no recovery state; the election is clean.
#[test]
fn the_last_isr_member_comes_back_under_a_version_without_leader_recovery() {
    let (d, h) = replay(&[
        mv(2),
        topic(),
        part(0, &[1, 2, 3], &[1], 1, 100),
        change(0, |c| c.leader = -1),
        change(0, |c| c.leader = 1),
    ]);
    assert_eq!(
        epochs(&h, 0),
        vec![(1, 100, 100), (-1, 101, 101), (1, 102, 102)]
    );
    assert_eq!(choices(&h), vec![(0, 1, Choice::Isr)]);
    assert!(unclean(&d).is_empty());
}

// ----- fencing, unclean elections and their config ----------------------------------------

/// `ReplicationControlManagerTest.testElectUncleanLeaders_WithoutElr` (3.6-IV1): `foo` with
/// partitions [1, 2, 3], [2, 3, 4], [0, 2, 1] on brokers 0–4. Fencing 2 and 3, then 1:
///
/// * p0: ISR [1, 3] then [1] (3.6: an ISR shrink does not bump the leader epoch), then
///   leader -1 with ISR [1] (the last member stays without ELR);
/// * p1: 2 fenced → leader 3 from the ISR [3, 4]; 3 fenced → leader 4, ISR [4]: two clean
///   elections;
/// * p2: ISR [0, 1], then [0]; 0 keeps leading.
///
/// 2 is unfenced, the leader of p1 adds it back (ISR [2, 4], no epoch bump), and the UNCLEAN
/// `ElectLeaders` elects 2 for p0 (ISR [2], RECOVERING). One unclean election in all.
#[test]
fn elect_unclean_leaders_without_elr() {
    let mut records = vec![mv(13)];
    records.extend((0..5).map(register));
    records.extend((0..5).map(|b| fence(b, false)));
    records.push(topic());
    records.push(part(0, &[1, 2, 3], &[1, 2, 3], 1, 0));
    records.push(part(1, &[2, 3, 4], &[2, 3, 4], 2, 0));
    records.push(part(2, &[0, 2, 1], &[0, 2, 1], 0, 0));
    // fence 2
    records.push(fence(2, true));
    records.push(change(0, |c| c.isr = Some(vec![1, 3])));
    records.push(change(1, |c| {
        c.isr = Some(vec![3, 4]);
        c.leader = 3;
    }));
    records.push(change(2, |c| c.isr = Some(vec![0, 1])));
    // fence 3
    records.push(fence(3, true));
    records.push(change(0, |c| c.isr = Some(vec![1])));
    records.push(change(1, |c| {
        c.isr = Some(vec![4]);
        c.leader = 4;
    }));
    // fence 1
    records.push(fence(1, true));
    records.push(change(0, |c| c.leader = -1));
    records.push(change(2, |c| c.isr = Some(vec![0])));
    // unfence 2, 4 adds it back to p1's ISR, the unclean election of p0
    records.push(fence(2, false));
    records.push(change(1, |c| c.isr = Some(vec![2, 4])));
    records.push(change(0, |c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
        c.leader_recovery_state = 1;
    }));
    let (d, h) = replay(&records);
    assert_eq!(
        choices(&h),
        vec![
            (0, 2, Choice::Unclean),
            (1, 3, Choice::Isr),
            (1, 4, Choice::Isr)
        ]
    );
    assert_eq!(
        epochs(&h, 0),
        vec![(1, 0, 0), (1, 0, 1), (1, 0, 2), (-1, 1, 3), (2, 2, 4)]
    );
    assert_eq!(epochs(&h, 1).last(), Some(&(4, 2, 3)));
    assert_eq!(epochs(&h, 2).last(), Some(&(0, 0, 2)));
    let f = unclean(&d);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].partition, 0);
    let ev = &f[0].evidence;
    assert_eq!(ev["previous_leader"], -1);
    assert_eq!(ev["last_live_leader"], 1);
    assert_eq!(ev["isr_before"], serde_json::json!([1]));
    assert_eq!(ev["path"], "outside_isr");
}

/// `ReplicationControlManagerTest.testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions`
/// (`dynamic_cluster` and `dynamic_topic`): `foo` on [1, 2, 4], [1, 3, 4], [0, 2, 4]; every
/// broker fenced leaves each partition leaderless with ISR [4]. 2 is unfenced, and once
/// `unclean.leader.election.enable=true` is set (for the cluster default, or for the topic)
/// the controller's periodic unclean election elects 2 for p0 and p2 (ISR [2], RECOVERING);
/// p1 (no replica available) stays leaderless. Two unclean elections, each naming the
/// config that allowed it.
#[test]
fn periodic_unclean_election_after_dynamic_config() {
    for (scope, resource, shown) in [
        (RESOURCE_BROKER, "", "true (cluster default)"),
        (RESOURCE_TOPIC, "orders", "true (topic)"),
    ] {
        let mut records = vec![mv(23)];
        records.extend((0..5).map(register));
        records.extend((0..5).map(|b| fence(b, false)));
        records.push(topic());
        records.push(part(0, &[1, 2, 4], &[4], -1, 3));
        records.push(part(1, &[1, 3, 4], &[4], -1, 3));
        records.push(part(2, &[0, 2, 4], &[4], -1, 3));
        records.push(fence(2, false));
        records.push(MetaRecord::Config {
            resource_type: scope,
            resource_name: resource.into(),
            name: "unclean.leader.election.enable".into(),
            value: Some("true".into()),
        });
        for p in [0, 2] {
            records.push(change(p, |c| {
                c.leader = 2;
                c.isr = Some(vec![2]);
                c.leader_recovery_state = 1;
            }));
        }
        let (d, h) = replay(&records);
        assert_eq!(
            choices(&h),
            vec![(0, 2, Choice::Unclean), (2, 2, Choice::Unclean)],
            "{shown}"
        );
        assert_eq!(
            h.timeline("orders", 1).unwrap().current().unwrap().leader,
            -1
        );
        let f = unclean(&d);
        assert_eq!(f.len(), 2, "{f:#?}");
        for f in &f {
            let ev = &f.evidence;
            assert_eq!(ev["unclean_leader_election_enable"], shown);
            assert_eq!(ev["new_leader_epoch"], 4);
        }
    }
}

/// `PartitionChangeBuilderTest.testElectLeader`, the UNCLEAN case with target ISR [3] (3
/// not acceptable): Kafka elects 2 — a member of the old ISR [2, 1, 3] — uncleanly, and
/// writes ISR [2] and RECOVERING. klogscan calls it unclean (right), but its finding's
/// message must not claim that 2 "was not in the ISR [2, 1, 3]": 2 was in it; what made
/// the election unclean is the ISR the change targeted.
#[test]
fn an_unclean_election_from_the_old_isr_does_not_say_it_was_outside_it() {
    let (d, h) = replay(&[
        mv(23),
        topic(),
        part(0, &[2, 1, 3], &[2, 1, 3], 1, 100),
        change(0, |c| {
            c.isr = Some(vec![2]);
            c.leader = 2;
            c.leader_recovery_state = 1;
        }),
    ]);
    assert_eq!(choices(&h), vec![(0, 2, Choice::Unclean)]);
    let f = unclean(&d);
    assert_eq!(f.len(), 1);
    assert!(
        !f[0].message.contains("was not in the ISR [2, 1, 3]"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].message.contains("not in the ISR the change targeted")
            && f[0].message.contains("RECOVERING")
            && f[0]
                .message
                .contains("in the ISR [2, 1, 3] before the change"),
        "{}",
        f[0].message
    );
}

// ----- reassignments: which changes bump the leader epoch ---------------------------------

/// `PartitionChangeBuilderTest.testAddingReplicaReassignment`,
/// `PartitionRegistrationTest.testMergePartitionChangeRecordWithReassignmentData` and
/// `ReplicationControlManagerTest.testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas`:
/// a reassignment that only adds replicas (the target replicas contain every current one)
/// writes replicas and adding (and, from 3.7-IV2, directories) without a leader: the
/// partition epoch rises, the leader epoch does not. A new reassignment replacing it (to
/// [4, 5] from [2, 3, 0, 1] → replicas [4, 5, 0, 1, 2, 3]) keeps every current replica:
/// no leader epoch bump either. Completing a reassignment with the leader kept (ISR [1, 2,
/// 4], replicas [1, 2, 4]) removes 3 yet writes no leader in the merge test: partition
/// epoch only.
#[test]
fn adding_replicas_bumps_only_the_partition_epoch() {
    let dir = |b: u8| [b; 16];
    let (_d, h) = replay(&[
        mv(17),
        topic(),
        MetaRecord::Partition(PartitionRecord {
            directories: vec![dir(1), dir(2), dir(3)],
            ..part_of(oid(), 0, &[1, 2, 3], &[1, 2, 3], 1, 100)
        }),
        change(0, |c| {
            c.replicas = Some(vec![1, 2, 3, 4]);
            c.removing_replicas = Some(vec![3]);
            c.adding_replicas = Some(vec![4]);
            c.directories = Some(vec![dir(1), dir(2), dir(3), [0; 16]]);
        }),
        change(0, |c| {
            c.isr = Some(vec![1, 2, 4]);
            c.replicas = Some(vec![1, 2, 4]);
            c.removing_replicas = Some(vec![]);
            c.adding_replicas = Some(vec![]);
            c.directories = Some(vec![dir(1), dir(2), [0; 16]]);
        }),
    ]);
    assert_eq!(
        epochs(&h, 0),
        vec![(1, 100, 100), (1, 100, 101), (1, 100, 102)]
    );
    let t = h.timeline("orders", 0).unwrap();
    let mid = &t.steps[1].state;
    assert_eq!(
        (&mid.replicas, &mid.isr, &mid.adding, &mid.removing),
        (&vec![1, 2, 3, 4], &vec![1, 2, 3], &vec![4], &vec![3])
    );
    let end = &t.steps[2].state;
    assert_eq!(
        (&end.replicas, &end.isr, &end.adding, &end.removing),
        (&vec![1, 2, 4], &vec![1, 2, 4], &vec![], &vec![])
    );
    assert!(h.elections.is_empty());

    // The replacing reassignment of the RCM test: [0, 1] → [2, 3] is under way, its ISR grew to
    // [0, 1, 2] and a preferred election moved the leader to 2 (clean); then [4, 5] replaces it.
    let (d, h) = replay(&[
        mv(17),
        topic(),
        part(0, &[0, 1], &[0, 1], 0, 0),
        change(0, |c| {
            c.replicas = Some(vec![2, 3, 0, 1]);
            c.removing_replicas = Some(vec![0, 1]);
            c.adding_replicas = Some(vec![2, 3]);
        }),
        change(0, |c| c.isr = Some(vec![0, 1, 2])),
        change(0, |c| c.leader = 2),
        change(0, |c| {
            c.replicas = Some(vec![4, 5, 0, 1, 2, 3]);
            c.removing_replicas = Some(vec![0, 1, 2, 3]);
            c.adding_replicas = Some(vec![4, 5]);
        }),
    ]);
    assert_eq!(
        epochs(&h, 0),
        vec![(0, 0, 0), (0, 0, 1), (0, 0, 2), (2, 1, 3), (2, 1, 4)]
    );
    assert_eq!(choices(&h), vec![(0, 2, Choice::Isr)]);
    assert!(unclean(&d).is_empty());
}

/// `PartitionChangeBuilderTest.testRemovingReplicaReassignment` and `testRevertReassignment`:
/// a change whose replicas drop a current one names the current leader to bump the leader
/// epoch (`triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`): FOO [2, 1, 3] → [1, 2]
/// with ISR [2, 1] and leader 1; BAR's revert to [1, 2, 3] with leader 1 and the
/// adding/removing lists cleared. Both bump the leader epoch with the leader kept: no
/// election, and the history gives the new epoch to leader 1.
#[test]
fn removing_replicas_bumps_the_leader_epoch_with_the_same_leader() {
    let (d, h) = replay(&[
        topic(),
        part(0, &[2, 1, 3], &[2, 1, 3], 1, 100),
        change(0, |c| {
            c.replicas = Some(vec![1, 2]);
            c.isr = Some(vec![2, 1]);
            c.leader = 1;
        }),
    ]);
    assert_eq!(epochs(&h, 0), vec![(1, 100, 100), (1, 101, 101)]);
    assert!(h.elections.is_empty());
    assert_eq!(h.leader_epochs("orders", 0), vec![(100, 1), (101, 1)]);
    assert!(unclean(&d).is_empty());

    let (d, h) = replay(&[
        topic(),
        MetaRecord::Partition(PartitionRecord {
            removing_replicas: vec![1],
            adding_replicas: vec![4],
            ..part_of(oid(), 0, &[1, 2, 3, 4], &[1, 2, 3], 1, 100)
        }),
        change(0, |c| {
            c.replicas = Some(vec![1, 2, 3]);
            c.leader = 1;
            c.removing_replicas = Some(vec![]);
            c.adding_replicas = Some(vec![]);
        }),
    ]);
    assert_eq!(epochs(&h, 0), vec![(1, 100, 100), (1, 101, 101)]);
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!((s.replicas, s.isr), (vec![1, 2, 3], vec![1, 2, 3]));
    assert!(h.elections.is_empty());
    assert!(unclean(&d).is_empty());
}

/// `PartitionChangeBuilderTest.testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders`:
/// [0, 1] → [2, 3] under way (replicas [2, 3, 0, 1], ISR [0, 1], leader 0 at epoch 0); the
/// ISR grows to all four, the reassignment completes (replicas and ISR [2, 3]) and, with no
/// acceptable new leader, the record writes leader -1: epoch 1 without a leader. When 2 is
/// acceptable again the controller's online election picks it from the ISR [2, 3] — a clean
/// election at epoch 2, though 2 was never in the ISR of a state with a leader.
#[test]
fn a_stopped_leader_is_demoted_and_the_new_replica_elected_cleanly() {
    let (d, h) = replay(&[
        mv(2),
        topic(),
        MetaRecord::Partition(PartitionRecord {
            removing_replicas: vec![0, 1],
            adding_replicas: vec![2, 3],
            ..part_of(oid(), 0, &[2, 3, 0, 1], &[0, 1], 0, 0)
        }),
        change(0, |c| {
            c.replicas = Some(vec![2, 3]);
            c.isr = Some(vec![2, 3]);
            c.removing_replicas = Some(vec![]);
            c.adding_replicas = Some(vec![]);
            c.leader = -1;
        }),
        change(0, |c| c.leader = 2),
    ]);
    assert_eq!(epochs(&h, 0), vec![(0, 0, 0), (-1, 1, 1), (2, 2, 2)]);
    assert_eq!(choices(&h), vec![(0, 2, Choice::Isr)]);
    assert_eq!(h.leader_epochs("orders", 0), vec![(0, 0), (2, 2)]);
    assert!(unclean(&d).is_empty());
}

/// Reassigning a single-replica partition to another broker
/// (`PartitionChangeBuilder.completeReassignmentIfNeeded` then `tryElection` in one
/// `build`, as `testIsrEnlargementCompletesReassignment` and `testElectLeader`'s target-ISR
/// case show): replicas [2, 1], ISR [1], removing [1], adding [2], leader 1. Once 2 joins the
/// ISR the reassignment completes: replicas and ISR [2], leader 2 from the target ISR — a
/// clean election, whatever the metadata version. The record is leader 2, ISR [2], replicas
/// [2], adding and removing cleared, no recovery state. Under a version without leader
/// recovery (3.1-IV0) it has the shape of an unclean election too, but 2 was a replica being
/// added and the change completes its reassignment, which only a clean election does.
#[test]
fn completing_a_single_replica_move_is_a_clean_election() {
    let moved = |level: Option<i16>| {
        let mut r: Vec<MetaRecord> = level.map(mv).into_iter().collect();
        r.push(topic());
        r.push(MetaRecord::Partition(PartitionRecord {
            removing_replicas: vec![1],
            adding_replicas: vec![2],
            ..part_of(oid(), 0, &[2, 1], &[1], 1, 7)
        }));
        r.push(change(0, |c| {
            c.replicas = Some(vec![2]);
            c.isr = Some(vec![2]);
            c.leader = 2;
            c.removing_replicas = Some(vec![]);
            c.adding_replicas = Some(vec![]);
        }));
        r
    };
    for level in [Some(23), Some(2), None] {
        let (d, h) = replay(&moved(level));
        assert_eq!(choices(&h), vec![(0, 2, Choice::Isr)], "level {level:?}");
        assert!(unclean(&d).is_empty(), "level {level:?}");
    }
}

/// The negative twin: the same election of the adding replica 2 alone in the written ISR
/// under 3.1-IV0, but the change leaves the reassignment going on (adding and removing not
/// cleared: no completion vouches for 2). The record has the shape of an unclean election
/// and a version that never writes RECOVERING: it stays unclean (the existing reading), and
/// its message says 2 was outside the ISR [1] (2 was not in it before).
#[test]
fn electing_an_adding_replica_without_completing_the_move_stays_unclean() {
    let (d, h) = replay(&[
        mv(2),
        topic(),
        MetaRecord::Partition(PartitionRecord {
            removing_replicas: vec![1],
            adding_replicas: vec![2],
            ..part_of(oid(), 0, &[2, 1, 3], &[1], 1, 7)
        }),
        change(0, |c| {
            c.isr = Some(vec![2]);
            c.leader = 2;
        }),
    ]);
    assert_eq!(choices(&h), vec![(0, 2, Choice::Unclean)]);
    let f = unclean(&d);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(
        f[0].message.contains("although it was not in the ISR [1]"),
        "{}",
        f[0].message
    );
}

// ----- directory assignment (KIP-858) -----------------------------------------------------

/// `ReplicationControlManagerTest.testHandleAssignReplicasToDirs` and
/// `testHandleDirectoriesOffline` (3.7-IV2, `PartitionChangeRecord` version 1): assigning a
/// replica to a log dir writes only `Directories` — the partition epoch rises, nothing else
/// changes. A replica assigned to an offline dir loses leadership: the next record moves the
/// leader to 2 with ISR [2] (2 was in the ISR [1, 2]), a clean election at a new leader epoch.
#[test]
fn directory_assignment_bumps_only_the_partition_epoch() {
    let (d, h) = replay(&[
        mv(17),
        topic(),
        MetaRecord::Partition(PartitionRecord {
            directories: vec![[0; 16], [0; 16]],
            ..part_of(oid(), 0, &[1, 2], &[1, 2], 1, 0)
        }),
        change(0, |c| c.directories = Some(vec![[7; 16], [8; 16]])),
        change(0, |c| {
            c.isr = Some(vec![2]);
            c.leader = 2;
        }),
    ]);
    assert_eq!(epochs(&h, 0), vec![(1, 0, 0), (1, 0, 1), (2, 1, 2)]);
    let t = h.timeline("orders", 0).unwrap();
    assert_eq!(t.steps[1].state.isr, vec![1, 2]);
    assert_eq!(
        t.steps[1].change.as_ref().unwrap().directories,
        Some(vec![[7; 16], [8; 16]])
    );
    assert_eq!(choices(&h), vec![(0, 2, Choice::Isr)]);
    assert!(unclean(&d).is_empty());
}

// ----- KIP-966: eligible leader replicas --------------------------------------------------

/// `ReplicationControlManagerTest.testEligibleLeaderReplicas_BrokerFence` and
/// `testEligibleLeaderReplicas_ShrinkAndExpandIsr` (4.0-IV1, min ISR 3 / 2): fencing 2 and 3
/// leaves ISR [0, 1], ELR [3] (the ISR was still at min ISR when 2 left); fencing 1 gives ISR
/// [0], ELR [1, 3]; unfencing writes nothing. With min ISR 2 a shrink to [0] gives ELR [1, 2]
/// and an expansion back to [0, 1] empties it. No record names a leader: no election, the
/// leader epoch stays.
#[test]
fn elr_follows_fencing_and_isr_changes() {
    let (d, h) = replay(&[
        mv(23),
        topic(),
        part(0, &[0, 1, 2, 3], &[0, 1, 2, 3], 0, 0),
        fence(2, true),
        change(0, |c| c.isr = Some(vec![0, 1, 3])),
        fence(3, true),
        change(0, |c| {
            c.isr = Some(vec![0, 1]);
            c.eligible_leader_replicas = Some(vec![3]);
        }),
        fence(1, true),
        change(0, |c| {
            c.isr = Some(vec![0]);
            c.eligible_leader_replicas = Some(vec![1, 3]);
        }),
        fence(1, false),
        fence(2, false),
        fence(3, false),
    ]);
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!(
        (
            s.leader,
            s.leader_epoch,
            s.partition_epoch,
            s.isr,
            s.elr,
            s.last_known_elr
        ),
        (0, 0, 3, vec![0], vec![1, 3], vec![])
    );
    assert!(h.elections.is_empty());
    assert!(unclean(&d).is_empty());
}

/// `PartitionChangeBuilderTest.testUncleanLeaderElection` with ELR (record version 2):
/// OFFLINE_WITH_ELR — replicas [2, 1, 3], ISR [], ELR [3], last known ELR [2], no leader,
/// only 1 acceptable. The UNCLEAN election takes 1 (in neither the ISR nor the ELR; not the
/// last known leader 2): ISR [1], RECOVERING, ELR and last known ELR cleared. One unclean
/// election, on the `outside_isr` path (not `last_known_leader`).
#[test]
fn unclean_election_with_elr_clears_it_and_is_outside_isr() {
    let (d, h) = replay(&[
        mv(23),
        topic(),
        MetaRecord::Partition(PartitionRecord {
            eligible_leader_replicas: Some(vec![3]),
            last_known_elr: Some(vec![2]),
            ..part_of(oid(), 0, &[2, 1, 3], &[], -1, 100)
        }),
        change(0, |c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
            c.eligible_leader_replicas = Some(vec![]);
            c.last_known_elr = Some(vec![]);
        }),
    ]);
    assert_eq!(choices(&h), vec![(0, 1, Choice::Unclean)]);
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!(
        (
            s.isr,
            s.elr,
            s.last_known_elr,
            s.recovery_state,
            s.leader_epoch
        ),
        (vec![1], vec![], vec![], 1, 101)
    );
    let f = unclean(&d);
    assert_eq!(f.len(), 1);
    let ev = &f[0].evidence;
    assert_eq!(ev["path"], "outside_isr");
    assert_eq!(ev["elr_before"], serde_json::json!([3]));
}

// ----- topic deletion and re-creation (TopicsDelta / MetadataDelta) ------------------------

/// `ReplicationControlManagerTest.testDeleteTopics` / `testEligibleLeaderReplicas_DeleteTopic`
/// and `TopicsImageTest.testDeleteAfterChanges`: `orders` (id A) has an unclean election
/// and a topic-level `unclean.leader.election.enable=true`; it is deleted
/// (`RemoveTopicRecord`: its partitions and its configs go) and created again under the same
/// name with a new id B, whose partition starts at leader epoch 0. Then:
///
/// * the live timeline of `orders-0` is B's (epochs from 0), A's ends at the removal;
/// * a `PartitionChangeRecord` still naming A after the removal is applied to nothing (a
///   controller refuses it: `metadata_record_rejected`);
/// * B's own unclean election is judged against B's ISR, and A's topic config no longer
///   applies to it (the finding names none);
/// * a `ClearElrRecord` naming `orders` clears B's ELR only.
#[test]
fn a_topic_deleted_and_created_again_has_a_history_of_its_own() {
    let a: TopicId = [0xAA; 16];
    let records = vec![
        mv(23),
        topic_as(a),
        MetaRecord::Partition(part_of(a, 0, &[1, 2], &[1], 1, 5)),
        MetaRecord::Config {
            resource_type: RESOURCE_TOPIC,
            resource_name: "orders".into(),
            name: "unclean.leader.election.enable".into(),
            value: Some("true".into()),
        },
        change_of(a, 0, |c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        }),
        MetaRecord::RemoveTopic { topic_id: a },
        change_of(a, 0, |c| c.leader = 1),
        topic(),
        MetaRecord::Partition(PartitionRecord {
            eligible_leader_replicas: Some(vec![]),
            last_known_elr: Some(vec![]),
            ..part_of(oid(), 0, &[1, 2], &[2], 2, 0)
        }),
        change(0, |c| {
            c.isr = Some(vec![]);
            c.leader = -1;
            c.eligible_leader_replicas = Some(vec![2]);
            c.last_known_elr = Some(vec![2]);
        }),
        change(0, |c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
            c.eligible_leader_replicas = Some(vec![]);
            c.last_known_elr = Some(vec![]);
        }),
    ];
    let (d, h) = replay(&records);
    assert_eq!(epochs(&h, 0), vec![(2, 0, 0), (-1, 1, 1), (1, 2, 2)]);
    let old = &h.history.partitions[&(a, 0)];
    assert_eq!(old.removed_at, Some(5));
    assert_eq!(old.steps.len(), 2);
    // Refused by a controller ("no topic with that ID was found"): `metadata_record_rejected`.
    assert!(h.history.orphans.is_empty());
    let refused = &h.history.refused_targets;
    assert_eq!(refused.len(), 1);
    assert_eq!((refused[0].offset, refused[0].removed_at), (6, Some(5)));
    assert!(!refused[0].topic_live);
    assert_eq!(h.leader_epochs("orders", 0), vec![(0, 2), (2, 1)]);
    let by_id: Vec<(TopicId, i32, Choice)> = h
        .elections
        .iter()
        .map(|e| (e.topic_id, e.leader, e.choice))
        .collect();
    assert!(by_id.contains(&(a, 2, Choice::Unclean)), "{by_id:?}");
    assert!(by_id.contains(&(oid(), 1, Choice::Unclean)), "{by_id:?}");
    assert_eq!(by_id.len(), 2);
    let f = unclean(&d);
    assert_eq!(f.len(), 2, "{f:#?}");
    let b = f
        .iter()
        .find(|f| f.evidence["metadata_offset"] == 10)
        .expect("B's election");
    let ev = &b.evidence;
    assert_eq!(ev["isr_before"], serde_json::json!([]));
    assert_eq!(ev["elr_before"], serde_json::json!([2]));
    assert!(ev["unclean_leader_election_enable"].is_null(), "{ev}");
    let a_f = f
        .iter()
        .find(|f| f.evidence["metadata_offset"] == 4)
        .expect("A's election");
    assert_eq!(
        a_f.evidence["unclean_leader_election_enable"],
        "true (topic)"
    );

    // ClearElrRecord("orders") after the re-creation: B's ELR only (A's timeline ended).
    let mut more = records.clone();
    more.truncate(10);
    more.push(MetaRecord::ClearElr {
        topic_name: "orders".into(),
    });
    let (_d, h) = replay(&more);
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!(
        (s.elr, s.last_known_elr, s.partition_epoch),
        (vec![], vec![], 2)
    );
    assert_eq!(h.history.partitions[&(a, 0)].steps.len(), 2);
}

/// The same re-creation inside one metadata batch (one `MetadataDelta`: `TopicsDelta`
/// removes A and adds B under the name), with B's partition led by 1: the history ends A at
/// the removal and starts B at epoch 0; nothing of A's epochs (5, 6) is B's.
#[test]
fn deletion_and_recreation_in_one_batch() {
    let a: TopicId = [0xAB; 16];
    let d = log_of(&[
        vec![
            mv(17),
            topic_as(a),
            MetaRecord::Partition(part_of(a, 0, &[1, 2], &[1, 2], 1, 5)),
        ],
        vec![change_of(a, 0, |c| c.leader = 2)],
        vec![
            MetaRecord::RemoveTopic { topic_id: a },
            topic(),
            part(0, &[1, 2], &[1, 2], 1, 0),
        ],
    ]);
    let h = history(d.path());
    assert_eq!(epochs(&h, 0), vec![(1, 0, 0)]);
    assert_eq!(h.leader_epochs("orders", 0), vec![(0, 1)]);
    assert_eq!(h.history.partitions[&(a, 0)].removed_at, Some(4));
    let created: Vec<(bool, TopicId)> = h
        .history
        .topics
        .iter()
        .map(|t| (t.created, t.topic_id))
        .collect();
    assert_eq!(created, vec![(true, a), (false, a), (true, oid())]);
    assert_eq!(choices(&h), vec![(0, 2, Choice::Isr)]);
    let (s, _) = findings(d.path(), Kind::UncleanLeaderElection);
    assert!(s.is_empty());
}
