//! KAFKA-13093 (4.0): the cleaner writes the legacy (magic 0/1) messages it keeps as v2
//! batches — `LogCleanerParameterizedIntegrationTest.testCleaningNestedMessagesWithV0V1`
//! and `testCleanerWithMessageFormatV0V1V2` (restored with the change; the log layer's
//! `LogCleanerTest`, `UnifiedLogTest` and `LogLoaderTest` changed only their API calls for
//! it).

use super::*;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};

const TOPIC: &str = "test";
const T: i64 = DEFAULT_START_MS;

/// A kept magic-0 message `k` as the 4.x cleaner rewrites it
/// (`MemoryRecords.buildRetainedRecordsInto`): one v2 batch of one record at the message's
/// own offset, CreateTime, timestamp −1 (`RecordBatch.NO_TIMESTAMP`), the legacy batch's
/// producer fields (none) and partition leader epoch (−1, `NO_PARTITION_LEADER_EPOCH`).
fn from_v0(k: &str, epoch: i32) -> Batch {
    Batch::new(Producer::PLAIN)
        .record(Rec::kv(k, k))
        .at(-1)
        .leader_epoch(epoch)
}

/// A kept magic-1 message: the same, its CreateTime timestamp kept.
fn from_v1(k: &str, ts: i64) -> Batch {
    Batch::new(Producer::PLAIN)
        .record(Rec::kv(k, k))
        .at(ts)
        .leader_epoch(-1)
}

/// A v2 batch the producer wrote at leader epoch `epoch`.
fn v2(k: &str, epoch: i32) -> Batch {
    Batch::new(Producer::PLAIN)
        .record(Rec::kv(k, k))
        .leader_epoch(epoch)
}

/// The log dir of `p`, its cleaner's checkpoint at `cleaned_to` (the topic compacted).
fn cleaned(p: PartitionBuilder, cleaned_to: i64) -> Written {
    let w = Written::new(LogDirBuilder::new(1).cluster_id("c1").partition(p));
    std::fs::write(
        w.root.join("cleaner-offset-checkpoint"),
        format!("0\n1\n{TOPIC} 0 {cleaned_to}\n"),
    )
    .unwrap();
    w
}

/// A 3.x log upgraded to 4.x and cleaned: magic-0 messages k0 (0), k1 (1), k1 (2), a
/// magic-1 message k2 (3), then the producer's v2 batch k3 (4) at leader epoch 3; a roll,
/// and k0 (5) at epoch 4 in the active segment. The 4.x cleaner (checkpoint 5) kept k0 (0),
/// k1 (2) and k2 (3) as v2 batches without an epoch, k3's batch as it was. The next load
/// (`LogSegment.recover`, had it run) assigns epochs only for a non-negative
/// partitionLeaderEpoch: the cache holds 3 → 4, the leader-epoch-checkpoint the testkit
/// writes the same way; the time index takes no entry for a timestamp of −1. Quiet, no
/// segment recovered. Then the same batches in the other order — the producer's v2 batch
/// at epoch 3 first, the legacy messages after it (a topic whose message format was set
/// back below v2 on a broker before 3.0, KIP-724): quiet too, an epoch of −1 after 3 is
/// no regression. Near miss: those kept batches at epoch 2 rather than −1 (a real epoch
/// below the one before it): one `leader_epoch_regression`.
#[test]
fn kept_legacy_messages_become_v2_batches_without_an_epoch() {
    let mut p = PartitionBuilder::new(TOPIC, 0);
    p.append(from_v0("k0", -1));
    p.skip_offsets(1);
    p.append(from_v0("k1", -1));
    p.append(from_v1("k2", T));
    p.append(v2("k3", 3));
    p.roll();
    p.append(v2("k0", 4));
    let w = cleaned(p, 5);
    let m = &w.m.partitions[0];
    let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
    assert_eq!(bases, [0, 5]);
    assert!(m.batches.iter().all(|b| b.magic == 2));
    let (s, v) = assert_quiet(&w);
    assert!(
        v.findings().next().is_none() && s.findings.is_empty(),
        "{}",
        all(&s, &v)
    );
    let lec = std::fs::read_to_string(w.pdir().join("leader-epoch-checkpoint")).unwrap();
    assert_eq!(lec, "0\n2\n3 4\n4 5\n");
    let pred = &v.partitions[0].prediction;
    assert!(pred.recovered_segments.is_empty(), "{pred:#?}");
    assert_eq!(pred.log_end_offset_after, Some(6));

    // The other order, and its near miss.
    for epoch in [-1, 2] {
        let mut p = PartitionBuilder::new(TOPIC, 0);
        p.append(v2("k3", 3));
        p.append(from_v0("k0", epoch));
        p.skip_offsets(1);
        p.append(from_v0("k1", epoch));
        p.roll();
        p.append(v2("k0", 4));
        let w = cleaned(p, 4);
        let (s, v) = (w.scan(), w.verify());
        let regressions = of_kind(&s.findings, Kind::LeaderEpochRegression);
        if epoch < 0 {
            assert!(
                s.findings.is_empty() && loud(v.findings()).is_empty(),
                "{}",
                all(&s, &v)
            );
        } else {
            assert_eq!(regressions.len(), 1, "{}", all(&s, &v));
            assert_eq!(regressions[0].offset, Some(1));
        }
    }
}
