//! The replay's open transactions: one slot each in a slab, the producer's [`Entry`]
//! holding the slot's index.
//!
//! A box per open transaction left its heap chunk behind when the transaction closed:
//! with 300 000 transactions open at once and then closed, the freed chunks (128 bytes
//! each) stayed part of the heap until the end of the scan, under the markers' records.
//! Here the slots are one vector: a closed transaction's slot is reused by the next one
//! to open, and when three quarters of the slots are free the live ones are moved to the
//! front (their entries told their new slot) and the vector shrinks, giving the memory
//! back. The work of a compaction is paid for by the closes before it (amortised O(1)).
//!
//! The open transactions are also ordered by first offset (the last stable offset is the
//! smallest) in a binary heap of `(first offset, slot)` in one vector, instead of a
//! `BTreeSet` whose nodes, freed as transactions closed, were left as holes in the heap
//! memory. A closed transaction's heap item is dropped when it reaches the top, or with
//! every other such item when they outnumber the open transactions (the heap is then
//! rebuilt from the slots): each close costs O(log n) amortised, and the heap holds at
//! most about twice as many items as transactions are open.
//!
//! [`Entry`]: super::entry::Entry

use super::entry::OpenTxnState;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Below this many slots the slab is never compacted (a few hundred KB at most).
const MIN_COMPACT: usize = 4096;

/// Open transactions, one slot each; free slots have `pid == -1`.
#[derive(Debug, Default)]
pub(crate) struct OpenTxns {
    slots: Vec<OpenTxnState>,
    /// Indices of the free slots (reused last freed first).
    free: Vec<u32>,
    /// `(first offset, slot)` of the open transactions, smallest first offset on top (an
    /// open one: closed ones on top are dropped at once), and of some closed ones below.
    order: BinaryHeap<Reverse<(i64, u32)>>,
}

