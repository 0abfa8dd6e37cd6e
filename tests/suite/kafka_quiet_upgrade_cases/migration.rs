//! A broker after the ZooKeeper → KRaft migration (Kafka 3.7): its `meta.properties` as the
//! migrated broker keeps it (v0 with `directory.id`, or v1 with `node.id`), the metadata log
//! replica beginning with the controller's bootstrap in pre-migration mode and the migration
//! transaction, and data partitions whose leader epochs carried over from ZooKeeper: epochs
//! far above 0 in the batches and `leader-epoch-checkpoint`, none of them in a
//! `PartitionRecord` but the last.

use super::check;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{
    MetaRecord, PartitionChange, PartitionRecord, RegisterBroker,
};
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::metadata::MetadataLogBuilder;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::Path;

const CLUSTER: &str = "q1Sh-9_ISia_zwGINzRvyQ";
const T2024: i64 = 1_704_067_200_000;
const DAY: i64 = 86_400_000;

/// `orders-0`'s leader epochs under ZooKeeper, then the first one KRaft gave.
const ZK_EPOCHS: [i32; 4] = [0, 3, 12, 23];
const KRAFT_EPOCH: i32 = 24;

/// `orders-0`: three batches at each ZooKeeper-era epoch, then (if `kraft`) two at the epoch
/// the controller gave after the migration; `orders-1`: epochs 2 and 17, led since.
fn data(kraft_epoch: Option<i32>) -> (PartitionBuilder, PartitionBuilder) {
    let mut o0 = PartitionBuilder::new("orders", 0).start_time(T2024 - 300 * DAY);
    for e in ZK_EPOCHS {
        o0.set_leader_epoch(e);
        for _ in 0..3 {
            o0.append(Batch::new(Producer::PLAIN).records(2));
        }
        o0.advance_time(30 * DAY);
    }
    if let Some(e) = kraft_epoch {
        let now = o0.now();
        o0.advance_time(T2024 + 2 * DAY - now);
        o0.set_leader_epoch(e);
        o0.append(Batch::new(Producer::PLAIN).records(2));
        o0.append(Batch::new(Producer::idempotent(10_000, 0)).records(2));
    }
    let mut o1 = PartitionBuilder::new("orders", 1).start_time(T2024 - 200 * DAY);
    for e in [2, 17] {
        o1.set_leader_epoch(e);
        o1.append(Batch::new(Producer::PLAIN).records(3));
    }
    (o0, o1)
}

fn partition(n: i32, epoch: i32, part_epoch: i32) -> MetaRecord {
    MetaRecord::Partition(PartitionRecord {
        partition_id: n,
        topic_id: topic_id_for("orders"),
        replicas: vec![1, 2, 3],
        isr: vec![1, 2, 3],
        leader: 1,
        leader_epoch: epoch,
        partition_epoch: part_epoch,
        ..Default::default()
    })
}

fn metadata_version(level: i16) -> MetaRecord {
    MetaRecord::FeatureLevel {
        name: "metadata.version".into(),
        feature_level: level,
    }
}

fn register(epoch: i64, fenced: bool) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: 1,
        incarnation_id: [epoch as u8; 16],
        broker_epoch: epoch,
        fenced,
        ..Default::default()
    })
}

