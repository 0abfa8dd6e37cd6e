//! What the coordinator does with a transaction its load finds unfinished:
//! `TransactionStateManager.loadTransactionsForTxnTopicPartition` hands every id whose
//! latest value is PrepareCommit/PrepareAbort to the marker sender (COMMIT or ABORT
//! markers to each partition the value lists, at the coordinator epoch of this load, then
//! the Complete record), and nothing else: an Ongoing transaction waits for its client or
//! its timeout, a Complete* one is done.
//!
//! The application's transactional id `app` (producer 4000, epoch 2, TV0/1, timeout 60 s)
//! writes to `orders-0` (led by broker 1) and `orders-1` (broker 2); its coordinator's
//! partition of `__transaction_state` is on broker 3.

use super::*;
use klogscan::testkit::txnlog::state::*;

const APP: &str = "app";
const PID: (i64, i16) = (4000, 2);
const TIMEOUT: i32 = 60_000;
/// The transaction's start (its Ongoing record), and the Prepare record's time.
const START: i64 = T0 + 10 * SEC;
const PREPARE: i64 = START + SEC;
const ORDERS: &[(&str, &[i32])] = &[("orders", &[0, 1])];

fn producer() -> Producer {
    Producer::transactional(PID.0, PID.1)
}

/// What happened after the Prepare record.
#[derive(Clone, Copy, PartialEq, Debug)]
enum After {
    /// Nothing: the coordinator moved (or its broker stopped) before any marker.
    Nothing,
    /// The new coordinator loaded the partition at coordinator epoch 1 and completed the
    /// transaction: the markers at epoch 1 (30 s later), then the Complete record.
    Loaded,
    /// The same coordinator wrote the marker to `orders-0` and the Complete record; the
    /// marker to `orders-1` was lost.
    CompletedOneMarkerLost,
}

/// `app`'s transaction, ending as `after` says; `commit`: PrepareCommit, else
/// PrepareAbort.
fn world(commit: bool, after: After) -> World {
    let (prepare, complete) = if commit {
        (PREPARE_COMMIT, COMPLETE_COMMIT)
    } else {
        (PREPARE_ABORT, COMPLETE_ABORT)
    };
    let tp = partition_for(APP, 50);
    let mut w = World::new();
    let log = w.txn_log(3, tp);
    put(log, T0, APP, value(PID, EMPTY, &[], (T0, -1), TIMEOUT));
    put(
        log,
        START,
        APP,
        value(PID, ONGOING, ORDERS, (START, START), TIMEOUT),
    );
    produce(w.part(1, "orders", 0), producer(), 2, START + 100);
    produce(w.part(2, "orders", 1), producer(), 2, START + 200);
    put(
        w.txn_log(3, tp),
        PREPARE,
        APP,
        value(PID, prepare, ORDERS, (PREPARE, START), TIMEOUT),
    );
    let complete_at = |w: &mut World, t: i64| {
        let v = value(PID, complete, &[], (t, START), TIMEOUT);
        put(w.txn_log(3, tp), t, APP, v);
    };
    match after {
        After::Nothing => {}
        After::Loaded => {
            let t = PREPARE + 30 * SEC;
            marker(w.part(1, "orders", 0), producer(), commit, 1, t);
            marker(w.part(2, "orders", 1), producer(), commit, 1, t + 10);
            w.txn_log(3, tp).set_leader_epoch(1);
            complete_at(&mut w, t + 20);
        }
        After::CompletedOneMarkerLost => {
            marker(w.part(1, "orders", 0), producer(), commit, 0, PREPARE + 10);
            complete_at(&mut w, PREPARE + 20);
        }
    }
    w
}

