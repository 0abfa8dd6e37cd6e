//! `TransactionsTest` fencing cases no audit cited, and
//! `TransactionsWithMaxInFlightOneTest`: a second producer of the same transactional id
//! fences the first (`TransactionCoordinator.handleInitProducerId`: an Ongoing transaction
//! is aborted one epoch up, `prepareFenceProducerEpoch`; a finished one gives the next
//! epoch, `prepareIncrementProducerEpoch`), and the first producer's later write is refused
//! — by the partition leader (`ProducerAppendInfo.checkProducerEpoch`:
//! InvalidProducerEpochException) or by the coordinator before it writes anything
//! (AddPartitionsToTxn: ProducerFencedException).

use super::*;
use crate::kafka_psmaudit_cases::transactions::entry_of;
use klogscan::testkit::txns::Txn;
use klogscan::testkit::{Batch, Producer};

const T1: Tp = ("topic1", 0);
const T2: Tp = ("topic2", 0);

/// `TransactionsTest.testFencingOnSend`: producer 1 begins a transaction on `topic1`-0 and
/// `topic2`-0 without flushing; producer 2 initializes, so the coordinator fences it: ABORT
/// markers at epoch 1 go to both listed partitions (AddPartitionsToTxn came first, TV1),
/// before producer 1's batches got there; producer 2 writes at epoch 2 and commits;
/// producer 1's send is refused by the leader (InvalidProducerEpochException, one of the
/// answers the test accepts). On disk each partition holds an ABORT with no data (offset 0),
/// producer 2's record (1) and its COMMIT (2): no aborted range in the `.txnindex`, the
/// producer at epoch 2 from sequence 0, everything decided, nothing raised. Near misses on
/// where producer 1's record lands: before the fence's ABORT it is simply aborted (the
/// `.txnindex` gets 0–1); after it, at epoch 0 below the marker's 1, it is the write the
/// leader refuses (`producer_epoch_regression`).
#[test]
fn fencing_on_send() {
    let p1 = Producer::transactional(31, 0);
    // 0: not written; 1: before the fence's ABORT; 2: after it
    let run = |p1_lands: u8| {
        let mut c = cluster();
        let id = "transactional-producer";
        let fenced = Txn::new(id, p1, &[T1, T2]).abort().marker_epoch(1);
        c.run(&if p1_lands == 1 {
            fenced.records(1)
        } else {
            fenced.records(0)
        });
        if p1_lands == 2 {
            c.append(T1, Batch::new(p1).records(1));
        }
        c.run(&Txn::new(id, p1.with_epoch(2), &[T1, T2]).records(1));
        check(&c)
    };
    let (_b, v) = run(0);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        all_decided(name, r);
        for (t, n) in [T1, T2] {
            assert_eq!(aborted_of(r, t, n), vec![], "{name} {t}-{n}");
            let pr = part(r, t, n);
            assert_eq!((pr.log_end_offset, pr.transactions.committed), (Some(3), 1));
        }
    }
    for (t, n) in [T1, T2] {
        assert_eq!(entry_of(&v.scan, t, n, 31), (2, 0, 1, None), "{t}-{n}");
    }
    // near miss 1: producer 1's record got there before the fence
    let (_b, v) = run(1);
    v.assert_no_alarm();
    assert_eq!(aborted_of(&v.scan, "topic1", 0), vec![(31, 0, 1, 2)]);
    // near miss 2: after the fence's ABORT, at epoch 0
    let (_b, v) = run(2);
    let got = of_kinds(&v.scan.findings, &[Kind::ProducerEpochRegression]);
    assert_eq!(
        got,
        vec![(
            Kind::ProducerEpochRegression,
            "topic1".to_string(),
            0,
            Some(1)
        )],
        "{:#?}",
        lines(&v.scan.findings)
    );
}

/// The data partitions of `TransactionsTest.testFencingOnAddPartitions`: producer 1 writes a
/// record to `topic1`-0 and `topic2`-0 and aborts; producer 2 (same transactional id)
/// initializes and commits a record on both; producer 1 begins again and sends to
/// `topic1`-0. `tv2`: transaction version 2, where each transaction ends one epoch up.
/// `late`: producer 1's refused record lands anyway after producer 2's COMMIT.
fn add_partitions(tv2: bool, late: bool) -> (Brokers, Verdict) {
    let mut c = if tv2 { cluster().tv2() } else { cluster() };
    let id = "transactional-producer";
    let p1 = Producer::transactional(32, 0);
    // TV0/1: the client's abort keeps epoch 0, producer 2 gets 1; TV2: the abort ends at 1
    // (the client's next epoch), producer 2's InitProducerId gives 2
    let p1_after = c.run(&Txn::new(id, p1, &[T1, T2]).records(1).abort());
    let p2 = p1_after.bumped();
    c.run(&Txn::new(id, p2, &[T1, T2]).records(1));
    if late {
        c.append(T1, Batch::new(p1_after).records(1));
    }
    check(&c)
}

