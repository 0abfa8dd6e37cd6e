//! `DefaultRecordBatchTest`: the v2 batch header the writers build or rewrite in place,
//! as batches on disk.

use super::{TOPIC, append_edited, plain, rec, write};
use crate::common::cases::entry;
use klogscan::finding::Kind;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, BatchSpec, Codec, HeaderOverrides, PartitionBuilder, Producer};

const T: i64 = DEFAULT_START_MS;

/// The producer of `testWriteEmptyHeader` (`producerId 23423, epoch 145`).
fn producer(transactional: bool) -> Producer {
    Producer {
        id: 23423,
        epoch: 145,
        transactional,
    }
}

/// `writeEmptyHeader`'s batch: base offset 15, last offset 37, partition leader epoch 15,
/// base sequence 983, no record, baseTimestamp -1 and maxTimestamp `T`.
fn empty_header(transactional: bool, control: bool, log_append_time: bool) -> BatchSpec {
    let p = producer(transactional);
    BatchSpec {
        base_offset: 15,
        partition_leader_epoch: 15,
        log_append_time,
        transactional,
        control,
        base_timestamp: -1,
        producer_id: p.id,
        producer_epoch: p.epoch,
        base_sequence: 983,
        records: vec![],
        overrides: HeaderOverrides {
            last_offset_delta: Some(22),
            max_timestamp: Some(T),
            ..HeaderOverrides::default()
        },
        ..BatchSpec::default()
    }
}

/// `orders-0` from offset 15: the empty header batch, then (for a data batch) the
/// producer's next batch of one record at `next_sequence` and `epoch`, committed when
/// transactional.
fn empty_then_next(
    transactional: bool,
    control: bool,
    log_append_time: bool,
    next: Option<(i32, i16)>,
) -> super::Written {
    let mut p = PartitionBuilder::new(TOPIC, 0)
        .start_offset(15)
        .start_time(T + 1000)
        .leader_epoch(15);
    p.append_spec(empty_header(transactional, control, log_append_time));
    if let Some((seq, epoch)) = next {
        let next = producer(transactional).with_epoch(epoch);
        p.append(Batch::new(next).sequence(seq).records(1));
        if transactional {
            p.commit(next, 0);
        }
    }
    write(p)
}

/// `DefaultRecordBatchTest.testWriteEmptyHeader` (and `MemoryRecordsTest`'s
/// `testFilterToEmptyBatchRetention`, whose cleaner keeps such a batch for its producer):
/// a 61-byte batch of no record, base offset 15, last offset 37, producer 23423 at epoch
/// 145 from sequence 983, under CreateTime and LogAppendTime, transactional or not. On
/// disk it is a whole batch: the log ends at 38, nothing is read of it with `--deep`
/// (`DefaultRecordBatch.iterator` returns no record for a count of 0), and the load takes
/// its producer fields (`ProducerAppendInfo.appendDataBatch` with `lastSequence` = 983 + 22
/// = 1005, last offset 37; a transactional one opens a transaction at 15). The producer's
/// next batch at 1006 (committed when transactional) is quiet. Near miss: that batch at
/// epoch 144, below the empty batch's — the leader refuses it (`producer_epoch_regression`
/// at 38). (A sequence gap after it is not reported: the empty batch is the cleaner's trace,
/// and the cleaner may have removed whole batches after it — docs/findings.md,
/// `sequence_gap`.) The control variants (an empty marker batch the cleaner left) are
/// skipped by the load (`ProducerAppendInfo.append`: "an empty control batch means the
/// entire transaction has been cleaned"): quiet, the log ending at 38.
#[test]
fn an_empty_header_batch_carries_its_producers_sequences() {
    for log_append_time in [false, true] {
        for transactional in [false, true] {
            let what = format!("LogAppendTime {log_append_time}, transactional {transactional}");
            let alone = empty_then_next(transactional, false, log_append_time, None);
            let r = alone.state();
            assert_eq!(r.partitions[0].log_end_offset, Some(38), "{what}");
            let open = transactional.then_some(15);
            assert_eq!(entry(&r, 23423), (145, 1005, 37, open), "{what}");
            let w = empty_then_next(transactional, false, log_append_time, Some((1006, 145)));
            w.assert_quiet();
            let r = w.state();
            let end = 39 + transactional as i64;
            assert_eq!(r.partitions[0].log_end_offset, Some(end), "{what}");
            assert_eq!(entry(&r, 23423), (145, 1006, 38, None), "{what}");
            let near = empty_then_next(transactional, false, log_append_time, Some((1006, 144)));
            assert!(
                near.loud_kinds(false)
                    .contains(&(Kind::ProducerEpochRegression, Some(38))),
                "{what}: {:?}",
                near.loud_kinds(false)
            );
            let c = empty_then_next(transactional, true, log_append_time, None);
            c.assert_quiet();
            assert_eq!(
                c.scan(true).partitions[0].log_end_offset,
                Some(38),
                "{what}"
            );
        }
    }
}

