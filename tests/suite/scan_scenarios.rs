//! End-to-end tests of `scan::scan` on partition directories the testkit writes: every
//! finding kind the scan emits has a positive scenario (the kind appears, at the right
//! offset / position / segment / producer, with its severity) and a near-miss negative one
//! (a healthy scenario that differs in one detail does not raise it). The replayed
//! producers and transaction statistics are compared with what the scenario wrote, and
//! the committed KAFKA-9144 sample (`testdata/broker-1/payments-3`) is checked in full.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::{self, ScanOptions};
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::samples;
use klogscan::testkit::{
    Batch, Codec, FaultKind, Manifest, PartitionBuilder, Producer, Rec, Target,
};
use std::path::PathBuf;
use tempfile::TempDir;

// ----- helpers ----------------------------------------------------------------------------

/// Write `p` into a fresh temporary directory and scan that directory.
fn run(p: &PartitionBuilder) -> (TempDir, Manifest, ScanReport) {
    run_with(p, &ScanOptions::default())
}

fn run_with(p: &PartitionBuilder, opts: &ScanOptions) -> (TempDir, Manifest, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let r = pipeline::scan(&[dir.path().to_path_buf()], opts);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.partitions.len(), 1, "one partition written");
    (dir, m, r)
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// The one finding of kind `k` (fails when there are none or several).
fn one(r: &ScanReport, k: Kind) -> &Finding {
    let v = of_kind(r, k);
    assert_eq!(
        v.len(),
        1,
        "expected exactly one {k}, got {:#?}",
        r.findings
    );
    v[0]
}

fn none_of(r: &ScanReport, k: Kind) {
    let v = of_kind(r, k);
    assert!(v.is_empty(), "unexpected {k}: {v:#?}");
}

/// `(kind, offset)` of every finding, in report order.
fn kinds(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    r.findings.iter().map(|f| (f.kind, f.offset)).collect()
}

fn seg_name(m: &Manifest, batch: usize) -> String {
    m.batches[batch]
        .file
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Assert the finding sits at manifest batch `i` (offset, position, segment).
fn at_batch(f: &Finding, m: &Manifest, i: usize) {
    let b = &m.batches[i];
    assert_eq!(f.offset, Some(b.base_offset), "offset of {f:#?}");
    assert_eq!(f.position, Some(b.position), "position of {f:#?}");
    assert_eq!(f.segment.as_deref(), Some(seg_name(m, i).as_str()));
    assert_eq!(f.topic, m.topic);
    assert_eq!(f.partition, m.partition);
}

fn producer_of(f: &Finding, pid: i64, epoch: i16) {
    assert_eq!(
        (f.producer_id, f.producer_epoch),
        (Some(pid), Some(epoch)),
        "{f:#?}"
    );
}

fn healthy_idempotent(topic: &str) -> PartitionBuilder {
    let idem = Producer::idempotent(100, 0);
    let mut p = PartitionBuilder::new(topic, 0).leader_epoch(1);
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    p.append(Batch::new(idem).records(2));
    p
}

// ----- integrity: crc, tails, invalid batches, offsets, leader epochs ----------------

#[test]
fn crc_mismatch_at_its_batch_and_not_without_damage() {
    let mut p = healthy_idempotent("crc");
    let (_d, m0, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // flip a byte inside the second batch's records
    let b = &m0.batches[1];
    p.fault(
        Target::Log(0),
        FaultKind::FlipByte {
            position: b.position + b.size - 2,
            mask: 0x20,
        },
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::CrcMismatch);
    at_batch(f, &m, 1);
    assert_eq!(f.severity, Severity::Error);
    // the walk went on: every batch is counted, the third is still replayed
    assert_eq!(r.partitions[0].batches, 3);
    let t = r.partitions[0].truncation.as_ref().unwrap();
    assert_eq!((t.position, t.offset), (b.position, Some(b.base_offset)));
    // --no-crc: the same bytes raise nothing
    let (_d, _m, r) = run_with(&p, &ScanOptions::default().with_check_crc(false));
    none_of(&r, Kind::CrcMismatch);
}

#[test]
fn truncated_batch_at_its_position() {
    let mut p = healthy_idempotent("cut");
    let (_d, m0, _) = run(&p);
    let last = m0.batches.last().unwrap().clone();
    p.fault(
        Target::LastLog,
        FaultKind::Truncate {
            len: last.position + 40,
        },
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::TruncatedBatch);
    assert_eq!(f.position, Some(last.position));
    assert_eq!(f.segment.as_deref(), Some(seg_name(&m, 2).as_str()));
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["declared_size"], last.size);
    assert_eq!(f.evidence["available"], 40);
    assert_eq!(r.partitions[0].batches, 2);
    assert_eq!(r.partitions[0].log_end_offset, Some(last.base_offset));
    // a cut exactly at a batch boundary is a clean (shorter) log
    let mut p = healthy_idempotent("cut");
    p.fault(Target::LastLog, FaultKind::Truncate { len: last.position });
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn trailing_bytes_and_preallocated_tail() {
    let mut p = healthy_idempotent("tail");
    p.fault(Target::LastLog, FaultKind::AppendGarbage(vec![0xff; 25]));
    let (_d, m, r) = run(&p);
    let end = m.batches.last().map(|b| b.position + b.size).unwrap();
    let f = one(&r, Kind::TrailingBytes);
    assert_eq!(f.position, Some(end));
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence["length"], 25);
    none_of(&r, Kind::PreallocatedTail);
    assert_eq!(r.partitions[0].batches, 3);

    let mut p = healthy_idempotent("tail");
    p.fault(Target::LastLog, FaultKind::AppendZeros(4096));
    let (_d, _m, r) = run(&p);
    let f = one(&r, Kind::PreallocatedTail);
    assert_eq!(f.position, Some(end));
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.evidence["length"], 4096);
    none_of(&r, Kind::TrailingBytes);
    none_of(&r, Kind::TruncatedBatch);
    assert_eq!(kinds(&r).len(), 1);
}

