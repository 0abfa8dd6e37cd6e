//! `txns --cluster` honours every value of the repeatable filters (`--transactional-id`,
//! `--producer-id`, `--topic`), not only the first, in JSON and in the table; finding
//! filters, which have no transaction to act on, are refused.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::report::table::LARGE_TABLE_ROWS;
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use std::path::Path;

const A: Tp = ("orders", 0);
const C: Tp = ("payments", 0);
const D: Tp = ("audit", 0);

/// Three transactional ids, one producer each: app (10) on orders-0, billing (20) on
/// payments-0, audit (30) on audit-0 and payments-0.
fn cluster(dir: &Path) {
    let mut c = Cluster::new(Some("c1")).coordinator(0);
    c.run(&Txn::new("app", Producer::transactional(10, 0), &[A]));
    c.run(&Txn::new("billing", Producer::transactional(20, 0), &[C]));
    c.run(&Txn::new("audit", Producer::transactional(30, 0), &[D, C]));
    c.write(dir, 1).unwrap();
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["txns", "--cluster"])
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The transactional ids listed, sorted.
fn ids(dir: &Path, args: &[&str]) -> Vec<String> {
    let mut a = vec!["--format", "json"];
    a.extend_from_slice(args);
    let (code, out, err) = run(dir, &a);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut ids: Vec<String> = v["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["transactional_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn every_value_of_the_repeatable_filters_counts() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    assert_eq!(ids(dir.path(), &[]), ["app", "audit", "billing"]);
    let two = [
        &["--transactional-id", "app", "--transactional-id", "audit"][..],
        &["--producer-id", "10,30"][..],
        &["--producer-id", "10", "--producer-id", "30"][..],
        &["--topic", "orders,audit"][..],
        &["--topic", "orders-0", "--topic", "aud*"][..],
    ];
    for args in two {
        assert_eq!(ids(dir.path(), args), ["app", "audit"], "{args:?}");
    }
    // Different filters still combine with AND.
    assert_eq!(
        ids(
            dir.path(),
            &["--producer-id", "10,30", "--topic", "payments"]
        ),
        ["audit"]
    );
    // The table lists the same rows.
    let (_, table, _) = run(
        dir.path(),
        &["--transactional-id", "app", "--transactional-id", "billing"],
    );
    assert!(
        table.contains("app") && table.contains("billing"),
        "{table}"
    );
    assert!(!table.contains("audit"), "{table}");
    assert!(table.contains("2 cluster transaction(s)"), "{table}");
}

#[test]
fn unknown_values_select_nothing_and_finding_filters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    cluster(dir.path());
    assert!(ids(dir.path(), &["--producer-id", "99,98"]).is_empty());
    assert!(ids(dir.path(), &["--transactional-id", "nobody"]).is_empty());
    assert!(ids(dir.path(), &["--topic", "nothing-*"]).is_empty());
    for args in [
        &["--since", "0"][..],
        &["--offsets", "0..5"][..],
        &["--min-severity", "error"][..],
    ] {
        let (code, out, err) = run(dir.path(), args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert!(err.contains("use --from/--to"), "{err}");
    }
}

/// Over `LARGE_TABLE_ROWS` cluster transactions the table comes in blocks and stderr
/// suggests JSON; the JSON document holds every transaction and says nothing on stderr.
#[test]
fn a_large_cluster_table_is_printed_in_blocks_and_suggests_json() {
    let dir = tempfile::tempdir().unwrap();
    let n = LARGE_TABLE_ROWS as i64 + 3;
    let mut p = PartitionBuilder::new("orders", 0);
    for i in 0..n {
        let pr = Producer::transactional(1_000 + i, 0);
        p.append(Batch::new(pr).records(1));
        p.commit(pr, 0);
    }
    p.write(dir.path()).unwrap();
    let (code, table, err) = run(dir.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("{n} rows")) && err.contains("--format json"),
        "{err}"
    );
    assert_eq!(table.matches("outcome").count(), 2, "two blocks");
    assert!(table.contains(&format!("{n} cluster transaction(s)")));
    let (code, json, err) = run(dir.path(), &["--format", "json"]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["transactions"].as_array().map(Vec::len), Some(n as usize));
    // A small table: one block, quiet.
    let small = tempfile::tempdir().unwrap();
    cluster(small.path());
    let (_, table, err) = run(small.path(), &[]);
    assert_eq!(table.matches("outcome").count(), 1);
    assert!(err.is_empty(), "{err}");
}
