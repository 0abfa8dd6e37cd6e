//! One classic group's `__consumer_offsets` history from the 0.9 coordinator to the 4.0
//! one: `GroupMetadataValue` v0 → v3 and `OffsetCommitValue` v1 (with `expireTimestamp`) →
//! v3 (with `leaderEpoch`), each written by the broker of its era in its message format
//! (magic 0 for 0.8.2/0.9, magic 1 for 0.10, v2 batches since), then the online upgrade to
//! the consumer protocol (KIP-848): the classic group's tombstone and the consumer group's
//! records in one batch, a new member joining, and commits on.

use super::check;
use base64::Engine as _;
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::Kind;
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, Codec, Legacy, LogDirBuilder, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};

const G: &str = "reports";
const M1: &str = "consumer-reports-1-3a7d2a4e-5c1b-4f2e-9a55-0c7e1f2d3b4a";
const M2: &str = "Zq3s0rYwQ2mJ8vKc1pLx7A";
const T2016: i64 = 1_451_606_400_000;
const YEAR: i64 = 365 * 86_400_000;

type CoordRecord = (i16, Value, Option<(i16, Value)>);

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// `ConsumerProtocolSubscription` v0 of `orders`, and `ConsumerProtocolAssignment` v0 of
/// `orders` 0 and 1.
fn protocol_bytes() -> (String, String) {
    let mut s = 0i16.to_be_bytes().to_vec();
    s.extend_from_slice(&1i32.to_be_bytes());
    s.extend_from_slice(&6i16.to_be_bytes());
    s.extend_from_slice(b"orders");
    s.extend_from_slice(&(-1i32).to_be_bytes());
    let mut a = 0i16.to_be_bytes().to_vec();
    a.extend_from_slice(&1i32.to_be_bytes());
    a.extend_from_slice(&6i16.to_be_bytes());
    a.extend_from_slice(b"orders");
    a.extend_from_slice(&2i32.to_be_bytes());
    a.extend_from_slice(&0i32.to_be_bytes());
    a.extend_from_slice(&1i32.to_be_bytes());
    a.extend_from_slice(&(-1i32).to_be_bytes());
    (b64(&s), b64(&a))
}

/// The classic group, stable with `M1` at `generation`, as `GroupMetadataValue` `version`
/// holds it (`rebalanceTimeout` from v1, `currentStateTimestamp` from v2, `groupInstanceId`
/// from v3: `GroupMetadataManager.groupMetadataValue` in each era).
fn classic(version: i16, generation: i32, ts: i64) -> CoordRecord {
    let (sub, asg) = protocol_bytes();
    let mut member = json!({"memberId": M1, "clientId": "consumer-reports-1",
        "clientHost": "/10.1.0.4", "sessionTimeout": 30000,
        "subscription": sub, "assignment": asg});
    if version >= 1 {
        member["rebalanceTimeout"] = json!(300000);
    }
    if version >= 3 {
        member["groupInstanceId"] = Value::Null;
    }
    let mut v = json!({"protocolType": "consumer", "generation": generation,
        "protocol": "range", "leader": M1, "members": [member]});
    if version >= 2 {
        v["currentStateTimestamp"] = json!(ts);
    }
    (2, json!({"group": G}), Some((version, v)))
}

/// An offset commit of `orders`-`p` as `OffsetCommitValue` `version` holds it: v1 with the
/// expire timestamp the 0.9–1.x coordinator computed (commit + `offsets.retention.minutes`),
/// v2 without it (2.0, KIP-211), v3 with the leader epoch (2.1+).
fn commit(version: i16, p: i32, offset: i64, ts: i64) -> CoordRecord {
    let v = match version {
        1 => json!({"offset": offset, "metadata": "", "commitTimestamp": ts,
            "expireTimestamp": ts + 86_400_000}),
        2 => json!({"offset": offset, "metadata": "", "commitTimestamp": ts}),
        _ => json!({"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": ts}),
    };
    let k = json!({"group": G, "topic": "orders", "partition": p});
    (1, k, Some((version, v)))
}

