//! Review of rule 31's `epoch_step` (`cluster::coordinator::history::epoch_step_ok`, called
//! from `HistoryChecker::value_anomalies`, `e8bd996`): a quiet audit. Each test writes, as
//! `__transaction_state` records, a history Kafka's transaction coordinator really appends
//! (Kafka of 2025-10, /work/.mirror/wtmxxx+kafka-se-homework:
//! core/src/main/scala/kafka/coordinator/transaction/TransactionCoordinator.scala,
//! transaction-coordinator/src/main/java/org/apache/kafka/coordinator/transaction/
//! TransactionMetadata.java; apache/kafka trunk of 2024-10 where it says so) and asserts
//! every anomaly klogscan reports for it — none where the history is healthy, so that an
//! `epoch_step` cannot hide behind another sub-id — then a twin whose step no transition
//! takes, which must be an `epoch_step`.
//!
//! A "failed" value below is one whose append failed after reaching the leader's log
//! (NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT): `TransactionStateManager.
//! appendTransactionToLog` answers COORDINATOR_NOT_AVAILABLE and resets the pending state,
//! so the coordinator's in-memory state is the one before it while the log holds it — the
//! premise of klogscan's own `retried_append` and `failed_prepare_aborted`.
//!
//! A test marked `//! another, and fails when run with `--ignored`.
#![cfg(feature = "testkit")]

use klogscan::finding::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::testkit::txnlog::{TxnValue, key, state::*};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};

/// The reference time (`--now`); every value is updated a minute before it.
const NOW: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;
/// The producer id of every history (a rotation names its new one).
const P: i64 = 100;
/// The last epoch a client may use (`Short.MAX_VALUE - 1`, exhausted).
const LAST: i16 = i16::MAX - 1;

// ----- helpers ----------------------------------------------------------------------------

