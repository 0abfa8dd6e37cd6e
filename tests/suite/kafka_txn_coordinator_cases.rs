//! Kafka's `TransactionCoordinatorTest` (core/src/test/scala/unit/kafka/coordinator/
//! transaction/): the coordinator's decisions as they land in `__transaction_state` and in
//! the data partitions' COMMIT/ABORT markers, against klogscan's verdicts on those bytes.
use klogscan::Kind;
use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::{TxnValue, state};
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use std::path::Path;

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);

fn scan_dir(dir: &Path) -> ScanReport {
    pipeline::scan(&[dir.to_path_buf()], &ScanOptions::default())
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// Nothing at warning or above: the coordinator's own decisions are normal traffic.
fn assert_quiet(name: &str, r: &ScanReport) {
    let bad: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .collect();
    assert!(bad.is_empty(), "{name}: {bad:#?}");
}

/// Half an hour later a plain write to `A` sets the reference time; the cluster written
/// under `dir` must then be [`assert_quiet`].
fn end_quiet(mut c: Cluster, dir: &Path, name: &str) {
    c.advance(30 * 60_000);
    c.plain(A, 1);
    c.write(dir, 1).unwrap();
    assert_quiet(name, &scan_dir(dir));
}

fn tv2(pid: i64, epoch: i16, st: u8, prev: i64, next: i64) -> TxnValue {
    TxnValue::new(pid, epoch, st).v1(prev, next, 2)
}

/// `TransactionCoordinatorTest.shouldNotCauseEpochOverflowWhenInitPidDuringOngoingTxnV2`
/// (trunk, Oct 2025) and its continuation: a new producer instance's InitProducerId finds
/// the transactional id Ongoing at the exhausted epoch 32766 under TV2. The coordinator
/// fences (`prepareFenceProducerEpoch`) and aborts: PrepareAbort at 32767 with no
/// NextProducerId (`endTransaction` allocates none for an epoch fence before KAFKA-20090),
/// ABORT markers at 32767, CompleteAbort at 32767 of the same producer id; the InitProducerId
/// itself is answered CONCURRENT_TRANSACTIONS. Its retry finds CompleteAbort at an exhausted
/// epoch and rotates (`prepareInitProducerIdTransit` → `prepareProducerIdRotation`): Empty of a
/// new producer id at epoch 0. No client was ever handed epoch 32767 and the record right after
/// shows the producer moved on, so "CompleteAbort leaves producer 50 at epoch 32767; its next
/// transaction cannot complete normally" (`producer_stuck_at_exhausted_epoch`, error,
/// `complete_without_rotation`) is a false alarm here. The twin without the rotation (the
/// CompleteAbort is the id's latest value) keeps its finding.
#[test]
fn an_exhausted_fence_abort_followed_by_the_init_producer_id_rotation_is_not_stuck() {
    for rotated in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator(9).tv2();
        // Ongoing(50, 32766) → PrepareAbort(50, 32767) → ABORT marker at 32767 (the testkit
        // writes TV2 values v1 with Previous/NextProducerId -1, as 4.0–4.2 brokers do)
        c.run(
            &Txn::new("x", Producer::transactional(50, 32766), &[A])
                .abort()
                .marker_epoch(32767)
                .no_complete(),
        );
        let t = c.now();
        c.coordinator_record(
            "x",
            Some(tv2(50, 32767, state::COMPLETE_ABORT, -1, -1).times(t, t)),
        );
        if rotated {
            c.advance(100);
            let t = c.now();
            c.coordinator_record("x", Some(tv2(51, 0, state::EMPTY, -1, -1).times(t, -1)));
            c.advance(100);
            let p = c.run(&Txn::new("x", Producer::transactional(51, 0), &[A, B]));
            c.run(&Txn::new("x", p, &[A, B]));
        }
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let stuck = of_kind(&r, Kind::ProducerStuckAtExhaustedEpoch);
        assert_eq!(stuck.is_empty(), rotated, "rotated: {rotated}: {stuck:#?}");
    }
}

