//! Retried appends: Kafka's coordinator writes a transition again when its append failed
//! after reaching the leader's log (NOT_ENOUGH_REPLICAS_AFTER_APPEND or REQUEST_TIMED_OUT,
//! which `TransactionStateManager.appendTransactionToLog` answers COORDINATOR_NOT_AVAILABLE).
//! `TransactionMarkerChannelManagerTest.
//! shouldRetryAppendToLogOnEndTxnWhenCoordinatorNotAvailableError`: the same Complete* is
//! appended twice. `TransactionStateManagerTest.testAppendFailToCoordinatorNotAvailableError`:
//! the pending state is reset, so the producer's retried EndTxn writes the same Prepare*
//! again. On disk each is one transition written twice: one transaction, no invalid
//! transition (an info `retried_append`), no lost marker in the cross-partition join.

use super::*;
use klogscan::cluster::txns::Outcome;
use klogscan::cluster::txns::group::Grouping;
use klogscan::discover::identity::transaction_partition_for;

/// Which record of the first transaction is written twice.
#[derive(Clone, Copy, Debug)]
enum Dup {
    Prepare,
    Complete,
    Both,
}

/// Producer 7's three transactions (commit, abort, commit) over orders-0/1, under TV2 or
/// not, written by its coordinator in `__transaction_state` (the id's owner partition) and
/// with their markers in the data partitions; `dup`: the first transaction's records
/// written twice. The retried Prepare lists the partitions in another order (the
/// coordinator groups them from a set).
struct World {
    coord: PartitionBuilder,
    data: [PartitionBuilder; 2],
    tv2: bool,
}

impl World {
    fn new(tv2: bool) -> World {
        let owner = transaction_partition_for("app", 50);
        World {
            coord: PartitionBuilder::new("__transaction_state", owner).start_time(T),
            data: [0, 1].map(|p| PartitionBuilder::new("orders", p).start_time(T)),
            tv2,
        }
    }

    fn rec(&mut self, at: i64, v: TxnValue) {
        let v = if self.tv2 { v.v1(-1, -1, 2) } else { v };
        let b = Batch::new(Producer::PLAIN).record(Rec::kv(key("app"), v.encode()));
        self.coord.append(b.at(at));
    }

    /// One transaction of data epoch `e` from `t`; returns the next data epoch.
    fn txn(&mut self, t: i64, e: i16, commit: bool, dup: Option<Dup>) -> i16 {
        let tp: &[(&str, &[i32])] = &[("orders", &[0, 1])];
        let reordered: &[(&str, &[i32])] = &[("orders", &[1, 0])];
        let end = if self.tv2 { e + 1 } else { e };
        let (prepare, complete) = if commit {
            (PREPARE_COMMIT, COMPLETE_COMMIT)
        } else {
            (PREPARE_ABORT, COMPLETE_ABORT)
        };
        self.rec(t, TxnValue::new(7, e, ONGOING).partitions(tp).times(t, t));
        for (i, p) in self.data.iter_mut().enumerate() {
            let b = Batch::new(Producer::transactional(7, e)).records(2);
            p.append(b.at(t + 10 + i as i64));
        }
        let prepared = |at| TxnValue::new(7, end, prepare).times(at, t);
        self.rec(t + 100, prepared(t + 100).partitions(tp));
        if matches!(dup, Some(Dup::Prepare | Dup::Both)) {
            self.rec(t + 150, prepared(t + 150).partitions(reordered));
        }
        for p in &mut self.data {
            let now = p.now();
            p.advance_time(t + 200 - now);
            p.end_txn(Producer::transactional(7, end), commit, 0);
        }
        let done = TxnValue::new(7, end, complete).times(t + 300, t);
        self.rec(t + 300, done.clone());
        if matches!(dup, Some(Dup::Complete | Dup::Both)) {
            // `tryAppendToLog` appends the very same transition: its update time too.
            self.rec(t + 310, done);
        }
        if self.tv2 { end } else { e }
    }

    /// The three transactions written to `dir`; returns the offsets of the retries.
    fn write(mut self, dir: &Path, dup: Option<Dup>) -> Vec<i64> {
        let mut e = self.txn(T - 50_000, 1, true, dup);
        e = self.txn(T - 40_000, e, false, None);
        self.txn(T - 30_000, e, true, None);
        self.coord.write(dir).unwrap();
        for p in &self.data {
            p.write(dir).unwrap();
        }
        match dup {
            None => vec![],
            Some(Dup::Prepare) => vec![2],
            Some(Dup::Complete) => vec![3],
            Some(Dup::Both) => vec![2, 4],
        }
    }
}

