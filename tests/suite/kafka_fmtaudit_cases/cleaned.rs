//! `MemoryRecordsTest`'s `filterTo` family: the batches the log cleaner writes back
//! (`MemoryRecords.filterTo`), as a compacted segment holds them.

use super::{TOPIC, write};
use crate::common::cases::entry;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{
    Batch, BatchSpec, Codec, HeaderOverrides, PartitionBuilder, Producer, RecordSpec,
};

const T: i64 = DEFAULT_START_MS;

/// The batch `testFilterToAlreadyCompactedLog` keeps: of records at 5 (null key), 8 (key
/// "1") and 10 (null key), the keyed one — offsets 0 to 10 kept from the original batch
/// (`filterTo` preserves a v2 batch's first and last offsets), one record at offset delta
/// `delta`, stamped T + 11 — under `codec`, at partition leader epoch 67 (kept:
/// `testFilterToPreservesPartitionLeaderEpoch`), under CreateTime or, with its append time
/// T + 50 as maxTimestamp, LogAppendTime (kept: `testFilterToPreservesLogAppendTime`).
fn retained(codec: Codec, log_append_time: bool, delta: i32) -> BatchSpec {
    BatchSpec {
        base_offset: 0,
        partition_leader_epoch: 67,
        codec,
        log_append_time,
        base_timestamp: T + 11,
        records: vec![RecordSpec {
            offset_delta: delta,
            key: Some(b"1".to_vec()),
            value: Some(b"b".to_vec()),
            ..RecordSpec::default()
        }],
        overrides: HeaderOverrides {
            last_offset_delta: Some(10),
            max_timestamp: Some(if log_append_time { T + 50 } else { T + 11 }),
            ..HeaderOverrides::default()
        },
        ..BatchSpec::default()
    }
}

/// `MemoryRecordsTest.testFilterToAlreadyCompactedLog`, `testFilterTo`,
/// `testFilterToPreservesPartitionLeaderEpoch`, `testFilterToPreservesLogAppendTime`: the
/// cleaner's batch of one record over offsets 0–10, uncompressed, gzip and lz4, under
/// CreateTime and LogAppendTime, then a producer's record at 11. A compacted batch holds
/// fewer records than its offset range (`DefaultRecordBatch` reads the count, not the
/// range; the consumer moves on to `nextOffset` 11): `--deep` reads the one record at
/// offset 8 and says nothing, `dump` prints it at 8 with its time (CreateTime T + 11, or
/// the batch's T + 50 under LogAppendTime) and the batch from 0 to 10 at epoch 67, the log
/// ends at 12. Near miss: the record's offset delta 11, past the batch's last offset — no
/// writer leaves it (`invalid_batch` with `--deep`).
#[test]
fn a_cleaned_batch_keeps_its_offset_range_epoch_and_timestamp_type() {
    for codec in [Codec::None, Codec::Gzip, Codec::Lz4] {
        for log_append_time in [false, true] {
            let what = format!("{codec:?}, LogAppendTime {log_append_time}");
            let case = |delta: i32| {
                let mut p = PartitionBuilder::new(TOPIC, 0)
                    .start_time(T + 100)
                    .leader_epoch(67);
                p.append_spec(retained(codec, log_append_time, delta));
                p.append(Batch::new(Producer::PLAIN).records(1));
                write(p)
            };
            let w = case(8);
            w.assert_quiet();
            let r = w.scan(true);
            assert_eq!(
                (r.partitions[0].records, r.partitions[0].log_end_offset),
                (2, Some(12)),
                "{what}"
            );
            let (batches, records) = w.dump();
            assert!(
                batches[0].starts_with("baseOffset: 0 lastOffset: 10 count: 1")
                    && batches[0].contains("partitionLeaderEpoch: 67"),
                "{what}: {batches:#?}"
            );
            let time = match log_append_time {
                true => format!("LogAppendTime: {}", T + 50),
                false => format!("CreateTime: {}", T + 11),
            };
            assert!(
                records[0].starts_with(&format!("| offset: 8 {time} ")),
                "{what}: {records:#?}"
            );
            let near = case(11);
            let f = near.only_deep_invalid();
            assert_eq!(f.offset, Some(0), "{what}");
            assert!(
                f.message.contains("record offsetDelta 11 outside [0, 10]"),
                "{what}: {}",
                f.message
            );
        }
    }
}

