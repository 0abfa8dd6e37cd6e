//! The leadership history of the KRaft metadata log (`klogscan::cluster::leadership`): the
//! typed decode of every metadata record, the replay as the broker's metadata loader applies
//! it, unclean elections and what they cost on the replicas in the inputs, and the links of
//! replica divergences and hanging transactions to them.
#![cfg(feature = "testkit")]

use klogscan::cluster::leadership::{self, Choice, ClusterHistory, MetaEntry, MetadataLog, replay};
use klogscan::discover::layout;
use klogscan::finding::{Finding, Kind, Severity, Source};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{
    BrokerRegistrationChange, MetaRecord, PartitionChange, PartitionRecord, RESOURCE_TOPIC,
    RegisterBroker, decode_record,
};
use klogscan::results::ScanReport;
use klogscan::testkit::files::{LogDirBuilder, topic_id_for};
use klogscan::testkit::metadata::{MetadataLogBuilder, encode, encode_at};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
use std::path::Path;

mod broker_data;
mod history_cases;
mod kafka_metadata_log_cases;
mod stray_cases;

const T0: i64 = 1_700_000_000_000;
const HOUR: i64 = 3_600_000;

fn tid() -> [u8; 16] {
    topic_id_for("orders")
}

fn topic() -> MetaRecord {
    MetaRecord::Topic {
        name: "orders".into(),
        topic_id: tid(),
    }
}

fn broker(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8; 16],
        broker_epoch: 10 + id as i64,
        ..Default::default()
    })
}

/// `orders-0` on `replicas`, led by `leader` at `epoch` with `isr`.
fn partition(replicas: &[i32], isr: &[i32], leader: i32, epoch: i32) -> MetaRecord {
    klogscan::testkit::brokers::orders_partition(replicas, isr, leader, epoch)
}

/// `orders-0` on `replicas` at leader and partition epoch 4, led by `leader` with `isr`, the
/// ELR `elr` and an empty last known ELR.
fn partition_with_elr(replicas: &[i32], isr: &[i32], leader: i32, elr: &[i32]) -> MetaRecord {
    MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: tid(),
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        leader,
        leader_epoch: 4,
        partition_epoch: 4,
        eligible_leader_replicas: Some(elr.to_vec()),
        last_known_elr: Some(vec![]),
        ..Default::default()
    })
}

fn change(f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    klogscan::testkit::brokers::orders_change(f)
}

fn entries(records: &[MetaRecord]) -> Vec<MetaEntry> {
    records
        .iter()
        .enumerate()
        .map(|(i, r)| MetaEntry {
            offset: i as i64,
            time: T0 + i as i64,
            raft_epoch: 1,
            from_snapshot: false,
            record: r.clone(),
        })
        .collect()
}

fn history(records: &[MetaRecord]) -> ClusterHistory {
    ClusterHistory::from_log(
        Source::default(),
        MetadataLog {
            entries: entries(records),
            ..Default::default()
        },
    )
}

