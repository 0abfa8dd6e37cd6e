//! `PartitionChangeBuilderTest`'s ELR methods (KIP-966, partition change records v2 at
//! 4.0-IV1): the record the builder writes from each test's partition, merged by the replay
//! as `PartitionRegistration.merge` does (a field the record leaves out keeps its value),
//! and what the merged ELR decides at the next election (`isValidNewLeader`: an ELR member
//! is a clean choice while the ISR is empty).

use crate::kafka_imgaudit_cases::{all_lines, brokers_with, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, broker_epoch_at_start, change, metadata_version, register, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0};
use klogscan::cluster::leadership::Choice;
use klogscan::finding::Kind;
use klogscan::read::format::metadata::{MetaRecord, PartitionRecord};
use klogscan::testkit::files::topic_id_for;

/// The tests' partition: replicas [1, 2, 3, 4] led by 1 at leader epoch 100, partition
/// epoch 200, RECOVERED, with this ISR, ELR and last known ELR.
fn partition(isr: &[i32], elr: &[i32], last_known: &[i32]) -> MetaRecord {
    MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: topic_id_for("orders"),
        replicas: vec![1, 2, 3, 4],
        isr: isr.to_vec(),
        leader: 1,
        leader_epoch: 100,
        partition_epoch: 200,
        eligible_leader_replicas: Some(elr.to_vec()),
        last_known_elr: Some(last_known.to_vec()),
        ..Default::default()
    })
}

/// Brokers 1–4 registered and unfenced at 4.0-IV1 (with the ELR feature), `orders` created
/// as `p`, then each of `then` one controller write; the brokers' log dirs hold only the
/// metadata log.
fn cluster(p: MetaRecord, then: &[MetaRecord]) -> Brokers {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    let elr = MetaRecord::FeatureLevel {
        name: "eligible.leader.replicas.version".into(),
        feature_level: 1,
    };
    m.batch(&[metadata_version(23), elr]);
    for id in 1..=4 {
        m.batch(&[register(id, broker_epoch_at_start(id), id as u8, true)]);
    }
    m.batch(
        &(1..=4)
            .map(|id| broker_change(id, broker_epoch_at_start(id), -1, 0))
            .collect::<Vec<_>>(),
    );
    m.at(T0 - 30 * SEC);
    m.batch(&[topic("orders"), p]);
    for r in then {
        m.batch(std::slice::from_ref(r));
    }
    brokers_with(&m, &[1, 2, 3, 4], |_| Vec::new())
}

fn fence(id: i32) -> MetaRecord {
    broker_change(id, broker_epoch_at_start(id), 1, 0)
}

