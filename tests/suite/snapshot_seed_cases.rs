//! The near misses of the replay's seed from the producer snapshot at the first held
//! segment (`partition::state` `seed`, modelling `ProducerStateManager.loadFromSnapshot`):
//! the cases where the old reading (the state a broker rebuilding from the held log has)
//! must still be the verdict. The positives are in `kafka_transactions_command_cases` and
//! `kafka_unifiedlog_cases`.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::report::triage;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer};
use std::path::{Path, PathBuf};

const MIN: i64 = 60_000;

fn scan_at(dir: &Path, now: i64) -> ScanReport {
    let opts = ScanOptions::default().with_now_ms(now);
    request::run(&Request::new([dir]).with_options(opts))
        .unwrap()
        .report
}

fn txns(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
        .collect()
}

/// Write `p` with log start `start`, delete the first segment's files (retention).
fn retention_deleted_head(p: PartitionBuilder, start: i64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(1)
        .log_start_offset("ul", 0, start)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let pdir = m.partitions[0].dir.clone();
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = pdir.join(format!("{:020}.{ext}", 0));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    (dir, pdir)
}

/// Producer 1's transaction at 0 never closed, plain data to 3, a roll (snapshot at 3),
/// more plain data; the first segment deleted.
fn wholly_deleted_open_txn() -> (tempfile::TempDir, PathBuf, i64) {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(1));
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(4));
    let now = p.now() + 60 * MIN;
    let (d, pdir) = retention_deleted_head(p, 3);
    (d, pdir, now)
}

/// A snapshot that fails its CRC is skipped (`CorruptSnapshotException`: the broker falls
/// back to an older one, here none, and rebuilds from the log): no open transaction.
#[test]
fn a_corrupt_snapshot_at_the_first_segment_seeds_nothing() {
    let (d, pdir, now) = wholly_deleted_open_txn();
    let snap = pdir.join(format!("{:020}.snapshot", 3));
    let mut bytes = std::fs::read(&snap).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&snap, bytes).unwrap();
    let r = scan_at(d.path(), now);
    assert!(txns(&r).is_empty(), "{:#?}", r.findings);
    assert!(triage::hanging_rows(&r.findings).is_empty());
}

/// With the snapshot gone the state is the held log's: no open transaction (the old
/// verdict).
#[test]
fn no_snapshot_no_seed() {
    let (d, pdir, now) = wholly_deleted_open_txn();
    std::fs::remove_file(pdir.join(format!("{:020}.snapshot", 3))).unwrap();
    let r = scan_at(d.path(), now);
    assert!(txns(&r).is_empty(), "{:#?}", r.findings);
}

/// A snapshot below the first held segment (the batches between it and the segment were
/// deleted, and may have closed the transaction) is not evidence of the state at the first
/// held batch: no seed.
#[test]
fn a_snapshot_below_the_first_held_segment_seeds_nothing() {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(1));
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(4));
    let now = p.now() + 60 * MIN;
    let (d, pdir) = retention_deleted_head(p, 5);
    // Retention deleted the second segment too; the snapshot at 5 is lost, the one at 3
    // (holding the open transaction) is left.
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = pdir.join(format!("{:020}.{ext}", 3));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    std::fs::remove_file(pdir.join(format!("{:020}.snapshot", 5))).unwrap();
    assert!(pdir.join(format!("{:020}.snapshot", 3)).exists());
    let r = scan_at(d.path(), now);
    assert!(txns(&r).is_empty(), "{:#?}", r.findings);
}

/// A marker in the held log sets the coordinator epoch; the snapshot's older one is only
/// read while no held marker of the producer exists.
#[test]
fn a_held_marker_overrides_the_snapshots_coordinator_epoch() {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(2));
    p.commit(t, 7);
    p.roll();
    p.append(Batch::new(t).records(2));
    p.commit(t, 9);
    p.append(Batch::new(t).records(5));
    let now = p.now() + 60 * MIN;
    let (d, _pdir) = retention_deleted_head(p, 3);
    let r = scan_at(d.path(), now);
    let rows = triage::hanging_rows(&r.findings);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].coordinator_epoch, 9);
    assert_eq!(rows[0].start_offset, 6);
}

/// `verify` reads the later snapshots against the seeded replay: producer 1's open
/// transaction from 0, wholly deleted, is in the snapshot at the first held segment (3) and
/// in the next one (7); the replay, seeded at 3, holds it too: no `snapshot_mismatch`, and
/// the scan's hanging transaction says which snapshot it rests on.
#[test]
fn verify_agrees_with_the_seeded_state_at_later_snapshots() {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(1));
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(4));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(1));
    let now = p.now() + 60 * MIN;
    let (d, pdir) = retention_deleted_head(p, 3);
    assert!(pdir.join(format!("{:020}.snapshot", 7)).exists());
    let r = scan_at(d.path(), now);
    let fs = txns(&r);
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    assert_eq!(fs[0].offset, Some(0));
    assert_eq!(
        fs[0].evidence.get("from_snapshot").and_then(|v| v.as_str()),
        Some("00000000000000000003.snapshot")
    );
    assert_eq!(r.partitions[0].last_stable_offset, Some(3));
    let req = Request::new([d.path()]).with_options(ScanOptions::default().with_now_ms(now));
    let a = request::verify(&req, None).unwrap();
    let mismatches: Vec<&Finding> = a
        .report
        .partitions
        .iter()
        .flat_map(|p| &p.findings)
        .filter(|f| f.kind == Kind::SnapshotMismatch)
        .collect();
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}
