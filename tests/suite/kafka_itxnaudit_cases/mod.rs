//! Kafka-test audit of the transaction integration tests: the methods of `TransactionsTest`,
//! `TransactionsBounceTest` and `TransactionsWithMaxInFlightOneTest`
//! (core/src/test/scala/integration/kafka/api/, apache/kafka trunk of 2024-10; the methods
//! added since from the 2025–2026 tree, where the Scala `TransactionsTest` gained TV2 and
//! KIP-939 cases) that no earlier audit cited.
//!
//! Each method drives producers and consumers through real brokers; what it leaves on disk is
//! written here with the testkit's `txns::Cluster`: the data partitions (transactional
//! batches, COMMIT/ABORT markers, producer snapshots, `.txnindex`), the coordinator's
//! `__transaction_state` values and the group coordinator's transactional offset commits in
//! `__consumer_offsets`. Each case runs `scan`, `verify` and the merge of the brokers'
//! `collect` bundles and asserts what the Kafka test asserts (what a read_committed consumer
//! sees, the group's committed offsets, the producers' epochs, that a fenced write is
//! refused), plus a near miss that flips the answer. Where klogscan's answer differs from
//! Kafka's the test asserts Kafka's and is `#[ignore = "divergence: …"]`.
//!
//! The coordinators' partitions are where a broker with the default partition counts puts
//! them (`transaction.state.log.num.partitions` and `offsets.topic.num.partitions`, 50 each:
//! the id's or group's `Utils.abs(hashCode) % 50`): the tests' own counts (3 and 1) reach
//! klogscan only through the cluster's KRaft metadata log, which these cases do not write.
//! The reference time is an hour after the last write, past every transaction's timeout.
#![cfg(feature = "testkit")]

mod bounce;
mod fencing;
mod offsets;
mod tv2;

use crate::kafka_psmaudit_cases::{aborted_of, part};
use crate::kafka_quiet_cluster_cases::{Brokers, CLUSTER, Verdict, lines};
use crate::kafka_quiet_coordinator_cases::offsets::CoordRecord;
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Finding, Kind};
use klogscan::partition::groups::{GroupState, GroupsOptions, list_groups};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::Rec;
use klogscan::testkit::groups::record;
use klogscan::testkit::txns::{Cluster, Tp};
use std::collections::BTreeMap;

const HOUR: i64 = 3_600_000;

/// The `__consumer_offsets` partition of `group` (`GroupCoordinatorService.partitionFor`:
/// the same `Utils.abs(hashCode) % count` as a transactional id's).
fn offsets_of(group: &str) -> Tp {
    ("__consumer_offsets", transaction_partition_for(group, 50))
}

/// Keep the producers; the reference time an hour after `c`'s clock.
fn opts_at(c: &Cluster) -> ScanOptions {
    ScanOptions::default()
        .with_keep_producers(true)
        .with_now_ms(c.now() + HOUR)
}

/// A TV0/1 cluster whose coordinator writes each id where a default broker does.
fn cluster() -> Cluster {
    Cluster::new(Some(CLUSTER)).coordinator_partitions(50)
}

/// `c` as broker 1's log dir: `scan`, `verify` and the merge of its bundle.
fn check(c: &Cluster) -> (Brokers, Verdict) {
    Brokers::of_cluster(c, opts_at(c))
}

/// A coordinator record as the record it is written as.
fn rec((t, k, v): CoordRecord) -> Rec {
    let (k, v) = record(t, k, v);
    match v {
        Some(v) => Rec::kv(k, v),
        None => Rec::tombstone(k),
    }
}

/// The live group `group`'s committed offsets in the brokers' `__consumer_offsets`, as
/// `(topic, partition)` → `(offset, leader epoch, metadata)`.
fn committed(b: &Brokers, group: &str) -> BTreeMap<(String, i32), (i64, i32, String)> {
    let inv = klogscan::discover::layout::discover(&b.all());
    let groups = list_groups(&inv, &GroupsOptions::default());
    let g = (groups.iter())
        .find(|g| g.group_id == group && g.state == GroupState::Live)
        .unwrap_or_else(|| panic!("no live group {group}: {groups:#?}"));
    (g.offsets.iter())
        .map(|c| {
            (
                (c.topic.clone(), c.partition),
                (c.offset, c.leader_epoch, c.metadata.clone()),
            )
        })
        .collect()
}

/// `(kind, topic, partition, offset)` of the findings of these kinds, in report order.
fn of_kinds<'f>(
    fs: impl IntoIterator<Item = &'f Finding>,
    kinds: &[Kind],
) -> Vec<(Kind, String, i32, Option<i64>)> {
    (fs.into_iter())
        .filter(|f| kinds.contains(&f.kind))
        .map(|f| (f.kind, f.topic.clone(), f.partition, f.offset))
        .collect()
}

/// The cluster transactions' `(committed, aborted, open, partial, mixed)` counts.
fn txn_counts(r: &ScanReport) -> (u64, u64, u64, u64, u64) {
    let s = &r
        .transactions
        .as_ref()
        .expect("the cross-partition join")
        .stats;
    (s.committed, s.aborted, s.open, s.partial, s.mixed)
}

/// Every partition of `r` has nothing undecided: its last stable offset is its log end.
fn all_decided(name: &str, r: &ScanReport) {
    for p in &r.partitions {
        assert_eq!(
            p.last_stable_offset,
            p.log_end_offset,
            "{name}: {}-{} ({:#?})",
            p.topic,
            p.partition,
            lines(&r.findings)
        );
    }
}
