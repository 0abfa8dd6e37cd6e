//! `__consumer_offsets`: the load cases of core's `GroupMetadataManagerTest` (Scala, the
//! classic coordinator), the replay cases of `OffsetMetadataManagerTest` and
//! `GroupCoordinatorShardTest`, and `GroupCoordinatorRecordSerdeTest`'s unreadable
//! records, as the 4.x coordinator (`GroupCoordinatorShard.replay`) loads them.

use super::*;
use klogscan::finding::Kind;
use klogscan::partition::groups::{
    Group, GroupState, GroupType, GroupsOptions, list_groups, replay_partition_dir,
};
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, BatchSpec, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A record's key and value bytes (`None`: null).
type RawRecord = (Option<Vec<u8>>, Option<Vec<u8>>);

pub(super) const GROUP: &str = "foo";

pub(super) fn commit(topic: &str, partition: i32, offset: i64) -> Spec {
    (
        1,
        json!({"group": GROUP, "topic": topic, "partition": partition}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": -1, "commitTimestamp": 1}),
        )),
    )
}

pub(super) fn commits(offsets: &[(&str, i32, i64)]) -> Vec<Spec> {
    offsets.iter().map(|(t, p, o)| commit(t, *p, *o)).collect()
}

pub(super) fn commit_tombstone(topic: &str, partition: i32) -> Spec {
    (
        1,
        json!({"group": GROUP, "topic": topic, "partition": partition}),
        None,
    )
}

/// A classic group's metadata (value version 3) with these members (`buildStableGroupRecordWithMember`
/// / `buildEmptyGroupRecord` of Kafka's test).
pub(super) fn group_record(generation: i32, protocol: Option<&str>, members: &[&str]) -> Spec {
    let leader = members.first().copied();
    let members: Vec<Value> = members
        .iter()
        .map(|m| {
            json!({"memberId": m, "clientId": "clientId", "clientHost": "clientHost",
                   "rebalanceTimeout": 60000, "sessionTimeout": 10000})
        })
        .collect();
    (
        2,
        json!({"group": GROUP}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": generation, "protocol": protocol,
                   "leader": leader, "currentStateTimestamp": 1, "members": members}),
        )),
    )
}

/// Every group of `dir`'s `__consumer_offsets` partitions, deleted ones included.
pub(super) fn groups_of(dir: &Path) -> Vec<Group> {
    let inv = request::discover(&[dir.to_path_buf()], &opts()).unwrap();
    let all = GroupsOptions {
        include_deleted: true,
        ..Default::default()
    };
    list_groups(&inv, &all)
}

/// The log's groups (written as `__consumer_offsets-0`) and the scan's report.
pub(super) fn load(log: &GroupLog) -> (Vec<Group>, ScanReport) {
    let d = tempfile::tempdir().unwrap();
    log.write(d.path(), 0).unwrap();
    (groups_of(d.path()), scan(d.path()))
}

/// The offset commits the load of `log` holds pending, as `(producer id, topic,
/// partition, offset)` (`OffsetMetadataManager`'s `pendingTransactionalOffsets`).
pub(super) fn pending(log: &GroupLog) -> Vec<(i64, String, i32, i64)> {
    let d = tempfile::tempdir().unwrap();
    log.write(d.path(), 0).unwrap();
    let inv = request::discover(&[d.path().to_path_buf()], &opts()).unwrap();
    let replay = replay_partition_dir(&inv.partitions[0], None, 0);
    let mut out: Vec<_> = replay
        .pending_commits()
        .map(|(pid, _, c)| (pid, c.topic.clone(), c.partition, c.offset))
        .collect();
    out.sort();
    out
}

pub(super) fn live(groups: &[Group]) -> Option<&Group> {
    groups
        .iter()
        .find(|g| g.group_id == GROUP && g.state == GroupState::Live)
}

/// `(topic, partition)` → `(committed offset, offset of its record)`.
pub(super) fn offsets(g: &Group) -> BTreeMap<(String, i32), (i64, i64)> {
    g.offsets
        .iter()
        .map(|c| ((c.topic.clone(), c.partition), (c.offset, c.record_offset)))
        .collect()
}

