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
        h.history.orphans.len(),
        1,
        "a change after the removal is not applied"
    );
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

/// The records below the newest snapshot are committed history the metadata log keeps
/// until its segments go (`KafkaMetadataLog`): a log that still holds every record from
/// offset 0 is replayed from there, so an election before the snapshot is in the history
/// (it once started at the snapshot, whose state sums the election up). A log whose
/// segments begin at the snapshot starts the history there (the twin).
#[test]
fn the_history_starts_at_the_first_record_the_log_holds() {
    for (start, steps, elections) in [(0, 2, 1), (5, 1, 0)] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(1_700_000_000_000)
            .start_offset(start)
            .snapshot(
                5,
                1,
                vec![
                    topic(),
                    broker(1),
                    broker(2),
                    partition(&[1, 2], &[1, 2], 2, 1),
                ],
            );
        if start == 0 {
            b.batch(&[topic(), broker(1), broker(2)]);
            b.batch(&[partition(&[1, 2], &[1, 2], 1, 0)]);
            b.batch(&[change(|c| c.leader = 2)]);
        }
        b.batch(&[broker(3)]);
        b.write(d.path()).unwrap();
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let h = leadership::load_all(&inv, None, 64 << 20);
        assert_eq!(h.len(), 1);
        let t = h[0].timeline("orders", 0).expect("orders-0's timeline");
        assert_eq!(t.steps.len(), steps, "log from {start}: {:#?}", t.steps);
        assert_eq!(h[0].elections.len(), elections, "log from {start}");
        assert_eq!(h[0].log.snapshot.is_some(), start != 0, "log from {start}");
        // Either way the current state is the same.
        let now = t.current().unwrap();
        assert_eq!((now.leader, now.leader_epoch), (2, 1), "log from {start}");
    }
}

/// Two copies of one cluster's metadata log: the one a former quorum leader left, longer
/// but ending at an older KRaft epoch (a tail never committed), and a follower's shorter one
/// at the newer epoch. KRaft orders logs by epoch first (`OffsetAndEpoch`), so the history
/// is the newer copy's; at the same epoch the longer copy is (the twin).
#[test]
fn the_newer_epoch_wins_over_a_longer_stale_copy() {
    for (newer_epoch, want) in [(true, "follower"), (false, "old-leader")] {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, node: i32, tail: &dyn Fn(&mut MetadataLogBuilder)| {
            let dir = d.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("meta.properties"),
                format!("version=1\nnode.id={node}\ncluster.id=c1\n"),
            )
            .unwrap();
            let mut b = MetadataLogBuilder::new(1_700_000_000_000);
            b.batch(&[topic(), broker(1), broker(2)]);
            b.batch(&[partition(&[1, 2], &[1, 2], 1, 0)]);
            tail(&mut b);
            b.write(&dir).unwrap();
        };
        write("old-leader", 1, &|b| {
            b.batch(&[change(|c| c.leader = 2)]);
            b.batch(&[change(|c| c.leader = 1)]);
        });
        write("follower", 2, &|b| {
            if newer_epoch {
                b.raft_epoch(2);
            }
            b.batch(&[broker(3)]);
        });
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let h = leadership::load_all(&inv, None, 64 << 20);
        assert_eq!(h.len(), 1);
        assert!(
            h[0].log.path.contains(&format!("/{want}/")),
            "{}: {}",
            newer_epoch,
            h[0].log.path
        );
    }
}

/// The last-known-leader election (`PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElectLastKnownLeader`:
/// ISR and ELR empty, the one last known ELR member elected) is unclean, but it is not the
/// `electAnyLeader` path `unclean.leader.election.enable` governs: the finding names its
/// path and gives no advice about that setting; an election outside the ISR does (the twin).
#[test]
fn the_last_known_leader_election_names_its_path() {
    let start = |isr: &[i32], elr: Vec<i32>, lke: Vec<i32>| {
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: tid(),
            replicas: vec![2, 1, 3],
            isr: isr.to_vec(),
            leader: -1,
            leader_epoch: 100,
            partition_epoch: 200,
            eligible_leader_replicas: Some(elr),
            last_known_elr: Some(lke),
            ..Default::default()
        })
    };
    for (isr, lke, path) in [
        (vec![], vec![1], "last_known_leader"),
        (vec![3], vec![], "outside_isr"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(1_700_000_000_000);
        b.batch(&[topic(), broker(1), broker(2), broker(3)]);
        b.batch(&[start(&isr, vec![], lke)]);
        b.batch(&[change(|c| {
            c.isr = Some(vec![1]);
            c.leader = 1;
            c.leader_recovery_state = 1;
        })]);
        b.write(d.path()).unwrap();
        let r = scan(d.path());
        let f = of_kind(&r, Kind::UncleanLeaderElection);
        assert_eq!(f.len(), 1, "{path}: {:#?}", r.findings);
        assert_eq!(f[0].evidence["path"], path);
        let advice = f[0]
            .remediation
            .as_deref()
            .unwrap_or("")
            .contains("keep unclean.leader.election.enable=false");
        assert_eq!(advice, path == "outside_isr", "{:?}", f[0].remediation);
    }
}

