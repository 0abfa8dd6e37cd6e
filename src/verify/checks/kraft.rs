//! `unparseable_file_name` of a live KRaft metadata log's (`__cluster_metadata-0`)
//! snapshot names: `KafkaMetadataLog.recoverSnapshots` (run by `KafkaMetadataLog.apply`
//! once `UnifiedLog` has loaded the segments) first gives every name of the directory to
//! `Snapshots.parse`, which reads a name ending `.checkpoint` (`.checkpoint.part`,
//! `.checkpoint.deleted`) at fixed widths and throws on a renamed one
//! (`discover::layout::kraft_snapshot_name`); nothing catches it. (Its other start failures —
//! `metadata_snapshot_inconsistent`, `metadata_snapshot_unreadable`,
//! `metadata_log_unreadable` and a name parsed as an id no file opens,
//! `metadata_snapshot_misnamed` — are the scan's: `partition::recovery::metadata_snapshots`,
//! carried here.)

use super::{load_checked, mk, name_of};
use crate::discover::layout::{KraftSnapshotName, PartitionDir, kraft_snapshot_name};
use crate::finding::{Finding, Kind};
use crate::partition::scan::PartitionReport;
use crate::read::format::checkpoint::{encode_uuid, parse_partition_metadata};
use crate::read::segment::FileClass;
use crate::verify::VerifyOptions;
use serde_json::json;

/// `Uuid.METADATA_TOPIC_ID` (`AAAAAAAAAAAAAAAAAAAAAQ`), the topic id
/// `KafkaRaftServer.MetadataTopicId` gives the metadata log.
const METADATA_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// The small file `file` of `p` when `p` is a live metadata log copy, read (an unreadable
/// one is said in `out`).
fn live_metadata_file<'a>(
    p: &PartitionDir,
    file: &'a Option<std::path::PathBuf>,
    r: &PartitionReport,
    opts: &VerifyOptions,
    out: &mut Vec<Finding>,
) -> Option<(&'a std::path::PathBuf, crate::read::segment::FileData)> {
    if !p.is_kraft_metadata() || !r.source.copy.is_live() {
        return None;
    }
    let path = file.as_ref()?;
    Some((
        path,
        load_checked(path, FileClass::Checkpoint, opts, r, out)?,
    ))
}

/// `metadata_log_topic_id_mismatch` of `p`, a live metadata log copy whose
/// `partition.metadata` names another topic id than the metadata topic's:
/// `KafkaMetadataLog.apply` opens the log as `UnifiedLog` with that fixed id and
/// `keepPartitionMetadataFile` on (`KafkaMetadataLogTest.testTopicId`), and
/// `UnifiedLog.initializeTopicId` throws `InconsistentTopicIdException` when the file holds
/// another; nothing catches it. A file that does not parse is not judged here.
pub(super) fn check_topic_id(
    p: &PartitionDir,
    r: &PartitionReport,
    opts: &VerifyOptions,
    out: &mut Vec<Finding>,
) {
    let Some((path, bytes)) = live_metadata_file(p, &p.partition_metadata, r, opts, out) else {
        return;
    };
    let Ok(m) = parse_partition_metadata(&bytes) else {
        return;
    };
    if m.topic_id == METADATA_TOPIC_ID {
        return;
    }
    let (found, want) = (encode_uuid(&m.topic_id), encode_uuid(&METADATA_TOPIC_ID));
    out.push(
        mk(
            r,
            Kind::MetadataLogTopicIdMismatch,
            "partition.metadata",
            format!(
                "partition.metadata names topic id {found}, not the metadata topic's ({want}): KafkaMetadataLog opens this log with {want} and UnifiedLog.initializeTopicId throws InconsistentTopicIdException: the node does not start"
            ),
        )
        .evidence(json!({
            "file": path.display().to_string(),
            "topic_id": found,
            "expected_topic_id": want,
        }))
        .broker(format!(
            "KafkaMetadataLog.apply → UnifiedLog (topic id {want}, keepPartitionMetadataFile) → initializeTopicId: the file's topic id differs and InconsistentTopicIdException is thrown; nothing catches it, so the node (broker or controller) does not start"
        ))
        .client_error("none from this file: the node does not start, so its clients fail over to other nodes or wait")
        .remediation(format!(
            "with the node stopped, check that this directory is the node's own metadata log (not another partition's files moved in); if it is, write topic_id: {want} into partition.metadata (or remove the file: the log writes it again)"
        )),
    );
}

