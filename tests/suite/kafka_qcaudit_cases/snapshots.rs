//! The records of `QuorumControllerTest.testSnapshotSaveAndLoad` in the log and in a
//! snapshot, a result split over batches (`testAppendRecords`), and the snapshot and log
//! whose first record the controllers refuse (`testFatalMetadataErrorDuringSnapshotLoading`,
//! `testFatalMetadataErrorDuringLogLoading`).

use super::{FOO, nodes};
use crate::kafka_electaudit_cases::refused;
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, change, metadata_version, partition, register, topic,
};
use klogscan::cluster::leadership::ClusterHistory;
use klogscan::cluster::leadership::replay::BrokerChange;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{MetaRecord, PartitionRecord};

fn controller(id: i32) -> MetaRecord {
    MetaRecord::RegisterController {
        controller_id: id,
        incarnation_id: [id as u8 + 40; 16],
    }
}

/// `generateTestRecords` of `testSnapshotSaveAndLoad`, one controller write each (offset 0
/// the `LEADER_CHANGE`): the bootstrap transaction at 3.7-IV0 (`end`: with its
/// `EndTransactionRecord`), controllers 0–2 registered (`RegisterControllerRecord`), brokers
/// 0–3 registered fenced at the offsets of their records, 0–2 unfenced, `foo` created with
/// its two partitions assigned by hand, a producer id block for broker 0. The broker epochs.
fn saved_records(m: &mut MetaLog, end: bool) -> Vec<i64> {
    let mut boot = vec![
        MetaRecord::BeginTransaction {
            name: Some("Bootstrap records".into()),
        },
        metadata_version(15),
        MetaRecord::ZkMigrationState { state: 0 },
    ];
    if end {
        boot.push(MetaRecord::EndTransaction);
    }
    m.batch(&boot);
    for id in 0..3 {
        m.batch(&[controller(id)]);
    }
    let epochs: Vec<i64> = (0..4)
        .map(|id| {
            let e = m.p.next_offset();
            m.batch(&[register(id, e, id as u8 + 1, true)]);
            e
        })
        .collect();
    for id in 0..3 {
        m.batch(&[broker_change(id, epochs[id as usize], -1, 0)]);
    }
    m.batch(&[
        topic(FOO),
        partition(FOO, 0, &[0, 1, 2], &[0, 1, 2], (0, 0, 0)),
        partition(FOO, 1, &[1, 2, 0], &[1, 2, 0], (1, 0, 0)),
    ]);
    m.batch(&[MetaRecord::ProducerIds {
        broker_id: 0,
        broker_epoch: epochs[0],
        next_producer_id: 1000,
    }]);
    epochs
}

/// The image at the end of [`saved_records`] as `MetadataImage.write` writes it: features,
/// cluster (brokers with their fencing, controllers), topics, producer ids.
fn image(epochs: &[i64]) -> Vec<MetaRecord> {
    let mut r = vec![
        metadata_version(15),
        MetaRecord::ZkMigrationState { state: 0 },
    ];
    r.extend((0..4).map(|id| register(id, epochs[id as usize], id as u8 + 1, id == 3)));
    r.extend((0..3).map(controller));
    r.extend([
        topic(FOO),
        partition(FOO, 0, &[0, 1, 2], &[0, 1, 2], (0, 0, 0)),
        partition(FOO, 1, &[1, 2, 0], &[1, 2, 0], (1, 0, 0)),
        MetaRecord::ProducerIds {
            broker_id: -1,
            broker_epoch: -1,
            next_producer_id: 1000,
        },
    ]);
    r
}

/// Whether broker `id` ends fenced in `h`.
fn fenced(h: &ClusterHistory, id: i32) -> bool {
    let last = (h.history.brokers.iter()).rfind(|e| e.broker == id);
    match last.map(|e| &e.change) {
        Some(BrokerChange::Registered { fenced, .. }) => *fenced,
        Some(BrokerChange::Fenced) => true,
        Some(BrokerChange::Unfenced) => false,
        other => panic!("broker {id}: {other:?}"),
    }
}