/// `TransactionStateManagerTest.shouldWriteTxnMarkersForTransactionInPreparedCommitState` and
/// `TransactionStateManagerTest.shouldWriteTxnMarkersForTransactionInPreparedAbortState`: a
/// partition of `__transaction_state` whose last value of an id is PrepareCommit (PrepareAbort)
/// is loaded with that id in that state, and the load passes it to the marker sender with the
/// COMMIT (ABORT) result (`TransactionStateManager.loadTransactionsForTxnTopicPartition`
/// collects the Prepare* ids after `addLoadedTransactionsToCache`, takes the partition out of
/// the loading set, then calls `sendTxnMarkers` for each).
///
/// On disk: `app`'s Prepare record lists `orders-0` and `orders-1`, whose data have no marker
/// yet. A minute later, the coordinator holds `app` in Prepare* listing both, and both
/// partitions' open transactions are the coordinator's to close: `markers_pending`, not hanging
/// (find-hanging drops them: `describe` lists the partitions), nothing at warning or above.
/// Twenty minutes later the markers are overdue (`transaction_stuck_in_prepare`, "markers not
/// delivered"), but the transaction is still the coordinator's: never hanging, never an abort
/// by hand — a reload of the coordinator's partition sends them. Once the loading coordinator
/// (epoch 1) has written the markers and the Complete record, nothing is open and nothing is
/// reported.
#[test]
fn a_transaction_left_in_prepare_is_completed_by_the_load() {
    for commit in [true, false] {
        let state = if commit {
            "PrepareCommit"
        } else {
            "PrepareAbort"
        };
        let b = world(commit, After::Nothing).write();
        let o = opts(PREPARE + MIN, None);
        let vw = view(&b, &o);
        let app = held(&vw)[APP];
        assert_eq!(app.state.name(), state);
        assert_eq!(app.partitions, [("orders".into(), 0), ("orders".into(), 1)]);
        let v = b.check_with(o);
        for (name, fs) in reports(&v) {
            assert_no_loud(name, &fs);
            for n in [0, 1] {
                let (f, c) = confirmation(&fs, "orders", n);
                assert_eq!(f.kind, Kind::OpenTransaction, "{name} {state}");
                assert_eq!(c["verdict"], "markers_pending", "{name} {state}: {c}");
                assert_eq!(
                    (c["hanging"].as_bool(), c["confirmed"].as_bool()),
                    (Some(false), Some(true))
                );
                assert_eq!(c["transactional_id"], APP);
            }
        }
        let v = world(commit, After::Nothing)
            .write()
            .check_with(opts(PREPARE + 20 * MIN, None));
        for (name, fs) in reports(&v) {
            let stuck = of_kind(&fs, Kind::TransactionStuckInPrepare);
            assert_eq!(
                stuck.len(),
                1,
                "{name} {state}: {:#?}",
                lines(fs.iter().copied())
            );
            assert!(
                stuck[0].message.contains("markers not delivered"),
                "{}",
                stuck[0].message
            );
            for n in [0, 1] {
                let (f, c) = confirmation(&fs, "orders", n);
                assert_eq!(c["verdict"], "markers_pending", "{name} {state}: {c}");
                assert_eq!(c["hanging"], false, "{name} {state}");
                let fix = f.remediation.as_deref().unwrap_or("");
                assert!(fix.contains("do not abort"), "{name} {state}: {fix}");
            }
        }
        let v = world(commit, After::Loaded)
            .write()
            .check_with(opts(PREPARE + 20 * MIN, None));
        for (name, fs) in reports(&v) {
            assert_no_loud(name, &fs);
            let open: Vec<_> = (fs.iter())
                .filter(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
                .collect();
            assert!(open.is_empty(), "{name} {state}: {open:#?}");
        }
        v.assert_clean_start();
    }
}

/// Near miss of [`a_transaction_left_in_prepare_is_completed_by_the_load`]: the Complete
/// record was written, but the marker to `orders-1` was lost. The load holds `app` in
/// Complete* and sends nothing for it (`loadTransactionsForTxnTopicPartition` completes
/// Prepare* values only), so nothing will ever close `orders-1`: hanging (`markers_lost`)
/// and `transaction_marker_missing`, in `scan`, `verify` and the merge alike; `orders-0`
/// is closed.
#[test]
fn a_completed_transaction_gets_no_markers_from_the_load() {
    for commit in [true, false] {
        let b = world(commit, After::CompletedOneMarkerLost).write();
        let o = opts(PREPARE + 20 * MIN, None);
        let want = if commit {
            "CompleteCommit"
        } else {
            "CompleteAbort"
        };
        assert_eq!(held(&view(&b, &o))[APP].state.name(), want);
        let v = b.check_with(o);
        for (name, fs) in reports(&v) {
            let (f, c) = confirmation(&fs, "orders", 1);
            assert_eq!(f.kind, Kind::HangingTransaction, "{name}");
            assert_eq!(c["verdict"], "markers_lost", "{name}: {c}");
            assert_eq!(c["hanging"], true);
            let missing = of_kind(&fs, Kind::TransactionMarkerMissing);
            let at: Vec<_> = missing
                .iter()
                .map(|f| (f.topic.as_str(), f.partition))
                .collect();
            assert_eq!(at, [("orders", 1)], "{name}");
            assert!(
                !fs.iter().any(|f| f.topic == "orders"
                    && f.partition == 0
                    && f.kind == Kind::HangingTransaction),
                "{name}"
            );
        }
    }
}

/// `TransactionStateManagerTest.testSuccessfulReimmigration`: the same partition loaded
/// again at a higher coordinator epoch without being unloaded in between replaces the
/// cached entry, whose coordinator epoch is the new one
/// (`TransactionStateManager.addLoadedTransactionsToCache`); the Prepare* transaction is
/// handed to the marker sender again at that epoch.
///
/// On disk: the load at coordinator epoch 1 wrote the COMMIT to `orders-0` only; the load
/// at epoch 2 re-sent it to both partitions (`orders-0` gets a second COMMIT, with no data,
/// at epoch 2) and wrote the Complete record. The markers' coordinator epochs only rise:
/// nothing open, nothing at warning or above. Near miss: the epoch-1 coordinator's COMMIT
/// lands on `orders-1` after the epoch-2 one — the partition leader refuses a marker of
/// an older coordinator epoch (`ProducerAppendInfo.checkCoordinatorEpoch` throws
/// `TransactionCoordinatorFencedException` for a client append), so those bytes are not
/// the coordinator's: `coordinator_epoch_regression`.
#[test]
fn a_reload_at_a_higher_coordinator_epoch_resends_the_markers() {
    for zombie in [false, true] {
        let tp = partition_for(APP, 50);
        let mut w = world(true, After::Nothing);
        let t = PREPARE + 30 * SEC;
        marker(w.part(1, "orders", 0), producer(), true, 1, t);
        marker(w.part(1, "orders", 0), producer(), true, 2, t + 10 * SEC);
        marker(
            w.part(2, "orders", 1),
            producer(),
            true,
            2,
            t + 10 * SEC + 10,
        );
        if zombie {
            marker(w.part(2, "orders", 1), producer(), true, 1, t + 11 * SEC);
        }
        w.txn_log(3, tp).set_leader_epoch(2);
        let done = t + 12 * SEC;
        put(
            w.txn_log(3, tp),
            done,
            APP,
            value(PID, COMPLETE_COMMIT, &[], (done, START), TIMEOUT),
        );
        let v = w.write().check_with(opts(PREPARE + 20 * MIN, None));
        for (name, fs) in reports(&v) {
            let open: Vec<_> = (fs.iter())
                .filter(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
                .collect();
            assert!(open.is_empty(), "{name}: {open:#?}");
            let regressions: Vec<_> = of_kind(&fs, Kind::CoordinatorEpochRegression)
                .iter()
                .map(|f| (f.topic.as_str(), f.partition))
                .collect();
            if zombie {
                assert_eq!(regressions, [("orders", 1)], "{name}");
            } else {
                assert_no_loud(name, &fs);
            }
        }
    }
}