pub(super) fn expect(list: &[(&str, i32, i64, i64)]) -> BTreeMap<(String, i32), (i64, i64)> {
    list.iter()
        .map(|(t, p, o, r)| ((t.to_string(), *p), (*o, *r)))
        .collect()
}

pub(super) fn group_findings(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| {
            matches!(
                f.kind,
                Kind::GroupLoadFailure
                    | Kind::GroupDeletionUnfinished
                    | Kind::GroupTombstonesIncomplete
                    | Kind::GroupEpochRegression
            )
        })
        .collect()
}

pub(super) fn assert_clean(r: &ScanReport) {
    assert!(group_findings(r).is_empty(), "{:#?}", group_findings(r));
    assert!(serious(r).is_empty(), "{:#?}", serious(r));
}

/// No group finding; the findings above info are those of the transaction of `pid` the
/// log leaves open (its records are older than its timeout at `NOW`: a hanging transaction
/// of `__consumer_offsets` itself, which is what the bytes show), and, when `holds_offsets`,
/// the offsets it keeps pending.
pub(super) fn assert_only_open(r: &ScanReport, pid: i64, holds_offsets: bool) {
    assert!(group_findings(r).is_empty(), "{:#?}", group_findings(r));
    let s: Vec<(Kind, Option<i64>)> = serious(r).iter().map(|f| (f.kind, f.producer_id)).collect();
    let mut want = vec![(Kind::HangingTransaction, Some(pid))];
    if holds_offsets {
        want.push((Kind::GroupOffsetsPendingInHangingTransaction, Some(pid)));
    }
    assert_eq!(s, want, "{:#?}", serious(r));
}

/// [`THREE`] as committed by records at `first`, `first + 1` and `first + 2`.
pub(super) fn three_at(first: i64) -> BTreeMap<(String, i32), (i64, i64)> {
    let at: Vec<_> = (0..)
        .zip(THREE)
        .map(|(i, (t, p, o))| (t, p, o, first + i))
        .collect();
    expect(&at)
}

pub(super) const THREE: [(&str, i32, i64); 3] = [("foo", 0, 23), ("foo", 1, 455), ("bar", 0, 8992)];

/// `GroupMetadataManagerTest.testLoadEmptyGroupWithOffsets` and
/// `testLoadOffsetsWithEmptyControlBatch`: an empty group (generation 15, protocol type
/// consumer, no protocol, no leader, no member) with its offsets; an empty control batch
/// (all its records cleaned) before them does not fail the load.
#[test]
fn load_empty_group_with_offsets_after_an_empty_control_batch() {
    for empty_control in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let mut p = PartitionBuilder::new("__consumer_offsets", 0).start_offset(14);
        if empty_control {
            p.append_spec(BatchSpec {
                base_offset: 14,
                control: true,
                transactional: true,
                producer_id: 1000,
                producer_epoch: 0,
                base_timestamp: p.now(),
                ..BatchSpec::default()
            });
        } else {
            p.skip_offsets(1);
        }
        let mut b = Batch::new(Producer::PLAIN);
        for (t, k, v) in commits(&THREE)
            .into_iter()
            .chain([group_record(15, None, &[])])
        {
            let (k, v) = record(t, k, v);
            b = b.record(Rec::kv(k, v.unwrap()));
        }
        p.append(b);
        p.write(d.path()).unwrap();
        let groups = groups_of(d.path());
        let g = live(&groups).expect("group loaded");
        assert_eq!(g.epoch, 15);
        assert_eq!(g.protocol_type.as_deref(), Some("consumer"));
        assert_eq!((g.protocol.as_deref(), g.leader.as_deref()), (None, None));
        assert!(g.members.is_empty() && !g.simple);
        assert_eq!(offsets(g), three_at(15));
        assert_clean(&scan(d.path()));
    }
}

