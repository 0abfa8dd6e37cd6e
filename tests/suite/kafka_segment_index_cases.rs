//! Kafka's own tests of index files and of the loader's handling of segment files,
//! reproduced as bytes on disk: `OffsetIndexTest`, `TimeIndexTest` and `LogSegmentTest`
//! (storage/src/test/java/org/apache/kafka/storage/internals/log/) here, the file cases of
//! `LogLoaderTest` (core/src/test/scala/unit/kafka/log/) in [`loader_files`]. Each test
//! builds the files with the testkit, runs klogscan through the library's front door
//! (`request::run` / `request::verify`, what the CLI calls) and asserts what Kafka's test
//! implies for the bytes: the index findings (`index_corrupt` for what Kafka's
//! `sanityCheck` refuses) and `verify`'s prediction of the next load (segments recovered
//! and why, truncation, leftovers and what startup does with them).
//!
//! `LogSegmentTest`'s recovery of the transaction index and of a corrupt message are in
//! `kafka_unifiedlog_cases/segment.rs`. Tests marked `#[ignore = "discrepancy: …"]` state
//! Kafka's behaviour where klogscan disagrees with it today.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::{BrokerVersion, PartitionVerification};
use std::path::Path;
use tempfile::TempDir;

mod index_swaps;
mod load_stops;
mod loader_files;
mod read_next_offset;
mod review_hostile;
mod swaps_before_3_0;

// ----- helpers ----------------------------------------------------------------------------

/// Write `p` into a broker log dir built by `ld`; the partition's manifest.
fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Verify the partition's log dir as the CLI does, for a broker of `version` (`None`: a
/// current one).
fn verify_as(m: &Manifest, version: Option<BrokerVersion>) -> PartitionVerification {
    let a = request::verify(&Request::new([m.dir.parent().unwrap()]), version).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

fn verify(m: &Manifest) -> PartitionVerification {
    verify_as(m, None)
}

/// A broker before 2.3, whose `LogSegment.sanityCheck` still checked the offset and time
/// indexes at load.
const PRE_2_3: Option<BrokerVersion> = Some(BrokerVersion(2, 2, 0));

/// Scan one partition directory as the CLI does.
fn scan_dir(dir: &Path) -> ScanReport {
    let a = request::run(&Request::new([dir])).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    a.report
}

/// `<base, 20 digits>.<ext>`.
fn file(base: i64, ext: &str) -> String {
    format!("{base:020}.{ext}")
}

/// `(segment, reason)` of every segment the predicted load recovers.
fn recovered(v: &PartitionVerification) -> Vec<(String, String)> {
    v.prediction
        .recovered_segments
        .iter()
        .map(|r| (r.segment.clone(), r.reason.to_string()))
        .collect()
}

fn recovered_names(v: &PartitionVerification) -> Vec<String> {
    recovered(v).into_iter().map(|r| r.0).collect()
}

/// The findings of `kind` about the file `name`.
fn findings_on<'a>(v: &'a PartitionVerification, kind: Kind, name: &str) -> Vec<&'a Finding> {
    v.findings
        .iter()
        .filter(|f| f.kind == kind && f.segment.as_deref() == Some(name))
        .collect()
}

/// Deterministic nonsense bytes (Kafka's tests write random ones).
fn nonsense(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 8) as u8
        })
        .collect()
}

/// Overwrite `path` from byte `from` to its end with nonsense (Kafka's
/// `writeNonsenseToFile`: same length).
fn write_nonsense(path: &Path, from: usize, seed: u32) {
    let mut b = std::fs::read(path).unwrap();
    let n = b.len() - from;
    b[from..].copy_from_slice(&nonsense(n, seed));
    std::fs::write(path, b).unwrap();
}

/// Time-index bytes of `(timestamp, relative offset)` entries.
fn time_index(entries: &[(i64, i32)]) -> Vec<u8> {
    entries
        .iter()
        .flat_map(|(t, o)| [&t.to_be_bytes()[..], &o.to_be_bytes()[..]].concat())
        .collect()
}

/// The `(timestamp, relative offset)` entries of a time-index file.
fn read_time_index(path: &Path) -> Vec<(i64, i32)> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(12)
        .map(|c| {
            (
                i64::from_be_bytes(c[..8].try_into().unwrap()),
                i32::from_be_bytes(c[8..].try_into().unwrap()),
            )
        })
        .collect()
}

/// `n` single-record plain batches from offset `start`, one segment, indexes written every
/// `interval` bytes.
fn one_segment(topic: &str, start: i64, n: usize, interval: u64) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, 0)
        .start_offset(start)
        .broker_files(PartitionFileOptions::default().index_interval(interval));
    for i in 0..n {
        p.append(Batch::new(Producer::PLAIN).values([format!("{i}")]));
    }
    p
}

// ----- OffsetIndexTest --------------------------------------------------------------------

