//! `__transaction_state` after months: the cleaner and the expiry of idle transactional
//! ids, coordinator failovers, producer-id rotations.

use super::{DAY, MIN, T0, Tp, World, ends, write_and_check};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::state;

const ORDERS: Tp = ("orders", 0);
const SHIPMENTS: Tp = ("shipments", 2);

/// Twenty days of three transactional ids, the coordinator log as the cleaner leaves it.
///
/// * `gone-app` (producer 2000) committed on day 0 and was idle past
///   `transactional.id.expiration.ms` (7 days): `TransactionStateManager.removeExpiredTransactionalIds`
///   wrote its tombstone (only ids in Empty/Complete* are expired, `collectExpiredTransactionalIds`),
///   and the cleaner removed its values, then the tombstone itself after `delete.retention.ms`
///   (`LogCleaner`'s `Cleaner.shouldRetainRecord`): nothing of it is left.
/// * `old-app` (producer 3000) aborted on day 1, expired on day 9: its tombstone is still
///   there (younger than `delete.retention.ms` when the cleaner ran), its values gone.
/// * `orders-app` (producer 4000) restarted twice (`InitProducerId`:
///   `prepareIncrementProducerEpoch`, epochs 5 → 6 → 7): the cleaned part holds its latest value
///   as of the cleaning only (`Complete*` at epoch 6); the head the cleaner has not reached
///   holds its history since.
///
/// The data partitions keep every transaction of the three producers with their markers
/// (the data topics are not compacted and retention has not reached them). Kafka loads this
/// (`TransactionStateManager.loadTransactionsForTxnTopicPartition` keeps the latest value per
/// key, a tombstone removes it) and the data partitions are closed: nothing to report.
/// Twin: `old-app`'s last abort never reached `orders-0` (no marker there): its transaction
/// stays open for 19 days, a hanging transaction (`hanging_transaction`, error).
#[test]
fn txn_state_after_the_cleaner_and_the_expiry_of_idle_ids() {
    for twin in [false, true] {
        let mut w = World::new(50);
        let gone = Producer::transactional(2000, 0);
        let old = Producer::transactional(3000, 2);
        let app = Producer::transactional(4000, 5);
        // day 0–1: the writes whose coordinator values the cleaner removed
        w.txn_data_only(gone, &[ORDERS], true, 0);
        w.clock = T0 + DAY;
        w.cleaned("old-app", 4);
        w.txn_maybe_unmarked("old-app", old, &[ORDERS, SHIPMENTS], twin.then_some(ORDERS));
        w.clock = T0 + 2 * DAY;
        w.cleaned("orders-app", 30);
        for _ in 0..5 {
            w.txn_data_only(app, &[ORDERS, SHIPMENTS], true, 0);
            w.clock += 6 * 3_600_000;
        }
        let app = app.bumped();
        let start = w.clock;
        w.txn_data_only(app, &[ORDERS], false, 0);
        // the cleaned part keeps orders-app's value as of the cleaning
        let done = World::value(4000, 6, state::COMPLETE_ABORT, &[], false);
        w.put("orders-app", done, start);
        // day 9: old-app expired (its tombstone kept); the cleaner ran after it
        w.clock = T0 + 9 * DAY;
        w.tombstones(&["old-app"]);
        // day 12 on, the uncleaned head: a restart (epoch 7) and more transactions
        w.clock = T0 + 12 * DAY;
        let app = app.bumped();
        w.init("orders-app", app, false);
        for i in 0..4 {
            w.txn("orders-app", app, &[ORDERS, SHIPMENTS], i != 2, 0);
            w.clock += DAY;
        }
        w.produce(ORDERS, Producer::PLAIN, 3);
        let q = write_and_check(w.log_dir());
        if twin {
            let f = q.assert_reported(
                Kind::HangingTransaction,
                Severity::Error,
                "orders",
                Some(3000),
            );
            assert_eq!(f.partition, 0);
            assert!(q.loud_of(Kind::TransactionStateAnomaly).is_empty());
        } else {
            q.assert_quiet();
            q.assert_merge_equals_scan();
        }
    }
}

impl World {
    /// A TV0/1 transaction of `p` whose coordinator values the cleaner removed since: its
    /// data and markers only.
    fn txn_data_only(&mut self, p: Producer, tps: &[Tp], commit: bool, ce: i32) {
        for &tp in tps {
            self.produce(tp, p, 3);
        }
        self.clock += 300;
        for &tp in tps {
            self.marker(tp, p, commit, ce);
        }
        self.clock += 1_000;
    }

    /// An aborted transaction of `p` (data and markers only), with no marker on `unmarked`.
    fn txn_maybe_unmarked(&mut self, _id: &str, p: Producer, tps: &[Tp], unmarked: Option<Tp>) {
        for &tp in tps {
            self.produce(tp, p, 2);
        }
        self.clock += 300;
        for &tp in tps.iter().filter(|tp| Some(**tp) != unmarked) {
            self.marker(tp, p, false, 0);
        }
        self.clock += 1_000;
    }
}

