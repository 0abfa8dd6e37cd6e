//! `LegacyRecordTest`, `SimpleLegacyRecordTest` (and `ByteUtilsTest.testReadUnsignedInt` on the
//! v2 header): fixed-width fields.

use super::batch;
use klogscan_format::{BatchView, Problem, TimestampType};

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
