//! `kafka-transactions.sh abort` on a really hanging transaction: the ABORT marker the
//! admin client writes (`AbortTransactionHandler`: `WriteTxnMarkers` with the producer id,
//! epoch and coordinator epoch `TransactionsCommand.AbortTransactionCommand` took from
//! `DescribeProducers` — the entry's coordinator epoch, 0 when it has none), accepted by the
//! leader as any marker (`ProducerAppendInfo.appendEndTxnMarker`: `checkProducerEpoch`
//! refuses only a lower epoch, `checkCoordinatorEpoch` only a lower coordinator epoch).

use super::{MIN, Quiet, Tp, World, write_and_check};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::state;

const L0: Tp = ("ledger", 0);

/// TV0/1. `ledger-app`'s producer 5000 (epoch 3) commits through the coordinator of leader
/// epoch 2 (markers at coordinator epoch 2); a produce request delayed past the commit lands
/// after the marker and opens a transaction the coordinator knows nothing of (the hanging
/// transaction of KIP-664). Producer 5100's very first transactional batch hangs the same
/// way (no marker ever: its entry has coordinator epoch -1). `find-hanging` lists both after
/// `--max-transaction-timeout` (15 min); 40 minutes in, the operator aborts each with
/// `--start-offset`: ABORT at epoch 3 with coordinator epoch 2 (`producerState.coordinatorEpoch()`),
/// ABORT at epoch 0 with coordinator epoch 0 (`orElse(0)`). `ledger-app` then carries on.
/// The partition is healthy again: nothing at warning or above.
/// Twin: the first abort given by hand (`--producer-id 5000 --producer-epoch 3
/// --coordinator-epoch 1`, the older-broker path) with coordinator epoch 1, below the 2 of the
/// producer's last marker — `checkCoordinatorEpoch` refuses it
/// (`TransactionCoordinatorFencedException`): `coordinator_epoch_regression`.
#[test]
fn admin_abort_of_hanging_tv1_transactions() {
    for twin in [false, true] {
        let id = "ledger-app";
        let mut w = World::new(50);
        w.coord_epoch(id, 2);
        let p = Producer::transactional(5000, 3);
        w.init(id, p, false);
        w.txn(id, p, &[L0, ("ledger", 1)], true, 2);
        // the late batch, after the COMMIT: no Ongoing value
        w.produce(L0, p, 2);
        let first = Producer::transactional(5100, 0);
        w.produce(L0, first, 1);
        w.clock += 40 * MIN;
        w.marker(L0, p, false, if twin { 1 } else { 2 });
        w.marker(L0, first, false, 0);
        w.clock += MIN;
        w.txn(id, p, &[L0, ("ledger", 1)], true, 2);
        let q = write_and_check(w.log_dir());
        if twin {
            let f = q.assert_reported(
                Kind::CoordinatorEpochRegression,
                Severity::Warning,
                "ledger",
                Some(5000),
            );
            assert_eq!(f.partition, 0);
        } else {
            q.assert_quiet();
            assert!(q.loud_of(Kind::HangingTransaction).is_empty());
        }
    }
}

/// TV2 (KIP-890): `stream-app`'s producer 6000 commits twice (data at 4 then 5, markers one
/// epoch up, `TransactionMetadata.prepareAbortOrCommit`), then a transaction at epoch 6 hangs
/// (data the coordinator never listed). `kafka-transactions.sh abort --start-offset` after
/// `idle_ms` writes the ABORT at the producer's current epoch, 6 (`DescribeProducers`'
/// `producerEpoch`), coordinator epoch 0 — accepted (`checkProducerEpoch`: 6 is not below 6).
/// The producer carries on at epoch 6 (the coordinator's `CompleteCommit` is at 6).
/// `abort`: whether the operator aborts (the twin: not, a hanging transaction).
fn tv2_admin_abort(idle_ms: i64, abort: bool) -> Quiet {
    let id = "stream-app";
    let mut w = World::new(50);
    let mut p = Producer::transactional(6000, 4);
    w.init(id, p, true);
    for _ in 0..2 {
        p = tv2_commit(&mut w, id, p);
    }
    w.produce(L0, p, 3);
    w.clock += idle_ms;
    if abort {
        w.marker(L0, p, false, 0);
        w.clock += MIN;
        tv2_commit(&mut w, id, p);
    } else {
        w.produce(("ledger", 1), Producer::PLAIN, 1);
    }
    write_and_check(w.log_dir())
}

/// One TV2 commit of `p` on `ledger-0/1`; returns the producer at its bumped epoch.
fn tv2_commit(w: &mut World, id: &str, p: Producer) -> Producer {
    let tps = [L0, ("ledger", 1)];
    let start = w.clock;
    w.put(
        id,
        World::value(p.id, p.epoch, state::ONGOING, &tps, true),
        start,
    );
    for tp in tps {
        w.produce(tp, p, 2);
    }
    let up = p.bumped();
    w.put(
        id,
        World::value(p.id, up.epoch, state::PREPARE_COMMIT, &tps, true),
        start,
    );
    for tp in tps {
        w.marker(tp, up, true, 0);
    }
    w.put(
        id,
        World::value(p.id, up.epoch, state::COMPLETE_COMMIT, &[], true),
        start,
    );
    w.clock += 1_000;
    up
}

/// The TV2 abort 40 minutes in: klogscan reads the unbumped ABORT after an idle longer than
/// `transaction.max.timeout.ms` as an admin abort and says so at info. Twin: never aborted,
/// a hanging transaction.
#[test]
fn admin_abort_of_a_hanging_tv2_transaction_after_40_minutes() {
    let q = tv2_admin_abort(40 * MIN, true);
    q.assert_quiet();
    let f: Vec<_> = q
        .scan
        .findings
        .iter()
        .filter(|f| f.kind == Kind::MarkerEpochNotBumped)
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].evidence["likely_admin_abort"], true);
    let twin = tv2_admin_abort(40 * MIN, false);
    twin.assert_reported(
        Kind::HangingTransaction,
        Severity::Error,
        "ledger",
        Some(6000),
    );
}

/// The same abort 17 minutes in: `kafka-transactions.sh find-hanging` lists a transaction
/// whose last write is older than `--max-transaction-timeout` (default 15 minutes,
/// `FindHangingTransactionsCommand`: `currentTimeMs - lastTimestamp > maxTransactionTimeoutMs`),
/// so the operator may abort it from minute 15 on, and the leader accepts the ABORT at the
/// producer's current epoch (`ProducerAppendInfo.checkProducerEpoch`, 2025-10 tree too).
/// Nothing at warning or above is due.
#[test]
fn admin_abort_of_a_hanging_tv2_transaction_after_17_minutes() {
    tv2_admin_abort(17 * MIN, true).assert_quiet();
}
