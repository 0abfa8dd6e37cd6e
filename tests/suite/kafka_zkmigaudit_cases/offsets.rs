//! Consumer offsets committed under ZooKeeper: `__consumer_offsets` is a topic like any
//! other to the migration (`ZkTopicMigrationClient.iterateTopics` copies its 50 partitions),
//! and a commit carries the leader epoch of the record it was made after (KIP-320), an
//! epoch of the ZooKeeper era no metadata record names. `ZkMigrationIntegrationTest.testMigrate`
//! and `testDualWrite` produce and consume across the migration; this case holds the
//! commits they leave against the migrated lineage.

use super::zk_rest;
use super::{MIGRATED_AT, MV_3_6, Migration, ORDERS_1_ZK, cluster, replica, zk_partitions};
use crate::kafka_imgaudit_cases::{all_lines, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{SEC, change, partition, topic};
use klogscan::finding::Kind;
use klogscan::testkit::PartitionBuilder;
use klogscan::testkit::group_scenarios::GroupLog;
use serde_json::json;

/// The migration with `__consumer_offsets`' 50 partitions (leader 1, epoch 0, as ZooKeeper
/// created them), then the dual-write move of `orders-0` to 2 (epoch 9 → 10).
fn life() -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    let mut offsets = vec![topic("__consumer_offsets")];
    offsets.extend(
        (0..50).map(|n| partition("__consumer_offsets", n, &[1, 2, 3], &[1, 2, 3], (1, 0, 0))),
    );
    mig.migrate(&[zk_partitions(), offsets, zk_rest()]);
    mig.m.at(T0 + 250 * SEC);
    mig.m.batch(&[change("orders", 0, |c| c.leader = 2)]);
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// Where `group` lives among 50 `__consumer_offsets` partitions
/// (`Utils.abs(groupId.hashCode) % 50`).
fn offsets_partition(group: &str) -> i32 {
    let h = (group.encode_utf16()).fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (if h == i32::MIN { 0 } else { h.abs() }) % 50
}

/// `group`'s commit of `orders-0` at `offset` after a record of leader epoch `epoch`
/// (`OffsetCommitValue` v3).
fn commit(group: &str, offset: i64, epoch: i32) -> GroupLog {
    let mut log = GroupLog::new();
    let key = json!({"group": group, "topic": "orders", "partition": 0});
    let value =
        json!({"offset": offset, "leaderEpoch": epoch, "metadata": "", "commitTimestamp": T0});
    log.batch(vec![(1, key, Some((3, value)))]);
    log
}

/// `orders-0`: epochs 0, 4, 9 under ZooKeeper (offsets 0–9, 10–19, 20–29), 10 after the
/// move (30–39).
const ORDERS_0: [(i32, usize); 3] = [(0, 2), (4, 2), (9, 2)];

/// Each broker's replicas, with the groups' `__consumer_offsets` partitions.
fn replicas(groups: &[(&str, i64, i32)]) -> Vec<PartitionBuilder> {
    let mut r = vec![
        replica("orders", 0, &ORDERS_0, &[(10, 2)]),
        replica("orders", 1, &ORDERS_1_ZK, &[]),
    ];
    for &(g, o, e) in groups {
        r.push(commit(g, o, e).builder(offsets_partition(g)));
    }
    r
}

/// A group that committed under ZooKeeper at epoch 4 (offset 15, inside epoch 4's range of
/// the replicas' `leader-epoch-checkpoint`) and one that committed after the move at epoch
/// 10: the broker's `LeaderEpochFileCache.endOffsetFor` answers both (4 ends at 20, 10 at
/// the log end), validation passes; nothing at warning or above. Near miss: a commit at
/// epoch 12, which neither the data nor the migrated metadata log ever had:
/// `committed_leader_epoch_unknown`.
#[test]
fn offsets_committed_under_zookeeper_validate_against_the_migrated_lineage() {
    let quiet = [("zk-era", 15, 4), ("kraft-era", 35, 10)];
    let never = [("zk-era", 15, 4), ("never-given", 35, 12)];
    for groups in [&quiet[..], &never[..]] {
        let parts: Vec<i32> = groups.iter().map(|g| offsets_partition(g.0)).collect();
        assert_ne!(parts[0], parts[1], "one group per partition");
        let b = cluster(&life(), true, |_| replicas(groups), |_, _| {});
        let v = b.check();
        let unknown = of_kind(&v, Kind::CommittedLeaderEpochUnknown);
        if groups[1].2 == 10 {
            v.assert_quiet();
        } else {
            let loud = (unknown.iter().flatten())
                .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
                .filter(|f| f.group.as_deref() == Some("never-given"))
                .count();
            assert!(loud > 0, "{}", all_lines(&v));
        }
    }
}
