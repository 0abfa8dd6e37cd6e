//! `LocalLogTest.testTruncateFullyAndStartAt` and `testTruncateTo` (with
//! `testCreateAndDeleteSegment`'s path to a new base): what `LocalLog`'s truncations leave
//! when the broker dies before `file.delete.delay.ms` — or between two of their steps.

use super::{
    PDIR, TOPIC, base_of, deleted_leftovers, ends, names, recovered_set, remove_snapshots,
    rename_deleted, seg,
};
use crate::kafka_ckaudit_cases::{Dir, assert_quiet, part};
use klogscan::finding::Kind;
use klogscan::finding::Severity;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

/// `testTruncateFullyAndStartAt`'s log: one-record batches 0–12, rolled after 1, 3, 5 and 7
/// (segments 0, 2, 4, 6 of two records and 8 of five).
fn eight_then_five() -> PartitionBuilder {
    let mut p = PartitionBuilder::new(TOPIC, 1);
    for o in 0..13 {
        p.append(Batch::new(Producer::PLAIN).records(1));
        if o % 2 == 1 && o < 8 {
            p.roll();
        }
    }
    p
}

/// `LocalLogTest.testTruncateFullyAndStartAt`: `truncateFullyAndStartAt(10)` renames
/// segments 0–6 `.deleted` (`removeAndDeleteSegments`, asynchronous), then
/// `createAndDeleteSegment(10, segment 8)` opens the new `10.log` first (its indexes lazy:
/// no file) and renames segment 8's files after it. `UnifiedLog.truncateFullyAndStartAt`
/// then clears the leader-epoch cache, deletes every producer snapshot
/// (`ProducerStateManager.truncateFullyAndStartAt`) and moves the log start and the high
/// watermark to 10 (no log start entry: 10 is the first base). The broker dies inside the
/// delete delay, recovery point 0. Next start: every `.deleted` file removed, segment 10
/// recovered (no offset index), log start and end 10, nothing said. Near miss: the crash
/// inside `createAndDeleteSegment`, `10.log` opened and segment 8 not yet renamed (nothing
/// of `UnifiedLog`'s part done: the epoch cache, the snapshots at 2–8 and 13 still there; the
/// high watermark checkpoint taken as 10 in both, no acknowledged offset above it): the load
/// keeps segment 8 (offsets 8–12) before the empty segment 10, the log starts at 8 (the
/// first base) and ends at 10 (the last segment's `readNextOffset`, its base); the snapshot
/// at 13 is above that end and deleted at load. Offsets 10–12 of segment 8, above the end,
/// go unflagged by the load; klogscan names them (`segment_past_next_base`, the one finding
/// at warning or above, in verify and scan alike).
#[test]
fn truncate_fully_and_start_at_leaves_one_empty_segment() {
    for done in [true, false] {
        let d = Dir::write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point(TOPIC, 1, 0)
                .high_watermark(TOPIC, 1, 10)
                .partition(eight_then_five()),
        );
        let below = if done { 10 } else { 8 };
        let mut renamed = rename_deleted(&d, |b| b < below);
        d.put(&format!("{PDIR}/{}", seg(10, "log")), "");
        if done {
            remove_snapshots(&d);
            d.put(&format!("{PDIR}/leader-epoch-checkpoint"), "0\n0\n");
        }
        renamed.sort();
        assert_eq!(renamed.len(), if done { 15 } else { 12 }, "{renamed:?}");
        let v = d.verify();
        let p = part(&v, TOPIC, 1);
        assert_eq!(deleted_leftovers(p), renamed);
        assert!(p.prediction.truncation.is_none() && p.prediction.deleted_segments.is_empty());
        assert_eq!(p.prediction.created_segment, None);
        if done {
            assert_quiet(&d, &v);
            assert_eq!(ends(p), (Some(10), Some(10)));
            assert_eq!(recovered_set(p), [10]);
        } else {
            assert_eq!(ends(p), (Some(8), Some(10)));
            assert_eq!(
                p.prediction.log_end_offset,
                Some(13),
                "the last batch's end"
            );
            assert_eq!(recovered_set(p), [8, 10]);
            // The snapshot at 13 is above the loaded end: deleted at load
            // (`rebuildProducerState` → `truncateAndReload`), the state rebuilt from the one at
            // 8. The one loud finding: segment 8's offsets 10–12 reach the empty segment 10
            // (`segment_past_next_base`, session 34).
            assert_eq!(loud(&d, &v), [(Kind::SegmentPastNextBase, Some(10)); 2]);
            let at_13 = (p.prediction.leftovers.iter())
                .find(|l| l.file == seg(13, "snapshot"))
                .unwrap_or_else(|| panic!("{:#?}", p.prediction.leftovers));
            assert_eq!(at_13.kind, "snapshot_beyond_log");
            assert!(at_13.action.starts_with("deleted"), "{}", at_13.action);
        }
    }
}

