//! The rest of Kafka's producer-state tests, reproduced as bytes on disk: the
//! `ProducerStateManagerTest` cases about snapshots, truncation, reloads and the first
//! unstable offset (storage/src/test/java/org/apache/kafka/storage/internals/log/), and the
//! `LogLoaderTest` cases about the producer-state rebuild of a load, the message-format
//! shortcuts and over-compacted logs (core/src/test/scala/unit/kafka/log/). The earlier
//! cases of both classes are in `kafka_psm_cases`.
//!
//! Kafka's tests drive a `ProducerStateManager` (or a `LogLoader` with a mocked one)
//! through its API. Each test here writes the partition directory that API call leaves,
//! or that makes `LogLoader.load` make the same call — `truncateAndReload(logStart,
//! logEnd)` is what a load does once the log start checkpoint and the recovery's
//! truncation fix those two offsets; `truncateFullyAndStartAt` is what it does when the log
//! ends below its log start checkpoint — and runs klogscan through `request::run` /
//! `request::verify`, as the CLI does. `scan` gives the replayed producers, the last stable
//! offset and the open transactions; `verify` the load's prediction: the segments
//! recovered, the truncation, the snapshots deleted and loaded, the producers and open
//! transactions the broker starts with.
//!
//! A test marked `#[ignore = "discrepancy: …"]` asserts Kafka's answer where klogscan gives
//! another; its doc comment says what klogscan says instead. docs/testing.md ("Kafka's
//! producer-state tests") maps every Kafka method to its test here, or says why it cannot
//! be expressed as bytes.
#![cfg(feature = "testkit")]

use crate::common::cases::recovered;
use klogscan::finding::{Finding, Kind};
use klogscan::read::format::snapshot::ProducerSnapshot;
use klogscan::request::{self, Request};
use klogscan::results::ScanOptions;
use klogscan::testkit::{LogDirBuilder, Manifest, PartitionBuilder, SnapshotEntry};
use klogscan::verify::PartitionVerification;
use tempfile::TempDir;

mod loader;
mod psm;

/// `producer.id.expiration.ms`'s default.
const DAY: i64 = 86_400_000;

/// Write `p` into a log dir described by `ld`.
fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Verify the partition's log dir as the CLI does, with the scan options `opts`.
fn verify_with(m: &Manifest, opts: ScanOptions) -> PartitionVerification {
    let req = Request::new([m.dir.parent().unwrap()]).with_options(opts);
    let a = request::verify(&req, None).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

fn verify(m: &Manifest) -> PartitionVerification {
    verify_with(m, ScanOptions::default())
}

/// The name of the snapshot at `offset`.
fn snap(offset: i64) -> String {
    format!("{offset:020}.snapshot")
}

/// The name of the segment based at `base`.
fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

/// The snapshot files in the partition directory, by offset.
fn snapshot_files(m: &Manifest) -> Vec<i64> {
    let mut v: Vec<i64> = std::fs::read_dir(&m.dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_suffix(".snapshot")?.parse().ok()
        })
        .collect();
    v.sort_unstable();
    v
}

/// Delete the snapshot files at `offsets`.
fn remove_snapshots(m: &Manifest, offsets: impl IntoIterator<Item = i64>) {
    for o in offsets {
        std::fs::remove_file(m.dir.join(snap(o))).unwrap();
    }
}

/// Delete every file of the segment based at `base` (log and indexes).
fn remove_segment(m: &Manifest, base: i64) {
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = m.dir.join(format!("{base:020}.{ext}"));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
}

/// Flip one bit at byte `position` of the segment based at `base`: the batch there fails
/// its CRC.
fn flip(m: &Manifest, base: i64, position: u64) {
    let path = m.dir.join(seg(base));
    let mut b = std::fs::read(&path).unwrap();
    b[position as usize] ^= 0x20;
    std::fs::write(&path, b).unwrap();
}

/// `(file, kind)` of every snapshot the predicted load deletes, sorted by file.
fn deleted_snapshots(v: &PartitionVerification) -> Vec<(String, &str)> {
    let mut d: Vec<(String, &str)> = v
        .prediction
        .leftovers
        .iter()
        .filter(|l| l.file.ends_with(".snapshot"))
        .map(|l| (l.file.clone(), l.kind.as_str()))
        .collect();
    d.sort();
    d
}

/// The snapshot the load ends with: `(offset, written by the load)`.
fn loaded(v: &PartitionVerification) -> (Option<i64>, bool) {
    let ps = &v.prediction.producer_state;
    (ps.snapshot_offset, ps.snapshot_written_at_load)
}

/// The producers and open transactions the broker starts with.
fn counts(v: &PartitionVerification) -> (Option<usize>, Option<usize>) {
    let ps = &v.prediction.producer_state;
    (ps.producers, ps.open_transactions)
}

/// The findings of `kinds`.
fn of_kinds<'a>(findings: &'a [Finding], kinds: &[Kind]) -> Vec<&'a Finding> {
    findings
        .iter()
        .filter(|f| kinds.contains(&f.kind))
        .collect()
}

/// The snapshot findings of a verification: `(kind, file)`.
fn snapshot_findings(v: &PartitionVerification) -> Vec<(Kind, String)> {
    of_kinds(
        &v.findings,
        &[Kind::SnapshotCorrupt, Kind::SnapshotMismatch],
    )
    .into_iter()
    .map(|f| (f.kind, f.segment.clone().unwrap_or_default()))
    .collect()
}

/// The entries of the snapshot file at `offset`, as the testkit writes them.
fn snapshot_entries(m: &Manifest, offset: i64) -> Vec<SnapshotEntry> {
    let bytes = std::fs::read(m.dir.join(snap(offset))).unwrap();
    ProducerSnapshot::parse(&bytes)
        .unwrap()
        .entries()
        .map(|e| crate::common::cases::written_entry(&e))
        .collect()
}
