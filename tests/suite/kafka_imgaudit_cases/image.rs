//! The image's deltas: `TopicsImageTest`, `ClusterImageTest`, `MetadataLoaderTest`'s offsets
//! and `PartitionRegistrationTest`'s merge, as a snapshot of one image followed by the
//! delta's records in the log.

use super::{all_lines, brokers_with, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, change, metadata_version, partition, register, topic,
};
use crate::kafka_quiet_cluster_cases::{T0, directory_uuid, replica};
use klogscan::cluster::leadership::replay::BrokerChange;
use klogscan::finding::Kind;
use klogscan::read::format::metadata::{MetaRecord, PartitionRecord, TopicId};
use klogscan::testkit::files::{topic_id_for, uuid_text};

/// Where the snapshots end and the segments start.
const END: i64 = 100;

fn topic_as(name: &str, id: TopicId) -> MetaRecord {
    MetaRecord::Topic {
        name: name.into(),
        topic_id: id,
    }
}

/// `name`-`n` of topic id `id` on `replicas`, ISR `isr`, led by `leader` at `epoch`,
/// partition epoch `pe`, reassigning (`adding`, `removing`).
fn part(
    id: TopicId,
    n: i32,
    (replicas, isr): (&[i32], &[i32]),
    (leader, epoch, pe): (i32, i32, i32),
    (adding, removing): (&[i32], &[i32]),
) -> MetaRecord {
    MetaRecord::Partition(PartitionRecord {
        partition_id: n,
        topic_id: id,
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        adding_replicas: adding.to_vec(),
        removing_replicas: removing.to_vec(),
        leader,
        leader_epoch: epoch,
        partition_epoch: pe,
        ..Default::default()
    })
}

/// `TopicsImageTest`'s topic ids: `foo` (the id the testkit's `partition.metadata` of `foo`
/// names), `foo` again, `bar`, `baz`, `bam` (created and removed in one delta: the testkit's
/// `bam` id) and `bam` again.
fn ids() -> [TopicId; 6] {
    ["foo", "foo, again", "bar", "baz", "bam", "bam, again"].map(topic_id_for)
}

