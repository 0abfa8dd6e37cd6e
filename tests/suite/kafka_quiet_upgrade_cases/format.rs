//! One partition across the message format upgrades: magic 0 segments a 0.9 broker wrote
//! (no `.timeindex`), magic 0 segments a later broker on `log.message.format.version=0.9`
//! wrote (an empty `.timeindex`: no timestamps to index), magic 1 segments of a 0.10.0 broker
//! (before KIP-33's time index), then magic 1 and v2 batches in one segment where the format
//! was raised, and v2 segments after.

use super::{check, remove, stem};
use klogscan::finding::Kind;
use klogscan::testkit::files::encode_snapshot;
use klogscan::testkit::{
    Batch, Codec, Legacy, LogDirBuilder, PartitionBuilder, Producer, SnapshotEntry,
};
use std::path::Path;

const T2016: i64 = 1_451_606_400_000; // 2016-01-01
const PART: &str = "clicks-0";

/// Every broker version that can load this data (none of them refuses legacy batches; zstd
/// needs 2.1).
const VERSIONS: &[Option<&str>] = &[
    Some("2.2.0"),
    Some("2.8.0"),
    Some("3.9.0"),
    Some("4.0.0"),
    None,
];

/// The partition, with where each segment starts: `[0, 6, 11, 16, v2 start, 2nd v2 seg]`.
fn upgraded() -> (PartitionBuilder, Vec<i64>) {
    let mut p = PartitionBuilder::new("clicks", 0)
        .start_time(T2016)
        .leader_epoch(7);
    let mut bases = vec![0];
    // 0.9 broker: magic 0, one uncompressed run and a gzip wrapper
    p.legacy(Legacy::v0().values(["a", "b", "c"]));
    p.legacy(Legacy::v0().values(["d", "e", "f"]).codec(Codec::Gzip));
    p.roll();
    bases.push(p.next_offset());
    // a 1.x broker still on message format 0.9: magic 0 again
    p.legacy(Legacy::v0().values(["g", "h"]).codec(Codec::SnappyXerial));
    p.legacy(Legacy::v0().values(["i", "j", "k"]));
    p.roll();
    bases.push(p.next_offset());
    // a 0.10.0 broker (format 0.10.0): magic 1, before the time index existed
    p.legacy(Legacy::v1().values(["l", "m"]));
    p.legacy(Legacy::v1().values(["n", "o", "p"]).codec(Codec::Lz4));
    p.roll();
    bases.push(p.next_offset());
    // a 2.x broker, format raised from 0.10.2 to 2.x in the middle of this segment
    p.legacy(Legacy::v1().values(["q", "r"]).codec(Codec::Gzip));
    p.legacy(Legacy::v1().values(["s"]));
    bases.push(p.next_offset());
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.append(
        Batch::new(Producer::idempotent(9000, 0))
            .records(2)
            .codec(Codec::Zstd),
    );
    p.roll();
    bases.push(p.next_offset());
    p.set_leader_epoch(8);
    p.append(Batch::new(Producer::idempotent(9000, 0)).records(3));
    p.append(Batch::new(Producer::PLAIN).records(2).codec(Codec::Lz4));
    (p, bases)
}

/// The files as the brokers of each era left them: no `.timeindex` for the 0.9 and
/// 0.10.0 segments; producer snapshots at the roll of 16 (a 2.x broker, empty: no producer
/// before the v2 format) and from the upgrade on, none at 6 and 11 (rolled by brokers that
/// had no producer state).
fn as_left(dir: &Path, bases: &[i64]) {
    remove(dir, PART, &format!("{}.timeindex", stem(bases[0])));
    remove(dir, PART, &format!("{}.timeindex", stem(bases[2])));
    remove(dir, PART, &format!("{}.snapshot", stem(bases[1])));
    remove(dir, PART, &format!("{}.snapshot", stem(bases[2])));
}

