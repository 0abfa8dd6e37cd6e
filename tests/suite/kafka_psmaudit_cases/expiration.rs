//! `TransactionsExpirationTest` cases no audit cited: a transactional producer whose
//! producer id expired on the partition (`producer.id.expiration.ms`, default one day)
//! before it wrote again, under transaction versions 1 and 2 (KIP-890: every transaction
//! ends one epoch up), and a transactional id the coordinator expired
//! (`transactional.id.expiration.ms`, default seven days) before its producer came back.

use super::*;
use crate::kafka_quiet_cluster_cases::CLUSTER;
use klogscan::testkit::txns::{Cluster, Txn};
use klogscan::testkit::{Batch, Producer};

fn opts() -> ScanOptions {
    ScanOptions::default().with_keep_producers(true)
}

/// The one producer's `(epoch, last sequence, last data offset, open txn first offset)`.
fn only_entry(r: &ScanReport, topic: &str, n: i32) -> (i64, i16, i32, i64, Option<i64>) {
    let ps = &part(r, topic, n).outcome().producers;
    assert_eq!(ps.len(), 1, "{ps:#?}");
    let s = &ps[0];
    (
        s.producer_id,
        s.producer_epoch,
        s.last_sequence,
        s.last_offset,
        s.current_txn_first_offset,
    )
}

/// Producer 7 (epoch 0) writes one record to `topic1`-0 and aborts; `idle` ms later it
/// writes one record at `epoch`, sequence `seq`, and ends that transaction with a COMMIT at
/// `commit_epoch`. `abort_epoch`: the first ABORT's epoch.
fn after_idle(
    abort_epoch: i16,
    idle: i64,
    epoch: i16,
    seq: i32,
    commit_epoch: i16,
) -> PartitionBuilder {
    let t = Producer::transactional(7, 0);
    let mut p = PartitionBuilder::new("topic1", 0).time_step(0);
    p.append(Batch::new(t).records(1).sequence(0));
    p.abort(t.with_epoch(abort_epoch), 0);
    p.advance_time(idle);
    p.append(Batch::new(t.with_epoch(epoch)).records(1).sequence(seq));
    p.commit(t.with_epoch(commit_epoch), 0);
    p
}

/// `TransactionsExpirationTest.testTransactionAfterProducerIdExpires` (transaction version
/// 1): a transaction is aborted, the partition forgets the producer id once it is idle for
/// `producer.id.expiration.ms`; a new producer with the same transactional id gets the same
/// producer id one epoch up (the coordinator kept the id), writes from sequence 0 and
/// commits; the partition's state then holds that producer at the old epoch + 1. On disk,
/// a day apart: the producer at epoch 1, sequence 0, nothing undecided, nothing wrong. Near
/// miss, where the expiration decides: a retry of sequence 0 at the old epoch — an hour
/// later the leader still holds the batch and answers it as a duplicate (not appended);
/// a day later it has forgotten the producer and takes it.
#[test]
fn transaction_after_producer_id_expires() {
    let (_b, _d, v) = broker(vec![after_idle(0, DAY + 1, 1, 0, 1)], &[], opts());
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        assert_eq!(only_entry(r, "topic1", 0), (7, 1, 0, 2, None), "{name}");
        let pr = part(r, "topic1", 0);
        assert_eq!(
            (pr.last_stable_offset, pr.transactions.aborted),
            (Some(4), 1)
        );
    }
    // near miss: sequence 0 again at epoch 0, an hour or a day later
    let (_b, _d, v) = broker(vec![after_idle(0, 3_600_000, 0, 0, 0)], &[], opts());
    assert_eq!(
        loud_kinds(&v.scan),
        vec![(Kind::DuplicateSequence, Some(2))],
        "{:#?}",
        lines(&v.scan.findings)
    );
    let (_b, _d, v) = broker(vec![after_idle(0, DAY + 1, 0, 0, 0)], &[], opts());
    assert_not_loud("a day later", &v.scan.findings);
}

