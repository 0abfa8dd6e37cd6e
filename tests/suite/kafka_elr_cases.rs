//! KIP-966 (eligible leader replicas), KIP-704 (leader recovery) and controlled shutdown, as
//! the 2025-10 controller writes them (metadata/src/main/java/org/apache/kafka/controller/
//! `PartitionChangeBuilder`, `ReplicationControlManager`; image/`TopicDelta`), rebuilt as
//! `__cluster_metadata-0` bytes and read back through klogscan's leadership history, `scan`,
//! `verify` and the `history` command.
//!
//! The cases `kafka_kraft_controller_cases.rs` and `kafka_epoch_leadership_cases/` hold are
//! not repeated; these are the ones they leave: the 2025 rule that a partition left without a
//! leader records its last leader in `LastKnownElr` even when its ISR is not empty
//! (`maybeUpdateLastKnownLeader`), an ELR election while the partition is still RECOVERING
//! (`tryElection` writes no recovery state on the ELR branch), ELR and recovery state carried
//! by a snapshot's `PartitionRecord`, a clean shutdown of the last ISR member, controlled
//! shutdown, and a PREFERRED election that writes nothing.
//!
//! Where 2024-10 trunk and the 2025 sources differ (`maybeUpdateLastKnownLeader`,
//! `canElectLastKnownLeader`'s liveness check) the records are the 2025 ones.
#![cfg(feature = "testkit")]

use crate::common::kraft::{T0, findings, history};
use crate::common::run::klogscan;
use klogscan::cluster::leadership::replay::BrokerChange;
use klogscan::cluster::leadership::{Choice, ClusterHistory};
use klogscan::finding::{Finding, Kind};
use klogscan::read::format::metadata::{
    BrokerRegistrationChange, MetaRecord, PartitionChange, PartitionRecord, RESOURCE_TOPIC,
    RegisterBroker, TopicId,
};
use klogscan::testkit::LogDirBuilder;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::metadata::MetadataLogBuilder;
use tempfile::TempDir;

// ----- helpers ----------------------------------------------------------------------------

fn oid() -> TopicId {
    topic_id_for("orders")
}

fn topic() -> MetaRecord {
    MetaRecord::Topic {
        name: "orders".into(),
        topic_id: oid(),
    }
}

/// `metadata.version` at feature `level` (7 = 3.3-IV3, the 4.x minimum; 13 = 3.6-IV1;
/// 23 = 4.0-IV1, where ELR can be on).
fn mv(level: i16) -> MetaRecord {
    MetaRecord::FeatureLevel {
        name: "metadata.version".into(),
        feature_level: level,
    }
}

fn elr_feature() -> MetaRecord {
    MetaRecord::FeatureLevel {
        name: "eligible.leader.replicas.version".into(),
        feature_level: 1,
    }
}

fn register(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8 + 1; 16],
        broker_epoch: 100 + i64::from(id),
        fenced: true,
        ..Default::default()
    })
}

fn registration_change(id: i32, f: impl FnOnce(&mut BrokerRegistrationChange)) -> MetaRecord {
    let mut c = BrokerRegistrationChange {
        broker_id: id,
        broker_epoch: 100 + i64::from(id),
        ..Default::default()
    };
    f(&mut c);
    MetaRecord::BrokerRegistrationChange(c)
}

/// `BrokerRegistrationChangeRecord` fencing (`true`) or unfencing broker `id`.
fn fence(id: i32, fenced: bool) -> MetaRecord {
    registration_change(id, |c| c.fenced = if fenced { 1 } else { -1 })
}

/// The cluster every case runs on: `metadata.version` `level` (with the ELR feature from
/// 4.0-IV1), brokers `ids` registered and unfenced, `orders` created.
fn cluster(level: i16, ids: &[i32]) -> Vec<MetaRecord> {
    let mut r = vec![mv(level)];
    if level >= 23 {
        r.push(elr_feature());
    }
    r.extend(ids.iter().map(|b| register(*b)));
    r.extend(ids.iter().map(|b| fence(*b, false)));
    r.push(topic());
    r
}

