//! `TransactionsTest` cases that commit a consumer group's offsets inside the transaction
//! (`sendOffsetsToTransaction`): the producer's AddOffsetsToTxn adds the group's
//! `__consumer_offsets` partition to the transaction, the group coordinator writes the
//! commit as a transactional batch of the producer there (base sequence 0,
//! `GroupMetadataManager.generateOffsetRecords`), and the transaction's marker on that
//! partition makes it the group's committed offset or drops it
//! (`GroupMetadataManager.handleTxnCompletion`; `OffsetMetadataManager.replayEndTransactionMarker`
//! in the new coordinator; the load replays the marker the same way).

use super::*;
use crate::kafka_quiet_coordinator_cases::offsets::commit;
use klogscan::testkit::txnlog::{TxnValue, state};
use klogscan::testkit::txns::Txn;
use klogscan::testkit::{Batch, Producer};
use serde_json::json;

const INPUT: Tp = ("topic1", 0);
const OUT: [Tp; 2] = [("topic2", 0), ("topic2", 1)];

/// The consume–transform–produce loop of `TransactionsTest.sendOffset`, at 40 records: the
/// input seeded with 40 plain records; transactions of 10 records (5 on each output
/// partition) with the group's offset commit, committing and aborting by turns (an abort
/// resets the consumer to the committed position, so the next transaction copies the same
/// records again): 4 commits, 3 aborts. `lose_last`: the last transaction's COMMIT never
/// reaches `__consumer_offsets-0` while the coordinator completes it.
fn send_offsets_loop(lose_last: bool) -> (Brokers, Verdict) {
    const GROUP: &str = "foobar-consumer-group";
    let offsets_tp = offsets_of(GROUP);
    let mut c = cluster();
    c.plain(INPUT, 40);
    let p = Producer::transactional(21, 0);
    let (mut position, mut should_commit) = (0, false);
    while position < 40 {
        should_commit = !should_commit;
        let next = position + 10;
        let offsets = vec![rec(commit(GROUP, INPUT.0, INPUT.1, next, c.now()))];
        let mut t = Txn::new("transactional-producer", p, &[OUT[0], OUT[1], offsets_tp])
            .records(5)
            .payload(offsets_tp, offsets, Some(0));
        if should_commit {
            position = next;
            if lose_last && position == 40 {
                t = t.skip_marker_on(offsets_tp);
            }
        } else {
            t = t.abort();
        }
        c.run(&t);
    }
    check(&c)
}

/// `TransactionsTest.testSendOffsetsWithGroupId` and `testSendOffsetsWithGroupMetadata` (the
/// two differ only in the generation and member id the TxnOffsetCommit carries, which the
/// offset commit value does not keep): on disk every output partition holds 4 committed and
/// 3 aborted transactions of 5 records (read_committed: 20 records each, 40 in all, none
/// twice — the test's "exactly the seeded messages"), the group's committed offset of the
/// input is 40, its log end (the aborted commits 20, 30 and 40 dropped), nothing undecided,
/// nothing raised. Near miss: the last COMMIT lost on `__consumer_offsets-0` (the
/// coordinator's CompleteCommit says it finished): the marker is missing there, the commit
/// of 40 hangs, the group stays at 30 and would copy the last 10 records again.
#[test]
fn send_offsets_with_group_id_and_group_metadata() {
    let (b, v) = send_offsets_loop(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        all_decided(name, r);
        for (t, n) in OUT {
            assert_eq!(aborted_of(r, t, n).len(), 3, "{name} {t}-{n}");
            assert_eq!(part(r, t, n).transactions.committed, 4, "{name} {t}-{n}");
            assert_eq!(part(r, t, n).log_end_offset, Some(7 * 5 + 7), "{name}");
        }
        assert_eq!(txn_counts(r), (4, 3, 0, 0, 0), "{name}");
    }
    let want = BTreeMap::from([(("topic1".to_string(), 0), (40, 0, String::new()))]);
    assert_eq!(committed(&b, "foobar-consumer-group"), want);
    // near miss: the last COMMIT lost on the offsets partition
    let (b, v) = send_offsets_loop(true);
    let kinds = [
        Kind::TransactionMarkerMissing,
        Kind::HangingTransaction,
        Kind::GroupOffsetsPendingInHangingTransaction,
    ];
    // the last transaction's commit is the 7th batch of the offsets partition, after six
    // markers: offset 12; the group's pending commit is reported there
    let n = offsets_of("foobar-consumer-group").1;
    let at = |k| (k, "__consumer_offsets".to_string(), n, Some(12));
    let mut got = of_kinds(&v.scan.findings, &kinds);
    got.sort_by_key(|g| g.0 as u32);
    assert_eq!(
        got,
        vec![
            at(Kind::HangingTransaction),
            at(Kind::TransactionMarkerMissing),
            at(Kind::GroupOffsetsPendingInHangingTransaction),
        ],
        "{:#?}",
        lines(&v.scan.findings)
    );
    let want = BTreeMap::from([(("topic1".to_string(), 0), (30, 0, String::new()))]);
    assert_eq!(committed(&b, "foobar-consumer-group"), want);
}

