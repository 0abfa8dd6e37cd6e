//! Kafka's KRaft log, snapshot and quorum-state tests, the methods no test cited before
//! (apache/kafka trunk of 2024-10: `raft/src/test/java/org/apache/kafka/raft/`'s
//! `QuorumStateTest`, `ElectionStateTest`, `FileQuorumStateStoreTest`,
//! `KafkaRaftClientTest`, `KafkaRaftClientSnapshotTest`, `VoterSetTest`,
//! `internals/KRaftControlRecordStateMachineTest` and `internals/VoterSetHistoryTest`, and
//! `RaftEventSimulationTest`'s invariants), as the files a node leaves on disk:
//!
//! * [`quorum`]: `quorum-state` as `QuorumState.initialize` reads it at every start — no
//!   file, an empty one, an election in progress, a vote, the node's own candidacy or
//!   leadership, an epoch below the log's, a leader outside the voter set, a leftover
//!   `quorum-state.tmp`, and two nodes naming two leaders for one epoch.
//! * [`snapshots`]: a follower that stopped while fetching the leader's snapshot (a
//!   `.checkpoint.part` above its log end), a former leader's uncommitted tail below the new
//!   leader's log start, and the metadata log's `leader-epoch-checkpoint` against its
//!   batches.
//! * [`voters`]: KIP-853 voter sets through the log — `kraft.version` upgraded after a
//!   snapshot without voters, one voter changed at a time, a snapshot's voters overridden by
//!   the log, a voter change in a truncated tail, and a change of two voters at once, which
//!   every start refuses.
//!
//! Each case writes three dedicated controllers (3000–3002) and two brokers (1, 2) with the
//! testkit (`kafka_quiet_kraft_cases`' writers: one `__cluster_metadata-0` copy per node,
//! its `quorum-state` and snapshots), runs `scan`, `verify` and the merge of the nodes'
//! `collect` bundles, and asserts what Kafka's node does with those bytes. Each has a near
//! miss. Where klogscan's answer differs from Kafka's, the test asserts Kafka's and is
//! `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

mod quorum;
mod snapshots;
mod voters;

use crate::kafka_quiet_cluster_cases::kraft::{isr, metadata_version, partition, register, topic};
use crate::kafka_quiet_cluster_cases::{Brokers, Verdict};
use crate::kafka_quiet_kraft_cases::{
    BROKERS, Node, Snap, Step, VOTERS, all_loud, cluster, copy, data, elect, end_of, epoch_of,
};
use klogscan::cluster::leadership::{self, MetadataLog};
use klogscan::finding::{Finding, Severity};
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::PartitionBuilder;
use std::path::PathBuf;

/// The brokers' epochs (their registrations' offsets) of [`bootstrap`].
use crate::kafka_quiet_kraft_cases::quorum::BROKER_EPOCHS;

/// The first writes (offsets 0–7, epoch 1): 3000 elected by 3000 and 3001, the metadata
/// version, brokers 1 and 2 registering and unfenced, `orders-0` created on both — the
/// quiet KRaft cases' own start.
fn bootstrap() -> Vec<Step> {
    let s = crate::kafka_quiet_kraft_cases::quorum::bootstrap();
    assert_eq!(end_of(&s), 8);
    s
}

/// [`bootstrap`], then 3001 elected at epoch 2, an ISR shrink and expand, 3002 elected at
/// epoch 3 and an idle `NoOpRecord` (to offset 14).
fn life() -> Vec<Step> {
    let mut s = bootstrap();
    s.extend([
        elect(3001, &VOTERS),
        data(vec![isr("orders", 0, &[1])]),
        data(vec![isr("orders", 0, &[1, 2])]),
        elect(3002, &VOTERS),
        data(vec![MetaRecord::NoOp]),
        data(vec![MetaRecord::NoOp]),
    ]);
    assert_eq!((end_of(&s), epoch_of(&s)), (14, 3));
    s
}

/// The image a snapshot holds (`MetadataImage.write`): the metadata version, the brokers,
/// `orders-0` at partition epoch `part_epoch`.
fn image(part_epoch: i32) -> Vec<MetaRecord> {
    let mut image = vec![metadata_version(19)];
    image.extend([1, 2].map(|id| register(id, BROKER_EPOCHS[id as usize - 1], id as u8, false)));
    image.extend([
        topic("orders"),
        partition("orders", 0, &[1, 2], &[1, 2], (1, 0, part_epoch)),
    ]);
    image
}

