//! False alarms on long-lived, healthy coordinator logs: `__transaction_state` and
//! `__consumer_offsets` as brokers leave them after months of life — after the log cleaner
//! and the coordinators' own expiry (`TransactionStateManager.removeExpiredTransactionalIds`,
//! `GroupMetadataManager.cleanupGroupMetadata`), coordinator failovers, partition counts
//! other than 50 with non-ASCII ids, producer-id rotations, record versions changing over
//! upgrades, and an operator's `kafka-transactions.sh abort` — beside the data partitions
//! that still hold the old producers' transactions and markers.
//!
//! `scan` (`request::run`, plain and `--deep`) and `verify` (`request::verify`) must report
//! nothing at warning or above, and `verify` must predict a clean start. Each healthy case
//! has a twin that differs by one fact and must be reported. Each case cites the Kafka class
//! and method that makes the shape healthy (apache/kafka trunk of 2024-10; the 2025-10 tree
//! where it says so). A case where klogscan raises a warning or an error on healthy data is
//! `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
//!
//! Modules: `txn_state` (the cleaner, expiry, failovers, rotations), `placement` (partition
//! counts, non-ASCII ids), `offsets` (`__consumer_offsets` over years), `admin_abort`
//! (`kafka-transactions.sh abort`).
#![cfg(feature = "testkit")]

pub(crate) use crate::common::quiet::lines;
use crate::common::quiet::{assert_clean_start, assert_silent, scan_dir, verify_dir};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, LogDirBuilder, LogDirManifest, PartitionBuilder, Producer, Rec};
use klogscan::verify::VerifyReport;
use std::collections::BTreeMap;
use tempfile::TempDir;

mod admin_abort;
pub(crate) mod offsets;
mod placement;
mod txn_state;

pub(crate) const DAY: i64 = 86_400_000;
pub(crate) const MIN: i64 = 60_000;
pub(crate) const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;

