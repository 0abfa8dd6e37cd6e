//! Truncation below an open transaction, the high watermark and log start checkpoints,
//! segments deleted below the high watermark, and the leader-epoch cache after truncation.

use super::*;

/// Plain records 0–2, then producer 17 (epoch 10) opens a transaction with 3–4: the log of
/// `UnifiedLogTest.testTruncateBelowFirstUnstableOffset` before the truncation.
fn plain_then_open_transaction() -> PartitionBuilder {
    let mut p = part();
    p.append(Batch::new(Producer::PLAIN).values(["0", "1", "2"]));
    p.append(Batch::new(Producer::transactional(17, 10)).values(["3", "4"]));
    p
}

/// Rewrite segment 0 as `truncateTo(0)` / `truncateFullyAndStartAt(0)` leaves it: empty,
/// its indexes empty, the epoch cache emptied (the caller sets high watermark and recovery
/// point to 0, as the truncation moves them).
fn truncate_to_zero(m: &Manifest) {
    empty_segment(&m.dir, 0);
    std::fs::write(m.dir.join("leader-epoch-checkpoint"), "0\n0\n").unwrap();
}

/// `UnifiedLogTest.testTruncateBelowFirstUnstableOffset` and
/// `testTruncateFullyAndStartBelowFirstUnstableOffset`: before, the first unstable offset
/// is 3 (an `open_transaction` at 3, one producer and one open transaction after a load);
/// truncated to 0 (either way: the files are the same), nothing is unstable and no producer
/// is left. Near miss: the snapshot at 5 that held the open transaction left behind is
/// above the log end and deleted at load: the transaction is not resurrected
/// (`open_transactions` 0).
#[test]
fn truncate_below_first_unstable_offset() {
    let (_d, m) = write(LogDirBuilder::new(1), plain_then_open_transaction());
    let r = scan_dir(&m.dir);
    assert_eq!(lso(&r), Some(3));
    let open = of_kind(&r.findings, Kind::OpenTransaction);
    assert_eq!(open.len(), 1, "{:#?}", r.findings);
    assert_eq!(open[0].offset, Some(3));
    assert_eq!(rebuild(&verify(&m)).5, Some(1));
    for stale_snapshot in [false, true] {
        let ld = LogDirBuilder::new(1)
            .high_watermark("ul", 0, 0)
            .recovery_point("ul", 0, 0);
        let (_d, m) = write(ld, plain_then_open_transaction());
        truncate_to_zero(&m);
        if !stale_snapshot {
            rm(&m.dir, &[snap(5)]);
        }
        let r = scan_dir(&m.dir);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(r.partitions[0].transactions.open, 0);
        let v = verify(&m);
        let pr = &v.prediction;
        assert_eq!(pr.log_end_offset_after, Some(0));
        assert_eq!(rebuild(&v).4, Some(0));
        assert_eq!(rebuild(&v).5, Some(0));
        if stale_snapshot {
            // (no `snapshot_mismatch` for it: `stale_snapshot_above_an_emptied_log_is_reported`)
            assert_eq!(
                leftovers(&v),
                vec![(snap(5), "snapshot_beyond_log".to_string())]
            );
        } else {
            assert!(v.findings.is_empty(), "{:#?}", v.findings);
            assert!(
                rebuild(&v).3,
                "clean shutdown, no snapshot: rebuild skipped"
            );
        }
    }
}

/// The near miss of `truncate_below_first_unstable_offset`: the snapshot at 5 (producer
/// 17's open transaction) above a log truncated to 0. klogscan reports a snapshot above the
/// log end as `snapshot_mismatch` (warning: "covers data the log no longer holds") and
/// predicts its deletion; a log that holds no batch ends at its empty segment's base, 0,
/// and the load deletes the snapshot as above it (`ProducerStateManager.truncateAndReload`;
/// `UnifiedLogTest.testLoadingLogDeletesProducerStateSnapshotsPastLogEndOffset`). Until the
/// audit found it the check compared with a log end the scan left null for an empty log,
/// and said nothing.
#[test]
fn stale_snapshot_above_an_emptied_log_is_reported() {
    let ld = LogDirBuilder::new(1)
        .high_watermark("ul", 0, 0)
        .recovery_point("ul", 0, 0);
    let (_d, m) = write(ld, plain_then_open_transaction());
    truncate_to_zero(&m);
    let v = verify(&m);
    assert_eq!(
        leftovers(&v),
        vec![(snap(5), "snapshot_beyond_log".to_string())]
    );
    let stale = of_kind(&v.findings, Kind::SnapshotMismatch);
    assert_eq!(stale.len(), 1, "{:#?}", v.findings);
    assert_eq!(stale[0].offset, Some(5));
}

