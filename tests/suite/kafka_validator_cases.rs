//! Kafka's append-validation tests, reproduced as bytes on disk: each test here writes the
//! batch shape of one case of `LogValidatorTest`
//! (storage/src/test/java/org/apache/kafka/storage/internals/log/), `DefaultRecordBatchTest`
//! or `MemoryRecordsTest` (clients/src/test/java/org/apache/kafka/common/record/) into a
//! segment, runs klogscan through the library's front door (`request::run`, what the CLI
//! calls) and asserts what a forensic reader should say about that batch *on disk*.
//!
//! `LogValidator` judges a producer's request: most of its refusals never reach a disk. On
//! disk the same shape can only come from damage, a bug or an old broker, so the question
//! asked here is different: is the batch reported (with the kind and severity of
//! docs/findings.md), and does klogscan's model of the broker's *recovery* (what
//! `LogSegment.recover` keeps or truncates) and *replay* (producer state, transactions)
//! agree with Kafka's code for those bytes? Where the validator rewrites rather than
//! refuses (timestamps, offsets, conversions), the rewritten shape is what a disk holds and
//! nothing may be reported.
//!
//! Tests marked `#[ignore = "discrepancy: …"]` assert what Kafka's code implies and fail
//! today; the report of the helper that wrote them explains each.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::encode::{compress, end_txn_record};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{
    Batch, BatchInfo, BatchSpec, Codec, Legacy, LegacySpec, PartitionBuilder, Producer, Rec,
    RecordSpec,
};
use serde_json::json;
use tempfile::TempDir;

mod keyless;
mod legacy;

// ----- helpers ----------------------------------------------------------------------------

const TOPIC: &str = "validated";

fn partition() -> PartitionBuilder {
    PartitionBuilder::new(TOPIC, 0)
}

/// Write `p` and scan its directory as the CLI does, with `opts`.
fn scan_with(p: &PartitionBuilder, opts: ScanOptions) -> (TempDir, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let a = request::run(&Request::new([&m.dir]).with_options(opts)).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    (dir, a.report)
}

fn scan(p: &PartitionBuilder) -> ScanReport {
    scan_with(p, ScanOptions::default()).1
}

/// `--deep`: record-level checks.
fn scan_deep(p: &PartitionBuilder) -> ScanReport {
    scan_with(p, ScanOptions::default().with_deep(true)).1
}

/// `--compacted validated`: the topic is declared compacted.
fn scan_compacted(p: &PartitionBuilder, deep: bool) -> ScanReport {
    let opts = ScanOptions::default()
        .with_deep(deep)
        .with_compacted_topics([TOPIC]);
    scan_with(p, opts).1
}

