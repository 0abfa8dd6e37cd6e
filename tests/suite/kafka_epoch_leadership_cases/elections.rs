//! `PartitionChangeBuilderTest` and `ReplicationControlManagerTest` cases as the metadata
//! records Kafka's controller writes for them, replayed by klogscan's leadership history.
//! Registrations are `orders-0`; `FOO` is the builder test's partition on replicas
//! [2, 1, 3], ISR [2, 1, 3], led by 1 at leader epoch 100 and partition epoch 200.

use klogscan::cluster::leadership::{Choice, ClusterHistory, MetaEntry, MetadataLog};
use klogscan::finding::{Kind, Source};
use klogscan::read::format::metadata::{MetaRecord, PartitionChange, PartitionRecord};
use klogscan::testkit::LogDirBuilder;
use klogscan::testkit::brokers::{orders_change, orders_partition};
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::metadata::MetadataLogBuilder;

const T0: i64 = 1_700_000_000_000;

fn topic() -> MetaRecord {
    MetaRecord::Topic {
        name: "orders".into(),
        topic_id: topic_id_for("orders"),
    }
}

/// `orders-0` at leader epoch 100 and partition epoch 200 with the ELR fields given.
fn registration(
    replicas: &[i32],
    isr: &[i32],
    leader: i32,
    elr: &[i32],
    last_known_elr: &[i32],
    recovery: i8,
) -> MetaRecord {
    let MetaRecord::Partition(mut p) = orders_partition(replicas, isr, leader, 100) else {
        unreachable!("orders_partition gives a PartitionRecord")
    };
    p.partition_epoch = 200;
    p.leader_recovery_state = recovery;
    p.eligible_leader_replicas = Some(elr.to_vec());
    p.last_known_elr = Some(last_known_elr.to_vec());
    MetaRecord::Partition(p)
}

fn foo() -> MetaRecord {
    registration(&[2, 1, 3], &[2, 1, 3], 1, &[], &[], 0)
}

fn change(f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    orders_change(f)
}

fn history(records: &[MetaRecord]) -> ClusterHistory {
    let entries = records
        .iter()
        .enumerate()
        .map(|(i, r)| MetaEntry {
            offset: i as i64,
            time: T0 + i as i64,
            raft_epoch: 1,
            from_snapshot: false,
            record: r.clone(),
        })
        .collect();
    ClusterHistory::from_log(
        Source::default(),
        MetadataLog {
            entries,
            ..Default::default()
        },
    )
}

/// `(leader, leader epoch, partition epoch)` after each record of the partition.
fn epochs(h: &ClusterHistory) -> Vec<(i32, i32, i32)> {
    h.timeline("orders", 0)
        .unwrap()
        .steps
        .iter()
        .map(|s| {
            (
                s.state.leader,
                s.state.leader_epoch,
                s.state.partition_epoch,
            )
        })
        .collect()
}

/// `(isr, elr, last known elr)`.
type Sets = (Vec<i32>, Vec<i32>, Vec<i32>);

/// The [`Sets`] of the partition's latest state.
fn sets(h: &ClusterHistory) -> Sets {
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    (s.isr, s.elr, s.last_known_elr)
}

fn choices(h: &ClusterHistory) -> Vec<Choice> {
    h.elections.iter().map(|e| e.choice).collect()
}

/// The `unclean_leader_election` findings of a scan of a log dir holding only the metadata
/// log of `records` (one batch).
fn unclean_findings(records: &[MetaRecord]) -> usize {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .write(d.path())
        .unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(records);
    m.write(d.path()).unwrap();
    let r = klogscan::pipeline::scan(
        &[d.path().to_path_buf()],
        &klogscan::partition::scan::ScanOptions::default(),
    );
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::UncleanLeaderElection)
        .count()
}

// ----- leader epoch bumps vs partition epoch bumps ----------------------------------------

