//! AddPartitionsToTxn (`TransactionCoordinator.handleAddPartitionsToTransaction` →
//! `TransactionMetadata.prepareAddPartitions`), the KIP-890 verification
//! (`handleVerifyPartitionsInTransaction`), EndTxn (`handleEndTransaction` →
//! `prepareAbortOrCommit`, then `prepareComplete` once the markers are written) and the
//! timeout abort (`abortTimedOutTransactions`): what each writes, and what each refuses.

use super::*;

/// What follows `shop`'s aborted transaction in [`add_partitions_writes_ongoing_at_the_producers_epoch`].
#[derive(Clone, Copy, PartialEq, Debug)]
enum Next {
    /// CompleteAbort, then the next transaction's Ongoing at the same epoch.
    Kafka,
    /// The next transaction's Ongoing right after the PrepareAbort.
    DuringPrepare,
    /// CompleteAbort, then an Ongoing one epoch up.
    OtherEpoch,
}

/// `TransactionCoordinatorTest.shouldAppendNewMetadataToLogOnAddPartitionsWhenPartitionsAdded`,
/// `TransactionCoordinatorTest.shouldRespondWithSuccessOnAddPartitionsWhenStateIsOngoing`,
/// `TransactionCoordinatorTest.shouldRespondWithSuccessOnAddPartitionsWhenStateIsCompleteAbort(0, 2)`
/// and `TransactionCoordinatorTest.shouldRespondWithErrorsNoneOnAddPartitionWhenNoErrorsAndPartitionsTheSame`:
/// AddPartitions from Empty, Ongoing, CompleteCommit or CompleteAbort writes Ongoing under
/// the same producer id and epoch, listing the partitions added so far, its start time the
/// request's when a transaction begins and kept while it runs; a partition already listed
/// is answered at once, no write. On disk, TV0 and TV2 (`shop`, producer 10 at 1): Empty,
/// Ongoing [`orders-0`] and its data, Ongoing [`orders-0`, `orders-1`] (same start) and
/// more data on both, the abort (TV2: one epoch up) with its markers, CompleteAbort, then
/// the next transaction's Ongoing [`orders-1`] at the abort's epoch with its data, recent:
/// no anomaly, nothing at warning or above, `orders-1`'s transaction alive.
///
/// Near misses: `TransactionCoordinatorTest.shouldRespondWithConcurrentTransactionsOnAddPartitionsWhenStateIsPrepareCommit`
/// and `…WhenStateIsPrepareAbort` (CONCURRENT_TRANSACTIONS: the next Ongoing written while
/// PrepareAbort, `invalid_transition`), and
/// `TransactionCoordinatorTest.shouldRespondWithProducerFencedOnAddPartitionsWhenEpochsAreDifferent`
/// (PRODUCER_FENCED: an Ongoing at another epoch than the id's, `epoch_step`).
#[test]
fn add_partitions_writes_ongoing_at_the_producers_epoch() {
    for tv in [0, 2] {
        for next in [Next::Kafka, Next::DuringPrepare, Next::OtherEpoch] {
            let txn = |v: TxnValue| if tv == 2 { tv2(v) } else { v };
            let plain = |v: TxnValue| if tv == 2 { tv2_plain(v) } else { v };
            let e = if tv == 2 { 2 } else { 1 };
            let p = Producer::transactional(10, 1);
            let mut s = Story::new("shop");
            s.coord(plain(value((10, 1), EMPTY, &[], (S, -1), TIMEOUT)));
            let t = S + 10 * SEC;
            s.coord(plain(value((10, 1), ONGOING, O0, (t, t), TIMEOUT)));
            s.data(0, p, t + 100);
            s.coord(plain(value((10, 1), ONGOING, O01, (t + SEC, t), TIMEOUT)));
            s.data(1, p, t + SEC + 100);
            s.data(0, p, t + SEC + 200);
            let u = t + 2 * SEC;
            s.coord(txn(value((10, e), PREPARE_ABORT, O01, (u, t), TIMEOUT)));
            s.marker(0, p.with_epoch(e), false, 0, u + 100);
            s.marker(1, p.with_epoch(e), false, 0, u + 110);
            if next != Next::DuringPrepare {
                s.coord(txn(value(
                    (10, e),
                    COMPLETE_ABORT,
                    &[],
                    (u + 200, t),
                    TIMEOUT,
                )));
            }
            let t2 = t + 5 * SEC;
            let e2 = if next == Next::OtherEpoch { e + 1 } else { e };
            let o1: &[(&str, &[i32])] = &[("orders", &[1])];
            s.coord(plain(value((10, e2), ONGOING, o1, (t2, t2), TIMEOUT)));
            s.data(1, p.with_epoch(e2), t2 + 100);
            let v = s.w.write().check_with(opts(t2 + 30 * SEC, None));
            let label = format!("tv{tv} {next:?}");
            match next {
                Next::Kafka => {
                    assert_anomalies(&v, "shop", &[]);
                    for (name, fs) in reports(&v) {
                        assert_no_loud(&label, &fs);
                        let (f, c) = confirmation(&fs, "orders", 1);
                        assert_eq!(f.kind, Kind::OpenTransaction, "{label} {name}");
                        assert_eq!(c["verdict"], "alive", "{label} {name}: {c}");
                        assert_eq!(kinds_on(&fs, "orders", 0), [], "{label} {name}");
                    }
                }
                Next::DuringPrepare => assert_anomalies(&v, "shop", &["invalid_transition"]),
                Next::OtherEpoch => assert_anomalies(&v, "shop", &["epoch_step"]),
            }
        }
    }
}

