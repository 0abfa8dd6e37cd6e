//! False alarms the first Streams audit (`kafka_quiet_streams_cases`) left out: a KIP-1071
//! `streams` group's records in `__consumer_offsets` through its whole life (the 2025-10
//! Kafka tree: `group-coordinator/src/main/resources/common/message/StreamsGroup*.json`,
//! replayed by `GroupMetadataManager.replay(StreamsGroup*Key, …)`), a windowed changelog
//! (`cleanup.policy=compact,delete`, `WindowedChangelogTopicConfig`) after retention and the
//! cleaner, and a changelog's follower copy on another broker, behind its leader.
//!
//! `scan` (plain and `--deep`) and `verify` must report nothing at warning or above, and
//! `verify` must predict a clean start. Each healthy case has a twin that differs by one
//! fact and must be reported. A case where klogscan is loud on healthy data is
//! `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
#![cfg(feature = "testkit")]

use crate::common::quiet::{assert_clean_start, assert_silent, lines, scan_dir, verify_dir};
use crate::kafka_quiet_streams_cases::{CoordRecord, commit, coordinator_batch, offsets_partition};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::groups::{GroupState, GroupType, GroupsOptions, list_groups};
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_TOPIC};
use klogscan::results::ScanReport;
use klogscan::testkit::groups::record as groups_record;
use klogscan::testkit::metadata::encode;
use klogscan::testkit::{Batch, LogDirBuilder, LogDirManifest, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};
use std::path::Path;

const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;
/// The application (`application.id`, the streams group's id).
pub(crate) const APP: &str = "clicks";
/// The application's input topic.
const INPUT: &str = "page-views";
/// A windowed store's changelog (`<application.id>-<store>-changelog`).
const WINDOWED: &str = "clicks-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog";

/// What `scan` (plain, `--deep`) and `verify` say of `dir`.
struct Checked {
    scan: ScanReport,
    deep: ScanReport,
}

fn check(dir: &Path) -> Checked {
    Checked {
        scan: scan_dir(dir, false),
        deep: scan_dir(dir, true),
    }
}

/// Quiet: nothing loud from the three, a clean start for every partition of `manifest`
/// (written in `dir`) but a KRaft metadata log: `KafkaMetadataLog.apply` always loads it with
/// `lastShutdownClean = false` (its recovery must still find nothing to cut).
fn assert_quiet(dir: &Path, manifest: &LogDirManifest) {
    let c = check(dir);
    let mut v = verify_dir(dir);
    assert_silent(&c.scan, &c.deep, &v);
    let meta = |t: &str| t == "__cluster_metadata";
    for p in v.partitions.iter().filter(|p| meta(&p.topic)) {
        let pr = &p.prediction;
        assert_eq!(pr.clean_shutdown, Some(false), "{pr:#?}");
        assert!(
            pr.truncation.is_none() && pr.load_failure.is_none(),
            "{pr:#?}"
        );
    }
    v.partitions.retain(|p| !meta(&p.topic));
    let mut m = manifest.clone();
    m.partitions.retain(|p| !meta(&p.topic));
    assert_clean_start(&v, &m);
}

/// The plain scan's finding of `kind` at `severity` or above on `topic`.
fn reported<'a>(r: &'a ScanReport, kind: Kind, severity: Severity, topic: &str) -> &'a Finding {
    let hit =
        (r.findings.iter()).find(|f| f.kind == kind && f.severity >= severity && f.topic == topic);
    hit.unwrap_or_else(|| {
        panic!(
            "no {kind} >= {} on {topic}: {:#?}",
            severity.as_str(),
            lines(&r.findings)
        )
    })
}

// ----- the streams group --------------------------------------------------------------------

pub(crate) fn g() -> Value {
    json!({"groupId": APP})
}
fn gm(m: &str) -> Value {
    json!({"groupId": APP, "memberId": m})
}
fn tasks(p: &[i32]) -> Value {
    if p.is_empty() {
        json!([])
    } else {
        json!([{"subtopologyId": "0", "partitions": p}])
    }
}

