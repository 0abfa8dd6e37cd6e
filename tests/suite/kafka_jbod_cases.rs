//! JBOD in KRaft (KIP-858, Kafka 3.7 and later): the directory the KRaft metadata log
//! assigns each replica to (`PartitionRecord.Directories`, `PartitionChangeRecord.Directories`,
//! the reserved ids `DirectoryId.MIGRATING` / `UNASSIGNED` / `LOST`), the log dirs a broker
//! registers (`RegisterBrokerRecord.LogDirs`, `BrokerRegistrationChangeRecord.LogDirs`),
//! against the `directory.id` of the log dirs in the inputs and where the replicas' data sits.
//!
//! What Kafka does with these at a broker's start (apache/kafka trunk of 2024-10):
//! * the broker loads every log of its online log dirs wherever it is; when the image assigns
//!   the replica another directory, `LogManager.getOrCreateLog` returns the loaded log and
//!   `ReplicaManager.maybeUpdateTopicAssignment` tells the controller the directory the log
//!   is in (`AssignReplicasToDirs`) — no stray, no copy, no loss;
//! * only a `-future` log whose log dir's id is the assigned one is swapped in
//!   (`LogManager.findAbandonedFutureLogs`); a reserved id is never a log dir's
//!   (`DirectoryId.reserved`, refused by `MetaPropertiesEnsemble.verify`), so `LOST`,
//!   `UNASSIGNED`, `MIGRATING` (and a record without directories, read as MIGRATING by
//!   `PartitionRegistration`) swap nothing;
//! * the controller refuses a registration naming a directory id another broker registered
//!   (`ClusterControlManager.registerBroker`).
//!
//! The existing cases this file does not repeat: the `-future` copy in the assigned dir
//! and its move in progress (`kafka_quiet_cluster_cases::reassignment`,
//! `kafka_meta_properties_cases`), the directory merges of the replay
//! (`kafka_kraft_controller_cases`), the reserved and duplicate ids of one broker
//! (`meta_ensemble`).

use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, bootstrap_at, broker_change, broker_epoch_at_start, change, partition, register,
    topic,
};
use crate::kafka_quiet_cluster_cases::{
    Brokers, T0, Verdict, directory_id, directory_uuid, lines, replica,
};
use klogscan::cluster::leadership;
use klogscan::discover::layout;
use klogscan::finding::Kind;
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::LogDirBuilder;
use std::path::Path;

/// `DirectoryId.MIGRATING` (`new Uuid(0, 0)`).
const MIGRATING: [u8; 16] = [0; 16];
/// `DirectoryId.UNASSIGNED` (`new Uuid(0, 1)`).
const UNASSIGNED: [u8; 16] = reserved(1);
/// `DirectoryId.LOST` (`new Uuid(0, 2)`).
const LOST: [u8; 16] = reserved(2);

const fn reserved(n: u8) -> [u8; 16] {
    let mut id = [0; 16];
    id[15] = n;
    id
}

/// The name `ReplicaAlterLogDirsThread`'s copy of `orders-0` has (`UnifiedLog.logFutureDirName`).
const FUTURE: &str = "orders-0.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-future";

/// Where broker 2's copies of `orders-0` are, and what the image says of them.
struct Layout {
    /// The log dirs broker 2 registered (besides `data`, always first).
    registered: &'static [&'static str],
    /// The log dirs of broker 2 in the inputs (besides `data`).
    present: &'static [&'static str],
    /// The log dir holding broker 2's live `orders-0`.
    live: &'static str,
    /// The log dir holding broker 2's `-future` copy of it, if any.
    future: Option<&'static str>,
    /// The replicas of `orders-0`.
    replicas: &'static [i32],
    /// The batches of brokers 1's and 3's copies (broker 2's has 12).
    others: usize,
}

impl Layout {
    fn new(live: &'static str) -> Layout {
        Layout {
            registered: &["data-2"],
            present: &["data-2"],
            live,
            future: None,
            replicas: &[1, 2, 3],
            others: 12,
        }
    }
}

/// The directory each replica of `replicas` is assigned to: `two` for broker 2, `data`'s
/// id for the others.
fn dirs_of(replicas: &[i32], two: [u8; 16]) -> Vec<[u8; 16]> {
    (replicas.iter())
        .map(|&id| {
            if id == 2 {
                two
            } else {
                directory_uuid(id, "data")
            }
        })
        .collect()
}

