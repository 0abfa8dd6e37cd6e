//! `DefaultRecordTest`: one record's bytes `DefaultRecord.readFrom` refuses.

use klogscan_format::bytes::{put_varint, put_varlong};
use klogscan_format::{Problem, Records};

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
/// byte klogscan names (positions inside the records section, here at base 1000): a length
/// running past the record at the bytes it would take, a refused value (a negative header
/// count or key length, a count above the bytes left) at its own first byte (was: the byte
/// after it). Near miss: the same record with fields that fit its body — read, and then
/// the leftover padding is refused as Kafka's size check refuses it, at the record's end.
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
            head + 2,
        ),
        (
            "testInvalidNumHeaders (count 100)",
            kafka_record(&[-1, -1, 100], &[]),
            "headersCount",
            head + 2,
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
            head + 3,
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
    // A length past the section (`testInvalidSizeOfBodyInBytes`, cited before): named at
    // the length's first byte.
    let mut long = Vec::new();
    put_varint(&mut long, 200);
    long.extend([0u8; 10]);
    let e = Records::new(&long, 1, 1000).next().unwrap().unwrap_err();
    assert_eq!((e.field, e.position), ("length", 1000));
    assert_eq!(e.problem, Problem::Invalid("invalid record size"));
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