/// One of `testFilterToPreservesProducerInfo`'s retained batches: offsets `base` to
/// `base + 2`, the records kept at `kept` offset deltas (keys `k<delta>`), under `producer`
/// from `base_sequence`.
fn kept_of_three(base: i64, producer: Producer, base_sequence: i32, kept: &[i32]) -> BatchSpec {
    BatchSpec {
        base_offset: base,
        partition_leader_epoch: 0,
        transactional: producer.transactional,
        base_timestamp: T + 10 + base,
        producer_id: producer.id,
        producer_epoch: producer.epoch,
        base_sequence,
        records: (kept.iter())
            .map(|&d| RecordSpec {
                offset_delta: d,
                timestamp_delta: i64::from(d),
                key: Some(format!("k{d}").into_bytes()),
                value: Some(b"v".to_vec()),
                ..RecordSpec::default()
            })
            .collect(),
        overrides: HeaderOverrides {
            last_offset_delta: Some(2),
            ..HeaderOverrides::default()
        },
        ..BatchSpec::default()
    }
}

/// `MemoryRecordsTest.testFilterToPreservesProducerInfo`: the cleaner keeps each batch's
/// producer id, epoch, base sequence and transactional bit, and its offset range, so a
/// record's sequence is the base plus its offset delta and the batch's last sequence the
/// base plus lastOffsetDelta, whatever records are left. A log of the test's three
/// batches made consecutive: plain 0–2 (the record at 1 left), producer 23 at epoch 5 from
/// sequence 10 over 3–5 (4 and 5 left: sequences 11 and 12), transactional producer 99384
/// at epoch 234 from 15 over 6–8 (6 and 7 left: 15 and 16), its COMMIT at 9. `dump` prints
/// those sequences (-1 for the plain record); the load leaves producer 23 at sequence 12,
/// last offset 5, and 99384 at 17 (its batch's last sequence), last offset 8, its
/// transaction committed; quiet. Near miss: without the COMMIT, 99384's transaction is
/// open from 6 and holds the last stable offset there.
#[test]
fn a_cleaned_batch_keeps_its_producer_and_sequence_range() {
    let (idem, txn) = (
        Producer::idempotent(23, 5),
        Producer::transactional(99384, 234),
    );
    let case = |commit: bool| {
        let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T + 100);
        p.append_spec(kept_of_three(0, Producer::PLAIN, -1, &[1]));
        p.append_spec(kept_of_three(3, idem, 10, &[1, 2]));
        p.append_spec(kept_of_three(6, txn, 15, &[0, 1]));
        if commit {
            p.commit(txn, 0);
        }
        write(p)
    };
    let w = case(true);
    w.assert_quiet();
    let (_, records) = w.dump();
    let seqs: Vec<(String, String)> = (records.iter())
        .map(|l| {
            let offset = l.split_whitespace().nth(2).unwrap().to_string();
            let seq = l.split(" sequence: ").nth(1).unwrap();
            (offset, seq.split(' ').next().unwrap().to_string())
        })
        .collect();
    let want = [
        ("1", "-1"),
        ("4", "11"),
        ("5", "12"),
        ("6", "15"),
        ("7", "16"),
    ];
    let want: Vec<(String, String)> = (want.iter())
        .map(|(o, s)| (o.to_string(), s.to_string()))
        .collect();
    assert_eq!(seqs[..5], want[..]);
    let r = w.state();
    assert_eq!(entry(&r, 23), (5, 12, 5, None));
    assert_eq!(entry(&r, 99384), (234, 17, 8, None));
    assert_eq!(r.partitions[0].last_stable_offset, Some(10));
    let near = case(false).state();
    assert_eq!(entry(&near, 99384), (234, 17, 8, Some(6)));
    assert_eq!(near.partitions[0].last_stable_offset, Some(6));
}
