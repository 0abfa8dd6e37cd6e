//! `ReassignPartitionsCommandTest` (KRaft, five brokers 0–4, `foo-0` [0, 1, 2], `foo-1`
//! [1, 2, 3], `bar-0` [3, 2, 1], `baz-2` [0, 2, 1]): what a reassignment leaves on the brokers
//! and in the metadata log once it completed, while it runs, and once it was cancelled.
//!
//! The controller's records: `ReplicationControlManager.changePartitionReassignment` writes
//! the target replicas followed by the removing ones, with `adding` and `removing`
//! (`PartitionReassignmentReplicas`); the leader's AlterPartition that puts the last target
//! replica in the ISR completes it in the same record (`PartitionChangeBuilder.
//! completeReassignmentIfNeeded`: replicas and ISR cut to the target), electing the first
//! target replica in the ISR when the leader is removed (`electLeader`) and bumping the leader
//! epoch anyway when a replica leaves (`triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`
//! writes the same leader). A cancellation writes the original replicas back and the ISR
//! without the adding ones (`PartitionReassignmentRevert`), also bumping the epoch. A broker no
//! longer assigned stops its replica and deletes it (`ReplicaManager.applyDelta` →
//! `LogManager.asyncDelete`: renamed `-delete`, removed after `file.delete.delay.ms`).

use super::{agreed, cut};
use crate::kafka_imgaudit_cases::{all_lines, history_of};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, change, delete_replica, metadata_version, partition, register,
    topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, replica};
use klogscan::cluster::leadership::Choice;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_BROKER, RESOURCE_TOPIC};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

/// Broker `id`'s broker epoch: the offset of its registration (0 the `LeaderChange`, 1 the
/// metadata version, then brokers 0–4 in turn).
pub(crate) fn epoch_of(id: i32) -> i64 {
    2 + i64::from(id)
}

/// The five brokers registering (each with `dirs(id)`) and unfenced, at metadata version
/// `level`; the clock at `T0` - 40 s.
pub(crate) fn five(level: i16, dirs: &dyn Fn(i32) -> Vec<[u8; 16]>) -> MetaLog {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(level)]);
    for id in 0..5 {
        m.at(T0 - (50 - i64::from(id)) * SEC);
        assert_eq!(m.p.next_offset(), epoch_of(id));
        let mut r = register(id, epoch_of(id), id as u8 + 1, true);
        if let MetaRecord::RegisterBroker(b) = &mut r {
            b.log_dirs = dirs(id);
        }
        m.batch(&[r]);
    }
    m.at(T0 - 40 * SEC);
    let unfence: Vec<MetaRecord> = (0..5)
        .map(|id| broker_change(id, epoch_of(id), -1, 0))
        .collect();
    m.batch(&unfence);
    m
}

/// Brokers 0–4 (log dir `data`, `parts(id)` its partitions), each with its copy of `m`.
pub(crate) fn brokers(m: &MetaLog, parts: impl Fn(i32) -> Vec<PartitionBuilder>) -> Brokers {
    let mut b = Brokers::new();
    for id in 0..5 {
        let mut ld = LogDirBuilder::new(id);
        for p in parts(id) {
            ld = ld.partition(p);
        }
        let dir = b.write(id, "data", ld, Some(epoch_of(id)));
        m.write(&dir);
    }
    b
}

