//! Snapshots the next load deletes without reading them: above the log end
//! (`ProducerStateManager.truncateAndReload` in the final rebuild), or above the base a
//! segment's recovery rebuilds the producer state to (the same call in
//! `LogLoader.recoverSegment`). A damaged file there never reaches `readSnapshot`, so no
//! `CorruptSnapshotException` is thrown or logged for it.

use super::*;

/// The directory of `UnifiedLogTest.testLoadingLogDeletesProducerStateSnapshotsPastLogEndOffset`:
/// nothing but an empty file `…42.snapshot` (no segment).
fn stray_empty_snapshot_at_42() -> (TempDir, Manifest) {
    let (d, m) = write(LogDirBuilder::new(1), part());
    rm(&m.dir, &[snap(0)]);
    std::fs::write(m.dir.join(snap(42)), b"").unwrap();
    (d, m)
}

/// The directory of `UnifiedLogTest.testRecoveryPointNotIncrementedOnProducerStateSnapshotFlushFailure`
/// after a crash: "a" at 0, the roll to 1 done but its snapshot never flushed (an empty
/// `…1.snapshot`), the recovery point still 0.
fn unflushed_roll_snapshot() -> (TempDir, Manifest) {
    let mut p = part();
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ul", 0, 0);
    let (d, m) = write(ld, p);
    empty_segment(&m.dir, 1);
    std::fs::write(m.dir.join(snap(1)), b"").unwrap();
    (d, m)
}

/// `UnifiedLogTest.testLoadingLogDeletesProducerStateSnapshotsPastLogEndOffset`: the load
/// creates the segment at 0 and deletes the snapshot at 42, above the log end, leaving no
/// snapshot (`takeSnapshot` at 0 is no new offset). Near miss: a valid snapshot at 42 above
/// one batch (log end 1) is a `snapshot_mismatch` (warning) deleted at load just the same,
/// and it costs the good snapshot at 1: `removeStraySnapshots` keeps only the newest
/// snapshot matching no segment base (42), so 1 goes first and the state is replayed from 0.
#[test]
fn loading_log_deletes_producer_state_snapshots_past_log_end_offset() {
    let (_d, m) = stray_empty_snapshot_at_42();
    let v = verify(&m);
    let pr = &v.prediction;
    assert_eq!(pr.created_segment.as_deref(), Some(seg(0).as_str()));
    assert_eq!(pr.log_end_offset_after, Some(0));
    let gone: Vec<String> = leftovers(&v).into_iter().map(|l| l.0).collect();
    assert_eq!(gone, vec![snap(42)]);
    assert_eq!(after_load(&v), Some(vec![]));
    assert_eq!(rebuild(&v).4, Some(0));
    let mut p = part();
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    let (_d, m) = write(LogDirBuilder::new(1), p);
    std::fs::copy(m.dir.join(snap(1)), m.dir.join(snap(42))).unwrap();
    let v = verify(&m);
    let bad = of_kind(&v.findings, Kind::SnapshotMismatch);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert_eq!(bad[0].offset, Some(42));
    assert!(bad[0].broker_behaviour.contains("deleted at load"));
    assert_eq!(
        leftovers(&v),
        vec![
            (snap(1), "stray_snapshot".to_string()),
            (snap(42), "snapshot_beyond_log".to_string())
        ]
    );
    assert_eq!(
        rebuild(&v),
        (None, Some(0), Some(1), false, Some(0), Some(0))
    );
    assert_eq!(after_load(&v), Some(vec![1]));
}

