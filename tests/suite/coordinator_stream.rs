//! A `__transaction_state` partition whose records are more than its walk keeps
//! (`ScanOptions::keep_coordinator_bytes`) keeps none of them: the cluster stage reads its
//! segments again, streaming, and replays each record as it is read. The reports
//! (`scan` and `txns` JSON) must be the same byte for byte whether the walk kept every
//! record, some of them before the budget ran out, or none: on the cross-partition rules'
//! faults (flipped and lost markers, an unlisted partition, a coordinator stuck in
//! Prepare, a failover, a tombstone), on ids spread over several coordinator partitions,
//! on a `--topic` selection that leaves the coordinator's log out of the walk, on a log
//! with a batch whose records do not parse and a segment that cannot be read, and on the
//! real broker data.
#![cfg(feature = "testkit")]

use klogscan::discover::layout;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::report::json;
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::{TxnValue, state};
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use std::path::{Path, PathBuf};

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);
const C: Tp = ("payments", 0);

/// Budgets: none kept, a few records kept before the budget runs out, all kept.
const BUDGETS: [u64; 3] = [0, 600, u64::MAX];

/// The faults of the cross-partition rules, written by one coordinator partition
/// (`partitions`: `None`) or spread over the broker's default 50.
pub(crate) fn faulty(partitions: Option<i32>) -> Cluster {
    let c = Cluster::new(Some("c1"));
    let mut c = match partitions {
        None => c.coordinator(4),
        Some(n) => c.coordinator_partitions(n),
    };
    let mut p = Producer::transactional(7, 0);
    for i in 0..6 {
        let set: &[Tp] = if i % 2 == 0 { &[A, B] } else { &[C] };
        let t = Txn::new("app", p, set);
        p = c.run(&if i % 3 == 2 { t.abort() } else { t });
    }
    c.run(&Txn::new("flip", Producer::transactional(8, 0), &[A, C]).flip_marker_on(C));
    c.run(&Txn::new("lost", Producer::transactional(9, 0), &[A, B]).skip_marker_on(B));
    c.run(&Txn::new("unlisted", Producer::transactional(10, 0), &[A, C]).unlisted(C));
    c.run(&Txn::new("stuck", Producer::transactional(11, 0), &[B]).stuck_in_prepare());
    c.run(&Txn::new("failover", Producer::transactional(12, 0), &[A, B, C]).failover_after(1));
    c.run(&Txn::new("gone", Producer::transactional(13, 0), &[C]));
    c.coordinator_record("gone", None);
    c.coordinator_record(
        "late",
        Some(TxnValue::new(14, 0, state::ONGOING).partitions(&[("orders", &[0])])),
    );
    c.advance(40 * 60_000);
    c.plain(A, 1);
    c
}

/// `scan --format json` and `txns --format json` of `dir` with `opts`.
pub(crate) fn reports(dir: &Path, opts: &ScanOptions) -> (String, String) {
    let inv = layout::discover(&[dir.to_path_buf()]);
    let report = pipeline::analyse(&inv, opts);
    let (mut scan, mut txns) = (Vec::new(), Vec::new());
    json::write_scan(&report, &mut scan).unwrap();
    json::write_txns(&report, &mut txns).unwrap();
    (
        String::from_utf8(scan).unwrap(),
        String::from_utf8(txns).unwrap(),
    )
}

/// The reports of `dir` are the same under every budget (`base` otherwise).
fn same_under_every_budget(dir: &Path, base: &ScanOptions) {
    let kept = reports(dir, &base.clone().with_keep_coordinator_bytes(u64::MAX));
    for keep in BUDGETS {
        let got = reports(dir, &base.clone().with_keep_coordinator_bytes(keep));
        assert!(
            got == kept,
            "{}: keeping {keep} bytes changed the reports",
            dir.display()
        );
    }
}

#[test]
fn a_coordinator_log_read_again_gives_the_same_reports() {
    for partitions in [None, Some(50)] {
        let dir = tempfile::tempdir().unwrap();
        faulty(partitions).write(dir.path(), 1).unwrap();
        let opts = ScanOptions::default().with_keep_cluster_txns(true);
        same_under_every_budget(dir.path(), &opts);
        // The faults were found (the comparison is not between two empty reports).
        let (scan, _) = reports(dir.path(), &opts.clone().with_keep_coordinator_bytes(0));
        for kind in [
            "transaction_outcome_mismatch",
            "transaction_partition_unlisted",
            "transaction_stuck_in_prepare",
        ] {
            assert!(scan.contains(kind), "{partitions:?}: no {kind}");
        }
    }
}

