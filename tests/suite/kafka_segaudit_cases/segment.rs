//! `LogSegmentTest` (and `UnifiedLogTest`'s degenerate splits): segment files renamed,
//! emptied or holding offsets their base cannot index.

use super::{
    TOPIC, assert_no_alarm, batches, file, findings_on, log_dir, path, recovered, scan, verify,
    write,
};
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, Manifest, PartitionBuilder, PartitionFileOptions, Producer};

const MAX: i64 = i32::MAX as i64;

/// Move segment `from`'s `.log` to base `to`, with empty `.index` and `.timeindex` (as
/// `UnifiedLogTest.testDegenerateSplitSegmentWithOverflow` creates them, so the load does
/// not recover the segment for a missing index).
fn rebase(m: &Manifest, from: i64, to: i64) {
    std::fs::rename(path(m, from, "log"), path(m, to, "log")).unwrap();
    for ext in ["index", "timeindex"] {
        let _ = std::fs::remove_file(path(m, from, ext));
        std::fs::write(path(m, to, ext), b"").unwrap();
    }
}

/// `segment_offset_out_of_range` findings on `name`, by `scan` and by `verify`: their
/// offsets.
fn out_of_range(m: &Manifest, name: &str) -> (Vec<Option<i64>>, Vec<Option<i64>>) {
    let s = (scan(m).findings.iter())
        .filter(|f| f.kind == Kind::SegmentOffsetOutOfRange && f.segment.as_deref() == Some(name))
        .map(|f| f.offset)
        .collect();
    let v = verify(m);
    let v = findings_on(&v, Kind::SegmentOffsetOutOfRange, name)
        .iter()
        .map(|f| f.offset)
        .collect();
    (s, v)
}

/// `LogSegmentTest.testChangeFileSuffixes`: a segment renamed for deletion carries the
/// `.deleted` suffix on its `.log` and on whichever index files exist (the indexes are
/// created lazily, so they may not). On disk: the first of two segments (0–9, then 10)
/// renamed so, with its indexes and without them. `LogLoader` deletes `.deleted` files
/// before it loads anything: each is a leftover deleted at startup, nothing is raised at
/// warning or above, the log starts at 10 and ends at 11. Near miss: not renamed, the log
/// starts at 0 and nothing is left over.
#[test]
fn deleted_suffix_segment_is_gone_at_load() {
    for (renamed, with_indexes) in [(false, true), (true, true), (true, false)] {
        let mut p = batches(0, 10);
        p.roll();
        p.append(Batch::new(Producer::PLAIN).values(["10"]));
        let (_d, m) = write(log_dir(true), p);
        let mut exts = vec!["log"];
        if with_indexes {
            exts.extend(["index", "timeindex"]);
        } else {
            std::fs::remove_file(path(&m, 0, "index")).unwrap();
            std::fs::remove_file(path(&m, 0, "timeindex")).unwrap();
        }
        if renamed {
            for ext in &exts {
                let to = m.dir.join(format!("{}.deleted", file(0, ext)));
                std::fs::rename(path(&m, 0, ext), to).unwrap();
            }
        }
        assert_no_alarm(&m);
        let v = verify(&m);
        let deleted: Vec<_> = (v.prediction.leftovers.iter())
            .filter(|l| l.kind == "deleted")
            .map(|l| l.file.clone())
            .collect();
        if renamed {
            let mut want: Vec<_> = exts
                .iter()
                .map(|e| format!("{}.deleted", file(0, e)))
                .collect();
            want.sort();
            assert_eq!(deleted, want);
            assert_eq!(v.prediction.log_start_offset_after, Some(10));
        } else {
            assert!(deleted.is_empty(), "{deleted:?}");
            assert_eq!(v.prediction.log_start_offset_after, Some(0));
        }
        assert!(recovered(&v).is_empty());
        assert_eq!(v.prediction.log_end_offset_after, Some(11));
    }
}

/// `LogSegmentTest.testTruncateFull` and `LogSegmentTest.testTruncateEmptySegment`: a
/// segment truncated to nothing, or reopened empty, keeps its base and has empty indexes
/// (not full, so it is not rolled). On disk: segment 0 (offsets 0–9) and an empty active
/// segment 10 with zero-length `.index` and `.timeindex`. Nothing is raised; the log ends
/// at 10; after a clean shutdown nothing is recovered, after an unclean one both segments
/// are, with nothing truncated. Near miss: the empty segment's index keeping a stale entry
/// (offset 11): reported on that `.index`; the next offset read through it finds no batch,
/// so the log still ends at the base, 10.
#[test]
fn empty_active_segment_after_a_full_truncation() {
    for clean in [true, false] {
        let (_d, m) = write(log_dir(clean), batches(0, 10));
        for ext in ["log", "index", "timeindex"] {
            std::fs::write(path(&m, 10, ext), b"").unwrap();
        }
        assert_no_alarm(&m);
        let v = verify(&m);
        let expected = if clean {
            vec![]
        } else {
            vec![file(0, "log"), file(10, "log")]
        };
        assert_eq!(recovered(&v), expected);
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(10));
    }
    let (_d, m) = write(log_dir(true), batches(0, 10));
    std::fs::write(path(&m, 10, "log"), b"").unwrap();
    std::fs::write(path(&m, 10, "timeindex"), b"").unwrap();
    let stale = [1i32.to_be_bytes(), 0i32.to_be_bytes()].concat();
    std::fs::write(path(&m, 10, "index"), stale).unwrap();
    let v = verify(&m);
    let on_index = (v.findings.iter())
        .filter(|f| f.segment.as_deref() == Some(&file(10, "index")[..]))
        .count();
    assert!(on_index > 0, "{:#?}", v.findings);
    assert!(recovered(&v).is_empty());
    assert_eq!(v.prediction.log_end_offset_after, Some(10));
}

