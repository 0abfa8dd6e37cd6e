//! Which remote offsets a broker serves, the way its `RemoteLogMetadataCache` answers a
//! read: per leader epoch an offset map of finished segments
//! (`RemoteLogLeaderEpochState`), kept up to date as the replay applies each event
//! ([`EpochMaps`]), and a lookup in the leader epoch the reading replica's
//! `leader-epoch-checkpoint` gives the offset ([`served`]).
//!
//! `RemoteLogManager.read` asks `LeaderEpochFileCache.epochForOffset` for the offset's epoch,
//! then `RemoteLogMetadataCache.remoteLogSegmentMetadata(epoch, offset)`: the segment mapped
//! at the greatest start offset at or below the offset in that epoch's map, provided the
//! segment's part in that epoch reaches the offset; otherwise the read fails
//! (OFFSET_OUT_OF_RANGE). So a finished segment holding an offset does not serve it when a
//! later copy replaced it in the map (`RemoteLogLeaderEpochState.
//! handleSegmentWithCopySegmentFinishedState` replaces the entry at the same start offset,
//! and moves entries at or above the new start out of the map only when the new segment
//! reaches the epoch's highest offset), or when the segment's epoch for the offset is not
//! the replica's.
//!
//! Each epoch's set of unreferenced segments is kept too: reads never consult it, but the
//! epoch's listing (`RemoteLogLeaderEpochState.listAllRemoteLogSegments`, what
//! `RemoteLogMetadataCache.listRemoteLogSegments(epoch)` returns) is the offset map's
//! segments and that set, and the leader's expiration finds segments only through those
//! listings ([`EpochMaps::listed_epochs`], read by `super::expiry`). A copy in flight, a
//! segment being deleted and an entry a finished copy moved out of the map are in the set;
//! an entry a finished copy replaced at the same start offset without moving it out is in
//! neither, so no listing of that epoch holds it. The set holds segment indices only, and
//! only until the segment finishes its copy or its deletion: it stays small however long
//! the metadata log.

use super::lineage::Lineage;
use super::replay::{PartitionLog, RemoteSegment};
use std::collections::{BTreeMap, BTreeSet};

/// One leader epoch's offset map and unreferenced set (`RemoteLogLeaderEpochState`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct EpochState {
    /// The epoch's first offset in a finished segment → that segment (its index in
    /// [`PartitionLog::segments`]).
    offsets: BTreeMap<i64, usize>,
    /// `unreferencedSegmentIds`: segments (indices) in the epoch's listing but not in its
    /// offset map — copies in flight, deletions started, entries moved out of the map.
    unreferenced: BTreeSet<usize>,
    /// The highest offset of the epoch in any segment that finished its copy; never lowered
    /// (a deletion leaves it).
    highest: Option<i64>,
}

impl EpochState {
    /// `handleSegmentWithCopySegmentStartedState`: a copy in flight is listed, unreferenced.
    fn copy_started(&mut self, seg: usize) {
        self.unreferenced.insert(seg);
    }

    /// `handleSegmentWithCopySegmentFinishedState`: segment `seg`, whose part in the epoch
    /// is `start..=end`, finished. Entries from the last down to `start` move from the map
    /// to the unreferenced set while the new segment reaches the epoch's highest offset;
    /// then `seg` goes in at `start`, replacing any entry there — a replaced entry goes
    /// nowhere (the map's `put` drops it), so it leaves the epoch's listing — and leaves
    /// the unreferenced set.
    fn copy_finished(&mut self, start: i64, seg: usize, end: i64) {
        while let Some((&key, _)) = self.offsets.last_key_value() {
            if key < start || self.highest.is_none_or(|h| h > end) {
                break;
            }
            if let Some((_, moved)) = self.offsets.pop_last() {
                self.unreferenced.insert(moved);
            }
        }
        self.offsets.insert(start, seg);
        self.unreferenced.remove(&seg);
        if self.highest.is_none_or(|h| end > h) {
            self.highest = Some(end);
        }
    }

    /// `handleSegmentWithDeleteSegmentStartedState`: the entry at `start` leaves the map
    /// only when it is `seg`'s; `seg` is listed, unreferenced, while its deletion runs (each
    /// expiration run retries it).
    fn delete_started(&mut self, start: i64, seg: usize) {
        if self.offsets.get(&start) == Some(&seg) {
            self.offsets.remove(&start);
        }
        self.unreferenced.insert(seg);
    }

