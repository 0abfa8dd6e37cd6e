//! Kafka's `TransactionStateManagerTest` (core/src/test/scala/unit/kafka/coordinator/
//! transaction/, apache/kafka trunk of 2024-10), the methods no test cited before, and the
//! `TransactionMetadataTest` methods that decide what those leave on disk: the transaction
//! coordinator's load of `__transaction_state` (`TransactionStateManager.
//! loadTransactionsForTxnTopicPartition`: the latest value of each transactional id, the
//! markers it sends for a transaction left in PrepareCommit/PrepareAbort), its timeout
//! check (`timedOutTransactions`: Ongoing transactions past their timeout, counted from
//! their start), its expiration of idle transactional ids (`removeExpiredTransactionalIds`:
//! tombstones for Empty/Complete* ids only, in batches no larger than the partition's
//! `max.message.bytes`), and where an id lives (`partitionFor`:
//! `Utils.abs(id.hashCode) % partitionCount`, the only partition the coordinator reads the
//! id from), and which copy of a partition it loads (the new leader's log).
//!
//! Each case writes what the coordinator and the partition leaders leave on disk with the
//! testkit (`__transaction_state-N`, the data partitions with their COMMIT/ABORT markers,
//! spread over brokers where the case spans them), runs `scan`, `verify` and the merge of
//! the brokers' `collect` bundles ([`Brokers::check_with`]), and asserts what Kafka's
//! coordinator holds after loading those bytes and what it would do next. Each has a near
//! miss. Where klogscan's answer differs from Kafka's the test asserts Kafka's and is
//! `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

mod expiry;
mod load;
pub(crate) mod metadata;
mod owner;
mod replicas;
mod timeout;

use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, bootstrap, broker_epoch_at_start, partition, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, T0, Verdict, lines, loud};
use klogscan::cluster::coordinator::{CoordinatorTxn, CoordinatorView};
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::MetaRecord;
use klogscan::request;
use klogscan::testkit::txnlog::{TxnValue, key};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use serde_json::Value;
use std::collections::BTreeMap;

pub(crate) const SEC: i64 = 1000;
pub(crate) const MIN: i64 = 60 * SEC;
/// `transactional.id.expiration.ms` default (7 days).
pub(crate) const EXPIRATION_MS: i64 = 7 * 24 * 60 * MIN;

/// The scan options of a case: the reference time `now` (`--now`), and the default
/// `--hanging-after` unless `hanging_after` says otherwise.
pub(crate) fn opts(now: i64, hanging_after: Option<i64>) -> ScanOptions {
    let o = ScanOptions::default().with_now_ms(now);
    match hanging_after {
        Some(ms) => o.with_hanging_after_ms(ms),
        None => o,
    }
}

/// What a cluster's brokers hold: partitions per broker, and optionally the KRaft metadata
/// log every broker keeps (then each partition is created in it on the brokers holding it,
/// `__transaction_state` with `txn_partitions` partitions, more added later by
/// `txn_partitions_added`).
pub(crate) struct World {
    parts: BTreeMap<(i32, String, i32), PartitionBuilder>,
    kraft: Option<Kraft>,
    /// Metadata records the controller writes at `T0` + 5 s (a leader change).
    later: Vec<MetaRecord>,
    /// `(broker, topic, partition, high watermark)` for `replication-offset-checkpoint`.
    high_watermarks: Vec<(i32, String, i32, i64)>,
    /// Partition copies the metadata log places but the inputs lack (their directories
    /// are not written).
    hidden: Vec<(i32, String, i32)>,
}

struct Kraft {
    txn_partitions: i32,
    txn_partitions_added: i32,
}

