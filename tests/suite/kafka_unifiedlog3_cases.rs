//! `UnifiedLogTest` (core/src/test/scala/unit/kafka/log/UnifiedLogTest.scala), round 3: the
//! cases whose end state is evidence in a partition directory — producer snapshots after a
//! truncation, a full truncation or a log start movement, segments deleted below the high
//! watermark, the high watermark and log start checkpoints, a truncation below an open
//! transaction. Each test writes the files the Kafka test leaves (what its in-memory log
//! would flush and checkpoint), and holds klogscan's `scan` and `verify` against what the
//! next load does with them: `LogLoader.load`, `ProducerStateManager.removeStraySnapshots`
//! (a snapshot matching no segment base goes unless it is the newest and above every base),
//! `ProducerStateManager.truncateAndReload` (snapshots above the log end or at/below the log
//! start are deleted unread) and `UnifiedLog.rebuildProducerState` (after a clean shutdown
//! with no snapshot the producer state is not rebuilt at all).
#![cfg(feature = "testkit")]

use crate::common::cases::{lso, scan_dir, state};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

mod offsets;
mod retention;
mod unread;

// ----- helpers ----------------------------------------------------------------------------

fn snap(o: i64) -> String {
    format!("{o:020}.snapshot")
}

fn seg(o: i64) -> String {
    format!("{o:020}.log")
}

/// A partition `ul-0` with the broker's files.
fn part() -> PartitionBuilder {
    PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default())
}

fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Verify the one partition of the log dir holding `m` as the CLI does.
fn verify(m: &Manifest) -> PartitionVerification {
    let a = request::verify(&Request::new([m.dir.parent().unwrap()]), None).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

/// Remove the files named (each must exist).
fn rm(dir: &Path, names: &[String]) {
    for n in names {
        std::fs::remove_file(dir.join(n)).unwrap_or_else(|e| panic!("{n}: {e}"));
    }
}

/// Remove segment `base` with its indexes (what retention or a truncation deletes).
fn rm_segment(dir: &Path, base: i64) {
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = dir.join(format!("{base:020}.{ext}"));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
}

/// An empty segment at `base` as a roll or a full truncation leaves it after a clean close:
/// an empty `.log` and empty (trimmed) indexes.
fn empty_segment(dir: &Path, base: i64) {
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(dir.join(format!("{base:020}.{ext}")), b"").unwrap();
    }
}

/// The `.snapshot` files in the directory, by offset.
fn snapshots_on_disk(dir: &Path) -> Vec<i64> {
    let mut v: Vec<i64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_suffix(".snapshot").map(|s| s.parse().unwrap())
        })
        .collect();
    v.sort_unstable();
    v
}

/// `(file, kind)` of every leftover the load removes, in report order.
fn leftovers(v: &PartitionVerification) -> Vec<(String, String)> {
    v.prediction
        .leftovers
        .iter()
        .map(|l| (l.file.clone(), l.kind.clone()))
        .collect()
}

/// `(snapshot loaded, replay from, replay to, skipped, producers, open transactions)`.
type Rebuild = (
    Option<i64>,
    Option<i64>,
    Option<i64>,
    bool,
    Option<usize>,
    Option<usize>,
);

fn rebuild(v: &PartitionVerification) -> Rebuild {
    let p = &v.prediction.producer_state;
    (
        p.snapshot_offset,
        p.replay_from,
        p.replay_to,
        p.skipped,
        p.producers,
        p.open_transactions,
    )
}

fn after_load(v: &PartitionVerification) -> Option<Vec<i64>> {
    v.prediction.producer_state.snapshots_after_load.clone()
}

fn of_kind(fs: &[Finding], k: Kind) -> Vec<&Finding> {
    fs.iter().filter(|f| f.kind == k).collect()
}

fn idem(pid: i64) -> Producer {
    Producer::idempotent(pid, 0)
}

// ----- truncation and the producer snapshots ----------------------------------------------

