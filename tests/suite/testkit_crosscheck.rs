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

// ---------------------------------------------------------------------------------------
// kafka-protocol → klogscan reader
// ---------------------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
fn kp_record(
    offset: i64,
    seq: i32,
    pid: i64,
    epoch: i16,
    txn: bool,
    ts: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&str, Option<&[u8]>)],
) -> KpRecord {
    let mut r = KpRecord {
        transactional: txn,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 11,
        producer_id: pid,
        producer_epoch: epoch,
        timestamp_type: KpTimestampType::Creation,
        offset,
        sequence: seq,
        timestamp: ts,
        key: key.map(Bytes::copy_from_slice),
        value: value.map(Bytes::copy_from_slice),
        headers: Default::default(),
    };
    for (k, v) in headers {
        r.headers.insert(
            StrBytes::from_string(k.to_string()),
            v.map(Bytes::copy_from_slice),
        );
    }
    r
}

/// Three batches' worth of kafka-protocol records (it splits batches where producer
/// fields change).
fn kp_records() -> Vec<KpRecord> {
    let mut v = Vec::new();
    for i in 0..3 {
        // kafka-protocol groups records while (offset − sequence) stays constant, so
        // plain records carry −1, 0, 1 … to give baseSequence −1 in one batch.
        v.push(kp_record(
            100 + i,
            -1 + i as i32,
            -1,
            -1,
            false,
            T0 + i * 5,
            Some(format!("k{i}").as_bytes()),
            Some(b"plain"),
            &[("a", Some(b"1"))],
        ));
    }
    for i in 0..4 {
        v.push(kp_record(
            103 + i,
            40 + i as i32,
            7001,
            3,
            false,
            T0 + 1000 + i,
            None,
            if i == 2 { None } else { Some(b"idem") },
            &[("x", None), ("y", Some(b"yy"))],
        ));
    }
    for i in 0..2 {
        v.push(kp_record(
            107 + i,
            i as i32,
            8001,
            0,
            true,
            T0 + 2000 - i, // max timestamp is the first record's
            Some(b"t"),
            Some(b"txn"),
            &[],
        ));
    }
    v
}

