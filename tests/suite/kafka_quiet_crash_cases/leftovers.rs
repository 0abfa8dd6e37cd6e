//! Files an operation interrupted by the crash leaves beside the log: a topic being deleted
//! (`-delete` directory), retention's and the cleaner's renamed segments (`.deleted`,
//! `.cleaned`), a checkpoint's temporary file (`.tmp`), a producer snapshot a roll had not
//! flushed. Each is handled by `LogManager.loadLog` / `LogLoader.load` without loss; none
//! deserves a warning but the torn snapshot, for which Kafka itself logs one.

use super::{Crashed, assert_kept_whole, busy_log, crash, file, from_floor, recovered, seg};
use crate::kafka_valid_data_quiet_cases::lines;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::LogDirBuilder;

/// A log dir holding the busy log `orders-0` (crashed with the recovery point 4 behind the
/// log end) and a second partition `events-0`, the crash applied to both.
fn two_partitions(extra: impl FnOnce(&std::path::Path)) -> Crashed {
    let a = busy_log("orders");
    let b = busy_log("events");
    let (la, lb) = (a.log_end_offset(), b.log_end_offset());
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("orders", 0, la - 4)
        .recovery_point("events", 0, lb - 4)
        .high_watermark("orders", 0, la - 2)
        .high_watermark("events", 0, lb - 2)
        .partition(a)
        .partition(b);
    crash(ld, |dir, _| extra(dir))
}

/// `LogManagerTest.testFileReferencesAfterAsyncDelete`: deleting a topic renames the
/// partition directory `<topic>-<partition>.<uuid>-delete` (`LogManager.asyncDelete`) with
/// its active segment as it is (indexes untrimmed), and removes it only after
/// `file.delete.delay.ms`; the broker died inside that minute. At the next start
/// `LogManager.loadLog` loads it and queues it for deletion again (`addLogToBeDeleted`),
/// and `LogLoader.load` skips `recoverLog` for a `-delete` directory: nothing is recovered
/// or truncated there, and no reader ever fetches from it. Its entries are gone from the
/// log dir's checkpoints (`checkpointLogRecoveryOffsetsInDir` after the rename). The broker
/// preallocated its segments, so the active one ends in zeros: with no recovery and no
/// read of the segment's end for a `-delete` directory (`RecoveryOffsets(0, 0)`), they fail
/// nothing. Nothing at warning or above; the live partition is predicted as any crashed one.
#[test]
fn topic_deleted_a_few_seconds_before_the_crash() {
    let c = two_partitions(|dir| {
        let gone = dir.join("events-0.5d1c0b7e2a4f4e1d9c3b6a5f8e7d2c1b-delete");
        std::fs::rename(dir.join("events-0"), &gone).unwrap();
        let mut logs: Vec<_> = (std::fs::read_dir(&gone).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        logs.sort();
        super::set_len(logs.last().unwrap(), 1400);
        for name in [
            "recovery-point-offset-checkpoint",
            "replication-offset-checkpoint",
        ] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with("events ")).collect();
            let body = format!("0\n1\n{}\n", kept[2]);
            std::fs::write(dir.join(name), body).unwrap();
        }
    });
    c.assert_quiet();
    let d = c.part("events");
    let p = &d.prediction;
    assert!(
        p.recovered_segments.is_empty(),
        "{:?}",
        p.recovered_segments
    );
    assert!(p.truncation.is_none() && p.load_failure.is_none(), "{p:#?}");
    assert!(
        p.leftovers.iter().any(|l| l.kind == "delete_dir"),
        "{:?}",
        p.leftovers
    );
    let m = c.manifest_of("orders");
    let v = c.part("orders");
    assert_eq!(recovered(v), from_floor(m, m.log_end_offset - 4));
    assert_kept_whole(v, m.log_end_offset, m.log_end_offset - 4);
}

