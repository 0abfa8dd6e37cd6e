//! `scan`'s tables over `LARGE_TABLE_ROWS` rows (issue 11): printed in blocks of that many
//! rows, and stderr says so and suggests `--format json`; below it, one table and a quiet
//! stderr.

#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::report::table::LARGE_TABLE_ROWS;
use klogscan::testkit::BatchSpec;
use klogscan::testkit::encode::RecordSpec;
use std::io::Write;
use std::path::Path;

/// One partition where an idempotent producer skips sequence numbers on each of `n`
/// one-record batches: one `sequence_gap` finding per batch after the first.
fn gaps(dir: &Path, n: i64) {
    let part = dir.join("gaps-0");
    std::fs::create_dir_all(&part).unwrap();
    let file = std::fs::File::create(part.join("00000000000000000000.log")).unwrap();
    let mut w = std::io::BufWriter::new(file);
    for i in 0..n {
        let spec = BatchSpec {
            base_offset: i,
            base_timestamp: 1_700_000_000_000 + i,
            producer_id: 77,
            producer_epoch: 0,
            base_sequence: (i * 10) as i32,
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

fn scan(dir: &Path, format: &str) -> (String, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["scan", "--fail-on", "never", "--format", format])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_findings_table_over_the_limit_comes_in_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let n = LARGE_TABLE_ROWS as i64 + 2;
    gaps(dir.path(), n);
    let (json, err) = scan(dir.path(), "json");
    assert!(err.is_empty(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let found = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "sequence_gap")
        .count();
    assert!(found > LARGE_TABLE_ROWS, "{found}");
    let (text, err) = scan(dir.path(), "table");
    assert!(
        err.contains(&format!("{found} rows")) && err.contains("--format json"),
        "{err}"
    );
    // The findings' header once per block: two blocks.
    assert_eq!(text.matches("| kind ").count(), 2, "{}", &text[..2000]);
}

#[test]
fn a_small_findings_table_is_one_block_and_quiet() {
    let dir = tempfile::tempdir().unwrap();
    gaps(dir.path(), 20);
    let (text, err) = scan(dir.path(), "table");
    assert!(err.is_empty(), "{err}");
    assert_eq!(text.matches("| kind ").count(), 1, "{text}");
    assert!(text.contains("sequence_gap"), "{text}");
}
