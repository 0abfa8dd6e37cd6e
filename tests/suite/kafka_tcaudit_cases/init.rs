//! InitProducerId (`TransactionCoordinator.handleInitProducerId` →
//! `prepareInitProducerIdTransit`): a null transactional id gets a producer id and no
//! state; an id the coordinator holds no state for gets new metadata, a new producer id at
//! epoch 0; an id in Empty or Complete* gets its epoch bumped (or, exhausted, a new
//! producer id); an id in Prepare* is answered CONCURRENT_TRANSACTIONS; a stale or
//! unmapped caller is fenced. Only the transitions are written.

use super::*;
use crate::kafka_txnstate_cases::EXPIRATION_MS;

/// `TransactionCoordinatorTest.shouldAcceptInitPidAndReturnNextPidWhenTransactionalIdIsNull`:
/// without a transactional id the coordinator hands out the next producer id at epoch 0
/// and writes nothing to `__transaction_state` (no state is kept for an idempotent
/// producer). On disk: producers 0 and 1, idempotent, on `orders-0`, next to a coordinator
/// partition holding another id: nothing to join, nothing open, nothing at warning or above.
/// Near miss: producer 1's batches transactional with no marker and no value mapping it —
/// data the coordinator never knew of: `hanging_transaction`, the coordinator's verdict
/// `no_transactional_id`.
#[test]
fn idempotent_producers_leave_no_coordinator_record() {
    for near_miss in [false, true] {
        let mut s = Story::new("app");
        s.coord(value((10, 0), EMPTY, &[], (S, -1), TIMEOUT));
        s.data(0, Producer::idempotent(0, 0), S + SEC);
        let p1 = if near_miss {
            Producer::transactional(1, 0)
        } else {
            Producer::idempotent(1, 0)
        };
        s.data(0, p1, S + 2 * SEC);
        let v = s.w.write().check_with(opts(S + 20 * MIN, None));
        for (name, fs) in reports(&v) {
            assert_eq!(anomalies(&fs), [], "{name}");
            if near_miss {
                let (f, c) = confirmation(&fs, "orders", 0);
                assert_eq!(f.kind, Kind::HangingTransaction, "{name}");
                assert_eq!(f.producer_id, Some(1), "{name}");
                assert_eq!(c["verdict"], "no_transactional_id", "{name}: {c}");
            } else {
                assert_no_loud(name, &fs);
                assert_nothing_open(name, &fs);
            }
        }
    }
}

