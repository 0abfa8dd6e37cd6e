//! Kafka's log cleaner tests, second round: the `LogCleanerTest` cases
//! (core/src/test/scala/unit/kafka/log/) that `kafka_cleaner_cases` does not reproduce —
//! two producers' transactions interleaved in one cleaning, tombstones stamped with a delete
//! horizon, offsets the cleaner removed in whole batches with nothing else to show for it,
//! offset holes between segments, and the files a crash leaves in the middle of the
//! cleaner's swap (`.cleaned`, `.swap`, `.deleted`). Each test writes what the cleaner
//! leaves on disk, runs klogscan through the library's front door (`request::run` /
//! `request::verify`, what the CLI calls) and asserts what a broker loading that log holds.
//!
//! The cleaner's rules are in `LogCleaner.scala` (`Cleaner.cleanSegments`, `cleanInto`:
//! `checkBatchRetention`, `shouldRetainRecord`; `CleanedTransactionMetadata`) and
//! `MemoryRecords.filterTo` (the delete horizon stamped on a batch holding a tombstone or
//! the marker of an emptied transaction); the 2025 code moved them to storage's
//! `Cleaner.java` with the same rules. The swap's load is `LogLoader.load`
//! (`removeTempFilesAndCollectSwapFiles` and the passes after it).
#![cfg(feature = "testkit")]

use crate::common::cases::{entry, lso};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{Compaction, ScanOptions, ScanReport};
use klogscan::testkit::files::encode_txn_index;
use klogscan::testkit::{
    AbortedTxn, Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
    Rec,
};
use klogscan::verify::PartitionVerification;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

mod swaps;

// ----- helpers ----------------------------------------------------------------------------

/// The topic of every case (Kafka's tests clean `test-0`).
const TOPIC: &str = "test";
/// `delete.retention.ms` default.
const DELETE_RETENTION_MS: i64 = 86_400_000;

fn log() -> PartitionBuilder {
    PartitionBuilder::new(TOPIC, 0)
}

fn txn(pid: i64) -> Producer {
    Producer::transactional(pid, 0)
}

fn idem(pid: i64) -> Producer {
    Producer::idempotent(pid, 0)
}

/// A record keyed `k` with value `k`.
fn kv(k: &str) -> Rec {
    Rec::kv(k, k)
}

/// A batch of `producer` at base sequence `seq` (ignored for a plain producer) holding
/// keys `keys`, one offset each.
fn keyed(producer: Producer, seq: i32, keys: &[&str]) -> Batch {
    let mut b = Batch::new(producer);
    if producer.id >= 0 {
        b = b.sequence(seq);
    }
    keys.iter().fold(b, |b, k| b.record(kv(k)))
}

/// A batch the cleaner rebuilt: only `kept` (offset delta, key) survive; first offset,
/// base sequence and last offset delta `last_delta` kept.
fn rebuilt(producer: Producer, seq: i32, last_delta: i32, kept: &[(i32, &str)]) -> Batch {
    let mut b = Batch::new(producer);
    if producer.id >= 0 {
        b = b.sequence(seq);
    }
    let b = kept
        .iter()
        .fold(b, |b, (d, k)| b.record(kv(k).offset_delta(*d)));
    b.tweak(move |s| s.overrides.last_offset_delta = Some(last_delta))
}

/// Scan options as the CLI gives them, `--compacted test` or nothing said.
fn options(compacted: bool) -> ScanOptions {
    let o = ScanOptions::default().with_keep_producers(true);
    if compacted {
        o.with_compacted_topics([TOPIC])
    } else {
        o
    }
}