fn scan(dir: &Path) -> ScanReport {
    let opts = ScanOptions::default();
    klogscan::pipeline::scan(&[dir.to_path_buf()], &opts)
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

// ---------------------------------------------------------------------------------------
// decode
// ---------------------------------------------------------------------------------------

#[test]
fn every_record_type_round_trips_with_its_tagged_fields() {
    let full_change = change(|c| {
        c.isr = Some(vec![2]);
        c.leader = 2;
        c.replicas = Some(vec![1, 2, 3]);
        c.removing_replicas = Some(vec![3]);
        c.adding_replicas = Some(vec![]);
        c.leader_recovery_state = 1;
        c.directories = Some(vec![[4; 16], [5; 16], [6; 16]]);
        c.eligible_leader_replicas = Some(vec![1]);
        c.last_known_elr = Some(vec![]);
    });
    let full_partition = MetaRecord::Partition(PartitionRecord {
        partition_id: 3,
        topic_id: tid(),
        replicas: vec![1, 2],
        isr: vec![1],
        removing_replicas: vec![2],
        adding_replicas: vec![],
        leader: 1,
        leader_recovery_state: 1,
        leader_epoch: 7,
        partition_epoch: 9,
        directories: vec![[1; 16], [2; 16]],
        eligible_leader_replicas: Some(vec![2]),
        last_known_elr: None,
    });
    let records = vec![
        broker(1),
        MetaRecord::RegisterBroker(RegisterBroker {
            broker_id: 2,
            is_migrating_zk_broker: true,
            incarnation_id: [2; 16],
            broker_epoch: 5,
            rack: Some("r1".into()),
            fenced: true,
            in_controlled_shutdown: true,
            log_dirs: vec![[3; 16]],
        }),
        MetaRecord::UnregisterBroker {
            broker_id: 4,
            broker_epoch: 8,
        },
        topic(),
        full_partition,
        partition(&[1], &[1], 1, 0),
        MetaRecord::Config {
            resource_type: RESOURCE_TOPIC,
            resource_name: "orders".into(),
            name: "min.insync.replicas".into(),
            value: None,
        },
        full_change,
        change(|c| c.leader = -1),
        MetaRecord::FenceBroker { id: 1, epoch: 11 },
        MetaRecord::UnfenceBroker { id: 1, epoch: 12 },
        MetaRecord::RemoveTopic { topic_id: tid() },
        MetaRecord::FeatureLevel {
            name: "metadata.version".into(),
            feature_level: 21,
        },
        MetaRecord::ProducerIds {
            broker_id: 1,
            broker_epoch: 3,
            next_producer_id: 4000,
        },
        MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
            broker_id: 1,
            broker_epoch: 3,
            fenced: -1,
            in_controlled_shutdown: 1,
            log_dirs: vec![[9; 16]],
        }),
        MetaRecord::NoOp,
        MetaRecord::ZkMigrationState { state: 2 },
        MetaRecord::BeginTransaction {
            name: Some("create topics".into()),
        },
        MetaRecord::BeginTransaction { name: None },
        MetaRecord::EndTransaction,
        MetaRecord::AbortTransaction {
            reason: Some("controller failover".into()),
        },
        MetaRecord::RegisterController {
            controller_id: 3000,
            incarnation_id: [7; 16],
        },
        MetaRecord::ClearElr {
            topic_name: String::new(),
        },
    ];
    for r in &records {
        let bytes = encode(r);
        assert_eq!(&decode_record(&bytes).unwrap(), r, "{}", r.type_name());
        // A record cut short is an error value, never a panic.
        for n in 0..bytes.len() {
            let _ = decode_record(&bytes[..n]);
        }
    }
    // PartitionChangeRecord v0 carries neither ELR nor directories: written at v0 they
    // come back null.
    let v2 = change(|c| {
        c.leader = 3;
        c.eligible_leader_replicas = Some(vec![1]);
        c.directories = Some(vec![[1; 16]]);
    });
    let MetaRecord::PartitionChange(back) = decode_record(&encode_at(&v2, 0)).unwrap() else {
        panic!("not a change");
    };
    assert_eq!(
        (back.leader, back.eligible_leader_replicas, back.directories),
        (3, None, None)
    );
}

#[test]
fn unknown_types_and_versions_are_kept_raw_and_garbage_is_an_error() {
    // api key 99; PartitionRecord version 9.
    for bytes in [vec![1u8, 99, 0, 0], vec![1u8, 3, 9, 0]] {
        match decode_record(&bytes).unwrap() {
            MetaRecord::Unknown { bytes: b, .. } => assert_eq!(b, bytes),
            other => panic!("{other:?}"),
        }
    }
    let mut garbage = encode(&topic());
    garbage.push(7);
    assert!(decode_record(&garbage).is_err());
    assert!(decode_record(&[0, 2, 0]).is_err(), "frame version 0");
    // ACL records read and check, and come back as Other
    // (RemoveAccessControlEntryRecord: a uuid).
    let mut acl = vec![1u8, 19, 0];
    acl.extend_from_slice(&[3; 16]);
    acl.push(0);
    assert_eq!(
        decode_record(&acl).unwrap(),
        MetaRecord::Other {
            api_key: 19,
            version: 0
        }
    );
    assert!(decode_record(&acl[..10]).is_err());
}

// ---------------------------------------------------------------------------------------
// replay
// ---------------------------------------------------------------------------------------

