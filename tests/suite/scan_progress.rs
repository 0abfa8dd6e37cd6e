//! The progress callback sees the whole scan: one start with the totals, the bytes of every
//! segment, one "done" per partition.

use klogscan::partition::scan::{Progress, ProgressUpdate, ScanOptions};
use klogscan::pipeline;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[test]
fn progress_reports_every_byte_and_partition() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts =
        ScanOptions::default().with_progress(Progress::new(move |u| sink.lock().unwrap().push(u)));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
    let report = pipeline::scan(&[dir], &opts);
    let seen = seen.lock().unwrap();
    let ProgressUpdate::Start { partitions, bytes } = seen[0] else {
        panic!("first update is not Start: {:?}", seen[0]);
    };
    assert_eq!(partitions, report.partitions.len() as u64);
    assert_eq!(bytes, report.summary.bytes);
    let read: u64 = seen
        .iter()
        .filter_map(|u| match u {
            ProgressUpdate::Bytes(n) => Some(*n),
            _ => None,
        })
        .sum();
    assert_eq!(read, report.summary.bytes);
    let done = seen
        .iter()
        .filter(|u| **u == ProgressUpdate::PartitionDone)
        .count();
    assert_eq!(done, report.partitions.len());
}
