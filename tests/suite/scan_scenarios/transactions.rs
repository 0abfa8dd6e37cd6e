//! Transactions and markers: hanging versus young open transactions, coordinator epoch
//! regressions, markers without a transaction or at the wrong epoch, conflicting markers,
//! epoch changes without a marker and non-transactional writes inside a transaction.

use super::*;

#[test]
fn hanging_versus_young_open_transaction() {
    let txn = Producer::transactional(900, 1);
    let build = |idle_ms: i64| {
        let mut p = PartitionBuilder::new("ht", 2);
        p.append(Batch::new(Producer::PLAIN).values(["a"]));
        p.append(Batch::new(txn).records(2));
        p.advance_time(idle_ms);
        p.append(Batch::new(Producer::PLAIN).values(["b"]));
        p
    };
    // 20 minutes of later traffic: hanging
    let (_d, m, r) = run(&build(20 * 60_000));
    let f = one(&r, Kind::HangingTransaction);
    at_batch(f, &m, 1);
    producer_of(f, 900, 1);
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.remediation
            .as_deref()
            .unwrap()
            .contains("--topic ht --partition 2 --start-offset 1"),
        "{:?}",
        f.remediation
    );
    none_of(&r, Kind::OpenTransaction);
    assert_eq!(r.partitions[0].last_stable_offset, Some(1));
    assert_eq!(r.partitions[0].transactions.open, 1);

    // 5 minutes: a young open transaction is open_transaction, not hanging
    let (_d, m, r) = run(&build(5 * 60_000));
    let f = one(&r, Kind::OpenTransaction);
    at_batch(f, &m, 1);
    assert_eq!(f.severity, Severity::Info);
    none_of(&r, Kind::HangingTransaction);
    assert_eq!(r.partitions[0].last_stable_offset, Some(1));

    // near miss: the same transaction committed
    let mut p = build(20 * 60_000);
    p.commit(txn, 0);
    let (_d, m, r) = run(&p);
    none_of(&r, Kind::HangingTransaction);
    none_of(&r, Kind::OpenTransaction);
    assert_eq!(r.partitions[0].last_stable_offset, Some(m.log_end_offset));
}

#[test]
fn now_and_hanging_after_options() {
    let txn = Producer::transactional(901, 0);
    let mut p = PartitionBuilder::new("now", 0);
    p.append(Batch::new(txn).records(2));
    let (_d, m, r) = run(&p);
    // alone in the log: reference time = its own timestamp, so it is young
    one(&r, Kind::OpenTransaction);
    let last_ts = m.batches[0].max_timestamp;
    assert_eq!(r.partitions[0].ref_time, last_ts);
    // --now one hour later: hanging
    let later = ScanOptions::default().with_now_ms(last_ts + 3_600_000);
    let (_d, _m, r) = run_with(&p, &later);
    let f = one(&r, Kind::HangingTransaction);
    assert_eq!(f.evidence["idle_ms"], 3_600_000);
    assert_eq!(r.partitions[0].ref_time, last_ts + 3_600_000);
    // ... but not with --hanging-after 2h
    let lenient = later.clone().with_hanging_after_ms(2 * 3_600_000);
    let (_d, _m, r) = run_with(&p, &lenient);
    one(&r, Kind::OpenTransaction);
    none_of(&r, Kind::HangingTransaction);
    // ... and with --hanging-after 1 min at the default reference time 10 min later
    let mut p2 = PartitionBuilder::new("now", 0);
    p2.append(Batch::new(txn).records(2));
    p2.advance_time(10 * 60_000);
    p2.append(Batch::new(Producer::PLAIN).values(["x"]));
    let strict = ScanOptions::default().with_hanging_after_ms(60_000);
    let (_d, _m, r) = run_with(&p2, &strict);
    one(&r, Kind::HangingTransaction);
    let (_d, _m, r) = run(&p2);
    one(&r, Kind::OpenTransaction);
}

