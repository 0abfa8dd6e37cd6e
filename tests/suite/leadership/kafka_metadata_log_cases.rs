//! `KafkaMetadataLogTest` (core/src/test/scala/kafka/raft/): which snapshot and which records
//! of a `__cluster_metadata-0` directory a KRaft node loads when it starts
//! (`KafkaMetadataLog.apply`: `recoverSnapshots`, then `truncateToLatestSnapshot`; then
//! `KafkaRaftClient` hands the metadata loader the latest snapshot and the log after it).
//! Each test writes the directory Kafka's test leaves and checks that the history is the
//! state the node's metadata loader publishes.

use super::*;

/// `orders-0` as the latest snapshot holds it (led by 2 at leader epoch 3).
fn snapshot_state() -> Vec<MetaRecord> {
    vec![
        topic(),
        broker(1),
        broker(2),
        partition(&[1, 2], &[1, 2], 2, 3),
    ]
}

/// `KafkaMetadataLogTest.testCreateReplicatedLogTruncatesFully` and
/// `testTruncateFullyToLatestSnapshot`: a follower downloaded the leader's snapshot and
/// crashed before it truncated its log (`KafkaMetadataLog.apply`'s comment). Its log holds
/// offsets 0–3 at KRaft epoch 1; the snapshot ends at offset 10, at epoch 2 (the first
/// test) or at epoch 1 (the second: its end above the log end offset is enough). At start
/// `truncateToLatestSnapshot` sees the latest snapshot's epoch above the log's latest epoch,
/// or the same epoch and its offset above the log end offset, and truncates the log fully
/// (`truncateFullyAndStartAt(snapshot offset)`): log start = end = 10, and the metadata
/// loader loads that snapshot (`orders-0` led by 2 at epoch 3). The log's own records
/// (led by 1 at epoch 0) are gone.
///
/// klogscan ignores every snapshot when the segments start at offset 0
/// (`load.rs` `starting_snapshot`: `Some(0) => None`), so the history is the discarded
/// log's state and lacks the snapshot's (see the twin for the shape where both agree:
/// `testDoesntTruncateFully`, a snapshot at the log end offset at an older or equal epoch).
#[test]
fn a_snapshot_above_the_log_end_replaces_the_log_kafka_metadata_log_truncates_fully() {
    // (snapshot end, snapshot epoch, truncates fully per Kafka)
    for (end, epoch, truncates) in [(4, 1, false), (4, 0, false), (10, 2, true), (10, 1, true)] {
        let d = tempfile::tempdir().unwrap();
        let state = if truncates {
            snapshot_state()
        } else {
            // A snapshot at the log end: the log's own state.
            vec![
                topic(),
                broker(1),
                broker(2),
                partition(&[1, 2], &[1, 2], 1, 0),
            ]
        };
        let mut b = MetadataLogBuilder::new(T0).snapshot(end, epoch, state);
        b.batch(&[topic(), broker(1), broker(2)]);
        b.batch(&[partition(&[1, 2], &[1, 2], 1, 0)]);
        assert_eq!(b.next_offset(), 4);
        b.write(d.path()).unwrap();
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let h = leadership::load_all(&inv, None, 64 << 20);
        assert_eq!(h.len(), 1);
        let now = h[0]
            .timeline("orders", 0)
            .and_then(|t| t.current().cloned())
            .expect("orders-0's state");
        let want = if truncates { (2, 3) } else { (1, 0) };
        assert_eq!(
            (now.leader, now.leader_epoch),
            want,
            "snapshot {end}-{epoch} over a log ending at 4 (epoch 1): Kafka {}",
            if truncates {
                "truncates the log fully and loads the snapshot"
            } else {
                "keeps the log"
            }
        );
        if truncates {
            assert_eq!(
                h[0].log.snapshot.as_ref().map(|s| (s.end_offset, s.epoch)),
                Some((end, epoch)),
                "the history starts at the snapshot the node loads"
            );
        }
    }
}

