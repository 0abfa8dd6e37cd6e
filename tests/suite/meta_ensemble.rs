//! One broker's log dirs against each other (`klogscan::verify::brokers`): what
//! `MetaPropertiesEnsemble.verify` (3.7 and later), `BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs`
//! (2.8 to 3.6) and `KafkaRaftServer.initializeLogDirs` refuse at start, reproduced with
//! the cases of Kafka's `MetaPropertiesEnsembleTest` and `KafkaRaftServerTest` that are
//! files on disk — and silence wherever the log dirs may be two brokers' (or one log dir
//! captured twice).

use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::{LogDirBuilder, topic_id_for, uuid_text};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
use klogscan::verify::{BrokerVersion, VerifyOptions, VerifyReport, verify};
use std::path::Path;

const CLUSTER: &str = "MkU3OEVBNTcwNTJENDM2Qg";
const OTHER_CLUSTER: &str = "AtgGav8yQjiaJ3rTXE7VCA";
/// `DirectoryId.LOST` (`AAAAAAAAAAAAAAAAAAAAAg`), one of the reserved ids.
const LOST: &str = "AAAAAAAAAAAAAAAAAAAAAg";

/// One log dir to write: its name, `meta.properties` fields, and partitions.
struct D<'a> {
    name: &'a str,
    version: u8,
    node: i32,
    cluster: &'a str,
    dir_id: Option<&'a str>,
    topics: &'a [&'a str],
}

fn d<'a>(name: &'a str, node: i32, dir_id: Option<&'a str>, topics: &'a [&'a str]) -> D<'a> {
    D {
        name,
        version: 1,
        node,
        cluster: CLUSTER,
        dir_id,
        topics,
    }
}

/// Write the log dirs under `root`: each with partition 0 of its topics (one record).
fn write(root: &Path, dirs: &[D]) {
    for x in dirs {
        let dir = root.join(x.name);
        let mut b = LogDirBuilder::new(x.node).cluster_id(x.cluster);
        for t in x.topics {
            let mut p = PartitionBuilder::new(t, 0);
            p.append(Batch::new(Producer::PLAIN).records(1));
            b = b.partition(p);
        }
        b.write(&dir).unwrap();
        let id = if x.version == 1 {
            "node.id"
        } else {
            "broker.id"
        };
        let mut s = format!(
            "version={}\n{id}={}\ncluster.id={}\n",
            x.version, x.node, x.cluster
        );
        if let Some(dir_id) = x.dir_id {
            s.push_str(&format!("directory.id={dir_id}\n"));
        }
        std::fs::write(dir.join("meta.properties"), s).unwrap();
    }
}

fn run(root: &Path, version: Option<&str>) -> VerifyReport {
    let opts = VerifyOptions {
        broker_version: version.map(|v| v.parse::<BrokerVersion>().unwrap()),
        ..Default::default()
    };
    verify(&[root.to_path_buf()], &opts)
}

/// The findings of `kind`, checked to match the report's `broker_startup` entries (each
/// such finding stops a start, but a refused file of a data dir, which only goes offline).
fn of(r: &VerifyReport, kind: Kind) -> Vec<klogscan::Finding> {
    let f: Vec<_> = r.findings().filter(|f| f.kind == kind).cloned().collect();
    if !matches!(
        kind,
        Kind::DuplicateLogDirectories | Kind::MetaPropertiesRefused
    ) {
        let s = r
            .broker_startup
            .iter()
            .filter(|s| s.reason == kind.id())
            .count();
        assert_eq!(f.len(), s, "{:#?}", r.broker_startup);
    }
    f
}

fn ids() -> (String, String) {
    (
        uuid_text(&topic_id_for("log dir one")),
        uuid_text(&topic_id_for("log dir two")),
    )
}

/// `MetaPropertiesEnsembleTest.testSuccessfulVerification`'s FOO ensemble: two v1 log
/// dirs of one cluster and node 2, no directory ids — and the same with a directory id
/// of each log dir's own (what a 3.7 broker writes): nothing stops the start.
#[test]
fn agreeing_log_dirs_start() {
    let (x, y) = ids();
    for ids in [(None, None), (Some(x.as_str()), Some(y.as_str()))] {
        let t = tempfile::tempdir().unwrap();
        write(
            t.path(),
            &[d("dir4", 2, ids.0, &["a"]), d("dir5", 2, ids.1, &["b"])],
        );
        let r = run(t.path(), None);
        assert!(r.broker_startup.is_empty(), "{:#?}", r.broker_startup);
        let json = klogscan::verify::render::to_json(&r);
        assert!(json.get("broker_startup").is_none(), "schema unchanged");
    }
}

/// `MetaPropertiesEnsemble.verify` refuses a reserved directory id (`DirectoryId.reserved`)
/// — 3.7 and later; an older broker does not read `directory.id`.
#[test]
fn a_reserved_directory_id_stops_the_start_since_3_7() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), &[d("d1", 1, Some(LOST), &["a"])]);
    for v in [None, Some("3.7.0"), Some("4.0")] {
        let r = run(t.path(), v);
        let f = of(&r, Kind::ReservedDirectoryId);
        assert_eq!(f.len(), 1, "{v:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].evidence["reserved_as"], "LOST");
        assert_eq!(f[0].source.broker_id, Some(1));
        assert!(
            f[0].message.contains("RuntimeException"),
            "{}",
            f[0].message
        );
        assert_eq!(r.broker_startup[0].starts, Some(false));
        assert_eq!(r.broker_startup[0].broker, Some(1));
    }
    assert!(of(&run(t.path(), Some("3.6.1")), Kind::ReservedDirectoryId).is_empty());
    // A valid id: no finding.
    let t = tempfile::tempdir().unwrap();
    write(t.path(), &[d("d1", 1, Some(&ids().0), &["a"])]);
    assert!(of(&run(t.path(), None), Kind::ReservedDirectoryId).is_empty());
}

