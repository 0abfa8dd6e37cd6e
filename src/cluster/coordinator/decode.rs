//! The one decode of the transaction coordinator's log: each `__transaction_state` record
//! a partition's walk kept ([`crate::partition::walked::ClusterInputs::txn_log`]), or, for
//! a partition the walk kept none of (more than `ScanOptions::keep_coordinator_bytes`, or
//! outside the scan's selection), each record read again from its segments as it comes
//! (`stream_dir`), becomes one typed [`CoordRecord`] (key, value, place, coordinator
//! epoch), once per scan, replayed at once into its partition copy's model
//! ([`CoordModel`]), which the coordinator's view, its history rules and the
//! cross-partition join all read; no decoded record is kept.
//!
//! What the records hold is `TransactionLog.readTxnRecordKey`/`readTxnRecordValue`'s
//! reading: a key of another version is skipped by `TransactionStateManager`'s load, a
//! value whose status byte is unknown fails it (`TransactionState.fromId`).

use super::{TRANSACTION_STATE_TOPIC, UnscannedLogs};
use crate::cluster::report::ScanReport;
use super::model::{CoordModel, Replay};
#[cfg(feature = "testkit")]
use crate::cluster::txns::INPUT_VERSION;
use crate::cluster::txns::{
    CoordRecord, CoordValue, CoordinatorLog, Origin, RecordProblem, UnreadBatch,
};
use std::collections::HashSet;
use std::sync::Arc;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::partition::results::ScanOptions;
use crate::partition::walked::{
    ClusterInputs, LogItem, LogRecord, ReadErrors, segment_names, stream_records,
};
use std::collections::BTreeSet;
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

/// Where the decoded records of a partition copy go: kept in a [`CoordinatorLog`] (the
/// join's serialisable inputs), or replayed at once into the coordinator's model
/// ([`Replay`]).
trait Sink {
    fn record(&mut self, r: CoordRecord);
    fn unread(&mut self, u: UnreadBatch);
    /// The copy's segment names (what [`CoordRecord::segment`] indexes).
    fn segments(&mut self, names: Vec<String>);
}

impl Sink for CoordinatorLog {
    fn record(&mut self, r: CoordRecord) {
        self.records.push(r);
    }
    fn unread(&mut self, u: UnreadBatch) {
        self.records_not_read.push(u);
    }
    fn segments(&mut self, names: Vec<String>) {
        self.segments = names;
    }
}

impl Sink for Replay {
    fn record(&mut self, r: CoordRecord) {
        Replay::record(self, r);
    }
    fn unread(&mut self, u: UnreadBatch) {
        Replay::unread(self, u);
    }
    fn segments(&mut self, names: Vec<String>) {
        self.segments = names;
    }
}

/// Add one walked item to `sink` (markers are not the coordinator's records);
/// `segments` names its segment.
fn push(sink: &mut impl Sink, item: &LogItem, segments: &[String]) {
    match item {
        LogItem::Record(r) => sink.record(decode(r)),
        LogItem::Undecodable {
            segment,
            message,
            offsets,
        } => sink.unread(UnreadBatch {
            segment: segments
                .get(*segment as usize)
                .cloned()
                .unwrap_or_default(),
            reason: message.clone(),
            offsets: *offsets,
        }),
        LogItem::Marker { .. } => {}
    }
}

/// The records of a `__transaction_state` partition directory read again from its
/// segments, streaming (`walked::stream_records`), into the sink `fresh` makes: each
/// record is decoded and handed on as it is read, none kept. With
/// [`ReadErrors::AsWalked`], a segment that changed during the read gives none of its
/// records, as the scan's walk drops them: the copy is read again without it.
fn stream_dir<S: Sink>(
    p: &PartitionDir,
    opts: &ScanOptions,
    errors: ReadErrors,
    mut fresh: impl FnMut() -> S,
) -> S {
    let names = segment_names(p);
    let mut skip = BTreeSet::new();
    loop {
        let mut sink = fresh();
        sink.segments(names.clone());
        let read = stream_records(
            p,
            opts.max_bytes,
            opts.max_decompressed,
            errors,
            &skip,
            &mut |item| push(&mut sink, &item, &names),
        );
        match read {
            Ok(()) => return sink,
            // Each pass skips one more segment: at most one pass per segment.
            Err(n) if skip.insert(n) => {}
            Err(_) => return sink,
        }
    }
}