#[test]
fn a_retried_prepare_or_complete_is_one_transition() {
    for tv2 in [false, true] {
        for dup in [
            None,
            Some(Dup::Prepare),
            Some(Dup::Complete),
            Some(Dup::Both),
        ] {
            let d = tempfile::tempdir().unwrap();
            let retries = World::new(tv2).write(d.path(), dup);
            let r = scan(d.path());
            let case = format!("tv2 {tv2}, {dup:?}");
            let want: Vec<(String, i64)> = retries
                .iter()
                .map(|&o| ("retried_append".to_string(), o))
                .collect();
            assert_eq!(anomalies(&r), want, "{case}");
            assert!(serious(&r).is_empty(), "{case}: {:#?}", serious(&r));
            for f in r
                .findings
                .iter()
                .filter(|f| f.kind == Kind::TransactionStateAnomaly)
            {
                assert_eq!(f.severity, Severity::Info, "{case}");
                assert!(f.message.contains(" repeats "), "{case}: {}", f.message);
                assert!(
                    f.broker_behaviour
                        .contains("TransactionMarkerChannelManager.tryAppendToLog"),
                    "{case}"
                );
            }
            // The join: three transactions, each claimed by its coordinator record and
            // closed on both partitions; no marker is missing.
            let txns = &r.transactions.as_ref().expect("joined").transactions;
            let outcomes: Vec<Outcome> = txns.iter().map(|t| t.outcome).collect();
            assert_eq!(
                outcomes,
                [Outcome::Committed, Outcome::Aborted, Outcome::Committed],
                "{case}"
            );
            assert!(
                txns.iter()
                    .all(|t| t.grouping == Grouping::CoordinatorRecord
                        && t.partitions.len() == 2
                        && t.coordinator.is_some()),
                "{case}: {txns:#?}"
            );
            let first = txns[0].coordinator.as_ref().unwrap();
            assert_eq!(first.first_record_offset, 0, "{case}");
            assert!(
                !r.findings
                    .iter()
                    .any(|f| f.kind == Kind::TransactionMarkerMissing),
                "{case}"
            );
        }
    }
}

/// The negative twins: a second Prepare* or Complete* that differs from the first (another
/// epoch, outcome or partition set) is no retry Kafka writes, and stays an
/// `invalid_transition`.
#[test]
fn a_prepare_or_complete_that_differs_is_an_invalid_transition() {
    let tp: &[(&str, &[i32])] = &[("orders", &[0])];
    let other: &[(&str, &[i32])] = &[("orders", &[0, 1])];
    let e = |epoch, st| at(7, epoch, st).partitions(tp);
    // The id's history, and the anomalies of its last record.
    let last = |values: &[TxnValue], want: &[&str]| {
        let (_, a) = history(values);
        let at = values.len() as i64 - 1;
        let want: Vec<(String, i64)> = want.iter().map(|k| (k.to_string(), at)).collect();
        assert_eq!(a, want, "{values:?}");
    };
    let ongoing = e(1, ONGOING);
    let prepared = e(1, PREPARE_COMMIT);
    let done = at(7, 1, COMPLETE_COMMIT);
    let invalid = ["invalid_transition"];
    last(
        &[ongoing.clone(), prepared.clone(), e(2, PREPARE_COMMIT)],
        &invalid,
    );
    last(
        &[ongoing.clone(), prepared.clone(), e(1, PREPARE_ABORT)],
        &invalid,
    );
    let wider = e(1, PREPARE_COMMIT).partitions(other);
    last(&[ongoing.clone(), prepared.clone(), wider], &invalid);
    let complete = [ongoing.clone(), prepared.clone(), done.clone()];
    last(
        &[&complete[..], &[at(7, 2, COMPLETE_COMMIT)]].concat(),
        &invalid,
    );
    last(
        &[&complete[..], &[at(7, 1, COMPLETE_ABORT)]].concat(),
        &invalid,
    );
    last(
        &[&complete[..], &[at(8, 1, COMPLETE_COMMIT)]].concat(),
        &["invalid_transition", "pid_change"],
    );
    // The same pairs, identical: retries.
    let retried = ["retried_append"];
    last(
        &[ongoing.clone(), prepared.clone(), prepared.clone()],
        &retried,
    );
    last(&[&complete[..], &[done]].concat(), &retried);
    // Identical Ongoing or Empty neighbours are valid transitions, not retries.
    last(&[ongoing.clone(), ongoing], &[]);
    last(&[at(7, 1, EMPTY), at(7, 1, EMPTY)], &[]);
}

