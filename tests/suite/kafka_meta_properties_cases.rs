//! How a broker judges its log dirs' `meta.properties` at start (`MetaProperties.Builder`,
//! `MetaPropertiesEnsemble.verify`, `KafkaRaftServer.initializeLogDirs`) and the JBOD
//! directory ids of KIP-858 (`DirectoryId`), rebuilt as log dirs on disk and held against
//! what `klogscan verify` predicts of the start (`broker_startup`, log-dir findings).
//!
//! The cases `meta_ensemble.rs` already holds (one reserved id, one duplicate id, the
//! pre-3.7 whole-file comparison, the metadata log in two log dirs, a refused file) are
//! not repeated here; these are the ones it leaves out.

use klogscan::Finding;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::{LogDirBuilder, topic_id_for, uuid_text};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
use klogscan::verify::{BrokerVersion, VerifyOptions, VerifyReport, verify};
use std::path::Path;

const CLUSTER: &str = "H3KKO4NTRPaCWtEmm3vW7A";

/// Write a log dir `name` under `root` holding partition 0 of each of `topics` (one
/// record), with `meta` as its whole `meta.properties` (`None`: no file at all).
fn log_dir(root: &Path, name: &str, topics: &[&str], meta: Option<&str>) {
    let dir = root.join(name);
    let mut b = LogDirBuilder::new(1).cluster_id(CLUSTER);
    for t in topics {
        let mut p = PartitionBuilder::new(t, 0);
        p.append(Batch::new(Producer::PLAIN).records(1));
        b = b.partition(p);
    }
    b.write(&dir).unwrap();
    let file = dir.join("meta.properties");
    match meta {
        Some(text) => std::fs::write(file, text).unwrap(),
        None => std::fs::remove_file(file).unwrap(),
    }
}

/// A v1 file as `kafka-storage.sh format` and a 3.7+ start leave it.
fn v1(node: i32, cluster: &str, dir_id: Option<&str>) -> String {
    let mut s = format!(
        "#\n#Fri Aug 30 15:20:58 GMT 2024\nversion=1\nnode.id={node}\ncluster.id={cluster}\n"
    );
    if let Some(id) = dir_id {
        s.push_str(&format!("directory.id={id}\n"));
    }
    s
}

fn run(root: &Path, version: Option<&str>) -> VerifyReport {
    let opts = VerifyOptions {
        broker_version: version.map(|v| v.parse::<BrokerVersion>().unwrap()),
        ..Default::default()
    };
    verify(&[root.to_path_buf()], &opts)
}

fn of(r: &VerifyReport, kind: Kind) -> Vec<&Finding> {
    r.findings().filter(|f| f.kind == kind).collect()
}

/// The log-dir findings of the checks on `meta.properties` (every kind `verify::brokers`
/// gives), to assert silence.
fn meta_findings(r: &VerifyReport) -> Vec<&Finding> {
    r.findings()
        .filter(|f| {
            matches!(
                f.kind,
                Kind::ReservedDirectoryId
                    | Kind::MetaPropertiesRefused
                    | Kind::DuplicateDirectoryId
                    | Kind::InconsistentBrokerMetadata
                    | Kind::UnexpectedMetadataLogDir
            )
        })
        .collect()
}

fn id(name: &str) -> String {
    uuid_text(&topic_id_for(name))
}

