//! One recovery model (`kafka-format.md` §9, Kafka's `LogLoader` / `LogSegment.recover`):
//! `scan`'s `truncation` and the wording of its integrity findings, and `verify`'s
//! prediction, come from the same walk and the same plan, so they agree on every
//! truncation. Each case runs both commands' library entry points on the same files.
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

const T0: i64 = 1_700_000_000_000;

fn both(root: &Path) -> (ScanReport, VerifyReport) {
    let s = scan(&[root.to_path_buf()], &ScanOptions::default());
    let v = verify(&[root.to_path_buf()], &VerifyOptions::default());
    (s, v)
}

/// Where a truncation happens: `(segment, byte position)`.
type Cut = Option<(String, u64)>;

/// The truncation each command predicts for the one partition.
fn truncations(s: &ScanReport, v: &VerifyReport) -> (Cut, Cut) {
    assert_eq!(s.partitions.len(), 1);
    assert_eq!(v.partitions.len(), 1);
    let a = s.partitions[0]
        .truncation
        .as_ref()
        .map(|t| (t.segment.clone(), t.position));
    let b = v.partitions[0]
        .prediction
        .truncation
        .as_ref()
        .map(|t| (t.segment.clone(), t.position));
    (a, b)
}

fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

/// Nine segments of idempotent data, two batches each.
fn nine_segments() -> PartitionBuilder {
    let pr = Producer::idempotent(7, 0);
    let mut p = PartitionBuilder::new("nine", 0).start_time(T0);
    for i in 0..9 {
        if i > 0 {
            p.roll();
        }
        p.append(Batch::new(pr).records(2));
        p.append(Batch::new(pr).records(2));
    }
    p
}

fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Flip a byte inside the records of the first batch of segment 0.
fn damage_oldest(p: &mut PartitionBuilder) {
    p.fault(
        Target::Log(0),
        FaultKind::FlipByte {
            position: 70,
            mask: 0x20,
        },
    );
}

/// A COMMIT whose value is 2 bytes (EndTxnMarker needs 6), CRC-valid, then a batch:
/// `LogSegment.recover` counts the marker as valid before its producer-state update throws
/// InvalidRecordException, so both models truncate right after the marker (it stays) and
/// the batch after it goes; `verify` adds that the final rebuild throws at the marker.
#[test]
fn malformed_control_record_truncates_after_it_in_both() {
    let txn = Producer::transactional(9, 0);
    let mut p = PartitionBuilder::new("m", 0).start_time(T0);
    p.append(Batch::new(txn).records(2));
    let bad = p.control_raw(txn, 1, Some(vec![0, 0]));
    let after = p.append(Batch::new(Producer::PLAIN).records(1));
    let (d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("m", 0, 0),
        p,
    );
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    assert_eq!(a, Some((seg(0), m.batches[after].position)));
    assert_eq!(
        m.batches[after].position,
        m.batches[bad].position + m.batches[bad].size
    );
    assert_eq!(a, b);
    let f = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::InvalidBatch)
        .unwrap();
    assert!(
        f.broker_behaviour.contains("keeps the batch"),
        "{}",
        f.broker_behaviour
    );
    let pr = &v.partitions[0].prediction;
    assert!(pr.load_failure.is_some(), "{pr:#?}");
    // A well-formed COMMIT: neither truncates.
    let mut p = PartitionBuilder::new("m", 0).start_time(T0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 1);
    let (d, _m) = write(LogDirBuilder::new(1).clean_shutdown(false), p);
    let (s, v) = both(d.path());
    assert_eq!(truncations(&s, &v), (None, None));
}