/// A Prepare* whose append failed, then the abort of its transaction at a fenced epoch:
/// `TransactionStateManager.appendTransactionToLog` resets the pending state after the
/// failed EndTxn append (`TransactionStateManagerTest.
/// testAppendFailToCoordinatorNotAvailableError`), the coordinator's state is Ongoing again,
/// and `TransactionCoordinator.abortTimedOutTransactions` (or a new instance's
/// InitProducerId) fences the epoch (`prepareFenceProducerEpoch`) and writes PrepareAbort.
/// An info `failed_prepare_aborted`, not an `invalid_transition`.
#[test]
fn a_failed_prepare_then_a_fenced_abort_is_not_an_invalid_transition() {
    let tp: &[(&str, &[i32])] = &[("orders", &[0])];
    let e = |epoch, st| at(7, epoch, st).partitions(tp);
    let tv2 = |v: TxnValue| v.v1(-1, -1, 2);
    let last = |values: &[TxnValue], want: &[&str]| {
        let (_, a) = history(values);
        let at = values.len() as i64 - 1;
        let want: Vec<(String, i64)> = want.iter().map(|k| (k.to_string(), at)).collect();
        assert_eq!(a, want, "{values:?}");
    };
    let aborted = ["failed_prepare_aborted"];
    // TV0/1: the Prepare* at the data epoch, the abort at the fenced one.
    for prepare in [PREPARE_COMMIT, PREPARE_ABORT] {
        last(
            &[e(1, ONGOING), e(1, prepare), e(2, PREPARE_ABORT)],
            &aborted,
        );
    }
    // TV2: the Prepare* at the bumped epoch; the abort at that epoch or above.
    for abort_epoch in [2, 3] {
        last(
            &[
                tv2(e(1, ONGOING)),
                tv2(e(2, PREPARE_COMMIT)),
                tv2(e(abort_epoch, PREPARE_ABORT)),
            ],
            &aborted,
        );
    }
    // Negatives: no fence under TV0/1 (same epoch), a commit after it, another producer
    // id, or a Complete* between: still invalid transitions.
    let invalid = ["invalid_transition"];
    last(
        &[e(1, ONGOING), e(1, PREPARE_COMMIT), e(1, PREPARE_ABORT)],
        &invalid,
    );
    last(
        &[e(1, ONGOING), e(1, PREPARE_ABORT), e(2, PREPARE_COMMIT)],
        &invalid,
    );
    last(
        &[
            e(1, ONGOING),
            e(1, PREPARE_COMMIT),
            at(8, 2, PREPARE_ABORT).partitions(tp),
        ],
        &["invalid_transition", "pid_change"],
    );
    last(
        &[
            e(1, ONGOING),
            e(1, PREPARE_COMMIT),
            at(7, 1, COMPLETE_COMMIT),
            e(2, PREPARE_ABORT),
        ],
        &invalid,
    );
}

/// The same on disk with the data partitions: producer 7's transaction over orders-0/1,
/// its PrepareCommit appended but failed, then the timeout's PrepareAbort at the fenced
/// epoch, ABORT markers of that epoch on both partitions and CompleteAbort. One aborted
/// transaction, its markers all there: no `transaction_marker_missing` (the failed
/// PrepareCommit sent none), no error.
#[test]
fn the_join_reads_one_aborted_transaction_after_a_failed_prepare() {
    for tv2 in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let mut w = World::new(tv2);
        let tp: &[(&str, &[i32])] = &[("orders", &[0, 1])];
        let t = T - 50_000;
        let (data, failed, fenced) = if tv2 { (1, 2, 3) } else { (1, 1, 2) };
        w.rec(
            t,
            TxnValue::new(7, data, ONGOING).partitions(tp).times(t, t),
        );
        for (i, p) in w.data.iter_mut().enumerate() {
            let b = Batch::new(Producer::transactional(7, data)).records(2);
            p.append(b.at(t + 10 + i as i64));
        }
        let prepared = TxnValue::new(7, failed, PREPARE_COMMIT).partitions(tp);
        w.rec(t + 100, prepared.times(t + 100, t));
        let aborting = TxnValue::new(7, fenced, PREPARE_ABORT).partitions(tp);
        w.rec(t + 60_000, aborting.times(t + 60_000, t));
        for p in &mut w.data {
            let now = p.now();
            p.advance_time(t + 60_100 - now);
            p.end_txn(Producer::transactional(7, fenced), false, 0);
        }
        let done = TxnValue::new(7, fenced, COMPLETE_ABORT).times(t + 60_200, t);
        w.rec(t + 60_200, done);
        w.coord.write(d.path()).unwrap();
        for p in &w.data {
            p.write(d.path()).unwrap();
        }
        let r = scan(d.path());
        let case = format!("tv2 {tv2}");
        assert_eq!(
            anomalies(&r),
            vec![("failed_prepare_aborted".to_string(), 2)],
            "{case}"
        );
        assert!(serious(&r).is_empty(), "{case}: {:#?}", serious(&r));
        let txns = &r.transactions.as_ref().expect("joined").transactions;
        let outcomes: Vec<Outcome> = txns.iter().map(|t| t.outcome).collect();
        assert_eq!(outcomes, [Outcome::Aborted], "{case}: {txns:#?}");
        assert!(
            !r.findings
                .iter()
                .any(|f| f.kind == Kind::TransactionMarkerMissing),
            "{case}"
        );
    }
}
