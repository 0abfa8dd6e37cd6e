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

use super::input::PartitionTxns;
use crate::cluster::coordinator::model::CoordTxn;
use crate::partition::state::txnrec::{TxnEnd, TxnRecord};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many of a producer's latest groups a marker alone may join.
const RECENT_GROUPS: usize = 64;

/// Default tolerance between the coordinator's record times and a partition's (the
/// coordinator's and the partition leaders' clocks, the producer's for open data): a
/// record further than this from a coordinator transaction's window is not its.
pub const COORDINATOR_TOLERANCE_MS: i64 =
    crate::partition::results::DEFAULT_COORDINATOR_TOLERANCE_MS;
/// Default for how long after the coordinator's Prepare record a transaction's first
/// marker lands (TV0/1 grouping without the coordinator's records).
pub const MARKER_DELAY_MS: i64 = crate::partition::results::DEFAULT_MARKER_DELAY_MS;
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
    pub(super) fn one(m: Member) -> Self {
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
    pub(super) fn push(&mut self, m: Member) {
        self.rest.push(m);
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
    /// Parts of this transaction whose data began in an earlier coordinator transaction
    /// that wrote no marker to their partition (see [`Absorbed`]).
    pub absorbed: Vec<Absorbed>,
}

/// A part claimed by a later coordinator transaction whose partition lacks the marker of an
/// earlier one: `ProducerStateManager` keeps a partition's transaction open until a marker
/// arrives, so the earlier transaction's data there, if any, was closed by the later
/// transaction's marker (its outcome, not its own; the last stable offset held meanwhile).
#[derive(Debug, Clone, Copy)]
pub struct Absorbed {
    /// The part (closed by the later transaction's marker).
    pub member: Member,
    /// Index of the earlier coordinator transaction.
    pub coord: usize,
    /// Whether the earlier transaction listed the partition (else: it never did).
    pub listed: bool,
    /// The part's first data epoch is the earlier transaction's (not only the order of the
    /// markers): its data certainly began there.
    pub by_epoch: bool,
}

pub(super) type Parts<'a> = &'a [PartitionTxns];

pub(super) fn rec<'a>(p: Parts<'a>, m: Member) -> &'a TxnRecord {
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
            absorbed: Vec::new(),
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
}

/// The grouping of one domain's transactions, producer id by producer id: every record of
/// the `chosen` inputs indexed by producer id once, so that the groups can be made (and
/// rendered, checked and dropped) a block of producer ids at a time instead of all at once
/// (300 000 open transactions).
pub struct Grouper<'a> {
    p: Parts<'a>,
    coord: &'a [CoordTxn],
    /// Coordinator transactions by the producer ids their markers may carry.
    coord_by_pid: std::collections::HashMap<i64, Vec<usize>>,
    /// Every record, by producer id; per producer id in `chosen` order, then log order.
    members: Vec<Member>,
    /// `(producer id, start, end)` of each producer id's slice of `members`, ascending.
    spans: Vec<(i64, usize, usize)>,
    /// [`super::TxnOptions::coordinator_tolerance_ms`].
    tolerance_ms: i64,
    /// [`super::TxnOptions::marker_delay_ms`].
    marker_delay_ms: i64,
}