/// An unclean election of one incarnation of a topic measures nothing on the replicas of
/// another (the topic deleted and created again under its name: `partition.metadata`
/// names the new id): no lost offsets, no offset taken from them. The same replicas of the
/// election's own incarnation measure the loss (the twin: an error with lost offsets).
#[test]
fn an_election_measures_only_replicas_of_its_incarnation() {
    for other in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let brokers = klogscan::testkit::brokers::unclean_election(d.path()).unwrap();
        if other {
            let id = klogscan::read::format::checkpoint::encode_uuid(&[9; 16]);
            for ld in brokers.iter().flatten() {
                std::fs::write(
                    ld.join("orders-0").join("partition.metadata"),
                    format!("version: 0\ntopic_id: {id}\n"),
                )
                .unwrap();
            }
        }
        let all: Vec<std::path::PathBuf> = brokers.iter().flatten().cloned().collect();
        let r = klogscan::pipeline::scan(&all, &ScanOptions::default());
        let f = of_kind(&r, Kind::UncleanLeaderElection);
        assert_eq!(f.len(), 1, "{:#?}", r.findings);
        let measured = !f[0].evidence["old_leader_copy"].is_null();
        assert_eq!(measured, !other, "{:#?}", f[0]);
        assert_eq!(f[0].severity == Severity::Error, !other, "{:#?}", f[0]);
        assert_eq!(f[0].offset.is_some(), !other, "{:#?}", f[0]);
    }
}

/// A metadata batch that fails its CRC is a record the replay cannot apply (the raft
/// client validates every batch): here the ISR expansion to [1, 2, 3], so the preferred
/// election of broker 3 that follows looks outside the ISR. The finding says the history
/// misses a record before it (`history_gap_before`) and stays a warning; the intact log
/// shows a clean election (the twin).
#[test]
fn an_election_after_a_gap_in_the_history_is_qualified() {
    for damaged in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(1_700_000_000_000);
        b.batch(&[topic(), broker(1), broker(2), broker(3)]);
        b.batch(&[partition(&[3, 1, 2], &[1, 2], 1, 5)]);
        b.batch(&[change(|c| c.isr = Some(vec![1, 2, 3]))]);
        b.batch(&[change(|c| c.leader = 3)]);
        let part = b.write(d.path()).unwrap();
        if damaged {
            let seg = part.join("00000000000000000000.log");
            let mut bytes = std::fs::read(&seg).unwrap();
            let len = |at: usize| {
                u32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize + 12
            };
            let third = len(0) + len(len(0));
            bytes[third + 70] ^= 0x01;
            std::fs::write(&seg, bytes).unwrap();
        }
        let r = scan(d.path());
        let f = of_kind(&r, Kind::UncleanLeaderElection);
        if !damaged {
            assert!(f.is_empty(), "{f:#?}");
            continue;
        }
        assert_eq!(f.len(), 1, "{:#?}", r.findings);
        assert!(f[0].evidence["history_gap_before"].is_i64(), "{:#?}", f[0]);
        assert_ne!(f[0].severity, Severity::Error);
        assert!(f[0].message.contains("may be stale"), "{}", f[0].message);
    }
}

/// `PartitionReassignmentRevertTest.testIsrSpecialCase`: cancelling a reassignment whose ISR
/// holds only replicas it was adding falls back to the first original replica alone — an
/// unclean election (`unclean()`, which the cancellation accepts only with
/// unclean.leader.election.enable) that writes no RECOVERING. Cancelling while an original
/// replica is still in the ISR elects it cleanly (the twin).
#[test]
fn a_reassignment_revert_to_a_replica_outside_the_isr_is_unclean() {
    let mv = MetaRecord::FeatureLevel {
        name: "metadata.version".into(),
        feature_level: 20,
    };
    for (isr_after_fencing, choice) in [(vec![4, 5], Choice::Unclean), (vec![1, 4, 5], Choice::Isr)]
    {
        let h = history(&[
            mv.clone(),
            topic(),
            partition(&[1, 2, 3], &[1, 2, 3], 1, 10),
            change(|c| {
                c.replicas = Some(vec![4, 5, 6, 1, 2, 3]);
                c.removing_replicas = Some(vec![1, 2, 3]);
                c.adding_replicas = Some(vec![4, 5, 6]);
            }),
            change(|c| c.isr = Some(vec![1, 2, 3, 4, 5])),
            change(|c| {
                c.leader = 4;
                c.isr = Some(isr_after_fencing.clone());
            }),
            change(|c| {
                c.leader = 1;
                c.isr = Some(vec![1]);
                c.replicas = Some(vec![1, 2, 3]);
                c.removing_replicas = Some(vec![]);
                c.adding_replicas = Some(vec![]);
            }),
        ]);
        let last = h.elections.last().expect("elections");
        assert_eq!(
            (last.leader, last.choice),
            (1, choice),
            "{isr_after_fencing:?}"
        );
    }
}