/// `UnifiedLogTest.testTruncateFullyAndStart`: the same log truncated fully to start at 2
/// with log start 1 (`truncateFullyAndStartAt(2, Some(1))`): one empty segment at 2, log
/// start checkpoint 1, no producer, nothing unstable. On the next load a log without remote
/// storage starts at `max(checkpoint, first segment base)` = 2 (`LogLoader.load`); the
/// checkpoint below the first offset is a stale entry (`checkpoint_inconsistent`, info).
#[test]
fn truncate_fully_and_start() {
    let ld = LogDirBuilder::new(1)
        .log_start_offset("ul", 0, 1)
        .high_watermark("ul", 0, 2)
        .recovery_point("ul", 0, 2);
    let (_d, m) = write(ld, plain_then_open_transaction());
    rm_segment(&m.dir, 0);
    rm(&m.dir, &[snap(5)]);
    empty_segment(&m.dir, 2);
    std::fs::write(m.dir.join("leader-epoch-checkpoint"), "0\n0\n").unwrap();
    let v = verify(&m);
    let pr = &v.prediction;
    assert_eq!(pr.log_start_offset_after, Some(2));
    assert_eq!(pr.log_end_offset_after, Some(2));
    assert_eq!(rebuild(&v).4, Some(0));
    assert_eq!(rebuild(&v).5, Some(0));
    assert!(
        v.findings.iter().all(|f| f.severity == Severity::Info),
        "{:#?}",
        v.findings
    );
    let r = scan_dir(&m.dir);
    assert_eq!(r.partitions[0].transactions.open, 0);
    assert!(r.findings.iter().all(|f| f.kind != Kind::OpenTransaction));
}

/// Two batches of three records (0–2, 3–5) under one leader epoch, optionally with a roll
/// between them.
fn two_batches(roll: bool) -> PartitionBuilder {
    let mut p = part();
    p.append(Batch::new(Producer::PLAIN).values(["a", "b", "c"]));
    if roll {
        p.roll();
    }
    p.append(Batch::new(Producer::PLAIN).values(["a", "b", "c"]));
    p
}

/// `UnifiedLogTest.testHighWatermarkMaintenance` and
/// `testHighWatermarkMetadataUpdatedAfterSegmentRoll`: the high watermark never passes the
/// log end (`updateHighWatermark(5)` on a log ending at 3 gives 3) and follows a truncation
/// down (`truncateTo(3)`: 3). On disk, a checkpointed high watermark at or below the log end
/// — at a segment boundary too (3, the second segment's base) — is reported as is and raises
/// nothing; one above the log end (6 on a log truncated to 3: the checkpoint not yet
/// rewritten) is a `checkpoint_inconsistent` warning, which the load clamps to the log end.
#[test]
fn high_watermark_maintenance() {
    for roll in [false, true] {
        let (_d, m) = write(
            LogDirBuilder::new(1).high_watermark("ul", 0, 3),
            two_batches(roll),
        );
        let r = scan_dir(&m.dir);
        assert_eq!(r.partitions[0].high_watermark, Some(3));
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert!(verify(&m).findings.is_empty());
    }
    let mut p = part();
    p.append(Batch::new(Producer::PLAIN).values(["a", "b", "c"]));
    let (_d, m) = write(LogDirBuilder::new(1).high_watermark("ul", 0, 6), p);
    let v = verify(&m);
    let bad = of_kind(&v.findings, Kind::CheckpointInconsistent);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert_eq!(bad[0].severity, Severity::Warning);
    assert_eq!(bad[0].evidence["checkpoint_offset"], 6);
    assert_eq!(bad[0].evidence["log_end_offset"], 3);
}

/// The end of `UnifiedLogTest.testHighWatermarkMaintenance`: `truncateFullyAndStartAt(4)`
/// leaves log end, log start and high watermark at 4 (an empty segment at 4). A high
/// watermark checkpoint still at 3 (below the log start) is raised to the log start at load
/// (`UnifiedLog.updateHighWatermark` bounds it by the log start): no record is lost, nothing
/// above warning is said.
#[test]
fn high_watermark_follows_a_full_truncation() {
    for hw in [4, 3] {
        let ld = LogDirBuilder::new(1)
            .log_start_offset("ul", 0, 4)
            .high_watermark("ul", 0, hw);
        let (_d, m) = write(ld, part().start_offset(4));
        empty_segment(&m.dir, 4);
        rm(&m.dir, &[snap(4)]);
        let v = verify(&m);
        assert_eq!(v.prediction.log_start_offset_after, Some(4));
        assert_eq!(v.prediction.log_end_offset_after, Some(4));
        if hw == 4 {
            assert!(v.findings.is_empty(), "{:#?}", v.findings);
        } else {
            assert!(
                v.findings.iter().all(|f| f.severity < Severity::Warning),
                "{:#?}",
                v.findings
            );
        }
    }
}
