//! The one model of the transaction coordinator, per `__transaction_state` partition copy:
//! [`CoordModel`], built by one replay of the copy's records in offset order
//! ([`Replay`]). Every reader reads it: the coordinator's view (the latest value of each
//! transactional id, as `TransactionStateManager`'s load keeps it) and the hanging
//! confirmation through it, the rule-31 history (`HistoryChecker`, fed by the same
//! replay), and the cross-partition join (`cluster::txns`: the ordered transactions of
//! each id and the epoch-exhaustion shapes).
//!
//! A transaction is what `TransactionMetadata` moves through between two idle states:
//! Ongoing records add partitions, PrepareCommit/PrepareAbort end the producer's part (under
//! TV2 with the bumped epoch the markers carry), CompleteCommit/CompleteAbort record that
//! every marker was written (`TransactionLog.readTxnRecordValue` gives each record's
//! state, producer id and epoch, partitions and times). Its state changes are kept as the
//! offsets and times of its first record, its Prepare record and its latest record.
//! Compaction keeps only a suffix of each id's history, so a transaction may be known from
//! its Prepare or Complete record alone. A tombstone ends the id's history
//! (`TransactionStateManager` drops a removed id on load). A Prepare* or Complete* record
//! that repeats the id's previous one is the same transition appended again after a failed
//! append (`CoordValue::repeats`), not a transaction of its own.
//!
//! Memory: per transactional id, its latest value and the transaction in progress; the
//! finished transactions are kept only for the producer ids the join can match
//! ([`Replay::new`]'s `wanted`: the producer ids of the data partitions' transactions),
//! plus each id's latest finished one (what `transaction_stuck_in_prepare` reads); the
//! others are counted ([`CoordModel::summarised`]). The partition sets of the kept
//! transactions are shared (a producer loop alternates between a few sets).

use super::history::HistoryChecker;
use super::{CoordinatorTxn, Source};
use crate::cluster::txns::exhaustion;
use crate::cluster::txns::{
    CoordRecord, CoordValue, CoordinatorLog, Origin, RecordProblem, UnreadBatch,
};
use crate::read::format::txnlog::TxnState;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// A transaction's partitions, shared by the transactions listing the same set.
pub type PartitionSet = Arc<BTreeSet<(String, i32)>>;

/// One transaction as the coordinator recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoordTxn {
    pub transactional_id: Arc<str>,
    /// `__transaction_state-N`.
    pub log_partition: i32,
    /// Index of its [`CoordModel`] among the join's coordinator models.
    #[serde(skip)]
    pub log: usize,
    pub producer_id: i64,
    /// The producer id the Complete record moved to (TV2 epoch exhaustion), else -1.
    pub next_producer_id: i64,
    /// Epoch of the transaction's data (the Ongoing record's; under TV2 the Prepare
    /// epoch − 1 when only that is known).
    pub data_epoch: i16,
    /// Epoch of the Prepare/Complete record (what the markers carry).
    pub end_epoch: Option<i16>,
    pub client_transaction_version: i16,
    pub timeout_ms: i32,
    /// The latest state of this transaction.
    pub state: TxnState,
    /// `Some(true)` commit, `Some(false)` abort, `None` still ongoing.
    pub commit: Option<bool>,
    /// Union of the partitions of its Ongoing/Prepare records; `None` when only a Complete
    /// record is known (Complete records list none).
    pub partitions: Option<PartitionSet>,
    pub start_ms: i64,
    pub prepare_ms: Option<i64>,
    pub complete_ms: Option<i64>,
    pub last_update_ms: i64,
    /// Offsets of its first and latest records.
    pub first_record_offset: i64,
    pub last_record_offset: i64,
    /// Offset of its Prepare record.
    pub prepare_offset: Option<i64>,
    /// A tombstone of its transactional id followed its records: the coordinator's load
    /// drops the id (`TransactionStateManager` skips a removed id), so nothing of it is
    /// pending any more.
    #[serde(skip)]
    pub removed: bool,
    /// Known only from an abort's Prepare/Complete record: the coordinator may have
    /// written it itself (a timeout abort, an InitProducerId fence), which bumps the epoch
    /// once more than a client's EndTxn (`prepareFenceProducerEpoch` before
    /// `prepareAbortOrCommit`: the data at the record's epoch − 1 under TV0/1, − 2 under
    /// TV2; `TransactionCoordinatorTest.shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch`),
    /// so the data may also be one epoch below `data_epoch` ([`Self::holds_data_epoch`]).
    #[serde(skip)]
    pub fenced_abort_possible: bool,
    /// The `ClientTransactionVersion` its end recorded: that of its Prepare* value (of its
    /// Complete* value when only that is known), the EndTxn request's own
    /// (`TransactionMetadata.prepareAbortOrCommit` stores it, `prepareComplete` keeps it);
    /// `None` when that value is v0, which records none (a broker at `transaction.version`
    /// 0, `TransactionLog.valueToBytes`), or the transaction has not ended.
    #[serde(skip)]
    pub end_version: Option<i16>,
    /// Its first record follows the id's Empty value of the same producer id at its data
    /// epoch: an InitProducerId began that epoch (`TransactionMetadata.
    /// prepareIncrementProducerEpoch`, or a new producer id at 0), so no earlier
    /// transaction of the producer ran at it.
    #[serde(skip)]
    pub opens_epoch: bool,
}

