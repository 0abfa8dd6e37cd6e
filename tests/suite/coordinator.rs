//! The coordinator confirmation of open/hanging transactions (`klogscan::cluster::coordinator`):
//! the real `__transaction_state` partitions decode record by record into the states the
//! dumps show, and testkit log dirs holding a data partition plus a `__transaction_state`
//! partition (values written by an encoder local to this file, independent of the
//! decoder) get the find-hanging verdicts: no transactional id, alive (downgraded),
//! markers lost, partition not listed, tombstoned; without `__transaction_state` the
//! report is unchanged byte for byte.
#![cfg(feature = "testkit")]

use klogscan::cluster::coordinator::{self, CoordinatorView};
use klogscan::discover::layout;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::txnlog::TxnState;
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use std::path::Path;

// ----- an encoder of __transaction_state records (kafka-semantics.md §6.1) ---------------

fn key(id: &str) -> Vec<u8> {
    let mut k = 0i16.to_be_bytes().to_vec();
    k.extend_from_slice(&(id.len() as i16).to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

/// A v0 value: `state` byte, partitions as `(topic, [ids])` (`None` = null array).
fn value_v0(
    pid: i64,
    epoch: i16,
    state: u8,
    parts: Option<&[(&str, &[i32])]>,
    last_update: i64,
    start: i64,
) -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&epoch.to_be_bytes());
    v.extend_from_slice(&60_000i32.to_be_bytes());
    v.push(state);
    match parts {
        None => v.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(ps) => {
            v.extend_from_slice(&(ps.len() as i32).to_be_bytes());
            for (t, ids) in ps {
                v.extend_from_slice(&(t.len() as i16).to_be_bytes());
                v.extend_from_slice(t.as_bytes());
                v.extend_from_slice(&(ids.len() as i32).to_be_bytes());
                for i in *ids {
                    v.extend_from_slice(&i.to_be_bytes());
                }
            }
        }
    }
    v.extend_from_slice(&last_update.to_be_bytes());
    v.extend_from_slice(&start.to_be_bytes());
    v
}

const EMPTY: u8 = 0;
const ONGOING: u8 = 1;
const PREPARE_COMMIT: u8 = 2;
const PREPARE_ABORT: u8 = 3;
const COMPLETE_COMMIT: u8 = 4;
const COMPLETE_ABORT: u8 = 5;

/// The data partition: plain data, an open transaction of producer 900 epoch 1 at
/// offset 1, then 20 minutes of plain traffic (hanging by the time-based rule).
fn data_partition() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.append(Batch::new(Producer::transactional(900, 1)).records(2));
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p
}

/// The `__transaction_state` partition that owns transactional id `app` with the default
/// 50 partitions (`abs("app".hashCode) % 50`): only there is its record confirmed.
const TXN_P: i32 = 1;

/// Write the data partition and a `__transaction_state-1` (`TXN_P`) holding `records`
/// (`(id, value)`, `None` = tombstone), scan, annotate.
fn run(records: &[(&str, Option<Vec<u8>>)]) -> (tempfile::TempDir, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    // One broker's log dir (a broker file makes it one: its partitions share a timeline,
    // hence one reference time for the coordinator's and the data partition's records).
    std::fs::write(
        dir.path().join("meta.properties"),
        "version=0\nbroker.id=1\n",
    )
    .unwrap();
    data_partition().write(dir.path()).unwrap();
    if !records.is_empty() {
        let mut t = PartitionBuilder::new("__transaction_state", TXN_P);
        for (id, v) in records {
            let rec = match v {
                Some(v) => Rec::kv(key(id), v),
                None => Rec::tombstone(key(id)),
            };
            t.append(Batch::new(Producer::PLAIN).record(rec));
        }
        t.write(dir.path()).unwrap();
    }
    let r = scan_annotated(dir.path());
    (dir, r)
}

