//! `LogSegmentTest`'s recovery cases and `TransactionIndexTest`'s on-disk cases as a
//! broker's log dir: `verify` predicts what `LogSegment.recover` does on the next start
//! (which segments it recovers, where it truncates, the log end after), and the scan's
//! replay gives the aborted transactions the rebuilt `.txnindex` holds.

use super::{aborted, lso, of_kind, recovered, scan_dir, seg, verify, write_ld};
use klogscan::finding::Kind;
use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use tempfile::TempDir;

/// An unclean shutdown with the recovery point at `rp`.
fn unclean(rp: i64) -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ls", 0, rp)
}

/// Deterministic "nonsense" bytes (Kafka's `writeNonsenseToFile` writes random ones).
fn nonsense(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Overwrite `file` from `from` to its end with nonsense.
fn overwrite_from(file: &std::path::Path, from: usize, seed: u64) {
    let mut b = std::fs::read(file).unwrap();
    let n = b.len() - from;
    b[from..].copy_from_slice(&nonsense(n, seed));
    std::fs::write(file, b).unwrap();
}

fn file(m: &Manifest, base: i64, ext: &str) -> std::path::PathBuf {
    m.dir.join(format!("{base:020}.{ext}"))
}

/// `n` single-record plain batches (values `0`…), as `LogSegmentTest` appends them.
fn single_records(n: usize, files: PartitionFileOptions) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("ls", 0).broker_files(files);
    for i in 0..n {
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    p
}

// ----- LogSegmentTest ---------------------------------------------------------------------

/// The segment of `LogSegmentTest.testRecoverTransactionIndex` (base 100, leader epoch
/// 15): producer 5's transaction at 100–101 and producer 10's at 102–103 (both sequence
/// 100), plain data 104–105, producer 10's ABORT (106), producer 5's COMMIT (107).
fn recover_txn_index_segment(p: &mut PartitionBuilder, seq10: i32) {
    let (t5, t10) = (
        Producer::transactional(5, 0),
        Producer::transactional(10, 0),
    );
    p.append(Batch::new(t5).values(["a", "b"]).sequence(100));
    p.append(Batch::new(t10).values(["a", "b"]).sequence(seq10));
    p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    p.abort(t10, 0);
    p.commit(t5, 0);
}

/// `LogSegmentTest.testRecoverTransactionIndex`: recovering the segment reads to 108 and
/// rebuilds its index with one entry, `(10, 102, 106, LSO 100)` (producer 5's transaction
/// was open at the ABORT). Recovered again with producer 10's transaction begun at 75 in
/// an earlier segment (here: a segment at 75 holding its first batch, and the snapshot at
/// 100 holding its open transaction), the entry is `(10, 75, 106, 100)`. After an unclean
/// shutdown with the recovery point at 100 `verify` predicts the recovery of that segment
/// alone, and the index on disk agrees with the markers.
#[test]
fn recover_transaction_index() {
    let mut p = PartitionBuilder::new("ls", 0)
        .start_offset(100)
        .leader_epoch(15)
        .broker_files(PartitionFileOptions::default());
    recover_txn_index_segment(&mut p, 100);
    let (_d, m) = write_ld(unclean(100), p);
    assert_eq!(m.log_end_offset, 108);
    let v = verify(&m);
    assert_eq!(recovered(&v), vec![seg(100)]);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);
    assert_eq!(v.prediction.log_end_offset_after, Some(108));
    let r = scan_dir(&m.dir);
    assert_eq!(aborted(&r), vec![(10, 102, 106, 100)]);
    assert_eq!(lso(&r), Some(108));

    let t10 = Producer::transactional(10, 0);
    let mut p = PartitionBuilder::new("ls", 0)
        .start_offset(75)
        .leader_epoch(15)
        .broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t10).values(["x"]).sequence(99)); // 75
    p.append(Batch::new(Producer::PLAIN).records(24)); // 76..99
    p.roll();
    recover_txn_index_segment(&mut p, 100);
    let (_d, m) = write_ld(unclean(100), p);
    assert_eq!(m.segments.len(), 2);
    assert!(file(&m, 100, "snapshot").exists());
    let v = verify(&m);
    assert_eq!(recovered(&v), vec![seg(100)]);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);
    let r = scan_dir(&m.dir);
    assert_eq!(aborted(&r), vec![(10, 75, 106, 100)]);
    assert_eq!(r.partitions[0].outcome().aborted[0].segment, 1);
}

