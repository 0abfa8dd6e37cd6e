//! `TransactionMarkerChannelManager`: the markers of a Prepare* transaction go to each
//! listed partition's leader (one WriteTxnMarkers request per broker, every transaction's
//! entries for that broker in it), a partition no longer in the metadata is skipped, one
//! whose leader is unknown waits in a queue; once every marker is acknowledged the
//! Complete* value is appended once (`maybeWriteTxnCompletion`); a coordinator that lost
//! its partition drops its pending markers, and the next one's load sends them again.

use super::*;

/// What [`markers_go_per_partition_per_broker_and_complete_once`] changes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Fault {
    None,
    /// `t1`'s marker to `orders-1` lost, its CompleteCommit written.
    MarkerLost,
    /// `t2`'s CompleteCommit written twice.
    CompleteTwice,
}

/// `TransactionMarkerChannelManagerTest.shouldGenerateRequestPerPartitionPerBroker`,
/// `TransactionMarkerChannelManagerTest.shouldCompleteAppendToLogOnEndTxnWhenSendMarkersSucceed`
/// and `TransactionMarkerChannelManagerTest.shouldOnlyWriteTxnCompletionOnce`: two TV2
/// transactions of ids in two partitions of `__transaction_state` — `t1` (producer 1) on
/// `orders-0` (broker 1) and `orders-1` (broker 2), `t2` (producer 2) on `orders-0` — are
/// prepared together; broker 1 gets one request with both COMMIT markers, broker 2 one
/// with `t1`'s, each at the bumped epoch and coordinator epoch 0; each id's CompleteCommit
/// is written once, after its markers. On disk: nothing open, no anomaly, nothing at
/// warning or above. Near misses: `t1`'s marker to `orders-1` lost though CompleteCommit
/// was written (`transaction_marker_missing` and a hanging transaction whose coordinator
/// verdict is `markers_lost`); `t2`'s CompleteCommit written twice (`retried_append`,
/// info: the one completion appended again).
#[test]
fn markers_go_per_partition_per_broker_and_complete_once() {
    assert_ne!(partition_for("t1", 50), partition_for("t2", 50));
    for fault in [Fault::None, Fault::MarkerLost, Fault::CompleteTwice] {
        let (p1, p2) = (Producer::transactional(1, 0), Producer::transactional(2, 0));
        let mut s = Story::new("t1");
        s.coord(tv2_plain(value((1, 0), EMPTY, &[], (S, -1), TIMEOUT)));
        s.id = "t2";
        s.coord(tv2_plain(value((2, 0), EMPTY, &[], (S, -1), TIMEOUT)));
        let t = S + SEC;
        s.id = "t1";
        s.coord(tv2_plain(value((1, 0), ONGOING, O01, (t, t), TIMEOUT)));
        s.id = "t2";
        s.coord(tv2_plain(value((2, 0), ONGOING, O0, (t, t), TIMEOUT)));
        s.data(0, p1, t + 100)
            .data(1, p1, t + 110)
            .data(0, p2, t + 120);
        let u = t + SEC;
        s.id = "t1";
        s.coord(tv2(value((1, 1), PREPARE_COMMIT, O01, (u, t), TIMEOUT)));
        s.id = "t2";
        s.coord(tv2(value((2, 1), PREPARE_COMMIT, O0, (u, t), TIMEOUT)));
        s.marker(0, p1.bumped(), true, 0, u + 100);
        s.marker(0, p2.bumped(), true, 0, u + 100);
        if fault != Fault::MarkerLost {
            s.marker(1, p1.bumped(), true, 0, u + 110);
        }
        let done = u + 200;
        s.id = "t1";
        s.coord(tv2(value((1, 1), COMPLETE_COMMIT, &[], (done, t), TIMEOUT)));
        s.id = "t2";
        s.coord(tv2(value((2, 1), COMPLETE_COMMIT, &[], (done, t), TIMEOUT)));
        if fault == Fault::CompleteTwice {
            s.coord(tv2(value((2, 1), COMPLETE_COMMIT, &[], (done, t), TIMEOUT)));
        }
        let v = s.w.write().check_with(opts(done + 20 * MIN, None));
        assert_anomalies(&v, "t1", &[]);
        let twice: &[&str] = if fault == Fault::CompleteTwice {
            &["retried_append"]
        } else {
            &[]
        };
        assert_anomalies(&v, "t2", twice);
        for (name, fs) in reports(&v) {
            if fault == Fault::MarkerLost {
                let (f, c) = confirmation(&fs, "orders", 1);
                assert_eq!(f.kind, Kind::HangingTransaction, "{name}");
                assert_eq!(c["verdict"], "markers_lost", "{name}: {c}");
                let missing = of_kind(&fs, Kind::TransactionMarkerMissing);
                let at: Vec<_> = (missing.iter())
                    .map(|f| (f.topic.as_str(), f.partition))
                    .collect();
                assert_eq!(at, [("orders", 1)], "{name}");
            } else {
                assert_no_loud(name, &fs);
                assert_nothing_open(name, &fs);
            }
        }
    }
}