fn scan_annotated(dir: &Path) -> ScanReport {
    let opts = ScanOptions::default();
    let inv = layout::discover(&[dir.to_path_buf()]);
    let mut r = klogscan::pipeline::scan_partitions(&inv, &opts);
    coordinator::annotate(&mut r, &inv, &opts);
    r
}

fn orders_txn(r: &ScanReport) -> &Finding {
    let v: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| {
            f.topic == "orders"
                && matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
        })
        .collect();
    assert_eq!(v.len(), 1, "{:#?}", r.findings);
    v[0]
}

fn ref_time(r: &ScanReport) -> i64 {
    r.partitions
        .iter()
        .find(|p| p.topic == "orders")
        .unwrap()
        .ref_time
}

fn json(r: &ScanReport) -> String {
    let mut out = Vec::new();
    klogscan::report::json::write_scan(r, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn counts_match(r: &ScanReport) {
    let n = |s| r.findings.iter().filter(|f| f.severity == s).count() as u64;
    let c = r.summary.findings;
    assert_eq!(
        (c.error, c.warning, c.info),
        (n(Severity::Error), n(Severity::Warning), n(Severity::Info))
    );
}

// ----- real data ---------------------------------------------------------------------------

#[test]
fn real_transaction_state_partitions_decode() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    // (partition dir, records, id, final state, partitions of its last transaction)
    let cases: [(&str, u64, &str, TxnState, &str); 4] = [
        (
            "broker/ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/__transaction_state-44",
            4,
            "default_",
            TxnState::CompleteCommit,
            "_confluent-ksql-default__command_topic",
        ),
        (
            "rebuilt/tombentley__klog/__transaction_state-4",
            7,
            "my-txnal-id",
            TxnState::CompleteCommit,
            "transactional-foo",
        ),
        (
            "rebuilt/ableasdale__kafka-transactions/readme-block09___transaction_state-0",
            4,
            "txn-2",
            TxnState::CompleteAbort,
            "transaction-topic",
        ),
        (
            "rebuilt/ableasdale__kafka-transactions/readme-block12___transaction_state-0",
            4,
            "txn-1",
            TxnState::CompleteCommit,
            "transaction-topic",
        ),
    ];
    for (dir, records, id, state, topic) in cases {
        // The rebuilt copies carry a prefix in their directory names: link them (read in
        // place, never copied) under the name a broker gives them.
        let link_dir = tempfile::tempdir().unwrap();
        let name = dir.rsplit('/').next().unwrap();
        let name = &name[name.find("__transaction_state").unwrap()..];
        let path = link_dir.path().join(name);
        std::os::unix::fs::symlink(root.join(dir), &path).unwrap();
        let inv = layout::discover(std::slice::from_ref(&path));
        assert_eq!(inv.partitions.len(), 1, "{dir}");
        let view = CoordinatorView::load(&inv, &ScanOptions::default());
        assert!(view.errors.is_empty(), "{dir}: {:?}", view.errors);
        assert_eq!(view.records, records, "{dir}");
        assert_eq!(view.ids.len(), 1, "{dir}");
        let t = &view.ids[id];
        assert_eq!(t.state, state, "{dir}");
        assert_eq!((t.producer_id, t.producer_epoch), (0, 0), "{dir}");
        assert_eq!(t.source.offset, records as i64 - 1, "{dir}");
        assert!(
            t.partitions.is_empty(),
            "{dir}: Complete* lists no partition"
        );
        assert_eq!(t.last_txn_partitions, vec![(topic.to_string(), 0)], "{dir}");
        assert_eq!((t.previous_producer_id, t.next_producer_id), (-1, -1));
        assert!(t.tombstoned.is_none());
    }
    // The whole broker dir: the command topic's transaction is committed, so the
    // coordinator has nothing to confirm and the report is unchanged.
    let dir = root
        .join("broker/ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data");
    let opts = ScanOptions::default();
    let inv = layout::discover(std::slice::from_ref(&dir));
    let mut r = klogscan::pipeline::scan_partitions(&inv, &opts);
    let before = json(&r);
    coordinator::annotate(&mut r, &inv, &opts);
    assert_eq!(json(&r), before);
}

// ----- scenarios ---------------------------------------------------------------------------

#[test]
fn a_no_transactional_id_is_unconfirmed_with_one_partition_of_fifty() {
    let (_d, r) = run(&[("someone-else", Some(value_v0(5, 0, EMPTY, None, 1, -1)))]);
    let f = orders_txn(&r);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::HangingTransaction, Severity::Error)
    );
    assert!(
        f.message.contains(
            "unconfirmed: no transactional id maps to producer 900 in __transaction_state-1, but the id may be stored in one of the 49 partition(s) not read"
        ),
        "{}",
        f.message
    );
    let c = &f.evidence["coordinator"];
    assert_eq!(c["verdict"], "no_transactional_id");
    assert_eq!(c["hanging"], true);
    assert_eq!(c["partitions_read"], serde_json::json!([TXN_P]));
    assert_eq!(c["confirmed"], false);
    counts_match(&r);
}