/// `testSnapshotSaveAndLoad`: the controller's records (`generateTestRecords`) with the
/// snapshot of their image at their end, once with the log holding them all (the history
/// from offset 0) and once with the log cleaned below the snapshot (loaded from it): every
/// record decodes (`RegisterControllerRecord`, `ZkMigrationStateRecord` included), the
/// history is at 3.7-IV0 with `foo-0` led by 0 and `foo-1` by 1 at leader epoch 0 on their
/// whole replica sets, brokers 0–2 unfenced and 3 still fenced; nothing at warning. Near
/// miss: the bootstrap transaction's `EndTransactionRecord` lost — every later record is
/// inside the open transaction, applied by no broker: no `metadata.version`, no `foo`, one
/// `metadata_transaction_incomplete` (info: at 3.7-IV0 the next controller aborts it).
#[test]
fn the_saved_records_and_their_snapshot_load_alike() {
    for cleaned in [false, true] {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        let epochs = saved_records(&mut m, true);
        let end = m.p.next_offset();
        assert_eq!(end, 19);
        if cleaned {
            m = MetaLog::starting_at(T0 - 30 * SEC, end);
        }
        m.snapshot_at(end, image(&epochs));
        m.batch(&[MetaRecord::NoOp]);
        let b = nodes(&m, &[0, 1, 2, 3]);
        let v = b.check();
        v.assert_no_alarm();
        let h = history_of(&b);
        assert_eq!(h.log.snapshot.is_some(), cleaned);
        assert!(h.log.unknown.is_empty() && h.log.undecodable.is_empty());
        assert_eq!(h.metadata_version(), Some(15));
        for (n, leader, isr) in [(0, 0, [0, 1, 2]), (1, 1, [1, 2, 0])] {
            let s = h.timeline(FOO, n).unwrap().current().unwrap().clone();
            assert_eq!((s.leader, s.leader_epoch, s.isr), (leader, 0, isr.to_vec()));
            assert_eq!(s.from_snapshot, cleaned);
        }
        let states: Vec<bool> = (0..4).map(|id| fenced(&h, id)).collect();
        assert_eq!(states, [false, false, false, true], "{cleaned}");
    }
    // near miss
    let mut m = MetaLog::new(T0 - 60 * SEC);
    saved_records(&mut m, false);
    let b = nodes(&m, &[0, 1, 2, 3]);
    let v = b.check();
    let txn = of_kind(&v, Kind::MetadataTransactionIncomplete);
    for r in &txn {
        assert_eq!(r.len(), 1, "{}", all_lines(&v));
        assert_eq!((r[0].severity, r[0].offset), (Severity::Info, Some(1)));
        assert_eq!(r[0].evidence["records"], 16);
    }
    let h = history_of(&b);
    assert_eq!(h.metadata_version(), None);
    assert!(h.timeline(FOO, 0).is_none());
}

/// `PartitionRecord`'s defaults: partition 0 of the zero topic id, as the tests write it.
fn orphan() -> MetaRecord {
    MetaRecord::Partition(PartitionRecord::default())
}

/// A `TopicRecord` of the zero topic id.
fn zero_topic() -> MetaRecord {
    MetaRecord::Topic {
        name: "bar".into(),
        topic_id: [0; 16],
    }
}

