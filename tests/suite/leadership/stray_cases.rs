//! `stray_replica`: live partition directories of a KRaft broker that the metadata image at
//! the metadata log's end no longer assigns to it (`LogManager.isStrayKraftReplica`, 3.7.1+;
//! `LogManager.findStrayReplicas` 3.7.0; `BrokerMetadataPublisher.findStrayPartitions`
//! 3.0–3.6). The scenario is `testkit::brokers::stray_replicas`: one stray per reason.

use super::*;
use klogscan::bundle;
use klogscan::testkit::brokers::{self as kb, again_recreated_id, topic_with_partition};
use klogscan::testkit::files::uuid_text;

/// `(topic, broker, reason)` of each `stray_replica` finding, sorted.
fn verdicts<'a>(fs: impl IntoIterator<Item = &'a Finding>) -> Vec<(String, Option<i32>, String)> {
    let mut v: Vec<_> = fs
        .into_iter()
        .filter(|f| f.kind == Kind::StrayReplica)
        .map(|f| {
            (
                f.topic.clone(),
                f.source.broker_id,
                f.evidence["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn scan_strays(root: &Path) -> Vec<Finding> {
    of_kind(&scan(root), Kind::StrayReplica)
        .into_iter()
        .cloned()
        .collect()
}

/// `verify`'s `stray_replica` findings under `root` with `--broker-version version`.
fn verify_strays(root: &Path, version: Option<&str>) -> Vec<Finding> {
    let v = version.map(|s| s.parse().unwrap());
    let a = klogscan::request::verify(&klogscan::request::Request::new([root]), v).unwrap();
    (a.report.partitions.iter())
        .flat_map(|p| p.findings.iter())
        .filter(|f| f.kind == Kind::StrayReplica)
        .cloned()
        .collect()
}

fn scenario() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    kb::stray_replicas(d.path()).unwrap();
    d
}

fn v(topic: &str, broker: i32, reason: &str) -> (String, Option<i32>, String) {
    (topic.to_string(), Some(broker), reason.to_string())
}

/// Every reason once: reassigned away, topic deleted, topic created again under another
/// id, no `partition.metadata`; broker 2's `orders-0`, still a replica, is kept.
#[test]
fn one_stray_replica_per_reason_and_none_for_a_kept_replica() {
    let d = scenario();
    let fs = scan_strays(d.path());
    assert_eq!(
        verdicts(&fs),
        vec![
            v("again", 2, "topic_recreated"),
            v("bare", 2, "no_topic_id"),
            v("gone", 1, "topic_deleted"),
            v("orders", 1, "not_a_replica"),
        ],
        "{fs:#?}"
    );
    let end = history_of(d.path()).log.end_offset;
    let by = |t: &str| fs.iter().find(|f| f.topic == t).unwrap();
    for f in &fs {
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.evidence["metadata_offset"], end);
        assert!(
            f.message
                .contains(&format!("as of the metadata log's end (offset {end})")),
            "{}",
            f.message
        );
        assert!(f.client_error.as_deref().unwrap().starts_with("none"));
    }
    let orders = by("orders");
    assert_eq!(orders.evidence["node_id"], 1);
    assert_eq!(orders.evidence["image_replicas"], serde_json::json!([2, 3]));
    assert_eq!(orders.evidence["replicas_changed_at"], 11);
    assert_eq!(
        orders.evidence["topic_id_on_disk"],
        uuid_text(&topic_id_for("orders"))
    );
    assert_eq!(
        orders.evidence["image_topic_id"],
        orders.evidence["topic_id_on_disk"]
    );
    let gone = by("gone");
    assert_eq!(gone.evidence["topic_removed_at"], 12);
    assert!(gone.evidence["image_topic_id"].is_null());
    assert!(gone.evidence["image_replicas"].is_null());
    let again = by("again");
    assert_eq!(again.evidence["topic_removed_at"], 13);
    assert_eq!(again.evidence["topic_recreated_at"], 14);
    assert_eq!(
        again.evidence["image_topic_id"],
        uuid_text(&again_recreated_id())
    );
    assert_eq!(again.evidence["image_replicas"], serde_json::json!([2, 3]));
    let bare = by("bare");
    assert!(bare.evidence["topic_id_on_disk"].is_null());
    assert_eq!(bare.evidence["image_replicas"], serde_json::json!([2]));
    assert!(
        bare.message.contains("for Kafka 3.7.1 and later"),
        "{}",
        bare.message
    );
    // Unknown release: every range is described.
    let text = orders.broker_behaviour.as_str();
    for r in ["3.7.1 and later", "3.7.0", "3.0 to 3.6", "2.8"] {
        assert!(text.contains(r), "{r}: {text}");
    }
}

fn history_of(root: &Path) -> ClusterHistory {
    let inv = layout::discover(&[root.to_path_buf()]);
    let mut h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1);
    h.remove(0)
}

/// The bundles of each broker merged give the scan's findings, byte for byte.
#[test]
fn merged_bundles_give_the_scans_stray_replicas() {
    let d = scenario();
    let b = tempfile::tempdir().unwrap();
    let scanned = scan_strays(d.path());
    let files: Vec<_> = ["broker-1", "broker-2"]
        .iter()
        .map(|name| {
            let f = b.path().join(format!("{name}.klb"));
            let w = std::fs::File::create(&f).unwrap();
            let dirs = [d.path().join(name).join("data")];
            bundle::collect(&dirs, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
            f
        })
        .collect();
    let merged = bundle::merge(&files, &ScanOptions::default())
        .unwrap()
        .report;
    let merged = of_kind(&merged, Kind::StrayReplica);
    assert_eq!(merged.len(), 4);
    let json = |fs: Vec<&Finding>| {
        let mut v: Vec<_> = fs
            .iter()
            .map(|f| {
                let mut j = serde_json::to_value(f).unwrap();
                // The merge names a bundle's paths as recorded; the verdicts are the point.
                j["source"] = serde_json::Value::Null;
                j["evidence"]["metadata_log"] = serde_json::Value::Null;
                j.to_string()
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(json(scanned.iter().collect()), json(merged));
}

/// `verify --broker-version` picks the release's behaviour: 3.7.1+ renames at load, 3.7.0
/// after it, 3.0–3.6 delete; a missing topic id is a stray reason from 3.7.1, and stops a
/// 3.7.0 broker's start (`LogManager.findStrayReplicas` throws).
#[test]
fn verify_says_what_the_release_does() {
    let d = scenario();
    let all = vec![
        v("again", 2, "topic_recreated"),
        v("bare", 2, "no_topic_id"),
        v("gone", 1, "topic_deleted"),
        v("orders", 1, "not_a_replica"),
    ];
    let mut without_bare = all.clone();
    without_bare.retain(|(t, _, _)| t != "bare");
    let cases: [(Option<&str>, &Vec<_>, &str); 5] = [
        (None, &all, "Kafka 3.7.1 and later rename it"),
        (Some("3.7.1"), &all, "Kafka 3.7.1 and later rename it"),
        (Some("3.8.0"), &all, "Kafka 3.7.1 and later rename it"),
        (Some("3.7.0"), &all, "Kafka 3.7.0"),
        (
            Some("3.6.2"),
            &without_bare,
            "ReplicaManager.deleteStrayReplicas",
        ),
    ];
    for (version, want, text) in cases {
        let fs = verify_strays(d.path(), version);
        assert_eq!(&verdicts(&fs), want, "{version:?}");
        for f in &fs {
            let b = f.broker_behaviour.as_str();
            assert!(b.contains(text), "{version:?}: {b}");
            assert_eq!(
                f.evidence["broker_version"].as_str(),
                version.map(|s| s.to_string()).as_deref()
            );
        }
    }
    // Kafka 3.5 deletes strays too (BrokerMetadataPublisher.findStrayPartitions).
    let fs = verify_strays(d.path(), Some("3.5.1"));
    assert_eq!(verdicts(&fs), without_bare);
}

/// A `-stray` and a `-delete` copy are not live logs: not judged.
#[test]
fn non_live_copies_are_not_judged() {
    let d = scenario();
    let ld1 = d.path().join("broker-1").join("data");
    let uuid = "7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29";
    std::fs::rename(
        ld1.join("orders-0"),
        ld1.join(format!("orders-0.{uuid}-stray")),
    )
    .unwrap();
    std::fs::rename(
        ld1.join("gone-0"),
        ld1.join(format!("gone-0.{uuid}-delete")),
    )
    .unwrap();
    let fs = scan_strays(d.path());
    assert!(fs.iter().all(|f| f.source.broker_id == Some(2)), "{fs:#?}");
    assert_eq!(fs.len(), 2);
}

/// Broker 1's log dir of another cluster, or without its node id: not judged.
#[test]
fn another_cluster_or_an_unknown_node_is_not_judged() {
    for (from, to) in [("cluster.id=c1", "cluster.id=c2"), ("broker.id=1\n", "")] {
        let d = scenario();
        let meta = d
            .path()
            .join("broker-1")
            .join("data")
            .join("meta.properties");
        let text = std::fs::read_to_string(&meta).unwrap();
        assert!(text.contains(from));
        std::fs::write(&meta, text.replace(from, to)).unwrap();
        let r = scan(d.path());
        let fs = of_kind(&r, Kind::StrayReplica);
        assert!(
            fs.iter().all(|f| f.topic != "orders" && f.topic != "gone"),
            "{from}: {fs:#?}"
        );
        assert_eq!(fs.len(), 2, "{from}: broker 2's are still judged");
        if to.is_empty() {
            let gone = r.partitions.iter().find(|p| p.topic == "gone").unwrap();
            assert_eq!(gone.source.broker_id, None);
            assert_eq!(gone.source.cluster_id.as_deref(), Some("c1"));
        }
    }
}

/// Broker 1's log dir holding `orders-0` (its `partition.metadata` removed when `bare`),
/// and beside it the metadata log `m`.
fn broker_1(root: &Path, bare: bool, m: Option<&MetadataLogBuilder>) {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(3);
    p.append(Batch::new(Producer::PLAIN).records(3));
    let ld = root.join("b1");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p)
        .write(&ld)
        .unwrap();
    if bare {
        std::fs::remove_file(ld.join("orders-0").join("partition.metadata")).unwrap();
    }
    if let Some(m) = m {
        m.write(&ld).unwrap();
    }
}

/// Node 2's log dir (cluster `c1`, no partitions) holding the metadata log `m`.
fn metadata_on_node_2(root: &Path, m: &MetadataLogBuilder) {
    let ld = root.join("b2");
    LogDirBuilder::new(2).cluster_id("c1").write(&ld).unwrap();
    m.write(&ld).unwrap();
}

/// A history that does not know the partition's final state says nothing: one that starts
/// mid-log without a snapshot and holds only a change of it, one that never names the
/// topic (created after the copy ends, or deleted before it starts), whether node 1's own
/// metadata copy is the one replayed or another node's is.
#[test]
fn a_history_that_does_not_cover_the_topic_says_nothing() {
    let mut mid = MetadataLogBuilder::new(T0).start_offset(100);
    mid.batch(&[
        broker(2),
        change(|c| {
            c.replicas = Some(vec![2, 3]);
            c.isr = Some(vec![2, 3]);
            c.leader = 2;
        }),
    ]);
    let mut unnamed = MetadataLogBuilder::new(T0);
    unnamed.batch(&[broker(1), broker(2)]);
    for (m, own) in [
        (&mid, true),
        (&mid, false),
        (&unnamed, true),
        (&unnamed, false),
    ] {
        let d = tempfile::tempdir().unwrap();
        broker_1(d.path(), false, own.then_some(m));
        if !own {
            metadata_on_node_2(d.path(), m);
        }
        assert!(scan_strays(d.path()).is_empty());
        assert!(verify_strays(d.path(), Some("3.8.0")).is_empty());
    }
}

/// Kafka's `LogManagerTest.testIsStrayKraftReplicaInImage` and `…WithEmptyImage`: on node
/// 0, `foo-0` (image: [0, 1, 2]), `foo-1` (no such partition), `bar-0`, `bar-1` ([0, 1, 2])
/// and `quux-0` (a topic id the image does not hold). Kafka calls `foo-1` and `quux-0`
/// stray; offline, a partition or topic id the history never names is not judged, even
/// beside the node's own metadata copy: that copy may lack its newest segments (real data:
/// a copy holding only its snapshot, with topics created after it on disk), and then the
/// directory postdates the history. `…WithRemoteReplicas`: `bar-0` on [1, 2, 3] is stray,
/// `bar-1` on [2, 3, 0] is not.
#[test]
fn kafka_is_stray_kraft_replica_cases() {
    let image = |bar: [[i32; 3]; 2]| {
        let mut m = MetadataLogBuilder::new(T0);
        let mut r = vec![broker(0), broker(1)];
        r.extend(topic_with_partition("foo", topic_id_for("foo"), &[0, 1, 2]));
        r.extend(topic_with_partition("bar", topic_id_for("bar"), &bar[0]));
        if let MetaRecord::Partition(mut p) = r.last().unwrap().clone() {
            p.partition_id = 1;
            p.replicas = bar[1].to_vec();
            p.isr = bar[1].to_vec();
            p.leader = bar[1][0];
            r.push(MetaRecord::Partition(p));
        }
        m.batch(&r);
        m
    };
    let node_0 = |root: &Path, m: &MetadataLogBuilder, own: bool| {
        let mut b = LogDirBuilder::new(0).cluster_id("c1");
        for (t, n) in [("foo", 0), ("foo", 1), ("bar", 0), ("bar", 1), ("quux", 0)] {
            let mut p = PartitionBuilder::new(t, n).start_time(T0).leader_epoch(3);
            p.append(Batch::new(Producer::PLAIN).records(2));
            b = b.partition(p);
        }
        b.write(&root.join("b0")).unwrap();
        if own {
            m.write(&root.join("b0")).unwrap();
        } else {
            metadata_on_node_2(root, m);
        }
    };
    let strays = |root: &Path| -> Vec<(String, i32, String)> {
        let mut v: Vec<_> = scan_strays(root)
            .iter()
            .map(|f| {
                let reason = f.evidence["reason"].as_str().unwrap().to_string();
                (f.topic.clone(), f.partition, reason)
            })
            .collect();
        v.sort();
        v
    };
    let s = |t: &str, n: i32, r: &str| (t.to_string(), n, r.to_string());
    let local = image([[0, 1, 2], [0, 1, 2]]);
    let d = tempfile::tempdir().unwrap();
    node_0(d.path(), &local, true);
    assert_eq!(strays(d.path()), vec![]);
    let d = tempfile::tempdir().unwrap();
    node_0(d.path(), &local, false);
    assert_eq!(strays(d.path()), vec![]);
    let remote = image([[1, 2, 3], [2, 3, 0]]);
    let d = tempfile::tempdir().unwrap();
    node_0(d.path(), &remote, false);
    assert_eq!(strays(d.path()), vec![s("bar", 0, "not_a_replica")]);
    let d = tempfile::tempdir().unwrap();
    node_0(d.path(), &remote, true);
    assert_eq!(strays(d.path()), vec![s("bar", 0, "not_a_replica")]);
    // The empty image names nothing: nothing is judged.
    let mut empty = MetadataLogBuilder::new(T0);
    empty.batch(&[broker(0)]);
    let d = tempfile::tempdir().unwrap();
    node_0(d.path(), &empty, true);
    assert_eq!(strays(d.path()), vec![]);
}

/// A history that starts at a snapshot knows the partition's state: judged.
#[test]
fn a_history_from_a_snapshot_is_judged() {
    let mut state = vec![broker(1), broker(2)];
    state.extend(topic_with_partition("orders", tid(), &[2, 3]));
    let mut m = MetadataLogBuilder::new(T0)
        .start_offset(40)
        .snapshot(40, 1, state);
    m.batch(&[broker(3)]);
    let d = tempfile::tempdir().unwrap();
    broker_1(d.path(), false, Some(&m));
    let fs = scan_strays(d.path());
    assert_eq!(verdicts(&fs), vec![v("orders", 1, "not_a_replica")]);
    assert_eq!(fs[0].evidence["replicas_changed_at"], 39);
}

/// Without a KRaft metadata log (a ZooKeeper-mode broker) a log without a topic id is no
/// stray, whatever the release.
#[test]
fn zookeeper_mode_dirs_without_a_metadata_log_are_not_judged() {
    let d = tempfile::tempdir().unwrap();
    broker_1(d.path(), true, None);
    assert!(scan_strays(d.path()).is_empty());
    for version in [None, Some("3.7.1"), Some("3.9.0")] {
        assert!(verify_strays(d.path(), version).is_empty());
    }
}

/// A KRaft log without a topic id whose partition the image still assigns to the broker:
/// stray from 3.7.1 (and when the release is unknown); at 3.7.0 the stray search throws on
/// it and the start fails (an error, and `broker_startup` says so); not before.
#[test]
fn a_missing_topic_id_is_a_stray_reason_from_3_7_1_only() {
    let mut m = MetadataLogBuilder::new(T0);
    let mut first = vec![broker(1), broker(2)];
    first.extend(topic_with_partition("orders", tid(), &[1, 2]));
    m.batch(&first);
    let d = tempfile::tempdir().unwrap();
    broker_1(d.path(), true, Some(&m));
    assert_eq!(
        verdicts(&scan_strays(d.path())),
        vec![v("orders", 1, "no_topic_id")]
    );
    for (version, n) in [
        (Some("3.7.1"), 1),
        (Some("4.0.0"), 1),
        (Some("3.7.0"), 1),
        (Some("3.6.0"), 0),
        (Some("3.5.2"), 0),
    ] {
        assert_eq!(verify_strays(d.path(), version).len(), n, "{version:?}");
    }
    let stop = |version: &str| {
        let v = Some(version.parse().unwrap());
        let r = klogscan::request::verify(&klogscan::request::Request::new([d.path()]), v);
        r.unwrap().report.broker_startup
    };
    let s = stop("3.7.0");
    assert_eq!(s.len(), 1, "{s:#?}");
    assert_eq!((s[0].broker, s[0].starts), (Some(1), Some(false)));
    assert_eq!(s[0].thrown_by, "LogManager.findStrayReplicas");
    assert_eq!(
        verify_strays(d.path(), Some("3.7.0"))[0].severity,
        Severity::Error
    );
    assert!(stop("3.7.1").is_empty() && stop("3.6.0").is_empty());
    // A metadata log that never names the topic is no history of it: not judged.
    let mut unnamed = MetadataLogBuilder::new(T0);
    unnamed.batch(&[broker(1), broker(2)]);
    let d = tempfile::tempdir().unwrap();
    broker_1(d.path(), true, Some(&unnamed));
    assert!(scan_strays(d.path()).is_empty());
    assert!(verify_strays(d.path(), Some("3.8.0")).is_empty());
    // With its partition.metadata, the same replica is kept.
    let d = tempfile::tempdir().unwrap();
    broker_1(d.path(), false, Some(&m));
    assert!(scan_strays(d.path()).is_empty());
}

/// A `partition.metadata` that is there but does not read is no proof of a missing topic id
/// (the broker may read what klogscan cannot, or fail on it): `bare-0` is not judged — by
/// the scan, and by the merge of the brokers' bundles, whose inventory knows the file is
/// there from the file list the bundle records.
#[test]
fn an_unreadable_partition_metadata_is_not_a_missing_topic_id_in_scan_or_merge() {
    let d = scenario();
    let pm = d.path().join("broker-2/data/bare-0/partition.metadata");
    std::fs::write(&pm, b"not a partition metadata file\n").unwrap();
    let scanned = verdicts(&scan_strays(d.path()));
    assert!(!scanned.iter().any(|(t, _, _)| t == "bare"), "{scanned:?}");
    let b = tempfile::tempdir().unwrap();
    let files: Vec<_> = ["broker-1", "broker-2"]
        .iter()
        .map(|name| {
            let f = b.path().join(format!("{name}.klb"));
            let w = std::fs::File::create(&f).unwrap();
            let dirs = [d.path().join(name).join("data")];
            bundle::collect(&dirs, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
            f
        })
        .collect();
    let merged = bundle::merge(&files, &ScanOptions::default())
        .unwrap()
        .report;
    assert_eq!(verdicts(of_kind(&merged, Kind::StrayReplica)), scanned);
}
