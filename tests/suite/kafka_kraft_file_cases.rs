//! Kafka's unit tests of the KRaft metadata log's files, as directories on disk: snapshot
//! names (`SnapshotsTest`), which snapshot files and segments a node loads at start
//! (`KafkaMetadataLogTest`), and what a snapshot file must hold for the node to read it
//! (`FileRawSnapshotTest`, `RecordsSnapshotWriterTest` and the checks of
//! `RecordsSnapshotReader`/`RecordsIterator` they rely on). Kafka sources: the apache/kafka
//! mirror's trunk of 2024-10 (`raft/src/test/java/org/apache/kafka/snapshot/`,
//! `core/src/test/scala/kafka/raft/KafkaMetadataLogTest.scala`). The table in
//! docs/testing.md ("Kafka's KRaft metadata-log file tests") maps every test method.
#![cfg(feature = "testkit")]

use crate::common::kraft::*;
use klogscan::cluster::leadership;
use klogscan::discover::layout::{
    self, KraftSnapshotName, canonical_snapshot_name, kraft_snapshot_id, kraft_snapshot_name,
};
use klogscan::finding::{Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::brokers::orders_partition;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::metadata::{
    MetadataLogBuilder, encode, snapshot_footer_value, snapshot_header_value,
};
use klogscan::testkit::{BatchSpec, RecordSpec};
use std::path::{Path, PathBuf};

/// The replay's input for the one metadata log under `root`.
fn metadata_log(root: &Path) -> leadership::MetadataLog {
    let inv = layout::discover(&[root.to_path_buf()]);
    let mut h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1, "one cluster");
    h.remove(0).log
}

// ---------------------------------------------------------------------------------------
// crafted snapshot files
// ---------------------------------------------------------------------------------------

/// A control record of `type_id` holding `value`, at `delta`.
fn control_rec(type_id: i16, value: Vec<u8>, delta: i32) -> RecordSpec {
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend_from_slice(&type_id.to_be_bytes());
    RecordSpec {
        offset_delta: delta,
        key: Some(key),
        value: Some(value),
        ..RecordSpec::default()
    }
}

/// A batch at `base` and KRaft epoch `epoch` (producer id -1, as the snapshot writer).
fn batch(base: i64, epoch: i32, control: bool, records: Vec<RecordSpec>) -> BatchSpec {
    BatchSpec {
        base_offset: base,
        partition_leader_epoch: epoch,
        control,
        base_timestamp: T0,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        records,
        ..BatchSpec::default()
    }
}

/// A data batch of metadata records.
fn data(base: i64, epoch: i32, records: &[MetaRecord]) -> BatchSpec {
    let recs = (records.iter().enumerate())
        .map(|(i, r)| RecordSpec {
            offset_delta: i as i32,
            value: Some(encode(r)),
            ..RecordSpec::default()
        })
        .collect();
    batch(base, epoch, false, recs)
}

const SNAPSHOT_HEADER: i16 = 3;
const SNAPSHOT_FOOTER: i16 = 4;
const KRAFT_VERSION: i16 = 5;
const KRAFT_VOTERS: i16 = 6;

fn header(epoch: i32) -> BatchSpec {
    batch(
        0,
        epoch,
        true,
        vec![control_rec(SNAPSHOT_HEADER, snapshot_header_value(T0), 0)],
    )
}

fn footer(base: i64, epoch: i32) -> BatchSpec {
    batch(
        base,
        epoch,
        true,
        vec![control_rec(SNAPSHOT_FOOTER, snapshot_footer_value(), 0)],
    )
}

/// `KRaftVersionRecord` v0 of kraft.version 1.
fn kraft_version_1() -> Vec<u8> {
    vec![0, 0, 0, 1, 0]
}

/// `VotersRecord` v0: voter 1 (directory id 5…5), endpoint `CC` h:9100, kraft.version 0–1.
fn voters() -> Vec<u8> {
    let mut v = vec![0, 0, 2, 0, 0, 0, 1];
    v.extend_from_slice(&[5; 16]);
    v.extend_from_slice(&[2, 3, b'C', b'C', 2, b'h', 0x23, 0x8c, 0]);
    v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0]);
    v
}

