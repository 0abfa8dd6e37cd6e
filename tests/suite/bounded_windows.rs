//! Issue #11, bounded event windows: the events of one large segment flow from the walk to
//! the replay in bounded windows (pieces replayed as they complete), so a segment of
//! millions of small batches is scanned in bounded memory. Asserted through an
//! address-space limit (`ulimit -v`) on a child `klogscan` — never through timing.
//!
//! Before, every event of a segment (≈ 104 bytes per batch) was buffered before its replay
//! started: the 2 000 000 batches below made ≈ 208 MB of events, more than the whole limit.
//! A second run under a limit far too small must fail: the limit is really applied.
//! Linux only (`ulimit -v` through `sh`, glibc's `MALLOC_ARENA_MAX`).
#![cfg(target_os = "linux")]

use crate::common::run;
use crate::common::small_batch;

use run::{assert_limit_binds, run_limited_ok};
use std::io::Write;
use std::path::Path;

const BATCHES: i64 = 2_000_000;

/// Address-space limit for the scan (threads, arenas, the binary and two windows of
/// pieces included; the events of the whole segment alone would exceed it).
const LIMIT_MIB: u64 = 192;

/// Seconds a run may take before it counts as a hang (a debug build on a loaded machine).
const SECS: u64 = 1200;

/// One partition with one live segment of `n` one-record batches of a plain producer (the
/// base offset is outside the CRC, so one encoded batch is copied with new offsets).
fn write_small_batches(dir: &Path, n: i64) -> u64 {
    let part = dir.join("small-0");
    std::fs::create_dir_all(&part).unwrap();
    let one = small_batch::one_record_batch();
    let file = std::fs::File::create(part.join("00000000000000000000.log")).unwrap();
    let mut w = std::io::BufWriter::new(file);
    let mut batch = one.clone();
    for i in 0..n {
        batch[..8].copy_from_slice(&i.to_be_bytes());
        w.write_all(&batch).unwrap();
    }
    w.flush().unwrap();
    one.len() as u64 * n as u64
}

#[test]
fn one_segment_of_millions_of_small_batches_scans_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = write_small_batches(dir.path(), BATCHES);
    let path = dir.path().to_str().unwrap();
    for threads in ["1", "2"] {
        let r = run_limited_ok(
            LIMIT_MIB,
            &["scan", path, "--threads", threads, "--format", "json"],
            SECS,
        );
        // Every batch was walked and replayed.
        let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
        let p = &doc["partitions"][0];
        assert_eq!(p["batches"], BATCHES, "{threads} thread(s)");
        assert_eq!(p["bytes"], bytes, "{threads} thread(s)");
    }
    // The limit binds: far below what the binary needs, it fails.
    assert_limit_binds(
        24,
        &["scan", path, "--threads", "2", "--format", "json"],
        SECS,
    );
}
