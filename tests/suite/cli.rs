//! The command line: exit codes, the JSON report's contract, no false alarms on healthy
//! real logs, and that nothing under a scanned path is ever written.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn klogscan() -> Command {
    Command::cargo_bin("klogscan").unwrap()
}

fn scan_json(path: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = klogscan()
        .arg("scan")
        .arg(path)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON for {}: {e}\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), v)
}

#[test]
fn report_has_the_documented_shape() {
    let Some(real) = crate::common::real_data() else {
        return;
    };
    // A directory that only holds partition dirs (dumps taken at different times) is no
    // broker's log dir: each partition is its own reference time, so dump03's transaction,
    // open when it was dumped, is open (info), not hanging against the other dumps' clocks.
    let (code, v) = scan_json(&real.join("rebuilt/ableasdale__kafka-transactions"), &[]);
    assert_eq!(code, 0);
    assert_eq!(v["klogscan_report"], 1);
    assert_eq!(v["summary"]["findings"]["error"], 0);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "open_transaction" && f["topic"] == "dump03_transaction4-topic")
    );
    for k in ["inputs", "summary", "partitions", "findings"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    for k in [
        "partitions",
        "segments",
        "batches",
        "records",
        "bytes",
        "findings",
    ] {
        assert!(v["summary"].get(k).is_some(), "summary missing {k}");
    }
    let p = &v["partitions"][0];
    for k in [
        "topic",
        "partition",
        "path",
        "segments",
        "batches",
        "records",
        "control_batches",
        "bytes",
        "log_start_offset",
        "log_end_offset",
        "last_stable_offset",
        "ref_time",
        "transactions",
        "producers",
    ] {
        assert!(p.get(k).is_some(), "partition missing {k}");
    }
    let f = v["findings"]
        .as_array()
        .unwrap()
        .first()
        .expect("dump03 ends in an open transaction: one finding");
    assert_eq!(f["kind"], "open_transaction");
    for k in [
        "id",
        "caused_by",
        "source",
        "kind",
        "severity",
        "topic",
        "partition",
        "offset",
        "position",
        "segment",
        "producer_id",
        "producer_epoch",
        "message",
        "evidence",
        "broker_behaviour",
        "client_error",
        "remediation",
    ] {
        assert!(f.get(k).is_some(), "finding missing {k}");
    }
    // records count control records: dump01 = 5 data records + 1 COMMIT marker.
    let dump01 = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().unwrap().contains("dump01"))
        .unwrap();
    assert_eq!(dump01["records"], 6);
    assert_eq!(dump01["control_batches"], 1);
    assert_eq!(dump01["log_end_offset"], 6);
    assert_eq!(dump01["transactions"]["committed"], 1);
}

#[test]
fn no_false_alarms_on_healthy_real_logs() {
    let Some(real) = crate::common::real_data() else {
        return;
    };
    let (code, v) = scan_json(&real.join("broker"), &[]);
    assert_eq!(code, 0, "{}", v["findings"]);
    assert_eq!(v["summary"]["findings"]["error"], 0, "{}", v["findings"]);
    assert!(v["summary"]["partitions"].as_u64().unwrap() >= 60);
    // Each rebuilt partition on its own: no error (an open transaction there is young).
    for d in std::fs::read_dir(real.join("rebuilt")).unwrap() {
        let d = d.unwrap().path();
        if !d.is_dir() {
            continue;
        }
        for p in std::fs::read_dir(&d).unwrap() {
            let p = p.unwrap().path();
            let (code, v) = scan_json(&p, &[]);
            assert_eq!(code, 0, "{}: {}", p.display(), v["findings"]);
            assert_eq!(v["summary"]["findings"]["error"], 0, "{}", p.display());
        }
    }
}

#[test]
fn exit_codes() {
    let empty = tempfile::tempdir().unwrap();
    klogscan().arg("scan").arg(empty.path()).assert().code(2);
    klogscan()
        .args(["scan", "/nonexistent/klogscan-test"])
        .assert()
        .code(2);
    klogscan()
        .args(["scan", "--hanging-after", "soon", "."])
        .assert()
        .code(2);
    let Some(real) = crate::common::real_data() else {
        return;
    };
    let dump03 = real.join("rebuilt/ableasdale__kafka-transactions/dump03_transaction4-topic-0");
    // An open transaction is info while young…
    klogscan().arg("scan").arg(&dump03).assert().code(0);
    klogscan()
        .arg("scan")
        .arg(&dump03)
        .args(["--fail-on", "info"])
        .assert()
        .code(1);
    // …and hanging (error) a day later.
    let (code, v) = scan_json(&dump03, &["--now", "2030-01-01T00:00:00Z"]);
    assert_eq!(code, 1);
    let kinds: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["hanging_transaction"]);
    let f = &v["findings"][0];
    assert_eq!(f["offset"], 0);
    assert!(
        f["remediation"]
            .as_str()
            .unwrap()
            .contains("--start-offset 0"),
        "{f}"
    );
    klogscan()
        .arg("scan")
        .arg(&dump03)
        .args(["--now", "2030-01-01T00:00:00Z", "--fail-on", "never"])
        .assert()
        .code(0);
}

