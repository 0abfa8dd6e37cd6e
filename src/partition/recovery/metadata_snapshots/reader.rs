//! The latest KRaft snapshot as the node reads it at every start: `KafkaRaftClient` hands
//! the metadata loader its latest snapshot (`updateListenersProgress`, a new listener) and,
//! since Kafka 3.8, `KafkaRaftClient.initialize` reads it first
//! (`KRaftControlRecordStateMachine.maybeLoadSnapshot`), both through
//! `RecordsSnapshotReader` with CRC validation on. Its checks, which nothing on that path
//! catches:
//!
//! * `RecordsSnapshotReader.nextBatch`: the first batch is a control batch whose first record
//!   is the `SnapshotHeaderRecord` (`IllegalStateException` otherwise; the footer is never
//!   looked for);
//! * `RecordsIterator.readBatch`: every batch passes its CRC (`CorruptRecordException`);
//! * `RecordsIterator.readRecord`: every record has timestamp delta 0 and no header;
//! * `RecordsIterator.decodeControlRecord`: a control record has a key and a value, both
//!   non-empty, of one of the five KRaft types (LEADER_CHANGE, SNAPSHOT_HEADER,
//!   SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS; a COMMIT, an ABORT or an unknown type
//!   throws), whose value `ControlRecordUtils` reads;
//! * `RecordsIterator.decodeDataRecord`: a data record has no key and a non-empty value,
//!   which `MetadataRecordSerde` reads (a type or version this reader does not know is not
//!   judged: it depends on the node's version).
//!
//! Older snapshots are opened only when asked for (a follower's `FetchSnapshot` of the
//! latest, `readSnapshot`): no start fails on them.

use super::{KraftSnapshotFile, inconsistent_snapshots};
use crate::discover::layout::{DirKind, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::read::format::metadata::decode_record;
use crate::read::format::{self, ControlType, Decompressor, kraft};
use crate::read::segment::{self, Item, ReadPolicy};
use serde_json::json;
use std::path::PathBuf;

/// The snapshot the node opens at start: among those `recoverSnapshots` keeps (at or
/// above the log start), the greatest `OffsetAndEpoch` (epoch first, then end offset).
pub fn latest_snapshot(p: &PartitionDir) -> Option<(KraftSnapshotFile, PathBuf)> {
    let (end_offset, epoch, path) = crate::discover::layout::latest_kraft_snapshot(p)?;
    let file = path.file_name()?.to_str()?.to_string();
    Some((
        KraftSnapshotFile {
            file,
            end_offset,
            epoch,
        },
        path.clone(),
    ))
}

/// Why `RecordsSnapshotReader` refuses the latest snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableSnapshot {
    pub snapshot: KraftSnapshotFile,
    /// `no_snapshot_header`, `crc_mismatch`, `record_framing`, `control_record_type`,
    /// `control_record`, `data_record`, `metadata_record`.
    pub reason: &'static str,
    /// The offset (inside the snapshot) of the batch that fails.
    pub batch_offset: i64,
    /// What is wrong, in words.
    pub detail: String,
}