fn gm(m: &str) -> Value {
    json!({"groupId": G, "memberId": m})
}

fn parts(ps: &[i32]) -> Value {
    json!([{"topicId": uuid_text(&topic_id_for("orders")), "partitions": ps}])
}

/// A consumer group member's records at `epoch` holding `ps`: subscription (with the classic
/// protocol's metadata for a converted member), target, current assignment.
fn member(m: &str, epoch: i32, prev: i32, ps: &[i32], classic_meta: bool) -> Vec<CoordRecord> {
    let mut meta = json!({"instanceId": null, "rackId": null, "clientId": "consumer-reports-1",
        "clientHost": "/10.1.0.4", "subscribedTopicNames": ["orders"],
        "subscribedTopicRegex": null, "rebalanceTimeoutMs": 300000, "serverAssignor": null});
    if classic_meta {
        let (sub, _) = protocol_bytes();
        meta["classicMemberMetadata"] = json!({"sessionTimeoutMs": 30000,
            "supportedProtocols": [{"name": "range", "metadata": sub}]});
    }
    vec![
        (5, gm(m), Some((0, meta))),
        (7, gm(m), Some((0, json!({"topicPartitions": parts(ps)})))),
        (
            8,
            gm(m),
            Some((
                0,
                json!({"memberEpoch": epoch, "previousMemberEpoch": prev, "state": 0,
                "assignedPartitions": parts(ps), "partitionsPendingRevocation": []}),
            )),
        ),
    ]
}

/// A `ConsumerGroupCurrentMemberAssignmentValue`: `(epoch, previous epoch, state)`, the
/// partitions held and those pending revocation.
fn current(
    m: &str,
    (epoch, prev, state): (i32, i32, i8),
    ps: &[i32],
    pending: &[i32],
) -> CoordRecord {
    let pending = if pending.is_empty() {
        json!([])
    } else {
        parts(pending)
    };
    let held = if ps.is_empty() { json!([]) } else { parts(ps) };
    (
        8,
        gm(m),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": prev, "state": state,
            "assignedPartitions": held, "partitionsPendingRevocation": pending}),
        )),
    )
}

fn batch(ts: i64, seq: i32, recs: Vec<CoordRecord>) -> Batch {
    let mut b = Batch::new(Producer::PLAIN).at(ts);
    for (t, k, v) in recs {
        let (k, v) = record(t, k, v);
        let r = match v {
            Some(v) => Rec::kv(k, v),
            None => Rec::tombstone(k),
        };
        b = b.record(r.at(ts));
    }
    b.tweak(move |s| s.base_sequence = seq)
}

/// Append `recs` as the coordinator of its era framed them: magic 0 messages (0.8.2 and
/// 0.9: `__consumer_offsets` at message format 0, no timestamps) or magic 1 (0.10: CreateTime
/// `ts`), the commits of one request gzip-compressed into one wrapper
/// (`offsets.topic.compression.codec=1`; `GroupMetadataManager.storeOffsets` builds one
/// message set per request).
fn push(p: &mut PartitionBuilder, ts: i64, magic: u8, recs: Vec<CoordRecord>) {
    let mut l = if magic == 1 {
        Legacy::v1().at(ts)
    } else {
        Legacy::v0()
    };
    let n = recs.len();
    for (t, k, v) in recs {
        let (k, v) = record(t, k, v);
        l = l.message(Some(&k), v.as_deref());
    }
    if n > 1 {
        l = l.codec(Codec::Gzip);
    }
    p.legacy(l);
}

/// The log, with (`tombstone`) or without the classic group's tombstone in the upgrade batch.
fn history(tombstone: bool) -> LogDirBuilder {
    history_cut(tombstone, false)
}

