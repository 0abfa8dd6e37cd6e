//! The one decode of the transaction coordinator's log: each `__transaction_state` record
//! a partition's walk kept ([`crate::partition::walked::ClusterInputs::txn_log`]) becomes one
//! typed [`CoordRecord`] (key, value, place, coordinator epoch), once per scan. The
//! coordinator's view and its history rules ([`super::CoordinatorView`]) and the
//! cross-partition join ([`crate::cluster::txns`]) all read these [`CoordinatorLog`]s.
//!
//! What the records hold is `TransactionLog.readTxnRecordKey`/`readTxnRecordValue`'s
//! reading: a key of another version is skipped by `TransactionStateManager`'s load, a
//! value whose status byte is unknown fails it (`TransactionState.fromId`).

use super::{TRANSACTION_STATE_TOPIC, UnscannedLogs};
use crate::cluster::report::ScanReport;
use crate::cluster::txns::{
    CoordRecord, CoordValue, CoordinatorLog, INPUT_VERSION, Origin, RecordProblem, UnreadBatch,
};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::partition::results::ScanOptions;
use crate::partition::walked::{ClusterInputs, LogItem, LogRecord};
use crate::read::format::error::Problem;
use crate::read::format::txnlog::{self, LogKey};

/// One walked record, decoded.
pub fn decode(r: &LogRecord) -> CoordRecord {
    let mut rec = CoordRecord::new(r.offset, String::new(), None);
    rec.segment = r.segment;
    rec.position = r.position;
    rec.timestamp = r.timestamp;
    rec.coordinator_epoch = r.leader_epoch;
    let problem = |p| Some(Box::new(p));
    let key = match r.key.as_deref().map(txnlog::parse_key) {
        None => {
            rec.problem = problem(RecordProblem::NullKey);
            return rec;
        }
        Some(Err(e)) => {
            rec.problem = problem(RecordProblem::Key(e.to_string()));
            return rec;
        }
        Some(Ok(LogKey::Unknown { version })) => {
            rec.problem = problem(RecordProblem::KeyVersion(version));
            return rec;
        }
        Some(Ok(LogKey::Transaction(k))) => k,
    };
    match key.transactional_id {
        Some(id) => rec.transactional_id = id.into_owned(),
        None => rec.null_id = true,
    }
    match txnlog::parse_value(r.value.as_deref()) {
        Ok(v) => rec.value = v.map(|v| CoordValue::of(&v)),
        Err(e) => {
            rec.problem = problem(match e.problem {
                Problem::OutOfRange { value } if e.field == "transactionStatus" => {
                    RecordProblem::UnknownState {
                        byte: value,
                        error: e.to_string(),
                    }
                }
                _ => RecordProblem::Value(e.to_string()),
            })
        }
    }
    rec
}

/// The records of one `__transaction_state` partition copy, decoded, with the batches
/// whose records were not read.
pub fn decode_log(
    partition: i32,
    origin: Origin,
    ref_time_ms: i64,
    inputs: &ClusterInputs,
) -> CoordinatorLog {
    let items = inputs.txn_log.as_deref().unwrap_or_default();
    let mut log = empty_log(partition, origin, ref_time_ms, inputs, items.len());
    for item in items {
        push(&mut log, item, inputs);
    }
    log
}

/// [`decode_log`] taking the walked records out of `inputs`: each one's bytes are freed
/// as soon as it is decoded.
fn decode_log_taken(
    partition: i32,
    origin: Origin,
    ref_time_ms: i64,
    inputs: &mut ClusterInputs,
) -> CoordinatorLog {
    let items = inputs.txn_log.take().unwrap_or_default();
    let mut log = empty_log(partition, origin, ref_time_ms, inputs, items.len());
    for item in items {
        push(&mut log, &item, inputs);
    }
    log
}

fn empty_log(
    partition: i32,
    origin: Origin,
    ref_time_ms: i64,
    inputs: &ClusterInputs,
    records: usize,
) -> CoordinatorLog {
    CoordinatorLog {
        version: INPUT_VERSION,
        partition,
        origin,
        ref_time_ms,
        records: Vec::with_capacity(records),
        segments: inputs.segments.clone(),
        records_not_read: Vec::new(),
    }
}

/// Add one walked item to `log` (markers are not the coordinator's records).
fn push(log: &mut CoordinatorLog, item: &LogItem, inputs: &ClusterInputs) {
    match item {
        LogItem::Record(r) => log.records.push(decode(r)),
        LogItem::Undecodable {
            segment,
            message,
            offsets,
        } => log.records_not_read.push(UnreadBatch {
            segment: inputs.segment_name(*segment).to_string(),
            reason: message.clone(),
            offsets: *offsets,
        }),
        LogItem::Marker { .. } => {}
    }
}

/// The records of a `__transaction_state` partition directory the scan did not walk,
/// with a walk of their own.
pub(super) fn walk_dir(p: &PartitionDir, opts: &ScanOptions) -> ClusterInputs {
    crate::partition::walked::collect_dir(p, false, opts.max_bytes, opts.max_decompressed, None)
}

/// Every `__transaction_state` partition directory of `inv`, in its order, decoded once:
/// from what the scan's walk kept (taken out of `report`: the raw records are dropped as
/// soon as they are decoded), else from `unscanned`, else from a walk of its own. `origin`
/// names each directory (the join's [`Origin`]); the reference time of a copy is its
/// partition's, else `--now`, else the newest of the scan.
pub fn decode_logs(
    report: &mut ScanReport,
    unscanned: &UnscannedLogs,
    inv: &Inventory,
    opts: &ScanOptions,
    origin: impl Fn(&str) -> Origin,
) -> Vec<CoordinatorLog> {
    let newest = report
        .partitions
        .iter()
        .map(|p| p.ref_time)
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for d in &inv.partitions {
        let Some(tp) =
            d.tp.as_ref()
                .filter(|tp| tp.topic == TRANSACTION_STATE_TOPIC)
        else {
            continue;
        };
        let path = d.path.display().to_string();
        let at = report.partitions.iter().position(|p| p.path == path);
        let ref_time = at
            .map(|i| report.partitions[i].ref_time)
            .or(opts.now_ms)
            .unwrap_or(newest);
        let log = match at.map(|i| &mut report.partitions[i].carried.cluster_inputs) {
            Some(inputs) if inputs.txn_log.is_some() => {
                decode_log_taken(tp.partition, origin(&path), ref_time, inputs)
            }
            _ => match unscanned.get(&path) {
                Some(inputs) => decode_log(tp.partition, origin(&path), ref_time, inputs),
                None => decode_log(tp.partition, origin(&path), ref_time, &walk_dir(d, opts)),
            },
        };
        out.push(log);
    }
    out
}
