//! A second, independent writer of transactional clusters for the acceptance scenarios: it
//! replays the transaction coordinator's state machine step by step, the way Kafka's
//! `TransactionCoordinator` drives `TransactionMetadata` (`prepareIncrementProducerEpoch`
//! for InitProducerId, `prepareAddPartitions`, `prepareAbortOrCommit`, `prepareComplete`,
//! `prepareFenceProducerEpoch`, `prepareProducerIdRotation`) and writes every transition to
//! `__transaction_state` at the coordinator partition's leader epoch, which is also the
//! coordinator epoch the markers carry (`TransactionMarkerChannelManager.addTxnMarkersToSend`).
//! Data and markers go to the partitions through the testkit's segment writer; nothing here
//! shares code with `klogscan::testkit::txns`.

use klogscan::discover::identity::transaction_partition_for;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A partition, `(topic, partition)`.
pub type Tp = (&'static str, i32);

/// `transaction.state.log.num.partitions` (broker default).
const STATE_PARTITIONS: i32 = 50;
/// The clusters' start: 2023-11-14T22:13:20Z.
pub const T0: i64 = 1_700_000_000_000;
/// `transactional.id.expiration.ms` (broker default, 7 days).
pub const ID_EXPIRATION_MS: i64 = 7 * 24 * 3600 * 1000;

/// What the coordinator holds for one transactional id (`TransactionMetadata`).
#[derive(Debug, Clone)]
pub struct Meta {
    pub id: &'static str,
    pub pid: i64,
    pub prev_pid: i64,
    pub next_pid: i64,
    pub epoch: i16,
    pub timeout_ms: i32,
    pub state: u8,
    pub parts: Vec<Tp>,
    pub start: i64,
    pub last_update: i64,
}

impl Meta {
    /// The producer writing this id's data now.
    pub fn producer(&self) -> Producer {
        Producer::transactional(self.pid, self.epoch)
    }
}

/// Partitions of one cluster (on up to two brokers) and the coordinator's partitions.
pub struct World {
    pub now: i64,
    /// Transaction version 2 (KIP-890) for every client, else 0/1.
    pub tv2: bool,
    /// The coordinator partitions' leader epoch, the coordinator epoch of the markers.
    pub coordinator_epoch: i32,
    parts: BTreeMap<Tp, PartitionBuilder>,
    coords: BTreeMap<i32, PartitionBuilder>,
    /// Producer ids handed out by the producer id manager.
    next_producer_id: i64,
}

impl World {
    pub fn new(tv2: bool) -> World {
        World {
            now: T0,
            tv2,
            coordinator_epoch: 4,
            parts: BTreeMap::new(),
            coords: BTreeMap::new(),
            next_producer_id: 3000,
        }
    }

    /// Move the cluster clock.
    pub fn tick(&mut self, ms: i64) -> i64 {
        self.now += ms;
        self.now
    }

    fn part(&mut self, tp: Tp) -> &mut PartitionBuilder {
        self.parts.entry(tp).or_insert_with(|| {
            PartitionBuilder::new(tp.0, tp.1)
                .start_time(T0)
                .time_step(1)
                .leader_epoch(2)
        })
    }

    /// Write `m` as it stands to its coordinator partition (`TransactionLog.valueToBytes`:
    /// v1 with the tagged fields for TV2 clients, v0 before).
    fn write(&mut self, m: &Meta) {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in &m.parts {
            by_topic.entry(t).or_default().push(*p);
        }
        let listed: Vec<(&str, &[i32])> =
            by_topic.iter().map(|(t, v)| (*t, v.as_slice())).collect();
        let mut v = TxnValue::new(m.pid, m.epoch, m.state)
            .timeout(m.timeout_ms)
            .times(m.last_update, m.start);
        if !listed.is_empty() {
            v = v.partitions(&listed);
        }
        if self.tv2 {
            v = v.v1(m.prev_pid, m.next_pid, 2);
        }
        self.put(m.id, Some(v));
    }

    fn put(&mut self, id: &str, v: Option<TxnValue>) {
        let p = transaction_partition_for(id, STATE_PARTITIONS);
        let (ts, ce) = (self.now, self.coordinator_epoch);
        let log = self
            .coords
            .entry(p)
            .or_insert_with(|| PartitionBuilder::new("__transaction_state", p).time_step(1));
        log.set_leader_epoch(ce);
        let rec = match v {
            Some(v) => Rec::kv(key(id), v.encode()),
            None => Rec::tombstone(key(id)),
        };
        log.append(Batch::new(Producer::PLAIN).record(rec).at(ts));
        self.now += 1;
    }

    fn new_producer_id(&mut self) -> i64 {
        self.next_producer_id += 1;
        self.next_producer_id
    }

    /// InitProducerId of a new (or expired) transactional id: a new producer id at epoch 0,
    /// state Empty (`TransactionMetadata.prepareIncrementProducerEpoch` from epoch -1).
    pub fn init(&mut self, id: &'static str) -> Meta {
        let pid = self.new_producer_id();
        self.init_at(id, pid, 0)
    }

    /// As [`World::init`] with a chosen producer id and epoch (a log whose earlier records
    /// were compacted away).
    pub fn init_at(&mut self, id: &'static str, pid: i64, epoch: i16) -> Meta {
        let m = Meta {
            id,
            pid,
            prev_pid: pid,
            next_pid: -1,
            epoch,
            timeout_ms: 60_000,
            state: state::EMPTY,
            parts: Vec::new(),
            start: -1,
            last_update: self.now,
        };
        self.write(&m);
        m
    }

    /// InitProducerId of an id in Empty/Complete*: the epoch goes one up, state Empty
    /// (`prepareIncrementProducerEpoch`).
    pub fn reinit(&mut self, m: &mut Meta) {
        m.prev_pid = m.pid;
        m.epoch += 1;
        m.state = state::EMPTY;
        m.parts.clear();
        m.start = -1;
        m.last_update = self.now;
        self.write(m);
    }

    /// InitProducerId of an id whose epoch is exhausted: a new producer id at epoch 0,
    /// state Empty (`prepareProducerIdRotation`).
    pub fn rotate(&mut self, m: &mut Meta) {
        m.prev_pid = m.pid;
        m.pid = self.new_producer_id();
        m.epoch = 0;
        m.state = state::EMPTY;
        m.parts.clear();
        m.start = -1;
        m.last_update = self.now;
        self.write(m);
    }

    /// AddPartitionsToTxn (TV2: the leader's verification adds them): an Ongoing record
    /// listing every partition so far (`prepareAddPartitions`).
    pub fn add(&mut self, m: &mut Meta, tps: &[Tp]) {
        if m.state != state::ONGOING {
            m.start = self.now;
            m.parts.clear();
        }
        for tp in tps {
            if !m.parts.contains(tp) {
                m.parts.push(*tp);
            }
        }
        m.prev_pid = m.pid;
        m.state = state::ONGOING;
        m.last_update = self.now;
        self.write(m);
    }

    /// A data batch of `m`'s producer on `tp`, stamped `stamp` by the client.
    pub fn send(&mut self, m: &Meta, tp: Tp, stamp: i64) {
        let p = m.producer();
        self.part(tp).append(Batch::new(p).records(3).at(stamp));
    }

    /// Non-transactional traffic on `tp`.
    pub fn plain(&mut self, tp: Tp) {
        let ts = self.now;
        self.part(tp)
            .append(Batch::new(Producer::PLAIN).records(1).at(ts));
    }

    /// Non-transactional traffic on `tp` as a cleaning pass left it: a batch of two offsets
    /// that keeps one record (the second), the cleaner's trace (`MemoryRecords.filterTo`
    /// keeps a rebuilt batch's first and last offset).
    pub fn cleaned_plain(&mut self, tp: Tp) {
        let ts = self.now;
        let rec = Rec::value("kept").offset_delta(1);
        self.part(tp).append(
            Batch::new(Producer::PLAIN)
                .record(rec)
                .at(ts)
                .tweak(|s| s.overrides.last_offset_delta = Some(1)),
        );
    }

    /// EndTxn: the Prepare record (`prepareAbortOrCommit`). TV2 bumps the epoch, and when
    /// the epoch is exhausted a new producer id is allocated into NextProducerId (TV2's
    /// `endTransaction`).
    pub fn prepare(&mut self, m: &mut Meta, commit: bool) {
        if self.tv2 {
            if m.epoch >= i16::MAX - 1 {
                m.next_pid = self.new_producer_id();
            }
            m.epoch = m.epoch.saturating_add(1);
        }
        m.prev_pid = m.pid;
        m.state = if commit {
            state::PREPARE_COMMIT
        } else {
            state::PREPARE_ABORT
        };
        m.last_update = self.now;
        self.write(m);
    }

    /// The coordinator aborts an Ongoing transaction itself (a timeout, or an InitProducerId
    /// of a new instance): `prepareFenceProducerEpoch` bumps the epoch once, then the abort
    /// goes through `prepareAbortOrCommit` (which bumps it again under TV2).
    pub fn fence(&mut self, m: &mut Meta) {
        m.epoch += 1;
        self.prepare(m, false);
    }

    /// The markers of `m`'s Prepare record on `tps` (each on its leader's clock), at the
    /// producer id and epoch of the Prepare record, with the current coordinator epoch.
    pub fn markers(&mut self, m: &Meta, tps: &[Tp], commit: bool) {
        let ce = self.coordinator_epoch;
        for &tp in tps {
            let ts = self.tick(1);
            let p = self.part(tp);
            let d = ts - p.now();
            p.advance_time(d);
            p.end_txn(m.producer(), commit, ce);
        }
        self.tick(1);
    }

    /// The Complete record (`prepareComplete`): TV2 after a rotation moves to the next
    /// producer id at epoch 0, PreviousProducerId naming the old one.
    pub fn complete(&mut self, m: &mut Meta) {
        m.prev_pid = m.pid;
        if self.tv2 && m.next_pid != -1 {
            m.pid = m.next_pid;
            m.epoch = 0;
        }
        m.next_pid = -1;
        m.state = if m.state == state::PREPARE_COMMIT {
            state::COMPLETE_COMMIT
        } else {
            state::COMPLETE_ABORT
        };
        m.parts.clear();
        m.last_update = self.now;
        self.write(m);
    }

    /// The id expired (`TransactionStateManager.removeExpiredTransactionalIds`): a tombstone.
    pub fn expire(&mut self, m: &Meta) {
        self.put(m.id, None);
    }

    /// The coordinator partitions move to a new leader: a higher leader epoch, which the new
    /// coordinator's markers carry.
    pub fn failover(&mut self) {
        self.coordinator_epoch += 1;
    }

    /// The topics of the data partitions written.
    pub fn topics(&self) -> std::collections::BTreeSet<&'static str> {
        self.parts.keys().map(|tp| tp.0).collect()
    }

    /// Write the partitions `on_first(tp)` accepts (and the coordinator's when
    /// `with_coordinator`) to `dirs[0]`, the rest to `dirs[1]`, each with a
    /// `meta.properties` of the same cluster.
    pub fn write_to(
        &self,
        dirs: &[PathBuf; 2],
        on_first: impl Fn(Tp) -> bool,
        with_coordinator: bool,
    ) -> Vec<PathBuf> {
        for (i, d) in dirs.iter().enumerate() {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(
                d.join("meta.properties"),
                format!("version=0\nbroker.id={}\ncluster.id=acc\n", i + 1),
            )
            .unwrap();
        }
        for (tp, p) in &self.parts {
            let d: &Path = if on_first(*tp) { &dirs[0] } else { &dirs[1] };
            p.write(d).unwrap();
        }
        if with_coordinator {
            for c in self.coords.values() {
                c.write(&dirs[0]).unwrap();
            }
        }
        dirs.to_vec()
    }
}
