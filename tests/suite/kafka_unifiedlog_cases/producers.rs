//! The producer-state cases of `UnifiedLogTest`: the state a loading broker rebuilds from
//! the batches (`activeProducers`), and the appends a leader refuses but a follower takes.

use super::{kinds, scan, txn};
use crate::common::cases::state;
use klogscan::finding::Kind;
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};

/// (epoch, last sequence, open transaction's first offset, coordinator epoch).
fn active(r: &ScanReport, pid: i64) -> (i16, i32, Option<i64>, i32) {
    let s = state(r, pid);
    (
        s.producer_epoch,
        s.last_sequence,
        s.current_txn_first_offset,
        s.coordinator_epoch,
    )
}

/// `UnifiedLogTest.testActiveProducers`: producer 1 (epoch 5) writes five transactional
/// records: last sequence 4, transaction open at 0, no coordinator epoch; its COMMIT at
/// coordinator epoch 15 closes the transaction and records 15; idempotent producer 2
/// (epoch 5) writes three: last sequence 2, no transaction, no coordinator epoch.
#[test]
fn active_producers() {
    let t1 = txn(1, 5);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(t1).records(5));
    let (_d, _m, r) = scan(&p);
    assert_eq!(active(&r, 1), (5, 4, Some(0), -1));
    p.commit(t1, 15);
    let (_d, _m, r) = scan(&p);
    assert_eq!(active(&r, 1), (5, 4, None, 15));
    p.append(Batch::new(Producer::idempotent(2, 5)).records(3));
    let (_d, _m, r) = scan(&p);
    assert_eq!(active(&r, 1), (5, 4, None, 15));
    assert_eq!(active(&r, 2), (5, 2, None, -1));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// `UnifiedLogTest.testOldProducerEpoch`: producer 1 writes at epoch 1, then at epoch 0:
/// `InvalidProducerEpochException` from a client; on disk a `producer_epoch_regression`.
/// Near miss: epoch 1 then 1 again in sequence.
#[test]
fn old_producer_epoch() {
    let p1 = Producer::idempotent(1, 1);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(p1).records(1).sequence(0));
    p.append(Batch::new(p1.with_epoch(0)).records(1).sequence(0));
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::ProducerEpochRegression, Some(1))]);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(p1).records(1));
    p.append(Batch::new(p1).records(1));
    let (_d, _m, r) = scan(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// `UnifiedLogTest.testDuplicateAppendToFollower` and
/// `testMultipleProducersWithDuplicatesInSingleAppend`: a follower takes a batch repeating
/// a sequence (the log end moves past it: 4, and 5). On disk the repeat is a
/// `duplicate_sequence` (what a leader would have answered as a duplicate without writing
/// it); the other producers' batches in the same append raise nothing.
#[test]
fn duplicate_append_to_follower() {
    let p1 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(p1).values(["a", "b"]).sequence(0));
    p.append(Batch::new(p1).values(["a", "b"]).sequence(0));
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 4);
    assert_eq!(kinds(&r), vec![(Kind::DuplicateSequence, Some(2))]);
    let p2 = Producer::idempotent(2, 0);
    let mut p = PartitionBuilder::new("ul", 0);
    for (pr, seq) in [(p1, 0), (p2, 0), (p1, 1), (p2, 1), (p1, 1)] {
        p.append(
            Batch::new(pr)
                .record(Rec::kv("key", "value"))
                .sequence(seq)
                .log_append_time(),
        );
    }
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 5);
    assert_eq!(kinds(&r), vec![(Kind::DuplicateSequence, Some(4))]);
    assert_eq!(r.findings[0].evidence["original"]["offset"], 2);
}

