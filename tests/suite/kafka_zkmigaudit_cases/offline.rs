//! A partition ZooKeeper's controller had left without a leader when the migration ran
//! (every ISR member down: `PartitionStateMachine` writes leader -1, keeps the last ISR
//! member and bumps the leader epoch), copied as is by `ZkTopicMigrationClient.iterateTopics`
//! (`setLeader(leaderAndIsr.leader)`, `setIsr`), then given a leader by the KRaft controller
//! once that member is back (`ReplicationControlManager` → `PartitionChangeBuilder`, an
//! election from the ISR). `KRaftMigrationDriverTest.testTopicDualWriteSnapshot` and
//! `testTopicDualWriteDelta` hold the dual write of such changes to ZooKeeper; this case
//! holds the metadata log and data they leave.

use super::{MIGRATED_AT, MV_3_6, Migration, ORDERS_1_ZK, cluster, replica, zk_rest};
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, change, partition, topic};
use klogscan::finding::Kind;

/// `orders-0` under ZooKeeper: led by 1 at epochs 0, 4 and 9, then leaderless at epoch 10
/// with ISR [1] (partition epoch 16) when the migration copies it; the KRaft controller
/// elects `leader` with ISR [`leader`] (epoch 11), from outside the ISR as an unclean
/// election writes it (leader recovery state RECOVERING, 3.2-IV0 and later).
fn life(leader: i32) -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    let first = vec![
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1], (-1, 10, 16)),
        partition("orders", 1, &[2, 3, 1], &[2, 3, 1], (2, 2, 6)),
    ];
    mig.migrate(&[first, zk_rest()]);
    mig.m.at(T0 + 250 * SEC);
    mig.m.batch(&[change("orders", 0, |c| {
        c.leader = leader;
        c.isr = Some(vec![leader]);
        if leader != 1 {
            // `PartitionChangeBuilder.electLeader`, an unclean choice: RECOVERING
            c.leader_recovery_state = 1;
        }
    })]);
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// The migrated leaderless partition replays at epoch 10 with no leader, the election of 1
/// from the ISR at 11, whose batches follow the ZooKeeper era's on every replica: nothing
/// at warning or above. Near miss: the controller gives `orders-0` to 2, not in the ISR
/// the migration copied ([1]), RECOVERING: an unclean election
/// (`unclean.leader.election.enable`), `unclean_leader_election`.
#[test]
fn a_partition_leaderless_at_the_migration_gets_a_leader_in_kraft() {
    for leader in [1, 2] {
        let data = |_| {
            vec![
                replica("orders", 0, &[(0, 2), (4, 2), (9, 2)], &[(11, 2)]),
                replica("orders", 1, &ORDERS_1_ZK, &[]),
            ]
        };
        let b = cluster(&life(leader), true, data, |_, _| {});
        let h = history_of(&b);
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        assert_eq!(
            (s.leader, s.leader_epoch, s.partition_epoch),
            (leader, 11, 17)
        );
        let v = b.check();
        if leader == 1 {
            v.assert_quiet();
        } else {
            let n = of_kind(&v, Kind::UncleanLeaderElection);
            assert!(n.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
        }
    }
}