/// The records of one `__transaction_state` partition copy, decoded, with the batches
/// whose records were not read.
#[cfg(feature = "testkit")]
pub fn decode_log(
    partition: i32,
    origin: Origin,
    ref_time_ms: i64,
    inputs: &ClusterInputs,
) -> CoordinatorLog {
    let items = inputs.txn_log.as_deref().unwrap_or_default();
    let mut log = CoordinatorLog {
        version: INPUT_VERSION,
        partition,
        origin,
        ref_time_ms,
        records: Vec::with_capacity(items.len()),
        segments: inputs.segments.clone(),
        records_not_read: Vec::new(),
    };
    for item in items {
        push(&mut log, item, &inputs.segments);
    }
    log
}

/// One `__transaction_state` partition copy replayed into the coordinator's model, each
/// record decoded and replayed in turn (none is kept): `wanted` as [`Replay::new`].
pub fn replay_log(
    partition: i32,
    origin: Origin,
    ref_time_ms: i64,
    inputs: &ClusterInputs,
    wanted: Option<Arc<HashSet<i64>>>,
) -> CoordModel {
    let mut r = Replay::new(partition, origin, ref_time_ms, wanted);
    r.segments = inputs.segments.clone();
    for item in inputs.txn_log.as_deref().unwrap_or_default() {
        push(&mut r, item, &inputs.segments);
    }
    r.finish()
}

/// [`replay_log`] taking the walked records out of `inputs`: each one's bytes are freed
/// as soon as it is replayed.
fn replay_log_taken(
    partition: i32,
    origin: Origin,
    ref_time_ms: i64,
    inputs: &mut ClusterInputs,
    wanted: Option<Arc<HashSet<i64>>>,
) -> CoordModel {
    let items = inputs.txn_log.take().unwrap_or_default();
    let mut r = Replay::new(partition, origin, ref_time_ms, wanted);
    r.segments = inputs.segments.clone();
    for item in items {
        push(&mut r, &item, &inputs.segments);
    }
    r.finish()
}

/// The records of a `__transaction_state` partition directory the scan did not walk,
/// with a walk of their own.
#[cfg(feature = "testkit")]
pub(super) fn walk_dir(p: &PartitionDir, opts: &ScanOptions) -> ClusterInputs {
    crate::partition::walked::collect_dir(p, false, opts.max_bytes, opts.max_decompressed, None)
}

/// A `__transaction_state` partition directory the scan did not walk, read and replayed
/// streaming (`errors`: see [`ReadErrors`]).
pub(super) fn replay_dir(
    p: &PartitionDir,
    opts: &ScanOptions,
    partition: i32,
    origin: Origin,
    ref_time_ms: i64,
    errors: ReadErrors,
    wanted: Option<Arc<HashSet<i64>>>,
) -> CoordModel {
    stream_dir(p, opts, errors, || {
        Replay::new(partition, origin.clone(), ref_time_ms, wanted.clone())
    })
    .finish()
}

/// What the coordinator's view reads of a model: no finished transaction but each id's
/// latest.
pub(super) fn view_only() -> Option<Arc<HashSet<i64>>> {
    Some(Arc::default())
}

