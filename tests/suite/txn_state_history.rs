//! Rule 31: anomalies in the transaction coordinator's own log (`__transaction_state`),
//! reported as `transaction_state_anomaly` findings with `evidence.anomaly` = sub-id.
//!
//! Every real `__transaction_state` partition gives none; for every sub-id a testkit
//! `__transaction_state` partition (records from `klogscan::testkit::txnlog`, an encoder
//! independent of the decoder) gives exactly the expected `(anomaly, offset)` pairs, and a
//! near-miss history gives none.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::txnlog::{TxnValue, key, key_version, state::*};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};

/// The reference time of every scenario (`--now`).
const NOW: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;

enum R {
    /// A v0-key record of `id` with this value (`None`: tombstone).
    Val(&'static str, Option<TxnValue>),
    /// Raw key and value bytes.
    Raw(Vec<u8>, Option<Vec<u8>>),
}
use R::*;

fn v(pid: i64, epoch: i16, status: u8) -> TxnValue {
    TxnValue::new(pid, epoch, status).times(NOW - 2 * MIN, NOW - 2 * MIN)
}

fn scan_records(records: Vec<R>) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    let mut t = PartitionBuilder::new("__transaction_state", 7);
    for r in records {
        let rec = match r {
            Val(id, Some(v)) => Rec::kv(key(id), v.encode()),
            Val(id, None) => Rec::tombstone(key(id)),
            Raw(k, Some(v)) => Rec::kv(k, v),
            Raw(k, None) => Rec::tombstone(k),
        };
        t.append(Batch::new(Producer::PLAIN).record(rec));
    }
    t.write(dir.path()).unwrap();
    let opts = ScanOptions::default().with_now_ms(NOW);
    pipeline::scan(&[dir.path().to_path_buf()], &opts)
}

fn anomalies(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .collect()
}

