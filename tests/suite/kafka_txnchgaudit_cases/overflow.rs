//! KAFKA-20090 (apache/kafka PR #21469, commit 27102b3 of the 2026-08 trunk, March 2026;
//! in the `4.3` branch: Kafka 4.3) as the 2026-08 bodies of
//! `TransactionMetadataTest.testFenceProducerNotAllowedIfItWouldOverflow` and
//! `TransactionsTest.testRecoveryFromEpochOverflow` state it: a transaction left at the
//! last epoch is aborted and its producer id rotated, where a 2024-10 coordinator could not
//! fence it at all.

use super::*;
use crate::kafka_txnstate_cases::{World, marker, partition_for, produce, put};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::TxnValue;
use klogscan::testkit::txnlog::state::*;

const ORDERS: &[(&str, &[i32])] = &[("orders", &[0])];
const NO: (i64, i64) = (-1, -1);

/// Producer 50 of id `x` (TV2) reaching 32767 the way a 4.0–4.2 coordinator left it (its
/// EndTxn at 32766 committed at 32767 under the same producer id, no rotation), then an
/// Ongoing transaction at 32767 with data on `orders`-0; with `end`, the 4.3 timeout abort:
/// PrepareAbort (or, the near miss, PrepareCommit) at 32767 naming `NextProducerId` 51, its
/// marker at 32767, the Complete of 51 at epoch 0 (`PreviousProducerId` 50).
fn at_the_last_epoch(end: Option<u8>) -> (World, i64) {
    let tp = partition_for("x", 50);
    let mut w = World::new();
    let s = T0 + 10 * SEC;
    let log = w.txn_log(3, tp);
    put(log, s, "x", tv2((50, 32766), ONGOING, ORDERS, (s, s), NO));
    let v = tv2((50, i16::MAX), PREPARE_COMMIT, ORDERS, (s + 100, s), NO);
    put(log, s + 100, "x", v);
    let v = tv2((50, i16::MAX), COMPLETE_COMMIT, &[], (s + 200, s), NO);
    put(log, s + 200, "x", v);
    let t = s + SEC;
    let v = tv2((50, i16::MAX), ONGOING, ORDERS, (t, t), NO);
    put(w.txn_log(3, tp), t, "x", v);
    let d = w.part(1, "orders", 0);
    produce(d, Producer::transactional(50, 32766), 2, s + 10);
    marker(d, Producer::transactional(50, i16::MAX), true, 0, s + 150);
    produce(d, Producer::transactional(50, i16::MAX), 2, t + 10);
    let f = t + 61 * SEC;
    if let Some(state) = end {
        let v = tv2((50, i16::MAX), state, ORDERS, (f, t), (-1, 51));
        put(w.txn_log(3, tp), f, "x", v);
        let commit = state == PREPARE_COMMIT;
        let last = Producer::transactional(50, i16::MAX);
        marker(w.part(1, "orders", 0), last, commit, 0, f + 10);
        let done = if commit {
            COMPLETE_COMMIT
        } else {
            COMPLETE_ABORT
        };
        let v = tv2((51, 0), done, &[], (f + 20, t), (50, -1));
        put(w.txn_log(3, tp), f + 20, "x", v);
    }
    (w, f + 20)
}

