//! Two loads `verify` predicts that do not end a log where its recovery leaves it
//! (docs/verify.md, "The prediction", items 5 and 8):
//!
//! * a `-delete` directory, which `LogManager.loadLog` loads only to queue it for deletion:
//!   `LogLoader.load` skips `recoverLog` for it and ends with `RecoveryOffsets(0, 0)` — no
//!   recovery, no truncation, the producer state rebuilt only to offset 0 — and no finding
//!   of such a copy may judge the live partition;
//! * a log whose end, once recovered, falls below its log start checkpoint:
//!   `LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd` deletes every segment, empties
//!   the producer state and the leader-epoch cache, and `recoverLog` opens one empty
//!   segment at the checkpoint.
//!
//! Each has its counterpart that loads as usual.
#![cfg(feature = "testkit")]

use klogscan::finding::{CopyKind, Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::testkit::{
    Batch, FaultKind, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
    Target,
};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

const DELETE_SUFFIX: &str = ".0123456789abcdef0123456789abcdef-delete";

fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

/// Verify the only partition under `input` as the CLI does.
fn verify_at(input: &Path) -> PartitionVerification {
    let a = request::verify(&Request::new([input]), None).unwrap();
    assert_eq!(a.report.partitions.len(), 1, "{:?}", a.report.errors);
    a.report.partitions.into_iter().next().unwrap()
}

fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// `(file, kind, action)` of every snapshot the load deletes.
fn snapshot_fates(v: &PartitionVerification) -> Vec<(String, String, String)> {
    v.prediction
        .leftovers
        .iter()
        .filter(|l| l.file.ends_with(".snapshot"))
        .map(|l| (l.file.clone(), l.kind.clone(), l.action.clone()))
        .collect()
}

fn of_kind(v: &PartitionVerification, kind: Kind) -> Vec<&Finding> {
    v.findings.iter().filter(|f| f.kind == kind).collect()
}

// ----- the -delete directory ----------------------------------------------------------------

/// Segments 0 (producer 7), 2 (producer 1's transaction, left open) and 4 (producer 7
/// again, then 7 bytes of garbage); snapshots at 2, 4 and 6. The log dir shut down
/// uncleanly with recovery point 2, and its checkpoints hold entries under `d-0`: a high
/// watermark of 100 and a log start of 3.
fn damaged_with_open_transaction() -> (TempDir, Manifest) {
    let mut p = PartitionBuilder::new("d", 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    p.roll();
    p.append(Batch::new(Producer::transactional(1, 0)).records(2));
    p.roll();
    p.append(
        Batch::new(Producer::idempotent(7, 0))
            .records(2)
            .sequence(2),
    );
    p.fault(
        Target::LastLog,
        FaultKind::AppendGarbage(vec![1, 2, 3, 4, 5, 6, 7]),
    );
    write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("d", 0, 2)
            .high_watermark("d", 0, 100)
            .log_start_offset("d", 0, 3),
        p,
    )
}

fn rename_to_delete(m: &Manifest) -> std::path::PathBuf {
    let del = m.dir.with_file_name(format!("d-0{DELETE_SUFFIX}"));
    std::fs::rename(&m.dir, &del).unwrap();
    del
}

/// `LogManager.loadLog` on a `-delete` directory: `LogLoader.load` runs no `recoverLog`
/// (an unclean shutdown recovers nothing, the garbage is not truncated), ends the log at
/// 0 with recovery point 0 and rebuilds the producer state only to offset 0 (every
/// snapshot deleted, no producer left); the directory is then deleted with every segment.
/// The log start is still `max(checkpoint, first base)`: the loader reads the entry under
/// the partition's name; and `UnifiedLog`'s constructor raises the recovery point to it,
/// as for any directory (`updateLogStartOffset`/`updateLocalLogStartOffset`; this test
/// used to expect 0). No finding judges the live partition: the checkpoints are not
/// compared with this copy (their entry is the live log's), its open transaction and its
/// damage claim no reader.
#[test]
fn a_delete_copy_is_loaded_to_offset_0_without_recovery_then_deleted() {
    let (d, m) = damaged_with_open_transaction();
    assert_eq!(m.log_end_offset, 6);
    rename_to_delete(&m);
    let v = verify_at(d.path());
    assert_eq!(v.source.copy, CopyKind::Delete);
    let pr = &v.prediction;
    assert!(
        pr.recovered_segments.is_empty(),
        "{:?}",
        pr.recovered_segments
    );
    assert!(pr.truncation.is_none());
    assert!(pr.load_failure.is_none());
    assert_eq!(pr.deleted_segments, [seg(0), seg(2), seg(4)]);
    assert_eq!(pr.created_segment, None);
    assert_eq!(
        (
            pr.log_start_offset_after,
            pr.log_end_offset_after,
            pr.recovery_point_after
        ),
        (Some(3), Some(0), Some(3))
    );
    let ps = &pr.producer_state;
    assert!(!ps.skipped);
    assert_eq!(
        (ps.snapshot.as_deref(), ps.replay_from, ps.replay_to),
        (None, Some(0), Some(0))
    );
    assert_eq!((ps.producers, ps.open_transactions), (Some(0), Some(0)));
    let fates = snapshot_fates(&v);
    let files: Vec<&str> = fates.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        files,
        [
            "00000000000000000002.snapshot",
            "00000000000000000004.snapshot",
            "00000000000000000006.snapshot"
        ]
    );
    assert!(
        fates.iter().all(|f| f.2.contains("only to offset 0")),
        "{fates:?}"
    );
    let dir = pr
        .leftovers
        .iter()
        .find(|l| l.kind == "delete_dir")
        .unwrap();
    assert!(
        dir.action
            .starts_with("loaded without recovery, then deleted"),
        "{}",
        dir.action
    );
    assert_eq!(pr.unrecovered_corruption.len(), 1);
    assert!(pr.unrecovered_corruption[0].contains("-delete directory is loaded without recovery"));

    // No live verdict.
    for k in [
        Kind::CheckpointInconsistent,
        Kind::LsoBelowLogStart,
        Kind::HangingTransaction,
    ] {
        assert!(of_kind(&v, k).is_empty(), "{k:?}: {:#?}", v.findings);
    }
    for f in &v.findings {
        let b = &f.broker_behaviour;
        assert!(
            !b.contains("last stable offset stays"),
            "{}: {b}",
            f.kind.id()
        );
        assert!(!b.contains("serves the"), "{}: {b}", f.kind.id());
        assert!(
            !f.remediation
                .as_deref()
                .unwrap_or("")
                .contains("kafka-transactions.sh"),
            "{}: {:?}",
            f.kind.id(),
            f.remediation
        );
    }
    let open = of_kind(&v, Kind::OpenTransaction);
    assert_eq!(open.len(), 1);
    assert!(
        open[0]
            .broker_behaviour
            .contains("no last stable offset is pinned by it")
    );
    let tail = of_kind(&v, Kind::TrailingBytes);
    assert_eq!(tail.len(), 1);
    assert!(
        tail[0].broker_behaviour.contains("no reader meets it"),
        "{}",
        tail[0].broker_behaviour
    );
}

