//! What a Java consumer does when it starts from a committed offset, held against klogscan's
//! consumer findings (`cluster::consumers`). Each test writes, with the testkit, the log a
//! Kafka unit test reasons about (a data partition with its batches' leader epochs and its
//! `leader-epoch-checkpoint`, a group's `__consumer_offsets` commit) and asserts what
//! klogscan should say of it.
//!
//! The Kafka side, in short (client: `ConsumerUtils.refreshCommittedOffsets` →
//! `SubscriptionState.seekUnvalidated` / `maybeCompleteValidation`; broker:
//! `Partition.lastOffsetForLeaderEpoch` → `LeaderEpochFileCache.endOffsetFor`,
//! `UnifiedLog.read`, `ReplicaManager`'s remote read):
//! * a commit without a leader epoch is not validated: the consumer fetches at it;
//! * with one, validation passes when the epoch's end offset is at or above the commit, and
//!   detects truncation below it (seek back to the end with a reset policy,
//!   `LogTruncationException` with the end as divergent offset without one); an undefined
//!   answer resets by the policy;
//! * a fetch is out of range only above the log end or below the log start; between the
//!   high watermark and the log end it returns nothing; on a tiered partition a fetch between
//!   the log start and the local log start is served from remote storage.
//!
//! Divergences are `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::report::consumers::CONSUMER_KINDS;
use klogscan::testkit::group_scenarios::GroupLog;
use klogscan::testkit::remote_log::TieredLog;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use serde_json::{Value, json};
use std::path::Path;

pub(crate) const GROUP: &str = "g";
const HOURS_LATER: i64 = DEFAULT_START_MS + 3 * 3_600_000;

/// Where `group` lives with 50 `__consumer_offsets` partitions (`Utils.abs(hashCode) % 50`).
fn offsets_partition(group: &str) -> i32 {
    let h = group
        .encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (if h == i32::MIN { 0 } else { h.abs() }) % 50
}

/// An OffsetCommit value: version 3 with `leaderEpoch`, version 1 without one.
fn commit(
    group: &str,
    partition: i32,
    offset: i64,
    epoch: Option<i32>,
) -> (i16, Value, Option<(i16, Value)>) {
    let key = json!({"group": group, "topic": "orders", "partition": partition});
    let value = match epoch {
        Some(e) => (
            3,
            json!({"offset": offset, "leaderEpoch": e, "metadata": "", "commitTimestamp": DEFAULT_START_MS}),
        ),
        None => (
            1,
            json!({"offset": offset, "metadata": "", "commitTimestamp": DEFAULT_START_MS, "expireTimestamp": -1}),
        ),
    };
    (1, key, Some(value))
}

/// Group "g"'s offsets partition with one commit on orders-0.
pub(crate) fn one_commit(offset: i64, epoch: Option<i32>) -> GroupLog {
    let mut log = GroupLog::new();
    log.batch(vec![commit(GROUP, 0, offset, epoch)]);
    log
}

/// A one-broker log dir: orders-0 (`p`), its `leader-epoch-checkpoint` replaced by
/// `epochs` when given, the log start and high watermark checkpointed when given, and
/// `log` as the group's offsets partition. Returns every finding of the scan at `now`.
struct Case {
    p: PartitionBuilder,
    epochs: Option<Vec<(i32, i64)>>,
    log_start: Option<i64>,
    hw: Option<i64>,
    now: Option<i64>,
}

impl Case {
    fn new(p: PartitionBuilder) -> Case {
        Case {
            p,
            epochs: None,
            log_start: None,
            hw: None,
            now: None,
        }
    }
    fn epochs(mut self, e: &[(i32, i64)]) -> Case {
        self.epochs = Some(e.to_vec());
        self
    }
    fn log_start(mut self, o: i64) -> Case {
        self.log_start = Some(o);
        self
    }
    fn hw(mut self, o: i64) -> Case {
        self.hw = Some(o);
        self
    }
    fn now(mut self, t: i64) -> Case {
        self.now = Some(t);
        self
    }
    fn run(self, log: &GroupLog) -> Vec<Finding> {
        let dir = tempfile::tempdir().unwrap();
        let mut b = LogDirBuilder::new(1)
            .cluster_id("c1")
            .clean_shutdown(true)
            .partition(self.p);
        if let Some(s) = self.log_start {
            b = b.log_start_offset("orders", 0, s);
        }
        if let Some(h) = self.hw {
            b = b.high_watermark("orders", 0, h);
        }
        b.write(dir.path()).unwrap();
        log.write(dir.path(), offsets_partition(GROUP)).unwrap();
        if let Some(e) = &self.epochs {
            write_epochs(&dir.path().join("orders-0"), e);
        }
        scan(dir.path(), self.now)
    }
}