/// `(sub-id, offset)` of every anomaly, after checking what every finding must hold.
fn found(r: &ScanReport) -> Vec<(String, i64)> {
    // the partition's finding range holds exactly its findings, and the counts are right
    let p = r
        .partitions
        .iter()
        .position(|p| p.topic == "__transaction_state")
        .unwrap();
    assert_eq!(r.partition_findings(p).len(), r.findings.len());
    let n = |s| r.findings.iter().filter(|f| f.severity == s).count() as u64;
    let c = r.summary.findings;
    assert_eq!(
        (c.error, c.warning, c.info),
        (n(Severity::Error), n(Severity::Warning), n(Severity::Info))
    );
    let offs: Vec<i64> = r.findings.iter().map(|f| f.offset.unwrap()).collect();
    assert!(offs.windows(2).all(|w| w[0] <= w[1]), "{offs:?}");
    anomalies(r)
        .iter()
        .map(|f| {
            assert_eq!((f.topic.as_str(), f.partition), ("__transaction_state", 7));
            assert_eq!(f.segment.as_deref(), Some("00000000000000000000.log"));
            assert!(f.position.is_some());
            assert!(!f.broker_behaviour.is_empty());
            assert_eq!(
                f.evidence["current"]["offset"].as_i64(),
                f.offset,
                "{}",
                f.message
            );
            (
                f.evidence["anomaly"].as_str().unwrap().to_string(),
                f.offset.unwrap(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, i64)]) -> Vec<(String, i64)> {
    v.iter().map(|(s, o)| (s.to_string(), *o)).collect()
}

fn only(r: &ScanReport) -> &Finding {
    let a = anomalies(r);
    assert_eq!(a.len(), 1, "{a:#?}");
    a[0]
}

// ----- real data ---------------------------------------------------------------------------

#[test]
fn real_transaction_state_partitions_have_no_anomaly() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    for dir in [
        "broker/ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/__transaction_state-44",
        "rebuilt/tombentley__klog/__transaction_state-4",
        "rebuilt/ableasdale__kafka-transactions/readme-block09___transaction_state-0",
        "rebuilt/ableasdale__kafka-transactions/readme-block12___transaction_state-0",
    ] {
        // read in place through a link named as a broker names the directory
        let link_dir = tempfile::tempdir().unwrap();
        let name = dir.rsplit('/').next().unwrap();
        let name = &name[name.find("__transaction_state").unwrap()..];
        let path = link_dir.path().join(name);
        std::os::unix::fs::symlink(root.join(dir), &path).unwrap();
        let r = pipeline::scan(std::slice::from_ref(&path), &ScanOptions::default());
        assert_eq!(r.partitions.len(), 1, "{dir}");
        assert_eq!(r.partitions[0].topic, "__transaction_state", "{dir}");
        assert!(r.partitions[0].records >= 4, "{dir}");
        assert!(anomalies(&r).is_empty(), "{dir}: {:#?}", anomalies(&r));
    }
    // the whole broker dir, reference time = its newest batch
    let dir = root
        .join("broker/ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data");
    let r = pipeline::scan(&[dir], &ScanOptions::default());
    assert!(
        r.partitions
            .iter()
            .any(|p| p.topic == "__transaction_state")
    );
    assert!(anomalies(&r).is_empty(), "{:#?}", anomalies(&r));
}

// ----- scenarios, one per sub-id -----------------------------------------------------------

/// A complete commit and a complete abort, a TV2 abort-from-Complete, an Empty rotation,
/// a TV2 epoch-exhaustion rotation and an expiry tombstone: no anomaly.
#[test]
fn a_clean_history_has_no_anomaly() {
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let r = scan_records(vec![
        Val("app", Some(v(1, 0, EMPTY))),
        Val("app", Some(v(1, 0, ONGOING).partitions(parts))),
        Val("app", Some(v(1, 0, ONGOING).partitions(parts))),
        Val("app", Some(v(1, 0, PREPARE_COMMIT).partitions(parts))),
        Val("app", Some(v(1, 0, COMPLETE_COMMIT).partitions(&[]))),
        Val("app", Some(v(1, 1, EMPTY))),
        Val("app", Some(v(1, 1, ONGOING).partitions(parts))),
        Val("app", Some(v(1, 2, PREPARE_ABORT).partitions(parts))),
        Val("app", Some(v(1, 2, COMPLETE_ABORT).partitions(&[]))),
        // InitProducerId rotating an exhausted epoch to a new producer id (Empty; another
        // id: a rotation needs the epoch at 32766, `handleInitProducerId`)
        Val("rot", Some(v(7, 32766, EMPTY))),
        Val("rot", Some(v(8, 0, EMPTY))),
        // TV2: abort with no transaction in progress
        Val("tv2", Some(v(5, 3, COMPLETE_COMMIT).v1(-1, -1, 2))),
        Val("tv2", Some(v(5, 4, PREPARE_ABORT).v1(-1, -1, 2))),
        Val("tv2", Some(v(5, 4, COMPLETE_ABORT).v1(-1, -1, 2))),
        // TV2 epoch exhaustion (another id: its history starts at 32766): Prepare at 32767
        // under the old producer id, Complete under the new
        Val(
            "tv2x",
            Some(v(5, 32766, ONGOING).partitions(parts).v1(-1, -1, 2)),
        ),
        Val(
            "tv2x",
            Some(v(5, 32766, ONGOING).partitions(parts).v1(-1, -1, 2)),
        ),
        Val(
            "tv2x",
            Some(v(5, 32767, PREPARE_COMMIT).partitions(parts).v1(-1, 6, 2)),
        ),
        Val("tv2x", Some(v(6, 0, COMPLETE_COMMIT).v1(5, -1, 2))),
        // expiry of a completed id, then the id is used again by a new producer id
        Val("old", Some(v(9, 3, COMPLETE_ABORT))),
        Val("old", None),
        Val("old", Some(v(11, 0, EMPTY))),
        Val(
            "old",
            Some(
                v(11, 0, ONGOING)
                    .partitions(parts)
                    .times(NOW - MIN, NOW - MIN),
            ),
        ),
    ]);
    // the abort-from-Complete is invalid without TV2
    assert_eq!(found(&r), vec![]);
    let r = scan_records(vec![
        Val("tv2", Some(v(5, 3, COMPLETE_COMMIT))),
        Val("tv2", Some(v(5, 4, PREPARE_ABORT))),
        Val("tv2", Some(v(5, 4, COMPLETE_ABORT))),
    ]);
    assert_eq!(found(&r), pairs(&[("invalid_transition", 1)]));
}

#[test]
fn b_invalid_transition() {
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let r = scan_records(vec![
        Val("app", Some(v(1, 0, EMPTY))),
        Val("app", Some(v(1, 0, PREPARE_COMMIT).partitions(parts))), // Empty -> PrepareCommit
        Val("app", Some(v(1, 0, COMPLETE_ABORT))), // PrepareCommit -> CompleteAbort
        Val("dead", Some(v(3, 0, DEAD))),          // never on disk
        Val("fence", Some(v(4, 0, ONGOING).partitions(parts))),
        Val(
            "fence",
            Some(v(4, 0, PREPARE_EPOCH_FENCE).partitions(parts)),
        ),
        Val("fence", Some(v(4, 1, PREPARE_ABORT).partitions(parts))),
        Val("fence", Some(v(4, 1, COMPLETE_ABORT))),
    ]);
    assert_eq!(
        found(&r),
        pairs(&[
            ("invalid_transition", 1),
            ("invalid_transition", 2),
            ("invalid_transition", 3),
            ("invalid_transition", 5),
        ])
    );
    let f = &anomalies(&r)[0];
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence["transactional_id"], "app");
    assert_eq!(f.evidence["previous"]["state"], "Empty");
    assert_eq!(f.evidence["previous"]["offset"], 0);
    assert_eq!(f.evidence["current"]["state"], "PrepareCommit");
    assert_eq!((f.producer_id, f.producer_epoch), (Some(1), Some(0)));
    assert!(
        f.message.contains("not a valid transition"),
        "{}",
        f.message
    );
    assert!(anomalies(&r)[2].message.contains("transient"));
}

