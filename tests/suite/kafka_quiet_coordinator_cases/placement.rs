//! Coordinator partitions other than the default 50, and ids outside ASCII.

use super::offsets::{classic_group, commit, coordinator_batch};
use super::{Quiet, T0, Tp, World, write_and_check};
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::txnlog::state;
use klogscan::testkit::{PartitionBuilder, Producer};

/// `(id, String.hashCode(), partition among 8, 12, 64)`, computed with a JVM
/// (`java.lang.String.hashCode` over UTF-16 code units; the emoji is a surrogate pair) and
/// `Utils.abs(hash) % count`.
const IDS: &[(&str, i32, i32, i32, i32)] = &[
    ("заказы-приложение", -1_877_413_877, 5, 5, 53),
    ("注文サービス-😀", -904_267_452, 4, 0, 60),
    ("paiement-éclair", 794_610_522, 2, 6, 26),
    ("orders-app", 772_757_305, 1, 1, 57),
    ("Ärger-gruppe", 1_063_611_522, 2, 6, 2),
];

/// klogscan places ids as `TransactionStateManager.partitionFor` /
/// `GroupMetadataManager.partitionFor` do (`Utils.abs(id.hashCode) % count`), over UTF-16.
#[test]
fn non_ascii_ids_are_placed_by_the_java_hash() {
    for &(id, _, p8, p12, p64) in IDS {
        assert_eq!(transaction_partition_for(id, 8), p8, "{id}");
        assert_eq!(transaction_partition_for(id, 12), p12, "{id}");
        assert_eq!(transaction_partition_for(id, 64), p64, "{id}");
    }
}

/// A cluster with `transaction.state.log.num.partitions=8` and
/// `offsets.topic.num.partitions=12` (both set before the first start: the topics are created
/// with them, `AutoTopicCreationManager.creatableTopic` / `KafkaApis`' internal-topic
/// configs), and one with 64 transaction-state partitions: transactional ids and groups with
/// Cyrillic, CJK, emoji and accented names on the partition Kafka places them, months of
/// committed transactions, and one transaction open right now (its `Ongoing` value listing
/// the partition, inside its timeout). Kafka serves all of it
/// (`TransactionStateManager.getTransactionState` finds each id where it looks). Nothing at
/// warning or above: the open transaction is at most info.
/// Twin: the open transaction's `Ongoing` value was never written (the coordinator never
/// heard of the producer) and the transaction has been idle 40 minutes: a hanging
/// transaction (`hanging_transaction`).
#[test]
fn non_default_partition_counts_and_non_ascii_ids() {
    for count in [8, 64] {
        let q = placed(count, false);
        q.assert_quiet();
        assert_eq!(open_of(&q).len(), 1, "{count}");
        let twin = placed(count, true);
        twin.assert_reported(
            Kind::HangingTransaction,
            Severity::Error,
            "ausgabe",
            Some(7000),
        );
    }
}

/// The open transaction's coordinator evidence (info) for an id read where Kafka put it
/// (`TransactionStateManager.appendTransactionToLog` → `partitionFor` over 8 or 64
/// partitions). Without the metadata log klogscan assumes 50 partitions (61 when it read
/// partition 60), under which the id belongs elsewhere. The auditor asked for the id's place
/// to be taken as proof of another count; it may as well be a record no coordinator reads
/// (a partition count changed under the ids, a moved file: `identity_joins` holds that
/// case), so the verdict stays unconfirmed and the reason names both readings.
#[test]
fn the_open_transaction_evidence_keeps_the_id_where_kafka_placed_it() {
    for count in [8, 64] {
        let q = placed(count, false);
        let f = open_of(&q)[0];
        let c = &f.evidence["coordinator"];
        assert_eq!(c["verdict"], "alive", "{count}: {c}");
        assert_eq!(c["confirmed"], false, "{count}: {c}");
        let why = c["unconfirmed_reason"].as_str().unwrap();
        assert!(
            why.contains("either __transaction_state has another partition count, or this record is not where the coordinator reads the id"),
            "{count}: {why}"
        );
        // The twin: the same two readings for the hang.
        let twin = placed(count, true);
        let c = &hanging_of(&twin, 7000).evidence["coordinator"];
        assert_eq!(c["confirmed"], false, "{count}: {c}");
        assert!(c["unconfirmed_reason"].as_str().unwrap().contains("either"));
        // A producer no id maps: unconfirmed, the partitions not read named.
        let stranger = placed_with(count, true, true);
        let c = &hanging_of(&stranger, 7999).evidence["coordinator"];
        assert_eq!(c["confirmed"], false, "{count}: {c}");
    }
}

