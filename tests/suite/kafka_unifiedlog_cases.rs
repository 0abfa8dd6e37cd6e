//! Kafka's own tests of the last stable offset, aborted transactions and segment recovery,
//! reproduced as bytes on disk: each test builds the log of one case of `UnifiedLogTest`
//! (core/src/test/scala/unit/kafka/log/), `LogSegmentTest` or `TransactionIndexTest`
//! (storage/src/test/java/org/apache/kafka/storage/internals/log/) with the testkit, runs
//! klogscan through the library's front door (`request::run` / `request::verify`, what the
//! CLI calls) and asserts what Kafka's test implies, in klogscan's view of it (the same two
//! views as `kafka_psm_cases.rs`: the loading broker's state, and findings for what a leader
//! would have refused).
//!
//! Kafka's `UnifiedLog.lastStableOffset` is the first unstable offset bounded by the high
//! watermark; klogscan's `last_stable_offset` is the first undecided offset (clamped up to
//! the log start), and the checkpointed high watermark is the report's separate
//! `high_watermark`. Where Kafka's test moves the high watermark, these tests read the log
//! prefix the high watermark covers.
//!
//! The LogSegment and TransactionIndex cases are in `kafka_unifiedlog_cases/segment.rs`,
//! the producer-state cases of `UnifiedLogTest` in `kafka_unifiedlog_cases/producers.rs`.
#![cfg(feature = "testkit")]

use crate::common::cases::{aborted, lso, recovered, scan, scan_dir};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{
    Batch, Damage, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use tempfile::TempDir;

mod producers;
mod segment;

// ----- helpers ----------------------------------------------------------------------------

/// Write `p` into a log dir made by `ld`; returns the partition's manifest.
fn write_ld(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Verify the log dir holding `m` as the CLI does.
fn verify(m: &Manifest) -> PartitionVerification {
    let a = request::verify(&Request::new([m.dir.parent().unwrap()]), None).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

/// `(kind, offset)` of every finding, in report order.
fn kinds(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    r.findings.iter().map(|f| (f.kind, f.offset)).collect()
}

fn of_kind(fs: &[Finding], k: Kind) -> Vec<&Finding> {
    fs.iter().filter(|f| f.kind == k).collect()
}

fn txn(pid: i64, epoch: i16) -> Producer {
    Producer::transactional(pid, epoch)
}

fn plain(n: usize) -> Batch {
    Batch::new(Producer::PLAIN).records(n)
}

// ----- UnifiedLogTest: the first unstable offset ------------------------------------------

/// `UnifiedLogTest.testFirstUnstableOffsetNoTransactionalData`: three plain records leave
/// nothing unstable — the last stable offset is the log end (3), no transaction is open.
/// Near miss: the same records transactional pin it at 0.
#[test]
fn first_unstable_offset_no_transactional_data() {
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(Producer::PLAIN).values(["foo", "bar", "baz"]));
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 3);
    assert_eq!(lso(&r), Some(3));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.partitions[0].transactions.open, 0);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(txn(137, 5)).values(["foo", "bar", "baz"]));
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(0));
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(0))]);
}

/// `UnifiedLogTest.testFirstUnstableOffsetWithTransactionalData`: producer 137 (epoch 5)
/// writes three records then one more (sequence 3) in one transaction: the first unstable
/// offset stays at the first (0). Its COMMIT (offset 4) ends it: once the high watermark
/// passes the marker nothing is unstable. On disk: with the checkpointed high watermark at
/// the marker (4) the report keeps it apart (`high_watermark` 4) and the last stable offset
/// is the first undecided one, the log end (5).
#[test]
fn first_unstable_offset_with_transactional_data() {
    let t = txn(137, 5);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(t).values(["foo", "bar", "baz"]));
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(0));
    p.append(Batch::new(t).values(["blah"]));
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches[1].base_sequence, 3);
    assert_eq!(lso(&r), Some(0));
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(0))]);
    p.commit(t, 0);
    let (d, m) = write_ld(LogDirBuilder::new(1).high_watermark("ul", 0, 4), p);
    let r = scan_dir(d.path());
    assert_eq!(m.log_end_offset, 5);
    assert_eq!(r.partitions[0].high_watermark, Some(4));
    assert_eq!(lso(&r), Some(5));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.partitions[0].outcome().txn_stats.committed, 1);
}

