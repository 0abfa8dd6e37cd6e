//! Share and streams group record types replayed on their own, a consumer group's resolved
//! regular expressions, and the assignment timestamp of the target assignment metadata
//! records (`GroupMetadataManagerTest.testReplay*` and `GroupCoordinatorShardTest.testReplay*`
//! of the 2026-08 trunk, the methods not cited before).

use super::{load_failures, one_load_failure};
use crate::groups_dump::{decoder, dump_lines, key_payload};
use crate::kafka_groupaudit_cases::{
    Coord, FOO_ID, commit, current, g, gm, offsets_partition, tombstone, tp,
};
use crate::kafka_streams_cases as streams;
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::{Value, json};

/// `GroupMetadataManagerTest.testReplayStreamsGroupMetadata`, `…Topology`,
/// `…TargetAssignmentMember`, `…TargetAssignmentMetadata`, `…CurrentMemberAssignment` and
/// the tombstones of an unknown group (`…EpochTombstoneNotExisting`,
/// `…TargetAssignmentMemberTombstoneNonExisting`, `…TargetAssignmentMetadataTombstoneNotExisting`,
/// `…CurrentMemberAssignmentTombstoneNotExisting`, `…TopologyTombstoneNotExists`), with
/// `GroupCoordinatorShardTest.testReplayStreamsGroup*` (value and `…WithNullValue`: the
/// shard routes types 17 and 19–23 to those replays): each value alone creates the streams
/// group (`getOrMaybeCreatePersistedStreamsGroup`) holding what it carries; each tombstone
/// of a group the load does not hold is ignored. `…TopologyTombstoneExists`: a topology
/// tombstone of a group that has one removes it, the group stays.
/// klogscan: five streams groups as Kafka holds them, none for the tombstones, no finding.
/// Near miss: the same value of an id a consumer group holds: "Group … is not a streams
/// group", a load failure of every release.
#[test]
fn each_streams_record_alone_creates_the_group_and_a_lone_tombstone_is_ignored() {
    let mut c = Coord::new();
    c.batch("s-meta", vec![streams::meta("s-meta", 10)]);
    c.batch(
        "s-topology",
        vec![streams::topology("s-topology", 12, &["source-topic"], &[])],
    );
    c.batch(
        "s-target",
        vec![streams::target("s-target", "m1", &[0, 1, 2])],
    );
    c.batch(
        "s-target-meta",
        vec![streams::target_epoch("s-target-meta", 10)],
    );
    let cur = streams::current("s-current", "member", (10, 9, 3), &[0, 1, 2], &[]);
    c.batch("s-current", vec![cur]);
    for t in [17, 20, 23] {
        c.batch("gone", vec![tombstone(t, g("gone"))]);
    }
    for t in [19, 21, 22] {
        c.batch("gone", vec![tombstone(t, gm("gone", "m1"))]);
    }
    // `…TopologyTombstoneExists`: a group with a topology loses it.
    c.batch(
        "s-dropped",
        vec![
            streams::meta("s-dropped", 10),
            streams::topology("s-dropped", 10, &["source-topic"], &[]),
        ],
    );
    c.batch("s-dropped", vec![tombstone(23, g("s-dropped"))]);
    let l = c.load();
    for id in [
        "s-meta",
        "s-topology",
        "s-target",
        "s-target-meta",
        "s-current",
    ] {
        assert_eq!(l.group(id).group_type, GroupType::Streams, "{id}");
    }
    assert_eq!(l.group("s-meta").epoch, 10);
    let t = l.group("s-topology").topology.as_ref().unwrap();
    assert_eq!(
        (t.epoch, t.source_topics.clone()),
        (12, vec!["source-topic".to_string()])
    );
    let want: Vec<String> = (0..3).map(streams::task).collect();
    assert_eq!(l.group("s-target").target_assignment["m1"], want);
    assert_eq!(l.group("s-target-meta").assignment_epoch, 10);
    let m = &l.group("s-current").members["member"];
    assert_eq!(
        (m.member_epoch, m.previous_member_epoch, m.state),
        (10, 9, 3)
    );
    assert_eq!(m.assigned, want);
    assert!(
        l.groups.iter().all(|g| g.group_id != "gone"),
        "{:#?}",
        l.groups
    );
    let dropped = l.group("s-dropped");
    assert!(dropped.topology.is_none(), "{dropped:#?}");
    assert_eq!(dropped.epoch, 10);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: a consumer group's id.
    let mut c = Coord::new();
    c.batch(
        "foo",
        vec![current("foo", "c1", 1, 0, 0, &[(FOO_ID, &[0])])],
    );
    c.batch("foo", vec![streams::meta("foo", 10)]);
    let l = c.load();
    assert_eq!(l.group("foo").group_type, GroupType::Consumer);
    let f = one_load_failure(&l);
    assert_eq!(f.offset, Some(1));
    assert!(
        f.evidence
            .get("load_fails_in")
            .is_none_or(|v| v == "kafka_4"),
        "{f:#?}"
    );
}

