//! The typed, versioned inputs of the cluster-wide transaction join: what one partition's
//! replay concluded about its transactions ([`PartitionTxns`]) and what one
//! `__transaction_state` partition copy holds ([`CoordinatorLog`]). Both are
//! `Serialize + Deserialize` so that they can be produced on the machines holding the data
//! and joined elsewhere; [`INPUT_VERSION`] is bumped on incompatible changes.

use crate::partition::state::txnrec::{FirstTxnBatch, TxnRecord};
use crate::read::format::txnlog::{TxnLogValue, TxnState, TxnTopicPartitions};
use serde::{Deserialize, Serialize};

/// Version of [`PartitionTxns`], [`CoordinatorLog`] and [`TxnInputs`].
pub const INPUT_VERSION: u32 = 1;

/// Where an input comes from. Joins happen only within one cluster ([`Origin::domain`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Origin {
    /// `cluster.id` of the log dir's `meta.properties`, when present.
    pub cluster_id: Option<String>,
    /// `node.id` / `broker.id` of `meta.properties`.
    pub broker_id: Option<i32>,
    /// The log dir holding the partition directory.
    pub log_dir: Option<String>,
    /// The partition directory.
    pub path: String,
    /// A live copy (`topic-N`), not `-future`/`-delete`/`-stray`: only live copies count as
    /// the partition.
    pub live: bool,
    /// The log dir's `meta.properties` is version 1 (`finding::Source::kraft`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kraft: bool,
}

/// The join domain of an input: its cluster, or (cluster unknown) its log dir alone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Domain {
    Cluster(String),
    /// No `meta.properties` (or no `cluster.id`): joined only with the same log dir.
    LogDir(String),
}

impl Origin {
    /// The join domain.
    pub fn domain(&self) -> Domain {
        match (&self.cluster_id, &self.log_dir) {
            (Some(c), _) => Domain::Cluster(c.clone()),
            (None, Some(d)) => Domain::LogDir(d.clone()),
            (None, None) => Domain::LogDir(self.path.clone()),
        }
    }
}

/// One partition copy's transactions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionTxns {
    pub version: u32,
    pub topic: String,
    pub partition: i32,
    pub origin: Origin,
    /// The reference time of the partition's verdicts (ms).
    pub ref_time_ms: i64,
    pub log_end_offset: Option<i64>,
    /// Whether the partition is compacted (`None`: its cleanup policy is unknown), as the
    /// producer-state replay read it: the stated policy
    /// ([`crate::partition::results::PartitionReport::compacted`]), else `true` when the
    /// batches carry the cleaner's traces
    /// ([`crate::partition::results::PartitionReport::compaction`]).
    #[serde(default)]
    pub compacted: Option<bool>,
    /// In log order: closed transactions by marker offset, then the open ones.
    pub txns: Vec<TxnRecord>,
    /// The producers whose first batch here is transactional and starts above sequence
    /// 0, the partition's whole history held
    /// ([`crate::partition::state::ReplayOutcome::first_txn_batches`]): what
    /// `first_sequence` holds against the coordinator's transaction version. Absent from
    /// inputs written before it was added (read as none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_txn_batches: Vec<FirstTxnBatch>,
}

/// A decoded `__transaction_state` value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordValue {
    /// Schema version (0, or 1 flexible).
    pub version: i16,
    pub producer_id: i64,
    /// Tagged 0, -1 when absent.
    pub previous_producer_id: i64,
    /// Tagged 1, -1 when absent.
    pub next_producer_id: i64,
    pub producer_epoch: i16,
    /// Tagged 3, -1 when absent.
    pub next_producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// `(topic, partition)`, in stored order (empty for a null array).
    pub partitions: Vec<(String, i32)>,
    pub last_update_ms: i64,
    pub start_ms: i64,
    /// Tagged 2, 0 when absent.
    pub client_transaction_version: i16,
}

impl CoordValue {
    /// The fields of a decoded value.
    pub fn of(v: &TxnLogValue<'_>) -> CoordValue {
        CoordValue {
            version: v.version,
            producer_id: v.producer_id,
            previous_producer_id: v.previous_producer_id,
            next_producer_id: v.next_producer_id,
            producer_epoch: v.producer_epoch,
            next_producer_epoch: v.next_producer_epoch,
            timeout_ms: v.timeout_ms,
            state: v.state,
            partitions: tp_list(&v.partitions),
            last_update_ms: v.last_update_ms,
            start_ms: v.start_ms,
            client_transaction_version: v.client_transaction_version,
        }
    }

