//! Partition reassignments (KIP-455 through the KRaft controller): one in progress with the
//! adding replica still catching up, an intra-broker move in progress (the `-future` copy
//! `ReplicaAlterLogDirsThread` fills, KIP-113/KIP-858), and completed ones whose removed
//! replica the old broker renamed `-delete` or already deleted.

use super::kraft::{
    MetaLog, SEC, bootstrap, bootstrap_at, broker_epoch_at_start, change, partition, topic,
};
use super::{Brokers, T0, directory_uuid, replica};
use klogscan::finding::Kind;
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::LogDirBuilder;

/// Write brokers 1–3 (`ld(id)` into `data`), each with the metadata log `meta()`.
fn brokers(ld: impl Fn(i32) -> LogDirBuilder, meta: impl Fn() -> MetaLog) -> Brokers {
    let mut b = Brokers::new();
    for id in 1..=3 {
        let dir = b.write(id, "data", ld(id), Some(broker_epoch_at_start(id)));
        meta().write(&dir);
    }
    b
}

/// `topic`-`n` on brokers 1 and 2, led by 1 at epoch 0, and its reassignment to [2, 3]
/// started (`ReplicationControlManager.changePartitionReassignment`: the replicas are the
/// target plus the removing ones, `adding` [3], `removing` [1]; the new list holds every old
/// replica, so no leader epoch bump:
/// `PartitionChangeBuilder.triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`).
fn reassigning(m: &mut MetaLog, topic: &str, n: i32) {
    m.batch(&[change(topic, n, |c| {
        c.replicas = Some(vec![2, 3, 1]);
        c.adding_replicas = Some(vec![3]);
        c.removing_replicas = Some(vec![1]);
    })]);
}

/// Reassignment of `orders-0` from [1, 2] to [2, 3] in progress: broker 3 created its replica
/// (`ReplicaManager.applyDelta`: a new local follower) and has fetched 30 of the leader's
/// 60 offsets; it is not yet in the ISR, so the reassignment is not complete
/// (`PartitionReassignmentReplicas.maybeCompleteReassignment`). Its high watermark is its
/// log end (30), below the leader's.
#[test]
fn reassignment_in_progress_with_the_adding_replica_catching_up() {
    let ld = |id: i32| {
        let n = if id == 3 { 6 } else { 12 };
        LogDirBuilder::new(id).partition(replica("orders", 0, &[(0, n)]))
    };
    let meta = || {
        let mut m = bootstrap();
        m.at(T0 - 30 * SEC);
        m.batch(&[
            topic("orders"),
            partition("orders", 0, &[1, 2], &[1, 2], (1, 0, 0)),
        ]);
        m.at(T0 + 5 * SEC);
        reassigning(&mut m, "orders", 0);
        m
    };
    brokers(ld, meta).check().assert_quiet();
}

/// The reassignments of `orders-0` and `orders-1` from [1, 2] to [2, 3] completed: broker 3
/// caught up, the leader's AlterPartition put it in the ISR, and the controller finished the
/// reassignment in the same record (`PartitionChangeBuilder.completeReassignmentIfNeeded`:
/// replicas and ISR [2, 3]; the leader 1 removed, so 2 elected at epoch 1), which 2 then
/// led. Broker 1 stopped and deleted its replicas (`ReplicaManager.applyDelta` →
/// `stopPartitions` with delete → `LogManager.asyncDelete`): `orders-0` is still renamed
/// `-delete` (within `file.delete.delay.ms`), `orders-1` already removed; neither is in
/// broker 1's checkpoints any more. Broker 1 keeps its replica of `payments-0`.
#[test]
fn reassignments_completed_old_replica_renamed_delete_or_removed() {
    let ld = |id: i32| {
        let mut ld = LogDirBuilder::new(id).partition(replica("payments", 0, &[(0, 3)]));
        if id == 1 {
            ld = ld.partition(replica("orders", 0, &[(0, 12)]));
        } else {
            for n in 0..2 {
                ld = ld.partition(replica("orders", n, &[(0, 12), (1, 4)]));
            }
        }
        ld
    };
    let meta = || {
        let mut m = bootstrap();
        m.at(T0 - 30 * SEC);
        m.batch(&[
            topic("orders"),
            partition("orders", 0, &[1, 2], &[1, 2], (1, 0, 0)),
            partition("orders", 1, &[1, 2], &[1, 2], (1, 0, 0)),
            topic("payments"),
            partition("payments", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
        ]);
        m.at(T0 + 5 * SEC);
        for n in 0..2 {
            reassigning(&mut m, "orders", n);
        }
        m.at(T0 + 11 * SEC + 500);
        for n in 0..2 {
            m.batch(&[change("orders", n, |c| {
                c.isr = Some(vec![2, 3]);
                c.leader = 2;
                c.replicas = Some(vec![2, 3]);
                c.adding_replicas = Some(vec![]);
                c.removing_replicas = Some(vec![]);
            })]);
        }
        m
    };
    let b = brokers(ld, meta);
    let one = b.path(1, "data");
    let pay = replica("payments", 0, &[(0, 3)]).log_end_offset();
    super::kraft::delete_replica(&one, "orders", 0, &[("payments", 0, pay)]);
    b.check().assert_quiet();
}

/// Near miss of the above: broker 1 was down when the reassignment completed and still holds
/// a live `orders-1` the image no longer gives it (`LogManager.isStrayKraftReplica`):
/// `stray_replica`, so the quiet verdict above is not for want of a replay.
#[test]
fn a_removed_replica_left_live_is_stray() {
    let ld = |id: i32| {
        let mut ld = LogDirBuilder::new(id);
        for n in 0..2 {
            ld = ld.partition(replica("orders", n, &[(0, 12)]));
        }
        ld
    };
    let meta = || {
        let mut m = bootstrap();
        m.at(T0 - 30 * SEC);
        m.batch(&[
            topic("orders"),
            partition("orders", 1, &[1, 2], &[1, 2], (1, 0, 0)),
        ]);
        m.batch(&[partition("orders", 0, &[2, 3], &[2, 3], (2, 0, 0))]);
        m.at(T0 + 11 * SEC + 500);
        m.batch(&[change("orders", 1, |c| {
            c.isr = Some(vec![2, 3]);
            c.leader = 2;
            c.replicas = Some(vec![2, 3]);
        })]);
        m
    };
    let v = brokers(ld, meta).check();
    let stray: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::StrayReplica)
        .map(|f| (f.source.broker_id, f.topic.clone(), f.partition))
        .collect();
    assert_eq!(
        stray,
        [
            (Some(1), "orders".to_string(), 0),
            (Some(1), "orders".to_string(), 1)
        ]
    );
}

