//! Repartition topics after Streams' purges: every commit is followed by
//! `TaskManager.maybePurgeCommittedRecords`, which asks `Admin.deleteRecords` to move each
//! repartition partition's log start to the task's consumed offset plus one
//! (`StreamTask.purgeableOffsets`). The broker raises the log start inside a segment
//! (`UnifiedLog.maybeIncrementLogStartOffset`, refused above the high watermark), truncates the
//! leader-epoch cache from the start (`LeaderEpochFileCache.truncateFromStartAsyncFlush`),
//! later deletes the segments wholly below it with their producer snapshots
//! (`UnifiedLog.deleteLogStartOffsetBreachedSegments`, `deleteProducerSnapshots`) and writes
//! the start to `log-start-offset-checkpoint` (`LogManager.checkpointLogStartOffsetsInDir`).

use super::group::group_log;
use super::{REPARTITION, T0, loud, write_and_check_with};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::Path;

/// The leader epoch of the repartition partition's leader.
const EPOCH: i32 = 3;

/// Repartition partition 0, written by the upstream task's producer (`txn`: a transactional
/// one under exactly-once v2, its transactions committed; else idempotent, as a 3.x producer
/// is by default under at-least-once): four segments of four 5-record batches (a
/// transaction is one batch and its COMMIT). Returns the partition and the offsets of its
/// COMMIT markers.
fn repartition(txn: bool) -> (PartitionBuilder, Vec<i64>) {
    let p = if txn {
        Producer::transactional(7001, 0)
    } else {
        Producer::idempotent(7001, 0)
    };
    let mut part = PartitionBuilder::new(REPARTITION, 0)
        .leader_epoch(EPOCH)
        .start_time(T0)
        .time_step(100);
    let mut markers = Vec::new();
    for seg in 0..4 {
        if seg > 0 {
            part.roll();
        }
        for _ in 0..4 {
            part.append(Batch::new(p).records(5));
            if txn {
                markers.push(part.next_offset());
                part.commit(p, 0);
            }
        }
    }
    (part, markers)
}

/// What the broker leaves of `<REPARTITION>-0` once the start moved to `start`: the segments
/// wholly below it and their snapshots deleted, the epoch checkpoint starting at `start`.
fn purge(dir: &Path, start: i64, segments: &[(i64, std::path::PathBuf)]) {
    let pdir = dir.join(format!("{REPARTITION}-0"));
    for w in segments.windows(2) {
        if w[1].0 <= start {
            for ext in ["log", "index", "timeindex", "txnindex", "snapshot"] {
                let _ = std::fs::remove_file(pdir.join(format!("{:020}.{ext}", w[0].0)));
            }
        }
    }
    let lec = format!("0\n1\n{EPOCH} {start}\n");
    std::fs::write(pdir.join("leader-epoch-checkpoint"), lec).unwrap();
}

fn log_dir(part: PartitionBuilder, start: i64, committed: i64) -> LogDirBuilder {
    LogDirBuilder::new(1)
        .partition(part)
        .partition(group_log(committed, 0))
        .log_start_offset(REPARTITION, 0, start)
}

/// At-least-once: the task consumed up to offset 46 and committed 47
/// (`StreamTask.committableOffsetsAndMetadata`: the next record's offset), then purged before
/// 47 (`purgeableOffsets`: consumed + 1). The log start is 47, inside the batch 45–49 of the
/// third segment (base 40); the two segments below are gone, and so is the snapshot at 20;
/// the one at 40 stays (the broker deletes it at its next load:
/// `ProducerStateManager.truncateAndReload` removes snapshots at or below the log start).
/// The group's committed offset equals the new start. Nothing at warning or above.
/// Twin: the group's last commit is 45, below the start (the records were deleted before the
/// group read them — what `deleteRecords` by anything but Streams' purge does): a
/// `committed_offset_below_log_start` warning.
#[test]
fn repartition_topic_purged_inside_a_segment() {
    for committed in [47, 45] {
        let (part, _) = repartition(false);
        let segs: Vec<(i64, std::path::PathBuf)> = [0, 20, 40, 60]
            .into_iter()
            .map(|b| (b, Default::default()))
            .collect();
        let q = write_and_check_with(log_dir(part, 47, committed), |d| purge(d, 47, &segs));
        if committed == 47 {
            q.assert_quiet();
            let r = (q.scan.partitions.iter()).find(|p| p.topic == REPARTITION);
            assert_eq!(r.unwrap().log_start_offset, Some(47));
        } else {
            let f = q.assert_reported(
                Kind::CommittedOffsetBelowLogStart,
                Severity::Warning,
                REPARTITION,
            );
            assert_eq!(f.evidence["lost"], 2);
        }
    }
}

/// Exactly-once v2: the upstream thread's transactions on the repartition partition, each a
/// batch and its COMMIT. The downstream task reads committed (`isolation.level` set by
/// `StreamsConfig` under EOS) up to the last record before a COMMIT at 53 and purges before
/// it: the log start is the COMMIT marker itself; its transaction's data lies below the
/// start. Its consumer position is past the marker, so it commits 54
/// (`StreamTask.findOffset` → `KafkaConsumer.position`). Nothing at warning or above.
/// Twin: a `log-start-offset-checkpoint` past the log end (the broker refuses a
/// `deleteRecords` above its high watermark: `UnifiedLog.maybeIncrementLogStartOffset`
/// throws `OffsetOutOfRangeException`): reported at warning or above.
#[test]
fn exactly_once_repartition_topic_purged_to_a_commit_marker() {
    let (part, markers) = repartition(true);
    let start = markers[8];
    assert_eq!(start, 53);
    let end = part.log_end_offset();
    let segs: Vec<(i64, std::path::PathBuf)> = [0, 24, 48, 72]
        .into_iter()
        .map(|b| (b, Default::default()))
        .collect();
    let q = write_and_check_with(log_dir(part, start, start + 1), |d| purge(d, start, &segs));
    q.assert_quiet();
    // twin: the start past the log end
    let (part, _) = repartition(true);
    let q = write_and_check_with(log_dir(part, end + 5, start + 1), |d| {
        purge(d, start, &segs)
    });
    let f = (q.verify.findings())
        .find(|f| f.kind == Kind::CheckpointInconsistent && f.topic == REPARTITION);
    let f = f.unwrap_or_else(|| panic!("{:#?}", loud(q.verify.findings())));
    assert!(f.severity >= Severity::Warning);
    assert!(
        f.message.contains("above the log end offset"),
        "{}",
        f.message
    );
}
