//! `LogLoaderTest` (core/src/test/scala/unit/kafka/log/LogLoaderTest.scala), round 2: the
//! cases the first audits left out (docs/testing.md lists the others), each rebuilt as the
//! files the test leaves in the partition directory before its next load, and held against
//! what `LogLoader.load` (storage/.../internals/log/LogLoader.java) does with them —
//! `loadSegmentFiles` (a missing offset index recovers the segment whatever the shutdown; a
//! missing time index does not), `recoverLog` (after an unclean shutdown, every segment from
//! the one holding the recovery point, `LogSegments.values(recoveryPoint, MAX)`; the new
//! recovery point is the old one bounded by the log end), `removeTempFilesAndCollectSwapFiles`
//! (`.deleted` files go) — and `LogManager.loadLogs` (`.kafka_cleanshutdown` present means a
//! clean shutdown, whatever it holds).
#![cfg(feature = "testkit")]

use crate::common::cases::recovered;
use klogscan::request::{self, Request};
use klogscan::testkit::{
    Batch, FaultKind, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
    Target,
};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

// ----- helpers ----------------------------------------------------------------------------

fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

fn file(base: i64, ext: &str) -> String {
    format!("{base:020}.{ext}")
}

fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Verify the only partition under `input` as the CLI does.
fn verify_at(input: &Path) -> PartitionVerification {
    let a = request::verify(&Request::new([input]), None).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

fn verify(m: &Manifest) -> PartitionVerification {
    verify_at(m.dir.parent().unwrap())
}

/// The segments recovered, each once, in order (Kafka may recover one twice: at
/// `loadSegmentFiles` for a missing index, then again in `recoverLog`).
fn recovered_once(v: &PartitionVerification) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in recovered(v) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// An unclean log dir whose recovery point for `ll-0` is 0 (`LogLoaderTest.createLog`'s
/// default; the testkit's is the log end).
fn unclean_from_0() -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ll", 0, 0)
}

/// `(log end, recovery point)` after the predicted load.
fn ends(v: &PartitionVerification) -> (Option<i64>, Option<i64>) {
    let p = &v.prediction;
    (p.log_end_offset_after, p.recovery_point_after)
}

/// Nothing truncated, deleted or failing in the predicted load.
fn assert_whole(v: &PartitionVerification) {
    let p = &v.prediction;
    assert!(p.truncation.is_none(), "{:#?}", p.truncation);
    assert!(p.deleted_segments.is_empty(), "{:?}", p.deleted_segments);
    assert!(p.load_failure.is_none(), "{:#?}", p.load_failure);
    assert!(p.outcome_unknown.is_none(), "{:?}", p.outcome_unknown);
}

/// The log of `testLogRecoversToCorrectOffset` and `testRecoverWithEmptyActiveSegment`:
/// `n` single-record batches of 100-byte values, 10 ms apart, in segments of 700 bytes with
/// an index entry every 300 bytes.
fn hundred_byte_messages(n: usize) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("ll", 0)
        .time_step(10)
        .segment_bytes(700)
        .broker_files(PartitionFileOptions::default().index_interval(300));
    for i in 0..n {
        p.append(Batch::new(Producer::PLAIN).values([vec![b'a' + (i % 26) as u8; 100]]));
    }
    p
}

/// Write the empty segment at `base` a roll leaves: its `.log` only (the indexes are
/// created lazily), or with the empty `.index` and `.timeindex` a flush creates.
fn empty_active_segment(m: &Manifest, base: i64, with_indexes: bool) {
    std::fs::write(m.dir.join(seg(base)), b"").unwrap();
    if with_indexes {
        for ext in ["index", "timeindex"] {
            std::fs::write(m.dir.join(file(base, ext)), b"").unwrap();
        }
    }
}

// ----- recovery point and active segment ----------------------------------------------------

