//! One broker holding a topic-partition in two of its log dirs: `LogManager.loadLog`
//! throws `IllegalStateException` ("Duplicate log directories for … are found in both …")
//! and the broker does not start — unless (KRaft) one copy is a stray replica
//! (`LogManager.isStrayKraftReplica`: another topic id, or none), renamed aside first.
//! Two log dirs of one broker are told from two captures of one log dir by their
//! `meta.properties`' `directory.id`s.

use klogscan::finding::{Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::testkit::files::{LogDirBuilder, PartitionFileOptions, topic_id_for, uuid_text};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
use std::path::Path;

const CLUSTER: &str = "MkU3OEVBNTcwNTJENDM2Qg";

/// The `meta.properties` of a log dir: v1 (KRaft, `node.id`) or v0 (`broker.id`), with
/// `directory.id` when given.
fn meta(version: u8, node: i32, dir_id: Option<&str>) -> String {
    let id = if version == 1 { "node.id" } else { "broker.id" };
    let mut s = format!("version={version}\n{id}={node}\ncluster.id={CLUSTER}\n");
    if let Some(d) = dir_id {
        s.push_str(&format!("directory.id={d}\n"));
    }
    s
}

/// orders-0 with `records` single-record batches and topic id `topic_id`.
fn orders(records: usize, topic_id: [u8; 16]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).broker_files(PartitionFileOptions {
        topic_id: Some(topic_id),
        ..Default::default()
    });
    for _ in 0..records {
        p.append(Batch::new(Producer::PLAIN).records(1));
    }
    p
}

/// Log dirs `d1`, `d2` under `root` of node `nodes.0` / `nodes.1`, each with orders-0
/// (the second one record longer), `meta.properties` of `version` with the given ids.
fn write(
    root: &Path,
    version: u8,
    nodes: (i32, i32),
    dir_ids: (Option<&str>, Option<&str>),
    topic_ids: ([u8; 16], [u8; 16]),
) {
    for (name, node, dir_id, topic_id, n) in [
        ("d1", nodes.0, dir_ids.0, topic_ids.0, 3),
        ("d2", nodes.1, dir_ids.1, topic_ids.1, 4),
    ] {
        let d = root.join(name);
        LogDirBuilder::new(node)
            .cluster_id(CLUSTER)
            .partition(orders(n, topic_id))
            .write(&d)
            .unwrap();
        std::fs::write(d.join("meta.properties"), meta(version, node, dir_id)).unwrap();
    }
}

fn duplicates(root: &Path) -> Vec<klogscan::Finding> {
    let a = request::run(&Request::new([root])).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 2);
    a.report
        .findings
        .into_iter()
        .filter(|f| f.kind == Kind::DuplicateLogDirectories)
        .collect()
}

fn ids() -> (String, String) {
    (
        uuid_text(&topic_id_for("log dir one")),
        uuid_text(&topic_id_for("log dir two")),
    )
}

/// KRaft, both copies of the same topic id in two log dirs (distinct directory ids) of
/// node 1: the start fails. One finding, on the first copy, naming both; the copy with the
/// higher log end is the one to keep.
#[test]
fn one_broker_with_a_partition_in_two_log_dirs_does_not_start() {
    let d = tempfile::tempdir().unwrap();
    let (x, y) = ids();
    let t = topic_id_for("orders");
    write(d.path(), 1, (1, 1), (Some(&x), Some(&y)), (t, t));
    let f = duplicates(d.path());
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = &f[0];
    assert_eq!((f.severity, f.partition), (Severity::Error, 0));
    assert!(f.message.contains("IllegalStateException"), "{}", f.message);
    assert_eq!(f.evidence["broker"], 1);
    assert_eq!(f.evidence["kraft"], true);
    assert_eq!(f.evidence["topic_id"], uuid_text(&t));
    let dirs: Vec<_> = f.evidence["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["directory_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(dirs, [x, y]);
    assert!(f.evidence["assumes"].as_str().unwrap().contains("-stray"));
    // The copy of d2 holds one record more: the one to keep.
    let keep = d.path().join("d2").join("orders-0");
    let fix = f.remediation.as_deref().unwrap_or_default();
    assert!(fix.contains(&keep.display().to_string()), "{fix}");
}

/// ZooKeeper-era (v0) log dirs check no log for strays: even of different topic ids, the
/// two copies fail the start.
#[test]
fn a_zookeeper_era_broker_fails_whatever_the_topic_ids() {
    let d = tempfile::tempdir().unwrap();
    let (x, y) = ids();
    let (t, u) = (topic_id_for("orders"), topic_id_for("orders again"));
    write(d.path(), 0, (2, 2), (Some(&x), Some(&y)), (t, u));
    let f = duplicates(d.path());
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].evidence["kraft"], false);
    assert_eq!(f[0].evidence["broker"], 2);
}

