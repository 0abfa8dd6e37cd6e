//! The byte format layer against Kafka's readers and writers: batch shapes that Kafka's own
//! code (or an independent producer through a broker's `LogValidator`) puts on disk, read
//! through the library's front door (`request::run`, what the CLI calls). Each test names
//! the Kafka class and test it comes from; each failing one is a divergence found by the
//! format-layer audit (branch `aud-fmt`).
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::encode::control_record_raw;
use klogscan::testkit::{BatchSpec, PartitionBuilder, RecordSpec};
use tempfile::TempDir;

fn scan_with(p: &PartitionBuilder, opts: ScanOptions) -> (TempDir, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let a = request::run(&Request::new([&m.dir]).with_options(opts)).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    (dir, a.report)
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

// ----- KRaft control batches of several records ------------------------------------------

/// `LeaderChangeMessage` v0 (flexible): leader 1, voters [1], granting voters [1].
fn leader_change_value() -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&1i32.to_be_bytes());
    for _ in 0..2 {
        v.push(2); // compact array of one voter
        v.extend_from_slice(&1i32.to_be_bytes());
        v.push(0); // the voter's tagged fields
    }
    v.push(0);
    v
}

/// `KRaftVersionRecord` v0: kraft.version 1.
fn kraft_version_value() -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&1i16.to_be_bytes());
    v.push(0);
    v
}

/// `VotersRecord` v0: voter 1 (a directory id, one CONTROLLER endpoint, kraft.version 0–1).
fn voters_value() -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.push(2);
    v.extend_from_slice(&1i32.to_be_bytes());
    v.extend_from_slice(&[7u8; 16]);
    v.push(2); // one endpoint
    v.push(11);
    v.extend_from_slice(b"CONTROLLER");
    v.push(10);
    v.extend_from_slice(b"localhost");
    v.extend_from_slice(&9093u16.to_be_bytes());
    v.push(0);
    v.extend_from_slice(&0i16.to_be_bytes());
    v.extend_from_slice(&1i16.to_be_bytes());
    v.push(0); // KRaftVersionFeature's tagged fields
    v.push(0); // the voter's tagged fields
    v.push(0);
    v
}

/// A control batch of the KRaft leader (`MemoryRecordsBuilder`, no producer id, not
/// compressed: `KafkaRaftClient` builds its accumulator with `Compression.NONE`), records at
/// offset deltas 0.. as the builder numbers them.
fn raft_control_batch(base_offset: i64, epoch: i32, records: Vec<(i16, Vec<u8>)>) -> BatchSpec {
    BatchSpec {
        base_offset,
        partition_leader_epoch: epoch,
        control: true,
        base_timestamp: 1_700_000_000_000,
        records: records
            .into_iter()
            .enumerate()
            .map(|(i, (t, v))| RecordSpec {
                offset_delta: i as i32,
                ..control_record_raw(t, Some(v))
            })
            .collect(),
        ..BatchSpec::default()
    }
}