#[test]
fn b_alive_ongoing_is_downgraded() {
    // Build once to learn the reference time, then write the coordinator's view.
    let (_d, r0) = run(&[]);
    let now = ref_time(&r0);
    let ongoing_since = |last_update, start| {
        value_v0(
            900,
            1,
            ONGOING,
            Some(&[("orders", &[0, 3])]),
            last_update,
            start,
        )
    };
    let ongoing = |last_update| ongoing_since(last_update, last_update);
    let (_d, r) = run(&[
        (
            "app",
            Some(value_v0(900, 1, EMPTY, None, now - 22 * 60_000, -1)),
        ),
        ("app", Some(ongoing(now - 60_000))),
    ]);
    let f = orders_txn(&r);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::OpenTransaction, Severity::Info)
    );
    assert!(
        f.message
            .contains("the coordinator has transactional id app in state Ongoing")
            && f.message.contains("the transaction is alive (not hanging)"),
        "{}",
        f.message
    );
    let c = &f.evidence["coordinator"];
    assert_eq!(c["verdict"], "alive");
    assert_eq!(c["downgraded"], true);
    assert_eq!(c["transactional_id"], "app");
    assert_eq!(c["partitions"], serde_json::json!(["orders-0", "orders-3"]));
    assert!(f.remediation.as_deref().unwrap().contains("do not abort"));
    assert!(
        f.remediation
            .as_deref()
            .unwrap()
            .contains("describe --transactional-id app")
    );
    counts_match(&r);
    assert_eq!(r.summary.findings.error, r0.summary.findings.error - 1);

    // near miss 1: the Ongoing record is older than timeout + 5 min: stays hanging
    let (_d, r) = run(&[("app", Some(ongoing(now - 10 * 60_000)))]);
    let f = orders_txn(&r);
    assert_eq!(f.kind, Kind::HangingTransaction);
    assert_eq!(f.evidence["coordinator"]["verdict"], "alive");
    assert_eq!(f.evidence["coordinator"]["recent"], false);
    assert!(f.message.contains("the coordinator is not aborting it"));
    // ... and the coordinator's own log says so too (rule 31): Ongoing since 21 min with a
    // 60 s timeout
    let a: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .collect();
    assert_eq!(a.len(), 1, "{a:#?}");
    assert_eq!(a[0].evidence["anomaly"], "ongoing_past_timeout");
    assert_eq!(
        (a[0].topic.as_str(), a[0].partition, a[0].offset),
        ("__transaction_state", TXN_P, Some(0))
    );
    counts_match(&r);

    // near miss 1b: updated a minute ago (a later AddPartitions), but started 21 min ago
    // with a 60 s timeout: the coordinator aborts at start + timeout
    // (`timedOutTransactions`), so it is not aborting it either — no downgrade, in
    // agreement with the log's own `ongoing_past_timeout`
    let (_d, r) = run(&[("app", Some(ongoing_since(now - 60_000, now - 21 * 60_000)))]);
    let f = orders_txn(&r);
    assert_eq!(f.kind, Kind::HangingTransaction);
    assert_eq!(f.evidence["coordinator"]["recent"], false);
    assert!(f.message.contains("the coordinator is not aborting it"));
    assert!(
        r.findings
            .iter()
            .any(|f| f.evidence["anomaly"] == "ongoing_past_timeout"),
        "{:#?}",
        r.findings
    );

    // near miss 2: Ongoing, but this partition is not in the transaction
    let (_d, r) = run(&[(
        "app",
        Some(value_v0(
            900,
            1,
            ONGOING,
            Some(&[("orders", &[1])]),
            now - 60_000,
            now,
        )),
    )]);
    let f = orders_txn(&r);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::HangingTransaction, Severity::Error)
    );
    assert_eq!(
        f.evidence["coordinator"]["verdict"],
        "partition_not_in_transaction"
    );
    assert!(f.message.contains("does not list this partition"));
    assert!(
        f.remediation.as_deref().unwrap().starts_with(
            "check the coordinator first with `kafka-transactions.sh --bootstrap-server <broker> describe --transactional-id app`"
        ),
        "{:?}",
        f.remediation
    );
}

