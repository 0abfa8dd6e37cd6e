//! The last stable offset and what read_committed consumers see, round 2: Kafka's fetch-side
//! tests (`FetcherTest`, `FetchCollectorTest`: the client skipping aborted batches by the
//! fetch response's aborted transactions, control batches, the position past them, the
//! read_committed lag) and the broker's side (`UnifiedLog.lastStableOffset`,
//! `ProducerStateManager.lastStableOffset(CompletedTxn)`, `TransactionIndex.collectAbortedTxns`)
//! rebuilt as partitions on disk with the testkit, where `kafka_fetch_cases.rs`,
//! `kafka_unifiedlog_cases/` and `kafka_psm_cases/` had only read them.
//!
//! What each test asserts of klogscan: the partition's `last_stable_offset`, the aborted
//! transactions the replay derives (what every `.txnindex` entry, hence every fetch's
//! `abortedTransactions`, must say), `verify`'s `txnindex_mismatch`, and the consumer view
//! (`lag_last_stable`, `group_blocked_by_hanging_transaction`). klogscan's
//! `last_stable_offset` is the first undecided offset (clamped up to the log start); the
//! high-watermark bound of `UnifiedLog.lastStableOffset` is left out on purpose (see
//! docs/testing.md), so these cases keep the checkpointed high watermark at or above it.
//!
//! Divergences are `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::common::cases::{aborted, lso, scan, scan_dir};
use klogscan::cluster::consumers::{self, ConsumerView, ConsumersOptions};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::testkit::files::encode_txn_index;
use klogscan::testkit::group_scenarios::GroupLog;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{
    AbortedTxn, Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use serde_json::json;
use tempfile::TempDir;

// ----- helpers ----------------------------------------------------------------------------

const GROUP: &str = "g";
const HOURS_LATER: i64 = DEFAULT_START_MS + 3 * 3_600_000;

fn txn(pid: i64) -> Producer {
    Producer::transactional(pid, 0)
}

fn plain(n: usize) -> Batch {
    Batch::new(Producer::PLAIN).records(n)
}

fn of_kind(fs: &[Finding], k: Kind) -> Vec<&Finding> {
    fs.iter().filter(|f| f.kind == k).collect()
}

/// Write `p` in a log dir of broker 1 after a clean shutdown; returns the partition's
/// manifest.
fn write_ld(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// `verify` the log dir holding `m`, as the CLI does.
fn verify(m: &Manifest) -> PartitionVerification {
    let a = request::verify(&Request::new([m.dir.parent().unwrap()]), None).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

/// Where `group` lives with 50 `__consumer_offsets` partitions (`Utils.abs(hashCode) % 50`).
fn offsets_partition(group: &str) -> i32 {
    let h = group
        .encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (if h == i32::MIN { 0 } else { h.abs() }) % 50
}

/// Group `g`'s `__consumer_offsets` partition with one commit per `(group, offset)` on
/// orders-0 (value version 1: no leader epoch, so no validation runs).
fn commits(offsets: &[(&str, i64)]) -> GroupLog {
    let mut log = GroupLog::new();
    let recs = offsets
        .iter()
        .map(|&(g, o)| {
            let key = json!({"group": g, "topic": "orders", "partition": 0});
            let value = json!({"offset": o, "metadata": "", "commitTimestamp": DEFAULT_START_MS, "expireTimestamp": -1});
            (1i16, key, Some((1i16, value)))
        })
        .collect();
    log.batch(recs);
    log
}

/// orders-0 (`p`) in a one-broker log dir with its high watermark checkpointed at `hw`, the
/// groups' commits (`log`, every group hashing where `g` does is read from that
/// partition: the view reads whatever commits it holds), scanned at `now`.
fn consumers_of(
    p: PartitionBuilder,
    hw: i64,
    log_start: Option<i64>,
    log: &GroupLog,
    now: Option<i64>,
) -> (Vec<Finding>, ConsumerView) {
    let dir = tempfile::tempdir().unwrap();
    let mut b = LogDirBuilder::new(1)
        .cluster_id("c1")
        .clean_shutdown(true)
        .high_watermark("orders", 0, hw)
        .partition(p);
    if let Some(s) = log_start {
        b = b.log_start_offset("orders", 0, s);
    }
    b.write(dir.path()).unwrap();
    log.write(dir.path(), offsets_partition(GROUP)).unwrap();
    let opts = klogscan::results::ScanOptions::default().with_now_ms(now);
    let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
    let report = klogscan::pipeline::analyse(&inv, &opts);
    let view = consumers::build(&report, &inv, &opts, &ConsumersOptions::default());
    (report.findings, view)
}

/// `(lag_last_stable, lag_log_end)` of group `group`'s row.
fn lags(v: &ConsumerView, group: &str) -> (Option<i64>, Option<i64>) {
    let r = v
        .rows
        .iter()
        .find(|r| r.group_id == group)
        .unwrap_or_else(|| panic!("no row of {group}: {:#?}", v.rows));
    (r.lag_last_stable, r.lag_log_end)
}

/// The consumer findings naming `group`.
fn blocked<'a>(f: &'a [Finding], group: &str) -> Vec<&'a Finding> {
    f.iter()
        .filter(|x| x.kind == Kind::GroupBlockedByHangingTransaction)
        .filter(|x| x.group.as_deref() == Some(group))
        .collect()
}

// ----- FetcherTest: what read_committed consumers read -------------------------------------

/// The log of `FetcherTest.testReadCommittedWithCommittedAndAbortedTransactions`: producer
/// 1 writes 0–1, producer 2 writes 2, producer 1 commits (3), producer 2 writes 4 and aborts
/// (5), producer 1 writes 6, producer 2 writes 7, producer 1 writes 8 and aborts (9),
/// producer 2 commits (10).
fn committed_and_aborted(files: PartitionFileOptions) -> PartitionBuilder {
    let (p1, p2) = (txn(1), txn(2));
    let mut p = PartitionBuilder::new("orders", 0).broker_files(files);
    p.append(Batch::new(p1).values(["commit1-1", "commit1-2"]));
    p.append(Batch::new(p2).values(["abort2-1"]));
    p.commit(p1, 0);
    p.append(Batch::new(p2).values(["abort2-2"]));
    p.abort(p2, 0);
    p.append(Batch::new(p1).values(["abort1-1"]));
    p.append(Batch::new(p2).values(["commit2-1"]));
    p.append(Batch::new(p1).values(["abort1-2"]));
    p.abort(p1, 0);
    p.commit(p2, 0);
    p
}

/// `FetcherTest.testReadCommittedWithCommittedAndAbortedTransactions`: the fetch response
/// carries the aborted transactions `(2, first 2)` and `(1, first 6)` and the consumer
/// returns only 0, 1 and 7. On disk: the replay derives exactly those two aborted ranges,
/// `(2, 2, 5)` (nothing else open at 5: last stable offset 6) and `(1, 6, 9)` (producer 2's
/// transaction open since 7: last stable offset 7,
/// `ProducerStateManager.lastStableOffset(CompletedTxn)`), nothing is open (last stable
/// offset = log end 11), the `.txnindex` the broker wrote agrees, and a read_committed
/// group at 0 has all 11 offsets ahead (`lag_last_stable`), no consumer finding.
#[test]
fn read_committed_with_committed_and_aborted_transactions() {
    let p = committed_and_aborted(PartitionFileOptions::default());
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 11);
    assert_eq!(aborted(&r), vec![(2, 2, 5, 6), (1, 6, 9, 7)]);
    assert_eq!(lso(&r), Some(11));
    let t = &r.partitions[0].transactions;
    assert_eq!((t.committed, t.aborted, t.open), (2, 2, 0));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let (_d, m) = write_ld(
        LogDirBuilder::new(1),
        committed_and_aborted(Default::default()),
    );
    let v = verify(&m);
    assert!(
        of_kind(&v.findings, Kind::TxnindexMismatch).is_empty(),
        "{:#?}",
        v.findings
    );
    let (f, view) = consumers_of(
        committed_and_aborted(Default::default()),
        11,
        None,
        &commits(&[(GROUP, 0)]),
        None,
    );
    assert_eq!(lags(&view, GROUP), (Some(11), Some(11)));
    assert!(blocked(&f, GROUP).is_empty(), "{f:#?}");
}

