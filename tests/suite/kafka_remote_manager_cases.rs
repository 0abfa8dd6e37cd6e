//! Kafka's `RemoteLogManager` (core/src/main/java/kafka/log/remote/RemoteLogManager.java), its
//! test class `RemoteLogManagerTest`, `TierStateMachine.buildRemoteLogAuxState` and
//! `UnifiedLog`'s log start rules for remote-enabled logs, held against klogscan's tiering
//! checks (`cluster::tiering::checks`, `cluster::tiering::expiry`).
//!
//! Kafka's tests drive the manager's tasks in memory (copy, expiration, the follower's
//! state built from remote storage) with mocked metadata managers. Here each case is the
//! state those tasks leave on a broker's disk: the `__remote_log_metadata` records they
//! publish (testkit `TieredLog`), the user partition's local segments, its
//! `log-start-offset-checkpoint` and `leader-epoch-checkpoint`. klogscan reads it as
//! `scan` does (`request::run`), without `--remote-storage` (metadata only).
//!
//! Tests marked `#[ignore = "divergence: …"]` assert Kafka's answer where klogscan gives
//! another.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::PartitionBuilder;
use klogscan::testkit::remote_log::TieredLog;
use klogscan::testkit::scenario::{Batch, Producer};

// ----- helpers ----------------------------------------------------------------------------

const TIERED: &[Kind] = &[
    Kind::RemoteSegmentGap,
    Kind::RemoteCopyUnfinished,
    Kind::RemoteDeleteUnfinished,
    Kind::RemoteSegmentAbandonedLineage,
    Kind::RemoteLogStartMismatch,
    Kind::RemoteSegmentMissing,
    Kind::RemoteSegmentMismatch,
    Kind::RemoteMetadataUndecodable,
    Kind::RemoteMetadataConsumerStopped,
];

/// `orders-0` of `brokers::tiered_history()`: [0,19] and [20,39] in epoch 0, [40,59] in
/// epoch 1, [60,79] epoch 1 then 2 from 70, [80,99] epoch 2 (active). Lineage (0,0) (1,40)
/// (2,70).
fn history() -> TieredLog {
    TieredLog::new(klogscan::testkit::brokers::tiered_history())
}

/// `orders-0` with one local segment per entry of `segments`, each a list of
/// `(leader epoch, records)` batches.
pub(crate) fn partition(segments: &[&[(i32, usize)]]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0);
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 {
            p.roll();
        }
        for &(epoch, n) in seg.iter() {
            p.append(Batch::new(Producer::PLAIN).records(n).leader_epoch(epoch));
        }
    }
    p
}

/// Write `t` and scan it as the CLI does (metadata only).
fn run(t: TieredLog) -> ScanReport {
    let d = tempfile::tempdir().unwrap();
    t.write(d.path()).unwrap();
    request::run(&Request::new([d.path()]).with_options(ScanOptions::default()))
        .unwrap()
        .report
}

/// The tiered findings, as `(kind, offset)`, sorted.
fn tiered(r: &ScanReport) -> Vec<(Kind, i64)> {
    let mut v: Vec<(Kind, i64)> = r
        .findings
        .iter()
        .filter(|f| TIERED.contains(&f.kind))
        .map(|f| (f.kind, f.offset.unwrap_or(-1)))
        .collect();
    v.sort_by_key(|(k, o)| (format!("{k:?}"), *o));
    v
}

fn one(r: &ScanReport, k: Kind) -> &Finding {
    let v: Vec<&Finding> = r.findings.iter().filter(|f| f.kind == k).collect();
    assert_eq!(v.len(), 1, "{:#?}", r.findings);
    v[0]
}

/// A copy of offsets `start..=end` with `epochs` by another leader than the history's
/// (its objects local segment `i`'s; metadata only): returns it, finished.
fn other_copy(t: &mut TieredLog, i: usize, start: i64, end: i64, epochs: &[(i32, i64)]) -> usize {
    let mut s = t.remote_segment(i);
    s.start_offset = start;
    s.end_offset = end;
    s.leader_epochs = epochs.to_vec();
    let r = t.copy_started_as(s, i);
    t.copy_finished(r);
    r
}

