//! Kafka's log cleaner tests on transactional and idempotent data, reproduced as the bytes a
//! cleaned log holds: each test here writes what `LogCleanerTest`
//! (core/src/test/scala/unit/kafka/log/) leaves on disk after one or more cleaning passes —
//! aborted data removed, markers kept until their transaction has no data left and then
//! stamped with a delete horizon and dropped, each active producer's last batch kept (empty
//! when its records went) so that its sequence and epoch survive, rebuilt batches keeping
//! their first offset, last offset and base sequence — marks the partition compacted, runs
//! klogscan through the library's front door (`request::run` / `request::verify`, what the
//! CLI calls) and asserts what a broker loading that log holds (producers, last stable offset,
//! aborted transactions) and that a legitimately cleaned log raises no error finding.
//!
//! The cleaner's rules reproduced here live in `LogCleaner.scala` (`Cleaner.cleanInto`:
//! `checkBatchRetention`, `isBatchLastRecordOfProducer`; `CleanedTransactionMetadata`) and
//! `MemoryRecords.filterTo` / `buildRetainedRecordsInto` / `DefaultRecordBatch.writeEmptyHeader`.
#![cfg(feature = "testkit")]

use crate::common::cases::{entry, lso};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::encode::end_txn_marker;
use klogscan::testkit::files::encode_txn_index;
use klogscan::testkit::{
    AbortedTxn, Batch, BatchSpec, HeaderOverrides, Manifest, PartitionBuilder,
    PartitionFileOptions, Producer, Rec,
};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

mod segments;
mod snapshots;
mod txnindex;
mod unknown_policy;

// ----- helpers ----------------------------------------------------------------------------

/// The topic of every case (Kafka's tests clean `test-0`).
const TOPIC: &str = "test";
/// `delete.retention.ms` default: how far past the cleaning the delete horizon lies.
const DELETE_RETENTION_MS: i64 = 86_400_000;

/// A partition of `TOPIC` at leader epoch 0.
fn log() -> PartitionBuilder {
    PartitionBuilder::new(TOPIC, 0)
}

/// Producer `pid` at epoch 0, transactional (`appendTransactionalAsLeader`).
fn txn(pid: i64) -> Producer {
    Producer::transactional(pid, 0)
}

/// A record keyed `k` with value `k`, as Kafka's helpers write them.
fn kv(k: &str) -> Rec {
    Rec::kv(k, k)
}

/// A batch of `producer` at base sequence `seq` holding keys `keys` (one offset each).
fn keyed(producer: Producer, seq: i32, keys: &[&str]) -> Batch {
    let mut b = Batch::new(producer);
    if producer.id >= 0 {
        b = b.sequence(seq);
    }
    keys.iter().fold(b, |b, k| b.record(kv(k)))
}

/// A batch the cleaner rebuilt (`buildRetainedRecordsInto`): only `kept` (offset delta, key)
/// survive, the header keeps the first offset, the base sequence and the original last
/// offset delta `last_delta` (so the last sequence too).
fn rebuilt(producer: Producer, seq: i32, last_delta: i32, kept: &[(i32, &str)]) -> Batch {
    let b = kept
        .iter()
        .fold(Batch::new(producer).sequence(seq), |b, (d, k)| {
            b.record(kv(k).offset_delta(*d))
        });
    b.tweak(move |s| s.overrides.last_offset_delta = Some(last_delta))
}

/// A data batch the cleaner emptied but kept (`BatchRetention.RETAIN_EMPTY`, written by
/// `DefaultRecordBatch.writeEmptyHeader`): no records, `offsets` offsets, base sequence `seq`,
/// first timestamp −1, the original max timestamp.
fn emptied(producer: Producer, seq: i32, offsets: i32) -> Batch {
    let b = Batch::new(producer);
    let b = if producer.id >= 0 { b.sequence(seq) } else { b };
    b.tweak(move |s| {
        s.overrides.last_offset_delta = Some(offsets - 1);
        s.overrides.max_timestamp = Some(s.base_timestamp);
        s.base_timestamp = -1;
    })
}

/// Append a COMMIT (`commit`) or ABORT marker of `producer` (coordinator epoch 0, as Kafka's
/// `endTxnMarker` helper writes) that a cleaning pass stamped with the delete horizon
/// `horizon` (attribute bit 6, baseTimestamp = horizon): its transaction had no data left.
fn marker_with_horizon(p: &mut PartitionBuilder, producer: Producer, commit: bool, horizon: i64) {
    let ts = p.now();
    p.advance_time(1000);
    let mut spec = end_txn_marker(
        p.next_offset(),
        producer.id,
        producer.epoch,
        commit,
        0,
        ts,
        0,
    );
    spec.delete_horizon = true;
    spec.base_timestamp = horizon;
    spec.records[0].timestamp_delta = ts - horizon;
    p.append_spec(spec);
}

