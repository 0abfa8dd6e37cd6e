//! `GroupCoordinatorRecordSerde` (via `CoordinatorRecordSerde.deserialize`) on the share
//! and streams record types, what `CoordinatorLoaderImpl` does with what it cannot read,
//! and `kafka-dump-log --offsets-decoder` (`DumpLogSegments.CoordinatorRecordMessageParser`).

use super::{BAR, FOO, dump_offsets, g, gm, load, tomb, v0};
use klogscan::finding::{Kind, Severity};
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::{Value, json};

/// A share group and a streams group with every field of every value set (tagged ones at
/// a value other than their default), in an order the coordinator writes them.
fn every_new_record() -> Vec<Spec> {
    let tasks = |p: [i32; 3]| json!([{"subtopologyId": "subtopology-1", "partitions": p}]);
    let none = json!([]);
    vec![
        v0(
            10,
            gm("sg", "m1"),
            json!({"rackId": "r1", "clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["foo"]}),
        ),
        v0(
            11,
            g("sg"),
            json!({"epoch": 5, "metadataHash": 123_456_789}),
        ),
        v0(
            13,
            gm("sg", "m1"),
            json!({"topicPartitions": [{"topicId": FOO, "partitions": [0, 1, 2]}]}),
        ),
        v0(12, g("sg"), json!({"assignmentEpoch": 5})),
        v0(
            14,
            gm("sg", "m1"),
            json!({"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
            "assignedPartitions": [{"topicId": FOO, "partitions": [0, 1, 2]}]}),
        ),
        v0(
            15,
            g("sg"),
            json!({"initializingTopics": [{"topicId": BAR, "topicName": "bar", "partitions": [0]}],
            "initializedTopics": [{"topicId": FOO, "topicName": "foo", "partitions": [0, 1, 2]}],
            "deletingTopics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAw", "topicName": "gone"}]}),
        ),
        v0(
            23,
            g("st"),
            json!({"epoch": 12, "subtopologies": [{"subtopologyId": "subtopology-1",
            "sourceTopics": ["source-topic"], "sourceTopicRegex": ["src.*"],
            "stateChangelogTopics": [{"name": "cl", "partitions": 3, "replicationFactor": 2,
                "topicConfigs": [{"key": "cleanup.policy", "value": "compact"}]}],
            "repartitionSinkTopics": ["sink-topic"],
            "repartitionSourceTopics": [{"name": "rp", "partitions": 3, "replicationFactor": -1, "topicConfigs": []}],
            "copartitionGroups": [{"sourceTopics": [0], "sourceTopicRegex": [0], "repartitionSourceTopics": [0]}]}]}),
        ),
        v0(
            19,
            gm("st", "w1"),
            json!({"instanceId": "instanceid", "rackId": "rackid", "clientId": "clientid",
            "clientHost": "clienthost", "rebalanceTimeoutMs": 1000, "topologyEpoch": 12, "processId": "processid",
            "userEndpoint": {"host": "localhost", "port": 9999}, "clientTags": [{"key": "key", "value": "value"}]}),
        ),
        v0(
            17,
            g("st"),
            json!({"epoch": 10, "metadataHash": -7, "validatedTopologyEpoch": 12,
            "lastAssignmentConfigs": [{"key": "num.standby.replicas", "value": "0"}]}),
        ),
        v0(
            21,
            gm("st", "w1"),
            json!({"activeTasks": tasks([0, 1, 2]), "standbyTasks": tasks([3, 4, 5]), "warmupTasks": tasks([6, 7, 8])}),
        ),
        v0(20, g("st"), json!({"assignmentEpoch": 10})),
        v0(
            22,
            gm("st", "w1"),
            json!({"memberEpoch": 10, "previousMemberEpoch": 9, "state": 0,
            "activeTasks": tasks([0, 1, 2]), "standbyTasks": tasks([3, 4, 5]), "warmupTasks": tasks([6, 7, 8]),
            "activeTasksPendingRevocation": none, "standbyTasksPendingRevocation": none, "warmupTasksPendingRevocation": none}),
        ),
    ]
}

