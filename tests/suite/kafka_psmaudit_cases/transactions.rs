//! `TransactionsTest` (integration) cases no audit cited, as the partitions' logs the
//! brokers are left with: what the last stable offset and the aborted-transaction index
//! give a read_committed consumer, markers of one transaction on many partitions of one
//! leader, an epoch bumped by the client after a timeout, and the coordinator's fencing
//! abort of an expired transaction.

use super::*;
use klogscan::testkit::txns::{Cluster, Txn};
use klogscan::testkit::{Batch, Producer};

fn opts() -> ScanOptions {
    ScanOptions::default().with_keep_producers(true)
}

/// `(epoch, last sequence, last data offset, open transaction's first offset)` of
/// producer `pid` on `topic`-`n`.
pub(crate) fn entry_of(
    r: &ScanReport,
    topic: &str,
    n: i32,
    pid: i64,
) -> (i16, i32, i64, Option<i64>) {
    let s = (part(r, topic, n).outcome().producers.iter())
        .find(|s| s.producer_id == pid)
        .unwrap_or_else(|| panic!("no producer {pid} on {topic}-{n}"));
    (
        s.producer_epoch,
        s.last_sequence,
        s.last_offset,
        s.current_txn_first_offset,
    )
}

/// `TransactionsTest.testReadCommittedConsumerShouldNotSeeUndecidedData`: on each of two
/// partitions producer "other" writes one record (offset 0), the first producer two
/// (1–2), "other" one more (3) and commits (4); the first producer's transaction stays
/// open. A read_committed consumer reads offset 0 alone and its end position is 1: the
/// last stable offset stops at the first producer's first offset although a later
/// transaction is decided. Near miss: once the first producer commits (5), the last stable
/// offset is the log end, 6.
#[test]
fn read_committed_consumer_should_not_see_undecided_data() {
    let (first, other) = (Producer::transactional(1, 0), Producer::transactional(2, 0));
    let build = |t: &str, commit_first: bool| {
        let mut p = PartitionBuilder::new(t, 0);
        p.append(Batch::new(other).records(1));
        p.append(Batch::new(first).records(2));
        p.append(Batch::new(other).records(1));
        p.commit(other, 0);
        if commit_first {
            p.commit(first, 0);
        }
        p
    };
    let (_b, _d, v) = broker(
        vec![build("topic1", false), build("topic2", false)],
        &[],
        opts(),
    );
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        for t in ["topic1", "topic2"] {
            let pr = part(r, t, 0);
            assert_eq!(
                (pr.log_end_offset, pr.last_stable_offset),
                (Some(5), Some(1)),
                "{name} {t}"
            );
            assert_eq!(pr.transactions.committed, 1, "{name} {t}");
        }
    }
    let open: Vec<_> = (v.scan.findings.iter())
        .filter(|f| matches!(f.kind, Kind::OpenTransaction | Kind::HangingTransaction))
        .map(|f| (f.topic.as_str(), f.producer_id, f.offset))
        .collect();
    assert_eq!(
        open,
        vec![("topic1", Some(1), Some(1)), ("topic2", Some(1), Some(1))]
    );
    assert_eq!(entry_of(&v.scan, "topic1", 0, 1), (0, 1, 2, Some(1)));
    // near miss: the first producer commits
    let (_b, _d, v) = broker(
        vec![build("topic1", true), build("topic2", true)],
        &[],
        opts(),
    );
    v.assert_no_alarm();
    for t in ["topic1", "topic2"] {
        let pr = part(&v.scan, t, 0);
        assert_eq!(
            (pr.log_end_offset, pr.last_stable_offset),
            (Some(6), Some(6))
        );
        assert_eq!(pr.transactions.committed, 2);
    }
}

/// `TransactionsTest.testDelayedFetchIncludesAbortedTransaction`: producer "other" writes
/// offset 0, the first producer 1–2, "other" 3; the first producer aborts (4), "other"
/// commits (5). A read_committed fetch gets offsets 0 and 3 only: the aborted-transaction
/// index gives the first producer's transaction from 1 to 4, recorded with last stable
/// offset 0 ("other" was still open when the abort completed). On disk the `.txnindex`
/// holds that entry and the load agrees; the last stable offset is 6. Near miss: the log
/// before "other" commits — the same aborted entry, the last stable offset held at 0.
#[test]
fn delayed_fetch_includes_aborted_transaction() {
    let (first, other) = (Producer::transactional(1, 0), Producer::transactional(2, 0));
    let build = |commit_other: bool| {
        let mut p = PartitionBuilder::new("topic1", 0);
        p.append(Batch::new(other).records(1));
        p.append(Batch::new(first).records(2));
        p.append(Batch::new(other).records(1));
        p.abort(first, 0);
        if commit_other {
            p.commit(other, 0);
        }
        p
    };
    let (_b, _d, v) = broker(vec![build(true)], &[], opts());
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        assert_eq!(aborted_of(r, "topic1", 0), vec![(1, 1, 4, 0)], "{name}");
        assert_eq!(part(r, "topic1", 0).last_stable_offset, Some(6), "{name}");
    }
    // near miss: "other" still open
    let (_b, _d, v) = broker(vec![build(false)], &[], opts());
    assert_eq!(aborted_of(&v.scan, "topic1", 0), vec![(1, 1, 4, 0)]);
    let pr = part(&v.scan, "topic1", 0);
    assert_eq!(
        (pr.log_end_offset, pr.last_stable_offset),
        (Some(5), Some(0))
    );
}