/// `(kind, severity, offset)` of every finding, in report order.
fn kinds(r: &ScanReport) -> Vec<(Kind, Severity, Option<i64>)> {
    r.findings
        .iter()
        .map(|f| (f.kind, f.severity, f.offset))
        .collect()
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

fn one(r: &ScanReport, k: Kind) -> &Finding {
    let v = of_kind(r, k);
    assert_eq!(v.len(), 1, "expected one {k}: {:#?}", r.findings);
    v[0]
}

/// The header problems an `invalid_batch` lists (`evidence.problems`).
fn problems(f: &Finding) -> Vec<String> {
    f.evidence["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems list: {f:#?}"))
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

/// Where the predicted recovery truncates: `(position, offset)`.
fn truncation(r: &ScanReport) -> Option<(u64, Option<i64>)> {
    r.partitions[0]
        .truncation
        .as_ref()
        .map(|t| (t.position, t.offset))
}

/// Three plain records at `DEFAULT_START_MS` + index, as `createRecords` builds them.
fn hello_there_beautiful() -> Batch {
    Batch::new(Producer::PLAIN).values(["hello", "there", "beautiful"])
}

/// A v2 batch as the broker's validator leaves it: three records with offset deltas
/// `deltas`, everything else derived.
fn with_deltas(deltas: [i32; 3]) -> Batch {
    let mut b = Batch::new(Producer::PLAIN);
    for (i, (d, v)) in deltas
        .iter()
        .zip(["hello", "there", "beautiful"])
        .enumerate()
    {
        b = b.record(
            Rec::value(v)
                .offset_delta(*d)
                .at(DEFAULT_START_MS + i as i64),
        );
    }
    b.at(DEFAULT_START_MS)
}

/// Manifest row for an entry appended raw (`append_raw`).
fn raw_info(first: i64, last: i64, magic: u8, size: usize) -> BatchInfo {
    BatchInfo {
        base_offset: first,
        last_offset: last,
        position: 0,
        size: size as u64,
        file: Default::default(),
        segment_base: 0,
        magic,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        record_count: (last - first + 1) as i32,
        codec: Codec::None,
        transactional: false,
        control: None,
        coordinator_epoch: None,
        partition_leader_epoch: -1,
        first_timestamp: -1,
        max_timestamp: -1,
    }
}

// ----- LogValidatorTest: offsets inside a batch --------------------------------------------

/// `LogValidatorTest.testValidationOfBatchesWithNonSequentialInnerOffsets` (v2 case): a
/// gzip v2 batch whose 20 records all carry offset 0 (so lastOffsetDelta 0 and
/// recordsCount 20) is refused by the validator. On disk it is an `invalid_batch` (error)
/// naming the count/offset-range mismatch, not a truncation point: `LogSegment.recover`
/// checks only the CRC and the last offset.
#[test]
fn v2_batch_with_every_record_at_offset_zero_is_an_invalid_batch() {
    let mut p = partition();
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.append(
        Batch::new(Producer::PLAIN)
            .values((0..20).map(|i| i.to_string()))
            .codec(Codec::Gzip)
            .tweak(|s| s.records.iter_mut().for_each(|r| r.offset_delta = 0)),
    );
    p.append(Batch::new(Producer::PLAIN).records(1));
    let r = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![(Kind::InvalidBatch, Severity::Error, Some(1))]
    );
    let f = one(&r, Kind::InvalidBatch);
    assert_eq!(
        problems(f),
        vec!["recordsCount 20 exceeds lastOffsetDelta + 1 = 1"]
    );
    assert_eq!(f.evidence["records_count"], json!(20));
    assert_eq!(truncation(&r), None);
    assert_eq!(r.partitions[0].log_end_offset, Some(3));
    // With --deep the records themselves are reported too, all as the same batch.
    let d = scan_deep(&p);
    assert!(
        d.findings
            .iter()
            .all(|f| f.kind == Kind::InvalidBatch && f.offset == Some(1)),
        "{:#?}",
        d.findings
    );
    assert!(
        d.findings
            .iter()
            .flat_map(problems)
            .any(|p| p == "record offsetDelta 0 not above the previous 0"),
        "{:#?}",
        d.findings
    );
}

/// The same Kafka case, checked for what `--deep` claims about the batch's timestamps:
/// the 20 records' timestamps are consistent with maxTimestamp (only their offsets are
/// wrong), so no "maxTimestamp differs" problem may be listed. klogscan stops collecting
/// record problems after four; it compared maxTimestamp with the newest timestamp *of the
/// records read so far*, which invented a timestamp problem (fixed: the comparison needs
/// every record read).
#[test]
fn deep_check_does_not_invent_a_max_timestamp_problem() {
    let mut p = partition();
    // offset deltas 0,0,0,0,0,5: lastOffsetDelta 5, six records (a consistent header), four
    // repeated deltas; timestamps base+0..base+5, maxTimestamp base+5 (correct).
    p.append(Batch::new(Producer::PLAIN).records(6).tweak(|s| {
        for (i, r) in s.records.iter_mut().enumerate() {
            r.offset_delta = if i == 5 { 5 } else { 0 };
        }
    }));
    let r = scan_deep(&p);
    let f = one(&r, Kind::InvalidBatch);
    let ps = problems(f);
    assert!(
        ps.iter().all(|p| !p.contains("maxTimestamp")),
        "a timestamp problem the bytes do not have: {ps:?}"
    );
}

/// `LogValidatorTest.testNonIncreasingOffsetRecordBatchHasMetricsLogged`, the part that is
/// normal on disk: records at offset deltas 0, 2, 3 (three records over four offsets) are
/// refused from a client (count ≠ offset range), but that is exactly what the cleaner leaves
/// of a compacted batch, so with compaction unknown nothing is reported (docs/findings.md,
/// `invalid_batch`: "on compacted topics fewer records … are normal"), with or without
/// `--deep`.
#[test]
fn fewer_records_than_offsets_is_not_reported_when_compaction_is_unknown() {
    let mut p = partition();
    p.append(with_deltas([0, 2, 3]));
    p.append(Batch::new(Producer::PLAIN).records(1));
    for r in [scan(&p), scan_deep(&p)] {
        assert_eq!(kinds(&r), vec![]);
        assert_eq!(r.partitions[0].log_end_offset, Some(5));
        assert_eq!(r.partitions[0].records, 4);
    }
}