/// The same log whose `.txnindex` lost producer 1's entry: a fetch from 0 returns only
/// `(2, first 2)`, and the consumer delivers producer 1's aborted records 6 and 8
/// (`CompletedFetch` skips a batch only when its producer is in the aborted set). `verify`
/// names the missing entry at its marker (9), with the last stable offset it should hold
/// (7), and says read_committed consumers deliver those records.
#[test]
fn a_lost_txnindex_entry_delivers_the_aborted_records() {
    let files =
        PartitionFileOptions::default().damage(klogscan::testkit::Damage::DropTxnIndexEntry {
            segment: 0,
            entry: 1,
        });
    let (_d, m) = write_ld(LogDirBuilder::new(1), committed_and_aborted(files));
    let v = verify(&m);
    let bad = of_kind(&v.findings, Kind::TxnindexMismatch);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert_eq!(bad[0].offset, Some(9));
    let e = &bad[0].evidence["entries"][0];
    assert_eq!(
        (
            &e["producer_id"],
            &e["first_offset"],
            &e["last_stable_offset"]
        ),
        (&json!(1), &json!(6), &json!(7))
    );
    assert!(
        bad[0].client_error.as_deref().unwrap().contains("deliver"),
        "{:?}",
        bad[0].client_error
    );
}