/// `DefaultRecordBatchTest.buildDefaultRecordBatchWithSequenceWrapAround` (and
/// `testIncrementSequence`): producer 23423 writes three records from sequence
/// `Integer.MAX_VALUE - 1`; their sequences are MAX - 1, MAX and 0, the batch's last
/// sequence 0. The producer's next batch at sequence 1 is in sequence
/// (`ProducerAppendInfo.checkSequence`): nothing raised, the producer at sequence 1. Near
/// miss: the next batch at 2 (`sequence_gap`). `buildDefaultRecordBatchWithProducerId`'s
/// batch (from 983, two records) is the same without the wrap: 983, 984, next 985.
#[test]
fn a_sequence_wraps_past_int_max_to_zero() {
    let case = |first: i32, n: usize, next: i32| {
        let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T);
        p.append(Batch::new(producer(false)).sequence(first).records(n));
        p.append(Batch::new(producer(false)).sequence(next).records(1));
        write(p)
    };
    let w = case(i32::MAX - 1, 3, 1);
    w.assert_quiet();
    assert_eq!(entry(&w.state(), 23423), (145, 1, 3, None));
    let (_, records) = w.dump();
    let seqs: Vec<&str> = (records.iter())
        .map(|l| {
            l.split(" sequence: ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, ["2147483646", "2147483647", "0", "1"]);
    let near = case(i32::MAX - 1, 3, 2);
    assert_eq!(near.loud_kinds(false), vec![(Kind::SequenceGap, Some(3))]);
    let w = case(983, 2, 985);
    w.assert_quiet();
    assert_eq!(entry(&w.state(), 23423), (145, 985, 2, None));
}

/// `DefaultRecordBatchTest.testSetPartitionLeaderEpoch` and `testSetLastOffset`: the
/// leader rewrites a batch's partition leader epoch (500) and base offset (so that its
/// last offset is 500: base 498) in place, without a new CRC — the CRC-32C covers the
/// bytes from the attributes on. The rewritten batch is valid: recovery keeps it, its
/// records are 498, 499, 500 (`dump` prints them with the epoch 500), nothing is raised.
/// Near miss: the same rewrite of the attributes (bit 3, LogAppendTime) without a new CRC
/// fails `ensureValid` (`crc_mismatch` at 498).
#[test]
fn offset_and_epoch_rewritten_in_place_keep_the_crc() {
    let spec = plain(
        0,
        T,
        Codec::None,
        vec![
            rec(0, 0, "a", "1"),
            rec(1, 1, "b", "2"),
            rec(2, 2, "c", "3"),
        ],
    );
    let case = |attributes: bool| {
        let mut p = PartitionBuilder::new(TOPIC, 0)
            .start_offset(498)
            .start_time(T + 10)
            .leader_epoch(500);
        let moved = BatchSpec {
            base_offset: 498,
            partition_leader_epoch: 500,
            ..spec.clone()
        };
        append_edited(&mut p, &moved, |b| {
            // The CRC the batch had before the rewrite (base offset 0, epoch 0).
            let before = spec.encode();
            b[17..21].copy_from_slice(&before[17..21]);
            if attributes {
                b[22] |= 0x08;
            }
        });
        p.append(Batch::new(Producer::PLAIN).records(1));
        write(p)
    };
    let w = case(false);
    w.assert_quiet();
    let r = w.scan(true);
    assert_eq!(
        (r.partitions[0].records, r.partitions[0].log_end_offset),
        (4, Some(502))
    );
    let (batches, records) = w.dump();
    assert!(
        batches[0].starts_with("baseOffset: 498 lastOffset: 500 count: 3")
            && batches[0].contains("partitionLeaderEpoch: 500")
            && batches[0].contains("isvalid: true"),
        "{batches:#?}"
    );
    let offsets: Vec<&str> = (records.iter().take(3))
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(offsets, ["498", "499", "500"]);
    let near = case(true);
    assert!(
        near.loud_kinds(false)
            .contains(&(Kind::CrcMismatch, Some(498))),
        "{:?}",
        near.loud_kinds(false)
    );
}

/// `DefaultRecordBatchTest.testSetLogAppendTime`: a CreateTime batch (records at T+1, T+2,
/// T+3) rewritten by `setMaxTimestamp(LOG_APPEND_TIME, T+15)` — the attribute bit and
/// maxTimestamp, with a new CRC. Every record reads as stamped T+15 (`dump`:
/// `LogAppendTime: T+15`), and `--deep` holds no maxTimestamp against the records.
/// Near miss: the same maxTimestamp under CreateTime — the newest record is T+3, which the
/// leader would have written (`invalid_batch` with `--deep`).
#[test]
fn log_append_time_set_in_place_stamps_every_record() {
    let case = |log_append_time: bool| {
        let mut spec = plain(
            0,
            T + 1,
            Codec::None,
            vec![
                rec(0, 0, "a", "1"),
                rec(1, 1, "b", "2"),
                rec(2, 2, "c", "3"),
            ],
        );
        spec.log_append_time = log_append_time;
        spec.overrides.max_timestamp = Some(T + 15);
        let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T + 20);
        p.append_spec(spec);
        write(p)
    };
    let w = case(true);
    w.assert_quiet();
    let (batches, records) = w.dump();
    assert!(
        batches[0].contains(&format!("LogAppendTime: {}", T + 15)),
        "{batches:#?}"
    );
    assert_eq!(records.len(), 3);
    for l in &records {
        assert!(l.contains(&format!("LogAppendTime: {} ", T + 15)), "{l}");
    }
    let near = case(false);
    let f = near.only_deep_invalid();
    assert_eq!(f.offset, Some(0));
    assert!(f.message.contains("maxTimestamp"), "{}", f.message);
}