/// `StreamsGroupTopologyValue` v0: one subtopology reading [`INPUT`], one windowed store.
fn topology() -> CoordRecord {
    let changelog = json!({"name": WINDOWED, "partitions": 2, "replicationFactor": 3,
        "topicConfigs": [{"key": "cleanup.policy", "value": "compact,delete"}]});
    let sub = json!({"subtopologyId": "0", "sourceTopics": [INPUT], "sourceTopicRegex": [],
        "stateChangelogTopics": [changelog], "repartitionSinkTopics": [],
        "repartitionSourceTopics": [], "copartitionGroups": []});
    (
        23,
        g(),
        Some((0, json!({"epoch": 1, "subtopologies": [sub]}))),
    )
}
/// `StreamsGroupMemberMetadataValue` v0 of member `m` (one process per member).
fn member(m: &str) -> CoordRecord {
    let v = json!({"clientId": format!("{APP}-{m}-StreamThread-1"), "clientHost": "/10.0.0.1",
        "rebalanceTimeoutMs": 300000, "topologyEpoch": 1, "processId": format!("process-{m}"),
        "userEndpoint": null, "clientTags": []});
    (19, gm(m), Some((0, v)))
}
/// `StreamsGroupMetadataValue` v0 of group epoch `e`.
fn metadata(e: i32) -> CoordRecord {
    let v = json!({"epoch": e, "metadataHash": 77, "validatedTopologyEpoch": 1});
    (17, g(), Some((0, v)))
}
fn target(m: &str, active: &[i32], standby: &[i32]) -> CoordRecord {
    let v =
        json!({"activeTasks": tasks(active), "standbyTasks": tasks(standby), "warmupTasks": []});
    (21, gm(m), Some((0, v)))
}
fn target_epoch(e: i32) -> CoordRecord {
    (20, g(), Some((0, json!({"assignmentEpoch": e}))))
}
/// `StreamsGroupCurrentMemberAssignmentValue` (state 1: `MemberState.STABLE`).
fn current(m: &str, (e, prev): (i32, i32), active: &[i32], standby: &[i32]) -> CoordRecord {
    let v = json!({"memberEpoch": e, "previousMemberEpoch": prev, "state": 1,
        "activeTasks": tasks(active), "standbyTasks": tasks(standby), "warmupTasks": [],
        "activeTasksPendingRevocation": [], "standbyTasksPendingRevocation": [],
        "warmupTasksPendingRevocation": []});
    (22, gm(m), Some((0, v)))
}
pub(crate) fn tomb(t: i16, key: Value) -> CoordRecord {
    (t, key, None)
}

/// `GroupMetadataManager.removeStreamsMember`: current assignment, target assignment, then
/// member metadata tombstones (`leave_order` writes them in another order).
fn leave(m: &str, leave_order: [i16; 3]) -> Vec<CoordRecord> {
    leave_order.iter().map(|&t| tomb(t, gm(m))).collect()
}
pub(crate) const LEAVE: [i16; 3] = [22, 21, 19];

/// The group's life, one coordinator batch per write: `a` joins (epoch 1: topology, member,
/// epoch, target, target epoch, current — the order of `streamsGroupHeartbeat`), `b` joins
/// (epoch 2, standbys), both reconcile; offsets committed; `b` leaves (`leave_b`) and `a`
/// gets both tasks (epoch 3); `a` leaves (epoch 4); `Admin.deleteStreamsGroups`:
/// `OffsetMetadataManager.deleteAllOffsets` then `StreamsGroup.createGroupTombstoneRecords`
/// (no member left: target epoch, group epoch, topology).
pub(crate) fn group_life(leave_b: [i16; 3]) -> Vec<Vec<CoordRecord>> {
    vec![
        vec![
            topology(),
            member("a"),
            metadata(1),
            target("a", &[0, 1], &[]),
            target_epoch(1),
            current("a", (1, 0), &[0, 1], &[]),
        ],
        vec![
            member("b"),
            metadata(2),
            target("a", &[0], &[1]),
            target("b", &[1], &[0]),
            target_epoch(2),
        ],
        vec![current("a", (2, 1), &[0], &[1])],
        vec![current("b", (2, 0), &[1], &[0])],
        vec![
            commit(APP, (INPUT, 0), 500, 0, T0 + 60_000),
            commit(APP, (INPUT, 1), 480, 0, T0 + 60_000),
        ],
        [leave("b", leave_b), vec![metadata(3)]].concat(),
        vec![
            target("a", &[0, 1], &[]),
            target_epoch(3),
            current("a", (3, 2), &[0, 1], &[]),
        ],
        [leave("a", LEAVE), vec![metadata(4)]].concat(),
        vec![
            tomb(1, json!({"group": APP, "topic": INPUT, "partition": 0})),
            tomb(1, json!({"group": APP, "topic": INPUT, "partition": 1})),
        ],
        vec![tomb(20, g()), tomb(17, g()), tomb(23, g())],
    ]
}

