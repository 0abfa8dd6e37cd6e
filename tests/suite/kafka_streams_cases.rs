//! KIP-1071 streams groups in `__consumer_offsets` (Kafka 4.1+: `StreamsGroupMetadata` 17,
//! `MemberMetadata` 19, `TargetAssignmentMetadata` 20, `TargetAssignmentMember` 21,
//! `CurrentMemberAssignment` 22, `Topology` 23) against the group coordinator's replay and
//! load, and the committed offsets of a streams group through their expiry.
//!
//! Kafka sources read (2025-10 import `wtmxxx/kafka-se-homework`, HEAD):
//! `group-coordinator/.../GroupMetadataManager.java` (`replay(StreamsGroup*Key, …)`,
//! `getOrMaybeCreatePersistedStreamsGroup`, `getOrMaybeCreatePersistedConsumerGroup`,
//! `getOrMaybeCreatePersistedShareGroup`, `replay(GroupMetadataKey, …)`,
//! `getOrCreateStreamsGroup` / `maybeDeleteEmptyClassicGroup`, `maybeDeleteGroup`),
//! `streams/StreamsGroup.java` (`updateMember`, `addTaskProcessId`, `removeTaskProcessIds`,
//! `isSubscribedToTopic`, `offsetExpirationCondition`, `createGroupTombstoneRecords`),
//! `streams/StreamsTopology.java`, `OffsetMetadataManager.java` (`replay`,
//! `cleanupExpiredOffsets`), `GroupCoordinatorShard.cleanupGroupMetadata`, and their tests
//! (`StreamsGroupTest`, `GroupMetadataManagerTest`, `GroupCoordinatorShardTest`,
//! `GroupCoordinatorRecordSerdeTest`). Later fix cited: KAFKA-20254 (apache/kafka PR #21641,
//! March 2026, trunk and 4.2; integration tests PR #21642). Only facts are written here.
//!
//! Cases already covered elsewhere are not repeated: the per-record `testReplayStreamsGroup*`
//! cases (`kafka_new_group_records_cases::replay`), a whole streams group's life and its
//! cleaned partition (`kafka_quiet_streams2_cases`), the serde round trip and unsupported
//! versions (`kafka_new_group_records_cases::dump`), an active task held twice
//! (`kafka_coordinator_cases::assignments`), a consumer group then a streams metadata value
//! under one id (`groups_replay`).
#![cfg(feature = "testkit")]

mod offsets;
mod replay;
mod types;

use klogscan::finding::{Finding, Kind};
use klogscan::partition::groups::{Group, GroupState, GroupsOptions, list_groups};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::{Value, json};

/// The application (`application.id`: the streams group's id).
const APP: &str = "app";
/// The subtopology every task here belongs to.
pub(crate) const SUB: &str = "0";

fn g(id: &str) -> Value {
    json!({ "groupId": id })
}

fn gm(id: &str, m: &str) -> Value {
    json!({ "groupId": id, "memberId": m })
}

fn tomb(t: i16, key: Value) -> Spec {
    (t, key, None)
}

/// Tasks of [`SUB`] (`TaskIds`: subtopology and partitions); none is an empty list.
pub(crate) fn tasks(p: &[i32]) -> Value {
    if p.is_empty() {
        json!([])
    } else {
        json!([{ "subtopologyId": SUB, "partitions": p }])
    }
}

/// `StreamsGroupTopologyValue` v0: [`SUB`] reads `sources` and the repartition topics
/// `repartition` (source side).
pub(crate) fn topology(id: &str, epoch: i32, sources: &[&str], repartition: &[&str]) -> Spec {
    let rep: Vec<Value> = (repartition.iter())
        .map(|n| json!({"name": n, "partitions": 2, "replicationFactor": -1, "topicConfigs": []}))
        .collect();
    let sub = json!({"subtopologyId": SUB, "sourceTopics": sources, "sourceTopicRegex": [],
        "stateChangelogTopics": [], "repartitionSinkTopics": repartition,
        "repartitionSourceTopics": rep, "copartitionGroups": []});
    (
        23,
        g(id),
        Some((0, json!({"epoch": epoch, "subtopologies": [sub]}))),
    )
}

/// `StreamsGroupMemberMetadataValue` v0 of member `m` in the stream process `process`.
pub(crate) fn member(id: &str, m: &str, process: &str) -> Spec {
    let v = json!({"clientId": format!("{id}-{m}"), "clientHost": "/10.0.0.1",
        "rebalanceTimeoutMs": 300000, "topologyEpoch": 1, "processId": process,
        "userEndpoint": null, "clientTags": []});
    (19, gm(id, m), Some((0, v)))
}

