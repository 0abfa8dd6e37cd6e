//! An empty group given to the other protocol between classic and streams (KIP-1071), as a
//! later trunk writes it (`GroupMetadataManager.classicGroupJoin` deleting an empty streams
//! group, `streamsGroupHeartbeat` deleting an empty classic group). Sources: the
//! apache/kafka trunk imported in 2026 (`GroupMetadataManagerTest`, `StreamsGroupBuilder`,
//! `GroupMetadataManager.replay(StreamsGroupMetadataKey, …)`).

use super::{GROUP, classic, classic_typed, cm};
use crate::kafka_groupaudit_cases::{Coord, classic_tombstone, commit, g, gm, tombstone, tp};
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

/// Streams group metadata (type 17) at `epoch`; `stored` the KIP-1331 stored-description
/// epoch (-1 none, -2 uncertain).
fn streams_meta(epoch: i32, stored: i32) -> Spec {
    let mut v = json!({"epoch": epoch, "metadataHash": 0, "validatedTopologyEpoch": -1});
    if stored != -1 {
        v["storedDescriptionTopologyEpoch"] = json!(stored);
    }
    (17, g(GROUP), Some((0, v)))
}

/// `GroupMetadataManagerTest.testClassicGroupJoinWithEmptyStreamsGroup` and
/// `testClassicGroupJoinDoesNotDetectWhenTopologyCleanupHandled`: an empty streams group as
/// `StreamsGroupBuilder(groupId, 10)` writes it (metadata at epoch 10, target assignment
/// metadata at the initial epoch 0; the second test then writes the KIP-1331 "uncertain"
/// stored epoch -2, its plugin cleanup handled), an offset, then a JoinGroup: the target
/// assignment metadata, group epoch and topology tombstones, and the classic group of the
/// finished join. The load removes the streams group (`replay(StreamsGroupMetadataKey,
/// null)`: no member, the target epoch -1), ignores the topology tombstone of the removed
/// group, and gives the classic group with the offset; no finding (a deleted group's -2 is
/// no unfinished deletion).
/// Near miss: no target assignment metadata tombstone: the group's tombstone throws ("did
/// not receive StreamsGroupTargetAssignmentMetadataValue tombstone").
#[test]
fn an_empty_streams_group_is_deleted_for_a_new_classic_group() {
    let build = |stored: i32, target_tombstone: bool| {
        let mut c = Coord::new();
        let mut first = vec![
            streams_meta(10, -1),
            (20, g(GROUP), Some((0, json!({"assignmentEpoch": 0})))),
        ];
        if stored != -1 {
            first.push(streams_meta(10, stored));
        }
        c.batch(GROUP, first);
        c.batch(GROUP, vec![commit(GROUP, "input", 0, 12)]);
        let mut recs = Vec::new();
        if target_tombstone {
            recs.push(tombstone(20, g(GROUP)));
        }
        recs.extend([tombstone(17, g(GROUP)), tombstone(23, g(GROUP))]);
        c.batch(GROUP, recs);
        c.batch(
            GROUP,
            vec![classic(
                GROUP,
                1,
                &[cm("member-id", &["input"], ("input", &[0]))],
            )],
        );
        c.load()
    };
    for stored in [-1, -2] {
        let l = build(stored, true);
        l.assert_no_alarm();
        l.assert_no_group_finding();
        let c = l.group(GROUP);
        assert_eq!((c.group_type, c.epoch), (GroupType::Classic, 1));
        assert_eq!(l.offsets(GROUP), vec![tp("input", 0, 12)]);
    }

    let l = build(-1, false);
    l.assert_reported(Kind::GroupTombstonesIncomplete, GROUP);
}

/// `GroupMetadataManagerTest.testStreamsGroupHeartbeatWithEmptyClassicGroup`: the record of
/// an Empty classic group created without a protocol type (loaded as a simple group), then
/// a streams heartbeat: the classic group's tombstone, the member, the topology, the group
/// metadata at epoch 2, its target assignment, the target epoch 2, its current assignment.
/// The load gives the streams group at epoch 2 with its member; no finding.
/// Near misses without the tombstone: the simple group meets the first streams record, which
/// Kafka 4.x refuses before KAFKA-20254 (`getOrMaybeCreatePersistedStreamsGroup`); an Empty
/// group of protocol type `consumer` is not simple and is refused by every release.
#[test]
fn an_empty_classic_group_is_deleted_for_a_new_streams_group() {
    let none = json!([]);
    let build = |protocol_type: &str, with_tombstone: bool| {
        let mut c = Coord::new();
        c.batch(GROUP, vec![classic_typed(GROUP, protocol_type, 0, &[])]);
        let mut recs = Vec::new();
        if with_tombstone {
            recs.push(classic_tombstone(GROUP));
        }
        recs.extend([
            (19, gm(GROUP, "member-id"), Some((0, json!({"clientId": "c", "clientHost": "/h",
                "rebalanceTimeoutMs": 1500, "topologyEpoch": 0, "processId": "process-id", "clientTags": []})))),
            (23, g(GROUP), Some((0, json!({"epoch": 0, "subtopologies": []})))),
            streams_meta(2, -1),
            (21, gm(GROUP, "member-id"), Some((0, json!({"activeTasks": none, "standbyTasks": none, "warmupTasks": none})))),
            (20, g(GROUP), Some((0, json!({"assignmentEpoch": 2})))),
            (22, gm(GROUP, "member-id"), Some((0, json!({"memberEpoch": 2, "previousMemberEpoch": 0, "state": 0,
                "activeTasks": none, "standbyTasks": none, "warmupTasks": none, "activeTasksPendingRevocation": none,
                "standbyTasksPendingRevocation": none, "warmupTasksPendingRevocation": none})))),
        ]);
        c.batch(GROUP, recs);
        c.load()
    };
    for protocol_type in ["", "consumer"] {
        let l = build(protocol_type, true);
        l.assert_no_alarm();
        l.assert_no_group_finding();
        let s = l.group(GROUP);
        assert_eq!(
            (s.group_type, s.epoch, s.assignment_epoch),
            (GroupType::Streams, 2, 2)
        );
        assert_eq!(s.members.keys().collect::<Vec<_>>(), vec!["member-id"]);
    }

    let l = build("", false);
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
    let f = (l.verdict.scan.findings.iter())
        .find(|f| f.kind == Kind::GroupLoadFailure)
        .unwrap();
    assert_eq!(
        f.evidence["load_fails_in"], "kafka_4_before_kafka_20254",
        "{f:#?}"
    );
    let l = build("consumer", false);
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
    let f = (l.verdict.scan.findings.iter())
        .find(|f| f.kind == Kind::GroupLoadFailure)
        .unwrap();
    assert_ne!(
        f.evidence["load_fails_in"], "kafka_4_before_kafka_20254",
        "{f:#?}"
    );
}
