//! Tables that say what they show: ASCII header separators with column junctions, a
//! directory not named `topic-N` named by its directory (never `--1`), and `groups` with
//! a cluster column when the same group lives in two clusters, its JSON versioned.

use assert_cmd::Command;
use klogscan::testkit::group_scenarios as sc;
use klogscan::testkit::{Batch, PartitionBuilder, Producer};

fn run(args: &[&str], dir: &std::path::Path) -> String {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn ascii_header_separators_have_column_junctions() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    p.write(d.path()).unwrap();
    let text = run(&["scan"], d.path());
    let top = text.lines().find(|l| l.starts_with("+-")).unwrap();
    let sep = text.lines().find(|l| l.starts_with("+=")).expect(&text);
    // The header line crosses the columns where the top border does.
    let junctions = |l: &str| l.match_indices('+').map(|(i, _)| i).collect::<Vec<_>>();
    assert_eq!(junctions(sep), junctions(top), "{sep}\n{top}");
    assert!(junctions(sep).len() > 2);
}

#[test]
fn a_directory_not_named_topic_n_is_named_by_its_directory() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    let m = p.write(d.path()).unwrap();
    let evidence = d.path().join("evidence");
    std::fs::rename(&m.dir, &evidence).unwrap();
    for cmd in ["scan", "producers", "txns", "verify"] {
        let text = run(&[cmd], &evidence);
        assert!(text.contains("evidence/"), "{cmd}: {text}");
        assert!(!text.contains("--1"), "{cmd}: {text}");
    }
}

#[test]
fn groups_of_two_clusters_get_a_cluster_column_and_the_json_a_version() {
    let d = tempfile::tempdir().unwrap();
    for (dir, cluster) in [("b1", "cluster-one"), ("b2", "cluster-two")] {
        let ld = d.path().join(dir);
        sc::all_types().write(&ld, 4).unwrap();
        std::fs::write(
            ld.join("meta.properties"),
            format!("version=0\nbroker.id=1\ncluster.id={cluster}\n"),
        )
        .unwrap();
    }
    let text = run(&["groups"], d.path());
    let header = text.lines().next().unwrap();
    assert!(header.trim_start().starts_with("CLUSTER"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("consumer-app"))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows[0].contains("cluster-one") && rows[1].contains("cluster-two"),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&run(&["groups", "--format", "json"], d.path())).unwrap();
    assert_eq!(v["klogscan_groups"], 1);
    assert_eq!(v["groups"][0]["cluster_id"], "cluster-one");
    // One cluster: no column.
    let one = run(&["groups"], &d.path().join("b1"));
    assert!(!one.lines().next().unwrap().contains("CLUSTER"), "{one}");
}