/// `TransactionCoordinatorTest.shouldInitPidWithEpochZeroForNewTransactionalId` and
/// `TransactionCoordinatorTest.shouldGenerateNewProducerIdIfNoStateAndProducerIdAndEpochProvided`:
/// an id the coordinator holds no state for — never seen, or expired
/// (`TransactionStateManager.removeExpiredTransactionalIds` wrote its tombstone) — gets new
/// metadata and a new producer id at epoch 0, whatever producer id and epoch the request
/// names. On disk: "fresh" starts with Empty of producer 11 at 0 and commits on `orders-0`;
/// "expired" was Empty of producer 10 at epoch 1, tombstoned after seven idle days, then
/// Empty of producer 12 at 0, which commits on `orders-1`: no anomaly, nothing open, the
/// coordinator's load holds "expired" as producer 12. Near miss: producer 10 left data on
/// `orders-0` that no marker closed before the id expired — the coordinator no longer
/// knows the producer, nothing will end it: `hanging_transaction`.
#[test]
fn a_new_or_expired_id_gets_a_new_producer_at_epoch_zero() {
    for near_miss in [false, true] {
        let mut s = Story::new("fresh");
        let p11 = Producer::transactional(11, 0);
        s.coord(value((11, 0), EMPTY, &[], (S, -1), TIMEOUT));
        let t = S + SEC;
        s.coord(value((11, 0), ONGOING, O0, (t, t), TIMEOUT));
        s.data(0, p11, t + 100);
        s.coord(value((11, 0), PREPARE_COMMIT, O0, (t + SEC, t), TIMEOUT));
        s.marker(0, p11, true, 0, t + SEC + 100);
        s.coord(value(
            (11, 0),
            COMPLETE_COMMIT,
            &[],
            (t + SEC + 200, t),
            TIMEOUT,
        ));
        s.id = "expired";
        s.coord(value((10, 1), EMPTY, &[], (t + 2 * SEC, -1), TIMEOUT));
        if near_miss {
            s.data(0, Producer::transactional(10, 1), t + 3 * SEC);
        }
        let x = t + 2 * SEC + EXPIRATION_MS + MIN;
        let tp = partition_for("expired", 50);
        tombstones(s.w.txn_log(3, tp), x, &["expired".to_string()]);
        let p12 = Producer::transactional(12, 0);
        s.coord(value((12, 0), EMPTY, &[], (x + MIN, -1), TIMEOUT));
        let t = x + 2 * MIN;
        s.coord(value(
            (12, 0),
            ONGOING,
            &[("orders", &[1])],
            (t, t),
            TIMEOUT,
        ));
        s.data(1, p12, t + 100);
        let v = value(
            (12, 0),
            PREPARE_COMMIT,
            &[("orders", &[1])],
            (t + SEC, t),
            TIMEOUT,
        );
        s.coord(v);
        s.marker(1, p12, true, 0, t + SEC + 100);
        s.coord(value(
            (12, 0),
            COMPLETE_COMMIT,
            &[],
            (t + SEC + 200, t),
            TIMEOUT,
        ));
        let b = s.w.write();
        let o = opts(t + 10 * MIN, None);
        let vw = view(&b, &o);
        let ex = held(&vw)["expired"];
        assert_eq!((ex.producer_id, ex.producer_epoch), (12, 0));
        let v = b.check_with(o);
        for (name, fs) in reports(&v) {
            assert_eq!(anomalies(&fs), [], "{name}");
            if near_miss {
                let (f, _) = confirmation(&fs, "orders", 0);
                assert_eq!(f.kind, Kind::HangingTransaction, "{name}");
                assert_eq!(f.producer_id, Some(10), "{name}");
            } else {
                assert_no_loud(name, &fs);
                assert_nothing_open(name, &fs);
            }
        }
    }
}

/// `TransactionCoordinatorTest.testRetryInitProducerIdAfterProducerIdRotation` (the retry),
/// `TransactionCoordinatorTest.testInitProducerIdWithInvalidEpochAfterProducerIdRotation` and
/// the two tests above: the coordinator hands out a new producer id only when it holds no
/// state for the id (new, or expired: a tombstone first) or when the id's epoch is
/// exhausted (`prepareProducerIdRotation`); otherwise InitProducerId bumps the epoch of the
/// same producer id (`prepareIncrementProducerEpoch`), and a caller naming the rotated-out
/// producer with a stale epoch is fenced (PRODUCER_FENCED, no write). On disk: Empty of
/// producer 10 at 32766, Empty of producer 11 at 0 (the rotation), Empty of 11 at 0 again
/// (the retry with the last epoch, `prepareIncrementProducerEpoch` keeps the epoch):
/// nothing. Near misses Kafka never writes: Empty of producer 10 at 1 followed by Empty of
/// producer 12 at 0, no tombstone between; after the rotation, Empty of producer 10 at 32765
/// (the fenced caller's request written): `pid_change` for each.
///
/// klogscan reports both (it took any Empty under another producer id for a rotation until
/// 2026-12-07). It stays silent after an Empty at epoch 0 of another producer id than the
/// one rotated from: that value's append may have failed after reaching the log, leaving
/// the coordinator with no state or the exhausted one, which rotates again
/// (`a_failed_rotation_append_is_followed_by_another_rotation`). A second reading exists
/// when the coordinator's load stopped before the Empty (`TransactionStateManager.
/// loadTransactionMetadata` keeps the ids read before a record it fails on, so an id whose
/// values all follow it is unknown to that coordinator and gets new metadata): that load
/// stop is itself reported (`undecodable_record`, `unknown_state`).
#[test]
fn a_new_producer_id_needs_an_exhausted_epoch_or_no_state() {
    assert_legal(&history(
        "rot",
        vec![
            empty((10, 32766), S),
            empty((11, 0), S + SEC),
            empty((11, 0), S + 2 * SEC),
        ],
    ));
    let v = history("rot", vec![empty((10, 1), S), empty((12, 0), S + SEC)]);
    assert_refused(&v, "pid_change", "rot");
    let v = history(
        "rot",
        vec![
            empty((10, 32766), S),
            empty((11, 0), S + SEC),
            empty((10, 32765), S + 2 * SEC),
        ],
    );
    assert_refused(&v, "pid_change", "rot");
}

