//! Kafka's own tests of a log dir's small files, reproduced as files on disk: the offset
//! checkpoints (`OffsetCheckpointFileWithFailureHandlerTest`, `CheckpointFile`'s reader),
//! `leader-epoch-checkpoint` (`LeaderEpochCheckpointFileWithFailureHandlerTest`),
//! `partition.metadata` (`PartitionMetadataFileTest`) and `meta.properties`
//! (`MetaPropertiesTest`, `MetaPropertiesVersionTest`, `MetaPropertiesEnsembleTest`).
//!
//! Each test writes the file as Kafka's writer leaves it (or as a damaged disk might) and
//! checks what klogscan reads from it and, where the broker refuses it, what `verify` says
//! the broker does next: that depends on the exception the broker's reader throws (an
//! `IOException` takes the log dir offline, other exceptions reset a checkpoint or stop the
//! broker's start). The pure parser rules are unit tests of the format crate
//! (`checkpoint::kafka_cases`). docs/testing.md maps every Kafka test to its case here.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::read::format::checkpoint::{
    TextFileKind, parse_leader_epoch_checkpoint, parse_meta_properties, parse_offset_checkpoint,
    parse_partition_metadata,
};
use klogscan::request::{self, Request};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

// ----- helpers ----------------------------------------------------------------------------

/// Broker 1's log dir holding `topic-0` (one batch of three records, clean shutdown).
fn log_dir(topic: &str) -> (TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new(topic, 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(Producer::PLAIN).records(3));
    let m = LogDirBuilder::new(1).partition(p).write(t.path()).unwrap();
    let dir = m.partitions[0].dir.clone();
    (t, dir)
}

/// Every finding `verify` gives for the log dir of partition directory `part`.
fn verify(part: &Path) -> Vec<Finding> {
    let a = request::verify(&Request::new([part.parent().unwrap()]), None).unwrap();
    a.report.findings().cloned().collect()
}

/// The `checkpoint_inconsistent` findings about `file`.
fn about(findings: &[Finding], file: &str) -> Vec<Finding> {
    findings
        .iter()
        .filter(|f| f.kind == Kind::CheckpointInconsistent && f.segment.as_deref() == Some(file))
        .cloned()
        .collect()
}

/// The one finding about `file`, with its exception.
fn one(findings: &[Finding], file: &str, exception: &str) -> Finding {
    let v = about(findings, file);
    assert_eq!(v.len(), 1, "{file}: {v:#?}");
    assert_eq!(v[0].evidence["java_exception"], exception, "{:#?}", v[0]);
    v[0].clone()
}

fn offsets(text: &str) -> BTreeMap<(String, i32), i64> {
    parse_offset_checkpoint(text.as_bytes(), TextFileKind::RecoveryPointOffsetCheckpoint)
        .unwrap()
        .into_iter()
        .map(|e| ((e.topic, e.partition), e.offset))
        .collect()
}

/// The text `CheckpointFile.write` gives `entries` (version 0, count, one line each).
fn kafka_writes(entries: &[(&str, i32, i64)]) -> String {
    let mut s = format!("0\n{}\n", entries.len());
    for (t, p, o) in entries {
        s.push_str(&format!("{t} {p} {o}\n"));
    }
    s
}

// ----- OffsetCheckpointFileWithFailureHandlerTest -------------------------------------------

/// `shouldPersistAndOverwriteAndReloadFile` and `shouldHandleMultipleLines`: what the writer
/// writes reads back as the same map, and a rewrite replaces it whole.
#[test]
fn offset_checkpoints_read_back_what_kafka_wrote() {
    let first = [("foo", 1, 5), ("bar", 2, 10)];
    let read = offsets(&kafka_writes(&first));
    assert_eq!(read.len(), 2);
    assert_eq!(read[&("foo".into(), 1)], 5);
    assert_eq!(read[&("bar".into(), 2)], 10);
    let second = [("foo", 2, 15), ("bar", 3, 20)];
    let read = offsets(&kafka_writes(&second));
    assert_eq!(read.keys().len(), 2);
    assert!(!read.contains_key(&("foo".into(), 1)));
    assert_eq!(read[&("bar".into(), 3)], 20);
    let many: Vec<(&str, i32, i64)> = (1..=5)
        .flat_map(|i| [("foo", i, 5), ("bar", i + 5, 10)])
        .collect();
    let read = offsets(&kafka_writes(&many));
    assert_eq!(read.len(), 10);
    assert!(many.iter().all(|(t, p, o)| read[&((*t).into(), *p)] == *o));
}

