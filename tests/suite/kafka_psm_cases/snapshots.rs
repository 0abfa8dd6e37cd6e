//! `ProducerStateManagerTest`'s snapshot cases as files a broker loads: `verify` (through
//! `request::verify`) compares every `.snapshot` with the state replayed from the log below
//! its offset and predicts which one `LogLoader` loads (`removeStraySnapshots`, then
//! `ProducerStateManager.truncateAndReload`, which deletes a snapshot whose
//! `readSnapshot` throws `CorruptSnapshotException` and falls back to the next older one).
//! Each partition is written in a log dir that shut down cleanly: no segment is
//! recovered, so the load reads the snapshots as they are (a recovery's rebuild would delete
//! those above the recovered segment and write its own; Kafka's tests call the
//! `ProducerStateManager` directly).

use super::{deleted_snapshots, one_at};
use klogscan::finding::Kind;
use klogscan::read::format::snapshot::{ProducerSnapshot, SnapshotEntry as Parsed};
use klogscan::testkit::SnapshotEntry;
use klogscan::testkit::files::encode_snapshot;
use klogscan::testkit::{Batch, Manifest, PartitionBuilder, PartitionFileOptions, Producer};
use klogscan::verify::PartitionVerification;
use tempfile::TempDir;

fn snap(offset: i64) -> String {
    format!("{offset:020}.snapshot")
}

fn write(p: &PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    // The log dir shut down cleanly (Kafka's `.kafka_cleanshutdown` marker, empty before 3.7).
    std::fs::write(dir.path().join(".kafka_cleanshutdown"), b"").unwrap();
    (dir, m)
}

/// Verify the partition's log dir as the CLI does.
fn verify(m: &Manifest) -> PartitionVerification {
    super::verify_at(m.dir.parent().unwrap())
}

/// The snapshot findings: `(kind, file)`.
fn snapshot_findings(v: &PartitionVerification) -> Vec<(Kind, String)> {
    v.findings
        .iter()
        .filter(|f| matches!(f.kind, Kind::SnapshotCorrupt | Kind::SnapshotMismatch))
        .map(|f| (f.kind, f.segment.clone().unwrap_or_default()))
        .collect()
}

fn loaded(v: &PartitionVerification) -> Option<i64> {
    v.prediction.producer_state.snapshot_offset
}

fn parse_entries(bytes: &[u8]) -> Vec<Parsed> {
    ProducerSnapshot::parse(bytes).unwrap().entries().collect()
}

/// Producer 1 writes sequence 0 at offset 0 and 1 at offset 1, a segment each: snapshots
/// at 1 (the roll) and 2 (the log end), as `testLoadFromCorruptSnapshot` takes them.
fn two_snapshots() -> PartitionBuilder {
    let p0 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(p0, 0));
    p.roll();
    p.append(one_at(p0, 1));
    p
}

/// `ProducerStateManagerTest.testLoadFromEmptySnapshotFile`,
/// `testLoadFromTruncatedSnapshotFile` and `testLoadFromCorruptSnapshotFile`: the newest
/// snapshot (offset 2) emptied, cut in half, or with 37 zero bytes written over its start
/// is corrupt; the broker deletes it and loads the one at offset 1, whose producer 1 has its
/// last data at offset 0 — which is what the log says below offset 1 (no mismatch).
#[test]
fn load_from_empty_truncated_or_corrupt_snapshot_file() {
    let (_d0, m0) = write(&two_snapshots());
    let v = verify(&m0);
    assert!(snapshot_findings(&v).is_empty(), "{:#?}", v.findings);
    assert_eq!(loaded(&v), Some(2));
    let older = std::fs::read(m0.dir.join(snap(1))).unwrap();
    let e = parse_entries(&older);
    assert_eq!((e.len(), e[0].producer_id, e[0].last_offset), (1, 1, 0));
    let newest = std::fs::read(m0.dir.join(snap(2))).unwrap();
    let mut zeroed = newest.clone();
    zeroed[..37].fill(0);
    for (case, bytes) in [
        ("empty", Vec::new()),
        ("truncated", newest[..newest.len() / 2].to_vec()),
        ("corrupt", zeroed),
    ] {
        let (_d, m) = write(&two_snapshots());
        std::fs::write(m.dir.join(snap(2)), &bytes).unwrap();
        let v = verify(&m);
        assert_eq!(
            snapshot_findings(&v),
            vec![(Kind::SnapshotCorrupt, snap(2))],
            "{case}: {:#?}",
            v.findings
        );
        assert_eq!(
            deleted_snapshots(&v),
            vec![(snap(2), "corrupt_snapshot".to_string())],
            "{case}"
        );
        assert_eq!(loaded(&v), Some(1), "{case}");
        assert_eq!(v.prediction.producer_state.replay_from, Some(1), "{case}");
    }
}