impl<'a> Grouper<'a> {
    /// Index the transactions of the `chosen` inputs (one live copy per partition of one
    /// domain) with the domain's coordinator transactions `coord`.
    pub fn new(
        p: Parts<'a>,
        chosen: &[usize],
        coord: &'a [CoordTxn],
        opts: &super::TxnOptions,
    ) -> Self {
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
            tolerance_ms: opts.coordinator_tolerance_ms.max(0),
            marker_delay_ms: opts.marker_delay_ms.max(0),
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
        // What the coordinator's records claim first; the rest grouped without them.
        let (mut groups, rest) = if mine.is_empty() {
            (Vec::new(), members.to_vec())
        } else {
            super::align::by_coordinator(p, coord, mine, (pid, tv2), members, self.tolerance_ms)
        };
        let mut more = if tv2 {
            // The version is the transaction's, not the producer id's: a transactional id
            // keeps its producer id across a client upgrade, and a coordinator's abort may
            // record the server's version. A marker at its data's own epoch proves TV0/1 for
            // that epoch (TV2 markers are always above the data), so those epochs are
            // grouped as TV0/1 (one group per transaction in time, not one per epoch).
            let tv01_epochs: std::collections::BTreeSet<i16> = rest
                .iter()
                .map(|&m| rec(p, m))
                .filter(|r| {
                    r.end != TxnEnd::Open && !r.is_empty() && r.marker_epoch == r.producer_epoch
                })
                .map(|r| r.producer_epoch)
                .collect();
            let (old, new): (Vec<Member>, Vec<Member>) = rest
                .iter()
                .partition(|&&m| tv01_epochs.contains(&rec(p, m).producer_epoch));
            let mut g = group_tv2(p, pid, &new);
            if !old.is_empty() {
                g.extend(group_tv01(p, pid, &old, self.marker_delay_ms));
            }
            g
        } else {
            group_tv01(p, pid, &rest, self.marker_delay_ms)
        };
        absorb_empties(p, pid, tv2, &rest, &mut more);
        name_completed(p, coord, mine, &mut more, self.tolerance_ms);
        groups.append(&mut more);
        groups
    }
}