/// Replace the `leader-epoch-checkpoint` of `partition_dir` by `entries`, in their order.
pub(crate) fn write_epochs(partition_dir: &Path, entries: &[(i32, i64)]) {
    let mut s = format!("0\n{}\n", entries.len());
    for (e, o) in entries {
        s.push_str(&format!("{e} {o}\n"));
    }
    std::fs::write(partition_dir.join("leader-epoch-checkpoint"), s).unwrap();
}

fn scan(root: &Path, now: Option<i64>) -> Vec<Finding> {
    let opts = klogscan::results::ScanOptions::default().with_now_ms(now);
    let inv = klogscan::discover::layout::discover(&[root.to_path_buf()]);
    klogscan::pipeline::analyse(&inv, &opts).findings
}

pub(crate) fn consumer(f: &[Finding]) -> Vec<&Finding> {
    f.iter()
        .filter(|x| CONSUMER_KINDS.contains(&x.kind))
        .collect()
}

fn kinds(f: &[Finding]) -> Vec<Kind> {
    consumer(f).iter().map(|x| x.kind).collect()
}

/// orders-0: offsets 0–4 at leader epoch 0, 5–9 at epoch 1 (log end 10); its checkpoint
/// `(0,0) (1,5)`.
fn two_epochs() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(1);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p
}

/// orders-0: offsets 0–9 at epoch 0 (log end 10).
fn ten_at_epoch_zero() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    p.append(Batch::new(Producer::PLAIN).records(10));
    p
}

// ---------------------------------------------------------------------------------------
// Validation boundaries (SubscriptionStateTest, LeaderEpochFileCache.endOffsetFor)
// ---------------------------------------------------------------------------------------

/// `SubscriptionStateTest.testMaybeCompleteValidation` at its boundary: the commit's epoch
/// is the latest, whose end is the log end (`LeaderEpochFileCache.endOffsetFor`), and the
/// commit sits exactly at the log end — `endOffset < position` is false, so
/// `maybeCompleteValidation` completes the validation and the fetch at the log end returns
/// nothing (`LocalLog.read`: start == max offset). No finding.
#[test]
fn commit_at_log_end_with_latest_epoch_passes_validation() {
    let f = Case::new(two_epochs()).run(&one_commit(10, Some(1)));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
}

/// `SubscriptionStateTest.testTruncationDetectionWithResetPolicy` one offset above the log
/// end, at the latest epoch: the leader answers the log end (10) for its latest epoch, below
/// the commit 11: truncation detected, the consumer moves back to 10 (or
/// `LogTruncationException` with divergent offset 10).
#[test]
fn commit_one_past_log_end_at_latest_epoch_moves_back_to_log_end() {
    let f = Case::new(two_epochs()).run(&one_commit(11, Some(1)));
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetBeyondLogEnd]);
    let b = consumer(&f)[0];
    assert_eq!(b.evidence["beyond_by"], 1);
    let end = &b.evidence["validation"]["epoch_end"];
    assert_eq!(
        (
            end["case"].as_str(),
            end["epoch"].as_i64(),
            end["end_offset"].as_i64()
        ),
        (Some("latest"), Some(1), Some(10))
    );
}

/// `SubscriptionStateTest.testTruncationDetectionWithResetPolicy` with a known, non-latest
/// epoch above the log end: epoch 0 ends where epoch 1 starts (5), so a commit of epoch 0 at
/// 12 is moved back to 5 — not to the log end.
#[test]
fn commit_past_log_end_at_an_older_epoch_moves_back_to_that_epochs_end() {
    let f = Case::new(two_epochs()).run(&one_commit(12, Some(0)));
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetBeyondLogEnd]);
    let end = &consumer(&f)[0].evidence["validation"]["epoch_end"];
    assert_eq!(
        (
            end["case"].as_str(),
            end["epoch"].as_i64(),
            end["end_offset"].as_i64()
        ),
        (Some("known"), Some(0), Some(5))
    );
}