fn kafka_protocol_to_reader(codec: KpCompression) {
    let recs = kp_records();
    let mut buf = bytes::BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        recs.iter(),
        &RecordEncodeOptions {
            version: 2,
            compression: codec,
        },
    )
    .unwrap();
    let data = buf.freeze();
    let mut entries = Entries::new(&data, 0);
    let batches: Vec<BatchView> = entries.by_ref().map(|e| e.as_v2().unwrap()).collect();
    assert_eq!(entries.tail(), Some(Tail::Clean));
    assert_eq!(batches.len(), 3);
    let groups = [&recs[0..3], &recs[3..7], &recs[7..9]];
    let mut dec = Decompressor::default();
    for (b, group) in batches.iter().zip(groups) {
        let first = &group[0];
        assert!(b.is_valid(), "CRC");
        assert_eq!(b.magic(), 2);
        assert_eq!(b.base_offset(), first.offset);
        assert_eq!(b.last_offset(), group.last().unwrap().offset);
        assert_eq!(b.records_count() as usize, group.len());
        assert_eq!(b.partition_leader_epoch(), 11);
        assert_eq!(b.producer_id(), first.producer_id);
        assert_eq!(b.producer_epoch(), first.producer_epoch);
        assert_eq!(b.base_sequence(), first.sequence);
        assert_eq!(b.is_transactional(), first.transactional);
        assert!(!b.is_control());
        assert!(!b.has_delete_horizon());
        assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
        assert_eq!(b.compression().name(), kp_name(codec));
        let min_ts = group.iter().map(|r| r.timestamp).min().unwrap();
        let max_ts = group.iter().map(|r| r.timestamp).max().unwrap();
        assert_eq!(b.base_timestamp(), min_ts);
        assert_eq!(b.max_timestamp(), max_ts);
        let read: Vec<_> = format::batch_records(b, &mut dec)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(read.len(), group.len());
        for (r, k) in read.iter().zip(group) {
            assert_eq!(b.base_offset() + r.offset_delta as i64, k.offset);
            assert_eq!(b.base_timestamp() + r.timestamp_delta, k.timestamp);
            assert_eq!(r.key, k.key.as_deref());
            assert_eq!(r.value, k.value.as_deref());
            let h: Vec<(&[u8], Option<&[u8]>)> = r.headers().map(|h| (h.key, h.value)).collect();
            let kh: Vec<(&[u8], Option<&[u8]>)> = k
                .headers
                .iter()
                .map(|(n, v)| (n.as_bytes(), v.as_deref()))
                .collect();
            assert_eq!(h, kh);
        }
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

#[test]
fn kafka_protocol_to_reader_none() {
    kafka_protocol_to_reader(KpCompression::None);
}
#[test]

fn kafka_protocol_to_reader_gzip() {
    kafka_protocol_to_reader(KpCompression::Gzip);
}
#[test]

fn kafka_protocol_to_reader_snappy() {
    kafka_protocol_to_reader(KpCompression::Snappy);
}
#[test]

fn kafka_protocol_to_reader_lz4() {
    kafka_protocol_to_reader(KpCompression::Lz4);
}
#[test]

fn kafka_protocol_to_reader_zstd() {
    kafka_protocol_to_reader(KpCompression::Zstd);
}

// ---------------------------------------------------------------------------------------
// testkit → klogscan reader
// ---------------------------------------------------------------------------------------

fn writer_to_reader(codec: Codec) {
    let dir = tempfile::tempdir().unwrap();
    let (p, exp) = scenario(codec);
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let mut entries = Entries::new(&data, 0);
    let views: Vec<BatchView> = entries.by_ref().map(|e| e.as_v2().unwrap()).collect();
    assert_eq!(entries.tail(), Some(Tail::Clean));
    assert_eq!(views.len(), exp.len());
    let mut dec = Decompressor::default();
    for ((b, e), mb) in views.iter().zip(&exp).zip(&m.batches) {
        assert!(b.is_valid());
        assert_eq!(b.position(), mb.position);
        assert_eq!(b.size() as u64, mb.size);
        assert_eq!(b.base_offset(), mb.base_offset);
        assert_eq!(b.last_offset(), mb.last_offset);
        assert_eq!(b.records_count(), mb.record_count);
        assert_eq!(b.producer_id(), e.producer.id);
        assert_eq!(b.producer_epoch(), e.producer.epoch);
        assert_eq!(b.base_sequence(), e.base_sequence);
        assert_eq!(b.is_transactional(), e.producer.transactional);
        assert_eq!(b.partition_leader_epoch(), e.leader_epoch);
        assert_eq!(b.base_timestamp(), e.base_timestamp);
        assert_eq!(b.max_timestamp(), mb.max_timestamp);
        assert_eq!(b.compression().name(), kp_name(kp_codec(codec)));
        if e.base_sequence >= 0 {
            // Kafka's wrap-around: base i32::MAX, delta 1 → 0
            let last = e.records.last().unwrap();
            let want = if e.base_sequence == i32::MAX && e.records.len() > 1 {
                e.records.len() as i32 - 2
            } else {
                last.sequence
            };
            assert_eq!(b.last_sequence(), want);
        }
        let read: Vec<_> = format::batch_records(b, &mut dec)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(read.len(), e.records.len());
        for (r, x) in read.iter().zip(&e.records) {
            assert_eq!(b.base_offset() + r.offset_delta as i64, x.offset);
            assert_eq!(b.base_timestamp() + r.timestamp_delta, x.timestamp);
            assert_eq!(r.key, x.key.as_deref());
            assert_eq!(r.value, x.value.as_deref());
            let h: Vec<(String, Option<Vec<u8>>)> = r
                .headers()
                .map(|h| {
                    (
                        String::from_utf8(h.key.to_vec()).unwrap(),
                        h.value.map(|v| v.to_vec()),
                    )
                })
                .collect();
            assert_eq!(h, x.headers);
        }
    }
}

#[test]
fn writer_to_reader_none() {
    writer_to_reader(Codec::None);
}
#[test]

fn writer_to_reader_gzip() {
    writer_to_reader(Codec::Gzip);
}
#[test]

fn writer_to_reader_snappy_xerial() {
    writer_to_reader(Codec::SnappyXerial);
}
#[test]

fn writer_to_reader_snappy_raw() {
    writer_to_reader(Codec::SnappyRaw);
}
#[test]

fn writer_to_reader_lz4() {
    writer_to_reader(Codec::Lz4);
}
#[test]

fn writer_to_reader_zstd() {
    writer_to_reader(Codec::Zstd);
}

#[test]
fn every_header_field_is_settable_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("tweak", 0).start_time(T0);
    p.append(
        Batch::new(Producer::idempotent(9, 4))
            .records(3)
            .log_append_time()
            .leader_epoch(42)
            .tweak(|s| {
                s.delete_horizon = true;
                s.base_timestamp = T0 + 86_400_000;
                s.overrides.max_timestamp = Some(T0 + 5);
                s.overrides.attributes = Some(0x0148 | 0x0080); // bit 7 unused
                s.overrides.last_offset_delta = Some(9); // compaction-like gap
                s.base_sequence = 77;
            }),
    );
    p.append(Batch::new(Producer::PLAIN).records(1).tweak(|s| {
        s.overrides.crc = Some(0xdead_beef);
    }));
    p.append(Batch::new(Producer::PLAIN).records(2).tweak(|s| {
        s.overrides.records_count = Some(3); // premature EOF
    }));
    let m = p.write(dir.path()).unwrap();
    assert_eq!(m.batches[0].last_offset, 9);
    assert_eq!(m.batches[1].base_offset, 10);
    let data = log_bytes(&m);
    let v: Vec<BatchView> = Entries::new(&data, 0).map(|e| e.as_v2().unwrap()).collect();
    let b = &v[0];
    assert!(b.is_valid());
    assert_eq!(b.attributes(), 0x01c8);
    assert_eq!(b.unused_attribute_bits(), 0x0180);
    assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(b.delete_horizon_ms(), Some(T0 + 86_400_000));
    assert_eq!(b.max_timestamp(), T0 + 5);
    assert_eq!(b.partition_leader_epoch(), 42);
    assert_eq!(
        (b.producer_id(), b.producer_epoch(), b.base_sequence()),
        (9, 4, 77)
    );
    assert_eq!(b.last_offset_delta(), 9);
    assert_eq!(b.records_count(), 3);
    assert_eq!(v[1].crc(), 0xdead_beef);
    assert!(!v[1].is_valid());
    assert!(v[2].is_valid());
    let mut dec = Decompressor::default();
    assert!(
        format::batch_records(&v[2], &mut dec)
            .unwrap()
            .any(|r| r.is_err())
    );
}

