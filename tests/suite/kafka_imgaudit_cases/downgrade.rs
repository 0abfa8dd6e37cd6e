//! `ImageDowngradeTest`: the snapshot `MetadataImage.write` writes for a lower
//! `metadata.version` (`ImageWriterOptions`, the losses reported to its handler), and what a
//! node loading that snapshot has in its image compared with the snapshot of the version the
//! image was built at.

use super::{all_lines, at, brokers_with, dump, dumped_versions, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_epoch_at_start, change, metadata_version, partition, topic,
};
use crate::kafka_quiet_cluster_cases::{T0, directory_uuid, replica};
use klogscan::cluster::leadership::elections::Choice;
use klogscan::cluster::leadership::replay::BrokerChange;
use klogscan::finding::Kind;
use klogscan::read::format::metadata::{MetaRecord, RegisterBroker};
use klogscan::testkit::LogDirBuilder;

/// Where the snapshots end and the segments start.
const END: i64 = 100;

/// `ImageDowngradeTest.TEST_RECORDS`: the topic and its partition on brokers 1 and 2 (Kafka's
/// `foo` on 0 and 1), leader 1 at leader epoch 1, partition epoch 2, as a v0 record.
fn test_records() -> Vec<MetaRecord> {
    vec![
        topic("orders"),
        at(&partition("orders", 0, &[1, 2], &[1, 2], (1, 1, 2)), 0),
    ]
}

/// A metadata log whose snapshot at [`END`] holds `image`, the segments after it holding
/// `then`.
fn snapshot_then(image: Vec<MetaRecord>, then: &[MetaRecord]) -> MetaLog {
    let mut m = MetaLog::starting_at(T0 - 10 * SEC, END);
    m.snapshot_at(END, image);
    if !then.is_empty() {
        m.batch(then);
    }
    m
}

/// The snapshot file of a log written by [`snapshot_then`] under `data`.
fn checkpoint(data: &std::path::Path) -> std::path::PathBuf {
    data.join("__cluster_metadata-0")
        .join(format!("{END:020}-{:010}.checkpoint", 1))
}

/// `ImageDowngradeTest.testPremodernVersion`: written for 3.2-IV0 the image loses every
/// feature level (`FeaturesImage.write` writes no `FeatureLevelRecord` below 3.3-IV0), so a
/// node loading the snapshot has the image's default, 3.0-IV1 (`FeaturesImage.EMPTY`), which
/// predates leader recovery: after the ISR shrank to [1], an election of 2 written as the new
/// leader alone in the ISR, without RECOVERING, may be an unclean one and is read so
/// (`unclean_leader_election`).
/// Near miss: the image's own snapshot (3.3-IV0, `metadata.version` 4 and `foo.feature` 4):
/// under leader recovery such an election is the ISR it targeted, clean.
#[test]
fn a_snapshot_below_3_3_carries_no_metadata_version() {
    for own in [false, true] {
        let mut image = Vec::new();
        if own {
            image.push(metadata_version(4));
        }
        image.extend(test_records());
        if own {
            image.push(MetaRecord::FeatureLevel {
                name: "foo.feature".into(),
                feature_level: 4,
            });
        }
        let shrink = change("orders", 0, |c| c.isr = Some(vec![1]));
        let elect = change("orders", 0, |c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
        });
        let m = snapshot_then(image, &[shrink, elect]);
        let d = tempfile::tempdir().unwrap();
        m.write(d.path());
        let h = crate::common::kraft::history(d.path());
        assert_eq!(h.metadata_version(), own.then_some(4), "{own}");
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        assert_eq!((s.leader, s.leader_epoch, s.partition_epoch), (2, 2, 4));
        let choice = h.elections.iter().map(|e| e.choice).collect::<Vec<_>>();
        let want = if own { Choice::Isr } else { Choice::Unclean };
        assert_eq!(choice, vec![want], "{own}");
        let (s, v) = crate::common::kraft::findings(d.path(), Kind::UncleanLeaderElection);
        assert_eq!(
            (s.len(), v.len()),
            (usize::from(!own), usize::from(!own)),
            "{own}"
        );
        let versions = dumped_versions(&dump(&checkpoint(d.path())));
        let features = versions.iter().filter(|(t, _)| t == "FEATURE_LEVEL_RECORD");
        assert_eq!(features.count(), if own { 2 } else { 0 });
    }
}

/// Broker 1's registration at broker epoch 456, in controlled shutdown (`ImageDowngradeTest`'s
/// broker 123), and — from 3.4-IV0 — a ZooKeeper broker in migration.
fn registration(migrating: bool) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: 1,
        incarnation_id: [7; 16],
        broker_epoch: 456,
        in_controlled_shutdown: true,
        is_migrating_zk_broker: migrating,
        ..Default::default()
    })
}

/// The history's events of broker 1 and the `REGISTER_BROKER_RECORD` versions of the
/// snapshot of the log in `d`.
fn broker_1(d: &std::path::Path) -> (Vec<BrokerChange>, Vec<i64>, String) {
    let h = crate::common::kraft::history(d);
    let events = (h.history.brokers.iter())
        .filter(|e| e.broker == 1)
        .map(|e| e.change.clone())
        .collect();
    let text = dump(&checkpoint(d));
    let versions = (dumped_versions(&text).into_iter())
        .filter(|(t, _)| t == "REGISTER_BROKER_RECORD")
        .map(|(_, v)| v)
        .collect();
    (events, versions, text)
}

