//! `transaction_reopened_at_recovery`: a recovery that truncates below the checkpointed high
//! watermark and removes the COMMIT/ABORT marker of a transaction begun below the
//! truncation point leaves that transaction open in the state the broker starts with
//! (`LogSegment.recover` rebuilds the producer state from the batches it keeps); its
//! coordinator finished it and sends no marker again. Said when no other copy holds the
//! lost range; `verify` counts it among the loaded state's open transactions. The same
//! through bundles.

use klogscan::bundle;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::files::LogDirBuilder;
use klogscan::testkit::scenario::{Batch, FaultKind, PartitionBuilder, Producer, Target};
use std::path::{Path, PathBuf};

/// `pay-0`: producer 7's transaction (offsets 0–1) in the first segment; the second
/// segment holds a plain batch (2–3), the transaction's marker (4, a COMMIT or an ABORT)
/// and a plain batch (5). With `damage`, a byte inside the records of the plain batch at 2
/// is flipped: recovery truncates the log to offset 2, removing the marker. With
/// `late_txn`, the transaction begins after the damage instead (offset 4, marker 5).
fn pay(damage: bool, commit: bool, late_txn: bool) -> PartitionBuilder {
    let t = Producer::transactional(7, 0);
    let mut p = PartitionBuilder::new("pay", 0).leader_epoch(3);
    if late_txn {
        p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    } else {
        p.append(Batch::new(t).values(["a", "b"]));
    }
    p.roll();
    p.append(Batch::new(Producer::PLAIN).values(["c", "d"]));
    if late_txn {
        p.append(Batch::new(t).values(["e"]));
    }
    if commit {
        p.commit(t, 0);
    } else {
        p.abort(t, 0);
    }
    p.append(Batch::new(Producer::PLAIN).values(["f"]));
    if damage {
        p.fault(
            Target::LastLog,
            FaultKind::FlipByte {
                position: 70,
                mask: 0x20,
            },
        );
    }
    p
}

/// Broker 1 holds the damaged copy (unclean shutdown, high watermark `hw`); with
/// `replica`, broker 2 of the same cluster an intact one. Returns each broker's log dirs.
fn write(root: &Path, hw: i64, replica: bool, commit: bool, late_txn: bool) -> Vec<Vec<PathBuf>> {
    let b1 = root.join("broker1");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .clean_shutdown(false)
        .high_watermark("pay", 0, hw)
        .partition(pay(true, commit, late_txn))
        .write(&b1)
        .unwrap();
    let mut out = vec![vec![b1]];
    if replica {
        let b2 = root.join("broker2");
        LogDirBuilder::new(2)
            .cluster_id("c1")
            .partition(pay(false, commit, late_txn))
            .write(&b2)
            .unwrap();
        out.push(vec![b2]);
    }
    out
}

fn scan(dirs: &[Vec<PathBuf>]) -> ScanReport {
    let all: Vec<PathBuf> = dirs.iter().flatten().cloned().collect();
    klogscan::pipeline::scan(&all, &ScanOptions::default())
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

#[test]
fn an_acknowledged_marker_removed_by_the_truncation_reopens_its_transaction() {
    for commit in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let dirs = write(d.path(), 6, false, commit, false);
        let r = scan(&dirs);
        let f = of_kind(&r, Kind::TransactionReopenedAtRecovery);
        assert_eq!(f.len(), 1, "{:#?}", r.findings);
        let f = f[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!((f.offset, f.producer_id), (Some(0), Some(7)));
        let marker = if commit { "COMMIT" } else { "ABORT" };
        assert!(
            f.message
                .contains(&format!("removes the {marker} marker at offset 4")),
            "{}",
            f.message
        );
        assert_eq!(f.evidence["truncated_to"], 2);
        assert_eq!(f.evidence["transactions"][0]["first_offset"], 0);
        // A lost COMMIT is not to be aborted: that would hide committed records.
        let r_text = f.remediation.as_deref().unwrap();
        assert_eq!(
            r_text.contains("do not let this copy lead"),
            commit,
            "{r_text}"
        );
        assert_eq!(r_text.contains("abort --start-offset"), !commit, "{r_text}");
        assert_eq!(f.evidence["listed_all"], true);
        // Linked to the lost range, itself linked to the damage: one incident, the damage
        // at its root.
        let lost = of_kind(&r, Kind::TruncationBelowHighWatermark);
        assert_eq!(lost.len(), 1);
        assert_eq!(f.caused_by, vec![lost[0].id.clone()]);
        let inc = klogscan::report::triage::incidents(&r.findings);
        let with = inc
            .iter()
            .find(|i| {
                i.members
                    .iter()
                    .any(|&m| r.findings[m].kind == Kind::TransactionReopenedAtRecovery)
            })
            .unwrap();
        assert_eq!(r.findings[with.members[0]].kind, Kind::CrcMismatch);
        // verify: the state the broker loads holds the transaction open.
        let v = request::verify(&Request::new([dirs[0][0].clone()]), None).unwrap();
        let p = &v.report.partitions[0].prediction;
        assert_eq!(p.log_end_offset_after, Some(2));
        assert_eq!(p.producer_state.open_transactions, Some(1));
        assert_eq!(p.producer_state.producers, None);
    }
}

#[test]
fn no_reopened_transaction_when_the_marker_is_not_acknowledged_or_another_copy_holds_it() {
    // The marker (4) at or above the high watermark: not acknowledged, the coordinator
    // still retries it. The lost range (2..3) remains.
    let d = tempfile::tempdir().unwrap();
    let r = scan(&write(d.path(), 4, false, false, false));
    assert_eq!(of_kind(&r, Kind::TruncationBelowHighWatermark).len(), 1);
    assert!(of_kind(&r, Kind::TransactionReopenedAtRecovery).is_empty());
    // Another copy holds the lost range: the restarted copy re-fetches the marker.
    let d = tempfile::tempdir().unwrap();
    let r = scan(&write(d.path(), 6, true, false, false));
    assert_eq!(of_kind(&r, Kind::TruncationBelowHighWatermark).len(), 1);
    assert!(of_kind(&r, Kind::TransactionReopenedAtRecovery).is_empty());
    // The transaction begins above the truncation point: removed whole, nothing reopened.
    let d = tempfile::tempdir().unwrap();
    let dirs = write(d.path(), 7, false, false, true);
    let r = scan(&dirs);
    assert_eq!(of_kind(&r, Kind::TruncationBelowHighWatermark).len(), 1);
    assert!(of_kind(&r, Kind::TransactionReopenedAtRecovery).is_empty());
    let v = request::verify(&Request::new([dirs[0][0].clone()]), None).unwrap();
    assert_eq!(
        v.report.partitions[0]
            .prediction
            .producer_state
            .open_transactions,
        Some(0)
    );
}

#[test]
fn merge_gives_the_reopened_transaction_of_the_one_machine_scan() {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dirs = write(d.path(), 6, false, false, false);
    let scanned = scan(&dirs);
    let files: Vec<PathBuf> = dirs
        .iter()
        .enumerate()
        .map(|(i, dirs)| {
            let f = out.path().join(format!("{i}.klb"));
            let w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
            bundle::collect(dirs, &ScanOptions::default(), w).unwrap();
            f
        })
        .collect();
    let merged = bundle::merge(&files, &ScanOptions::default())
        .unwrap()
        .report;
    let a = of_kind(&scanned, Kind::TransactionReopenedAtRecovery);
    let b = of_kind(&merged, Kind::TransactionReopenedAtRecovery);
    assert_eq!(a.len(), 1);
    assert_eq!(a, b);
}
