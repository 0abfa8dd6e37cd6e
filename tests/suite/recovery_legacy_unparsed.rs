//! `LogSegment.recover` checks a legacy (v0/v1) entry's size and CRC only
//! (`LegacyRecord.ensureValid`, `kafka-format.md` §9): an entry whose CRC holds but whose
//! key/value lengths do not parse is a valid batch to it. It counts towards the bytes
//! between index entries, its offset (`AbstractLegacyRecordBatch.lastOffset`) is range- and
//! order-checked at index points, and it moves the next offset, so a truncation after it
//! ends the log at its offset + 1. `scan`'s `truncation` and `verify`'s prediction come from
//! the same walk (a recovery-only event), so they agree on each case.
#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::results::ScanReport;
use klogscan::testkit::{
    Batch, FaultKind, LogDirBuilder, Manifest, PartitionBuilder, Producer, Target,
};
use klogscan::verify::{VerifyOptions, VerifyReport, verify};
use std::path::Path;

/// A v1 message at `offset` whose key length (100) runs past its end; its CRC is valid
/// unless `bad_crc`. 34 bytes on disk.
fn unparseable_v1(offset: i64, bad_crc: bool) -> Vec<u8> {
    let mut body = vec![1u8, 0]; // magic 1, attributes
    body.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    body.extend_from_slice(&100i32.to_be_bytes()); // key length past the end
    body.extend_from_slice(&(-1i32).to_be_bytes());
    let crc = crc32fast::hash(&body) ^ u32::from(bad_crc);
    let mut e = offset.to_be_bytes().to_vec();
    e.extend_from_slice(&((4 + body.len()) as i32).to_be_bytes());
    e.extend_from_slice(&crc.to_be_bytes());
    e.extend_from_slice(&body);
    e
}

const GARBAGE: [u8; 7] = [0xde, 0xad, 0xbe, 0xef, 1, 2, 3];

/// `p`'s log, then `tail` appended to its last segment; unclean shutdown with the recovery
/// point at 0, so recovery runs on the segment.
fn write(mut p: PartitionBuilder, tail: &[Vec<u8>]) -> (tempfile::TempDir, Manifest) {
    for t in tail {
        p.fault(Target::LastLog, FaultKind::AppendGarbage(t.clone()));
    }
    let dir = tempfile::tempdir().unwrap();
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("old", 0, 0);
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Two small v2 batches (offsets 0–3).
fn two_batches() -> PartitionBuilder {
    let pr = Producer::idempotent(7, 0);
    let mut p = PartitionBuilder::new("old", 0);
    p.append(Batch::new(pr).records(2));
    p.append(Batch::new(pr).records(2));
    p
}

fn both(root: &Path) -> (ScanReport, VerifyReport) {
    let s = scan(&[root.to_path_buf()], &ScanOptions::default());
    let v = verify(&[root.to_path_buf()], &VerifyOptions::default());
    assert_eq!(s.partitions.len(), 1);
    assert_eq!(v.partitions.len(), 1);
    (s, v)
}

/// Scan's and verify's truncation of the one partition: same segment, position and
/// reason; returns verify's `(position, offset, reason)`.
fn agreed_truncation(s: &ScanReport, v: &VerifyReport) -> Option<(u64, i64, String)> {
    let a = s.partitions[0].truncation.as_ref();
    let b = v.partitions[0].prediction.truncation.as_ref();
    assert_eq!(
        a.map(|t| (&t.segment, t.position, &t.reason)),
        b.map(|t| (&t.segment, t.position, &t.reason)),
        "scan and verify disagree"
    );
    b.map(|t| (t.position, t.offset, t.reason.clone()))
}

#[test]
fn a_legacy_entry_with_a_valid_crc_counts_even_if_it_does_not_parse() {
    let (d, m) = write(
        two_batches(),
        &[unparseable_v1(10, false), GARBAGE.to_vec()],
    );
    let (s, v) = both(d.path());
    let legacy_end = m.batches[1].position + m.batches[1].size + 34;
    let (position, offset, reason) = agreed_truncation(&s, &v).expect("garbage tail");
    assert_eq!(position, legacy_end, "{reason}");
    // The log ends after the legacy entry: its offset + 1, not the last v2 batch's.
    assert_eq!(offset, 11, "{reason}");
    assert_eq!(v.partitions[0].prediction.log_end_offset_after, Some(11));
    // The entry is still reported, and is not where recovery stops.
    let invalid = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::InvalidBatch)
        .expect("invalid_batch");
    assert_eq!(invalid.offset, Some(10));
    assert!(
        !invalid.broker_behaviour.contains("stops here"),
        "{}",
        invalid.broker_behaviour
    );
    // The tail's finding words the same truncation.
    let tail = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::TrailingBytes)
        .expect("trailing_bytes");
    let words = format!("truncates the file to byte {legacy_end} (log end offset 11)");
    assert!(
        tail.broker_behaviour.contains(&words),
        "{}",
        tail.broker_behaviour
    );
    // Recovery-only: not a replayed batch.
    assert_eq!(s.partitions[0].batches, 2);
}

