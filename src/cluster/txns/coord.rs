//! The coordinator's transactions, rebuilt from the `__transaction_state` records of each
//! transactional id in offset order (`TransactionMetadata` transitions, `kafka-semantics.md`
//! §6.1): Ongoing records add partitions, PrepareCommit/PrepareAbort end the producer's
//! part (under TV2 with the bumped epoch the markers carry), CompleteCommit/CompleteAbort
//! record that every marker was written. Compaction keeps only a suffix of each id's
//! history, so a transaction may be known from its Prepare or Complete record alone.

use super::input::{CoordValue, CoordinatorLog};
use crate::read::format::txnlog::TxnState;
use serde::Serialize;
use std::collections::BTreeSet;

/// One transaction as the coordinator recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoordTxn {
    pub transactional_id: String,
    /// `__transaction_state-N`.
    pub log_partition: i32,
    /// Index of the [`CoordinatorLog`] in the inputs.
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
    pub partitions: Option<BTreeSet<(String, i32)>>,
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
}

impl CoordTxn {
    /// The producer ids this transaction's markers may carry.
    pub fn has_pid(&self, pid: i64) -> bool {
        self.producer_id == pid || (self.next_producer_id >= 0 && self.next_producer_id == pid)
    }
    /// Transaction version 2 (the client said so in the value).
    pub fn tv2(&self) -> bool {
        self.client_transaction_version >= 2
    }
}

fn new_txn(id: &str, log: &CoordinatorLog, li: usize, offset: i64, v: &CoordValue) -> CoordTxn {
    let tv2 = v.client_transaction_version >= 2;
    let preparing = matches!(v.state, TxnState::PrepareCommit | TxnState::PrepareAbort);
    let completing = matches!(v.state, TxnState::CompleteCommit | TxnState::CompleteAbort);
    let data_epoch = if tv2 && (preparing || completing) {
        v.producer_epoch.saturating_sub(1)
    } else {
        v.producer_epoch
    };
    CoordTxn {
        transactional_id: id.to_string(),
        log_partition: log.partition,
        log: li,
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
    }
}

/// Every transaction of every transactional id of the given logs (`logs[i]` are assumed
/// to be distinct partitions of one cluster).
pub fn coordinator_txns(logs: &[(usize, &CoordinatorLog)]) -> Vec<CoordTxn> {
    let mut out = Vec::new();
    for &(li, log) in logs {
        let mut current: std::collections::HashMap<&str, CoordTxn> = Default::default();
        for r in log.usable() {
            let id = r.transactional_id.as_str();
            let Some(v) = &r.value else {
                out.extend(current.remove(id).map(|mut t| {
                    t.removed = true;
                    t
                }));
                continue;
            };
            let cur = current.remove(id);
            match v.state {
                TxnState::Ongoing => {
                    let mut t = match cur {
                        Some(t)
                            if t.state == TxnState::Ongoing
                                && t.producer_id == v.producer_id
                                && t.data_epoch == v.producer_epoch =>
                        {
                            t
                        }
                        other => {
                            out.extend(other);
                            new_txn(id, log, li, r.offset, v)
                        }
                    };
                    t.partitions
                        .get_or_insert_with(BTreeSet::new)
                        .extend(v.partitions.iter().cloned());
                    t.state = v.state;
                    t.last_update_ms = v.last_update_ms;
                    t.last_record_offset = r.offset;
                    current.insert(id, t);
                }
                TxnState::PrepareCommit | TxnState::PrepareAbort => {
                    let mut t = match cur {
                        Some(t)
                            if t.state == TxnState::Ongoing && t.producer_id == v.producer_id =>
                        {
                            t
                        }
                        other => {
                            out.extend(other);
                            new_txn(id, log, li, r.offset, v)
                        }
                    };
                    t.partitions
                        .get_or_insert_with(BTreeSet::new)
                        .extend(v.partitions.iter().cloned());
                    t.state = v.state;
                    t.commit = Some(v.state == TxnState::PrepareCommit);
                    t.end_epoch = Some(v.producer_epoch);
                    t.prepare_ms = Some(v.last_update_ms);
                    t.prepare_offset = Some(r.offset);
                    t.last_update_ms = v.last_update_ms;
                    t.last_record_offset = r.offset;
                    t.client_transaction_version = t
                        .client_transaction_version
                        .max(v.client_transaction_version);
                    current.insert(id, t);
                }
                TxnState::CompleteCommit | TxnState::CompleteAbort => {
                    let commit = v.state == TxnState::CompleteCommit;
                    let mut t = match cur {
                        Some(t)
                            if t.commit == Some(commit)
                                && t.complete_ms.is_none()
                                && (t.producer_id == v.producer_id
                                    || t.producer_id == v.previous_producer_id) =>
                        {
                            t
                        }
                        other => {
                            out.extend(other);
                            let mut t = new_txn(id, log, li, r.offset, v);
                            t.end_epoch = Some(v.producer_epoch);
                            t
                        }
                    };
                    if v.producer_id != t.producer_id {
                        t.next_producer_id = v.producer_id;
                    }
                    t.state = v.state;
                    t.commit = Some(commit);
                    t.complete_ms = Some(v.last_update_ms);
                    t.last_update_ms = v.last_update_ms;
                    t.last_record_offset = r.offset;
                    out.push(t);
                }
                // Empty, Dead, PrepareEpochFence: no transaction in progress.
                _ => out.extend(cur),
            }
        }
        let mut rest: Vec<CoordTxn> = current.into_values().collect();
        rest.sort_by_key(|t| t.first_record_offset);
        out.extend(rest);
    }
    out
}