/// `createTopics`' `foo` and `bar` (and `baz` when `with_baz`), at `T0` - 30 s.
pub(crate) fn created(m: &mut MetaLog, with_baz: bool) {
    m.at(T0 - 30 * SEC);
    m.batch(&[
        topic("foo"),
        partition("foo", 0, &[0, 1, 2], &[0, 1, 2], (0, 0, 0)),
        partition("foo", 1, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
    ]);
    m.batch(&[
        topic("bar"),
        partition("bar", 0, &[3, 2, 1], &[3, 2, 1], (3, 0, 0)),
    ]);
    if with_baz {
        m.batch(&[
            topic("baz"),
            partition("baz", 0, &[1, 0, 2], &[1, 0, 2], (1, 0, 0)),
            partition("baz", 1, &[2, 0, 1], &[2, 0, 1], (2, 0, 0)),
            partition("baz", 2, &[0, 2, 1], &[0, 2, 1], (0, 0, 0)),
        ]);
    }
}

/// The reassignment of `t`-`n` started: `replicas` (target then removing), `adding`,
/// `removing`.
pub(crate) fn start(
    t: &str,
    n: i32,
    replicas: &[i32],
    adding: &[i32],
    removing: &[i32],
) -> MetaRecord {
    change(t, n, |c| {
        c.replicas = Some(replicas.to_vec());
        c.adding_replicas = Some(adding.to_vec());
        c.removing_replicas = Some(removing.to_vec());
    })
}

/// The record completing (or reverting) a reassignment: replicas and ISR, adding and
/// removing emptied, `leader` written (the same one for a bare epoch bump).
pub(crate) fn settle(t: &str, n: i32, replicas: &[i32], isr: &[i32], leader: i32) -> MetaRecord {
    change(t, n, |c| {
        c.replicas = Some(replicas.to_vec());
        c.isr = Some(isr.to_vec());
        c.leader = leader;
        c.adding_replicas = Some(vec![]);
        c.removing_replicas = Some(vec![]);
    })
}

/// The `stray_replica` findings of `v`: (broker, topic, partition).
fn strays(v: &crate::kafka_quiet_cluster_cases::Verdict) -> Vec<(Option<i32>, String, i32)> {
    let mut s: Vec<_> = (agreed(v, Kind::StrayReplica).iter())
        .map(|f| (f.source.broker_id, f.topic.clone(), f.partition))
        .collect();
    s.sort();
    s
}

/// `testReassignment` (`executeAndVerifyReassignment`): `foo-0` [0, 1, 2] → [0, 1, 3] and
/// `bar-0` [3, 2, 1] → [3, 2, 0], both completed (`PartitionReassignmentState` done) with
/// their leaders kept, each at leader epoch 1; then `verifyReplicaDeleted`: broker 2's
/// `foo-0` and broker 1's `bar-0` are gone (the first already removed, the second still
/// renamed `-delete`). The copies (12 batches at epoch 0) agree everywhere: nothing at warning
/// or above, no stray, no divergence, the two epoch bumps no election in the history, the leaders kept. Near miss: broker 2 down when the reassignment completed keeps a live `foo-0` the
/// image no longer gives it: one `stray_replica` (broker 2's `foo-0`), broker 1's `-delete`
/// copy still none.
#[test]
fn a_completed_reassignment_keeps_its_leaders_and_removes_the_old_replicas() {
    let mut m = five(14, &|_| vec![]);
    created(&mut m, false);
    m.at(T0 + 5 * SEC);
    m.batch(&[
        start("foo", 0, &[0, 1, 3, 2], &[3], &[2]),
        start("bar", 0, &[3, 2, 0, 1], &[0], &[1]),
    ]);
    m.at(T0 + 11 * SEC);
    m.batch(&[settle("foo", 0, &[0, 1, 3], &[0, 1, 3], 0)]);
    m.batch(&[settle("bar", 0, &[3, 2, 0], &[3, 2, 0], 3)]);
    let holds = |id: i32, t: &str, n: i32| match (t, n) {
        ("foo", 0) => [0, 1, 2, 3].contains(&id),
        ("foo", 1) => [1, 2, 3].contains(&id),
        _ => [0, 1, 2, 3].contains(&id),
    };
    let write = |removed_from_2: bool| {
        let b = brokers(&m, |id| {
            [("foo", 0), ("foo", 1), ("bar", 0)]
                .into_iter()
                .filter(|(t, n)| holds(id, t, *n))
                .map(|(t, n)| replica(t, n, &[(0, 12)]))
                .collect()
        });
        let ends = |kept: &[(&'static str, i32)]| -> Vec<(&'static str, i32, i64)> {
            kept.iter().map(|(t, n)| (*t, *n, 60)).collect()
        };
        delete_replica(
            &b.path(1, "data"),
            "bar",
            0,
            &ends(&[("foo", 0), ("foo", 1)]),
        );
        if removed_from_2 {
            let two = b.path(2, "data");
            delete_replica(&two, "foo", 0, &ends(&[("foo", 1), ("bar", 0)]));
            for e in std::fs::read_dir(&two).unwrap() {
                let p = e.unwrap().path();
                if p.to_string_lossy().ends_with("-delete") {
                    std::fs::remove_dir_all(p).unwrap();
                }
            }
        }
        b
    };
    let b = write(true);
    let v = b.check();
    v.assert_quiet();
    assert_eq!(strays(&v), []);
    assert_eq!(cut(&v), None);
    // the leaders kept: the epoch bumps are no leader change
    assert_eq!(history_of(&b).elections, [], "{}", all_lines(&v));
    let v = write(false).check();
    assert_eq!(strays(&v), [(Some(2), "foo".to_string(), 0)]);
}

fn throttle(resource_type: i8, name: &str, key: &str, value: Option<&str>) -> MetaRecord {
    MetaRecord::Config {
        resource_type,
        resource_name: name.into(),
        name: key.into(),
        value: value.map(Into::into),
    }
}

/// `testHighWaterMarkAfterPartitionReassignment`: `foo-0` [0, 1, 2] with 100 records →
/// [3, 1, 2]. The leader's AlterPartition that puts 3 in the ISR completes the reassignment in
/// the same record: replicas [3, 1, 2], ISR [1, 2, 3], and since the leader 0 leaves, 3 — the
/// first target replica in the targeted ISR (`electLeader`) — elected at epoch 1; the test
/// then reads the new leader's latest offset, 100. On disk: brokers 1, 2, 3 holding the 100
/// offsets at epoch 0, broker 0's copy deleted: nothing at warning or above, one election of
/// 3 from the ISR (the record's own ISR: `reassignment_completed`). Near miss: broker 3 elected
/// by the same record while its copy holds 60 offsets (the latest offset the test reads would
/// be 60): the followers 1 and 2 hold the acknowledged 60–99 past the new leader's end and
/// truncate them when they follow — `replica_divergence` at 60, an error.
#[test]
fn a_reassignment_removing_the_leader_elects_the_first_target_replica_in_the_isr() {
    let mut m = five(14, &|_| vec![]);
    created(&mut m, false);
    m.at(T0 + 5 * SEC);
    m.batch(&[start("foo", 0, &[3, 1, 2, 0], &[3], &[0])]);
    m.at(T0 + 25 * SEC);
    m.batch(&[settle("foo", 0, &[3, 1, 2], &[1, 2, 3], 3)]);
    let write = |three: usize| {
        let b = brokers(&m, |id| {
            let mut ps = vec![];
            if (1..=3).contains(&id) {
                ps.push(replica("foo", 1, &[(0, 2)]));
                ps.push(replica("foo", 0, &[(0, if id == 3 { three } else { 20 })]));
                ps.push(replica("bar", 0, &[(0, 2)]));
            }
            ps
        });
        // the new leader's cache: its epoch 1 from its log end (`Partition.makeLeader`)
        let end = three * 5;
        let text = format!("0\n2\n0 0\n1 {end}\n");
        std::fs::write(
            b.path(3, "data").join("foo-0/leader-epoch-checkpoint"),
            text,
        )
        .unwrap();
        b
    };
    let b = write(20);
    let v = b.check();
    v.assert_quiet();
    let h = history_of(&b);
    let got: Vec<_> = (h.elections.iter())
        .map(|e| (e.leader, e.leader_epoch, e.choice, e.isr_before.clone()))
        .collect();
    assert_eq!(got, [(3, 1, Choice::Isr, vec![0, 1, 2])]);
    assert_eq!(cut(&v), None);
    let v = write(12).check();
    assert!(agreed(&v, Kind::UncleanLeaderElection).is_empty());
    let d = agreed(&v, Kind::ReplicaDivergence);
    let mut at: Vec<_> = (d.iter())
        .map(|f| {
            let c = super::cut_of(&[f]).unwrap();
            (c.at, c.truncates, c.severity)
        })
        .collect();
    at.sort_by_key(|c| c.1);
    let lost = |id| (60, Some((id, 60)), Severity::Error);
    assert_eq!(at, [lost(1), lost(2)], "{}", all_lines(&v));
}

/// `testProduceAndConsumeWithReassignmentInProgress`: `baz-2` [0, 2, 1] → [3, 2, 1] with an
/// inter-broker throttle of 300 B/s (`leader.replication.throttled.replicas` `2:0,2:2,2:1`,
/// `follower.replication.throttled.replicas` `2:3` on `baz`, the two rates on brokers 0–3:
/// `ConfigRecord`s), 60 records before and 100 during it; then the throttle removed (the
/// configs deleted: `ConfigRecord`s without a value) and the reassignment completed (3
/// elected, the leader 0 removed). The state while it runs (3 has fetched 30 of the leader's
/// 160 offsets, in no ISR, the throttle configs set) and the end (every copy of the 160, 0's
/// deleted) both raise nothing at warning or above; broker 3's short copy draws no
/// divergence. Near miss: broker 3's batch at 30 not the leader's (other records at the same
/// epoch 0): `replica_divergence` at 30 that survives — the follower's truncation compares
/// epochs, which agree (`AbstractFetcherThread.truncateToEpochEndOffsets`), so nothing
/// removes it.
#[test]
fn a_throttled_reassignment_in_progress_and_completed_is_quiet() {
    let log = |done: bool| {
        let mut m = five(14, &|_| vec![]);
        created(&mut m, true);
        m.at(T0 + 10 * SEC);
        let mut set = vec![
            throttle(
                RESOURCE_TOPIC,
                "baz",
                "leader.replication.throttled.replicas",
                Some("2:0,2:2,2:1"),
            ),
            throttle(
                RESOURCE_TOPIC,
                "baz",
                "follower.replication.throttled.replicas",
                Some("2:3"),
            ),
        ];
        for id in 0..4 {
            for k in [
                "leader.replication.throttled.rate",
                "follower.replication.throttled.rate",
            ] {
                set.push(throttle(RESOURCE_BROKER, &id.to_string(), k, Some("300")));
            }
        }
        m.batch(&set);
        m.batch(&[start("baz", 2, &[3, 2, 1, 0], &[3], &[0])]);
        if done {
            m.at(T0 + 40 * SEC);
            let unset: Vec<_> = (set.iter())
                .map(|r| match r {
                    MetaRecord::Config {
                        resource_type,
                        resource_name,
                        name,
                        ..
                    } => throttle(*resource_type, resource_name, name, None),
                    _ => unreachable!(),
                })
                .collect();
            m.batch(&unset);
            m.batch(&[change("baz", 2, |c| c.isr = Some(vec![0, 2, 1, 3]))]);
            m.batch(&[settle("baz", 2, &[3, 2, 1], &[2, 1, 3], 3)]);
        }
        m
    };
    let write = |done: bool, three: PartitionBuilder| {
        let m = log(done);
        let three = std::cell::RefCell::new(Some(three));
        brokers(&m, |id| {
            let mut ps = vec![];
            for (n, rs) in [(0, [1, 0, 2]), (1, [2, 0, 1])] {
                if rs.contains(&id) {
                    ps.push(replica("baz", n, &[(0, 2)]));
                }
            }
            if id == 3 {
                ps.push(three.borrow_mut().take().unwrap());
            } else if [0, 1, 2].contains(&id) && !(done && id == 0) {
                ps.push(replica("baz", 2, &[(0, 32)]));
            }
            ps
        })
    };
    let v = write(false, replica("baz", 2, &[(0, 6)])).check();
    v.assert_quiet();
    assert_eq!(cut(&v), None);
    let v = write(true, replica("baz", 2, &[(0, 32)])).check();
    v.assert_quiet();
    assert_eq!(cut(&v), None);
    let mut own = replica("baz", 2, &[(0, 6)]);
    own.append(Batch::new(Producer::PLAIN).values(["o30", "o31", "o32", "o33", "o34"]));
    let v = write(false, own).check();
    let d = agreed(&v, Kind::ReplicaDivergence);
    let got: Vec<_> = (d.iter())
        .map(|f| {
            let three = f.evidence["copies"][1]
                .as_str()
                .unwrap()
                .contains("broker-3/");
            (super::cut_of(&[f]).unwrap(), three)
        })
        .collect();
    let survives = super::Cut {
        at: 30,
        truncates: None,
        severity: Severity::Warning,
    };
    assert_eq!(got.len(), 3, "{}", all_lines(&v));
    assert!(got.iter().all(|g| *g == (survives, true)), "{got:?}");
}

/// `testExecuteAssignmentWithOneBootstrapServerShutdownWontTimeout` (2026 trunk): broker 0
/// shut down (its controlled shutdown moves `foo-0`'s leadership to 1 at epoch 1, ISR [1, 2],
/// then it is fenced), then `foo-0` → [3, 1, 2] executed while it is down. While the
/// reassignment runs (3 at 40 of 100 offsets) broker 0 is still a removing replica: nothing
/// at warning or above, one election (1 from the ISR). Once the AlterPartition adding 3
/// completes it (replicas [3, 1, 2], 1 kept at epoch 2), broker 0 — down, never told — holds
/// a replica the image no longer gives it: one `stray_replica` of broker 0, what its next start
/// does with it (`LogManager.isStrayKraftReplica`: set aside as `-stray`), and nothing else.
#[test]
fn a_reassignment_away_from_a_broker_that_is_down_leaves_its_copy_stray() {
    let log = |done: bool| {
        let mut m = five(14, &|_| vec![]);
        created(&mut m, false);
        m.at(T0 + 5 * SEC);
        m.batch(&[
            broker_change(0, epoch_of(0), 0, 1),
            change("foo", 0, |c| {
                c.leader = 1;
                c.isr = Some(vec![1, 2]);
            }),
        ]);
        m.batch(&[broker_change(0, epoch_of(0), 1, 0)]);
        m.at(T0 + 10 * SEC);
        m.batch(&[start("foo", 0, &[3, 1, 2, 0], &[3], &[0])]);
        if done {
            m.at(T0 + 20 * SEC);
            m.batch(&[settle("foo", 0, &[3, 1, 2], &[1, 2, 3], 1)]);
        }
        m
    };
    let write = |done: bool| {
        brokers(&log(done), |id| {
            let mut ps = vec![];
            if [1, 2, 3].contains(&id) {
                ps.push(replica("foo", 1, &[(0, 2)]));
                ps.push(replica("bar", 0, &[(0, 2)]));
            }
            let n = match (id, done) {
                (0..=2, _) => 20,
                (3, true) => 20,
                (3, false) => 8,
                _ => return ps,
            };
            ps.push(replica("foo", 0, &[(0, n)]));
            ps
        })
    };
    let b = write(false);
    let v = b.check();
    v.assert_quiet();
    let h = history_of(&b);
    let got: Vec<_> = (h.elections.iter())
        .map(|e| (e.leader, e.leader_epoch, e.choice))
        .collect();
    assert_eq!(got, [(1, 1, Choice::Isr)]);
    assert_eq!(cut(&v), None);
    let b = write(true);
    let v = b.check();
    assert_eq!(strays(&v), [(Some(0), "foo".to_string(), 0)]);
    let loud = crate::kafka_quiet_cluster_cases::loud(&v.scan.findings);
    assert_eq!(loud.len(), 1, "{}", all_lines(&v));
    assert_eq!(cut(&v), None);
}
