//! Sparse and preallocated segments: a segment ending in a hole (the shape of a preallocated
//! segment after a crash, or of a sparse copy) is judged without reading the hole, with the
//! findings a byte-by-byte read gives. Bounded by a CPU-time limit (`RLIMIT_CPU`), never
//! by a clock: reading 10 GiB of hole costs tens of CPU seconds.
#![cfg(all(feature = "testkit", target_os = "linux"))]

use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `klogscan args…` under a CPU-time limit of `cpu_secs` (SIGXCPU past it).
fn run_cpu_limited(args: &[&std::ffi::OsStr], cpu_secs: u64) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_klogscan"));
    cmd.args(args).stdin(Stdio::null()).stderr(Stdio::null());
    // SAFETY: only setrlimit (async-signal-safe) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: cpu_secs,
                rlim_max: cpu_secs,
            };
            if libc::setrlimit(libc::RLIMIT_CPU, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap_or_else(|| {
        panic!(
            "klogscan {args:?} died: {:?} (over {cpu_secs} CPU seconds?)",
            out.status
        )
    });
    (code, String::from_utf8(out.stdout).unwrap())
}

/// A partition of one segment: two batches, then `tail` bytes of zeros — a hole when
/// `sparse`, written zeros otherwise. Returns the segment's path.
fn segment_with_tail(root: &Path, tail: u64, sparse: bool) -> PathBuf {
    let mut b = PartitionBuilder::new("pre", 0);
    b.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    b.append(Batch::new(Producer::idempotent(3, 0)).values(["c"]));
    let log = b.write(root).unwrap().segments[0].1.clone();
    let len = std::fs::metadata(&log).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    if sparse {
        f.set_len(len + tail).unwrap();
    } else {
        std::os::unix::fs::FileExt::write_all_at(&f, &vec![0u8; tail as usize], len).unwrap();
    }
    log
}

fn findings(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// One segment, two batches and a 10 GiB hole: `scan` and `verify` report the 10 GiB
/// preallocated tail and the truncation a broker's recovery makes, within 10 CPU seconds
/// (reading the hole took 37).
#[test]
fn a_ten_gib_hole_is_a_preallocated_tail_without_reading_it() {
    let t = tempfile::tempdir().unwrap();
    let log = segment_with_tail(t.path(), 10 << 30, true);
    let data_len = std::fs::metadata(&log).unwrap().len() - (10 << 30);
    let dir = log.parent().unwrap().as_os_str();
    for cmd in ["scan", "verify"] {
        for mmap in ["auto", "never"] {
            let (code, out) = run_cpu_limited(
                &[
                    cmd.as_ref(),
                    "--format".as_ref(),
                    "json".as_ref(),
                    "--mmap".as_ref(),
                    mmap.as_ref(),
                    dir,
                ],
                10,
            );
            let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
            let f = findings(&doc);
            let tail = f
                .iter()
                .find(|(k, _)| k == "preallocated_tail")
                .unwrap_or_else(|| panic!("{cmd} {mmap}: {f:?}"));
            assert!(
                tail.1.contains(&format!(
                    "{} zero bytes after the last batch at byte {data_len}",
                    10u64 << 30
                )),
                "{cmd} {mmap}: {}",
                tail.1
            );
            assert!(code <= 1, "{cmd} {mmap}: exit {code}");
        }
    }
}

/// The same partition with a small tail, once a hole and once written zeros, gives the same
/// findings (the hole is skipped; written zeros are read): also when a batch's declared
/// size runs into the hole, whose bytes are then read as a whole-file walk reads them.
#[test]
fn a_hole_and_written_zeros_give_the_same_findings() {
    for cmd in ["scan", "verify"] {
        let mut docs = Vec::new();
        for sparse in [true, false] {
            let t = tempfile::tempdir().unwrap();
            let log = segment_with_tail(t.path(), 8 << 20, sparse);
            let (code, out) = run_cpu_limited(
                &[
                    cmd.as_ref(),
                    "--format".as_ref(),
                    "json".as_ref(),
                    log.parent().unwrap().as_os_str(),
                ],
                30,
            );
            let root = t.path().display().to_string();
            let doc: serde_json::Value = serde_json::from_str(&out.replace(&root, "ROOT")).unwrap();
            let f = findings(&doc);
            assert!(f.iter().any(|(k, _)| k == "preallocated_tail"), "{f:?}");
            // A batch whose size field runs into the tail: the end is the same damage.
            let mut bytes = std::fs::read(&log).unwrap();
            let first = i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize + 12;
            bytes[first + 8..first + 12].copy_from_slice(&(1i32 << 22).to_be_bytes());
            std::os::unix::fs::FileExt::write_all_at(
                &std::fs::OpenOptions::new().write(true).open(&log).unwrap(),
                &bytes[first + 8..first + 12],
                (first + 8) as u64,
            )
            .unwrap();
            let (code2, out2) = run_cpu_limited(
                &[
                    cmd.as_ref(),
                    "--format".as_ref(),
                    "json".as_ref(),
                    log.parent().unwrap().as_os_str(),
                ],
                30,
            );
            let doc2: serde_json::Value =
                serde_json::from_str(&out2.replace(&root, "ROOT")).unwrap();
            docs.push((code, f, code2, findings(&doc2)));
        }
        assert_eq!(docs[0], docs[1], "{cmd}: hole vs written zeros");
    }
}