/// `PartitionRegistrationTest`-style merges: a change without a leader keeps the leader
/// epoch, any leader (even -1) raises it, every change raises the partition epoch.
#[test]
fn changes_merge_as_partition_registration_merge() {
    let h = history(&[
        topic(),
        partition(&[1, 2, 3], &[1, 2, 3], 1, 5),
        change(|c| c.isr = Some(vec![1, 2])),
        change(|c| c.leader = -1),
        change(|c| {
            c.leader = 2;
            c.leader_recovery_state = 1;
        }),
        change(|c| c.replicas = Some(vec![2, 3])),
        change(|c| c.leader_recovery_state = 0),
    ]);
    let t = h.timeline("orders", 0).unwrap();
    let epochs: Vec<(i32, i32, i32, i8)> = t
        .steps
        .iter()
        .map(|s| {
            (
                s.state.leader,
                s.state.leader_epoch,
                s.state.partition_epoch,
                s.state.recovery_state,
            )
        })
        .collect();
    assert_eq!(
        epochs,
        vec![
            (1, 5, 5, 0),
            (1, 5, 6, 0),
            (-1, 6, 7, 0),
            (2, 7, 8, 1),
            (2, 7, 9, 1),
            (2, 7, 10, 0)
        ]
    );
    assert_eq!(t.current().unwrap().isr, vec![1, 2]);
    assert_eq!(t.current().unwrap().replicas, vec![2, 3]);
    assert_eq!(h.leader_epochs("orders", 0), vec![(5, 1), (7, 2)]);
}

#[test]
fn metadata_transactions_apply_at_their_end_and_never_when_aborted_or_open() {
    let base = vec![topic(), partition(&[1, 2], &[1, 2], 1, 0)];
    let elect = |l| change(move |c| c.leader = l);
    let run = |tail: Vec<MetaRecord>| {
        let mut r = base.clone();
        r.extend(tail);
        history(&r)
    };
    let begin = MetaRecord::BeginTransaction { name: None };
    let h = run(vec![begin.clone(), elect(2), MetaRecord::EndTransaction]);
    assert_eq!(
        h.timeline("orders", 0).unwrap().current().unwrap().leader,
        2
    );
    let h = run(vec![
        begin.clone(),
        elect(2),
        MetaRecord::AbortTransaction { reason: None },
        elect(1),
    ]);
    let t = h.timeline("orders", 0).unwrap();
    assert_eq!((t.steps.len(), t.current().unwrap().leader_epoch), (2, 1));
    assert_eq!(h.history.dropped_txns[0].abort, Some(4));
    let h = run(vec![begin, elect(2)]);
    assert_eq!(h.timeline("orders", 0).unwrap().steps.len(), 1);
    assert_eq!(h.history.dropped_txns[0].abort, None);
    let h = run(vec![MetaRecord::EndTransaction]);
    assert_eq!(h.history.txn_errors.len(), 1);
}

/// `ClusterControlManager.replay`'s registrations: a `RegisterBrokerRecord` sets the
/// broker's log dirs (`LogDirs`), a `BrokerRegistrationChangeRecord` of its epoch replaces
/// them when it carries any (`replayRegistrationChange`), an `UnregisterBrokerRecord`
/// removes the broker (`ClusterControlManagerTest.testUnregister`); a change of another epoch
/// is refused and changes nothing; a registration record kept raw leaves every registration
/// unsure, and `RegisteredDirs` keeps only whole ones,
/// by directory id.
#[test]
fn registrations_keep_each_brokers_log_dirs_until_unregistered() {
    let register = |id: i32, dirs: &[u8]| {
        let mut r = broker(id);
        if let MetaRecord::RegisterBroker(b) = &mut r {
            b.log_dirs = dirs.iter().map(|d| [*d; 16]).collect();
        }
        r
    };
    let dirs_change = |id: i32, epoch: i64, dirs: &[u8]| {
        MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
            broker_id: id,
            broker_epoch: epoch,
            log_dirs: dirs.iter().map(|d| [*d; 16]).collect(),
            ..Default::default()
        })
    };
    let mut records = vec![
        register(1, &[0xa, 0xb]),
        register(2, &[0xc]),
        register(3, &[0xd]),
        dirs_change(1, 11, &[]),
        dirs_change(1, 11, &[0xa, 0xe]),
        dirs_change(3, 99, &[0xf]),
        MetaRecord::UnregisterBroker {
            broker_id: 2,
            broker_epoch: 12,
        },
    ];
    let h = history(&records);
    let regs = &h.history.registrations;
    assert_eq!(regs.keys().copied().collect::<Vec<_>>(), vec![1, 3]);
    assert_eq!(regs[&1].directories, vec![[0xa; 16], [0xe; 16]]);
    assert_eq!(
        (regs[&1].offset, regs[&1].epoch, regs[&1].unsure),
        (0, 11, false)
    );
    // Another epoch's change: a node's replay throws on it (`replayRegistrationChange`,
    // `ClusterDelta.getBrokerOrThrow`): a broker skips it, and broker 3 keeps its ids.
    assert_eq!(
        (regs[&3].directories.clone(), regs[&3].unsure),
        (vec![[0xd; 16]], false)
    );
    let refused = &h.history.refused_broker_changes;
    assert_eq!((refused.len(), refused[0].registered_epoch), (1, Some(13)));
    let dirs = leadership::RegisteredDirs::of(&h);
    assert_eq!(
        dirs.owners.keys().copied().collect::<Vec<_>>(),
        vec![[0xa; 16], [0xd; 16], [0xe; 16]]
    );
    assert_eq!(dirs.others(&[0xa; 16], 2), vec![(1, 0)]);
    assert!(dirs.others(&[0xa; 16], 1).is_empty(), "its own id");
    assert_eq!(
        dirs.brokers.iter().copied().collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    // A RegisterBrokerRecord of an unknown version: any registration may have changed.
    records.push(MetaRecord::Unknown {
        api_key: 0,
        version: 9,
        bytes: vec![1, 0, 9],
    });
    let h = history(&records);
    assert!(h.history.registrations.values().all(|r| r.unsure));
    assert!(leadership::RegisteredDirs::of(&h).owners.is_empty());
    // A record the replay could not apply after broker 1's registration: it may be its
    // unregistration.
    let mut h = history(&records[..5]);
    h.log.gaps.push(3);
    assert!(leadership::RegisteredDirs::of(&h).owners.is_empty());
}

