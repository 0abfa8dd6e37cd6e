//! Brokers unregistered, shut down uncleanly under ELR, and a controller's own broker
//! config (`QuorumControllerTest.testUnregisterBroker`, `testUncleanShutdownBroker`,
//! `testConfigurationOperations`).

use super::{FOO, foo_unclean, nodes, register_and_unfence, unclean_of};
use crate::kafka_electaudit_cases::refused;
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{
    CONTROLLER, MetaLog, SEC, broker_change, change, metadata_version, partition, register, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, Verdict};
use klogscan::cluster::leadership::Choice;
use klogscan::cluster::leadership::replay::BrokerChange;
use klogscan::finding::Kind;
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_BROKER, RESOURCE_TOPIC};

/// No `unclean_leader_election` and no `metadata_record_rejected` anywhere, nothing at
/// warning.
fn clean(v: &Verdict) {
    v.assert_no_alarm();
    for kind in [Kind::UncleanLeaderElection, Kind::MetadataRecordRejected] {
        let found = of_kind(v, kind);
        assert!(found.iter().all(|r| r.is_empty()), "{}", all_lines(v));
    }
}

/// The `(leader, leader epoch, choice)` of every election of `b`'s history.
fn elections(b: &Brokers) -> Vec<(i32, i32, Choice)> {
    (history_of(b).elections.iter())
        .map(|e| (e.leader, e.leader_epoch, e.choice))
        .collect()
}

// ----- testUnregisterBroker ---------------------------------------------------------------

/// Broker 0 registered and unfenced at 3.9-IV0, `foo-0` on it alone, then its
/// unregistration (`ReplicationControlManager.handleBrokerUnregistered`: the partition
/// change first — no leader, the ISR [0] kept, as `PartitionChangeBuilder.build` keeps
/// the last ISR member without ELR — then the `UnregisterBrokerRecord`), then `then`.
fn unregistered(then: &[Vec<MetaRecord>]) -> (MetaLog, i64) {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(21)]);
    let e = register_and_unfence(&mut m, &[0])[0];
    m.batch(&[topic(FOO), partition(FOO, 0, &[0], &[0], (0, 0, 0))]);
    m.batch(&[
        change(FOO, 0, |c| c.leader = -1),
        MetaRecord::UnregisterBroker {
            broker_id: 0,
            broker_epoch: e,
        },
    ]);
    for w in then {
        m.batch(w);
    }
    (m, e)
}

/// `testUnregisterBroker`: after the unregistration `foo-0` has no leader (leader epoch 1,
/// ISR [0]: `partitionsWithNoLeader` holds it), broker 0's events are its registration,
/// unfencing and unregistration, nothing is reported. Broker 0 registering again (a new
/// broker epoch) and unfenced is elected from the ISR it never left
/// (`handleBrokerUnfenced` over the leaderless partitions): a clean election at epoch 2.
/// Near miss: a `BrokerRegistrationChangeRecord` unfencing broker 0 at its old epoch after
/// the unregistration — the registration is gone, `ClusterControlManager.
/// replayRegistrationChange` and the broker's `ClusterDelta` throw ("no broker
/// registration found for that id"): one `metadata_record_rejected`.
#[test]
fn an_unregistered_brokers_partition_waits_leaderless_in_its_isr() {
    let (m, e) = unregistered(&[]);
    let b = nodes(&m, &[0]);
    clean(&b.check());
    let h = history_of(&b);
    let s = h.timeline(FOO, 0).unwrap().current().unwrap().clone();
    assert_eq!((s.leader, s.leader_epoch, s.isr), (-1, 1, vec![0]));
    let events: Vec<_> = (h.history.brokers.iter())
        .map(|x| (x.broker, x.change.clone()))
        .collect();
    let reg = BrokerChange::Registered {
        fenced: true,
        epoch: e,
    };
    let want = [reg, BrokerChange::Unfenced, BrokerChange::Unregistered];
    assert_eq!(events, want.map(|c| (0, c)));
    // registered again and elected from the ISR
    let again = m.p.next_offset();
    let (m, _) = unregistered(&[
        vec![register(0, again, 10, true)],
        vec![
            broker_change(0, again, -1, 0),
            change(FOO, 0, |c| c.leader = 0),
        ],
    ]);
    let b = nodes(&m, &[0]);
    clean(&b.check());
    assert_eq!(elections(&b), [(0, 2, Choice::Isr)]);
    // near miss
    let (m, e) = unregistered(&[vec![broker_change(0, e, -1, 0)]]);
    let b = nodes(&m, &[0]);
    let v = b.check();
    let f = refused(&v, "BrokerRegistrationChangeRecord");
    assert_eq!(
        (&f.evidence["broker_id"], &f.evidence["broker_epoch"]),
        (&serde_json::json!(0), &serde_json::json!(e))
    );
    assert_eq!(f.evidence["registered_epoch"], serde_json::Value::Null);
}