fn write_snapshot(path: &Path, batches: &[BatchSpec]) {
    let bytes: Vec<u8> = batches.iter().flat_map(|b| b.encode()).collect();
    std::fs::write(path, bytes).unwrap();
}

/// A metadata log whose segments start at `start` (one batch of broker 3 at epoch 1) and
/// whose snapshot `<start>-<epoch>` holds [`state`]`(2, 7)`, framed by the testkit as
/// Kafka's writer frames it; returns the partition directory.
fn log_from_snapshot(root: &Path, start: i64, epoch: i32) -> PathBuf {
    let mut b = MetadataLogBuilder::new(T0)
        .start_offset(start)
        .snapshot(start, epoch, state(2, 7));
    b.batch(&[broker(3)]);
    b.write(root).unwrap()
}

// ---------------------------------------------------------------------------------------
// SnapshotsTest
// ---------------------------------------------------------------------------------------

/// `SnapshotsTest.testValidSnapshotFilename`, `testValidPartialSnapshotFilename`,
/// `testValidDeletedSnapshotFilename`, `testInvalidSnapshotFilenames`: the name of a
/// snapshot id (`Snapshots.snapshotPath`: 20-digit end offset, `-`, 10-digit epoch,
/// `.checkpoint`) parses back to that id and is the one file a node loads for it; a
/// partial name (`Snapshots.createTempFile`: the id, `-`, a random number,
/// `.checkpoint.part`) and a deleted one (`….checkpoint.deleted`) parse to the same id
/// but are never loaded (`recoverSnapshots` deletes them); a segment, a producer snapshot,
/// the indexes, `leader-epoch-checkpoint` and `partition.metadata` are no snapshot names.
#[test]
fn snapshot_file_names_parse_as_snapshots_parse_reads_them() {
    for (offset, epoch) in [
        (0, 0),
        (1, 1),
        (2_147_483_646, 2_147_483_647),
        (1_234_567, 89),
    ] {
        let name = canonical_snapshot_name(offset, epoch);
        assert_eq!(name.len(), 20 + 1 + 10 + ".checkpoint".len(), "{name}");
        let parsed = KraftSnapshotName::Parsed {
            end_offset: offset,
            epoch,
        };
        assert_eq!(kraft_snapshot_name(&name), parsed, "{name}");
        assert_eq!(kraft_snapshot_id(&name), Some((offset, epoch)), "{name}");
        let stem = name.trim_end_matches(".checkpoint");
        for other in [
            format!("{stem}-8374651928374.checkpoint.part"),
            format!("{stem}.checkpoint.deleted"),
        ] {
            assert_eq!(kraft_snapshot_name(&other), parsed, "{other}");
            assert_eq!(kraft_snapshot_id(&other), None, "{other} is never loaded");
        }
    }
    for name in [
        "00000000000000000000.log",
        "00000000000000000000.snapshot",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "leader-epoch-checkpoint",
        "partition.metadata",
    ] {
        assert_eq!(kraft_snapshot_name(name), KraftSnapshotName::NotSnapshot);
        assert_eq!(kraft_snapshot_id(name), None);
    }
}

/// `SnapshotsTest.testValidSnapshotFilename` on disk, at the largest ids its random ones
/// reach: a metadata log starting at offset 2 147 483 646 and its snapshot of that end
/// offset at epoch 2 147 483 647 (above the log's epoch 1: `truncateToLatestSnapshot`
/// starts the log there). The history starts at that snapshot and holds its state.
#[test]
fn a_snapshot_named_at_the_largest_ids_is_the_one_the_node_loads() {
    let d = tempfile::tempdir().unwrap();
    log_from_snapshot(d.path(), 2_147_483_646, i32::MAX);
    let log = metadata_log(d.path());
    let s = log.snapshot.as_ref().expect("the snapshot is loaded");
    assert_eq!((s.end_offset, s.epoch), (2_147_483_646, i32::MAX));
    assert_eq!(s.file, "00000000002147483646-2147483647.checkpoint");
    assert_eq!(orders_now(d.path()), Some((2, 7)));
}

