//! Exactly-once v2 (`processing.guarantee=exactly_once_v2`): one transactional producer per
//! stream thread (`ActiveTaskCreator.producer`: transactional id
//! `<application.id>-<processId>-<threadIdx>`), each commit one transaction over the output
//! partitions, the repartition and changelog partitions the thread's tasks wrote and the
//! group's `__consumer_offsets` partition (`TaskManager.commitOffsetsOrTransaction` →
//! `StreamsProducer.commitTransaction`: `sendOffsetsToTransaction` then `commitTransaction`),
//! aborted after a rebalance takes tasks away (`StreamsProducer.abortTransaction`, no offsets
//! sent), and a thread that dies, replaced under a new process id.

use super::{
    APP, CHANGELOG, DAY, OUTPUT, REPARTITION, commit, coordinator_batch, offsets_partition,
    write_and_check,
};
use crate::kafka_quiet_coordinator_cases::{Tp, World, ends};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::state;

const OUT0: Tp = (OUTPUT, 0);
const OUT1: Tp = (OUTPUT, 1);
const REP0: Tp = (REPARTITION, 0);
const CHG0: Tp = (CHANGELOG, 0);
/// The input topic (not on this broker).
const INPUT: &str = "text-lines";

fn offsets_tp() -> Tp {
    ("__consumer_offsets", offsets_partition(APP))
}

/// One transaction of the thread's producer `p` (id `id`) over `tps`; when it commits, the
/// offsets go to the group's partition first (`AddOffsetsToTxn` lists it, `TxnOffsetCommit`
/// writes them transactionally: `GroupMetadataManager.storeOffsets` with the producer id).
/// TV0/1: the markers at the data's epoch. TV2 (`tv2`): `TransactionMetadata.prepareAbortOrCommit`
/// bumps the epoch in the Prepare value, the markers and the Complete value carry it, and the
/// producer continues at it. `skip`: a partition whose marker is not written (the twins).
/// Returns the producer for the next transaction.
fn txn(
    w: &mut World,
    id: &str,
    p: Producer,
    tps: &[Tp],
    commit_it: bool,
    tv2: bool,
    skip: Option<Tp>,
) -> Producer {
    let mut tps = tps.to_vec();
    if commit_it {
        tps.push(offsets_tp());
    }
    let start = w.clock;
    w.put(
        id,
        World::value(p.id, p.epoch, state::ONGOING, &tps, tv2),
        start,
    );
    for &tp in &tps {
        if tp == offsets_tp() {
            let ts = w.clock;
            let consumed = w.part(REP0).next_offset();
            let recs = vec![
                commit(APP, (INPUT, 0), 10 * consumed, 0, ts),
                commit(APP, (REPARTITION, 0), consumed, 0, ts),
            ];
            w.part(tp).append(coordinator_batch(p, ts, recs));
            w.clock += 10;
        } else {
            w.produce(tp, p, 3);
        }
    }
    w.clock += 80;
    let end = if tv2 { p.bumped() } else { p };
    let (prep, done) = ends(commit_it);
    w.put(id, World::value(end.id, end.epoch, prep, &tps, tv2), start);
    for &tp in &tps {
        if Some(tp) != skip {
            w.marker(tp, end, commit_it, 0);
        }
    }
    w.put(id, World::value(end.id, end.epoch, done, &[], tv2), start);
    w.clock += 100;
    end
}