/// The cleaner writes its segment at the first cleaned segment's base: rename a first
/// segment the testkit started at its first batch to base 0 (indexes dropped: rebuilt at
/// load).
fn rebase_first_segment(m: &mut Manifest) {
    let (base, path) = m.segments[0].clone();
    if base == 0 {
        return;
    }
    let to = path.with_file_name(format!("{:020}.log", 0));
    std::fs::rename(&path, &to).unwrap();
    for ext in ["index", "timeindex", "snapshot"] {
        let _ = std::fs::remove_file(path.with_extension(ext));
    }
    let txn = path.with_extension("txnindex");
    if txn.exists() {
        std::fs::rename(&txn, to.with_extension("txnindex")).unwrap();
    }
    m.segments[0] = (0, to);
}

/// A log dir holding `p` (its broker files, no snapshots), the first segment at base 0,
/// and, with `cleaned_to`, a `cleaner-offset-checkpoint` listing it there.
fn log_dir(p: PartitionBuilder, cleaned_to: Option<i64>) -> (TempDir, PathBuf, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("broker-1");
    let opts = PartitionFileOptions {
        snapshots: false,
        ..PartitionFileOptions::default()
    };
    let m = LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p.broker_files(opts))
        .write(&ld)
        .unwrap();
    let mut m = m.partitions.into_iter().next().unwrap();
    rebase_first_segment(&mut m);
    if let Some(c) = cleaned_to {
        std::fs::write(
            ld.join("cleaner-offset-checkpoint"),
            format!("0\n1\n{TOPIC} 0 {c}\n"),
        )
        .unwrap();
    }
    (dir, ld, m)
}

/// Scan `dir` (a log dir or a partition directory) as the CLI does.
fn scan_dir(dir: &Path, compacted: bool) -> ScanReport {
    let req = Request::new([dir]).with_options(options(compacted));
    let a = request::run(&req).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report
}