/// `testTruncateTo`'s log: one-record batches 0 to `n` − 1, rolled after every third
/// (segments 0, 3, 6, 9; after 12 records an empty active segment at 12, written here as
/// the roll leaves it: its `.log` alone).
fn threes(n: i64, ld: LogDirBuilder) -> Dir {
    let mut p = PartitionBuilder::new(TOPIC, 1);
    for o in 0..n {
        p.append(Batch::new(Producer::PLAIN).records(1));
        if o % 3 == 2 && o + 1 < n {
            p.roll();
        }
    }
    let d = Dir::write(ld.partition(p));
    if n == 12 {
        d.put(&format!("{PDIR}/{}", seg(12, "log")), "");
    }
    d
}

fn unclean() -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point(TOPIC, 1, 0)
        .high_watermark(TOPIC, 1, 7)
}

/// `LocalLogTest.testTruncateTo`: twelve records in segments 0, 3, 6, 9 and the empty 12;
/// `truncateTo(7)` renames the segments above 7 — 9 and 12, whose `.log` alone exists (its
/// lazy indexes never created) — `.deleted`, then cuts the active segment 6 to offset 6
/// (`LogSegment.truncateTo`). The broker dies inside the delete delay, recovery point 0,
/// high watermark 7. Next start: the `.deleted` files removed, segments 0, 3 and 6 recovered,
/// nothing cut, log end 7, nothing said. Near misses: (1) the crash between the renames and
/// the cut — segment 6 still holds 6–8: the log ends at 9 (the load does not redo a
/// truncation; the follower's next fetch does), and the snapshot at 12 is above it; (2) segment 9's files never renamed while
/// segment 6 is cut: segment 9 is loaded after the cut one, the log ends at 12 and the scan
/// names the two offsets missing between 6 and 9 (`offset_gap`, an info).
#[test]
fn truncate_to_renames_the_later_segments_then_cuts_the_active_one() {
    let full = threes(12, LogDirBuilder::new(1));
    let nine: Vec<String> = (names(&full.root.join(PDIR)).into_iter())
        .filter(|n| base_of(n) == Some(9) && !n.ends_with(".snapshot"))
        .collect();
    assert_eq!(nine.len(), 3, "{nine:?}");
    let copy_nine = |d: &Dir, suffix: &str| {
        for n in &nine {
            std::fs::copy(
                full.root.join(PDIR).join(n),
                d.root.join(PDIR).join(format!("{n}{suffix}")),
            )
            .unwrap();
        }
    };
    let twelve_deleted = |d: &Dir| d.put(&format!("{PDIR}/{}.deleted", seg(12, "log")), "");

    // Done: 9 and 12 renamed, 6 cut to one record.
    let d = threes(7, unclean());
    copy_nine(&d, ".deleted");
    twelve_deleted(&d);
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, TOPIC, 1);
    let mut want: Vec<String> = nine.iter().map(|n| format!("{n}.deleted")).collect();
    want.push(format!("{}.deleted", seg(12, "log")));
    want.sort();
    assert_eq!(deleted_leftovers(p), want);
    assert_eq!(ends(p), (Some(0), Some(7)));
    assert_eq!(recovered_set(p), [0, 3, 6]);
    assert!(p.prediction.truncation.is_none() && p.prediction.deleted_segments.is_empty());

    // (1) Renamed, not yet cut.
    let d = threes(12, unclean());
    let renamed = rename_deleted(&d, |b| b > 7);
    assert_eq!(renamed.len(), 4, "{renamed:?}");
    let v = d.verify();
    let p = part(&v, TOPIC, 1);
    assert_eq!(ends(p), (Some(0), Some(9)));
    assert_eq!(recovered_set(p), [0, 3, 6]);
    // The producer snapshot the roll to 12 took is still there (`truncateAndReload` runs
    // after `LocalLog.truncateTo`), above the log end 9: the load deletes it
    // (`rebuildProducerState` → `truncateAndReload`) and rebuilds from the one at 6;
    // klogscan names it, a warning, and nothing else at that level.
    assert!(crate::common::quiet::loud(&d.scan().findings).is_empty());
    let loud: Vec<_> = (v.findings())
        .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
        .map(|f| (f.kind, f.offset))
        .collect();
    assert_eq!(loud, [(Kind::SnapshotMismatch, Some(12))]);

    // (2) Cut, segment 9 not renamed.
    let d = threes(7, unclean());
    copy_nine(&d, "");
    twelve_deleted(&d);
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, TOPIC, 1);
    assert_eq!(ends(p), (Some(0), Some(12)));
    assert_eq!(recovered_set(p), [0, 3, 6, 9]);
    let gaps: Vec<_> = (d.scan().findings.into_iter())
        .filter(|f| f.kind == Kind::OffsetGap)
        .collect();
    assert_eq!(gaps.len(), 1, "{gaps:#?}");
    assert!(
        gaps[0].message.contains("between 6 and 9"),
        "{}",
        gaps[0].message
    );
}

/// The findings at warning or above of `v` and of the scan of `d`: `(kind, offset)`, verify's
/// first.
fn loud(d: &Dir, v: &klogscan::verify::VerifyReport) -> Vec<(Kind, Option<i64>)> {
    let scan = d.scan();
    (v.findings().chain(scan.findings.iter()))
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.kind, f.offset))
        .collect()
}

