//! `LogLoaderTest`'s cases about the files of a partition directory: orphaned and obsolete
//! files, rebuilt indexes, and the leftovers of a crash during the split of a segment whose
//! offsets overflow its base (`LogLoader.removeTempFilesAndCollectSwapFiles`, the swap
//! passes of `LogLoader.load`, `loadSegmentFiles`, `recoverLog`).

use super::{file, recovered, recovered_names, scan_dir, verify, write, write_nonsense};
use klogscan::finding::Kind;
use klogscan::testkit::{
    Batch, Legacy, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

/// `(file, kind, action)` of every leftover the predicted load acts on, sorted by file.
pub(super) fn leftovers(v: &PartitionVerification) -> Vec<(String, String, String)> {
    let mut l: Vec<_> = v
        .prediction
        .leftovers
        .iter()
        .map(|l| (l.file.clone(), l.kind.clone(), l.action.clone()))
        .collect();
    l.sort();
    l
}

/// `(file, kind)` of every leftover, sorted by file.
fn leftover_kinds(v: &PartitionVerification) -> Vec<(String, String)> {
    leftovers(v).into_iter().map(|(f, k, _)| (f, k)).collect()
}

fn rename(dir: &Path, from: &str, to: &str) {
    std::fs::rename(dir.join(from), dir.join(to)).unwrap();
}

pub(super) const EXTS: [&str; 3] = ["log", "index", "timeindex"];

// ----- orphaned and obsolete files --------------------------------------------------------

/// `LogLoaderTest.testBogusIndexSegmentsAreRemoved`: an offset index and a time index of
/// base 5 with no `00000000000000000005.log` are deleted when the log opens
/// (`loadSegmentFiles`: an index file without its `.log`); the segment at 0 and its own
/// indexes are kept and used. Here both are `orphan_index` leftovers deleted at startup,
/// nothing else is acted on and nothing is recovered. Twin: with `5.log` present they are
/// that segment's indexes, not orphans.
#[test]
fn bogus_index_segments_are_removed() {
    for with_log in [false, true] {
        let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
        for i in 0..5 {
            p.append(Batch::new(Producer::PLAIN).values(["test"]).at(1_000 + i));
        }
        if with_log {
            p.roll();
            p.append(Batch::new(Producer::PLAIN).values(["test"]));
        }
        let (_d, m) = write(LogDirBuilder::new(1), p);
        if !with_log {
            std::fs::write(m.dir.join(file(5, "index")), b"").unwrap();
            std::fs::write(m.dir.join(file(5, "timeindex")), b"").unwrap();
        }
        let v = verify(&m);
        if with_log {
            assert!(leftovers(&v).is_empty(), "{:?}", leftovers(&v));
            continue;
        }
        let action = "deleted at startup (orphaned index file: its .log is missing)";
        assert_eq!(
            leftovers(&v),
            [file(5, "index"), file(5, "timeindex")].map(|f| (
                f,
                "orphan_index".to_string(),
                action.to_string()
            ))
        );
        assert_eq!(
            v.findings
                .iter()
                .filter(|f| f.kind == Kind::LeftoverFile)
                .count(),
            2
        );
        assert!(recovered(&v).is_empty());
        assert_eq!(v.prediction.log_end_offset_after, Some(5));
    }
}

/// `LogLoaderTest.testOpenDeletesObsoleteFiles`: retention deleted every old segment (their
/// files renamed `.deleted` for the asynchronous delete) and the broker stopped before the
/// delete ran; on the next open the `.deleted` files are removed and one segment is left.
/// Here segments 0 and 5 left `.log`, `.index`, `.timeindex` and `.snapshot` files
/// suffixed `.deleted` (any file ending `.deleted` is removed by
/// `removeTempFilesAndCollectSwapFiles`), the log start checkpoint at 10: every one of them
/// is a `deleted` leftover deleted at startup, and the log keeps segment 10 alone.
#[test]
fn open_deletes_obsolete_files() {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    for i in 0..15 {
        if i > 0 && i % 5 == 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values(["test"]));
    }
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .log_start_offset("ll", 0, 10);
    let (_d, m) = write(ld, p);
    let mut want = Vec::new();
    for base in [0, 5] {
        for ext in ["log", "index", "timeindex", "snapshot"] {
            let f = file(base, ext);
            if m.dir.join(&f).exists() {
                let to = format!("{f}.deleted");
                rename(&m.dir, &f, &to);
                want.push((to, "deleted".to_string()));
            }
        }
    }
    want.sort();
    assert_eq!(want.len(), 7, "{want:?}"); // no snapshot at 0
    // and the snapshot at 10, at the log start, is removed by the producer-state rebuild
    // (`ProducerStateManager.truncateAndReload`: at or below the log start)
    want.push((file(10, "snapshot"), "snapshot_below_log_start".to_string()));
    let v = verify(&m);
    assert_eq!(leftover_kinds(&v), want);
    assert!(
        leftovers(&v)
            .iter()
            .filter(|l| l.1 == "deleted")
            .all(|l| l.2.starts_with("deleted at startup")),
        "{:?}",
        leftovers(&v)
    );
    assert_eq!(recovered_names(&v), [file(10, "log")]);
    assert_eq!(v.prediction.log_start_offset_after, Some(10));
    assert_eq!(v.prediction.log_end_offset_after, Some(15));
    assert!(v.prediction.deleted_segments.is_empty());
}