#[test]
fn clear_elr_empties_the_elr_and_removed_topics_end_their_timeline() {
    let h = history(&[
        topic(),
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: tid(),
            replicas: vec![1, 2],
            isr: vec![],
            leader: -1,
            leader_epoch: 3,
            partition_epoch: 3,
            eligible_leader_replicas: Some(vec![1]),
            last_known_elr: Some(vec![2]),
            ..Default::default()
        }),
        MetaRecord::ClearElr {
            topic_name: "orders".into(),
        },
        MetaRecord::RemoveTopic { topic_id: tid() },
        change(|c| c.leader = 1),
    ]);
    let t = h.timeline("orders", 0).unwrap();
    let s = t.current().unwrap();
    assert!(s.elr.is_empty() && s.last_known_elr.is_empty());
    assert_eq!((s.partition_epoch, s.leader_epoch), (4, 3));
    assert_eq!(t.removed_at, Some(3));
    assert_eq!(
        h.history.refused_targets.len(),
        1,
        "a change after the removal is not applied (a controller refuses it)"
    );
    assert!(h.history.orphans.is_empty());
}

#[test]
fn replay_input_serializes() {
    let log = MetadataLog {
        entries: entries(&[topic(), partition(&[1], &[1], 1, 0)]),
        ..Default::default()
    };
    let json = serde_json::to_string(&log).unwrap();
    let back: MetadataLog = serde_json::from_str(&json).unwrap();
    assert_eq!(back, log);
    assert_eq!(replay::replay(&back.entries), replay::replay(&log.entries));
}

// ---------------------------------------------------------------------------------------
// election classification (PartitionChangeBuilder.electAnyLeader / isValidNewLeader)
// ---------------------------------------------------------------------------------------

fn choices(records: &[MetaRecord]) -> Vec<Choice> {
    history(records)
        .elections
        .iter()
        .map(|e| e.choice)
        .collect()
}

/// The choices when 2 is elected from `partition_with_elr(replicas, isr, leader, elr)`,
/// leaving the ISR [2] and the ELR `elr_after`.
fn electing_2_from_elr(
    replicas: &[i32],
    isr: &[i32],
    leader: i32,
    elr: &[i32],
    elr_after: &[i32],
) -> Vec<Choice> {
    choices(&[
        topic(),
        partition_with_elr(replicas, isr, leader, elr),
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.eligible_leader_replicas = Some(elr_after.to_vec());
        }),
    ])
}

#[test]
fn elections_inside_the_isr_or_from_the_elr_with_an_empty_isr_are_clean() {
    // Leader 1 fenced: the ISR shrinks to [2, 3] and 2 leads (testElectLeader's shape).
    let c = choices(&[
        topic(),
        partition(&[1, 2, 3], &[1, 2, 3], 1, 0),
        change(|c| {
            c.isr = Some(vec![2, 3]);
            c.leader = 2;
        }),
    ]);
    assert_eq!(c, vec![Choice::Isr]);
    // ISR empty, ELR [2]: 2 is a clean choice (KIP-966).
    let c = electing_2_from_elr(&[1, 2], &[], -1, &[2], &[]);
    assert_eq!(c, vec![Choice::Elr]);
    // ISR [1] leaving as 2 (ELR) is chosen: the ELR kept non-empty shows the clean path.
    let c = electing_2_from_elr(&[1, 2], &[1], 1, &[2], &[1]);
    assert_eq!(c, vec![Choice::Elr]);
}

