//! Cluster-wide transactions (`klogscan::cluster::txns`, issue 12): testkit clusters of 2–4
//! partitions, with and without the coordinator's `__transaction_state`, under TV0/1 and
//! TV2. Clean traffic (commits, aborts, fenced producers, coordinator failover) gives no
//! cross-partition finding; each fault gives its finding, linked to the partition's
//! `hanging_transaction` where it is the root cause.
#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::cluster::txns::group::Grouping;
use klogscan::cluster::txns::{ClusterTxn, Outcome};
use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::Producer;
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use std::path::Path;

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);
const C: Tp = ("payments", 0);
const D: Tp = ("audit", 2);

const CROSS: [Kind; 4] = [
    Kind::TransactionOutcomeMismatch,
    Kind::TransactionMarkerMissing,
    Kind::TransactionPartitionUnlisted,
    Kind::TransactionStuckInPrepare,
];

fn scan_dir(dir: &Path) -> ScanReport {
    pipeline::scan(&[dir.to_path_buf()], &ScanOptions::default())
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

fn txns(r: &ScanReport) -> &[ClusterTxn] {
    &r.transactions.as_ref().expect("joined").transactions
}

/// Clean traffic of one producer: commits and aborts over 2–4 partitions, a fenced
/// producer instance, a coordinator failover that re-sends markers; plain data after.
fn clean(c: &mut Cluster, tv2: bool) {
    let mut p = Producer::transactional(100, 0);
    p = c.run(&Txn::new("app", p, &[A, B]));
    p = c.run(&Txn::new("app", p, &[A, B, C]).abort());
    p = c.run(&Txn::new("app", p, &[A, B, C, D]).records(3));
    p = c.run(&Txn::new("app", p, &[C, D]).failover_after(1));
    // a new producer instance fences this one: the coordinator aborts at epoch + 1
    let fence_epoch = p.epoch + 1;
    c.run(
        &Txn::new("app", p, &[A, D])
            .abort()
            .marker_epoch(fence_epoch),
    );
    let p = p.with_epoch(fence_epoch + 1);
    let p = c.run(&Txn::new("app", p, &[B, C]));
    if tv2 {
        assert_eq!(p.epoch, fence_epoch + 2);
    }
    // an empty transaction: aborted before any data reached its partitions
    c.run(&Txn::new("app", p, &[A, C]).records(0).abort());
    // another transactional producer, interleaved in time with nothing
    let q = Producer::transactional(200, 5);
    c.run(&Txn::new("other", q, &[A, C]));
    c.advance(30 * 60_000);
    c.plain(A, 1);
}

fn assert_clean(r: &ScanReport) {
    let bad: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning || CROSS.contains(&f.kind))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

fn check_clean_groups(r: &ScanReport, grouping: Grouping) {
    let t = txns(r);
    assert_eq!(t.len(), 8, "{t:#?}");
    let outcomes: Vec<(i64, Outcome, usize)> = t
        .iter()
        .map(|t| (t.producer_id, t.outcome, t.partitions.len()))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (100, Outcome::Committed, 2),
            (100, Outcome::Aborted, 3),
            (100, Outcome::Committed, 4),
            (100, Outcome::Committed, 2),
            (100, Outcome::Aborted, 2),
            (100, Outcome::Committed, 2),
            (100, Outcome::Aborted, 2),
            (200, Outcome::Committed, 2),
        ]
    );
    assert!(t[6].is_empty() && !t[5].is_empty());
    let s = &r.transactions.as_ref().unwrap().stats;
    assert_eq!((s.committed, s.aborted, s.empty), (5, 2, 1));
    assert!(t.iter().all(|t| t.grouping == grouping), "{t:#?}");
    // the failover's re-sent marker is kept as a duplicate of the first partition's part
    let dup: Vec<usize> = t[3]
        .partitions
        .iter()
        .map(|p| p.duplicate_markers.len())
        .collect();
    assert_eq!(dup.iter().sum::<usize>(), 1, "{:#?}", t[3]);
}

#[test]
fn clean_tv01_with_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator_partitions(50);
    clean(&mut c, false);
    c.write(dir.path(), 1).unwrap();
    let r = scan_dir(dir.path());
    assert_clean(&r);
    check_clean_groups(&r, Grouping::CoordinatorRecord);
    let t = txns(&r);
    assert_eq!(t[0].transactional_id.as_deref(), Some("app"));
    assert_eq!(t[7].transactional_id.as_deref(), Some("other"));
}

