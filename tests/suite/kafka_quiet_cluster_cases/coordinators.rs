//! The coordinators' partitions on other brokers than the data: a consume-transform-produce
//! application whose transactions span partitions led by brokers 1 and 2, with its
//! transaction coordinator (`__transaction_state`) on broker 3 and its group's offsets
//! (`__consumer_offsets`, committed in the transactions) on broker 2; a plain consumer
//! group of the input topic whose offsets live on broker 3.

use super::{Brokers, T0};
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::groups::record;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use serde_json::json;

const APP: &str = "enricher-app";
const GROUP: &str = "enricher";
const READERS: &str = "order-readers";

/// The partition of `id` among 50 (`Utils.abs(id.hashCode) % 50`, as both coordinators
/// place their keys: `TransactionStateManager.partitionFor`, `GroupMetadataManager.partitionFor`).
fn coordinator_partition(id: &str) -> i32 {
    transaction_partition_for(id, 50)
}

/// An offset commit record (`OffsetCommitValue` v3) of `group` for `topic`-0 at `offset`.
fn commit(group: &str, topic: &str, offset: i64, ts: i64) -> Rec {
    let (k, v) = record(
        1,
        json!({"group": group, "topic": topic, "partition": 0}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": ts}),
        )),
    );
    Rec::kv(k, v.unwrap()).at(ts)
}

/// The partitions the cluster holds, each written as its leader wrote it.
struct Written {
    /// `orders-0`: the input, on broker 1.
    orders: PartitionBuilder,
    /// `enriched-0` on broker 1, `audit-0` on broker 2: the transactions' output.
    enriched: PartitionBuilder,
    audit: PartitionBuilder,
    /// `__consumer_offsets` of the application's group (broker 2) and of the readers (broker 3).
    group_offsets: PartitionBuilder,
    reader_offsets: PartitionBuilder,
    /// `__transaction_state` of the application (broker 3).
    txn_state: PartitionBuilder,
}

/// One TV1 transaction of the application per 5 input records: `Ongoing` listing the two
/// outputs and the group's offsets partition (`AddPartitionsToTxn`, `AddOffsetsToTxn`), the
/// outputs' data, the `TxnOffsetCommit` (appended by the group coordinator with the
/// producer's id and epoch, base sequence 0: `GroupMetadataManager.storeOffsets`),
/// `PrepareCommit`, a COMMIT marker on each of the three partitions
/// (`TransactionMarkerChannelManager` → `WriteTxnMarkers` to each leader), `CompleteCommit`
/// (`TransactionCoordinator.handleEndTransaction`). Between transactions, the readers'
/// group auto-commits its position in `orders-0`.
fn written() -> Written {
    written_with(false)
}