/// Brokers 1–3 with `orders-0`, broker 2's `-future` copy of it in `data-2` holding 40 of
/// its 60 offsets, the image assigning broker 2's replica to its log dir `assigned`.
fn moving(assigned: &'static str) -> Brokers {
    let dirs = |id: i32| -> Vec<[u8; 16]> {
        let mut d = vec![directory_uuid(id, "data")];
        if id == 2 {
            d.push(directory_uuid(2, "data-2"));
        }
        d
    };
    let meta = move || {
        let mut m = bootstrap_at(19, &dirs);
        m.at(T0 - 30 * SEC);
        let mut p = partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0));
        if let MetaRecord::Partition(p) = &mut p {
            p.directories = (1..=3)
                .map(|id| directory_uuid(id, if id == 2 { assigned } else { "data" }))
                .collect();
        }
        m.batch(&[topic("orders"), p]);
        m
    };
    let ld = |id: i32| LogDirBuilder::new(id).partition(replica("orders", 0, &[(0, 12)]));
    let mut b = brokers(ld, meta);
    let two = b.write(
        2,
        "data-2",
        LogDirBuilder::new(2).partition(replica("orders", 0, &[(0, 8)])),
        Some(broker_epoch_at_start(2)),
    );
    std::fs::rename(
        two.join("orders-0"),
        two.join("orders-0.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-future"),
    )
    .unwrap();
    b
}

/// An intra-broker move in progress on broker 2 (`kafka-reassign-partitions --reassignment-json`
/// with a log dir; KIP-113): its `orders-0` is live in `data` and `ReplicaAlterLogDirsThread`
/// has copied 40 of its 60 offsets into `orders-0.<id>-future` in `data-2`
/// (`ReplicaManager.alterReplicaLogDirs`, `appendRecordsToFollowerOrFutureReplica`). At MV
/// 3.7-IV4 the brokers register their log dirs and the image assigns each replica a
/// directory (`PartitionRecord.directories`, KIP-858): still `data`'s, since the broker
/// tells the controller the new one (`AssignReplicasToDirs`) only once the future copy
/// caught up. The future log is in `data-2`'s checkpoints (`LogManager.logsByDir` lists
/// future logs; `ReplicaManager.checkpointHighWatermarks` writes their high watermark).
#[test]
fn intra_broker_move_in_progress_with_a_future_copy() {
    let v = moving("data").check();
    v.assert_quiet();
    assert!(
        (v.scan.partitions.iter()).any(|p| p.path.ends_with("-future")),
        "the future copy is read"
    );
}

/// Near miss of the above: the image already assigns broker 2's replica to `data-2` (the
/// broker sent `AssignReplicasToDirs` and stopped before the swap), so its next start makes
/// the future copy the live log (`LogManager.recoverAbandonedFutureLogs`):
/// `abandoned_future_replica`.
#[test]
fn a_future_copy_the_image_already_assigns_is_abandoned() {
    let v = moving("data-2").check();
    let kinds: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::AbandonedFutureReplica)
        .map(|f| f.source.broker_id)
        .collect();
    assert_eq!(kinds, [Some(2)]);
}
