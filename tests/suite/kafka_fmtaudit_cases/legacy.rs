//! `LegacyRecordTest` and `SimpleLegacyRecordTest`: a magic 0/1 message as every reader
//! takes it — its key and value by their own lengths, its validity the size and the CRC.

use super::{TOPIC, write};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, BatchInfo, Codec, PartitionBuilder, Producer};

const T: i64 = DEFAULT_START_MS;

/// A magic 1 message at `offset`: CreateTime `T`, null key, value `value` whose length field
/// says `value_len`, then `trailing` bytes inside the message; its CRC-32 computed.
fn message(offset: i64, value: &[u8], value_len: i32, trailing: &[u8]) -> Vec<u8> {
    message_with(offset, 0, value, value_len, trailing)
}

/// [`message`] with the attributes byte `attributes` (its codec bits).
fn message_with(
    offset: i64,
    attributes: u8,
    value: &[u8],
    value_len: i32,
    trailing: &[u8],
) -> Vec<u8> {
    let mut m = vec![1u8, attributes];
    m.extend(T.to_be_bytes());
    m.extend((-1i32).to_be_bytes());
    m.extend(value_len.to_be_bytes());
    m.extend_from_slice(value);
    m.extend_from_slice(trailing);
    let mut e = offset.to_be_bytes().to_vec();
    e.extend(((m.len() + 4) as i32).to_be_bytes());
    e.extend(crc32fast::hash(&m).to_be_bytes());
    e.extend(m);
    e
}

/// `orders-0`: a magic 1 message at 0, `entry` at 1, a v2 batch at 2.
fn case(entry: Vec<u8>) -> super::Written {
    let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T + 10);
    for (offset, bytes) in [(0, message(0, b"first", 5, &[])), (1, entry)] {
        let size = bytes.len() as u64;
        let info = BatchInfo {
            base_offset: offset,
            last_offset: offset,
            position: 0,
            size,
            file: Default::default(),
            segment_base: 0,
            magic: 1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            record_count: 1,
            codec: Codec::None,
            transactional: false,
            control: None,
            coordinator_epoch: None,
            partition_leader_epoch: -1,
            first_timestamp: T,
            max_timestamp: T,
        };
        p.append_raw(bytes, info);
    }
    p.append(Batch::new(Producer::PLAIN).records(1));
    write(p)
}

/// `LegacyRecordTest.testFields`, `SimpleLegacyRecordTest.testIsValidWithTooSmallBuffer` and
/// `testIsValidWithChecksumMismatch`: a magic 1 message's validity is its size (at least 14)
/// and its CRC (`LegacyRecord.isValid`, `ensureValid`), and its key and value are read by
/// their own lengths (`Utils.sizeDelimited`); the leader's validator checks no more
/// (`LogValidator.validateRecord`). A message whose value "value" is followed by 3 bytes
/// inside it (covered by its CRC) is read whole by every reader: the log ends at 3,
/// `--deep` says nothing, `dump` prints it (`valueSize: 5`) — was an `invalid_batch`
/// ("size" mismatch). So is the same message inside a gzip wrapper (relative offset 0, the
/// wrapper at 1): the deep iterator reads each inner message by its size and its fields by
/// their lengths. Near miss: its value length 9, running past the message —
/// `sizeDelimited` throws, consumers fail (`invalid_batch` with or without `--deep`, at 1;
/// recovery keeps it: its CRC holds).
#[test]
fn bytes_after_a_legacy_value_are_read_past() {
    let w = case(message(1, b"value", 5, &[1, 2, 3]));
    w.assert_quiet();
    let r = w.scan(true);
    assert_eq!(
        (r.partitions[0].records, r.partitions[0].log_end_offset),
        (3, Some(3))
    );
    let (_, records) = w.dump();
    assert!(
        records.len() == 3 && records[1].contains("keySize: -1 valueSize: 5"),
        "{records:#?}"
    );
    let inner = message(0, b"value", 5, &[1, 2, 3]);
    let set = klogscan::testkit::encode::compress(Codec::Gzip, &inner);
    let w = case(message_with(1, 1, &set, set.len() as i32, &[]));
    w.assert_quiet();
    assert_eq!(w.scan(true).partitions[0].records, 3);
    let near = case(message(1, b"value", 9, &[1, 2, 3]));
    for deep in [false, true] {
        assert_eq!(
            near.loud_kinds(deep),
            vec![(klogscan::finding::Kind::InvalidBatch, Some(1))],
            "deep {deep}"
        );
    }
    let v = near.verify();
    assert!(v.partitions[0].prediction.truncation.is_none());
}

/// `AbstractLegacyRecordBatchTest.testSetLastOffsetCompressed`: a magic 1 gzip wrapper of
/// three messages whose offset is set to 500 (its last offset: the leader's
/// `setLastOffset`), the inner offsets relative (0, 1, 2): the messages are 498, 499 and
/// 500 (`dump`), the log ends at 501, nothing raised. Near miss: the wrapper's offset
/// field rewritten to 501 afterwards (the CRC-32 starts at the magic byte, so it still
/// holds) — the same messages read as 499 to 501.
#[test]
fn a_legacy_wrappers_offset_places_its_relative_messages() {
    let case = |rewrite: Option<i64>| {
        let mut p = PartitionBuilder::new(TOPIC, 0)
            .start_offset(498)
            .start_time(T);
        p.legacy(
            klogscan::testkit::Legacy::v1()
                .values(["a", "b", "c"])
                .codec(Codec::Gzip),
        );
        let w = write(p);
        if let Some(offset) = rewrite {
            let (_, f) = w.m.segments.last().unwrap();
            let mut bytes = std::fs::read(f).unwrap();
            bytes[..8].copy_from_slice(&offset.to_be_bytes());
            std::fs::write(f, bytes).unwrap();
        }
        w
    };
    let offsets = |w: &super::Written| -> Vec<String> {
        let (_, records) = w.dump();
        (records.iter())
            .map(|l| l.split_whitespace().nth(2).unwrap().to_string())
            .collect()
    };
    let w = case(None);
    w.assert_quiet();
    assert_eq!(offsets(&w), ["498", "499", "500"]);
    assert_eq!(w.scan(true).partitions[0].log_end_offset, Some(501));
    let near = case(Some(501));
    assert_eq!(offsets(&near), ["499", "500", "501"]);
    assert_eq!(near.scan(true).partitions[0].log_end_offset, Some(502));
}