/// `LogLoaderTest.testLogRecoversToCorrectOffset`: 100 messages, closed, reopened after an
/// unclean shutdown twice. With the recovery point at the log end (100) only the segment
/// holding it, the last, is recovered (`LogSegments.values(100, MAX)` starts at its floor)
/// and the recovery point stays 100; with the recovery point 10, every segment from the one
/// holding offset 10 is recovered and the recovery point stays 10 ("not updated after an
/// unclean shutdown until the log is flushed"). Both reload all 100 messages, the indexes
/// as they were.
#[test]
fn log_recovers_to_correct_offset() {
    for point in [100, 10] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ll", 0, point);
        let (_d, m) = write(ld, hundred_byte_messages(100));
        assert!(m.segments.len() > 3, "{}", m.segments.len());
        let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
        let floor = bases.iter().rposition(|&b| b <= point).unwrap();
        let v = verify(&m);
        assert_whole(&v);
        assert_eq!(
            recovered_once(&v),
            bases[floor..].iter().map(|&b| seg(b)).collect::<Vec<_>>(),
            "recovery point {point}"
        );
        assert_eq!(ends(&v), (Some(100), Some(point)));
        assert!(v.prediction.unrecovered_corruption.is_empty());
    }
}

/// `LogLoaderTest.testRecoverWithEmptyActiveSegment`, first load: 100 messages, a roll
/// leaves an empty active segment at 100 whose indexes were never created (its
/// `sanityCheck` throws `NoSuchFileException`), then an unclean shutdown with the recovery
/// point 100. `loadSegmentFiles` recovers that segment (creating its indexes) and so does
/// `recoverLog`; no other segment is recovered; the log ends at 100, the recovery point
/// stays 100, and no segment is opened (the empty one is the active segment).
#[test]
fn recover_with_empty_active_segment_missing_its_indexes() {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ll", 0, 100);
    let (_d, m) = write(ld, hundred_byte_messages(100));
    empty_active_segment(&m, 100, false);
    let v = verify(&m);
    assert_whole(&v);
    assert_eq!(recovered_once(&v), [seg(100)]);
    assert_eq!(ends(&v), (Some(100), Some(100)));
    assert_eq!(v.prediction.created_segment, None);
}

/// `LogLoaderTest.testRecoverWithEmptyActiveSegment`, second load: 200 messages, a roll and
/// a flush (which creates the empty active segment's empty indexes), an unclean shutdown
/// with the recovery point 200: only the empty segment at 200 is recovered (by
/// `recoverLog`), the log ends at 200, the recovery point stays 200. Near miss: after a
/// clean shutdown nothing is recovered and the recovery point is the log end.
#[test]
fn recover_with_empty_active_segment_after_a_flush() {
    for clean in [false, true] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(clean)
            .recovery_point("ll", 0, 200);
        let (_d, m) = write(ld, hundred_byte_messages(200));
        empty_active_segment(&m, 200, true);
        let v = verify(&m);
        assert_whole(&v);
        let want: &[String] = if clean { &[] } else { &[seg(200)] };
        assert_eq!(recovered_once(&v), want, "clean {clean}");
        assert_eq!(ends(&v), (Some(200), Some(200)));
    }
}

/// The empty active segment of `testRecoverWithEmptyActiveSegment` without its indexes,
/// after a clean shutdown: `loadSegmentFiles` recovers it whatever the shutdown (the
/// `NoSuchFileException` of its `sanityCheck`), and nothing else; the log still ends at 100
/// and, the shutdown clean, the recovery point is the log end.
#[test]
fn an_empty_active_segment_without_indexes_is_recovered_after_a_clean_shutdown_too() {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(true)
        .recovery_point("ll", 0, 40);
    let (_d, m) = write(ld, hundred_byte_messages(100));
    empty_active_segment(&m, 100, false);
    let v = verify(&m);
    assert_whole(&v);
    assert_eq!(recovered_once(&v), [seg(100)]);
    assert_eq!(ends(&v), (Some(100), Some(100)));
}

// ----- rebuilt indexes, corrupt tails, truncation leftovers ---------------------------------

/// The log of `testReopenThenTruncate`: 100 single-record batches "test", five to a segment
/// (bases 0, 5, …, 95), `index.interval.bytes` 10000 (empty offset indexes).
fn five_per_segment() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("ll", 0)
        .time_step(0)
        .broker_files(PartitionFileOptions::default().index_interval(10_000));
    for i in 0..100 {
        if i > 0 && i % 5 == 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values(["test"]));
    }
    p
}

