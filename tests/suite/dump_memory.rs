//! `dump` of batches whose printed text is far larger than the batches: two batches of
//! 12 MiB of control bytes, each byte printed as a 6-byte JSON escape (≈ 75 MB of text a
//! batch). The batch's JSON line was built whole before it was written (≈ 100 MB peak RSS;
//! the debug build needed 224–256 MiB of address space), and a parallel piece kept its
//! whole text in memory until the batch ended. Now the line is handed on as it grows and a
//! piece's buffers refuse to grow past the piece text cap (the piece is then printed by the
//! sequential walk, which streams). Asserted through an address-space limit on a child
//! `klogscan` (`ulimit -v`), never through timing. Linux only.
#![cfg(all(target_os = "linux", feature = "testkit"))]

use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use std::process::{Command, Stdio};

/// Address-space limit of the dump (the binary, two threads, two arenas, the 12 MiB batch
/// being printed); the debug build needs less than 96 MiB here.
const LIMIT_MIB: u64 = 160;

/// Run `klogscan args…` under `ulimit -v limit_mib` MiB, its output discarded (hundreds of
/// MB of text); the exit code (`None`: killed by a signal).
fn dump_limited(limit_mib: u64, args: &[&str]) -> Option<i32> {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {} && exec \"$0\" \"$@\" > /dev/null",
            limit_mib * 1024
        ))
        .arg(env!("CARGO_BIN_EXE_klogscan"))
        .args(args)
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run sh")
        .code()
}

#[test]
fn a_parallel_dump_of_batches_with_huge_text_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0).segment_bytes(1 << 30);
    let value = vec![1u8; 256 << 10];
    for _ in 0..2 {
        p.append(Batch::new(Producer::idempotent(1, 0)).values((0..48).map(|_| value.clone())));
    }
    let m = klogscan::testkit::LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let log = m.partitions[0].segments[0].1.clone();
    let log = log.to_str().unwrap();
    let args = [
        "dump",
        log,
        "--print-data-log",
        "--format",
        "json",
        "--threads",
        "2",
    ];
    assert_eq!(dump_limited(LIMIT_MIB, &args), Some(0));
    // The limit binds: far below what the binary and one batch need, the dump fails.
    assert_ne!(dump_limited(24, &args), Some(0));
}
