//! A load `verify` predicts that does not end a log where its recovery leaves it
//! (docs/verify.md, "The prediction", item 5): a log whose end, once recovered, falls below
//! its log start checkpoint. `LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd` deletes
//! every segment, empties the producer state and the leader-epoch cache, and `recoverLog`
//! opens one empty segment at the checkpoint. Its counterpart loads as usual.
#![cfg(feature = "testkit")]

use klogscan::finding::Finding;
use klogscan::request::{self, Request};
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

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
/// the recovery point is the checkpoint's 0 (bounded by that end). The producer state
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
        (Some(4), Some(4), Some(0))
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