/// `KafkaMetadataLogTest.testCleanupOlderSnapshots` / `testTruncateWillRemoveOlderSnapshot`:
/// with several snapshots the node keeps the latest one; when its end is above the log end
/// offset the log is truncated fully to it and the older snapshots are forgotten. Here the
/// log's segments start at 40 (segments below an older snapshot deleted), snapshot
/// 50 (epoch 3) lies inside the log, and snapshot 80 (epoch 4) above its end (60).
/// Kafka: log start = end = 80, the loader loads snapshot 80 (`orders-0` led by 2 at
/// epoch 12). klogscan starts at the OLDEST snapshot the segments reach
/// (`starting_snapshot`: `find(end_offset >= base)`), 50, and replays the log to 60: led by
/// 1 at epoch 9.
#[test]
fn the_latest_snapshot_above_the_log_end_wins_over_an_older_one_inside_the_log() {
    let d = tempfile::tempdir().unwrap();
    let mut b = MetadataLogBuilder::new(T0).start_offset(40).snapshot(
        50,
        3,
        vec![
            topic(),
            broker(1),
            broker(2),
            partition(&[1, 2], &[1, 2], 1, 8),
        ],
    );
    b.raft_epoch(3);
    for _ in 0..10 {
        b.batch(&[broker(3)]); // 40..49, in snapshot 50
    }
    b.batch(&[change(|c| c.leader = 2)]); // 50: epoch 9
    for _ in 0..9 {
        b.batch(&[broker(3)]);
    }
    assert_eq!(b.next_offset(), 60);
    let part = b.write(d.path()).unwrap();
    // The newer snapshot, 80-4, beside it.
    let other = tempfile::tempdir().unwrap();
    let mut newer = MetadataLogBuilder::new(T0).start_offset(80).snapshot(
        80,
        4,
        vec![
            topic(),
            broker(1),
            broker(2),
            partition(&[1, 2], &[1, 2], 2, 12),
        ],
    );
    newer.batch(&[broker(3)]);
    let other_part = newer.write(other.path()).unwrap();
    let name = format!("{:020}-{:010}.checkpoint", 80, 4);
    std::fs::copy(other_part.join(&name), part.join(&name)).unwrap();

    let inv = layout::discover(&[d.path().to_path_buf()]);
    let h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1);
    assert_eq!(
        h[0].log.snapshot.as_ref().map(|s| s.end_offset),
        Some(80),
        "KafkaMetadataLog.truncateToLatestSnapshot: the log ends (60) below the latest snapshot"
    );
    let now = h[0]
        .timeline("orders", 0)
        .and_then(|t| t.current().cloned())
        .expect("orders-0's state");
    assert_eq!((now.leader, now.leader_epoch), (2, 12));
}

/// `KafkaMetadataLogTest.testStartupWithInvalidSnapshotState`: a metadata log whose
/// segments start at 100 with no snapshot at or above 100 (only one at 50) makes
/// `KafkaMetadataLog.recoverSnapshots` throw `IllegalStateException("Inconsistent snapshot
/// state: there must be a snapshot at an offset larger then the current log start offset
/// …")`: the node does not start. Offsets 50–99 are in neither file.
///
/// klogscan replays snapshot 50 and then the log from 100 as if they joined
/// (`starting_snapshot`'s `.or(snapshots.last())`), recording no gap: the change at 100 is
/// judged against the snapshot's ISR although the records between could have changed it
/// (an ISR expansion to [1, 2] makes this a clean election). The span the directory lacks
/// is unknown, not the snapshot's state: the history should mark a gap before the
/// election (`history_gap_before`), as for a record it cannot read. (Kafka's own verdict —
/// the node refuses to start — is not reported at all.)
#[test]
fn a_log_starting_above_its_only_snapshot_is_a_gap_kafka_refuses_to_start() {
    let d = tempfile::tempdir().unwrap();
    let mut b = MetadataLogBuilder::new(T0).start_offset(100).snapshot(
        50,
        1,
        vec![
            topic(),
            broker(1),
            broker(2),
            partition(&[1, 2], &[1], 1, 5),
        ],
    );
    b.batch(&[change(|c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
    })]);
    b.write(d.path()).unwrap();
    let inv = layout::discover(&[d.path().to_path_buf()]);
    let h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1);
    assert!(
        h[0].log.gaps.iter().any(|&g| (50..100).contains(&g)),
        "offsets 50..100 are in neither the snapshot nor the log: gaps {:?}",
        h[0].log.gaps
    );
    let r = scan(d.path());
    for f in of_kind(&r, Kind::UncleanLeaderElection) {
        assert!(
            f.evidence.get("history_gap_before").is_some(),
            "an election judged across the missing offsets 50..100: {:#?}",
            f
        );
    }
}

