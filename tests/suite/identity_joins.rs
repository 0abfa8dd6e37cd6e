//! Joins within one cluster (issue 10): the coordinator confirmation uses only the
//! `__transaction_state` of the finding's own cluster (same `cluster.id`, or the same log
//! dir when there is none), and "confirmed" needs the partition that owns the
//! transactional id, or every partition for a lookup by producer id alone. The real data's
//! dump03/dump10 are no longer confirmed against other clusters' records.
#![cfg(feature = "testkit")]

use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, PartitionRecord};
use klogscan::results::ScanReport;
use klogscan::testkit::metadata::encode;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use std::path::{Path, PathBuf};

// ----- a __transaction_state encoder local to this file (kafka-semantics.md §6.1) --------

fn key(id: &str) -> Vec<u8> {
    let mut k = 0i16.to_be_bytes().to_vec();
    k.extend_from_slice(&(id.len() as i16).to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

/// A v0 value in state Empty (no transaction in progress, no partitions).
fn empty_value(pid: i64, epoch: i16, at: i64) -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&epoch.to_be_bytes());
    v.extend_from_slice(&60_000i32.to_be_bytes());
    v.push(0); // Empty
    v.extend_from_slice(&0i32.to_be_bytes()); // no partitions
    v.extend_from_slice(&at.to_be_bytes());
    v.extend_from_slice(&(-1i64).to_be_bytes());
    v
}

fn txn_state(partition: i32, records: &[(&str, i64)]) -> PartitionBuilder {
    let mut t = PartitionBuilder::new("__transaction_state", partition);
    for (id, pid) in records {
        let v = empty_value(*pid, 1, 1_572_948_000_000);
        t.append(Batch::new(Producer::PLAIN).record(Rec::kv(key(id), &v)));
    }
    t
}

/// Producer 900's transaction open since offset 1, idle 20 minutes: hanging.
fn hanging() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.append(Batch::new(Producer::transactional(900, 1)).records(2));
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p
}

fn scan_all(paths: &[PathBuf]) -> ScanReport {
    klogscan::pipeline::scan(paths, &ScanOptions::default())
}

fn orders_txn(r: &ScanReport) -> &Finding {
    let v: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| {
            f.topic == "orders"
                && matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
        })
        .collect();
    assert_eq!(v.len(), 1, "{:#?}", r.findings);
    v[0]
}

/// Transactional id `app` lives in `__transaction_state-1` with 50 partitions.
const APP_P: i32 = 1;

#[test]
fn owner_partition_of_app_is_one() {
    assert_eq!(transaction_partition_for("app", 50), APP_P);
}

#[test]
fn another_clusters_transaction_state_is_never_joined() {
    for (other, joined) in [("clusterB", false), ("clusterA", true)] {
        let dir = tempfile::tempdir().unwrap();
        LogDirBuilder::new(1)
            .cluster_id("clusterA")
            .partition(hanging())
            .write(&dir.path().join("b1"))
            .unwrap();
        LogDirBuilder::new(2)
            .cluster_id(other)
            .partition(txn_state(APP_P, &[("app", 900)]))
            .write(&dir.path().join("b2"))
            .unwrap();
        let r = scan_all(&[dir.path().to_path_buf()]);
        let f = orders_txn(&r);
        let c = &f.evidence["coordinator"];
        assert_eq!(
            (f.kind, f.severity),
            (Kind::HangingTransaction, Severity::Error)
        );
        if joined {
            assert_eq!(c["verdict"], "no_transaction_in_progress", "{c}");
            assert_eq!(c["transactional_id"], "app");
            assert_eq!(c["confirmed"], true);
            assert_eq!(c["owner_partition"], APP_P);
            assert!(f.message.contains("confirmed hanging"), "{}", f.message);
        } else {
            assert_eq!(c["verdict"], "unavailable", "{c}");
            assert_eq!(c["confirmed"], false);
            assert!(c["cluster"].as_str().unwrap().contains("clusterA"));
            assert!(!f.message.contains("coordinator"), "{}", f.message);
        }
    }
}

/// Without meta.properties, only partitions of the same log dir are joined.
#[test]
fn without_cluster_id_only_the_same_log_dir_joins() {
    // Same (marker-less) log dir: orders-0 next to __transaction_state-1.
    let dir = tempfile::tempdir().unwrap();
    hanging().write(dir.path()).unwrap();
    txn_state(APP_P, &[("app", 900)]).write(dir.path()).unwrap();
    let r = scan_all(&[dir.path().to_path_buf()]);
    let c = &orders_txn(&r).evidence["coordinator"];
    assert_eq!(c["verdict"], "no_transaction_in_progress", "{c}");
    assert!(
        c["cluster"].as_str().unwrap().contains("cluster unknown"),
        "{c}"
    );

    // Two marker-less log dirs: never joined.
    let dir = tempfile::tempdir().unwrap();
    let (x, y) = (dir.path().join("x"), dir.path().join("y"));
    hanging().write(&x).unwrap();
    PartitionBuilder::new("pad", 0).write(&x).unwrap();
    txn_state(APP_P, &[("app", 900)]).write(&y).unwrap();
    PartitionBuilder::new("pad", 1).write(&y).unwrap();
    let r = scan_all(&[x, y]);
    let c = &orders_txn(&r).evidence["coordinator"];
    assert_eq!(c["verdict"], "unavailable", "{c}");
    assert!(c["cluster"].as_str().unwrap().contains("cluster unknown"));
}

