//! What the controller writes over a cluster's life: metadata transactions (KIP-868),
//! KIP-853 voter changes, feature upgrades, ELR, controlled shutdown, fencing, a
//! reassignment, a topic deleted and created again under a new id.

use super::quorum::{BROKER_EPOCHS, bootstrap};
use super::{
    KRAFT_VERSION, KRAFT_VOTERS, Node, Snap, Step, VOTERS, all_loud, cluster, copy, data, elect,
    end_of, epoch_of, kraft_version, quorum_state, reported, voters_record,
};
use crate::kafka_quiet_cluster_cases::kraft::{
    broker_change, change, isr, metadata_version, partition, register, topic,
};
use crate::kafka_quiet_cluster_cases::replica;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::{PartitionBuilder, PartitionFileOptions};

/// Every node at the end of `steps`, the leader `leader` (v1 `quorum-state`s).
fn all_at_end(steps: &[Step], leader: i32) -> Vec<Node> {
    let e = epoch_of(steps);
    let ids = VOTERS.iter().chain(super::BROKERS.iter());
    ids.map(|id| {
        let voted = if *id == leader { leader } else { -1 };
        Node::new(*id, copy(steps, 0), quorum_state(true, leader, e, voted))
    })
    .collect()
}

fn none(_: i32) -> Vec<PartitionBuilder> {
    Vec::new()
}

// ----- KIP-868 metadata transactions ------------------------------------------------------

/// [`bootstrap`], a transaction that commits (`BeginTransactionRecord`, the records in
/// batches of their own, `EndTransactionRecord`: `QuorumController`'s
/// `ControllerWriteEvent` for a result larger than one batch), then one that 3000 began and
/// never ended before it failed over: 3001, elected at epoch 2, finds the transaction open
/// and aborts it first (`ActivationRecordsGenerator.recordsForNonEmptyLog`:
/// `AbortTransactionRecord`, reason "Controller failover").
fn transactions() -> Vec<Step> {
    let begin = |n: &str| MetaRecord::BeginTransaction {
        name: Some(n.into()),
    };
    let mut s = bootstrap();
    s.extend([
        data(vec![begin("create topics")]),
        data(vec![
            topic("events"),
            partition("events", 0, &[1, 2], &[1, 2], (1, 0, 0)),
        ]),
        data(vec![partition("events", 1, &[2, 1], &[2, 1], (2, 0, 0))]),
        data(vec![MetaRecord::EndTransaction]),
        data(vec![begin("create topics")]),
        data(vec![
            topic("logs"),
            partition("logs", 0, &[1, 2], &[1, 2], (1, 0, 0)),
        ]),
        elect(3001, &VOTERS),
        data(vec![MetaRecord::AbortTransaction {
            reason: Some("Controller failover".into()),
        }]),
        data(vec![MetaRecord::NoOp]),
    ]);
    s
}

/// `MetadataBatchLoaderTest.testOneTransactionInMultipleBatches` (committed and aborted),
/// `testAlignedTransactionBatches`, `QuorumControllerTest.testActivationRecordsPartialTransaction`
/// (the new leader's abort of the transaction its predecessor left open): nothing at warning.
#[test]
fn a_committed_transaction_and_one_aborted_by_a_controller_failover() {
    let s = transactions();
    let b = cluster(all_at_end(&s, 3001), &BROKER_EPOCHS, &none);
    let v = b.check();
    v.assert_quiet();
    let inv = klogscan::discover::layout::discover(&b.all());
    let h = klogscan::cluster::leadership::load_all(&inv, None, 64 << 20);
    let dropped: Vec<_> = (h[0].history.dropped_txns.iter())
        .map(|t| (t.begin, t.abort))
        .collect();
    assert_eq!(dropped, [(13, Some(17))]);
}

/// Twin: the abort at epoch 2 has no transaction to end (3001 wrote it though the log had
/// none open): `MetadataBatchLoaderTest.testUnexpectedAbortTransaction`
/// (`MetadataBatchLoader.replay` throws on an `AbortTransactionRecord` without a
/// `BeginTransactionRecord`; `OffsetControlManager.replay` too).
#[test]
fn twin_an_abort_without_a_transaction_is_reported() {
    let mut s = transactions();
    s.remove(10); // the second BeginTransactionRecord
    let b = cluster(all_at_end(&s, 3001), &BROKER_EPOCHS, &none);
    let v = b.check();
    let r = reported(&v, Kind::MetadataTransactionIncomplete);
    assert!(!r.is_empty(), "{:#?}", all_loud(&v));
    assert!(r.iter().all(|f| f.severity == Severity::Warning));
}

// ----- KIP-853 dynamic quorum -------------------------------------------------------------

