//! `__consumer_offsets` as the group coordinators write it: a classic group committing and
//! then expiring its offsets (the ZooKeeper-era `GroupMetadataManager`), a consumer group
//! (KIP-848) through the `CoordinatorRuntime` of 4.x, and transactional offset commits
//! (`sendOffsetsToTransaction`) beside the producer's data.

use super::write_and_check;
use base64::Engine as _;
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;

/// One coordinator record: type, key JSON, value (`(version, JSON)`; `None`: a tombstone).
type CoordRecord = (i16, Value, Option<(i16, Value)>);

/// The `__consumer_offsets` partition of `group` among 50 (`GroupMetadataManager.partitionFor`:
/// `Utils.abs(groupId.hashCode) % offsets.topic.num.partitions`, the hash the transaction
/// coordinator uses too).
fn offsets_partition(group: &str) -> i32 {
    transaction_partition_for(group, 50)
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// `ConsumerProtocolSubscription` v0: the topics, no user data.
pub(crate) fn subscription(topics: &[&str]) -> String {
    let mut b = 0i16.to_be_bytes().to_vec();
    b.extend_from_slice(&(topics.len() as i32).to_be_bytes());
    for t in topics {
        b.extend_from_slice(&(t.len() as i16).to_be_bytes());
        b.extend_from_slice(t.as_bytes());
    }
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b64(&b)
}

/// `ConsumerProtocolAssignment` v0: `topic`'s `partitions`, no user data.
pub(crate) fn assignment(topic: &str, partitions: &[i32]) -> String {
    let mut b = 0i16.to_be_bytes().to_vec();
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&(topic.len() as i16).to_be_bytes());
    b.extend_from_slice(topic.as_bytes());
    b.extend_from_slice(&(partitions.len() as i32).to_be_bytes());
    for p in partitions {
        b.extend_from_slice(&p.to_be_bytes());
    }
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b64(&b)
}

/// A batch of coordinator records at `ts` (`(type, key, value)`), from `producer`, with
/// the base sequence the coordinator's builder writes (`seq`).
fn coordinator_batch(producer: Producer, seq: i32, ts: i64, recs: Vec<CoordRecord>) -> Batch {
    let mut b = Batch::new(producer).at(ts);
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

fn commit(group: &str, topic: &str, partition: i32, offset: i64, ts: i64) -> CoordRecord {
    (
        1,
        json!({"group": group, "topic": topic, "partition": partition}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": ts}),
        )),
    )
}

/// A classic consumer group as the ZooKeeper-era coordinator writes it: the group after its
/// rebalance (`GroupMetadataManager.storeGroup`: a plain batch, no producer, sequence -1),
/// auto-commits every 5 s (`storeOffsets`: producer id -1 but base sequence 0, as its
/// builder is called), the group going `Empty` when its only member leaves (generation 2,
/// no protocol, no leader, no member), and seven days later
/// (`offsets.retention.minutes`) the expired offsets' tombstones with the dead group's in
/// one batch (`GroupMetadataManager.cleanupGroupMetadata`;
/// `GroupMetadataManagerTest.testOffsetExpirationOfSimpleConsumer`-,
/// `testGroupMetadataRemoval`-style).
#[test]
fn classic_group_commits_then_expires() {
    let g = "billing-service";
    let n = offsets_partition(g);
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS;
    let member = "consumer-billing-service-1-5f0c1c2a-8d4e-4a51-9a39-1d1f2c3b4a5e";
    let mut p = PartitionBuilder::new("__consumer_offsets", n);
    let stable = json!({"protocolType": "consumer", "generation": 1, "protocol": "range",
        "leader": member, "currentStateTimestamp": t0,
        "members": [{"memberId": member, "groupInstanceId": null,
            "clientId": "consumer-billing-service-1", "clientHost": "/10.0.0.7",
            "rebalanceTimeout": 300000, "sessionTimeout": 45000,
            "subscription": subscription(&["orders"]),
            "assignment": assignment("orders", &[0, 1])}]});
    p.append(coordinator_batch(
        Producer::PLAIN,
        -1,
        t0,
        vec![(2, json!({"group": g}), Some((3, stable)))],
    ));
    let mut last = t0;
    for i in 1..=4i64 {
        last = t0 + 5_000 * i;
        let recs = vec![
            commit(g, "orders", 0, 100 * i, last),
            commit(g, "orders", 1, 90 * i, last),
        ];
        p.append(coordinator_batch(Producer::PLAIN, 0, last, recs));
    }
    let empty_at = last + 2_000;
    let empty = json!({"protocolType": "consumer", "generation": 2, "protocol": null,
        "leader": null, "currentStateTimestamp": empty_at, "members": []});
    p.append(coordinator_batch(
        Producer::PLAIN,
        -1,
        empty_at,
        vec![(2, json!({"group": g}), Some((3, empty)))],
    ));
    let expired_at = empty_at + 7 * DAY + 600_000;
    let tombstones = vec![
        (
            1,
            json!({"group": g, "topic": "orders", "partition": 0}),
            None,
        ),
        (
            1,
            json!({"group": g, "topic": "orders", "partition": 1}),
            None,
        ),
        (2, json!({"group": g}), None),
    ];
    p.append(coordinator_batch(
        Producer::PLAIN,
        -1,
        expired_at,
        tombstones,
    ));
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    q.assert_quiet();
}