/// `testNoLeaderEpochBumpOnIsrShrink` (metadata 3.6+), `testIsrChangeDoesntBumpLeaderEpoch`,
/// `testNoLeaderEpochBumpOnIsrExpansion` and `testReassignmentRearrangesReplicas`: records
/// changing only the ISR or the replica order (no leader field) raise the partition epoch
/// and keep leader 1 at epoch 100; no election, one leader epoch in the history.
#[test]
fn isr_and_replica_order_changes_bump_only_the_partition_epoch() {
    let h = history(&[
        topic(),
        foo(),
        change(|c| c.isr = Some(vec![2, 1])),
        change(|c| c.isr = Some(vec![2, 1, 3])),
        change(|c| c.replicas = Some(vec![3, 2, 1])),
    ]);
    assert_eq!(
        epochs(&h),
        vec![(1, 100, 200), (1, 100, 201), (1, 100, 202), (1, 100, 203)]
    );
    assert!(h.elections.is_empty());
    assert_eq!(h.leader_epochs("orders", 0), vec![(100, 1)]);
}

/// `testLeaderEpochBumpOnIsrShrink` (metadata 3.4/3.5, KAFKA-15021) and
/// `testLeaderEpochBumpOnNewReplicaSetDisjoint`: the record names the current leader 1 to
/// force a new leader epoch. Each raises both epochs; the leader does not change, so there
/// is no election, but the history holds the new epoch led by 1 (its batches carry it).
#[test]
fn a_record_naming_the_same_leader_bumps_the_leader_epoch() {
    let h = history(&[
        topic(),
        foo(),
        change(|c| {
            c.isr = Some(vec![2, 1]);
            c.leader = 1;
        }),
        change(|c| {
            c.replicas = Some(vec![2, 1, 4]);
            c.isr = Some(vec![2, 1, 4]);
            c.leader = 1;
        }),
    ]);
    assert_eq!(
        epochs(&h),
        vec![(1, 100, 200), (1, 101, 201), (1, 102, 202)]
    );
    assert!(h.elections.is_empty());
    assert_eq!(
        h.leader_epochs("orders", 0),
        vec![(100, 1), (101, 1), (102, 1)]
    );
}

/// `testIsrChangeAndLeaderChange` and `testElectLeader`'s clean cases: leader 1 leaves the
/// ISR ([2, 3]) and 2 is elected in the same record, a clean choice at epoch 101; with the
/// target ISR [3] and 3 not acceptable the online election finds no leader (leader -1,
/// epoch 101, no election).
#[test]
fn elect_leader_clean_cases() {
    let h = history(&[
        topic(),
        foo(),
        change(|c| {
            c.isr = Some(vec![2, 3]);
            c.leader = 2;
        }),
    ]);
    assert_eq!(choices(&h), vec![Choice::Isr]);
    assert_eq!(
        (h.elections[0].previous_leader, h.elections[0].leader_epoch),
        (1, 101)
    );
    let h = history(&[
        topic(),
        foo(),
        change(|c| {
            c.isr = Some(vec![3]);
            c.leader = -1;
        }),
    ]);
    assert_eq!(epochs(&h), vec![(1, 100, 200), (-1, 101, 201)]);
    assert!(h.elections.is_empty());
}

/// `testElectLeader`, UNCLEAN election with the target ISR [3] (3 not acceptable): Kafka
/// elects 2 uncleanly (`electAnyLeader` → `isAcceptableLeader`), and `tryElection` writes
/// ISR [2] and leader recovery state RECOVERING. Replica 2 was in the ISR before the
/// record, but the record itself says the election was unclean: only an unclean election
/// writes RECOVERING.
#[test]
fn an_election_writing_recovering_is_unclean_even_from_the_old_isr() {
    let records = [
        topic(),
        foo(),
        change(|c| {
            c.isr = Some(vec![2]);
            c.leader = 2;
            c.leader_recovery_state = 1;
        }),
    ];
    assert_eq!(choices(&history(&records)), vec![Choice::Unclean]);
}

