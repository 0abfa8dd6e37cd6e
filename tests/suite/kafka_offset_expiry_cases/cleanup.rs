//! The records expiry cycles leave, stage by stage, loaded back: offsets still within
//! retention stay, tombstoned ones are gone, an empty group without offsets is deleted,
//! and none of it is a finding.

use super::*;

/// `OffsetMetadataManagerTest.testCleanupExpiredOffsets` (retention 1 minute), then
/// `GroupCoordinatorShardTest.testCleanupGroupMetadata` (`cleanupExpiredOffsets` returned
/// true, so `maybeDeleteGroup`). A simple group (offsets only) commits firstTopic-0 and
/// secondTopic-0 at T and secondTopic-1 at T+500 ms. Cycle 1 (T+1 min, firstTopic still
/// subscribed): only secondTopic-0's tombstone. Cycle 2 (+500 ms): secondTopic-1's. Two more
/// commits; cycle 3 (nothing subscribed): the three remaining offsets' tombstones, then the
/// group's own, since a simple classic group is Empty. After each stage the load holds
/// exactly what Kafka's test leaves, the consumer view lists the same offsets, and nothing
/// is a finding.
#[test]
fn cleanup_cycles_tombstone_what_expired_then_delete_the_empty_group() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit(GROUP, "firstTopic", 0, 100, T0),
        commit(GROUP, "secondTopic", 0, 100, T0),
        commit(GROUP, "secondTopic", 1, 100, T0 + 500),
    ]);
    log.batch(vec![expired(GROUP, "secondTopic", 0)]);
    let s = see(&log, GROUP, vec![]);
    let held = vec![tp("firstTopic", 0, 100), tp("secondTopic", 1, 100)];
    assert_eq!(s.offsets(GROUP), held);
    assert_eq!(s.rows(GROUP), held);
    let g = s.group(GROUP);
    assert_eq!(
        (g.state, g.group_type, g.simple),
        (GroupState::Live, GroupType::Classic, true)
    );
    s.assert_clean();

    log.batch(vec![expired(GROUP, "secondTopic", 1)]);
    let s = see(&log, GROUP, vec![]);
    assert_eq!(s.offsets(GROUP), vec![tp("firstTopic", 0, 100)]);
    s.assert_clean();

    log.batch(vec![
        commit(GROUP, "firstTopic", 1, 100, T0 + 500),
        commit(GROUP, "secondTopic", 0, 101, T0 + 500),
    ]);
    log.batch(vec![
        expired(GROUP, "firstTopic", 0),
        expired(GROUP, "firstTopic", 1),
        expired(GROUP, "secondTopic", 0),
        group_tombstone(GROUP),
    ]);
    let s = see(&log, GROUP, vec![]);
    let g = s.group(GROUP);
    assert_eq!(g.state, GroupState::Deleted);
    assert!(g.offsets.is_empty(), "{g:#?}");
    assert!(s.rows(GROUP).is_empty());
    assert!(s.view.groups.iter().all(|g| g.group_id != GROUP));
    s.assert_clean();
}

/// `OffsetMetadataManagerTest.testCleanupExpiredOffsetsWithPendingTransactionalOffsets`
/// (both trunks) and `…WithPendingTransactionalOffsetsOnly` (2025-10): an expired
/// foo-0 with a pending transactional commit of the same partition is kept (nothing
/// written); with the pending commit on foo-1 instead, foo-0's tombstone is written but
/// the group is not deleted while the transaction is open. The load holds the committed
/// offset (first case) or none (second), the pending one in both, and no group finding
/// (the open transaction of the coordinator's log is its own matter).
#[test]
fn a_pending_transactional_commit_holds_back_its_partition_and_the_group() {
    let mut log = GroupLog::new();
    log.batch(vec![commit(GROUP, "foo", 0, 100, T0)]);
    log.txn_batch(10, vec![commit(GROUP, "foo", 0, 101, T0 + 500)]);
    let s = see(&log, GROUP, vec![]);
    assert_eq!(s.offsets(GROUP), vec![tp("foo", 0, 100)]);
    assert_eq!(s.pending, vec![(10, GROUP.into(), "foo".into(), 0, 101)]);
    s.assert_no_group_finding();

    let mut log = GroupLog::new();
    log.batch(vec![commit(GROUP, "foo", 0, 100, T0)]);
    log.txn_batch(10, vec![commit(GROUP, "foo", 1, 101, T0 + 500)]);
    log.batch(vec![expired(GROUP, "foo", 0)]);
    let s = see(&log, GROUP, vec![]);
    let g = s.group(GROUP);
    assert_eq!((g.state, g.simple), (GroupState::Live, true));
    assert!(g.offsets.is_empty(), "{g:#?}");
    assert_eq!(s.pending, vec![(10, GROUP.into(), "foo".into(), 1, 101)]);
    s.assert_no_group_finding();
}