/// Producer 1's transaction 0–4 in segment 0, its ABORT (5) opening segment 5, then its
/// next transaction 6–8 and COMMIT (9); segment 0 deleted (retention), so the log starts at
/// the ABORT. `keep_snapshot`: the snapshot taken at the roll (5), holding the transaction
/// begun at 0, stays.
fn abort_marker_with_no_data(keep_snapshot: bool) -> (TempDir, Manifest) {
    let t = txn(1);
    let mut p = PartitionBuilder::new("orders", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(5));
    p.roll();
    p.abort(t, 0);
    p.append(Batch::new(t).values(["6", "7", "8"]));
    p.commit(t, 0);
    let (d, m) = write_ld(LogDirBuilder::new(1), p);
    for ext in ["log", "index", "timeindex", "txnindex", "snapshot"] {
        let f = m.dir.join(format!("{:020}.{ext}", 0));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    let snap = m.dir.join(format!("{:020}.snapshot", 5));
    assert!(snap.exists());
    if !keep_snapshot {
        std::fs::remove_file(snap).unwrap();
    }
    (d, m)
}

/// `FetcherTest.testReadCommittedAbortMarkerWithNoData`: the fetch from the log start (5)
/// begins with producer 1's ABORT, its aborted transaction `(1, first 0)` beginning below
/// the log; the consumer drops the producer at the marker and returns 6, 7 and 8. On disk:
/// the segment at 5's `.txnindex` holds `(1, 0, 5, 6)`; the replay, seeded by the snapshot
/// at 5, closes the transaction begun at 0 there (the same aborted range), nothing is open
/// (last stable offset 10), and `verify` finds the index right. Near miss: without the
/// snapshot the log cannot say where the transaction began: the ABORT at the log start
/// closes nothing the log shows (no finding: the history before it is gone), and the
/// entry, begun below the log at an ABORT of its producer, is not called extra.
#[test]
fn read_committed_abort_marker_with_no_data() {
    let (_d, m) = abort_marker_with_no_data(true);
    let r = scan_dir(&m.dir);
    assert_eq!(r.partitions[0].log_start_offset, Some(5));
    assert_eq!(aborted(&r), vec![(1, 0, 5, 6)]);
    assert_eq!(lso(&r), Some(10));
    assert!(
        r.findings.iter().all(|f| f.severity == Severity::Info),
        "{:#?}",
        r.findings
    );
    let v = verify(&m);
    assert!(
        of_kind(&v.findings, Kind::TxnindexMismatch).is_empty(),
        "{:#?}",
        v.findings
    );
    let (_d, m) = abort_marker_with_no_data(false);
    let r = scan_dir(&m.dir);
    assert!(aborted(&r).is_empty());
    assert_eq!(lso(&r), Some(10));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let v = verify(&m);
    assert!(
        of_kind(&v.findings, Kind::TxnindexMismatch).is_empty(),
        "{:#?}",
        v.findings
    );
}

/// `FetcherTest.testConsumerPositionUpdatedWhenSkippingAbortedTransactions`: producer 1's
/// transaction 0–1 aborted at 2 is all the fetch holds; read_committed returns nothing and
/// the position moves to 3, past the ABORT. On disk: the last stable offset is 3 (the log
/// end), so a group that committed that position has nothing left (`lag_last_stable` 0)
/// and a group still at 0 has 3; no consumer finding either way.
#[test]
fn position_past_a_trailing_abort_marker() {
    let t = txn(1);
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(t).records(2));
    p.abort(t, 0);
    let (_d, _m, r) = scan(&p);
    assert_eq!(aborted(&r), vec![(1, 0, 2, 3)]);
    assert_eq!(lso(&r), Some(3));
    let (f, view) = consumers_of(p, 3, None, &commits(&[(GROUP, 3), ("h", 0)]), None);
    assert_eq!(lags(&view, GROUP), (Some(0), Some(0)));
    assert_eq!(lags(&view, "h"), (Some(3), Some(3)));
    let consumer: Vec<_> = f
        .iter()
        .filter(|x| klogscan::report::consumers::CONSUMER_KINDS.contains(&x.kind))
        .collect();
    assert!(consumer.is_empty(), "{consumer:#?}");
}

