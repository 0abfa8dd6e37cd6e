//! `ProducerIdExpirationTest`: a partition leader forgets an idle producer after
//! `producer.id.expiration.ms` (`ProducerStateManager.removeExpiredProducers`, the
//! `isProducerExpired` check), the coordinator forgets an idle transactional id after
//! `transactional.id.expiration.ms` (a tombstone on `__transaction_state`), and the producer
//! then writes again. The Kafka test runs with 10 s and 5 s; klogscan reads no static broker
//! config and simulates the default, one day (`state::PRODUCER_ID_EXPIRATION_MS`), so the
//! idle times here are a day where the producer must have expired.

use super::*;
use crate::kafka_kraft_managers_cases::{EVENTS, T0, broker_config, events_id, log_dir, meta_log};
use crate::kafka_quiet_cluster_cases::CLUSTER;
use klogscan::testkit::txns::{Cluster, Txn};
use klogscan::testkit::{Batch, Producer};

/// Idempotent producer 5 on `topic1`-0: one record at sequence 0, then `idle` ms later one
/// record at sequence `seq` (the client goes on from its own count: it never learns that
/// the partition forgot it).
fn idempotent_after(idle: i64, seq: i32) -> PartitionBuilder {
    let p5 = Producer::idempotent(5, 0);
    let mut p = PartitionBuilder::new("topic1", 0).time_step(0);
    p.append(Batch::new(p5).records(1).sequence(0));
    p.advance_time(idle);
    p.append(Batch::new(p5).records(1).sequence(seq));
    p
}

/// `ProducerIdExpirationTest.testProducerIdExpirationWithNoTransactions`: an idempotent
/// producer sends one record, the partition expires its id (DescribeProducers empty), the
/// producer sends again and the partition holds it once more. The client keeps its
/// sequence, so the partition holds sequences 0 and 1 at epoch 0 a day apart: one producer
/// at sequence 1, nothing raised. Near miss where the expiry decides: the second send after
/// a lost batch (sequence 5) — a day later the leader held no state and took any sequence
/// (`ProducerAppendInfo.checkSequence` with no entry), an hour later it refused the gap
/// (`OutOfOrderSequenceException`), so the gap on disk is a `sequence_gap`.
#[test]
fn producer_id_expiration_with_no_transactions() {
    let (_b, v) = broker(vec![idempotent_after(DAY + 1, 1)]);
    v.assert_quiet();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        assert_eq!(producers(r, "topic1", 0), vec![(5, 0, 1)], "{name}");
    }
    // near miss: sequence 5 after the gap
    let (_b, v) = broker(vec![idempotent_after(DAY + 1, 5)]);
    assert!(loud_kinds(&v.scan.findings).is_empty(), "{:#?}", all(&v));
    let (_b, v) = broker(vec![idempotent_after(HOUR, 5)]);
    assert_eq!(
        loud_kinds(&v.scan.findings),
        vec![(Kind::SequenceGap, Some(1))],
        "{:#?}",
        all(&v)
    );
}