/// `TransactionMetadataTest.testFenceProducerNotAllowedIfItWouldOverflow`, 2026-08 body
/// (KAFKA-20090, 4.3): at epoch 32767 `prepareFenceProducerEpoch` no longer throws — it
/// logs and keeps 32767 — and `prepareAbortOrCommit` lets a TV2 PrepareAbort there through
/// unbumped, naming the next producer id (`TransactionCoordinator.abortTimedOutTransactions`
/// → `endTransaction`); the ABORT goes out at 32767 (a 4.3 leader takes a TV2 marker at the
/// producer's own epoch when that is 32767, `ProducerAppendInfo.checkProducerEpoch`), and
/// CompleteAbort moves to producer 51 at 0. The 2024-10 body (nothing written, the
/// transaction left Ongoing) is `kafka_txnstate_cases::timeout::an_ongoing_transaction_at_the_last_epoch_cannot_be_fenced`.
/// On disk: no `epoch_step` for the unbumped PrepareAbort, the ABORT an info
/// `marker_epoch_not_bumped` naming the exhausted epoch, and what the 4.0–4.2 history
/// before it proves (the producer left at 32767: `producer_stuck_at_exhausted_epoch`, its
/// data at 32767: `invalid_producer_fields`). Near miss: a PrepareCommit at 32767 after the
/// Ongoing at 32767 — only the abort is let through (a commit bumps, past Short.MaxValue):
/// `epoch_step`.
#[test]
fn an_ongoing_transaction_at_the_last_epoch_is_aborted_since_4_3() {
    let stuck = (
        Kind::ProducerStuckAtExhaustedEpoch,
        Severity::Error,
        "client_holds_max_epoch".to_string(),
    );
    let fields = (
        Kind::InvalidProducerFields,
        Severity::Warning,
        String::new(),
    );
    let step = (
        Kind::TransactionStateAnomaly,
        Severity::Warning,
        "epoch_step".to_string(),
    );
    for (end, want) in [
        (PREPARE_ABORT, vec![fields.clone(), stuck.clone()]),
        (PREPARE_COMMIT, vec![fields, stuck, step]),
    ] {
        let (w, last) = at_the_last_epoch(Some(end));
        let v = w.write().check_with(opts(last + 60 * SEC, None));
        for (name, fs) in reports(&v) {
            assert_eq!(verdicts(&fs), want, "{name} end {end}");
            let own: Vec<_> = (fs.iter())
                .filter(|f| f.kind == Kind::MarkerEpochNotBumped)
                .map(|f| (f.severity, f.offset))
                .collect();
            assert_eq!(own, vec![(Severity::Info, Some(5))], "{name} end {end}");
        }
    }
}

/// `TransactionsTest.testRecoveryFromEpochOverflow` (2026-08, TV2, transaction timeout
/// 500 ms; KAFKA-20090), what it leaves. Producer `P` = 50 of `test-overflow` aborts one
/// record on `topic1`-0 (data at 0, ABORT at 1); the test then sets the coordinator's
/// in-memory epoch to 32765 (nothing written) and a new instance's InitProducerId writes
/// Empty at 32766; its record at 32766 times out: PrepareAbort at 32767 naming 51, the
/// ABORT at 32767, CompleteAbort of 51 at 0 (`PreviousProducerId` 50); the client's late
/// abort with 50/32766 is a retry of the overflow (nothing written) answered 51/0, and its
/// next record at 51/0 is left open when it closes. A second instance's InitProducerId
/// fences it (PrepareAbort and ABORT at 51/1, CompleteAbort, then Empty at 51/2) and commits
/// the one record the read_committed consumer reads (data at 2, COMMIT at 3). Read with the
/// coordinator's values from that Empty at 32766 on (the id's older values compacted, as a
/// real id reaches 32766 by 32765 transactions): nothing at warning or above, no anomaly;
/// `topic1`-0 decided to its end, three transactions aborted, one committed. Near miss: the
/// test's own coordinator log, holding the first transaction's CompleteAbort at 50/1 right
/// before the Empty at 50/32766 — the in-memory jump no coordinator writes: one
/// `epoch_step` there.
#[test]
fn recovery_from_epoch_overflow() {
    let step = (
        Kind::TransactionStateAnomaly,
        Severity::Warning,
        "epoch_step".to_string(),
    );
    for (whole_log, want) in [(false, vec![]), (true, vec![step])] {
        let (w, last) = recovered_from_overflow(whole_log);
        let v = w.write().check_with(opts(last + 60 * SEC, None));
        for (name, fs) in reports(&v) {
            assert_eq!(verdicts(&fs), want, "{name} whole log {whole_log}");
        }
        for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
            let pr = (r.partitions.iter())
                .find(|p| p.topic == "topic1" && p.partition == 0)
                .unwrap();
            assert_eq!(pr.log_end_offset, Some(8), "{name}");
            assert_eq!(pr.last_stable_offset, Some(8), "{name}");
            let t = &pr.transactions;
            assert_eq!((t.aborted, t.committed), (3, 1), "{name}");
        }
    }
}