/// `segment_past_next_base`: the crash inside `truncateFullyAndStartAt` above (segment 8
/// holding 8–12 before the empty segment 10, the last) — the finding at offset 10, up to
/// 12, the next segment holding no batch, and the log end the load sets (10) reused by the
/// next appends. Then the same segment 8 before a segment 10 whose first batch is at 13
/// (offsets 13 and 14, written by a broker that rolled at 13, the file renamed 10): the
/// finding, without the reuse. Near misses: a segment 10 whose first batch is at 10 (what
/// the broker appends after that restart) — the replay's `offset_regression` across
/// segments names the overlap, and nothing else (one cause, one finding); and the log as the
/// broker rolled it (segments ending below the next base): nothing. In a `-future` copy the
/// finding stays, its broker text making no live claim.
#[test]
fn a_segment_reaching_the_next_segments_base_is_named() {
    let crash = || {
        let ld = (LogDirBuilder::new(1).clean_shutdown(false))
            .recovery_point(TOPIC, 1, 0)
            .high_watermark(TOPIC, 1, 10);
        let d = Dir::write(ld.partition(eight_then_five()));
        rename_deleted(&d, |b| b < 8);
        d
    };
    let pdir = |d: &Dir| d.root.join(PDIR);
    // The empty segment 10, last.
    let d = crash();
    d.put(&format!("{PDIR}/{}", seg(10, "log")), "");
    let v = d.verify();
    assert_eq!(loud(&d, &v), [(Kind::SegmentPastNextBase, Some(10)); 2]);
    let f = v
        .findings()
        .find(|f| f.kind == Kind::SegmentPastNextBase)
        .unwrap();
    assert_eq!(f.segment.as_deref(), Some(seg(8, "log").as_str()));
    assert_eq!(f.severity, Severity::Error);
    let ev = &f.evidence;
    assert_eq!(
        (
            ev["segment_base_offset"].as_i64(),
            ev["next_segment_base_offset"].as_i64()
        ),
        (Some(8), Some(10))
    );
    assert_eq!(
        (ev["first_offset"].as_i64(), ev["last_offset"].as_i64()),
        (Some(10), Some(12))
    );
    assert!(ev["next_segment_first_offset"].is_null());
    assert!(
        f.broker_behaviour.contains("write offsets 10..12 again"),
        "{f:#?}"
    );
    // Batches 13 and 14 in the file named 10: a broker's log rolled at 13.
    let mut later = eight_then_five();
    later.roll();
    later.append(Batch::new(Producer::PLAIN).records(1));
    later.append(Batch::new(Producer::PLAIN).records(1));
    let src = Dir::write(LogDirBuilder::new(1).partition(later));
    let copy_as_10 = |d: &Dir, from: &Dir, base: i64| {
        let bytes = std::fs::read(pdir(from).join(seg(base, "log"))).unwrap();
        std::fs::write(pdir(d).join(seg(10, "log")), bytes).unwrap();
    };
    let d = crash();
    copy_as_10(&d, &src, 13);
    let v = d.verify();
    let past: Vec<_> = v
        .findings()
        .filter(|f| f.kind == Kind::SegmentPastNextBase)
        .collect();
    assert_eq!(past.len(), 1, "{:#?}", v.findings().collect::<Vec<_>>());
    assert_eq!(past[0].evidence["next_segment_first_offset"], 13);
    assert!(!past[0].broker_behaviour.contains("write offsets"));
    // near miss: segment 10 starts at 10 (a broker's appends after the restart)
    let mut appended = PartitionBuilder::new(TOPIC, 1);
    for o in 0..12 {
        appended.append(Batch::new(Producer::PLAIN).records(1));
        if o == 9 {
            appended.roll();
        }
    }
    let src = Dir::write(LogDirBuilder::new(1).partition(appended));
    let d = crash();
    copy_as_10(&d, &src, 10);
    let kinds: Vec<Kind> = d.scan().findings.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&Kind::OffsetRegression), "{kinds:?}");
    assert!(!kinds.contains(&Kind::SegmentPastNextBase), "{kinds:?}");
    // near miss: the log as rolled
    let d = Dir::write(LogDirBuilder::new(1).partition(eight_then_five()));
    assert_quiet(&d, &d.verify());
    // The same crash state in a -future copy: the finding stays (the copy's bytes are what
    // they are), but no broker serves or appends to it — no live claim.
    let d = crash();
    d.put(&format!("{PDIR}/{}", seg(10, "log")), "");
    let future = format!("{PDIR}.5b3c1d2e9f8a4b7c8d6e5f4a3b2c1d0e-future");
    std::fs::rename(d.root.join(PDIR), d.root.join(future)).unwrap();
    let scan = d.scan();
    let f = (scan.findings.iter())
        .find(|f| f.kind == Kind::SegmentPastNextBase)
        .unwrap_or_else(|| panic!("{:#?}", scan.findings));
    assert_eq!(f.severity, Severity::Error);
    assert!(f.broker_behaviour.starts_with("no broker serves"), "{f:#?}");
    assert!(!f.broker_behaviour.contains("write offsets"), "{f:#?}");
}