#[test]
fn control_batches_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let txn = Producer::transactional(4001, 17);
    let mut p = PartitionBuilder::new("ctl", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 7);
    p.abort(txn.with_epoch(19), 8);
    p.control_raw(
        Producer::PLAIN,
        3,
        Some(vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0]),
    );
    p.control_raw(Producer::PLAIN, 99, None);
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let v: Vec<BatchView> = Entries::new(&data, 0).map(|e| e.as_v2().unwrap()).collect();
    let kinds: Vec<_> = v[1..]
        .iter()
        .map(|b| {
            assert!(b.is_control() && b.is_valid());
            format::batch_control(b).unwrap().unwrap()
        })
        .collect();
    match &kinds[0] {
        Control::EndTxn { commit, marker } => {
            assert!(commit);
            assert_eq!(marker.coordinator_epoch, 7);
        }
        other => panic!("{other:?}"),
    }
    match &kinds[1] {
        Control::EndTxn { commit, marker } => {
            assert!(!commit);
            assert_eq!(marker.coordinator_epoch, 8);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(v[2].producer_epoch(), 19);
    assert_eq!(kinds[2].kind().name(), "SNAPSHOT_HEADER");
    assert_eq!(kinds[3].kind().name(), "UNKNOWN");
    assert_eq!(m.batches[1].control, Some(encode::ControlKind::Commit));
    assert_eq!(m.batches[2].coordinator_epoch, Some(8));
}

#[test]
fn faults_produce_the_tails_the_reader_classifies() {
    let dir = tempfile::tempdir().unwrap();
    let build = |name: &str, kind: FaultKind| {
        let mut p = PartitionBuilder::new(name, 0);
        for _ in 0..3 {
            p.append(Batch::new(Producer::PLAIN).records(2));
        }
        p.fault(Target::LastLog, kind);
        let m = p.write(dir.path()).unwrap();
        (m.clone(), std::fs::read(&m.segments[0].1).unwrap())
    };
    // truncated in the middle of the last batch
    let (m, d) = build("trunc", FaultKind::Truncate { len: 0 });
    assert!(d.is_empty());
    let cut = m.batches[2].position + 30;
    let (m2, d) = build("trunc2", FaultKind::Truncate { len: cut });
    let mut e = Entries::new(&d, 0);
    assert_eq!(e.by_ref().count(), 2);
    assert_eq!(
        e.tail(),
        Some(Tail::Partial {
            position: m2.batches[2].position,
            declared: m2.batches[2].size,
            available: 30,
            offset: m2.batches[2].base_offset
        })
    );
    let (m, d) = build("zeros", FaultKind::AppendZeros(4096));
    let end = m.batches[2].position + m.batches[2].size;
    let mut e = Entries::new(&d, 0);
    assert_eq!(e.by_ref().count(), 3);
    assert_eq!(
        e.tail(),
        Some(Tail::ZeroFilled {
            position: end,
            len: 4096
        })
    );
    let (_, d) = build("garbage", FaultKind::AppendGarbage(vec![0xff; 40]));
    let mut e = Entries::new(&d, 0);
    assert_eq!(e.by_ref().count(), 3);
    assert!(matches!(e.tail(), Some(Tail::Garbage { position, len: 40, .. }) if position == end));
    let (m, d) = build(
        "flip",
        FaultKind::FlipByte {
            position: 0,
            mask: 0,
        },
    );
    assert_eq!(d.len() as u64, end);
    let pos = m.batches[1].position + 70;
    let (_, d) = build(
        "flip2",
        FaultKind::FlipByte {
            position: pos,
            mask: 0x01,
        },
    );
    let valid: Vec<bool> = Entries::new(&d, 0)
        .map(|e| e.as_v2().unwrap().is_valid())
        .collect();
    assert_eq!(valid, vec![true, false, true]);
}

#[test]
fn segments_roll_by_size_and_explicitly() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("roll", 0).segment_bytes(300);
    for _ in 0..6 {
        p.append(Batch::new(Producer::PLAIN).records(2));
    }
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(1));
    let m = p.write(dir.path()).unwrap();
    assert!(m.segments.len() >= 3);
    for (base, path) in &m.segments {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(name, format!("{base:020}.log"));
        let d = std::fs::read(path).unwrap();
        assert!(d.len() <= 300 || Entries::new(&d, 0).count() == 1);
        let first = Entries::new(&d, 0).next().unwrap();
        assert_eq!(first.offset(), *base);
    }
    assert_eq!(m.segments.last().unwrap().0, 12);
}