#[test]
fn coordinator_epoch_regression() {
    let txn = Producer::transactional(1000, 4);
    let mut p = PartitionBuilder::new("ce", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 9);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 8);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::CoordinatorEpochRegression);
    at_batch(f, &m, 3);
    producer_of(f, 1000, 4);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        (
            &f.evidence["previous_coordinator_epoch"],
            &f.evidence["coordinator_epoch"]
        ),
        (&9.into(), &8.into())
    );
    assert_eq!(kinds(&r), vec![(Kind::CoordinatorEpochRegression, Some(3))]);
    // near miss: the coordinator epoch goes up (a coordinator move)
    let mut p = PartitionBuilder::new("ce", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 9);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 10);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn marker_without_transaction() {
    let txn = Producer::transactional(1100, 2);
    // a second COMMIT with nothing in between
    let mut p = PartitionBuilder::new("mw", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 1);
    p.commit(txn, 1);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::MarkerWithoutTransaction);
    at_batch(f, &m, 2);
    producer_of(f, 1100, 2);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(r.partitions[0].outcome().txn_stats.empty_commits, 1);
    // a first-sight marker at offset 0 (history complete) closes nothing either
    let mut p = PartitionBuilder::new("mw", 0);
    p.abort(txn, 1);
    let (_d, m, r) = run(&p);
    at_batch(one(&r, Kind::MarkerWithoutTransaction), &m, 0);
    // near miss: a first-sight marker when history does not start at 0 (retention
    // deleted the transaction's data)
    let mut p = PartitionBuilder::new("mw", 0).start_offset(50);
    p.abort(txn, 1);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // near miss: one marker per transaction
    let mut p = PartitionBuilder::new("mw", 0);
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1));
    p.abort(txn, 1);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// `ProducerStateManagerTest.testAppendTxnMarkerWithNoProducerState`: a COMMIT at epoch 2
/// is the producer's first entry in a log starting at offset 0; the state it creates has
/// the epoch and no sequence, so data at that epoch must start at sequence 0 (17 is out of
/// order), data at epoch 0 is fenced, data at sequence 0 is accepted. The same log starting
/// above offset 0 (earlier batches deleted) says nothing of the sequence.
#[test]
fn marker_created_state_wants_sequence_zero() {
    let txn = Producer::transactional(1150, 2);
    let mut p = PartitionBuilder::new("ms", 0);
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1).sequence(17));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidFirstSequence);
    at_batch(f, &m, 1);
    producer_of(f, 1150, 2);
    assert_eq!(
        (f.evidence["expected"].clone(), f.evidence["found"].clone()),
        (0.into(), 17.into())
    );
    // fencing still works when the marker is all there is
    let mut p = PartitionBuilder::new("ms", 0);
    p.commit(txn, 1);
    p.append(Batch::new(txn.with_epoch(0)).records(1));
    let (_d, _m, r) = run(&p);
    one(&r, Kind::ProducerEpochRegression);
    // sequence 0 at the marker's epoch is what the broker accepts
    let mut p = PartitionBuilder::new("ms", 0);
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1).sequence(0));
    let (_d, _m, r) = run(&p);
    none_of(&r, Kind::InvalidFirstSequence);
    none_of(&r, Kind::SequenceGap);
    // near miss: the log starts above 0, the producer's earlier batches are gone
    let mut p = PartitionBuilder::new("ms", 0).start_offset(27);
    p.commit(txn, 1);
    p.append(Batch::new(txn).records(1).sequence(17));
    let (_d, _m, r) = run(&p);
    none_of(&r, Kind::InvalidFirstSequence);
    none_of(&r, Kind::SequenceGap);
    // (only its still-open transaction, at info)
    assert!(
        r.findings.iter().all(|f| f.severity == Severity::Info),
        "{:#?}",
        r.findings
    );
}

#[test]
fn conflicting_markers_under_tv2_only() {
    let txn = Producer::transactional(1200, 7);
    // TV2 (COMMIT one epoch above the data), then an ABORT at the same epoch
    let mut p = PartitionBuilder::new("cm", 0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn.bumped(), 3);
    p.abort(txn.bumped(), 3);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::ConflictingMarkers);
    at_batch(f, &m, 2);
    producer_of(f, 1200, 8);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["previous_marker"]["offset"], 2);
    none_of(&r, Kind::MarkerWithoutTransaction);
    // near miss: TV0/1 (marker at the data's epoch): an empty transaction, no conflict
    let mut p = PartitionBuilder::new("cm", 0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 3);
    p.abort(txn, 3);
    let (_d, m, r) = run(&p);
    none_of(&r, Kind::ConflictingMarkers);
    at_batch(one(&r, Kind::MarkerWithoutTransaction), &m, 2);
}