impl World {
    pub(crate) fn new() -> World {
        World {
            parts: BTreeMap::new(),
            kraft: None,
            later: Vec::new(),
            high_watermarks: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// The brokers keep a KRaft metadata log in which `__transaction_state` was created
    /// with `count` partitions and later grown by `added` (`CreatePartitions`).
    fn kraft(mut self, count: i32, added: i32) -> World {
        self.kraft = Some(Kraft {
            txn_partitions: count,
            txn_partitions_added: added,
        });
        self
    }

    /// Broker `broker`'s copy of `topic`-`n` (created empty, its clock at `T0`).
    pub(crate) fn part(&mut self, broker: i32, topic: &str, n: i32) -> &mut PartitionBuilder {
        self.parts
            .entry((broker, topic.to_string(), n))
            .or_insert_with(|| PartitionBuilder::new(topic, n).start_time(T0))
    }

    /// Broker `broker`'s copy of `__transaction_state`-`n`.
    pub(crate) fn txn_log(&mut self, broker: i32, n: i32) -> &mut PartitionBuilder {
        self.part(broker, "__transaction_state", n)
    }

    /// The metadata log: brokers 1–3 registered, then each topic the brokers hold (the
    /// replicas of each partition: the brokers holding it; a partition of
    /// `__transaction_state` no broker holds on broker 1), at `T0` - 30 s; the partitions
    /// added to `__transaction_state` at `T0` - 20 s.
    fn metadata(&self, k: &Kraft) -> MetaLog {
        let mut holders: BTreeMap<(String, i32), Vec<i32>> = BTreeMap::new();
        for (b, t, n) in self.parts.keys() {
            holders.entry((t.clone(), *n)).or_default().push(*b);
        }
        for n in 0..k.txn_partitions + k.txn_partitions_added {
            holders
                .entry(("__transaction_state".into(), n))
                .or_insert_with(|| vec![1]);
        }
        let mut m = bootstrap();
        m.at(T0 - 30 * SEC);
        let mut topics: BTreeMap<&str, Vec<_>> = BTreeMap::new();
        let mut added = Vec::new();
        for ((t, n), brokers) in &holders {
            let r = partition(t, *n, brokers, brokers, (brokers[0], 0, 0));
            if t == "__transaction_state" && *n >= k.txn_partitions {
                added.push(r);
            } else {
                topics.entry(t).or_default().push(r);
            }
        }
        for (t, records) in topics {
            let mut batch = vec![topic(t)];
            batch.extend(records);
            m.batch(&batch);
        }
        if !added.is_empty() {
            m.at(T0 - 20 * SEC);
            m.batch(&added);
        }
        if !self.later.is_empty() {
            m.at(T0 + 5 * SEC);
            m.batch(&self.later);
        }
        m
    }

    /// Write every broker's log dir (`<root>/broker-<id>/data`, clean shutdown, offset
    /// checkpoints), with the metadata log when the world keeps one.
    pub(crate) fn write(self) -> Brokers {
        let meta = self.kraft.as_ref().map(|k| self.metadata(k));
        let mut by_broker: BTreeMap<i32, LogDirBuilder> = BTreeMap::new();
        for ((b, t, n), p) in self.parts {
            if self.hidden.contains(&(b, t, n)) {
                continue;
            }
            let ld = by_broker
                .remove(&b)
                .unwrap_or_else(|| LogDirBuilder::new(b));
            by_broker.insert(b, ld.partition(p));
        }
        for (b, t, n, hw) in &self.high_watermarks {
            let ld = by_broker.remove(b).expect("a broker holding partitions");
            by_broker.insert(*b, ld.high_watermark(t, *n, *hw));
        }
        let mut out = Brokers::new();
        for (b, ld) in by_broker {
            let epoch = meta.as_ref().map(|_| broker_epoch_at_start(b));
            let dir = out.write(b, "data", ld, epoch);
            if let Some(m) = &meta {
                m.write(&dir);
            }
        }
        out
    }
}

/// Append the coordinator's write of value `v` of `id` at `t` (one batch per write, as
/// `TransactionStateManager.appendTransactionToLog` appends it).
pub(crate) fn put(log: &mut PartitionBuilder, t: i64, id: &str, v: TxnValue) {
    let rec = Rec::kv(key(id), v.encode()).at(t);
    log.append(Batch::new(Producer::PLAIN).record(rec).at(t));
}

/// Append one batch holding a tombstone of each of `ids` at `t` (one expiration write).
pub(crate) fn tombstones(log: &mut PartitionBuilder, t: i64, ids: &[String]) {
    let mut b = Batch::new(Producer::PLAIN).at(t);
    for id in ids {
        b = b.record(Rec::tombstone(key(id)).at(t));
    }
    log.append(b);
}

/// Append `records` records of `p` at `t`.
pub(crate) fn produce(part: &mut PartitionBuilder, p: Producer, records: usize, t: i64) {
    part.append(Batch::new(p).records(records).at(t));
}

/// Append the COMMIT (or ABORT) marker of `p` at `t`, written by coordinator epoch `ce`.
pub(crate) fn marker(part: &mut PartitionBuilder, p: Producer, commit: bool, ce: i32, t: i64) {
    let now = part.now();
    part.advance_time(t - now);
    part.end_txn(p, commit, ce);
}

/// A value of `pid`/`epoch` in `state`, updated at `update`, started at `start`, timeout
/// `timeout_ms`, listing `parts` (TV0/1: a v0 value, as a 3.x coordinator writes it).
pub(crate) fn value(
    (pid, epoch): (i64, i16),
    state: u8,
    parts: &[(&str, &[i32])],
    (update, start): (i64, i64),
    timeout_ms: i32,
) -> TxnValue {
    let v = TxnValue::new(pid, epoch, state)
        .timeout(timeout_ms)
        .times(update, start);
    if parts.is_empty() {
        v
    } else {
        v.partitions(parts)
    }
}

/// `request::run`'s coordinator view: the views of every cluster in `b`'s log dirs.
pub(crate) fn views(b: &Brokers, o: &ScanOptions) -> Vec<CoordinatorView> {
    let inv = request::discover(&b.all(), o).unwrap();
    CoordinatorView::load_clusters(&inv, o)
}

/// The one cluster's coordinator view of `b`.
pub(crate) fn view(b: &Brokers, o: &ScanOptions) -> CoordinatorView {
    let mut v = views(b, o);
    assert_eq!(v.len(), 1, "one cluster: {v:#?}");
    v.remove(0)
}

/// The ids the coordinator holds after loading (its cache: tombstoned ids are gone).
pub(crate) fn held(v: &CoordinatorView) -> BTreeMap<&str, &CoordinatorTxn> {
    (v.ids.iter())
        .filter(|(_, t)| t.tombstoned.is_none())
        .map(|(id, t)| (id.as_str(), t))
        .collect()
}

pub(crate) fn of_kind<'f>(fs: &[&'f Finding], k: Kind) -> Vec<&'f Finding> {
    fs.iter().copied().filter(|f| f.kind == k).collect()
}