/// Coordinator failovers over a month: the `__transaction_state` partition of `payments-app`
/// moves from leader epoch 0 to 3 (three elections while the producer was idle) and then to 4
/// in the middle of a commit. Each coordinator writes its markers with its own coordinator
/// epoch (`TransactionMarkerChannelManager.addTxnMarkersToSend` with the
/// `coordinatorEpoch` of the loaded partition). The epoch-3 coordinator writes `PrepareCommit`
/// and delivers the marker to `payments-0`, then loses the partition; the epoch-4
/// coordinator loads the log (`TransactionStateManager.loadTransactionsForTxnTopicPartition`),
/// finds the transaction in `PrepareCommit` and completes it
/// (`TransactionCoordinator.onTransactionLoaded` → `sendTxnMarkersForTransaction`): COMMIT
/// markers at coordinator epoch 4 to both partitions — `payments-0` gets its second COMMIT,
/// an empty one — then `CompleteCommit`. `ProducerAppendInfo.appendEndTxnMarker` accepts a
/// marker whose coordinator epoch is at least the producer entry's (`checkCoordinatorEpoch`)
/// and a marker with no transaction open. Nothing at warning or above (an empty marker is
/// at most info).
/// Twin: the epoch-4 coordinator's marker on `payments-1` carries coordinator epoch 2, below
/// the 3 of the producer's previous marker there — what `checkCoordinatorEpoch` refuses
/// (`TransactionCoordinatorFencedException`): `coordinator_epoch_regression`.
#[test]
fn failovers_raise_the_coordinator_epoch_and_a_loaded_prepare_commit_completes() {
    const P0: Tp = ("payments", 0);
    const P1: Tp = ("payments", 1);
    for twin in [false, true] {
        let id = "payments-app";
        let mut w = World::new(50);
        let p = Producer::transactional(6100, 0);
        w.init(id, p, false);
        w.txn(id, p, &[P0, P1], true, 0);
        w.clock += 10 * DAY;
        w.coord_epoch(id, 3);
        w.txn(id, p, &[P0, P1], true, 3);
        w.clock += DAY;
        // the transaction the failover interrupts
        let start = w.clock;
        w.put(
            id,
            World::value(6100, 0, state::ONGOING, &[P0, P1], false),
            start,
        );
        w.produce(P0, p, 4);
        w.produce(P1, p, 4);
        let (prep, done) = ends(true);
        w.put(id, World::value(6100, 0, prep, &[P0, P1], false), start);
        w.marker(P0, p, true, 3);
        w.clock += 20_000;
        w.coord_epoch(id, 4);
        w.marker(P0, p, true, 4);
        w.marker(P1, p, true, if twin { 2 } else { 4 });
        w.put(id, World::value(6100, 0, done, &[], false), start);
        w.clock += 5 * MIN;
        w.txn(id, p, &[P0, P1], false, 4);
        w.txn(id, p, &[P1], true, 4);
        let q = write_and_check(w.log_dir());
        if twin {
            let f = q.assert_reported(
                Kind::CoordinatorEpochRegression,
                Severity::Warning,
                "payments",
                Some(6100),
            );
            assert_eq!(f.partition, 1);
        } else {
            q.assert_quiet();
        }
    }
}

/// Producer-id rotation over the years, under TV0/1. `rotating-app`'s producer 9000 reached
/// epoch 32766 through restarts; its next `InitProducerId` finds the epoch exhausted
/// (`TransactionMetadata.isProducerEpochExhausted`: `>= Short.MAX_VALUE - 1`) and rotates
/// (`TransactionCoordinator.handleInitProducerId` → `prepareProducerIdRotation`): `Empty`
/// with producer 9001 at epoch 0, whose transactions follow. `returning-app`'s producer 9200
/// was idle past `transactional.id.expiration.ms` and expired (tombstone,
/// `removeExpiredTransactionalIds`); when the application came back, `handleInitProducerId`
/// created new metadata with a new producer id (9300, `Empty` at epoch 0). The data
/// partitions keep the old producers' transactions. Nothing to report.
/// Twin: the last restart and the rotation never happened — the coordinator log goes from
/// producer 9000's `CompleteCommit` at epoch 32765 (not exhausted) straight to an `Ongoing` of
/// producer 9001, which no transition of `TransactionMetadata` writes (`pid_change`).
/// (klogscan accepts that jump after an exhausted epoch even in v0 values, where Kafka's
/// rotation always goes through `Empty`; lenient, not a false alarm.)
#[test]
fn producer_id_rotation_and_expiry_leave_the_old_producers_data() {
    const A: Tp = ("ledger", 0);
    for twin in [false, true] {
        let mut w = World::new(50);
        let old = Producer::transactional(9000, 32765);
        w.init("rotating-app", old, false);
        w.txn("rotating-app", old, &[A], true, 0);
        let old = if twin {
            old
        } else {
            w.init("rotating-app", old.bumped(), false);
            old.bumped()
        };
        w.txn("rotating-app", old, &[A], false, 0);
        w.txn("rotating-app", old, &[A], true, 0);
        w.clock += 3 * DAY;
        let new = Producer::transactional(9001, 0);
        if !twin {
            w.init("rotating-app", new, false);
        }
        w.txn("rotating-app", new, &[A], true, 0);
        w.txn("rotating-app", new, &[A], true, 0);
        // returning-app: used, expired, back with a new producer id
        let gone = Producer::transactional(9200, 4);
        w.init("returning-app", gone, false);
        w.txn("returning-app", gone, &[A], true, 0);
        w.clock += 8 * DAY;
        w.tombstones(&["returning-app"]);
        w.clock += 2 * DAY;
        let back = Producer::transactional(9300, 0);
        w.init("returning-app", back, false);
        w.txn("returning-app", back, &[A], true, 0);
        w.txn("rotating-app", new, &[A], false, 0);
        let q = write_and_check(w.log_dir());
        if twin {
            let f = q.assert_reported(
                Kind::TransactionStateAnomaly,
                Severity::Warning,
                "__transaction_state",
                None,
            );
            assert_eq!(f.evidence["anomaly"], "pid_change", "{f:#?}");
        } else {
            q.assert_quiet();
        }
    }
}