/// `TransactionsExpirationTest.testTransactionAfterProducerIdExpires` with transaction
/// version 2: each transaction's markers carry the epoch one above its data's, and the
/// restarted producer's InitProducerId bumps it again, so the partition ends at least two
/// epochs above the first data's. On disk: data at epoch 0, ABORT at 1, a day later data at
/// epoch 2 from sequence 0 and a COMMIT at 3; the producer holds epoch 3 (≥ 0 + 2), nothing
/// wrong. Near miss: the data after the gap at epoch 0 again, below the ABORT's epoch 1, is
/// a fenced producer's (`InvalidProducerEpochException` from the leader; the expiration
/// does not reopen an epoch the marker closed — the log still holds the marker).
#[test]
fn transaction_after_producer_id_expires_tv2() {
    let (_b, _d, v) = broker(vec![after_idle(1, DAY + 1, 2, 0, 3)], &[], opts());
    v.assert_no_alarm();
    let (pid, epoch, seq, last, open) = only_entry(&v.scan, "topic1", 0);
    assert_eq!((pid, seq, last, open), (7, -1, -1, None));
    assert!(epoch >= 2, "epoch {epoch}");
    assert_eq!(epoch, 3);
    assert_eq!(part(&v.scan, "topic1", 0).last_stable_offset, Some(4));
    // near miss: epoch 0 after the epoch-1 ABORT
    let (_b, _d, v) = broker(vec![after_idle(1, DAY + 1, 0, 0, 1)], &[], opts());
    assert!(
        (v.scan.findings.iter())
            .any(|f| f.kind == Kind::ProducerEpochRegression && f.offset == Some(2)),
        "{:#?}",
        lines(&v.scan.findings)
    );
}

/// `TransactionsExpirationTest.testBumpTransactionalEpochAfterInvalidProducerIdMapping`: a
/// producer aborts a transaction on `topic1`-0 and `topic2`-0 and stays idle until the
/// coordinator expires its transactional id (a tombstone in `__transaction_state`, written
/// for a CompleteAbort id after `transactional.id.expiration.ms`). Its next
/// AddPartitionsToTxn fails with `InvalidPidMappingException`; the client then asks for a
/// producer id again and, the id being unknown, gets a new one at epoch 0, and commits a
/// transaction on `topic2`-0, `topic1`-2 and `topic1`-3. On disk: the coordinator holds the
/// id with the new producer, every partition is decided, nothing wrong. Near miss: a
/// tombstone written while the transaction is still Ongoing, which the coordinator never
/// writes (`removeExpiredTransactionalIds` takes only Empty and Complete* ids).
#[test]
fn bump_transactional_epoch_after_invalid_producer_id_mapping() {
    let run = |in_progress: bool| {
        let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
        let id = "transactionalProducer";
        let old = Producer::transactional(7, 0);
        let txn = Txn::new(id, old, &[("topic1", 0), ("topic2", 0)]).records(1);
        if in_progress {
            c.run(&txn.open());
        } else {
            c.run(&txn.abort());
        }
        c.advance(7 * DAY + 3_600_000);
        c.coordinator_record(id, None);
        let new = Producer::transactional(8, 0);
        c.run(&Txn::new(id, new, &[("topic2", 0), ("topic1", 2), ("topic1", 3)]).records(1));
        Brokers::of_cluster(&c, opts())
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        assert_eq!(aborted_of(r, "topic1", 0).len(), 1, "{name}");
        assert_eq!(aborted_of(r, "topic2", 0).len(), 1, "{name}");
        for (t, n) in [("topic1", 0), ("topic2", 0), ("topic1", 2), ("topic1", 3)] {
            let pr = part(r, t, n);
            assert_eq!(pr.last_stable_offset, pr.log_end_offset, "{name} {t}-{n}");
        }
        assert_eq!(only_entry(r, "topic1", 2).0, 8, "{name}");
    }
    // near miss: the tombstone while the old transaction is Ongoing
    let (_b, v) = run(true);
    let anomalies: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .map(|f| f.evidence["anomaly"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        anomalies.iter().any(|a| a == "tombstone_while_in_progress"),
        "{:#?}",
        lines(&v.scan.findings)
    );
}