/// `LogValidatorTest.testNonIncreasingOffsetRecordBatchHasMetricsLogged`, as its bytes
/// are: the test moves the batch of offset deltas 0, 2, 3 to last offset 2, so its
/// baseOffset becomes −1 (offset range −1..2 for three records). The validator refuses it.
/// On disk, after a batch at offset 0, `LogSegment.recover` keeps it: the CRC does not cover
/// baseOffset, `FileLogInputStream.nextBatch` does not look at the offset's sign, and only
/// the last offset (2) is range-checked. So recovery truncates nothing and the batch after
/// it stays; the batch itself is an impossible one (it overlaps offset 0) and must be
/// reported at its position (and, lying below the segment's base with its last offset in
/// range, as kept: no split). Twin: the same batch with a CRC that does not hold is where
/// recovery stops.
#[test]
fn negative_base_offset_batch_is_kept_by_recovery() {
    let mut p = partition();
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.append(with_deltas([0, 2, 3]).tweak(|s| s.base_offset = -1));
    p.append(Batch::new(Producer::PLAIN).records(1));
    let r = scan(&p);
    assert_eq!(truncation(&r), None, "{:#?}", r.findings);
    assert_eq!(r.partitions[0].batches, 3);
    assert_eq!(r.partitions[0].log_end_offset, Some(4));
    assert!(of_kind(&r, Kind::TrailingBytes).is_empty());
    assert!(
        r.findings.iter().any(|f| f.position == Some(80)
            && matches!(f.kind, Kind::InvalidBatch | Kind::OffsetRegression)),
        "{:#?}",
        r.findings
    );
    // Below the segment's base, yet its last offset (2) is in range: no split is claimed.
    let range = of_kind(&r, Kind::SegmentOffsetOutOfRange);
    assert_eq!(range.len(), 1, "{:#?}", r.findings);
    assert!(range[0].broker_behaviour.contains("kept"), "{range:#?}");
    // Negative twin: the same bytes with a CRC that does not hold are where recovery stops.
    let mut q = partition();
    q.append(Batch::new(Producer::PLAIN).records(1));
    q.append(with_deltas([0, 2, 3]).tweak(|s| {
        s.base_offset = -1;
        s.overrides.crc = Some(0xdead_beef);
    }));
    q.append(Batch::new(Producer::PLAIN).records(1));
    let r = scan(&q);
    assert_eq!(truncation(&r).map(|t| t.0), Some(80), "{:#?}", r.findings);
    assert_eq!(r.partitions[0].log_end_offset, Some(1), "{:#?}", r.findings);
}

/// The farthest a kept batch can lie below zero: base offset −(2^31 − 1), lastOffsetDelta
/// 2^31 − 1, so its last offset is 0. Every stage (scan with `--deep`, `verify`) reads it
/// without an arithmetic overflow, and recovery keeps it; one below that (ending at −1)
/// fails recovery's range check and is where the scan stops.
#[test]
fn the_lowest_kept_base_offset_is_read_by_every_stage() {
    for (base, kept) in [
        (-i64::from(i32::MAX), true),
        (-i64::from(i32::MAX) - 1, false),
    ] {
        let mut p = partition();
        p.append(Batch::new(Producer::PLAIN).records(1));
        p.append(with_deltas([0, 1, 2]).tweak(move |s| {
            s.base_offset = base;
            s.overrides.last_offset_delta = Some(i32::MAX);
        }));
        p.append(Batch::new(Producer::PLAIN).records(1));
        let (d, r) = scan_with(&p, ScanOptions::default().with_deep(true));
        assert_eq!(truncation(&r).is_none(), kept, "{base}: {:#?}", r.findings);
        let v = request::verify(&Request::new([d.path()]), None).unwrap();
        assert_eq!(v.report.partitions.len(), 1);
    }
}