/// `quorum_state_unreadable` of `p`, a live metadata log copy whose `quorum-state` exists
/// and reads but is not a file `FileQuorumStateStore.readStateFromFile` accepts
/// (`crate::cluster::leadership::load::quorum_state_failure`): `KafkaRaftClient.initialize`
/// → `QuorumState.initialize` reads it, and nothing catches what it throws
/// (`FileQuorumStateStoreTest.testCantReadVersionQuorumState`).
pub(super) fn check_quorum_state(
    p: &PartitionDir,
    r: &PartitionReport,
    opts: &VerifyOptions,
    out: &mut Vec<Finding>,
) {
    let Some((path, bytes)) = live_metadata_file(p, &p.quorum_state, r, opts, out) else {
        return;
    };
    let Some(exception) = crate::cluster::leadership::load::quorum_state_failure(&bytes) else {
        return;
    };
    out.push(
        mk(
            r,
            Kind::QuorumStateUnreadable,
            "quorum-state",
            format!("quorum-state: FileQuorumStateStore cannot read it ({exception}): the node does not start"),
        )
        .evidence(json!({
            "file": path.display().to_string(),
            "exception": exception,
        }))
        .broker(
            "KafkaRaftClient.initialize → QuorumState.initialize → FileQuorumStateStore.readElectionState reads quorum-state and throws; nothing catches it, so the node (broker or controller) does not start",
        )
        .client_error("none from this file: the node does not start, so its clients fail over to other nodes or wait")
        .remediation(
            "with the node stopped, move quorum-state out of the directory: the node starts as an unattached voter or observer at the log's latest epoch and learns the leader from the quorum (what a new node does; a voter forgets whom it voted for in the current epoch, so do it with the quorum's other voters up)",
        ),
    );
}

/// The `unparseable_file_name` findings of `p`, a live metadata log copy, for each file
/// whose name `Snapshots.parse` throws on (discovery left it unrecognised, or took it for a
/// `.checkpoint.part`/`.checkpoint.deleted` leftover). The prediction follows `UnifiedLog`'s
/// load, complete before `recoverSnapshots` lists the snapshots, so it names no load failure
/// for them (as for `metadata_snapshot_inconsistent`).
pub(super) fn check_snapshot_names(p: &PartitionDir, r: &PartitionReport, out: &mut Vec<Finding>) {
    if !p.is_kraft_metadata() || !r.source.copy.is_live() {
        return;
    }
    let mut bad: Vec<(String, &'static str, &std::path::Path)> = p
        .unknown
        .iter()
        .chain(p.leftovers.iter().map(|(_, path)| path))
        .filter_map(|path| {
            let name = name_of(path);
            match kraft_snapshot_name(&name) {
                KraftSnapshotName::Throws(e) => Some((name, e, path.as_path())),
                _ => None,
            }
        })
        .collect();
    bad.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, exception, path) in bad {
        out.push(
            mk(
                r,
                Kind::UnparseableFileName,
                &name,
                format!(
                    "{name}: KafkaMetadataLog reads this name as a KRaft snapshot's (<20-digit end offset>-<10-digit epoch>.checkpoint) and cannot ({exception}): the node does not start"
                ),
            )
            .evidence(json!({
                "file": path.display().to_string(),
                "parsed_by": "kraft_snapshots",
                "exception": exception,
            }))
            .broker(format!(
                "KafkaMetadataLog.apply → recoverSnapshots, after UnifiedLog's load of the segments: Snapshots.parse reads the end offset and the epoch at fixed widths and throws {exception}; nothing catches it, so the node (broker or controller) does not start"
            ))
            .client_error("none from this file: the node does not start, so its clients fail over to other nodes or wait")
            .remediation(format!(
                "with the node stopped, move {name} out of the partition directory, or give it back its name <endOffset, 20 digits>-<epoch, 10 digits>.checkpoint if it is a renamed snapshot"
            )),
        );
    }
}