#[test]
fn invalid_batch_header_and_deep_record_checks() {
    // recordsCount above lastOffsetDelta + 1 (a valid CRC over a lying header)
    let mut p = healthy_idempotent("inv");
    p.append(
        Batch::new(Producer::PLAIN)
            .values(["x", "y"])
            .tweak(|s| s.overrides.records_count = Some(1000)),
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidBatch);
    at_batch(f, &m, 3);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.message.contains("recordsCount 1000"), "{}", f.message);
    none_of(&r, Kind::CrcMismatch);

    // unknown codec id 5
    let mut p = healthy_idempotent("inv");
    p.append(
        Batch::new(Producer::PLAIN)
            .values(["x"])
            .tweak(|s| s.overrides.attributes = Some(5)),
    );
    let (_d, m, r) = run(&p);
    at_batch(one(&r, Kind::InvalidBatch), &m, 3);

    // maxTimestamp that no record has: only --deep decodes the records and sees it
    let mut p = healthy_idempotent("inv");
    p.append(
        Batch::new(Producer::PLAIN)
            .values(["x", "y"])
            .codec(Codec::Zstd)
            .tweak(|s| s.overrides.max_timestamp = Some(s.base_timestamp + 99_000)),
    );
    let (_d, _m, r) = run(&p);
    none_of(&r, Kind::InvalidBatch);
    let deep = ScanOptions::default().with_deep(true);
    let (_d, m, r) = run_with(&p, &deep);
    let f = one(&r, Kind::InvalidBatch);
    at_batch(f, &m, 3);
    assert_eq!(f.evidence["deep"], true);

    // near miss: every codec, headers, null keys and values, --deep: nothing invalid
    let mut p = PartitionBuilder::new("inv", 0);
    for c in [
        Codec::None,
        Codec::Gzip,
        Codec::SnappyXerial,
        Codec::SnappyRaw,
        Codec::Lz4,
        Codec::Zstd,
    ] {
        p.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::kv("k", "v").header("h", None))
                .record(Rec::default())
                .records(3)
                .codec(c),
        );
    }
    let (_d, _m, r) = run_with(&p, &deep);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn offset_regression_and_its_near_miss() {
    let mut p = healthy_idempotent("reg");
    // a plain batch re-using offsets 3..4 (the last batch holds 5..6: 4 offsets overlap)
    p.append(
        Batch::new(Producer::PLAIN)
            .values(["again", "again"])
            .tweak(|s| s.base_offset = 3),
    );
    let (_d, m, r) = run(&p);
    assert_eq!(m.batches[3].base_offset, 3);
    let f = one(&r, Kind::OffsetRegression);
    at_batch(f, &m, 3);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["overlap"], 4);
    // across a segment roll too
    let mut p = healthy_idempotent("reg");
    p.roll();
    p.append(
        Batch::new(Producer::PLAIN)
            .values(["z"])
            .tweak(|s| s.base_offset = 4),
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::OffsetRegression);
    at_batch(f, &m, 3);
    assert_eq!(f.evidence["across_segments"], true);
    // near miss: the next batch starts exactly after the last offset, in a new segment
    let mut p = healthy_idempotent("reg");
    p.roll();
    p.append(Batch::new(Producer::PLAIN).values(["z"]));
    let (_d, m, r) = run(&p);
    assert_eq!(m.segments.len(), 2);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn offset_gap_info_and_not_on_compacted_logs() {
    let mut p = healthy_idempotent("gap");
    p.skip_offsets(5);
    p.append(Batch::new(Producer::PLAIN).values(["after"]));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::OffsetGap);
    at_batch(f, &m, 3);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.evidence["missing_offsets"], 5);
    assert_eq!(kinds(&r), vec![(Kind::OffsetGap, Some(12))]);

    // internal compacted topic: the same gap is not reported
    let mut p = healthy_idempotent("__consumer_offsets");
    p.skip_offsets(5);
    p.append(Batch::new(Producer::PLAIN).values(["after"]));
    let (_d, _m, r) = run(&p);
    assert_eq!(r.partitions[0].topic, "__consumer_offsets");
    none_of(&r, Kind::OffsetGap);

    // a log the cleaner went through (delete-horizon batch): gaps are not errors
    let mut p = healthy_idempotent("cleaned");
    p.skip_offsets(5);
    let h = p.now() + 86_400_000;
    p.append(
        Batch::new(Producer::PLAIN)
            .values(["kept"])
            .delete_horizon(h),
    );
    p.skip_offsets(2);
    p.append(Batch::new(Producer::PLAIN).values(["later"]));
    let (_d, m, r) = run(&p);
    assert_eq!(m.batches[4].base_offset, m.batches[3].last_offset + 3);
    none_of(&r, Kind::OffsetGap);
    assert!(
        r.findings.iter().all(|f| f.severity < Severity::Warning),
        "{:#?}",
        r.findings
    );

    // a batch with fewer records than its offset range (compaction inside a batch)
    let mut p = healthy_idempotent("cleaned2");
    p.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::value("a"))
            .record(Rec::value("c").offset_delta(4)),
    );
    p.skip_offsets(3);
    p.append(Batch::new(Producer::PLAIN).values(["later"]));
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn segment_offset_out_of_range_kafka_6264() {
    // an offset more than 2^31-1 above the segment's base offset in the same segment
    let mut p = PartitionBuilder::new("ovf", 0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    let far = (1i64 << 31) + 10;
    p.append(
        Batch::new(Producer::PLAIN)
            .values(["b"])
            .tweak(move |s| s.base_offset = far),
    );
    let (_d, m, r) = run(&p);
    assert_eq!(m.segments.len(), 1);
    let f = one(&r, Kind::SegmentOffsetOutOfRange);
    at_batch(f, &m, 1);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["segment_base_offset"], 0);
    // the jump itself is an (informational) gap, nothing else
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::OffsetGap, Some(far)),
            (Kind::SegmentOffsetOutOfRange, Some(far)),
        ]
    );
    // near miss: the same jump in a segment rolled at that offset
    let mut p = PartitionBuilder::new("ovf", 0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.skip_offsets(far - 1);
    p.roll();
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    let (_d, m, r) = run(&p);
    assert_eq!(m.segments[1].0, far);
    none_of(&r, Kind::SegmentOffsetOutOfRange);
}