/// `MetaPropertiesTest.testV1SerializationWithNonUuidClusterId` (a cluster id that is no
/// UUID, `my@cluster@id`, is read as text) with `MetaPropertiesEnsembleTest.testSuccessfulVerification`
/// (two log dirs of one node and cluster): each log dir with a `directory.id` of its own,
/// one of them the v0 file a migrated ZooKeeper broker keeps (`broker.id`, `cluster.id`) —
/// `verify` accepts mixed versions. Every broker since 3.7 starts: no finding, no
/// stopped start.
#[test]
fn agreeing_log_dirs_of_mixed_versions_and_a_text_cluster_id_start() {
    let t = tempfile::tempdir().unwrap();
    let c = "my@cluster@id";
    log_dir(t.path(), "d1", &["a"], Some(&v1(1, c, Some(&id("d1")))));
    let v0 = format!(
        "version=0\nbroker.id=1\ncluster.id={c}\ndirectory.id={}\n",
        id("d2")
    );
    log_dir(t.path(), "d2", &["b"], Some(&v0));
    for v in [None, Some("3.7.0"), Some("3.9.0"), Some("4.0.0")] {
        let r = run(t.path(), v);
        assert!(
            meta_findings(&r).is_empty(),
            "{v:?}: {:#?}",
            meta_findings(&r)
        );
        assert!(
            r.broker_startup.is_empty(),
            "{v:?}: {:#?}",
            r.broker_startup
        );
        // The identity every finding carries reads the text cluster id as it is.
        let p = &r.partitions[0];
        assert_eq!(p.source.cluster_id.as_deref(), Some(c));
        assert_eq!(p.source.broker_id, Some(1));
    }
}

/// `DirectoryIdTest.testMigratingIsReserved`, `testUnassignedIsReserved`,
/// `testLostIsReserved`: the three named ids (`new Uuid(0, 0)`, `(0, 1)`, `(0, 2)`) are
/// reserved, and `MetaPropertiesEnsemble.verify` refuses each in a `meta.properties`
/// (RuntimeException: the start fails). Each is named as what it is.
#[test]
fn the_three_named_directory_ids_stop_the_start() {
    for (text, name) in [
        ("AAAAAAAAAAAAAAAAAAAAAA", "MIGRATING"),
        ("AAAAAAAAAAAAAAAAAAAAAQ", "UNASSIGNED"),
        ("AAAAAAAAAAAAAAAAAAAAAg", "LOST"),
    ] {
        let t = tempfile::tempdir().unwrap();
        log_dir(t.path(), "d1", &["a"], Some(&v1(1, CLUSTER, Some(text))));
        let r = run(t.path(), None);
        let f = of(&r, Kind::ReservedDirectoryId);
        assert_eq!(f.len(), 1, "{name}");
        assert_eq!(f[0].evidence["reserved_as"], name);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(r.broker_startup.len(), 1, "{name}");
        assert_eq!(r.broker_startup[0].starts, Some(false));
        assert_eq!(r.broker_startup[0].exception, "RuntimeException");
    }
}

/// `MetaPropertiesEnsembleTest.testCopierGenerateValidDirectoryId`: the generator passes
/// over ids whose text starts with `-` and the reserved ones, but `verify` refuses only
/// the reserved (`DirectoryId.reserved`): an id whose text starts with `-` (written by
/// hand or another tool) and the first id above the reserved range, `new Uuid(0, 100)`,
/// are valid. The start goes on: no finding.
#[test]
fn an_id_starting_with_a_dash_or_just_above_the_reserved_range_is_valid() {
    let t = tempfile::tempdir().unwrap();
    log_dir(
        t.path(),
        "d1",
        &["a"],
        Some(&v1(1, CLUSTER, Some("-8IhIv2mTzmLqGkVEabyag"))),
    );
    log_dir(
        t.path(),
        "d2",
        &["b"],
        Some(&v1(1, CLUSTER, Some("AAAAAAAAAAAAAAAAAAAAZA"))),
    );
    let r = run(t.path(), None);
    assert!(meta_findings(&r).is_empty(), "{:#?}", meta_findings(&r));
    assert!(r.broker_startup.is_empty(), "{:#?}", r.broker_startup);
}

