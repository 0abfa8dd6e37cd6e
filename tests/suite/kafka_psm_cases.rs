//! Kafka's own producer-state tests, reproduced as bytes on disk: each test here builds the
//! log (batches, markers, snapshots) of one case of `ProducerStateManagerTest`
//! (storage/src/test/java/org/apache/kafka/storage/internals/log/) or of `LogLoaderTest`
//! (core/src/test/scala/unit/kafka/log/), runs klogscan through the library's front door
//! (`request::run` / `request::verify`, what the CLI calls) and asserts what Kafka's test
//! implies, in the view klogscan takes of that case:
//!
//! * the **recovery view** (a broker loading the log, `AppendOrigin.REPLICATION`: nothing
//!   is refused) gives the producers' state and the last stable offset;
//! * the **audit view** reports, as findings, what a leader (`AppendOrigin.CLIENT` or
//!   `COORDINATOR`) would have refused: where Kafka's test expects an exception, the batch
//!   on disk raises the finding of that exception; where it expects an accepted append,
//!   nothing (or only an `info` statement the bytes prove) is reported.
//!
//! docs/testing.md ("Kafka's producer-state tests") maps every Kafka test method to the
//! test that reproduces it or says why it cannot be expressed as bytes.
#![cfg(feature = "testkit")]

use crate::common::cases::{entry, lso, scan, scan_dir, state};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, BatchSpec, PartitionBuilder, Producer, Rec, groups};
use klogscan::verify::PartitionVerification;
use serde_json::json;
use std::path::Path;

mod loader;
mod snapshots;

// ----- helpers ----------------------------------------------------------------------------

/// Verify the partition directory or log dir `input` as the CLI does (one partition).
fn verify_at(input: &Path) -> PartitionVerification {
    let a = request::verify(&Request::new([input]), None).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

/// `(file, kind)` of every snapshot the predicted load deletes.
fn deleted_snapshots(v: &PartitionVerification) -> Vec<(String, String)> {
    v.prediction
        .leftovers
        .iter()
        .filter(|l| l.file.ends_with(".snapshot"))
        .map(|l| (l.file.clone(), l.kind.clone()))
        .collect()
}

/// `(kind, offset)` of every finding, in report order.
fn kinds(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    r.findings.iter().map(|f| (f.kind, f.offset)).collect()
}

fn one(r: &ScanReport, k: Kind) -> &Finding {
    let v: Vec<_> = r.findings.iter().filter(|f| f.kind == k).collect();
    assert_eq!(v.len(), 1, "expected one {k}: {:#?}", r.findings);
    v[0]
}

/// One record of a batch at `seq` (Kafka's tests append single-sequence batches).
fn one_at(p: Producer, seq: i32) -> Batch {
    Batch::new(p).records(1).sequence(seq)
}

/// Scan a log of one-record batches `(producer, sequence)` starting at offset `start`.
fn scan_seqs(start: i64, batches: &[(Producer, i32)]) -> ScanReport {
    let mut p = PartitionBuilder::new("psm", 0).start_offset(start);
    for &(producer, seq) in batches {
        p.append(one_at(producer, seq));
    }
    scan(&p).2
}

// ----- ProducerStateManagerTest: sequences and epochs -------------------------------------

/// `ProducerStateManagerTest.testBasicIdMapping`: sequences 0 and 1, then a repeat of 1 and
/// a jump to 5 (both `OutOfOrderSequenceException` from a client), a new epoch at 0, then
/// the old epoch again (`InvalidProducerEpochException`). On disk a replica took them all;
/// each refused append is its finding, and the state follows the log (the epoch regresses,
/// as `checkProducerEpoch` only warns for REPLICATION).
#[test]
fn basic_id_mapping() {
    let p0 = Producer::idempotent(1, 0);
    let r = scan_seqs(
        0,
        &[
            (p0, 0),
            (p0, 1),
            (p0, 1),          // 2: the same sequence again
            (p0, 5),          // 3: 2 expected
            (p0.bumped(), 0), // 4: new epoch at 0
            (p0, 0),          // 5: the old epoch
        ],
    );
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::DuplicateSequence, Some(2)),
            (Kind::SequenceGap, Some(3)),
            (Kind::ProducerEpochRegression, Some(5)),
        ]
    );
    let d = one(&r, Kind::DuplicateSequence);
    assert_eq!(d.evidence["exact"], true);
    assert_eq!(d.evidence["original"]["offset"], 1);
    let g = one(&r, Kind::SequenceGap);
    assert_eq!(
        (&g.evidence["expected"], &g.evidence["found"]),
        (&2.into(), &5.into())
    );
    let e = one(&r, Kind::ProducerEpochRegression);
    assert_eq!(
        (&e.evidence["previous_epoch"], &e.evidence["epoch"]),
        (&1.into(), &0.into())
    );
    assert_eq!(e.severity, Severity::Error);
    assert_eq!(entry(&r, 1), (0, 0, 5, None));
    // near miss: the accepted appends alone raise nothing
    let r = scan_seqs(0, &[(p0, 0), (p0, 1), (p0.bumped(), 0)]);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (1, 0, 2, None));
}

