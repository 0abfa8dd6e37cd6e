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
//! value whose status byte is unknown fails it (`TransactionState.fromId`), as does a value
//! the reader refuses beyond its schema (`load_refusal`).

use super::TRANSACTION_STATE_TOPIC;
use super::model::{CoordModel, Replay};
use crate::cluster::report::ScanReport;
#[cfg(feature = "testkit")]
use crate::cluster::txns::INPUT_VERSION;
use crate::cluster::txns::{
    CoordRecord, CoordValue, CoordinatorLog, Origin, RecordProblem, UnreadBatch,
};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::partition::results::ScanOptions;
use crate::partition::walked::{
    ClusterInputs, LogItem, LogRecord, ReadErrors, SegmentNames, SegmentRead, stream_records,
};
use crate::read::format::error::Problem;
use crate::read::format::txnlog::{self, LogKey, TxnState};
use std::borrow::{Borrow, Cow};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

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
        None => {
            // `TransactionLogKey`'s reader refuses a null transactional id: a key the
            // coordinator's load cannot read.
            rec.null_id = true;
            rec.problem = problem(RecordProblem::Key(
                "non-nullable field transactionalId was serialized as null".into(),
            ));
            return rec;
        }
    }
    match txnlog::parse_value(r.value.as_deref()) {
        Ok(Some(v)) => match load_refusal(&v) {
            Some(e) => rec.problem = problem(RecordProblem::Value(e)),
            None => rec.value = Some(CoordValue::of(&v)),
        },
        Ok(None) => {}
        Err(e) => {
            rec.problem = problem(match e.problem {
                Problem::OutOfRange { value } if e.field == "transactionStatus" => {
                    RecordProblem::UnknownState {
                        byte: value,
                        error: e.to_string(),
                    }
                }
                Problem::OutOfRange { value } if e.field == "version" => {
                    RecordProblem::ValueVersion {
                        version: value as i16,
                        error: e.to_string(),
                    }
                }
                _ => RecordProblem::Value(e.to_string()),
            })
        }
    }
    rec
}

/// Why the coordinator's load fails on a value that decodes by its schema, if it does
/// (`TransactionLog.readTxnRecordValue`): the generated `TransactionLogValue` reader
/// refuses a null topic or a null partition id array in any state (neither field is
/// nullable); the value's partitions are read for every state but Empty, so a null list
/// there fails too; and `TransactionVersion.fromFeatureLevel` refuses a
/// ClientTransactionVersion level it does not know (0–2 in every release klogscan models,
/// trunk included).
fn load_refusal(v: &txnlog::TxnLogValue<'_>) -> Option<String> {
    let parts = v.partitions.iter().flatten();
    if parts.clone().any(|tp| tp.topic.is_none()) {
        return Some("non-nullable field topic was serialized as null".into());
    }
    if parts.clone().any(|tp| tp.null_partition_ids) {
        return Some("non-nullable field partitionIds was serialized as null".into());
    }
    if !(0..=MAX_CLIENT_TRANSACTION_VERSION).contains(&v.client_transaction_version) {
        return Some(format!(
            "ClientTransactionVersion {} is no transaction.version level the coordinator knows (0–{MAX_CLIENT_TRANSACTION_VERSION}; TransactionVersion.fromFeatureLevel refuses it): {NEWER_OR_CORRUPT}",
            v.client_transaction_version
        ));
    }
    if v.partitions.is_none() && v.state != TxnState::Empty {
        return Some(format!(
            "a null partition list in a {} value: the coordinator's reader reads the partitions of every state but Empty (TransactionLog.readTxnRecordValue) and fails on it",
            v.state
        ));
    }
    None
}

/// The highest `transaction.version` feature level (`TransactionVersion.TV_2`).
const MAX_CLIENT_TRANSACTION_VERSION: i16 = 2;

/// What a value no known broker writes may be.
pub(super) const NEWER_OR_CORRUPT: &str = "a newer broker's value, or corruption";

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
fn push(sink: &mut impl Sink, item: &LogItem, segments: &SegmentNames) {
    match item {
        LogItem::Record(r) => sink.record(decode(r)),
        LogItem::Undecodable {
            segment,
            message,
            offsets,
        } => sink.unread(UnreadBatch {
            segment: segments.name(*segment).into_owned(),
            reason: message.clone(),
            offsets: *offsets,
        }),
        LogItem::Marker { .. } => {}
    }
}

/// A `__transaction_state` partition copy's records: kept by a walk (an evidence bundle's
/// results), the scan's walk (taken out as they are read: each one's bytes are freed once
/// decoded), or still in its segments (read again streaming: the scan's walk kept none of
/// them, or did not select the partition; see [`ReadErrors`]).
pub(super) enum Walked<'a> {
    Kept(&'a ClusterInputs, &'a SegmentNames),
    Taken(&'a mut ClusterInputs, &'a SegmentNames),
    Disk(&'a PartitionDir, ReadErrors, &'a ScanOptions),
}