/// `testIsrEnlargementCompletesReassignment`: BAR (replicas [1, 2, 3, 4], ISR [1, 2, 3],
/// removing [1], adding [4], leader 1) — the ISR grows to all four, the reassignment
/// completes: replicas and ISR [2, 3, 4], leader 2, a clean choice.
#[test]
fn isr_enlargement_completes_a_reassignment_with_a_clean_election() {
    let bar = MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: topic_id_for("orders"),
        replicas: vec![1, 2, 3, 4],
        isr: vec![1, 2, 3],
        removing_replicas: vec![1],
        adding_replicas: vec![4],
        leader: 1,
        leader_epoch: 100,
        partition_epoch: 200,
        ..Default::default()
    });
    let h = history(&[
        topic(),
        bar,
        change(|c| {
            c.replicas = Some(vec![2, 3, 4]);
            c.isr = Some(vec![2, 3, 4]);
            c.leader = 2;
            c.removing_replicas = Some(vec![]);
            c.adding_replicas = Some(vec![]);
        }),
    ]);
    assert_eq!(choices(&h), vec![Choice::Isr]);
    assert_eq!(epochs(&h), vec![(1, 100, 200), (2, 101, 201)]);
}

/// `testElectLeader`'s last FOO case: with target replicas [2, 1, 3, 4] and target ISR [4],
/// `isValidNewLeader` (which reads the *target* ISR) accepts 4 — a clean election, even
/// with UNCLEAN allowed. The same holds when a reassignment onto new brokers completes
/// (`completeReassignmentIfNeeded` then election in one `build`): [1, 2, 3] → [4, 5, 6]
/// writes replicas and ISR [4, 5, 6] with leader 4, no recovery state. Neither record is
/// an unclean election, though 4 was not in the ISR before it.
#[test]
fn a_leader_from_the_target_isr_is_a_clean_election() {
    let moved = [
        topic(),
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: topic_id_for("orders"),
            replicas: vec![1, 2, 3, 4, 5, 6],
            isr: vec![1, 2, 3],
            removing_replicas: vec![1, 2, 3],
            adding_replicas: vec![4, 5, 6],
            leader: 1,
            leader_epoch: 100,
            partition_epoch: 200,
            ..Default::default()
        }),
        change(|c| {
            c.replicas = Some(vec![4, 5, 6]);
            c.isr = Some(vec![4, 5, 6]);
            c.leader = 4;
            c.removing_replicas = Some(vec![]);
            c.adding_replicas = Some(vec![]);
        }),
    ];
    assert_eq!(choices(&history(&moved)), vec![Choice::Isr]);
    assert_eq!(unclean_findings(&moved), 0);
}

/// `testElectLeader`'s last FOO case alone: target ISR [4], leader 4, no recovery state
/// written. Kafka's election is clean; the record alone cannot tell it from an unclean
/// election of a metadata version before 3.2, which writes no RECOVERING either. With the
/// log's `metadata.version` at 3.2 or later (`FeatureLevelRecord` level ≥ 3,
/// `MetadataVersion.isLeaderRecoverySupported`) an unclean election would have written
/// RECOVERING: clean. Without a known version (or below 3.2) the reading stays unclean.
#[test]
fn a_leader_alone_in_the_target_isr_is_a_clean_election() {
    let elect_4 = || {
        change(|c| {
            c.replicas = Some(vec![2, 1, 3, 4]);
            c.isr = Some(vec![4]);
            c.leader = 4;
        })
    };
    let mv = |level: i16| MetaRecord::FeatureLevel {
        name: "metadata.version".into(),
        feature_level: level,
    };
    let h = history(&[mv(7), topic(), foo(), elect_4()]);
    assert_eq!(choices(&h), vec![Choice::Isr]);
    let h = history(&[topic(), foo(), elect_4()]);
    assert_eq!(choices(&h), vec![Choice::Unclean]);
    let h = history(&[mv(2), topic(), foo(), elect_4()]);
    assert_eq!(choices(&h), vec![Choice::Unclean]);
}

/// `testChangeInLeadershipDoesNotChangeRecoveryState`: replicas [1, 2, 3], ISR [1], leader
/// 1, RECOVERING. Leader 1 goes offline (leader -1, the ISR stays [1]), then comes back and
/// is re-elected from the ISR: a clean choice, no recovery state written, still RECOVERING.
#[test]
fn re_electing_the_isr_keeps_the_recovery_state() {
    let h = history(&[
        topic(),
        registration(&[1, 2, 3], &[1], 1, &[], &[], 1),
        change(|c| c.leader = -1),
        change(|c| c.leader = 1),
    ]);
    assert_eq!(choices(&h), vec![Choice::Isr]);
    let e = &h.elections[0];
    assert_eq!(
        (
            e.recovery_state_written,
            e.recovery_state_after,
            e.leader_epoch
        ),
        (None, 1, 102)
    );
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!((s.isr, s.recovery_state), (vec![1], 1));
}

