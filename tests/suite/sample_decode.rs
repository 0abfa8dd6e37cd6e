//! Every field of every batch in the committed sample data (`testdata/broker-1`) is
//! decoded exactly: the reader's view of each entry is compared with the manifest the
//! testkit returns when it regenerates the samples (all header fields, record count,
//! control type, coordinator epoch, codec), and for v2 batches every record is compared
//! with `kafka_protocol::records::RecordBatchDecoder` (offsets, timestamps, keys, values,
//! headers). Covers all five codecs (both snappy framings), legacy magic 0/1 with gzip,
//! snappy and lz4 wrappers, and control records.
#![cfg(feature = "testkit")]

use bytes::Bytes;
use kafka_protocol::records::{Compression as KpCompression, RecordBatchDecoder};
use klogscan::read::format::{
    self, BatchView, Compression, Control, ControlType, Decompressor, Entries, LegacyMessage, Tail,
    TimestampType,
};
use klogscan::testkit::{BatchInfo, Codec, ControlKind, Manifest, samples};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

/// The sample manifests, regenerated in a temporary directory, with every path rebased
/// onto the committed `testdata/broker-1`.
fn manifests() -> Vec<Manifest> {
    let tmp = tempfile::tempdir().unwrap();
    let written = samples::write_all(tmp.path()).unwrap();
    assert_eq!(written.len(), 1);
    let root = tmp.path().join("broker-1");
    let rebase = |p: &Path| testdata().join(p.strip_prefix(&root).unwrap());
    written[0]
        .partitions
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.dir = rebase(&m.dir);
            for b in &mut m.batches {
                b.file = rebase(&b.file);
            }
            for s in &mut m.segments {
                s.1 = rebase(&s.1);
            }
            m
        })
        .collect()
}

fn compression_of(c: Codec) -> Compression {
    Compression::from_id(c.id())
}

fn kp_compression(c: Codec) -> KpCompression {
    match c {
        Codec::None => KpCompression::None,
        Codec::Gzip => KpCompression::Gzip,
        Codec::SnappyXerial | Codec::SnappyRaw => KpCompression::Snappy,
        Codec::Lz4 | Codec::Lz4BrokenHc => KpCompression::Lz4,
        Codec::Zstd => KpCompression::Zstd,
    }
}

fn control_type(k: ControlKind) -> ControlType {
    ControlType::from_id(k.id())
}

/// Compare one v2 batch with its manifest entry, header field by field.
fn check_v2(b: &BatchView<'_>, info: &BatchInfo) {
    let at = format!("{} @{}", info.file.display(), info.position);
    assert!(b.is_valid(), "{at}: CRC");
    assert_eq!(b.position(), info.position, "{at}");
    assert_eq!(b.size() as u64, info.size, "{at}");
    assert_eq!(b.magic() as u8, info.magic, "{at}");
    assert_eq!(b.base_offset(), info.base_offset, "{at}");
    assert_eq!(b.last_offset(), info.last_offset, "{at}");
    assert_eq!(
        b.partition_leader_epoch(),
        info.partition_leader_epoch,
        "{at}"
    );
    assert_eq!(b.producer_id(), info.producer_id, "{at}");
    assert_eq!(b.producer_epoch(), info.producer_epoch, "{at}");
    assert_eq!(b.base_sequence(), info.base_sequence, "{at}");
    assert_eq!(b.records_count(), info.record_count, "{at}");
    assert_eq!(b.compression(), compression_of(info.codec), "{at}");
    assert_eq!(b.is_transactional(), info.transactional, "{at}");
    assert_eq!(b.is_control(), info.control.is_some(), "{at}");
    assert_eq!(b.base_timestamp(), info.first_timestamp, "{at}");
    assert_eq!(b.max_timestamp(), info.max_timestamp, "{at}");
    assert_eq!(b.timestamp_type(), TimestampType::CreateTime, "{at}");
    assert!(!b.has_delete_horizon(), "{at}");
    assert_eq!(b.unused_attribute_bits(), 0, "{at}");
    if info.base_sequence >= 0 {
        assert_eq!(
            b.last_sequence(),
            info.base_sequence + info.record_count - 1,
            "{at}"
        );
    }
    let control = if b.is_control() {
        format::batch_control(b).unwrap()
    } else {
        None
    };
    match control {
        None => assert_eq!(info.control, None, "{at}"),
        Some(c) => {
            assert_eq!(Some(c.kind()), info.control.map(control_type), "{at}");
            match c {
                Control::EndTxn { marker, .. } => {
                    assert_eq!(
                        Some(marker.coordinator_epoch),
                        info.coordinator_epoch,
                        "{at}"
                    );
                    assert_eq!(marker.version, 0, "{at}");
                }
                other => panic!("{at}: unexpected control record {other:?}"),
            }
        }
    }
}