/// `OffsetIndexTest.testSanityLastOffsetEqualToBaseOffset`: an offset index of base 20
/// whose only entry is offset 20 itself (relative offset 0) passes `OffsetIndex.sanityCheck`.
/// Here that entry points at the segment's first batch (offset 20 at byte 0): no finding at
/// all, and a broker before 2.3 (which ran the check at load) does not recover the segment.
/// Negative twin: relative offset −1 (last offset 19, below the base) is the
/// `CorruptIndexException` of the check: `index_corrupt` with Kafka's message, and the
/// segment recovered at load by a broker before 2.3 — not by a current one (since 2.3
/// `LogSegment.sanityCheck` skips the offset and time indexes).
#[test]
fn offset_index_sanity_last_offset_equal_to_base_offset() {
    for rel in [0i32, -1] {
        let (_d, m) = write(LogDirBuilder::new(1), one_segment("oi", 20, 2, 4096));
        let mut entry = rel.to_be_bytes().to_vec();
        entry.extend_from_slice(&0i32.to_be_bytes());
        std::fs::write(m.dir.join(file(20, "index")), entry).unwrap();
        let old = verify_as(&m, PRE_2_3);
        let new = verify(&m);
        let corrupt = findings_on(&old, Kind::IndexCorrupt, &file(20, "index"));
        if rel == 0 {
            assert!(old.findings.is_empty(), "{:#?}", old.findings);
            assert!(recovered(&old).is_empty());
        } else {
            assert_eq!(corrupt.len(), 1, "{:#?}", old.findings);
            assert!(
                corrupt[0]
                    .message
                    .contains("has non-zero size but the last offset is 19 which is less than the base offset 20"),
                "{}",
                corrupt[0].message
            );
            let r = recovered(&old);
            assert_eq!(r.len(), 1);
            assert_eq!(r[0].0, file(20, "log"));
            assert!(r[0].1.starts_with("corrupt offset index"), "{}", r[0].1);
            assert_eq!(
                findings_on(&new, Kind::IndexCorrupt, &file(20, "index")).len(),
                1
            );
        }
        assert!(recovered(&new).is_empty(), "{:?}", recovered(&new));
        assert!(old.prediction.truncation.is_none());
        assert_eq!(old.prediction.log_end_offset_after, Some(22));
    }
}

// ----- TimeIndexTest ----------------------------------------------------------------------

/// The time index of `TimeIndexTest.testSanityCheck` as a segment of base 45: six
/// single-record batches (45–50), an entry after each batch but the first (five entries,
/// as the five of Kafka's test). Returns the log dir and the time index's path.
fn time_index_case() -> (TempDir, Manifest, std::path::PathBuf) {
    let (d, m) = write(LogDirBuilder::new(1), one_segment("ti", 45, 6, 1));
    let path = m.dir.join(file(45, "timeindex"));
    assert_eq!(read_time_index(&path).len(), 5);
    (d, m, path)
}

/// What a broker before 2.3 and a current one make of the time index of segment 45:
/// `(index_corrupt findings on it, recovered at load by the old broker, by the new one)`.
fn time_index_verdict(m: &Manifest) -> (Vec<String>, Vec<(String, String)>, Vec<String>) {
    let old = verify_as(m, PRE_2_3);
    let new = verify(m);
    let msgs = findings_on(&old, Kind::IndexCorrupt, &file(45, "timeindex"))
        .iter()
        .map(|f| f.message.clone())
        .collect();
    assert!(new.prediction.truncation.is_none());
    (msgs, recovered(&old), recovered_names(&new))
}

/// `TimeIndexTest.testSanityCheck`, the sound index and the corrupt length: the index as
/// written passes `TimeIndex.sanityCheck`; one byte short (59 bytes, not a multiple of 12)
/// is a `CorruptIndexException` — `index_corrupt`, and a broker before 2.3 recovers the
/// segment at load (a current one does not check it at load).
#[test]
fn time_index_sanity_check_length() {
    let (_d, m, path) = time_index_case();
    let (corrupt, old, new) = time_index_verdict(&m);
    assert!(corrupt.is_empty(), "{corrupt:?}");
    assert!(old.is_empty() && new.is_empty(), "{old:?} {new:?}");
    let mut b = std::fs::read(&path).unwrap();
    b.pop();
    std::fs::write(&path, &b).unwrap();
    let (corrupt, old, new) = time_index_verdict(&m);
    assert_eq!(corrupt.len(), 1, "{corrupt:?}");
    assert!(
        corrupt[0].contains("59 bytes is not a multiple of 12"),
        "{}",
        corrupt[0]
    );
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].0, file(45, "log"));
    assert!(old[0].1.starts_with("corrupt time index"), "{}", old[0].1);
    assert!(new.is_empty(), "{new:?}");
}