/// A partition, as `(topic, partition)`.
pub(crate) type Tp = (&'static str, i32);

// ----- scanning -----------------------------------------------------------------------------

/// A written log dir and what `scan`, `scan --deep` and `verify` say of it.
pub(crate) struct Quiet {
    pub dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub deep: ScanReport,
    pub verify: VerifyReport,
}

/// Write `ld` into a new temporary directory, then scan (plain and deep) and verify it.
pub(crate) fn write_and_check(ld: LogDirBuilder) -> Quiet {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    Quiet {
        scan: scan_dir(dir.path(), false),
        deep: scan_dir(dir.path(), true),
        verify: verify_dir(dir.path()),
        dir,
        manifest,
    }
}

impl Quiet {
    /// Nothing at warning or above from `scan`, `scan --deep` or `verify`, and a clean start
    /// predicted for every partition.
    pub(crate) fn assert_quiet(&self) {
        assert_silent(&self.scan, &self.deep, &self.verify);
        self.assert_clean_start();
    }

    /// `verify` predicts the start after a clean shutdown (`common::quiet`).
    pub(crate) fn assert_clean_start(&self) {
        assert_clean_start(&self.verify, &self.manifest);
    }

    /// The findings of `kind` in the plain scan, at warning or above.
    pub(crate) fn loud_of(&self, kind: Kind) -> Vec<&Finding> {
        self.scan
            .findings
            .iter()
            .filter(|f| f.kind == kind && f.severity >= Severity::Warning)
            .collect()
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

    /// `collect` of the log dir, then `merge` of the bundle (the dir gone meanwhile), gives
    /// the JSON report of `scan`, byte for byte (`tests/suite/bundle.rs`'s contract).
    pub(crate) fn assert_merge_equals_scan(self) {
        let bundles = tempfile::tempdir().unwrap();
        let dirs = vec![self.dir.path().to_path_buf()];
        let scanned = klogscan::pipeline::scan(&dirs, &ScanOptions::default());
        let f = bundles.path().join("0.klb");
        let w = std::fs::File::create(&f).unwrap();
        klogscan::bundle::collect(&dirs, &ScanOptions::default(), std::io::BufWriter::new(w))
            .unwrap();
        self.dir.close().unwrap();
        let merged = klogscan::bundle::merge(&[f], &ScanOptions::default()).unwrap();
        let (a, b) = (
            crate::common::json(scanned),
            crate::common::json(merged.report),
        );
        if a != b {
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            panic!("merge differs from scan at line {line:?}\nscan:\n{a}\nmerge:\n{b}");
        }
    }
}

// ----- writing ------------------------------------------------------------------------------

/// A cluster over time: `__transaction_state` partitions (each id on the partition that owns
/// it among `count`: `TransactionStateManager.partitionFor`), data partitions, one clock.
/// Coordinator batches carry the coordinator partition's leader epoch, which is the
/// coordinator epoch its markers carry (`TransactionStateManager.loadTransactionsForTxnTopicPartition`
/// is called with the partition's leader epoch).
pub(crate) struct World {
    pub clock: i64,
    pub count: i32,
    pub coord: BTreeMap<i32, PartitionBuilder>,
    pub data: BTreeMap<Tp, PartitionBuilder>,
}

impl World {
    pub(crate) fn new(count: i32) -> World {
        World {
            clock: T0,
            count,
            coord: BTreeMap::new(),
            data: BTreeMap::new(),
        }
    }

    /// The `__transaction_state` partition of `id`.
    pub(crate) fn partition_of(&self, id: &str) -> i32 {
        klogscan::discover::identity::transaction_partition_for(id, self.count)
    }

    pub(crate) fn coord_log(&mut self, id: &str) -> &mut PartitionBuilder {
        let n = self.partition_of(id);
        self.coord
            .entry(n)
            .or_insert_with(|| PartitionBuilder::new("__transaction_state", n))
    }

    /// The coordinator of `id`'s partition moves to leader epoch `epoch` (a failover).
    pub(crate) fn coord_epoch(&mut self, id: &str, epoch: i32) {
        self.coord_log(id).set_leader_epoch(epoch);
    }

    /// `n` offsets of `id`'s coordinator partition removed by the cleaner here.
    pub(crate) fn cleaned(&mut self, id: &str, n: i64) {
        self.coord_log(id).skip_offsets(n);
    }

    fn tick(&mut self, ms: i64) -> i64 {
        let t = self.clock;
        self.clock += ms;
        t
    }

    /// One value of `id` at the clock (its last update time the clock).
    pub(crate) fn put(&mut self, id: &str, v: TxnValue, start: i64) {
        let ts = self.tick(5);
        let v = v.times(ts, start);
        let rec = Rec::kv(key(id), v.encode());
        self.coord_log(id)
            .append(Batch::new(Producer::PLAIN).record(rec.at(ts)).at(ts));
    }

    /// The tombstones of expired ids on one coordinator partition, in one batch
    /// (`removeExpiredTransactionalIds` appends one batch per partition).
    pub(crate) fn tombstones(&mut self, ids: &[&str]) {
        let ts = self.tick(5);
        let mut b = Batch::new(Producer::PLAIN).at(ts);
        for id in ids {
            b = b.record(Rec::tombstone(key(id)).at(ts));
        }
        self.coord_log(ids[0]).append(b);
    }

    pub(crate) fn part(&mut self, tp: Tp) -> &mut PartitionBuilder {
        self.data
            .entry(tp)
            .or_insert_with(|| PartitionBuilder::new(tp.0, tp.1))
    }

    /// `records` records of `p` on `tp` at the clock.
    pub(crate) fn produce(&mut self, tp: Tp, p: Producer, records: usize) {
        let ts = self.tick(10);
        self.part(tp).append(Batch::new(p).records(records).at(ts));
    }

    /// A COMMIT/ABORT marker of `p` on `tp` at the clock, coordinator epoch `ce`.
    pub(crate) fn marker(&mut self, tp: Tp, p: Producer, commit: bool, ce: i32) {
        let ts = self.tick(10);
        let b = self.part(tp);
        let now = b.now();
        b.advance_time(ts - now);
        b.end_txn(p, commit, ce);
    }

    /// The values of one transaction of `id`.
    pub(crate) fn value(pid: i64, epoch: i16, st: u8, tps: &[Tp], tv2: bool) -> TxnValue {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in tps {
            by_topic.entry(t).or_default().push(*p);
        }
        let listed: Vec<(&str, &[i32])> =
            by_topic.iter().map(|(t, v)| (*t, v.as_slice())).collect();
        let mut v = TxnValue::new(pid, epoch, st);
        if !tps.is_empty() {
            v = v.partitions(&listed);
        }
        if tv2 { v.v1(-1, -1, 2) } else { v }
    }

    /// `InitProducerId`: the `Empty` value of `p` (`TransactionMetadata.prepareIncrementProducerEpoch`
    /// or, for a new id, the metadata `TransactionCoordinator.handleInitProducerId` creates).
    pub(crate) fn init(&mut self, id: &str, p: Producer, tv2: bool) {
        let v = Self::value(p.id, p.epoch, state::EMPTY, &[], tv2);
        self.put(id, v, -1);
    }

    /// One whole transaction of `p` under TV0/1 (markers at its epoch, coordinator epoch
    /// `ce`): `Ongoing`, the data, `Prepare*`, the markers, `Complete*`
    /// (`TransactionCoordinator.handleEndTransaction`, `TransactionMarkerChannelManager`,
    /// `TransactionMetadata.prepareComplete`).
    pub(crate) fn txn(&mut self, id: &str, p: Producer, tps: &[Tp], commit: bool, ce: i32) {
        let start = self.clock;
        self.put(
            id,
            Self::value(p.id, p.epoch, state::ONGOING, tps, false),
            start,
        );
        for &tp in tps {
            self.produce(tp, p, 2);
        }
        self.clock += 200;
        let (prep, done) = ends(commit);
        self.put(id, Self::value(p.id, p.epoch, prep, tps, false), start);
        for &tp in tps {
            self.marker(tp, p, commit, ce);
        }
        self.put(id, Self::value(p.id, p.epoch, done, &[], false), start);
        self.clock += 1_000;
    }

    /// Everything written, as one broker's log dir after a clean shutdown.
    pub(crate) fn log_dir(self) -> LogDirBuilder {
        let mut ld = LogDirBuilder::new(1);
        for (_, p) in self.coord.into_iter() {
            ld = ld.partition(p);
        }
        for (_, p) in self.data.into_iter() {
            ld = ld.partition(p);
        }
        ld
    }
}

/// `(Prepare*, Complete*)` of a commit or an abort.
pub(crate) fn ends(commit: bool) -> (u8, u8) {
    if commit {
        (state::PREPARE_COMMIT, state::COMPLETE_COMMIT)
    } else {
        (state::PREPARE_ABORT, state::COMPLETE_ABORT)
    }
}
