//! `quorum-state` as `QuorumState.initialize` reads it at every start
//! (`KafkaRaftClient.initialize`): what each stored election makes of the node, and the
//! files that stop it.

use super::{all_at_end, history_log, life, loud, on_quorum_state, part_dir, qs_v0, qs_v1, run};
use crate::kafka_quiet_kraft_cases::{BROKERS, Node, VOTERS, copy, epoch_of};
use klogscan::finding::{Kind, Severity};

/// `QuorumStateTest.testInitializePrimordialEpoch`,
/// `KRaftControlRecordStateMachineTest.testEmptyPartition`,
/// `KRaftControlRecordStateMachineTest.testEmptyPartitionWithNoStaticVoters`: a controller
/// formatted and started once, stopped before its first election — an empty metadata log
/// and no `quorum-state`. Kafka reads no stored election (`FileQuorumStateStore` answers
/// nothing for a missing file), takes epoch 0 with no leader and no vote, and the voter
/// set is the configured one (nothing in the log overrides it): it starts unattached and
/// becomes a candidate at epoch 1. Nothing to report. Near miss: the file exists but is
/// empty — `readStateFromFile` hits the end of the file, the start throws
/// (`quorum_state_unreadable`, error, naming the `EOFException`).
#[test]
fn a_fresh_controller_without_quorum_state_starts_at_epoch_0() {
    let (_, v) = run(vec![Node::new(3000, copy(&[], 0), String::new())]);
    // `cluster` wrote an empty `quorum-state`: the near miss first.
    let q: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::QuorumStateUnreadable)
        .collect();
    assert_eq!(q.len(), 1, "{:#?}", loud(&v));
    assert_eq!(q[0].severity, Severity::Error);
    let exception = q[0].evidence["exception"].as_str().unwrap_or_default();
    assert!(exception.contains("EOFException"), "{exception}");

    // The primordial node: no `quorum-state` at all.
    let (b, _) = run(vec![Node::new(3000, copy(&[], 0), String::new())]);
    std::fs::remove_file(part_dir(&b, 3000).join("quorum-state")).unwrap();
    let v = b.check();
    v.assert_quiet();
    let log = history_log(&b);
    assert_eq!((log.last_epoch, log.end_offset), (0, 0));
    assert_eq!(log.quorum_state, None);
}

/// `QuorumStateTest.testInitializeWithCorruptedStore`: the store mock that test builds is
/// never handed to the `QuorumState` (its `buildQuorumState` uses the class's own store), so
/// what it runs is a start with no stored election and a log whose last epoch is 2: the
/// node starts unattached at the log's epoch, with no leader. The same branch of
/// `QuorumState.initialize` takes any stored epoch below the log's last one (a
/// `quorum-state` restored from an older copy of the directory): it logs a warning and
/// starts unattached at the log's epoch. Voter 3001 without `quorum-state`, broker 2 with one
/// of epoch 1 (the log ends in epoch 3): nothing at warning, and the history still ends at
/// epoch 3. Near miss: the same older file with `leaderEpoch` written as a string — the
/// generated reader refuses it and the start throws (`quorum_state_unreadable`).
#[test]
fn a_quorum_state_older_than_the_log_yields_to_the_logs_epoch() {
    let s = life();
    let e = epoch_of(&s);
    let mut nodes = all_at_end(&s, 3002);
    nodes[4].quorum_state = qs_v1(3000, 1, -1, -1);
    let (b, _) = run(nodes);
    std::fs::remove_file(part_dir(&b, 3001).join("quorum-state")).unwrap();
    let v = b.check();
    v.assert_quiet();
    let log = history_log(&b);
    assert_eq!((log.last_epoch, log.end_offset), (e, 14));

    let mut nodes = all_at_end(&s, 3002);
    nodes[4].quorum_state = qs_v1(3000, 1, -1, -1).replace(":1,\"votedId\"", ":\"1\",\"votedId\"");
    assert!(nodes[4].quorum_state.contains("\"leaderEpoch\":\"1\""));
    let (_, v) = run(nodes);
    let q: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::QuorumStateUnreadable)
        .collect();
    assert_eq!(q.len(), 1, "{:#?}", loud(&v));
    assert!(
        q[0].source
            .path
            .as_deref()
            .unwrap_or_default()
            .contains("broker-2"),
        "{:?}",
        q[0].source
    );
}

