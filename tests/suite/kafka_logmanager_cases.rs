//! Kafka's `LogManager` at a broker's start, as `verify` predicts it: which directory of a
//! log dir is loaded, with which entries of the log dir's offset checkpoints, and what the
//! checkpoint cross-checks say of them (`LogManager.loadLogs`/`loadLog`, `LogManagerTest`;
//! `LocalLog`, `LocalLogTest`; `LogLoader.recoverLog`). Each case writes the directories a
//! broker leaves and compares `verify`'s verdict with Kafka's code on the same bytes.
#![cfg(feature = "testkit")]

use klogscan::finding::{CopyKind, Finding, Kind};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer};
use klogscan::verify::{PartitionVerification, VerifyOptions, VerifyReport, verify};
use std::path::Path;

const T0: i64 = 1_700_000_000_000;
/// A `-stray`/`-delete` directory's unique id (`LocalLog.logDirNameWithSuffixCappedLength`:
/// a UUID without its dashes).
const UUID: &str = "0123456789abcdef0123456789abcdef";

fn run(root: &Path) -> VerifyReport {
    verify(&[root.to_path_buf()], &VerifyOptions::default())
}

fn copy(v: &VerifyReport, kind: CopyKind) -> &PartitionVerification {
    v.partitions
        .iter()
        .find(|p| p.source.copy == kind)
        .unwrap_or_else(|| panic!("no {kind:?} copy: {:#?}", v.partitions))
}

/// Write `p` into log dir `ld` under the directory name `name` (the broker's rename).
fn write_as(p: PartitionBuilder, ld: &Path, name: &str) {
    let stage = ld.join(format!("stage-{name}"));
    let m = p.write(&stage).unwrap();
    std::fs::rename(m.dir, ld.join(name)).unwrap();
    std::fs::remove_dir(stage).unwrap();
}

/// The findings of `p` that read the high watermark or the recovery point of the log dir's
/// checkpoints against `p`'s own log, or pin a last stable offset at a checkpointed log start.
fn entry_findings(p: &PartitionVerification) -> Vec<&Finding> {
    p.findings
        .iter()
        .filter(|f| {
            (f.kind == Kind::CheckpointInconsistent
                && (f.message.contains("high watermark") || f.message.contains("recovery point")))
                || f.kind == Kind::LsoBelowLogStart
        })
        .collect()
}

/// A KRaft broker's log dir after a topic was deleted and created again under its name
/// while the broker was away (`LogManagerTest.testTopicRecreationInFullLAIR`,
/// `testLoadLogRenameLogThatShouldBeStray`): the old incarnation's `orders-0` was renamed
/// `orders-0.<id>-stray` (`LogManager.loadLog` → `isStrayKraftReplica`, or
/// `asyncDelete(isStray = true)`), the new incarnation lives in `orders-0`. A stray log is
/// kept in `LogManager.strayLogs`, never in `currentLogs`/`futureLogs`, so
/// `checkpointLogRecoveryOffsets`/`checkpointLogStartOffsets` (`logsByDir`) and
/// `ReplicaManager`'s high-watermark checkpoint write no entry of its own: the entries
/// under `orders 0` are the new live log's (10 records, log start 6 after DeleteRecords),
/// exactly as for a `-delete` copy (`asyncDelete` rewrites the checkpoints without it).
///
/// Kafka: nothing was lost from the stray copy; its high watermark and recovery point are
/// the live log's. klogscan (src/verify/checks.rs `judged = !delete_copy(r)`, then
/// `checkpoints::check_offsets`) judges the stray copy against the live log's entries:
/// "high watermark 10 is above the log end offset 3" ("records acknowledged with acks=all
/// above it are gone") and "recovery point 10 is above the log end offset 3" ("data was
/// lost after the flush was recorded"), warnings about data loss that did not happen, and
/// an open transaction of the old incarnation below the live log's start as
/// `lso_below_log_start` (no last stable offset of a stray copy exists). (That the next
/// load empties the stray copy, the live log's start 6 being above its end 3, is Kafka's
/// behaviour too — `loadLog` passes the entry under the partition's name and
/// `LogLoader.recoverLog` runs for a `-stray` directory — and is not asserted against.)
#[test]
fn a_stray_copy_is_not_judged_against_the_live_logs_checkpoint_entries() {
    let d = tempfile::tempdir().unwrap();
    let mut live = PartitionBuilder::new("orders", 0).start_time(T0);
    for _ in 0..10 {
        live.append(Batch::new(Producer::idempotent(3, 0)).records(1));
    }
    LogDirBuilder::new(1)
        .log_start_offset("orders", 0, 6)
        .partition(live)
        .write(d.path())
        .unwrap();
    let old = Producer::transactional(4, 0);
    let mut stray = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .broker_files(PartitionFileOptions::default());
    stray.append(Batch::new(Producer::idempotent(5, 0)).records(1));
    stray.append(Batch::new(old).records(2));
    write_as(stray, d.path(), &format!("orders-0.{UUID}-stray"));

    let v = run(d.path());
    let live = copy(&v, CopyKind::Live);
    assert!(entry_findings(live).is_empty(), "{:#?}", live.findings);
    let stray = copy(&v, CopyKind::Stray);
    assert!(
        entry_findings(stray).is_empty(),
        "the stray copy is judged against the live log's entries: {:#?}",
        entry_findings(stray)
    );
}

