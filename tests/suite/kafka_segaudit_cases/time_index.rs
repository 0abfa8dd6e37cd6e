//! `TimeIndexTest` (and `UnifiedLogTest`'s time-index cases): time indexes the broker
//! would not write, found on disk.

use super::{
    PRE_2_3, TOPIC, assert_no_alarm, batches, cut, file, findings_on, log_dir, pad_with_zeros,
    path, recovered, slots, verify, verify_as, write, write_slots,
};
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, PartitionBuilder, PartitionFileOptions, Producer, Rec};

/// `(timestamp, relative offset)` of a time-index slot.
fn entry(slot: &[u8]) -> (i64, i32) {
    (
        i64::from_be_bytes(slot[..8].try_into().unwrap()),
        i32::from_be_bytes(slot[8..].try_into().unwrap()),
    )
}

fn slot(ts: i64, rel: i32) -> Vec<u8> {
    [&ts.to_be_bytes()[..], &rel.to_be_bytes()[..]].concat()
}

/// `TimeIndexTest.testAppend`: the time index refuses an entry whose timestamp is below the
/// last one's (and one whose offset is), so the broker never writes a time index that goes
/// back in time. On disk, two adjacent entries swapped: `timeindex_mismatch` ("not above the
/// previous entry's"). The load does not look at the middle entries (before 2.3
/// `TimeIndex.sanityCheck` compared only the last timestamp with the first, and the last
/// entry is intact): no recovery after a clean shutdown, for either broker; after an unclean
/// one the segment is recovered (the index rebuilt), nothing truncated. Near miss: the index
/// as written raises nothing.
#[test]
fn time_index_that_goes_back_in_time() {
    for clean in [true, false] {
        let (_d, m) = write(log_dir(clean), batches(0, 10));
        assert_no_alarm(&m);
        let tidx = path(&m, 0, "timeindex");
        let mut s = slots(&tidx, 12);
        assert_eq!(s.len(), 9);
        s.swap(1, 2);
        write_slots(&tidx, &s);
        for version in [None, PRE_2_3] {
            let v = verify_as(&m, version);
            let bad = findings_on(&v, Kind::TimeindexMismatch, &file(0, "timeindex"));
            assert_eq!(bad.len(), 1, "{:#?}", v.findings);
            assert!(bad[0].message.contains("not above the previous entry's"));
            let expected = if clean { vec![] } else { vec![file(0, "log")] };
            assert_eq!(recovered(&v), expected, "clean {clean}, {version:?}");
            assert!(v.prediction.truncation.is_none());
            assert_eq!(v.prediction.log_end_offset_after, Some(10));
        }
    }
}

/// `TimeIndexTest.testIsFull`, `TimeIndexTest.testResize` and
/// `UnifiedLogTest.testIndexResizingAtTruncation`: the active segment's time index is
/// preallocated to `maxIndexSize` rounded down to 12-byte entries; a crash leaves the zero
/// slots, which the next load reads as entries — the last one `(timestamp 0, relative offset
/// 0)`. After the crash (the realistic case) the segment is recovered and nothing is raised
/// at warning or above. A broker before 2.3 also runs `TimeIndex.sanityCheck` at load: a
/// last timestamp (0) below the first entry's is a `CorruptIndexException`, so it recovers
/// the segment even after a clean shutdown; a current broker does not.
#[test]
fn preallocated_time_index_tail() {
    for clean in [false, true] {
        let (_d, m) = write(log_dir(clean), batches(0, 10));
        pad_with_zeros(&path(&m, 0, "timeindex"), 1200);
        let v = verify(&m);
        let expected = if clean { vec![] } else { vec![file(0, "log")] };
        assert_eq!(recovered(&v), expected, "clean {clean}");
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(10));
        if !clean {
            assert_no_alarm(&m);
        }
        let old = verify_as(&m, PRE_2_3);
        assert_eq!(recovered(&old), [file(0, "log")], "clean {clean}");
        assert!(old.prediction.truncation.is_none());
    }
}