// ----- rebuilt indexes --------------------------------------------------------------------

/// Twenty magic-0 messages (no timestamps), four per segment (bases 0, 4, …, 16).
fn old_messages() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("ll", 0)
        .broker_files(PartitionFileOptions::default().index_interval(1));
    for i in 0..20 {
        if i > 0 && i % 4 == 0 {
            p.roll();
        }
        p.legacy(Legacy::v0().values([format!("{i:02}")]));
    }
    p
}

/// `LogLoaderTest.testRebuildTimeIndexForOldMessages`: a log of messages without
/// timestamps (message format 0.9.0), every time index deleted, reopened after an unclean
/// shutdown with the recovery point past the log end: the time index of every segment but
/// the last stays empty (0 bytes). A missing time index is no reason to recover a segment
/// (`LogSegment.sanityCheck` only resizes the new, empty file): only the last segment, the
/// one holding the recovery point, is recovered, and nothing is truncated. Twin: with the
/// offset indexes deleted instead, every segment is recovered at load (`NoSuchFileException`).
#[test]
fn rebuild_time_index_for_old_messages() {
    for missing in ["timeindex", "index"] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ll", 0, 21);
        let (_d, m) = write(ld, old_messages());
        assert_eq!(m.segments.len(), 5);
        for (base, _) in &m.segments {
            std::fs::remove_file(m.dir.join(file(*base, missing))).unwrap();
        }
        let v = verify(&m);
        let all: Vec<String> = m.segments.iter().map(|(b, _)| file(*b, "log")).collect();
        if missing == "timeindex" {
            assert_eq!(
                recovered(&v),
                [(
                    file(16, "log"),
                    "unclean shutdown (segment at or above the recovery point)".to_string()
                )]
            );
        } else {
            assert_eq!(recovered_names(&v), all);
            assert!(recovered(&v).iter().all(|r| r.1 == "missing offset index"));
        }
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(20));
        // klogscan plans the v2 rebuild (the format version is a topic setting): there
        // the first recovery's rebuild deletes the snapshot at the log end, no recovery of
        // legacy messages writes one at its segment's end (`LogSegment.recover` moves the
        // state's map end for magic ≥ 2 only), and the final rebuild writes it again
        // (Kafka's test, on format 0.9.0, takes the shortcut and deletes nothing; this
        // used to expect no leftover, from end snapshots wrongly taken as written).
        let kinds: Vec<(String, String)> =
            leftovers(&v).into_iter().map(|(f, k, _)| (f, k)).collect();
        assert_eq!(
            kinds,
            [(
                "00000000000000000020.snapshot".to_string(),
                "snapshot_replaced_at_recovery".to_string()
            )]
        );
    }
}

// ----- a segment whose offsets overflow, and the crash during its split -------------------

