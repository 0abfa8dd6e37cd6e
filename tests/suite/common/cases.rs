//! What the reproductions of Kafka's tests (`kafka_*_cases`) read of a scan: one
//! partition's replayed producers, last stable offset and aborted transactions, scanned as
//! the CLI scans.

use klogscan::partition::state::ProducerState;
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::{Manifest, PartitionBuilder};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

/// Write `p` and scan it as the CLI does, keeping the replayed producers.
pub fn scan(p: &PartitionBuilder) -> (TempDir, Manifest, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let r = scan_dir(&m.dir);
    (dir, m, r)
}

/// Scan a partition directory (or a log dir holding one partition) as the CLI does,
/// keeping the replayed producers.
pub fn scan_dir(dir: &Path) -> ScanReport {
    let opts = ScanOptions::default().with_keep_producers(true);
    let a = request::run(&Request::new([dir]).with_options(opts)).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report
}

/// The replayed state of producer `pid` (the recovery view).
pub fn state(r: &ScanReport, pid: i64) -> &ProducerState {
    r.partitions[0]
        .outcome()
        .producers
        .iter()
        .find(|s| s.producer_id == pid)
        .unwrap_or_else(|| panic!("no state for producer {pid}"))
}

/// (epoch, last sequence, last data offset, open transaction's first offset).
pub fn entry(r: &ScanReport, pid: i64) -> (i16, i32, i64, Option<i64>) {
    let s = state(r, pid);
    (
        s.producer_epoch,
        s.last_sequence,
        s.last_offset,
        s.current_txn_first_offset,
    )
}

pub fn lso(r: &ScanReport) -> Option<i64> {
    r.partitions[0].last_stable_offset
}

/// `(producer, first offset, last offset, last stable offset)` of the aborted transactions
/// the replay derives (what the `.txnindex` files should hold).
pub fn aborted(r: &ScanReport) -> Vec<(i64, i64, i64, i64)> {
    r.partitions[0]
        .outcome()
        .aborted
        .iter()
        .map(|a| {
            (
                a.producer_id,
                a.first_offset,
                a.last_offset,
                a.last_stable_offset,
            )
        })
        .collect()
}

/// The file names of the segments a verification predicts recovered, in order.
pub fn recovered(v: &PartitionVerification) -> Vec<String> {
    v.prediction
        .recovered_segments
        .iter()
        .map(|r| r.segment.clone())
        .collect()
}

/// A parsed snapshot entry as the testkit writes one (to compare a file with what a
/// scenario wrote).
pub fn written_entry(
    e: &klogscan::read::format::snapshot::SnapshotEntry,
) -> klogscan::testkit::SnapshotEntry {
    klogscan::testkit::SnapshotEntry {
        producer_id: e.producer_id,
        epoch: e.producer_epoch,
        last_sequence: e.last_sequence,
        last_offset: e.last_offset,
        offset_delta: e.offset_delta,
        timestamp: e.timestamp,
        coordinator_epoch: e.coordinator_epoch,
        current_txn_first_offset: e.current_txn_first_offset,
    }
}
