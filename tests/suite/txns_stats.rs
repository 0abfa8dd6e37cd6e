//! `txns` statistics and `txns --cluster` (issue 12) on a testkit cluster whose numbers
//! are counted by hand below: 6 cluster transactions of two transactional ids over four
//! partitions, with the coordinator's log.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::cluster::txns::Outcome;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::testkit::Producer;
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use std::path::Path;

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);
const C: Tp = ("payments", 0);
const D: Tp = ("audit", 0);

/// T1 app  A,B   2 rec each  commit   (duration 95 + 20·2 = 135 ms)
/// T2 app  A,B,C 3 rec each  abort    (155 ms)
/// T3 bill C     1 rec       commit   (115 ms)
/// T4 app  A     2 rec       abort at epoch 1: the coordinator fences producer 10 (115 ms)
/// T5 app  B     2 rec       commit at epoch 2 (115 ms)
/// T6 bill C,D   1 rec each  open
/// Durations: data batches 10 ms apart from start + 5, markers 10 ms apart from
/// start + 110 + 10·k for k partitions: last marker − first data = 95 + 20·k.
fn cluster(dir: &Path) {
    let mut c = Cluster::new(Some("c1")).coordinator(0);
    let app = Producer::transactional(10, 0);
    let bill = Producer::transactional(20, 0);
    c.run(&Txn::new("app", app, &[A, B]));
    c.run(&Txn::new("app", app, &[A, B, C]).records(3).abort());
    c.run(&Txn::new("billing", bill, &[C]).records(1));
    c.run(&Txn::new("app", app, &[A]).abort().marker_epoch(1));
    c.run(&Txn::new("app", app.with_epoch(2), &[B]));
    c.run(&Txn::new("billing", bill, &[C, D]).records(1).open());
    c.write(dir, 1).unwrap();
}

#[test]
fn statistics_match_hand_counts() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    let r = pipeline::scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let a = r.transactions.as_ref().unwrap();
    let s = &a.stats;
    assert_eq!(
        (
            s.cluster_transactions,
            s.committed,
            s.aborted,
            s.empty,
            s.open,
            s.partial,
            s.mixed
        ),
        (6, 3, 2, 0, 1, 0, 0)
    );
    assert_eq!(s.producers_fenced, 1);
    // over the 5 cluster transactions with data: records 4, 9, 1, 2, 2, 2 (T6 open: 2)
    assert_eq!(s.size.records.count, 6);
    assert_eq!((s.size.records.min, s.size.records.max), (1, 9));
    assert_eq!(s.size.batches.max, 3);
    assert_eq!(s.size.duration_ms.count, 5);
    assert_eq!((s.size.duration_ms.min, s.size.duration_ms.max), (115, 155));
    let app = &s.by_transactional_id.get(0).unwrap();
    assert_eq!(app.transactional_id.as_deref(), Some("app"));
    assert_eq!(app.producer_ids, vec![10]);
    assert_eq!(
        (app.committed, app.aborted, app.open, app.fenced),
        (2, 2, 0, 1)
    );
    // partitions per transaction 2, 3, 1, 1; records 4, 9, 2, 2
    assert_eq!(
        (app.partitions.min, app.partitions.p50, app.partitions.max),
        (1, 1, 3)
    );
    assert_eq!(
        (
            app.size.records.min,
            app.size.records.p50,
            app.size.records.max
        ),
        (2, 2, 9)
    );
    let bill = &s.by_transactional_id.get(1).unwrap();
    assert_eq!(bill.transactional_id.as_deref(), Some("billing"));
    assert_eq!(
        (bill.committed, bill.aborted, bill.open, bill.fenced),
        (1, 0, 1, 0)
    );
    // the longest: T2, T1, then the three of 115 ms by start time
    let longest: Vec<(i64, i64, Outcome)> = s
        .longest
        .iter()
        .map(|l| (l.producer_id, l.duration_ms, l.outcome))
        .collect();
    assert_eq!(
        longest,
        vec![
            (10, 155, Outcome::Aborted),
            (10, 135, Outcome::Committed),
            (20, 115, Outcome::Committed),
            (10, 115, Outcome::Aborted),
            (10, 115, Outcome::Committed),
        ]
    );
    let part = |topic: &str, p: i32| {
        s.by_partition
            .iter()
            .find(|x| x.topic == topic && x.partition == p)
            .unwrap()
    };
    let pa = part("orders", 0);
    assert_eq!(
        (pa.committed, pa.aborted, pa.open, pa.producers),
        (1, 2, 0, 1)
    );
    assert_eq!(
        (
            pa.size.records.min,
            pa.size.records.p50,
            pa.size.records.max
        ),
        (2, 2, 3)
    );
    assert_eq!(pa.size.batches.max, 1);
    assert!(pa.size.bytes.min > 0);
    let pc = part("payments", 0);
    assert_eq!(
        (pc.committed, pc.aborted, pc.open, pc.producers),
        (1, 1, 1, 2)
    );
    let pd = part("audit", 0);
    assert_eq!((pd.committed, pd.open), (0, 1));
    // A's three transactions: 125 ms (T1: marker at +130, data at +5), T2 and T4
    assert_eq!(pa.size.duration_ms.count, 3);
}