pub(super) const MAX: i64 = i32::MAX as i64;

/// `LogTestUtils.initializeLogDirWithOverflowedSegment`: three segments, each written as
/// batches at `b`, `b+1..b+2` and `b+MAX-1` (MAX = `Int.MaxValue`); the second one (base
/// MAX) holds that pattern twice, from MAX and from 2·MAX, so its offsets reach 3·MAX−1,
/// beyond what an index of base MAX can hold. Its indexes are empty files (Kafka's helper
/// creates them empty so that the load does not recover the segment for a missing index).
pub(super) fn overflow_log(ld: LogDirBuilder) -> (TempDir, Manifest) {
    let files = PartitionFileOptions {
        snapshots: false,
        ..Default::default()
    };
    let mut p = PartitionBuilder::new("ll", 0).broker_files(files);
    let sample = |p: &mut PartitionBuilder, b: i64| {
        assert_eq!(p.next_offset(), b);
        p.append(Batch::new(Producer::PLAIN).values([b.to_string()]));
        p.append(Batch::new(Producer::PLAIN).values([b + 1, b + 2].map(|o| o.to_string())));
        p.skip_offsets(MAX - 4);
        p.append(Batch::new(Producer::PLAIN).values([(b + MAX - 1).to_string()]));
    };
    sample(&mut p, 0);
    p.roll();
    sample(&mut p, MAX);
    sample(&mut p, 2 * MAX);
    p.roll();
    sample(&mut p, 3 * MAX);
    let (d, m) = write(ld, p);
    assert_eq!(
        m.segments.iter().map(|s| s.0).collect::<Vec<_>>(),
        [0, MAX, 3 * MAX]
    );
    for base in [0, MAX, 3 * MAX] {
        for ext in ["index", "timeindex"] {
            std::fs::write(m.dir.join(file(base, ext)), b"").unwrap();
        }
    }
    (d, m)
}

/// The load of `LogTestUtils.recoverAndCheck`: an unclean shutdown, recovery point 0.
pub(super) fn unclean() -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ll", 0, 0)
}

/// The bytes of the overflowed segment's batches from `from` (inclusive) to `to`
/// (exclusive): one of the segments its split writes.
pub(super) fn split_part(m: &Manifest, from: i64, to: i64) -> Vec<u8> {
    let log = std::fs::read(&m.segments[1].1).unwrap();
    let parts: Vec<_> = m
        .batches
        .iter()
        .filter(|b| b.segment_base == MAX && b.base_offset >= from && b.last_offset < to)
        .collect();
    let start = parts[0].position as usize;
    let end = parts
        .last()
        .map(|b| (b.position + b.size) as usize)
        .unwrap();
    log[start..end].to_vec()
}

/// Write the split's new segment `[base, base+MAX)` as `<base>.{log,index,timeindex}`
/// followed by `suffix`, its `.log` holding `bytes`.
pub(super) fn put_new_segment(m: &Manifest, base: i64, suffix: &str, bytes: &[u8]) {
    for ext in EXTS {
        let data: &[u8] = if ext == "log" { bytes } else { b"" };
        std::fs::write(m.dir.join(format!("{}{suffix}", file(base, ext))), data).unwrap();
    }
}

/// `LogLoaderTest.testRecoveryOfSegmentWithOffsetOverflow`: recovering the log splits the
/// overflowed segment (`LogSegmentOffsetOverflowException` from `LogSegment.recover`,
/// `LocalLog.splitOverflowedSegment`) and every key is still there. Here the scan reports
/// the overflow (`segment_offset_out_of_range` on the second segment) and the prediction
/// recovers every segment without truncating anything: the log still ends at 4·MAX. (The
/// split itself, one more segment at 2·MAX, is not part of the prediction.)
#[test]
fn recovery_of_segment_with_offset_overflow() {
    let (_d, m) = overflow_log(unclean());
    let r = scan_dir(&m.dir);
    let over: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::SegmentOffsetOutOfRange)
        .map(|f| f.segment.clone().unwrap_or_default())
        .collect();
    assert!(!over.is_empty());
    assert!(over.iter().all(|s| s == &file(MAX, "log")), "{over:?}");
    let v = verify(&m);
    assert_eq!(
        recovered_names(&v),
        [file(0, "log"), file(MAX, "log"), file(3 * MAX, "log")]
    );
    assert!(v.prediction.truncation.is_none());
    assert!(v.prediction.deleted_segments.is_empty());
    assert_eq!(v.prediction.log_end_offset_after, Some(4 * MAX));
    assert!(leftovers(&v).is_empty());
}

