//! Transactions version 2 (KIP-890 part 2) and KIP-939 two-phase commit, round 2: the
//! coordinator's transitions as `TransactionMetadata` (Kafka of 2025-10,
//! /work/.mirror/wtmxxx+kafka-se-homework:
//! transaction-coordinator/src/main/java/org/apache/kafka/coordinator/transaction/
//! TransactionMetadata.java) builds and checks them, held against the values klogscan reads
//! in `__transaction_state`, and a two-phase-commit transaction terminated by an
//! administrator as it leaves the data partitions. The first round
//! (`kafka_tv2_cases.rs`) has the Empty/CompleteAbort → PrepareAbort transitions, the
//! first-sequence rules and the data partitions' markers; these are the cases it left out.
//!
//! The tests (`TransactionMetadataTest`, `TransactionCoordinatorTest`:
//! core/src/test/scala/unit/kafka/coordinator/transaction/) drive one in-memory
//! `TransactionMetadata`; each transition they accept is a value the coordinator appends,
//! each one `completeTransitionTo` or the coordinator refuses never reaches the log. Here
//! the values are written in order to one `__transaction_state` partition and scanned.
#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use std::path::Path;

const T0: i64 = 1_700_000_000_000;
const PID: i64 = 100;

// ----- helpers ----------------------------------------------------------------------------

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// `(kind, offset)` of every finding at warning or above.
fn loud(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    r.findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.kind, f.offset))
        .collect()
}

/// `(evidence.anomaly, offset)` of every `transaction_state_anomaly`.
fn anomalies(r: &ScanReport) -> Vec<(String, Option<i64>)> {
    of_kind(r, Kind::TransactionStateAnomaly)
        .iter()
        .map(|f| {
            let a = f.evidence["anomaly"].as_str().unwrap_or("?").to_string();
            (a, f.offset)
        })
        .collect()
}

/// A value of producer `PID` at `epoch` in `st`; TV2 (v1, ClientTransactionVersion 2) or
/// TV0 (v0). In-progress states list `orders-0`.
fn value(tv2: bool, epoch: i16, st: u8) -> TxnValue {
    let v = TxnValue::new(PID, epoch, st);
    let v = if matches!(
        st,
        state::ONGOING | state::PREPARE_COMMIT | state::PREPARE_ABORT
    ) {
        v.partitions(&[("orders", &[0])])
    } else {
        v
    };
    if tv2 { v.v1(-1, -1, 2) } else { v }
}

/// `values` of transactional id `app`, one batch each at offsets 0, 1, …, in
/// `__transaction_state-1`. `times[i]` is value i's last update time (its start time is
/// the first value's); the batch is stamped at the same time.
fn coordinator(values: &[TxnValue], times: &[i64]) -> PartitionBuilder {
    let mut c = PartitionBuilder::new("__transaction_state", 1);
    for (v, &t) in values.iter().zip(times) {
        let start = if v.status == state::EMPTY {
            -1
        } else {
            times[0]
        };
        let v = v.clone().times(t, start);
        c.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::kv(key("app"), v.encode()))
                .at(t),
        );
    }
    c
}

/// Scan `app`'s `values`, written 10 ms apart from `T0`.
fn scan_values(values: &[TxnValue]) -> ScanReport {
    let times: Vec<i64> = (0..values.len() as i64).map(|i| T0 + 10 * i).collect();
    scan_coordinator(coordinator(values, &times))
}

fn scan_coordinator(c: PartitionBuilder) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    c.write(dir.path()).unwrap();
    scan_dir(dir.path())
}

fn scan_dir(dir: &Path) -> ScanReport {
    pipeline::scan(&[dir.to_path_buf()], &ScanOptions::default())
}

fn assert_quiet(name: &str, r: &ScanReport) {
    assert!(loud(r).is_empty(), "{name}: {:#?}", r.findings);
    assert!(anomalies(r).is_empty(), "{name}: {:?}", anomalies(r));
}

