//! `TransactionIndexTest`: the aborted ranges of a `.txnindex`, overlapping as aborted
//! transactions do, and the position a reopened index appends at.

use super::{assert_no_alarm, file, findings_on, log_dir, path, recovered, verify, write};
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, Manifest, PartitionBuilder, PartitionFileOptions, Producer};
use tempfile::TempDir;

/// The aborted ranges of `TransactionIndexTest`'s four entries as a log: producer 0's
/// transaction 0–10, producer 1's 5–15, producer 2's 18–35 and producer 3's 32–50 (data,
/// then the ABORT marker at the range's last offset), plain batches between; with `fifth`,
/// producer 3's second transaction 51–60 after them. Cleanly shut down.
fn overlapping_aborts(fifth: bool) -> (TempDir, Manifest) {
    let t = |id| Producer::transactional(id, 0);
    let mut p =
        PartitionBuilder::new(super::TOPIC, 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t(0)).records(5)); // 0–4
    p.append(Batch::new(t(1)).records(5)); // 5–9
    p.abort(t(0), 0); // 10
    p.append(Batch::new(Producer::PLAIN).records(4)); // 11–14
    p.abort(t(1), 0); // 15
    p.append(Batch::new(Producer::PLAIN).records(2)); // 16–17
    p.append(Batch::new(t(2)).records(14)); // 18–31
    p.append(Batch::new(t(3)).records(3)); // 32–34
    p.abort(t(2), 0); // 35
    p.append(Batch::new(Producer::PLAIN).records(14)); // 36–49
    p.abort(t(3), 0); // 50
    if fifth {
        p.append(Batch::new(t(3)).records(9)); // 51–59
        p.abort(t(3), 0); // 60
    }
    write(log_dir(true), p)
}

/// `(producer id, first offset, last offset)` of each `.txnindex` entry, in file order.
fn ranges(m: &Manifest) -> Vec<(i64, i64, i64)> {
    (std::fs::read(path(m, 0, "txnindex"))
        .unwrap()
        .chunks_exact(34))
    .map(|e| {
        let at = |i: usize| i64::from_be_bytes(e[i..i + 8].try_into().unwrap());
        (at(2), at(10), at(18))
    })
    .collect()
}

/// `TransactionIndexTest.testCollectAbortedTransactions`: four aborted ranges that overlap
/// (0–10, 5–15, 18–35, 32–50) are appended in the order of their last offsets, and a fetch
/// collects every range that meets it. On disk: the log of those four transactions and the
/// index the broker writes for it — the four ranges, overlapping, in that order — raise
/// nothing. Near miss: the index without the second range (5–15) disagrees with the
/// markers: `txnindex_mismatch`; the load does not compare the index with the log (its
/// sanity check only bounds each last offset below by the segment's base), so nothing is
/// recovered.
#[test]
fn overlapping_aborted_ranges() {
    let (_d, m) = overlapping_aborts(false);
    assert_eq!(
        ranges(&m),
        [(0, 0, 10), (1, 5, 15), (2, 18, 35), (3, 32, 50)]
    );
    assert_no_alarm(&m);
    let idx = path(&m, 0, "txnindex");
    let mut b = std::fs::read(&idx).unwrap();
    b.drain(34..68);
    std::fs::write(&idx, b).unwrap();
    let v = verify(&m);
    let bad = findings_on(&v, Kind::TxnindexMismatch, &file(0, "txnindex"));
    assert!(!bad.is_empty(), "{:#?}", v.findings);
    assert!(recovered(&v).is_empty());
    assert!(v.prediction.load_failure.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(51));
}

/// `TransactionIndexTest.testPositionSetCorrectlyWhenOpened`: an index reopened from its file
/// appends after the entries already there, so the fifth range (producer 3's second
/// transaction) follows the four. On disk: the five ranges in order raise nothing. Near
/// miss: the fifth written at position 0 (over the first, as an index reopened at its
/// start would): the ranges go back (60, then 15) and range 0–10 is lost —
/// `txnindex_mismatch`; every last offset is still at or above the base, so the load
/// neither fails nor recovers the segment.
#[test]
fn reopened_txn_index_appends_at_its_end() {
    let (_d, m) = overlapping_aborts(true);
    assert_eq!(ranges(&m).len(), 5);
    assert_eq!(ranges(&m)[4], (3, 51, 60));
    assert_no_alarm(&m);
    let idx = path(&m, 0, "txnindex");
    let b = std::fs::read(&idx).unwrap();
    let overwritten = [&b[4 * 34..], &b[34..4 * 34]].concat();
    std::fs::write(&idx, overwritten).unwrap();
    let v = verify(&m);
    let bad = findings_on(&v, Kind::TxnindexMismatch, &file(0, "txnindex"));
    assert!(!bad.is_empty(), "{:#?}", v.findings);
    assert!(recovered(&v).is_empty());
    assert!(v.prediction.load_failure.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(61));
}
