//! The 3.6–3.7 `remote_log_snapshot` files as the source of the remote log metadata when
//! the inputs hold no `__remote_log_metadata` partition: each user partition's directory
//! may hold the snapshot `TopicBasedRemoteLogMetadataManager`'s consumer task wrote of its
//! `RemoteLogMetadataCache` (`RemoteLogMetadataSnapshotFile`, `RemotePartitionMetadataStore`):
//! every segment not yet DELETE_SEGMENT_FINISHED with its state, and the metadata
//! partition and offset it was taken at.
//!
//! A snapshot holds states, not the events between them: all its segments carry one
//! event, at the snapshot's offset, so a segment left in a *_STARTED state is never said
//! to have been overtaken by later events (`remote_copy_unfinished` and
//! `remote_delete_unfinished` stay silent). Of several replicas' snapshots of one
//! partition, the one taken at the highest metadata offset is replayed.

use super::replay::{EventAt, PartitionLog, Replay, UserPartition};
use crate::discover::layout::{DirKind, Inventory, PartitionDir};
use crate::read::format::checkpoint::parse_partition_metadata;
use crate::read::format::remote_log::{REMOTE_LOG_SNAPSHOT_FILE, parse_remote_log_snapshot};
use std::collections::BTreeMap;

/// The replay of every partition directory's `remote_log_snapshot`; the metadata
/// partitions the snapshots name (no report index: no such partition is in the inputs).
pub fn replay_snapshots(inv: &Inventory) -> (Replay, BTreeMap<i32, Option<usize>>) {
    let mut best: BTreeMap<UserPartition, (EventAt, PartitionLog)> = BTreeMap::new();
    for p in &inv.partitions {
        let Some((up, at, log)) = read_snapshot(p) else {
            continue;
        };
        if best.get(&up).is_none_or(|b| at.offset > b.0.offset) {
            best.insert(up, (at, log));
        }
    }
    let mut replay = Replay::default();
    let mut chosen = BTreeMap::new();
    for (up, (at, log)) in best {
        chosen.insert(at.metadata_partition, None);
        replay.partitions.insert(up, log);
    }
    (replay, chosen)
}

/// Partition directory `p`'s snapshot, when it has one that reads (a file that does not
/// read is what `dump` shows; the replay leaves it out).
fn read_snapshot(p: &PartitionDir) -> Option<(UserPartition, EventAt, PartitionLog)> {
    let tp = p.tp.as_ref()?;
    if p.kind != Some(DirKind::Normal) {
        return None;
    }
    let bytes = super::small_file(Some(&p.path.join(REMOTE_LOG_SNAPSHOT_FILE)))?;
    let topic_id = super::small_file(p.partition_metadata.as_deref())
        .and_then(|b| parse_partition_metadata(&b).ok())?
        .topic_id;
    let (header, entries) = parse_remote_log_snapshot(&bytes).ok()??;
    let at = EventAt {
        metadata_partition: header.metadata_partition,
        offset: header.metadata_partition_offset,
    };
    let mut log = PartitionLog::default();
    for e in entries {
        log.restore(at, &e.ok()?);
    }
    let up = UserPartition {
        topic: tp.topic.clone(),
        partition: tp.partition,
        topic_id,
    };
    Some((up, at, log))
}