#[test]
fn leader_epoch_regression_and_increase() {
    let mut p = PartitionBuilder::new("le", 0).leader_epoch(4);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.set_leader_epoch(6);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p.append(Batch::new(Producer::PLAIN).values(["c"]).leader_epoch(5));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::LeaderEpochRegression);
    at_batch(f, &m, 2);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        (
            &f.evidence["previous_leader_epoch"],
            &f.evidence["leader_epoch"]
        ),
        (&6.into(), &5.into())
    );
    assert_eq!(r.partitions[0].leader_epochs(), vec![(4, 0), (6, 1)]);
    // near miss: epochs only go up (and stay)
    let mut p = PartitionBuilder::new("le", 0).leader_epoch(4);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.set_leader_epoch(6);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p.append(Batch::new(Producer::PLAIN).values(["c"]));
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.partitions[0].leader_epochs(), vec![(4, 0), (6, 1)]);
}

// ----- producer epochs and sequences ---------------------------------------------------

#[test]
fn producer_epoch_regression_and_bump() {
    let idem = Producer::idempotent(200, 3);
    let mut p = PartitionBuilder::new("pe", 0);
    p.append(Batch::new(idem).records(2));
    p.append(Batch::new(idem.with_epoch(2)).records(1));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::ProducerEpochRegression);
    at_batch(f, &m, 1);
    producer_of(f, 200, 2);
    assert_eq!(f.severity, Severity::Error);
    // no marker: not a zombie write
    none_of(&r, Kind::ZombieWrite);
    assert_eq!(kinds(&r), vec![(Kind::ProducerEpochRegression, Some(2))]);
    // near miss: the epoch goes up (sequence restarts at 0)
    let mut p = PartitionBuilder::new("pe", 0);
    p.append(Batch::new(idem).records(2));
    p.append(Batch::new(idem.bumped()).records(1));
    let (_d, m, r) = run(&p);
    assert_eq!(m.batches[1].base_sequence, 0);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn zombie_write_after_a_higher_epoch_marker() {
    let txn = Producer::transactional(300, 5);
    let mut p = PartitionBuilder::new("zw", 0);
    p.append(Batch::new(txn).records(2));
    p.abort(txn.bumped(), 1); // TV2: the marker one epoch above the data
    p.append(Batch::new(txn).records(1).sequence(2));
    p.append(Batch::new(Producer::PLAIN).values(["later"]));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::ZombieWrite);
    at_batch(f, &m, 2);
    producer_of(f, 300, 5);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["opens_transaction"], true);
    at_batch(one(&r, Kind::ProducerEpochRegression), &m, 2);
    // young: the transaction it opened is open, not hanging
    let o = one(&r, Kind::OpenTransaction);
    at_batch(o, &m, 2);
    none_of(&r, Kind::HangingTransaction);
}

#[test]
fn tv2_epoch_bumping_markers_raise_no_epoch_finding() {
    // TV2: every marker is one epoch above the transaction's data; the next transaction
    // runs at the marker's epoch and starts at sequence 0.
    let mut txn = Producer::transactional(400, 10);
    let mut p = PartitionBuilder::new("tv2", 0);
    for i in 0..4 {
        p.append(Batch::new(txn).records(2));
        p.append(Batch::new(Producer::PLAIN).values(["between"]));
        p.append(Batch::new(txn).records(1));
        if i % 2 == 0 {
            p.commit(txn.bumped(), 2);
        } else {
            p.abort(txn.bumped(), 2);
        }
        txn = txn.bumped();
    }
    let (_d, m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let o = &r.partitions[0].outcome();
    assert_eq!((o.txn_stats.committed, o.txn_stats.aborted), (2, 2));
    let st = &o.producers[0];
    assert_eq!(st.producer_epoch, 14);
    assert!(st.transaction_version_2);
    assert_eq!(st.current_txn_first_offset, None);
    assert_eq!(r.partitions[0].last_stable_offset, Some(m.log_end_offset));
}

#[test]
fn invalid_first_sequence_on_a_new_epoch() {
    let idem = Producer::idempotent(500, 0);
    let mut p = PartitionBuilder::new("fs", 0);
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(idem.bumped()).records(1).sequence(7));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidFirstSequence);
    at_batch(f, &m, 1);
    producer_of(f, 500, 1);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence["found"], 7);
    assert_eq!(kinds(&r), vec![(Kind::InvalidFirstSequence, Some(3))]);
    // near miss: the new epoch starts at 0
    let mut p = PartitionBuilder::new("fs", 0);
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(idem.bumped()).records(1).sequence(0));
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn sequence_gap_within_an_epoch() {
    let idem = Producer::idempotent(600, 2);
    let mut p = PartitionBuilder::new("sg", 0);
    p.append(Batch::new(idem).records(3)); // 0..2
    p.append(Batch::new(idem).records(2).sequence(6)); // 3..5 missing
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::SequenceGap);
    at_batch(f, &m, 1);
    producer_of(f, 600, 2);
    // the scan cannot know cleanup.policy of an ordinary topic (compaction removes whole
    // batches), so the gap is a warning, not the kind's default error
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        (
            &f.evidence["expected"],
            &f.evidence["found"],
            &f.evidence["gap"]
        ),
        (&3.into(), &6.into(), &3.into())
    );
    assert_eq!(kinds(&r), vec![(Kind::SequenceGap, Some(3))]);
    // near miss: sequences wrap from i32::MAX to 0 without a gap
    let mut p = PartitionBuilder::new("sg", 0);
    p.append(Batch::new(idem).records(2).sequence(i32::MAX - 1));
    p.append(Batch::new(idem).records(2));
    let (_d, m, r) = run(&p);
    assert_eq!(m.batches[1].base_sequence, 0);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn duplicate_sequence_exact_and_overlap() {
    let idem = Producer::idempotent(700, 0);
    let mut p = PartitionBuilder::new("dup", 0);
    p.append(Batch::new(idem).records(3)); // 0..2
    p.append(Batch::new(idem).records(3).sequence(0)); // exact duplicate
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::DuplicateSequence);
    at_batch(f, &m, 1);
    producer_of(f, 700, 0);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["exact"], true);
    assert_eq!(f.evidence["original"]["offset"], 0);
    none_of(&r, Kind::SequenceGap);

    let mut p = PartitionBuilder::new("dup", 0);
    p.append(Batch::new(idem).records(3)); // 0..2
    p.append(Batch::new(idem).records(3).sequence(1)); // 1..3 overlaps
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::DuplicateSequence);
    at_batch(f, &m, 1);
    assert_eq!(f.evidence["exact"], false);
    // near miss: the same sequences at another producer id
    let mut p = PartitionBuilder::new("dup", 0);
    p.append(Batch::new(idem).records(3));
    p.append(
        Batch::new(Producer::idempotent(701, 0))
            .records(3)
            .sequence(0),
    );
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn invalid_producer_fields() {
    // a producer id with baseSequence -1 on a data batch
    let mut p = PartitionBuilder::new("pf", 0);
    p.append(
        Batch::new(Producer::idempotent(800, 0))
            .records(1)
            .tweak(|s| s.base_sequence = -1),
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidProducerFields);
    at_batch(f, &m, 0);
    producer_of(f, 800, 0);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.client_error.is_some());
    // transactional bit without a producer id
    let mut p = PartitionBuilder::new("pf", 0);
    p.append(
        Batch::new(Producer::PLAIN)
            .records(1)
            .tweak(|s| s.transactional = true),
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidProducerFields);
    at_batch(f, &m, 0);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.producer_id, None);
    // near miss: plain, idempotent and transactional batches with consistent fields
    let txn = Producer::transactional(801, 1);
    let mut p = PartitionBuilder::new("pf", 0);
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.append(Batch::new(Producer::idempotent(800, 0)).records(1));
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 0);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