// ---------------------------------------------------------------------------------------
// KafkaMetadataLogTest: which files a node loads
// ---------------------------------------------------------------------------------------

/// `KafkaMetadataLogTest.testCleanupPartialSnapshots` (and the partial and deleted names of
/// `SnapshotsTest`): a log of 10 records at epoch 1 with the snapshot (1, 1), and partial
/// snapshot files of (0, 0), (1, 1) and (2, 2) left by interrupted writes. Kafka reopens it
/// with the latest snapshot (1, 1), log start 0, log end 10, its last fetched epoch 1:
/// `recoverSnapshots` deletes the partial files unread. A `.checkpoint.deleted` of (20, 5)
/// — a deletion interrupted after its rename — is deleted unread too. Had either been
/// taken for a snapshot, its epoch above the log's would have replaced the log
/// (`truncateToLatestSnapshot`): the history would hold its state (led by 2 at epoch 9).
/// Here the history replays the log from 0 (led by 1 at epoch 0), ends at 10, and no
/// name is reported.
#[test]
fn partial_and_deleted_snapshot_files_are_never_loaded() {
    let d = tempfile::tempdir().unwrap();
    let mut b = MetadataLogBuilder::new(T0).snapshot(1, 1, vec![topic()]);
    b.batch(&[topic()]);
    b.batch(&[broker(1), broker(2)]);
    b.batch(&[orders_partition(&[1, 2], &[1, 2], 1, 0)]);
    for _ in 0..6 {
        b.batch(&[broker(3)]);
    }
    assert_eq!(b.next_offset(), 10);
    let part = b.write(d.path()).unwrap();
    let other = tempfile::tempdir().unwrap();
    let newer = MetadataLogBuilder::new(T0)
        .start_offset(20)
        .snapshot(20, 5, state(2, 9))
        .write(other.path())
        .unwrap();
    let newer = newer.join(canonical_snapshot_name(20, 5));
    for name in [
        "00000000000000000000-0000000000-4417.checkpoint.part".to_string(),
        "00000000000000000001-0000000001-92.checkpoint.part".to_string(),
        "00000000000000000002-0000000002-100231.checkpoint.part".to_string(),
        format!("{}.deleted", canonical_snapshot_name(20, 5)),
    ] {
        std::fs::copy(&newer, part.join(name)).unwrap();
    }
    let log = metadata_log(d.path());
    assert_eq!(log.snapshot, None, "the log from 0 holds every record");
    assert_eq!((log.last_epoch, log.end_offset), (1, 10));
    assert!(log.gaps.is_empty(), "{:?}", log.gaps);
    assert_eq!(orders_now(d.path()), Some((1, 0)));
    for kind in [
        Kind::UnparseableFileName,
        Kind::MetadataSnapshotInconsistent,
        Kind::MetadataSnapshotUnreadable,
    ] {
        let (s, v) = findings(d.path(), kind);
        assert!(s.is_empty() && v.is_empty(), "{kind:?}: {s:#?} {v:#?}");
    }
}

