//! The quorum's copies of the metadata log at different ends after several elections, with
//! `quorum-state` v0 and v1, and a former leader's tail the next leader's epoch replaced.

use super::{
    BROKERS, Node, Step, VOTERS, all_loud, cluster, copy, data, elect, end_of, epoch_of,
    quorum_state, reported, scan_lines,
};
use crate::kafka_quiet_cluster_cases::kraft::{broker_change, isr, metadata_version, partition};
use crate::kafka_quiet_cluster_cases::kraft::{change, register, topic};
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;

/// The registrations' offsets: each broker's epoch (`ClusterControlManager.registerBroker`).
pub(crate) const BROKER_EPOCHS: [i64; 2] = [2, 3];

/// The first writes: 3000 elected at epoch 1 with the votes of 3000 and 3001, the
/// metadata version (MV 3.7-IV4, level 19), brokers 1 and 2 registering fenced and
/// unfenced once caught up; `orders-0` created on both.
pub(crate) fn bootstrap() -> Vec<Step> {
    vec![
        Step::Elect {
            leader: 3000,
            voters: VOTERS.to_vec(),
            granting: vec![3000, 3001],
        },
        data(vec![metadata_version(19)]),
        data(vec![register(1, BROKER_EPOCHS[0], 1, true)]),
        data(vec![register(2, BROKER_EPOCHS[1], 2, true)]),
        data(vec![
            broker_change(1, BROKER_EPOCHS[0], -1, 0),
            broker_change(2, BROKER_EPOCHS[1], -1, 0),
        ]),
        data(vec![
            topic("orders"),
            partition("orders", 0, &[1, 2], &[1, 2], (1, 0, 0)),
        ]),
    ]
}

/// [`bootstrap`], then three more elections (3001 at epoch 2 when 3000 restarted, 3002 at
/// epoch 3, 3000 again at epoch 4), ISR changes and the `NoOpRecord`s an idle active
/// controller writes (`QuorumController`'s `maybeScheduleNextWriteNoOpRecord`, KIP-835).
fn life() -> Vec<Step> {
    let mut s = bootstrap();
    s.extend([
        elect(3001, &VOTERS),
        data(vec![isr("orders", 0, &[1])]),
        data(vec![isr("orders", 0, &[1, 2])]),
        Step::Elect {
            leader: 3002,
            voters: VOTERS.to_vec(),
            granting: vec![3002, 3000],
        },
        data(vec![MetaRecord::NoOp]),
        elect(3000, &VOTERS),
        data(vec![change("orders", 0, |c| c.leader = 2)]),
        data(vec![MetaRecord::NoOp]),
    ]);
    s
}

/// The five copies of [`life`]: the leader 3000 and 3002 at the end, 3001 two writes
/// behind, broker 1 at the end and broker 2 (an observer fetching slowly) three writes
/// behind; `quorum-state` v1 on 3000, 3002 and the brokers (`kraft.version` 1 writes
/// version 1), v0 on 3001 (written before the upgrade), as each last wrote it: the leader
/// voted for itself, 3001 for the leader, 3002 and the observers for no one.
fn nodes(steps: &[Step], behind_3001: &[Step]) -> Vec<Node> {
    let e = epoch_of(steps);
    let n = steps.len();
    vec![
        Node::new(3000, copy(steps, 0), quorum_state(true, 3000, e, 3000)),
        Node::new(
            3001,
            copy(behind_3001, 0),
            quorum_state(false, 3000, e, 3000),
        ),
        Node::new(3002, copy(steps, 0), quorum_state(true, 3000, e, -1)),
        Node::new(1, copy(steps, 0), quorum_state(true, 3000, e, -1)),
        Node::new(2, copy(&steps[..n - 3], 0), quorum_state(true, 3000, e, -1)),
    ]
}

fn none(_: i32) -> Vec<klogscan::testkit::PartitionBuilder> {
    Vec::new()
}