/// `orders-0` as a whole registration (leader and partition epoch as given).
fn part(f: impl FnOnce(&mut PartitionRecord)) -> MetaRecord {
    let mut p = PartitionRecord {
        partition_id: 0,
        topic_id: oid(),
        leader: -1,
        ..Default::default()
    };
    f(&mut p);
    MetaRecord::Partition(p)
}

/// A `PartitionChangeRecord` of `orders-0`, as `f` sets it.
fn change(f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    let mut c = PartitionChange {
        partition_id: 0,
        topic_id: oid(),
        ..Default::default()
    };
    f(&mut c);
    MetaRecord::PartitionChange(c)
}

/// A log dir of broker 1 (cluster `c1`) whose metadata log holds `records`, one per batch;
/// with `snapshot`, the log starts at its end offset (`snapshot.len()` + 1) and the snapshot
/// holds those records.
fn log_dir(snapshot: Option<&[MetaRecord]>, records: &[MetaRecord]) -> TempDir {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .write(d.path())
        .unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    if let Some(s) = snapshot {
        let end = s.len() as i64 + 1;
        m = m.start_offset(end).snapshot(end, 1, s.to_vec());
    }
    for r in records {
        m.batch(std::slice::from_ref(r));
        m.advance(1);
    }
    m.write(d.path()).unwrap();
    d
}

fn replay(records: &[MetaRecord]) -> (TempDir, ClusterHistory) {
    let d = log_dir(None, records);
    let h = history(d.path());
    (d, h)
}

/// `(leader, leader epoch, partition epoch, ISR, ELR, last known ELR, recovery state)` of
/// `orders-0` now.
type Now = (i32, i32, i32, Vec<i32>, Vec<i32>, Vec<i32>, i8);

fn now(h: &ClusterHistory) -> Now {
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    (
        s.leader,
        s.leader_epoch,
        s.partition_epoch,
        s.isr,
        s.elr,
        s.last_known_elr,
        s.recovery_state,
    )
}

/// `(new leader, choice)` of every election.
fn choices(h: &ClusterHistory) -> Vec<(i32, Choice)> {
    h.elections.iter().map(|e| (e.leader, e.choice)).collect()
}

/// `scan`'s `unclean_leader_election` findings (and `verify` says as many).
fn unclean(d: &TempDir) -> Vec<Finding> {
    let (s, v) = findings(d.path(), Kind::UncleanLeaderElection);
    assert_eq!(s.len(), v.len(), "scan {s:#?} verify {v:#?}");
    s
}

/// The `history` command's table for the log dir `d`.
fn history_text(d: &TempDir) -> String {
    let r = klogscan(&["history", d.path().to_str().unwrap()], None, 60);
    assert_eq!(r.code(), 0, "{}", r.err);
    r.out
}

/// The `history` table's row of `orders-0` at metadata offset `offset`.
fn row_at(text: &str, offset: i64) -> String {
    let after = text.split("orders-0 ").nth(1).expect("orders-0's table");
    after
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&offset.to_string()))
        .unwrap_or_else(|| panic!("no row at {offset}:\n{text}"))
        .to_string()
}

/// The state `PartitionChangeBuilderTest`'s ELR cases start from: replicas [1, 2, 3], ISR
/// [1], ELR [2], leader 1, leader epoch 100, partition epoch 200, recovered.
fn isr_1_elr_2() -> MetaRecord {
    part(|p| {
        p.replicas = vec![1, 2, 3];
        p.isr = vec![1];
        p.eligible_leader_replicas = Some(vec![2]);
        p.leader = 1;
        p.leader_epoch = 100;
        p.partition_epoch = 200;
    })
}

// ----- KIP-966: the last known leader recorded with a non-empty ISR (2025) --------------