fn cli_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .arg("txns")
        .arg(dir)
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn txns_cli_cluster_rows_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    let all = cli_json(dir.path(), &["--cluster"]);
    assert_eq!(all["klogscan_cluster_txns"], 1);
    let rows = all["transactions"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    let t1 = &rows[0];
    assert_eq!(t1["transactional_id"], "app");
    assert_eq!(
        (t1["producer_id"].as_i64(), t1["outcome"].as_str()),
        (Some(10), Some("committed"))
    );
    assert_eq!(t1["grouping"], "coordinator_record");
    assert_eq!(t1["duration_ms"], 135);
    let p0 = &t1["partitions"][0];
    assert_eq!(
        (
            p0["topic"].as_str(),
            p0["first_offset"].as_i64(),
            p0["marker_offset"].as_i64()
        ),
        (Some("orders"), Some(0), Some(2))
    );
    let n = |args: &[&str]| {
        cli_json(dir.path(), args)["transactions"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(n(&["--cluster", "--transactional-id", "billing"]), 2);
    assert_eq!(n(&["--cluster", "--producer-id", "10"]), 4);
    let start = rows[2]["start_ms"].as_i64().unwrap().to_string();
    assert_eq!(n(&["--cluster", "--from", &start]), 4);
    assert_eq!(n(&["--cluster", "--to", &start]), 3);
    // the statistics form carries the cluster part and the per-partition sizes
    let st = cli_json(dir.path(), &[]);
    assert_eq!(st["cluster"]["cluster_transactions"], 6);
    assert_eq!(st["cluster"]["by_transactional_id"][0]["fenced"], 1);
    let orders0 = st["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "orders" && p["partition"] == 0)
        .unwrap();
    assert_eq!(orders0["transaction_size"]["records"]["max"], 3);
    // the table forms render
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["txns", "--cluster"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("6 cluster transaction(s)"), "{text}");
    assert!(text.contains("orders-0 0 → 2"), "{text}");
}

#[test]
fn dump_transaction_log_in_both_shapes() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    let log = dir
        .path()
        .join("__transaction_state-0/00000000000000000000.log");
    let dump = |flag: &str| {
        let out = Command::cargo_bin("klogscan")
            .unwrap()
            .args(["dump", flag])
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let json = dump("--transaction-log-json");
    assert!(
        json.contains(r#"key: {"type":"0","data":{"transactionalId":"app"}} payload: {"version":"0","data":{"producerId":10,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":1,"transactionPartitions":[{"topic":"orders","partitionIds":[0,1]}],"#),
        "{json}"
    );
    // A Complete record lists no partition: an empty array, as `TransactionLog.valueToBytes`
    // writes it for every state but Empty.
    assert!(
        json.contains(r#""transactionStatus":4,"transactionPartitions":[]"#),
        "{json}"
    );
    let text = dump("--transaction-log-decoder");
    assert!(
        text.contains("key: transaction_metadata::transactionalId=app payload: producerId:10,producerEpoch:0,state=Ongoing,partitions=[orders-0,orders-1]"),
        "{text}"
    );
}

#[test]
fn scan_report_carries_the_cluster_statistics() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["scan", "--format", "json", "--fail-on", "never"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["klogscan_report"], 1);
    let t = &r["transactions"];
    assert_eq!(
        (t["cluster_transactions"].as_u64(), t["committed"].as_u64()),
        (Some(6), Some(3))
    );
    assert_eq!(t["producers_fenced"], 1);
    assert_eq!(t["longest"][0]["duration_ms"], 155);
    assert_eq!(t["by_transactional_id"][1]["transactional_id"], "billing");
    let text = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["scan", "--fail-on", "never"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "cluster transactions: 6 (3 committed, 2 aborted, 0 empty, 1 open, 0 partial, 0 mixed)"
        ),
        "{text}"
    );
}
