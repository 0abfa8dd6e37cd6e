//! What a broker's `ReplicaManager`, `Partition` and `ReplicaAlterLogDirsThread` leave in the
//! files, as `verify` (with its cluster checks: `replicas`, `duplicates`, `lost`) reads it.
//!
//! * An inter-log-dir move (KIP-113): `ReplicaManager.alterReplicaLogDirs` creates the
//!   `<topic>-<n>.<uuid>-future` log in the destination log dir, `ReplicaAlterLogDirsThread`
//!   copies the current log into it (`Partition.appendRecordsToFollowerOrFutureReplica`,
//!   with the current log's high watermark and log start: `processPartitionData`), truncates
//!   it by leader epoch against the current log like a follower, and, once caught up,
//!   `LogManager.replaceCurrentWithFutureLog` renames it `<topic>-<n>` and the old one
//!   `-delete`. The future log's own high watermark, recovery point and log start are the
//!   entries of its log dir's checkpoints (`ReplicaManager.checkpointHighWatermarks` puts
//!   `partition.futureLog` under its parent dir; `LogManager.logsByDir` lists future logs).
//! * A follower's truncations (`Partition.truncateTo`, `truncateFullyAndStartAt`: an empty
//!   log whose start and high watermark are the new offset) and a log start moved by
//!   DeleteRecords on the leader (`Partition.deleteRecordsOnLeader`) that a follower learns
//!   only on its next fetch.
//!
//! Kafka sources (trunk, 2024-10): `core/src/main/scala/kafka/server/ReplicaAlterLogDirsThread.scala`,
//! `ReplicaManager.scala`, `kafka/cluster/Partition.scala`, `kafka/log/LogManager.scala`,
//! `kafka/log/UnifiedLog.scala`; tests `ReplicaAlterLogDirsThreadTest`, `PartitionTest`,
//! `ReplicaManagerTest`, `UnifiedLogTest`.
#![cfg(feature = "testkit")]

use std::path::{Path, PathBuf};

use klogscan::finding::{CopyKind, Finding, Kind, Severity};
use klogscan::testkit::files::{LogDirBuilder, topic_id_for, uuid_text};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
use klogscan::verify::{PartitionVerification, VerifyOptions, VerifyReport, verify};

const T0: i64 = 1_700_000_000_000;
const CLUSTER: &str = "MkU3OEVBNTcwNTJENDM2Qg";
/// The name `ReplicaManager.alterReplicaLogDirs` gives the destination of a move
/// (`UnifiedLog.logFutureDirName`: a UUID without its dashes).
const FUTURE: &str = "orders-0.0c7e3a1e2f5b4d6c8a9b1c2d3e4f5a6b-future";
const DELETE: &str = "orders-0.9f8e7d6c5b4a39281706f5e4d3c2b1a0-delete";

/// `n` single-record batches of leader epoch `epoch` from offset `from`, valued
/// `<tag><offset>`: two copies given the same runs hold the same bytes.
fn run(epoch: i32, tag: &str, from: i64, n: i64) -> Vec<(i32, String)> {
    (from..from + n)
        .map(|o| (epoch, format!("{tag}{o}")))
        .collect()
}

fn cat(parts: &[Vec<(i32, String)>]) -> Vec<(i32, String)> {
    parts.iter().flatten().cloned().collect()
}

/// `orders-0` from offset `start`, one single-record batch per `(epoch, value)`, the batch at
/// offset `o` stamped `T0 + o` seconds.
fn log(start: i64, batches: &[(i32, String)]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_offset(start)
        .start_time(T0);
    for (i, (e, v)) in batches.iter().enumerate() {
        let off = start + i as i64;
        p.set_leader_epoch(*e);
        p.append(
            Batch::new(Producer::PLAIN)
                .values([v.as_bytes()])
                .at(T0 + off * 1000),
        );
    }
    p
}

/// The entries of `orders 0` in a log dir's checkpoints (`None`: the builder's default, the
/// log end for the high watermark and recovery point, no log start entry).
#[derive(Clone, Copy, Default)]
struct Entries {
    hw: Option<i64>,
    rp: Option<i64>,
    start: Option<i64>,
}