/// A quorum formatted `--standalone` (3000 alone: the `0-0` snapshot holding
/// `KRaftVersionRecord` 1 and `VotersRecord` [3000], `Formatter`), 3001 and 3002 added
/// (`AddVoterHandler`: the leader appends a `VotersRecord` with the new set), 3001 elected
/// at epoch 2 by all three, then 3002 removed (`RemoveVoterHandler`) and the
/// `kraft.version` restated by the leader. `last_voters`: the last `VotersRecord`'s bytes.
fn dynamic_quorum(last_voters: Vec<u8>) -> (Vec<Step>, Snap) {
    let mut s = vec![Step::Elect {
        leader: 3000,
        voters: vec![3000],
        granting: vec![3000],
    }];
    s.extend(bootstrap().into_iter().skip(1));
    s.extend([
        Step::Control(KRAFT_VOTERS, voters_record(&[3000, 3001])),
        Step::Control(KRAFT_VOTERS, voters_record(&VOTERS)),
        elect(3001, &VOTERS),
        data(vec![MetaRecord::NoOp]),
        Step::Control(KRAFT_VOTERS, last_voters),
        Step::Control(KRAFT_VERSION, kraft_version(1)),
        data(vec![MetaRecord::NoOp]),
    ]);
    let snap = Snap {
        end: 0,
        epoch: 0,
        image: Vec::new(),
        voters: Some(vec![3000]),
    };
    (s, snap)
}

fn dynamic_nodes(s: &[Step], snap: &Snap) -> Vec<Node> {
    let mut ns = all_at_end(s, 3001);
    for n in &mut ns {
        n.snapshots.push(Snap {
            voters: snap.voters.clone(),
            image: snap.image.clone(),
            ..*snap
        });
    }
    ns
}

/// `KRaftControlRecordStateMachineTest.testUpdateWithoutSnapshot`/`testUpdateWithSnapshot`
/// (voter sets and `kraft.version` read from the snapshot and the log),
/// `KafkaRaftClientReconfigTest.testAddVoter`/`testRemoveVoter`,
/// `RecordsSnapshotWriterTest.testBuilderKRaftVersion1` (the bootstrap snapshot's header
/// batch): nothing at warning.
#[test]
fn a_standalone_quorum_grown_to_three_voters_and_one_removed() {
    let (s, snap) = dynamic_quorum(voters_record(&[3000, 3001]));
    let b = cluster(dynamic_nodes(&s, &snap), &BROKER_EPOCHS, &none);
    b.check().assert_quiet();
}

/// Twin: the last `VotersRecord` is cut short (its voters array ends inside a directory
/// id). `KafkaRaftClient.initialize` → `KRaftControlRecordStateMachine.maybeLoadLog` reads
/// every control record from the snapshot's end at each start and throws on it
/// (`RecordsIterator`, `VotersRecord` deserialisation): no node holding it starts.
#[test]
fn twin_a_voters_record_that_does_not_decode_stops_every_node() {
    let mut cut = voters_record(&[3000, 3001]);
    cut.truncate(20);
    let (s, snap) = dynamic_quorum(cut);
    let b = cluster(dynamic_nodes(&s, &snap), &BROKER_EPOCHS, &none);
    let v = b.check();
    let r = reported(&v, Kind::MetadataLogUnreadable);
    assert_eq!(r.len() % 5, 0, "{:#?}", all_loud(&v));
    assert!(!r.is_empty(), "{:#?}", all_loud(&v));
    assert!(r.iter().all(|f| f.severity == Severity::Error));
}

// ----- a cluster's life -------------------------------------------------------------------

/// The recreated `orders`'s id.
fn orders_v2() -> [u8; 16] {
    topic_id_for("orders, created again")
}

/// Broker 2's epoch after its restart: the offset of its second registration.
const BROKER_2_AGAIN: i64 = 15;