/// Brokers 1–3 at MV 3.7-IV4 (feature level 19), each registering the ids of its log dirs
/// (`data`; broker 2 also `l.registered`), `orders-0` created on `l.replicas` led by 1 with
/// broker 2's replica assigned to `two` (`directories`: `None` writes the record without
/// them, as before 3.7-IV2), then `more` (the records after, at `T0` + 5 s). Each broker's
/// `data` holds its replica (broker 2's: in `l.live`) and the metadata log; broker 2's other
/// log dirs `l.present` are in the inputs, its copy moved to `l.future` as a `-future` one.
fn cluster(l: &Layout, two: Option<[u8; 16]>, more: impl Fn(&mut MetaLog)) -> Brokers {
    let registered = l.registered;
    let ids = move |id: i32| {
        let mut d = vec![directory_uuid(id, "data")];
        if id == 2 {
            d.extend(registered.iter().map(|n| directory_uuid(2, n)));
        }
        d
    };
    let mut m = bootstrap_at(19, &ids);
    m.at(T0 - 30 * SEC);
    let mut p = partition("orders", 0, l.replicas, l.replicas, (1, 0, 0));
    if let (MetaRecord::Partition(p), Some(two)) = (&mut p, two) {
        p.directories = dirs_of(l.replicas, two);
    }
    m.batch(&[topic("orders"), p]);
    m.at(T0 + 5 * SEC);
    more(&mut m);
    let mut b = Brokers::new();
    for id in 1..=3 {
        let mut ld = LogDirBuilder::new(id);
        if id != 2 {
            ld = ld.partition(replica("orders", 0, &[(0, l.others)]));
        } else if l.live == "data" {
            ld = ld.partition(replica("orders", 0, &[(0, 12)]));
        }
        let dir = b.write(id, "data", ld, Some(broker_epoch_at_start(id)));
        m.write(&dir);
    }
    for &name in l.present {
        let mut ld = LogDirBuilder::new(2);
        if l.live == name || l.future == Some(name) {
            ld = ld.partition(replica("orders", 0, &[(0, 12)]));
        }
        let dir = b.write(2, name, ld, Some(broker_epoch_at_start(2)));
        if l.future == Some(name) {
            std::fs::rename(dir.join("orders-0"), dir.join(FUTURE)).unwrap();
        }
    }
    b
}

/// The findings of `kind` of scan, verify and merge: `(broker, path ends with -future)`.
fn kinds(v: &Verdict, kind: Kind) -> [Vec<(Option<i32>, bool)>; 3] {
    let of = |fs: Vec<&klogscan::Finding>| -> Vec<(Option<i32>, bool)> {
        (fs.into_iter())
            .filter(|f| f.kind == kind)
            .map(|f| {
                let future = (f.source.path.as_deref()).is_some_and(|p| p.ends_with("-future"));
                (f.source.broker_id, future)
            })
            .collect()
    };
    [
        of(v.scan.findings.iter().collect()),
        of(v.verify.findings().collect()),
        of(v.merge.findings.iter().collect()),
    ]
}

/// Neither `stray_replica` nor `abandoned_future_replica`, at any severity, from scan,
/// verify or merge.
fn assert_no_directory_verdict(v: &Verdict) {
    for kind in [Kind::StrayReplica, Kind::AbandonedFutureReplica] {
        for (i, found) in kinds(v, kind).iter().enumerate() {
            assert!(
                found.is_empty(),
                "{kind} in report {i}: {found:?}\n{:#?}",
                lines(&v.scan.findings)
            );
        }
    }
}

/// Broker 2's replica of `orders-0` in the history of the metadata log in `dir`: its
/// assigned directory now.
fn assigned_now(dir: &Path) -> Option<[u8; 16]> {
    let inv = layout::discover(&[dir.to_path_buf()]);
    let h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1, "one cluster");
    h[0].timeline("orders", 0)?.current()?.directory(2)
}

// ----- the assigned directory holds the log, or another one does ----------------------------

