//! `cluster::txns::clock`: an open transaction whose first batch in a partition carries event
//! times days old, while its producer's previous transaction's markers in another partition
//! of the same log dir were written a minute before: the producer could not add this
//! partition before that transaction was complete (`TransactionCoordinator
//! .handleAddPartitionsToTransaction` answers CONCURRENT_TRANSACTIONS until its markers are
//! written), so the transaction is at most that old. Only markers closing data at an epoch
//! below the open data's count: those at its own epoch may close this very transaction
//! (TV0/1), or abort it elsewhere (an admin abort under TV2).

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::scenario::DEFAULT_START_MS as T0;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

const MINUTE: i64 = 60_000;
const DAY: i64 = 86_400_000;

/// `out-0`: producer 700's transactions at broker time, each closed by a marker (bumped
/// under `tv2`, at the data's epoch otherwise) a minute later; `store-changelog-0`: its
/// next transaction's first batch, stamped two days back, open; `clock-0`: plain writes
/// until minute `until`.
fn log_dir(tv2: bool, until: i64) -> LogDirBuilder {
    let mut p = Producer::transactional(700, 0);
    let mut out = PartitionBuilder::new("out", 0);
    for k in 0..3 {
        let now = T0 + k * 5 * MINUTE;
        out.append(Batch::new(p).records(2).at(now));
        let cur = out.now();
        out.advance_time(now + MINUTE - cur);
        let marker = if tv2 { p.bumped() } else { p };
        out.commit(marker, 0);
        p = marker;
    }
    // The next transaction (epoch `p`), opened at minute 12 on a new partition.
    let mut store = PartitionBuilder::new("store-changelog", 0);
    store.append(Batch::new(p).records(3).at(T0 + 12 * MINUTE - 2 * DAY));
    let mut clock = PartitionBuilder::new("clock", 0);
    for k in 0..=until {
        clock.append(Batch::new(Producer::PLAIN).records(1).at(T0 + k * MINUTE));
    }
    LogDirBuilder::new(1)
        .partition(out)
        .partition(store)
        .partition(clock)
}

fn open_txn(tv2: bool, until: i64) -> Finding {
    let d = tempfile::tempdir().unwrap();
    log_dir(tv2, until).write(d.path()).unwrap();
    let r = klogscan::pipeline::scan(&[d.path().to_path_buf()], &ScanOptions::default());
    let mut f: Vec<Finding> = (r.findings.into_iter())
        .filter(|f| matches!(f.kind, Kind::OpenTransaction | Kind::HangingTransaction))
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    f.remove(0)
}

#[test]
fn a_tv2_producers_earlier_marker_elsewhere_bounds_the_idleness() {
    let f = open_txn(true, 16);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::OpenTransaction, Severity::Info),
        "{f:#?}"
    );
    assert_eq!(f.topic, "store-changelog");
    // the last COMMIT at minute 11; the reference time minute 16
    assert_eq!(f.evidence["broker_clock_floor_ms"], T0 + 11 * MINUTE);
    assert_eq!(f.evidence["idle_ms"], 5 * MINUTE);
    assert!(
        f.evidence["broker_clock_floor_from"]
            .as_str()
            .unwrap()
            .ends_with("out-0")
    );
    assert!(
        f.message.contains("idle at most 5 minutes"),
        "{}",
        f.message
    );
    assert!(f.remediation.is_none());
}

/// Near miss: the log dir ran on for an hour after that marker: hanging whatever the
/// records' times.
#[test]
fn past_the_threshold_from_the_marker_it_still_hangs() {
    let f = open_txn(true, 75);
    assert_eq!(f.kind, Kind::HangingTransaction, "{f:#?}");
}

/// Near miss: under TV0/1 without a fence every transaction runs at one epoch, and a marker
/// at the data's epoch may be this transaction's own (its marker lost here): no floor, the
/// records' times decide.
#[test]
fn an_unbumped_marker_may_close_this_very_transaction() {
    let f = open_txn(false, 16);
    assert_eq!(f.kind, Kind::HangingTransaction, "{f:#?}");
    assert!(f.evidence.get("broker_clock_floor_from").is_none());
}

/// The merge of the log dir's bundle gives the scan's report, the floor included.
#[test]
fn merge_of_the_bundle_gives_the_scans_floor() {
    let d = tempfile::tempdir().unwrap();
    log_dir(true, 16).write(d.path()).unwrap();
    let opts = ScanOptions::default();
    let scanned = klogscan::pipeline::scan(&[d.path().to_path_buf()], &opts);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("b.klb");
    let w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    klogscan::bundle::collect(&[d.path().to_path_buf()], &opts, w).unwrap();
    let merged = klogscan::bundle::merge(&[file], &opts).unwrap().report;
    let (a, b) = (crate::common::json(scanned), crate::common::json(merged));
    assert!(a.contains("broker_clock_floor_from"));
    assert_eq!(a, b);
}