/// `PartitionChangeBuilderTest.testEligibleLeaderReplicas_lastKnownElrShouldBePopulatedWhenNoLeader`
/// (2025-10 only: 2024-10 `maybeUpdateLastKnownLeader` records the last leader only when the
/// ISR becomes empty). From ISR [1], ELR [2], leader 1, no replica is acceptable: the record
/// is leader -1 and last known ELR [1], the ISR untouched. No election, the leader epoch
/// rises to 101. Then the ISR still holds 1 (unacceptable), so 2 — in the ELR — is no valid
/// leader (`isValidNewLeader` takes the ELR only with the ISR empty) and
/// `canElectLastKnownLeader` is off (ISR not empty): only the UNCLEAN path elects 2, with
/// ISR [2], RECOVERING, the ELR and last known ELR cleared. klogscan: one unclean election,
/// on the `outside_isr` path (not `last_known_leader`), naming the ISR [1] it was outside.
#[test]
fn last_known_leader_recorded_with_the_isr_kept_then_an_unclean_election() {
    let mut records = cluster(23, &[1, 2, 3]);
    records.push(isr_1_elr_2());
    records.push(change(|c| {
        c.leader = -1;
        c.last_known_elr = Some(vec![1]);
    }));
    let (_d, h) = replay(&records);
    assert_eq!(now(&h), (-1, 101, 201, vec![1], vec![2], vec![1], 0));
    assert!(h.elections.is_empty());

    records.push(change(|c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
        c.leader_recovery_state = 1;
        c.eligible_leader_replicas = Some(vec![]);
        c.last_known_elr = Some(vec![]);
    }));
    let (d, h) = replay(&records);
    assert_eq!(choices(&h), vec![(2, Choice::Unclean)]);
    assert_eq!(now(&h), (2, 102, 202, vec![2], vec![], vec![], 1));
    let f = unclean(&d);
    assert_eq!(f.len(), 1, "{f:#?}");
    let ev = &f[0].evidence;
    assert_eq!(ev["path"], "outside_isr");
    assert_eq!(ev["isr_before"], serde_json::json!([1]));
    assert_eq!(ev["elr_before"], serde_json::json!([2]));
    assert_eq!(ev["last_known_elr_before"], serde_json::json!([1]));
    assert_eq!(ev["last_live_leader"], 1);
    assert!(
        f[0].message.contains("not in the ISR [1]"),
        "{}",
        f[0].message
    );
}

/// The near miss of the case above: broker 1, still the ISR's only member, comes back and is
/// elected again (`electAnyLeader` takes the ISR first); `maybeUpdateLastKnownLeader` clears
/// the last known ELR. A clean ISR election, no finding.
#[test]
fn last_known_leader_recorded_with_the_isr_kept_then_the_isr_member_returns() {
    let mut records = cluster(23, &[1, 2, 3]);
    records.push(isr_1_elr_2());
    records.push(change(|c| {
        c.leader = -1;
        c.last_known_elr = Some(vec![1]);
    }));
    records.push(change(|c| {
        c.leader = 1;
        c.last_known_elr = Some(vec![]);
    }));
    let (d, h) = replay(&records);
    assert_eq!(choices(&h), vec![(1, Choice::Isr)]);
    assert_eq!(now(&h), (1, 102, 202, vec![1], vec![2], vec![], 0));
    assert!(unclean(&d).is_empty());
}

// ----- KIP-966: ELR elections ---------------------------------------------------------------

/// `PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElrCanBeElected` (both
/// `lastKnownLeaderEnabled` values): replicas [1, 2, 3, 4], ISR [1], ELR [3], last known ELR
/// [] or [2]; broker 1 goes offline and the target ISR is empty, so 3 is elected from the
/// ELR: ISR [3], ELR [1], leader 3, no recovery state, the last known ELR untouched. klogscan
/// reads a clean ELR election, no finding, and `history` prints it `clean (ELR)` with ELR [1].
#[test]
fn an_elr_member_is_elected_when_the_last_isr_member_goes_offline() {
    for last_known in [vec![], vec![2]] {
        let mut records = cluster(23, &[1, 2, 3, 4]);
        records.push(part(|p| {
            p.replicas = vec![1, 2, 3, 4];
            p.isr = vec![1];
            p.eligible_leader_replicas = Some(vec![3]);
            p.last_known_elr = Some(last_known.clone());
            p.leader = 1;
            p.leader_epoch = 100;
            p.partition_epoch = 200;
        }));
        records.push(fence(1, true));
        records.push(change(|c| {
            c.isr = Some(vec![3]);
            c.eligible_leader_replicas = Some(vec![1]);
            c.leader = 3;
        }));
        let (d, h) = replay(&records);
        assert_eq!(choices(&h), vec![(3, Choice::Elr)], "{last_known:?}");
        assert_eq!(
            now(&h),
            (3, 101, 201, vec![3], vec![1], last_known.clone(), 0)
        );
        assert!(unclean(&d).is_empty(), "{last_known:?}");
        let at = h.elections[0].offset;
        let row = row_at(&history_text(&d), at);
        assert!(row.ends_with("clean (ELR)"), "{row}");
        assert!(row.contains(" [3] ") && row.contains(" [1] "), "{row}");
    }
}