/// TV0/1, negative controls:
/// `shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState` and
/// `shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch` (Ongoing at 5 → PrepareAbort,
/// ABORT markers and CompleteAbort at 6, the InitProducerId retry's Empty at 7, the next
/// transaction at 7), and `shouldUseLastEpochToFenceWhenEpochsAreExhausted` +
/// `shouldGenerateNewProducerIdIfEpochsExhausted` (Ongoing at 32766 → abort at 32767 →
/// Empty of a new producer id at epoch 0, v0 values). Nothing to report.
#[test]
fn coordinator_fences_and_tv0_exhaustion_are_normal() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(4);
    let p = Producer::transactional(100, 5);
    c.run(&Txn::new("app", p, &[A, B]).abort().marker_epoch(6));
    let t = c.now();
    c.coordinator_record(
        "app",
        Some(TxnValue::new(100, 7, state::EMPTY).times(t, -1)),
    );
    c.run(&Txn::new("app", p.with_epoch(7), &[A, B]));
    // exhaustion: ongoing at 32766, fence at 32767, rotation to 101 epoch 0
    let q = Producer::transactional(200, 32766);
    c.run(&Txn::new("ex", q, &[A, B]).abort().marker_epoch(32767));
    let t = c.now();
    c.coordinator_record("ex", Some(TxnValue::new(201, 0, state::EMPTY).times(t, -1)));
    c.run(&Txn::new("ex", Producer::transactional(201, 0), &[A, B]));
    end_quiet(c, dir.path(), "tv0");
}

/// TV2, negative controls: a timeout or InitProducerId fence abort of an Ongoing transaction
/// bumps once (trunk: `shouldNotCauseEpochOverflowWhenInitPidDuringOngoingTxnV2`'s "the
/// only true increment happens in prepareAbortOrCommit") or twice (4.0/4.1, which set the
/// fenced epoch and bumped again), then the InitProducerId retry's Empty one epoch up and
/// normal TV2 transactions after it. Nothing to report.
#[test]
fn tv2_fence_aborts_at_one_or_two_epochs_up_are_normal() {
    for bump in [1i16, 2] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator(4).tv2();
        let p = Producer::transactional(100, 0);
        let p = c.run(&Txn::new("app", p, &[A, B]));
        let p = c.run(&Txn::new("app", p, &[A, B]));
        // timeout / InitProducerId fence: abort at epoch + bump
        let e = p.epoch;
        c.run(&Txn::new("app", p, &[A, B]).abort().marker_epoch(e + bump));
        let t = c.now();
        c.coordinator_record(
            "app",
            Some(
                TxnValue::new(100, e + bump + 1, state::EMPTY)
                    .v1(-1, -1, 2)
                    .times(t, -1),
            ),
        );
        let p = c.run(&Txn::new("app", p.with_epoch(e + bump + 1), &[A, B]));
        c.run(&Txn::new("app", p, &[A, B]).abort());
        c.advance(30 * 60_000);
        c.plain(A, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        assert_quiet(&format!("tv2 bump {bump}"), &r);
    }
}

/// TV2, negative control: `testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2`
/// (not a retry): an EndTxn(ABORT) on CompleteCommit writes PrepareAbort/CompleteAbort one
/// epoch up with no partitions (`noPartitionAdded`), no marker; the client's next
/// transaction runs at that epoch. Nothing to report.
#[test]
fn tv2_abort_without_partitions_is_normal() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(4).tv2();
    let p = Producer::transactional(100, 0);
    let p = c.run(&Txn::new("app", p, &[A, B]));
    let p = c.run(&Txn::new("app", p, &[A, B]));
    // EndTxn(ABORT) on CompleteCommit (not a retry): PrepareAbort/CompleteAbort at +1, no partitions
    let e = p.epoch;
    for st in [state::PREPARE_ABORT, state::COMPLETE_ABORT] {
        let t = c.now();
        c.coordinator_record(
            "app",
            Some(TxnValue::new(100, e + 1, st).v1(-1, -1, 2).times(t, t)),
        );
        c.advance(50);
    }
    let p = c.run(&Txn::new("app", p.with_epoch(e + 1), &[A, B]));
    let p = c.run(&Txn::new("app", p, &[A]).abort());
    c.run(&Txn::new("app", p, &[A, B]));
    end_quiet(c, dir.path(), "tv2 abort without partitions");
}