/// [`history`]; `cut`: the 0.9 `GroupMetadataValue` loses its last 3 bytes.
fn history_cut(tombstone: bool, cut: bool) -> LogDirBuilder {
    let n = transaction_partition_for(G, 50);
    let mut p = PartitionBuilder::new("__consumer_offsets", n).start_time(T2016);
    let mut t = T2016;
    // 0.8.2: Kafka-committed offsets of a ZooKeeper consumer, key and value v0, no group
    let k0 = |p: i32| json!({"group": G, "topic": "orders", "partition": p});
    let v0 = |o: i64, ts: i64| json!({"offset": o, "metadata": "", "commitTimestamp": ts});
    let first = vec![
        (0, k0(0), Some((0, v0(3, t)))),
        (0, k0(1), Some((0, v0(2, t)))),
    ];
    push(&mut p, t, 0, first);
    // 0.9: GroupMetadataValue v0, commits v1
    t += YEAR / 2;
    if cut {
        let (k, v) = {
            let (t, k, v) = classic(0, 1, 0);
            record(t, k, v)
        };
        let v = v.unwrap();
        p.legacy(Legacy::v0().message(Some(&k), Some(&v[..v.len() - 3])));
    } else {
        push(&mut p, t, 0, vec![classic(0, 1, 0)]);
    }
    t += 5_000;
    push(&mut p, t, 0, vec![commit(1, 0, 10, t), commit(1, 1, 12, t)]);
    // 0.10.1: v1 (rebalance timeout), still commits v1
    t += YEAR;
    push(&mut p, t, 1, vec![classic(1, 2, 0)]);
    t += 5_000;
    push(&mut p, t, 1, vec![commit(1, 0, 40, t), commit(1, 1, 41, t)]);
    // 2.0: v2 (KIP-211: commits v2 without expireTimestamp), 2.1: commits v3
    t += YEAR;
    let ts = t;
    p.append(batch(ts, -1, vec![classic(2, 3, ts)]));
    t += 5_000;
    p.append(batch(t, 0, vec![commit(2, 0, 70, t), commit(2, 1, 66, t)]));
    t += 5_000;
    p.append(batch(t, 0, vec![commit(3, 0, 75, t), commit(3, 1, 69, t)]));
    // 2.3+: v3 (static membership field)
    t += YEAR;
    let ts = t;
    p.append(batch(ts, -1, vec![classic(3, 4, ts)]));
    t += 5_000;
    p.append(batch(t, 0, vec![commit(3, 0, 90, t), commit(3, 1, 88, t)]));
    // 4.0: the first consumer-protocol member joins; the group converts at generation 4
    // (`convertToConsumerGroup`: the classic group's tombstone, then
    // `createConsumerGroupRecords`), and the join moves it to epoch 5.
    t += YEAR;
    let ts = t;
    let mut up: Vec<CoordRecord> = Vec::new();
    if tombstone {
        up.push((2, json!({"group": G}), None));
    }
    let m1 = member(M1, 4, 4, &[0, 1], true);
    up.push(m1[0].clone());
    up.push((3, json!({"groupId": G}), Some((0, json!({"epoch": 4})))));
    up.push(m1[1].clone());
    up.push((
        6,
        json!({"groupId": G}),
        Some((0, json!({"assignmentEpoch": 4}))),
    ));
    up.push(m1[2].clone());
    p.append(batch(ts, 0, up));
    // `consumerGroupHeartbeat` of the joining M2: its subscription, the group epoch, the new
    // target (partition 1 moves to M2), the assignment epoch, and M2's current assignment
    // still waiting for partition 1 (UNRELEASED_PARTITIONS); then M1 revokes 1
    // (UNREVOKED_PARTITIONS at epoch 4, then stable at 5) and M2 gets it.
    let m2 = member(M2, 5, 0, &[], false);
    let m1_target = (
        7,
        gm(M1),
        Some((0, json!({"topicPartitions": parts(&[0])}))),
    );
    let m2_target = (
        7,
        gm(M2),
        Some((0, json!({"topicPartitions": parts(&[1])}))),
    );
    let join = vec![
        m2[0].clone(),
        (3, json!({"groupId": G}), Some((0, json!({"epoch": 5})))),
        m1_target,
        m2_target,
        (
            6,
            json!({"groupId": G}),
            Some((0, json!({"assignmentEpoch": 5}))),
        ),
        current(M2, (5, 0, 2), &[], &[]),
    ];
    t += 3_000;
    p.append(batch(t, 0, join));
    t += 100;
    p.append(batch(t, 0, vec![current(M1, (4, 4, 1), &[0], &[1])]));
    t += 100;
    p.append(batch(t, 0, vec![current(M1, (5, 4, 0), &[0], &[])]));
    t += 100;
    p.append(batch(t, 0, vec![current(M2, (5, 0, 0), &[1], &[])]));
    t += 5_000;
    p.append(batch(
        t,
        0,
        vec![commit(3, 0, 120, t), commit(3, 1, 118, t)],
    ));
    let mut orders = PartitionBuilder::new("orders", 0).start_time(T2016);
    orders.append(Batch::new(Producer::PLAIN).records(150));
    let mut orders1 = PartitionBuilder::new("orders", 1).start_time(T2016);
    orders1.append(Batch::new(Producer::PLAIN).records(150));
    LogDirBuilder::new(1)
        .cluster_id(super::CLUSTER)
        .cluster_id(super::CLUSTER)
        .partition(p)
        .partition(orders)
        .partition(orders1)
}