/// `Uuid.fromString` (what `MetaProperties.Builder` reads `directory.id` with) decodes
/// with `Base64.getUrlDecoder()`, which takes `==` padding and ignores the unused low bits
/// of the last character: `…R_dpA`, `…R_dpB` and `…R_dpA==` are one `Uuid`. Two log dirs
/// of one broker written so carry one id, and `verify` throws "Duplicate directory ID"
/// (`MetaPropertiesEnsembleTest`'s `SAMPLE_META_PROPS_LIST` id `s33AdXtkR8Gf_xRO-R_dpA`).
#[test]
fn directory_ids_that_decode_alike_are_one_id() {
    for other in ["s33AdXtkR8Gf_xRO-R_dpB", "s33AdXtkR8Gf_xRO-R_dpA=="] {
        let t = tempfile::tempdir().unwrap();
        let a = v1(1, CLUSTER, Some("s33AdXtkR8Gf_xRO-R_dpA"));
        log_dir(t.path(), "d1", &["orders"], Some(&a));
        log_dir(
            t.path(),
            "d2",
            &["payments"],
            Some(&v1(1, CLUSTER, Some(other))),
        );
        let r = run(t.path(), None);
        let f = of(&r, Kind::DuplicateDirectoryId);
        assert_eq!(f.len(), 1, "{other}: {:#?}", meta_findings(&r));
        assert_eq!(f[0].evidence["directory_id"], "s33AdXtkR8Gf_xRO-R_dpA");
        assert_eq!(r.broker_startup.len(), 1);
    }
    // Negative: `…R_dpQ` differs in a bit the decoder keeps — two ids, the start goes on.
    let t = tempfile::tempdir().unwrap();
    let a = v1(1, CLUSTER, Some("s33AdXtkR8Gf_xRO-R_dpA"));
    log_dir(t.path(), "d1", &["orders"], Some(&a));
    let b = v1(1, CLUSTER, Some("s33AdXtkR8Gf_xRO-R_dpQ"));
    log_dir(t.path(), "d2", &["payments"], Some(&b));
    let r = run(t.path(), None);
    assert!(of(&r, Kind::DuplicateDirectoryId).is_empty());
    assert!(r.broker_startup.is_empty(), "{:#?}", r.broker_startup);
}

/// `MetaPropertiesEnsembleTest.testVerificationFailureOnRequireV0`: only a ZooKeeper-mode
/// broker that is not migrating (`KafkaServer`, 3.7 to 3.9, `REQUIRE_V0`) refuses v1
/// files; a KRaft node reads them. klogscan cannot tell the mode from the files, and v1
/// files are what `kafka-storage.sh format` writes for a KRaft node: no alarm, at any
/// version.
#[test]
fn v1_files_give_no_alarm_for_a_broker_of_unknown_mode() {
    let t = tempfile::tempdir().unwrap();
    log_dir(
        t.path(),
        "d1",
        &["a"],
        Some(&v1(1, CLUSTER, Some(&id("d1")))),
    );
    log_dir(
        t.path(),
        "d2",
        &["b"],
        Some(&v1(1, CLUSTER, Some(&id("d2")))),
    );
    for v in [Some("3.7.0"), Some("3.9.0"), None] {
        let r = run(t.path(), v);
        assert!(meta_findings(&r).is_empty(), "{v:?}");
        assert!(r.broker_startup.is_empty(), "{v:?}");
    }
}

/// Whether `r` says the start of a broker holding the log dir `name` fails: a
/// `broker_startup` entry naming it (`starts` false, or unknown with what it assumes).
fn startup_names(r: &VerifyReport, name: &str) -> bool {
    r.broker_startup
        .iter()
        .any(|s| s.starts != Some(true) && s.log_dirs.iter().any(|d| d.ends_with(name)))
}

/// Whether some log-dir finding of `r` is about `name`'s `meta.properties`.
fn finding_names(r: &VerifyReport, name: &str) -> bool {
    r.log_dir_findings.iter().any(|f| {
        f.message.contains("meta.properties")
            && (f
                .source
                .log_dir
                .as_deref()
                .is_some_and(|d| d.ends_with(name))
                || f.message.contains(&format!("{name}/")))
    })
}