/// `GroupMetadataManagerTest.testLoadOffsetsAndGroup` and `testLoadGroupWithTombstone`:
/// a stable group with one member and its offsets loads as written; the group's
/// metadata then its tombstone leaves no live group.
#[test]
fn load_group_and_its_tombstone() {
    let mut log = GroupLog::starting_at(15);
    let mut recs = commits(&THREE);
    recs.push(group_record(15, Some("range"), &["98098230493"]));
    log.batch(recs);
    let (groups, r) = load(&log);
    let g = live(&groups).unwrap();
    assert_eq!((g.epoch, g.protocol.as_deref()), (15, Some("range")));
    assert_eq!(g.leader.as_deref(), Some("98098230493"));
    assert_eq!(g.members.keys().collect::<Vec<_>>(), ["98098230493"]);
    assert_eq!(offsets(g).len(), 3);
    assert_clean(&r);

    let mut log = GroupLog::starting_at(15);
    log.batch(vec![
        group_record(15, Some("range"), &["98098230493"]),
        (2, json!({"group": GROUP}), None),
    ]);
    let (groups, r) = load(&log);
    assert!(live(&groups).is_none(), "{groups:#?}");
    assert!(groups.iter().all(|g| g.state == GroupState::Deleted));
    assert_clean(&r);
}

/// `GroupMetadataManagerTest.testOffsetWriteAfterGroupRemoved`: a group (generation 293),
/// its tombstone, then offsets a simple consumer commits under the same id: the group
/// loads, empty, with those offsets; they were written after the tombstone, so they are
/// no leftover of the deleted group.
#[test]
fn offset_write_after_group_removed() {
    let mut log = GroupLog::starting_at(15);
    let mut recs = vec![
        group_record(293, Some("range"), &["98098230493"]),
        (2, json!({"group": GROUP}), None),
    ];
    recs.extend(commits(&THREE));
    log.batch(recs);
    let (groups, r) = load(&log);
    let g = live(&groups).expect("group loaded");
    assert!(g.members.is_empty());
    assert_eq!(offsets(g), three_at(17));
    assert_clean(&r);
}

/// `GroupMetadataManagerTest.testLoadGroupAndOffsetsFromDifferentSegments`: offsets and a
/// stable group with member "a" in one segment, then offsets and the group with member "b"
/// in the next: the second segment's member is the only one (and the leader) and its
/// offsets override the first's for the same partitions.
#[test]
fn load_group_and_offsets_from_different_segments() {
    let (tp0, tp1, tp2, tp3) = (("foo", 0), ("foo", 1), ("bar", 0), ("xxx", 0));
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("__consumer_offsets", 0).start_offset(15);
    let seg = |offs: [((&str, i32), i64); 3], member: &str| {
        let mut b = Batch::new(Producer::PLAIN);
        let recs = offs.iter().map(|((t, p), o)| commit(t, *p, *o));
        for (t, k, v) in recs.chain([group_record(293, Some("range"), &[member])]) {
            let (k, v) = record(t, k, v);
            b = b.record(Rec::kv(k, v.unwrap()));
        }
        b
    };
    p.append(seg([(tp0, 23), (tp1, 455), (tp3, 42)], "a"));
    p.roll();
    p.append(seg([(tp0, 33), (tp2, 8992), (tp3, 10)], "b"));
    p.write(d.path()).unwrap();
    let groups = groups_of(d.path());
    let g = live(&groups).unwrap();
    assert_eq!(g.leader.as_deref(), Some("b"));
    assert_eq!(g.members.keys().collect::<Vec<_>>(), ["b"]);
    assert_eq!(
        offsets(g),
        expect(&[
            ("foo", 0, 33, 19),
            ("foo", 1, 455, 16),
            ("bar", 0, 8992, 20),
            ("xxx", 0, 10, 21),
        ])
    );
    assert_clean(&scan(d.path()));
}

