//! When retention deletes what time and size retention pass over, as
//! `RemoteLogManager.RLMExpirationTask.cleanupExpiredRemoteLogSegments` decides it
//! (`cluster::tiering::expiry`): a segment outside the leader-epoch lineage
//! (`remote_segment_abandoned_lineage`: on the leader's next run, once the log start reaches
//! an offset, or never with this lineage) and finished segments below the log start
//! (`remote_log_start_mismatch`: a retention run in progress, its window or a reset, the
//! shape of KAFKA-15351).
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::PartitionBuilder;
use klogscan::testkit::remote_log::{TieredLog, TieredManifest};
use klogscan::testkit::scenario::{Batch, Producer};

const TIERED: &[Kind] = &[
    Kind::RemoteSegmentGap,
    Kind::RemoteCopyUnfinished,
    Kind::RemoteDeleteUnfinished,
    Kind::RemoteSegmentAbandonedLineage,
    Kind::RemoteLogStartMismatch,
    Kind::RemoteSegmentMissing,
    Kind::RemoteSegmentMismatch,
    Kind::RemoteMetadataUndecodable,
];

/// `orders-0` with one local segment per entry of `segments`, each a list of
/// `(leader epoch, records)` batches.
fn history(segments: &[&[(i32, usize)]]) -> PartitionBuilder {
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

/// Scan `t` (metadata only: no remote storage).
fn scan(t: TieredLog) -> (TieredManifest, Vec<Finding>) {
    let d = tempfile::tempdir().unwrap();
    let m = t.write(d.path()).unwrap();
    let root = m.log_dir.parent().unwrap().to_path_buf();
    let f = klogscan::pipeline::scan(&[root], &ScanOptions::default()).findings;
    (m, f)
}

/// The tiered findings as `(kind, offset)`.
fn tiered(f: &[Finding]) -> Vec<(Kind, i64)> {
    f.iter()
        .filter(|f| TIERED.contains(&f.kind))
        .map(|f| (f.kind, f.offset.unwrap()))
        .collect()
}

fn one(f: &[Finding], k: Kind) -> &Finding {
    let v: Vec<&Finding> = f.iter().filter(|f| f.kind == k).collect();
    assert_eq!(v.len(), 1, "{f:#?}");
    v[0]
}

/// A copy of offsets `start..=end` with `epochs`, by another leader, its objects local
/// segment `i`'s (metadata only): returns it copied.
fn stray(t: &mut TieredLog, i: usize, start: i64, end: i64, epochs: &[(i32, i64)]) -> usize {
    let mut s = t.remote_segment(i);
    s.start_offset = start;
    s.end_offset = end;
    s.leader_epochs = epochs.to_vec();
    let r = t.copy_started_as(s, i);
    t.copy_finished(r);
    r
}

// ----- remote_segment_abandoned_lineage: when it goes -------------------------------------

/// The lineage {(5,100)} (the log start 100), a segment [90,150] of epoch 4 alone: every
/// epoch of it is below the cache's earliest, 5, so the leader's next expiration run deletes
/// it (`deleteLogSegmentsDueToLeaderEpochCacheTruncation`): passing, info.
#[test]
fn abandoned_below_the_earliest_epoch_goes_on_the_next_run() {
    // [0,99] epoch 4, [100,199] epoch 5, [200,249] epoch 5.
    let mut t = TieredLog::new(history(&[&[(4, 100)], &[(5, 100)], &[(5, 50)]]));
    t.copy(1);
    stray(&mut t, 0, 90, 150, &[(4, 90)]);
    t.local_from(2);
    t.log_start(100);
    let (_, f) = scan(t);
    assert_eq!(tiered(&f), vec![(Kind::RemoteSegmentAbandonedLineage, 90)]);
    let a = one(&f, Kind::RemoteSegmentAbandonedLineage);
    assert_eq!(a.severity, Severity::Info);
    assert_eq!(a.evidence["lineage"], serde_json::json!([[5, 100]]));
    assert_eq!(
        a.evidence["expiry"],
        serde_json::json!({"when": "next_run", "earliest_epoch": 5})
    );
    assert!(
        a.message.contains("on the leader's next expiration run"),
        "{}",
        a.message
    );
    assert!(!a.message.contains("never"), "{}", a.message);
}

/// The lineage (4,0) (5,100) (6,200), a segment [90,150] with epoch 4 from 90 and 5 from 95
/// (the lineage's epoch 5 starts at 100): outside the lineage, passed over by time and size
/// retention; once the log start passes its end, 151, the cache's first epoch is 5 and the
/// log-start rule deletes it (`isSegmentBreachByLogStartOffset`). Copied before the good
/// [0,99] and [100,199], it serves no offset the lineage reads.
#[test]
fn abandoned_reached_by_the_lineage_goes_once_the_log_start_passes_it() {
    let build = |log_start: i64| {
        let mut t = TieredLog::new(history(&[&[(4, 100)], &[(5, 100)], &[(6, 50)]]));
        stray(&mut t, 0, 90, 150, &[(4, 90), (5, 95)]);
        t.copy(0);
        t.copy(1);
        t.local_from(2);
        t.log_start(log_start);
        t
    };
    let (_, f) = scan(build(0));
    assert_eq!(tiered(&f), vec![(Kind::RemoteSegmentAbandonedLineage, 90)]);
    let a = one(&f, Kind::RemoteSegmentAbandonedLineage);
    assert_eq!(a.severity, Severity::Warning);
    assert_eq!(a.evidence["reason"], "next_epoch_differs");
    assert_eq!(
        a.evidence["expiry"],
        serde_json::json!({"when": "log_start_reaches", "log_start_offset": 151, "first_epoch": 5})
    );
    assert!(
        a.message
            .contains("deleted once the log start offset reaches 151"),
        "{}",
        a.message
    );
    // The log start at 151: below it, the segment is one the next run deletes by the
    // log-start rule (the lineage truncated there starts with epoch 5): nothing reported.
    let (_, f) = scan(build(151));
    assert!(tiered(&f).is_empty(), "{f:#?}");
}

/// A segment with an epoch (3) above every epoch of the lineage (0, 1, 2): neither rule
/// deletes it until a later leader epoch starts and the log start passes into it.
#[test]
fn abandoned_above_the_lineage_is_never_deleted_with_it() {
    let mut t = TieredLog::new(klogscan::testkit::brokers::tiered_history());
    let r0 = t.copy(0);
    t.copy(1);
    t.delete(r0);
    stray(&mut t, 2, 40, 59, &[(1, 40), (3, 50)]);
    t.copy(2);
    t.copy(3);
    t.local_from(3);
    let (_, f) = scan(t);
    assert_eq!(tiered(&f), vec![(Kind::RemoteSegmentAbandonedLineage, 40)]);
    let a = one(&f, Kind::RemoteSegmentAbandonedLineage);
    assert_eq!(a.severity, Severity::Warning);
    assert_eq!(
        a.evidence["expiry"],
        serde_json::json!({"when": "never", "segment_epoch": 3, "latest_epoch": 2})
    );
    assert!(
        a.message.contains(
            "no retention rule deletes it while the lineage has no epoch at or above its epoch 3"
        ),
        "{}",
        a.message
    );
}

/// `RemoteLogManagerTest.testRemoteSegmentWithinLeaderEpochsForOverlappingSegments`: the
/// lineage {(7,51),(9,100)} (the log start 51), a segment [14,150] with epochs 5 from 14, 7
/// from 15 and 9 from 100, the log end 210. From 3.7.1 (KAFKA-16511) the segment is inside
/// the lineage (its epoch 5, below the lineage's first, is not judged): nothing reported.
#[test]
fn overlapping_segment_of_kafkas_test_is_inside_the_lineage() {
    // [0,99]: epoch 5 to 14, 7 from 15; [100,150] epoch 9; [151,209] epoch 9.
    let mut t = TieredLog::new(history(&[&[(5, 15), (7, 85)], &[(9, 51)], &[(9, 59)]]));
    stray(&mut t, 0, 14, 150, &[(5, 14), (7, 15), (9, 100)]);
    t.local_from(2);
    t.log_start(51);
    t.lineage(&[(7, 51), (9, 100)]);
    let (_, f) = scan(t);
    assert!(tiered(&f).is_empty(), "{f:#?}");
}

// ----- remote_log_start_mismatch: retention in progress, or a reset -----------------------

/// `tiered_history()` with [0,19] and [20,39] copied and the local log from 40; the log
/// start at the local log start, 40.
fn reaching_the_local_log() -> (TieredLog, usize) {
    let mut t = TieredLog::new(klogscan::testkit::brokers::tiered_history());
    let r0 = t.copy(0);
    t.copy(1);
    t.local_from(2);
    t.log_start(40);
    (t, r0)
}

fn reading(f: &Finding) -> &str {
    f.evidence["reading"].as_str().unwrap()
}

/// Remote retention reaching the local log: a run moved the log start to 40 and started
/// deleting [0,19] (the partition's last event); [20,39] waits its turn. Retention in
/// progress, info — not a reset.
#[test]
fn log_start_moved_by_a_retention_run_still_deleting() {
    let (mut t, r0) = reaching_the_local_log();
    t.delete_started(r0);
    let (_, f) = scan(t);
    assert_eq!(tiered(&f), vec![(Kind::RemoteLogStartMismatch, 20)]);
    let m = one(&f, Kind::RemoteLogStartMismatch);
    assert_eq!(m.severity, Severity::Info);
    assert_eq!(reading(m), "retention_in_progress");
    assert_eq!(m.evidence["deletable_by_log_start_rule"], true);
    assert_eq!(m.evidence["delete_pending"]["start_offset"], 0);
    assert!(
        m.message.starts_with("retention in progress"),
        "{}",
        m.message
    );
    assert!(
        m.message.contains("in flight, or it failed"),
        "{}",
        m.message
    );
    assert!(!m.message.contains("KAFKA-15351"), "{}", m.message);
}

/// The run's first delete finished ([0,19] gone, the last event): still in progress.
#[test]
fn log_start_moved_by_a_retention_run_after_its_first_delete() {
    let (mut t, r0) = reaching_the_local_log();
    t.delete(r0);
    let (_, f) = scan(t);
    let m = one(&f, Kind::RemoteLogStartMismatch);
    assert_eq!(
        (m.severity, reading(m)),
        (Severity::Info, "retention_in_progress")
    );
    assert!(
        m.message.contains("latest event deletes segment"),
        "{}",
        m.message
    );
}

/// [0,19] left DELETE_SEGMENT_STARTED while the copy task goes on (3.9+: copies and
/// expiration are two tasks): the delete may be in flight, or failed and retried by the
/// next run — retention in progress, nothing unfinished.
#[test]
fn a_delete_followed_only_by_copies_is_in_flight() {
    let (mut t, r0) = reaching_the_local_log();
    t.delete_started(r0);
    t.copy(2);
    let (_, f) = scan(t);
    assert_eq!(tiered(&f), vec![(Kind::RemoteLogStartMismatch, 20)]);
    let m = one(&f, Kind::RemoteLogStartMismatch);
    assert_eq!(
        (m.severity, reading(m)),
        (Severity::Info, "retention_in_progress")
    );
    assert!(m.message.contains("in flight"), "{}", m.message);
}

/// A later cleanup deleted [20,39] without retrying [0,19] (a run that reaches a
/// DELETE_SEGMENT_STARTED segment retries it): [0,19] was left behind —
/// `remote_delete_unfinished`.
#[test]
fn retention_blocked_on_a_failed_delete() {
    let mut t = TieredLog::new(klogscan::testkit::brokers::tiered_history());
    let r0 = t.copy(0);
    let r1 = t.copy(1);
    t.copy(2);
    t.local_from(2);
    t.log_start(40);
    t.delete_started(r0);
    t.copy(3);
    t.delete(r1);
    let (_, f) = scan(t);
    assert_eq!(
        tiered(&f),
        vec![(Kind::RemoteDeleteUnfinished, 0)],
        "{f:#?}"
    );
}

/// No deletion begun and the epoch cache truncated at the log start: a retention run
/// between moving the log start and its first delete, or a reset — both readings said,
/// info, no KAFKA-15351 claim.
#[test]
fn log_start_at_the_local_start_without_deletions_has_two_readings() {
    let (t, _) = reaching_the_local_log();
    let (_, f) = scan(t);
    assert_eq!(tiered(&f), vec![(Kind::RemoteLogStartMismatch, 0)]);
    let m = one(&f, Kind::RemoteLogStartMismatch);
    assert_eq!(m.severity, Severity::Info);
    assert_eq!(reading(m), "retention_window_or_reset");
    assert!(m.message.contains("cannot tell which"), "{}", m.message);
    assert!(!m.message.contains("the shape of"), "{}", m.message);
}

/// KAFKA-15351 (3.5's `LogLoader`, fixed in 3.6.0): at a restart the log start was reset
/// to the first local segment's base, 60, while the epoch cache was truncated at the
/// checkpointed log start, 20, as before; retention (which had deleted [0,19] earlier) is
/// not deleting anything. The checkpoint still starting at 20 is the reset's mark: the
/// reading stays, at warning.
#[test]
fn log_start_reset_to_the_local_start_keeps_its_reading() {
    let build = |lineage: Option<&[(i32, i64)]>| {
        let mut t = TieredLog::new(klogscan::testkit::brokers::tiered_history());
        let r0 = t.copy(0);
        t.copy(1);
        t.delete(r0);
        t.copy(2);
        t.local_from(3);
        t.log_start(60);
        if let Some(l) = lineage {
            t.lineage(l);
        }
        t
    };
    let (_, f) = scan(build(Some(&[(0, 20), (1, 40), (2, 70)])));
    assert_eq!(tiered(&f), vec![(Kind::RemoteLogStartMismatch, 20)]);
    let m = one(&f, Kind::RemoteLogStartMismatch);
    // Two readings (a reset at a restart, or a follower rebuilt from remote storage,
    // `kafka_remote_manager_cases`): info, both said.
    assert_eq!(m.severity, Severity::Info);
    assert_eq!(reading(m), "log_start_reset");
    assert_eq!(m.evidence["lineage_first_offset"], 20);
    assert!(m.message.contains("(KAFKA-15351"), "{}", m.message);
    assert!(
        m.message.contains("buildRemoteLogAuxState"),
        "{}",
        m.message
    );
    // The cache truncated at 60 (as a retention run moving the log start leaves it): two
    // readings.
    let (_, f) = scan(build(None));
    let m = one(&f, Kind::RemoteLogStartMismatch);
    assert_eq!(
        (m.severity, reading(m)),
        (Severity::Info, "retention_window_or_reset")
    );
}

/// Below the local log start, a segment whose epoch (3) is above the log start's (1):
/// the log-start rule cannot delete it, whatever the run — it stays (warning).
#[test]
fn segment_below_the_local_start_the_log_start_rule_cannot_delete() {
    let (mut t, _) = reaching_the_local_log();
    stray(&mut t, 1, 20, 39, &[(3, 20)]);
    let (_, f) = scan(t);
    let m = one(&f, Kind::RemoteLogStartMismatch);
    assert_eq!(
        (m.severity, reading(m)),
        (Severity::Warning, "not_deletable")
    );
    assert_eq!(m.evidence["deletable_by_log_start_rule"], false);
    assert!(m.message.contains("cannot delete them"), "{}", m.message);
}