/// `testFatalMetadataErrorDuringSnapshotLoading` (a snapshot whose one record is that
/// `PartitionRecord`, the log continuing from its end) and
/// `testFatalMetadataErrorDuringLogLoading` (the log's first record): every controller
/// loading it throws (`ReplicationControlManager.replay`: "no topic with that ID was
/// found") and its fault handler is fatal — one `metadata_record_rejected` naming the
/// `PartitionRecord`, the topic not live, the partition absent from the history. Near miss:
/// a `TopicRecord` of that id before it (in the snapshot, in the log): the partition is
/// created, nothing is refused.
#[test]
fn a_partition_record_of_no_topic_stops_the_controllers_from_a_snapshot_or_the_log() {
    for with_topic in [false, true] {
        let first: Vec<MetaRecord> = if with_topic {
            vec![zero_topic(), orphan()]
        } else {
            vec![orphan()]
        };
        for in_snapshot in [true, false] {
            let mut m = if in_snapshot {
                let mut m = MetaLog::starting_at(T0 - 60 * SEC, 5);
                m.snapshot_at(5, [vec![metadata_version(21)], first.clone()].concat());
                m
            } else {
                let mut m = MetaLog::new(T0 - 60 * SEC);
                m.batch(&first);
                m
            };
            m.batch(&[MetaRecord::NoOp]);
            let b = nodes(&m, &[1]);
            let v = b.check();
            let h = history_of(&b);
            let created = h.history.partitions.values().any(|t| t.topic_id == [0; 16]);
            assert_eq!(created, with_topic, "{in_snapshot}");
            if with_topic {
                let none = of_kind(&v, Kind::MetadataRecordRejected);
                assert!(none.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
                continue;
            }
            let f = refused(&v, "PartitionRecord");
            assert_eq!(f.severity, Severity::Error);
            assert_eq!(f.evidence["topic_live"], false, "{}", all_lines(&v));
            assert_eq!(f.evidence["partition"], 0);
            if !in_snapshot {
                assert_eq!(f.offset, Some(1));
            }
        }
    }
}

/// `testAppendRecords`: a result that need not be atomic is split into batches of at most
/// `maxRecordsPerBatch` records (`QuorumController.appendRecords`), each committed on its
/// own; below 3.6-IV1 nothing wraps them in a transaction. `foo`'s creation with five
/// partitions in batches of two: when all three batches are in the log, the history holds
/// the five partitions; when the controller failed over after the first (the others never
/// committed), `foo-0` alone — what every node applied — and nothing is reported. Near
/// miss: a `PartitionChangeRecord` of `foo-3`, which the lost batch would have created: the
/// controller never writes it (its image has no such partition), and replaying it throws
/// ("no partition with that id was found"): one `metadata_record_rejected`.
#[test]
fn a_result_split_over_batches_applies_what_was_committed() {
    let parts: Vec<MetaRecord> = (0..5)
        .map(|n| partition(FOO, n, &[1], &[1], (1, 0, 0)))
        .collect();
    for (batches, change_3) in [(3, false), (1, false), (1, true)] {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        m.batch(&[metadata_version(11)]);
        let e = m.p.next_offset();
        m.batch(&[register(1, e, 1, true)]);
        m.batch(&[broker_change(1, e, -1, 0)]);
        let mut records = vec![topic(FOO)];
        records.extend(parts.iter().cloned());
        for chunk in records.chunks(2).take(batches) {
            m.batch(chunk);
        }
        if batches < 3 {
            m.elect();
            m.batch(&[MetaRecord::NoOp]);
        }
        if change_3 {
            m.batch(&[change(FOO, 3, |c| c.isr = Some(vec![1]))]);
        }
        let b = nodes(&m, &[1]);
        let v = b.check();
        let h = history_of(&b);
        let held: Vec<i32> = (0..5).filter(|n| h.timeline(FOO, *n).is_some()).collect();
        let want: Vec<i32> = if batches == 3 {
            (0..5).collect()
        } else {
            vec![0]
        };
        assert_eq!(held, want);
        if !change_3 {
            v.assert_no_alarm();
            continue;
        }
        let f = refused(&v, "PartitionChangeRecord");
        assert_eq!(
            (&f.evidence["partition"], &f.evidence["topic_live"]),
            (&3.into(), &true.into())
        );
    }
}