/// The same log with no snapshot at all: the records below its start (100) are in no file,
/// so the history misses them from offset 0 and an election it judges says so; the log
/// starting at 0 has no such gap (its twin).
#[test]
fn a_log_starting_above_0_without_a_snapshot_misses_its_history_from_0() {
    for start in [100, 0] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(T0).start_offset(start);
        b.batch(&[
            topic(),
            broker(1),
            broker(2),
            partition(&[1, 2], &[1], 1, 5),
        ]);
        b.batch(&[change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
        })]);
        b.write(d.path()).unwrap();
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let h = leadership::load_all(&inv, None, 64 << 20);
        assert_eq!(h.len(), 1);
        let want: &[i64] = if start > 0 { &[0] } else { &[] };
        assert_eq!(h[0].log.gaps, want, "log from {start}");
    }
}

/// `verify`'s findings of `kind` over the inputs under `root`.
fn verify_findings(root: &Path, kind: Kind) -> Vec<Finding> {
    let a = klogscan::request::verify(&klogscan::request::Request::new([root]), None).unwrap();
    a.report
        .partitions
        .iter()
        .flat_map(|p| p.findings.iter().cloned())
        .filter(|f| f.kind == kind)
        .collect()
}

/// Flip a byte inside the `n`th batch (from 0) of `part`'s first segment: it fails its CRC.
fn corrupt_batch(part: &Path, n: usize) {
    let seg = part.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&seg).unwrap();
    let len = |at: usize| u32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
    let mut at = 0;
    for _ in 0..n {
        at += len(at) + 12;
    }
    bytes[at + 70] ^= 0x01;
    std::fs::write(&seg, bytes).unwrap();
}

/// The twin of `the_latest_snapshot_above_the_log_end_wins_over_an_older_one_inside_the_log`
/// (`KafkaMetadataLogTest.testDoesntTruncateFully`'s shape with two snapshots): the latest
/// snapshot, 55 at epoch 3, lies inside the log (40–59, epoch 3), so
/// `truncateToLatestSnapshot` keeps the log and the history still starts at the oldest
/// snapshot the segments continue from (50) and replays the log's records from there: the
/// change at 50 makes 2 the leader at epoch 9.
#[test]
fn a_latest_snapshot_inside_the_log_keeps_the_log_and_the_replay_from_the_oldest() {
    let d = tempfile::tempdir().unwrap();
    let state = |leader, epoch| {
        vec![
            topic(),
            broker(1),
            broker(2),
            partition(&[1, 2], &[1, 2], leader, epoch),
        ]
    };
    let mut b = MetadataLogBuilder::new(T0)
        .start_offset(40)
        .snapshot(50, 3, state(1, 8));
    b.raft_epoch(3);
    for _ in 0..10 {
        b.batch(&[broker(3)]);
    }
    b.batch(&[change(|c| c.leader = 2)]); // 50: epoch 9
    for _ in 0..9 {
        b.batch(&[broker(3)]);
    }
    let part = b.write(d.path()).unwrap();
    let other = tempfile::tempdir().unwrap();
    let newer = MetadataLogBuilder::new(T0)
        .start_offset(55)
        .snapshot(55, 3, state(2, 9));
    let name = format!("{:020}-{:010}.checkpoint", 55, 3);
    std::fs::copy(
        newer.write(other.path()).unwrap().join(&name),
        part.join(&name),
    )
    .unwrap();

    let inv = layout::discover(&[d.path().to_path_buf()]);
    let h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h[0].log.snapshot.as_ref().map(|s| s.end_offset), Some(50));
    assert_eq!((h[0].log.last_epoch, h[0].log.end_offset), (3, 60));
    let steps = &h[0].timeline("orders", 0).expect("orders-0").steps;
    assert_eq!(
        steps
            .iter()
            .map(|s| (s.state.leader, s.state.leader_epoch))
            .collect::<Vec<_>>(),
        vec![(1, 8), (2, 9)],
        "the snapshot's state, then the log's change at 50"
    );
}