#[test]
fn c_completed_transaction_means_markers_lost() {
    let (_d, r0) = run(&[]);
    let now = ref_time(&r0);
    // The transaction's data (orders-0 offset 1) was written 20 min before the reference
    // time: the coordinator started the transaction before it and completed it after it.
    let data_ts = orders_txn(&r0).evidence["first_batch"]["timestamp"]
        .as_i64()
        .unwrap();
    assert!(data_ts < now - 19 * 60_000);
    let t = now - 30 * 60_000;
    let done = now - 19 * 60_000;
    for (prepare, complete, marker) in [
        (PREPARE_COMMIT, COMPLETE_COMMIT, "COMMIT"),
        (PREPARE_ABORT, COMPLETE_ABORT, "ABORT"),
    ] {
        let listed: &[(&str, &[i32])] = &[("orders", &[0])];
        let (_d, r) = run(&[
            ("app", Some(value_v0(900, 1, ONGOING, Some(listed), t, t))),
            (
                "app",
                Some(value_v0(900, 1, prepare, Some(listed), done, t)),
            ),
            (
                "app",
                Some(value_v0(900, 1, complete, Some(&[]), done + 1, t)),
            ),
        ]);
        let f = orders_txn(&r);
        assert_eq!(
            (f.kind, f.severity),
            (Kind::HangingTransaction, Severity::Error)
        );
        assert!(
            f.message.contains(&format!(
                "no {marker} marker reached this partition — markers lost"
            )),
            "{}",
            f.message
        );
        let c = &f.evidence["coordinator"];
        assert_eq!(c["verdict"], "markers_lost");
        assert_eq!(
            c["last_transaction_partitions"],
            serde_json::json!(["orders-0"])
        );
        assert!(
            f.remediation
                .as_deref()
                .unwrap()
                .contains("--transactional-id app")
        );
        assert!(
            f.remediation
                .as_deref()
                .unwrap()
                .contains("--start-offset 1")
        );
    }
    // near miss: the completed transaction held another partition only
    let (_d, r) = run(&[
        (
            "app",
            Some(value_v0(
                900,
                1,
                PREPARE_COMMIT,
                Some(&[("orders", &[4])]),
                t,
                t,
            )),
        ),
        (
            "app",
            Some(value_v0(900, 1, COMPLETE_COMMIT, Some(&[]), t + 1, t)),
        ),
    ]);
    let f = orders_txn(&r);
    assert_eq!(
        f.evidence["coordinator"]["verdict"],
        "no_transaction_in_progress"
    );
    assert!(f.message.contains("confirmed hanging"));
    // ... and a tombstoned id
    let (_d, r) = run(&[
        (
            "app",
            Some(value_v0(900, 1, COMPLETE_ABORT, Some(&[]), t, t)),
        ),
        ("app", None),
    ]);
    let f = orders_txn(&r);
    assert_eq!(f.evidence["coordinator"]["verdict"], "tombstoned");
    assert!(
        f.message.contains("was removed from the coordinator"),
        "{}",
        f.message
    );
}

