//! `ReassignPartitionsCommandTest`'s cancellations (`testCancellationWithBootstrapServer`,
//! `testCancellationWithBootstrapController`, `testCancellationWithAddingReplicaInIsr`, and
//! the 2026 trunk's `testCancellationWithAddingAndRemovingReplicaInIsr`): the controller
//! reverts each partition to its original replicas (`PartitionReassignmentRevert`: the
//! current replicas without the adding ones, the ISR without them; the replicas losing
//! members, the leader epoch bumps with the leader kept) and the adding brokers delete their
//! copies (`verifyReplicaDeleted`).

use super::agreed;
use super::reassign::{brokers, created, epoch_of, five, settle, start};
use crate::kafka_imgaudit_cases::{all_lines, history_of};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, change, delete_replica,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, replica};
use klogscan::cluster::leadership::Choice;
use klogscan::finding::{Kind, Severity};

/// One of the tests' flows: the reassignments it starts (partition, replicas while running,
/// adding, removing), the ISR the leader reports before the cancellation, the revert.
struct Flow {
    parts: Vec<Part>,
}

struct Part {
    topic: &'static str,
    n: i32,
    original: Vec<i32>,
    running: Vec<i32>,
    adding: Vec<i32>,
    removing: Vec<i32>,
    isr_then: Option<Vec<i32>>,
    /// Batches each adding broker fetched (0: the 1 B/s throttle let nothing through).
    fetched: usize,
}

fn flows() -> Vec<(&'static str, Flow)> {
    let part =
        |topic, n, original: &[i32], running: &[i32], adding: &[i32], removing: &[i32]| Part {
            topic,
            n,
            original: original.to_vec(),
            running: running.to_vec(),
            adding: adding.to_vec(),
            removing: removing.to_vec(),
            isr_then: None,
            fetched: 0,
        };
    let in_isr = |mut p: Part, isr: &[i32], fetched| {
        p.isr_then = Some(isr.to_vec());
        p.fetched = fetched;
        p
    };
    vec![
        (
            "testCancellationWithBootstrapServer / …BootstrapController",
            Flow {
                parts: vec![
                    part("foo", 0, &[0, 1, 2], &[0, 1, 3, 2], &[3], &[2]),
                    part("baz", 1, &[2, 0, 1], &[0, 2, 3, 1], &[3], &[1]),
                ],
            },
        ),
        (
            "testCancellationWithAddingReplicaInIsr",
            Flow {
                parts: vec![in_isr(
                    part("foo", 0, &[0, 1, 2], &[0, 1, 2, 3, 4], &[3, 4], &[]),
                    &[0, 1, 2, 3],
                    40,
                )],
            },
        ),
        (
            "testCancellationWithAddingAndRemovingReplicaInIsr",
            Flow {
                parts: vec![in_isr(
                    part("foo", 0, &[0, 1, 2], &[0, 3, 4, 1, 2], &[3, 4], &[1, 2]),
                    &[0, 1, 2, 3],
                    40,
                )],
            },
        ),
    ]
}

/// The metadata log of `f`: started at `T0` + 5 s, the ISR grown, cancelled at `T0` + 30 s
/// (when `cancelled`).
fn log(f: &Flow, cancelled: bool) -> MetaLog {
    let mut m = five(14, &|_| vec![]);
    created(&mut m, true);
    m.at(T0 + 5 * SEC);
    let started: Vec<_> = (f.parts.iter())
        .map(|p| start(p.topic, p.n, &p.running, &p.adding, &p.removing))
        .collect();
    m.batch(&started);
    for p in &f.parts {
        if let Some(isr) = &p.isr_then {
            m.at(T0 + 20 * SEC);
            m.batch(&[change(p.topic, p.n, |c| c.isr = Some(isr.clone()))]);
        }
    }
    if !cancelled {
        return m;
    }
    m.at(T0 + 30 * SEC);
    for p in &f.parts {
        let leader = p.original[0];
        m.batch(&[settle(p.topic, p.n, &p.original, &p.original, leader)]);
    }
    m
}

/// The brokers after `f`'s cancellation: every original replica with 40 batches of its
/// partition (`foo-1`, `bar-0`, `baz-0`, `baz-2` with 2), each adding broker's copy deleted
/// — or, for broker `kept`, still live (down when the cancellation came). `cancelled` false:
/// just before the cancellation, every adding copy live.
fn cluster(f: &Flow, cancelled: bool, kept: Option<i32>) -> Brokers {
    let m = log(f, cancelled);
    let others: [(&str, i32, &[i32]); 4] = [
        ("foo", 1, &[1, 2, 3]),
        ("bar", 0, &[3, 2, 1]),
        ("baz", 0, &[1, 0, 2]),
        ("baz", 2, &[0, 2, 1]),
    ];
    let b = brokers(&m, |id| {
        let mut ps = vec![];
        for (t, n, rs) in others {
            if rs.contains(&id) {
                ps.push(replica(t, n, &[(0, 2)]));
            }
        }
        for p in &f.parts {
            if p.original.contains(&id) {
                ps.push(replica(p.topic, p.n, &[(0, 40)]));
            } else if p.adding.contains(&id) {
                ps.push(replica(p.topic, p.n, &[(0, p.fetched)]));
            }
        }
        ps
    });
    for p in &f.parts {
        for &id in &p.adding {
            if !cancelled || Some(id) == kept {
                continue;
            }
            let dir = b.path(id, "data");
            let ends: Vec<(&str, i32, i64)> = (others.iter())
                .filter(|(_, _, rs)| rs.contains(&id))
                .map(|(t, n, _)| (*t, *n, 10))
                .collect();
            if dir.join(format!("{}-{}", p.topic, p.n)).exists() {
                delete_replica(&dir, p.topic, p.n, &ends);
            }
        }
    }
    b
}