/// `UnifiedLogTest.testProducerIdMapTruncateTo` (and
/// `testProducerIdMapOffsetUpdatedForNonIdempotentData`: a snapshot taken after plain data
/// is at the log end): plain records a, b, c with snapshots at 2 and 3; `truncateTo(2)`
/// keeps the snapshot at 2, `truncateTo(1)` leaves one at 1, `truncateTo(0)` none. The
/// directory after `truncateTo(1)` (one batch, the snapshot at 1) loads from that snapshot
/// with nothing to replay and nothing reported. Near miss: the snapshots at 2 and 3 left
/// behind (a truncation that did not finish): both are above the log end
/// (`snapshot_mismatch`, warning), and the load deletes all three unread — 1 and 2 as
/// strays (`removeStraySnapshots` keeps only the newest one matching no segment base),
/// 3 as beyond the log end — replays `[0, 1)` and writes the snapshot at 1 again.
#[test]
fn producer_id_map_truncate_to() {
    for (kept, leo) in [(2, 2), (1, 1)] {
        let mut p = part();
        p.append(Batch::new(Producer::PLAIN).values(["a"]));
        if kept == 2 {
            p.append(Batch::new(Producer::PLAIN).values(["b"]));
        }
        let (_d, m) = write(LogDirBuilder::new(1), p);
        assert_eq!(m.log_end_offset, leo);
        assert_eq!(snapshots_on_disk(&m.dir), vec![kept]);
        let v = verify(&m);
        assert!(v.findings.is_empty(), "{:#?}", v.findings);
        assert!(leftovers(&v).is_empty(), "{:?}", leftovers(&v));
        assert_eq!(
            rebuild(&v),
            (Some(kept), Some(leo), Some(leo), false, Some(0), Some(0))
        );
        assert_eq!(after_load(&v), Some(vec![kept]));
    }
    // Near miss: truncated to 1 with the snapshots at 2 and 3 still there.
    let mut p = part();
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    let (_d, m) = write(LogDirBuilder::new(1), p);
    for o in [2, 3] {
        std::fs::copy(m.dir.join(snap(1)), m.dir.join(snap(o))).unwrap();
    }
    let v = verify(&m);
    let above: Vec<Option<i64>> = of_kind(&v.findings, Kind::SnapshotMismatch)
        .iter()
        .map(|f| f.offset)
        .collect();
    assert_eq!(above, vec![Some(2), Some(3)], "{:#?}", v.findings);
    assert!(v.findings.iter().all(|f| f.severity == Severity::Warning));
    let gone: Vec<String> = leftovers(&v).into_iter().map(|l| l.0).collect();
    assert_eq!(gone, vec![snap(1), snap(2), snap(3)]);
    assert_eq!(leftovers(&v)[0].1, "stray_snapshot");
    assert_eq!(leftovers(&v)[2].1, "snapshot_beyond_log");
    // (2 is labelled `snapshot_beyond_log`: see `stray_snapshots_go_as_strays_first`.)
    assert_eq!(
        rebuild(&v),
        (None, Some(0), Some(1), false, Some(0), Some(0))
    );
    assert_eq!(after_load(&v), Some(vec![1]));
}