/// `GroupMetadataManagerTest.testLoadGroupsAndOffsetsWillIgnoreUnknownMessage`,
/// `testReadMessageKeyCanReadUnknownMessage` and
/// `GroupCoordinatorRecordSerdeTest.testDeserializeWithInvalidRecordType`: a record whose
/// key type has no schema (`Short.MAX_VALUE`) is skipped; the group and offsets around it
/// load.
#[test]
fn unknown_record_types_are_skipped() {
    let unknown = (vec![0x7f, 0xff, 0, 0], Some(vec![0x7f, 0xff, 0, 0]));
    let mut log = GroupLog::starting_at(15);
    log.batch(commits(&THREE));
    log.raw(vec![unknown]);
    log.batch(vec![group_record(15, None, &[])]);
    let (groups, r) = load(&log);
    let g = live(&groups).unwrap();
    assert_eq!((g.epoch, offsets(g).len()), (15, 3));
    assert!(group_findings(&r).is_empty(), "{:#?}", group_findings(&r));
    // The coordinator logs a warning for it; so does klogscan (rule 32), and nothing else.
    let f: Vec<(Kind, Option<i64>)> = r.findings.iter().map(|f| (f.kind, f.offset)).collect();
    assert_eq!(f, [(Kind::OffsetsRecordUnknownType, Some(18))]);
}

/// `GroupCoordinatorRecordSerdeTest.testDeserializeWithKeyEmptyBuffer`,
/// `…WithValueEmptyBuffer`, `…WithInvalidKeyBytes`, `…WithInvalidValueBytes`,
/// `GroupCoordinatorShardTest.testReplayKeyCannotBeNull` and core's
/// `testShouldThrowExceptionForUnsupportedGroupMetadataVersion`: each record the
/// coordinator's serde or replay throws on fails the load (`group_load_failure`, carrying
/// the message Kafka throws); the valid records around it still replay here.
#[test]
fn unreadable_records_fail_the_load() {
    let (k3, _) = record(3, json!({"groupId": "g"}), None);
    let (gk, gv) = record(2, json!({"group": GROUP}), group_record(1, None, &[]).2);
    let mut bad_version = gv.unwrap();
    bad_version[..2].copy_from_slice(&i16::MIN.to_be_bytes());
    let cases: Vec<(RawRecord, &str)> = vec![
        ((None, Some(vec![0, 3, 0, 0])), "missing key"),
        (
            (Some(vec![]), Some(vec![0, 0])),
            "Could not read version from key's buffer.",
        ),
        (
            (Some(k3.clone()), Some(vec![])),
            "Could not read version from value's buffer.",
        ),
        (
            (Some(k3[..3].to_vec()), None),
            "Could not read record with version 3 from key's buffer due to",
        ),
        (
            (Some(k3), Some(vec![0, 0, 0, 0])),
            "Could not read record with version 0 from value's buffer due to",
        ),
        (
            (Some(gk), Some(bad_version)),
            // Checked before the value is read since KAFKA-18672 (4.0):
            // `CoordinatorRecordSerde.deserialize`'s `UnknownRecordVersionException`.
            "Found an unknown record version -32768 for 2 type",
        ),
    ];
    for ((k, v), kafka) in cases {
        let d = tempfile::tempdir().unwrap();
        let mut p = PartitionBuilder::new("__consumer_offsets", 0);
        let bad = match (k, v) {
            (None, v) => Rec::value(v.unwrap()),
            (Some(k), Some(v)) => Rec::kv(k, v),
            (Some(k), None) => Rec::tombstone(k),
        };
        let mut b = Batch::new(Producer::PLAIN).record(bad);
        for (t, k, v) in commits(&THREE) {
            let (k, v) = record(t, k, v);
            b = b.record(Rec::kv(k, v.unwrap()));
        }
        p.append(b);
        p.write(d.path()).unwrap();
        let r = scan(d.path());
        let f: Vec<&Finding> = group_findings(&r);
        assert_eq!(f.len(), 1, "{kafka}: {f:#?}");
        assert_eq!((f[0].kind, f[0].offset), (Kind::GroupLoadFailure, Some(0)));
        assert!(f[0].message.contains(kafka), "{kafka}: {}", f[0].message);
        assert_eq!(offsets(live(&groups_of(d.path())).unwrap()).len(), 3);
    }
}