/// `UnifiedLogTest.testRecoveryPointNotIncrementedOnProducerStateSnapshotFlushFailure`:
/// the failed snapshot flush leaves the recovery point at 0, so after the crash both
/// segments are recovered (and the recovery point after the load is still 0); the recovery
/// of segment 0 writes the snapshot at 1 again, which the final rebuild loads.
#[test]
fn recovery_point_not_incremented_on_producer_state_snapshot_flush_failure() {
    let (_d, m) = unflushed_roll_snapshot();
    let v = verify(&m);
    assert_eq!(crate::common::cases::recovered(&v), vec![seg(0), seg(1)]);
    let pr = &v.prediction;
    assert_eq!(pr.recovery_point_after, Some(0));
    assert_eq!(pr.log_end_offset_after, Some(1));
    assert!(pr.truncation.is_none());
    assert!(pr.producer_state.snapshot_written_at_load);
    assert_eq!(rebuild(&v).0, Some(1));
    assert_eq!(after_load(&v), Some(vec![1]));
}

/// The empty snapshot files of the two cases above are never read by Kafka: at 42 above
/// the log end, `truncateAndReload` in the final rebuild deletes it; at 1, the rebuild to
/// segment 0's base that precedes its recovery deletes it (1 > 0) and the recovery writes
/// a new one. No `CorruptSnapshotException` is thrown or logged. Each is a `snapshot_corrupt`
/// whose `broker_behaviour` says it is never read and what the load does with it; the one at
/// 1 is a `snapshot_replaced_at_recovery` leftover (until the audit found it, the words were
/// the throw's, and the leftover `corrupt_snapshot`).
#[test]
fn snapshots_deleted_unread_throw_nothing() {
    for (d, m) in [stray_empty_snapshot_at_42(), unflushed_roll_snapshot()] {
        let v = verify(&m);
        for f in of_kind(&v.findings, Kind::SnapshotCorrupt) {
            assert!(
                !f.broker_behaviour.contains("CorruptSnapshotException"),
                "{}: {}",
                f.segment.as_deref().unwrap_or_default(),
                f.broker_behaviour
            );
        }
        assert!(
            leftovers(&v).iter().all(|l| l.1 != "corrupt_snapshot"),
            "{:?}",
            leftovers(&v)
        );
        drop(d);
    }
}

/// The counterparts of `snapshots_deleted_unread_throw_nothing`, after a clean shutdown of
/// the three-segment log of producer 1 (snapshots at 1, 2 and 3): a damaged newest snapshot
/// is the one the final rebuild reads first, throws `CorruptSnapshotException`, is deleted
/// and the rebuild falls back to 2 (`ProducerStateManager.loadFromSnapshot`,
/// `ProducerStateManagerTest.testLoadFromCorruptSnapshotFile`): a `corrupt_snapshot` leftover
/// and the broker text of the throw. A damaged one at 1, below the valid 3 the load reads,
/// is never read: no leftover, it stays on disk, and its finding says the load keeps it
/// unread (only a later truncation below 3 would reach it).
#[test]
fn a_corrupt_snapshot_is_read_only_when_it_is_the_newest_left() {
    let ld = || LogDirBuilder::new(1).clean_shutdown(true);
    let (_d, m) = write(ld(), three_segments_of_producer_1());
    std::fs::write(m.dir.join(snap(3)), b"").unwrap();
    let v = verify(&m);
    assert_eq!(
        leftovers(&v),
        vec![(snap(3), "corrupt_snapshot".to_string())]
    );
    let bad = of_kind(&v.findings, Kind::SnapshotCorrupt);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert!(
        bad[0]
            .broker_behaviour
            .contains("CorruptSnapshotException at load"),
        "{}",
        bad[0].broker_behaviour
    );
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(2));

    let (_d, m) = write(ld(), three_segments_of_producer_1());
    std::fs::write(m.dir.join(snap(1)), b"").unwrap();
    let v = verify(&m);
    assert!(leftovers(&v).is_empty(), "{:?}", leftovers(&v));
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(3));
    // Still on disk once loaded, with the others.
    assert_eq!(after_load(&v), Some(vec![1, 2, 3]));
    let bad = of_kind(&v.findings, Kind::SnapshotCorrupt);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    let text = &bad[0].broker_behaviour;
    assert!(
        text.starts_with("never read at the next load: it loads the newer snapshot at 3"),
        "{text}"
    );
}
