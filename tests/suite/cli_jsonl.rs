//! `scan --format jsonl` streams (issue 14 item 4): each partition's line and the findings
//! no cluster check can change are written as soon as the partition's own analysis is
//! final, before the cluster checks; the findings the cluster checks rewrite or add come
//! after, and the set of findings equals `--format json`'s.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);
const C: Tp = ("payments", 0);
const D: Tp = ("audit", 2);

/// Four data partitions and the coordinator's log: a transaction whose marker never
/// reached `payments-0` hangs there; the cross-partition join finds the missing marker
/// (added by a cluster check) and links it as the hanging transaction's root cause; the
/// coordinator's record confirms the verdict (an in-place rewrite). `events-0` has a
/// sequence gap, a finding of the partition's own analysis (streamed early).
fn cluster(dir: &Path) {
    let mut c = Cluster::new(Some("c1")).coordinator_partitions(50);
    let p = c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]));
    c.run(&Txn::new("app", p, &[A, B, C, D]).skip_marker_on(C));
    c.advance(40 * 60_000);
    c.plain(D, 1);
    c.write(dir, 1).unwrap();
    let mut e = PartitionBuilder::new("events", 0);
    e.append(Batch::new(Producer::idempotent(50, 0)).records(3));
    e.append(
        Batch::new(Producer::idempotent(50, 0))
            .sequence(20)
            .records(2),
    );
    e.write(dir).unwrap();
}

fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .env_remove("NO_COLOR")
        .arg("scan")
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn lines(dir: &Path, args: &[&str]) -> Vec<Value> {
    let mut a = vec!["--format", "jsonl"];
    a.extend_from_slice(args);
    run(dir, &a)
        .1
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn types(lines: &[Value]) -> Vec<&str> {
    lines.iter().map(|l| l["type"].as_str().unwrap()).collect()
}

#[test]
fn jsonl_streams_partitions_first_and_cluster_findings_after() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    let lines = lines(dir.path(), &[]);
    let t = types(&lines);
    assert_eq!(t[0], "begin");
    assert_eq!(*t.last().unwrap(), "summary");
    let last_partition = t.iter().rposition(|t| *t == "partition").unwrap();
    // Every finding written before the last partition line belongs to the partition line
    // right above it and is of a kind no cluster check rewrites.
    let mut current: Option<&Value> = None;
    for l in &lines[1..last_partition] {
        match l["type"].as_str().unwrap() {
            "partition" => current = Some(&l["data"]),
            "finding" => {
                let p = current.expect("a finding before any partition line");
                assert_eq!(
                    (&l["data"]["topic"], &l["data"]["partition"]),
                    (&p["topic"], &p["partition"]),
                    "{l}"
                );
                let k = l["data"]["kind"].as_str().unwrap();
                assert!(k != "hanging_transaction" && k != "open_transaction", "{l}");
            }
            other => panic!("{other} line among the partitions: {l}"),
        }
    }
    // The partition's own finding follows its line at once, before the cluster checks.
    let events = lines
        .iter()
        .position(|l| l["type"] == "partition" && l["data"]["topic"] == "events")
        .unwrap();
    assert_eq!(lines[events + 1]["data"]["kind"], "sequence_gap", "{t:?}");
    // The hanging transaction waits for the cluster checks: it comes after every partition
    // line, confirmed by the coordinator and linked to the missing marker found by the
    // cross-partition join (itself after the partition lines).
    let find = |kind: &str| {
        let at = lines
            .iter()
            .position(|l| l["type"] == "finding" && l["data"]["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {t:?}"));
        (at, &lines[at]["data"])
    };
    let (h_at, h) = find("hanging_transaction");
    let (m_at, m) = find("transaction_marker_missing");
    assert!(h_at > last_partition && m_at > last_partition, "{t:?}");
    assert_eq!(h["caused_by"], serde_json::json!([m["id"]]));
    assert!(h["evidence"]["coordinator"].is_object(), "{h}");
    // After the findings: incidents, then the summary.
    let first_incident = t.iter().position(|t| *t == "incident").unwrap();
    assert!(t[first_incident..].iter().all(|t| *t != "finding"));
}

