//! The metadata log's segments as a KRaft node reads them at start, after
//! `KafkaMetadataLog.apply` has opened the log:
//!
//! * `UnifiedLog`'s load recovers every segment from offset 0 (the metadata log's recovery
//!   point is 0 and its last shutdown taken as unclean): the first batch failing its CRC, or
//!   bytes that do not frame, truncate the log there ([`recover`]);
//! * `truncateToLatestSnapshot` truncates the log fully to the latest id `recoverSnapshots`
//!   kept when that id is past the recovered log ([`start_read`]);
//! * since Kafka 3.8, `KafkaRaftClient.initialize` → `KRaftControlRecordStateMachine.updateState`
//!   reads the latest snapshot (`maybeLoadSnapshot`), then every batch from the snapshot's end
//!   offset — from 0 without a snapshot it can read — to the log end, committed or not
//!   (`maybeLoadLog`: `log.read(nextOffset, UNCOMMITTED)`, whole batches from the one holding
//!   that offset), through `RecordsIterator` with the metadata record serde, which decodes
//!   every record: a record it refuses throws out of `initialize` and nothing catches it.
//!
//! `RecordsIterator`'s checks are the snapshot reader's (`reader::check_batch_at`): timestamp
//! delta 0 and no header, a control record of the five KRaft types, a data record without
//! key whose value `MetadataRecordSerde` reads (`MetadataParseException`; a type or version
//! this reader does not know is not judged: it depends on the node's release). The first
//! record refused is `metadata_log_unreadable`.

use super::reader::check_batch_at;
use super::{RetainedId, latest_retained_id, metadata_log_start};
use crate::discover::layout::PartitionDir;
use crate::finding::{Finding, Kind};
use crate::read::format::{self, Decompressor};
use crate::read::segment::{self, Item, ReadPolicy};
use serde_json::json;

/// At most this many refused batches are remembered (the first one at or after the start's
/// read point is reported).
const MAX_PROBLEMS: usize = 1024;

/// A batch of the recovered log that `RecordsIterator` refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The segment file.
    pub file: String,
    pub batch_offset: i64,
    pub last_offset: i64,
    /// The refused record's offset (none when the batch's records do not frame).
    pub record_offset: Option<i64>,
    /// `record_framing`, `control_record_type`, `control_record`, `data_record`,
    /// `metadata_record` (the snapshot reader's reasons).
    pub reason: &'static str,
    pub detail: String,
}

/// The log as `UnifiedLog`'s load leaves it (see the module).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The end offset of the last valid batch before the first invalid one.
    pub end: Option<i64>,
    /// The latest KRaft epoch among those batches (0: none, `latestEpoch.getOrElse(0)`).
    pub epoch: i32,
    /// A batch or file this model does not follow (magic 0/1, a batch too large to hold, a
    /// file read in part or not at all): nothing is claimed.
    pub unknown: bool,
    /// The batches `RecordsIterator` refuses, in log order, up to the recovery's stop.
    pub refused: Vec<Refused>,
}

/// Walk `p`'s segments as the load recovers them (see the module), checking the records of
/// the batches that reach `check_from` (no start reads the earlier ones; `i64::MAX`: none
/// is checked).
pub fn recover(
    p: &PartitionDir,
    check_from: i64,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Recovered {
    let mut rec = Recovered::default();
    let mut dec = Decompressor::new(max_decompressed);
    let mut stopped = false;
    for seg in &p.segments {
        let Some(file) = &seg.log else { continue };
        if stopped || rec.unknown {
            break;
        }
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let walked = segment::walk_entries_items(file, ReadPolicy::Read, max_bytes, |item| {
            if stopped || rec.unknown {
                return;
            }
            let Item::Entry(entry) = item else {
                return rec.unknown = true;
            };
            let Ok(b) = entry.as_v2() else {
                return rec.unknown = true;
            };
            if !b.is_valid() {
                // `LogSegment.recover` truncates here; `LogLoader` deletes the later segments.
                stopped = true;
                return;
            }
            // A batch whose next offset overflows a long (hostile bytes): the load's
            // recovery is not modelled there.
            let Some(end) = b.checked_last_offset().map(|l| l + 1) else {
                return rec.unknown = true;
            };
            rec.end = Some(end);
            rec.epoch = rec.epoch.max(b.partition_leader_epoch());
            if b.last_offset() >= check_from
                && rec.refused.len() < MAX_PROBLEMS
                && let Some((reason, detail, delta)) = check_batch_at(&b, false, &mut dec)
            {
                rec.refused.push(Refused {
                    file: name.clone(),
                    batch_offset: b.base_offset(),
                    last_offset: b.last_offset(),
                    record_offset: delta.and_then(|d| b.base_offset().checked_add(i64::from(d))),
                    reason,
                    detail,
                });
            }
        });
        match walked {
            Ok((_, read)) if std::fs::metadata(file).is_ok_and(|m| m.len() > read) => {
                rec.unknown = true
            }
            Ok((format::Tail::Clean, _)) => {}
            // Bytes after the last whole batch that do not frame: truncated there.
            Ok(_) => stopped = true,
            Err(_) => rec.unknown = true,
        }
    }
    rec
}

/// Where the start's read of the segments begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartRead {
    /// `truncateToLatestSnapshot` empties the log and starts it at this id's end offset: no
    /// segment record is read.
    TruncatedFully(RetainedId),
    /// The records from `offset` (the latest snapshot's end offset, or 0 when the node has
    /// no snapshot it can read) to the log end are decoded. `snapshot`: the latest id when
    /// its file is opened.
    From {
        offset: i64,
        snapshot: Option<RetainedId>,
    },
    /// The recovered log is not known (see [`Recovered::unknown`]).
    Unknown,
}