/// Compare every record of a v2 segment with kafka-protocol's decoder.
fn check_records_against_kafka_protocol(data: &[u8], infos: &[&BatchInfo]) -> usize {
    let sets = RecordBatchDecoder::decode_all(&mut Bytes::copy_from_slice(data)).unwrap();
    assert_eq!(sets.len(), infos.len());
    let mut dec = Decompressor::new(format::codec::DEFAULT_MAX_DECOMPRESSED);
    let mut n = 0;
    for ((entry, set), info) in Entries::new(data, 0).zip(&sets).zip(infos) {
        let b = entry.as_v2().unwrap();
        assert_eq!(set.version, 2);
        assert_eq!(set.compression, kp_compression(info.codec));
        assert_eq!(set.records.len() as i32, info.record_count);
        let ours: Vec<_> = format::batch_records(&b, &mut dec)
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| {
                (
                    b.base_offset() + r.offset_delta as i64,
                    b.base_timestamp() + r.timestamp_delta,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                    r.headers()
                        .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        assert_eq!(ours.len(), set.records.len());
        for (o, k) in ours.iter().zip(&set.records) {
            assert_eq!(o.0, k.offset);
            assert_eq!(o.1, k.timestamp);
            assert_eq!(o.2.as_deref(), k.key.as_deref());
            assert_eq!(o.3.as_deref(), k.value.as_deref());
            let kh: Vec<(Vec<u8>, Option<Vec<u8>>)> = k
                .headers
                .iter()
                .map(|(key, v)| (key.as_bytes().to_vec(), v.as_ref().map(|v| v.to_vec())))
                .collect();
            assert_eq!(o.4, kh);
            // batch-level fields as kafka-protocol reports them per record
            assert_eq!(k.producer_id, info.producer_id);
            assert_eq!(k.producer_epoch, info.producer_epoch);
            assert_eq!(k.partition_leader_epoch, info.partition_leader_epoch);
            assert_eq!(k.transactional, info.transactional);
            assert_eq!(k.control, info.control.is_some());
            // kafka-protocol derives a record's sequence as baseSequence + offsetDelta,
            // even for baseSequence -1
            let delta = (k.offset - info.base_offset) as i32;
            assert_eq!(k.sequence, info.base_sequence.wrapping_add(delta));
            n += 1;
        }
    }
    n
}

#[test]
fn every_v2_batch_matches_the_manifest_and_kafka_protocol() {
    let ms = manifests();
    let mut codecs = BTreeSet::new();
    let mut controls = 0;
    let mut records = 0;
    for m in ms.iter().filter(|m| m.topic != "legacy") {
        for (_, seg) in &m.segments {
            let data = std::fs::read(seg).unwrap();
            let infos: Vec<&BatchInfo> = m.batches.iter().filter(|b| &b.file == seg).collect();
            let mut walk = Entries::new(&data, 0);
            let mut seen = 0;
            for (entry, info) in (&mut walk).zip(&infos) {
                let b = entry.as_v2().unwrap();
                check_v2(&b, info);
                codecs.insert(format!("{:?}", info.codec));
                controls += info.control.is_some() as usize;
                seen += 1;
            }
            assert!(walk.next().is_none());
            assert_eq!(walk.tail(), Some(Tail::Clean), "{}", seg.display());
            assert_eq!(seen, infos.len(), "{}", seg.display());
            records += check_records_against_kafka_protocol(&data, &infos);
        }
    }
    assert_eq!(
        codecs.into_iter().collect::<Vec<_>>(),
        ["Gzip", "Lz4", "None", "SnappyRaw", "SnappyXerial", "Zstd"]
    );
    // payments-3 holds 4 markers (3 COMMIT, 1 ABORT)
    assert_eq!(controls, 4);
    // 32 in payments-3 (markers included), 10 in each codec partition
    assert_eq!(records, 32 + 5 * 10);
}

type Rec = (
    Option<&'static [u8]>,
    Option<Vec<u8>>,
    Vec<(&'static [u8], Option<&'static [u8]>)>,
);

/// The records of a codec partition, as `testkit::samples::codec_partition` writes them.
fn codec_partition_records() -> Vec<Vec<Rec>> {
    let x300 = vec![b'x'; 300];
    vec![
        vec![
            (
                Some(b"k0"),
                Some(b"first value".to_vec()),
                vec![(b"content-type", Some(b"text/plain"))],
            ),
            (None, Some(b"null key".to_vec()), vec![]),
            (Some(b"k0"), None, vec![]),
        ],
        vec![
            (Some(b"k1"), Some(b"v1".to_vec()), vec![(b"h", None)]),
            (None, None, vec![]),
        ],
        ["a", "b", "c", "d"]
            .iter()
            .map(|v| (None, Some(v.as_bytes().to_vec()), vec![]))
            .collect(),
        vec![(
            Some(b"big"),
            Some(x300),
            vec![(b"a", Some(b"1")), (b"b", Some(b"2"))],
        )],
    ]
}

#[test]
fn codec_partitions_hold_the_same_records_in_every_codec() {
    let expected = codec_partition_records();
    let mut dec = Decompressor::new(format::codec::DEFAULT_MAX_DECOMPRESSED);
    let mut seen = Vec::new();
    for m in manifests().iter().filter(|m| m.topic.starts_with("codec-")) {
        let data = std::fs::read(&m.segments[0].1).unwrap();
        for (i, entry) in Entries::new(&data, 0).enumerate() {
            let b = entry.as_v2().unwrap();
            let got: Vec<_> = format::batch_records(&b, &mut dec)
                .unwrap()
                .map(|r| r.unwrap())
                .map(|r| {
                    (
                        r.key.map(<[u8]>::to_vec),
                        r.value.map(<[u8]>::to_vec),
                        r.headers()
                            .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            let want: Vec<_> = expected[i]
                .iter()
                .map(|(k, v, h)| {
                    (
                        k.map(<[u8]>::to_vec),
                        v.clone(),
                        h.iter()
                            .map(|(hk, hv)| (hk.to_vec(), hv.map(<[u8]>::to_vec)))
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            assert_eq!(got, want, "{} batch {i}", m.topic);
        }
        seen.push(m.topic.clone());
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "codec-gzip",
            "codec-lz4",
            "codec-none",
            "codec-snappy",
            "codec-zstd"
        ]
    );
}

#[test]
fn legacy_entries_match_the_manifest_with_their_inner_messages() {
    let ms = manifests();
    let m = ms.iter().find(|m| m.topic == "legacy").unwrap();
    let expected_values: Vec<&[u8]> = vec![
        b"v0", b"v1", b"g0", b"g1", b"g2", b"s0", b"s1", b"l0", b"l1", b"l2", b"", b"w1", b"G0",
        b"G1", b"S0", b"S1", b"S2", b"L0", b"L1",
    ];
    let mut dec = Decompressor::new(format::codec::DEFAULT_MAX_DECOMPRESSED);
    let mut offsets = Vec::new();
    let mut values = Vec::new();
    let mut wrappers = BTreeSet::new();
    for (_, seg) in &m.segments {
        let data = std::fs::read(seg).unwrap();
        let infos: Vec<&BatchInfo> = m.batches.iter().filter(|b| &b.file == seg).collect();
        let mut walk = Entries::new(&data, 0);
        let mut n = 0;
        for (entry, info) in (&mut walk).zip(&infos) {
            let at = format!("{} @{}", seg.display(), info.position);
            let msg = LegacyMessage::new(entry).unwrap();
            assert!(msg.is_valid(), "{at}");
            assert_eq!(msg.position(), info.position, "{at}");
            assert_eq!(msg.size() as u64, info.size, "{at}");
            assert_eq!(msg.magic(), info.magic, "{at}");
            assert_eq!(msg.offset(), info.last_offset, "{at}");
            assert_eq!(msg.compression(), compression_of(info.codec), "{at}");
            assert_eq!(msg.timestamp(), info.first_timestamp, "{at}");
            assert_eq!(
                msg.timestamp_type(),
                if info.magic == 0 {
                    TimestampType::NoTimestampType
                } else {
                    TimestampType::CreateTime
                },
                "{at}"
            );
            let (first, last, count) = msg.offset_range(&mut dec).unwrap();
            assert_eq!(
                (first, last, count as i32),
                (info.base_offset, info.last_offset, info.record_count),
                "{at}"
            );
            if info.codec != Codec::None {
                wrappers.insert((info.magic, format!("{:?}", info.codec)));
            }
            let inner: Vec<_> = msg
                .inner_messages(&mut dec)
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            assert_eq!(inner.len() as i32, info.record_count, "{at}");
            for (i, im) in inner.iter().enumerate() {
                assert_eq!(im.message.magic(), info.magic, "{at}");
                assert!(im.message.is_valid(), "{at}");
                assert_eq!(im.message.compression(), Compression::None);
                if info.magic == 1 {
                    // inner timestamps are 1 ms apart; a wrapper carries the newest
                    let first = info.first_timestamp - (info.record_count as i64 - 1);
                    assert_eq!(im.timestamp, first + i as i64, "{at}");
                    assert_eq!(im.timestamp_type, TimestampType::CreateTime, "{at}");
                } else {
                    assert_eq!(im.timestamp, -1, "{at}");
                }
                offsets.push(im.offset);
                values.push(im.message.value().map(<[u8]>::to_vec));
            }
            n += 1;
        }
        assert!(walk.next().is_none());
        assert_eq!(walk.tail(), Some(Tail::Clean));
        assert_eq!(n, infos.len());
    }
    assert_eq!(offsets, (0..19).collect::<Vec<i64>>());
    let want: Vec<Option<Vec<u8>>> = expected_values
        .iter()
        .map(|v| (!v.is_empty()).then(|| v.to_vec()))
        .collect();
    assert_eq!(values, want);
    assert_eq!(
        wrappers.into_iter().collect::<Vec<_>>(),
        vec![
            (0, "Gzip".to_string()),
            (0, "Lz4BrokenHc".to_string()),
            (0, "SnappyXerial".to_string()),
            (1, "Gzip".to_string()),
            (1, "Lz4".to_string()),
            (1, "SnappyXerial".to_string()),
        ]
    );
}

#[test]
fn payments_markers_decode_to_the_documented_types() {
    // testdata/README.md: COMMIT at 5, 15, 29; ABORT at 16; all with coordinatorEpoch 7
    let ms = manifests();
    let m = ms.iter().find(|m| m.topic == "payments").unwrap();
    let mut markers = Vec::new();
    for (_, seg) in &m.segments {
        let data = std::fs::read(seg).unwrap();
        for entry in Entries::new(&data, 0) {
            let b = entry.as_v2().unwrap();
            if !b.is_control() {
                continue;
            }
            if let Some(Control::EndTxn { commit, marker }) = format::batch_control(&b).unwrap() {
                markers.push((
                    b.base_offset(),
                    b.producer_id(),
                    b.producer_epoch(),
                    commit,
                    marker.coordinator_epoch,
                    b.size(),
                ));
            }
        }
    }
    assert_eq!(
        markers,
        vec![
            (5, 4001, 17, true, 7, 78),
            (15, 6001, 3, true, 7, 78),
            (16, 4001, 19, false, 7, 78),
            (29, 6001, 3, true, 7, 78),
        ]
    );
}
