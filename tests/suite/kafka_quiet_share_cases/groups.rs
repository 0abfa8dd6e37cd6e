//! Share groups in `__consumer_offsets` (types 10–15) beside a classic and a consumer group:
//! members joining and leaving, the share-partition state initialized, a topic being
//! deleted, a share group deleted.

use super::{Coord, MIN, OFFSETS, T0, check, coord_raw, coordinator_batch, tid};
use klogscan::finding::{Kind, Severity};
use klogscan::partition::groups::{GroupState, GroupType, GroupsOptions, list_groups};
use klogscan::testkit::group_scenarios::{GroupLog, classic_group, consumer_group};
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};
use serde_json::{Value, json};

fn g(id: &str) -> Value {
    json!({ "groupId": id })
}
fn gm(id: &str, m: &str) -> Value {
    json!({ "groupId": id, "memberId": m })
}
fn v0(t: i16, k: Value, v: Value) -> Coord {
    (t, k, Some((0, v)))
}
fn tomb(t: i16, k: Value) -> Coord {
    (t, k, None)
}

fn parts(p: &[i32]) -> Value {
    json!([{"topicId": tid("orders"), "partitions": p}])
}
fn member(id: &str, m: &str) -> Coord {
    v0(
        10,
        gm(id, m),
        json!({"clientId": "c", "clientHost": "/10.0.0.7", "subscribedTopicNames": ["orders"]}),
    )
}
fn epoch(id: &str, e: i32) -> Coord {
    v0(11, g(id), json!({"epoch": e, "metadataHash": 77}))
}
fn target(id: &str, m: &str, p: &[i32]) -> Coord {
    v0(13, gm(id, m), json!({"topicPartitions": parts(p)}))
}
fn target_epoch(id: &str, e: i32) -> Coord {
    v0(12, g(id), json!({"assignmentEpoch": e}))
}
fn current(id: &str, m: &str, e: i32, p: &[i32]) -> Coord {
    v0(
        14,
        gm(id, m),
        json!({"memberEpoch": e, "previousMemberEpoch": e - 1, "state": 0, "assignedPartitions": parts(p)}),
    )
}
/// `ShareGroupStatePartitionMetadataValue`: initializing, initialized, deleting topics.
fn state_meta(id: &str, initializing: &[i32], initialized: &[i32], deleting: bool) -> Coord {
    let tp = |p: &[i32]| -> Value {
        if p.is_empty() {
            json!([])
        } else {
            json!([{"topicId": tid("orders"), "topicName": "orders", "partitions": p}])
        }
    };
    let del = if deleting {
        json!([{"topicId": tid("old-orders"), "topicName": "old-orders"}])
    } else {
        json!([])
    };
    v0(
        15,
        g(id),
        json!({"initializingTopics": tp(initializing), "initializedTopics": tp(initialized), "deletingTopics": del}),
    )
}

/// A share group's life in the coordinator's record orders (`GroupMetadataManager.
/// shareGroupHeartbeat`, `initializeShareGroupState`, `shareGroupFenceMember`,
/// `ShareGroup.createGroupTombstoneRecords`), as batches.
fn share_life(id: &str, delete: bool) -> Vec<Vec<Coord>> {
    let mut out = vec![
        vec![
            member(id, "s1"),
            epoch(id, 1),
            target(id, "s1", &[0, 1]),
            target_epoch(id, 1),
            current(id, "s1", 1, &[0, 1]),
            state_meta(id, &[0, 1], &[], true),
        ],
        vec![state_meta(id, &[], &[0, 1], true)],
        vec![state_meta(id, &[], &[0, 1], false)],
        vec![
            member(id, "s2"),
            epoch(id, 2),
            target(id, "s1", &[0, 1]),
            target(id, "s2", &[0, 1]),
            target_epoch(id, 2),
            current(id, "s2", 2, &[0, 1]),
        ],
        vec![current(id, "s1", 2, &[0, 1])],
        vec![
            tomb(14, gm(id, "s1")),
            tomb(13, gm(id, "s1")),
            tomb(10, gm(id, "s1")),
            epoch(id, 3),
        ],
        vec![target(id, "s2", &[0, 1]), target_epoch(id, 3)],
        vec![current(id, "s2", 3, &[0, 1])],
    ];
    if delete {
        out.push(vec![
            tomb(14, gm(id, "s2")),
            tomb(13, gm(id, "s2")),
            tomb(10, gm(id, "s2")),
            epoch(id, 4),
        ]);
        out.push(vec![tomb(12, g(id)), tomb(15, g(id)), tomb(11, g(id))]);
    }
    out
}