/// `LogLoader.loadSegmentFiles` notes a missing time index (`timeIndexFileNewlyCreated`) and
/// `LogSegment.sanityCheck` then sizes the new one to 0 (segments of brokers before 0.10.1);
/// a magic 0 segment's time index is empty (`TimeIndex.maybeAppend` takes only a timestamp
/// above the last, and magic 0 has none: `RecordBatch.NO_TIMESTAMP`). `UnifiedLog.append`
/// assigns leader epochs only to batches of magic ≥ 2 (`maybeAssignEpochStartOffset`), so
/// `leader-epoch-checkpoint` starts at the first v2 batch (`LeaderEpochFileCache.assign`;
/// `UnifiedLogTest.testLeaderEpochCacheCreatedAfterMessageFormatUpgrade`). Producer state
/// exists only for v2 batches (`ProducerStateManager`; `UnifiedLog.rebuildProducerState`
/// writes empty snapshots while the format is below v2), and the 0.9/0.10.0 brokers that
/// rolled 6 and 11 wrote none. Every loader version after a clean shutdown: no finding.
#[test]
fn magic_0_and_1_segments_then_v2_batches_in_one_partition() {
    let (p, bases) = upgraded();
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id(super::CLUSTER)
            .partition(p),
        |d| as_left(d, &bases),
        VERSIONS,
    );
    let lec = std::fs::read_to_string(q.dir.path().join(PART).join("leader-epoch-checkpoint"));
    assert_eq!(
        lec.unwrap(),
        format!("0\n2\n7 {}\n8 {}\n", bases[4], bases[5])
    );
    let pdir = q.dir.path().join(PART);
    assert!(!pdir.join(format!("{}.timeindex", stem(0))).exists());
    assert_eq!(
        std::fs::read(pdir.join(format!("{}.timeindex", stem(bases[1]))))
            .unwrap()
            .len(),
        0
    );
    q.assert_quiet();
}

/// The twin: the same partition whose `leader-epoch-checkpoint` lacks epoch 7 — the first v2
/// batches' epoch. Every v2 append goes through `maybeAssignEpochStartOffset`, so a cache
/// that never saw epoch 7 is not Kafka's: a follower's `OffsetsForLeaderEpoch` for epoch 7
/// would be answered from epoch 8's start. Reported.
#[test]
fn twin_an_epoch_cache_missing_the_first_v2_epoch_is_reported() {
    let (p, bases) = upgraded();
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id(super::CLUSTER)
            .partition(p),
        |d| {
            as_left(d, &bases);
            let lec = d.join(PART).join("leader-epoch-checkpoint");
            std::fs::write(lec, format!("0\n1\n8 {}\n", bases[5])).unwrap();
        },
        &[None],
    );
    q.assert_reported(Kind::LeaderEpochCheckpointMismatch);
}

/// The partial upgrade: v2 batches at epoch 7, then one magic 1 entry (a produce request
/// while the topic's format was briefly back at 0.10.2 during the rolling upgrade, or a
/// leader still on the old format), then v2 batches at epoch 9. `UnifiedLog.append` (and
/// `appendAsFollower` through it) clears the leader epoch cache on an append of magic < 2
/// ("temporary regression to the message format": `cache.clearAndFlush()`), so the
/// checkpoint holds only epoch 9 from its first batch. Healthy: nothing at warning or above.
#[test]
fn an_epoch_cache_cleared_by_a_legacy_append_during_the_upgrade() {
    let (p, nine) = partial_upgrade();
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id(super::CLUSTER)
            .partition(p),
        |d| {
            let lec = d.join(PART).join("leader-epoch-checkpoint");
            std::fs::write(lec, format!("0\n1\n9 {nine}\n")).unwrap();
        },
        VERSIONS,
    );
    let lec = std::fs::read_to_string(q.dir.path().join(PART).join("leader-epoch-checkpoint"));
    assert_eq!(lec.unwrap(), format!("0\n1\n9 {nine}\n"));
    q.assert_quiet();
}