/// `KafkaRaftServer.initializeLogDirs` (every broker since 4.0 is a KRaft node): after
/// `verify`, each log dir's `meta.properties` must name a node id and a cluster id, else
/// `RuntimeException` ("node ID not found", "cluster ID not found") and the node does not
/// start. A v0 file may lack either (`MetaProperties.Builder` reads it;
/// `MetaPropertiesTest.testV0SerializationWithJustClusterId`, `…WithJustNodeId`), reads
/// `broker.id` and ignores `node.id`; the one-NUL-byte file of
/// `MetaPropertiesEnsembleTest.createErrorLogDir`, when readable, is such a v0 file with
/// no key the broker knows. (The positive case, a v0 file with both, is in
/// `agreeing_log_dirs_of_mixed_versions_and_a_text_cluster_id_start`.)
#[test]
fn a_kraft_start_needs_a_node_and_a_cluster_id_in_every_file() {
    for text in [
        format!("version=0\ncluster.id={CLUSTER}\n"),
        "#\n#Mon Jun 17 15:19:18 CST 2019\nversion=0\nbroker.id=0\n".to_string(),
        format!("version=0\nnode.id=1\ncluster.id={CLUSTER}\n"),
        "\0".to_string(),
    ] {
        let t = tempfile::tempdir().unwrap();
        log_dir(t.path(), "d1", &["a"], Some(&text));
        let r = run(t.path(), Some("4.0.0"));
        assert!(
            finding_names(&r, "d1"),
            "{text:?}: {:#?}",
            r.log_dir_findings
        );
        let s = r
            .broker_startup
            .iter()
            .find(|s| s.log_dirs[0].ends_with("d1"));
        let s = s.unwrap_or_else(|| panic!("{text:?}: no broker_startup"));
        assert_eq!((s.starts, s.exception), (Some(false), "RuntimeException"));
    }
}

/// `KafkaRaftServerTest.testStartupFailsIfMetaPropertiesMissingInSomeLogDir` and
/// `MetaPropertiesEnsembleTest.testMetaPropertiesEnsembleLoadEmpty`: a log dir without
/// `meta.properties` is an empty dir to the loader (`verify` passes), and then
/// `KafkaRaftServer.initializeLogDirs` throws `RuntimeException` ("No meta.properties
/// found … have you run kafka-storage.sh to format the directory?"): a KRaft node does
/// not start. Here the log dir holds partitions and the offset checkpoints a broker
/// writes, so it was a broker's log dir; whether it still is one of `log.dirs` the files
/// do not say, so a prediction that assumes it is would do (`starts` unknown).
#[test]
fn a_kraft_start_needs_meta_properties_in_every_log_dir() {
    let t = tempfile::tempdir().unwrap();
    log_dir(
        t.path(),
        "d1",
        &["a"],
        Some(&v1(1, CLUSTER, Some(&id("d1")))),
    );
    log_dir(t.path(), "d2", &["b"], None);
    let r = run(t.path(), Some("4.0.0"));
    assert!(finding_names(&r, "d2"), "{:#?}", r.log_dir_findings);
    assert!(startup_names(&r, "d2"), "{:#?}", r.broker_startup);
}

/// The negative of the two above: with the version not known, the log dirs may be a
/// ZooKeeper-mode broker's (3.x), which starts with v0 files lacking ids and writes a
/// missing `meta.properties` itself: no stopped start is claimed.
#[test]
fn without_a_version_v0_gaps_and_a_missing_file_claim_no_stopped_start() {
    let t = tempfile::tempdir().unwrap();
    log_dir(t.path(), "d1", &["a"], Some("version=0\nbroker.id=0\n"));
    log_dir(t.path(), "d2", &["b"], None);
    let r = run(t.path(), None);
    assert!(
        r.broker_startup.iter().all(|s| s.starts.is_none()),
        "{:#?}",
        r.broker_startup
    );
    assert!(meta_findings(&r).is_empty(), "{:#?}", meta_findings(&r));
}