/// `GroupMetadataManagerTest.testReadFromOldGroupMetadata` and
/// `testloadGroupWithStaticMember`: group metadata of value versions 0 to 3 loads the
/// same group (generation, protocol type and name, the one dynamic member); from version 3
/// a member's group instance id makes it static.
#[test]
fn old_group_metadata_versions_and_a_static_member() {
    for version in 0..=3 {
        let mut member = json!({"memberId": "memberId", "clientId": "c", "clientHost": "h",
                                "rebalanceTimeout": 60000, "sessionTimeout": 10000});
        if version == 3 {
            member["groupInstanceId"] = json!("instance");
        }
        let mut log = GroupLog::new();
        log.batch(vec![(
            2,
            json!({"group": GROUP}),
            Some((
                version,
                json!({"protocolType": "consumer", "generation": 1, "protocol": "range",
                       "leader": "memberId", "currentStateTimestamp": 1, "members": [member]}),
            )),
        )]);
        let (groups, r) = load(&log);
        let g = live(&groups).unwrap();
        assert_eq!(
            (g.epoch, g.protocol_type.as_deref()),
            (1, Some("consumer")),
            "v{version}"
        );
        assert_eq!(g.protocol.as_deref(), Some("range"));
        let m = &g.members["memberId"];
        let instance = (version == 3).then(|| "instance".to_string());
        assert_eq!(m.instance_id, instance, "v{version}");
        assert_clean(&r);
    }
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupMetadata` and
/// `testReplayConsumerGroupMemberMetadata` (`GroupCoordinatorShardTest.testReplay…`
/// dispatch to them): a group epoch record creates the consumer group at that epoch; a
/// member's metadata record alone creates the group and the member as written.
#[test]
fn consumer_group_records_create_the_group() {
    let mut log = GroupLog::new();
    log.batch(vec![(
        3,
        json!({"groupId": GROUP}),
        Some((0, json!({"epoch": 10}))),
    )]);
    log.batch(vec![(
        5,
        json!({"groupId": "bar", "memberId": "member"}),
        Some((
            0,
            json!({"clientId": "clientid", "clientHost": "clienthost", "rackId": "rackid",
                   "serverAssignor": "range", "subscribedTopicNames": ["foo"]}),
        )),
    )]);
    let (groups, r) = load(&log);
    let g = live(&groups).unwrap();
    assert_eq!((g.group_type, g.epoch), (GroupType::Consumer, 10));
    let bar = groups.iter().find(|g| g.group_id == "bar").unwrap();
    assert_eq!(bar.group_type, GroupType::Consumer);
    let m = &bar.members["member"];
    assert_eq!(
        (m.client_id.as_str(), m.client_host.as_str()),
        ("clientid", "clienthost")
    );
    assert_eq!(m.rack_id.as_deref(), Some("rackid"));
    assert_eq!(m.subscribed_topics, ["foo"]);
    assert_clean(&r);
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupMetadataTombstone`,
/// `…PartitionMetadataTombstone`, `…TargetAssignmentMetadataTombstone`,
/// `…TargetAssignmentMemberTombstone`, `…MemberMetadataTombstone` and
/// `…CurrentMemberAssignmentTombstone`: every consumer-group tombstone of a group that does
/// not exist is a no-op (no group is created), and a member's tombstones in a group that
/// lacks the member are no-ops too. The negative twin: the same member tombstone once the
/// member exists with a live assignment fails the load (its current assignment was not
/// tombstoned first), see `groups_replay::tombstones_out_of_order_or_missing`.
#[test]
fn consumer_group_tombstones_of_unknown_groups_and_members_are_no_ops() {
    let gm = |g: &str| json!({"groupId": g, "memberId": "m1"});
    let mut log = GroupLog::new();
    log.batch(vec![
        (3, json!({"groupId": "bar"}), None),
        (4, json!({"groupId": "bar"}), None),
        (6, json!({"groupId": "bar"}), None),
        (7, gm("bar"), None),
        (5, gm("bar"), None),
        (8, gm("bar"), None),
    ]);
    log.batch(vec![(
        3,
        json!({"groupId": GROUP}),
        Some((0, json!({"epoch": 10}))),
    )]);
    log.batch(vec![(5, gm(GROUP), None), (8, gm(GROUP), None)]);
    let (groups, r) = load(&log);
    assert!(groups.iter().all(|g| g.group_id != "bar"), "{groups:#?}");
    let g = live(&groups).unwrap();
    assert_eq!((g.epoch, g.members.len()), (10, 0));
    assert_clean(&r);

    // The member exists (with its assignment): its metadata tombstone alone fails the load.
    let mut log = GroupLog::new();
    log.batch(vec![
        (
            3,
            json!({"groupId": GROUP}),
            Some((0, json!({"epoch": 10}))),
        ),
        (
            5,
            gm(GROUP),
            Some((0, json!({"clientId": "c", "clientHost": "h"}))),
        ),
        (
            8,
            gm(GROUP),
            Some((
                0,
                json!({"memberEpoch": 10, "previousMemberEpoch": 9, "state": 0}),
            )),
        ),
    ]);
    log.batch(vec![(5, gm(GROUP), None)]);
    let (_, r) = load(&log);
    let f: Vec<Kind> = group_findings(&r).iter().map(|f| f.kind).collect();
    assert_eq!(f, [Kind::GroupTombstonesIncomplete]);
}

/// The simple classic group of `GroupMetadataManagerTest.testStoreEmptySimpleGroup` (core:
/// an empty group stored with an empty protocol type) followed by a consumer group of the
/// same id: the 4.x load reads the empty protocol type as none
/// (`GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`), so the group is
/// simple (`ClassicGroup.isSimpleGroup`) and the consumer group's records replace it
/// (`getOrMaybeCreatePersistedConsumerGroup`). The negative twin: an empty classic group
/// with protocol type "consumer" is not simple, and the consumer group's record fails the
/// load.
#[test]
fn an_empty_group_without_protocol_type_gives_way_to_a_consumer_group() {
    for (protocol_type, fails) in [("", false), ("consumer", true)] {
        let mut log = GroupLog::new();
        log.batch(vec![(
            2,
            json!({"group": GROUP}),
            Some((
                3,
                json!({"protocolType": protocol_type, "generation": 0, "protocol": null,
                       "leader": null, "currentStateTimestamp": 1, "members": []}),
            )),
        )]);
        log.batch(vec![(
            3,
            json!({"groupId": GROUP}),
            Some((0, json!({"epoch": 10}))),
        )]);
        let (groups, r) = load(&log);
        let g = live(&groups).unwrap();
        let f: Vec<Kind> = group_findings(&r).iter().map(|f| f.kind).collect();
        if fails {
            assert_eq!(f, [Kind::GroupLoadFailure]);
            assert_eq!(g.group_type, GroupType::Classic);
            assert_eq!(g.protocol_type.as_deref(), Some("consumer"));
        } else {
            assert_clean(&r);
            assert_eq!((g.group_type, g.epoch), (GroupType::Consumer, 10));
        }
    }
}

/// `GroupMetadataManagerTest.testSerializeGroupMetadataValueToHighestNonFlexibleVersion`,
/// `testDeserializeHighestSupportedGroupMetadataValueVersion` and
/// `testDeserializeFutureGroupMetadataValue`: the group's metadata as value version 3, as
/// version 4 (flexible) and as version 4 with unknown tagged fields loads the same group.
#[test]
fn group_metadata_of_the_highest_versions_and_a_future_one() {
    for (version, future) in [(3, false), (4, false), (4, true)] {
        let (t, k, v) = group_record(7, Some("range"), &["memberId"]);
        let (k, v) = record(t, k, v.map(|(_, v)| (version, v)));
        let v = v.unwrap();
        let v = if future {
            super::offsets::with_future_tags(v)
        } else {
            v
        };
        let mut log = GroupLog::new();
        log.raw(vec![(k, Some(v))]);
        let (groups, r) = load(&log);
        let g = live(&groups).unwrap();
        let what = format!("v{version} future={future}");
        assert_eq!(
            (g.epoch, g.protocol.as_deref()),
            (7, Some("range")),
            "{what}"
        );
        assert_eq!(g.leader.as_deref(), Some("memberId"), "{what}");
        assert_eq!(g.members.keys().collect::<Vec<_>>(), ["memberId"], "{what}");
        assert_clean(&r);
    }
}

/// `GroupMetadataManagerTest.testLoadGroupAndOffsetsWithCorruptedLog` (core) and
/// `CoordinatorLoaderImplTest.testLoadGroupAndOffsetsWithCorruptedLog`: the log's start
/// offset is below its end but nothing is left to read (on disk: one empty segment at the
/// log end offset 10): the load completes with no group and no error.
#[test]
fn load_of_a_log_with_no_record_left() {
    let d = tempfile::tempdir().unwrap();
    let pdir = d.path().join("__consumer_offsets-0");
    std::fs::create_dir_all(&pdir).unwrap();
    std::fs::write(pdir.join(format!("{:020}.log", 10)), b"").unwrap();
    assert!(groups_of(d.path()).is_empty());
    let r = scan(d.path());
    assert_clean(&r);
    assert_eq!(r.partitions.len(), 1);
}

/// `GroupMetadataManagerTest.testLoadConsumerGroupWithFaultyConsumerProtocol` (core): a
/// "consumer" group whose member's subscription and assignment bytes are not the consumer
/// protocol still loads, with its member (no topics read from those bytes).
#[test]
fn consumer_group_with_a_faulty_consumer_protocol_loads() {
    let mut log = GroupLog::new();
    log.batch(vec![(
        2,
        json!({"group": GROUP}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 1, "protocol": "range",
                   "leader": "memberId", "currentStateTimestamp": 1,
                   "members": [{"memberId": "memberId", "clientId": "c", "clientHost": "h",
                                "rebalanceTimeout": 60000, "sessionTimeout": 10000,
                                "subscription": "AAE=", "assignment": "AAE="}]}),
        )),
    )]);
    let (groups, r) = load(&log);
    let g = live(&groups).unwrap();
    let m = &g.members["memberId"];
    assert!(
        m.subscribed_topics.is_empty() && m.assigned.is_empty(),
        "{m:?}"
    );
    assert_clean(&r);
}

