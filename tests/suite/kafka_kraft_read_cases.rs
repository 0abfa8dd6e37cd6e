//! What a KRaft node does with a metadata log record it cannot decode, and with snapshot
//! names `Snapshots.parse` reads but Kafka never opens: `RecordsIteratorTest`'s checks
//! applied to the segments every start reads (`KafkaRaftClient.initialize` →
//! `KRaftControlRecordStateMachine.maybeLoadLog`, Kafka 3.8+), `MetadataRecordSerdeTest`'s
//! refusals (`AbstractApiMessageSerde.read`: `MetadataParseException`), and
//! `KafkaMetadataLogTest.testReadMissingSnapshot` / `SnapshotsTest`'s names on disk
//! (`recoverSnapshots` keeps an id under any name that parses; `readSnapshot` opens Kafka's
//! name only). The table in docs/testing.md ("Kafka's KRaft metadata-log file tests") maps
//! them.
#![cfg(feature = "testkit")]

use crate::common::kraft::*;
use klogscan::discover::layout::canonical_snapshot_name;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{MetaRecord, PartitionChange};
use klogscan::testkit::brokers::orders_partition;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::metadata::{MetadataLogBuilder, encode};
use klogscan::testkit::{BatchSpec, RecordSpec};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `orders-0`'s leader moves to `leader` (a clean election: both replicas are in the ISR).
fn elect(leader: i32) -> MetaRecord {
    MetaRecord::PartitionChange(PartitionChange {
        partition_id: 0,
        topic_id: topic_id_for("orders"),
        leader,
        ..Default::default()
    })
}

/// A batch at `base` and KRaft epoch 1, as the raft writer frames one (timestamp delta 0,
/// no key, no header, producer id -1).
fn batch(base: i64, control: bool, records: Vec<RecordSpec>) -> BatchSpec {
    BatchSpec {
        base_offset: base,
        partition_leader_epoch: 1,
        control,
        base_timestamp: T0,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        records,
        ..BatchSpec::default()
    }
}

fn values(base: i64, values: Vec<Vec<u8>>) -> BatchSpec {
    let recs = (values.into_iter().enumerate())
        .map(|(i, v)| RecordSpec {
            offset_delta: i as i32,
            value: Some(v),
            ..RecordSpec::default()
        })
        .collect();
    batch(base, false, recs)
}

/// A metadata log from offset 0: `orders-0` led by 1 (offsets 0–3), then `bad` at offset 4
/// (one batch of three records: broker 3, the bad one, broker 4, unless the case gives its
/// own), then the election of 2 at offset 7. Returns the partition directory.
fn log_with(root: &Path, bad: BatchSpec) -> PathBuf {
    let mut b = MetadataLogBuilder::new(T0);
    b.batch(&[topic(), broker(1), broker(2)]);
    b.batch(&[orders_partition(&[1, 2], &[1, 2], 1, 0)]);
    assert_eq!(b.next_offset(), 4);
    let part = b.write(root).unwrap();
    let after = bad.base_offset + i64::from(bad.records.len() as i32);
    let mut seg = std::fs::OpenOptions::new()
        .append(true)
        .open(part.join("00000000000000000000.log"))
        .unwrap();
    seg.write_all(&bad.encode()).unwrap();
    seg.write_all(&values(after, vec![encode(&elect(2))]).encode())
        .unwrap();
    part
}

/// The bad batch of a case: broker 3, `value`, broker 4.
fn around(value: Vec<u8>) -> BatchSpec {
    values(4, vec![encode(&broker(3)), value, encode(&broker(4))])
}

/// `scan`'s and `verify`'s findings of `kind` under `root`.
/// A TopicRecord v0's frame: frame version 1, api key 2, version 0.
const TOPIC_FRAME: [u8; 3] = [1, 2, 0];

