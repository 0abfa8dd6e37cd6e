//! Kafka's segment and index tests no earlier audit cited (apache/kafka trunk of 2024-10):
//! `OffsetIndexTest`, `TimeIndexTest`, `TransactionIndexTest` and `LogSegmentTest`
//! (storage/src/test/java/org/apache/kafka/storage/internals/log/), and the `UnifiedLogTest`
//! cases (core/src/test/scala/unit/kafka/log/) about index sizing, timestamps and segments
//! whose offsets do not fit their base. Each test writes the files the Kafka test's segment
//! would leave (or the file its assertion forbids), runs `scan` and `verify` through the
//! library (`request::run` / `request::verify`, what the CLI calls) and asserts what the
//! broker does with them on its next start.
//!
//! What the tests hold klogscan to (storage/src/main/java/…/log/):
//! * `LogLoader.loadSegmentFiles` opens every `.log` and runs `LogSegment.sanityCheck`:
//!   since 2.3 that only requires the offset index to exist (`NoSuchFileException`: the
//!   segment is recovered), resizes a time index it had to create to 0 and checks the
//!   transaction index (`CorruptIndexException`: recovered); brokers before 2.3 also ran
//!   `OffsetIndex.sanityCheck` and `TimeIndex.sanityCheck` (last entry against the base
//!   offset and against the first timestamp, length a multiple of the entry size);
//! * `AbstractIndex` takes an existing file's whole length, rounded down to an entry, as
//!   its entries: the zero slots a preallocated index (`maxIndexSize`) leaves after a crash
//!   are entries `(relative offset 0, position 0)` / `(timestamp 0, relative offset 0)`;
//! * the segments above the recovery point are recovered after an unclean shutdown
//!   (`LogSegment.recover` rebuilds the three indexes from the batches and truncates at the
//!   first invalid one); a batch whose offsets do not fit the base as a relative int32
//!   makes recovery throw `LogSegmentOffsetOverflowException` and the segment is split;
//! * a segment that is not recovered keeps its index files as they are, and its next
//!   offset is read from the offset index's last entry (`LogSegment.readNextOffset`);
//! * files with the `.deleted` suffix are deleted before the segments are loaded.
//!
//! Where klogscan disagrees with Kafka the test asserts Kafka's answer and is
//! `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::kafka_quiet_cluster_cases::loud;
use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::{BrokerVersion, PartitionVerification};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

mod offset_index;
mod segment;
mod time_index;
mod txn_index;

// ----- helpers ----------------------------------------------------------------------------

/// The topic of every case.
const TOPIC: &str = "sa";

/// A broker before 2.3, whose `LogSegment.sanityCheck` still ran the offset and time
/// indexes' own sanity checks at load.
const PRE_2_3: Option<BrokerVersion> = Some(BrokerVersion(2, 2, 0));

/// Write `p` into a broker log dir built by `ld`; the partition's manifest.
fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// A log dir cleanly shut down (the checkpoints at the log end) or not (recovery point 0).
fn log_dir(clean: bool) -> LogDirBuilder {
    let ld = LogDirBuilder::new(1).clean_shutdown(clean);
    if clean {
        ld
    } else {
        ld.recovery_point(TOPIC, 0, 0)
    }
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

/// Scan the partition directory as the CLI does.
fn scan(m: &Manifest) -> ScanReport {
    let a = request::run(&Request::new([m.dir.as_path()])).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    a.report
}

/// Nothing at warning or above from `scan` or `verify`.
fn assert_no_alarm(m: &Manifest) {
    let s = loud(&scan(m).findings);
    let v = loud(&verify(m).findings);
    assert!(s.is_empty() && v.is_empty(), "scan: {s:#?}\nverify: {v:#?}");
}

/// `<base, 20 digits>.<ext>`.
fn file(base: i64, ext: &str) -> String {
    format!("{base:020}.{ext}")
}

fn path(m: &Manifest, base: i64, ext: &str) -> PathBuf {
    m.dir.join(file(base, ext))
}

/// The `.log` files the predicted load recovers.
fn recovered(v: &PartitionVerification) -> Vec<String> {
    (v.prediction.recovered_segments.iter())
        .map(|r| r.segment.clone())
        .collect()
}

/// The findings of `kind` about the file `name`.
fn findings_on<'a>(v: &'a PartitionVerification, kind: Kind, name: &str) -> Vec<&'a Finding> {
    (v.findings.iter())
        .filter(|f| f.kind == kind && f.segment.as_deref() == Some(name))
        .collect()
}

/// `n` single-record plain batches, timestamps 10 ms apart, from offset `start`; one
/// segment whose indexes get an entry after every batch but the first
/// (`index.interval.bytes` 1).
fn batches(start: i64, n: usize) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(TOPIC, 0)
        .start_offset(start)
        .time_step(10)
        .broker_files(PartitionFileOptions::default().index_interval(1));
    for i in 0..n {
        p.append(Batch::new(Producer::PLAIN).values([format!("{i}")]));
    }
    p
}

/// The fixed-size entries of an index file, as raw slots.
fn slots(path: &Path, size: usize) -> Vec<Vec<u8>> {
    (std::fs::read(path).unwrap().chunks_exact(size))
        .map(<[u8]>::to_vec)
        .collect()
}

/// Write `slots` back as the index file.
fn write_slots(path: &Path, slots: &[Vec<u8>]) {
    std::fs::write(path, slots.concat()).unwrap();
}

/// Grow `path` with zero bytes to `len` (an index preallocated to `maxIndexSize`).
fn pad_with_zeros(path: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

/// Cut `path` to `len` bytes.
fn cut(path: &Path, len: u64) {
    pad_with_zeros(path, len);
}