// ----- testUncleanShutdownBroker ----------------------------------------------------------

/// Brokers 1–3 at 4.0-IV1 (ELR on: in trunk of 2024-10 the controller's own setting at
/// that version, `ReplicationControlManager.isElrEnabled`, no feature record), `foo-0` on
/// all three led by 1 (min ISR 2 on the controller, not in the log: the test replays it
/// into the controller's config manager only). All three stop heartbeating and are fenced one by one
/// (`handleBrokerFenced`): 1 (leader 2, ISR [2, 3]), 2 (leader 3, ISR [3], ELR [2]), 3 (no
/// leader, ISR [], ELR [2, 3], last known ELR [3]: the last leader,
/// `maybeUpdateLastKnownLeader`). Broker 3 registers again after an unclean shutdown
/// (`ClusterControlManager.registerBroker` → `handleBrokerUncleanShutdown`: ELR [2], the
/// last known ELR kept, before its `RegisterBrokerRecord`), and again (no change: it is in
/// no ELR). Then `last`.
fn unclean_shutdown(unclean_topic: bool, last: impl FnOnce(&mut MetaLog, &[i64])) -> MetaLog {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(23)]);
    let mut e = register_and_unfence(&mut m, &[1, 2, 3]);
    let mut created = vec![topic(FOO)];
    if unclean_topic {
        created.push(MetaRecord::Config {
            resource_type: RESOURCE_TOPIC,
            resource_name: FOO.into(),
            name: "unclean.leader.election.enable".into(),
            value: Some("true".into()),
        });
    }
    created.push(partition(FOO, 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)));
    m.batch(&created);
    let fenced = [
        (
            1,
            change(FOO, 0, |c| (c.leader, c.isr) = (2, Some(vec![2, 3]))),
        ),
        (
            2,
            change(FOO, 0, |c| {
                (c.leader, c.isr) = (3, Some(vec![3]));
                c.eligible_leader_replicas = Some(vec![2]);
            }),
        ),
        (
            3,
            change(FOO, 0, |c| {
                (c.leader, c.isr) = (-1, Some(vec![]));
                c.eligible_leader_replicas = Some(vec![2, 3]);
                c.last_known_elr = Some(vec![3]);
            }),
        ),
    ];
    for (id, c) in fenced {
        m.batch(&[c, broker_change(id, e[id as usize - 1], 1, 0)]);
    }
    let again = m.p.next_offset();
    m.batch(&[
        change(FOO, 0, |c| c.eligible_leader_replicas = Some(vec![2])),
        register(3, again, 33, true),
    ]);
    e[2] = m.p.next_offset();
    m.batch(&[register(3, e[2], 34, true)]);
    last(&mut m, &e);
    m
}

