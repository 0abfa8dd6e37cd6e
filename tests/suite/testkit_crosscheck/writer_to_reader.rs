//! Testkit → klogscan's reader: every codec and framing, every header field, control
//! batches, the tails faults leave and segment rolling, read back as written.

use super::*;

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