/// Every record of the `chosen` inputs by producer id (ascending), each producer id's in
/// `chosen` order then log order, and the `(producer id, start, end)` of each producer
/// id's slice. A counting sort: each record's producer id numbered once (a hash map), the
/// distinct ids sorted, the records placed in one pass (millions of records,
/// far fewer producer ids).
fn by_producer(p: Parts<'_>, chosen: &[usize]) -> (Vec<Member>, Vec<(i64, usize, usize)>) {
    let records = || {
        chosen
            .iter()
            .flat_map(move |&input| (0..p[input].txns.len()).map(move |rec| Member { input, rec }))
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

/// What the TV0/1 grouping knows of a group it built: its earliest marker, its latest
/// data start, the one outcome of its closed parts (`None`: several), and whether its
/// markers came from a newer coordinator than the producer's earlier groups' (a failover:
/// the markers were re-sent, late, by the new coordinator).
#[derive(Debug, Clone, Copy)]
struct Built {
    min_marker: i64,
    max_first: i64,
    end: Option<TxnEnd>,
    failover: bool,
}

impl Built {
    /// Whether a part whose data was stamped at `first` must belong to this group: it was
    /// stamped before the coordinator can have answered the group's EndTxn (the earliest
    /// marker − `delay`), so the producer had not yet begun its next transaction.
    fn forces(&self, first: i64, delay: i64) -> bool {
        !self.failover && first < self.min_marker.saturating_sub(delay)
    }
}

/// TV0/1: per data epoch, closed parts by marker time, then open parts by data time.
///
/// One transaction at a time: a producer's next transaction begins once the coordinator
/// answered EndTxn (after its Prepare record), so its data may be stamped a few ms before
/// the previous transaction's markers land (they are written after the same record), and
/// is appended after them. A part joins the group before it only when its data was
/// stamped more than `delay` before that group's first marker (the grouping is forced),
/// or when its outcome is the group's (the grouping changes no verdict); otherwise it
/// starts a transaction of its own.
fn group_tv01(p: Parts<'_>, pid: i64, members: &[Member], delay: i64) -> Vec<Group> {
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
    // The highest coordinator epoch of the producer's markers grouped so far.
    let mut coordinator_epoch: Option<i32> = None;
    for (epoch, ms) in by_epoch {
        // This epoch's groups are `out[base..]`, described by `built`.
        let base = out.len();
        let mut built: Vec<Built> = Vec::new();
        let mut closed: Vec<(i64, usize, i64, usize)> = ms
            .iter()
            .filter_map(|&m| {
                let r = rec(p, m);
                (!r.is_open()).then_some((r.last_timestamp, m.input, r.marker_offset, m.rec))
            })
            .collect();
        closed.sort_unstable();
        for (_, input, _, rec_i) in closed {
            let m = Member { input, rec: rec_i };
            let r = rec(p, m);
            let joins = match (out[base..].last(), built.last()) {
                (Some(g), Some(b)) => {
                    !g.has_input(m.input)
                        && r.first_timestamp <= b.min_marker
                        && b.max_first <= r.last_timestamp
                        && r.last_timestamp.saturating_sub(b.min_marker) <= MARKER_SPREAD_MS
                        && (b.forces(r.first_timestamp, delay) || b.end == Some(r.end))
                }
                _ => false,
            };
            if joins {
                if let (Some(g), Some(b)) = (out[base..].last_mut(), built.last_mut()) {
                    g.members.push(m);
                    b.max_first = b.max_first.max(r.first_timestamp);
                    b.end = b.end.filter(|&e| e == r.end);
                }
            } else {
                out.push(Group::new(pid, epoch, false, m));
                built.push(Built {
                    min_marker: r.last_timestamp,
                    max_first: r.first_timestamp,
                    end: Some(r.end),
                    failover: coordinator_epoch.is_some_and(|e| r.coordinator_epoch > e),
                });
            }
            coordinator_epoch = coordinator_epoch.max(Some(r.coordinator_epoch));
        }
        // Open parts: the first group whose markers came after the data began, when the
        // group before it had finished by then and the data was stamped before that group
        // can have been answered; else a transaction of its own.
        let closed_groups = out.len() - base;
        for m in ms.iter().copied().filter(|&m| rec(p, m).is_open()) {
            let groups = &out[base..];
            let first = rec(p, m).first_timestamp;
            let at = (0..closed_groups)
                .find(|&g| groups[g].min_marker_ts(p).is_some_and(|t| t >= first));
            let fits = at.is_some_and(|g| {
                !groups[g].has_input(m.input)
                    && built[g].forces(first, delay)
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

/// Coordinator transactions whose records list no partition (compaction kept only their
/// Complete record) cannot claim parts by partition: each names the one closed group, of
/// the epoch its records carry, whose first marker lies nearest its window (within
/// `tol`) and that no other transaction named. Nothing is merged, and the group keeps the
/// grouping it was made by.
fn name_completed(
    p: Parts<'_>,
    coord: &[CoordTxn],
    mine: &[usize],
    groups: &mut [Group],
    tol: i64,
) {
    if groups.is_empty() || mine.iter().all(|&i| coord[i].partitions.is_some()) {
        return;
    }
    let mut by_ts: Vec<(i64, usize)> = groups
        .iter()
        .enumerate()
        .filter_map(|(gi, g)| g.min_marker_ts(p).map(|t| (t, gi)))
        .collect();
    by_ts.sort_unstable();
    for &i in mine.iter().filter(|&&i| coord[i].partitions.is_none()) {
        let t = &coord[i];
        let Some(lower) = t.prepare_ms.or(t.complete_ms) else {
            continue;
        };
        let upper = t.complete_ms.unwrap_or(i64::MAX);
        let from = by_ts.partition_point(|&(ts, _)| ts < lower.saturating_sub(tol));
        let epoch_ok = |g: &Group| match (t.end_epoch, g.marker_epoch(p)) {
            (Some(e), Some(m)) => e == m,
            (None, Some(m)) => t.data_epoch == m && !g.tv2,
            _ => false,
        };
        let best = by_ts[from..]
            .iter()
            .take_while(|&&(ts, _)| ts <= upper.saturating_add(tol))
            .take(64)
            .filter(|&&(_, gi)| {
                let g = &groups[gi];
                g.coord.is_none() && t.has_pid(g.producer_id) && epoch_ok(g)
            })
            .map(|&(ts, gi)| (super::align::window_distance(ts, lower, upper), gi))
            .min();
        if let Some((_, gi)) = best {
            groups[gi].coord = Some(i);
        }
    }
}