/// Append to `__transaction_state-4` in the log dir `dir` a segment holding a batch whose records
/// do not parse between two good ones, and a segment that is a FIFO (not read at all).
fn damage_coordinator_log(dir: &Path) {
    use klogscan::testkit::BatchSpec;
    use klogscan::testkit::encode::{HeaderOverrides, RecordSpec};
    let part = dir.join("__transaction_state-4");
    assert!(part.is_dir(), "{}", part.display());
    let batch = |offset: i64, status: u8, overrides: HeaderOverrides| {
        let v = TxnValue::new(20, 0, status)
            .partitions(&[("orders", &[1])])
            .times(1_700_000_000_000, 1_700_000_000_000);
        BatchSpec {
            base_offset: offset,
            base_timestamp: 1_700_000_000_000,
            records: vec![RecordSpec {
                key: Some(klogscan::testkit::txnlog::key("damaged")),
                value: Some(v.encode()),
                ..RecordSpec::default()
            }],
            overrides,
            ..BatchSpec::default()
        }
        .encode()
    };
    let unparsable = HeaderOverrides {
        records_count: Some(3),
        ..HeaderOverrides::default()
    };
    let mut seg = batch(1_000, state::ONGOING, HeaderOverrides::default());
    seg.extend(batch(1_001, state::PREPARE_COMMIT, unparsable));
    seg.extend(batch(
        1_002,
        state::COMPLETE_COMMIT,
        HeaderOverrides::default(),
    ));
    std::fs::write(part.join("00000000000000001000.log"), seg).unwrap();
    crate::common::mkfifo(&part.join("00000000000000002000.log"));
}

#[cfg(unix)]
#[test]
fn a_damaged_coordinator_log_read_again_gives_the_same_reports() {
    let dir = tempfile::tempdir().unwrap();
    let data = faulty(None).write(dir.path(), 1).unwrap();
    damage_coordinator_log(&data);
    let opts = ScanOptions::default().with_keep_cluster_txns(true);
    same_under_every_budget(dir.path(), &opts);
    // The damage was seen: the batch whose records do not parse, the FIFO.
    let (scan, _) = reports(dir.path(), &opts.clone().with_keep_coordinator_bytes(0));
    for seen in ["00000000000000001000.log", "00000000000000002000.log"] {
        assert!(scan.contains(seen), "no {seen}: {scan}");
    }
    // Outside the selection, the same log is read by the cluster stage alone.
    let mut orders = opts;
    orders.topic = Some("orders".into());
    same_under_every_budget(dir.path(), &orders);
}

#[test]
fn the_walk_keeps_the_records_up_to_its_budget_only() {
    let dir = tempfile::tempdir().unwrap();
    faulty(None).write(dir.path(), 1).unwrap();
    let inv = layout::discover(&[dir.path().to_path_buf()]);
    let kept = |keep: u64| {
        let opts = ScanOptions::default().with_keep_coordinator_bytes(keep);
        let r = pipeline::scan_partitions(&inv, &opts);
        let p = r
            .partitions
            .iter()
            .find(|p| p.topic == "__transaction_state")
            .unwrap();
        (
            p.cluster_inputs().txn_log.as_ref().map(|l| l.len()),
            p.segment_names().len(),
        )
    };
    let (all, segments) = kept(u64::MAX);
    assert!(all.is_some_and(|n| n > 20), "{all:?}");
    // Over the budget: no record kept, the segment names still (what the re-read indexes).
    assert_eq!(kept(600), (None, segments));
    assert_eq!(kept(0), (None, segments));
}

#[test]
fn a_coordinator_log_outside_the_selection_is_read_streaming() {
    let dir = tempfile::tempdir().unwrap();
    faulty(None).write(dir.path(), 1).unwrap();
    let mut opts = ScanOptions::default();
    opts.topic = Some("orders".into());
    let (scan, _) = reports(dir.path(), &opts);
    // The coordinator's records joined the selected partitions' transactions.
    for seen in ["transaction_marker_missing", "__transaction_state-4"] {
        assert!(scan.contains(seen), "no {seen}: {scan}");
    }
    same_under_every_budget(dir.path(), &opts);
}

/// The log dirs of the real broker data holding a `__transaction_state` partition.
fn real_with_coordinator() -> Vec<PathBuf> {
    let Some(root) = crate::common::real_data() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for top in ["broker", "rebuilt"] {
        let Ok(repos) = std::fs::read_dir(root.join(top)) else {
            continue;
        };
        for repo in repos.flatten() {
            let mut stack = vec![repo.path()];
            let mut found = false;
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with("__transaction_state-") {
                        found = true;
                    } else if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(e.path());
                    }
                }
            }
            if found {
                out.push(repo.path());
            }
        }
    }
    out
}

#[test]
fn real_coordinator_logs_read_again_give_the_same_reports() {
    for repo in real_with_coordinator() {
        same_under_every_budget(&repo, &ScanOptions::default());
    }
}