/// `BatchAccumulatorTest.testLeaderChangeMessageWritten`, `KafkaRaftClientTest`/`testInitializeAsResignedLeaderFromStateStore`
/// (the `LeaderChangeMessage` each new leader writes first, `LeaderState`),
/// `KafkaRaftClientTest.testFetchResponseIgnoredAfterBecomingCandidate` and
/// `testObserverReplication…` (followers and observers fetch at their own pace: a copy
/// behind is a prefix of the leader's, `KafkaRaftClient.appendAsFollower`),
/// `FileQuorumStateStoreTest.testWriteReadElectedLeader` (v0 and v1 files),
/// `QuorumStateTest.testInitializeAsFollower`: three voters and two
/// observers at different ends after four epochs. Nothing to report.
#[test]
fn voters_and_observers_at_different_ends_after_leader_changes() {
    let s = life();
    let behind = &s[..s.len() - 2];
    let b = cluster(nodes(&s, behind), &BROKER_EPOCHS, &none);
    let v = b.check();
    v.assert_quiet();
    let copies = (v.scan.partitions.iter())
        .filter(|p| p.topic == "__cluster_metadata")
        .count();
    assert_eq!(copies, VOTERS.len() + BROKERS.len());
}

/// Twin: 3001's copy holds another batch at offset 10 of epoch 2 than the leader's. Within
/// an epoch one leader assigns every offset, so two copies agree on everything up to a
/// shared `(offset, epoch)` (`KafkaRaftClient`'s log matching; a follower only appends the
/// leader's batches, `appendAsFollower`): the copies diverge, `replica_divergence`.
#[test]
fn twin_a_copy_with_another_batch_at_the_same_epoch_diverges() {
    let s = life();
    let mut forged = s[..s.len() - 2].to_vec();
    assert_eq!(end_of(&forged[..8]), 10);
    forged[8] = data(vec![isr("orders", 0, &[2])]);
    let b = cluster(nodes(&s, &forged), &BROKER_EPOCHS, &none);
    let v = b.check();
    let d = reported(&v, Kind::ReplicaDivergence);
    assert!(
        d.iter().any(|f| f.offset == Some(10)),
        "{:#?}",
        scan_lines(&v)
    );
    // Within one epoch no copy is behind: not the KRaft reading of a truncated tail.
    assert!(
        (d.iter())
            .all(|f| f.severity == Severity::Warning && !f.message.contains("never committed")),
        "{:#?}",
        scan_lines(&v)
    );
}

/// Twin: 3001's `quorum-state` is of `data_version` 2, which no release reads
/// (`FileQuorumStateStoreTest.testCantReadVersionQuorumState`: `readElectionState` throws
/// `IllegalStateException`; `QuorumState.initialize` runs it first in
/// `KafkaRaftClient.initialize`, so the node does not start). Something at error level
/// must name the file.
#[test]
fn twin_a_quorum_state_no_release_reads_stops_the_node() {
    let s = life();
    let mut ns = nodes(&s, &s[..s.len() - 2]);
    ns[1].quorum_state = ns[1]
        .quorum_state
        .replace("\"data_version\":0", "\"data_version\":2");
    let b = cluster(ns, &BROKER_EPOCHS, &none);
    let v = b.check();
    let named: Vec<_> = (v.scan.findings.iter())
        .chain(v.verify.findings())
        .filter(|f| f.severity >= Severity::Error)
        .filter(|f| format!("{f:?}").contains("quorum-state"))
        .collect();
    assert!(!named.is_empty(), "{:#?}", all_loud(&v));
    // The finding is `verify`'s, on 3001's copy only, naming what the start throws.
    let q: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::QuorumStateUnreadable)
        .collect();
    assert_eq!(q.len(), 1, "{:#?}", all_loud(&v));
    assert_eq!(q[0].severity, Severity::Error);
    let path = q[0].source.path.as_deref().unwrap_or_default();
    assert!(path.contains("3001"), "{:?}", q[0].source);
    assert_eq!(q[0].segment.as_deref(), Some("quorum-state"));
    let exception = q[0].evidence["exception"].as_str().unwrap_or_default();
    assert!(
        exception.starts_with("IllegalStateException: data_version (2)"),
        "{exception}"
    );
}

/// The writes up to 3001's election at epoch 2 and its first ISR change (offset 10).
fn before_failover() -> Vec<Step> {
    let mut s = bootstrap();
    s.extend([elect(3001, &VOTERS), data(vec![isr("orders", 0, &[1])])]);
    assert_eq!(end_of(&s), 10);
    s
}

