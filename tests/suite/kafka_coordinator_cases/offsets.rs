//! `__consumer_offsets` offset commits: core's `GroupMetadataManagerTest` load cases of
//! offsets (regular, transactional committed/aborted/pending, tombstones) and
//! `OffsetMetadataManagerTest`'s replay cases, as `OffsetMetadataManager.replay` and
//! `replayEndTransactionMarker` load them.

use super::groups::*;
use super::*;
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::json;
use std::collections::BTreeMap;

/// `GroupMetadataManagerTest.testLoadOffsetsWithoutGroup` (from offset 15), with
/// `OffsetMetadataManager.replay`'s "simple" group: offsets committed without group
/// metadata load into an empty classic group without a protocol type.
#[test]
fn load_offsets_without_group() {
    let mut log = GroupLog::starting_at(15);
    log.batch(commits(&THREE));
    let (groups, r) = load(&log);
    let g = live(&groups).expect("group loaded");
    assert_eq!(
        (g.group_type, g.simple, g.protocol_type.as_deref()),
        (GroupType::Classic, true, None)
    );
    assert!(g.members.is_empty());
    assert_eq!(offsets(g), three_at(15));
    assert_clean(&r);
}

/// `GroupMetadataManagerTest.testLoadTransactionalOffsetsWithoutGroup`,
/// `testDoNotLoadAbortedTransactionalOffsetCommits`, `testGroupLoadedWithPendingCommits`,
/// `testLoadWithCommittedAndAbortedTransactionalOffsetCommits` and
/// `testLoadWithCommittedAndAbortedAndPendingTransactionalOffsetCommits`: one producer
/// commits three offsets (COMMIT), then three more (ABORT), then three more left open; only
/// the first three materialize, at the offsets of their records; the open ones are pending
/// and materialize once their COMMIT marker is in the log (`handleTxnCompletion`, on disk
/// the marker `OffsetMetadataManager.replayEndTransactionMarker` replays).
#[test]
fn committed_aborted_and_pending_transactional_commits() {
    let mut log = GroupLog::new();
    log.txn_batch(1000, commits(&THREE));
    log.marker(1000, true);
    log.txn_batch(
        1000,
        commits(&[("foo", 2, 231), ("foo", 3, 4551), ("bar", 1, 89921)]),
    );
    log.marker(1000, false);
    log.txn_batch(
        1000,
        commits(&[("foo", 3, 2312), ("foo", 4, 45512), ("bar", 2, 899212)]),
    );
    let (groups, r) = load(&log);
    let g = live(&groups).expect("group loaded");
    let committed = [("foo", 0, 23, 0), ("foo", 1, 455, 1), ("bar", 0, 8992, 2)];
    assert_eq!(offsets(g), expect(&committed));
    let held = |t: &str, p, o| (1000, t.to_string(), p, o);
    assert_eq!(
        pending(&log),
        [
            held("bar", 2, 899212),
            held("foo", 3, 2312),
            held("foo", 4, 45512)
        ]
    );
    assert_only_open(&r, 1000, true);

    log.marker(1000, true);
    let (groups, r) = load(&log);
    let mut all = committed.to_vec();
    all.extend([
        ("foo", 3, 2312, 8),
        ("foo", 4, 45512, 9),
        ("bar", 2, 899212, 10),
    ]);
    assert_eq!(offsets(live(&groups).unwrap()), expect(&all));
    assert_clean(&r);

    // An aborted transaction alone: the group exists (4.x creates the simple group on
    // replay) but holds no offset.
    let mut log = GroupLog::new();
    log.txn_batch(1000, commits(&THREE));
    log.marker(1000, false);
    let (groups, r) = load(&log);
    assert_eq!(offsets(live(&groups).unwrap()), BTreeMap::new());
    assert_clean(&r);
}

/// `GroupMetadataManagerTest.testLoadTransactionalOffsetCommitsFromMultipleProducers`: two
/// producers commit disjoint offsets of one group, each committed; all six materialize, each
/// at the offset of its own producer's records.
#[test]
fn transactional_commits_from_multiple_producers() {
    let mut log = GroupLog::new();
    log.txn_batch(1000, commits(&THREE));
    log.marker(1000, true);
    log.txn_batch(
        1001,
        commits(&[("foo", 2, 231), ("foo", 3, 4551), ("bar", 1, 89921)]),
    );
    log.marker(1001, true);
    let (groups, r) = load(&log);
    assert_eq!(
        offsets(live(&groups).unwrap()),
        expect(&[
            ("foo", 0, 23, 0),
            ("foo", 1, 455, 1),
            ("bar", 0, 8992, 2),
            ("foo", 2, 231, 4),
            ("foo", 3, 4551, 5),
            ("bar", 1, 89921, 6),
        ])
    );
    assert_clean(&r);
}

