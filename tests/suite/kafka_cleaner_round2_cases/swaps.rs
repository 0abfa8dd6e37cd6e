//! `LogCleanerTest.testRecoveryAfterCrash`: the files a crash leaves in the middle of the
//! cleaner's swap, and what the next load makes of them. `Cleaner.cleanSegments` writes
//! the cleaned group as `<base>.log.cleaned` (and its indexes), then
//! `UnifiedLog.replaceSegments` renames them `.swap`, renames the replaced segments
//! `.deleted` (deleted later, asynchronously) and drops the `.swap` suffix. `LogLoader.load`
//! deletes `.cleaned` files and every `.swap` at or above the lowest `.cleaned` offset
//! (`removeTempFilesAndCollectSwapFiles`), deletes the files whose offset lies in
//! `[lowest swap base, highest swap readNextOffset)`, renames the swaps, and deletes
//! `.deleted` files. Kafka's test cleans nine 1-record segments keeping the even keys and
//! checks, after each crash point, the keys the reloaded log holds: all of them while the
//! swap had not begun, the cleaned ones once it had.
//!
//! Here: segments 0 (keys 0–2), 3 (3–5), 6 (6–8) and the active 9 (9–11), one record a
//! batch, the key its offset; the cleaned group at 0 keeps 0, 2, 4, 6, 8 (its last batch
//! is the cleaning round's last, kept: `checkBatchRetention`, so the swap ends at 9).

use super::*;

/// `(file, kind, action)` of every leftover the predicted load acts on, sorted by file.
fn leftovers(v: &PartitionVerification) -> Vec<(String, String, String)> {
    let mut l: Vec<_> = v
        .prediction
        .leftovers
        .iter()
        .map(|l| (l.file.clone(), l.kind.clone(), l.action.clone()))
        .collect();
    l.sort();
    l
}

fn name(base: i64, ext: &str) -> String {
    format!("{base:020}.{ext}")
}

const EXTS: [&str; 3] = ["log", "index", "timeindex"];

/// The uncleaned log: four segments of three one-record batches.
fn original() -> PartitionBuilder {
    let mut p = log().broker_files(PartitionFileOptions::default());
    for k in 0..12 {
        if k > 0 && k % 3 == 0 {
            p.roll();
        }
        p.append(keyed(Producer::PLAIN, -1, &[&k.to_string()]).at(1_000 + k));
    }
    p
}

/// The files of the cleaned segment at 0 holding `keys` (offset = key): `(ext, bytes)`.
fn cleaned_group(keys: &[i64]) -> Vec<(&'static str, Vec<u8>)> {
    let mut p = log().broker_files(PartitionFileOptions::default());
    for &k in keys {
        p.skip_offsets(k - p.next_offset());
        p.append(keyed(Producer::PLAIN, -1, &[&k.to_string()]).at(1_000 + k));
    }
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    assert_eq!(m.segments[0].0, 0);
    EXTS.iter()
        .map(|e| (*e, std::fs::read(m.dir.join(name(0, e))).unwrap()))
        .collect()
}

/// Write the original log into a log dir (clean shutdown), then the cleaned group at 0
/// with `suffix` on each of its files (`log_suffix` on its `.log`).
fn crashed(keys: &[i64], log_suffix: &str, suffix: &str) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(1)
        .partition(original())
        .write(&dir.path().join("broker-1"))
        .unwrap();
    let m = m.partitions.into_iter().next().unwrap();
    for (ext, bytes) in cleaned_group(keys) {
        let sfx = if ext == "log" { log_suffix } else { suffix };
        std::fs::write(m.dir.join(format!("{}{sfx}", name(0, ext))), bytes).unwrap();
    }
    (dir, m)
}

/// Rename the replaced segments' files (bases `bases`) to `.deleted`.
fn mark_deleted(m: &Manifest, bases: &[i64]) {
    for &b in bases {
        for ext in EXTS {
            let f = m.dir.join(name(b, ext));
            if f.exists() {
                std::fs::rename(&f, m.dir.join(format!("{}.deleted", name(b, ext)))).unwrap();
            }
        }
    }
}

const EVEN: [i64; 5] = [0, 2, 4, 6, 8];

/// Crash points 1 and 2: the cleaned group still `.cleaned` (all of it, or with its `.log`
/// already `.swap`). The load deletes the `.cleaned` files and the swap at their offset
/// (an unfinished replacement), and keeps the four original segments: every key, the log
/// ending at 12, nothing recovered or truncated.
#[test]
fn recovery_after_crash_before_the_swap() {
    for log_suffix in [".cleaned", ".swap"] {
        let (_d, m) = crashed(&EVEN, log_suffix, ".cleaned");
        let v = verify_dir(&m.dir, false);
        let l = leftovers(&v);
        assert_eq!(l.len(), 3, "{l:?}");
        for (f, k, a) in &l {
            assert!(a.starts_with("deleted at startup"), "{f}: {a}");
            assert_eq!(
                k,
                if f.ends_with(".swap") {
                    "swap"
                } else {
                    "cleaned"
                }
            );
        }
        assert!(v.prediction.truncation.is_none());
        assert!(v.prediction.deleted_segments.is_empty());
        assert_eq!(v.prediction.log_end_offset_after, Some(12));
        assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
    }
}

