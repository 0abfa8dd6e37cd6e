//! The record format as Kafka's clients-side unit tests state it, byte by byte
//! (apache/kafka trunk of 2024-10: clients/src/test/java/org/apache/kafka/common/utils/
//! `ByteUtilsTest`, clients/src/test/java/org/apache/kafka/common/record/
//! `DefaultRecordBatchTest` and `DefaultRecordTest`), the methods no earlier test cited.
//! Each test reads what the Kafka test builds with the format crate's views and asserts
//! Kafka's answer — the value, or the refusal with the structure, field and byte position
//! klogscan names — with a near miss that flips it. What a whole segment makes of the same
//! bytes (`scan`, `verify`, `dump`) is `tests/suite/kafka_fmtaudit_cases/`.

use klogscan_format::bytes::{
    Cursor, decrement_sequence, increment_sequence, put_uvarint, put_varint, put_varlong,
};
use klogscan_format::{BatchView, Problem, Records, TimestampType};
use proptest::prelude::*;

// ----- ByteUtilsTest ----------------------------------------------------------------------

/// `ByteUtilsTest.testVarintSerde`'s table: each value and its bytes.
const VARINTS: &[(i32, &[u8])] = &[
    (0, &[0x00]),
    (-1, &[0x01]),
    (1, &[0x02]),
    (63, &[0x7E]),
    (-64, &[0x7F]),
    (64, &[0x80, 0x01]),
    (-65, &[0x81, 0x01]),
    (8191, &[0xFE, 0x7F]),
    (-8192, &[0xFF, 0x7F]),
    (8192, &[0x80, 0x80, 0x01]),
    (-8193, &[0x81, 0x80, 0x01]),
    (1048575, &[0xFE, 0xFF, 0x7F]),
    (-1048576, &[0xFF, 0xFF, 0x7F]),
    (1048576, &[0x80, 0x80, 0x80, 0x01]),
    (-1048577, &[0x81, 0x80, 0x80, 0x01]),
    (134217727, &[0xFE, 0xFF, 0xFF, 0x7F]),
    (-134217728, &[0xFF, 0xFF, 0xFF, 0x7F]),
    (134217728, &[0x80, 0x80, 0x80, 0x80, 0x01]),
    (-134217729, &[0x81, 0x80, 0x80, 0x80, 0x01]),
    (i32::MAX, &[0xFE, 0xFF, 0xFF, 0xFF, 0x0F]),
    (i32::MIN, &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
];

/// `ByteUtilsTest.testVarlongSerde`'s table beyond the int range.
const VARLONGS: &[(i64, &[u8])] = &[
    (17179869183, &[0xFE, 0xFF, 0xFF, 0xFF, 0x7F]),
    (-17179869184, &[0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
    (17179869184, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    (-17179869185, &[0x81, 0x80, 0x80, 0x80, 0x80, 0x01]),
    (2199023255551, &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
    (-2199023255552, &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
    (2199023255552, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    (-2199023255553, &[0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    (281474976710655, &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
    (
        -281474976710656,
        &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
    ),
    (
        281474976710656,
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ),
    (
        -281474976710657,
        &[0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ),
    (
        36028797018963967,
        &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
    ),
    (
        -36028797018963968,
        &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
    ),
    (
        36028797018963968,
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ),
    (
        -36028797018963969,
        &[0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ),
    (
        4611686018427387903,
        &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
    ),
    (
        -4611686018427387904,
        &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
    ),
    (
        4611686018427387904,
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ),
    (
        -4611686018427387905,
        &[0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ),
    (
        i64::MAX,
        &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
    ),
    (
        i64::MIN,
        &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
    ),
];

/// `ByteUtilsTest.testVarintSerde` and `testVarlongSerde`: every value of Kafka's tables
/// reads from its bytes, taking them all, and is written as them; the int table read as
/// varlongs gives the same values (Kafka's varlong test repeats it). Near miss: each
/// encoding without its last byte is refused — `Truncated` at the field's first byte, in
/// the structure and field asked for.
#[test]
fn varints_and_varlongs_read_kafkas_tables() {
    for &(v, bytes) in VARINTS {
        let mut c = Cursor::new(bytes, 40, "record");
        assert_eq!(c.varint("offsetDelta").unwrap(), v, "{bytes:02x?}");
        assert_eq!(c.remaining(), 0);
        let mut c = Cursor::new(bytes, 40, "record");
        assert_eq!(c.varlong("timestampDelta").unwrap(), v as i64);
        let mut out = Vec::new();
        put_varint(&mut out, v);
        assert_eq!(out, bytes);
    }
    for &(v, bytes) in VARLONGS {
        let mut c = Cursor::new(bytes, 40, "record");
        assert_eq!(c.varlong("timestampDelta").unwrap(), v, "{bytes:02x?}");
        assert_eq!(c.remaining(), 0);
        let mut out = Vec::new();
        put_varlong(&mut out, v);
        assert_eq!(out, bytes);
    }
    let all = VARINTS
        .iter()
        .map(|&(_, b)| b)
        .chain(VARLONGS.iter().map(|&(_, b)| b));
    for bytes in all.filter(|b| b.len() > 1) {
        let cut = &bytes[..bytes.len() - 1];
        let e = Cursor::new(cut, 40, "record")
            .varlong("timestampDelta")
            .unwrap_err();
        assert_eq!(
            (e.structure, e.field, e.position),
            ("record", "timestampDelta", 40)
        );
        assert!(matches!(e.problem, Problem::Truncated { .. }), "{e}");
    }
}

/// `ByteUtilsTest.testInvalidVarint` and `testInvalidVarlong` (the ones of `ByteUtils`, not
/// `DefaultRecordTest`'s): a varint whose fifth byte still has its continuation bit
/// (`ff ff ff ff ff 01`), a varlong whose tenth byte has it (`ff` × 10, `01`): Kafka throws
/// `IllegalArgumentException` — `VarintTooLong` at the field's first byte. Near miss: the
/// longest encodings Kafka takes, five and ten bytes (`i32::MIN`, `i64::MIN`), read.
#[test]
fn a_continuation_bit_past_the_longest_encoding_is_refused() {
    let varint = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01];
    let e = Cursor::new(&varint, 7, "record")
        .varint("length")
        .unwrap_err();
    assert_eq!(
        (e.field, e.position, e.problem),
        ("length", 7, Problem::VarintTooLong)
    );
    let mut varlong = vec![0xFF; 10];
    varlong.push(0x01);
    let e = Cursor::new(&varlong, 7, "record")
        .varlong("timestampDelta")
        .unwrap_err();
    assert_eq!(
        (e.field, e.position, e.problem),
        ("timestampDelta", 7, Problem::VarintTooLong)
    );
    let mut c = Cursor::new(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x01], 0, "record");
    assert_eq!(c.varint("length").unwrap(), i32::MIN);
    assert_eq!(c.position(), 5);
    let mut ten = vec![0xFF; 9];
    ten.extend([0x01, 0x01]);
    let mut c = Cursor::new(&ten, 0, "record");
    assert_eq!(c.varlong("timestampDelta").unwrap(), i64::MIN);
    assert_eq!(c.position(), 10);
}

/// Kafka's "old well-known" byte counts (`ByteUtilsTest.testSizeOfUnsignedVarint`,
/// `testSizeOfVarlong`).
fn kafka_size_of_uvarint(mut v: u32) -> usize {
    let mut n = 1;
    while v & 0xffff_ff80 != 0 {
        n += 1;
        v >>= 7;
    }
    n
}

fn kafka_size_of_varlong(value: i64) -> usize {
    let mut v = ((value << 1) ^ (value >> 63)) as u64;
    let mut n = 1;
    while v & 0xffff_ffff_ffff_ff80 != 0 {
        n += 1;
        v >>= 7;
    }
    n
}

/// `ByteUtilsTest.testSizeOfUnsignedVarint` and `testSizeOfVarlong`: the writers take
/// Kafka's byte counts (the int range in steps of 13 from each size's edge, every power of
/// two for varlongs, and 0), and the reader takes exactly as many. Near miss: a count one
/// byte short is a truncation.
#[test]
fn varint_sizes_are_kafkas() {
    let edges = [
        0u32, 127, 128, 16383, 16384, 2097151, 2097152, 268435455, 268435456,
    ];
    for edge in edges {
        for v in (edge.saturating_sub(13 * 20)..edge.saturating_add(13 * 20)).step_by(13) {
            let mut out = Vec::new();
            put_uvarint(&mut out, v);
            assert_eq!(out.len(), kafka_size_of_uvarint(v), "{v}");
            let mut c = Cursor::new(&out, 0, "t");
            assert_eq!((c.uvarint("v").unwrap(), c.position()), (v, out.len()));
            let short = Cursor::new(&out[..out.len() - 1], 0, "t").uvarint("v");
            assert!(short.is_err(), "{v}");
        }
    }
    let mut l = 1i64;
    while l > 0 {
        for v in [l, 0] {
            let mut out = Vec::new();
            put_varlong(&mut out, v);
            assert_eq!(out.len(), kafka_size_of_varlong(v), "{v}");
            let mut c = Cursor::new(&out, 0, "t");
            assert_eq!((c.varlong("v").unwrap(), c.position()), (v, out.len()));
        }
        l <<= 1;
    }
}

proptest! {
    /// `ByteUtilsTest.testCorrectnessWriteUnsignedVarint`, `…ReadUnsignedVarint`,
    /// `…WriteUnsignedVarlong`, `…ReadUnsignedVarlong`: Kafka holds its unrolled reader and
    /// writer to a simple loop over random values; here the writer's bytes are the simple
    /// loop's and the reader gives the value back, taking them all, for any int, unsigned
    /// int and long.
    #[test]
    fn varints_round_trip_any_value(u in any::<u32>(), i in any::<i32>(), l in any::<i64>()) {
        let mut out = Vec::new();
        put_uvarint(&mut out, u);
        prop_assert_eq!(out.len(), kafka_size_of_uvarint(u));
        let mut c = Cursor::new(&out, 0, "t");
        prop_assert_eq!(c.uvarint("v").unwrap(), u);
        prop_assert_eq!(c.remaining(), 0);
        let mut out = Vec::new();
        put_varint(&mut out, i);
        let mut c = Cursor::new(&out, 0, "t");
        prop_assert_eq!(c.varint("v").unwrap(), i);
        prop_assert_eq!(c.remaining(), 0);
        let mut out = Vec::new();
        put_varlong(&mut out, l);
        prop_assert_eq!(out.len(), kafka_size_of_varlong(l));
        let mut c = Cursor::new(&out, 0, "t");
        prop_assert_eq!(c.varlong("v").unwrap(), l);
        prop_assert_eq!(c.remaining(), 0);
    }
}

// ----- DefaultRecordBatchTest -------------------------------------------------------------

/// A v2 batch of `count` records (`records` already encoded), its fields as given and its
/// CRC computed.
#[allow(clippy::too_many_arguments)]
fn batch(
    base_offset: i64,
    epoch: i32,
    attributes: i16,
    last_offset_delta: i32,
    base_ts: i64,
    max_ts: i64,
    producer: (i64, i16, i32),
    count: i32,
    records: &[u8],
) -> Vec<u8> {
    let mut b = base_offset.to_be_bytes().to_vec();
    b.extend(((49 + records.len()) as i32).to_be_bytes());
    b.extend(epoch.to_be_bytes());
    b.push(2);
    b.extend([0; 4]);
    b.extend(attributes.to_be_bytes());
    b.extend(last_offset_delta.to_be_bytes());
    b.extend(base_ts.to_be_bytes());
    b.extend(max_ts.to_be_bytes());
    b.extend(producer.0.to_be_bytes());
    b.extend(producer.1.to_be_bytes());
    b.extend(producer.2.to_be_bytes());
    b.extend(count.to_be_bytes());
    b.extend_from_slice(records);
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// One record: key `k`, value `v`, no header, at the deltas given.
fn record(ts_delta: i64, offset_delta: i32, k: &[u8], v: &[u8]) -> Vec<u8> {
    let mut body = vec![0u8];
    put_varlong(&mut body, ts_delta);
    put_varint(&mut body, offset_delta);
    for f in [k, v] {
        put_varint(&mut body, f.len() as i32);
        body.extend_from_slice(f);
    }
    put_varint(&mut body, 0);
    let mut r = Vec::new();
    put_varint(&mut r, body.len() as i32);
    r.extend(body);
    r
}

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
/// `lastSequence` as it is (`ProducerAppendInfo.appendDataBatch`). `BatchView::last_sequence`
/// gives -1 for every negative base; `dump` already prints Kafka's value (it calls
/// `java_increment_sequence`). Near miss: base -1 — -1 for both.
#[test]
#[ignore = "divergence: BatchView::last_sequence is -1 for every negative base sequence, DefaultRecordBatch.lastSequence only for -1; the replay (src/partition) reads it, so the fix is not contained in the format layer"]
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

// ----- DefaultRecordTest ------------------------------------------------------------------

/// `DefaultRecordTest`'s test record: length 100, attributes 0, timestampDelta 2,
/// offsetDelta 1, then `rest` varints and `raw` bytes, padded to the 100-byte body.
fn kafka_record(rest: &[i32], raw: &[u8]) -> Vec<u8> {
    let mut body = vec![0u8];
    put_varlong(&mut body, 2);
    put_varint(&mut body, 1);
    for &r in rest {
        put_varint(&mut body, r);
    }
    body.extend_from_slice(raw);
    body.resize(100, 0);
    let mut r = Vec::new();
    put_varint(&mut r, 100);
    r.extend(body);
    r
}

/// `DefaultRecordTest.testInvalidKeySizePartial`, `testInvalidValueSize(Partial)`,
/// `testInvalidNumHeadersPartial` (the second half of `testInvalidNumHeaders` too: more
/// headers than bytes), `testInvalidHeaderKeyPartial`, `testNullHeaderKey(Partial)`,
/// `testInvalidHeaderValue(Partial)`, `testUnderflowReadingTimestamp`,
/// `testUnderflowReadingVarlong`: each refused (`InvalidRecordException`), at the field and
/// byte klogscan names (positions inside the records section, here at base 1000). Near
/// miss: the same record with fields that fit its body — read, and then the leftover
/// padding is refused as Kafka's size check refuses it, at the record's end.
#[test]
fn records_refused_by_read_from_name_their_field_and_byte() {
    let head = 2 + 1 + 1 + 1; // length varint (2 bytes for 100), attributes, two deltas
    let cases: Vec<(&str, Vec<u8>, &str, u64)> = vec![
        (
            "testInvalidKeySizePartial",
            kafka_record(&[105], &[]),
            "key",
            head + 2,
        ),
        (
            "testInvalidValueSize",
            kafka_record(&[-1, 105], &[]),
            "value",
            head + 3,
        ),
        (
            "testInvalidNumHeadersPartial",
            kafka_record(&[-1, -1, -1], &[]),
            "headersCount",
            head + 3,
        ),
        (
            "testInvalidNumHeaders (count 100)",
            kafka_record(&[-1, -1, 100], &[]),
            "headersCount",
            head + 4,
        ),
        (
            "testInvalidHeaderKeyPartial",
            kafka_record(&[-1, -1, 1, 105], &[]),
            "headerKey",
            head + 5,
        ),
        (
            "testNullHeaderKey",
            kafka_record(&[-1, -1, 1, -1], &[]),
            "headerKeyLength",
            head + 4,
        ),
        (
            "testInvalidHeaderValue",
            kafka_record(&[-1, -1, 1, 1], &[1, 210, 1]),
            "headerValue",
            head + 7,
        ),
        (
            "testUnderflowReadingTimestamp",
            vec![2, 0],
            "timestampDelta",
            2,
        ),
        (
            "testUnderflowReadingVarlong",
            vec![4, 0, 0xb8],
            "timestampDelta",
            2,
        ),
    ];
    for (what, bytes, field, at) in cases {
        let e = Records::new(&bytes, 1, 1000).next().unwrap().unwrap_err();
        assert_eq!((e.structure, e.field), ("record", field), "{what}: {e}");
        assert_eq!(e.position, 1000 + at, "{what}: {e}");
    }
    // Near miss: a null key and value, no header — the body's fields end after 6 bytes,
    // the declared 100 do not: "expected 100, found 6" at the fields' end.
    let bytes = kafka_record(&[-1, -1, 0], &[]);
    let e = Records::new(&bytes, 1, 1000).next().unwrap().unwrap_err();
    assert_eq!((e.field, e.position), ("length", 1000 + head + 3));
    assert_eq!(
        e.problem,
        Problem::Mismatch {
            expected: 100,
            found: 6
        }
    );
    // …and one whose length is its fields' (a header "k" with a null value): read whole.
    let mut body = vec![0u8];
    put_varlong(&mut body, 2);
    put_varint(&mut body, 1);
    for r in [-1, -1, 1, 1] {
        put_varint(&mut body, r);
    }
    body.push(b'k');
    put_varint(&mut body, -1);
    let mut whole = Vec::new();
    put_varint(&mut whole, body.len() as i32);
    whole.extend(body);
    let r = Records::new(&whole, 1, 1000).next().unwrap().unwrap();
    let h: Vec<_> = r.headers().collect();
    assert_eq!((h.len(), h[0].key, h[0].value), (1, &b"k"[..], None));
    assert_eq!((r.key_size(), r.value_size()), (-1, -1));
}

// ----- MemoryRecordsTest: the framing of the first batch ---------------------------------

/// `MemoryRecordsTest.testNextBatchSize`: a batch's size is known from its first 17 bytes
/// (`firstBatchSize`: null before them), and a size below the 14-byte minimum is refused
/// (`CorruptRecordException`). The walk frames the whole batch as one entry of its size;
/// a chunk of 17 bytes or fewer asks for more from the batch's position; the size's low
/// byte zeroed is a corrupt entry at byte 0 (`SizeBelowMinimum`). Magic 10 under the CRC
/// computed before it, which `firstBatchSize` (the client's reader) refuses, is kept by the
/// broker's `FileLogInputStream` (the CRC-32C starts after the magic): an entry, which the
/// scan reports (`kafka_fmtaudit_cases::streams`). Near miss: magic 10 and the CRC off —
/// garbage (`UnknownMagic`).
#[test]
fn the_first_batch_frames_as_kafka_sizes_it() {
    use klogscan_format::{Entries, Tail, Unframed};
    let b = batch(
        0,
        0,
        8,
        0,
        10,
        10,
        (-1, -1, -1),
        1,
        &record(0, 0, b"", b"abc"),
    );
    let mut e = Entries::new(&b, 0);
    assert_eq!(e.next().map(|x| x.len()), Some(b.len()));
    assert!(e.next().is_none());
    assert_eq!(e.tail(), Some(Tail::Clean));
    for cut in [1, 12, 17] {
        let mut c = Entries::chunk(&b[..cut], 0);
        assert!(c.next().is_none());
        assert_eq!(c.need_more(), Some(0), "{cut}");
    }
    let mut magic10 = b.clone();
    magic10[16] = 10;
    let mut e = Entries::new(&magic10, 0);
    assert_eq!(e.next().map(|x| x.magic()), Some(10));
    magic10[20] ^= 1;
    let mut e = Entries::new(&magic10, 0);
    assert!(e.next().is_none());
    assert!(matches!(
        e.tail(),
        Some(Tail::Garbage {
            position: 0,
            reason: Unframed::UnknownMagic,
            ..
        })
    ));
    let mut small = b.clone();
    small[11] = 0;
    let mut e = Entries::new(&small, 0);
    assert!(e.next().is_none());
    assert!(matches!(
        e.tail(),
        Some(Tail::CorruptEntry {
            position: 0,
            size: 0,
            reason: Unframed::SizeBelowMinimum,
            ..
        })
    ));
}

// ----- FileRecordsTest --------------------------------------------------------------------

/// `FileRecordsTest.testAppendProtectsFromOverflow`: `FileRecords.append` refuses records
/// that would take the segment past `Integer.MAX_VALUE` bytes, so no entry of a segment ends
/// beyond 2^31 - 1. An entry whose size field says it does (here at byte 2^31 - 100, 200
/// bytes long) is a corrupt length, not a batch cut by a crash: `CorruptEntry` at its
/// position (`SizePastLargestSegment`). Near miss: the same entry at 2^31 - 300 ends
/// inside the limit and is an entry.
#[test]
fn no_entry_ends_past_the_largest_segment() {
    use klogscan_format::{Entries, Tail, Unframed};
    let recs = [record(0, 0, b"k", &[7u8; 100]), record(1, 1, b"l", b"v")].concat();
    let b = batch(0, 0, 0, 1, 10, 11, (-1, -1, -1), 2, &recs);
    assert!(b.len() > 100 && b.len() < 300);
    let past = i32::MAX as u64 - 100;
    let mut e = Entries::new(&b, past);
    assert!(e.next().is_none());
    assert!(matches!(
        e.tail(),
        Some(Tail::CorruptEntry { position, reason: Unframed::SizePastLargestSegment, .. }) if position == past
    ));
    let inside = i32::MAX as u64 - 300;
    let mut e = Entries::new(&b, inside);
    assert_eq!(e.next().map(|x| x.position), Some(inside));
    assert_eq!(e.tail(), None);
    assert!(e.next().is_none());
    assert_eq!(e.tail(), Some(Tail::Clean));
}

// ----- LegacyRecordTest, SimpleLegacyRecordTest -------------------------------------------

/// A legacy message entry at `offset`: magic, attributes, timestamp (magic 1), key and
/// value (null when `None`), then `trailing` bytes inside the message; its CRC-32 computed.
fn legacy(
    offset: i64,
    magic: u8,
    attributes: u8,
    ts: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    trailing: &[u8],
) -> Vec<u8> {
    let mut m = vec![magic, attributes];
    if magic == 1 {
        m.extend(ts.to_be_bytes());
    }
    for f in [key, value] {
        match f {
            None => m.extend((-1i32).to_be_bytes()),
            Some(b) => {
                m.extend((b.len() as i32).to_be_bytes());
                m.extend_from_slice(b);
            }
        }
    }
    m.extend_from_slice(trailing);
    let mut e = offset.to_be_bytes().to_vec();
    e.extend(((m.len() + 4) as i32).to_be_bytes());
    e.extend(crc32fast::hash(&m).to_be_bytes());
    e.extend(m);
    e
}

/// `LegacyRecordTest.testFields` (magic 0 and 1, CreateTime and LogAppendTime, null and
/// non-null keys and values): every field reads back as written — magic 0 has no
/// timestamp (-1, `NoTimestampType`) whatever its attribute bit 3. `LegacyRecord.key` and
/// `value` read each field by its length (`Utils.sizeDelimited`), and `isValid` checks the
/// size (at least 14) and the CRC only (`SimpleLegacyRecordTest.testIsValidWithTooSmallBuffer`,
/// `testIsValidWithChecksumMismatch`): bytes after the value are read past by every reader,
/// so a message with 3 of them is read too (was: refused, "size" mismatch). Near miss: a
/// value length running 1 byte past the message — refused at the value, with the bytes it
/// needs and those present.
#[test]
fn legacy_fields_read_by_their_lengths() {
    use klogscan_format::LegacyMessage;
    use klogscan_format::batch::RawEntry;
    for magic in [0u8, 1] {
        for attributes in [0u8, 8] {
            for (key, value) in [
                (None, None),
                (Some(&b"key"[..]), None),
                (None, Some(&b"value"[..])),
                (Some(&b"key"[..]), Some(&b"value"[..])),
            ] {
                for trailing in [&[][..], &[1, 2, 3][..]] {
                    let what = format!(
                        "magic {magic} attributes {attributes} {key:?} {value:?} {trailing:?}"
                    );
                    let e = legacy(5, magic, attributes, 1234, key, value, trailing);
                    let m = LegacyMessage::new(RawEntry {
                        position: 100,
                        bytes: &e,
                    })
                    .expect(&what);
                    assert!(m.is_valid(), "{what}");
                    assert_eq!(
                        (m.key(), m.value(), m.magic(), m.offset()),
                        (key, value, magic, 5),
                        "{what}"
                    );
                    let (ts, ts_type) = match (magic, attributes) {
                        (0, _) => (-1, TimestampType::NoTimestampType),
                        (_, 8) => (1234, TimestampType::LogAppendTime),
                        _ => (1234, TimestampType::CreateTime),
                    };
                    assert_eq!((m.timestamp(), m.timestamp_type()), (ts, ts_type), "{what}");
                }
            }
        }
        let mut e = legacy(5, magic, 0, 1234, None, Some(b"value"), &[]);
        let at = e.len() - 5 - 4;
        e[at..at + 4].copy_from_slice(&6i32.to_be_bytes());
        let n = e.len();
        let crc = crc32fast::hash(&e[16..n]);
        e[12..16].copy_from_slice(&crc.to_be_bytes());
        let err = LegacyMessage::new(RawEntry {
            position: 100,
            bytes: &e,
        })
        .unwrap_err();
        assert_eq!((err.structure, err.field), ("legacy message", "value"));
        assert_eq!(err.position, 100 + at as u64 + 4);
        assert_eq!(
            err.problem,
            Problem::Truncated {
                needed: 6,
                available: 5
            }
        );
    }
}

/// `ByteUtilsTest.testReadUnsignedInt` (and `testReadInt`): the header's 4-byte fields are
/// big-endian; the CRC is unsigned (`DefaultRecordBatch.checksum` reads it with
/// `readUnsignedInt`: `ff ff ff ff` is 4294967295, as kafka-dump-log prints it), the others
/// signed (`ff ff ff ff` as a partition leader epoch is -1).
#[test]
fn the_crc_is_unsigned_and_the_other_ints_signed() {
    let mut b = batch(0, -1, 0, 0, 0, 0, (-1, -1, -1), 0, &[]);
    b[17..21].copy_from_slice(&[0xff; 4]);
    let v = BatchView::new(&b, 0).unwrap();
    assert_eq!((v.crc(), v.partition_leader_epoch()), (4294967295, -1));
    assert!(!v.is_valid());
}
