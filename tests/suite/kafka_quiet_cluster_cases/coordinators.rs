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
        w.txn_state
            .append(Batch::new(Producer::PLAIN).record(rec).at(t));
    };
    coord(
        &mut w,
        t,
        TxnValue::new(p.id, p.epoch, state::EMPTY).times(t, -1),
    );
    for i in 1..=4i64 {
        t += 10_000;
        w.orders
            .append(Batch::new(Producer::idempotent(77, 0)).records(5).at(t));
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
        LogDirBuilder::new(1)
            .partition(w.orders)
            .partition(w.enriched),
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
    b.write(
        3,
        "data",
        LogDirBuilder::new(3).partition(w.txn_state),
        None,
    );
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

/// A group's committed position in `orders-0` carries the leader epoch of the record it read
/// (`SubscriptionState.allConsumed`: the position's `offsetEpoch`): 90 at epoch 1, read from
/// the leader, broker 2. Follower 1 is in the ISR with the same log; follower 3 fell out of the
/// ISR at 40 (`Partition.maybeShrinkIsr`) and has never seen epoch 1 — its own high
/// watermark (40) says it never held the committed offsets. The group's offsets live on
/// broker 1 (`__consumer_offsets`); the consumer validates its position against the leader
/// only (`OffsetsForLeaderEpoch` to the leader: `SubscriptionState.maybeCompleteValidation`),
/// which knows epoch 1.
#[test]
fn committed_epoch_known_to_the_leader_not_to_a_lagging_follower() {
    let mut b = Brokers::new();
    let t = T0 + 3_600_000;
    let mut offsets = PartitionBuilder::new("__consumer_offsets", coordinator_partition(READERS));
    offsets.append(
        Batch::new(Producer::PLAIN)
            .record(commit_at_epoch(READERS, 90, 1, t))
            .at(t)
            .tweak(|s| s.base_sequence = 0),
    );
    let full = || super::replica("orders", 0, &[(0, 9), (1, 10)]);
    b.write(
        1,
        "data",
        LogDirBuilder::new(1).partition(full()).partition(offsets),
        None,
    );
    b.write(2, "data", LogDirBuilder::new(2).partition(full()), None);
    let behind = LogDirBuilder::new(3)
        .partition(super::replica("orders", 0, &[(0, 8)]))
        .high_watermark("orders", 0, 40);
    b.write(3, "data", behind, None);
    b.check().assert_quiet();
}

/// An offset commit of `group` for `orders`-0 at `offset` with leader epoch `epoch`.
fn commit_at_epoch(group: &str, offset: i64, epoch: i32, ts: i64) -> Rec {
    let (k, v) = record(
        1,
        json!({"group": group, "topic": "orders", "partition": 0}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": epoch, "metadata": "", "commitTimestamp": ts}),
        )),
    );
    Rec::kv(k, v.unwrap()).at(ts)
}

/// `orders-0` as its leader wrote it around a transaction that timed out: producer 6000
/// (epoch 0, `transaction.timeout.ms` at the broker's maximum, 15 min) wrote at `t0` and
/// died; other producers kept writing every 7 s; the coordinator aborted it after the
/// timeout (`TransactionCoordinator.abortTimedOutTransactions`, run every
/// `transaction.abort.timed.out.transaction.cleanup.interval.ms`, 10 s), fencing the epoch
/// (`TransactionMetadata.prepareFenceProducerEpoch`: the ABORT at epoch 1) 15 min 8 s after
/// `t0`. `upto`: only the batches before that time (a replica that had fetched no further).
fn timed_out(upto: Option<i64>) -> (PartitionBuilder, PartitionBuilder) {
    let t0 = T0 + 60_000;
    let p = Producer::transactional(6000, 0);
    let mut data = PartitionBuilder::new("orders", 0).start_time(T0);
    let mut coord = PartitionBuilder::new("__transaction_state", coordinator_partition("slow"));
    let mut c = |t: i64, v: TxnValue| {
        let rec = Rec::kv(key("slow"), v.timeout(900_000).encode()).at(t);
        coord.append(Batch::new(Producer::PLAIN).record(rec).at(t));
    };
    c(
        t0 - 500,
        TxnValue::new(p.id, 0, state::EMPTY).times(t0 - 500, -1),
    );
    let listed: [(&str, &[i32]); 1] = [("orders", &[0])];
    c(
        t0 - 10,
        TxnValue::new(p.id, 0, state::ONGOING)
            .partitions(&listed)
            .times(t0 - 10, t0 - 10),
    );
    data.append(Batch::new(Producer::PLAIN).records(2).at(T0));
    data.append(Batch::new(p).records(3).at(t0));
    let abort_at = t0 + 15 * 60_000 + 8_000;
    for i in 1..=140i64 {
        let t = t0 + 7_000 * i;
        if t > abort_at && upto.is_none() && data.now() <= abort_at {
            let fenced = p.bumped();
            c(
                abort_at - 5,
                TxnValue::new(p.id, 1, state::PREPARE_ABORT)
                    .partitions(&listed)
                    .times(abort_at - 5, t0 - 10),
            );
            let now = data.now();
            data.advance_time(abort_at - now);
            data.abort(fenced, 0);
            c(
                abort_at + 5,
                TxnValue::new(p.id, 1, state::COMPLETE_ABORT).times(abort_at + 5, t0 - 10),
            );
        }
        if upto.is_some_and(|u| t > u) {
            break;
        }
        data.append(Batch::new(Producer::idempotent(77, 0)).records(1).at(t));
    }
    (data, coord)
}

/// The leader (1) and follower 2 hold the whole log, ABORT included; follower 3 fell out of
/// the ISR and had fetched up to 15 min 5 s after the transaction's first record, not the
/// ABORT (its high watermark, its own log end). The coordinator's log on broker 2 shows the
/// transaction aborted. Follower 3 appends the ABORT on its next fetch
/// (`ReplicaFetcherThread.processPartitionData`); its copy serves no consumer meanwhile
/// (only the leader serves fetches by default; `Partition.fetchRecords` on a follower needs
/// `replica.selector.class`, and even then bounds reads by the follower's high watermark).
#[test]
fn lagging_follower_has_not_yet_fetched_a_timed_out_transactions_abort() {
    let mut b = Brokers::new();
    let (lead, coord) = timed_out(None);
    b.write(1, "data", LogDirBuilder::new(1).partition(lead), None);
    let (copy, _) = timed_out(None);
    b.write(
        2,
        "data",
        LogDirBuilder::new(2).partition(copy).partition(coord),
        None,
    );
    let (behind, _) = timed_out(Some(T0 + 60_000 + 15 * 60_000 + 5_000));
    let end = behind.log_end_offset();
    let ld = LogDirBuilder::new(3)
        .partition(behind)
        .high_watermark("orders", 0, end);
    b.write(3, "data", ld, None);
    b.check().assert_quiet();
}
