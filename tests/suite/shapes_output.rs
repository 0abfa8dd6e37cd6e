//! `producers` on a partition with many producer ids (issue #11): JSON is one streamed
//! document holding every producer; a table over `LARGE_TABLE_ROWS` rows is printed in
//! blocks, and stderr says so and suggests JSON.

use assert_cmd::Command;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::report::{json, table};
use klogscan::testkit::BatchSpec;
use klogscan::testkit::encode::RecordSpec;
use std::io::Write;
use std::path::Path;

/// One partition where each of `n` producer ids writes one idempotent one-record batch.
fn write_many_producers(dir: &Path, n: i64) {
    let part = dir.join("producers-0");
    std::fs::create_dir_all(&part).unwrap();
    let file = std::fs::File::create(part.join("00000000000000000000.log")).unwrap();
    let mut w = std::io::BufWriter::new(file);
    for i in 0..n {
        let spec = BatchSpec {
            base_offset: i,
            partition_leader_epoch: 0,
            base_timestamp: 1_700_000_000_000 + i,
            producer_id: 1_000 + i,
            producer_epoch: 0,
            base_sequence: 0,
            records: vec![RecordSpec {
                value: Some(b"x".to_vec()),
                ..RecordSpec::default()
            }],
            ..BatchSpec::default()
        };
        w.write_all(&spec.encode()).unwrap();
    }
    w.flush().unwrap();
}

fn headers_in(table_text: &str) -> usize {
    table_text.matches("ProducerId").count()
}

#[test]
fn a_producer_table_over_the_limit_is_printed_in_blocks() {
    let n = table::LARGE_TABLE_ROWS as i64 + 7;
    let dir = tempfile::tempdir().unwrap();
    write_many_producers(dir.path(), n);
    let report = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    assert_eq!(report.partitions[0].outcome().producers.len(), n as usize);
    let mut out = Vec::new();
    table::write_producers(&report, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(headers_in(&text), 2, "two blocks: 10 000 rows and 7");
    for pid in [1_000, 1_000 + n - 1] {
        // ASCII borders when not on a terminal (issue 14), UTF-8 on one.
        assert!(
            text.contains(&format!("| {pid} ")) || text.contains(&format!("│ {pid} ")),
            "producer {pid} missing"
        );
    }
    // JSON: one document with every producer, as the replay concluded.
    let mut out = Vec::new();
    json::write_producers(&report, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["klogscan_producers"], 1);
    assert_eq!(
        v["partitions"][0]["producers"],
        serde_json::to_value(&report.partitions[0].outcome().producers).unwrap()
    );
}

#[test]
fn a_small_producer_table_is_one_block_and_quiet() {
    let dir = tempfile::tempdir().unwrap();
    write_many_producers(dir.path(), 30);
    let report = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let mut out = Vec::new();
    table::write_producers(&report, &mut out).unwrap();
    assert_eq!(headers_in(&String::from_utf8(out).unwrap()), 1);
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .arg("producers")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_cli_suggests_json_for_a_large_table_only() {
    let dir = tempfile::tempdir().unwrap();
    write_many_producers(dir.path(), table::LARGE_TABLE_ROWS as i64 + 1);
    let run = |format: &str| {
        Command::cargo_bin("klogscan")
            .unwrap()
            .arg("producers")
            .arg(dir.path())
            .args(["--format", format])
            .output()
            .unwrap()
    };
    let t = run("table");
    assert!(t.status.success());
    let err = String::from_utf8_lossy(&t.stderr);
    assert!(
        err.contains("10001 rows") && err.contains("--format json"),
        "{err}"
    );
    let j = run("json");
    assert!(j.status.success());
    assert!(
        j.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&j.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(
        v["partitions"][0]["producers"].as_array().map(Vec::len),
        Some(table::LARGE_TABLE_ROWS + 1)
    );
}