/// `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase1`: the crash came after the split
/// wrote its new segments as `.cleaned` files (emptied), before any became `.swap`; the
/// overflowed segment is still in place. The load deletes every `.cleaned` file
/// (`removeTempFilesAndCollectSwapFiles`) and splits again. Here: six `cleaned` leftovers
/// deleted at startup, no swap; every segment recovered, nothing truncated.
#[test]
fn recovery_after_crash_during_split_phase_1() {
    let (_d, m) = overflow_log(unclean());
    for base in [MAX, 2 * MAX] {
        put_new_segment(&m, base, ".cleaned", b"");
    }
    let v = verify(&m);
    let l = leftovers(&v);
    assert_eq!(l.len(), 6, "{l:?}");
    for (f, k, a) in &l {
        assert!(f.ends_with(".cleaned"), "{f}");
        assert_eq!(k, "cleaned");
        assert!(a.starts_with("deleted at startup"), "{a}");
    }
    assert_eq!(recovered(&v).len(), 3);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(4 * MAX));
}

/// `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase2`: the crash came when the split's
/// last new segment (base 2·MAX) had become `.swap` while the first (base MAX) was still
/// `.cleaned`. The swap's offset is at or above the smallest `.cleaned` offset, so it
/// belongs to the unfinished split and is deleted with the `.cleaned` files
/// (`removeTempFilesAndCollectSwapFiles`, KAFKA-6264); the original segment stays and is
/// split again. Here: the three `.swap` files deleted as part of an unfinished split, the
/// three `.cleaned` files deleted; nothing swapped in.
#[test]
fn recovery_after_crash_during_split_phase_2() {
    let (_d, m) = overflow_log(unclean());
    put_new_segment(&m, MAX, ".cleaned", b"");
    put_new_segment(&m, 2 * MAX, ".swap", b"");
    let v = verify(&m);
    let l = leftovers(&v);
    assert_eq!(l.len(), 6, "{l:?}");
    for (f, k, a) in &l {
        if f.ends_with(".swap") {
            assert!(f.starts_with(&format!("{:020}", 2 * MAX)), "{f}");
            assert_eq!(k, "swap");
            assert!(
                a.starts_with("deleted at startup (belongs to an unfinished split"),
                "{a}"
            );
        } else {
            assert_eq!(k, "cleaned", "{f}");
            assert!(a.starts_with("deleted at startup"), "{a}");
        }
    }
    assert_eq!(recovered(&v).len(), 3);
    assert!(v.prediction.truncation.is_none());
}

/// The split's new segments as `.swap` files, with their bytes (phase 3, 4 and 5).
pub(super) fn swapped_halves(m: &Manifest, bases: &[i64]) {
    for &b in bases {
        put_new_segment(m, b, ".swap", &split_part(m, b, b + MAX));
    }
}

/// `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase3`: the crash came when both new
/// segments were `.swap` files and the original segment had not been deleted yet (the
/// test empties it). The load completes the split: the files whose offset lies in the
/// swapped range `[MAX, 3·MAX)` — the original segment's — are deleted, then the swaps
/// are renamed. Here: the one range spanning both `.log.swap` files replaces the original
/// `MAX.log`; the index swaps are completed too.
#[test]
fn recovery_after_crash_during_split_phase_3() {
    let (_d, m) = overflow_log(unclean());
    swapped_halves(&m, &[MAX, 2 * MAX]);
    std::fs::write(&m.segments[1].1, b"").unwrap();
    let v = verify(&m);
    let l = leftovers(&v);
    assert_eq!(l.len(), 6, "{l:?}");
    assert!(
        l.iter()
            .all(|(_, k, a)| k == "swap" && a.starts_with("swap completed"))
    );
    let action = |f: String| l.iter().find(|x| x.0 == f).unwrap().2.clone();
    assert_eq!(
        action(format!("{}.swap", file(MAX, "log"))),
        format!(
            "swap completed at startup: range [{MAX}, {}) replaces {} then {}.swap is renamed to {}",
            3 * MAX,
            file(MAX, "log"),
            file(MAX, "log"),
            file(MAX, "log")
        )
    );
    assert!(
        action(format!("{}.swap", file(2 * MAX, "log"))).starts_with(&format!(
            "swap completed at startup: range [{MAX}, {}) replaces {}",
            3 * MAX,
            file(MAX, "log")
        ))
    );
    assert!(v.prediction.truncation.is_none());
}