/// `FetcherTest.testUpdatePositionOnEmptyBatch`: producer 1's batch 37–54 left without
/// records (the cleaner keeps it for the producer's last sequence) moves the position to
/// 55. On disk: the log end and the last stable offset are 55, and a group at 55 has no lag.
#[test]
fn position_past_an_empty_batch() {
    let mut p = PartitionBuilder::new("orders", 0).start_offset(37);
    p.append(
        Batch::new(Producer::idempotent(1, 0))
            .leader_epoch(7)
            .tweak(|s| {
                s.records.clear();
                s.base_sequence = 1;
                s.overrides.last_offset_delta = Some(17);
            }),
    );
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches[0].record_count, 0);
    assert_eq!(r.partitions[0].log_end_offset, Some(55));
    assert_eq!(lso(&r), Some(55));
    let (_f, view) = consumers_of(p, 55, None, &commits(&[(GROUP, 55), ("h", 37)]), None);
    assert_eq!(lags(&view, GROUP), (Some(0), Some(0)));
    assert_eq!(lags(&view, "h"), (Some(18), Some(18)));
}

// ----- TransactionIndex.collectAbortedTxns: the lastStableOffset ends the search ----------

/// Segment 0: producer 1's transaction 0–1 aborted at 2 (entry `(1, 0, 2, lso 3)`: nothing
/// else open), producer 2's transaction begun at 3–4; segment 5: producer 2 writes 5 and
/// aborts at 6 (entry `(2, 3, 6, lso 7)` in segment 5's index). The `.txnindex` of segment 0
/// is replaced by `seg0` when given.
fn abort_across_segments(seg0: Option<AbortedTxn>) -> (TempDir, Manifest) {
    let (p1, p2) = (txn(1), txn(2));
    let mut p = PartitionBuilder::new("orders", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(p1).records(2));
    p.abort(p1, 0);
    p.append(Batch::new(p2).records(2));
    p.roll();
    p.append(Batch::new(p2).records(1));
    p.abort(p2, 0);
    let (d, m) = write_ld(LogDirBuilder::new(1), p);
    assert_eq!(
        m.segments.iter().map(|s| s.0).collect::<Vec<_>>(),
        vec![0, 5]
    );
    if let Some(e) = seg0 {
        let f = m.dir.join(format!("{:020}.txnindex", 0));
        std::fs::write(f, encode_txn_index(&[e])).unwrap();
    }
    (d, m)
}

fn entry(producer_id: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
    AbortedTxn {
        producer_id,
        first_offset: first,
        last_offset: last,
        last_stable_offset: lso,
    }
}