/// `QuorumStateTest.testInitializeAsUnattached`, `FileQuorumStateStoreTest.testWriteReadUnknownLeader`:
/// every node stopped during the election of epoch 4 (the log ends in epoch 3), each
/// `quorum-state` at epoch 4 with no leader and no vote (`leaderId` and `votedId` -1), v0 on
/// 3001, v1 elsewhere. Kafka starts each unattached at epoch 4 (above the log's epoch: the
/// stored epoch is kept). Nothing to report. Near miss: 3002's v1 file lacks
/// `votedDirectoryId`, which version 1 of `QuorumStateData` makes mandatory — the
/// generated reader throws and the start fails (`quorum_state_unreadable` on 3002 only).
#[test]
fn an_election_in_progress_leaves_no_leader_and_no_vote() {
    let s = life();
    let nodes = |drop_dir: bool| {
        let mut ns = all_at_end(&s, 3002);
        for n in &mut ns {
            n.quorum_state = if n.id == 3001 {
                qs_v0(-1, 4, -1)
            } else {
                qs_v1(-1, 4, -1, -1)
            };
        }
        if drop_dir {
            ns[2].quorum_state =
                "{\"leaderId\":-1,\"leaderEpoch\":4,\"votedId\":-1,\"data_version\":1}".into();
        }
        ns
    };
    let (_, v) = run(nodes(false));
    v.assert_quiet();

    let (_, v) = run(nodes(true));
    let q: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::QuorumStateUnreadable)
        .collect();
    assert_eq!(q.len(), 1, "{:#?}", loud(&v));
    let path = q[0].source.path.as_deref().unwrap_or_default();
    assert!(path.contains("broker-3002"), "{path}");
    let exception = q[0].evidence["exception"].as_str().unwrap_or_default();
    assert!(exception.contains("votedDirectoryId"), "{exception}");
}

/// `QuorumStateTest.testInitializeAsVoted`, `QuorumStateTest.testInitializeAsResignedCandidate`,
/// `ElectionStateTest.testVotedCandidateWithVotedDirectoryId`,
/// `ElectionStateTest.testVotedCandidateWithoutVotedDirectoryId`: 3001 stood for epoch 4
/// (the log ends in epoch 3) and stopped before it won: its file holds its own vote (it
/// restarts as a candidate of epoch 4), 3002 voted for it with its directory id (v1), 3000
/// voted for it without one (v0, `kraft.version` 0 writes none); each voter that voted
/// restarts unattached with that vote at epoch 4, the brokers follow 3002 at epoch 3.
/// Nothing to report.
#[test]
fn a_vote_for_a_newer_epoch_is_kept_with_or_without_a_directory_id() {
    let s = life();
    let mut nodes = all_at_end(&s, 3002);
    nodes[0].quorum_state = qs_v0(-1, 4, 3001);
    nodes[1].quorum_state = qs_v1(-1, 4, 3001, 3001);
    nodes[2].quorum_state = qs_v1(-1, 4, 3001, 3001);
    let (b, v) = run(nodes);
    v.assert_quiet();
    for id in VOTERS.iter().chain(BROKERS.iter()) {
        assert!(on_quorum_state(&v, *id).is_empty(), "{id}");
    }
    let log = history_log(&b);
    assert_eq!(log.last_epoch, 3, "the vote writes nothing to the log");
}

