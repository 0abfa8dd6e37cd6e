//! The whole history of a tiered partition (`--remote-storage`): its remote segments
//! replayed through the producer-state replay before its local ones, so a transaction
//! begun in a remote segment is followed into the local log. Without the remote storage
//! the scan sees the local log alone, as before.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::remote_log::{TieredLog, TieredManifest};
use klogscan::testkit::{Batch, PartitionBuilder, Producer};

fn txn() -> Producer {
    Producer::transactional(7, 0)
}

/// Four segments: [0,9] plain; [10,14] the transaction's first batch (offset 10), then
/// plain [15,19]; [20,29] plain; [30,39] plain, then the COMMIT marker at 40 when
/// `commit`. One minute between batches.
pub(crate) fn history(commit: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .leader_epoch(0)
        .time_step(60_000);
    p.append(Batch::new(Producer::PLAIN).records(10));
    p.roll();
    p.append(Batch::new(txn()).records(5));
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(10));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(10));
    if commit {
        p.commit(txn(), 0);
    }
    p
}

/// Segments 0 and 1 in remote storage, the local log from segment 2 (offset 20).
pub(crate) fn tiered(commit: bool) -> TieredLog {
    let mut t = TieredLog::new(history(commit));
    t.copy(0);
    t.copy(1);
    t.local_from(2);
    t
}

// Field by field: `ScanOptions` is to become `#[non_exhaustive]` (no struct literal then).
#[allow(clippy::field_reassign_with_default)]
fn scan(m: &TieredManifest, remote: bool) -> ScanReport {
    let mut o = ScanOptions::default();
    o.remote_storage = remote.then(|| m.remote_root.clone());
    // A day after the history: an open transaction is long past the timeout.
    o.now_ms = Some(klogscan::testkit::scenario::DEFAULT_START_MS + 86_400_000);
    let root = m.log_dir.parent().unwrap().to_path_buf();
    klogscan::pipeline::scan(&[root], &o)
}