fn gm(g: &str, m: &str) -> Value {
    json!({"groupId": g, "memberId": m})
}

/// A consumer group (KIP-848) through the 4.x `CoordinatorRuntime`: every batch is built by
/// `CoordinatorRuntime`'s `MemoryRecordsBuilder` with base sequence 0 and no producer, and
/// holds all the records of one coordinator write (`GroupMetadataManager.consumerGroupHeartbeat`:
/// member, group epoch, target assignment, current assignment), then offset commits
/// (`OffsetMetadataManager.commitOffset`), then the member leaving (its records'
/// tombstones) and the group going empty; the topic id is the one `orders` has.
#[test]
fn consumer_group_through_the_coordinator_runtime() {
    let g = "ledger-consumers";
    let n = offsets_partition(g);
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS;
    let topic_id =
        klogscan::testkit::files::uuid_text(&klogscan::testkit::files::topic_id_for("orders"));
    let parts = json!([{"topicId": topic_id, "partitions": [0, 1, 2]}]);
    let m = "b0AcSeQVRaG7f1yH2YqZxA";
    let mut p = PartitionBuilder::new("__consumer_offsets", n);
    let join = vec![
        (
            5,
            gm(g, m),
            Some((
                0,
                json!({"instanceId": null, "rackId": null,
            "clientId": "consumer-ledger-1", "clientHost": "/10.0.0.8",
            "subscribedTopicNames": ["orders"], "subscribedTopicRegex": null,
            "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform"}),
            )),
        ),
        (
            3,
            json!({"groupId": g}),
            Some((0, json!({"epoch": 1, "metadataHash": 0}))),
        ),
        (
            7,
            gm(g, m),
            Some((0, json!({"topicPartitions": parts.clone()}))),
        ),
        (
            6,
            json!({"groupId": g}),
            Some((0, json!({"assignmentEpoch": 1, "assignmentTimestamp": t0}))),
        ),
        (
            8,
            gm(g, m),
            Some((
                0,
                json!({"memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
            "assignedPartitions": parts, "partitionsPendingRevocation": []}),
            )),
        ),
    ];
    p.append(coordinator_batch(Producer::PLAIN, 0, t0, join));
    let mut last = t0;
    for i in 1..=3i64 {
        last = t0 + 5_000 * i;
        let recs = (0..3).map(|part| commit(g, "orders", part, 50 * i + part as i64, last));
        p.append(coordinator_batch(Producer::PLAIN, 0, last, recs.collect()));
    }
    let leave_at = last + 1_000;
    let leave = vec![
        (8, gm(g, m), None),
        (7, gm(g, m), None),
        (5, gm(g, m), None),
        (
            3,
            json!({"groupId": g}),
            Some((0, json!({"epoch": 2, "metadataHash": 0}))),
        ),
    ];
    p.append(coordinator_batch(Producer::PLAIN, 0, leave_at, leave));
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    q.assert_quiet();
}