/// The same entry last in the log, nothing after it: no truncation, and the log ends
/// after it (offset 10 + 1), in scan's report and in verify's prediction, not after the
/// last replayed batch (offset 3 + 1).
#[test]
fn an_unparsed_legacy_entry_last_in_the_log_ends_the_log() {
    let (d, _) = write(two_batches(), &[unparseable_v1(10, false)]);
    let (s, v) = both(d.path());
    assert_eq!(agreed_truncation(&s, &v), None);
    assert_eq!(s.partitions[0].log_end_offset, Some(11));
    assert_eq!(v.partitions[0].prediction.log_end_offset, Some(11));
    assert_eq!(v.partitions[0].prediction.log_end_offset_after, Some(11));
    assert_eq!(s.partitions[0].batches, 2);
    // Negative: with a bad CRC it is where recovery stops, and the log ends at 4.
    let (d, _) = write(two_batches(), &[unparseable_v1(10, true)]);
    let (s, v) = both(d.path());
    assert!(agreed_truncation(&s, &v).is_some());
    assert_eq!(v.partitions[0].prediction.log_end_offset_after, Some(4));
}

#[test]
fn a_legacy_entry_with_a_bad_crc_is_where_recovery_stops() {
    let (d, m) = write(two_batches(), &[unparseable_v1(10, true), GARBAGE.to_vec()]);
    let (s, v) = both(d.path());
    let (position, offset, reason) = agreed_truncation(&s, &v).expect("bad CRC");
    assert_eq!(
        position,
        m.batches[1].position + m.batches[1].size,
        "{reason}"
    );
    assert_eq!(offset, 4, "{reason}");
    assert_eq!(v.partitions[0].prediction.log_end_offset_after, Some(4));
    assert_eq!(
        s.partitions[0].truncation.as_ref().unwrap().offset,
        Some(10)
    );
}

/// Three v2 batches of about 5 KB each (offsets 0–2): more than `index.interval.bytes`
/// (4096) lie before each of them but the first, so recovery appends an index entry at the
/// second (lastOffset 1), the third (lastOffset 2) and at the entry after them.
fn three_large_batches() -> PartitionBuilder {
    let pr = Producer::idempotent(7, 0);
    let mut p = PartitionBuilder::new("old", 0);
    for _ in 0..3 {
        p.append(Batch::new(pr).values([vec![7u8; 5000]]));
    }
    p
}

#[test]
fn an_unparsed_legacy_entry_at_an_index_point_with_an_old_offset_empties_the_segment() {
    // The legacy entry comes where recovery appends an index entry, with offset 1: not
    // above the last indexed offset (2), so `OffsetIndex.append` throws
    // InvalidOffsetException and recovery truncates the segment to its base offset.
    let (d, _) = write(three_large_batches(), &[unparseable_v1(1, false)]);
    let (s, v) = both(d.path());
    let (position, offset, reason) = agreed_truncation(&s, &v).expect("emptied");
    assert_eq!((position, offset), (0, 0), "{reason}");
    assert!(reason.contains("InvalidOffsetException"), "{reason}");
}

#[test]
fn an_unparsed_legacy_entry_at_an_index_point_with_a_later_offset_is_kept() {
    // Offset 3 is above the last indexed offset: recovery keeps the whole segment.
    let (d, _) = write(three_large_batches(), &[unparseable_v1(3, false)]);
    let (s, v) = both(d.path());
    assert_eq!(agreed_truncation(&s, &v), None);
    assert!(v.partitions[0].prediction.outcome_unknown.is_none());
}