/// One directory id in two log dirs of one broker: the start fails (3.7 and later). The
/// two are told from one log dir captured twice by their partitions.
#[test]
fn one_directory_id_in_two_log_dirs_stops_the_start() {
    let (x, _) = ids();
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[
            d("d1", 1, Some(&x), &["orders"]),
            d("d2", 1, Some(&x), &["payments"]),
        ],
    );
    let r = run(t.path(), None);
    let f = of(&r, Kind::DuplicateDirectoryId);
    assert_eq!(f.len(), 1, "{:#?}", r.log_dir_findings);
    assert_eq!(f[0].evidence["directory_id"], x.as_str());
    assert_eq!(f[0].evidence["log_dirs"].as_array().unwrap().len(), 2);
    assert_eq!(r.broker_startup[0].log_dirs.len(), 2);
    // Before 3.7 the id is not read.
    assert!(of(&run(t.path(), Some("3.6")), Kind::DuplicateDirectoryId).is_empty());
}

/// The negatives of one directory id twice: a log dir captured twice (the same
/// partitions), and two brokers' log dirs (a copied id, but different node ids).
#[test]
fn one_directory_id_twice_is_silent_when_it_may_be_one_log_dir_or_two_brokers() {
    let (x, _) = ids();
    for dirs in [
        [
            d("before", 1, Some(&x), &["orders"]),
            d("after", 1, Some(&x), &["orders", "payments"]),
        ],
        [
            d("b1", 1, Some(&x), &["orders"]),
            d("b2", 2, Some(&x), &["payments"]),
        ],
        [d("d1", 1, Some(&x), &["orders"]), d("d2", 1, Some(&x), &[])],
    ] {
        let t = tempfile::tempdir().unwrap();
        write(t.path(), &dirs);
        let r = run(t.path(), None);
        assert!(r.broker_startup.is_empty(), "{:#?}", r.broker_startup);
        assert!(of(&r, Kind::DuplicateDirectoryId).is_empty());
    }
}

