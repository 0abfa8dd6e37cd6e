//! The log start a leader takes from remote storage (`RemoteLogManager.findLogStartOffset`,
//! `RLMCopyTask.maybeUpdateLogStartOffsetOnBecomingLeader`).

use crate::kafka_quiet_tiered_cases::{check, history};
use crate::kafka_rlmaudit_cases::{copied, metadata, one, replayed};
use klogscan::finding::{Kind, Severity};

/// `RemoteLogManagerTest.testFindLogStartOffsetFallbackToLocalLogStartOffsetWhenRemoteIsEmpty`,
/// `testFindHighestRemoteOffsetOnEmptyRemoteStorage` and `testDeleteRetentionMsOnExpiredSegment`
/// (segments already DELETE_SEGMENT_FINISHED: the run has nothing to do with them):
/// `orders-0`'s copies [0,19] and [20,39] were both deleted by retention, its local log
/// starts at 40. The remote listings are empty, so the leader's log start is the local one,
/// 40 (and its highest remote offset none: the next copy starts at the local log), as the
/// checkpoint says: nothing reported, nothing copied, nothing replayed from remote. A
/// checkpoint of 20, written between the run's two deletes, is no gap either (retention had
/// moved the log start past both). Near miss: the run stopped after the first delete —
/// [20,39] still finished below the log start 40 = the local log start: the retention run at
/// work, info (`remote_log_start_mismatch`, `retention_in_progress`).
#[test]
fn remote_emptied_by_retention_leaves_the_local_log_start() {
    let build = |delete_second: bool, log_start: i64| {
        let mut t = history();
        let a = t.copy(0);
        let b = t.copy(1);
        t.delete(a);
        if delete_second {
            t.delete(b);
        }
        t.local_from(2);
        t.log_start(log_start);
        check(vec![t], |_| {})
    };
    for log_start in [40, 20] {
        let c = build(true, log_start);
        assert_eq!(metadata(&c), vec![], "log start {log_start}");
        assert_eq!(copied(&c), vec![]);
        assert_eq!(replayed(&c), (0, None, None));
        assert_eq!(c.predicted_log_start(0), Some(log_start));
    }

    let c = build(false, 40);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteLogStartMismatch, 20, Severity::Info)]
    );
    let f = one(&c, Kind::RemoteLogStartMismatch);
    assert_eq!(f.evidence["reading"], "retention_in_progress");
    assert_eq!(f.evidence["last_deleted"]["start_offset"], 0);
    assert_eq!(copied(&c), vec![(20, 39)]);
}