/// `shouldReturnEmptyMapForEmptyFile`: an empty file (what `CheckpointFile`'s constructor
/// creates) and a written empty map (`0` / `0`) read as no entries; neither is reported.
#[test]
fn empty_offset_checkpoints_are_no_entries() {
    assert!(offsets("").is_empty());
    assert!(offsets("0\n0\n").is_empty());
    let (_t, part) = log_dir("orders");
    for text in ["", "0\n0\n"] {
        for file in [
            "recovery-point-offset-checkpoint",
            "log-start-offset-checkpoint",
            "replication-offset-checkpoint",
        ] {
            std::fs::write(part.parent().unwrap().join(file), text).unwrap();
        }
        let f = verify(&part);
        for file in [
            "recovery-point-offset-checkpoint",
            "log-start-offset-checkpoint",
            "replication-offset-checkpoint",
        ] {
            let v: Vec<_> = about(&f, file)
                .into_iter()
                .filter(|f| f.partition == -1)
                .collect();
            assert!(v.is_empty(), "{text:?} {file}: {v:#?}");
        }
    }
}

/// `shouldThrowIfVersionIsNotRecognised`: a recovery-point checkpoint of version 1 fails
/// the read with an `IOException`. `LogManager.loadLogs` catches it and loads the log dir
/// from recovery point 0, but `CheckpointFileWithFailureHandler.read` has already reported
/// the log dir to `LogDirFailureChannel`: it goes offline once the broker runs (an error).
/// Near miss: the same file at version 0 is not reported.
#[test]
fn an_unknown_checkpoint_version_takes_the_log_dir_offline() {
    let (_t, part) = log_dir("orders");
    let file = part
        .parent()
        .unwrap()
        .join("recovery-point-offset-checkpoint");
    std::fs::write(&file, "1\n1\norders 0 3\n").unwrap();
    let f = one(
        &verify(&part),
        "recovery-point-offset-checkpoint",
        "IOException",
    );
    assert_eq!(f.severity, Severity::Error);
    assert!(f.message.contains("version"), "{}", f.message);
    for words in ["recovery point 0", "LogDirFailureChannel", "goes offline"] {
        assert!(f.broker_behaviour.contains(words), "{}", f.broker_behaviour);
    }
    std::fs::write(&file, "0\n1\norders 0 3\n").unwrap();
    assert!(about(&verify(&part), "recovery-point-offset-checkpoint").is_empty());
}

/// The reader's other refusals on the same path (`CheckpointReadBuffer.read`): an entry
/// whose offset is not a number throws the formatter's `NumberFormatException`, and a
/// negative count `new ArrayList<>(count)`'s `IllegalArgumentException` — neither an
/// `IOException`, so `LogManager.loadLogs` only resets the log start (or recovery point)
/// and the log dir stays online (a warning). An entry of two fields is an `IOException`.
#[test]
fn other_refusals_reset_the_checkpoint_and_keep_the_log_dir_online() {
    let (_t, part) = log_dir("orders");
    let file = part.parent().unwrap().join("log-start-offset-checkpoint");
    for (text, exception, severity) in [
        (
            "0\n1\norders 0 x\n",
            "NumberFormatException",
            Severity::Warning,
        ),
        ("0\n-1\n", "IllegalArgumentException", Severity::Warning),
        ("0\n1\norders 0\n", "IOException", Severity::Error),
    ] {
        std::fs::write(&file, text).unwrap();
        let f = one(&verify(&part), "log-start-offset-checkpoint", exception);
        assert_eq!(f.severity, severity, "{text:?}");
        assert!(
            f.broker_behaviour.contains("first segment base offset"),
            "{}",
            f.broker_behaviour
        );
        let online = f.broker_behaviour.contains("stays online");
        assert_eq!(online, severity == Severity::Warning, "{text:?}");
        // The broker's version is not known: the older reading is said too.
        let older = f.broker_behaviour.contains("brokers before 3.1");
        assert_eq!(older, severity == Severity::Warning, "{text:?}");
    }
}

