//! Hostile partition files that parse: producer snapshots with a valid CRC, transaction
//! indexes of version 0, offset and time indexes of whole entries, leader-epoch
//! checkpoints in the right text shape, and offset checkpoints — all with values no broker
//! writes (offsets before, inside and past the log, epochs and sequences at their limits,
//! producer ids of the log and of nobody, entries out of order) beside a partition of
//! idempotent and transactional producers over three segments. The checks across files
//! (`verify`'s cross-checks and recovery prediction, the scan's snapshot seeding) and
//! `dump` meet them: findings or silence, never a panic.
#![cfg(feature = "testkit")]

use crate::common::xorshift as rng;
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::files::{
    AbortedTxn, LogDirBuilder, SnapshotEntry, encode_snapshot, encode_txn_index,
};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
use std::path::{Path, PathBuf};

/// `orders-0`: idempotent and transactional producers (7 and 9) over three segments, one
/// aborted transaction, one left open: offsets 0–39.
fn orders() -> PartitionBuilder {
    let (idem, txn) = (Producer::idempotent(7, 0), Producer::transactional(9, 3));
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(2);
    p.append(Batch::new(idem).records(5));
    p.append(Batch::new(txn).records(5));
    p.abort(txn, 1);
    p.roll();
    p.append(Batch::new(idem).records(9));
    p.set_leader_epoch(4);
    p.append(Batch::new(Producer::PLAIN).records(10));
    p.roll();
    p.append(Batch::new(txn).records(9));
    p
}

/// An offset at an edge of `orders-0`'s log (0–39, segments at 0, 11 and 30).
fn edge_offset(next: &mut impl FnMut() -> u64) -> i64 {
    [
        -1,
        0,
        4,
        5,
        10,
        11,
        20,
        29,
        30,
        39,
        40,
        41,
        1 << 33,
        i64::MAX,
    ][(next() % 14) as usize]
}

fn edge_i32(next: &mut impl FnMut() -> u64) -> i32 {
    [-1, 0, 1, 4, 8, i32::MAX - 1, i32::MAX, i32::MIN][(next() % 8) as usize]
}

fn edge_i16(next: &mut impl FnMut() -> u64) -> i16 {
    [-1, 0, 1, 3, 4, i16::MAX - 1, i16::MAX][(next() % 7) as usize]
}

fn producer(next: &mut impl FnMut() -> u64) -> i64 {
    [7, 9, 7, 9, -1, 0, 12_345, i64::MAX][(next() % 8) as usize]
}

fn snapshot(next: &mut impl FnMut() -> u64) -> Vec<u8> {
    let entries: Vec<SnapshotEntry> = (0..next() % 4)
        .map(|_| SnapshotEntry {
            producer_id: producer(next),
            epoch: edge_i16(next),
            last_sequence: edge_i32(next),
            last_offset: edge_offset(next),
            offset_delta: edge_i32(next),
            timestamp: [-1, 0, 1_700_000_000_000, i64::MAX][(next() % 4) as usize],
            coordinator_epoch: edge_i32(next),
            current_txn_first_offset: edge_offset(next),
        })
        .collect();
    encode_snapshot(&entries)
}

fn txn_index(next: &mut impl FnMut() -> u64) -> Vec<u8> {
    let entries: Vec<AbortedTxn> = (0..next() % 4)
        .map(|_| AbortedTxn {
            producer_id: producer(next),
            first_offset: edge_offset(next),
            last_offset: edge_offset(next),
            last_stable_offset: edge_offset(next),
        })
        .collect();
    encode_txn_index(&entries)
}

/// Whole entries of an offset index (8 bytes) or a time index (12 bytes).
fn index(time: bool, next: &mut impl FnMut() -> u64) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..next() % 5 {
        let rel = [0u32, 1, 5, 11, 30, u32::MAX][(next() % 6) as usize];
        if time {
            let ts = [-1i64, 0, 1_700_000_000_000, i64::MAX][(next() % 4) as usize];
            out.extend_from_slice(&ts.to_be_bytes());
            out.extend_from_slice(&rel.to_be_bytes());
        } else {
            let pos = [0u32, 61, 500, 1 << 20, u32::MAX][(next() % 5) as usize];
            out.extend_from_slice(&rel.to_be_bytes());
            out.extend_from_slice(&pos.to_be_bytes());
        }
    }
    out
}

