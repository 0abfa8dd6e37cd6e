//! False alarms on what Kafka Connect and MirrorMaker 2 leave on the brokers: the worker's
//! compacted internal topics (`connect-configs`, `connect-offsets`, `connect-status`) after
//! the cleaner, exactly-once source support (KIP-618: the leader's transactional config
//! writes, each source task's transactional producer, zombie fencing through
//! `Admin.fenceProducers`), sink connectors' consumer groups, and MirrorMaker 2's replicated
//! topics (the source's CreateTime kept), its compacted internal topics and the target
//! groups it writes offsets to.
//!
//! `scan` (`request::run`, plain and `--deep`) and `verify` (`request::verify`) must report
//! nothing at warning or above, and `verify` must predict a clean start. Each healthy case
//! has a twin that differs by one fact and must be reported. Each case cites the Kafka class
//! and method that makes the shape healthy (apache/kafka trunk of 2024-10, `connect/runtime`
//! and `connect/mirror`). A case where klogscan raises a warning or an error on healthy data
//! is `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
//!
//! Modules: `internal` (the worker's internal topics, the leader's transactional config
//! writes), `fencing` (source tasks' transactions and zombie fencing, with the coordinator's
//! log), `groups` (sink connectors' groups, offsets MirrorMaker 2 syncs), `mirror`
//! (replicated topics and MirrorMaker 2's internal topics), `mirror_eos` (MirrorMaker 2's
//! exactly-once transactions: source CreateTime against the broker's clock).
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::files::encode_offset_checkpoint;
use klogscan::testkit::{LogDirBuilder, LogDirManifest, PartitionBuilder, Producer};
use klogscan::verify::VerifyReport;
use std::path::Path;
use tempfile::TempDir;

mod fencing;
mod groups;
mod internal;
mod mirror;
mod mirror_eos;

pub(crate) const DAY: i64 = 86_400_000;
pub(crate) const MIN: i64 = 60_000;
pub(crate) const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;

/// A written log dir and what `scan`, `scan --deep` and `verify` say of it.
pub(crate) struct Quiet {
    pub _dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub deep: ScanReport,
    pub verify: VerifyReport,
}

/// Write `ld` into a new temporary directory with a `cleaner-offset-checkpoint` listing
/// `cleaned` (`(topic, partition, first dirty offset)`: `LogCleanerManager.updateCheckpoints`
/// writes the logs the cleaner compacted, none when empty), then scan (plain and deep) and
/// verify it.
pub(crate) fn write_and_check(ld: LogDirBuilder, cleaned: &[(&str, i32, i64)]) -> Quiet {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    if !cleaned.is_empty() {
        let entries: Vec<(String, i32, i64)> = cleaned
            .iter()
            .map(|(t, p, o)| (t.to_string(), *p, *o))
            .collect();
        let text = encode_offset_checkpoint(&entries);
        std::fs::write(dir.path().join("cleaner-offset-checkpoint"), text).unwrap();
    }
    let scan = scan_dir(dir.path(), false);
    let deep = scan_dir(dir.path(), true);
    let verify = request::verify(&Request::new([dir.path()]), None)
        .unwrap()
        .report;
    assert!(verify.errors.is_empty(), "{:?}", verify.errors);
    Quiet {
        _dir: dir,
        manifest,
        scan,
        deep,
        verify,
    }
}

fn scan_dir(dir: &Path, deep: bool) -> ScanReport {
    let opts = ScanOptions::default().with_deep(deep);
    let r = request::run(&Request::new([dir]).with_options(opts))
        .unwrap()
        .report;
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    r
}

/// One line per finding: severity, kind, partition, offset, message.
pub(crate) fn lines<'a>(fs: impl IntoIterator<Item = &'a Finding>) -> Vec<String> {
    fs.into_iter()
        .map(|f| {
            format!(
                "{} {} {}-{} @{:?}: {}",
                f.severity.as_str(),
                f.kind,
                f.topic,
                f.partition,
                f.offset,
                f.message
            )
        })
        .collect()
}

/// The findings at warning or above, one line each.
pub(crate) fn loud<'a>(fs: impl IntoIterator<Item = &'a Finding>) -> Vec<String> {
    lines(fs.into_iter().filter(|f| f.severity >= Severity::Warning))
}

impl Quiet {
    /// Nothing at warning or above from `scan`, `scan --deep` or `verify`, and a clean start
    /// predicted for every partition.
    pub(crate) fn assert_quiet(&self) {
        let s = loud(&self.scan.findings);
        let d = loud(&self.deep.findings);
        let v = loud(self.verify.findings());
        assert!(
            s.is_empty() && d.is_empty() && v.is_empty(),
            "scan: {s:#?}\nscan --deep: {d:#?}\nverify: {v:#?}\n(all deep findings: {:#?})",
            lines(&self.deep.findings)
        );
        self.assert_clean_start();
    }

    /// `verify` predicts the start after a clean shutdown (`LogLoader.load` with
    /// `hadCleanShutdown`): nothing recovered, truncated or deleted, the log end kept.
    pub(crate) fn assert_clean_start(&self) {
        assert_eq!(self.verify.partitions.len(), self.manifest.partitions.len());
        for p in &self.verify.partitions {
            let pr = &p.prediction;
            let name = format!("{}-{}", p.topic, p.partition);
            assert_eq!(pr.clean_shutdown, Some(true), "{name}");
            assert!(pr.recovered_segments.is_empty(), "{name}: {pr:#?}");
            assert!(pr.truncation.is_none(), "{name}: {pr:#?}");
            assert!(pr.deleted_segments.is_empty(), "{name}: {pr:#?}");
            assert!(pr.load_failure.is_none(), "{name}: {pr:#?}");
        }
    }

    /// The twin's finding: at least one `kind` at `severity` or above on `topic`, naming
    /// `producer` when given. Returns the first.
    pub(crate) fn assert_reported(
        &self,
        kind: Kind,
        severity: Severity,
        topic: &str,
        producer: Option<i64>,
    ) -> &Finding {
        let hit = self.scan.findings.iter().find(|f| {
            f.kind == kind
                && f.severity >= severity
                && f.topic == topic
                && producer.is_none_or(|p| f.producer_id == Some(p))
        });
        hit.unwrap_or_else(|| {
            panic!(
                "no {kind} >= {} on {topic} (producer {producer:?}): {:#?}",
                severity.as_str(),
                lines(&self.scan.findings)
            )
        })
    }
}

/// A COMMIT/ABORT of `p` on `b` stamped `ts` (a marker carries the partition leader's clock:
/// `KafkaApis.handleWriteTxnMarkersRequest` → `MemoryRecords.withEndTransactionMarker`),
/// coordinator epoch `ce`.
pub(crate) fn marker_at(b: &mut PartitionBuilder, p: Producer, commit: bool, ce: i32, ts: i64) {
    let now = b.now();
    b.advance_time(ts - now);
    b.end_txn(p, commit, ce);
}