/// `UnifiedLogTest.testFetchUpToLastStableOffset`: producer 1's transaction (0–4, 10–13,
/// 16–25) and producer 2's (8–9) interleave with plain data; the last stable offset is 0;
/// after producer 1's COMMIT (26) it is producer 2's first offset, 8; after producer 2's
/// ABORT (27) it is the log end, 28. The aborted range is `(2, 8, 27)`, its last stable
/// offset the log end then (28).
#[test]
fn fetch_up_to_last_stable_offset() {
    let (t1, t2) = (txn(1, 0), txn(2, 0));
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(t1).records(5)); // 0..4
    p.append(plain(3)); // 5..7
    p.append(Batch::new(t2).records(2)); // 8..9
    p.append(Batch::new(t1).records(4)); // 10..13
    p.append(plain(2)); // 14..15
    p.append(Batch::new(t1).records(10)); // 16..25
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 26);
    assert_eq!(lso(&r), Some(0));
    p.commit(t1, 0); // 26
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(8));
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(8))]);
    p.abort(t2, 0); // 27
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 28);
    assert_eq!(lso(&r), Some(28));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(aborted(&r), vec![(2, 8, 27, 28)]);
}

/// `UnifiedLogTest.testLastStableOffsetWithMixedProducerData`: producer 137's transaction
/// (0–2), plain data (3–5), producer 983's transaction (6–8): unstable from 0; 137 aborts
/// (9): from 6, which is the aborted range's last stable offset; 983 commits (10): nothing.
#[test]
fn last_stable_offset_with_mixed_producer_data() {
    let (t1, t2) = (txn(137, 5), txn(983, 5));
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(t1).values(["a", "b", "c"]));
    p.append(Batch::new(Producer::PLAIN).values(["g", "h", "i"]));
    p.append(Batch::new(t2).values(["d", "e", "f"]));
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(0));
    p.abort(t1, 0); // 9
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(6));
    assert_eq!(aborted(&r), vec![(137, 0, 9, 6)]);
    p.commit(t2, 0); // 10
    let (_d, m, r) = scan(&p);
    assert_eq!(lso(&r), Some(m.log_end_offset));
    assert_eq!(m.log_end_offset, 11);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(aborted(&r), vec![(137, 0, 9, 6)]);
}

// ----- UnifiedLogTest: the transaction index ----------------------------------------------

/// One step of a scenario: data of a transactional producer, plain data, or a marker.
#[derive(Clone, Copy)]
enum Step {
    Txn(i64, usize),
    Plain(usize),
    Abort(i64),
    Commit(i64),
}

/// The log of `UnifiedLogTest.testTransactionIndexUpdated`: producers 1–4 (epoch 0)
/// interleave transactions with plain data; 1 aborts at 29, 3 commits at 58, 2 aborts at
/// 74, 4 commits at 89 (one segment: Kafka's test rolls at 5 MiB).
const FOUR_TRANSACTIONS: [Step; 19] = [
    Step::Txn(1, 5),  // 0..4
    Step::Plain(3),   // 5..7
    Step::Txn(2, 2),  // 8..9
    Step::Txn(1, 4),  // 10..13
    Step::Txn(3, 3),  // 14..16
    Step::Plain(2),   // 17..18
    Step::Txn(1, 10), // 19..28
    Step::Abort(1),   // 29
    Step::Txn(2, 6),  // 30..35
    Step::Txn(4, 3),  // 36..38
    Step::Plain(10),  // 39..48
    Step::Txn(3, 9),  // 49..57
    Step::Commit(3),  // 58
    Step::Txn(4, 8),  // 59..66
    Step::Txn(2, 7),  // 67..73
    Step::Abort(2),   // 74
    Step::Plain(10),  // 75..84
    Step::Txn(4, 4),  // 85..88
    Step::Commit(4),  // 89
];