/// `KafkaMetadataLogTest.testSnapshotDeletionWithInvalidSnapshotState`: a log starting at
/// 100 whose only snapshot at 100 was marked for deletion (`Snapshots.markForDelete`:
/// renamed `….checkpoint.deleted`) does not start — `recoverSnapshots` counts no deleted
/// snapshot, throws before it deletes anything, and the file stays. klogscan:
/// `metadata_snapshot_inconsistent` (scan and verify) and a history with a gap from 0.
/// Twin: the same file under its `.checkpoint` name is the snapshot the log continues
/// from.
#[test]
fn a_snapshot_marked_for_deletion_does_not_let_the_node_start() {
    for deleted in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let part = log_from_snapshot(d.path(), 100, 1);
        let name = canonical_snapshot_name(100, 1);
        if deleted {
            std::fs::rename(part.join(&name), part.join(format!("{name}.deleted"))).unwrap();
        }
        let (s, v) = findings(d.path(), Kind::MetadataSnapshotInconsistent);
        assert_eq!(
            (s.len(), v.len()),
            (usize::from(deleted), usize::from(deleted))
        );
        if deleted {
            assert_eq!(s[0].severity, Severity::Error);
            assert_eq!(s[0].offset, Some(100));
        }
        let log = metadata_log(d.path());
        if deleted {
            assert_eq!(log.snapshot, None);
            assert_eq!(log.gaps, vec![0], "offsets 0–99 are in no file");
        } else {
            assert_eq!(log.snapshot.map(|s| s.end_offset), Some(100));
            assert!(log.gaps.is_empty(), "{:?}", log.gaps);
            assert_eq!(orders_now(d.path()), Some((2, 7)));
        }
    }
}

/// `KafkaMetadataLogTest.testStartupWithInvalidSnapshotState`, its last step: an empty
/// log truncated fully to 200 (one empty segment at 200), a snapshot at 100 (below the
/// log start: `recoverSnapshots` deletes it) and one at 500 (epoch 1). The node starts
/// with log start 500: `truncateToLatestSnapshot` finds snapshot 500 past the empty log's
/// end. The history starts at snapshot 500 with no gap and nothing is reported; twin:
/// without snapshot 500 no snapshot reaches the log start 200 (the test's first steps).
#[test]
fn a_snapshot_above_an_empty_log_becomes_its_start() {
    for with_500 in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let part = log_from_snapshot(d.path(), 100, 1);
        for e in std::fs::read_dir(&part).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            if n.starts_with("00000000000000000100.") {
                std::fs::remove_file(p).unwrap();
            }
        }
        std::fs::write(part.join("00000000000000000200.log"), b"").unwrap();
        if with_500 {
            let other = tempfile::tempdir().unwrap();
            let src = log_from_snapshot(other.path(), 500, 1);
            let name = canonical_snapshot_name(500, 1);
            std::fs::copy(src.join(&name), part.join(&name)).unwrap();
        }
        let (s, _) = findings(d.path(), Kind::MetadataSnapshotInconsistent);
        assert_eq!(s.len(), usize::from(!with_500), "{s:#?}");
        let log = metadata_log(d.path());
        if with_500 {
            assert_eq!(log.snapshot.map(|s| s.end_offset), Some(500));
            assert!(log.gaps.is_empty(), "{:?}", log.gaps);
            assert_eq!(orders_now(d.path()), Some((2, 7)));
        } else {
            assert!(!log.gaps.is_empty(), "offsets 100–199 are in no file");
        }
    }
}

/// What the cleaning of `KafkaMetadataLogTest.testDeleteSnapshots`,
/// `testAdvanceLogStartOffsetAfterCleaning`, `testSoftRetentionLimit` and
/// `testSegmentsLessThanLatestSnapshot` leaves on disk: `deleteBeforeSnapshot` moves the
/// log start to the latest snapshot's offset (600) and deletes the segments wholly below
/// it, so the segment holding offset 600 stays (here from 580) with the older snapshots
/// gone. At the next start `UnifiedLog` takes the first segment's base (580) as the log
/// start and the snapshot 600 reaches it: the node starts, and the history starts at
/// snapshot 600 and replays the log from there. Twin: a retention that had also deleted
/// the segment holding 600 (the log from 620) leaves offsets 600–619 in no file
/// (`metadata_snapshot_inconsistent`).
#[test]
fn cleaning_leaves_the_latest_snapshot_inside_the_first_segment() {
    for first in [580, 620] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(T0)
            .start_offset(first)
            .snapshot(600, 1, state(1, 4));
        for _ in first..1001 {
            b.batch(&[broker(3)]);
        }
        let part = b.write(d.path()).unwrap();
        let _ = part;
        let (s, _) = findings(d.path(), Kind::MetadataSnapshotInconsistent);
        assert_eq!(
            s.len(),
            usize::from(first > 600),
            "log from {first}: {s:#?}"
        );
        let log = metadata_log(d.path());
        assert_eq!(log.snapshot.as_ref().map(|s| s.end_offset), Some(600));
        assert_eq!(log.end_offset, 1001);
        assert_eq!(log.gaps.is_empty(), first <= 600, "{:?}", log.gaps);
        assert_eq!(orders_now(d.path()), Some((1, 4)));
    }
}