/// The snapshot at the log end, rewritten with `entries`.
fn with_end_snapshot(p: &PartitionBuilder, entries: &[SnapshotEntry]) -> (TempDir, Manifest) {
    let (d, m) = write(p);
    std::fs::write(m.dir.join(snap(m.log_end_offset)), encode_snapshot(entries)).unwrap();
    (d, m)
}

/// The single entry of the snapshot at the log end.
fn end_entry(m: &Manifest) -> SnapshotEntry {
    let bytes = std::fs::read(m.dir.join(snap(m.log_end_offset))).unwrap();
    let e = parse_entries(&bytes);
    assert_eq!(e.len(), 1);
    crate::common::cases::written_entry(&e[0])
}

/// The problems `verify` names in the snapshot at the log end.
fn problems(v: &PartitionVerification) -> Vec<String> {
    v.findings
        .iter()
        .filter(|f| f.kind == Kind::SnapshotMismatch)
        .flat_map(|f| {
            f.evidence["differences"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|d| d["problem"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The snapshot at the log end of `p` (what a broker writes when it closes the log) agrees
/// with the log and is the one loaded; the same snapshot changed by `damage` is a
/// `snapshot_mismatch` naming `problem`. Returns the snapshot's entry.
fn end_snapshot_case(
    p: &PartitionBuilder,
    damage: impl Fn(SnapshotEntry) -> SnapshotEntry,
    problem: &str,
) -> SnapshotEntry {
    let (_d, m) = write(p);
    let e = end_entry(&m);
    let v = verify(&m);
    assert!(snapshot_findings(&v).is_empty(), "{:#?}", v.findings);
    assert_eq!(loaded(&v), Some(m.log_end_offset));
    let (_d, m) = with_end_snapshot(p, &[damage(e)]);
    assert_eq!(problems(&verify(&m)), vec![problem]);
    e
}

/// `ProducerStateManagerTest.testRecoverFromSnapshotUnfinishedTransaction`: transactional
/// sequences 0 and 1 at offsets 0 and 1, snapshot at 2. The snapshot keeps only the last
/// batch (first and last sequence 1, offset 1) and the open transaction from 0; loading it
/// agrees with the log. A snapshot that lost the open transaction is a mismatch.
#[test]
fn recover_from_snapshot_unfinished_transaction() {
    let t0 = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(t0, 0));
    p.append(one_at(t0, 1));
    let lost = |e| SnapshotEntry {
        current_txn_first_offset: -1,
        ..e
    };
    let e = end_snapshot_case(&p, lost, "open_transaction_missing");
    assert_eq!(
        (
            e.last_sequence,
            e.last_sequence - e.offset_delta,
            e.last_offset,
            e.current_txn_first_offset
        ),
        (1, 1, 1, 0)
    );
}

/// `ProducerStateManagerTest.testRecoverFromSnapshotFinishedTransaction`: the same two
/// batches, then an ABORT at 2; the snapshot at 3 keeps the last batch (sequence 1, offset
/// 1) and no transaction. One still holding the transaction open is a mismatch.
#[test]
fn recover_from_snapshot_finished_transaction() {
    let t0 = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(t0, 0));
    p.append(one_at(t0, 1));
    p.abort(t0, 0);
    let kept = |e| SnapshotEntry {
        current_txn_first_offset: 0,
        ..e
    };
    let e = end_snapshot_case(&p, kept, "keeps_closed_transaction");
    assert_eq!(
        (
            e.last_sequence,
            e.last_sequence - e.offset_delta,
            e.last_offset,
            e.current_txn_first_offset
        ),
        (1, 1, 1, -1)
    );
}

/// `ProducerStateManagerTest.testRecoverFromSnapshotEmptyTransaction`: a lone ABORT at
/// offset 0; the snapshot at 1 holds the producer with the marker's timestamp as its last
/// timestamp, no batch and no transaction. A different timestamp is a mismatch.
#[test]
fn recover_from_snapshot_empty_transaction() {
    let t0 = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
    let marker_time = p.now();
    p.abort(t0, 0);
    let later = |e: SnapshotEntry| SnapshotEntry {
        timestamp: e.timestamp + 1,
        ..e
    };
    let e = end_snapshot_case(&p, later, "fields_differ");
    assert_eq!(
        (e.last_offset, e.current_txn_first_offset, e.timestamp),
        (-1, -1, marker_time)
    );
}

/// Segments based at 0 and `second` (plain data, no producers), the log end at `end`, and
/// valid empty snapshots at `snapshots` (Kafka's tests create the files empty; an empty
/// file would also be corrupt, which is another case).
fn stray_case(second: i64, end: i64, snapshots: &[i64]) -> (TempDir, Manifest) {
    let files = PartitionFileOptions {
        snapshots: false,
        ..PartitionFileOptions::default()
    };
    let mut p = PartitionBuilder::new("psm", 0).broker_files(files);
    p.append(Batch::new(Producer::PLAIN).records(second as usize));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records((end - second) as usize));
    let (d, m) = write(&p);
    assert_eq!(m.log_end_offset, end);
    for &o in snapshots {
        std::fs::write(m.dir.join(snap(o)), encode_snapshot(&[])).unwrap();
    }
    (d, m)
}

/// `ProducerStateManagerTest.testRemoveStraySnapshotsKeepCleanShutdownSnapshot`: snapshots
/// at 2, 5 and 42 with segments based at 0 and 5 (log end 42): 2 matches no segment and is
/// removed; 42, above every base, is the snapshot a clean shutdown wrote and is kept (and
/// loaded).
#[test]
fn remove_stray_snapshots_keep_clean_shutdown_snapshot() {
    let (_d, m) = stray_case(5, 42, &[2, 5, 42]);
    let v = verify(&m);
    assert_eq!(
        deleted_snapshots(&v),
        vec![(snap(2), "stray_snapshot".to_string())]
    );
    assert_eq!(loaded(&v), Some(42));
}

/// `ProducerStateManagerTest.testRemoveAllStraySnapshots`: snapshots at 2, 5 and 42 with
/// the newest segment based at 42: 2 and 5 are strays, 42 (a segment base) stays.
#[test]
fn remove_all_stray_snapshots() {
    let (_d, m) = stray_case(42, 44, &[2, 5, 42]);
    let v = verify(&m);
    assert_eq!(
        deleted_snapshots(&v),
        vec![
            (snap(2), "stray_snapshot".to_string()),
            (snap(5), "stray_snapshot".to_string())
        ]
    );
    assert_eq!(loaded(&v), Some(42));
}

/// `ProducerStateManagerTest.testReadWriteSnapshot`: producer 1 (epoch 2, coordinator
/// epoch 3, no timestamp, transaction open from 100, last batch: sequence 1, offset 2,
/// offset delta 3) and producer 11 (epoch 12, coordinator epoch 13, timestamp 123456, no
/// transaction, no batch) read back as written; one flipped byte fails the CRC.
#[test]
fn read_write_snapshot() {
    let entries = [
        SnapshotEntry {
            producer_id: 1,
            epoch: 2,
            last_sequence: 1,
            last_offset: 2,
            offset_delta: 3,
            timestamp: -1,
            coordinator_epoch: 3,
            current_txn_first_offset: 100,
        },
        SnapshotEntry {
            producer_id: 11,
            epoch: 12,
            last_sequence: -1,
            last_offset: -1,
            offset_delta: 0,
            timestamp: 123_456,
            coordinator_epoch: 13,
            current_txn_first_offset: -1,
        },
    ];
    let bytes = encode_snapshot(&entries);
    let e = parse_entries(&bytes);
    assert_eq!(e.len(), 2);
    assert_eq!(
        (
            e[0].producer_id,
            e[0].producer_epoch,
            e[0].coordinator_epoch,
            e[0].timestamp
        ),
        (1, 2, 3, -1)
    );
    assert_eq!(e[0].open_txn_first_offset(), Some(100));
    assert!(e[0].has_batch());
    assert_eq!(
        (e[0].last_sequence, e[0].last_offset, e[0].offset_delta),
        (1, 2, 3)
    );
    assert_eq!(
        (
            e[1].producer_id,
            e[1].producer_epoch,
            e[1].coordinator_epoch
        ),
        (11, 12, 13)
    );
    assert_eq!(e[1].timestamp, 123_456);
    assert_eq!(e[1].open_txn_first_offset(), None);
    assert!(!e[1].has_batch());
    let mut bad = bytes.clone();
    bad[20] ^= 0x01;
    assert!(ProducerSnapshot::parse(&bad).is_err());
}

/// `ProducerStateManagerTest.testCoordinatorFencedAfterReload`: a transaction committed at
/// coordinator epoch 1; the snapshot taken then keeps coordinator epoch 1, so after a reload
/// a marker from coordinator epoch 0 is still fenced. On disk: the snapshot agrees with the
/// log (one holding coordinator epoch 0 does not), and a later COMMIT at coordinator epoch
/// 0 is a `coordinator_epoch_regression`.
#[test]
fn coordinator_fenced_after_reload() {
    let t0 = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(t0, 0));
    p.commit(t0, 1);
    let (_d, m) = write(&p);
    let e = end_entry(&m);
    assert_eq!(e.coordinator_epoch, 1);
    let v = verify(&m);
    assert!(snapshot_findings(&v).is_empty(), "{:#?}", v.findings);
    let stale = SnapshotEntry {
        coordinator_epoch: 0,
        ..e
    };
    let (_d, m) = with_end_snapshot(&p, &[stale]);
    let v = verify(&m);
    assert_eq!(problems(&v), vec!["fields_differ"]);
    let f = v
        .findings
        .iter()
        .find(|f| f.kind == Kind::SnapshotMismatch)
        .unwrap();
    assert_eq!(
        f.evidence["differences"][0]["fields"][0]["field"],
        "coordinator_epoch"
    );
    p.commit(t0, 0);
    let (_d, _m, r) = super::scan(&p);
    assert_eq!(
        r.findings
            .iter()
            .filter(|f| f.kind == Kind::CoordinatorEpochRegression)
            .map(|f| f.offset)
            .collect::<Vec<_>>(),
        vec![Some(2)]
    );
}

/// `DefaultRecordBatch.lastSequence` as the load takes it (`ProducerAppendInfo`, which checks
/// no sequence on the load's path): a batch of producer 3 with the base sequence -5 (no
/// producer writes one, the leader refuses it; a rewritten log) over three records leaves
/// the last sequence -3 in the state a broker writes to its snapshot — -1 only for a base of
/// -1. The snapshot at the log end saying -3 agrees with the replay; the same snapshot
/// saying -1 differs (`fields_differ`). Before session 34 the replay took -1 for every
/// negative base and called Kafka's own snapshot a mismatch.
#[test]
fn a_negative_base_sequence_other_than_minus_1_is_incremented_in_the_snapshot() {
    let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
    p.append(
        Batch::new(Producer::idempotent(3, 0))
            .sequence(-5)
            .records(3),
    );
    let none = |e: SnapshotEntry| SnapshotEntry {
        last_sequence: -1,
        ..e
    };
    let e = end_snapshot_case(&p, none, "fields_differ");
    assert_eq!(e.last_sequence, -3);
}