#[test]
fn clean_tv01_without_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1"));
    clean(&mut c, false);
    c.write(dir.path(), 1).unwrap();
    let r = scan_dir(dir.path());
    assert_clean(&r);
    check_clean_groups(&r, Grouping::MarkerOrder);
    assert!(txns(&r).iter().all(|t| t.transactional_id.is_none()));
}

#[test]
fn clean_tv2_with_and_without_coordinator() {
    for coordinator in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).tv2();
        if coordinator {
            c = c.coordinator_partitions(50);
        }
        clean(&mut c, true);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        assert_clean(&r);
        check_clean_groups(
            &r,
            if coordinator {
                Grouping::CoordinatorRecord
            } else {
                Grouping::MarkerEpoch
            },
        );
        assert!(txns(&r).iter().all(|t| t.transaction_version_2));
    }
}

/// `transaction_outcome_mismatch` on the flipped partition, with and without the
/// coordinator, TV0/1 and TV2.
#[test]
fn outcome_mismatch() {
    for (tv2, coordinator) in [(false, true), (false, false), (true, true), (true, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1"));
        if tv2 {
            c = c.tv2();
        }
        if coordinator {
            c = c.coordinator_partitions(50);
        }
        let p = c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B, C]));
        c.run(&Txn::new("app", p, &[A, B, C]).flip_marker_on(B));
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let f = of_kind(&r, Kind::TransactionOutcomeMismatch);
        assert_eq!(
            f.len(),
            1,
            "tv2 {tv2} coordinator {coordinator}: {:#?}",
            r.findings
        );
        let f = f[0];
        assert_eq!((f.topic.as_str(), f.partition), B, "{f:#?}");
        assert_eq!(
            f.evidence["abort_partitions"],
            serde_json::json!(["orders-1"])
        );
        let want = if coordinator {
            "coordinator_record"
        } else if tv2 {
            "marker_epoch"
        } else {
            "marker_order"
        };
        assert_eq!(f.evidence["grouping"], want);
        let sev = if want == "marker_order" {
            Severity::Warning
        } else {
            Severity::Error
        };
        assert_eq!(f.severity, sev);
        assert_eq!(f.source.cluster_id.as_deref(), Some("c1"));
        assert_eq!(f.source.broker_id, Some(1));
        assert_eq!(of_kind(&r, Kind::TransactionMarkerMissing).len(), 0);
    }
}

/// `transaction_marker_missing` on the partition without a marker, root cause of its
/// `hanging_transaction`.
#[test]
fn marker_missing_is_the_root_cause_of_hanging() {
    for (tv2, coordinator) in [(false, true), (false, false), (true, true), (true, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1"));
        if tv2 {
            c = c.tv2();
        }
        if coordinator {
            c = c.coordinator_partitions(50);
        }
        let p = c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]));
        c.run(&Txn::new("app", p, &[A, B, C, D]).skip_marker_on(C));
        c.advance(40 * 60_000);
        c.plain(D, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let ctx = format!("tv2 {tv2} coordinator {coordinator}: {:#?}", r.findings);
        let m = of_kind(&r, Kind::TransactionMarkerMissing);
        assert_eq!(m.len(), 1, "{ctx}");
        let m = m[0];
        assert_eq!(
            (m.topic.as_str(), m.partition, m.offset),
            ("payments", 0, Some(0))
        );
        assert_eq!(m.evidence["coordinator_completed"], coordinator, "{ctx}");
        assert_eq!(
            m.evidence["partitions_with_marker"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        let h = of_kind(&r, Kind::HangingTransaction);
        assert_eq!(h.len(), 1, "{ctx}");
        assert_eq!(h[0].caused_by, vec![m.id.clone()], "{ctx}");
        // the coordinator's record sits where a broker puts it: its verdict is confirmed
        assert!(!h[0].message.contains("unconfirmed"), "{}", h[0].message);
    }
}

/// Markers still being written (no Complete, other markers recent): no finding yet.
#[test]
fn recent_partial_markers_are_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1"));
    let p = Producer::transactional(7, 1);
    c.run(&Txn::new("app", p, &[A, B]).skip_marker_on(B).no_complete());
    c.write(dir.path(), 1).unwrap();
    let r = scan_dir(dir.path());
    assert!(of_kind(&r, Kind::TransactionMarkerMissing).is_empty());
    assert_eq!(txns(&r)[0].outcome, Outcome::Partial);
}