/// The metadata log of the migration, as the 3.7 controller writes it:
/// `ActivationRecordsGenerator.recordsForEmptyLog` (bootstrap transaction: `metadata.version`
/// 3.7-IV4, `ZkMigrationState` PRE_MIGRATION), the ZooKeeper brokers' registrations, then
/// `QuorumController.MigrationRecordConsumer` (`BeginTransaction` "ZK Migration", the
/// records `ZkTopicMigrationClient.iterateTopics` builds from ZooKeeper — leader and
/// partition epochs as ZooKeeper held them — and `ZkMigrationState` MIGRATION with the
/// `EndTransaction`), then the broker's KRaft registration, a preferred-leader election
/// giving `orders-0` epoch 24, POST_MIGRATION once the controllers left migration mode
/// (`recordsForNonEmptyLog`), and a later `metadata.version` upgrade to 3.9-IV0 with the
/// record versions it brings (`RegisterBrokerRecord` v3 with log dirs, `PartitionChangeRecord`
/// v1 with directories: `ReplicationControlManager.handleAssignReplicasToDirs`); with the
/// controller's snapshot after POST_MIGRATION.
fn metadata_log(dir: &Path) {
    let mut m = MetadataLogBuilder::new(T2024);
    m.batch(&[
        MetaRecord::BeginTransaction {
            name: Some("Bootstrap records".into()),
        },
        metadata_version(19),
        MetaRecord::ZkMigrationState { state: 2 },
        MetaRecord::EndTransaction,
    ]);
    m.advance(1000);
    m.batch(&[register(1_000_000, false)]);
    m.advance(1000);
    m.batch(&[MetaRecord::BeginTransaction {
        name: Some("ZK Migration".into()),
    }]);
    m.batch(&[
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: topic_id_for("orders"),
        },
        partition(0, 23, 41),
        partition(1, 17, 30),
    ]);
    m.batch(&[MetaRecord::ProducerIds {
        broker_id: 1,
        broker_epoch: 1_000_000,
        next_producer_id: 10_000,
    }]);
    m.batch(&[
        MetaRecord::ZkMigrationState { state: 1 },
        MetaRecord::EndTransaction,
    ]);
    m.advance(DAY);
    m.batch(&[register(1_000_100, true)]);
    m.batch(&[MetaRecord::BrokerRegistrationChange(
        klogscan::read::format::metadata::BrokerRegistrationChange {
            broker_id: 1,
            broker_epoch: 1_000_100,
            fenced: -1,
            ..Default::default()
        },
    )]);
    m.advance(DAY);
    m.batch(&[MetaRecord::PartitionChange(PartitionChange {
        partition_id: 0,
        topic_id: topic_id_for("orders"),
        leader: 1,
        ..Default::default()
    })]);
    m.advance(DAY);
    m.raft_epoch(2);
    m.batch(&[MetaRecord::ZkMigrationState { state: 3 }]);
    // the controller's snapshot of the image there (`SnapshotGenerator`), which every broker
    // fetches: the migrated topic at its carried-over epochs, the migration state final
    let image = vec![
        metadata_version(19),
        MetaRecord::ZkMigrationState { state: 3 },
        register(1_000_100, false),
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: topic_id_for("orders"),
        },
        partition(0, 24, 42),
        partition(1, 17, 30),
        MetaRecord::ProducerIds {
            broker_id: 1,
            broker_epoch: 1_000_000,
            next_producer_id: 10_000,
        },
    ];
    let snap_end = m.next_offset();
    // `kafka-features upgrade --metadata 3.9`: MV 3.9-IV0, then the broker's re-registration
    // with its log dir (RegisterBrokerRecord v3) and the replicas' directory assignment
    // (`AssignReplicasToDirs` → PartitionChangeRecord v1 with `Directories`).
    m.advance(DAY);
    m.batch(&[metadata_version(21)]);
    m.advance(DAY);
    let dir_id = topic_id_for("log-dir-1");
    let mut reg = register(1_000_200, true);
    if let MetaRecord::RegisterBroker(b) = &mut reg {
        b.log_dirs = vec![dir_id];
    }
    m.batch(&[reg]);
    m.batch(&[MetaRecord::BrokerRegistrationChange(
        klogscan::read::format::metadata::BrokerRegistrationChange {
            broker_id: 1,
            broker_epoch: 1_000_200,
            fenced: -1,
            ..Default::default()
        },
    )]);
    let unknown = [0u8; 16];
    for n in [0, 1] {
        m.batch(&[MetaRecord::PartitionChange(PartitionChange {
            partition_id: n,
            topic_id: topic_id_for("orders"),
            directories: Some(vec![dir_id, unknown, unknown]),
            ..Default::default()
        })]);
    }
    m.snapshot(snap_end, 2, image).write(dir).unwrap();
}