/// The first check of the module that the latest snapshot of `p` fails, when it can be
/// told: a file that cannot be read, a legacy entry or an entry too large to hold leave it
/// unknown (`None`; the history's and the scan's own findings say those).
pub fn unreadable_latest_snapshot(
    p: &PartitionDir,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Option<UnreadableSnapshot> {
    let (snapshot, path) = latest_snapshot(p)?;
    let mut dec = Decompressor::new(max_decompressed);
    let mut first = true;
    let mut unknown = false;
    let mut found: Option<(&'static str, i64, String)> = None;
    // A file that does not read is said elsewhere (`unreadable_file`); what was read
    // before the error still proves a failure.
    let _ = segment::walk_entries_items(&path, ReadPolicy::Read, max_bytes, |item| {
        if found.is_some() || unknown {
            return;
        }
        let b = match item {
            Item::Entry(e) => match e.as_v2() {
                Ok(b) => b,
                Err(_) => return unknown = true,
            },
            Item::Big(_) => return unknown = true,
        };
        let is_first = std::mem::replace(&mut first, false);
        found = check_batch(&b, is_first, &mut dec).map(|(r, d)| (r, b.base_offset(), d));
    });
    let (reason, batch_offset, detail) = found?;
    Some(UnreadableSnapshot {
        snapshot,
        reason,
        batch_offset,
        detail,
    })
}

/// The first check `b` fails (`first`: the snapshot's first batch).
fn check_batch(
    b: &format::BatchView<'_>,
    first: bool,
    dec: &mut Decompressor,
) -> Option<(&'static str, String)> {
    check_batch_at(b, first, dec).map(|(r, d, _)| (r, d))
}

/// [`check_batch`], with the offset delta of the record that fails when one does (a batch
/// whose records do not frame names none). The metadata log's segments are read with the
/// same checks at start (`metadata_snapshots::log_read`), `first` false.
pub(super) fn check_batch_at(
    b: &format::BatchView<'_>,
    first: bool,
    dec: &mut Decompressor,
) -> Option<(&'static str, String, Option<i32>)> {
    if !b.is_valid() {
        return Some((
            "crc_mismatch",
            "the batch fails its CRC (RecordsIterator.readBatch: CorruptRecordException)".into(),
            None,
        ));
    }
    if first && !b.is_control() {
        return Some((
            "no_snapshot_header",
            "its first batch is a data batch, not the control batch of the SnapshotHeader record (RecordsSnapshotReader.nextBatch: IllegalStateException)".into(),
            None,
        ));
    }
    let framing = |e: &dyn std::fmt::Display| {
        Some((
            "record_framing",
            format!("its records do not read: {e}"),
            None,
        ))
    };
    let records = match format::batch_records(b, dec) {
        Ok(r) => r,
        Err(e) => return framing(&e),
    };
    for (i, r) in records.enumerate() {
        let r = match r {
            Ok(r) => r,
            Err(e) => return framing(&e),
        };
        if r.timestamp_delta != 0 || r.headers_count != 0 {
            return Some((
                "record_framing",
                format!(
                    "a record has timestamp delta {} and {} header(s) where RecordsIterator.readRecord requires 0 and 0",
                    r.timestamp_delta, r.headers_count
                ),
                Some(r.offset_delta),
            ));
        }
        let problem = if b.is_control() {
            check_control(&r, first && i == 0)
        } else {
            check_data(&r)
        };
        if let Some((reason, detail)) = problem {
            return Some((reason, detail, Some(r.offset_delta)));
        }
    }
    None
}

/// `RecordsIterator.decodeControlRecord` of `r` (`header`: the snapshot's first record,
/// which `RecordsSnapshotReader.nextBatch` requires to be the SnapshotHeader).
fn check_control(r: &format::Record<'_>, header: bool) -> Option<(&'static str, String)> {
    let (Some(key), Some(value)) = (r.key.filter(|k| !k.is_empty()), r.value) else {
        return Some((
            "control_record",
            "a control record has no key or no value (RecordsIterator.decodeControlRecord)".into(),
        ));
    };
    let kind = match format::control::parse_control_key(Some(key)) {
        Ok(k) => k.kind,
        Err(e) => {
            return Some((
                "control_record",
                format!("a control key does not read: {e}"),
            ));
        }
    };
    if header && kind != ControlType::SnapshotHeader {
        return Some((
            "no_snapshot_header",
            format!(
                "its first control record is {}, not SNAPSHOT_HEADER (RecordsSnapshotReader.nextBatch: IllegalStateException)",
                kind.name()
            ),
        ));
    }
    if value.is_empty() {
        return Some((
            "control_record",
            format!("a {} control record has an empty value", kind.name()),
        ));
    }
    let read = match kind {
        ControlType::SnapshotHeader | ControlType::SnapshotFooter => Ok(()),
        ControlType::LeaderChange => kraft::leader_change(value).map(drop),
        ControlType::KraftVersion => kraft::kraft_version(value).map(drop),
        ControlType::KraftVoters => kraft::voters(value).map(drop),
        _ => {
            return Some((
                "control_record_type",
                format!(
                    "a control record of type {} ({}), which no KRaft reader knows (RecordsIterator.decodeControlRecord: IllegalArgumentException)",
                    kind.name(),
                    kind.id()
                ),
            ));
        }
    };
    read.err().map(|e| {
        (
            "control_record",
            format!("a {} control record does not read: {e}", kind.name()),
        )
    })
}

/// `RecordsIterator.decodeDataRecord` of `r`.
fn check_data(r: &format::Record<'_>) -> Option<(&'static str, String)> {
    if r.key.is_some() {
        return Some((
            "data_record",
            "a metadata record has a key (RecordsIterator.decodeDataRecord: IllegalArgumentException)".into(),
        ));
    }
    let Some(value) = r.value.filter(|v| !v.is_empty()) else {
        return Some((
            "data_record",
            "a metadata record has no value or an empty one (RecordsIterator.decodeDataRecord: IllegalArgumentException)".into(),
        ));
    };
    match decode_record(value) {
        Ok(_) => None,
        Err(e) => Some((
            "metadata_record",
            format!("a metadata record does not decode (MetadataRecordSerde): {e}"),
        )),
    }
}

/// Whether a node's start gets as far as reading `p`'s snapshot and log: a live copy of
/// the metadata log (a `-delete`/`-future`/`-stray` one is never its log) that some
/// snapshot reaches (else `metadata_snapshot_inconsistent`: the start fails before).
pub(super) fn start_reads(p: &PartitionDir) -> bool {
    let live = matches!(p.kind, None | Some(DirKind::Normal));
    p.is_kraft_metadata() && live && inconsistent_snapshots(p).is_none()
}

/// The `metadata_snapshot_unreadable` finding of `p`, a live metadata log copy whose
/// latest snapshot the node cannot open (see the module). Not for a copy whose start no
/// snapshot reaches (`metadata_snapshot_inconsistent`: the start fails before).
pub(crate) fn snapshot_read_finding(
    p: &PartitionDir,
    topic: &str,
    partition: i32,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Option<Finding> {
    if !start_reads(p) {
        return None;
    }
    let bad = unreadable_latest_snapshot(p, max_bytes, max_decompressed)?;
    let s = &bad.snapshot;
    let msg = format!(
        "{}, the latest snapshot of the metadata log, which the node opens at every start, cannot be read: {} at offset {} of the snapshot; KafkaRaftClient's snapshot reader throws and the node does not start",
        s.file, bad.detail, bad.batch_offset
    );
    Some(
        Finding::new(Kind::MetadataSnapshotUnreadable, topic, partition, msg)
            .segment(s.file.clone())
            .offset(bad.batch_offset)
            .evidence(json!({
                "file": s.file,
                "end_offset": s.end_offset,
                "epoch": s.epoch,
                "reason": bad.reason,
                "batch_offset": bad.batch_offset,
            }))
            .broker("Kafka 3.8+: KafkaRaftClient.initialize → KRaftControlRecordStateMachine.maybeLoadSnapshot reads the latest snapshot through RecordsSnapshotReader (CRC validation on) and nothing catches the exception: the node (broker or controller) does not start. Before 3.8 the metadata loader's handleLoadSnapshot faults: fatal on a controller; a broker logs the fault and goes on without the snapshot's state")
            .remediation("with the node stopped, remove this snapshot file when the log's segments still hold every record from the log start (an older snapshot at or above the log start, or a log from offset 0), or copy the same snapshot from another node of the cluster"),
    )
}
