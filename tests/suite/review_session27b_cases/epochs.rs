//! `leader_epoch_checkpoint_mismatch` on a checkpoint with no entry while the batches carry
//! epochs (`verify::checks::checkpoints::compare_epochs`, `4739a03`): the healthy shapes
//! Kafka leaves with an empty (or emptied) leader-epoch cache over epoch-carrying batches.
//!
//! Kafka (2025-10 tree): `UnifiedLog.append` clears the cache (`clearAndFlush`) on a v0/v1
//! batch; `LogLoader.recoverLog` replays the segments from the recovery point after an
//! unclean shutdown and `LogSegment.recover` assigns every epoch above the cache's latest
//! (all of them into an empty cache); `LogLoader.load` cuts the cache at the log end
//! (`truncateFromEndAsyncFlush`) and at the checkpointed log start;
//! `UnifiedLog.maybeIncrementLogStartOffset` → `LeaderEpochFileCache.truncateFromStartAsyncFlush`
//! moves the first entry to the new log start, flushed in the background.

use klogscan::finding::Kind;
use klogscan::request::{self, Request};
use klogscan::testkit::{Batch, Legacy, LogDirBuilder, Manifest, PartitionBuilder, Producer};
use tempfile::TempDir;

const TOPIC: &str = "epoch-empty";

/// `epoch-empty-0` from 0: one batch of `n` records per `(epoch, n)`; a roll before the
/// batch at index `roll_at` when given.
fn batches(layout: &[(i32, usize)], roll_at: Option<usize>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(TOPIC, 0);
    for (i, &(epoch, n)) in layout.iter().enumerate() {
        if roll_at == Some(i) {
            p.roll();
        }
        p.set_leader_epoch(epoch);
        p.append(Batch::new(Producer::PLAIN).records(n));
    }
    p
}

/// Write `p` as broker 1's only partition, its checkpoint replaced by `entries`.
fn write(p: PartitionBuilder, ld: LogDirBuilder, entries: &[(i32, i64)]) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    let m = m.partitions.into_iter().next().unwrap();
    let mut text = format!("0\n{}\n", entries.len());
    for (e, o) in entries {
        text.push_str(&format!("{e} {o}\n"));
    }
    std::fs::write(m.dir.join("leader-epoch-checkpoint"), text).unwrap();
    (dir, m)
}

/// The messages of `verify`'s `leader_epoch_checkpoint_mismatch` findings.
fn mismatches(m: &Manifest) -> Vec<String> {
    let a = request::verify(&Request::new([m.dir.parent().unwrap()]), None).unwrap();
    (a.report.partitions.iter())
        .flat_map(|p| p.findings.iter())
        .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
        .map(|f| format!("{:?}: {}", f.severity, f.message))
        .collect()
}

/// `UnifiedLogTest.testLeaderEpochCacheClearedAfterDowngradeInAppendedMessages` (trunk
/// 2024-10; `UnifiedLog.append`'s clear is still in the 4.x tree): v2 batches at epochs 3
/// and 4, then a v1 batch appended as a follower (a replica copying a log a message-format
/// downgrade left): the broker clears the cache and flushes it (`clearAndFlush`), so
/// `0 / 0` is the file it writes, and klogscan's own append-path reading
/// (`AppendPathCache::clear`) gives the same empty cache. klogscan: `holds no entry` (the
/// early return in `compare_epochs` skips the append-path reading the non-empty case
/// consults).
#[test]
fn an_empty_checkpoint_left_by_a_legacy_append_is_the_one_kafka_writes() {
    let mut p = batches(&[(3, 2), (4, 2)], None);
    p.legacy(Legacy::v1().values(["x", "y"]));
    let (_d, m) = write(p, LogDirBuilder::new(1), &[]);
    let v = mismatches(&m);
    assert!(v.is_empty(), "{v:#?}");
}