/// `LogLoaderTest.testReopenThenTruncate`, the reopening: 20 segments closed, reopened
/// after an unclean shutdown with no recovery point (0): every segment is recovered, none
/// truncated, the log ends at 100 and the recovery point stays 0. (The truncation to 3 that
/// follows is a live call; its leftovers are the next test.)
#[test]
fn reopen_then_truncate_reopens_every_segment() {
    let (_d, m) = write(unclean_from_0(), five_per_segment());
    assert_eq!(m.segments.len(), 20);
    let v = verify(&m);
    assert_whole(&v);
    assert_eq!(
        recovered_once(&v),
        (0..20).map(|i| seg(5 * i)).collect::<Vec<_>>()
    );
    assert_eq!(ends(&v), (Some(100), Some(0)));
}

/// `LogLoaderTest.testReopenThenTruncate`, what `truncateTo(3)` leaves when the broker dies
/// before `file.delete.delay.ms` passes: segment 0 cut to offsets 0–2, the 19 later
/// segments renamed `.deleted` (`LocalLog.truncateTo` → `deleteSegmentFiles`, asynchronous),
/// their snapshots gone, and the recovery-point checkpoint still at the old end 100. The
/// next load deletes every `.deleted` file (`removeTempFilesAndCollectSwapFiles`), keeps one
/// segment, recovers it (the floor of 100), and ends the log at 3 with the recovery point
/// bounded to 3 (`recoverLog`: `min(recoveryPoint, logEnd)`).
#[test]
fn reopen_then_truncate_leftovers_load_as_one_segment_ending_at_3() {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ll", 0, 100);
    let (_d, m) = write(ld, five_per_segment());
    let cut = m.batches[3].position;
    let first = m.dir.join(seg(0));
    let bytes = std::fs::read(&first).unwrap();
    std::fs::write(&first, &bytes[..cut as usize]).unwrap();
    let mut renamed = Vec::new();
    for entry in std::fs::read_dir(&m.dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(base) = name.split('.').next().and_then(|b| b.parse::<i64>().ok()) else {
            continue;
        };
        if name.ends_with(".snapshot") && base > 3 {
            std::fs::remove_file(m.dir.join(&name)).unwrap();
        } else if base >= 5 {
            let to = format!("{name}.deleted");
            std::fs::rename(m.dir.join(&name), m.dir.join(&to)).unwrap();
            renamed.push(to);
        }
    }
    renamed.sort();
    assert_eq!(renamed.len(), 19 * 3, "{renamed:?}");
    let v = verify(&m);
    assert_whole(&v);
    let mut gone: Vec<String> = v
        .prediction
        .leftovers
        .iter()
        .filter(|l| l.file.ends_with(".deleted"))
        .map(|l| l.file.clone())
        .collect();
    gone.sort();
    assert_eq!(gone, renamed);
    assert_eq!(recovered_once(&v), [seg(0)]);
    assert_eq!(ends(&v), (Some(3), Some(3)));
}

/// `LogLoaderTest.testCorruptLog` (one of its ten random rounds, fixed): 70 messages in
/// segments of 1000 bytes, an index entry per message; nonsense appended to the active
/// segment's `.log` and `.index`; an unclean shutdown with the recovery point 50. Every
/// segment from the one holding 50 is recovered; the active one is truncated where the
/// nonsense starts (the indexes rebuilt), nothing else is deleted, and all 70 messages
/// remain: the log ends at 70, the recovery point stays 50.
#[test]
fn corrupt_log_keeps_every_message() {
    for (index_junk, log_junk) in [(13usize, 100usize), (16, 1), (1, 1024)] {
        let mut p = PartitionBuilder::new("ll", 0)
            .time_step(0)
            .segment_bytes(1000)
            .broker_files(PartitionFileOptions::default().index_interval(1));
        for _ in 0..70 {
            p.append(Batch::new(Producer::PLAIN).values(["test"]));
        }
        p.fault(
            Target::LastLog,
            FaultKind::AppendGarbage(vec![0xAB; log_junk]),
        );
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ll", 0, 50);
        let (_d, m) = write(ld, p);
        let index = m.dir.join(file(m.segments.last().unwrap().0, "index"));
        let junk = FaultKind::AppendGarbage(vec![0xCD; index_junk]);
        klogscan::testkit::scenario::apply_fault(&index, &junk).unwrap();
        let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
        let floor = bases.iter().rposition(|&b| b <= 50).unwrap();
        let (last_base, last_path) = m.segments.last().unwrap().clone();
        let len = std::fs::metadata(&last_path).unwrap().len();
        let v = verify(&m);
        let pr = &v.prediction;
        assert_eq!(
            recovered_once(&v),
            bases[floor..].iter().map(|&b| seg(b)).collect::<Vec<_>>()
        );
        let t = pr.truncation.as_ref().expect("the nonsense is truncated");
        assert_eq!(
            (t.segment.as_str(), t.position, t.bytes_removed),
            (
                seg(last_base).as_str(),
                len - log_junk as u64,
                log_junk as u64
            ),
            "{index_junk}/{log_junk}"
        );
        assert!(pr.deleted_segments.is_empty(), "{:?}", pr.deleted_segments);
        assert!(pr.load_failure.is_none(), "{:#?}", pr.load_failure);
        assert_eq!(ends(&v), (Some(70), Some(50)));
    }
}