impl OpenTxns {
    /// Store `t` (of producer `t.pid ≥ 0`); its slot, or `None` when the slab already has
    /// `u32::MAX` slots (more open transactions than a partition's producer table holds).
    pub(crate) fn insert(&mut self, t: OpenTxnState) -> Option<u32> {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = t;
                i
            }
            None => {
                let i = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&i| i != u32::MAX)?;
                self.slots.push(t);
                i
            }
        };
        self.order.push(Reverse((t.first_batch.base_offset, i)));
        Some(i)
    }

    /// First offset of the earliest open transaction (by first offset).
    pub(crate) fn first_offset(&self) -> Option<i64> {
        self.order.peek().map(|r| r.0.0)
    }

    /// `(first offset, producer id)` of every open transaction, in that order.
    pub(crate) fn by_first_offset(&self) -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = self
            .slots
            .iter()
            .filter(|t| t.pid >= 0)
            .map(|t| (t.first_batch.base_offset, t.pid))
            .collect();
        v.sort_unstable();
        v
    }

    /// The heap item `(first, slot)` is an open transaction's. A slot reused by a
    /// transaction opened at the same offset (offsets out of order) passes too: an open
    /// transaction does start there.
    fn is_open(&self, first: i64, slot: u32) -> bool {
        let t = &self.slots[slot as usize];
        t.pid >= 0 && t.first_batch.base_offset == first
    }

    /// Drop closed transactions' items from the top of the heap; rebuild it from the
    /// slots when closed ones are the majority.
    fn settle(&mut self) {
        while let Some(&Reverse((first, slot))) = self.order.peek() {
            if self.is_open(first, slot) {
                break;
            }
            self.order.pop();
        }
        let open = self.len();
        if self.order.len() > 2 * open + 64 {
            self.rebuild_order();
        } else if self.order.capacity() >= MIN_COMPACT
            && self.order.len() * 4 < self.order.capacity()
        {
            self.order.shrink_to(self.order.len() * 2);
        }
    }

    fn rebuild_order(&mut self) {
        let items: Vec<Reverse<(i64, u32)>> = (0u32..)
            .zip(&self.slots)
            .filter(|(_, t)| t.pid >= 0)
            .map(|(i, t)| Reverse((t.first_batch.base_offset, i)))
            .collect();
        self.order = BinaryHeap::from(items);
    }

    pub(crate) fn get(&self, slot: u32) -> &OpenTxnState {
        &self.slots[slot as usize]
    }

    pub(crate) fn get_mut(&mut self, slot: u32) -> &mut OpenTxnState {
        &mut self.slots[slot as usize]
    }

    /// Free `slot`, returning what it held.
    pub(crate) fn remove(&mut self, slot: u32) -> OpenTxnState {
        let s = &mut self.slots[slot as usize];
        let t = *s;
        s.pid = -1;
        self.free.push(slot);
        self.settle();
        t
    }

    /// Number of open transactions.
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Three quarters of a large slab are free: time for [`OpenTxns::compact`].
    pub(crate) fn wants_compaction(&self) -> bool {
        self.slots.len() >= MIN_COMPACT && self.free.len() * 4 >= self.slots.len() * 3
    }

    /// Move the open transactions to the front (in slot order), telling `moved` each
    /// producer's new slot, and give the free slots' memory back.
    pub(crate) fn compact(&mut self, mut moved: impl FnMut(i64, u32)) {
        let mut w = 0usize;
        for r in 0..self.slots.len() {
            let t = self.slots[r];
            if t.pid < 0 {
                continue;
            }
            if r != w {
                self.slots[w] = t;
                // w < r < slots.len() ≤ u32::MAX: the index fits.
                moved(t.pid, w as u32);
            }
            w += 1;
        }
        self.slots.truncate(w);
        self.slots.shrink_to(w.saturating_mul(2));
        self.free = Vec::new();
        self.rebuild_order();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::state::entry::DataRef;

    fn txn(pid: i64) -> OpenTxnState {
        OpenTxnState {
            pid,
            first_batch: DataRef {
                base_offset: pid * 10,
                ..DataRef::default()
            },
            first_timestamp: 0,
            rec: crate::partition::state::txnrec::OpenRecord {
                first_held: 0,
                last_data_offset: 0,
                last_timestamp: 0,
                records: 1,
                batches: 1,
                bytes: 0,
            },
            epoch: 0,
            zombie: false,
            late_after_marker: false,
            non_txn_reported: false,
            clock_floor: i64::MIN,
        }
    }

    /// Held per open transaction (one slot each): 300 000 open at once are 36 MB (34 MB
    /// before the record kept a seeded transaction's first held batch; the 200 000-open
    /// address-space test, `txns_memory`, passes under the same limit).
    #[test]
    fn slot_stays_compact() {
        assert!(std::mem::size_of::<OpenTxnState>() <= 120);
    }

    #[test]
    fn slots_are_reused_and_the_slab_shrinks_once_mostly_free() {
        let mut s = OpenTxns::default();
        let n = 10_000i64;
        let mut slot: Vec<u32> = (0..n).map(|p| s.insert(txn(p)).unwrap()).collect();
        assert_eq!(s.len(), n as usize);
        // Close all but every tenth; a reopened transaction takes a freed slot.
        for p in 0..n {
            if p % 10 != 0 {
                assert_eq!(s.remove(slot[p as usize]).pid, p);
            }
        }
        assert!(s.wants_compaction());
        let again = s.insert(txn(1)).unwrap();
        assert!(again < n as u32);
        slot[1] = again;
        s.compact(|pid, to| slot[pid as usize] = to);
        assert_eq!(s.len(), 1001);
        assert!(s.slots.capacity() <= 2002);
        assert!(!s.wants_compaction());
        for p in (0..n).filter(|p| p % 10 == 0 || *p == 1) {
            let t = s.get(slot[p as usize]);
            assert_eq!((t.pid, t.first_batch.base_offset), (p, p * 10));
        }
    }

    #[test]
    fn the_earliest_open_transaction_is_on_top() {
        let mut s = OpenTxns::default();
        assert_eq!(s.first_offset(), None);
        // Opened out of offset order (hostile offsets), closed in another order.
        let firsts = [50i64, 10, 30, 10, 70];
        let slots: Vec<u32> = (0..5)
            .map(|p| {
                let mut t = txn(p);
                t.first_batch.base_offset = firsts[p as usize];
                s.insert(t).unwrap()
            })
            .collect();
        assert_eq!(s.first_offset(), Some(10));
        assert_eq!(
            s.by_first_offset(),
            vec![(10, 1), (10, 3), (30, 2), (50, 0), (70, 4)]
        );
        s.remove(slots[1]);
        assert_eq!(s.first_offset(), Some(10));
        s.remove(slots[3]);
        assert_eq!(s.first_offset(), Some(30));
        s.remove(slots[0]);
        assert_eq!(s.first_offset(), Some(30));
        // A freed slot reused by a later transaction: the old item is not its.
        let mut t = txn(9);
        t.first_batch.base_offset = 60;
        let again = s.insert(t).unwrap();
        assert_eq!(again, slots[0]);
        s.remove(slots[2]);
        assert_eq!(s.first_offset(), Some(60));
        assert_eq!(s.by_first_offset(), vec![(60, 9), (70, 4)]);
        s.remove(again);
        s.remove(slots[4]);
        assert_eq!(s.first_offset(), None);
    }

    /// Many transactions closed under a long-open one: the heap does not keep their items.
    #[test]
    fn closed_items_under_the_top_do_not_pile_up() {
        let mut s = OpenTxns::default();
        let mut t = txn(0);
        t.first_batch.base_offset = 0;
        s.insert(t).unwrap();
        for p in 1..100_000 {
            let i = s.insert(txn(p)).unwrap();
            s.remove(i);
            assert!(s.order.len() <= 2 + 64 + 1, "{}", s.order.len());
        }
        assert_eq!(s.first_offset(), Some(0));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn a_small_slab_is_left_alone() {
        let mut s = OpenTxns::default();
        let slots: Vec<u32> = (0..100).map(|p| s.insert(txn(p)).unwrap()).collect();
        for &i in &slots {
            s.remove(i);
        }
        assert_eq!(s.len(), 0);
        assert!(!s.wants_compaction());
    }
}