/// Append `steps` to `p` until the log end reaches `upto`.
fn run_steps(p: &mut PartitionBuilder, steps: &[Step], upto: i64) {
    for s in steps {
        if p.next_offset() >= upto {
            break;
        }
        match *s {
            Step::Txn(pid, n) => p.append(Batch::new(txn(pid, 0)).records(n)),
            Step::Plain(n) => p.append(plain(n)),
            Step::Abort(pid) => p.abort(txn(pid, 0), 0),
            Step::Commit(pid) => p.commit(txn(pid, 0), 0),
        };
    }
}

const KAFKA_ABORTED: [(i64, i64, i64, i64); 2] = [(1, 0, 29, 8), (2, 8, 74, 36)];

/// `UnifiedLogTest.testTransactionIndexUpdated` and
/// `testTransactionIndexUpdatedThroughReplication` (the same bytes, appended as leader or
/// as follower): the transaction index holds `(1, 0, 29, LSO 8)` and `(2, 8, 74, LSO 36)`;
/// with the high watermark at 30 the first unstable offset is 8, at 75 it is 36, at the log
/// end there is none. On disk the `.txnindex` the broker wrote agrees with the markers
/// (`verify`: no `txnindex_mismatch`); near miss: the index without its second entry is a
/// `txnindex_mismatch` at 74.
#[test]
fn transaction_index_updated() {
    for (upto, want) in [(30, 8), (75, 36), (90, 90)] {
        let mut p = PartitionBuilder::new("ul", 0);
        run_steps(&mut p, &FOUR_TRANSACTIONS, upto);
        let (_d, m, r) = scan(&p);
        assert_eq!(m.log_end_offset, upto);
        assert_eq!(lso(&r), Some(want), "prefix up to {upto}");
    }
    let build = |files: PartitionFileOptions| {
        let mut p = PartitionBuilder::new("ul", 0).broker_files(files);
        run_steps(&mut p, &FOUR_TRANSACTIONS, i64::MAX);
        p
    };
    let p = build(PartitionFileOptions::default());
    let (_d, m, r) = scan(&p);
    assert_eq!(m.segments.len(), 1);
    assert_eq!(aborted(&r), KAFKA_ABORTED);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let (_d, m) = write_ld(LogDirBuilder::new(1), p);
    assert!(m.dir.join(format!("{:020}.txnindex", 0)).exists());
    let v = verify(&m);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);
    let p = build(
        PartitionFileOptions::default().damage(Damage::DropTxnIndexEntry {
            segment: 0,
            entry: 1,
        }),
    );
    let (_d, m) = write_ld(LogDirBuilder::new(1), p);
    let v = verify(&m);
    let bad = of_kind(&v.findings, Kind::TxnindexMismatch);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert_eq!(bad[0].offset, Some(74));
    assert_eq!(bad[0].evidence["entries"][0]["first_offset"], 8);
    assert_eq!(bad[0].evidence["entries"][0]["last_stable_offset"], 36);
}