/// Log dir `root/<name>` of broker `broker` (cluster [`CLUSTER`]) holding `p` with `e`.
fn log_dir(root: &Path, name: &str, broker: i32, p: PartitionBuilder, e: Entries) -> PathBuf {
    let ld = root.join(name);
    let mut b = LogDirBuilder::new(broker).cluster_id(CLUSTER).partition(p);
    if let Some(h) = e.hw {
        b = b.high_watermark("orders", 0, h);
    }
    if let Some(r) = e.rp {
        b = b.recovery_point("orders", 0, r);
    }
    if let Some(s) = e.start {
        b = b.log_start_offset("orders", 0, s);
    }
    b.write(&ld).unwrap();
    ld
}

/// Rename `ld/orders-0` to `ld/<name>` (the broker's rename).
fn rename(ld: &Path, name: &str) {
    std::fs::rename(ld.join("orders-0"), ld.join(name)).unwrap();
}

/// A KRaft `meta.properties` of node `node` with `directory.id` derived from `tag` (what
/// proves two log dirs of one broker: `duplicate_log_dirs.rs`).
fn kraft_meta(ld: &Path, node: i32, tag: &str) {
    let id = uuid_text(&topic_id_for(tag));
    let text = format!("version=1\nnode.id={node}\ncluster.id={CLUSTER}\ndirectory.id={id}\n");
    std::fs::write(ld.join("meta.properties"), text).unwrap();
}

fn check(dirs: &[PathBuf]) -> VerifyReport {
    verify(dirs, &VerifyOptions::default())
}

fn of_kind(v: &VerifyReport, k: Kind) -> Vec<&Finding> {
    v.findings().filter(|f| f.kind == k).collect()
}

/// The findings of warning or error severity.
fn loud(v: &VerifyReport) -> Vec<&Finding> {
    v.findings()
        .filter(|f| f.severity >= Severity::Warning)
        .collect()
}

/// The verification of the copy of `orders-0` of kind `kind` whose path contains `under`.
fn copy<'a>(v: &'a VerifyReport, kind: CopyKind, under: &str) -> &'a PartitionVerification {
    (v.partitions.iter())
        .find(|p| p.topic == "orders" && p.source.copy == kind && p.path().contains(under))
        .unwrap_or_else(|| panic!("no {kind:?} copy under {under}: {:#?}", v.partitions))
}

/// The one `replica_divergence` of `v`.
fn one_divergence(v: &VerifyReport) -> &Finding {
    let d = of_kind(v, Kind::ReplicaDivergence);
    assert_eq!(d.len(), 1, "{:#?}", v.findings().collect::<Vec<_>>());
    d[0]
}

// ---------------------------------------------------------------------------------------------
// The -future copy of a move between log dirs (ReplicaAlterLogDirsThread)
// ---------------------------------------------------------------------------------------------

/// Offsets 0..=3 plain, a transaction of producer 7 at 4..=5, and with `marker` its COMMIT at
/// 6 and three plain records 7..=9: the current log of a move, or (without) the first six
/// offsets its future copy holds.
fn moving_log(marker: bool) -> PartitionBuilder {
    let txn = Producer::transactional(7, 0);
    let mut p = PartitionBuilder::new("orders", 0).start_time(T0);
    for i in 0..4 {
        p.append(Batch::new(Producer::PLAIN).values([format!("v{i}")]));
    }
    p.append(Batch::new(txn).records(2));
    if marker {
        p.commit(txn, 3);
        for i in 7..10 {
            p.append(Batch::new(Producer::PLAIN).values([format!("v{i}")]));
        }
    }
    p
}