// ---------------------------------------------------------------------------------------
// What a snapshot file holds: RecordsSnapshotWriterTest, FileRawSnapshotTest and the
// reader's checks
// ---------------------------------------------------------------------------------------

/// `RecordsSnapshotWriterTest.testBuilderKRaftVersion0`, `testKBuilderRaftVersion1WithVoterSet`,
/// `testBuilderKRaftVersion1WithoutVoterSet` (and `RecordsIteratorTest`'s
/// `testControlRecordIterationWithKraftVersion0`/`1`), and the check `RecordsSnapshotReader.nextBatch` makes of every snapshot it opens: the
/// first batch is a control batch whose first record is the `SnapshotHeaderRecord` (with
/// kraft.version 1 the same batch goes on with the `KRaftVersionRecord` and the
/// `VotersRecord`), the records follow, a `SnapshotFooterRecord` batch ends it. A node
/// opens its latest snapshot at every start (`KafkaRaftClient.initialize` →
/// `KRaftControlRecordStateMachine.maybeLoadSnapshot` since 3.8, and the metadata loader's
/// `handleLoadSnapshot`), so a latest snapshot whose first batch is a data batch, or a
/// control batch starting with another record, throws `IllegalStateException` and the node
/// does not start: `metadata_snapshot_unreadable` (scan and verify). The history, which
/// reads the records all the same, is unchanged.
#[test]
fn the_latest_snapshot_must_open_with_its_header() {
    let records = state(2, 7);
    let cases: Vec<(&str, Vec<BatchSpec>, bool)> = vec![
        (
            "kraft.version 0: header, records, footer",
            vec![header(1), data(1, 1, &records), footer(5, 1)],
            true,
        ),
        (
            "kraft.version 1: header, KRaftVersion and Voters in the first batch",
            vec![
                batch(
                    0,
                    1,
                    true,
                    vec![
                        control_rec(SNAPSHOT_HEADER, snapshot_header_value(T0), 0),
                        control_rec(KRAFT_VERSION, kraft_version_1(), 1),
                        control_rec(KRAFT_VOTERS, voters(), 2),
                    ],
                ),
                data(3, 1, &records),
                footer(7, 1),
            ],
            true,
        ),
        (
            "kraft.version 1 without a voter set: header and KRaftVersion",
            vec![
                batch(
                    0,
                    1,
                    true,
                    vec![
                        control_rec(SNAPSHOT_HEADER, snapshot_header_value(T0), 0),
                        control_rec(KRAFT_VERSION, kraft_version_1(), 1),
                    ],
                ),
                data(2, 1, &records),
                footer(6, 1),
            ],
            true,
        ),
        (
            "no footer (RecordsSnapshotReader does not look for it)",
            vec![header(1), data(1, 1, &records)],
            true,
        ),
        (
            "no header: the records first",
            vec![data(0, 1, &records), footer(4, 1)],
            false,
        ),
        (
            "a control batch starting with KRaftVersion",
            vec![
                batch(
                    0,
                    1,
                    true,
                    vec![
                        control_rec(KRAFT_VERSION, kraft_version_1(), 0),
                        control_rec(SNAPSHOT_HEADER, snapshot_header_value(T0), 1),
                    ],
                ),
                data(2, 1, &records),
                footer(6, 1),
            ],
            false,
        ),
        (
            "the footer first",
            vec![footer(0, 1), data(1, 1, &records)],
            false,
        ),
    ];
    for (case, batches, readable) in cases {
        let d = tempfile::tempdir().unwrap();
        let part = log_from_snapshot(d.path(), 100, 1);
        write_snapshot(&part.join(canonical_snapshot_name(100, 1)), &batches);
        let (s, v) = findings(d.path(), Kind::MetadataSnapshotUnreadable);
        let want = usize::from(!readable);
        assert_eq!((s.len(), v.len()), (want, want), "{case}: {s:#?}");
        if !readable {
            assert_eq!(s[0].severity, Severity::Error, "{case}");
            assert_eq!(s[0].topic, "__cluster_metadata", "{case}");
            assert_eq!(
                s[0].segment.as_deref(),
                Some("00000000000000000100-0000000001.checkpoint"),
                "{case}"
            );
            assert_eq!(s[0].evidence["reason"], "no_snapshot_header", "{case}");
            assert!(
                s[0].message.contains("does not start"),
                "{case}: {}",
                s[0].message
            );
        }
        assert_eq!(orders_now(d.path()), Some((2, 7)), "{case}: the history");
    }
}