/// `SubscriptionStateTest.testMaybeCompleteValidation` / `testTruncationDetectionWithResetPolicy`
/// at the boundary of a known epoch: epoch 0 ends at 5. A commit of epoch 0 at 5 passes (end
/// == position); at 6 truncation is detected with one record re-read from 5.
#[test]
fn commit_at_an_epochs_end_passes_and_one_past_is_truncation() {
    let f = Case::new(two_epochs()).run(&one_commit(5, Some(0)));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));

    let f = Case::new(two_epochs()).run(&one_commit(6, Some(0)));
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetPastEpochEnd]);
    let p = consumer(&f)[0];
    assert_eq!(p.evidence["epoch_end"]["end_offset"], 5);
    assert_eq!(p.evidence["truncated_read"], 1);
    assert_eq!(p.severity, Severity::Warning);
}

/// A commit of epoch 1 below the offset epoch 1 starts at (3 < 5): validation compares the
/// end offset only (`maybeCompleteValidation`: end 10 ≥ 3), so it passes. No finding.
#[test]
fn commit_below_its_epochs_start_passes_validation() {
    let f = Case::new(two_epochs()).run(&one_commit(3, Some(1)));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
}

/// `SubscriptionStateTest.testSeekUnvalidatedWithNoOffsetEpoch`: a commit without a leader
/// epoch is not validated — the consumer fetches at it. The log was truncated at 5 and
/// rewritten at epoch 1; the group's commit 8 (without epoch) lies inside the range it read
/// before the truncation, but the fetch at 8 is in range and succeeds: the consumer does
/// nothing special, and klogscan reports nothing (the same commit with epoch 0 is a detected
/// truncation: the twin).
#[test]
fn commit_without_epoch_inside_a_truncated_range_is_not_validated() {
    let f = Case::new(two_epochs()).run(&one_commit(8, None));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
    let f = Case::new(two_epochs()).run(&one_commit(8, Some(0)));
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetPastEpochEnd]);
}

/// A commit without epoch one above the log end: no validation, the fetch is out of range
/// (`LocalLog.read`: start > log end) and `auto.offset.reset` decides
/// (`FetchCollector.handleInitializeErrors`, `FetcherTest.testFetchOffsetOutOfRange`).
#[test]
fn commit_without_epoch_one_past_log_end_is_out_of_range() {
    let f = Case::new(ten_at_epoch_zero()).run(&one_commit(11, None));
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetBeyondLogEnd]);
    assert_eq!(
        consumer(&f)[0].evidence["validation"]["path"],
        "out_of_range"
    );
    let f = Case::new(ten_at_epoch_zero()).run(&one_commit(10, None));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
}

/// A committed offset between the high watermark and the log end: a consumer's fetch is
/// bounded by the high watermark (`UnifiedLog.read` with `FetchIsolation.HIGH_WATERMARK`,
/// then `LocalLog.read` returns an empty result for a start above it, not an error), and the
/// latest epoch ends at the log end, above the commit. Nothing special: no finding.
#[test]
fn commit_between_high_watermark_and_log_end_is_silent() {
    for c in [6, 8, 10] {
        let f = Case::new(ten_at_epoch_zero())
            .hw(6)
            .run(&one_commit(c, Some(0)));
        assert!(consumer(&f).is_empty(), "commit {c}: {:#?}", consumer(&f));
    }
}

/// The log start boundary (`UnifiedLog.read` → `checkLogStartOffset`): a fetch at the log
/// start is in range, one below it is OFFSET_OUT_OF_RANGE. Log start 5 (DeleteRecords):
/// commit 5 silent; commit 4 `committed_offset_below_log_start`, one record lost. The epoch
/// (0, the one the lineage starts with after `truncateFromStart`) passes validation first
/// (end 10 ≥ 4), so the fetch decides.
#[test]
fn commit_at_log_start_is_in_range_one_below_is_not() {
    let f = Case::new(ten_at_epoch_zero())
        .log_start(5)
        .epochs(&[(0, 5)])
        .run(&one_commit(5, Some(0)));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));

    let f = Case::new(ten_at_epoch_zero())
        .log_start(5)
        .epochs(&[(0, 5)])
        .run(&one_commit(4, Some(0)));
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetBelowLogStart]);
    let b = consumer(&f)[0];
    assert_eq!(b.evidence["lost"], 1);
    assert!(
        b.client_error
            .as_deref()
            .is_some_and(|e| e.contains("OffsetOutOfRangeException")),
        "{:?}",
        b.client_error
    );
}