/// `ReplicaManagerTest.testApplyDeltaShouldHandleReplicaAssignedToOnlineDirectory`: the
/// partition was created with broker 2's replica `UNASSIGNED` (a broker of several log dirs:
/// `ClusterControlManager.defaultDir`), the broker placed it in `data-2` and reported it
/// (`AssignReplicasToDirs` → the PartitionChangeRecord with the new `Directories` of
/// `ReplicationControlManagerTest.testHandleAssignReplicasToDirs`): the image assigns it where
/// its log is; the broker serves it there and tells the controller nothing.
#[test]
fn a_replica_in_the_dir_the_image_assigns_is_quiet() {
    let b = cluster(&Layout::new("data-2"), Some(UNASSIGNED), |m| {
        m.batch(&[change("orders", 0, |c| {
            c.directories = Some(dirs_of(&[1, 2, 3], directory_uuid(2, "data-2")));
        })]);
    });
    assert_eq!(
        assigned_now(&b.path(1, "data")),
        Some(directory_uuid(2, "data-2")),
        "the replay reads the assignment"
    );
    let v = b.check();
    v.assert_quiet();
    assert_no_directory_verdict(&v);
}

/// Near miss of the above: the same log in `data-2`, but the image no longer lists broker 2
/// among the replicas (`LogManager.isStrayKraftReplica`, `LogManagerTest.testIsStrayKraftReplicaInImage`):
/// a stray whatever log dir holds it.
#[test]
fn the_same_log_no_longer_a_replica_is_stray() {
    let l = Layout {
        replicas: &[1, 3],
        ..Layout::new("data-2")
    };
    let v = cluster(&l, Some(directory_uuid(2, "data-2")), |_| {}).check();
    for found in kinds(&v, Kind::StrayReplica).iter().take(2) {
        assert_eq!(found, &[(Some(2), false)]);
    }
}

/// The image assigns broker 2's replica to `data-2` while its log is in `data` (no `-future`
/// copy anywhere): at start `LogManager.loadLogs` loads it from `data`,
/// `Partition.createLogIfNotExists` → `LogManager.getOrCreateLog` returns that loaded log
/// (`getLog` first: the target directory only places a new log —
/// `LogManagerTest.testCreateLogOnTargetedLogDirectory`), and `ReplicaManager.applyDelta` →
/// `maybeUpdateTopicAssignment` sends the directory the log is in to the controller
/// (`ReplicaManagerTest.testApplyDeltaShouldHandleReplicaAssignedToUnassignedDirectory` /
/// `…ToLostDirectory` check that call). Not a stray (`isStrayKraftReplica` reads only the
/// replicas), nothing swapped, nothing lost.
#[test]
fn a_log_outside_its_assigned_dir_is_served_where_it_is() {
    let v = cluster(
        &Layout::new("data"),
        Some(directory_uuid(2, "data-2")),
        |_| {},
    )
    .check();
    v.assert_quiet();
    assert_no_directory_verdict(&v);
}

// ----- reserved ids ---------------------------------------------------------------------------

/// `LogManager.findAbandonedFutureLogs` swaps in a `-future` log only when its log dir's
/// `directory.id` is the one the image assigns (`PartitionRegistration.directory`): never for
/// `LOST` (`PartitionChangeBuilderTest.testUpdateDirectories`), `UNASSIGNED`
/// (`ClusterControlManager.defaultDir` of a broker with several dirs:
/// `ClusterControlManagerTest.testDefaultDir`) or `MIGRATING`, explicit or read from a
/// record without `Directories` (`PartitionRegistration.defaultToMigrating`), since no log
/// dir carries a reserved id (`DirectoryIdTest`, `MetaPropertiesEnsemble.verify`). The
/// `-future` copy in `data-2` stays a move in progress: no verdict. The positive control:
/// assigned `data-2`'s id, the one `abandoned_future_replica`.
#[test]
fn a_reserved_assignment_never_swaps_a_future_copy() {
    let l = Layout {
        future: Some("data-2"),
        ..Layout::new("data")
    };
    for (name, two) in [
        ("LOST", Some(LOST)),
        ("UNASSIGNED", Some(UNASSIGNED)),
        ("MIGRATING", Some(MIGRATING)),
        ("no directories", None),
    ] {
        let b = cluster(&l, two, |_| {});
        assert_eq!(assigned_now(&b.path(1, "data")), two, "{name}");
        let v = b.check();
        v.assert_quiet();
        assert_no_directory_verdict(&v);
    }
    let v = cluster(&l, Some(directory_uuid(2, "data-2")), |_| {}).check();
    for found in kinds(&v, Kind::AbandonedFutureReplica).iter().take(2) {
        assert_eq!(found, &[(Some(2), true)]);
    }
}