/// `testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr`: ISR [1], ELR [2, 3];
/// broker 3 shut down uncleanly, so the builder writes ELR [2] and last known ELR [3]
/// (leader unchanged): merged, ELR [2], last known ELR [3], leader epoch 100, partition
/// epoch 201. Then 1 and 2 are fenced (leader -1, ISR [], the ELR kept) and the controller can
/// elect 3 only uncleanly (RECOVERING, ELR cleared): one `unclean_leader_election`, its
/// `elr_before` [2] and `last_known_elr_before` [3]. Near miss: without the removal, 3 is
/// still in the ELR, the controller elects it from there (no RECOVERING, ELR [2]): an ELR
/// election, clean.
#[test]
fn an_unclean_shutdown_replica_removed_from_the_elr_is_no_clean_leader() {
    for removed in [true, false] {
        let mut then = Vec::new();
        if removed {
            then.push(change("orders", 0, |c| {
                c.eligible_leader_replicas = Some(vec![2]);
                c.last_known_elr = Some(vec![3]);
            }));
        }
        then.push(fence(1));
        then.push(fence(2));
        then.push(change("orders", 0, |c| {
            c.leader = -1;
            c.isr = Some(vec![]);
        }));
        then.push(change("orders", 0, |c| {
            c.leader = 3;
            c.isr = Some(vec![3]);
            if removed {
                c.leader_recovery_state = 1;
                c.eligible_leader_replicas = Some(vec![]);
                c.last_known_elr = Some(vec![]);
            } else {
                c.eligible_leader_replicas = Some(vec![2]);
            }
        }));
        let b = cluster(partition(&[1], &[2, 3], &[]), &then);
        let h = history_of(&b);
        let t = h.timeline("orders", 0).unwrap();
        if removed {
            let s = &t.steps[1].state;
            assert_eq!(
                (s.elr.clone(), s.last_known_elr.clone()),
                (vec![2], vec![3])
            );
            assert_eq!((s.leader, s.leader_epoch, s.partition_epoch), (1, 100, 201));
        }
        let choices: Vec<Choice> = h.elections.iter().map(|e| e.choice).collect();
        let v = b.check();
        let found = of_kind(&v, Kind::UncleanLeaderElection);
        if removed {
            assert_eq!(choices, vec![Choice::Unclean]);
            for f in &found {
                assert_eq!(f.len(), 1, "{}", all_lines(&v));
            }
            let e = &found[0][0].evidence;
            assert_eq!(e["elr_before"], serde_json::json!([2]));
            assert_eq!(e["last_known_elr_before"], serde_json::json!([3]));
        } else {
            assert_eq!(choices, vec![Choice::Elr]);
            assert!(found.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
        }
    }
}

/// `testEligibleLeaderReplicas_IsrExpandAboveMinISR` and
/// `testEligibleLeaderReplicas_IsrAddNewMemberNotInELR` (min ISR 3), each the other's near
/// miss: the ISR growing to [1, 2, 3] reaches the min ISR, and the builder writes the ELR and
/// last known ELR empty — merged, both empty; the ISR growing to [1, 4] stays below it and
/// the record leaves them out — merged, ELR [3] and last known ELR [2] kept. Either way the
/// leader stays 1 at epoch 100 (no election) and the partition epoch is 201. Then 1, 2 and 4
/// are fenced and the partition left without ISR (leader -1), and the controller elects 3:
/// from the ELR where the ELR kept it (ISR [3], 3 out of the ELR, no recovery state: an ELR
/// election, clean), uncleanly where it was cleared (ISR [3], RECOVERING: one
/// `unclean_leader_election`).
#[test]
fn an_isr_change_clears_the_elr_only_when_it_writes_it() {
    for above_min in [true, false] {
        let grown = if above_min { vec![1, 2, 3] } else { vec![1, 4] };
        let mut then = vec![change("orders", 0, |c| {
            c.isr = Some(grown.clone());
            if above_min {
                c.eligible_leader_replicas = Some(vec![]);
                c.last_known_elr = Some(vec![]);
            }
        })];
        then.extend([fence(1), fence(2), fence(4)]);
        then.push(change("orders", 0, |c| {
            c.leader = -1;
            c.isr = Some(vec![]);
        }));
        then.push(change("orders", 0, |c| {
            c.leader = 3;
            c.isr = Some(vec![3]);
            if above_min {
                c.leader_recovery_state = 1;
            } else {
                c.eligible_leader_replicas = Some(vec![]);
            }
        }));
        let start = if above_min {
            partition(&[1, 2], &[3], &[4])
        } else {
            partition(&[1], &[3], &[2])
        };
        let b = cluster(start, &then);
        let h = history_of(&b);
        let s = h.timeline("orders", 0).unwrap().steps[1].state.clone();
        assert_eq!(s.isr, grown);
        let (elr, last_known) = if above_min {
            (vec![], vec![])
        } else {
            (vec![3], vec![2])
        };
        assert_eq!((s.elr, s.last_known_elr), (elr, last_known), "{above_min}");
        assert_eq!((s.leader, s.leader_epoch, s.partition_epoch), (1, 100, 201));
        let choices: Vec<Choice> = h.elections.iter().map(|e| e.choice).collect();
        let v = b.check();
        let found = of_kind(&v, Kind::UncleanLeaderElection);
        if above_min {
            assert_eq!(choices, vec![Choice::Unclean]);
            assert!(found.iter().all(|r| r.len() == 1), "{}", all_lines(&v));
        } else {
            assert_eq!(choices, vec![Choice::Elr]);
            assert!(found.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
        }
    }
}