// ----- the coordinator's transitions ------------------------------------------------------

/// `TransactionMetadataTest.testTransitFromCompleteCommitToPrepareAbortInV2`: under TV2 an
/// EndTxn(ABORT) that is not a retry moves CompleteCommit at 735 to PrepareAbort at 736
/// (`prepareAbortOrCommit` bumps; `noPartitionAdded`: the start time is the update time),
/// then CompleteAbort at 736 (`prepareComplete`). Nothing to report. The same values as a
/// TV0 coordinator writes them (v0, no ClientTransactionVersion) are an
/// `invalid_transition` at the PrepareAbort: `TransactionCoordinator.endTransactionWithTV1`
/// answers an ABORT on CompleteCommit INVALID_TXN_STATE and appends nothing.
#[test]
fn tv2_abort_after_a_complete_commit_is_a_valid_transition() {
    for tv2 in [true, false] {
        let e = 735;
        let values = [
            value(tv2, e, state::COMPLETE_COMMIT),
            value(tv2, e + 1, state::PREPARE_ABORT).partitions(&[]),
            value(tv2, e + 1, state::COMPLETE_ABORT),
        ];
        let r = scan_values(&values);
        if tv2 {
            assert_quiet("tv2", &r);
        } else {
            assert_eq!(
                anomalies(&r),
                vec![("invalid_transition".to_string(), Some(1))],
                "{:#?}",
                r.findings
            );
        }
    }
}

/// The TV1 half of the same rule (`TransactionCoordinator.endTransactionWithTV1`, and
/// `TransactionMetadata.completeTransitionTo`, which lets PrepareAbort follow Empty or
/// Complete* only when the new value's `clientTransactionVersion` supports the epoch bump):
/// a PrepareAbort whose own ClientTransactionVersion is 0 never follows a CompleteCommit,
/// whatever version the CompleteCommit was written under — the version is the EndTxn
/// request's, and a TV0/1 EndTxn(ABORT) on CompleteCommit is refused (INVALID_TXN_STATE).
/// Here: CompleteCommit at 735 (ClientTransactionVersion 2), then PrepareAbort and
/// CompleteAbort at 735 as v1 values with ClientTransactionVersion 0 (v1: the broker runs
/// `transaction.version` >= 1, so the field is written, `TransactionLog.valueToBytes`; and
/// the epoch is not bumped, as only the TV0/1 path leaves it): an `invalid_transition` at
/// offset 1. (A v0 value, written after a downgrade to `transaction.version` 0, carries no
/// version: there the previous value's may stand in.)
#[test]
fn a_tv1_abort_after_a_tv2_complete_commit_is_an_invalid_transition() {
    let e = 735;
    let values = [
        value(true, e, state::COMPLETE_COMMIT),
        TxnValue::new(PID, e, state::PREPARE_ABORT).v1(-1, -1, 0),
        TxnValue::new(PID, e, state::COMPLETE_ABORT).v1(-1, -1, 0),
    ];
    let r = scan_values(&values);
    assert!(
        anomalies(&r).contains(&("invalid_transition".to_string(), Some(1))),
        "{:?}",
        anomalies(&r)
    );
}

/// `TransactionMetadataTest.testEpochBumpOnEndTxn` and
/// `TransactionCoordinatorTest.shouldAppendPrepareCommitToLogOnEndTxnWhenStatusIsOngoingAndResultIsCommit(2)`:
/// under TV2 the client's EndTxn moves Ongoing at e to PrepareCommit/PrepareAbort at
/// exactly e + 1 (`prepareAbortOrCommit`: `producerEpoch + 1`, `lastProducerEpoch` the old
/// one; `completeTransitionTo`'s `validProducerEpoch` then requires `lastProducerEpoch ==`
/// the current epoch), and Complete* keeps it. Under TV0/1 the Prepare* stays at e. Both
/// load clean.
#[test]
fn end_txn_epochs_as_the_coordinator_writes_them_load_clean() {
    for tv2 in [true, false] {
        for (prepare, complete) in [
            (state::PREPARE_COMMIT, state::COMPLETE_COMMIT),
            (state::PREPARE_ABORT, state::COMPLETE_ABORT),
        ] {
            let up = i16::from(tv2);
            let values = [
                value(tv2, 5, state::ONGOING),
                value(tv2, 5 + up, prepare),
                value(tv2, 5 + up, complete),
            ];
            assert_quiet(
                &format!("tv2 {tv2}, prepare {prepare}"),
                &scan_values(&values),
            );
        }
    }
}

