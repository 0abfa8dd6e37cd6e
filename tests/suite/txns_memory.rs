//! Memory bound of the cluster transaction join (issue #11, "300k open transactions'
//! markers"), asserted through an address-space limit (`ulimit -v`) on a child `klogscan`
//! — never through timing.
//!
//! 200 000 producer ids each open a transaction, then all of them commit (the `open-txns`
//! shape of `examples/synth`, scaled down). Before the join was made compact it held every
//! cluster transaction (≈ 400 bytes with its part) and one ≈ 400-byte statistics entry per
//! producer id at once: that scan aborted under 320 MiB of address space (checked by hand
//! with the `db55a8a` release binary; it needed ≈ 1 KB per transaction above the replay).
//! It now keeps ≈ 90 bytes per transaction and passes under 193 MiB (debug build with the
//! `testkit` feature, 2026-12-07), so the limit below leaves room on both sides. The run has
//! one malloc arena: with two, whether the second one (64 MiB of address space reserved
//! whether used or not) is created depends on how the threads interleave, and the same
//! binary needed 232 to 264 MiB from run to run — the test failed now and then on a loaded
//! machine. A second run under a limit far too small must fail: the limit is really
//! applied. Linux only (`ulimit -v` through `sh`, glibc's `MALLOC_ARENA_MAX`).
#![cfg(target_os = "linux")]

use crate::common::run;

use klogscan::testkit::BatchSpec;
use klogscan::testkit::encode::{RecordSpec, end_txn_marker};
use run::{assert_limit_binds, run_limited_arenas};
use std::io::Write;
use std::path::Path;

const TRANSACTIONS: i64 = 200_000;

/// Address-space limit for the scan of [`TRANSACTIONS`] (threads, the one arena, the binary
/// and the segment's buffers included).
const LIMIT_MIB: u64 = 224;

/// Seconds a run may take before it counts as a hang (a debug build on a loaded machine).
const SECS: u64 = 1200;

/// One partition: `n` producer ids each write one transactional batch, then each one's
/// COMMIT marker, in the same order.
fn write_open_txns(dir: &Path, n: i64) {
    let part = dir.join("open-0");
    std::fs::create_dir_all(&part).unwrap();
    let file = std::fs::File::create(part.join("00000000000000000000.log")).unwrap();
    let mut w = std::io::BufWriter::new(file);
    let t0 = 1_700_000_000_000i64;
    for i in 0..n {
        let spec = BatchSpec {
            base_offset: i,
            partition_leader_epoch: 0,
            base_timestamp: t0 + i,
            producer_id: 1_000 + i,
            producer_epoch: 0,
            base_sequence: 0,
            transactional: true,
            records: vec![RecordSpec {
                value: Some(b"{\"event\":\"view\"}".to_vec()),
                ..RecordSpec::default()
            }],
            ..BatchSpec::default()
        };
        w.write_all(&spec.encode()).unwrap();
    }
    for i in 0..n {
        let m = end_txn_marker(n + i, 1_000 + i, 0, true, 3, t0 + n + i, 0);
        w.write_all(&m.encode()).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn many_open_transactions_join_within_a_bounded_address_space() {
    let dir = tempfile::tempdir().unwrap();
    write_open_txns(dir.path(), TRANSACTIONS);
    let path = dir.path().to_str().unwrap();
    let args = ["scan", path, "--threads", "2", "--format", "json"];
    let r = run_limited_arenas(LIMIT_MIB, 1, &args, SECS);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{args:?} under {LIMIT_MIB} MiB of address space, one arena: {}",
        r.err
    );
    // Every transaction was joined and counted (one per producer id, all committed).
    let report: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    let t = &report["transactions"];
    assert_eq!(t["cluster_transactions"], TRANSACTIONS);
    assert_eq!(t["committed"], TRANSACTIONS);
    let ids = t["by_transactional_id"].as_array().unwrap();
    assert_eq!(ids.len() as i64, TRANSACTIONS);
    assert_eq!(ids[7]["producer_ids"][0], 1_007);
    assert_eq!(ids[7]["committed"], 1);
    // The limit binds: far below what the binary and the segment need, it fails.
    assert_limit_binds(
        24,
        &["scan", path, "--threads", "2", "--format", "json"],
        SECS,
    );
}
