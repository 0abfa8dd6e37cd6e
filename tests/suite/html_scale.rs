//! The HTML report over thousands of partitions stays readable and small: only the partitions
//! with findings are expanded (a timeline and a findings table); the clean ones are rows
//! of one collapsed table.

use assert_cmd::Command;
use std::path::PathBuf;

#[test]
fn thousands_of_partitions_only_the_ones_with_findings_expanded() {
    let dir = tempfile::tempdir().unwrap();
    // 2 000 keeps the test quick on a loaded machine; the output is linear in n (10 000
    // clean partitions: 1.3 MB, measured by hand).
    let n = 2_000;
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
    let clean = std::fs::read(sample.join("codec-none-0/00000000000000000000.log")).unwrap();
    for i in 0..n {
        let d = dir.path().join(format!("events-{i}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("00000000000000000000.log"), &clean).unwrap();
    }
    // One partition with findings: the sample's payments-3 (the KAFKA-9144 zombie).
    let p3 = dir.path().join("payments-3");
    std::fs::create_dir(&p3).unwrap();
    for e in std::fs::read_dir(sample.join("payments-3")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), p3.join(e.file_name())).unwrap();
    }

    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["scan", "--format", "html"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let html = String::from_utf8(out.stdout).unwrap();
    assert_eq!(html.matches("<svg").count(), 1, "one timeline");
    assert_eq!(html.matches("<section class=\"partition\"").count(), 1);
    assert!(html.contains(&format!("{n} partitions without findings</summary>")));
    let details = html.find("<details>").unwrap();
    let first_clean_row = html.find("<td>events-0</td>").unwrap();
    assert!(details < first_clean_row, "clean partitions are collapsed");
    assert!(
        html.len() < 400 * n as usize,
        "{} bytes for {n} partitions",
        html.len()
    );
}