/// `UnifiedLogTest.testProducerIdMapTruncateToWithNoSnapshots`: idempotent producer 1
/// writes sequence 0 (offset 0) and 1 (offset 1); with every snapshot deleted,
/// `truncateTo(1)` rebuilds the state from the log: producer 1's last sequence is 0, and
/// the rebuild leaves a snapshot at 1 holding it. That directory loads from the snapshot
/// (one producer). The test exists because a *load* takes another path: after a clean
/// shutdown with no snapshot at all, `rebuildProducerState` skips the rebuild (the upgrade
/// optimization) and the producer is forgotten — `skipped`, no producer, an empty snapshot
/// at the log end (the one at the segment base, 0, is no new offset: `takeSnapshot` writes
/// none); after an unclean shutdown the segment's recovery replays it from 0 and writes
/// the snapshot at 1 the final rebuild loads: producer 1 is back.
#[test]
fn producer_id_map_truncate_to_with_no_snapshots() {
    let build = || {
        let mut p = part();
        p.append(Batch::new(idem(1)).values(["a"]).sequence(0));
        p
    };
    let (_d, m) = write(LogDirBuilder::new(1), build());
    assert_eq!(snapshots_on_disk(&m.dir), vec![1]);
    let r = scan_dir(&m.dir);
    assert_eq!(state(&r, 1).last_sequence, 0);
    assert_eq!(state(&r, 1).last_offset, 0);
    let v = verify(&m);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);
    assert_eq!(
        rebuild(&v),
        (Some(1), Some(1), Some(1), false, Some(1), Some(0))
    );
    for clean in [true, false] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(clean)
            .recovery_point("ul", 0, 1);
        let (_d, m) = write(ld, build());
        rm(&m.dir, &[snap(1)]);
        let v = verify(&m);
        assert!(
            v.findings.iter().all(|f| f.kind != Kind::SnapshotMismatch),
            "{:#?}",
            v.findings
        );
        if clean {
            assert_eq!(rebuild(&v), (None, None, None, true, Some(0), Some(0)));
            assert_eq!(after_load(&v), Some(vec![1]));
        } else {
            // The recovery of segment 0 replays it and writes the snapshot at 1 it loads.
            assert_eq!(crate::common::cases::recovered(&v), vec![seg(0)]);
            assert!(v.prediction.producer_state.snapshot_written_at_load);
            assert_eq!(
                rebuild(&v),
                (Some(1), Some(1), Some(1), false, Some(1), Some(0))
            );
        }
    }
}

/// `UnifiedLogTest.testProducerIdMapTruncateFullyAndStartAt`: three one-record segments
/// with snapshots at 1 and 3, then `truncateFullyAndStartAt(29)`: one empty segment at 29,
/// log start and end 29, no snapshot left. The next load (clean shutdown) finds no snapshot
/// and skips the producer-state rebuild, writing an empty snapshot at 29; the log is empty
/// at 29 (`log_start_offset`, `log_end_offset`), the last stable offset is the log end.
/// Near miss: the old snapshot at 3 left behind is a stray below the only segment's base
/// and goes at load (`removeStraySnapshots`), with the same outcome.
#[test]
fn producer_id_map_truncate_fully_and_start_at() {
    for stale in [false, true] {
        let p = part().start_offset(29);
        let (_d, m) = write(LogDirBuilder::new(1).log_start_offset("ul", 0, 29), p);
        empty_segment(&m.dir, 29);
        rm(&m.dir, &[snap(29)]);
        if stale {
            std::fs::write(
                m.dir.join(snap(3)),
                klogscan::testkit::files::encode_snapshot(&[]),
            )
            .unwrap();
        }
        let v = verify(&m);
        assert!(v.findings.is_empty(), "stale {stale}: {:#?}", v.findings);
        let pr = &v.prediction;
        assert_eq!(pr.log_start_offset_after, Some(29));
        assert_eq!(pr.log_end_offset_after, Some(29));
        assert!(pr.created_segment.is_none());
        assert_eq!(rebuild(&v), (None, None, None, true, Some(0), Some(0)));
        assert_eq!(after_load(&v), Some(vec![29]));
        let gone: Vec<String> = leftovers(&v).into_iter().map(|l| l.0).collect();
        assert_eq!(gone, if stale { vec![snap(3)] } else { vec![] });
        let r = scan_dir(&m.dir);
        assert_eq!(r.partitions[0].log_start_offset, Some(29));
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
    }
}

/// `UnifiedLogTest.testProducerIdMapTruncateFullyAndStartAt` (and the end of
/// `testHighWatermarkMaintenance`: `truncateFullyAndStartAt(4)` leaves log end, log start and
/// high watermark at 4): the empty log at 29 has log end offset 29 (`LogLoader.recoverLog`:
/// an empty last segment's next offset is its base) and, with no transaction open, a last
/// stable offset of 29 (`UnifiedLog.lastStableOffset`: the high watermark). `verify`'s
/// prediction and the scan report both say 29 (the scan said null for both until the
/// audit found it: a consumer lag or LSO read from the report was missing for every
/// partition emptied by retention, `DeleteRecords` or a full truncation). Near miss: with
/// no segment at all nothing is read and no end is claimed (the load creates one at the
/// log start checkpoint: `verify`'s `created_segment`).
#[test]
fn empty_log_after_full_truncation_is_stable_at_its_end() {
    let p = part().start_offset(29);
    let (_d, m) = write(LogDirBuilder::new(1).log_start_offset("ul", 0, 29), p);
    empty_segment(&m.dir, 29);
    assert_eq!(verify(&m).prediction.log_end_offset_after, Some(29));
    let r = scan_dir(&m.dir);
    assert_eq!(r.partitions[0].log_end_offset, Some(29));
    assert_eq!(lso(&r), Some(29));
    rm_segment(&m.dir, 29);
    let v = verify(&m);
    assert_eq!(
        v.prediction.created_segment.as_deref(),
        Some(seg(29).as_str())
    );
    let r = scan_dir(&m.dir);
    assert_eq!(r.partitions[0].log_end_offset, None);
    assert_eq!(lso(&r), None);
}

