//! One leader's copy and expiration tasks over a partition's life: local retention above the
//! log start, each segment's way from COPY_SEGMENT_STARTED to DELETE_SEGMENT_FINISHED, a
//! copy orphaned by a leader's crash, a deleted topic's metadata left in
//! `__remote_log_metadata`.

use super::{check, history};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::remote_log::{
    COPY_SEGMENT_FINISHED, COPY_SEGMENT_STARTED, DELETE_PARTITION_FINISHED,
    DELETE_PARTITION_MARKED, DELETE_PARTITION_STARTED, DELETE_SEGMENT_FINISHED,
    DELETE_SEGMENT_STARTED, RemoteSegment, TieredLog, encode_partition_delete,
    encode_segment_metadata, encode_segment_update, segment_uuid,
};

/// The leader (broker 0) copied [0,19], [20,39], [40,59] and its local retention removed
/// them (local log from 60); the follower (broker 1), at its own pace, still holds [20,39]
/// on (local log from 20). Both hold the leader's copy events, as both consume the
/// metadata partition; both checkpoint log start 0.
fn leader_and_follower(leader_local_from: usize, copies: &[usize]) -> Vec<TieredLog> {
    let replica = |broker: i32, local_from: usize| {
        let mut t = history();
        for &i in copies {
            t.copy(i);
        }
        t.local_from(local_from);
        t.log_start(0);
        t.broker(broker);
        t
    };
    vec![replica(0, leader_local_from), replica(1, 1)]
}

/// `UnifiedLogTest.testIncrementLocalLogStartOffsetAfterLocalLogDeletion` (local retention
/// deletes only what is uploaded — `UnifiedLog.deleteOldSegments` bounded by
/// `highestOffsetInRemoteStorage` — and moves the local log start, not the log start),
/// `testStartOffsetsRemoteLogStorageIsEnabled` (`localLogStartOffset` above `logStartOffset`),
/// `RemoteLogManagerTest.testCopyLogSegmentsToRemoteShouldCopyExpectedLogSegment` (each
/// copy published COPY_SEGMENT_STARTED then COPY_SEGMENT_FINISHED) and
/// `testFindLogStartOffset` (the log start is the lowest remote segment's start). The
/// leader's local log starts at 60, the follower's at 20, the checkpoints say 0: a
/// healthy leader and follower. `LogLoader.load` keeps the checkpointed log start of a
/// remote-enabled log below its first segment, so `verify` predicts 0 on both.
#[test]
fn local_retention_above_the_log_start_on_leader_and_follower() {
    let c = check(leader_and_follower(3, &[0, 1, 2]), |_| {});
    c.assert_quiet();
    assert_eq!(c.written[0].local_log_start_offset, 60);
    assert_eq!(c.written[1].local_log_start_offset, 20);
    for b in [0, 1] {
        let t = c.part(b, false).tiered.clone().unwrap();
        assert_eq!(t.log_start_offset, Some(0), "broker {b}");
        assert_eq!(t.remote, vec![(0, 19), (20, 39), (40, 59)], "broker {b}");
        assert_eq!(c.predicted_log_start(b), Some(0), "broker {b}");
    }
    let replayed = c.part(0, true).tiered.clone().unwrap().replayed.unwrap();
    assert_eq!(
        (replayed.first_offset, replayed.last_offset),
        (Some(0), Some(59))
    );
    assert!(replayed.unread.is_empty(), "{:?}", replayed.unread);
}

/// The twin: the leader's local retention went one segment past what was uploaded —
/// [40,59] never copied, the local log from 60. `UnifiedLog.deleteOldSegments` never does
/// this (it stops at `highestOffsetInRemoteStorage`), and `RemoteLogManager.read` has no
/// segment for 40..=59 (`RemoteLogSegmentLifecycleTest.testCacheListSegments`: the cache
/// holds only what was copied, and a lookup there finds none): a `remote_segment_gap` (error) at 40 on the leader; the follower,
/// still holding them locally, is fine.
#[test]
fn local_retention_past_the_uploaded_segments_is_a_gap() {
    let c = check(leader_and_follower(3, &[0, 1]), |_| {});
    let g = c.reported(Kind::RemoteSegmentGap, 0, 40, Severity::Error);
    assert_eq!(g.evidence["last_missing_offset"], 59);
    let (plain, _) = c.of(Kind::RemoteSegmentGap);
    assert!(plain.iter().all(|f| f.source.broker_id == Some(0)));
}