#[test]
fn jsonl_findings_equal_the_json_reports() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    let lines = lines(dir.path(), &[]);
    let (code_json, json) = run(dir.path(), &["--format", "json"]);
    let (code_jsonl, _) = run(dir.path(), &["--format", "jsonl"]);
    assert_eq!(code_json, code_jsonl);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let by_id = |fs: Vec<&Value>| -> BTreeMap<String, Value> {
        fs.into_iter()
            .map(|f| (f["id"].as_str().unwrap().to_string(), f.clone()))
            .collect()
    };
    let streamed: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "finding")
        .map(|l| &l["data"])
        .collect();
    let n = streamed.len();
    let streamed = by_id(streamed);
    assert_eq!(streamed.len(), n, "a finding was written twice");
    let report = by_id(doc["findings"].as_array().unwrap().iter().collect());
    assert!(report.len() >= 3, "{report:#?}");

    assert_eq!(streamed, report);
    let parts: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "partition")
        .map(|l| &l["data"])
        .collect();
    let doc_parts: Vec<&Value> = doc["partitions"].as_array().unwrap().iter().collect();
    assert_eq!(parts, doc_parts);
    let summary = &lines.last().unwrap()["data"];
    assert_eq!(summary, &doc["summary"]);
}

#[test]
fn jsonl_filters_and_findings_only_hold_for_streamed_lines() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    // --findings-only: no partition line at all, the same findings.
    let only = lines(dir.path(), &["--findings-only"]);
    assert!(!types(&only).contains(&"partition"));
    let all = lines(dir.path(), &[]);
    let count = |ls: &[Value]| ls.iter().filter(|l| l["type"] == "finding").count();
    assert_eq!(count(&only), count(&all));
    // A producer that is nowhere: no partition is shown, no finding, early or late.
    let none = lines(dir.path(), &["--producer-id", "424242"]);
    assert_eq!(types(&none), vec!["begin", "summary"], "{none:#?}");
    // A topic filter: only that topic's lines, streamed as before.
    let orders = lines(dir.path(), &["--topic", "orders"]);
    let shown: Vec<&Value> = orders
        .iter()
        .filter(|l| l["type"] == "partition" || l["type"] == "finding")
        .collect();
    assert!(!shown.is_empty());
    assert!(
        shown.iter().all(|l| l["data"]["topic"] == "orders"),
        "{shown:#?}"
    );
}

/// The pipeline's callback sees each partition once, before the cluster checks: the
/// hanging transaction it is handed has neither the coordinator's verdict nor its root
/// cause yet; the finished report's has both.
#[test]
fn pipeline_hands_over_partitions_before_the_cluster_checks() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    let mut seen: Vec<(String, i32)> = Vec::new();
    let mut early_hanging = Vec::new();
    let report = pipeline::scan_streaming(
        &[dir.path().to_path_buf()],
        &ScanOptions::default(),
        &mut |p, fs| {
            seen.push((p.topic.clone(), p.partition));
            early_hanging.extend(
                fs.iter()
                    .filter(|f| f.kind == Kind::HangingTransaction)
                    .cloned(),
            );
        },
    );
    let all: Vec<(String, i32)> = report
        .partitions
        .iter()
        .map(|p| (p.topic.clone(), p.partition))
        .collect();
    assert_eq!(seen, all);
    assert_eq!(early_hanging.len(), 1);
    assert!(early_hanging[0].caused_by.is_empty());
    assert!(early_hanging[0].evidence.get("coordinator").is_none());
    let last = report
        .findings
        .iter()
        .find(|f| f.kind == Kind::HangingTransaction)
        .unwrap();
    assert!(!last.caused_by.is_empty() && last.evidence.get("coordinator").is_some());
    // Without a callback the report is the same.
    let plain = pipeline::scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    assert_eq!(
        serde_json::to_value(&plain.findings).unwrap(),
        serde_json::to_value(&report.findings).unwrap()
    );
}

/// From an archive, streamed lines name the archive's paths (`x.tar!/…`), never the
/// temporary directory, and hold the same findings as the JSON report.
#[test]
fn jsonl_from_an_archive_names_the_archive() {
    let sample = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("broker1.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&path).unwrap());
    b.append_dir_all("broker-1", sample.join("broker-1"))
        .unwrap();
    b.finish().unwrap();
    drop(b);
    let (_, text) = run(&path, &["--format", "jsonl"]);
    assert!(
        !text.contains("klogscan-"),
        "a temporary path leaked: {text}"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["data"]["inputs"][0],
        format!("{}!", path.display())
    );
    let p3 = lines
        .iter()
        .find(|l| l["type"] == "partition" && l["data"]["topic"] == "payments")
        .unwrap();
    assert_eq!(
        p3["data"]["path"],
        format!("{}!/broker-1/payments-3", path.display())
    );
    let (_, json) = run(&path, &["--format", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let streamed: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "finding")
        .map(|l| &l["data"])
        .collect();
    let mut want: Vec<&Value> = doc["findings"].as_array().unwrap().iter().collect();
    let mut got = streamed.clone();
    let key = |v: &&Value| v["id"].as_str().unwrap().to_string();
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert!(!got.is_empty());
    assert_eq!(got, want);
}