/// `ProducerStateManagerTest.testProducerSequenceWrapAround`: sequence `Int.MAX` at epoch 15
/// (offset 735), then sequence 0 — in sequence, accepted; the last sequence is 0.
#[test]
fn producer_sequence_wrap_around() {
    let p15 = Producer::idempotent(1, 15);
    let r = scan_seqs(735, &[(p15, i32::MAX), (p15, 0)]);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (15, 0, 736, None));
}

/// `ProducerStateManagerTest.testProducerSequenceInvalidWrapAround`: after `Int.MAX` only 0
/// is in sequence; 1 is `OutOfOrderSequenceException` (one sequence missing).
#[test]
fn producer_sequence_invalid_wrap_around() {
    let p15 = Producer::idempotent(1, 15);
    let r = scan_seqs(735, &[(p15, i32::MAX), (p15, 1)]);
    assert_eq!(kinds(&r), vec![(Kind::SequenceGap, Some(736))]);
    let g = one(&r, Kind::SequenceGap);
    assert_eq!(
        (
            &g.evidence["expected"],
            &g.evidence["found"],
            &g.evidence["gap"]
        ),
        (&0.into(), &1.into(), &1.into())
    );
    // the replica took it: the state holds the out-of-order sequence
    assert_eq!(entry(&r, 1), (15, 1, 736, None));
}

/// `ProducerStateManagerTest.testProducerSequenceWithWrapAroundBatchRecord`: one batch of
/// 21 records at offsets 2000–2020 whose sequences wrap inside it (`Int.MAX − 10` … 9) is
/// valid; the state's last sequence is 9, its last offset 2020 (offset delta 20). The next
/// batch must start at 10.
#[test]
fn producer_sequence_with_wrap_around_batch_record() {
    let p15 = Producer::idempotent(1, 15);
    let mut p = PartitionBuilder::new("psm", 0).start_offset(2000);
    p.append(Batch::new(p15).records(21).sequence(i32::MAX - 10));
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches[0].last_offset, 2020);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (15, 9, 2020, None));
    assert_eq!(state(&r, 1).offset_delta, 20);
    // the next batch: 10 is in sequence, 11 is not
    p.append(one_at(p15, 10));
    let (_d, _m, r) = scan(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let mut p = PartitionBuilder::new("psm", 0).start_offset(2000);
    p.append(Batch::new(p15).records(21).sequence(i32::MAX - 10));
    p.append(one_at(p15, 11));
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::SequenceGap, Some(2021))]);
}

/// `ProducerStateManagerTest.testNoValidationOnFirstEntryWhenLoadingLog`: the first entry
/// of a producer (epoch 5, sequence 16, offset 735) is taken as it is on load — and a
/// leader with no state for the producer takes any sequence too. Also when the log starts
/// at offset 0.
#[test]
fn no_validation_on_first_entry_when_loading_log() {
    let p5 = Producer::idempotent(1, 5);
    for start in [735, 0] {
        let r = scan_seqs(start, &[(p5, 16)]);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(entry(&r, 1), (5, 16, start, None));
    }
}