/// Append a control batch whose marker record the cleaner removed while keeping the batch
/// (the producer's last entry: its epoch is needed for fencing): no records.
fn emptied_marker(p: &mut PartitionBuilder, producer: Producer) {
    let ts = p.now();
    p.advance_time(1000);
    p.append_spec(BatchSpec {
        base_offset: p.next_offset(),
        partition_leader_epoch: 0,
        transactional: true,
        control: true,
        base_timestamp: -1,
        producer_id: producer.id,
        producer_epoch: producer.epoch,
        overrides: HeaderOverrides {
            max_timestamp: Some(ts),
            ..HeaderOverrides::default()
        },
        ..BatchSpec::default()
    });
}

/// A delete horizon one retention period after the partition's clock.
fn horizon(p: &PartitionBuilder) -> i64 {
    p.now() + DELETE_RETENTION_MS
}

/// Scan options as the CLI gives them, the topic declared compacted (`--compacted test`)
/// or not (compaction unknown).
fn options(compacted: bool) -> ScanOptions {
    let o = ScanOptions::default().with_keep_producers(true);
    if compacted {
        o.with_compacted_topics([TOPIC])
    } else {
        o
    }
}

/// Write `p` and scan it as the CLI does.
fn scan_with(p: &PartitionBuilder, compacted: bool) -> (TempDir, Manifest, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    let mut m = p.write(dir.path()).unwrap();
    rebase_first_segment(&mut m);
    let r = scan_dir(&m.dir, compacted);
    (dir, m, r)
}

/// The cleaner writes the cleaned segment at the base offset of the first segment it
/// cleaned (`createNewCleanedSegment`): the log keeps starting at 0 when the batches there
/// are gone. The testkit starts the first segment at its first batch, so the first `.log` is
/// renamed to base 0 (its `.index` and `.timeindex`, relative to the old base, are dropped:
/// Kafka rebuilds missing indexes at load).
fn rebase_first_segment(m: &mut Manifest) {
    let (base, path) = m.segments[0].clone();
    if base == 0 {
        return;
    }
    let to = path.with_file_name(format!("{:020}.log", 0));
    std::fs::rename(&path, &to).unwrap();
    for ext in ["index", "timeindex"] {
        let _ = std::fs::remove_file(path.with_extension(ext));
    }
    let txn = path.with_extension("txnindex");
    if txn.exists() {
        std::fs::rename(&txn, to.with_extension("txnindex")).unwrap();
    }
    m.segments[0] = (0, to);
}

/// Scan `p` written as a compacted topic.
fn scan(p: &PartitionBuilder) -> ScanReport {
    scan_with(p, true).2
}

fn scan_dir(dir: &Path, compacted: bool) -> ScanReport {
    let req = Request::new([dir]).with_options(options(compacted));
    let a = request::run(&req).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report
}

/// Write `p` with its broker files (no snapshots), replace the `.txnindex` of the segments
/// named in `txn_indexes` (segment number, entries) by what the cleaner left there, and
/// verify the partition as a compacted topic.
fn verify_cleaned(
    p: PartitionBuilder,
    txn_indexes: &[(usize, Vec<AbortedTxn>)],
) -> (ScanReport, PartitionVerification) {
    let dir = tempfile::tempdir().unwrap();
    let opts = PartitionFileOptions {
        snapshots: false,
        ..PartitionFileOptions::default()
    };
    let mut m = p.broker_files(opts).write(dir.path()).unwrap();
    rebase_first_segment(&mut m);
    for (s, entries) in txn_indexes {
        let path = m.segments[*s].1.with_extension("txnindex");
        if entries.is_empty() {
            let _ = std::fs::remove_file(&path);
        } else {
            std::fs::write(&path, encode_txn_index(entries)).unwrap();
        }
    }
    let r = scan_dir(&m.dir, true);
    let req = Request::new([&m.dir]).with_options(options(true));
    let a = request::verify(&req, None).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    (r, a.report.partitions.into_iter().next().unwrap())
}

/// A `.txnindex` entry.
fn aborted_txn(pid: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
    AbortedTxn {
        producer_id: pid,
        first_offset: first,
        last_offset: last,
        last_stable_offset: lso,
    }
}

/// `(kind, offset)` of every finding, in report order.
fn kinds(findings: &[Finding]) -> Vec<(Kind, Option<i64>)> {
    findings.iter().map(|f| (f.kind, f.offset)).collect()
}

/// Findings above `info`.
fn serious(findings: &[Finding]) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .collect()
}

/// The recomputed aborted transactions: (pid, first offset, marker offset).
fn aborted(r: &ScanReport) -> Vec<(i64, i64, i64)> {
    r.partitions[0]
        .outcome()
        .aborted
        .iter()
        .map(|a| (a.producer_id, a.first_offset, a.last_offset))
        .collect()
}

