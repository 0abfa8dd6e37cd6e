//! Replicas of one partition on three KRaft brokers as replication leaves them: followers
//! behind the leader (in and out of the ISR) with the high watermarks and epoch caches a
//! follower keeps, a clean leader change whose old leader truncated to the new leader's
//! epoch end (KIP-101/279), an old leader that has not yet truncated, and a follower that
//! restarted from the leader's log start after retention.

use super::kraft::{
    MetaLog, SEC, bootstrap, broker_change, broker_epoch_at_start, change, isr, partition,
    register, topic,
};
use super::{Brokers, T0, from, replica, rolling};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

/// `orders-0` created on brokers 1–3, led by 1 at epoch 0, at `T0` - 30 s.
fn created() -> MetaLog {
    let mut m = bootstrap();
    m.at(T0 - 30 * SEC);
    m.batch(&[
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
    ]);
    m
}

/// Write brokers 1–3: broker `id`'s log dir from `ld(id)` with broker epoch `epoch(id)`,
/// and its copy of the metadata log `meta()`.
fn brokers(
    ld: impl Fn(i32) -> LogDirBuilder,
    epoch: impl Fn(i32) -> i64,
    meta: impl Fn() -> MetaLog,
) -> Brokers {
    let mut b = Brokers::new();
    for id in 1..=3 {
        let dir = b.write(id, "data", ld(id), Some(epoch(id)));
        meta().write(&dir);
    }
    b
}

/// The leader (1) at log end 100 with high watermark 95, the smallest log end of its ISR
/// (`Partition.maybeIncrementLeaderHW`); follower 2 in the ISR one fetch behind: log end
/// 95, high watermark 90, the leader's as of its last fetch bounded by its own log end
/// (`ReplicaFetcherThread.processPartitionData` → `UnifiedLog.maybeUpdateHighWatermark`);
/// follower 3 out of the ISR (`Partition.maybeShrinkIsr` after `replica.lag.time.max.ms`,
/// the controller's `alterPartition`), at log end and high watermark 40, its segments
/// rolled at other offsets. Each follower's `leader-epoch-checkpoint` names only the epochs
/// of the batches it fetched (`UnifiedLog.appendAsFollower` →
/// `LeaderEpochFileCache.assign`).
#[test]
fn followers_behind_the_leader_in_and_out_of_the_isr() {
    let ld = |id: i32| {
        let (p, hw) = match id {
            1 => (replica("orders", 0, &[(0, 20)]), 95),
            2 => (replica("orders", 0, &[(0, 19)]), 90),
            _ => (rolling("orders", 0, &[(0, 8)], 25), 40),
        };
        LogDirBuilder::new(id)
            .partition(p)
            .high_watermark("orders", 0, hw)
    };
    let meta = || {
        let mut m = created();
        m.at(T0 + 10 * SEC);
        m.batch(&[isr("orders", 0, &[1, 2])]);
        m
    };
    let b = brokers(ld, broker_epoch_at_start, meta);
    b.check().assert_quiet();
}

/// Broker 1 led `orders-0` at epoch 0 and stopped (its session expired: fenced) holding
/// 45–49, which neither follower had fetched (high watermark 45); the controller elected 2
/// from the ISR at epoch 1 (`PartitionChangeBuilder.tryElection`), which wrote 45–94. Broker
/// 1 came back (a new registration, unfenced), became a follower and truncated to the end of
/// epoch 0 at the leader, 45 (`AbstractFetcherThread.truncateToEpochEndOffsets`,
/// `LeaderEpochFileCache.endOffsetFor`; KIP-101, KIP-279), fetched epoch 1 and rejoined the
/// ISR. All three replicas then hold the same batches and the epoch cache `0 0`, `1 45`
/// (`ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponse`-style).
#[test]
fn clean_leader_change_after_the_old_leader_truncated() {
    let ld = |id: i32| LogDirBuilder::new(id).partition(replica("orders", 0, &[(0, 9), (1, 10)]));
    let epoch = |id: i32| {
        if id == 1 {
            12
        } else {
            broker_epoch_at_start(id)
        }
    };
    let meta = || {
        let mut m = created();
        m.at(T0 + 9 * SEC + 500);
        m.batch(&[
            broker_change(1, broker_epoch_at_start(1), 1, 0),
            change("orders", 0, |c| {
                c.leader = 2;
                c.isr = Some(vec![2, 3]);
            }),
        ]);
        m.at(T0 + 12 * SEC);
        assert_eq!(m.p.next_offset(), 12);
        m.batch(&[register(1, 12, 11, true)]);
        m.at(T0 + 13 * SEC);
        m.batch(&[broker_change(1, 12, -1, 0)]);
        m.at(T0 + 16 * SEC);
        m.batch(&[isr("orders", 0, &[2, 3, 1])]);
        m
    };
    let b = brokers(ld, epoch, meta);
    b.check().assert_quiet();
}

/// Brokers 1–3 after broker 1's controlled shutdown moved `orders-0`'s leadership to 2 at
/// epoch 1 (2 in the ISR: `ReplicationControlManager.handleBrokerInControlledShutdown`)
/// and took 1 out of the ISR, so 1 stopped its fetcher without truncating
/// (`ReplicaManager.applyLocalFollowersDelta`: during controlled shutdown a replica out of
/// the ISR is stopped) and shut down cleanly with its tail of epoch 0, 45–49 (`tail`),
/// which the followers had not fetched (its high watermark 45); 2 wrote 45–69 at epoch 1.
fn moved_away(tail: impl Fn(&mut PartitionBuilder)) -> Brokers {
    let ld = |id: i32| {
        if id == 1 {
            let mut p = replica("orders", 0, &[(0, 9)]);
            tail(&mut p);
            LogDirBuilder::new(1)
                .partition(p)
                .high_watermark("orders", 0, 45)
        } else {
            LogDirBuilder::new(id).partition(replica("orders", 0, &[(0, 9), (1, 5)]))
        }
    };
    let meta = || {
        let mut m = created();
        m.at(T0 + 9 * SEC + 500);
        m.batch(&[
            broker_change(1, broker_epoch_at_start(1), 0, 1),
            change("orders", 0, |c| {
                c.leader = 2;
                c.isr = Some(vec![2, 3]);
            }),
        ]);
        m.at(T0 + 11 * SEC);
        m.batch(&[broker_change(1, broker_epoch_at_start(1), 1, 0)]);
        m
    };
    brokers(ld, broker_epoch_at_start, meta)
}

