//! `MemoryRecordsTest.testNextBatchSize` and `FileRecordsTest`: how a `.log` image frames.

use super::{batch, record};

/// `MemoryRecordsTest.testNextBatchSize`: a batch's size is known from its first 17 bytes
/// (`firstBatchSize`: null before them), and a size below the 14-byte minimum is refused
/// (`CorruptRecordException`). The walk frames the whole batch as one entry of its size;
/// a chunk of 17 bytes or fewer asks for more from the batch's position; the size's low
/// byte zeroed is a corrupt entry at byte 0 (`SizeBelowMinimum`). Magic 10 under the CRC
/// computed before it, which `firstBatchSize` (the client's reader) refuses, is kept by the
/// broker's `FileLogInputStream` (the CRC-32C starts after the magic): an entry, which the
/// scan reports (`kafka_fmtaudit_cases::streams`). Near miss: magic 10 and the CRC off —
/// garbage (`UnknownMagic`).
#[test]
fn the_first_batch_frames_as_kafka_sizes_it() {
    use klogscan_format::{Entries, Tail, Unframed};
    let b = batch(
        0,
        0,
        8,
        0,
        10,
        10,
        (-1, -1, -1),
        1,
        &record(0, 0, b"", b"abc"),
    );
    let mut e = Entries::new(&b, 0);
    assert_eq!(e.next().map(|x| x.len()), Some(b.len()));
    assert!(e.next().is_none());
    assert_eq!(e.tail(), Some(Tail::Clean));
    for cut in [1, 12, 17] {
        let mut c = Entries::chunk(&b[..cut], 0);
        assert!(c.next().is_none());
        assert_eq!(c.need_more(), Some(0), "{cut}");
    }
    let mut magic10 = b.clone();
    magic10[16] = 10;
    let mut e = Entries::new(&magic10, 0);
    assert_eq!(e.next().map(|x| x.magic()), Some(10));
    magic10[20] ^= 1;
    let mut e = Entries::new(&magic10, 0);
    assert!(e.next().is_none());
    assert!(matches!(
        e.tail(),
        Some(Tail::Garbage {
            position: 0,
            reason: Unframed::UnknownMagic,
            ..
        })
    ));
    let mut small = b.clone();
    small[11] = 0;
    let mut e = Entries::new(&small, 0);
    assert!(e.next().is_none());
    assert!(matches!(
        e.tail(),
        Some(Tail::CorruptEntry {
            position: 0,
            size: 0,
            reason: Unframed::SizeBelowMinimum,
            ..
        })
    ));
}

// ----- FileRecordsTest --------------------------------------------------------------------

/// `FileRecordsTest.testAppendProtectsFromOverflow`: `FileRecords.append` refuses records
/// that would take the segment past `Integer.MAX_VALUE` bytes, so no entry of a segment ends
/// beyond 2^31 - 1. An entry whose size field says it does (here at byte 2^31 - 100, 200
/// bytes long) is a corrupt length, not a batch cut by a crash: `CorruptEntry` at its
/// position (`SizePastLargestSegment`). Near miss: the same entry at 2^31 - 300 ends
/// inside the limit and is an entry.
#[test]
fn no_entry_ends_past_the_largest_segment() {
    use klogscan_format::{Entries, Tail, Unframed};
    let recs = [record(0, 0, b"k", &[7u8; 100]), record(1, 1, b"l", b"v")].concat();
    let b = batch(0, 0, 0, 1, 10, 11, (-1, -1, -1), 2, &recs);
    assert!(b.len() > 100 && b.len() < 300);
    let past = i32::MAX as u64 - 100;
    let mut e = Entries::new(&b, past);
    assert!(e.next().is_none());
    assert!(matches!(
        e.tail(),
        Some(Tail::CorruptEntry { position, reason: Unframed::SizePastLargestSegment, .. }) if position == past
    ));
    let inside = i32::MAX as u64 - 300;
    let mut e = Entries::new(&b, inside);
    assert_eq!(e.next().map(|x| x.position), Some(inside));
    assert_eq!(e.tail(), None);
    assert!(e.next().is_none());
    assert_eq!(e.tail(), Some(Tail::Clean));
}
