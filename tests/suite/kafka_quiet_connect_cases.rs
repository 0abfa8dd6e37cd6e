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

use crate::common::quiet::{assert_clean_start, assert_silent, scan_dir, verify_dir};
pub(crate) use crate::common::quiet::{lines, loud};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::results::ScanReport;
use klogscan::testkit::files::encode_offset_checkpoint;
use klogscan::testkit::{LogDirBuilder, LogDirManifest, PartitionBuilder, Producer};
use klogscan::verify::VerifyReport;
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
    write_and_check_stopped(ld, cleaned, None)
}

/// [`write_and_check`], the log dir's checkpoint files last written at `stopped` (ms) when
/// given: a copy that kept the broker's file times (`common::quiet::set_broker_file_times`).
pub(crate) fn write_and_check_stopped(
    ld: LogDirBuilder,
    cleaned: &[(&str, i32, i64)],
    stopped: Option<i64>,
) -> Quiet {
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
    if let Some(ms) = stopped {
        crate::common::quiet::set_broker_file_times(dir.path(), ms);
    }
    Quiet {
        scan: scan_dir(dir.path(), false),
        deep: scan_dir(dir.path(), true),
        verify: verify_dir(dir.path()),
        _dir: dir,
        manifest,
    }
}

impl Quiet {
    /// Nothing at warning or above from `scan`, `scan --deep` or `verify`, and a clean start
    /// predicted for every partition.
    pub(crate) fn assert_quiet(&self) {
        assert_silent(&self.scan, &self.deep, &self.verify);
        assert_clean_start(&self.verify, &self.manifest);
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
