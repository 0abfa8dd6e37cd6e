//! `TransactionMetadataTest` (core/src/test/scala/unit/kafka/coordinator/transaction/,
//! apache/kafka trunk of 2024-10), the methods no test cited before: the epoch and producer
//! id each transition of `TransactionMetadata` hands out, as the values the coordinator
//! appends to `__transaction_state` show them. Each case writes one transactional id's
//! history on `__transaction_state` (its partition of 50, broker 1), runs `scan`, `verify`
//! and the merge of the bundle ([`Brokers::check_with`]), and asserts that the history
//! Kafka's coordinator writes raises nothing, and that its near miss — a history the state
//! machine refuses to write — gets the `transaction_state_anomaly` sub-id that names it.

use super::*;
use klogscan::testkit::txnlog::state::*;

pub(crate) const S: i64 = T0;
/// The reference time: a minute after `S` (no transaction is past its timeout).
pub(crate) const NOW: i64 = S + MIN;

/// Check the history `steps` of transactional id `id` (each value at its update time).
pub(crate) fn history(id: &str, steps: Vec<TxnValue>) -> Verdict {
    let mut w = World::new();
    let log = w.txn_log(1, partition_for(id, 50));
    let mut t = S;
    for v in steps {
        // The batch time never goes back, whatever the value's update time says.
        t = t.max(v.last_update_ms);
        put(log, t, id, v);
    }
    w.write().check_with(opts(NOW, None))
}

/// No `transaction_state_anomaly` and nothing loud in any report.
pub(crate) fn assert_legal(v: &Verdict) {
    for (name, fs) in reports(v) {
        assert_eq!(anomalies(&fs), [], "{name}");
    }
    v.assert_no_alarm();
}

/// Exactly one `transaction_state_anomaly`, `sub`, of `id`, in every report.
pub(crate) fn assert_refused(v: &Verdict, sub: &str, id: &str) {
    for (name, fs) in reports(v) {
        assert_eq!(
            anomalies(&fs),
            [(sub.to_string(), id.to_string())],
            "{name}"
        );
    }
}

/// An Empty value of `pid`/`epoch` updated at `t`.
pub(crate) fn empty((pid, epoch): (i64, i16), t: i64) -> TxnValue {
    value((pid, epoch), EMPTY, &[], (t, -1), 60_000)
}

pub(crate) const O0: &[(&str, &[i32])] = &[("orders", &[0])];

/// `TransactionMetadataTest.testNormalEpochBump`: an InitProducerId for an id in Empty with no
/// expected epoch keeps the producer id and moves the epoch up by exactly one (735 to 736),
/// recording no last epoch. On disk: Empty at 735, then Empty at 736: nothing. Near miss: the
/// second Empty two epochs up (737), a step `prepareIncrementProducerEpoch` never takes:
/// `epoch_step`.
#[test]
fn init_producer_id_bumps_the_epoch_by_one() {
    assert_legal(&history(
        "bump",
        vec![empty((10, 735), S), empty((10, 736), S + SEC)],
    ));
    let v = history("bump", vec![empty((10, 735), S), empty((10, 737), S + SEC)]);
    assert_refused(&v, "epoch_step", "bump");
}

/// `TransactionMetadataTest.testBumpEpochNotAllowedIfEpochsExhausted`: at epoch 32766 the
/// producer's epochs count as exhausted and `prepareIncrementProducerEpoch` refuses to bump
/// the epoch (`TransactionCoordinator.handleInitProducerId` hands out a new producer id at
/// epoch 0 instead, `prepareProducerIdRotation`). On disk: the last legal bump, Empty 32765 to
/// Empty 32766, and the rotation after it, Empty of a new producer id at 0: nothing. Near miss:
/// Empty 32766, or a CompleteCommit/CompleteAbort at 32766, followed by Empty 32767 of the same
/// producer id, a bump Kafka throws on: `epoch_step`.
#[test]
fn an_exhausted_epoch_is_not_bumped() {
    assert_legal(&history(
        "exhausted",
        vec![
            empty((10, 32765), S),
            empty((10, 32766), S + SEC),
            empty((11, 0), S + 2 * SEC),
        ],
    ));
    let v = history(
        "exhausted",
        vec![empty((10, 32766), S), empty((10, 32767), S + SEC)],
    );
    assert_refused(&v, "epoch_step", "exhausted");
    for (prepare, complete) in [
        (PREPARE_COMMIT, COMPLETE_COMMIT),
        (PREPARE_ABORT, COMPLETE_ABORT),
    ] {
        let steps = vec![
            value((10, 32766), ONGOING, O0, (S, S), 60_000),
            value((10, 32766), prepare, O0, (S + SEC, S), 60_000),
            value((10, 32766), complete, &[], (S + 2 * SEC, S), 60_000),
            empty((10, 32767), S + 3 * SEC),
        ];
        assert_refused(&history("exhausted", steps), "epoch_step", "exhausted");
    }
}

