//! KAFKA-19999 (apache/kafka PR #21176, December 2025: Kafka 4.3): a marker the coordinator
//! sends again after its first copy was written.

use super::*;
use crate::kafka_txnstate_cases::{World, marker, partition_for, produce, put};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::state::*;

const APP: &str = "app";
const ORDERS: &[(&str, &[i32])] = &[("orders", &[0, 1])];

/// `ProducerStateManagerTest.testIdempotentTransactionMarkerRetryTV2` (KAFKA-19999): under
/// TV2 the COMMIT of producer 5's transaction (data at epoch 4) goes out at epoch 5; the
/// coordinator fails over before it hears back, and the new one (coordinator epoch 1)
/// loads PrepareCommit and sends both markers again. `orders-0` already holds epoch 5's
/// COMMIT: since 4.3 `ProducerAppendInfo.checkProducerEpoch` accepts the same marker at the
/// producer's current epoch with no transaction open (a 4.2 leader's strict TV2 check,
/// KIP-1228, refused it: the livelock KAFKA-19999 fixes), and it closes nothing. On disk:
/// `orders-0` holds two COMMITs at epoch 5 (coordinator epochs 0 and 1), `orders-1` one;
/// CompleteCommit follows. Nothing at warning or above in `scan`, `verify` and the merge;
/// the retry is one `marker_without_transaction` (info) at its offset. Near miss: the
/// second marker is an ABORT (a different outcome at the same epoch, not a retry):
/// `conflicting_markers` (error).
#[test]
fn a_retried_tv2_marker_at_the_bumped_epoch_closes_nothing() {
    for retry_commits in [true, false] {
        let tp = partition_for(APP, 50);
        let mut w = World::new();
        let (start, prep) = (T0 + 10 * SEC, T0 + 11 * SEC);
        let v = |e, s, ps: &[(&str, &[i32])], t| tv2((5, e), s, ps, (t, start), (-1, -1));
        put(w.txn_log(3, tp), start, APP, v(4, ONGOING, ORDERS, start));
        let data = Producer::transactional(5, 4);
        produce(w.part(1, "orders", 0), data, 2, start + 100);
        produce(w.part(2, "orders", 1), data, 2, start + 200);
        put(
            w.txn_log(3, tp),
            prep,
            APP,
            v(5, PREPARE_COMMIT, ORDERS, prep),
        );
        let bumped = data.with_epoch(5);
        marker(w.part(1, "orders", 0), bumped, true, 0, prep + 10);
        // the new coordinator (epoch 1) loads PrepareCommit and sends both markers again
        let again = prep + 30 * SEC;
        marker(w.part(1, "orders", 0), bumped, retry_commits, 1, again);
        marker(w.part(2, "orders", 1), bumped, true, 1, again + 10);
        w.txn_log(3, tp).set_leader_epoch(1);
        put(
            w.txn_log(3, tp),
            again + 20,
            APP,
            v(5, COMPLETE_COMMIT, &[], again + 20),
        );
        let v = w.write().check_with(opts(again + 60 * SEC, None));
        for (name, fs) in reports(&v) {
            let on_orders0: Vec<_> = (fs.iter())
                .filter(|f| f.topic == "orders" && f.partition == 0)
                .map(|f| (f.kind, f.severity, f.offset))
                .collect();
            let want = if retry_commits {
                vec![(Kind::MarkerWithoutTransaction, Severity::Info, Some(3))]
            } else {
                vec![(Kind::ConflictingMarkers, Severity::Error, Some(3))]
            };
            assert_eq!(on_orders0, want, "{name} retry_commits {retry_commits}");
            let loud: Vec<_> = verdicts(&fs)
                .into_iter()
                .filter(|(k, _, _)| *k != Kind::ConflictingMarkers)
                .collect();
            assert_eq!(loud, vec![], "{name} retry_commits {retry_commits}");
        }
    }
}