/// `transaction_partition_unlisted`: data on a partition the coordinator never listed.
#[test]
fn partition_unlisted() {
    for tv2 in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator_partitions(50);
        if tv2 {
            c = c.tv2();
        }
        c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B, C]).unlisted(C));
        c.advance(40 * 60_000);
        c.plain(A, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let u = of_kind(&r, Kind::TransactionPartitionUnlisted);
        assert_eq!(u.len(), 1, "{:#?}", r.findings);
        assert_eq!((u[0].topic.as_str(), u[0].partition), C);
        assert_eq!(
            u[0].evidence["listed_partitions"],
            serde_json::json!(["orders-0", "orders-1"])
        );
        assert!(of_kind(&r, Kind::TransactionMarkerMissing).is_empty());
        let h = of_kind(&r, Kind::HangingTransaction);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].caused_by, vec![u[0].id.clone()]);
    }
}

/// `transaction_stuck_in_prepare`: Prepare with no Complete past the timeout; evidence
/// says which listed partitions have the marker.
#[test]
fn stuck_in_prepare() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator_partitions(50);
    let home = c.coordinator_partition_of("app").unwrap();
    let p = Producer::transactional(7, 1);
    let p = c.run(&Txn::new("app", p, &[A, B]));
    c.run(
        &Txn::new("app", p, &[A, B, C])
            .skip_marker_on(B)
            .no_complete(),
    );
    c.advance(20 * 60_000);
    c.plain(A, 1);
    c.write(dir.path(), 1).unwrap();
    let r = scan_dir(dir.path());
    let s = of_kind(&r, Kind::TransactionStuckInPrepare);
    assert_eq!(s.len(), 1, "{:#?}", r.findings);
    let s = s[0];
    assert_eq!(
        (s.topic.as_str(), s.partition),
        ("__transaction_state", home)
    );
    assert_eq!(
        s.evidence["partitions_with_marker"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        s.evidence["partitions_without_marker"],
        serde_json::json!([{"partition": "orders-1", "first_offset": 3}])
    );
    let h = of_kind(&r, Kind::HangingTransaction);
    assert_eq!(h.len(), 1);
    assert!(h[0].caused_by.contains(&s.id), "{h:#?}");
    // a recent Prepare is not stuck
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(4);
    c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]).stuck_in_prepare());
    c.write(dir.path(), 1).unwrap();
    assert!(of_kind(&scan_dir(dir.path()), Kind::TransactionStuckInPrepare).is_empty());
}

/// KIP-939: a two-phase-commit transaction (timeout `Integer.MAX_VALUE`) has no timeout,
/// but once its Prepare record is written its markers go out like any other's: stuck when
/// older than `transaction.max.timeout.ms`'s default (15 min) + 5 min, not after ~24.8 days
/// (its timeout read as one). Negative twin: 10 minutes after the Prepare record.
#[test]
fn stuck_in_prepare_of_a_two_phase_commit_transaction() {
    for (wait, stuck) in [(30 * 60_000, true), (10 * 60_000, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1"))
            .coordinator_partitions(50)
            .timeout(i32::MAX);
        let p = Producer::transactional(7, 1);
        c.run(&Txn::new("app", p, &[A, B]).skip_marker_on(B).no_complete());
        c.advance(wait);
        c.plain(A, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let s = of_kind(&r, Kind::TransactionStuckInPrepare);
        assert_eq!(s.len(), usize::from(stuck), "{wait}: {:#?}", r.findings);
        if let Some(s) = s.first() {
            assert_eq!(s.evidence["two_phase_commit"], true);
            assert!(
                s.message
                    .contains("a two-phase-commit transaction, which has no timeout"),
                "{}",
                s.message
            );
        }
    }
}

/// A tombstone ends a transactional id's history (`TransactionStateManager`'s load drops
/// the id and re-sends no marker): Ongoing → PrepareCommit → tombstone is not stuck in
/// Prepare. Its negative, the same history without the tombstone, is stuck.
#[test]
fn tombstone_ends_a_prepare() {
    for tombstone in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator_partitions(50);
        c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]).stuck_in_prepare());
        if tombstone {
            c.coordinator_record("app", None);
        }
        c.advance(20 * 60_000);
        c.plain(A, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let s = of_kind(&r, Kind::TransactionStuckInPrepare);
        assert_eq!(s.len(), usize::from(!tombstone), "{:#?}", r.findings);
    }
}

