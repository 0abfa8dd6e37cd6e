//! The testkit writer against two independent parties:
//! * `kafka-protocol` 0.18 decodes what the testkit encodes (every codec and framing);
//! * klogscan's reader (`format::Entries`, `BatchView`, `batch_records`) decodes what
//!   `kafka-protocol` encodes, and what the testkit encodes.
//!
//! Compressed reads through klogscan need `src/format/codec.rs`, written on another branch:
//! (`src/format/codec.rs`) — they run here too.
#![cfg(feature = "testkit")]

use bytes::Bytes;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression as KpCompression, Record as KpRecord, RecordBatchDecoder, RecordBatchEncoder,
    RecordEncodeOptions, TimestampType as KpTimestampType,
};
use klogscan::read::format::{
    self, BatchView, Compression, Control, Decompressor, Entries, LegacyMessage, Tail,
    TimestampType,
};
use klogscan::testkit::encode::{self, Codec};
use klogscan::testkit::{
    Batch, FaultKind, Legacy, Manifest, PartitionBuilder, Producer, Rec, Target,
};

mod kafka_protocol_to_reader;
mod legacy;
mod writer_to_reader;

const T0: i64 = 1_572_948_000_000;

/// What a test expects one record to read back as.
#[derive(Debug, Clone, PartialEq)]
struct ExpRec {
    offset: i64,
    sequence: i32,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
}

/// What a test expects one batch to read back as.
#[derive(Debug, Clone, PartialEq)]
struct ExpBatch {
    producer: Producer,
    control: bool,
    base_sequence: i32,
    leader_epoch: i32,
    base_timestamp: i64,
    records: Vec<ExpRec>,
}

fn records_of(n: usize, tag: &str) -> Vec<Rec> {
    (0..n)
        .map(|i| match i % 4 {
            0 => Rec::kv(format!("{tag}-k{i}"), format!("{tag}-value-{i}"))
                .header("trace-id", Some(format!("t{i}").as_bytes()))
                .header("null-header", None),
            1 => Rec::value(format!("{tag}-only-value-{i}")),
            2 => Rec::tombstone(format!("{tag}-k{i}")),
            _ => Rec::default().header("empty", Some(b"")),
        })
        .collect()
}

/// A partition with plain, idempotent and transactional batches in `codec`, and the
/// expectation for every batch.
fn scenario(codec: Codec) -> (PartitionBuilder, Vec<ExpBatch>) {
    let mut p = PartitionBuilder::new("cross", 0)
        .start_time(T0)
        .leader_epoch(7);
    let mut exp = Vec::new();
    let idem = Producer::idempotent(5001, 2);
    let txn = Producer::transactional(4001, 17);
    let plan: Vec<(Producer, usize, Option<i32>)> = vec![
        (Producer::PLAIN, 3, None),
        (idem, 5, None),
        (idem, 2, Some(i32::MAX)), // wraps to 0 inside the batch
        (txn, 4, None),
        (Producer::PLAIN, 1, None),
    ];
    for (k, (producer, n, seq)) in plan.into_iter().enumerate() {
        let ts = T0 + 10_000 * k as i64;
        let recs = records_of(n, &format!("b{k}"));
        let mut b = Batch::new(producer).codec(codec).at(ts);
        for r in &recs {
            b = b.record(r.clone());
        }
        if let Some(s) = seq {
            b = b.sequence(s);
        }
        let base = p.next_offset();
        p.append(b);
        let base_seq = if producer.id < 0 {
            -1
        } else {
            seq.unwrap_or(0) // each producer's first batch starts at 0
        };
        exp.push(ExpBatch {
            producer,
            control: false,
            base_sequence: base_seq,
            leader_epoch: 7,
            base_timestamp: ts,
            records: recs
                .iter()
                .enumerate()
                .map(|(i, r)| ExpRec {
                    offset: base + i as i64,
                    sequence: if base_seq < 0 {
                        -1
                    } else {
                        base_seq.wrapping_add(i as i32)
                    },
                    timestamp: ts + i as i64,
                    key: r.key.clone(),
                    value: r.value.clone(),
                    headers: r
                        .headers
                        .iter()
                        .map(|(k, v)| (String::from_utf8(k.clone()).unwrap(), v.clone()))
                        .collect(),
                })
                .collect(),
        });
    }
    (p, exp)
}

fn log_bytes(m: &Manifest) -> Vec<u8> {
    m.segments
        .iter()
        .flat_map(|(_, path)| std::fs::read(path).unwrap())
        .collect()
}

fn kp_codec(c: Codec) -> KpCompression {
    match c {
        Codec::None => KpCompression::None,
        Codec::Gzip => KpCompression::Gzip,
        Codec::SnappyXerial | Codec::SnappyRaw => KpCompression::Snappy,
        Codec::Lz4 | Codec::Lz4BrokenHc => KpCompression::Lz4,
        Codec::Zstd => KpCompression::Zstd,
    }
}

fn kp_name(c: KpCompression) -> &'static str {
    match c {
        KpCompression::None => "none",
        KpCompression::Gzip => "gzip",
        KpCompression::Snappy => "snappy",
        KpCompression::Lz4 => "lz4",
        KpCompression::Zstd => "zstd",
    }
}