fn hanging_of(q: &Quiet, pid: i64) -> &Finding {
    (q.scan.findings.iter())
        .find(|f| f.kind == Kind::HangingTransaction && f.producer_id == Some(pid))
        .unwrap_or_else(|| panic!("{:#?}", q.scan.findings))
}

fn open_of(q: &Quiet) -> Vec<&Finding> {
    q.scan
        .findings
        .iter()
        .filter(|f| f.kind == Kind::OpenTransaction)
        .collect()
}

/// Months of transactions of three ids among `count` transaction-state partitions, groups on
/// `__consumer_offsets-6` of 12 (with 8), and the first id's transaction open now: recent and
/// listed by its `Ongoing` value, or (`twin`) unknown to the coordinator and 40 minutes idle.
fn placed(count: i32, twin: bool) -> Quiet {
    placed_with(count, twin, false)
}

/// [`placed`]; with `stranger`, producer 7999, which no id maps, also opens a transaction
/// on `ausgabe-1` before the clock moves on.
fn placed_with(count: i32, twin: bool, stranger: bool) -> Quiet {
    let ids = if count == 8 { [0, 1, 2] } else { [1, 3, 0] };
    let mut w = World::new(count);
    let out: Tp = ("ausgabe", 0);
    for (pid, &i) in (7000..).zip(ids.iter()) {
        let (id, _, p8, _, p64) = IDS[i];
        assert_eq!(
            w.partition_of(id),
            if count == 8 { p8 } else { p64 },
            "{id}"
        );
        let p = Producer::transactional(pid, 0);
        w.init(id, p, false);
        for k in 0..3 {
            w.txn(id, p, &[out, ("ausgabe", 1)], k != 1, 0);
            w.clock += 86_400_000;
        }
    }
    let (id, ..) = IDS[ids[0]];
    let p = Producer::transactional(7000, 0);
    let start = w.clock;
    if !twin {
        let v = World::value(7000, 0, state::ONGOING, &[out], false);
        w.put(id, v, start);
    }
    w.produce(out, p, 2);
    if stranger {
        w.produce(("ausgabe", 1), Producer::transactional(7999, 0), 1);
    }
    w.clock += if twin { 40 * 60_000 } else { 20_000 };
    w.produce(("ausgabe", 1), Producer::PLAIN, 1);
    let mut ld = w.log_dir();
    if count == 8 {
        // both groups belong to `__consumer_offsets-6` of 12
        ld = ld.partition(group_partition(&[IDS[4].0, IDS[2].0], 12));
    }
    write_and_check(ld)
}

/// The `__consumer_offsets` partition of classic groups `gs` (all on one partition among
/// `count`): a rebalance and commits of `ausgabe-0/1` each.
fn group_partition(gs: &[&str], count: i32) -> PartitionBuilder {
    let n = transaction_partition_for(gs[0], count);
    let mut p = PartitionBuilder::new("__consumer_offsets", n);
    for g in gs {
        assert_eq!(transaction_partition_for(g, count), n, "{g}");
        let group = classic_group(g, 1, &[("m-1", None)], T0);
        p.append(coordinator_batch(Producer::PLAIN, -1, T0, vec![group]));
        for i in 1..=3i64 {
            let ts = T0 + 5_000 * i;
            let recs = vec![
                commit(g, "ausgabe", 0, 10 * i, ts),
                commit(g, "ausgabe", 1, 7 * i, ts),
            ];
            p.append(coordinator_batch(Producer::PLAIN, 0, ts, recs));
        }
    }
    p
}
