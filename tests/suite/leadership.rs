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
    MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: tid(),
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        leader,
        leader_epoch: epoch,
        partition_epoch: epoch,
        ..Default::default()
    })
}

fn change(f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    let mut c = PartitionChange {
        partition_id: 0,
        topic_id: tid(),
        ..Default::default()
    };
    f(&mut c);
    MetaRecord::PartitionChange(c)
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
    let elr = MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: tid(),
        replicas: vec![1, 2],
        isr: vec![],
        leader: -1,
        leader_epoch: 4,
        partition_epoch: 4,
        eligible_leader_replicas: Some(vec![2]),
        last_known_elr: Some(vec![]),
        ..Default::default()
    });
    let c = choices(&[
        topic(),
        elr,
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.eligible_leader_replicas = Some(vec![]);
        }),
    ]);
    assert_eq!(c, vec![Choice::Elr]);
    // ISR [1] leaving as 2 (ELR) is chosen: the ELR kept non-empty shows the clean path.
    let elr = MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: tid(),
        replicas: vec![1, 2],
        isr: vec![1],
        leader: 1,
        leader_epoch: 4,
        partition_epoch: 4,
        eligible_leader_replicas: Some(vec![2]),
        last_known_elr: Some(vec![]),
        ..Default::default()
    });
    let c = choices(&[
        topic(),
        elr,
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.eligible_leader_replicas = Some(vec![1]);
        }),
    ]);
    assert_eq!(c, vec![Choice::Elr]);
}

#[test]
fn elections_outside_the_isr_are_unclean_without_a_recovery_state() {
    // An ELR member while the ISR is not empty, the ELR cleared: unclean.
    let elr = MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: tid(),
        replicas: vec![1, 2, 3],
        isr: vec![1],
        leader: -1,
        leader_epoch: 4,
        partition_epoch: 4,
        eligible_leader_replicas: Some(vec![2]),
        last_known_elr: Some(vec![]),
        ..Default::default()
    });
    let c = choices(&[
        topic(),
        elr,
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.eligible_leader_replicas = Some(vec![]);
        }),
    ]);
    assert_eq!(c, vec![Choice::Unclean]);
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

// ---------------------------------------------------------------------------------------
// the findings over broker data
// ---------------------------------------------------------------------------------------

/// The canonical unclean election: epoch 5 leader 1, the ISR shrinks to [1], broker 1
/// writes 100–119 and dies, broker 2 is elected with recovery state 1 and writes from 100
/// at epoch 6; broker 1's dir was captured before it rejoined.
fn metadata_log() -> MetadataLogBuilder {
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        broker(1),
        broker(2),
        topic(),
        partition(&[1, 2], &[1, 2], 1, 5),
    ]);
    m.advance(1000);
    m.batch(&[change(|c| c.isr = Some(vec![1]))]);
    m.advance(HOUR);
    m.batch(&[
        MetaRecord::FenceBroker { id: 1, epoch: 11 },
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        }),
    ]);
    m
}

/// 100 common offsets (10 batches of 10) at epoch 5, with a transaction of producer 77 at
/// 90–99 when `txn`.
fn common(txn: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(5);
    for i in 0..10 {
        let b = if txn && i == 9 {
            Batch::new(Producer::transactional(77, 0))
        } else {
            Batch::new(Producer::PLAIN)
        };
        p.append(b.values((0..10).map(|j| format!("v{i}-{j}"))));
    }
    p
}

fn canonical(root: &Path, txn: bool) {
    let mut b1 = common(txn);
    if txn {
        b1.append(
            Batch::new(Producer::transactional(77, 0)).values((0..15).map(|j| format!("t{j}"))),
        );
        b1.commit(Producer::transactional(77, 0), 3);
        b1.append(Batch::new(Producer::PLAIN).values((0..4).map(|j| format!("a{j}"))));
    } else {
        b1.append(Batch::new(Producer::PLAIN).values((0..20).map(|j| format!("a{j}"))));
    }
    assert_eq!(b1.next_offset(), 120);
    let mut b2 = common(txn);
    b2.advance_time(2 * HOUR);
    b2.set_leader_epoch(6);
    b2.append(Batch::new(Producer::PLAIN).values((0..10).map(|j| format!("b{j}"))));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(b1)
        .high_watermark("orders", 0, 115)
        .write(&root.join("broker-1"))
        .unwrap();
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(b2)
        .write(&root.join("broker-2"))
        .unwrap();
    metadata_log().write(&root.join("broker-2")).unwrap();
}