/// `GroupMetadataManagerTest.testReplayStreamsGroupMemberMetadataWithSimpleClassicGroup`
/// (KAFKA-20254): offsets replayed first make a simple classic group (its `GroupMetadata`
/// tombstone cleaned away); a streams member record then replaces it with a streams group
/// holding the member. klogscan: the streams group with the member and the offset; the
/// load failure of the releases before KAFKA-20254 scoped so
/// (`kafka_4_before_kafka_20254`). Near miss: the group id held by a classic group with a
/// protocol type (not simple): a failure of every release.
#[test]
fn a_streams_member_replaces_a_simple_classic_group_since_kafka_20254() {
    let build = |first: Spec| {
        let mut c = Coord::new();
        c.batch("foo", vec![first]);
        c.batch("foo", vec![streams::member("foo", "member", "processid")]);
        c.load()
    };
    let l = build(commit("foo", "input", 0, 7));
    let foo = l.group("foo");
    assert_eq!(foo.group_type, GroupType::Streams);
    assert_eq!(
        foo.members["member"].process_id.as_deref(),
        Some("processid")
    );
    assert_eq!(l.offsets("foo"), [tp("input", 0, 7)]);
    let f = one_load_failure(&l);
    assert_eq!(f.evidence["load_fails_in"], "kafka_4_before_kafka_20254");

    // Near miss: an Empty classic `consumer` group (not simple).
    let empty = (
        2,
        json!({"group": "foo"}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 1, "protocol": null,
                   "leader": null, "currentStateTimestamp": 1, "members": []}),
        )),
    );
    let l = build(empty);
    let f = one_load_failure(&l);
    assert_ne!(f.evidence["load_fails_in"], "kafka_4_before_kafka_20254");
}

/// `GroupMetadataManagerTest.testReplayShareGroupTargetAssignmentMetadata`,
/// `…Tombstone` and `…TombstoneExisting`: the value (epoch 10, timestamp 12345) creates
/// the share group at assignment epoch 10; the tombstone of a group the load does not hold
/// is ignored (4.1+: KAFKA-19453); the tombstone after the value sets the assignment epoch
/// to -1, the group stays. klogscan: `bar` at 10, `foo` at -1, no `gone`; only the 4.0
/// failures (`kafka_4_before_kafka_19453`: the value of an unknown group, the tombstone of
/// one). Near miss: the group's own tombstone after the value without the target
/// assignment metadata tombstone: the load throws in every release
/// (`group_tombstones_incomplete`).
#[test]
fn share_target_assignment_metadata_creates_the_group_and_its_tombstone_resets_the_epoch() {
    let value = |id: &str| {
        let v = json!({"assignmentEpoch": 10, "assignmentTimestamp": 12345});
        (12, g(id), Some((0, v)))
    };
    let mut c = Coord::new();
    c.batch("bar", vec![value("bar")]);
    c.batch("foo", vec![value("foo")]);
    c.batch("foo", vec![tombstone(12, g("foo"))]);
    c.batch("gone", vec![tombstone(12, g("gone"))]);
    let l = c.load();
    assert_eq!(l.group("bar").group_type, GroupType::Share);
    assert_eq!(l.group("bar").assignment_epoch, 10);
    assert_eq!(l.group("foo").assignment_epoch, -1);
    assert!(l.groups.iter().all(|g| g.group_id != "gone"));
    // The three records 4.0 throws on (one finding per partition: its first).
    let partitions = |ids: &[&str]| -> std::collections::BTreeSet<i32> {
        ids.iter().map(|id| offsets_partition(id)).collect()
    };
    let want = partitions(&["bar", "foo", "gone"]);
    for (name, fs) in load_failures(&l) {
        let got: std::collections::BTreeSet<i32> = fs.iter().map(|f| f.partition).collect();
        assert_eq!(got, want, "{name}: {fs:#?}");
        for f in fs {
            assert_eq!(f.evidence["load_fails_in"], "kafka_4_before_kafka_19453");
        }
    }
    let others = [
        Kind::GroupDeletionUnfinished,
        Kind::GroupTombstonesIncomplete,
        Kind::GroupEpochRegression,
    ];
    for (name, fs) in l.reports() {
        assert!(
            fs.iter().all(|f| !others.contains(&f.kind)),
            "{name}: {fs:#?}"
        );
    }

    // Near miss: the group's tombstone while the target assignment epoch is 10: every
    // release throws there, 4.1+ too (they replay past the value 4.0 throws on).
    let mut c = Coord::new();
    c.batch("bar", vec![value("bar")]);
    c.batch("bar", vec![tombstone(11, g("bar"))]);
    let l = c.load();
    l.assert_reported(Kind::GroupTombstonesIncomplete, "bar");
    assert!(l.live("bar").is_some());
    let f = one_load_failure(&l);
    assert_eq!(
        (f.offset, f.evidence["rejected_records"].as_i64()),
        (Some(0), Some(2))
    );
}

