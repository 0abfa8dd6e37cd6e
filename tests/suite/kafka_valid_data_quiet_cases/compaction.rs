//! Compacted topics as the log cleaner leaves them (`LogCleaner.Cleaner.cleanInto` →
//! `MemoryRecords.filterTo`): offset gaps, batches rebuilt with their last offset kept,
//! producers' last batches kept empty, tombstones with their delete horizon (KIP-534),
//! `cleaner-offset-checkpoint`, and the producer snapshots taken before the cleaning.

use super::{copy_snapshots, write_and_check};
use klogscan::testkit::files::encode_offset_checkpoint;
use klogscan::testkit::{Batch, BatchSpec, LogDirBuilder, PartitionBuilder, Producer, Rec};

const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;

fn ts(offset: i64) -> i64 {
    T0 + 1000 * offset
}

/// A one-record-per-offset batch: `(key, value)` at offsets `base..`, explicit timestamps.
fn kv_batch(p: Producer, seq: i32, base: i64, recs: &[(&str, Option<&str>)]) -> Batch {
    let mut b = Batch::new(p).at(ts(base));
    if p.id >= 0 {
        b = b.sequence(seq);
    }
    for (i, (k, v)) in recs.iter().enumerate() {
        let r = match v {
            Some(v) => Rec::kv(k, v),
            None => Rec::tombstone(k),
        };
        b = b.record(r.at(ts(base + i as i64)));
    }
    b
}

const P: Producer = Producer {
    id: 11,
    epoch: 0,
    transactional: false,
};
const Q: Producer = Producer {
    id: 12,
    epoch: 0,
    transactional: false,
};
const R: Producer = Producer {
    id: 13,
    epoch: 0,
    transactional: false,
};

/// The active segment after the cleaned part: offsets 9–11.
fn users_tail(p: &mut PartitionBuilder) {
    p.roll();
    p.append(kv_batch(Q, 3, 9, &[("k6", Some("a")), ("k7", Some("b"))]));
    p.append(kv_batch(Producer::PLAIN, -1, 11, &[("k1", Some("new"))]));
}

/// `users-0` as written, before any cleaning: segments 0 and 5, active segment 9.
fn users_as_written() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("users", 0);
    p.append(kv_batch(P, 0, 0, &[("k1", Some("v")), ("k2", Some("v"))]));
    p.append(kv_batch(Producer::PLAIN, -1, 2, &[("k3", Some("v"))]));
    p.append(kv_batch(Q, 0, 3, &[("k2", Some("w")), ("k4", Some("v"))]));
    p.roll();
    p.append(kv_batch(R, 0, 5, &[("k5", Some("v"))]));
    p.append(kv_batch(Q, 2, 6, &[("k5", Some("w"))]));
    p.append(kv_batch(Producer::PLAIN, -1, 7, &[("k3", None)]));
    p.append(kv_batch(Producer::PLAIN, -1, 8, &[("k4", None)]));
    users_tail(&mut p);
    p
}

/// `users-0` after one cleaning round over [0, 9) at `cleaned_at` (`LogCleaner.doClean`,
/// `Cleaner.cleanInto` → `MemoryRecords.filterTo`), segments 0 and 5 grouped into one
/// (`groupSegmentsBySize`):
/// * P's batch 0–1 keeps k1 and loses k2 (superseded at 3): rebuilt with its last offset
///   kept (`buildRetainedRecordsInto`: `overrideLastOffset`, so the last sequence survives)
///   and a max timestamp that is now k1's;
/// * the plain batch at 2 is gone (`DELETE_EMPTY`): an offset gap;
/// * Q's batch 3–4 keeps k2, loses k4 (deleted at 8);
/// * R's only batch (5) lost k5 but is R's last: kept as an empty header
///   (`RETAIN_EMPTY` → `DefaultRecordBatch.writeEmptyHeader`: no record, first timestamp
///   -1, the max timestamp, last offset and sequence of the original);
/// * the tombstones at 7 and 8 get their delete horizon, `cleaned_at` +
///   `delete.retention.ms` (a day), as their first timestamp (KIP-534).
fn users_cleaned(cleaned_at: i64) -> PartitionBuilder {
    let horizon = cleaned_at + 86_400_000;
    let mut p = PartitionBuilder::new("users", 0);
    let keep_last = |d: i32| move |s: &mut BatchSpec| s.overrides.last_offset_delta = Some(d);
    p.append(kv_batch(P, 0, 0, &[("k1", Some("v"))]).tweak(keep_last(1)));
    p.skip_offsets(1);
    p.append(kv_batch(Q, 0, 3, &[("k2", Some("w"))]).tweak(keep_last(1)));
    let r_max = ts(5);
    p.append_spec(BatchSpec {
        base_offset: 5,
        partition_leader_epoch: 0,
        base_timestamp: -1,
        producer_id: R.id,
        producer_epoch: R.epoch,
        base_sequence: 0,
        overrides: klogscan::testkit::HeaderOverrides {
            last_offset_delta: Some(0),
            max_timestamp: Some(r_max),
            records_count: Some(0),
            ..Default::default()
        },
        ..BatchSpec::default()
    });
    p.append(kv_batch(Q, 2, 6, &[("k5", Some("w"))]));
    p.append(kv_batch(Producer::PLAIN, -1, 7, &[("k3", None)]).delete_horizon(horizon));
    p.append(kv_batch(Producer::PLAIN, -1, 8, &[("k4", None)]).delete_horizon(horizon));
    users_tail(&mut p);
    p
}