/// `MetadataLoaderTest.testLoadEmptySnapshot`: a snapshot holding its header alone is
/// read (no record after it, no footer needed) and loads an empty state: the history
/// starts at it and knows no partition until the log's records.
#[test]
fn a_snapshot_of_its_header_alone_is_an_empty_state() {
    let d = tempfile::tempdir().unwrap();
    let part = log_from_snapshot(d.path(), 100, 1);
    write_snapshot(&part.join(canonical_snapshot_name(100, 1)), &[header(1)]);
    let (s, v) = findings(d.path(), Kind::MetadataSnapshotUnreadable);
    assert!(s.is_empty() && v.is_empty(), "{s:#?}");
    let log = metadata_log(d.path());
    assert_eq!(log.snapshot.map(|s| s.end_offset), Some(100));
    assert_eq!(orders_now(d.path()), None);
}

/// The checks `RecordsIterator` makes of each batch and record of the snapshot the node
/// opens at start (`KafkaRaftClient.latestSnapshot` and `KRaftControlRecordStateMachine`
/// read it with CRC validation on): a batch failing its CRC throws
/// `CorruptRecordException` (`RecordsIteratorTest.testCrcValidation`), a control record of
/// a type outside the five KRaft ones (`decodeControlRecord`: COMMIT, ABORT or unknown;
/// `ControlRecordUtilsTest.testInvalidControlRecordType` for the reader of one type) and a
/// data record with a key or without a value (`decodeDataRecord`) throw
/// `IllegalArgumentException`: the node does not start (`metadata_snapshot_unreadable`, with the reason and the offset). Twin: the same
/// damage in an older snapshot, which no start opens (only the latest is loaded;
/// `FileRawSnapshotTest`'s snapshots are read whole only when asked for), is not reported.
#[test]
fn the_latest_snapshot_is_read_whole_and_checked_at_start() {
    let records = state(2, 7);
    let mut with_key = data(1, 1, &records);
    with_key.records[0].key = Some(b"k".to_vec());
    let mut no_value = data(1, 1, &records);
    no_value.records[1].value = None;
    let mut bad_crc = data(1, 1, &records);
    bad_crc.overrides.crc = Some(0x0bad_c0de);
    let cases: Vec<(&str, BatchSpec, &str)> = vec![
        ("a batch failing its CRC", bad_crc, "crc_mismatch"),
        (
            "a COMMIT control record",
            batch(1, 1, true, vec![control_rec(1, vec![0, 0, 0, 0, 0, 1], 0)]),
            "control_record_type",
        ),
        (
            "a control record of an unknown type",
            batch(1, 1, true, vec![control_rec(42, vec![0, 0, 0], 0)]),
            "control_record_type",
        ),
        ("a data record with a key", with_key, "data_record"),
        ("a data record without a value", no_value, "data_record"),
    ];
    for (case, bad, reason) in cases {
        for latest in [true, false] {
            let d = tempfile::tempdir().unwrap();
            let part = log_from_snapshot(d.path(), 100, 1);
            let damaged = if latest {
                canonical_snapshot_name(100, 1)
            } else {
                // An older snapshot: the same end offset at epoch 0, kept by
                // `recoverSnapshots` but not the latest (`OffsetAndEpoch` orders by epoch
                // first), so no start opens it.
                canonical_snapshot_name(100, 0)
            };
            write_snapshot(
                &part.join(&damaged),
                &[header(1), bad.clone(), footer(9, 1)],
            );
            let (s, v) = findings(d.path(), Kind::MetadataSnapshotUnreadable);
            let want = usize::from(latest);
            assert_eq!(
                (s.len(), v.len()),
                (want, want),
                "{case}, latest {latest}: {s:#?}"
            );
            if latest {
                assert_eq!(s[0].evidence["reason"], reason, "{case}");
                assert_eq!(s[0].offset, Some(1), "{case}: the batch's offset");
            }
        }
    }
}