/// `StreamsGroupMetadataValue` v0 at group epoch `e`.
pub(crate) fn meta(id: &str, e: i32) -> Spec {
    let v = json!({"epoch": e, "metadataHash": 7, "validatedTopologyEpoch": 1});
    (17, g(id), Some((0, v)))
}

/// `StreamsGroupTargetAssignmentMemberValue` v0: `m`'s active tasks.
pub(crate) fn target(id: &str, m: &str, active: &[i32]) -> Spec {
    let v = json!({"activeTasks": tasks(active), "standbyTasks": [], "warmupTasks": []});
    (21, gm(id, m), Some((0, v)))
}

/// `StreamsGroupTargetAssignmentMetadataValue` v0.
pub(crate) fn target_epoch(id: &str, e: i32) -> Spec {
    (20, g(id), Some((0, json!({"assignmentEpoch": e}))))
}

/// `MemberState` (streams): STABLE 1, UNREVOKED_TASKS 2, UNRELEASED_TASKS 3.
pub(crate) const STABLE: i8 = 1;
const UNREVOKED: i8 = 2;
const UNRELEASED: i8 = 3;

/// `StreamsGroupCurrentMemberAssignmentValue` v0 of `m`: member epoch and previous epoch,
/// state, active tasks and active tasks pending revocation.
pub(crate) fn current(
    id: &str,
    m: &str,
    (e, prev, state): (i32, i32, i8),
    active: &[i32],
    revoking: &[i32],
) -> Spec {
    let v = json!({"memberEpoch": e, "previousMemberEpoch": prev, "state": state,
        "activeTasks": tasks(active), "standbyTasks": [], "warmupTasks": [],
        "activeTasksPendingRevocation": tasks(revoking), "standbyTasksPendingRevocation": [],
        "warmupTasksPendingRevocation": []});
    (22, gm(id, m), Some((0, v)))
}

/// An offset commit (value v3) of `group` for `topic`-`p`, committed at `ts`.
fn commit(group: &str, (topic, p): (&str, i32), offset: i64, ts: i64) -> Spec {
    (
        1,
        json!({"group": group, "topic": topic, "partition": p}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": ts}),
        )),
    )
}

/// The tombstone of an offset (`appendOffsetCommitTombstone`, `deleteAllOffsets`).
fn uncommit(group: &str, (topic, p): (&str, i32)) -> Spec {
    let k = json!({"group": group, "topic": topic, "partition": p});
    (1, k, None)
}

/// `removeStreamsMember`'s tombstones of `m`: current assignment, target assignment, member.
pub(crate) fn leave(id: &str, m: &str) -> Vec<Spec> {
    vec![
        tomb(22, gm(id, m)),
        tomb(21, gm(id, m)),
        tomb(19, gm(id, m)),
    ]
}

/// A coordinator log written as `__consumer_offsets-0` and scanned; its groups, deleted
/// ones included.
struct Loaded {
    _dir: tempfile::TempDir,
    findings: Vec<Finding>,
    groups: Vec<Group>,
}

impl Loaded {
    fn of(&self, k: Kind) -> Vec<&Finding> {
        self.findings.iter().filter(|f| f.kind == k).collect()
    }
    fn assert_clean(&self) {
        assert!(self.findings.is_empty(), "{:#?}", self.findings);
    }
    fn live(&self, id: &str) -> &Group {
        (self.groups.iter())
            .find(|g| g.group_id == id && g.state == GroupState::Live)
            .unwrap_or_else(|| panic!("no live group {id}: {:#?}", self.groups))
    }
    fn is_live(&self, id: &str) -> bool {
        (self.groups.iter()).any(|g| g.group_id == id && g.state == GroupState::Live)
    }
    /// The one load failure (the record the broker's load stops at).
    fn load_failure(&self) -> &Finding {
        let f = self.of(Kind::GroupLoadFailure);
        assert_eq!(f.len(), 1, "{:#?}", self.findings);
        f[0]
    }
}

fn load(log: &GroupLog) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    log.write(dir.path(), 0).unwrap();
    let report = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
    let all = GroupsOptions {
        include_deleted: true,
        ..Default::default()
    };
    Loaded {
        groups: list_groups(&inv, &all),
        findings: report.findings,
        _dir: dir,
    }
}

/// `subtopology:partition` as the listing names an active task.
pub(crate) fn task(p: i32) -> String {
    format!("{SUB}:{p}")
}