/// 3001 led epoch 2 and appended two writes no other voter fetched before it crashed; 3000
/// won epoch 3 with 3002's vote (its log as long as any majority's: the `VoteRequest`
/// check, `KafkaRaftClient.handleVoteRequest`) and wrote its own at those offsets. `old`:
/// 3001's copy is as it crashed (`true`), or as its restart left it after the leader
/// answered its fetch with a diverging epoch and it truncated to offset 10 (`false`,
/// `truncateToEndOffset`).
fn failover(old: bool) -> Vec<Node> {
    let mut mine = before_failover();
    mine.extend([
        data(vec![isr("orders", 0, &[1, 2])]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let mut theirs = before_failover();
    theirs.extend([
        Step::Elect {
            leader: 3000,
            voters: VOTERS.to_vec(),
            granting: vec![3000, 3002],
        },
        data(vec![isr("orders", 0, &[1, 2])]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let (log, qs) = if old {
        (copy(&mine, 0), quorum_state(true, 3001, 2, 3001))
    } else {
        (copy(&before_failover(), 0), quorum_state(true, 3000, 3, -1))
    };
    vec![
        Node::new(3000, copy(&theirs, 0), quorum_state(true, 3000, 3, 3000)),
        Node::new(3001, log, qs),
        Node::new(3002, copy(&theirs, 0), quorum_state(true, 3000, 3, 3000)),
        Node::new(1, copy(&theirs, 0), quorum_state(true, 3000, 3, -1)),
        Node::new(2, copy(&theirs, 0), quorum_state(true, 3000, 3, -1)),
    ]
}

/// `KafkaRaftClientTest.testFollowerLogReconciliation` (a follower's tail past the
/// leader's end for its epoch is truncated: `KafkaRaftClient.handleFetchResponse` →
/// `truncateToEndOffset`), `KafkaMetadataLogTest.testTruncateBelowHighWatermark` (never
/// below the high watermark: what is truncated was never committed): 3001's copy after the
/// truncation, not yet caught up. Nothing to report.
#[test]
fn a_former_leaders_tail_truncated_after_the_election() {
    let b = cluster(failover(false), &BROKER_EPOCHS, &none);
    b.check().assert_quiet();
}

/// The same before 3001 restarted: its copy still holds the two epoch-2 writes no majority
/// held. A KRaft leader is elected only with a log at least as up to date as a majority's
/// (`KafkaRaftClient.handleVoteRequest`: the candidate's last `OffsetAndEpoch` compared with
/// the voter's end, `QuorumState.canGrantVote`), so a committed record
/// is in every later leader's log: the tail a newer epoch replaced was never committed, no
/// node applied it (`MetadataLoader` reads to the high watermark only), and 3001 truncates
/// it on its first fetch (`testFollowerLogReconciliation`). Nothing to report at warning.
#[test]
fn a_former_leaders_uncommitted_tail_waiting_to_be_truncated() {
    let b = cluster(failover(true), &BROKER_EPOCHS, &none);
    let v = b.check();
    v.assert_quiet();
    // Still said, at info: each pair with 3001's copy, the tail from offset 11 never
    // committed, 3001 truncating to 11 on its next fetch.
    let d: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::ReplicaDivergence)
        .collect();
    assert_eq!(d.len(), 4, "{:#?}", scan_lines(&v));
    for f in d {
        assert_eq!(f.severity, Severity::Info);
        assert!(f.message.contains("never committed"), "{}", f.message);
        let t = &f.evidence["truncation"];
        assert!(
            t["replica"].as_str().unwrap_or_default().contains("3001"),
            "{t}"
        );
        assert_eq!(t["acknowledged"], false, "{t}");
        assert!(f.remediation.is_none());
    }
}

/// Control of the above: klogscan's history is the newer epoch's copy (the most
/// up-to-date as `OffsetAndEpoch` orders logs, `load_all`), not the former leader's.
#[test]
fn the_history_follows_the_newer_epochs_copy() {
    let b = cluster(failover(true), &BROKER_EPOCHS, &none);
    let inv = klogscan::discover::layout::discover(&b.all());
    let h = klogscan::cluster::leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1);
    assert_eq!((h[0].log.last_epoch, h[0].log.end_offset), (3, 13));
    assert!(!h[0].log.path.contains("broker-3001"), "{}", h[0].log.path);
}