/// `GroupCoordinatorRecordSerdeTest.testDeserializeAllRecordTypes` (every type of
/// `CoordinatorRecordType` at every value version round-trips; the share and streams
/// values have version 0 only) and `DumpLogSegmentsTest.testOffsetsMessageParser` (the
/// `{"type":…,"data":…}` / `{"version":…,"data":…}` shape, tagged fields printed when
/// not at their default): each share and streams record prints back the data it was
/// written with, and the replay gives each record to its group: the share group at epoch 5
/// with its member's partitions, the streams group at epoch 10 with its topology, member
/// and tasks. A consistent log: no finding.
#[test]
fn every_share_and_streams_record_round_trips_and_is_attributed() {
    let recs = every_new_record();
    let mut log = GroupLog::new();
    log.batch(recs.clone());
    let lines = dump_offsets(&log);
    assert_eq!(lines.len(), recs.len());
    for ((t, k, v), (key, payload)) in recs.iter().zip(&lines) {
        let key: Value = serde_json::from_str(key).unwrap();
        assert_eq!(key, json!({"type": t.to_string(), "data": k}));
        let payload: Value = serde_json::from_str(payload.as_deref().unwrap()).unwrap();
        let (ver, data) = v.as_ref().unwrap();
        assert_eq!(
            payload,
            json!({"version": ver.to_string(), "data": data}),
            "type {t}"
        );
    }

    let l = load(&log);
    l.assert_clean();
    let sg = l.live("sg").unwrap();
    assert_eq!(
        (
            sg.group_type,
            sg.epoch,
            sg.assignment_epoch,
            sg.metadata_hash
        ),
        (GroupType::Share, 5, 5, 123_456_789)
    );
    let m = &sg.members["m1"];
    assert_eq!(
        (
            m.member_epoch,
            m.previous_member_epoch,
            m.rack_id.as_deref()
        ),
        (5, 4, Some("r1"))
    );
    assert_eq!(m.subscribed_topics, ["foo"]);
    let foo = |p: i32| format!("{FOO}:{p}");
    assert_eq!(m.assigned, [foo(0), foo(1), foo(2)]);
    assert_eq!(sg.target_assignment["m1"], m.assigned);

    let st = l.live("st").unwrap();
    assert_eq!(
        (
            st.group_type,
            st.epoch,
            st.assignment_epoch,
            st.validated_topology_epoch
        ),
        (GroupType::Streams, 10, 10, 12)
    );
    let t = st.topology.as_ref().unwrap();
    assert_eq!(
        (t.epoch, &t.subtopologies[..], &t.source_topics[..]),
        (
            12,
            &["subtopology-1".to_string()][..],
            &["source-topic".to_string()][..]
        )
    );
    let w = &st.members["w1"];
    assert_eq!(
        (
            w.topology_epoch,
            w.process_id.as_deref(),
            w.instance_id.as_deref()
        ),
        (Some(12), Some("processid"), Some("instanceid"))
    );
    assert!(
        w.assigned.contains(&"subtopology-1:0".to_string()),
        "{:?}",
        w.assigned
    );
    assert!(
        w.assigned.contains(&"standby:subtopology-1:3".to_string()),
        "{:?}",
        w.assigned
    );
    assert!(
        w.assigned.contains(&"warmup:subtopology-1:8".to_string()),
        "{:?}",
        w.assigned
    );
}

/// `GroupCoordinatorRecordSerdeTest.testDeserializeWithInvalidRecordType` (key type 255:
/// `UnknownRecordTypeException`) and `CoordinatorLoaderImplTest.testUnknownRecordTypeAreIgnored`
/// (the loader logs it and goes on): a record of type 255 in the middle of a share group's
/// log fails nothing and the records after it are replayed; the dump prints Kafka's
/// `Unknown record type 255 at offset 1, skipping.` with no payload. klogscan reports the
/// record (a warning), never a load failure.
#[test]
fn an_unknown_record_type_is_skipped_and_the_load_goes_on() {
    let mut log = GroupLog::new();
    log.batch(vec![v0(
        11,
        g("sg"),
        json!({"epoch": 1, "metadataHash": 0}),
    )]);
    log.raw(vec![(vec![0, 255, 1, 2, 3], Some(vec![0; 64]))]);
    log.batch(vec![v0(
        11,
        g("sg"),
        json!({"epoch": 2, "metadataHash": 0}),
    )]);
    let lines = dump_offsets(&log);
    assert_eq!(
        lines[1],
        (
            "Unknown record type 255 at offset 1, skipping.".to_string(),
            None
        )
    );

    let l = load(&log);
    assert!(l.group_findings().is_empty(), "{:#?}", l.findings);
    let u = l.of(Kind::OffsetsRecordUnknownType);
    assert_eq!(u.len(), 1, "{:#?}", l.findings);
    assert!(u[0].severity < Severity::Error);
    assert_eq!(u[0].offset, Some(1));
    assert_eq!(l.live("sg").unwrap().epoch, 2);
}