/// `LogManager.loadLog` of a `-stray` directory: `addStrayLog` keeps it aside and nothing
/// in `LogManager` ever deletes it ("Move aside stray partitions, don't delete them",
/// `asyncDelete(isStray = true)`; `strayLogs` has no deletion path, unlike
/// `logsToBeDeleted` for `-delete`). klogscan's startup action for the directory
/// (src/verify/checks/leftovers.rs, `DirKind::Stray`) says it is "deleted once the
/// controller confirms the broker does not own the partition": the broker never deletes it.
#[test]
fn a_stray_directory_is_kept_not_deleted_by_the_broker() {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1).write(d.path()).unwrap();
    let mut stray = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .broker_files(PartitionFileOptions::default());
    stray.append(Batch::new(Producer::idempotent(5, 0)).records(2));
    write_as(stray, d.path(), &format!("orders-0.{UUID}-stray"));

    let v = run(d.path());
    let stray = copy(&v, CopyKind::Stray);
    let action = stray
        .prediction
        .leftovers
        .iter()
        .find(|l| l.kind == "stray_dir")
        .map(|l| l.action.clone())
        .unwrap_or_default();
    assert!(!action.is_empty(), "{:#?}", stray.prediction.leftovers);
    assert!(
        !action.contains("deleted"),
        "the broker never deletes a -stray directory: {action}"
    );
}

/// `LogLoader.recoverLog` (clean shutdown): the log end the load returns is the last
/// segment's `readNextOffset`, its base when it holds no batch; the recovery point is set
/// to it (`RecoveryOffsets(logEndOffset, logEndOffset)`), and that is what the broker
/// checkpointed at its clean shutdown. Here the last segment `…08.log` is empty and based
/// above the last batch of the one below (offsets 5–7 removed by the cleaner from the
/// segment's tail, which brokers before KAFKA-17076 did: `LogCleaner` then kept no empty
/// last batch of a cleaning round), so the log ends at 8 for Kafka, and the recovery point
/// and high watermark 8 are the log end. klogscan's prediction says so too
/// (`log_end_offset_after` 8), but `checkpoints::check_offsets` compares the entries with
/// the walk's end (the last batch's next offset, 5; src/verify/checks/checkpoints.rs, the
/// `leo` of `check_offsets`) and warns "high watermark 8 is above the log end offset 5" and
/// "recovery point 8 is above the log end offset 5": false data-loss warnings.
#[test]
fn an_empty_last_segment_above_the_last_batch_ends_the_log_for_the_checkpoint_checks() {
    let d = tempfile::tempdir().unwrap();
    let v = run(&empty_last_segment_at_8(d.path(), 8));
    let p = copy(&v, CopyKind::Live);
    assert_eq!(
        p.prediction.log_end_offset_after,
        Some(8),
        "{:#?}",
        p.prediction
    );
    assert_eq!(
        p.prediction.recovery_point_after,
        Some(8),
        "{:#?}",
        p.prediction
    );
    assert!(
        entry_findings(p).is_empty(),
        "the entries equal Kafka's log end 8: {:#?}",
        entry_findings(p)
    );
}

