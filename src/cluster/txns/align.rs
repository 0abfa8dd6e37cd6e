//! The join where the coordinator's records cover a producer: each partition's transactions
//! of the producer belong to the coordinator transactions whose partition lists hold that
//! partition, in order.
//!
//! Per partition, the producer's transactions follow one another between its markers
//! (`ProducerStateManager` closes one before the next opens), and an id's transactions
//! follow one another in the coordinator's log (`TransactionMetadata` moves Ongoing →
//! Prepare* → Complete* before the next Ongoing; `TransactionCoordinator.
//! handleAddPartitionsToTransaction` answers CONCURRENT_TRANSACTIONS until then). So the two
//! sequences align by order. Time only breaks ties: a marker is written after the
//! coordinator's Prepare record and before its Complete record, transaction data while
//! the transaction is Ongoing; a candidate whose times are further than the tolerance
//! ([`super::TxnOptions::coordinator_tolerance_ms`]) from the record's is not one, and of
//! several the nearest wins. A record no coordinator transaction claims is left to the
//! grouping without the coordinator ([`super::group`]); it is never folded into a
//! neighbour, except open data written while a transaction of its id was Ongoing on a
//! partition that transaction never listed: that is the transaction it belongs to, and
//! the unlisted partition is what `transaction_partition_unlisted` reports.

use super::group::{Absorbed, Group, Grouping, Member, Members, Parts, rec};
use crate::cluster::coordinator::model::CoordTxn;
use crate::partition::state::txnrec::TxnRecord;
use std::collections::HashMap;

/// How many coordinator transactions listing a partition one record is compared with
/// (bounded work on hostile inputs).
const LOOK_AHEAD: usize = 256;

/// The distance (ms) of record `r`'s time to the window of coordinator transaction `c`,
/// `None` when `c` cannot hold it: another epoch, or further than `tol`. A marker falls
/// between the Prepare record and the Complete record (its epoch is the one they carry);
/// open data between the transaction's start and its Prepare record (at its data epoch).
pub(super) fn distance(r: &TxnRecord, c: &CoordTxn, tol: i64) -> Option<i64> {
    let known = |t: i64| (t >= 0).then_some(t);
    let (t, lo, hi) = if r.is_open() {
        if !c.holds_data_epoch(r.producer_epoch) {
            return None;
        }
        let end = c.prepare_ms.or(c.complete_ms);
        let lo = known(c.start_ms).or(end).unwrap_or(c.last_update_ms);
        (r.first_timestamp, lo, end.unwrap_or(i64::MAX))
    } else {
        let epoch = match c.end_epoch {
            Some(e) => e,
            // Still Ongoing in this copy of the coordinator's log: the epoch its markers
            // will carry.
            None if c.tv2() => c.data_epoch.saturating_add(1),
            None => c.data_epoch,
        };
        if epoch != r.marker_epoch {
            return None;
        }
        let lo = c
            .prepare_ms
            .or(c.complete_ms)
            .or(known(c.start_ms))
            .unwrap_or(c.last_update_ms);
        (r.last_timestamp, lo, c.complete_ms.unwrap_or(i64::MAX))
    };
    let d = window_distance(t, lo, hi);
    (d <= tol).then_some(d)
}

/// How far `t` lies outside `[lo, hi]` (0 inside).
pub(super) fn window_distance(t: i64, lo: i64, hi: i64) -> i64 {
    lo.saturating_sub(t).max(t.saturating_sub(hi)).max(0)
}

/// The groups of producer `pid` that its coordinator transactions `mine` claim (in the
/// coordinator's order), and its records none claims, each input's in log order.
/// `members`: the producer's records, each input's together in log order.
pub(super) fn by_coordinator(
    p: Parts<'_>,
    coord: &[CoordTxn],
    mine: &[usize],
    (pid, tv2): (i64, bool),
    members: &[Member],
    tol: i64,
) -> (Vec<Group>, Vec<Member>) {
    let mut order: Vec<usize> = mine.to_vec();
    order.sort_unstable_by_key(|&i| (coord[i].log, coord[i].first_record_offset, i));
    // Partition → the positions (in `order`) of the transactions listing it.
    let mut listing: HashMap<(&str, i32), Vec<usize>> = HashMap::new();
    for (k, &i) in order.iter().enumerate() {
        for (topic, partition) in coord[i].partitions.iter().flat_map(|s| s.iter()) {
            listing
                .entry((topic.as_str(), *partition))
                .or_default()
                .push(k);
        }
    }
    let mut a = Aligner {
        p,
        coord,
        order: &order,
        tol,
        pid,
        tv2,
        claimed: vec![None; order.len()],
        rest: Vec::new(),
    };
    let mut from = 0;
    while from < members.len() {
        let input = members[from].input;
        let to = from
            + members[from..]
                .iter()
                .take_while(|m| m.input == input)
                .count();
        let tp = (p[input].topic.as_str(), p[input].partition);
        let list = listing.get(&tp).map_or(&[][..], Vec::as_slice);
        a.partition(&members[from..to], list);
        from = to;
    }
    a.unlisted(&listing);
    let Aligner { claimed, rest, .. } = a;
    (claimed.into_iter().flatten().collect(), rest)
}