/// The records `RecordsIterator` refuses in a data batch of the log (`RecordsIteratorTest`,
/// `MetadataRecordSerdeTest`): a metadata record cut short, one with bytes after it
/// ("garbage"), a varint of six bytes where the topic name's length stands, frame version 0
/// (KRaft's 2.8 preview), a batch whose record count promises one record more than it holds
/// (the stream ends inside it), a record with a key, one without a value, one with a
/// timestamp delta. Each is at offset 5 (the batch at 4); every start reads the log from 0
/// (no snapshot): `metadata_log_unreadable` (error, scan and verify) at that offset, the
/// node does not start (Kafka 3.8+). The leadership history goes on past it: the election
/// at 7 is replayed (led by 2), and a record that does not decode is the history's
/// `metadata_record_undecodable` at 5, a gap before any later election.
#[test]
fn a_record_every_start_reads_that_does_not_decode_stops_the_node() {
    let full = encode(&topic());
    let mut garbage = full.clone();
    garbage.push(0);
    let mut bad_varint = TOPIC_FRAME.to_vec();
    bad_varint.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    let mut frame_0 = full.clone();
    frame_0[0] = 0;
    // `MetadataRecordSerdeTest`'s malformed frames (its buffers are 64 bytes, zeros after
    // the bytes it writes).
    let serde_case = |head: &[u8]| {
        let mut v = head.to_vec();
        v.resize(64, 0);
        v
    };
    let frame_15 = serde_case(&[15]);
    let frame_varint = serde_case(&[0x80; 6]);
    let type_varint = serde_case(&[1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]);
    let version_varint = serde_case(&[1, 8, 0x80, 0x80, 0x80, 0x80, 0x80]);
    let version_too_large = serde_case(&[1, 8, 0xff, 0xff, 0xff, 0x7f, 0x80]);
    let mut count = around(encode(&broker(5)));
    count.overrides.records_count = Some(4);
    let mut keyed = around(encode(&broker(5)));
    keyed.records[1].key = Some(b"k".to_vec());
    let mut no_value = around(encode(&broker(5)));
    no_value.records[1].value = None;
    let mut timed = around(encode(&broker(5)));
    timed.records[1].timestamp_delta = 7;
    // (case, batch, reason, record offset, a history entry of its own)
    let cases: Vec<(&str, BatchSpec, &str, Option<i64>, bool)> = vec![
        (
            "cut short",
            around(full[..full.len() - 3].to_vec()),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "garbage after",
            around(garbage),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "a bad varint",
            around(bad_varint),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "frame version 0",
            around(frame_0),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "testDeserializeWithUnhandledFrameVersion",
            around(frame_15),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "testParsingMalformedFrameVersionVarint",
            around(frame_varint),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "testParsingMalformedMessageTypeVarint",
            around(type_varint),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "testParsingMalformedMessageVersionVarint",
            around(version_varint),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "testParsingVersionTooLarge",
            around(version_too_large),
            "metadata_record",
            Some(5),
            true,
        ),
        (
            "one record promised too many",
            count,
            "record_framing",
            None,
            true,
        ),
        ("a key", keyed, "data_record", Some(5), false),
        ("no value", no_value, "data_record", Some(5), true),
        ("a timestamp delta", timed, "record_framing", Some(5), false),
    ];
    for (case, bad, reason, record_offset, undecodable) in cases {
        let d = tempfile::tempdir().unwrap();
        log_with(d.path(), bad);
        let (s, v) = findings(d.path(), Kind::MetadataLogUnreadable);
        assert_eq!((s.len(), v.len()), (1, 1), "{case}: {s:#?}");
        let f = &s[0];
        assert_eq!(f.severity, Severity::Error, "{case}");
        assert_eq!(f.topic, "__cluster_metadata");
        assert_eq!(f.segment.as_deref(), Some("00000000000000000000.log"));
        assert_eq!(f.evidence["reason"], reason, "{case}: {}", f.message);
        assert_eq!(f.evidence["batch_offset"], 4, "{case}");
        assert_eq!(
            f.evidence["record_offset"],
            serde_json::json!(record_offset),
            "{case}"
        );
        assert_eq!(f.offset, Some(record_offset.unwrap_or(4)), "{case}");
        assert_eq!(f.evidence["read_from"], 0, "{case}");
        assert!(
            f.message.contains("does not start"),
            "{case}: {}",
            f.message
        );
        let h = history(d.path());
        assert_eq!(orders_in(&h), Some((2, 1)), "{case}: the election after it");
        let at: Vec<i64> = h.log.undecodable.iter().map(|u| u.offset).collect();
        if undecodable {
            assert_eq!(at, vec![record_offset.unwrap_or(4)], "{case}");
            assert_eq!(h.log.gaps, at, "{case}");
            assert_eq!(h.log.undecodable[0].source, "segment", "{case}");
            assert_eq!(h.log.undecodable[0].read_at_start, Some(true), "{case}");
        } else {
            assert!(at.is_empty(), "{case}: the history reads it: {at:?}");
        }
    }
}

