//! Hostile coordinator logs on the path where the cluster stage reads a
//! `__transaction_state` partition again, streaming (the walk kept none of its records:
//! `ScanOptions::keep_coordinator_bytes(0)`), and in the transaction join that reads it:
//! flipped, truncated and zero-filled bytes, absurd declared lengths and counts, a
//! coordinator log cut into one segment per batch, segments that are not regular files,
//! segments that change between the walk and the re-read, and coordinator values with
//! absurd fields. No panic (debug builds check overflow), no hang, and the re-read gives
//! the same reports as the records the walk kept.
#![cfg(feature = "testkit")]

use crate::coordinator_stream::{faulty, reports};
use klogscan::discover::layout;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use std::path::{Path, PathBuf};

/// A deterministic xorshift stream (every run mutates the same way).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn opts() -> ScanOptions {
    ScanOptions::default().with_keep_cluster_txns(true)
}

/// The reports with the records kept by the walk and read again must be equal.
fn assert_same_read_again(dir: &Path, what: &str) {
    let kept = reports(dir, &opts().with_keep_coordinator_bytes(u64::MAX));
    let again = reports(dir, &opts().with_keep_coordinator_bytes(0));
    assert!(
        kept == again,
        "{what}: the re-read changed the reports\nkept:  {}\nagain: {}",
        kept.0,
        again.0
    );
}

/// The faulty cluster written under a fresh temp dir: (temp dir, the coordinator
/// partition's directory, its one segment's path, the segment's bytes).
fn seeded() -> (tempfile::TempDir, PathBuf, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let data = faulty(None).write(dir.path(), 1).unwrap();
    let part = data.join("__transaction_state-4");
    let logs: Vec<PathBuf> = std::fs::read_dir(&part)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let bytes = std::fs::read(&logs[0]).unwrap();
    (dir, part, logs[0].clone(), bytes)
}

/// The positions of the v2 batches framed in `seg` (each `baseOffset`, `batchLength`).
fn batch_starts(seg: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 12 <= seg.len() {
        out.push(at);
        let len = i32::from_be_bytes(seg[at + 8..at + 12].try_into().unwrap());
        at += 12 + len.max(0) as usize;
    }
    out
}

/// One mutation of a segment image, by number: flips, a cut, a zero-filled range, or an
/// absurd `batchLength` / `recordsCount` / `partitionLeaderEpoch` in one batch.
fn mutate(seed: &[u8], starts: &[usize], rng: &mut Rng, i: usize) -> Vec<u8> {
    let mut d = seed.to_vec();
    let batch = starts[rng.below(starts.len())];
    let put = |d: &mut Vec<u8>, at: usize, b: &[u8]| {
        if at + b.len() <= d.len() {
            d[at..at + b.len()].copy_from_slice(b);
        }
    };
    match i % 7 {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(d.len());
                d[at] = rng.next() as u8;
            }
        }
        1 => d.truncate(rng.below(d.len() + 1)),
        2 => {
            let at = rng.below(d.len());
            let end = (at + 1 + rng.below(200)).min(d.len());
            d[at..end].fill(0);
        }
        3 => put(&mut d, batch + 8, &i32::MAX.to_be_bytes()),
        4 => {
            let n = [i32::MAX, -1, i32::MIN, 1 << 24][rng.below(4)];
            put(&mut d, batch + 57, &n.to_be_bytes());
        }
        5 => {
            let e = [i32::MAX, -1, i32::MIN][rng.below(3)];
            put(&mut d, batch + 12, &e.to_be_bytes());
        }
        _ => {
            // From the end of one batch on, zeros (a preallocated tail).
            let at = starts[rng.below(starts.len())];
            d[at..].fill(0);
        }
    }
    d
}

/// Mutated copies of a coordinator log give the same reports whether the walk kept its
/// records or the cluster stage read them again, and neither path panics.
#[test]
fn mutated_coordinator_logs_read_again_give_the_same_reports() {
    let (dir, _part, seg, bytes) = seeded();
    let starts = batch_starts(&bytes);
    assert!(starts.len() > 20, "{}", starts.len());
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for i in 0..280 {
        let d = mutate(&bytes, &starts, &mut rng, i);
        std::fs::write(&seg, &d).unwrap();
        assert_same_read_again(dir.path(), &format!("mutation {i}"));
    }
}

