//! An unclean election ZooKeeper's controller made before the migration (IBP 3.2 and later
//! keep `leader_recovery_state` in the partition's state znode: KIP-704): the migration
//! copies RECOVERING into the `PartitionRecord` (`ZkTopicMigrationClient.iterateTopics`:
//! `setLeaderRecoveryState`), and the leader's first `AlterPartition` to KRaft's controller
//! sets RECOVERED with the ISR it grows back (`ReplicationControlManager.alterPartition`).

use super::{MIGRATED_AT, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, replica, zk_rest};
use crate::kafka_imgaudit_cases::{all_lines, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, change, partition, topic};
use klogscan::finding::Kind;
use klogscan::read::format::metadata::MetaRecord;

/// `orders-1` copied as led by 2 alone, RECOVERING (epoch 2, partition epoch 6); then
/// RECOVERED with ISR [2, 3, 1]; then (if `again`) the controller gives it to 3 alone,
/// RECOVERING: a second unclean election, in KRaft.
fn life(again: bool) -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    let mut p = partition("orders", 1, &[2, 3, 1], &[2], (2, 2, 6));
    if let MetaRecord::Partition(p) = &mut p {
        p.leader_recovery_state = 1;
    }
    let first = vec![
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 9, 15)),
        p,
    ];
    mig.migrate(&[first, zk_rest()]);
    mig.m.at(T0 + 250 * SEC);
    mig.m.batch(&[change("orders", 1, |c| {
        c.isr = Some(vec![2, 3, 1]);
        c.leader_recovery_state = 0;
    })]);
    if again {
        mig.m.at(T0 + 260 * SEC);
        mig.m.batch(&[change("orders", 1, |c| {
            c.isr = Some(vec![2]);
        })]);
        mig.m.batch(&[change("orders", 1, |c| {
            c.leader = 3;
            c.isr = Some(vec![3]);
            c.leader_recovery_state = 1;
        })]);
    }
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// The election ZooKeeper made happened before the metadata log; what the log holds is a
/// recovering partition that recovers, which Kafka's loader takes as it comes: nothing at
/// warning or above. Near miss: an unclean election the log itself records (3 from outside
/// the ISR [2], RECOVERING): `unclean_leader_election`.
#[test]
fn a_partition_recovering_from_a_zookeeper_unclean_election() {
    for again in [false, true] {
        let data = |_| {
            vec![
                replica("orders", 0, &ORDERS_0_ZK, &[]),
                replica("orders", 1, &ORDERS_1_ZK, &[]),
            ]
        };
        let v = cluster(&life(again), true, data, |_, _| {}).check();
        if again {
            let n = of_kind(&v, Kind::UncleanLeaderElection);
            assert!(n.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
        } else {
            v.assert_quiet();
        }
    }
}