/// `TransactionMarkerChannelManagerTest.shouldSkipSendMarkersWhenLeaderNotFound` and
/// `TransactionMarkerChannelManagerTest.shouldSaveForLaterWhenLeaderUnknownButNotAvailable`:
/// a listed partition the metadata no longer has (its topic deleted) gets no marker and is
/// dropped from the transaction; one whose leader is unknown keeps its marker queued until
/// a leader is known; Complete* waits for the rest. On disk (TV0, `t`, producer 5): the
/// transaction lists `orders-0` and `gone-0`, writes to both, `gone` is deleted (its
/// directory not in the inputs), `orders-0`'s COMMIT arrives 40 s after the PrepareCommit,
/// then CompleteCommit: nothing open, no anomaly, nothing at warning or above. Near miss:
/// `gone-0` still there with its data and no marker — a partition with a leader never
/// skipped: `transaction_marker_missing` and `hanging_transaction` on `gone-0`.
#[test]
fn a_deleted_partition_is_skipped_and_a_leaderless_one_waits() {
    for near_miss in [false, true] {
        let p = Producer::transactional(5, 0);
        let both: &[(&str, &[i32])] = &[("orders", &[0]), ("gone", &[0])];
        let mut s = Story::new("t");
        s.coord(value((5, 0), EMPTY, &[], (S, -1), TIMEOUT));
        let t = S + SEC;
        s.coord(value((5, 0), ONGOING, both, (t, t), TIMEOUT));
        s.data(0, p, t + 100);
        if near_miss {
            produce(s.w.part(2, "gone", 0), p, 2, t + 200);
        }
        let u = t + SEC;
        s.coord(value((5, 0), PREPARE_COMMIT, both, (u, t), TIMEOUT));
        s.marker(0, p, true, 0, u + 40 * SEC);
        let done = u + 40 * SEC + 100;
        s.coord(value((5, 0), COMPLETE_COMMIT, &[], (done, t), TIMEOUT));
        let v = s.w.write().check_with(opts(done + 20 * MIN, None));
        assert_anomalies(&v, "t", &[]);
        assert_case(
            &v,
            near_miss,
            ("gone", 0),
            &[Kind::TransactionMarkerMissing, Kind::HangingTransaction],
        );
    }
}

/// What happens after the markers of [`markers_written_then_the_completion_refused`].
#[derive(Clone, Copy, PartialEq, Debug)]
enum After {
    /// A minute later, nothing yet.
    Soon,
    /// The next coordinator (leader epoch 1) loaded the partition, sent the markers again
    /// at coordinator epoch 1 and wrote CompleteCommit.
    Reloaded,
    /// Twenty minutes later, still nothing.
    Never,
}

/// `TransactionMarkerChannelManagerTest.shouldAbortAppendToLogOnEndTxnWhenNotCoordinatorError`,
/// `TransactionMarkerChannelManagerTest.shouldRemoveMarkersForTxnPartitionWhenPartitionEmigrated`
/// and `TransactionCoordinatorTest.shouldRemoveTransactionsForPartitionOnEmigration`: every
/// marker was acknowledged, but the CompleteCommit append is refused (NOT_COORDINATOR: the
/// coordinator lost its partition), so the value stays PrepareCommit; the partition's next
/// leader loads it, sends the markers again at its coordinator epoch and completes it. On
/// disk (TV0, `moved`, producer 7 on `orders-0` and `orders-1`): PrepareCommit and both
/// COMMIT markers at coordinator epoch 0, no Complete — a minute later nothing open, no
/// anomaly, nothing at warning or above; after the reload (a second COMMIT on each
/// partition at coordinator epoch 1, CompleteCommit at leader epoch 1) the same twenty
/// minutes later. Near miss: twenty minutes and no reload — the completion was lost, not the
/// markers: `transaction_stuck_in_prepare` saying every listed partition holds the marker,
/// and `prepare_without_complete`; still nothing open.
#[test]
fn markers_written_then_the_completion_refused() {
    for after in [After::Soon, After::Reloaded, After::Never] {
        let p = Producer::transactional(7, 0);
        let mut s = Story::new("moved");
        s.coord(value((7, 0), EMPTY, &[], (S, -1), TIMEOUT));
        let t = S + SEC;
        s.coord(value((7, 0), ONGOING, O01, (t, t), TIMEOUT));
        s.data(0, p, t + 100).data(1, p, t + 110);
        let u = t + SEC;
        s.coord(value((7, 0), PREPARE_COMMIT, O01, (u, t), TIMEOUT));
        s.marker(0, p, true, 0, u + 100)
            .marker(1, p, true, 0, u + 110);
        if after == After::Reloaded {
            let r = u + 30 * SEC;
            s.marker(0, p, true, 1, r).marker(1, p, true, 1, r + 10);
            s.w.txn_log(3, partition_for("moved", 50))
                .set_leader_epoch(1);
            s.coord(value((7, 0), COMPLETE_COMMIT, &[], (r + 200, t), TIMEOUT));
        }
        let now = if after == After::Soon {
            u + MIN
        } else {
            u + 20 * MIN
        };
        let v = s.w.write().check_with(opts(now, None));
        let label = format!("{after:?}");
        if after == After::Never {
            assert_anomalies(&v, "moved", &["prepare_without_complete"]);
        } else {
            assert_anomalies(&v, "moved", &[]);
        }
        for (name, fs) in reports(&v) {
            assert_nothing_open(name, &fs);
            if after == After::Never {
                let stuck = of_kind(&fs, Kind::TransactionStuckInPrepare);
                assert_eq!(
                    stuck.len(),
                    1,
                    "{label} {name}: {:#?}",
                    lines(fs.iter().copied())
                );
                let m = &stuck[0].message;
                assert!(m.contains("every listed partition holds the marker"), "{m}");
            } else {
                assert_no_loud(&label, &fs);
            }
        }
    }
}