/// `TransactionCoordinatorTest.testVerifyPartitionHandling`,
/// `TransactionCoordinatorTest.shouldRespondWithErrorsNoneOnAddPartitionWhenOngoingVerifyOnlyAndPartitionsTheSame`
/// and `TransactionCoordinatorTest.shouldRespondWithInvalidTxnStateWhenVerifyOnlyAndPartitionNotPresent`:
/// with KIP-890 verification the partition leader asks the coordinator before appending a
/// transactional batch; a partition the Ongoing transaction does not list is answered
/// TRANSACTION_ABORTABLE (another producer id, INVALID_PRODUCER_ID_MAPPING; another epoch,
/// PRODUCER_FENCED; a Prepare*, CONCURRENT_TRANSACTIONS) and nothing is appended. On disk:
/// producer 20 at epoch 3 lists `orders-0` and `orders-1`, writes to both, commits:
/// nothing open, nothing at warning or above. Near miss: the same producer's data on
/// `orders-2` too, which no value lists and no marker closes:
/// `transaction_partition_unlisted` and `hanging_transaction` there.
#[test]
fn verification_keeps_data_to_the_listed_partitions() {
    for near_miss in [false, true] {
        let p = Producer::transactional(20, 3);
        let mut s = Story::new("verified");
        s.coord(value((20, 3), EMPTY, &[], (S, -1), TIMEOUT));
        let t = S + SEC;
        s.coord(value((20, 3), ONGOING, O01, (t, t), TIMEOUT));
        s.data(0, p, t + 100).data(1, p, t + 200);
        if near_miss {
            s.data(2, p, t + 300);
        }
        s.coord(value((20, 3), PREPARE_COMMIT, O01, (t + SEC, t), TIMEOUT));
        s.marker(0, p, true, 0, t + SEC + 100);
        s.marker(1, p, true, 0, t + SEC + 110);
        s.coord(value(
            (20, 3),
            COMPLETE_COMMIT,
            &[],
            (t + SEC + 200, t),
            TIMEOUT,
        ));
        let v = s.w.write().check_with(opts(t + 20 * MIN, None));
        assert_anomalies(&v, "verified", &[]);
        assert_case(
            &v,
            near_miss,
            ("orders", 2),
            &[Kind::TransactionPartitionUnlisted, Kind::HangingTransaction],
        );
    }
}

