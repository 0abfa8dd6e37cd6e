//! The replay over real broker-written partitions (read in place): its producer state must
//! equal what the brokers wrote into their `.snapshot` files, and genuine logs must not
//! raise producer-state errors.

use klogscan::partition::event::{BatchEvent, Classified, classify};
use klogscan::partition::state::{PartitionContext, ProducerState, Replay, ReplayOptions};
use klogscan::read::format::Entries;
use klogscan::{Finding, Kind, Severity};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One snapshot entry (ProducerSnapshot v1, 46 bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
struct SnapEntry {
    pid: i64,
    epoch: i16,
    last_seq: i32,
    last_offset: i64,
    offset_delta: i32,
    timestamp: i64,
    coordinator_epoch: i32,
    txn_first: i64,
}

fn be<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b[at..at + N].try_into().unwrap()
}

fn read_snapshot(p: &Path) -> Option<Vec<SnapEntry>> {
    let b = std::fs::read(p).ok()?;
    if b.len() < 10 || i16::from_be_bytes(be(&b, 0)) != 1 {
        return None;
    }
    let n = i32::from_be_bytes(be(&b, 6)) as usize;
    if b.len() != 10 + 46 * n {
        return None;
    }
    Some(
        (0..n)
            .map(|i| {
                let o = 10 + 46 * i;
                SnapEntry {
                    pid: i64::from_be_bytes(be(&b, o)),
                    epoch: i16::from_be_bytes(be(&b, o + 8)),
                    last_seq: i32::from_be_bytes(be(&b, o + 10)),
                    last_offset: i64::from_be_bytes(be(&b, o + 14)),
                    offset_delta: i32::from_be_bytes(be(&b, o + 22)),
                    timestamp: i64::from_be_bytes(be(&b, o + 26)),
                    coordinator_epoch: i32::from_be_bytes(be(&b, o + 34)),
                    txn_first: i64::from_be_bytes(be(&b, o + 38)),
                }
            })
            .collect(),
    )
}

fn partition_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = crate::common::files_with_suffix(root, ".log")
        .into_iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

fn context(dir: &Path, segment_names: Vec<String>) -> PartitionContext {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let (topic, partition) = match name.rsplit_once('-') {
        Some((t, p)) if p.parse::<i32>().is_ok() => (t.to_string(), p.parse().unwrap()),
        _ => (name.clone(), 0),
    };
    let internal = topic.ends_with("__consumer_offsets")
        || topic.ends_with("__transaction_state")
        || topic.ends_with("__cluster_metadata");
    PartitionContext {
        kraft_metadata: topic.ends_with("__cluster_metadata"),
        compacted: if internal { Some(true) } else { None },
        compact_policy: false,
        internal,
        topic,
        partition,
        segment_names,
        log_start_offset: None,
    }
}

struct Checked {
    entries: usize,
    mismatches: Vec<String>,
}

fn compare(
    dir: &Path,
    snap_offset: i64,
    snap: &[SnapEntry],
    state: &[ProducerState],
    c: &mut Checked,
) {
    for s in snap {
        let Some(p) = state.iter().find(|p| p.producer_id == s.pid) else {
            continue; // history before the first segment we have
        };
        c.entries += 1;
        let ours = (
            p.producer_epoch,
            p.last_sequence,
            p.last_offset,
            p.offset_delta,
            p.last_timestamp,
            p.coordinator_epoch,
            p.current_txn_first_offset.unwrap_or(-1),
        );
        let theirs = (
            s.epoch,
            s.last_seq,
            s.last_offset,
            s.offset_delta,
            s.timestamp,
            s.coordinator_epoch,
            s.txn_first,
        );
        if ours != theirs {
            c.mismatches.push(format!(
                "{} snapshot {snap_offset} pid {}: ours {ours:?} broker {theirs:?}",
                dir.display(),
                s.pid
            ));
        }
    }
}

fn replay_dir(dir: &Path, checked: &mut Checked) -> Vec<Finding> {
    let mut logs = crate::common::files_with_suffix(dir, ".log");
    logs.retain(|p| p.parent() == Some(dir));
    let mut snaps: BTreeMap<i64, Vec<SnapEntry>> = BTreeMap::new();
    for p in crate::common::files_with_suffix(dir, ".snapshot") {
        if p.parent() != Some(dir) {
            continue;
        }
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        if let (Ok(off), Some(e)) = (stem.parse::<i64>(), read_snapshot(&p)) {
            snaps.insert(off, e);
        }
    }
    let names = logs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let mut r = Replay::new(context(dir, names), ReplayOptions::default());
    let mut findings = Vec::new();
    for (seg, p) in logs.iter().enumerate() {
        let data = std::fs::read(p).unwrap();
        for entry in Entries::new(&data, 0) {
            let ev = match classify(entry) {
                Classified::V2(b) => BatchEvent::from_v2(&b, seg as u32, true),
                Classified::Legacy(m) => BatchEvent::from_legacy(&m, seg as u32, true),
                Classified::Invalid(_) => continue,
            };
            while let Some((&n, _)) = snaps.first_key_value() {
                if n > ev.base_offset {
                    break;
                }
                let s = snaps.remove(&n).unwrap();
                compare(dir, n, &s, &r.producers(), checked);
            }
            r.apply(&ev, &mut findings);
        }
    }
    let end = r.producers();
    for (n, s) in snaps {
        compare(dir, n, &s, &end, checked);
    }
    let ref_time = r.newest_timestamp().unwrap_or(0);
    r.finish(ref_time, &mut findings);
    findings
}

#[test]
fn replay_matches_broker_snapshots_and_raises_no_producer_errors() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let mut checked = Checked {
        entries: 0,
        mismatches: Vec::new(),
    };
    let mut all = Vec::new();
    let dirs: Vec<PathBuf> = partition_dirs(&root.join("broker"))
        .into_iter()
        .chain(partition_dirs(&root.join("rebuilt")))
        .collect();
    for d in &dirs {
        for f in replay_dir(d, &mut checked) {
            all.push((d.clone(), f));
        }
    }
    for m in &checked.mismatches {
        eprintln!("{m}");
    }
    assert!(
        checked.mismatches.is_empty(),
        "state differs from broker snapshots"
    );
    assert!(
        checked.entries >= 90,
        "only {} snapshot entries compared",
        checked.entries
    );
    let serious: Vec<String> = all
        .iter()
        .filter(|(_, f)| f.severity > Severity::Info)
        .map(|(d, f)| format!("{} {} {}", d.display(), f.kind, f.message))
        .collect();
    assert!(serious.is_empty(), "{serious:#?}");
    // The two rebuilt dumps that end inside a transaction (no marker) are open, not hanging.
    let mut open: Vec<String> = all
        .iter()
        .filter(|(_, f)| f.kind == Kind::OpenTransaction)
        .map(|(d, _)| d.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    open.sort();
    assert_eq!(
        open,
        vec!["dump03_transaction4-topic-0", "dump10_transaction-topic-0"]
    );
}