/// `RemoteLogSegmentLifecycleTest.testRemoteLogSegmentLifeCycle` and
/// `RemoteLogManagerTest.testDeleteLogSegmentDueToRetentionTimeBreach`: every state of a
/// segment's life in order — [0,19] and [20,39] COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED,
/// then retention's DELETE_SEGMENT_STARTED, objects removed, DELETE_SEGMENT_FINISHED (the
/// cache forgets them), the log start moved to 40 (`handleLogStartOffsetUpdate`); [40,59]
/// and [60,79] finished, the next copy ([80,99] is active) not begun. Quiet.
#[test]
fn segment_life_from_copy_started_to_delete_finished() {
    let mut t = history();
    let r0 = t.copy(0);
    let r1 = t.copy(1);
    t.copy(2);
    t.copy(3);
    t.delete(r0);
    t.delete(r1);
    t.log_start(40);
    t.local_from(3);
    let c = check(vec![t], |_| {});
    c.assert_quiet();
    let t = c.part(0, false).tiered.clone().unwrap();
    assert_eq!(t.remote, vec![(40, 59), (60, 79)]);
    assert_eq!(c.predicted_log_start(0), Some(40));
}

/// The twin: [0,19]'s delete stopped after DELETE_SEGMENT_STARTED (its objects kept) while
/// the same run went on to delete [20,39] to the end. `RemoteLogManager`'s expiration
/// retries a segment left in DELETE_SEGMENT_STARTED on its next run
/// (`RemoteLogManagerTest.testFailedDeleteExpiredSegments`); one left behind while later
/// deletes finished is `remote_delete_unfinished` (warning) at 0.
#[test]
fn delete_left_started_while_later_deletes_finished_is_reported() {
    let mut t = history();
    let r0 = t.copy(0);
    let r1 = t.copy(1);
    t.copy(2);
    t.copy(3);
    t.delete_started(r0);
    t.delete(r1);
    t.log_start(40);
    t.local_from(3);
    let c = check(vec![t], |_| {});
    c.reported(Kind::RemoteDeleteUnfinished, 0, 0, Severity::Warning);
}

/// A copy of [40,59] by broker 0 that a crash cut after COPY_SEGMENT_STARTED, then retried
/// by broker 1, the new leader, under a new segment id (COPY_SEGMENT_STARTED,
/// COPY_SEGMENT_FINISHED): `RemoteLogManager.copyLogSegmentsToRemote` starts from
/// `findHighestRemoteOffset`, which counts only finished segments
/// (`RemoteLogManagerTest.testFindHighestRemoteOffset`), so the new leader copies the
/// segment again; the orphan stays in COPY_SEGMENT_STARTED until retention deletes it
/// (`testRemoteLogSizeRetentionShouldFilterOutCopySegmentStartState`: retention expects
/// such segments and leaves them out of the size; `testDeletionSkippedForSegmentsBeingCopied`).
/// `with_cleanup`: retention has since deleted the orphan (DELETE_SEGMENT_STARTED,
/// DELETE_SEGMENT_FINISHED). Both are what a healthy cluster leaves after a leader crash.
fn orphaned_copy(with_cleanup: bool, retried: bool) -> TieredLog {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    let orphan = t.copy_started(2);
    t.broker(1);
    if retried {
        t.copy(2);
    }
    t.copy(3);
    if with_cleanup {
        t.delete(orphan);
    }
    t.local_from(4);
    t.log_start(0);
    t
}

/// The orphan already deleted by retention: quiet.
#[test]
fn copy_orphaned_by_a_crash_retried_then_cleaned_up() {
    let c = check(vec![orphaned_copy(true, true)], |_| {});
    c.assert_quiet();
    let t = c.part(1, false).tiered.clone().unwrap();
    assert_eq!(t.remote, vec![(0, 19), (20, 39), (40, 59), (60, 79)]);
}