/// A `__consumer_offsets` copy read only in part (`--max-bytes`) ends where the read
/// stopped, not where the log does: no end-of-log verdict is drawn on it (the unread rest
/// may hold the outcome of a barrier, the tombstones of a deletion). A streams group
/// deleted the KIP-1331 way, cut anywhere, gives neither `group_deletion_unfinished` nor
/// `group_tombstones_incomplete`; the same log crashed after its barrier, read whole, does
/// (the twin).
#[test]
fn no_end_of_log_verdict_on_a_partly_read_log() {
    use klogscan::testkit::group_scenarios::{streams_crash_after_barrier, streams_deleted};
    let d = tempfile::tempdir().unwrap();
    streams_deleted("app").write(d.path(), 0).unwrap();
    let seg = d
        .path()
        .join("__consumer_offsets-0/00000000000000000000.log");
    let len = std::fs::metadata(&seg).unwrap().len();
    let end_of_log = |r: &ScanReport| {
        r.findings
            .iter()
            .filter(|f| {
                matches!(
                    f.kind,
                    Kind::GroupDeletionUnfinished | Kind::GroupTombstonesIncomplete
                )
            })
            .count()
    };
    let mut cut_reads = 0;
    for cut in (61..len).step_by(23) {
        let r = request::run(&Request::new([d.path()]).with_options(opts().with_max_bytes(cut)))
            .unwrap()
            .report;
        if r.partitions.iter().any(|p| p.partially_read) {
            cut_reads += 1;
            assert_eq!(end_of_log(&r), 0, "cut at {cut}: {:#?}", r.findings);
        }
    }
    assert!(cut_reads > 3, "{cut_reads}");
    assert_eq!(end_of_log(&scan(d.path())), 0);
    let twin = tempfile::tempdir().unwrap();
    streams_crash_after_barrier("app")
        .write(twin.path(), 0)
        .unwrap();
    assert!(end_of_log(&scan(twin.path())) > 0);
}

