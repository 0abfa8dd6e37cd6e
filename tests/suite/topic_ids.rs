//! `topic_id_conflict`: partitions of one topic in one broker log dir whose
//! `partition.metadata` files name different topic ids — logs of two incarnations of the
//! topic (deleted and created again while the broker held them). `UnifiedLog.initializeTopicId`
//! keeps each log's id; `ReplicaManager.becomeLeaderOrFollower` answers `INCONSISTENT_TOPIC_ID`
//! for the stale one (ZooKeeper mode), `LogManager.isStrayKraftReplica` renames it (KRaft).

use klogscan::bundle;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::brokers as kb;
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::Path;

/// `events-0..2` and `other-0` written by broker 1, each with its topic's id.
fn log_dir() -> LogDirBuilder {
    let mut b = LogDirBuilder::new(1).cluster_id("c1");
    for (t, n) in [("events", 0), ("events", 1), ("events", 2), ("other", 0)] {
        let mut p = PartitionBuilder::new(t, n);
        p.append(Batch::new(Producer::PLAIN).records(2));
        b = b.partition(p);
    }
    b
}

fn set_id(dir: &Path, partition: &str, seed: &str) {
    let text = format!("version: 0\ntopic_id: {}", uuid_text(&topic_id_for(seed)));
    std::fs::write(dir.join(partition).join("partition.metadata"), text).unwrap();
}

fn conflicts(dir: &Path) -> Vec<Finding> {
    let r = klogscan::pipeline::scan(&[dir.to_path_buf()], &ScanOptions::default());
    (r.findings.into_iter())
        .filter(|f| f.kind == Kind::TopicIdConflict)
        .collect()
}

#[test]
fn partitions_of_two_incarnations_in_one_log_dir_are_reported_once() {
    let d = tempfile::tempdir().unwrap();
    log_dir().write(d.path()).unwrap();
    set_id(d.path(), "events-1", "events-recreated");
    set_id(d.path(), "events-2", "events-recreated");
    let f = conflicts(d.path());
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = &f[0];
    assert_eq!(
        (f.severity, f.topic.as_str(), f.partition),
        (Severity::Warning, "events", 0)
    );
    let ids = f.evidence["topic_ids"].as_array().unwrap();
    assert_eq!(ids.len(), 2);
    let mut parts: Vec<_> = ids.iter().map(|g| g["partitions"].clone()).collect();
    parts.sort_by_key(|p| p.to_string());
    assert_eq!(
        parts,
        vec![serde_json::json!([0]), serde_json::json!([1, 2])]
    );
    assert!(f.message.contains("under 2 topic ids"), "{}", f.message);
    let fix = f.remediation.as_deref().unwrap();
    assert!(fix.contains("--describe --topic events"), "{fix}");
}

#[test]
fn one_id_per_topic_is_silent() {
    let d = tempfile::tempdir().unwrap();
    log_dir().write(d.path()).unwrap();
    assert!(conflicts(d.path()).is_empty());
    // A partition without `partition.metadata` (written before topic ids) is no conflict.
    std::fs::remove_file(d.path().join("events-1/partition.metadata")).unwrap();
    assert!(conflicts(d.path()).is_empty());
}

/// Copies handed over together in a directory holding no broker file may be several
/// brokers' (or clusters'): their ids are not one broker's to compare.
#[test]
fn a_directory_of_handed_over_copies_is_not_judged() {
    let d = tempfile::tempdir().unwrap();
    for (n, seed) in [(0, "events"), (1, "events-recreated")] {
        let mut p = PartitionBuilder::new("events", n);
        p.append(Batch::new(Producer::PLAIN).records(1));
        p.write(d.path()).unwrap();
        set_id(d.path(), &format!("events-{n}"), seed);
    }
    assert!(!d.path().join("meta.properties").exists());
    assert!(conflicts(d.path()).is_empty());
}

/// With the cluster's KRaft metadata log in the inputs its image decides which directory
/// is stray (`leadership::stray`): this rule says nothing there.
#[test]
fn the_metadata_log_leaves_it_to_the_stray_rule() {
    let d = tempfile::tempdir().unwrap();
    kb::stray_replicas(d.path()).unwrap();
    assert!(conflicts(d.path()).is_empty());
}

#[test]
fn merge_of_the_bundle_gives_the_scans_finding() {
    let d = tempfile::tempdir().unwrap();
    log_dir().write(d.path()).unwrap();
    set_id(d.path(), "events-2", "events-recreated");
    let opts = ScanOptions::default();
    let scanned = klogscan::pipeline::scan(&[d.path().to_path_buf()], &opts);
    let out = tempfile::tempdir().unwrap();
    let f = out.path().join("b.klb");
    let w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
    bundle::collect(&[d.path().to_path_buf()], &opts, w).unwrap();
    let merged = bundle::merge(&[f], &opts).unwrap().report;
    let (a, b) = (crate::common::json(scanned), crate::common::json(merged));
    assert!(a.contains("topic_id_conflict"));
    assert_eq!(a, b);
}