#[test]
fn crc_damage_below_the_recovery_point_is_not_a_truncation_after_an_unclean_shutdown() {
    let mut p = nine_segments();
    damage_oldest(&mut p);
    // recovery point at the newest segment's base (offset 32)
    let (d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 32),
        p,
    );
    assert_eq!(m.segments.len(), 9);
    let (s, v) = both(d.path());
    assert_eq!(truncations(&s, &v), (None, None));
    let pr = &v.partitions[0].prediction;
    assert_eq!(
        pr.recovered_segments
            .iter()
            .map(|r| r.segment.clone())
            .collect::<Vec<_>>(),
        [seg(32)]
    );
    assert!(pr.unrecovered_corruption[0].starts_with(&seg(0)));
    let crc = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::CrcMismatch)
        .expect("the damage is still reported");
    assert!(
        crc.broker_behaviour.contains("not noticed on load")
            && crc.broker_behaviour.contains("below the recovery point 32"),
        "{}",
        crc.broker_behaviour
    );
    assert!(!crc.broker_behaviour.contains("truncates"));
}

#[test]
fn crc_damage_after_a_clean_shutdown_is_not_a_truncation() {
    let mut p = nine_segments();
    damage_oldest(&mut p);
    let (d, _m) = write(LogDirBuilder::new(1).clean_shutdown(true), p);
    let (s, v) = both(d.path());
    assert_eq!(truncations(&s, &v), (None, None));
    let crc = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::CrcMismatch)
        .unwrap();
    assert!(
        crc.broker_behaviour.contains("shutdown was clean"),
        "{}",
        crc.broker_behaviour
    );
}

/// The KRaft metadata log is loaded by `KafkaMetadataLog.apply` with recovery point 0
/// and the last shutdown taken as unclean, whatever the log dir's `.kafka_cleanshutdown`
/// says: damage in it truncates at every start and deletes the later segments (a data
/// partition's twin, above, is served as it is after a clean shutdown).
#[test]
fn the_metadata_log_is_recovered_from_zero_even_after_a_clean_shutdown() {
    let pr = Producer::PLAIN;
    let mut p = PartitionBuilder::new("__cluster_metadata", 0).start_time(T0);
    for i in 0..3 {
        if i > 0 {
            p.roll();
        }
        p.append(Batch::new(pr).records(2));
        p.append(Batch::new(pr).records(2));
    }
    damage_oldest(&mut p);
    let (d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(true)
            .recovery_point("__cluster_metadata", 0, 100),
        p,
    );
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    assert_eq!(a, Some((seg(0), m.batches[0].position)));
    assert_eq!(a, b);
    let pred = &v.partitions[0].prediction;
    assert_eq!(pred.deleted_segments.len(), 2, "{pred:#?}");
    let why = format!("{:?}", pred.recovered_segments);
    assert!(
        why.contains("KRaft metadata log is recovered from offset 0"),
        "{why}"
    );
    let crc = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::CrcMismatch)
        .unwrap();
    assert!(
        !crc.broker_behaviour.contains("shutdown was clean"),
        "{}",
        crc.broker_behaviour
    );
}

#[test]
fn crc_damage_at_or_above_the_recovery_point_truncates_and_deletes_later_segments() {
    let mut p = nine_segments();
    damage_oldest(&mut p);
    let (d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 0),
        p,
    );
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    assert_eq!(a, Some((seg(0), m.batches[0].position)));
    assert_eq!(a, b);
    assert_eq!(v.partitions[0].prediction.deleted_segments.len(), 8);
    let crc = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::CrcMismatch)
        .unwrap();
    assert!(
        crc.broker_behaviour
            .contains("deletes the 8 later segments"),
        "{}",
        crc.broker_behaviour
    );
}

#[test]
fn partial_batch_in_the_active_segment_truncates_in_both() {
    let mut p = nine_segments();
    let (_d, m0) = write(LogDirBuilder::new(1), nine_segments());
    let last = m0.batches.last().unwrap();
    let cut = last.position + last.size - 5;
    p.fault(Target::LastLog, FaultKind::Truncate { len: cut });
    let (d, _m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 32),
        p,
    );
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    assert_eq!(a, Some((seg(32), last.position)));
    assert_eq!(a, b);
    let f = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::TruncatedBatch)
        .unwrap();
    assert!(
        f.broker_behaviour.contains("stops here"),
        "{}",
        f.broker_behaviour
    );
}

