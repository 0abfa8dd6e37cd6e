//! Transactions whose data is partly remote: a transaction aborted inside what is now a
//! remote segment, one begun in a remote segment and committed in the local log.

use super::check;
use klogscan::finding::Kind;
use klogscan::testkit::remote_log::TieredLog;
use klogscan::testkit::{Batch, PartitionBuilder, Producer};

fn txn_a() -> Producer {
    Producer::transactional(7, 0)
}

fn txn_b() -> Producer {
    Producer::transactional(8, 0)
}

/// `orders-0`, epoch 0, a minute between batches: [0,19] plain, B's four records at 10,
/// B's ABORT at 14, plain; [20,29] A's first batch at 20, plain; [30,39] plain;
/// [40,…] plain, then A's COMMIT at 50 (when `commit`) and four plain records.
fn history(commit: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .leader_epoch(0)
        .time_step(60_000);
    p.append(Batch::new(Producer::PLAIN).records(10));
    p.append(Batch::new(txn_b()).records(4));
    p.abort(txn_b(), 0);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.roll();
    p.append(Batch::new(txn_a()).records(5));
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(10));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(10));
    if commit {
        p.commit(txn_a(), 0);
    }
    p.append(Batch::new(Producer::PLAIN).records(4));
    p
}

/// `RemoteLogManagerTest.testCopyLogSegmentsToRemoteShouldCopyExpectedLogSegment` (a
/// segment is copied with its producer snapshot and transaction index, the
/// `RemoteLogSegmentMetadata` published around it) and
/// `testCandidateLogSegmentsSkipsSegmentsAfterLastStableOffset` (only segments below the
/// LSO are copied: [20,29], holding A's first batch, is copied once A's COMMIT at 50 moved
/// the LSO past it), with `UnifiedLog.fetchOffsetSnapshot`'s LSO and
/// `RemoteLogManager.read`'s aborted transactions collected from the remote transaction
/// indexes (`collectAbortedTransactions`) for read_committed fetches of the remote range.
///
/// [0,19] and [20,29] remote, the local log from 30: the remote replay sees B aborted and
/// A begun, the local log A's COMMIT; the local-only scan starts from the producer
/// snapshot at 30 holding A open. Quiet; one commit, one abort, the LSO at the log end.
#[test]
fn transactions_partly_remote_aborted_and_committed() {
    let mut t = TieredLog::new(history(true));
    t.copy(0);
    t.copy(1);
    t.local_from(2);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    c.assert_quiet();
    let p = c.part(0, true);
    assert_eq!(
        (
            p.transactions.committed,
            p.transactions.aborted,
            p.transactions.open
        ),
        (1, 1, 0)
    );
    assert_eq!(p.last_stable_offset, p.log_end_offset);
    assert_eq!(p.log_start_offset, Some(0));
    let local = c.part(0, false);
    assert_eq!(local.transactions.open, 0);
    assert_eq!(local.last_stable_offset, local.log_end_offset);
}

/// The twin: A's COMMIT never came. The LSO stays at 20 (`ProducerStateManager.
/// firstUnstableOffset`), so `RemoteLogManager` copies [0,19] only and the local log keeps
/// [20,…]: a `hanging_transaction` at 20 (producer 7), in both scans.
#[test]
fn transaction_never_committed_blocks_the_lso_and_hangs() {
    let mut t = TieredLog::new(history(false));
    t.copy(0);
    t.local_from(1);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    let (plain, remote) = c.of(Kind::HangingTransaction);
    for v in [&plain, &remote] {
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!((v[0].offset, v[0].producer_id), (Some(20), Some(7)));
        assert!(v[0].severity >= klogscan::finding::Severity::Warning);
    }
    assert_eq!(c.part(0, true).last_stable_offset, Some(20));
}
