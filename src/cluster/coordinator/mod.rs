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
    mod leader;
    mod model;
    mod sent;
}

crate::internal_use!(confirm::{annotate_clusters, annotate_models});
crate::internal_use!(decode::replay_logs);
crate::internal_use!(leader::{LeaderCopies, NamedLeader});
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub use confirm::annotate;

/// The coordinator's internal topic.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";

/// `transaction.state.log.num.partitions` default.
pub const DEFAULT_TXN_PARTITIONS: i32 = 50;

/// Broker text of a finding downgraded to `open_transaction`.
const BROKER_ALIVE: &str = "normal while the producer is active: the last stable offset stays at the transaction's first offset until its marker is written; the coordinator still tracks this transaction and will end it (commit, or abort at its timeout)";

/// Broker text of a two-phase-commit transaction downgraded to `open_transaction`.
const BROKER_ALIVE_2PC: &str = "normal while the transaction's external transaction manager has not decided: the last stable offset stays at the transaction's first offset until its marker is written; the coordinator tracks this two-phase-commit transaction (KIP-939) and never aborts it on timeout: it ends at the external manager's commit or abort (EndTxn), or when an admin terminates it (Admin.forceTerminateTransaction, an abort); the broker's PartitionsWithLateTransactionsCount counts it once it is older than transaction.max.timeout.ms";

/// KIP-939: a transaction whose timeout is `Integer.MAX_VALUE` is a distributed
/// two-phase-commit one (`TransactionMetadata.isDistributedTwoPhaseCommitTxn`; InitProducerId
/// with `enable2Pc` stores that timeout), which has no timeout: the coordinator never aborts
/// it (`TransactionStateManager.timedOutTransactions` skips it). It ends when its external
/// transaction manager sends EndTxn, or when an admin terminates it
/// (`Admin.forceTerminateTransaction`, an InitProducerId that aborts it).
pub fn is_two_phase_commit(timeout_ms: i32) -> bool {
    timeout_ms == i32::MAX
}

/// How long (ms) after its start an Ongoing transaction of timeout `timeout_ms` may run
/// before its coordinator should have aborted it, with the 5-min margin of the
/// late-transaction rules (`TransactionStateManager.timedOutTransactions`:
/// start + timeout < now); `None` for a two-phase-commit transaction, which never times out.
pub fn ongoing_limit_ms(timeout_ms: i32) -> Option<i64> {
    (!is_two_phase_commit(timeout_ms)).then(|| {
        i64::from(timeout_ms.max(0))
            .saturating_add(crate::partition::state::LATE_TRANSACTION_BUFFER_MS)
    })
}

/// How long (ms) after its Prepare* record a transaction of timeout `timeout_ms` may wait
/// for its markers before they are called undelivered: its timeout + the 5-min margin. A
/// two-phase-commit transaction's markers are sent like any other's once its Prepare* is
/// written, and its timeout (none) says nothing of them: it gets the longest timeout an
/// ordinary transaction has by default (`transaction.max.timeout.ms`, 15 min) + the margin.
pub fn prepare_limit_ms(timeout_ms: i32) -> i64 {
    use crate::partition::state::{LATE_TRANSACTION_BUFFER_MS, TRANSACTION_MAX_TIMEOUT_MS};
    let grace = if is_two_phase_commit(timeout_ms) {
        TRANSACTION_MAX_TIMEOUT_MS
    } else {
        i64::from(timeout_ms.max(0))
    };
    grace.saturating_add(LATE_TRANSACTION_BUFFER_MS)
}

/// How a Prepare* record's allowance reads in a message: `timeout T ms + M ms margin`, or,
/// for a two-phase-commit transaction, what stands for its timeout.
pub(crate) fn prepare_allowance(timeout_ms: i32) -> String {
    let margin = crate::partition::state::LATE_TRANSACTION_BUFFER_MS;
    if is_two_phase_commit(timeout_ms) {
        format!(
            "a two-phase-commit transaction (KIP-939, timeout Integer.MAX_VALUE: none), so transaction.max.timeout.ms's default {} ms + {margin} ms margin",
            crate::partition::state::TRANSACTION_MAX_TIMEOUT_MS
        )
    } else {
        format!("timeout {timeout_ms} ms + {margin} ms margin")
    }
}

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