/// `LeaderState.appendStartOfEpochControlRecords` (raft, Kafka 3.9+): with kraft.version 1
/// (a quorum formatted with `--standalone` / `--initial-controllers`), the new leader whose
/// voter set came from the bootstrap checkpoint (or whose endpoints changed) writes ONE
/// control batch holding LEADER_CHANGE, KRAFT_VERSION and KRAFT_VOTERS — three records
/// (`builder.appendLeaderChangeMessage`, `appendKRaftVersionMessage`, `appendVotersMessage`
/// on one `MemoryRecordsBuilder`). `LeaderState.maybeAppendUpgradedKRaftVersion` (4.1+) writes
/// KRAFT_VERSION + KRAFT_VOTERS in one control batch likewise. `MemoryRecordsTest` /
/// `DefaultRecordBatchTest` read such batches as any batch (count = lastOffsetDelta + 1, CRC
/// valid); the raft client replays every record of it (`KRaftControlRecordStateMachine`).
///
/// klogscan's header check (`check_header_fields` in src/partition/scan/integrity.rs)
/// required every control batch to hold exactly one record and reported an `invalid_batch`
/// error ("control batch holds 3 records (expected 1)") on a healthy metadata log. Only a
/// COMMIT/ABORT marker (the transaction coordinator's `MemoryRecords.withEndTransactionMarker`)
/// is a one-record batch by construction; the rule now applies to those alone.
#[test]
fn kraft_leader_start_of_epoch_control_batch_of_three_records_is_healthy() {
    let mut p = PartitionBuilder::new("__cluster_metadata", 0);
    p.append_spec(raft_control_batch(
        0,
        1,
        vec![
            (2, leader_change_value()),
            (5, kraft_version_value()),
            (6, voters_value()),
        ],
    ));
    // kraft.version upgrade (4.1+): KRAFT_VERSION + KRAFT_VOTERS in one batch.
    p.append_spec(raft_control_batch(
        3,
        1,
        vec![(5, kraft_version_value()), (6, voters_value())],
    ));
    for deep in [false, true] {
        let (_d, r) = scan_with(&p, ScanOptions::default().with_deep(deep));
        assert!(
            of_kind(&r, Kind::InvalidBatch).is_empty(),
            "deep={deep}: {:#?}",
            r.findings
        );
        // Every record decodes: the metadata log's reader is quiet too.
        assert!(
            r.findings
                .iter()
                .all(|f| f.severity < klogscan::Severity::Warning),
            "deep={deep}: {:#?}",
            r.findings
        );
    }
}

/// A COMMIT marker batch of two records (producer 7, epoch 0): no coordinator writes one
/// (`MemoryRecords.withEndTransactionMarker`: one record).
fn two_record_commit() -> BatchSpec {
    let marker = |delta| RecordSpec {
        offset_delta: delta,
        ..klogscan::testkit::encode::end_txn_record(true, 0)
    };
    BatchSpec {
        control: true,
        transactional: true,
        producer_id: 7,
        producer_epoch: 0,
        base_timestamp: 1_700_000_000_000,
        records: vec![marker(0), marker(1)],
        ..BatchSpec::default()
    }
}

/// The negative twin: a COMMIT marker batch of two records is no batch Kafka's coordinator
/// writes (`MemoryRecords.withEndTransactionMarker`: one record), and is still an
/// `invalid_batch` — said as what it is: not rejected on append, read by its first record.
#[test]
fn a_transaction_marker_batch_of_two_records_is_still_reported() {
    let mut p = PartitionBuilder::new("orders", 0);
    p.append_spec(two_record_commit());
    let (_d, r) = scan_with(&p, ScanOptions::default());
    let bad = of_kind(&r, Kind::InvalidBatch);
    assert_eq!(bad.len(), 1, "{:#?}", r.findings);
    assert!(
        bad[0]
            .message
            .contains("transaction marker batch holds 2 records"),
        "{}",
        bad[0].message
    );
    assert!(
        bad[0].broker_behaviour.contains("not rejected on append"),
        "{}",
        bad[0].broker_behaviour
    );
}

/// Attribute bits 7–15 are unused (`DefaultRecordBatch`'s attribute layout): no reader or
/// validator looks at them, and `LogValidator` rewrites the attributes only with the max
/// timestamp, so a producer's stray bits (CRC-valid) are stored and read as any batch. No
/// `invalid_batch` ("rejected on append" was not what the broker does); an unknown codec id
/// in the same field still is one.
#[test]
fn unused_attribute_bits_are_no_invalid_batch() {
    let batch = |attributes: i16| BatchSpec {
        base_timestamp: 1_700_000_000_000,
        records: vec![RecordSpec {
            key: Some(b"k".to_vec()),
            value: Some(b"v".to_vec()),
            ..RecordSpec::default()
        }],
        overrides: klogscan::testkit::encode::HeaderOverrides {
            attributes: Some(attributes),
            ..Default::default()
        },
        ..BatchSpec::default()
    };
    for (attributes, invalid) in [(0x0080, 0), (0x7f00, 0), (0x0007, 1)] {
        let mut p = PartitionBuilder::new("orders", 0);
        p.append_spec(batch(attributes));
        let (_d, r) = scan_with(&p, ScanOptions::default());
        let bad = of_kind(&r, Kind::InvalidBatch);
        assert_eq!(bad.len(), invalid, "0x{attributes:04x}: {:#?}", r.findings);
    }
}

