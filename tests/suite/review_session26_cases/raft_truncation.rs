//! `replica_divergence` between copies of `__cluster_metadata-0` when the copy behind in
//! leader epochs truncates the divergence away (`truncation::with_raft_truncation`): info,
//! "never committed". Raft's argument (a voter grants a vote only to a log at least as up
//! to date as its own — `KafkaRaftClient.handleVoteRequest`, `QuorumState.canGrantVote` —
//! so a committed record is in every later leader's log) holds for copies of one quorum;
//! the tail is truncated on the next fetch (`handleFetchResponse` → `truncateToEndOffset`).
//! Kafka also refuses a truncation below a known high watermark
//! (`KafkaMetadataLog.truncateTo`, `KafkaMetadataLogTest.testTruncateBelowHighWatermark`;
//! `handleFetchResponse` throws "below the current high watermark") and creates a snapshot
//! only at or below the high watermark (`KafkaMetadataLog.createNewSnapshot`): a snapshot
//! on disk proves its offsets committed.
//!
//! Pre-vote (KIP-996) changes only when a candidate bumps its epoch; the real vote keeps
//! the log check and leaves the same files, so no shape of it differs on disk.

use super::{BROKER_EPOCHS, before_failover, no_data};
use crate::kafka_quiet_cluster_cases::kraft::{isr, metadata_version, partition, register, topic};
use crate::kafka_quiet_cluster_cases::{Brokers, Verdict};
use crate::kafka_quiet_kraft_cases::{
    Node, Snap, Step, VOTERS, cluster, copy, data, end_of, quorum_state, scan_lines,
};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;

/// 3001 led epoch 2 and appended two writes (offsets 10, 11); 3000 won epoch 3 with 3002's
/// vote and wrote its own from offset 10.
fn mine() -> Vec<Step> {
    let mut s = before_failover();
    s.extend([
        data(vec![isr("orders", 0, &[1, 2])]),
        data(vec![MetaRecord::NoOp]),
    ]);
    s
}

fn theirs() -> Vec<Step> {
    let mut s = before_failover();
    assert_eq!(end_of(&s), 10);
    s.extend([
        Step::Elect {
            leader: 3000,
            voters: VOTERS.to_vec(),
            granting: vec![3000, 3002],
        },
        data(vec![isr("orders", 0, &[1, 2])]),
        data(vec![MetaRecord::NoOp]),
    ]);
    s
}

/// The five nodes: `behind` holds `its` log (with `snapshots`), the others [`theirs`].
fn quorum(behind: i32, its: &[Step], snapshots: Vec<Snap>) -> Brokers {
    let mut snaps = Some(snapshots);
    let nodes = [3000, 3001, 3002, 1, 2]
        .into_iter()
        .map(|id| {
            if id == behind {
                let voted = if id == 3001 { 3001 } else { -1 };
                let mut n = Node::new(id, copy(its, 0), quorum_state(true, 3001, 2, voted));
                n.snapshots = snaps.take().unwrap_or_default();
                n
            } else {
                let voted = if VOTERS.contains(&id) { 3000 } else { -1 };
                Node::new(id, copy(&theirs(), 0), quorum_state(true, 3000, 3, voted))
            }
        })
        .collect();
    cluster(nodes, &BROKER_EPOCHS, &no_data)
}

/// The scan's `replica_divergence` findings on pairs with `node`'s copy.
fn divergences_with(v: &Verdict, node: i32) -> Vec<Finding> {
    let tag = format!("broker-{node}/");
    (v.scan.findings.iter())
        .filter(|f| {
            f.kind == Kind::ReplicaDivergence
                && format!("{:?}", f.evidence["copies"]).contains(&tag)
        })
        .cloned()
        .collect()
}

/// The image of the first ten offsets (what a snapshot at 12 of 3001's log holds, near
/// enough: the test looks only at the divergence).
fn image() -> Vec<MetaRecord> {
    vec![
        metadata_version(19),
        register(1, BROKER_EPOCHS[0], 1, false),
        register(2, BROKER_EPOCHS[1], 2, false),
        topic("orders"),
        partition("orders", 0, &[1, 2], &[1, 2], (1, 0, 0)),
    ]
}

