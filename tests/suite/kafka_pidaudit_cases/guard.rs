//! `VerificationGuardTest`: since 3.6 a partition leader appends a transactional batch only
//! under the `VerificationGuard` its own AddPartitionsToTxn verification left
//! (`UnifiedLog.maybeStartTransactionVerification`, `ProducerStateManager`'s
//! `VerificationStateEntry`), a guard equal only to itself: a batch retried under an
//! earlier transaction's guard, or with none (`SENTINEL`), is refused
//! (`INVALID_TXN_STATE`). What it leaves on disk: every transaction's data inside the
//! window its coordinator listed the partition for.

use super::*;
use crate::kafka_quiet_cluster_cases::CLUSTER;
use klogscan::testkit::Producer;
use klogscan::testkit::txns::{Cluster, Txn};

/// `VerificationGuardTest.testVerify`, `VerificationGuardTest.testEqualsAndHashCode`: two
/// transactions of producer 3 on `topic1`-0, each verified (its own AddPartitions, its own
/// guard) and committed: nothing raised. Near miss: a batch of the first transaction
/// retried after its COMMIT (its guard already gone with the transaction, no new
/// verification: the leader refuses it) appended after all — data no coordinator will ever
/// close: `hanging_transaction`.
#[test]
fn a_batch_needs_its_own_transactions_guard() {
    let shape = |stale_retry: bool| {
        let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
        let p3 = Producer::transactional(3, 0);
        c.run(&Txn::new("guarded", p3, &[("topic1", 0)]));
        if stale_retry {
            c.data(("topic1", 0), p3, 1);
        }
        c.advance(60_000);
        c.run(&Txn::new("guarded", p3, &[("topic1", 1)]));
        c.advance(20 * 60_000);
        c.plain(("topic1", 1), 1);
        run(&c)
    };
    let (_b, v) = shape(false);
    v.assert_no_alarm();
    let pr = part(&v.scan, "topic1", 0);
    assert_eq!(pr.last_stable_offset, pr.log_end_offset);
    // near miss: the stale batch on disk
    let (_b, v) = shape(true);
    assert!(
        has(&v.scan.findings, Kind::HangingTransaction, 3),
        "{:#?}",
        all(&v)
    );
}