/// `ReplicationControlManagerTest.testEligibleLeaderReplicas_ShrinkToEmptyIsr` (min ISR 3):
/// fencing 1 and 2 leaves ISR [0], ELR [1, 2]; a clean (controlled) shutdown of 0 leaves no
/// leader, ISR [], ELR [0, 1, 2] and last known ELR [0]. Then — `electAnyLeader` after 0
/// comes back — 0 is elected from the ELR: ISR [0], ELR [1, 2], last known ELR cleared
/// (`maybeUpdateLastKnownLeader`). Being the last known leader does not make this election
/// unclean: it is the ELR path (the last-known-leader path needs the ELR empty). The broker
/// history shows the controlled shutdown.
#[test]
fn the_last_isr_member_shuts_down_cleanly_and_comes_back_through_the_elr() {
    let mut records = cluster(23, &[0, 1, 2]);
    records.push(part(|p| {
        p.replicas = vec![0, 1, 2];
        p.isr = vec![0, 1, 2];
        p.leader = 0;
    }));
    records.push(MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: "orders".into(),
        name: "min.insync.replicas".into(),
        value: Some("3".into()),
    });
    records.push(fence(1, true));
    records.push(change(|c| {
        c.isr = Some(vec![0, 2]);
        c.eligible_leader_replicas = Some(vec![1]);
    }));
    records.push(fence(2, true));
    records.push(change(|c| {
        c.isr = Some(vec![0]);
        c.eligible_leader_replicas = Some(vec![1, 2]);
    }));
    records.push(registration_change(0, |c| c.in_controlled_shutdown = 1));
    records.push(change(|c| {
        c.leader = -1;
        c.isr = Some(vec![]);
        c.eligible_leader_replicas = Some(vec![0, 1, 2]);
        c.last_known_elr = Some(vec![0]);
    }));
    let (_d, h) = replay(&records);
    assert_eq!(now(&h), (-1, 1, 3, vec![], vec![0, 1, 2], vec![0], 0));
    assert!(h.elections.is_empty());
    assert!(
        h.history
            .brokers
            .iter()
            .any(|b| b.broker == 0 && b.change == BrokerChange::ControlledShutdown)
    );

    records.push(fence(0, true));
    records.push(fence(0, false));
    records.push(change(|c| {
        c.leader = 0;
        c.isr = Some(vec![0]);
        c.eligible_leader_replicas = Some(vec![1, 2]);
        c.last_known_elr = Some(vec![]);
    }));
    let (d, h) = replay(&records);
    assert_eq!(choices(&h), vec![(0, Choice::Elr)]);
    assert_eq!(now(&h), (0, 2, 4, vec![0], vec![1, 2], vec![], 0));
    assert!(unclean(&d).is_empty());
}

// ----- KIP-704: leader recovery across ELR elections --------------------------------------