/// `TransactionMetadataTest.testRotateProducerId` and
/// `TransactionMetadataTest.testTolerateUpdateTimeResetDuringProducerIdRotation`: rotating an
/// exhausted producer (epoch 32766, Empty) to a new producer id starts the new id at epoch 0
/// and keeps the old id as the previous one; an update time 1 ms before the previous value's
/// is accepted. On disk (v0 values: no links): Empty of producer 10 at 32766, then Empty of
/// producer 9893 at epoch 0, updated 1 ms earlier: nothing. Near miss: a new producer id
/// appearing in an Ongoing transaction of a producer far from exhaustion (epoch 100), which
/// neither InitProducerId nor the TV2 overflow writes: `pid_change`.
#[test]
fn a_producer_id_rotation_starts_the_new_id_at_epoch_zero() {
    assert_legal(&history(
        "rotate",
        vec![empty((10, 32766), S + SEC), empty((9893, 0), S + SEC - 1)],
    ));
    let v = history(
        "rotate",
        vec![
            value((10, 100), ONGOING, O0, (S, S), 60_000),
            value((9893, 0), ONGOING, O0, (S + SEC, S), 60_000),
        ],
    );
    assert_refused(&v, "pid_change", "rotate");
}

/// `TransactionMetadataTest.testRotateProducerIdInOngoingState`,
/// `TransactionMetadataTest.testRotateProducerIdInPrepareAbortState(0, 2)` and
/// `TransactionMetadataTest.testRotateProducerIdInPrepareCommitState(0, 2)`: a producer id
/// rotation is refused while a transaction is Ongoing or being prepared (PrepareCommit,
/// PrepareAbort) under TV0 and TV2 alike; the transaction completes under the producer id it
/// started with. On disk, for each Prepare state and both versions: Ongoing, Prepare* and
/// Complete* of producer 10 at epoch 100 (TV2: the Prepare bumps to 101 and Complete* copies
/// it): nothing. Near miss: the Complete* under a new producer id with no previous/next link
/// (epoch 100, not exhausted): `pid_change`.
#[test]
fn no_producer_id_rotation_inside_a_transaction() {
    for tv2 in [false, true] {
        for (prepare, complete) in [
            (PREPARE_COMMIT, COMPLETE_COMMIT),
            (PREPARE_ABORT, COMPLETE_ABORT),
        ] {
            let ver = |v: TxnValue| if tv2 { v.v1(-1, -1, 2) } else { v };
            let e = if tv2 { 101 } else { 100 };
            let steps = |done: (i64, i16)| {
                vec![
                    ver(value((10, 100), ONGOING, O0, (S, S), 60_000)),
                    ver(value((10, e), prepare, O0, (S + SEC, S), 60_000)),
                    ver(value(done, complete, &[], (S + 2 * SEC, S), 60_000)),
                ]
            };
            let label = format!("tv2 {tv2} prepare {prepare}");
            let v = history("mid", steps((10, e)));
            for (name, fs) in reports(&v) {
                assert_eq!(anomalies(&fs), [], "{label} {name}");
                assert_no_loud(name, &fs);
            }
            let v = history("mid", steps((9893, 0)));
            for (name, fs) in reports(&v) {
                let want = [("pid_change".to_string(), "mid".to_string())];
                assert_eq!(anomalies(&fs), want, "{label} {name}");
            }
        }
    }
}