/// `UnifiedLogTest.testMultipleProducerIdsPerMemoryRecord`: four producers (1–4), one
/// single-record batch each at sequence 0, in one follower append: each batch keeps its
/// producer, offset and sequence, and each producer's state holds it.
#[test]
fn multiple_producer_ids_per_memory_record() {
    let mut p = PartitionBuilder::new("ul", 0);
    for pid in 1..=4 {
        p.append(
            Batch::new(Producer::idempotent(pid, 0))
                .record(Rec::kv("key", "value"))
                .log_append_time(),
        );
    }
    let (_d, m, r) = scan(&p);
    let got: Vec<(i64, i64, i32)> = m
        .batches
        .iter()
        .map(|b| (b.producer_id, b.base_offset, b.base_sequence))
        .collect();
    assert_eq!(got, vec![(1, 0, 0), (2, 1, 0), (3, 2, 0), (4, 3, 0)]);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    for pid in 1..=4 {
        let s = state(&r, pid);
        assert_eq!((s.last_sequence, s.last_offset), (0, pid - 1));
    }
}

/// `UnifiedLogTest.testAllowNonZeroSequenceOnFirstAppendNonZeroEpoch`: the first
/// transactional batch of producer 23 at epoch 1 starts at sequence 3 — accepted (no state
/// for the producer: any sequence). Near miss: the same after a batch of producer 23 at
/// epoch 0 is a new epoch starting above 0 (`invalid_first_sequence`).
#[test]
fn allow_non_zero_sequence_on_first_append_non_zero_epoch() {
    let t = txn(23, 1);
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(t).values(["1", "2"]).sequence(3));
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(0))]);
    assert_eq!(active(&r, 23), (1, 4, Some(0), -1));
    let mut p = PartitionBuilder::new("ul", 0);
    p.append(Batch::new(Producer::idempotent(23, 0)).records(1));
    p.append(Batch::new(t).values(["1", "2"]).sequence(3));
    let (_d, _m, r) = scan(&p);
    assert!(
        kinds(&r).contains(&(Kind::InvalidFirstSequence, Some(1))),
        "{:#?}",
        r.findings
    );
}

/// `UnifiedLogTest.testRebuildProducerIdMapWithCompactedData` and
/// `testUpdateProducerIdMapWithCompactedData`: producer 1's batch at 23 (sequence 0, four
/// records) kept by the cleaner with only its records at offset deltas 0 and 2
/// (lastOffsetDelta still 3), then plain data at 27–28: the producer's last sequence is 3
/// (base sequence + lastOffsetDelta), whether replayed on append or rebuilt on load.
#[test]
fn rebuild_producer_id_map_with_compacted_data() {
    let p1 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).start_offset(23);
    p.append(
        Batch::new(p1)
            .record(Rec::value("a").offset_delta(0))
            .record(Rec::value("c").offset_delta(2))
            .leader_epoch(0)
            .tweak(|s| s.overrides.last_offset_delta = Some(3)),
    );
    p.append(Batch::new(Producer::PLAIN).values(["e", "f"]));
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches[1].base_offset, 27);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let s = state(&r, 1);
    assert_eq!((s.last_sequence, s.last_offset), (3, 26));
}

/// `UnifiedLogTest.testRebuildProducerStateWithEmptyCompactedBatch`: producer 1's batch at
/// 23 (sequence 0, two records) emptied by the cleaner and kept (no records,
/// lastOffsetDelta 1), then plain data at 25–26: the producer is still known, with last
/// sequence 1.
#[test]
fn rebuild_producer_state_with_empty_compacted_batch() {
    let p1 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).start_offset(23);
    p.append(Batch::new(p1).leader_epoch(0).tweak(|s| {
        s.records.clear();
        s.base_sequence = 0;
        s.overrides.last_offset_delta = Some(1);
    }));
    p.append(Batch::new(Producer::PLAIN).values(["e", "f"]));
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches[0].record_count, 0);
    assert_eq!(m.batches[1].base_offset, 25);
    let s = state(&r, 1);
    assert_eq!((s.last_sequence, s.last_offset), (1, 24));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}
