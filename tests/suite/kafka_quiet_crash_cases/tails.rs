//! The end of the active segment after a crash: zeros of a preallocated segment
//! (`log.preallocate=true`), a just-rolled segment holding nothing yet, a last batch the
//! crash cut short (a torn write). `LogSegment.recover` reads the batches with
//! `FileLogInputStream.nextBatch`, which ends the read at a partial entry (fewer bytes left
//! than its size field says, or than a header) and throws `CorruptRecordException` at a
//! size field below 14 (zeros), which `recover` catches; either way the segment is cut
//! after the last whole valid batch (`log.truncateTo(validBytes)`), and `recoverLog` logs
//! "Corruption found in segment …, truncating to offset …" at WARN and deletes any later
//! segment (there is none: the active segment is the last).

use super::{Crashed, busy_log, crash, crash_files, file, from_floor, recovered, seg, set_len};
use crate::kafka_valid_data_quiet_cases::lines;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::LogDirBuilder;
use klogscan::testkit::files::encode_snapshot;

/// What the load predicts when it cuts the active segment's tail: the segment recovered,
/// truncated at `position` to offset `offset`, `removed` bytes gone, nothing deleted, no
/// failure, the log ending at `offset` with the recovery point bounded by it.
fn assert_cut(c: &Crashed, position: u64, offset: i64, removed: u64, first: Option<i64>) {
    let m = c.manifest_of("orders");
    let active = m.segments.last().unwrap().0;
    let v = c.part("orders");
    let p = &v.prediction;
    assert!(recovered(v).contains(&seg(active)), "{:?}", recovered(v));
    let t = p.truncation.as_ref().expect("the tail is cut");
    assert_eq!(
        (
            t.segment.as_str(),
            t.position,
            t.offset,
            t.bytes_removed,
            t.first_removed_offset
        ),
        (seg(active).as_str(), position, offset, removed, first),
        "{t:#?}"
    );
    assert!(p.deleted_segments.is_empty(), "{:?}", p.deleted_segments);
    assert!(p.load_failure.is_none(), "{:#?}", p.load_failure);
    assert!(p.unrecovered_corruption.is_empty(), "{p:#?}");
    assert_eq!(p.log_end_offset_after, Some(offset));
    assert!(p.recovery_point_after.is_some_and(|r| r <= offset));
}

/// The busy log crashed with the high-watermark checkpoint at `hw`, the recovery point 3
/// offsets behind the log end, and `tail` applied to the active segment's `.log` (given its
/// path and the last batch's position, size and base offset).
fn torn(hw_behind: i64, tail: impl FnOnce(&std::path::Path, u64, u64)) -> Crashed {
    let p = busy_log("orders");
    let leo = p.log_end_offset();
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("orders", 0, leo - 3)
        .high_watermark("orders", 0, leo - hw_behind)
        .partition(p);
    crash(ld, |_, lm| {
        let m = &lm.partitions[0];
        let last = m.batches.last().unwrap();
        tail(&m.segments.last().unwrap().1, last.position, last.size);
        crash_files(m, last.position);
    })
}

/// `LogSegmentTest.testCreateWithInitFileSizeAppendMessage`: a segment opened with
/// `preallocate` (`FileRecords.open` sets the file to `initFileSize`, here
/// `segment.bytes`) takes appends at the front of the zeros; only a close trims it
/// (`testCreateWithInitFileSizeClearShutdown`). After a crash the load opens the file whole
/// (`LogLoader.loadSegmentFiles` → `LogSegment.open` without `preallocate`), and
/// `recoverLog` recovers the active segment: the zeros end the read with
/// `CorruptRecordException` (size 0 below 14), and `recover` truncates them, so the log
/// keeps every batch. `preallocated_tail` is info and nothing is at warning or above.
#[test]
fn preallocated_active_segment_after_a_crash() {
    let p = busy_log("orders");
    let leo = p.log_end_offset();
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("orders", 0, leo - 4)
        .high_watermark("orders", 0, leo - 1)
        .partition(p);
    let mut end = 0;
    let c = crash(ld, |_, lm| {
        let path = &lm.partitions[0].segments.last().unwrap().1;
        end = std::fs::metadata(path).unwrap().len();
        set_len(path, 1400);
    });
    assert!(end < 1400 - 18);
    c.assert_quiet();
    let pre: Vec<_> = (c.scan.findings.iter())
        .filter(|f| f.kind == Kind::PreallocatedTail)
        .collect();
    assert_eq!(pre.len(), 1, "{:#?}", lines(&c.scan.findings));
    assert_eq!(pre[0].severity, Severity::Info);
    assert_cut(&c, end, leo, 1400 - end, None);
    let v = c.part("orders");
    assert_eq!(v.prediction.recovery_point_after, Some(leo - 4));
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(leo));
}