/// Before 3.7 (2.8 to 3.6) the files are compared whole: the directory ids a 3.7 broker
/// gave each log dir make them differ, and a downgraded broker does not start
/// (`InconsistentBrokerMetadataException`) — a KRaft one since 3.4 compares only the
/// cluster and node ids; before 2.8 only `broker.id` and `cluster.id` were compared.
#[test]
fn a_broker_before_3_7_refuses_log_dirs_with_their_own_directory_ids() {
    let (x, y) = ids();
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[d("d1", 1, Some(&x), &["a"]), d("d2", 1, Some(&y), &["b"])],
    );
    for v in ["2.8.1", "3.0.0", "3.3.2"] {
        let r = run(t.path(), Some(v));
        let f = of(&r, Kind::InconsistentBrokerMetadata);
        assert_eq!(f.len(), 1, "{v}");
        assert_eq!(f[0].severity, Severity::Error, "{v}");
        assert!(f[0].message.contains("InconsistentBrokerMetadataException"));
        assert_eq!(r.broker_startup[0].starts, Some(false));
    }
    // KRaft (v1 files) since 3.4, 3.7 and later, before 2.8: the start goes on.
    for v in [
        Some("3.4.0"),
        Some("3.6.2"),
        Some("3.7.0"),
        None,
        Some("2.7.0"),
    ] {
        let r = run(t.path(), v);
        assert!(of(&r, Kind::InconsistentBrokerMetadata).is_empty(), "{v:?}");
    }
    // v0 files (a ZooKeeper-era broker migrated by 3.7) at 3.5: a ZooKeeper-mode broker
    // fails, a KRaft one starts: a warning that says so.
    let t = tempfile::tempdir().unwrap();
    let mut dirs = [d("d1", 1, Some(&x), &["a"]), d("d2", 1, Some(&y), &["b"])];
    dirs.iter_mut().for_each(|d| d.version = 0);
    write(t.path(), &dirs);
    let r = run(t.path(), Some("3.5.0"));
    let f = of(&r, Kind::InconsistentBrokerMetadata);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(r.broker_startup[0].starts, None);
    assert!(r.broker_startup[0].assumes.is_some());
    assert_eq!(
        of(
            &run(t.path(), Some("3.3")),
            Kind::InconsistentBrokerMetadata
        )[0]
        .severity,
        Severity::Error
    );
}

/// The negatives before 3.7: two brokers' log dirs (other node ids), or no directory ids
/// to tell two log dirs from one captured twice.
#[test]
fn before_3_7_two_brokers_or_no_directory_ids_are_silent() {
    let (x, y) = ids();
    for dirs in [
        [d("b1", 1, Some(&x), &["a"]), d("b2", 2, Some(&y), &["b"])],
        [d("d1", 1, None, &["a"]), d("d2", 1, None, &["b"])],
        [d("d1", 1, Some(&x), &["a"]), d("d2", 1, None, &["b"])],
    ] {
        let t = tempfile::tempdir().unwrap();
        write(t.path(), &dirs);
        let r = run(t.path(), Some("3.0.0"));
        assert!(r.broker_startup.is_empty(), "{:#?}", r.broker_startup);
    }
}

/// `KafkaRaftServerTest.testStartupFailsIfUnexpectedMetadataDir`: the metadata log in a
/// log dir other than `metadata.log.dir` stops the start (`KafkaException`). klogscan
/// knows it when two log dirs of one node hold it (at most one is `metadata.log.dir`).
#[test]
fn the_metadata_log_in_two_log_dirs_of_one_node_stops_the_start() {
    let (x, y) = ids();
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[
            d("meta", 1, Some(&x), &["__cluster_metadata"]),
            d("data", 1, Some(&y), &["__cluster_metadata", "orders"]),
        ],
    );
    for v in [None, Some("3.0.0"), Some("3.7.0")] {
        let r = run(t.path(), v);
        let f = of(&r, Kind::UnexpectedMetadataLogDir);
        assert_eq!(f.len(), 1, "{v:?}");
        assert!(f[0].message.contains("KafkaException"), "{}", f[0].message);
        // A broker's failures in the order its start meets them: before 3.7 the files'
        // comparison throws first.
        let first = if v == Some("3.0.0") {
            "InconsistentBrokerMetadataException"
        } else {
            "KafkaException"
        };
        assert_eq!(r.broker_startup[0].exception, first, "{v:?}");
        // LogManager.loadLogs never loads the metadata log: no duplicate_log_directories.
        assert!(of(&r, Kind::DuplicateLogDirectories).is_empty());
    }
    assert!(
        of(
            &run(t.path(), Some("2.7.0")),
            Kind::UnexpectedMetadataLogDir
        )
        .is_empty()
    );
}