/// Each flow, while it runs (`PartitionReassignmentState` not done: the adding copies
/// behind, empty under the 1 B/s throttle) and once cancelled (the original replicas, all
/// equal, the adding brokers' copies deleted, renamed `-delete`): nothing at warning or above,
/// no stray, no divergence, no election (the leaders kept through the reverts' epoch bumps).
/// Near miss:
/// broker 4 of `testCancellationWithAddingReplicaInIsr` down when the cancellation came
/// keeps its live `foo-0` (40 offsets fetched before the throttle): one `stray_replica`,
/// broker 4's `foo-0`, and broker 3's deleted copy none.
#[test]
fn a_cancelled_reassignment_reverts_to_the_original_replicas_and_the_adding_copies_go() {
    for (name, f) in flows() {
        for cancelled in [false, true] {
            let b = cluster(&f, cancelled, None);
            let v = b.check();
            v.assert_quiet();
            assert_eq!(super::cut(&v), None, "{name}");
            assert!(agreed(&v, Kind::StrayReplica).is_empty(), "{name}");
            assert_eq!(history_of(&b).elections, [], "{name}: {}", all_lines(&v));
        }
    }
    let (_, f) = flows().remove(1);
    let v = cluster(&f, true, Some(4)).check();
    let s: Vec<_> = (agreed(&v, Kind::StrayReplica).iter())
        .map(|f| (f.source.broker_id, f.topic.clone(), f.partition, f.severity))
        .collect();
    assert_eq!(s, [(Some(4), "foo".to_string(), 0, Severity::Warning)]);
}

/// `PartitionReassignmentRevert`'s special case, the near miss of the flows above that the
/// tests never reach: `foo-0` [0, 1, 2] → [0, 3, 4] running, the ISR shrunk to [0, 3], then
/// broker 0 lost and 3 — an adding replica — elected from the ISR at epoch 1, taking 10
/// more batches alone (200–249); then 3 is fenced too (no leader, epoch 2, the ISR kept [3]).
/// Cancelling leaves an ISR of adding replicas only, so the controller (with
/// `unclean.leader.election.enable`) falls back to the first original replica, 0, at epoch 3
/// (its cache: `3 200`, `Partition.makeLeader`). Broker 4 deleted its copy; broker 3, down,
/// still holds its own. One `unclean_leader_election`, path `reassignment_revert`, an error
/// naming 3's copy and its 50 lost offsets from 200; broker 3's copy a `stray_replica` (its
/// next start sets it aside: nothing brings 200–249 back).
#[test]
fn a_cancellation_whose_isr_held_only_adding_replicas_is_an_unclean_election() {
    let mut m = five(14, &|_| vec![]);
    created(&mut m, true);
    m.at(T0 + 5 * SEC);
    m.batch(&[start("foo", 0, &[0, 3, 4, 1, 2], &[3, 4], &[1, 2])]);
    m.at(T0 + 20 * SEC);
    m.batch(&[change("foo", 0, |c| c.isr = Some(vec![0, 3]))]);
    m.at(T0 + 25 * SEC);
    m.batch(&[
        broker_change(0, epoch_of(0), 1, 0),
        change("foo", 0, |c| {
            c.leader = 3;
            c.isr = Some(vec![3]);
        }),
    ]);
    m.at(T0 + 50 * SEC);
    m.batch(&[
        broker_change(3, epoch_of(3), 1, 0),
        change("foo", 0, |c| c.leader = -1),
    ]);
    m.at(T0 + 60 * SEC);
    m.batch(&[broker_change(0, epoch_of(0), -1, 0)]);
    m.batch(&[settle("foo", 0, &[0, 1, 2], &[0], 0)]);
    let b = brokers(&m, |id| match id {
        0 => vec![replica("foo", 0, &[(0, 40)])],
        1 | 2 => vec![replica("foo", 0, &[(0, 30)])],
        3 => vec![replica("foo", 0, &[(0, 40), (1, 10)])],
        _ => vec![replica("foo", 0, &[(0, 20)])],
    });
    let zero = b.path(0, "data").join("foo-0/leader-epoch-checkpoint");
    std::fs::write(zero, "0\n2\n0 0\n3 200\n").unwrap();
    delete_replica(&b.path(4, "data"), "foo", 0, &[]);
    let v = b.check();
    let h = history_of(&b);
    let got: Vec<_> = (h.elections.iter())
        .map(|e| (e.leader, e.leader_epoch, e.choice, e.reassignment_revert))
        .collect();
    assert_eq!(
        got,
        [(3, 1, Choice::Isr, false), (0, 3, Choice::Unclean, true)]
    );
    let u = agreed(&v, Kind::UncleanLeaderElection);
    assert_eq!(u.len(), 1, "{}", all_lines(&v));
    let e = &u[0].evidence;
    assert_eq!(u[0].severity, Severity::Error, "{e:#}");
    assert_eq!(
        (&e["path"], &e["new_leader"]),
        (&"reassignment_revert".into(), &0.into())
    );
    let old = &e["old_leader_copy"];
    assert_eq!(
        (&old["broker"], &old["lost_offsets"]),
        (&3.into(), &50.into()),
        "{e:#}"
    );
    assert_eq!(u[0].offset, Some(200));
    let s: Vec<_> = (agreed(&v, Kind::StrayReplica).iter())
        .map(|f| f.source.broker_id)
        .collect();
    assert_eq!(s, [Some(3)]);
}