impl Walked<'_> {
    /// Decode every record of the copy, in offset order, into the sink `fresh` makes. A
    /// read from disk with [`ReadErrors::AsWalked`] may start again with a fresh sink: a
    /// segment that changed during the read gives none of its records, as the scan's walk
    /// drops them, so the copy is read again without it.
    fn feed<S: Sink>(self, mut fresh: impl FnMut() -> S) -> S {
        fn all<S: Sink>(
            mut sink: S,
            names: &SegmentNames,
            items: impl IntoIterator<Item: Borrow<LogItem>>,
        ) -> S {
            sink.segments(names.iter().map(Cow::into_owned).collect());
            for item in items {
                push(&mut sink, item.borrow(), names);
            }
            sink
        }
        let (p, errors, opts) = match self {
            Walked::Kept(inputs, names) => {
                return all(fresh(), names, inputs.txn_log.iter().flatten());
            }
            Walked::Taken(inputs, names) => {
                let items = inputs.txn_log.take().unwrap_or_default();
                return all(fresh(), names, items);
            }
            Walked::Disk(p, errors, opts) => (p, errors, opts),
        };
        let listed = p.log_names();
        let names: SegmentNames = listed.iter().collect();
        let mut skip = BTreeSet::new();
        loop {
            let mut sink = fresh();
            sink.segments(listed.clone());
            let how = SegmentRead {
                errors: &errors,
                skip: &skip,
                ..SegmentRead::report(opts.max_bytes, opts.max_decompressed)
            };
            let mut each = |item: LogItem| push(&mut sink, &item, &names);
            match stream_records(p, &how, Some(&mut each), &mut |_, _| {}) {
                Ok(()) => return sink,
                // Each pass skips one more segment: at most one pass per segment.
                Err(n) if skip.insert(n) => {}
                Err(_) => return sink,
            }
        }
    }

    /// The copy replayed into the coordinator's model, each record decoded and replayed in
    /// turn (none is kept): `wanted` as [`Replay::new`]; `tail_read`: the copy's records
    /// were read to the end of its log ([`Replay::tail_not_read`]); `since_4_3`: its
    /// coordinator runs Kafka 4.3 or later ([`Replay::loaded_by_kafka_4_3`]).
    pub(super) fn replay(
        self,
        partition: i32,
        origin: Origin,
        ref_time_ms: i64,
        (wanted, tail_read, since_4_3): (Option<Arc<HashSet<i64>>>, bool, bool),
    ) -> CoordModel {
        self.feed(|| {
            let mut r = Replay::new(partition, origin.clone(), ref_time_ms, wanted.clone());
            if !tail_read {
                r.tail_not_read();
            }
            if since_4_3 {
                r.loaded_by_kafka_4_3();
            }
            r
        })
        .finish()
    }

    /// The copy's records decoded, with the batches whose records were not read: the
    /// join's serialisable inputs.
    #[cfg(feature = "testkit")]
    fn decode(self, partition: i32, origin: Origin, ref_time_ms: i64) -> CoordinatorLog {
        self.feed(|| CoordinatorLog {
            version: INPUT_VERSION,
            partition,
            origin: origin.clone(),
            ref_time_ms,
            records: Vec::new(),
            segments: Vec::new(),
            records_not_read: Vec::new(),
        })
    }
}

/// What the coordinator's view reads of a model: no finished transaction but each id's
/// latest.
pub(super) fn view_only() -> Option<Arc<HashSet<i64>>> {
    Some(Arc::default())
}

/// Every `__transaction_state` partition directory of `inv`, in its order: from what the
/// scan's walk kept (taken out of `report`), else read again from its segments (the scan
/// kept none of its records, or did not select it). `origin` names each directory (the
/// join's [`Origin`]); the reference time of a copy is its partition's, else `--now`,
/// else the newest of the scan.
fn each_log<'a>(
    report: &mut ScanReport,
    inv: &'a Inventory,
    opts: &'a ScanOptions,
    mut each: impl FnMut(i32, i64, &str, Walked<'_>, bool),
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
        // Read to the end of its log: as far as the scan read it, or all of it without
        // `--max-bytes`.
        let tail_read = at.map_or(opts.max_bytes.is_none(), |i| {
            !report.partitions[i].partially_read
        });
        let walked_to = at.map_or_else(Vec::new, |i| {
            std::mem::take(&mut report.partitions[i].carried.cluster_inputs.walked_to).into()
        });
        let walked = match at.map(|i| &mut report.partitions[i].carried) {
            Some(c) if c.cluster_inputs.txn_log.is_some() => {
                Walked::Taken(&mut c.cluster_inputs, &c.segment_names)
            }
            // Walked by the scan, which kept none of its records (more than
            // `ScanOptions::keep_coordinator_bytes`): read again as the walk read it.
            Some(_) => Walked::Disk(d, ReadErrors::AsWalked(walked_to), opts),
            None => Walked::Disk(d, ReadErrors::Report, opts),
        };
        each(tp.partition, ref_time, &path, walked, tail_read);
    }
}

/// Every `__transaction_state` partition directory of `inv` decoded once, as the join's
/// serialisable inputs (`each_log`; the scan's walked records are taken out of
/// `report`).
#[cfg(feature = "testkit")]
pub fn decode_logs(
    report: &mut ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    origin: impl Fn(&str) -> Origin,
) -> Vec<CoordinatorLog> {
    let mut out = Vec::new();
    each_log(report, inv, opts, |partition, ref_time, path, walked, _| {
        out.push(walked.decode(partition, origin(path), ref_time));
    });
    out
}

/// Every `__transaction_state` partition directory of `inv` replayed once into the
/// coordinator's model (`each_log`): the scan's walked records are taken out of
/// `report` and freed as they are replayed; the finished transactions kept are those of
/// the producer ids of the scan's transactions (`TxnRecord`s still in `report`).
pub fn replay_logs(
    report: &mut ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    origin: impl Fn(&str) -> Origin,
    loads: &super::leader::LeaderCopies,
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
    each_log(
        report,
        inv,
        opts,
        |partition, ref_time, path, walked, tail_read| {
            let how = (
                Some(wanted.clone()),
                tail_read,
                loads.loaded_by_kafka_4_3(path),
            );
            out.push(walked.replay(partition, origin(path), ref_time, how));
        },
    );
    out
}