/// `MetaPropertiesEnsemble.verify` walks the log dirs in path order and throws at the
/// first fault: with `a` and `b` sharing a directory id and `c` carrying the reserved
/// LOST, the start fails on "Duplicate directory ID" at `b` and never reaches `c`.
/// klogscan lists its startup predictions in the order a start meets them
/// (`meta_ensemble::the_metadata_log_in_two_log_dirs_of_one_node_stops_the_start`), so the
/// first one for broker 1 is the duplicate.
#[test]
fn the_first_fault_in_path_order_is_the_one_the_start_meets() {
    let t = tempfile::tempdir().unwrap();
    let x = id("shared");
    log_dir(t.path(), "a", &["orders"], Some(&v1(1, CLUSTER, Some(&x))));
    log_dir(
        t.path(),
        "b",
        &["payments"],
        Some(&v1(1, CLUSTER, Some(&x))),
    );
    let lost = v1(1, CLUSTER, Some("AAAAAAAAAAAAAAAAAAAAAg"));
    log_dir(t.path(), "c", &["refunds"], Some(&lost));
    let r = run(t.path(), None);
    // Both faults are found…
    assert_eq!(of(&r, Kind::DuplicateDirectoryId).len(), 1);
    assert_eq!(of(&r, Kind::ReservedDirectoryId).len(), 1);
    // …and the first the start meets comes first.
    let first = r
        .broker_startup
        .iter()
        .find(|s| s.broker == Some(1))
        .unwrap();
    assert_eq!(
        first.reason, "duplicate_directory_id",
        "{:#?}",
        r.broker_startup
    );
}

// ----- KIP-858: the image's directory assignment against the log dirs' ids -----------------

/// Broker 1 of cluster `c1` with two log dirs: `a` (directory id `A`, the metadata log,
/// the live `orders-0`) and `b` (directory id `B`, an `orders-0` `-future` copy: an
/// inter-log-dir move to `b`). Both copies hold a transaction left open for 20 minutes.
/// The metadata log registers the broker with both dirs and assigns its `orders-0`
/// replica to `assigned` (`PartitionRecord.directories`).
fn future_move(root: &Path, assigned: [u8; 16]) {
    use klogscan::read::format::metadata::{MetaRecord, PartitionRecord, RegisterBroker};
    use klogscan::testkit::metadata::MetadataLogBuilder;
    let (a_id, b_id) = (topic_id_for("dir a"), topic_id_for("dir b"));
    let hanging = || {
        let mut p = PartitionBuilder::new("orders", 0).start_time(T0);
        p.append(Batch::new(Producer::PLAIN).values(["a"]));
        p.append(Batch::new(Producer::transactional(900, 1)).records(2));
        p.advance_time(20 * 60_000);
        p.append(Batch::new(Producer::PLAIN).values(["b"]));
        p
    };
    let (a, b) = (root.join("a"), root.join("b"));
    for (dir, id) in [(&a, a_id), (&b, b_id)] {
        LogDirBuilder::new(1)
            .cluster_id("c1")
            .partition(hanging())
            .write(dir)
            .unwrap();
        let meta = v1(1, "c1", Some(&uuid_text(&id)));
        std::fs::write(dir.join("meta.properties"), meta).unwrap();
    }
    let future = b.join("orders-0.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-future");
    std::fs::rename(b.join("orders-0"), future).unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        MetaRecord::RegisterBroker(RegisterBroker {
            broker_id: 1,
            incarnation_id: [1; 16],
            broker_epoch: 11,
            log_dirs: vec![a_id, b_id],
            ..Default::default()
        }),
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: topic_id_for("orders"),
        },
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: topic_id_for("orders"),
            replicas: vec![1],
            isr: vec![1],
            leader: 1,
            directories: vec![assigned],
            ..Default::default()
        }),
    ]);
    m.write(&a).unwrap();
}