/// `TransactionCoordinatorTest.shouldAppendPrepareAbortToLogOnEndTxnWhenStatusIsOngoingAndResultIsAbort(0, 2)`:
/// EndTxn(ABORT) on Ongoing writes PrepareAbort — at the producer's epoch for a TV0 client,
/// one above it for a TV2 client (`prepareAbortOrCommit` bumps) — then the markers at that
/// epoch, then CompleteAbort. On disk (producer 10 at 1 on `orders-0` and `orders-1`):
/// nothing open, nothing at warning or above. Near miss, a step no EndTxn takes: TV0's
/// PrepareAbort two epochs up (a client's abort keeps the epoch, a fence adds one), TV2's
/// at the producer's epoch: `epoch_step`.
#[test]
fn end_txn_abort_writes_prepare_and_complete_at_the_versions_epoch() {
    for tv in [0, 2] {
        for near_miss in [false, true] {
            let e = match (tv, near_miss) {
                (2, false) => 2,
                (2, true) => 1,
                (_, false) => 1,
                (_, true) => 3,
            };
            let txn = |v: TxnValue| if tv == 2 { tv2(v) } else { v };
            let plain = |v: TxnValue| if tv == 2 { tv2_plain(v) } else { v };
            let p = Producer::transactional(10, 1);
            let mut s = Story::new("aborts");
            s.coord(plain(value((10, 1), EMPTY, &[], (S, -1), TIMEOUT)));
            let t = S + SEC;
            s.coord(plain(value((10, 1), ONGOING, O01, (t, t), TIMEOUT)));
            s.data(0, p, t + 100).data(1, p, t + 200);
            s.coord(txn(value(
                (10, e),
                PREPARE_ABORT,
                O01,
                (t + SEC, t),
                TIMEOUT,
            )));
            s.marker(0, p.with_epoch(e), false, 0, t + SEC + 100);
            s.marker(1, p.with_epoch(e), false, 0, t + SEC + 110);
            let done = t + SEC + 200;
            s.coord(txn(value((10, e), COMPLETE_ABORT, &[], (done, t), TIMEOUT)));
            let v = s.w.write().check_with(opts(done + MIN, None));
            let label = format!("tv{tv} near miss {near_miss}");
            if near_miss {
                assert_anomalies(&v, "aborts", &["epoch_step"]);
            } else {
                assert_anomalies(&v, "aborts", &[]);
                for (name, fs) in reports(&v) {
                    assert_no_loud(&label, &fs);
                    assert_nothing_open(name, &fs);
                }
            }
        }
    }
}

/// `TransactionCoordinatorTest.shouldReturnOkOnEndTxnWhenStatusIsCompleteCommitAndResultIsCommit(0, 2)`,
/// `TransactionCoordinatorTest.shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteCommitAndResultIsNotCommit(0, 2)`,
/// `TransactionCoordinatorTest.shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteAbortAndResultIsNotAbort(0, 2)`,
/// `TransactionCoordinatorTest.shouldReturnConcurrentTransactionsOnEndTxnRequestWhenStatusIsPrepareCommit(0, 2)`,
/// `TransactionCoordinatorTest.shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsPrepareAbort(0, 2)`
/// and `TransactionCoordinatorTest.shouldReturnInvalidTxnRequestOnEndTxnV2IfNotEndTxnV2Retry`:
/// an EndTxn on a transaction already prepared or completed is answered from the state
/// (NONE for a retry of the same result, CONCURRENT_TRANSACTIONS, INVALID_TXN_STATE,
/// PRODUCER_FENCED) and writes nothing; the Complete* follows its own Prepare*. On disk,
/// TV0 and TV2: Empty, Ongoing, Prepare*, Complete* of the same result: nothing. Near
/// misses, each the refused request written: PrepareCommit after CompleteCommit (TV2: one
/// epoch up, the next EndTxn at the bumped epoch), PrepareCommit after CompleteAbort,
/// PrepareCommit after PrepareAbort, CompleteAbort after PrepareCommit:
/// `invalid_transition` for each.
#[test]
fn a_prepared_or_finished_transaction_takes_no_second_end_txn() {
    for tv in [0, 2] {
        let txn = |v: TxnValue| if tv == 2 { tv2(v) } else { v };
        let plain = |v: TxnValue| if tv == 2 { tv2_plain(v) } else { v };
        let e = if tv == 2 { 2 } else { 1 };
        let t = S + SEC;
        let step = |st: u8, epoch: i16, at: i64| {
            let parts = if matches!(st, PREPARE_COMMIT | PREPARE_ABORT) {
                O0
            } else {
                &[]
            };
            txn(value((10, epoch), st, parts, (at, t), TIMEOUT))
        };
        let base = |prepare: u8| {
            vec![
                plain(value((10, 1), EMPTY, &[], (S, -1), TIMEOUT)),
                plain(value((10, 1), ONGOING, O0, (t, t), TIMEOUT)),
                step(prepare, e, t + SEC),
            ]
        };
        for (prepare, complete) in [
            (PREPARE_COMMIT, COMPLETE_COMMIT),
            (PREPARE_ABORT, COMPLETE_ABORT),
        ] {
            let mut h = base(prepare);
            h.push(step(complete, e, t + 2 * SEC));
            assert_legal(&history("again", h));
        }
        let next = e + i16::from(tv == 2);
        let near_misses = [
            (
                PREPARE_COMMIT,
                Some(COMPLETE_COMMIT),
                (PREPARE_COMMIT, next),
            ),
            (PREPARE_ABORT, Some(COMPLETE_ABORT), (PREPARE_COMMIT, e)),
            (PREPARE_ABORT, None, (PREPARE_COMMIT, e)),
            (PREPARE_COMMIT, None, (COMPLETE_ABORT, e)),
        ];
        for (prepare, complete, (st, epoch)) in near_misses {
            let mut h = base(prepare);
            if let Some(c) = complete {
                h.push(step(c, e, t + 2 * SEC));
            }
            h.push(step(st, epoch, t + 3 * SEC));
            let v = history("again", h);
            for (name, fs) in reports(&v) {
                let want = [("invalid_transition".to_string(), "again".to_string())];
                assert_eq!(
                    anomalies(&fs),
                    want,
                    "tv{tv} {prepare} {complete:?} {st} {name}"
                );
            }
        }
    }
}

