//! The cross-partition join's tolerances on the command line (`--marker-delay`,
//! `--coordinator-tolerance`): the same healthy tight loop, whose verdict flips when a
//! tolerance is set below what the data shows.

#![cfg(feature = "testkit")]

use crate::common::findings_of;
use crate::common::run::klogscan;
use klogscan::testkit::Producer;
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use std::path::Path;

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);
const C: Tp = ("payments", 0);
const D: Tp = ("audit", 2);

/// A TV0/1 producer in a tight loop (its next transaction's data stamped `lead_ms` before
/// the previous transaction's markers land), alternating between two partition sets and
/// aborting every fourth transaction; without the coordinator's log.
fn tight_loop(dir: &Path, lead_ms: i64) {
    let mut c = Cluster::new(Some("c1"))
        .coordinator_partitions(50)
        .tight_loop(lead_ms);
    let mut p = Producer::transactional(100, 0);
    for i in 0..12 {
        let set: &[Tp] = if i % 2 == 0 { &[A, B] } else { &[C, D] };
        let mut t = Txn::new("app", p, set);
        if i % 4 == 3 {
            t = t.abort();
        }
        p = c.run(&t);
    }
    c.write_only(dir, 1, |_| true, false).unwrap();
}

/// `klogscan scan --format json EXTRA… DIR`, as JSON.
fn scan(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args: Vec<&std::ffi::OsStr> =
        vec!["scan".as_ref(), "--format".as_ref(), "json".as_ref()];
    args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
    args.push(dir.as_os_str());
    let r = klogscan(&args, None, 120);
    assert!(r.code() <= 1, "{r:?}");
    serde_json::from_str(&r.out).unwrap()
}

fn mismatches(r: &serde_json::Value) -> usize {
    findings_of(r, "transaction_outcome_mismatch").len()
}

/// Without the coordinator's log, a marker delay of 100 ms (the default) lets the data
/// stamped 40 ms before the previous markers start the next transaction: nothing is
/// claimed. A delay of 10 ms says such data was produced before the previous Prepare, so
/// it is forced into the previous transaction, whose outcome it does not share.
#[test]
fn marker_delay_decides_what_is_forced() {
    let dir = tempfile::tempdir().unwrap();
    tight_loop(dir.path(), 40);
    assert_eq!(mismatches(&scan(dir.path(), &[])), 0);
    assert_eq!(
        mismatches(&scan(dir.path(), &["--marker-delay", "100ms"])),
        0
    );
    let strict = scan(dir.path(), &["--marker-delay", "10ms"]);
    assert!(mismatches(&strict) > 0, "{strict:#}");
}

/// A TV0/1 producer's transactions on two partitions, 5 min apart, the fourth one's
/// marker on `B` flipped (ABORT where the others COMMIT), with the coordinator's log
/// written by a coordinator whose clock runs `skew_ms` ahead of the partition leaders'.
fn skewed(dir: &Path, skew_ms: i64) {
    let run = |c: &mut Cluster| {
        let mut p = Producer::transactional(100, 0);
        for i in 0..6 {
            let mut t = Txn::new("app", p, &[A, B]);
            if i == 3 {
                t = t.flip_marker_on(B);
            }
            p = c.run(&t);
            c.advance(300_000);
        }
    };
    let mut leaders = Cluster::new(Some("c1")).coordinator_partitions(50);
    run(&mut leaders);
    leaders.write_only(dir, 1, |_| true, false).unwrap();
    let mut coordinator = Cluster::new(Some("c1")).coordinator_partitions(50);
    coordinator.advance(skew_ms);
    run(&mut coordinator);
    coordinator.write_only(dir, 1, |_| false, true).unwrap();
}

/// With the coordinator's log, a part belongs to the coordinator transaction listing its
/// partition, in order; its marker must lie within the tolerance of that transaction's
/// Prepare…Complete window. With a coordinator clock 60 s ahead, the default 30 s claims
/// nothing: the split outcome rests on the marker-order grouping alone (a warning, so
/// said); a tolerance of 2 min lets the coordinator's records claim the parts, and the
/// split outcome is confirmed by them (an error).
#[test]
fn coordinator_tolerance_decides_what_the_coordinator_claims() {
    let dir = tempfile::tempdir().unwrap();
    skewed(dir.path(), 60_000);
    let split = |r: &serde_json::Value| {
        findings_of(r, "transaction_outcome_mismatch")
            .iter()
            .map(|f| {
                (
                    f["severity"].as_str().unwrap().to_string(),
                    f["evidence"]["grouping"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let default = scan(dir.path(), &[]);
    let wide = scan(dir.path(), &["--coordinator-tolerance", "2m"]);
    assert_eq!(
        split(&default),
        [("warning".to_string(), "marker_order".to_string())]
    );
    assert_eq!(
        split(&wide),
        [("error".to_string(), "coordinator_record".to_string())]
    );
    assert_eq!(
        split(&scan(dir.path(), &["--coordinator-tolerance", "30s"])),
        split(&default)
    );
}

/// The durations go through the house parser: a bare number is refused.
#[test]
fn tolerances_need_a_unit() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--marker-delay", "--coordinator-tolerance"] {
        let r = klogscan(
            &["scan", flag, "100", dir.path().to_str().unwrap()],
            None,
            60,
        );
        assert_eq!(r.code(), 2, "{flag}: {r:?}");
        assert!(r.err.contains("needs a unit"), "{flag}: {}", r.err);
    }
}