/// The twins: where no start reads the record, or the start fails before. A record of a type
/// this reader does not know (api key 999: a newer controller's) depends on the node's
/// release and is not judged (`metadata_record_unknown`, info); the same cut record below
/// the latest snapshot's end offset is never read at start (the node reads its snapshot,
/// then the log from the snapshot's end; a follower fetching from below it would); after a
/// batch failing its CRC the recovery truncates the log before it; a `-delete` copy is
/// never opened as the metadata log; a clean log is read whole.
#[test]
fn a_record_no_start_reads_is_not_a_start_failure() {
    let full = encode(&topic());
    let cut = full[..full.len() - 3].to_vec();
    let mut unknown = vec![1, 0xe7, 0x07, 0];
    unknown.extend_from_slice(&[1, 2, 3]);
    for case in [
        "unknown type",
        "below the snapshot",
        "after a CRC failure",
        "delete copy",
        "clean",
    ] {
        let d = tempfile::tempdir().unwrap();
        let bad = match case {
            "unknown type" => around(unknown.clone()),
            "clean" => around(encode(&broker(5))),
            _ => around(cut.clone()),
        };
        let part = if case == "after a CRC failure" {
            let mut crc = values(4, vec![encode(&broker(3))]);
            crc.overrides.crc = Some(0x0bad_c0de);
            let part = log_with(d.path(), crc);
            let mut seg = std::fs::OpenOptions::new()
                .append(true)
                .open(part.join("00000000000000000000.log"))
                .unwrap();
            let mut after = bad.clone();
            after.base_offset = 6;
            seg.write_all(&after.encode()).unwrap();
            part
        } else {
            log_with(d.path(), bad)
        };
        if case == "below the snapshot" {
            let other = tempfile::tempdir().unwrap();
            let src = MetadataLogBuilder::new(T0)
                .start_offset(8)
                .snapshot(8, 1, state(2, 1))
                .write(other.path())
                .unwrap();
            let name = canonical_snapshot_name(8, 1);
            std::fs::copy(src.join(&name), part.join(&name)).unwrap();
        }
        if case == "delete copy" {
            let to = d
                .path()
                .join("__cluster_metadata-0.0123456789abcdef0123456789abcdef-delete");
            std::fs::rename(&part, to).unwrap();
        }
        let (s, v) = findings(d.path(), Kind::MetadataLogUnreadable);
        assert!(s.is_empty() && v.is_empty(), "{case}: {s:#?} {v:#?}");
        if case == "below the snapshot" {
            // The history reads the log from 0 and names the record, read by no start.
            let h = history(d.path());
            assert_eq!(h.log.undecodable.len(), 1, "{case}");
            assert_eq!(h.log.undecodable[0].read_at_start, Some(false), "{case}");
        }
        if case == "unknown type" {
            let (u, _) = findings(d.path(), Kind::MetadataRecordUnknown);
            assert_eq!(u.len(), 1, "{case}: {u:#?}");
            assert_eq!(u[0].severity, Severity::Info);
        }
    }
}

