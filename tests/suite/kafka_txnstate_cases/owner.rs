//! Where the coordinator reads a transactional id: `TransactionStateManager.partitionFor`
//! (`Utils.abs(id.hashCode) % partitionCount`, the count of `__transaction_state` the
//! broker read at startup: the metadata cache's, in KRaft the metadata log's), and
//! `getTransactionState` looks the id up in that partition's cache only
//! (`getAndMaybeAddTransactionState`). A record of the id in another partition is loaded
//! into that partition's cache but never serves the id (`DescribeTransactions`,
//! `AddPartitionsToTxn`, `EndTxn` all go through `getTransactionState`).
//!
//! The brokers keep a KRaft metadata log here (`World::kraft`), so klogscan knows the
//! partition count; `orders-N` is on broker 1, `__transaction_state` on broker 3.

use super::*;
use klogscan::testkit::txnlog::state::*;

/// The transactions' start; the reference time is a minute later.
const T: i64 = T0 + 10 * SEC;

/// `id`'s producer `pid` (epoch 0, just initialized: Empty) writing a transaction to
/// `orders-n`, its values appended to `__transaction_state-tp`.
fn ongoing(w: &mut World, tp: i32, id: &str, pid: i64, n: i32) {
    let part = [n];
    let listed: &[(&str, &[i32])] = &[("orders", &part)];
    put(
        w.txn_log(3, tp),
        T - 100,
        id,
        value((pid, 0), EMPTY, &[], (T - 100, -1), 60_000),
    );
    put(
        w.txn_log(3, tp),
        T,
        id,
        value((pid, 0), ONGOING, listed, (T, T), 60_000),
    );
    produce(
        w.part(1, "orders", n),
        Producer::transactional(pid, 0),
        2,
        T + 10,
    );
}

/// A world whose `__transaction_state` has `count` partitions (`added` of them created
/// later), each held by broker 3.
fn world(count: i32, added: i32) -> World {
    let mut w = World::new().kraft(count - added, added);
    for n in 0..count {
        w.txn_log(3, n);
    }
    w
}

/// `TransactionStateManagerTest.testDeletePartition` (and the `setUp` of the class, which
/// asserts where "one" and "two" live): with 2 partitions, "b" belongs to partition 0 and
/// "a" to partition 1 (`TransactionStateManager.partitionFor`), each cached in its own
/// partition's entry. On disk, the metadata log gives `__transaction_state` 2 partitions;
/// "b" is in `__transaction_state-0` and "a" in `-1`, each with an Ongoing transaction on
/// `orders-0` / `orders-1`. klogscan places both ids where Kafka does and confirms both
/// transactions alive from their owner partition. An id whose hash is `Integer.MIN_VALUE`
/// ("polygenelubricants") belongs to partition 0 (`Utils.abs` maps it to 0).
///
/// Near miss: "a"'s records in `__transaction_state-0`, which the coordinator does not
/// read for "a" — klogscan's verdict is unconfirmed and names partition 1 as the owner
/// (the brokers may still run with the count they read at startup, so which partition
/// serves "a" is not certain from the bytes).
#[test]
fn each_id_is_read_from_the_partition_partition_for_names() {
    let placed: Vec<_> = ["one", "two", "b", "a", "polygenelubricants"]
        .iter()
        .map(|id| partition_for(id, 2))
        .collect();
    assert_eq!(placed, [0, 0, 0, 1, 0]);
    assert_eq!(partition_for("polygenelubricants", 50), 0);
    for misplaced in [false, true] {
        let mut w = world(2, 0);
        ongoing(&mut w, 0, "b", 20, 0);
        ongoing(&mut w, if misplaced { 0 } else { 1 }, "a", 21, 1);
        let v = w.write().check_with(opts(T + MIN, None));
        for (name, fs) in reports(&v) {
            assert_no_loud(name, &fs);
            for (n, id, owner) in [(0, "b", 0), (1, "a", 1)] {
                let (_, c) = confirmation(&fs, "orders", n);
                assert_eq!(c["partition_count_from"], "the cluster's metadata log");
                assert_eq!(
                    (c["transactional_id"].as_str(), c["verdict"].as_str()),
                    (Some(id), Some("alive"))
                );
                assert_eq!(c["owner_partition"], owner, "{name} {id}");
                let confirmed = !(misplaced && id == "a");
                assert_eq!(c["confirmed"], confirmed, "{name} {id}: {c}");
                if !confirmed {
                    let why = c["unconfirmed_reason"].as_str().unwrap_or("");
                    assert!(why.contains("belongs to __transaction_state-1"), "{why}");
                }
            }
        }
    }
}

