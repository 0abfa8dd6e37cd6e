//! The partition and log-dir files as a broker leaves them: a log start moved by retention
//! or by DeleteRecords, every segment deleted by retention, leader epoch changes (one
//! assigned at `makeLeader` with no batch yet), a KRaft broker's clean-shutdown file and
//! `meta.properties`, offset and time indexes at the default interval.

use super::{Quiet, check_dir, copy_snapshots, snapshot_name, write_and_check};
use klogscan::testkit::files::{
    encode_offset_checkpoint, encode_snapshot, topic_id_for, uuid_text,
};
use klogscan::testkit::{
    Batch, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer, Rec,
};

/// The writes of one partition over four segments of 30 offsets: producer 21 only in the
/// first two, producer 22 throughout, plain batches between; leader epochs 0 from 0, 1 from
/// 45, 2 from 75. `from`: only the batches from that offset on (what retention leaves;
/// the batches below are still written to the builder's producer state when `from` is 0).
fn metrics_log(topic: &str, partition: i32, from: i64) -> PartitionBuilder {
    let p21 = Producer::idempotent(21, 0);
    let p22 = Producer::idempotent(22, 1);
    let mut p = PartitionBuilder::new(topic, partition).start_offset(from);
    let mut seq = (0, 0);
    for i in 0..40i64 {
        let offset = i * 3;
        if offset > 0 && offset % 30 == 0 {
            p.roll();
        }
        let epoch = match offset {
            0..45 => 0,
            45..75 => 1,
            _ => 2,
        };
        let ts = klogscan::testkit::scenario::DEFAULT_START_MS + 60_000 * i;
        let b = match i % 3 {
            0 if offset < 60 => {
                seq.0 += 3;
                Batch::new(p21).records(3).sequence(seq.0 - 3)
            }
            1 => {
                seq.1 += 3;
                Batch::new(p22).records(3).sequence(seq.1 - 3)
            }
            _ => Batch::new(Producer::PLAIN).records(3),
        };
        if offset >= from {
            p.append(b.at(ts).leader_epoch(epoch));
        }
    }
    p
}

/// Retention deleted the first two segments (`UnifiedLog.deleteOldSegments` →
/// `deleteSegments`): the log starts at the first kept segment's base, so
/// `LogManager.checkpointLogStartOffsetsInDir` writes no entry; the deleted segments'
/// snapshots went with them (`deleteProducerSnapshots`), the kept ones are those taken at
/// the rolls before the deletion, and they still hold producer 21, whose batches are all
/// gone (`UnifiedLogTest.testProducerIdExpirationOnSegmentDeletion`: deleting segments
/// does not remove producer state); the leader epoch cache was truncated to the new start
/// (`LeaderEpochFileCache.truncateFromStart`: epoch 1 now starts at 60). Producer 22's
/// first batch in the log has sequence 30.
/// A second partition had its start moved inside its first segment by DeleteRecords
/// (`UnifiedLog.maybeIncrementLogStartOffset`): that one gets a `log-start-offset-checkpoint`
/// entry and its epoch 1 entry starts at 70.
#[test]
fn log_start_moved_by_retention_and_by_delete_records() {
    let full = tempfile::tempdir().unwrap();
    let written = LogDirBuilder::new(1)
        .partition(metrics_log("metrics", 0, 0))
        .partition(metrics_log("metrics", 1, 0))
        .write(full.path())
        .unwrap();
    let fulls: Vec<_> = written.partitions.iter().map(|m| m.dir.clone()).collect();
    let ld = LogDirBuilder::new(1)
        .partition(metrics_log("metrics", 0, 60))
        .partition(metrics_log("metrics", 1, 60))
        .log_start_offset("metrics", 1, 70);
    let q = write_and_check(ld, |dir| {
        for (part, from) in fulls.iter().enumerate() {
            let to = dir.join(format!("metrics-{part}"));
            copy_snapshots(from, &to, &[60, 90, 120]);
        }
        std::fs::write(
            dir.join("metrics-1/leader-epoch-checkpoint"),
            "0\n2\n1 70\n2 75\n",
        )
        .unwrap();
    });
    let lec = std::fs::read_to_string(q.dir.path().join("metrics-0/leader-epoch-checkpoint"));
    assert_eq!(lec.unwrap(), "0\n2\n1 60\n2 75\n");
    let snap = std::fs::read(q.dir.path().join("metrics-0").join(snapshot_name(60))).unwrap();
    assert_eq!(
        snap.len(),
        10 + 2 * 46,
        "producers 21 and 22 at the roll to 60"
    );
    q.assert_quiet();
    let v0 = &q.verify.partitions[0].prediction;
    assert_eq!(v0.log_start_offset_after, Some(60));
    // `ProducerStateManager.truncateAndReload` deletes the snapshot at the log start
    assert_eq!(v0.leftovers.len(), 1);
    assert_eq!(v0.leftovers[0].file, snapshot_name(60));
    let v1 = &q.verify.partitions[1].prediction;
    assert_eq!(v1.log_start_offset_after, Some(70));
}