/// Assert a cleaned log scans without any finding, as a compacted topic.
fn assert_clean(r: &ScanReport) {
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.partitions[0].compacted, Some(true));
}

// ----- markers and aborted data -----------------------------------------------------------

/// `LogCleanerTest.testAbortMarkerRemoval`: producer 1 writes key 1 (offset 0) and keys 2, 3
/// (1–2), aborts (3), writes key 3 again (4) and commits (5). The first pass drops the
/// aborted batches but keeps the ABORT (its transaction's batches were still read) and its
/// `.txnindex` entry; the next pass finds the ABORT's transaction empty and stamps a delete
/// horizon on it (the entry is no longer copied); the pass after the horizon drops it. At
/// every step the log scans clean: no marker or sequence finding, the producer at sequence
/// 3 (offset 4), the LSO at the log end.
#[test]
fn abort_marker_removal() {
    let p1 = txn(1);
    // after the first pass: 3 ABORT, 4 [3], 5 COMMIT
    let mut p = log();
    p.skip_offsets(3);
    p.abort(p1, 0);
    p.append(keyed(p1, 3, &["3"]));
    p.commit(p1, 0);
    let r = scan(&p);
    assert_clean(&r);
    assert_eq!(entry(&r, 1), (0, 3, 4, None));
    assert_eq!(lso(&r), Some(6));
    assert_eq!(aborted(&r), vec![]);
    assert_eq!(r.partitions[0].outcome().txn_stats.empty_aborts, 1);
    // its `.txnindex` entry (1, 0–3) starts below the log's first batch and ends at the ABORT
    let (_r, v) = verify_cleaned(p, &[(0, vec![aborted_txn(1, 0, 3, 4)])]);
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);

    // the delete-horizon pass, then the pass past it
    for removed in [false, true] {
        let mut p = log();
        p.skip_offsets(3);
        if removed {
            p.skip_offsets(1);
        } else {
            let h = horizon(&p);
            marker_with_horizon(&mut p, p1, false, h);
        }
        p.append(keyed(p1, 3, &["3"]));
        p.commit(p1, 0);
        let r = scan(&p);
        assert_clean(&r);
        assert_eq!(entry(&r, 1), (0, 3, 4, None));
        assert_eq!((lso(&r), aborted(&r)), (Some(6), vec![]));
        assert_eq!(r.partitions[0].outcome().txn_stats.committed, 1);
    }
}

/// `LogCleanerTest.testCommitMarkerRemoval`: producer 1 writes [1] (0), [2, 3] (1–2),
/// commits (3), writes [2] (4), commits (5). The first pass keeps every marker (their
/// transactions still have data) and rebuilds the batch at 1–2 around key 3 alone (offset 2;
/// first offset 1, last offset 2 and base sequence 1 kept). After [1, 3] (6–7) and a commit
/// (8), the next pass drops the batches at 0 and 1–2 but keeps the COMMIT at 3 (its batches
/// were read); the pass after stamps its delete horizon; the last drops it. Every state scans
/// clean; the producer ends at sequence 5 (offset 7), nothing open, LSO 9.
#[test]
fn commit_marker_removal() {
    let p1 = txn(1);
    // first pass
    let mut p = log();
    p.append(keyed(p1, 0, &["1"]));
    p.append(rebuilt(p1, 1, 1, &[(1, "3")]));
    p.commit(p1, 0);
    p.append(keyed(p1, 3, &["2"]));
    p.commit(p1, 0);
    let r = scan(&p);
    assert_clean(&r);
    assert_eq!(entry(&r, 1), (0, 3, 4, None));
    assert_eq!(r.partitions[0].outcome().txn_stats.committed, 2);
    // the rebuilt batch alone is a cleaner trace: clean with compaction unknown too
    let (_d, _m, r) = scan_with(&p, false);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);

    // second pass (COMMIT at 3 kept), third (horizon), fourth (removed)
    for step in 0..3 {
        let mut p = log();
        p.skip_offsets(3);
        match step {
            0 => {
                p.commit(p1, 0);
            }
            1 => {
                let h = horizon(&p);
                marker_with_horizon(&mut p, p1, true, h);
            }
            _ => {
                p.skip_offsets(1);
            }
        }
        p.append(keyed(p1, 3, &["2"]));
        p.commit(p1, 0);
        p.append(keyed(p1, 4, &["1", "3"]));
        p.commit(p1, 0);
        let r = scan(&p);
        assert_clean(&r);
        assert_eq!(entry(&r, 1), (0, 5, 7, None), "step {step}");
        assert_eq!(lso(&r), Some(9));
        assert_eq!(r.partitions[0].outcome().txn_stats.committed, 2);
    }
}

