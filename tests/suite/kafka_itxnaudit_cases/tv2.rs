//! `TransactionsTest` methods added with transaction version 2 (KIP-890 part 2: every
//! transaction ends one epoch up, `TransactionMetadata.prepareAbortOrCommit`; a partition
//! joins a transaction when its leader verifies the produce with the coordinator,
//! `AddPartitionsToTxnManager`), from the 2025–2026 tree.

use super::*;
use crate::kafka_psmaudit_cases::transactions::entry_of;
use klogscan::testkit::txns::Txn;
use klogscan::testkit::{Batch, Producer};

const TEST_TOPIC: Tp = ("test-topic", 0);
const T1: Tp = ("topic1", 1);
const T2: Tp = ("topic2", 0);

/// `TransactionsTest.testBumpTransactionalEpochWithTV2Enabled`: a producer commits a record
/// on `test-topic`-0 (replication factor 1); its next transaction writes to `topic1`, then
/// `test-topic`-0's leader is killed and that batch times out, never written — so the
/// partition never joined the transaction (under TV2 the leader adds it on the produce);
/// the client aborts (ABORT one epoch up on `topic1` alone), and the third transaction
/// writes to `topic2`, `topic1` and two records to `test-topic`-0 and commits; the test
/// checks the producer's epoch went up past the first commit's. On disk: `test-topic`-0
/// holds data at 0, COMMIT at 1, data at 2 from sequence 0 (offsets 2–3), COMMIT at 3 — the
/// producer at epoch 3, above 1; `topic1`-1 one aborted and one committed transaction;
/// three cluster transactions, nothing undecided, nothing raised. Near miss: the timed-out
/// batch reaching `test-topic`-0 after the restart at epoch 1 (what the leader's
/// verification refuses: the coordinator had moved to epoch 2, and the transaction never
/// listed the partition): no transaction of epoch 1 lists `test-topic`-0, and the third
/// transaction's COMMIT closes it as committed — klogscan shows the epoch change inside
/// one open transaction and names the transaction that never listed the partition.
#[test]
fn bump_transactional_epoch_with_tv2_enabled() {
    let run = |late: bool| {
        let mut c = cluster().tv2();
        let id = "transactionalProducer";
        let p = Producer::transactional(51, 0);
        let p = c.run(&Txn::new(id, p, &[TEST_TOPIC]).records(1));
        let aborted_at = p;
        let p = c.run(&Txn::new(id, p, &[T1]).records(1).abort());
        if late {
            c.append(TEST_TOPIC, Batch::new(aborted_at).records(1));
        }
        let two = vec![Rec::kv("1", "1"), Rec::kv("3", "3")];
        c.run(
            &Txn::new(id, p, &[T2, T1, TEST_TOPIC])
                .records(1)
                .payload(TEST_TOPIC, two, None),
        );
        check(&c)
    };
    let (_b, v) = run(false);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        all_decided(name, r);
        let tt = part(r, "test-topic", 0);
        assert_eq!(
            (tt.log_end_offset, tt.transactions.committed),
            (Some(5), 2),
            "{name}"
        );
        assert_eq!(aborted_of(r, "topic1", 1), vec![(51, 0, 1, 2)], "{name}");
        assert_eq!(txn_counts(r), (2, 1, 0, 0, 0), "{name}");
    }
    let (epoch, seq, last, open) = entry_of(&v.scan, "test-topic", 0, 51);
    assert!(epoch > 1, "{epoch}");
    assert_eq!((epoch, seq, last, open), (3, -1, -1, None));
    // near miss: the timed-out batch lands late
    let (_b, v) = run(true);
    let kinds = [
        Kind::TransactionPartitionUnlisted,
        Kind::TransactionMarkerMissing,
        Kind::TransactionEpochChange,
        Kind::HangingTransaction,
    ];
    let mut got = of_kinds(&v.scan.findings, &kinds);
    got.sort_by_key(|g| g.0 as u32);
    let at = |k, o| (k, "test-topic".to_string(), 0, Some(o));
    assert_eq!(
        got,
        vec![
            at(Kind::TransactionEpochChange, 3),
            at(Kind::TransactionPartitionUnlisted, 2)
        ],
        "{:#?}",
        lines(&v.scan.findings)
    );
}