#[test]
fn garbage_tail_truncates_in_both_and_not_without_it() {
    let mut p = nine_segments();
    p.fault(
        Target::LastLog,
        FaultKind::AppendGarbage(vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3]),
    );
    let (d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 32),
        p,
    );
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    let last = m.batches.last().unwrap();
    assert_eq!(a, Some((seg(32), last.position + last.size)));
    assert_eq!(a, b);
    // undamaged: nothing in either
    let (d, _m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 32),
        nine_segments(),
    );
    let (s, v) = both(d.path());
    assert_eq!(truncations(&s, &v), (None, None));
}

fn remove(dir: &Path, name: &str) {
    std::fs::remove_file(dir.join(name)).unwrap();
}

/// A segment with no offset index is recovered at load whatever the shutdown state
/// (`LogLoader.loadSegmentFiles`): its bad tail is truncated there, and the unclean pass
/// that follows truncates nothing more in it, so no later segment is deleted.
#[test]
fn a_segment_recovered_at_load_deletes_nothing_after_it() {
    let mut p = nine_segments();
    p.fault(
        Target::Log(0),
        FaultKind::AppendGarbage(vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3]),
    );
    let (d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 0),
        p,
    );
    remove(&m.dir, &format!("{:020}.index", 0));
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    let end0 = m.batches[1].position + m.batches[1].size;
    assert_eq!(a, Some((seg(0), end0)));
    assert_eq!(a, b);
    let pr = &v.partitions[0].prediction;
    assert!(pr.deleted_segments.is_empty(), "{:?}", pr.deleted_segments);
    assert_eq!(pr.log_end_offset_after, Some(36));
    let f = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::TrailingBytes)
        .unwrap();
    assert!(
        !f.broker_behaviour.contains("deletes"),
        "{}",
        f.broker_behaviour
    );
}

/// `--max-bytes` keeps every segment's place in the model: damage below the recovery point
/// stays unnoticed on load, as in the full read.
#[test]
fn a_read_limit_does_not_move_the_recovery_point() {
    let mut p = nine_segments();
    damage_oldest(&mut p);
    let (d, _m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 32),
        p,
    );
    for max in [None, Some(200)] {
        let s = scan(
            &[d.path().to_path_buf()],
            &ScanOptions::default().with_max_bytes(max),
        );
        assert_eq!(s.partitions[0].truncation, None, "max_bytes {max:?}");
        let crc = s
            .findings
            .iter()
            .find(|f| f.kind == Kind::CrcMismatch)
            .unwrap();
        assert!(
            crc.broker_behaviour.contains("below the recovery point 32"),
            "{max:?}: {}",
            crc.broker_behaviour
        );
    }
}

/// A `.txnindex` that fails its sanity check (an entry's lastOffset below the segment's base)
/// makes LogLoader recover that segment at load even after a clean shutdown
/// (`TransactionIndex.sanityCheck` → `CorruptIndexException`): both commands truncate its
/// bad tail there, and neither does when the index is sound.
#[test]
fn a_corrupt_txnindex_forces_a_load_time_recovery_in_both() {
    for corrupt in [true, false] {
        let mut p = nine_segments();
        p.fault(
            Target::LastLog,
            FaultKind::AppendGarbage(vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3]),
        );
        let (d, m) = write(LogDirBuilder::new(1).clean_shutdown(true), p);
        let mut e = Vec::new();
        e.extend_from_slice(&0i16.to_be_bytes());
        e.extend_from_slice(&7i64.to_be_bytes());
        let (first, last) = if corrupt { (1i64, 5i64) } else { (32, 33) };
        e.extend_from_slice(&first.to_be_bytes());
        e.extend_from_slice(&last.to_be_bytes());
        e.extend_from_slice(&first.to_be_bytes());
        std::fs::write(m.dir.join(format!("{:020}.txnindex", 32)), &e).unwrap();
        let (s, v) = both(d.path());
        let (a, b) = truncations(&s, &v);
        assert_eq!(a, b, "corrupt {corrupt}");
        assert_eq!(a.is_some(), corrupt, "corrupt {corrupt}: {a:?}");
    }
}