    /// `self` is a retried append of `prev`, the id's previous value: the same Prepare*
    /// (producer id, epoch, outcome and partitions) or the same Complete* (producer id,
    /// epoch and outcome). Kafka's coordinator writes a transition again when its append
    /// failed after reaching the leader's log (NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    /// REQUEST_TIMED_OUT: `TransactionStateManager.appendTransactionToLog` answers
    /// COORDINATOR_NOT_AVAILABLE): `TransactionMarkerChannelManager.tryAppendToLog`
    /// re-queues the same Complete* (`TransactionMarkerChannelManagerTest.
    /// shouldRetryAppendToLogOnEndTxnWhenCoordinatorNotAvailableError`), and for a Prepare*
    /// the pending state is reset (`TransactionStateManagerTest.
    /// testAppendFailToCoordinatorNotAvailableError`), so the producer's retried EndTxn
    /// writes it again from the unchanged Ongoing state. The retry's update time may differ
    /// (and a Prepare* at an exhausted epoch may name another NextProducerId).
    pub fn repeats(&self, prev: &CoordValue) -> bool {
        use TxnState::*;
        let same = self.state == prev.state
            && self.producer_id == prev.producer_id
            && self.producer_epoch == prev.producer_epoch;
        match self.state {
            PrepareCommit | PrepareAbort => {
                fn set(v: &CoordValue) -> Vec<&(String, i32)> {
                    let mut ps: Vec<&(String, i32)> = v.partitions.iter().collect();
                    ps.sort_unstable();
                    ps.dedup();
                    ps
                }
                same && set(self) == set(prev)
            }
            CompleteCommit | CompleteAbort => same,
            _ => false,
        }
    }
}

/// A PrepareAbort `cur` after the id's Prepare* `prev` with no Complete* between: the
/// coordinator aborted a transaction whose Prepare* append failed after reaching the log.
/// A failed EndTxn append (answered COORDINATOR_NOT_AVAILABLE) resets the pending
/// state (`TransactionStateManager.appendTransactionToLog`), so the coordinator's state is
/// Ongoing again while the log holds the Prepare*; no marker of it is ever sent. When the
/// producer does not retry, the transaction times out (`TransactionCoordinator.
/// abortTimedOutTransactions`) or a new instance's InitProducerId aborts it
/// (`handleInitProducerId`): `prepareFenceProducerEpoch` bumps the epoch, and the abort
/// writes PrepareAbort at that epoch (or above it under TV2, whose EndTxn bumps too). A
/// Prepare* that reached the coordinator's state cannot be followed by a PrepareAbort: the
/// markers and Complete* follow it (a new coordinator completes it on load), and
/// InitProducerId meanwhile gets CONCURRENT_TRANSACTIONS. `(state, producer id, epoch)`
/// of each; `tv2`: either value has `ClientTransactionVersion` ≥ 2.
pub fn supersedes_failed_prepare(
    prev: (TxnState, i64, i16),
    cur: (TxnState, i64, i16),
    tv2: bool,
) -> bool {
    use TxnState::*;
    let ((ps, ppid, pe), (cs, cpid, ce)) = (prev, cur);
    matches!(ps, PrepareCommit | PrepareAbort)
        && cs == PrepareAbort
        && cpid == ppid
        && (ce > pe || (tv2 && ce == pe && ps == PrepareCommit))
}

/// A value's partitions as `(topic, partition)`, in stored order (a null topic reads
/// `null`).
pub fn tp_list(parts: &Option<Vec<TxnTopicPartitions<'_>>>) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for tp in parts.iter().flatten() {
        let topic = tp.topic.as_deref().unwrap_or("null");
        for &p in &tp.partition_ids {
            out.push((topic.to_string(), p));
        }
    }
    out
}

/// One `__transaction_state` record, decoded once and replayed into its copy's model
/// (`cluster::coordinator::model`, which every reader reads): where it is and what it
/// holds. A record the coordinator cannot use ([`CoordRecord::problem`]) still goes to the
/// history rules; the transactions are built from the [`CoordRecord::usable`] ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordRecord {
    pub offset: i64,
    /// Empty when the key holds none ([`CoordRecord::problem`], [`CoordRecord::null_id`]).
    pub transactional_id: String,
    /// `None`: a tombstone (or a record with a problem).
    pub value: Option<CoordValue>,
    /// The segment holding it, an index into [`CoordinatorLog::segments`].
    #[serde(default)]
    pub segment: u32,
    /// The byte position of its batch in the segment.
    #[serde(default)]
    pub position: u64,
    /// Its batch's max timestamp: the coordinator's append time (-1 unknown).
    #[serde(default = "unknown")]
    pub timestamp: i64,
    /// Its batch's partition leader epoch: the coordinator epoch, which the markers the
    /// coordinator writes for it carry (-1 unknown).
    #[serde(default = "unknown_epoch")]
    pub coordinator_epoch: i32,
    /// The key's transactional id is a null string, which the coordinator's reader refuses
    /// ([`CoordRecord::problem`] says so; the id is left empty).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub null_id: bool,
    /// Why the key or value does not decode, when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<Box<RecordProblem>>,
}

fn unknown() -> i64 {
    -1
}

fn unknown_epoch() -> i32 {
    -1
}

