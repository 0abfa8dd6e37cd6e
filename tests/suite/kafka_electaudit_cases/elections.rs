//! `ReplicationControlManagerTest`'s elections: a PREFERRED election once the preferred
//! replicas are back in the ISR, and the leaderships a fenced broker loses
//! (`handleBrokerFenced`), as the records the controller writes.

use super::refused;
use crate::kafka_imgaudit_cases::{all_lines, brokers_with, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, change, isr, metadata_version, partition, register, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0};
use klogscan::cluster::leadership::Choice;
use klogscan::cluster::leadership::replay::BrokerChange;
use klogscan::finding::Kind;

/// The broker epoch of broker `id`'s first registration in these logs.
fn epoch(id: i32) -> i64 {
    100 + i64::from(id)
}

/// Brokers `ids` registered (fenced) at 3.6-IV2, then `then` one controller write each;
/// the brokers' log dirs hold only the metadata log.
fn cluster(ids: &[i32], then: &[Vec<klogscan::read::format::metadata::MetaRecord>]) -> Brokers {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(14)]);
    for &id in ids {
        m.batch(&[register(id, epoch(id), id as u8 + 1, true)]);
    }
    m.at(T0 - 30 * SEC);
    for r in then {
        m.batch(r);
    }
    brokers_with(&m, ids, |_| Vec::new())
}

/// `(topic-partition, leader, leader epoch, choice)` of each election in `b`'s history.
fn elections(b: &Brokers) -> Vec<(String, i32, i32, Choice)> {
    (history_of(b).elections.iter())
        .map(|e| {
            (
                format!("{}-{}", e.topic, e.partition),
                e.leader,
                e.leader_epoch,
                e.choice,
            )
        })
        .collect()
}

/// `testElectPreferredLeaders`: brokers 0–4, 0 fenced and 1 in controlled shutdown when `foo`
/// is created (`foo-0` [1, 2, 3] led by 2 with ISR [2, 3], `foo-1` [2, 3, 4] led by 2,
/// `foo-2` [0, 2, 1] led by 2 with ISR [2]); 1 registers again, 0 and 1 are unfenced, the
/// leader 2 adds them to the ISRs (AlterPartition), and the PREFERRED election writes
/// `foo-0` led by 1 and `foo-2` led by 0 (`Leader` alone): two elections from the ISR at
/// leader epoch 1, no `unclean_leader_election`. Near miss: the election written without
/// the ISR change (the controller answers PREFERRED_LEADER_NOT_AVAILABLE and writes
/// nothing; such records could only be a forced choice): both read as unclean.
#[test]
fn preferred_leaders_elected_once_back_in_the_isr_are_clean() {
    for in_isr in [true, false] {
        let mut then = vec![
            (1..=4)
                .map(|id| broker_change(id, epoch(id), -1, 0))
                .collect(),
            vec![broker_change(1, epoch(1), 0, 1)],
            vec![
                topic("foo"),
                partition("foo", 0, &[1, 2, 3], &[2, 3], (2, 0, 0)),
                partition("foo", 1, &[2, 3, 4], &[2, 3, 4], (2, 0, 0)),
                partition("foo", 2, &[0, 2, 1], &[2], (2, 0, 0)),
            ],
            vec![register(1, 200, 12, true)],
            vec![
                broker_change(0, epoch(0), -1, 0),
                broker_change(1, 200, -1, 0),
            ],
        ];
        if in_isr {
            then.push(vec![isr("foo", 0, &[1, 2, 3]), isr("foo", 2, &[0, 2, 1])]);
        }
        then.push(vec![
            change("foo", 0, |c| c.leader = 1),
            change("foo", 2, |c| c.leader = 0),
        ]);
        let b = cluster(&[0, 1, 2, 3, 4], &then);
        let got = elections(&b);
        let v = b.check();
        let found = of_kind(&v, Kind::UncleanLeaderElection);
        let rejected = of_kind(&v, Kind::MetadataRecordRejected);
        assert!(rejected.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
        let choice = if in_isr { Choice::Isr } else { Choice::Unclean };
        assert_eq!(
            got,
            vec![
                ("foo-0".into(), 1, 1, choice),
                ("foo-2".into(), 0, 1, choice)
            ]
        );
        let n = if in_isr { 0 } else { 2 };
        assert!(found.iter().all(|r| r.len() == n), "{}", all_lines(&v));
    }
}

/// `testRemoveLeaderships`: brokers 0–3, `foo` with [0, 1, 2], [1, 2, 3], [2, 3, 0],
/// [0, 2, 1] (ISR all, led by the first); fencing broker 0 (`handleBrokerFenced`) writes its
/// `BrokerRegistrationChangeRecord` and takes 0 out of every ISR: `foo-0` to 1 and `foo-3`
/// to 2 (elections from the ISR), `foo-2`'s ISR [2, 3] (leader kept). Replayed: broker 0
/// fenced, no ISR holds 0 (`brokersToIsrs` empty for it), two clean elections. Near miss:
/// broker 0 registered again (a new incarnation, epoch 200) before a fence at its old epoch:
/// the fence is refused (`metadata_record_rejected`) and broker 0 is not fenced; the partition
/// changes, separate records, still apply.
#[test]
fn a_fenced_broker_loses_its_leaderships_to_the_isr() {
    for stale in [false, true] {
        let mut then: Vec<Vec<_>> = vec![
            (0..=3)
                .map(|id| broker_change(id, epoch(id), -1, 0))
                .collect(),
            vec![
                topic("foo"),
                partition("foo", 0, &[0, 1, 2], &[0, 1, 2], (0, 0, 0)),
                partition("foo", 1, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
                partition("foo", 2, &[2, 3, 0], &[2, 3, 0], (2, 0, 0)),
                partition("foo", 3, &[0, 2, 1], &[0, 2, 1], (0, 0, 0)),
            ],
        ];
        if stale {
            then.push(vec![register(0, 200, 9, false)]);
        }
        then.push(vec![
            broker_change(0, epoch(0), 1, 0),
            change("foo", 0, |c| {
                c.leader = 1;
                c.isr = Some(vec![1, 2]);
            }),
            isr("foo", 2, &[2, 3]),
            change("foo", 3, |c| {
                c.leader = 2;
                c.isr = Some(vec![2, 1]);
            }),
        ]);
        let b = cluster(&[0, 1, 2, 3], &then);
        assert_eq!(
            elections(&b),
            vec![
                ("foo-0".into(), 1, 1, Choice::Isr),
                ("foo-3".into(), 2, 1, Choice::Isr)
            ]
        );
        let h = history_of(&b);
        for t in h.history.partitions.values() {
            assert!(!t.current().unwrap().isr.contains(&0), "{}", t.partition);
        }
        let last = (h.history.brokers.iter().rev())
            .find(|e| e.broker == 0)
            .map(|e| e.change.clone());
        let v = b.check();
        if stale {
            let f = refused(&v, "BrokerRegistrationChangeRecord");
            assert_eq!(f.evidence["registered_epoch"], 200);
            let registered = BrokerChange::Registered {
                fenced: false,
                epoch: 200,
            };
            assert_eq!(last, Some(registered));
        } else {
            let none = of_kind(&v, Kind::MetadataRecordRejected);
            assert!(none.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
            assert_eq!(last, Some(BrokerChange::Fenced));
        }
        let found = of_kind(&v, Kind::UncleanLeaderElection);
        assert!(found.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
    }
}