/// The same directory under its live name loads as usual: after the unclean shutdown the
/// segments from the recovery point on are recovered, the garbage truncated, the producer
/// state rebuilt to the log end (both producers, the transaction open), the recovery point
/// raised to the local log start; its checkpoints are its own, so the log start above the open transaction and the
/// high watermark above the log end are findings.
#[test]
fn the_same_directory_live_is_recovered_and_judged_against_its_checkpoints() {
    let (d, _m) = damaged_with_open_transaction();
    let v = verify_at(d.path());
    assert_eq!(v.source.copy, CopyKind::Live);
    let pr = &v.prediction;
    let recovered: Vec<&str> = pr
        .recovered_segments
        .iter()
        .map(|r| r.segment.as_str())
        .collect();
    assert_eq!(recovered, [seg(2), seg(4)]);
    let t = pr.truncation.as_ref().expect("the garbage is truncated");
    assert_eq!((t.segment.as_str(), t.offset), (seg(4).as_str(), 6));
    assert!(pr.deleted_segments.is_empty());
    assert_eq!(
        (
            pr.log_start_offset_after,
            pr.log_end_offset_after,
            pr.recovery_point_after
        ),
        // The recovery point 2 raised to the local log start 3 (UnifiedLog's
        // updateLocalLogStartOffset).
        (Some(3), Some(6), Some(3))
    );
    assert_eq!(pr.producer_state.open_transactions, Some(1));
    assert!(!pr.leftovers.iter().any(|l| l.kind == "delete_dir"));
    assert_eq!(of_kind(&v, Kind::LsoBelowLogStart).len(), 1);
    assert_eq!(of_kind(&v, Kind::CheckpointInconsistent).len(), 1);
}

