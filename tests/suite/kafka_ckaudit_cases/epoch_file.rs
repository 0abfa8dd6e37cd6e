//! The partition-level files `UnifiedLog.apply` reads while `LogManager.loadLog` opens a
//! log: `leader-epoch-checkpoint` (the `LeaderEpochFileCache` constructor, through
//! `LeaderEpochCheckpointFile.read` → `CheckpointFileWithFailureHandler.read`) and
//! `partition.metadata` (`UnifiedLog.initializeTopicId` → `PartitionMetadataFile.read`).
//! Both readers report an `IOException` to `LogDirFailureChannel` and throw it as a
//! `KafkaStorageException`; `LogManager.loadLogs` skips that one since 3.2.1 (KAFKA-13773, the
//! partition is not loaded and the log dir goes offline) and rethrows it before, as it
//! rethrows every other exception in every version (the broker does not start). So a
//! refused file stops at least its partition's load whatever the version: an error, like
//! the 2.7+ constructor's `IllegalArgumentException` on a negative entry.
//!
//! And the file `UnifiedLog.maybeCreateLeaderEpochCache` deletes unread: with a record
//! version below v2 (`message.format.version` below 0.11, honoured while the inter-broker
//! protocol is below 3.0) the load deletes `leader-epoch-checkpoint` and keeps no cache
//! (`LogLoaderTest.testLeaderEpochCacheClearedAfterStaticMessageFormatDowngrade`).

use super::{Dir, TOPIC, of_kind};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{Batch, Legacy, LogDirBuilder, PartitionBuilder, Producer};
use klogscan::verify::BrokerVersion;

/// `ck-0`: ten one-record batches at leader epoch 0 (one segment), cleanly shut down.
fn epoch0() -> Dir {
    let mut p = PartitionBuilder::new(TOPIC, 0);
    for _ in 0..10 {
        p.append(Batch::new(Producer::PLAIN).records(1));
    }
    Dir::write(LogDirBuilder::new(1).partition(p))
}

/// Broker `major.minor.0`.
fn ver(major: u32, minor: u32) -> Option<BrokerVersion> {
    Some(BrokerVersion(major, minor, 0))
}

/// A `leader-epoch-checkpoint` the reader refuses (`CheckpointReadBuffer.read`): an entry of
/// one field (`IOException`, "Malformed line") and an epoch that is not a number (the
/// formatter's `NumberFormatException`; before 3.1 core's Scala reader made it a malformed
/// line, an `IOException`). Kafka, by version: 3.9 (and 3.2.1, which has KAFKA-13773's
/// backport) — the `IOException` leaves `ck-0` unloaded and the log dir offline, the
/// `NumberFormatException` stops the start; 3.2.0 — both
/// stop the start (the `KafkaStorageException` is not caught before 3.2.1); 3.0 — both are
/// `IOException`s, both stop the start; not known — the `IOException` is said both ways.
/// Every reading is an error. Near miss: the file the broker writes for the batches (`0 0`):
/// nothing.
#[test]
fn a_refused_epoch_file_stops_the_partitions_load_in_every_version() {
    let d = epoch0();
    let file = d.root.join("ck-0/leader-epoch-checkpoint");
    let cases: [(&str, Option<BrokerVersion>, &str, &str); 8] = [
        ("0\n1\n0\n", ver(3, 9), "IOException", "not loaded"),
        (
            "0\n1\nzero 0\n",
            ver(3, 9),
            "NumberFormatException",
            "does not start",
        ),
        ("0\n1\n0\n", ver(3, 2), "IOException", "does not start"),
        (
            "0\n1\n0\n",
            Some(BrokerVersion(3, 2, 1)),
            "IOException",
            "not loaded",
        ),
        (
            "0\n1\nzero 0\n",
            ver(3, 2),
            "NumberFormatException",
            "does not start",
        ),
        ("0\n1\nzero 0\n", ver(3, 0), "IOException", "does not start"),
        ("0\n1\n0\n", None, "IOException", "not loaded"),
        (
            "0\n1\nzero 0\n",
            None,
            "NumberFormatException",
            "does not start",
        ),
    ];
    for (text, version, exception, fate) in cases {
        std::fs::write(&file, text).unwrap();
        let v = d.verify_as(version);
        let f = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
        assert_eq!(f.len(), 1, "{text:?} {version:?}: {f:#?}");
        assert_eq!(f[0].severity, Severity::Error, "{text:?} {version:?}");
        assert_eq!(f[0].evidence["java_exception"], exception, "{version:?}");
        let b = &f[0].broker_behaviour;
        assert!(b.contains(fate), "{text:?} {version:?}: {b}");
        if version == ver(3, 2) && exception == "IOException" {
            assert!(b.contains("KAFKA-13773") && !b.contains("offline"), "{b}");
        }
        if version.is_none() && exception == "IOException" {
            assert!(
                b.contains("before 3.2.1") && b.contains("does not start"),
                "{b}"
            );
        }
    }
    std::fs::write(&file, "0\n1\n0 0\n").unwrap();
    for version in [None, ver(3, 9), ver(3, 2)] {
        let v = d.verify_as(version);
        let f = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
        assert!(f.is_empty(), "{version:?}: {f:#?}");
    }
}