/// The negatives: nothing proves two log dirs of one broker, or the broker starts.
#[test]
fn captures_other_brokers_and_stray_incarnations_are_no_duplicate() {
    let (x, y) = ids();
    let t = topic_id_for("orders");
    let none = |version, nodes, dir_ids: (Option<&str>, Option<&str>), topic_ids| {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), version, nodes, dir_ids, topic_ids);
        let f = duplicates(d.path());
        assert!(f.is_empty(), "{dir_ids:?} {nodes:?}: {f:#?}");
    };
    // One log dir captured twice (the same directory id).
    none(1, (1, 1), (Some(&x), Some(&x)), (t, t));
    // No directory ids (before 3.7): nothing tells the readings apart.
    none(1, (1, 1), (None, None), (t, t));
    none(0, (1, 1), (Some(&x), None), (t, t));
    // Two brokers: replicas.
    none(1, (1, 2), (Some(&x), Some(&y)), (t, t));
    // KRaft, another topic id: one copy is a stray replica, renamed aside.
    none(
        1,
        (1, 1),
        (Some(&x), Some(&y)),
        (t, topic_id_for("orders again")),
    );
}

/// The bundle of the broker's two log dirs carries their directory ids: the merge gives
/// the scan's report, the finding included.
#[test]
fn the_merge_of_the_brokers_bundle_says_the_same() {
    let data = tempfile::tempdir().unwrap();
    let (x, y) = ids();
    let t = topic_id_for("orders");
    write(data.path(), 1, (1, 1), (Some(&x), Some(&y)), (t, t));
    let dirs = [data.path().join("d1"), data.path().join("d2")];
    let opts = klogscan::partition::scan::ScanOptions::default();
    let scanned = klogscan::pipeline::scan(&dirs, &opts);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("b1.klb");
    let w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    klogscan::bundle::collect(&dirs, &opts, w).unwrap();
    let merged = klogscan::bundle::merge(&[file], &opts).unwrap().report;
    let found = |r: &klogscan::results::ScanReport| {
        r.findings
            .iter()
            .filter(|f| f.kind == Kind::DuplicateLogDirectories)
            .count()
    };
    assert_eq!((found(&scanned), found(&merged)), (1, 1));
    assert_eq!(crate::common::json(scanned), crate::common::json(merged));
}

/// Rename `from` (a partition directory under `root`) to `name` in the log dir `to`.
fn move_to(root: &Path, from: &str, to: &str, name: &str) {
    std::fs::rename(root.join(from), root.join(to).join(name)).unwrap();
}

const FUTURE_A: &str = "orders-0.0c7e3a1e2f5b4d6c8a9b1c2d3e4f5a6b-future";
const FUTURE_B: &str = "orders-0.9f8e7d6c5b4a39281706f5e4d3c2b1a0-future";