/// The transitions `TransactionMetadata` never builds, under TV2: a PrepareCommit at the
/// Ongoing epoch (no bump: `prepareAbortOrCommit` always bumps when the client's version
/// supports it) or two epochs up (only the client's EndTxn commits, at its current epoch,
/// bumped once; a coordinator fence only ever aborts). `completeTransitionTo`
/// (`validProducerEpoch`: the new `lastProducerEpoch` must be the current epoch) would throw
/// on either, and no code path appends them. On disk each must be an anomaly at the
/// PrepareCommit (offset 1), as a skipped or repeated epoch is a history the coordinator
/// did not write (a lost or divergent `__transaction_state` record).
#[test]
fn a_tv2_prepare_commit_not_one_epoch_above_its_ongoing_is_an_anomaly() {
    let silent: Vec<i16> = [5i16, 7]
        .into_iter()
        .filter(|&prepare_epoch| {
            let values = [
                value(true, 5, state::ONGOING),
                value(true, prepare_epoch, state::PREPARE_COMMIT),
                value(true, prepare_epoch, state::COMPLETE_COMMIT),
            ];
            let a = anomalies(&scan_values(&values));
            !a.iter().any(|(_, o)| *o == Some(1))
        })
        .collect();
    assert!(
        silent.is_empty(),
        "PrepareCommit epochs read as normal: {silent:?}"
    );
}

/// `TransactionMetadataTest.testTolerateTimeShiftDuringCompleteCommit(0, 2)` and
/// `testTolerateTimeShiftDuringCompleteAbort(0, 2)`: the Complete* value may carry a last
/// update time below its Prepare*'s (the coordinator's clock moved back);
/// `completeTransitionTo` does not compare them. Producer epoch 1 (TV2: Ongoing at 0,
/// Prepare* and Complete* at 1; TV0: all at 1). Nothing to report.
#[test]
fn a_complete_stamped_before_its_prepare_loads_clean() {
    for tv2 in [true, false] {
        for (prepare, complete) in [
            (state::PREPARE_COMMIT, state::COMPLETE_COMMIT),
            (state::PREPARE_ABORT, state::COMPLETE_ABORT),
        ] {
            let ongoing = if tv2 { 0 } else { 1 };
            let values = [
                value(tv2, ongoing, state::ONGOING),
                value(tv2, 1, prepare),
                value(tv2, 1, complete),
            ];
            // the Complete* is stamped 1 ms before the Prepare*
            let r = scan_coordinator(coordinator(&values, &[T0, T0 + 100, T0 + 99]));
            assert_quiet(&format!("tv2 {tv2}, prepare {prepare}"), &r);
        }
    }
}

/// `TransactionMetadata.completeTransitionTo`, the Complete* case (`validProducerEpoch`
/// outside the TV2 overflow: the epoch and producer id stay the Prepare*'s;
/// `prepareComplete` copies them): a Complete* one epoch above its Prepare* of the same
/// producer id is a transition the coordinator never writes, under either version.
#[test]
fn a_complete_above_its_prepare_epoch_is_an_anomaly() {
    let silent: Vec<bool> = [true, false]
        .into_iter()
        .filter(|&tv2| {
            let up = i16::from(tv2);
            let values = [
                value(tv2, 5, state::ONGOING),
                value(tv2, 5 + up, state::PREPARE_COMMIT),
                value(tv2, 6 + up, state::COMPLETE_COMMIT),
            ];
            let a = anomalies(&scan_values(&values));
            !a.iter().any(|(_, o)| *o == Some(2))
        })
        .collect();
    assert!(silent.is_empty(), "read as normal with tv2 = {silent:?}");
}

