//! `ByteUtilsTest`: Kafka's varints and varlongs.

use klogscan_format::Problem;
use klogscan_format::bytes::{Cursor, put_uvarint, put_varint, put_varlong};
use proptest::prelude::*;

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
