//! The committed offsets of a streams group: expired by the coordinator's cleanup
//! (`GroupCoordinatorShard.cleanupGroupMetadata` → `OffsetMetadataManager.cleanupExpiredOffsets`,
//! with `StreamsGroup.offsetExpirationCondition` and `StreamsGroup.isSubscribedToTopic`),
//! the group then deleted (`GroupMetadataManager.maybeDeleteGroup` →
//! `StreamsGroup.createGroupTombstoneRecords`), and what the consumer rules make of a
//! commit below its partition's log start that a coordinator has (or has not) expired.

use super::*;
use klogscan::finding::Severity;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;
const DAY: i64 = 86_400_000;
/// `offsets.retention.minutes`' default (7 days).
const RETENTION: i64 = 7 * DAY;
/// The reference time of the consumer-view scans (`--now`).
const NOW: i64 = T0 + 30 * DAY;

/// Streams group `id` reading `sources`, with member `w1` (epoch 1, task 0) — or, when
/// `emptied`, after `w1` left (`removeStreamsMember`: epoch 2, no member).
fn group(id: &str, sources: &[&str], emptied: bool) -> Vec<Spec> {
    let mut recs = vec![
        topology(id, 1, sources, &[]),
        member(id, "w1", "p1"),
        meta(id, 1),
        target(id, "w1", &[0]),
        target_epoch(id, 1),
        current(id, "w1", (1, 0, STABLE), &[0], &[]),
    ];
    if emptied {
        recs.extend(leave(id, "w1"));
        recs.extend([meta(id, 2), target_epoch(id, 2)]);
    }
    recs
}

/// `StreamsGroupTest.testOffsetExpirationCondition` (the base is the commit time) and
/// `testIsSubscribedToTopic` (an empty group subscribes to nothing), run by
/// `GroupCoordinatorShard.cleanupGroupMetadata`: the group's member leaves, and the first
/// cleanup past the retention tombstones both offsets then, every offset expired,
/// `maybeDeleteGroup` writes `StreamsGroup.createGroupTombstoneRecords` (no member: target
/// assignment metadata, group metadata, topology) in the same write. Before the cleanup the
/// load holds an empty live group with both offsets; after it, nothing. klogscan: no
/// finding at either stage; the group listed live with its offsets, then deleted without.
#[test]
fn an_emptied_streams_group_s_offsets_expire_then_the_group_is_deleted() {
    let mut log = GroupLog::new();
    log.batch(group(APP, &["input"], false));
    log.batch(vec![
        commit(APP, ("input", 0), 40, T0),
        commit(APP, ("input", 1), 30, T0),
    ]);
    log.batch([leave(APP, "w1"), vec![meta(APP, 2), target_epoch(APP, 2)]].concat());
    let l = load(&log);
    l.assert_clean();
    let app = l.live(APP);
    assert!(app.members.is_empty());
    assert_eq!(app.offsets.len(), 2);

    log.batch(vec![
        uncommit(APP, ("input", 0)),
        uncommit(APP, ("input", 1)),
        tomb(20, g(APP)),
        tomb(17, g(APP)),
        tomb(23, g(APP)),
    ]);
    let l = load(&log);
    l.assert_clean();
    assert!(!l.is_live(APP));
    let gone: Vec<_> = (l.groups.iter()).filter(|g| g.group_id == APP).collect();
    assert_eq!(gone.len(), 1, "{gone:#?}");
    assert_eq!(gone[0].state, GroupState::Deleted);
    assert!(gone[0].offsets.is_empty());
}

/// Twin: the group's tombstones with `input`-1's offset never tombstoned. The coordinator
/// never writes that (`cleanupGroupMetadata` deletes a group only once all its offsets
/// expired; `deleteGroups` tombstones every offset first, `deleteAllOffsets`), but its load
/// accepts it and keeps the offset under the group id. klogscan: the leftover is reported
/// (`group_tombstones_incomplete`, not a load failure).
#[test]
fn twin_a_streams_group_deleted_with_an_offset_left_is_reported() {
    let mut log = GroupLog::new();
    log.batch(group(APP, &["input"], true));
    log.batch(vec![commit(APP, ("input", 1), 30, T0)]);
    log.batch(vec![tomb(20, g(APP)), tomb(17, g(APP)), tomb(23, g(APP))]);
    let l = load(&log);
    let f = l.of(Kind::GroupTombstonesIncomplete);
    assert_eq!(f.len(), 1, "{:#?}", l.findings);
    assert_eq!(f[0].evidence["load_fails"], false);
    assert!(l.of(Kind::GroupLoadFailure).is_empty());
}

/// `StreamsGroupTest.testIsSubscribedToTopic` (a group with members subscribes to its
/// topology's source and repartition source topics) with `cleanupExpiredOffsets`: the
/// topology moves from `old-input` to `input` (epoch 2, with a repartition topic); past
/// the retention, the cleanup tombstones `old-input`-0 while the member is there and keeps
/// the other two. klogscan: no finding; the live group holds its member and the two offsets.
#[test]
fn an_active_streams_group_loses_only_the_offsets_outside_its_topology() {
    const REP: &str = "app-agg-repartition";
    let mut log = GroupLog::new();
    log.batch(group(APP, &["old-input"], false));
    log.batch(vec![commit(APP, ("old-input", 0), 12, T0)]);
    log.batch(vec![topology(APP, 2, &["input"], &[REP])]);
    log.batch(vec![
        commit(APP, ("input", 0), 40, T0 + DAY),
        commit(APP, (REP, 0), 8, T0 + DAY),
    ]);
    log.batch(vec![uncommit(APP, ("old-input", 0))]);
    let l = load(&log);
    l.assert_clean();
    let app = l.live(APP);
    assert_eq!(app.members.len(), 1);
    let mut topics: Vec<_> = app.offsets.iter().map(|c| c.topic.as_str()).collect();
    topics.sort();
    assert_eq!(topics, [REP, "input"]);
}