/// `RaftEventSimulationTest.canRecoverAfterAllNodesKilled` with its `SingleLeader`
/// invariant: over the stored election of every node (their `quorum-state` files), at most
/// one leader is ever named for an epoch (a candidate wins an epoch with a majority of
/// votes, and a voter votes once per epoch). 3002's file naming 3001 the leader of epoch 3,
/// while 3000's, 3001's and the brokers' files and the log's `LeaderChangeMessage` of epoch 3
/// name 3002, is a state no Kafka quorum writes (a file from another cluster, or edited by
/// hand): 3002 would follow 3001 at epoch 3 and fetch from a node that is not leading.
/// klogscan must say so on 3002's file (`quorum_state_leader_conflict`), and on no other.
/// Near miss: every file naming 3002 is quiet (`all_at_end`).
#[test]
fn two_leaders_named_for_one_epoch_are_reported() {
    let s = life();
    let (_, v) = run(all_at_end(&s, 3002));
    v.assert_quiet();

    let mut nodes = all_at_end(&s, 3002);
    nodes[2].quorum_state = qs_v1(3001, 3, -1, -1);
    let (_, v) = run(nodes);
    let found = on_quorum_state(&v, 3002);
    assert_eq!(
        found.len(),
        3,
        "one each from scan, verify and merge: {:#?}",
        loud(&v)
    );
    for f in &found {
        assert_eq!(f.kind, klogscan::finding::Kind::QuorumStateLeaderConflict);
        assert_eq!(f.evidence["quorum_state_leader"], 3001);
        assert_eq!(f.evidence["log_leader"], 3002);
    }
    for id in [3000, 3001] {
        assert!(on_quorum_state(&v, id).is_empty(), "{id}");
    }
}

/// `QuorumStateTest.testInitializeAsUnattachedWhenMissingEndpoints`: a `quorum-state` naming
/// a leader that the latest voter set does not hold (KIP-853: 3002, which led epoch 3, was
/// removed by the `VotersRecord` it wrote) is read: the node knows the leader's id but not
/// its endpoints and starts unattached at that epoch, waiting for the next leader. The
/// brokers and 3000 stopped right after the removal with 3002 still named: nothing to
/// report (a removed leader is no contradiction).
#[test]
fn a_leader_outside_the_latest_voter_set_is_read() {
    let (s, snap) = super::voters::upgraded(vec![super::voters::change(&[3000, 3001])]);
    let e = epoch_of(&s);
    let mut nodes = super::voters::nodes(&s, &snap, 3002);
    for n in &mut nodes {
        if n.id != 3002 {
            n.quorum_state = qs_v1(3002, e, -1, -1);
        }
    }
    let (b, v) = run(nodes);
    v.assert_quiet();
    let log = history_log(&b);
    let last = (log.quorum.iter())
        .rfind(|q| q.control_type == "KRAFT_VOTERS")
        .and_then(|q| q.voters.clone());
    assert_eq!(last, Some(vec![3000, 3001]));
}

/// `FileQuorumStateStoreTest.testCreateAndClear`, `FileQuorumStateStoreTest.testReload`:
/// the store writes each election to `quorum-state.tmp` and moves it over `quorum-state`
/// atomically (`clear` deletes both); a node that crashed between the two leaves the
/// `.tmp` beside the file, and the next start reads `quorum-state` alone (the next write
/// overwrites the `.tmp`). A half-written `quorum-state.tmp` beside a whole file: nothing
/// to report, and the stored election is the file's. Near miss: the same half-written
/// bytes as `quorum-state` itself stop the start (`quorum_state_unreadable`).
#[test]
fn a_leftover_quorum_state_tmp_is_not_read() {
    let s = life();
    let half = &qs_v1(3002, 3, -1, -1)[..30];
    let (b, _) = run(all_at_end(&s, 3002));
    std::fs::write(part_dir(&b, 3001).join("quorum-state.tmp"), half).unwrap();
    let v = b.check();
    v.assert_quiet();

    let mut nodes = all_at_end(&s, 3002);
    nodes[1].quorum_state = half.to_string();
    let (_, v) = run(nodes);
    let q: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::QuorumStateUnreadable)
        .collect();
    assert_eq!(q.len(), 1, "{:#?}", loud(&v));
}
