//! Kafka-test audit, round 3, of producer state and the last stable offset: test methods of
//! `UnifiedLogTest` (core/src/test/scala/unit/kafka/log/), `TransactionsTest` and
//! `TransactionsExpirationTest` (core/src/test/scala/integration/kafka/api/) that no earlier
//! audit cited (apache/kafka trunk of 2024-10; the TV2 rows of `TransactionsExpirationTest`
//! from its 2025 tree), reproduced as the bytes the broker leaves on disk.
//!
//! Each case writes those bytes with the testkit (segments, COMMIT/ABORT markers, producer
//! snapshots, transaction indexes, offset checkpoints, `__transaction_state` where the
//! coordinator takes part), runs `scan`, `verify` and — where a whole log dir is written —
//! the merge of its `collect` bundle, and asserts what Kafka's test says the broker holds:
//! the last stable offset, the aborted transactions a `read_committed` fetch is given, each
//! producer's epoch and sequence, what a leader would have refused, what the load keeps.
//! Each case has a near miss. Where klogscan's answer differs from Kafka's the test asserts
//! Kafka's and is `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

mod expiration;
pub(crate) mod transactions;
mod unifiedlog;

use crate::kafka_quiet_cluster_cases::{Brokers, Verdict, lines, loud};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};
use std::path::PathBuf;

const DAY: i64 = 86_400_000;

/// `(kind, offset)` of every finding, in report order.
fn kinds<'f>(fs: impl IntoIterator<Item = &'f Finding>) -> Vec<(Kind, Option<i64>)> {
    fs.into_iter().map(|f| (f.kind, f.offset)).collect()
}

/// The findings of a one-partition scan at warning or above, as `(kind, offset)`.
fn loud_kinds(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    kinds(
        r.findings
            .iter()
            .filter(|f| f.severity >= Severity::Warning),
    )
}

/// Write `parts` as broker 1's log dir (clean shutdown, producer snapshots, transaction
/// indexes, offset checkpoints; `high_watermarks` as `(topic, partition, offset)`), and run
/// `scan`, `verify` and the merge of its bundle with `opts`.
fn broker(
    parts: Vec<PartitionBuilder>,
    high_watermarks: &[(&str, i32, i64)],
    opts: ScanOptions,
) -> (Brokers, PathBuf, Verdict) {
    let mut ld = LogDirBuilder::new(1);
    for p in parts {
        ld = ld.partition(p);
    }
    for &(t, n, hw) in high_watermarks {
        ld = ld.high_watermark(t, n, hw);
    }
    let mut b = Brokers::new();
    let dir = b.write(1, "data", ld, None);
    let v = b.check_with(opts);
    (b, dir, v)
}

/// The partition `topic`-`n` of a report.
pub(crate) fn part<'r>(
    r: &'r ScanReport,
    topic: &str,
    n: i32,
) -> &'r klogscan::results::PartitionReport {
    r.partitions
        .iter()
        .find(|p| p.topic == topic && p.partition == n)
        .unwrap_or_else(|| panic!("no {topic}-{n}"))
}

/// `(producer, first offset, last offset, last stable offset)` of the aborted transactions
/// of `topic`-`n` in a report.
pub(crate) fn aborted_of(r: &ScanReport, topic: &str, n: i32) -> Vec<(i64, i64, i64, i64)> {
    part(r, topic, n)
        .outcome()
        .aborted
        .iter()
        .map(|a| {
            (
                a.producer_id,
                a.first_offset,
                a.last_offset,
                a.last_stable_offset,
            )
        })
        .collect()
}

/// Nothing at warning or above in `fs`, with every finding listed on failure.
fn assert_not_loud<'f>(name: &str, fs: impl IntoIterator<Item = &'f Finding> + Clone) {
    let l = loud(fs.clone());
    assert!(l.is_empty(), "{name}: {l:#?}\n(all: {:#?})", lines(fs));
}
