//! The record versions each `metadata.version` writes (`MetadataVersionTest`,
//! `PartitionRegistrationTest.testPartitionRegistrationToRecord`), the tagged fields of a later
//! version inside an earlier version's record, and a record version the reader's table lacks.

use super::{
    all_lines, at, brokers_with, dump, dumped_versions, history_of, of_kind, relabel, segment_of,
};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, broker_epoch_at_start, change, metadata_version, partition,
    register, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, directory_uuid, replica};
use klogscan::cluster::leadership::elections::Choice;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;

/// `MetadataVersion.registerBrokerRecordVersion` at feature level `level`.
fn register_version(level: i16) -> i16 {
    match level {
        17.. => 3,
        8.. => 2,
        7.. => 1,
        _ => 0,
    }
}

/// `MetadataVersion.partitionRecordVersion` (and `partitionChangeRecordVersion`, the same)
/// at feature level `level`: 2 with ELR (4.0-IV1, 23), 1 with directory assignment
/// (3.7-IV2, 17), else 0.
fn partition_version(level: i16) -> i16 {
    match level {
        23.. => 2,
        17.. => 1,
        _ => 0,
    }
}

/// Broker `id`'s `data` log dir id.
fn dir(id: i32) -> [u8; 16] {
    directory_uuid(id, "data")
}

/// The metadata log a controller at feature level `level` writes over `orders-0`'s life:
/// the level, brokers 1–3 registering (with their log dir at 3.7-IV2 and later) and
/// unfenced, `orders-0` on all three led by 1, its ISR shrinking to [1] and growing back to
/// [1, 2] (the ELR holding the others at 4.0-IV1), then broker 2 elected from the ISR —
/// each record at the version `level` writes (`as_partition` rewrites the
/// `PartitionRecord`).
fn life(level: i16, as_partition: impl Fn(MetaRecord) -> MetaRecord) -> MetaLog {
    let (pv, elr) = (partition_version(level), level >= 23);
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(level)]);
    for id in 1..=3 {
        let mut r = register(id, broker_epoch_at_start(id), id as u8, true);
        if let (MetaRecord::RegisterBroker(b), true) = (&mut r, level >= 17) {
            b.log_dirs = vec![dir(id)];
        }
        assert_eq!(
            m.batch(&[at(&r, register_version(level))]),
            1 + i64::from(id)
        );
    }
    m.batch(
        &(1..=3)
            .map(|id| broker_change(id, broker_epoch_at_start(id), -1, 0))
            .collect::<Vec<_>>(),
    );
    let mut p = partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0));
    if let (MetaRecord::Partition(p), true) = (&mut p, level >= 17) {
        p.directories = [1, 2, 3].map(dir).to_vec();
    }
    m.at(T0 - 30 * SEC);
    m.batch(&[topic("orders"), as_partition(at(&p, pv))]);
    let shrink = change("orders", 0, |c| {
        c.isr = Some(vec![1]);
        c.eligible_leader_replicas = elr.then(|| vec![2, 3]);
    });
    let grow = change("orders", 0, |c| {
        c.isr = Some(vec![1, 2]);
        c.eligible_leader_replicas = elr.then(|| vec![3]);
    });
    let elect = change("orders", 0, |c| c.leader = 2);
    for c in [shrink, grow, elect] {
        m.batch(&[at(&c, pv)]);
    }
    m
}

/// Brokers 1–3, each with its copy of `m` and of `orders-0` (leader epochs 0 and 1).
fn cluster(m: &MetaLog) -> Brokers {
    brokers_with(m, &[1, 2, 3], |_| {
        vec![replica("orders", 0, &[(0, 2), (1, 2)])]
    })
}