/// `TransactionCoordinatorTest.shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteCommit(2)`
/// and `shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExistingCompleteTransaction(2)`:
/// after a TV2 CompleteCommit at 6 the client's next AddPartitions writes Ongoing at 6
/// (`prepareAddPartitions` keeps the epoch), and a new instance's InitProducerId writes
/// Empty at 7 (`prepareIncrementProducerEpoch`), its transaction Ongoing at 7. Both load
/// clean.
#[test]
fn after_a_tv2_complete_the_next_ongoing_or_empty_loads_clean() {
    let head = [
        value(true, 5, state::ONGOING),
        value(true, 6, state::PREPARE_COMMIT),
        value(true, 6, state::COMPLETE_COMMIT),
    ];
    let tails: [&[TxnValue]; 2] = [
        &[value(true, 6, state::ONGOING)],
        &[value(true, 7, state::EMPTY), value(true, 7, state::ONGOING)],
    ];
    for tail in tails {
        let mut values = head.to_vec();
        values.extend_from_slice(tail);
        // end each history idle: the transaction after the tail commits
        let e = values.last().unwrap().producer_epoch;
        values.push(value(true, e + 1, state::PREPARE_COMMIT));
        values.push(value(true, e + 1, state::COMPLETE_COMMIT));
        assert_quiet(&format!("tail {}", tail.len()), &scan_values(&values));
    }
}

/// The same two moves at epochs `TransactionMetadata` never writes: Ongoing one epoch above
/// the CompleteCommit (AddPartitions keeps the epoch: `completeTransitionTo`'s Ongoing case
/// requires it unchanged) and Empty two epochs above it (InitProducerId bumps by one, or
/// rotates to a new producer id at 0: `validProducerEpochBump`). Each must be an anomaly at
/// offset 3: the history skips a value the coordinator wrote.
#[test]
fn an_ongoing_or_empty_that_skips_epochs_is_an_anomaly() {
    let silent: Vec<u8> = [(state::ONGOING, 7i16), (state::EMPTY, 8)]
        .into_iter()
        .filter(|&(st, epoch)| {
            let values = [
                value(true, 5, state::ONGOING),
                value(true, 6, state::PREPARE_COMMIT),
                value(true, 6, state::COMPLETE_COMMIT),
                value(true, epoch, st),
            ];
            let a = anomalies(&scan_values(&values));
            !a.iter().any(|(_, o)| *o == Some(3))
        })
        .map(|(st, _)| st)
        .collect();
    assert!(silent.is_empty(), "states read as normal: {silent:?}");
}

// ----- KIP-939: a two-phase-commit transaction terminated by an administrator ------------

const DAY: i64 = 86_400_000;

