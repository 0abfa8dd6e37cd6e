//! `ZkMigrationIntegrationTest.testDualWrite`, `testNewAndChangedTopicsInDualWrite` and
//! `testPartitionReassignmentInHybridMode`: after the migration the KRaft controller creates
//! a topic, adds a partition to a migrated topic and reassigns a migrated partition, while
//! the brokers still run as ZooKeeper brokers in migration mode, then restart as KRaft ones.

use super::{
    MIGRATED_AT, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, replica, zk_partitions,
    zk_rest,
};
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, change, partition, topic};
use klogscan::finding::Kind;
use klogscan::testkit::PartitionBuilder;

/// The migration, then in dual-write mode: `events` created (`TopicRecord`, a
/// `PartitionRecord` at leader and partition epoch 0: `ReplicationControlManager.createTopic`),
/// `orders-2` added to the migrated topic (`createPartitions`: epoch 0 beside partitions at
/// ZooKeeper's epochs 9 and 2), `orders-1` reassigned from [2, 3, 1] to [2, 3]
/// (`alterPartitionReassignments`: every target replica in the ISR, the reassignment
/// completes in one `PartitionChangeRecord`, its leader 2 kept); then the brokers' KRaft
/// restart and POST_MIGRATION (if `finalized`).
fn life(finalized: bool) -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    mig.migrate(&[zk_partitions(), zk_rest()]);
    mig.m.at(T0 + 250 * SEC);
    mig.m.batch(&[
        topic("events"),
        partition("events", 0, &[3, 1, 2], &[3, 1, 2], (3, 0, 0)),
    ]);
    mig.m
        .batch(&[partition("orders", 2, &[3, 1, 2], &[3, 1, 2], (3, 0, 0))]);
    mig.m.at(T0 + 260 * SEC);
    mig.m.batch(&[change("orders", 1, |c| {
        c.replicas = Some(vec![2, 3]);
        c.isr = Some(vec![2, 3]);
    })]);
    if finalized {
        mig.finalize(T0 + 400 * SEC);
    }
    mig
}

/// Broker `id`'s replicas: the migrated `orders-0` and `orders-1` (1 left `orders-1` at
/// the reassignment unless `kept`), the new `orders-2` and `events-0` from the KRaft era.
fn replicas(id: i32, kept: bool) -> Vec<PartitionBuilder> {
    let mut r = vec![
        replica("orders", 0, &ORDERS_0_ZK, &[]),
        replica("orders", 2, &[], &[(0, 3)]),
        replica("events", 0, &[], &[(0, 2)]),
    ];
    if id != 1 || kept {
        r.push(replica("orders", 1, &ORDERS_1_ZK, &[]));
    }
    r
}

/// The dual-write changes replay on from the migrated epochs: `orders-1` on [2, 3], still led
/// by 2; the new partitions at epoch 0. Nothing at warning or above, before and after the
/// brokers' KRaft restart: the new partitions' data (epoch 0, from `KRAFT_DATA_AT`) sits
/// beside the migrated ones (ZooKeeper epochs, before the metadata log existed). Near miss:
/// broker 1 kept its replica of `orders-1` after the reassignment removed it (a KRaft
/// broker's start treats it as stray: `LogManager.isStrayKraftReplica`): `stray_replica`.
#[test]
fn topics_created_and_reassigned_in_dual_write() {
    for kraft in [false, true] {
        let b = cluster(&life(kraft), kraft, |id| replicas(id, false), |_, _| {});
        let h = history_of(&b);
        let s = h.timeline("orders", 1).unwrap().current().unwrap().clone();
        assert_eq!((s.leader, s.replicas.clone()), (2, vec![2, 3]), "{s:?}");
        let s = h.timeline("orders", 2).unwrap().current().unwrap().clone();
        assert_eq!((s.leader, s.leader_epoch), (3, 0));
        b.check().assert_quiet();
    }
    let b = cluster(&life(true), true, |id| replicas(id, true), |_, _| {});
    let v = b.check();
    let stray = of_kind(&v, Kind::StrayReplica);
    let on_1 = |f: &&klogscan::finding::Finding| {
        f.topic == "orders" && f.partition == 1 && f.source.broker_id == Some(1)
    };
    assert!(
        stray.iter().any(|fs| fs.iter().any(on_1)),
        "{}",
        all_lines(&v)
    );
}