#[test]
fn legacy_messages_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("legacy", 0).start_time(T0);
    p.legacy(Legacy::v0().values(["a", "b"]).message(Some(b"k"), None));
    p.legacy(Legacy::v1().values(["c"]).message(None, Some(b"d")));
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let msgs: Vec<LegacyMessage> = Entries::new(&data, 0)
        .map(|e| LegacyMessage::new(e).unwrap())
        .collect();
    assert_eq!(msgs.len(), 5);
    for (i, (msg, mb)) in msgs.iter().zip(&m.batches).enumerate() {
        assert!(msg.is_valid());
        assert_eq!(msg.offset(), i as i64);
        assert_eq!(msg.offset(), mb.last_offset);
        assert_eq!(msg.magic(), if i < 3 { 0 } else { 1 });
        assert_eq!(msg.compression(), Compression::None);
    }
    assert_eq!(msgs[0].timestamp(), -1);
    assert_eq!(msgs[0].timestamp_type(), TimestampType::NoTimestampType);
    assert_eq!(msgs[2].key(), Some(&b"k"[..]));
    assert_eq!(msgs[2].value(), None);
    // the clock moved one step (1 s) after the first legacy append
    assert_eq!(msgs[3].timestamp(), T0 + 1000);
    assert_eq!(msgs[4].timestamp(), T0 + 1001);
    assert_eq!(m.batches[4].max_timestamp, T0 + 1001);
    assert_eq!(msgs[3].value(), Some(&b"c"[..]));
}