/// `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase4`: as phase 3, but the original
/// segment's files were already deleted: the swaps are renamed and replace nothing.
#[test]
fn recovery_after_crash_during_split_phase_4() {
    let (_d, m) = overflow_log(unclean());
    swapped_halves(&m, &[MAX, 2 * MAX]);
    for ext in EXTS {
        std::fs::remove_file(m.dir.join(file(MAX, ext))).unwrap();
    }
    let v = verify(&m);
    let l = leftovers(&v);
    assert_eq!(l.len(), 6, "{l:?}");
    for (f, k, a) in &l {
        assert_eq!(k, "swap");
        if f.ends_with(".log.swap") {
            assert!(a.contains(") replaces no segment then"), "{a}");
        } else {
            assert!(a.starts_with("swap completed at startup"), "{a}");
        }
    }
    assert!(v.prediction.truncation.is_none());
}

/// Phase 5's files: the split's second half still `2·MAX.log.swap`, the first renamed
/// `MAX.log` in place of the original, whose files are renamed `.deleted`.
pub(super) fn phase_5(m: &Manifest) {
    let first = split_part(m, MAX, 2 * MAX);
    swapped_halves(m, &[2 * MAX]);
    for ext in EXTS {
        let f = file(MAX, ext);
        rename(&m.dir, &f, &format!("{f}.deleted"));
    }
    put_new_segment(m, MAX, "", &first);
}

/// `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase5`: the crash came when the first
/// new segment had already replaced the original (renamed to `MAX.log`, the original's
/// files renamed `.deleted` and emptied) and the second was still `2·MAX.log.swap`. The load
/// deletes the `.deleted` files and renames the swap. Here: three `deleted` leftovers
/// deleted at startup, the three swaps completed, the log swap replacing no segment.
#[test]
fn recovery_after_crash_during_split_phase_5() {
    let (_d, m) = overflow_log(unclean());
    phase_5(&m);
    std::fs::write(m.dir.join(format!("{}.deleted", file(MAX, "log"))), b"").unwrap();
    let v = verify(&m);
    let l = leftovers(&v);
    assert_eq!(l.len(), 6, "{l:?}");
    for (f, k, a) in &l {
        if f.ends_with(".deleted") {
            assert_eq!(k, "deleted");
            assert!(a.starts_with("deleted at startup"), "{a}");
        } else {
            assert_eq!(k, "swap");
            assert!(a.starts_with("swap completed at startup"), "{a}");
        }
    }
    let log_swap = format!("{}.swap", file(2 * MAX, "log"));
    let a = &l.iter().find(|x| x.0 == log_swap).unwrap().2;
    assert!(a.contains(") replaces no segment then"), "{a}");
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(4 * MAX));
}

/// Phases 3–5 of `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase*` after the unclean
/// shutdown of `recoverAndCheck` (recovery point 0): `LogLoader.load` completes the swaps
/// before it loads any segment, so `recoverLog` runs on the segments as they are after the
/// swap — 0, MAX (the split's first half), 2·MAX (the renamed swap), 3·MAX — and never on
/// the original segment of base MAX, deleted (phases 3, 4) or replaced (phase 5).
#[test]

