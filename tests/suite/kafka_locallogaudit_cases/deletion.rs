//! `LocalLogTest.testRemoveAndDeleteSegmentsAsync` and `testDeleteSegmentFilesAsync`: every
//! segment of a log renamed `.deleted` and nothing else left.

use super::{PDIR, TOPIC, deleted_leftovers, ends, names, recovered_set, rename_deleted, seg};
use crate::kafka_ckaudit_cases::{Dir, assert_quiet, log_of, part};
use klogscan::testkit::LogDirBuilder;

/// Nine one-record segments 0–8 and the empty active segment 9 the last roll left (its
/// `.log` alone), as the Kafka tests build them; `log_start`: the log dir's log start entry.
fn nine_and_an_empty_one(log_start: Option<i64>) -> Dir {
    let mut ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point(TOPIC, 1, 0)
        .partition(log_of(TOPIC, 1, 9, 1));
    if let Some(s) = log_start {
        ld = ld.log_start_offset(TOPIC, 1, s);
    }
    let d = Dir::write(ld);
    d.put(&format!("{PDIR}/{}", seg(9, "log")), "");
    d
}

/// `LocalLogTest.testRemoveAndDeleteSegmentsAsync`, `testDeleteSegmentFilesAsync`:
/// `removeAndDeleteSegments(all, asyncDelete = true)` (and `LocalLog.deleteSegmentFiles`
/// itself) renames every segment's files `.deleted` — segment 9's `.log` alone, its lazy
/// indexes never created — and schedules their removal. Outside the tests the broker does
/// this to every segment in one place: `LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd`,
/// when the log ends (9) below the log start entry (here 20), which then opens a segment at
/// that entry. A crash between the two leaves only `.deleted` files. Next start: all 28
/// removed (the producer snapshots too, strays of no segment base: `removeStraySnapshots`), no segment is left, so `recoverLog` opens one at the log start entry: `20.log`,
/// log start and end 20, nothing recovered, nothing said. Near misses: (1) the crash before
/// the renames — the same entry deletes every live segment again (`deleted_segments`, the
/// ten of them) before `20.log` is opened; (2) the `.deleted` files with no log start entry
/// (the Kafka tests' log, which has none): the segment is opened at 0.
#[test]
fn every_segment_renamed_deleted_leaves_the_load_to_open_one_at_the_log_start() {
    let d = nine_and_an_empty_one(Some(20));
    let renamed = rename_deleted(&d, |_| true);
    assert_eq!(renamed.len(), 9 * 3 + 1, "{renamed:?}");
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, TOPIC, 1);
    let mut want = renamed.clone();
    want.sort();
    assert_eq!(deleted_leftovers(p), want);
    assert_eq!(ends(p), (Some(20), Some(20)));
    assert_eq!(
        p.prediction.created_segment.as_deref(),
        Some(seg(20, "log").as_str())
    );
    assert!(p.prediction.deleted_segments.is_empty() && recovered_set(p).is_empty());
    // The producer snapshots (not segment files: still live) match no segment base once the
    // load has opened `20.log`, and none is above it: `removeStraySnapshots` deletes them all
    // (the newest, 9, as the latest stray below the largest base). klogscan names 1–8 strays
    // and 9 below the log start: the same fate.
    let snapshots: Vec<String> = (names(&d.root.join(PDIR)).into_iter())
        .filter(|n| n.ends_with(".snapshot"))
        .collect();
    assert_eq!(snapshots.len(), 9, "{snapshots:?}");
    for s in &snapshots {
        let l = (p.prediction.leftovers.iter())
            .find(|l| &l.file == s)
            .unwrap_or_else(|| panic!("{s}: {:#?}", p.prediction.leftovers));
        let kind = if *s == seg(9, "snapshot") {
            "snapshot_below_log_start"
        } else {
            "stray_snapshot"
        };
        assert_eq!(l.kind, kind, "{s}");
        assert!(l.action.starts_with("deleted"), "{s}: {}", l.action);
    }

    // (1) Not yet renamed: the load deletes them all itself.
    let d = nine_and_an_empty_one(Some(20));
    let v = d.verify();
    let p = part(&v, TOPIC, 1);
    assert_eq!(
        p.prediction.deleted_segments,
        (0..10).map(|b| seg(b, "log")).collect::<Vec<_>>()
    );
    assert!(deleted_leftovers(p).is_empty());
    assert_eq!(ends(p), (Some(20), Some(20)));
    assert_eq!(
        p.prediction.created_segment.as_deref(),
        Some(seg(20, "log").as_str())
    );

    // (2) No log start entry.
    let d = nine_and_an_empty_one(None);
    rename_deleted(&d, |_| true);
    let v = d.verify();
    let p = part(&v, TOPIC, 1);
    assert_eq!(deleted_leftovers(p).len(), 28);
    assert_eq!(ends(p), (Some(0), Some(0)));
    assert_eq!(
        p.prediction.created_segment.as_deref(),
        Some(seg(0, "log").as_str())
    );
}
