//! Worker threads that do not fit (an address-space limit too small for their stacks):
//! the command runs on as many as fit (one at least), says so on stderr, and answers as
//! it does with all of them. Before, rayon's global pool failed to start and every later
//! parallel call panicked (exit 101, "The global thread pool has not been initialized");
//! with `RUST_BACKTRACE=1` the panic's backtrace ran out of memory and the process hung
//! on the backtrace lock; and the workers spawned before the one that failed could abort
//! the process themselves (glibc: "failed to register TLS destructor: out of memory").
//! Asserted through `RLIMIT_AS` on the child and a deadline (a hang fails the test),
//! never through timing. Linux only.
#![cfg(target_os = "linux")]

use crate::common::run::{klogscan, klogscan_env};

/// 300 workers of 2 MiB stacks each do not fit in this limit; the binary and one
/// thread's work on the test data do (a debug build needs ≈ 45 MiB here).
const LIMIT: u64 = 160 << 20;
const SECS: u64 = 300;

fn testdata(dir: &str) -> String {
    format!("{}/testdata/{dir}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn threads_that_cannot_start_leave_one_thread_and_the_same_answer() {
    let dir = testdata("broker-1");
    for args in [
        vec!["scan", dir.as_str(), "--format", "json"],
        vec!["verify", dir.as_str(), "--format", "json"],
        vec!["scan", dir.as_str(), "--format", "json", "--threads", "200"],
    ] {
        let free = klogscan(&args, None, SECS);
        let starved = klogscan_env(
            &args,
            &[("RAYON_NUM_THREADS", "300"), ("RUST_BACKTRACE", "1")],
            None,
            Some(LIMIT),
            SECS,
        );
        assert_eq!(starved.code(), free.code(), "{args:?}: {}", starved.err);
        assert_eq!(
            starved.out, free.out,
            "{args:?}: the same answer on one thread"
        );
        assert!(
            starved
                .err
                .contains("worker threads (the address-space limit")
                && starved.err.contains(": running on "),
            "{args:?}: stderr says why: {}",
            starved.err
        );
    }
}

#[test]
fn threads_that_start_run_without_a_note() {
    let dir = testdata("broker-1");
    let args = ["scan", dir.as_str(), "--format", "json", "--threads", "2"];
    let r = klogscan_env(
        &args,
        &[("RAYON_NUM_THREADS", "300")],
        None,
        Some(LIMIT * 8),
        SECS,
    );
    assert!(
        !r.err.contains("worker threads ("),
        "two threads fit: {}",
        r.err
    );
    assert!(r.out.contains("\"partitions\""), "{}", r.err);
}

/// `--threads 0` chooses, as ripgrep's `-j 0` does: as many workers as without the flag
/// (here `RAYON_NUM_THREADS=300`, which do not fit the limit, so stderr says how many it
/// asked for), where it used to run one thread without a word. `--threads 1` asks for one
/// (nothing to say: the near miss).
#[test]
fn threads_0_is_the_default_number_not_one() {
    let dir = testdata("broker-1");
    let run = |n: &str| {
        let args = ["scan", dir.as_str(), "--format", "json", "--threads", n];
        klogscan_env(
            &args,
            &[("RAYON_NUM_THREADS", "300")],
            None,
            Some(LIMIT),
            SECS,
        )
    };
    let (zero, one) = (run("0"), run("1"));
    assert_eq!(zero.code(), one.code(), "{}", zero.err);
    assert_eq!(zero.out, one.out);
    assert!(
        zero.err.contains("cannot start the 256 worker threads"),
        "{}",
        zero.err
    );
    assert!(!one.err.contains("worker threads"), "{}", one.err);
}