#[test]
fn c_epoch_regression() {
    let r = scan_records(vec![
        Val("app", Some(v(1, 5, EMPTY))),
        Val("app", Some(v(1, 3, EMPTY))),
        Val("app", Some(v(1, 4, EMPTY))),
    ]);
    assert_eq!(found(&r), pairs(&[("epoch_regression", 1)]));
    let f = only(&r);
    assert_eq!(f.evidence["previous"]["producer_epoch"], 5);
    assert_eq!(f.evidence["current"]["producer_epoch"], 3);
    assert!(f.message.contains("from 5 to 3"), "{}", f.message);
    // near miss: the lower epoch comes with a new producer id (an exhausted epoch's Empty
    // rotation): no regression; a new producer id after an epoch far from exhaustion is
    // no rotation the coordinator writes (`pid_change`), and no regression either
    let r = scan_records(vec![
        Val("app", Some(v(1, 32766, EMPTY))),
        Val("app", Some(v(2, 0, EMPTY))),
    ]);
    assert_eq!(found(&r), vec![]);
    let r = scan_records(vec![
        Val("app", Some(v(1, 5, EMPTY))),
        Val("app", Some(v(2, 0, EMPTY))),
    ]);
    assert_eq!(found(&r), pairs(&[("pid_change", 1)]));
}

