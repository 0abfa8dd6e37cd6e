//! `AbstractFetcherThreadTest` and `ReplicaFetcherThreadTest`: the follower's side of the
//! truncation (`getOffsetTruncationState` over the leader's answer and its own
//! `UnifiedLog.endOffsetForEpoch`).

use super::{cat, check, copy, divergence, epochs, legacy_log, run, survives, truncates, verdict};
use klogscan::finding::Severity;
use klogscan::testkit::{Batch, Producer};

/// The leader of `ReplicaFetcherThreadTest.shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower`
/// (broker 1): epoch 3 up to `e3_end`, epoch 4 from there, epoch 6 from 155 (log end 170).
/// Its cache answers the follower's epoch 5 with epoch 4 ending at 155, and epoch 3 with
/// `e3_end`.
fn second_round_leader(e3_end: i64) -> super::Copy {
    let p = epochs(
        0,
        &cat(&[
            run(3, "v", 0, e3_end),
            run(4, "l", e3_end, 155 - e3_end),
            run(6, "l", 155, 15),
        ]),
    );
    copy(1, p, 170)
}

/// `ReplicaFetcherThreadTest.shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower`:
/// the follower (broker 2, log end 200, high watermark 198) knows epochs 3 and 5, epoch 3
/// ending at 120 (its records 101..119 other than the leader's). Asked for epoch 5, the leader
/// answers epoch 4 ending at 155; the follower does not know epoch 4, truncates to its epoch
/// 3's end, 120, and asks again (`truncationCompleted = false`); epoch 3 ends at 101 on the
/// leader (partition `t1p0`; 102 for `t1p1`): the follower ends truncated there — below its
/// high watermark, so acknowledged records are replaced (error). Near miss: a follower that
/// knows epoch 4 (it fetched 101..119 of it) gets its answer in one round, 120.
#[test]
fn a_follower_asks_again_when_the_leader_answers_an_epoch_it_does_not_know() {
    for e3_end in [101, 102] {
        let follower = epochs(
            0,
            &cat(&[
                run(3, "v", 0, e3_end),
                run(3, "f", e3_end, 120 - e3_end),
                run(5, "f", 120, 80),
            ]),
        );
        let v = check(vec![second_round_leader(e3_end), copy(2, follower, 198)]);
        assert_eq!(
            verdict(&v),
            truncates(e3_end, 2, e3_end, Severity::Error),
            "{}",
            divergence(&v).message
        );
    }
    // Near miss: the follower holds epoch 4 too.
    let follower = epochs(
        0,
        &cat(&[
            run(3, "v", 0, 101),
            run(4, "l", 101, 19),
            run(5, "f", 120, 80),
        ]),
    );
    let v = check(vec![second_round_leader(101), copy(2, follower, 198)]);
    assert_eq!(verdict(&v), truncates(120, 2, 120, Severity::Error));
}

/// `ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs`
/// (with `UnifiedLogTest.shouldUpdateOffsetForLeaderEpochsWhenDeletingSegments`: retention
/// moves the cache's first entry up to the new log start). The follower's latest epoch is 5;
/// the leader answers epoch 4 ending at 156, and the mocked follower log has no end offset for
/// epoch 4, so it truncates to the leader's 156. A real follower log with a cache has one:
/// below its oldest entry `LeaderEpochFileCache.endOffsetFor` answers the requested epoch and
/// the oldest entry's start. Here the follower (broker 2) kept only its epoch 5, from 150
/// (retention deleted the rest), log end 200, high watermark 197; the leader (broker 1) holds
/// epoch 4 from 100 to 155 and epoch 6 from 156. Trunk truncates the follower to
/// min(150, 156, 200) = 150 — not the mock's 156 — and klogscan says 150. Near miss: a
/// follower still holding epoch 4 (150..155, the leader's records) answers its own end of
/// epoch 4, 156: the mock's answer.
#[test]
fn a_follower_whose_retention_removed_the_leaders_epoch_truncates_to_its_oldest_start() {
    let leader = || {
        copy(
            1,
            epochs(100, &cat(&[run(4, "v", 100, 56), run(6, "l", 156, 54)])),
            210,
        )
    };
    let follower = epochs(150, &run(5, "f", 150, 50));
    let v = check(vec![leader(), copy(2, follower, 197)]);
    assert_eq!(verdict(&v), truncates(150, 2, 150, Severity::Error));
    let follower = epochs(150, &cat(&[run(4, "v", 150, 6), run(5, "f", 156, 44)]));
    let v = check(vec![leader(), copy(2, follower, 197)]);
    assert_eq!(verdict(&v), truncates(156, 2, 156, Severity::Error));
}

/// `AbstractFetcherThreadTest.testTruncationSkippedIfNoEpochChange`: the leader holds a@1, b@3,
/// c@5; the follower, empty at epoch 5, truncated once and fetched a and b (one record per
/// fetch). Its latest epoch 3 ends at 2 on the leader, its own log end: nothing to truncate
/// and nothing differs. Near miss: the follower's record at 1 was written by a leader of
/// epoch 4 the leader never knew (another value): asked for epoch 4, the leader answers epoch
/// 3 ending at 2, unknown to the follower, whose epoch 1 ends at 1: it truncates to 1 (its
/// high watermark 1: not known to be acknowledged, a warning).
#[test]
fn a_follower_that_fetched_a_prefix_of_the_leaders_epochs_truncates_nothing() {
    let leader = || {
        copy(
            1,
            epochs(0, &[(1, "a".into()), (3, "b".into()), (5, "c".into())]),
            2,
        )
    };
    let v = check(vec![
        leader(),
        copy(2, epochs(0, &[(1, "a".into()), (3, "b".into())]), 1),
    ]);
    assert_eq!(verdict(&v), None);
    let v = check(vec![
        leader(),
        copy(2, epochs(0, &[(1, "a".into()), (4, "x".into())]), 1),
    ]);
    assert_eq!(verdict(&v), truncates(1, 2, 1, Severity::Warning));
}