/// A move caught mid-way (`ReplicaAlterLogDirsThreadTest.shouldReplaceCurrentLogDirWhenCaughtUp`
/// before it caught up; `PartitionTest.testMaybeReplaceCurrentWithFutureReplica` while the
/// future log is behind): broker 1's `orders-0` in `data` (offsets 0..=9, high watermark 10),
/// its `-future` copy in `data-2` holding the first six offsets, with the future log's own
/// entries there (high watermark 6: `processPartitionData` sets it from the current log's,
/// `UnifiedLog.updateHighWatermark` clamps it to the future log's end; recovery point 6).
/// The copy's last transaction has its COMMIT only in the current log (not copied yet).
///
/// Kafka: the future log is a prefix of the current one, nothing differs, the broker loads
/// both side by side and resumes the copy; no client reads the future log, so its open
/// transaction pins no last stable offset. klogscan: no `replica_divergence`, no
/// `duplicate_log_directories`, no checkpoint finding on either copy, no
/// `hanging_transaction`, nothing of warning severity.
#[test]
fn a_future_copy_behind_the_current_log_is_a_move_in_progress() {
    let d = tempfile::tempdir().unwrap();
    let cur = log_dir(d.path(), "data", 1, moving_log(true), Entries::default());
    let fut = Entries {
        hw: Some(6),
        rp: Some(6),
        start: None,
    };
    let dest = log_dir(d.path(), "data-2", 1, moving_log(false), fut);
    rename(&dest, FUTURE);
    let v = check(&[cur, dest]);
    assert!(loud(&v).is_empty(), "{:#?}", loud(&v));
    for k in [
        Kind::ReplicaDivergence,
        Kind::DuplicateLogDirectories,
        Kind::HangingTransaction,
        Kind::CheckpointInconsistent,
        Kind::TruncationBelowHighWatermark,
    ] {
        assert!(of_kind(&v, k).is_empty(), "{k:?}: {:#?}", of_kind(&v, k));
    }
    // The copy's transaction is read, and said open in a copy no client reads.
    let open = of_kind(&v, Kind::OpenTransaction);
    assert!(
        open.iter().any(|f| f.source.copy == CopyKind::Future),
        "{open:#?}"
    );
    let f = copy(&v, CopyKind::Future, "data-2");
    assert_eq!(
        f.prediction.log_end_offset_after,
        Some(6),
        "{:#?}",
        f.prediction
    );
}

/// The negative of `a_future_copy_behind_the_current_log_is_a_move_in_progress`: the future
/// copy holds other bytes at offset 3, in the same leader epoch as the current log. The
/// alter-log-dirs thread's epoch exchange (`AbstractFetcherThread.getOffsetTruncationState`,
/// `ReplicaAlterLogDirsThreadTest.shouldTruncateToReplicaOffset`: the truncation offset is the
/// smaller of the future log's end and the current log's end of that epoch) leaves the future
/// log whole, so the difference survives into the log that replaces the current one: a
/// `replica_divergence` at 3, without a truncation.
#[test]
fn a_future_copy_differing_within_an_epoch_diverges() {
    let d = tempfile::tempdir().unwrap();
    let cur = log_dir(
        d.path(),
        "data",
        1,
        log(0, &run(0, "v", 0, 10)),
        Entries::default(),
    );
    let other = cat(&[run(0, "v", 0, 3), run(0, "x", 3, 1), run(0, "v", 4, 2)]);
    let dest = log_dir(d.path(), "data-2", 1, log(0, &other), Entries::default());
    rename(&dest, FUTURE);
    let v = check(&[cur, dest]);
    let f = one_divergence(&v);
    assert_eq!(f.offset, Some(3), "{f:#?}");
    assert!(f.evidence.get("truncation").is_none(), "{:#}", f.evidence);
}

/// `ReplicaAlterLogDirsThreadTest.shouldTruncateToEndOffsetOfLargestCommonEpoch` on disk: the
/// future copy holds offsets 6..=7 of epoch 1 it copied before the current log, following a
/// new leader, truncated to 6 and fetched epoch 2 (the broker stopped before the
/// alter-log-dirs thread truncated the future log: `ReplicaFetcherThread.truncate` marks it
/// for truncation after the current log's). On restart the thread asks the current log for
/// its latest epoch and truncates the future log to 6 (`ReplicaAlterLogDirsThread.truncate` →
/// `Partition.truncateTo(isFuture = true)`); nothing of the current log changes. The future
/// log's high watermark 6 (the current log's when copied) says 6..=7 were not acknowledged.
///
/// klogscan: one `replica_divergence` at 6 naming the future copy as the one that truncates,
/// to 6; a warning, not an error; no `truncation_below_high_watermark` anywhere.
#[test]
fn a_future_copy_behind_in_epochs_is_truncated_to_the_current_log() {
    let d = tempfile::tempdir().unwrap();
    let cur = cat(&[run(0, "a", 0, 6), run(2, "c", 6, 4)]);
    let cur = log_dir(d.path(), "data", 1, log(0, &cur), Entries::default());
    let fut = cat(&[run(0, "a", 0, 6), run(1, "b", 6, 2)]);
    let e = Entries {
        hw: Some(6),
        ..Entries::default()
    };
    let dest = log_dir(d.path(), "data-2", 1, log(0, &fut), e);
    rename(&dest, FUTURE);
    let v = check(&[cur, dest]);
    let f = one_divergence(&v);
    assert_eq!(f.offset, Some(6));
    let t = &f.evidence["truncation"];
    assert!(
        t["replica"]
            .as_str()
            .is_some_and(|p| p.ends_with("-future")),
        "{:#}",
        f.evidence
    );
    assert_eq!(t["to_offset"], 6, "{:#}", f.evidence);
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert!(of_kind(&v, Kind::TruncationBelowHighWatermark).is_empty());
}

