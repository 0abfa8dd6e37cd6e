//! What the leader's copy task uploads (`RemoteLogManager.RLMCopyTask.copyLogSegmentsToRemote`,
//! `candidateLogSegments`).

use crate::kafka_quiet_tiered_cases::check;
use crate::kafka_remote_manager_cases::partition;
use crate::kafka_rlmaudit_cases::{copied, gap, metadata, replayed, storage};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::remote_log::TieredLog;
use std::path::Path;

/// The roll and local retention the testkit's history cannot express: an empty active
/// segment at 150 (`log.roll.ms` rolled [0,149] with nothing after it), then [0,149]
/// deleted locally once uploaded (its files written to remote storage already).
fn roll_and_retain(dir: &Path) {
    let part = dir.join("broker-0/orders-0");
    for ext in ["log", "index", "timeindex", "txnindex", "snapshot"] {
        let f = part.join(format!("{:020}.{ext}", 0));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(part.join(format!("{:020}.{ext}", 150)), b"").unwrap();
    }
}

/// `RemoteLogManagerTest.testCopyLogSegmentToRemoteForStaleTopic` and
/// `testCandidateLogSegmentsSkipsActiveSegment`: a topic no one writes to any more — its
/// segment [0,149] rolled by `log.roll.ms`, the active segment at 150 empty, so the last
/// stable offset, the high watermark and the log end are all 150. A segment is a candidate
/// when the next one's base is at or below the last stable offset (150 <= 150): [0,149] is
/// copied; the active one never is. Local retention then deletes [0,149] (uploaded): the
/// local log is the empty active segment, the log start 0. Nothing reported; the remote copy
/// serves 0..=149, the replay reads it. Near miss: the copy still in flight (STARTED, the
/// partition's latest event) while the local segment is gone: 0..=149 are served by nothing.
#[test]
fn rolled_segment_of_a_stale_topic_is_copied_and_the_empty_active_one_is_not() {
    let build = |finish: bool| {
        let mut t = TieredLog::new(partition(&[&[(0, 150)]]));
        let r = t.copy_started(0);
        if finish {
            t.copy_finished(r);
        }
        t.log_start(0);
        check(vec![t], roll_and_retain)
    };
    let c = build(true);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(storage(&c), vec![]);
    let t = c.part(0, false).tiered.clone().unwrap();
    assert_eq!(
        (
            t.log_start_offset,
            t.local_log_start_offset,
            t.log_end_offset
        ),
        (Some(0), Some(150), Some(150))
    );
    assert_eq!(copied(&c), vec![(0, 149)]);
    assert_eq!(replayed(&c), (1, Some(0), Some(149)));

    let c = build(false);
    assert_eq!(
        metadata(&c),
        vec![(Kind::RemoteSegmentGap, 0, Severity::Error)]
    );
    assert_eq!(gap(&c), (0, 149));
    assert_eq!(copied(&c), vec![]);
}