/// Transactional offset commits (`KafkaProducer.sendOffsetsToTransaction` → `TxnOffsetCommit`):
/// the group coordinator appends them with the producer's id and epoch and base sequence 0
/// every time (`GroupMetadataManager.storeOffsets`' builder, `CoordinatorRuntime` likewise),
/// as `AppendOrigin.COORDINATOR`, whose appends `ProducerAppendInfo.maybeValidateDataBatch`
/// checks for the epoch only, never the sequence. Three TV1 transactions of one producer
/// epoch, each committing its input offsets and its output, markers in both partitions.
#[test]
fn transactional_offset_commits_repeat_sequence_zero() {
    let g = "enricher";
    let n = offsets_partition(g);
    let txn = Producer::transactional(4200, 3);
    let mut out = PartitionBuilder::new("enriched", 0);
    let mut offsets = PartitionBuilder::new("__consumer_offsets", n);
    let mut t = klogscan::testkit::scenario::DEFAULT_START_MS;
    for i in 1..=3i64 {
        out.append(Batch::new(txn).records(2).at(t));
        let recs = vec![commit(g, "raw", 0, 10 * i, t + 20)];
        offsets.append(coordinator_batch(txn, 0, t + 20, recs));
        for p in [&mut out, &mut offsets] {
            let now = p.now();
            p.advance_time(t + 150 - now);
            p.commit(txn, 2);
        }
        t += 1_000;
    }
    let ld = LogDirBuilder::new(1).partition(out).partition(offsets);
    let q = write_and_check(ld, |_| {});
    q.assert_quiet();
}

/// `orders-3` with leader epochs 0, 2 and 5 (offsets 0–29, batches of 3), as a replica
/// that only saw those epochs' batches writes its epoch cache.
fn orders_3() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 3);
    for (epoch, n) in [(0, 4), (2, 3), (5, 3)] {
        p.set_leader_epoch(epoch);
        for _ in 0..n {
            p.append(Batch::new(Producer::idempotent(77, 0)).records(3));
        }
    }
    p
}

/// A group that started on an idle partition with `auto.offset.reset=latest`: the consumer's
/// `ListOffsets` answer carries the leader's latest cached epoch
/// (`UnifiedLog.fetchOffsetByTimestamp(LATEST_TIMESTAMP)` → `LeaderEpochFileCache.latestEpoch`),
/// which is the epoch `Partition.makeLeader` assigned at the log end even when no batch
/// carries it (epoch 7 here, its leader another broker, nothing written since); the
/// consumer commits its position with that epoch (`SubscriptionState.allConsumed`:
/// `OffsetAndMetadata(position.offset, position.offsetEpoch)`). This replica's data and
/// epoch cache stop at epoch 5 — it never saw a batch of epoch 7. A second group committed
/// after reading the last record (epoch 5). When that consumer validates its position, the
/// leader answers `OffsetsForLeaderEpoch` from its own cache, which always holds its
/// current epoch (`LeaderEpochFileCache.endOffsetFor`: the latest epoch ends at the log end;
/// "the requested epoch is larger than any known epoch … should never be hit because the
/// latest cached epoch is always the largest"), so epoch 7 ends at 30 and
/// `SubscriptionState.maybeCompleteValidation` passes: no reset, no truncation.
#[test]
fn committed_epoch_from_list_offsets_above_the_replicas_epochs() {
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS + 3_600_000;
    let mut ld = LogDirBuilder::new(2).partition(orders_3());
    for (g, epoch) in [("fresh-readers", 7), ("steady-readers", 5)] {
        let mut p = PartitionBuilder::new("__consumer_offsets", offsets_partition(g));
        let c = (
            1,
            json!({"group": g, "topic": "orders", "partition": 3}),
            Some((
                3,
                json!({"offset": 30, "leaderEpoch": epoch, "metadata": "", "commitTimestamp": t0}),
            )),
        );
        p.append(coordinator_batch(Producer::PLAIN, 0, t0, vec![c]));
        ld = ld.partition(p);
    }
    let q = write_and_check(ld, |_| {});
    q.assert_quiet();
}