/// What `recovery_from_epoch_overflow` describes; `whole_log`: with the first transaction's
/// coordinator values.
fn recovered_from_overflow(whole_log: bool) -> (World, i64) {
    const ID: &str = "test-overflow";
    const T1: &[(&str, &[i32])] = &[("topic1", &[0])];
    let tp = partition_for(ID, 50);
    let mut w = World::new();
    let mut t = T0 + 10 * SEC;
    let mut next = || {
        t += 100;
        t
    };
    let mut coordinator: Vec<(i64, TxnValue)> = Vec::new();
    let mut data: Vec<(i64, Producer, Option<bool>)> = Vec::new();
    let (p, q) = (
        Producer::transactional(50, 0),
        Producer::transactional(51, 0),
    );
    let mut value = |at: i64, (pid, e): (i64, i16), s: u8, links: (i64, i64)| {
        let parts = if matches!(s, EMPTY | COMPLETE_ABORT | COMPLETE_COMMIT) {
            &[][..]
        } else {
            T1
        };
        let v = tv2((pid, e), s, parts, (at, at), links).timeout(500);
        coordinator.push((at, v));
    };
    // The first instance: one record aborted at 50/0 → 50/1.
    if whole_log {
        value(next(), (50, 0), EMPTY, NO);
        value(next(), (50, 0), ONGOING, NO);
    }
    data.push((next(), p, None));
    if whole_log {
        value(next(), (50, 1), PREPARE_ABORT, NO);
    }
    data.push((next(), p.with_epoch(1), Some(false)));
    if whole_log {
        value(next(), (50, 1), COMPLETE_ABORT, NO);
    }
    // The second instance at 32766, aborted by its timeout with the rotation to 51.
    value(next(), (50, 32766), EMPTY, NO);
    value(next(), (50, 32766), ONGOING, NO);
    data.push((next(), p.with_epoch(32766), None));
    value(next(), (50, i16::MAX), PREPARE_ABORT, (-1, 51));
    data.push((next(), p.with_epoch(i16::MAX), Some(false)));
    value(next(), (51, 0), COMPLETE_ABORT, (50, -1));
    // Its next record at 51/0, fenced by the third instance's InitProducerId.
    value(next(), (51, 0), ONGOING, (50, -1));
    data.push((next(), q, None));
    value(next(), (51, 1), PREPARE_ABORT, (50, -1));
    data.push((next(), q.with_epoch(1), Some(false)));
    value(next(), (51, 1), COMPLETE_ABORT, (50, -1));
    value(next(), (51, 2), EMPTY, (50, -1));
    // The third instance commits the one record the consumer reads.
    value(next(), (51, 2), ONGOING, (50, -1));
    data.push((next(), q.with_epoch(2), None));
    value(next(), (51, 3), PREPARE_COMMIT, (50, -1));
    data.push((next(), q.with_epoch(3), Some(true)));
    value(next(), (51, 3), COMPLETE_COMMIT, (50, -1));
    coordinator.sort_by_key(|(at, _)| *at);
    data.sort_by_key(|(at, _, _)| *at);
    for (at, v) in coordinator {
        put(w.txn_log(1, tp), at, ID, v);
    }
    for (at, producer, end) in data {
        let part = w.part(1, "topic1", 0);
        match end {
            None => produce(part, producer, 1, at),
            Some(commit) => marker(part, producer, commit, 0, at),
        }
    }
    (w, t)
}
