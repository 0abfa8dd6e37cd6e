//! Exactly-once source tasks (KIP-618): each task's transactional producer writes its
//! records and its source offsets in one transaction, and a new task generation fences the
//! previous one through `Admin.fenceProducers`.

use super::{MIN, write_and_check};
use crate::kafka_quiet_coordinator_cases::{Tp, World};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::state;

const OUT0: Tp = ("orders-db", 0);
const OUT1: Tp = ("orders-db", 1);
const OFF12: Tp = ("connect-offsets", 12);
const OFF3: Tp = ("connect-offsets", 3);
/// `Worker.taskTransactionalId`: `<group.id>-<connector>-<task>`.
const TASK0: &str = "connect-cluster-jdbc-src-0";
const TASK1: &str = "connect-cluster-jdbc-src-1";
const TASK2: &str = "connect-cluster-jdbc-src-2";

/// A day of `jdbc-src` (two tasks, then three) under exactly-once source support, with the
/// coordinator's `__transaction_state` partitions of the three task ids in the same log dir.
///
/// * Each task's producer (`Worker.taskTransactionalId`, `Worker.exactlyOnceSourceTaskProducerConfigs`)
///   commits one transaction per poll (`transaction.boundary=poll`,
///   `ExactlyOnceWorkerSourceTask.TransactionBoundaryManager`): its records on `orders-db-N`
///   and its source offsets on `connect-offsets-N` (`ExactlyOnceWorkerSourceTask.commitTransaction`
///   flushes the offsets through the task's own producer before `commitTransaction`), one
///   transaction aborted by the connector (`TransactionContext.abortTransaction`,
///   connector-defined boundaries).
/// * The connector is reconfigured to three tasks while task 1 is in a transaction. The
///   leader fences the previous generation before writing the new task count
///   (`DistributedHerder.fenceZombieSourceTasks` → `Worker.fenceZombies` →
///   `Admin.fenceProducers`, one `InitProducerId` without producer id and epoch per task id,
///   `FenceProducersHandler.buildSingleRequest`): task 0, idle, gets its epoch bumped
///   (`TransactionCoordinator.handleInitProducerId`: `prepareIncrementProducerEpoch`, an
///   `Empty` value, no marker); task 1's open transaction is aborted at a fenced epoch
///   (`prepareFenceProducerEpoch`, `PrepareAbort` and ABORT markers one epoch up,
///   `CompleteAbort`), the handler retries on `CONCURRENT_TRANSACTIONS` and bumps it again.
/// * The new generation's producers initialise (`initTransactions`: one more bump each;
///   task 2 is new) and go on.
///
/// Kafka accepts all of it (`ProducerAppendInfo.appendEndTxnMarker` takes a marker whose
/// epoch is above the data's; the next data at a new epoch starts at sequence 0). Nothing
/// at warning or above.
/// Twin: the fenced task 1 (a zombie still at epoch 0) writes one more batch to `orders-db-1`
/// after the fencing ABORT — what the leader refuses (`ProducerAppendInfo.checkProducerEpoch`,
/// `INVALID_PRODUCER_EPOCH`): reported as an error.
#[test]
fn source_task_transactions_and_zombie_fencing() {
    for twin in [false, true] {
        let mut w = World::new(50);
        let t0 = Producer::transactional(8000, 0);
        let t1 = Producer::transactional(8001, 0);
        w.init(TASK0, t0, false);
        w.init(TASK1, t1, false);
        for i in 0..6 {
            w.txn(TASK0, t0, &[OUT0, OFF12], i != 3, 0);
            w.txn(TASK1, t1, &[OUT1, OFF3], true, 0);
            w.clock += 10 * MIN;
        }
        // task 1 mid-transaction when the fencing comes
        let start = w.clock;
        let ongoing = World::value(8001, 0, state::ONGOING, &[OUT1, OFF3], false);
        w.put(TASK1, ongoing, start);
        w.produce(OUT1, t1, 3);
        w.produce(OFF3, t1, 1);
        w.clock += 2_000;
        // Admin.fenceProducers
        w.init(TASK0, t0.bumped(), false);
        let fenced = t1.bumped();
        let v = World::value(8001, 1, state::PREPARE_ABORT, &[OUT1, OFF3], false);
        w.put(TASK1, v, start);
        w.marker(OUT1, fenced, false, 0);
        w.marker(OFF3, fenced, false, 0);
        let v = World::value(8001, 1, state::COMPLETE_ABORT, &[], false);
        w.put(TASK1, v, start);
        w.init(TASK1, fenced.bumped(), false);
        if twin {
            w.produce(OUT1, t1, 2);
        }
        // the new generation
        let t0 = t0.bumped().bumped();
        let t1 = fenced.bumped().bumped();
        let t2 = Producer::transactional(8002, 0);
        w.init(TASK0, t0, false);
        w.init(TASK1, t1, false);
        w.init(TASK2, t2, false);
        for _ in 0..3 {
            w.txn(TASK0, t0, &[OUT0, OFF12], true, 0);
            w.txn(TASK1, t1, &[OUT1, OFF3], true, 0);
            w.txn(TASK2, t2, &[OUT0, ("connect-offsets", 20)], true, 0);
            w.clock += 10 * MIN;
        }
        let cleaned = [];
        let q = write_and_check(w.log_dir(), &cleaned);
        if twin {
            let f = q.assert_reported(
                Kind::ProducerEpochRegression,
                Severity::Error,
                "orders-db",
                Some(8001),
            );
            assert_eq!(f.partition, 1);
        } else {
            q.assert_quiet();
        }
    }
}