/// TV2: `shouldGenerateNewProducerIdIfEpochsExhaustedV2` as a 4.0–4.2 broker writes it
/// (no Previous/NextProducerId): PrepareCommit at 32767, COMMIT markers at 32767,
/// CompleteCommit of the new producer id at epoch 0. While the rotation is the id's latest
/// value, only the KAFKA-20310 retry warning; once the client's next transaction runs at
/// the new id and epoch 0 (it received the EndTxn answer, so no retry follows), nothing.
#[test]
fn tv2_end_txn_overflow_rotation() {
    for continued in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator(9).tv2();
        // Ongoing(50,32766) -> PrepareCommit(50,32767) -> COMMIT markers at 32767 -> CompleteCommit(51,0)
        c.run(&Txn::new("x", Producer::transactional(50, 32766), &[A, B]).no_complete());
        let t = c.now();
        c.coordinator_record(
            "x",
            Some(tv2(51, 0, state::COMPLETE_COMMIT, -1, -1).times(t, t)),
        );
        c.advance(1000);
        if continued {
            let p = c.run(&Txn::new("x", Producer::transactional(51, 0), &[A, B]));
            c.run(&Txn::new("x", p, &[A, B]).abort());
        }
        c.advance(30 * 60_000);
        c.plain(A, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let kinds: Vec<(Kind, Severity)> = r
            .findings
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .map(|f| (f.kind, f.severity))
            .collect();
        let want = match continued {
            false => vec![(Kind::ProducerFencedOnRetryAfterFailover, Severity::Warning)],
            true => vec![],
        };
        assert_eq!(kinds, want, "continued: {continued}");
    }
}

/// The coordinator's log alone: `records` of `__transaction_state`, in order (`None`: a
/// tombstone).
fn coordinator_only(records: &[(&str, Option<TxnValue>)]) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(9);
    for (id, v) in records {
        let t = c.now();
        c.coordinator_record(id, v.clone().map(|v| v.times(t, t)));
    }
    c.write(dir.path(), 1).unwrap();
    scan_dir(dir.path())
}

/// `producer_stuck_at_exhausted_epoch`'s `complete_without_rotation` describes the id's
/// latest value only: what follows a CompleteAbort at 32767 of producer 50 (Prepare with no
/// NextProducerId) decides. (offset, shape) of each finding.
#[test]
fn a_complete_at_the_exhausted_epoch_is_stuck_only_while_it_is_the_latest_value() {
    let parts = |v: TxnValue| v.partitions(&[("orders", &[0])]);
    let head = [
        ("x", Some(parts(tv2(50, 32766, state::ONGOING, -1, -1)))),
        (
            "x",
            Some(parts(tv2(50, 32767, state::PREPARE_ABORT, -1, -1))),
        ),
        ("x", Some(tv2(50, 32767, state::COMPLETE_ABORT, -1, -1))),
    ];
    let stuck = |tail: &[(&str, Option<TxnValue>)]| {
        let records: Vec<_> = head.iter().cloned().chain(tail.iter().cloned()).collect();
        let r = coordinator_only(&records);
        of_kind(&r, Kind::ProducerStuckAtExhaustedEpoch)
            .iter()
            .map(|f| {
                (
                    f.offset,
                    f.severity,
                    f.evidence["shape"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let complete = |o| (Some(o), Severity::Error, "complete_without_rotation".into());
    // the latest value: stuck (confirmed: nothing unread after it)
    assert_eq!(stuck(&[]), vec![complete(2)]);
    // a value of another id after it changes nothing
    assert_eq!(
        stuck(&[("y", Some(tv2(60, 3, state::EMPTY, -1, -1)))]),
        vec![complete(2)]
    );
    // the same Complete appended twice (a retried write): still the latest
    assert_eq!(
        stuck(&[("x", Some(tv2(50, 32767, state::COMPLETE_ABORT, -1, -1)))]),
        vec![complete(2)]
    );
    // the InitProducerId retry rotated (prepareProducerIdRotation): nothing
    assert_eq!(
        stuck(&[("x", Some(tv2(51, 0, state::EMPTY, -1, -1)))]),
        vec![]
    );
    // the id expired (tombstone): no producer holds the epoch through this id any more
    assert_eq!(stuck(&[("x", None)]), vec![]);
    // a client went on at 32767: the later value is the one reported
    // (`client_holds_max_epoch`), not the Complete before it
    assert_eq!(
        stuck(&[("x", Some(parts(tv2(50, 32767, state::ONGOING, -1, -1))))]),
        vec![(Some(3), Severity::Error, "client_holds_max_epoch".into())]
    );
    assert_eq!(
        stuck(&[("x", Some(tv2(50, 32767, state::EMPTY, -1, -1)))]),
        vec![(Some(3), Severity::Error, "client_holds_max_epoch".into())]
    );
}
