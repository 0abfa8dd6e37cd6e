//! Hostile `__remote_log_metadata` histories that frame and checksum correctly: segments
//! whose offsets, leader epochs, sizes and custom metadata no broker writes, state updates
//! in any order and of any value, partition deletions, lost objects, mutated values among
//! them, and a local log starting anywhere. The tiering replay, the remote read
//! (`--remote-storage`) and the checks over them must end in findings or silence, never a
//! panic. The history is `tiered_history`'s (`orders-0`: four segments, a transaction in
//! the second).
#![cfg(feature = "testkit")]

use crate::common::xorshift as rng;
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::remote_log::{
    RemoteSegment, TieredLog, encode_segment_metadata, encode_segment_update,
};

fn edge_i64(next: &mut impl FnMut() -> u64) -> i64 {
    [-1, 0, 5, 9, 10, 19, 20, 39, 1 << 40, i64::MAX, i64::MIN][(next() % 11) as usize]
}

/// `seg` with one or more fields at an edge.
fn edge_segment(mut seg: RemoteSegment, next: &mut impl FnMut() -> u64) -> RemoteSegment {
    for _ in 0..(1 + next() % 3) {
        match next() % 7 {
            0 => seg.start_offset = edge_i64(next),
            1 => seg.end_offset = edge_i64(next),
            2 => {
                seg.leader_epochs = (0..next() % 4)
                    .map(|_| {
                        (
                            [-1, 0, 1, 7, i32::MAX][(next() % 5) as usize],
                            edge_i64(next),
                        )
                    })
                    .collect()
            }
            3 => seg.size = [-1, 0, 1, i32::MAX][(next() % 4) as usize],
            4 => seg.custom_metadata = Some((0..next() % 24).map(|_| next() as u8).collect()),
            5 => seg.txn_index_empty = Some(next().is_multiple_of(2)),
            _ => seg.max_timestamp_ms = edge_i64(next),
        }
    }
    seg
}

/// A value of `v` with a few bytes changed past its frame.
fn mutated(mut v: Vec<u8>, next: &mut impl FnMut() -> u64) -> Vec<u8> {
    if v.len() > 3 {
        for _ in 0..(1 + next() % 3) {
            let i = 3 + (next() as usize) % (v.len() - 3);
            v[i] = [0, 0xff, 0x7f, next() as u8][(next() % 4) as usize];
        }
        if next().is_multiple_of(4) {
            let cut = 3 + (next() as usize) % (v.len() - 3);
            v.truncate(cut);
        }
    }
    v
}

/// One hostile history of `orders-0`.
fn hostile(next: &mut impl FnMut() -> u64) -> TieredLog {
    let mut t = TieredLog::new(crate::tiered_history::history(next().is_multiple_of(2)));
    let mut remote = Vec::new();
    for i in 0..3 {
        match next() % 4 {
            0 => remote.push(t.copy(i)),
            1 => {
                let seg = edge_segment(t.remote_segment(i), next);
                remote.push(t.copy_started_as(seg, i));
            }
            2 => {
                let seg = t.remote_segment(i);
                t.raw_event(mutated(encode_segment_metadata(&seg, 1, 1, 0), next));
                t.raw_event(mutated(encode_segment_update(&seg, 1, 2, None, 1), next));
            }
            _ => {}
        }
    }
    for _ in 0..next() % 4 {
        let Some(&r) = remote.get((next() as usize) % remote.len().max(1)) else {
            break;
        };
        match next() % 5 {
            0 => {
                t.update(r, next() as i8);
            }
            1 => {
                t.delete_started(r);
            }
            2 => {
                t.delete(r);
            }
            3 => {
                t.lose_objects(r);
            }
            _ => {
                t.partition_delete((next() % 5) as i8);
            }
        }
    }
    t.local_from((next() % 4) as usize);
    if next().is_multiple_of(5) {
        t.remote_log_snapshot(next().is_multiple_of(2));
    }
    t
}

/// The scans over `m`: without and with the remote storage, and `--deep`.
fn run_all(
    m: &klogscan::testkit::remote_log::TieredManifest,
) -> Vec<klogscan::results::ScanReport> {
    let root = m.log_dir.parent().unwrap().to_path_buf();
    let mut out = Vec::new();
    for (remote, deep) in [(false, false), (true, false), (true, true)] {
        let mut o = ScanOptions::default();
        o.remote_storage = remote.then(|| m.remote_root.clone());
        o.deep = deep;
        o.now_ms = Some(klogscan::testkit::scenario::DEFAULT_START_MS + 86_400_000);
        let r = klogscan::pipeline::scan(std::slice::from_ref(&root), &o);
        assert!(r.partitions.iter().any(|p| p.topic == "orders"));
        out.push(r);
    }
    out
}

#[test]
fn hostile_remote_log_metadata_histories_never_panic() {
    let mut next = rng(0x7469_6572_6564_0001);
    // A near miss first: the plain tiered history reads without a tiering finding.
    let d = tempfile::tempdir().unwrap();
    let m = crate::tiered_history::tiered(true).write(d.path()).unwrap();
    for r in run_all(&m) {
        let tiering: Vec<_> = (r.findings.iter())
            .filter(|f| f.kind.id().starts_with("remote_"))
            .collect();
        assert!(tiering.is_empty(), "{tiering:#?}");
    }
    let mut findings = 0;
    for round in 0..80 {
        let t = hostile(&mut next);
        let d = tempfile::tempdir().unwrap();
        let Ok(m) = t.write(d.path()) else {
            continue;
        };
        let r = std::panic::catch_unwind(|| run_all(&m));
        let Ok(reports) = r else {
            panic!("round {round} panicked over {:?}", d.keep());
        };
        findings += reports[1].findings.len();
    }
    // The histories are hostile enough to be reported, not read past in silence.
    assert!(
        findings >= 80,
        "{findings} findings over the hostile histories"
    );
}
