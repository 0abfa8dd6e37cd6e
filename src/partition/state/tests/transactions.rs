//! Transactions and markers: open and hanging transactions, the LSO, marker rules,
//! statistics.

use super::*;

// ----- transactions ----------------------------------------------------------------------

#[test]
fn young_open_transaction_is_open_not_hanging() {
    let mut l = Log::new();
    let first = l.txn(5, 0, 0, 3);
    l.txn(5, 0, 3, 3);
    let (f, out) = run_ctx(ctx("orders"), &l, l.ts + 2 * MIN);
    assert_eq!(kinds(&f), vec![Kind::OpenTransaction]);
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(f[0].offset, Some(first));
    assert!(f[0].remediation.is_none());
    assert_eq!(out.last_stable_offset, Some(first));

    let (f, _) = run_ctx(ctx("orders"), &l, l.ts + 60 * MIN);
    assert_eq!(kinds(&f), vec![Kind::HangingTransaction]);
    assert_eq!(f[0].evidence["late_by_broker_metric"], true);
}

/// Only the earliest open transaction holds the last stable offset: the message of a
/// later hanging one names where the LSO is instead of saying it is stuck there; below
/// the log start the LSO is the log start, not the transaction's first offset.
#[test]
fn only_the_transaction_at_the_lso_says_it_is_stuck_there() {
    let mut l = Log::new();
    let a = l.txn(5, 0, 0, 3);
    let b = l.txn(6, 0, 0, 3);
    let (f, out) = run_ctx(ctx("orders"), &l, l.ts + 60 * MIN);
    assert_eq!(
        kinds(&f),
        vec![Kind::HangingTransaction, Kind::HangingTransaction]
    );
    assert_eq!(out.last_stable_offset, Some(a));
    let at = |o| {
        f.iter()
            .find(|x| x.offset == Some(o))
            .unwrap()
            .message
            .clone()
    };
    assert!(
        at(a).ends_with("the last stable offset is stuck there"),
        "{}",
        at(a)
    );
    assert!(
        at(b).ends_with(&format!("the last stable offset is at {a}")),
        "{}",
        at(b)
    );
    let mut c = ctx("orders");
    c.log_start_offset = Some(a + 1);
    let (f, _) = run_ctx(c, &l, l.ts + 60 * MIN);
    let m = &f.iter().find(|x| x.offset == Some(a)).unwrap().message;
    assert!(
        m.ends_with(&format!("the last stable offset is at {}", a + 1)),
        "{m}"
    );
}

#[test]
fn lso_is_clamped_to_the_log_start() {
    let mut l = Log::new();
    let first = l.txn(5, 0, 0, 3);
    l.plain(10);
    let mut c = ctx("orders");
    c.log_start_offset = Some(first + 5);
    let (_, out) = run_ctx(c, &l, l.ts);
    assert_eq!(out.last_stable_offset, Some(first + 5));
    let (_, out) = run(&l);
    assert_eq!(out.last_stable_offset, Some(first));
}

#[test]
fn empty_abort_is_marker_without_transaction_info_only() {
    let mut l = Log::new();
    l.txn(5, 0, 0, 3);
    l.commit(5, 0, 2);
    let at = l.abort(5, 0, 2);
    let (f, out) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::MarkerWithoutTransaction], "{f:#?}");
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(out.txn_stats.empty_aborts, 1);
    assert!(out.aborted.is_empty(), "empty aborts go to no .txnindex");
    assert_eq!(
        f[0].evidence["previous_marker_of_other_type_at_same_epoch"]["type"],
        "commit"
    );
}

#[test]
fn marker_closing_a_transaction_is_not_marker_without_transaction() {
    let mut l = Log::new();
    l.txn(5, 0, 0, 3);
    l.abort(5, 0, 2);
    let (f, out) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(out.aborted.len(), 1);
}

#[test]
fn first_sight_marker_after_retention_is_not_reported() {
    let mut l = Log::new();
    l.skip_offsets(500); // the log starts after retention deleted the transaction's data
    l.commit(5, 0, 2);
    let mut c = ctx("orders");
    c.log_start_offset = Some(500);
    let (f, out) = run_ctx(c, &l, l.ts);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(out.txn_stats.empty_commits, 1);
}

#[test]
fn conflicting_markers_under_tv2() {
    let mut l = Log::new();
    l.txn(5, 3, 0, 3);
    l.commit(5, 4, 2); // TV2: marker one above the data
    let at = l.abort(5, 4, 2); // a delayed EndTxn(abort) completed at the same epoch
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::ConflictingMarkers], "{f:#?}");
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(f[0].evidence["previous_marker"]["type"], "commit");
}

#[test]
fn retried_marker_of_the_same_type_is_not_conflicting() {
    let mut l = Log::new();
    l.txn(5, 3, 0, 3);
    l.commit(5, 4, 2);
    l.commit(5, 4, 3); // KAFKA-19999 retry after coordinator failover
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::MarkerWithoutTransaction], "{f:#?}");
}