// ----- transactions and markers -----------------------------------------------------------

#[test]
fn hanging_versus_young_open_transaction() {
    let txn = Producer::transactional(900, 1);
    let build = |idle_ms: i64| {
        let mut p = PartitionBuilder::new("ht", 2);
        p.append(Batch::new(Producer::PLAIN).values(["a"]));
        p.append(Batch::new(txn).records(2));
        p.advance_time(idle_ms);
        p.append(Batch::new(Producer::PLAIN).values(["b"]));
        p
    };
    // 20 minutes of later traffic: hanging
    let (_d, m, r) = run(&build(20 * 60_000));
    let f = one(&r, Kind::HangingTransaction);
    at_batch(f, &m, 1);
    producer_of(f, 900, 1);
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.remediation
            .as_deref()
            .unwrap()
            .contains("--topic ht --partition 2 --start-offset 1"),
        "{:?}",
        f.remediation
    );
    none_of(&r, Kind::OpenTransaction);
    assert_eq!(r.partitions[0].last_stable_offset, Some(1));
    assert_eq!(r.partitions[0].transactions.open, 1);

    // 5 minutes: a young open transaction is open_transaction, not hanging
    let (_d, m, r) = run(&build(5 * 60_000));
    let f = one(&r, Kind::OpenTransaction);
    at_batch(f, &m, 1);
    assert_eq!(f.severity, Severity::Info);
    none_of(&r, Kind::HangingTransaction);
    assert_eq!(r.partitions[0].last_stable_offset, Some(1));

    // near miss: the same transaction committed
    let mut p = build(20 * 60_000);
    p.commit(txn, 0);
    let (_d, m, r) = run(&p);
    none_of(&r, Kind::HangingTransaction);
    none_of(&r, Kind::OpenTransaction);
    assert_eq!(r.partitions[0].last_stable_offset, Some(m.log_end_offset));
}

#[test]
fn now_and_hanging_after_options() {
    let txn = Producer::transactional(901, 0);
    let mut p = PartitionBuilder::new("now", 0);
    p.append(Batch::new(txn).records(2));
    let (_d, m, r) = run(&p);
    // alone in the log: reference time = its own timestamp, so it is young
    one(&r, Kind::OpenTransaction);
    let last_ts = m.batches[0].max_timestamp;
    assert_eq!(r.partitions[0].ref_time, last_ts);
    // --now one hour later: hanging
    let later = ScanOptions::default().with_now_ms(last_ts + 3_600_000);
    let (_d, _m, r) = run_with(&p, &later);
    let f = one(&r, Kind::HangingTransaction);
    assert_eq!(f.evidence["idle_ms"], 3_600_000);
    assert_eq!(r.partitions[0].ref_time, last_ts + 3_600_000);
    // ... but not with --hanging-after 2h
    let lenient = later.clone().with_hanging_after_ms(2 * 3_600_000);
    let (_d, _m, r) = run_with(&p, &lenient);
    one(&r, Kind::OpenTransaction);
    none_of(&r, Kind::HangingTransaction);
    // ... and with --hanging-after 1 min at the default reference time 10 min later
    let mut p2 = PartitionBuilder::new("now", 0);
    p2.append(Batch::new(txn).records(2));
    p2.advance_time(10 * 60_000);
    p2.append(Batch::new(Producer::PLAIN).values(["x"]));
    let strict = ScanOptions::default().with_hanging_after_ms(60_000);
    let (_d, _m, r) = run_with(&p2, &strict);
    one(&r, Kind::HangingTransaction);
    let (_d, _m, r) = run(&p2);
    one(&r, Kind::OpenTransaction);
}