/// `TimeIndexTest.testSanityCheck`, the corrupt last offset: the last entry's offset below
/// the base offset (relative offset −1, i.e. 44 in a segment of base 45) makes
/// `TimeIndex.sanityCheck` throw `CorruptIndexException` ("last offset is 44 which is less
/// than the first offset 45"): a broker before 2.3 recovers the segment at load.
#[test]
fn time_index_sanity_check_last_offset() {
    let (_d, m, path) = time_index_case();
    let mut e = read_time_index(&path);
    e.last_mut().unwrap().1 = -1;
    std::fs::write(&path, time_index(&e)).unwrap();
    let (corrupt, old, new) = time_index_verdict(&m);
    assert_eq!(corrupt.len(), 1, "{corrupt:?}");
    assert!(corrupt[0].contains("44"), "{}", corrupt[0]);
    assert_eq!(old.len(), 1, "{old:?}");
    assert!(old[0].1.starts_with("corrupt time index"), "{}", old[0].1);
    assert!(new.is_empty(), "{new:?}");
}

/// `TimeIndexTest.testSanityCheck`, the corrupt last timestamp: the last entry's timestamp
/// one below the first entry's makes `TimeIndex.sanityCheck` throw
/// `CorruptIndexException` ("the last timestamp is … which is less than the first
/// timestamp …"): a broker before 2.3 recovers the segment at load.
#[test]
fn time_index_sanity_check_last_timestamp() {
    let (_d, m, path) = time_index_case();
    let mut e = read_time_index(&path);
    let first = e[0].0;
    e.last_mut().unwrap().0 = first - 1;
    std::fs::write(&path, time_index(&e)).unwrap();
    let (corrupt, old, new) = time_index_verdict(&m);
    assert_eq!(corrupt.len(), 1, "{corrupt:?}");
    assert!(
        corrupt[0].contains(&(first - 1).to_string()),
        "{}",
        corrupt[0]
    );
    assert_eq!(old.len(), 1, "{old:?}");
    assert!(old[0].1.starts_with("corrupt time index"), "{}", old[0].1);
    assert!(new.is_empty(), "{new:?}");
}

// ----- LogSegmentTest ---------------------------------------------------------------------

/// One segment of 100 single-record batches (offsets 0–99, timestamps 10 ms apart), index
/// entries every 10 bytes (`LogSegmentTest`'s segments), in a log dir cleanly shut down or
/// not (recovery point 0).
fn hundred(clean: bool) -> (TempDir, Manifest) {
    let mut p = PartitionBuilder::new("ls", 0)
        .time_step(10)
        .broker_files(PartitionFileOptions::default().index_interval(10));
    for i in 0..100 {
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(clean)
        .recovery_point("ls", 0, 0);
    write(ld, p)
}

/// `LogSegmentTest.testRecoveryFixesCorruptIndex`: the offset index overwritten with
/// nonsense from byte 5 to its end; recovering the segment rebuilds it and every offset
/// reads again. Here: the index is reported (`index_corrupt`); after an unclean shutdown
/// (recovery point 0) the segment is recovered with nothing truncated (all 100 offsets
/// stay); after a clean shutdown it is not recovered (a current broker does not check the
/// index at load) and the damage stays — and the log end is read through it
/// (`LogSegment.readNextOffset`: from the index's last entry, whose nonsense offset is above
/// every batch's), so nothing is found and the log ends at the segment's base, 0.
#[test]
fn recovery_fixes_corrupt_index() {
    for clean in [false, true] {
        let (_d, m) = hundred(clean);
        let idx = m.dir.join(file(0, "index"));
        assert!(std::fs::metadata(&idx).unwrap().len() > 8 * 90);
        write_nonsense(&idx, 5, 7);
        let v = verify(&m);
        let bad = v
            .findings
            .iter()
            .filter(|f| f.segment.as_deref() == Some(&file(0, "index")[..]))
            .map(|f| f.kind)
            .collect::<Vec<_>>();
        assert!(bad.contains(&Kind::IndexCorrupt), "{bad:?}");
        if clean {
            assert!(recovered(&v).is_empty());
        } else {
            assert_eq!(recovered_names(&v), [file(0, "log")]);
        }
        assert!(v.prediction.truncation.is_none());
        let end = if clean { 0 } else { 100 };
        assert_eq!(
            v.prediction.log_end_offset_after,
            Some(end),
            "clean {clean}"
        );
    }
}

/// `LogSegmentTest.testRecoveryFixesCorruptTimeIndex`: the time index overwritten with
/// nonsense from byte 5 on; recovery rebuilds it so every timestamp finds its offset again.
/// Here: the entries disagree with the log (`timeindex_mismatch`); recovered with nothing
/// truncated after an unclean shutdown, left in service after a clean one.
#[test]
fn recovery_fixes_corrupt_time_index() {
    for clean in [false, true] {
        let (_d, m) = hundred(clean);
        let tidx = m.dir.join(file(0, "timeindex"));
        assert_eq!(read_time_index(&tidx).len(), 99);
        write_nonsense(&tidx, 5, 11);
        let v = verify(&m);
        assert_eq!(
            findings_on(&v, Kind::TimeindexMismatch, &file(0, "timeindex")).len(),
            1,
            "{:#?}",
            v.findings
        );
        if clean {
            assert!(recovered(&v).is_empty());
        } else {
            assert_eq!(recovered_names(&v), [file(0, "log")]);
        }
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(100));
    }
}