impl CoordTxn {
    /// The producer ids this transaction's markers may carry.
    pub fn has_pid(&self, pid: i64) -> bool {
        self.producer_id == pid || (self.next_producer_id >= 0 && self.next_producer_id == pid)
    }
    /// Whether data at producer epoch `e` can be this transaction's: its data epoch, or,
    /// for an abort known only from its end record, the one below (a coordinator-written
    /// abort bumps once more).
    pub fn holds_data_epoch(&self, e: i16) -> bool {
        e == self.data_epoch
            || (self.fenced_abort_possible && e >= 0 && e == self.data_epoch.saturating_sub(1))
    }
    /// Transaction version 2 (the client said so in the value).
    pub fn tv2(&self) -> bool {
        self.client_transaction_version >= 2
    }

    fn new(id: &Arc<str>, partition: i32, offset: i64, v: &CoordValue) -> CoordTxn {
        let tv2 = v.client_transaction_version >= 2;
        let preparing = matches!(v.state, TxnState::PrepareCommit | TxnState::PrepareAbort);
        let completing = matches!(v.state, TxnState::CompleteCommit | TxnState::CompleteAbort);
        let data_epoch = if tv2 && (preparing || completing) {
            v.producer_epoch.saturating_sub(1)
        } else {
            v.producer_epoch
        };
        CoordTxn {
            transactional_id: id.clone(),
            log_partition: partition,
            log: 0,
            producer_id: v.producer_id,
            next_producer_id: -1,
            data_epoch,
            end_epoch: None,
            client_transaction_version: v.client_transaction_version,
            timeout_ms: v.timeout_ms,
            state: v.state,
            commit: None,
            partitions: None,
            start_ms: v.start_ms,
            prepare_ms: None,
            complete_ms: None,
            last_update_ms: v.last_update_ms,
            first_record_offset: offset,
            last_record_offset: offset,
            prepare_offset: None,
            removed: false,
            fenced_abort_possible: matches!(
                v.state,
                TxnState::PrepareAbort | TxnState::CompleteAbort
            ),
            end_version: None,
            opens_epoch: false,
        }
    }

    /// Add the partitions of an Ongoing/Prepare value (copied once: a set shared with
    /// finished transactions is not changed).
    fn add_partitions(&mut self, parts: &[(String, i32)]) {
        let set = Arc::make_mut(self.partitions.get_or_insert_with(Default::default));
        for tp in parts {
            if !set.contains(tp) {
                set.insert(tp.clone());
            }
        }
    }
}

/// The latest value of one transactional id in one partition copy, as the coordinator's
/// view merges it ([`super::CoordinatorView`]).
#[derive(Debug, Clone, Default)]
pub struct LatestValue {
    /// The latest value, with the tombstone that followed it if one did.
    pub value: Option<CoordinatorTxn>,
    /// A tombstone read before any value of the id in this copy (it removes what an
    /// earlier copy of the view held).
    pub first_tombstone: Option<Source>,
}