/// `LogLoader.loadSegmentFiles` runs before the `-delete` check: a segment of the copy
/// without its offset index is still recovered at load (the only recovery such a copy
/// gets), the log still ends at 0. And `UnifiedLogTest.testLoadPartitionDirWithNoSegmentsShouldNotThrow`:
/// a `-delete` directory without any segment gets one, at offset 0.
#[test]
fn a_delete_copy_still_recovers_a_segment_missing_its_index_and_an_empty_one_gets_segment_0() {
    let (d, m) = damaged_with_open_transaction();
    std::fs::remove_file(m.dir.join(format!("{:020}.index", 2))).unwrap();
    let del = rename_to_delete(&m);
    let v = verify_at(d.path());
    let pr = &v.prediction;
    let recovered: Vec<(&str, &str)> = pr
        .recovered_segments
        .iter()
        .map(|r| (r.segment.as_str(), r.reason.as_ref()))
        .collect();
    assert_eq!(recovered, [(seg(2).as_str(), "missing offset index")]);
    assert!(pr.truncation.is_none());
    assert_eq!(pr.log_end_offset_after, Some(0));

    for e in std::fs::read_dir(&del).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let v = verify_at(d.path());
    let pr = &v.prediction;
    assert!(pr.deleted_segments.is_empty());
    assert_eq!(pr.created_segment.as_deref(), Some(seg(0).as_str()));
    // The recovery point 0 raised to the log start 3 (the checkpoint's entry) by
    // UnifiedLog's constructor, as for every directory (this used to expect 0).
    assert_eq!(
        (
            pr.log_start_offset_after,
            pr.log_end_offset_after,
            pr.recovery_point_after
        ),
        (Some(3), Some(0), Some(3))
    );
}

// ----- the log that ends below its log start checkpoint --------------------------------------

/// `n` single-record segments (bases 0 to n-1) and an empty active segment at n, with
/// their indexes (as `LogLoaderTest` builds them: one append and a roll each).
fn single_record_segments(n: i64, ld: LogDirBuilder) -> (TempDir, Manifest) {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    for i in 0..n {
        if i > 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    let (d, m) = write(ld, p);
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(m.dir.join(format!("{n:020}.{ext}")), b"").unwrap();
    }
    (d, m)
}