/// The two ways the constructor refuses a file, side by side for a broker known to be 2.7
/// or later (`LeaderEpochFileCache`'s `assign` on a negative entry throws
/// `IllegalArgumentException`; the reader's malformed line an `IOException`): both stop the
/// partition's load, both are errors. Without a version they part, as Kafka's versions do: a
/// broker before 2.7 keeps the negative entry and loads (a warning naming both readings),
/// while every version refuses the malformed file (an error).
#[test]
fn a_negative_entry_and_a_refused_file_are_errors_alike_for_a_2_7_broker() {
    let d = epoch0();
    let file = d.root.join("ck-0/leader-epoch-checkpoint");
    let severity = |text: &str, version| {
        std::fs::write(&file, text).unwrap();
        let v = d.verify_as(version);
        let f = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
        assert_eq!(f.len(), 1, "{text:?}: {f:#?}");
        f[0].severity
    };
    for version in [ver(2, 7), ver(3, 9)] {
        assert_eq!(severity("0\n1\n-1 0\n", version), Severity::Error);
        assert_eq!(severity("0\n1\n0\n", version), Severity::Error);
    }
    assert_eq!(severity("0\n1\n-1 0\n", None), Severity::Warning);
    assert_eq!(severity("0\n1\n0\n", None), Severity::Error);
    assert_eq!(severity("0\n1\n0\n", ver(2, 6)), Severity::Error);
}

/// `partition.metadata` the reader refuses with an `IOException` (the all-zero topic id):
/// since 3.2.1 the partition is not loaded and the log dir goes offline; a broker from 2.8
/// (the first to keep the file) to 3.2.0 rethrows the `KafkaStorageException` and does not
/// start. Near miss: the file as written, nothing.
#[test]
fn a_refused_partition_metadata_stops_the_start_before_3_2_1() {
    let d = epoch0();
    let file = d.root.join("ck-0/partition.metadata");
    let written = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n").unwrap();
    for (version, fate) in [
        (ver(3, 3), "not loaded"),
        (Some(BrokerVersion(3, 2, 1)), "not loaded"),
        (ver(3, 2), "does not start"),
        (ver(2, 8), "does not start"),
    ] {
        let v = d.verify_as(version);
        let f: Vec<_> = (v.findings())
            .filter(|f| f.segment.as_deref() == Some("partition.metadata"))
            .collect();
        assert_eq!(f.len(), 1, "{version:?}: {f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].evidence["java_exception"], "IOException");
        assert!(
            f[0].broker_behaviour.contains(fate),
            "{version:?}: {}",
            f[0].broker_behaviour
        );
    }
    std::fs::write(&file, written).unwrap();
    let v = d.verify_as(ver(3, 2));
    assert!(
        v.findings()
            .all(|f| f.segment.as_deref() != Some("partition.metadata"))
    );
}

// ----- the file a record version below v2 deletes ----------------------------------------

/// v2 batches at leader epoch 5, then a v1 one (`LogLoaderTest.testLeaderEpochCacheClearedAfterStaticMessageFormatDowngrade`:
/// the log reopened with `message.format.version` 0.10.2 deletes the file, and the v1 append
/// keeps no cache).
fn downgraded() -> PartitionBuilder {
    let mut p = PartitionBuilder::new(TOPIC, 0).leader_epoch(5);
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.legacy(Legacy::v1().values(["bar"]));
    p
}

/// Kafka's shape: no `leader-epoch-checkpoint` at all, beside v2 batches that carry epoch 5
/// (with or without the v1 batch after them). Whether the next load deletes the file or
/// builds a cache depends on the topic's `message.format.version` and the broker's
/// `inter.broker.protocol.version`, which live in ZooKeeper and `server.properties`, not in
/// the log dir; the batches' magic says which format wrote them, not which one is configured
/// now (a downgraded topic still holds its v2 batches; an upgraded one its v1 batches). So
/// klogscan reads a missing file as no claim — quiet — and judges a file that is there as
/// the load reads it: its existence shows the cache was made when the broker last opened
/// the log (a record version below v2 deletes it at every opening and never writes it).
/// Near miss: an empty file (`0`/`0`) beside the v2 batches alone — a cache that lost the
/// epochs — reported "holds no entry"; beside the v1 batch after them, the append path's
/// `clearAndFlush` writes that very file: quiet.
#[test]
fn a_missing_epoch_file_is_no_claim_whatever_the_message_format() {
    let v2_only = || {
        let mut p = PartitionBuilder::new(TOPIC, 0).leader_epoch(5);
        p.append(Batch::new(Producer::PLAIN).records(2));
        p
    };
    for p in [downgraded(), v2_only()] {
        let d = Dir::write(LogDirBuilder::new(1).partition(p));
        std::fs::remove_file(d.root.join("ck-0/leader-epoch-checkpoint")).unwrap();
        super::assert_quiet(&d, &d.verify());
    }
    let d = Dir::write(LogDirBuilder::new(1).partition(v2_only()));
    d.put("ck-0/leader-epoch-checkpoint", "0\n0\n");
    let v = d.verify();
    let f = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(f[0].message.contains("holds no entry"), "{}", f[0].message);
    let d = Dir::write(LogDirBuilder::new(1).partition(downgraded()));
    d.put("ck-0/leader-epoch-checkpoint", "0\n0\n");
    super::assert_quiet(&d, &d.verify());
}
