//! Which loaded transactions the coordinator aborts on timeout:
//! `TransactionStateManager.timedOutTransactions` picks the Ongoing ones (no pending
//! transition) whose start plus timeout lies before now, and
//! `TransactionCoordinator.abortTimedOutTransactions` fences each
//! (`TransactionMetadata.prepareFenceProducerEpoch`) and aborts it, every
//! `transaction.abort.timed.out.transaction.cleanup.interval.ms` (10 s). klogscan's
//! reading of the same bytes: an Ongoing value still there well past its deadline
//! (timeout + 5 min) means nobody aborted it (`ongoing_past_timeout`), and the data
//! partitions' open transactions of such an id keep their severity, while those of an id
//! inside its deadline are the coordinator's to end (`open_transaction`, downgraded).

use super::*;
use klogscan::testkit::txnlog::state::*;

/// The time every transaction of [`only_ongoing_transactions_past_their_timeout_are_aborted`]
/// started, and the reference time: 305 s later.
const S: i64 = T0;
const NOW: i64 = S + 305 * SEC;

/// `TransactionStateManagerTest.shouldOnlyConsiderTransactionsInTheOngoingStateToAbort`
/// (and `TransactionMetadataTest.testTolerateTimeShiftDuringAddPartitions`, whose second
/// AddPartitions keeps the start time): six ids loaded at once, all started at `S` with
/// a 1 s timeout — "ongoing", "prepare-commit", "prepare-abort", "complete-commit",
/// "complete-abort" — but "not-expiring" with 10 s; the coordinator's timeout check
/// selects only "ongoing" (`TransactionStateManager.timedOutTransactions`: Ongoing, and
/// start + timeout before now). Here the reference time is 305 s after `S`, past the
/// 1 s timeout + klogscan's 5 min margin but not past 10 s + 5 min, and "added-late"
/// (1 s, started at `S`) added a partition at `S` + 300 s: the deadline counts from the
/// start, which a later AddPartitions does not move (`TransactionMetadata.
/// prepareAddPartitions` keeps `txnStartTimestamp` once Ongoing). "shifted" (60 s,
/// started 10 s before the reference time) added its second partition with an update
/// time 1 ms before its start (the clock stepped back; tolerated).
///
/// klogscan, in `scan`, `verify` and the merge: `ongoing_past_timeout` for "ongoing" and
/// "added-late" only; their data's open transactions (idle past `--hanging-after` 60 s)
/// stay `hanging_transaction` (the coordinator lists the partition, `alive`, but is not
/// aborting it), while "not-expiring"'s is downgraded to `open_transaction`. The near
/// misses are the other ids: Prepare*, Complete*, a longer timeout, a recent start.
#[test]
fn only_ongoing_transactions_past_their_timeout_are_aborted() {
    let mut w = World::new();
    let late = S + 300 * SEC;
    let coord = |w: &mut World, id: &str, t: i64, v: TxnValue| {
        put(w.txn_log(1, partition_for(id, 50)), t, id, v);
    };
    let o = |n: &'static [i32]| -> [(&'static str, &'static [i32]); 1] { [("orders", n)] };
    coord(
        &mut w,
        "ongoing",
        S,
        value((0, 0), ONGOING, &o(&[0]), (S, S), 1000),
    );
    let v = value((1, 0), ONGOING, &o(&[1]), (S, S), 10_000);
    coord(&mut w, "not-expiring", S, v);
    let ended = [
        ("prepare-commit", PREPARE_COMMIT, None),
        ("prepare-abort", PREPARE_ABORT, None),
        ("complete-commit", PREPARE_COMMIT, Some(COMPLETE_COMMIT)),
        ("complete-abort", PREPARE_ABORT, Some(COMPLETE_ABORT)),
    ];
    for (i, (id, prepare, complete)) in ended.into_iter().enumerate() {
        let pid = (2 + i as i64, 0);
        let other: &[(&str, &[i32])] = &[("other", &[0])];
        coord(&mut w, id, S, value(pid, ONGOING, other, (S, S), 1000));
        coord(
            &mut w,
            id,
            late,
            value(pid, prepare, other, (late, S), 1000),
        );
        if let Some(c) = complete {
            coord(
                &mut w,
                id,
                late + 10,
                value(pid, c, &[], (late + 10, S), 1000),
            );
        }
    }
    let v = value((6, 0), ONGOING, &o(&[2]), (S, S), 1000);
    coord(&mut w, "added-late", S, v);
    let v = value((6, 0), ONGOING, &o(&[2, 3]), (late, S), 1000);
    coord(&mut w, "added-late", late, v);
    let t = NOW - 10 * SEC;
    coord(
        &mut w,
        "shifted",
        t,
        value((7, 0), ONGOING, &o(&[4]), (t, t), 60_000),
    );
    let v = value((7, 0), ONGOING, &o(&[4, 5]), (t - 1, t), 60_000);
    coord(&mut w, "shifted", t + 1, v);
    for (n, pid, at) in [(0, 0, S), (1, 1, S), (2, 6, S), (3, 6, late), (4, 7, t)] {
        produce(
            w.part(2, "orders", n),
            Producer::transactional(pid, 0),
            2,
            at + 10,
        );
    }
    let v = w.write().check_with(opts(NOW, Some(MIN)));
    for (name, fs) in reports(&v) {
        let past: Vec<_> = (anomalies(&fs).into_iter())
            .filter(|(a, _)| a == "ongoing_past_timeout")
            .map(|(_, id)| id)
            .collect();
        assert_eq!(past, ["added-late", "ongoing"], "{name}");
        assert_eq!(anomalies(&fs).len(), 2, "{name}: {:#?}", anomalies(&fs));
        for (n, id, kind, downgraded) in [
            (0, "ongoing", Kind::HangingTransaction, false),
            (1, "not-expiring", Kind::OpenTransaction, true),
            (2, "added-late", Kind::HangingTransaction, false),
        ] {
            let (f, c) = confirmation(&fs, "orders", n);
            assert_eq!(
                (f.kind, c["verdict"].as_str()),
                (kind, Some("alive")),
                "{name} {id}"
            );
            assert_eq!(c["transactional_id"], id);
            assert_eq!(c["downgraded"], downgraded, "{name} {id}");
        }
    }
}