// ----- maxTimestamp of records timestamped before 1970 -----------------------------------

/// `LogValidator.assignOffsetsNonCompressed` (and `validateMessagesAndAssignOffsetsCompressed`,
/// `MemoryRecordsBuilder.appendWithOffset`) compute a batch's maxTimestamp as the largest
/// record timestamp starting from `RecordBatch.NO_TIMESTAMP` (-1): `if (record.timestamp() >
/// maxBatchTimestamp)` with `maxBatchTimestamp = NO_TIMESTAMP`, then
/// `batch.setMaxTimestamp(CREATE_TIME, maxBatchTimestamp)`. A producer that is not the Java
/// client (which refuses negative timestamps in `ProducerRecord`) — librdkafka, franz-go,
/// sarama with a pre-1970 `time.Time` — can send CreateTime records before the epoch; with
/// the default `log.message.timestamp.before.max.ms` (Long.MAX_VALUE) the validator accepts
/// them (`recordHasInvalidTimestamp`), and the stored header then holds maxTimestamp -1
/// whatever the client wrote.
///
/// klogscan's `--deep` record check (`check_records` in src/partition/scan/integrity.rs)
/// started its maximum at i64::MIN, compared the header with the largest record timestamp
/// (-3000 here) and reported an `invalid_batch` error ("maxTimestamp -1 differs from the
/// newest record timestamp -3000", "rejected on append by the leader") on exactly what the
/// leader wrote; it now starts at -1 (NO_TIMESTAMP), as every Kafka writer does.
#[test]
fn deep_max_timestamp_of_pre_1970_records_is_minus_one_as_the_broker_writes_it() {
    let mut p = PartitionBuilder::new("validated", 0);
    let rec = |i: i32, delta: i64| RecordSpec {
        timestamp_delta: delta,
        offset_delta: i,
        key: Some(b"k".to_vec()),
        value: Some(b"v".to_vec()),
        ..RecordSpec::default()
    };
    for codec in [
        klogscan::testkit::Codec::None,
        klogscan::testkit::Codec::Lz4,
    ] {
        let base_offset = p.next_offset();
        p.append_spec(BatchSpec {
            base_offset,
            partition_leader_epoch: 0,
            codec,
            base_timestamp: -5000,
            records: vec![rec(0, 0), rec(1, 2000)], // timestamps -5000, -3000
            overrides: klogscan::testkit::encode::HeaderOverrides {
                max_timestamp: Some(-1),
                ..Default::default()
            },
            ..BatchSpec::default()
        });
    }
    let (_d, r) = scan_with(&p, ScanOptions::default().with_deep(true));
    assert!(
        of_kind(&r, Kind::InvalidBatch).is_empty(),
        "{:#?}",
        r.findings
    );
}

// ----- a magic byte outside 0–2 ---------------------------------------------------------

/// `orders-0` of three idempotent batches (offsets 0–1, 2–3, 4–5), the middle one's magic
/// byte set to `magic`; `break_crc` also flips a bit its CRC-32C covers.
fn magic_flipped(magic: u8, break_crc: bool) -> (TempDir, ScanReport, u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0);
    for _ in 0..3 {
        p.append(
            klogscan::testkit::Batch::new(klogscan::testkit::Producer::idempotent(7, 0)).records(2),
        );
    }
    let m = p.write(dir.path()).unwrap();
    let b = &m.batches[1];
    let mut bytes = std::fs::read(&b.file).unwrap();
    let at = b.position as usize;
    bytes[at + 16] = magic;
    if break_crc {
        bytes[at + 40] ^= 1;
    }
    std::fs::write(&b.file, bytes).unwrap();
    let a = request::run(&Request::new([&m.dir]).with_options(ScanOptions::default())).unwrap();
    (dir, a.report, b.position)
}