#[test]
fn coordinator_epoch_regression() {
    let txn = Producer::transactional(1000, 4);
    let mut p = PartitionBuilder::new("ce", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 9);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 8);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::CoordinatorEpochRegression);
    at_batch(f, &m, 3);
    producer_of(f, 1000, 4);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        (
            &f.evidence["previous_coordinator_epoch"],
            &f.evidence["coordinator_epoch"]
        ),
        (&9.into(), &8.into())
    );
    assert_eq!(kinds(&r), vec![(Kind::CoordinatorEpochRegression, Some(3))]);
    // near miss: the coordinator epoch goes up (a coordinator move)
    let mut p = PartitionBuilder::new("ce", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 9);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 10);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn marker_without_transaction() {
    let txn = Producer::transactional(1100, 2);
    // a second COMMIT with nothing in between
    let mut p = PartitionBuilder::new("mw", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 1);
    p.commit(txn, 1);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::MarkerWithoutTransaction);
    at_batch(f, &m, 2);
    producer_of(f, 1100, 2);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(r.partitions[0].outcome().txn_stats.empty_commits, 1);
    // a first-sight marker at offset 0 (history complete) closes nothing either
    let mut p = PartitionBuilder::new("mw", 0);
    p.abort(txn, 1);
    let (_d, m, r) = run(&p);
    at_batch(one(&r, Kind::MarkerWithoutTransaction), &m, 0);
    // near miss: a first-sight marker when history does not start at 0 (retention
    // deleted the transaction's data)
    let mut p = PartitionBuilder::new("mw", 0).start_offset(50);
    p.abort(txn, 1);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // near miss: one marker per transaction
    let mut p = PartitionBuilder::new("mw", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1));
    p.abort(txn, 1);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// `ProducerStateManagerTest.testAppendTxnMarkerWithNoProducerState`: a COMMIT at epoch 2
/// is the producer's first entry in a log starting at offset 0; the state it creates has
/// the epoch and no sequence, so data at that epoch must start at sequence 0 (17 is out of
/// order), data at epoch 0 is fenced, data at sequence 0 is accepted. The same log starting
/// above offset 0 (earlier batches deleted) says nothing of the sequence.
#[test]
fn marker_created_state_wants_sequence_zero() {
    let txn = Producer::transactional(1150, 2);
    let mut p = PartitionBuilder::new("ms", 0);
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1).sequence(17));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidFirstSequence);
    at_batch(f, &m, 1);
    producer_of(f, 1150, 2);
    assert_eq!(
        (f.evidence["expected"].clone(), f.evidence["found"].clone()),
        (0.into(), 17.into())
    );
    // fencing still works when the marker is all there is
    let mut p = PartitionBuilder::new("ms", 0);
    p.commit(txn, 1);
    p.append(Batch::new(txn.with_epoch(0)).records(1));
    let (_d, _m, r) = run(&p);
    one(&r, Kind::ProducerEpochRegression);
    // sequence 0 at the marker's epoch is what the broker accepts
    let mut p = PartitionBuilder::new("ms", 0);
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1).sequence(0));
    let (_d, _m, r) = run(&p);
    none_of(&r, Kind::InvalidFirstSequence);
    none_of(&r, Kind::SequenceGap);
    // near miss: the log starts above 0, the producer's earlier batches are gone
    let mut p = PartitionBuilder::new("ms", 0).start_offset(27);
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1).sequence(17));
    let (_d, _m, r) = run(&p);
    none_of(&r, Kind::InvalidFirstSequence);
    none_of(&r, Kind::SequenceGap);
    // (only its still-open transaction, at info)
    assert!(
        r.findings.iter().all(|f| f.severity == Severity::Info),
        "{:#?}",
        r.findings
    );
}

#[test]
fn conflicting_markers_under_tv2_only() {
    let txn = Producer::transactional(1200, 7);
    // TV2 (COMMIT one epoch above the data), then an ABORT at the same epoch
    let mut p = PartitionBuilder::new("cm", 0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn.bumped(), 3);
    p.abort(txn.bumped(), 3);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::ConflictingMarkers);
    at_batch(f, &m, 2);
    producer_of(f, 1200, 8);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["previous_marker"]["offset"], 2);
    none_of(&r, Kind::MarkerWithoutTransaction);
    // near miss: TV0/1 (marker at the data's epoch): an empty transaction, no conflict
    let mut p = PartitionBuilder::new("cm", 0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 3);
    p.abort(txn, 3);
    let (_d, m, r) = run(&p);
    none_of(&r, Kind::ConflictingMarkers);
    at_batch(one(&r, Kind::MarkerWithoutTransaction), &m, 2);
}