/// `KafkaRaftClientTest.testFollowerLogReconciliation` with the copy behind an observer's:
/// broker 1 fetched 3001's epoch-2 writes (an observer fetches to the leader's end, not its
/// high watermark) before 3000 won epoch 3. A newer leader lacks them, so they were never
/// committed, and broker 1 truncates to 10 on its next fetch: info, as klogscan says.
#[test]
fn an_observers_uncommitted_tail_is_info() {
    let v = quorum(1, &mine(), Vec::new()).check();
    let d = divergences_with(&v, 1);
    assert_eq!(d.len(), 4, "{:#?}", scan_lines(&v));
    for f in &d {
        assert_eq!(f.severity, Severity::Info, "{}", f.message);
        assert!(f.message.contains("never committed"), "{}", f.message);
        assert_eq!(f.evidence["truncation"]["to_offset"], 10, "{}", f.evidence);
    }
}

/// A copy of another cluster (its log dir's `meta.properties` names another `cluster.id`:
/// a reformatted or foreign node) is no member of this quorum, whatever its epochs: it is
/// not paired (`replica_pairs` → `same_cluster`), so nothing is read into its tail.
#[test]
fn a_foreign_clusters_copy_is_not_compared() {
    let b = quorum(3001, &mine(), Vec::new());
    let props = b.path(3001, "metadata").join("meta.properties");
    let text = std::fs::read_to_string(&props).unwrap();
    let foreign = text.replace(
        crate::kafka_quiet_cluster_cases::CLUSTER,
        "QkJCQkJCQkJCQkJCQkJCQg",
    );
    assert_ne!(text, foreign);
    std::fs::write(&props, foreign).unwrap();
    let v = b.check();
    assert!(
        divergences_with(&v, 3001).is_empty(),
        "{:#?}",
        scan_lines(&v)
    );
}

/// Two copies whose latest epochs tie (3) but that differ at offset 10: 3001's copy has an
/// epoch-2 write there and epoch 3 from 11, the others epoch 3 from 10. One leader per
/// epoch writes every offset of it (`LeaderState`), so two logs of one quorum cannot start
/// epoch 3 at different offsets: no truncation explains it (`truncateToEndOffset` of epoch 3
/// keeps both ends) and it stays a warning, as klogscan says.
#[test]
fn copies_tied_in_epochs_keep_the_warning() {
    let mut its = before_failover();
    its.extend([
        data(vec![isr("orders", 0, &[1, 2])]),
        Step::Elect {
            leader: 3000,
            voters: VOTERS.to_vec(),
            granting: vec![3000, 3001],
        },
        data(vec![MetaRecord::NoOp]),
    ]);
    let v = quorum(3001, &its, Vec::new()).check();
    let d = divergences_with(&v, 3001);
    assert!(!d.is_empty(), "{:#?}", scan_lines(&v));
    for f in &d {
        assert!(f.severity >= Severity::Warning, "{}", f.message);
        assert!(!f.message.contains("never committed"), "{}", f.message);
    }
}

/// Divergence: 3001's copy holds a snapshot `00000000000000000012-0000000002.checkpoint`.
/// `KafkaMetadataLog.createNewSnapshot` refuses an id above the high watermark (and a
/// snapshot fetched from a leader is at or below the leader's), so 3001's offsets 10 and
/// 11 were committed — applied by its `MetadataLoader` and written into that snapshot. A
/// newer leader without them is not the Raft reading "an uncommitted tail" but committed
/// metadata lost (a voter that lost its log or its `quorum-state` and voted again, a copy
/// restored from elsewhere); while the node runs, `KafkaRaftClient.handleFetchResponse`
/// refuses the truncation below its high watermark (`KafkaException`,
/// `KafkaMetadataLogTest.testTruncateBelowHighWatermark`). klogscan says "never
/// committed", info, no remediation.
#[test]
fn a_tail_below_the_copys_own_snapshot_was_committed() {
    let snap = Snap {
        end: 12,
        epoch: 2,
        image: image(),
        voters: None,
    };
    let v = quorum(3001, &mine(), vec![snap]).check();
    let d = divergences_with(&v, 3001);
    assert!(!d.is_empty(), "{:#?}", scan_lines(&v));
    // The merge of the nodes' bundles reads the snapshot from what the collect listed.
    let merged: Vec<_> = (v.merge.findings.iter())
        .filter(|f| f.kind == Kind::ReplicaDivergence)
        .map(|f| (f.severity, f.message.clone()))
        .collect();
    let scanned: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::ReplicaDivergence)
        .map(|f| (f.severity, f.message.clone()))
        .collect();
    assert_eq!(merged, scanned);
    assert!(d.iter().all(|f| f.severity == Severity::Error && f.message.contains("committed metadata lost")));
    for f in &d {
        assert!(f.severity >= Severity::Warning, "{}", f.message);
        assert!(!f.message.contains("never committed"), "{}", f.message);
        assert_ne!(
            f.evidence["truncation"]["acknowledged"], false,
            "{}",
            f.evidence
        );
    }
}