#[test]
fn coordinator_epoch_regression() {
    let mut l = Log::new();
    l.txn(5, 0, 0, 1);
    l.commit(5, 0, 9);
    l.txn(5, 0, 1, 1);
    let at = l.abort(5, 0, 8);
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::CoordinatorEpochRegression], "{f:#?}");
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(f[0].evidence["previous_coordinator_epoch"], 9);
    assert!(f[0].message.contains("2.4.0"));
    assert!(f[0].broker_behaviour.contains("fail to load"));
}

#[test]
fn coordinator_epoch_increase_and_admin_abort_are_fine() {
    let mut l = Log::new();
    l.txn(5, 0, 0, 1);
    l.commit(5, 0, 9);
    l.txn(5, 0, 1, 1);
    l.commit(5, 0, 12); // coordinator failover
    l.txn(5, 0, 2, 1);
    l.abort(5, 0, 12); // admin abort with the coordinator epoch from DescribeProducers
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn transaction_epoch_change_without_marker() {
    let mut l = Log::new();
    let first = l.txn(5, 0, 0, 2);
    let at = l.txn(5, 1, 0, 2);
    l.commit(5, 1, 0);
    let (f, out) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::TransactionEpochChange], "{f:#?}");
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(f[0].evidence["transaction_first_batch"]["offset"], first);
    assert_eq!(out.txn_stats.committed, 1);
    assert_eq!(out.txn_stats.sizes, vec![5]);
}

/// Kafka throws at the first non-transactional batch inside the transaction
/// (`ProducerStateManagerTest.testNonTransactionalAppendWithOngoingTransaction`): later
/// ones never reach a state check, so they are not findings of their own; a new
/// transaction of the producer is judged afresh.
#[test]
fn only_the_first_non_transactional_write_in_a_transaction_is_reported() {
    let mut l = Log::new();
    l.txn(5, 0, 0, 1);
    let at = l.idem(5, 0, 1, 1);
    l.idem(5, 0, 2, 1);
    l.idem(5, 0, 3, 1);
    l.commit(5, 0, 0);
    l.txn(5, 0, 4, 1);
    let again = l.idem(5, 0, 5, 1);
    l.commit(5, 0, 0);
    let (f, _) = run(&l);
    let non_txn: Vec<_> = f
        .iter()
        .filter(|x| x.kind == Kind::NonTransactionalWriteInTransaction)
        .map(|x| x.offset)
        .collect();
    assert_eq!(non_txn, vec![Some(at), Some(again)], "{f:#?}");
}

#[test]
fn non_transactional_write_in_transaction() {
    let mut l = Log::new();
    l.txn(5, 0, 0, 2);
    let at = l.idem(5, 0, 2, 1);
    l.commit(5, 0, 0);
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::NonTransactionalWriteInTransaction]);
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(f[0].offset, Some(at));
    assert!(
        f[0].client_error
            .as_deref()
            .unwrap()
            .contains("InvalidTxnStateException")
    );

    // After the marker, idempotent writes from the same producer are fine.
    let mut l = Log::new();
    l.txn(5, 0, 0, 2);
    l.commit(5, 0, 0);
    l.idem(5, 0, 2, 1);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn interleaved_transactions_give_exact_stats_and_aborted_list() {
    let mut l = Log::new();
    let a1 = l.txn(1, 0, 0, 2); // 0..1  A opens
    let b1 = l.txn(2, 0, 0, 2); // 2..3  B opens
    l.txn(1, 0, 2, 1); // 4
    let abort_a = l.abort(1, 0, 5); // 5: A aborted while B is open → LSO = B's first
    let a2 = l.txn(1, 0, 3, 1); // 6: A opens again
    l.commit(2, 0, 5); // 7: B committed
    l.roll();
    let abort_a2 = l.abort(1, 0, 5); // 8: nothing else open → marker + 1
    l.commit(2, 0, 5); // 9: empty commit
    let (f, out) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::MarkerWithoutTransaction]);
    assert_eq!(
        out.aborted,
        vec![
            AbortedTxn {
                producer_id: 1,
                first_offset: a1,
                last_offset: abort_a,
                last_stable_offset: b1,
                segment: 0,
                follower_last_stable_offset: None,
            },
            AbortedTxn {
                producer_id: 1,
                first_offset: a2,
                last_offset: abort_a2,
                last_stable_offset: abort_a2 + 1,
                segment: 1,
                follower_last_stable_offset: None,
            },
        ]
    );
    let s = &out.txn_stats;
    assert_eq!((s.committed, s.aborted, s.open), (1, 2, 0));
    assert_eq!((s.empty_commits, s.empty_aborts), (1, 0));
    assert_eq!(s.sizes, vec![6, 6, 3]);
    assert_eq!(s.durations_ms, vec![3000, 4000, 2000]);
    assert_eq!(out.last_stable_offset, Some(10));
    assert_eq!(out.log_end_offset, Some(10));
}

// ----- state outputs and controls ------------------------------------------------------