/// Its negatives: one log dir holds it (the metadata log dir), a combined node of each of
/// two brokers holds one (a normal cluster), one log dir captured twice (one id).
#[test]
fn one_metadata_log_per_node_is_normal() {
    let (x, y) = ids();
    for dirs in [
        [
            d("meta", 1, Some(&x), &["__cluster_metadata"]),
            d("data", 1, Some(&y), &["orders"]),
        ],
        [
            d("n1", 1, Some(&x), &["__cluster_metadata"]),
            d("n2", 2, Some(&y), &["__cluster_metadata"]),
        ],
        [
            d("before", 1, Some(&x), &["__cluster_metadata"]),
            d("after", 1, Some(&x), &["__cluster_metadata"]),
        ],
    ] {
        let t = tempfile::tempdir().unwrap();
        write(t.path(), &dirs);
        let r = run(t.path(), None);
        assert!(of(&r, Kind::UnexpectedMetadataLogDir).is_empty());
        assert!(r.broker_startup.is_empty(), "{:#?}", r.broker_startup);
    }
}

/// `KafkaRaftServerTest.testLoadPropertiesWithInconsistentClusterIds` and
/// `testLoadMetaPropertiesWithInconsistentNodeId`: Kafka knows both log dirs are one
/// broker's from its configuration. On disk, log dirs of one node id and two cluster ids
/// read as broker 1 of two clusters just as well, and two node ids as two brokers: no
/// finding.
#[test]
fn differing_cluster_or_node_ids_read_as_two_brokers() {
    let (x, y) = ids();
    let mut other = d("d2", 1, Some(&y), &["b"]);
    other.cluster = OTHER_CLUSTER;
    for dirs in [
        [d("d1", 1, Some(&x), &["a"]), other],
        [d("d1", 1, Some(&x), &["a"]), d("d2", 2, Some(&y), &["b"])],
    ] {
        let t = tempfile::tempdir().unwrap();
        write(t.path(), &dirs);
        for v in [None, Some("3.0.0")] {
            let r = run(t.path(), v);
            assert!(r.broker_startup.is_empty(), "{:#?}", r.broker_startup);
        }
    }
}

/// The table says the start fails, per broker; the JSON carries `broker_startup`.
#[test]
fn verify_renders_the_broker_startup() {
    let (x, _) = ids();
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[
            d("d1", 1, Some(&x), &["orders"]),
            d("d2", 1, Some(&x), &["payments"]),
        ],
    );
    let r = run(t.path(), None);
    let json = klogscan::verify::render::to_json(&r);
    let s = &json["broker_startup"][0];
    assert_eq!(s["reason"], "duplicate_directory_id");
    assert_eq!(s["starts"], false);
    assert_eq!(s["broker"], 1);
    let mut streamed = Vec::new();
    klogscan::verify::render::write_json(&r, &mut streamed).unwrap();
    let streamed: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
    assert_eq!(streamed, json);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_klogscan"))
        .arg("verify")
        .arg(t.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("START FAILS: RuntimeException"), "{text}");
    assert!(text.contains("duplicate_directory_id"), "{text}");
    assert!(
        text.contains("1 broker start stopped by its log dirs"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// `KafkaRaftServerTest.testStartupFailsIfMetaLogDirIsOffline` and
/// `testStartupDoesNotFailIfDataDirIsOffline`, `MetaPropertiesEnsembleTest.testVerificationFailureOnMetadataLogDirWithError`:
/// a `meta.properties` the reader refuses makes its log dir an error dir — offline, the
/// start goes on — unless it is the metadata log dir (the one holding the metadata log),
/// whose error stops the start. Brokers before 3.7 read the file with other rules: not
/// judged.
#[test]
fn a_refused_meta_properties_takes_its_log_dir_offline_or_stops_the_metadata_node() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[
            d("data", 1, None, &["orders"]),
            d("meta", 1, None, &["__cluster_metadata"]),
        ],
    );
    let refuse = |name: &str| {
        std::fs::write(
            t.path().join(name).join("meta.properties"),
            "version=2\nnode.id=1\n",
        )
        .unwrap();
    };
    refuse("data");
    let r = run(t.path(), None);
    let f = of(&r, Kind::MetaPropertiesRefused);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].message.contains("offline"), "{}", f[0].message);
    assert_eq!(f[0].evidence["metadata_log"], false);
    assert!(
        r.broker_startup.is_empty(),
        "the data dir's error: the start goes on"
    );
    refuse("meta");
    let r = run(t.path(), None);
    let f = of(&r, Kind::MetaPropertiesRefused);
    assert_eq!(f.len(), 2);
    assert_eq!(r.broker_startup.len(), 1);
    let s = &r.broker_startup[0];
    assert_eq!((s.starts, s.exception), (Some(false), "RuntimeException"));
    assert!(s.log_dirs[0].ends_with("meta"), "{s:?}");
    assert!(s.assumes.is_some());
    // Before 3.7: not judged.
    assert!(of(&run(t.path(), Some("3.6.0")), Kind::MetaPropertiesRefused).is_empty());
}

