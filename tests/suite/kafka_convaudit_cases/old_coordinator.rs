//! The old (Scala) coordinator's `GroupMetadataTest`: the cases whose outcome is what the
//! log keeps, which the new coordinator's load must give the same.

use super::{GROUP, classic_typed, cm};
use crate::kafka_groupaudit_cases::{Coord, commit, tp};
use base64::Engine as _;
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use serde_json::json;

/// `GroupMetadataTest.testConsumerBeatsTransactionalOffsetCommit`,
/// `…TransactionBeatsConsumerOffsetCommit` and
/// `…TransactionalCommitIsAbortedAndConsumerCommitWins`: a transactional commit and a
/// regular commit of one partition, then the transaction's marker. When it commits, the
/// commit whose record was appended later holds (`GroupMetadata.completePendingTxnOffsetCommit`
/// keeps the held offset unless it is older: `CommitRecordMetadataAndOffset.olderThan`;
/// `OffsetMetadataManager.replayEndTransactionMarker` compares the record offsets alike);
/// when it aborts, the regular commit holds whatever the order. Each order is the near
/// miss of the other: the winner flips with it.
#[test]
fn the_later_of_a_transactional_and_a_regular_commit_wins_and_an_abort_leaves_the_regular() {
    let run = |txn_first: bool, commit_marker: bool| {
        let mut c = Coord::new();
        if txn_first {
            c.txn(7, GROUP, vec![commit(GROUP, "foo", 0, 100)]);
            c.batch(GROUP, vec![commit(GROUP, "foo", 0, 50)]);
        } else {
            c.batch(GROUP, vec![commit(GROUP, "foo", 0, 50)]);
            c.txn(7, GROUP, vec![commit(GROUP, "foo", 0, 100)]);
        }
        c.marker(7, GROUP, commit_marker);
        let l = c.load();
        l.assert_no_alarm();
        l.assert_no_group_finding();
        l.offsets(GROUP)
    };
    assert_eq!(
        run(true, true),
        vec![tp("foo", 0, 50)],
        "consumer beats txn"
    );
    assert_eq!(
        run(false, true),
        vec![tp("foo", 0, 100)],
        "txn beats consumer"
    );
    assert_eq!(run(true, false), vec![tp("foo", 0, 50)], "txn aborted");
    assert_eq!(run(false, false), vec![tp("foo", 0, 50)], "txn aborted");
}

/// `GroupMetadataTest.testSubscribedTopicsNonConsumerGroup`: a group of another protocol
/// type (`connect`) has no subscribed topics to compute, so its members' protocol metadata
/// is never read as the consumer protocol (`GroupMetadata.computeSubscribedTopics`, and the
/// new coordinator's `ClassicGroup.computeSubscribedTopics`, return nothing for it): bytes
/// that are no consumer subscription load. Near miss: the same bytes in a `consumer`
/// group: the load throws reading them.
#[test]
fn a_non_consumer_groups_metadata_is_not_read_as_a_subscription() {
    // Version 0, then a topic count of -1: a null array where the schema has none.
    let bytes = base64::engine::general_purpose::STANDARD.encode([0u8, 0, 255, 255, 255, 255]);
    let run = |protocol_type: &str| {
        let (t, k, v) = classic_typed(
            GROUP,
            protocol_type,
            2,
            &[cm("member-id", &["foo"], ("foo", &[0]))],
        );
        let (version, mut v) = v.unwrap();
        v["members"][0]["subscription"] = json!(bytes);
        let mut c = Coord::new();
        c.batch(GROUP, vec![(t, k, Some((version, v)))]);
        c.load()
    };
    let l = run("connect");
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 2));
    assert_eq!(g.protocol_type.as_deref(), Some("connect"));
    assert!(g.members["member-id"].subscribed_topics.is_empty());

    run("consumer").assert_reported(Kind::GroupLoadFailure, GROUP);
}
