//! `ZkMigrationIntegrationTest.testDeleteLogOnStartup`: a ZooKeeper broker in migration mode
//! deletes its metadata log at every start (`KafkaServer.startup` →
//! `KafkaRaftManager.maybeDeleteMetadataLogDir`) and fetches it again from the controller,
//! which sends its latest snapshot when its log starts past the fetch offset
//! (`KafkaRaftClient.handleFetchRequest`: snapshot id, then `FetchSnapshot`): the broker's
//! copy begins with the controller's snapshot of the migrated image.

use super::{
    IDS, MIGRATED_AT, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, replica, zk_partitions,
    zk_rest,
};
use crate::kafka_imgaudit_cases::{all_lines, at, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{MetaLog, SEC, change, metadata_version};
use klogscan::finding::Kind;
use klogscan::read::format::metadata::{MetaRecord, RegisterBroker};

/// Where the controller's snapshot ends and every copy of the log starts.
const END: i64 = 40;

/// The image after the migration as `MetadataImage.write` writes it at 3.6-IV2: the
/// features with the migration state (`FeaturesImage.write`: `ZkMigrationStateRecord`
/// MIGRATION), the migrating brokers registered and unfenced (`RegisterBrokerRecord` v2
/// with `IsMigratingZkBroker`), the migrated topic at ZooKeeper's epochs, its config and the
/// producer id block; then in the log (if `elected`) the dual-write move of `orders-0`'s
/// leadership to 2 (epoch 9 → 10).
fn life(elected: bool) -> Migration {
    let mut m = MetaLog::starting_at(MIGRATED_AT, END);
    let mut image = vec![
        metadata_version(MV_3_6),
        MetaRecord::ZkMigrationState { state: 1 },
    ];
    for id in IDS {
        let r = MetaRecord::RegisterBroker(RegisterBroker {
            broker_id: id,
            is_migrating_zk_broker: true,
            incarnation_id: [id as u8 + 10; 16],
            broker_epoch: 4 + i64::from(id),
            ..Default::default()
        });
        image.push(at(&r, 2));
    }
    image.extend(zk_partitions());
    image.extend(zk_rest());
    m.snapshot_at(END, image);
    m.at(T0 + 250 * SEC);
    if elected {
        m.batch(&[change("orders", 0, |c| c.leader = 2)]);
    } else {
        m.batch(&[MetaRecord::NoOp]);
    }
    Migration {
        m,
        level: MV_3_6,
        epochs: [-1; 3],
    }
}

/// The brokers in migration mode, each copy of the metadata log starting at the snapshot:
/// the replay takes the migrated image from it and the election on from epoch 9; nothing at
/// warning or above. Near miss: the snapshot alone, without the election record: the
/// data's epoch 10 on the cleanly shut-down brokers is one the metadata never gave,
/// `leader_epoch_checkpoint_mismatch`.
#[test]
fn a_migrating_broker_fetches_its_metadata_log_from_the_controllers_snapshot() {
    let data = |_| {
        vec![
            replica("orders", 0, &ORDERS_0_ZK, &[(10, 2)]),
            replica("orders", 1, &ORDERS_1_ZK, &[]),
        ]
    };
    let b = cluster(&life(true), false, data, |_, _| {});
    let h = history_of(&b);
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!((s.leader, s.leader_epoch, s.partition_epoch), (2, 10, 16));
    b.check().assert_quiet();

    let v = cluster(&life(false), false, data, |_, _| {}).check();
    let n = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
    assert!(n.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
}