/// `ProducerStateManagerTest.testAcceptAppendWithSequenceGapsOnReplica`: sequence 3 after 0
/// is refused from a client (`OutOfOrderSequenceException`) but accepted by replication,
/// which stores 3 as the last sequence.
#[test]
fn accept_append_with_sequence_gaps_on_replica() {
    let p0 = Producer::idempotent(1, 0);
    let r = scan_seqs(0, &[(p0, 0), (p0, 3)]);
    assert_eq!(kinds(&r), vec![(Kind::SequenceGap, Some(1))]);
    let g = one(&r, Kind::SequenceGap);
    assert_eq!(
        (&g.evidence["expected"], &g.evidence["gap"]),
        (&1.into(), &2.into())
    );
    // compaction unknown: a warning (the cleaner could have removed whole batches)
    assert_eq!(g.severity, Severity::Warning);
    assert_eq!(entry(&r, 1), (0, 3, 1, None));
    // near miss: sequence 1
    let r = scan_seqs(0, &[(p0, 0), (p0, 1)]);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// `ProducerStateManagerTest.testPidExpirationTimeout` and `testRemoveExpiredPidsOnReload`:
/// a producer idle longer than `producer.id.expiration.ms` is forgotten, and its next append
/// is taken with any sequence. On disk: sequence 7 after 0, more than a day later, is not a
/// gap; the same a second earlier (one day exactly is already expired in Kafka:
/// `currentTimeMs - lastTimestamp >= producerIdExpirationMs`) is.
#[test]
fn pid_expiration_timeout() {
    const DAY: i64 = 86_400_000;
    let p5 = Producer::idempotent(1, 5);
    for (idle, gap) in [(DAY, false), (DAY - 1_000, true)] {
        let mut p = PartitionBuilder::new("psm", 0).time_step(0);
        p.append(one_at(p5, 0));
        p.advance_time(idle);
        p.append(one_at(p5, 7));
        let (_d, _m, r) = scan(&p);
        let want = if gap {
            vec![(Kind::SequenceGap, Some(1))]
        } else {
            vec![]
        };
        assert_eq!(kinds(&r), want, "idle {idle} ms");
        assert_eq!(entry(&r, 1), (5, 7, 1, None));
    }
}

/// `ProducerStateManagerTest.testProducersWithOngoingTransactionsDontExpire`: a producer
/// with an open transaction is never expired, however long it is idle: its next batch is
/// still checked (a sequence gap a day later is reported), and the transaction stays the
/// first undecided offset (99).
#[test]
fn producers_with_ongoing_transactions_dont_expire() {
    let t5 = Producer::transactional(1, 5);
    let mut p = PartitionBuilder::new("psm", 0)
        .start_offset(99)
        .time_step(0);
    p.append(one_at(t5, 0));
    p.advance_time(2 * 86_400_000);
    p.append(one_at(t5, 4));
    let (_d, _m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::OpenTransaction, Some(99)),
            (Kind::SequenceGap, Some(100))
        ]
    );
    assert_eq!(lso(&r), Some(99));
    assert_eq!(entry(&r, 1), (5, 4, 100, Some(99)));
}

// ----- ProducerStateManagerTest: markers ----------------------------------------------------

/// `ProducerStateManagerTest.testControlRecordBumpsProducerEpoch`: data at epoch 0, then an
/// ABORT at epoch 1: the state takes epoch 1 with no sequence, no batch and no transaction;
/// data at epoch 1 starting at sequence 0 is accepted. The ABORT closes nothing (the data
/// was not transactional): said at info, as the bytes prove it.
#[test]
fn control_record_bumps_producer_epoch() {
    let p0 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("psm", 0);
    p.append(one_at(p0, 0));
    p.abort(p0.bumped(), 0);
    let (_d, _m, r) = scan(&p);
    assert_eq!(entry(&r, 1), (1, -1, -1, None));
    assert_eq!(kinds(&r), vec![(Kind::MarkerWithoutTransaction, Some(1))]);
    assert_eq!(r.findings[0].severity, Severity::Info);
    p.append(one_at(p0.bumped(), 0));
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::MarkerWithoutTransaction, Some(1))]);
    assert_eq!(entry(&r, 1), (1, 0, 2, None));
}