/// `GroupMetadataManager` (classic, and its 4.0 successor `GroupCoordinatorShard.replay` →
/// `GroupMetadataManager.replay` / `OffsetMetadataManager.replay`) reads every value version
/// of its era's schemas (`GroupCoordinatorRecordSerde` in 4.0 still reads key version 0), so a
/// log holding `OffsetCommitValue` v0–v3 and `GroupMetadataValue` v0–v3 loads whole; the online upgrade
/// (`GroupMetadataManager.convertToConsumerGroup`: `ClassicGroup.createGroupTombstoneRecords`,
/// then `ConsumerGroup.createConsumerGroupRecords` with the member's `ClassicMemberMetadata`,
/// group and assignment epochs at the classic generation) replaces the classic group, and the
/// consumer group goes on at epoch 5 (`GroupMetadataManagerTest.testOnlineMigration…`-style).
/// Nothing at warning or above.
#[test]
fn a_classic_group_from_0_9_records_to_a_consumer_group() {
    let q = check(history(true), |_| {}, &[Some("4.0.0"), None]);
    q.assert_quiet();
}

/// The twin: the upgrade batch without the classic group's tombstone. Replaying the consumer
/// group's records over a classic group with members fails
/// (`GroupMetadataManager.getOrMaybeCreatePersistedConsumerGroup`: IllegalStateException
/// "Group reports is not a consumer group"), and the coordinator's load of the partition with
/// it. Reported.
#[test]
fn twin_the_upgrade_without_the_classic_groups_tombstone_is_reported() {
    let q = check(history(false), |_| {}, &[None]);
    q.assert_reported(Kind::GroupLoadFailure);
}

/// `ConsumerGroupPartitionMetadataValue` as the 4.0 coordinator wrote it: `orders` with its
/// two partitions (no racks).
fn partition_metadata() -> CoordRecord {
    let topics = json!([{"topicId": uuid_text(&topic_id_for("orders")), "topicName": "orders",
        "numPartitions": 2, "partitionMetadata": [{"partition": 0, "racks": []},
        {"partition": 1, "racks": []}]}]);
    (
        4,
        json!({"groupId": G}),
        Some((0, json!({"topics": topics}))),
    )
}