/// `ReplicationControlManagerTest.testHandleAssignReplicasToDirs` (partition `b-1`): broker 2
/// reports its replica in `LOST` (a log dir that failed); the controller writes the new
/// `Directories` with `LOST` and, the directory not being online
/// (`DirectoryId.isOnline`, `ClusterControlManagerTest.testHasOnlineDir`), takes broker 2 out
/// of the ISR. The data is still in the healthy `data-2`: at its next start the broker loads
/// it, serves it and reports `data-2`
/// (`ReplicaManagerTest.testApplyDeltaShouldHandleReplicaAssignedToLostDirectory`;
/// `LogManager.getOrCreateLog` ignores `LOST` as a target, `LogManagerTest.testCreateLogWithTargetedLogDirectorySetAsUnknownWithoutAnyOfflineDirectories`).
/// Nothing to report.
#[test]
fn a_lost_assignment_with_the_data_in_a_healthy_dir_is_quiet() {
    let b = cluster(
        &Layout::new("data-2"),
        Some(directory_uuid(2, "data-2")),
        |m| {
            m.batch(&[
                change("orders", 0, |c| {
                    c.directories = Some(dirs_of(&[1, 2, 3], LOST));
                }),
                change("orders", 0, |c| c.isr = Some(vec![1, 3])),
            ]);
        },
    );
    assert_eq!(assigned_now(&b.path(1, "data")), Some(LOST));
    let v = b.check();
    v.assert_quiet();
    assert_no_directory_verdict(&v);
}

/// Near miss of the above: after the `LOST` assignment a reassignment moved the replica off
/// broker 2 (replicas [1, 3], their directories kept:
/// `PartitionChangeBuilderTest.testKeepsDirectoriesAfterReassignment`): its log in `data-2`
/// is then a stray (`LogManager.isStrayKraftReplica`).
#[test]
fn a_lost_replica_reassigned_away_is_stray() {
    let b = cluster(
        &Layout::new("data-2"),
        Some(directory_uuid(2, "data-2")),
        |m| {
            m.batch(&[change("orders", 0, |c| {
                c.directories = Some(dirs_of(&[1, 2, 3], LOST));
            })]);
            m.batch(&[change("orders", 0, |c| {
                c.replicas = Some(vec![1, 3]);
                c.isr = Some(vec![1, 3]);
                c.directories = Some(dirs_of(&[1, 3], LOST));
            })]);
        },
    );
    let v = b.check();
    for found in kinds(&v, Kind::StrayReplica).iter().take(2) {
        assert_eq!(found, &[(Some(2), false)]);
    }
}

// ----- directories outside the inputs ---------------------------------------------------------

/// Broker 2 registered `data`, `data-2` and `data-3`; the image assigns its replica to
/// `data-3`, which is not in the inputs; its live log is in `data` and a `-future` copy in
/// `data-2`. Whatever `data-3` holds is unknown: `LogManager.findAbandonedFutureLogs` swaps
/// the `data-2` copy in only if `data-2` were the assigned dir, so nothing is said of it, nor
/// of the live log.
#[test]
fn an_assigned_dir_outside_the_inputs_is_silent() {
    let l = Layout {
        registered: &["data-2", "data-3"],
        future: Some("data-2"),
        ..Layout::new("data")
    };
    let v = cluster(&l, Some(directory_uuid(2, "data-3")), |_| {}).check();
    v.assert_quiet();
    assert_no_directory_verdict(&v);
}

// ----- the registered log dirs against the meta.properties ----------------------------------