/// Its negatives: a file the reader takes (v0 without `broker.id`, unknown keys), a log
/// dir without the file (a copy may leave it behind: not judged).
#[test]
fn a_meta_properties_the_reader_takes_or_a_missing_one_is_silent() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[d("a", 1, None, &["orders"]), d("b", 2, None, &["x"])],
    );
    std::fs::write(
        t.path().join("a").join("meta.properties"),
        "version=0\nsome.key=1\n",
    )
    .unwrap();
    std::fs::remove_file(t.path().join("b").join("meta.properties")).unwrap();
    let r = run(t.path(), None);
    assert!(of(&r, Kind::MetaPropertiesRefused).is_empty());
    assert!(r.broker_startup.is_empty());
}

/// Through the request (the CLI's answer): a topic filter shows no log-dir finding, and so
/// no stopped start; without one both are there.
#[test]
fn the_startup_prediction_follows_its_finding_through_filters() {
    use klogscan::request::{self, Request};
    let (x, _) = ids();
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[
            d("d1", 1, Some(&x), &["orders"]),
            d("d2", 1, Some(&x), &["payments"]),
        ],
    );
    let a = request::verify(&Request::new([t.path()]), None).unwrap();
    assert_eq!(a.report.broker_startup.len(), 1);
    let mut req = Request::new([t.path()]);
    req.filter.topics = vec!["orders".into()];
    let a = request::verify(&req, None).unwrap();
    assert!(a.report.broker_startup.is_empty());
    assert!(of(&a.report, Kind::DuplicateDirectoryId).is_empty());
}

/// v0 files with directory ids are what a ZooKeeper-mode broker migrating to KRaft writes
/// (`KafkaServer.startup` since 3.7; with a migration it runs a metadata log, and its start
/// never runs `KafkaRaftServer.initializeLogDirs`' check): the metadata log in two of its
/// log dirs stops a KRaft start only, so the finding says what it assumes, is a warning,
/// and the startup is not known (before: an error and a failed start, as for v1 files).
#[test]
fn the_metadata_log_in_two_v0_log_dirs_assumes_a_kraft_node() {
    let (x, y) = ids();
    let t = tempfile::tempdir().unwrap();
    let v0 = |x: D<'static>| D { version: 0, ..x };
    let (x, y): (&'static str, &'static str) = (x.leak(), y.leak());
    write(
        t.path(),
        &[
            v0(d("meta", 1, Some(x), &["__cluster_metadata"])),
            v0(d("data", 1, Some(y), &["__cluster_metadata", "orders"])),
        ],
    );
    let r = run(t.path(), Some("3.7.0"));
    let f = of(&r, Kind::UnexpectedMetadataLogDir);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].severity, klogscan::finding::Severity::Warning);
    assert!(f[0].evidence["assumes"].is_string(), "{:#?}", f[0].evidence);
    let s = (r.broker_startup.iter())
        .find(|s| s.reason == "unexpected_metadata_log_dir")
        .unwrap();
    assert_eq!(s.starts, None, "{s:#?}");
    assert!(s.assumes.is_some());
}