/// `TimeIndexTest.testLastEntry`: an empty time index's last entry is `(NO_TIMESTAMP, base
/// offset)`; and `LogLoader.loadSegmentFiles` creates a missing `.timeindex` empty (resized
/// to 0) without recovering the segment. On disk, a cleanly shut down segment of ten
/// batches with an empty time index, then none: nothing at warning or above, no recovery
/// for a current broker or one before 2.3 (an empty index passes its sanity check), the log
/// still ends at 10. Near miss: without its offset index (`NoSuchFileException` in
/// `sanityCheck`) the same segment is recovered even after a clean shutdown.
#[test]
fn empty_or_missing_time_index() {
    let (_d, m) = write(log_dir(true), batches(0, 10));
    let tidx = path(&m, 0, "timeindex");
    std::fs::write(&tidx, b"").unwrap();
    for missing in [false, true] {
        if missing {
            std::fs::remove_file(&tidx).unwrap();
        }
        assert_no_alarm(&m);
        for version in [None, PRE_2_3] {
            let v = verify_as(&m, version);
            assert!(recovered(&v).is_empty(), "missing {missing}, {version:?}");
            assert_eq!(v.prediction.log_end_offset_after, Some(10));
        }
    }
    std::fs::remove_file(path(&m, 0, "index")).unwrap();
    let v = verify(&m);
    assert_eq!(recovered(&v), [file(0, "log")]);
    assert!(
        v.prediction.recovered_segments[0]
            .reason
            .contains("missing offset index"),
        "{:?}",
        v.prediction.recovered_segments
    );
    assert_eq!(v.prediction.log_end_offset_after, Some(10));
}

/// `TimeIndexTest.testTruncate`: truncating the time index to an offset removes every entry
/// at or above it. On disk: a segment of ten batches whose `.log` and offset index were cut
/// at offset 6. With the time index cut too, nothing is raised and the log ends at 6. Near
/// miss with the time index left whole: entries for offsets 6–9, past the log —
/// `timeindex_mismatch`; no broker checks it at load (its last entry is above the base and
/// not older than the first), so nothing is recovered and the log end, read through the
/// offset index, stays 6.
#[test]
fn time_index_entries_past_the_log() {
    for truncate_time_index in [true, false] {
        let ld = log_dir(true)
            .recovery_point(TOPIC, 0, 6)
            .high_watermark(TOPIC, 0, 6);
        let (_d, m) = write(ld, batches(0, 10));
        cut(&path(&m, 0, "log"), m.batches[6].position);
        std::fs::remove_file(path(&m, 10, "snapshot")).unwrap();
        let idx = path(&m, 0, "index");
        let mut s = slots(&idx, 8);
        s.truncate(5);
        write_slots(&idx, &s);
        if truncate_time_index {
            let tidx = path(&m, 0, "timeindex");
            let mut t = slots(&tidx, 12);
            t.truncate(5);
            write_slots(&tidx, &t);
            assert_no_alarm(&m);
        }
        for version in [None, PRE_2_3] {
            let v = verify_as(&m, version);
            assert!(recovered(&v).is_empty(), "{version:?}");
            assert!(v.prediction.truncation.is_none());
            assert_eq!(v.prediction.log_end_offset_after, Some(6));
            let bad = findings_on(&v, Kind::TimeindexMismatch, &file(0, "timeindex"));
            assert_eq!(bad.len(), usize::from(!truncate_time_index), "{bad:#?}");
        }
    }
}

/// 100 single-record batches from offset 100, timestamps 1 ms apart, an index entry after
/// every batch but the first; cleanly shut down.
fn follower_segment() -> (tempfile::TempDir, klogscan::testkit::Manifest) {
    let mut p = PartitionBuilder::new(TOPIC, 0)
        .start_offset(100)
        .time_step(1)
        .broker_files(PartitionFileOptions::default().index_interval(1));
    for i in 0..100 {
        p.append(Batch::new(Producer::PLAIN).values([format!("{i}")]));
    }
    write(log_dir(true), p)
}