/// A log dir of cluster A with `txn` partitions of `__transaction_state`; partition 3
/// holds another producer's id, the rest are empty.
fn cluster_with_txn_partitions(dir: &Path, parts: impl Iterator<Item = i32>) -> PathBuf {
    let ld = dir.join("b1");
    let mut b = LogDirBuilder::new(1)
        .cluster_id("clusterA")
        .partition(hanging());
    for p in parts {
        let recs: &[(&str, i64)] = if p == 3 { &[("someone", 5)] } else { &[] };
        b = b.partition(txn_state(p, recs));
    }
    b.write(&ld).unwrap();
    ld
}

#[test]
fn a_producer_id_lookup_is_confirmed_only_with_every_partition() {
    let dir = tempfile::tempdir().unwrap();
    let ld = cluster_with_txn_partitions(dir.path(), 0..50);
    let r = scan_all(&[ld]);
    let f = orders_txn(&r);
    let c = &f.evidence["coordinator"];
    assert_eq!(c["verdict"], "no_transactional_id");
    assert_eq!(c["confirmed"], true);
    assert!(
        f.message.contains(
            "confirmed hanging: no transactional id maps to producer 900 in any of the 50 partitions of cluster clusterA"
        ),
        "{}",
        f.message
    );

    // One partition missing: unconfirmed, and the message says why.
    let dir = tempfile::tempdir().unwrap();
    let ld = cluster_with_txn_partitions(dir.path(), (0..50).filter(|&p| p != 17));
    let r = scan_all(&[ld]);
    let f = orders_txn(&r);
    let c = &f.evidence["coordinator"];
    assert_eq!(c["confirmed"], false);
    assert_eq!(f.kind, Kind::HangingTransaction);
    assert!(
        f.message
            .contains("unconfirmed: no transactional id maps to producer 900")
            && f.message.contains("1 partition(s) not read"),
        "{}",
        f.message
    );
}

/// Metadata records as a `__cluster_metadata-0` partition.
fn metadata(records: &[MetaRecord]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__cluster_metadata", 0);
    for r in records {
        p.append(Batch::new(Producer::PLAIN).record(Rec::value(encode(r))));
    }
    p
}

#[test]
fn the_partition_count_comes_from_the_metadata_log() {
    let id = [9u8; 16];
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("b1");
    LogDirBuilder::new(1)
        .cluster_id("clusterA")
        .partition(hanging())
        .partition(txn_state(0, &[("someone", 5)]))
        .partition(metadata(&[
            MetaRecord::Topic {
                name: "__transaction_state".into(),
                topic_id: id,
            },
            MetaRecord::Partition(PartitionRecord {
                partition_id: 0,
                topic_id: id,
                ..Default::default()
            }),
        ]))
        .write(&ld)
        .unwrap();
    let r = scan_all(std::slice::from_ref(&ld));
    let f = orders_txn(&r);
    let c = &f.evidence["coordinator"];
    assert_eq!(c["partition_count"], 1, "{c}");
    assert_eq!(c["partition_count_from"], "the cluster's metadata log");
    assert_eq!(c["confirmed"], true, "{}", f.message);

    // The same without the metadata log: the default 50, 49 not read.
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("b1");
    LogDirBuilder::new(1)
        .cluster_id("clusterA")
        .partition(hanging())
        .partition(txn_state(0, &[("someone", 5)]))
        .write(&ld)
        .unwrap();
    let r = scan_all(&[ld]);
    let c = &orders_txn(&r).evidence["coordinator"];
    assert_eq!(c["partition_count"], 50);
    assert_eq!(c["confirmed"], false);
}

