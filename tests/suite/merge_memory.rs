//! `merge` within a bounded address space: 20 generated bundles of 1 000 partitions each
//! (`testkit::bundles`, the merge benchmark's bundles) merge under a `ulimit -v` that
//! holds the binary, one malloc arena (`run::run_limited_arenas`: the same address space
//! in every run) and ≈ 2.8 KiB per partition, with every partition and the cross-bundle
//! findings in the report.

use crate::common::run;
use std::path::Path;

use run::{assert_limit_binds, run_limited_arenas};

const BUNDLES: usize = 20;
const PARTITIONS: i32 = 1_000;

/// Address-space limit for the merge of `BUNDLES` × `PARTITIONS` with one arena (measured
/// need of a debug build: 80–84 MiB). A merge that holds each bundle's partitions in a
/// list of its own while the report's list grows needs 145–148 MiB and fails it; one that
/// keeps the bundles' directory entries beside the merged inventory until the report is
/// assembled needed 97–100 MiB (with reports of the size they had then).
const LIMIT_MIB: u64 = 96;

/// Seconds a run may take before it counts as a hang (a debug build on a loaded machine).
const SECS: u64 = 1200;

#[test]
fn twenty_thousand_partitions_merge_within_a_bounded_address_space() {
    let out = tempfile::tempdir().unwrap();
    let collect = |dir: &Path, file: std::fs::File| {
        let opts = klogscan::partition::scan::ScanOptions::default();
        klogscan::bundle::collect(&[dir.to_path_buf()], &opts, std::io::BufWriter::new(file))?;
        Ok(())
    };
    let w = klogscan::testkit::bundles::write_bundles(out.path(), BUNDLES, PARTITIONS, collect)
        .unwrap();
    let dir = w.dir.to_str().unwrap();
    let args = ["merge", dir, "--format", "json", "--fail-on", "never"];
    let r = run_limited_arenas(LIMIT_MIB, 1, &args, SECS);
    assert_eq!(
        r.status.code(),
        Some(0),
        "merge under {LIMIT_MIB} MiB: {}",
        r.err
    );
    let report: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    let partitions = report["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), BUNDLES * PARTITIONS as usize);
    // The hanging transaction of each bundle's first partition is in the merged report.
    let hanging = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "hanging_transaction")
        .count();
    assert_eq!(hanging, BUNDLES);
    // The limit binds: far below what the binary and the bundles need, the merge fails.
    assert_limit_binds(24, &args, SECS);
}