/// `LogSegmentTest.testRecoveryWithCorruptMessage`: 20 single-record batches; nonsense
/// from somewhere in the first 15 bytes of batch k to the end of the file; recovery keeps
/// exactly the batches before k. Here for k = 0, 1, 7, 19 and every start 0–14 bytes into
/// the batch: after an unclean shutdown `verify` predicts the truncation at batch k's
/// position, the log end k afterwards.
#[test]
fn recovery_with_corrupt_message() {
    let p = single_records(20, PartitionFileOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let positions: Vec<u64> = p
        .write(dir.path())
        .unwrap()
        .batches
        .iter()
        .map(|b| b.position)
        .collect();
    for k in [0usize, 1, 7, 19] {
        for delta in 0..15u64 {
            let (_d, m): (TempDir, Manifest) = write_ld(
                unclean(0),
                single_records(20, PartitionFileOptions::default()),
            );
            overwrite_from(
                &file(&m, 0, "log"),
                (positions[k] + delta) as usize,
                k as u64 * 31 + delta,
            );
            let v = verify(&m);
            let pr = &v.prediction;
            let t = pr
                .truncation
                .as_ref()
                .unwrap_or_else(|| panic!("k {k} delta {delta}: no truncation {pr:#?}"));
            assert_eq!(
                (t.segment.as_str(), t.position, t.offset),
                (seg(0).as_str(), positions[k], k as i64),
                "k {k} delta {delta}"
            );
            assert_eq!(
                pr.log_end_offset_after,
                Some(k as i64),
                "k {k} delta {delta}"
            );
        }
    }
}

/// `LogSegmentTest.testRecoveryRebuildsEpochCache`: batches at 104 (leader epoch 0), 106
/// and 108 (epoch 1), 110 (epoch 2): recovery rebuilds the epoch cache as `(0, 104)`,
/// `(1, 106)`, `(2, 110)`. The scan derives the same entries; a `leader-epoch-checkpoint`
/// holding them raises nothing, one without epoch 2 is a mismatch.
#[test]
fn recovery_rebuilds_epoch_cache() {
    let mut p = PartitionBuilder::new("ls", 0)
        .start_offset(104)
        .broker_files(PartitionFileOptions::default());
    for e in [0, 1, 1, 2] {
        p.set_leader_epoch(e);
        p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    }
    let (_d, m) = write_ld(unclean(104), p);
    let r = scan_dir(&m.dir);
    assert_eq!(
        r.partitions[0].leader_epochs(),
        &[(0, 104), (1, 106), (2, 110)]
    );
    let v = verify(&m);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);
    assert_eq!(recovered(&v), vec![seg(104)]);
    std::fs::write(
        m.dir.join("leader-epoch-checkpoint"),
        "0\n2\n0 104\n1 106\n",
    )
    .unwrap();
    let v = verify(&m);
    assert_eq!(
        of_kind(&v.findings, Kind::LeaderEpochCheckpointMismatch).len(),
        1,
        "{:#?}",
        v.findings
    );
}

// ----- TransactionIndexTest -----------------------------------------------------------------

/// The four entries of `TransactionIndexTest.testSanityCheck`.
fn four_entries() -> Vec<AbortedTxn> {
    [
        (0, 0, 10, 11),
        (1, 5, 15, 13),
        (2, 18, 35, 25),
        (3, 32, 50, 40),
    ]
    .map(
        |(producer_id, first_offset, last_offset, last_stable_offset)| AbortedTxn {
            producer_id,
            first_offset,
            last_offset,
            last_stable_offset,
        },
    )
    .to_vec()
}

/// A segment at `base` of 60 plain records whose `.txnindex` holds `entries`, after a
/// clean shutdown.
fn with_txnindex(base: i64, entries: &[AbortedTxn]) -> (TempDir, Manifest, PartitionVerification) {
    let mut p = PartitionBuilder::new("ls", 0)
        .start_offset(base)
        .broker_files(PartitionFileOptions::default());
    p.append(Batch::new(Producer::PLAIN).records(60));
    let (d, m) = write_ld(LogDirBuilder::new(1), p);
    std::fs::write(file(&m, base, "txnindex"), encode_txn_index(entries)).unwrap();
    let v = verify(&m);
    (d, m, v)
}