/// `FileLogInputStream.nextBatch` checks no magic: an entry of magic above 1 goes to the v2
/// reader, whose `DefaultRecordBatch.ensureValid` checks the CRC-32C from the attributes
/// on — the magic byte is outside it. A flipped bit in a batch's magic (2 → 3) leaves that
/// CRC holding: `LogSegment.recover` keeps the batch and those after it (no truncation;
/// the log ends at 6), while the fetch response's `ByteBufferLogInputStream.nextBatchSize`
/// refuses a magic outside 0–2 ("Invalid magic found in record"): one `invalid_batch` at
/// offset 2 saying so. Twin: the same flip with a bit of the CRC's range flipped too is a
/// batch recovery truncates at (the second batch's position: it and what follows do not
/// frame, as the legacy and v2 readers' CRCs both fail).
#[test]
fn a_flipped_magic_under_a_crc_that_holds_is_kept_and_refused_by_readers() {
    let (_d, r, _) = magic_flipped(3, false);
    let p = &r.partitions[0];
    assert_eq!(p.truncation, None, "{:#?}", r.findings);
    assert_eq!((p.batches, p.log_end_offset), (3, Some(6)));
    let bad = of_kind(&r, Kind::InvalidBatch);
    assert_eq!(bad.len(), 1, "{:#?}", r.findings);
    assert_eq!(bad[0].offset, Some(2));
    assert!(
        bad[0].message.contains("magic 3 is not 2"),
        "{}",
        bad[0].message
    );
    let client = bad[0].client_error.as_deref().unwrap_or_default();
    assert!(client.contains("Invalid magic found in record"), "{client}");
    assert!(of_kind(&r, Kind::CrcMismatch).is_empty());

    let (_d, r, at) = magic_flipped(3, true);
    let p = &r.partitions[0];
    let t = p
        .truncation
        .as_ref()
        .expect("recovery truncates at the batch");
    assert_eq!(t.position, at, "{t:?}");
    assert!(t.reason.contains("magic byte is not 0, 1 or 2"), "{t:?}");
    assert_eq!(p.log_end_offset, Some(2));
}

/// The same batch in a log dir shut down cleanly: the load's wording (nothing recovers the
/// segment) keeps what the rule says of an append — "not rejected on append" — as it does
/// after a crash, when recovery reads past the batch (its size and CRC hold). Near miss: a
/// batch whose CRC fails in the same log dir is "rejected on append", then "not noticed on
/// load".
#[test]
fn a_marker_batch_of_two_records_keeps_its_words_in_a_clean_log_dir() {
    let run = |crc_ok: bool| {
        let mut p = PartitionBuilder::new("orders", 0);
        p.append_spec(BatchSpec {
            overrides: klogscan::testkit::HeaderOverrides {
                crc: (!crc_ok).then_some(1),
                ..Default::default()
            },
            ..two_record_commit()
        });
        let d = tempfile::tempdir().unwrap();
        klogscan::testkit::LogDirBuilder::new(1)
            .partition(p)
            .write(d.path())
            .unwrap();
        klogscan::pipeline::scan(&[d.path().to_path_buf()], &ScanOptions::default())
    };
    let r = run(true);
    let bad = of_kind(&r, Kind::InvalidBatch);
    assert_eq!(bad.len(), 1, "{:#?}", r.findings);
    assert!(
        bad[0]
            .broker_behaviour
            .starts_with("not rejected on append"),
        "{}",
        bad[0].broker_behaviour
    );
    let r = run(false);
    let crc = of_kind(&r, Kind::CrcMismatch);
    assert_eq!(crc.len(), 1, "{:#?}", r.findings);
    assert!(
        crc[0]
            .broker_behaviour
            .starts_with("rejected on append (CorruptRecordException); not noticed on load"),
        "{}",
        crc[0].broker_behaviour
    );
}