pub(crate) fn offsets_log(batches: Vec<Vec<CoordRecord>>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__consumer_offsets", offsets_partition(APP)).start_time(T0);
    for (i, b) in batches.into_iter().enumerate() {
        p.append(coordinator_batch(
            Producer::PLAIN,
            T0 + i as i64 * 10_000,
            b,
        ));
    }
    p
}

/// `GroupMetadataManager.replay` for `StreamsGroupTopologyKey`, `StreamsGroupMemberMetadataKey`,
/// `StreamsGroupMetadataKey`, `StreamsGroupTargetAssignmentMemberKey`,
/// `StreamsGroupTargetAssignmentMetadataKey`, `StreamsGroupCurrentMemberAssignmentKey`
/// (2025-10 tree), with the writes of `streamsGroupHeartbeat`, `removeStreamsMember` and
/// `StreamsGroup.createGroupTombstoneRecords`: a streams group created, grown, shrunk and
/// deleted, every tombstone in the order Kafka writes it — the load replays it all.
#[test]
fn a_streams_group_s_life_and_deletion_is_quiet() {
    // Cut after both members reconciled, after both left, and after the deletion.
    for (cut, state, members) in [
        (5, GroupState::Live, 2),
        (8, GroupState::Live, 0),
        (10, GroupState::Deleted, 0),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut life = group_life(LEAVE);
        life.truncate(cut);
        let m = (LogDirBuilder::new(1).partition(offsets_log(life)))
            .write(dir.path())
            .unwrap();
        assert_quiet(dir.path(), &m);
        let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
        let opts = GroupsOptions {
            include_deleted: true,
            ..Default::default()
        };
        let groups = list_groups(&inv, &opts);
        let g = (groups.iter()).find(|g| g.group_id == APP).unwrap();
        assert_eq!(g.group_type, GroupType::Streams, "cut {cut}");
        assert_eq!((g.state, g.members.len()), (state, members), "cut {cut}");
    }
}

/// [`offsets_log`] after `LogCleaner` cleaned all but the active segment (the last batch):
/// in the cleaned part only each key's last record is kept (`MemoryRecords.filterTo`, a batch
/// keeps its offsets; a batch left empty is dropped), tombstones too unless `past_horizon`
/// (a second cleaning after `delete.retention.ms`, `LogCleaner.shouldRetainRecord`).
fn cleaned_offsets_log(mut batches: Vec<Vec<CoordRecord>>, past_horizon: bool) -> PartitionBuilder {
    let active = batches.pop().unwrap();
    let encoded: Vec<Vec<_>> = (batches.into_iter())
        .map(|b| {
            (b.into_iter())
                .map(|(t, k, v)| groups_record(t, k, v))
                .collect()
        })
        .collect();
    let mut last = std::collections::HashMap::new();
    for (i, b) in encoded.iter().enumerate() {
        for (j, (k, _)) in b.iter().enumerate() {
            last.insert(k.clone(), (i, j));
        }
    }
    let mut p = PartitionBuilder::new("__consumer_offsets", offsets_partition(APP)).start_time(T0);
    for (i, b) in encoded.iter().enumerate() {
        let ts = T0 + i as i64 * 10_000;
        let keep = |&(j, (k, v)): &(usize, &(Vec<u8>, Option<Vec<u8>>))| {
            last[k] == (i, j) && (v.is_some() || !past_horizon)
        };
        let kept: Vec<_> = b.iter().enumerate().filter(keep).collect();
        if kept.is_empty() {
            p.skip_offsets(b.len() as i64);
            continue;
        }
        let mut batch = Batch::new(Producer::PLAIN).at(ts);
        for (j, (k, v)) in kept {
            let r = match v {
                Some(v) => Rec::kv(k, v),
                None => Rec::tombstone(k),
            };
            batch = batch.record(r.at(ts).offset_delta(j as i32));
        }
        let n = b.len() as i32;
        p.append(batch.tweak(move |s| {
            s.base_sequence = -1;
            s.overrides.last_offset_delta = Some(n - 1);
        }));
    }
    p.roll();
    let ts = T0 + encoded.len() as i64 * 10_000;
    p.append(coordinator_batch(Producer::PLAIN, ts, active));
    p
}