/// A snapshot `<end>-<epoch>` of [`image`], with the KIP-853 voters `voters`.
fn snap(end: i64, epoch: i32, voters: Option<Vec<i32>>) -> Snap {
    Snap {
        end,
        epoch,
        image: image(2),
        voters,
    }
}

/// Every node with its copy of `steps` from offset 0 and a `quorum-state` naming `leader`
/// at the log's epoch (v1; the leader voted for itself, the others for no one).
fn all_at_end(steps: &[Step], leader: i32) -> Vec<Node> {
    let e = epoch_of(steps);
    (VOTERS.iter().chain(BROKERS.iter()))
        .map(|id| {
            let voted = if *id == leader { leader } else { -1 };
            Node::new(*id, copy(steps, 0), qs_v1(leader, e, voted, voted))
        })
        .collect()
}

fn none(_: i32) -> Vec<PartitionBuilder> {
    Vec::new()
}

/// The nodes' log dirs, checked.
fn run(nodes: Vec<Node>) -> (Brokers, Verdict) {
    let b = cluster(nodes, &BROKER_EPOCHS, &none);
    let v = b.check();
    (b, v)
}

/// Node `id`'s copy of `__cluster_metadata-0`.
fn part_dir(b: &Brokers, id: i32) -> PathBuf {
    let data = if VOTERS.contains(&id) {
        "metadata"
    } else {
        "data"
    };
    b.path(id, data).join("__cluster_metadata-0")
}

/// The copy the cluster's history follows (`leadership::load_all`).
fn history_log(b: &Brokers) -> MetadataLog {
    let inv = klogscan::discover::layout::discover(&b.all());
    let mut h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1, "one cluster");
    h.remove(0).log
}

/// Node `id`'s `directory.id` as `quorum-state` v1 writes it (`votedDirectoryId`):
/// base64url of the 16 bytes the testkit's `VotersRecord` gives the voter.
fn dir_text(id: i32) -> String {
    let d = klogscan::testkit::files::topic_id_for(&format!("controller dir {id}"));
    klogscan::testkit::files::uuid_text(&d)
}

/// `quorum-state` version 1 (`FileQuorumStateStore.writeElectionState` at `kraft.version`
/// 1): `votedDirectoryId` the voted node's directory, or the zero id when no one was voted
/// for (`vote_dir` -1).
fn qs_v1(leader: i32, epoch: i32, voted: i32, vote_dir: i32) -> String {
    let dir = if vote_dir < 0 {
        "AAAAAAAAAAAAAAAAAAAAAA".to_string()
    } else {
        dir_text(vote_dir)
    };
    format!(
        "{{\"leaderId\":{leader},\"leaderEpoch\":{epoch},\"votedId\":{voted},\
         \"votedDirectoryId\":\"{dir}\",\"data_version\":1}}"
    )
}

/// `quorum-state` version 0 (`kraft.version` 0: the static voters listed), as the quiet
/// KRaft cases write it.
fn qs_v0(leader: i32, epoch: i32, voted: i32) -> String {
    crate::kafka_quiet_kraft_cases::quorum_state(false, leader, epoch, voted)
}

/// The findings at error level from `scan`, `verify` and the merge.
fn errors(v: &Verdict) -> Vec<Finding> {
    (v.scan.findings.iter())
        .chain(v.verify.findings())
        .chain(v.merge.findings.iter())
        .filter(|f| f.severity >= Severity::Error)
        .cloned()
        .collect()
}

/// Every finding at warning or above from `scan`, `verify` and the merge whose copy or
/// file is node `id`'s `quorum-state`.
fn on_quorum_state(v: &Verdict, id: i32) -> Vec<Finding> {
    let node = format!("broker-{id}");
    (v.scan.findings.iter())
        .chain(v.verify.findings())
        .chain(v.merge.findings.iter())
        .filter(|f| f.severity >= Severity::Warning)
        .filter(|f| {
            let d = format!("{f:?}");
            d.contains("quorum-state") && d.contains(&node)
        })
        .cloned()
        .collect()
}

/// [`all_loud`], for messages.
fn loud(v: &Verdict) -> Vec<String> {
    all_loud(v)
}