#[test]
fn d_without_transaction_state_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    data_partition().write(dir.path()).unwrap();
    let opts = ScanOptions::default();
    let inv = layout::discover(&[dir.path().to_path_buf()]);
    let mut r = klogscan::pipeline::scan_partitions(&inv, &opts);
    let before = json(&r);
    assert!(before.contains("hanging_transaction"));
    coordinator::annotate(&mut r, &inv, &opts);
    assert_eq!(json(&r), before);
    assert!(orders_txn(&r).evidence.get("coordinator").is_none());
}

/// The KAFKA-12671 late-write pattern (rule 24): the coordinator's transaction for
/// (900, 1) was completed in this partition (its COMMIT is at offset 2), then data of the
/// same producer and epoch continuing the old sequence opened a new transaction the
/// coordinator never knew about. That is not `markers_lost`: the COMMIT did arrive.
#[test]
fn e_late_write_after_the_commit_is_not_markers_lost() {
    let a = Producer::transactional(900, 1);
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(a).records(2));
    p.commit(a, 3);
    p.advance_time(60_000);
    p.append(Batch::new(a).records(1)); // late write, same epoch, continues the sequence
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    let listed: &[(&str, &[i32])] = &[("orders", &[0])];
    // `done`: the coordinator's last update, before (late write) or after the late data
    // (clock skew between coordinator and partition leader): either way the marker of
    // (900, 1) in this partition rules markers_lost out.
    for done in [p.now() - 22 * 60_000, p.now() - 60_000] {
        let dir = tempfile::tempdir().unwrap();
        p.write(dir.path()).unwrap();
        let t0 = p.now() - 23 * 60_000;
        let mut t = PartitionBuilder::new("__transaction_state", TXN_P);
        for v in [
            value_v0(900, 1, ONGOING, Some(listed), t0, t0),
            value_v0(900, 1, PREPARE_COMMIT, Some(listed), done, t0),
            value_v0(900, 1, COMPLETE_COMMIT, Some(&[]), done + 1, t0),
        ] {
            t.append(Batch::new(Producer::PLAIN).record(Rec::kv(key("app"), &v)));
        }
        t.write(dir.path()).unwrap();
        let r = scan_annotated(dir.path());
        let f = orders_txn(&r);
        assert_eq!(f.offset, Some(3));
        assert_eq!(f.evidence["last_marker"]["offset"], 2);
        assert_eq!(f.evidence["last_marker"]["type"], "commit");
        assert_eq!(
            (f.kind, f.severity),
            (Kind::HangingTransaction, Severity::Error)
        );
        let c = &f.evidence["coordinator"];
        assert_eq!(c["verdict"], "no_transaction_in_progress", "{}", f.message);
        assert_eq!(c["hanging"], true);
        assert!(f.message.contains("confirmed hanging"), "{}", f.message);
        assert!(f.message.contains("KAFKA-12671"), "{}", f.message);
        let late = f.evidence["first_batch"]["timestamp"].as_i64().unwrap() > done + 1;
        assert_eq!(
            f.message
                .contains("began after the coordinator's last update"),
            late,
            "{}",
            f.message
        );
        assert_eq!(
            f.message.contains(
                "the COMMIT marker of producer 900 epoch 1 is in this partition at offset 2"
            ),
            !late,
            "{}",
            f.message
        );
        assert!(
            f.remediation
                .as_deref()
                .unwrap()
                .contains("--start-offset 3")
        );
        counts_match(&r);
    }
}

