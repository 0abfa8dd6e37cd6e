//! `UncleanLeaderElectionTest` (core integration, KRaft): `orders-0` on brokers 1 and 2 led
//! by 1; the follower 2 shuts down (ISR [1]) while 1 takes more writes, then the leader 1
//! shuts down — the last ISR member stays in the ISR, the partition leaderless (leader -1,
//! ISR [1]: `waitForNoLeaderAndIsrHasOldLeaderId`) — and 2 starts again. With
//! `unclean.leader.election.enable` the controller's periodic unclean election of
//! leaderless partitions (`ReplicationControlManager.
//! maybeTriggerUncleanLeaderElectionForLeaderlessPartitions`, every
//! `unclean.leader.election.interval.ms`) elects 2 (ISR [2], RECOVERING): what 1 wrote
//! alone is gone ("second message was lost"). Without it 1 comes back, is elected again
//! from the ISR, 2 catches up and joins the ISR, 1 shuts down and 2 takes over cleanly.
//!
//! What the brokers leave: the metadata log, broker 1's `orders-0` (epoch 0: "first",
//! "second"; in the clean flow epoch 2's "third" too) and broker 2's (epoch 0: "first", then
//! epoch 2's "third" as the unclean leader; in the clean flow a copy of 1's).

use crate::kafka_imgaudit_cases::{all_lines, brokers_with, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, broker_epoch_at_start, change, metadata_version, partition,
    register, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, replica};
use klogscan::cluster::leadership::Choice;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_TOPIC};

/// How the case's cluster is set.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Unclean {
    /// The controller's static `unclean.leader.election.enable=true` (not in the log).
    Static,
    /// The topic created with `unclean.leader.election.enable=true`.
    TopicOverride,
    /// Set on the topic (`incrementalAlterConfigs`) while the partition is leaderless,
    /// after a `true` then `false` while the leader was alive.
    Altered,
    /// Disabled (the default, or the topic's `false` over a broker's `true`).
    Disabled,
}

fn unclean_config(value: &str) -> MetaRecord {
    MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: "orders".into(),
        name: "unclean.leader.election.enable".into(),
        value: Some(value.into()),
    }
}

/// The metadata log of the test at 3.6-IV2 (no ELR), one controller write per step.
fn log(how: Unclean) -> MetaLog {
    log_at(how, 14, &[])
}

/// [`log`] at metadata version `mv`, the controller writing `features` (one batch each)
/// once the brokers are unfenced, before the topic is created.
pub(crate) fn log_at(how: Unclean, mv: i16, features: &[MetaRecord]) -> MetaLog {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(mv)]);
    for id in 1..=2 {
        m.batch(&[register(id, broker_epoch_at_start(id), id as u8, true)]);
    }
    let e = |id| broker_epoch_at_start(id);
    m.batch(&[broker_change(1, e(1), -1, 0), broker_change(2, e(2), -1, 0)]);
    for f in features {
        m.batch(std::slice::from_ref(f));
    }
    m.at(T0 - 30 * SEC);
    let mut created = vec![topic("orders")];
    if how == Unclean::TopicOverride {
        created.push(unclean_config("true"));
    }
    created.push(partition("orders", 0, &[1, 2], &[1, 2], (1, 0, 0)));
    m.batch(&created);
    if how == Unclean::Altered {
        m.batch(&[unclean_config("true")]);
        m.batch(&[unclean_config("false")]);
    }
    // the follower's controlled shutdown, then it is fenced
    m.at(T0 + 2 * SEC);
    m.batch(&[
        broker_change(2, e(2), 0, 1),
        change("orders", 0, |c| c.isr = Some(vec![1])),
    ]);
    m.batch(&[broker_change(2, e(2), 1, 0)]);
    // the leader's: the last ISR member stays, no leader
    m.at(T0 + 20 * SEC);
    m.batch(&[
        broker_change(1, e(1), 0, 1),
        change("orders", 0, |c| c.leader = -1),
    ]);
    m.batch(&[broker_change(1, e(1), 1, 0)]);
    // the follower starts again: a new incarnation at a new broker epoch
    let again = m.p.next_offset();
    m.batch(&[register(2, again, 12, true)]);
    m.batch(&[broker_change(2, again, -1, 0)]);
    if how == Unclean::Disabled {
        // the leader comes back and is elected from the ISR; 2 catches up and joins the ISR;
        // then the leader shuts down and 2 takes over from the ISR
        let back = m.p.next_offset();
        m.batch(&[register(1, back, 11, true)]);
        m.batch(&[
            broker_change(1, back, -1, 0),
            change("orders", 0, |c| c.leader = 1),
        ]);
        m.at(T0 + 40 * SEC);
        m.batch(&[change("orders", 0, |c| c.isr = Some(vec![1, 2]))]);
        m.batch(&[
            broker_change(1, back, 0, 1),
            change("orders", 0, |c| {
                c.leader = 2;
                c.isr = Some(vec![2]);
            }),
        ]);
        m.batch(&[broker_change(1, back, 1, 0)]);
    } else {
        if how == Unclean::Altered {
            m.batch(&[unclean_config("true")]);
        }
        m.batch(&[change("orders", 0, |c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        })]);
    }
    m
}