fn snapshot_tree(root: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    crate::common::files_with_suffix(root, "")
        .into_iter()
        .map(|p| {
            let m = std::fs::metadata(&p).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes, m.modified().unwrap())
        })
        .collect()
}

#[test]
fn scanning_never_writes_to_the_evidence() {
    let Some(real) = crate::common::real_data() else {
        return;
    };
    // Copy a real partition (with indexes and snapshots) into a writable temp dir, so a write
    // would not be masked by read-only permissions.
    let src = real.join("broker/Niloufar1171__LDI-POC");
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&src, tmp.path());
    let before = snapshot_tree(tmp.path());
    std::thread::sleep(std::time::Duration::from_millis(20));
    klogscan().arg("scan").arg(tmp.path()).assert().code(0);
    klogscan()
        .args(["scan", "--deep", "--format", "json"])
        .arg(tmp.path())
        .assert()
        .code(0);
    klogscan()
        .arg("producers")
        .arg(tmp.path())
        .assert()
        .success();
    klogscan().arg("txns").arg(tmp.path()).assert().success();
    let logs = crate::common::files_with_suffix(tmp.path(), ".log");
    klogscan()
        .arg("dump")
        .arg("--deep-iteration")
        .args(&logs)
        .assert()
        .success();
    let after = snapshot_tree(tmp.path());
    assert_eq!(before.len(), after.len(), "files were created or removed");
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.0, a.0);
        assert!(b.1 == a.1, "{} changed", b.0.display());
        assert_eq!(b.2, a.2, "{} mtime changed", b.0.display());
    }
}

fn copy_dir(src: &Path, dst: &Path) {
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

#[test]
fn dump_matches_kafka_dump_log_header_lines() {
    let Some(real) = crate::common::real_data() else {
        return;
    };
    let seg = real.join("rebuilt/ableasdale__kafka-transactions/dump01_transaction-topic-0/00000000000000000000.log");
    let out = klogscan().arg("dump").arg(&seg).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), format!("Dumping {}", seg.display()));
    assert_eq!(lines.next().unwrap(), "Log starting offset: 0");
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("baseOffset: 0 lastOffset: 4 count: 5 ")
    );
}

#[test]
fn producers_and_txns_on_the_sample() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
    let out = klogscan()
        .args(["producers", "--format", "json", "--topic", "payments"])
        .arg(&sample)
        .output()
        .unwrap();
    // producers and txns honour --fail-on (default error): payments-3 holds errors.
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let producers = v["partitions"][0]["producers"].as_array().unwrap();
    let zombie = producers.iter().find(|p| p["producer_id"] == 4001).unwrap();
    assert_eq!(zombie["producer_epoch"], 18);
    assert_eq!(zombie["coordinator_epoch"], 7);
    assert_eq!(zombie["current_txn_first_offset"], 21);
    let table = klogscan()
        .args(["producers", "--topic", "payments"])
        .arg(&sample)
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("CurrentTransactionStartOffset"), "{text}");
    let out = klogscan()
        .args([
            "txns",
            "--format",
            "json",
            "--topic",
            "payments",
            "--fail-on",
            "never",
        ])
        .arg(&sample)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["partitions"][0];
    assert_eq!(
        (
            p["committed"].as_u64(),
            p["aborted"].as_u64(),
            p["open"].as_u64()
        ),
        (Some(3), Some(0), Some(1))
    );
    assert_eq!(p["open_transactions"][0]["first_offset"], 21);
    let empty = tempfile::tempdir().unwrap();
    klogscan().arg("txns").arg(empty.path()).assert().code(2);
}

#[test]
fn a_partition_dir_given_as_dot_keeps_its_name() {
    let p3 = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1/payments-3");
    let out = klogscan()
        .current_dir(&p3)
        .args(["scan", "--format", "json", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the zombie is an error");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partitions"][0]["topic"], "payments");
    assert_eq!(v["partitions"][0]["partition"], 3);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "zombie_write")
    );
}

#[test]
fn bad_times_and_durations_are_usage_errors() {
    for args in [
        ["--now", "2019-11-05T10:00:00+0é00"],
        ["--now", "2019-02-31T10:00:00Z"],
        ["--hanging-after", "-5"],
    ] {
        klogscan().arg("scan").args(args).arg(".").assert().code(2);
    }
}

#[test]
fn dump_max_bytes_cut_is_not_a_problem() {
    let seg = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/broker-1/codec-none-0/00000000000000000000.log");
    let out = klogscan()
        .args(["dump", "--max-bytes", "250"])
        .arg(&seg)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("baseOffset:"))
            .count(),
        2,
        "{text}"
    );
    // A real trailing-garbage file still exits 1.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("00000000000000000000.log");
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes.extend_from_slice(&[
        0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    ]);
    std::fs::write(&bad, &bytes).unwrap();
    klogscan().arg("dump").arg(&bad).assert().code(1);
}