#[test]
fn transaction_epoch_change_without_marker() {
    let txn = Producer::transactional(1300, 1);
    let mut p = PartitionBuilder::new("tec", 0);
    p.append(Batch::new(txn).records(2));
    p.append(Batch::new(txn.bumped()).records(1));
    p.commit(txn.bumped(), 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::TransactionEpochChange);
    at_batch(f, &m, 1);
    producer_of(f, 1300, 2);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(kinds(&r), vec![(Kind::TransactionEpochChange, Some(2))]);
    // the marker still closed the transaction (first offset 0)
    assert_eq!(r.partitions[0].outcome().txn_stats.committed, 1);
    assert_eq!(r.partitions[0].outcome().txn_stats.sizes, vec![4]);
    // near miss: the new epoch starts after a marker
    let mut p = PartitionBuilder::new("tec", 0);
    p.append(Batch::new(txn).records(2));
    p.abort(txn.bumped(), 0);
    p.append(Batch::new(txn.bumped()).records(1));
    p.commit(txn.bumped().bumped(), 0);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn commit_epoch_above_data_under_tv01() {
    // TV0/1 producer (COMMIT at its data's epoch), then a COMMIT one epoch above its data:
    // a switch to TV2 mid-stream (after which bumped markers are normal).
    let a = Producer::transactional(1251, 3);
    let mut p = PartitionBuilder::new("ceabove", 0);
    p.append(Batch::new(a).records(2));
    p.commit(a, 0);
    p.append(Batch::new(a).records(2));
    p.commit(a.bumped(), 0);
    p.append(Batch::new(a.bumped()).records(1));
    p.commit(a.bumped().bumped(), 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::CommitEpochAboveData);
    at_batch(f, &m, 3);
    producer_of(f, 1251, 4);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(kinds(&r), vec![(Kind::CommitEpochAboveData, Some(5))]);
    assert_eq!(f.evidence["data_epoch"], 3);
    assert_eq!(f.evidence["marker_epoch"], 4);
    assert_eq!(f.evidence["previous_marker"]["offset"], 2);
    assert!(r.partitions[0].outcome().producers[0].transaction_version_2);
    // Two epochs up is not the TV2 pattern either: the verdict stays TV0/1.
    let d = Producer::transactional(1254, 3);
    let mut p = PartitionBuilder::new("ceabove", 2);
    p.append(Batch::new(d).records(1));
    p.commit(d, 0);
    p.append(Batch::new(d).records(1));
    p.commit(d.bumped().bumped(), 0);
    let (_d, _m, r) = run(&p);
    let f = one(&r, Kind::CommitEpochAboveData);
    assert_eq!(f.evidence["transaction_version_2_after"], false);
    assert!(f.message.contains("not the TV2 pattern"), "{}", f.message);
    assert!(!r.partitions[0].outcome().producers[0].transaction_version_2);
    // near misses: a TV0/1 ABORT above the data (a fenced abort) and the first bumped
    // COMMIT of a producer whose TV is not known yet are normal.
    let b = Producer::transactional(1252, 3);
    let mut p = PartitionBuilder::new("ceabove", 1);
    p.append(Batch::new(b).records(2));
    p.commit(b, 0);
    p.append(Batch::new(b).records(2));
    p.abort(b.bumped(), 0);
    let c = Producer::transactional(1253, 3);
    p.append(Batch::new(c).records(2));
    p.commit(c.bumped(), 0);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn marker_epoch_not_bumped_under_tv2() {
    // TV2 producer (every marker one above its data), then a COMMIT at the data's own epoch.
    let a = Producer::transactional(1250, 0);
    let mut p = PartitionBuilder::new("menb", 0);
    p.append(Batch::new(a).records(2));
    p.commit(a.bumped(), 0);
    p.append(Batch::new(a.bumped()).records(2));
    p.commit(a.bumped().bumped(), 0);
    p.append(Batch::new(a.bumped().bumped()).records(2));
    p.commit(a.bumped().bumped(), 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::MarkerEpochNotBumped);
    at_batch(f, &m, 5);
    producer_of(f, 1250, 2);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(kinds(&r), vec![(Kind::MarkerEpochNotBumped, Some(8))]);
    assert_eq!(f.evidence["transaction_first_batch"]["offset"], 6);
    assert_eq!(r.partitions[0].outcome().txn_stats.committed, 3);
    assert!(r.partitions[0].outcome().producers[0].transaction_version_2);
    // near miss: the same log written by a TV0/1 producer (markers at the data's epoch)
    let mut p = PartitionBuilder::new("menb", 0);
    for _ in 0..3 {
        p.append(Batch::new(a).records(2));
        p.commit(a, 0);
    }
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn non_transactional_write_in_transaction() {
    let txn = Producer::transactional(1400, 3);
    let mut p = PartitionBuilder::new("ntx", 0);
    p.append(Batch::new(txn).records(2));
    p.append(Batch::new(Producer::idempotent(1400, 3)).records(1));
    p.commit(txn, 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::NonTransactionalWriteInTransaction);
    at_batch(f, &m, 1);
    producer_of(f, 1400, 3);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        kinds(&r),
        vec![(Kind::NonTransactionalWriteInTransaction, Some(2))]
    );
    // near miss: the same non-transactional batch after the marker
    let mut p = PartitionBuilder::new("ntx", 0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 0);
    p.append(Batch::new(Producer::idempotent(1400, 3)).records(1));
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

// ----- producers and transaction statistics agree with the scenario --------------------

#[test]
fn producers_and_txns_agree_with_the_scenario() {
    let a = Producer::transactional(10, 0);
    let b = Producer::transactional(20, 5);
    let c = Producer::idempotent(30, 1);
    let mut p = PartitionBuilder::new("stats", 1).segment_bytes(400);
    let mut committed = 0;
    let mut aborted = 0;
    let mut expected_aborted = Vec::new(); // (pid, first offset, marker offset)
    for round in 0..5 {
        let first_a = p.next_offset();
        p.append(Batch::new(a).records(2));
        p.append(Batch::new(c).records(1).codec(Codec::Gzip));
        let first_b = p.next_offset();
        p.append(Batch::new(b).records(1).codec(Codec::Lz4));
        p.append(Batch::new(a).records(1));
        if round % 2 == 0 {
            p.commit(a, 1);
            committed += 1;
        } else {
            let at = p.abort(a, 1);
            let _ = at;
            expected_aborted.push((10i64, first_a, p.next_offset() - 1));
            aborted += 1;
        }
        p.abort(b, 1);
        expected_aborted.push((20i64, first_b, p.next_offset() - 1));
        aborted += 1;
    }
    // an open transaction at the end (young)
    let open_at = p.next_offset();
    p.append(Batch::new(b).records(3));
    let (_d, m, r) = run(&p);
    assert!(m.segments.len() > 2, "rolled by size");
    let pr = &r.partitions[0];
    assert_eq!(
        r.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        vec![Kind::OpenTransaction]
    );
    // counts
    assert_eq!(pr.batches, m.batches.len() as u64);
    assert_eq!(
        pr.records,
        m.batches.iter().map(|b| b.record_count as u64).sum::<u64>()
    );
    assert_eq!(
        pr.control_batches,
        m.batches.iter().filter(|b| b.control.is_some()).count() as u64
    );
    assert_eq!(pr.segments, m.segments.len());
    assert_eq!(pr.log_end_offset, Some(m.log_end_offset));
    assert_eq!(pr.last_stable_offset, Some(open_at));
    let o = &pr.outcome();
    assert_eq!(o.txn_stats.committed, committed);
    assert_eq!(o.txn_stats.aborted, aborted);
    assert_eq!(o.txn_stats.open, 1);
    assert_eq!(
        (o.txn_stats.empty_commits, o.txn_stats.empty_aborts),
        (0, 0)
    );
    assert_eq!(o.txn_stats.sizes.len() as u64, committed + aborted);
    assert_eq!(
        pr.transactions,
        scan::TxnCounts {
            committed,
            aborted,
            open: 1
        }
    );
    let got: Vec<(i64, i64, i64)> = o
        .aborted
        .iter()
        .map(|t| (t.producer_id, t.first_offset, t.last_offset))
        .collect();
    assert_eq!(got, expected_aborted);
    assert_eq!(o.open.len(), 1);
    assert_eq!(
        (o.open[0].producer_id, o.open[0].first_offset),
        (20, open_at)
    );
    // producers: one entry per producer id, state = the manifest's last batches
    assert_eq!(pr.producers, 3);
    for st in &o.producers {
        let batches = m.of_producer(st.producer_id);
        let last_data = batches.iter().rev().find(|b| b.control.is_none()).unwrap();
        let last = batches.last().unwrap();
        assert_eq!(st.producer_epoch, last.producer_epoch);
        assert_eq!(st.last_offset, last_data.last_offset, "{st:?}");
        assert_eq!(
            st.last_sequence,
            last_data.base_sequence + last_data.record_count - 1,
            "{st:?}"
        );
        let marker = batches.iter().rev().find_map(|b| b.coordinator_epoch);
        assert_eq!(st.coordinator_epoch, marker.unwrap_or(-1));
        assert_eq!(
            st.current_txn_first_offset,
            (st.producer_id == 20).then_some(open_at)
        );
    }
    assert_eq!(
        o.producers
            .iter()
            .map(|s| s.producer_id)
            .collect::<Vec<_>>(),
        vec![10, 20, 30]
    );
}

// ----- the KAFKA-9144 sample ------------------------------------------------------------

fn broker_1() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

#[test]
fn kafka_9144_sample_payments_3() {
    let r = pipeline::scan(&[broker_1()], &ScanOptions::default());
    assert!(r.errors.is_empty());
    assert_eq!(r.partitions.len(), 7);
    let zombie = samples::ZOMBIE_OFFSET;
    // exactly these errors, all at the zombie offset
    let errors: Vec<(Kind, &str, Option<i64>)> = r
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.kind, f.topic.as_str(), f.offset))
        .collect();
    assert_eq!(
        errors,
        vec![
            (Kind::ProducerEpochRegression, "payments", Some(zombie)),
            (Kind::ZombieWrite, "payments", Some(zombie)),
            (Kind::HangingTransaction, "payments", Some(zombie)),
        ]
    );
    // and nothing else but the informational empty ABORT at offset 16
    let rest: Vec<(Kind, Option<i64>)> = r
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Error)
        .map(|f| (f.kind, f.offset))
        .collect();
    assert_eq!(rest, vec![(Kind::MarkerWithoutTransaction, Some(16))]);
    for f in r.findings.iter().filter(|f| f.severity == Severity::Error) {
        assert_eq!(f.position, Some(195));
        assert_eq!(f.segment.as_deref(), Some("00000000000000000017.log"));
        producer_of(f, samples::ZOMBIE_PID, 18);
    }
    let h = r
        .findings
        .iter()
        .find(|f| f.kind == Kind::HangingTransaction)
        .unwrap();
    let rem = h.remediation.as_deref().unwrap();
    assert!(
        rem.contains("--topic payments --partition 3 --start-offset 21"),
        "{rem}"
    );
    let p = r.partitions.iter().find(|p| p.topic == "payments").unwrap();
    assert_eq!(p.partition, 3);
    assert_eq!(p.last_stable_offset, Some(21));
    assert_eq!(p.log_end_offset, Some(32));
    assert_eq!((p.batches, p.records, p.segments), (16, 32, 2));
    assert_eq!(
        p.transactions,
        scan::TxnCounts {
            committed: 3,
            aborted: 0,
            open: 1
        }
    );
    assert_eq!(p.outcome().txn_stats.empty_aborts, 1);
    let states: Vec<(i64, i16, i32, i64, Option<i64>)> = p
        .outcome()
        .producers
        .iter()
        .map(|s| {
            (
                s.producer_id,
                s.producer_epoch,
                s.last_sequence,
                s.last_offset,
                s.current_txn_first_offset,
            )
        })
        .collect();
    // testdata/README.md: the state at 32
    assert_eq!(
        states,
        vec![
            (4001, 18, 2, 23, Some(21)),
            (5001, 0, 11, 31, None),
            (6001, 3, 3, 28, None)
        ]
    );
    // the other partitions are clean and fully counted
    for p in r.partitions.iter().filter(|p| p.topic != "payments") {
        assert_eq!(p.last_stable_offset, p.log_end_offset, "{}", p.topic);
        if p.topic == "legacy" {
            assert_eq!((p.batches, p.records, p.log_end_offset), (10, 19, Some(19)));
        } else {
            assert_eq!((p.batches, p.records, p.log_end_offset), (4, 10, Some(10)));
        }
    }
}