/// [`written`]; `lose_marker`: the last transaction's COMMIT never reached `audit-0`.
fn written_with(lose_marker: bool) -> Written {
    let at = |p: PartitionBuilder| p.start_time(T0).time_step(1000);
    let mut w = Written {
        orders: at(PartitionBuilder::new("orders", 0)),
        enriched: at(PartitionBuilder::new("enriched", 0)),
        audit: at(PartitionBuilder::new("audit", 0)),
        group_offsets: at(PartitionBuilder::new(
            "__consumer_offsets",
            coordinator_partition(GROUP),
        )),
        reader_offsets: at(PartitionBuilder::new(
            "__consumer_offsets",
            coordinator_partition(READERS),
        )),
        txn_state: at(PartitionBuilder::new(
            "__transaction_state",
            coordinator_partition(APP),
        )),
    };
    let p = Producer::transactional(5000, 3);
    let listed: Vec<(&str, Vec<i32>)> = vec![
        ("__consumer_offsets", vec![coordinator_partition(GROUP)]),
        ("audit", vec![0]),
        ("enriched", vec![0]),
    ];
    let refs: Vec<(&str, &[i32])> = listed.iter().map(|(t, v)| (*t, v.as_slice())).collect();
    let mut t = T0;
    let coord = |w: &mut Written, t: i64, v: TxnValue| {
        let rec = Rec::kv(key(APP), v.encode()).at(t);
        w.txn_state.append(Batch::new(Producer::PLAIN).record(rec).at(t));
    };
    coord(&mut w, t, TxnValue::new(p.id, p.epoch, state::EMPTY).times(t, -1));
    for i in 1..=4i64 {
        t += 10_000;
        w.orders.append(Batch::new(Producer::idempotent(77, 0)).records(5).at(t));
        let start = t + 100;
        let ongoing = TxnValue::new(p.id, p.epoch, state::ONGOING).partitions(&refs);
        coord(&mut w, start, ongoing.times(start, start));
        w.enriched.append(Batch::new(p).records(5).at(start + 10));
        w.audit.append(Batch::new(p).records(1).at(start + 20));
        let offsets = Batch::new(p)
            .record(commit(GROUP, "orders", 5 * i, start + 30))
            .at(start + 30)
            .tweak(|s| s.base_sequence = 0);
        w.group_offsets.append(offsets);
        let prepare = TxnValue::new(p.id, p.epoch, state::PREPARE_COMMIT).partitions(&refs);
        coord(&mut w, start + 40, prepare.times(start + 40, start));
        for (j, d) in [&mut w.enriched, &mut w.audit, &mut w.group_offsets]
            .into_iter()
            .enumerate()
        {
            if lose_marker && i == 4 && j == 1 {
                continue;
            }
            let now = d.now();
            d.advance_time(start + 50 + j as i64 - now);
            d.commit(p, 0);
        }
        let complete = TxnValue::new(p.id, p.epoch, state::COMPLETE_COMMIT);
        coord(&mut w, start + 60, complete.times(start + 60, start));
        let readers = Batch::new(Producer::PLAIN)
            .record(commit(READERS, "orders", 5 * i, start + 500))
            .at(start + 500)
            .tweak(|s| s.base_sequence = 0);
        w.reader_offsets.append(readers);
    }
    w
}

/// Broker 1 leads `orders-0` and `enriched-0`, broker 2 `audit-0` and the application's
/// group's `__consumer_offsets` partition, broker 3 the transaction coordinator's
/// `__transaction_state` partition and the readers' group's offsets (replication factor 1:
/// each partition on its leader only). Every transaction is complete, every marker written,
/// every committed offset at or below its partition's log end.
#[test]
fn transactions_and_groups_with_their_coordinators_on_other_brokers() {
    let mut b = Brokers::new();
    let w = written();
    b.write(
        1,
        "data",
        LogDirBuilder::new(1).partition(w.orders).partition(w.enriched),
        None,
    );
    b.write(
        2,
        "data",
        LogDirBuilder::new(2)
            .partition(w.audit)
            .partition(w.group_offsets),
        None,
    );
    b.write(
        3,
        "data",
        LogDirBuilder::new(3)
            .partition(w.txn_state)
            .partition(w.reader_offsets),
        None,
    );
    let v = b.check();
    v.assert_quiet();
    assert_eq!(v.scan.partitions.len(), 6);
}

/// Near miss of the above: the last COMMIT marker missing on `audit-0` (broker 2) while the
/// coordinator on broker 3 completed the transaction: `transaction_marker_missing`, joined
/// across the brokers.
#[test]
fn a_marker_missing_on_another_broker_than_the_coordinator_is_reported() {
    let mut b = Brokers::new();
    let w = written_with(true);
    b.write(1, "data", LogDirBuilder::new(1).partition(w.orders), None);
    b.write(2, "data", LogDirBuilder::new(2).partition(w.audit), None);
    b.write(3, "data", LogDirBuilder::new(3).partition(w.txn_state), None);
    let v = b.check();
    let missing: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::TransactionMarkerMissing)
        .map(|f| (f.source.broker_id, f.topic.as_str(), f.severity))
        .collect();
    assert_eq!(missing, [(Some(2), "audit", Severity::Error)]);
}

/// The same cluster at replication factor 3: every broker holds a byte-identical replica
/// of every partition (`ReplicaFetcherThread.processPartitionData`), so each transaction's
/// data, markers and coordinator records are seen three times, on three brokers.
#[test]
fn the_same_at_replication_factor_three() {
    let mut b = Brokers::new();
    for id in 1..=3 {
        let w = written();
        let ld = LogDirBuilder::new(id)
            .partition(w.orders)
            .partition(w.enriched)
            .partition(w.audit)
            .partition(w.group_offsets)
            .partition(w.reader_offsets)
            .partition(w.txn_state);
        b.write(id, "data", ld, None);
    }
    b.check().assert_quiet();
}
