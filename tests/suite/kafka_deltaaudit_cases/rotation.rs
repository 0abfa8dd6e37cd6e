//! KAFKA-20090 (apache/kafka PR #21506, March 2026: Kafka 4.3) and KAFKA-18660 (PR #18730,
//! January 2025: Kafka 4.1): what a TV2 coordinator writes when a transaction ends at the
//! exhausted epoch 32766.
//!
//! Before KAFKA-20090, `TransactionCoordinator.endTransaction` allocated a next producer
//! id for an exhausted epoch only when the client asked (`!isEpochFence`): a timeout's or
//! an InitProducerId's fence took the transaction to 32767 and completed it there under the
//! same producer id (`producer_stuck_at_exhausted_epoch` until an InitProducerId rotates;
//! `kafka_txn_coordinator_cases` holds that shape). Since 4.3
//! (`generateTxnTransitMetadataForTxnCompletion`) the fence path allocates too: PrepareAbort
//! at 32767 names `NextProducerId`, the ABORT markers go out at 32767 under the old id, and
//! `TransactionMetadata.prepareComplete` writes CompleteAbort under the next id at epoch 0,
//! with `PreviousProducerId` naming the old one.
//!
//! The application's id `app` (producer 50, TV2) writes to `orders-0` (broker 1) and
//! `orders-1` (broker 2); its coordinator's partition is on broker 3.

use super::*;
use crate::kafka_txnstate_cases::{World, partition_for, produce};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::state::*;

const APP: &str = "app";
const PID: i64 = 50;
const NEXT: i64 = 51;
const EXHAUSTED: i16 = i16::MAX - 1;
const ORDERS: &[(&str, &[i32])] = &[("orders", &[0, 1])];
const START: i64 = T0 + 10 * SEC;
/// The fence: the transaction's timeout (60 s) passed, or a new instance's InitProducerId.
const FENCE: i64 = START + 61 * SEC;

/// How the coordinator completed the fence's abort.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Complete {
    /// Kafka 4.3+: PrepareAbort names NextProducerId 51, CompleteAbort under 51 at epoch 0
    /// with PreviousProducerId 50.
    Rotated,
    /// The same PrepareAbort, but CompleteAbort stayed under producer 50 at 32767.
    NotSwitched,
    /// CompleteAbort under 51 at epoch 0 without PreviousProducerId (-1).
    Unlinked,
}

/// `app`'s transaction at 32766 fenced and aborted as `complete` says, then the values
/// `after` (each one second apart) of the id.
fn world(complete: Complete, after: &[TxnValue]) -> (World, i64) {
    let tp = partition_for(APP, 50);
    let mut w = World::new();
    let no = (-1, -1);
    let log = w.txn_log(3, tp);
    crate::kafka_txnstate_cases::put(
        log,
        T0,
        APP,
        tv2((PID, EXHAUSTED), EMPTY, &[], (T0, -1), no),
    );
    let ongoing = tv2((PID, EXHAUSTED), ONGOING, ORDERS, (START, START), no);
    crate::kafka_txnstate_cases::put(log, START, APP, ongoing);
    let data = Producer::transactional(PID, EXHAUSTED);
    produce(w.part(1, "orders", 0), data, 2, START + 100);
    produce(w.part(2, "orders", 1), data, 2, START + 200);
    let prepare = tv2(
        (PID, i16::MAX),
        PREPARE_ABORT,
        ORDERS,
        (FENCE, START),
        (-1, NEXT),
    );
    crate::kafka_txnstate_cases::put(w.txn_log(3, tp), FENCE, APP, prepare);
    let bumped = data.with_epoch(i16::MAX);
    crate::kafka_txnstate_cases::marker(w.part(1, "orders", 0), bumped, false, 0, FENCE + 10);
    crate::kafka_txnstate_cases::marker(w.part(2, "orders", 1), bumped, false, 0, FENCE + 20);
    let t = FENCE + 30;
    let done = match complete {
        Complete::Rotated => tv2((NEXT, 0), COMPLETE_ABORT, &[], (t, START), (PID, -1)),
        Complete::NotSwitched => tv2((PID, i16::MAX), COMPLETE_ABORT, &[], (t, START), no),
        Complete::Unlinked => tv2((NEXT, 0), COMPLETE_ABORT, &[], (t, START), no),
    };
    let log = w.txn_log(3, tp);
    crate::kafka_txnstate_cases::put(log, t, APP, done);
    let mut t = t;
    for v in after {
        t += SEC;
        let v = v.clone().times(t, -1);
        crate::kafka_txnstate_cases::put(w.txn_log(3, tp), t, APP, v);
    }
    (w, t)
}

