//! Consumer groups on the brokers that Connect and MirrorMaker 2 own or write: a sink
//! connector's group, lagging, and the target groups whose offsets MirrorMaker 2 syncs.

use super::{MIN, T0, write_and_check};
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A batch of `__consumer_offsets` records at `ts` (type, key JSON, value version and JSON),
/// base sequence `seq` as the coordinator's `MemoryRecordsBuilder` leaves it (-1 for
/// `storeGroup`, 0 for `storeOffsets`).
fn coordinator_batch(seq: i32, ts: i64, recs: Vec<(i16, Value, (i16, Value))>) -> Batch {
    let mut b = Batch::new(Producer::PLAIN).at(ts);
    for (t, k, v) in recs {
        let (k, v) = record(t, k, Some(v));
        b = b.record(Rec::kv(k, v.unwrap()).at(ts));
    }
    b.tweak(move |s| s.base_sequence = seq)
}

/// `OffsetCommitValue` v3 (`GroupMetadataManager.storeOffsets`), leader epoch `epoch`.
fn commit(
    g: &str,
    tp: (&str, i32),
    offset: i64,
    epoch: i32,
    ts: i64,
) -> (i16, Value, (i16, Value)) {
    (
        1,
        json!({"group": g, "topic": tp.0, "partition": tp.1}),
        (
            3,
            json!({"offset": offset, "leaderEpoch": epoch, "metadata": "", "commitTimestamp": ts}),
        ),
    )
}

/// `GroupMetadataValue` v3 of a stable classic consumer group with one member.
fn group(g: &str, generation: i32, member: &str, ts: i64) -> (i16, Value, (i16, Value)) {
    let m = json!({"memberId": member, "groupInstanceId": null, "clientId": member,
        "clientHost": "/10.0.0.7", "rebalanceTimeout": 300000, "sessionTimeout": 45000});
    let v = json!({"protocolType": "consumer", "generation": generation, "protocol": "range",
        "leader": member, "currentStateTimestamp": ts, "members": [m]});
    (2, json!({"group": g}), (3, v))
}

#[derive(Default)]
struct Offsets(BTreeMap<i32, PartitionBuilder>);

impl Offsets {
    /// The group's `__consumer_offsets` partition (`GroupMetadataManager.partitionFor`).
    fn log(&mut self, g: &str) -> &mut PartitionBuilder {
        let n = transaction_partition_for(g, 50);
        self.0
            .entry(n)
            .or_insert_with(|| PartitionBuilder::new("__consumer_offsets", n))
    }
}

/// A data partition of `n` plain batches of 10 records, one a minute from `T0`, its first
/// at offset `start` (retention deleted the segments before it).
fn data(topic: &str, n: i64, start: i64) -> PartitionBuilder {
    let mut b = PartitionBuilder::new(topic, 0).start_offset(start);
    for i in 0..n {
        b.append(Batch::new(Producer::PLAIN).records(10).at(T0 + i * MIN));
    }
    b
}

/// * The sink connector `s3-sink`'s group `connect-s3-sink` (`SinkUtils.consumerGroupId`:
///   `connect-<connector>`), a classic consumer group (`WorkerSinkTask` builds a plain
///   `KafkaConsumer`), commits what the task flushed every `offset.flush.interval.ms`
///   (`WorkerSinkTask.commitOffsets` → `commitAsync`): far behind the log end of `clicks-0`
///   (the sink is slow: lag is no fault).
/// * MirrorMaker 2's checkpoint task writes the translated offsets of the source group
///   `orders-app` to the target group of the same name while it has no active member
///   (`MirrorCheckpointTask.syncGroupOffset` → `Admin.alterConsumerGroupOffsets`: an
///   `OffsetCommit` without generation, so only offset records, no group record, no leader
///   epoch). The offsets come from `OffsetSyncStore.translateDownstream`, at most one past an
///   offset MirrorMaker 2 itself wrote to `us-east.orders-0` (an offset sync is emitted
///   after the record's ack, `MirrorSourceTask.commitRecord`), so never beyond its log end.
///
/// `GroupMetadataManager.loadGroupsAndOffsets` loads both; consumers resume there. Nothing at
/// warning or above.
/// Twin: the sink fell so far behind that retention deleted `clicks-0` up to offset 500
/// (`UnifiedLog.deleteOldSegments`) while its group's last commit is 320: the task's next
/// fetch is out of range and `auto.offset.reset` skips what it never wrote —
/// `committed_offset_below_log_start` (warning).
/// (A commit beyond this copy's log end is not the twin: klogscan reads a copy whose
/// checkpointed high watermark is below the commit as a follower behind the leader, info.)
#[test]
fn sink_connector_group_and_offsets_mirror_maker_syncs() {
    for twin in [false, true] {
        let clicks = data("clicks", 100, if twin { 500 } else { 0 });
        let mirrored = data("us-east.orders", 30, 0);
        let mut o = Offsets::default();
        let sink = "connect-s3-sink";
        let member = "connector-consumer-s3-sink-0-7f3a";
        let b = coordinator_batch(-1, T0, vec![group(sink, 4, member, T0)]);
        o.log(sink).append(b);
        for i in 1..=8 {
            let ts = T0 + i * 10 * MIN;
            let off = 40 * i;
            let b = coordinator_batch(0, ts, vec![commit(sink, ("clicks", 0), off, 0, ts)]);
            o.log(sink).append(b);
        }
        let g = "orders-app";
        for i in 1..=3 {
            let ts = T0 + i * 10 * MIN + 5_000;
            let off = 100 * i;
            let b = coordinator_batch(0, ts, vec![commit(g, ("us-east.orders", 0), off, -1, ts)]);
            o.log(g).append(b);
        }
        let mut ld = LogDirBuilder::new(1).partition(clicks).partition(mirrored);
        for (_, p) in o.0 {
            ld = ld.partition(p);
        }
        let q = write_and_check(ld, &[]);
        if twin {
            let f = q.assert_reported(
                Kind::CommittedOffsetBelowLogStart,
                Severity::Warning,
                "clicks",
                None,
            );
            assert_eq!(f.partition, 0);
        } else {
            q.assert_quiet();
        }
    }
}
