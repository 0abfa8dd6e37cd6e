//! `LocalLogTest.testRollEmptyActiveSegment`, `testRollSegmentThatAlreadyExists`,
//! `testNewSegmentsAfterRoll`, `testCreateAndDeleteSegment` and `LazyIndexTest`'s
//! `getDoesNotLoadUntilCalled`, `renameToToleratesAlreadyDeletedSource`: what a roll leaves.

use super::{PDIR, TOPIC, deleted_leftovers, ends, names, recovered_set, seg};
use crate::kafka_ckaudit_cases::{Dir, assert_quiet, part};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

/// `maxIndexSize` (`segment.index.bytes`, 10 MiB) rounded down to whole entries: the length
/// an index file is created at (`AbstractIndex`), 8-byte offset entries and 12-byte time
/// entries.
const OFFSET_INDEX_BYTES: u64 = 10_485_760;
const TIME_INDEX_BYTES: u64 = 10_485_756;

fn sized(d: &Dir, name: &str, len: u64) {
    let f = std::fs::File::create(d.root.join(PDIR).join(name)).unwrap();
    f.set_len(len).unwrap();
}

/// `LocalLogTest.testRollEmptyActiveSegment` (and `testCreateAndDeleteSegment`'s path when
/// the new base is the old one): `LocalLog.roll` finds the empty active segment 0 already at
/// the new base 0, and its warning reads both indexes' entry counts, which materialises them
/// at their full preallocated length (`LazyIndex.get`); `createAndDeleteSegment` renames the
/// old segment's three files `.deleted` first, then opens the new `0.log` — whose indexes,
/// lazy, are not created. The broker dies inside `file.delete.delay.ms` (no clean shutdown,
/// recovery point 0). Next start: the three `.deleted` files are removed
/// (`removeTempFilesAndCollectSwapFiles`), the new segment, with no offset index, is
/// recovered at load (`LazyIndexTest.getDoesNotLoadUntilCalled`: the file never existed),
/// the log starts and ends at 0 and no segment is opened. Near miss: the crash between the
/// rename and the open — no `0.log` left at all: the load finds no segment and opens one at
/// the log start, 0 (`recoverLog`), recovering nothing.
#[test]
fn rolling_an_empty_active_segment_at_its_own_base() {
    for opened in [true, false] {
        let d = Dir::write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point(TOPIC, 1, 0)
                .partition(PartitionBuilder::new(TOPIC, 1)),
        );
        d.put(&format!("{PDIR}/{}.deleted", seg(0, "log")), "");
        sized(
            &d,
            &format!("{}.deleted", seg(0, "index")),
            OFFSET_INDEX_BYTES,
        );
        sized(
            &d,
            &format!("{}.deleted", seg(0, "timeindex")),
            TIME_INDEX_BYTES,
        );
        if opened {
            d.put(&format!("{PDIR}/{}", seg(0, "log")), "");
        }
        assert!(
            !names(&d.root.join(PDIR)).contains(&seg(0, "index")),
            "the new segment's index is lazy"
        );
        let v = d.verify();
        assert_quiet(&d, &v);
        let p = part(&v, TOPIC, 1);
        assert_eq!(
            deleted_leftovers(p),
            [
                format!("{}.deleted", seg(0, "index")),
                format!("{}.deleted", seg(0, "log")),
                format!("{}.deleted", seg(0, "timeindex")),
            ]
        );
        assert_eq!(ends(p), (Some(0), Some(0)));
        assert!(p.prediction.truncation.is_none() && p.prediction.deleted_segments.is_empty());
        if opened {
            assert_eq!(recovered_set(p), [0]);
            assert_eq!(
                p.prediction.recovered_segments[0].reason,
                "missing offset index"
            );
            assert_eq!(p.prediction.created_segment, None);
        } else {
            assert!(recovered_set(p).is_empty());
            assert_eq!(
                p.prediction.created_segment.as_deref(),
                Some(seg(0, "log").as_str())
            );
        }
    }
}

/// `LocalLogTest.testRollSegmentThatAlreadyExists` and `testNewSegmentsAfterRoll`: the empty
/// segment 0 rolled at its own base (its files `.deleted`, as above), `k1` and `k2` appended
/// at 0 and 1 to the new segment 0 (which materialises its indexes; the next roll's
/// `onBecomeInactiveSegment` trims them), then a roll to the log end 2: an empty `2.log`
/// whose indexes were never created, and `LazyIndexTest.renameToToleratesAlreadyDeletedSource`'s
/// case for the old segment if it had never been read — here its `.log.deleted` alone. The
/// broker dies before the delete delay. Next start: the `.deleted` file is removed, not the
/// live `0.log` of the same base; segment 2 is recovered at load (no offset index) and both
/// are recovered by `recoverLog` (recovery point 0): log 0–2, nothing cut, nothing said.
/// Near miss: a clean shutdown — `recoverLog` recovers nothing, but segment 2, without its
/// offset index, is still recovered at load (`loadSegmentFiles`, whatever the shutdown).
#[test]
fn a_roll_after_a_roll_at_the_same_base_keeps_the_new_segment() {
    for clean in [false, true] {
        let mut p = PartitionBuilder::new(TOPIC, 1);
        p.append(Batch::new(Producer::PLAIN).values(["k1"]));
        p.append(Batch::new(Producer::PLAIN).values(["k2"]));
        let d = Dir::write(
            LogDirBuilder::new(1)
                .clean_shutdown(clean)
                .recovery_point(TOPIC, 1, 0)
                .partition(p),
        );
        d.put(&format!("{PDIR}/{}.deleted", seg(0, "log")), "");
        d.put(&format!("{PDIR}/{}", seg(2, "log")), "");
        let v = d.verify();
        assert_quiet(&d, &v);
        let p = part(&v, TOPIC, 1);
        assert_eq!(deleted_leftovers(p), [format!("{}.deleted", seg(0, "log"))]);
        assert_eq!(ends(p), (Some(0), Some(2)));
        assert_eq!(p.prediction.first_offset, Some(0));
        let want: &[i64] = if clean { &[2] } else { &[0, 2] };
        assert_eq!(recovered_set(p), want, "clean {clean}");
        assert!(p.prediction.truncation.is_none() && p.prediction.deleted_segments.is_empty());
    }
}
