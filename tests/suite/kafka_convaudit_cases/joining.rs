//! Classic-protocol members in a consumer group (`GroupMetadataManager.classicGroupJoinToConsumerGroup`):
//! a JoinGroup for a consumer group writes the member as a consumer group member carrying
//! its `ClassicMemberMetadata` (session timeout, supported protocols with their metadata).

use super::{BAR, FOO, GROUP, classic, cm, current_with, epochs, member_meta};
use crate::kafka_groupaudit_cases::{
    Coord, commit, group_epoch, partition_metadata, target, target_epoch, tp,
};
use base64::Engine as _;
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::{Value, json};

/// A consumer group at epoch 10 whose one member (consumer protocol) holds foo-0 and foo-1,
/// and an offset.
fn consumer_group() -> Coord {
    let foo01: &[(&str, &[i32])] = &[(FOO.1, &[0, 1])];
    let mut c = Coord::new();
    c.batch(
        GROUP,
        vec![
            member_meta(GROUP, "member-id", None, &["foo"], false),
            partition_metadata(GROUP),
            group_epoch(GROUP, 10),
            target(GROUP, "member-id", foo01),
            target_epoch(GROUP, 10),
            current_with(GROUP, "member-id", (10, 9, 0), foo01, &[]),
        ],
    );
    c.batch(GROUP, vec![commit(GROUP, "foo", 1, 17)]);
    c
}

/// The subscription of a member that joins with JoinGroup: `member_meta` with
/// `ClassicMemberMetadata`, its supported protocol's metadata set to `metadata` (base64).
fn classic_member_meta(m: &str, instance: Option<&str>, metadata: &str) -> Spec {
    let (t, k, v) = member_meta(GROUP, m, instance, &["foo", "bar"], true);
    let (version, mut v): (i16, Value) = v.unwrap();
    v["classicMemberMetadata"]["supportedProtocols"] =
        json!([{"name": "range", "metadata": metadata}]);
    (t, k, Some((version, v)))
}

/// `GroupMetadataManagerTest.testJoiningConsumerGroupWithNewDynamicMember` and
/// `…WithNewStaticMember`: a classic-protocol member joins a consumer group (dynamic, then
/// static); the coordinator writes its subscription with `ClassicMemberMetadata`, the
/// subscription metadata, group epoch 11, the new target assignment (foo-1 moves to the new
/// member), the target epoch, and the new member's current assignment (epoch 11, waiting
/// for foo-1: UNRELEASED_PARTITIONS). The load gives a consumer group at epoch 11 with both
/// members and the offset; no finding. The supported protocol's metadata is kept as bytes:
/// the replay (`ConsumerGroupMember.Builder.updateWith(ConsumerGroupMemberMetadataValue)`)
/// does not read it, so bytes that are no consumer protocol subscription load all the same.
/// Near miss: those bytes as a member's subscription in a classic group's record, which the
/// load reads (`ClassicGroup.computeSubscribedTopics`): it throws.
#[test]
fn a_classic_protocol_member_joins_a_consumer_group() {
    // Version 0, then a topic count of -1: a null array where the schema has none.
    let garbage = base64::engine::general_purpose::STANDARD.encode([0u8, 0, 255, 255, 255, 255]);
    let good = super::subscription(&["foo", "bar"]);
    for (instance, metadata) in [
        (None, good.as_str()),
        (Some("instance-id"), good.as_str()),
        (None, garbage.as_str()),
    ] {
        let mut c = consumer_group();
        c.batch(
            GROUP,
            vec![
                classic_member_meta("new-member-id", instance, metadata),
                partition_metadata(GROUP),
                group_epoch(GROUP, 11),
                target(GROUP, "member-id", &[(FOO.1, &[0])]),
                target(GROUP, "new-member-id", &[(FOO.1, &[1])]),
                target_epoch(GROUP, 11),
                current_with(GROUP, "new-member-id", (11, 0, 2), &[], &[]),
            ],
        );
        let l = c.load();
        l.assert_no_alarm();
        l.assert_no_group_finding();
        let g = l.group(GROUP);
        assert_eq!(
            (g.group_type, g.epoch, g.assignment_epoch),
            (GroupType::Consumer, 11, 11)
        );
        let want = vec![
            ("member-id".to_string(), 10),
            ("new-member-id".to_string(), 11),
        ];
        assert_eq!(epochs(g), want);
        assert_eq!(g.members["new-member-id"].instance_id.as_deref(), instance);
        assert_eq!(l.offsets(GROUP), vec![tp("foo", 1, 17)]);
    }

    // The same bytes as a classic group member's subscription.
    let mut c = Coord::new();
    let (t, k, v) = classic(GROUP, 3, &[cm("member-id", &["foo"], ("bar", &[0]))]);
    let (version, mut v) = v.unwrap();
    v["members"][0]["subscription"] = json!(garbage);
    c.batch(GROUP, vec![(t, k, Some((version, v)))]);
    let l = c.load();
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
}