/// The leftover of `file` in `l`: `(kind, action)`.
fn action<'a>(l: &'a [(String, String, String)], file: &str) -> (&'a str, &'a str) {
    let x = l
        .iter()
        .find(|x| x.0 == file)
        .unwrap_or_else(|| panic!("no leftover {file}: {l:#?}"));
    (x.1.as_str(), x.2.as_str())
}

/// Crash points 3 and 4: the cleaned group is `.swap` (log and indexes), the replaced
/// segments 0, 3, 6 still in place (3) or already `.deleted` (4). The load completes the
/// swap: range [0, 9) — the swap's base to its `readNextOffset`, its last batch kept by
/// the cleaner — deletes the replaced files (their producer snapshots too), the swap
/// becomes `0.log`; `.deleted` files go. The log still ends at 12, nothing truncated,
/// nothing above info.
#[test]
fn recovery_after_crash_during_the_swap() {
    for deleted in [false, true] {
        let (_d, m) = crashed(&EVEN, ".swap", ".swap");
        if deleted {
            // `replaceSegments` renames every replaced segment, the one at 0 included
            mark_deleted(&m, &[0, 3, 6]);
        }
        let v = verify_dir(&m.dir, false);
        let l = leftovers(&v);
        let replaces = if deleted {
            "no segment".to_string()
        } else {
            [0, 3, 6].map(|b| name(b, "log")).join(", ")
        };
        assert_eq!(
            action(&l, &format!("{}.swap", name(0, "log"))),
            (
                "swap",
                format!(
                    "swap completed at startup: range [0, 9) replaces {replaces} then {0}.swap is renamed to {0}",
                    name(0, "log")
                )
                .as_str()
            )
        );
        for b in [3, 6] {
            let (k, a) = action(&l, &name(b, "snapshot"));
            assert_eq!(k, "snapshot_in_swapped_range", "{a}");
        }
        if deleted {
            for b in [0, 3, 6] {
                let (k, a) = action(&l, &format!("{}.deleted", name(b, "log")));
                assert_eq!((k, a.starts_with("deleted at startup")), ("deleted", true));
            }
        }
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(12));
        assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
    }
}

/// Crash point 6: the swap completed, the replaced segments' `.deleted` files not yet
/// deleted. The load deletes them; the cleaned `0.log` (offsets 0, 2, 4, 6, 8: whole
/// batches removed, no other trace) and the active segment load. `--compacted`: nothing
/// to report; policy unknown: the holes are `offset_gap` findings, info only.
#[test]
fn recovery_after_crash_after_the_swap() {
    let (_d, m) = crashed(&EVEN, ".swap", ".swap");
    mark_deleted(&m, &[0, 3, 6]);
    for ext in EXTS {
        std::fs::rename(
            m.dir.join(format!("{}.swap", name(0, ext))),
            m.dir.join(name(0, ext)),
        )
        .unwrap();
    }
    let v = verify_dir(&m.dir, true);
    let l = leftovers(&v);
    for b in [0, 3, 6] {
        for ext in EXTS {
            let (k, a) = action(&l, &format!("{}.deleted", name(b, ext)));
            assert_eq!((k, a.starts_with("deleted at startup")), ("deleted", true));
        }
    }
    assert_eq!(v.prediction.log_end_offset_after, Some(12));
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
    let r = scan_dir(&m.dir, true);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let r = scan_dir(&m.dir, false);
    assert_eq!(
        kinds(&r.findings),
        [2, 4, 6, 8].map(|o| (Kind::OffsetGap, Some(o)))
    );
    assert!(r.findings.iter().all(|f| f.severity == Severity::Info));
}

/// Two groups in one cleaning round (`Cleaner.groupSegmentsBySize`, as in
/// `LogCleanerTest.testSegmentGrouping`): [0, 3] then [6]. Only the round's last batch is
/// kept when the cleaner empties it (`checkBatchRetention`: `batch.nextOffset ==
/// upperBoundOffsetOfCleaningRound`), so the first group's swap ends where its last kept
/// batch does: keys 0 and 2 kept, all of segment 3 removed, the swap's `readNextOffset` is
/// 3. A crash after the swap was written, before the replaced segments went `.deleted`
/// (`testRecoveryAfterCrash`'s point 3): `LogLoader.load`'s range is [0, 3) and deletes
/// `0.log` only; `3.log` stays with its uncleaned records, after the swap's — the log
/// still ends at 12 and nothing overlaps. klogscan predicts exactly that.
#[test]
fn swap_of_a_group_whose_tail_was_removed() {
    let (_d, m) = crashed(&[0, 2], ".swap", ".swap");
    let v = verify_dir(&m.dir, false);
    let l = leftovers(&v);
    assert_eq!(
        action(&l, &format!("{}.swap", name(0, "log"))).1,
        format!(
            "swap completed at startup: range [0, 3) replaces {0} then {0}.swap is renamed to {0}",
            name(0, "log")
        )
    );
    assert!(l.iter().all(|x| x.0.ends_with(".swap")), "{l:#?}");
    assert!(v.prediction.deleted_segments.is_empty());
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(12));
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}