/// `switch`'s history and data (producer 10, a `transaction.version` 2 broker: v1 values),
/// one committed transaction on `orders-0` per `(data epoch, end epoch, the EndTxn's client
/// transaction version)` of `txns`, checked a minute after the last.
fn version_switch(txns: &[(i16, i16, i16)]) -> Verdict {
    switch_with(txns, true)
}

/// [`version_switch`]; without `recorded`, the Prepare and Complete values of a version 0
/// EndTxn are v0 values, which record no `ClientTransactionVersion` (a broker whose
/// `transaction.version` is 0, `TransactionLog.valueToBytes`).
fn switch_with(txns: &[(i16, i16, i16)], recorded: bool) -> Verdict {
    let mut s = Story::new("switch");
    s.coord(tv2_plain(value((10, 0), EMPTY, &[], (S, -1), TIMEOUT)));
    let mut t = S + SEC;
    for &(data, end, ctv) in txns {
        let p = Producer::transactional(10, data);
        let ver = |v: TxnValue| {
            if ctv == 0 && !recorded {
                v
            } else {
                v.v1(-1, -1, ctv)
            }
        };
        s.coord(tv2_plain(value((10, data), ONGOING, O0, (t, t), TIMEOUT)));
        s.data(0, p, t + 100);
        s.coord(ver(value(
            (10, end),
            PREPARE_COMMIT,
            O0,
            (t + SEC, t),
            TIMEOUT,
        )));
        s.marker(0, p.with_epoch(end), true, 0, t + SEC + 100);
        s.coord(ver(value(
            (10, end),
            COMPLETE_COMMIT,
            &[],
            (t + SEC + 200, t),
            TIMEOUT,
        )));
        t += 10 * SEC;
    }
    s.w.write().check_with(opts(t + MIN, None))
}

/// Nothing of `switch` in [`version_switch`]'s verdict `v`: no anomaly, nothing open,
/// nothing at warning or above.
fn assert_switch_quiet(v: &Verdict) {
    assert_anomalies(v, "switch", &[]);
    for (name, fs) in reports(v) {
        assert_no_loud(name, &fs);
        assert_nothing_open(name, &fs);
    }
}

/// `TransactionCoordinatorTest.shouldReturnCorrectlyWhenTransactionVersionUpgraded`: each
/// EndTxn follows its own request's transaction version — a TV0 client's keeps the epoch,
/// a TV2 client's bumps it (`prepareAbortOrCommit` with `supportsEpochBump`) — and a retry
/// across the change is answered from the state (the epoch a TV0 transaction left, not
/// bumped). On disk (`switch`, producer 10, v1 values): a transaction ended by a TV0 client
/// (data, PrepareCommit, COMMIT, CompleteCommit at 0, `ClientTransactionVersion` 0), then
/// the upgraded client's (data at 0, ending at 1, version 2) and its next (data at 1,
/// ending at 2): nothing open, no anomaly, nothing at warning or above (the first bumped
/// COMMIT is `commit_epoch_above_data`, info). Near miss: the upgraded client's
/// PrepareCommit at the producer's epoch, a step no TV2 EndTxn takes: `epoch_step`.
#[test]
fn a_transaction_version_upgrade_keeps_each_end_txns_epoch_rule() {
    assert_switch_quiet(&version_switch(&[(0, 0, 0), (0, 1, 2), (1, 2, 2)]));
    let v = version_switch(&[(0, 0, 0), (0, 0, 2)]);
    assert_anomalies(&v, "switch", &["epoch_step"]);
}

