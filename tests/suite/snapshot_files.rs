//! Producer snapshots of real broker data: every file parses (version 1, CRC-32C) and every
//! entry matches its producer's last data batch below the snapshot offset
//! (broker/PROVENANCE.md: 81/81 in its summary, 94 entries in its per-file table).

use klogscan::partition::event::{Classified, classify};
use klogscan::read::format::Entries;
use klogscan::read::format::snapshot::{ProducerSnapshot, SnapshotEntry};
use std::collections::HashMap;
use std::path::Path;

fn base_of(p: &Path) -> i64 {
    let name = p.file_name().unwrap().to_str().unwrap();
    name.split('.').next().unwrap().parse().unwrap()
}

/// (epoch, lastSequence, lastOffset, offsetDelta, maxTimestamp) of the last data batch of
/// each producer with lastOffset < `end`, over every `.log` of `dir`.
fn last_data_batches(dir: &Path, end: i64) -> HashMap<i64, (i16, i32, i64, i32, i64)> {
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let mut last = HashMap::new();
    for log in logs {
        let data = std::fs::read(&log).unwrap();
        for raw in Entries::new(&data, 0) {
            if let Classified::V2(b) = classify(raw)
                && b.producer_id() >= 0
                && !b.is_control()
                && b.last_offset() < end
            {
                last.insert(
                    b.producer_id(),
                    (
                        b.producer_epoch(),
                        b.last_sequence(),
                        b.last_offset(),
                        b.last_offset_delta(),
                        b.max_timestamp(),
                    ),
                );
            }
        }
    }
    last
}

#[test]
fn every_real_snapshot_matches_its_producers_last_batch() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let files = crate::common::files_with_suffix(&root.join("broker"), ".snapshot");
    assert_eq!(files.len(), 99);
    let (mut entries, mut matched, mut with_open_txn) = (0usize, 0usize, 0usize);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let snap =
            ProducerSnapshot::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(snap.extra_bytes(), 0);
        assert_eq!(bytes.len(), 10 + 46 * snap.len());
        if snap.is_empty() {
            continue;
        }
        let last = last_data_batches(f.parent().unwrap(), base_of(f));
        for e in snap.entries() {
            entries += 1;
            let SnapshotEntry {
                producer_id,
                producer_epoch,
                last_sequence,
                last_offset,
                offset_delta,
                ..
            } = e;
            let Some(&(epoch, seq, off, delta, _ts)) = last.get(&producer_id) else {
                panic!(
                    "{}: producer {producer_id} has no data batch in the log",
                    f.display()
                );
            };
            if e.open_txn_first_offset().is_some() {
                with_open_txn += 1;
            }
            if (producer_epoch, last_sequence, last_offset, offset_delta)
                == (epoch, seq, off, delta)
            {
                assert!(e.has_batch());
                matched += 1;
            } else {
                panic!(
                    "{}: {e:?} vs batch {:?}",
                    f.display(),
                    (epoch, seq, off, delta)
                );
            }
        }
    }
    // The corpus holds 99 snapshots with 95 entries in all (92 with 94 before the Khanvii
    // zstd/transactional data was added); every entry matches here.
    assert_eq!((matched, entries), (95, 95));
    assert_eq!(
        with_open_txn, 0,
        "no snapshot in the corpus has an open transaction"
    );
}

use klogscan::dump::{DumpFormat, DumpOptions, files};