/// markers_lost needs the data to predate the coordinator's last update: a transaction
/// that began after the coordinator completed the listed one (and with no marker here)
/// is the late-write case too.
#[test]
fn f_data_after_the_completed_transaction_is_not_markers_lost() {
    let (_d, r0) = run(&[]);
    let now = ref_time(&r0);
    let t = now - 30 * 60_000;
    let listed: &[(&str, &[i32])] = &[("orders", &[0])];
    let (_d, r) = run(&[
        ("app", Some(value_v0(900, 1, ONGOING, Some(listed), t, t))),
        (
            "app",
            Some(value_v0(900, 1, PREPARE_COMMIT, Some(listed), t + 1, t)),
        ),
        (
            "app",
            Some(value_v0(900, 1, COMPLETE_COMMIT, Some(&[]), t + 2, t)),
        ),
    ]);
    let f = orders_txn(&r);
    assert!(f.evidence["last_marker"].is_null());
    assert_eq!(
        f.evidence["coordinator"]["verdict"],
        "no_transaction_in_progress"
    );
    assert!(
        f.message
            .contains("began after the coordinator's last update"),
        "{}",
        f.message
    );
}

/// KIP-939: a two-phase-commit transaction (timeout `Integer.MAX_VALUE`,
/// `TransactionMetadata.isDistributedTwoPhaseCommitTxn`) has no timeout: the coordinator never
/// aborts it (`TransactionStateManager.timedOutTransactions` skips it). Ongoing for 30 days
/// and listing this partition, it is alive: downgraded to `open_transaction`, worded as
/// waiting for its external transaction manager or an admin's
/// `Admin.forceTerminateTransaction`, and no `ongoing_past_timeout` in the coordinator's
/// log. Negative twin: the same transaction with an ordinary timeout (15 min) stays hanging,
/// with `ongoing_past_timeout`.
#[test]
fn g_two_phase_commit_transaction_never_times_out() {
    use klogscan::testkit::txnlog::TxnValue;
    let (_d, r0) = run(&[]);
    let now = ref_time(&r0);
    let since = now - 30 * 86_400_000;
    let ongoing = |timeout| {
        TxnValue::new(900, 1, ONGOING)
            .partitions(&[("orders", &[0])])
            .timeout(timeout)
            .times(since, since)
            .encode()
    };
    let anomalies = |r: &ScanReport| -> Vec<String> {
        r.findings
            .iter()
            .filter(|f| f.kind == Kind::TransactionStateAnomaly)
            .map(|f| f.evidence["anomaly"].as_str().unwrap().to_string())
            .collect()
    };
    let (_d, r) = run(&[("app", Some(ongoing(i32::MAX)))]);
    let f = orders_txn(&r);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::OpenTransaction, Severity::Info)
    );
    let c = &f.evidence["coordinator"];
    assert_eq!(
        (&c["verdict"], &c["recent"], &c["downgraded"]),
        (&"alive".into(), &true.into(), &true.into())
    );
    assert_eq!(c["two_phase_commit"], true);
    assert!(
        f.message.contains("a two-phase-commit transaction")
            && f.message.contains("never aborts it on timeout")
            && !f.message.contains("not aborting it"),
        "{}",
        f.message
    );
    assert!(f.broker_behaviour.contains("external transaction manager"));
    let fix = f.remediation.as_deref().unwrap();
    assert!(
        fix.contains("do not abort it by hand")
            && fix.contains("Admin.forceTerminateTransaction(\"app\")"),
        "{fix}"
    );
    assert!(anomalies(&r).is_empty(), "{:#?}", r.findings);
    counts_match(&r);

    let (_d, r) = run(&[("app", Some(ongoing(900_000)))]);
    let f = orders_txn(&r);
    assert_eq!(f.kind, Kind::HangingTransaction);
    assert_eq!(f.evidence["coordinator"]["recent"], false);
    assert!(f.evidence["coordinator"].get("two_phase_commit").is_none());
    assert!(f.message.contains("the coordinator is not aborting it"));
    assert_eq!(anomalies(&r), ["ongoing_past_timeout"]);
}