/// `TransactionIndex.collectAbortedTxns` (through `LocalLog.collectAbortedTransactions`):
/// a read_committed fetch of 3–4 (upper bound 5) reads segment 0's index, and goes on to
/// segment 5's — which holds producer 2's abort `(2, first 3)` — only because the entry
/// there has a lastStableOffset (3) below the upper bound. The log as written: both
/// entries as the replay derives them, `verify` clean. An entry whose lastStableOffset was
/// raised to 5 ends the search in segment 0: the fetch misses `(2, first 3)` and the
/// consumer delivers producer 2's aborted records 3–4; `verify` calls the entry wrong
/// (expected last stable offset 3).
#[test]
fn a_raised_last_stable_offset_ends_the_aborted_search_early() {
    let (_d, m) = abort_across_segments(None);
    let r = scan_dir(&m.dir);
    assert_eq!(aborted(&r), vec![(1, 0, 2, 3), (2, 3, 6, 7)]);
    assert_eq!(lso(&r), Some(7));
    let v = verify(&m);
    assert!(
        of_kind(&v.findings, Kind::TxnindexMismatch).is_empty(),
        "{:#?}",
        v.findings
    );
    let (_d, m) = abort_across_segments(Some(entry(1, 0, 2, 5)));
    let v = verify(&m);
    let bad = of_kind(&v.findings, Kind::TxnindexMismatch);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert_eq!(bad[0].offset, Some(2));
    let e = &bad[0].evidence["entries"][0];
    assert_eq!(
        (&e["last_stable_offset"], &e["expected_last_stable_offset"]),
        (&json!(5), &json!(3))
    );
    assert_eq!(bad[0].severity, Severity::Error);
}

/// The same entry with its lastStableOffset lowered (3 → 1): `collectAbortedTxns` selects
/// entries by `lastOffset >= fetchOffset && firstOffset < upperBound` alone, and a lower
/// lastStableOffset only lets the search go on to later segments (whose entries the
/// condition filters the same way). Every fetch returns the same aborted transactions:
/// no read_committed consumer skips or delivers anything it would not have. klogscan
/// reports the entry as wrong (it is not what the broker writes), and says consumers skip
/// the wrong range or deliver aborted records.
#[test]
fn a_lowered_last_stable_offset_changes_no_fetch() {
    let (_d, m) = abort_across_segments(Some(entry(1, 0, 2, 1)));
    let v = verify(&m);
    let bad = of_kind(&v.findings, Kind::TxnindexMismatch);
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    let text = bad[0].client_error.as_deref().unwrap_or_default();
    assert!(
        !text.contains("skip") && !text.contains("deliver"),
        "the entry changes no fetch's aborted transactions, yet: {text}"
    );
    assert_ne!(bad[0].severity, Severity::Error);
}

// ----- ProducerStateManager.firstUnstableOffset and read_committed groups ---------------

/// orders-0: plain 0–2, producer 7's transaction 3–5, producer 8's 6–8, plain 9–10, both
/// transactions left open (hanging hours later); `abort7`: producer 7's ABORT follows (11).
fn two_hanging(abort7: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(plain(3));
    p.append(Batch::new(txn(7)).records(3));
    p.append(Batch::new(txn(8)).records(3));
    p.append(plain(2));
    if abort7 {
        p.abort(txn(7), 0);
    }
    p
}

/// `ProducerStateManagerTest.testFirstUnstableOffset` / `UnifiedLog.lastStableOffset` with
/// two transactions left open: the first unstable offset is the earlier one's first offset
/// (3). A read_committed group at 3 is stalled there by producer 7 (error); one at 1 will
/// stall at 3 (info); one at 5 read past the last stable offset, so it does not read
/// committed: nothing.
#[test]
fn the_earliest_of_two_hanging_transactions_holds_the_groups() {
    let p = two_hanging(false);
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(3));
    let log = commits(&[(GROUP, 3), ("behind", 1), ("past", 5)]);
    let (f, view) = consumers_of(p, 11, None, &log, Some(HOURS_LATER));
    assert_eq!(of_kind(&f, Kind::HangingTransaction).len(), 2, "{f:#?}");
    let b = blocked(&f, GROUP);
    assert_eq!(b.len(), 1, "{f:#?}");
    assert_eq!(
        (b[0].severity, &b[0].evidence["stall_offset"]),
        (Severity::Error, &json!(3))
    );
    assert_eq!(b[0].evidence["transaction"]["producer_id"], 7);
    let b = blocked(&f, "behind");
    assert_eq!(b.len(), 1, "{f:#?}");
    assert_eq!(
        (b[0].severity, &b[0].evidence["stall_offset"]),
        (Severity::Info, &json!(3))
    );
    assert!(blocked(&f, "past").is_empty(), "{f:#?}");
    assert_eq!(lags(&view, GROUP), (Some(0), Some(8)));
}