/// The verdicts of `scan`, `verify` and the merge (each must agree) of `world(complete,
/// after)`, one minute after its last write.
fn check(complete: Complete, after: &[TxnValue]) -> Vec<(Kind, Severity, String)> {
    let (w, last) = world(complete, after);
    let v = w.write().check_with(opts(last + 60 * SEC, None));
    let all = reports(&v).map(|(name, fs)| (name, verdicts(&fs)));
    for (name, got) in &all[1..] {
        assert_eq!(got, &all[0].1, "{name} against scan");
    }
    all[0].1.clone()
}

/// `TransactionCoordinatorTest.shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyAndLateClientAbortRequestTV2`
/// (KAFKA-20090, Kafka 4.3): the timeout's fence at 32766 writes PrepareAbort at 32767 with
/// `NextProducerId` 51, ABORT markers at 32767, CompleteAbort of producer 51 at epoch 0
/// (`PreviousProducerId` 50). The client's late EndTxn(ABORT) with 50/32766 is a
/// `retryOnOverflow` (answered 51/0, nothing written). No stuck producer, no retry warning,
/// nothing at warning or above on either data partition. Near miss: the same Prepare
/// followed by a CompleteAbort that stayed at 50/32767 is stuck (error,
/// `complete_without_rotation`, naming the NextProducerId the Complete did not take).
#[test]
fn a_fence_abort_at_the_exhausted_epoch_rotates_since_4_3() {
    assert_eq!(check(Complete::Rotated, &[]), vec![]);
    let (w, last) = world(Complete::NotSwitched, &[]);
    let v = w.write().check_with(opts(last + 60 * SEC, None));
    for (name, fs) in reports(&v) {
        let got = verdicts(&fs);
        let stuck = (Kind::ProducerStuckAtExhaustedEpoch, Severity::Error);
        assert_eq!(
            got,
            vec![(stuck.0, stuck.1, "complete_without_rotation".into())],
            "{name}"
        );
        let f = fs.iter().find(|f| f.kind == stuck.0).unwrap();
        assert!(
            f.message.contains("named NextProducerId 51"),
            "{name}: {}",
            f.message
        );
    }
}

