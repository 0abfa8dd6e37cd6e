//! `--cluster-id ID=PATH`: evidence copied without `meta.properties` is declared one
//! cluster, so the joins within one cluster run (here the coordinator's confirmation of a
//! hanging transaction from a `__transaction_state` partition on another broker); a
//! `meta.properties` naming another cluster, an unusable path or a malformed value is an
//! input error (exit 2); a bundle collected with it carries the id.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use std::path::{Path, PathBuf};

fn run(args: &[String]) -> (i32, String, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

/// A `__transaction_state` key (version 0) for `id`.
fn key(id: &str) -> Vec<u8> {
    let mut k = 0i16.to_be_bytes().to_vec();
    k.extend_from_slice(&(id.len() as i16).to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

/// A v0 `TransactionLogValue` in state Empty: producer `pid` has no transaction in progress.
fn empty_value(pid: i64) -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&1i16.to_be_bytes());
    v.extend_from_slice(&60_000i32.to_be_bytes());
    v.push(0); // Empty
    v.extend_from_slice(&0i32.to_be_bytes()); // no partitions
    v.extend_from_slice(&1_572_948_000_000i64.to_be_bytes());
    v.extend_from_slice(&(-1i64).to_be_bytes());
    v
}

/// Broker 1 holds `orders-0` with producer 900's transaction open for 20 minutes
/// (hanging); broker 2 holds `__transaction_state-1`, the partition owning transactional
/// id `app` (of 50), where `app` maps to producer 900 with no transaction in progress.
/// Both log dirs are copied without `meta.properties`. Returns (b1, b2).
fn two_brokers(root: &Path, cluster: Option<&str>) -> (PathBuf, PathBuf) {
    let mut orders = PartitionBuilder::new("orders", 0);
    orders.append(Batch::new(Producer::PLAIN).values(["a"]));
    orders.append(Batch::new(Producer::transactional(900, 1)).records(2));
    orders.advance_time(20 * 60_000);
    orders.append(Batch::new(Producer::PLAIN).values(["b"]));
    let mut txn = PartitionBuilder::new("__transaction_state", 1);
    txn.append(Batch::new(Producer::PLAIN).record(Rec::kv(key("app"), empty_value(900))));
    let (b1, b2) = (root.join("b1"), root.join("b2"));
    for (dir, broker, p) in [(&b1, 1, orders), (&b2, 2, txn)] {
        let mut ld = LogDirBuilder::new(broker).partition(p);
        if let Some(c) = cluster {
            ld = ld.cluster_id(c);
        }
        ld.write(dir).unwrap();
        if cluster.is_none() {
            std::fs::remove_file(dir.join("meta.properties")).unwrap();
        }
    }
    (b1, b2)
}

/// The coordinator's verdict on the orders transaction in `scan --format json`'s output.
fn verdict(json: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "hanging_transaction" && f["topic"] == "orders")
        .unwrap_or_else(|| panic!("no hanging transaction: {json}"));
    f["evidence"]["coordinator"]["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_coordinator_join_runs_with_the_given_cluster_id_only() {
    let d = tempfile::tempdir().unwrap();
    let (b1, b2) = two_brokers(d.path(), None);
    let base = args(&["scan", "--format", "json", "--fail-on", "never"]);
    let mut without = base.clone();
    without.extend([s(&b1), s(&b2)]);
    let (code, out, err) = run(&without);
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&out), "unavailable");

    // One id per log dir, or one id for the directory above both.
    let given = [
        vec![
            format!("--cluster-id=lkc-1={}", s(&b1)),
            format!("--cluster-id=lkc-1={}", s(&b2)),
        ],
        vec!["--cluster-id".into(), format!("lkc-1={}", s(d.path()))],
    ];
    for g in given {
        let mut with = base.clone();
        with.extend(g.iter().cloned());
        with.extend([s(&b1), s(&b2)]);
        let (code, out, err) = run(&with);
        assert_eq!(code, 0, "{err}");
        assert_eq!(verdict(&out), "no_transaction_in_progress", "{g:?}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let p = v["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["topic"] == "orders")
            .unwrap();
        assert_eq!(p["source"]["cluster_id"], "lkc-1", "{p}");
    }

    // Two different ids: two clusters, never joined.
    let mut two = base.clone();
    two.extend([
        format!("--cluster-id=lkc-1={}", s(&b1)),
        format!("--cluster-id=lkc-2={}", s(&b2)),
        s(&b1),
        s(&b2),
    ]);
    let (code, out, err) = run(&two);
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&out), "unavailable");
}

