//! The typed, versioned inputs of the cluster-wide transaction join: what one partition's
//! replay concluded about its transactions ([`PartitionTxns`]) and what one
//! `__transaction_state` partition copy holds ([`CoordinatorLog`]). Both are
//! `Serialize + Deserialize` so that they can be produced on the machines holding the data
//! and joined elsewhere; [`INPUT_VERSION`] is bumped on incompatible changes.

use crate::read::format::txnlog::TxnState;
use crate::partition::state::txnrec::TxnRecord;
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
    /// In log order: closed transactions by marker offset, then the open ones.
    pub txns: Vec<TxnRecord>,
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

/// One `__transaction_state` record of a transactional id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordRecord {
    pub offset: i64,
    pub transactional_id: String,
    /// `None`: a tombstone.
    pub value: Option<CoordValue>,
}

/// The decodable records of one `__transaction_state` partition copy, in offset order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoordinatorLog {
    pub version: u32,
    /// `__transaction_state-N`.
    pub partition: i32,
    pub origin: Origin,
    /// The reference time of the copy's verdicts (ms).
    pub ref_time_ms: i64,
    pub records: Vec<CoordRecord>,
    /// The batches of this copy whose records were not read (they do not decompress or
    /// parse, a batch over 64 MiB, a segment that could not be read), in log order: any
    /// of them may hold a record the join does not see, so no verdict resting on the
    /// absence of a record or on an id's latest record past their offsets is confirmed.
    /// Absent from inputs written before it was added (read as none).
    #[serde(default)]
    pub records_not_read: Vec<UnreadBatch>,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TxnInputs {
    pub version: u32,
    pub partitions: Vec<PartitionTxns>,
    pub coordinator: Vec<CoordinatorLog>,
}
