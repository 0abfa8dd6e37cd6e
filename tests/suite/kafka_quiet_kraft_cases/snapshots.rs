//! Metadata snapshots, the log cleaned below the latest, a broker that loaded a snapshot
//! alone.

use super::quorum::{BROKER_EPOCHS, bootstrap};
use super::{
    Node, Snap, Step, VOTERS, all_loud, cluster, copy, data, elect, end_of, quorum_state, reported,
};
use crate::kafka_quiet_cluster_cases::kraft::{
    change, isr, metadata_version, partition, register, topic,
};
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::PartitionBuilder;

/// [`bootstrap`] (to offset 8), 3001 elected at epoch 2, an ISR shrink and expand and two
/// `NoOpRecord`s (to 13), 3002 elected at epoch 3 and `orders-0` moved to 2 (to 16).
fn steps() -> Vec<Step> {
    let mut s = bootstrap();
    s.extend([
        elect(3001, &VOTERS),
        data(vec![isr("orders", 0, &[1])]),
        data(vec![isr("orders", 0, &[1, 2])]),
        data(vec![MetaRecord::NoOp]),
        data(vec![MetaRecord::NoOp]),
        elect(3002, &VOTERS),
        data(vec![change("orders", 0, |c| c.leader = 2)]),
        data(vec![MetaRecord::NoOp]),
    ]);
    assert_eq!(end_of(&s), 16);
    s
}

/// The image at offset `end` (`MetadataImage.write`: features, brokers, topics), with
/// `orders-0` at partition epoch `part_epoch`; the KIP-853 voters from the second on.
fn snap(end: i64, epoch: i32, part_epoch: i32) -> Snap {
    let mut image = vec![metadata_version(19)];
    image.extend([1, 2].map(|id| register(id, BROKER_EPOCHS[id as usize - 1], id as u8, false)));
    image.extend([
        topic("orders"),
        partition("orders", 0, &[1, 2], &[1, 2], (1, 0, part_epoch)),
    ]);
    Snap {
        end,
        epoch,
        image,
        voters: (epoch > 1).then(|| VOTERS.to_vec()),
    }
}

/// The nodes: 3000 cleaned below its latest snapshot (13-2: the log starts at 13, the
/// older snapshot deleted with the segments: `KafkaMetadataLog.deleteBeforeSnapshot`,
/// `cleanSnapshots`), 3001 cleaned below its older snapshot (8-1) and holding both, 3002
/// with a snapshot of its own at 11 and its log whole, broker 1 that fetched snapshot
/// 13-2 from the leader and truncated its log fully to it before it stopped (empty log from
/// 13: `KafkaRaftClient.handleFetchSnapshotResponse` → `truncateToLatestSnapshot`,
/// `truncateFullyAndStartAt`), broker 2 whole without a snapshot. `lose_latest`: 3000 lost
/// snapshot 13-2 and kept 8-1.
fn nodes(lose_latest: bool) -> Vec<Node> {
    let s = steps();
    let qs = |voted| quorum_state(true, 3002, 3, voted);
    let upto_13 = &s[..11];
    assert_eq!(end_of(upto_13), 13);
    let mut n3000 = Node::new(3000, copy(&s, 13), qs(3002));
    n3000.snapshots.push(if lose_latest {
        snap(8, 1, 0)
    } else {
        snap(13, 2, 2)
    });
    let mut n3001 = Node::new(3001, copy(&s, 8), qs(3002));
    n3001.snapshots.extend([snap(8, 1, 0), snap(13, 2, 2)]);
    let mut n3002 = Node::new(3002, copy(&s, 0), qs(3002));
    n3002.snapshots.push(snap(11, 2, 2));
    let mut b1 = Node::new(1, copy(upto_13, 13), qs(-1));
    b1.snapshots.push(snap(13, 2, 2));
    let b2 = Node::new(2, copy(&s, 0), qs(-1));
    vec![n3000, n3001, n3002, b1, b2]
}

fn none(_: i32) -> Vec<PartitionBuilder> {
    Vec::new()
}

/// `KafkaMetadataLogTest.testAdvanceLogStartOffsetAfterCleaning`, `testDeleteSnapshots`,
/// `testCleanupOlderSnapshots`, `testSegmentsLessThanLatestSnapshot` (what cleaning
/// leaves), `testCreateReplicatedLogTruncatesFully`/`testTruncateFullyToLatestSnapshot`
/// (a node whose log is its snapshot alone), `RecordsSnapshotWriterTest`/
/// `RecordsSnapshotReaderTest` (the snapshots' framing, KIP-853 header batch),
/// `MetadataLoaderTest.testLoadEmptySnapshot…`/`testReloadSnapshot` (a broker loading the
/// snapshot then the log): nothing at warning.
#[test]
fn snapshots_and_logs_cleaned_below_them_on_every_node() {
    let b = cluster(nodes(false), &BROKER_EPOCHS, &none);
    let v = b.check();
    v.assert_quiet();
    let inv = klogscan::discover::layout::discover(&b.all());
    let h = klogscan::cluster::leadership::load_all(&inv, None, 64 << 20);
    assert_eq!((h[0].log.last_epoch, h[0].log.end_offset), (3, 16));
}

/// Twin: 3000's log starts at 13 but its only snapshot ends at 8: `recoverSnapshots`
/// forgets the snapshot below the log start and, with none at or above it, throws
/// "Inconsistent snapshot state" (`KafkaMetadataLogTest.testStartupWithInvalidSnapshotState`):
/// the node does not start.
#[test]
fn twin_a_log_cleaned_past_its_only_snapshot_does_not_start() {
    let b = cluster(nodes(true), &BROKER_EPOCHS, &none);
    let v = b.check();
    let r = reported(&v, Kind::MetadataSnapshotInconsistent);
    assert!(
        r.iter().any(|f| f.severity == Severity::Error),
        "{:#?}",
        all_loud(&v)
    );
}