/// The rotation of producer 10 (exhausted at 32766) to 11 written, its append failed after
/// reaching the log (`TransactionStateManager.appendTransactionToLog`: the coordinator keeps
/// producer 10 at 32766), the client's retry rotates again to 12: Empty 10@32766, Empty 11@0,
/// Empty 12@0 — and a new id whose first Empty's append failed, then another producer id:
/// Empty 20@0, Empty 21@0. Kafka writes both; nothing. Near miss: after the rotation, Empty
/// 11@1 (the bump), then Empty 13@0 — 11 was not at epoch 0 any more: `pid_change`.
#[test]
fn a_failed_rotation_append_is_followed_by_another_rotation() {
    assert_legal(&history(
        "rot",
        vec![
            empty((10, 32766), S),
            empty((11, 0), S + SEC),
            empty((12, 0), S + 2 * SEC),
        ],
    ));
    assert_legal(&history(
        "new",
        vec![empty((20, 0), S), empty((21, 0), S + SEC)],
    ));
    let v = history(
        "rot",
        vec![
            empty((10, 32766), S),
            empty((11, 0), S + SEC),
            empty((11, 1), S + 2 * SEC),
            empty((13, 0), S + 3 * SEC),
        ],
    );
    assert_refused(&v, "pid_change", "rot");
}

/// `TransactionCoordinatorTest.shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExistingEmptyTransaction`
/// and `TransactionCoordinatorTest.shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExistingCompleteCommitTransaction(0, 2)`
/// (with `…ExistingCompleteTransaction`, cited before): InitProducerId on Empty, CompleteCommit
/// or CompleteAbort bumps the epoch of the same producer id by one and takes the request's
/// timeout. On disk, TV0 (v0 values) and TV2 (the transaction's values v1 with
/// `ClientTransactionVersion` 2, the EndTxn's Prepare one epoch up; the InitProducerId's
/// Empty v1 with 0): Empty at 0 (timeout 60 s), Empty at 1 (timeout 10 s), a transaction
/// committed (aborted), Empty one epoch above its end: nothing.
///
/// Near miss, `TransactionCoordinatorTest.shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepareCommitState`,
/// `…InPrepareAbortState` and `TransactionCoordinatorTest.shouldNotBumpEpochWithPendingTransaction`:
/// an InitProducerId while the transaction is in Prepare* is answered
/// CONCURRENT_TRANSACTIONS and writes nothing; the Empty written straight after the
/// Prepare* is `invalid_transition`.
#[test]
fn init_producer_id_bumps_from_empty_or_a_completed_transaction() {
    for tv in [0, 2] {
        let txn = |v: TxnValue| if tv == 2 { tv2(v) } else { v };
        let init = |v: TxnValue| if tv == 2 { tv2_plain(v) } else { v };
        for (prepare, complete) in [
            (PREPARE_COMMIT, COMPLETE_COMMIT),
            (PREPARE_ABORT, COMPLETE_ABORT),
        ] {
            let e = if tv == 2 { 2 } else { 1 };
            let t = S + 10 * SEC;
            let steps = |near_miss: bool| {
                let mut v = vec![
                    init(value((10, 0), EMPTY, &[], (S, -1), TIMEOUT)),
                    init(value((10, 1), EMPTY, &[], (S + SEC, -1), 10_000)),
                    init(value((10, 1), ONGOING, O0, (t, t), 10_000)),
                    txn(value((10, e), prepare, O0, (t + SEC, t), 10_000)),
                ];
                if !near_miss {
                    v.push(txn(value((10, e), complete, &[], (t + 2 * SEC, t), 10_000)));
                }
                v.push(init(value(
                    (10, e + 1),
                    EMPTY,
                    &[],
                    (t + 3 * SEC, -1),
                    10_000,
                )));
                v
            };
            let label = format!("tv{tv} state {prepare}");
            let v = history("bump", steps(false));
            for (name, fs) in reports(&v) {
                assert_eq!(anomalies(&fs), [], "{label} {name}");
                assert_no_loud(name, &fs);
            }
            let v = history("bump", steps(true));
            for (name, fs) in reports(&v) {
                let want = [("invalid_transition".to_string(), "bump".to_string())];
                assert_eq!(anomalies(&fs), want, "{label} {name}");
            }
        }
    }
}