/// A consumer group created on 4.0 — its writes carry the subscription metadata record
/// (type 4) and group epochs without a metadata hash — read on after the 4.1 upgrade, whose
/// first heartbeat computes the metadata hash, bumps the group epoch with it and writes the
/// type-4 tombstone (`GroupMetadataManager.updateSubscriptionMetadata`: "If there is
/// subscription metadata in log, add a tombstone record to remove it";
/// `group.hasSubscriptionMetadataRecord`, 2025-10 tree), then the new target assignment
/// epoch and the member's current assignment at it. `tombstone_type`: the record type the
/// tombstone is keyed on (4: the subscription metadata).
fn consumer_group_across_4_1(tombstone_type: i16) -> LogDirBuilder {
    let n = transaction_partition_for(G, 50);
    let mut p = PartitionBuilder::new("__consumer_offsets", n).start_time(T2016);
    let t = T2016 + 9 * YEAR;
    let m = member(M2, 1, 0, &[0, 1], false);
    let join = vec![
        m[0].clone(),
        partition_metadata(),
        (3, json!({"groupId": G}), Some((0, json!({"epoch": 1})))),
        m[1].clone(),
        (
            6,
            json!({"groupId": G}),
            Some((0, json!({"assignmentEpoch": 1}))),
        ),
        m[2].clone(),
    ];
    p.append(batch(t, 0, join));
    p.append(batch(t + 5_000, 0, vec![commit(3, 0, 20, t + 5_000)]));
    let t = t + YEAR / 4;
    let mut bump = vec![(
        3,
        json!({"groupId": G}),
        Some((0, json!({"epoch": 2, "metadataHash": 0x5eed_cafe_i64}))),
    )];
    bump.push((tombstone_type, json!({"groupId": G}), None));
    bump.push((
        6,
        json!({"groupId": G}),
        Some((0, json!({"assignmentEpoch": 2}))),
    ));
    bump.push(current(M2, (2, 1, 0), &[0, 1], &[]));
    p.append(batch(t, 0, bump));
    p.append(batch(t + 5_000, 0, vec![commit(3, 0, 60, t + 5_000)]));
    let mut orders = PartitionBuilder::new("orders", 0).start_time(T2016);
    orders.append(Batch::new(Producer::PLAIN).records(100));
    LogDirBuilder::new(1)
        .cluster_id(super::CLUSTER)
        .partition(p)
        .partition(orders)
}

/// The 4.0 → 4.1 consumer group: the subscription metadata record and its tombstone while
/// the group lives on, the group epoch bumped with the first metadata hash. Kafka's loader
/// takes the tombstone as the end of that record only (`GroupMetadataManager.replay` of a
/// `ConsumerGroupPartitionMetadataKey` with a null value: `setHasSubscriptionMetadataRecord
/// (false)`), not of the group. Nothing at warning or above.
#[test]
fn a_consumer_group_across_the_4_1_metadata_hash_upgrade() {
    let q = check(consumer_group_across_4_1(4), |_| {}, &[Some("4.1.0"), None]);
    q.assert_quiet();
}

/// The twin: the upgrade's tombstone keyed on the group's epoch record (type 3) instead of
/// the subscription metadata (type 4), with the member still in the group.
/// `GroupMetadataManager.replay` of a `ConsumerGroupMetadataKey` tombstone throws
/// IllegalStateException ("Received a tombstone record to delete group … but the group still
/// has 1 members"), and the partition's load fails. Reported.
#[test]
fn twin_a_group_tombstone_with_members_left_is_reported() {
    let q = check(consumer_group_across_4_1(3), |_| {}, &[None]);
    q.assert_reported(Kind::GroupTombstonesIncomplete);
}

/// The twin that shows the legacy-framed records are read: the 0.9 coordinator's
/// `GroupMetadataValue` v0 (a magic 0 message) with its last 3 bytes missing. Kafka's loader
/// fails on the value (`GroupCoordinatorRecordSerde.readRecordValue` →
/// `CoordinatorLoader.DeserializationException`, the partition's load fails). Reported.
#[test]
fn twin_a_legacy_framed_group_record_that_does_not_decode_is_reported() {
    let q = check(history_cut(true, true), |_| {}, &[None]);
    q.assert_reported(Kind::GroupLoadFailure);
}