/// `GroupMetadataManagerTest.testGroupLoadWithConsumerAndTransactionalOffsetCommitsTransactionWins`
/// (its twin `…ConsumerWins` is `groups_replay::end_marker_keeps_the_most_recent_committed_offset`):
/// a regular commit of 24, then a transactional commit of 23 and its COMMIT: the
/// transactional record is the newer one, so 23 is the group's offset.
#[test]
fn consumer_then_transactional_commit_transaction_wins() {
    let mut log = GroupLog::new();
    log.batch(commits(&[("foo", 0, 24)]));
    log.txn_batch(1000, commits(&[("foo", 0, 23)]));
    log.marker(1000, true);
    let (groups, r) = load(&log);
    assert_eq!(
        offsets(live(&groups).unwrap()),
        expect(&[("foo", 0, 23, 1)])
    );
    assert_clean(&r);
}

/// `GroupMetadataManagerTest.testLoadOffsetsWithTombstones`: three offsets, then a
/// tombstone of foo-1: two remain.
#[test]
fn load_offsets_with_tombstones() {
    let mut log = GroupLog::starting_at(15);
    let mut recs = commits(&THREE);
    recs.push(commit_tombstone("foo", 1));
    log.batch(recs);
    let (groups, r) = load(&log);
    assert_eq!(
        offsets(live(&groups).unwrap()),
        expect(&[("foo", 0, 23, 15), ("bar", 0, 8992, 17)])
    );
    assert_clean(&r);
}

/// `OffsetMetadataManagerTest.testReplayWithTombstoneAndPendingTransactionalOffsets`: a
/// regular commit of bar-0, pending transactional commits of bar-0 and bar-1, then
/// tombstones of both: the offsets are gone, the pending ones too, so the transaction's
/// later COMMIT brings neither back.
#[test]
fn tombstones_remove_pending_transactional_offsets() {
    let mut log = GroupLog::new();
    log.batch(commits(&[("bar", 0, 0)]));
    log.txn_batch(10, commits(&[("bar", 0, 1), ("bar", 1, 2)]));
    log.batch(vec![commit_tombstone("bar", 0), commit_tombstone("bar", 1)]);
    let (groups, r) = load(&log);
    assert_eq!(offsets(live(&groups).unwrap()), BTreeMap::new());
    assert_eq!(pending(&log), []);
    // Nothing is pending any more: the open transaction holds no offset of the group.
    assert_only_open(&r, 10, false);
    log.marker(10, true);
    let (groups, r) = load(&log);
    assert_eq!(offsets(live(&groups).unwrap()), BTreeMap::new());
    assert_clean(&r);
    // Without the tombstones the COMMIT materializes both.
    let mut log = GroupLog::new();
    log.batch(commits(&[("bar", 0, 0)]));
    log.txn_batch(10, commits(&[("bar", 0, 1), ("bar", 1, 2)]));
    log.marker(10, true);
    let (groups, _) = load(&log);
    assert_eq!(
        offsets(live(&groups).unwrap()),
        expect(&[("bar", 0, 1, 1), ("bar", 1, 2, 2)])
    );
}

/// An offset commit of `group` (value version 3).
pub(super) fn commit_of(group: &str, topic: &str, partition: i32, offset: i64) -> Spec {
    let mut c = commit(topic, partition, offset);
    c.1["group"] = json!(group);
    c
}