/// The fetches that end with the follower holding what the leader sent:
/// `AbstractFetcherThreadTest.testSimpleFetch` (a, b at epoch 0, both high watermarks 2),
/// `testUnknownLeaderEpochWhileFetching` (the follower holds a of a, b: stuck one record
/// behind), `testFencedFetch` (the leader's epoch bumped to 1 after the follower caught up:
/// `Partition.makeLeader` assigns 1 at the log end, 2, in its cache, no batch of it),
/// `testCorruptMessage` (the corrupted response is never appended; the retried fetch appends
/// a, b), `testUnknownLeaderEpochInTruncation` (a fetched once the leader reached the
/// follower's epoch), `testFencedTruncation` and `testFencedOffsetResetAfterOutOfRange` (the
/// follower, fenced, stays empty) and `testRetryAfterUnknownLeaderEpochInLatestOffsetFetch`
/// (the follower, below the leader's log start 2, ends holding the leader's c@4 from 2).
/// The follower's latest epoch ends on the leader at or past its own log end: nothing is
/// truncated and nothing differs. Near miss: the follower's record at 1 has another value
/// within epoch 0 — a divergence no truncation removes (the epochs agree), it survives.
#[test]
fn a_follower_holding_what_the_leader_sent_is_consistent() {
    let ab = || epochs(0, &[(0, "a".into()), (0, "b".into())]);
    let bumped = || copy(1, ab(), 2).checkpoint("0\n2\n0 0\n1 2\n");
    for (leader, follower) in [
        (copy(1, ab(), 2), copy(2, ab(), 2)),
        (copy(1, ab(), 2), copy(2, epochs(0, &[(0, "a".into())]), 1)),
        (bumped(), copy(2, ab(), 2)),
        (
            copy(1, epochs(0, &[(0, "a".into())]), 1),
            copy(2, epochs(0, &[(0, "a".into())]), 1),
        ),
        (
            copy(1, epochs(1, &[(2, "b".into()), (4, "c".into())]), 2),
            copy(2, epochs(0, &[]), 0),
        ),
        (
            copy(1, epochs(0, &[(1, "a".into()), (1, "b".into())]), 2),
            copy(2, epochs(0, &[]), 0),
        ),
        (
            copy(1, epochs(2, &[(4, "c".into())]), 3),
            copy(2, epochs(2, &[(4, "c".into())]), 3),
        ),
    ] {
        assert_eq!(verdict(&check(vec![leader, follower])), None);
    }
    let v = check(vec![
        bumped(),
        copy(2, epochs(0, &[(0, "a".into()), (0, "x".into())]), 2),
    ]);
    assert_eq!(verdict(&v), survives(1, Severity::Warning));
}

/// `orders-0` in magic-1 messages `m0..m3`, then `tail` records at leader epoch 1 from 4 in
/// v2 batches (a broker that led after the message format upgrade).
fn upgraded(tail: i64) -> klogscan::testkit::PartitionBuilder {
    let mut p = legacy_log(&[("m", 4)]);
    p.set_leader_epoch(1);
    for o in 4..4 + tail {
        p.append(
            Batch::new(Producer::PLAIN)
                .values([format!("b{o}").as_bytes()])
                .at(super::super::kafka_quiet_cluster_cases::T0 + o * 1000),
        );
    }
    p
}

/// `ReplicaFetcherThreadTest.shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset`:
/// a leader whose log has no epoch cache (`UnifiedLog.endOffsetForEpoch` is empty: a v0/v1
/// log) answers undefined, and the follower truncates to its initial fetch offset, its high
/// watermark (`getOffsetTruncationState`, before truncation on fetch, inter-broker protocol
/// below 2.7). With truncation on fetch the same leader fails the follower's last fetched
/// epoch with `OffsetOutOfRangeException` (`Partition.readRecords`) and the follower only
/// truncates to the leader's log end when it is past it (`fetchOffsetAndTruncate`: "a mismatch
/// … we don't fix"); the copy without epochs, following, truncates to its high watermark
/// (`truncateToHighWatermark`). Broker 1: v1 records m0..m3, a0..a2 (high watermark 4);
/// broker 2: m0..m3 then b4..b6 at epoch 1 in v2 batches (high watermark 4). Whether the
/// divergence at 4 survives depends on the protocol and on which copy follows, which the files
/// do not tell: klogscan draws no truncation and does not say it survives. Near miss: both
/// copies without epochs — the high-watermark truncation is said (`removed_unless_past`).
#[test]
fn a_leader_without_epochs_answers_undefined_and_nothing_is_drawn() {
    let v = check(vec![
        copy(1, legacy_log(&[("m", 4), ("a", 3)]), 4),
        copy(2, upgraded(3), 4),
    ]);
    assert_eq!(verdict(&v), survives(4, Severity::Warning));
    let f = divergence(&v);
    assert!(
        f.evidence.get("high_watermark_truncation").is_none(),
        "{:#}",
        f.evidence
    );
    assert!(
        !f.broker_behaviour.contains("survives until"),
        "{}",
        f.broker_behaviour
    );
    let v = check(vec![
        copy(1, legacy_log(&[("m", 4), ("a", 3)]), 4),
        copy(2, legacy_log(&[("m", 4), ("b", 3)]), 4),
    ]);
    assert_eq!(verdict(&v), survives(4, Severity::Warning));
    let f = divergence(&v);
    assert_eq!(
        f.evidence["high_watermark_truncation"]["case"],
        "removed_unless_past"
    );
}