/// `ProducerStateManagerTest.testOutOfSequenceAfterControlRecordEpochBump`: transactional
/// data at sequences 0 and 1, an ABORT at epoch 1; then sequence 2 at epoch 1 or at epoch 2
/// is out of sequence (the bump reset it), sequence 0 at epoch 1 is accepted.
#[test]
fn out_of_sequence_after_control_record_epoch_bump() {
    let t0 = Producer::transactional(1, 0);
    let base = || {
        let mut p = PartitionBuilder::new("psm", 0);
        p.append(one_at(t0, 0));
        p.append(one_at(t0, 1));
        p.abort(t0.bumped(), 0);
        p
    };
    for epoch in [1, 2] {
        let mut p = base();
        p.append(one_at(t0.with_epoch(epoch), 2));
        let (_d, _m, r) = scan(&p);
        assert_eq!(
            kinds(&r),
            vec![
                (Kind::InvalidFirstSequence, Some(3)),
                (Kind::OpenTransaction, Some(3)),
            ],
            "epoch {epoch}"
        );
        let f = one(&r, Kind::InvalidFirstSequence);
        assert_eq!(
            (&f.evidence["expected"], &f.evidence["found"]),
            (&0.into(), &2.into())
        );
    }
    let mut p = base();
    p.append(one_at(t0.bumped(), 0));
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(3))]);
    assert_eq!(entry(&r, 1), (1, 0, 3, Some(3)));
    // the ABORT closed the first transaction
    let o = r.partitions[0].outcome();
    assert_eq!(
        o.aborted
            .iter()
            .map(|a| (a.first_offset, a.last_offset))
            .collect::<Vec<_>>(),
        vec![(0, 2)]
    );
}

/// `ProducerStateManagerTest.testProducerStateAfterFencingAbortMarker`: transactional data
/// at epoch 0, then a fencing ABORT at epoch 1: no transaction open, no batch kept
/// (last data offset −1: the epoch change cleared them), nothing wrong.
#[test]
fn producer_state_after_fencing_abort_marker() {
    let t0 = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("psm", 0);
    p.append(one_at(t0, 0));
    p.abort(t0.bumped(), 0);
    let (_d, _m, r) = scan(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (1, -1, -1, None));
    assert_eq!(lso(&r), Some(2));
    assert_eq!(r.partitions[0].outcome().aborted.len(), 1);
}

/// `ProducerStateManagerTest.testNonTransactionalAppendWithOngoingTransaction`:
/// non-transactional data (sequence 1) while the producer's transaction (sequence 0) is open
/// is `InvalidTxnStateException` — on every origin, replication and load included.
#[test]
fn non_transactional_append_with_ongoing_transaction() {
    let t0 = Producer::transactional(1, 0);
    let r = scan_seqs(0, &[(t0, 0), (Producer::idempotent(1, 0), 1)]);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::OpenTransaction, Some(0)),
            (Kind::NonTransactionalWriteInTransaction, Some(1)),
        ]
    );
    // near miss: transactional data at sequence 1
    let r = scan_seqs(0, &[(t0, 0), (t0, 1)]);
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(0))]);
}

/// `ProducerStateManagerTest.testOldEpochForControlRecord`: a COMMIT at epoch 3 for a
/// transaction written at epoch 5 is `InvalidProducerEpochException` from the coordinator;
/// a replica or a loading broker warns, takes it, and it closes the transaction.
#[test]
fn old_epoch_for_control_record() {
    let t5 = Producer::transactional(1, 5);
    let mut p = PartitionBuilder::new("psm", 0).start_offset(99);
    p.append(one_at(t5, 0));
    p.commit(t5.with_epoch(3), 0);
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::ProducerEpochRegression, Some(100))]);
    let f = one(&r, Kind::ProducerEpochRegression);
    assert_eq!(
        (&f.evidence["previous_epoch"], &f.evidence["epoch"]),
        (&5.into(), &3.into())
    );
    assert_eq!(lso(&r), Some(101));
    assert_eq!(entry(&r, 1), (3, -1, -1, None));
    // near miss: the COMMIT at epoch 5
    let mut p = PartitionBuilder::new("psm", 0).start_offset(99);
    p.append(one_at(t5, 0));
    p.commit(t5, 0);
    let (_d, _m, r) = scan(&p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (5, 0, 99, None));
}

