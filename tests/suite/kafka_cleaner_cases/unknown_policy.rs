//! The cleaned `.txnindex` cases of [`super::txnindex`] on a partition whose cleanup policy
//! the inputs do not state: no `--compacted`, no `cleaner-offset-checkpoint` (Kafka's
//! `LogCleanerTest` calls `Cleaner.clean` / `cleanSegments` directly, and only
//! `LogCleanerManager.doneCleaning` writes that checkpoint), no metadata log. The batches
//! themselves carry the cleaner's traces (a rebuilt batch with fewer records than its offset
//! range, an emptied batch), so the producer-state replay treats the partition as compacted
//! (`Replay::treated_as_compacted`, docs/findings.md "Compacted topics") and raises nothing;
//! `verify`'s `.txnindex` comparison must read the same bytes the same way, since Kafka
//! writes exactly these index entries (`CleanedTransactionMetadata.onControlBatchRead`).

use super::*;

/// [`verify_cleaned`] without declaring the topic compacted.
fn verify_cleaned_undeclared(
    p: PartitionBuilder,
    txn_indexes: &[(usize, Vec<AbortedTxn>)],
) -> (ScanReport, PartitionVerification) {
    let dir = tempfile::tempdir().unwrap();
    let opts = PartitionFileOptions {
        snapshots: false,
        ..PartitionFileOptions::default()
    };
    let mut m = p.broker_files(opts).write(dir.path()).unwrap();
    rebase_first_segment(&mut m);
    for (s, entries) in txn_indexes {
        let path = m.segments[*s].1.with_extension("txnindex");
        if entries.is_empty() {
            let _ = std::fs::remove_file(&path);
        } else {
            std::fs::write(&path, encode_txn_index(entries)).unwrap();
        }
    }
    let r = scan_dir(&m.dir, false);
    let req = Request::new([&m.dir]).with_options(options(false));
    let a = request::verify(&req, None).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    (r, a.report.partitions.into_iter().next().unwrap())
}

fn txnindex_findings(v: &PartitionVerification) -> Vec<&Finding> {
    v.findings
        .iter()
        .filter(|f| f.kind == Kind::TxnindexMismatch)
        .collect()
}

/// `LogCleanerTest.testMultiPassSegmentCleaningWithAbortedTransactions`, first pass, with
/// the cleanup policy unknown: Kafka asserts `collectAbortedTransactions` still returns
/// (1, 8–10, 11) and (2, 11–16, 17) though both transactions' data is gone (the ABORTs
/// were kept because their batches were read in the pass). The scan is clean (the rebuilt
/// batch at 0–1 is a cleaner trace), but `verify` calls both entries "extra" (error):
/// `src/verify/checks/txnindex.rs` decides "cleaned" from `r.compacted == Some(true)` only,
/// not from the cleaner traces the replay already relies on.
#[test]
fn multi_pass_cleaning_index_entries_with_policy_unknown() {
    let (r, v) = verify_cleaned_undeclared(
        super::txnindex::multi_pass_first_for_unknown_policy(),
        &[(
            0,
            vec![aborted_txn(1, 8, 10, 11), aborted_txn(2, 11, 16, 17)],
        )],
    );
    assert_eq!(r.partitions[0].compacted, None);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let m = txnindex_findings(&v);
    assert!(m.is_empty(), "{m:#?}");
}

/// `cleaner_keeps_the_entry_last_stable_offset` (the cleaner copies an aborted transaction's
/// entry as written, `CleanedTransactionMetadata.onControlBatchRead`) with the cleanup policy
/// unknown: producer 2's emptied batch at 2 is a cleaner trace, the ABORT's entry keeps
/// lastStableOffset 1 though the batch that set it is gone. `verify` calls it "wrong".
#[test]
fn cleaner_keeps_the_entry_last_stable_offset_policy_unknown() {
    let (p1, p2) = (txn(1), txn(2));
    let mut p = log();
    p.append(keyed(Producer::PLAIN, -1, &["a"])); // 0
    p.skip_offsets(1); // producer 1's [1], superseded at 6
    p.append(emptied(p2, 0, 1)); // 2
    p.abort(p2, 0); // 3
    p.append(keyed(p1, 1, &["3"])); // 4
    p.commit(p1, 0); // 5
    p.append(keyed(Producer::PLAIN, -1, &["1"])); // 6
    let (r, v) = verify_cleaned_undeclared(p, &[(0, vec![aborted_txn(2, 2, 3, 1)])]);
    assert_eq!(r.partitions[0].compacted, None);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let m = txnindex_findings(&v);
    assert!(m.is_empty(), "{m:#?}");
}

/// The twins the old verdict must still give. (1) With the policy unknown and no trace of the
/// cleaner in the batches (producer 2's batch at 2 whole, producer 1's at 1 simply absent:
/// an offset gap alone is no trace), nothing says batches were removed: the entry's
/// lastStableOffset 1, below the 4 the log gives, is reported (a warning: a lower one changes
/// no fetch), and the evidence names no compaction. (2) With the traces (producer 2's batch emptied), a lastStableOffset
/// *above* what the cleaned log gives is still wrong, and the evidence says the partition
/// was read as compacted from the cleaner's traces alone.
#[test]
fn entries_cleaning_cannot_explain_policy_unknown_are_reported() {
    let build = |emptied_batch: bool| {
        let (p1, p2) = (txn(1), txn(2));
        let mut p = log();
        p.append(keyed(Producer::PLAIN, -1, &["a"])); // 0
        p.skip_offsets(1); // producer 1's [1]
        if emptied_batch {
            p.append(emptied(p2, 0, 1)); // 2
        } else {
            p.append(keyed(p2, 0, &["2"])); // 2
        }
        p.abort(p2, 0); // 3
        p.append(keyed(p1, 1, &["3"])); // 4
        p.commit(p1, 0); // 5
        p.append(keyed(Producer::PLAIN, -1, &["1"])); // 6
        p
    };
    let (r, v) = verify_cleaned_undeclared(build(false), &[(0, vec![aborted_txn(2, 2, 3, 1)])]);
    assert_eq!(r.partitions[0].compacted, None);
    assert_eq!(r.partitions[0].compaction(), None);
    let m = txnindex_findings(&v);
    assert_eq!(m.len(), 1, "{:#?}", v.findings);
    // Reported (lower than any broker writes) as the warning that changes no fetch:
    // `collectAbortedTxns` only ends its search at a lastStableOffset.
    assert!(
        m[0].message
            .contains("lastStableOffset below the one the markers give"),
        "{m:#?}"
    );
    assert_eq!(m[0].severity, klogscan::finding::Severity::Warning);
    assert!(
        m[0].evidence.get("treated_as_compacted").is_none(),
        "{m:#?}"
    );

    let (r, v) = verify_cleaned_undeclared(build(true), &[(0, vec![aborted_txn(2, 2, 3, 5)])]);
    assert_eq!(
        r.partitions[0].compaction(),
        Some(klogscan::results::Compaction::CleanerTraces)
    );
    let m = txnindex_findings(&v);
    assert_eq!(m.len(), 1, "{:#?}", v.findings);
    assert!(m[0].message.contains("wrong"), "{m:#?}");
    assert_eq!(m[0].evidence["treated_as_compacted"], "cleaner_traces");
}