/// The 2024-10 trunk's `OffsetMetadataManager.cleanupExpiredOffsets` returns true for a
/// group without committed offsets before it looks at open transactions, so
/// `maybeDeleteGroup` tombstones a simple group whose only offsets are pending; the
/// transaction's COMMIT then materializes them for a group that no longer exists (the
/// 2025-10 import returns `!openTransactions.contains(groupId)` there instead, and its
/// `testCleanupExpiredOffsetsWithPendingTransactionalOffsetsOnly` keeps the group). On disk
/// the committed offset record, written before the group's tombstone, stays live: once
/// compaction drops the tombstone, a load rebuilds the group from it. klogscan reports
/// `group_tombstones_incomplete` naming that record — a true leftover, not a false alarm.
/// The twin (the 2025-10 order: no group tombstone while the transaction is open) is clean.
#[test]
fn a_group_deleted_under_an_open_transaction_leaves_its_committed_offsets() {
    let mut log = GroupLog::new();
    log.txn_batch(10, vec![commit(GROUP, "foo", 1, 101, T0)]);
    log.batch(vec![group_tombstone(GROUP)]);
    log.marker(10, true);
    let s = see(&log, GROUP, vec![]);
    let f = s.of(Kind::GroupTombstonesIncomplete);
    assert_eq!(f.len(), 1, "{:#?}", s.findings);
    assert_eq!(f[0].evidence["records"][0]["offset"], 0, "{:#?}", f[0]);
    assert_eq!(f[0].evidence["records"][0]["type"], 1, "{:#?}", f[0]);
    assert_eq!(s.group(GROUP).state, GroupState::Deleted);
    // A coordinator fails an OffsetFetch of a group it does not know (no offsets served):
    // the consumer view lists none either.
    assert!(s.rows(GROUP).is_empty());

    let mut log = GroupLog::new();
    log.txn_batch(10, vec![commit(GROUP, "foo", 1, 101, T0)]);
    log.marker(10, true);
    let s = see(&log, GROUP, vec![]);
    assert_eq!(s.offsets(GROUP), vec![tp("foo", 1, 101)]);
    s.assert_clean();
}

/// Core's `GroupMetadataManagerTest.testExpireOffset` and `testExpireGroupWithOffsetsOnly`:
/// offsets committed with explicit expire timestamps (value v1: T+1 and T+3 ms); at T+2
/// only foo-0's tombstone is written and foo-1 stays; at T+4 foo-1's too, and no group
/// tombstone, since the Scala coordinator writes one only for a generation above 0
/// (`cleanupGroupMetadata`). A 3.x load then has no group; a 4.x load creates the simple
/// group with the first commit (`OffsetMetadataManager.replay` → `getOrMaybeCreateClassicGroup`)
/// and no offset tombstone removes it, so it holds an empty simple group until its first
/// cleanup tombstones it (`cleanupExpiredOffsets` → true with no offsets, `maybeDeleteGroup`).
/// klogscan lists it as 4.x holds it — live, simple, no offset (`live (empty)`) — with no
/// finding and no consumer row.
#[test]
fn explicit_expire_timestamps_then_an_offsets_only_group_without_tombstone() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit_v1(GROUP, "foo", 0, 37, T0, T0 + 1),
        commit_v1(GROUP, "foo", 1, 37, T0, T0 + 3),
    ]);
    log.batch(vec![expired(GROUP, "foo", 0)]);
    let s = see(&log, GROUP, vec![]);
    assert_eq!(s.offsets(GROUP), vec![tp("foo", 1, 37)]);
    assert_eq!(s.rows(GROUP), vec![tp("foo", 1, 37)]);
    s.assert_clean();

    log.batch(vec![expired(GROUP, "foo", 1)]);
    let s = see(&log, GROUP, vec![]);
    let g = s.group(GROUP);
    assert_eq!(
        (g.state, g.simple, g.offsets.len()),
        (GroupState::Live, true, 0)
    );
    let table = s.cli(&["groups"]);
    assert!(
        table
            .lines()
            .any(|l| l.contains(GROUP) && l.contains("live (empty)")),
        "{table}"
    );
    assert!(s.rows(GROUP).is_empty());
    s.assert_clean();
}

