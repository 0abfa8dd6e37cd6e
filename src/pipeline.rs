//! The pipeline every command runs: discover inputs → one walk per segment and the
//! per-partition analysis ([`crate::scan`]: producer-state replay, integrity rules, the
//! recovery model) → cluster checks over the per-partition results (coordinator
//! confirmation, replica comparison) → the report.
//!
//! Cluster checks consume the typed per-partition results ([`crate::results`]) and return
//! findings per partition; nothing below this module imports them, so the stages form a
//! line, not a web. `scan` and `verify` both run [`analyse`].

use crate::layout::{self, Inventory};
use crate::results::{ScanOptions, ScanReport};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A cluster check: reads the finished per-partition results (and the inventory, for the
/// files only it decodes) and returns findings keyed by partition index.
pub type ClusterCheck =
    fn(&ScanReport, &Inventory, &ScanOptions) -> BTreeMap<usize, Vec<crate::Finding>>;

/// The cluster checks, in the order they run. Each sees the findings of the ones before
/// it (the coordinator's confirmation changes `hanging_transaction` in place).
pub fn cluster_checks() -> &'static [(&'static str, ClusterCheck)] {
    &[
        ("replicas", crate::replicas::check),
        // The group coordinator's load of __consumer_offsets (issue 13).
        ("groups", crate::groups::cluster_check),
    ]
}

/// Per-partition analysis of an inventory, then every cluster check.
pub fn analyse(inv: &Inventory, opts: &ScanOptions) -> ScanReport {
    let mut report = crate::scan::scan_inventory(inv, opts);
    run_cluster_checks(&mut report, inv, opts);
    report
}

/// The cluster checks over finished per-partition results. They read what each
/// partition's walk kept ([`crate::results::PartitionReport::cluster_inputs`]), never the
/// partitions' segments again; only `__transaction_state` partitions outside the scan's
/// selection (`--topic`, `--partition`) are walked here, once.
pub fn run_cluster_checks(report: &mut ScanReport, inv: &Inventory, opts: &ScanOptions) {
    // Confirm (or refute) hanging transactions with the coordinator's log, when present:
    // this one rewrites existing findings, so it runs first and in place.
    // The coordinator's log is evidence for every data partition: its partitions outside
    // the selection are walked once, for both coordinator checks.
    let unscanned = crate::coordinator::walk_unscanned(report, inv, opts);
    crate::coordinator::annotate_from(report, &unscanned, inv, opts);
    // Join each transaction's partitions and its coordinator record (issue 12); it links
    // hanging transactions to their root cause in place and keeps the joined transactions.
    crate::coordinator::cluster::check_from(report, &unscanned, inv, opts);
    drop(unscanned);
    for (_, check) in cluster_checks() {
        let extra = check(report, inv, opts);
        report.add_partition_findings(extra);
    }
}

/// Scan the given paths (broker data dirs, partition dirs, single files, or dirs above them).
pub fn scan(paths: &[PathBuf], opts: &ScanOptions) -> ScanReport {
    let inv = layout::discover_with(
        paths,
        layout::DiscoverOptions {
            follow_symlinks: opts.follow_symlinks,
        },
    );
    let mut report = analyse(&inv, opts);
    report.inputs = paths.iter().map(|p| p.display().to_string()).collect();
    report
}
