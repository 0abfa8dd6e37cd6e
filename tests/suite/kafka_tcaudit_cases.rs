//! Kafka's `TransactionCoordinatorTest` and `TransactionMarkerChannelManagerTest`
//! (core/src/test/scala/unit/kafka/coordinator/transaction/, apache/kafka trunk of 2024-10),
//! the methods no test cited before, read for what each leaves on disk: the values the
//! transaction coordinator appends to `__transaction_state` (`TransactionStateManager.
//! appendTransactionToLog` of each `TxnTransitMetadata` that `TransactionCoordinator.
//! handleInitProducerId`, `handleAddPartitionsToTransaction`, `handleEndTransaction` and
//! `abortTimedOutTransactions` prepare), and the COMMIT/ABORT markers
//! `TransactionMarkerChannelManager` writes to the data partitions before the Complete
//! value. Most of these tests answer a request without writing anything (an error, a
//! retry answered from the cached state); their on-disk shape is then the history the
//! refusal keeps, and the near miss is the write the coordinator refused.
//!
//! Each case writes the files with the testkit through the transaction-state cases'
//! [`World`] (the data partitions `orders-0` on broker 1 and `orders-1` on broker 2, the
//! id's `__transaction_state` partition of 50 on broker 3), runs `scan`, `verify` and the
//! merge of the brokers' `collect` bundles, and asserts klogscan's answer for the shape
//! Kafka writes and for a near miss that flips it. Where klogscan's answer differs from
//! Kafka's the test asserts Kafka's and is `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

mod end;
mod init;
mod markers;

use crate::kafka_quiet_cluster_cases::{T0, Verdict, lines};
use crate::kafka_txnstate_cases::metadata::{assert_legal, assert_refused, empty, history};
use crate::kafka_txnstate_cases::{
    MIN, SEC, World, anomalies, assert_no_loud, confirmation, held, marker, of_kind, opts,
    partition_for, produce, put, reports, tombstones, value, view,
};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::TxnValue;
use klogscan::testkit::txnlog::state::*;

/// The first write of every case.
const S: i64 = T0;
/// The transaction timeout of every case unless it says otherwise.
const TIMEOUT: i32 = 60_000;
const O0: &[(&str, &[i32])] = &[("orders", &[0])];
const O01: &[(&str, &[i32])] = &[("orders", &[0, 1])];

/// A value as a broker at `transaction.version` 2 writes it for a TV2 client's EndTxn
/// (value version 1, `ClientTransactionVersion` 2; the 2024-10 coordinator leaves the
/// previous/next producer ids at −1).
fn tv2(v: TxnValue) -> TxnValue {
    v.v1(-1, -1, 2)
}

/// A value as a broker at `transaction.version` 2 writes an InitProducerId's or an
/// AddPartitions' transition: version 1, `ClientTransactionVersion` 0 (those transitions
/// carry `TransactionVersion.TV_0`, `TransactionMetadata.prepareTransitionTo`).
fn tv2_plain(v: TxnValue) -> TxnValue {
    v.v1(-1, -1, 0)
}

/// The broker of `orders-n`: 1 for `orders-0`, 2 for `orders-1`, 1 for the others.
fn broker_of(n: i32) -> i32 {
    if n == 1 { 2 } else { 1 }
}

/// One transactional id's history and data: values on its partition of 50 on broker 3,
/// data and markers on `orders-n`.
struct Story {
    w: World,
    id: &'static str,
    /// The batch time of the last value (values are appended in order, never back in time).
    t: i64,
}

impl Story {
    fn new(id: &'static str) -> Story {
        Story {
            w: World::new(),
            id,
            t: S,
        }
    }

    /// Append value `v` of the id at its update time.
    fn coord(&mut self, v: TxnValue) -> &mut Story {
        self.t = self.t.max(v.last_update_ms);
        let tp = partition_for(self.id, 50);
        put(self.w.txn_log(3, tp), self.t, self.id, v);
        self
    }

    /// Two records of `p` on `orders-n` at `at`.
    fn data(&mut self, n: i32, p: Producer, at: i64) -> &mut Story {
        produce(self.w.part(broker_of(n), "orders", n), p, 2, at);
        self
    }

    /// The COMMIT (ABORT) marker of `p` on `orders-n` at `at`, by coordinator epoch `ce`.
    fn marker(&mut self, n: i32, p: Producer, commit: bool, ce: i32, at: i64) -> &mut Story {
        marker(self.w.part(broker_of(n), "orders", n), p, commit, ce, at);
        self
    }
}

/// Kinds of the findings on `topic`-`n` in `fs`, sorted.
fn kinds_on(fs: &[&Finding], topic: &str, n: i32) -> Vec<Kind> {
    let mut k: Vec<Kind> = (fs.iter())
        .filter(|f| f.topic == topic && f.partition == n)
        .map(|f| f.kind)
        .collect();
    k.sort();
    k.dedup();
    k
}

/// Every report of `v`: for a near miss, `topic`-`n` holds a finding of each of `kinds`;
/// for Kafka's own case, nothing loud and no open or hanging transaction anywhere.
fn assert_case(v: &Verdict, near_miss: bool, (topic, n): (&str, i32), kinds: &[Kind]) {
    for (name, fs) in reports(v) {
        if near_miss {
            let k = kinds_on(&fs, topic, n);
            assert!(
                kinds.iter().all(|want| k.contains(want)),
                "{name}: {:#?}",
                lines(fs.iter().copied())
            );
        } else {
            assert_no_loud(name, &fs);
            assert_nothing_open(name, &fs);
        }
    }
}

/// No open or hanging transaction anywhere in `fs`.
fn assert_nothing_open(name: &str, fs: &[&Finding]) {
    let open: Vec<&Finding> = (fs.iter().copied())
        .filter(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
        .collect();
    assert!(open.is_empty(), "{name}: {:#?}", lines(open));
}

/// The sub-ids of the `transaction_state_anomaly` findings of `id` in every report of `v`
/// are `want` (sorted).
fn assert_anomalies(v: &Verdict, id: &str, want: &[&str]) {
    for (name, fs) in reports(v) {
        let got: Vec<String> = (anomalies(&fs).into_iter())
            .filter(|(_, i)| i == id)
            .map(|(a, _)| a)
            .collect();
        assert_eq!(got, want, "{name}: {:#?}", lines(fs.iter().copied()));
    }
}