/// Core's `GroupMetadataManagerTest.testOffsetExpirationSemantics` as it reaches the log:
/// a consumer group (generation 1, one member subscribed to foo) commits foo-0 and foo-1
/// with explicit expire timestamps (T+1, T+3) and foo-2 without; while the member is there
/// nothing expires. The member leaves (generation 2, Empty, `currentStateTimestamp` T+2);
/// foo-0 expires, then foo-1; foo-2 expires at T+2 + retention (the base is when the group
/// became Empty: `ClassicGroup.offsetExpirationCondition`) and the group goes with it.
/// Each stage loads what the test's cache holds; no finding.
#[test]
fn offset_expiration_semantics_of_an_emptied_consumer_group() {
    let mut log = GroupLog::new();
    log.batch(vec![classic(GROUP, "consumer", 1, Some(&["foo"]), T0)]);
    log.batch(vec![
        commit_v1(GROUP, "foo", 0, 37, T0, T0 + 1),
        commit_v1(GROUP, "foo", 1, 37, T0, T0 + 3),
        commit(GROUP, "foo", 2, 37, T0),
    ]);
    let s = see(&log, GROUP, vec![]);
    assert_eq!(s.group(GROUP).members.len(), 1);
    assert_eq!(s.offsets(GROUP).len(), 3);
    s.assert_clean();

    log.batch(vec![classic(GROUP, "consumer", 2, None, T0 + 2)]);
    log.batch(vec![expired(GROUP, "foo", 0)]);
    let s = see(&log, GROUP, vec![]);
    let g = s.group(GROUP);
    assert_eq!(
        (
            g.state,
            g.simple,
            g.protocol_type.as_deref(),
            g.members.len()
        ),
        (GroupState::Live, false, Some("consumer"), 0)
    );
    assert_eq!(s.offsets(GROUP), vec![tp("foo", 1, 37), tp("foo", 2, 37)]);
    s.assert_clean();

    log.batch(vec![expired(GROUP, "foo", 1)]);
    assert_eq!(
        see(&log, GROUP, vec![]).offsets(GROUP),
        vec![tp("foo", 2, 37)]
    );
    log.batch(vec![expired(GROUP, "foo", 2), group_tombstone(GROUP)]);
    let s = see(&log, GROUP, vec![]);
    assert_eq!(s.group(GROUP).state, GroupState::Deleted);
    assert!(s.rows(GROUP).is_empty());
    s.assert_clean();
}

/// Core's `GroupMetadataManagerTest.testOffsetExpirationOfActiveGroupSemantics` and
/// `ClassicGroupTest.testOffsetExpirationCondition` (consumer protocol, known subscription,
/// Stable: the base is the commit time, subscribed topics never expire): a Stable group
/// subscribed to foo and bar commits two partitions of each; past retention nothing
/// expires; the member re-subscribes to foo alone (generation 2) and bar's offsets expire
/// while the group is active. The load holds the member and foo's offsets; offset
/// tombstones in a live group with members are no finding.
#[test]
fn an_active_group_loses_only_the_offsets_of_topics_it_left() {
    let mut log = GroupLog::new();
    log.batch(vec![classic(
        GROUP,
        "consumer",
        1,
        Some(&["foo", "bar"]),
        T0,
    )]);
    log.batch(vec![
        commit(GROUP, "foo", 0, 37, T0),
        commit(GROUP, "foo", 1, 37, T0),
        commit(GROUP, "bar", 0, 37, T0),
        commit(GROUP, "bar", 1, 37, T0),
    ]);
    log.batch(vec![classic(
        GROUP,
        "consumer",
        2,
        Some(&["foo"]),
        T0 + RETENTION + 2,
    )]);
    log.batch(vec![expired(GROUP, "bar", 0), expired(GROUP, "bar", 1)]);
    let s = see(&log, GROUP, vec![]);
    let g = s.group(GROUP);
    assert_eq!(
        (g.state, g.epoch, g.members.len()),
        (GroupState::Live, 2, 1)
    );
    assert_eq!(g.members["m1"].subscribed_topics, vec!["foo".to_string()]);
    assert_eq!(s.offsets(GROUP), vec![tp("foo", 0, 37), tp("foo", 1, 37)]);
    assert_eq!(s.rows(GROUP), s.offsets(GROUP));
    s.assert_clean();
}

/// `ConsumerGroupTest.testOffsetExpirationCondition` with `ConsumerGroup.isSubscribedToTopic`
/// (KIP-848 groups: always a condition, based on the commit time; subscribed topics are
/// skipped): a consumer group whose member subscribes to orders commits orders-0 and
/// archive-0; archive-0 expires while the member is there. The load keeps the group, its
/// member and orders-0; no finding.
#[test]
fn a_consumer_group_expires_the_offsets_of_unsubscribed_topics() {
    let mut log = GroupLog::new();
    group_scenarios::consumer_group(&mut log, GROUP);
    log.batch(vec![commit(GROUP, "archive", 0, 9, T0)]);
    log.batch(vec![expired(GROUP, "archive", 0)]);
    let s = see(&log, GROUP, vec![]);
    let g = s.group(GROUP);
    assert_eq!(
        (g.state, g.group_type, g.members.len()),
        (GroupState::Live, GroupType::Consumer, 1)
    );
    assert_eq!(s.offsets(GROUP), vec![tp("orders", 0, 5)]);
    s.assert_clean();
}

/// Core's `GroupMetadataManagerTest.testGroupMetadataRemoval` and
/// `OffsetMetadataManagerTest.testCleanupExpiredOffsetsGroupHasNoOffsets`: an empty group
/// (generation 5) with no offset is removed at the first cycle with its tombstone alone.
/// The group is listed as deleted; no finding.
#[test]
fn an_empty_group_without_offsets_is_removed_by_its_tombstone_alone() {
    let mut log = GroupLog::new();
    log.batch(vec![classic(GROUP, "consumer", 5, None, T0)]);
    log.batch(vec![group_tombstone(GROUP)]);
    let s = see(&log, GROUP, vec![]);
    let g = s.group(GROUP);
    assert_eq!((g.state, g.epoch), (GroupState::Deleted, 5));
    assert!(s.view.groups.iter().all(|g| g.group_id != GROUP));
    s.assert_clean();
}