#[test]
fn d_pid_change() {
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let r = scan_records(vec![
        Val("app", Some(v(1, 2, EMPTY))),
        Val("app", Some(v(2, 0, ONGOING).partitions(parts))),
        // PrepareCommit under another id without exhaustion and without a link
        Val(
            "app",
            Some(v(3, 0, PREPARE_COMMIT).partitions(parts).v1(-1, -1, 2)),
        ),
    ]);
    assert_eq!(found(&r), pairs(&[("pid_change", 1), ("pid_change", 2)]));
    let f = &anomalies(&r)[0];
    assert_eq!(f.evidence["previous"]["producer_id"], 1);
    assert_eq!(f.evidence["current"]["producer_id"], 2);
    assert!(f.message.contains("from 1 to 2"), "{}", f.message);
    // near misses: exhaustion (TV0/1 InitProducerId at 32766 -> new id, Empty) and a
    // PreviousProducerId link outside exhaustion
    let r = scan_records(vec![
        Val("app", Some(v(1, 32766, COMPLETE_COMMIT))),
        Val("app", Some(v(2, 0, EMPTY))),
        Val(
            "app",
            Some(v(2, 0, ONGOING).partitions(parts).v1(-1, -1, 2)),
        ),
        Val(
            "app",
            Some(v(2, 1, PREPARE_COMMIT).partitions(parts).v1(-1, 3, 2)),
        ),
        Val("app", Some(v(3, 0, COMPLETE_COMMIT).v1(-1, -1, 2))), // next id of the previous
        Val(
            "app",
            Some(v(3, 0, ONGOING).partitions(parts).v1(-1, -1, 2)),
        ),
        Val(
            "app",
            Some(v(3, 1, PREPARE_ABORT).partitions(parts).v1(-1, -1, 2)),
        ),
        Val("app", Some(v(4, 0, COMPLETE_ABORT).v1(3, -1, 2))), // previous id link
    ]);
    assert_eq!(found(&r), vec![]);
}

#[test]
fn e_prepare_without_complete() {
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let prepare = |status, last_update| {
        vec![
            Val("app", Some(v(1, 0, ONGOING).partitions(parts))),
            Val(
                "app",
                Some(
                    v(1, 0, status)
                        .partitions(parts)
                        .times(last_update, NOW - 20 * MIN),
                ),
            ),
        ]
    };
    for status in [PREPARE_COMMIT, PREPARE_ABORT] {
        // 10 min > 60 s timeout + 5 min margin
        let r = scan_records(prepare(status, NOW - 10 * MIN));
        assert_eq!(found(&r), pairs(&[("prepare_without_complete", 1)]));
        let f = only(&r);
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.evidence["reference_time_ms"], NOW);
        assert_eq!(f.evidence["current"]["last_update_ms"], NOW - 10 * MIN);
        assert!(f.message.contains("KAFKA-19999"), "{}", f.message);
        assert!(f.remediation.is_some());
        // near miss: 5 min after the last update is within timeout + margin
        let r = scan_records(prepare(status, NOW - 5 * MIN));
        assert_eq!(found(&r), vec![]);
    }
    // near miss: the old Prepare was completed
    let mut recs = prepare(PREPARE_COMMIT, NOW - 10 * MIN);
    recs.push(Val(
        "app",
        Some(v(1, 0, COMPLETE_COMMIT).times(NOW - 10 * MIN, NOW - 20 * MIN)),
    ));
    assert_eq!(found(&scan_records(recs)), vec![]);
}

#[test]
fn f_ongoing_past_timeout() {
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let ongoing = |start| {
        vec![
            Val("app", Some(v(1, 0, EMPTY))),
            Val(
                "app",
                Some(v(1, 0, ONGOING).partitions(parts).times(NOW - MIN, start)),
            ),
        ]
    };
    let r = scan_records(ongoing(NOW - 20 * MIN));
    assert_eq!(found(&r), pairs(&[("ongoing_past_timeout", 1)]));
    let f = only(&r);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence["current"]["start_ms"], NOW - 20 * MIN);
    assert!(f.message.contains("not aborting"), "{}", f.message);
    // near miss: started 5 min ago (timeout 60 s + 5 min margin)
    assert_eq!(found(&scan_records(ongoing(NOW - 5 * MIN))), vec![]);
    // a longer timeout (15 min) keeps a 20-minute-old transaction legal
    let r = scan_records(vec![Val(
        "app",
        Some(
            v(1, 0, ONGOING)
                .partitions(parts)
                .times(NOW - MIN, NOW - 19 * MIN)
                .timeout(900_000),
        ),
    )]);
    assert_eq!(found(&r), vec![]);
}

