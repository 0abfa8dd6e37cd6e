//! Producer snapshots a cleaning pass leaves behind. The cleaner rewrites segments but not
//! the `.snapshot` files of the segments it keeps, nor the one at the active segment's base
//! (`UnifiedLog.replaceSegments` → `deleteProducerSnapshots` removes only the snapshots of
//! segments merged away: `UnifiedLogTest.testCompactionDeletesProducerStateSnapshots`
//! asserts one snapshot per remaining segment base but the first). Those snapshots keep
//! the state as written: a producer's batches below the snapshot offset may since have been
//! removed (the cleaner keeps only each producer's *last* batch in the whole log,
//! `LogCleaner.cleanInto` / `lastRecordsOfActiveProducers`), so replaying the cleaned log up
//! to the snapshot offset gives an older state, or none, for that producer. Kafka loads such
//! a snapshot as is and its state is right; nothing in it is damage.

use super::*;
use klogscan::testkit::SnapshotEntry;
use klogscan::testkit::files::encode_snapshot;

/// Write `p` (declared compacted) with its broker files, replace `N.snapshot` by `entries`
/// for each `(N, entries)`, and verify it as the CLI does.
fn verify_with_snapshots(
    p: PartitionBuilder,
    snapshots: &[(i64, Vec<SnapshotEntry>)],
) -> PartitionVerification {
    let dir = tempfile::tempdir().unwrap();
    let mut m = p
        .broker_files(PartitionFileOptions::default())
        .write(dir.path())
        .unwrap();
    rebase_first_segment(&mut m);
    for (n, entries) in snapshots {
        let path = m.dir.join(format!("{n:020}.snapshot"));
        assert!(path.exists(), "{path:?}");
        std::fs::write(&path, encode_snapshot(entries)).unwrap();
    }
    let req = Request::new([&m.dir]).with_options(options(true));
    let a = request::verify(&req, None).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

fn snapshot_mismatches(v: &PartitionVerification) -> Vec<&Finding> {
    v.findings
        .iter()
        .filter(|f| f.kind == Kind::SnapshotMismatch)
        .collect()
}

/// `UnifiedLogTest.testCompactionDeletesProducerStateSnapshots` with one more key: the
/// idempotent producer 1 writes key a at 0 (sequence 0) beside a plain key b (1), a again
/// at 2 (sequence 1) in the next segment, and a at 3 (sequence 2) in the active segment
/// (snapshots at 2 and 3, written at the rolls). Cleaning the two old segments (grouped
/// into one at base 0: the snapshot at 2 goes with segment 2) removes producer 1's batches
/// at 0 and 2 (its last batch is at 3) and keeps b. The snapshot at 3 still says producer 1
/// is at sequence 1, offset 2 — what the broker had, and loads, at 3. Replaying the cleaned
/// log below 3 meets no batch of producer 1: `verify` reports an `unknown_producer`
/// `snapshot_mismatch` (src/verify/checks/snapshot.rs `compare_snapshot` has no
/// compaction case), a false alarm on every compacted topic with an idempotent producer.
#[test]
fn snapshot_at_active_segment_base_after_cleaning_idempotent() {
    let idem = Producer::idempotent(1, 0);
    let mut p = log();
    p.skip_offsets(1); // producer 1's a (0), superseded at 3
    p.append(keyed(Producer::PLAIN, -1, &["b"])); // 1
    p.skip_offsets(1); // producer 1's a (2), superseded at 3
    p.roll();
    let ts = p.now();
    p.append(keyed(idem, 2, &["a"])); // 3
    let before = SnapshotEntry {
        producer_id: 1,
        epoch: 0,
        last_sequence: 1,
        last_offset: 2,
        offset_delta: 0,
        timestamp: ts - 1000,
        coordinator_epoch: -1,
        current_txn_first_offset: -1,
    };
    let v = verify_with_snapshots(p, &[(3, vec![before])]);
    let m = snapshot_mismatches(&v);
    assert!(m.is_empty(), "{m:#?}");
}

/// The transactional twin: a plain b (0), producer 1's transaction with key a (1), roll
/// (snapshot at 2: the transaction open since 1), then in the active segment its COMMIT
/// (2), a new transaction with key a (3, sequence 1) and its COMMIT (4). The cleaner may
/// clean the first segment once the transaction is decided (`cleanableOffsets` stops at the
/// last stable offset, here the log end): producer 1's batch at 1 goes (superseded at 3,
/// not its last), b stays. The snapshot at 2 keeps the open transaction (first offset 1)
/// the broker had there; loading it, the COMMIT at 2 closes it. `verify` reports it.
#[test]
fn snapshot_with_open_transaction_after_cleaning() {
    let p1 = txn(1);
    let mut p = log();
    p.append(keyed(Producer::PLAIN, -1, &["b"])); // 0
    let ts = p.now();
    p.skip_offsets(1); // producer 1's a (1), superseded at 3
    p.roll();
    p.commit(p1, 0); // 2
    p.append(keyed(p1, 1, &["a"])); // 3
    p.commit(p1, 0); // 4
    let before = SnapshotEntry {
        producer_id: 1,
        epoch: 0,
        last_sequence: 0,
        last_offset: 1,
        offset_delta: 0,
        timestamp: ts,
        coordinator_epoch: -1,
        current_txn_first_offset: 1,
    };
    let v = verify_with_snapshots(p, &[(2, vec![before])]);
    let m = snapshot_mismatches(&v);
    assert!(m.is_empty(), "{m:#?}");
}