/// Why a snapshot goes, in `LogLoader.load`'s order: `removeStraySnapshots` runs before
/// `rebuildProducerState`'s `truncateAndReload`, so a snapshot that matches no segment base
/// and is not the newest such one is deleted there as a stray, whatever its offset. In
/// `testProducerIdMapTruncateTo`'s near miss (snapshots 1, 2, 3 over one segment at 0, log
/// end 1) the strays are 1 and 2 (3, the newest, is kept until `truncateAndReload` finds it
/// beyond the log end); in `testProducerIdMapTruncateFullyAndStartAt`'s (an old snapshot at
/// 3, one segment at 29, log start 29) 3 is a stray below the only base. klogscan deletes
/// the same files but names 2 `snapshot_beyond_log` and 3 `snapshot_below_log_start`, and
/// its `action` says so ("above the log end", "at or below the log start").
#[test]
fn stray_snapshots_go_as_strays_first() {
    let mut p = part();
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    let (_d, m) = write(LogDirBuilder::new(1), p);
    for o in [2, 3] {
        std::fs::copy(m.dir.join(snap(1)), m.dir.join(snap(o))).unwrap();
    }
    let kinds: Vec<String> = leftovers(&verify(&m)).into_iter().map(|l| l.1).collect();
    assert_eq!(
        kinds,
        ["stray_snapshot", "stray_snapshot", "snapshot_beyond_log"]
    );
    let (_d, m) = write(
        LogDirBuilder::new(1).log_start_offset("ul", 0, 29),
        part().start_offset(29),
    );
    empty_segment(&m.dir, 29);
    rm(&m.dir, &[snap(29)]);
    std::fs::write(
        m.dir.join(snap(3)),
        klogscan::testkit::files::encode_snapshot(&[]),
    )
    .unwrap();
    assert_eq!(
        leftovers(&verify(&m)),
        vec![(snap(3), "stray_snapshot".to_string())]
    );
}

// ----- the log start and the producer snapshots -------------------------------------------

/// Idempotent producer 1 writes sequences 0, 1, 2 into three segments (0, 1, 2): the log of
/// `UnifiedLogTest.testLogStartOffsetMovementDeletesSnapshots`, snapshots at 1, 2 and 3.
fn three_segments_of_producer_1() -> PartitionBuilder {
    let mut p = part();
    for (i, v) in ["a", "b", "c"].into_iter().enumerate() {
        if i > 0 {
            p.roll();
        }
        p.append(Batch::new(idem(1)).values([v]).sequence(i as i32));
    }
    p
}