/// A load-failing record in a copy no coordinator loads (a `-delete` directory) is
/// reported without the claim that the partition's groups are unavailable; the same record
/// in the live directory keeps it (the twin).
#[test]
fn a_non_live_copy_claims_no_unavailable_groups() {
    let mut log = GroupLog::new();
    log.raw(vec![(
        vec![0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 0],
        Some(vec![0, 3, 0]),
    )]);
    let d = tempfile::tempdir().unwrap();
    log.write(d.path(), 0).unwrap();
    let claims = |r: &ScanReport| -> Vec<(Kind, bool)> {
        r.findings
            .iter()
            .filter(|f| {
                matches!(
                    f.kind,
                    Kind::GroupLoadFailure | Kind::OffsetsRecordUndecodable
                )
            })
            .map(|f| {
                let b = &f.broker_behaviour;
                (
                    f.kind,
                    b.contains("unavailable") || b.contains("cannot be loaded"),
                )
            })
            .collect()
    };
    let live = claims(&scan(d.path()));
    assert!(!live.is_empty() && live.iter().all(|(_, c)| *c), "{live:?}");
    std::fs::rename(
        d.path().join("__consumer_offsets-0"),
        d.path()
            .join("__consumer_offsets-0.0123456789abcdef0123456789abcdef-delete"),
    )
    .unwrap();
    let r = scan(d.path());
    let copy = claims(&r);
    assert_eq!(copy.len(), live.len(), "{:#?}", r.findings);
    assert!(copy.iter().all(|(_, c)| !*c), "{:#?}", r.findings);
}