/// KIP-939: a two-phase-commit transaction (timeout `Integer.MAX_VALUE`,
/// `TransactionMetadata.isDistributedTwoPhaseCommitTxn`) has no timeout: the coordinator
/// never aborts it, so an Ongoing one 30 days old is no `ongoing_past_timeout` (its timeout
/// read as one expires after ~24.8 days). Its Prepare* is another matter: its markers go out
/// at once, so it is `prepare_without_complete` past `transaction.max.timeout.ms`'s default
/// (15 min) + 5 min, marked `two_phase_commit` in the evidence. Negative twins: the longest
/// ordinary timeout (15 min) is past after 30 days; a 2PC Prepare 10 minutes old is not.
#[test]
fn f2_two_phase_commit_transactions_have_no_timeout() {
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let day = 24 * 60 * MIN;
    let ongoing = |timeout| {
        vec![Val(
            "app",
            Some(
                v(1, 0, ONGOING)
                    .partitions(parts)
                    .times(NOW - 30 * day, NOW - 30 * day)
                    .timeout(timeout),
            ),
        )]
    };
    assert_eq!(found(&scan_records(ongoing(i32::MAX))), vec![]);
    let r = scan_records(ongoing(900_000));
    assert_eq!(found(&r), pairs(&[("ongoing_past_timeout", 0)]));
    assert!(
        only(&r).evidence["current"]
            .get("two_phase_commit")
            .is_none()
    );
    let prepare = |age| {
        vec![
            Val(
                "app",
                Some(v(1, 0, ONGOING).partitions(parts).timeout(i32::MAX)),
            ),
            Val(
                "app",
                Some(
                    v(1, 0, PREPARE_COMMIT)
                        .partitions(parts)
                        .times(NOW - age, NOW - 40 * MIN)
                        .timeout(i32::MAX),
                ),
            ),
        ]
    };
    let r = scan_records(prepare(30 * MIN));
    assert_eq!(found(&r), pairs(&[("prepare_without_complete", 1)]));
    let f = only(&r);
    assert_eq!(f.evidence["current"]["two_phase_commit"], true);
    assert!(
        f.message.contains("a two-phase-commit transaction"),
        "{}",
        f.message
    );
    assert_eq!(found(&scan_records(prepare(10 * MIN))), vec![]);
}

#[test]
fn g_tombstone_while_in_progress() {
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let r = scan_records(vec![
        Val("app", Some(v(1, 0, ONGOING).partitions(parts))),
        Val("app", None),
    ]);
    assert_eq!(found(&r), pairs(&[("tombstone_while_in_progress", 1)]));
    let f = only(&r);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["previous"]["state"], "Ongoing");
    assert_eq!(f.evidence["current"]["tombstone"], true);
    // after the tombstone the id is gone: no ongoing_past_timeout for it either
    // near miss: a completed id expiring
    let r = scan_records(vec![
        Val("app", Some(v(1, 0, COMPLETE_COMMIT))),
        Val("app", None),
    ]);
    assert_eq!(found(&r), vec![]);
}