/// A future copy whose tail the crash tore (its last batch's CRC fails; no clean shutdown),
/// below the future log's checkpointed high watermark (10, what the thread copied from the
/// current log). The load truncates the future log (`LogLoader.recoverLog`) and the
/// alter-log-dirs thread copies the offsets again from the current log, which holds them:
/// nothing the partition acknowledged is lost, and no reader ever read the future log.
/// klogscan: no `truncation_below_high_watermark` (`lost` judges live copies only).
///
/// The negative: the same damage in the current log (the future copy intact) is one, an
/// error: a `-future` log never leads, so it holds nothing for the partition (`not_live`).
#[test]
fn a_torn_future_copy_loses_nothing_a_torn_current_log_does() {
    use klogscan::testkit::scenario::{FaultKind, Target};
    // Ten offsets, the last one alone in the last segment, whose CRC fails when `torn`.
    let ten = |torn: bool| {
        let mut p = log(0, &run(0, "v", 0, 9));
        p.roll();
        p.append(
            Batch::new(Producer::PLAIN)
                .values([b"v9".as_slice()])
                .at(T0 + 9_000),
        );
        if torn {
            let flip = FaultKind::FlipByte {
                position: 30,
                mask: 0x01,
            };
            p.fault(Target::LastLog, flip);
        }
        p
    };
    for torn_future in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (ten(!torn_future), ten(torn_future));
        let cur = LogDirBuilder::new(1)
            .cluster_id(CLUSTER)
            .clean_shutdown(false);
        let cur_dir = d.path().join("data");
        cur.partition(a)
            .recovery_point("orders", 0, 0)
            .write(&cur_dir)
            .unwrap();
        let dest = LogDirBuilder::new(1)
            .cluster_id(CLUSTER)
            .clean_shutdown(false);
        let dest_dir = d.path().join("data-2");
        dest.partition(b)
            .recovery_point("orders", 0, 0)
            .write(&dest_dir)
            .unwrap();
        rename(&dest_dir, FUTURE);
        let v = check(&[cur_dir, dest_dir]);
        let lost = of_kind(&v, Kind::TruncationBelowHighWatermark);
        if torn_future {
            assert!(lost.is_empty(), "{lost:#?}");
        } else {
            assert_eq!(lost.len(), 1, "{:#?}", v.findings().collect::<Vec<_>>());
            assert_eq!(lost[0].severity, Severity::Error, "{:#?}", lost[0]);
            assert_eq!(lost[0].source.copy, CopyKind::Live);
        }
    }
}