/// The twin of the partial upgrade: no legacy entry between the epochs, so nothing cleared
/// the cache and its missing epoch 7 is a real gap. Reported.
#[test]
fn twin_without_the_legacy_append_the_missing_epoch_is_reported() {
    let mut p = PartitionBuilder::new("clicks", 0)
        .start_time(T2016)
        .leader_epoch(7);
    p.legacy(Legacy::v1().values(["a", "b"]));
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.set_leader_epoch(9);
    let nine = p.next_offset();
    p.append(Batch::new(Producer::PLAIN).records(3));
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id(super::CLUSTER)
            .partition(p),
        |d| {
            let lec = d.join(PART).join("leader-epoch-checkpoint");
            std::fs::write(lec, format!("0\n1\n9 {nine}\n")).unwrap();
        },
        &[None],
    );
    q.assert_reported(Kind::LeaderEpochCheckpointMismatch);
}

/// magic 1, v2 at epoch 7, one magic 1 entry, v2 at epoch 9; the offset of epoch 9's start.
fn partial_upgrade() -> (PartitionBuilder, i64) {
    let mut p = PartitionBuilder::new("clicks", 0)
        .start_time(T2016)
        .leader_epoch(7);
    p.legacy(Legacy::v1().values(["a", "b"]));
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.legacy(Legacy::v1().values(["c"]).codec(Codec::Gzip));
    p.set_leader_epoch(9);
    let nine = p.next_offset();
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(2));
    (p, nine)
}

/// The snapshots a 2.x broker still on message format 0.10.2 left when it restarted with
/// the log end at 14: `UnifiedLog.rebuildProducerState` with a record version below v2 takes
/// empty snapshots at the last two segments' bases (6, 11) and at the log end (14, inside a
/// segment) instead of scanning; nothing removes them while their segments live
/// (`ProducerStateManager.removeAndMarkSnapshotForDeletion` goes with a deleted segment's
/// base only). `entries`: what the snapshot at 14 holds.
fn with_v1_era_snapshots(dir: &Path, bases: &[i64], entries: &[SnapshotEntry]) {
    remove(dir, PART, &format!("{}.timeindex", stem(bases[0])));
    remove(dir, PART, &format!("{}.timeindex", stem(bases[2])));
    let pdir = dir.join(PART);
    for (o, e) in [(bases[1], &[][..]), (bases[2], &[][..]), (14, entries)] {
        std::fs::write(
            pdir.join(format!("{}.snapshot", stem(o))),
            encode_snapshot(e),
        )
        .unwrap();
    }
}

/// The partition of the first case with those empty snapshots at 6, 11 and 14 — one of them
/// in the middle of a magic 1 segment. Every loader reads them as "no producer up to here",
/// which is right: no v2 batch before 19. Nothing at warning or above.
#[test]
fn empty_snapshots_of_a_restart_on_the_old_message_format() {
    let (p, bases) = upgraded();
    assert!(bases[2] < 14 && 14 < bases[3]);
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id(super::CLUSTER)
            .partition(p),
        |d| with_v1_era_snapshots(d, &bases, &[]),
        VERSIONS,
    );
    q.assert_quiet();
}

/// The twin: the snapshot at 14 names producer 9000, whose first batch (at 21) comes after
/// it — a producer state no append up to 14 could have built
/// (`ProducerStateManager.takeSnapshot` writes the producers appended below its offset).
/// Reported.
#[test]
fn twin_a_snapshot_before_the_upgrade_naming_a_later_producer_is_reported() {
    let (p, bases) = upgraded();
    let ghost = SnapshotEntry {
        producer_id: 9000,
        epoch: 0,
        last_sequence: 1,
        last_offset: 13,
        offset_delta: 1,
        timestamp: T2016,
        coordinator_epoch: -1,
        current_txn_first_offset: -1,
    };
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id(super::CLUSTER)
            .partition(p),
        |d| with_v1_era_snapshots(d, &bases, &[ghost]),
        &[None],
    );
    q.assert_reported(Kind::SnapshotMismatch);
}
