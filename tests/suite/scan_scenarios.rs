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

mod producer_sequences;
mod sample;
mod transactions;

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