/// Where `group` lives with 50 `__consumer_offsets` partitions (`partitionFor`).
fn offsets_partition(group: &str) -> i32 {
    let h = (group.encode_utf16()).fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (if h == i32::MIN { 0 } else { h.abs() }) % 50
}

/// `input`-0 and `old-input`-0, both starting at 100 (10 records each) beside each
/// `(group, records)` as its own `__consumer_offsets` partition; scanned at [`NOW`]: the
/// `committed_offset_below_log_start` findings per group.
fn below_start(groups: &[(&str, Vec<Spec>)]) -> Vec<(String, Finding)> {
    let dir = tempfile::tempdir().unwrap();
    let mut b = LogDirBuilder::new(1).cluster_id("c1").clean_shutdown(true);
    for t in ["input", "old-input"] {
        let mut p = PartitionBuilder::new(t, 0).start_offset(100);
        p.append(Batch::new(Producer::idempotent(5, 0)).records(10));
        b = b.partition(p);
    }
    b.write(dir.path()).unwrap();
    for (id, recs) in groups {
        let mut log = GroupLog::new();
        log.batch(recs.clone());
        log.write(dir.path(), offsets_partition(id)).unwrap();
    }
    let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
    let opts = ScanOptions::default().with_now_ms(NOW);
    let report = klogscan::pipeline::analyse(&inv, &opts);
    (report.findings.into_iter())
        .filter(|f| f.kind == Kind::CommittedOffsetBelowLogStart)
        .map(|f| (f.evidence["group"].as_str().unwrap_or("").to_string(), f))
        .collect()
}

/// `id`'s streams group (`emptied` or not, reading `input`) and its commit of offset 40 on
/// `topic`-0, `age` before [`NOW`].
fn committed<'a>(id: &'a str, emptied: bool, topic: &str, age: i64) -> (&'a str, Vec<Spec>) {
    let mut recs = group(id, &["input"], emptied);
    recs.push(commit(id, (topic, 0), 40, NOW - age));
    (id, recs)
}

/// The one finding of `group`.
fn of<'a>(found: &'a [(String, Finding)], group: &str) -> &'a Finding {
    let f: Vec<_> = found.iter().filter(|(g, _)| g == group).collect();
    assert_eq!(f.len(), 1, "{group}: {found:#?}");
    &f[0].1
}

/// `StreamsGroupTest.testOffsetExpirationCondition` / `testIsSubscribedToTopic` with
/// `OffsetExpirationConditionImpl.isOffsetExpired`, at a reference time 30 days in: an
/// emptied streams group's commit of 8 days ago is expired (empty group: nothing subscribed;
/// commit time + 7 days passed) — the first cleanup after a load tombstones it, so the
/// application finds no committed offset and resets by its policy; no records are lost to
/// it. klogscan: `committed_offset_below_log_start` at info, its expiry by the commit time.
/// Twins kept by the coordinator, each a warning of lost records: the emptied group's
/// commit of 1 day ago (retention not passed), and a group with a member whose topology
/// reads `input` (subscribed: never expired while it stays).
#[test]
fn a_streams_commit_below_the_log_start_is_info_once_expired() {
    let found = below_start(&[
        committed("emptied", true, "input", 8 * DAY),
        committed("fresh", true, "input", DAY),
        committed("active", false, "input", 8 * DAY),
    ]);
    let f = of(&found, "emptied");
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.evidence["group_type"], "streams");
    assert_eq!(f.evidence["expiry"]["by"]["rule"], "commit_time");
    assert_eq!(
        f.evidence["expiry"]["expired_at"],
        NOW - 8 * DAY + RETENTION
    );
    for g in ["fresh", "active"] {
        assert_eq!(of(&found, g).severity, Severity::Warning, "{g}");
    }
}

/// `StreamsGroup.isSubscribedToTopic`: a group with members subscribes only to its
/// topology's source and repartition source topics (`StreamsTopology.sourceTopicMap`;
/// `StreamsGroupTest.testIsSubscribedToTopic`: `non-existent-topic` is not subscribed with
/// a member there), so `cleanupExpiredOffsets` expires a commit on any other topic once
/// the commit time + retention passed, members or not. Here the group's member reads
/// `input` and the group's commit of 8 days ago is on `old-input` (a topic its topology
/// no longer reads), below that partition's log start: the coordinator tombstones it at
/// its first cleanup — the same case as the emptied group's, info with its expiry.
#[test]
fn a_live_streams_group_s_commit_outside_its_topology_expires() {
    let found = below_start(&[committed("moved", false, "old-input", 8 * DAY)]);
    let f = of(&found, "moved");
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert_eq!(f.evidence["expiry"]["by"]["rule"], "commit_time");
}
