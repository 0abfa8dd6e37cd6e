//! The commonest transactional loop, healthy: a producer whose next transaction's first
//! `send()` follows the EndTxn answer, so its records are stamped a few ms before the
//! previous transaction's markers land, alternating between two partition sets and
//! aborting every fourth transaction; with a fenced instance and a coordinator failover;
//! under TV0/1 and TV2, with and without the coordinator's `__transaction_state`. Nothing
//! above info, and, with the coordinator's records, every transaction joined whole.

#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::cluster::txns::group::Grouping;
use klogscan::cluster::txns::{ClusterTxn, Outcome};
use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
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

/// A cluster of one coordinator (TV2 or TV0/1) whose producer runs in a tight loop,
/// stamping its next transaction's data 3 ms before the previous markers land.
fn loop_cluster(tv2: bool) -> Cluster {
    let c = Cluster::new(Some("c1"))
        .coordinator_partitions(50)
        .tight_loop(3);
    if tv2 { c.tv2() } else { c }
}

fn scan(c: &Cluster, with_coordinator: bool) -> (tempfile::TempDir, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    c.write_only(dir.path(), 1, |_| true, with_coordinator)
        .unwrap();
    let opts = ScanOptions::default().with_keep_cluster_txns(true);
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
            let mut c = loop_cluster(tv2);
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

fn kinds(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// The faults of the cross-partition rules at the end of a tight loop are still found:
/// with the coordinator's records (TV0/1 and TV2) and, where the marker epoch names the
/// transaction (TV2), without them. Without them under TV0/1 the flipped marker's
/// grouping is not forced (the loop's data is stamped a few ms before the previous
/// markers), so nothing above info is claimed.
#[test]
fn tight_loop_faults_are_still_found() {
    for tv2 in [false, true] {
        let build = |fault: &dyn Fn(Txn) -> Txn| {
            let mut c = loop_cluster(tv2);
            tight(&mut c, 12, Twist::None);
            let p = Producer::transactional(100, if tv2 { 12 } else { 0 });
            c.run(&fault(Txn::new("app", p, &[A, B, C])));
            c.advance(40 * 60_000);
            c.plain(D, 1);
            c
        };
        let flipped = build(&|t| t.flip_marker_on(B));
        for with_coordinator in [true, false] {
            let (_d, r) = scan(&flipped, with_coordinator);
            let m = kinds(&r, Kind::TransactionOutcomeMismatch);
            let ctx = format!(
                "tv2 {tv2} coordinator {with_coordinator}: {:#?}",
                r.findings
            );
            if with_coordinator || tv2 {
                assert_eq!(m.len(), 1, "{ctx}");
                assert_eq!((m[0].topic.as_str(), m[0].partition), B, "{ctx}");
                assert_eq!(m[0].severity, Severity::Error, "{ctx}");
            } else {
                assert!(above_info(&r).is_empty(), "{ctx}");
            }
        }
        let (_d, r) = scan(&build(&|t| t.skip_marker_on(C)), true);
        let m = kinds(&r, Kind::TransactionMarkerMissing);
        assert_eq!(m.len(), 1, "tv2 {tv2}: {:#?}", r.findings);
        assert_eq!((m[0].topic.as_str(), m[0].partition), C);
        assert_eq!(m[0].evidence["coordinator_completed"], true);
        let (_d, r) = scan(&build(&|t| t.unlisted(C)), true);
        let u = kinds(&r, Kind::TransactionPartitionUnlisted);
        assert_eq!(u.len(), 1, "tv2 {tv2}: {:#?}", r.findings);
        assert_eq!((u[0].topic.as_str(), u[0].partition), C);
        assert!(kinds(&r, Kind::TransactionMarkerMissing).is_empty());
    }
}

/// A compacted coordinator log keeps only the newest record of each transactional id (a
/// Complete record, which lists no partition): the loop's older transactions are grouped
/// without the coordinator, the Complete record names at most one of them, and nothing
/// above info is claimed.
#[test]
fn tight_loop_with_a_compacted_coordinator_log() {
    use klogscan::cluster::txns::{self, TxnOptions};
    for tv2 in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = loop_cluster(tv2);
        tight(&mut c, 24, Twist::None);
        c.write(dir.path(), 1).unwrap();
        let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
        let opts = ScanOptions::default();
        let mut report = pipeline::scan_partitions(&inv, &opts);
        let mut inputs = klogscan::cluster::coordinator::cluster::inputs(&mut report, &inv, &opts);
        for log in &mut inputs.coordinator {
            let last = log.records.last().cloned();
            log.records = last.into_iter().collect();
        }
        let r = txns::analyse(&inputs, &TxnOptions::default());
        let bad: Vec<_> = r
            .findings
            .iter()
            .filter(|p| p.finding.severity > Severity::Info)
            .collect();
        assert!(bad.is_empty(), "tv2 {tv2}: {bad:#?}");
        let named = r
            .transactions
            .iter()
            .filter(|t| t.transactional_id.is_some())
            .count();
        assert_eq!(named, 1, "tv2 {tv2}");
        assert_eq!(
            r.transactions.len(),
            if tv2 { 24 } else { r.transactions.len() }
        );
    }
}