/// [`StartRead`] of `p`, recovered as `rec`. The latest id is `recoverSnapshots`'
/// greatest, whatever its file's name; a name Kafka does not open it by leaves no snapshot
/// to read (`readSnapshot`: `NoSuchFileException`, the id dropped), and the 3.8+ read
/// starts at 0 (`maybeLoadSnapshot`).
pub fn start_read(p: &PartitionDir, rec: &Recovered) -> StartRead {
    if rec.unknown {
        return StartRead::Unknown;
    }
    let end = rec.end.unwrap_or_else(|| metadata_log_start(p));
    match latest_retained_id(p) {
        Some(l) if l.epoch > rec.epoch || (l.epoch == rec.epoch && l.end_offset > end) => {
            StartRead::TruncatedFully(l)
        }
        Some(l) if l.canonical => StartRead::From {
            offset: l.end_offset,
            snapshot: Some(l),
        },
        _ => StartRead::From {
            offset: 0,
            snapshot: None,
        },
    }
}

/// The `metadata_log_unreadable` finding of `p`, a live metadata log copy one of whose
/// records every start decodes fails `RecordsIterator`'s checks (see the module). Not for
/// a copy whose start fails before the read (`metadata_snapshot_inconsistent`, a read from
/// 0 below a log start above 0: `metadata_snapshot_misnamed`).
pub(crate) fn log_read_finding(
    p: &PartitionDir,
    topic: &str,
    partition: i32,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Option<Finding> {
    if !super::reader::start_reads(p) {
        return None;
    }
    // The start reads from the latest id's end when its file opens, else from 0.
    let check_from = latest_retained_id(p)
        .filter(|l| l.canonical)
        .map_or(0, |l| l.end_offset);
    let rec = recover(p, check_from, max_bytes, max_decompressed);
    let StartRead::From { offset, snapshot } = start_read(p, &rec) else {
        return None;
    };
    if offset < metadata_log_start(p) {
        return None;
    }
    let bad = rec.refused.iter().find(|r| r.last_offset >= offset)?;
    let at = bad.record_offset.unwrap_or(bad.batch_offset);
    let from = snapshot
        .as_ref()
        .map_or("offset 0 (no snapshot)".to_string(), |s| {
            format!(
                "the latest snapshot's end offset {} ({})",
                s.end_offset, s.file
            )
        });
    let msg = format!(
        "{}: the metadata record at offset {at} (batch at {}) cannot be read: {}; every start of the node reads its log from {from} to the log end and KafkaRaftClient.initialize throws: the node does not start (Kafka 3.8+)",
        bad.file, bad.batch_offset, bad.detail
    );
    Some(
        Finding::new(Kind::MetadataLogUnreadable, topic, partition, msg)
            .segment(bad.file.clone())
            .offset(at)
            .evidence(json!({
                "file": bad.file,
                "reason": bad.reason,
                "batch_offset": bad.batch_offset,
                "record_offset": bad.record_offset,
                "read_from": offset,
                "snapshot": snapshot.as_ref().map(|s| s.file.clone()),
                "log_end_offset": rec.end,
                "refused_batches": rec.refused.iter().filter(|r| r.last_offset >= offset).count(),
            }))
            .broker("Kafka 3.8+: KafkaRaftClient.initialize → KRaftControlRecordStateMachine.updateState (maybeLoadLog) decodes every record from the latest snapshot's end (0 without one) to the log end through RecordsIterator and the metadata record serde (MetadataParseException for a record MetadataRecordSerde cannot read; IllegalArgumentException or RuntimeException for the framing) and nothing catches it: the node (broker or controller) does not start. A running follower that fetches the batch appends it, then decodes it in the same step (appendAsFollower → updateState): its raft IO thread's fault is fatal (KafkaRaftClientDriver, \"Unexpected error in raft IO thread\") and the process halts. Kafka 3.5–3.7 decode only in the listeners, once the batch is committed (MetadataLoader.handleCommit, and QuorumController's on a controller): the metadata loader's fault handler (\"metadata loading\") is fatal on a node with the controller role; a broker logs it, counts it in metadata-load-error-count and goes on without the batch (the raft client hands the log again from after the last batch the loader took), so its metadata image lacks every record of that batch")
            .client_error("none from this file: the node does not start, so its clients fail over to other nodes or wait")
            .remediation("dump the batch (klogscan dump, kafka-dump-log.sh --cluster-metadata-decoder): a type or version a newer controller wrote needs that release on this node; anything else was damaged before its CRC was computed. Compare the other voters' copies; with the node stopped, replace this node's __cluster_metadata-0 with a voter's copy that does not hold the batch, or — when every copy holds it — start the nodes from a snapshot taken after it"),
    )
}
