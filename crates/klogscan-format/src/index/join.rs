//! The offset, time and transaction index checks without a record per log entry (issue
//! `verify` kept a [`LogBatch`] of every entry of every segment until its checks ran,
//! ≈ 60 bytes a batch, 700–940 MiB for a segment of 8 million small batches).
//!
//! Index entries are sparse (one per `index.interval.bytes` of log), so the keys a
//! segment's `.index`, `.timeindex` and `.txnindex` name ([`IndexKeys`]: positions,
//! offsets, aborted transactions) are read before its walk, and the walk keeps only what
//! those keys find ([`IndexMatcher`] → [`LogMatches`]). [`LogMatches`] answers every lookup
//! of [`check_offset_index`] and [`check_time_index`] ([`LogLookup`]) exactly as the list of
//! all entries ([`LogBatches`]) does, for a sequential walk and for one in pieces (each
//! piece matched on its own, then [`LogMatches::append`]ed in file order). The checks are
//! then reduced to [`IndexVerdicts`]: how many entries are wrong and the first few.
//!
//! Cost: 8 or 16 bytes per distinct key while the segment is walked, at most ≈ 40 bytes per
//! key found; per log entry a few comparisons and no allocation (a push only when an entry
//! is at a key).

use super::*;
use crate::{Classified, Tail};
use std::sync::Arc;

/// Problems kept per index by [`IndexVerdicts`] (besides their count): what a finding's
/// evidence lists.
pub const KEPT_PROBLEMS: usize = 20;

/// The lookup keys of one segment's indexes, sorted and distinct.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexKeys {
    /// Byte positions the offset index's entries name (the non-negative ones: a negative
    /// position is beyond the log whatever the log holds).
    positions: Vec<u64>,
    /// Offsets the offset and time indexes' entries name.
    offsets: Vec<i64>,
    /// `(lastOffset, producerId)` of the transaction index's entries.
    aborts: Vec<(i64, i64)>,
}

impl IndexKeys {
    /// The keys of the used entries of whichever indexes the segment has.
    pub fn new(
        offset: Option<&OffsetIndex<'_>>,
        time: Option<&TimeIndex<'_>>,
        txn: Option<&TxnIndex<'_>>,
    ) -> IndexKeys {
        let mut positions: Vec<u64> = offset
            .into_iter()
            .flat_map(|i| i.entries())
            .filter_map(|e| u64::try_from(e.position).ok())
            .collect();
        let mut offsets: Vec<i64> = offset
            .into_iter()
            .flat_map(|i| i.entries().map(|e| e.offset))
            .chain(time.into_iter().flat_map(|i| i.entries().map(|e| e.offset)))
            .collect();
        let mut aborts: Vec<(i64, i64)> = txn
            .into_iter()
            .flat_map(|i| i.entries().map(|a| (a.last_offset, a.producer_id)))
            .collect();
        positions.sort_unstable();
        positions.dedup();
        offsets.sort_unstable();
        offsets.dedup();
        aborts.sort_unstable();
        aborts.dedup();
        IndexKeys {
            positions,
            offsets,
            aborts,
        }
    }

    /// No key at all (no index, or only empty ones).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty() && self.offsets.is_empty() && self.aborts.is_empty()
    }
}

/// Keys `[from, to)` of [`IndexKeys::offsets`] whose first entry (in file order) ending
/// at or after them is `ending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    from: u32,
    to: u32,
    ending: Ending,
}

/// What one walk of a `.log` (or of one piece of it) found at the keys of its indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogMatches {
    keys: Arc<IndexKeys>,
    /// `(position key, last offset of the entry starting there)`, by key.
    at_positions: Vec<(u32, i64)>,
    /// Disjoint, by key.
    endings: Vec<Run>,
    /// Abort keys whose producer has an ABORT marker batch at the key's offset.
    aborts: Vec<u32>,
    /// How the walk ended.
    pub tail: Tail,
    /// Bytes of whole entries (where the tail starts).
    pub valid_len: u64,
}

impl LogMatches {
    /// Append what the walk of the next piece of the same file found (pieces in file
    /// order; `later` ends the whole so far). An offset key first ended by an earlier
    /// piece keeps that entry: the answer is the first entry in file order.
    pub fn append(&mut self, later: LogMatches) {
        self.at_positions.extend(later.at_positions);
        let mut done = self.endings.last().map_or(0, |r| r.to);
        for r in later.endings {
            if r.to > done {
                self.endings.push(Run {
                    from: r.from.max(done),
                    ..r
                });
                done = r.to;
            }
        }
        self.aborts.extend(later.aborts);
        self.tail = later.tail;
        self.valid_len = later.valid_len;
    }