/// The orphan still waiting for retention, its offsets served by the retry: healthy (no
/// offset unserved, the orphan's objects go when retention reaches them:
/// `RemoteLogManager.RLMExpirationTask.cleanupExpiredRemoteLogSegments`, "expired and
/// dangling" segments, judges a COPY_SEGMENT_STARTED segment by the log start, time and
/// size like any other; only a copy in flight on this broker, `segmentIdsBeingCopied`, is
/// skipped). `remote_copy_unfinished` is then info, naming the finished copy that covers
/// its offsets (`evidence.covered_by`; it was a warning before 2026-12-06).
#[test]
fn copy_orphaned_by_a_crash_and_retried_is_routine() {
    let c = check(vec![orphaned_copy(false, true)], |_| {});
    c.assert_quiet();
    let (plain, remote) = c.of(Kind::RemoteCopyUnfinished);
    for f in plain.iter().chain(&remote) {
        assert_eq!((f.severity, f.offset), (Severity::Info, Some(40)), "{f:#?}");
        assert_eq!(f.evidence["covered_by"].as_array().map(Vec::len), Some(1));
        assert!(f.message.contains("copied again by"), "{}", f.message);
        assert!(f.remediation.is_none());
    }
    assert!(!plain.is_empty() && !remote.is_empty());
}

/// The twin: the new leader never copied [40,59] again (it copied [60,79] on), and its
/// local retention is past it: 40..=59 are served by nothing — `remote_segment_gap`
/// (error) at 40, and the orphan is `remote_copy_unfinished` (warning).
#[test]
fn copy_orphaned_by_a_crash_and_never_retried_is_a_gap() {
    let c = check(vec![orphaned_copy(false, false)], |_| {});
    c.reported(Kind::RemoteSegmentGap, 1, 40, Severity::Error);
    let (plain, _) = c.of(Kind::RemoteCopyUnfinished);
    assert_eq!(plain.len(), 1, "{plain:#?}");
    assert_eq!(plain[0].offset, Some(40));
    // No copy covers its offsets: still a warning, with nothing named as covering it.
    assert_eq!(plain[0].severity, Severity::Warning);
    assert!(plain[0].evidence.get("covered_by").is_none());
}

/// A segment of topic `gone` (metadata only: the topic is deleted, no replica left).
fn gone_segment(n: u32, start: i64) -> RemoteSegment {
    RemoteSegment {
        topic: "gone".into(),
        topic_id: klogscan::testkit::files::topic_id_for("gone"),
        partition: 0,
        id: segment_uuid(1000 + n),
        start_offset: start,
        end_offset: start + 9,
        max_timestamp_ms: klogscan::testkit::scenario::DEFAULT_START_MS,
        leader_epochs: vec![(0, start)],
        size: 1000,
        custom_metadata: None,
        txn_index_empty: None,
    }
}

/// The events of deleted topic `gone`'s two segments in the same metadata partition as
/// `orders`: copied, then the partition's deletion — DELETE_PARTITION_MARKED, STARTED,
/// each segment DELETE_SEGMENT_STARTED and FINISHED, DELETE_PARTITION_FINISHED
/// (`TopicBasedRemoteLogMetadataManagerTest`'s `putRemotePartitionDeleteMetadata`,
/// `RemotePartitionDeleteMetadata`; `RemoteLogManagerTest.testStopPartitionsWithDeletion`
/// deletes segment by segment). `finish_first`: the first segment's delete finished.
fn deleted_topic(t: &mut TieredLog, finish_first: bool) {
    let ts = klogscan::testkit::scenario::DEFAULT_START_MS + 3_600_000;
    let (a, b) = (gone_segment(1, 0), gone_segment(2, 10));
    let tid = a.topic_id;
    for s in [&a, &b] {
        t.raw_event(encode_segment_metadata(s, 0, ts, COPY_SEGMENT_STARTED));
        t.raw_event(encode_segment_update(s, 0, ts, None, COPY_SEGMENT_FINISHED));
    }
    for state in [DELETE_PARTITION_MARKED, DELETE_PARTITION_STARTED] {
        t.raw_event(encode_partition_delete("gone", &tid, 0, 0, ts, state));
    }
    for s in [&a, &b] {
        t.raw_event(encode_segment_update(
            s,
            0,
            ts,
            None,
            DELETE_SEGMENT_STARTED,
        ));
    }
    if finish_first {
        t.raw_event(encode_segment_update(
            &a,
            0,
            ts,
            None,
            DELETE_SEGMENT_FINISHED,
        ));
    }
    t.raw_event(encode_segment_update(
        &b,
        0,
        ts,
        None,
        DELETE_SEGMENT_FINISHED,
    ));
    if finish_first {
        let finished = encode_partition_delete("gone", &tid, 0, 0, ts, DELETE_PARTITION_FINISHED);
        t.raw_event(finished);
    }
}