/// One record of `__transaction_state-7`.
enum R {
    /// A value of this transactional id.
    V(&'static str, TxnValue),
    /// This id's tombstone (expiration).
    Tomb(&'static str),
    /// Offsets compaction removed.
    Gap(i64),
}
use R::*;

/// A value of producer `P` at `epoch` in `st`: in-progress states list `orders-0`,
/// Complete* none, Empty a null list (as `TransactionLog.valueToBytes` writes them).
fn base(epoch: i16, st: u8) -> TxnValue {
    let v = TxnValue::new(P, epoch, st);
    let v = if matches!(st, ONGOING | PREPARE_COMMIT | PREPARE_ABORT) {
        v.partitions(&[("orders", &[0])])
    } else {
        v
    };
    let start = if st == EMPTY { -1 } else { NOW - MIN };
    v.times(NOW - MIN, start)
}

/// A v0 value: what a coordinator at `transaction.version` 0 writes
/// (`TransactionVersion.transactionLogValueVersion`).
fn v0(epoch: i16, st: u8) -> TxnValue {
    base(epoch, st)
}

/// A v1 value (`transaction.version` ≥ 1) carrying `ClientTransactionVersion` `ctv`.
fn v1(epoch: i16, st: u8, ctv: i16) -> TxnValue {
    base(epoch, st).v1(-1, -1, ctv)
}

/// The same value under producer id `pid`.
fn pid(v: TxnValue, pid: i64) -> TxnValue {
    TxnValue {
        producer_id: pid,
        ..v
    }
}

/// The same value with these `PreviousProducerId`/`NextProducerId` tagged fields.
fn links(v: TxnValue, previous: i64, next: i64) -> TxnValue {
    TxnValue {
        previous_producer_id: previous,
        next_producer_id: next,
        ..v
    }
}

/// Scan the records (one batch each, from offset 0); `(evidence.anomaly, offset)` of every
/// `transaction_state_anomaly`, in report order.
fn scan(records: Vec<R>) -> Vec<(String, i64)> {
    let dir = tempfile::tempdir().unwrap();
    let mut t = PartitionBuilder::new("__transaction_state", 7);
    for r in records {
        let rec = match r {
            V(id, v) => Rec::kv(key(id), v.encode()),
            Tomb(id) => Rec::tombstone(key(id)),
            Gap(n) => {
                t.skip_offsets(n);
                continue;
            }
        };
        t.append(Batch::new(Producer::PLAIN).record(rec));
    }
    t.write(dir.path()).unwrap();
    let opts = ScanOptions::default().with_now_ms(NOW);
    let r = pipeline::scan(&[dir.path().to_path_buf()], &opts);
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .map(|f| {
            let a = f.evidence["anomaly"].as_str().unwrap_or("?").to_string();
            (a, f.offset.unwrap_or(-1))
        })
        .collect()
}

/// The offsets of the `epoch_step` anomalies.
fn steps(found: &[(String, i64)]) -> Vec<i64> {
    found
        .iter()
        .filter(|(a, _)| a == "epoch_step")
        .map(|(_, o)| *o)
        .collect()
}

fn pairs(v: &[(&str, i64)]) -> Vec<(String, i64)> {
    v.iter().map(|(s, o)| (s.to_string(), *o)).collect()
}

/// One id's values, in order.
fn id(name: &'static str, values: Vec<TxnValue>) -> Vec<R> {
    values.into_iter().map(|v| V(name, v)).collect()
}

// ----- InitProducerId -----------------------------------------------------------------------

/// `TransactionCoordinatorTest.shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState`
/// (TV0): InitProducerId on Ongoing at 5 fences (`prepareFenceProducerEpoch`, 6, never
/// written), `endTransactionWithTV1` writes PrepareAbort at 6 and CompleteAbort at 6; the
/// client's retry finds CompleteAbort and `prepareIncrementProducerEpoch` writes Empty at 7.
/// Twin: a PrepareAbort at 7 (+2 before TV2: no fence adds two).
#[test]
fn init_pid_on_ongoing_fences_then_bumps_tv0() {
    let healthy = vec![
        v0(5, EMPTY),
        v0(5, ONGOING),
        v0(6, PREPARE_ABORT),
        v0(6, COMPLETE_ABORT),
        v0(7, EMPTY),
        v0(7, ONGOING),
        v0(7, PREPARE_COMMIT),
        v0(7, COMPLETE_COMMIT),
    ];
    assert_eq!(scan(id("app", healthy)), vec![]);
    let twin = vec![v0(5, ONGOING), v0(7, PREPARE_ABORT), v0(7, COMPLETE_ABORT)];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

/// `TransactionCoordinatorTest.shouldNotCauseEpochOverflowWhenInitPidDuringOngoingTxnV2`,
/// `testTV2AllowsEpochReBumpingAfterFailedWrite` (2025-10): under TV2 the fence's abort
/// goes through `endTransaction`'s TV2 branch, where `prepareAbortOrCommit` is the only bump
/// (+1, ClientTransactionVersion = the server's TV, 2). Trunk of 2024-10 set the fenced
/// epoch first and bumped again (+2). Both are healthy; the client's retry writes Empty +1.
/// Twins: +3, and +0 from a TV2 PrepareAbort.
#[test]
fn init_pid_on_ongoing_under_tv2_bumps_once_or_twice() {
    let mut h = id(
        "new",
        vec![
            v1(5, ONGOING, 2),
            v1(6, PREPARE_ABORT, 2),
            v1(6, COMPLETE_ABORT, 2),
            v1(7, EMPTY, 2),
        ],
    );
    h.extend(id(
        "old",
        vec![
            v1(5, ONGOING, 2),
            v1(7, PREPARE_ABORT, 2),
            v1(7, COMPLETE_ABORT, 2),
            v1(8, EMPTY, 2),
        ],
    ));
    assert_eq!(scan(h), vec![]);
    for e in [8, 5] {
        let twin = vec![v1(5, ONGOING, 2), v1(e, PREPARE_ABORT, 2)];
        assert_eq!(
            steps(&scan(id("app", twin))),
            vec![1],
            "PrepareAbort at {e}"
        );
    }
}

/// `TransactionCoordinator.abortTimedOutTransactions` / InitProducerId's fence pass the
/// SERVER's `transaction.version` (`txnManager.transactionVersionLevel()`), not the
/// client's: a TV1 client (Ongoing carries ClientTransactionVersion 0, its AddPartitionsToTxn
/// being ≤ v3, `TransactionVersion.transactionVersionForAddPartitionsToTxn`) timed out on a
/// TV2 cluster is aborted at +1 with ClientTransactionVersion 2, which CompleteAbort and the
/// next Empty copy (`TransitionData`); its next transaction is TV1 again (EndTxn ≤ v4:
/// PrepareCommit +0, ClientTransactionVersion 0). A TV2 client after a downgrade to level 1
/// (v1, ClientTransactionVersion 0) or 0 (v0) is aborted by `endTransactionWithTV1` at +1.
/// Twin: the TV1 PrepareCommit at +1.
#[test]
fn timeout_abort_follows_the_server_transaction_version() {
    let mut h = id(
        "tv1-client",
        vec![
            v1(5, ONGOING, 0),
            v1(6, PREPARE_ABORT, 2),
            v1(6, COMPLETE_ABORT, 2),
            v1(7, EMPTY, 2),
            v1(7, ONGOING, 0),
            v1(7, PREPARE_COMMIT, 0),
            v1(7, COMPLETE_COMMIT, 0),
        ],
    );
    h.extend(id(
        "level1",
        vec![v1(5, ONGOING, 2), v1(6, PREPARE_ABORT, 0)],
    ));
    h.extend(id("level0", vec![v1(5, ONGOING, 2), v0(6, PREPARE_ABORT)]));
    h.extend(id(
        "level0-done",
        vec![
            v1(5, ONGOING, 2),
            v0(6, PREPARE_ABORT),
            v0(6, COMPLETE_ABORT),
        ],
    ));
    assert_eq!(scan(h), vec![]);
    let twin = vec![v1(7, EMPTY, 2), v1(7, ONGOING, 0), v1(8, PREPARE_COMMIT, 0)];
    assert_eq!(steps(&scan(id("app", twin))), vec![2]);
}

/// `TransactionCoordinatorTest.shouldNotRepeatedlyBumpEpochDueToInitPidDuringOngoingTxnIfAppendToLogFails`,
/// `shouldNotBumpEpochWhenAbortingExpiredTransactionIfAppendToLogFails`: under TV1 a failed
/// fence leaves the in-memory epoch bumped and `hasFailedEpochFence` set, so the next fence
/// writes the same PrepareAbort (a retried append when the first reached the log). After an
/// upgrade to TV2 the next fence is `endTransaction`'s TV2 branch: `prepareFenceProducerEpoch`
/// keeps the already-bumped epoch and `prepareAbortOrCommit` adds one: +2 from the logged
/// Ongoing. Twin: the TV1 retry at +2.
#[test]
fn a_failed_fence_is_written_again_at_the_same_epoch() {
    let mut h = id(
        "retried",
        vec![
            v0(5, ONGOING),
            v0(6, PREPARE_ABORT),
            v0(6, PREPARE_ABORT),
            v0(6, COMPLETE_ABORT),
            v0(7, EMPTY),
        ],
    );
    h.extend(id(
        "upgraded",
        vec![
            v1(5, ONGOING, 0),
            v1(7, PREPARE_ABORT, 2),
            v1(7, COMPLETE_ABORT, 2),
        ],
    ));
    assert_eq!(scan(h), pairs(&[("retried_append", 2)]));
    let twin = vec![v1(5, ONGOING, 0), v1(7, PREPARE_ABORT, 0)];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

/// `TransactionCoordinatorTest.shouldUseLastEpochToFenceWhenEpochsAreExhausted`,
/// `shouldGenerateNewProducerIdIfEpochsExhausted`, `testRetryInitProducerIdAfterProducerIdRotation`
/// (TV0/1): Empty reaches 32766 (`prepareIncrementProducerEpoch` from 32765), a fence takes
/// the transaction to 32767, and the next InitProducerId rotates
/// (`prepareProducerIdRotation`: a new producer id at 0); a KIP-360 retry of that call
/// (the old id and its exhausted epoch) is answered without a bump and writes Empty at 0
/// again. Twin: the retry at 2.
#[test]
fn epoch_exhaustion_rotates_the_producer_id_tv0() {
    let healthy = vec![
        v0(LAST - 1, COMPLETE_COMMIT),
        v0(LAST, EMPTY),
        v0(LAST, ONGOING),
        v0(LAST + 1, PREPARE_ABORT),
        v0(LAST + 1, COMPLETE_ABORT),
        pid(v0(0, EMPTY), P + 1),
        pid(v0(0, EMPTY), P + 1),
        pid(v0(0, ONGOING), P + 1),
    ];
    assert_eq!(scan(id("app", healthy)), vec![]);
    let twin = vec![pid(v0(0, EMPTY), P + 1), pid(v0(2, EMPTY), P + 1)];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

/// `TransactionCoordinatorTest.shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyTV2`,
/// `shouldGenerateNewProducerIdIfEpochsExhaustedV2`, `TransactionMetadataTest.testEpochBumpOnEndTxnOverflow`:
/// under TV2 a timed-out transaction at 32766 is aborted at 32767 under the same producer id
/// (a fence allocates no next producer id); a commit at 32766 writes PrepareCommit at 32767
/// and CompleteCommit at 0 of the next producer id (`prepareComplete`). The 2025-10
/// `TransactionLog.valueToBytes` writes no Previous/NextProducerId, so a coordinator that
/// loads that PrepareCommit (`readTxnRecordValue`: next producer id -1) completes it at
/// 32767 under the old id, and InitProducerId then rotates. Twin: a TV2 PrepareCommit at +2.
#[test]
fn tv2_epoch_overflow_and_its_reload() {
    let mut h = id(
        "fenced",
        vec![
            v1(LAST, ONGOING, 2),
            v1(LAST + 1, PREPARE_ABORT, 2),
            v1(LAST + 1, COMPLETE_ABORT, 2),
            pid(v1(0, EMPTY, 2), P + 1),
        ],
    );
    h.extend(id(
        "linked",
        vec![
            v1(LAST, ONGOING, 2),
            links(v1(LAST + 1, PREPARE_COMMIT, 2), -1, P + 2),
            links(pid(v1(0, COMPLETE_COMMIT, 2), P + 2), P, -1),
            pid(v1(0, ONGOING, 2), P + 2),
            pid(v1(1, PREPARE_COMMIT, 2), P + 2),
        ],
    ));
    h.extend(id(
        "unlinked",
        vec![
            v1(LAST, ONGOING, 2),
            v1(LAST + 1, PREPARE_COMMIT, 2),
            pid(v1(0, COMPLETE_COMMIT, 2), P + 3),
        ],
    ));
    h.extend(id(
        "reloaded",
        vec![
            v1(LAST, ONGOING, 2),
            v1(LAST + 1, PREPARE_COMMIT, 2),
            v1(LAST + 1, COMPLETE_COMMIT, 2),
            pid(v1(0, EMPTY, 2), P + 4),
        ],
    ));
    assert_eq!(scan(h), vec![]);
    let twin = vec![v1(LAST - 1, ONGOING, 2), v1(LAST + 1, PREPARE_COMMIT, 2)];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

/// `TransactionCoordinatorTest.testInitProducerIdWithCurrentEpochProvided`,
/// `TransactionMetadataTest.testEpochBumpWithCurrentEpochProvided`,
/// `testAttemptedEpochBumpWithLastEpoch` (KIP-360): after an abortable error the client
/// aborts (PrepareAbort +0 before TV2) and calls InitProducerId with its current epoch:
/// Empty +1 (last epoch recorded); its retry, carrying the now-last epoch, is answered
/// without a bump: Empty +0. Twin: a second Empty at +2.
#[test]
fn kip360_bump_and_its_retry() {
    let healthy = vec![
        v1(5, ONGOING, 0),
        v1(5, PREPARE_ABORT, 0),
        v1(5, COMPLETE_ABORT, 0),
        v1(6, EMPTY, 0),
        v1(6, EMPTY, 0),
        v1(6, ONGOING, 0),
    ];
    assert_eq!(scan(id("app", healthy)), vec![]);
    let twin = vec![v1(5, COMPLETE_ABORT, 0), v1(6, EMPTY, 0), v1(8, EMPTY, 0)];
    assert_eq!(steps(&scan(id("app", twin))), vec![2]);
}

/// KIP-939 InitProducerId (`TransactionCoordinator.handleInitProducerId`, 2025-10):
/// `enable2Pc` only stores a timeout of `Integer.MAX_VALUE` and goes through the same
/// `prepareInitProducerIdTransit`, so an Ongoing two-phase-commit transaction is fenced like
/// any other; `keepPreparedTxn` is answered UNSUPPORTED_VERSION before anything is prepared,
/// so it writes nothing (no transition keeping the prepared transaction exists yet).
/// Twin: the two-phase-commit transaction's Ongoing moving its epoch.
#[test]
fn two_phase_commit_init_pid_fences_like_any_other() {
    let two_pc = |v: TxnValue| v.timeout(i32::MAX);
    let healthy = vec![
        two_pc(v1(5, EMPTY, 2)),
        two_pc(v1(5, ONGOING, 2)),
        two_pc(v1(6, PREPARE_ABORT, 2)),
        two_pc(v1(6, COMPLETE_ABORT, 2)),
        two_pc(v1(7, EMPTY, 2)),
    ];
    assert_eq!(scan(id("app", healthy)), vec![]);
    let twin = vec![two_pc(v1(5, ONGOING, 2)), two_pc(v1(6, ONGOING, 2))];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

// ----- EndTxn, upgrades, retries, reloads ---------------------------------------------------

/// KIP-890 upgrade mid-life: `TransactionManager.maybeUpdateTransactionV2Enabled` (clients,
/// 2025-10) switches a producer to TV2 between transactions and bumps the epoch first
/// (`clientSideEpochBumpRequired`: InitProducerId with the current epoch, Empty +1, which
/// copies ClientTransactionVersion 0); from then on each EndTxn v5 bumps (PrepareCommit +1,
/// `shouldAppendPrepareCommitToLogOnEndTxnWhenStatusIsOngoingAndResultIsCommit` with TV2).
/// A 4.0 client switched without that bump. The v0 values are the cluster before
/// `transaction.version` went to 2. Twin: a TV2 PrepareCommit at +0.
#[test]
fn tv1_to_tv2_upgrade_mid_life() {
    let mut h = id(
        "bumped",
        vec![
            v0(5, ONGOING),
            v0(5, PREPARE_COMMIT),
            v0(5, COMPLETE_COMMIT),
            v1(6, EMPTY, 0),
            v1(6, ONGOING, 2),
            v1(7, PREPARE_COMMIT, 2),
            v1(7, COMPLETE_COMMIT, 2),
            v1(7, ONGOING, 2),
        ],
    );
    h.extend(id(
        "unbumped",
        vec![
            v0(5, COMPLETE_COMMIT),
            v1(5, ONGOING, 2),
            v1(6, PREPARE_COMMIT, 2),
            v1(6, COMPLETE_COMMIT, 2),
        ],
    ));
    assert_eq!(scan(h), vec![]);
    let twin = vec![v1(6, EMPTY, 0), v1(6, ONGOING, 2), v1(6, PREPARE_COMMIT, 2)];
    assert_eq!(steps(&scan(id("app", twin))), vec![2]);
}

/// `TransactionMetadataTest.testTransitFromEmptyToPrepareAbortInV2`,
/// `testTransitFromCompleteAbortToPrepareAbortInV2`, `TransactionCoordinatorTest.testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2`:
/// a TV2 EndTxn(ABORT) at the current epoch with no transaction in progress bumps (+1) from
/// Empty, CompleteAbort or CompleteCommit. A new id's first Empty carries
/// ClientTransactionVersion 0 (`handleInitProducerId` creates the metadata with TV_0). Twin:
/// +2 from CompleteAbort.
#[test]
fn tv2_abort_without_a_transaction_bumps_once() {
    let healthy = vec![
        v1(0, EMPTY, 0),
        v1(1, PREPARE_ABORT, 2).partitions(&[]),
        v1(1, COMPLETE_ABORT, 2),
        v1(2, PREPARE_ABORT, 2).partitions(&[]),
        v1(2, COMPLETE_ABORT, 2),
        v1(2, ONGOING, 2),
        v1(3, PREPARE_COMMIT, 2),
        v1(3, COMPLETE_COMMIT, 2),
        v1(4, PREPARE_ABORT, 2).partitions(&[]),
        v1(4, COMPLETE_ABORT, 2),
    ];
    assert_eq!(scan(id("app", healthy)), vec![]);
    let twin = vec![
        v1(2, COMPLETE_ABORT, 2),
        v1(4, PREPARE_ABORT, 2).partitions(&[]),
    ];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

/// `TransactionStateManagerTest.testAppendFailToCoordinatorNotAvailableError`,
/// `TransactionMarkerChannelManagerTest.shouldRetryAppendToLogOnEndTxnWhenCoordinatorNotAvailableError`:
/// a failed Prepare* is written again by the producer's retried EndTxn, a failed Complete* by
/// `TransactionMarkerChannelManager.tryAppendToLog` (`retried_append`, info). A failed
/// Prepare* the producer never retries is aborted by a fence (`failed_prepare_aborted`,
/// info): TV0 +1; TV2 at the Prepare's epoch (2025-10) or one above (trunk 2024-10). None
/// is an `epoch_step`. Twin: a TV0 PrepareCommit at +1.
#[test]
fn retried_appends_and_a_failed_prepare_are_not_steps() {
    let mut h = id(
        "tv0",
        vec![
            v0(5, ONGOING),
            v0(5, PREPARE_COMMIT),
            v0(5, PREPARE_COMMIT),
            v0(5, COMPLETE_COMMIT),
            v0(5, COMPLETE_COMMIT),
        ],
    );
    h.extend(id(
        "tv2",
        vec![
            v1(5, ONGOING, 2),
            v1(6, PREPARE_COMMIT, 2),
            v1(6, PREPARE_COMMIT, 2),
            v1(6, COMPLETE_COMMIT, 2),
        ],
    ));
    h.extend(id(
        "fenced-tv0",
        vec![
            v0(5, ONGOING),
            v0(5, PREPARE_COMMIT),
            v0(6, PREPARE_ABORT),
            v0(6, COMPLETE_ABORT),
        ],
    ));
    h.extend(id(
        "fenced-tv2",
        vec![
            v1(5, ONGOING, 2),
            v1(6, PREPARE_COMMIT, 2),
            v1(6, PREPARE_ABORT, 2),
            v1(6, COMPLETE_ABORT, 2),
        ],
    ));
    h.extend(id(
        "fenced-tv2-2024",
        vec![
            v1(5, ONGOING, 2),
            v1(6, PREPARE_COMMIT, 2),
            v1(7, PREPARE_ABORT, 2),
            v1(7, COMPLETE_ABORT, 2),
        ],
    ));
    let want = pairs(&[
        ("retried_append", 2),
        ("retried_append", 4),
        ("retried_append", 7),
        ("failed_prepare_aborted", 11),
        ("failed_prepare_aborted", 15),
        ("failed_prepare_aborted", 19),
    ]);
    assert_eq!(scan(h), want);
    let twin = vec![v0(5, ONGOING), v0(6, PREPARE_COMMIT)];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

/// `TransactionStateManager.loadTransactionsForTxnTopicPartition` (failover): a loaded
/// Prepare* gets its markers again and `prepareComplete` at the loaded epoch, whatever time
/// passed; the client, answered NOT_COORDINATOR, finds the new coordinator and goes on at
/// the same epoch (TV0) or the bumped one (TV2). Twin: a CompleteCommit at +1.
#[test]
fn a_reloaded_prepare_completes_at_its_epoch() {
    let later = |v: TxnValue| v.times(NOW - MIN / 2, NOW - MIN);
    let mut h = id(
        "tv0",
        vec![
            v0(5, ONGOING),
            v0(5, PREPARE_COMMIT),
            later(v0(5, COMPLETE_COMMIT)),
            later(v0(5, ONGOING)),
        ],
    );
    h.extend(id(
        "tv2",
        vec![
            v1(5, ONGOING, 2),
            v1(6, PREPARE_ABORT, 2),
            later(v1(6, COMPLETE_ABORT, 2)),
            later(v1(6, ONGOING, 2)),
        ],
    ));
    assert_eq!(scan(h), vec![]);
    let twin = vec![v0(5, PREPARE_COMMIT), v0(6, COMPLETE_COMMIT)];
    assert_eq!(steps(&scan(id("app", twin))), vec![1]);
}

/// `TransactionStateManagerTest.shouldRemoveCompleteCommitExpiredTransactionalIds`: an
/// expired id gets a tombstone (`removeExpiredTransactionalIds`); its next InitProducerId
/// creates new metadata with a new producer id at 0. Compaction keeps, per id, the newest
/// value of the cleaned part and everything after it (`LogCleaner`), so what survives is a
/// run of consecutive transitions starting anywhere — here from a CompleteCommit and from an
/// Empty, with other ids' records gone between. Twin: a lost Empty (a hole compaction never
/// makes): Ongoing +1 after CompleteCommit.
#[test]
fn expiry_reuse_and_compaction_leave_consecutive_values() {
    let mut h = vec![V("app", v0(9, COMPLETE_COMMIT)), Tomb("app")];
    h.extend(id(
        "app",
        vec![pid(v0(0, EMPTY), P + 7), pid(v0(0, ONGOING), P + 7)],
    ));
    h.push(Gap(40));
    h.push(V("kept", v1(4, COMPLETE_COMMIT, 2)));
    h.push(Gap(3));
    h.push(V("kept", v1(5, EMPTY, 2)));
    h.push(Gap(12));
    h.extend(id(
        "kept",
        vec![
            v1(5, ONGOING, 2),
            v1(6, PREPARE_COMMIT, 2),
            v1(6, COMPLETE_COMMIT, 2),
        ],
    ));
    h.push(V("suffix", v0(3, EMPTY)));
    h.push(Gap(2));
    h.extend(id("suffix", vec![v0(3, ONGOING), v0(4, PREPARE_ABORT)]));
    assert_eq!(scan(h), vec![]);
    let twin = vec![
        V("app", v1(4, COMPLETE_COMMIT, 2)),
        Gap(3),
        V("app", v1(5, ONGOING, 2)),
    ];
    assert_eq!(steps(&scan(twin)), vec![4]);
}

// ----- divergences ------------------------------------------------------------------------

/// A new instance's InitProducerId on CompleteCommit at 5 writes Empty at 6
/// (`prepareIncrementProducerEpoch`) and the append fails after reaching the log
/// (`TransactionStateManager.appendTransactionToLog`: COORDINATOR_NOT_AVAILABLE, pending
/// state reset, in-memory state still CompleteCommit at 5). The running TV2 producer, still
/// at 5, aborts a transaction whose implicit partition add never reached the coordinator:
/// `TransactionCoordinator.endTransaction` accepts ABORT at the current epoch on
/// CompleteCommit/Empty (`testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2`)
/// and writes PrepareAbort at 6, CompleteAbort at 6; the new instance's retry then writes
/// Empty at 7. The same from Empty (the running producer had just initialized). The log
/// shows Empty 6 → PrepareAbort 6, a TV2 abort at +0 after Empty. Twin: +2 after the Empty
/// (neither a bumped Empty nor a failed one explains it), which must stay an `epoch_step`.
#[test]
fn a_failed_init_pid_then_the_current_producers_tv2_abort() {
    let mut h = id(
        "from-complete",
        vec![
            v1(5, COMPLETE_COMMIT, 2),
            v1(6, EMPTY, 2),
            v1(6, PREPARE_ABORT, 2).partitions(&[]),
            v1(6, COMPLETE_ABORT, 2),
            v1(7, EMPTY, 2),
        ],
    );
    h.extend(id(
        "from-empty",
        vec![
            v1(5, EMPTY, 2),
            v1(6, EMPTY, 2),
            v1(6, PREPARE_ABORT, 2).partitions(&[]),
            v1(6, COMPLETE_ABORT, 2),
        ],
    ));
    assert_eq!(steps(&scan(h)), Vec::<i64>::new());
}

/// The twin of [`a_failed_init_pid_then_the_current_producers_tv2_abort`]: an abort two
/// above the Empty is flagged (and must stay so).
#[test]
fn a_tv2_abort_two_above_an_empty_is_a_step() {
    let twin = vec![
        v1(5, COMPLETE_COMMIT, 2),
        v1(6, EMPTY, 2),
        v1(8, PREPARE_ABORT, 2).partitions(&[]),
    ];
    assert_eq!(steps(&scan(id("app", twin))), vec![2]);
}

/// `transaction.version` downgraded from 2 to 0 (`FeatureControlManager.updateFeature`
/// allows a SAFE_DOWNGRADE of any feature but metadata.version/kraft.version) while a TV2
/// transaction is running: the client keeps the version it started with until its EndTxn
/// is built (`TransactionManager.beginCompletingTransaction` calls
/// `maybeUpdateTransactionV2Enabled` after building it), the broker maps produce v12 / EndTxn
/// v5 to TV2 whatever the feature (`TransactionVersion.transactionVersionForEndTxn`,
/// `AddPartitionsToTxnManager`), and the coordinator writes every value at the feature's
/// version (`TransactionLog.valueToBytes(…, transactionVersionLevel())`): v0, with no
/// ClientTransactionVersion. The Ongoing written after the downgrade is v0, so klogscan's
/// fallback (the previous value's ClientTransactionVersion) reads TV0 and wants PrepareCommit
/// at +0; Kafka wrote +1 (`prepareAbortOrCommit` under TV2). Twin: an all-v0 history (never
/// TV2) with the same step, which must stay an `epoch_step`.
#[test]
fn a_tv2_commit_written_as_v0_after_a_downgrade() {
    let mut h = id(
        "re-added",
        vec![
            v1(4, COMPLETE_COMMIT, 2),
            v1(4, ONGOING, 2),
            v0(4, ONGOING).partitions(&[("orders", &[0, 1])]),
            v0(5, PREPARE_COMMIT).partitions(&[("orders", &[0, 1])]),
            v0(5, COMPLETE_COMMIT),
        ],
    );
    h.extend(id(
        "started-after",
        vec![
            v1(4, COMPLETE_COMMIT, 2),
            v0(4, ONGOING),
            v0(5, PREPARE_COMMIT),
            v0(5, COMPLETE_COMMIT),
        ],
    ));
    assert_eq!(steps(&scan(h)), Vec::<i64>::new());
}

/// The twin of [`a_tv2_commit_written_as_v0_after_a_downgrade`]: the same step in a history
/// that never was TV2 is flagged (and must stay so).
#[test]
fn a_v0_commit_at_plus_one_with_no_tv2_value_is_a_step() {
    let twin = vec![
        v0(4, COMPLETE_COMMIT),
        v0(4, ONGOING),
        v0(5, PREPARE_COMMIT),
    ];
    assert_eq!(steps(&scan(id("app", twin))), vec![2]);
}

/// Outside `epoch_step`, the same family as
/// [`a_failed_init_pid_then_the_current_producers_tv2_abort`]: after the new instance's
/// failed Empty at 6 (in-memory CompleteCommit at 5), the running TV1 producer starts a
/// transaction (`prepareAddPartitions` at 5); the new instance's retried InitProducerId
/// finds Ongoing and fences it (PrepareAbort 6, CompleteAbort 6), then bumps (Empty 7).
/// klogscan reads Empty 6 → Ongoing 5 as an `epoch_regression`.
#[test]
fn a_failed_init_pid_then_the_current_producers_next_transaction() {
    let h = vec![
        v1(5, COMPLETE_COMMIT, 0),
        v1(6, EMPTY, 0),
        v1(5, ONGOING, 0),
        v1(6, PREPARE_ABORT, 0),
        v1(6, COMPLETE_ABORT, 0),
        v1(7, EMPTY, 0),
    ];
    let found = scan(id("app", h));
    assert_eq!(steps(&found), Vec::<i64>::new());
    assert_eq!(found, vec![]);
}
