//! The findings over broker data: the canonical unclean election (what it cost on the old
//! leader's copy, the replica divergence and hanging transaction it explains), elections seen
//! only in the metadata log, clean histories, the metadata log's own findings, the epochs the
//! brokers wrote against the replayed history, and the `history` command and HTML report.

use super::*;

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

/// The one `unclean_leader_election` finding of `r` (fails when there are none or several).
fn the_unclean_election(r: &ScanReport) -> &Finding {
    let u = of_kind(r, Kind::UncleanLeaderElection);
    assert_eq!(u.len(), 1, "{:#?}", r.findings);
    u[0]
}

/// Broker 1's log dir `root/b1` (cluster `c1`) with `orders-0` holding five plain records
/// at each leader epoch of `epochs` in turn from `T0`, and the metadata log `m` beside it.
fn broker_1_with_epochs(root: &Path, epochs: &[i32], m: &MetadataLogBuilder) {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(epochs[0]);
    for &epoch in epochs {
        p.set_leader_epoch(epoch);
        p.append(Batch::new(Producer::PLAIN).records(5));
    }
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p)
        .write(&root.join("b1"))
        .unwrap();
    m.write(&root.join("b1")).unwrap();
}

/// `klogscan history ARGS DIR`, run to its end.
fn history_command(args: &[&str], dir: &Path) -> std::process::Output {
    assert_cmd::Command::cargo_bin("klogscan")
        .unwrap()
        .arg("history")
        .args(args)
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn the_canonical_unclean_election_costs_twenty_offsets_and_explains_the_divergence() {
    let d = tempfile::tempdir().unwrap();
    canonical(d.path(), false);
    let r = scan(d.path());
    let u = the_unclean_election(&r);
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
    let u = the_unclean_election(&r);
    let hanging = of_kind(&r, Kind::HangingTransaction);
    let on_b2: Vec<_> = hanging
        .iter()
        .filter(|f| f.source.broker_id == Some(2))
        .collect();
    assert_eq!(on_b2.len(), 1, "{:#?}", r.findings);
    assert!(on_b2[0].caused_by.contains(&u.id), "{:#?}", on_b2[0]);
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
    let u = the_unclean_election(&r);
    assert_eq!(u.offset, None);
    assert_eq!(u.severity, Severity::Warning);
    assert!(u.evidence["start_offset_unknown"].is_string());
    assert_eq!(u.evidence["metadata_offset"], 6);
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
    let u = the_unclean_election(&r);
    assert_eq!(u.severity, Severity::Info);
    assert_eq!(u.evidence["single_replica"], true);
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
    // The snapshot at offset 50 holds the partition at epoch 8; the log goes on. The
    // snapshot's KRaft epoch is the log's (1): one above it would make the node truncate
    // the log fully to the snapshot (`KafkaMetadataLog.truncateToLatestSnapshot`).
    let mut m = MetadataLogBuilder::new(T0).start_offset(40).snapshot(
        50,
        1,
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
    broker_1_with_epochs(d.path(), &[8, 9, 11], &m);
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

    // A directory in the file's place: its epochs are unknown, not none — not judged, and
    // the file named once (before: taken for an absent file, in silence).
    let file = d.path().join("b1/orders-0/leader-epoch-checkpoint");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let r = scan(d.path());
    assert!(
        of_kind(&r, Kind::LeaderEpochCheckpointMismatch).is_empty(),
        "{:#?}",
        r.findings
    );
    let u = of_kind(&r, Kind::UnreadableFile);
    assert_eq!(u.len(), 1, "{:#?}", r.findings);
    assert_eq!(
        (u[0].segment.as_deref(), &u[0].evidence["reason"]),
        (
            Some("leader-epoch-checkpoint"),
            &serde_json::json!("special_file")
        )
    );
    std::fs::remove_dir(&file).unwrap();

    // A batch at epoch 10, which had no leader: the history never gave it.
    let d = tempfile::tempdir().unwrap();
    broker_1_with_epochs(d.path(), &[8, 10], &m);
    let r = scan(d.path());
    let f = of_kind(&r, Kind::LeaderEpochCheckpointMismatch);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(
        (f[0].offset, &f[0].evidence["epoch"]),
        (Some(5), &serde_json::json!(10))
    );
}

#[test]
fn the_history_command_prints_the_timeline_as_a_table_and_as_json() {
    let d = tempfile::tempdir().unwrap();
    canonical(d.path(), false);
    let out = history_command(&["--topic", "orders"], d.path());
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("orders-0 (topic id"), "{text}");
    let unclean: Vec<&str> = text.lines().filter(|l| l.ends_with("UNCLEAN")).collect();
    assert_eq!(unclean.len(), 1, "{text}");
    assert!(unclean[0].contains("[2]"), "{text}");

    let out = history_command(&["--format", "json", "--partition", "0"], d.path());
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
    let until = (T0 + HOUR / 2).to_string();
    let out = history_command(&["--format", "json", "--until", &until], d.path());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["clusters"][0]["partitions"][0]["rows"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let empty = tempfile::tempdir().unwrap();
    let out = history_command(&[], empty.path());
    assert_eq!(out.status.code(), Some(2));
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
    broker_1_with_epochs(d.path(), &[8, 9], &m);
    let r = scan(d.path());
    assert!(
        of_kind(&r, Kind::LeaderEpochCheckpointMismatch).is_empty(),
        "{:#?}",
        r.findings
    );
}

#[test]
fn the_html_report_draws_the_leader_epochs_beside_the_producers() {
    let d = tempfile::tempdir().unwrap();
    canonical(d.path(), false);
    let o = ScanOptions::default().with_collect_timelines(true);
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