/// `UnifiedLogTest.testBuildTimeIndexWhenNotAssigningOffsets`: a follower appending 100
/// single-record batches (offsets 100–199, timestamps 1 ms apart) with
/// `index.interval.bytes` 1 builds a time index of 99 entries, the last at the newest
/// timestamp. On disk: that segment raises nothing and loads without recovery, for a
/// current broker and one before 2.3. Near miss: the middle entries in reverse order (each
/// older than the one before it, the first and last untouched): `timeindex_mismatch`, and
/// still no recovery.
#[test]
fn follower_time_index_has_an_entry_per_batch() {
    let (_d, m) = follower_segment();
    let tidx = path(&m, 100, "timeindex");
    let mut s = slots(&tidx, 12);
    assert_eq!(s.len(), 99);
    let first = m.batches[0].max_timestamp;
    assert_eq!(entry(&s[0]), (first + 1, 1));
    assert_eq!(entry(&s[98]), (first + 99, 99));
    assert_no_alarm(&m);
    s[1..98].reverse();
    write_slots(&tidx, &s);
    for version in [None, PRE_2_3] {
        let v = verify_as(&m, version);
        let bad = findings_on(&v, Kind::TimeindexMismatch, &file(100, "timeindex"));
        assert_eq!(bad.len(), 1, "{:#?}", v.findings);
        assert!(recovered(&v).is_empty(), "{version:?}");
        assert_eq!(v.prediction.log_end_offset_after, Some(200));
    }
}

/// `UnifiedLogTest.testBuildTimeIndexWhenNotAssigningOffsets`, its last assertion: the time
/// index's last entry is the segment's newest timestamp (a clean close and a roll force
/// that entry in, `LogSegment.close`, `onBecomeInactiveSegment`). Its absence on disk is
/// harmless: the load takes the last entry as the segment's largest timestamp only after
/// reading the log past that entry's position for a newer one
/// (`LogSegment.loadLargestTimestamp`, `FileRecords.largestTimestampAfter`), so retention
/// and `ListOffsets` still see the newest batch's. On disk, after a clean shutdown, the time
/// index without its last entry: nothing raised, nothing recovered. Near miss: the last
/// entry kept but naming a timestamp its batch does not have is `timeindex_mismatch`.
#[test]
fn time_index_without_the_newest_timestamp() {
    let (_d, m) = follower_segment();
    let tidx = path(&m, 100, "timeindex");
    let mut s = slots(&tidx, 12);
    let last = s.pop().expect("a last entry");
    write_slots(&tidx, &s);
    assert_no_alarm(&m);
    let v = verify(&m);
    assert!(findings_on(&v, Kind::TimeindexMismatch, &file(100, "timeindex")).is_empty());
    assert!(recovered(&v).is_empty());
    let (ts, offset) = entry(&last);
    s.push(slot(ts - 1, offset));
    write_slots(&tidx, &s);
    let v = verify(&m);
    let bad = findings_on(&v, Kind::TimeindexMismatch, &file(100, "timeindex"));
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
    assert!(recovered(&v).is_empty());
}

/// `UnifiedLogTest.testAppendWithNoTimestamp`: records without a timestamp
/// (`NO_TIMESTAMP`, −1) are appended; the time index only takes a timestamp above its last
/// one (−1 when empty), so it stays empty. On disk: three such batches and an empty
/// `.timeindex`, nothing raised, no recovery, the log ends at 3. Near miss: a time index
/// holding an entry for timestamp −1 (which the broker never appends) is reported.
#[test]
fn records_without_timestamps_leave_the_time_index_empty() {
    let mut p = PartitionBuilder::new(TOPIC, 0)
        .broker_files(PartitionFileOptions::default().index_interval(1));
    for _ in 0..3 {
        p.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::value("v").at(-1))
                .at(-1),
        );
    }
    let (_d, m) = write(log_dir(true), p);
    let tidx = path(&m, 0, "timeindex");
    assert_eq!(std::fs::metadata(&tidx).unwrap().len(), 0);
    assert_no_alarm(&m);
    let v = verify(&m);
    assert!(recovered(&v).is_empty());
    assert_eq!(v.prediction.log_end_offset_after, Some(3));
    write_slots(&tidx, &[slot(-1, 2)]);
    let v = verify(&m);
    let bad = findings_on(&v, Kind::TimeindexMismatch, &file(0, "timeindex"));
    assert_eq!(bad.len(), 1, "{:#?}", v.findings);
}