impl CoordRecord {
    /// A decoded record of `transactional_id` at `offset` (`value` `None`: a tombstone),
    /// its place in the log unknown.
    pub fn new(offset: i64, transactional_id: String, value: Option<CoordValue>) -> CoordRecord {
        CoordRecord {
            offset,
            transactional_id,
            value,
            segment: 0,
            position: 0,
            timestamp: -1,
            coordinator_epoch: -1,
            null_id: false,
            problem: None,
        }
    }

    /// A transaction record the join reads: a decoded key with an id, and a decoded value
    /// or tombstone.
    pub fn usable(&self) -> bool {
        self.problem.is_none() && !self.null_id
    }
}

/// What is wrong with a [`CoordRecord`]'s key or value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordProblem {
    /// A null key.
    NullKey,
    /// A key that does not decode (the reader's message).
    Key(String),
    /// A key of another version: the coordinator's load skips the record.
    KeyVersion(i16),
    /// A status byte outside the known states (its value, the reader's message).
    UnknownState { byte: i64, error: String },
    /// A value that does not decode (the reader's message).
    Value(String),
    /// A value of a version the reader does not know (outside 0–1), with the reader's
    /// message: the load fails on it before Kafka 4.3, and skips it since
    /// (`TransactionLog.read`'s `UnknownValueVersion`; see `Replay::loaded_by_kafka_4_3`).
    ValueVersion { version: i16, error: String },
}

impl RecordProblem {
    /// The reader's message, for a record the coordinator's load fails on (`None` for one
    /// it skips: another key version). A null key fails it too
    /// (`TransactionStateManager.loadTransactionMetadata` requires a key).
    pub fn error(&self) -> Option<&str> {
        match self {
            RecordProblem::KeyVersion(_) => None,
            RecordProblem::NullKey => Some("record has a null key"),
            RecordProblem::Key(e) | RecordProblem::Value(e) => Some(e),
            RecordProblem::UnknownState { error, .. }
            | RecordProblem::ValueVersion { error, .. } => Some(error),
        }
    }
}

/// One `__transaction_state` partition copy, its records decoded: the join's serialisable
/// input ([`TxnInputs`]), replayed into the coordinator's model by `analyse` (a scan
/// replays the walked records directly and keeps none of these).
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoordinatorLog {
    pub version: u32,
    /// `__transaction_state-N`.
    pub partition: i32,
    pub origin: Origin,
    /// The reference time of the copy's verdicts (ms).
    pub ref_time_ms: i64,
    /// Every record, in offset order (those with a problem included: see
    /// [`CoordRecord::usable`]).
    pub records: Vec<CoordRecord>,
    /// The segment names [`CoordRecord::segment`] indexes. Absent from inputs written
    /// before it was added.
    #[serde(default)]
    pub segments: Vec<String>,
    /// The batches of this copy whose records were not read (they do not decompress or
    /// parse, a batch over 64 MiB, a segment that could not be read), in log order: any
    /// of them may hold a record the join does not see, so no verdict resting on the
    /// absence of a record or on an id's latest record past their offsets is confirmed.
    /// Absent from inputs written before it was added (read as none).
    #[serde(default)]
    pub records_not_read: Vec<UnreadBatch>,
}

#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
impl CoordinatorLog {
    /// A copy of `__transaction_state-<partition>` read at `origin`, holding `records`
    /// (the unit tests' logs).
    #[cfg(test)]
    pub(crate) fn of_records(partition: i32, origin: Origin, records: Vec<CoordRecord>) -> Self {
        CoordinatorLog {
            version: INPUT_VERSION,
            partition,
            origin,
            ref_time_ms: 0,
            records,
            segments: Vec::new(),
            records_not_read: Vec::new(),
        }
    }

    /// The name of segment `segment` (empty when unknown).
    pub fn segment_name(&self, segment: u32) -> &str {
        self.segments
            .get(segment as usize)
            .map_or("", String::as_str)
    }

    /// The records the join reads ([`CoordRecord::usable`]), in offset order.
    pub fn usable(&self) -> impl Iterator<Item = &CoordRecord> {
        self.records.iter().filter(|r| r.usable())
    }
}

/// A batch of a [`CoordinatorLog`] whose records were not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadBatch {
    /// The segment's file name.
    pub segment: String,
    /// Why its records were not read.
    pub reason: String,
    /// The offsets its records may have (its header's base and last offsets); `None`
    /// when unknown (a segment that could not be read): any offset.
    pub offsets: Option<(i64, i64)>,
}

impl UnreadBatch {
    /// Whether it may hold a record at an offset above `offset`.
    pub fn may_follow(&self, offset: i64) -> bool {
        self.offsets.is_none_or(|(_, last)| last > offset)
    }
    /// Whether it may hold a record at an offset strictly between `after` and `before`.
    pub fn may_lie_between(&self, after: i64, before: i64) -> bool {
        self.offsets
            .is_none_or(|(first, last)| last > after && first < before)
    }
}

/// Everything the join reads.
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TxnInputs {
    pub version: u32,
    pub partitions: Vec<PartitionTxns>,
    pub coordinator: Vec<CoordinatorLog>,
}