/// One `__transaction_state` partition copy, replayed once.
#[derive(Debug, Clone)]
pub struct CoordModel {
    /// The version of the inputs it was built from.
    pub version: u32,
    /// `__transaction_state-N`.
    pub partition: i32,
    pub origin: Origin,
    /// The reference time of the copy's verdicts (ms).
    pub ref_time_ms: i64,
    /// The batches of this copy whose records were not read
    /// ([`CoordinatorLog::records_not_read`]).
    pub records_not_read: Vec<UnreadBatch>,
    /// Records whose key and value decoded (null ids included).
    pub records: u64,
    /// Offset of the last record the join reads ([`CoordRecord::usable`]), -1 when none.
    pub last_usable_offset: i64,
    /// Records the coordinator's load fails on, as `offset N: message`.
    pub errors: Vec<String>,
    /// Offset of the first record the coordinator's load fails on, if any: its load stops
    /// there (see [`Replay::record`]), so [`Self::ids`] holds the values read before it.
    pub load_stop: Option<i64>,
    /// Transactional id → its latest value, as the coordinator's load leaves it.
    pub ids: BTreeMap<String, LatestValue>,
    /// Rule 31: the copy's history, replayed per transactional id.
    pub history: HistoryChecker,
    /// The transactions kept (see the module docs), in the order they ended, then the
    /// ones still in progress by first record.
    pub txns: Vec<CoordTxn>,
    /// Epoch-exhaustion shapes (`TransactionMetadata.isProducerEpochExhausted`), in
    /// record order, then the Prepare records still at risk by offset.
    pub exhaustion: Vec<exhaustion::Hit>,
    /// Finished transactions not kept: of producer ids no data partition of the inputs
    /// holds, and not their id's latest.
    pub summarised: u64,
    /// The metadata log's current leader holds this copy: the coordinator loads it (`leader`).
    pub leader_copy: bool,
}

impl CoordModel {
    /// The model as the `index`th of the join's coordinator models
    /// ([`CoordTxn::log`]).
    pub fn at(mut self, index: usize) -> CoordModel {
        for t in &mut self.txns {
            t.log = index;
        }
        self
    }

    /// Replay a decoded copy (the join's serialisable inputs: the testkit's and the tests'
    /// way in; a scan replays the walked records directly), keeping the finished transactions of the producer ids
    /// `wanted` holds (all of them when `None`).
    #[cfg_attr(not(feature = "testkit"), allow(dead_code))]
    pub fn of(log: &CoordinatorLog, wanted: Option<Arc<HashSet<i64>>>) -> CoordModel {
        let mut r = Replay::new(log.partition, log.origin.clone(), log.ref_time_ms, wanted);
        r.segments = log.segments.clone();
        for u in &log.records_not_read {
            r.unread(u.clone());
        }
        for rec in &log.records {
            r.record(rec.clone());
        }
        let mut m = r.finish();
        m.version = log.version;
        m
    }
}

/// What the replay holds of one transactional id.
#[derive(Debug, Default)]
struct IdState {
    id: Option<Arc<str>>,
    latest: LatestValue,
    /// The transaction in progress.
    current: Option<CoordTxn>,
    /// The latest finished transaction not kept, with its end order.
    pending: Option<(u64, CoordTxn)>,
    /// The previous decoded value of the id (cleared by a tombstone), with its offset.
    last_value: Option<(i64, CoordValue)>,
    /// The exhaustion hit that holds only while `last_value` is the id's latest
    /// ([`exhaustion::Settle::Latest`]), by index.
    latest_hit: Option<usize>,
}

