//! `DefaultRecordBatchTest`: the v2 header as the writers build and rewrite it.

use super::{batch, record};
use klogscan_format::bytes::{decrement_sequence, increment_sequence};
use klogscan_format::{BatchView, Problem, Records, TimestampType};

/// `DefaultRecordBatchTest.testWriteEmptyHeader`: `writeEmptyHeader`'s 61 bytes for base
/// offset 15, last offset 37, producer 23423 at epoch 145 from sequence 983, partition
/// leader epoch 15, each timestamp type, transactional and control or not: the view reads
/// every field as Kafka's batch does — last sequence 983 + 22, baseTimestamp -1 — and
/// holds no record (`DefaultRecordBatch.iterator` returns none for a count of 0; the empty
/// control batch has no marker). Near miss: a count of 1 over the same empty records
/// section — "premature EOF" at the record's length, byte 0 of the section.
#[test]
fn an_empty_header_reads_its_fields_and_no_record() {
    for (ts_type, bit) in [
        (TimestampType::CreateTime, 0),
        (TimestampType::LogAppendTime, 8),
    ] {
        for transactional in [true, false] {
            for control in [true, false] {
                let attributes = bit | (transactional as i16) << 4 | (control as i16) << 5;
                let b = batch(
                    15,
                    15,
                    attributes,
                    22,
                    -1,
                    1_700_000_000_000,
                    (23423, 145, 983),
                    0,
                    &[],
                );
                assert_eq!(b.len(), 61);
                let v = BatchView::new(&b, 0).unwrap();
                assert!(v.is_valid());
                assert_eq!((v.producer_id(), v.producer_epoch()), (23423, 145));
                assert_eq!((v.base_sequence(), v.last_sequence()), (983, 983 + 22));
                assert_eq!((v.base_offset(), v.last_offset()), (15, 37));
                assert_eq!(v.partition_leader_epoch(), 15);
                assert_eq!(v.is_transactional(), transactional);
                assert_eq!(v.is_control(), control);
                assert_eq!(v.timestamp_type(), ts_type);
                assert_eq!(
                    (v.base_timestamp(), v.max_timestamp()),
                    (-1, 1_700_000_000_000)
                );
                assert_eq!(v.records_count(), 0);
                let mut dec = klogscan_format::Decompressor::new(1 << 20);
                assert_eq!(
                    klogscan_format::batch_records(&v, &mut dec)
                        .unwrap()
                        .count(),
                    0
                );
                assert!(klogscan_format::batch_control(&v).unwrap().is_none());
                // The same count of 0 over a record: nothing Kafka's iterators read, named.
                let rec = record(0, 0, b"a", b"v");
                let over = batch(
                    15,
                    15,
                    attributes,
                    22,
                    -1,
                    1_700_000_000_000,
                    (23423, 145, 983),
                    0,
                    &rec,
                );
                let ov = BatchView::new(&over, 0).unwrap();
                let e = Records::new(ov.records_bytes(), 0, 61)
                    .next()
                    .unwrap()
                    .unwrap_err();
                assert_eq!(
                    (e.structure, e.field, e.position),
                    ("record", "recordsCount", 61)
                );
                assert_eq!(
                    e.problem,
                    Problem::Invalid(
                        "records count 0 over records bytes: Kafka's record iterators read none of them"
                    )
                );
                let near = batch(
                    15,
                    15,
                    attributes,
                    22,
                    -1,
                    1_700_000_000_000,
                    (23423, 145, 983),
                    1,
                    &[],
                );
                let nv = BatchView::new(&near, 0).unwrap();
                let e = Records::new(nv.records_bytes(), 1, 0)
                    .next()
                    .unwrap()
                    .unwrap_err();
                assert_eq!((e.structure, e.field, e.position), ("record", "length", 0));
                assert_eq!(
                    e.problem,
                    Problem::Invalid("incorrect declared batch size, premature EOF reached")
                );
            }
        }
    }
}

/// `DefaultRecordBatchTest.buildDefaultRecordBatch`, `buildDefaultRecordBatchWithProducerId`,
/// `testSizeInBytes`: the builder's batch of records at offsets 1234567 and 1234568
/// (timestamps 1 and 2) reads as Kafka's: valid, last offset 1234568, maxTimestamp 2, no
/// producer (sequences -1) or producer 23423 from 983 (last 984), and its size is the
/// header plus its records. Near miss: its records count set to 3 without a third record
/// (the CRC recomputed): premature EOF at the third record's position.
#[test]
fn a_built_batch_reads_back_its_fields() {
    let recs = [record(0, 0, b"a", b"v"), record(1, 1, b"b", b"v")].concat();
    for producer in [(-1, -1, -1), (23423, 145, 983)] {
        let b = batch(1234567, -1, 0, 1, 1, 2, producer, 2, &recs);
        let v = BatchView::new(&b, 0).unwrap();
        assert!(v.is_valid());
        assert_eq!(v.size(), 61 + recs.len());
        assert_eq!(
            (v.base_offset(), v.last_offset(), v.max_timestamp()),
            (1234567, 1234568, 2)
        );
        assert_eq!(v.producer_id(), producer.0);
        let last = if producer.2 < 0 { -1 } else { 984 };
        assert_eq!((v.base_sequence(), v.last_sequence()), (producer.2, last));
        let rs: Vec<_> = Records::new(v.records_bytes(), 2, 61)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rs.len(), 2);
        assert_eq!(
            (rs[1].offset_delta, rs[1].timestamp_delta, rs[1].key),
            (1, 1, Some(&b"b"[..]))
        );
        let near = batch(1234567, -1, 0, 1, 1, 2, producer, 3, &recs);
        let nv = BatchView::new(&near, 0).unwrap();
        assert!(nv.is_valid());
        let e = Records::new(nv.records_bytes(), 3, 61)
            .nth(2)
            .unwrap()
            .unwrap_err();
        assert_eq!((e.field, e.position), ("length", 61 + recs.len() as u64));
    }
}