/// The metadata log is recovered from offset 0 at every start (`KafkaMetadataLog.apply`:
/// recovery point 0): a batch that fails its CRC ends the log there (`LogSegment.recover`
/// truncates at it). A snapshot above that point, at the log's epoch, is then past the log
/// end, and `truncateToLatestSnapshot` truncates the log fully to it: the node starts from
/// the snapshot (led by 2 at epoch 3), not from the records before the damage with a gap.
/// The twin: a snapshot at the damaged batch's offset (3) is not past the recovered log
/// end (3): the log is kept, the history replays it from 0 and ends at 3 (`recovery_stop`).
#[test]
fn a_corrupt_batch_below_a_newer_snapshot_makes_the_node_start_from_the_snapshot() {
    for (end, truncates) in [(10, true), (3, false)] {
        let d = tempfile::tempdir().unwrap();
        let state = if truncates {
            snapshot_state()
        } else {
            vec![topic(), broker(1), broker(2)]
        };
        let mut b = MetadataLogBuilder::new(T0).snapshot(end, 1, state);
        b.batch(&[topic(), broker(1), broker(2)]);
        b.batch(&[partition(&[1, 2], &[1, 2], 1, 0)]);
        let part = b.write(d.path()).unwrap();
        corrupt_batch(&part, 1);
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let h = leadership::load_all(&inv, None, 64 << 20);
        let log = &h[0].log;
        if truncates {
            assert_eq!(log.snapshot.as_ref().map(|s| s.end_offset), Some(10));
            assert!(log.gaps.is_empty(), "{:?}", log.gaps);
            assert_eq!((log.last_epoch, log.end_offset), (1, 10));
            let now = h[0]
                .timeline("orders", 0)
                .and_then(|t| t.current().cloned());
            assert_eq!(now.map(|s| (s.leader, s.leader_epoch)), Some((2, 3)));
        } else {
            assert_eq!(log.snapshot, None, "the log from 0 is kept");
            assert_eq!(log.recovery_stop, Some(3), "recovery truncates at 3");
            assert!(
                log.gaps.is_empty(),
                "the stop ends the history: {:?}",
                log.gaps
            );
        }
    }
}

/// `testStartupWithInvalidSnapshotState`, as `scan` and `verify` report it: a live metadata log whose
/// segments start at 100 above its only snapshot (50) does not start
/// (`metadata_snapshot_inconsistent`, error). Twins: a snapshot at 100 reaches the log
/// start (no finding, no gap in the history); the same files in a `-delete` copy are
/// never opened by `KafkaMetadataLog.apply` (no finding).
#[test]
fn verify_says_a_node_whose_metadata_log_starts_above_every_snapshot_does_not_start() {
    for (snapshot_end, delete_copy, fires) in
        [(50, false, true), (100, false, false), (50, true, false)]
    {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(T0).start_offset(100).snapshot(
            snapshot_end,
            1,
            snapshot_state(),
        );
        b.batch(&[broker(3)]);
        let part = b.write(d.path()).unwrap();
        if delete_copy {
            let to = d
                .path()
                .join("__cluster_metadata-0.0123456789abcdef0123456789abcdef-delete");
            std::fs::rename(&part, to).unwrap();
        }
        let f = verify_findings(d.path(), Kind::MetadataSnapshotInconsistent);
        assert_eq!(
            f.len(),
            usize::from(fires),
            "snapshot {snapshot_end}, delete copy {delete_copy}: {f:#?}"
        );
        if fires {
            assert_eq!(f[0].severity, Severity::Error);
            assert_eq!(f[0].offset, Some(100));
            assert_eq!(f[0].evidence["log_start_offset"], 100);
            assert_eq!(
                f[0].evidence["snapshots_below_log_start"][0]["end_offset"],
                50
            );
            assert!(f[0].message.contains("does not start"), "{}", f[0].message);
        }
        // `scan` says it too (the metadata log's own files prove the next start fails),
        // once: verify carries the scan's finding rather than drawing its own.
        let scanned = scan(d.path());
        assert_eq!(
            of_kind(&scanned, Kind::MetadataSnapshotInconsistent).len(),
            usize::from(fires),
            "scan: snapshot {snapshot_end}, delete copy {delete_copy}"
        );
        if !delete_copy {
            let inv = layout::discover(&[d.path().to_path_buf()]);
            let h = leadership::load_all(&inv, None, 64 << 20);
            assert_eq!(h[0].log.gaps.is_empty(), !fires, "{:?}", h[0].log.gaps);
        }
    }
}