/// The stuck producer is a verdict on the releases before KAFKA-20090 (4.3.0, on no earlier
/// branch): since it, `TransactionMetadata.prepareAbortOrCommit` keeps epoch 32767 instead
/// of overflowing it (apache/kafka PR #21469) and the EndTxn of an exhausted epoch rotates
/// the producer id (PR #21506), so the client left at 32767 by the unswitched CompleteAbort
/// completes its next transaction under a new id with no error. `--broker-version 4.3.0`
/// (scan, verify and the merge): nothing; 4.2.0 keeps the error; and the Prepare at 32767
/// without `NextProducerId` (`prepare_without_next_producer_id`, a warning) goes with 4.3.0
/// and stays with 4.2.0.
#[test]
fn a_stuck_producer_is_no_verdict_on_kafka_4_3() {
    use klogscan::verify::BrokerVersion;
    let with = |v: (u32, u32, u32)| {
        let mut o = opts(0, None);
        o.broker_version = Some(BrokerVersion(v.0, v.1, v.2));
        o
    };
    let (w, last) = world(Complete::NotSwitched, &[]);
    let w = w.write();
    for (release, want) in [((4, 3, 0), 0), ((4, 4, 1), 0), ((4, 2, 0), 1)] {
        let mut o = with(release);
        o.now_ms = Some(last + 60 * SEC);
        let v = w.check_with(o);
        for (name, fs) in reports(&v) {
            let stuck: Vec<_> = (fs.iter())
                .filter(|f| f.kind == Kind::ProducerStuckAtExhaustedEpoch)
                .map(|f| {
                    (
                        f.severity,
                        f.evidence["shape"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            assert_eq!(stuck.len(), want, "{release:?} {name}: {stuck:?}");
        }
    }
    // The Prepare at 32767 without NextProducerId, no Complete yet.
    let tp = partition_for(APP, 50);
    let mut w = World::new();
    let prepare = tv2(
        (PID, i16::MAX),
        PREPARE_ABORT,
        ORDERS,
        (FENCE, START),
        (-1, -1),
    );
    crate::kafka_txnstate_cases::put(w.txn_log(3, tp), FENCE, APP, prepare);
    let w = w.write();
    for (release, want) in [((4, 3, 0), 0), ((4, 2, 0), 1)] {
        let mut o = with(release);
        o.now_ms = Some(FENCE + 60 * SEC);
        let v = w.check_with(o);
        for (name, fs) in reports(&v) {
            let shapes: Vec<_> = (fs.iter())
                .filter(|f| f.kind == Kind::ProducerStuckAtExhaustedEpoch)
                .map(|f| f.evidence["shape"].as_str().unwrap_or("").to_string())
                .collect();
            assert_eq!(shapes.len(), want, "{release:?} {name}: {shapes:?}");
            if want == 1 {
                assert_eq!(shapes[0], "prepare_without_next_producer_id");
            }
        }
    }
}

/// `TransactionCoordinatorTest.shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyAndRetryInitProducerIdTV2`
/// (KAFKA-20090): after the rotated CompleteAbort, the old client retries InitProducerId
/// with 50/32766. `isValidProducerId` accepts it (50 is `PreviousProducerId`, 32766
/// exhausted) and `prepareIncrementProducerEpoch` finds 32766 as `lastProducerEpoch`: a retry
/// of a successful call, answered 51/0 with an Empty at 51/0 (no bump); the client's next
/// transaction runs at 51/0. Nothing. Near miss: the CompleteAbort without
/// `PreviousProducerId` (a writer before KAFKA-20310): the retry across a failover is
/// answered INVALID_PRODUCER_ID_MAPPING / PRODUCER_FENCED — the retry warning.
#[test]
fn the_init_producer_id_retry_after_the_rotation_is_answered_without_a_bump() {
    let after = [
        tv2((NEXT, 0), EMPTY, &[], (0, -1), (PID, -1)),
        tv2((NEXT, 0), ONGOING, ORDERS, (0, -1), (PID, -1)),
    ];
    assert_eq!(check(Complete::Rotated, &after), vec![]);
    assert_eq!(
        check(Complete::Unlinked, &after[..1]),
        vec![(
            Kind::ProducerFencedOnRetryAfterFailover,
            Severity::Warning,
            String::new()
        )]
    );
}

/// `TransactionCoordinatorTest.shouldRotateProducerIdWhenInitPidFencesOngoingTxnAtEpochOverflowBoundaryTV2`
/// (KAFKA-20090): a new instance's InitProducerId fences the Ongoing transaction at 32766
/// (answered CONCURRENT_TRANSACTIONS); the abort rotates as above. Its retry (no expected
/// epoch) finds CompleteAbort at 51/0, not exhausted: `prepareIncrementProducerEpoch`
/// bumps to 51/1 (Empty). Nothing. Near miss: an Empty at 51/3 skips two epochs
/// (`epoch_step`).
#[test]
fn an_init_producer_id_fence_at_the_exhausted_epoch_rotates_then_bumps() {
    let empty = |e| tv2((NEXT, e), EMPTY, &[], (0, -1), (PID, -1));
    assert_eq!(check(Complete::Rotated, &[empty(1)]), vec![]);
    let got = check(Complete::Rotated, &[empty(3)]);
    assert_eq!(
        got,
        vec![(
            Kind::TransactionStateAnomaly,
            Severity::Warning,
            "epoch_step".into()
        )]
    );
}

/// `TransactionCoordinatorTest.shouldReturnConcurrentTxnOnAddPartitionsIfEndTxnV2EpochOverflowAndNotComplete`
/// (KAFKA-18660, Kafka 4.1): the client's EndTxn(COMMIT) at 32766 wrote PrepareCommit at
/// 32767 with `NextProducerId` 51; until CompleteCommit, an AddPartitionsToTxn is answered
/// CONCURRENT_TRANSACTIONS (nothing written). Read while the markers are going out: the
/// Complete will switch to 51 — nothing is stuck. Near miss: the same PrepareCommit with no
/// NextProducerId (-1) is `producer_stuck_at_exhausted_epoch` (warning,
/// `prepare_without_next_producer_id`).
#[test]
fn a_prepare_commit_at_the_overflow_naming_the_next_producer_is_not_stuck() {
    for (next, want) in [
        (NEXT, vec![]),
        (
            -1,
            vec![(
                Kind::ProducerStuckAtExhaustedEpoch,
                Severity::Warning,
                "prepare_without_next_producer_id".to_string(),
            )],
        ),
    ] {
        let tp = partition_for(APP, 50);
        let mut w = World::new();
        let no = (-1, -1);
        let put = crate::kafka_txnstate_cases::put;
        put(
            w.txn_log(3, tp),
            START,
            APP,
            tv2((PID, EXHAUSTED), ONGOING, ORDERS, (START, START), no),
        );
        let data = Producer::transactional(PID, EXHAUSTED);
        produce(w.part(1, "orders", 0), data, 2, START + 100);
        produce(w.part(2, "orders", 1), data, 2, START + 200);
        let prepare = tv2(
            (PID, i16::MAX),
            PREPARE_COMMIT,
            ORDERS,
            (START + SEC, START),
            (-1, next),
        );
        put(w.txn_log(3, tp), START + SEC, APP, prepare);
        let v = w.write().check_with(opts(START + 2 * SEC, None));
        for (name, fs) in reports(&v) {
            let got: Vec<_> = verdicts(&fs)
                .into_iter()
                .filter(|(k, _, _)| *k == Kind::ProducerStuckAtExhaustedEpoch)
                .collect();
            assert_eq!(got, want, "{name} next {next}");
        }
    }
}