/// Every `__transaction_state` partition directory of `inv`, in its order: from what the
/// scan's walk kept (taken out of `report`), else from `unscanned`, else from a walk of
/// its own. `origin` names each directory (the join's [`Origin`]); the reference time of
/// a copy is its partition's, else `--now`, else the newest of the scan.
fn each_log(
    report: &mut ScanReport,
    unscanned: &UnscannedLogs,
    inv: &Inventory,
    opts: &ScanOptions,
    mut each: impl FnMut(i32, i64, &str, Walked<'_>),
) {
    let newest = report
        .partitions
        .iter()
        .map(|p| p.ref_time)
        .max()
        .unwrap_or(0);
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
        let walked = match at.map(|i| &mut report.partitions[i].carried.cluster_inputs) {
            Some(inputs) if inputs.txn_log.is_some() => Walked::Taken(inputs),
            // Walked by the scan, which kept none of its records (more than
            // `ScanOptions::keep_coordinator_bytes`): read again as the walk read it.
            Some(_) => Walked::Disk(d, ReadErrors::AsWalked),
            None => match unscanned.get(&path) {
                Some(inputs) => Walked::Kept(inputs),
                None => Walked::Disk(d, ReadErrors::Report),
            },
        };
        each(tp.partition, ref_time, &path, walked);
    }
}

/// A partition copy's walked records: the scan's (taken as they are read), kept
/// elsewhere, or still in its segments (read streaming, [`stream_dir`]).
enum Walked<'a> {
    Taken(&'a mut ClusterInputs),
    Kept(&'a ClusterInputs),
    Disk(&'a PartitionDir, ReadErrors),
}

/// Every `__transaction_state` partition directory of `inv` decoded once, as the join's
/// serialisable inputs (`each_log`; the scan's walked records are taken out of
/// `report`).
#[cfg(feature = "testkit")]
pub fn decode_logs(
    report: &mut ScanReport,
    unscanned: &UnscannedLogs,
    inv: &Inventory,
    opts: &ScanOptions,
    origin: impl Fn(&str) -> Origin,
) -> Vec<CoordinatorLog> {
    let mut out = Vec::new();
    each_log(report, unscanned, inv, opts, |partition, ref_time, path, walked| {
        let inputs: &ClusterInputs = match &walked {
            Walked::Taken(i) => i,
            Walked::Kept(i) => i,
            Walked::Disk(d, errors) => {
                let log = || CoordinatorLog {
                    version: INPUT_VERSION,
                    partition,
                    origin: origin(path),
                    ref_time_ms: ref_time,
                    records: Vec::new(),
                    segments: Vec::new(),
                    records_not_read: Vec::new(),
                };
                out.push(stream_dir(d, opts, *errors, log));
                return;
            }
        };
        out.push(decode_log(partition, origin(path), ref_time, inputs));
        if let Walked::Taken(i) = walked {
            i.txn_log = None;
        }
    });
    out
}

/// Every `__transaction_state` partition directory of `inv` replayed once into the
/// coordinator's model (`each_log`): the scan's walked records are taken out of
/// `report` and freed as they are replayed; the finished transactions kept are those of
/// the producer ids of the scan's transactions (`TxnRecord`s still in `report`).
pub fn replay_logs(
    report: &mut ScanReport,
    unscanned: &UnscannedLogs,
    inv: &Inventory,
    opts: &ScanOptions,
    origin: impl Fn(&str) -> Origin,
) -> Vec<CoordModel> {
    let wanted: Arc<HashSet<i64>> = Arc::new(
        report
            .partitions
            .iter()
            .filter(|p| p.topic != TRANSACTION_STATE_TOPIC)
            .flat_map(|p| p.carried.outcome.txns.iter().map(|t| t.producer_id))
            .collect(),
    );
    let mut out = Vec::new();
    each_log(report, unscanned, inv, opts, |partition, ref_time, path, walked| {
        let w = Some(wanted.clone());
        out.push(match walked {
            Walked::Taken(i) => replay_log_taken(partition, origin(path), ref_time, i, w),
            Walked::Kept(i) => replay_log(partition, origin(path), ref_time, i, w),
            Walked::Disk(d, errors) => {
                replay_dir(d, opts, partition, origin(path), ref_time, errors, w)
            }
        });
    });
    out
}
