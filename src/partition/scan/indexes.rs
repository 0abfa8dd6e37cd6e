//! `verify`'s index checks joined to the scan's one walk of each segment.
//!
//! Before a segment is walked its `.index`, `.timeindex` and `.txnindex` are read and
//! their keys taken ([`IndexKeys`]); the walk (whole, or each piece) keeps only the entries
//! at those keys ([`IndexMatcher`]); when the walk of the segment ends, the offset and time
//! indexes are checked against what it kept and reduced to [`IndexVerdicts`] (how many
//! entries are wrong, the first few), which is all `verify` reports. Nothing is kept per
//! log entry: a segment of 8 million small batches cost ≈ 60 bytes each (≈ 500 MB) when
//! every entry's position was kept until `verify`'s checks ran.
//!
//! An index that cannot be read here gives no keys and no verdict (`verify` loads the file
//! again for its own checks, and reports an unreadable one).

use crate::discover::layout::SegmentFiles;
use crate::read::format::index::{
    IndexKeys, IndexMatcher, IndexVerdicts, LogMatches, OffsetIndex, TimeIndex, TxnIndex,
};
use crate::read::segment::{FileClass, FileData, MmapMode, load};
use std::path::Path;
use std::sync::Arc;

/// One segment's offset and time index (kept for the checks at the end of its walk) and
/// the keys of all three of its indexes.
pub(crate) struct SegmentIndexes {
    base: i64,
    index: Option<FileData>,
    timeindex: Option<FileData>,
    keys: Arc<IndexKeys>,
}

fn read(path: Option<&Path>, mmap: MmapMode) -> Option<FileData> {
    load(path?, FileClass::Index, mmap, None).ok()
}

/// A file that changed under its map since it was loaded is not used (its bytes may be
/// zeros the guard put in).
fn unchanged(d: &Option<FileData>) -> bool {
    d.as_ref().is_none_or(|d| d.check_unchanged().is_ok())
}

impl SegmentIndexes {
    /// Read the index files of `files` (mapped or read as `mmap` allows, like `verify`'s
    /// own loads) and take their keys.
    pub(crate) fn load(files: &SegmentFiles, mmap: MmapMode) -> SegmentIndexes {
        let base = files.base_offset;
        let mut index = read(files.index.as_deref(), mmap);
        let mut timeindex = read(files.timeindex.as_deref(), mmap);
        let txn = read(files.txnindex.as_deref(), mmap);
        let oi = index.as_deref().map(|b| OffsetIndex::new(b, base));
        let ti = timeindex.as_deref().map(|b| TimeIndex::new(b, base));
        let xi = txn.as_deref().map(|b| TxnIndex::new(b, base));
        let mut keys = IndexKeys::new(oi.as_ref(), ti.as_ref(), xi.as_ref());
        if !(unchanged(&index) && unchanged(&timeindex) && unchanged(&txn)) {
            keys = IndexKeys::default();
            index = None;
            timeindex = None;
        }
        // The keys are taken: the mapped pages are not needed until the checks.
        for d in [&index, &timeindex].into_iter().flatten() {
            d.release();
        }
        SegmentIndexes {
            base,
            index,
            timeindex,
            keys: Arc::new(keys),
        }
    }

    /// A matcher for one walk of the segment (or of one piece of it).
    pub(crate) fn matcher(&self) -> IndexMatcher {
        IndexMatcher::new(self.keys.clone())
    }

    /// Check the offset and time index against what the walk of the whole segment kept.
    pub(crate) fn verdicts(&self, log: &LogMatches) -> IndexVerdicts {
        let oi = self
            .index
            .as_deref()
            .map(|b| OffsetIndex::new(b, self.base));
        let ti = self
            .timeindex
            .as_deref()
            .map(|b| TimeIndex::new(b, self.base));
        let mut v = IndexVerdicts::of(oi.as_ref(), ti.as_ref(), log);
        if !unchanged(&self.index) {
            v.offset = None;
        }
        if !unchanged(&self.timeindex) {
            v.time = None;
        }
        for d in [&self.index, &self.timeindex].into_iter().flatten() {
            d.release();
        }
        v
    }
}