/// `TransactionsTest.testFencingOnSendOffsets`: producer 1 writes a record to `topic1`-0 and
/// `topic2`-0 and flushes; producer 2 (same transactional id) initializes, so the
/// coordinator fences the open transaction (PrepareAbort at epoch 1, ABORT markers at 1,
/// `prepareFenceProducerEpoch`) and hands producer 2 epoch 2, which writes to both and
/// commits; producer 1's `sendOffsetsToTransaction` is refused (ProducerFencedException at
/// AddOffsetsToTxn) and writes nothing. On disk: data at 0, ABORT at 1, data at 2, COMMIT
/// at 2 on both partitions, nothing in `__consumer_offsets`; a read_committed consumer sees
/// producer 2's two records; nothing raised. (The same data partitions as
/// `testFencingOnCommit`; what this test adds is where the fenced call would have written.)
/// Near miss: producer 1's offset commit landing anyway in the group's `__consumer_offsets`
/// partition at epoch 0, after the coordinator completed everything: nothing will ever
/// close it — a `hanging_transaction` that names the KAFKA-12671 pattern (a write after the
/// coordinator's last update: it never knew of it, so no `transaction_partition_unlisted`,
/// which needs a transaction of that epoch in progress), and the group's commit held
/// pending there (`group_offsets_pending_in_hanging_transaction`).
#[test]
fn fencing_on_send_offsets() {
    let tps = [("topic1", 0), ("topic2", 0)];
    let p1 = Producer::transactional(22, 0);
    let run = |zombie: bool| {
        let mut c = cluster();
        let id = "transactional-producer";
        c.run(&Txn::new(id, p1, &tps).records(1).abort().marker_epoch(1));
        c.run(&Txn::new(id, p1.with_epoch(2), &tps).records(1));
        if zombie {
            let offsets = rec(commit("foobarGroup", "topic1", 0, 110, c.now()));
            c.append(
                offsets_of("foobarGroup"),
                Batch::new(p1).record(offsets).sequence(0),
            );
        }
        check(&c)
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        for (t, n) in tps {
            assert_eq!(aborted_of(r, t, n), vec![(22, 0, 1, 2)], "{name} {t}-{n}");
            assert_eq!(part(r, t, n).transactions.committed, 1, "{name} {t}-{n}");
        }
        all_decided(name, r);
        assert!(!r.partitions.iter().any(|p| p.topic == "__consumer_offsets"));
        assert_eq!(txn_counts(r), (1, 1, 0, 0, 0), "{name}");
    }
    // near miss: the fenced offset commit on disk
    let (_b, v) = run(true);
    let kinds = [
        Kind::TransactionPartitionUnlisted,
        Kind::HangingTransaction,
        Kind::GroupOffsetsPendingInHangingTransaction,
    ];
    let n = offsets_of("foobarGroup").1;
    let at = |k| (k, "__consumer_offsets".to_string(), n, Some(0));
    let mut got = of_kinds(&v.scan.findings, &kinds);
    got.sort_by_key(|g| g.0 as u32);
    assert_eq!(
        got,
        vec![
            at(Kind::HangingTransaction),
            at(Kind::GroupOffsetsPendingInHangingTransaction)
        ],
        "{:#?}",
        lines(&v.scan.findings)
    );
    let hanging = (v.scan.findings.iter())
        .find(|f| f.kind == Kind::HangingTransaction)
        .unwrap();
    assert!(
        hanging.message.contains("KAFKA-12671") && hanging.group.is_none(),
        "{}",
        hanging.message
    );
}