/// The log of `orders-0` whose third batch (offset 4: 2 becomes leader) fails its CRC and
/// whose fourth (offset 5: 1 leads again, at leader epoch 2) follows it.
fn log_with_a_tail(dir: &Path, node: i32, corrupt: bool) -> std::path::PathBuf {
    std::fs::write(
        dir.join("meta.properties"),
        format!("version=1\nnode.id={node}\ncluster.id=c1\n"),
    )
    .unwrap();
    let mut b = MetadataLogBuilder::new(T0);
    b.batch(&[topic(), broker(1), broker(2)]); // 0..=2
    b.batch(&[partition(&[1, 2], &[1, 2], 1, 0)]); // 3
    b.batch(&[change(|c| c.leader = 2)]); // 4: epoch 1
    b.batch(&[change(|c| c.leader = 1)]); // 5: epoch 2
    let part = b.write(dir).unwrap();
    if corrupt {
        corrupt_batch(&part, 2);
    }
    part
}

/// The metadata log is recovered from offset 0 at EVERY start, clean or not
/// (`KafkaMetadataLog.apply` opens `UnifiedLog` with recovery point 0 and the last shutdown
/// taken as unclean, since Kafka 2.8): `LogSegment.recover` meets the batch at offset 4 that
/// fails its CRC and `LogLoader.recoverLog` truncates the log there, so the records after it
/// (offset 5) are not in this node's log after its next start — it fetches them again from
/// the leader. The history of this copy ends at 4 and says so (`recovery_stop`): 1 leads at
/// epoch 0. The twin: the same log undamaged replays both changes (1 at epoch 2).
#[test]
fn a_corrupt_metadata_batch_ends_the_history_of_its_copy() {
    for corrupt in [true, false] {
        let d = tempfile::tempdir().unwrap();
        log_with_a_tail(d.path(), 1, corrupt);
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let h = leadership::load_all(&inv, None, 64 << 20);
        let log = &h[0].log;
        let now = h[0]
            .timeline("orders", 0)
            .and_then(|t| t.current().cloned());
        let now = now.map(|s| (s.leader, s.leader_epoch));
        let view = leadership::views(&inv, &Default::default());
        assert_eq!(
            view[0].recovery_stop, log.recovery_stop,
            "history shows the stop"
        );
        if corrupt {
            assert_eq!(log.recovery_stop, Some(4), "{:?}", log.gaps);
            assert_eq!(now, Some((1, 0)), "nothing after the corrupt batch");
            assert_eq!(log.end_offset, 4);
            assert!(log.gaps.is_empty(), "the stop is the end, not a gap");
        } else {
            assert_eq!(log.recovery_stop, None);
            assert_eq!(now, Some((1, 2)));
            assert_eq!(log.end_offset, 6);
        }
    }
}