const T0: i64 = 1_700_000_000_000;

/// The kinds of the findings of `orders-0`'s `-future` copy.
fn future_kinds(r: &VerifyReport) -> Vec<Kind> {
    r.findings()
        .filter(|f| f.topic == "orders")
        .filter(|f| {
            f.source
                .path
                .as_deref()
                .is_some_and(|p| p.ends_with("-future"))
        })
        .map(|f| f.kind)
        .collect()
}

/// The negative of the next case: the image assigns the replica to `a`, where the live
/// copy is (`LogManager.findAbandonedFutureLogs` matches no `-future` log): the move is
/// still in progress, the live copy serves consumers, and the copy's open transaction
/// pins no last stable offset — `open_transaction`, not `hanging_transaction`.
#[test]
fn a_future_copy_of_a_move_in_progress_stays_non_live() {
    let t = tempfile::tempdir().unwrap();
    let a_id = topic_id_for("dir a");
    future_move(t.path(), a_id);
    for v in [None, Some("3.7.1")] {
        let r = run(t.path(), v);
        let kinds = future_kinds(&r);
        assert!(kinds.contains(&Kind::OpenTransaction), "{v:?}: {kinds:?}");
        assert!(
            !kinds.contains(&Kind::HangingTransaction),
            "{v:?}: {kinds:?}"
        );
        assert!(of(&r, Kind::AbandonedFutureReplica).is_empty(), "{v:?}");
    }
}

/// `LogManager.recoverAbandonedFutureLogs` (`BrokerMetadataPublisher.initializeManagers`,
/// 3.7.1 and later; `KRaftClusterTest.testAbandonedFutureReplicaRecovered_mainReplicaInOnlineLogDir`):
/// at its start a KRaft broker takes every `-future` log whose log dir's `directory.id` is
/// the one the image assigns its replica to (`PartitionRegistration.directory(brokerId)`)
/// — the controller accepted the move, the broker stopped before swapping the copies — and
/// makes it the current log (`replaceCurrentWithFutureLog`: the `-future` directory is
/// renamed `orders-0`, the old live copy is renamed `-delete`). Until that start the live
/// copy is the one served, so the copies keep their verdicts; `abandoned_future_replica`
/// says what the start does, with the copy's open transaction that will then pin the last
/// stable offset. Not before 3.7.1, and not when the image assigns the live copy's dir
/// (the negative case above).
#[test]
fn a_future_copy_the_image_assigns_becomes_the_live_log() {
    let t = tempfile::tempdir().unwrap();
    let b_id = topic_id_for("dir b");
    future_move(t.path(), b_id);
    for v in [None, Some("3.7.1")] {
        let r = run(t.path(), v);
        let found = of(&r, Kind::AbandonedFutureReplica);
        assert_eq!(
            found.len(),
            1,
            "{v:?}: {:#?}",
            r.findings().collect::<Vec<_>>()
        );
        let f = found[0];
        assert!(
            f.source
                .path
                .as_deref()
                .is_some_and(|p| p.ends_with("-future"))
        );
        assert_eq!(f.evidence["directory_id"], uuid_text(&b_id));
        assert_eq!(f.evidence["open_transactions_then_live"], 1);
        let current = f.evidence["current_path"].as_str().unwrap();
        assert!(
            current.ends_with("orders-0") && current.contains("/a/"),
            "{current}"
        );
        // Until the swap the copies keep their verdicts.
        let kinds = future_kinds(&r);
        assert!(kinds.contains(&Kind::OpenTransaction), "{v:?}: {kinds:?}");
    }
    let r = run(t.path(), Some("3.7.0"));
    assert!(of(&r, Kind::AbandonedFutureReplica).is_empty());
}