/// `ProducerIdExpirationTest.testTransactionAfterTransactionIdExpiresButProducerIdRemains`:
/// producer 7 (epoch 0) aborts one record on `topic1`-0; the coordinator expires the
/// transactional id (a tombstone) while the partition still holds producer 7 (its expiry is
/// the longer); the producer's next AddPartitionsToTxn fails with
/// `InvalidPidMappingException` (nothing written), and its InitProducerId finds no state for
/// the id, so the coordinator hands out a new producer id at epoch 0
/// (`TransactionCoordinator.handleInitProducerId`), which commits two records. On disk: 7's
/// data and ABORT, the tombstone, producer 8's data and COMMIT; both decided, nothing
/// raised, the partition holding both producers. Near miss: the new transaction written
/// under the retained producer id 7 at epoch 0 from sequence 0 (a coordinator that handed
/// the expired id's producer id back): the partition still holds 7 at sequence 0, so the
/// leader answers the batch as a duplicate — on disk a `duplicate_sequence`.
#[test]
fn transaction_after_transaction_id_expires_but_producer_id_remains() {
    let run = || {
        let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
        let id = "transactionalProducer";
        c.run(
            &Txn::new(id, Producer::transactional(7, 0), &[("topic1", 0)])
                .records(1)
                .abort(),
        );
        c.advance(6_000);
        c.coordinator_record(id, None);
        let next = Producer::transactional(8, 0);
        c.run(&Txn::new(id, next, &[("topic1", 0)]).records(2));
        run(&c)
    };
    let (_b, v) = run();
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        let pr = part(r, "topic1", 0);
        assert_eq!(pr.last_stable_offset, pr.log_end_offset, "{name}");
        assert_eq!(pr.transactions.aborted, 1, "{name}");
        let ids: Vec<i64> = producers(r, "topic1", 0).iter().map(|p| p.0).collect();
        assert_eq!(ids, vec![7, 8], "{name}");
    }
    // near miss: producer id 7 again at epoch 0 from sequence 0, 6 s after its ABORT
    let t = Producer::transactional(7, 0);
    let mut p = PartitionBuilder::new("topic1", 0);
    p.append(Batch::new(t).records(1).sequence(0));
    p.abort(t, 0);
    p.advance_time(6_000);
    p.append(Batch::new(t).records(2).sequence(0));
    p.commit(t, 0);
    let (_b, v) = broker(vec![p]);
    assert!(
        has(&v.scan.findings, Kind::DuplicateSequence, 2),
        "{:#?}",
        all(&v)
    );
}

/// `events-0`: idempotent producer 5, sequence 0 at `T0 + 10 s`, then sequence `seq` at
/// `T0 + 10 s + idle`.
fn events_after(idle: i64, seq: i32) -> PartitionBuilder {
    let p5 = Producer::idempotent(5, 0);
    let mut p = PartitionBuilder::new(EVENTS, 0);
    p.append(Batch::new(p5).records(1).sequence(0).at(T0 + 10_000));
    p.append(
        Batch::new(p5)
            .records(1)
            .sequence(seq)
            .at(T0 + 10_000 + idle),
    );
    p
}

/// Scan a log dir holding `events-0` and a metadata log that sets the cluster-wide dynamic
/// `producer.id.expiration.ms` to `ms` before the data.
fn with_dynamic_expiration(ms: &str, data: PartitionBuilder) -> ScanReport {
    let d = tempfile::tempdir().unwrap();
    let meta = meta_log(&[
        vec![crate::kafka_kraft_managers_cases::topic(
            EVENTS,
            events_id(),
        )],
        vec![broker_config("", "producer.id.expiration.ms", Some(ms))],
    ]);
    let ld = log_dir(d.path(), "b1", 1, Some(data), &meta);
    klogscan::pipeline::scan(&[ld], &opts())
}

/// `ProducerIdExpirationTest.testDynamicProducerIdExpirationMs`, what it leaves: the
/// cluster-wide dynamic `producer.id.expiration.ms` (a BROKER `ConfigRecord` with an empty
/// name on the metadata log, 100000 then 100), and the idempotent producer's sequences 0 and
/// 1, contiguous, around the expiry: nothing raised, whatever the setting.
#[test]
fn dynamic_producer_id_expiration_ms() {
    let r = with_dynamic_expiration("100", events_after(15_000, 1));
    let on_events: Vec<_> = (r.findings.iter()).filter(|f| f.topic == EVENTS).collect();
    assert!(on_events.is_empty(), "{:#?}", lines(on_events));
}

/// The near miss of `ProducerIdExpirationTest.testDynamicProducerIdExpirationMs` where the
/// setting decides: the second send, 15 s after the first, skips to sequence 5. Under the
/// metadata log's dynamic `producer.id.expiration.ms` of 100 ms (it overrides the static
/// config, `DynamicBrokerConfig`; `DynamicProducerStateManagerConfig` applies it to the
/// `ProducerStateManagerConfig` every log shares) the leader had expired producer 5 and took
/// any sequence: Kafka's answer is no `sequence_gap`. klogscan holds the gap against the
/// smallest dynamic value the metadata log set (it was a divergence: the one-day default
/// was simulated whatever the metadata log said, and the gap reported).
#[test]
fn dynamic_producer_id_expiration_ms_decides_a_gap() {
    let r = with_dynamic_expiration("100", events_after(15_000, 5));
    assert!(
        !has(&r.findings, Kind::SequenceGap, 1),
        "{:#?}",
        lines(&r.findings)
    );
    // near miss: the same gap under a dynamic setting of one hour is refused by the leader
    let r = with_dynamic_expiration("3600000", events_after(15_000, 5));
    assert!(
        has(&r.findings, Kind::SequenceGap, 1),
        "{:#?}",
        lines(&r.findings)
    );
}

