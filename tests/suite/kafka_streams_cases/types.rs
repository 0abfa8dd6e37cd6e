//! One group id, two group types: a record of another type than the group the id holds,
//! and a classic group migrated to a streams group (`maybeDeleteEmptyClassicGroup`), with
//! and without the classic group's tombstone left by the cleaner (KAFKA-20254).

use super::*;
use klogscan::finding::Severity;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::consumer_group;

/// A live streams group `id`: topology, one member (`w1`) holding tasks 0 and 1, epoch 1.
fn streams(id: &str) -> Vec<Spec> {
    vec![
        topology(id, 1, &["input"], &[]),
        member(id, "w1", "p1"),
        meta(id, 1),
        target(id, "w1", &[0, 1]),
        target_epoch(id, 1),
        current(id, "w1", (1, 0, STABLE), &[0, 1], &[]),
    ]
}

/// `GroupMetadataManager.getOrMaybeCreatePersistedConsumerGroup`, `…StreamsGroup` and
/// `…ShareGroup` throw `IllegalStateException` ("Group … is not a … group") for a group of
/// another type, whatever the record — value or tombstone: only a *missing* group raises the
/// `GroupIdNotFoundException` a tombstone's replay catches. So each of these fails the load
/// at its record: a consumer group member value under a streams group's id; a streams
/// current assignment tombstone under a consumer group's id; a share group metadata
/// tombstone under a streams group's id. klogscan: one `group_load_failure` (error) at the
/// record, naming the group's type and the record's.
#[test]
fn a_record_or_tombstone_of_another_group_type_fails_the_load() {
    let consumer_member = (
        5,
        gm(APP, "c1"),
        Some((
            0,
            json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["input"],
            "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform"}),
        )),
    );
    let cases: [(Vec<Spec>, Spec, &str, &str); 3] = [
        (streams(APP), consumer_member, "streams", "consumer"),
        (vec![], tomb(22, gm(APP, "m1")), "consumer", "streams"),
        (streams(APP), tomb(11, g(APP)), "streams", "share"),
    ];
    for (first, record, existing, of_record) in cases {
        let mut log = GroupLog::new();
        if first.is_empty() {
            consumer_group(&mut log, APP);
        } else {
            log.batch(first);
        }
        let at = log.batches.iter().map(Vec::len).sum::<usize>() as i64;
        log.batch(vec![record]);
        let l = load(&log);
        let f = l.load_failure();
        assert_eq!(
            (f.severity, f.offset),
            (Severity::Error, Some(at)),
            "{of_record}"
        );
        assert_eq!(f.evidence["existing_group_type"], existing);
        assert_eq!(f.evidence["record_group_type"], of_record);
        assert_eq!(f.evidence["load_fails"], true);
    }
}

/// Near miss: `replay(GroupMetadataKey, null)` removes the group under the id whatever its
/// type (`removeGroup`, no type check): a classic group's tombstone under a streams group's
/// id does not fail the load, and the streams group is gone after it. klogscan: no load
/// failure, the group not live.
#[test]
fn a_classic_tombstone_removes_a_streams_group_without_failing_the_load() {
    let mut log = GroupLog::new();
    log.batch(streams(APP));
    log.batch(vec![(2, json!({"group": APP}), None)]);
    let l = load(&log);
    assert!(l.of(Kind::GroupLoadFailure).is_empty(), "{:#?}", l.findings);
    assert!(
        l.findings.iter().all(|f| f.evidence["load_fails"] != true),
        "{:#?}",
        l.findings
    );
    assert!(!l.is_live(APP));
}

const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;

