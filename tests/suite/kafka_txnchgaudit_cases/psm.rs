//! `ProducerStateManagerTest`'s transaction methods that the 2026-08 trunk parameterises over
//! the transaction version (`@ValueSource(shorts = {0, 2})`, KIP-890 and KIP-1228, Kafka
//! 4.2): under TV2 each marker the test appends is one epoch above the producer's
//! (`markerEpochForTransactionVersion`), since a leader refuses a TV2 marker that is not
//! (`ProducerAppendInfo.checkProducerEpoch`: `<=` for version 2, `<` before). The TV0 bodies
//! are the 2024-10 ones `kafka_psm_cases` reproduces; these are the TV2 logs. A partition
//! holds no transaction version, so the replay infers TV2 from a COMMIT one epoch above its
//! data (`partition::state::marker`), as `marker_epoch_not_bumped` documents.

use crate::common::cases::{lso, scan, state};
use klogscan::finding::{Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::{Batch, PartitionBuilder, PartitionFileOptions, Producer};

/// `(kind, severity, offset)` of every finding, in report order.
fn kinds(r: &ScanReport) -> Vec<(Kind, Severity, Option<i64>)> {
    r.findings
        .iter()
        .map(|f| (f.kind, f.severity, f.offset))
        .collect()
}

/// Producer 1's transaction of one record at epoch 5, from offset 99 (the test's setup).
fn opened() -> (PartitionBuilder, Producer) {
    let t5 = Producer::transactional(1, 5);
    let mut p = PartitionBuilder::new("psm", 0).start_offset(99);
    p.append(Batch::new(t5).records(1).sequence(0));
    (p, t5)
}

/// `ProducerStateManagerTest.testCoordinatorFencing` with transaction version 2: data at
/// epoch 5 (99), COMMITs at epochs 6 and 7 from coordinator epoch 1 (100, 101) and at 8 from
/// coordinator epoch 2 (102) are taken; a fourth at 9 from coordinator epoch 1 is
/// `TransactionCoordinatorFencedException`. On disk: the three COMMITs after the first close
/// nothing (info), the state at epoch 8 and coordinator epoch 2, the last stable offset the
/// log end. Near miss: that fourth COMMIT written (a replica takes it):
/// `coordinator_epoch_regression` at 103.
#[test]
fn coordinator_fencing_with_bumped_markers() {
    let (mut p, t5) = opened();
    p.commit(t5.with_epoch(6), 1);
    p.commit(t5.with_epoch(7), 1);
    p.commit(t5.with_epoch(8), 2);
    let (_d, _m, r) = scan(&p);
    let closes_nothing = |o| (Kind::MarkerWithoutTransaction, Severity::Info, Some(o));
    assert_eq!(kinds(&r), vec![closes_nothing(101), closes_nothing(102)]);
    let s = state(&r, 1);
    assert_eq!((s.producer_epoch, s.coordinator_epoch), (8, 2));
    assert_eq!(lso(&r), Some(103));
    p.commit(t5.with_epoch(9), 1);
    let (_d, _m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            closes_nothing(101),
            closes_nothing(102),
            (
                Kind::CoordinatorEpochRegression,
                Severity::Warning,
                Some(103)
            ),
            closes_nothing(103),
        ]
    );
}

/// `ProducerStateManagerTest.testCoordinatorFencedAfterReload` with transaction version 2:
/// data at epoch 5, its COMMIT at 6 from coordinator epoch 1, a snapshot, a reload; a COMMIT
/// at 7 from coordinator epoch 0 is fenced. On disk, the broker's snapshot at the log end
/// agrees with the log (`verify` finds nothing), holding epoch 6 and coordinator epoch 1.
/// Near miss: that COMMIT written: `coordinator_epoch_regression` at 101 (and the marker
/// closes nothing); from coordinator epoch 1 it is only the info.
#[test]
fn coordinator_fenced_after_reload_with_bumped_markers() {
    let t5 = Producer::transactional(1, 5);
    let build = |late: Option<i32>| {
        let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
        p.append(Batch::new(t5).records(1).sequence(0));
        p.commit(t5.with_epoch(6), 1);
        if let Some(ce) = late {
            p.commit(t5.with_epoch(7), ce);
        }
        p
    };
    let p = build(None);
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    std::fs::write(dir.path().join(".kafka_cleanshutdown"), b"").unwrap();
    assert!(m.dir.join(format!("{:020}.snapshot", 2)).exists());
    let v = request::verify(&Request::new([dir.path()]), None).unwrap();
    let part = &v.report.partitions[0];
    assert!(part.findings.is_empty(), "{:#?}", part.findings);
    let (_d, _m, r) = scan(&p);
    let s = state(&r, 1);
    assert_eq!((s.producer_epoch, s.coordinator_epoch), (6, 1));
    for (ce, fenced) in [(0, true), (1, false)] {
        let (_d, _m, r) = scan(&build(Some(ce)));
        let mut want = vec![(Kind::MarkerWithoutTransaction, Severity::Info, Some(2))];
        if fenced {
            let regression = (Kind::CoordinatorEpochRegression, Severity::Warning, Some(2));
            want.insert(0, regression);
        }
        assert_eq!(kinds(&r), want, "coordinator epoch {ce}");
    }
}