/// `TransactionIndexTest.testSanityCheck`: an index whose entries end at 10–50, opened for
/// a segment based at 100, fails the sanity check (`CorruptIndexException`: a last offset
/// below the start offset). On disk: a `txnindex_mismatch` quoting Kafka's message, and the
/// segment recovered at load even after a clean shutdown (the check runs at every load).
/// Near miss: the same index in a segment based at 0 passes the check, so nothing is
/// recovered (its entries, with no ABORT marker behind them, are still reported).
#[test]
fn txn_index_sanity_check() {
    let (_d, _m, v) = with_txnindex(100, &four_entries());
    let bad = of_kind(&v.findings, Kind::TxnindexMismatch);
    assert!(
        bad.iter()
            .any(|f| f.message.contains("is less than start offset 100")),
        "{:#?}",
        v.findings
    );
    assert_eq!(recovered(&v), vec![seg(100)]);
    assert!(
        v.prediction.recovered_segments[0]
            .reason
            .starts_with("corrupt transaction index"),
        "{:?}",
        v.prediction.recovered_segments
    );
    let (_d, _m, v) = with_txnindex(0, &four_entries());
    assert!(recovered(&v).is_empty(), "{:?}", recovered(&v));
    assert!(
        !of_kind(&v.findings, Kind::TxnindexMismatch).is_empty(),
        "{:#?}",
        v.findings
    );
}

/// `TransactionIndexTest.testLastOffsetMustIncrease` and `testLastOffsetCannotDecrease`:
/// the broker never appends an entry whose last offset is not above the previous one's
/// (`IllegalArgumentException`). An index on disk holding one (15 then 15, or 15 then 10)
/// is reported as malformed; the load does not check it, so nothing is recovered.
#[test]
fn txn_index_last_offset_must_increase() {
    for second_last in [15, 10] {
        let mut e = four_entries();
        e.truncate(2);
        e[0] = AbortedTxn {
            producer_id: 1,
            first_offset: 5,
            last_offset: 15,
            last_stable_offset: 13,
        };
        e[1] = AbortedTxn {
            producer_id: 0,
            first_offset: 0,
            last_offset: second_last,
            last_stable_offset: 11,
        };
        let (_d, _m, v) = with_txnindex(0, &e);
        assert!(
            of_kind(&v.findings, Kind::TxnindexMismatch)
                .iter()
                .any(|f| f.message.contains("lastOffset")),
            "{second_last}: {:#?}",
            v.findings
        );
        assert!(recovered(&v).is_empty());
    }
}

/// Producer 1's transaction (0–4) aborted at 8, after a plain batch (5–7) whose CRC is
/// broken; an unclean shutdown with the recovery point at 0.
fn abort_behind_a_broken_batch() -> (TempDir, Manifest, u64) {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ls", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(5));
    let i = p.append(Batch::new(Producer::PLAIN).records(3));
    p.abort(t, 0);
    let (d, m) = write_ld(unclean(0), p);
    let (pos, size) = (m.batches[i].position, m.batches[i].size);
    let log = file(&m, 0, "log");
    let mut b = std::fs::read(&log).unwrap();
    b[(pos + size - 1) as usize] ^= 0xff;
    std::fs::write(&log, b).unwrap();
    (d, m, pos)
}

/// `TransactionIndexTest.testTruncate` through `LogSegment.recover`: truncating the log
/// below an ABORT drops its index entry (`truncateTo` keeps only entries whose last offset
/// is below the truncation point; recovery rebuilds the index from the batches it keeps).
/// On disk: the transaction's ABORT (8) sits after a batch (5–7) whose CRC is broken; after
/// an unclean shutdown recovery truncates there (log end 5), removing the marker.
#[test]
fn truncation_removes_an_abort_marker() {
    let (_d, m, pos) = abort_behind_a_broken_batch();
    let v = verify(&m);
    let pr = &v.prediction;
    let t = pr.truncation.as_ref().expect("a truncation");
    assert_eq!((t.position, t.offset), (pos, 5));
    assert_eq!(pr.log_end_offset_after, Some(5));
    assert_eq!(of_kind(&v.findings, Kind::CrcMismatch)[0].offset, Some(5));
    // the log as it is still holds the aborted range
    let r = scan_dir(&m.dir);
    assert_eq!(aborted(&r), vec![(1, 0, 8, 9)]);
    assert_eq!(lso(&r), Some(9));
}

