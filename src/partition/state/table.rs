//! The replay's producer table: producer id → [`Entry`], compact at peak.
//!
//! A `HashMap<i64, Entry>` stores each entry in its buckets: with ~520-byte entries, a load
//! factor up to 7/8 and a table that doubles (old and new tables both alive while it grows),
//! one producer id cost 1.0–1.6 KB at peak. Here the entries live in a `Vec`
//! (grown in place by `realloc`, its unused capacity never touched) and the hash table
//! holds only a `u32` index per bucket: ≈ 5 bytes a bucket, ≈ 17 bytes per id while it
//! grows. The index is rehashed from the entries' own producer ids.

use super::entry::Entry;
use super::pidhash::PidBuildHasher;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Producer id → entry, insertion-ordered storage (iteration order is unspecified to callers:
/// the replay sorts what it reports).
pub(crate) struct ProducerTable {
    index: HashTable<u32>,
    entries: Vec<Entry>,
    hasher: PidBuildHasher,
}

impl Default for ProducerTable {
    fn default() -> Self {
        ProducerTable {
            index: HashTable::new(),
            entries: Vec::new(),
            hasher: PidBuildHasher::default(),
        }
    }
}

impl ProducerTable {
    fn slot(&self, pid: i64) -> Option<usize> {
        let h = self.hasher.hash_one(pid);
        let entries = &self.entries;
        self.index
            .find(h, |&i| entries[i as usize].pid == pid)
            .map(|&i| i as usize)
    }

    pub(crate) fn get(&self, pid: i64) -> Option<&Entry> {
        self.slot(pid).map(|i| &self.entries[i])
    }

    pub(crate) fn get_mut(&mut self, pid: i64) -> Option<&mut Entry> {
        self.slot(pid).map(|i| &mut self.entries[i])
    }

    /// Take producer `pid`'s entry out for an update, leaving a placeholder holding
    /// nothing ([`Entry::vacant`]) until [`ProducerTable::insert`] puts it back.
    pub(crate) fn take(&mut self, pid: i64) -> Option<Entry> {
        self.get_mut(pid)
            .map(|e| std::mem::replace(e, Entry::vacant(pid)))
    }

    /// Insert `e` (keyed by `e.pid`), replacing the entry of the same producer id.
    pub(crate) fn insert(&mut self, e: Entry) {
        if let Some(i) = self.slot(e.pid) {
            self.entries[i] = e;
            return;
        }
        // More than u32::MAX producer ids cannot come from one partition's batches held in
        // memory-mapped segments of a 64-bit machine before the entries themselves run out
        // of memory; the conversion still refuses to wrap.
        let Ok(i) = u32::try_from(self.entries.len()) else {
            return;
        };
        let h = self.hasher.hash_one(e.pid);
        self.entries.push(e);
        let (entries, hasher) = (&self.entries, &self.hasher);
        self.index
            .insert_unique(h, i, |&j| hasher.hash_one(entries[j as usize].pid));
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}
