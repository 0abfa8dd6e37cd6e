//! A ZooKeeper-mode broker's log dir after years of upgrades: `meta.properties` v0 as the
//! first broker wrote it, partitions from before 2.8 (no `partition.metadata`) beside ones
//! that have it, and the offset checkpoints of every era — `log-start-offset-checkpoint`
//! listing only a log whose start moved, `cleaner-offset-checkpoint` only for the compacted
//! topic.

use super::{check, remove};
use klogscan::finding::Kind;
use klogscan::testkit::files::{encode_offset_checkpoint, topic_id_for, uuid_text};
use klogscan::testkit::{Batch, Codec, Legacy, LogDirBuilder, PartitionBuilder, Producer, Rec};
use std::path::Path;

const T2019: i64 = 1_546_300_800_000;

/// ZooKeeper-mode brokers that read these files, and a current one.
const ZK_ERA: &[Option<&str>] = &[
    Some("2.2.0"),
    Some("2.7.0"),
    Some("3.6.0"),
    Some("3.9.0"),
    None,
];

fn events(n: i32) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("events", n).start_time(T2019);
    p.append(Batch::new(Producer::PLAIN).records(4));
    p.append(Batch::new(Producer::PLAIN).records(3));
    p
}

/// `users-0`, compacted: keyed records only.
fn users() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("users", 0).start_time(T2019);
    for i in 0..3 {
        p.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::kv(format!("u{i}"), "v1"))
                .record(Rec::kv(format!("u{i}"), "v2")),
        );
    }
    p
}

fn broker() -> LogDirBuilder {
    LogDirBuilder::new(2)
        .partition(events(0))
        .partition(events(1))
        .partition(users())
        .partition({
            let mut p = PartitionBuilder::new("payments", 0).start_time(T2019 + 86_400_000);
            p.append(Batch::new(Producer::idempotent(40, 0)).records(3));
            p
        })
        .log_start_offset("events", 1, 4)
}

/// The files the builder writes that brokers of these eras did not: `events-*` were created
/// on 2.7 and their replicas never got a LeaderAndIsr carrying a topic id since the IBP moved
/// to 2.8 (no `partition.metadata`); the cleaner ran on `users-0` only.
fn as_left(dir: &Path) {
    remove(dir, "events-0", "partition.metadata");
    remove(dir, "events-1", "partition.metadata");
    let cleaned = vec![("users".to_string(), 0, 4)];
    std::fs::write(
        dir.join("cleaner-offset-checkpoint"),
        encode_offset_checkpoint(&cleaned),
    )
    .unwrap();
}

/// `meta.properties` v0 with only `broker.id` (what `BrokerMetadataCheckpoint` wrote before
/// KIP-78's `cluster.id`; a ZooKeeper broker reads it, `MetaProperties.Builder` takes a v0
/// file without a cluster id), partitions created before KIP-516 without `partition.metadata`
/// (a ZooKeeper broker writes it from `UnifiedLog.assignTopicId` once a LeaderAndIsr request
/// carries the topic id, none before), `log-start-offset-checkpoint` naming only `events-1`
/// (`LogManager.checkpointLogStartOffsetsInDir` writes a log only when its start is above its
/// first segment's base: the others start at 0), and `cleaner-offset-checkpoint` naming only
/// the compacted topic (`LogCleanerManager.updateCheckpoints` after a cleaning). No finding
/// at any version of a ZooKeeper broker.
#[test]
fn a_zookeeper_log_dir_from_before_topic_ids_and_cluster_ids() {
    let q = check(broker(), as_left, ZK_ERA);
    let root = q.dir.path();
    let meta = std::fs::read_to_string(root.join("meta.properties")).unwrap();
    assert!(meta.contains("version=0\nbroker.id=2\n") && !meta.contains("cluster.id"));
    let ls = std::fs::read_to_string(root.join("log-start-offset-checkpoint")).unwrap();
    assert_eq!(ls, "0\n1\nevents 1 4\n");
    assert!(!root.join("events-0/partition.metadata").exists());
    assert!(root.join("payments-0/partition.metadata").exists());
    q.assert_quiet();
}