/// `UnifiedLogTest.testAbortedTransactionSpanningMultipleSegments`: producer 137's
/// transaction spans two segments (0–2 and 3–5, each segment the size of one batch) and
/// its ABORT (6) rolls a third: one aborted range `(137, 0, 6)` (last stable offset 7,
/// nothing else open), indexed in the `.txnindex` of the segment holding the marker (6),
/// which a fetch from 0 reaches. Near miss: that index entry missing is reported.
#[test]
fn aborted_transaction_spanning_multiple_segments() {
    let t = txn(137, 5);
    let build = |seg_bytes: u64, files: PartitionFileOptions| {
        let mut p = PartitionBuilder::new("ul", 0)
            .segment_bytes(seg_bytes)
            .broker_files(files);
        p.append(Batch::new(t).values(["a", "b", "c"]));
        p.append(Batch::new(t).values(["d", "e", "f"]));
        p.abort(t, 0);
        p
    };
    let size = build(u64::MAX, PartitionFileOptions::default())
        .write(tempfile::tempdir().unwrap().path())
        .unwrap()
        .batches[0]
        .size;
    let p = build(size, PartitionFileOptions::default());
    let (_d, m, r) = scan(&p);
    let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
    assert_eq!(bases, vec![0, 3, 6]);
    assert_eq!(lso(&r), Some(7));
    assert_eq!(aborted(&r), vec![(137, 0, 6, 7)]);
    assert_eq!(r.partitions[0].outcome().aborted[0].segment, 2);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let (_d, m) = write_ld(LogDirBuilder::new(1), p);
    let txnindexes: Vec<String> = std::fs::read_dir(&m.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txnindex"))
        .collect();
    assert_eq!(txnindexes, vec![format!("{:020}.txnindex", 6)]);
    assert!(verify(&m).findings.is_empty());
    let p = build(
        size,
        PartitionFileOptions::default().damage(Damage::DropTxnIndexEntry {
            segment: 2,
            entry: 0,
        }),
    );
    let (_d, m) = write_ld(LogDirBuilder::new(1), p);
    let v = verify(&m);
    let bad = of_kind(&v.findings, Kind::TxnindexMismatch);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert_eq!(bad[0].offset, Some(6));
}

/// `UnifiedLogTest.testAppendToTransactionIndexFailure`: producer 1's ABORT (10) reached
/// the log but its `.txnindex` entry did not (the append to the index failed and the log
/// dir went offline, the recovery point still 0). On the next (unclean) start the segment
/// is recovered: the log end is 11 and the rebuilt index holds the one aborted range, so
/// nothing is unstable. `verify` names the missing entry and predicts that recovery; near
/// miss: after a clean shutdown the segment is not recovered and the entry stays missing.
#[test]
fn append_to_transaction_index_failure() {
    let t = txn(1, 0);
    let build = || {
        let files = PartitionFileOptions::default().damage(Damage::DropTxnIndexEntry {
            segment: 0,
            entry: 0,
        });
        let mut p = PartitionBuilder::new("ul", 0).broker_files(files);
        p.append(Batch::new(t).records(10));
        p.abort(t, 1);
        p
    };
    for clean in [false, true] {
        let ld = LogDirBuilder::new(1).clean_shutdown(clean).recovery_point(
            "ul",
            0,
            if clean { 11 } else { 0 },
        );
        let (_d, m) = write_ld(ld, build());
        assert!(!m.dir.join(format!("{:020}.txnindex", 0)).exists());
        let v = verify(&m);
        let bad = of_kind(&v.findings, Kind::TxnindexMismatch);
        assert_eq!(bad.len(), 1, "clean {clean}: {:#?}", v.findings);
        assert_eq!(bad[0].offset, Some(10));
        let pr = &v.prediction;
        if clean {
            assert!(recovered(&v).is_empty());
        } else {
            assert_eq!(recovered(&v), vec![seg(0)]);
        }
        assert!(pr.truncation.is_none());
        assert_eq!(pr.log_end_offset_after, Some(11));
        assert_eq!(pr.producer_state.open_transactions, Some(0));
        let r = scan_dir(&m.dir);
        assert_eq!(aborted(&r), vec![(1, 0, 10, 11)]);
        assert_eq!(lso(&r), Some(11));
    }
}

/// `UnifiedLogTest.testRebuildTransactionalState`: producer 137's transaction (0–2) and its
/// ABORT (3); reopened after an unclean shutdown, the rebuilt state has no open
/// transaction, the last stable offset is the log end (4) and the aborted range is
/// `(137, 0, 3, 4)`.
#[test]
fn rebuild_transactional_state() {
    let t = txn(137, 5);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).values(["foo", "bar", "baz"]));
    p.abort(t, 0);
    let (_d, m) = write_ld(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ul", 0, 0),
        p,
    );
    let v = verify(&m);
    assert_eq!(recovered(&v), vec![seg(0)]);
    assert!(v.findings.iter().all(|f| f.severity != Severity::Error));
    assert_eq!(v.prediction.producer_state.open_transactions, Some(0));
    assert_eq!(v.prediction.producer_state.producers, Some(1));
    assert_eq!(v.scan.last_stable_offset, Some(4));
    let r = scan_dir(&m.dir);
    assert_eq!(aborted(&r), vec![(137, 0, 3, 4)]);
}