/// `testUncleanShutdownBroker`: the unclean shutdown leaves 2 the one ELR member and 3 the
/// last known ELR; unfencing 2 (`handleBrokerUnfenced`) elects it from the ELR — leader 2
/// at leader epoch 4, ISR [2], ELR and last known ELR emptied. The elections are clean (2
/// and 3 from the ISR, 2 from the ELR while the ISR is empty), nothing is reported. Near
/// miss: with `unclean.leader.election.enable` on `foo`, 3 — the replica the unclean
/// shutdown took out of the ELR — unfenced first: neither a valid leader (not in the ELR) nor
/// the last-known-leader path (the ELR is not empty, `canElectLastKnownLeader`), so the
/// controller elects it only uncleanly (ISR [3], RECOVERING, ELR cleared): one
/// `unclean_leader_election` on the `outside_isr` path, the ELR [2] and last known ELR [3]
/// before it in the evidence.
#[test]
fn the_elr_member_left_by_an_unclean_shutdown_is_elected_cleanly() {
    let m = unclean_shutdown(false, |m, e| {
        m.batch(&[
            broker_change(2, e[1], -1, 0),
            change(FOO, 0, |c| {
                (c.leader, c.isr) = (2, Some(vec![2]));
                c.eligible_leader_replicas = Some(vec![]);
                c.last_known_elr = Some(vec![]);
            }),
        ]);
    });
    let b = nodes(&m, &[1, 2, 3]);
    clean(&b.check());
    let h = history_of(&b);
    let t = h.timeline(FOO, 0).unwrap();
    let removed = &t.steps[4].state;
    let sets = (removed.isr.clone(), removed.elr.clone());
    assert_eq!(
        (sets, removed.last_known_elr.clone()),
        ((vec![], vec![2]), vec![3])
    );
    let s = t.current().unwrap();
    assert_eq!((s.leader, s.leader_epoch, s.isr.clone()), (2, 4, vec![2]));
    assert!(s.elr.is_empty() && s.last_known_elr.is_empty());
    let want = [
        (2, 1, Choice::Isr),
        (3, 2, Choice::Isr),
        (2, 4, Choice::Elr),
    ];
    assert_eq!(elections(&b), want);
    // near miss
    let m = unclean_shutdown(true, |m, e| {
        m.batch(&[
            broker_change(3, e[2], -1, 0),
            change(FOO, 0, |c| {
                (c.leader, c.isr) = (3, Some(vec![3]));
                c.leader_recovery_state = 1;
                c.eligible_leader_replicas = Some(vec![]);
                c.last_known_elr = Some(vec![]);
            }),
        ]);
    });
    let b = nodes(&m, &[1, 2, 3]);
    let v = b.check();
    let e = unclean_of(&v);
    assert_eq!(
        (&e["new_leader"], &e["path"]),
        (&3.into(), &"outside_isr".into())
    );
    assert_eq!(e["elr_before"], serde_json::json!([2]));
    assert_eq!(e["last_known_elr_before"], serde_json::json!([3]));
    assert_eq!(e["unclean_leader_election_enable"], "true (topic)");
}

// ----- testConfigurationOperations --------------------------------------------------------

/// `unclean.leader.election.enable=true` on broker resource `broker`.
fn broker_config(broker: &str) -> MetaRecord {
    MetaRecord::Config {
        resource_type: RESOURCE_BROKER,
        resource_name: broker.into(),
        name: "unclean.leader.election.enable".into(),
        value: Some("true".into()),
    }
}

/// `testConfigurationOperations` / `testDelayedConfigurationOperations`: an
/// `incrementalAlterConfigs` of a broker resource writes one `ConfigRecord` (its
/// `validateOnly` run writes nothing). What the controller reads of a broker's dynamic
/// config is its own node's (`ConfigurationControlManager.currentControllerConfig`, between
/// the topic's and the cluster default in `KafkaConfigSchema.resolveEffectiveTopicConfig`):
/// `unclean.leader.election.enable=true` on broker "3000", the active controller the
/// `LEADER_CHANGE` names, is what the unclean election of `foo-0` names — "true
/// (controller 3000)". Near miss: the same on broker "1", which the controller never
/// resolves: the election names no config.
#[test]
fn the_controllers_own_broker_config_is_the_one_resolved() {
    for (broker, want) in [
        (CONTROLLER.to_string(), Some("true (controller 3000)")),
        ("1".to_string(), None),
    ] {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        m.batch(&[metadata_version(21)]);
        let epochs = register_and_unfence(&mut m, &[1, 2]);
        m.batch(&[broker_config(&broker)]);
        foo_unclean(&mut m, &epochs);
        let b = nodes(&m, &[1, 2]);
        let v = b.check();
        let e = unclean_of(&v);
        assert_eq!(e["unclean_leader_election_enable"].as_str(), want);
        let h = history_of(&b);
        let configs: Vec<_> = (h.history.configs.iter())
            .map(|c| (c.scope.as_str(), c.resource.as_str(), c.value.as_deref()))
            .collect();
        assert_eq!(configs, [("broker", broker.as_str(), Some("true"))]);
    }
}

