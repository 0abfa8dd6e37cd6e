//! Names `Snapshots.parse` reads as a KRaft snapshot id but that are not the name Kafka gives
//! that id's files (`00000000000000000100x0000000001.checkpoint`,
//! `00000000000000000100-0000000001.old.checkpoint`: the parse reads the end offset at
//! characters 0–19 and the epoch at 21–30 and checks nothing else), and what
//! `KafkaMetadataLog.recoverSnapshots` does with them at start:
//!
//! * a partial or deleted one, or one below the log start, is deleted once the snapshot state
//!   is found consistent (`Files.deleteIfExists` of its own path; the partial and deleted
//!   suffixes are leftovers, which `verify`'s `leftover_file` names);
//! * any other is kept as a snapshot id (`snapshotsToRetain`): it counts for the consistency
//!   check and may be the latest id, but `readSnapshot` opens the id under Kafka's name
//!   (`FileRawSnapshotReader.open` → `Snapshots.snapshotPath`), finds no file there
//!   (`NoSuchFileException`: logged "Couldn't read …", the id dropped —
//!   `KafkaMetadataLogTest.testReadMissingSnapshot`) and returns nothing. Such a file is
//!   never opened, and `Snapshots.deleteIfExists` (retention) deletes only Kafka's names.
//!
//! `metadata_snapshot_misnamed` says which, for the names Kafka does not write itself.

use super::log_read::{StartRead, recover, start_read};
use super::{RetainedId, latest_retained_id, metadata_log_start, retained_ids, snapshot_fates};
use crate::discover::layout::{DirKind, KraftSnapshotFate, PartitionDir, kafka_snapshot_file_name};
use crate::finding::{Finding, Kind, Severity};
use serde_json::json;