/// `__transaction_state` grown from 2 partitions to 3 (`CreatePartitions`: the controller
/// refuses no internal topic, `ReplicationControlManager.createPartitions`). "c" (hash 99)
/// belonged to partition 1 of 2 and belongs to partition 0 of 3. Its old producer 22 committed
/// a transaction there before the change (its values stay in `__transaction_state-1`). After
/// the brokers restarted with the new count, its client came back to the coordinator of
/// partition 0, which did not know "c": a new producer 23, Empty then Ongoing on `orders-2`, in
/// `__transaction_state-0`. `TransactionStateManager.getTransactionState("c")` reads partition
/// 0 only (`TransactionStateManagerTest.testDeletePartition`: each partition's entry serves the
/// ids `partitionFor` maps to it), so Kafka's coordinator holds "c" Ongoing with producer 23
/// listing `orders-2`: alive, and `DescribeTransactions` lists the partition (find-hanging
/// drops it).
///
/// Until the audit found it klogscan kept, per id, the value of the `__transaction_state`
/// partition it read last (across partitions, the later one won), so "c" was the stale
/// CompleteCommit of producer 22 from partition 1, and the open transaction of producer 23
/// "confirmed hanging: no transactional id maps to producer 23"; with the partition count
/// known from the metadata log, the owner partition's value now wins
/// (`CoordinatorView::supersedes`).
#[test]
fn an_id_moved_by_a_partition_count_change_is_read_from_its_new_owner() {
    assert_eq!((partition_for("c", 2), partition_for("c", 3)), (1, 0));
    let v = moved_id_world(true).write().check_with(opts(T + MIN, None));
    assert_moved_id_is_alive(&v);
}

/// Near miss of [`an_id_moved_by_a_partition_count_change_is_read_from_its_new_owner`]:
/// the same without the stale values in partition 1 (the old transaction's records
/// cleaned away, or "c" new after the change): alive, confirmed from partition 0.
#[test]
fn an_id_after_a_partition_count_change_alone_in_its_owner_is_alive() {
    let v = moved_id_world(false)
        .write()
        .check_with(opts(T + MIN, None));
    assert_moved_id_is_alive(&v);
}

/// "c" in `__transaction_state-0` of 3 (producer 23, Ongoing on `orders-2`), and with
/// `stale`, its values from before the count change in `-1` (producer 22, committed).
fn moved_id_world(stale: bool) -> World {
    let mut w = world(3, 1);
    if stale {
        let old = T0 - 28 * SEC;
        let listed: &[(&str, &[i32])] = &[("orders", &[2])];
        let log = w.txn_log(3, 1);
        put(
            log,
            old,
            "c",
            value((22, 3), ONGOING, listed, (old, old), 60_000),
        );
        let v = value((22, 3), PREPARE_COMMIT, listed, (old + SEC, old), 60_000);
        put(log, old + SEC, "c", v);
        let v = value((22, 3), COMPLETE_COMMIT, &[], (old + 2 * SEC, old), 60_000);
        put(log, old + 2 * SEC, "c", v);
        let data = w.part(1, "orders", 2);
        produce(data, Producer::transactional(22, 3), 2, old + 100);
        marker(
            data,
            Producer::transactional(22, 3),
            true,
            0,
            old + SEC + 100,
        );
    }
    ongoing(&mut w, 0, "c", 23, 2);
    w
}

/// Kafka's answer for [`moved_id_world`]: producer 23's transaction on `orders-2` is
/// alive, read from "c"'s owner partition 0 of 3, in `scan`, `verify` and the merge.
fn assert_moved_id_is_alive(v: &Verdict) {
    for (name, fs) in reports(v) {
        assert_no_loud(name, &fs);
        let (_, c) = confirmation(&fs, "orders", 2);
        assert_eq!(c["verdict"], "alive", "{name}: {c}");
        assert_eq!(
            (c["hanging"].as_bool(), c["confirmed"].as_bool()),
            (Some(false), Some(true))
        );
        assert_eq!(
            (c["transactional_id"].as_str(), c["producer_id"].as_i64()),
            (Some("c"), Some(23))
        );
        assert_eq!(
            (c["owner_partition"].as_i64(), c["partition_count"].as_i64()),
            (Some(0), Some(3))
        );
        assert_eq!(c["record"]["partition"], 0, "{name}");
    }
}