/// `meta.properties` as the migrated broker keeps it: v0 (`broker.id`) with the
/// `directory.id` a 3.7 start added (`MetaPropertiesEnsemble.Copier`), or v1 (`node.id`).
fn meta(v1: bool) -> String {
    let dir_id = uuid_text(&topic_id_for("log-dir-1"));
    let id = if v1 {
        "version=1\nnode.id=1"
    } else {
        "version=0\nbroker.id=1"
    };
    format!("#\n#Tue Jan 02 10:00:00 UTC 2024\n{id}\ncluster.id={CLUSTER}\ndirectory.id={dir_id}\n")
}

fn migrated(kraft_epoch: Option<i32>, v1: bool) -> super::Quiet {
    migrated_with(
        kraft_epoch,
        v1,
        |_| {},
        &[Some("3.7.0"), Some("3.9.0"), None],
    )
}

/// [`migrated`], then `extra` on the log dir.
fn migrated_with(
    kraft_epoch: Option<i32>,
    v1: bool,
    extra: impl FnOnce(&Path),
    versions: &[Option<&'static str>],
) -> super::Quiet {
    let (o0, o1) = data(kraft_epoch);
    let ld = LogDirBuilder::new(1)
        .cluster_id(CLUSTER)
        .partition(o0)
        .partition(o1);
    check(
        ld,
        |d| {
            std::fs::write(d.join("meta.properties"), meta(v1)).unwrap();
            metadata_log(d);
            extra(d);
        },
        versions,
    )
}

/// `PartitionRecord` of a migrated topic carries the leader and partition epochs ZooKeeper
/// had (`ZkTopicMigrationClient.iterateTopics`: `setLeaderEpoch(leaderAndIsr.leaderEpoch)`),
/// so the data's earlier epochs (0, 3, 12) have no record in the metadata log, and the
/// controller's first change goes on from there (`PartitionChangeBuilder`: epoch 23 → 24).
/// The log begins with the bootstrap and migration transactions (`ZkMigrationStateRecord`
/// PRE_MIGRATION, MIGRATION, POST_MIGRATION). Either `meta.properties` a migrated broker
/// keeps starts (`MetaPropertiesEnsemble.verify`). Nothing at warning or above.
#[test]
fn a_broker_after_the_zookeeper_to_kraft_migration() {
    for v1 in [false, true] {
        let q = migrated(Some(KRAFT_EPOCH), v1);
        let lec =
            std::fs::read_to_string(q.dir.path().join("orders-0/leader-epoch-checkpoint")).unwrap();
        assert!(
            lec.starts_with("0\n5\n0 0\n3 6\n12 12\n23 18\n24 24\n"),
            "{lec}"
        );
        q.assert_quiet();
    }
}

/// The twin: `orders-0`'s last batches carry epoch 26, which no metadata record gave (the
/// election after the migration gave 24, nothing after). A broker stamps the leader epoch of
/// its metadata image (`Partition.makeLeader` → `UnifiedLog.appendAsLeader`), and a follower
/// fetches only at the epoch it knows (`Partition.fetchRecords` refuses another
/// `currentLeaderEpoch`: FENCED/UNKNOWN_LEADER_EPOCH), so epoch 26 in the data means this
/// broker applied a record giving it — yet its own metadata replica, in the same log dir and
/// shut down cleanly with it (`.kafka_cleanshutdown`: nothing was written after), ends at
/// 24. klogscan leaves epochs above the history's latest unjudged ("the metadata copy may be
/// older than the data", `cluster/leadership/epochs.rs`), which holds for a copy of a live
/// broker, not for a cleanly shut-down one. Should be reported.
#[test]
fn twin_a_data_epoch_the_metadata_log_never_gave_is_reported() {
    let q = migrated(Some(26), false);
    assert!(!q.all_loud().is_empty(), "nothing reported");
    q.assert_reported(Kind::LeaderEpochCheckpointMismatch);
}

/// The near miss of the twin: the same data in a log dir without `.kafka_cleanshutdown` (a
/// copy of a running broker, or one that crashed): its metadata replica may have stopped
/// short of the data, so epoch 26 above its latest is not judged.
#[test]
fn without_a_clean_shutdown_an_epoch_above_the_history_is_not_judged() {
    let q = migrated_with(
        Some(26),
        false,
        |d| {
            std::fs::remove_file(d.join(".kafka_cleanshutdown")).unwrap();
        },
        &[None],
    );
    let mismatch: Vec<_> = (q.scan.findings.iter())
        .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
        .collect();
    assert!(mismatch.is_empty(), "{mismatch:#?}");
}

/// The twin of the migrated epochs: the migration carried epoch 23 for `orders-0`, but its
/// data goes back from 23 to 12 after (an epoch regression in the log, which
/// `LeaderEpochFileCache.assign` never lets into the cache). Reported.
#[test]
fn twin_an_epoch_going_back_after_the_migration_is_reported() {
    let q = migrated(Some(12), false);
    q.assert_reported(Kind::LeaderEpochRegression);
}

/// `orders-1` without its `partition.metadata`.
fn no_topic_id(d: &Path) {
    std::fs::remove_file(d.join("orders-1/partition.metadata")).unwrap();
}

/// The twin of the layout: `orders-1` kept no `partition.metadata` (a pre-2.8 partition dir,
/// as `layout::a_zookeeper_log_dir_from_before_topic_ids_and_cluster_ids` holds healthy on a
/// ZooKeeper broker), now on a KRaft node. From 3.7.1 `LogManager.isStrayKraftReplica`
/// treats a log without a topic id as stray ("The topicId does not exist in …, treat it as
/// a stray log"): reported as `stray_replica`. Up to 3.6 the log loads and takes the image's
/// id (`Partition.createLogIfNotExists` → `UnifiedLog.assignTopicId`): nothing to report.
#[test]
fn twin_a_partition_without_a_topic_id_on_a_kraft_broker_is_reported() {
    let versions = [Some("3.6.0"), Some("3.7.1"), Some("3.9.0"), None];
    let q = migrated_with(Some(KRAFT_EPOCH), false, no_topic_id, &versions);
    for (v, r) in &q.verify {
        let stray: Vec<_> = (r.findings())
            .filter(|f| f.kind == Kind::StrayReplica && f.topic == "orders" && f.partition == 1)
            .collect();
        assert_eq!(
            stray.len(),
            usize::from(*v != Some("3.6.0")),
            "{v:?}: {stray:#?}"
        );
    }
}

/// Kafka 3.7.0 alone: `LogManager.findStrayReplicas` (from
/// `BrokerMetadataPublisher.initializeManagers` → `deleteStrayKRaftReplicas`) throws
/// RuntimeException for a log without a topic id ("does not have a topic ID, which is not
/// allowed when running in KRaft mode"), caught by `fatalFaultHandler.handleFault("Error
/// starting LogManager")`: the broker process stops. The same data must be reported at
/// `--broker-version 3.7.0`, as a start that fails.
#[test]
fn a_3_7_0_broker_stops_on_a_log_without_a_topic_id() {
    let q = migrated_with(Some(KRAFT_EPOCH), false, no_topic_id, &[Some("3.7.0")]);
    let (_, r) = &q.verify[0];
    let loud: Vec<_> = r
        .findings()
        .filter(|f| f.severity >= Severity::Warning)
        .collect();
    assert!(!loud.is_empty(), "nothing at warning or above");
    assert!(
        r.broker_startup.iter().any(|s| s.starts == Some(false)),
        "{:#?}",
        r.broker_startup
    );
}