#[test]
fn h_unknown_state_key_version_and_undecodable() {
    let mut bad_state = v(1, 0, COMPLETE_COMMIT).encode();
    bad_state[16] = 9; // the status byte
    let good = v(1, 0, EMPTY).encode();
    let r = scan_records(vec![
        Val("app", Some(v(1, 0, EMPTY))),
        Raw(key("app"), Some(bad_state)),
        Raw(key_version(3, "x"), Some(vec![1, 2, 3])),
        Raw(key("trunc"), Some(good[..good.len() - 3].to_vec())),
        Val("ok", Some(v(2, 0, EMPTY))),
    ]);
    assert_eq!(
        found(&r),
        pairs(&[
            ("unknown_state", 1),
            ("unknown_key_version", 2),
            ("undecodable_record", 3),
        ])
    );
    let a = anomalies(&r);
    assert_eq!(a[0].severity, Severity::Error);
    assert_eq!(a[0].evidence["current"]["state_byte"], 9);
    assert_eq!(a[0].evidence["previous"]["state"], "Empty");
    assert!(
        a[0].message.contains("unknown state byte 9"),
        "{}",
        a[0].message
    );
    assert_eq!(a[1].severity, Severity::Info);
    assert_eq!(a[1].evidence["current"]["key_version"], 3);
    assert_eq!(a[2].severity, Severity::Error);
    assert_eq!(a[2].evidence["transactional_id"], "trunc");
    // near miss: a known state byte (every one of 0..=5 after a valid predecessor)
    let r = scan_records(vec![
        Val("app", Some(v(1, 0, EMPTY))),
        Val("app", Some(v(1, 0, EMPTY))),
    ]);
    assert_eq!(found(&r), vec![]);
}

/// The JSON report carries the kind and its sub-id, and `verify` reports the anomalies too.
#[test]
fn i_reports_and_verify_carry_the_kind() {
    let records = || {
        vec![
            Val("app", Some(v(1, 5, EMPTY))),
            Val("app", Some(v(1, 3, EMPTY))),
        ]
    };
    let r = scan_records(records());
    let mut out = Vec::new();
    klogscan::report::json::write_scan(&r, &mut out).unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let f = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "transaction_state_anomaly")
        .expect("in the JSON report");
    assert_eq!(f["evidence"]["anomaly"], "epoch_regression");
    assert_eq!(f["offset"], 1);

    let dir = tempfile::tempdir().unwrap();
    let mut t = PartitionBuilder::new("__transaction_state", 7);
    for r in records() {
        if let Val(id, Some(v)) = r {
            t.append(Batch::new(Producer::PLAIN).record(Rec::kv(key(id), v.encode())));
        }
    }
    t.write(dir.path()).unwrap();
    let opts = klogscan::verify::VerifyOptions {
        scan: ScanOptions::default().with_now_ms(NOW),
        ..Default::default()
    };
    let vr = klogscan::verify::verify(&[dir.path().to_path_buf()], &opts);
    let a: Vec<&Finding> = vr
        .findings()
        .filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .collect();
    assert_eq!(a.len(), 1, "{:#?}", vr.findings().collect::<Vec<_>>());
    assert_eq!(a[0].evidence["anomaly"], "epoch_regression");
    assert_eq!(
        vr.partitions[0].findings.len(),
        vr.partitions[0]
            .findings
            .iter()
            .filter(|f| f.topic == "__transaction_state")
            .count()
    );
    assert!(
        vr.partitions[0]
            .findings
            .iter()
            .any(|f| f.kind == Kind::TransactionStateAnomaly)
    );
}

/// When an anomaly happened, as `--since`/`--until` and the triage read it: the earlier of
/// the two coordinator records it compares (their batches' append times), a field the
/// finding names — not a time searched for anywhere in its evidence.
#[test]
fn an_anomaly_happened_at_the_earlier_of_its_two_records() {
    use klogscan::report::filter::Filter;
    let parts: &[(&str, &[i32])] = &[("orders", &[0])];
    let r = scan_records(vec![
        Val("app", Some(v(1, 0, EMPTY))),
        Val("app", Some(v(1, 0, PREPARE_COMMIT).partitions(parts))),
    ]);
    let f = only(&r);
    let previous = f.evidence["previous"]["timestamp"].as_i64().unwrap();
    let current = f.evidence["current"]["timestamp"].as_i64().unwrap();
    assert!(0 <= previous && previous < current, "{previous} {current}");
    let since = |t| Filter {
        since: Some(t),
        ..Default::default()
    };
    let until = |t| Filter {
        until: Some(t),
        ..Default::default()
    };
    assert!(since(previous).finding_matches(f));
    assert!(!since(previous + 1).finding_matches(f));
    assert!(until(previous).finding_matches(f));
    assert!(!until(previous - 1).finding_matches(f));
}