/// A metadata record that does not decode inside a snapshot: in the latest one (which every
/// start opens) the start fails (`metadata_snapshot_unreadable`, reason `metadata_record`),
/// and the history reads the snapshot's other records, the bad one its
/// `metadata_record_undecodable` (placed at the snapshot's end offset − 1, `source`
/// `snapshot`, `read_at_start`), a gap. Twin: the same snapshot beside a newer one of a later
/// epoch, which the log is truncated fully to: nothing opens the damaged one, nothing is
/// said. The log's segments hold no refused record (`metadata_log_unreadable` stays silent).
#[test]
fn a_record_that_does_not_decode_inside_a_snapshot() {
    let full = encode(&broker(5));
    let cut = full[..full.len() - 2].to_vec();
    for latest in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(T0)
            .start_offset(100)
            .snapshot(100, 1, state(2, 7));
        b.batch(&[broker(3)]);
        let part = b.write(d.path()).unwrap();
        // The snapshot rewritten with a cut record among its records.
        let snap = part.join(canonical_snapshot_name(100, 1));
        let header = MetadataLogBuilder::new(T0).snapshot(0, 1, vec![]);
        let tmp = tempfile::tempdir().unwrap();
        let hp = header.write(tmp.path()).unwrap();
        let bytes = std::fs::read(hp.join(canonical_snapshot_name(0, 1))).unwrap();
        // Its header batch and footer batch around records of our own.
        let (head, foot) = split_snapshot(&bytes);
        let mut recs: Vec<Vec<u8>> = state(2, 7).iter().map(encode).collect();
        recs.insert(2, cut.clone());
        let mut body = values(1, recs);
        body.partition_leader_epoch = 1;
        let mut out = head.to_vec();
        out.extend(body.encode());
        out.extend_from_slice(foot);
        std::fs::write(&snap, &out).unwrap();
        if !latest {
            // A newer snapshot at the same end offset and a later epoch, readable.
            let other = tempfile::tempdir().unwrap();
            let src = MetadataLogBuilder::new(T0)
                .start_offset(100)
                .snapshot(100, 2, state(2, 7))
                .write(other.path())
                .unwrap();
            let name = canonical_snapshot_name(100, 2);
            std::fs::copy(src.join(&name), part.join(&name)).unwrap();
        }
        let (s, v) = findings(d.path(), Kind::MetadataSnapshotUnreadable);
        assert_eq!(
            (s.len(), v.len()),
            (usize::from(latest), usize::from(latest))
        );
        if latest {
            assert_eq!(s[0].evidence["reason"], "metadata_record");
        }
        let (s, _) = findings(d.path(), Kind::MetadataLogUnreadable);
        assert!(s.is_empty(), "{s:#?}");
        let h = history(d.path());
        assert_eq!(orders_in(&h), Some((2, 7)), "latest {latest}");
        let (u, _) = findings(d.path(), Kind::MetadataRecordUndecodable);
        if !latest {
            // The newer snapshot's epoch (2) is above the log's (1): the log is truncated
            // fully to it (`truncateToLatestSnapshot`) and the history reads it alone.
            assert!(h.log.undecodable.is_empty() && u.is_empty(), "{u:#?}");
            continue;
        }
        assert_eq!(h.log.undecodable.len(), 1);
        assert_eq!(
            h.log.undecodable[0].offset, 3,
            "inside the snapshot's batch"
        );
        assert_eq!(h.log.gaps, vec![99], "at the snapshot's end offset − 1");
        assert_eq!(u.len(), 1, "{u:#?}");
        assert_eq!(u[0].severity, Severity::Warning);
        assert_eq!(u[0].evidence["source"], "snapshot");
        assert_eq!(u[0].evidence["read_at_start"], true);
    }
}

/// The control batch of a snapshot's header and the one of its footer, from a snapshot of
/// no record (two batches).
fn split_snapshot(bytes: &[u8]) -> (&[u8], &[u8]) {
    let len = i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes.split_at(12 + len)
}

/// Hostile bytes: a valid batch based at `Long.MAX_VALUE` after the log's records (its next
/// offset is no long). `scan` and `verify` do not panic (the start read overflowed there)
/// and claim no unreadable record: the recovery of such a batch is not modelled.
#[test]
fn a_batch_at_the_largest_offset_is_no_panic() {
    let d = tempfile::tempdir().unwrap();
    let mut b = MetadataLogBuilder::new(T0);
    b.batch(&[topic(), broker(1), broker(2)]);
    let part = b.write(d.path()).unwrap();
    let mut seg = std::fs::OpenOptions::new()
        .append(true)
        .open(part.join("00000000000000000000.log"))
        .unwrap();
    seg.write_all(&values(i64::MAX, vec![encode(&elect(2))]).encode())
        .unwrap();
    let (s, v) = findings(d.path(), Kind::MetadataLogUnreadable);
    assert!(s.is_empty() && v.is_empty(), "{s:#?} {v:#?}");
}
