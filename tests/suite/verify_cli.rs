//! `klogscan verify` through the command line: output shapes and exit codes.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::testkit::{
    Batch, Damage, FaultKind, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer,
    Target,
};

fn klogscan() -> Command {
    Command::cargo_bin("klogscan").unwrap()
}

fn crashed(dir: &std::path::Path) -> i64 {
    let mut p = PartitionBuilder::new("orders", 2).broker_files(
        PartitionFileOptions::default()
            .damage(Damage::StaleSnapshot)
            .damage(Damage::Leftover {
                segment: 0,
                suffix: ".swap".into(),
            }),
    );
    let idem = Producer::idempotent(9, 0);
    p.append(Batch::new(idem).records(4));
    p.roll();
    p.append(Batch::new(idem).records(4));
    p.append(Batch::new(idem).records(4));
    p.fault(Target::LastLog, FaultKind::AppendZeros(64));
    let m = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .partition(p)
        .write(dir)
        .unwrap();
    m.partitions[0].log_end_offset
}

#[test]
fn json_report_predicts_truncation_and_follows_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let leo = crashed(dir.path());
    let out = klogscan()
        .args(["verify", "--format", "json", "--fail-on", "never"])
        .arg(dir.path())
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["klogscan_verify"], 1);
    assert_eq!(v["summary"]["partitions"], 1);
    assert_eq!(v["summary"]["truncated"], 1);
    let p = &v["partitions"][0];
    assert_eq!(p["topic"], "orders");
    assert_eq!(p["partition"], 2);
    let t = &p["prediction"]["truncation"];
    assert_eq!(t["segment"], "00000000000000000004.log");
    assert_eq!(t["offset"], leo);
    assert_eq!(t["bytes_removed"], 64);
    assert_eq!(p["prediction"]["clean_shutdown"], false);
    let kinds: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    for k in [
        "preallocated_tail",
        "snapshot_mismatch",
        "leftover_file",
        "unclean_shutdown",
    ] {
        assert!(kinds.contains(&k), "{k} not in {kinds:?}");
    }
    for f in v["findings"].as_array().unwrap() {
        for key in [
            "kind",
            "severity",
            "topic",
            "partition",
            "offset",
            "position",
            "segment",
            "message",
            "evidence",
            "broker_behaviour",
        ] {
            assert!(f.get(key).is_some(), "{key} missing in {f}");
        }
    }
}

#[test]
fn exit_codes_follow_fail_on() {
    let dir = tempfile::tempdir().unwrap();
    crashed(dir.path());
    // worst finding is a warning (snapshot_mismatch): error threshold passes, warning fails
    klogscan().arg("verify").arg(dir.path()).assert().code(0);
    klogscan()
        .args(["verify", "--fail-on", "warning"])
        .arg(dir.path())
        .assert()
        .code(1);
    let empty = tempfile::tempdir().unwrap();
    klogscan().arg("verify").arg(empty.path()).assert().code(2);
    klogscan()
        .args(["verify", "--broker-version", "x.y"])
        .arg(dir.path())
        .assert()
        .code(2);
}

#[test]
fn table_names_the_truncation_point() {
    let dir = tempfile::tempdir().unwrap();
    let leo = crashed(dir.path());
    let out = klogscan()
        .arg("verify")
        .arg(dir.path())
        .assert()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("TRUNCATE: 00000000000000000004.log at byte"),
        "{text}"
    );
    assert!(
        text.contains(&format!("-> log end offset {leo} (64 bytes removed)")),
        "{text}"
    );
    assert!(text.contains("swap completed at startup"), "{text}");
}

/// A clean two-segment partition with every broker file; returns (log dir, first .log).
fn two_segments(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut p = PartitionBuilder::new("orders", 4).broker_files(PartitionFileOptions::default());
    let idem = Producer::idempotent(7, 0);
    p.append(Batch::new(idem).records(3));
    p.roll();
    p.append(Batch::new(idem).records(3));
    let m = LogDirBuilder::new(1).partition(p).write(dir).unwrap();
    (m.dir.clone(), m.partitions[0].segments[0].1.clone())
}

fn verify_json(path: &std::path::Path) -> (serde_json::Value, String) {
    let out = klogscan()
        .args(["verify", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (v, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_segment_named_alone_is_verified_with_its_whole_partition_directory() {
    let t = tempfile::tempdir().unwrap();
    let (logs, first_log) = two_segments(t.path());
    let (whole, err) = verify_json(&logs);
    assert_eq!(whole["notes"], serde_json::json!([]), "{err}");
    assert!(!err.contains("note:"), "{err}");
    let (named, err) = verify_json(&first_log);
    // The siblings that were not named are read, not reported missing, and the log end
    // offset is the directory's (no checkpoint "above the log end offset").
    let kinds = |v: &serde_json::Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds(&named), kinds(&whole), "{named:#}");
    assert!(!kinds(&named).iter().any(|k| k == "checkpoint_inconsistent"));
    assert!(!kinds(&named).iter().any(|k| k == "index_corrupt"));
    assert_eq!(
        named["partitions"][0]["prediction"]["log_end_offset"],
        whole["partitions"][0]["prediction"]["log_end_offset"]
    );
    assert_eq!(named["partitions"][0]["prediction"]["log_end_offset"], 6);
    assert_eq!(named["notes"].as_array().unwrap().len(), 1, "{named:#}");
    assert!(err.contains("note:") && err.contains("orders-4"), "{err}");
}

#[test]
fn a_lone_segment_outside_a_partition_directory_is_verified_alone() {
    let t = tempfile::tempdir().unwrap();
    let (_, first_log) = two_segments(t.path());
    let loose = t.path().join("loose");
    std::fs::create_dir(&loose).unwrap();
    let copy = loose.join("00000000000000000000.log");
    std::fs::copy(&first_log, &copy).unwrap();
    let (v, err) = verify_json(&copy);
    assert_eq!(v["notes"], serde_json::json!([]), "{err}");
    assert!(!err.contains("note:"), "{err}");
    assert_eq!(v["partitions"].as_array().unwrap().len(), 1);
    // Only the named segment is there: its end is the log end.
    assert_eq!(v["partitions"][0]["prediction"]["log_end_offset"], 3);
}