/// `TransactionsTest.testFencingOnAddPartitions` (TV0/1, trunk of 2024-10): producer 1's
/// AddPartitionsToTxn at epoch 0 after producer 2's InitProducerId (epoch 1) is refused by
/// the coordinator (ProducerFencedException) and nothing is written. On disk: data at 0,
/// ABORT at 0, data at 1, COMMIT at 1 on both partitions; the producer at epoch 1; an Empty
/// value at epoch 1 before producer 2's Ongoing; nothing raised. With TV2 (the 2025 test, where
/// the partition leader refuses the produce, InvalidProducerEpochException): ABORT at 1, data
/// at 2, COMMIT at 3, the producer at 3. Near miss for both: producer 1's record landing
/// after producer 2's COMMIT, below its epoch — `producer_epoch_regression` at offset 4.
#[test]
fn fencing_on_add_partitions() {
    for tv2 in [false, true] {
        let name = if tv2 { "tv2" } else { "tv1" };
        let (_b, v) = add_partitions(tv2, false);
        v.assert_no_alarm();
        for (which, r) in [("scan", &v.scan), ("merge", &v.merge)] {
            all_decided(which, r);
            for (t, n) in [T1, T2] {
                assert_eq!(aborted_of(r, t, n), vec![(32, 0, 1, 2)], "{name} {which}");
                assert_eq!(part(r, t, n).transactions.committed, 1, "{name} {which}");
            }
            assert_eq!(txn_counts(r), (1, 1, 0, 0, 0), "{name} {which}");
        }
        let want = if tv2 {
            (3, -1, -1, None)
        } else {
            (1, 0, 2, None)
        };
        for (t, n) in [T1, T2] {
            assert_eq!(entry_of(&v.scan, t, n, 32), want, "{name} {t}-{n}");
        }
        // near miss: producer 1's write lands
        let (_b, v) = add_partitions(tv2, true);
        let got = of_kinds(&v.scan.findings, &[Kind::ProducerEpochRegression]);
        assert_eq!(
            got,
            vec![(
                Kind::ProducerEpochRegression,
                "topic1".to_string(),
                0,
                Some(4)
            )],
            "{name}: {:#?}",
            lines(&v.scan.findings)
        );
    }
}

/// `TransactionsWithMaxInFlightOneTest.testTransactionalProducerSingleBrokerMaxInFlightOne`:
/// one broker, `max.in.flight.requests.per.connection` = 1 (the coordinator's and the
/// leader's requests queue on one connection). A transaction writes to `topic2` and
/// `topic1` and aborts; the next writes to `topic1` and `topic2` and commits; a
/// read_committed consumer sees the two committed records. The default partitioner may put
/// them anywhere: here the first on `topic2`-0 and `topic1`-0, the second on `topic1`-0 and
/// `topic2`-3. On disk: `topic1`-0 aborted 0–1 then committed 2–3, `topic2`-0 aborted,
/// `topic2`-3 committed from sequence 0; the coordinator's records on
/// `__transaction_state-0`; one aborted and one committed cluster transaction, nothing
/// raised. Near miss: the coordinator's CompleteAbort while `topic2`-0 never got its ABORT
/// — the marker is missing there and its record hangs (`topic2`-0 alone).
#[test]
fn transactional_producer_single_broker_max_in_flight_one() {
    let p = Producer::transactional(33, 0);
    let t23: Tp = ("topic2", 3);
    let run = |lose: bool| {
        let mut c = cluster();
        let id = "transactional-producer";
        let first = Txn::new(id, p, &[T2, T1]).records(1).abort();
        c.run(&if lose {
            first.skip_marker_on(T2)
        } else {
            first
        });
        c.run(&Txn::new(id, p, &[T1, t23]).records(1));
        check(&c)
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        all_decided(name, r);
        assert_eq!(aborted_of(r, "topic1", 0), vec![(33, 0, 1, 2)], "{name}");
        assert_eq!(aborted_of(r, "topic2", 0), vec![(33, 0, 1, 2)], "{name}");
        assert_eq!(part(r, "topic1", 0).transactions.committed, 1, "{name}");
        assert_eq!(part(r, "topic2", 3).transactions.committed, 1, "{name}");
        assert_eq!(txn_counts(r), (1, 1, 0, 0, 0), "{name}");
    }
    assert_eq!(entry_of(&v.scan, "topic1", 0, 33), (0, 1, 2, None));
    assert_eq!(entry_of(&v.scan, "topic2", 3, 33), (0, 0, 0, None));
    // near miss: topic2-0's ABORT lost
    let (_b, v) = run(true);
    let kinds = [Kind::TransactionMarkerMissing, Kind::HangingTransaction];
    let mut got = of_kinds(&v.scan.findings, &kinds);
    got.sort_by_key(|g| g.0 as u32);
    assert_eq!(
        got,
        vec![
            (Kind::HangingTransaction, "topic2".to_string(), 0, Some(0)),
            (
                Kind::TransactionMarkerMissing,
                "topic2".to_string(),
                0,
                Some(0)
            ),
        ],
        "{:#?}",
        lines(&v.scan.findings)
    );
    assert_eq!(part(&v.scan, "topic1", 0).last_stable_offset, Some(4));
}