fn epoch_checkpoint(next: &mut impl FnMut() -> u64) -> String {
    let entries: Vec<String> = (0..next() % 4)
        .map(|_| format!("{} {}", edge_i32(next), edge_offset(next)))
        .collect();
    format!("0\n{}\n{}\n", entries.len(), entries.join("\n"))
}

/// `orders-0` written under `root`, then one to four of its files replaced or added.
fn hostile(root: &Path, next: &mut impl FnMut() -> u64) -> PathBuf {
    let ld = root.join("broker-1");
    let edge = |next: &mut dyn FnMut() -> u64| [0, 11, 30, 39, 40, 1 << 33][(next() % 6) as usize];
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(orders())
        .high_watermark("orders", 0, edge(next))
        .recovery_point("orders", 0, edge(next))
        .write(&ld)
        .unwrap();
    let dir = ld.join("orders-0");
    let bases = [0i64, 11, 30];
    for _ in 0..1 + next() % 4 {
        let base = bases[(next() % 3) as usize];
        match next() % 6 {
            0 | 1 => {
                let at = [0, 5, 11, 20, 30, 39, 40, 41][(next() % 8) as usize];
                std::fs::write(dir.join(format!("{at:020}.snapshot")), snapshot(next)).unwrap();
            }
            2 => std::fs::write(dir.join(format!("{base:020}.txnindex")), txn_index(next)).unwrap(),
            3 => std::fs::write(dir.join(format!("{base:020}.index")), index(false, next)).unwrap(),
            4 => std::fs::write(dir.join(format!("{base:020}.timeindex")), index(true, next))
                .unwrap(),
            _ => {
                std::fs::write(dir.join("leader-epoch-checkpoint"), epoch_checkpoint(next)).unwrap()
            }
        }
    }
    ld
}

/// `scan`, `verify` and `dump` of every file of the partition; the findings of the scan
/// and of `verify`.
fn run_all(ld: &Path) -> usize {
    let dirs = [ld.to_path_buf()];
    let mut o = ScanOptions::default();
    o.now_ms = Some(klogscan::testkit::scenario::DEFAULT_START_MS + 86_400_000);
    let report = klogscan::pipeline::scan(&dirs, &o);
    let verified = klogscan::request::verify(
        &klogscan::request::Request::new(dirs.clone()).with_options(o),
        None,
    );
    let verified = verified.expect("verify runs");
    let files: Vec<PathBuf> = std::fs::read_dir(ld.join("orders-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let opts = klogscan::dump::DumpOptions {
        deep_iteration: true,
        ..Default::default()
    };
    klogscan::dump::dump_paths(&files, &opts, &mut out, &mut err).unwrap();
    report.findings.len()
        + (verified.report.partitions.iter())
            .map(|p| p.findings.len())
            .sum::<usize>()
}

#[test]
fn hostile_partition_files_that_parse_never_panic() {
    // A near miss first: the partition as written is read without a finding but the
    // open transaction's.
    let d = tempfile::tempdir().unwrap();
    let ld = d.path().join("broker-1");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(orders())
        .write(&ld)
        .unwrap();
    let r = klogscan::pipeline::scan(std::slice::from_ref(&ld), &ScanOptions::default());
    let kinds: Vec<_> = r.findings.iter().map(|f| f.kind.id()).collect();
    assert!(
        kinds
            .iter()
            .all(|k| *k == "hanging_transaction" || *k == "open_transaction"),
        "{kinds:?}"
    );
    let mut next = rng(0x6669_6c65_7300_0001);
    let mut findings = 0;
    for round in 0..60 {
        let d = tempfile::tempdir().unwrap();
        let ld = hostile(d.path(), &mut next);
        let r = std::panic::catch_unwind(|| run_all(&ld));
        let Ok(n) = r else {
            panic!("round {round} panicked over {:?}", d.keep());
        };
        findings += n;
    }
    assert!(findings >= 60, "{findings} findings over the hostile files");
}