    /// `handleSegmentWithDeleteSegmentFinishedState`: `seg` leaves the listing.
    fn delete_finished(&mut self, seg: usize) {
        self.unreferenced.remove(&seg);
    }

    /// Whether the epoch's listing (`listAllRemoteLogSegments`: the offset map's segments
    /// and the unreferenced set) holds `seg`, whose part in the epoch starts at `start`.
    fn lists(&self, start: i64, seg: usize) -> bool {
        self.offsets.get(&start) == Some(&seg) || self.unreferenced.contains(&seg)
    }
}

/// `RemoteLogMetadataCache`'s per-epoch states of one user partition
/// (`leaderEpochEntries`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochMaps {
    by_epoch: BTreeMap<i32, EpochState>,
}

/// The last offset of `epoch` in segment `s` (`RemoteLogMetadataCache.
/// highestOffsetForEpoch(epoch, metadata)`): the next epoch's first offset less one, or
/// the segment's end.
fn epoch_end(s: &RemoteSegment, epoch: i32) -> i64 {
    // The smallest higher epoch (`higherEntry` of the metadata's sorted map), whatever order
    // the record listed them in.
    s.leader_epochs
        .iter()
        .filter(|(e, _)| *e > epoch)
        .min_by_key(|(e, _)| *e)
        .map_or(s.end_offset, |(_, o)| o.saturating_sub(1))
}

/// Offsets `first..=last`, served from segment `segment` (its index in
/// [`PartitionLog::segments`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    pub first: i64,
    pub last: i64,
    pub segment: usize,
}

impl EpochMaps {
    /// `RemoteLogMetadataCache.addCopyInProgressSegment`: segment `s` (index `i`) started
    /// its copy, in each of its epochs.
    pub fn copy_started(&mut self, i: usize, s: &RemoteSegment) {
        for &(epoch, _) in &s.leader_epochs {
            self.by_epoch.entry(epoch).or_default().copy_started(i);
        }
    }

    /// `RemoteLogMetadataCache.handleSegmentWithCopySegmentFinishedState`: segment `s`
    /// (index `i`) finished, in each of its epochs.
    pub fn copy_finished(&mut self, i: usize, s: &RemoteSegment) {
        for &(epoch, start) in &s.leader_epochs {
            let end = epoch_end(s, epoch);
            self.by_epoch
                .entry(epoch)
                .or_default()
                .copy_finished(start, i, end);
        }
    }

    /// `RemoteLogMetadataCache.handleSegmentWithDeleteSegmentStartedState`: segment `s`
    /// (index `i`) is being deleted, in each of its epochs.
    pub fn delete_started(&mut self, i: usize, s: &RemoteSegment) {
        for &(epoch, start) in &s.leader_epochs {
            self.by_epoch
                .entry(epoch)
                .or_default()
                .delete_started(start, i);
        }
    }

    /// `RemoteLogMetadataCache.handleSegmentWithDeleteSegmentFinishedState`: segment `s`
    /// (index `i`) is deleted, gone from each of its epochs' listings.
    pub fn delete_finished(&mut self, i: usize, s: &RemoteSegment) {
        for &(epoch, _) in &s.leader_epochs {
            if let Some(st) = self.by_epoch.get_mut(&epoch) {
                st.delete_finished(i);
            }
        }
    }

    /// The epochs of segment `s` (index `i`) whose listing holds it
    /// (`RemoteLogMetadataCache.listRemoteLogSegments(epoch)`), ascending: the only way the
    /// leader's expiration (`RemoteLogManager.RLMExpirationTask.
    /// cleanupExpiredRemoteLogSegments`) finds a segment to delete. Empty: no retention
    /// rule ever reaches it (it stays until the partition is deleted, which lists every
    /// segment of the cache).
    pub fn listed_epochs(&self, i: usize, s: &RemoteSegment) -> Vec<i32> {
        s.leader_epochs
            .iter()
            .filter(|&&(epoch, start)| {
                self.by_epoch
                    .get(&epoch)
                    .is_some_and(|st| st.lists(start, i))
            })
            .map(|&(epoch, _)| epoch)
            .collect()
    }

    /// `RemoteLogMetadataCache.remoteLogSegmentMetadata(epoch, offset)`: the index of the
    /// segment serving `offset` in `epoch`, if any (one offset at a time: what
    /// [`Self::served_in`] is checked against).
    #[cfg(test)]
    pub fn lookup(&self, segments: &[RemoteSegment], epoch: i32, offset: i64) -> Option<usize> {
        let st = self.by_epoch.get(&epoch)?;
        let (_, &i) = st.offsets.range(..=offset).next_back()?;
        (offset <= epoch_end(&segments[i], epoch)).then_some(i)
    }