struct Aligner<'a> {
    p: Parts<'a>,
    coord: &'a [CoordTxn],
    /// The producer's coordinator transactions, in the coordinator's order.
    order: &'a [usize],
    tol: i64,
    pid: i64,
    tv2: bool,
    /// The group of each transaction of `order`, once a record is claimed.
    claimed: Vec<Option<Group>>,
    rest: Vec<Member>,
}

impl Aligner<'_> {
    fn txn(&self, k: usize) -> &CoordTxn {
        &self.coord[self.order[k]]
    }

    fn claim(&mut self, k: usize, m: Member) {
        let c = self.order[k];
        match &mut self.claimed[k] {
            Some(g) => g.members.push(m),
            slot => {
                *slot = Some(Group {
                    producer_id: self.pid,
                    data_epoch: self.coord[c].data_epoch,
                    tv2: self.tv2,
                    members: Members::one(m),
                    duplicates: Vec::new(),
                    absorbed: Vec::new(),
                    grouping: Grouping::CoordinatorRecord,
                    coord: Some(c),
                })
            }
        }
    }

    /// The nearest of the candidates `list` (positions in `order`) for `r`, as (index
    /// in `list`, distance); the first at distance 0 wins (order before time).
    fn best(&self, r: &TxnRecord, list: &[usize]) -> Option<(usize, i64)> {
        let t = if r.is_open() {
            r.first_timestamp
        } else {
            r.last_timestamp
        };
        let mut best: Option<(usize, i64)> = None;
        for (at, &k) in list.iter().enumerate().take(LOOK_AHEAD) {
            let c = self.txn(k);
            // The coordinator's transactions come in time order: once one starts after
            // the record's time + the tolerance, none after it can hold the record.
            if c.start_ms >= 0 && c.start_ms.saturating_sub(self.tol) > t {
                break;
            }
            let Some(d) = distance(r, c, self.tol) else {
                continue;
            };
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((at, d));
            }
            if d == 0 {
                break;
            }
        }
        best
    }

    /// Align one partition's records `run` (log order) with the transactions listing it.
    fn partition(&mut self, run: &[Member], list: &[usize]) {
        let p = self.p;
        let mut next = 0; // the first candidate of `list` not yet claimed here
        let mut prev: Option<usize> = None; // the transaction the previous record joined
        let mut exact_prev = false; // and it fit that transaction's window exactly
        for (i, &m) in run.iter().enumerate() {
            let r = rec(p, m);
            if let (Some(k), Some(&before)) = (prev, i.checked_sub(1).and_then(|j| run.get(j)))
                && self.resent(rec(p, before), r, k, list.get(next))
            {
                if let Some(g) = &mut self.claimed[k] {
                    g.duplicates.push(m);
                }
                continue;
            }
            let Some((at, d)) = self.best(r, &list[next.min(list.len())..]) else {
                self.rest.push(m);
                prev = None;
                exact_prev = false;
                continue;
            };
            let k = list[next + at];
            // The next record of the partition fits that transaction better: this one
            // is older than the coordinator's records of it.
            let nearer = run.get(i + 1).is_some_and(|&n| {
                d > 0 && distance(rec(p, n), self.txn(k), self.tol).is_some_and(|e| e < d)
            });
            if nearer {
                self.rest.push(m);
                prev = None;
                exact_prev = false;
                continue;
            }
            self.claim(k, m);
            if let Some(a) = self.absorbed(r, m, (&list[next..next + at], k), d, exact_prev)
                && let Some(g) = &mut self.claimed[k]
            {
                g.absorbed.push(a);
            }
            next += at + 1;
            prev = Some(k);
            exact_prev = d == 0;
        }
    }

    /// Whether the data of `r` (member `m`), claimed by transaction `k` at distance `d`,
    /// began in an earlier transaction that wrote no marker to the partition. Two proofs:
    /// the part's first data epoch is below `k`'s and is the epoch of an earlier finished
    /// transaction of the producer (the part's data began there: `ProducerStateManager`
    /// keeps the transaction open across the epoch change); or, by order, the
    /// partition's previous part and this one each fit their transaction's window exactly
    /// and transactions listing the partition between them (`skipped`) finished without
    /// a marker here (`TransactionMarkerChannelManager` writes one to every listed
    /// partition before the Complete record). Only the first proof shows the lost marker
    /// closed data; the second may have lost an empty one.
    fn absorbed(
        &self,
        r: &TxnRecord,
        m: Member,
        (skipped, k): (&[usize], usize),
        d: i64,
        exact_prev: bool,
    ) -> Option<Absorbed> {
        if r.is_open() || r.is_empty() {
            return None;
        }
        let tp = (self.p[m.input].topic.as_str(), self.p[m.input].partition);
        let lists = |c: &CoordTxn| {
            c.partitions
                .as_ref()
                .is_some_and(|s| s.iter().any(|(t, p)| (t.as_str(), *p) == tp))
        };
        if !self.txn(k).holds_data_epoch(r.producer_epoch) {
            let s = (0..k).rev().find(|&s| {
                let c = self.txn(s);
                c.holds_data_epoch(r.producer_epoch) && c.has_pid(r.producer_id)
            })?;
            let c = self.txn(s);
            return c.complete_ms.is_some().then(|| Absorbed {
                member: m,
                coord: self.order[s],
                listed: lists(c),
                by_epoch: true,
            });
        }
        // The log cleaner removes the markers of empty transactions from compacted
        // partitions (`LogCleaner`, once the delete horizon passed): a partition known to
        // be compacted (the scan marks the internal topics compacted; the cleaner's traces
        // in its batches count, `PartitionTxns::compacted`) gives no order proof.
        // One whose policy is unknown gives it at a lower severity (`rules::absorbed`).
        let compacted = self.p[m.input].compacted == Some(true);
        if skipped.is_empty() || d != 0 || !exact_prev || compacted {
            return None;
        }
        let s = skipped.iter().rev().copied().find(|&s| {
            let c = self.txn(s);
            c.complete_ms.is_some() && distance(r, c, self.tol) != Some(0)
        })?;
        Some(Absorbed {
            member: m,
            coord: self.order[s],
            listed: true,
            by_epoch: false,
        })
    }

    /// Whether `r` (a marker alone) re-sends `before`'s marker, claimed by transaction `k`
    /// (a coordinator failover: the new coordinator writes the markers of every Prepare*
    /// transaction again), rather than ends the partition's next transaction
    /// (`following`, its next candidate), which would hold its time exactly.
    fn resent(
        &self,
        before: &TxnRecord,
        r: &TxnRecord,
        k: usize,
        following: Option<&usize>,
    ) -> bool {
        r.is_empty()
            && !before.is_open()
            && before.end == r.end
            && before.marker_epoch == r.marker_epoch
            && following.is_none_or(|&f| distance(r, self.txn(f), self.tol) != Some(0))
            && distance(r, self.txn(k), self.tol).is_some()
    }

    /// Open data no transaction listing its partition claims, written while a transaction
    /// of the id was Ongoing (its start ≤ the data ≤ its Prepare record): that transaction
    /// never listed the partition, so no marker will come (`transaction_partition_unlisted`).
    fn unlisted(&mut self, listing: &HashMap<(&str, i32), Vec<usize>>) {
        let p = self.p;
        let rest = std::mem::take(&mut self.rest);
        for m in rest {
            let r = rec(p, m);
            let tp = (p[m.input].topic.as_str(), p[m.input].partition);
            let lists = |k: usize| {
                listing
                    .get(&tp)
                    .is_some_and(|l| l.binary_search(&k).is_ok())
            };
            let owner = if r.is_open() && !r.is_empty() {
                self.owner_of_unlisted(r, lists)
            } else {
                None
            };
            match owner {
                Some(k) => self.claim(k, m),
                None => self.rest.push(m),
            }
        }
    }

    /// The latest transaction of the producer that was Ongoing when `r`'s data began
    /// (start − tolerance ≤ data ≤ its Prepare record) and does not list `r`'s partition
    /// (`lists`), searched newest first down to the transactions updated before the data.
    fn owner_of_unlisted(&self, r: &TxnRecord, lists: impl Fn(usize) -> bool) -> Option<usize> {
        for k in (0..self.order.len()).rev() {
            let c = self.txn(k);
            if c.last_update_ms.saturating_add(self.tol) < r.first_timestamp {
                return None; // this one and every earlier one ended before the data
            }
            let end = c.prepare_ms.or(c.complete_ms).unwrap_or(i64::MAX);
            if c.holds_data_epoch(r.producer_epoch)
                && c.start_ms >= 0
                && r.first_timestamp >= c.start_ms.saturating_sub(self.tol)
                && r.first_timestamp <= end
                && !lists(k)
            {
                return Some(k);
            }
        }
        None
    }
}