/// A tiered partition (KIP-405) whose local retention removed uploaded segments: `orders-0`
/// with the checkpointed log start 20 and the local log from 60
/// (`testkit::brokers::tiered`; the input's `__remote_log_metadata` names the partition's
/// remote segments, so klogscan knows the log is remote-enabled: the scan's own
/// `remote_segment_gap` says "log start 20, local log start 60").
/// `LogManagerTest.testCheckpointLogStartOffsetForRemoteTopic`: for a remote-enabled log
/// `LogManager.checkpointLogStartOffsetsInDir` writes the entry whatever the first local
/// segment (`log.remoteLogEnabled() || logStartOffset > first base`), so 20 below 60 is the
/// normal state, not a stale entry. `LogLoaderTest.testLogStartOffsetWhenRemoteStorageIsEnabled`
/// (`LogLoader.load`: `isRemoteLogEnabled ? logStartOffsetCheckpoint : max(checkpoint,
/// first base)`): the loaded log start is the checkpoint, 20; `UnifiedLog.rebuildProducerState`
/// then calls `truncateAndReload(20, …)`, which keeps the producer snapshot at 60 (only
/// snapshots at or below the log start go) and loads it.
///
/// klogscan's `verify` (src/verify/checks/checkpoints.rs `check_offsets`: "the checkpoint
/// is stale … the broker uses the first segment's base offset when it is higher";
/// src/partition/recovery/predict.rs `log_start_kept`, which is `max(checkpoint, first
/// base)` for every log) says the entry is stale, predicts log start 60 after the load, and
/// a `snapshot_below_log_start` deletion of `…060.snapshot`.
#[test]
fn a_remote_enabled_logs_start_is_its_checkpoint_below_the_local_log() {
    let d = tempfile::tempdir().unwrap();
    let dirs = klogscan::testkit::brokers::tiered(d.path()).unwrap();
    let v = verify(&dirs[0], &VerifyOptions::default());
    let p = v
        .partitions
        .iter()
        .find(|p| p.topic == "orders")
        .expect("orders-0");
    let stale: Vec<_> = p
        .findings
        .iter()
        .filter(|f| f.kind == Kind::CheckpointInconsistent)
        .collect();
    assert!(stale.is_empty(), "{stale:#?}");
    assert_eq!(
        p.prediction.log_start_offset_after,
        Some(20),
        "{:#?}",
        p.prediction
    );
    let below: Vec<_> = p
        .prediction
        .leftovers
        .iter()
        .filter(|l| l.kind == "snapshot_below_log_start")
        .collect();
    assert!(below.is_empty(), "{below:#?}");
}

/// The other side of `a_stray_copy_is_not_judged_against_the_live_logs_checkpoint_entries`:
/// what the load does with the live log's entries is still the stray copy's.
/// `LogManager.loadLog` hands the `-stray` directory the entries under the partition's
/// name and `LogLoader.recoverLog` runs on it, so the live log's start 6 above the stray's
/// end 3 empties it (`deleteSegmentsIfLogStartGreaterThanLogEnd`): the warning stays, said
/// of the live log's entry, and the prediction restarts the copy at 6.
#[test]
fn a_stray_copy_is_still_emptied_by_the_live_logs_log_start_above_its_end() {
    let d = tempfile::tempdir().unwrap();
    let mut live = PartitionBuilder::new("orders", 0).start_time(T0);
    for _ in 0..10 {
        live.append(Batch::new(Producer::idempotent(3, 0)).records(1));
    }
    LogDirBuilder::new(1)
        .log_start_offset("orders", 0, 6)
        .partition(live)
        .write(d.path())
        .unwrap();
    let mut stray = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .broker_files(PartitionFileOptions::default());
    stray.append(Batch::new(Producer::idempotent(5, 0)).records(3));
    write_as(stray, d.path(), &format!("orders-0.{UUID}-stray"));

    let v = run(d.path());
    let stray = copy(&v, CopyKind::Stray);
    let above: Vec<_> = (stray.findings.iter())
        .filter(|f| {
            f.kind == Kind::CheckpointInconsistent && f.message.contains("log start offset 6")
        })
        .collect();
    assert_eq!(above.len(), 1, "{:#?}", stray.findings);
    assert!(
        above[0].message.contains("live log's entry"),
        "{}",
        above[0].message
    );
    assert!(above[0].broker_behaviour.contains("deletes every segment"));
    assert_eq!(
        stray.prediction.log_start_offset_after,
        Some(6),
        "{:#?}",
        stray.prediction
    );
    assert_eq!(
        stray.prediction.log_end_offset_after,
        Some(6),
        "{:#?}",
        stray.prediction
    );
}

/// The negative of `a_stray_copy_is_not_judged_against_the_live_logs_checkpoint_entries`:
/// the live log is judged against its own entries. A high watermark and a recovery point
/// above its end (3), and a transaction of it open below its checkpointed log start, are
/// reported as before.
#[test]
fn a_live_log_is_still_judged_against_its_own_checkpoint_entries() {
    let d = tempfile::tempdir().unwrap();
    let mut live = PartitionBuilder::new("orders", 0).start_time(T0);
    live.append(Batch::new(Producer::transactional(4, 0)).records(2));
    live.append(Batch::new(Producer::idempotent(5, 0)).records(1));
    LogDirBuilder::new(1)
        .log_start_offset("orders", 0, 1)
        .high_watermark("orders", 0, 10)
        .recovery_point("orders", 0, 10)
        .partition(live)
        .write(d.path())
        .unwrap();
    let v = run(d.path());
    let live = copy(&v, CopyKind::Live);
    let found = entry_findings(live);
    let says = |s: &str| found.iter().any(|f| f.message.contains(s));
    assert!(
        says("high watermark (replication-offset-checkpoint) 10 is above the log end offset 3"),
        "{found:#?}"
    );
    assert!(
        says("recovery point (recovery-point-offset-checkpoint) 10 is above the log end offset 3"),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|f| f.kind == Kind::LsoBelowLogStart),
        "{found:#?}"
    );
}

