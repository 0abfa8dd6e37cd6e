//! Memory bounds of the shapes of issue #11, asserted through an address-space limit
//! (`ulimit -v`) on a child `klogscan` — never through timing.
//!
//! 300 000 producer ids in one partition cost ≈ 1.3 KB each in the replay before #11
//! (≈ 390 MB); at ≈ 130 bytes each the scan fits in the limit below with room to spare.
//! A second run under a limit far too small must fail: the limit is really applied.
//! Linux only (`ulimit -v` through `sh`, glibc's `MALLOC_ARENA_MAX`).
#![cfg(target_os = "linux")]

use assert_cmd::cargo::cargo_bin;
use klogscan::testkit::BatchSpec;
use klogscan::testkit::encode::RecordSpec;
use std::io::Write;
use std::path::Path;
use std::process::Command;

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
                attributes: 0,
                timestamp_delta: 0,
                offset_delta: 0,
                key: None,
                value: Some(b"{\"event\":\"view\"}".to_vec()),
                headers: Vec::new(),
            }],
            ..BatchSpec::default()
        };
        w.write_all(&spec.encode()).unwrap();
    }
    w.flush().unwrap();
}

/// Run `klogscan ARGS` with its address space limited to `limit_mib` MiB; its exit code
/// (`None` when killed by a signal).
fn run_limited(limit_mib: u64, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {} && exec \"$0\" \"$@\"",
            limit_mib * 1024
        ))
        .arg(cargo_bin("klogscan"))
        .args(args)
        // One malloc arena per thread would reserve 64 MiB of address space each.
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn many_producer_ids_scan_within_a_bounded_address_space() {
    let dir = tempfile::tempdir().unwrap();
    write_many_producers(dir.path(), PRODUCERS);
    let path = dir.path().to_str().unwrap();
    // Clean data: exit 0 (no finding at error level) within the limit.
    let (code, err) = run_limited(
        LIMIT_MIB,
        &["scan", path, "--threads", "2", "--format", "json"],
    );
    assert_eq!(code, Some(0), "scan under {LIMIT_MIB} MiB failed: {err}");
    // The limit binds: far below what the binary and the mapped segment need, it fails.
    let (code, _) = run_limited(24, &["scan", path, "--threads", "2", "--format", "json"]);
    assert_ne!(code, Some(0), "a 24 MiB address space should not be enough");
}

/// Address-space limit for a scan of [`PRODUCERS`] ids (threads, arenas, the mapped
/// segment and the binary included).
const LIMIT_MIB: u64 = 256;
