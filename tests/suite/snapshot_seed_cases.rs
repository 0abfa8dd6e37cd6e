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
    retention_deleted_head_of(LogDirBuilder::new(1), p, start)
}

/// [`retention_deleted_head`] in the log dir `b` writes.
fn retention_deleted_head_of(
    b: LogDirBuilder,
    p: PartitionBuilder,
    start: i64,
) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let m = b
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

fn regressions(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::CoordinatorEpochRegression)
        .collect()
}

/// KAFKA-9144 after retention: COMMIT at coordinator epoch 17 and ABORT at 19 in the
/// deleted segment, the zombie coordinator's COMMIT at 18 in the held one. The broker's
/// producer entry, loaded from the snapshot at the first held segment, has coordinator
/// epoch 19 (`ProducerStateManager.loadFromSnapshot`), which `ProducerAppendInfo`'s
/// marker check holds the zombie's 18 against: rule 22 fires from the snapshot's epoch.
fn zombie_after_retention(zombie_epoch: i32) -> (tempfile::TempDir, i64, i64) {
    zombie_after_retention_in(LogDirBuilder::new(1), zombie_epoch)
}

fn zombie_after_retention_in(b: LogDirBuilder, zombie_epoch: i32) -> (tempfile::TempDir, i64, i64) {
    zombie_after_retention_idle(b, zombie_epoch, 0)
}

/// [`zombie_after_retention_in`] with the producer idle `idle_ms` after its ABORT.
fn zombie_after_retention_idle(
    b: LogDirBuilder,
    zombie_epoch: i32,
    idle_ms: i64,
) -> (tempfile::TempDir, i64, i64) {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(2));
    p.commit(t, 17);
    p.append(Batch::new(t).records(2));
    p.abort(t, 19);
    p.roll();
    p.advance_time(idle_ms);
    p.append(Batch::new(t).records(2));
    p.commit(t, zombie_epoch);
    let now = p.now() + 60 * MIN;
    let (d, _pdir) = retention_deleted_head_of(b, p, 6);
    // Offsets: data 0–1, COMMIT 2, data 3–4, ABORT 5 | data 6–7, the zombie's COMMIT 8.
    (d, now, 8)
}

#[test]
fn a_zombie_marker_below_the_snapshots_coordinator_epoch_is_a_regression() {
    let (d, now, at) = zombie_after_retention(18);
    let r = scan_at(d.path(), now);
    let f = regressions(&r);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(f[0].evidence["previous_coordinator_epoch"], 19);
    assert_eq!(f[0].evidence["coordinator_epoch"], 18);
    assert_eq!(
        f[0].evidence["from_snapshot"].as_str(),
        Some("00000000000000000006.snapshot")
    );
    assert_eq!(f[0].evidence["exceeds_producer_id_expiration"], false);
    assert!(f[0].message.contains("2.4.0"), "{}", f[0].message);
}

/// The near misses: a marker at the snapshot's coordinator epoch or above (a coordinator
/// failover raises it), and the same zombie with no snapshot to load (the broker rebuilds
/// from the held log, which holds no earlier marker of the producer).
#[test]
fn a_marker_at_or_above_the_snapshots_coordinator_epoch_or_no_snapshot_is_no_regression() {
    for epoch in [19, 23] {
        let (d, now, _) = zombie_after_retention(epoch);
        let r = scan_at(d.path(), now);
        assert!(
            regressions(&r).is_empty(),
            "epoch {epoch}: {:#?}",
            r.findings
        );
    }
    let (d, now, _) = zombie_after_retention(18);
    let snap = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "snapshot"))
        .expect("a snapshot");
    for e in std::fs::read_dir(snap.parent().unwrap()).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let r = scan_at(d.path(), now);
    assert!(regressions(&r).is_empty(), "{:#?}", r.findings);
}

/// What `verify` predicts of the same log after an unclean shutdown with the recovery
/// point at the first held segment, by broker version and log start checkpoint. The
/// recovery's rebuild (`ProducerStateManager.truncateAndReload` with the log start
/// checkpoint) deletes every snapshot at or below that checkpoint before it loads one:
/// with a checkpoint written before retention moved the log start (0 here) the snapshot
/// at 6 survives, is loaded, and the segment's recovery replays the zombie's marker over
/// its coordinator epoch, so a broker of 2.4.0 or older fails the load
/// (`TransactionCoordinatorFencedException`, KAFKA-9144); with the checkpoint at 6 (what
/// the broker writes once retention ran) that snapshot is deleted, the recovery replays
/// the held log from an empty state and even 2.4.0 loads it. A current broker loads both.
#[test]
fn verify_of_the_zombie_after_retention_by_broker_version() {
    use klogscan::verify::BrokerVersion;
    for stale_checkpoint in [true, false] {
        let b = LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ul", 0, 6);
        let (d, now, at) = zombie_after_retention_in(b, 18);
        if stale_checkpoint {
            std::fs::write(
                d.path().join("log-start-offset-checkpoint"),
                "0\n1\nul 0 0\n",
            )
            .unwrap();
        }
        let req = Request::new([d.path()]).with_options(ScanOptions::default().with_now_ms(now));
        let current = request::verify(&req, None).unwrap();
        let p = &current.report.partitions[0].prediction;
        assert!(p.load_failure.is_none(), "{p:#?}");
        let old = request::verify(&req, Some(BrokerVersion(2, 4, 0))).unwrap();
        let lf = old.report.partitions[0].prediction.load_failure.as_ref();
        if !stale_checkpoint {
            assert!(lf.is_none(), "the snapshot at 6 is deleted first: {lf:#?}");
            continue;
        }
        let lf = lf.expect("a broker of 2.4.0 fails the load");
        assert_eq!(lf.offset, Some(at), "{lf:#?}");
        assert_eq!(lf.exception, "TransactionCoordinatorFencedException");
    }
}

/// The producer idle for 25 hours after its last marker (past the default
/// `producer.id.expiration.ms`, no open transaction): the leader had dropped its entry
/// before the zombie's marker, and a load now drops it from the snapshot
/// (`loadFromSnapshot` skips an expired entry): no check meets that epoch, nothing is said.
#[test]
fn a_producer_expired_before_the_zombie_marker_is_no_regression() {
    let (d, now, _) = zombie_after_retention_idle(LogDirBuilder::new(1), 18, 25 * 60 * MIN);
    let r = scan_at(d.path(), now);
    assert!(regressions(&r).is_empty(), "{:#?}", r.findings);
}
