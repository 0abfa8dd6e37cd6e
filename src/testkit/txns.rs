//! Multi-partition transactions as a cluster writes them: data on 2–4 partitions, the
//! coordinator's `__transaction_state` records (Ongoing → Prepare* → Complete*, optional)
//! and the markers, under transaction version 0/1 (markers at the data's epoch) or 2
//! (markers and the next transaction one epoch up), with the faults the cross-partition
//! rules look for: a flipped marker, a lost marker, a partition the coordinator never
//! listed, a coordinator stuck in Prepare*, a coordinator failover that re-sends markers.
//!
//! ```
//! use klogscan::testkit::txns::{Cluster, Txn};
//! use klogscan::testkit::Producer;
//! let dir = tempfile::tempdir().unwrap();
//! let mut c = Cluster::new(Some("c1")).coordinator(7);
//! let p = Producer::transactional(100, 0);
//! let p = c.run(&Txn::new("app", p, &[("a", 0), ("b", 1)]));
//! c.run(&Txn::new("app", p, &[("a", 0)]).abort());
//! let data = c.write(dir.path(), 1).unwrap();
//! assert!(data.join("a-0").is_dir() && data.join("__transaction_state-7").is_dir());
//! ```

use super::scenario::{Batch, DEFAULT_START_MS, PartitionBuilder, Producer, Rec};
use super::txnlog::{TxnValue, key, state};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Records a transaction writes on one partition instead of generated ones, with a fixed
/// base sequence when given: a transactional offset commit in `__consumer_offsets`, which
/// the group coordinator writes with base sequence 0 whatever the producer wrote before
/// (`GroupMetadataManager.generateOffsetRecords`).
#[derive(Debug, Clone)]
pub struct Payload {
    pub tp: Tp,
    pub records: Vec<Rec>,
    pub base_sequence: Option<i32>,
}

