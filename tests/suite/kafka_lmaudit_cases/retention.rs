//! `LogManagerTest.testCleanupExpiredSegments`, `testCleanupSegmentsToMaintainSize` and
//! `testDoesntCleanLogsWithCompact*`: what `LogManager.cleanupLogs` →
//! `UnifiedLog.deleteOldSegments` leaves on disk, and what the next start does with it.

use super::{files, renamed_deleted_below, retained_from};
use crate::kafka_ckaudit_cases::{Dir, assert_quiet, log_of, part, recovered};
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};

/// The Kafka tests' log: 200 one-record batches, ten to a segment (`segment.bytes` of ten
/// record sets), bases 0, 10, …, 190, cleanly shut down.
fn two_hundred(topic: &str) -> LogDirBuilder {
    LogDirBuilder::new(1).partition(log_of(topic, 0, 20, 10))
}

/// `LogManagerTest.testCleanupExpiredSegments`: every segment past `retention.ms`, so
/// `UnifiedLog.deleteOldSegments` rolls an empty active segment at the log end 200 and
/// deletes all twenty below it (`deletableSegments` may take the active segment only after
/// the roll); the log start moves to 200, the first base, so
/// `checkpointLogStartOffsetsInDir` writes no entry; `LeaderEpochFileCache.truncateFromStart`
/// moves the epoch-0 entry to 200. The broker restarts (the Kafka test's fetch at 200 is
/// empty, at 0 out of range): one empty segment, log start and end 200, nothing recovered,
/// nothing said. Near miss: a log start entry 205 above that log end, which retention never
/// writes (`LogLoader.load` → `deleteSegmentsIfLogStartGreaterThanLogEnd`: the segment at
/// 200 is deleted and one at 205 opened; no record was there to lose, so no warning).
#[test]
fn time_retention_leaves_one_empty_segment_at_the_log_end() {
    let write = |ld: LogDirBuilder| {
        let d = Dir::write(ld.partition(PartitionBuilder::new("expire", 0).start_offset(200)));
        d.put("expire-0/leader-epoch-checkpoint", "0\n1\n0 200\n");
        // The active segment the roll made, empty (its indexes trimmed at the shutdown).
        for ext in ["log", "index", "timeindex"] {
            d.put(&format!("expire-0/00000000000000000200.{ext}"), "");
        }
        d
    };
    let d = write(LogDirBuilder::new(1));
    assert!(
        files(&d.root.join("expire-0")).contains(&"00000000000000000200.log".to_owned()),
        "{:?}",
        files(&d.root.join("expire-0"))
    );
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, "expire", 0);
    assert_eq!(p.prediction.log_start_offset_after, Some(200));
    assert_eq!(p.prediction.log_end_offset_after, Some(200));
    assert!(recovered(p).is_empty() && p.prediction.deleted_segments.is_empty());

    let d = write(LogDirBuilder::new(1).log_start_offset("expire", 0, 205));
    let v = d.verify();
    let p = part(&v, "expire", 0);
    assert_eq!(
        (
            p.prediction.log_start_offset_after,
            p.prediction.log_end_offset_after
        ),
        (Some(205), Some(205))
    );
    assert_eq!(
        p.prediction.deleted_segments,
        vec!["00000000000000000200.log".to_owned()]
    );
    assert_eq!(
        p.prediction.created_segment.as_deref(),
        Some("00000000000000000205.log")
    );
    // The log held no record, so nothing is lost: no warning (unlike a log start above a
    // log that held records, `kafka_ckaudit_cases::offsets`).
    assert!(crate::common::quiet::loud(&p.findings).is_empty());
}

/// `LogManagerTest.testCleanupSegmentsToMaintainSize`: `retention.bytes` of five segments
/// and ten bytes, so `deleteRetentionSizeBreachedSegments` deletes the oldest fourteen and
/// keeps 140–190 (six segments); log start 140, no entry. Next start: log start 140, nothing
/// recovered, the producer snapshot at 140 deleted (`truncateAndReload` drops those at or
/// below the log start), nothing said — nor with the high watermark and recovery point
/// checkpointed at 130 before retention ran. Near miss: segment 160 gone too — retention never
/// deletes past the first segment it keeps, so that hole is no retention's: the scan names
/// the ten offsets missing between 159 and 170 (`offset_gap`).
#[test]
fn size_retention_keeps_the_newest_segments_from_a_new_log_start() {
    let d = Dir::write(two_hundred("size"));
    retained_from(&d, "size-0", 140);
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, "size", 0);
    assert_eq!(p.prediction.log_start_offset_after, Some(140));
    assert_eq!(p.prediction.log_end_offset_after, Some(200));
    assert!(recovered(p).is_empty());
    let snap = (p.prediction.leftovers.iter())
        .find(|l| l.file == "00000000000000000140.snapshot")
        .unwrap_or_else(|| panic!("{:#?}", p.prediction.leftovers));
    assert_eq!(snap.kind, "snapshot_below_log_start");
    assert!(
        !d.scan().findings.iter().any(|f| f.kind == Kind::OffsetGap),
        "no gap below a retention-moved log start"
    );

    // The high watermark and recovery point checkpointed before retention ran (every 5 s
    // and every minute), below the new log start: `UnifiedLog.updateHighWatermark` lifts
    // the high watermark to the log start, and `UnifiedLog`'s constructor the recovery
    // point; nothing lost, nothing said.
    let stale = Dir::write(
        two_hundred("size")
            .high_watermark("size", 0, 130)
            .recovery_point("size", 0, 130),
    );
    retained_from(&stale, "size-0", 140);
    assert_quiet(&stale, &stale.verify());

    for name in files(&d.root.join("size-0")) {
        if name.starts_with("00000000000000000160.") {
            std::fs::remove_file(d.root.join("size-0").join(name)).unwrap();
        }
    }
    let gaps: Vec<_> = (d.scan().findings.into_iter())
        .filter(|f| f.kind == Kind::OffsetGap)
        .collect();
    assert_eq!(gaps.len(), 1, "{gaps:#?}");
    assert!(
        gaps[0].message.contains("159 and 170"),
        "{}",
        gaps[0].message
    );
}

