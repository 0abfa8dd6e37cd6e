//! `TransactionsTest.testFailureToFenceEpoch`, which the 2026-08 trunk runs under
//! transaction versions 1 and 2 (`testFailureToFenceEpochWithTV1`/`WithTV2`, the body taking
//! `isTV2Enabled`): the TV2 run, where the test asserts only that the partition's producer
//! ends at least one epoch above its first commit.

use super::*;
use crate::kafka_psmaudit_cases::transactions::entry_of;
use crate::kafka_quiet_cluster_cases::Brokers;
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::Producer;
use klogscan::testkit::txns::{Cluster, Txn};

/// `TransactionsTest.testFailureToFenceEpoch` with TV2: producer 1 (id 13) commits a
/// record on `topic1`-0 at epoch 0 (its COMMIT at 1, the coordinator's Complete at 1);
/// producer 2's InitProducerId times out with `__transaction_state` under its minimum ISR
/// (the bump to 2 lost: nothing written); producer 3's InitProducerId writes Empty at 2
/// and commits one record (data at 2, COMMIT at 3). The partition's producer ends at epoch
/// 3 (the test's `initialProducerEpoch + 1 <=` it), both transactions committed, nothing
/// raised in `scan`, `verify` or the merge. Near miss: producer 1, fenced by then, writing
/// again at its epoch 1 after producer 3's COMMIT: `producer_epoch_regression` and
/// `zombie_write` at 4.
#[test]
fn failure_to_fence_epoch_under_tv2() {
    let tp: (&'static str, i32) = ("topic1", 0);
    let p = Producer::transactional(13, 0);
    let run = |zombie: bool| {
        let mut c = Cluster::new(Some(crate::kafka_quiet_cluster_cases::CLUSTER))
            .tv2()
            .coordinator(0);
        let after = c.run(&Txn::new("transactional-producer", p, &[tp]).records(1));
        assert_eq!(after.epoch, 1);
        c.run(&Txn::new("transactional-producer", p.with_epoch(2), &[tp]).records(1));
        if zombie {
            c.data(tp, after, 1);
        }
        let opts = ScanOptions::default().with_keep_producers(true);
        Brokers::of_cluster(&c, opts)
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    for (name, fs) in [("scan", &v.scan), ("merge", &v.merge)] {
        // The COMMIT one epoch up leaves the entry no batch (`testControlRecordBumpsProducerEpoch`).
        assert_eq!(entry_of(fs, "topic1", 0, 13), (3, -1, -1, None), "{name}");
        let pr = (fs.partitions.iter())
            .find(|p| p.topic == "topic1" && p.partition == 0)
            .unwrap();
        assert_eq!(pr.last_stable_offset, Some(4), "{name}");
        assert_eq!(pr.transactions.committed, 2, "{name}");
    }
    let (_b, v) = run(true);
    let loud: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.kind, f.offset))
        .collect();
    let zombie = [Kind::ProducerEpochRegression, Kind::ZombieWrite];
    assert_eq!(loud, zombie.map(|k| (k, Some(4))).to_vec());
}