#[test]
fn a_conflicting_meta_properties_is_an_input_error() {
    let d = tempfile::tempdir().unwrap();
    let (b1, b2) = two_brokers(d.path(), Some("realcluster"));
    for cmd in ["scan", "verify", "producers", "groups", "consumers"] {
        let (code, out, err) = run(&[
            cmd.into(),
            format!("--cluster-id=other={}", s(&b1)),
            s(&b1),
            s(&b2),
        ]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(out.is_empty(), "{cmd}: {out}");
        assert!(
            err.contains(&s(&b1))
                && err.contains("other")
                && err.contains("cluster.id=realcluster")
                && err.contains("meta.properties"),
            "{cmd}: {err}"
        );
    }
    // The same id as meta.properties is no conflict (and changes nothing).
    let (code, out, err) = run(&[
        "scan".into(),
        "--format=json".into(),
        format!("--cluster-id=realcluster={}", s(&b1)),
        s(&b1),
        s(&b2),
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(verdict(&out), "no_transaction_in_progress");
}

#[test]
fn malformed_or_unusable_values_are_input_errors() {
    let d = tempfile::tempdir().unwrap();
    let (b1, b2) = two_brokers(d.path(), None);
    let elsewhere = tempfile::tempdir().unwrap();
    let cases = [
        ("lkc-1".to_string(), "expected ID=PATH"),
        (format!("={}", s(&b1)), "cluster id before '=' is empty"),
        ("lkc-1=".to_string(), "path after '=' is empty"),
        (format!("lkc 1={}", s(&b1)), "white space"),
        (
            format!("lkc-1={}", s(&d.path().join("nosuch"))),
            "no such directory",
        ),
        (
            format!("lkc-1={}", s(elsewhere.path())),
            "not among the inputs",
        ),
    ];
    for (value, says) in cases {
        let (code, out, err) = run(&[
            "scan".into(),
            "--cluster-id".into(),
            value.clone(),
            s(&b1),
            s(&b2),
        ]);
        assert_eq!(code, 2, "{value}: {err}");
        assert!(out.is_empty(), "{value}: {out}");
        assert!(
            err.contains(says) && err.contains("cluster-id"),
            "{value}: {err}"
        );
    }
    // One path, two ids.
    let (code, _, err) = run(&[
        "scan".into(),
        format!("--cluster-id=a={}", s(&b1)),
        format!("--cluster-id=b={}", s(&b1)),
        s(&b1),
        s(&b2),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("two ids"), "{err}");
}

#[test]
fn a_bundle_collected_with_a_given_id_carries_it() {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (b1, b2) = two_brokers(d.path(), None);
    let mut bundles = Vec::new();
    for (i, dir) in [&b1, &b2].into_iter().enumerate() {
        let f = out.path().join(format!("{i}.klb"));
        let (code, _, err) = run(&[
            "collect".into(),
            format!("--cluster-id=lkc-1={}", s(dir)),
            s(dir),
            "--out".into(),
            s(&f),
        ]);
        assert_eq!(code, 0, "{err}");
        let b = klogscan::bundle::Bundle::read(&f).unwrap();
        assert_eq!(b.header.log_dirs.len(), 1);
        assert_eq!(b.header.log_dirs[0].cluster_id.as_deref(), Some("lkc-1"));
        assert!(b.header.log_dirs[0].cluster_id_given);
        bundles.push(s(&f));
    }
    // A cluster.id read from meta.properties is not marked as given.
    let d2 = tempfile::tempdir().unwrap();
    let (c1, _) = two_brokers(d2.path(), Some("realcluster"));
    let f = out.path().join("read.klb");
    let (code, _, err) = run(&["collect".into(), s(&c1), "--out".into(), s(&f)]);
    assert_eq!(code, 0, "{err}");
    let b = klogscan::bundle::Bundle::read(&f).unwrap();
    assert_eq!(
        b.header.log_dirs[0].cluster_id.as_deref(),
        Some("realcluster")
    );
    assert!(!b.header.log_dirs[0].cluster_id_given);
    // The merge joins the two brokers as one cluster, as the scan with the ids does.
    let mut merge = args(&["merge", "--format", "json", "--fail-on", "never"]);
    merge.extend(bundles.iter().cloned());
    let (code, merged, err) = run(&merge);
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&merged), "no_transaction_in_progress");
    // A merge takes no --cluster-id: the bundles carry it.
    merge.push(format!("--cluster-id=lkc-1={}", s(&b1)));
    let (code, _, err) = run(&merge);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a merge option"), "{err}");
}

/// `collect DIR` (with `--cluster-id ID=DIR` when `id`) into `out`, read back.
fn collect_one(dir: &Path, id: Option<&str>, out: &Path) -> klogscan::bundle::Bundle {
    let mut a = vec!["collect".to_string()];
    a.extend(id.map(|id| format!("--cluster-id={id}={}", s(dir))));
    a.extend([s(dir), "--out".into(), s(out)]);
    let (code, _, err) = run(&a);
    assert_eq!(code, 0, "{err}");
    klogscan::bundle::Bundle::read(out).unwrap()
}

#[test]
fn a_bundle_of_partition_directories_outside_a_log_dir_keeps_the_given_id() {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (b1, b2) = two_brokers(d.path(), None);
    // Only the partition directories, moved out of their log dirs (evidence folders).
    let (p1, p2) = (d.path().join("e1"), d.path().join("e2"));
    for (ld, name, to) in [(&b1, "orders-0", &p1), (&b2, "__transaction_state-1", &p2)] {
        std::fs::create_dir(to).unwrap();
        std::fs::rename(ld.join(name), to.join(name)).unwrap();
    }
    let dirs = [p1.join("orders-0"), p2.join("__transaction_state-1")];
    let (mut given, mut plain) = (Vec::new(), Vec::new());
    for (i, dir) in dirs.iter().enumerate() {
        let f = out.path().join(format!("{i}.klb"));
        let b = collect_one(dir, Some("lkc-1"), &f);
        assert!(b.header.log_dirs.is_empty(), "{:?}", b.header.log_dirs);
        let parts = &b.files.partitions;
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].log_dir, None);
        assert_eq!(parts[0].cluster_id_given.as_deref(), Some("lkc-1"));
        given.push(s(&f));
        // Without the id, a bundle records none.
        let f = out.path().join(format!("plain{i}.klb"));
        let b = collect_one(dir, None, &f);
        assert_eq!(b.files.partitions[0].cluster_id_given, None);
        plain.push(s(&f));
    }
    let merge = |bundles: &[String]| {
        let mut a = args(&["merge", "--format", "json", "--fail-on", "never"]);
        a.extend(bundles.iter().cloned());
        let (code, merged, err) = run(&a);
        assert_eq!(code, 0, "{err}");
        verdict(&merged)
    };
    // The merge joins them as one cluster, as the scan with the ids does; without the
    // ids, nothing proves one cluster and the verdict differs.
    assert_eq!(merge(&given), "no_transaction_in_progress");
    assert_ne!(merge(&plain), "no_transaction_in_progress");
    let mut scan = args(&["scan", "--format", "json", "--fail-on", "never"]);
    scan.push(format!("--cluster-id=lkc-1={}", s(&p1)));
    scan.push(format!("--cluster-id=lkc-1={}", s(&p2)));
    scan.extend([s(&p1), s(&p2)]);
    let (code, scanned, err) = run(&scan);
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&scanned), "no_transaction_in_progress");
}
