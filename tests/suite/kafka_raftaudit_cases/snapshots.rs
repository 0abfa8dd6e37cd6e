//! Snapshots a follower fetches or never finished fetching, a tail below the leader's log
//! start, and the metadata log's `leader-epoch-checkpoint`.

use super::{all_at_end, bootstrap, history_log, life, loud, part_dir, qs_v1, run, snap};
use crate::kafka_quiet_cluster_cases::kraft::isr;
use crate::kafka_quiet_kraft_cases::{
    Node, Step, VOTERS, copy, data, elect, end_of, epoch_of, reported,
};
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;

/// [`life`]'s nodes, the voters and broker 1 cleaned below their snapshot (13, 3), broker 2
/// offline since offset 8 (epoch 1): its log ends below every other copy's start.
fn behind_the_log_start() -> Vec<Node> {
    let s = life();
    let mut ns = all_at_end(&s, 3002);
    for n in &mut ns[..4] {
        n.log = copy(&s, 13);
        n.snapshots.push(snap(13, 3, Some(VOTERS.to_vec())));
    }
    ns[4].log = copy(&s[..6], 0);
    ns[4].quorum_state = qs_v1(3000, 1, -1, -1);
    ns
}

/// `KafkaRaftClientSnapshotTest.testFetchRequestOffsetLessThanLogStart`,
/// `KafkaRaftClientSnapshotTest.testFetchResponseWithSnapshotId`,
/// `KafkaRaftClientSnapshotTest.testFetchSnapshotResponsePartialData`: a follower whose log
/// ends below the leader's log start is answered with the leader's snapshot id and fetches
/// the snapshot in chunks into `<id>-<random>.checkpoint.part`; only the last chunk freezes it
/// under its `.checkpoint` name, after which the log is truncated fully to it. Broker 2
/// stopped mid-fetch: half of snapshot (13, 3) as a `.part` above its log end (8). Its next
/// start deletes the `.part` unread (`recoverSnapshots`), opens its own log and fetches
/// again. Nothing to report, with or without the `.part`; the cluster's history is the
/// leaders' (to 14), broker 2's copy is read to 8.
#[test]
fn a_follower_stopped_while_fetching_the_leaders_snapshot() {
    for partial in [false, true] {
        let (b, _) = run(behind_the_log_start());
        if partial {
            let part = part_dir(&b, 2);
            let full = part_dir(&b, 1).join("00000000000000000013-0000000003.checkpoint");
            let bytes = std::fs::read(full).unwrap();
            std::fs::write(
                part.join("00000000000000000013-0000000003-6172635.checkpoint.part"),
                &bytes[..bytes.len() / 2],
            )
            .unwrap();
        }
        let v = b.check();
        v.assert_quiet();
        let log = history_log(&b);
        assert_eq!(
            (log.last_epoch, log.end_offset),
            (3, 14),
            "partial {partial}"
        );
        assert!(!log.path.contains("broker-2/"), "{}", log.path);
    }
}

/// `KafkaRaftClientSnapshotTest.testFetchRequestWithLastFetchedEpochLessThanOldestSnapshot`,
/// `KafkaRaftClientSnapshotTest.testFetchRequestTruncateToLogStart`: 3001 led epoch 2 and
/// appended three records (10–12) no one fetched before it crashed; 3000 won epoch 3 from
/// offset 10, and the nodes cleaned their logs below the snapshot (13, 3). 3001's tail now
/// lies below the leader's log start: its fetch (last epoch 2, offset 13) is answered with
/// the snapshot id, it fetches the snapshot and truncates its log fully — the tail was never
/// committed (epoch 3 started at 10). Nothing at warning: the history follows the epoch-3
/// copies and 3001's is read as it is.
#[test]
fn a_former_leaders_tail_below_the_new_leaders_log_start() {
    let mut base = bootstrap();
    base.extend([elect(3001, &VOTERS), data(vec![isr("orders", 0, &[1])])]);
    let mut mine = base.clone();
    mine.extend([
        data(vec![isr("orders", 0, &[1, 2])]),
        data(vec![MetaRecord::NoOp]),
        data(vec![MetaRecord::NoOp]),
    ]);
    let mut theirs = base;
    theirs.extend([
        Step::Elect {
            leader: 3000,
            voters: VOTERS.to_vec(),
            granting: vec![3000, 3002],
        },
        data(vec![isr("orders", 0, &[1, 2])]),
        data(vec![MetaRecord::NoOp]),
        data(vec![MetaRecord::NoOp]),
        data(vec![MetaRecord::NoOp]),
    ]);
    assert_eq!((end_of(&mine), end_of(&theirs)), (13, 15));
    let mut ns = all_at_end(&theirs, 3000);
    for n in &mut ns {
        if n.id == 3001 {
            n.log = copy(&mine, 0);
            n.quorum_state = qs_v1(3001, 2, 3001, 3001);
        } else {
            n.log = copy(&theirs, 13);
            n.snapshots.push(snap(13, 3, Some(VOTERS.to_vec())));
        }
    }
    let (b, v) = run(ns);
    v.assert_no_alarm();
    let log = history_log(&b);
    assert_eq!((log.last_epoch, log.end_offset), (epoch_of(&theirs), 15));
    assert!(!log.path.contains("broker-3001"), "{}", log.path);
}

/// `KafkaRaftClientTest.testLeaderImmediatelySendsDivergingEpoch`: the leader answers a
/// follower's fetch with the end of the follower's last epoch from its leader-epoch cache
/// (`KafkaMetadataLog.endOffsetForEpoch`). `KafkaMetadataLog` opens its log as after an
/// unclean shutdown from recovery point 0, but the recovery keeps the cache it read from
/// `leader-epoch-checkpoint`: `LogSegment.recover` assigns a batch's epoch only when it is
/// above the cache's latest, and the load truncates the cache at the log end only. So 3001's
/// checkpoint disagreeing with its batches (epoch 2 from offset 5 and 3 from 9, where the
/// batches say 8 and 11) outlives its restart, and as a leader it would answer fetches from
/// those wrong entries: `leader_epoch_checkpoint_mismatch` (warning) on 3001's copy, and
/// nothing else. Near miss: the files as the batches say (the other nodes', and 3001's
/// before the edit) draw nothing.
#[test]
fn a_metadata_logs_epoch_checkpoint_against_its_batches() {
    let s = life();
    let (b, v) = run(all_at_end(&s, 3002));
    v.assert_quiet();
    let lec = part_dir(&b, 3000).join("leader-epoch-checkpoint");
    let good = std::fs::read_to_string(&lec).unwrap();
    assert!(good.contains("2 8") && good.contains("3 11"), "{good}");
    std::fs::write(
        part_dir(&b, 3001).join("leader-epoch-checkpoint"),
        "0\n3\n1 0\n2 5\n3 9\n",
    )
    .unwrap();
    let v = b.check();
    let r = reported(&v, Kind::LeaderEpochCheckpointMismatch);
    assert!(!r.is_empty(), "{:#?}", loud(&v));
    assert!(
        (r.iter()).all(|f| f.topic == "__cluster_metadata"
            && f.source.broker_id == Some(3001)
            && f.severity == Severity::Warning),
        "{r:#?}"
    );
    let others: Vec<_> = (v.scan.findings.iter())
        .chain(v.verify.findings())
        .chain(v.merge.findings.iter())
        .filter(|f| f.severity >= Severity::Warning)
        .filter(|f| f.kind != Kind::LeaderEpochCheckpointMismatch)
        .collect();
    assert!(others.is_empty(), "{:#?}", loud(&v));
}