/// Before 3.1 the reader was core's Scala `CheckpointReadBuffer.read`, which turned every
/// `NumberFormatException` into a malformed-line `IOException` and had no capacity to
/// refuse: with `--broker-version 3.0.0` the same two files take the log dir offline (the
/// leader-epoch file's `KafkaStorageException` also stops a 3.0 broker's start, which
/// `LogManager.loadLogs` skips only since 3.2.1); with 3.1.0 they do not, and the older
/// reading is not said.
#[test]
fn brokers_before_3_1_read_every_refusal_as_an_io_exception() {
    use klogscan::verify::{BrokerVersion, VerifyOptions};
    let (_t, part) = log_dir("orders");
    let file = part.parent().unwrap().join("log-start-offset-checkpoint");
    let leader_epoch = part.join("leader-epoch-checkpoint");
    for (version, exception) in [
        (BrokerVersion(3, 0, 0), "IOException"),
        (BrokerVersion(3, 1, 0), "NumberFormatException"),
    ] {
        let opts = VerifyOptions {
            broker_version: Some(version),
            ..Default::default()
        };
        let run = || -> Vec<Finding> {
            let r = klogscan::verify::verify(&[part.parent().unwrap().to_path_buf()], &opts);
            r.findings().cloned().collect()
        };
        std::fs::write(
            &file,
            "0
1
orders 0 x
",
        )
        .unwrap();
        std::fs::write(
            &leader_epoch,
            "0
1
zero 0
",
        )
        .unwrap();
        let findings = run();
        let f = one(&findings, "log-start-offset-checkpoint", exception);
        assert!(!f.broker_behaviour.contains("brokers before 3.1"));
        let offline = exception == "IOException";
        assert_eq!(f.broker_behaviour.contains("goes offline"), offline);
        assert_eq!(f.severity == Severity::Error, offline);
        let e: Vec<_> = findings
            .iter()
            .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
            .collect();
        assert_eq!(e.len(), 1, "{e:#?}");
        assert_eq!(e[0].evidence["java_exception"], exception);
        // Both stop the start: 3.1's `NumberFormatException` is rethrown by
        // `LogManager.loadLogs`, and so is 3.0's `IOException`, thrown as a
        // `KafkaStorageException` that `loadLogs` skips only since 3.2.1 (KAFKA-13773;
        // `kafka_ckaudit_cases::epoch_file`).
        assert!(e[0].broker_behaviour.contains("does not start"), "{e:#?}");
        assert_eq!(e[0].broker_behaviour.contains("before 3.2.1"), offline);
        std::fs::write(
            &file, "0
-1
",
        )
        .unwrap();
        let want = if offline {
            "IOException"
        } else {
            "IllegalArgumentException"
        };
        one(&run(), "log-start-offset-checkpoint", want);
    }
}

/// `replication-offset-checkpoint` is read lazily (`LazyOffsetCheckpoints`, whose mocked
/// reads `testLazyOffsetCheckpoint` counts) at a partition's first leader or follower
/// transition, with no fallback: a refused file fails those transitions — with an
/// `IOException` the log dir goes offline too.
#[test]
fn a_refused_high_watermark_checkpoint_fails_the_partitions_transitions() {
    let (_t, part) = log_dir("orders");
    let file = part.parent().unwrap().join("replication-offset-checkpoint");
    std::fs::write(&file, "0\n2\norders 0 3\n").unwrap();
    let f = one(
        &verify(&part),
        "replication-offset-checkpoint",
        "IOException",
    );
    assert_eq!(f.severity, Severity::Error);
    assert!(f.broker_behaviour.contains("LazyOffsetCheckpoints"));
    assert!(f.broker_behaviour.contains("goes offline"));
    std::fs::write(&file, "0\n1\norders zero 3\n").unwrap();
    let f = one(
        &verify(&part),
        "replication-offset-checkpoint",
        "NumberFormatException",
    );
    assert_eq!(f.severity, Severity::Error);
    assert!(f.broker_behaviour.contains("stays online"));
}