// ----- testBalancePartitionLeaders --------------------------------------------------------

/// Brokers 1–3 at 3.7-IV0 (`SIMPLE_BOOTSTRAP`), `foo` with three partitions on all three
/// brokers, each led by its preferred replica (1, 2, 3). Broker 3's session times out
/// (`handleBrokerFenced`: it leaves every ISR — from 3.6-IV0 a shrink bumps no leader epoch,
/// `triggerLeaderEpochBumpForIsrShrinkIfNeeded` — and `foo-2` moves to the next replica in
/// its ISR, 1), it registers again under a new incarnation and broker epoch (no
/// unclean-shutdown records below ELR's version) and is unfenced. With `expanded`, the
/// leader of the one imbalanced partition, `foo-2`, adds it back to the ISR
/// (`alterPartition`: ISR [1, 2, 3]); then the leader balancer elects the preferred replica
/// 3 (`maybeBalancePartitionLeaders`, `Election.PREFERRED`).
fn balanced(expanded: bool) -> MetaLog {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(15)]);
    let e = register_and_unfence(&mut m, &[1, 2, 3]);
    m.batch(&[
        topic(FOO),
        partition(FOO, 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
        partition(FOO, 1, &[2, 3, 1], &[2, 3, 1], (2, 0, 0)),
        partition(FOO, 2, &[3, 1, 2], &[3, 1, 2], (3, 0, 0)),
    ]);
    m.batch(&[
        change(FOO, 0, |c| c.isr = Some(vec![1, 2])),
        change(FOO, 1, |c| c.isr = Some(vec![2, 1])),
        change(FOO, 2, |c| (c.leader, c.isr) = (1, Some(vec![1, 2]))),
        broker_change(3, e[2], 1, 0),
    ]);
    let again = m.p.next_offset();
    m.batch(&[register(3, again, 33, true)]);
    m.batch(&[broker_change(3, again, -1, 0)]);
    if expanded {
        m.batch(&[change(FOO, 2, |c| c.isr = Some(vec![1, 2, 3]))]);
    }
    m.batch(&[change(FOO, 2, |c| c.leader = 3)]);
    m
}

/// `QuorumControllerTest.testBalancePartitionLeaders`: `foo-2` goes to 1 at leader epoch 1
/// when 3 is fenced and back to 3 at epoch 2 once 3 is in its ISR again — both elections
/// from the ISR, nothing reported; `foo-0` and `foo-1` keep their leaders at epoch 0 with
/// ISRs without 3. Near miss: the balancer's election before the ISR expansion (which the
/// controller refuses: PREFERRED_LEADER_NOT_AVAILABLE, the preferred replica outside the
/// ISR): broker 3 elected from outside the ISR [1, 2], one `unclean_leader_election`.
#[test]
fn the_preferred_leader_is_elected_back_once_in_the_isr() {
    let b = nodes(&balanced(true), &[1, 2, 3]);
    clean(&b.check());
    assert_eq!(elections(&b), [(1, 1, Choice::Isr), (3, 2, Choice::Isr)]);
    let h = history_of(&b);
    for (n, leader, isr) in [(0, 1, [1, 2]), (1, 2, [2, 1])] {
        let s = h.timeline(FOO, n).unwrap().current().unwrap().clone();
        assert_eq!((s.leader, s.leader_epoch, s.isr), (leader, 0, isr.to_vec()));
    }
    // near miss
    let b = nodes(&balanced(false), &[1, 2, 3]);
    let v = b.check();
    let e = unclean_of(&v);
    assert_eq!(
        (&e["new_leader"], &e["new_leader_epoch"]),
        (&3.into(), &2.into())
    );
    assert_eq!(e["isr_before"], serde_json::json!([1, 2]));
}