/// Scan `events-0` (`data`) on broker 1 after the metadata log's dynamic
/// `producer.id.expiration.ms` records `configs` (broker resource name, value; `None`
/// deletes it), in order.
fn with_expiration_records(configs: &[(&str, Option<&str>)], data: PartitionBuilder) -> ScanReport {
    let d = tempfile::tempdir().unwrap();
    let mut batches = vec![vec![crate::kafka_kraft_managers_cases::topic(
        EVENTS,
        events_id(),
    )]];
    for (name, value) in configs {
        batches.push(vec![broker_config(
            name,
            "producer.id.expiration.ms",
            *value,
        )]);
    }
    let ld = log_dir(d.path(), "b1", 1, Some(data), &meta_log(&batches));
    klogscan::pipeline::scan(&[ld], &opts())
}

/// Which dynamic values the replay takes (`DynamicBrokerConfig`: a broker's own value, else
/// the cluster-wide one, else its static config): broker 1's own and the cluster-wide ones,
/// the smallest ever set — a value raised or deleted later was in force before it, and
/// the log does not say when the batches were written against it —, never another broker's,
/// never one the broker's validation refuses (below 1, not a number). Near misses: the
/// other broker's value and the refused ones leave the gap reported.
#[test]
fn the_smallest_value_for_the_broker_or_the_cluster_applies() {
    let gap = |configs: &[(&str, Option<&str>)]| {
        let r = with_expiration_records(configs, events_after(15_000, 5));
        has(&r.findings, Kind::SequenceGap, 1)
    };
    assert!(!gap(&[("1", Some("100")), ("1", Some("3600000"))]));
    assert!(!gap(&[("", Some("100")), ("", None)]));
    assert!(!gap(&[("", Some("3600000")), ("1", Some("10000"))]));
    // near misses
    assert!(gap(&[("2", Some("100"))]));
    assert!(gap(&[("", Some("0"))]));
    assert!(gap(&[("", Some("ten"))]));
    assert!(gap(&[("1", Some("3600000"))]));
}

/// A finding that reads the expiry says which value it held the idle time against, and
/// where it comes from: producer 5's epoch going back from 1 to 0 15 s later is a
/// `producer_epoch_regression` whatever the setting (a leader that expired the producer
/// accepted it: the message says so), with `producer_id_expiration_ms` 100 and its source
/// under the dynamic value; near miss: without the metadata log's value, the default and
/// no source.
#[test]
fn the_evidence_names_the_expiry_it_read() {
    let data = || {
        let mut p = PartitionBuilder::new(EVENTS, 0);
        p.append(
            Batch::new(Producer::idempotent(5, 1))
                .records(1)
                .sequence(0)
                .at(T0 + 10_000),
        );
        p.append(
            Batch::new(Producer::idempotent(5, 0))
                .records(1)
                .sequence(0)
                .at(T0 + 25_000),
        );
        p
    };
    let regression = |r: &ScanReport| {
        (r.findings.iter())
            .find(|f| f.kind == Kind::ProducerEpochRegression)
            .cloned()
            .unwrap_or_else(|| panic!("{:#?}", lines(&r.findings)))
    };
    let f = regression(&with_expiration_records(&[("", Some("100"))], data()));
    assert_eq!(f.evidence["producer_id_expiration_ms"], 100);
    assert_eq!(f.evidence["exceeds_producer_id_expiration"], true);
    assert!(
        (f.evidence["producer_id_expiration_from"].as_str())
            .is_some_and(|s| s.contains("KRaft metadata log")),
        "{}",
        f.evidence
    );
    assert!(f.message.contains("(100 ms)"), "{}", f.message);
    // near miss: no dynamic value
    let f = regression(&with_expiration_records(&[], data()));
    assert_eq!(f.evidence["producer_id_expiration_ms"], 86_400_000);
    assert_eq!(f.evidence["exceeds_producer_id_expiration"], false);
    assert!(f.evidence.get("producer_id_expiration_from").is_none());
}