/// The `unclean.leader.election.enable` an election's evidence names is the one the
/// controller resolves: a topic's value does not survive the topic's removal
/// (`deleteTopicConfigs`: the re-created topic inherits nothing), and without a topic value
/// the cluster default applies, not whichever broker's value was written last.
#[test]
fn the_unclean_config_is_resolved_as_the_controller_resolves_it() {
    use klogscan::read::format::metadata::RESOURCE_BROKER;
    let config = |resource_type, resource: &str, value: &str| MetaRecord::Config {
        resource_type,
        resource_name: resource.into(),
        name: "unclean.leader.election.enable".into(),
        value: Some(value.into()),
    };
    for (recreated, want) in [(false, "true (topic)"), (true, "true (cluster default)")] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(1_700_000_000_000);
        b.batch(&[broker(1), broker(2), broker(3), topic()]);
        b.batch(&[config(RESOURCE_TOPIC, "orders", "true")]);
        b.batch(&[config(RESOURCE_BROKER, "", "true")]);
        b.batch(&[config(RESOURCE_BROKER, "3", "false")]);
        if recreated {
            b.batch(&[MetaRecord::RemoveTopic { topic_id: tid() }]);
            b.batch(&[topic()]);
        }
        b.batch(&[partition(&[1, 2], &[1], 1, 5)]);
        b.batch(&[change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        })]);
        b.write(d.path()).unwrap();
        let r = scan(d.path());
        let f = of_kind(&r, Kind::UncleanLeaderElection);
        assert_eq!(f.len(), 1, "{:#?}", r.findings);
        assert_eq!(
            f[0].evidence["unclean_leader_election_enable"], want,
            "recreated {recreated}"
        );
    }
}

/// The old leader truncates where `getOffsetTruncationState` says when it follows the new
/// one, which is below the new epoch's start when their lineages fork earlier: broker 1
/// holds epoch 3 up to 15 and epoch 5 to 25; broker 2, elected uncleanly at epoch 6, holds
/// epoch 3 up to 18 and epoch 6 from there. Broker 1 asks for epoch 5's end, gets epoch 3
/// ending at 18, and its own epoch 3 ends at 15: it truncates to 15 — 10 offsets lost, not
/// the 7 from the new epoch's start. Without the new leader's replica the count starts at
/// the new epoch (the twin).
#[test]
fn the_loss_starts_where_the_old_leader_truncates() {
    for with_new_leader in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let copy = |epochs: &[(i32, usize)]| {
            let mut p = PartitionBuilder::new("orders", 0).start_time(1_700_000_000_000);
            for &(e, n) in epochs {
                p.set_leader_epoch(e);
                for _ in 0..n {
                    p.append(Batch::new(Producer::PLAIN).records(1));
                }
            }
            p
        };
        LogDirBuilder::new(1)
            .cluster_id("c1")
            .partition(copy(&[(3, 15), (5, 10)]))
            .write(&d.path().join("broker-1"))
            .unwrap();
        let mut b2 = LogDirBuilder::new(2).cluster_id("c1");
        if with_new_leader {
            b2 = b2.partition(copy(&[(3, 18), (6, 12)]));
        }
        let ld2 = d.path().join("broker-2");
        b2.write(&ld2).unwrap();
        let mut m = MetadataLogBuilder::new(1_700_000_000_000);
        m.batch(&[
            broker(1),
            broker(2),
            topic(),
            partition(&[1, 2], &[1], 1, 5),
        ]);
        m.batch(&[change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        })]);
        m.write(&ld2).unwrap();
        let r = klogscan::pipeline::scan(
            &[d.path().join("broker-1"), ld2.clone()],
            &ScanOptions::default(),
        );
        let f = of_kind(&r, Kind::UncleanLeaderElection);
        assert_eq!(f.len(), 1, "{:#?}", r.findings);
        let old = &f[0].evidence["old_leader_copy"];
        if with_new_leader {
            assert_eq!(old["truncates_to"], 15, "{old:#}");
            assert_eq!(old["lost_offsets"], 10, "{old:#}");
        } else {
            assert!(old.get("truncates_to").is_none(), "{old:#}");
        }
    }
}