fn split_phases_3_to_5_recover_the_swapped_in_segments() {
    let want = [0, MAX, 2 * MAX, 3 * MAX].map(|b| file(b, "log"));
    for phase in [3, 4, 5] {
        let (_d, m) = overflow_log(unclean());
        if phase == 5 {
            phase_5(&m);
        } else {
            swapped_halves(&m, &[MAX, 2 * MAX]);
            if phase == 3 {
                std::fs::write(&m.segments[1].1, b"").unwrap();
            } else {
                for ext in EXTS {
                    std::fs::remove_file(m.dir.join(file(MAX, ext))).unwrap();
                }
            }
        }
        let v = verify(&m);
        // A swapped-in segment is named by its `.log.swap` file (the name it is renamed to
        // is the replaced segment's): compared here as renamed.
        let renamed: Vec<String> = recovered_names(&v)
            .iter()
            .map(|n| n.trim_end_matches(".swap").to_string())
            .collect();
        assert_eq!(renamed, want, "phase {phase}");
        assert_eq!(v.prediction.log_end_offset_after, Some(4 * MAX));
    }
}

/// A variant of `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase3` (where Kafka's test
/// empties the original segment): the original `MAX.log` left with a damaged tail. The load
/// deletes it before any segment is loaded (its offset lies in the swapped range, second
/// pass of `LogLoader.load`), so its damage is never recovered: no truncation, nothing
/// deleted, the log ends at 4·MAX.
#[test]

fn split_phase_3_original_segment_damage_is_swapped_away() {
    let (_d, m) = overflow_log(unclean());
    swapped_halves(&m, &[MAX, 2 * MAX]);
    let log = &m.segments[1].1;
    let len = std::fs::metadata(log).unwrap().len() as usize;
    write_nonsense(log, len - 20, 3);
    let v = verify(&m);
    assert!(
        v.prediction.truncation.is_none(),
        "{:#?}",
        v.prediction.truncation
    );
    assert!(v.prediction.deleted_segments.is_empty());
    assert_eq!(v.prediction.log_end_offset_after, Some(4 * MAX));
    // The scan plans the same: no truncation, and the damage it reports in the replaced
    // segment is deleted with it, never recovered nor served.
    let r = scan_dir(&m.dir);
    assert!(
        r.partitions[0].truncation.is_none(),
        "{:?}",
        r.partitions[0].truncation
    );
    let fates: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.segment.as_deref() == Some(file(MAX, "log").as_str()))
        .filter_map(|f| f.evidence["recovery"]["fate"].as_str().map(String::from))
        .collect();
    assert!(!fates.is_empty(), "{:#?}", r.findings);
    assert!(fates.iter().all(|f| f == "deleted"), "{fates:?}");
}