    /// The offsets of `first..=last` that [`Self::lookup`] in `epoch` serves, ascending and
    /// disjoint: from each entry of the epoch's map up to the segment's end in the epoch
    /// or the next entry, whichever comes first.
    fn served_in(
        &self,
        segments: &[RemoteSegment],
        epoch: i32,
        first: i64,
        last: i64,
    ) -> Vec<Served> {
        let Some(st) = self.by_epoch.get(&epoch) else {
            return Vec::new();
        };
        let from = st
            .offsets
            .range(..=first)
            .next_back()
            .map_or(first, |(k, _)| *k);
        let mut out = Vec::new();
        let mut entries = st.offsets.range(from..=last).peekable();
        while let Some((&key, &i)) = entries.next() {
            let before_next = entries
                .peek()
                .map_or(i64::MAX, |(k, _)| (**k).saturating_sub(1));
            let end = epoch_end(&segments[i], epoch).min(before_next).min(last);
            let start = key.max(first);
            if start <= end {
                out.push(Served {
                    first: start,
                    last: end,
                    segment: i,
                });
            }
        }
        out
    }
}

/// `LeaderEpochFileCache.epochForOffset` over all offsets, as `(epoch, first, last)`
/// ranges, ascending: the epochs are walked in epoch order and the first entry starting at
/// or above the offset decides — its epoch when it starts at the offset, else the entry
/// before it (none before the first). Offsets below every entry have no epoch.
pub fn epoch_ranges(lineage: &Lineage) -> Vec<(i32, i64, i64)> {
    let entries = lineage.entries();
    // The running maximum of the start offsets: the first entry starting at or above an
    // offset is the first whose running maximum is (entries need not ascend).
    let mut highest = Vec::with_capacity(entries.len());
    for &(_, o) in &entries {
        highest.push(highest.last().map_or(o, |&h: &i64| h.max(o)));
    }
    let epoch_for = |o: i64| -> Option<i32> {
        let j = highest.partition_point(|&h| h < o);
        match entries.get(j) {
            None => entries.last().map(|e| e.0),
            Some(&(e, start)) if start == o => Some(e),
            Some(_) => j.checked_sub(1).map(|p| entries[p].0),
        }
    };
    let mut starts: Vec<i64> = entries.iter().map(|e| e.1).collect();
    starts.sort_unstable();
    starts.dedup();
    // Between two consecutive start offsets the answer does not change.
    let mut pieces: Vec<(i64, i64)> = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        pieces.push((s, s));
        let Some(after) = s.checked_add(1) else {
            continue;
        };
        let until = starts.get(k + 1).map_or(i64::MAX, |n| n - 1);
        if after <= until {
            pieces.push((after, until));
        }
    }
    let mut out: Vec<(i32, i64, i64)> = Vec::new();
    for (a, b) in pieces {
        let Some(e) = epoch_for(a) else { continue };
        match out.last_mut() {
            Some(l) if l.0 == e && l.2.checked_add(1) == Some(a) => l.2 = b,
            _ => out.push((e, a, b)),
        }
    }
    out
}

/// The offsets of `first..=last` the cache of `log` serves to a replica whose
/// `leader-epoch-checkpoint` is `lineage`, with the segment serving each: ascending by
/// first offset. Each offset is looked up in the epoch the lineage gives it
/// ([`epoch_ranges`]). Without a lineage (none read, or empty) an offset counts as served
/// when the lookup in any epoch serves it: the ranges may then overlap.
pub fn served(log: &PartitionLog, lineage: Option<&Lineage>, first: i64, last: i64) -> Vec<Served> {
    let maps = &log.epochs;
    let mut out = Vec::new();
    match lineage.filter(|l| !l.is_empty()) {
        Some(l) => {
            for (epoch, a, b) in epoch_ranges(l) {
                let (a, b) = (a.max(first), b.min(last));
                if a <= b {
                    out.extend(maps.served_in(&log.segments, epoch, a, b));
                }
            }
        }
        None => {
            for &epoch in maps.by_epoch.keys() {
                out.extend(maps.served_in(&log.segments, epoch, first, last));
            }
        }
    }
    out.sort_by_key(|s| (s.first, std::cmp::Reverse(s.last)));
    out
}

#[cfg(test)]
mod tests;