/// `MetadataVersionTest.testPartitionRecordVersion`, `testPartitionChangeRecordVersion`,
/// `testRegisterBrokerRecordVersion`, `testIsElrSupported`, `testDirectoryAssignmentSupported`
/// and `PartitionRegistrationTest.testPartitionRegistrationToRecord` (3.7-IV1, 3.7-IV2,
/// 4.0-IV1), `testPartitionRegistrationToRecord_ElrShouldBeNullIfEmpty` (an empty ELR is not
/// written), `testRecordRoundTrip`: the same life written at 3.6-IV2 (records v0, registrations
/// v2), 3.7-IV2 (v1 with `Directories`, registrations v3 with `LogDirs`) and 4.0-IV1 (v2 with
/// the ELR). Every node replays them alike: leader 2 at leader epoch 1, partition epoch 3, ISR
/// [1, 2]; the ELR only where v2 wrote it, the directories only where v1+ wrote them (before,
/// `DirectoryId.MIGRATING`). Near miss: the `PartitionRecord` under version 3, which no
/// schema of the table (nor of Kafka of that tree) defines — `metadata_record_unknown` (info),
/// the partition absent from the history and from every verdict (no `stray_replica` for the
/// copies the image cannot place).
#[test]
fn each_version_writes_its_own_records_and_the_replay_is_the_same() {
    for level in [14, 17, 23] {
        let b = cluster(&life(level, |p| p));
        let v = b.check();
        v.assert_no_alarm();
        let h = history_of(&b);
        assert_eq!(h.metadata_version(), Some(level));
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        assert_eq!(
            (s.leader, s.leader_epoch, s.partition_epoch, s.isr.clone()),
            (2, 1, 3, vec![1, 2]),
            "{level}"
        );
        let elr: Vec<i32> = if level >= 23 { vec![3] } else { vec![] };
        assert_eq!(s.elr, elr, "{level}");
        let placed = (level >= 17).then(|| dir(2));
        assert_eq!(s.directory(2), placed, "{level}");
        let choices: Vec<Choice> = h.elections.iter().map(|e| e.choice).collect();
        assert_eq!(choices, vec![Choice::Isr], "{level}");
        let pv = i64::from(partition_version(level));
        let versions = dumped_versions(&dump(&segment_of(&b, 1, 0)));
        let of = |t: &str| -> Vec<i64> {
            (versions.iter())
                .filter(|(n, _)| n == t)
                .map(|(_, v)| *v)
                .collect()
        };
        assert_eq!(of("PARTITION_RECORD"), vec![pv], "{level}");
        assert_eq!(of("PARTITION_CHANGE_RECORD"), vec![pv; 3], "{level}");
        let rv = i64::from(register_version(level));
        assert_eq!(of("REGISTER_BROKER_RECORD"), vec![rv; 3], "{level}");
        assert_eq!(of("FEATURE_LEVEL_RECORD"), vec![0], "{level}");
    }
    // Near miss: PartitionRecord v3.
    let b = cluster(&life(23, |p| match p {
        MetaRecord::Unknown { bytes, .. } => {
            let mut b = bytes;
            b[2] = 3;
            MetaRecord::Unknown {
                api_key: 3,
                version: 3,
                bytes: b,
            }
        }
        p => p,
    }));
    let v = b.check();
    let unknown = of_kind(&v, Kind::MetadataRecordUnknown);
    assert_eq!(unknown[0].len(), 1, "{}", all_lines(&v));
    assert_eq!(unknown[0][0].severity, Severity::Info);
    assert_eq!(
        (
            &unknown[0][0].evidence["api_key"],
            &unknown[0][0].evidence["version"]
        ),
        (&serde_json::json!(3), &serde_json::json!(3))
    );
    assert!(history_of(&b).timeline("orders", 0).is_none());
    v.assert_no_alarm();
}