/// `SubscriptionStateTest.testTruncationDetectionUnknownDivergentOffsetWithResetPolicy`:
/// an epoch above every entry gets UNDEFINED from `endOffsetFor`
/// (`LeaderEpochFileCacheTest.shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked`), and the
/// consumer resets by its policy (`LogTruncationException` without a divergent offset when
/// there is none). Lineage `(0,0) (1,5)`, commit of epoch 4 at 7 (in range, not carried by any
/// batch): `committed_leader_epoch_unknown`, case above_latest. Without the metadata log the
/// copy may as well be a follower behind the leader, whose cache holds epoch 4 (a
/// partition's epochs only grow): two readings, info (the metadata log's word makes it a
/// warning: `consumers::committed_leader_epochs_outside_the_lineage`'s twin with a metadata
/// log, and `kafka_valid_data_quiet_cases`).
#[test]
fn commit_with_an_epoch_above_every_entry_is_reset_by_policy() {
    let f = Case::new(two_epochs()).run(&one_commit(7, Some(4)));
    assert_eq!(kinds(&f), vec![Kind::CommittedLeaderEpochUnknown]);
    let u = consumer(&f)[0];
    assert_eq!(u.evidence["case"], "above_latest");
    assert_eq!(u.severity, Severity::Info);
    assert!(
        u.message.contains("behind the partition's leader"),
        "{}",
        u.message
    );
}

// ---------------------------------------------------------------------------------------
// An epoch that starts at the log end (a leader elected with nothing written since)
// ---------------------------------------------------------------------------------------

/// `PartitionTest.testMakeLeaderUpdatesEpochCache` + `testFetchLatestOffsetIncludesLeaderEpoch`:
/// a new leader assigns its epoch at the log end (`Partition.makeLeader` →
/// `maybeAssignEpochStartOffset`) even when it writes nothing, answers OffsetsForLeaderEpoch
/// for it with the log end, and answers ListOffsets(LATEST) with that epoch — so a consumer
/// that reset to latest (or sought to the end) commits `(log end, that epoch)`.
///
/// orders-0 holds 0–9 at epoch 0; epoch 1 began at 10 with no record: checkpoint
/// `(0,0) (1,10)`, commit `(10, epoch 1)`. Kafka: a running leader answers (1, 10); one that
/// restarted drops the entry at its load (`truncateFromEndAsyncFlush(10)`) but, leader
/// again, assigns a newer epoch at 10 and answers (0, 10) — validation passes either way
/// (10 ≥ 10). (Was a divergence: klogscan dropped the entry and called epoch 1 above every
/// entry, a warning saying the consumer resets; the lineage now keeps it as `at_log_end`.)
#[test]
fn empty_epoch_at_log_end_passes_validation() {
    let f = Case::new(ten_at_epoch_zero())
        .epochs(&[(0, 0), (1, 10)])
        .run(&one_commit(10, Some(1)));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
}

/// The same lineage with the commit above the log end (records 10–11 written at epoch 1,
/// read by the group, then lost with the page cache while the checkpoint, written at
/// `makeLeader`, survived). Kafka's answer for epoch 1 is the log end 10 (running leader:
/// latest epoch; restarted one: the floor epoch 0 ending at the newer epoch's start 10):
/// truncation detected with divergent offset 10 — `SubscriptionStateTest.
/// testTruncationDetectionWithResetPolicy`: seek back to 10 under either policy. (Was a
/// divergence: klogscan called the answer undefined, reset by the policy.)
#[test]
fn commit_past_log_end_at_an_epoch_starting_there_moves_back_to_it() {
    let f = Case::new(ten_at_epoch_zero())
        .epochs(&[(0, 0), (1, 10)])
        .run(&one_commit(12, Some(1)));
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetBeyondLogEnd]);
    let end = &consumer(&f)[0].evidence["validation"]["epoch_end"];
    assert_eq!(end["end_offset"].as_i64(), Some(10), "{end}");
    assert_ne!(end["case"].as_str(), Some("above_latest"), "{end}");
}

