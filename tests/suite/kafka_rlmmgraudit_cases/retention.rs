//! What the leader's expiration run leaves between its steps
//! (`RemoteLogManager.RLMExpirationTask.cleanupExpiredRemoteLogSegments`).

use crate::kafka_quiet_tiered_cases::check;
use crate::kafka_remote_manager_cases::partition;
use crate::kafka_rlmaudit_cases::{OwnCopy, check_own, copied, gap, metadata, one, storage};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::uuid_text;
use klogscan::testkit::remote_log::TieredLog;

/// `RemoteLogManagerTest.testDeletionOnOverlappingRetentionBreachedSegments`: broker 0's copy
/// S0 [0,99] and the next leader's S1 [0,104] (its own roll), both epoch 0, finished in that
/// order — S1 reaches the epoch's highest offset, so S0 moves to the unreferenced set and both
/// are listed (S1, then S0). Both breach retention: the run moves the log start to the highest
/// end, 104 + 1 = 105 (the local log start), deletes S1, and stops before S0 (the broker
/// stopped). Kafka's next run deletes S0 by the log-start rule: the retention run at work,
/// info (`remote_log_start_mismatch`, `retention_in_progress`, naming S1's delete). Near
/// miss: S0 finishes after S1 — ending below the highest offset it replaces S1 at 0 in the
/// map without marking it unreferenced, so no listing holds S1: the run deletes S0 alone and
/// moves the log start to 100; S1 holds 100..=104 but no lookup reaches it — a gap naming it
/// unserved, and it stays in remote storage.
#[test]
fn overlapping_copies_both_listed_are_both_deleted() {
    let build = |s0_last: bool| {
        let mut t = TieredLog::new(partition(&[&[(0, 105)], &[(0, 20)]]));
        let s0 = OwnCopy::new(&mut t, 0, &[(0, 100)]);
        if s0_last {
            t.copy(0);
            let r0 = s0.copy(&mut t, true);
            t.delete(r0);
            t.log_start(100);
        } else {
            s0.copy(&mut t, true);
            let r1 = t.copy(0);
            t.delete(r1);
            t.log_start(105);
        }
        t.local_from(1);
        (check_own(t, &[&s0]), s0.seg.id)
    };
    let (c, s0) = build(false);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteLogStartMismatch, 0, Severity::Info)]
    );
    assert_eq!(storage(&c), vec![]);
    let f = one(&c, Kind::RemoteLogStartMismatch);
    assert_eq!(f.evidence["reading"], "retention_in_progress");
    assert_eq!(f.evidence["last_deleted"]["end_offset"], 104);
    assert_eq!(f.evidence["segments"][0]["segment_id"], uuid_text(&s0));
    assert_eq!(f.evidence["unlisted_segments"], serde_json::json!([]));
    assert_eq!(copied(&c), vec![(0, 99)]);
    assert_eq!(c.predicted_log_start(0), Some(105));

    let (c, _) = build(true);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteSegmentGap, 100, Severity::Error)]
    );
    assert_eq!(gap(&c), (100, 104));
    let g = one(&c, Kind::RemoteSegmentGap);
    assert_eq!(g.evidence["unserved_segments"][0]["start_offset"], 0);
    assert_eq!(g.evidence["unserved_segments"][0]["end_offset"], 104);
    assert_eq!(copied(&c), vec![(0, 104)]);
}

/// `RemoteLogManagerTest.testDeleteRetentionMsBeingCancelledBeforeSecondDelete`: [0,99] and
/// [100,199] (epoch 0) breach `retention.ms` 0; the run moves the log start to 200 (the local
/// log start), deletes [0,99], and is cancelled (leadership moved) before [100,199]. The new
/// leader's run deletes [100,199] (the log-start rule). On disk between the two: the retention
/// run at work — `remote_log_start_mismatch` info, `retention_in_progress`, the latest event
/// deleting [0,99]; after the new leader's run, nothing. Near miss: the copy task published a
/// copy after the delete (the cancelled run's deletion is no longer the partition's latest
/// event): no deletion is seen under way, and the two readings are said
/// (`retention_window_or_reset`, still info: the log-start rule deletes [100,199]).
#[test]
fn run_cancelled_before_the_second_delete_leaves_it_to_the_next_leader() {
    let build = |copy_after: bool, next_leader_ran: bool| {
        let layout: [&[(i32, usize)]; 4] = [&[(0, 100)], &[(0, 100)], &[(0, 10)], &[(0, 10)]];
        let mut t = TieredLog::new(partition(&layout));
        let a = t.copy(0);
        let b = t.copy(1);
        t.delete(a);
        if copy_after {
            t.copy(2);
        }
        if next_leader_ran {
            t.delete(b);
        }
        t.local_from(2);
        t.log_start(200);
        check(vec![t], |_| {})
    };
    let c = build(false, false);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteLogStartMismatch, 100, Severity::Info)]
    );
    let f = one(&c, Kind::RemoteLogStartMismatch);
    assert_eq!(f.evidence["reading"], "retention_in_progress");
    assert_eq!(f.evidence["last_deleted"]["start_offset"], 0);
    assert_eq!(f.evidence["deletable_by_log_start_rule"], true);
    assert_eq!(copied(&c), vec![(100, 199)]);
    assert_eq!(c.predicted_log_start(0), Some(200));

    let c = build(false, true);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(copied(&c), vec![]);

    let c = build(true, false);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteLogStartMismatch, 100, Severity::Info)]
    );
    let f = one(&c, Kind::RemoteLogStartMismatch);
    assert_eq!(f.evidence["reading"], "retention_window_or_reset");
    assert_eq!(f.evidence["last_deleted"], serde_json::Value::Null);
}