/// Damage in a `-delete` copy is never recovered (LogLoader skips `recoverLog` for it): no
/// truncation, and the wording says why, not "below the recovery point".
#[test]
fn damage_in_a_delete_copy_is_never_recovered() {
    let mut p = nine_segments();
    damage_oldest(&mut p);
    let (d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("nine", 0, 0),
        p,
    );
    let del = m
        .dir
        .with_file_name("nine-0.0123456789abcdef0123456789abcdef-delete");
    std::fs::rename(&m.dir, &del).unwrap();
    let s = scan(&[d.path().to_path_buf()], &ScanOptions::default());
    assert_eq!(s.partitions.len(), 1);
    assert_eq!(s.partitions[0].truncation, None);
    let crc = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::CrcMismatch)
        .expect("the copy's damage is still reported");
    assert!(
        crc.broker_behaviour.contains("-delete copy"),
        "{}",
        crc.broker_behaviour
    );
}

/// `LogLoader` compares the log start checkpoint with the last segment's
/// `readNextOffset`, which frames batch headers without a CRC check: after a clean shutdown
/// a damaged batch inside that (unrecovered) segment does not end the log there, so a log
/// start of 4 below the framed end 6 empties nothing. (Recovered, the segment would end
/// at the damage and the log be emptied: the twin.)
#[test]
fn a_damaged_batch_in_an_unrecovered_last_segment_does_not_end_the_log_for_the_log_start_check() {
    let build = |damage_at: Option<u64>| {
        let mut p = PartitionBuilder::new("ls", 0).start_time(T0);
        for _ in 0..6 {
            p.append(Batch::new(Producer::idempotent(3, 0)).records(1));
        }
        if let Some(position) = damage_at {
            p.fault(
                Target::Log(0),
                FaultKind::FlipByte {
                    position,
                    mask: 0x20,
                },
            );
        }
        p
    };
    let ld = |clean: bool| {
        LogDirBuilder::new(1)
            .clean_shutdown(clean)
            .recovery_point("ls", 0, if clean { 6 } else { 0 })
            .log_start_offset("ls", 0, 4)
    };
    let (_d, m) = write(ld(true), build(None));
    let inside_batch_1 = m.batches[1].position + 70;
    let (d, _m) = write(ld(true), build(Some(inside_batch_1)));
    let (_, v) = both(d.path());
    let p = &v.partitions[0].prediction;
    assert!(p.deleted_segments.is_empty(), "{p:#?}");
    assert_eq!(p.log_end_offset_after, Some(6), "{p:#?}");
    let (d, _m) = write(ld(false), build(Some(inside_batch_1)));
    let (_, v) = both(d.path());
    let p = &v.partitions[0].prediction;
    assert_eq!(p.log_end_offset_after, Some(4), "{p:#?}");
}

/// Four batches of about 5 KB, the last re-using offset 1 where recovery appends an index
/// entry (`OffsetIndex.append` → `InvalidOffsetException`).
fn regression_at_an_index_point() -> PartitionBuilder {
    let pr = Producer::idempotent(7, 0);
    let mut p = PartitionBuilder::new("reg", 0).start_time(T0);
    for _ in 0..3 {
        p.append(Batch::new(pr).values([vec![7u8; 5000]]));
    }
    p.append(
        Batch::new(Producer::PLAIN)
            .values([vec![8u8; 5000]])
            .tweak(|s| s.base_offset = 1),
    );
    p
}