/// `LogValidatorTest.testBatchWithoutRecordsNotAllowed`: a v2 header with no records
/// (transactional, producer 1324 epoch 10, baseSequence 984, offsets 0..5 claimed, leader
/// epoch 40) is refused from a client. On disk it is what the cleaner leaves when it empties
/// a producer's last batch (`MemoryRecords.filterTo`, `RETAIN_EMPTY`), so it is not reported
/// (compaction unknown or declared); the replay applies it as Kafka's `ProducerAppendInfo`
/// does (a data batch, even empty, opens the transaction), and the COMMIT after it closes it.
#[test]
fn empty_batch_left_by_the_cleaner_is_not_reported() {
    let txn = Producer::transactional(1324, 10);
    let mut p = partition().leader_epoch(40);
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.append(
        Batch::new(txn)
            .sequence(984)
            .tweak(|s| s.overrides.last_offset_delta = Some(5)),
    );
    p.commit(txn, 3);
    for r in [scan(&p), scan_compacted(&p, true)] {
        assert_eq!(kinds(&r), vec![]);
        assert_eq!(r.partitions[0].records, 2); // the plain record and the marker
        assert_eq!(r.partitions[0].log_end_offset, Some(8));
        assert_eq!(r.partitions[0].last_stable_offset, Some(8));
    }
    // Negative twin: without the marker the empty batch's transaction stays open.
    let mut q = partition().leader_epoch(40);
    q.append(
        Batch::new(txn)
            .sequence(984)
            .tweak(|s| s.overrides.last_offset_delta = Some(5)),
    );
    let r = scan(&q);
    assert_eq!(
        kinds(&r),
        vec![(Kind::OpenTransaction, Severity::Info, Some(0))]
    );
    assert_eq!(r.partitions[0].last_stable_offset, Some(0));
}

// ----- DefaultRecordBatchTest: header fields against the records ---------------------------

/// `DefaultRecordBatchTest.testInvalidRecordCountTooMany{NonCompressed,Compressed}V2`:
/// three records under a recordsCount of 5 fail iteration (`InvalidRecordException`). The
/// header alone shows it (5 records cannot fit in 3 offsets): an `invalid_batch` (error)
/// without `--deep`; `--deep` adds the record-level error ("premature EOF"). Recovery does
/// not iterate records: no truncation.
#[test]
fn records_count_above_the_records_present() {
    for codec in [Codec::None, Codec::Gzip] {
        let mut p = partition();
        p.append(hello_there_beautiful().codec(codec).tweak(|s| {
            s.overrides.records_count = Some(5);
        }));
        let r = scan(&p);
        assert_eq!(
            kinds(&r),
            vec![(Kind::InvalidBatch, Severity::Error, Some(0))],
            "{codec:?}"
        );
        assert_eq!(
            problems(&r.findings[0]),
            vec!["recordsCount 5 exceeds lastOffsetDelta + 1 = 3"]
        );
        assert_eq!(truncation(&r), None);
        let d = scan_deep(&p);
        let deep: Vec<_> = d
            .findings
            .iter()
            .filter(|f| f.evidence.get("problem").is_some())
            .collect();
        assert_eq!(deep.len(), 1, "{codec:?}: {:#?}", d.findings);
        assert_eq!(
            deep[0].evidence["problem"],
            json!("incorrect declared batch size, premature EOF reached")
        );
        assert_eq!(truncation(&d), None);
    }
}

/// `DefaultRecordBatchTest.testInvalidRecordCountTooLittle{NonCompressed,Compressed}V2`:
/// three records under a recordsCount of 2 (lastOffsetDelta 2) fail iteration ("records
/// still remaining"). The header looks like a compacted batch (2 records over 3 offsets),
/// so only `--deep`, which reads the records, reports it; the default scan does not
/// (record-level checks need `--deep`).
#[test]
fn records_count_below_the_records_present() {
    for codec in [Codec::None, Codec::Gzip] {
        let mut p = partition();
        p.append(hello_there_beautiful().codec(codec).tweak(|s| {
            s.overrides.records_count = Some(2);
        }));
        assert_eq!(kinds(&scan(&p)), vec![], "{codec:?}");
        let d = scan_deep(&p);
        assert_eq!(
            kinds(&d),
            vec![(Kind::InvalidBatch, Severity::Error, Some(0))],
            "{codec:?}"
        );
        let f = &d.findings[0];
        assert_eq!(f.evidence["field"], json!("recordsCount"));
        assert_eq!(
            f.evidence["problem"],
            json!("incorrect declared batch size, records still remaining")
        );
        assert_eq!(truncation(&d), None);
    }
}