/// [`moved_away`] where the tail is the idempotent producer's batch that the producer then
/// retried to the new leader (`Sender` on NOT_LEADER_OR_FOLLOWER, same sequence): 2 holds the
/// same records at 45, stamped with epoch 1 (`partitionLeaderEpoch` is outside the CRC).
/// Broker 1 truncates it and fetches it again when it follows; nothing differs.
#[test]
fn old_leaders_tail_retried_to_the_new_leader() {
    moved_away(|p| super::traffic(p, 0, 1, 20))
        .check()
        .assert_quiet();
}

/// [`moved_away`] where the tail is an `acks=1` producer's batch that was never retried: the
/// new leader holds other records at 45. They were never committed (above the high
/// watermark, and 2 was elected from the ISR, a clean election, as the metadata log shows);
/// broker 1 truncates them when it next follows (`AbstractFetcherThread.truncateToEpochEndOffsets`:
/// epoch 0 ends at 45 on the leader; KIP-101, KIP-279). This is what every leader change
/// under `acks=1` traffic can leave on the old leader until it restarts.
#[test]
fn old_leader_moved_away_in_controlled_shutdown_keeps_its_uncommitted_tail() {
    let lost = |p: &mut PartitionBuilder| {
        let values = (0..5).map(|i| format!("acks=1 write {i}"));
        p.append(Batch::new(Producer::PLAIN).values(values));
    };
    moved_away(lost).check().assert_quiet();
}
/// Time-based retention on the leader (1) and follower 2 deleted the segments below 40
/// (`UnifiedLog.deleteOldSegments`, each replica on its own clock; their snapshots with them,
/// the epoch cache truncated to the new start: `LeaderEpochFileCache.truncateFromStart`).
/// Follower 3 was down longer than the retention: its fetch at 5 was out of range, so it
/// emptied its log and started it at the leader's log start
/// (`AbstractFetcherThread.handleOutOfRangeError` → `ReplicaFetcherThread` →
/// `UnifiedLog.truncateFullyAndStartAt(40)`), fetched from there and rejoined the ISR: its
/// producer state starts with producer 300's batch at sequence 25, and its epoch cache with
/// `0 40` (`AbstractFetcherThreadTest.testFetchOutOfRangeOffsetAfterTruncation`-,
/// `ReplicaFetcherThreadTest`-style).
#[test]
fn follower_restarted_from_the_leaders_log_start_after_retention() {
    let ld = |id: i32| {
        let p = if id == 3 {
            from("orders", 0, 40, &[(0, 12)], 20)
        } else {
            replica("orders", 0, &[(0, 20)])
        };
        LogDirBuilder::new(id).partition(p)
    };
    let b = brokers(ld, broker_epoch_at_start, created);
    for id in 1..=2 {
        let d = b.path(id, "data").join("orders-0");
        for base in [0, 20] {
            for ext in ["log", "index", "timeindex", "snapshot"] {
                let _ = std::fs::remove_file(d.join(format!("{base:020}.{ext}")));
            }
        }
        std::fs::write(d.join("leader-epoch-checkpoint"), "0\n1\n0 40\n").unwrap();
    }
    let v = b.check();
    v.assert_quiet();
    let starts: Vec<_> = (v.scan.partitions.iter())
        .filter(|p| p.topic == "orders")
        .map(|p| p.log_start_offset)
        .collect();
    assert_eq!(starts, [Some(40); 3], "{starts:?}");
}

/// Broker 1's controlled shutdown moved `orders-0`'s leadership to 2 at epoch 1 when all
/// three replicas ended at 45; 2 has written nothing since. The new leader assigned its epoch
/// at its log end on becoming leader (`Partition.makeLeader` →
/// `UnifiedLog.maybeAssignEpochStartOffset`), so its `leader-epoch-checkpoint` ends with
/// `1 45`, which no batch carries; follower 3 assigns epochs only from the batches it fetches
/// (`UnifiedLog.appendAsFollower`), so its cache stops at epoch 0; broker 1, stopped, too.
#[test]
fn new_leaders_epoch_assigned_before_any_write_only_on_the_leader() {
    let ld = |id: i32| LogDirBuilder::new(id).partition(replica("orders", 0, &[(0, 9)]));
    let meta = || {
        let mut m = created();
        m.at(T0 + 9 * SEC + 500);
        m.batch(&[
            broker_change(1, broker_epoch_at_start(1), 0, 1),
            change("orders", 0, |c| {
                c.leader = 2;
                c.isr = Some(vec![2, 3]);
            }),
        ]);
        m.at(T0 + 11 * SEC);
        m.batch(&[broker_change(1, broker_epoch_at_start(1), 1, 0)]);
        m
    };
    let b = brokers(ld, broker_epoch_at_start, meta);
    let two = b.path(2, "data").join("orders-0/leader-epoch-checkpoint");
    std::fs::write(two, "0\n2\n0 0\n1 45\n").unwrap();
    b.check().assert_quiet();
}
