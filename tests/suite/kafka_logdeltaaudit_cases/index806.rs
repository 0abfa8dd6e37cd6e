//! `LogSegmentTest.testIndexForMultipleBatchesInMemoryRecords` and
//! `testNonMonotonicTimestampForMultipleBatchesInMemoryRecords` (KAFKA-806, 4.0): the
//! offset and time indexes one append of several batches leaves.

use super::*;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, PartitionBuilder, PartitionFileOptions, Producer, Rec};
use serde_json::Value;

/// `LogSegmentTest`'s partition and `createSegment(0, 1, …)`: `index.interval.bytes` 1.
const TOPIC: &str = "test";
const T: i64 = DEFAULT_START_MS;

/// One batch of one record `key1`/`value1` at `ts`.
fn one(ts: i64) -> Batch {
    Batch::new(Producer::PLAIN)
        .record(Rec::kv("key1", "value1"))
        .at(ts)
}

/// Segment 0 holding one single-record batch per timestamp of `ts` (offsets 0, 1, …),
/// cleanly shut down, indexes as the testkit writes them (`LogSegment.recover`'s shape).
fn segment(ts: &[i64]) -> Written {
    let mut p = PartitionBuilder::new(TOPIC, 0)
        .broker_files(PartitionFileOptions::default().index_interval(1));
    for t in ts {
        p.append(one(*t));
    }
    Written::new(LogDirBuilder::new(1).cluster_id("c1").partition(p))
}

/// The batches' byte positions in segment 0.
fn positions(w: &Written) -> Vec<i32> {
    (w.m.partitions[0].batches.iter())
        .map(|b| b.position as i32)
        .collect()
}

/// The bytes of an offset index of segment 0: `(offset, position)` entries.
fn offset_index(entries: &[(i32, i32)]) -> Vec<u8> {
    let mut b = Vec::new();
    for (o, p) in entries {
        b.extend_from_slice(&o.to_be_bytes());
        b.extend_from_slice(&p.to_be_bytes());
    }
    b
}

/// The bytes of a time index of segment 0: `(timestamp, offset)` entries.
fn time_index(entries: &[(i64, i32)]) -> Vec<u8> {
    let mut b = Vec::new();
    for (t, o) in entries {
        b.extend_from_slice(&t.to_be_bytes());
        b.extend_from_slice(&o.to_be_bytes());
    }
    b
}

fn file(w: &Written, ext: &str) -> PathBuf {
    w.pdir().join(format!("{:020}.{ext}", 0))
}

/// The `check` kinds of a mismatch finding's evidence entries.
fn checks(f: &Finding) -> Vec<String> {
    (f.evidence["entries"].as_array().unwrap().iter())
        .map(|e| match &e["check"] {
            Value::Object(o) => o["kind"].as_str().unwrap().to_string(),
            other => other.to_string(),
        })
        .collect()
}