/// The agreeing twin: the same batches with no legacy batch after them — nothing empties
/// the cache on the append path, so an empty file over epochs 3 and 4 is a lost history.
#[test]
fn an_empty_checkpoint_without_a_legacy_append_is_a_mismatch() {
    let (_d, m) = write(batches(&[(3, 2), (4, 2)], None), LogDirBuilder::new(1), &[]);
    let v = mismatches(&m);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("holds no entry"), "{}", v[0]);
}

/// `LogLoader.recoverLog` after an unclean shutdown recovers every segment from the one
/// holding the recovery point (`segments.values(recoveryPointCheckpoint, …)`; a partition
/// absent from `recovery-point-offset-checkpoint` recovers from 0), and `LogSegment.recover`
/// assigns each batch's epoch above the cache's latest — into an empty cache, the whole
/// lineage (`LogSegmentTest.testRecoveryRebuildsEpochCache`). So an empty file (the crash
/// the rule itself names: an unsynced async flush) with the recovery point at the log's
/// first segment loads the full cache: nothing is lost. klogscan: a warning saying the
/// broker loads an empty cache.
#[test]
fn an_empty_checkpoint_rebuilt_by_a_full_recovery_loses_nothing() {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point(TOPIC, 0, 0);
    let (_d, m) = write(batches(&[(3, 2), (4, 2)], None), ld, &[]);
    let v = mismatches(&m);
    assert!(
        v.iter().all(|s| s.starts_with("Info")),
        "the load rebuilds [(3, 0), (4, 2)]: {v:#?}"
    );
}

/// The agreeing twin: the recovery point in the second segment (from offset 2): recovery
/// replays only that segment and assigns epoch 4 from 2; epoch 3 (0..1) stays unknown to
/// the loaded cache — a loss klogscan reports.
#[test]
fn an_empty_checkpoint_past_a_partial_recovery_is_a_mismatch() {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point(TOPIC, 0, 2);
    let (_d, m) = write(batches(&[(3, 2), (4, 2)], Some(1)), ld, &[]);
    let v = mismatches(&m);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("holds no entry"), "{}", v[0]);
}

/// `DeleteRecords` up to the log end (4): `maybeIncrementLogStartOffset(4)` →
/// `truncateFromStartAsyncFlush(4)` leaves the one entry `4 4` (epoch 4 moved to the new
/// log start, `LeaderEpochFileCacheTest.shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset`),
/// flushed in the background; the active segment keeps the batches below 4. A crash before
/// `log-start-offset-checkpoint` was next written leaves it without the new start (no
/// entry: the first segment's base). Every file here is one Kafka writes; klogscan's own
/// rule for a first entry above a stale log start with no clean shutdown (`compare_epochs`'
/// "two readings") is silent — but an entry at the log end is dropped as the load's own
/// before that rule is reached, and the empty remainder is reported.
#[test]
fn a_checkpoint_moved_to_the_log_end_by_delete_records_before_a_crash_is_quiet() {
    let mut p = batches(&[(3, 2)], None);
    p.set_leader_epoch(4);
    p.append(Batch::new(Producer::PLAIN).records(2));
    let ld = LogDirBuilder::new(1).clean_shutdown(false);
    let (_d, m) = write(p, ld, &[(4, 4)]);
    let v = mismatches(&m);
    assert!(v.is_empty(), "{v:#?}");
}

/// The agreeing twin: the same `DeleteRecords` with a clean shutdown after it
/// (`LogManager.shutdown` checkpoints the log start 4): everything below the log start is
/// gone for the broker, so the empty remainder is the right cache. Quiet.
#[test]
fn a_checkpoint_moved_to_the_log_end_with_its_log_start_recorded_is_quiet() {
    let mut p = batches(&[(3, 2)], None);
    p.set_leader_epoch(4);
    p.append(Batch::new(Producer::PLAIN).records(2));
    let ld = LogDirBuilder::new(1).log_start_offset(TOPIC, 0, 4);
    let (_d, m) = write(p, ld, &[(4, 4)]);
    let v = mismatches(&m);
    assert!(v.is_empty(), "{v:#?}");
}