/// The negative of `a_stray_directory_is_kept_not_deleted_by_the_broker`: a `-delete`
/// directory is the one `LogManager.loadLog` queues for deletion (`addLogToBeDeleted`), and
/// its action says so.
#[test]
fn a_delete_directory_is_deleted_by_the_broker() {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1).write(d.path()).unwrap();
    let mut gone = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .broker_files(PartitionFileOptions::default());
    gone.append(Batch::new(Producer::idempotent(5, 0)).records(2));
    write_as(gone, d.path(), &format!("orders-0.{UUID}-delete"));

    let v = run(d.path());
    let gone = copy(&v, CopyKind::Delete);
    let action = (gone.prediction.leftovers.iter())
        .find(|l| l.kind == "delete_dir")
        .map(|l| l.action.clone())
        .unwrap_or_default();
    assert!(
        action.contains("then deleted"),
        "{:#?}",
        gone.prediction.leftovers
    );
}

/// A log dir under `root` whose `gap-0` holds offsets 0–4, a gap to 8 (cleaned away), and a
/// last segment rolled at 8 that is empty at the clean shutdown (its indexes trimmed to 0
/// bytes), with recovery point and high watermark `entries`.
fn empty_last_segment_at_8(root: &Path, entries: i64) -> std::path::PathBuf {
    let mut p = PartitionBuilder::new("gap", 0).start_time(T0);
    p.append(Batch::new(Producer::idempotent(3, 0)).records(5));
    p.skip_offsets(3);
    LogDirBuilder::new(1)
        .recovery_point("gap", 0, entries)
        .high_watermark("gap", 0, entries)
        .partition(p)
        .write(root)
        .unwrap();
    let pd = root.join("gap-0");
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(pd.join(format!("00000000000000000008.{ext}")), b"").unwrap();
    }
    root.to_path_buf()
}

/// The negative of
/// `an_empty_last_segment_above_the_last_batch_ends_the_log_for_the_checkpoint_checks`:
/// entries above Kafka's log end (the empty last segment's base, 8) are above it — a high
/// watermark and recovery point of 9 are reported against 8, the end the load reads.
#[test]
fn entries_above_an_empty_last_segments_base_are_above_the_log_end() {
    let d = tempfile::tempdir().unwrap();
    let v = run(&empty_last_segment_at_8(d.path(), 9));
    let p = copy(&v, CopyKind::Live);
    let found = entry_findings(p);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found
            .iter()
            .all(|f| f.message.ends_with("is above the log end offset 8")),
        "{found:#?}"
    );
}

/// The negative of `a_remote_enabled_logs_start_is_its_checkpoint_below_the_local_log`:
/// the same log dir without its `__remote_log_metadata` partition, so klogscan cannot know
/// the log is remote-enabled. It models a local-only log, as `LogLoader.load` loads one
/// (`max(checkpoint, first base)`): the entry 20 below the first segment is stale, the log
/// starts at 60, and `truncateAndReload(60, …)` deletes the snapshot at 60.
#[test]
fn a_log_not_known_to_be_remote_enabled_starts_at_its_first_segment() {
    let d = tempfile::tempdir().unwrap();
    let dirs = klogscan::testkit::brokers::tiered(d.path()).unwrap();
    std::fs::remove_dir_all(dirs[0][0].join("__remote_log_metadata-0")).unwrap();
    let v = verify(&dirs[0], &VerifyOptions::default());
    let p = v
        .partitions
        .iter()
        .find(|p| p.topic == "orders")
        .expect("orders-0");
    let stale: Vec<_> = (p.findings.iter())
        .filter(|f| f.kind == Kind::CheckpointInconsistent && f.message.contains("stale"))
        .collect();
    assert_eq!(stale.len(), 1, "{:#?}", p.findings);
    assert_eq!(
        p.prediction.log_start_offset_after,
        Some(60),
        "{:#?}",
        p.prediction
    );
    assert!(
        (p.prediction.leftovers.iter())
            .any(|l| l.kind == "snapshot_below_log_start"
                && l.file == "00000000000000000060.snapshot"),
        "{:#?}",
        p.prediction.leftovers
    );
}
