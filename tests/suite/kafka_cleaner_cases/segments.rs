//! The batches the cleaner keeps empty to hold a producer's last sequence and epoch
//! (`isBatchLastRecordOfProducer`), and the last batch of a cleaning round.

use super::*;

/// `LogCleanerTest.testCommitMarkerRetentionWithEmptyBatch`: producer 1's [2, 3] (0–1) in
/// the first segment, producer 2's [2, 3] (2–3) and COMMIT (4) in the second, plain keys 2
/// and 3 (5, 6) and producer 1's COMMIT (7) in the third. The first pass empties both
/// producers' batches but keeps them (each is its producer's last data) and keeps both
/// COMMITs; after producer 2's [1] (8) and COMMIT (9) its empty batch goes, then (two passes)
/// its first COMMIT. In each state producer 1's transaction still opens at 0 (the empty
/// batch) and commits at 7; no finding; both producers' sequences survive.
#[test]
fn commit_marker_retention_with_empty_batch() {
    let (p1, p2) = (txn(1), txn(2));
    // step 0: after the first pass; 1: after [1] and the next pass; 2: COMMIT at 4 removed
    for step in 0..3 {
        let mut p = log();
        p.append(emptied(p1, 0, 2));
        p.roll();
        match step {
            0 => {
                p.append(emptied(p2, 0, 2));
                p.commit(p2, 0);
            }
            1 => {
                p.skip_offsets(2);
                p.commit(p2, 0);
            }
            _ => {
                p.skip_offsets(3);
            }
        }
        p.roll();
        p.append(keyed(Producer::PLAIN, -1, &["2"]));
        p.append(keyed(Producer::PLAIN, -1, &["3"]));
        p.commit(p1, 0);
        if step > 0 {
            p.append(keyed(p2, 2, &["1"]));
            p.commit(p2, 0);
        }
        let r = scan(&p);
        assert_clean(&r);
        assert_eq!(entry(&r, 1), (0, 1, 1, None), "step {step}");
        let p2_state = if step == 0 {
            (0, 1, 3, None)
        } else {
            (0, 2, 8, None)
        };
        assert_eq!(entry(&r, 2), p2_state, "step {step}");
        assert_eq!(lso(&r), Some(if step == 0 { 8 } else { 10 }));
        // committed: producer 1's (0–7, 8 offsets) and producer 2's (2–4 or 8–9)
        let s = &r.partitions[0].outcome().txn_stats;
        let p2_size = [3, 2, 2][step];
        let sizes = if step == 0 {
            vec![p2_size, 8]
        } else {
            vec![8, p2_size]
        };
        assert_eq!((s.committed, &s.sizes[..]), (2, &sizes[..]), "step {step}");
    }
}

