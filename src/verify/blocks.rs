//! How `verify` goes over the scan's partitions: a block at a time off the end of the
//! scan's reports, each report matched with its inventory partition and its findings,
//! everything a block has read let go before the next (the reports, their findings, an
//! inventory of verify's own), so that what the scan made and what verify makes of it are
//! never both whole.

use super::{PartitionReport, PartitionVerification};
use crate::discover::layout::Inventory;
use crate::finding::Finding;
use rayon::prelude::*;

/// The inventory [`in_blocks`] reads partitions' files from, and may let go of.
pub(super) enum Inv<'a> {
    Borrowed(&'a Inventory),
    Owned(&'a mut Inventory),
}

impl Inv<'_> {
    pub(super) fn get(&self) -> &Inventory {
        match self {
            Inv::Borrowed(i) => i,
            Inv::Owned(i) => i,
        }
    }

    /// The partitions from `at` on are verified and not read again: an inventory of
    /// verify's own lets them go (the vector's tail given back in place).
    pub(super) fn done_from(&mut self, at: usize) {
        if let Inv::Owned(inv) = self {
            inv.partitions.truncate(at);
            inv.partitions.shrink_to_fit();
        }
    }
}

/// Partitions verified at a time by [`in_blocks`].
pub(super) const BLOCK: usize = 4096;

/// `verify_one` over every partition and its findings, in order, a [`BLOCK`] of partitions
/// at a time taken off the end of the scan's vector, whose memory is given back as it
/// goes (shrinking a vector's tail is done in place by the allocator): the scan's reports
/// and the verifications made of them are never both whole. Before, both vectors were
/// alive at the end (1 312 and 2 032 bytes a partition). A partition `verify_one` drops
/// (`None`) is left out. After each block, `done` is told which inventory partitions it
/// read: the partitions from the block's first report's on are not read again.
pub(super) fn in_blocks(
    mut parts: Vec<PartitionReport>,
    mut findings: Vec<Vec<Finding>>,
    access: &mut Inv<'_>,
    verify_one: impl Fn(
        &Inventory,
        usize,
        PartitionReport,
        Vec<Finding>,
    ) -> Option<PartitionVerification>
    + Sync,
    mut done: impl FnMut(&mut Inv<'_>, usize),
) -> Vec<PartitionVerification> {
    // Each block's verifications in a vector of their own, joined once the scan's reports
    // are gone: reserved whole at the start, the joined vector (304 bytes a partition)
    // was part of the peak, beside every report; grown block by block, each reallocation
    // left the old copy as a hole in the heap that the next blocks' small allocations did
    // not fill.
    let mut blocks: Vec<Vec<PartitionVerification>> = Vec::new();
    while !parts.is_empty() {
        let at = parts.len().saturating_sub(BLOCK);
        let block = parts.split_off(at);
        let block_findings = findings.split_off(at.min(findings.len()));
        parts.shrink_to_fit();
        findings.shrink_to_fit();
        // An indexed collect (one vector, written in place), then the `None`s dropped.
        let inv = access.get();
        let verified: Vec<Option<PartitionVerification>> = block
            .into_par_iter()
            .zip(block_findings)
            .enumerate()
            .map(|(j, (r, f))| verify_one(inv, at + j, r, f))
            .collect();
        done(access, at);
        blocks.push(verified.into_iter().flatten().collect());
        // The block's reports (and the inventory's partitions let go) are freed: their
        // pages go back to the system rather than stay resident as holes between the
        // small allocations kept.
        crate::pipeline::release_freed_memory();
    }
    drop(parts);
    drop(findings);
    // Blocks come last first.
    let mut out = Vec::with_capacity(blocks.iter().map(Vec::len).sum());
    for block in blocks.into_iter().rev() {
        out.extend(block);
    }
    out
}

/// Each report's inventory partition, when every report has one and they come in the
/// inventory's order (strictly increasing): `None` otherwise.
pub(super) fn in_order<'a>(
    inv: &Inventory,
    by_path: &ByPath,
    paths: impl ExactSizeIterator<Item = &'a str>,
) -> Option<Vec<u32>> {
    let mut order = Vec::with_capacity(paths.len());
    for path in paths {
        let i = by_path.index_of(inv, path)? as u32;
        if order.last().is_some_and(|last| *last >= i) {
            return None;
        }
        order.push(i);
    }
    Some(order)
}

/// The inventory's partitions sorted by their path as the reports write it: the report's
/// path is the directory's `display()`, and `to_string_lossy` gives the same text,
/// borrowed when it is UTF-8 (4 bytes a partition; a map of borrowed paths cost ≈ 45).
pub(super) struct ByPath(Vec<u32>);

impl ByPath {
    pub(super) fn of(inv: &Inventory) -> Self {
        let mut by_path: Vec<u32> = (0..inv.partitions.len() as u32).collect();
        by_path.sort_unstable_by(|a, b| path_of(inv, *a).cmp(&path_of(inv, *b)));
        ByPath(by_path)
    }

    pub(super) fn index_of(&self, inv: &Inventory, path: &str) -> Option<usize> {
        let k = self
            .0
            .binary_search_by(|i| (*path_of(inv, *i)).cmp(path))
            .ok()?;
        Some(self.0[k] as usize)
    }
}

fn path_of(inv: &Inventory, i: u32) -> std::borrow::Cow<'_, str> {
    inv.partitions[i as usize].path.to_string_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn inventory(paths: &[&str]) -> Inventory {
        let mut inv = Inventory::default();
        for p in paths {
            let mut d = crate::discover::layout::PartitionDir::default();
            d.path = PathBuf::from(p);
            inv.partitions.push(d);
        }
        inv
    }

    #[test]
    fn reports_in_the_inventorys_order_are_matched_by_position() {
        let inv = inventory(&["/d/b-0", "/d/a-0", "/d/c-0"]);
        let by_path = ByPath::of(&inv);
        let order = |paths: &[&str]| in_order(&inv, &by_path, paths.iter().copied());
        assert_eq!(order(&["/d/b-0", "/d/a-0", "/d/c-0"]), Some(vec![0, 1, 2]));
        // A partition the stage did not select is skipped: still in order.
        assert_eq!(order(&["/d/b-0", "/d/c-0"]), Some(vec![0, 2]));
        assert_eq!(order(&[]), Some(vec![]));
    }

    #[test]
    fn reports_out_of_order_repeated_or_unknown_are_found_by_path() {
        let inv = inventory(&["/d/b-0", "/d/a-0", "/d/c-0"]);
        let by_path = ByPath::of(&inv);
        let order = |paths: &[&str]| in_order(&inv, &by_path, paths.iter().copied());
        assert_eq!(order(&["/d/a-0", "/d/b-0"]), None);
        assert_eq!(order(&["/d/b-0", "/d/b-0"]), None);
        assert_eq!(order(&["/d/b-0", "/d/x-0"]), None);
        assert_eq!(by_path.index_of(&inv, "/d/c-0"), Some(2));
        assert_eq!(by_path.index_of(&inv, "/d/x-0"), None);
    }
}