/// `ProducerStateManagerTest.testCoordinatorFencing`: COMMITs at coordinator epochs 1, 1, 2
/// are accepted, a fourth at 1 is `TransactionCoordinatorFencedException`. The replica's
/// state keeps the last marker's coordinator epoch (REPLICATION only logs the regression).
/// The three COMMITs after the first close nothing (info).
#[test]
fn coordinator_fencing() {
    let t5 = Producer::transactional(1, 5);
    let mut p = PartitionBuilder::new("psm", 0).start_offset(99);
    p.append(one_at(t5, 0));
    p.commit(t5, 1);
    p.commit(t5, 1);
    p.commit(t5, 2);
    let (_d, _m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::MarkerWithoutTransaction, Some(101)),
            (Kind::MarkerWithoutTransaction, Some(102)),
        ]
    );
    assert_eq!(state(&r, 1).coordinator_epoch, 2);
    p.commit(t5, 1);
    let (_d, _m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::MarkerWithoutTransaction, Some(101)),
            (Kind::MarkerWithoutTransaction, Some(102)),
            (Kind::CoordinatorEpochRegression, Some(103)),
            (Kind::MarkerWithoutTransaction, Some(103)),
        ]
    );
    let f = one(&r, Kind::CoordinatorEpochRegression);
    assert_eq!(
        (
            &f.evidence["previous_coordinator_epoch"],
            &f.evidence["coordinator_epoch"]
        ),
        (&2.into(), &1.into())
    );
    assert_eq!(state(&r, 1).coordinator_epoch, 1);
}

/// `ProducerStateManagerTest.testAppendEmptyControlBatch`: a control batch with no records
/// (the cleaner emptied it) is skipped: it neither starts nor ends a transaction. Here it
/// sits inside producer 23423's open transaction (offset 15), which stays open.
#[test]
fn append_empty_control_batch() {
    let t = Producer::transactional(23423, 0);
    let mut p = PartitionBuilder::new("psm", 0).start_offset(14);
    p.append(one_at(t, 0));
    let base = p.next_offset();
    p.append_spec(BatchSpec {
        base_offset: base,
        control: true,
        transactional: true,
        producer_id: 23423,
        producer_epoch: 0,
        base_timestamp: p.now(),
        ..BatchSpec::default()
    });
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches[1].base_offset, 15);
    assert_eq!(lso(&r), Some(14));
    assert_eq!(entry(&r, 23423), (0, 0, 14, Some(14)));
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(14))]);
    // A producer first seen through an empty control batch: Kafka keeps an entry holding
    // nothing (epoch -1, no sequence, no timestamp, no transaction) that its next expiration
    // check drops (lastTimestamp -1); the replay keeps none. The verdicts agree: with epoch
    // -1 `checkSequence` accepts any first sequence, so data at sequence 7 is not reported.
    let mut p = PartitionBuilder::new("psm", 0).start_offset(15);
    p.append_spec(BatchSpec {
        base_offset: 15,
        control: true,
        transactional: true,
        producer_id: 23423,
        producer_epoch: 0,
        base_timestamp: p.now(),
        ..BatchSpec::default()
    });
    p.append(one_at(Producer::transactional(23423, 0), 7));
    let (_d, _m, r) = scan(&p);
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(16))]);
    assert_eq!(entry(&r, 23423), (0, 7, 16, Some(16)));
}

/// `ProducerStateManagerTest.testSequenceNotValidatedForGroupMetadataTopic`: the group
/// coordinator's transactional offset commits in `__consumer_offsets` carry no sequence
/// (−1) and are not sequence-checked (COORDINATOR origin). The same batches on an ordinary
/// topic are what a client cannot write (`invalid_producer_fields`).
#[test]
fn sequence_not_validated_for_group_metadata_topic() {
    let t = Producer::transactional(1, 0);
    let build = |topic: &str| {
        let mut p = PartitionBuilder::new(topic, 0).start_offset(99);
        for off in [7, 8] {
            let (k, v) = offset_commit_record(off);
            p.append(
                Batch::new(t)
                    .record(Rec::kv(k, v))
                    .tweak(|s| s.base_sequence = -1),
            );
        }
        p
    };
    let (_d, _m, r) = scan(&build("__consumer_offsets"));
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(99))]);
    let (_d, _m, r) = scan(&build("orders"));
    let bad: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::InvalidProducerFields)
        .map(|f| f.offset)
        .collect();
    assert_eq!(bad, vec![Some(99), Some(100)]);
}