/// `ReplicationControlManagerTest.testHandleDirectoriesOffline`: broker 2's `data-2` failed;
/// the controller took broker 2 out of the ISR of the partition assigned there and wrote a
/// `BrokerRegistrationChangeRecord` (v2) whose `LogDirs` are the remaining online ones
/// (`ClusterControlManagerTest.testReplayBrokerRegistrationChangeRecord`). The leader wrote
/// on; `data-2` (no clean-shutdown file: `LogManager.shutdown` skips offline dirs) holds the
/// older copy. At the next start the broker registers `data-2` again (its
/// `directory.id` is its own, registered by no other broker), loads the copy after a
/// recovery and fetches the rest. Not one warning; and a registered log dir not in the
/// inputs (broker 2's `data-9`) is nothing to say either.
#[test]
fn a_dir_marked_offline_and_its_stale_copy_give_no_warning() {
    let l = Layout {
        registered: &["data-2", "data-9"],
        others: 14,
        ..Layout::new("data-2")
    };
    let b = cluster(&l, Some(directory_uuid(2, "data-2")), |m| {
        let mut offline = broker_change(2, broker_epoch_at_start(2), 0, 0);
        if let MetaRecord::BrokerRegistrationChange(c) = &mut offline {
            c.log_dirs = vec![directory_uuid(2, "data"), directory_uuid(2, "data-9")];
        }
        m.batch(&[change("orders", 0, |c| c.isr = Some(vec![1, 3])), offline]);
    });
    std::fs::remove_file(b.path(2, "data-2").join(".kafka_cleanshutdown")).unwrap();
    let v = b.check();
    v.assert_no_alarm();
    assert_no_directory_verdict(&v);
    assert!(
        v.verify.broker_startup.is_empty(),
        "{:#?}",
        v.verify.broker_startup
    );
}

/// Broker 2's extra log dir `data-2` carrying a `directory.id` of its own: the controller
/// accepts the registration (`ClusterControlManagerTest.testRegisterWithDuplicateDirectoryId`,
/// its first, re-registering call): no start predicted to fail.
#[test]
fn a_log_dir_with_an_id_no_other_broker_registered_starts() {
    let v = cluster(
        &Layout::new("data-2"),
        Some(directory_uuid(2, "data-2")),
        |_| {},
    )
    .check();
    assert!(
        v.verify.broker_startup.is_empty(),
        "{:#?}",
        v.verify.broker_startup
    );
    v.assert_quiet();
}

/// The cluster of [`cluster`] (broker 2's extra log dir `data-2`, the image's records
/// `more` after the topic), then broker 2's `data-2` made a clone of broker 1's `data`: its
/// `meta.properties` names node 2 and keeps `data`'s `directory.id`.
pub(crate) fn cloned_from_broker_1(more: impl Fn(&mut MetaLog)) -> Verdict {
    let b = cluster(
        &Layout::new("data-2"),
        Some(directory_uuid(2, "data-2")),
        more,
    );
    let two = b.path(2, "data-2");
    let meta = std::fs::read_to_string(two.join("meta.properties")).unwrap();
    let cloned = meta.replace(&directory_id(2, "data-2"), &directory_id(1, "data"));
    assert_ne!(meta, cloned);
    std::fs::write(two.join("meta.properties"), cloned).unwrap();
    b.check()
}

/// `ClusterControlManagerTest.testRegisterWithDuplicateDirectoryId`
/// (`ClusterControlManager.registerBroker`): a registration naming a directory id the image
/// has registered for another broker is refused (`InvalidRegistrationException` "Broker 1 is
/// already registered with directory …"). Broker 2's `data-2` is a clone of broker 1's
/// `data` (its `meta.properties` rewritten to node 2, the `directory.id` kept): at broker 2's
/// next start `BrokerLifecycleManager` sends both its log dirs' ids, the controller refuses,
/// the broker never registers and its start fails once `initial.broker.registration.timeout.ms`
/// passes (`BrokerServer.startup` waits for the registration). Without a metadata log the two
/// may be two brokers' dirs captured alike (`meta_ensemble`: silent); the image decides.
/// `verify` says it (`duplicate_directory_id` naming broker 1's registration); the scan and
/// the merge, which predict no start, do not.
#[test]
fn a_directory_id_registered_by_another_broker_stops_the_start() {
    let v = cloned_from_broker_1(|_| {});
    let refused: Vec<_> = (v.verify.broker_startup.iter())
        .filter(|s| s.broker == Some(2) && s.starts == Some(false))
        .collect();
    assert_eq!(refused.len(), 1, "{:#?}", v.verify.broker_startup);
    assert!(
        (refused[0].log_dirs.iter()).any(|d| d.ends_with("data-2")),
        "{:#?}",
        refused[0]
    );
    assert_eq!(refused[0].reason, "duplicate_directory_id");
    let found: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::DuplicateDirectoryId)
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    let (f, id) = (found[0], directory_id(1, "data"));
    assert_eq!(f.source.broker_id, Some(2));
    assert_eq!(f.evidence["registered_by"], 1, "{:#}", f.evidence);
    assert_eq!(f.evidence["directory_id"], id.as_str());
    assert_eq!(
        f.evidence["refused_by"],
        "ClusterControlManager.registerBroker"
    );
    assert!(
        f.message.contains(&format!(
            "Broker 1 is already registered with directory {id}"
        )),
        "{}",
        f.message
    );
    // The log dir it was cloned from is named beside it.
    let dirs = f.evidence["log_dirs"].as_array().unwrap();
    assert!(dirs.len() == 2 && dirs[1].as_str().unwrap().ends_with("broker-1/data"));
    for (name, fs) in [("scan", &v.scan.findings), ("merge", &v.merge.findings)] {
        assert!(
            !fs.iter().any(|f| f.kind == Kind::DuplicateDirectoryId),
            "{name}"
        );
    }
}

