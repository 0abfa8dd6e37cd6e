//! `klogscan dump` against `kafka-dump-log.sh` (`kafka.tools.DumpLogSegments`) on bytes a
//! broker writes: the lines `DumpLogSegmentsTest` (core/src/test/scala/unit/kafka/tools)
//! and `DumpLogSegments.scala` print, for cases the golden tests (`dump_golden`,
//! `dump_sample_golden`, `groups_dump`, `tiered_dump`, `verify_dump_text`, `index_files`,
//! `snapshot_files`) do not pin. Each failing test is a divergence found by the dump audit
//! (branch `aud-dump`).
#![cfg(feature = "testkit")]

use klogscan::dump::{DumpFormat, DumpOptions, dump_paths};
use klogscan::testkit::files::{SnapshotEntry, encode_snapshot};
use klogscan::testkit::metadata::{snapshot_footer_value, snapshot_header_value};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use std::path::PathBuf;

fn run(paths: &[PathBuf], opts: &DumpOptions) -> (String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    dump_paths(paths, opts, &mut out, &mut err).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// `kafka-dump-log --cluster-metadata-decoder --deep-iteration --print-data-log` of `file`:
/// (stdout, stderr).
fn dump_metadata(file: &std::path::Path) -> (String, String) {
    let opts = DumpOptions {
        cluster_metadata_decoder: true,
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    };
    run(std::slice::from_ref(&file.to_path_buf()), &opts)
}

/// `DumpLogSegmentsTest.testDumpControlRecord` (Kafka 4.1+, KAFKA-19069, apache/kafka#19729):
/// one control batch of each kind a broker or KRaft leader writes (`MemoryRecords.
/// withEndTransactionMarker`, `withLeaderChangeMessage`, `withSnapshotHeaderRecord`,
/// `withSnapshotFooterRecord`, `withKRaftVersionRecord`, `withVotersRecord`, each with the
/// message's default values), dumped with `--cluster-metadata-decoder`. The test asserts
/// that the output contains `endTxnMarker`, `LeaderChange`, `SnapshotHeader`,
/// `SnapshotFooter`, `KRaftVersion` and `KRaftVoters`.
///
/// `DumpLogSegments.printControlRecord` (4.1+) prints a LEADER_CHANGE record as
/// ` LeaderChange: ` + `LeaderChangeMessageJsonConverter.write(msg, msg.version())` (note the
/// colon, unlike the other KRaft control records); up to 4.0 it fell through to
/// ` controlType: LEADER_CHANGE(2)`. klogscan prints the ≤ 4.0 form
/// (`src/dump/log/dumper.rs`, `Dumper::control`, `ControlType::LeaderChange` arm), although
/// it prints every other decoder in the newest shape and already renders the JSON
/// (`decoders::leader_change_json`) for `--format json`. Every leader election of a KRaft
/// quorum writes one such record, so every `__cluster_metadata` dump shows it.
#[test]
fn leader_change_control_record_prints_as_kafka_4_1_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("ctl", 0).start_time(1_700_000_000_000);
    p.commit(Producer::transactional(0, 0), 100);
    // LeaderChangeMessage() v0 (flexible): version 0, leaderId 0, voters [], grantingVoters [].
    p.control_raw(Producer::PLAIN, 2, Some(vec![0, 0, 0, 0, 0, 0, 1, 1, 0]));
    p.control_raw(Producer::PLAIN, 3, Some(snapshot_header_value(0)));
    p.control_raw(Producer::PLAIN, 4, Some(snapshot_footer_value()));
    // KRaftVersionRecord(): version 0, kRaftVersion 0.
    p.control_raw(Producer::PLAIN, 5, Some(vec![0, 0, 0, 0, 0]));
    // VotersRecord(): version 0, voters [].
    p.control_raw(Producer::PLAIN, 6, Some(vec![0, 0, 1, 0]));
    let m = p.write(dir.path()).unwrap();
    let (out, err) = dump_metadata(&m.segments[0].1);
    assert_eq!(err, "");
    for kind in [
        "endTxnMarker",
        "SnapshotHeader",
        "SnapshotFooter",
        "KRaftVersion",
        "KRaftVoters",
    ] {
        assert!(out.contains(kind), "{kind} missing:\n{out}");
    }
    let line = out
        .lines()
        .find(|l| l.starts_with("| offset: 1 "))
        .unwrap_or_else(|| panic!("no record line at offset 1:\n{out}"));
    assert_eq!(
        line,
        "| offset: 1 CreateTime: 1700000001000 keySize: 4 valueSize: 9 sequence: -1 headerKeys: [] \
         LeaderChange: {\"version\":0,\"leaderId\":0,\"voters\":[],\"grantingVoters\":[]}",
        "the LEADER_CHANGE record line differs from kafka-dump-log 4.1+:\n{out}"
    );
}