/// Key and value (version 3) of an offset commit of group `g` for `orders-0` at `offset`,
/// encoded by the testkit's `__consumer_offsets` schemas.
fn offset_commit_record(offset: i64) -> (Vec<u8>, Vec<u8>) {
    let (k, v) = groups::record(
        1,
        json!({"group": "g", "topic": "orders", "partition": 0}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": -1, "metadata": "", "commitTimestamp": DEFAULT_START_MS}),
        )),
    );
    (k, v.unwrap())
}

/// `ProducerStateManagerTest.testHasLateTransaction`: transactions of producers 39 and 57
/// open 500 ms apart; a transaction is late (the broker's metric) once idle longer than the
/// maximum transaction timeout plus `LATE_TRANSACTION_BUFFER_MS` (the test sets a 5-minute
/// maximum; on disk the broker default, 15 minutes, applies): first 39's; 500 ms later,
/// though 57 is idle as long, still only 39's — the metric looks at the oldest open
/// transaction only (`hasLateTransaction`, `oldestTxnLastTimestamp`); once 39 commits 57
/// is the oldest, and late.
#[test]
fn has_late_transaction() {
    const LATE: i64 = 900_000 + 300_000;
    let (t39, t57) = (
        Producer::transactional(39, 2),
        Producer::transactional(57, 9),
    );
    let mut p = PartitionBuilder::new("psm", 0)
        .start_offset(100)
        .time_step(0);
    let t0 = p.now();
    p.append(one_at(t39, 0));
    p.advance_time(500);
    p.append(one_at(t57, 0));
    let late_at = |p: &PartitionBuilder, now: i64| {
        let dir = tempfile::tempdir().unwrap();
        let m = p.write(dir.path()).unwrap();
        let opts = ScanOptions::default().with_now_ms(now);
        let a = request::run(&Request::new([m.dir.clone()]).with_options(opts)).unwrap();
        a.report
            .findings
            .iter()
            .filter(|f| matches!(f.kind, Kind::OpenTransaction | Kind::HangingTransaction))
            .map(|f| {
                (
                    f.producer_id.unwrap(),
                    f.evidence["late_by_broker_metric"] == true,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(late_at(&p, t0 + 500), vec![(39, false), (57, false)]);
    assert_eq!(late_at(&p, t0 + LATE + 1), vec![(39, true), (57, false)]);
    assert_eq!(late_at(&p, t0 + LATE + 501), vec![(39, true), (57, false)]);
    p.commit(t39, 0);
    assert_eq!(late_at(&p, t0 + LATE + 501), vec![(57, true)]);
}

// ----- ProducerStateManagerTest: the first unstable offset ----------------------------------

/// `ProducerStateManagerTest.testFirstUnstableOffset`: producer 1 opens a transaction at 99,
/// producer 2 at 105; producer 1 commits at 109 (the first undecided offset moves to 105),
/// producer 2 aborts at 112 (nothing undecided: the last stable offset is the log end).
/// Each prefix of the log is a log a broker could load.
#[test]
fn first_unstable_offset() {
    let (t1, t2) = (Producer::transactional(1, 5), Producer::transactional(2, 5));
    let mut p = PartitionBuilder::new("psm", 0).start_offset(99);
    p.append(Batch::new(t1).records(6)); // 99..104
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(99));
    p.append(Batch::new(t2).records(4)); // 105..108
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(99));
    p.commit(t1, 0); // 109
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(105));
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(105))]);
    p.append(Batch::new(Producer::PLAIN).records(2)); // 110..111
    p.abort(t2, 0); // 112
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 113);
    assert_eq!(lso(&r), Some(113));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let o = r.partitions[0].outcome();
    assert_eq!(
        o.aborted
            .iter()
            .map(|a| (a.producer_id, a.first_offset, a.last_offset))
            .collect::<Vec<_>>(),
        vec![(2, 105, 112)]
    );
}