/// `LogSegmentTest.testAppendForLogSegmentOffsetOverflowException` (base 0, largest offset
/// 2^31): a segment refuses a batch whose offset is more than `Integer.MAX_VALUE` above its
/// base. On disk: segment 0 holding offset 0 and then offset 2^31 — `segment_offset_out_of_range`
/// at 2^31 from `scan` and `verify`. After a clean shutdown the segment is loaded as it is
/// (nothing recovered, the log ends at 2^31 + 1); after an unclean one it is recovered
/// (where `LogSegment.recover` throws `LogSegmentOffsetOverflowException` and the loader
/// splits it; the split itself is not part of the prediction) and nothing is truncated.
/// Near miss: the second batch at 2^31 − 1, the largest offset base 0 can index: only the
/// (informational) gap, nothing at warning or above.
#[test]
fn offset_beyond_what_the_base_can_index() {
    for clean in [true, false] {
        for over in [false, true] {
            let mut p =
                PartitionBuilder::new(TOPIC, 0).broker_files(PartitionFileOptions::default());
            p.append(Batch::new(Producer::PLAIN).values(["a"]));
            p.skip_offsets(MAX - 1 + i64::from(over));
            p.append(Batch::new(Producer::PLAIN).values(["b"]));
            let (_d, m) = write(log_dir(clean), p);
            let last = MAX + i64::from(over);
            let (s, v_offsets) = out_of_range(&m, &file(0, "log"));
            if over {
                assert_eq!((s, v_offsets), (vec![Some(last)], vec![Some(last)]));
            } else {
                assert_no_alarm(&m);
                assert!(s.is_empty() && v_offsets.is_empty());
            }
            let v = verify(&m);
            let expected = if clean { vec![] } else { vec![file(0, "log")] };
            assert_eq!(recovered(&v), expected, "clean {clean}, over {over}");
            assert!(v.prediction.truncation.is_none());
            assert_eq!(v.prediction.log_end_offset_after, Some(last + 1));
        }
    }
}

/// `LogSegmentTest.testAppendForLogSegmentOffsetOverflowException` (base 1, largest offset
/// 0; base 100, largest offset 10): a batch below the segment's base cannot be indexed
/// either (a negative relative offset). On disk: segments 0 (offsets 0–2) and 3 (3–5),
/// the second renamed to base 4 (with empty indexes: the written ones are relative to 3)
/// so its first batch (3) lies below the name:
/// `segment_offset_out_of_range` at offset 3. A clean load keeps it (no recovery; the next
/// offset read from the segment is 6); an unclean one recovers it (the split is not part
/// of the prediction), nothing truncated. Near miss: the segment under its own base raises
/// nothing.
#[test]
fn batch_below_the_segment_base() {
    for clean in [true, false] {
        for renamed in [false, true] {
            let mut p = batches(0, 3);
            p.roll();
            for i in 3..6 {
                p.append(Batch::new(Producer::PLAIN).values([format!("{i}")]));
            }
            let (_d, m) = write(log_dir(clean), p);
            let base = if renamed { 4 } else { 3 };
            if renamed {
                rebase(&m, 3, 4);
                let (s, v) = out_of_range(&m, &file(4, "log"));
                assert_eq!((s, v), (vec![Some(3)], vec![Some(3)]));
            } else {
                assert_no_alarm(&m);
            }
            let v = verify(&m);
            let expected = if clean {
                vec![]
            } else {
                vec![file(0, "log"), file(base, "log")]
            };
            assert_eq!(recovered(&v), expected, "clean {clean}, renamed {renamed}");
            assert!(v.prediction.truncation.is_none());
            assert_eq!(v.prediction.log_end_offset_after, Some(6));
        }
    }
}

