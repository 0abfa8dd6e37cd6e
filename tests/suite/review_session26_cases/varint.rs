//! `Cursor::uvarint` (one- and two-byte inline paths, then `uvarint_long`) against Kafka's
//! `ByteUtils.readUnsignedVarint(ByteBuffer)`: up to five bytes, seven bits each, low group
//! first; a fifth byte with its high bit set is `IllegalArgumentException` ("varint is too
//! long"); bytes ending first is `BufferUnderflowException`. Kafka accepts non-minimal
//! encodings (`0x80 0x00` is 0 in two bytes) and keeps only the low four bits of the fifth
//! byte (`tmp << 28`).

use klogscan::read::format::bytes::Cursor;
use klogscan::read::format::{FormatError, Problem};
use proptest::prelude::*;

/// What Kafka's reader gives at `pos` of `buf`.
#[derive(Debug, PartialEq, Eq)]
enum Kafka {
    Value {
        value: u32,
        taken: usize,
    },
    /// `BufferUnderflowException` after `read` bytes, each with the continuation bit.
    Underflow {
        read: usize,
    },
    /// `IllegalArgumentException`: the fifth byte's high bit is set.
    TooLong,
}

/// A model of `ByteUtils.readUnsignedVarint`, written from its definition (not the loop
/// klogscan uses): the value is built as Java's `int` is, shifts dropping the high bits.
fn kafka_read_unsigned_varint(buf: &[u8], pos: usize) -> Kafka {
    let mut value: u32 = 0;
    for (i, shift) in [0u32, 7, 14, 21, 28].into_iter().enumerate() {
        let Some(&b) = buf.get(pos + i) else {
            return Kafka::Underflow { read: i };
        };
        value |= u32::from(b & 0x7f).wrapping_shl(shift);
        if b < 0x80 {
            return Kafka::Value {
                value,
                taken: i + 1,
            };
        }
    }
    Kafka::TooLong
}

/// klogscan's answer at `pos` of `buf` (the cursor moved there with `take`), as the model's.
fn klogscan_read(buf: &[u8], pos: usize, base: u64) -> (Kafka, Option<FormatError>) {
    let mut c = Cursor::new(buf, base, "record");
    c.take(pos, "prefix").unwrap();
    match c.uvarint("keyLength") {
        Ok(value) => (
            Kafka::Value {
                value,
                taken: c.position() - pos,
            },
            None,
        ),
        Err(e) => {
            let k = match e.problem {
                Problem::Truncated { available, .. } => Kafka::Underflow {
                    read: available as usize,
                },
                Problem::VarintTooLong => Kafka::TooLong,
                other => panic!("{other:?}"),
            };
            // A failed read leaves the cursor where it was.
            assert_eq!(c.position(), pos);
            (k, Some(e))
        }
    }
}

fn assert_as_kafka(buf: &[u8], pos: usize, base: u64) {
    let want = kafka_read_unsigned_varint(buf, pos);
    let (got, err) = klogscan_read(buf, pos, base);
    assert_eq!(got, want, "{buf:02x?} at {pos}");
    if let Some(e) = err {
        // The error names the field and the varint's first byte (base + position).
        assert_eq!((e.structure, e.field), ("record", "keyLength"));
        assert_eq!(e.position, base + pos as u64, "{buf:02x?} at {pos}");
        if let Problem::Truncated { needed, available } = e.problem {
            assert_eq!(needed, available + 1);
        }
    }
}

/// `ByteUtilsTest.testUnsignedVarintSerde` / `testInvalidVarint`-style edge cases: the
/// two-byte path's boundaries (the largest two-byte value, a non-minimal zero), a buffer
/// that ends after the first byte (the inline path must not take it: underflow after one
/// byte, at the varint's first byte), five bytes with the last high bit set, and a fifth
/// byte whose high bits Kafka drops.
#[test]
fn uvarint_edges_read_as_kafka_reads_them() {
    let cases: [&[u8]; 12] = [
        &[],
        &[0x00],
        &[0x7f],
        &[0x80],
        &[0x80, 0x00],
        &[0xff, 0x7f],
        &[0x80, 0x80],
        &[0x80, 0x80, 0x01],
        &[0xff, 0xff, 0x7f, 0x00],
        &[0xff, 0xff, 0xff, 0xff, 0x7f],
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0x00],
        &[0x80, 0x80, 0x80, 0x80],
    ];
    for buf in cases {
        for prefix in [0usize, 3] {
            let mut b = vec![0x11; prefix];
            b.extend_from_slice(buf);
            assert_as_kafka(&b, prefix, 1000);
        }
    }
    assert_eq!(
        kafka_read_unsigned_varint(&[0x80, 0x00], 0),
        Kafka::Value { value: 0, taken: 2 }
    );
    assert_eq!(
        kafka_read_unsigned_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f], 0),
        Kafka::Value {
            value: u32::MAX,
            taken: 5
        }
    );
    assert_eq!(
        kafka_read_unsigned_varint(&[0x80], 0),
        Kafka::Underflow { read: 1 }
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Random buffers, biased to continuation bits, read varint after varint from a random
    /// start until the first error: every value, every length, and the error's kind,
    /// field and position are Kafka's.
    #[test]
    fn uvarint_reads_random_buffers_as_kafka(
        buf in proptest::collection::vec(
            prop_oneof![any::<u8>(), 0x80u8..=0xff, Just(0x80u8), Just(0x00u8)], 0..24),
        start in 0usize..4,
        base in 0u64..1 << 40,
    ) {
        let mut pos = start.min(buf.len());
        loop {
            let want = kafka_read_unsigned_varint(&buf, pos);
            let (got, _) = klogscan_read(&buf, pos, base);
            prop_assert_eq!(&got, &want, "{:02x?} at {}", buf, pos);
            assert_as_kafka(&buf, pos, base);
            match want {
                Kafka::Value { taken, .. } => pos += taken,
                _ => break,
            }
        }
    }
}
