//! Grouping the per-partition transactions of one producer into cluster transactions.
//!
//! * **TV2** (a COMMIT one epoch above its data, or `ClientTransactionVersion` ≥ 2): every
//!   transaction ends with its own epoch bump, so the data epoch identifies it
//!   (`marker_epoch` confidence).
//! * **TV0/1**: transactions of a producer id share its epoch; they are told apart by time.
//!   All data of a transaction is produced before EndTxn, its markers are written after it,
//!   and the next transaction cannot add a partition before the previous one's markers are
//!   all written (AddPartitionsToTxn answers CONCURRENT_TRANSACTIONS until Complete;
//!   `TransactionCoordinator.handleAddPartitionsToTransaction`). So, per data epoch, the
//!   closed transactions sorted by marker time form a group as long as each joining
//!   partition's data began before the group's first marker and no partition repeats
//!   (`marker_order` confidence).
//! * A group that matches a coordinator transaction (same producer id, the epoch the
//!   markers carry, markers within its Prepare…Complete window) takes its transactional id
//!   and partition list; groups matching the same coordinator transaction are merged
//!   (`coordinator_record` confidence).
//!
//! A COMMIT/ABORT with no data before it right after the same producer's marker of the same
//! type and epoch on that partition is a re-sent marker (coordinator failover reloads
//! Prepare* transactions and writes their markers again): it is kept as a duplicate of that
//! partition's part, not as a transaction of its own.

use super::coord::CoordTxn;
use super::input::PartitionTxns;
use crate::partition::state::txnrec::{TxnEnd, TxnRecord};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How many of a producer's latest groups a marker alone may join.
const RECENT_GROUPS: usize = 64;

/// Tolerance between the coordinator's record times and the markers' (both broker clocks).
pub const COORDINATOR_TOLERANCE_MS: i64 = 60_000;
/// Longest spread between the first and the last marker of one transaction (TV0/1): the
/// coordinator retries markers until they are written; a failover re-sends them.
pub const MARKER_SPREAD_MS: i64 = crate::partition::state::TRANSACTION_MAX_TIMEOUT_MS;

/// How a cluster transaction's parts were grouped (`evidence.grouping`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grouping {
    /// Matched to a `__transaction_state` transaction.
    CoordinatorRecord,
    /// TV2: the epoch of the data/markers identifies the transaction.
    MarkerEpoch,
    /// TV0/1 without the coordinator's record: by the order and time of the markers.
    MarkerOrder,
}

impl Grouping {
    pub fn name(self) -> &'static str {
        match self {
            Grouping::CoordinatorRecord => "coordinator_record",
            Grouping::MarkerEpoch => "marker_epoch",
            Grouping::MarkerOrder => "marker_order",
        }
    }
}

/// A part: the record `rec` of input partition `input`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Member {
    pub input: usize,
    pub rec: usize,
}

/// A group's parts, in the order they joined: the first inline (most transactions have
/// one partition, and a group is made per transaction), the others on the heap.
#[derive(Debug, Clone)]
pub struct Members {
    first: Member,
    rest: Vec<Member>,
}

impl Members {
    fn one(m: Member) -> Self {
        Members {
            first: m,
            rest: Vec::new(),
        }
    }
    /// Number of parts (at least one).
    pub(crate) fn len(&self) -> usize {
        1 + self.rest.len()
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Member> + Clone {
        std::iter::once(&self.first).chain(&self.rest)
    }
    fn push(&mut self, m: Member) {
        self.rest.push(m);
    }
    fn extend(&mut self, other: Members) {
        self.rest.push(other.first);
        self.rest.extend(other.rest);
    }
}

/// One cluster transaction, before rendering.
#[derive(Debug, Clone)]
pub struct Group {
    pub producer_id: i64,
    pub data_epoch: i16,
    pub tv2: bool,
    pub members: Members,
    /// Re-sent markers absorbed by a part.
    pub duplicates: Vec<Member>,
    pub grouping: Grouping,
    /// Index of the matched coordinator transaction.
    pub coord: Option<usize>,
}

type Parts<'a> = &'a [PartitionTxns];

fn rec<'a>(p: Parts<'a>, m: Member) -> &'a TxnRecord {
    &p[m.input].txns[m.rec]
}