/// `LogLoaderTest.testLogEndLessThanStartAfterReopen`: five single-record segments and an
/// empty active one (bases 0–5), DeleteRecords to 4, segment 1 overwritten with garbage,
/// an unclean shutdown with recovery point 0. Recovery truncates segment 1 to nothing and
/// deletes every later segment; the log then ends at 1, below the log start checkpoint 4:
/// every segment goes, one empty segment is opened at 4, which is the log start and end;
/// the recovery point is the checkpoint's 0 raised to the local log start 4 (`UnifiedLog`'s
/// constructor). The producer state
/// starts empty at 4 (`truncateFullyAndStartAt`: every snapshot deleted), the
/// leader-epoch cache is cleared, and the garbage's finding says its segment is deleted.
#[test]
fn log_end_less_than_start_after_reopen_restarts_the_log_at_the_checkpoint() {
    let (d, m) = single_record_segments(
        5,
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ll", 0, 0)
            .log_start_offset("ll", 0, 4),
    );
    std::fs::write(m.dir.join(seg(1)), b"corruptRecord").unwrap();
    let v = verify_at(d.path());
    let pr = &v.prediction;
    let t = pr
        .truncation
        .as_ref()
        .expect("segment 1 is truncated first");
    assert_eq!(
        (t.segment.as_str(), t.position, t.offset),
        (seg(1).as_str(), 0, 1)
    );
    assert_eq!(pr.deleted_segments, (0..=5).map(seg).collect::<Vec<_>>());
    assert_eq!(pr.created_segment.as_deref(), Some(seg(4).as_str()));
    assert_eq!(
        (
            pr.log_start_offset_after,
            pr.log_end_offset_after,
            pr.recovery_point_after
        ),
        // The checkpoint's 0 bounded by that end, then raised to the local log start 4
        // (UnifiedLog's updateLocalLogStartOffset).
        (Some(4), Some(4), Some(4))
    );
    assert!(pr.unrecovered_corruption.is_empty());
    let ps = &pr.producer_state;
    assert!(!ps.skipped);
    assert_eq!(
        (ps.snapshot.as_deref(), ps.replay_from, ps.replay_to),
        (None, Some(4), Some(4))
    );
    assert_eq!((ps.producers, ps.open_transactions), (Some(0), Some(0)));
    let fates = snapshot_fates(&v);
    assert_eq!(fates.len(), 5, "{fates:?}");
    assert!(
        fates
            .iter()
            .all(|f| f.2.contains("truncateFullyAndStartAt")),
        "{fates:?}"
    );
    assert!(
        pr.leftovers
            .iter()
            .any(|l| l.file == "leader-epoch-checkpoint" && l.kind == "leader_epoch_cache_cleared")
    );
    let damage: Vec<&Finding> = v
        .findings
        .iter()
        .filter(|f| {
            f.segment.as_deref() == Some(seg(1).as_str()) && f.evidence.get("recovery").is_some()
        })
        .collect();
    assert!(!damage.is_empty(), "{:#?}", v.findings);
    for f in damage {
        assert_eq!(f.evidence["recovery"]["fate"], "deleted");
        assert_eq!(f.evidence["recovery"]["log_end_offset_after"], 4);
        assert!(
            f.broker_behaviour
                .contains("below its log start checkpoint 4"),
            "{}",
            f.broker_behaviour
        );
    }
}

/// The warning's own case ("segment files were deleted from the file system"): after a
/// clean shutdown nothing is recovered, but the segments above 2 are gone while the log
/// start checkpoint says 5. The log is emptied at 5 all the same; with no snapshot left
/// after a clean shutdown the producer-state rebuild is skipped; the recovery point is
/// the checkpoint's, bounded by the new end.
#[test]
fn a_clean_log_missing_its_later_segments_is_emptied_at_the_checkpoint() {
    let (d, m) = single_record_segments(
        6,
        LogDirBuilder::new(1)
            .clean_shutdown(true)
            .log_start_offset("ll", 0, 5),
    );
    for base in 3..=6 {
        for ext in ["log", "index", "timeindex", "snapshot"] {
            let f = m.dir.join(format!("{base:020}.{ext}"));
            if f.exists() {
                std::fs::remove_file(f).unwrap();
            }
        }
    }
    let v = verify_at(d.path());
    let pr = &v.prediction;
    assert!(pr.recovered_segments.is_empty());
    assert!(pr.truncation.is_none());
    assert_eq!(pr.deleted_segments, [seg(0), seg(1), seg(2)]);
    assert_eq!(pr.created_segment.as_deref(), Some(seg(5).as_str()));
    assert_eq!(
        (
            pr.log_start_offset_after,
            pr.log_end_offset_after,
            pr.recovery_point_after
        ),
        (Some(5), Some(5), Some(5))
    );
    let ps = &pr.producer_state;
    assert!(ps.skipped);
    assert_eq!((ps.producers, ps.open_transactions), (Some(0), Some(0)));
}