// ----- KIP-966: eligible leader replicas --------------------------------------------------

/// `testEligibleLeaderReplicas_IsrShrinkBelowMinISR`, `_IsrExpandAboveMinISR`,
/// `_IsrAddNewMemberNotInELR` and `_RemoveUncleanShutdownReplicasFromElr` (record version
/// 2, min ISR 3): the ELR and last known ELR after each record Kafka's builder writes; none
/// names a leader, so the leader epoch stays 100 and there is no election.
#[test]
fn elr_follows_isr_changes() {
    let cases: [(MetaRecord, MetaRecord, Sets); 4] = [
        (
            registration(&[1, 2, 3, 4], &[1, 2, 3, 4], 1, &[], &[], 0),
            change(|c| {
                c.isr = Some(vec![1, 2]);
                c.eligible_leader_replicas = Some(vec![3, 4]);
            }),
            (vec![1, 2], vec![3, 4], vec![]),
        ),
        (
            registration(&[1, 2, 3, 4], &[1, 2], 1, &[3], &[4], 0),
            change(|c| {
                c.isr = Some(vec![1, 2, 3]);
                c.eligible_leader_replicas = Some(vec![]);
                c.last_known_elr = Some(vec![]);
            }),
            (vec![1, 2, 3], vec![], vec![]),
        ),
        (
            registration(&[1, 2, 3, 4], &[1], 1, &[3], &[2], 0),
            change(|c| c.isr = Some(vec![1, 4])),
            (vec![1, 4], vec![3], vec![2]),
        ),
        (
            registration(&[1, 2, 3, 4], &[1], 1, &[2, 3], &[], 0),
            change(|c| {
                c.eligible_leader_replicas = Some(vec![2]);
                c.last_known_elr = Some(vec![3]);
            }),
            (vec![1], vec![2], vec![3]),
        ),
    ];
    for (i, (start, rec, want)) in cases.into_iter().enumerate() {
        let h = history(&[topic(), start, rec]);
        assert_eq!(sets(&h), want, "case {i}");
        assert_eq!(epochs(&h)[1], (1, 100, 201), "case {i}");
        assert!(h.elections.is_empty(), "case {i}");
    }
}

/// `testEligibleLeaderReplicas_IsrCanShrinkToZero` (last known leader on): every replica
/// offline — ISR empty, leader -1, ELR [1, 2, 3, 4], last known ELR [1]; the leader epoch
/// rises to 101 with no election. `_ElectLastKnownLeaderShouldFail` writes no record, so
/// the state stays; `_ElectLastKnownLeader` (ISR and ELR empty, last known [1]) then elects
/// 1 with RECOVERING: an unclean choice that empties the last known ELR, and the scan's one
/// `unclean_leader_election`.
#[test]
fn isr_shrinks_to_zero_then_the_last_known_leader_is_elected() {
    let h = history(&[
        topic(),
        registration(&[1, 2, 3, 4], &[1, 2, 3, 4], 1, &[], &[], 0),
        change(|c| {
            c.isr = Some(vec![]);
            c.leader = -1;
            c.eligible_leader_replicas = Some(vec![1, 2, 3, 4]);
            c.last_known_elr = Some(vec![1]);
        }),
    ]);
    assert_eq!(sets(&h), (vec![], vec![1, 2, 3, 4], vec![1]));
    assert_eq!(epochs(&h)[1], (-1, 101, 201));
    assert!(h.elections.is_empty());
    let records = [
        topic(),
        registration(&[1, 2, 3, 4], &[], -1, &[], &[1], 0),
        change(|c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
            c.last_known_elr = Some(vec![]);
        }),
    ];
    let h = history(&records);
    assert_eq!(choices(&h), vec![Choice::Unclean]);
    assert_eq!(unclean_findings(&records), 1);
    assert_eq!(sets(&h), (vec![1], vec![], vec![]));
    assert_eq!(h.elections[0].recovery_state_after, 1);
}