/// The state the broker starts with after that truncation: the rebuild replays the kept
/// batches (0–4), so producer 1's transaction is open again — no marker will ever come
/// for it on this replica (the coordinator finished it), and the last stable offset stays
/// at 0 (`ProducerStateManager` rebuilt by `LogLoader` from the truncated log).
#[test]
fn truncation_reopens_the_aborted_transaction() {
    let (_d, m, _) = abort_behind_a_broken_batch();
    let v = verify(&m);
    // Which producers the kept batches hold is not derived (their first batches are not
    // kept by the scan); the open transaction is.
    assert_eq!(v.prediction.producer_state.producers, None);
    assert_eq!(v.prediction.producer_state.open_transactions, Some(1));
}

/// An entry's version byte as `TransactionIndex` reads it: the high byte of the int16.
fn txnindex_with_version_byte(byte: u8, clean: bool) -> PartitionVerification {
    txnindex_with_version_byte_and(byte, clean, false)
}

/// [`txnindex_with_version_byte`], the segment's offset index removed when `no_index`.
fn txnindex_with_version_byte_and(byte: u8, clean: bool, no_index: bool) -> PartitionVerification {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ls", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(5));
    p.abort(t, 0);
    let (_d, m) = write_ld(unclean(0).clean_shutdown(clean), p);
    let f = file(&m, 0, "txnindex");
    let mut b = std::fs::read(&f).unwrap();
    assert_eq!(b.len(), 34);
    b[0] = byte;
    std::fs::write(&f, b).unwrap();
    if no_index {
        std::fs::remove_file(file(&m, 0, "index")).unwrap();
    }
    verify(&m)
}

/// `TransactionIndexTest.testAbortedTxnSerde` on disk: an entry written by the broker
/// (version 0) agrees with its marker. A version byte of 0xff reads as −1, which Kafka's
/// iterator does not refuse (only a version above 0).
#[test]
fn txn_index_entry_version() {
    for byte in [0u8, 0xff] {
        for clean in [true, false] {
            let v = txnindex_with_version_byte(byte, clean);
            assert!(v.prediction.load_failure.is_none());
            assert!(
                of_kind(&v.findings, Kind::TxnindexMismatch).is_empty(),
                "{byte} {clean}: {:#?}",
                v.findings
            );
        }
    }
}

/// A version byte above 0: the load's `TransactionIndex.sanityCheck` iterates the entries
/// and the iterator throws `KafkaException` ("Unexpected aborted transaction version"), not
/// the `CorruptIndexException` `LogLoader.loadSegmentFiles` recovers from; `LogManager`
/// rethrows it and the broker does not start — after a clean shutdown too.
#[test]
fn txn_index_version_above_0_fails_the_load() {
    for clean in [true, false] {
        let v = txnindex_with_version_byte(1, clean);
        let f = v.prediction.load_failure.as_ref().expect("a load failure");
        assert!(f.exception.contains("KafkaException"), "{f:?}");
    }
}

/// The twin of [`txn_index_version_above_0_fails_the_load`] without the offset index:
/// `LogSegment.sanityCheck` throws `NoSuchFileException` before it reaches the transaction
/// index, `LogLoader.loadSegmentFiles` recovers the segment (which rewrites the index from
/// the markers) and the log loads.
#[test]
fn txn_index_version_above_0_without_an_offset_index_is_recovered() {
    for clean in [true, false] {
        let v = txnindex_with_version_byte_and(1, clean, true);
        assert!(
            v.prediction.load_failure.is_none(),
            "{:?}",
            v.prediction.load_failure
        );
        assert_eq!(v.prediction.recovered_segments.len(), 1);
        let f = of_kind(&v.findings, Kind::TxnindexMismatch);
        assert_eq!(f.len(), 1, "{:#?}", v.findings);
        assert!(
            f[0].broker_behaviour.contains("recovered at load"),
            "{:?}",
            f[0]
        );
    }
    // With the offset index in place, the finding says why the load fails.
    let v = txnindex_with_version_byte(1, false);
    let f = of_kind(&v.findings, Kind::TxnindexMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert!(
        f[0].message
            .contains("Unexpected aborted transaction version 1"),
        "{:?}",
        f[0]
    );
    assert!(
        f[0].broker_behaviour.contains("fails to load"),
        "{:?}",
        f[0]
    );
    assert!(
        v.prediction
            .load_failure
            .as_ref()
            .unwrap()
            .message
            .contains("00000000000000000000.log")
    );
}
