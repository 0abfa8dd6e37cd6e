//! Inputs (issue 10): a path that is not Kafka data is an input error — a message on
//! stderr naming the path and why, exit 2 whatever `--fail-on` says — and diagnostics
//! never go to stdout.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::discover::layout::{classify_input_file, discover};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::{Path, PathBuf};

fn run(cmd: &str, paths: &[&Path], extra: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .arg(cmd)
        .args(paths)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A healthy broker dir (exit 0 on its own).
fn healthy(dir: &Path) -> PathBuf {
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(3));
    let ld = dir.join("broker");
    LogDirBuilder::new(1).partition(p).write(&ld).unwrap();
    ld
}

#[test]
fn file_names_that_are_not_kafka_data() {
    for ok in [
        "00000000000000000000.log",
        "00000000000000000042.index",
        "00000000000000000042.timeindex",
        "00000000000000000042.txnindex",
        "00000000000000000042.snapshot",
        "00000000000000000100-0000000001.checkpoint",
        "leader-epoch-checkpoint",
        "partition.metadata",
        "meta.properties",
        "recovery-point-offset-checkpoint",
        "00000000000000000000.log.deleted",
        "00000000000000000000.log.swap",
    ] {
        assert_eq!(classify_input_file(Path::new(ok)), Ok(()), "{ok}");
    }
    for (bad, why) in [
        ("/etc/passwd", "not a Kafka file name"),
        ("random.bin", "not a Kafka file name"),
        ("notes.txt.deleted", "not a Kafka file name"),
        ("broker1.tgz", "an archive"),
        ("broker1.tar.gz", "an archive"),
        ("logs.zip", "an archive"),
    ] {
        let e = classify_input_file(Path::new(bad)).unwrap_err();
        assert!(e.starts_with("not Kafka data: "), "{bad}: {e}");
        assert!(e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn a_non_kafka_file_is_an_input_error_not_a_partition() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("random.bin");
    std::fs::write(&bin, [0x5a; 300]).unwrap();
    let inv = discover(std::slice::from_ref(&bin));
    assert!(inv.partitions.is_empty(), "no `--1` partition");
    assert_eq!(inv.input_errors.len(), 1);
    let (code, out, err) = run("scan", &[&bin], &["--format", "json"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains(&format!("{}: not Kafka data", bin.display())),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["partitions"], serde_json::json!([]));
    assert_eq!(
        v["findings"],
        serde_json::json!([]),
        "input errors are not findings"
    );
    assert_eq!(v["errors"][0]["path"], bin.display().to_string());
    // A tarball says what it is.
    let tgz = dir.path().join("broker1.tgz");
    std::fs::write(&tgz, [0x1f, 0x8b, 8, 0]).unwrap();
    let (code, out, err) = run("scan", &[&tgz], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("an archive"), "{err}");
    assert!(!out.contains("broker1.tgz"), "{out}");
}

#[test]
fn any_failed_input_exits_2_whatever_fail_on_says() {
    let dir = tempfile::tempdir().unwrap();
    let ld = healthy(dir.path());
    let missing = dir.path().join("nonexistent");
    // Alone, the healthy dir is clean.
    let (code, _, err) = run("scan", &[&ld], &["--fail-on", "never"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    for cmd in ["scan", "verify", "producers", "txns"] {
        let (code, out, err) = run(cmd, &[&missing, &ld], &["--fail-on", "never"]);
        assert_eq!(code, Some(2), "{cmd}");
        assert!(err.contains(&missing.display().to_string()), "{cmd}: {err}");
        assert!(
            !out.contains("nonexistent"),
            "{cmd}: diagnostics on stdout: {out}"
        );
        // The healthy input is still reported.
        assert!(out.contains("orders"), "{cmd}: {out}");
    }
}

#[test]
fn a_directory_without_kafka_data_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("docs");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "hello").unwrap();
    let ld = healthy(dir.path());
    let inv = discover(&[empty.clone(), ld.clone()]);
    assert_eq!(inv.input_errors.len(), 1);
    assert!(
        inv.input_errors[0]
            .1
            .contains("no partition directory or broker log dir")
    );
    // Negative: the same data reached twice (a dir and its parent) is no error.
    let inv = discover(&[ld.join("orders-0"), ld.clone()]);
    assert!(inv.errors.is_empty(), "{:?}", inv.errors);
    let inv = discover(&[ld.clone(), ld.join("orders-0")]);
    assert!(inv.errors.is_empty(), "{:?}", inv.errors);
    let (code, _, err) = run("scan", &[&empty], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("docs: not Kafka data"), "{err}");
    // A single Kafka file given directly is fine.
    let seg = ld.join("orders-0/00000000000000000000.log");
    let (code, _, err) = run("scan", &[&seg], &[]);
    assert_eq!(code, Some(0), "{err}");
}