/// A classic consumer group `APP` with offsets on `input`-0 and -1, emptied (generation 4,
/// no member); then the application moves to the streams protocol: its first
/// `streamsGroupHeartbeat` finds the empty classic group (`getOrCreateStreamsGroup` →
/// `maybeDeleteEmptyClassicGroup`) and writes its tombstone before the new streams group's
/// records; the streams group then commits `input`-0 only (partition 1 gets no new data).
/// The commits keep their group id across the migration (`OffsetMetadataManager` keys them
/// by group id).
fn migrated_to_streams() -> GroupLog {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit(APP, ("input", 0), 40, T0),
        commit(APP, ("input", 1), 30, T0),
    ]);
    log.batch(vec![(
        2,
        json!({"group": APP}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 4, "protocol": null,
            "leader": null, "currentStateTimestamp": T0, "members": []}),
        )),
    )]);
    log.batch([vec![(2, json!({"group": APP}), None)], streams(APP)].concat());
    log.batch(vec![commit(APP, ("input", 0), 55, T0 + 60_000)]);
    log
}

/// The migrated group, as a load lists it: a live streams group with its member and both
/// offsets (the classic group's `input`-1 kept).
fn assert_migrated(l: &Loaded) {
    let app = l.live(APP);
    assert_eq!((app.group_type, app.epoch), (GroupType::Streams, 1));
    assert_eq!(app.members.keys().collect::<Vec<_>>(), ["w1"]);
    let mut offsets: Vec<_> = (app.offsets.iter())
        .map(|c| (c.partition, c.offset))
        .collect();
    offsets.sort();
    assert_eq!(offsets, [(0, 55), (1, 30)]);
}

/// `GroupMetadataManager.getOrCreateStreamsGroup` (an empty classic group is converted:
/// its tombstone, then the streams group's records) and `replay(GroupMetadataKey, null)`:
/// the load replays the classic group's offsets (a simple classic group would hold them if
/// no group held the id: `OffsetMetadataManager.replay`), removes the classic group at its
/// tombstone, then creates the streams group. The same after the cleaner while it keeps
/// the tombstone (`delete.retention.ms` not passed; PR #21642's first variant). klogscan:
/// no finding, the streams group listed with both offsets.
#[test]
fn a_classic_group_migrated_to_streams_loads_while_its_tombstone_is_kept() {
    for log in [
        migrated_to_streams(),
        migrated_to_streams().compacted(false),
    ] {
        let l = load(&log);
        l.assert_clean();
        assert_migrated(&l);
    }
}

/// The cleaner past the tombstone's `delete.retention.ms` (PR #21642's second variant):
/// only `input`-1's classic-era commit is left before the streams group's records. The
/// load's offset replay creates a simple classic group for it, and the streams group's first
/// record meets that group. In the 2025-10 tree `getOrMaybeCreatePersistedStreamsGroup` has
/// no case for a simple classic group (unlike `getOrMaybeCreatePersistedConsumerGroup`) and
/// throws; KAFKA-20254 (apache/kafka PR #21641, March 2026, trunk and 4.2) gives it the
/// consumer path's rule — a simple classic group has no record of its own and is replaced —
/// and the group loads as in [`a_classic_group_migrated_to_streams_loads_while_its_tombstone_is_kept`].
/// What klogscan must say: the streams group listed with both offsets, and at most a load
/// failure marked as one of the releases before KAFKA-20254 (as `load_fails_in` marks
/// KAFKA-19862), not of every 4.x release.
#[test]
fn a_migrated_group_whose_tombstone_was_cleaned_loads_since_kafka_20254() {
    let l = load(&migrated_to_streams().compacted(true));
    for f in l.of(Kind::GroupLoadFailure) {
        let fails_in = f.evidence.get("load_fails_in").and_then(Value::as_str);
        assert!(
            !matches!(fails_in, None | Some("kafka_4") | Some("kafka_3_and_4")),
            "a load failure for every 4.x release: {f:#?}"
        );
    }
    assert_migrated(&l);
}

/// What the 2025-10 tree does with the same bytes, asserted: the streams group's first
/// record after the simple classic group fails the load — the one fact of the case
/// klogscan already gets right for the releases before KAFKA-20254.
#[test]
fn the_cleaned_migration_fails_the_load_before_kafka_20254() {
    let l = load(&migrated_to_streams().compacted(true));
    let f = l.load_failure();
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["existing_group_type"], "classic");
    assert_eq!(f.evidence["existing_is_simple"], true);
    assert_eq!(f.evidence["record_group_type"], "streams");
}