/// Verify `dir` as the CLI does.
fn verify_dir(dir: &Path, compacted: bool) -> PartitionVerification {
    let req = Request::new([dir]).with_options(options(compacted));
    let a = request::verify(&req, None).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
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

/// A `.txnindex` entry.
fn aborted_txn(pid: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
    AbortedTxn {
        producer_id: pid,
        first_offset: first,
        last_offset: last,
        last_stable_offset: lso,
    }
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

// ----- transactions -----------------------------------------------------------------------

/// `LogCleanerTest.testBasicTransactionAwareCleaning`: producers 1 and 2 interleave —
/// 1: [1, 2] (0–1), 2: [2, 3] (2–3), 1: [3, 4] (4–5), ABORT 1 (6), COMMIT 2 (7),
/// 1: [2] (8), COMMIT 1 (9). One pass leaves keys 3 (offset 3) and 2 (offset 8) and the
/// three markers (6, 7, 9): producer 1's aborted batches go whole, producer 2's batch is
/// rebuilt around key 3 (first offset 2, last offset 3, sequences 0–1 kept), and Kafka
/// asserts `collectAbortedTransactions` unchanged — the entry (1, 0–6, LSO 2) stays in the
/// cleaned `.txnindex` though its data is gone. The cleaned log scans and verifies with no
/// finding above info, each producer at its last sequence, nothing open, the LSO at 10; the
/// ABORT at 6 closes nothing left on disk (an empty abort).
#[test]
fn basic_transaction_aware_cleaning() {
    for compacted in [true, false] {
        let (_d, ld, m) = log_dir(basic_cleaned(), None);
        std::fs::write(
            m.segments[0].1.with_extension("txnindex"),
            encode_txn_index(&[aborted_txn(1, 0, 6, 2)]),
        )
        .unwrap();
        let r = scan_dir(&ld, compacted);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(entry(&r, 1), (0, 4, 8, None));
        assert_eq!(entry(&r, 2), (0, 1, 3, None));
        assert_eq!((lso(&r), aborted(&r)), (Some(10), vec![]));
        let s = &r.partitions[0].outcome().txn_stats;
        assert_eq!((s.committed, s.empty_aborts), (2, 1));
        let v = verify_dir(&ld, compacted);
        assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
    }
}

/// The log [`basic_transaction_aware_cleaning`] cleans, as one pass leaves it.
fn basic_cleaned() -> PartitionBuilder {
    let (p1, p2) = (txn(1), txn(2));
    let mut p = log();
    p.skip_offsets(2);
    p.append(rebuilt(p2, 0, 1, &[(1, "3")]));
    p.skip_offsets(2);
    p.abort(p1, 0);
    p.commit(p2, 0);
    p.append(keyed(p1, 4, &["2"]));
    p.commit(p1, 0);
    p
}

// ----- tombstones and removed batches -----------------------------------------------------

/// A plain batch holding `tombstone` (key, no value) at `ts`, stamped by a cleaning pass
/// with the delete horizon `horizon` (`MemoryRecords.filterTo` sets it on the first pass
/// that keeps a batch holding a tombstone).
fn tombstone_with_horizon(key: &str, ts: i64, horizon: i64) -> Batch {
    Batch::new(Producer::PLAIN)
        .record(Rec::tombstone(key))
        .at(ts)
        .delete_horizon(horizon)
}

/// `LogCleanerTest.testCleanTombstone`: key 0 (0) with a timestamp far ahead, then its
/// tombstone (1) with a timestamp a retention period and more in the past, then key 1 (2).
/// Cleaning drops the value at 0 and keeps the tombstone, its batch stamped with the delete
/// horizon (the cleaning time plus `delete.retention.ms`, not the record's own timestamp),
/// pass after pass while the horizon lies ahead. On disk: the tombstone's batch at 1 (bit
/// 6 set, baseTimestamp = horizon, the record's delta negative), key 1 at 2. Nothing states
/// the policy (Kafka calls the cleaner directly): the delete horizon is a cleaner trace, the
/// scan treats the log as compacted and reports nothing; `verify` has nothing to say either.
#[test]
fn clean_tombstone() {
    let now = 1_700_000_000_000;
    let mut p = log().start_time(now);
    p.skip_offsets(1);
    p.append(tombstone_with_horizon(
        "0",
        now - DELETE_RETENTION_MS - 10_000,
        now + DELETE_RETENTION_MS,
    ));
    p.append(keyed(Producer::PLAIN, -1, &["1"]).at(now));
    let (_d, ld, _m) = log_dir(p, None);
    let r = scan_dir(&ld, false);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(
        r.partitions[0].compaction(),
        Some(Compaction::CleanerTraces)
    );
    assert_eq!(r.partitions[0].log_end_offset, Some(3));
    let v = verify_dir(&ld, false);
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// `LogCleanerTest.testCleaningWithDeletes`'s cleaned log: keys 0..N (one batch each),
/// then a tombstone for every even key, then new keys. One pass removes every batch of an
/// even key (whole batches: offset gaps, nothing rebuilt) and keeps the tombstones, stamped
/// with the delete horizon. Here N = 6: keys 1, 3, 5 at 1, 3, 5, tombstones of 0, 2, 4 at
/// 6–8 (horizon), keys 9, 10 in the active segment.
fn cleaned_with_deletes() -> PartitionBuilder {
    let mut p = log();
    for k in [1, 3, 5] {
        p.skip_offsets(1);
        p.append(keyed(Producer::PLAIN, -1, &[&k.to_string()]));
    }
    let h = p.now() + DELETE_RETENTION_MS;
    for k in [0, 2, 4] {
        let ts = p.now();
        p.append(tombstone_with_horizon(&k.to_string(), ts, h));
    }
    p.roll();
    p.append(keyed(Producer::PLAIN, -1, &["9"]));
    p.append(keyed(Producer::PLAIN, -1, &["10"]));
    p
}

/// `LogCleanerTest.testCleaningWithDeletes`, compacted by the log dir's
/// `cleaner-offset-checkpoint` (at 9, the active segment's base, where a
/// `LogCleanerManager` would have left it): no finding, no offset gap; `verify` clean.
#[test]
fn cleaning_with_deletes() {
    let (_d, ld, _m) = log_dir(cleaned_with_deletes(), Some(9));
    let r = scan_dir(&ld, false);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.partitions[0].compaction(), Some(Compaction::Stated));
    let v = verify_dir(&ld, false);
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// `LogCleanerTest.testCleaningWithDeletes` as Kafka's test leaves it: the cleaner called
/// directly, no checkpoint, so only the bytes say the log was cleaned — and they do (the
/// tombstones' delete horizon at 6–8; the report's `compaction()` is `CleanerTraces`). The
/// removed batches of keys 0, 2, 4 come first, though, and the replay judges the holes at
/// 1, 3 and 5 before it reads the first horizon (`Replay::treated_as_compacted`, "seen so
/// far"): two `offset_gap` findings (info) stay in a report that calls the partition
/// cleaned. Kafka's load accepts the gaps (`LogLoader`; nothing checks offsets' contiguity).
#[test]
fn cleaning_with_deletes_policy_unknown() {
    let (_d, ld, _m) = log_dir(cleaned_with_deletes(), None);
    let r = scan_dir(&ld, false);
    assert_eq!(
        r.partitions[0].compaction(),
        Some(Compaction::CleanerTraces)
    );
    assert!(r.findings.is_empty(), "{:?}", kinds(&r.findings));
}

/// `LogCleanerTest.testPartialSegmentClean`: keys 0, 1, 0, 1, 0 (offsets 0–4); an offset
/// map holding one key at a time makes each pass remove one more leading batch: offsets
/// 1–4, then 2–4, then 3–4 left, in the segment still based at 0. Whole batches only: the
/// log holds no trace of the cleaner. With the log dir's `cleaner-offset-checkpoint` the
/// log is compacted; the segment starting above its base is no finding at any step.
#[test]
fn partial_segment_clean() {
    for first in 1..=3 {
        let mut p = log();
        p.skip_offsets(first);
        for o in first..5 {
            p.append(keyed(Producer::PLAIN, -1, &[&(o % 2).to_string()]));
        }
        p.roll();
        p.append(keyed(Producer::PLAIN, -1, &["2"]));
        let (_d, ld, m) = log_dir(p, Some(5));
        assert_eq!(m.segments[0].0, 0);
        let r = scan_dir(&ld, false);
        assert!(r.findings.is_empty(), "step {first}: {:#?}", r.findings);
        assert_eq!(r.partitions[0].log_end_offset, Some(6));
        let v = verify_dir(&ld, false);
        assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
    }
}

/// `LogCleanerTest.testCleaningBeyondMissingOffsets`: keys 0–9 (0–9), a segment rolled at
/// 15 (offsets 10–14 never written), keys 15–24, a segment rolled at 30 (25–29 never
/// written), a follower's record at 30. The cleaner passes the holes (its next dirty offset
/// is the active segment's base, 30) and writes that to its checkpoint. Compacted by that
/// checkpoint, the holes between segments are no finding. Twin: with the policy unknown
/// and no cleaner trace in the bytes, each hole is an `offset_gap`, info only.
#[test]
fn cleaning_beyond_missing_offsets() {
    for checkpoint in [true, false] {
        let mut p = log();
        for k in 0..10 {
            p.append(keyed(Producer::PLAIN, -1, &[&k.to_string()]));
        }
        p.skip_offsets(5);
        p.roll();
        for k in 15..25 {
            p.append(keyed(Producer::PLAIN, -1, &[&k.to_string()]));
        }
        p.skip_offsets(5);
        p.roll();
        p.append(keyed(Producer::PLAIN, -1, &["1015"]));
        let (_d, ld, m) = log_dir(p, checkpoint.then_some(30));
        let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
        assert_eq!(bases, [0, 15, 30]);
        let r = scan_dir(&ld, false);
        if checkpoint {
            assert!(r.findings.is_empty(), "{:#?}", r.findings);
            assert_eq!(r.partitions[0].compaction(), Some(Compaction::Stated));
        } else {
            assert_eq!(
                kinds(&r.findings),
                vec![(Kind::OffsetGap, Some(15)), (Kind::OffsetGap, Some(30))]
            );
            assert!(r.findings.iter().all(|f| f.severity == Severity::Info));
        }
        assert_eq!(r.partitions[0].log_end_offset, Some(31));
    }
}

// ----- cleaner traces seen late -----------------------------------------------------------

/// The log one cleaning pass leaves of: idempotent producer 1's [a] (0, seq 0), [b] (1,
/// seq 1), [c] (2, seq 2), [b] (3, seq 3), then plain [d, e] (4–5) and [d] (6). Key b's
/// first batch is not producer 1's last and goes whole (`checkBatchRetention`: DELETE),
/// so producer 1's sequences jump 0 → 2 at offset 2; the plain batch at 4–5 is rebuilt
/// around e (one record over two offsets: the first visible trace of the cleaner, after
/// the jump). With `trace_first`, the same partition with the rebuilt batch ahead of the
/// producer's batches (offset 0–1; the producer's from 2).
fn cleaned_with_late_trace(trace_first: bool) -> PartitionBuilder {
    let p1 = idem(1);
    let mut p = log();
    let plain = |p: &mut PartitionBuilder| {
        p.append(rebuilt(Producer::PLAIN, -1, 1, &[(1, "e")]));
        p.append(keyed(Producer::PLAIN, -1, &["d"]));
    };
    if trace_first {
        plain(&mut p);
    }
    p.append(keyed(p1, 0, &["a"]));
    p.skip_offsets(1);
    p.append(keyed(p1, 2, &["c"]));
    p.append(keyed(p1, 3, &["b"]));
    if !trace_first {
        plain(&mut p);
    }
    p
}

/// Positive twin of [`cleaner_trace_after_a_removed_batch`]: when the rebuilt batch comes
/// first, the replay reads the partition as cleaned before producer 1's sequences jump —
/// no finding at all, producer 1 at sequence 3.
#[test]
fn cleaner_trace_before_a_removed_batch() {
    let dir = tempfile::tempdir().unwrap();
    let m = cleaned_with_late_trace(true).write(dir.path()).unwrap();
    let r = scan_dir(&m.dir, false);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(
        r.partitions[0].compaction(),
        Some(Compaction::CleanerTraces)
    );
    assert_eq!(entry(&r, 1), (0, 3, 6, None));
}

/// `LogCleanerTest.testDuplicateCheckAfterCleaning` / `testLogCleanerRetainsProducerLastSequence`
/// read together with `Cleaner.cleanInto`'s `checkBatchRetention`: a producer's batch that
/// is not its last goes whole, so its sequences jump in the cleaned log, and nothing in
/// Kafka checks sequences of data it loads (`ProducerAppendInfo` validates CLIENT appends
/// only). Kafka calls the cleaner directly: no checkpoint states the policy, only the
/// batches show it. klogscan decides "cleaned" from the traces *seen so far*
/// (`Replay::treated_as_compacted` in src/partition/state/mod.rs): the jump at offset 2 is
/// judged before the rebuilt batch at 4 is read, and stays a `sequence_gap` (warning) plus
/// an `offset_gap` (info) though the same report says the partition carries the cleaner's
/// traces (`compaction() == CleanerTraces`) — the twin with the trace first is clean.
#[test]
fn cleaner_trace_after_a_removed_batch() {
    let dir = tempfile::tempdir().unwrap();
    let m = cleaned_with_late_trace(false).write(dir.path()).unwrap();
    let r = scan_dir(&m.dir, false);
    assert_eq!(
        r.partitions[0].compaction(),
        Some(Compaction::CleanerTraces)
    );
    assert_eq!(entry(&r, 1), (0, 3, 3, None));
    assert!(r.findings.is_empty(), "{:#?}", kinds(&r.findings));
}
