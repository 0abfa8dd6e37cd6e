//! Kafka's own unit tests of loading its internal topics, reproduced as bytes on disk.
//!
//! Each test cites the Kafka test method it reproduces (apache/kafka:
//! `TransactionStateManagerTest`, `TransactionLogTest`, `TransactionMetadataTest` of the
//! transaction coordinator; `GroupMetadataManagerTest` (core, Scala), `OffsetMetadataManagerTest`,
//! `GroupCoordinatorShardTest` and `GroupCoordinatorRecordSerdeTest` of the group
//! coordinator). The records Kafka's test builds in memory are written here as
//! `__transaction_state` / `__consumer_offsets` partitions with the testkit; klogscan
//! reads them through the library entry point the CLI uses (`request::run`) for the
//! findings, and through the coordinator's view (`CoordinatorView::load`, what
//! `--transactional-id` resolves through) or the group listing (`list_groups`, what
//! `klogscan groups` prints) for the replayed state, and each test asserts what Kafka's
//! test asserts of the loaded state. Cases Kafka's tests build only in memory (API
//! validation, the coordinator's in-memory transitions, metrics) are listed in
//! docs/testing.md with why they are not expressible.
#![cfg(feature = "testkit")]

mod assignments;
mod classic_members;
mod groups;
mod offsets;
mod txn;

use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use std::path::Path;

/// The reference time of every scenario (`--now`): the testkit's clock start plus a day,
/// so nothing written here is past a timeout by accident unless a test says so.
const NOW: i64 = klogscan::testkit::scenario::DEFAULT_START_MS + 86_400_000;

fn opts() -> ScanOptions {
    ScanOptions::default().with_now_ms(NOW)
}

/// The scan report of `dir`, through the request API the CLI calls.
fn scan(dir: &Path) -> ScanReport {
    request::run(&Request::new([dir]).with_options(opts()))
        .unwrap()
        .report
}

/// The findings above info (what would make the load, or the data, suspect).
fn serious(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .collect()
}