/// `TransactionsTest.testMultipleMarkersOneLeader`: one transaction over the ten partitions
/// of two topics on one leader is aborted, the next (ten partitions of one topic) is
/// committed: every partition gets its own marker of each transaction, and a
/// read_committed consumer sees only the committed records. On disk: each partition of
/// `largeTopic` holds one aborted and one committed transaction, each of
/// `largeTopicOneReplica` one aborted; nothing undecided, nothing to report. Near miss: one
/// COMMIT marker missing (on `largeTopic`-7) holds that partition's last stable offset at
/// its second transaction's first offset, and only that one.
#[test]
fn multiple_markers_one_leader() {
    let t = Producer::transactional(3, 0);
    let build = |skip_commit_on: Option<i32>| {
        let mut parts = Vec::new();
        for n in 0..10 {
            let mut p = PartitionBuilder::new("largeTopic", n);
            p.append(Batch::new(t).records(5));
            p.abort(t, 0);
            p.append(Batch::new(t).records(2));
            if skip_commit_on != Some(n) {
                p.commit(t, 0);
            }
            parts.push(p);
            let mut p = PartitionBuilder::new("largeTopicOneReplica", n);
            p.append(Batch::new(t).records(5));
            p.abort(t, 0);
            parts.push(p);
        }
        parts
    };
    let (_b, _d, v) = broker(build(None), &[], opts());
    v.assert_no_alarm();
    for n in 0..10 {
        for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
            assert_eq!(aborted_of(r, "largeTopic", n), vec![(3, 0, 5, 6)], "{name}");
            let pr = part(r, "largeTopic", n);
            assert_eq!(
                (pr.last_stable_offset, pr.transactions.committed),
                (Some(9), 1)
            );
            assert_eq!(
                aborted_of(r, "largeTopicOneReplica", n),
                vec![(3, 0, 5, 6)],
                "{name}"
            );
            assert_eq!(
                part(r, "largeTopicOneReplica", n).last_stable_offset,
                Some(6)
            );
        }
    }
    // near miss: largeTopic-7 lacks its COMMIT
    let (_b, _d, v) = broker(build(Some(7)), &[], opts());
    for n in 0..10 {
        let want = if n == 7 { Some(6) } else { Some(9) };
        assert_eq!(
            part(&v.scan, "largeTopic", n).last_stable_offset,
            want,
            "{n}"
        );
    }
    let open: Vec<_> = (v.scan.findings.iter())
        .filter(|f| matches!(f.kind, Kind::OpenTransaction | Kind::HangingTransaction))
        .map(|f| (f.topic.as_str(), f.partition, f.offset))
        .collect();
    assert_eq!(open, vec![("largeTopic", 7, Some(6))]);
}

/// `TransactionsTest.testBumpTransactionalEpoch`: a producer commits one record on
/// `test-topic`-0; its next transaction's batch for that partition times out (the leader
/// is down), so the client bumps its own epoch when it aborts (KIP-360); the abort reaches
/// `test-topic`-0 as a marker with no data of that transaction; the next transaction
/// writes two records there at the bumped epoch, from sequence 0, and commits. The
/// partition's producer state ends one epoch above the first. On disk: the empty ABORT is
/// said at info only, the producer holds epoch 1 at sequence 1, nothing undecided. Near
/// miss: the bumped epoch's first batch continuing the old sequence (1) is what a leader
/// refuses (`OutOfOrderSequenceException`: a new epoch starts at 0).
#[test]
fn bump_transactional_epoch() {
    let t0 = Producer::transactional(4, 0);
    let build = |first_seq: i32| {
        let mut p = PartitionBuilder::new("test-topic", 0);
        p.append(Batch::new(t0).records(1).sequence(0));
        p.commit(t0, 0); // 1
        p.abort(t0, 0); // 2: nothing of that transaction here
        p.append(Batch::new(t0.bumped()).records(2).sequence(first_seq)); // 3..4
        p.commit(t0.bumped(), 0); // 5
        p
    };
    let (_b, _d, v) = broker(vec![build(0)], &[], opts());
    v.assert_no_alarm();
    let r = &v.scan;
    assert_eq!(
        kinds(&r.findings),
        vec![(Kind::MarkerWithoutTransaction, Some(2))]
    );
    assert_eq!(entry_of(r, "test-topic", 0, 4), (1, 1, 4, None));
    let pr = part(r, "test-topic", 0);
    assert_eq!(
        (pr.last_stable_offset, pr.transactions.committed),
        (Some(6), 2)
    );
    // near miss: the bumped epoch continues the old sequence
    let (_b, _d, v) = broker(vec![build(1)], &[], opts());
    let l = loud_kinds(&v.scan);
    assert_eq!(l.len(), 1, "{:#?}", lines(&v.scan.findings));
    assert_eq!(l[0].1, Some(3));
    assert!(
        matches!(l[0].0, Kind::InvalidFirstSequence | Kind::SequenceGap),
        "{l:?}"
    );
}