/// `TransactionMetadataTest.testFenceProducerNotAllowedIfItWouldOverflow` (and
/// `TransactionMetadataTest.testFenceProducerAfterEpochsExhausted`, its near miss): the timeout
/// abort starts with an epoch fence, which the 2024-10 coordinator refuses at epoch 32767
/// (`TransactionMetadata.prepareFenceProducerEpoch` throws), so an Ongoing transaction at 32767
/// that `timedOutTransactions` selects is never aborted; one at 32766 is fenced to 32767 and
/// aborted. On disk (TV2, a 4.0–4.2 coordinator): the exhausted epoch's commit completed
/// without rotating the producer id (KAFKA-20310), and the client's next transaction runs at
/// 32767; ten minutes later it is still Ongoing. klogscan: `ongoing_past_timeout` and
/// `producer_stuck_at_exhausted_epoch` (error). Near miss: the rotation written (CompleteCommit
/// of producer 51 at epoch 0) and the next transaction there: only `ongoing_past_timeout`.
#[test]
fn an_ongoing_transaction_at_the_last_epoch_cannot_be_fenced() {
    for rotated in [false, true] {
        let mut w = World::new();
        let id = "x";
        let tp = partition_for(id, 50);
        let o0: &[(&str, &[i32])] = &[("orders", &[0])];
        let tv2 = |v: TxnValue| v.v1(-1, -1, 2);
        let next = if rotated { (51, 0) } else { (50, 32767) };
        let log = w.txn_log(1, tp);
        put(
            log,
            S,
            id,
            tv2(value((50, 32766), ONGOING, o0, (S, S), 60_000)),
        );
        let v = value((50, 32767), PREPARE_COMMIT, o0, (S + 100, S), 60_000);
        put(log, S + 100, id, tv2(v));
        let v = value(next, COMPLETE_COMMIT, &[], (S + 200, S), 60_000);
        put(log, S + 200, id, tv2(v));
        let t = S + SEC;
        put(log, t, id, tv2(value(next, ONGOING, o0, (t, t), 60_000)));
        let data = w.part(2, "orders", 0);
        produce(data, Producer::transactional(50, 32766), 2, S + 10);
        marker(data, Producer::transactional(50, 32767), true, 0, S + 150);
        produce(data, Producer::transactional(next.0, next.1), 2, t + 10);
        let v = w.write().check_with(opts(t + 10 * MIN, None));
        for (name, fs) in reports(&v) {
            let a = anomalies(&fs);
            assert_eq!(a, [("ongoing_past_timeout".into(), id.into())], "{name}");
            let stuck = of_kind(&fs, Kind::ProducerStuckAtExhaustedEpoch);
            assert_eq!(
                stuck.len(),
                usize::from(!rotated),
                "{name} rotated {rotated}"
            );
            if let Some(f) = stuck.first() {
                assert_eq!(f.evidence["shape"], "client_holds_max_epoch", "{name}");
            }
        }
    }
}