/// `PartitionChangeBuilderTest.testUncleanSetsLeaderRecoveringState` followed by
/// `tryElection`'s ELR branch (2025-10): replicas [1, 2], nothing in the ISR or ELR, an
/// UNCLEAN election takes 1 (ISR [1], RECOVERING). Before it recovers, 1 is fenced (a clean
/// shutdown, min ISR 2): no leader, ISR [], ELR [1], last known ELR [1]. When 1 is back it is
/// elected from the ELR — a clean election whose record writes no recovery state, so the
/// partition stays RECOVERING until the leader reports RECOVERED (`AlterPartition`, recovery
/// state 0) and then adds 2 to the ISR. klogscan: the unclean election once, the ELR election
/// clean although the partition was recovering, and the recovery states in order.
#[test]
fn an_elr_election_of_a_recovering_leader_is_clean_and_keeps_it_recovering() {
    let mut records = cluster(23, &[1, 2]);
    records.push(part(|p| {
        p.replicas = vec![1, 2];
        p.leader_epoch = 10;
        p.partition_epoch = 10;
    }));
    records.push(change(|c| {
        c.leader = 1;
        c.isr = Some(vec![1]);
        c.leader_recovery_state = 1;
    }));
    records.push(fence(1, true));
    records.push(change(|c| {
        c.leader = -1;
        c.isr = Some(vec![]);
        c.eligible_leader_replicas = Some(vec![1]);
        c.last_known_elr = Some(vec![1]);
    }));
    records.push(fence(1, false));
    records.push(change(|c| {
        c.leader = 1;
        c.isr = Some(vec![1]);
        c.eligible_leader_replicas = Some(vec![]);
        c.last_known_elr = Some(vec![]);
    }));
    let (_d, h) = replay(&records);
    assert_eq!(choices(&h), vec![(1, Choice::Unclean), (1, Choice::Elr)]);
    assert_eq!(now(&h), (1, 13, 13, vec![1], vec![], vec![], 1));

    records.push(change(|c| c.leader_recovery_state = 0));
    records.push(change(|c| c.isr = Some(vec![1, 2])));
    let (d, h) = replay(&records);
    let states: Vec<i8> = h.timeline("orders", 0).unwrap().steps[1..]
        .iter()
        .map(|s| s.state.recovery_state)
        .collect();
    assert_eq!(states, vec![1, 1, 1, 0, 0]);
    assert_eq!(now(&h), (1, 13, 15, vec![1, 2], vec![], vec![], 0));
    let f = unclean(&d);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].evidence["new_leader_epoch"], 11);
    assert_eq!(f[0].evidence["path"], "outside_isr");
}

// ----- snapshots: ELR and recovery state carried by a PartitionRecord ---------------------

/// The state of the case above at its leaderless step, carried by a snapshot
/// (`PartitionRegistration.toRecord`: `PartitionRecord` v2 with ELR [1] and last known ELR
/// [1] as tagged fields, LeaderRecoveryState 1 as tag 0), the log starting after it.
fn recovering_snapshot() -> Vec<MetaRecord> {
    let mut s = cluster(23, &[1, 2]);
    s.push(part(|p| {
        p.replicas = vec![1, 2];
        p.eligible_leader_replicas = Some(vec![1]);
        p.last_known_elr = Some(vec![1]);
        p.leader_recovery_state = 1;
        p.leader_epoch = 12;
        p.partition_epoch = 12;
    }));
    s
}

/// Snapshot then log: the ELR, last known ELR and RECOVERING come from the snapshot's
/// `PartitionRecord`. Broker 1 back: the ELR election of the case above, clean. Twin: 1 stays
/// away and an UNCLEAN election takes 2 (outside the ISR [] and ELR [1];
/// `canElectLastKnownLeader` is off with the ELR not empty): the record writes ISR [2] and
/// clears the ELR, but no recovery state — the partition is already RECOVERING
/// (`tryElection`) — and klogscan still calls it unclean from the state the snapshot gave.
#[test]
fn elr_and_recovery_state_from_a_snapshot_judge_the_next_election() {
    let snap = recovering_snapshot();
    let elr_election = change(|c| {
        c.leader = 1;
        c.isr = Some(vec![1]);
        c.eligible_leader_replicas = Some(vec![]);
        c.last_known_elr = Some(vec![]);
    });
    let d = log_dir(Some(&snap), &[fence(1, false), elr_election]);
    let h = history(d.path());
    assert!(h.log.snapshot.is_some());
    assert_eq!(choices(&h), vec![(1, Choice::Elr)]);
    assert_eq!(now(&h), (1, 13, 13, vec![1], vec![], vec![], 1));
    assert!(unclean(&d).is_empty());

    let unclean_2 = change(|c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
        c.eligible_leader_replicas = Some(vec![]);
        c.last_known_elr = Some(vec![]);
    });
    let d = log_dir(Some(&snap), &[unclean_2]);
    let h = history(d.path());
    assert_eq!(choices(&h), vec![(2, Choice::Unclean)]);
    let e = &h.elections[0];
    assert_eq!(
        (
            e.recovery_state_written,
            e.recovery_state_after,
            e.elr_before.clone()
        ),
        (None, 1, vec![1])
    );
    let f = unclean(&d);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].evidence["path"], "outside_isr");
}

