//! Memory bounds of the shapes of issue #11, asserted through an address-space limit
//! (`ulimit -v`) on a child `klogscan` — never through timing.
//!
//! 300 000 producer ids in one partition cost ≈ 1.3 KB each in the replay before #11
//! (≈ 390 MB); at ≈ 130 bytes each the scan fits in the limit below with room to spare.
//! A second run under a limit far too small must fail: the limit is really applied.
//! Linux only (`ulimit -v` through `sh`, glibc's `MALLOC_ARENA_MAX`).
#![cfg(target_os = "linux")]

use crate::common::run;

use klogscan::testkit::BatchSpec;
use klogscan::testkit::encode::RecordSpec;
use run::{assert_limit_binds, run_limited_ok};
use std::io::Write;
use std::path::Path;

const PRODUCERS: i64 = 300_000;

/// One partition where each of `n` producer ids writes one idempotent one-record batch.
fn write_many_producers(dir: &Path, n: i64) {
    let part = dir.join("producers-0");
    std::fs::create_dir_all(&part).unwrap();
    let file = std::fs::File::create(part.join("00000000000000000000.log")).unwrap();
    let mut w = std::io::BufWriter::new(file);
    for i in 0..n {
        let spec = BatchSpec {
            base_offset: i,
            partition_leader_epoch: 0,
            base_timestamp: 1_700_000_000_000 + i,
            producer_id: 1_000 + i,
            producer_epoch: 0,
            base_sequence: 0,
            records: vec![RecordSpec {
                value: Some(b"{\"event\":\"view\"}".to_vec()),
                ..RecordSpec::default()
            }],
            ..BatchSpec::default()
        };
        w.write_all(&spec.encode()).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn many_producer_ids_scan_within_a_bounded_address_space() {
    let dir = tempfile::tempdir().unwrap();
    write_many_producers(dir.path(), PRODUCERS);
    let path = dir.path().to_str().unwrap();
    // Clean data: exit 0 (no finding at error level) within the limit.
    run_limited_ok(
        LIMIT_MIB,
        &["scan", path, "--threads", "2", "--format", "json"],
        SECS,
    );
    // The limit binds: far below what the binary and the mapped segment need, it fails.
    assert_limit_binds(
        24,
        &["scan", path, "--threads", "2", "--format", "json"],
        SECS,
    );
}

/// Address-space limit for a scan of [`PRODUCERS`] ids (threads, arenas, the mapped
/// segment and the binary included).
const LIMIT_MIB: u64 = 256;

/// Seconds a run may take before it counts as a hang (a debug build on a loaded machine).
const SECS: u64 = 1200;