/// The log of `testIndexRebuild`: 200 single-record batches of 10-byte values in segments
/// of 200 bytes, an index entry per batch, 10 ms apart.
fn two_hundred_small_messages() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("ll", 0)
        .time_step(10)
        .segment_bytes(200)
        .broker_files(PartitionFileOptions::default().index_interval(1));
    for _ in 0..200 {
        p.append(Batch::new(Producer::PLAIN).values([[b'x'; 10]]));
    }
    p
}

fn remove_every(m: &Manifest, ext: &str) {
    for (base, _) in &m.segments {
        std::fs::remove_file(m.dir.join(file(*base, ext))).unwrap();
    }
}

/// `LogLoaderTest.testIndexRebuild`: every offset and time index deleted, the log reopened
/// after an unclean shutdown (recovery point 0): every segment is recovered (each at
/// `loadSegmentFiles`, its offset index missing, and again in `recoverLog`), nothing is
/// truncated, and the log ends at 200.
#[test]
fn index_rebuild() {
    let (_d, m) = write(unclean_from_0(), two_hundred_small_messages());
    assert!(m.segments.len() > 10);
    remove_every(&m, "index");
    remove_every(&m, "timeindex");
    let v = verify(&m);
    assert_whole(&v);
    let all: Vec<String> = m.segments.iter().map(|s| seg(s.0)).collect();
    assert_eq!(recovered_once(&v), all);
    assert_eq!(ends(&v), (Some(200), Some(0)));
}

/// `testIndexRebuild`'s files after a clean shutdown: with the offset indexes deleted every
/// segment is still recovered (`loadSegmentFiles` recovers on `NoSuchFileException`
/// whatever the shutdown); with only the time indexes deleted none is (`sanityCheck` opens
/// an empty time index and resizes it, no recovery: `LogSegment.sanityCheck`), and the
/// recovery point is the log end either way.
#[test]
fn index_rebuild_after_a_clean_shutdown_needs_the_offset_index_missing() {
    for missing in ["index", "timeindex"] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(true)
            .recovery_point("ll", 0, 0);
        let (_d, m) = write(ld, two_hundred_small_messages());
        remove_every(&m, missing);
        let v = verify(&m);
        assert_whole(&v);
        let want: Vec<String> = match missing {
            "index" => m.segments.iter().map(|s| seg(s.0)).collect(),
            _ => Vec::new(),
        };
        assert_eq!(recovered_once(&v), want, "{missing} missing");
        assert_eq!(ends(&v), (Some(200), Some(200)));
    }
}

// ----- the clean shutdown file --------------------------------------------------------------