/// The log dir of a KIP-939 transaction of `app` (producer `PID`, TV2) on `orders-0` and
/// `orders-1`: InitProducerId with `enable2Pc` (Empty at 2, timeout `Integer.MAX_VALUE`:
/// `TransactionCoordinator.handleInitProducerId`'s `resolvedTxnTimeoutMs`), Ongoing at 2,
/// data at 2. Three days later, `Admin.forceTerminateTransaction` (`fenceProducers`: an
/// InitProducerId without `enable2Pc`) fences it: the coordinator aborts with the server's
/// TV2 (`prepareFenceProducerEpoch`, then `prepareAbortOrCommit` bumps once): PrepareAbort
/// at 3 with the transaction's own timeout, ABORT markers at 3 (`markers` of them: on
/// `orders-0` first), CompleteAbort at 3; the admin's retried InitProducerId gives Empty at
/// 4 with its own timeout (60 s). Half an hour later plain data on `orders-0`.
fn terminated_two_phase_commit(dir: &Path, markers: usize) {
    let parts: &[(&str, &[i32])] = &[("orders", &[0, 1])];
    let tpc = |epoch: i16, st: u8| {
        TxnValue::new(PID, epoch, st)
            .timeout(i32::MAX)
            .v1(-1, -1, 2)
    };
    let end = T0 + 3 * DAY;
    let values = [
        (tpc(2, state::EMPTY).times(T0, -1), T0),
        (
            tpc(2, state::ONGOING)
                .partitions(parts)
                .times(T0 + 1000, T0 + 1000),
            T0 + 1000,
        ),
        (
            tpc(3, state::PREPARE_ABORT)
                .partitions(parts)
                .times(end, T0 + 1000),
            end,
        ),
        (
            tpc(3, state::COMPLETE_ABORT).times(end + 500, T0 + 1000),
            end + 500,
        ),
        (
            TxnValue::new(PID, 4, state::EMPTY)
                .timeout(60_000)
                .v1(-1, -1, 2)
                .times(end + 1000, -1),
            end + 1000,
        ),
    ];
    let mut c = PartitionBuilder::new("__transaction_state", 1);
    for (v, t) in values {
        c.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::kv(key("app"), v.encode()))
                .at(t),
        );
    }
    c.write(dir).unwrap();
    let data = Producer::transactional(PID, 2);
    for p in 0..2 {
        let mut part = PartitionBuilder::new("orders", p).start_time(T0 + 2000);
        part.append(Batch::new(data).records(3).sequence(0));
        if (p as usize) < markers {
            part.advance_time(end + 200 - part.now());
            part.abort(data.with_epoch(3), 0);
        }
        if p == 0 {
            part.advance_time(end + 30 * 60_000 - part.now());
            part.append(Batch::new(Producer::PLAIN).records(1));
        }
        part.write(dir).unwrap();
    }
    std::fs::write(
        dir.join("meta.properties"),
        "version=0\nbroker.id=1\ncluster.id=c1\n",
    )
    .unwrap();
}

/// KIP-939 with TV2: `TransactionStateManager.timedOutTransactions` never aborts a
/// two-phase-commit transaction (`isDistributedTwoPhaseCommitTxn`), so it may stay open for
/// days until the external transaction manager decides or an administrator terminates it
/// (`Admin.forceTerminateTransaction`; `TransactionCoordinatorTest.
/// shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState` is that
/// fence). Terminated, with both markers (at the bumped epoch 3) and the coordinator's
/// CompleteAbort and Empty: nothing at warning or above, nothing open, and the transaction
/// aborted. The twin whose `orders-1` lacks its marker although the coordinator wrote
/// CompleteAbort (only after every marker, `TransactionMarkerChannelManager`) is an error
/// on `orders-1`.
#[test]
fn a_terminated_two_phase_commit_transaction_is_closed() {
    for markers in [2usize, 1] {
        let dir = tempfile::tempdir().unwrap();
        terminated_two_phase_commit(dir.path(), markers);
        let r = scan_dir(dir.path());
        if markers == 2 {
            assert_quiet("both markers", &r);
            assert!(
                of_kind(&r, Kind::OpenTransaction).is_empty(),
                "{:#?}",
                r.findings
            );
        } else {
            let on_b: Vec<(Kind, Severity)> = r
                .findings
                .iter()
                .filter(|f| f.severity >= Severity::Warning)
                .map(|f| {
                    assert_eq!((f.topic.as_str(), f.partition), ("orders", 1), "{f:#?}");
                    (f.kind, f.severity)
                })
                .collect();
            assert!(
                on_b.contains(&(Kind::TransactionMarkerMissing, Severity::Error)),
                "{on_b:?}"
            );
        }
    }
}
