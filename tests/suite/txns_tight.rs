//! The commonest transactional loop, healthy: a producer whose next transaction's first
//! `send()` follows the EndTxn answer, so its records are stamped a few ms before the
//! previous transaction's markers land, alternating between two partition sets and
//! aborting every fourth transaction; with a fenced instance and a coordinator failover;
//! under TV0/1 and TV2, with and without the coordinator's `__transaction_state`. Nothing
//! above info, and, with the coordinator's records, every transaction joined whole.

#![cfg(feature = "testkit")]

use klogscan::cluster::txns::group::Grouping;
use klogscan::cluster::txns::{ClusterTxn, Outcome};
use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::{ScanOptions, ScanReport};
use klogscan::pipeline;
use klogscan::testkit::Producer;
use klogscan::testkit::txns::{Cluster, Tp, Txn};

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);
const C: Tp = ("payments", 0);
const D: Tp = ("audit", 2);

/// How a loop is disturbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Twist {
    None,
    /// A new instance fences the producer in the middle of the loop.
    Fenced,
    /// The coordinator fails over while writing a transaction's markers.
    Failover,
}

/// `n` transactions of one producer in a tight loop; returns the outcomes written.
fn tight(c: &mut Cluster, n: usize, twist: Twist) -> Vec<Outcome> {
    let mut p = Producer::transactional(100, 0);
    let mut outcomes = Vec::new();
    for i in 0..n {
        let set: &[Tp] = if i % 2 == 0 { &[A, B] } else { &[C, D] };
        let mut t = Txn::new("app", p, set);
        let abort = i % 4 == 3;
        if abort {
            t = t.abort();
        }
        if twist == Twist::Failover && i == n / 2 {
            t = t.failover_after(1);
        }
        if twist == Twist::Fenced && i == n / 2 {
            // the new instance's InitProducerId aborts this one at epoch + 1
            let fence = p.epoch + 1;
            c.run(&t.abort().marker_epoch(fence));
            outcomes.push(Outcome::Aborted);
            p = p.with_epoch(fence + 1);
            continue;
        }
        p = c.run(&t);
        outcomes.push(if abort {
            Outcome::Aborted
        } else {
            Outcome::Committed
        });
    }
    outcomes
}

fn scan(c: &Cluster, with_coordinator: bool) -> (tempfile::TempDir, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    c.write_only(dir.path(), 1, |_| true, with_coordinator)
        .unwrap();
    let opts = ScanOptions {
        keep_cluster_txns: true,
        ..ScanOptions::default()
    };
    let r = pipeline::scan(&[dir.path().to_path_buf()], &opts);
    (dir, r)
}

fn above_info(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .collect()
}

fn txns(r: &ScanReport) -> &[ClusterTxn] {
    &r.transactions.as_ref().expect("joined").transactions
}

#[test]
fn tight_loop_raises_nothing_above_info() {
    for tv2 in [false, true] {
        for twist in [Twist::None, Twist::Fenced, Twist::Failover] {
            let mut c = Cluster::new(Some("c1"))
                .coordinator_partitions(50)
                .tight_loop(3);
            if tv2 {
                c = c.tv2();
            }
            let want = tight(&mut c, 24, twist);
            for with_coordinator in [true, false] {
                let (_d, r) = scan(&c, with_coordinator);
                let ctx = format!("tv2 {tv2} {twist:?} coordinator {with_coordinator}");
                let bad = above_info(&r);
                assert!(bad.is_empty(), "{ctx}: {bad:#?}");
                if with_coordinator {
                    let t = txns(&r);
                    let got: Vec<Outcome> = t.iter().map(|t| t.outcome).collect();
                    assert_eq!(got, want, "{ctx}: {t:#?}");
                    assert!(
                        t.iter().all(|t| t.grouping == Grouping::CoordinatorRecord
                            && t.partitions.len() == 2),
                        "{ctx}: {t:#?}"
                    );
                }
            }
        }
    }
}