/// `ReplicationControlManagerTest.testEligibleLeaderReplicas_CleanElection`: replicas
/// [0, 1, 2, 3], leader 0, min ISR 3. Fencing 1, 2, 3 shrinks the ISR to [0, 2, 3], [0, 3]
/// (ELR [2]), [0] (ELR [2, 3]); 2 is unfenced and 0 fenced: 2 is elected from the ELR,
/// ISR [2], ELR [0, 3]. klogscan calls it a clean (ELR) choice at epoch 1 and reports no
/// unclean election.
#[test]
fn elr_clean_election_after_fencing() {
    let records = [
        topic(),
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: topic_id_for("orders"),
            replicas: vec![0, 1, 2, 3],
            isr: vec![0, 1, 2, 3],
            leader: 0,
            ..Default::default()
        }),
        change(|c| c.isr = Some(vec![0, 2, 3])),
        change(|c| {
            c.isr = Some(vec![0, 3]);
            c.eligible_leader_replicas = Some(vec![2]);
        }),
        change(|c| {
            c.isr = Some(vec![0]);
            c.eligible_leader_replicas = Some(vec![2, 3]);
        }),
        change(|c| {
            c.isr = Some(vec![2]);
            c.leader = 2;
            c.eligible_leader_replicas = Some(vec![0, 3]);
        }),
    ];
    let h = history(&records);
    assert_eq!(choices(&h), vec![Choice::Elr]);
    assert_eq!(sets(&h), (vec![2], vec![0, 3], vec![]));
    assert_eq!(h.elections[0].leader_epoch, 1);
    assert_eq!(unclean_findings(&records), 0);
}

/// The records up to the third fence of `elr_clean_election_after_fencing`: ISR [0], ELR
/// [2, 3], leader 0.
fn fenced_1_2_3() -> Vec<MetaRecord> {
    vec![
        topic(),
        registration(&[0, 1, 2, 3], &[0], 0, &[2, 3], &[], 0),
    ]
}

/// `ReplicationControlManagerTest.testEligibleLeaderReplicas_UncleanShutdown`: from ISR [0],
/// ELR [2, 3], an unclean shutdown of 3 drops it from the ELR; one of 0 (the last ISR member,
/// with 2 still fenced) leaves no leader, ISR empty, ELR [2] and last known ELR [0]. No
/// election happens.
#[test]
fn unclean_shutdowns_leave_the_elr_and_the_last_known_leader() {
    let mut records = fenced_1_2_3();
    records.push(change(|c| c.eligible_leader_replicas = Some(vec![2])));
    records.push(change(|c| {
        c.isr = Some(vec![]);
        c.leader = -1;
        c.last_known_elr = Some(vec![0]);
    }));
    let h = history(&records);
    assert_eq!(sets(&h), (vec![], vec![2], vec![0]));
    assert!(h.elections.is_empty());
    assert_eq!(epochs(&h).last(), Some(&(-1, 101, 202)));
}

/// The same test's path when the ELR member is alive: replicas [0, 1], ISR [0], ELR [1],
/// min ISR 2, and leader 0 restarts after an unclean shutdown before it is fenced
/// (`handleBrokerUncleanShutdown` → `generateLeaderAndIsrUpdates` with 0 as the unclean
/// shutdown replica). The builder drops 0 from the ISR and the ELR, `isValidNewLeader`
/// accepts 1 (ISR empty, 1 in the ELR) and `tryElection` moves it from the ELR to the ISR:
/// the record is ISR [1], leader 1, ELR [] — a clean election, no RECOVERING written.
#[test]
fn an_elr_election_that_empties_the_elr_is_clean() {
    let records = [
        topic(),
        registration(&[0, 1], &[0], 0, &[1], &[], 0),
        change(|c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.eligible_leader_replicas = Some(vec![]);
        }),
    ];
    assert_eq!(choices(&history(&records)), vec![Choice::Elr]);
    assert_eq!(unclean_findings(&records), 0);
}