/// `TopicBasedRemoteLogMetadataManagerTest.testNewPartitionUpdates` (one metadata partition
/// carries the events of several user partitions) and `RemotePartitionMetadataStore`'s
/// handling of `RemotePartitionDeleteMetadata`: a deleted
/// topic's metadata stays in `__remote_log_metadata` (a retention-bound topic, not
/// compacted) next to a live tiered partition's; with every segment
/// DELETE_SEGMENT_FINISHED and the partition DELETE_PARTITION_FINISHED, nothing is left to
/// say. Quiet.
#[test]
fn deleted_topic_with_partition_delete_markers_is_quiet() {
    let mut t = history();
    t.copy(0);
    deleted_topic(&mut t, true);
    t.copy(1);
    t.local_from(2);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    c.assert_quiet();
}

/// The twin: `gone`'s first segment's delete never finished while the second's did (and
/// the partition's deletion was never marked finished): its objects may still be in the
/// remote storage, which nothing will delete now that the topic is gone —
/// `remote_delete_unfinished` (warning) on `gone-0` at 0.
#[test]
fn deleted_topic_with_a_segment_left_delete_started_is_reported() {
    let mut t = history();
    t.copy(0);
    deleted_topic(&mut t, false);
    t.copy(1);
    t.local_from(2);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    let (plain, remote) = c.of(Kind::RemoteDeleteUnfinished);
    for v in [plain, remote] {
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!((v[0].topic.as_str(), v[0].offset), ("gone", Some(0)));
        assert_eq!(v[0].severity, Severity::Warning);
    }
}

/// `DeleteRecords` moved the log start into the remote range (25, inside [20,39]):
/// `UnifiedLog.maybeIncrementLogStartOffset` takes it on a remote-enabled log, and the
/// next expiration run deletes the segments wholly below it
/// (`RLMExpirationTask.isSegmentBreachByLogStartOffset`; `RemoteLogManagerTest.
/// testDeletionOnRetentionBreachedSegments`), keeping [20,39] — it still serves 25..=39.
/// After that run: [0,19] deleted, the log start 25, the local log from 60. Quiet.
/// `served`: [20,39]'s copy finished (the twin: it only started, so 25..=39 is a
/// `remote_segment_gap`, error, at 25).
fn log_start_inside_a_remote_segment(served: bool) -> TieredLog {
    let mut t = history();
    let r0 = t.copy(0);
    if served {
        t.copy(1);
    } else {
        t.copy_started(1);
    }
    t.copy(2);
    t.delete(r0);
    t.log_start(25);
    t.local_from(3);
    t
}

#[test]
fn log_start_moved_by_delete_records_into_a_remote_segment() {
    let c = check(vec![log_start_inside_a_remote_segment(true)], |_| {});
    c.assert_quiet();
    assert_eq!(c.predicted_log_start(0), Some(25));
    let replayed = c.part(0, true).tiered.clone().unwrap().replayed.unwrap();
    assert_eq!(replayed.last_offset, Some(59));
}

#[test]
fn log_start_inside_a_copy_never_finished_is_a_gap() {
    let c = check(vec![log_start_inside_a_remote_segment(false)], |_| {});
    let g = c.reported(Kind::RemoteSegmentGap, 0, 25, Severity::Error);
    assert_eq!(g.evidence["last_missing_offset"], 39);
}