/// The `reading` of the one `remote_log_start_mismatch`, with its severity.
fn start_reading(r: &ScanReport) -> (Severity, String) {
    let m = one(r, Kind::RemoteLogStartMismatch);
    (
        m.severity,
        m.evidence["reading"].as_str().unwrap().to_string(),
    )
}

// ----- expiration: retention by time and size ----------------------------------------------

/// `RemoteLogManagerTest.testDeleteLogSegmentDueToRetentionTimeBreach` (and
/// `testDeleteLogSegmentDueToRetentionSizeBreach`, `testDeletionOnRetentionBreachedSegments`):
/// a run deletes the breached segments in order and moves the log start to the last one's
/// end plus one (`RLMExpirationTask.cleanupExpiredRemoteLogSegments`,
/// `handleLogStartOffsetUpdate`). The state after a whole run: [0,19] and [20,39] deleted,
/// the log start 40 (the epoch cache truncated there), [40,59] and [60,79] finished, the
/// local log from 60. Healthy: nothing to report.
#[test]
fn time_retention_run_that_finished_leaves_nothing_to_report() {
    let mut t = history();
    let r0 = t.copy(0);
    let r1 = t.copy(1);
    t.copy(2);
    t.copy(3);
    t.delete(r0);
    t.delete(r1);
    t.log_start(40);
    t.local_from(3);
    let r = run(t);
    assert_eq!(tiered(&r), vec![]);
}

/// `RemoteLogManagerTest.testRemoteDeleteLagsOnRetentionBreachedSegments`: the run moves
/// the log start past both breached segments first, then deletes them one at a time (the
/// delete lag is 2, then 1). Caught between the two deletes — [0,19] deleted, [20,39] still
/// finished below the log start 40, which is the local log start — the state is a
/// retention run at work: `remote_log_start_mismatch` as `retention_in_progress` (info),
/// no gap.
#[test]
fn time_retention_run_between_its_two_deletes_is_in_progress() {
    let mut t = history();
    let r0 = t.copy(0);
    t.copy(1);
    t.copy(2);
    t.delete(r0);
    t.log_start(40);
    t.local_from(2);
    let r = run(t);
    assert_eq!(tiered(&r), vec![(Kind::RemoteLogStartMismatch, 20)]);
    assert_eq!(
        start_reading(&r),
        (Severity::Info, "retention_in_progress".to_string())
    );
}

/// `RemoteLogManager.RLMCopyTask` and `RLMExpirationTask` (3.9+, KAFKA-16853: separate
/// tasks on separate thread pools, `rlmCopyThreadPool` / `rlmExpirationThreadPool`): the
/// expiration run deletes [0,19] (DELETE_SEGMENT_STARTED published, the objects' delete in
/// progress) while the copy task, concurrently, copies [60,79] (COPY_SEGMENT_STARTED and
/// FINISHED published after the delete started). The delete is in flight: nothing shows it
/// failed (a failed delete ends the run and the next run republishes DELETE_SEGMENT_STARTED
/// for it, a self transition). (Was a divergence: any later event made the delete
/// `remote_delete_unfinished`; now only a later expiration delete of another segment does.)
#[test]
fn delete_in_flight_beside_the_concurrent_copy_task_is_not_unfinished() {
    let mut t = history();
    let r0 = t.copy(0);
    t.copy(1);
    t.copy(2);
    t.delete_started(r0);
    t.copy(3);
    t.log_start(20);
    t.local_from(3);
    let r = run(t);
    assert_eq!(tiered(&r), vec![]);
}

