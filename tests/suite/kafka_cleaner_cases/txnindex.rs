//! The transaction index the cleaner writes (`CleanedTransactionMetadata`): an aborted
//! transaction's entry is copied into the cleaned segment's `.txnindex` while its ABORT is
//! kept *and* one of its batches was read in that pass, even when the pass removed them all.

use super::*;

/// `LogCleanerTest.testMultiPassSegmentCleaningWithAbortedTransactions`: producers 1 and 2
/// interleave committed and aborted transactions (offsets 0–19, aborted 8–10 by producer 1
/// and 11–16 by producer 2). The first pass removes both aborted transactions' data but
/// keeps the ABORTs at 10 and 16 — and both `.txnindex` entries, since their batches were
/// read (Kafka's test asserts the index still lists them). This is that state.
/// klogscan recomputes no aborted transaction (the ABORTs close nothing left), which is
/// right for the LSO; the verify check must not call the cleaner's entries "extra".
#[test]
fn multi_pass_cleaning_keeps_index_entries_of_removed_aborted_data() {
    let (r, v) = verify_cleaned(
        multi_pass_first(),
        &[(
            0,
            vec![aborted_txn(1, 8, 10, 11), aborted_txn(2, 11, 16, 17)],
        )],
    );
    multi_pass_scan_is_clean(&r);
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// The first pass of `testMultiPassSegmentCleaningWithAbortedTransactions` (see above):
/// batch base offsets 0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19.
fn multi_pass_first() -> PartitionBuilder {
    let (p1, p2) = (txn(1), txn(2));
    let mut p = log();
    p.append(rebuilt(p1, 0, 1, &[(0, "1")])); // 0–1
    p.append(keyed(p2, 0, &["2", "3"])); // 2–3
    p.append(keyed(p1, 2, &["3", "4"])); // 4–5
    p.commit(p1, 0); // 6
    p.commit(p2, 0); // 7
    p.skip_offsets(2); // producer 1's aborted [2, 3] (8–9)
    p.abort(p1, 0); // 10
    p.skip_offsets(2); // producer 2's aborted [4, 5] (11–12)
    p.append(keyed(p1, 6, &["5", "6"])); // 13–14
    p.commit(p1, 0); // 15
    p.abort(p2, 0); // 16
    p.append(keyed(p2, 4, &["6", "7"])); // 17–18
    p.commit(p2, 0); // 19
    p
}

/// [`multi_pass_first`], for the policy-unknown twin in `unknown_policy`.
pub(super) fn multi_pass_first_for_unknown_policy() -> PartitionBuilder {
    multi_pass_first()
}

fn multi_pass_scan_is_clean(r: &ScanReport) {
    assert_clean(r);
    assert_eq!(aborted(r), vec![]);
    assert_eq!(lso(r), Some(20));
    assert_eq!(entry(r, 1), (0, 7, 14, None));
    assert_eq!(entry(r, 2), (0, 5, 18, None));
    let s = &r.partitions[0].outcome().txn_stats;
    assert_eq!((s.committed, s.empty_aborts), (4, 2));
}

/// The same case's first pass, scan only (what the broker serves is right: no aborted data
/// is left to hide), and its second pass: no aborted data left to observe, the ABORTs get a
/// delete horizon and their entries are no longer copied — the verify is clean. The third
/// pass, past the horizon, drops the ABORTs.
#[test]
fn multi_pass_segment_cleaning_with_aborted_transactions() {
    let (_d, _m, r) = scan_with(&multi_pass_first(), true);
    multi_pass_scan_is_clean(&r);

    let (p1, p2) = (txn(1), txn(2));
    for removed in [false, true] {
        let mut p = log();
        p.append(rebuilt(p1, 0, 1, &[(0, "1")]));
        p.append(rebuilt(p2, 0, 1, &[(0, "2")]));
        p.append(keyed(p1, 2, &["3", "4"]));
        p.commit(p1, 0);
        p.commit(p2, 0);
        p.skip_offsets(2);
        let h = horizon(&p);
        if removed {
            p.skip_offsets(1);
        } else {
            marker_with_horizon(&mut p, p1, false, h);
        }
        p.skip_offsets(2);
        p.append(keyed(p1, 6, &["5", "6"]));
        p.commit(p1, 0);
        if removed {
            p.skip_offsets(1);
        } else {
            marker_with_horizon(&mut p, p2, false, h);
        }
        p.append(keyed(p2, 4, &["6", "7"]));
        p.commit(p2, 0);
        let (r, v) = verify_cleaned(p, &[(0, vec![])]);
        assert_clean(&r);
        assert_eq!((aborted(&r), lso(&r)), (vec![], Some(20)));
        assert_eq!(entry(&r, 1), (0, 7, 14, None));
        assert_eq!(entry(&r, 2), (0, 5, 18, None));
        assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
    }
}

/// `LogCleanerTest.testCleanWithTransactionsSpanningSegments`, after its second cleaning:
/// producers 1 and 2 aborted transactions spanning both segments (ABORTs at 12 and 18),
/// producer 3 committed one (COMMIT at 15), and producers 2 and 1 opened new ones at 19 and
/// 20 (sequences 4 and 6). Only producer 3's data is left below 19; the ABORTs stay with
/// their entries (2, 4–12) and (1, 0–18) in the second segment's `.txnindex` (their batches
/// were read). The scan: no marker or sequence finding, two open transactions, LSO 19.
#[test]
fn clean_with_transactions_spanning_segments() {
    let r = scan(&spanning());
    assert_eq!(
        kinds(&r.findings),
        vec![
            (Kind::OpenTransaction, Some(19)),
            (Kind::OpenTransaction, Some(20))
        ],
        "{:#?}",
        r.findings
    );
    assert_eq!((aborted(&r), lso(&r)), (vec![], Some(19)));
    assert_eq!(entry(&r, 3), (0, 5, 14, None));
    assert_eq!(entry(&r, 2), (0, 4, 19, Some(19)));
    assert_eq!(entry(&r, 1), (0, 6, 20, Some(20)));
}

/// The same state, verified with the `.txnindex` the cleaner wrote: producer 2's entry
/// (first offset 4, inside the log) has no data left, which is how Kafka leaves it.
#[test]
fn clean_with_transactions_spanning_segments_txnindex() {
    let (_r, v) = verify_cleaned(
        spanning(),
        &[(1, vec![aborted_txn(2, 4, 12, 0), aborted_txn(1, 0, 18, 19)])],
    );
    let mismatches: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.kind == Kind::TxnindexMismatch)
        .collect();
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

fn spanning() -> PartitionBuilder {
    let (p1, p2, p3) = (txn(1), txn(2), txn(3));
    let mut p = log();
    p.skip_offsets(2); // producer 1's aborted [1, 2]
    p.append(keyed(p3, 0, &["2", "3"])); // 2–3
    p.skip_offsets(2); // producer 2's aborted [3, 4]
    p.roll();
    p.skip_offsets(2); // producer 2's aborted [5, 6]
    p.append(keyed(p3, 2, &["6", "7"])); // 8–9
    p.skip_offsets(2); // producer 1's aborted [7, 8]
    p.abort(p2, 0); // 12
    p.append(keyed(p3, 4, &["8", "9"])); // 13–14
    p.commit(p3, 0); // 15
    p.skip_offsets(2); // producer 1's aborted [9, 10]
    p.abort(p1, 0); // 18
    p.roll();
    p.append(keyed(p2, 4, &["11"])); // 19
    p.append(keyed(p1, 6, &["12"])); // 20
    p
}

/// The cleaner copies an aborted transaction's entry as it was written
/// (`CleanedTransactionMetadata.onControlBatchRead` appends the `AbortedTxn` it collected),
/// lastStableOffset included, even when the batch that set it is gone. Here a plain key (0)
/// stays; producer 1 opens a transaction with key 1 (1); producer 2 writes key 2 (2) and
/// aborts (3), so its entry is (2, 2–3, lastStableOffset 1); producer 1 writes key 3 (4)
/// and commits (5); a plain key 1 (6) supersedes producer 1's first batch. Cleaning drops
/// that batch (producer 1's last data is at 4), empties producer 2's (its last data) and
/// keeps the ABORT with the entry as written. The recomputed lastStableOffset is 4 (nothing
/// open below the ABORT any more); the file's 1 is what Kafka leaves, not damage.
#[test]
fn cleaner_keeps_the_entry_last_stable_offset() {
    let (p1, p2) = (txn(1), txn(2));
    let mut p = log();
    p.append(keyed(Producer::PLAIN, -1, &["a"])); // 0
    p.skip_offsets(1); // producer 1's [1], superseded at 6
    p.append(emptied(p2, 0, 1)); // 2
    p.abort(p2, 0); // 3
    p.append(keyed(p1, 1, &["3"])); // 4
    p.commit(p1, 0); // 5
    p.append(keyed(Producer::PLAIN, -1, &["1"])); // 6
    let (r, v) = verify_cleaned(p, &[(0, vec![aborted_txn(2, 2, 3, 1)])]);
    assert_clean(&r);
    assert_eq!(aborted(&r), vec![(2, 2, 3)]);
    assert_eq!(r.partitions[0].outcome().aborted[0].last_stable_offset, 4);
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// The twins of the cleaned-index cases, what cleaning cannot explain: on the same
/// compacted log, an entry whose firstOffset or lastStableOffset lies *above* the cleaned
/// log's (no removal makes them later), and an entry at an offset holding no ABORT marker
/// of its producer, are still reported.
#[test]
fn cleaned_index_entries_cleaning_cannot_explain_are_reported() {
    let build = || {
        let (p1, p2) = (txn(1), txn(2));
        let mut p = log();
        p.append(keyed(Producer::PLAIN, -1, &["a"])); // 0
        p.skip_offsets(1);
        p.append(emptied(p2, 0, 1)); // 2
        p.abort(p2, 0); // 3
        p.append(keyed(p1, 1, &["3"])); // 4
        p.commit(p1, 0); // 5
        p.append(keyed(Producer::PLAIN, -1, &["1"])); // 6
        p
    };
    let mismatch = |v: &PartitionVerification| -> Vec<String> {
        v.findings
            .iter()
            .filter(|f| f.kind == Kind::TxnindexMismatch)
            .map(|f| f.message.clone())
            .collect()
    };
    // lastStableOffset 5, above the 4 the cleaned log gives.
    let (_r, v) = verify_cleaned(build(), &[(0, vec![aborted_txn(2, 2, 3, 5)])]);
    let m = mismatch(&v);
    assert_eq!(m.len(), 1, "{:#?}", v.findings);
    assert!(m[0].contains("wrong"), "{m:?}");
    // firstOffset 3, above the transaction's remaining batch at 2.
    let (_r, v) = verify_cleaned(build(), &[(0, vec![aborted_txn(2, 3, 3, 1)])]);
    assert_eq!(mismatch(&v).len(), 1, "{:#?}", v.findings);
    // An entry at 5, producer 1's COMMIT: no ABORT there.
    let (_r, v) = verify_cleaned(
        build(),
        &[(0, vec![aborted_txn(2, 2, 3, 1), aborted_txn(1, 4, 5, 4)])],
    );
    let m = mismatch(&v);
    assert_eq!(m.len(), 1, "{:#?}", v.findings);
    assert!(m[0].contains("no matching ABORT"), "{m:?}");
}

// ----- the cleanable range ----------------------------------------------------------------

/// A log dir holding `test-0` — producer 15's transaction [1, 2] (0–1), [3] (2), still open
/// — and a `cleaner-offset-checkpoint` listing it at `cleaned_to`. Verified as the CLI does.
fn undecided(cleaned_to: i64) -> (ScanReport, PartitionVerification) {
    undecided_from(cleaned_to, None)
}

/// [`undecided`] with the log start offset checkpointed at `log_start`.
fn undecided_from(cleaned_to: i64, log_start: Option<i64>) -> (ScanReport, PartitionVerification) {
    let p15 = txn(15);
    let mut p = log();
    p.append(keyed(p15, 0, &["1", "2"]));
    p.append(keyed(p15, 2, &["3"]));
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("broker-1");
    let mut b = klogscan::testkit::LogDirBuilder::new(1).cluster_id("c1");
    if let Some(ls) = log_start {
        b = b.log_start_offset(TOPIC, 0, ls);
    }
    b.partition(p).write(&ld).unwrap();
    std::fs::write(
        ld.join("cleaner-offset-checkpoint"),
        format!("0\n1\n{TOPIC} 0 {cleaned_to}\n"),
    )
    .unwrap();
    let r = scan_dir(&ld, false);
    let a = request::verify(&Request::new([&ld]), None).unwrap();
    let mut v = a.report.partitions;
    assert_eq!(v.len(), 1);
    (r, v.remove(0))
}

/// `LogCleanerManagerTest.testUndecidedTransactionalDataNotCleanable`: while producer 15's
/// transaction (0–2) is undecided nothing is cleanable (`cleanableOffsets` stops at the
/// last stable offset, 0), so the cleaner's checkpoint for the partition stays at 0. That
/// log dir — compacted by its `cleaner-offset-checkpoint` — verifies with the open
/// transaction as its only finding (the LSO pinned at 0).
#[test]
fn undecided_transactional_data_not_cleaned() {
    let (r, v) = undecided(0);
    assert_eq!(r.partitions[0].compacted, Some(true));
    assert_eq!(
        r.partitions[0].compacted_from.as_deref(),
        Some("cleaner-offset-checkpoint")
    );
    assert_eq!((lso(&r), entry(&r, 15)), (Some(0), (0, 2, 2, Some(0))));
    let found: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info || f.kind == Kind::OpenTransaction)
        .map(|f| (f.kind, f.offset))
        .collect();
    assert_eq!(
        found,
        vec![(Kind::OpenTransaction, Some(0))],
        "{:#?}",
        v.findings
    );
}

/// The same log with the cleaner's checkpoint at 3: the cleaner never cleans past the last
/// stable offset (`LogCleanerManager.cleanableOffsets`), so a checkpoint above the first
/// offset of a transaction that is still open proves the transaction's end (its marker) was
/// on this log once and is lost — a truncation after cleaning — or the checkpoint is wrong.
#[test]
fn cleaner_checkpoint_past_an_undecided_transaction() {
    let (_r, v) = undecided(3);
    let found: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.kind == Kind::CheckpointInconsistent)
        .collect();
    assert_eq!(found.len(), 1, "{:#?}", v.findings);
}