// ----- UnifiedLogTest: markers from a fenced coordinator or producer ----------------------

/// `UnifiedLogTest.testZombieCoordinatorFenced`: producer 1 writes 10 records, ABORT at
/// coordinator epoch 1 (10), 5 records, COMMIT at coordinator epoch 2 (16); a third marker
/// at coordinator epoch 1 is `TransactionCoordinatorFencedException`. On disk that marker
/// (17) is a `coordinator_epoch_regression` (and closes nothing: info); without it nothing
/// is reported. Either way one aborted range `(1, 0, 10)`.
#[test]
fn zombie_coordinator_fenced() {
    let t = txn(1, 0);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(t).records(10));
    p.abort(t, 1);
    p.append(Batch::new(t).records(5));
    p.commit(t, 2);
    let (_d, _m, r) = scan(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(aborted(&r), vec![(1, 0, 10, 11)]);
    p.abort(t, 1);
    let (_d, _m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::CoordinatorEpochRegression, Some(17)),
            (Kind::MarkerWithoutTransaction, Some(17)),
        ]
    );
    let f = of_kind(&r.findings, Kind::CoordinatorEpochRegression)[0];
    assert_eq!(
        (
            &f.evidence["previous_coordinator_epoch"],
            &f.evidence["coordinator_epoch"]
        ),
        (&2.into(), &1.into())
    );
    assert_eq!(aborted(&r), vec![(1, 0, 10, 11)]);
    assert_eq!(lso(&r), Some(18));
}

/// `UnifiedLogTest.testZombieCoordinatorFencedEmptyTransaction`: producer 1's transaction
/// (0–9) committed at coordinator epoch 0 (10, replicated), then two empty ABORTs at
/// coordinator epoch 2 (11, 12) are accepted; a third at coordinator epoch 1 is fenced. On
/// disk: the empty ABORTs are info `marker_without_transaction`; the third (13) is also a
/// `coordinator_epoch_regression` (2 → 1). Nothing is aborted.
#[test]
fn zombie_coordinator_fenced_empty_transaction() {
    let t = txn(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).leader_epoch(1);
    p.append(Batch::new(t).records(10));
    p.commit(t, 0);
    p.abort(t, 2);
    p.abort(t, 2);
    let (_d, _m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::MarkerWithoutTransaction, Some(11)),
            (Kind::MarkerWithoutTransaction, Some(12)),
        ]
    );
    assert!(r.findings.iter().all(|f| f.severity == Severity::Info));
    p.abort(t, 1);
    let (_d, _m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::MarkerWithoutTransaction, Some(11)),
            (Kind::MarkerWithoutTransaction, Some(12)),
            (Kind::CoordinatorEpochRegression, Some(13)),
            (Kind::MarkerWithoutTransaction, Some(13)),
        ]
    );
    assert!(aborted(&r).is_empty());
    assert_eq!(lso(&r), Some(14));
}