/// `DefaultRecordBatchTest.testInvalidRecordSize`: a batchLength of 10 fails
/// `ensureValid` (`CorruptRecordException`). On disk the entry cannot be framed: an
/// `invalid_batch` on the size field, where recovery truncates (byte 0, nothing left).
#[test]
fn batch_length_below_the_header_is_a_truncation_point() {
    let mut p = partition();
    p.append(hello_there_beautiful().tweak(|s| s.overrides.batch_length = Some(10)));
    let r = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::InvalidBatch, Severity::Error, None)]);
    let f = &r.findings[0];
    assert_eq!(f.evidence["field"], json!("size"));
    assert_eq!(f.evidence["size"], json!(10));
    assert_eq!(truncation(&r), Some((0, None)));
    assert_eq!(r.partitions[0].batches, 0);
}

/// `DefaultRecordBatchTest.testInvalidCrc`: lastOffsetDelta rewritten to 23 after the CRC
/// was computed: `ensureValid` fails (`CorruptRecordException`). On disk: `crc_mismatch`
/// (error) at the batch, where recovery truncates. The negative twin, the same batch with
/// its CRC, is clean.
#[test]
fn header_changed_after_the_crc_is_a_crc_mismatch() {
    let good = BatchSpec {
        base_timestamp: DEFAULT_START_MS,
        records: (0..3)
            .map(|i| RecordSpec {
                offset_delta: i,
                timestamp_delta: i as i64,
                key: Some(vec![b'a' + i as u8]),
                value: Some(vec![b'1' + i as u8]),
                ..RecordSpec::default()
            })
            .collect(),
        ..BatchSpec::default()
    };
    let mut p = partition();
    p.append_spec(good.clone());
    assert_eq!(kinds(&scan(&p)), vec![]);
    let crc = u32::from_be_bytes(good.encode()[17..21].try_into().unwrap());
    let mut bad = good;
    bad.overrides.last_offset_delta = Some(23);
    bad.overrides.crc = Some(crc);
    let mut p = partition();
    p.append_spec(bad);
    let r = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![(Kind::CrcMismatch, Severity::Error, Some(0))]
    );
    assert_eq!(r.findings[0].evidence["stored_crc"], json!(crc));
    assert_eq!(truncation(&r), Some((0, Some(0))));
}

// ----- LogValidatorTest: producer fields ---------------------------------------------------

/// `LogValidatorTest.checkInvalidSequence`: a batch of producer 1234 with baseSequence −2
/// is refused from a client (`InvalidRecordException`). On disk: `invalid_producer_fields`,
/// a warning by the documented rule 18–19 (replicas and recovery never refuse it), whose
/// broker text names the leader's refusal. Twin: the same batch at sequence 0 is clean.
#[test]
fn negative_sequence_with_a_producer_id() {
    let p1234 = Producer::idempotent(1234, 0);
    let mut p = partition();
    p.append(
        Batch::new(p1234)
            .values(["hello"])
            .tweak(|s| s.base_sequence = -2),
    );
    let r = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![(Kind::InvalidProducerFields, Severity::Warning, Some(0))]
    );
    let f = &r.findings[0];
    assert_eq!(
        problems(f),
        vec!["baseSequence < 0 on a data batch with a producer id"]
    );
    assert!(f.broker_behaviour.contains("rejects on append"), "{f:#?}");
    assert_eq!(truncation(&r), None);
    let mut q = partition();
    q.append(Batch::new(p1234).values(["hello"]).sequence(0));
    assert_eq!(kinds(&scan(&q)), vec![]);
}

// ----- LogValidatorTest: control batches ---------------------------------------------------

/// `LogValidatorTest.testControlRecordsNotCompressed`: the validator never compresses a
/// control batch (the coordinator's marker stays uncompressed whatever the topic's codec),
/// so a compressed one on disk is an `invalid_batch` ("control batch is compressed"). Twin:
/// the marker as the coordinator writes it (`MemoryRecords.withEndTransactionMarker`,
/// producer 23423 epoch 5, coordinator epoch 0) closes the transaction, with no finding.
#[test]
fn compressed_control_batch_is_an_invalid_batch() {
    let txn = Producer::transactional(23423, 5);
    let mut ok = partition();
    ok.append(Batch::new(txn).records(1));
    ok.commit(txn, 0);
    let r = scan(&ok);
    assert_eq!(kinds(&r), vec![]);
    assert_eq!(r.partitions[0].last_stable_offset, Some(2));
    assert_eq!(r.partitions[0].control_batches, 1);

    let r = scan(&compressed_commit(txn));
    let f = one(&r, Kind::InvalidBatch);
    assert_eq!(f.offset, Some(1));
    assert!(
        problems(f).contains(&"control batch is compressed".to_string()),
        "{f:#?}"
    );
}