/// `ImageDowngradeTest.testPreControlledShutdownStateVersion`: written for 3.3-IV2 the broker's
/// registration is a v0 record, which has no `InControlledShutdown`: a node loading it has the
/// broker registered and unfenced, not shutting down. Near miss: the 3.3-IV3 snapshot (v1
/// with the flag): registered, then in controlled shutdown.
#[test]
fn a_snapshot_below_3_3_iv3_forgets_a_controlled_shutdown() {
    for own in [false, true] {
        let (level, version) = if own { (7, 1) } else { (6, 0) };
        let mut image = vec![metadata_version(level), at(&registration(false), version)];
        image.extend(test_records());
        let d = tempfile::tempdir().unwrap();
        snapshot_then(image, &[]).write(d.path());
        let (events, versions, _) = broker_1(d.path());
        let mut want = vec![BrokerChange::Registered {
            fenced: false,
            epoch: 456,
        }];
        if own {
            want.push(BrokerChange::ControlledShutdown);
        }
        assert_eq!(events, want, "{own}");
        assert_eq!(versions, vec![i64::from(version)], "{own}");
        let h = crate::common::kraft::history(d.path());
        assert_eq!(h.metadata_version(), Some(level));
    }
}

/// `ImageDowngradeTest.testPreZkMigrationSupportVersion`: written for 3.3-IV3 the
/// registration is v1, without `IsMigratingZkBroker`; a node loading it has the broker in
/// controlled shutdown either way. klogscan keeps no migration state in its history (no rule
/// reads it): the two snapshots replay alike, and only the record (`dump`) shows the flag.
/// Near miss: the 3.4-IV0 snapshot (v2), whose record says `isMigratingZkBroker: true`.
#[test]
fn a_snapshot_below_3_4_forgets_a_migrating_zk_broker() {
    let mut seen = Vec::new();
    for own in [false, true] {
        let (level, version) = if own { (8, 2) } else { (7, 1) };
        let mut image = vec![metadata_version(level), at(&registration(true), version)];
        image.extend(test_records());
        let d = tempfile::tempdir().unwrap();
        snapshot_then(image, &[]).write(d.path());
        let (events, versions, text) = broker_1(d.path());
        assert_eq!(versions, vec![i64::from(version)], "{own}");
        assert_eq!(
            text.contains(r#""isMigratingZkBroker":true"#),
            own,
            "{own}: {text}"
        );
        seen.push(events);
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0].last(), Some(&BrokerChange::ControlledShutdown));
}

/// The name `ReplicaAlterLogDirsThread`'s copy of `orders-0` has (`UnifiedLog.logFutureDirName`).
const FUTURE: &str = "orders-0.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-future";

/// `ImageDowngradeTest.testDirectoryAssignmentState`: the image built from a `PartitionRecord`
/// v2 assigning broker 2's replica to its log dir `data-2`, written for 3.7-IV0: the record
/// is v0 without `Directories` (a loss), and a `ZkMigrationStateRecord` (NONE) follows the
/// metadata version (`FeaturesImage.write`, 3.4-IV0 and later). A node loading it reads every
/// replica's directory as `DirectoryId.MIGRATING`, which no log dir's `directory.id` is:
/// broker 2's `-future` copy in `data-2` stays a move in progress
/// (`LogManager.findAbandonedFutureLogs` matches nothing). Near miss: the input snapshot
/// (the v2 record): the image assigns `data-2`, the next start swaps the copy in
/// (`abandoned_future_replica`).
#[test]
fn a_snapshot_below_3_7_iv2_forgets_the_directories() {
    for own in [false, true] {
        let dirs = vec![directory_uuid(1, "data"), directory_uuid(2, "data-2")];
        let mut p = partition("orders", 0, &[1, 2], &[1, 2], (1, 1, 2));
        if let (MetaRecord::Partition(p), true) = (&mut p, own) {
            p.directories = dirs;
        }
        let mut image = vec![metadata_version(15)];
        if !own {
            image.push(at(&MetaRecord::ZkMigrationState { state: 0 }, 0));
        }
        image.extend([topic("orders"), at(&p, if own { 2 } else { 0 })]);
        let m = snapshot_then(image, &[]);
        let data = || vec![replica("orders", 0, &[(1, 2)])];
        let mut b = brokers_with(&m, &[1, 2], |_| data());
        let two = LogDirBuilder::new(2).partition(replica("orders", 0, &[(1, 2)]));
        let dir = b.write(2, "data-2", two, Some(broker_epoch_at_start(2)));
        std::fs::rename(dir.join("orders-0"), dir.join(FUTURE)).unwrap();
        let h = history_of(&b);
        let s = h.timeline("orders", 0).unwrap().current().unwrap().clone();
        let assigned = own.then(|| directory_uuid(2, "data-2"));
        assert_eq!(s.directory(2), assigned, "{own}");
        let v = b.check();
        let swapped = of_kind(&v, Kind::AbandonedFutureReplica);
        let n = usize::from(own);
        assert_eq!(
            swapped.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![n; 3],
            "{own}: {}",
            all_lines(&v)
        );
        if !own {
            v.assert_no_alarm();
        }
    }
}