/// `LogCleanerTest.testAbortMarkerRetentionWithEmptyBatch`: producer 1's [2, 3] (0–1), ABORT
/// (2). Cleaning empties the batch but keeps it (last data) and the ABORT (its batch was
/// read), so the `.txnindex` keeps (1, 0–2): the scan recomputes exactly that aborted
/// transaction from the empty batch and the marker. After [1] (3, sequence 2) the empty
/// batch goes, the ABORT stays one pass more with its entry (the empty batch was read), then
/// goes with it. Every state scans and verifies clean.
#[test]
fn abort_marker_retention_with_empty_batch() {
    let p1 = txn(1);
    let entry_0_2 = vec![aborted_txn(1, 0, 2, 3)];
    // after the first and second passes
    let mut p = log();
    p.append(emptied(p1, 0, 2));
    p.abort(p1, 0);
    let (r, v) = verify_cleaned(p, &[(0, entry_0_2.clone())]);
    assert_clean(&r);
    assert_eq!(aborted(&r), vec![(1, 0, 2)]);
    assert_eq!((entry(&r, 1), lso(&r)), ((0, 1, 1, None), Some(3)));
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);

    // after [1] and the next pass: the ABORT and its entry stay, the empty batch is gone
    let mut p = log();
    p.skip_offsets(2);
    p.abort(p1, 0);
    p.roll();
    p.append(keyed(p1, 2, &["1"]));
    let (r, v) = verify_cleaned(p, &[(0, entry_0_2)]);
    assert_eq!(
        kinds(&r.findings),
        vec![(Kind::OpenTransaction, Some(3))],
        "{:#?}",
        r.findings
    );
    assert_eq!(aborted(&r), vec![]);
    assert_eq!((entry(&r, 1), lso(&r)), ((0, 2, 3, Some(3)), Some(3)));
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// `LogCleanerTest.testEmptyBatchRemovalWithSequenceReuse`: producer 1 (replicated, the
/// group coordinator's habit) writes two transactions both at sequence 0: [1] (0), COMMIT
/// (1), [2] (2), COMMIT (3), then plain keys 1 and 2 (4, 5). The first pass drops the batch
/// at 0 and empties the one at 2 (the producer's last data); two passes later the COMMIT at
/// 1 (no data left) is gone. Both states scan clean, producer 1 at sequence 0 (offset 2).
/// The uncleaned log on a topic not declared compacted shows the reused sequence.
#[test]
fn empty_batch_removal_with_sequence_reuse() {
    let p1 = txn(1);
    for first_commit_kept in [true, false] {
        let mut p = log();
        p.skip_offsets(1);
        if first_commit_kept {
            p.commit(p1, 0);
        } else {
            p.skip_offsets(1);
        }
        p.append(emptied(p1, 0, 1));
        p.commit(p1, 0);
        p.append(keyed(Producer::PLAIN, -1, &["1"]));
        p.append(keyed(Producer::PLAIN, -1, &["2"]));
        let r = scan(&p);
        assert_clean(&r);
        assert_eq!((entry(&r, 1), lso(&r)), ((0, 0, 2, None), Some(6)));
        assert_eq!(r.partitions[0].outcome().txn_stats.committed, 1);
    }
    // before cleaning, compaction unknown: the second sequence 0 is a duplicate
    let mut p = log();
    p.append(keyed(p1, 0, &["1"]));
    p.commit(p1, 0);
    p.append(keyed(p1, 0, &["2"]));
    p.commit(p1, 0);
    let (_d, _m, r) = scan_with(&p, false);
    assert_eq!(kinds(&r.findings), vec![(Kind::DuplicateSequence, Some(2))]);
}