#[test]
fn the_canonical_unclean_election_costs_twenty_offsets_and_explains_the_divergence() {
    let d = tempfile::tempdir().unwrap();
    canonical(d.path(), false);
    let r = scan(d.path());
    let u = of_kind(&r, Kind::UncleanLeaderElection);
    assert_eq!(u.len(), 1, "{:#?}", r.findings);
    let u = u[0];
    assert_eq!(u.offset, Some(100));
    assert_eq!(u.severity, Severity::Error);
    let ev = &u.evidence;
    assert_eq!(ev["new_leader"], 2);
    assert_eq!(ev["new_leader_epoch"], 6);
    assert_eq!(ev["previous_leader_epoch"], 5);
    assert_eq!(ev["isr_before"], serde_json::json!([1]));
    assert_eq!(ev["start_offset"], 100);
    assert_eq!(ev["old_leader_copy"]["lost_offsets"], 20);
    assert_eq!(ev["old_leader_copy"]["lost_below_high_watermark"], 15);
    let div = of_kind(&r, Kind::ReplicaDivergence);
    assert!(!div.is_empty(), "{:#?}", r.findings);
    for f in div {
        assert_eq!(f.caused_by, vec![u.id.clone()], "{f:#?}");
    }
}

#[test]
fn a_commit_only_on_the_losing_replica_explains_the_hanging_transaction() {
    let d = tempfile::tempdir().unwrap();
    canonical(d.path(), true);
    let r = scan(d.path());
    let u = of_kind(&r, Kind::UncleanLeaderElection);
    assert_eq!(u.len(), 1, "{:#?}", r.findings);
    let hanging = of_kind(&r, Kind::HangingTransaction);
    let on_b2: Vec<_> = hanging
        .iter()
        .filter(|f| f.source.broker_id == Some(2))
        .collect();
    assert_eq!(on_b2.len(), 1, "{:#?}", r.findings);
    assert!(on_b2[0].caused_by.contains(&u[0].id), "{:#?}", on_b2[0]);
}

#[test]
fn an_election_visible_only_in_metadata_is_found_without_an_offset() {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .write(&d.path().join("broker-2"))
        .unwrap();
    metadata_log().write(&d.path().join("broker-2")).unwrap();
    let r = scan(d.path());
    let u = of_kind(&r, Kind::UncleanLeaderElection);
    assert_eq!(u.len(), 1, "{:#?}", r.findings);
    assert_eq!(u[0].offset, None);
    assert_eq!(u[0].severity, Severity::Warning);
    assert!(u[0].evidence["start_offset_unknown"].is_string());
    assert_eq!(u[0].evidence["metadata_offset"], 6);
}

#[test]
fn clean_history_raises_nothing() {
    let d = tempfile::tempdir().unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        broker(1),
        broker(2),
        broker(3),
        topic(),
        partition(&[1, 2, 3], &[1, 2, 3], 1, 0),
    ]);
    // ISR shrink and expand, controlled shutdown of the leader, a clean election, a
    // reassignment adding 4 and removing 1, the preferred leader back.
    m.batch(&[change(|c| c.isr = Some(vec![1, 2]))]);
    m.batch(&[change(|c| c.isr = Some(vec![1, 2, 3]))]);
    m.batch(&[
        MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
            broker_id: 1,
            broker_epoch: 11,
            in_controlled_shutdown: 1,
            ..Default::default()
        }),
        change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2, 3]);
        }),
    ]);
    m.batch(&[change(|c| {
        c.replicas = Some(vec![2, 3, 4, 1]);
        c.adding_replicas = Some(vec![4]);
        c.removing_replicas = Some(vec![1]);
    })]);
    m.batch(&[change(|c| c.isr = Some(vec![2, 3, 4]))]);
    m.batch(&[change(|c| {
        c.replicas = Some(vec![2, 3, 4]);
        c.adding_replicas = Some(vec![]);
        c.removing_replicas = Some(vec![]);
    })]);
    m.batch(&[change(|c| c.leader = 3)]);
    m.write(d.path()).unwrap();
    let r = scan(d.path());
    assert!(
        r.findings
            .iter()
            .all(|f| f.severity == Severity::Info || f.kind != Kind::UncleanLeaderElection),
        "{:#?}",
        r.findings
    );
    assert!(of_kind(&r, Kind::UncleanLeaderElection).is_empty());
}