/// The log is kept when its end reaches the checkpoint (`logEndOffset >=
/// logStartOffsetCheckpoint`), and the end compared is the last segment's next offset: an
/// empty last segment at 10 ends the log at 10 even though the last batch ends at 5
/// (compaction removed the offsets between), so a log start checkpoint of 8 keeps every
/// segment, and the log ends at 10.
#[test]
fn a_log_ending_at_or_above_its_checkpoint_is_kept() {
    let (d, m) = single_record_segments(
        5,
        LogDirBuilder::new(1)
            .clean_shutdown(true)
            .log_start_offset("ll", 0, 5),
    );
    assert_eq!(m.log_end_offset, 5);
    let v = verify_at(d.path());
    let pr = &v.prediction;
    assert!(pr.deleted_segments.is_empty(), "{:?}", pr.deleted_segments);
    assert_eq!(pr.created_segment, None);
    assert_eq!(
        (pr.log_start_offset_after, pr.log_end_offset_after),
        (Some(5), Some(5))
    );
    assert!(
        !pr.leftovers
            .iter()
            .any(|l| l.kind == "leader_epoch_cache_cleared")
    );

    // The empty active segment renamed to 10 (its indexes too): a gap after offset 4.
    for ext in ["log", "index", "timeindex"] {
        std::fs::rename(
            m.dir.join(format!("{:020}.{ext}", 5)),
            m.dir.join(format!("{:020}.{ext}", 10)),
        )
        .unwrap();
    }
    std::fs::write(
        d.path().join("log-start-offset-checkpoint"),
        "0\n1\nll 0 8\n",
    )
    .unwrap();
    let v = verify_at(d.path());
    let pr = &v.prediction;
    assert!(pr.deleted_segments.is_empty(), "{:?}", pr.deleted_segments);
    assert_eq!(pr.created_segment, None);
    assert_eq!(
        (pr.log_start_offset_after, pr.log_end_offset_after),
        (Some(8), Some(10))
    );
}

/// The same log as `log_end_less_than_start_after_reopen_restarts_the_log_at_the_checkpoint`
/// with a checkpointed high watermark: recovery removes offsets 1..=4, but 1..=3 lie below
/// the log start 4 (DeleteRecords took them from readers already), so with the high
/// watermark at 5 one acknowledged offset is lost (`truncation_below_high_watermark`,
/// `offsets_lost_at_least` 1, not 4); with the high watermark at the log start nothing a
/// reader could fetch is lost, and there is no such finding.
#[test]
fn offsets_below_the_log_start_are_not_counted_as_lost() {
    for (hw, lost) in [(5, Some(1)), (4, None)] {
        let (d, m) = single_record_segments(
            5,
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("ll", 0, 0)
                .log_start_offset("ll", 0, 4)
                .high_watermark("ll", 0, hw),
        );
        std::fs::write(m.dir.join(seg(1)), b"corruptRecord").unwrap();
        let a = request::run(&Request::new([d.path()])).unwrap();
        let found: Vec<&Finding> = a
            .report
            .findings
            .iter()
            .filter(|f| f.kind == Kind::TruncationBelowHighWatermark)
            .collect();
        assert_eq!(
            found
                .first()
                .map(|f| f.evidence["offsets_lost_at_least"].as_i64().unwrap()),
            lost,
            "high watermark {hw}: {found:#?}"
        );
    }
}

/// Two replicas of that log, both with log start 4 (DeleteRecords is replicated): the
/// copy whose segments are intact holds every offset the damaged one loses from the log
/// start up, so the loss is a warning naming it — though its log start lies above the
/// truncation point 1.
#[test]
fn a_replica_holding_the_range_from_the_log_start_up_is_intact() {
    let root = tempfile::tempdir().unwrap();
    let ld = |id| {
        LogDirBuilder::new(id)
            .clean_shutdown(false)
            .recovery_point("ll", 0, 0)
            .log_start_offset("ll", 0, 4)
            .high_watermark("ll", 0, 5)
    };
    let mut dirs = Vec::new();
    for id in [1, 2] {
        let (d, m) = single_record_segments(5, ld(id));
        if id == 1 {
            std::fs::write(m.dir.join(seg(1)), b"corruptRecord").unwrap();
        }
        let to = root.path().join(format!("broker-{id}"));
        std::fs::rename(d.path(), &to).unwrap();
        dirs.push(to);
    }
    let a = request::run(&Request::new(dirs.iter())).unwrap();
    let f: Vec<&Finding> = a
        .report
        .findings
        .iter()
        .filter(|f| f.kind == Kind::TruncationBelowHighWatermark)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", a.report.findings);
    assert_eq!(
        f[0].severity,
        klogscan::finding::Severity::Warning,
        "{}",
        f[0].message
    );
    assert!(
        f[0].message.contains("holds offsets 4..4 intact"),
        "{}",
        f[0].message
    );
}