/// `InvalidOffsetException` in `recoverLog` (unclean shutdown) empties the segment; in a
/// recovery run at load for a missing offset index (`LogLoader.loadSegmentFiles`, which
/// catches nothing around it) it fails the load: no truncation then, and the broker does
/// not start (`LogLoaderTest`'s RuntimeException path).
#[test]
fn invalid_offset_at_load_fails_the_load_and_in_recover_log_empties_the_segment() {
    let (d, _m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("reg", 0, 0),
        regression_at_an_index_point(),
    );
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    assert_eq!(a, Some((seg(0), 0)));
    assert_eq!(a, b);
    assert!(v.partitions[0].prediction.load_failure.is_none());
    let (d, m) = write(
        LogDirBuilder::new(1).clean_shutdown(true),
        regression_at_an_index_point(),
    );
    let index = m.dir.join("00000000000000000000.index");
    if index.exists() {
        std::fs::remove_file(&index).unwrap();
    }
    let (s, v) = both(d.path());
    assert_eq!(truncations(&s, &v), (None, None));
    let f = v.partitions[0]
        .prediction
        .load_failure
        .as_ref()
        .expect("the load fails");
    assert_eq!(f.exception, "InvalidOffsetException", "{f:?}");
    assert!(f.message.contains("loadSegmentFiles"), "{f:?}");
    assert!(
        !s.findings
            .iter()
            .any(|f| f.kind == Kind::TruncationBelowHighWatermark),
        "{:#?}",
        s.findings
    );
}

/// `LogSegment.recover` also appends to the time index at each index point
/// (`timeIndex.maybeAppend(maxTimestampSoFar, shallowOffsetOfMaxTimestampSoFar)`), which
/// throws `InvalidOffsetException` for an offset below its last entry's: a later batch with
/// a lower last offset carrying a new maximum timestamp empties the segment after an
/// unclean shutdown, though the offset index's own check passes. The twin without the new
/// maximum (its timestamp below the last entry's) keeps the segment.
#[test]
fn the_time_index_offset_check_of_recovery_empties_the_segment() {
    let build = |ts_at_7: i64| {
        let mut p = PartitionBuilder::new("ti", 0).start_time(T0);
        let spec = |offset: i64, ts: i64, big: bool| {
            let v = if big { vec![1u8; 5000] } else { vec![1u8; 10] };
            Batch::new(Producer::PLAIN).values([v]).tweak(move |s| {
                s.base_offset = offset;
                s.base_timestamp = ts;
                s.overrides.max_timestamp = Some(ts);
            })
        };
        p.append(spec(0, T0 + 1, true));
        p.append(spec(10, T0 + 5, false));
        p.append(spec(7, ts_at_7, true));
        p.append(spec(20, T0, false));
        p.roll();
        p.append(Batch::new(Producer::PLAIN).values(["next"]));
        p
    };
    let ld = || {
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ti", 0, 0)
    };
    let (d, _m) = write(ld(), build(T0 + 9));
    let (s, v) = both(d.path());
    let (a, b) = truncations(&s, &v);
    assert_eq!(a, Some((seg(0), 0)), "{:#?}", v.partitions[0].prediction);
    assert_eq!(a, b);
    let reason = &v.partitions[0]
        .prediction
        .truncation
        .as_ref()
        .unwrap()
        .reason;
    assert!(
        reason.contains("time index") && reason.contains("InvalidOffsetException"),
        "{reason}"
    );
    assert_eq!(v.partitions[0].prediction.deleted_segments.len(), 1);
    let (d, _m) = write(ld(), build(T0 + 3));
    let (s, v) = both(d.path());
    assert_eq!(truncations(&s, &v), (None, None));
}

/// `UnifiedLog`'s constructor raises the recovery point to the local log start
/// (`updateLocalLogStartOffset(max(logStartOffset, first segment base))`): a log whose
/// first segment is based at 100, loaded after an unclean shutdown with recovery point 0,
/// is left with recovery point 100, not 0. Twin: based at 0, it stays 0.
#[test]
fn the_recovery_point_after_load_is_raised_to_the_local_log_start() {
    for (start, want) in [(100, 100), (0, 0)] {
        let mut p = PartitionBuilder::new("rp", 0)
            .start_offset(start)
            .start_time(T0);
        p.append(Batch::new(Producer::idempotent(3, 0)).records(2));
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("rp", 0, 0);
        let (d, _m) = write(ld, p);
        let (_, v) = both(d.path());
        let pr = &v.partitions[0].prediction;
        assert_eq!(pr.recovery_point_after, Some(want), "{pr:#?}");
    }
}