/// The `metadata_snapshot_misnamed` findings of `p`, a live metadata log copy (see the
/// module).
pub(crate) fn snapshot_name_findings(
    p: &PartitionDir,
    topic: &str,
    partition: i32,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Vec<Finding> {
    let live = matches!(p.kind, None | Some(DirKind::Normal));
    if !p.is_kraft_metadata() || !live {
        return Vec::new();
    }
    let start = metadata_log_start(p);
    let retained = retained_ids(p);
    let latest = latest_retained_id(p);
    let mut start_read_of = None;
    let mut out = Vec::new();
    for (name, fate) in snapshot_fates(p) {
        if kafka_snapshot_file_name(&name) {
            continue;
        }
        let (end_offset, epoch, fate, severity, what) = match fate {
            // A partial or deleted suffix is a leftover (`leftover_file` says its fate).
            KraftSnapshotFate::Deleted {
                end_offset,
                epoch,
                why: "below_log_start",
            } => (
                end_offset,
                epoch,
                "deleted_at_start",
                Severity::Info,
                format!(
                    "recoverSnapshots deletes it at the next start unread (its end offset is below the log start {start})"
                ),
            ),
            KraftSnapshotFate::Retained {
                end_offset, epoch, ..
            } => {
                let twin = retained
                    .iter()
                    .find(|r| r.canonical && (r.end_offset, r.epoch) == (end_offset, epoch));
                if let Some(twin) = twin {
                    (
                        end_offset,
                        epoch,
                        "same_id_as_snapshot",
                        Severity::Info,
                        format!(
                            "recoverSnapshots keeps the id, which {} holds: this file is never opened, and not deleted with the snapshot (Snapshots.deleteIfExists removes Kafka's names only)",
                            twin.file
                        ),
                    )
                } else {
                    let read = start_read_of.get_or_insert_with(|| {
                        start_read(p, &recover(p, i64::MAX, max_bytes, max_decompressed))
                    });
                    let (fate, severity, what) = unopened(
                        &name,
                        end_offset,
                        epoch,
                        start,
                        &retained,
                        latest.as_ref(),
                        read,
                    );
                    (end_offset, epoch, fate, severity, what)
                }
            }
            _ => continue,
        };
        let msg = format!(
            "{name}: Snapshots.parse reads this name as snapshot id (end offset {end_offset}, epoch {epoch}), but it is not the name Kafka gives that snapshot ({}): {what}",
            if end_offset >= 0 && epoch >= 0 {
                crate::discover::layout::canonical_snapshot_name(end_offset, epoch)
            } else {
                "a negative id has none".to_string()
            }
        );
        out.push(
            Finding::new(Kind::MetadataSnapshotMisnamed, topic, partition, msg)
                .severity(severity)
                .segment(name.clone())
                .offset(end_offset)
                .evidence(json!({
                    "file": name,
                    "end_offset": end_offset,
                    "epoch": epoch,
                    "fate": fate,
                    "log_start_offset": start,
                }))
                .broker(format!("KafkaMetadataLog.apply → recoverSnapshots (Snapshots.parse of every name in the directory): {what}"))
                .remediation(if severity == Severity::Info {
                    "none needed; move the file out of the directory if it is a copy kept on purpose".to_string()
                } else {
                    format!("with the node stopped, move {name} out of the partition directory, or give it Kafka's name when it is a renamed snapshot of that id")
                }),
        );
    }
    out
}

/// The fate, severity and text of a kept id no file opens (see the module).
fn unopened(
    name: &str,
    end_offset: i64,
    epoch: i32,
    start: i64,
    retained: &[RetainedId],
    latest: Option<&RetainedId>,
    read: &StartRead,
) -> (&'static str, Severity, String) {
    let no_file = "readSnapshot then opens the id under Kafka's name, finds no file (NoSuchFileException, logged \"Couldn't read\") and drops the id";
    let fails = "Kafka 3.8+: KafkaRaftClient.initialize finds no snapshot to read and reads the log from offset 0, below its start (UnifiedLog.read: OffsetOutOfRangeException), and the node does not start; before 3.8 the raft client's hand-off to the metadata loader throws IllegalStateException (\"Snapshot expected\", KafkaRaftClient.updateListenersProgress)";
    let is_latest = latest.is_some_and(|l| l.file == name);
    if let StartRead::TruncatedFully(l) = read
        && l.file == name
    {
        let after = if end_offset > 0 {
            format!("; {fails}")
        } else {
            String::new()
        };
        return (
            "truncates_log",
            Severity::Error,
            format!(
                "recoverSnapshots keeps the id as the latest, past the recovered log (epoch {epoch} above the log's latest, or its end offset above the log end), so truncateToLatestSnapshot empties the log (UnifiedLog.truncateFullyAndStartAt({end_offset}): every segment is deleted); {no_file}: the node's log and the state below {end_offset} are gone{after}"
            ),
        );
    }
    if start > 0 && retained.iter().all(|r| !r.canonical) {
        return (
            "only_snapshot_at_log_start",
            Severity::Error,
            format!(
                "recoverSnapshots counts the id, so it does not throw (Inconsistent snapshot state) and deletes the snapshots below the log start {start}; but no file holds the state below that start under a name Kafka opens: {no_file}; {fails}"
            ),
        );
    }
    if is_latest && start > 0 {
        return (
            "latest_without_file",
            Severity::Error,
            format!(
                "recoverSnapshots keeps the id as the latest; {no_file}. Kafka 3.8+: KafkaRaftClient.initialize (KRaftControlRecordStateMachine.maybeLoadSnapshot) asks for the latest snapshot once, gets none, and reads the log from offset 0, below its start {start} (UnifiedLog.read: OffsetOutOfRangeException): the node does not start. Before 3.8 the metadata loader is handed the next latest snapshot"
            ),
        );
    }
    let which = if is_latest {
        "keeps the id as the latest (Kafka 3.8+ KafkaRaftClient.initialize then reads the log from offset 0, the metadata loader the next latest snapshot)"
    } else {
        "keeps the id"
    };
    (
        "retained_unopened",
        Severity::Warning,
        format!("recoverSnapshots {which}; {no_file}: this file is never read"),
    )
}
