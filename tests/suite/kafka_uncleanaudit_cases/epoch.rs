//! `EpochDrivenReplicationProtocolAcceptanceTest` (ZooKeeper mode, two brokers 100 and 101,
//! `topic1-0` — here `orders-0` — on both): the methods `kafka_fetcher_truncation_cases` did
//! not cite. No metadata log: a ZooKeeper-mode broker's log dirs hold the replicas, their
//! `leader-epoch-checkpoint` and offset checkpoints, and the elections only as the epochs the
//! batches carry.

use super::cut;
use crate::kafka_fetcher_truncation_cases::{log, run};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, Verdict};
use klogscan::finding::Severity;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

/// Brokers `(id, copy of orders-0, checkpointed high watermark)` side by side.
fn pair(copies: Vec<(i32, PartitionBuilder, i64)>) -> Verdict {
    let mut b = Brokers::new();
    for (id, p, hw) in copies {
        let ld = LogDirBuilder::new(id)
            .partition(p)
            .high_watermark("orders", 0, hw);
        b.write(id, "data", ld, None);
    }
    b.check()
}

/// Broker 100's copy after its crash and restart: the first 50 of the 100 single-record
/// batches of epoch 0 (`deleteMessagesFromLogFile` cut the segment in half; recovery,
/// `LogLoader.recoverSegment`, drops the torn batch), then as leader at epoch 2 the two
/// batches of 77 records the buffering producer sent (50–126, 127–203).
fn restarted_leader() -> PartitionBuilder {
    let mut p = log(0, &run(0, "m", 0, 50));
    p.set_leader_epoch(2);
    for (i, at) in [(0, 50), (1, 127)] {
        let b = Batch::new(Producer::PLAIN).records(77);
        p.append(b.at(T0 + (300 + i) * 1000 + at));
    }
    p
}

/// `offsetsShouldNotGoBackwards`: broker 100 crashes (its clean-shutdown file deleted), half
/// its log is cut away, it restarts and leads, the producer writes two batches of 77, then
/// broker 101 (0–99 at epoch 0, all acknowledged) comes back and follows. KIP-101: it asks
/// for the end of epoch 0, the leader answers 50 (its epoch 2 starts there), 101 truncates to
/// 50 and fetches the leader's batches whole — never a batch appended past offsets it holds
/// (the pre-0.11 high-watermark truncation that left offsets going backwards). The test then
/// reads 101's copy monotonic and the two files equal. On disk after the resync: two equal
/// copies (0–49 at epoch 0, 50–203 at epoch 2), high watermark 204 on both: no finding.
/// Near miss: 101 before it follows (0–99 at epoch 0, high watermark 100): the leader's
/// epoch 0 ends at 50, so 101 truncates to 50 — an error, since 50–99 were acknowledged (the
/// records the test's file cut destroyed; the offsets it reads back monotonic are the
/// leader's from 50).
#[test]
fn a_crashed_leader_cut_in_half_makes_the_follower_truncate_to_its_epoch_end() {
    let v = pair(vec![
        (100, restarted_leader(), 204),
        (101, restarted_leader(), 204),
    ]);
    v.assert_quiet();
    assert_eq!(cut(&v), None);
    let before = log(0, &run(0, "m", 0, 100));
    let v = pair(vec![(100, restarted_leader(), 204), (101, before, 100)]);
    assert_eq!(
        cut(&v),
        Some(super::Cut {
            at: 50,
            truncates: Some((101, 50)),
            severity: Severity::Error
        })
    );
}

/// The batches of `shouldSurviveFastLeaderChange`: one record at epoch 0, then five rounds in
/// which the leader of the round writes one record and the follower, then the leader, is
/// bounced — each bounce a leader epoch (the ZooKeeper controller's controlled shutdown bumps
/// it as the ISR shrinks, and the leader moves on the second): round `r` (1–5) writes at
/// epoch 2(r-1). `last` records of them (6: all).
fn fast_changes(last: usize) -> Vec<(i32, String)> {
    let mut all = run(0, "m", 0, 1);
    for r in 1..=5i64 {
        all.extend(run(2 * (r as i32 - 1), "m", r, 1));
    }
    all.truncate(last);
    all
}

/// `shouldSurviveFastLeaderChange`: after each round both logs end at the number of records
/// written ("no data was lost"). On disk at the end: brokers 100 and 101 each holding the six
/// records at epochs 0, 0, 2, 4, 6, 8, the last leader (101, epoch 10) with its epoch's entry
/// at 6 and no batch of it, high watermark 6 on both: consistent, no finding. Near miss: the
/// last leader elected before it had fetched round 5's record (5 at epoch 8, acknowledged:
/// the old leader's high watermark 6): the old leader, asking for epoch 8, is told it ends at
/// 5 and truncates it away — an error at 5, the loss the test's assertion rules out.
#[test]
fn fast_leader_changes_leave_equal_copies_and_a_lost_last_record_is_named() {
    let write = |last_on_101: usize| {
        let mut b = Brokers::new();
        for (id, n) in [(100, 6), (101, last_on_101)] {
            let ld = LogDirBuilder::new(id)
                .partition(log(0, &fast_changes(n)))
                .high_watermark("orders", 0, if id == 100 { 6 } else { n as i64 });
            let dir = b.write(id, "data", ld, None);
            if id == 101 {
                let mut text = String::from("0\n");
                let entries = ["0 0", "2 2", "4 3", "6 4", "8 5"];
                let kept: Vec<&str> = (entries.iter().copied())
                    .filter(|e| e.split(' ').nth(1).unwrap().parse::<usize>().unwrap() < n)
                    .chain([if n == 6 { "10 6" } else { "10 5" }])
                    .collect();
                text += &format!("{}\n{}\n", kept.len(), kept.join("\n"));
                std::fs::write(dir.join("orders-0/leader-epoch-checkpoint"), text).unwrap();
            }
        }
        b.check()
    };
    let v = write(6);
    v.assert_quiet();
    assert_eq!(cut(&v), None);
    let v = write(5);
    assert_eq!(
        cut(&v),
        Some(super::Cut {
            at: 5,
            truncates: Some((100, 5)),
            severity: Severity::Error
        })
    );
}
