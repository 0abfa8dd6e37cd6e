//! KIP-853 voter sets through the metadata log: what
//! `KRaftControlRecordStateMachine` (read at every start from the latest snapshot's end,
//! `KafkaRaftClient.initialize`) makes of the `KRaftVersionRecord` and `VotersRecord`s.

use super::{bootstrap, errors, history_log, image, loud, qs_v1, run};
use crate::kafka_quiet_kraft_cases::{
    BROKERS, KRAFT_VERSION, KRAFT_VOTERS, Node, Snap, Step, VOTERS, copy, data, elect, end_of,
    epoch_of, kraft_version, voters_record,
};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;

/// A `VotersRecord` of `voters`, written by the leader of the moment.
pub(super) fn change(voters: &[i32]) -> Step {
    Step::Control(KRAFT_VOTERS, voters_record(voters))
}

/// A `kraft.version` 0 quorum (static voters) that took the snapshot (8, 1) without any
/// KRaft record in it and cleaned its log below it, then was upgraded by 3000 at epoch 1
/// (`KRaftVersionRecord` 1 and the `VotersRecord` of the three static voters, offsets 8–9),
/// elected 3001 at epoch 2 and 3002 at epoch 3, each writing a `NoOpRecord` (to offset 14),
/// then `extra`. Returns the steps and the snapshot.
pub(super) fn upgraded(extra: Vec<Step>) -> (Vec<Step>, Snap) {
    let mut s = bootstrap();
    s.extend([
        Step::Control(KRAFT_VERSION, kraft_version(1)),
        change(&VOTERS),
        elect(3001, &VOTERS),
        data(vec![MetaRecord::NoOp]),
        elect(3002, &VOTERS),
        data(vec![MetaRecord::NoOp]),
    ]);
    assert_eq!(end_of(&s), 14);
    s.extend(extra);
    let snap = Snap {
        end: 8,
        epoch: 1,
        image: image(0),
        voters: None,
    };
    (s, snap)
}

/// Every node with its copy of `s` from `snap`'s end and `snap`, `leader` named at the
/// log's epoch.
pub(super) fn nodes(s: &[Step], snap: &Snap, leader: i32) -> Vec<Node> {
    let e = epoch_of(s);
    (VOTERS.iter().chain(BROKERS.iter()))
        .map(|id| {
            let voted = if *id == leader { leader } else { -1 };
            let mut n = Node::new(*id, copy(s, snap.end), qs_v1(leader, e, voted, voted));
            n.snapshots.push(Snap {
                image: snap.image.clone(),
                voters: snap.voters.clone(),
                ..*snap
            });
            n
        })
        .collect()
}

/// The voter sets of the history's `VotersRecord`s, in order.
fn voter_sets(b: &crate::kafka_quiet_cluster_cases::Brokers) -> Vec<Vec<i32>> {
    (history_log(b).quorum.iter())
        .filter(|q| q.control_type == "KRAFT_VOTERS")
        .filter_map(|q| q.voters.clone())
        .collect()
}

