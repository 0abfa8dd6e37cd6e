//! A reassignment ZooKeeper's controller had started when the migration ran:
//! `ZkTopicMigrationClient.iterateTopics` copies the partition's adding and removing replicas
//! into its `PartitionRecord` (`setAddingReplicas`, `setRemovingReplicas`), and the KRaft
//! controller completes it (`ReplicationControlManager` → `PartitionChangeBuilder`: once the
//! ISR holds every target replica, one `PartitionChangeRecord` sets the target replicas and
//! clears both lists). The Kafka tests of the migration copy such a record
//! (`ZkMigrationClientTest` builds assignments with adding/removing replicas); no test of
//! the migration left one on disk before this one.

use super::{MIGRATED_AT, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, replica, zk_rest};
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, change, partition, topic};
use klogscan::finding::Kind;
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::PartitionBuilder;

/// `orders-1` being moved from [2, 1] to [2, 3] under ZooKeeper: replicas [2, 3, 1],
/// adding [3], removing [1], ISR [2, 1], led by 2 at epoch 2 (partition epoch 6); broker 3
/// joins the ISR after the migration and the controller completes the move in one record.
fn life() -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    let mut moving = partition("orders", 1, &[2, 3, 1], &[2, 1], (2, 2, 6));
    if let MetaRecord::Partition(p) = &mut moving {
        p.adding_replicas = vec![3];
        p.removing_replicas = vec![1];
    }
    let first = vec![
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 9, 15)),
        moving,
    ];
    mig.migrate(&[first, zk_rest()]);
    mig.m.at(T0 + 250 * SEC);
    mig.m.batch(&[change("orders", 1, |c| {
        c.replicas = Some(vec![2, 3]);
        c.isr = Some(vec![2, 3]);
        c.adding_replicas = Some(vec![]);
        c.removing_replicas = Some(vec![]);
    })]);
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// Broker `id`'s replicas: broker 1 no longer holds `orders-1` (unless `kept`), broker 3's
/// copy fetched from the leader holds the same batches.
fn replicas(id: i32, kept: bool) -> Vec<PartitionBuilder> {
    let mut r = vec![replica("orders", 0, &ORDERS_0_ZK, &[])];
    if id != 1 || kept {
        r.push(replica("orders", 1, &ORDERS_1_ZK, &[]));
    }
    r
}

/// The migrated reassignment and its completion replay to `orders-1` on [2, 3], nothing
/// adding or removing; broker 3's replica, which was not in the ISR when the migration
/// copied it, holds the ZooKeeper-era epochs it fetched: nothing at warning or above.
/// Near miss: broker 1, which the completed move removed, kept its replica live (stray at
/// its next KRaft start): `stray_replica`.
#[test]
fn a_zookeeper_reassignment_in_flight_at_the_migration_completes_in_kraft() {
    let b = cluster(&life(), true, |id| replicas(id, false), |_, _| {});
    let h = history_of(&b);
    let s = h.timeline("orders", 1).unwrap().current().unwrap().clone();
    assert_eq!((s.leader, s.replicas.clone()), (2, vec![2, 3]), "{s:?}");
    b.check().assert_quiet();

    let v = cluster(&life(), true, |id| replicas(id, true), |_, _| {}).check();
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