/// `TransactionCoordinatorTest.shouldReturnWhenTransactionVersionDowngraded`: a TV2
/// transaction ends one epoch up; the client then running TV0 (the `transaction.version`
/// feature downgraded: its EndTxn below version 5) has its retry answered with the bumped
/// epoch, goes on there, and its own EndTxns keep the epoch. On disk (v1 values): a TV2
/// transaction (data at 0, PrepareCommit, COMMIT and CompleteCommit at 1, version 2), then
/// two of the downgraded client (data at 1, everything at 1, `ClientTransactionVersion` 0):
/// nothing at warning or above. Near miss: the downgraded client's PrepareCommit one epoch
/// up, a step no TV0 EndTxn takes: `epoch_step`.
///
/// The partition's replay infers TV2 from the first bumped COMMIT and reports each unbumped
/// one as `marker_epoch_not_bumped`; the join reads the coordinator's values of that
/// transaction — PrepareCommit and CompleteCommit at the data's epoch with
/// `ClientTransactionVersion` 0 — and lowers each to an info naming them
/// (`cluster::txns::end_version`): the downgrade every leader accepts, before 4.2
/// (`ProducerAppendInfo.checkProducerEpoch` refuses only a lower epoch) and from it (the
/// coordinator sends each marker with the transaction's own version, KIP-1228, 0 here, and
/// the strict check is TV2's).
#[test]
fn a_transaction_version_downgrade_keeps_each_end_txns_epoch_rule() {
    let v = version_switch(&[(0, 1, 2), (1, 2, 0)]);
    assert_anomalies(&v, "switch", &["epoch_step"]);
    let v = version_switch(&[(0, 1, 2), (1, 1, 0), (1, 1, 0)]);
    assert_switch_quiet(&v);
    for (name, fs) in reports(&v) {
        let nb = of_kind(&fs, Kind::MarkerEpochNotBumped);
        assert_eq!(nb.len(), 2, "{name}: {:#?}", lines(fs.iter().copied()));
        for f in nb {
            let c = &f.evidence["coordinator_transaction"];
            assert_eq!(c["client_transaction_version"], 0, "{name}: {f:#?}");
            assert_eq!(c["transactional_id"], "switch", "{name}: {f:#?}");
        }
    }
}

/// The boundary of [`a_transaction_version_downgrade_keeps_each_end_txns_epoch_rule`]: the
/// coordinator's values of the downgraded transactions are v0 values (written by a broker
/// at `transaction.version` 0), which record no client version. Without that record the
/// partition's verdict stands: both unbumped COMMITs stay `marker_epoch_not_bumped`
/// (warning), and no coordinator record is named.
#[test]
fn an_unbumped_marker_without_a_recorded_version_keeps_the_partitions_verdict() {
    let v = switch_with(&[(0, 1, 2), (1, 1, 0), (1, 1, 0)], false);
    assert_anomalies(&v, "switch", &[]);
    for (name, fs) in reports(&v) {
        let nb = of_kind(&fs, Kind::MarkerEpochNotBumped);
        assert_eq!(nb.len(), 2, "{name}: {:#?}", lines(fs.iter().copied()));
        for f in nb {
            assert_eq!(f.severity, Severity::Warning, "{name}: {f:#?}");
            assert!(
                f.evidence.get("coordinator_transaction").is_none(),
                "{f:#?}"
            );
        }
    }
}

/// `late`'s timed-out transaction (TV0, timeout 10 s, producer 10 at 1 on `orders-0`):
/// Ongoing at `t`, PrepareCommit 12 s later, then (`marked`) its COMMIT marker, then either
/// CompleteCommit or (`aborted`) the timeout's abort — PrepareAbort one epoch up, the ABORT
/// marker, CompleteAbort — checked half an hour later.
fn late_commit(marked: bool, aborted: bool) -> Verdict {
    late(Late {
        commit_by: marked.then_some(0),
        aborted,
        from_empty: true,
        tv2: false,
    })
}

