//! `--transactional-id` (issue 14 item 2): the producer ids a transactional id maps to in
//! `__transaction_state` select the findings shown; the analysis (and so every finding's
//! id and coordinator verdict) is the same with and without the filter.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use serde_json::Value;

fn scan(dir: &std::path::Path, extra: &[&str]) -> (i32, Value, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["scan", "--format", "json"])
        .args(extra)
        .arg(dir)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), v, err)
}

fn producers(v: &Value) -> Vec<i64> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["producer_id"].as_i64())
        .collect()
}

#[test]
fn transactional_id_selects_its_producers() {
    let dir = tempfile::tempdir().unwrap();
    // Two transactional producers leave transactions open; 20 minutes of traffic follow.
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::transactional(900, 1)).records(2));
    p.append(Batch::new(Producer::transactional(901, 4)).records(2));
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p.write(dir.path()).unwrap();
    let mut t = PartitionBuilder::new("__transaction_state", 7);
    for (id, pid, epoch) in [("app-1", 900, 1), ("app-2", 901, 4)] {
        let v = TxnValue::new(pid, epoch, state::COMPLETE_COMMIT).times(1, 1);
        t.append(Batch::new(Producer::PLAIN).record(Rec::kv(key(id), v.encode())));
    }
    t.write(dir.path()).unwrap();

    let (_, all, _) = scan(dir.path(), &[]);
    let mut both = producers(&all);
    both.sort();
    both.dedup();
    assert_eq!(both, [900, 901], "{}", all["findings"]);
    let (code, one, err) = scan(dir.path(), &["--transactional-id", "app-1"]);
    assert_eq!(code, 1, "{err}");
    assert!(!producers(&one).is_empty());
    assert!(
        producers(&one).iter().all(|p| *p == 900),
        "{}",
        one["findings"]
    );
    // The shown findings are the analysis' findings, unchanged.
    for f in one["findings"].as_array().unwrap() {
        assert!(all["findings"].as_array().unwrap().contains(f), "{f}");
    }
    // The same selection by producer id.
    let (_, by_pid, _) = scan(dir.path(), &["--producer-id", "900"]);
    assert_eq!(by_pid["findings"], one["findings"]);
    // An id the coordinator does not know is an error, not an empty report.
    let (code, _, err) = scan(dir.path(), &["--transactional-id", "nobody"]);
    assert_eq!(code, 2);
    assert!(err.contains("\"nobody\""), "{err}");
}

/// `--transactional-id` resolves through the directories the analysis reads: with
/// `--follow`, a `__transaction_state` partition reached through a symbolic link (a log dir
/// laid out with links to other disks) names the id's producer, as the scan reads it; near
/// miss: without `--follow` the scan does not read the link, and the id is an error naming no
/// coordinator log, never resolved from files the analysis skipped.
#[cfg(unix)]
#[test]
fn transactional_id_resolves_through_the_directories_the_scan_follows() {
    let root = tempfile::tempdir().unwrap();
    let (data, other) = (root.path().join("data"), root.path().join("other"));
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::transactional(900, 1)).records(2));
    p.append(Batch::new(Producer::transactional(901, 4)).records(2));
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p.write(&data).unwrap();
    let mut t = PartitionBuilder::new("__transaction_state", 7);
    let v = TxnValue::new(900, 1, state::COMPLETE_COMMIT).times(1, 1);
    t.append(Batch::new(Producer::PLAIN).record(Rec::kv(key("app-1"), v.encode())));
    t.write(&other).unwrap();
    std::os::unix::fs::symlink(
        other.join("__transaction_state-7"),
        data.join("__transaction_state-7"),
    )
    .unwrap();

    let (code, one, err) = scan(&data, &["--follow", "--transactional-id", "app-1"]);
    assert_eq!(code, 1, "{err}");
    assert!(!producers(&one).is_empty(), "{}", one["findings"]);
    assert!(
        producers(&one).iter().all(|p| *p == 900),
        "{}",
        one["findings"]
    );
    let (code, _, err) = scan(&data, &["--transactional-id", "app-1"]);
    assert_eq!(code, 2, "{err}");
}
