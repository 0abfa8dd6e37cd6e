//! A ZooKeeper broker lost around the migration: `KRaftMigrationDriver` waits until every
//! broker in ZooKeeper's `/brokers/ids` and every broker named in a topic's assignment has
//! registered with the controller (`areZkBrokersReadyForMigration`; once migrated, the
//! dual-write mode waits for nothing: `KRaftMigrationDriverTest.testSkipWaitForBrokersInDualWrite`),
//! so broker 4 registered as a migrating broker, then its session ended (fenced) and its
//! disk was lost; ZooKeeper's controller had taken it out of the ISR but kept it among the
//! replicas, and `ZkTopicMigrationClient.iterateTopics` copies those replicas as they are.

use super::{
    MIGRATED_AT, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, registration, replica,
    zk_rest,
};
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, change, partition, topic};
use klogscan::finding::Kind;

/// Broker 4 registered (migrating) and fenced; `orders-1` on [2, 4, 3], ISR [2, 3], led by 2.
/// If `elect_4`, the controller's record then gives the partition to 4 alone, RECOVERING.
fn life(elect_4: bool) -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 15 * SEC);
    let epoch = mig.m.p.next_offset();
    mig.m.batch(&[registration(4, epoch, true)]);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    let first = vec![
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 9, 15)),
        partition("orders", 1, &[2, 4, 3], &[2, 3], (2, 2, 6)),
    ];
    mig.migrate(&[first, zk_rest()]);
    if elect_4 {
        mig.m.at(T0 + 250 * SEC);
        mig.m.batch(&[change("orders", 1, |c| {
            c.leader = 4;
            c.isr = Some(vec![4]);
            c.leader_recovery_state = 1;
        })]);
    }
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// The replica on the fenced broker whose log dir is gone is an offline replica to Kafka
/// (the partition under-replicated, led by 2): nothing at warning or above. Near miss: a record
/// giving the partition to 4 — which no controller writes (`ReplicationControlManager`
/// elects only an active broker) and which is an unclean choice besides:
/// `unclean_leader_election`.
#[test]
fn a_replica_on_a_zookeeper_broker_lost_at_the_migration() {
    for elect_4 in [false, true] {
        let data = |id: i32| {
            let mut r = vec![replica("orders", 0, &ORDERS_0_ZK, &[])];
            if id != 1 {
                r.push(replica("orders", 1, &ORDERS_1_ZK, &[]));
            }
            r
        };
        let b = cluster(&life(elect_4), true, data, |_, _| {});
        let h = history_of(&b);
        let s = h.timeline("orders", 1).unwrap().current().unwrap().clone();
        assert_eq!(s.replicas, vec![2, 4, 3]);
        let v = b.check();
        if elect_4 {
            let n = of_kind(&v, Kind::UncleanLeaderElection);
            assert!(n.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
        } else {
            v.assert_quiet();
        }
    }
}