#[test]
fn a_found_id_is_confirmed_only_from_its_owner_partition() {
    for (p, confirmed) in [(APP_P, true), (7, false)] {
        let dir = tempfile::tempdir().unwrap();
        let ld = dir.path().join("b1");
        LogDirBuilder::new(1)
            .cluster_id("clusterA")
            .partition(hanging())
            .partition(txn_state(p, &[("app", 900)]))
            .write(&ld)
            .unwrap();
        let r = scan_all(&[ld]);
        let f = orders_txn(&r);
        let c = &f.evidence["coordinator"];
        assert_eq!(c["owner_partition"], APP_P);
        assert_eq!(c["confirmed"], confirmed, "{}", f.message);
        assert_eq!(
            f.message.contains("unconfirmed"),
            !confirmed,
            "{}",
            f.message
        );
        if !confirmed {
            assert!(
                f.message.contains("it belongs to __transaction_state-1"),
                "{}",
                f.message
            );
        }
    }
}

/// The real data: dump03 and dump10 (a rebuilt dir without meta.properties) are no longer
/// confirmed against the `__transaction_state` of other clusters.
#[test]
fn real_data_is_not_joined_across_clusters() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let r = scan_all(std::slice::from_ref(&root));
    for name in ["dump03_transaction4-topic", "dump10_transaction-topic"] {
        let fs: Vec<&Finding> = r
            .findings
            .iter()
            .filter(|f| {
                f.topic == name
                    && matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
            })
            .collect();
        assert_eq!(fs.len(), 1, "{name}");
        let f = fs[0];
        assert!(!f.message.contains("confirmed"), "{}", f.message);
        assert!(
            !f.message.contains("__transaction_state-4"),
            "{}",
            f.message
        );
        assert!(!f.message.contains("KAFKA-12671"), "{}", f.message);
        assert_eq!(f.evidence["coordinator"]["verdict"], "unavailable");
        assert!(f.source.cluster_id.is_none());
    }
    // The brokers with a meta.properties carry their identity.
    let p = r
        .partitions
        .iter()
        .find(|p| p.path.contains("ItumelengMogase") && p.topic == "__transaction_state")
        .unwrap();
    assert_eq!(
        p.source.cluster_id.as_deref(),
        Some("MkU3OEVBNTcwNTJENDM2Qk")
    );
    assert_eq!(p.source.broker_id, Some(1));
}

/// A non-live copy is never confirmed against the coordinator (its findings claim nothing
/// about the live partition).
#[test]
fn copies_are_not_annotated_by_the_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("b1");
    LogDirBuilder::new(1)
        .cluster_id("clusterA")
        .partition(txn_state(APP_P, &[("app", 900)]))
        .write(&ld)
        .unwrap();
    let stage = dir.path().join("stage");
    let m = hanging().write(&stage).unwrap();
    std::fs::rename(
        m.dir,
        ld.join("orders-0.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-future"),
    )
    .unwrap();
    let r = scan_all(&[ld]);
    let f = orders_txn(&r);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::OpenTransaction, Severity::Info)
    );
    assert!(f.evidence.get("coordinator").is_none(), "{}", f.evidence);
    assert!(!f.message.contains("coordinator"), "{}", f.message);
}

/// A v0 value in state Ongoing listing `orders-0`.
fn ongoing_value(pid: i64, epoch: i16, at: i64) -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&epoch.to_be_bytes());
    v.extend_from_slice(&60_000i32.to_be_bytes());
    v.push(1); // Ongoing
    v.extend_from_slice(&1i32.to_be_bytes());
    v.extend_from_slice(&6i16.to_be_bytes());
    v.extend_from_slice(b"orders");
    v.extend_from_slice(&1i32.to_be_bytes());
    v.extend_from_slice(&0i32.to_be_bytes());
    v.extend_from_slice(&at.to_be_bytes());
    v.extend_from_slice(&at.to_be_bytes());
    v
}

/// A `-delete` copy of `__transaction_state` is still checked (its anomalies are real and
/// carry the copy's identity) but never confirms anything about a live partition.
#[test]
fn a_transaction_state_copy_is_checked_but_not_joined() {
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("b1");
    LogDirBuilder::new(1)
        .cluster_id("clusterA")
        .partition(hanging())
        .write(&ld)
        .unwrap();
    let mut t = PartitionBuilder::new("__transaction_state", APP_P);
    let v = ongoing_value(900, 1, 1_572_948_000_000);
    t.append(Batch::new(Producer::PLAIN).record(Rec::kv(key("app"), &v)));
    let stage = dir.path().join("stage");
    let m = t.write(&stage).unwrap();
    std::fs::rename(
        m.dir,
        ld.join("__transaction_state-1.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-delete"),
    )
    .unwrap();
    let r = scan_all(&[ld]);
    let f = orders_txn(&r);
    assert_eq!(
        f.kind,
        Kind::HangingTransaction,
        "the copy's Ongoing record is not used"
    );
    assert_eq!(f.evidence["coordinator"]["verdict"], "unavailable");
    let anomalies: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .collect();
    assert_eq!(anomalies.len(), 1, "{:#?}", r.findings);
    assert_eq!(
        anomalies[0].source.copy,
        klogscan::finding::CopyKind::Delete
    );
}