/// The replay of one partition copy, record by record ([`Replay::record`]), in offset
/// order.
#[derive(Debug)]
pub struct Replay {
    model: CoordModel,
    /// Segment names ([`CoordRecord::segment`] indexes them).
    pub segments: Vec<String>,
    wanted: Option<Arc<HashSet<i64>>>,
    state: HashMap<String, IdState>,
    /// Kept finished transactions with their end order.
    done: Vec<(u64, CoordTxn)>,
    ended: u64,
    sets: HashSet<PartitionSet>,
    /// The copy was read to its end (not cut by `--max-bytes`): what ends its log is known.
    tail_read: bool,
    /// The coordinator that loads the copy is Kafka 4.3 or later
    /// ([`Self::loaded_by_kafka_4_3`]): it skips a value of an unknown version, and
    /// completes a transaction at epoch 32767 without overflowing it.
    since_kafka_4_3: bool,
}

impl Replay {
    /// An empty replay of copy `partition` at `origin`.
    pub fn new(
        partition: i32,
        origin: Origin,
        ref_time_ms: i64,
        wanted: Option<Arc<HashSet<i64>>>,
    ) -> Replay {
        Replay {
            model: CoordModel {
                version: crate::cluster::txns::INPUT_VERSION,
                partition,
                origin,
                ref_time_ms,
                records_not_read: Vec::new(),
                records: 0,
                last_usable_offset: -1,
                errors: Vec::new(),
                load_stop: None,
                ids: BTreeMap::new(),
                history: HistoryChecker::default(),
                txns: Vec::new(),
                exhaustion: Vec::new(),
                summarised: 0,
                leader_copy: false,
            },
            segments: Vec::new(),
            wanted,
            state: HashMap::new(),
            done: Vec::new(),
            ended: 0,
            sets: HashSet::new(),
            tail_read: true,
            since_kafka_4_3: false,
        }
    }

    /// The copy is loaded by Kafka 4.3 or later: since apache/kafka PR #21405
    /// (`TransactionLog.read` returns `UnknownValueVersion`) `TransactionStateManager
    /// .loadTransactionMetadata` logs a warning for a value of a version it does not know
    /// and goes on, as for a key of another version; earlier releases' reader throws
    /// ("Unknown version … from the transaction log message value") and the load stops
    /// there. Set only where the release is known (`LeaderCopies::loaded_by_kafka_4_3`).
    /// The same releases carry KAFKA-20090: no producer is stuck at epoch 32767 there
    /// ([`Self::finish`]).
    pub fn loaded_by_kafka_4_3(&mut self) {
        self.since_kafka_4_3 = true;
        self.model.history.skip_unknown_value_versions();
    }

    /// The copy's records stop before its log ends (a read cut by `--max-bytes`): how the
    /// log ends is not known.
    pub fn tail_not_read(&mut self) {
        self.tail_read = false;
    }

    /// A batch of the copy whose records were not read.
    pub fn unread(&mut self, u: UnreadBatch) {
        self.model.records_not_read.push(u);
    }