/// Retention deleted every segment of an idle topic: `UnifiedLog.deleteSegments` rolls a new empty
/// active segment at the log end first (`UnifiedLogTest.testRetentionDeletesProducerStateSnapshots`
/// with `createEmptyActiveSegment`), so the directory holds one empty `.log` with empty (trimmed)
/// indexes, the snapshot of that roll (its producers expired a week ago: empty), the epoch cache
/// truncated to the new start, and the log start is that segment's base (no
/// `log-start-offset-checkpoint` entry).
#[test]
fn every_segment_deleted_by_retention_leaves_an_empty_active_segment() {
    let mut other = PartitionBuilder::new("busy", 0);
    other.append(Batch::new(Producer::PLAIN).records(4));
    let ld = LogDirBuilder::new(1).partition(other);
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    let idle = dir.path().join("idle-0");
    std::fs::create_dir(&idle).unwrap();
    let base = format!("{:020}", 30);
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(idle.join(format!("{base}.{ext}")), b"").unwrap();
    }
    std::fs::write(idle.join(snapshot_name(30)), encode_snapshot(&[])).unwrap();
    std::fs::write(idle.join("leader-epoch-checkpoint"), "0\n1\n3 30\n").unwrap();
    let id = uuid_text(&topic_id_for("idle"));
    std::fs::write(
        idle.join("partition.metadata"),
        format!("version: 0\ntopic_id: {id}"),
    )
    .unwrap();
    let ends = vec![("busy".to_string(), 0, 4), ("idle".to_string(), 0, 30)];
    for f in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ] {
        std::fs::write(dir.path().join(f), encode_offset_checkpoint(&ends)).unwrap();
    }
    let (scan, verify) = check_dir(dir.path());
    let mut manifest = manifest;
    let mut m = manifest.partitions[0].clone();
    m.topic = "idle".into();
    m.log_end_offset = 30;
    manifest.partitions.push(m);
    let q = Quiet {
        dir,
        manifest,
        scan,
        verify,
    };
    q.assert_quiet();
}

/// Leader epochs as the cache records them: `UnifiedLog.appendAsLeader` /
/// `appendAsFollower` call `LeaderEpochFileCache.assign` for each batch of a new epoch
/// (epochs 0, 2 and 5: the leader of epoch 1 took no write, and an entry assigned at the
/// same offset replaces it), and `Partition.makeLeader` assigns the new leader's epoch at the
/// log end before any write (`UnifiedLog.maybeAssignEpochStartOffset`): this broker became
/// leader at epoch 7 and shut down before a batch arrived, so the checkpoint ends with
/// `7 30` = the log end (`LeaderEpochFileCacheTest.shouldAddEpochAndMessageOffsetToCache`).
/// The log dir is a KRaft broker's (3.7+): `meta.properties` version 1 with `node.id` and
/// `directory.id`, and `.kafka_cleanshutdown` holding the broker epoch as JSON
/// (`CleanShutdownFileHandler.write`).
#[test]
fn leader_epoch_changes_and_an_epoch_assigned_before_any_write() {
    let mut p = PartitionBuilder::new("orders", 3);
    for (epoch, n) in [(0, 4), (2, 3), (5, 3)] {
        p.set_leader_epoch(epoch);
        for _ in 0..n {
            p.append(Batch::new(Producer::idempotent(77, 0)).records(3));
        }
    }
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |dir| {
        std::fs::write(
            dir.join("orders-3/leader-epoch-checkpoint"),
            "0\n4\n0 0\n2 12\n5 21\n7 30\n",
        )
        .unwrap();
        let dir_id = uuid_text(&topic_id_for("log-dir-1"));
        std::fs::write(
            dir.join("meta.properties"),
            format!(
                "#\n#Tue Mar 04 10:00:00 UTC 2025\nnode.id=1\ndirectory.id={dir_id}\n\
                 version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join(".kafka_cleanshutdown"),
            "{\"version\":0,\"brokerEpoch\":42}",
        )
        .unwrap();
    });
    assert_eq!(q.manifest.partitions[0].log_end_offset, 30);
    q.assert_quiet();
}

/// Offset-index entries as `LogSegment.append` adds them with the default
/// `index.interval.bytes` (4096) over batches of a few KiB, time-index entries beside them
/// (`TimeIndex.maybeAppend` with the segment's max timestamp so far), and the final
/// time-index entry of every inactive segment (`LogSegment.onBecomeInactiveSegment`), all
/// trimmed to their entries by the clean shutdown (`AbstractIndex.trimToValidSize`;
/// `LogSegmentTest.testReloadLargestTimestampAndNextOffsetAfterTruncation`-style data).
#[test]
fn default_index_interval_over_large_batches() {
    let mut p = PartitionBuilder::new("blobs", 0)
        .segment_bytes(64 * 1024)
        .broker_files(PartitionFileOptions::default());
    for i in 0..80 {
        let value = format!("{i:0>1500}");
        p.append(
            Batch::new(Producer::idempotent(3, 0))
                .record(Rec::kv(format!("k{i}"), &value))
                .record(Rec::kv(format!("j{i}"), &value)),
        );
    }
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    let dir = &q.manifest.partitions[0].dir;
    let idx = std::fs::metadata(dir.join("00000000000000000000.index")).unwrap();
    assert!(idx.len() >= 8 * 8, "entries every 4096 bytes");
    q.assert_quiet();
}
