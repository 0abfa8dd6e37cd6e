//! Honest empty results: a filter that matches nothing is exit 0 and says so; no partition
//! at all is exit 2 with the reason on stderr and nothing on stdout; a clean text report
//! says there is no incident; `--findings-only` with nothing to show prints one line;
//! `producers` lists only partitions with producer ids.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::testkit::{Batch, PartitionBuilder, Producer};

fn run(args: &[&str], dir: &std::path::Path) -> (i32, String, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
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

/// `orders-0` with an idempotent producer 7, `plain-0` with plain batches only: clean.
fn data() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    p.write(d.path()).unwrap();
    let mut q = PartitionBuilder::new("plain", 0);
    q.append(Batch::new(Producer::PLAIN).values(["a"]));
    q.write(d.path()).unwrap();
    d
}

#[test]
fn a_filter_matching_nothing_exits_0_and_says_so() {
    let d = data();
    for filter in [["--producer-id", "999999"], ["--topic", "nosuch"]] {
        for cmd in ["scan", "producers", "txns", "verify"] {
            if cmd == "verify" && filter[0] == "--producer-id" {
                // verify shows every partition the topic filters select; producer ids
                // select its findings.
                continue;
            }
            let (code, out, err) = run(&[cmd, filter[0], filter[1]], d.path());
            assert_eq!(code, 0, "{cmd} {filter:?}: {out}{err}");
            assert!(
                out.starts_with("nothing matches the filters: 2 partitions"),
                "{cmd}: {out}"
            );
            assert_eq!(out.lines().count(), 1, "{cmd}: {out}");
            assert!(!err.contains("no partition found"), "{cmd}: {err}");
        }
    }
    // JSON says how many partitions were analysed.
    let (code, out, _) = run(&["scan", "--format", "json", "--topic", "nosuch"], d.path());
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["analysed"], 2);
    assert_eq!(v["summary"]["partitions"], 0);
}

#[test]
fn no_partition_at_all_exits_2_with_the_reason_and_no_empty_table() {
    let d = tempfile::tempdir().unwrap();
    for cmd in ["scan", "producers", "txns", "verify"] {
        let (code, out, err) = run(&[cmd], d.path());
        assert_eq!(code, 2, "{cmd}");
        assert!(out.is_empty(), "{cmd} printed {out}");
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.contains("not Kafka data"),
            "{cmd}: the reason first: {err}"
        );
        assert!(err.contains("no partition found"), "{cmd}: {err}");
    }
}

#[test]
fn clean_text_says_there_is_no_incident_and_findings_only_prints_one_line() {
    let d = data();
    let (code, out, _) = run(&["scan"], d.path());
    assert_eq!(code, 0);
    assert!(out.trim_end().ends_with("no incident: no finding"), "{out}");
    let (code, out, _) = run(&["scan", "--findings-only"], d.path());
    assert_eq!(code, 0);
    assert_eq!(out, "no finding to show\n");
}

#[test]
fn producers_lists_only_partitions_with_producer_ids() {
    let d = data();
    let (code, out, _) = run(&["producers"], d.path());
    assert_eq!(code, 0);
    assert!(out.contains("orders-0"), "{out}");
    assert!(!out.contains("plain-0"), "{out}");
    assert!(
        out.trim_end()
            .ends_with("1 partition without producer ids not listed"),
        "{out}"
    );
}