/// `UnifiedLogTest.testLogStartOffsetMovementDeletesSnapshots`: DeleteRecords to 2 and
/// retention delete segments 0 and 1 with the snapshot at 1: one roll snapshot is left, at
/// 2 (closed cleanly, the log end's at 3 too). The scan reports producer 1 at sequence 2,
/// log start 2, nothing wrong. The next load deletes the snapshot at 2 unread — it is at
/// the log start (`truncateAndReload`: `offset <= logStartOffset`;
/// `ProducerStateManagerTest.testTruncateAndReloadRemovesOutOfRangeSnapshots`) — and loads
/// the one at 3. Near miss: DeleteRecords to 1 only (segment 0 gone, log start 1): the
/// snapshot at 1 goes, the one at 2 is above the log start and stays. Left as the test leaves it (not closed:
/// an unclean shutdown, no snapshot at 3), the recovery of the last segment rebuilds from
/// an empty state at 2 (the snapshot there deleted) and writes the snapshot at 3 it loads.
#[test]
fn log_start_offset_movement_deletes_snapshots() {
    for start in [2, 1] {
        let ld = LogDirBuilder::new(1).log_start_offset("ul", 0, start);
        let (_d, m) = write(ld, three_segments_of_producer_1());
        for base in 0..start {
            rm_segment(&m.dir, base);
        }
        rm(&m.dir, &(1..start).map(snap).collect::<Vec<_>>());
        assert_eq!(snapshots_on_disk(&m.dir), (start..=3).collect::<Vec<_>>());
        let r = scan_dir(&m.dir);
        assert_eq!(r.partitions[0].log_start_offset, Some(start));
        assert_eq!(state(&r, 1).last_sequence, 2);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        let v = verify(&m);
        assert!(v.findings.is_empty(), "{:#?}", v.findings);
        // The snapshot at the log start (the first held segment's base) goes.
        assert_eq!(
            leftovers(&v),
            vec![(snap(start), "snapshot_below_log_start".to_string())]
        );
        assert_eq!(
            rebuild(&v),
            (Some(3), Some(3), Some(3), false, Some(1), Some(0))
        );
        assert_eq!(after_load(&v), Some((2.max(start + 1)..=3).collect()));
    }
    let ld = LogDirBuilder::new(1)
        .log_start_offset("ul", 0, 2)
        .clean_shutdown(false)
        .recovery_point("ul", 0, 2);
    let (_d, m) = write(ld, three_segments_of_producer_1());
    rm_segment(&m.dir, 0);
    rm_segment(&m.dir, 1);
    rm(&m.dir, &[snap(1), snap(3)]);
    let v = verify(&m);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);
    assert_eq!(crate::common::cases::recovered(&v), vec![seg(2)]);
    assert!(v.prediction.producer_state.snapshot_written_at_load);
    assert_eq!(
        rebuild(&v),
        (Some(3), Some(3), Some(3), false, Some(1), Some(0))
    );
}

/// `UnifiedLogTest.testDeleteSnapshotsOnIncrementLogStartOffset`: producer 1 writes at 0
/// (segment 0), producer 2 at 1 (segment 1), a roll opens segment 2; DeleteRecords to 2
/// and retention delete segments 0 and 1 and the snapshot at 1. Kafka's test checks the
/// live log: both producers are still active (the log start moving removes no producer)
/// and one snapshot, at 2, holds them. On disk that is an empty segment at 2, log start 2,
/// and the snapshot at 2: the scan reads both producers from it and reports nothing. The
/// next load forgets them: the snapshot is at the log start, deleted unread, and with no
/// batch to replay the state is empty (`producers` 0) — no snapshot written either
/// (`takeSnapshot` at 2 is no new offset). Near miss: log start 1 (only segment 0 gone):
/// the snapshot at 2 is loaded, both producers kept.
#[test]
fn delete_snapshots_on_increment_log_start_offset() {
    for start in [2, 1] {
        let mut p = part();
        p.append(Batch::new(idem(1)).values(["a"]));
        p.roll();
        p.append(Batch::new(idem(2)).values(["b"]));
        let (_d, m) = write(LogDirBuilder::new(1).log_start_offset("ul", 0, start), p);
        for base in 0..start {
            rm_segment(&m.dir, base);
        }
        if start == 2 {
            rm(&m.dir, &[snap(1)]);
        }
        empty_segment(&m.dir, 2);
        assert_eq!(snapshots_on_disk(&m.dir), (start..=2).collect::<Vec<_>>());
        let r = scan_dir(&m.dir);
        assert_eq!(r.partitions[0].log_start_offset, Some(start));
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        let v = verify(&m);
        assert!(v.findings.is_empty(), "{:#?}", v.findings);
        if start == 2 {
            assert_eq!(
                rebuild(&v),
                (None, Some(2), Some(2), false, Some(0), Some(0))
            );
            assert_eq!(after_load(&v), Some(vec![]));
        } else {
            assert_eq!(
                rebuild(&v),
                (Some(2), Some(2), Some(2), false, Some(2), Some(0))
            );
            assert_eq!(after_load(&v), Some(vec![2]));
        }
    }
}