/// `TransactionMetadataTest.testAttemptedEpochBumpWithNewlyCreatedMetadata`: metadata created
/// for a new id holds no epoch (-1); its first InitProducerId gives epoch 0, whatever epoch the
/// request named, and records no last epoch. On disk: the id's first value, Empty at epoch 0,
/// then a transaction committed at 0: nothing. Near miss: an Empty at epoch 0 after the same
/// producer id reached epoch 5 — only a new id starts at 0: `epoch_regression`.
#[test]
fn a_new_id_starts_at_epoch_zero() {
    let txn = |e: i16| {
        vec![
            value((10, e), ONGOING, O0, (S + SEC, S + SEC), 60_000),
            value((10, e), PREPARE_COMMIT, O0, (S + 2 * SEC, S + SEC), 60_000),
            value(
                (10, e),
                COMPLETE_COMMIT,
                &[],
                (S + 3 * SEC, S + SEC),
                60_000,
            ),
        ]
    };
    let mut legal = vec![empty((10, 0), S)];
    legal.extend(txn(0));
    assert_legal(&history("new", legal));
    let v = history("new", vec![empty((10, 5), S), empty((10, 0), S + SEC)]);
    assert_refused(&v, "epoch_regression", "new");
}

/// `TransactionMetadataTest.testAttemptedEpochBumpWithLastEpoch` and
/// `TransactionMetadataTest.testAttemptedEpochBumpWithFencedEpoch`: an InitProducerId retried
/// with the epoch the producer had before the last bump (the last epoch) gets the current epoch
/// again, unbumped; one naming an epoch older than that is answered PRODUCER_FENCED and writes
/// nothing. On disk: Empty at 734, Empty at 735 (the bump), Empty at 735 again (the retry):
/// nothing. Near miss: the fenced request's epoch written anyway, Empty at 733 after 735:
/// `epoch_regression`.
#[test]
fn a_retry_with_the_last_epoch_keeps_the_epoch_and_an_older_one_is_fenced() {
    let bumped = [empty((10, 734), S), empty((10, 735), S + SEC)];
    let mut legal = bumped.to_vec();
    legal.push(empty((10, 735), S + 2 * SEC));
    assert_legal(&history("retry", legal));
    let mut fenced = bumped.to_vec();
    fenced.push(empty((10, 733), S + 2 * SEC));
    assert_refused(&history("retry", fenced), "epoch_regression", "retry");
}

/// `TransactionMetadataTest.testTolerateUpdateTimeShiftDuringEpochBump`,
/// `TransactionMetadataTest.testTolerateTimeShiftDuringPrepareAbort` and
/// `TransactionMetadataTest.testTolerateTimeShiftDuringCompleteAbort(0, 2)`: each of these
/// transitions accepts an update time 1 ms before the previous one (the clock stepped back),
/// keeping the start time; the abort keeps the epoch under TV0, the TV2 PrepareAbort bumps it and
/// CompleteAbort copies it. On disk, TV0 and TV2: Empty at 1, Empty at 2 updated 1 ms earlier,
/// an Ongoing transaction, its PrepareAbort and CompleteAbort each 1 ms before the previous
/// update: nothing. Near miss: a CompleteCommit after the PrepareAbort (an outcome the abort
/// never completes as): `invalid_transition`.
#[test]
fn an_update_time_stepping_back_is_tolerated() {
    for tv2 in [false, true] {
        for near_miss in [false, true] {
            let ver = |v: TxnValue| if tv2 { v.v1(-1, -1, 2) } else { v };
            let t = S + 10 * SEC;
            let e = if tv2 { 3 } else { 2 };
            let done = if near_miss {
                COMPLETE_COMMIT
            } else {
                COMPLETE_ABORT
            };
            let steps = vec![
                ver(empty((10, 1), S + SEC)),
                ver(empty((10, 2), S + SEC - 1)),
                ver(value((10, 2), ONGOING, O0, (t, t), 60_000)),
                ver(value((10, e), PREPARE_ABORT, O0, (t - 1, t), 60_000)),
                ver(value((10, e), done, &[], (t - 2, t), 60_000)),
            ];
            let v = history("shift", steps);
            if near_miss {
                assert_refused(&v, "invalid_transition", "shift");
            } else {
                assert_legal(&v);
            }
        }
    }
}
