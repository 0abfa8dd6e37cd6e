//! Issue 9, "one walk per segment": the cluster checks (coordinator confirmation and
//! rule 31, the cluster-wide transaction join, the group coordinator's load, the replica
//! comparison) consume what each partition's walk kept, and never read a segment again.
//!
//! The proof: scan, delete every `.log` file, then run the cluster checks. They must find
//! exactly what the whole pipeline finds with the files in place; a check that re-read a
//! segment would see nothing (or an unreadable file) and find something else.

use klogscan::cluster::coordinator;
use klogscan::discover::layout::{self, Inventory};
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::Producer;
use klogscan::testkit::files::LogDirBuilder;
use klogscan::testkit::group_scenarios::streams_held_back;
use klogscan::testkit::scenario::{Batch, PartitionBuilder};
use klogscan::testkit::txns::{Cluster, Txn};
use std::path::Path;

/// `orders-0`: `n` plain batches, the batch at `odd` with other values.
fn orders(n: usize, odd: Option<usize>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(3);
    for i in 0..n {
        let v = if Some(i) == odd { "other" } else { "value" };
        p.append(Batch::new(Producer::PLAIN).values([format!("{v}-{i}a"), format!("{v}-{i}b")]));
        if i == 2 {
            p.roll();
        }
    }
    p
}

/// Two brokers of cluster `c1`: diverging copies of `orders-0`; on broker 1 a hanging
/// transaction on `a-0`, a coordinator stuck in PrepareCommit (`__transaction_state-0`) and
/// a streams group held back at the KIP-1331 barrier (`__consumer_offsets-3`).
fn cluster(root: &Path) {
    for (id, odd) in [(1, None), (2, Some(4))] {
        let dir = root.join(format!("broker-{id}"));
        LogDirBuilder::new(id)
            .cluster_id("c1")
            .partition(orders(6, odd))
            .write(&dir)
            .unwrap();
        if id == 1 {
            let mut c = Cluster::new(Some("c1")).coordinator(0);
            let p = c.run(&Txn::new(
                "app",
                Producer::transactional(100, 0),
                &[("a", 0)],
            ));
            c.run(&Txn::new("app", p, &[("a", 0), ("b", 1)]).stuck_in_prepare());
            c.run(&Txn::new("zombie", Producer::transactional(200, 0), &[("a", 0)]).open());
            c.advance(3_600_000);
            c.plain(("b", 1), 1);
            c.write(&dir, id).unwrap();
            streams_held_back("app").write(&dir, 3).unwrap();
        }
    }
}

/// What identifies a finding's content (ids are assigned per report).
fn content(f: &Finding) -> String {
    format!(
        "{} {} {}-{} {:?} {:?} {} {} {:?}",
        f.kind.id(),
        f.severity.as_str(),
        f.topic,
        f.partition,
        f.offset,
        f.source.path,
        f.message,
        f.evidence,
        f.caused_by
    )
}

fn contents(r: &ScanReport) -> Vec<String> {
    r.findings.iter().map(content).collect()
}

fn remove_logs(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            n += remove_logs(&p);
        } else if p.extension().is_some_and(|x| x == "log") {
            std::fs::remove_file(&p).unwrap();
            n += 1;
        }
    }
    n
}

fn inventory(root: &Path) -> Inventory {
    layout::discover(&[root.to_path_buf()])
}