/// The twin: `events-1` carries a `partition.metadata` whose topic id is not the one its
/// sibling `events-0` and the rest of the cluster have (a topic deleted and re-created under
/// the same name while this replica was away). `UnifiedLog.assignTopicId` throws
/// `InconsistentTopicIdException` when the next LeaderAndIsr brings the real id, and the
/// partition goes offline on this broker. Reported.
#[test]
fn twin_a_partition_of_the_same_topic_with_another_topic_id_is_reported() {
    let q = check(
        broker(),
        |d| {
            as_left(d);
            let id = uuid_text(&topic_id_for("events"));
            std::fs::write(
                d.join("events-0/partition.metadata"),
                format!("version: 0\ntopic_id: {id}"),
            )
            .unwrap();
            let other = uuid_text(&topic_id_for("events-recreated"));
            std::fs::write(
                d.join("events-1/partition.metadata"),
                format!("version: 0\ntopic_id: {other}"),
            )
            .unwrap();
        },
        &[None],
    );
    assert!(!q.all_loud().is_empty(), "nothing reported");
}

/// The twin of the checkpoints: `log-start-offset-checkpoint` names `events-0` at 9, past its
/// log end (7). `LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd` (run at every load,
/// clean or not) deletes every segment and starts the log at 9: every record lost. Reported.
#[test]
fn twin_a_log_start_past_the_log_end_is_reported() {
    let q = check(broker().log_start_offset("events", 0, 9), as_left, &[None]);
    q.assert_reported(Kind::CheckpointInconsistent);
}

/// `metrics-0` as a 0.10.2 broker left it: magic 1 only, two segments.
fn metrics_0_10() -> LogDirBuilder {
    let mut p = PartitionBuilder::new("metrics", 0).start_time(T2019 - 700 * 86_400_000);
    p.legacy(Legacy::v1().values(["a", "b", "c"]));
    p.legacy(Legacy::v1().values(["d", "e"]).codec(Codec::SnappyXerial));
    p.roll();
    p.legacy(Legacy::v1().values(["f", "g"]).codec(Codec::Gzip));
    LogDirBuilder::new(3)
        .cluster_id(super::CLUSTER)
        .partition(p)
}

/// What a 0.10.2 broker never wrote: `log-start-offset-checkpoint` (0.11, KIP-107),
/// `leader-epoch-checkpoint` (0.11, KIP-101), producer snapshots (0.11, KIP-98),
/// `partition.metadata` (2.8, KIP-516).
fn as_0_10_left(dir: &Path) {
    std::fs::remove_file(dir.join("log-start-offset-checkpoint")).unwrap();
    for f in ["leader-epoch-checkpoint", "partition.metadata"] {
        remove(dir, "metrics-0", f);
    }
    for e in std::fs::read_dir(dir.join("metrics-0")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(path).unwrap();
        }
    }
}

/// A log dir last written by 0.10.2, first read by a newer broker: the missing checkpoint
/// files are created empty (`CheckpointFile`'s constructor: `Files.createFile`; an empty
/// `LeaderEpochFileCache`), and with no producer snapshot after a clean shutdown
/// `UnifiedLog.rebuildProducerState` takes the upgrade path — "the absence of producer
/// snapshot files" after a clean shutdown — and writes empty snapshots without scanning.
/// Nothing at warning or above, a clean start.
#[test]
fn a_log_dir_last_written_by_0_10_2() {
    let q = check(
        metrics_0_10(),
        as_0_10_left,
        &[
            Some("1.1.0"),
            Some("2.2.0"),
            Some("2.8.0"),
            Some("3.9.0"),
            None,
        ],
    );
    assert!(!q.dir.path().join("log-start-offset-checkpoint").exists());
    q.assert_quiet();
}

/// The twin: the first segment's `.index` is missing too (an offset index every broker
/// writes). `LogSegment.sanityCheck` throws `NoSuchFileException` and
/// `LogLoader.loadSegmentFiles` recovers that segment (rebuilding its indexes) even after a
/// clean shutdown: `verify` predicts that recovery.
#[test]
fn twin_a_segment_without_its_offset_index_is_recovered() {
    let q = check(
        metrics_0_10(),
        |d| {
            as_0_10_left(d);
            remove(d, "metrics-0", &format!("{}.index", super::stem(0)));
        },
        &[None],
    );
    let (_, r) = &q.verify[0];
    let pr = &r.partitions[0].prediction;
    assert!(!pr.recovered_segments.is_empty(), "{pr:#?}");
}
