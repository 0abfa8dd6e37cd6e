//! False alarms: data a healthy Kafka cluster writes, built the way real brokers and clients
//! write it, must draw nothing at warning or error level from `scan` (`request::run`) nor
//! from `verify` (`request::verify`), and `verify` must predict a clean start: no segment
//! recovered, nothing truncated or deleted, no load failure, the log end kept.
//!
//! Each case cites the Kafka class and method whose behaviour makes the shape healthy
//! (apache/kafka trunk of 2024-10; the 2025-10 tree where it says so). Where klogscan raises
//! a warning or an error on such data, the test is `#[ignore = "divergence: …"]` and fails
//! when run with `--ignored`.
//!
//! The log dirs are written with the testkit's `LogDirBuilder` as after a clean shutdown
//! (`.kafka_cleanshutdown`, trimmed indexes, a producer snapshot at every roll and at the
//! log end, `recovery-point-offset-checkpoint` at the log end); files the testkit does not
//! model (a snapshot that left out an expired producer, a KRaft clean-shutdown file, the
//! cleaner's checkpoint) are written by the helpers here, byte for byte as Kafka does.
#![cfg(feature = "testkit")]

pub(crate) use crate::common::quiet::{lines, loud};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{LogDirBuilder, LogDirManifest};
use klogscan::verify::VerifyReport;
use std::path::Path;
use tempfile::TempDir;

mod compaction;
pub(crate) mod coordinators;
mod layout;
mod producers;
mod txns;

// ----- helpers ----------------------------------------------------------------------------

pub(crate) fn snapshot_name(offset: i64) -> String {
    format!("{offset:020}.snapshot")
}

/// Copy the named snapshots of partition directory `from` into `to` (over what is there).
pub(crate) fn copy_snapshots(from: &Path, to: &Path, offsets: &[i64]) {
    for o in offsets {
        std::fs::copy(from.join(snapshot_name(*o)), to.join(snapshot_name(*o))).unwrap();
    }
}

/// A written log dir and what `scan` and `verify` say of it.
pub(crate) struct Quiet {
    pub dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub verify: VerifyReport,
}

/// Write `ld` into a new temporary directory, let `extra` add or rewrite files there (what
/// the testkit does not write as Kafka does), then scan and verify it as the CLI does.
pub(crate) fn write_and_check(ld: LogDirBuilder, extra: impl FnOnce(&Path)) -> Quiet {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    extra(dir.path());
    let (scan, verify) = check_dir(dir.path());
    Quiet {
        dir,
        manifest,
        scan,
        verify,
    }
}

/// `scan` and `verify` of `dir`, as `klogscan scan DIR` / `klogscan verify DIR` run them.
pub(crate) fn check_dir(dir: &Path) -> (ScanReport, VerifyReport) {
    let scan = request::run(&Request::new([dir])).unwrap().report;
    assert!(scan.errors.is_empty(), "{:?}", scan.errors);
    let verify = request::verify(&Request::new([dir]), None).unwrap().report;
    assert!(verify.errors.is_empty(), "{:?}", verify.errors);
    (scan, verify)
}

impl Quiet {
    /// Nothing at warning or above from `scan` or `verify`, and a clean start predicted for
    /// every partition.
    pub(crate) fn assert_quiet(&self) {
        let s = loud(&self.scan.findings);
        let v = loud(self.verify.findings());
        assert!(
            s.is_empty() && v.is_empty(),
            "scan: {s:#?}\nverify: {v:#?}\n(all scan findings: {:#?})",
            lines(&self.scan.findings)
        );
        self.assert_clean_start();
    }

    /// `verify` predicts, for every partition, the start a broker makes after a clean
    /// shutdown (`LogLoader.load` with `hadCleanShutdown`): no recovery, no truncation, no
    /// deleted segment, no leftover but a snapshot at the log start, no load failure, the
    /// log end kept.
    pub(crate) fn assert_clean_start(&self) {
        assert_eq!(
            self.verify.partitions.len(),
            self.manifest.partitions.len(),
            "every partition verified"
        );
        for p in &self.verify.partitions {
            let pr = &p.prediction;
            let name = format!("{}-{}", p.topic, p.partition);
            assert_eq!(pr.clean_shutdown, Some(true), "{name}");
            assert!(pr.recovered_segments.is_empty(), "{name}: {pr:#?}");
            assert!(pr.truncation.is_none(), "{name}: {pr:#?}");
            assert!(pr.deleted_segments.is_empty(), "{name}: {pr:#?}");
            assert!(pr.unrecovered_corruption.is_empty(), "{name}: {pr:#?}");
            assert!(pr.load_failure.is_none(), "{name}: {pr:#?}");
            // the one file a clean load removes: a snapshot at (or below) the log start,
            // which `ProducerStateManager.truncateAndReload` deletes on every load
            assert!(
                pr.leftovers
                    .iter()
                    .all(|l| l.kind == "snapshot_below_log_start"),
                "{name}: {:#?}",
                pr.leftovers
            );
            let m = self
                .manifest
                .partitions
                .iter()
                .find(|m| m.topic == p.topic && m.partition == p.partition)
                .unwrap();
            assert_eq!(pr.log_end_offset_after, Some(m.log_end_offset), "{name}");
        }
    }
}