/// Interrupted retention and cleaning (`LogLoaderTest.testOpenDeletesObsoleteFiles` after a
/// crash rather than a clean shutdown): retention had renamed the first segment's files
/// `.deleted` (`UnifiedLog.deleteSegments` → `LocalLog.deleteSegmentFiles`, removed after
/// `file.delete.delay.ms`) and moved the log start to the next segment's base; the cleaner
/// of the other partition was writing a cleaned copy of its first segment
/// (`<base>.log.cleaned`, `Cleaner.cleanSegments`). `removeTempFilesAndCollectSwapFiles`
/// deletes both kinds; the leader-epoch checkpoint still begins at the old start (the
/// asynchronous flush of `truncateFromStartAsyncFlush`). Quiet; both logs kept whole.
#[test]
fn retention_and_cleaner_interrupted_by_the_crash() {
    let c = two_partitions(|dir| {
        let orders = dir.join("orders-0");
        for ext in ["log", "index", "timeindex"] {
            let from = orders.join(file(0, ext));
            std::fs::rename(&from, orders.join(format!("{}.deleted", file(0, ext)))).unwrap();
        }
        let events = dir.join("events-0");
        let log = std::fs::read(events.join(seg(0))).unwrap();
        std::fs::write(events.join(format!("{}.cleaned", seg(0))), log).unwrap();
        std::fs::write(events.join(format!("{}.cleaned", file(0, "index"))), b"").unwrap();
    });
    c.assert_quiet();
    let o = c.part("orders");
    let om = c.manifest_of("orders");
    let second = om.segments[1].0;
    assert_eq!(o.prediction.log_start_offset_after, Some(second));
    let mut left: Vec<_> = (o.prediction.leftovers.iter())
        .map(|l| (l.file.as_str(), l.kind.as_str()))
        .collect();
    left.sort();
    assert!(
        left.iter().filter(|l| l.1 == "deleted").count() == 3,
        "{left:?}"
    );
    assert_kept_whole(o, om.log_end_offset, om.log_end_offset - 4);
    let e = c.part("events");
    let em = c.manifest_of("events");
    let cleaned = e
        .prediction
        .leftovers
        .iter()
        .filter(|l| l.kind == "cleaned");
    assert_eq!(cleaned.count(), 2, "{:?}", e.prediction.leftovers);
    assert_kept_whole(e, em.log_end_offset, em.log_end_offset - 4);
}

/// `CheckpointFile.write` (server-common) writes `<name>.tmp`, forces it, then moves it over
/// the file (`Utils.atomicMoveWithFallback`); `PartitionMetadataFile` and the leader-epoch
/// checkpoint write the same way. A crash between the write and the move leaves the `.tmp`
/// file, which no load reads and the next write replaces. Info at most.
#[test]
fn checkpoint_temporary_files_left_by_the_crash() {
    let c = two_partitions(|dir| {
        for name in [
            "recovery-point-offset-checkpoint.tmp",
            "replication-offset-checkpoint.tmp",
            "log-start-offset-checkpoint.tmp",
        ] {
            std::fs::write(dir.join(name), "0\n2\norders 0 1").unwrap();
        }
        std::fs::write(dir.join("orders-0/leader-epoch-checkpoint.tmp"), "0\n1\n").unwrap();
        std::fs::write(dir.join("events-0/partition.metadata.tmp"), "").unwrap();
    });
    c.assert_quiet();
    let tmp: Vec<_> = (c.verify.findings())
        .filter(|f| f.kind == Kind::LeftoverFile && f.message.contains(".tmp"))
        .collect();
    assert_eq!(tmp.len(), 5, "{:#?}", lines(c.verify.findings()));
    assert!(tmp.iter().all(|f| f.severity == Severity::Info));
    for p in ["orders", "events"] {
        let v = c.part(p);
        let m = c.manifest_of(p);
        assert_kept_whole(v, m.log_end_offset, m.log_end_offset - 4);
    }
}

/// `ProducerStateManagerTest.testLoadFromEmptySnapshotFile` /
/// `testLoadFromTruncatedSnapshotFile` as a power loss leaves them: the roll's snapshot is
/// written without a sync (`UnifiedLog.roll` → `takeSnapshot`, flushed later with the
/// segment), so the file of the last roll exists but holds half its bytes. Recovering the
/// active segment loads the newest snapshot at or below its base
/// (`ProducerStateManager.truncateAndReload` → `loadFromSnapshot`), which throws
/// `CorruptSnapshotException`: Kafka logs a WARN, deletes it and falls back to the older
/// snapshot, replaying the log from there. Nothing is lost: a `snapshot_corrupt` warning
/// (Kafka's own level), no error, and the log kept whole with a snapshot at the log end.
#[test]
fn roll_snapshot_torn_by_a_power_loss() {
    let mut torn = String::new();
    let c = two_partitions(|dir| {
        let m = dir.join("orders-0");
        let mut snaps: Vec<String> = std::fs::read_dir(&m)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".snapshot"))
            .collect();
        snaps.sort();
        torn = snaps.last().unwrap().clone();
        let path = m.join(&torn);
        let len = std::fs::metadata(&path).unwrap().len();
        super::set_len(&path, len / 2);
    });
    let loud: Vec<_> = (c.verify.findings().chain(&c.scan.findings))
        .filter(|f| f.severity >= Severity::Warning)
        .collect();
    assert!(
        loud.iter()
            .all(|f| f.kind == Kind::SnapshotCorrupt && f.severity == Severity::Warning),
        "{:#?}",
        lines(loud)
    );
    let v = c.part("orders");
    let m = c.manifest_of("orders");
    assert!(
        (v.prediction.leftovers.iter()).any(|l| l.file == torn && l.kind == "corrupt_snapshot"),
        "{:?}",
        v.prediction.leftovers
    );
    assert_kept_whole(v, m.log_end_offset, m.log_end_offset - 4);
    let after = v.prediction.producer_state.snapshots_after_load.clone();
    assert!(after.unwrap().contains(&m.log_end_offset));
}