/// A transactional batch at 0, then its COMMIT marker at 1 written gzip-compressed.
fn compressed_commit(txn: Producer) -> PartitionBuilder {
    let mut p = partition();
    p.append(Batch::new(txn).records(1));
    p.append(Batch::new(txn).tweak(|s| {
        s.control = true;
        s.codec = Codec::Gzip;
        s.base_sequence = -1;
        s.records = vec![end_txn_record(true, 0)];
    }));
    p
}

/// `LogValidatorTest.testControlRecordsNotCompressed`, what recovery does with the
/// compressed marker: `LogSegment.recover` → `updateProducerState` →
/// `ProducerAppendInfo.append` iterates the control batch (decompressing it) and
/// `EndTransactionMarker.deserialize` reads a valid COMMIT: nothing throws, nothing is
/// truncated, and the transaction is committed (the LSO is the log end). klogscan's format
/// layer refuses to read a compressed control record, so the marker is "malformed": it
/// predicts a truncation at the marker and keeps the transaction open (an
/// `open_transaction`, later a `hanging_transaction`).
#[test]
fn compressed_marker_is_applied_and_not_a_truncation_point() {
    let txn = Producer::transactional(23423, 5);
    let r = scan(&compressed_commit(txn));
    assert_eq!(truncation(&r), None, "{:#?}", r.partitions[0].truncation);
    assert!(of_kind(&r, Kind::OpenTransaction).is_empty());
    assert!(of_kind(&r, Kind::HangingTransaction).is_empty());
    assert_eq!(r.partitions[0].last_stable_offset, Some(2));
}

/// `LogValidatorTest.testControlRecordsNotAllowedFromClients`: only the coordinator writes
/// control batches, always transactional and with the producer's id
/// (`MemoryRecords.withEndTransactionMarker`). A COMMIT control batch with producer id −1
/// and no transactional bit can only be on disk through a bug or damage: recovery skips it
/// (no producer id) and consumers skip control batches, but a forensic reader should say the
/// bytes are impossible. klogscan reported nothing (rules 18–19 checked the transactional bit
/// without a producer id, not a control batch without either; fixed).
#[test]
fn control_batch_without_producer_or_transactional_bit_is_reported() {
    let mut p = partition();
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.append(Batch::new(Producer::PLAIN).tweak(|s| {
        s.control = true;
        s.records = vec![end_txn_record(true, 0)];
    }));
    let r = scan(&p);
    assert!(
        r.findings.iter().any(|f| f.offset == Some(1)
            && matches!(f.kind, Kind::InvalidBatch | Kind::InvalidProducerFields)),
        "{:#?}",
        r.findings
    );
    assert_eq!(truncation(&r), None);
}

// ----- LogValidatorTest: keys on compacted topics ------------------------------------------

/// `LogValidatorTest.checkNoKeyCompactedTopic` (v2 gzip/lz4/snappy/zstd): a compacted topic
/// refuses records without a key. On disk such records exist when a topic's policy changed
/// to `compact` after they were written (or a broker did not validate); the cleaner then
/// drops them, counting them as invalid (`LogCleaner`: "Found N invalid messages during
/// compaction"). A forensic reader of a declared-compacted topic should report that those
/// records will be removed. klogscan reports nothing.
#[test]
fn null_keys_on_a_compacted_topic_are_reported() {
    for codec in [Codec::Gzip, Codec::Lz4, Codec::SnappyXerial, Codec::Zstd] {
        let mut p = partition();
        p.append(hello_there_beautiful().codec(codec));
        let r = scan_compacted(&p, true);
        assert!(
            r.findings
                .iter()
                .any(|f| f.offset == Some(0) && f.message.contains("key")),
            "{codec:?}: {:#?}",
            r.findings
        );
    }
}

/// The twins of `LogValidatorTest.checkNoKeyCompactedTopic`: keyed records on a compacted
/// topic, and null-key records on a topic not known to be compacted, are what a correct
/// broker accepts: no finding.
#[test]
fn keyed_records_on_compacted_and_null_keys_elsewhere_are_clean() {
    let mut p = partition();
    p.append(Batch::new(Producer::PLAIN).records(3).codec(Codec::Gzip));
    assert_eq!(kinds(&scan_compacted(&p, true)), vec![]);
    let mut q = partition();
    q.append(hello_there_beautiful().codec(Codec::Gzip));
    assert_eq!(kinds(&scan_deep(&q)), vec![]);
}

