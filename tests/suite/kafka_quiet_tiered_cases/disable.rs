//! A topic whose remote storage was turned off later (KIP-950): copying disabled
//! (`remote.log.copy.disable=true`), then remote storage disabled with
//! `remote.log.delete.on.disable=true`.

use super::{check, history};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::remote_log::{DELETE_SEGMENT_FINISHED, TieredLog};

/// `UnifiedLogTest.testRetentionOnLocalLogDeletionWhenRemoteLogCopyDisabled` and the
/// integration test `DisableRemoteLogOnTopicTest` (storage/src/test/java/org/apache/kafka/
/// tiered/storage/integration/): once copying is disabled the copy task stops
/// (`ConfigHandler`: `stopLeaderCopyRLMTasks`), the expiration task goes on, and the local
/// log is retained by `retention.*` (local retention set to -2) — nothing more uploaded,
/// nothing deleted locally past the last copy. [0,19] and [20,39] remote, the local log
/// from 40 with [40,…] never copied, the log start 0. Quiet.
#[test]
fn copy_disabled_keeps_the_rest_local() {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.local_from(2);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    c.assert_quiet();
    let t = c.part(0, false).tiered.clone().unwrap();
    assert_eq!(t.remote, vec![(0, 19), (20, 39)]);
    assert_eq!(t.local_log_start_offset, Some(40));
}

/// The twin: with copying disabled, local retention still removed [40,59], never uploaded
/// (what `UnifiedLog.deleteOldSegments` refuses: it deletes locally only below the highest
/// offset in remote storage): 40..=59 is a `remote_segment_gap` (error).
#[test]
fn copy_disabled_with_local_retention_past_the_last_copy_is_a_gap() {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.local_from(3);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    c.reported(Kind::RemoteSegmentGap, 0, 40, Severity::Error);
}

/// Remote storage disabled with delete on disable: `ConfigHandler` moves the leader's log
/// start to its local log start (`maybeIncrementLogStartOffset(localLogStartOffset)`) and
/// `RemoteLogManager.stopPartitions` → `deleteRemoteLogPartition` publishes
/// DELETE_SEGMENT_STARTED for every segment, deletes the objects, then publishes
/// DELETE_SEGMENT_FINISHED for every segment (`RemoteLogManagerTest.
/// testStopPartitionsWithDeletion`). `finish`: which segments' DELETE_SEGMENT_FINISHED was
/// published. Broker 0 leads (log start 60); broker 1's checkpoint still says 0 (a
/// follower learns the new log start from its next fetch).
fn deleted_on_disable(broker: i32, log_start: i64, finish: &[usize]) -> TieredLog {
    let mut t = history();
    let copied = [t.copy(0), t.copy(1), t.copy(2)];
    for &r in &copied {
        t.delete_started(r);
    }
    for &r in &copied {
        t.lose_objects(r);
    }
    for &r in finish {
        t.update(copied[r], DELETE_SEGMENT_FINISHED);
    }
    t.local_from(3);
    t.log_start(log_start);
    t.broker(broker);
    t
}

/// `DisableRemoteLogOnTopicTest`'s last steps (remote storage emptied, the local log still
/// read): quiet on the leader and on the follower not yet told the new log start (the
/// segments that held 0..=59 were deleted as a whole, the checkpoint is older than the
/// deletion).
#[test]
fn remote_storage_disabled_with_delete_on_disable() {
    let all = [0, 1, 2];
    let c = check(
        vec![
            deleted_on_disable(0, 60, &all),
            deleted_on_disable(1, 0, &all),
        ],
        |_| {},
    );
    c.assert_quiet();
    let t = c.part(0, false).tiered.clone().unwrap();
    assert!(t.remote.is_empty(), "{:?}", t.remote);
    assert_eq!(t.log_start_offset, Some(60));
}

/// The twin: the broker stopped between the objects' deletion and the last
/// DELETE_SEGMENT_FINISHED ([40,59]'s never published). With remote storage now disabled
/// no task retries it (`stopPartitions` cancelled them; only a topic deletion lists the
/// partition's segments again): `remote_delete_unfinished` (warning) at 40.
#[test]
fn delete_on_disable_interrupted_before_the_last_finish_is_reported() {
    let c = check(vec![deleted_on_disable(0, 60, &[0, 1])], |_| {});
    c.reported(Kind::RemoteDeleteUnfinished, 0, 40, Severity::Warning);
}