/// What a load failure does depends on the coordinator: a group-type conflict fails only
/// Kafka 4.x's loads (the ≤ 3.x coordinator skips those record types), a record that does
/// not deserialize fails both — 4.x unloads the partition's coordinator, ≤ 3.x serves the
/// partition with none of its groups (consumers reset by `auto.offset.reset`).
#[test]
fn a_load_failure_says_what_each_coordinator_does() {
    let text = |log: &GroupLog| -> String {
        let (_, r) = load(log);
        r.findings
            .iter()
            .find(|f| f.kind == Kind::GroupLoadFailure)
            .map(|f| f.broker_behaviour.clone())
            .unwrap_or_else(|| panic!("{:#?}", r.findings))
    };
    use klogscan::testkit::group_scenarios::{consumer_group, streams_group};
    let mut conflict = GroupLog::new();
    consumer_group(&mut conflict, "shared");
    streams_group(&mut conflict, "shared");
    let t = text(&conflict);
    assert!(
        t.contains("Kafka 4.x") && t.contains("NOT_COORDINATOR"),
        "{t}"
    );
    assert!(!t.contains("auto.offset.reset"), "{t}");
    let mut broken = GroupLog::new();
    broken.raw(vec![(
        vec![0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 0],
        Some(vec![0, 3, 0]),
    )]);
    let t = text(&broken);
    assert!(
        t.contains("Kafka 4.x") && t.contains("auto.offset.reset"),
        "{t}"
    );
}

/// The load stops at the first record it throws on, whatever the kind: a consumer group's
/// metadata tombstoned while its member is live (out of the coordinator's order) stops it
/// there, so a wrong-type record after it is never reached — one verdict, the
/// `group_tombstones_incomplete` at the tombstone, counting both in `rejected_records`. The
/// wrong-type record alone is the `group_load_failure` (the twin).
#[test]
fn the_load_stops_at_its_first_throw_whatever_the_kind() {
    use klogscan::testkit::group_scenarios::{consumer_group, streams_group};
    let mut log = GroupLog::new();
    consumer_group(&mut log, "shared");
    log.batch(vec![(3, json!({"groupId": "shared"}), None)]);
    streams_group(&mut log, "shared");
    // Another group's tombstone out of order after the stop: not reached either.
    consumer_group(&mut log, "other");
    log.batch(vec![(3, json!({"groupId": "other"}), None)]);
    let (_, r) = load(&log);
    let stops: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.evidence["load_fails"] == true)
        .collect();
    assert_eq!(stops.len(), 1, "{stops:#?}");
    assert_eq!(stops[0].kind, Kind::GroupTombstonesIncomplete);
    assert!(
        stops[0].evidence["rejected_records"].as_u64() >= Some(2),
        "{:#?}",
        stops[0]
    );
    let mut twin = GroupLog::new();
    consumer_group(&mut twin, "shared");
    streams_group(&mut twin, "shared");
    let (_, r) = load(&twin);
    let stops: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.evidence["load_fails"] == true)
        .map(|f| f.kind)
        .collect();
    assert_eq!(stops, [Kind::GroupLoadFailure]);
}
