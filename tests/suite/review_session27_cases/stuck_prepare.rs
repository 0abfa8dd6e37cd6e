//! `transaction_stuck_in_prepare`'s three causes (`cluster::txns::rules::stuck_in_prepare`,
//! `d24b247`): "every listed partition holds the marker … the completion was lost
//! (KAFKA-16352 class)" when each listed partition is in the inputs with a marker, "markers
//! not confirmed" when none lacks it but some are absent or hold no data, "markers not
//! delivered" otherwise.
//!
//! Kafka: once a Prepare* record is written the coordinator sends the transaction's result
//! (COMMIT for PrepareCommit, ABORT for PrepareAbort) to every partition of
//! `TransactionMetadata.topicPartitions` (`TransactionMarkerChannelManager.
//! addTxnMarkersToSend`), whether or not the producer's data reached it — the leader writes
//! the marker all the same (`ProducerStateManager`/`ProducerAppendInfo.appendEndTxnMarker`
//! needs no open transaction) — and writes Complete* once every partition acknowledged
//! (`maybeWriteTxnCompletion`). KAFKA-16352: `removeMarkersForTxn` dropped a reloaded
//! transaction's pending completion (`TransactionMarkerChannelManagerTest.
//! shouldNotLoseTxnCompletionAfterLoad`) — for commits and aborts alike.

use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::Producer;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use tempfile::TempDir;

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);

/// Write `c` as broker 1's log dir and scan it a day after the testkit's start (`--now`).
fn scan(c: &Cluster) -> (TempDir, ScanReport) {
    let dir = tempfile::tempdir().unwrap();
    c.write(dir.path(), 1).unwrap();
    let opts = ScanOptions::default().with_now_ms(DEFAULT_START_MS + 86_400_000);
    let r = request::run(&Request::new([dir.path()]).with_options(opts))
        .unwrap()
        .report;
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    (dir, r)
}

/// The one `transaction_stuck_in_prepare` finding.
fn stuck(r: &ScanReport) -> &Finding {
    let v: Vec<&Finding> = (r.findings.iter())
        .filter(|f| f.kind == Kind::TransactionStuckInPrepare)
        .collect();
    assert_eq!(
        v.len(),
        1,
        "{:#?}",
        crate::common::quiet::lines(&r.findings)
    );
    v[0]
}

/// An aborted transaction (PrepareAbort, ABORT markers on both partitions, no CompleteAbort):
/// KAFKA-16352 loses an abort's completion as it does a commit's; the "completion lost"
/// wording and the reload remediation fit.
#[test]
fn a_prepare_abort_with_every_abort_marker_is_a_lost_completion() {
    let mut c = Cluster::new(Some("c1")).coordinator(3);
    c.run(
        &Txn::new("app", Producer::transactional(300, 2), &[A, B])
            .abort()
            .no_complete(),
    );
    c.advance(3_600_000);
    let (_d, r) = scan(&c);
    let f = stuck(&r);
    assert!(f.message.contains("PrepareAbort"), "{}", f.message);
    assert!(f.message.contains("KAFKA-16352"), "{}", f.message);
}

/// Under transaction version 2 the markers carry the epoch one above the data's (the
/// coordinator bumps it at EndTxn); with both on disk it is the same lost completion.
#[test]
fn tv2_markers_one_epoch_up_are_a_lost_completion() {
    let mut c = Cluster::new(Some("c1")).coordinator(3).tv2();
    c.run(&Txn::new("app", Producer::transactional(300, 2), &[A, B]).no_complete());
    c.advance(3_600_000);
    let (_d, r) = scan(&c);
    let f = stuck(&r);
    assert!(f.message.contains("KAFKA-16352"), "{}", f.message);
}

/// A PrepareCommit whose only partition holds an ABORT marker of the producer: not the
/// coordinator's (it sends COMMIT for PrepareCommit), but an operator's
/// `kafka-transactions.sh abort` (`Admin.abortTransaction`: WriteTxnMarkers ABORT sent to the
/// partition leader directly) or another fault. The COMMIT markers were not delivered, and
/// the data on `orders-0` is aborted while the coordinator holds the transaction committed.
///
/// klogscan counts any marker as "the marker" (`with_marker` takes `p.end` of either type):
/// it says every listed partition holds the marker, the completion was lost (KAFKA-16352),
/// and that a reload completes the transaction — a reload re-sends COMMIT to a partition
/// whose records are already aborted.
#[test]
fn a_prepare_commit_with_abort_markers_is_not_a_lost_completion() {
    let mut c = Cluster::new(Some("c1")).coordinator(3);
    c.run(
        &Txn::new("app", Producer::transactional(300, 2), &[A])
            .flip_marker_on(A)
            .no_complete(),
    );
    c.advance(3_600_000);
    let (_d, r) = scan(&c);
    let f = stuck(&r);
    assert!(!f.message.contains("KAFKA-16352"), "{}", f.message);
    let fix = f.remediation.as_deref().unwrap_or_default();
    assert!(!fix.contains("re-sends them"), "{fix}");
}

/// The producer's data reached `orders-0` only: `orders-1` was added to the transaction
/// (AddPartitionsToTxn) but its produce failed. The coordinator lists both and its markers
/// reached both — `orders-1` holds the COMMIT marker and no data. Every listed partition
/// holds the marker: the completion was lost (KAFKA-16352), as with data on both. klogscan
/// agrees (the marker-only partition counts as holding the marker, not as "no data").
#[test]
fn a_listed_partition_holding_only_its_marker_is_confirmed() {
    let mut c = Cluster::new(Some("c1")).coordinator(3);
    let p = Producer::transactional(300, 2);
    c.data(A, p, 2);
    c.run(&Txn::new("app", p, &[A, B]).records(0).no_complete());
    c.advance(3_600_000);
    let (_d, r) = scan(&c);
    let f = stuck(&r);
    assert!(f.message.contains("KAFKA-16352"), "{}", f.message);
}

/// Control for the case above: `orders-1` in the inputs holding neither data nor the marker
/// (the partition directory exists, the marker never came) — "markers not confirmed" is fair
/// there, and the finding does not call the completion lost.
#[test]
fn a_listed_partition_without_data_or_marker_is_not_a_lost_completion() {
    let mut c = Cluster::new(Some("c1")).coordinator(3);
    let p = Producer::transactional(300, 2);
    c.data(A, p, 2);
    c.plain(B, 1);
    c.run(
        &Txn::new("app", p, &[A, B])
            .records(0)
            .skip_marker_on(B)
            .no_complete(),
    );
    c.advance(3_600_000);
    let (_d, r) = scan(&c);
    let f = stuck(&r);
    assert!(!f.message.contains("KAFKA-16352"), "{}", f.message);
}