/// The other side of `leader_change_control_record_prints_as_kafka_4_1_does`: a LEADER_CHANGE
/// value that does not decode (`ControlRecordUtils.deserializeLeaderChangeMessage` would
/// throw) keeps the type line: klogscan prints no JSON it could not read.
#[test]
fn an_undecodable_leader_change_keeps_the_type_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("ctl", 0).start_time(1_700_000_000_000);
    p.control_raw(Producer::PLAIN, 2, Some(vec![0, 0, 0]));
    let m = p.write(dir.path()).unwrap();
    let opts = DumpOptions {
        cluster_metadata_decoder: true,
        deep_iteration: true,
        ..Default::default()
    };
    let (out, _) = run(&[m.segments[0].1.clone()], &opts);
    let line = out
        .lines()
        .find(|l| l.starts_with("| offset: 0 "))
        .unwrap_or_else(|| panic!("no record line at offset 0:\n{out}"));
    assert!(line.ends_with(" controlType: LEADER_CHANGE(2)"), "{line}");
    assert!(!line.contains("LeaderChange:"), "{line}");
}

/// `DumpLogSegments.dumpProducerIdSnapshot` (every version since 2.x, unchanged in 4.x) prints
/// each entry as
/// `print(s"producerId: … currentTxnFirstOffset: … lastTimestamp: ${entry.lastTimestamp} ")`
/// — with a trailing space — and then, only when the entry has batch metadata,
/// `firstSequence: … timestamp: …`. An entry without batch metadata
/// (`ProducerStateManager.readSnapshot`: `lastOffset < 0` → `Optional.empty()`) therefore
/// prints a line ending in `lastTimestamp: T ` (trailing space).
///
/// Such entries are on disk whenever a producer's entry was created by a transaction marker
/// alone (`ProducerAppendInfo.appendEndTxnMarker` on a producer not in the map,
/// `ProducerStateManager.update` → `producers.put` with empty batch metadata;
/// `writeSnapshot` stores `lastDataOffset()` = -1): e.g. `__consumer_offsets` /
/// compacted topics after the cleaner removed a transaction's data but kept its marker, or a
/// log whose start offset moved past a transaction's data before a restart rebuilt the state.
///
/// klogscan (`src/dump/files.rs`, `dump_snapshot`) writes `lastTimestamp: {}` without the
/// space and adds ` firstSequence…` with a leading one: right for entries with batch
/// metadata, one character short for those without. (`tests/suite/snapshot_files.rs`'s
/// `expected_line` encodes the same shape but its real snapshots hold no such entry.)
#[test]
fn producer_snapshot_entry_without_batch_metadata_keeps_the_trailing_space() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000042.snapshot");
    let entries = [
        // Written from a COMMIT marker only: no batch metadata.
        SnapshotEntry {
            producer_id: 5,
            epoch: 0,
            last_sequence: -1,
            last_offset: -1,
            offset_delta: 0,
            timestamp: 1_700_000_000_000,
            coordinator_epoch: 3,
            current_txn_first_offset: -1,
        },
        // An ordinary entry.
        SnapshotEntry {
            producer_id: 7,
            epoch: 1,
            last_sequence: 9,
            last_offset: 40,
            offset_delta: 4,
            timestamp: 1_700_000_000_500,
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
        },
    ];
    std::fs::write(&path, encode_snapshot(&entries)).unwrap();
    let (out, err) = run(std::slice::from_ref(&path), &DumpOptions::default());
    assert_eq!(err, "");
    assert_eq!(
        out,
        format!(
            "Dumping {}\n\
             producerId: 5 producerEpoch: 0 coordinatorEpoch: 3 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1700000000000 \n\
             producerId: 7 producerEpoch: 1 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1700000000500 firstSequence: 5 lastSequence: 9 lastOffset: 40 offsetDelta: 4 timestamp: 1700000000500\n",
            path.display()
        )
    );
    // The JSON form is not concerned (no text line), only checked to still carry no batch.
    let (json, _) = run(
        &[path],
        &DumpOptions {
            format: DumpFormat::Json,
            ..Default::default()
        },
    );
    assert!(!json.lines().next().unwrap().contains("firstSequence"));
}

/// LOW REALISM (a client that writes a v2 batch without a producer id but with a negative
/// base sequence other than -1; `LogValidator` checks the sequence only of batches that have
/// a producer id, so the broker stores it as sent).
///
/// `DefaultRecordBatch.lastSequence()` returns `NO_SEQUENCE` only when
/// `baseSequence == NO_SEQUENCE` (-1), otherwise `incrementSequence(baseSequence,
/// lastOffsetDelta)`; `DumpLogSegments.printBatchLevel` prints that as `lastSequence:`.
/// A base sequence of -5 over two records prints `lastSequence: -4`. The per-record
/// `sequence:` is -1 (`DefaultRecord.readFrom`: `baseSequence >= 0 ? … : NO_SEQUENCE`).
/// klogscan's `increment_sequence` (crates/klogscan-format/src/bytes.rs) returns -1 for any
/// base below 0, so the batch line says `lastSequence: -1`.
#[test]
fn low_realism_last_sequence_of_a_negative_base_sequence_other_than_minus_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0).start_time(1_700_000_000_000);
    p.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::value("a"))
            .record(Rec::value("b"))
            .tweak(|s| s.base_sequence = -5),
    );
    let m = p.write(dir.path()).unwrap();
    let (out, _) = run(
        &[m.segments[0].1.clone()],
        &DumpOptions {
            deep_iteration: true,
            ..Default::default()
        },
    );
    let batch = out
        .lines()
        .find(|l| l.starts_with("baseOffset: 0 "))
        .unwrap();
    assert!(batch.contains(" baseSequence: -5 "), "{batch}");
    assert!(
        batch.contains(" lastSequence: -4 "),
        "kafka-dump-log prints lastSequence: -4 here:\n{batch}"
    );
    assert_eq!(
        out.lines().filter(|l| l.contains(" sequence: -1 ")).count(),
        2,
        "{out}"
    );
}

