//! `TransactionIndexTest.testBinaryCompatibilityWithHandWrittenClass` (KAFKA-19562, 4.4):
//! the generated `AbortedTxn` message writes the bytes the hand-written class wrote — and
//! reads them otherwise.

use super::*;
use klogscan::testkit::{Batch, PartitionBuilder, Producer};

const TOPIC: &str = "test";

/// An aborted-transaction entry as the 2024-10 hand-written `AbortedTxn` wrote it: a
/// version (an int16), then producer id, first offset, last offset and last stable offset
/// (int64s), big-endian: 34 bytes.
fn entry(version: i16, pid: i64, first: i64, last: i64, lso: i64) -> Vec<u8> {
    let mut b = version.to_be_bytes().to_vec();
    for v in [pid, first, last, lso] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    b
}

/// The test's values: producer 983493 aborts a transaction begun at 137 with its marker at
/// 299 while another transaction, begun at 200, is still open (the entry's last stable
/// offset: `ProducerStateManager.lastStableOffset` skips the completing producer's own
/// transaction). The log: the segment starts at 137, producer 983493's batch 137–199,
/// producer 7's 200–298, the ABORT at 299, producer 7's COMMIT at 300. The testkit's
/// `.txnindex` is the 34 bytes built by hand (version 0 — what
/// `MessageUtil.toVersionPrefixedByteBuffer` writes for `AbortedTxn`'s only version — then
/// 983493, 137, 299, 200), and the log dir is quiet for every release (none given, 4.3.0,
/// 4.4.0). Near misses: the version int16 1 (`00 01`) and −256 (`ff 00`). Up to 4.3
/// `AbortedTxn.version()` read the first byte alone, 0 and −1, neither above the current 0:
/// the entry loads and reads as the abort, quiet. Since 4.4
/// `TransactionIndex`'s iterator reads the whole int16 and accepts 0 to 0: it throws a
/// `KafkaException`, which `LogLoader.loadSegmentFiles` does not catch (it is neither a
/// missing nor a corrupt index) — the log fails to load, whatever the shutdown.
/// The test's log: the segment from 137, producer 983493's batch 137–199, producer 7's
/// 200–298, 983493's ABORT at 299, 7's COMMIT at 300.
fn aborted_while_another_is_open() -> Written {
    let (a, b) = (
        Producer::transactional(983_493, 0),
        Producer::transactional(7, 0),
    );
    let mut p = PartitionBuilder::new(TOPIC, 0).start_offset(137);
    p.append(Batch::new(a).records(63));
    p.append(Batch::new(b).records(99));
    p.abort(a, 0);
    p.commit(b, 0);
    Written::new(LogDirBuilder::new(1).cluster_id("c1").partition(p))
}

#[test]
fn a_hand_written_entry_is_the_generated_one_and_4_4_reads_the_whole_version() {
    let w = aborted_while_another_is_open();
    let txn = w.pdir().join(format!("{:020}.txnindex", 137));
    let hand = entry(0, 983_493, 137, 299, 200);
    assert_eq!(hand.len(), 34);
    assert_eq!(std::fs::read(&txn).unwrap(), hand);
    let (s, v) = assert_quiet(&w);
    assert!(v.findings().next().is_none(), "{}", all(&s, &v));
    let (v43, v44) = (BrokerVersion(4, 3, 0), BrokerVersion(4, 4, 0));
    for ver in [v43, v44] {
        let v = w.verify_as(ver);
        assert!(v.findings().next().is_none(), "{ver:?}: {}", all(&s, &v));
    }
    // Near misses: the version int16 1 (`00 01`) and −256 (`ff 00`, first byte −1).
    for version in [1i16, -256] {
        std::fs::write(&txn, entry(version, 983_493, 137, 299, 200)).unwrap();
        for v in [w.verify(), w.verify_as(v43)] {
            assert!(v.findings().next().is_none(), "{version}: {}", all(&s, &v));
            assert!(v.partitions[0].prediction.load_failure.is_none());
        }
        let v = w.verify_as(v44);
        let failure = v.partitions[0].prediction.load_failure.as_ref();
        let words = format!(
            "Unexpected aborted transaction version {version} in transaction index {}, \
             supported version range is 0 to 0",
            txn.display()
        );
        assert!(
            failure.is_some_and(|f| f.kind == "txnindex_mismatch"
                && f.exception.contains("KafkaException")
                && f.message.ends_with(&words)),
            "{failure:#?}\n{}",
            all(&s, &v)
        );
        let f = of_kind(v.findings(), Kind::TxnindexMismatch);
        assert_eq!(f.len(), 1, "{}", all(&s, &v));
        assert!(f[0].broker_behaviour.contains("KafkaException at load"));
    }
}

/// The same entry of version int16 1 (`00 01`), in a `.txnindex.swap` the load renames in
/// with its segment (`LogLoader.load` completes a swap — `137.log.swap`, `.index.swap`,
/// `.txnindex.swap` — before `loadSegmentFiles` runs `LogSegment.sanityCheck` on the
/// swapped-in segment, transaction index included): a 4.4 broker fails the load there,
/// earlier ones read the first byte (0) and load it. Near miss: the same swap under 4.3.0
/// and with no release stated — no load failure.
#[test]
fn a_swapped_in_transaction_index_of_version_1_fails_the_load_since_4_4() {
    let w = aborted_while_another_is_open();
    let name = |ext: &str| w.pdir().join(format!("{:020}.{ext}", 137));
    for ext in ["log", "index"] {
        let swap = name(&format!("{ext}.swap"));
        std::fs::copy(name(ext), swap).unwrap();
    }
    let swap = name("txnindex.swap");
    std::fs::write(&swap, entry(1, 983_493, 137, 299, 200)).unwrap();
    let v44 = w.verify_as(BrokerVersion(4, 4, 0));
    let failure = v44.partitions[0].prediction.load_failure.as_ref();
    let shown = name("txnindex").display().to_string();
    assert!(
        failure.is_some_and(|f| f.exception.contains("KafkaException")
            && f.message
                .contains("Unexpected aborted transaction version 1")
            && f.message.contains(&shown)),
        "{failure:#?}"
    );
    for v in [w.verify_as(BrokerVersion(4, 3, 0)), w.verify()] {
        let failure = v.partitions[0].prediction.load_failure.as_ref();
        assert!(failure.is_none(), "{failure:#?}");
    }
}