/// Joins stay within a cluster: the same producer id in another cluster, or in another
/// log dir without meta.properties, is another producer.
#[test]
fn joins_stay_within_a_cluster() {
    let root = tempfile::tempdir().unwrap();
    // cluster c1 committed on A, cluster c2 (same producer id) aborted on B: no mismatch
    let mut c1 = Cluster::new(Some("c1"));
    c1.run(&Txn::new("app", Producer::transactional(7, 1), &[A]));
    let mut c2 = Cluster::new(Some("c2"));
    c2.run(&Txn::new("app", Producer::transactional(7, 1), &[B]).abort());
    c1.write(&root.path().join("b1"), 1).unwrap();
    c2.write(&root.path().join("b2"), 2).unwrap();
    let r = scan_dir(root.path());
    assert!(
        of_kind(&r, Kind::TransactionOutcomeMismatch).is_empty(),
        "{:#?}",
        r.findings
    );
    assert_eq!(txns(&r).len(), 2);
    // the same cluster split over two brokers joins
    let root = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1"));
    c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]).flip_marker_on(B));
    c.write_only(&root.path().join("b1"), 1, |tp| tp == A, false)
        .unwrap();
    c.write_only(&root.path().join("b2"), 2, |tp| tp == B, false)
        .unwrap();
    let r = scan_dir(root.path());
    assert_eq!(of_kind(&r, Kind::TransactionOutcomeMismatch).len(), 1);
    // without meta.properties: only within one log dir, and the domain says so
    let root = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(None);
    c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]).flip_marker_on(B));
    c.write_only(&root.path().join("b1"), 1, |tp| tp == A, false)
        .unwrap();
    c.write_only(&root.path().join("b2"), 2, |tp| tp == B, false)
        .unwrap();
    let r = scan_dir(root.path());
    assert!(of_kind(&r, Kind::TransactionOutcomeMismatch).is_empty());
    let d = serde_json::to_value(&txns(&r)[0].domain).unwrap();
    assert_eq!(d["kind"], "log_dir", "{d}");
    // ... and within one log dir it joins, as a warning that says the cluster is unknown
    let root = tempfile::tempdir().unwrap();
    c.write(root.path(), 1).unwrap();
    let r = scan_dir(root.path());
    let m = of_kind(&r, Kind::TransactionOutcomeMismatch);
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].severity, Severity::Warning);
    assert!(m[0].message.contains("cluster unknown"), "{}", m[0].message);
}

// ----- epoch exhaustion in __transaction_state (KAFKA-20310 / KAFKA-20090 / KAFKA-20357) ----

use klogscan::testkit::txnlog::{TxnValue, state};

fn coordinator_only(records: &[(&str, TxnValue)]) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(9);
    for (id, v) in records {
        let t = c.now();
        c.coordinator_record(id, Some(v.clone().times(t, t)));
    }
    c.write(dir.path(), 1).unwrap();
    scan_dir(dir.path())
}

fn tv2(pid: i64, epoch: i16, st: u8, prev: i64, next: i64) -> TxnValue {
    TxnValue::new(pid, epoch, st).v1(prev, next, 2)
}