/// `UnifiedLogTest.testEndTxnWithFencedProducerEpoch`: an ABORT of producer 1 at epoch 5
/// (no data), then one at epoch 4 is `InvalidProducerEpochException`. On disk the second
/// marker (1) is a `producer_epoch_regression` (5 → 4); without it only the info that the
/// first closes nothing.
#[test]
fn end_txn_with_fenced_producer_epoch() {
    let t = txn(1, 5);
    let mut p = PartitionBuilder::new("ul", 0);
    p.abort(t, 1);
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::MarkerWithoutTransaction, Some(0))]);
    p.abort(t.with_epoch(4), 1);
    let (_d, _m, r) = scan(&p);
    let regressions = of_kind(&r.findings, Kind::ProducerEpochRegression);
    assert_eq!(regressions.len(), 1, "{:#?}", r.findings);
    let f = regressions[0];
    assert_eq!(f.offset, Some(1));
    assert_eq!(
        (&f.evidence["previous_epoch"], &f.evidence["epoch"]),
        (&5.into(), &4.into())
    );
}

// ----- UnifiedLogTest: the last stable offset and the log start ---------------------------

/// Producer 1's transaction 0–4, plain data 5–7, a roll, producer 1 again 8–12 (still
/// open): the log of `UnifiedLogTest.testLastStableOffsetDoesNotExceedLogStartOffset…`.
fn open_across_a_roll() -> PartitionBuilder {
    let t = txn(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(5));
    p.append(plain(3));
    p.roll();
    p.append(Batch::new(t).records(5));
    p
}

/// `UnifiedLogTest.testLastStableOffsetDoesNotExceedLogStartOffsetMidSegment`: the first
/// unstable offset is 0; after DeleteRecords to 5 (inside the first segment) it is bounded
/// by the log start: 5. Near miss: without the log start checkpoint, 0.
#[test]
fn last_stable_offset_does_not_exceed_log_start_offset_mid_segment() {
    let (d, m) = write_ld(LogDirBuilder::new(1), open_across_a_roll());
    assert_eq!(m.segments.len(), 2);
    assert_eq!(lso(&scan_dir(d.path())), Some(0));
    let (d, _m) = write_ld(
        LogDirBuilder::new(1).log_start_offset("ul", 0, 5),
        open_across_a_roll(),
    );
    let r = scan_dir(d.path());
    assert_eq!(r.partitions[0].log_start_offset, Some(5));
    assert_eq!(lso(&r), Some(5));
}

/// `UnifiedLogTest.testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion`:
/// DeleteRecords to 8 and retention delete the first segment; the open transaction, begun
/// at 0, leaves the first unstable offset at the log start: 8. The producer state keeps
/// `currentTxnFirstOffset` 0 (`onLogStartOffsetIncremented` removes no ongoing
/// transaction; the snapshot at the roll, 8, holds it): the open transaction starts at 0,
/// read from that snapshot. Near miss: with the snapshot gone, the state is what a broker
/// rebuilding from the log has (`loadFromSnapshot` finds none): the transaction starts at
/// the first held batch, 8.
#[test]
fn last_stable_offset_does_not_exceed_log_start_offset_after_segment_deletion() {
    for keep_snapshot in [true, false] {
        let (d, m) = write_ld(
            LogDirBuilder::new(1).log_start_offset("ul", 0, 8),
            open_across_a_roll(),
        );
        for ext in ["log", "index", "timeindex", "txnindex"] {
            let f = m.dir.join(format!("{:020}.{ext}", 0));
            if f.exists() {
                std::fs::remove_file(f).unwrap();
            }
        }
        let snap = m.dir.join(format!("{:020}.snapshot", 8));
        assert!(snap.exists());
        if !keep_snapshot {
            std::fs::remove_file(snap).unwrap();
        }
        let r = scan_dir(d.path());
        assert_eq!(r.partitions[0].log_start_offset, Some(8));
        assert_eq!(lso(&r), Some(8));
        let open = of_kind(&r.findings, Kind::OpenTransaction);
        assert_eq!(open.len(), 1, "{:#?}", r.findings);
        let from = open[0]
            .evidence
            .get("from_snapshot")
            .and_then(|v| v.as_str());
        if keep_snapshot {
            assert_eq!(open[0].offset, Some(0));
            assert_eq!(from, Some("00000000000000000008.snapshot"));
        } else {
            assert_eq!(open[0].offset, Some(8));
            assert_eq!(from, None);
        }
    }
}