/// The swap passes of `LogLoader.load` behind `LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase3`
/// take one range for all `.log.swap` files: from the lowest swap base to the highest next
/// offset among them; every non-swap file whose offset lies in it is deleted. With two swaps
/// that are not adjacent — `0.log.swap` holding offsets 0–1 and `6.log.swap` 6–7 over
/// segments 0, 2, 4, 6 — the range is `[0, 8)`: segments 2 and 4 are deleted too, not only
/// the segments each swap covers.
#[test]
fn swaps_replace_every_segment_between_the_lowest_and_highest_swap() {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    for i in 0..8 {
        if i > 0 && i % 2 == 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    let (_d, m) = write(LogDirBuilder::new(1), p);
    for base in [0, 6] {
        let bytes = std::fs::read(m.dir.join(file(base, "log"))).unwrap();
        std::fs::write(m.dir.join(format!("{}.swap", file(base, "log"))), bytes).unwrap();
    }
    let v = verify(&m);
    let replaced: Vec<String> = [0, 2, 4, 6]
        .map(|b| file(b, "log"))
        .into_iter()
        .filter(|s| {
            leftovers(&v)
                .iter()
                .any(|l| l.2.contains(&format!("replaces {s}")) || l.2.contains(&format!(", {s}")))
        })
        .collect();
    assert_eq!(replaced, [0, 2, 4, 6].map(|b| file(b, "log")));
}

/// Segments at 0, 2, 4, 6 of one record each, in a log dir shut down cleanly.
pub(super) fn four_segments() -> (TempDir, Manifest) {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    for i in 0..8 {
        if i > 0 && i % 2 == 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    write(LogDirBuilder::new(1), p)
}

/// A `.txnindex` of one entry whose version byte is 1 (Kafka's iterator refuses it) and
/// whose lastOffset is `last`.
fn unknown_version_txnindex(last: i64) -> Vec<u8> {
    let mut b = vec![1u8, 0];
    for x in [7i64, last, last, last] {
        b.extend_from_slice(&x.to_be_bytes());
    }
    b
}

/// An empty `2.log.swap`: its range `[2, 2)` clears nothing (`readNextOffset` of an empty
/// segment is its base), and its rename overwrites `2.log` (`LogLoader.load`'s third
/// pass). The prediction holds one segment at base 2 — the swapped-in one — not the old
/// one beside it; after the clean shutdown it is not recovered: the first pass's
/// `readNextOffset` created its offset index (`2.index.swap`, preallocated), renamed with it.
#[test]
fn an_empty_swap_overwrites_the_segment_at_its_base() {
    let (_d, m) = four_segments();
    std::fs::write(m.dir.join(format!("{}.swap", file(2, "log"))), b"").unwrap();
    let v = verify(&m);
    let names = recovered_names(&v);
    assert!(names.is_empty(), "{names:?}");
    let l = leftovers(&v);
    let swap = l.iter().find(|x| x.0.ends_with(".log.swap")).unwrap();
    assert!(
        swap.2.contains(&format!("replaces {}", file(2, "log"))),
        "{swap:?}"
    );
}

/// The load checks a swapped-in segment's transaction index after the rename, like any
/// segment's (`LogSegment.sanityCheck` in `loadSegmentFiles`): with its offset index swapped
/// in too, an entry of an unknown version fails the load. The replaced segment's own
/// `.txnindex` — the same defect — is deleted before the load and fails nothing (no
/// finding claims it does).
#[test]
fn a_swapped_in_transaction_index_is_checked_and_a_replaced_one_is_not() {
    // Swapped in: 2.log.swap, 2.index.swap, 2.txnindex.swap (version 1).
    let (_d, m) = four_segments();
    for ext in ["log", "index"] {
        let bytes = std::fs::read(m.dir.join(file(2, ext))).unwrap();
        std::fs::write(m.dir.join(format!("{}.swap", file(2, ext))), bytes).unwrap();
    }
    std::fs::write(
        m.dir.join(format!("{}.swap", file(2, "txnindex"))),
        unknown_version_txnindex(3),
    )
    .unwrap();
    let v = verify(&m);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(f.exception, "KafkaException");
    assert!(
        f.message
            .contains("Unexpected aborted transaction version 1"),
        "{f:?}"
    );
    // Replaced: the old 2.txnindex holds the bad entry, the swap brings none.
    let (_d, m) = four_segments();
    let bytes = std::fs::read(m.dir.join(file(2, "log"))).unwrap();
    std::fs::write(m.dir.join(format!("{}.swap", file(2, "log"))), bytes).unwrap();
    std::fs::write(m.dir.join(file(2, "txnindex")), unknown_version_txnindex(3)).unwrap();
    let v = verify(&m);
    assert!(
        v.prediction.load_failure.is_none(),
        "{:?}",
        v.prediction.load_failure
    );
    assert!(
        v.findings.iter().all(|f| f.kind != Kind::TxnindexMismatch),
        "{:#?}",
        v.findings
    );
}

/// Move segment 2's `ext` file to its `.swap` name (`2.index` → `2.index.swap`): the state
/// the cleaner leaves when it stops after renaming a replacement segment's `.log` back from
/// `.swap` and before its indexes (`LogSegment.changeFileSuffixes` renames the log first).
fn index_to_swap(m: &Manifest, ext: &str) {
    let from = m.dir.join(file(2, ext));
    std::fs::rename(&from, m.dir.join(format!("{}.swap", file(2, ext)))).unwrap();
}

/// `LogLoader.load`'s third pass renames every valid `.swap` file, an index's too: a kept
/// segment's `2.index.swap` becomes its `2.index` before `loadSegmentFiles` looks for it,
/// so after a clean shutdown nothing is recovered (with no index at all, the segment is
/// recovered and rebuilt). At or above the lowest `.cleaned` offset the swap belongs to an
/// unfinished split and is deleted first (`removeTempFilesAndCollectSwapFiles`): the
/// segment has no index then, and is recovered.
#[test]
fn a_kept_segments_index_swap_is_its_index_at_load() {
    let (_d, m) = four_segments();
    index_to_swap(&m, "index");
    let v = verify(&m);
    assert!(recovered_names(&v).is_empty(), "{:?}", recovered(&v));
    let l = leftovers(&v);
    let swap = l.iter().find(|x| x.0.ends_with(".index.swap")).unwrap();
    assert!(
        swap.2.contains(&format!(
            "renamed to {} over the index of {}",
            file(2, "index"),
            file(2, "log")
        )),
        "{swap:?}"
    );
    // Twin: no swap at all, the segment is recovered for its missing index.
    let (_d, m) = four_segments();
    std::fs::remove_file(m.dir.join(file(2, "index"))).unwrap();
    assert_eq!(recovered_names(&verify(&m)), [file(2, "log")]);
    // Twin: a `.cleaned` file at offset 2 makes the swap an unfinished split's, deleted.
    let (_d, m) = four_segments();
    index_to_swap(&m, "index");
    std::fs::write(m.dir.join(format!("{}.cleaned", file(2, "log"))), b"").unwrap();
    let v = verify(&m);
    assert_eq!(recovered_names(&v), [file(2, "log")]);
    let swap = leftovers(&v)
        .into_iter()
        .find(|x| x.0.ends_with(".index.swap"))
        .unwrap();
    assert!(swap.2.contains("deleted at startup"), "{swap:?}");
}

/// The scan plans the same load: damage in segment 2 below the recovery point is never
/// read by the broker once its `2.index.swap` stands in for the index (no truncation),
/// and is where recovery truncates when the segment has no index.
#[test]
fn the_scan_plans_no_recovery_for_a_segment_whose_index_is_a_swap() {
    let flip_last = |m: &Manifest| {
        let log = m.dir.join(file(2, "log"));
        let mut b = std::fs::read(&log).unwrap();
        let n = b.len() - 1;
        b[n] ^= 0xff;
        std::fs::write(&log, b).unwrap();
    };
    let (_d, m) = four_segments();
    flip_last(&m);
    index_to_swap(&m, "index");
    let r = scan_dir(&m.dir);
    assert!(
        r.partitions[0].truncation.is_none(),
        "{:?}",
        r.partitions[0].truncation
    );
    let (_d, m) = four_segments();
    flip_last(&m);
    std::fs::remove_file(m.dir.join(file(2, "index"))).unwrap();
    let r = scan_dir(&m.dir);
    let t = r.partitions[0]
        .truncation
        .as_ref()
        .expect("recovery truncates");
    assert_eq!(t.segment, file(2, "log"));
}

/// A kept segment's `2.txnindex.swap` is the transaction index the load checks: an entry
/// of an unknown version fails the load (`LogSegment.sanityCheck` → `TransactionIndex`),
/// though the segment's own `2.txnindex` is absent; deleted as an unfinished split's, it
/// fails nothing.
#[test]
fn a_kept_segments_transaction_index_swap_is_checked_at_load() {
    let swap_name = |m: &Manifest| m.dir.join(format!("{}.swap", file(2, "txnindex")));
    let (_d, m) = four_segments();
    std::fs::write(swap_name(&m), unknown_version_txnindex(3)).unwrap();
    let v = verify(&m);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(f.exception, "KafkaException");
    let (_d, m) = four_segments();
    std::fs::write(swap_name(&m), unknown_version_txnindex(3)).unwrap();
    std::fs::write(m.dir.join(format!("{}.cleaned", file(0, "log"))), b"").unwrap();
    let v = verify(&m);
    assert!(
        v.prediction.load_failure.is_none(),
        "{:?}",
        v.prediction.load_failure
    );
}
