//! `ZkMigrationIntegrationTest.testMigrate`, `KRaftMigrationDriverTest.testBeginMigrationOnce`
//! and `testCoalesceMigrationRecords`, `BufferingBatchConsumerTest`, and
//! `ActivationRecordsGeneratorTest`: the metadata log a migration writes, at a
//! `metadata.version` with metadata transactions and at 3.4-IV0 without them.

use super::{
    IDS, KRAFT_DATA_AT, MIGRATED_AT, MV_3_4, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster,
    replica, zk_partitions, zk_rest,
};
use crate::kafka_imgaudit_cases::{
    all_lines, dump, dumped_versions, history_of, of_kind, segment_of,
};
use crate::kafka_quiet_cluster_cases::kraft::{SEC, change};
use crate::kafka_quiet_cluster_cases::{Brokers, CLUSTER, T0};
use klogscan::finding::Kind;

/// The cluster's metadata log at `level`: bootstrap in pre-migration mode, the migrating
/// brokers, the migration in two coalesced batches (`BufferingBatchConsumer` hands on
/// batches of at least `zookeeper.metadata.migration.min.batch.size` records, the last one
/// smaller), then in dual-write mode (if `elected`) the controller moving `orders-0`'s
/// leadership to 2 (`PartitionChangeBuilder`: leader epoch 9 → 10, partition epoch 15 →
/// 16, on from the epochs ZooKeeper had), and (if `finalized`) the brokers' KRaft restart
/// and POST_MIGRATION.
fn life(level: i16, elected: bool, finalized: bool) -> Migration {
    let mut mig = Migration::bootstrap(level);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    mig.migrate(&[zk_partitions(), zk_rest()]);
    mig.m.at(T0 + 250 * SEC);
    if elected {
        mig.m.batch(&[change("orders", 0, |c| c.leader = 2)]);
    }
    if finalized {
        mig.finalize(T0 + 400 * SEC);
    }
    mig
}

/// Every broker's replicas: the ZooKeeper-era batches, then `orders-0` led by 2 at epoch 10
/// (`kraft_epoch`).
fn brokers(mig: &Migration, kraft: bool, kraft_epoch: i32) -> Brokers {
    cluster(
        mig,
        kraft,
        |_| {
            vec![
                replica("orders", 0, &ORDERS_0_ZK, &[(kraft_epoch, 2)]),
                replica("orders", 1, &ORDERS_1_ZK, &[]),
            ]
        },
        |_, _| {},
    )
}

/// `testMigrate` at 3.6-IV2 (`zkClustersForAllMigrationVersions`): the bootstrap in a
/// "Bootstrap records" transaction with PRE_MIGRATION (`recordsForEmptyLog`), one "ZK
/// Migration" transaction (`testBeginMigrationOnce`: `MigrationRecordConsumer.beginMigration`
/// writes one `BeginTransactionRecord`) over the coalesced batches
/// (`testCoalesceMigrationRecords`), the `PartitionRecord`s at ZooKeeper's epochs, the
/// `ProducerIdsRecord` at broker epoch -1, POST_MIGRATION after the controllers' restart
/// (`testActivationMessageForNonEmptyLogWithMigrations`: MIGRATION with migration disabled).
/// Both while the brokers still run as ZooKeeper brokers in migration mode (`meta.properties`
/// v0 with `directory.id`, clean-shutdown epoch -1, the log before their KRaft restart) and
/// after it (v1, their KRaft broker epochs): nothing at warning or above from scan, verify or
/// the merge, and the replay has `orders-0` led by 2 at epoch 10, no transaction dropped.
/// Near miss: the dual-write election's record missing, the data's epoch 10 is one no record
/// gave, in a cleanly shut-down KRaft broker's log dir: `leader_epoch_checkpoint_mismatch`.
#[test]
fn a_cluster_migrated_in_one_metadata_transaction() {
    for kraft in [false, true] {
        let mig = life(MV_3_6, true, kraft);
        let b = brokers(&mig, kraft, 10);
        let h = history_of(&b);
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        assert_eq!((s.leader, s.leader_epoch, s.partition_epoch), (2, 10, 16));
        assert!(
            h.history.dropped_txns.is_empty(),
            "{:?}",
            h.history.dropped_txns
        );
        assert!(
            h.history.txn_errors.is_empty(),
            "{:?}",
            h.history.txn_errors
        );
        let text = dump(&segment_of(&b, 1, 0));
        let begins = (dumped_versions(&text).into_iter())
            .filter(|(t, _)| t == "BEGIN_TRANSACTION_RECORD")
            .count();
        assert_eq!(begins, 2, "bootstrap and migration");
        assert_eq!(
            text.matches(r#""isMigratingZkBroker":true"#).count(),
            IDS.len(),
            "{text}"
        );
        b.check().assert_quiet();
    }
    let mig = life(MV_3_6, false, true);
    let v = brokers(&mig, true, 10).check();
    let n = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
    assert!(n.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
}

/// `testMigrate` at 3.4-IV0, the first version a migration runs at: no metadata
/// transactions (`MetadataVersion.isMetadataTransactionSupported` from 3.6-IV1), so the
/// bootstrap is one atomic batch of `metadata.version` and PRE_MIGRATION (3.7.0's
/// `ActivationRecordsGenerator.recordsForEmptyLog`: `ControllerResult.atomicOf`; 3.9 no longer
/// bootstraps a migration below 3.6-IV1, it only carries such a log on) and the migration's batches
/// are plain ones (`beginMigration` writes nothing, `completeMigration` MIGRATION alone).
/// Nothing at warning or above, after the brokers' KRaft restart and before it (a 3.4 to
/// 3.6 broker in migration mode: `meta.properties` v0 without `directory.id`); the replay
/// takes the migrated epochs as at 3.6.
/// Near miss as above: without the dual-write election, the data's epoch 10 is reported.
#[test]
fn a_cluster_migrated_at_3_4_without_transactions() {
    let mig = life(MV_3_4, true, true);
    let b = brokers(&mig, true, 10);
    let h = history_of(&b);
    assert_eq!(h.metadata_version(), Some(MV_3_4));
    let s = h.timeline("orders", 1).unwrap().current().unwrap().clone();
    assert_eq!((s.leader, s.leader_epoch, s.partition_epoch), (2, 2, 6));
    let text = dump(&segment_of(&b, 1, 0));
    assert!(!text.contains("BEGIN_TRANSACTION_RECORD"), "{text}");
    b.check().assert_quiet();
    // the brokers before their KRaft restart, as 3.4 to 3.6 run them in migration mode:
    // `meta.properties` v0 without `directory.id` (KIP-858 came with 3.7)
    let pre = life(MV_3_4, true, false);
    let b = cluster(
        &pre,
        false,
        |_| {
            vec![
                replica("orders", 0, &ORDERS_0_ZK, &[(10, 2)]),
                replica("orders", 1, &ORDERS_1_ZK, &[]),
            ]
        },
        |id, d| {
            let m = format!("version=0\nbroker.id={id}\ncluster.id={CLUSTER}\n");
            std::fs::write(d.join("meta.properties"), m).unwrap();
        },
    );
    b.check().assert_quiet();
    let mig = life(MV_3_4, false, true);
    let v = brokers(&mig, true, 10).check();
    let n = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
    assert!(n.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
}

/// The data's KRaft-era batches begin after the dual-write election.
const _: () = assert!(KRAFT_DATA_AT > T0 + 250 * SEC);
