//! Leader-epoch checkpoint and producer snapshot files a bug leaves behind.

use super::*;

/// `epoch-0` from offset `start`: one two-record plain batch per epoch of `epochs`.
fn epoch_batches(start: i64, epochs: &[i32]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("epoch", 0)
        .start_offset(start)
        .broker_files(PartitionFileOptions::default());
    for &e in epochs {
        p.set_leader_epoch(e);
        p.append(Batch::new(Producer::PLAIN).records(2));
    }
    p
}

/// Replace `leader-epoch-checkpoint` with `entries` (version 0).
fn set_epochs(m: &Manifest, entries: &[(i32, i64)]) {
    let mut text = format!("0\n{}\n", entries.len());
    for (e, o) in entries {
        text.push_str(&format!("{e} {o}\n"));
    }
    std::fs::write(m.dir.join("leader-epoch-checkpoint"), text).unwrap();
}

fn epoch_findings(v: &PartitionVerification) -> Vec<&Finding> {
    of_kind(&v.findings, Kind::LeaderEpochCheckpointMismatch)
}

/// KAFKA-10432 (commit d2521855b8e, "LeaderEpochCache is incorrectly recovered for leader
/// epoch 0"; `LogSegmentTest.testRecoveryRebuildsEpochCache`). `LogSegment.recover` assigned
/// a batch's epoch to the cache only when it was above 0, so a broker recovering a log
/// whose first batches carry epoch 0 wrote a checkpoint without them. The test's segment:
/// batches at 104 (epoch 0), 106 and 108 (epoch 1), 110 (epoch 2); the buggy recovery's file
/// holds `1 106`, `2 110`. A broker of the fixed version keeps that file (its recovery only
/// assigns an epoch above the cache's latest), so epoch 0 stays unknown: a follower asking
/// for its end gets an undefined answer. klogscan must report the file (its first entry
/// starts above the log start, where the batches give epoch 0); the file the fixed
/// recovery writes is quiet.
#[test]
fn kafka_10432_a_checkpoint_without_epoch_0_is_reported() {
    let (_d, m) = write(LogDirBuilder::new(1), epoch_batches(104, &[0, 1, 1, 2]));
    set_epochs(&m, &[(1, 106), (2, 110)]);
    let v = verify(&m);
    let found = epoch_findings(&v);
    assert_eq!(found.len(), 1, "{:#?}", v.findings);
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0].message.contains("log start offset 104"),
        "{}",
        found[0].message
    );
    set_epochs(&m, &[(0, 104), (1, 106), (2, 110)]);
    let v = verify(&m);
    assert!(epoch_findings(&v).is_empty(), "{:#?}", v.findings);
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// KAFKA-10706 (commit bc96a8feb5d, "Ensure leader epoch cache is cleaned after truncation
/// to end offset"; `LogTest.testTruncateToEndOffsetClearsEpochCache`). A follower with
/// epoch 19 from 27 (records 27–28, log end 29) became leader of epoch 20 (entry `20 29`),
/// wrote nothing, and was made follower again: `truncateTo(29)` returned early without
/// `truncateFromEnd`, leaving `20 29` (or `24 29`) in the file, which blocked follower
/// truncation. On disk that is an entry at the log end. A broker of the fixed version drops
/// it at load (`LogLoader.load` → `truncateFromEndAsyncFlush(nextOffset)`), so klogscan
/// must not report it; the same entry one offset lower, over data of epoch 19, is a real
/// disagreement with the batches and is reported.
#[test]
fn kafka_10706_an_epoch_entry_at_the_log_end_is_dropped_at_load() {
    let (_d, m) = write(LogDirBuilder::new(1), epoch_batches(27, &[19]));
    assert_eq!(m.log_end_offset, 29);
    for trailing in [20, 24] {
        set_epochs(&m, &[(19, 27), (trailing, 29)]);
        let v = verify(&m);
        assert!(epoch_findings(&v).is_empty(), "{:#?}", v.findings);
        assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
    }
    set_epochs(&m, &[(19, 27), (20, 28)]);
    let v = verify(&m);
    let found = epoch_findings(&v);
    assert_eq!(found.len(), 1, "{:#?}", v.findings);
    assert!(
        found[0].message.contains("offset 28"),
        "{}",
        found[0].message
    );
}