fn of(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

fn orders(r: &ScanReport) -> &klogscan::results::PartitionReport {
    r.partitions.iter().find(|p| p.topic == "orders").unwrap()
}

#[test]
fn transaction_begun_remotely_and_committed_locally_is_not_hanging() {
    let d = tempfile::tempdir().unwrap();
    let m = tiered(true).write(d.path()).unwrap();
    assert_eq!((m.log_start_offset, m.local_log_start_offset), (0, 20));
    let r = scan(&m, true);
    assert!(
        of(&r, Kind::HangingTransaction).is_empty(),
        "{:#?}",
        r.findings
    );
    let p = orders(&r);
    assert_eq!(p.transactions.committed, 1);
    assert_eq!(p.transactions.open, 0);
    let replayed = p.tiered.as_ref().and_then(|t| t.replayed.clone()).unwrap();
    assert_eq!(replayed.segments, 2);
    assert_eq!(
        (replayed.first_offset, replayed.last_offset),
        (Some(0), Some(19))
    );
    assert_eq!(replayed.batches, 3);
    assert!(replayed.unread.is_empty());
    // The log start is the remote one; the LSO the log end (nothing open).
    assert_eq!(p.log_start_offset, Some(0));
    assert_eq!(p.last_stable_offset, p.log_end_offset);
}

#[test]
fn transaction_begun_remotely_never_finished_is_hanging_from_its_remote_offset() {
    let d = tempfile::tempdir().unwrap();
    let m = tiered(false).write(d.path()).unwrap();
    let r = scan(&m, true);
    let h = of(&r, Kind::HangingTransaction);
    assert_eq!(h.len(), 1, "{:#?}", r.findings);
    assert_eq!(h[0].offset, Some(10));
    assert_eq!(h[0].producer_id, Some(7));
    // Named by the remote object that holds its first batch.
    let seg = h[0].segment.clone().unwrap_or_default();
    assert!(
        seg.starts_with("00000000000000000010-") && seg.ends_with(".log"),
        "{seg}"
    );
    let p = orders(&r);
    assert_eq!(p.transactions.open, 1);
    // The LSO stops at the transaction's first offset, in the remote range.
    assert_eq!(p.last_stable_offset, Some(10));
}

/// Without `--remote-storage` only the local log is replayed, from the broker's producer
/// state at its first segment (the snapshot at 20, `ProducerStateManager.loadFromSnapshot`):
/// that state holds the transaction begun remotely at 10, so the COMMIT at 40 closes it,
/// and without the COMMIT it hangs from 10 (read from that snapshot). With the snapshot
/// gone the transaction's first batch is never seen: no open transaction.
#[test]
fn without_remote_storage_only_the_local_log_is_replayed() {
    for (commit, keep_snapshot) in [(true, true), (false, true), (true, false), (false, false)] {
        let d = tempfile::tempdir().unwrap();
        let m = tiered(commit).write(d.path()).unwrap();
        let pdir = m.log_dir.join("orders-0");
        let snap = pdir.join(format!("{:020}.snapshot", 20));
        assert!(snap.exists());
        if !keep_snapshot {
            std::fs::remove_file(snap).unwrap();
        }
        let r = scan(&m, false);
        let h = of(&r, Kind::HangingTransaction);
        let p = orders(&r);
        if !commit && keep_snapshot {
            assert_eq!(h.len(), 1, "{:#?}", r.findings);
            assert_eq!(h[0].offset, Some(10));
            assert_eq!(
                h[0].evidence.get("from_snapshot").and_then(|v| v.as_str()),
                Some("00000000000000000020.snapshot")
            );
            assert_eq!(p.transactions.open, 1);
        } else {
            assert!(h.is_empty(), "{:#?}", r.findings);
            assert_eq!(p.transactions.open, 0);
        }
        assert!(p.tiered.as_ref().is_none_or(|t| t.replayed.is_none()));
        assert_eq!(p.log_start_offset, Some(20));
    }
}

/// A remote segment whose offsets the local log also holds: the local log wins from its
/// first offset (a segment copied and still held locally is not replayed twice).
#[test]
fn local_log_wins_where_remote_segments_overlap_it() {
    let d = tempfile::tempdir().unwrap();
    let mut t = TieredLog::new(history(false));
    t.copy(0);
    t.copy(1);
    t.copy(2);
    t.local_from(1);
    let m = t.write(d.path()).unwrap();
    let r = scan(&m, true);
    let p = orders(&r);
    let replayed = p.tiered.as_ref().and_then(|t| t.replayed.clone()).unwrap();
    assert_eq!(replayed.segments, 1);
    assert_eq!(
        (replayed.first_offset, replayed.last_offset),
        (Some(0), Some(9))
    );
    // The transaction is in the local log: one open transaction, not two.
    let h = of(&r, Kind::HangingTransaction);
    assert_eq!(h.len(), 1, "{:#?}", r.findings);
    assert_eq!(h[0].offset, Some(10));
    assert_eq!(p.transactions.open, 1);
}

/// A finished segment whose objects are gone: reported missing by the storage check, and
/// the replay goes on past it (what it held is unknown to the producer state).
#[test]
fn missing_remote_segment_is_skipped_and_said() {
    let d = tempfile::tempdir().unwrap();
    let mut t = tiered(true);
    t.lose_objects(0);
    t.log_start(0);
    let m = t.write(d.path()).unwrap();
    let r = scan(&m, true);
    assert_eq!(of(&r, Kind::RemoteSegmentMissing).len(), 1);
    let p = orders(&r);
    let replayed = p.tiered.as_ref().and_then(|t| t.replayed.clone()).unwrap();
    assert_eq!(replayed.segments, 1);
    assert_eq!(replayed.unread.len(), 1);
    assert!(of(&r, Kind::HangingTransaction).is_empty());
    assert_eq!(p.transactions.committed, 1);
}

/// `remote_log_snapshot` (Kafka 3.6–3.7) in place of the `__remote_log_metadata`
/// partitions: the same gap is found from either.
#[test]
fn remote_log_snapshot_is_the_metadata_when_the_topic_is_absent() {
    for keep_topic in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let mut t = TieredLog::new(history(true));
        t.copy(0);
        t.copy(2);
        t.local_from(3);
        t.remote_log_snapshot(keep_topic);
        let m = t.write(d.path()).unwrap();
        assert_eq!(m.metadata_dir.exists(), keep_topic);
        let r = scan(&m, false);
        let g = of(&r, Kind::RemoteSegmentGap);
        assert_eq!(g.len(), 1, "{keep_topic}: {:#?}", r.findings);
        assert_eq!(g[0].offset, Some(10));
        let p = orders(&r);
        let ranges = p.tiered.as_ref().unwrap();
        assert_eq!(ranges.remote, vec![(0, 9), (20, 29)]);
    }
}