    /// Feed one record (the next in offset order).
    pub fn record(&mut self, r: CoordRecord) {
        let src = Source {
            partition: self.model.partition,
            offset: r.offset,
            path: self.model.origin.path.clone(),
        };
        let segment = self
            .segments
            .get(r.segment as usize)
            .map_or("", String::as_str);
        let retry = self.retried(&r);
        self.model.history.record(&r, segment, src.clone(), retry);
        // `TransactionStateManager.loadTransactionMetadata` reads the records in a loop
        // whose error handler logs "Error loading transactions from transaction log" and
        // returns what was loaded so far: the first record it cannot read (a null key, a
        // key or value that does not decode, a null transactional id, an unknown state)
        // ends the load, and the coordinator serves the ids as they were before it. A key
        // of another version is skipped, not a failure.
        let skipped = |p: &RecordProblem| match p {
            RecordProblem::KeyVersion(_) => true,
            RecordProblem::ValueVersion { .. } => self.since_kafka_4_3,
            _ => false,
        };
        let fails = r.problem.as_deref().is_some_and(|p| !skipped(p));
        if fails && self.model.load_stop.is_none() {
            self.model.load_stop = Some(r.offset);
        }
        match r.problem.as_deref() {
            Some(p) => {
                if let Some(e) = p.error().filter(|_| !skipped(p)) {
                    self.model.errors.push(format!("offset {}: {e}", r.offset));
                }
                return;
            }
            None => self.model.records += 1,
        }
        if !self.state.contains_key(&r.transactional_id) {
            self.state
                .insert(r.transactional_id.clone(), IdState::default());
        }
        let st = self
            .state
            .get_mut(&r.transactional_id)
            .expect("inserted above");
        if self.model.load_stop.is_none() {
            apply_latest(&mut st.latest, &r, src);
        }
        if !r.usable() {
            return;
        }
        self.model.last_usable_offset = r.offset;
        let id = st
            .id
            .get_or_insert_with(|| Arc::from(r.transactional_id.as_str()))
            .clone();
        let Some(v) = r.value else {
            st.last_value = None;
            exhaustion::superseded(&mut self.model.exhaustion, st.latest_hit.take());
            if let Some(mut t) = st.current.take() {
                t.removed = true;
                self.end(&id, t);
            }
            return;
        };
        if retry {
            // The same transition written twice (`CoordValue::repeats`): one transaction,
            // whose Prepare* record the coordinator took from the retry (its markers follow
            // it); a Complete* retry finds it already ended.
            if let Some(t) = st.current.as_mut() {
                t.last_update_ms = v.last_update_ms;
                t.last_record_offset = r.offset;
            }
            st.last_value = Some((r.offset, v));
            return;
        }
        let prev = st.last_value.as_ref().map(|(o, p)| (*o, p));
        exhaustion::superseded(&mut self.model.exhaustion, st.latest_hit);
        st.latest_hit = exhaustion::on_value(&id, r.offset, &v, prev, &mut self.model.exhaustion);
        let cur = st.current.take();
        let partition = self.model.partition;
        let (ended, mut next) = step(&id, partition, r.offset, &v, cur);
        let st = self.state.get_mut(&*id).expect("inserted above");
        // A transaction begun by this record right after the producer's Empty at its
        // epoch opens that epoch ([`CoordTxn::opens_epoch`]).
        if let (Some(t), Some((_, e))) = (next.as_mut(), st.last_value.as_ref())
            && t.first_record_offset == r.offset
        {
            t.opens_epoch = e.state == TxnState::Empty
                && e.producer_id == t.producer_id
                && e.producer_epoch == t.data_epoch;
        }
        st.last_value = Some((r.offset, v));
        for t in ended.into_iter().flatten() {
            self.end(&id, t);
        }
        if let Some(t) = next {
            let st = self.state.get_mut(&*id).expect("inserted above");
            st.current = Some(t);
        }
    }

    /// Record `r` is a retried append of its id's previous value
    /// ([`CoordValue::repeats`]).
    fn retried(&self, r: &CoordRecord) -> bool {
        let Some(v) = r.value.as_ref().filter(|_| r.usable()) else {
            return false;
        };
        self.state
            .get(&r.transactional_id)
            .and_then(|s| s.last_value.as_ref())
            .is_some_and(|(_, prev)| v.repeats(prev))
    }

    /// A transaction of `id` ended (completed, superseded or removed): kept when its
    /// producer ids are wanted, else held as the id's latest until a later one ends.
    fn end(&mut self, id: &str, mut t: CoordTxn) {
        self.ended += 1;
        if let Some(set) = t.partitions.take() {
            t.partitions = Some(match self.sets.get(&set) {
                Some(s) => s.clone(),
                None => {
                    self.sets.insert(set.clone());
                    set
                }
            });
        }
        let keep = self.wanted.as_ref().is_none_or(|w| {
            w.contains(&t.producer_id)
                || (t.next_producer_id >= 0 && w.contains(&t.next_producer_id))
        });
        if keep {
            self.done.push((self.ended, t));
            return;
        }
        if let Some(st) = self.state.get_mut(id)
            && st.pending.replace((self.ended, t)).is_some()
        {
            self.model.summarised += 1;
        }
    }