/// `GroupCoordinatorRecordSerde.apiMessageKeyFor` with the `CoordinatorRecordType` of Kafka
/// 4.1+, which no longer has ids 9 (ShareGroupPartitionMetadata, removed by KAFKA-17747,
/// PR #19796) and 18 (StreamsGroupPartitionMetadata, PR #19802): their records are unknown
/// types the loader skips (`CoordinatorLoaderImpl`), so a well-formed one for a group of
/// another type fails nothing, and neither does one whose bytes fit no schema.
#[test]
fn retired_share_and_streams_partition_metadata_records_are_skipped_by_the_load() {
    let mut log = GroupLog::new();
    log.batch(vec![
        v0(3, g("cg"), json!({"epoch": 1})),
        v0(9, g("cg"), json!({"topics": [{"topicId": FOO, "topicName": "foo", "numPartitions": 1, "partitionMetadata": []}]})),
        v0(18, g("cg"), json!({"topics": []})),
    ]);
    log.raw(vec![(vec![0, 9, 0, 2, b'c', b'g'], Some(vec![0, 0, 0xff]))]);
    let l = load(&log);
    assert!(l.group_findings().is_empty(), "{:#?}", l.findings);
    assert!(
        l.of(Kind::OffsetsRecordUndecodable).is_empty(),
        "{:#?}",
        l.findings
    );
    assert_eq!(l.live("cg").unwrap().group_type, GroupType::Consumer);
}

/// `DumpLogSegments.CoordinatorRecordMessageParser.parse` over the 4.1+ serde: a key type
/// `CoordinatorRecordType.fromId` does not know (9 and 18 since their removal; 24 was never
/// in a release) prints `Unknown record type T at offset O, skipping.` and no payload.
#[test]

fn retired_and_unreleased_types_dump_as_unknown_record_types() {
    let mut log = GroupLog::new();
    log.batch(vec![
        v0(9, g("g9"), json!({"topics": []})),
        v0(18, g("g18"), json!({"topics": []})),
        v0(
            24,
            g("g24"),
            json!({"assignmentEpoch": 1, "resolvedTopicIdsBySubtopology": []}),
        ),
    ]);
    let lines = dump_offsets(&log);
    for (o, t) in [9, 18, 24].into_iter().enumerate() {
        assert_eq!(
            lines[o],
            (
                format!("Unknown record type {t} at offset {o}, skipping."),
                None
            )
        );
    }
}

/// A share group metadata value at version 1 and a streams topology value at version -1
/// (`GroupCoordinatorRecordSerdeTest.testDeserializeWithInvalidValueVersion`: a version
/// outside the value's supported range throws `UnknownRecordVersionException`), which
/// `CoordinatorLoaderImpl` does not catch as an unknown type: the load fails.
fn bad_versions() -> GroupLog {
    let mut log = GroupLog::new();
    let mut share = vec![0, 1];
    share.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    log.raw(vec![(vec![0, 11, 0, 2, b's', b'g'], Some(share))]);
    log.raw(vec![(
        vec![0, 23, 0, 2, b's', b't'],
        Some(vec![0xff, 0xff, 0, 0, 0, 1, 1, 0]),
    )]);
    log
}

/// The load-failure half of [`bad_versions`]: the load stops at the first record (one
/// load failure for the partition, counting both records), each record is undecodable,
/// and neither creates its group.
#[test]
fn an_unsupported_value_version_fails_the_load() {
    let l = load(&bad_versions());
    let f = l.of(Kind::GroupLoadFailure);
    assert_eq!(f.len(), 1, "{:#?}", l.findings);
    assert_eq!(
        (f[0].offset, &f[0].evidence["rejected_records"]),
        (Some(0), &json!(2))
    );
    assert_eq!(
        l.of(Kind::OffsetsRecordUndecodable).len(),
        2,
        "{:#?}",
        l.findings
    );
    assert!(l.any("sg").is_empty() && l.any("st").is_empty());
}

