//! Replica directories `PartitionRegistration` refuses (KIP-858): a `PartitionRecord` whose
//! `Directories` list is not one per replica (`checkDirectories`:
//! `InvalidReplicaDirectoriesException`), a `PartitionChangeRecord` that sets replicas and a
//! directory list of another length, or leaves assigned directories of another number than
//! the replicas (`merge`, then the constructor: `IllegalArgumentException`). A node's replay
//! throws on it: a controller stops (its replay of a committed record is fatal,
//! `QuorumController`; the metadata loader's fault handler is fatal with the controller role,
//! `SharedServer`), a broker logs it and goes on without the record
//! (`MetadataBatchLoader` catches each record's replay). No controller writes one
//! (`PartitionChangeBuilder` sets one directory per replica): `metadata_record_rejected`.

use super::{all_lines, at, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, broker_epoch_at_start, change, metadata_version, partition,
    register, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, directory_uuid, replica};
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;

/// Broker `id`'s `data` log dir id.
fn dir(id: i32) -> [u8; 16] {
    directory_uuid(id, "data")
}

/// At 3.7-IV2 (records v1 with `Directories`, registrations v3 with `LogDirs`): brokers 1–3
/// registered and unfenced, `orders-0` on all three led by 1 with the directories
/// `dirs`, then (when given) a `PartitionChangeRecord` setting the directories `change`.
fn log_with(dirs: Vec<[u8; 16]>, change_dirs: Option<Vec<[u8; 16]>>) -> MetaLog {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(17)]);
    for id in 1..=3 {
        let mut r = register(id, broker_epoch_at_start(id), id as u8, true);
        if let MetaRecord::RegisterBroker(b) = &mut r {
            b.log_dirs = vec![dir(id)];
        }
        m.batch(&[at(&r, 3)]);
    }
    m.batch(
        &(1..=3)
            .map(|id| broker_change(id, broker_epoch_at_start(id), -1, 0))
            .collect::<Vec<_>>(),
    );
    let mut p = partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0));
    if let MetaRecord::Partition(p) = &mut p {
        p.directories = dirs;
    }
    m.at(T0 - 30 * SEC);
    m.batch(&[topic("orders"), at(&p, 1)]);
    if let Some(d) = change_dirs {
        m.batch(&[at(&change("orders", 0, |c| c.directories = Some(d)), 1)]);
    }
    m
}

/// Brokers 1–3, each with its copy of `m` and of `orders-0`.
fn cluster(m: &MetaLog) -> Brokers {
    crate::kafka_imgaudit_cases::brokers_with(m, &[1, 2, 3], |_| {
        vec![replica("orders", 0, &[(0, 2)])]
    })
}

/// A `PartitionRecord` with two directories for three replicas: one `metadata_record_rejected`
/// error in scan, verify and the merge, naming the record, the counts and the exception; the
/// partition is not in the history (a broker skipped the record). Near misses: one directory
/// per replica, none (`MIGRATING`, below 3.7-IV2's writers), and three zero ids
/// (`DirectoryId.MIGRATING` each) are taken, and nothing is refused.
#[test]
fn a_partition_record_with_a_directory_list_not_one_per_replica_is_refused() {
    let b = cluster(&log_with(vec![dir(1), dir(2)], None));
    let v = b.check();
    let refused = of_kind(&v, Kind::MetadataRecordRejected);
    for r in &refused {
        assert_eq!(r.len(), 1, "{}", all_lines(&v));
    }
    let f = refused[0][0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["record"], "PartitionRecord");
    assert_eq!(f.evidence["topic"], "orders");
    assert_eq!(
        (&f.evidence["replicas"], &f.evidence["directories"]),
        (&serde_json::json!(3), &serde_json::json!(2))
    );
    assert_eq!(
        f.evidence["java_exception"],
        "InvalidReplicaDirectoriesException"
    );
    assert!(f.message.contains("orders-0"), "{}", f.message);
    assert!(history_of(&b).timeline("orders", 0).is_none());
    // near misses
    for dirs in [vec![dir(1), dir(2), dir(3)], vec![], vec![[0; 16]; 3]] {
        let b = cluster(&log_with(dirs.clone(), None));
        let v = b.check();
        assert!(
            of_kind(&v, Kind::MetadataRecordRejected)
                .iter()
                .all(|r| r.is_empty()),
            "{dirs:?}: {}",
            all_lines(&v)
        );
        assert!(history_of(&b).timeline("orders", 0).is_some());
    }
}

/// A `PartitionChangeRecord` leaving `orders-0`'s three replicas with two assigned
/// directories (`merge` keeps the replicas, takes the list, and the constructor throws
/// `IllegalArgumentException`): refused, and the partition's state stays the record's
/// before it. Near misses: a change to three directories is applied (broker 2's replica
/// moved), and a change to no directory (read as `MIGRATING`) is applied.
#[test]
fn a_partition_change_leaving_fewer_directories_than_replicas_is_refused() {
    let all = vec![dir(1), dir(2), dir(3)];
    let b = cluster(&log_with(all.clone(), Some(vec![dir(1), dir(2)])));
    let v = b.check();
    let refused = of_kind(&v, Kind::MetadataRecordRejected);
    for r in &refused {
        assert_eq!(r.len(), 1, "{}", all_lines(&v));
    }
    let f = refused[0][0];
    assert_eq!(f.evidence["record"], "PartitionChangeRecord");
    assert_eq!(f.evidence["java_exception"], "IllegalArgumentException");
    let h = history_of(&b);
    let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
    assert_eq!(s.partition_epoch, 0, "the change is not applied");
    assert_eq!(s.directory(3), Some(dir(3)));
    // near misses
    let moved = directory_uuid(2, "data-2");
    for d in [vec![dir(1), moved, dir(3)], vec![]] {
        let b = cluster(&log_with(all.clone(), Some(d.clone())));
        let v = b.check();
        assert!(
            of_kind(&v, Kind::MetadataRecordRejected)
                .iter()
                .all(|r| r.is_empty()),
            "{d:?}: {}",
            all_lines(&v)
        );
        let h = history_of(&b);
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        assert_eq!(s.partition_epoch, 1, "{d:?}");
    }
}