/// The refusal lasts while broker 1 is registered with that directory: once it is
/// unregistered (`UnregisterBrokerRecord`: `ClusterControlManager.replay` removes its
/// directories, `ClusterControlManagerTest.testUnregister`), or registered again with other
/// log dirs (a new `RegisterBrokerRecord` replaces them), the controller accepts broker 2's
/// registration with the cloned id: no start predicted to fail.
#[test]
fn a_directory_id_its_broker_no_longer_registers_does_not_stop_the_start() {
    let unregistered = MetaRecord::UnregisterBroker {
        broker_id: 1,
        broker_epoch: broker_epoch_at_start(1),
    };
    let mut again = register(1, 40, 9, true);
    if let MetaRecord::RegisterBroker(r) = &mut again {
        r.log_dirs = vec![directory_uuid(1, "data-new")];
    }
    for record in [unregistered, again] {
        let v = cloned_from_broker_1(|m| {
            m.batch(std::slice::from_ref(&record));
        });
        assert!(
            v.verify.broker_startup.is_empty(),
            "{:?}: {:#?}",
            record.type_name(),
            v.verify.broker_startup
        );
        assert!(
            !(v.verify.findings()).any(|f| f.kind == Kind::DuplicateDirectoryId),
            "{:?}",
            record.type_name()
        );
    }
}

/// Kafka 4.3 (KIP-1066) registers a broker with `RegisterBrokerRecord` v4, which adds the
/// broker's cordoned log dirs as a tagged field: the registration is replayed as any
/// other. Broker 1 unregistered, then registered again by a 4.3 controller with its `data`
/// dir (cordoned too): broker 2's clone of that dir is refused again at its start
/// (`duplicate_directory_id`). Near miss: the same record at a version no release wrote
/// (5) is kept raw (`metadata_record_unknown`): broker 1 stays unregistered and no start is
/// predicted to fail.
#[test]
fn a_kafka_4_3_registration_is_replayed() {
    let v4 = |version: u8| {
        let mut again = register(1, 40, 9, true);
        if let MetaRecord::RegisterBroker(r) = &mut again {
            r.log_dirs = vec![directory_uuid(1, "data")];
        }
        let mut v = klogscan::testkit::metadata::encode_at(&again, 3);
        // The tagged section ends the value: one tag (LogDirs: tag 0, 17 bytes).
        let at = v.len() - 20;
        assert_eq!(&v[at..at + 3], &[1, 0, 17]);
        v[2] = version;
        v[at] = 2;
        v.extend_from_slice(&[1, 17, 2]);
        v.extend_from_slice(&directory_uuid(1, "data"));
        v
    };
    let unregistered = MetaRecord::UnregisterBroker {
        broker_id: 1,
        broker_epoch: broker_epoch_at_start(1),
    };
    let run = |version: u8| {
        cloned_from_broker_1(|m| {
            m.batch(std::slice::from_ref(&unregistered));
            m.raw(vec![v4(version)]);
        })
    };
    let v = run(4);
    let refused: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::DuplicateDirectoryId)
        .collect();
    assert_eq!(refused.len(), 1, "{:#?}", v.verify.broker_startup);
    assert_eq!(refused[0].evidence["registered_by"], 1);
    assert!(!(v.verify.findings()).any(|f| f.kind == Kind::MetadataRecordUnknown));
    let near = run(5);
    assert!(
        near.verify.broker_startup.is_empty(),
        "{:#?}",
        near.verify.broker_startup
    );
    assert!((near.verify.findings()).any(|f| f.kind == Kind::MetadataRecordUnknown));
}