#[test]
fn producers_are_sorted_and_mirror_snapshot_fields() {
    let mut l = Log::new();
    l.txn(30, 2, 0, 3); // 0..2
    l.idem(10, 1, 0, 4); // 3..6
    l.commit(30, 2, 4); // 7: same epoch, cache kept
    let mut r = Replay::new(ctx("orders"), ReplayOptions::default());
    let mut f = Vec::new();
    for ev in &l.events {
        r.apply(ev, &mut f);
    }
    assert!(f.is_empty());
    let ps = r.producers();
    assert_eq!(
        ps.iter().map(|p| p.producer_id).collect::<Vec<_>>(),
        vec![10, 30]
    );
    let p10 = &ps[0];
    assert_eq!(
        (
            p10.producer_epoch,
            p10.last_sequence,
            p10.last_offset,
            p10.offset_delta
        ),
        (1, 3, 6, 3)
    );
    assert_eq!(p10.coordinator_epoch, -1);
    let p30 = &ps[1];
    assert_eq!(p30.coordinator_epoch, 4);
    assert_eq!(
        (p30.last_sequence, p30.last_offset, p30.offset_delta),
        (2, 2, 2)
    );
    assert_eq!(p30.last_timestamp, T0 + 2000, "marker timestamp");
    assert_eq!(p30.current_txn_first_offset, None);
    assert_eq!(
        p30.last_event,
        Some(LastEvent::Marker {
            offset: 7,
            epoch: 2,
            commit: true
        })
    );
    assert_eq!(r.newest_timestamp(), Some(T0 + 2000));
}

#[test]
fn kraft_metadata_skips_producer_rules() {
    let mut l = Log::new();
    l.idem(8, 2, 0, 5);
    l.idem(8, 1, 9, 1);
    let mut c = ctx("__cluster_metadata");
    c.kraft_metadata = true;
    c.internal = true;
    let (f, out) = run_ctx(c, &l, l.ts);
    assert!(f.is_empty(), "{f:#?}");
    assert!(out.producers.is_empty());
}

#[test]
fn no_epoch_finding_kind_in_plain_transactional_traffic() {
    let mut l = Log::new();
    for i in 0..20 {
        l.txn(1, 0, i * 2, 2);
        l.commit(1, 0, 0);
    }
    let (f, out) = run(&l);
    assert!(f.iter().all(|x| !EPOCH_KINDS.contains(&x.kind)));
    assert!(f.is_empty());
    assert_eq!(out.txn_stats.committed, 20);
    assert!(!out.producers[0].transaction_version_2);
}

#[test]
fn conflicting_markers_with_unknown_version_are_a_warning() {
    let mut l = Log::new();
    l.commit(5, 4, 2); // first sight at offset 0: nothing to close, TV unknown
    let at = l.abort(5, 4, 2);
    let (f, _) = run(&l);
    assert_eq!(
        kinds(&f),
        vec![Kind::MarkerWithoutTransaction, Kind::ConflictingMarkers],
        "{f:#?}"
    );
    assert_eq!(f[1].offset, Some(at));
    assert_eq!(f[1].severity, Severity::Warning);
}

/// The broker's late-transaction metric looks at the oldest open transaction only
/// (`ProducerStateManager.hasLateTransaction`, `testHasLateTransaction`): a later idle
/// transaction behind an active oldest one is not "late by the broker's metric".
#[test]
fn late_by_broker_metric_is_the_oldest_transactions_verdict() {
    let mut l = Log::new();
    let old = l.txn(50, 0, 0, 1);
    let idle = l.txn(51, 0, 0, 1);
    for i in 1..30 {
        l.advance(60_000);
        l.txn(50, 0, i, 1);
    }
    let (f, _) = run_ctx(ctx("orders"), &l, l.ts + 60_000);
    let by = |o| f.iter().find(|x| x.offset == Some(o)).unwrap();
    assert_eq!(by(idle).kind, Kind::HangingTransaction, "{f:#?}");
    assert_eq!(by(idle).evidence["late_by_broker_metric"], false);
    assert_eq!(by(old).evidence["late_by_broker_metric"], false);
    // Alone, the idle one is the oldest: late.
    let mut l = Log::new();
    let idle = l.txn(51, 0, 0, 1);
    l.advance(30 * 60_000);
    l.plain(1);
    let (f, _) = run(&l);
    let h = f.iter().find(|x| x.offset == Some(idle)).unwrap();
    assert_eq!(h.evidence["late_by_broker_metric"], true, "{f:#?}");
}

/// Under TV0/1 the next transaction reuses the epoch and continues the sequence: data
/// at the last marker's epoch continuing its sequence is the ordinary flow, so the
/// KAFKA-12671 root cause is not given there.
#[test]
fn the_late_produce_root_cause_is_not_given_under_tv0_1() {
    let mut l = Log::new();
    l.txn(40, 0, 0, 1);
    l.commit(40, 0, 1); // TV0/1: the COMMIT at the data's epoch
    let at = l.txn(40, 0, 1, 1);
    let (f, _) = run_ctx(ctx("orders"), &l, l.ts + 60 * MIN);
    let h = f.iter().find(|x| x.offset == Some(at)).unwrap();
    assert_eq!(h.kind, Kind::HangingTransaction);
    assert!(
        h.evidence["root_cause"].is_null(),
        "{:?}",
        h.evidence["root_cause"]
    );
}