/// A compacted topic as the cleaner leaves it: the cleaned segment above, the dirty active
/// segment, `cleaner-offset-checkpoint` at the first dirty offset
/// (`LogCleanerManager.updateCheckpoints`), and the producer snapshots the broker took at
/// the roll to 9 and at shutdown, from the batches as written (the cleaner does not touch
/// producer state: `UnifiedLog.replaceSegments` only deletes the snapshot of the grouped
/// segment 5). So the snapshots keep P's original last timestamp, above the max timestamp of
/// its rebuilt batch. `LogCleanerTest.testCleanSegmentsRetainingLastEmptyBatch`,
/// `testEmptyBatchRemovalWithSequenceReuse`, `testCleanWithTransactionsSpanningSegments`.
#[test]
fn compacted_topic_as_the_cleaner_leaves_it() {
    let written = tempfile::tempdir().unwrap();
    let w = LogDirBuilder::new(1)
        .partition(users_as_written())
        .write(written.path())
        .unwrap();
    let w = &w.partitions[0];
    let cleaned_at = ts(11) + 60_000;
    let ld = LogDirBuilder::new(1).partition(users_cleaned(cleaned_at));
    let q = write_and_check(ld, |dir| {
        copy_snapshots(&w.dir, &dir.join("users-0"), &[9, 12]);
        std::fs::write(
            dir.join("cleaner-offset-checkpoint"),
            encode_offset_checkpoint(&[("users".into(), 0, 9)]),
        )
        .unwrap();
    });
    let m = &q.manifest.partitions[0];
    assert_eq!(m.batches[2].record_count, 0, "R's empty batch");
    assert_eq!(m.log_end_offset, 12);
    q.assert_quiet();
}

/// A transactional producer on a compacted topic.
const T: Producer = Producer {
    id: 60,
    epoch: 0,
    transactional: true,
};

/// `scores-0` as written: a plain batch of five keys with repeats, a committed transaction
/// whose only key is overwritten right after, two plain batches; active segment at 9.
fn scores(cleaned: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("scores", 0);
    let five = [("a", 1), ("b", 1), ("a", 2), ("c", 1), ("b", 2)];
    if cleaned {
        // a@0 and b@1 are superseded: the batch keeps a@2, c@3, b@4 and its base offset
        // 0, so its first record sits two offsets above the base
        let mut b = Batch::new(Producer::PLAIN).at(ts(0));
        for (i, (k, v)) in five.iter().enumerate().skip(2) {
            b = b.record(
                Rec::kv(k, v.to_string())
                    .at(ts(i as i64))
                    .offset_delta(i as i32),
            );
        }
        p.append(b);
    } else {
        let recs: Vec<(&str, Option<&str>)> = vec![
            ("a", Some("1")),
            ("b", Some("1")),
            ("a", Some("2")),
            ("c", Some("1")),
            ("b", Some("2")),
        ];
        p.append(kv_batch(Producer::PLAIN, -1, 0, &recs));
    }
    if cleaned {
        // T's only data batch lost x but is T's last data: kept as an empty transactional
        // header (`RETAIN_EMPTY`)
        p.append_spec(BatchSpec {
            base_offset: 5,
            partition_leader_epoch: 0,
            transactional: true,
            base_timestamp: -1,
            producer_id: T.id,
            producer_epoch: T.epoch,
            base_sequence: 0,
            overrides: klogscan::testkit::HeaderOverrides {
                last_offset_delta: Some(0),
                max_timestamp: Some(ts(5)),
                records_count: Some(0),
                ..Default::default()
            },
            ..BatchSpec::default()
        });
    } else {
        p.append(kv_batch(T, 0, 5, &[("x", Some("1"))]));
    }
    p.advance_time(ts(6) - p.now());
    p.commit(T, 4); // 6: the marker stays while T's batch is traversed
    p.append(kv_batch(Producer::PLAIN, -1, 7, &[("x", Some("2"))]));
    p.append(kv_batch(Producer::PLAIN, -1, 8, &[("d", Some("1"))]));
    p.roll();
    p.append(kv_batch(Producer::PLAIN, -1, 9, &[("e", Some("1"))]));
    p
}

/// Cleaned batches with holes and an emptied transaction: the cleaner rebuilds a v2 batch
/// with its original base offset, so the first record's offset delta need not be 0 and the
/// deltas need not be contiguous (`MemoryRecords.buildRetainedRecordsInto`,
/// `LogCleanerTest.testCleanSegments`); a transactional producer's last data batch whose
/// record was superseded is kept as an empty header, and its COMMIT marker is kept because
/// that batch is read on every round (`CleanedTransactionMetadata.onBatchRead` /
/// `onControlBatchRead`; `LogCleanerTest.testCommitMarkerRetentionWithEmptyBatch`-style).
#[test]
fn cleaned_batches_with_holes_and_an_emptied_transaction() {
    let written = tempfile::tempdir().unwrap();
    let w = LogDirBuilder::new(1)
        .partition(scores(false))
        .write(written.path())
        .unwrap();
    let ld = LogDirBuilder::new(1).partition(scores(true));
    let q = write_and_check(ld, |dir| {
        copy_snapshots(&w.partitions[0].dir, &dir.join("scores-0"), &[9, 10]);
        std::fs::write(
            dir.join("cleaner-offset-checkpoint"),
            encode_offset_checkpoint(&[("scores".into(), 0, 9)]),
        )
        .unwrap();
    });
    let m = &q.manifest.partitions[0];
    assert_eq!(
        (m.batches[0].base_offset, m.batches[0].record_count),
        (0, 3)
    );
    assert_eq!(m.batches[1].record_count, 0);
    q.assert_quiet();
}