/// `TransactionCoordinatorTest.shouldFailToAbortTransactionOnHandleInitPidWhenProducerEpochIsSmaller`,
/// `TransactionCoordinatorTest.shouldNotAcceptSmallerEpochDuringTransactionExpiration` and
/// `TransactionCoordinatorTest.testInitProducerIdStaleCurrentEpochProvided`: a fence or a
/// timeout abort prepared for an epoch the transaction has since left (another
/// InitProducerId fenced the producer and bumped it) is answered PRODUCER_FENCED and
/// writes nothing. On disk (TV0): Ongoing at 0, the new instance's fence (PrepareAbort and
/// CompleteAbort at 1, the ABORT marker at 1 on `orders-0`), its Empty at 2 and its
/// transaction at 2, still Ongoing and recent: nothing at warning or above. Near miss: the
/// stale abort written anyway, PrepareAbort at 1 after the Ongoing at 2:
/// `epoch_regression`.
#[test]
fn a_stale_fence_or_timeout_abort_writes_nothing() {
    for near_miss in [false, true] {
        let mut s = Story::new("stale");
        let (p0, p2) = (
            Producer::transactional(10, 0),
            Producer::transactional(10, 2),
        );
        s.coord(value((10, 0), EMPTY, &[], (S, -1), TIMEOUT));
        let t = S + SEC;
        s.coord(value((10, 0), ONGOING, O0, (t, t), TIMEOUT));
        s.data(0, p0, t + 100);
        s.coord(value((10, 1), PREPARE_ABORT, O0, (t + SEC, t), TIMEOUT));
        s.marker(0, p0.with_epoch(1), false, 0, t + SEC + 100);
        s.coord(value(
            (10, 1),
            COMPLETE_ABORT,
            &[],
            (t + SEC + 200, t),
            TIMEOUT,
        ));
        s.coord(value((10, 2), EMPTY, &[], (t + 2 * SEC, -1), TIMEOUT));
        let t2 = t + 3 * SEC;
        s.coord(value((10, 2), ONGOING, O0, (t2, t2), TIMEOUT));
        s.data(0, p2, t2 + 100);
        if near_miss {
            s.coord(value((10, 1), PREPARE_ABORT, O0, (t2 + SEC, t), TIMEOUT));
        }
        let v = s.w.write().check_with(opts(t2 + 30 * SEC, None));
        if near_miss {
            assert_anomalies(&v, "stale", &["epoch_regression"]);
        } else {
            assert_anomalies(&v, "stale", &[]);
            v.assert_no_alarm();
        }
    }
}