/// The group's partition of `__consumer_offsets` cleaned (an internal compacted topic): the
/// tombstones of members the cleaner already removed, or of a whole group, replay against
/// nothing — `replay(StreamsGroupCurrentMemberAssignmentKey, null)` and
/// `replay(StreamsGroupMemberMetadataKey, null)` ignore an unknown member, every streams
/// `replay` ignores a tombstone of an unknown group (`GroupIdNotFoundException` caught), and
/// a target assignment epoch replayed before the group epoch that created it is taken as it
/// is. Cut after both members left (the group lives on, empty) and after the deletion;
/// tombstones kept or past their horizon.
#[test]
fn a_cleaned_streams_group_partition_is_quiet() {
    for cut in [8, 10] {
        for past_horizon in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut life = group_life(LEAVE);
            life.truncate(cut);
            let p = cleaned_offsets_log(life, past_horizon);
            let m = LogDirBuilder::new(1)
                .partition(p)
                .write(dir.path())
                .unwrap();
            assert_quiet(dir.path(), &m);
        }
    }
}

/// Twin: member `b`'s metadata tombstoned before its current assignment. Kafka's
/// `replay(StreamsGroupMemberMetadataKey, null)` throws ("Received a tombstone record to
/// delete member b but did not receive StreamsGroupCurrentMemberAssignmentValue
/// tombstone"): the load fails — `group_tombstones_incomplete`, an error.
#[test]
fn twin_a_member_metadata_tombstone_before_its_assignment_s_fails_the_load() {
    let dir = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(offsets_log(group_life([19, 22, 21])))
        .write(dir.path())
        .unwrap();
    let r = check(dir.path()).scan;
    let f = reported(
        &r,
        Kind::GroupTombstonesIncomplete,
        Severity::Error,
        "__consumer_offsets",
    );
    assert_eq!(f.evidence["member_id"], "b", "{f:#?}");
}

/// Twin: the second `StreamsGroupMetadataValue` at version 1 (`validVersions` is "0"):
/// `CoordinatorRecordSerde.deserialize` throws `UnknownRecordVersionException`, which
/// `CoordinatorLoaderImpl.load` does not skip (only an unknown record *type* is): the load
/// fails.
#[test]
fn twin_a_streams_group_value_of_an_unknown_version_fails_the_load() {
    let dir = tempfile::tempdir().unwrap();
    // The encoder writes version 0 only: the version is patched in the value's bytes.
    let life = group_life(LEAVE);
    let mut p = PartitionBuilder::new("__consumer_offsets", offsets_partition(APP)).start_time(T0);
    for (i, b) in life.into_iter().enumerate() {
        let mut batch = coordinator_batch(Producer::PLAIN, T0 + i as i64 * 10_000, b);
        if i == 1 {
            batch = batch.tweak(|s| {
                if let Some(v) = s.records[1].value.as_mut() {
                    v[1] = 1;
                }
            });
        }
        p.append(batch);
    }
    LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let r = check(dir.path()).scan;
    let loud: Vec<_> = (r.findings.iter())
        .filter(|f| f.severity >= Severity::Error && f.topic == "__consumer_offsets")
        .collect();
    assert!(
        loud.iter().any(|f| matches!(
            f.kind,
            Kind::OffsetsRecordUndecodable | Kind::GroupLoadFailure
        )),
        "{:#?}",
        lines(&r.findings)
    );
}