#[test]
fn re_electing_the_only_replica_is_info() {
    let d = tempfile::tempdir().unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        broker(1),
        topic(),
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: tid(),
            replicas: vec![1],
            isr: vec![],
            leader: -1,
            leader_epoch: 3,
            partition_epoch: 3,
            eligible_leader_replicas: Some(vec![]),
            last_known_elr: Some(vec![1]),
            ..Default::default()
        }),
    ]);
    // The last-known-leader path (canElectLastKnownLeader): unclean by Kafka's builder.
    m.batch(&[change(|c| {
        c.leader = 1;
        c.isr = Some(vec![1]);
        c.leader_recovery_state = 1;
        c.last_known_elr = Some(vec![]);
    })]);
    m.write(d.path()).unwrap();
    let r = scan(d.path());
    let u = of_kind(&r, Kind::UncleanLeaderElection);
    assert_eq!(u.len(), 1, "{:#?}", r.findings);
    assert_eq!(u[0].severity, Severity::Info);
    assert_eq!(u[0].evidence["single_replica"], true);
}

#[test]
fn the_metadata_logs_own_findings() {
    let d = tempfile::tempdir().unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[topic(), partition(&[1, 2], &[1, 2], 1, 0)]);
    let mut bad = encode(&topic());
    bad.push(1);
    m.raw_batch(vec![vec![1, 99, 0, 0], vec![1, 99, 0, 0], bad]);
    m.batch(&[change(|c| c.leader = 2)]);
    m.batch(&[
        MetaRecord::BeginTransaction { name: None },
        change(|c| c.leader = 1),
    ]);
    m.write(d.path()).unwrap();
    let r = scan(d.path());
    assert_eq!(of_kind(&r, Kind::MetadataRecordUnknown).len(), 1);
    assert_eq!(
        of_kind(&r, Kind::MetadataRecordUnknown)[0].evidence["records"],
        2
    );
    let u = of_kind(&r, Kind::MetadataRecordUndecodable);
    assert_eq!((u.len(), u[0].offset), (1, Some(4)));
    let t = of_kind(&r, Kind::MetadataTransactionIncomplete);
    assert_eq!((t.len(), t[0].offset), (1, Some(6)));
    // The change after the undecodable record was still replayed; the open one was not.
    let inv = layout::discover(&[d.path().to_path_buf()]);
    let hs = leadership::load_all(&inv, None, 1 << 20);
    assert_eq!(hs[0].leader_epochs("orders", 0), vec![(0, 1), (1, 2)]);
}

