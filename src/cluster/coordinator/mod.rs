//! The transaction coordinator's view, rebuilt offline from `__transaction_state`
//! partitions: per transactional id, the latest value in offset order (a null value,
//! tombstone, marks the id removed), indexed by producer id, previous producer id and next
//! producer id ([`CoordinatorView::load`], [`CoordinatorView::find`]).
//!
//! The scan uses it to confirm (or refute) its open/hanging transactions the way
//! `kafka-transactions.sh find-hanging` does; those checks are internal (`annotate`,
//! `cluster`, `history`) and run as part of the pipeline.
//!
//! Every record is decoded once (`decode`) and replayed once into the coordinator's model
//! of its partition copy (`model::CoordModel`: each transactional id's latest value, its
//! transactions in order, its history's anomalies): the view, the history rules and the
//! cross-partition join (`cluster::txns`) all read that model.

use crate::read::format::txnlog::TxnState;
use std::collections::{BTreeMap, BTreeSet};

mod load;
crate::internal_mod! {
    mod anomaly_text;
    mod confirm;
    mod cluster;
    mod decode;
    mod history;
    mod model;
}

crate::internal_use!(confirm::{annotate_clusters, annotate_models});
crate::internal_use!(decode::replay_logs);
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub use confirm::annotate;

/// The coordinator's internal topic.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";

/// `transaction.state.log.num.partitions` default.
pub const DEFAULT_TXN_PARTITIONS: i32 = 50;

/// Broker text of a finding downgraded to `open_transaction`.
const BROKER_ALIVE: &str = "normal while the producer is active: the last stable offset stays at the transaction's first offset until its marker is written; the coordinator still tracks this transaction and will end it (commit, or abort at its timeout)";

/// Where a `__transaction_state` record was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// `__transaction_state-N`.
    pub partition: i32,
    /// The record's offset.
    pub offset: i64,
    /// The partition directory.
    pub path: String,
}

/// The latest coordinator record of one transactional id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorTxn {
    pub transactional_id: String,
    pub producer_id: i64,
    pub previous_producer_id: i64,
    pub next_producer_id: i64,
    pub producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// The partitions of the latest value, as `(topic, partition)`.
    pub partitions: Vec<(String, i32)>,
    /// The partitions of the latest in-progress value (Ongoing/Prepare*) of the same
    /// producer id and epoch (Complete* values list none): what the last transaction held.
    pub last_txn_partitions: Vec<(String, i32)>,
    pub last_update_ms: i64,
    pub start_ms: i64,
    pub client_transaction_version: i16,
    /// The id was removed by a tombstone after this value (the value is the last one seen).
    pub tombstoned: Option<Source>,
    /// The record holding the latest value.
    pub source: Source,
}

/// The coordinator state rebuilt from the `__transaction_state` partitions read.
#[derive(Debug, Clone, Default)]
pub struct CoordinatorView {
    /// The cluster these partitions belong to (`None`: not grouped, e.g. [`Self::load`]).
    pub(crate) cluster: Option<crate::discover::identity::ClusterKey>,
    /// The partition count of `__transaction_state` from the cluster's KRaft metadata log.
    pub partition_count: Option<i32>,
    /// Transactional id → latest state.
    pub ids: BTreeMap<String, CoordinatorTxn>,
    /// The `__transaction_state` partition numbers read.
    pub partitions_read: BTreeSet<i32>,
    /// Records that could not be decoded, as `(path, message)`.
    pub errors: Vec<(String, String)>,
    /// Batches whose records were not read at all, as `(path, message)`: a batch that does
    /// not decompress or whose records do not parse, one too large to hold
    /// (`segment::BIG_ENTRY`), a segment that could not be read. The view may miss what
    /// they hold, so no verdict resting on it is confirmed.
    pub unread: Vec<(String, String)>,
    /// Copies whose load stops at a record with usable records after it, as `(path, offset
    /// of the stop)`: the view holds what a load leaves, but a coordinator that loaded
    /// before the record was written (or wrote it) holds the later records too.
    pub load_stops: Vec<(String, i64)>,
    /// Records read.
    pub records: u64,
    /// Rule 31: each partition copy's history, replayed per transactional id.
    pub(crate) history: history::HistoryChecker,
}

/// How a transactional id was found for a producer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedBy {
    ProducerId,
    PreviousProducerId,
    NextProducerId,
}

impl MatchedBy {
    fn name(self) -> &'static str {
        match self {
            MatchedBy::ProducerId => "producer_id",
            MatchedBy::PreviousProducerId => "previous_producer_id",
            MatchedBy::NextProducerId => "next_producer_id",
        }
    }
}

impl CoordinatorView {
    /// The partition count used to place transactional ids, and where it came from.
    pub fn assumed_partition_count(&self) -> (i32, &'static str) {
        if let Some(n) = self.partition_count {
            return (n, "the cluster's metadata log");
        }
        let highest = self
            .partitions_read
            .iter()
            .next_back()
            .copied()
            .unwrap_or(0);
        if highest >= DEFAULT_TXN_PARTITIONS {
            (
                highest + 1,
                "the highest partition read (above the default 50)",
            )
        } else {
            (
                DEFAULT_TXN_PARTITIONS,
                "the default transaction.state.log.num.partitions (no metadata log of this cluster in the inputs)",
            )
        }
    }

    /// The partitions of `0..count` that were not read.
    fn missing_partitions(&self, count: i32) -> usize {
        (0..count)
            .filter(|p| !self.partitions_read.contains(p))
            .count()
    }

    /// True when at least one `__transaction_state` partition was found.
    pub fn is_empty(&self) -> bool {
        self.partitions_read.is_empty()
    }

    /// The transactional id whose latest value names `producer_id`: by producer id first,
    /// then by previous/next producer id (epoch exhaustion rotates the producer id).
    /// Among several, the most recently updated wins.
    pub fn find(&self, producer_id: i64) -> Option<(&CoordinatorTxn, MatchedBy)> {
        let best = |pred: &dyn Fn(&CoordinatorTxn) -> bool| {
            self.ids
                .values()
                .filter(|t| pred(t))
                .max_by_key(|t| (t.tombstoned.is_none(), t.last_update_ms))
        };
        if let Some(t) = best(&|t| t.producer_id == producer_id) {
            return Some((t, MatchedBy::ProducerId));
        }
        if let Some(t) = best(&|t| t.previous_producer_id == producer_id) {
            return Some((t, MatchedBy::PreviousProducerId));
        }
        best(&|t| t.next_producer_id == producer_id).map(|t| (t, MatchedBy::NextProducerId))
    }

    fn read_list(&self) -> String {
        self.partitions_read
            .iter()
            .map(|p| format!("{TRANSACTION_STATE_TOPIC}-{p}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
