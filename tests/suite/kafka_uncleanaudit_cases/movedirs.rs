//! `ReassignPartitionsCommandTest.testLogDirReassignment` and
//! `testAlterLogDirReassignmentThrottle` (KRaft, JBOD): broker 0's replica of `foo-0`
//! ([0, 1, 2], led by 0) moved from its log dir `data` to `data-2` with
//! `replica.alter.log.dirs.io.max.bytes.per.second` throttling the copy.
//!
//! The broker's path: `ReplicaManager.alterReplicaLogDirs` creates the `-future` log in the
//! target dir (`LogManager.getOrCreateLog` with `isFuture`), `ReplicaAlterLogDirsThread`
//! fills it from the current log; once caught up the broker tells the controller the new
//! directory (`AssignReplicasToDirs` → a `PartitionChangeRecord` with `directories`, KIP-858)
//! and swaps the copies (`LogManager.replaceCurrentWithFutureLog`: the future dir renamed
//! `foo-0`, then the current one renamed `-delete` and removed after `file.delete.delay.ms`).
//! At the next start `LogManager.loadLogs` keeps one current log per partition: a second
//! live copy stops the broker.

use super::reassign::{epoch_of, five};
use crate::kafka_imgaudit_cases::all_lines;
use crate::kafka_quiet_cluster_cases::kraft::{MetaLog, SEC, change, partition, topic};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, directory_uuid, replica};
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_BROKER};
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};

const MOVE_ID: &str = "2f4e6a8c0b1d3e5f7a9b1c3d5e7f9a0b";

/// Where the move stands.
#[derive(Clone, Copy, PartialEq)]
enum Move {
    /// The future copy created, nothing copied yet (the 1 B/s throttle).
    Started,
    /// Swapped: `foo-0` live in `data-2`, the old copy renamed `-delete` in `data`.
    Done,
    /// Crashed inside the swap: the future copy renamed `foo-0`, the old one not yet
    /// renamed.
    HalfSwapped,
}

/// The broker's throttle set to `value` (`""`: deleted, a `ConfigRecord` without a value).
fn throttle(value: &str) -> MetaRecord {
    MetaRecord::Config {
        resource_type: RESOURCE_BROKER,
        resource_name: "0".into(),
        name: "replica.alter.log.dirs.io.max.bytes.per.second".into(),
        value: (!value.is_empty()).then(|| value.into()),
    }
}

/// The metadata log at 3.7-IV2 (level 19: the brokers register their log dirs), the move's
/// throttle set to `throttles` in turn; `assigned`: the `PartitionChangeRecord` moving broker
/// 0's directory to `data-2`.
fn log(throttles: &[&str], assigned: bool) -> MetaLog {
    let dirs = |id: i32| -> Vec<[u8; 16]> {
        let names: &[&str] = if id == 0 {
            &["data", "data-2", "data-3"]
        } else {
            &["data"]
        };
        names.iter().map(|d| directory_uuid(id, d)).collect()
    };
    let mut m = five(19, &dirs);
    m.at(T0 - 30 * SEC);
    let mut p = partition("foo", 0, &[0, 1, 2], &[0, 1, 2], (0, 0, 0));
    if let MetaRecord::Partition(p) = &mut p {
        p.directories = (0..3).map(|id| directory_uuid(id, "data")).collect();
    }
    m.batch(&[topic("foo"), p]);
    m.at(T0 + 20 * SEC);
    for t in throttles {
        m.batch(&[throttle(t)]);
    }
    if assigned {
        m.at(T0 + 40 * SEC);
        m.batch(&[change("foo", 0, |c| {
            c.directories = Some(vec![
                directory_uuid(0, "data-2"),
                directory_uuid(1, "data"),
                directory_uuid(2, "data"),
            ])
        })]);
    }
    m
}

/// The brokers as the move leaves them (`foo-0`: 20 batches at epoch 0 on 0, 1, 2).
fn cluster(how: Move, throttles: &[&str]) -> Brokers {
    let m = log(throttles, how != Move::Started);
    let mut b = Brokers::new();
    let foo_0 = || replica("foo", 0, &[(0, 20)]);
    for id in 0..5 {
        let mut ld = LogDirBuilder::new(id);
        if (0..3).contains(&id) {
            ld = ld.partition(foo_0());
        }
        let dir = b.write(id, "data", ld, Some(epoch_of(id)));
        m.write(&dir);
    }
    for d in ["data-2", "data-3"] {
        let mut ld = LogDirBuilder::new(0);
        if d == "data-2" {
            let copy = if how == Move::Started {
                PartitionBuilder::new("foo", 0)
            } else {
                foo_0()
            };
            ld = ld.partition(copy);
        }
        b.write(0, d, ld, Some(epoch_of(0)));
    }
    let (data, two) = (b.path(0, "data"), b.path(0, "data-2"));
    match how {
        Move::Started => std::fs::rename(
            two.join("foo-0"),
            two.join(format!("foo-0.{MOVE_ID}-future")),
        )
        .unwrap(),
        Move::Done => crate::kafka_quiet_cluster_cases::kraft::delete_replica(&data, "foo", 0, &[]),
        Move::HalfSwapped => {}
    }
    b
}

/// `testLogDirReassignment`: the move started under a 1 B/s throttle (`ActiveMoveState`: an
/// empty `foo-0.<id>-future` in `data-2`, the image still assigning `data`), then the
/// throttle removed and the move completed (`CompletedMoveState`: `foo-0` live in `data-2`,
/// `data`'s copy renamed `-delete`, the image assigning `data-2`); and
/// `testAlterLogDirReassignmentThrottle`: the throttle raised from 1 to 3000000 B/s, then
/// completed. Each state: nothing at warning or above, no `duplicate_log_directories`, no
/// `abandoned_future_replica`, no stray. Near miss: a crash inside the swap (`foo-0` renamed
/// live in `data-2`, `data`'s not yet renamed `-delete`): the next start throws
/// (`LogManager.loadLog`: duplicate log directories) — one `duplicate_log_directories` error
/// on broker 0.
#[test]
fn a_completed_move_between_log_dirs_is_quiet_and_a_half_swap_stops_the_broker() {
    for (how, throttles) in [
        (Move::Started, &["1"][..]),
        (Move::Done, &["1", ""][..]),
        (Move::Started, &["1", "3000000"][..]),
        (Move::Done, &["1", "3000000"][..]),
    ] {
        let v = cluster(how, throttles).check();
        v.assert_quiet();
        for k in [
            Kind::DuplicateLogDirectories,
            Kind::AbandonedFutureReplica,
            Kind::StrayReplica,
        ] {
            assert!(super::agreed(&v, k).is_empty(), "{}", all_lines(&v));
        }
        if how == Move::Started {
            assert!(
                (v.scan.partitions.iter()).any(|p| p.path.ends_with("-future")),
                "the future copy is read"
            );
        }
    }
    let v = cluster(Move::HalfSwapped, &["1", "3000000"]).check();
    let d = super::agreed(&v, Kind::DuplicateLogDirectories);
    let got: Vec<_> = d.iter().map(|f| (f.source.broker_id, f.severity)).collect();
    assert_eq!(got, [(Some(0), Severity::Error)], "{}", all_lines(&v));
}