fn finding_keys(r: &ScanReport) -> Vec<String> {
    r.findings
        .iter()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect()
}

#[test]
fn one_thread_and_default_threads_give_identical_findings() {
    let default = pipeline::scan(&[broker_1()], &ScanOptions::default());
    let one = pipeline::scan(&[broker_1()], &ScanOptions::default().with_threads(1));
    let three = pipeline::scan(&[broker_1()], &ScanOptions::default().with_threads(3));
    assert!(!default.findings.is_empty());
    assert_eq!(finding_keys(&default), finding_keys(&one));
    assert_eq!(finding_keys(&default), finding_keys(&three));
    let summary = |r: &ScanReport| serde_json::to_string(&r.summary).unwrap();
    assert_eq!(summary(&default), summary(&one));
    for (a, b) in default.partitions.iter().zip(&one.partitions) {
        assert_eq!(a.outcome(), b.outcome());
    }
}

fn topics(r: &ScanReport) -> Vec<(String, i32)> {
    let mut v: Vec<_> = r
        .partitions
        .iter()
        .map(|p| (p.topic.clone(), p.partition))
        .collect();
    v.sort();
    v
}

#[test]
fn topic_glob_and_partition_filters() {
    let codecs = pipeline::scan(&[broker_1()], &ScanOptions::default().with_topic("codec-*"));
    assert_eq!(
        topics(&codecs),
        [
            "codec-gzip",
            "codec-lz4",
            "codec-none",
            "codec-snappy",
            "codec-zstd"
        ]
        .iter()
        .map(|t| (t.to_string(), 0))
        .collect::<Vec<_>>()
    );
    assert!(codecs.findings.is_empty());
    let q = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default().with_topic("codec-?z*"),
    );
    assert_eq!(
        topics(&q),
        vec![("codec-gzip".into(), 0), ("codec-lz4".into(), 0)]
    );
    // A class selects the same two by their first letter; its complement the other three.
    let class = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default().with_topic("codec-[gl]*"),
    );
    assert_eq!(topics(&class), topics(&q));
    let rest = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default().with_topic("codec-[!gl]*"),
    );
    assert_eq!(topics(&rest).len(), 3);
    let p3 = pipeline::scan(&[broker_1()], &ScanOptions::default().with_partition(3));
    assert_eq!(topics(&p3), vec![("payments".into(), 3)]);
    assert_eq!(
        p3.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count(),
        3
    );
    let none = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default()
            .with_topic("payments")
            .with_partition(0),
    );
    assert!(none.partitions.is_empty() && none.findings.is_empty());
    assert!(none.nothing_read());
}

