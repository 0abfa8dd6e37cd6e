//! MirrorMaker 2 without exactly-once: a broker of `us-east` in a two-way replication with
//! `us-west` holds the topics replicated from `us-west`, and MirrorMaker 2's compacted
//! internal topics of both flows.

use super::{DAY, MIN, T0, write_and_check};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};

/// `us-west.orders-N`: what `MirrorSourceTask.convertRecord` makes of the source's records —
/// the same key, value, headers (`convertHeaders`) and timestamp (the source's CreateTime) —
/// written by the task's producer (`Worker.baseProducerConfigs`: `enable.idempotence=false`,
/// no producer id). After an outage MirrorMaker 2 catches up a three-day backlog: the
/// records' timestamps are days old, and they grow again towards the present.
fn replicated(n: i32, until: i64) -> PartitionBuilder {
    let mut b = PartitionBuilder::new("us-west.orders", n);
    let mut written = T0;
    let mut event = T0 - 3 * DAY;
    while written <= until {
        let mut batch = Batch::new(Producer::PLAIN).at(event);
        for k in 0..5 {
            let r = Rec::kv(format!("order-{k}"), "{}")
                .header(
                    "traceparent",
                    Some(b"00-4bf92f3577b34da6-00f067aa0ba902b7-01"),
                )
                .header("tenant", None)
                .at(event + k * 7);
            batch = batch.record(r);
        }
        b.append(batch);
        written += MIN;
        // the backlog drains: each minute of the target's clock mirrors an hour of events
        event = (event + 60 * MIN).min(written - 2_000);
    }
    b
}

/// A compacted single-partition internal topic (`MirrorUtils.createSinglePartitionCompactedTopic`)
/// after the cleaner: `removed` offsets gone, then one record a write from `from` to `until`
/// every `every` ms by `p`.
fn compacted(
    topic: &str,
    p: Producer,
    removed: i64,
    key: &str,
    (from, until, every): (i64, i64, i64),
) -> PartitionBuilder {
    let mut b = PartitionBuilder::new(topic, 0);
    // the cleaned part: the latest record of each key kept, its batch's sequence from before
    // the removed ones (`MemoryRecords.filterTo` keeps a batch's producer fields)
    b.append(
        Batch::new(p)
            .record(Rec::kv(format!("{key}-old"), "v"))
            .at(from - 10 * MIN),
    );
    b.skip_offsets(removed);
    if p.id >= 0 {
        let s = removed as i32 + 1;
        b.append(
            Batch::new(p)
                .record(Rec::kv(key, "v").at(from))
                .at(from)
                .sequence(s),
        );
    }
    let mut t = from + every;
    while t <= until {
        b.append(Batch::new(p).record(Rec::kv(key, "v").at(t)).at(t));
        t += every;
    }
    b
}

/// The broker's share of a two-way MirrorMaker 2 (`us-east` ↔ `us-west`) at the default
/// `offset-syncs.topic.location=source`:
///
/// * `us-west.orders-{0,1}`: replicated from `us-west`, a backlog with three-day-old
///   CreateTimes, headers kept (`MirrorSourceTask.convertRecord`);
/// * `mm2-offset-syncs.us-west.internal-0` (the `us-east → us-west` flow's syncs, on its
///   source: `MirrorSourceConfig.offsetSyncsTopic`), written by the task's own producer
///   (`OffsetSyncWriter` → `MirrorUtils.newProducer`: the client's defaults, idempotent), one
///   key per replicated partition: the cleaner removed whole batches, so its sequences skip;
/// * `us-west.checkpoints.internal-0` (`MirrorCheckpointTask`, the `us-west → us-east` flow's
///   checkpoints on its target) and `heartbeats-0` (`MirrorHeartbeatTask`, one record a
///   second by default, `emit.heartbeats.interval.seconds`), through the worker's plain
///   producer, their older records removed by the cleaner.
///
/// All three internal topics are created compacted (`MirrorUtils.createCompactedTopic`) and
/// the cleaner checkpointed them. Nothing at warning or above.
/// Twin: the same log dir without the cleaner's checkpoint — nothing then says
/// `mm2-offset-syncs.us-west.internal` is compacted, and its skipped sequences read as lost
/// batches: `sequence_gap` (warning: the policy is unknown).
#[test]
fn replicated_topics_and_internal_topics_without_exactly_once() {
    for twin in [false, true] {
        let until = T0 + 90 * MIN;
        let syncs = Producer::idempotent(9500, 0);
        let mut ld = LogDirBuilder::new(1)
            .partition(replicated(0, until))
            .partition(replicated(1, until));
        let internal = [
            (
                "mm2-offset-syncs.us-west.internal",
                syncs,
                400,
                "orders-0",
                MIN,
            ),
            (
                "us-west.checkpoints.internal",
                Producer::PLAIN,
                90,
                "orders-app",
                MIN,
            ),
            (
                "heartbeats",
                Producer::PLAIN,
                86_000,
                "us-west-us-east",
                1_000,
            ),
        ];
        let mut cleaned = Vec::new();
        for (topic, p, removed, key, every) in internal {
            let b = compacted(topic, p, removed, key, (T0, until, every));
            cleaned.push((topic, 0, removed + 1));
            ld = ld.partition(b);
        }
        let q = write_and_check(ld, if twin { &[] } else { &cleaned });
        if twin {
            q.assert_reported(
                Kind::SequenceGap,
                Severity::Warning,
                "mm2-offset-syncs.us-west.internal",
                Some(9500),
            );
        } else {
            q.assert_quiet();
        }
    }
}
