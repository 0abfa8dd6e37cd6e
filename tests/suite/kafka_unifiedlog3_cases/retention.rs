//! Segments deleted below the high watermark, and the leader-epoch cache and producer
//! snapshot a deletion or truncation leaves.

use super::*;

/// 100 single-record batches in segments of five (bases 0, 5, …, 95), with the epoch
/// cache the test ends with written separately.
fn hundred_in_fives() -> PartitionBuilder {
    let mut p = part();
    for i in 0..100 {
        if i > 0 && i % 5 == 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values(["test"]));
    }
    p
}

/// Delete the segments below `start` and their roll snapshots (`deleteProducerSnapshots`
/// removes the snapshot at each deleted segment's base).
fn delete_below(m: &Manifest, start: i64) {
    for base in (0..start).step_by(5) {
        rm_segment(&m.dir, base);
        if base > 0 {
            rm(&m.dir, &[snap(base)]);
        }
    }
}

/// `UnifiedLogTest.testDeleteOldSegments`, `testSegmentDeletionWithHighWatermarkInitialization`
/// and `testCannotDeleteSegmentsAtOrAboveHighWatermark`: expired segments are deleted only
/// below the high watermark — with it at 27, the segments up to 24 go and the log starts at
/// 25, the first segment base at or below it. That directory raises nothing; the log start
/// is 25 and the high watermark 27, and the load keeps both. Near miss: a log start
/// checkpoint at 30, above the checkpointed high watermark 27 — what neither DeleteRecords
/// (`testCannotIncrementLogStartOffsetPastHighWatermark`) nor retention does, but a stale
/// high watermark checkpoint gives — is not an error: the load raises the high watermark to
/// the log start (`UnifiedLog.updateHighWatermark`).
#[test]
fn delete_old_segments_below_high_watermark() {
    for start in [25, 30] {
        let ld = LogDirBuilder::new(1)
            .log_start_offset("ul", 0, start)
            .high_watermark("ul", 0, 27);
        let (_d, m) = write(ld, hundred_in_fives());
        delete_below(&m, 25);
        let r = scan_dir(&m.dir);
        assert_eq!(r.partitions[0].log_start_offset, Some(start));
        assert_eq!(r.partitions[0].high_watermark, Some(27));
        assert_eq!(r.partitions[0].log_end_offset, Some(100));
        let v = verify(&m);
        assert_eq!(v.prediction.log_start_offset_after, Some(start));
        assert!(v.prediction.deleted_segments.is_empty());
        if start == 25 {
            assert!(r.findings.is_empty(), "{:#?}", r.findings);
            assert!(v.findings.is_empty(), "{:#?}", v.findings);
        } else {
            assert!(
                v.findings.iter().all(|f| f.severity < Severity::Error),
                "{:#?}",
                v.findings
            );
        }
    }
}

/// The end of `UnifiedLogTest.testDeleteOldSegments`: with the high watermark at the log
/// end every segment expires, leaving one empty segment at 100 (log start 100) and an
/// epoch cache truncated from the start to its latest entry moved to the log start,
/// `(1, 100)`. Nothing is reported; the load keeps log start and end at 100. Near miss: the
/// cache as it was before the deletion (`(0, 0)`, `(1, 90)`: not yet flushed,
/// `truncateFromStartAsyncFlush`) is no `leader_epoch_checkpoint_mismatch` either — the
/// entries lie below the log start, which the load truncates from
/// (`LogLoader.load` → `truncateFromStartAsyncFlush`).
#[test]
fn delete_old_segments_expires_every_segment() {
    for cache in ["0\n1\n1 100\n", "0\n2\n0 0\n1 90\n"] {
        let ld = LogDirBuilder::new(1)
            .log_start_offset("ul", 0, 100)
            .high_watermark("ul", 0, 100);
        let (_d, m) = write(ld, hundred_in_fives());
        delete_below(&m, 100);
        empty_segment(&m.dir, 100);
        std::fs::write(m.dir.join("leader-epoch-checkpoint"), cache).unwrap();
        let v = verify(&m);
        assert!(v.findings.is_empty(), "{cache:?}: {:#?}", v.findings);
        let pr = &v.prediction;
        assert_eq!(
            (pr.log_start_offset_after, pr.log_end_offset_after),
            (Some(100), Some(100))
        );
        assert!(pr.deleted_segments.is_empty());
        let r = scan_dir(&m.dir);
        assert_eq!(r.partitions[0].log_start_offset, Some(100));
    }
}

/// `UnifiedLogTest.testTruncateToEndOffsetClearsEpochCache`: a follower holds 27–28 at
/// leader epoch 19 (epoch cache `(19, 27)`); becoming leader adds `(20, 29)` at the log
/// end, and a truncation to or past the log end drops it again. Either file is consistent
/// with the log: the entry at the log end holds no batch (the load drops it,
/// `truncateFromEndAsyncFlush`). Near miss: a cache saying epoch 20 from 27, over batches
/// of epoch 19, is a `leader_epoch_checkpoint_mismatch`.
#[test]
fn truncate_to_end_offset_clears_epoch_cache() {
    for (cache, bad) in [
        ("0\n1\n19 27\n", false),
        ("0\n2\n19 27\n20 29\n", false),
        ("0\n1\n20 27\n", true),
    ] {
        let mut p = part().start_offset(27).leader_epoch(19);
        p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
        let (_d, m) = write(LogDirBuilder::new(1), p);
        assert_eq!(m.log_end_offset, 29);
        std::fs::write(m.dir.join("leader-epoch-checkpoint"), cache).unwrap();
        let v = verify(&m);
        let mismatch = of_kind(&v.findings, Kind::LeaderEpochCheckpointMismatch);
        assert_eq!(
            mismatch.len(),
            usize::from(bad),
            "{cache:?}: {:#?}",
            v.findings
        );
        if !bad {
            assert!(v.findings.is_empty(), "{cache:?}: {:#?}", v.findings);
        }
    }
}

/// `UnifiedLogTest.testProducerSnapshotAfterSegmentRollOnAppend`: producer 1's second
/// 512-byte batch rolls a segment at 1 (snapshot at 1); `truncateTo(1)` removes it, leaving
/// an empty segment at 1 and the snapshot, whose entry for producer 1 has first and last
/// data offset 0. That directory loads from the snapshot at 1 with nothing to replay (one
/// producer), and raises nothing. Near miss: the snapshot at 2 the removed batch left is
/// above the log end and deleted; the one at 1 matches a segment base, so it is no stray
/// and is still loaded.
#[test]
fn producer_snapshot_after_segment_roll_on_append() {
    for stale in [false, true] {
        let mut p = part();
        p.append(Batch::new(idem(1)).values([vec![0u8; 512]]));
        let (_d, m) = write(LogDirBuilder::new(1), p);
        empty_segment(&m.dir, 1);
        if stale {
            std::fs::copy(m.dir.join(snap(1)), m.dir.join(snap(2))).unwrap();
        }
        let r = scan_dir(&m.dir);
        assert_eq!(
            (state(&r, 1).last_sequence, state(&r, 1).last_offset),
            (0, 0)
        );
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        let v = verify(&m);
        assert_eq!(
            rebuild(&v),
            (Some(1), Some(1), Some(1), false, Some(1), Some(0))
        );
        if stale {
            assert_eq!(
                leftovers(&v),
                vec![(snap(2), "snapshot_beyond_log".to_string())]
            );
        } else {
            assert!(v.findings.is_empty(), "{:#?}", v.findings);
            assert!(leftovers(&v).is_empty());
        }
    }
}