// ---------------------------------------------------------------------------------------
// A checkpoint missing an epoch the batches carry
// ---------------------------------------------------------------------------------------

/// `LeaderEpochFileCacheTest.shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested`
/// and `SubscriptionStateTest.testTruncationDetectionWithoutResetPolicy`: orders-0 holds 0–4
/// at epoch 0, 5–9 at epoch 1, 10–14 at epoch 2, and its checkpoint misses epoch 1
/// (`(0,0) (2,10)`). The group committed `(12, epoch 1)`. The leader answers from its cache:
/// floor epoch 0, end 10 (the next entry's start); and had the cache kept `(1,5)`, the answer
/// would be epoch 1, end 10 — the end of an epoch in a gap is the next entry's start whatever
/// the gap holds. 10 < 12 either way: truncation detected. (Was a divergence: klogscan stayed silent;
/// `past_epoch_end` now judges an epoch the batches carry in a gap of the checkpoint.)
#[test]
fn in_gap_epoch_carried_by_batches_still_detects_truncation() {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(1);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(2);
    p.append(Batch::new(Producer::PLAIN).records(5));
    let f = Case::new(p)
        .epochs(&[(0, 0), (2, 10)])
        .run(&one_commit(12, Some(1)));
    // Either kind would do (past_epoch_end for epoch 1's own end, leader_epoch_unknown for
    // the in-gap answer); the end offset is 10 in both.
    let c = consumer(&f);
    assert_eq!(c.len(), 1, "{c:#?}");
    assert!(
        matches!(
            c[0].kind,
            Kind::CommittedOffsetPastEpochEnd | Kind::CommittedLeaderEpochUnknown
        ),
        "{c:#?}"
    );
    assert_eq!(c[0].evidence["epoch_end"]["end_offset"], 10);
}

/// The twin: the same gap, commit `(9, epoch 1)` at or below the end 10 passes validation
/// whichever answer the leader gives — silent.
#[test]
fn in_gap_epoch_carried_by_batches_below_the_end_is_silent() {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(1);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(2);
    p.append(Batch::new(Producer::PLAIN).records(5));
    let f = Case::new(p)
        .epochs(&[(0, 0), (2, 10)])
        .run(&one_commit(9, Some(1)));
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
}

// ---------------------------------------------------------------------------------------
// Read_committed stalls at the last stable offset
// ---------------------------------------------------------------------------------------

/// orders-0: 3 plain records, then producer 7's transaction at 3–5 left open (hanging hours
/// later), then 4 plain records: LSO 3, log end 10. `UnifiedLog.read` with
/// `FetchIsolation.TXN_COMMITTED` returns nothing at or above the LSO.
fn hanging_at_three() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.append(Batch::new(Producer::transactional(7, 0)).records(3));
    p.append(Batch::new(Producer::PLAIN).records(4));
    p
}