/// `RemoteLogManagerTest.testDeletionSkippedForSegmentsBeingCopied`: the expiration run
/// skips a segment the copy task is uploading and deletes older ones. [40,59]'s copy
/// started, then the expiration deleted [0,19] (log start 20): the copy in flight is not
/// unfinished (no later copy started), nothing is a gap (the local log starts at 40).
#[test]
fn copy_in_flight_while_the_expiration_deletes_older_segments() {
    let mut t = history();
    let r0 = t.copy(0);
    t.copy(1);
    t.copy_started(2);
    t.delete(r0);
    t.log_start(20);
    t.local_from(2);
    let r = run(t);
    assert_eq!(tiered(&r), vec![]);
}

// ----- copies ------------------------------------------------------------------------------

/// `RemoteLogManagerTest.testFailedCopyShouldDeleteTheDanglingSegment`: a copy that fails
/// (`RemoteStorageException` from `copyLogSegmentData`) is cleaned up at once — its
/// COPY_SEGMENT_STARTED is followed by DELETE_SEGMENT_STARTED and DELETE_SEGMENT_FINISHED —
/// and the next run copies the same local segment again under a new id. Nothing to report.
#[test]
fn failed_copy_deletes_its_dangling_segment_then_retries() {
    let mut t = history();
    let a = t.copy_started(0);
    t.delete(a);
    t.copy(0);
    t.copy(1);
    t.log_start(0);
    t.local_from(2);
    let r = run(t);
    assert_eq!(tiered(&r), vec![]);
}

/// `RemoteLogManagerTest.testCustomMetadataSizeExceedsLimit`: custom metadata over
/// `remote.log.metadata.custom.metadata.max.bytes` — the copied segment is deleted
/// (COPY_SEGMENT_STARTED, DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED; COPY_SEGMENT_FINISHED
/// is never published) and the copy task stops. The local log keeps the segment (local
/// retention deletes only copied segments: `UnifiedLog.deletableSegments`,
/// `highestOffsetInRemoteStorage`). Nothing to report.
#[test]
fn copy_over_the_custom_metadata_limit_is_deleted_and_copying_stops() {
    let mut t = history();
    t.copy(0);
    let a = t.copy_started(1);
    t.delete(a);
    t.log_start(0);
    t.local_from(1);
    let r = run(t);
    assert_eq!(tiered(&r), vec![]);
}

// ----- the leader-epoch lineage -------------------------------------------------------------

/// `RemoteLogManagerTest.testRemoteSegmentWithinLeaderEpochsForOverlappingSegments`
/// (KAFKA-16511) as a whole log: leader A copied [0,19] and [20,39] (epoch 0); B, elected
/// cleanly in epoch 1 at 40, rolled its segments elsewhere: `findHighestRemoteOffset` gives
/// 39, so it copies its segment holding 40, [30,59] with epochs {0:30, 1:40}, overlapping
/// A's. Every offset is served, every segment is inside the lineage. Then time retention
/// deletes A's two segments and moves the log start to 40, truncating the cache to
/// {(1,40), (2,70)}: B's segment, starting before the log start, is still inside (3.7.1+),
/// and nothing is reported either.
#[test]
fn overlapping_copy_of_the_next_leader_stays_inside_the_lineage() {
    let build = |retention: bool| {
        let mut t = history();
        let a0 = t.copy(0);
        let a1 = t.copy(1);
        other_copy(&mut t, 2, 30, 59, &[(0, 30), (1, 40)]);
        t.copy(3);
        if retention {
            t.delete(a0);
            t.delete(a1);
            t.log_start(40);
        } else {
            t.log_start(0);
        }
        t.local_from(4);
        t
    };
    assert_eq!(tiered(&run(build(false))), vec![]);
    assert_eq!(tiered(&run(build(true))), vec![]);
}

/// The new leader's log after an unclean election: [0,19] and [20,29] in epoch 0, [30,49]
/// and [50,69] in epoch 1, [70,89] in epoch 2 (active). Lineage (0,0) (1,30) (2,70).
fn unclean_leader() -> TieredLog {
    TieredLog::new(partition(&[
        &[(0, 20)],
        &[(0, 10)],
        &[(1, 20)],
        &[(1, 20)],
        &[(2, 20)],
    ]))
}