    /// The transaction index's `(lastOffset, producerId)` entries whose producer has an
    /// ABORT marker batch based at `lastOffset` in this log; sorted, distinct.
    pub fn abort_markers(&self) -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = self
            .aborts
            .iter()
            .filter_map(|&k| self.keys.aborts.get(k as usize).copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl LogLookup for LogMatches {
    fn valid_len(&self) -> u64 {
        self.valid_len
    }
    /// Only positions among the keys are answered (every other is `None`).
    fn last_offset_at(&self, position: u64) -> Option<i64> {
        let k = self.keys.positions.binary_search(&position).ok()? as u32;
        let i = self.at_positions.binary_search_by_key(&k, |h| h.0).ok()?;
        Some(self.at_positions[i].1)
    }
    /// Only offsets among the keys are answered (every other is `None`).
    fn ending_at_or_after(&self, offset: i64) -> Option<Ending> {
        let k = self.keys.offsets.binary_search(&offset).ok()? as u32;
        let i = self.endings.partition_point(|r| r.to <= k);
        self.endings
            .get(i)
            .filter(|r| r.from <= k)
            .map(|r| r.ending)
    }
}

/// Keeps, during one walk of a `.log` or of one piece of it, what the entries at the keys
/// of its indexes are (fed every framed entry in file order, like [`LogBatches::from_log`]).
#[derive(Debug)]
pub struct IndexMatcher {
    keys: Arc<IndexKeys>,
    fold: EntryFold,
    /// An entry was seen (the cursors start at the first one).
    started: bool,
    /// First position key not below the last entry's position.
    next_position: usize,
    /// The largest last offset so far.
    max_last: i64,
    /// First offset key above `max_last`: the keys before it are ended.
    next_offset: usize,
    out: LogMatches,
}

impl IndexMatcher {
    pub fn new(keys: Arc<IndexKeys>) -> IndexMatcher {
        IndexMatcher {
            out: LogMatches {
                keys: keys.clone(),
                at_positions: Vec::new(),
                endings: Vec::new(),
                aborts: Vec::new(),
                tail: Tail::Clean,
                valid_len: 0,
            },
            keys,
            fold: EntryFold::default(),
            started: false,
            next_position: 0,
            max_last: i64::MIN,
            next_offset: 0,
        }
    }

    /// One framed entry at `position` whose header offset field is `offset`.
    pub fn entry(&mut self, c: &Classified<'_>, position: u64, offset: i64) {
        let b = self.fold.batch(c, position, offset);
        let k = &*self.keys;
        if k.is_empty() {
            return;
        }
        // Positions increase along a walk: one cursor (a binary search for a piece's first
        // entry, which may start anywhere in the file).
        if !self.started {
            self.next_position = k.positions.partition_point(|&p| p < b.position);
        }
        while k
            .positions
            .get(self.next_position)
            .is_some_and(|&p| p < b.position)
        {
            self.next_position += 1;
        }
        if k.positions.get(self.next_position) == Some(&b.position) {
            self.out
                .at_positions
                .push((self.next_position as u32, b.last_offset));
            self.next_position += 1;
        }
        // The first entry ending at or after an offset is the first to lift the running
        // maximum of last offsets to it (whether or not the log's offsets increase).
        if !self.started || b.last_offset > self.max_last {
            self.max_last = b.last_offset;
            let rest = k.offsets.get(self.next_offset..).unwrap_or(&[]);
            if rest.first().is_some_and(|&o| o <= b.last_offset) {
                let to = self.next_offset + rest.partition_point(|&o| o <= b.last_offset);
                self.out.endings.push(Run {
                    from: self.next_offset as u32,
                    to: to as u32,
                    ending: Ending::from(&b),
                });
                self.next_offset = to;
            }
        }
        self.started = true;
        if let Some(pid) = b.abort_marker_of
            && let Ok(i) = k.aborts.binary_search(&(b.base_offset, pid))
        {
            self.out.aborts.push(i as u32);
        }
    }

    /// Conclude with how the walk ended and the length read (as [`LogBatches`]).
    pub fn finish(mut self, tail: Tail, len: u64) -> LogMatches {
        self.out.tail = tail;
        self.out.valid_len = tail.truncation_position().unwrap_or(len);
        self.out
    }
}

/// The entries of one index found wrong: how many, and the first ones in slot order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problems<T> {
    pub count: usize,
    /// At most [`KEPT_PROBLEMS`].
    pub first: Vec<T>,
}

impl<T> Problems<T> {
    fn of(checks: impl Iterator<Item = T>, is_problem: impl Fn(&T) -> bool) -> Problems<T> {
        let mut p = Problems {
            count: 0,
            first: Vec::new(),
        };
        for c in checks.filter(|c| is_problem(c)) {
            if p.count < KEPT_PROBLEMS {
                p.first.push(c);
            }
            p.count += 1;
        }
        p
    }
}

/// What a segment's index checks against its walk found: all `verify` reports of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexVerdicts {
    /// The offset index's wrong entries ([`OffsetEntryCheck::is_problem`]); `None`
    /// without an offset index.
    pub offset: Option<Problems<OffsetEntryCheck>>,
    /// The time index's wrong entries ([`TimeEntryCheck::is_problem`]); `None` without a
    /// time index.
    pub time: Option<Problems<TimeEntryCheck>>,
    /// See [`LogMatches::abort_markers`].
    pub abort_markers: Vec<(i64, i64)>,
}

impl IndexVerdicts {
    /// Check the indexes (the ones the keys of `log` were read from) against `log`.
    pub fn of(
        offset: Option<&OffsetIndex<'_>>,
        time: Option<&TimeIndex<'_>>,
        log: &LogMatches,
    ) -> IndexVerdicts {
        IndexVerdicts {
            offset: offset.map(|i| Problems::of(offset_checks(i, log), |c| c.is_problem())),
            time: time.map(|i| Problems::of(time_checks(i, log), |c| c.is_problem())),
            abort_markers: log.abort_markers(),
        }
    }

    /// Whether the log holds an ABORT marker of `producer_id` based at `last_offset`
    /// (asked only of the transaction index's entries).
    pub fn has_abort_marker(&self, last_offset: i64, producer_id: i64) -> bool {
        self.abort_markers
            .binary_search(&(last_offset, producer_id))
            .is_ok()
    }
}

#[cfg(test)]
#[path = "join_tests.rs"]
mod tests;