/// `KRaftControlRecordStateMachineTest.testUpdateWithEmptySnapshot`,
/// `VoterSetTest.testOverlappingMajority`, `VoterSetTest.testAddVoter`,
/// `VoterSetTest.testRemoveVoter`: a snapshot holding no KRaft record leaves the configured
/// voters and `kraft.version` 0 in force; the log's first `VotersRecord` replaces that static
/// set unchecked (`VoterSetHistory.addAt` compares only with a set read from the log or a
/// snapshot, at offset 0 or above). After it, 3003 added and then 3000 removed, one voter at a
/// time: each new set shares a majority with the one before, and every start reads them.
/// Nothing to report, and the history holds the three sets in order.
#[test]
fn kraft_version_upgraded_after_a_snapshot_without_voters_then_one_voter_at_a_time() {
    let (s, snap) = upgraded(vec![
        change(&[3000, 3001, 3002, 3003]),
        data(vec![MetaRecord::NoOp]),
        change(&[3001, 3002, 3003]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let (b, v) = run(nodes(&s, &snap, 3002));
    v.assert_quiet();
    assert_eq!(
        voter_sets(&b),
        vec![
            VOTERS.to_vec(),
            vec![3000, 3001, 3002, 3003],
            vec![3001, 3002, 3003]
        ]
    );
}

/// The nodes of [`a_snapshots_voters_are_overridden_by_the_log_after_it`]: the log from the
/// snapshot (12, 2) holding the voters 3000–3002, then 3003 added (offset 14).
fn override_nodes() -> Vec<Node> {
    let (s, _) = upgraded(vec![
        change(&[3000, 3001, 3002, 3003]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let snap = Snap {
        end: 12,
        epoch: 2,
        image: image(0),
        voters: Some(VOTERS.to_vec()),
    };
    nodes(&s, &snap, 3002)
}

/// `KRaftControlRecordStateMachineTest.testUpdateWithSnapshotAndLogOverride`,
/// `KRaftControlRecordStateMachineTest.testTrimPrefixTo`: the log cleaned below the
/// snapshot (12, 2), which holds `kraft.version` 1 and the voters 3000–3002 (the
/// `VotersRecord`s below it went with the segments: the snapshot's set stands for them, at
/// the offset before its end); the log after it adds 3003, one voter, so the sets overlap.
/// The voter set after the log is the log's. Nothing to report; the history starts at the
/// snapshot and its last set is the log's.
#[test]
fn a_snapshots_voters_are_overridden_by_the_log_after_it() {
    let (b, v) = run(override_nodes());
    v.assert_quiet();
    let log = history_log(&b);
    assert_eq!(log.snapshot.as_ref().map(|s| s.end_offset), Some(12));
    assert_eq!(voter_sets(&b).last(), Some(&vec![3000, 3001, 3002, 3003]));
}

/// The same, for the set in force between the snapshot and the log's change:
/// `testUpdateWithSnapshotAndLogOverride` asks for the voter set at the offset before the
/// snapshot's end and gets the snapshot's `VotersRecord` (`maybeLoadSnapshot` adds it at
/// `lastContainedLogOffset`). The history's KRaft events must hold it before the log's.
#[test]
fn a_snapshots_voters_are_the_set_at_its_end() {
    let (b, _) = run(override_nodes());
    assert_eq!(
        voter_sets(&b),
        vec![VOTERS.to_vec(), vec![3000, 3001, 3002, 3003]]
    );
}

/// `KRaftControlRecordStateMachineTest.testTruncateTo`: a `VotersRecord` in a tail the log
/// later truncates is forgotten with it (`truncateNewEntries`). 3001 led epoch 2, appended
/// the addition of 3003 and a `NoOpRecord` that no other voter fetched, and crashed; 3000
/// won epoch 3 with 3002's vote and wrote its own records at those offsets. 3001's copy still
/// holds the tail (it truncates it on its first fetch). Nothing at warning; the history
/// follows the epoch-3 copy, whose voters never included 3003.
#[test]
fn a_voter_change_in_a_truncated_tail_is_forgotten() {
    let (mut base, snap) = upgraded(Vec::new());
    base.truncate(base.len() - 2); // up to 3001's NoOp at 11
    assert_eq!(end_of(&base), 12);
    let mut mine = base.clone();
    mine.extend([
        change(&[3000, 3001, 3002, 3003]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let mut theirs = base.clone();
    theirs.extend([
        Step::Elect {
            leader: 3000,
            voters: VOTERS.to_vec(),
            granting: vec![3000, 3002],
        },
        data(vec![MetaRecord::NoOp]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let mut ns = nodes(&theirs, &snap, 3000);
    ns[1].log = copy(&mine, snap.end);
    ns[1].quorum_state = qs_v1(3001, 2, 3001, 3001);
    let (b, v) = run(ns);
    v.assert_quiet();
    let log = history_log(&b);
    assert_eq!((log.last_epoch, log.end_offset), (3, 15));
    assert!(!log.path.contains("broker-3001"), "{}", log.path);
    assert_eq!(voter_sets(&b), vec![VOTERS.to_vec()]);
}

/// `VoterSetHistoryTest.testAddAtNonOverlapping`, `VoterSetTest.testNonoverlappingMajority`:
/// `VoterSetHistory.addAt` refuses a voter set read from the log that does not share a
/// majority with the previous one read from the log or a snapshot (more than one voter
/// removed, or more than one added: `VoterSet.hasOverlappingMajority`), and nothing catches
/// the `IllegalArgumentException` in `KRaftControlRecordStateMachine.maybeLoadLog`: no node
/// whose start reads such a record starts. Two layouts: the log's set [3000–3003] followed
/// by [3002, 3003] (two removed at once, offset 15), and the snapshot (12, 2)'s set
/// [3000–3002] followed in the log by [3000, 3003, 3004] (two replaced, offset 14). One
/// cause, one finding: `metadata_record_rejected` at the record, of the cluster's metadata
/// history, in `scan`, `verify` and the merge alike. The near misses are
/// [`kraft_version_upgraded_after_a_snapshot_without_voters_then_one_voter_at_a_time`]
/// and [`a_snapshots_voters_are_overridden_by_the_log_after_it`] (quiet).
#[test]
fn a_voter_change_of_two_at_once_stops_every_node() {
    let (s, snap) = upgraded(vec![
        change(&[3000, 3001, 3002, 3003]),
        change(&[3002, 3003]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let from_snapshot = upgraded(vec![
        change(&[3000, 3003, 3004]),
        data(vec![MetaRecord::NoOp]),
    ])
    .0;
    let snap12 = Snap {
        end: 12,
        epoch: 2,
        image: image(0),
        voters: Some(VOTERS.to_vec()),
    };
    for (steps, snap, offset) in [(&s, &snap, 15), (&from_snapshot, &snap12, 14)] {
        let (_, v) = run(nodes(steps, snap, 3002));
        let rejected = |fs: Vec<&Finding>| -> Vec<Finding> {
            (fs.into_iter())
                .filter(|f| f.kind == Kind::MetadataRecordRejected && f.offset == Some(offset))
                .cloned()
                .collect()
        };
        let found = [
            rejected(v.scan.findings.iter().collect()),
            rejected(v.verify.findings().collect()),
            rejected(v.merge.findings.iter().collect()),
        ];
        for (name, e) in ["scan", "verify", "merge"].iter().zip(&found) {
            assert_eq!(e.len(), 1, "{name}: {:#?}", loud(&v));
            assert_eq!(e[0].severity, Severity::Error, "{name}");
            assert_eq!(e[0].evidence["record"], "VotersRecord", "{name}");
        }
        assert!(
            errors(&v)
                .iter()
                .all(|f| f.kind == Kind::MetadataRecordRejected)
        );
    }
}