/// `LogCleanerTest.testDeletedBatchesWithNoMessagesRead`: [1] (0), ABORT (1), [2] (2), [2]
/// (3), COMMIT (4). The first pass leaves the ABORT (its batch was read), the second [2] and
/// the COMMIT; two more passes stamp and then drop the ABORT. Both states scan clean, the
/// producer at sequence 2 (offset 3), the committed transaction starting at 3.
#[test]
fn deleted_batches_with_no_messages_read() {
    let p1 = txn(1);
    for abort_kept in [true, false] {
        let mut p = log();
        p.skip_offsets(1);
        if abort_kept {
            p.abort(p1, 0);
        } else {
            p.skip_offsets(1);
        }
        p.skip_offsets(1);
        p.append(keyed(p1, 2, &["2"]));
        p.commit(p1, 0);
        let r = scan(&p);
        assert_clean(&r);
        assert_eq!(entry(&r, 1), (0, 2, 3, None));
        let s = &r.partitions[0].outcome().txn_stats;
        assert_eq!((s.committed, s.empty_aborts), (1, u64::from(abort_kept)));
        assert_eq!(s.sizes, vec![2]);
        assert_eq!((lso(&r), aborted(&r)), (Some(5), vec![]));
    }
}

/// `LogCleanerTest.testCleanEmptyControlBatch`: a COMMIT of producer 1 with no transaction
/// (0), then keys 2 and 3 (1, 2). The first pass stamps the marker's delete horizon; past
/// it, the marker's record goes but the batch stays, empty: it is producer 1's last entry and
/// holds its epoch. The empty control batch neither opens nor closes anything; no finding.
#[test]
fn clean_empty_control_batch() {
    let p1 = txn(1);
    for emptied in [false, true] {
        let mut p = log();
        if emptied {
            emptied_marker(&mut p, p1);
        } else {
            let h = horizon(&p);
            marker_with_horizon(&mut p, p1, true, h);
        }
        p.append(keyed(Producer::PLAIN, -1, &["2"]));
        p.append(keyed(Producer::PLAIN, -1, &["3"]));
        let r = scan(&p);
        assert_clean(&r);
        assert_eq!(lso(&r), Some(3));
        assert!(r.partitions[0].outcome().open.is_empty());
        let stats = &r.partitions[0].outcome().txn_stats;
        assert_eq!(stats.empty_commits, u64::from(!emptied));
    }
}

/// `LogCleanerTest.testCommittedTransactionSpanningSegments` and
/// `testAbortedTransactionSpanningSegments`: one batch of producer 1 (0) in the first
/// segment, its marker (1) in the second. Committed, both stay as they are. Aborted, the
/// batch stays *empty* (the producer's last data: its sequence) and the ABORT stays (its
/// transaction still has a batch), pass after pass: the empty batch still opens the
/// transaction the ABORT closes, so the aborted transaction (0–1) is what the `.txnindex`
/// holds, and the scan and verify are clean.
#[test]
fn transaction_spanning_segments() {
    let p1 = txn(1);
    let mut p = log();
    p.append(keyed(p1, 0, &["1"]));
    p.roll();
    p.commit(p1, 0);
    let r = scan(&p);
    assert_clean(&r);
    assert_eq!((entry(&r, 1), lso(&r)), ((0, 0, 0, None), Some(2)));

    let mut p = log();
    p.append(emptied(p1, 0, 1));
    p.roll();
    p.abort(p1, 0);
    let (r, v) = verify_cleaned(p, &[(1, vec![aborted_txn(1, 0, 1, 2)])]);
    assert_clean(&r);
    assert_eq!(aborted(&r), vec![(1, 0, 1)]);
    assert_eq!((entry(&r, 1), lso(&r)), ((0, 0, 0, None), Some(2)));
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// `LogCleanerTest.testCleaningWithKeysConflictingWithTxnMarkerKeys`: producer 2's data
/// record carries the COMMIT control key; the cleaner keeps both COMMIT markers (the data
/// is not a marker). Unchanged log: two committed transactions, no finding.
#[test]
fn cleaning_with_keys_conflicting_with_txn_marker_keys() {
    let commit_key = vec![0u8, 0, 0, 1];
    let mut p = log().leader_epoch(5);
    p.append(keyed(txn(1), 0, &["1"]));
    p.commit(txn(1), 0);
    p.append(Batch::new(txn(2)).record(Rec {
        key: Some(commit_key),
        value: Some(b"foo".to_vec()),
        ..Rec::default()
    }));
    p.commit(txn(2), 0);
    let r = scan(&p);
    assert_clean(&r);
    let stats = &r.partitions[0].outcome().txn_stats;
    assert_eq!((stats.committed, stats.empty_commits), (2, 0));
    assert_eq!(lso(&r), Some(4));
}