/// `LogCleanerTest.testDuplicateCheckAfterCleaning`: idempotent producers 1 ([1, 2, 3],
/// 0–2), 2 ([3, 1, 4], 3–5) and 3 ([1, 4], 6–7). Cleaning keeps key 2 of producer 1's batch
/// and key 3 of producer 2's, each rebuilt with its first and last offsets (so last sequence
/// 2); after producer 4's [2] (8) the next pass empties producer 1's batch and keeps it. The
/// replayed state keeps every producer's last sequence and offset — what lets the leader
/// answer a retry with the original offsets — with or without the topic declared compacted
/// (the rebuilt batches are cleaner traces). A retry's duplicate on disk would be a finding.
#[test]
fn duplicate_check_after_cleaning() {
    let idem = |pid| Producer::idempotent(pid, 0);
    for second_pass in [false, true] {
        let mut p = log();
        if second_pass {
            p.append(emptied(idem(1), 0, 3));
        } else {
            p.append(rebuilt(idem(1), 0, 2, &[(1, "2")]));
        }
        p.append(rebuilt(idem(2), 0, 2, &[(0, "3")]));
        p.append(keyed(idem(3), 0, &["1", "4"]));
        if second_pass {
            p.append(keyed(idem(4), 0, &["2"]));
        }
        for compacted in [true, false] {
            let (_d, _m, r) = scan_with(&p, compacted);
            assert!(r.findings.is_empty(), "{:#?}", r.findings);
            assert_eq!(entry(&r, 1), (0, 2, 2, None));
            assert_eq!(entry(&r, 2), (0, 2, 5, None));
            assert_eq!(entry(&r, 3), (0, 1, 7, None));
            if second_pass {
                assert_eq!(entry(&r, 4), (0, 0, 8, None));
            }
        }
    }
    // The leader answers a retry of producer 1's [1, 2, 3] with offsets 0–2 and appends
    // nothing; a copy on disk is a duplicate — reported when nothing says the log was
    // cleaned, not on a compacted one (docs/findings.md: `duplicate_sequence` is skipped
    // there, as whole batches may be gone; here both copies are on disk).
    let mut p = log();
    p.append(keyed(idem(1), 0, &["1", "2", "3"]));
    p.append(keyed(idem(1), 0, &["1", "2", "3"]));
    let (_d, _m, r) = scan_with(&p, false);
    assert_eq!(kinds(&r.findings), vec![(Kind::DuplicateSequence, Some(3))]);
    let (_d, _m, r) = scan_with(&p, true);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// `LogCleanerTest.testLogCleanerRetainsProducerLastSequence`: a plain key 0 (0), then key 0
/// from producers 1, 2, 3 at sequence 0 (1, 2, 3) and key 1 from producer 2 at sequence 1
/// (4). Cleaning keeps producer 1's batch empty (its last data), drops producer 2's first
/// batch (its last is at 4) and the plain one. The offsets at 0 and 2 are gone; no finding,
/// with or without the topic declared compacted (the empty batch is a cleaner trace); every
/// producer's last sequence kept.
#[test]
fn log_cleaner_retains_producer_last_sequence() {
    let idem = |pid| Producer::idempotent(pid, 0);
    let mut p = log();
    p.skip_offsets(1);
    p.append(emptied(idem(1), 0, 1));
    p.skip_offsets(1);
    p.append(keyed(idem(3), 0, &["0"]));
    p.append(keyed(idem(2), 1, &["1"]));
    for compacted in [true, false] {
        let (_d, _m, r) = scan_with(&p, compacted);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(entry(&r, 1), (0, 0, 1, None));
        assert_eq!(entry(&r, 2), (0, 1, 4, None));
        assert_eq!(entry(&r, 3), (0, 0, 3, None));
    }
}

/// `LogCleanerTest.testLogCleanerRetainsLastSequenceEvenIfTransactionAborted`: producer 1's
/// [1] (0), [2, 3] (1–2), ABORT (3). Cleaning drops the first batch and empties the second
/// (last data, sequences 1–2); the ABORT and its entry (1, 0–3) stay. The scan sees the
/// transaction open at the empty batch (1) and aborted at 3; the entry's first offset 0
/// lies below the log's first batch and is not contradicted. After [1, 5] (4–5, sequences
/// 3–4, still open) the next pass drops the empty batch: the transaction open at 4 holds
/// the LSO.
#[test]
fn log_cleaner_retains_last_sequence_even_if_transaction_aborted() {
    let p1 = txn(1);
    let entry_0_3 = vec![aborted_txn(1, 0, 3, 4)];
    let mut p = log();
    p.skip_offsets(1);
    p.append(emptied(p1, 1, 2));
    p.abort(p1, 0);
    let (r, v) = verify_cleaned(p, &[(0, entry_0_3.clone())]);
    assert_clean(&r);
    assert_eq!(aborted(&r), vec![(1, 1, 3)]);
    assert_eq!((entry(&r, 1), lso(&r)), ((0, 2, 2, None), Some(4)));
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);

    let mut p = log();
    p.skip_offsets(3);
    p.abort(p1, 0);
    p.roll();
    p.append(keyed(p1, 3, &["1", "5"]));
    let (r, v) = verify_cleaned(p, &[(0, entry_0_3)]);
    assert_eq!(kinds(&r.findings), vec![(Kind::OpenTransaction, Some(4))]);
    assert_eq!((entry(&r, 1), lso(&r)), ((0, 4, 5, Some(4)), Some(4)));
    assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
}

/// `LogCleanerTest.testCleanSegmentsRetainingLastEmptyBatch`: plain one-record batches over
/// three segments, every key deleted: the cleaned segment keeps only the round's last batch,
/// empty (producer id −1, no records), ending right below the next segment. No finding; the
/// log still ends where it did.
#[test]
fn clean_segments_retaining_last_empty_batch() {
    let mut p = log();
    p.skip_offsets(29);
    p.append(emptied(Producer::PLAIN, -1, 1));
    p.roll();
    p.append(keyed(Producer::PLAIN, -1, &["30"]));
    p.append(keyed(Producer::PLAIN, -1, &["31"]));
    for compacted in [true, false] {
        let (_d, m, r) = scan_with(&p, compacted);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(m.segments.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 30]);
        assert_eq!(r.partitions[0].log_end_offset, Some(32));
        assert_eq!(lso(&r), Some(32));
    }
}