/// The snapshot also drives the whole-history replay.
#[test]
fn remote_log_snapshot_drives_the_remote_replay() {
    let d = tempfile::tempdir().unwrap();
    let mut t = tiered(false);
    t.remote_log_snapshot(false);
    let m = t.write(d.path()).unwrap();
    let r = scan(&m, true);
    let h = of(&r, Kind::HangingTransaction);
    assert_eq!(h.len(), 1, "{:#?}", r.findings);
    assert_eq!(h[0].offset, Some(10));
}

/// A snapshot holds each segment's state, not the events after it: a copy it shows
/// started is not known to have been overtaken, so `remote_copy_unfinished` needs the
/// topic. With the topic present the topic is replayed (and the snapshot ignored).
#[test]
fn remote_log_snapshot_alone_never_calls_a_copy_unfinished() {
    for keep_topic in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let mut t = TieredLog::new(history(true));
        t.copy(0);
        t.copy_started(1);
        t.copy(2);
        t.local_from(3);
        t.remote_log_snapshot(keep_topic);
        let m = t.write(d.path()).unwrap();
        let r = scan(&m, false);
        let u = of(&r, Kind::RemoteCopyUnfinished);
        assert_eq!(
            u.len(),
            usize::from(keep_topic),
            "{keep_topic}: {:#?}",
            r.findings
        );
        // Either way the offsets of the unfinished copy are a gap.
        assert_eq!(of(&r, Kind::RemoteSegmentGap)[0].offset, Some(10));
    }
}

// ----- the Aiven plugin's object layout -----

use klogscan::testkit::aiven::{AivenLayout, encode_custom_metadata, write_aiven};

/// `t` written, its remote segments also as the plugin's objects under `<dir>/bucket`
/// (the `LocalTieredStorage` copy removed): the manifest and the bucket root.
fn aiven(t: TieredLog, d: &std::path::Path, layout: &AivenLayout) -> (TieredManifest, Vec<String>) {
    let mut m = t.write(d).unwrap();
    let bucket = d.join("bucket");
    let keys = write_aiven(&m, &bucket, layout).unwrap();
    std::fs::remove_dir_all(&m.remote_root).unwrap();
    m.remote_root = bucket;
    (m, keys)
}

fn tiered_kinds(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    r.findings
        .iter()
        .filter(|f| f.kind.id().starts_with("remote_"))
        .map(|f| (f.kind, f.offset))
        .collect()
}

/// Compressed (variable chunk index) and plain (fixed) objects: read through their
/// manifests, no finding, and the whole history replayed from them.
#[test]
fn aiven_objects_are_read_through_their_manifests() {
    for compression in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let layout = AivenLayout {
            compression,
            ..AivenLayout::default()
        };
        let (m, keys) = aiven(tiered(false), d.path(), &layout);
        assert_eq!(keys.len(), 2);
        let r = scan(&m, true);
        assert_eq!(tiered_kinds(&r), vec![], "{compression}: {:#?}", r.findings);
        let h = of(&r, Kind::HangingTransaction);
        assert_eq!(h.len(), 1, "{:#?}", r.findings);
        assert_eq!(h[0].offset, Some(10));
        let p = orders(&r);
        let replayed = p.tiered.as_ref().and_then(|t| t.replayed.clone()).unwrap();
        assert_eq!((replayed.segments, replayed.batches), (2, 3));
    }
}