/// The twin of [`cleaner_checkpoint_past_an_undecided_transaction`]: the log start moved
/// to 2 (DeleteRecords) past the open transaction's first offset. The last stable offset is
/// then the log start (`UnifiedLog.maybeIncrementFirstUnstableOffset`) and the cleaner's
/// checkpoint may stand above the transaction's first offset without any marker lost: no
/// `checkpoint_inconsistent` (the transaction below the log start is `lso_below_log_start`'s).
#[test]
fn cleaner_checkpoint_above_a_transaction_begun_below_the_log_start() {
    let (_r, v) = undecided_from(3, Some(2));
    let kinds: Vec<Kind> = v.findings.iter().map(|f| f.kind).collect();
    assert!(
        !kinds.contains(&Kind::CheckpointInconsistent),
        "{:#?}",
        v.findings
    );
    assert!(kinds.contains(&Kind::LsoBelowLogStart), "{:#?}", v.findings);
}

/// A follower's `.txnindex` entry, cleaned. `UnifiedLogTest.testTransactionIndexUpdatedThroughReplication`:
/// a follower appends a fetched chunk at once, so an ABORT's lastStableOffset is the first
/// offset of another producer's transaction the same chunk starts after the marker
/// (`ProducerStateManager.lastStableOffset` over every transaction the chunk began). Here:
/// a plain x (0), producer 2's aborted [a] (1), its ABORT (2), a plain y (3), producer 3's
/// transaction [k] (4), [m] (5), COMMIT (6), then producer 3's [k] (7) and COMMIT (8). A
/// follower fetching 1–4 in one chunk writes (2, 1–2, lastStableOffset 4). Cleaning empties
/// producer 2's batch (its last data) and keeps the ABORT with that entry, unchanged
/// (`CleanedTransactionMetadata.onControlBatchRead`), and drops producer 3's batch at 4
/// (key k superseded at 7, not its last batch). The cleaned log gives 3 (leader) or 5 (the
/// first remaining batch of another transaction after the marker, follower); the file's 4 lies
/// above the leader's value, so `compare` calls it "wrong" (error) though cleaning alone made
/// it: the cleaner can raise the follower's reference offset, and a lastStableOffset between
/// the leader's value and the follower value the cleaned log shows is not damage.
#[test]
fn cleaned_follower_entry_last_stable_offset() {
    let (r, v) = verify_cleaned(cleaned_follower(), &[(0, vec![aborted_txn(2, 1, 2, 4)])]);
    assert_clean(&r);
    assert_eq!(aborted(&r), vec![(2, 1, 2)]);
    let m: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.kind == Kind::TxnindexMismatch)
        .collect();
    assert!(m.is_empty(), "{m:#?}");
}