#[test]
fn elections_outside_the_isr_are_unclean_without_a_recovery_state() {
    // An ELR member while the ISR is not empty, the ELR cleared and RECOVERING written:
    // unclean (only `tryElection`'s unclean path writes it). Without RECOVERING the same
    // record is the ELR path of a change that empties the ISR (a partition with an ELR
    // runs a metadata version whose unclean elections write it): clean.
    let c = choices(&[
        topic(),
        partition_with_elr(&[1, 2, 3], &[1], -1, &[2]),
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.eligible_leader_replicas = Some(vec![]);
            c.leader_recovery_state = 1;
        }),
    ]);
    assert_eq!(c, vec![Choice::Unclean]);
    let c = electing_2_from_elr(&[1, 2, 3], &[1], -1, &[2], &[]);
    assert_eq!(c, vec![Choice::Elr]);
    // Already recovering: a second unclean election writes no recovery state.
    let c = choices(&[
        topic(),
        partition(&[1, 2, 3], &[1], 1, 0),
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        }),
        change(|c| c.leader = -1),
        change(|c| {
            c.leader = 3;
            c.isr = Some(vec![3]);
        }),
        // 3 restarts cleanly: re-elected from the ISR, still recovering.
        change(|c| c.leader = -1),
        change(|c| c.leader = 3),
    ]);
    assert_eq!(c, vec![Choice::Unclean, Choice::Unclean, Choice::Isr]);
}

/// The records of Kafka's `PartitionChangeBuilderTest` (`testUncleanLeaderElection`,
/// `testEligibleLeaderReplicas_ElrCanBeElected`, `testEligibleLeaderReplicas_ElectLastKnownLeader`)
/// replayed on the registrations they start from.
#[test]
fn kafkas_partition_change_builder_cases() {
    let start = |isr: &[i32], elr: Option<Vec<i32>>, lke: Option<Vec<i32>>, leader: i32| {
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: tid(),
            replicas: vec![2, 1, 3],
            isr: isr.to_vec(),
            leader,
            leader_epoch: 100,
            partition_epoch: 200,
            eligible_leader_replicas: elr,
            last_known_elr: lke,
            ..Default::default()
        })
    };
    // OFFLINE_WITHOUT_ELR, unclean election: leader 1, ISR [1], RECOVERING.
    let h = history(&[
        topic(),
        start(&[3], None, None, -1),
        change(|c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
        }),
    ]);
    assert_eq!(h.elections[0].choice, Choice::Unclean);
    assert_eq!(h.elections[0].leader_epoch, 101);
    // OFFLINE_WITH_ELR (ISR empty, ELR [3], last known ELR [2]): the unclean election also
    // clears the ELR fields.
    let h = history(&[
        topic(),
        start(&[], Some(vec![3]), Some(vec![2]), -1),
        change(|c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
            c.eligible_leader_replicas = Some(vec![]);
            c.last_known_elr = Some(vec![]);
        }),
    ]);
    assert_eq!(h.elections[0].choice, Choice::Unclean);
    // ElrCanBeElected: ISR [1], ELR [3], replica 1 offline → leader 3, ISR [3], ELR [1].
    let h = history(&[
        topic(),
        start(&[1], Some(vec![3]), Some(vec![]), 1),
        change(|c| {
            c.isr = Some(vec![3]);
            c.eligible_leader_replicas = Some(vec![1]);
            c.leader = 3;
        }),
    ]);
    assert_eq!(h.elections[0].choice, Choice::Elr);
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!(
        (s.isr, s.elr, s.leader_epoch, s.partition_epoch),
        (vec![3], vec![1], 101, 201)
    );
    // ElectLastKnownLeader: ISR and ELR empty, last known ELR [1] → 1, an unclean choice.
    let h = history(&[
        topic(),
        start(&[], Some(vec![]), Some(vec![1]), -1),
        change(|c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
        }),
    ]);
    assert_eq!(h.elections[0].choice, Choice::Unclean);
    assert!(!h.elections[0].single_replica());
}