/// This broker's replica of `orders-3` is a follower that was down for an hour and has not caught
/// up (out of the ISR: `Partition.maybeShrinkIsr`; its log end and high watermark are 18), while
/// the group committed offset 30, read from the leader — the offset commit path checks no log end
/// (`OffsetMetadataManager.commitOffset`, `GroupMetadataManager.storeOffsets`), and a follower out
/// of the ISR lags the high watermark by any amount (`ReplicaFetcherThread`). The coordinator's
/// partition lives on this broker too. This replica's own high-watermark checkpoint (18) shows it
/// never held offsets up to 30 as committed (a follower's high watermark is the leader's bounded by
/// its own log end: `ReplicaFetcherThread.processPartitionData` →
/// `UnifiedLog.maybeUpdateHighWatermark`), so nothing the group read was lost here.
#[test]
fn committed_offset_above_a_lagging_followers_log_end() {
    let mut p = PartitionBuilder::new("orders", 3);
    for _ in 0..6 {
        p.append(Batch::new(Producer::idempotent(77, 0)).records(3));
    }
    let g = "steady-readers";
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS + 3_600_000;
    let mut c = PartitionBuilder::new("__consumer_offsets", offsets_partition(g));
    let rec = (
        1,
        json!({"group": g, "topic": "orders", "partition": 3}),
        Some((
            3,
            json!({"offset": 30, "leaderEpoch": 0, "metadata": "", "commitTimestamp": t0}),
        )),
    );
    c.append(coordinator_batch(Producer::PLAIN, 0, t0, vec![rec]));
    let q = write_and_check(LogDirBuilder::new(2).partition(p).partition(c), |_| {});
    q.assert_quiet();
}

/// Near miss of the above: the same replica without `.kafka_cleanshutdown` (its broker
/// running, or not shut down cleanly) — a leader, or the only replica, whose host crashed and
/// lost its unflushed tail after its last checkpoint reads the same as a follower behind: a
/// warning saying the three readings; and a merge of the log dir's bundle says the same.
#[test]
fn committed_offset_above_a_replica_without_a_clean_shutdown_is_a_warning() {
    let mut p = PartitionBuilder::new("orders", 3);
    for _ in 0..6 {
        p.append(Batch::new(Producer::idempotent(77, 0)).records(3));
    }
    let g = "steady-readers";
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS + 3_600_000;
    let mut c = PartitionBuilder::new("__consumer_offsets", offsets_partition(g));
    let rec = (
        1,
        json!({"group": g, "topic": "orders", "partition": 3}),
        Some((
            3,
            json!({"offset": 30, "leaderEpoch": 0, "metadata": "", "commitTimestamp": t0}),
        )),
    );
    c.append(coordinator_batch(Producer::PLAIN, 0, t0, vec![rec]));
    let ld = LogDirBuilder::new(2)
        .clean_shutdown(false)
        .partition(p)
        .partition(c);
    let q = write_and_check(ld, |_| {});
    let severities = |fs: &[klogscan::Finding]| -> Vec<Severity> {
        fs.iter()
            .filter(|f| f.kind == Kind::CommittedOffsetBeyondLogEnd)
            .map(|f| f.severity)
            .collect()
    };
    assert_eq!(severities(&q.scan.findings), [Severity::Warning]);
    let out = tempfile::tempdir().unwrap();
    let bundle = out.path().join("b.klb");
    let w = std::io::BufWriter::new(std::fs::File::create(&bundle).unwrap());
    let opts = klogscan::results::ScanOptions::default();
    klogscan::bundle::collect(&[q.dir.path().to_path_buf()], &opts, w).unwrap();
    let merged = klogscan::request::run(
        &klogscan::request::Request::new([bundle.as_path()]).with_bundles(true),
    )
    .unwrap()
    .report;
    assert_eq!(severities(&merged.findings), [Severity::Warning]);
}

/// Near miss of the above: the same replica whose own high-watermark checkpoint says 30 —
/// it held offsets up to 30 as committed and now ends at 18, so records the group read are
/// gone from it (`CheckpointInconsistent` and `committed_offset_beyond_log_end`, errors).
#[test]
fn committed_offset_above_a_replica_that_lost_its_high_watermark_is_an_error() {
    let mut p = PartitionBuilder::new("orders", 3);
    for _ in 0..6 {
        p.append(Batch::new(Producer::idempotent(77, 0)).records(3));
    }
    let g = "steady-readers";
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS + 3_600_000;
    let mut c = PartitionBuilder::new("__consumer_offsets", offsets_partition(g));
    let rec = commit(g, "orders", 3, 30, t0);
    c.append(coordinator_batch(Producer::PLAIN, 0, t0, vec![rec]));
    let ld = LogDirBuilder::new(2)
        .partition(p)
        .partition(c)
        .high_watermark("orders", 3, 30);
    let q = write_and_check(ld, |_| {});
    let beyond: Vec<_> = q
        .scan
        .findings
        .iter()
        .filter(|f| f.kind == Kind::CommittedOffsetBeyondLogEnd)
        .map(|f| f.severity)
        .collect();
    assert_eq!(beyond, [Severity::Error]);
}