/// The ten KRaft snapshots written by real brokers (3.5 to 4.x, kraft.version 0 and 1)
/// open with their header: none is reported unreadable.
#[test]
fn real_broker_snapshots_open_with_their_header() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let r = klogscan::pipeline::scan(&[root], &ScanOptions::default());
    let s: Vec<_> = (r.findings.iter())
        .filter(|f| f.kind == Kind::MetadataSnapshotUnreadable)
        .collect();
    assert!(s.is_empty(), "{s:#?}");
}

/// `KafkaMetadataLogTest.testTopicId`: the metadata log is opened with the metadata topic's
/// fixed id (`AAAAAAAAAAAAAAAAAAAAAQ`) and keeps its `partition.metadata`, so a file naming
/// another id makes `UnifiedLog.initializeTopicId` throw `InconsistentTopicIdException`: the
/// node does not start (`metadata_log_topic_id_mismatch`, verify). Twins: the fixed id, no
/// file (the log writes it), the same wrong id in a `-delete` copy (never opened as the
/// metadata log) — nothing.
#[test]
fn a_metadata_log_of_another_topic_id_does_not_open() {
    let orders = klogscan::testkit::files::uuid_text(&topic_id_for("orders"));
    for (id, copy, fires) in [
        (Some(orders.as_str()), "live", true),
        (Some("AAAAAAAAAAAAAAAAAAAAAQ"), "live", false),
        (None, "live", false),
        (Some(orders.as_str()), "delete", false),
    ] {
        let d = tempfile::tempdir().unwrap();
        let part = log_from_snapshot(d.path(), 0, 1);
        if let Some(id) = id {
            std::fs::write(
                part.join("partition.metadata"),
                format!("version: 0\ntopic_id: {id}"),
            )
            .unwrap();
        }
        if copy == "delete" {
            let to = d
                .path()
                .join("__cluster_metadata-0.0123456789abcdef0123456789abcdef-delete");
            std::fs::rename(&part, to).unwrap();
        }
        let case = format!("{id:?} in a {copy} copy");
        let (s, v) = findings(d.path(), Kind::MetadataLogTopicIdMismatch);
        assert!(s.is_empty(), "{case}: a verify check: {s:#?}");
        assert_eq!(v.len(), usize::from(fires), "{case}: {v:#?}");
        if fires {
            assert_eq!(v[0].severity, Severity::Error);
            assert_eq!(v[0].segment.as_deref(), Some("partition.metadata"));
            assert_eq!(v[0].evidence["topic_id"], orders.as_str());
            assert_eq!(v[0].evidence["expected_topic_id"], "AAAAAAAAAAAAAAAAAAAAAQ");
            assert!(v[0].message.contains("does not start"), "{}", v[0].message);
        }
    }
}