/// Two voters of cluster `c1`: node 1's copy has the corrupt batch at 4, node 2's holds the
/// same records intact, through offset 5. The records after node 1's damage were committed
/// (another voter holds them, at the same epoch), and node 1's recovered log (ending at 4)
/// ranks below node 2's (ending at 6) as KRaft orders logs: the history is node 2's, whole.
/// The twin: node 2's copy ends at offset 3 (it holds less than node 1's recovered log),
/// so the history is node 1's, ending at its stop.
#[test]
fn another_voters_intact_copy_carries_the_history_past_the_damage() {
    for other_whole in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("node1"), d.path().join("node2"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        log_with_a_tail(&a, 1, true);
        if other_whole {
            log_with_a_tail(&b, 2, false);
        } else {
            std::fs::write(
                b.join("meta.properties"),
                "version=1\nnode.id=2\ncluster.id=c1\n",
            )
            .unwrap();
            let mut short = MetadataLogBuilder::new(T0);
            short.batch(&[topic(), broker(1), broker(2)]);
            short.write(&b).unwrap();
        }
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let h = leadership::load_all(&inv, None, 64 << 20);
        assert_eq!(h.len(), 1, "one cluster");
        let log = &h[0].log;
        let now = h[0]
            .timeline("orders", 0)
            .and_then(|t| t.current().cloned());
        if other_whole {
            assert!(log.path.contains("/node2/"), "{}", log.path);
            assert_eq!(log.recovery_stop, None);
            assert_eq!(now.map(|s| (s.leader, s.leader_epoch)), Some((1, 2)));
        } else {
            assert!(log.path.contains("/node1/"), "{}", log.path);
            assert_eq!(log.recovery_stop, Some(4));
            assert_eq!(now.map(|s| (s.leader, s.leader_epoch)), Some((1, 0)));
        }
    }
}

/// `Snapshots.parse` reads a KRaft snapshot's name at fixed widths: the end offset in the
/// first 20 characters, the epoch in the 10 after the separator. `recoverSnapshots` parses
/// every name of the live metadata log's directory ending `.checkpoint` (or
/// `.checkpoint.part`, `.checkpoint.deleted`) and catches nothing, so a renamed snapshot —
/// `100-1.checkpoint` (too short: `StringIndexOutOfBoundsException`) or
/// `00000000000000000100-1.checkpoint` (the epoch's 10 characters are `1.checkpoi`:
/// `NumberFormatException`) — fails `KafkaMetadataLog.apply` and the node does not start:
/// `unparseable_file_name`, and the file is no snapshot of the history. Twins: the
/// canonical name (a snapshot, no finding), the short name in a data partition or in a
/// `-delete` copy of the metadata log (never parsed: no finding).
#[test]
fn a_snapshot_name_kafka_reads_at_fixed_widths_fails_the_start_when_renamed() {
    let canonical = format!("{:020}-{:010}.checkpoint", 100, 1);
    for (name, dir, exception) in [
        (
            "100-1.checkpoint",
            "live",
            Some("StringIndexOutOfBoundsException"),
        ),
        (
            "00000000000000000100-1.checkpoint",
            "live",
            Some("NumberFormatException"),
        ),
        (canonical.as_str(), "live", None),
        ("100-1.checkpoint", "delete", None),
        ("100-1.checkpoint", "data", None),
    ] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(T0).snapshot(100, 1, snapshot_state());
        b.batch(&[broker(3)]);
        let part = b.write(d.path()).unwrap();
        std::fs::rename(part.join(&canonical), part.join(name)).unwrap();
        match dir {
            "delete" => std::fs::rename(
                &part,
                d.path()
                    .join("__cluster_metadata-0.0123456789abcdef0123456789abcdef-delete"),
            )
            .unwrap(),
            "data" => {
                let orders = d.path().join("orders-0");
                std::fs::create_dir_all(&orders).unwrap();
                std::fs::rename(part.join(name), orders.join(name)).unwrap();
            }
            _ => {}
        }
        let f = verify_findings(d.path(), Kind::UnparseableFileName);
        let case = format!("{name} in a {dir} directory");
        match exception {
            Some(e) => {
                assert_eq!(f.len(), 1, "{case}: {f:#?}");
                assert_eq!(f[0].severity, Severity::Error);
                assert_eq!(f[0].segment.as_deref(), Some(name), "{case}");
                assert_eq!(f[0].evidence["exception"], e, "{case}");
                assert_eq!(f[0].evidence["parsed_by"], "kraft_snapshots", "{case}");
                assert!(f[0].message.contains("does not start"), "{}", f[0].message);
            }
            None => assert!(f.is_empty(), "{case}: {f:#?}"),
        }
        if dir == "live" {
            let inv = layout::discover(&[d.path().to_path_buf()]);
            let h = leadership::load_all(&inv, None, 64 << 20);
            let snapshot = h[0].log.snapshot.as_ref().map(|s| s.file.clone());
            let want = exception.is_none().then(|| canonical.clone());
            assert_eq!(snapshot, want, "{case}: a snapshot of the history?");
        }
    }
}