/// `ProducerStateManagerTest.testLastStableOffsetCompletedTxn` / `testFirstUnstableOffset`
/// once the earlier transaction ends: producer 7's ABORT (11) completes it while producer
/// 8's is still open, so its aborted range records lastStableOffset 6 and the first
/// unstable offset moves to 6. The group at 6 is stalled by producer 8 (error); the groups
/// at 3 and 5 will stall at 6 (info, producer 8).
#[test]
fn the_later_hanging_transaction_holds_the_groups_once_the_first_is_aborted() {
    let p = two_hanging(true);
    let (_d, _m, r) = scan(&p);
    assert_eq!(aborted(&r), vec![(7, 3, 11, 6)]);
    assert_eq!(lso(&r), Some(6));
    let log = commits(&[(GROUP, 6), ("at3", 3), ("at5", 5)]);
    let (f, view) = consumers_of(p, 12, None, &log, Some(HOURS_LATER));
    let hanging = of_kind(&f, Kind::HangingTransaction);
    assert_eq!(hanging.len(), 1, "{f:#?}");
    assert_eq!(hanging[0].offset, Some(6));
    let b = blocked(&f, GROUP);
    assert_eq!(b.len(), 1, "{f:#?}");
    assert_eq!(b[0].severity, Severity::Error);
    assert_eq!(b[0].evidence["transaction"]["producer_id"], 8);
    for g in ["at3", "at5"] {
        let b = blocked(&f, g);
        assert_eq!(b.len(), 1, "{g}: {f:#?}");
        assert_eq!(
            (b[0].severity, &b[0].evidence["stall_offset"]),
            (Severity::Info, &json!(6))
        );
    }
    assert_eq!(lags(&view, "at3"), (Some(3), Some(9)));
}

/// `FetcherTest.testReadCommittedLagMetric` (`SubscriptionState.partitionLag`: a
/// read_committed consumer's lag is the last stable offset minus its position): plain
/// 0–2, producer 7's transaction 3–5 still within its timeout, plain 6–9. A group at 1 has
/// 2 offsets it can read (`lag_last_stable`), 9 up to the log end, and nothing holds it (the
/// transaction is not hanging). Near miss: the same log read hours later, the transaction
/// hanging: the group will stall at 3 (info).
#[test]
fn read_committed_lag_is_measured_to_the_first_unstable_offset() {
    let build = || {
        let mut p = PartitionBuilder::new("orders", 0);
        p.append(plain(3));
        p.append(Batch::new(txn(7)).records(3));
        p.append(plain(4));
        p
    };
    let (f, view) = consumers_of(build(), 10, None, &commits(&[(GROUP, 1)]), None);
    assert!(of_kind(&f, Kind::HangingTransaction).is_empty(), "{f:#?}");
    assert!(blocked(&f, GROUP).is_empty(), "{f:#?}");
    assert_eq!(lags(&view, GROUP), (Some(2), Some(9)));
    let (f, view) = consumers_of(
        build(),
        10,
        None,
        &commits(&[(GROUP, 1)]),
        Some(HOURS_LATER),
    );
    let b = blocked(&f, GROUP);
    assert_eq!(b.len(), 1, "{f:#?}");
    assert_eq!(
        (b[0].severity, &b[0].evidence["stall_offset"]),
        (Severity::Info, &json!(3))
    );
    assert_eq!(lags(&view, GROUP), (Some(2), Some(9)));
}