// ----- the windowed changelog -----------------------------------------------------------------

/// The changelog's idempotent producer (one per stream thread, at-least-once).
fn thread() -> Producer {
    Producer::idempotent(9000, 0)
}

/// A windowed store's key (`WindowKeySchema.toStoreKeyBinary`: key, window start,
/// sequence number).
fn wkey(k: &str, window: i64) -> Vec<u8> {
    [k.as_bytes(), &window.to_be_bytes(), &0i32.to_be_bytes()].concat()
}

/// What the cleaner kept of a batch of `total` records (base sequence `seq`): the records at
/// offset deltas `keep`, the batch's last offset delta and base sequence unchanged
/// (`MemoryRecords.filterTo`).
fn kept(seq: i32, total: i32, keep: &[i32]) -> Batch {
    let mut b = Batch::new(thread()).sequence(seq);
    for &d in keep {
        let r = Rec::kv(wkey(&format!("user-{d}"), T0), format!("{d}")).offset_delta(d);
        b = b.record(r);
    }
    b.tweak(move |s| s.overrides.last_offset_delta = Some(total - 1))
}

/// `WINDOWED`-0 after retention and one cleaning: retention deleted the segments below 400
/// (`UnifiedLog.deleteOldSegments` → `maybeIncrementLogStartOffset`, checkpointed), the
/// cleaner kept two records of the batch at 400–403 (sequences 40–43), dropped the batch at
/// 404–407 (44–47: every key superseded) and kept 408–411 whole; the active segment holds
/// 412–415 (52–55), which the cleaner never touches. Offset and sequence gaps, no loss.
fn windowed_changelog() -> PartitionBuilder {
    let mut c = PartitionBuilder::new(WINDOWED, 0)
        .start_time(T0)
        .leader_epoch(2)
        .start_offset(400);
    c.append(kept(40, 4, &[1, 3]));
    c.skip_offsets(4);
    c.append(Batch::new(thread()).sequence(48).records(4));
    c.roll();
    c.append(Batch::new(thread()).sequence(52).records(4));
    c
}

/// A KRaft metadata log setting `cleanup.policy` of `topic` (`ConfigRecord`).
fn policy(topic: &str, value: &str) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__cluster_metadata", 0).start_time(T0);
    let r = MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: topic.into(),
        name: "cleanup.policy".into(),
        value: Some(value.into()),
    };
    p.append(Batch::new(Producer::PLAIN).record(Rec::value(encode(&r))));
    p
}

fn changelog_dir(dir: &Path, value: &str) -> LogDirManifest {
    (LogDirBuilder::new(1).cluster_id("c1"))
        .partition(windowed_changelog())
        .partition(policy(WINDOWED, value))
        .log_start_offset(WINDOWED, 0, 400)
        .write(dir)
        .unwrap()
}

/// `WindowedChangelogTopicConfig` creates a windowed store's changelog with
/// `cleanup.policy=compact,delete` (`InternalTopicManager.makeReady`): retention
/// (`UnifiedLog.deleteRetentionMsBreachedSegments`) moves its log start, and the cleaner
/// (`LogCleaner.cleanSegments`, `MemoryRecords.filterTo`) leaves offset and sequence gaps
/// (`ProducerStateManager` never checks the sequences of cleaned data). The policy is
/// declared by the metadata log (`ConfigRecord`); the same with the cleaner's
/// `cleaner-offset-checkpoint` entry as well.
#[test]
fn a_windowed_changelog_after_retention_and_the_cleaner_is_quiet() {
    for checkpoint in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let m = changelog_dir(dir.path(), "compact,delete");
        if checkpoint {
            let text = format!("0\n1\n{WINDOWED} 0 412\n");
            std::fs::write(dir.path().join("cleaner-offset-checkpoint"), text).unwrap();
        }
        assert_quiet(dir.path(), &m);
        let r = scan_dir(dir.path(), false);
        let p = (r.partitions.iter()).find(|p| p.topic == WINDOWED).unwrap();
        assert_eq!(p.compacted, Some(true), "checkpoint {checkpoint}");
    }
}