/// The twin of [`cleaned_follower_entry_last_stable_offset`] cleaning cannot explain: a
/// lastStableOffset above the follower value the cleaned log shows (5, producer 3's first
/// remaining batch after the marker). Removing batches only raises that value, so a stored
/// 6 (producer 3's COMMIT) was never the first offset of a transaction the chunk began
/// before it: still "wrong", with the ground the verdict read the partition as compacted on.
#[test]
fn cleaned_follower_entry_above_the_follower_value_is_wrong() {
    let (_r, v) = verify_cleaned(cleaned_follower(), &[(0, vec![aborted_txn(2, 1, 2, 6)])]);
    let m: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.kind == Kind::TxnindexMismatch)
        .collect();
    assert_eq!(m.len(), 1, "{:#?}", v.findings);
    assert!(m[0].message.contains("wrong"), "{m:#?}");
    assert_eq!(m[0].evidence["treated_as_compacted"], "stated", "{m:#?}");
    assert_eq!(m[0].evidence["entries"][0]["last_stable_offset"], 6);
}

/// The log of [`cleaned_follower_entry_last_stable_offset`].
fn cleaned_follower() -> PartitionBuilder {
    let (p2, p3) = (txn(2), txn(3));
    let mut p = log();
    p.append(keyed(Producer::PLAIN, -1, &["x"])); // 0
    p.append(emptied(p2, 0, 1)); // 1
    p.abort(p2, 0); // 2
    p.append(keyed(Producer::PLAIN, -1, &["y"])); // 3
    p.skip_offsets(1); // producer 3's [k] (4), superseded at 7
    p.append(keyed(p3, 1, &["m"])); // 5
    p.commit(p3, 0); // 6
    p.append(keyed(p3, 2, &["k"])); // 7
    p.commit(p3, 0); // 8
    p
}