/// `LogLoaderTest.testRecoverWithEmptyActiveSegment` as a preallocating broker leaves it:
/// the roll to `leo` created the new segment's `.log` at `segment.bytes` of zeros
/// (`LocalLog.roll` → `LogSegment.open(…, preallocate)`), a flush materialised its offset
/// and time indexes at their preallocated length (`LazyIndex` → `AbstractIndex`), the roll
/// took the producer snapshot at `leo` and trimmed the previous segment's indexes
/// (`onBecomeInactiveSegment`); then the broker died with the recovery point still in the
/// previous segment. `recoverLog` recovers both; the empty one is cut to zero bytes (its
/// zeros throw at once), which ends the log at its base, `leo`: every batch kept.
#[test]
fn just_rolled_preallocated_segment_holding_nothing() {
    let p = busy_log("orders");
    let leo = p.log_end_offset();
    let state = encode_snapshot(&p.producer_state());
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("orders", 0, leo - 4)
        .high_watermark("orders", 0, leo)
        .partition(p);
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    let m = &manifest.partitions[0];
    std::fs::write(m.dir.join(file(leo, "snapshot")), state).unwrap();
    std::fs::write(m.dir.join(seg(leo)), vec![0; 1400]).unwrap();
    std::fs::write(m.dir.join(file(leo, "index")), b"").unwrap();
    set_len(&m.dir.join(file(leo, "index")), super::OFFSET_INDEX_BYTES);
    std::fs::write(m.dir.join(file(leo, "timeindex")), b"").unwrap();
    set_len(&m.dir.join(file(leo, "timeindex")), super::TIME_INDEX_BYTES);
    let (scan, verify) = crate::kafka_valid_data_quiet_cases::check_dir(dir.path());
    let c = Crashed {
        _dir: dir,
        manifest,
        scan,
        verify,
    };
    c.assert_quiet();
    let v = c.part("orders");
    let mut want = from_floor(c.manifest_of("orders"), leo - 4);
    want.push(seg(leo));
    assert_eq!(recovered(v), want);
    let t = v.prediction.truncation.as_ref().expect("the zeros are cut");
    assert_eq!(
        (t.segment.clone(), t.position, t.offset),
        (seg(leo), 0, leo)
    );
    assert_eq!(t.bytes_removed, 1400);
    assert!(v.prediction.deleted_segments.is_empty());
    assert!(v.prediction.load_failure.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(leo));
}

/// The damage findings (`crc_mismatch`, `truncated_batch`, `trailing_bytes`) of `scan` and
/// `verify`, each with its severity.
fn damage(c: &Crashed) -> Vec<(&'static str, Kind, Severity)> {
    let is = |k: Kind| {
        matches!(
            k,
            Kind::CrcMismatch | Kind::TruncatedBatch | Kind::TrailingBytes
        )
    };
    let scan = (c.scan.findings.iter()).map(|f| ("scan", f));
    let verify = c.verify.findings().map(|f| ("verify", f));
    scan.chain(verify)
        .filter(|(_, f)| is(f.kind))
        .map(|(who, f)| (who, f.kind, f.severity))
        .collect()
}

/// A power loss in the middle of the last append (the page cache had written the first
/// pages of the batch, not the rest): the file ends 20 bytes short of the batch its header
/// declares. `FileLogInputStream.nextBatch` returns no batch there (fewer bytes left than
/// `LOG_OVERHEAD + size`), so `LogSegment.recover` stops after the previous batch and
/// truncates the partial one (`LogSegmentTest.testRecoveryWithCorruptMessage` truncates at
/// the first batch that does not read whole the same way). The batch's offsets are above
/// the checkpointed high watermark: nothing acknowledged is removed. The prediction agrees.
#[test]
fn torn_last_batch_above_the_high_watermark_is_cut() {
    let mut cut = (0, 0);
    let c = torn(6, |path, position, size| {
        set_len(path, position + size - 20);
        cut = (position, size);
    });
    let leo = c.manifest_of("orders").log_end_offset;
    assert_cut(&c, cut.0, leo - 3, cut.1 - 20, Some(leo - 3));
    let v = c.part("orders");
    assert_eq!(v.prediction.recovery_point_after, Some(leo - 3));
    assert!(
        (c.scan.findings.iter()).all(|f| f.kind != Kind::TruncationBelowHighWatermark),
        "nothing below the high watermark is removed"
    );
    // the records before the torn batch draw nothing
    let others: Vec<_> = (c.scan.findings.iter())
        .filter(|f| f.severity >= Severity::Warning && f.kind != Kind::TruncatedBatch)
        .collect();
    assert!(others.is_empty(), "{:#?}", lines(others));
}