/// The shapes of `late`'s history ([`late`]).
#[derive(Clone, Copy, Debug)]
struct Late {
    /// The COMMIT marker on `orders-0`, from this coordinator epoch (the values are
    /// appended at epoch 0).
    commit_by: Option<i32>,
    /// The timeout's abort follows the PrepareCommit (else CompleteCommit does).
    aborted: bool,
    /// The history starts with the Empty that began the producer's epoch; without it, at
    /// the Ongoing (the log cleaner removed what came before).
    from_empty: bool,
    /// v1 values of a TV2 client: the PrepareCommit one epoch up (2), the timeout's abort
    /// (the fence, then the server's TV2 bump) at 3.
    tv2: bool,
}

/// `late`'s history and data in shape `l`, checked half an hour after the PrepareCommit.
fn late(l: Late) -> Verdict {
    let p = Producer::transactional(10, 1);
    let txn = |v: TxnValue| if l.tv2 { tv2(v) } else { v };
    let plain = |v: TxnValue| if l.tv2 { tv2_plain(v) } else { v };
    let (commit, abort) = if l.tv2 { (2, 3) } else { (1, 2) };
    let mut s = Story::new("late");
    if l.from_empty {
        s.coord(plain(value((10, 1), EMPTY, &[], (S, -1), 10_000)));
    }
    let t = S + SEC;
    s.coord(plain(value((10, 1), ONGOING, O0, (t, t), 10_000)));
    s.data(0, p, t + 100);
    let u = t + 12 * SEC;
    s.coord(txn(value((10, commit), PREPARE_COMMIT, O0, (u, t), 10_000)));
    if let Some(ce) = l.commit_by {
        s.marker(0, p.with_epoch(commit), true, ce, u + 100);
    }
    if l.aborted {
        let e = abort;
        s.coord(txn(value((10, e), PREPARE_ABORT, O0, (u + 200, t), 10_000)));
        s.marker(0, p.with_epoch(e), false, l.commit_by.unwrap_or(0), u + 300);
        s.coord(txn(value(
            (10, e),
            COMPLETE_ABORT,
            &[],
            (u + 400, t),
            10_000,
        )));
    } else {
        s.coord(txn(value(
            (10, commit),
            COMPLETE_COMMIT,
            &[],
            (u + 200, t),
            10_000,
        )));
    }
    s.w.write().check_with(opts(u + 30 * MIN, None))
}

/// `TransactionCoordinatorTest.shouldNotAbortExpiredTransactionsThatHaveAPendingStateTransition`:
/// the timeout check skips a transaction with a transition pending — an EndTxn(COMMIT)
/// whose PrepareCommit is being appended — even past its deadline; once appended, the
/// commit completes. On disk: Ongoing, the PrepareCommit 12 s later (past the 10 s
/// timeout), the COMMIT marker, CompleteCommit; half an hour later nothing open, no
/// anomaly, nothing at warning or above. Near miss: the pending append failed after
/// reaching the log (the coordinator went back to Ongoing, no marker was sent) and the next
/// timeout check aborted — PrepareAbort one epoch up after the PrepareCommit, its ABORT
/// marker, CompleteAbort: `failed_prepare_aborted` (info), the one reading of those bytes.
#[test]
fn a_timeout_abort_skips_a_transaction_whose_commit_is_pending() {
    let v = late_commit(true, false);
    assert_anomalies(&v, "late", &[]);
    for (name, fs) in reports(&v) {
        assert_no_loud(name, &fs);
        assert_nothing_open(name, &fs);
    }
    let v = late_commit(false, true);
    assert_anomalies(&v, "late", &["failed_prepare_aborted"]);
}