/// `ProducerStateManagerTest.testLastStableOffsetCompletedTxn`: in a segment based at
/// 990000, transactions of producers 1, 2, 3 start at 992342, 992367, 992399; producer 1
/// completes at 992414 and producer 3 at 992434 (the last stable offset stays at 992367,
/// producer 2's start), producer 2 at 992512 (then it is the log end).
#[test]
fn last_stable_offset_completed_txn() {
    let (t1, t2, t3) = (
        Producer::transactional(1, 0),
        Producer::transactional(2, 0),
        Producer::transactional(3, 0),
    );
    let mut p = PartitionBuilder::new("psm", 0).start_offset(990_000);
    p.append(Batch::new(Producer::PLAIN).records(2342)); // 990000..992341
    p.append(Batch::new(t1).records(25)); // 992342..992366
    p.append(Batch::new(t2).records(32)); // 992367..992398
    p.append(Batch::new(t3).records(15)); // 992399..992413
    p.commit(t1, 0); // 992414 = start3 + 15
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches.last().unwrap().base_offset, 992_414);
    assert_eq!(lso(&r), Some(992_367));
    p.append(Batch::new(Producer::PLAIN).records(19));
    p.commit(t3, 0); // 992434 = lastOffset1 + 20
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches.last().unwrap().base_offset, 992_434);
    assert_eq!(lso(&r), Some(992_367));
    assert_eq!(kinds(&r), vec![(Kind::OpenTransaction, Some(992_367))]);
    p.append(Batch::new(Producer::PLAIN).records(77));
    p.commit(t2, 0); // 992512 = lastOffset3 + 78
    let (_d, m, r) = scan(&p);
    assert_eq!(m.batches.last().unwrap().base_offset, 992_512);
    assert_eq!(lso(&r), Some(992_513));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.partitions[0].outcome().txn_stats.committed, 3);
}

/// `ProducerStateManagerTest.testSkipEmptyTransactions`: one producer writes data 16–20,
/// COMMIT 21, then empty COMMIT 22 and ABORT 23, data 24–27, ABORT 28, empty ABORT 29, data
/// 30–31. Empty transactions complete nothing: the aborted list holds 24–28 only and the
/// first unstable offset is 30. The empty markers are stated at info (the second an ABORT
/// after a COMMIT at one epoch: not a conflict for a producer seen committing at its
/// data's epoch, transaction version 0/1).
#[test]
fn skip_empty_transactions() {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("psm", 0).start_offset(16);
    p.append(Batch::new(t).records(5)); // 16..20, sequences 0..4
    p.commit(t, 27); // 21
    p.commit(t, 27); // 22
    p.abort(t, 27); // 23
    p.append(Batch::new(t).records(4)); // 24..27, sequences 5..8
    p.abort(t, 27); // 28
    p.abort(t, 27); // 29
    p.append(Batch::new(t).records(2)); // 30..31, sequences 9..10
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 32);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::MarkerWithoutTransaction, Some(22)),
            (Kind::MarkerWithoutTransaction, Some(23)),
            (Kind::MarkerWithoutTransaction, Some(29)),
            (Kind::OpenTransaction, Some(30)),
        ]
    );
    assert!(r.findings.iter().all(|f| f.severity == Severity::Info));
    assert_eq!(lso(&r), Some(30));
    let o = r.partitions[0].outcome();
    assert_eq!(
        o.aborted
            .iter()
            .map(|a| (a.first_offset, a.last_offset))
            .collect::<Vec<_>>(),
        vec![(24, 28)]
    );
    let s = &o.txn_stats;
    assert_eq!(
        (
            s.committed,
            s.aborted,
            s.empty_commits,
            s.empty_aborts,
            s.open
        ),
        (1, 1, 1, 2, 1)
    );
    assert_eq!(entry(&r, 1), (0, 10, 31, Some(30)));
}