/// The same torn write, its severity: Kafka's load handles it as a routine end of the
/// active segment (no exception: `nextBatch` returns null; `recoverLog` logs at WARN
/// "Corruption found in segment …, truncating to offset …") and the batch lies above the
/// checkpointed high watermark, so no acknowledged record is lost — klogscan's own decision
/// for such a truncation is "let it truncate" (`src/report/decision.rs`). An error is more
/// than that justifies: at most a warning, in `scan` and `verify` alike.
#[test]
fn torn_last_batch_above_the_high_watermark_is_at_most_a_warning() {
    let c = torn(6, |path, position, size| {
        set_len(path, position + size - 20)
    });
    let d = damage(&c);
    assert!(!d.is_empty());
    assert!(d.iter().all(|x| x.2 <= Severity::Warning), "{d:?}");
}

/// The crash cut the last append after its first ten bytes: fewer than a header
/// (`HEADER_SIZE_UP_TO_MAGIC`, 17), so `nextBatch` returns no batch and recovery cuts
/// the ten bytes. klogscan calls them `trailing_bytes`, a warning (no error), and
/// predicts the cut at the batch's position, ending the log at its base offset.
#[test]
fn torn_header_fragment_is_cut_with_a_warning_at_most() {
    let mut at = 0;
    let c = torn(6, |path, position, _| {
        set_len(path, position + 10);
        at = position;
    });
    let leo = c.manifest_of("orders").log_end_offset;
    assert_cut(&c, at, leo - 3, 10, None);
    let d = damage(&c);
    assert!(d.iter().any(|x| x.1 == Kind::TrailingBytes), "{d:?}");
    assert!(d.iter().all(|x| x.2 <= Severity::Warning), "{d:?}");
}

/// A torn write into a preallocated segment (`log.preallocate=true`): the page holding the
/// last batch's header reached the disk, the rest of the batch did not, so its body reads
/// as the file's zeros up to the preallocated end. `LogSegment.recover` →
/// `batch.ensureValid()` throws `CorruptRecordException` (CRC), caught: the segment is cut
/// before the batch, every earlier batch kept. The batch lies above the checkpointed high
/// watermark and only zeros follow it: the same routine end of a crashed active segment as
/// a partial batch, which Kafka handles with the same WARN; an error is more than that
/// justifies.
#[test]
fn torn_write_into_preallocated_zeros_is_at_most_a_warning() {
    let mut cut = 0;
    let c = torn(6, |path, position, _| {
        let mut data = std::fs::read(path).unwrap();
        data.truncate(position as usize + 61);
        data.resize(1400, 0);
        std::fs::write(path, data).unwrap();
        cut = position;
    });
    let leo = c.manifest_of("orders").log_end_offset;
    let size = 1400 - cut;
    assert_cut(&c, cut, leo - 3, size, Some(leo - 3));
    let d = damage(&c);
    assert!(!d.is_empty());
    assert!(d.iter().all(|x| x.2 <= Severity::Warning), "{d:?}");
}

/// Near miss: the high-watermark checkpoint already covered the torn batch (followers had
/// fetched it from the page cache before the power loss; this copy's disk never got it).
/// The cut removes acknowledged offsets from this copy, which is what klogscan's error
/// is for: it stays.
#[test]
fn torn_last_batch_below_the_high_watermark_stays_an_error() {
    let c = torn(0, |path, position, size| {
        set_len(path, position + size - 20)
    });
    let d = damage(&c);
    assert!(d.iter().any(|x| x.2 == Severity::Error), "{d:?}");
    // The cut removes offsets the checkpoint says were committed on this copy: past the
    // walked log end (the torn batch's), up to the high watermark.
    let kinds: Vec<Kind> = c.verify.findings().map(|f| f.kind).collect();
    assert!(
        kinds.contains(&Kind::TruncationBelowHighWatermark),
        "{kinds:?}"
    );
}