/// `DefaultRecordBatchTest.testSetLastOffset`, `testSetPartitionLeaderEpoch`,
/// `testSetLogAppendTime`: the leader rewrites the base offset and the partition leader
/// epoch in place without a new CRC — the CRC-32C covers the bytes from the attributes on,
/// so the batch stays valid (`isValid`), its last offset 500 from base 498. The timestamp
/// type and maxTimestamp are rewritten with a new CRC (`setMaxTimestamp`); under
/// LogAppendTime each record's time is the batch's maxTimestamp (15). Near miss: the
/// attributes or maxTimestamp changed without a new CRC fail it.
#[test]
fn fields_before_the_attributes_are_outside_the_crc() {
    let recs = [
        record(0, 0, b"a", b"1"),
        record(1, 1, b"b", b"2"),
        record(2, 2, b"c", b"3"),
    ]
    .concat();
    let b = batch(0, 0, 0, 2, 1, 3, (-1, -1, -1), 3, &recs);
    let mut moved = b.clone();
    moved[..8].copy_from_slice(&498i64.to_be_bytes());
    moved[12..16].copy_from_slice(&500i32.to_be_bytes());
    let v = BatchView::new(&moved, 0).unwrap();
    assert!(v.is_valid());
    assert_eq!(
        (v.base_offset(), v.last_offset(), v.partition_leader_epoch()),
        (498, 500, 500)
    );
    let lat = batch(0, 0, 8, 2, 1, 15, (-1, -1, -1), 3, &recs);
    let v = BatchView::new(&lat, 0).unwrap();
    assert!(v.is_valid());
    assert_eq!(
        (v.timestamp_type(), v.max_timestamp()),
        (TimestampType::LogAppendTime, 15)
    );
    for (at, flip) in [(22, 0x08u8), (42, 0x01)] {
        let mut near = b.clone();
        near[at] ^= flip;
        assert!(!BatchView::new(&near, 0).unwrap().is_valid(), "byte {at}");
    }
}

/// `DefaultRecordBatchTest.testIncrementSequence` and `testDecrementSequence` (and
/// `buildDefaultRecordBatchWithSequenceWrapAround`'s last sequence): Kafka's values.
/// No sequence (-1) stays -1 (`lastSequence` of a batch without a producer).
#[test]
fn sequence_arithmetic_is_kafkas() {
    assert_eq!(increment_sequence(10, 5), 15);
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 5, 10), 4);
    assert_eq!(increment_sequence(i32::MAX - 1, 2), 0);
    assert_eq!(decrement_sequence(10, 5), 5);
    assert_eq!(decrement_sequence(0, 1), i32::MAX);
    assert_eq!(decrement_sequence(5, 10), i32::MAX - 4);
    assert_eq!(increment_sequence(-1, 7), -1);
    let recs = [
        record(0, 0, b"a", b"v"),
        record(1, 1, b"b", b"v"),
        record(2, 2, b"c", b"v"),
    ]
    .concat();
    let b = batch(
        1234567,
        -1,
        0,
        2,
        1,
        3,
        (23423, 145, i32::MAX - 1),
        3,
        &recs,
    );
    assert_eq!(BatchView::new(&b, 0).unwrap().last_sequence(), 0);
}

/// `DefaultRecordBatch.lastSequence` returns `NO_SEQUENCE` for a base sequence of -1 only;
/// any other base, negative ones too, goes through `incrementSequence` (base -5, last
/// offset delta 2: -3). No producer writes such a base (the leader refuses a negative base
/// sequence with a producer id, `LogValidator.validateBatch`), but the load takes the batch's
/// `lastSequence` as it is (`ProducerAppendInfo.appendDataBatch`). Fixed (session 34):
/// `BatchView::last_sequence` gave -1 for every negative base (`dump` printed Kafka's
/// value). Near miss: base -1 — -1 for both.
#[test]
fn a_negative_base_sequence_other_than_minus_1_is_incremented() {
    let recs = [
        record(0, 0, b"a", b"v"),
        record(1, 1, b"b", b"v"),
        record(2, 2, b"c", b"v"),
    ]
    .concat();
    let near = batch(0, -1, 0, 2, 1, 3, (23423, 145, -1), 3, &recs);
    assert_eq!(BatchView::new(&near, 0).unwrap().last_sequence(), -1);
    let b = batch(0, -1, 0, 2, 1, 3, (23423, 145, -5), 3, &recs);
    assert_eq!(BatchView::new(&b, 0).unwrap().last_sequence(), -3);
}
