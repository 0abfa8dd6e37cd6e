//! kafka-protocol → klogscan's reader: batches `kafka-protocol` encodes, in every codec, read
//! back through `format::Entries`, `BatchView` and `batch_records`.

use super::*;

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
