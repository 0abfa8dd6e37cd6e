//! `ZkMigrationIntegrationTest.testMigrateTopicDeletions`: topics pending deletion in
//! ZooKeeper when the migration runs are not migrated (`ZkTopicMigrationClient.iterateTopics`
//! leaves out `readPendingTopicDeletions`); the brokers' replicas of them are stray once the
//! KRaft controller sends its full `LeaderAndIsr` (`ReplicaManager.updateStrayLogs`: renamed
//! `-stray`, kept), and the test creates the topics again under new ids.

use super::{
    MIGRATED_AT, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, replica, zk_partitions,
    zk_rest,
};
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, partition};
use klogscan::finding::Kind;
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::{LogDirBuilder, PartitionBuilder, PartitionFileOptions};
use std::path::Path;

/// `audit`'s id under ZooKeeper, and the one it is created again under.
fn old_id() -> [u8; 16] {
    topic_id_for("audit (ZooKeeper)")
}
fn new_id() -> [u8; 16] {
    topic_id_for("audit")
}

/// `audit-0` under ZooKeeper: epochs 0 and 3, topic id [`old_id`].
fn old_replica() -> PartitionBuilder {
    replica("audit", 0, &[(0, 2), (3, 2)], &[]).broker_files(PartitionFileOptions {
        topic_id: Some(old_id()),
        ..Default::default()
    })
}

/// The migration (with `audit` if `migrated`, then removed by the KRaft controller: a
/// `RemoveTopicRecord`), `audit` created again under [`new_id`] in dual-write mode, the
/// brokers' KRaft restart and POST_MIGRATION.
fn life(migrated: bool) -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    let mut first = zk_partitions();
    if migrated {
        first.push(MetaRecord::Topic {
            name: "audit".into(),
            topic_id: old_id(),
        });
        let mut p = partition("audit", 0, &[1, 2, 3], &[1, 2, 3], (1, 3, 7));
        if let MetaRecord::Partition(p) = &mut p {
            p.topic_id = old_id();
        }
        first.push(p);
    }
    mig.migrate(&[first, zk_rest()]);
    mig.m.at(T0 + 240 * SEC);
    if migrated {
        mig.m
            .batch(&[MetaRecord::RemoveTopic { topic_id: old_id() }]);
    }
    mig.m.at(T0 + 250 * SEC);
    mig.m.batch(&[
        MetaRecord::Topic {
            name: "audit".into(),
            topic_id: new_id(),
        },
        partition("audit", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
    ]);
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// The old replica written beside `dir` and moved in as `ReplicaManager.updateStrayLogs`
/// leaves it (`UnifiedLog.logStrayDirName`), out of the log dir's checkpoints.
fn stray_old(dir: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    LogDirBuilder::new(0)
        .partition(old_replica())
        .write(tmp.path())
        .unwrap();
    let name = "audit-0.7d1b7e4f0c2a4e6b9f3a5c1d2e4f6a8b-stray";
    std::fs::rename(tmp.path().join("audit-0"), dir.join(name)).unwrap();
}

/// The pending deletion's replicas renamed `-stray` on every broker, `audit-0` of the new
/// id beside them (epoch 0, from the KRaft era), the old id named by no metadata record:
/// nothing at warning or above. Near miss: `audit` migrated and deleted by the KRaft
/// controller (`RemoveTopicRecord`), then created again, and broker 3 still holding the old
/// incarnation's live `audit-0`: its start renames it `-stray` (`LogManager.loadLog` →
/// `isStrayKraftReplica`: the image has no partition of its topic id), `stray_replica`.
#[test]
fn a_topic_pending_deletion_at_the_migration_is_created_again() {
    let new = || replica("audit", 0, &[], &[(0, 2)]);
    let data = |id: i32, with_new: bool| {
        let mut r = vec![
            replica("orders", 0, &ORDERS_0_ZK, &[]),
            replica("orders", 1, &ORDERS_1_ZK, &[]),
        ];
        if with_new || id != 3 {
            r.push(new());
        } else {
            r.push(old_replica());
        }
        r
    };
    let b = cluster(&life(false), true, |id| data(id, true), |_, d| stray_old(d));
    let h = history_of(&b);
    assert_eq!(h.history.topics.len(), 2, "{:?}", h.history.topics);
    b.check().assert_quiet();

    let b = cluster(&life(true), true, |id| data(id, false), |_, _| {});
    let v = b.check();
    let stray = of_kind(&v, Kind::StrayReplica);
    let on_3 =
        |f: &&klogscan::finding::Finding| f.topic == "audit" && f.source.broker_id == Some(3);
    assert!(
        stray.iter().any(|fs| fs.iter().any(on_3)),
        "{}",
        all_lines(&v)
    );
}

/// Broker 3 kept the pending deletion's replica live (`audit-0` of the ZooKeeper id; the
/// KRaft controller's full `LeaderAndIsr` never reached it before its KRaft restart), the
/// name `audit` live under the new id and assigning broker 3 a replica. Kafka's start
/// (3.7.1 and later) renames it `-stray`: the image has no partition of its topic id
/// (`LogManager.isStrayKraftReplica`), then creates the new incarnation's replica. klogscan
/// says nothing: `stray` judges only a topic id the history names (a never-named id may have
/// been deleted before a log that starts at a snapshot), although this history starts at
/// offset 0 and the broker's own metadata replica was shut down cleanly with the data.
#[test]
#[ignore = "divergence: a live replica of a topic id no record of a complete metadata log names, its name live under another id, is not reported stray (LogManager.isStrayKraftReplica renames it)"]
fn a_pending_deletion_left_live_on_a_kraft_broker_is_stray() {
    let data = |id: i32| {
        let mut r = vec![
            replica("orders", 0, &ORDERS_0_ZK, &[]),
            replica("orders", 1, &ORDERS_1_ZK, &[]),
        ];
        if id == 3 {
            r.push(old_replica());
        } else {
            r.push(replica("audit", 0, &[], &[(0, 2)]));
        }
        r
    };
    let v = cluster(&life(false), true, data, |_, _| {}).check();
    let stray = of_kind(&v, Kind::StrayReplica);
    let on_3 =
        |f: &&klogscan::finding::Finding| f.topic == "audit" && f.source.broker_id == Some(3);
    assert!(
        stray.iter().any(|fs| fs.iter().any(on_3)),
        "{}",
        all_lines(&v)
    );
}