#[test]
fn transaction_epoch_change_without_marker() {
    let txn = Producer::transactional(1300, 1);
    let mut p = PartitionBuilder::new("tec", 0);
    p.append(Batch::new(txn).records(2));
    p.append(Batch::new(txn.bumped()).records(1));
    p.commit(txn.bumped(), 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::TransactionEpochChange);
    at_batch(f, &m, 1);
    producer_of(f, 1300, 2);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(kinds(&r), vec![(Kind::TransactionEpochChange, Some(2))]);
    // the marker still closed the transaction (first offset 0)
    assert_eq!(r.partitions[0].outcome().txn_stats.committed, 1);
    assert_eq!(r.partitions[0].outcome().txn_stats.sizes, vec![4]);
    // near miss: the new epoch starts after a marker
    let mut p = PartitionBuilder::new("tec", 0);
    p.append(Batch::new(txn).records(2));
    p.abort(txn.bumped(), 0);
    p.append(Batch::new(txn.bumped()).records(1));
    p.commit(txn.bumped().bumped(), 0);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn commit_epoch_above_data_under_tv01() {
    // TV0/1 producer (COMMIT at its data's epoch), then a COMMIT one epoch above its data:
    // a switch to TV2 mid-stream (after which bumped markers are normal).
    let a = Producer::transactional(1251, 3);
    let mut p = PartitionBuilder::new("ceabove", 0);
    p.append(Batch::new(a).records(2));
    p.commit(a, 0);
    p.append(Batch::new(a).records(2));
    p.commit(a.bumped(), 0);
    p.append(Batch::new(a.bumped()).records(1));
    p.commit(a.bumped().bumped(), 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::CommitEpochAboveData);
    at_batch(f, &m, 3);
    producer_of(f, 1251, 4);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(kinds(&r), vec![(Kind::CommitEpochAboveData, Some(5))]);
    assert_eq!(f.evidence["data_epoch"], 3);
    assert_eq!(f.evidence["marker_epoch"], 4);
    assert_eq!(f.evidence["previous_marker"]["offset"], 2);
    assert!(r.partitions[0].outcome().producers[0].transaction_version_2);
    // Two epochs up is not the TV2 pattern either: the verdict stays TV0/1.
    let d = Producer::transactional(1254, 3);
    let mut p = PartitionBuilder::new("ceabove", 2);
    p.append(Batch::new(d).records(1));
    p.commit(d, 0);
    p.append(Batch::new(d).records(1));
    p.commit(d.bumped().bumped(), 0);
    let (_d, _m, r) = run(&p);
    let f = one(&r, Kind::CommitEpochAboveData);
    assert_eq!(f.evidence["transaction_version_2_after"], false);
    assert!(f.message.contains("not the TV2 pattern"), "{}", f.message);
    assert!(!r.partitions[0].outcome().producers[0].transaction_version_2);
    // near misses: a TV0/1 ABORT above the data (a fenced abort) and the first bumped
    // COMMIT of a producer whose TV is not known yet are normal.
    let b = Producer::transactional(1252, 3);
    let mut p = PartitionBuilder::new("ceabove", 1);
    p.append(Batch::new(b).records(2));
    p.commit(b, 0);
    p.append(Batch::new(b).records(2));
    p.abort(b.bumped(), 0);
    let c = Producer::transactional(1253, 3);
    p.append(Batch::new(c).records(2));
    p.commit(c.bumped(), 0);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn marker_epoch_not_bumped_under_tv2() {
    // TV2 producer (every marker one above its data), then a COMMIT at the data's own epoch.
    let a = Producer::transactional(1250, 0);
    let mut p = PartitionBuilder::new("menb", 0);
    p.append(Batch::new(a).records(2));
    p.commit(a.bumped(), 0);
    p.append(Batch::new(a.bumped()).records(2));
    p.commit(a.bumped().bumped(), 0);
    p.append(Batch::new(a.bumped().bumped()).records(2));
    p.commit(a.bumped().bumped(), 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::MarkerEpochNotBumped);
    at_batch(f, &m, 5);
    producer_of(f, 1250, 2);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(kinds(&r), vec![(Kind::MarkerEpochNotBumped, Some(8))]);
    assert_eq!(f.evidence["transaction_first_batch"]["offset"], 6);
    assert_eq!(r.partitions[0].outcome().txn_stats.committed, 3);
    assert!(r.partitions[0].outcome().producers[0].transaction_version_2);
    // near miss: the same log written by a TV0/1 producer (markers at the data's epoch)
    let mut p = PartitionBuilder::new("menb", 0);
    for _ in 0..3 {
        p.append(Batch::new(a).records(2));
        p.commit(a, 0);
    }
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn non_transactional_write_in_transaction() {
    let txn = Producer::transactional(1400, 3);
    let mut p = PartitionBuilder::new("ntx", 0);
    p.append(Batch::new(txn).records(2));
    p.append(Batch::new(Producer::idempotent(1400, 3)).records(1));
    p.commit(txn, 0);
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::NonTransactionalWriteInTransaction);
    at_batch(f, &m, 1);
    producer_of(f, 1400, 3);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        kinds(&r),
        vec![(Kind::NonTransactionalWriteInTransaction, Some(2))]
    );
    // near miss: the same non-transactional batch after the marker
    let mut p = PartitionBuilder::new("ntx", 0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 0);
    p.append(Batch::new(Producer::idempotent(1400, 3)).records(1));
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}
