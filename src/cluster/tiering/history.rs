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
//!
//! The segments are those the replica's broker's cache holds ([`MetadataReplay::seen_by`]):
//! a broker whose metadata consumer stopped at a record the cache threw on (it hosts that
//! record's partition, `super::hosting`) knows none copied after it.

use super::MetadataReplay;
use super::checks::ReplicaView;
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
            // The log the replica's broker holds (its consumer may have stopped earlier).
            let Some(seen) = replayed.seen_by(p, up).0 else {
                continue;
            };
            // A discovered inventory: the local segments are its own.
            let view = super::replica_view(p, None, &Default::default(), &mut log_starts, inv);
            let segs = if std::ptr::eq(seen, log) {
                chain(log, &view, &located)
            } else {
                chain(seen, &view, &super::storage::locate(root, up, seen, opts))
            };
            if !segs.is_empty() {
                history.by_dir.insert(p.path.clone(), segs);
            }
        }
    }
    history
}

/// The readable remote segments of `log` for a replica with `view`, in offset order, each
/// replayed from the first offset no earlier segment covered: what a consumer reading the
/// remote part from its start is served. `RemoteLogManager.read` looks the offset up in the
/// epoch the replica's leader-epoch cache gives it (`fetchRemoteLogSegmentMetadata`: the
/// floor entry of that epoch, up to the epoch's end in that segment) and returns that
/// segment's batches from there on, past the epoch's end too; it applies no lineage check
/// (`isRemoteSegmentWithinLeaderEpochs` is for retention and ListOffsets by timestamp). So
/// at each offset the segment the lookup serves is read to its end, and the next offset
/// after it is looked up again ([`super::epochs::served`]; with no lineage, any epoch).
pub fn chain(log: &PartitionLog, view: &ReplicaView, located: &Located) -> Vec<RemoteSegmentInput> {
    let lineage = view.lineage.as_ref().filter(|l| !l.is_empty());
    let start = view.log_start_offset.unwrap_or(i64::MIN);
    let last = view
        .local_log_start
        .map_or(i64::MAX, |l| l.saturating_sub(1));
    let mut all: Vec<&RemoteSegment> = log
        .segments
        .iter()
        .filter(|s| s.state == SegmentState::CopyFinished)
        .filter(|s| s.end_offset >= start)
        .collect();
    all.sort_by_key(|s| (s.start_offset, std::cmp::Reverse(s.end_offset)));
    let readable = match lineage {
        Some(l) => served_chain(
            log,
            &super::epochs::served(log, Some(l), start, last),
            &all,
            start,
            last,
        ),
        None => all,
    };
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

/// The segments a reader from `start` meets, in order: at each offset the one the lookup
/// serves (`served`, disjoint ranges ascending), read to its end; where no lookup serves
/// the offset (a later copy hid the segment from the cache), what the storage holds there
/// (the finished segment of `all` reaching furthest among those starting at or before it:
/// the gap check reports those offsets); then on from the next offset either holds.
fn served_chain<'a>(
    log: &'a PartitionLog,
    served: &[super::epochs::Served],
    all: &[&'a RemoteSegment],
    start: i64,
    last: i64,
) -> Vec<&'a RemoteSegment> {
    let mut picked: Vec<&RemoteSegment> = Vec::new();
    let (mut i, mut k) = (0, 0);
    let mut best: Option<&RemoteSegment> = None;
    let mut next = start;
    while next <= last {
        while served.get(i).is_some_and(|s| s.last < next) {
            i += 1;
        }
        while let Some(g) = all.get(k).filter(|g| g.start_offset <= next) {
            if best.is_none_or(|b| g.end_offset > b.end_offset) {
                best = Some(*g);
            }
            k += 1;
        }
        let lookup = served
            .get(i)
            .filter(|s| s.first <= next)
            .and_then(|s| log.segments.get(s.segment));
        let held = best.filter(|b| b.end_offset >= next);
        match lookup.or(held) {
            Some(g) => {
                picked.push(g);
                next = g.end_offset.saturating_add(1);
            }
            None => {
                // Nothing holds `next`: on to the next offset a lookup or the storage has.
                let a = served.get(i).map(|s| s.first);
                let b = all.get(k).map(|g| g.start_offset);
                match a.into_iter().chain(b).min() {
                    Some(n) if n > next => next = n,
                    _ => break,
                }
            }
        }
    }
    picked
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
    for up in replayed.replay.partitions.keys() {
        for p in inv.partitions.iter().filter(|p| super::holds(inv, p, up)) {
            let Some(&i) = index.get(p.path.to_string_lossy().as_ref()) else {
                continue;
            };
            let r = &report.partitions[i];
            if r.tiered.as_ref().is_some_and(|t| t.replayed.is_some()) {
                continue;
            }
            let Some(seen) = replayed.seen_by(p, up).0 else {
                continue;
            };
            let segments = &r.carried.segment_names;
            let view = super::replica_view(p, None, segments, &mut log_starts, inv);
            // Which segments are read does not depend on where their objects are.
            if !chain(seen, &view, &Located::new()).is_empty() {
                out.push(i);
            }
        }
    }
    out
}