/// KAFKA-16541 (commit 3835515feaf, "Fix potential leader-epoch checkpoint file
/// corruption"; `LeaderEpochCheckpointFileWithFailureHandlerTest`, and the behaviour of
/// `CheckpointFile.CheckpointReadBuffer.read`). After KAFKA-15046 the truncation paths
/// wrote `leader-epoch-checkpoint` without fsync; an OS crash could leave the renamed file
/// with its pages never written: the right length, all zero bytes. The reader takes the
/// first line (NULs) for the version, `Integer.parseInt` fails and it throws an
/// `IOException` ("Malformed line in checkpoint file"): the partition is not loaded and its
/// log dir goes offline (`CheckpointFileWithFailureHandler.read`). klogscan must report the
/// file as unreadable with that exception; an empty file (a crash before any byte reached
/// the new inode) reads as no entries, which is no load failure.
#[test]
fn kafka_16541_a_zero_filled_epoch_checkpoint_takes_the_log_dir_offline() {
    let (_d, m) = write(LogDirBuilder::new(1), epoch_batches(0, &[3, 4]));
    let path = m.dir.join("leader-epoch-checkpoint");
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    std::fs::write(&path, vec![0u8; len]).unwrap();
    let v = verify(&m);
    let found = epoch_findings(&v);
    assert_eq!(found.len(), 1, "{:#?}", v.findings);
    let ev = &found[0].evidence;
    assert_eq!(ev["java_exception"], "IOException", "{ev}");
    assert!(found[0].broker_behaviour.contains("log dir goes offline"));
    std::fs::write(&path, b"").unwrap();
    let v = verify(&m);
    let offline = v
        .findings
        .iter()
        .filter(|f| !f.evidence["java_exception"].is_null());
    assert_eq!(offline.count(), 0, "{:#?}", v.findings);
    assert!(
        v.prediction.load_failure.is_none(),
        "{:#?}",
        v.prediction.load_failure
    );
    // ... but the cache it loads is empty while the batches carry epochs 3 and 4: the
    // history is lost (nothing rebuilds it after a clean shutdown), a warning.
    let found = epoch_findings(&v);
    assert_eq!(found.len(), 1, "{:#?}", v.findings);
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0].message.contains("holds no entry"),
        "{}",
        found[0].message
    );
}

/// The twin of the empty file: a partition whose log holds no batch, its checkpoint written
/// empty (`0`, `0`: `LeaderEpochFileCache.clearAndFlush` after a full truncation) — the
/// empty cache is the right one, nothing to report.
#[test]
fn an_empty_epoch_checkpoint_of_an_empty_log_is_quiet() {
    let (_d, m) = write(LogDirBuilder::new(1), PartitionBuilder::new("quiet", 0));
    let path = m.dir.join("leader-epoch-checkpoint");
    std::fs::write(&path, b"0\n0\n").unwrap();
    let v = verify(&m);
    assert!(epoch_findings(&v).is_empty(), "{:#?}", v.findings);
}

/// An idempotent producer over two segments: snapshots at the roll (3) and at the log end (6).
fn two_segment_producer() -> PartitionBuilder {
    let p1 = Producer::idempotent(7, 0);
    let mut p = PartitionBuilder::new("snap", 0).broker_files(PartitionFileOptions::default());
    for i in 0..6 {
        if i == 3 {
            p.roll();
        }
        p.append(Batch::new(p1).records(1));
    }
    p
}

/// KAFKA-9892 (commit fa93982d3a6, "Producer state snapshot should be forced to disk"; the
/// fix added no test of its own — the load's behaviour is
/// `ProducerStateManagerTest.testLoadFromCorruptSnapshotFile`). Before the fix
/// `ProducerStateManager.writeSnapshot` did not fsync: after a power loss the newest
/// snapshot (at the log end, 6) can be a file of the right length holding only zeros. Its
/// version field reads 0, so the load throws `CorruptSnapshotException`, deletes it and
/// rebuilds the producer state from the older snapshot (3). klogscan must report the file
/// (`snapshot_corrupt`) and predict the rebuild from `…03.snapshot`; with the file intact
/// the load reads it and nothing is reported.
#[test]
fn kafka_9892_a_zero_filled_producer_snapshot_is_skipped_at_load() {
    for damaged in [true, false] {
        let (_d, m) = write(LogDirBuilder::new(1), two_segment_producer());
        let last = m.dir.join(format!("{:020}.snapshot", 6));
        let len = std::fs::metadata(&last).unwrap().len() as usize;
        if damaged {
            std::fs::write(&last, vec![0u8; len]).unwrap();
        }
        let v = verify(&m);
        let corrupt = of_kind(&v.findings, Kind::SnapshotCorrupt);
        let rebuild = &v.prediction.producer_state;
        if !damaged {
            assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
            assert_eq!(rebuild.snapshot_offset, Some(6));
            continue;
        }
        assert_eq!(corrupt.len(), 1, "{:#?}", v.findings);
        assert_eq!(corrupt[0].severity, Severity::Warning);
        assert!(
            corrupt[0].message.contains("unknown file version 0"),
            "{}",
            corrupt[0].message
        );
        assert_eq!(rebuild.snapshot_offset, Some(3), "{rebuild:#?}");
        assert_eq!((rebuild.replay_from, rebuild.replay_to), (Some(3), Some(6)));
    }
}