/// `LogManager.replaceCurrentWithFutureLog` in two renames: the future log to `orders-0` in
/// its log dir (`destLog.renameDir(logDirName)`), then the old current log to `-delete`
/// (`srcLog.renameDir(logDeleteDirName)`), then the source dir's checkpoints rewritten
/// without it. Node 1 (KRaft, log dirs with their directory ids), the future copy caught up
/// (both hold offsets 0..=9), stopped at each step:
/// * before the first rename: current and future loaded side by side (`LogManager.loadLog`
///   keeps one current and one future log), the move resumes — no finding;
/// * between the two renames: two current logs of `orders-0`, `loadLog` throws
///   `IllegalStateException` ("Duplicate log directories …") and the broker does not start —
///   `duplicate_log_directories`, an error;
/// * after the second rename, before the checkpoint rewrite: the `-delete` copy is queued
///   for deletion (`addLogToBeDeleted`), the source dir's stale entry under `orders 0` is no
///   log's — no finding on either copy.
#[test]
fn a_crash_inside_replace_current_with_future_log() {
    for (step, duplicate) in [(0, false), (1, true), (2, false)] {
        let d = tempfile::tempdir().unwrap();
        let src = log_dir(
            d.path(),
            "data",
            1,
            log(0, &run(0, "v", 0, 10)),
            Entries::default(),
        );
        let dest = log_dir(
            d.path(),
            "data-2",
            1,
            log(0, &run(0, "v", 0, 10)),
            Entries::default(),
        );
        kraft_meta(&src, 1, "data");
        kraft_meta(&dest, 1, "data-2");
        match step {
            0 => rename(&dest, FUTURE),
            1 => {}
            _ => rename(&src, DELETE),
        }
        let v = check(&[src, dest]);
        let dup = of_kind(&v, Kind::DuplicateLogDirectories);
        assert_eq!(dup.len(), usize::from(duplicate), "step {step}: {dup:#?}");
        if duplicate {
            assert_eq!(dup[0].severity, Severity::Error);
        }
        let rest: Vec<_> = (loud(&v).into_iter())
            .filter(|f| f.kind != Kind::DuplicateLogDirectories)
            .collect();
        assert!(rest.is_empty(), "step {step}: {rest:#?}");
        assert!(
            of_kind(&v, Kind::ReplicaDivergence).is_empty(),
            "step {step}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The future log's own checkpoint entries (ReplicaManager.checkpointHighWatermarks)
// ---------------------------------------------------------------------------------------------

/// The checkpoints of the destination log dir hold the future log's own entries
/// (`ReplicaManager.checkpointHighWatermarks` writes `partition.futureLog`'s high watermark
/// under `log.parentDir`; `LogManager.checkpointLogRecoveryOffsetsInDir` and
/// `checkpointLogStartOffsetsInDir` go through `logsByDir`, future logs included), beside
/// the entries of another partition the dir hosts. The future copy (offsets 0..=5, the
/// current log 0..=9 in `data`) with high watermark 6, recovery point 6 and log start 2 (the
/// current log's, moved by DeleteRecords: `processPartitionData` →
/// `maybeIncrementLogStartOffset`): klogscan judges it by these entries — no checkpoint
/// finding, the load's prediction starts it at 2 and recovers nothing.
///
/// The negative: a high watermark entry of 10 for the future log, above its end 6, is what
/// `UnifiedLog.updateHighWatermark` never writes (it clamps to the log end): the load clamps
/// it, and klogscan reports it on the future copy, not on the current log.
#[test]
fn a_future_logs_checkpoint_entries_are_its_own() {
    for hw in [6, 10] {
        let d = tempfile::tempdir().unwrap();
        let e = Entries {
            start: Some(2),
            ..Entries::default()
        };
        let cur = log_dir(d.path(), "data", 1, log(0, &run(0, "v", 0, 10)), e);
        let dest = d.path().join("data-2");
        let mut other = PartitionBuilder::new("payments", 0).start_time(T0);
        other.append(Batch::new(Producer::PLAIN).records(3));
        LogDirBuilder::new(1)
            .cluster_id(CLUSTER)
            .partition(log(0, &run(0, "v", 0, 6)))
            .partition(other)
            .high_watermark("orders", 0, hw)
            .recovery_point("orders", 0, 6)
            .log_start_offset("orders", 0, 2)
            .write(&dest)
            .unwrap();
        rename(&dest, FUTURE);
        let v = check(&[cur, dest]);
        let fut = copy(&v, CopyKind::Future, "data-2");
        assert_eq!(
            fut.prediction.log_start_offset_after,
            Some(2),
            "{:#?}",
            fut.prediction
        );
        let entry = |p: &PartitionVerification| -> Vec<Finding> {
            (p.findings.iter())
                .filter(|f| f.kind == Kind::CheckpointInconsistent)
                .cloned()
                .collect()
        };
        assert!(entry(copy(&v, CopyKind::Live, "data")).is_empty());
        let found = entry(fut);
        if hw == 6 {
            assert!(found.is_empty(), "{found:#?}");
        } else {
            assert_eq!(found.len(), 1, "{found:#?}");
            assert!(
                found[0].message.contains("high watermark") && found[0].message.contains("10"),
                "{}",
                found[0].message
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A follower's truncations and the log start (PartitionTest, Partition.deleteRecordsOnLeader)
// ---------------------------------------------------------------------------------------------

/// Broker `id`'s log dir `root/broker-<id>` holding `p` with `e`.
fn broker(root: &Path, id: i32, p: PartitionBuilder, e: Entries) -> PathBuf {
    log_dir(root, &format!("broker-{id}"), id, p, e)
}

/// `Partition.truncateFullyAndStartAt` → `UnifiedLog.truncateFullyAndStartAt(20)` on the
/// follower (broker 1; its fetch at 8 fell below the leader's log start 20, moved there by
/// DeleteRecords: `AbstractFetcherThread` out-of-range handling; `PartitionTest.
/// testAppendRecordsAsFollowerBelowLogStartOffset` starts the same way): every segment
/// deleted, one empty segment at 20, the epoch cache cleared, log start, recovery point and
/// high watermark 20 (`updateHighWatermark(logEndOffsetMetadata)`); no log start entry (the
/// start is the first segment's base). The leader (broker 2) holds 0..=29 with log start 20
/// (`log-start-offset-checkpoint`). Kafka: the follower fetches from 20; nothing differs,
/// nothing is lost. klogscan: nothing of warning severity, and the follower's load starts
/// and ends at 20.
#[test]
fn a_follower_truncated_fully_to_the_leaders_log_start_is_no_finding() {
    let d = tempfile::tempdir().unwrap();
    let e = Entries {
        hw: Some(20),
        rp: Some(20),
        start: None,
    };
    let f = broker(d.path(), 1, log(20, &[]), e);
    let pd = f.join("orders-0");
    std::fs::create_dir_all(&pd).unwrap();
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(pd.join(format!("00000000000000000020.{ext}")), b"").unwrap();
    }
    let e = Entries {
        start: Some(20),
        ..Entries::default()
    };
    let l = broker(d.path(), 2, log(0, &run(0, "v", 0, 30)), e);
    let v = check(&[f, l]);
    assert!(loud(&v).is_empty(), "{:#?}", loud(&v));
    let p = copy(&v, CopyKind::Live, "broker-1");
    assert_eq!(
        p.prediction.log_start_offset_after,
        Some(20),
        "{:#?}",
        p.prediction
    );
    assert_eq!(
        p.prediction.log_end_offset_after,
        Some(20),
        "{:#?}",
        p.prediction
    );
}

/// `PartitionTest.testAppendRecordsAsFollowerBelowLogStartOffset` on disk. The leader
/// (broker 2) moved its log start to 5 by DeleteRecords (`Partition.deleteRecordsOnLeader` →
/// `maybeIncrementLogStartOffset`: entry 5 in `log-start-offset-checkpoint`, the segment
/// still from 0), in the middle of its batch 4..=6. The follower, truncated fully to 5, was
/// sent that whole batch: an empty log takes a batch containing its log start, and the
/// follower restarts at the batch's base (`UnexpectedAppendOffsetException` →
/// `truncateFullyAndStartAt(4)`, then the append): its log starts at 4, below the leader's
/// 5, and holds the leader's batches from there. Kafka: the same bytes at every common
/// offset, the follower's start moves up on a later fetch (`processPartitionData` →
/// `maybeIncrementLogStartOffset`). klogscan: no divergence, nothing of warning severity.
///
/// The negative: the follower's batch 4..=6 holds other records (offsets 5 and 6 are
/// readable on both): a `replica_divergence` at 4.
#[test]
fn a_follower_started_below_the_leaders_log_start_is_no_divergence() {
    let leader = || {
        let mut p = log(0, &run(0, "v", 0, 4));
        p.append(
            Batch::new(Producer::PLAIN)
                .values(["v4", "v5", "v6"])
                .at(T0 + 4_000),
        );
        p
    };
    for same in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let mut f = PartitionBuilder::new("orders", 0)
            .start_offset(4)
            .start_time(T0);
        let vals = if same {
            ["v4", "v5", "v6"]
        } else {
            ["w4", "w5", "w6"]
        };
        f.append(Batch::new(Producer::PLAIN).values(vals).at(T0 + 4_000));
        let mut l = leader();
        for p in [&mut f, &mut l] {
            for o in 7..9 {
                let b = Batch::new(Producer::PLAIN).values([format!("v{o}")]);
                p.append(b.at(T0 + o * 1000));
            }
        }
        let fd = broker(d.path(), 1, f, Entries::default());
        let e = Entries {
            start: Some(5),
            ..Entries::default()
        };
        let ld = broker(d.path(), 2, l, e);
        let v = check(&[fd, ld]);
        let div = of_kind(&v, Kind::ReplicaDivergence);
        if same {
            assert!(loud(&v).is_empty(), "{:#?}", loud(&v));
            let p = copy(&v, CopyKind::Live, "broker-2");
            assert_eq!(p.prediction.log_start_offset_after, Some(5));
        } else {
            assert_eq!(div.len(), 1, "{div:#?}");
            assert_eq!(div[0].offset, Some(4));
        }
    }
}

/// Two replicas whose records differ only below both log starts: an early difference at
/// offset 2 (a batch one replica holds with other records), then DeleteRecords moved the
/// leader's log start to 6 and the follower learnt it (`processPartitionData` →
/// `maybeIncrementLogStartOffset`): entry 6 on both brokers, the segments still from 0
/// (`deleteOldSegments` deletes only segments wholly below the log start,
/// `UnifiedLogTest.testLogDeletionAfterDeleteRecords`). No reader, consumer or follower, can
/// fetch below the log start (`UnifiedLog.read` → `checkLogStartOffset` throws
/// `OffsetOutOfRangeException`, `UnifiedLogTest.testReadOutOfRange`), on either replica,
/// whichever leads: the difference is unobservable. No `replica_divergence` (the common
/// range starts at the later log start, as `lost` counts offsets only from the log start).
#[test]
fn a_difference_below_both_log_starts_is_no_divergence() {
    let d = tempfile::tempdir().unwrap();
    let e = Entries {
        start: Some(6),
        ..Entries::default()
    };
    let a = log(0, &run(0, "v", 0, 10));
    let b = cat(&[run(0, "v", 0, 2), run(0, "x", 2, 1), run(0, "v", 3, 7)]);
    let one = broker(d.path(), 1, a, e);
    let two = broker(d.path(), 2, log(0, &b), e);
    let v = check(&[one, two]);
    let div = of_kind(&v, Kind::ReplicaDivergence);
    assert!(div.is_empty(), "{div:#?}");
}

/// The negative of `a_difference_below_both_log_starts_is_no_divergence`: the same two
/// replicas with only the leader's log start moved to 6, the follower's still 0 (it has not
/// fetched since the DeleteRecords): offset 2 is readable on the follower, and served if it
/// leads before its next fetch — a `replica_divergence` at 2.
#[test]
fn a_difference_above_one_replicas_log_start_diverges() {
    let d = tempfile::tempdir().unwrap();
    let a = log(0, &run(0, "v", 0, 10));
    let b = cat(&[run(0, "v", 0, 2), run(0, "x", 2, 1), run(0, "v", 3, 7)]);
    let one = broker(d.path(), 1, a, Entries::default());
    let e = Entries {
        start: Some(6),
        ..Entries::default()
    };
    let two = broker(d.path(), 2, log(0, &b), e);
    let v = check(&[one, two]);
    assert_eq!(one_divergence(&v).offset, Some(2));
}

/// `PartitionTest.testMakeFollowerWithNoLeaderIdChange`: the leader (broker 2) stays leader
/// while its epoch goes from 1 to 4; `Partition.makeLeader` assigns epoch 4 at its log end 10
/// in its cache (`maybeAssignEpochStartOffset`), before any batch of it; the follower (broker
/// 1, at 8) runs the become-follower steps and asks for epoch 1, which ends at 10 on the
/// leader: no truncation, it fetches 8.. . Nothing differs, nothing is lost, and the
/// leader's cache entry past its batches is what the broker wrote. klogscan: nothing of
/// warning severity.
#[test]
fn a_leader_epoch_bump_without_leader_change_is_no_finding() {
    let d = tempfile::tempdir().unwrap();
    let f = broker(d.path(), 1, log(0, &run(1, "v", 0, 8)), Entries::default());
    let l = broker(d.path(), 2, log(0, &run(1, "v", 0, 10)), Entries::default());
    std::fs::write(
        l.join("orders-0/leader-epoch-checkpoint"),
        "0\n2\n1 0\n4 10\n",
    )
    .unwrap();
    let v = check(&[f, l]);
    assert!(loud(&v).is_empty(), "{:#?}", loud(&v));
}

/// Broker 1's copy: offsets 0..=9 (9 alone in the last segment, its CRC failing when
/// `torn`), high watermark 10, no clean shutdown and recovery point 0 (the load recovers
/// every segment); broker 2's copy: `other`.
fn torn_follower(root: &Path, torn: bool, other: PartitionBuilder) -> Vec<PathBuf> {
    use klogscan::testkit::scenario::{FaultKind, Target};
    let mut p = log(0, &run(0, "v", 0, 9));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).values(["v9"]).at(T0 + 9_000));
    if torn {
        let flip = FaultKind::FlipByte {
            position: 30,
            mask: 0x01,
        };
        p.fault(Target::LastLog, flip);
    }
    let one = root.join("broker-1");
    (LogDirBuilder::new(1)
        .cluster_id(CLUSTER)
        .clean_shutdown(false))
    .partition(p)
    .recovery_point("orders", 0, 0)
    .write(&one)
    .unwrap();
    vec![one, broker(root, 2, other, Entries::default())]
}

/// A replica entirely below the other's log start loses, at its load, offsets the partition
/// has already deleted. Broker 1 (torn at offset 9, below its high watermark 10) and broker
/// 2, whose log starts at 20 (offsets 20..=29; retention or DeleteRecords removed the rest).
/// Broker 1 is no in-sync replica (the log start 20 is at most the partition's high
/// watermark, `UnifiedLogTest.testCannotIncrementLogStartOffsetPastHighWatermark`, and its
/// log ends at 10), so it leads only uncleanly; following, its first fetch (from 9, after the
/// load's truncation) is below the leader's log start and it truncates fully to 20
/// (`AbstractFetcherThread.fetchOffsetAndTruncate` → `truncateFullyAndStartAt`,
/// `AbstractFetcherThreadTest.testFollowerFetchOutOfRangeLow`): offset 9 goes whether the load
/// truncates or not, and no reader of the partition can fetch it from the leader. Kafka: no
/// acknowledged record is lost by the load's truncation; `truncation_below_high_watermark`
/// is at most a warning (the offsets lie below another copy's log start, as offsets below
/// the copy's own log start are not counted).
#[test]
fn a_loss_below_another_replicas_log_start_is_no_error() {
    let d = tempfile::tempdir().unwrap();
    let dirs = torn_follower(d.path(), true, log(20, &run(0, "v", 20, 10)));
    let v = check(&dirs);
    let lost = of_kind(&v, Kind::TruncationBelowHighWatermark);
    assert!(
        lost.iter().all(|f| f.severity < Severity::Error),
        "{lost:#?}"
    );
}

/// The negative of `a_loss_below_another_replicas_log_start_is_no_error`: broker 2 holds
/// 0..=29 (log start 0), so offset 9 is readable in the partition and broker 1's copy
/// loses it at its load while broker 2 holds it: a warning naming broker 2; without the tear
/// nothing.
#[test]
fn a_loss_another_replica_holds_is_a_warning() {
    for torn in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let dirs = torn_follower(d.path(), torn, log(0, &run(0, "v", 0, 30)));
        let v = check(&dirs);
        let lost = of_kind(&v, Kind::TruncationBelowHighWatermark);
        assert_eq!(lost.len(), usize::from(torn), "{lost:#?}");
        if torn {
            assert_eq!(lost[0].severity, Severity::Warning, "{:#?}", lost[0]);
        }
    }
}