/// The message half of [`bad_versions`] (KAFKA-18672, trunk and 4.0, February 2025):
/// `CoordinatorRecordSerde.deserialize` checks the value version against the schema before
/// reading and throws `UnknownRecordVersionException` ("Found an unknown record version V
/// for T type"), which `kafka-dump-log` prints as `Error at offset O, skipping. <message>`
/// and the loader wraps.
#[test]

fn an_unsupported_value_version_has_kafkas_message() {
    let lines = dump_offsets(&bad_versions());
    assert_eq!(
        lines[0].0,
        "Error at offset 0, skipping. Found an unknown record version 1 for 11 type"
    );
    assert_eq!(
        lines[1].0,
        "Error at offset 1, skipping. Found an unknown record version -1 for 23 type"
    );
    let l = load(&bad_versions());
    let f = l.of(Kind::GroupLoadFailure);
    assert!(
        f[0].message
            .contains("Found an unknown record version 1 for 11 type"),
        "{}",
        f[0].message
    );
}

/// `GroupCoordinatorRecordSerdeTest.testDeserializeWithKeyEmptyBuffer`,
/// `…WithValueEmptyBuffer`, `…WithInvalidKeyBytes` and `…WithInvalidValueBytes` on the
/// streams and share types (`CoordinatorRecordSerde.readVersion` / `readMessage`; the key
/// is read with the record type as its version): each throws a plain `RuntimeException`
/// and `CoordinatorLoaderImplTest.testDeserializationErrorFailsTheLoading` has the load
/// fail on it. The dump prints `Error at offset O, skipping. <message>`.
#[test]
fn records_that_do_not_deserialize_fail_the_load_with_kafkas_message() {
    let mut log = GroupLog::new();
    log.raw(vec![(vec![0], Some(vec![0, 0]))]);
    log.raw(vec![(vec![0, 17, 0, 2, b's', b't'], Some(vec![]))]);
    log.raw(vec![(vec![0, 17], Some(vec![0, 0]))]);
    log.raw(vec![(vec![0, 11, 0, 2, b's', b'g'], Some(vec![0, 0]))]);
    let lines = dump_offsets(&log);
    let want = [
        "Error at offset 0, skipping. Could not read version from key's buffer.",
        "Error at offset 1, skipping. Could not read version from value's buffer.",
        "Error at offset 2, skipping. Could not read record with version 17 from key's buffer due to",
        "Error at offset 3, skipping. Could not read record with version 0 from value's buffer due to",
    ];
    for (line, want) in lines.iter().zip(want) {
        assert!(line.0.starts_with(want), "{line:?} vs {want}");
        assert_eq!(line.1, None);
    }
    let l = load(&log);
    let f = l.of(Kind::GroupLoadFailure);
    assert_eq!(f.len(), 1, "{:#?}", l.findings);
    assert_eq!(
        (f[0].offset, &f[0].evidence["rejected_records"]),
        (Some(0), &json!(4))
    );
    assert_eq!(
        l.of(Kind::OffsetsRecordUndecodable).len(),
        4,
        "{:#?}",
        l.findings
    );
    assert!(l.groups.is_empty(), "{:#?}", l.groups);
}

/// A share group's member tombstone and group tombstone print `<DELETE>` (the dump's
/// `testOffsetsMessageParser` tombstone case), keyed by their type.
#[test]
fn share_and_streams_tombstones_dump_as_delete() {
    let mut log = GroupLog::new();
    log.batch(vec![tomb(14, gm("sg", "m1")), tomb(23, g("st"))]);
    let lines = dump_offsets(&log);
    assert_eq!(
        lines[0].0,
        r#"{"type":"14","data":{"groupId":"sg","memberId":"m1"}}"#
    );
    assert_eq!(lines[1].0, r#"{"type":"23","data":{"groupId":"st"}}"#);
    assert!(
        lines.iter().all(|l| l.1.as_deref() == Some("<DELETE>")),
        "{lines:?}"
    );
}