    /// The model: the kept transactions and each id's latest unkept one in the order they
    /// ended, then those still in progress by first record.
    pub fn finish(mut self) -> CoordModel {
        // Only a live copy is what a coordinator loads: a `-future`, `-delete` or `-stray`
        // copy's last batches leave its records as they are (`unknown_key_version`), as
        // does a copy whose end was not read.
        if self.model.origin.live && self.tail_read {
            self.model.history.settle_load(&self.model.records_not_read);
        }
        let mut pending = Vec::new();
        let mut rest = Vec::new();
        let mut latest = Vec::new();
        for (name, st) in self.state {
            pending.extend(st.pending);
            rest.extend(st.current);
            if let Some((offset, v)) = &st.last_value {
                latest.push((st.id.clone().unwrap_or_default(), *offset, v.clone()));
            }
            self.model.ids.insert(name, st.latest);
        }
        pending.sort_by_key(|(n, _)| *n);
        let mut done = std::mem::take(&mut self.done);
        done.extend(pending);
        done.sort_by_key(|(n, _)| *n);
        rest.sort_by_key(|t| t.first_record_offset);
        self.model.txns = done.into_iter().map(|(_, t)| t).chain(rest).collect();
        self.model
            .exhaustion
            .retain(|h| h.settle != exhaustion::Settle::Superseded);
        latest.sort_by_key(|x| x.1);
        for (id, offset, v) in latest {
            exhaustion::at_risk(&id, offset, &v, &mut self.model.exhaustion);
        }
        if self.since_kafka_4_3 {
            // KAFKA-20090 (4.3.0; on no earlier branch): `TransactionMetadata
            // .prepareAbortOrCommit` keeps epoch 32767 instead of overflowing it, and the
            // EndTxn of an exhausted epoch rotates the producer id (the epoch-fence path
            // too): a client left at 32767 by an earlier coordinator completes its next
            // transaction under a new producer id, with no error.
            exhaustion::drop_stuck(&mut self.model.exhaustion);
        }
        self.model
    }
}

/// One value of an id in the transactions' sequence: the transactions it ends and the one
/// in progress after it.
fn step(
    id: &Arc<str>,
    partition: i32,
    offset: i64,
    v: &CoordValue,
    cur: Option<CoordTxn>,
) -> ([Option<CoordTxn>; 2], Option<CoordTxn>) {
    let new = || CoordTxn::new(id, partition, offset, v);
    match v.state {
        TxnState::Ongoing => {
            let (other, mut t) = match cur {
                Some(t)
                    if t.state == TxnState::Ongoing
                        && t.producer_id == v.producer_id
                        && t.data_epoch == v.producer_epoch =>
                {
                    (None, t)
                }
                other => (other, new()),
            };
            t.add_partitions(&v.partitions);
            t.state = v.state;
            t.last_update_ms = v.last_update_ms;
            t.last_record_offset = offset;
            ([other, None], Some(t))
        }
        TxnState::PrepareCommit | TxnState::PrepareAbort => {
            let (other, mut t) = match cur {
                Some(t) if t.state == TxnState::Ongoing && t.producer_id == v.producer_id => {
                    (None, t)
                }
                // The abort of a transaction whose Prepare* append failed: the same
                // transaction, its outcome the abort's (no marker of the failed Prepare*
                // was sent; `supersedes_failed_prepare`).
                Some(t) if failed_prepare_aborted(&t, v) => (None, t),
                other => (other, new()),
            };
            t.add_partitions(&v.partitions);
            t.state = v.state;
            t.commit = Some(v.state == TxnState::PrepareCommit);
            t.end_epoch = Some(v.producer_epoch);
            t.prepare_ms = Some(v.last_update_ms);
            t.prepare_offset = Some(offset);
            t.last_update_ms = v.last_update_ms;
            t.last_record_offset = offset;
            t.client_transaction_version = t
                .client_transaction_version
                .max(v.client_transaction_version);
            t.end_version = recorded_version(v);
            ([other, None], Some(t))
        }
        TxnState::CompleteCommit | TxnState::CompleteAbort => {
            let commit = v.state == TxnState::CompleteCommit;
            let (other, mut t) = match cur {
                Some(t)
                    if t.commit == Some(commit)
                        && t.complete_ms.is_none()
                        && (t.producer_id == v.producer_id
                            || t.producer_id == v.previous_producer_id
                            || overflow_complete(&t, v)) =>
                {
                    (None, t)
                }
                other => {
                    let mut t = new();
                    t.end_epoch = Some(v.producer_epoch);
                    (other, t)
                }
            };
            if v.producer_id != t.producer_id {
                t.next_producer_id = v.producer_id;
            }
            t.state = v.state;
            t.commit = Some(commit);
            t.complete_ms = Some(v.last_update_ms);
            t.end_version = t.end_version.or(recorded_version(v));
            t.last_update_ms = v.last_update_ms;
            t.last_record_offset = offset;
            ([other, Some(t)], None)
        }
        // Empty, Dead, PrepareEpochFence: no transaction in progress.
        _ => ([cur, None], None),
    }
}