#[test]
fn exhausted_epoch_rotation() {
    let exhausted = |r: &ScanReport| {
        (
            of_kind(r, Kind::ProducerStuckAtExhaustedEpoch)
                .iter()
                .map(|f| {
                    (
                        f.offset,
                        f.severity,
                        f.evidence["shape"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect::<Vec<_>>(),
            of_kind(r, Kind::ProducerFencedOnRetryAfterFailover)
                .iter()
                .map(|f| {
                    (
                        f.offset,
                        f.evidence["rotation"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect::<Vec<_>>(),
        )
    };
    let parts = |v: TxnValue| v.partitions(&[("orders", &[0])]);
    // the rotation as Kafka writes it after KAFKA-20310: nothing to report
    let clean = coordinator_only(&[
        ("x", parts(tv2(50, 32766, state::ONGOING, -1, -1))),
        ("x", parts(tv2(50, 32767, state::PREPARE_COMMIT, -1, 51))),
        ("x", tv2(51, 0, state::COMPLETE_COMMIT, 50, -1)),
        ("y", tv2(60, 32766, state::EMPTY, -1, -1)),
        ("y", tv2(61, 0, state::EMPTY, 60, -1)),
    ]);
    assert_eq!(exhausted(&clean), (vec![], vec![]));
    // KAFKA-20310: the next producer id lost → the Complete keeps producer 50 at 32767
    let lost = coordinator_only(&[
        ("x", parts(tv2(50, 32766, state::ONGOING, -1, -1))),
        ("x", parts(tv2(50, 32767, state::PREPARE_COMMIT, -1, -1))),
        ("x", tv2(50, 32767, state::COMPLETE_COMMIT, 50, -1)),
    ]);
    assert_eq!(
        exhausted(&lost),
        (
            vec![(Some(2), Severity::Error, "complete_without_rotation".into())],
            vec![]
        )
    );
    // rotations that do not record the id they left: a retry after failover is fenced
    let fenced = coordinator_only(&[
        ("x", parts(tv2(50, 32767, state::PREPARE_ABORT, -1, 51))),
        ("x", tv2(51, 0, state::COMPLETE_ABORT, -1, -1)),
        ("y", tv2(60, 32766, state::EMPTY, -1, -1)),
        ("y", tv2(61, 0, state::EMPTY, -1, -1)),
    ]);
    assert_eq!(
        exhausted(&fenced),
        (
            vec![],
            vec![
                (Some(1), "end_txn".into()),
                (Some(3), "init_producer_id".into())
            ]
        )
    );
    // still in Prepare at 32767 without a next producer id: at risk (warning); a client
    // holding epoch 32767 in Ongoing: stuck (KAFKA-20090 class)
    let risk = coordinator_only(&[
        ("x", parts(tv2(50, 32767, state::PREPARE_ABORT, -1, -1))),
        ("z", parts(tv2(70, 32767, state::ONGOING, -1, -1))),
    ]);
    assert_eq!(
        exhausted(&risk).0,
        vec![
            (
                Some(0),
                Severity::Warning,
                "prepare_without_next_producer_id".into()
            ),
            (Some(1), Severity::Error, "client_holds_max_epoch".into()),
        ]
    );
    // v0 values (TV0/1) never take the TV2 rotation path
    let v0 = coordinator_only(&[(
        "x",
        TxnValue::new(50, 32767, state::ONGOING).partitions(&[("orders", &[0])]),
    )]);
    assert_eq!(exhausted(&v0), (vec![], vec![]));
}

/// Only live copies count: a `-future` copy with another outcome is not part of the join.
#[test]
fn only_live_copies_join() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1"));
    c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]).flip_marker_on(B));
    c.write(dir.path(), 1).unwrap();
    std::fs::rename(
        dir.path().join("orders-1"),
        dir.path()
            .join("orders-1.0123456789abcdef0123456789abcdef-future"),
    )
    .unwrap();
    let r = scan_dir(dir.path());
    assert!(
        of_kind(&r, Kind::TransactionOutcomeMismatch).is_empty(),
        "{:#?}",
        r.findings
    );
    let t = txns(&r);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].partitions.len(), 1);
}

/// `TransactionMetadataTest.testEpochBumpOnEndTxnOverflow`, as a 4.0–4.2 broker writes it
/// (no PreviousProducerId/NextProducerId tags: both read back -1): the Prepare at the
/// exhausted epoch 32767, then the Complete of the new producer id at epoch 0
/// (`prepareComplete` switches to the next producer id; `isOverflowComplete` accepts it).
/// One transaction, completed, of producer 50 — not a Prepare left open plus a phantom
/// transaction of producer 51. The Complete of another outcome stays apart (the twin).
#[test]
fn an_overflow_complete_ends_its_prepare() {
    for (complete, joins) in [
        (state::COMPLETE_COMMIT, true),
        (state::COMPLETE_ABORT, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).tv2().coordinator(9);
        c.run(&Txn::new("x", Producer::transactional(50, 32766), &[A]).no_complete());
        let t = c.now();
        c.coordinator_record("x", Some(tv2(51, 0, complete, -1, -1).times(t, t)));
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let t = txns(&r)
            .iter()
            .find(|t| t.producer_id == 50)
            .expect("producer 50's transaction");
        let coord = t
            .coordinator
            .as_ref()
            .expect("joined with its coordinator record");
        assert_eq!(coord.complete_ms.is_some(), joins, "{complete}: {coord:#?}");
        assert_eq!(t.outcome, Outcome::Committed, "{complete}");
    }
}

/// The retry a rotation without PreviousProducerId fails: an EndTxn retry fails
/// `TransactionCoordinator.endTransaction`'s producer-id check (INVALID_PRODUCER_ID_MAPPING,
/// fatal in the 4.0+ clients that use TV2: `TransactionManager.EndTxnHandler`, KAFKA-18019),
/// an InitProducerId retry is fenced (PRODUCER_FENCED, fatal).
#[test]
fn a_lost_rotation_names_the_error_of_each_retry() {
    let parts = |v: TxnValue| v.partitions(&[("orders", &[0])]);
    let r = coordinator_only(&[
        ("x", parts(tv2(50, 32767, state::PREPARE_ABORT, -1, 51))),
        ("x", tv2(51, 0, state::COMPLETE_ABORT, -1, -1)),
        ("y", tv2(60, 32766, state::EMPTY, -1, -1)),
        ("y", tv2(61, 0, state::EMPTY, -1, -1)),
    ]);
    let errors: Vec<(String, String)> = of_kind(&r, Kind::ProducerFencedOnRetryAfterFailover)
        .iter()
        .map(|f| {
            (
                f.evidence["rotation"].as_str().unwrap_or("").to_string(),
                f.client_error.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    for (rotation, error) in &errors {
        let (yes, no) = if rotation == "end_txn" {
            ("INVALID_PRODUCER_ID_MAPPING", "PRODUCER_FENCED")
        } else {
            ("PRODUCER_FENCED", "INVALID_PRODUCER_ID_MAPPING")
        };
        assert!(
            error.contains(yes) && !error.contains(no),
            "{rotation}: {error}"
        );
    }
}

/// A coordinator's timeout abort bumps the epoch once more than a client's EndTxn
/// (`TransactionCoordinatorTest.shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch`):
/// its PrepareAbort is at the data's epoch + 1 under TV0/1. Known only from that record (the
/// Ongoing one compacted away), the transaction still holds the partition's open data at the
/// epoch below: `transaction_stuck_in_prepare` lists it without a marker (not as a
/// partition without data), and the `hanging_transaction` follows from it. Data two epochs
/// below is another transaction's (the twin).
#[test]
fn a_timeout_abort_holds_the_data_one_epoch_below() {
    for (data_epoch, holds) in [(3, true), (2, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator(4);
        let start = c.now();
        c.data(A, Producer::transactional(7, data_epoch), 2);
        c.advance(2 * 60_000);
        let t = c.now();
        c.coordinator_record(
            "app",
            Some(
                TxnValue::new(7, 4, state::PREPARE_ABORT)
                    .partitions(&[("orders", &[0])])
                    .times(t, start),
            ),
        );
        c.advance(30 * 60_000);
        c.plain(A, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        let s = of_kind(&r, Kind::TransactionStuckInPrepare);
        assert_eq!(s.len(), 1, "{:#?}", r.findings);
        let without = &s[0].evidence["partitions_without_marker"];
        let no_data = &s[0].evidence["partitions_without_transaction_data"];
        assert_eq!(
            (
                without.as_array().unwrap().len(),
                no_data.as_array().unwrap().len()
            ),
            if holds { (1, 0) } else { (0, 1) },
            "data epoch {data_epoch}: {:#}",
            s[0].evidence
        );
        let h = of_kind(&r, Kind::HangingTransaction);
        assert_eq!(h.len(), 1, "{:#?}", r.findings);
        assert_eq!(h[0].caused_by.contains(&s[0].id), holds, "{h:#?}");
    }
}

/// A transactional id keeps its producer id across a client upgrade: two TV0/1
/// transactions at epoch 0 (a COMMIT on orders-0, then an ABORT on orders-0 and
/// orders-1, each marker at the data's epoch), then a TV2 one at epoch 1 (COMMIT at
/// epoch 2). The TV2 transaction does not make the earlier epoch's records TV2: grouped
/// per data epoch they would pair the COMMIT with the other partition's ABORT (a false
/// `transaction_outcome_mismatch`). Without the upgrade nothing changes (the twin).
#[test]
fn a_client_upgrade_to_tv2_keeps_the_older_transactions_apart() {
    for upgraded in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1"));
        let p = Producer::transactional(7, 0);
        c.run(&Txn::new("app", p, &[A]));
        c.run(&Txn::new("app", p, &[A, B]).abort());
        if upgraded {
            c.run(&Txn::new("app", Producer::transactional(7, 1), &[A]).marker_epoch(2));
        }
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        assert!(
            of_kind(&r, Kind::TransactionOutcomeMismatch).is_empty(),
            "upgraded {upgraded}: {:#?}",
            r.findings
        );
        assert_eq!(
            txns(&r).len(),
            if upgraded { 3 } else { 2 },
            "{:#?}",
            txns(&r)
        );
    }
}