/// A damaged chunk: the object does not rebuild (zstd fails), a mismatch.
#[test]
fn aiven_damaged_chunk_is_a_mismatch() {
    let d = tempfile::tempdir().unwrap();
    let (m, keys) = aiven(tiered(true), d.path(), &AivenLayout::default());
    let log = m.remote_root.join(format!("{}.log", keys[1]));
    let mut bytes = std::fs::read(&log).unwrap();
    for b in bytes.iter_mut().take(8) {
        *b ^= 0xff;
    }
    std::fs::write(&log, bytes).unwrap();
    let r = scan(&m, true);
    assert_eq!(
        tiered_kinds(&r),
        vec![(Kind::RemoteSegmentMismatch, Some(10))]
    );
    let f = of(&r, Kind::RemoteSegmentMismatch)[0];
    assert_eq!(f.evidence["differences"], serde_json::json!(["unreadable"]));
}

/// A segment without its manifest is missing (which object is said).
#[test]
fn aiven_missing_manifest_is_missing() {
    let d = tempfile::tempdir().unwrap();
    let (m, keys) = aiven(tiered(true), d.path(), &AivenLayout::default());
    std::fs::remove_file(m.remote_root.join(format!("{}.rsm-manifest", keys[0]))).unwrap();
    let r = scan(&m, true);
    assert_eq!(
        tiered_kinds(&r),
        vec![(Kind::RemoteSegmentMissing, Some(0))]
    );
    let f = of(&r, Kind::RemoteSegmentMissing)[0];
    assert_eq!(
        f.evidence["missing_files"],
        serde_json::json!([".rsm-manifest"])
    );
}

/// Encrypted objects: reported unreadable (info), their batches not replayed; the
/// metadata checks still run (a size the manifest contradicts is said).
#[test]
fn aiven_encrypted_objects_are_unreadable() {
    let d = tempfile::tempdir().unwrap();
    let layout = AivenLayout {
        encryption: true,
        ..AivenLayout::default()
    };
    let (m, _) = aiven(tiered(false), d.path(), &layout);
    let r = scan(&m, true);
    assert_eq!(
        tiered_kinds(&r),
        vec![
            (Kind::RemoteSegmentUnreadable, Some(0)),
            (Kind::RemoteSegmentUnreadable, Some(10))
        ]
    );
    let u = of(&r, Kind::RemoteSegmentUnreadable)[0];
    assert_eq!(u.severity, klogscan::finding::Severity::Info);
    assert_eq!(u.evidence["differences"], serde_json::json!([]));
    // The transaction's first batch is in an unread segment: not followed.
    assert!(of(&r, Kind::HangingTransaction).is_empty());
    let p = orders(&r);
    let replayed = p.tiered.as_ref().and_then(|t| t.replayed.clone()).unwrap();
    assert_eq!((replayed.segments, replayed.unread.len()), (0, 2));
}

/// Keys from the segment's custom metadata: objects under the prefix it names are found;
/// without the custom metadata the same objects are not (missing).
#[test]
fn aiven_key_prefix_from_custom_metadata() {
    for with_custom in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let mut t = TieredLog::new(history(true));
        let custom = encode_custom_metadata(Some(1234), Some("tenant-a/"), None);
        if with_custom {
            t.copy_with_custom_metadata(0, &custom);
        } else {
            t.copy(0);
        }
        t.local_from(1);
        let layout = AivenLayout {
            prefix: "tenant-a/".into(),
            ..AivenLayout::default()
        };
        let (m, keys) = aiven(t, d.path(), &layout);
        assert!(keys[0].starts_with("tenant-a/orders-"));
        let r = scan(&m, true);
        let want = if with_custom {
            vec![]
        } else {
            vec![(Kind::RemoteSegmentMissing, Some(0))]
        };
        assert_eq!(tiered_kinds(&r), want, "{:#?}", r.findings);
    }
}
