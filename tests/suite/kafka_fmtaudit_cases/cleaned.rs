//! `MemoryRecordsTest`'s `filterTo` family: the batches the log cleaner writes back
//! (`MemoryRecords.filterTo`), as a compacted segment holds them.

use super::{TOPIC, write};
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