/// `RemoteLogManagerTest.testFindHighestRemoteOffsetWithUncleanLeaderElection`: the old
/// leader A copied [0,19] and [20,39] in epoch 0; B, out of sync with epoch 0 up to 29,
/// leads epoch 1 from 30. For epoch 0 the remote highest offset is 39 but B's epoch 0 ends
/// at 30, so B takes 29 as copied and copies from 30 ([30,49]); its local [0,29] goes by
/// local retention. A's [20,39] ends past B's epoch 0: outside the lineage
/// (`isRemoteSegmentWithinLeaderEpochs`: the end past the next epoch's start), passed over
/// by time and size retention; B reads 20..=29 from it (epoch 0's map). No gap; the
/// segment is `remote_segment_abandoned_lineage` (warning) with a `log_start_reaches`
/// expiry.
#[test]
fn unclean_leader_copies_from_its_own_epoch_end() {
    let mut t = unclean_leader();
    t.copy(0);
    other_copy(&mut t, 1, 20, 39, &[(0, 20)]);
    t.copy(2);
    t.log_start(0);
    t.local_from(2);
    let r = run(t);
    assert_eq!(tiered(&r), vec![(Kind::RemoteSegmentAbandonedLineage, 20)]);
    let a = one(&r, Kind::RemoteSegmentAbandonedLineage);
    assert_eq!(a.severity, Severity::Warning);
    assert_eq!(a.evidence["reason"], "ends_after_epoch");
    assert_eq!(a.evidence["expiry"]["when"], "log_start_reaches");
}

/// The same state, at the log start 30 (a `DeleteRecords` there, or retention): the epoch
/// cache truncated at 30 is {(1,30), (2,70)}, every epoch of A's [20,39] is below its
/// earliest, and `deleteLogSegmentsDueToLeaderEpochCacheTruncation` deletes it at the end of
/// the next run — klogscan says so (`next_run`, info).
#[test]
fn unclean_leaders_abandoned_copy_goes_once_epoch_zero_leaves_the_cache() {
    let mut t = unclean_leader();
    t.copy(0);
    other_copy(&mut t, 1, 20, 39, &[(0, 20)]);
    t.copy(2);
    t.log_start(30);
    t.local_from(2);
    let r = run(t);
    let a = one(&r, Kind::RemoteSegmentAbandonedLineage);
    assert_eq!(a.severity, Severity::Info);
    assert_eq!(a.evidence["expiry"]["when"], "next_run");
}

/// The expiry klogscan predicts for A's [20,39] at the log start 0: Kafka deletes it once
/// the log start reaches 30 — the start of epoch 1, the first lineage epoch above the
/// segment's; from there the truncated cache's earliest epoch is 1 and the truncation rule
/// (`deleteLogSegmentsDueToLeaderEpochCacheTruncation`) needs no more: it does not ask that
/// the segment end below the log start (the previous test is that state). (Was a
/// divergence: `expiry::expiry` took the later of that epoch's start and the segment's end
/// plus one for both rules, and said 40.)
#[test]
fn unclean_leaders_abandoned_copy_expiry_names_the_next_epochs_start() {
    let mut t = unclean_leader();
    t.copy(0);
    other_copy(&mut t, 1, 20, 39, &[(0, 20)]);
    t.copy(2);
    t.log_start(0);
    t.local_from(2);
    let r = run(t);
    let a = one(&r, Kind::RemoteSegmentAbandonedLineage);
    assert_eq!(
        a.evidence["expiry"],
        serde_json::json!({"when": "log_start_reaches", "log_start_offset": 30, "first_epoch": 1})
    );
}

// ----- the log start -----------------------------------------------------------------------