/// The target assignment metadata of share (type 12) and streams (type 20) groups carries
/// the time the assignment was computed since KAFKA-20266 (tag 0, `AssignmentTimestamp`,
/// as type 6 does): `dump --offsets-decoder` prints it as Kafka's tool does
/// (`assignmentTimestamp`, a tagged field printed when not at its default 0). Before the
/// fix the two types' schemas here lacked the tag: it was skipped and not printed.
/// Near miss: a timestamp of 0 is not printed.
#[test]
fn the_assignment_timestamp_of_share_and_streams_target_metadata_prints() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = GroupLog::new();
    for (t, ts) in [(6, 12345), (12, 12345), (20, 12345), (12, 0), (20, 0)] {
        let v = json!({"assignmentEpoch": 10, "assignmentTimestamp": ts});
        log.batch(vec![(t, g("foo"), Some((0, v)))]);
    }
    log.write(dir.path(), 0).unwrap();
    let seg = dir
        .path()
        .join("__consumer_offsets-0/00000000000000000000.log");
    let payloads: Vec<(String, Value)> = dump_lines(&seg, &decoder())
        .iter()
        .filter(|l| l.starts_with("| offset: "))
        .map(|l| {
            let (k, p) = key_payload(l);
            (
                k["type"].as_str().unwrap().to_string(),
                p.unwrap()["data"].clone(),
            )
        })
        .collect();
    let with = json!({"assignmentEpoch": 10, "assignmentTimestamp": 12345});
    let without = json!({"assignmentEpoch": 10});
    let want: Vec<(String, Value)> = [
        ("6", &with),
        ("12", &with),
        ("20", &with),
        ("12", &without),
        ("20", &without),
    ]
    .iter()
    .map(|(t, v)| (t.to_string(), (*v).clone()))
    .collect();
    assert_eq!(payloads, want);
}

/// `GroupMetadataManagerTest.testReplayConsumerGroupRegularExpression`, `…Tombstone`, and
/// `GroupCoordinatorShardTest.testReplayConsumerGroupRegularExpression`, `…Tombstone`: the
/// record (type 16) of `abc*` resolved to `abc` and `abcd` (version 10, timestamp 12345)
/// creates the consumer group holding that resolution; its tombstone removes it; the
/// tombstone of a group the load does not hold is ignored. klogscan: `foo` holding `abc*`
/// → `[abc, abcd]`; `bar`, whose record was tombstoned, holding none; no `gone`; no
/// finding. Near miss: the tombstone before the value (the order reversed): `bar` keeps
/// `abc*`.
#[test]
fn a_resolved_regular_expression_is_held_until_its_tombstone() {
    let key = |id: &str| json!({"groupId": id, "regularExpression": "abc*"});
    let value = |id: &str| {
        let v = json!({"topics": ["abc", "abcd"], "version": 10, "timestamp": 12345});
        (16, key(id), Some((0, v)))
    };
    let build = |tombstone_last: bool| {
        let mut c = Coord::new();
        c.batch("foo", vec![value("foo")]);
        c.batch("gone", vec![(16, key("gone"), None)]);
        if tombstone_last {
            c.batch("bar", vec![value("bar"), (16, key("bar"), None)]);
        } else {
            c.batch("bar", vec![(16, key("bar"), None), value("bar")]);
        }
        c.load()
    };
    let l = build(true);
    let foo = l.group("foo");
    assert_eq!(foo.group_type, GroupType::Consumer);
    let abc = vec!["abc".to_string(), "abcd".to_string()];
    assert_eq!(foo.regular_expressions["abc*"], abc);
    assert!(l.group("bar").regular_expressions.is_empty());
    assert!(l.groups.iter().all(|g| g.group_id != "gone"));
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the tombstone first.
    let l = build(false);
    assert_eq!(l.group("bar").regular_expressions["abc*"], abc);
}