/// Producer 1's transaction opens at 0 (0–4), plain data 5–7, a roll at 8, producer 1
/// again 8–12 and, an hour later, a plain record (13): the log of
/// `UnifiedLogTest.testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion`
/// with the transaction left hanging, segment 0 then deleted (log start 8). `clean`: closed
/// cleanly (the log end snapshot at 14, holding the transaction's first offset 0, is
/// there); else crashed before any snapshot after the roll's at 8.
fn hanging_below_a_deleted_segment(clean: bool) -> (TempDir, Manifest) {
    let t = Producer::transactional(1, 0);
    let mut p = part().time_step(60_000);
    p.append(Batch::new(t).records(5));
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.roll();
    p.append(Batch::new(t).records(5));
    p.advance_time(3_600_000);
    p.append(Batch::new(Producer::PLAIN).records(1));
    let ld = LogDirBuilder::new(1)
        .log_start_offset("ul", 0, 8)
        .clean_shutdown(clean)
        .recovery_point("ul", 0, if clean { 14 } else { 8 });
    let (d, m) = write(ld, p);
    rm_segment(&m.dir, 0);
    if !clean {
        rm(&m.dir, &[snap(14)]);
    }
    (d, m)
}

/// The `hanging_transaction` of `verify` whose start offset comes from the snapshot at the
/// first held segment (`UnifiedLogTest.testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion`:
/// the live broker keeps `currentTxnFirstOffset` 0). Closed cleanly, the log end snapshot
/// (14) keeps 0 across the next start: the abort is `--start-offset 0` (this test).
#[test]
fn hanging_below_log_start_keeps_its_offset_through_a_clean_restart() {
    let (_d, m) = hanging_below_a_deleted_segment(true);
    let v = verify(&m);
    let h = of_kind(&v.findings, Kind::HangingTransaction);
    assert_eq!(h.len(), 1, "{:#?}", v.findings);
    assert_eq!(h[0].offset, Some(0));
    let fix = h[0].remediation.as_deref().unwrap_or_default();
    assert!(fix.contains("--start-offset 0"), "{fix}");
    assert!(!fix.contains("opens again"), "{fix}");
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(14));
    assert_eq!(v.prediction.producer_state.open_transactions, Some(1));
}

/// The same directory after a crash with only the roll snapshot at 8, which is the log
/// start: the next load deletes it unread (`ProducerStateManager.truncateAndReload`,
/// `offset <= logStartOffset`; `UnifiedLogTest.testLogStartOffsetMovementDeletesSnapshots`,
/// `ProducerStateManagerTest.testTruncateAndReloadRemovesOutOfRangeSnapshots`) — `verify`
/// predicts that (`snapshot_below_log_start`) — and the recovery of segment 8 replays it
/// from an empty state: the transaction reopens at its first held batch, 8
/// (`ProducerAppendInfo`: `currentTxnFirstOffset` is the first transactional batch with no
/// ongoing transaction). After that start `DescribeProducers` reports start offset 8 and
/// `kafka-transactions.sh abort --start-offset 0` finds no open transaction there: the
/// finding gives both commands, today's and the one after that start (until the audit found
/// it, only `--start-offset 0`). Near miss: the clean restart above keeps offset 0 and gets
/// no second command.
#[test]
fn hanging_below_log_start_reopens_at_the_first_held_batch_after_a_crash() {
    let (_d, m) = hanging_below_a_deleted_segment(false);
    let v = verify(&m);
    assert_eq!(
        leftovers(&v),
        vec![(snap(8), "snapshot_below_log_start".to_string())]
    );
    assert_eq!(v.prediction.producer_state.open_transactions, Some(1));
    let h = of_kind(&v.findings, Kind::HangingTransaction);
    assert_eq!(h.len(), 1, "{:#?}", v.findings);
    let fix = h[0].remediation.as_deref().unwrap_or_default();
    assert!(fix.contains("--start-offset 8"), "{fix}");
}
