//! Leadership moves on a tiered partition: the segments uploaded by one leader, the next
//! leader's uploads at a higher leader epoch, a follower whose state was built from the
//! remote storage (`TierStateMachine.buildRemoteLogAuxState`), the metadata partition
//! hosted by other brokers than the user partition's.

use super::{check, history};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::remote_log::TieredLog;
use std::path::Path;

/// Broker 0 led epochs 0 and 1 and copied [0,19], [20,39], [40,59]; broker 1 became leader
/// in epoch 2 (at 70) and copied [60,79] (epochs 1 then 2). Written as broker `broker`'s
/// replica with its local log from segment `local_from` and the lineage `lineage` (the
/// history's when `None`).
fn moved(broker: i32, local_from: usize, lineage: Option<&[(i32, i64)]>) -> TieredLog {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.copy(2);
    t.broker(1);
    t.copy(3);
    t.local_from(local_from);
    t.log_start(0);
    if let Some(l) = lineage {
        t.lineage(l);
    }
    t.broker(broker);
    t
}

/// Drop partition `name` from log dir `dir`: its directory and its checkpoint entries (a
/// broker that does not host it has neither).
fn drop_partition(dir: &Path, name: &str) {
    std::fs::remove_dir_all(dir.join(name)).unwrap();
    let (topic, part) = name.rsplit_once('-').unwrap();
    for f in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
        "log-start-offset-checkpoint",
    ] {
        let p = dir.join(f);
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let entries: Vec<&str> = (text.lines().skip(2))
            .filter(|l| !l.starts_with(&format!("{topic} {part} ")))
            .collect();
        let mut out = format!("0\n{}\n", entries.len());
        for e in entries {
            out.push_str(e);
            out.push('\n');
        }
        std::fs::write(p, out).unwrap();
    }
}

/// `RemoteLogManagerTest.testFindHighestRemoteOffset` (the new leader resumes copying
/// after the highest offset copied in its lineage) and `testRemoteSegmentWithinLeaderEpochs`
/// (a segment spanning epochs 1 and 2, copied by the epoch-2 leader, is inside the
/// lineage), `TierStateMachineTest.testFollowerFetchMovedToTieredStore` (a follower that
/// fell below the leader's local log start builds its state from the remote storage:
/// `buildRemoteLogAuxState` restores the leader-epoch checkpoint and the producer snapshot
/// of the remote segment below the leader's local log start, truncates fully and starts its
/// log there), and `TopicBasedRemoteLogMetadataManagerTest.testNewPartitionUpdates` (a
/// broker consumes the metadata partition of every partition it hosts, whichever broker
/// leads the metadata partition).
///
/// Broker 1, the leader, local log from 80; broker 0, the old leader now a follower, local
/// log from 60; broker 2, a new replica built from the remote storage: local log from 80,
/// its `leader-epoch-checkpoint` (0,0) (1,40) (2,70) whose first two epochs exist only
/// remotely, no copy of `__remote_log_metadata-0` (brokers 0 and 1 host it). Quiet.
#[test]
fn uploads_continue_under_the_new_leader_and_a_follower_built_from_remote() {
    let logs = vec![moved(0, 3, None), moved(1, 4, None), moved(2, 4, None)];
    let c = check(logs, |d| {
        drop_partition(&d.join("broker-2"), "__remote_log_metadata-0")
    });
    c.assert_quiet();
    assert!(!c.written[2].metadata_dir.exists());
    for b in [0, 1, 2] {
        let t = c.part(b, false).tiered.clone().unwrap();
        assert_eq!(
            t.remote,
            vec![(0, 19), (20, 39), (40, 59), (60, 79)],
            "broker {b}"
        );
        assert_eq!(c.predicted_log_start(b), Some(0), "broker {b}");
    }
    let lec = std::fs::read_to_string(c.written[2].partition_dir.join("leader-epoch-checkpoint"));
    assert_eq!(lec.unwrap(), "0\n3\n0 0\n1 40\n2 70\n");
    let replayed = c.part(2, true).tiered.clone().unwrap().replayed.unwrap();
    assert_eq!(
        (replayed.first_offset, replayed.last_offset),
        (Some(0), Some(79))
    );
}

/// The twin: broker 2's rebuilt `leader-epoch-checkpoint` lacks epoch 1 — (0,0) (2,70).
/// `RemoteLogManager.read` looks offsets 40..=69 up in epoch 0 (its
/// `LeaderEpochFileCache.epochForOffset`), where no segment reaches them
/// (`RemoteLogMetadataCache.remoteLogSegmentMetadata`; `RemoteLogManagerTest.
/// testFetchRemoteLogSegmentMetadata` asks the cache with the replica's epoch): a
/// `remote_segment_gap` (error) at 40 on broker 2 alone, naming the segments that hold the
/// offsets in epoch 1 as unserved.
#[test]
fn follower_lineage_missing_an_epoch_only_in_remote_is_a_gap() {
    let wrong: &[(i32, i64)] = &[(0, 0), (2, 70)];
    let logs = vec![
        moved(0, 3, None),
        moved(1, 4, None),
        moved(2, 4, Some(wrong)),
    ];
    let c = check(logs, |d| {
        drop_partition(&d.join("broker-2"), "__remote_log_metadata-0")
    });
    let g = c.reported(Kind::RemoteSegmentGap, 2, 40, Severity::Error);
    assert!(
        !g.evidence["unserved_segments"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{g:#?}"
    );
    let (plain, _) = c.of(Kind::RemoteSegmentGap);
    assert!(
        plain.iter().all(|f| f.source.broker_id == Some(2)),
        "{plain:#?}"
    );
}