/// The coordinator log cut into one segment per batch (each named by its base offset):
/// many tiny segments read again give the same reports.
#[test]
fn a_coordinator_log_of_one_segment_per_batch_reads_again_the_same() {
    let (dir, part, seg, bytes) = seeded();
    let starts = batch_starts(&bytes);
    std::fs::remove_file(&seg).unwrap();
    for (i, &at) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(bytes.len());
        let base = i64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
        std::fs::write(part.join(format!("{base:020}.log")), &bytes[at..end]).unwrap();
    }
    assert_same_read_again(dir.path(), "one segment per batch");
    // And each of them damaged in turn (its batch cut in half).
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (i, &at) in starts.iter().enumerate().step_by(3) {
        let end = starts.get(i + 1).copied().unwrap_or(bytes.len());
        let base = i64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
        let path = part.join(format!("{base:020}.log"));
        let cut = at + rng.below(end - at);
        std::fs::write(&path, &bytes[at..cut]).unwrap();
        assert_same_read_again(dir.path(), &format!("segment {base} cut"));
        std::fs::write(&path, &bytes[at..end]).unwrap();
    }
}

/// Segments that are not regular files: a directory named like a segment, a symlink
/// loop, a symlink to a directory, a dangling symlink: each is reported or skipped the
/// same way on both paths, none panics or hangs.
#[cfg(unix)]
#[test]
fn segments_that_are_not_files_read_again_the_same() {
    use std::os::unix::fs::symlink;
    let (dir, part, _seg, _bytes) = seeded();
    let name = |n: u64| part.join(format!("{n:020}.log"));
    std::fs::create_dir(name(5_000)).unwrap();
    assert_same_read_again(dir.path(), "a directory named like a segment");
    symlink(name(6_001), name(6_000)).unwrap();
    symlink(name(6_000), name(6_001)).unwrap();
    assert_same_read_again(dir.path(), "a symlink loop");
    symlink(&part, name(7_000)).unwrap();
    assert_same_read_again(dir.path(), "a symlink to the partition directory");
    symlink(part.join("nowhere"), name(8_000)).unwrap();
    assert_same_read_again(dir.path(), "a dangling symlink");
}

/// The scan's walk, then the coordinator's segment changed, then the cluster stage (which
/// reads it again): the scan's JSON, and the scan's JSON before the change with the
/// records kept by the walk.
fn changed_between_walk_and_reread(change: impl FnOnce(&Path, &[u8])) -> (String, String) {
    let (dir, _part, seg, bytes) = seeded();
    let (kept, _) = reports(dir.path(), &opts().with_keep_coordinator_bytes(u64::MAX));
    let inv = layout::discover(&[dir.path().to_path_buf()]);
    let opts = opts().with_keep_coordinator_bytes(0);
    let mut report = pipeline::scan_partitions(&inv, &opts);
    change(&seg, &bytes);
    pipeline::run_cluster_checks(&mut report, &inv, &opts);
    let mut out = Vec::new();
    klogscan::report::json::write_scan(&report, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), kept)
}

/// A coordinator segment cut, grown or removed after the walk (which kept none of its
/// records) is named as not read by the cluster stage rather than replayed silently from
/// other bytes than the scan saw; the same bytes written again change nothing.
#[test]
fn a_coordinator_segment_changed_after_the_walk_is_named() {
    let changed = "00000000000000000000.log: changed since the scan read it";
    let half =
        changed_between_walk_and_reread(|seg, b| std::fs::write(seg, &b[..b.len() / 2]).unwrap());
    let grown = changed_between_walk_and_reread(|seg, b| {
        let mut d = b.to_vec();
        d.extend_from_slice(b);
        std::fs::write(seg, &d).unwrap()
    });
    let gone = changed_between_walk_and_reread(|seg, _| std::fs::remove_file(seg).unwrap());
    for (what, (scan, _)) in [("cut", &half), ("grown", &grown), ("removed", &gone)] {
        assert!(scan.contains(changed), "{what}: not named: {scan}");
    }
    // Rewritten with the same bytes: nothing said, the report read again as kept.
    let (same, kept) = changed_between_walk_and_reread(|seg, b| std::fs::write(seg, b).unwrap());
    assert!(same == kept, "{same}\n{kept}");
}
