//! The leadership history against Kafka's controller and raft behaviour: where the history
//! starts, which copy of the metadata log is replayed, the last-known-leader path, topic
//! incarnations, gaps in the history, reassignment reverts, the effective unclean config,
//! and where an old leader truncates.

use super::*;

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

/// A metadata record that does not decode is a record the replay cannot apply (the loader's
/// fault handler skips it): here the ISR expansion to [1, 2, 3], so the preferred election
/// of broker 3 that follows looks outside the ISR. The finding says the history misses a
/// record before it (`history_gap_before`) and stays a warning; the intact log shows a clean
/// election (the twin). The same batch failing its CRC instead ends this copy's history
/// there (`KafkaMetadataLog.apply` recovers the log from offset 0 at every start and
/// `LogSegment.recover` truncates at it): the election after it is not in the node's log
/// after its next start, so nothing is judged (`recovery_stop` names the batch).
#[test]
fn an_election_after_a_gap_in_the_history_is_qualified() {
    for damage in ["none", "undecodable", "crc"] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(1_700_000_000_000);
        b.batch(&[topic(), broker(1), broker(2), broker(3)]);
        b.batch(&[partition(&[3, 1, 2], &[1, 2], 1, 5)]);
        let expansion = change(|c| c.isr = Some(vec![1, 2, 3]));
        if damage == "undecodable" {
            let mut v = klogscan::testkit::metadata::encode(&expansion);
            v.truncate(6);
            b.raw_batch(vec![v]);
        } else {
            b.batch(&[expansion]);
        }
        b.batch(&[change(|c| c.leader = 3)]);
        let part = b.write(d.path()).unwrap();
        if damage == "crc" {
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
        match damage {
            "none" => assert!(f.is_empty(), "{f:#?}"),
            "crc" => {
                assert!(f.is_empty(), "{f:#?}");
                let inv = layout::discover(&[d.path().to_path_buf()]);
                let h = leadership::load_all(&inv, None, 64 << 20);
                assert_eq!(h[0].log.recovery_stop, Some(5));
            }
            _ => {
                assert_eq!(f.len(), 1, "{:#?}", r.findings);
                assert!(f[0].evidence["history_gap_before"].is_i64(), "{:#?}", f[0]);
                assert_ne!(f[0].severity, Severity::Error);
                assert!(f[0].message.contains("may be stale"), "{}", f[0].message);
            }
        }
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

/// The same revert after a reassignment that only added replicas (a replication-factor
/// increase: no removing replicas, so the cancelling record writes none): still unclean,
/// and named so.
#[test]
fn a_revert_of_a_reassignment_that_only_added_replicas_is_unclean() {
    let h = history(&[
        MetaRecord::FeatureLevel {
            name: "metadata.version".into(),
            feature_level: 20,
        },
        topic(),
        partition(&[1, 2, 3], &[1, 2, 3], 1, 10),
        change(|c| {
            c.replicas = Some(vec![1, 2, 3, 4]);
            c.adding_replicas = Some(vec![4]);
        }),
        change(|c| c.isr = Some(vec![1, 2, 3, 4])),
        change(|c| {
            c.leader = 4;
            c.isr = Some(vec![4]);
        }),
        change(|c| {
            c.leader = 1;
            c.isr = Some(vec![1]);
            c.replicas = Some(vec![1, 2, 3]);
            c.adding_replicas = Some(vec![]);
        }),
    ]);
    let last = h.elections.last().expect("elections");
    assert_eq!((last.leader, last.choice), (1, Choice::Unclean));
    assert!(last.reassignment_revert);
}
