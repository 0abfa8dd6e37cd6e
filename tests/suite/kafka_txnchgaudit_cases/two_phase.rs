//! KIP-939 (two-phase commit) as far as the 2026-08 trunk takes it. Its
//! `TransactionCoordinator.handleInitProducerId` takes any timeout when the request enables
//! two-phase commit (`TransactionStateManager.validateTransactionTimeoutMs(enableTwoPC, _)`
//! is true) and stores `Int.MaxValue` in the id's values (`resolvedTxnTimeoutMs`); such a
//! transaction never times out. `keepPreparedTxn` is still refused (UNSUPPORTED_VERSION):
//! `TransactionLogValue` v1 declares `NextProducerEpoch` (tagged field 3) but
//! `TransactionLog.valueToBytes` never sets it and `readTxnRecord` never reads it. The
//! keep-prepared recovery of `TransactionsTest.testProducerCrashAndRecoverWith2PC` and
//! `testProducerIdRotationWithEpochExhaustion` (a later apache/kafka tree; not in the
//! 2026-08 one) is what would write it.

use super::*;
use crate::kafka_txnstate_cases::{MIN, World, partition_for, produce, put};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::state::*;

/// `(kind, severity, offset, evidence.anomaly)` of every finding of `scan`, `verify` and the
/// merge (which must agree) of id `xa`'s transaction: Empty then Ongoing at 50/4 (TV2 v1
/// values with timeout `timeout`, the Ongoing carrying `NextProducerEpoch` `next_epoch`
/// when given), two records on `orders`-0, read three days later.
fn three_days_open(timeout: i32, next_epoch: Option<i16>) -> Vec<(Kind, Severity, Option<i64>)> {
    let tp = partition_for("xa", 50);
    let mut w = World::new();
    let s = T0 + 10 * SEC;
    let o: &[(&str, &[i32])] = &[("orders", &[0])];
    let no = (-1, -1);
    let empty = tv2((50, 4), EMPTY, &[], (T0, -1), no).timeout(timeout);
    put(w.txn_log(3, tp), T0, "xa", empty);
    let mut v = tv2((50, 4), ONGOING, o, (s, s), no).timeout(timeout);
    if let Some(e) = next_epoch {
        v = v.next_epoch(e);
    }
    put(w.txn_log(3, tp), s, "xa", v);
    produce(
        w.part(1, "orders", 0),
        Producer::transactional(50, 4),
        2,
        s + 10,
    );
    let v = w.write().check_with(opts(s + 3 * 24 * 60 * MIN, None));
    let all = reports(&v).map(|(name, fs)| {
        let got: Vec<_> = (fs.iter())
            .map(|f| (f.kind, f.severity, f.offset))
            .collect();
        (name, got)
    });
    for (name, got) in &all[1..] {
        assert_eq!(got, &all[0].1, "{name} against scan");
    }
    all[0].1.clone()
}

/// `TransactionStateManagerTest.testValidateTransactionTimeout`, 2026-08 body (KIP-939:
/// with two-phase commit enabled every timeout is valid, -1 and past the maximum included;
/// the coordinator then stores `Int.MaxValue`). A two-phase-commit transaction open three
/// days is alive: its data an info `open_transaction`, no `ongoing_past_timeout`. The same
/// Ongoing value carrying `NextProducerEpoch` 0 (tag 3, which the 2026-08 coordinator never
/// writes and its load ignores) reads the same: the replay decodes the tag and, as
/// `TransactionLog.readTxnRecord`, builds nothing on it. Near miss: the ordinary 60 s
/// timeout: `ongoing_past_timeout` and the data's `hanging_transaction`.
#[test]
fn a_two_phase_commit_transaction_has_no_timeout_whatever_next_producer_epoch_says() {
    let open = vec![(Kind::OpenTransaction, Severity::Info, Some(0))];
    assert_eq!(three_days_open(i32::MAX, None), open);
    assert_eq!(three_days_open(i32::MAX, Some(0)), open);
    let mut timed_out = three_days_open(60_000, None);
    timed_out.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(
        timed_out,
        vec![
            (Kind::HangingTransaction, Severity::Error, Some(0)),
            (Kind::TransactionStateAnomaly, Severity::Warning, Some(1)),
        ]
    );
}