// ----- controlled shutdown and elections that write nothing -------------------------------

/// `ReplicationControlManagerTest.testProcessBrokerHeartbeatInControlledShutdown`
/// (`MetadataVersion.MINIMUM_VERSION`, 3.3-IV3): broker 0 asks to shut down; the controller
/// writes `BrokerRegistrationChangeRecord` InControlledShutdown 1 and moves leadership within
/// the ISR: ISR [1, 2], leader 1. A clean election; `history` lists broker 0 "in controlled
/// shutdown" and prints the election `clean (ISR)`.
#[test]
fn controlled_shutdown_moves_leadership_within_the_isr() {
    let mut records = cluster(7, &[0, 1, 2]);
    records.push(part(|p| {
        p.replicas = vec![0, 1, 2];
        p.isr = vec![0, 1, 2];
        p.leader = 0;
    }));
    records.push(registration_change(0, |c| c.in_controlled_shutdown = 1));
    records.push(change(|c| {
        c.isr = Some(vec![1, 2]);
        c.leader = 1;
    }));
    let (d, h) = replay(&records);
    assert_eq!(choices(&h), vec![(1, Choice::Isr)]);
    assert_eq!(now(&h), (1, 1, 1, vec![1, 2], vec![], vec![], 0));
    assert!(unclean(&d).is_empty());
    let text = history_text(&d);
    assert!(
        text.lines()
            .any(|l| l.ends_with("broker 0 in controlled shutdown")),
        "{text}"
    );
    let row = row_at(&text, h.elections[0].offset);
    assert!(row.ends_with("clean (ISR)"), "{row}");
}

/// `ReplicationControlManagerTest.testPreferredElectionDoesNotTriggerUncleanElection`
/// (3.6-IV1, ELR off): fencing 2 and 3 shrinks the ISR to [1] (no epoch bump from 3.6),
/// fencing 1 leaves no leader with the ISR [1] kept; 2 comes back and
/// `unclean.leader.election.enable` is set on the topic, but a PREFERRED election writes no
/// record. The leaderless spell is no election and no finding. The twin: the UNCLEAN election
/// the config allows (ISR [2], RECOVERING) is one finding naming the topic's config.
#[test]
fn a_preferred_election_writes_nothing_and_a_leaderless_spell_is_no_finding() {
    let mut records = cluster(13, &[1, 2, 3, 4]);
    records.push(part(|p| {
        p.replicas = vec![1, 2, 3];
        p.isr = vec![1, 2, 3];
        p.leader = 1;
    }));
    records.push(fence(2, true));
    records.push(change(|c| c.isr = Some(vec![1, 3])));
    records.push(fence(3, true));
    records.push(change(|c| c.isr = Some(vec![1])));
    records.push(fence(1, true));
    records.push(change(|c| c.leader = -1));
    records.push(fence(2, false));
    records.push(MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: "orders".into(),
        name: "unclean.leader.election.enable".into(),
        value: Some("true".into()),
    });
    let (d, h) = replay(&records);
    assert!(h.elections.is_empty());
    assert_eq!(now(&h), (-1, 1, 3, vec![1], vec![], vec![], 0));
    assert!(unclean(&d).is_empty());

    records.push(change(|c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
        c.leader_recovery_state = 1;
    }));
    let (d, h) = replay(&records);
    assert_eq!(choices(&h), vec![(2, Choice::Unclean)]);
    let f = unclean(&d);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        f[0].evidence["unclean_leader_election_enable"],
        "true (topic)"
    );
    assert_eq!(f[0].evidence["last_live_leader"], 1);
}

// ----- broker state a registration carries -----------------------------------------------