/// Testkit → kafka-protocol, for one codec.
fn writer_decodes_with_kafka_protocol(codec: Codec) {
    let dir = tempfile::tempdir().unwrap();
    let (p, exp) = scenario(codec);
    let m = p.write(dir.path()).unwrap();
    let data = Bytes::from(log_bytes(&m));

    let infos = RecordBatchDecoder::decode_batch_info(&mut data.clone()).unwrap();
    assert_eq!(infos.len(), exp.len());
    for ((info, e), mb) in infos.iter().zip(&exp).zip(&m.batches) {
        assert_eq!(info.compression, kp_codec(codec));
        assert_eq!(info.min_offset, e.records[0].offset);
        assert_eq!(info.min_offset, mb.base_offset);
        assert_eq!(info.record_count as usize, e.records.len());
        assert_eq!(info.producer_id, e.producer.id);
        assert_eq!(info.producer_epoch, e.producer.epoch);
        assert_eq!(info.base_sequence, e.base_sequence);
        assert_eq!(info.base_sequence, mb.base_sequence);
        assert_eq!(info.transactional, e.producer.transactional);
        assert_eq!(info.control, e.control);
        assert!(!info.delete_horizon);
        assert_eq!(info.partition_leader_epoch, e.leader_epoch);
        assert_eq!(info.min_timestamp, e.base_timestamp);
        assert_eq!(info.timestamp_type, KpTimestampType::Creation);
        assert_eq!(info.version, 2);
    }

    let sets = RecordBatchDecoder::decode_all(&mut data.clone()).unwrap();
    assert_eq!(sets.len(), exp.len());
    for (set, e) in sets.iter().zip(&exp) {
        assert_eq!(set.compression, kp_codec(codec));
        assert_eq!(set.records.len(), e.records.len());
        for (r, x) in set.records.iter().zip(&e.records) {
            assert_eq!(r.offset, x.offset);
            assert_eq!(r.timestamp, x.timestamp);
            assert_eq!(r.producer_id, e.producer.id);
            assert_eq!(r.producer_epoch, e.producer.epoch);
            assert_eq!(r.transactional, e.producer.transactional);
            assert!(!r.control);
            if e.base_sequence >= 0 {
                // kafka-protocol adds without Kafka's wrap to 0; compare in its arithmetic
                assert_eq!(
                    r.sequence,
                    e.base_sequence
                        .wrapping_add((r.offset - e.records[0].offset) as i32)
                );
            }
            assert_eq!(r.key.as_deref(), x.key.as_deref());
            assert_eq!(r.value.as_deref(), x.value.as_deref());
            let h: Vec<(String, Option<Vec<u8>>)> = r
                .headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_ref().map(|b| b.to_vec())))
                .collect();
            assert_eq!(h, x.headers);
        }
    }
}

#[test]
fn writer_to_kafka_protocol_none() {
    writer_decodes_with_kafka_protocol(Codec::None);
}
#[test]
fn writer_to_kafka_protocol_gzip() {
    writer_decodes_with_kafka_protocol(Codec::Gzip);
}
#[test]
fn writer_to_kafka_protocol_snappy_xerial() {
    writer_decodes_with_kafka_protocol(Codec::SnappyXerial);
}
#[test]
fn writer_to_kafka_protocol_snappy_raw() {
    writer_decodes_with_kafka_protocol(Codec::SnappyRaw);
}
#[test]
fn writer_to_kafka_protocol_lz4() {
    // liblz4 (behind kafka-protocol) verifies the frame header checksum.
    writer_decodes_with_kafka_protocol(Codec::Lz4);
}
#[test]
fn writer_to_kafka_protocol_zstd() {
    writer_decodes_with_kafka_protocol(Codec::Zstd);
}

#[test]
fn broken_lz4_header_checksum_is_rejected_by_a_spec_decoder() {
    // The KAFKA-3160 HC really is wrong for a spec-following LZ4 decoder.
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("lz4", 0);
    p.append(
        Batch::new(Producer::PLAIN)
            .records(3)
            .codec(Codec::Lz4BrokenHc),
    );
    let m = p.write(dir.path()).unwrap();
    let data = Bytes::from(log_bytes(&m));
    assert!(RecordBatchDecoder::decode_all(&mut data.clone()).is_err());
    // and only the HC byte differs from a correct frame
    let bytes = log_bytes(&m);
    assert_eq!(&bytes[61..67], &[0x04, 0x22, 0x4d, 0x18, 0x60, 0x40]);
    assert_ne!(bytes[67], 0x82);
    assert_eq!(bytes[67], encode::lz4_header_checksum(0x60, 0x40, true));
}

#[test]
fn markers_decode_with_kafka_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let txn = Producer::transactional(4001, 17);
    let mut p = PartitionBuilder::new("m", 0).leader_epoch(3);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 7);
    p.abort(txn.bumped(), 9);
    let m = p.write(dir.path()).unwrap();
    assert_eq!(m.batches[1].size, 78);
    assert_eq!(m.batches[2].size, 78);
    let sets = RecordBatchDecoder::decode_all(&mut Bytes::from(log_bytes(&m))).unwrap();
    for (set, (epoch, kind, ce)) in sets[1..].iter().zip([(17i16, 1u8, 7i32), (18, 0, 9)]) {
        let r = &set.records[0];
        assert!(r.control && r.transactional);
        assert_eq!(
            (r.producer_id, r.producer_epoch, r.sequence),
            (4001, epoch, -1)
        );
        assert_eq!(r.key.as_deref(), Some(&[0, 0, 0, kind][..]));
        let mut v = vec![0u8, 0];
        v.extend_from_slice(&ce.to_be_bytes());
        assert_eq!(r.value.as_deref(), Some(&v[..]));
    }
}