/// `OffsetMetadataManagerTest.testReplay`, `testTransactionalReplay` and
/// `testReplayTransactionEndMarkerWithCommit` (`GroupCoordinatorShardTest.testReplayOffsetCommit`,
/// `…TransactionalOffsetCommit` and `…EndTransactionMarker` dispatch to them): regular
/// commits overwrite each other; transactional ones wait per producer id; a marker of a
/// producer with nothing pending changes nothing; producer 5's COMMIT applies its offset,
/// producer 6's ABORT drops its own.
#[test]
fn replay_regular_transactional_and_end_markers() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit_of("foo", "bar", 0, 100),
        commit_of("foo", "bar", 0, 200),
        commit_of("foo", "bar", 1, 200),
        commit_of("foo", "bar", 1, 300),
    ]);
    let (groups, r) = load(&log);
    assert_eq!(
        offsets(live(&groups).unwrap()),
        expect(&[("bar", 0, 200, 1), ("bar", 1, 300, 3)])
    );
    assert_clean(&r);

    let mut log = GroupLog::new();
    log.txn_batch(
        5,
        vec![
            commit_of("foo", "bar", 0, 100),
            commit_of("foo", "bar", 1, 101),
        ],
    );
    log.txn_batch(
        5,
        vec![
            commit_of("bar", "zar", 0, 100),
            commit_of("bar", "zar", 1, 101),
        ],
    );
    log.txn_batch(
        6,
        vec![
            commit_of("foo", "bar", 2, 102),
            commit_of("foo", "bar", 3, 102),
        ],
    );
    let held = |pid, t: &str, p, o| (pid, t.to_string(), p, o);
    assert_eq!(
        pending(&log),
        [
            held(5, "bar", 0, 100),
            held(5, "bar", 1, 101),
            held(5, "zar", 0, 100),
            held(5, "zar", 1, 101),
            held(6, "bar", 2, 102),
            held(6, "bar", 3, 102),
        ]
    );
    let (groups, _) = load(&log);
    assert!(groups.iter().all(|g| g.offsets.is_empty()), "{groups:#?}");

    let mut log = GroupLog::new();
    log.batch(vec![commit_of("foo", "bar", 0, 99)]);
    log.txn_batch(5, vec![commit_of("foo", "bar", 0, 100)]);
    log.txn_batch(6, vec![commit_of("foo", "bar", 1, 200)]);
    log.marker(1, true);
    log.marker(5, true);
    log.marker(6, false);
    assert_eq!(pending(&log), []);
    let (groups, r) = load(&log);
    assert_eq!(
        offsets(live(&groups).unwrap()),
        expect(&[("bar", 0, 100, 1)])
    );
    assert!(group_findings(&r).is_empty(), "{:#?}", group_findings(&r));
    let s: Vec<(Kind, Option<i64>)> = serious(&r)
        .iter()
        .map(|f| (f.kind, f.producer_id))
        .collect();
    assert_eq!(s, [], "{:#?}", serious(&r));
}

/// `bytes` (a flexible value without tagged fields) with unknown tagged fields 100 (a
/// string) and 101 (an int32) in its top-level section, as a future version would write.
pub(super) fn with_future_tags(mut bytes: Vec<u8>) -> Vec<u8> {
    assert_eq!(bytes.pop(), Some(0), "no tagged field at the end");
    bytes.extend_from_slice(&[2, 100, 5, 0, 3]);
    bytes.extend_from_slice(b"foo");
    bytes.extend_from_slice(&[101, 4]);
    bytes.extend_from_slice(&4000i32.to_be_bytes());
    bytes
}

/// `GroupMetadataManagerTest.testLoadOffsetFromOldCommit`, `testLoadOffsetWithExplicitRetention`,
/// `testSerdeOffsetCommitValue`, `testSerializeOffsetCommitValueToHighestNonFlexibleVersion`,
/// `testDeserializeHighestSupportedOffsetCommitValueVersion` and
/// `testDeserializeFutureOffsetCommitValue`: offset commit values of versions 0 to 4 (1
/// with an explicit expire timestamp, 4 flexible, and 4 with unknown tagged fields) all load
/// offset 1000, metadata "metadata" and commit time 2000; the leader epoch (100) exists from
/// version 3, -1 before. Kafka's future-value test uses tags 0 and 1; tag 0 of version 4 is
/// `topicId` in 4.x, so unknown tags are 100 and 101 here.
#[test]
fn offset_commit_values_of_every_version_and_a_future_one() {
    let value = json!({"offset": 1000, "leaderEpoch": 100, "metadata": "metadata",
                       "commitTimestamp": 2000, "expireTimestamp": 3000});
    let mut log = GroupLog::new();
    for version in 0..=4 {
        log.batch(vec![(
            1,
            json!({"group": GROUP, "topic": "foo", "partition": version}),
            Some((version as i16, value.clone())),
        )]);
    }
    let (k, v) = klogscan::testkit::groups::record(
        1,
        json!({"group": GROUP, "topic": "foo", "partition": 5}),
        Some((4, value.clone())),
    );
    log.raw(vec![(k, Some(with_future_tags(v.unwrap())))]);
    let (groups, r) = load(&log);
    let g = live(&groups).unwrap();
    let got: Vec<(i32, i64, i32, &str, i64)> = g
        .offsets
        .iter()
        .map(|c| {
            (
                c.partition,
                c.offset,
                c.leader_epoch,
                c.metadata.as_str(),
                c.commit_timestamp,
            )
        })
        .collect();
    let want: Vec<(i32, i64, i32, &str, i64)> = (0..=5)
        .map(|p| (p, 1000, if p >= 3 { 100 } else { -1 }, "metadata", 2000))
        .collect();
    assert_eq!(got, want);
    assert_clean(&r);
}