/// The KRaft leader's start-of-epoch control batch (`LeaderState.
/// appendStartOfEpochControlRecords`, kraft.version 1: LEADER_CHANGE + KRAFT_VERSION +
/// KRAFT_VOTERS in one batch) rebuilt byte-exact from the real `kafka-dump-log.sh
/// --cluster-metadata-decoder` output quoted in apache/kafka#19729 (KAFKA-19069, "Before":
/// Kafka 4.0): the batch's CRC equals the printed `crc: 3714449884`, so these are the bytes the
/// controller wrote. The batch line and the KRaftVersion / KRaftVoters lines are the real
/// tool's (a pin: no other test holds a real `KRaftVoters` line); the LEADER_CHANGE line is
/// checked by `leader_change_control_record_prints_as_kafka_4_1_does`.
#[test]
fn kraft_start_of_epoch_batch_prints_as_the_real_tool() {
    use klogscan::testkit::encode::control_record_raw;
    use klogscan::testkit::{BatchSpec, RecordSpec};
    // LeaderChangeMessage v0: leader 1, voters [1], granting voters [1] (19 bytes).
    let mut lc = 0i16.to_be_bytes().to_vec();
    lc.extend_from_slice(&1i32.to_be_bytes());
    for _ in 0..2 {
        lc.push(2);
        lc.extend_from_slice(&1i32.to_be_bytes());
        lc.push(0);
    }
    lc.push(0);
    // KRaftVersionRecord v0: kraft.version 1.
    let kv = vec![0, 0, 0, 1, 0];
    // VotersRecord v0: voter 1, directory tpx8pd1IQDqJwMfGzXj6GA, CONTROLLER localhost:9093,
    // kraft.version 0..1.
    let mut vr = 0i16.to_be_bytes().to_vec();
    vr.push(2);
    vr.extend_from_slice(&1i32.to_be_bytes());
    vr.extend_from_slice(&[
        182, 156, 124, 165, 221, 72, 64, 58, 137, 192, 199, 198, 205, 120, 250, 24,
    ]);
    vr.push(2);
    vr.push(11);
    vr.extend_from_slice(b"CONTROLLER");
    vr.push(10);
    vr.extend_from_slice(b"localhost");
    vr.extend_from_slice(&9093u16.to_be_bytes());
    vr.push(0); // endpoint tagged fields
    vr.extend_from_slice(&0i16.to_be_bytes());
    vr.extend_from_slice(&1i16.to_be_bytes());
    vr.push(0); // feature range tagged fields
    vr.push(0); // voter tagged fields
    vr.push(0); // top-level tagged fields
    assert_eq!((lc.len(), vr.len()), (19, 55));
    let mut p = PartitionBuilder::new("__cluster_metadata", 0);
    p.append_spec(BatchSpec {
        base_offset: 0,
        partition_leader_epoch: 1,
        control: true,
        base_timestamp: 1_747_299_887_693,
        records: [(2i16, lc), (5, kv), (6, vr)]
            .into_iter()
            .enumerate()
            .map(|(i, (t, v))| RecordSpec {
                offset_delta: i as i32,
                ..control_record_raw(t, Some(v))
            })
            .collect(),
        ..BatchSpec::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let (out, err) = dump_metadata(&m.segments[0].1);
    assert_eq!(err, "");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[2],
        "baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: true deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1747299887693 size: 174 magic: 2 compresscodec: none crc: 3714449884 isvalid: true"
    );
    assert!(lines[3].starts_with(
        "| offset: 0 CreateTime: 1747299887693 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] "
    ));
    assert_eq!(
        lines[4],
        "| offset: 1 CreateTime: 1747299887693 keySize: 4 valueSize: 5 sequence: -1 headerKeys: [] KRaftVersion {\"version\":0,\"kRaftVersion\":1}"
    );
    assert_eq!(
        lines[5],
        "| offset: 2 CreateTime: 1747299887693 keySize: 4 valueSize: 55 sequence: -1 headerKeys: [] KRaftVoters {\"version\":0,\"voters\":[{\"voterId\":1,\"voterDirectoryId\":\"tpx8pd1IQDqJwMfGzXj6GA\",\"endpoints\":[{\"name\":\"CONTROLLER\",\"host\":\"localhost\",\"port\":9093}],\"kRaftVersionFeature\":{\"minSupportedVersion\":0,\"maxSupportedVersion\":1}}]}"
    );
}
