//! `TransactionsBounceTest`: a consume–transform–produce loop copying `input-topic` to
//! `output-topic` transactionally, with the group's offsets committed in each transaction,
//! while the four brokers are restarted one after the other; every third transaction is
//! aborted. What the brokers keep: three replicas of each partition (replication factor 3
//! over 4 brokers), the coordinator's `__transaction_state-0` and the group's
//! `__consumer_offsets-0`, and — each time the coordinator's broker goes down — a new
//! coordinator (coordinator epoch + 1) that loads the log and re-sends the markers of the
//! transactions it finds in Prepare* (`TransactionStateManager.loadTransactionsForTxnTopicPartition`
//! → `TransactionMarkerChannelManager.addTxnMarkersToSend`).

use super::*;
use crate::kafka_quiet_coordinator_cases::offsets::commit;
use klogscan::testkit::Producer;
use klogscan::testkit::txns::Txn;

const INPUT: [Tp; 3] = [("input-topic", 0), ("input-topic", 1), ("input-topic", 2)];
const OUTPUT: [Tp; 3] = [
    ("output-topic", 0),
    ("output-topic", 1),
    ("output-topic", 2),
];
const GROUP: &str = "myGroup";

/// The broker (1–4) that holds no replica of `tp` (replication factor 3).
fn not_on(tp: Tp) -> i32 {
    match tp {
        ("input-topic", n) => n % 4 + 1,
        ("output-topic", n) => (n + 1) % 4 + 1,
        ("__consumer_offsets", _) => 1,
        _ => 2,
    }
}

/// The loop at 18 records per input partition: each transaction copies 3 records of each
/// input partition to the output partition of the same number and commits the group's
/// positions; iterations 0, 3 and 6 abort (and the consumer goes back to the committed
/// positions), so 9 transactions: 6 committed, 3 aborted. The coordinator fails over
/// during the commits of iterations 4 (after one marker) and 7 (after two): the new
/// coordinator re-sends every marker 30 s later. `stale`: then the deposed coordinator's
/// COMMIT (coordinator epoch 0) reaches `output-topic`-1. After each transaction a broker
/// restarts: the partitions it holds get a new leader, their next batches the next leader
/// epoch (the iteration's number).
fn bounce(stale: bool) -> (Brokers, Verdict) {
    let mut c = cluster();
    for tp in INPUT {
        c.plain(tp, 18);
    }
    let p = Producer::transactional(41, 0);
    let (mut position, mut iteration) = (0, 0);
    while position < 18 {
        let next = position + 3;
        let offsets = (INPUT.iter())
            .map(|&(t, n)| rec(commit(GROUP, t, n, next, c.now())))
            .collect();
        let mut parts = OUTPUT.to_vec();
        parts.push(offsets_of(GROUP));
        let mut t =
            Txn::new("test-txn", p, &parts)
                .records(3)
                .payload(offsets_of(GROUP), offsets, Some(0));
        if iteration % 3 == 0 {
            t = t.abort();
        } else {
            position = next;
        }
        match iteration {
            4 => t = t.failover_after(1),
            7 => t = t.failover_after(2),
            _ => {}
        }
        c.run(&t);
        iteration += 1;
        // a broker restarts between two transactions: the partitions it led get a new
        // leader, one leader epoch up
        for tp in OUTPUT
            .iter()
            .chain(&INPUT)
            .copied()
            .chain([offsets_of(GROUP)])
        {
            if not_on(tp) != iteration % 4 + 1 {
                c.set_leader_epoch(tp, iteration);
            }
        }
    }
    assert_eq!(c.coordinator_epoch(), 2);
    if stale {
        c.marker_from(OUTPUT[1], p, true, 0);
    }
    let mut b = Brokers::new();
    for id in 1..=4 {
        let dir = b.path(id, "data");
        c.write_only(&dir, id, |tp| not_on(tp) != id, id != 2)
            .unwrap();
        b.add(dir);
    }
    let v = b.check_with(opts_at(&c));
    (b, v)
}

/// `TransactionsBounceTest.testWithGroupId` and `testWithGroupMetadata` (they differ only in
/// the TxnOffsetCommit's member fields, which the offset commit value does not keep): a
/// read_committed consumer reads every input record exactly once, in order per partition.
/// On disk, over the four brokers' log dirs (scan) and their bundles (merge): each output
/// partition holds 6 committed and 3 aborted transactions of 3 records, with the markers the
/// two failovers re-sent; the group's committed offset of each input partition is 18, its
/// log end; every copy is decided; the 9 cluster transactions are joined whole (6 committed,
/// 3 aborted, none partial or mixed); the leader epochs the restarts left, up to 9, are
/// each replica's; nothing raised. Near miss: a COMMIT on
/// `output-topic`-1 from coordinator epoch 0 after the markers of epoch 2 — the deposed
/// coordinator's, which the leader refuses (`ProducerAppendInfo.checkCoordinatorEpoch`:
/// TransactionCoordinatorFencedException) — is a `coordinator_epoch_regression`.
#[test]
fn with_group_id_and_group_metadata() {
    let (b, v) = bounce(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        all_decided(name, r);
        for (t, n) in OUTPUT {
            assert_eq!(aborted_of(r, t, n).len(), 3, "{name} {t}-{n}");
            assert_eq!(part(r, t, n).transactions.committed, 6, "{name} {t}-{n}");
        }
        assert_eq!(txn_counts(r), (6, 3, 0, 0, 0), "{name}");
        for tp in OUTPUT {
            // the epoch of the last restart before the last transaction
            let last = (1..=8).filter(|i| not_on(tp) != i % 4 + 1).max();
            let epochs = part(r, tp.0, tp.1).leader_epochs();
            assert_eq!(
                epochs.last().map(|e| e.0),
                last,
                "{name} {tp:?}: {epochs:?}"
            );
        }
    }
    let want: BTreeMap<_, _> = (INPUT.iter())
        .map(|&(t, n)| ((t.to_string(), n), (18, 0, String::new())))
        .collect();
    assert_eq!(committed(&b, GROUP), want);
    // near miss: the deposed coordinator's marker
    let (_b, v) = bounce(true);
    let loud: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
        .map(|f| (f.kind, f.topic.as_str(), f.partition))
        .collect();
    assert!(
        !loud.is_empty()
            && loud
                .iter()
                .all(|l| *l == (Kind::CoordinatorEpochRegression, "output-topic", 1)),
        "{:#?}",
        lines(&v.scan.findings)
    );
}