/// A partition, as `(topic, partition)`.
pub type Tp = (&'static str, i32);

/// One transaction to write, with optional faults.
#[derive(Debug, Clone)]
pub struct Txn {
    pub transactional_id: String,
    /// The producer id and the epoch of the data.
    pub producer: Producer,
    pub partitions: Vec<Tp>,
    /// Records per partition (0: the partition gets a marker but no data).
    pub records: usize,
    pub commit: bool,
    /// Marker epoch (default: the data's epoch, +1 under TV2).
    pub marker_epoch: Option<i16>,
    /// This partition gets the other marker type.
    pub flip_marker_on: Option<Tp>,
    /// These partitions get no marker.
    pub skip_marker_on: Vec<Tp>,
    /// These partitions get data but are not in the coordinator's records (and no marker).
    pub unlisted: Vec<Tp>,
    /// Stop after the Prepare record: no marker, no Complete.
    pub stop_after_prepare: bool,
    /// Write no Complete record.
    pub no_complete: bool,
    /// The coordinator fails over after writing this many markers: the new coordinator
    /// (coordinator epoch + 1) re-sends every marker 30 s later.
    pub failover_after: Option<usize>,
    /// Leave the transaction open (data only, Ongoing record).
    pub open: bool,
    /// These partitions get these records as the transaction's data (see [`Payload`]).
    pub payloads: Vec<Payload>,
}

impl Txn {
    /// A committed transaction of `producer` on `partitions`, 2 records each.
    pub fn new(id: &str, producer: Producer, partitions: &[Tp]) -> Txn {
        Txn {
            transactional_id: id.to_string(),
            producer,
            partitions: partitions.to_vec(),
            records: 2,
            commit: true,
            marker_epoch: None,
            flip_marker_on: None,
            skip_marker_on: Vec::new(),
            unlisted: Vec::new(),
            stop_after_prepare: false,
            no_complete: false,
            failover_after: None,
            open: false,
            payloads: Vec::new(),
        }
    }
    /// `records` as the data on `tp` (a listed partition), base sequence `seq` when given.
    pub fn payload(mut self, tp: Tp, records: Vec<Rec>, seq: Option<i32>) -> Txn {
        self.payloads.push(Payload {
            tp,
            records,
            base_sequence: seq,
        });
        self
    }
    /// Abort instead of commit.
    pub fn abort(mut self) -> Txn {
        self.commit = false;
        self
    }
    /// Records per partition.
    pub fn records(mut self, n: usize) -> Txn {
        self.records = n;
        self
    }
    /// The markers' epoch.
    pub fn marker_epoch(mut self, e: i16) -> Txn {
        self.marker_epoch = Some(e);
        self
    }
    /// The other marker type on `tp`.
    pub fn flip_marker_on(mut self, tp: Tp) -> Txn {
        self.flip_marker_on = Some(tp);
        self
    }
    /// No marker on `tp`.
    pub fn skip_marker_on(mut self, tp: Tp) -> Txn {
        self.skip_marker_on.push(tp);
        self
    }
    /// Data on `tp` that the coordinator never listed.
    pub fn unlisted(mut self, tp: Tp) -> Txn {
        self.unlisted.push(tp);
        self
    }
    /// No marker and no Complete record after the Prepare record.
    pub fn stuck_in_prepare(mut self) -> Txn {
        self.stop_after_prepare = true;
        self
    }
    /// No Complete record.
    pub fn no_complete(mut self) -> Txn {
        self.no_complete = true;
        self
    }
    /// Coordinator failover after `n` markers.
    pub fn failover_after(mut self, n: usize) -> Txn {
        self.failover_after = Some(n);
        self
    }
    /// Left open.
    pub fn open(mut self) -> Txn {
        self.open = true;
        self
    }
}

/// Partitions of one cluster plus, optionally, its `__transaction_state` partition.
pub struct Cluster {
    cluster_id: Option<String>,
    tv2: bool,
    clock: i64,
    coordinator_epoch: i32,
    partitions: BTreeMap<Tp, PartitionBuilder>,
    /// `__transaction_state` partitions written, by partition number.
    coordinator: BTreeMap<i32, PartitionBuilder>,
    /// `Some(p)`: every id's records go to `__transaction_state-p`; `None`: to the
    /// partition that owns the id among `coordinator_count`.
    coordinator_fixed: Option<i32>,
    coordinator_count: i32,
    timeout_ms: i32,
    /// `Some(lead)`: a producer in a tight loop (see [`Cluster::tight_loop`]).
    tight: Option<i64>,
    /// When the previous transaction's first marker landed (tight loop).
    last_first_marker: Option<i64>,
    /// Per transactional id, the producer id and epoch of its latest coordinator record.
    last_value: BTreeMap<String, (i64, i16)>,
}

impl Cluster {
    /// A TV0/1 cluster (`cluster.id` written to `meta.properties` when given; with `None`
    /// no `meta.properties` is written).
    pub fn new(cluster_id: Option<&str>) -> Cluster {
        Cluster {
            cluster_id: cluster_id.map(str::to_string),
            tv2: false,
            clock: DEFAULT_START_MS,
            coordinator_epoch: 0,
            partitions: BTreeMap::new(),
            coordinator: BTreeMap::new(),
            coordinator_fixed: None,
            coordinator_count: 0,
            timeout_ms: 60_000,
            tight: None,
            last_first_marker: None,
            last_value: BTreeMap::new(),
        }
    }
    /// Transaction version 2: markers one epoch above the data, next transaction there.
    pub fn tv2(mut self) -> Cluster {
        self.tv2 = true;
        self
    }
    /// A producer in a tight loop: each transaction's data is stamped `lead_ms` before the
    /// previous transaction's first marker lands (its first `send()` follows the EndTxn
    /// answer, which the coordinator gives after its Prepare record, as it sends the
    /// markers), and the transactions follow one another without a pause.
    pub fn tight_loop(mut self, lead_ms: i64) -> Cluster {
        self.tight = Some(lead_ms);
        self
    }
    /// The transaction timeout the coordinator's records carry (default 60 s;
    /// `i32::MAX`: KIP-939 two-phase-commit transactions).
    pub fn timeout(mut self, ms: i32) -> Cluster {
        self.timeout_ms = ms;
        self
    }
    /// Write the coordinator's records to `__transaction_state-<partition>`.
    pub fn coordinator(mut self, partition: i32) -> Cluster {
        self.coordinator_fixed = Some(partition);
        self.coordinator_count = partition.saturating_add(1).max(50);
        self
    }
    /// Write the coordinator's records as a broker does: each transactional id to the
    /// `__transaction_state` partition that owns it among `count` (`Utils.abs(hashCode) %
    /// count`, `transaction.state.log.num.partitions`, default 50).
    pub fn coordinator_partitions(mut self, count: i32) -> Cluster {
        self.coordinator_fixed = None;
        self.coordinator_count = count.max(1);
        self
    }
    /// The `__transaction_state` partition the records of `id` go to (`None` without a
    /// coordinator).
    pub fn coordinator_partition_of(&self, id: &str) -> Option<i32> {
        if self.coordinator_count == 0 {
            return None;
        }
        Some(self.coordinator_fixed.unwrap_or_else(|| {
            crate::discover::identity::transaction_partition_for(id, self.coordinator_count)
        }))
    }
    fn coordinator_log(&mut self, id: &str) -> Option<&mut PartitionBuilder> {
        let p = self.coordinator_partition_of(id)?;
        Some(
            self.coordinator
                .entry(p)
                .or_insert_with(|| PartitionBuilder::new("__transaction_state", p)),
        )
    }
    /// The cluster clock (ms).
    pub fn now(&self) -> i64 {
        self.clock
    }
    /// Move the clock.
    pub fn advance(&mut self, ms: i64) -> &mut Self {
        self.clock += ms;
        self
    }

    fn partition(&mut self, tp: Tp) -> &mut PartitionBuilder {
        self.partitions
            .entry(tp)
            .or_insert_with(|| PartitionBuilder::new(tp.0, tp.1))
    }

    fn tick(&mut self, ms: i64) -> i64 {
        let t = self.clock;
        self.clock += ms;
        t
    }

    /// Non-transactional data (traffic between transactions).
    pub fn plain(&mut self, tp: Tp, records: usize) {
        let ts = self.tick(10);
        self.partition(tp)
            .append(Batch::new(Producer::PLAIN).records(records).at(ts));
    }

    /// Data of `producer` with no coordinator record (what a compacted coordinator log
    /// keeps of a transaction whose Ongoing record a later value superseded).
    pub fn data(&mut self, tp: Tp, producer: Producer, records: usize) {
        let ts = self.tick(10);
        self.partition(tp)
            .append(Batch::new(producer).records(records).at(ts));
    }

    /// Append `b` to `tp` at the cluster clock, outside any transaction this cluster runs
    /// (a fenced producer's late write, an offset commit the coordinator never listed).
    pub fn append(&mut self, tp: Tp, b: Batch) {
        let ts = self.tick(10);
        self.partition(tp).append(b.at(ts));
    }

    /// A COMMIT/ABORT of `producer` on `tp` from coordinator epoch `coordinator_epoch`,
    /// outside any transaction this cluster runs (a deposed coordinator's late marker).
    pub fn marker_from(
        &mut self,
        tp: Tp,
        producer: Producer,
        commit: bool,
        coordinator_epoch: i32,
    ) {
        let ts = self.tick(10);
        let p = self.partition(tp);
        let now = p.now();
        p.advance_time(ts - now);
        p.end_txn(producer, commit, coordinator_epoch);
    }

    /// The partition leader epoch of `tp`'s next batches (a new leader after a broker
    /// restart: followers copy the leader's batches, so every replica carries it).
    pub fn set_leader_epoch(&mut self, tp: Tp, epoch: i32) {
        self.partition(tp).set_leader_epoch(epoch);
    }

    /// The coordinator epoch of the markers written next.
    pub fn coordinator_epoch(&self) -> i32 {
        self.coordinator_epoch
    }

    /// Append a raw coordinator record (`None`: a tombstone) at the cluster clock.
    pub fn coordinator_record(&mut self, id: &str, v: Option<TxnValue>) {
        let ts = self.tick(5);
        if let Some(c) = self.coordinator_log(id) {
            let rec = match v {
                Some(v) => Rec::kv(key(id), v.encode()),
                None => Rec::tombstone(key(id)),
            };
            c.append(Batch::new(Producer::PLAIN).record(rec).at(ts));
        }
    }

    fn coord_record(&mut self, id: &str, v: TxnValue) {
        self.last_value
            .insert(id.to_string(), (v.producer_id, v.producer_epoch));
        let ts = self.tick(5);
        if let Some(c) = self.coordinator_log(id) {
            c.append(
                Batch::new(Producer::PLAIN)
                    .record(Rec::kv(key(id), v.encode()))
                    .at(ts),
            );
        }
    }

    fn value(&self, t: &Txn, epoch: i16, status: u8, parts: &[Tp], start: i64) -> TxnValue {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (topic, p) in parts {
            by_topic.entry(topic).or_default().push(*p);
        }
        let listed: Vec<(&str, &[i32])> =
            by_topic.iter().map(|(t, v)| (*t, v.as_slice())).collect();
        let mut v = TxnValue::new(t.producer.id, epoch, status)
            .timeout(self.timeout_ms)
            .times(self.clock, start);
        if !parts.is_empty() {
            v = v.partitions(&listed);
        }
        if self.tv2 {
            v = v.v1(-1, -1, 2);
        }
        v
    }

    fn marker(&mut self, tp: Tp, producer: Producer, commit: bool) {
        let ts = self.tick(10);
        let ce = self.coordinator_epoch;
        let p = self.partition(tp);
        let now = p.now();
        p.advance_time(ts - now);
        p.end_txn(producer, commit, ce);
    }

    /// Write `t` (data, coordinator records, markers); returns the producer of the next
    /// transaction (one epoch up under TV2).
    pub fn run(&mut self, t: &Txn) -> Producer {
        let id = t.transactional_id.as_str();
        let start = self.clock;
        let listed: Vec<Tp> = t
            .partitions
            .iter()
            .copied()
            .filter(|tp| !t.unlisted.contains(tp))
            .collect();
        let e = t.producer.epoch;
        // A producer at a higher epoch than the id's last record got it from InitProducerId
        // (`TransactionMetadata.prepareIncrementProducerEpoch`), which the coordinator
        // writes as an Empty value before the transaction's Ongoing.
        if (self.last_value.get(id)).is_some_and(|&(pid, le)| pid == t.producer.id && e > le) {
            let v = self.value(t, e, state::EMPTY, &[], start);
            self.coord_record(id, v);
        }
        let v = self.value(t, e, state::ONGOING, &listed, start);
        self.coord_record(id, v);
        for &tp in &t.partitions {
            let payload = t.payloads.iter().find(|p| p.tp == tp);
            if t.records == 0 && payload.is_none() {
                continue;
            }
            let ts = match (self.tight, self.last_first_marker) {
                (Some(lead), Some(marker)) => marker - lead,
                _ => self.tick(10),
            };
            let b = match payload {
                Some(p) => {
                    let b = (p.records.iter().cloned()).fold(Batch::new(t.producer), Batch::record);
                    match p.base_sequence {
                        Some(s) => b.sequence(s),
                        None => b,
                    }
                }
                None => Batch::new(t.producer).records(t.records),
            };
            self.partition(tp).append(b.at(ts));
        }
        if t.open {
            return t.producer;
        }
        self.advance(if self.tight.is_some() { 5 } else { 100 });
        let end_epoch = t
            .marker_epoch
            .unwrap_or(if self.tv2 { e.saturating_add(1) } else { e });
        let (prepare, complete) = if t.commit {
            (state::PREPARE_COMMIT, state::COMPLETE_COMMIT)
        } else {
            (state::PREPARE_ABORT, state::COMPLETE_ABORT)
        };
        let v = self.value(t, end_epoch, prepare, &listed, start);
        self.coord_record(id, v);
        if t.stop_after_prepare {
            return t.producer.with_epoch(end_epoch);
        }
        let marker_producer = t.producer.with_epoch(end_epoch);
        let targets: Vec<Tp> = listed
            .iter()
            .copied()
            .filter(|tp| !t.skip_marker_on.contains(tp))
            .collect();
        self.last_first_marker = Some(self.clock);
        for (i, &tp) in targets.iter().enumerate() {
            if t.failover_after == Some(i) {
                break;
            }
            let commit = t.commit != (t.flip_marker_on == Some(tp));
            self.marker(tp, marker_producer, commit);
        }
        if t.failover_after.is_some() {
            self.coordinator_epoch += 1;
            self.advance(30_000);
            for &tp in &targets {
                let commit = t.commit != (t.flip_marker_on == Some(tp));
                self.marker(tp, marker_producer, commit);
            }
        }
        if !t.no_complete {
            let v = self.value(t, end_epoch, complete, &[], start);
            self.coord_record(id, v);
        }
        self.advance(if self.tight.is_some() { 2 } else { 1000 });
        if self.tv2 {
            t.producer.with_epoch(end_epoch)
        } else {
            t.producer
        }
    }

    /// Write every partition (and the coordinator's) into the log dir `dir`, with a
    /// `meta.properties` naming `broker_id` and the cluster id when the cluster has one.
    /// Returns `dir`.
    pub fn write(&self, dir: &Path, broker_id: i32) -> std::io::Result<PathBuf> {
        self.write_only(dir, broker_id, |_| true, true)
    }

    /// Like [`Cluster::write`], only the partitions `keep` accepts, and the coordinator's
    /// partition when `with_coordinator`.
    pub fn write_only(
        &self,
        dir: &Path,
        broker_id: i32,
        keep: impl Fn(Tp) -> bool,
        with_coordinator: bool,
    ) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        for (tp, p) in &self.partitions {
            if keep(*tp) {
                p.write(dir)?;
            }
        }
        for c in self.coordinator.values().filter(|_| with_coordinator) {
            c.write(dir)?;
        }
        if let Some(c) = &self.cluster_id {
            std::fs::write(
                dir.join("meta.properties"),
                format!("#\nversion=0\nbroker.id={broker_id}\ncluster.id={c}\n"),
            )?;
        }
        Ok(dir.to_path_buf())
    }
}