/// A `__consumer_offsets` partition written by a pre-0.11 broker: magic 0 and 1 messages,
/// one per entry or inside a compressed wrapper. The coordinators' loads iterate
/// `MemoryRecords.batches()`, legacy batches included (`CoordinatorLoaderImpl`,
/// `GroupMetadataManager.doLoadGroupsAndOffsets`), so their records load as plain
/// (non-transactional) commits; they were once read as v2 headers and dropped (a real
/// 2016 partition listed no group). A later legacy tombstone removes its offset.
#[test]
fn legacy_messages_load_as_commits() {
    use klogscan::testkit::groups::record;
    use klogscan::testkit::{Codec, Legacy, PartitionBuilder};
    for (magic, codec) in [
        (0, Codec::None),
        (1, Codec::None),
        (1, Codec::Gzip),
        (0, Codec::SnappyXerial),
    ] {
        let d = tempfile::tempdir().unwrap();
        let mut p = PartitionBuilder::new("__consumer_offsets", 0);
        let mut l = if magic == 0 {
            Legacy::v0()
        } else {
            Legacy::v1()
        }
        .codec(codec);
        // Values of version 1 (with an expire timestamp), as those brokers wrote them.
        for (topic, partition, offset) in THREE {
            let (k, v) = record(
                1,
                json!({"group": GROUP, "topic": topic, "partition": partition}),
                Some((
                    1,
                    json!({"offset": offset, "metadata": "", "commitTimestamp": 1, "expireTimestamp": 2}),
                )),
            );
            l = l.message(Some(&k), v.as_deref());
        }
        let (t, k, v) = commit_tombstone("bar", 0);
        let (k, v) = record(t, k, v);
        l = l.message(Some(&k), v.as_deref());
        p.legacy(l);
        klogscan::testkit::LogDirBuilder::new(1)
            .partition(p)
            .write(d.path())
            .unwrap();
        let groups = groups_of(d.path());
        let g = live(&groups).unwrap_or_else(|| panic!("magic {magic} {codec:?}: {groups:#?}"));
        assert_eq!(
            offsets(g),
            expect(&[("foo", 0, 23, 0), ("foo", 1, 455, 1)]),
            "magic {magic} {codec:?}"
        );
        assert_clean(&scan(d.path()));
    }
}

/// `OffsetMetadataManagerTest`'s tombstone of a pending transactional offset, in the order
/// `GroupCoordinatorShard.deleteGroups` writes it for a group deleted while a transaction
/// holds offsets of it (`deleteAllOffsets` tombstones the pending keys too): the COMMIT
/// marker that follows makes nothing live again, so the deleted group leaves no live record
/// (no `group_tombstones_incomplete`). Without the group's deletion the committed offset
/// does load (the twin).
#[test]
fn a_tombstone_ends_the_pending_value_of_its_key() {
    let mut log = GroupLog::new();
    log.txn_batch(7, vec![commit("t", 0, 42)]);
    log.batch(vec![commit_tombstone("t", 0)]);
    log.batch(vec![(2, json!({"group": GROUP}), None)]);
    log.marker(7, true);
    let (groups, r) = load(&log);
    assert!(live(&groups).is_none(), "{groups:#?}");
    assert!(
        !r.findings
            .iter()
            .any(|f| f.kind == Kind::GroupTombstonesIncomplete),
        "{:#?}",
        r.findings
    );
    let mut twin = GroupLog::new();
    twin.txn_batch(7, vec![commit("t", 0, 42)]);
    twin.marker(7, true);
    let (groups, _) = load(&twin);
    let g = live(&groups).expect("group loaded");
    assert_eq!(offsets(g), expect(&[("t", 0, 42, 0)]));
}

/// Types 9 and 18 (retired in 4.1, whose loader skips them unread) and 24 (never
/// released) are skipped by their key's type: bytes that fit no schema give no
/// `offsets_record_undecodable` and no `group_load_failure`. A record of a known type
/// with the same bytes still does (the twin).
#[test]
fn retired_record_types_are_skipped_unread() {
    for t in [9u8, 18, 24] {
        let mut log = GroupLog::new();
        log.raw(vec![(
            vec![0, t, 0, 3, b'a', b'p', b'p'],
            Some(vec![0, 0, 1, 2]),
        )]);
        let (_, r) = load(&log);
        assert!(
            !r.findings.iter().any(|f| matches!(
                f.kind,
                Kind::OffsetsRecordUndecodable | Kind::GroupLoadFailure
            )),
            "type {t}: {:#?}",
            r.findings
        );
    }
    let mut twin = GroupLog::new();
    twin.raw(vec![(
        vec![0, 3, 0, 3, b'a', b'p', b'p'],
        Some(vec![0, 0, 1, 2]),
    )]);
    let (_, r) = load(&twin);
    assert!(
        r.findings
            .iter()
            .any(|f| f.kind == Kind::OffsetsRecordUndecodable),
        "{:#?}",
        r.findings
    );
}