/// Decompress a legacy wrapper value independently of klogscan's codec module.
fn unwrap_legacy(codec: Compression, v: &[u8]) -> Vec<u8> {
    use std::io::Read;
    match codec {
        Compression::Gzip => {
            let mut o = Vec::new();
            flate2::read::MultiGzDecoder::new(v)
                .read_to_end(&mut o)
                .unwrap();
            o
        }
        Compression::Snappy => {
            assert_eq!(&v[..16], &encode::XERIAL_HEADER);
            let mut o = Vec::new();
            let mut pos = 16;
            while pos < v.len() {
                let n = i32::from_be_bytes(v[pos..pos + 4].try_into().unwrap()) as usize;
                o.extend(
                    snap::raw::Decoder::new()
                        .decompress_vec(&v[pos + 4..pos + 4 + n])
                        .unwrap(),
                );
                pos += 4 + n;
            }
            o
        }
        Compression::Lz4 => {
            let mut o = Vec::new();
            let mut pos = 7;
            loop {
                let n = u32::from_le_bytes(v[pos..pos + 4].try_into().unwrap());
                pos += 4;
                if n == 0 {
                    break;
                }
                let len = (n & 0x7fff_ffff) as usize;
                if n & 0x8000_0000 != 0 {
                    o.extend_from_slice(&v[pos..pos + len]);
                } else {
                    o.extend(lz4_flex::block::decompress(&v[pos..pos + len], 65536).unwrap());
                }
                pos += len;
            }
            o
        }
        c => panic!("{c:?}"),
    }
}

#[test]
fn legacy_wrappers_hold_absolute_or_relative_inner_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("wrap", 0).start_time(T0);
    p.legacy(Legacy::v0().values(["x"])); // offset 0
    let cases = [
        (0u8, Codec::Gzip),
        (0, Codec::SnappyXerial),
        (0, Codec::Lz4),
        (1, Codec::Gzip),
        (1, Codec::SnappyXerial),
        (1, Codec::Lz4),
    ];
    for (magic, c) in cases {
        let l = if magic == 0 {
            Legacy::v0()
        } else {
            Legacy::v1()
        };
        p.legacy(l.codec(c).values(["one", "two", "three"]));
    }
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let msgs: Vec<LegacyMessage> = Entries::new(&data, 0)
        .map(|e| LegacyMessage::new(e).unwrap())
        .collect();
    assert_eq!(msgs.len(), 7);
    for (k, (w, (magic, c))) in msgs[1..].iter().zip(cases).enumerate() {
        let first = 1 + 3 * k as i64;
        assert!(w.is_valid());
        assert_eq!(w.magic(), magic);
        assert_eq!(w.offset(), first + 2, "wrapper offset = last inner offset");
        assert_eq!(w.key(), None);
        let value = w.value().unwrap();
        if c == Codec::Lz4 {
            let hc = value[6];
            assert_eq!(hc, encode::lz4_header_checksum(0x60, 0x40, magic == 0));
        }
        let set = unwrap_legacy(w.compression(), value);
        let inner: Vec<LegacyMessage> = Entries::new(&set, 0)
            .map(|e| LegacyMessage::new(e).unwrap())
            .collect();
        assert_eq!(inner.len(), 3);
        for (i, m) in inner.iter().enumerate() {
            assert!(m.is_valid());
            assert_eq!(m.magic(), magic);
            assert_eq!(m.compression(), Compression::None);
            let want = if magic == 0 {
                first + i as i64
            } else {
                i as i64
            };
            assert_eq!(m.offset(), want);
            if magic == 1 {
                assert!(m.timestamp() <= w.timestamp());
            }
        }
        assert_eq!(inner[2].value(), Some(&b"three"[..]));
        if magic == 1 {
            assert_eq!(
                w.timestamp(),
                inner.iter().map(|m| m.timestamp()).max().unwrap()
            );
        }
    }
}

#[test]
fn legacy_wrappers_through_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("wrapr", 0).start_time(T0);
    p.legacy(Legacy::v0().codec(Codec::Lz4).values(["a", "b"]));
    p.legacy(Legacy::v1().codec(Codec::Gzip).values(["c", "d", "e"]));
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let mut offsets = Vec::new();
    for e in Entries::new(&data, 0) {
        let msg = LegacyMessage::new(e).unwrap();
        let mut dec = Decompressor::default();
        for im in msg.inner_messages(&mut dec).unwrap() {
            offsets.push(im.unwrap().offset);
        }
    }
    assert_eq!(offsets, vec![0, 1, 2, 3, 4]);
}