impl Group {
    fn new(pid: i64, epoch: i16, tv2: bool, m: Member) -> Group {
        Group {
            producer_id: pid,
            data_epoch: epoch,
            tv2,
            members: Members::one(m),
            duplicates: Vec::new(),
            grouping: if tv2 {
                Grouping::MarkerEpoch
            } else {
                Grouping::MarkerOrder
            },
            coord: None,
        }
    }
    fn has_input(&self, input: usize) -> bool {
        self.members.iter().any(|m| m.input == input)
    }
    fn closed<'a>(&'a self, p: Parts<'a>) -> impl Iterator<Item = &'a TxnRecord> + 'a {
        self.members
            .iter()
            .map(move |&m| rec(p, m))
            .filter(|r| !r.is_open())
    }
    /// Earliest marker time.
    pub fn min_marker_ts(&self, p: Parts<'_>) -> Option<i64> {
        self.closed(p).map(|r| r.last_timestamp).min()
    }
    /// Latest marker time.
    pub fn max_marker_ts(&self, p: Parts<'_>) -> Option<i64> {
        self.closed(p).map(|r| r.last_timestamp).max()
    }
    /// The marker epoch of its closed parts (the lowest, if they disagree).
    pub fn marker_epoch(&self, p: Parts<'_>) -> Option<i16> {
        self.closed(p).map(|r| r.marker_epoch).min()
    }
    /// Earliest first timestamp of its parts with data.
    pub fn start_ts(&self, p: Parts<'_>) -> i64 {
        self.members
            .iter()
            .map(|&m| rec(p, m).first_timestamp)
            .min()
            .unwrap_or(-1)
    }
}

/// The grouping of one domain's transactions, producer id by producer id: every record of
/// the `chosen` inputs indexed by producer id once, so that the groups can be made (and
/// rendered, checked and dropped) a block of producer ids at a time instead of all at once
/// (issue #11: 300 000 open transactions).
pub struct Grouper<'a> {
    p: Parts<'a>,
    coord: &'a [CoordTxn],
    /// Coordinator transactions by the producer ids their markers may carry.
    coord_by_pid: std::collections::HashMap<i64, Vec<usize>>,
    /// Every record, by producer id; per producer id in `chosen` order, then log order.
    members: Vec<Member>,
    /// `(producer id, start, end)` of each producer id's slice of `members`, ascending.
    spans: Vec<(i64, usize, usize)>,
}

impl<'a> Grouper<'a> {
    /// Index the transactions of the `chosen` inputs (one live copy per partition of one
    /// domain) with the domain's coordinator transactions `coord`.
    pub fn new(p: Parts<'a>, chosen: &[usize], coord: &'a [CoordTxn]) -> Self {
        let mut coord_by_pid: std::collections::HashMap<i64, Vec<usize>> = Default::default();
        for (i, t) in coord.iter().enumerate() {
            coord_by_pid.entry(t.producer_id).or_default().push(i);
            if t.next_producer_id >= 0 && t.next_producer_id != t.producer_id {
                coord_by_pid.entry(t.next_producer_id).or_default().push(i);
            }
        }
        let (members, spans) = by_producer(p, chosen);
        Grouper {
            p,
            coord,
            coord_by_pid,
            members,
            spans,
        }
    }

    /// How many producer ids have transactions.
    pub fn producers(&self) -> usize {
        self.spans.len()
    }

    /// The groups of the producer ids `range` (indexes in ascending producer-id order),
    /// in producer-id order. Each producer id is grouped on its own (its transactions never
    /// join another id's), so the ids are grouped in parallel.
    pub fn groups(&self, range: std::ops::Range<usize>) -> Vec<Group> {
        let spans = self.spans.get(range).unwrap_or(&[]);
        let per_pid: Vec<Vec<Group>> = spans
            .par_iter()
            .map(|&(pid, a, b)| self.group_pid(pid, &self.members[a..b]))
            .collect();
        per_pid.into_iter().flatten().collect()
    }

    fn group_pid(&self, pid: i64, members: &[Member]) -> Vec<Group> {
        let (p, coord) = (self.p, self.coord);
        let tv2 = members.iter().any(|&m| {
            let r = rec(p, m);
            r.end == TxnEnd::Commit && !r.is_empty() && r.marker_epoch > r.producer_epoch
        });
        let mine: &[usize] = self.coord_by_pid.get(&pid).map_or(&[], Vec::as_slice);
        let tv2 = tv2 || mine.iter().any(|&i| coord[i].tv2());
        let mut groups = if tv2 {
            group_tv2(p, pid, members)
        } else {
            group_tv01(p, pid, members)
        };
        absorb_empties(p, pid, tv2, members, &mut groups);
        match_coordinator(p, coord, mine, &mut groups);
        groups
    }
}