/// `testIndexForMultipleBatchesInMemoryRecords`: batches 0 (timestamp 0) and 1 (1) in one
/// append, batch 2 (2) in a second, `index.interval.bytes` 1. Since KAFKA-806
/// `LogSegment.append` indexes each batch of an append after more than 1 byte: offset
/// entries (1, batch 1's position) and (2, batch 2's), time entries (1, 1) and (2, 2) —
/// what `LogSegment.recover` would rebuild, so the testkit's files are those bytes. Before,
/// the first append got no entry and the second one (2, its position), (2, 2); and a
/// follower fetching batches 1 and 2 in one append after batch 0 indexed the append's
/// largest offset 2 at the append's first position, batch 1's. Each of the three is what a
/// broker wrote and reads right (an offset lookup starts at or before the batch holding
/// the offset): after a clean shutdown nothing is rebuilt and klogscan is quiet — the
/// follower's entry is no `index_mismatch`. Near miss: the entry (1, batch 2's position),
/// an offset indexed after the batch holding it (a lookup of 1 starts past it): one
/// `index_mismatch`, the batch there ending at 2.
#[test]
fn one_append_of_several_batches_indexes_each_batch() {
    let w = segment(&[T, T + 1, T + 2]);
    let pos = positions(&w);
    assert_eq!(
        std::fs::read(file(&w, "index")).unwrap(),
        offset_index(&[(1, pos[1]), (2, pos[2])]),
        "the 4.0 append indexes each batch, as recovery does"
    );
    assert_eq!(
        std::fs::read(file(&w, "timeindex")).unwrap(),
        time_index(&[(T + 1, 1), (T + 2, 2)])
    );
    let (_, v) = assert_quiet(&w);
    assert!(of_kind(v.findings(), Kind::IndexMismatch).is_empty());
    let p = &v.partitions[0].prediction;
    assert!(p.recovered_segments.is_empty(), "{p:#?}");
    // Before KAFKA-806: the leader's two appends, and a follower's one fetch of 1–2.
    for (idx, tidx) in [
        (vec![(2, pos[2])], vec![(T + 2, 2)]),
        (vec![(2, pos[1])], vec![(T + 2, 2)]),
    ] {
        std::fs::write(file(&w, "index"), offset_index(&idx)).unwrap();
        std::fs::write(file(&w, "timeindex"), time_index(&tidx)).unwrap();
        let (s, v) = assert_quiet(&w);
        assert!(v.findings().next().is_none(), "{}", all(&s, &v));
    }
    // Near miss: offset 1 indexed at batch 2.
    std::fs::write(file(&w, "index"), offset_index(&[(1, pos[2]), (2, pos[2])])).unwrap();
    let v = w.verify();
    let bad = of_kind(v.findings(), Kind::IndexMismatch);
    assert_eq!(bad.len(), 1, "{}", all(&w.scan(), &v));
    assert_eq!(
        (bad[0].offset, bad[0].evidence["mismatches"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(checks(bad[0]), ["mismatch"]);
    assert_eq!(bad[0].evidence["entries"][0]["log_offset"], 2);
}

/// `testNonMonotonicTimestampForMultipleBatchesInMemoryRecords`: batches at offsets 0, 1, 2
/// with timestamps 1, 0, 2, one append, `index.interval.bytes` 1. The time index takes the
/// segment's max timestamp so far and the last offset of the batch holding it
/// (`LogSegment.append` → `TimeIndex.maybeAppend(maxTimestampSoFar,
/// shallowOffsetOfMaxTimestampSoFar)`): (1, 0) at batch 1 — offset 0, below the offset
/// entry (1, …) written beside it — then (2, 2); offset entries (1, …) and (2, …). Quiet.
/// Near miss: the time entry (1, 1), the max timestamp set against the offset being
/// indexed: batch 1's max timestamp is 0, one `timeindex_mismatch`.
#[test]
fn non_monotonic_timestamps_index_the_batch_holding_the_max() {
    let w = segment(&[T + 1, T, T + 2]);
    let pos = positions(&w);
    assert_eq!(
        std::fs::read(file(&w, "index")).unwrap(),
        offset_index(&[(1, pos[1]), (2, pos[2])])
    );
    let kafka = time_index(&[(T + 1, 0), (T + 2, 2)]);
    assert_eq!(std::fs::read(file(&w, "timeindex")).unwrap(), kafka);
    let (s, v) = assert_quiet(&w);
    assert!(v.findings().next().is_none(), "{}", all(&s, &v));
    // Near miss: the offset of the offset-index entry instead of the max's.
    std::fs::write(file(&w, "timeindex"), time_index(&[(T + 1, 1), (T + 2, 2)])).unwrap();
    let v = w.verify();
    let bad = of_kind(v.findings(), Kind::TimeindexMismatch);
    assert_eq!(bad.len(), 1, "{}", all(&w.scan(), &v));
    assert_eq!(
        (bad[0].offset, bad[0].evidence["mismatches"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(checks(bad[0]), ["timestamp_mismatch"]);
    assert!(
        bad[0].message.contains(&format!("has max timestamp {T}")),
        "{}",
        bad[0].message
    );
}