/// `PartitionRegistrationTest.testPartitionRegistrationToRecord` (3.7-IV1: no ELR, no
/// directories), `MetadataVersionTest.testIsInControlledShutdownStateSupported`, and the
/// readers' handling of a tag a version does not define: a `PartitionRecord` v1 carrying v2's
/// ELR tags (1 and 2), a `PartitionChangeRecord` v0 carrying v1's `Directories` (tag 8) and a
/// `BrokerRegistrationChangeRecord` v0 carrying v1's `InControlledShutdown` (tag 1) are read
/// as their version defines them: the tags are unknown and kept aside, so the image has no
/// ELR, the directories of the record before, and no broker in controlled shutdown. Near
/// miss: the same bodies under the versions that define the tags.
#[test]
fn a_later_versions_tagged_fields_are_not_read_by_an_earlier_version() {
    let elsewhere = directory_uuid(2, "data-2");
    let write = |own: bool| {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        m.batch(&[metadata_version(23)]);
        for id in 1..=3 {
            m.batch(&[register(id, broker_epoch_at_start(id), id as u8, false)]);
        }
        let mut p = partition("orders", 0, &[1, 2, 3], &[1], (1, 0, 0));
        if let MetaRecord::Partition(p) = &mut p {
            p.directories = [1, 2, 3].map(dir).to_vec();
            p.eligible_leader_replicas = Some(vec![2, 3]);
            p.last_known_elr = Some(vec![4]);
        }
        let moved = change("orders", 0, |c| {
            c.directories = Some(vec![dir(1), elsewhere, dir(3)]);
        });
        let shutdown = broker_change(2, broker_epoch_at_start(2), 0, 1);
        let (p, moved, shutdown) = match own {
            true => (at(&p, 2), at(&moved, 1), at(&shutdown, 1)),
            false => (
                relabel(&p, 2, 1),
                relabel(&moved, 1, 0),
                relabel(&shutdown, 1, 0),
            ),
        };
        m.batch(&[topic("orders"), p]);
        m.batch(&[moved, shutdown]);
        let d = tempfile::tempdir().unwrap();
        m.write(d.path());
        d
    };
    for own in [false, true] {
        let d = write(own);
        let h = crate::common::kraft::history(d.path());
        assert!(
            h.log.undecodable.is_empty() && h.log.unknown.is_empty(),
            "{own}"
        );
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        let (elr, lke, two) = match own {
            true => (vec![2, 3], vec![4], elsewhere),
            false => (vec![], vec![], dir(2)),
        };
        assert_eq!(
            (s.elr.clone(), s.last_known_elr.clone()),
            (elr, lke),
            "{own}"
        );
        assert_eq!(s.directory(2), Some(two), "{own}");
        // The change still counts: partition epoch 1.
        assert_eq!(s.partition_epoch, 1, "{own}");
        let shut = (h.history.brokers.iter()).any(|e| {
            e.broker == 2
                && e.change
                    == klogscan::cluster::leadership::replay::BrokerChange::ControlledShutdown
        });
        assert_eq!(shut, own, "{own}");
        let text = dump(
            &d.path()
                .join("__cluster_metadata-0/00000000000000000000.log"),
        );
        assert_eq!(text.contains("eligibleLeaderReplicas"), own, "{text}");
    }
}

/// `MetadataVersionTest.testPartitionChangeRecordVersion` from the reader's side: a
/// `PartitionChangeRecord` of a version the table lacks (a newer controller's; here v2's
/// body under version 3, adding broker 3 to `orders-0`). A node of the writer's release
/// applies it (broker 3 a replica), an older one refuses it (`MetadataParseException`: 3.8+
/// does not start): in neither reading is broker 3's copy a stray the next start renames, so
/// nothing is said of it — the history holds a gap there (`history_gap_before`), as for a
/// record that does not decode. Near miss: the change at v2 touching only the ISR: broker
/// 3's copy is stray (`stray_replica`, warning).
///
/// Divergence, fixed: the replay skipped the record and judged broker 3's copy against the
/// replicas before it (`stray_replica`); a partition-state record kept raw (types 3, 5, 9,
/// 28) is now a gap of the history (`cluster/leadership/load.rs`).
#[test]
fn a_partition_change_of_a_version_the_reader_lacks_leaves_the_replicas_unknown() {
    for newer in [true, false] {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        m.batch(&[metadata_version(23)]);
        for id in 1..=3 {
            m.batch(&[register(id, broker_epoch_at_start(id), id as u8, false)]);
        }
        m.batch(&[
            topic("orders"),
            partition("orders", 0, &[1, 2], &[1, 2], (1, 0, 0)),
        ]);
        let adds = change("orders", 0, |c| {
            c.replicas = Some(vec![1, 2, 3]);
            c.adding_replicas = Some(vec![3]);
        });
        let shrinks = change("orders", 0, |c| c.isr = Some(vec![1]));
        m.batch(&[match newer {
            true => relabel(&adds, 2, 3),
            false => at(&shrinks, 2),
        }]);
        let b = brokers_with(&m, &[1, 2, 3], |_| vec![replica("orders", 0, &[(0, 2)])]);
        let v = b.check();
        let strays = of_kind(&v, Kind::StrayReplica);
        let on_3 = |fs: &Vec<&klogscan::Finding>| {
            (fs.iter())
                .filter(|f| f.source.broker_id == Some(3))
                .count()
        };
        let expect = usize::from(!newer);
        assert_eq!(
            strays.iter().map(on_3).collect::<Vec<_>>(),
            vec![expect; 3],
            "{newer}: {}",
            all_lines(&v)
        );
        let unknown = of_kind(&v, Kind::MetadataRecordUnknown);
        assert_eq!(unknown[0].len(), usize::from(newer), "{newer}");
    }
}