/// `LogManager.loadLog` keeps one future log per topic-partition too, and throws for a
/// second ("Duplicate log directories found: …"): two `-future` copies of one topic id —
/// in two log dirs of node 1, or in one log dir (each name has its own unique id: one
/// listing holds both at once) — fail the start. The finding says they are future copies
/// and that the current replica is untouched.
#[test]
fn two_future_copies_of_a_partition_fail_the_start() {
    let (x, y) = ids();
    let t = topic_id_for("orders");
    // Two log dirs.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), 1, (1, 1), (Some(&x), Some(&y)), (t, t));
    move_to(d.path(), "d1/orders-0", "d1", FUTURE_A);
    move_to(d.path(), "d2/orders-0", "d2", FUTURE_B);
    let f = duplicates(d.path());
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].evidence["future_copies"], true);
    assert!(
        f[0].message.contains("two -future copies of orders-0"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].message.contains("Duplicate log directories found"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].message.contains(&format!("directory ids {x} and {y}")),
        "{}",
        f[0].message
    );
    let fix = f[0].remediation.as_deref().unwrap_or_default();
    assert!(fix.contains("resumes the move"), "{fix}");
    // One log dir.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), 1, (1, 1), (Some(&x), Some(&y)), (t, t));
    move_to(d.path(), "d1/orders-0", "d1", FUTURE_A);
    move_to(d.path(), "d2/orders-0", "d1", FUTURE_B);
    let f = duplicates(d.path());
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(
        f[0].message
            .contains(&format!("in one log dir, directory id {x}")),
        "{}",
        f[0].message
    );
}

/// The negatives: a current copy and a future one (a move in progress) are what the
/// broker loads side by side; KRaft future copies of different topic ids are a stray and
/// an incarnation; future copies in two log dirs without distinct directory ids may be
/// captures of one.
#[test]
fn a_move_in_progress_and_unproven_future_copies_are_no_duplicate() {
    let (x, y) = ids();
    let t = topic_id_for("orders");
    let d = tempfile::tempdir().unwrap();
    write(d.path(), 1, (1, 1), (Some(&x), Some(&y)), (t, t));
    move_to(d.path(), "d2/orders-0", "d2", FUTURE_B);
    assert!(duplicates(d.path()).is_empty());
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        1,
        (1, 1),
        (Some(&x), Some(&y)),
        (t, topic_id_for("orders again")),
    );
    move_to(d.path(), "d1/orders-0", "d1", FUTURE_A);
    move_to(d.path(), "d2/orders-0", "d2", FUTURE_B);
    assert!(duplicates(d.path()).is_empty());
    let d = tempfile::tempdir().unwrap();
    write(d.path(), 1, (1, 1), (Some(&x), Some(&x)), (t, t));
    move_to(d.path(), "d1/orders-0", "d1", FUTURE_A);
    move_to(d.path(), "d2/orders-0", "d2", FUTURE_B);
    assert!(duplicates(d.path()).is_empty());
}

/// `LocalLog.parseTopicPartitionName` reads the partition with `Integer.parseInt`:
/// `orders-0` and `orders-00` (or `orders-+0`) in one log dir are two directories of
/// orders-0, and `LogManager.loadLog` throws for the second as for a copy in another log
/// dir ("Duplicate log directories for …"). One listing holds both: no capture of another
/// log dir, so no directory ids are needed. Twins: `orders-x0` (no partition's name) and a
/// KRaft copy of another topic id (a stray replica, renamed aside) are no duplicate.
#[test]
fn two_names_of_one_partition_in_one_log_dir_fail_the_start() {
    for (second, version, other_id, fails) in [
        ("orders-00", 0, false, true),
        ("orders-+0", 1, false, true),
        ("orders-x0", 0, false, false),
        ("orders-00", 1, true, false),
    ] {
        let d = tempfile::tempdir().unwrap();
        let ld = d.path().join("d1");
        LogDirBuilder::new(1)
            .cluster_id(CLUSTER)
            .partition(orders(3, topic_id_for("orders")))
            .write(&ld)
            .unwrap();
        let moved = tempfile::tempdir().unwrap();
        let id = topic_id_for(if other_id {
            "another incarnation"
        } else {
            "orders"
        });
        LogDirBuilder::new(1)
            .cluster_id(CLUSTER)
            .partition(orders(4, id))
            .write(moved.path())
            .unwrap();
        std::fs::rename(moved.path().join("orders-0"), ld.join(second)).unwrap();
        std::fs::write(ld.join("meta.properties"), meta(version, 1, None)).unwrap();
        let f = duplicates(d.path());
        assert_eq!(f.len(), usize::from(fails), "{second} v{version}: {f:#?}");
        if fails {
            assert!(
                f[0].message.contains("two directories of orders-0"),
                "{}",
                f[0].message
            );
            assert!(
                f[0].message.contains("IllegalStateException"),
                "{}",
                f[0].message
            );
        }
    }
}
