//! Producer epochs and sequences: epoch regressions and bumps, zombie writes after a
//! higher-epoch marker, TV2 epoch-bumping markers, first sequences on a new epoch, gaps,
//! duplicates and invalid producer fields.

use super::*;

#[test]
fn producer_epoch_regression_and_bump() {
    let idem = Producer::idempotent(200, 3);
    let mut p = PartitionBuilder::new("pe", 0);
    p.append(Batch::new(idem).records(2));
    p.append(Batch::new(idem.with_epoch(2)).records(1));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::ProducerEpochRegression);
    at_batch(f, &m, 1);
    producer_of(f, 200, 2);
    assert_eq!(f.severity, Severity::Error);
    // no marker: not a zombie write
    none_of(&r, Kind::ZombieWrite);
    assert_eq!(kinds(&r), vec![(Kind::ProducerEpochRegression, Some(2))]);
    // near miss: the epoch goes up (sequence restarts at 0)
    let mut p = PartitionBuilder::new("pe", 0);
    p.append(Batch::new(idem).records(2));
    p.append(Batch::new(idem.bumped()).records(1));
    let (_d, m, r) = run(&p);
    assert_eq!(m.batches[1].base_sequence, 0);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn zombie_write_after_a_higher_epoch_marker() {
    let txn = Producer::transactional(300, 5);
    let mut p = PartitionBuilder::new("zw", 0);
    p.append(Batch::new(txn).records(2));
    p.abort(txn.bumped(), 1); // TV2: the marker one epoch above the data
    p.append(Batch::new(txn).records(1).sequence(2));
    p.append(Batch::new(Producer::PLAIN).values(["later"]));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::ZombieWrite);
    at_batch(f, &m, 2);
    producer_of(f, 300, 5);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["opens_transaction"], true);
    at_batch(one(&r, Kind::ProducerEpochRegression), &m, 2);
    // young: the transaction it opened is open, not hanging
    let o = one(&r, Kind::OpenTransaction);
    at_batch(o, &m, 2);
    none_of(&r, Kind::HangingTransaction);
}

#[test]
fn tv2_epoch_bumping_markers_raise_no_epoch_finding() {
    // TV2: every marker is one epoch above the transaction's data; the next transaction
    // runs at the marker's epoch and starts at sequence 0.
    let mut txn = Producer::transactional(400, 10);
    let mut p = PartitionBuilder::new("tv2", 0);
    for i in 0..4 {
        p.append(Batch::new(txn).records(2));
        p.append(Batch::new(Producer::PLAIN).values(["between"]));
        p.append(Batch::new(txn).records(1));
        if i % 2 == 0 {
            p.commit(txn.bumped(), 2);
        } else {
            p.abort(txn.bumped(), 2);
        }
        txn = txn.bumped();
    }
    let (_d, m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let o = &r.partitions[0].outcome();
    assert_eq!((o.txn_stats.committed, o.txn_stats.aborted), (2, 2));
    let st = &o.producers[0];
    assert_eq!(st.producer_epoch, 14);
    assert!(st.transaction_version_2);
    assert_eq!(st.current_txn_first_offset, None);
    assert_eq!(r.partitions[0].last_stable_offset, Some(m.log_end_offset));
}

#[test]
fn invalid_first_sequence_on_a_new_epoch() {
    let idem = Producer::idempotent(500, 0);
    let mut p = PartitionBuilder::new("fs", 0);
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(idem.bumped()).records(1).sequence(7));
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidFirstSequence);
    at_batch(f, &m, 1);
    producer_of(f, 500, 1);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence["found"], 7);
    assert_eq!(kinds(&r), vec![(Kind::InvalidFirstSequence, Some(3))]);
    // near miss: the new epoch starts at 0
    let mut p = PartitionBuilder::new("fs", 0);
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(idem.bumped()).records(1).sequence(0));
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn sequence_gap_within_an_epoch() {
    let idem = Producer::idempotent(600, 2);
    let mut p = PartitionBuilder::new("sg", 0);
    p.append(Batch::new(idem).records(3)); // 0..2
    p.append(Batch::new(idem).records(2).sequence(6)); // 3..5 missing
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::SequenceGap);
    at_batch(f, &m, 1);
    producer_of(f, 600, 2);
    // the scan cannot know cleanup.policy of an ordinary topic (compaction removes whole
    // batches), so the gap is a warning, not the kind's default error
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        (
            &f.evidence["expected"],
            &f.evidence["found"],
            &f.evidence["gap"]
        ),
        (&3.into(), &6.into(), &3.into())
    );
    assert_eq!(kinds(&r), vec![(Kind::SequenceGap, Some(3))]);
    // near miss: sequences wrap from i32::MAX to 0 without a gap
    let mut p = PartitionBuilder::new("sg", 0);
    p.append(Batch::new(idem).records(2).sequence(i32::MAX - 1));
    p.append(Batch::new(idem).records(2));
    let (_d, m, r) = run(&p);
    assert_eq!(m.batches[1].base_sequence, 0);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn duplicate_sequence_exact_and_overlap() {
    let idem = Producer::idempotent(700, 0);
    let mut p = PartitionBuilder::new("dup", 0);
    p.append(Batch::new(idem).records(3)); // 0..2
    p.append(Batch::new(idem).records(3).sequence(0)); // exact duplicate
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::DuplicateSequence);
    at_batch(f, &m, 1);
    producer_of(f, 700, 0);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["exact"], true);
    assert_eq!(f.evidence["original"]["offset"], 0);
    none_of(&r, Kind::SequenceGap);

    let mut p = PartitionBuilder::new("dup", 0);
    p.append(Batch::new(idem).records(3)); // 0..2
    p.append(Batch::new(idem).records(3).sequence(1)); // 1..3 overlaps
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::DuplicateSequence);
    at_batch(f, &m, 1);
    assert_eq!(f.evidence["exact"], false);
    // near miss: the same sequences at another producer id
    let mut p = PartitionBuilder::new("dup", 0);
    p.append(Batch::new(idem).records(3));
    p.append(
        Batch::new(Producer::idempotent(701, 0))
            .records(3)
            .sequence(0),
    );
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn invalid_producer_fields() {
    // a producer id with baseSequence -1 on a data batch
    let mut p = PartitionBuilder::new("pf", 0);
    p.append(
        Batch::new(Producer::idempotent(800, 0))
            .records(1)
            .tweak(|s| s.base_sequence = -1),
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidProducerFields);
    at_batch(f, &m, 0);
    producer_of(f, 800, 0);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.client_error.is_some());
    // transactional bit without a producer id
    let mut p = PartitionBuilder::new("pf", 0);
    p.append(
        Batch::new(Producer::PLAIN)
            .records(1)
            .tweak(|s| s.transactional = true),
    );
    let (_d, m, r) = run(&p);
    let f = one(&r, Kind::InvalidProducerFields);
    at_batch(f, &m, 0);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.producer_id, None);
    // near miss: plain, idempotent and transactional batches with consistent fields
    let txn = Producer::transactional(801, 1);
    let mut p = PartitionBuilder::new("pf", 0);
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.append(Batch::new(Producer::idempotent(800, 0)).records(1));
    p.append(Batch::new(txn).records(1));
    p.commit(txn, 0);
    let (_d, _m, r) = run(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}