#[test]
fn sample_now_option_makes_the_zombie_young() {
    // --now just after the zombie batch: the same transaction is open, not hanging
    let zombie_ts = 1_572_948_010_013; // testdata/README.md: 10:00:10.013
    let r = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default()
            .with_now_ms(zombie_ts + 60_000)
            .with_partition(3),
    );
    let p = &r.partitions[0];
    assert_eq!(p.ref_time, zombie_ts + 60_000);
    // the last batches are 20 minutes *after* --now: the producer's own last timestamp is
    // what counts, so the transaction is young
    let f = one(&r, Kind::OpenTransaction);
    assert_eq!(f.offset, Some(21));
    none_of(&r, Kind::HangingTransaction);
    assert_eq!(p.last_stable_offset, Some(21));
}

/// Key of an offset commit (type 1: group, topic, partition) and a value of `version`
/// with the v3 layout.
fn offset_commit(
    group: &str,
    topic: &str,
    p: i32,
    offset: i64,
    version: i16,
) -> (Vec<u8>, Vec<u8>) {
    let s16 = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as i16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    let mut k = 1i16.to_be_bytes().to_vec();
    s16(&mut k, group);
    s16(&mut k, topic);
    k.extend_from_slice(&p.to_be_bytes());
    let mut v = version.to_be_bytes().to_vec();
    v.extend_from_slice(&offset.to_be_bytes());
    v.extend_from_slice(&(-1i32).to_be_bytes());
    s16(&mut v, "");
    v.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    (k, v)
}

#[test]
fn consumer_offsets_records_the_coordinator_cannot_load() {
    let (k, v) = offset_commit("g", "orders", 0, 42, 3);
    let (_, v9) = offset_commit("g", "orders", 0, 43, 9);
    // A classic consumer group whose only member got an empty assignment (SyncGroup writes
    // zero bytes for members the leader assigned nothing): normal.
    let mut gk = 2i16.to_be_bytes().to_vec();
    gk.extend_from_slice(&1i16.to_be_bytes());
    gk.push(b'g');
    let mut gv = 3i16.to_be_bytes().to_vec();
    for (s, then) in [("consumer", 7i32.to_be_bytes().to_vec()), ("range", vec![])] {
        gv.extend_from_slice(&(s.len() as i16).to_be_bytes());
        gv.extend_from_slice(s.as_bytes());
        gv.extend(then);
    }
    gv.extend_from_slice(&(-1i16).to_be_bytes()); // leader: null
    gv.extend_from_slice(&0i64.to_be_bytes());
    gv.extend_from_slice(&1i32.to_be_bytes());
    for s in ["m", "", "c", "h"] {
        if s.is_empty() {
            gv.extend_from_slice(&(-1i16).to_be_bytes()); // groupInstanceId
        } else {
            gv.extend_from_slice(&(s.len() as i16).to_be_bytes());
            gv.extend_from_slice(s.as_bytes());
        }
    }
    gv.extend_from_slice(&30_000i32.to_be_bytes());
    gv.extend_from_slice(&10_000i32.to_be_bytes());
    gv.extend_from_slice(&0i32.to_be_bytes()); // subscription: empty
    gv.extend_from_slice(&0i32.to_be_bytes()); // assignment: empty
    let mut p = PartitionBuilder::new("__consumer_offsets", 7);
    // offsets 0..=4: valid commit, a tombstone, a KIP-848 record (ConsumerGroupMetadata,
    // epoch 5: decoded and valid), a valid one,
    // group metadata with an empty assignment
    p.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::kv(&k, &v))
            .record(Rec::tombstone(&k))
            .record(Rec::kv([0, 3, 0, 1, b'g'], [0, 0, 0, 0, 0, 5, 0]))
            .record(Rec::kv(&k, &v))
            .record(Rec::kv(&gk, &gv)),
    );
    // offsets 5..=7: an unknown key type, then a value version no release writes, then a
    // record without a key
    p.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::kv(99i16.to_be_bytes(), b"x"))
            .record(Rec::kv(&k, &v9))
            .record(Rec::value(&v)),
    );
    let (_d, m, r) = run(&p);
    let u = one(&r, Kind::OffsetsRecordUnknownType);
    assert_eq!((u.offset, u.severity), (Some(5), Severity::Warning));
    assert_eq!(u.position, Some(m.batches[1].position));
    assert_eq!(u.evidence["key_type"], 99);
    let x = one(&r, Kind::OffsetsRecordUndecodable);
    assert_eq!((x.offset, x.severity), (Some(6), Severity::Error));
    assert_eq!(x.evidence["records_in_batch"], 2);
    assert!(
        x.evidence["error"].as_str().unwrap().contains("version"),
        "{x:#?}"
    );
    // The group replay (issue 13) adds the load failure that follows from the first
    // undecodable record, linked to it.
    let l = one(&r, Kind::GroupLoadFailure);
    assert_eq!(
        (l.offset, l.caused_by.clone()),
        (Some(6), vec![x.id.clone()])
    );
    assert_eq!(r.findings.len(), 3, "{:#?}", r.findings);
    // --deep walks the records once for both its own checks and this one: same findings.
    let deep = ScanOptions::default().with_deep(true);
    let (_d, _m, rd) = run_with(&p, &deep);
    assert_eq!(kinds(&rd), kinds(&r));

    // near miss: the same bytes in an ordinary topic are just data
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::kv(99i16.to_be_bytes(), b"x"))
            .record(Rec::kv(&k, &v9)),
    );
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}