/// A snapshot holding `orders` and broker 0's `RegisterBrokerRecord` (v1) with
/// InControlledShutdown `in_shutdown`, unfenced.
fn snapshot_registering_0(in_shutdown: bool) -> TempDir {
    let snap = vec![
        mv(7),
        MetaRecord::RegisterBroker(RegisterBroker {
            broker_id: 0,
            incarnation_id: [1; 16],
            broker_epoch: 100,
            fenced: false,
            in_controlled_shutdown: in_shutdown,
            ..Default::default()
        }),
        topic(),
        part(|p| {
            p.replicas = vec![0];
            p.isr = vec![0];
            p.leader = 0;
        }),
    ];
    log_dir(Some(&snap), &[MetaRecord::NoOp])
}

/// Whether the history says broker 0 is in controlled shutdown.
fn zero_in_controlled_shutdown(d: &TempDir) -> bool {
    let h = history(d.path());
    h.history
        .brokers
        .iter()
        .any(|b| b.broker == 0 && b.change == BrokerChange::ControlledShutdown)
}

/// `ClusterControlManagerTest.testReplayRegisterBrokerRecord`: replaying a
/// `RegisterBrokerRecord` whose InControlledShutdown is true leaves the broker in controlled
/// shutdown (`ClusterControlManager.replay` / `ClusterDelta.replay` build the registration
/// from the record's field; `BrokerRegistration.toRecord` writes it into every snapshot, and
/// an amended registration of the same incarnation copies it into the log,
/// `ClusterControlManager.registerBroker`). klogscan's history keeps only `fenced` and the
/// epoch of a registration (`replay::apply_broker`): a snapshot taken while a broker shuts
/// down shows it merely registered.
#[test]
fn a_registration_in_controlled_shutdown_puts_the_broker_in_controlled_shutdown() {
    let d = snapshot_registering_0(true);
    // The record reads back with the flag set: only the replay drops it.
    let h = history(d.path());
    assert!(h.log.entries.iter().any(|e| matches!(
        &e.record,
        MetaRecord::RegisterBroker(r) if r.broker_id == 0 && r.in_controlled_shutdown
    )));
    assert!(zero_in_controlled_shutdown(&d));
}

/// The near miss of the case above: InControlledShutdown false, the broker only registered.
#[test]
fn a_registration_not_in_controlled_shutdown_says_none() {
    let d = snapshot_registering_0(false);
    assert!(!zero_in_controlled_shutdown(&d));
    let h = history(d.path());
    assert!(h.history.brokers.iter().any(|b| b.broker == 0
        && b.change
            == BrokerChange::Registered {
                fenced: false,
                epoch: 100
            }));
}

/// `PartitionChangeBuilder.canElectLastKnownLeader` (KIP-966): leader 1 with ISR [1] loses
/// its leadership with everything (ISR and ELR empty, last known ELR [1]), then the last
/// known leader, broker 1, is elected again — unclean, RECOVERING. The last live leader is
/// the broker elected: the loss's evidence says so (no other leader's copy to measure
/// against), not "no earlier leader" (what a partition created leaderless gets:
/// `kafka_epoch_leadership_cases::elections::isr_shrinks_to_zero_then_the_last_known_leader_is_elected`).
#[test]
fn the_last_known_leader_elected_again_is_its_own_previous_leader() {
    let mut recs = cluster(1, &[1, 2]);
    recs.extend([
        part(|p| {
            p.replicas = vec![1, 2];
            p.isr = vec![1];
            p.leader = 1;
        }),
        change(|c| {
            c.isr = Some(vec![]);
            c.leader = -1;
            c.eligible_leader_replicas = Some(vec![]);
            c.last_known_elr = Some(vec![1]);
        }),
        change(|c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
            c.last_known_elr = Some(vec![]);
        }),
    ]);
    let (d, h) = replay(&recs);
    assert_eq!(choices(&h).len(), 1, "{:#?}", h.elections);
    let f = unclean(&d);
    assert_eq!(f.len(), 1, "{f:#?}");
    let unused = f[0].evidence["old_leader_copy_unused"]
        .as_str()
        .unwrap_or_default();
    assert!(unused.contains("elected again"), "{:#?}", f[0].evidence);
}
