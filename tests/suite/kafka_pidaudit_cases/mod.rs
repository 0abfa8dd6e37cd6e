//! Kafka-test audit of what the producer-id lifecycle leaves on disk, for the test classes
//! no klogscan test cited before (apache/kafka trunk of 2024-10):
//! `ProducerIdExpirationTest` (core/src/test/scala/integration/kafka/api/: producer ids and
//! transactional ids expiring, then the same producer writing again),
//! `TransactionMarkerRequestCompletionHandlerTest`
//! (core/src/test/scala/unit/kafka/coordinator/transaction/: which marker write errors
//! retry the marker, which drop it), `VerificationGuardTest` (core/src/test/scala/unit/
//! kafka/log/: a transactional batch needs its own transaction's verification),
//! `ProducerIdManagerTest` (core/src/test/scala/unit/kafka/coordinator/transaction/) and
//! `ProducerIdsIntegrationTest` (core/src/test/scala/integration/kafka/coordinator/
//! transaction/: producer ids handed out in blocks, never twice).
//!
//! Each case writes what the partition leaders (and, where it takes part, the transaction
//! coordinator's `__transaction_state` or the KRaft metadata log) leave with the testkit,
//! runs `scan`, `verify` and the merge of the log dir's `collect` bundle, and asserts what
//! Kafka does — a producer that legitimately restarted is not reported, a marker the
//! coordinator dropped is not missing — with a near miss that flips the answer. Where
//! klogscan's answer differs from Kafka's the test asserts Kafka's and is
//! `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

mod blocks;
mod expiry;
mod guard;
mod markers;

use crate::kafka_quiet_cluster_cases::{Brokers, Verdict, lines};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};

const HOUR: i64 = 3_600_000;
const DAY: i64 = 86_400_000;

fn opts() -> ScanOptions {
    ScanOptions::default().with_keep_producers(true)
}

/// Write `c` as broker 1's log dir and run `scan`, `verify` and the merge.
fn run(c: &klogscan::testkit::txns::Cluster) -> (Brokers, Verdict) {
    Brokers::of_cluster(c, opts())
}

/// `(kind, offset)` of the findings at warning or above, in report order.
fn loud_kinds<'f>(fs: impl IntoIterator<Item = &'f Finding>) -> Vec<(Kind, Option<i64>)> {
    (fs.into_iter())
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.kind, f.offset))
        .collect()
}

/// Whether `fs` holds a finding of `kind` at `offset`.
fn has<'f>(fs: impl IntoIterator<Item = &'f Finding>, kind: Kind, offset: i64) -> bool {
    (fs.into_iter()).any(|f| f.kind == kind && f.offset == Some(offset))
}

/// Write `parts` as broker 1's log dir and run `scan`, `verify` and the merge.
fn broker(parts: Vec<PartitionBuilder>) -> (Brokers, Verdict) {
    let mut ld = LogDirBuilder::new(1);
    for p in parts {
        ld = ld.partition(p);
    }
    let mut b = Brokers::new();
    b.write(1, "data", ld, None);
    let v = b.check_with(opts());
    (b, v)
}

/// The partition `topic`-`n` of a report.
fn part<'r>(r: &'r ScanReport, topic: &str, n: i32) -> &'r klogscan::results::PartitionReport {
    (r.partitions.iter())
        .find(|p| p.topic == topic && p.partition == n)
        .unwrap_or_else(|| panic!("no {topic}-{n}"))
}

/// `(producer id, epoch, last sequence)` of every producer of `topic`-`n`.
fn producers(r: &ScanReport, topic: &str, n: i32) -> Vec<(i64, i16, i32)> {
    (part(r, topic, n).outcome().producers.iter())
        .map(|s| (s.producer_id, s.producer_epoch, s.last_sequence))
        .collect()
}

/// Every finding of the verdict's scan, one line each (for failure messages).
fn all(v: &Verdict) -> Vec<String> {
    lines(&v.scan.findings)
}