/// Topic `zar`'s id.
const ZAR: &str = "AAAAAAAAAAAAAAAAAAAAAw";

/// `GroupMetadataManagerTest.testReconciliationInJoiningConsumerGroupWithEagerProtocol`: a
/// consumer group at epoch 10, classic-protocol member-1 holding foo-0 and bar-0,
/// consumer-protocol member-2 holding foo-1. Member-1 rejoins with a new subscription and,
/// eager, owning nothing: epoch 11, the new target (member-1 foo-0, foo-1, zar-0; member-2
/// bar-0), member-1 at epoch 11 holding foo-0 and zar-0, waiting for foo-1
/// (UNRELEASED_PARTITIONS). Member-2 heartbeats having revoked foo-1 (epoch 11, bar-0);
/// member-1 rejoins and takes foo-1 (Stable). The load gives member-1 on foo-0, foo-1,
/// zar-0 and member-2 on bar-0; no finding.
/// Near miss: member-1's Stable record before member-2's revocation: it claims foo-1, which
/// member-2 still holds at epoch 10, from epoch 11 — Kafka 4.x before KAFKA-19862 throws
/// (`ConsumerGroup.updateMember` → `addPartitionEpochs`), the releases with it let the
/// newer epoch take the partition: the load failure is reported for the releases before.
#[test]
fn an_eager_classic_member_reconciles_in_a_consumer_group() {
    let build = |in_order: bool| {
        let mut c = Coord::new();
        c.batch(
            GROUP,
            vec![
                member_meta(GROUP, "member-1", None, &["foo", "bar"], true),
                member_meta(GROUP, "member-2", None, &["foo", "bar"], false),
                partition_metadata(GROUP),
                group_epoch(GROUP, 10),
                target(GROUP, "member-1", &[(FOO.1, &[0]), (BAR.1, &[0])]),
                target(GROUP, "member-2", &[(FOO.1, &[1])]),
                target_epoch(GROUP, 10),
                current_with(
                    GROUP,
                    "member-1",
                    (10, 10, 0),
                    &[(FOO.1, &[0]), (BAR.1, &[0])],
                    &[],
                ),
                current_with(GROUP, "member-2", (10, 10, 0), &[(FOO.1, &[1])], &[]),
            ],
        );
        c.batch(
            GROUP,
            vec![
                member_meta(GROUP, "member-1", None, &["foo", "zar"], true),
                partition_metadata(GROUP),
                group_epoch(GROUP, 11),
                target(GROUP, "member-1", &[(FOO.1, &[0, 1]), (ZAR, &[0])]),
                target(GROUP, "member-2", &[(BAR.1, &[0])]),
                target_epoch(GROUP, 11),
                current_with(
                    GROUP,
                    "member-1",
                    (11, 10, 2),
                    &[(FOO.1, &[0]), (ZAR, &[0])],
                    &[],
                ),
            ],
        );
        let revoked = vec![current_with(
            GROUP,
            "member-2",
            (11, 10, 0),
            &[(BAR.1, &[0])],
            &[],
        )];
        let stable = vec![current_with(
            GROUP,
            "member-1",
            (11, 11, 0),
            &[(FOO.1, &[0, 1]), (ZAR, &[0])],
            &[],
        )];
        if in_order {
            c.batch(GROUP, revoked).batch(GROUP, stable);
        } else {
            c.batch(GROUP, stable).batch(GROUP, revoked);
        }
        c.load()
    };
    let l = build(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Consumer, 11));
    assert_eq!(g.members["member-1"].assigned.len(), 3);
    assert_eq!(g.members["member-2"].assigned, vec![format!("{}:0", BAR.1)]);

    let l = build(false);
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
    let f = (l.verdict.scan.findings.iter())
        .find(|f| f.kind == Kind::GroupLoadFailure)
        .unwrap();
    assert_eq!(
        f.evidence["load_fails_in"], "kafka_4_before_kafka_19862",
        "{f:#?}"
    );
}