/// [`bootstrap`], then: `metadata.version` bumped to 3.8-IV0 (21) and 4.0-IV1 (23), the
/// ELR feature on (`FeatureControlManager.updateFeatures`: `FeatureLevelRecord`s), a
/// min ISR of 2 on `orders`; broker 2's controlled shutdown (its registration marked
/// `inControlledShutdown`, `orders-0` shrunk to [1] with 2 in the ELR:
/// `PartitionChangeBuilder` with KIP-966), its fencing, new registration, unfencing and
/// return to the ISR (ELR emptied); a controller failover (3002 at epoch 2); `events-0`
/// created on 1 and moved to 2 (`ReplicationControlManager.alterPartitionReassignments`:
/// adding replica, ISR expand, completion); `orders` deleted and created again under a new
/// id (`ReplicationControlManager.deleteTopic`, `createTopic`).
fn life() -> Vec<Step> {
    let e2 = BROKER_EPOCHS[1];
    let mut s = bootstrap();
    s.extend([
        data(vec![metadata_version(21)]),
        data(vec![metadata_version(23)]),
        data(vec![MetaRecord::FeatureLevel {
            name: "eligible.leader.replicas.version".into(),
            feature_level: 1,
        }]),
        data(vec![MetaRecord::Config {
            resource_type: 2,
            resource_name: "orders".into(),
            name: "min.insync.replicas".into(),
            value: Some("2".into()),
        }]),
        data(vec![
            broker_change(2, e2, 0, 1),
            change("orders", 0, |c| {
                c.isr = Some(vec![1]);
                c.eligible_leader_replicas = Some(vec![2]);
            }),
        ]),
        data(vec![broker_change(2, e2, 1, 0)]),
    ]);
    assert_eq!(end_of(&s), BROKER_2_AGAIN);
    s.extend([
        data(vec![register(2, BROKER_2_AGAIN, 22, true)]),
        data(vec![broker_change(2, BROKER_2_AGAIN, -1, 0)]),
        data(vec![change("orders", 0, |c| {
            c.isr = Some(vec![1, 2]);
            c.eligible_leader_replicas = Some(vec![]);
        })]),
        elect(3002, &VOTERS),
    ]);
    s.extend(reassignment());
    s.extend([
        data(vec![MetaRecord::RemoveTopic {
            topic_id: topic_id_for("orders"),
        }]),
        data(vec![
            MetaRecord::Topic {
                name: "orders".into(),
                topic_id: orders_v2(),
            },
            MetaRecord::Partition(klogscan::read::format::metadata::PartitionRecord {
                topic_id: orders_v2(),
                replicas: vec![2, 1],
                isr: vec![2, 1],
                leader: 2,
                ..Default::default()
            }),
        ]),
    ]);
    s
}

/// `events-0` created on broker 1 and moved to broker 2.
fn reassignment() -> Vec<Step> {
    vec![
        data(vec![
            topic("events"),
            partition("events", 0, &[1], &[1], (1, 0, 0)),
        ]),
        data(vec![change("events", 0, |c| {
            c.replicas = Some(vec![1, 2]);
            c.adding_replicas = Some(vec![2]);
        })]),
        data(vec![isr("events", 0, &[1, 2])]),
        data(vec![change("events", 0, |c| {
            c.replicas = Some(vec![2]);
            c.isr = Some(vec![2]);
            c.leader = 2;
            c.adding_replicas = Some(vec![]);
            c.removing_replicas = Some(vec![]);
        })]),
    ]
}

/// Each broker's replica of the recreated `orders-0` (led by 2 at epoch 0); `stale`: broker
/// 1's is the deleted incarnation's (its `partition.metadata` names the old id).
fn orders_replicas(stale: bool) -> impl Fn(i32) -> Vec<PartitionBuilder> {
    move |id| {
        let old = stale && id == 1;
        let topic_id = Some(if old {
            topic_id_for("orders")
        } else {
            orders_v2()
        });
        let p = replica("orders", 0, &[(0, 3)]).broker_files(PartitionFileOptions {
            topic_id,
            ..Default::default()
        });
        vec![p]
    }
}

/// `ReplicationControlManagerTest.testCreateTopics`/`testDeleteTopics`/
/// `testReassignPartitions`/`testEligibleLeaderReplicas_ShrinkAndExpandIsr`/
/// `testProcessBrokerHeartbeatInControlledShutdown`, `QuorumControllerTest.
/// testUpgradeFromPreProductionVersion`/`testFenceMultipleBrokers`, `MetadataLoaderTest.
/// testLoadEmptySnapshot…`: the whole life, the brokers holding the new `orders-0` and the
/// broker epochs of their last registrations. Nothing at warning.
#[test]
fn a_clusters_life_with_elr_reassignment_and_a_recreated_topic() {
    let s = life();
    let epochs = [BROKER_EPOCHS[0], BROKER_2_AGAIN];
    let b = cluster(all_at_end(&s, 3002), &epochs, &orders_replicas(false));
    b.check().assert_quiet();
}

/// Twin: broker 1 still holds the deleted `orders`'s replica under its old id: the image
/// names `orders` with another id, so the broker's next start finds a stray log
/// (`LogManager.isStrayKraftReplica`: topic id mismatch): `stray_replica`.
#[test]
fn twin_a_replica_of_the_deleted_incarnation_is_stray() {
    let s = life();
    let epochs = [BROKER_EPOCHS[0], BROKER_2_AGAIN];
    let b = cluster(all_at_end(&s, 3002), &epochs, &orders_replicas(true));
    let v = b.check();
    let stray: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::StrayReplica)
        .map(|f| (f.source.broker_id, f.topic.as_str()))
        .collect();
    assert_eq!(stray, [(Some(1), "orders")], "{:#?}", all_loud(&v));
}