/// `TransactionsTest.testOffsetMetadataInSendOffsetsToTransaction`: a transaction holding
/// only the offset commit of group `group` for `topic1`-0 — offset 110, leader epoch 15,
/// metadata "some metadata" — commits; a second producer's InitProducerId (an Empty value
/// one epoch up) makes sure the markers are written. The consumer's `committed()` then
/// answers exactly that offset, epoch and metadata: so does klogscan's replay of
/// `__consumer_offsets`. `topic1`-0, created by the test's setup and never written, is
/// empty: the commit lies beyond its log end, and klogscan says so
/// (`committed_offset_beyond_log_end`: a consumer of the group would find no record at 110
/// and reset) — true of these bytes, which the test writes to check the round trip, not to
/// consume. Near miss: the transaction aborted — the group has no committed offset, and the
/// finding goes with it.
#[test]
fn offset_metadata_in_send_offsets_to_transaction() {
    let run = |commit_it: bool| {
        let mut c = cluster();
        let p = Producer::transactional(23, 0);
        let value = json!({"offset": 110, "leaderEpoch": 15, "metadata": "some metadata",
            "commitTimestamp": c.now()});
        let key = json!({"group": "group", "topic": "topic1", "partition": 0});
        let offsets = vec![rec((1, key, Some((3, value))))];
        let t = Txn::new("transactional-producer", p, &[offsets_of("group")])
            .payload(offsets_of("group"), offsets, Some(0))
            .records(0);
        c.run(&if commit_it { t } else { t.abort() });
        let now = c.now();
        let empty = TxnValue::new(23, 1, state::EMPTY)
            .timeout(60_000)
            .times(now, -1);
        c.coordinator_record("transactional-producer", Some(empty));
        let mut b = Brokers::new();
        let dir = b.path(1, "data");
        c.write(&dir, 1).unwrap();
        // created by the test's setup, never written: an empty segment and index
        let empty = dir.join("topic1-0");
        std::fs::create_dir_all(&empty).unwrap();
        for ext in ["log", "index"] {
            std::fs::write(empty.join(format!("{:020}.{ext}", 0)), b"").unwrap();
        }
        b.add(dir);
        let v = b.check_with(opts_at(&c));
        (b, v)
    };
    let (b, v) = run(true);
    let want = BTreeMap::from([(
        ("topic1".to_string(), 0),
        (110, 15, "some metadata".to_string()),
    )]);
    assert_eq!(committed(&b, "group"), want);
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        all_decided(name, r);
        let loud: Vec<_> = (r.findings.iter())
            .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
            .map(|f| (f.kind, f.topic.as_str(), f.group.as_deref(), f.offset))
            .collect();
        assert_eq!(
            loud,
            vec![(
                Kind::CommittedOffsetBeyondLogEnd,
                "topic1",
                Some("group"),
                Some(110)
            )],
            "{name}: {:#?}",
            lines(&r.findings)
        );
    }
    // near miss: aborted
    let (b, v) = run(false);
    let inv = klogscan::discover::layout::discover(&b.all());
    let groups = list_groups(&inv, &GroupsOptions::default());
    assert!(
        !groups
            .iter()
            .any(|g| g.offsets.iter().any(|o| o.topic == "topic1")),
        "{groups:#?}"
    );
    v.assert_no_alarm();
}