/// Every record of the `chosen` inputs by producer id (ascending), each producer id's in
/// `chosen` order then log order, and the `(producer id, start, end)` of each producer
/// id's slice. A counting sort: each record's producer id numbered once (a hash map), the
/// distinct ids sorted, the records placed in one pass (issue #11: millions of records,
/// far fewer producer ids).
fn by_producer(p: Parts<'_>, chosen: &[usize]) -> (Vec<Member>, Vec<(i64, usize, usize)>) {
    let records = || {
        chosen.iter().flat_map(move |&input| {
            (0..p[input].txns.len()).map(move |rec| Member { input, rec })
        })
    };
    let total: usize = chosen
        .iter()
        .map(|&i| p.get(i).map_or(0, |x| x.txns.len()))
        .sum();
    // Each record's producer id's number (in order of first appearance). The map (a
    // keyed hash: producer ids are input) sits behind a small direct-mapped cache of
    // recent ids: a partition's records cycle through a few producers.
    let mut number: std::collections::HashMap<i64, usize> = Default::default();
    let mut recent = [(i64::MIN, usize::MAX); 256];
    let mut pids: Vec<i64> = Vec::new();
    let mut of_record: Vec<usize> = Vec::with_capacity(total);
    for m in records() {
        let pid = rec(p, m).producer_id;
        let slot = &mut recent[((pid as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize];
        if slot.0 == pid && slot.1 != usize::MAX {
            of_record.push(slot.1);
            continue;
        }
        let next = pids.len();
        let n = *number.entry(pid).or_insert(next);
        if n == next {
            pids.push(pid);
        }
        *slot = (pid, n);
        of_record.push(n);
    }
    drop(number);
    // Each number's rank among the distinct ids, and where its records start.
    let mut order: Vec<usize> = (0..pids.len()).collect();
    order.sort_unstable_by_key(|&n| pids[n]);
    let mut count = vec![0usize; pids.len()];
    for &n in &of_record {
        count[n] += 1;
    }
    let mut next = vec![0usize; pids.len()];
    let mut spans: Vec<(i64, usize, usize)> = Vec::with_capacity(pids.len());
    let mut at = 0;
    for &n in &order {
        next[n] = at;
        spans.push((pids[n], at, at + count[n]));
        at += count[n];
    }
    let mut members = vec![Member { input: 0, rec: 0 }; total];
    for (m, n) in records().zip(of_record) {
        members[next[n]] = m;
        next[n] += 1;
    }
    (members, spans)
}

/// TV2: one group per data epoch (a repeated partition starts another group).
fn group_tv2(p: Parts<'_>, pid: i64, members: &[Member]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_epoch: BTreeMap<i16, Vec<usize>> = BTreeMap::new();
    for &m in members {
        let r = rec(p, m);
        if r.is_empty() {
            continue;
        }
        let slot = by_epoch.entry(r.producer_epoch).or_default();
        match slot
            .iter()
            .copied()
            .find(|&g| !groups[g].has_input(m.input))
        {
            Some(g) => groups[g].members.push(m),
            None => {
                slot.push(groups.len());
                groups.push(Group::new(pid, r.producer_epoch, true, m));
            }
        }
    }
    groups
}

/// TV0/1: per data epoch, closed parts by marker time, then open parts by data time.
fn group_tv01(p: Parts<'_>, pid: i64, members: &[Member]) -> Vec<Group> {
    let mut by_epoch: BTreeMap<i16, Vec<Member>> = BTreeMap::new();
    for &m in members {
        if !rec(p, m).is_empty() {
            by_epoch
                .entry(rec(p, m).producer_epoch)
                .or_default()
                .push(m);
        }
    }
    let mut out: Vec<Group> = Vec::new();
    for (epoch, ms) in by_epoch {
        // This epoch's groups are `out[base..]`.
        let base = out.len();
        // By marker time, input, marker offset; ties in the order of `ms` (each input's
        // records together, by record index): the key ends with the record index, so an
        // unstable sort gives the stable one.
        let mut closed: Vec<(i64, usize, i64, usize)> = ms
            .iter()
            .filter_map(|&m| {
                let r = rec(p, m);
                (!r.is_open()).then_some((r.last_timestamp, m.input, r.marker_offset, m.rec))
            })
            .collect();
        closed.sort_unstable();
        // (min marker ts, max first ts) of the last group
        let mut cur: Option<(i64, i64)> = None;
        for (_, input, _, rec_i) in closed {
            let m = Member { input, rec: rec_i };
            let r = rec(p, m);
            let joins = match (out[base..].last(), cur) {
                (Some(g), Some((min_marker, max_first))) => {
                    !g.has_input(m.input)
                        && r.first_timestamp <= min_marker
                        && max_first <= r.last_timestamp
                        && r.last_timestamp.saturating_sub(min_marker) <= MARKER_SPREAD_MS
                }
                _ => false,
            };
            if joins {
                if let (Some(g), Some(c)) = (out[base..].last_mut(), cur.as_mut()) {
                    g.members.push(m);
                    c.1 = c.1.max(r.first_timestamp);
                }
            } else {
                out.push(Group::new(pid, epoch, false, m));
                cur = Some((r.last_timestamp, r.first_timestamp));
            }
        }
        // Open parts: the first group whose markers came after the data began, when the
        // group before it had finished by then.
        let closed_groups = out.len() - base;
        for m in ms.iter().copied().filter(|&m| rec(p, m).is_open()) {
            let groups = &out[base..];
            let first = rec(p, m).first_timestamp;
            let at = (0..closed_groups)
                .find(|&g| groups[g].min_marker_ts(p).is_some_and(|t| t >= first));
            let fits = at.is_some_and(|g| {
                !groups[g].has_input(m.input)
                    && (g == 0 || groups[g - 1].max_marker_ts(p).is_some_and(|t| t < first))
            });
            match at {
                Some(g) if fits => out[base + g].members.push(m),
                _ => out.push(Group::new(pid, epoch, false, m)),
            }
        }
    }
    out
}

/// Markers with no data: a re-sent marker (after the same partition's marker of the same
/// type and epoch) joins that part as a duplicate; otherwise it joins a group of the same
/// marker epoch and type that lacks its partition, or stands alone (an empty transaction).
fn absorb_empties(p: Parts<'_>, pid: i64, tv2: bool, members: &[Member], groups: &mut Vec<Group>) {
    // Most producers have no empty record: nothing to index then.
    if !members.iter().any(|&m| rec(p, m).is_empty()) {
        return;
    }
    // The group of each member: those of the groups made so far (sorted, searched), then
    // the empty ones placed here.
    let mut grouped: Vec<(Member, usize)> = groups
        .iter()
        .enumerate()
        .flat_map(|(gi, g)| g.members.iter().map(move |&m| (m, gi)))
        .collect();
    grouped.sort_unstable();
    let mut placed: BTreeMap<Member, usize> = BTreeMap::new();
    let owner = |placed: &BTreeMap<Member, usize>, m: Member| {
        grouped
            .binary_search_by(|&(x, _)| x.cmp(&m))
            .ok()
            .map(|i| grouped[i].1)
            .or_else(|| placed.get(&m).copied())
    };
    // `members` lists each input's records of the producer together, in log order (closed
    // ones by marker offset, then the open one): the record before an empty one on its
    // partition is the previous member when it is of the same input.
    for (i, &m) in members.iter().enumerate() {
        let before = i
            .checked_sub(1)
            .map(|j| members[j])
            .filter(|o| o.input == m.input);
        let r = *rec(p, m);
        if !r.is_empty() {
            continue;
        }
        let prev = before.filter(|&o| {
            let q = rec(p, o);
            !q.is_open() && q.marker_offset < r.marker_offset
        });
        if let Some(o) = prev {
            let q = rec(p, o);
            if q.end == r.end
                && q.marker_epoch == r.marker_epoch
                && let Some(gi) = owner(&placed, o)
            {
                groups[gi].duplicates.push(m);
                placed.insert(m, gi);
                continue;
            }
        }
        // Only recent groups can hold its transaction (bounded work on hostile inputs).
        let from = groups.len().saturating_sub(RECENT_GROUPS);
        let join = groups[from..].iter().position(|g| {
            !g.has_input(m.input)
                && g.closed(p)
                    .any(|q| q.end == r.end && q.marker_epoch == r.marker_epoch)
                && g.min_marker_ts(p).is_some_and(|t| {
                    r.last_timestamp.saturating_sub(t).saturating_abs() <= MARKER_SPREAD_MS
                })
        });
        let gi = match join.map(|i| i + from) {
            Some(gi) => {
                groups[gi].members.push(m);
                gi
            }
            None => {
                let epoch = if tv2 {
                    r.marker_epoch.saturating_sub(1)
                } else {
                    r.marker_epoch
                };
                groups.push(Group::new(pid, epoch, tv2, m));
                groups.len() - 1
            }
        };
        placed.insert(m, gi);
    }
}

/// Whether coordinator transaction `t` is the one group `g` belongs to.
fn matches(p: Parts<'_>, t: &CoordTxn, g: &Group) -> Option<i64> {
    if !t.has_pid(g.producer_id) {
        return None;
    }
    match (g.marker_epoch(p), g.min_marker_ts(p)) {
        (Some(epoch), Some(ts)) => {
            let end_epoch_ok = match t.end_epoch {
                Some(e) => e == epoch,
                None => t.data_epoch == epoch && !g.tv2,
            };
            let lower = t.prepare_ms.or(t.complete_ms)?;
            let upper = t.complete_ms.unwrap_or(i64::MAX);
            let in_window = ts >= lower.saturating_sub(COORDINATOR_TOLERANCE_MS)
                && ts <= upper.saturating_add(COORDINATOR_TOLERANCE_MS);
            (end_epoch_ok && in_window).then(|| ts.saturating_sub(lower).saturating_abs())
        }
        _ => {
            // Open parts only: data at the transaction's epoch, begun in its lifetime.
            let first = g.start_ts(p);
            let started = t.start_ms.max(0).saturating_sub(COORDINATOR_TOLERANCE_MS);
            let ended = t
                .prepare_ms
                .or(t.complete_ms)
                .map_or(i64::MAX, |e| e.saturating_add(COORDINATOR_TOLERANCE_MS));
            (t.data_epoch == g.data_epoch && first >= started && first <= ended)
                .then(|| first.saturating_sub(t.start_ms).saturating_abs())
        }
    }
}

/// Match each group to its coordinator transaction (the closest in time), then merge the
/// groups matched to the same one when their partitions do not overlap.
fn match_coordinator(p: Parts<'_>, coord: &[CoordTxn], mine: &[usize], groups: &mut Vec<Group>) {
    // No candidate: no group matches, none is merged.
    if mine.is_empty() {
        return;
    }
    // Closed groups look only at the transactions prepared up to their first marker (+
    // tolerance), newest first: an id's transactions are sequential, so a few suffice.
    let mut by_end: Vec<(i64, usize)> = mine
        .iter()
        .filter_map(|&i| {
            let t = &coord[i];
            t.prepare_ms.or(t.complete_ms).map(|e| (e, i))
        })
        .collect();
    by_end.sort_unstable();
    for g in groups.iter_mut() {
        let best = |cands: &mut dyn Iterator<Item = usize>| {
            cands
                .filter_map(|i| matches(p, &coord[i], g).map(|d| (d, i)))
                .min()
                .map(|(_, i)| i)
        };
        g.coord = match g.min_marker_ts(p) {
            Some(ts) => {
                let end = by_end
                    .partition_point(|&(e, _)| e <= ts.saturating_add(COORDINATOR_TOLERANCE_MS));
                best(&mut by_end[..end].iter().rev().take(8).map(|&(_, i)| i))
            }
            None => best(&mut mine.iter().copied()),
        };
        if g.coord.is_some() {
            g.grouping = Grouping::CoordinatorRecord;
        }
    }
    let mut merged: Vec<Group> = Vec::with_capacity(groups.len());
    let mut at: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for g in groups.drain(..) {
        if let Some(c) = g.coord {
            let inputs: BTreeSet<usize> = g.members.iter().map(|m| m.input).collect();
            let slot = at.entry(c).or_default();
            if let Some(&gi) = slot
                .iter()
                .find(|&&gi| !merged[gi].members.iter().any(|m| inputs.contains(&m.input)))
            {
                let t = &mut merged[gi];
                t.members.extend(g.members);
                t.duplicates.extend(g.duplicates);
                t.data_epoch = t.data_epoch.min(g.data_epoch);
                continue;
            }
            slot.push(merged.len());
        }
        merged.push(g);
    }
    *groups = merged;
}