#[test]
fn snapshot_and_log_replay_give_the_epochs_the_brokers_wrote() {
    let d = tempfile::tempdir().unwrap();
    // The snapshot at offset 50 holds the partition at epoch 8; the log goes on.
    let mut m = MetadataLogBuilder::new(T0).start_offset(40).snapshot(
        50,
        3,
        vec![
            broker(1),
            broker(2),
            topic(),
            partition(&[1, 2], &[1, 2], 1, 8),
        ],
    );
    // Records below the snapshot's end are in it already: never replayed twice.
    for _ in 0..10 {
        m.batch(&[change(|c| c.leader = 2)]);
    }
    assert_eq!(m.next_offset(), 50);
    m.batch(&[change(|c| c.leader = 2)]); // epoch 9
    m.batch(&[change(|c| c.leader = -1)]); // epoch 10, no leader
    m.batch(&[change(|c| c.leader = 1)]); // epoch 11
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(8);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(9);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(11);
    p.append(Batch::new(Producer::PLAIN).records(5));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p)
        .write(&d.path().join("b1"))
        .unwrap();
    m.write(&d.path().join("b1")).unwrap();
    let r = scan(d.path());
    assert!(
        of_kind(&r, Kind::LeaderEpochCheckpointMismatch).is_empty(),
        "{:#?}",
        r.findings
    );
    let inv = layout::discover(&[d.path().to_path_buf()]);
    let hs = leadership::load_all(&inv, None, 1 << 20);
    assert_eq!(hs.len(), 1);
    assert_eq!(
        hs[0].leader_epochs("orders", 0),
        vec![(8, 1), (9, 2), (11, 1)]
    );
    assert_eq!(
        hs[0].lineage(&r, "orders", 0),
        vec![(8, Some(0)), (9, Some(5)), (11, Some(10))]
    );

    // The checkpoint names epoch 10, which had no leader, though no batch carries it.
    std::fs::write(
        d.path().join("b1/orders-0/leader-epoch-checkpoint"),
        "0\n4\n8 0\n9 5\n10 7\n11 10\n",
    )
    .unwrap();
    let r = scan(d.path());
    let f = of_kind(&r, Kind::LeaderEpochCheckpointMismatch);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].evidence["from"], "leader-epoch-checkpoint");
    assert_eq!(
        (f[0].offset, &f[0].evidence["epoch"]),
        (Some(7), &serde_json::json!(10))
    );

    // A batch at epoch 10, which had no leader: the history never gave it.
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(8);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(10);
    p.append(Batch::new(Producer::PLAIN).records(5));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p)
        .write(&d.path().join("b1"))
        .unwrap();
    m.write(&d.path().join("b1")).unwrap();
    let r = scan(d.path());
    let f = of_kind(&r, Kind::LeaderEpochCheckpointMismatch);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(
        (f[0].offset, &f[0].evidence["epoch"]),
        (Some(5), &serde_json::json!(10))
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

#[test]
fn the_history_command_prints_the_timeline_as_a_table_and_as_json() {
    let d = tempfile::tempdir().unwrap();
    canonical(d.path(), false);
    let out = assert_cmd::Command::cargo_bin("klogscan")
        .unwrap()
        .args(["history", "--topic", "orders"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("orders-0 (topic id"), "{text}");
    let unclean: Vec<&str> = text.lines().filter(|l| l.ends_with("UNCLEAN")).collect();
    assert_eq!(unclean.len(), 1, "{text}");
    assert!(unclean[0].contains("[2]"), "{text}");

    let out = assert_cmd::Command::cargo_bin("klogscan")
        .unwrap()
        .args(["history", "--format", "json", "--partition", "0"])
        .arg(d.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = &v["clusters"][0]["partitions"][0]["rows"];
    let epochs: Vec<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["leader_epoch"].as_i64().unwrap())
        .collect();
    assert_eq!(epochs, vec![5, 5, 6]);
    assert_eq!(rows[2]["election"], "unclean");
    assert_eq!(rows[2]["recovery_state"], 1);

    // A time window before the election leaves it out; no metadata log is exit 2.
    let out = assert_cmd::Command::cargo_bin("klogscan")
        .unwrap()
        .args(["history", "--format", "json", "--until"])
        .arg((T0 + HOUR / 2).to_string())
        .arg(d.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["clusters"][0]["partitions"][0]["rows"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let empty = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("klogscan")
        .unwrap()
        .arg("history")
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
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

#[test]
fn another_incarnation_of_the_topic_is_not_judged_against_the_history() {
    let d = tempfile::tempdir().unwrap();
    let other = [42u8; 16];
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        broker(1),
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: other,
        },
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: other,
            replicas: vec![1],
            isr: vec![1],
            leader: 1,
            leader_epoch: 8,
            partition_epoch: 8,
            ..Default::default()
        }),
        MetaRecord::PartitionChange(PartitionChange {
            partition_id: 0,
            topic_id: other,
            leader: -1,
            ..Default::default()
        }),
        MetaRecord::PartitionChange(PartitionChange {
            partition_id: 0,
            topic_id: other,
            leader: 1,
            ..Default::default()
        }),
    ]);
    // The data directory's partition.metadata names topic_id_for("orders"), not `other`.
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(8);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(9);
    p.append(Batch::new(Producer::PLAIN).records(5));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p)
        .write(&d.path().join("b1"))
        .unwrap();
    m.write(&d.path().join("b1")).unwrap();
    let r = scan(d.path());
    assert!(
        of_kind(&r, Kind::LeaderEpochCheckpointMismatch).is_empty(),
        "{:#?}",
        r.findings
    );
}

#[test]
// `ScanOptions` is built by field assignment, as its `non_exhaustive` form requires.
#[allow(clippy::field_reassign_with_default)]
fn the_html_report_draws_the_leader_epochs_beside_the_producers() {
    let d = tempfile::tempdir().unwrap();
    canonical(d.path(), false);
    let mut o = ScanOptions::default();
    o.collect_timelines = true;
    let r = klogscan::pipeline::scan(&[d.path().to_path_buf()], &o);
    let timelines = klogscan::request::timelines(&r);
    let mut out = Vec::new();
    klogscan::report::html::write_scan(&r, &timelines, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(html.contains("class=\"lane epochs\""), "no epochs lane");
    assert!(
        html.contains("data-epoch=\"6\" data-first=\"100\""),
        "epoch 6 from 100"
    );
    assert!(html.contains("data-kind=\"unclean_leader_election\" data-offset=\"100\""));
}