/// `TransactionCoordinatorTest.shouldNotAbortExpiredTransactionsThatHaveAPendingStateTransition`,
/// the PrepareCommit appended: markers go out only from the successful append's callback
/// (`TransactionCoordinator.endTransaction`'s `sendTxnMarkersCallback`) or from a load that
/// read the PrepareCommit, and from PrepareCommit the coordinator writes only
/// CompleteCommit (the timeout check skips Prepare*, InitProducerId is answered
/// CONCURRENT_TRANSACTIONS, EndTxn(ABORT) INVALID_TXN_STATE). On disk, the Kafka shape of
/// [`a_timeout_abort_skips_a_transaction_whose_commit_is_pending`]: nothing. Near miss: a
/// PrepareAbort one epoch up after the PrepareCommit whose COMMIT marker (same coordinator
/// epoch) is on `orders-0` — no coordinator writes it: `invalid_transition`.
///
/// The coordinator's history alone reads the pair as the fence after a Prepare* whose append
/// failed (`failed_prepare_aborted`); the COMMIT marker from the coordinator epoch that
/// appended the PrepareCommit refutes that (`cluster::coordinator::sent`): the finding is
/// `invalid_transition`, names the marker and the committed data, and the abort's ABORT
/// after the COMMIT, which closed nothing (`marker_without_transaction`), links to it.
#[test]
fn a_pending_commit_whose_markers_were_sent_is_never_aborted() {
    let v = late_commit(true, false);
    assert_anomalies(&v, "late", &[]);
    let v = late_commit(true, true);
    assert_anomalies(&v, "late", &["invalid_transition"]);
    for (name, fs) in reports(&v) {
        let a = of_kind(&fs, Kind::TransactionStateAnomaly);
        assert_eq!(a.len(), 1, "{name}: {:#?}", lines(fs.iter().copied()));
        let sent = &a[0].evidence["markers_sent"];
        assert_eq!(sent["commit_markers"][0]["partition"], "orders-0", "{name}");
        assert_eq!(sent["commit_markers"][0]["offset"], 2, "{name}");
        assert!(
            a[0].message.contains("was committed"),
            "{name}: {}",
            a[0].message
        );
        let m = of_kind(&fs, Kind::MarkerWithoutTransaction);
        assert_eq!(m.len(), 1, "{name}: {:#?}", lines(fs.iter().copied()));
        assert_eq!(m[0].caused_by, [a[0].id.clone()], "{name}: {:#?}", m[0]);
    }
}

/// The boundaries of [`a_pending_commit_whose_markers_were_sent_is_never_aborted`]. A COMMIT
/// at the PrepareCommit's epoch proves its markers went out only when it is that EndTxn's
/// and came from the coordinator that appended it:
/// * TV0 history without the Empty that began the epoch (cleaned): under TV0/1 every
///   transaction of an epoch ends at it, so the COMMIT may be a delayed marker of an
///   earlier one — both readings, `failed_prepare_aborted` saying them;
/// * the same under TV2: the EndTxn's bump (`TransactionMetadata.prepareAbortOrCommit`)
///   makes the epoch this transaction's alone — `invalid_transition`;
/// * a COMMIT from a later coordinator epoch (a coordinator that loaded the PrepareCommit,
///   `TransactionStateManager.loadTransactionsForTxnTopicPartition`, while this copy's
///   coordinator had failed to append it): nothing refuted — `failed_prepare_aborted`,
///   no marker named.
#[test]
fn a_commit_marker_refutes_a_failed_prepare_only_when_it_is_that_end_txns() {
    let base = Late {
        commit_by: Some(0),
        aborted: true,
        from_empty: false,
        tv2: false,
    };
    let v = late(base);
    assert_anomalies(&v, "late", &["failed_prepare_aborted"]);
    for (name, fs) in reports(&v) {
        let a = of_kind(&fs, Kind::TransactionStateAnomaly);
        assert!(
            a[0].message.contains("delayed COMMIT"),
            "{name}: {}",
            a[0].message
        );
        assert_eq!(
            a[0].evidence["markers_sent"]["commit_proven_this_transactions"],
            false
        );
    }
    let v = late(Late { tv2: true, ..base });
    assert_anomalies(&v, "late", &["invalid_transition"]);
    let v = late(Late {
        commit_by: Some(1),
        from_empty: true,
        ..base
    });
    assert_anomalies(&v, "late", &["failed_prepare_aborted"]);
    for (name, fs) in reports(&v) {
        let a = of_kind(&fs, Kind::TransactionStateAnomaly);
        assert!(
            a[0].evidence.get("markers_sent").is_none(),
            "{name}: {:#?}",
            a[0]
        );
    }
}
