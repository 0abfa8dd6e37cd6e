//! `ActivationRecordsGeneratorTest.testActivationMessageForNonEmptyLogWithMigrations` (an
//! in-progress transaction aborted at activation), `KRaftMigrationDriverTest.testControllerFailover`
//! and `testMigrationWithClientException` (`MigrationRecordConsumer.abortMigration` stops the
//! controller; the next one aborts the transaction and the driver migrates again).

use super::{
    MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, replica, zk_partitions, zk_rest,
};
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, partition, topic};
use klogscan::finding::Kind;
use klogscan::read::format::metadata::MetaRecord;

/// The migrated brokers (KRaft), each with its copies of `orders-0` and `orders-1` as
/// ZooKeeper left them.
fn with_orders(mig: &Migration) -> crate::kafka_quiet_cluster_cases::Brokers {
    let replicas = |_| {
        vec![
            replica("orders", 0, &ORDERS_0_ZK, &[]),
            replica("orders", 1, &ORDERS_1_ZK, &[]),
        ]
    };
    cluster(mig, true, replicas, |_, _| {})
}

/// The migration's first attempt: the "ZK Migration" transaction and a first batch read
/// from ZooKeeper a moment earlier (`orders-0` then at leader epoch 4, partition epoch 12),
/// then the controller fails (a ZooKeeper client error: `abortMigration` →
/// `fatalFaultHandler`); the next controller's activation (a new quorum epoch) writes
/// `AbortTransactionRecord` "Controller failover" (`recordsForNonEmptyLog` with a
/// transaction start offset) if `aborted`, and the driver migrates again from the start.
fn life(aborted: bool) -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(super::MIGRATED_AT + 20 * SEC);
    mig.m.batch(&[MetaRecord::BeginTransaction {
        name: Some("ZK Migration".into()),
    }]);
    mig.m.batch(&[
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 4, 12)),
    ]);
    mig.m.at(super::MIGRATED_AT + 40 * SEC);
    mig.m.elect();
    if aborted {
        mig.m.batch(&[MetaRecord::AbortTransaction {
            reason: Some("Controller failover".into()),
        }]);
    }
    mig.m.at(super::MIGRATED_AT + 50 * SEC);
    mig.migrate(&[zk_partitions(), zk_rest()]);
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// The failover's log: the aborted transaction's records (the topic and `orders-0` at
/// epoch 4) are never applied (`MetadataLoader`/`QuorumController` replay them only at the
/// End), the second migration creates the topic once, with the epochs ZooKeeper has at
/// the time (9 and 2): nothing at warning or above, one dropped transaction in the replay.
/// Near miss: the next controller's abort missing (a second `BeginTransactionRecord` inside
/// the first transaction, which the loader rejects): `metadata_transaction_incomplete`.
#[test]
fn a_migration_aborted_by_a_controller_failover_and_run_again() {
    for aborted in [true, false] {
        let mig = life(aborted);
        let b = with_orders(&mig);
        let h = history_of(&b);
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        assert_eq!((s.leader, s.leader_epoch, s.partition_epoch), (1, 9, 15));
        let v = b.check();
        let incomplete = of_kind(&v, Kind::MetadataTransactionIncomplete);
        if aborted {
            assert_eq!(h.history.dropped_txns.len(), 1);
            assert!(h.history.dropped_txns[0].abort.is_some());
            assert!(
                h.history.txn_errors.is_empty(),
                "{:?}",
                h.history.txn_errors
            );
            v.assert_quiet();
        } else {
            assert_eq!(h.history.txn_errors.len(), 1, "{:?}", h.history.txn_errors);
            assert!(
                incomplete.iter().any(|f| !f.is_empty()),
                "{}",
                all_lines(&v)
            );
        }
    }
}

/// The same failover at 3.4-IV0, where the migration has no transaction (`beginMigration`
/// writes nothing: "This is not safe since a controller failover or processing error may lead
/// to partially migrated metadata", KIP-868's motive): the first attempt's `TopicRecord` and
/// `PartitionRecord` stay, and the next controller's migration writes `orders`' `TopicRecord`
/// again under the same id. A 3.4 or 3.5 controller's replay took it (its
/// `ReplicationControlManager.replay(TopicRecord)` overwrote the topic); from 3.6 the replay
/// throws ("Found duplicate TopicRecord for orders with topic ID …") and the controller stops,
/// which is what every release that can still read the log (3.6 to 3.9, then 4.x) does with
/// it: `metadata_record_rejected`, consistent with them. The near miss is the 3.6 case above
/// (the transaction aborted, nothing reported).
#[test]
fn a_partial_migration_at_3_4_run_again_writes_the_topic_twice() {
    let mut mig = Migration::bootstrap(super::MV_3_4);
    mig.m.at(super::MIGRATED_AT + 20 * SEC);
    mig.m.batch(&[
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 4, 12)),
    ]);
    mig.m.at(super::MIGRATED_AT + 40 * SEC);
    mig.m.elect();
    mig.m.at(super::MIGRATED_AT + 50 * SEC);
    mig.migrate(&[zk_partitions(), zk_rest()]);
    mig.finalize(T0 + 400 * SEC);
    let b = with_orders(&mig);
    let h = history_of(&b);
    assert_eq!(
        h.history.refused_topics.len(),
        1,
        "{:?}",
        h.history.refused_topics
    );
    let v = b.check();
    let rejected = of_kind(&v, Kind::MetadataRecordRejected);
    assert!(rejected.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
}