/// Twin: `cleanup.policy=delete` alone. Nothing but retention removes data from such a log,
/// and only whole segments from its start (`UnifiedLog.deleteOldSegments`): the sequence gap
/// 43 → 48 inside the log is a loss (the leader's `ProducerAppendInfo.checkSequence` would
/// have refused 48 after 43 with `OutOfOrderSequenceException`) — `sequence_gap`, an error.
#[test]
fn twin_the_same_gaps_under_cleanup_policy_delete_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    changelog_dir(dir.path(), "delete");
    let r = scan_dir(dir.path(), false);
    let f = reported(&r, Kind::SequenceGap, Severity::Error, WINDOWED);
    assert_eq!(f.evidence["compacted"], false, "{f:#?}");
}

// ----- a follower's copy of the changelog -------------------------------------------------------

/// `WINDOWED`-1 as its leader wrote it: `n` batches of 3 records from the thread's producer,
/// leader epoch 5; the batch at `odd` (if any) with other values.
fn replica(n: i32, odd: Option<i32>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(WINDOWED, 1)
        .start_time(T0)
        .leader_epoch(5);
    for i in 0..n {
        let v = if Some(i) == odd { "other" } else { "count" };
        let b = Batch::new(thread()).sequence(i * 3);
        let b = (0..3).fold(b, |b, j| {
            b.record(Rec::kv(
                wkey(&format!("user-{j}"), T0 + i as i64),
                format!("{v}-{i}"),
            ))
        });
        p.append(b);
        if i == 4 {
            p.roll();
        }
    }
    p
}

/// Broker 1 (the leader) and broker 2 (a follower) of cluster c1 under `root`.
fn two_copies(
    root: &Path,
    leader: PartitionBuilder,
    follower: PartitionBuilder,
) -> [LogDirManifest; 2] {
    let w = |id: i32, p: PartitionBuilder| {
        (LogDirBuilder::new(id).cluster_id("c1").partition(p))
            .write(&root.join(format!("broker-{id}")))
            .unwrap()
    };
    [w(1, leader), w(2, follower)]
}

/// A follower copies its leader's batches byte for byte (`ReplicaFetcherThread.processPartitionData`
/// → `UnifiedLog.appendAsFollower`) and may be behind (a fetch in flight,
/// `replica.lag.time.max.ms`); a standby task restoring from the changelog reads the leader.
/// The two copies agree on their common range: quiet across both dirs.
#[test]
fn a_follower_copy_behind_its_leader_is_quiet() {
    let root = tempfile::tempdir().unwrap();
    let [m1, m2] = two_copies(root.path(), replica(10, None), replica(7, None));
    let c = check(root.path());
    for (id, m) in [(1, &m1), (2, &m2)] {
        let v = verify_dir(&root.path().join(format!("broker-{id}")));
        assert_silent(&c.scan, &c.deep, &v);
        assert_clean_start(&v, m);
    }
    assert_eq!(c.scan.partitions.len(), 2);
}

/// Twin: the follower's batch at offset 18 holds other records than the leader's. Copies of
/// one partition agree up to the follower's end (`Partition.appendRecordsToFollowerOrFutureReplica`
/// appends only what the leader sent; `AbstractFetcherThread.truncateOnFetchResponse` removes a
/// diverging tail before): `replica_divergence` at 18.
#[test]
fn twin_a_follower_copy_diverging_is_reported() {
    let root = tempfile::tempdir().unwrap();
    two_copies(root.path(), replica(10, None), replica(7, Some(6)));
    let r = check(root.path()).scan;
    let f = reported(&r, Kind::ReplicaDivergence, Severity::Warning, WINDOWED);
    assert_eq!(f.offset, Some(18), "{f:#?}");
}