/// `TransactionsTest.testFencingOnTransactionExpiration`: a transaction (timeout 100 ms)
/// writes one record and goes idle; the coordinator times it out and aborts it with the
/// epoch bumped (`prepareFenceProducerEpoch`), so the producer's next send is fenced. On
/// disk: the record at epoch 0, the coordinator's Ongoing → PrepareAbort → CompleteAbort at
/// epoch 1, the ABORT marker at epoch 1: one aborted transaction, the producer at epoch 1,
/// nothing wrong. Near miss: the fenced send landing anyway (data at epoch 0 after the
/// epoch-1 marker) is what the leader refuses (`ProducerFencedException`).
#[test]
fn fencing_on_transaction_expiration() {
    let run = |late_send: bool| {
        let mut c = Cluster::new(Some(crate::kafka_quiet_cluster_cases::CLUSTER))
            .coordinator(0)
            .timeout(100);
        let p = Producer::transactional(5, 0);
        let txn = Txn::new("expiringProducer", p, &[("topic1", 0)])
            .records(1)
            .abort()
            .marker_epoch(1);
        c.run(&txn);
        if late_send {
            c.data(("topic1", 0), p, 1);
        }
        cluster_verdict(&c)
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        assert_eq!(aborted_of(r, "topic1", 0), vec![(5, 0, 1, 2)], "{name}");
        assert_eq!(part(r, "topic1", 0).last_stable_offset, Some(2), "{name}");
    }
    assert_eq!(entry_of(&v.scan, "topic1", 0, 5), (1, -1, -1, None));
    // near miss: the fenced producer's send on disk
    let (_b, v) = run(true);
    let l = loud(&v.scan.findings);
    assert!(
        (v.scan.findings.iter())
            .any(|f| f.kind == Kind::ProducerEpochRegression && f.offset == Some(2)),
        "{l:#?}"
    );
}

/// Write `c` as broker 1's log dir and run `scan`, `verify` and the merge.
fn cluster_verdict(c: &Cluster) -> (Brokers, Verdict) {
    Brokers::of_cluster(c, opts())
}