#[test]
fn cluster_checks_read_no_segment_after_the_walk() {
    let tmp = tempfile::tempdir().unwrap();
    cluster(tmp.path());
    let opts = ScanOptions::default();
    let whole = pipeline::analyse(&inventory(tmp.path()), &opts);
    let kinds: Vec<Kind> = whole.findings.iter().map(|f| f.kind).collect();
    // Each cluster check found something, so the comparison below means something.
    for k in [
        Kind::ReplicaDivergence,
        Kind::TransactionStateAnomaly,
        Kind::GroupDeletionUnfinished,
    ] {
        assert!(kinds.contains(&k), "no {k:?} in {kinds:?}");
    }
    let confirmed = whole
        .findings
        .iter()
        .filter(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
        .filter(|f| f.evidence["coordinator"]["transactional_id"].is_string())
        .count();
    assert!(confirmed > 0, "no transaction confirmed by the coordinator");

    // The per-partition stage, then the segments are gone, then the cluster checks.
    let inv = inventory(tmp.path());
    let mut split = klogscan::pipeline::scan_partitions(&inv, &opts);
    assert!(remove_logs(tmp.path()) >= 6);
    pipeline::run_cluster_checks(&mut split, &inv, &opts);
    assert_eq!(contents(&split), contents(&whole));
    assert_eq!(split.summary.findings, whole.summary.findings);
}

#[test]
fn a_coordinator_partition_outside_the_selection_is_read_once_for_both_checks() {
    let tmp = tempfile::tempdir().unwrap();
    cluster(tmp.path());
    let only_a = ScanOptions::default().with_topic("a");
    let inv = inventory(tmp.path());
    let whole = pipeline::analyse(&inv, &only_a);
    assert!(whole.partitions.iter().all(|p| p.topic == "a"));
    let zombie = whole
        .findings
        .iter()
        .find(|f| f.producer_id == Some(200))
        .expect("the open transaction of producer 200");
    assert_eq!(
        zombie.evidence["coordinator"]["transactional_id"], "zombie",
        "{:#}",
        zombie.evidence
    );

    // The scan did not walk __transaction_state-0: one read of it into the coordinator's
    // model, then no file at all for the coordinator's confirmation and the cluster-wide
    // join.
    let mut split = klogscan::pipeline::scan_partitions(&inv, &only_a);
    let loads = coordinator::LeaderCopies::of_release(&inv, &only_a);
    let models = coordinator::cluster::replay_logs(&mut split, &inv, &only_a, &loads);
    let names: Vec<&str> = models
        .iter()
        .map(|m| m.origin.path.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(names, ["__transaction_state-0"]);
    remove_logs(tmp.path());
    coordinator::annotate_models(&mut split, &models, &inv, &only_a);
    coordinator::cluster::check_models(&mut split, models, &inv, &only_a);
    for (_, check) in pipeline::cluster_checks() {
        let extra = check(&split, &inv, &only_a, &[]);
        split.add_partition_findings(extra);
    }
    assert_eq!(contents(&split), contents(&whole));
}

#[test]
fn only_partitions_with_copies_keep_batch_keys() {
    let tmp = tempfile::tempdir().unwrap();
    cluster(tmp.path());
    let r = klogscan::pipeline::scan_partitions(&inventory(tmp.path()), &ScanOptions::default());
    for p in &r.partitions {
        let inputs = &p.cluster_inputs();
        assert_eq!(
            inputs.batches.is_some(),
            p.topic == "orders",
            "{}: batch keys",
            p.path
        );
        assert_eq!(
            inputs.txn_log.is_some(),
            p.topic == "__transaction_state",
            "{}",
            p.path
        );
        assert_eq!(
            inputs.group_anomalies.is_some(),
            p.topic == "__consumer_offsets",
            "{}",
            p.path
        );
        assert_eq!(p.segment_names().len(), p.segments, "{}", p.path);
    }
    let orders = r.partitions.iter().find(|p| p.topic == "orders").unwrap();
    assert_eq!(
        orders.cluster_inputs().batches.as_ref().unwrap().len() as u64,
        orders.batches
    );
}

#[test]
fn partition_results_round_trip_to_the_same_cluster_findings() {
    use klogscan::results::{PartitionResult, RESULT_FORMAT_VERSION, ResultFormatError};
    let tmp = tempfile::tempdir().unwrap();
    cluster(tmp.path());
    let opts = ScanOptions::default();
    let inv = inventory(tmp.path());
    let scanned = klogscan::pipeline::scan_partitions(&inv, &opts);
    // Written by the process that walked the partitions…
    let json = serde_json::to_string(&scanned.partition_results()).unwrap();
    let mut direct = scanned;
    pipeline::run_cluster_checks(&mut direct, &inv, &opts);
    assert!(
        direct
            .findings
            .iter()
            .any(|f| f.kind == Kind::ReplicaDivergence)
    );
    // …read by another one, without the segments.
    remove_logs(tmp.path());
    let back: Vec<PartitionResult> = serde_json::from_str(&json).unwrap();
    assert!(
        back.iter()
            .all(|r| r.format_version == RESULT_FORMAT_VERSION)
    );
    let mut rebuilt = ScanReport::from_partition_results(back.clone()).unwrap();
    pipeline::run_cluster_checks(&mut rebuilt, &inv, &opts);
    assert_eq!(contents(&rebuilt), contents(&direct));
    assert_eq!(rebuilt.summary.findings, direct.summary.findings);
    let ids = |r: &ScanReport| r.findings.iter().map(|f| f.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&rebuilt), ids(&direct));

    // Another format version is refused, not misread.
    let mut newer = back;
    newer[0].format_version = RESULT_FORMAT_VERSION + 1;
    assert_eq!(
        ScanReport::from_partition_results(newer).err(),
        Some(ResultFormatError::Version {
            found: RESULT_FORMAT_VERSION + 1
        })
    );
}

#[test]
fn a_delete_copy_makes_no_partition_keep_batch_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let ld = tmp.path().join("kafka-logs");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(orders(4, None))
        .write(&ld)
        .unwrap();
    // A copy scheduled for deletion: never compared (it may hold an older incarnation).
    let stage = tmp.path().join("stage");
    let m = orders(4, Some(1)).write(&stage).unwrap();
    std::fs::rename(
        m.dir,
        ld.join("orders-0.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-delete"),
    )
    .unwrap();
    let inv = inventory(tmp.path());
    let r = pipeline::analyse(&inv, &ScanOptions::default());
    assert_eq!(r.partitions.len(), 2);
    assert!(
        r.partitions
            .iter()
            .all(|p| p.cluster_inputs().batches.is_none()),
        "batch keys kept for a pair that is never compared"
    );
    assert!(r.findings.iter().all(|f| f.kind != Kind::ReplicaDivergence));

    // With a second live copy (another broker of the cluster) both keep them.
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(orders(4, Some(1)))
        .write(&tmp.path().join("kafka-logs-2"))
        .unwrap();
    let r = klogscan::pipeline::scan_partitions(&inventory(tmp.path()), &ScanOptions::default());
    let kept = |p: &&klogscan::results::PartitionReport| p.cluster_inputs().batches.is_some();
    assert_eq!(r.partitions.iter().filter(kept).count(), 2);
}