/// A stream thread's transactional producer 5000 (`wordcount-<processId>-1`) commits two
/// transactions over both output partitions, the repartition partition, the store's
/// changelog and the group's offsets; a rebalance then migrates a task and the thread
/// aborts its open transaction (`TaskManager.handleRevocation` → `StreamsProducer.abortTransaction`;
/// the data on output 0, the changelog and the repartition partition get ABORT markers, the
/// `.txnindex` lists them), and commits again after it. Under TV0/1 (3.x brokers) and TV2
/// (`transaction.version=2`, 4.x: each EndTxn bumps the epoch, `TransactionMetadata.prepareAbortOrCommit`),
/// the coordinator's log (`__transaction_state`) beside the data. Nothing at warning or above.
/// Twin: the changelog misses the last COMMIT while the coordinator wrote CompleteCommit
/// (`TransactionMarkerChannelManager` never completed it there): a
/// `transaction_marker_missing` on the changelog (a warning while the transaction is young).
#[test]
fn eos_v2_thread_commits_across_outputs_changelog_repartition_and_offsets() {
    for tv2 in [false, true] {
        for twin in [false, true] {
            let id = "wordcount-5c8a61b4-0f3e-4d6e-9a2a-1b7c3e9d2f10-1";
            let mut w = World::new(50);
            let mut p = Producer::transactional(5000, 0);
            w.init(id, p, tv2);
            let all = [OUT0, OUT1, REP0, CHG0];
            p = txn(&mut w, id, p, &all, true, tv2, None);
            p = txn(&mut w, id, p, &all, true, tv2, None);
            p = txn(&mut w, id, p, &[OUT0, REP0, CHG0], false, tv2, None);
            w.clock += 3_000; // the rebalance
            let skip = twin.then_some(CHG0);
            txn(&mut w, id, p, &all, true, tv2, skip);
            let q = write_and_check(w.log_dir());
            let name = format!("tv2 {tv2}");
            if twin {
                let f = (q.scan.findings.iter()).find(|f| {
                    f.topic == CHANGELOG
                        && f.kind == Kind::TransactionMarkerMissing
                        && f.severity >= Severity::Warning
                });
                assert!(f.is_some(), "{name}: {:#?}", super::lines(&q.scan.findings));
            } else {
                q.assert_quiet();
            }
        }
    }
}

/// A stream thread of the instance with process id A dies mid-transaction (data on output 0
/// and the changelog); its replacement runs under a new process id B, hence a new
/// transactional id and producer id 6000 (`ActiveTaskCreator.producer`; the process id is a
/// new `UUID.randomUUID()` unless a state directory keeps it, `StateDirectory.initializeProcessId`).
/// The coordinator aborts A's transaction at its timeout (Streams' 10 s
/// `transaction.timeout.ms`, `StreamsConfig` producer defaults under EOS;
/// `TransactionCoordinator.abortTimedOutTransactions` → `TransactionMetadata.prepareFenceProducerEpoch`
/// bumps the epoch: PrepareAbort, ABORT markers and CompleteAbort at epoch 1). B's thread
/// commits on. Seven days later the coordinator expires A's idle id
/// (`TransactionStateManager.removeExpiredTransactionalIds`, `transactional.id.expiration.ms`)
/// with a tombstone, and B commits again. Nothing at warning or above.
/// Twin: the changelog never received A's ABORT (the coordinator says CompleteAbort): the
/// transaction there stays open for seven days — an error on the changelog.
#[test]
fn a_thread_replaced_under_a_new_process_id_leaves_its_old_id_to_expire() {
    for twin in [false, true] {
        let old = "wordcount-0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6-1";
        let new = "wordcount-e7f8091a-2b3c-4d4e-9f60-718293a4b5c6-1";
        let mut w = World::new(50);
        let a = Producer::transactional(5000, 0);
        w.init(old, a, false);
        let a = txn(&mut w, old, a, &[OUT0, CHG0], true, false, None);
        // the thread dies inside its next transaction
        let start = w.clock;
        let tps = [OUT0, CHG0];
        w.put(
            old,
            World::value(a.id, a.epoch, state::ONGOING, &tps, false),
            start,
        );
        w.produce(OUT0, a, 3);
        w.produce(CHG0, a, 3);
        w.clock += 10_500;
        let fenced = a.bumped();
        let v = World::value(fenced.id, fenced.epoch, state::PREPARE_ABORT, &tps, false);
        w.put(old, v, start);
        w.marker(OUT0, fenced, false, 0);
        if !twin {
            w.marker(CHG0, fenced, false, 0);
        }
        let v = World::value(fenced.id, fenced.epoch, state::COMPLETE_ABORT, &[], false);
        w.put(old, v, start);
        // the replacement thread
        let mut b = Producer::transactional(6000, 0);
        w.init(new, b, false);
        for _ in 0..3 {
            b = txn(&mut w, new, b, &[OUT0, OUT1, CHG0], true, false, None);
        }
        w.clock += 7 * DAY;
        w.tombstones(&[old]);
        txn(&mut w, new, b, &[OUT0, OUT1, CHG0], true, false, None);
        let q = write_and_check(w.log_dir());
        if twin {
            let f = (q.scan.findings.iter())
                .find(|f| f.topic == CHANGELOG && f.severity >= Severity::Error);
            assert!(f.is_some(), "{:#?}", super::lines(&q.scan.findings));
        } else {
            q.assert_quiet();
        }
    }
}