/// `TransactionsTest.testBasicTransactions`: one producer writes a record to `topic1`-1 and
/// `topic2`-2 and aborts, then one more to each and commits. Before the abort the last
/// stable offset of both is 0 (nothing decided); after the commit each partition holds data,
/// ABORT, data, COMMIT: one aborted transaction (0–1), one committed, last stable offset 4;
/// a read_committed consumer sees the two committed records. Near miss: the second
/// transaction left undecided holds the last stable offset at its first offset, 2.
#[test]
fn basic_transactions() {
    let tps: [(&'static str, i32); 2] = [("topic1", 1), ("topic2", 2)];
    let p = Producer::transactional(11, 0);
    let run = |decided: bool| {
        let mut c = Cluster::new(Some(crate::kafka_quiet_cluster_cases::CLUSTER)).coordinator(0);
        c.run(&Txn::new("basic", p, &tps).records(1).abort());
        let second = Txn::new("basic", p, &tps).records(1);
        c.run(&if decided { second } else { second.open() });
        cluster_verdict(&c)
    };
    let (_b, v) = run(true);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        for (t, n) in tps {
            assert_eq!(aborted_of(r, t, n), vec![(11, 0, 1, 2)], "{name} {t}-{n}");
            let pr = part(r, t, n);
            assert_eq!(
                (pr.last_stable_offset, pr.transactions.committed),
                (Some(4), 1),
                "{name} {t}-{n}"
            );
        }
    }
    // the state before the abort: nothing decided
    let mut c = Cluster::new(Some(crate::kafka_quiet_cluster_cases::CLUSTER)).coordinator(0);
    c.run(&Txn::new("basic", p, &tps).records(1).open());
    let (_b, v) = cluster_verdict(&c);
    for (t, n) in tps {
        assert_eq!(part(&v.scan, t, n).last_stable_offset, Some(0), "{t}-{n}");
    }
    // near miss: the second transaction undecided
    let (_b, v) = run(false);
    for (t, n) in tps {
        let pr = part(&v.scan, t, n);
        assert_eq!(
            (pr.log_end_offset, pr.last_stable_offset),
            (Some(3), Some(2)),
            "{t}-{n}"
        );
    }
}

/// `TransactionsTest.testFencingOnCommit`: producer 1 writes to `topic1`-0 and `topic2`-0;
/// producer 2, same transactional id, initializes: the coordinator fences the open
/// transaction (`prepareFenceProducerEpoch`: PrepareAbort at epoch 1, ABORT markers at 1),
/// then hands producer 2 epoch 2 (`prepareIncrementProducerEpoch` from CompleteAbort);
/// producer 2 writes from sequence 0 and commits, producer 1's commit is fenced. On disk:
/// data at 0, ABORT at 1, data at 2, COMMIT at 2; the producer ends at epoch 2, the
/// coordinator holds epoch 2, nothing wrong. Near miss: producer 1's data at epoch 0 after
/// producer 2's is a fenced write the leader refuses.
#[test]
fn fencing_on_commit() {
    let tps: [(&'static str, i32); 2] = [("topic1", 0), ("topic2", 0)];
    let p1 = Producer::transactional(12, 0);
    let run = |zombie: bool| {
        let mut c = Cluster::new(Some(crate::kafka_quiet_cluster_cases::CLUSTER)).coordinator(0);
        c.run(
            &Txn::new("fenced", p1, &tps)
                .records(1)
                .abort()
                .marker_epoch(1),
        );
        c.run(&Txn::new("fenced", p1.with_epoch(2), &tps).records(1));
        if zombie {
            c.data(("topic1", 0), p1, 1);
        }
        cluster_verdict(&c)
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        for (t, n) in tps {
            assert_eq!(aborted_of(r, t, n), vec![(12, 0, 1, 2)], "{name} {t}-{n}");
            assert_eq!(part(r, t, n).last_stable_offset, Some(4), "{name} {t}-{n}");
        }
    }
    for (t, n) in tps {
        assert_eq!(entry_of(&v.scan, t, n, 12), (2, 0, 2, None), "{t}-{n}");
    }
    // near miss: the fenced producer writes again
    let (_b, v) = run(true);
    let regressions: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::ProducerEpochRegression)
        .map(|f| (f.topic.as_str(), f.offset))
        .collect();
    assert_eq!(
        regressions,
        vec![("topic1", Some(4))],
        "{:#?}",
        lines(&v.scan.findings)
    );
}

/// `TransactionsTest.testFailureToFenceEpoch`: producer 1 commits a record on `topic1`-0;
/// producer 2's InitProducerId times out because `__transaction_state` is under its minimum
/// ISR — the coordinator bumped the epoch in memory but never wrote it; producer 3 then
/// initializes and commits a record. The partition's producer ends exactly one epoch above
/// the first: the lost bump leaves no trace on disk. On disk: the coordinator's values at
/// epoch 0 then 1, the data at 0 and 1 from sequence 0, nothing wrong. Near miss: producer
/// 1, fenced by then, beginning again at epoch 0 is refused by the leader.
#[test]
fn failure_to_fence_epoch() {
    let tp: (&'static str, i32) = ("topic1", 0);
    let p = Producer::transactional(13, 0);
    let run = |zombie: bool| {
        let mut c = Cluster::new(Some(crate::kafka_quiet_cluster_cases::CLUSTER)).coordinator(0);
        c.run(&Txn::new("transactional-producer", p, &[tp]).records(1));
        c.run(&Txn::new("transactional-producer", p.bumped(), &[tp]).records(1));
        if zombie {
            c.data(tp, p, 1);
        }
        cluster_verdict(&c)
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    assert_eq!(entry_of(&v.scan, "topic1", 0, 13), (1, 0, 2, None));
    let pr = part(&v.scan, "topic1", 0);
    assert_eq!(
        (pr.last_stable_offset, pr.transactions.committed),
        (Some(4), 2)
    );
    let (_b, v) = run(true);
    assert!(
        (v.scan.findings.iter())
            .any(|f| f.kind == Kind::ProducerEpochRegression && f.offset == Some(4)),
        "{:#?}",
        lines(&v.scan.findings)
    );
}