/// `LogLoaderTest.testLogRecoveryIsCalledUponBrokerCrash`: `LogManager.loadLogs` takes a
/// log dir for cleanly shut down when `.kafka_cleanshutdown` exists
/// (`CleanShutdownFileHandler.exists`), whatever it holds: the file a 3.7+ broker writes
/// (`{"version":0,"brokerEpoch":0}`, the test's `write(0L)`), the empty file of older
/// brokers, or bytes that are not JSON (`read` fails, `exists` does not). A clean load
/// recovers nothing and ends with the recovery point at the log end; near miss: without the
/// file the log dir is unclean and every segment from the recovery point is recovered.
#[test]
fn a_clean_shutdown_file_means_clean_whatever_it_holds() {
    let contents: [Option<&[u8]>; 4] = [
        Some(br#"{"version":0,"brokerEpoch":0}"#),
        Some(b""),
        Some(b"\x00\xffnot json"),
        None,
    ];
    for content in contents {
        let (d, m) = write(unclean_from_0(), five_per_segment());
        let marker = d.path().join(".kafka_cleanshutdown");
        if let Some(c) = content {
            std::fs::write(&marker, c).unwrap();
        }
        let v = verify(&m);
        assert_whole(&v);
        let clean = content.is_some();
        assert_eq!(v.prediction.clean_shutdown, Some(clean), "{content:?}");
        assert_eq!(recovered_once(&v).len(), if clean { 0 } else { 20 });
        assert_eq!(ends(&v), (Some(100), Some(if clean { 100 } else { 0 })));
    }
}

/// `testLogRecoveryIsCalledUponBrokerCrash`'s flag, from a `.kafka_cleanshutdown` that is
/// an empty directory: `CleanShutdownFileHandler.exists` is `File.exists`, true for a
/// directory, and `delete` (`Files.deleteIfExists`) removes an empty one, so
/// `LogManager.loadLogs` loads the log dir as cleanly shut down: nothing recovered, the
/// recovery point at the log end.
#[test]
fn a_clean_shutdown_directory_is_a_clean_shutdown() {
    let (d, m) = write(unclean_from_0(), five_per_segment());
    std::fs::create_dir(d.path().join(".kafka_cleanshutdown")).unwrap();
    let v = verify(&m);
    assert_eq!(v.prediction.clean_shutdown, Some(true));
    assert!(recovered_once(&v).is_empty(), "{:?}", recovered_once(&v));
    assert_eq!(ends(&v), (Some(100), Some(100)));
}

// ----- the recovery point outside the segments ----------------------------------------------

/// `LogLoader.recoverLog` → `LogSegments.values(recoveryPoint, MAX)` when no segment base
/// is at or below the recovery point (the log starts at 50, after DeleteRecords; the
/// checkpoint still says 10): `floorKey` is null and every segment is recovered; the
/// recovery point after the load is the checkpoint's 10 raised to the local log start 50
/// (`UnifiedLog`'s constructor). Near miss: the recovery point 60 recovers from the
/// segment holding it. (The same floor as `testLogRecoversToCorrectOffset`'s.)
#[test]
fn a_recovery_point_below_the_first_segment_recovers_every_segment() {
    for point in [10, 60] {
        let mut p = hundred_byte_messages(0).start_offset(50);
        for _ in 0..40 {
            p.append(Batch::new(Producer::PLAIN).values([[b'q'; 100]]));
        }
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ll", 0, point)
            .log_start_offset("ll", 0, 50);
        let (_d, m) = write(ld, p);
        let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
        assert_eq!(bases[0], 50);
        let from = bases.iter().rposition(|&b| b <= point).unwrap_or(0);
        let v = verify(&m);
        assert_whole(&v);
        assert_eq!(
            recovered_once(&v),
            bases[from..].iter().map(|&b| seg(b)).collect::<Vec<_>>(),
            "recovery point {point}"
        );
        assert_eq!(ends(&v), (Some(90), Some(point.max(50))));
        assert_eq!(v.prediction.log_start_offset_after, Some(50));
    }
}

/// `LogLoader.recoverLog` after a clean shutdown that left the log whole: the new recovery
/// point is the log end, whatever the checkpoint says (here 500, past the end 100, and 3);
/// nothing is recovered. Near miss: the same checkpoint of 500 after an unclean shutdown
/// recovers the last segment (the floor of 500) and bounds the recovery point to 100.
#[test]
fn a_clean_load_sets_the_recovery_point_to_the_log_end() {
    for (clean, point) in [(true, 500), (true, 3), (false, 500)] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(clean)
            .recovery_point("ll", 0, point);
        let (_d, m) = write(ld, five_per_segment());
        let v = verify(&m);
        assert_whole(&v);
        let want: &[String] = if clean { &[] } else { &[seg(95)] };
        assert_eq!(recovered_once(&v), want, "clean {clean}, {point}");
        assert_eq!(ends(&v), (Some(100), Some(100)));
    }
}