/// `(sub-id, transactional id)` of every `transaction_state_anomaly` in `fs`, sorted.
pub(crate) fn anomalies(fs: &[&Finding]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = of_kind(fs, Kind::TransactionStateAnomaly)
        .into_iter()
        .map(|f| {
            let s = |k: &str| f.evidence[k].as_str().unwrap_or("").to_string();
            (s("anomaly"), s("transactional_id"))
        })
        .collect();
    out.sort();
    out
}

/// The open/hanging transaction finding on `topic`-`n` and its coordinator confirmation.
pub(crate) fn confirmation<'f>(
    fs: &[&'f Finding],
    topic: &str,
    n: i32,
) -> (&'f Finding, &'f Value) {
    let f = (fs.iter().copied())
        .find(|f| {
            matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
                && f.topic == topic
                && f.partition == n
        })
        .unwrap_or_else(|| {
            panic!(
                "no open transaction on {topic}-{n}: {:#?}",
                lines(fs.iter().copied())
            )
        });
    (f, &f.evidence["coordinator"])
}

/// The findings of `scan`, `verify` and the merge of the bundles, by name: the checks of
/// a case must hold of each.
pub(crate) fn reports(v: &Verdict) -> [(&'static str, Vec<&Finding>); 3] {
    [
        ("scan", v.scan.findings.iter().collect()),
        ("verify", v.verify.findings().collect()),
        ("merge", v.merge.findings.iter().collect()),
    ]
}

/// Nothing at warning or above in `fs`.
pub(crate) fn assert_no_loud(name: &str, fs: &[&Finding]) {
    let l = loud(fs.iter().copied());
    assert!(l.is_empty(), "{name}: {l:#?}");
}

/// `transaction_partition_for(id, count)`, named as Kafka names it.
pub(crate) fn partition_for(id: &str, count: i32) -> i32 {
    transaction_partition_for(id, count)
}