/// `TopicsImageTest.testBasicLocalChanges` (with `IMAGE1`, `DELTA1_RECORDS`,
/// `testApplyDelta1`): the snapshot holds `IMAGE1` (`foo` with three partitions, `bar-0`
/// mid-reassignment); the log holds `DELTA1` (`foo` removed and created again under a new
/// id, `bar-0`'s leader changed, `baz` created, `bam` created and removed) and the test's own
/// records (`bam` again, `baz-1`). Broker 3, the local broker, holds `foo-0` of the first
/// `foo`, `bar-0`, `baz-0`, `baz-1` and `bam-1` of the second `bam`: the image keeps all but
/// `foo-0` (`TopicsDelta.localChanges`: `baz-0` led, `bar-0`, `baz-1`, `bam-1` followed),
/// and `foo-0`'s id is gone (`stray_replica`, `topic_recreated`). The states:
/// `bar-0` led by 1 at leader epoch 2, partition epoch 346; `baz-0` by 3 at 2, 1. Near miss:
/// `bam-1`'s `partition.metadata` naming the first `bam`, created and removed in the delta:
/// stray too.
#[test]
fn a_deltas_topics_against_the_local_brokers_logs() {
    let [foo, foo2, bar, baz, bam, bam2] = ids();
    let mut image = vec![metadata_version(23), topic_as("foo", foo)];
    for (n, r, isr, le, pe) in [
        (0, vec![2, 3, 4], vec![2, 3], 1, 345),
        (1, vec![3, 4, 5], vec![3, 4, 5], 4, 684),
        (2, vec![2, 4, 5], vec![2, 4, 5], 10, 84),
    ] {
        image.push(part(foo, n, (&r, &isr), (r[0], le, pe), (&[], &[])));
    }
    image.push(topic_as("bar", bar));
    image.push(part(
        bar,
        0,
        (&[0, 1, 2, 3, 4], &[0, 1, 2, 3]),
        (0, 1, 345),
        (&[3, 4], &[1]),
    ));
    for near in [false, true] {
        let mut m = MetaLog::starting_at(T0 - 10 * SEC, END);
        m.snapshot_at(END, image.clone());
        let bar_leader = change("bar", 0, |c| c.leader = 1);
        let MetaRecord::PartitionChange(mut bar_leader) = bar_leader else {
            unreachable!()
        };
        bar_leader.topic_id = bar;
        m.batch(&[
            MetaRecord::RemoveTopic { topic_id: foo },
            MetaRecord::PartitionChange(bar_leader),
            topic_as("baz", baz),
            part(baz, 0, (&[1, 2, 3, 4], &[3, 4]), (3, 2, 1), (&[1], &[2])),
            topic_as("foo", foo2),
            topic_as("bam", bam),
            MetaRecord::RemoveTopic { topic_id: bam },
        ]);
        m.batch(&[
            topic_as("bam", bam2),
            part(bam2, 0, (&[0, 1, 2], &[0, 1, 2]), (0, 1, 1), (&[], &[])),
            part(bam2, 1, (&[0, 1, 3], &[0, 1, 3]), (0, 1, 1), (&[], &[])),
            part(baz, 1, (&[4, 2, 3], &[4, 2, 3]), (4, 2, 1), (&[], &[])),
        ]);
        let b = brokers_with(&m, &[3], |_| {
            vec![
                replica("foo", 0, &[(1, 2)]),
                replica("bar", 0, &[(1, 2), (2, 1)]),
                replica("baz", 0, &[(2, 2)]),
                replica("baz", 1, &[(2, 2)]),
                replica("bam", 1, &[(1, 2)]),
            ]
        });
        if !near {
            let pm = b.path(3, "data").join("bam-1/partition.metadata");
            std::fs::write(pm, format!("version: 0\ntopic_id: {}\n", uuid_text(&bam2))).unwrap();
        }
        let h = history_of(&b);
        let now = |id: TopicId, n: i32| {
            let s = h.history.partitions[&(id, n)].current().unwrap().clone();
            (s.leader, s.leader_epoch, s.partition_epoch)
        };
        assert_eq!(now(bar, 0), (1, 2, 346));
        assert_eq!(now(baz, 0), (3, 2, 1));
        assert_eq!(h.history.partitions[&(foo, 0)].removed_at, Some(END + 1));
        let v = b.check();
        let strays = of_kind(&v, Kind::StrayReplica);
        let mut got: Vec<(String, String)> = (strays[0].iter())
            .map(|f| {
                (
                    f.topic.clone(),
                    f.evidence["reason"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        got.sort();
        let mut want = vec![("foo".to_string(), "topic_recreated".to_string())];
        if near {
            want.insert(0, ("bam".into(), "topic_recreated".into()));
        }
        assert_eq!(got, want, "{near}: {}", all_lines(&v));
        assert_eq!(strays[1].len(), want.len());
        assert_eq!(strays[2].len(), want.len());
    }
}

/// `ClusterImageTest.testApplyDelta1`, `testApplyDelta2` (`IMAGE1` → `IMAGE2` → `IMAGE3`):
/// the snapshot registers broker 0 fenced, 1 and 2 unfenced; `DELTA1` unfences 0 and fences 1
/// (the legacy records), puts 0 in controlled shutdown (`BrokerRegistrationChangeRecord`) and
/// unregisters 2; `DELTA2` fences 0, unfences 1, writes a change of 0 whose
/// `InControlledShutdown` is NONE (no change: `IMAGE3` keeps 0 in controlled shutdown, and
/// fenced) and registers 2 again (a ZooKeeper broker in migration, fenced by the record's
/// default). The history holds each broker's events in that order, and the image at the end
/// registers brokers 0, 1 and 2 (at broker epoch 1002). Near miss: the NONE change written
/// as IN_CONTROLLED_SHUTDOWN (1): one more event for broker 0.
#[test]
fn broker_registrations_through_two_deltas() {
    for near in [false, true] {
        let image = vec![
            metadata_version(23),
            register(0, 1000, 1, true),
            register(1, 1001, 2, false),
            register(2, 123, 3, false),
        ];
        let mut m = MetaLog::starting_at(T0 - 10 * SEC, END);
        m.snapshot_at(END, image);
        m.batch(&[
            MetaRecord::UnfenceBroker { id: 0, epoch: 1000 },
            MetaRecord::FenceBroker { id: 1, epoch: 1001 },
            broker_change(0, 1000, 0, 1),
            MetaRecord::UnregisterBroker {
                broker_id: 2,
                broker_epoch: 123,
            },
        ]);
        let mut again = register(2, 1002, 4, true);
        if let MetaRecord::RegisterBroker(r) = &mut again {
            r.is_migrating_zk_broker = true;
            r.rack = Some("rack3".into());
        }
        m.batch(&[
            MetaRecord::FenceBroker { id: 0, epoch: 1000 },
            MetaRecord::UnfenceBroker { id: 1, epoch: 1001 },
            broker_change(0, 1000, 0, i8::from(near)),
            again,
        ]);
        let d = tempfile::tempdir().unwrap();
        m.write(d.path());
        let h = crate::common::kraft::history(d.path());
        let of = |id: i32| -> Vec<BrokerChange> {
            (h.history.brokers.iter())
                .filter(|e| e.broker == id)
                .map(|e| e.change.clone())
                .collect()
        };
        use BrokerChange::*;
        let mut zero = vec![
            Registered {
                fenced: true,
                epoch: 1000,
            },
            Unfenced,
            ControlledShutdown,
            Fenced,
        ];
        if near {
            zero.push(ControlledShutdown);
        }
        assert_eq!(of(0), zero, "{near}");
        assert_eq!(
            of(1),
            vec![
                Registered {
                    fenced: false,
                    epoch: 1001
                },
                Fenced,
                Unfenced
            ]
        );
        assert_eq!(
            of(2),
            vec![
                Registered {
                    fenced: false,
                    epoch: 123
                },
                Unregistered,
                Registered {
                    fenced: true,
                    epoch: 1002
                }
            ]
        );
        let regs: Vec<(i32, i64)> = (h.history.registrations.iter())
            .map(|(id, r)| (*id, r.epoch))
            .collect();
        assert_eq!(regs, vec![(0, 1000), (1, 1001), (2, 1002)]);
    }
}

/// `MetadataLoaderTest.testLastAppliedOffset`: a snapshot at offset 200 (its last contained
/// offset; the file `…201-….checkpoint`) holding `metadata.version` 3.3-IV1 and topic `foo`,
/// then the log from 200 (its epoch's `LeaderChange` there, below the snapshot's end, not
/// replayed) with the `RemoveTopicRecord` at 201: the image has no `foo`, at 3.3-IV1. Near
/// miss: the log's segments start at 202 — offset 201 is in no file, and the node does not
/// start (`metadata_snapshot_inconsistent`: no snapshot reaches the log start).
#[test]
fn a_snapshot_then_the_log_from_its_end() {
    let foo = topic_id_for("foo");
    for start in [200, 202] {
        // The log opens with the epoch's LeaderChange at `start`.
        let mut m = MetaLog::starting_at(T0 - 10 * SEC, start);
        m.snapshot_at(201, vec![metadata_version(5), topic_as("foo", foo)]);
        let at = m.batch(&[MetaRecord::RemoveTopic { topic_id: foo }]);
        let d = tempfile::tempdir().unwrap();
        m.write(d.path());
        let (bad, _) = crate::common::kraft::findings(d.path(), Kind::MetadataSnapshotInconsistent);
        let h = crate::common::kraft::history(d.path());
        assert_eq!(h.metadata_version(), Some(5));
        let events: Vec<(i64, bool)> = (h.history.topics.iter())
            .map(|t| (t.offset, t.created))
            .collect();
        assert_eq!(events, vec![(200, true), (at, false)], "{start}");
        assert_eq!(bad.len(), usize::from(start == 202), "{start}: {bad:#?}");
    }
}

/// `PartitionRegistrationTest.testPartitionControlInfoMergeAndDiff`, `testElectionWasClean`,
/// `testDirectories`: `a` (replicas [1, 2, 3], ISR [1, 2], leader 1, epochs 0) merged with
/// leader 3 and ISR [3] is `b` (leader epoch 1, partition epoch 1); then ISR [1]... as `c`
/// (ELR [2], last known ELR [3], only the partition epoch raised). The replicas [3, 2, 1]
/// map to their directories by position (`directory(1)` is the third). `electionWasClean`
/// (the log line's test, the ISR before) calls the election of 3 unclean; the controller
/// judges the ISR the change targets (`isValidNewLeader`): at 3.2+ without RECOVERING it is
/// that ISR's member, and klogscan follows the controller (findings.md). Near miss: the
/// change writing RECOVERING (1): `unclean_leader_election`.
#[test]
fn merges_and_the_directory_of_each_replica() {
    for recovering in [false, true] {
        let dirs = [1u8, 2, 3].map(|n| directory_uuid(i32::from(n), "x"));
        let mut a = partition("orders", 0, &[3, 2, 1], &[1, 2], (1, 0, 0));
        if let MetaRecord::Partition(p) = &mut a {
            p.directories = dirs.to_vec();
        }
        let mut m = MetaLog::new(T0 - 60 * SEC);
        m.batch(&[metadata_version(23), topic("orders"), a]);
        m.batch(&[change("orders", 0, |c| {
            c.leader = 3;
            c.isr = Some(vec![3]);
            if recovering {
                c.leader_recovery_state = 1;
            }
        })]);
        m.batch(&[change("orders", 0, |c| {
            c.isr = Some(vec![1]);
            c.eligible_leader_replicas = Some(vec![2]);
            c.last_known_elr = Some(vec![3]);
        })]);
        let d = tempfile::tempdir().unwrap();
        m.write(d.path());
        let h = crate::common::kraft::history(d.path());
        let t = h.timeline("orders", 0).unwrap();
        let b = &t.steps[1].state;
        assert_eq!((b.leader, b.leader_epoch, b.partition_epoch), (3, 1, 1));
        let c = t.current().unwrap();
        assert_eq!(
            (c.leader, c.leader_epoch, c.partition_epoch),
            (3, 1, 2),
            "only the partition epoch moves"
        );
        assert_eq!(
            (c.elr.clone(), c.last_known_elr.clone()),
            (vec![2], vec![3])
        );
        assert_eq!(
            [1, 2, 3, 4].map(|r| c.directory(r)),
            [Some(dirs[2]), Some(dirs[1]), Some(dirs[0]), None]
        );
        let (s, _) = crate::common::kraft::findings(d.path(), Kind::UncleanLeaderElection);
        assert_eq!(s.len(), usize::from(recovering), "{recovering}");
    }
}

/// `FeaturesImageTest.testApplyDelta1`, `testApplyDelta2`: feature levels change, are removed
/// (level 0) and come back, none of them `metadata.version`, which stays the snapshot's
/// (`FeaturesDelta.replay` keeps it apart). klogscan keeps only `metadata.version` (the one
/// level its rules read); the others are records `dump` shows. Near miss: a
/// `metadata.version` record in the delta (4.0-IV2, 24): the version from its offset on.
#[test]
fn feature_levels_other_than_the_metadata_version_leave_it_alone() {
    let level = |name: &str, l: i16| MetaRecord::FeatureLevel {
        name: name.into(),
        feature_level: l,
    };
    for near in [false, true] {
        let mut m = MetaLog::starting_at(T0 - 10 * SEC, END);
        m.snapshot_at(
            END,
            vec![metadata_version(23), level("foo", 2), level("bar", 1)],
        );
        m.batch(&[level("foo", 3), level("bar", 0), level("baz", 8)]);
        let mut delta2 = vec![level("foo", 0), level("baz", 0), level("bar", 1)];
        if near {
            delta2.push(metadata_version(24));
        }
        let at = m.batch(&delta2);
        let d = tempfile::tempdir().unwrap();
        m.write(d.path());
        let h = crate::common::kraft::history(d.path());
        let want = if near { 24 } else { 23 };
        assert_eq!(h.metadata_version(), Some(want), "{near}");
        assert_eq!(h.history.metadata_version_at(at), Some(23));
        let text = super::dump(&d.path().join(format!("__cluster_metadata-0/{END:020}.log")));
        assert!(text.contains(r#""name":"baz","featureLevel":8"#), "{text}");
    }
}