/// The `ClientTransactionVersion` value `v` records: a v1 value's (`None` for a v0
/// value, which has no such field).
fn recorded_version(v: &CoordValue) -> Option<i16> {
    (v.version >= 1).then_some(v.client_transaction_version)
}

/// `v` is a PrepareAbort aborting `t`, whose Prepare* append failed
/// ([`crate::cluster::txns::input::supersedes_failed_prepare`]).
fn failed_prepare_aborted(t: &CoordTxn, v: &CoordValue) -> bool {
    let (Some(epoch), None) = (t.end_epoch, t.complete_ms) else {
        return false;
    };
    let state = t.state;
    let tv2 = t.client_transaction_version >= 2 || v.client_transaction_version >= 2;
    crate::cluster::txns::input::supersedes_failed_prepare(
        (state, t.producer_id, epoch),
        (v.state, v.producer_id, v.producer_epoch),
        tv2,
    )
}

/// A Complete value that ends `t`'s Prepare at the exhausted epoch under transaction
/// version 2 without naming the producer id it left: the new producer id at epoch 0
/// (`TransactionMetadata.prepareComplete` switches to the next producer id; the
/// `isOverflowComplete` shape `TransactionMetadata` accepts). Brokers before KAFKA-20310
/// write no PreviousProducerId, so the pair is known by its shape alone.
fn overflow_complete(t: &CoordTxn, v: &CoordValue) -> bool {
    v.producer_epoch == 0
        && v.client_transaction_version >= 2
        && t.prepare_offset.is_some()
        && t.end_epoch.is_some_and(|e| e >= i16::MAX - 1)
}

/// The view's latest value of an id after record `r` (later offsets replace earlier ones):
/// a tombstone marks the value removed; an in-progress value's partitions are what the
/// last transaction held, which a Complete value (listing none) of the same producer id
/// and epoch keeps.
fn apply_latest(l: &mut LatestValue, r: &CoordRecord, src: Source) {
    let Some(v) = &r.value else {
        match &mut l.value {
            Some(e) => e.tombstoned = Some(src),
            None => l.first_tombstone = Some(src),
        }
        return;
    };
    let last_txn_partitions = if v.state.is_in_progress() {
        v.partitions.clone()
    } else {
        match &l.value {
            Some(e)
                if e.producer_id == v.producer_id
                    && e.tombstoned.is_none()
                    && (e.producer_epoch == v.producer_epoch
                        // TV2: the Complete record may carry the bumped epoch
                        || e.producer_epoch.checked_add(1) == Some(v.producer_epoch)) =>
            {
                e.last_txn_partitions.clone()
            }
            _ => Vec::new(),
        }
    };
    l.value = Some(CoordinatorTxn {
        transactional_id: r.transactional_id.clone(),
        producer_id: v.producer_id,
        previous_producer_id: v.previous_producer_id,
        next_producer_id: v.next_producer_id,
        producer_epoch: v.producer_epoch,
        timeout_ms: v.timeout_ms,
        state: v.state,
        // `TransactionLog.readTxnRecordValue` reads no partition of an Empty value.
        partitions: if v.state == TxnState::Empty {
            Vec::new()
        } else {
            v.partitions.clone()
        },
        last_txn_partitions,
        last_update_ms: v.last_update_ms,
        start_ms: v.start_ms,
        client_transaction_version: v.client_transaction_version,
        tombstoned: None,
        source: src,
    });
}

#[cfg(test)]
mod tests;
