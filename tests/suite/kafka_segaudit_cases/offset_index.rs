//! `OffsetIndexTest`: what the broker refuses to append to an offset index, found on disk.

use super::{
    PRE_2_3, TOPIC, assert_no_alarm, batches, cut, file, findings_on, log_dir, pad_with_zeros,
    path, recovered, slots, verify, verify_as, write, write_slots,
};
use klogscan::finding::Kind;

/// `OffsetIndexTest.appendOutOfOrder`: the index refuses an entry whose offset is not above
/// the last one (`InvalidOffsetException`), so the broker never writes an index whose
/// offsets go back. On disk, two adjacent entries swapped in a segment of ten batches: an
/// `index_corrupt` on the `.index`. No load checks the order (current brokers check nothing
/// of the offset index at load; before 2.3 `OffsetIndex.sanityCheck` only compared the last
/// entry with the base offset, which is still sound): after a clean shutdown the segment is
/// not recovered, for either broker, and the log still ends at 10 (the last entry is
/// intact); after an unclean one the segment is recovered, which rebuilds the index, and
/// nothing is truncated. Near miss: the index as written raises nothing.
#[test]
fn offset_index_entries_that_go_back() {
    for clean in [true, false] {
        let (_d, m) = write(log_dir(clean), batches(0, 10));
        assert_no_alarm(&m);
        let idx = path(&m, 0, "index");
        let mut s = slots(&idx, 8);
        assert_eq!(s.len(), 9);
        s.swap(2, 3);
        write_slots(&idx, &s);
        for version in [None, PRE_2_3] {
            let v = verify_as(&m, version);
            let bad = findings_on(&v, Kind::IndexCorrupt, &file(0, "index"));
            assert_eq!(bad.len(), 1, "{:#?}", v.findings);
            assert!(
                bad[0]
                    .message
                    .contains("not greater than the previous entry's"),
                "{}",
                bad[0].message
            );
            let expected = if clean { vec![] } else { vec![file(0, "log")] };
            assert_eq!(recovered(&v), expected, "clean {clean}, {version:?}");
            assert!(v.prediction.truncation.is_none());
            assert_eq!(v.prediction.log_end_offset_after, Some(10));
        }
    }
}

/// `OffsetIndexTest.appendTooMany` and `UnifiedLogTest.testIndexResizingAtTruncation`: the
/// active segment's offset index is preallocated to `maxIndexSize` (and resized back to it
/// when a truncation empties the segment); only a clean close trims it to its entries. A
/// broker that crashes leaves the zero-filled tail, which the next load takes as entries of
/// relative offset 0 at position 0: the last "offset" is the base, so even the pre-2.3
/// `OffsetIndex.sanityCheck` passes, and the next offset read from there is the log's end.
/// On disk: nine entries and zeros up to 4 KiB. After the crash the segment is recovered
/// (the index rebuilt) with nothing truncated and nothing at warning or above; after a
/// clean shutdown neither broker recovers it and the log still ends at 10.
#[test]
fn preallocated_offset_index_tail() {
    for clean in [false, true] {
        let (_d, m) = write(log_dir(clean), batches(0, 10));
        pad_with_zeros(&path(&m, 0, "index"), 4096);
        assert_no_alarm(&m);
        for version in [None, PRE_2_3] {
            let v = verify_as(&m, version);
            let expected = if clean { vec![] } else { vec![file(0, "log")] };
            assert_eq!(recovered(&v), expected, "clean {clean}, {version:?}");
            assert!(v.prediction.truncation.is_none());
            assert_eq!(v.prediction.log_end_offset_after, Some(10));
        }
    }
}

/// `OffsetIndexTest.truncate`: truncating the index to an offset drops every entry at or
/// above it and keeps the ones below (the last offset is then the last kept entry's). On
/// disk: a segment of ten batches whose `.log` was cut at offset 6 (the producer snapshot
/// at 10 gone with it). With the index cut the
/// same way, nothing is raised and the log ends at 6 after a clean shutdown. Near miss with
/// the index left whole: its last entries point past the `.log`; `index_mismatch` or
/// `index_corrupt` on it, and the broker, reading the next offset from the last entry's
/// position (beyond the file), finds no batch there and takes the segment's base, 0, as
/// the log end.
#[test]
fn offset_index_truncated_with_its_log() {
    for truncate_index in [true, false] {
        let ld = log_dir(true)
            .recovery_point(TOPIC, 0, 6)
            .high_watermark(TOPIC, 0, 6);
        let (_d, m) = write(ld, batches(0, 10));
        cut(&path(&m, 0, "log"), m.batches[6].position);
        std::fs::remove_file(path(&m, 10, "snapshot")).unwrap();
        let tidx = path(&m, 0, "timeindex");
        let mut t = slots(&tidx, 12);
        t.truncate(5);
        write_slots(&tidx, &t);
        if truncate_index {
            let idx = path(&m, 0, "index");
            let mut s = slots(&idx, 8);
            s.truncate(5);
            write_slots(&idx, &s);
            assert_no_alarm(&m);
        }
        let v = verify(&m);
        assert!(recovered(&v).is_empty());
        assert!(v.prediction.truncation.is_none());
        if truncate_index {
            assert_eq!(v.prediction.log_end_offset_after, Some(6));
        } else {
            let bad = (v.findings.iter())
                .filter(|f| f.segment.as_deref() == Some(&file(0, "index")[..]))
                .count();
            assert!(bad > 0, "{:#?}", v.findings);
            assert_eq!(v.prediction.log_end_offset_after, Some(0));
        }
    }
}
