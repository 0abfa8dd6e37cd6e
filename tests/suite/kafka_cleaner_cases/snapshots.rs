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

/// A snapshot entry of producer 1 (epoch 0, coordinator epoch −1 as the tests' producers).
fn entry_of(last_sequence: i32, last_offset: i64, timestamp: i64, txn_first: i64) -> SnapshotEntry {
    SnapshotEntry {
        producer_id: 1,
        epoch: 0,
        last_sequence,
        last_offset,
        offset_delta: 0,
        timestamp,
        coordinator_epoch: -1,
        current_txn_first_offset: txn_first,
    }
}

/// The twins cleaning cannot explain, on the same compacted topic: the replay of a cleaned
/// log can only lag a snapshot, so a snapshot *behind* it is still a mismatch. The
/// idempotent producer 1 writes a (0, sequence 0), a plain b (1), c (2, sequence 1), roll,
/// a (3, sequence 2); nothing of producer 1 was removed below 3. A snapshot at 3 saying its
/// last batch is the one at 0 (an earlier batch than the log holds below 3), or giving it a
/// lower epoch than the log's, is reported.
#[test]
fn snapshot_behind_the_cleaned_log_is_reported() {
    let idem = Producer::idempotent(1, 1);
    let build = || {
        let mut p = log();
        p.append(keyed(idem, 0, &["a"])); // 0
        p.append(keyed(Producer::PLAIN, -1, &["b"])); // 1
        p.append(keyed(idem, 1, &["c"])); // 2
        p.roll();
        p.append(keyed(idem, 2, &["a"])); // 3
        p
    };
    // Behind: last batch at 0 (sequence 0), the log has one at 2.
    let p = build();
    let mut behind = entry_of(0, 0, p.now(), -1);
    behind.epoch = 1;
    let v = verify_with_snapshots(p, &[(3, vec![behind])]);
    let m = snapshot_mismatches(&v);
    assert_eq!(m.len(), 1, "{:#?}", v.findings);
    let d = &m[0].evidence["differences"][0];
    assert_eq!(d["problem"], "fields_differ", "{m:#?}");
    assert_eq!(d["fields"][0]["field"], "last_offset", "{m:#?}");
    assert_eq!(m[0].evidence["treated_as_compacted"], "stated");
    // A lower epoch (0) than the log's (1), the same last batch otherwise unknown.
    let v = verify_with_snapshots(build(), &[(3, vec![entry_of(1, 2, 0, -1)])]);
    let m = snapshot_mismatches(&v);
    assert_eq!(m.len(), 1, "{:#?}", v.findings);
    let fields = &m[0].evidence["differences"][0]["fields"];
    assert!(
        fields
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["field"] == "epoch"),
        "{m:#?}"
    );
}

/// The transactional twins: producer 1's transaction [a] (1), [c] (2) is open at the roll
/// (snapshot at 3) and committed at 3, nothing of it removed. A snapshot with no open
/// transaction for it, or one open only since 2 (later than the log's 1: removing batches
/// cannot make the log's start earlier), is reported.
#[test]
fn snapshot_transaction_cleaning_cannot_explain_is_reported() {
    let p1 = txn(1);
    let build = || {
        let mut p = log();
        p.append(keyed(Producer::PLAIN, -1, &["b"])); // 0
        p.append(keyed(p1, 0, &["a"])); // 1
        p.append(keyed(p1, 1, &["c"])); // 2
        p.roll();
        p.commit(p1, 0); // 3
        p
    };
    for (txn_first, problem) in [(-1, "open_transaction_missing"), (2, "fields_differ")] {
        let p = build();
        let ts = p.now();
        let v = verify_with_snapshots(p, &[(3, vec![entry_of(1, 2, ts, txn_first)])]);
        let m = snapshot_mismatches(&v);
        assert_eq!(m.len(), 1, "{:#?}", v.findings);
        let d = &m[0].evidence["differences"][0];
        assert_eq!(d["problem"], problem, "{m:#?}");
        assert!(
            d["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["field"] == "current_txn_first_offset"),
            "{m:#?}"
        );
    }
}

/// Snapshots ahead of a replay that still knows the producer. (1) The idempotent producer 1
/// writes c (0, sequence 0), a plain b (1), a (2, sequence 1), roll, a (3, sequence 2): the
/// cleaner removes a at 2 (superseded at 3) and keeps c. The snapshot at 3 says its last
/// batch is the one at 2 (sequence 1); the cleaned log's replay below 3 has the one at 0.
/// (2) Producer 1's transaction [a] (1), [c] (2), roll, COMMIT (3), then [a] (4), COMMIT
/// (5): the cleaner removes the batch at 1, so the replay has the transaction open since 2
/// where the snapshot at 3 has it open since 1. Both snapshots are what the broker wrote
/// and loads; neither is a mismatch on a compacted topic.
#[test]
fn snapshot_ahead_of_a_known_producer_after_cleaning() {
    let idem = Producer::idempotent(1, 0);
    let mut p = log();
    p.append(keyed(idem, 0, &["c"])); // 0
    p.append(keyed(Producer::PLAIN, -1, &["b"])); // 1
    p.skip_offsets(1); // producer 1's a (2), superseded at 3
    p.roll();
    let ts = p.now();
    p.append(keyed(idem, 2, &["a"])); // 3
    let v = verify_with_snapshots(p, &[(3, vec![entry_of(1, 2, ts - 1000, -1)])]);
    let m = snapshot_mismatches(&v);
    assert!(m.is_empty(), "{m:#?}");

    let p1 = txn(1);
    let mut p = log();
    p.append(keyed(Producer::PLAIN, -1, &["b"])); // 0
    p.skip_offsets(1); // producer 1's a (1), superseded at 4
    let ts = p.now();
    p.append(keyed(p1, 1, &["c"])); // 2
    p.roll();
    p.commit(p1, 0); // 3
    p.append(keyed(p1, 2, &["a"])); // 4
    p.commit(p1, 0); // 5
    let v = verify_with_snapshots(p, &[(3, vec![entry_of(1, 2, ts, 1)])]);
    let m = snapshot_mismatches(&v);
    assert!(m.is_empty(), "{m:#?}");
}