// ----- LeaderEpochCheckpointFileWithFailureHandlerTest ----------------------------------------

/// `shouldPersistAndOverwriteAndReloadFile` (also in `kafka_epoch_leadership_cases`) and
/// `shouldRetainValuesEvenIfCheckpointIsRecreated`: the file as written reads back, entry for
/// entry, whoever reads it.
#[test]
fn leader_epoch_checkpoints_read_back_what_kafka_wrote() {
    let read = |t: &[u8]| -> Vec<(i32, i64)> {
        parse_leader_epoch_checkpoint(t)
            .unwrap()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    };
    assert_eq!(read(b"0\n3\n0 1\n1 2\n2 3\n"), vec![(0, 1), (1, 2), (2, 3)]);
    assert_eq!(read(b"0\n2\n3 4\n4 5\n"), vec![(3, 4), (4, 5)]);
}

/// The cache's constructor reads the file while the partition's log is opened: a refused
/// file with an `IOException` leaves the partition unloaded and the log dir offline; one
/// whose epoch is not a number throws `NumberFormatException`, which `LogManager.loadLogs`
/// rethrows — the broker does not start.
#[test]
fn a_refused_leader_epoch_checkpoint_stops_the_load() {
    let (_t, part) = log_dir("orders");
    let file = part.join("leader-epoch-checkpoint");
    let epoch_findings = |f: &[Finding]| -> Vec<Finding> {
        f.iter()
            .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
            .cloned()
            .collect()
    };
    std::fs::write(&file, "0\n1\n0\n").unwrap();
    let v = epoch_findings(&verify(&part));
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].evidence["java_exception"], "IOException");
    assert!(v[0].broker_behaviour.contains("not loaded"));
    std::fs::write(&file, "0\n1\nzero 0\n").unwrap();
    let v = epoch_findings(&verify(&part));
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].evidence["java_exception"], "NumberFormatException");
    assert!(v[0].broker_behaviour.contains("does not start"));
}

// ----- PartitionMetadataFileTest ------------------------------------------------------------