/// After a clean shutdown nothing recovers the last segment, but the load reads its end
/// (`recoverLog` → `deleteSegmentsIfLogStartGreaterThanLogEnd` → `readNextOffset`): a zero
/// tail of 18 bytes or more has a size field below 14, `FileLogInputStream.nextBatch`
/// throws `CorruptRecordException`, and the load fails. Twins: a tail of 17 bytes or less
/// ends the read quietly; after an unclean shutdown recovery truncates the tail first.
#[test]
fn a_zero_tail_read_at_load_after_a_clean_shutdown_fails_the_load() {
    let build = |zeros: u64| {
        let mut p = PartitionBuilder::new("zt", 0).start_time(T0);
        p.append(Batch::new(Producer::idempotent(3, 0)).records(2));
        p.fault(Target::LastLog, FaultKind::AppendZeros(zeros));
        p
    };
    let (d, _m) = write(LogDirBuilder::new(1).clean_shutdown(true), build(100));
    let (_, v) = both(d.path());
    let f = v.partitions[0]
        .prediction
        .load_failure
        .as_ref()
        .expect("the load fails");
    assert_eq!(
        (f.exception.as_str(), f.kind.as_str()),
        ("CorruptRecordException", "preallocated_tail"),
        "{f:?}"
    );
    assert!(f.message.contains("readNextOffset"), "{f:?}");
    // The scan's finding says so too.
    let (s, _) = both(d.path());
    let tail = s
        .findings
        .iter()
        .find(|f| f.kind == Kind::PreallocatedTail)
        .unwrap();
    assert!(
        tail.broker_behaviour.contains("the broker does not start"),
        "{}",
        tail.broker_behaviour
    );
    let (d, _m) = write(LogDirBuilder::new(1).clean_shutdown(true), build(17));
    let (_, v) = both(d.path());
    assert!(
        v.partitions[0].prediction.load_failure.is_none(),
        "{:#?}",
        v.partitions[0].prediction
    );
    let (d, _m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("zt", 0, 0),
        build(100),
    );
    let (s, v) = both(d.path());
    assert!(v.partitions[0].prediction.load_failure.is_none());
    assert!(truncations(&s, &v).1.is_some());
}

/// A recovery point of `Long.MAX_VALUE` (a hand-edited checkpoint: the trick to skip
/// recovery) after an unclean shutdown: `LogLoader.recoverLog` asks
/// `LogSegments.values(MAX, MAX)`, an empty range (`from == to`), so no segment is
/// recovered and the partial batch in the active segment is not truncated — in both
/// commands. Its twin, a recovery point past the last base but below `MAX`, starts at
/// the last segment (`floorKey`) and truncates there.
#[test]
fn a_recovery_point_of_long_max_recovers_no_segment() {
    let (_d, m0) = write(LogDirBuilder::new(1), nine_segments());
    let last = m0.batches.last().unwrap().clone();
    let cut = last.position + last.size - 5;
    for (rp, truncated) in [(i64::MAX, false), (1_000, true)] {
        let mut p = nine_segments();
        p.fault(Target::LastLog, FaultKind::Truncate { len: cut });
        let (d, _m) = write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("nine", 0, rp),
            p,
        );
        let (s, v) = both(d.path());
        let (a, b) = truncations(&s, &v);
        assert_eq!(a, b, "rp {rp}");
        let want = truncated.then(|| (seg(32), last.position));
        assert_eq!(a, want, "rp {rp}");
        let f = s
            .findings
            .iter()
            .find(|f| f.kind == Kind::TruncatedBatch)
            .unwrap();
        assert_eq!(
            f.broker_behaviour.contains("Long.MAX_VALUE"),
            !truncated,
            "rp {rp}: {}",
            f.broker_behaviour
        );
        if !truncated {
            assert!(
                v.partitions[0].prediction.recovered_segments.is_empty(),
                "{:?}",
                v.partitions[0].prediction.recovered_segments
            );
        }
    }
}