/// The brokers' log dirs: `orders-0`'s batches of 5 ("first", "second", "third").
fn cluster(how: Unclean) -> Brokers {
    cluster_of(how, log(how))
}

/// [`cluster`] with the metadata log `m`.
pub(crate) fn cluster_of(how: Unclean, m: MetaLog) -> Brokers {
    brokers_with(&m, &[1, 2], |id| {
        let epochs: &[(i32, usize)] = match (how, id) {
            (Unclean::Disabled, _) => &[(0, 2), (2, 1)],
            (_, 1) => &[(0, 2)],
            _ => &[(0, 1), (2, 1)],
        };
        vec![replica("orders", 0, epochs)]
    })
}

/// `testUncleanLeaderElectionEnabled`, `testUncleanLeaderElectionEnabledByTopicOverride`,
/// `testTopicUncleanLeaderElectionEnableWithAlterTopicConfigs`: one
/// `unclean_leader_election` in scan, verify and the merge — broker 2 elected at leader
/// epoch 2 from outside the ISR [1], RECOVERING written; broker 1's "second" (offsets
/// 5–9, epoch 0) is what it truncates when it follows (`lost_offsets` 5); the config the
/// log shows (none for the controller's static one, the topic's `true`, the altered
/// `true` after a `false`). Near miss (`testUncleanLeaderElectionDisabled`,
/// `testUncleanLeaderElectionDisabledByTopicOverride`): the leaderless partition waits for
/// broker 1, the later elections are clean (ISR) and the copies agree: no finding.
#[test]
fn an_unclean_election_of_the_restarted_follower_loses_the_leaders_tail() {
    for (how, config) in [
        (Unclean::Static, None),
        (Unclean::TopicOverride, Some("true (topic)")),
        (Unclean::Altered, Some("true (topic)")),
    ] {
        let b = cluster(how);
        let v = b.check();
        let found = of_kind(&v, Kind::UncleanLeaderElection);
        for f in &found {
            assert_eq!(f.len(), 1, "{}", all_lines(&v));
        }
        let f = found[0][0];
        assert_eq!(f.severity, Severity::Error, "{}", f.message);
        let e = &f.evidence;
        assert_eq!(
            (&e["new_leader"], &e["new_leader_epoch"]),
            (&2.into(), &2.into())
        );
        assert_eq!(e["isr_before"], serde_json::json!([1]));
        assert_eq!(e["last_live_leader"], 1);
        assert_eq!(e["leader_recovery_state_written"], 1);
        assert_eq!(e["old_leader_copy"]["lost_offsets"], 5, "{e:#}");
        let shown = e["unclean_leader_election_enable"].as_str();
        assert_eq!(shown, config);
        let none = of_kind(&v, Kind::MetadataRecordRejected);
        assert!(none.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
    }
    // near miss
    let b = cluster(Unclean::Disabled);
    let v = b.check();
    let found = of_kind(&v, Kind::UncleanLeaderElection);
    assert!(found.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
    let h = history_of(&b);
    let got: Vec<(i32, i32, Choice)> = (h.elections.iter())
        .map(|e| (e.leader, e.leader_epoch, e.choice))
        .collect();
    assert_eq!(got, vec![(1, 2, Choice::Isr), (2, 3, Choice::Isr)]);
    let none = of_kind(&v, Kind::MetadataRecordRejected);
    assert!(none.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
}