/// `LogLoader.load` for a remote-enabled log takes the checkpointed log start as it is (no
/// `max` with the first local segment's base, unlike a local-only log), and
/// `UnifiedLog.localLogStartOffset` is the first local segment's base: log start 0, local
/// log start 40, [0,39] in remote storage. Nothing to report; the report keeps both.
#[test]
fn log_start_below_the_local_log_is_the_checkpointed_one() {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.log_start(0);
    t.local_from(2);
    let r = run(t);
    assert_eq!(tiered(&r), vec![]);
    let p = r.partitions.iter().find(|p| p.topic == "orders").unwrap();
    let tr = p.tiered.as_ref().unwrap();
    assert_eq!(tr.log_start_offset, Some(0));
    assert_eq!(tr.local_log_start_offset, Some(40));
    assert_eq!(tr.remote, vec![(0, 19), (20, 39)]);
}

/// `UnifiedLog.maybeIncrementLogStartOffset` (a `DeleteRecords` at 50, inside the local
/// segment [40,59]): the log start moves to 50, the epoch cache is truncated there
/// ({(1,50), (2,70)}), and the remote segments wholly below it, [0,19] and [20,39] of
/// epoch 0, are the next expiration run's (epoch 0 is below the cache's earliest:
/// `deleteLogSegmentsDueToLeaderEpochCacheTruncation`). Nothing to report.
#[test]
fn delete_records_inside_the_local_log_leaves_the_remote_segments_to_the_next_run() {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.copy(2);
    t.log_start(50);
    t.local_from(2);
    let r = run(t);
    assert_eq!(tiered(&r), vec![]);
}

/// The leader's side of the next test: its run moved the log start to 40 (the local log
/// start) past [0,19] and [20,39] and had not begun deleting them (leadership moved, or the
/// broker stopped, in between); its cache is truncated at 40. klogscan gives both readings
/// (`retention_window_or_reset`, info).
#[test]
fn retention_window_on_the_leader_gives_both_readings() {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.copy(2);
    t.log_start(40);
    t.local_from(2);
    let r = run(t);
    assert_eq!(tiered(&r), vec![(Kind::RemoteLogStartMismatch, 0)]);
    assert_eq!(
        start_reading(&r),
        (Severity::Info, "retention_window_or_reset".to_string())
    );
}

/// `TierStateMachine.buildRemoteLogAuxState` (a follower whose fetch offset is below the
/// leader's local log start, OFFSET_MOVED_TO_TIERED_STORAGE): it truncates fully and starts
/// at the end of the remote segment holding the leader's local log start less one (40),
/// takes the leader's log start (40), and then `assign`s to its epoch cache the entries of
/// that segment's `leader_epoch_checkpoint` object — the leader's whole cache when it copied
/// the segment, from the log start of that time (0): nothing truncates them at the new log
/// start (`maybeIncrementLogStartOffset` ran before, on an empty cache). Its
/// `leader-epoch-checkpoint` is then (0,0) (1,40) (2,70) under a log start of 40, in the
/// same retention window as the leader above. The files cannot tell it from a log start
/// reset at a restart (KAFKA-15351): both readings are said, at info. (Was a divergence:
/// klogscan said `log_start_reset` at warning, the remote data lost to consumers.)
#[test]
fn follower_built_from_remote_storage_is_not_a_log_start_reset() {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.copy(2);
    t.log_start(40);
    t.local_from(2);
    t.lineage(&[(0, 0), (1, 40), (2, 70)]);
    let r = run(t);
    assert_eq!(tiered(&r), vec![(Kind::RemoteLogStartMismatch, 0)]);
    let (severity, _) = start_reading(&r);
    assert_eq!(severity, Severity::Info);
    let m = (r.findings.iter())
        .find(|f| f.kind == Kind::RemoteLogStartMismatch)
        .unwrap();
    assert!(
        m.message.contains("buildRemoteLogAuxState"),
        "{}",
        m.message
    );
}