/// Both retention tests' `time.sleep(fileDeleteDelayMs + 1)`, had the broker died before it:
/// the fourteen deleted segments' `.log`, `.index`, `.timeindex` and `.snapshot` files still
/// there, renamed `.deleted` (`LocalLog.deleteSegmentFiles`), the shutdown unclean. Next
/// start: `LogLoader.removeTempFilesAndCollectSwapFiles` removes every `.deleted` file, the
/// log starts at 140 and only the last segment is recovered (recovery point 200): infos
/// only. Near miss: segment 0's `.log` left as `.log.swap` (a cleaner's replacement caught
/// mid-swap, not retention's file): the load completes the swap, renaming it back to
/// `00000000000000000000.log`, so the log starts at 0 again.
#[test]
fn a_crash_within_the_file_delete_delay_leaves_deleted_files_the_load_removes() {
    let write = || {
        let d = Dir::write(two_hundred("late").clean_shutdown(false));
        renamed_deleted_below(&d, "late-0", 140);
        d
    };
    let d = write();
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, "late", 0);
    assert_eq!(recovered(p), vec![190]);
    assert_eq!(p.prediction.log_start_offset_after, Some(140));
    let deleted = (p.prediction.leftovers.iter())
        .filter(|l| l.kind == "deleted")
        .count();
    assert_eq!(deleted, 14 * 4 - 1, "{:#?}", p.prediction.leftovers);

    let d = write();
    let dir = d.root.join("late-0");
    std::fs::rename(
        dir.join("00000000000000000000.log.deleted"),
        dir.join("00000000000000000000.log.swap"),
    )
    .unwrap();
    let v = d.verify();
    let p = part(&v, "late", 0);
    let swap = (p.prediction.leftovers.iter())
        .find(|l| l.kind == "swap")
        .unwrap_or_else(|| panic!("{:#?}", p.prediction.leftovers));
    assert!(
        swap.action.contains("renamed to 00000000000000000000.log"),
        "{}",
        swap.action
    );
}

/// `LogManagerTest.testDoesntCleanLogsWithCompactDeletePolicy` and
/// `…WithCompactPolicy`: `LogManager.cleanupLogs` skips a log whose config compacts
/// (`log.config.compact`, true for `compact` and `compact,delete`; the cleaner applies
/// `compact,delete`'s retention), so a keyed log a year older than `retention.ms` keeps all
/// twenty segments from 0. What is on disk is quiet, nothing recovered, log start 0. The
/// decision itself is not expressible: `cleanup.policy` and `retention.ms` are topic configs
/// (ZooKeeper or the KRaft metadata log), and a segment's age is held against the broker's
/// clock, neither in the log dir; klogscan claims nothing about a segment's age, so the
/// same log trimmed by retention to 140 is quiet too (the near miss: what `delete` alone
/// would leave, a log from 140).
#[test]
fn a_compacted_logs_old_segments_are_all_kept() {
    let keyed = || {
        let mut p = PartitionBuilder::new("compacted", 0).start_time(1_500_000_000_000);
        for s in 0..20 {
            if s > 0 {
                p.roll();
            }
            for i in 0..10 {
                p.append(Batch::new(Producer::PLAIN).record(Rec::kv(format!("k{i}"), "v")));
            }
        }
        p
    };
    let d = Dir::write(LogDirBuilder::new(1).partition(keyed()));
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, "compacted", 0);
    assert_eq!(p.prediction.log_start_offset_after, Some(0));
    assert_eq!(p.prediction.log_end_offset_after, Some(200));

    retained_from(&d, "compacted-0", 140);
    let v = d.verify();
    assert_quiet(&d, &v);
    assert_eq!(
        part(&v, "compacted", 0).prediction.log_start_offset_after,
        Some(140)
    );
}