fn dump_snapshot(path: &Path, format: DumpFormat) -> (String, String) {
    let opts = DumpOptions {
        format,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    files::dump_snapshot(path, &opts, &mut out, &mut err).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// The expected text line of one 46-byte entry, decoded here independently of the crate.
fn expected_line(e: &[u8]) -> String {
    let i64_at = |o: usize| i64::from_be_bytes(e[o..o + 8].try_into().unwrap());
    let i32_at = |o: usize| i32::from_be_bytes(e[o..o + 4].try_into().unwrap());
    let (pid, epoch) = (i64_at(0), i16::from_be_bytes([e[8], e[9]]));
    let (last_seq, last_off, delta, ts) = (i32_at(10), i64_at(14), i32_at(22), i64_at(26));
    let (coord, txn) = (i32_at(34), i64_at(38));
    let txn = if txn >= 0 {
        format!("OptionalLong[{txn}]")
    } else {
        "OptionalLong.empty".into()
    };
    let mut s = format!(
        "producerId: {pid} producerEpoch: {epoch} coordinatorEpoch: {coord} currentTxnFirstOffset: {txn} lastTimestamp: {ts} "
    );
    if last_off >= 0 {
        // no wrap-around in this data: firstSequence = lastSequence - offsetDelta
        s += &format!(
            "firstSequence: {} lastSequence: {last_seq} lastOffset: {last_off} offsetDelta: {delta} timestamp: {ts}",
            last_seq - delta
        );
    }
    s
}

#[test]
fn dump_real_snapshots() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let broker = root.join("broker");
    // The ksqlDB command topic: 1 entry (pid 0, epoch 0, lastSeq 0, lastOffset 0, coordinatorEpoch 0).
    let one = broker.join("ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/00000000000000000002.snapshot");
    // A five-producer snapshot.
    let five = broker.join(
        "rjmfernandes__flink-on-prem/data/_confluent-monitoring-0/00000000000000002827.snapshot",
    );
    for path in [&one, &five] {
        let bytes = std::fs::read(path).unwrap();
        let mut expected = format!("Dumping {}\n", path.display());
        for e in bytes[10..].chunks_exact(46) {
            expected += &expected_line(e);
            expected.push('\n');
        }
        let (out, err) = dump_snapshot(path, DumpFormat::Text);
        assert_eq!(out, expected);
        assert_eq!(err, "");
        let (out, _) = dump_snapshot(path, DumpFormat::Json);
        assert_eq!(out.lines().count(), (bytes.len() - 10) / 46);
    }
    let (out, _) = dump_snapshot(&one, DumpFormat::Text);
    assert!(out.contains(
        "producerId: 0 producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: OptionalLong.empty"
    ));
    assert!(out.contains(" firstSequence: 0 lastSequence: 0 lastOffset: 0 offsetDelta: 0 "));
    let (out, _) = dump_snapshot(&five, DumpFormat::Json);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["producerId"], 0);
    assert_eq!(first["currentTxnFirstOffset"], serde_json::Value::Null);
    assert_eq!(first["lastSequence"], 22);
    assert_eq!(first["lastOffset"], 48);
}

#[test]
fn dump_corrupt_snapshots() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let src = root.join(
        "broker/rjmfernandes__flink-on-prem/data/loyalty_levels-0/00000000000000017204.snapshot",
    );
    let good = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000017204.snapshot");
    let stored = u32::from_be_bytes(good[2..6].try_into().unwrap());

    // one bit flipped in an entry
    let mut b = good.clone();
    b[30] ^= 0x10;
    std::fs::write(&path, &b).unwrap();
    let computed = crc32c::crc32c(&b[6..]);
    let (out, err) = dump_snapshot(&path, DumpFormat::Text);
    assert_eq!(out, format!("Dumping {}\n", path.display()));
    assert_eq!(
        err,
        format!(
            "Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}\n"
        )
    );

    // stale bytes after the last entry
    let mut b = good.clone();
    b.extend_from_slice(&[0xab; 7]);
    std::fs::write(&path, &b).unwrap();
    let (_, err) = dump_snapshot(&path, DumpFormat::Text);
    assert!(err.starts_with("Snapshot is corrupt (CRC is no longer valid)."));

    // unknown version
    let mut b = good.clone();
    b[1] = 2;
    std::fs::write(&path, &b).unwrap();
    let (_, err) = dump_snapshot(&path, DumpFormat::Text);
    assert_eq!(err, "Snapshot contained an unknown file version 2\n");
    let (_, err) = dump_snapshot(&path, DumpFormat::Json);
    let v: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(v["error"], "Snapshot contained an unknown file version 2");
}