/// The stall's boundaries: commit == LSO → stalled now (error); one below → it will stall
/// (info); one above → the group read past the LSO, so it is not read_committed: silent.
#[test]
fn hanging_transaction_stall_boundaries() {
    for (c, want) in [
        (3, Some(Severity::Error)),
        (2, Some(Severity::Info)),
        (4, None),
    ] {
        let f = Case::new(hanging_at_three())
            .now(HOURS_LATER)
            .run(&one_commit(c, None));
        let b: Vec<_> = f
            .iter()
            .filter(|x| x.kind == Kind::GroupBlockedByHangingTransaction)
            .collect();
        assert_eq!(b.first().map(|x| x.severity), want, "commit {c}: {b:#?}");
        if want.is_some() {
            assert_eq!(b[0].evidence["stall_offset"], 3);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tiered partitions: the log start is the remote one
// ---------------------------------------------------------------------------------------

/// The testkit's tiered orders-0 (`brokers::tiered_history`: 0–39 epoch 0, 40–69 epoch 1,
/// 70–99 epoch 2; segments of 20), segments 0–3 copied, segment 0 deleted by retention,
/// local log from segment 3: log start 20, local log start 60. Its `__consumer_offsets`
/// partition (`log`) in the same broker log dir.
fn tiered(log: &GroupLog) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut t = TieredLog::new(klogscan::testkit::brokers::tiered_history());
    let r0 = t.copy(0);
    t.copy(1);
    t.delete(r0);
    t.copy(2);
    t.copy(3);
    t.local_from(3);
    let m = t.write(dir.path()).unwrap();
    assert_eq!((m.log_start_offset, m.local_log_start_offset), (20, 60));
    log.write(&m.log_dir, offsets_partition(GROUP)).unwrap();
    (dir, m.remote_root)
}

/// `ReplicaManager`'s remote read (the tiered-storage integration test
/// `OffloadAndConsumeFromLeaderTest`: a consumer reads offloaded segments from the leader): on a tiered
/// partition a fetch at `logStartOffset ≤ offset < localLogStartOffset` is served from
/// remote storage, not OFFSET_OUT_OF_RANGE; and the leader's epoch cache is cut at the log
/// start (`LogLoader`: `truncateFromStartAsyncFlush(logStartOffsetCheckpoint)`, the remote
/// log start for a tiered log), so epoch 0 ends at 40 ≥ 30: validation passes. A group
/// committed `(30, epoch 0)` — in the remote range — reads on normally. (Was a divergence:
/// without `--remote-storage` klogscan took the local log start, 60, and called the commit
/// below the log start; the consumer view now takes a tiered log's checkpointed start.) The
/// negative twin: a commit at 10, below the remote log start 20, is below the log start.
#[test]
fn tiered_commit_in_the_remote_range_is_fetchable() {
    let (d, _) = tiered(&one_commit(30, Some(0)));
    let f = scan(d.path(), None);
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
    let (d, _) = tiered(&one_commit(10, Some(0)));
    let f = scan(d.path(), None);
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetBelowLogStart]);
}

/// The same partition with `--remote-storage` (the scan replays the remote segments and
/// takes the checkpointed log start, 20): the commit at 30 is in range — silent.
#[test]
fn tiered_commit_in_the_remote_range_with_remote_storage_is_silent() {
    let (d, remote) = tiered(&one_commit(30, Some(0)));
    let opts = klogscan::results::ScanOptions::default().with_remote_storage(Some(remote));
    let inv = klogscan::discover::layout::discover(&[d.path().to_path_buf()]);
    let f = klogscan::pipeline::analyse(&inv, &opts).findings;
    assert!(consumer(&f).is_empty(), "{:#?}", consumer(&f));
}

/// `LeaderEpochFileCacheTest.shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch`
/// on a tiered leader's cache, which keeps every epoch from the (remote) log start
/// `(0,20) (1,40) (2,70)`: a commit `(65, epoch 0)` — the group read epoch 0 up to 64, but
/// epoch 0 ended at 40 — is answered epoch 0, end 40: a detected truncation moving the
/// consumer back to 40 (`committed_offset_past_epoch_end`, end 40). (Was a divergence:
/// klogscan cut the lineage at the local log start 60 and gave the end 60.)
#[test]
fn tiered_epoch_below_the_local_log_start_ends_where_the_full_lineage_says() {
    let (d, _) = tiered(&one_commit(65, Some(0)));
    let f = scan(d.path(), None);
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetPastEpochEnd]);
    assert_eq!(consumer(&f)[0].evidence["epoch_end"]["end_offset"], 40);
}

/// The same commit with `--remote-storage`: the scan's log start is the checkpointed 20, the
/// lineage is cut there as the broker cuts it, and epoch 0 ends at 40 — the truncation
/// Kafka detects (`committed_offset_past_epoch_end`, end 40).
#[test]
fn tiered_epoch_below_the_local_log_start_with_remote_storage() {
    let (d, remote) = tiered(&one_commit(65, Some(0)));
    let opts = klogscan::results::ScanOptions::default().with_remote_storage(Some(remote));
    let inv = klogscan::discover::layout::discover(&[d.path().to_path_buf()]);
    let f = klogscan::pipeline::analyse(&inv, &opts).findings;
    assert_eq!(kinds(&f), vec![Kind::CommittedOffsetPastEpochEnd]);
    assert_eq!(consumer(&f)[0].evidence["epoch_end"]["end_offset"], 40);
}