/// `__consumer_offsets-0`: a classic and a consumer group (the testkit's lifecycles), the
/// share groups `sg` (live) and `sg2` (deleted), then `extra`, in coordinator batches.
fn offsets_log(extra: Vec<Coord>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(OFFSETS, 0).start_time(T0);
    let mut i = 0;
    let mut put = |p: &mut PartitionBuilder, b: Vec<(Vec<u8>, Option<Vec<u8>>)>| {
        i += 1;
        p.append(coordinator_batch(b, T0 + i * MIN));
    };
    let mut log = GroupLog::new();
    classic_group(&mut log, "orders-classic");
    consumer_group(&mut log, "orders-848");
    for b in &log.batches {
        put(
            &mut p,
            b.iter().map(|(k, v, _)| (k.clone(), v.clone())).collect(),
        );
    }
    let (sg, sg2) = (share_life("sg", false), share_life("sg2", true));
    // Interleaved: sg's batches with sg2's, sg2's deletion after sg's last.
    let mut sg = sg.into_iter();
    for b in sg2 {
        if let Some(a) = sg.next() {
            put(&mut p, coord_raw(a));
        }
        put(&mut p, coord_raw(b));
    }
    if !extra.is_empty() {
        put(&mut p, coord_raw(extra));
    }
    p
}

/// `GroupMetadataManagerTest.testShareGroupHeartbeatInitializeOnPartitionUpdate`,
/// `testShareGroupInitializeSuccess`, `testShareGroupInitializingClearsCommonDeleting`,
/// `testShareGroupDeleteTombstones`, `testShareGroupRecordsNoExceptionOnReplay`;
/// `ShareGroupTest.testUpdateMember`/`testRemoveMember` (members share partitions: the
/// share assignor gives both members both partitions). Beside `orders-classic` and
/// `orders-848`: quiet, and `groups` lists the share group with its member and no committed
/// offsets (`ShareGroup.validateOffsetCommit` refuses every commit: `ShareGroupTest.
/// testValidateOffsetCommit`).
#[test]
fn share_groups_beside_classic_and_consumer_groups_are_quiet() {
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id("c1")
            .partition(offsets_log(vec![])),
    );
    q.assert_quiet();
    let inv = klogscan::discover::layout::discover(&[q.dir.path().to_path_buf()]);
    let opts = GroupsOptions {
        include_deleted: true,
        ..Default::default()
    };
    let groups = list_groups(&inv, &opts);
    let by = |id: &str| groups.iter().find(|x| x.group_id == id).unwrap();
    let sg = by("sg");
    assert_eq!(
        (sg.group_type, sg.state, sg.epoch, sg.assignment_epoch),
        (GroupType::Share, GroupState::Live, 3, 3)
    );
    assert_eq!(sg.members.keys().collect::<Vec<_>>(), ["s2"]);
    assert!(sg.offsets.is_empty());
    assert_eq!(by("sg2").state, GroupState::Deleted);
    assert_eq!(by("orders-classic").group_type, GroupType::Classic);
    assert_eq!(by("orders-848").group_type, GroupType::Consumer);
}

/// Twin: a consumer group member record under the share group's id (one group id
/// namespace: `GroupMetadataManager.getOrMaybeCreatePersistedConsumerGroup` throws "Group sg
/// is not a consumer group" on a group of another type; `GroupMetadataManagerTest.
/// testShareGroupHeartbeatOnConsumerGroup` is the same refusal the other way round). The
/// load of the partition fails.
#[test]
fn twin_a_consumer_record_for_the_share_group_fails_the_load() {
    let rec = v0(
        5,
        gm("sg", "m9"),
        json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["orders"], "rebalanceTimeoutMs": 30000}),
    );
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id("c1")
            .partition(offsets_log(vec![rec])),
    );
    let f = q.reported(Kind::GroupLoadFailure, Severity::Error, OFFSETS);
    assert!(f.message.contains("sg"), "{}", f.message);
}