/// `ProducerStateManagerTest.testOldEpochForControlRecord` with transaction version 2: a
/// COMMIT at epoch 3 for data at 5 is refused under every version; under TV2 a COMMIT at
/// the data's own epoch 5 is refused too (it is taken under TV0). A partition shows the
/// version only through the producer's earlier markers: after a first transaction committed
/// one epoch up (5 → 6), the second transaction's COMMIT at its data's epoch 6 is
/// `marker_epoch_not_bumped` (warning) — and a replica takes it, so it closes the
/// transaction. Near miss: the same COMMIT at 7 (bumped): nothing. (A COMMIT at 3 after data
/// at 5 is `producer_epoch_regression` under both versions: `kafka_psm_cases`.)
#[test]
fn old_epoch_for_control_record_under_tv2() {
    for bumped in [false, true] {
        let (mut p, t5) = opened();
        let t6 = t5.with_epoch(6);
        p.commit(t6, 0);
        p.append(Batch::new(t6).records(1).sequence(0));
        p.commit(t5.with_epoch(if bumped { 7 } else { 6 }), 0);
        let (_d, _m, r) = scan(&p);
        let want = if bumped {
            vec![]
        } else {
            vec![(Kind::MarkerEpochNotBumped, Severity::Warning, Some(102))]
        };
        assert_eq!(kinds(&r), want, "bumped {bumped}");
        assert_eq!(lso(&r), Some(103), "bumped {bumped}");
    }
}

/// `ProducerStateManagerTest.testFirstUnstableOffset` with transaction version 2: producer 1
/// opens a transaction at 99 (epoch 5), producer 2 at 105; producer 1's COMMIT at epoch 6
/// (109) moves the first undecided offset to 105; producer 2's ABORT at 6 (112) leaves
/// nothing undecided (the last stable offset is the log end, 113), producer 2's range
/// 105–112 aborted. Near miss: without that ABORT the last stable offset stays at 105 and
/// producer 2's transaction is open.
#[test]
fn first_unstable_offset_with_bumped_markers() {
    let (t1, t2) = (Producer::transactional(1, 5), Producer::transactional(2, 5));
    let mut p = PartitionBuilder::new("psm", 0).start_offset(99);
    p.append(Batch::new(t1).records(6)); // 99..104
    p.append(Batch::new(t2).records(4)); // 105..108
    p.commit(t1.with_epoch(6), 0); // 109
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(105));
    assert_eq!(
        kinds(&r),
        vec![(Kind::OpenTransaction, Severity::Info, Some(105))]
    );
    p.append(Batch::new(Producer::PLAIN).records(2)); // 110..111
    p.abort(t2.with_epoch(6), 0); // 112
    let (_d, _m, r) = scan(&p);
    assert_eq!(lso(&r), Some(113));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let o = r.partitions[0].outcome();
    let aborted: Vec<_> = (o.aborted.iter())
        .map(|a| (a.producer_id, a.first_offset, a.last_offset))
        .collect();
    assert_eq!(aborted, vec![(2, 105, 112)]);
}

/// `ProducerStateManagerTest.testHasLateTransaction` with transaction version 2: producers
/// 39 (epoch 2) and 57 (epoch 9) open transactions 500 ms apart; the oldest open one is late
/// once idle past the maximum transaction timeout plus `LATE_TRANSACTION_BUFFER_MS` (15 + 5
/// min on disk); 39's COMMIT at epoch 3 leaves 57's late; 57's COMMIT at 10 leaves nothing.
/// Near miss: before that last COMMIT, 57 is still open and late.
#[test]
fn has_late_transaction_with_bumped_markers() {
    const LATE: i64 = 900_000 + 300_000;
    let (t39, t57) = (
        Producer::transactional(39, 2),
        Producer::transactional(57, 9),
    );
    let mut p = PartitionBuilder::new("psm", 0)
        .start_offset(100)
        .time_step(0);
    let t0 = p.now();
    p.append(Batch::new(t39).records(1).sequence(0));
    p.advance_time(500);
    p.append(Batch::new(t57).records(1).sequence(0));
    let late_at = |p: &PartitionBuilder, now: i64| {
        let dir = tempfile::tempdir().unwrap();
        let m = p.write(dir.path()).unwrap();
        let opts = ScanOptions::default().with_now_ms(now);
        let a = request::run(&Request::new([m.dir.clone()]).with_options(opts)).unwrap();
        (a.report.findings.iter())
            .filter(|f| matches!(f.kind, Kind::OpenTransaction | Kind::HangingTransaction))
            .map(|f| {
                let late = f.evidence["late_by_broker_metric"] == true;
                (f.producer_id.unwrap(), late)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(late_at(&p, t0 + LATE + 1), vec![(39, true), (57, false)]);
    p.commit(t39.with_epoch(3), 0);
    assert_eq!(late_at(&p, t0 + LATE + 501), vec![(57, true)]);
    p.commit(t57.with_epoch(10), 0);
    assert_eq!(late_at(&p, t0 + LATE + 501), vec![]);
}