/// `testMaybeFlushWithTopicIdPresent` and `testRead`: the two lines `maybeFlush` writes,
/// `version: 0` and `topic_id: <id>`, read back as version 0 and that id; the testkit's
/// partition directory holds such a file and `verify` says nothing of it.
#[test]
fn partition_metadata_reads_back_what_kafka_wrote() {
    let pm = parse_partition_metadata(b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A").unwrap();
    assert_eq!(
        (pm.version, pm.topic_id_string().as_str()),
        (0, "B3_HiNPgSQ6oxG9ZZ6ED5A")
    );
    let (_t, part) = log_dir("orders");
    let text = std::fs::read_to_string(part.join("partition.metadata")).unwrap();
    assert!(text.starts_with("version: 0\ntopic_id: "), "{text:?}");
    assert!(about(&verify(&part), "partition.metadata").is_empty());
}

/// `PartitionMetadataReadBuffer.read` on files it refuses, read at every load of the
/// partition (`UnifiedLog.initializeTopicId`): an `IOException` (a line that does not
/// split in two, an all-zero id) leaves the partition unloaded and takes the log dir
/// offline; a topic id that is not base64 (`IllegalArgumentException`) or a file cut before
/// its second line (`NullPointerException`) stops the broker's start. Near misses: keys
/// other than `version`/`topic_id` and lines after the second, which the reader never
/// looks at, are not reported.
#[test]
fn a_refused_partition_metadata_stops_the_partition_or_the_broker() {
    let (_t, part) = log_dir("orders");
    let file = part.join("partition.metadata");
    for (text, exception, words) in [
        (
            "version 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A",
            "IOException",
            "not loaded",
        ),
        (
            "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
            "IOException",
            "goes offline",
        ),
        (
            "version: 0\ntopic_id: B3+HiNPgSQ6oxG9ZZ6ED5A",
            "IllegalArgumentException",
            "does not start",
        ),
        ("version: 0\n", "NullPointerException", "does not start"),
    ] {
        std::fs::write(&file, text).unwrap();
        let f = one(&verify(&part), "partition.metadata", exception);
        assert_eq!(f.severity, Severity::Error, "{text:?}");
        assert_eq!(f.partition, 0);
        assert!(
            f.broker_behaviour.contains(words),
            "{text:?}: {}",
            f.broker_behaviour
        );
    }
    for text in [
        "v: 0\nid: B3_HiNPgSQ6oxG9ZZ6ED5A\n",
        "version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A\nleft: over\n",
    ] {
        std::fs::write(&file, text).unwrap();
        assert!(
            about(&verify(&part), "partition.metadata").is_empty(),
            "{text:?}"
        );
    }
}

/// Before 3.7 the reader (core's Scala `PartitionMetadataReadBuffer`) wanted version 0
/// exactly and threw an `IOException` for any other; since 3.7 any version from 0 up is
/// read (kept for downgrades). `version: 1` is an error for a 3.6 broker, nothing for 3.7,
/// and a warning naming both when the version is not known.
#[test]
fn a_partition_metadata_version_above_0_is_refused_before_3_7() {
    use klogscan::verify::{BrokerVersion, VerifyOptions};
    let (_t, part) = log_dir("orders");
    std::fs::write(
        part.join("partition.metadata"),
        "version: 1
topic_id: B3_HiNPgSQ6oxG9ZZ6ED5A",
    )
    .unwrap();
    let run = |v: Option<BrokerVersion>| -> Vec<Finding> {
        let opts = VerifyOptions {
            broker_version: v,
            ..Default::default()
        };
        let r = klogscan::verify::verify(&[part.parent().unwrap().to_path_buf()], &opts);
        about(
            &r.findings().cloned().collect::<Vec<_>>(),
            "partition.metadata",
        )
    };
    let old = run(Some(BrokerVersion(3, 6, 0)));
    assert_eq!(old.len(), 1, "{old:#?}");
    assert_eq!(old[0].severity, Severity::Error);
    assert!(old[0].broker_behaviour.contains("not loaded"));
    assert!(run(Some(BrokerVersion(3, 7, 0))).is_empty());
    let unknown = run(None);
    assert_eq!(unknown.len(), 1, "{unknown:#?}");
    assert_eq!(unknown[0].severity, Severity::Warning);
    assert!(unknown[0].broker_behaviour.contains("since 3.7"));
}

/// The KRaft metadata log's `partition.metadata` is read by `KafkaMetadataLog.apply`, which
/// catches nothing: even an `IOException` stops the node's start.
#[test]
fn a_refused_metadata_log_partition_metadata_stops_the_node() {
    let (_t, part) = log_dir("__cluster_metadata");
    std::fs::write(
        part.join("partition.metadata"),
        "version: x\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ",
    )
    .unwrap();
    let f = one(&verify(&part), "partition.metadata", "IOException");
    assert!(
        f.broker_behaviour.contains("KafkaMetadataLog.apply"),
        "{}",
        f.broker_behaviour
    );
    assert!(f.broker_behaviour.contains("stops the node's start"));
}

// ----- MetaPropertiesTest, MetaPropertiesVersionTest, MetaPropertiesEnsembleTest -------------

/// The text `Properties.store` writes for `MetaProperties.toProperties` (a blank comment,
/// a date comment, then the keys; `=` escaped nowhere it is not needed).
fn stored(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut s = String::from("#\n#Sat Dec 05 19:00:00 UTC 2026\n");
    for (k, v) in pairs {
        s.push_str(&format!("{k}={v}\n"));
    }
    s.into_bytes()
}

/// `testV0SerializationWithNothing`, `…WithJustClusterId`, `…WithJustNodeId`,
/// `…WithJustClusterIdAndNodeId`, `…WithAll`: a v0 file names the node `broker.id`, and
/// every key is optional.
#[test]
fn v0_meta_properties_read_back() {
    let cluster = "zd2vLVrZQlCLJj8-k7A10w";
    let dir = "3Adc4FjfTeypRWROmQDNIQ";
    for (pairs, node, cid, did) in [
        (vec![("version", "0")], None, None, None),
        (
            vec![("version", "0"), ("cluster.id", cluster)],
            None,
            Some(cluster),
            None,
        ),
        (
            vec![("version", "0"), ("broker.id", "0")],
            Some(0),
            None,
            None,
        ),
        (
            vec![
                ("version", "0"),
                ("cluster.id", cluster),
                ("broker.id", "0"),
            ],
            Some(0),
            Some(cluster),
            None,
        ),
        (
            vec![
                ("version", "0"),
                ("cluster.id", cluster),
                ("broker.id", "0"),
                ("directory.id", dir),
            ],
            Some(0),
            Some(cluster),
            Some(dir),
        ),
    ] {
        let m = parse_meta_properties(&stored(&pairs)).unwrap();
        assert_eq!(m.version, 0);
        assert_eq!(m.node_id, node, "{pairs:?}");
        assert_eq!(m.cluster_id.as_deref(), cid, "{pairs:?}");
        assert_eq!(m.directory_id_string().as_deref(), did, "{pairs:?}");
    }
}

/// `testV1SerializationWithoutDirectoryId`, `…WithDirectoryId`, `…WithNonUuidClusterId`
/// (`my@cluster@id`: `cluster.id` is not checked to be a UUID), and `testClusterIdRequiredInV1`
/// / `testNodeIdRequiredInV1`: a v1 file without either is refused.
#[test]
fn v1_meta_properties_read_back_and_need_both_ids() {
    for (cluster, node, dir) in [
        ("zd2vLVrZQlCLJj8-k7A10w", "0", None),
        (
            "zd2vLVrZQlCLJj8-k7A10w",
            "1",
            Some("3Adc4FjfTeypRWROmQDNIQ"),
        ),
        ("my@cluster@id", "2", None),
    ] {
        let mut pairs = vec![("version", "1"), ("cluster.id", cluster), ("node.id", node)];
        if let Some(d) = dir {
            pairs.push(("directory.id", d));
        }
        let m = parse_meta_properties(&stored(&pairs)).unwrap();
        assert_eq!(m.version, 1);
        assert_eq!(m.node_id, Some(node.parse().unwrap()));
        assert_eq!(m.cluster_id.as_deref(), Some(cluster));
        assert_eq!(m.directory_id_string().as_deref(), dir);
    }
    let e = parse_meta_properties(&stored(&[("version", "1"), ("node.id", "1")])).unwrap_err();
    assert!(e.problem.contains("cluster.id"), "{e}");
    let e = parse_meta_properties(&stored(&[("version", "1"), ("cluster.id", "c")])).unwrap_err();
    assert!(e.problem.contains("node.id"), "{e}");
}

/// `MetaPropertiesVersionTest.testV0FromNumberString`, `testV1FromNumberString`,
/// `testFromInvalidNumber` (`2`), `testFromInvalidString` (`orange`).
#[test]
fn meta_properties_versions() {
    for (v, want) in [
        ("0", Some(0)),
        ("1", Some(1)),
        ("2", None),
        ("orange", None),
    ] {
        let mut pairs = vec![("version", v)];
        if v == "1" {
            pairs.extend([("cluster.id", "c"), ("node.id", "1")]);
        }
        let got = parse_meta_properties(&stored(&pairs))
            .ok()
            .map(|m| m.version);
        assert_eq!(got, want, "{v}");
    }
}

/// `MetaPropertiesEnsembleTest.testMetaPropertiesEnsembleLoad` and `…LoadError`: a v1 file
/// `writePropertiesFile` wrote reads as its cluster and node; the error log dir of
/// `…LoadError` holds one zero byte, refused there only because the test also makes it
/// unreadable — read, it is a v0 file with no key Kafka knows (an unreadable one is
/// `hardening_unreadable.rs`'s).
#[test]
fn ensemble_load_reads_each_log_dir_file() {
    let m = parse_meta_properties(&stored(&[
        ("cluster.id", "AtgGav8yQjiaJ3rTXE7VCA"),
        ("node.id", "1"),
        ("version", "1"),
    ]))
    .unwrap();
    assert_eq!(
        (m.version, m.node_id, m.cluster_id.as_deref()),
        (1, Some(1), Some("AtgGav8yQjiaJ3rTXE7VCA"))
    );
    let m = parse_meta_properties(&[0]).unwrap();
    assert_eq!((m.version, m.node_id, m.cluster_id), (0, None, None));
}

// ----- FileQuorumStateStoreTest ------------------------------------------------------------

/// `testWriteReadElectedLeader` / `testCantReadVersionQuorumState`: `quorum-state` as
/// `FileQuorumStateStore` writes it (one JSON line with `data_version`) gives the leader and
/// epoch; a `data_version` outside the supported 0–1, or none, makes
/// `FileQuorumStateStore.readStateFromFile` throw, and the node does not start — klogscan
/// takes nothing from such a file. Only the first line is read (`readLine`).
#[test]
fn quorum_state_is_read_only_at_a_supported_data_version() {
    use klogscan::cluster::leadership::load::parse_quorum_state;
    let written = br#"{"clusterId":"","leaderId":9990,"leaderEpoch":3012,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":9990},{"voterId":9991}],"data_version":0}"#;
    let q = parse_quorum_state(written).unwrap();
    assert_eq!((q.leader_id, q.leader_epoch), (Some(9990), Some(3012)));
    let mut two_lines = written.to_vec();
    two_lines.extend_from_slice(b"\nnot json\n");
    assert_eq!(parse_quorum_state(&two_lines), Some(q));
    let v1 = br#"{"leaderId":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#;
    assert_eq!(parse_quorum_state(v1).unwrap().leader_id, Some(1));
    for bad in [
        &br#"{"leaderId":9990,"leaderEpoch":3012,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":9990}],"data_version":2}"#[..],
        br#"{"leaderId":9990,"leaderEpoch":3012,"votedId":-1}"#,
        br#"{"leaderId":1,"data_version":-1}"#,
        b"[1]",
        b"",
    ] {
        assert_eq!(parse_quorum_state(bad), None, "{}", String::from_utf8_lossy(bad));
    }
}

/// What each unreadable `quorum-state` makes the start throw
/// (`FileQuorumStateStore.readStateFromFile`, then `QuorumStateDataJsonConverter.read`,
/// whose fields of the file's version are all mandatory): the exception `verify`'s
/// `quorum_state_unreadable` names; a file every release writes reads.
#[test]
fn quorum_state_failures_name_the_exception_the_start_throws() {
    use klogscan::cluster::leadership::load::{parse_quorum_state, quorum_state_failure};
    let v0 = br#"{"clusterId":"","leaderId":1,"leaderEpoch":8,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}"#;
    let v1 = br#"{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}"#;
    for good in [&v0[..], v1] {
        assert_eq!(quorum_state_failure(good), None);
    }
    let cases: [(&[u8], &str); 7] = [
        (
            b"",
            "UncheckedIOException: Error while reading the Quorum status from the file (EOFException",
        ),
        (
            b"{not json",
            "UncheckedIOException: Error while reading the Quorum status from the file (the first line is not JSON",
        ),
        (
            b"\n{}",
            "UncheckedIOException: Error while reading the Quorum status from the file (IOException: the first line is empty",
        ),
        (
            b"[1]",
            "UncheckedIOException: Error while reading the Quorum status from the file (IOException: the first line is not a JSON object",
        ),
        (
            br#"{"leaderId":1}"#,
            "UncheckedIOException: Error while reading the Quorum status from the file (IOException: no data_version field",
        ),
        (
            br#"{"data_version":65537,"leaderId":1}"#,
            "RuntimeException: QuorumStateData: unable to locate field 'leaderEpoch', which is mandatory in version 1",
        ),
        (
            br#"{"leaderId":1,"leaderEpoch":2,"votedId":-1,"data_version":1}"#,
            "RuntimeException: QuorumStateData: unable to locate field 'votedDirectoryId', which is mandatory in version 1",
        ),
    ];
    for (text, want) in cases {
        let got = quorum_state_failure(text).unwrap_or_default();
        assert!(
            got.starts_with(want),
            "{}: {got}",
            String::from_utf8_lossy(text)
        );
        assert_eq!(parse_quorum_state(text), None);
    }
    // A v0 file without the voters written by a hand, not a release: the start throws.
    let no_voters = br#"{"clusterId":"","leaderId":1,"leaderEpoch":8,"votedId":-1,"appliedOffset":0,"data_version":0}"#;
    assert!(quorum_state_failure(no_voters).is_some_and(|e| e.contains("'currentVoters'")));
}
