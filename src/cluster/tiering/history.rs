//! Which remote segments a scan with `--remote-storage` replays before each replica's
//! local log ([`crate::partition::remote`]): the segments a fetch below the local log
//! start would read.
//!
//! A fetch of a remote offset reads the COPY_SEGMENT_FINISHED segment that holds it in
//! the leader epoch of that offset (`RemoteLogManager.fetchRemoteLogSegmentMetadata`,
//! `RemoteLogMetadataCache.remoteLogSegmentMetadata`): segments of an abandoned lineage
//! are never read (`RemoteLogManager.isRemoteSegmentWithinLeaderEpochs`), nor those
//! being deleted. Of the readable ones, each offset is read once, from the lowest segment
//! holding it; offsets at or above the local log start are read locally
//! (`UnifiedLog.read`), so remote segments starting there are left out and a segment
//! reaching into the local log is cut at its start.
//!
//! The history replayed is what the remote storage holds: a finished segment a later copy
//! hides from the cache's lookup in its epoch ([`super::epochs`]) is still read for the
//! offsets no lower segment holds, so producer state sees its batches; the tiering check
//! reports those offsets as unserved (`remote_segment_gap`).

use super::MetadataReplay;
use super::checks::ReplicaView;
use super::lineage::{Lineage, within_lineage};
use super::replay::{PartitionLog, RemoteSegment};
use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::partition::remote::{RemoteHistory, RemoteSegmentInput, RemoteSource};
use crate::partition::results::ScanOptions;
use crate::read::format::remote_log::SegmentState;
use std::collections::BTreeMap;
use std::path::Path;

/// A remote segment's bytes as the storage holds them: its name and how to read it.
pub type Located = BTreeMap<[u8; 16], (String, RemoteSource)>;

/// The remote history, with the remote storage at `root`, of every replica of a tiered
/// partition in `inv`: from `replayed`, the `__remote_log_metadata` partitions replayed
/// before the scan (their walk by the scan comes later).
pub fn remote_history(
    root: &Path,
    inv: &Inventory,
    opts: &ScanOptions,
    replayed: &MetadataReplay,
) -> RemoteHistory {
    let mut history = RemoteHistory::default();
    let mut log_starts = BTreeMap::new();
    for (up, log) in &replayed.replay.partitions {
        let replicas: Vec<_> = inv
            .partitions
            .iter()
            .filter(|p| super::holds(inv, p, up))
            .collect();
        if replicas.is_empty() {
            continue;
        }
        let located = super::storage::locate(root, up, log, opts);
        for p in replicas {
            // A discovered inventory: the local segments are its own.
            let view = super::replica_view(p, None, &Default::default(), &mut log_starts, inv);
            let segs = chain(log, &view, &located);
            if !segs.is_empty() {
                history.by_dir.insert(p.path.clone(), segs);
            }
        }
    }
    history
}

/// The readable remote segments of `log` for a replica with `view`, in offset order, each
/// replayed from the first offset no earlier segment covered.
pub fn chain(log: &PartitionLog, view: &ReplicaView, located: &Located) -> Vec<RemoteSegmentInput> {
    let lineage = view
        .lineage
        .as_ref()
        .filter(|l| !l.is_empty())
        .map(Lineage::filtered);
    let mut readable: Vec<&RemoteSegment> = log
        .segments
        .iter()
        .filter(|s| s.state == SegmentState::CopyFinished)
        .filter(|s| view.log_start_offset.is_none_or(|ls| s.end_offset >= ls))
        .filter(|s| {
            // The log end is not known before the walk: no segment is judged by it.
            lineage.as_ref().is_none_or(|l| {
                let seg = Lineage::new(s.leader_epochs.iter().copied());
                within_lineage(&seg, s.end_offset, i64::MAX, l).is_none()
            })
        })
        .collect();
    readable.sort_by_key(|s| (s.start_offset, std::cmp::Reverse(s.end_offset)));
    let mut out = Vec::new();
    let mut next = i64::MIN;
    for s in readable {
        if view.local_log_start.is_some_and(|l| s.start_offset >= l) {
            break;
        }
        if s.end_offset < next {
            continue;
        }
        let (name, source) = located.get(&s.id).cloned().unwrap_or_else(|| {
            let name = crate::read::format::checkpoint::encode_uuid(&s.id);
            let why = "not in the remote storage given (remote_segment_missing)".to_string();
            (name, RemoteSource::Unreadable(why))
        });
        out.push(RemoteSegmentInput {
            name,
            start_offset: s.start_offset,
            end_offset: s.end_offset,
            replay_from: next.max(s.start_offset),
            source,
        });
        next = s.end_offset.saturating_add(1);
    }
    out
}

/// The replicas of `report` (a merge's, from evidence bundles) whose remote segments a
/// scan with `--remote-storage` over all their directories replays but whose collect did
/// not: the `__remote_log_metadata` partition naming them was on another broker, so the
/// collect knew of no remote segment. Their report indices, from `replayed` (the merge's
/// one replay).
pub fn unreplayed(
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    replayed: &MetadataReplay,
) -> Vec<usize> {
    let mut out = Vec::new();
    if opts.remote_storage.is_none() {
        return out;
    }
    let index = super::report_index(report);
    let mut log_starts = BTreeMap::new();
    for (up, log) in &replayed.replay.partitions {
        for p in inv.partitions.iter().filter(|p| super::holds(inv, p, up)) {
            let Some(&i) = index.get(p.path.to_string_lossy().as_ref()) else {
                continue;
            };
            let r = &report.partitions[i];
            if r.tiered.as_ref().is_some_and(|t| t.replayed.is_some()) {
                continue;
            }
            let segments = &r.carried.segment_names;
            let view = super::replica_view(p, None, segments, &mut log_starts, inv);
            // Which segments are read does not depend on where their objects are.
            if !chain(log, &view, &Located::new()).is_empty() {
                out.push(i);
            }
        }
    }
    out
}