/// `UnifiedLogTest.testDegenerateSegmentSplit` (through `testDegenerateSplitSegmentWithOverflow`):
/// segment 0 whose only batches (2^31 and 2^31 + 1) all overflow it, with empty index files
/// and the recovery point at the end, loads without recovery: the next offset, read from
/// the segment's start (the empty index's last offset is the base), is 2^31 + 2. Here:
/// `segment_offset_out_of_range` on both batches, nothing recovered after a clean shutdown,
/// the log ends at 2^31 + 2. Near miss: the same batches in a segment named 2^31 raise
/// nothing.
#[test]
fn segment_whose_every_batch_overflows() {
    for rebased in [false, true] {
        let mut p = PartitionBuilder::new(TOPIC, 0)
            .start_offset(MAX + 1)
            .broker_files(PartitionFileOptions::default());
        p.append(Batch::new(Producer::PLAIN).values(["a"]));
        p.append(Batch::new(Producer::PLAIN).values(["b"]));
        let ld = log_dir(true).log_start_offset(TOPIC, 0, if rebased { 0 } else { MAX + 1 });
        let (_d, m) = write(ld, p);
        let base = if rebased { 0 } else { MAX + 1 };
        if rebased {
            rebase(&m, MAX + 1, 0);
            let (s, v) = out_of_range(&m, &file(0, "log"));
            assert_eq!(s, [Some(MAX + 1), Some(MAX + 2)]);
            assert_eq!(v, s);
        } else {
            assert_no_alarm(&m);
        }
        let v = verify(&m);
        assert!(recovered(&v).is_empty(), "{:?}", recovered(&v));
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(MAX + 3));
        assert_eq!(v.prediction.log_start_offset_after, Some(base));
    }
}

/// `UnifiedLogTest.testDegenerateSegmentSplitWithOutOfRangeBatchLastOffset`: a batch whose
/// base offset (2^31 − 2) still fits segment 0 but whose last offset (2^31, three records)
/// does not overflows the segment all the same (`LogSegment.recover` checks each batch's
/// last offset). On disk: `segment_offset_out_of_range` on that batch; a clean load keeps
/// the segment and the log ends at 2^31 + 1. Near miss: two records (last offset 2^31 − 1)
/// raise nothing.
#[test]
fn batch_whose_last_offset_overflows() {
    for records in [2usize, 3] {
        let mut p = PartitionBuilder::new(TOPIC, 0)
            .start_offset(MAX - 1)
            .broker_files(PartitionFileOptions::default());
        p.append(Batch::new(Producer::PLAIN).records(records));
        let (_d, m) = write(log_dir(true).log_start_offset(TOPIC, 0, 0), p);
        rebase(&m, MAX - 1, 0);
        let (s, v) = out_of_range(&m, &file(0, "log"));
        if records == 3 {
            assert_eq!(s, [Some(MAX - 1)]);
            assert_eq!(v, s);
        } else {
            assert!(s.is_empty() && v.is_empty(), "{s:?} {v:?}");
            assert_no_alarm(&m);
        }
        let v = verify(&m);
        assert!(recovered(&v).is_empty());
        assert_eq!(
            v.prediction.log_end_offset_after,
            Some(MAX - 1 + records as i64)
        );
    }
}

/// `LogSegmentTest.shouldTruncateEvenIfOffsetPointsToAGapInTheLog`: truncating a segment
/// holding offsets 40 and 43 to 41, an offset no batch holds, still removes the batch at
/// 43. On disk the truncation is recovery's: after an unclean shutdown the batch at 43 has
/// a broken CRC, so `LogSegment.recover` cuts the segment at that batch's position and the
/// log ends at 41 (the batch at 40's next offset), not at 43. Near miss: the batch intact,
/// nothing truncated, the log ends at 44 and only the (informational) gap is reported.
#[test]
fn truncation_at_a_gap_removes_the_batch_after_it() {
    for broken in [false, true] {
        let mut p = PartitionBuilder::new(TOPIC, 0)
            .start_offset(40)
            .broker_files(PartitionFileOptions::default());
        p.append(Batch::new(Producer::PLAIN).values(["first message"]));
        p.skip_offsets(2);
        p.append(Batch::new(Producer::PLAIN).values(["message after gap"]));
        let (_d, m) = write(log_dir(false), p);
        let b = &m.batches[1];
        assert_eq!(b.base_offset, 43);
        if broken {
            let log = path(&m, 40, "log");
            let mut bytes = std::fs::read(&log).unwrap();
            bytes[(b.position + b.size - 1) as usize] ^= 0xff;
            std::fs::write(&log, bytes).unwrap();
        } else {
            assert_no_alarm(&m);
        }
        let v = verify(&m);
        assert_eq!(recovered(&v), [file(40, "log")]);
        if broken {
            let t = v.prediction.truncation.as_ref().expect("a truncation");
            assert_eq!(t.position, b.position);
            assert_eq!(t.first_removed_offset, Some(43));
            assert_eq!(v.prediction.log_end_offset_after, Some(41));
        } else {
            assert!(v.prediction.truncation.is_none());
            assert_eq!(v.prediction.log_end_offset_after, Some(44));
        }
    }
}