// ----- LogValidatorTest: timestamps --------------------------------------------------------

/// `LogValidatorTest.checkLogAppendTimeNonCompressed` / `checkLogAppendTimeWithoutRecompression`:
/// with LogAppendTime the broker sets the batch's maxTimestamp to its clock and leaves the
/// records' own timestamps alone, so maxTimestamp differing from every record timestamp is
/// normal (no finding with `--deep`). Twin, `checkCompressed` / `checkNonCompressed`: with
/// CreateTime the validator stores the newest record timestamp as maxTimestamp, so a
/// different one on disk is an `invalid_batch`.
#[test]
fn max_timestamp_is_checked_for_create_time_only() {
    let lat = |b: Batch| {
        b.log_append_time()
            .tweak(|s| s.overrides.max_timestamp = Some(s.base_timestamp + 5000))
    };
    let mut p = partition();
    p.append(lat(Batch::new(Producer::PLAIN).records(3)));
    p.append(lat(Batch::new(Producer::PLAIN)
        .records(3)
        .codec(Codec::Gzip)));
    assert_eq!(kinds(&scan_deep(&p)), vec![]);

    let mut q = partition();
    q.append(
        Batch::new(Producer::PLAIN)
            .records(3)
            .tweak(|s| s.overrides.max_timestamp = Some(s.base_timestamp + 5000)),
    );
    let r = scan_deep(&q);
    assert_eq!(
        kinds(&r),
        vec![(Kind::InvalidBatch, Severity::Error, Some(0))]
    );
    assert_eq!(
        problems(&r.findings[0]),
        vec![format!(
            "maxTimestamp {} differs from the newest record timestamp {}",
            DEFAULT_START_MS + 5000,
            DEFAULT_START_MS + 2
        )]
    );
    // The header-only scan does not read records: nothing.
    assert_eq!(kinds(&scan(&q)), vec![]);
}

/// `LogValidatorTest.testRecordWithPastTimestampIsRejected`,
/// `testRecordWithFutureTimestampIsRejected`, `testInvalidCreateTime*`: the window is the
/// broker's configuration against its clock at append time (`message.timestamp.before/
/// after.max.ms`), unknowable from the disk; records without a timestamp (−1) are exempt.
/// So neither a record from 2100 nor one without a timestamp is reported.
#[test]
fn record_timestamps_outside_any_window_are_not_judged() {
    let mut p = partition();
    p.append(Batch::new(Producer::PLAIN).records(3).tweak(|s| {
        s.base_timestamp = -1;
        s.records.iter_mut().for_each(|r| r.timestamp_delta = 0);
    }));
    p.append(Batch::new(Producer::PLAIN).records(3).at(4_102_444_800_000));
    p.append(Batch::new(Producer::PLAIN).records(1).at(1000));
    let r = scan_deep(&p);
    assert_eq!(kinds(&r), vec![]);
    assert_eq!(r.partitions[0].records, 7);
}

// ----- LogValidatorTest: formats side by side ----------------------------------------------

/// `LogValidatorTest.checkAllowMultiBatch` and the up/down-conversion cases
/// (`testOffsetAssignmentAfterUpConversionV0ToV2*`, `…DownConversionV2ToV1*`): the broker
/// writes whatever magic the topic's format asks for, so a segment holding v0, v1, v2 and
/// then v1 again (a format change and its revert) is normal: no finding, every record
/// counted, offsets continuous.
#[test]
fn magic_changes_between_entries_are_normal() {
    let mut p = partition();
    p.legacy(Legacy::v0().values(["a", "b"]));
    p.legacy(Legacy::v1().values(["c"]).codec(Codec::Gzip));
    p.append(Batch::new(Producer::PLAIN).records(2).codec(Codec::Lz4));
    p.legacy(Legacy::v1().values(["d", "e"]).codec(Codec::SnappyXerial));
    p.legacy(Legacy::v0().values(["f"]).codec(Codec::Gzip));
    let r = scan_deep(&p);
    assert_eq!(kinds(&r), vec![]);
    assert_eq!(r.partitions[0].log_end_offset, Some(8));
    assert_eq!(r.partitions[0].records, 8);
}
