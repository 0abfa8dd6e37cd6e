//! `PartitionTest.testLastFetchedOffsetValidation`: the leader's side of truncation on fetch
//! (`Partition.readRecords`: the follower's last fetched epoch and fetch offset against
//! `UnifiedLog.endOffsetForEpoch`; a diverging epoch when the leader's answer is an older
//! epoch or ends below the fetch offset), each (last fetched epoch, fetch offset) of the
//! test written as a follower's log whose latest epoch and log end they are.

use super::{Copy, cat, check, copy, divergence, epochs, run, survives, truncates, verdict};
use klogscan::finding::Severity;

/// The test's leader log (broker 1): epoch 0 at 0–1, 3 at 2–7, 4 at 8–12, 7 at 13, 9 at
/// 14–16, and epoch 10 assigned at its log end 17 when it became leader (`Partition.makeLeader`),
/// high watermark 17.
fn leader() -> Copy {
    copy(1, epochs(0, &leader_records()), 17).checkpoint("0\n6\n0 0\n3 2\n4 8\n7 13\n9 14\n10 17\n")
}

fn leader_records() -> Vec<(i32, String)> {
    cat(&[
        run(0, "v", 0, 2),
        run(3, "v", 2, 6),
        run(4, "v", 8, 5),
        run(7, "v", 13, 1),
        run(9, "v", 14, 3),
    ])
}

/// The leader's records from `from` for `n` offsets (what a follower fetched of them).
fn fetched(from: i64, n: i64) -> Vec<(i32, String)> {
    leader_records()[from as usize..(from + n) as usize].to_vec()
}

/// The diverging reads: (last fetched epoch 2, fetch offset 5) → the leader's epoch 0 ends at
/// 2, and the follower (epochs 0 and 2) truncates to 2; (0, 4) → 0 ends at 2 on the leader:
/// the follower, all at epoch 0, truncates to 2; (6, 6) → the leader answers 4 ending at 13,
/// which the follower (epochs 0, 3, 6) does not know: it truncates to its epoch 3's end, 5,
/// and its next fetch (3, 5) does not diverge (epoch 3 ends at 8 on the leader): 5; (5, 9) →
/// likewise 8. Each follower's records past the point are other than the leader's; its high
/// watermark is the point (a warning: not known to be acknowledged).
#[test]
fn a_diverging_last_fetched_epoch_truncates_the_follower_where_the_epochs_agree() {
    let cases = [
        (cat(&[fetched(0, 2), run(2, "f", 2, 3)]), 2),
        (cat(&[fetched(0, 2), run(0, "f", 2, 2)]), 2),
        (cat(&[fetched(0, 5), run(6, "f", 5, 1)]), 5),
        (cat(&[fetched(0, 8), run(5, "f", 8, 1)]), 8),
    ];
    for (follower, point) in cases {
        let v = check(vec![leader(), copy(2, epochs(0, &follower), point)]);
        assert_eq!(
            verdict(&v),
            truncates(point, 2, point, Severity::Warning),
            "{}",
            divergence(&v).message
        );
    }
}

/// The reads that do not diverge: (0, 2), (7, 14), (9, 17) — a follower holding a prefix of
/// the leader's log ending in its last fetched epoch — and (10, 17), a follower that holds the
/// whole log and, having led at epoch 10 before, the same cache entry. Nothing is truncated,
/// nothing differs. Near miss: the follower at (9, 17) whose record at 16 another leader of
/// epoch 9 wrote: the epochs agree, the divergence survives.
#[test]
fn a_follower_on_the_leaders_epochs_does_not_diverge() {
    let followers = [
        copy(2, epochs(0, &fetched(0, 2)), 2),
        copy(2, epochs(0, &fetched(0, 14)), 14),
        copy(2, epochs(0, &fetched(0, 17)), 17),
        copy(2, epochs(0, &fetched(0, 17)), 17)
            .checkpoint("0\n6\n0 0\n3 2\n4 8\n7 13\n9 14\n10 17\n"),
    ];
    for f in followers {
        assert_eq!(verdict(&check(vec![leader(), f])), None);
    }
    let f = copy(
        2,
        epochs(0, &cat(&[fetched(0, 16), run(9, "x", 16, 1)])),
        16,
    );
    assert_eq!(
        verdict(&check(vec![leader(), f])),
        survives(16, Severity::Warning)
    );
}

/// After `DeleteRecords` moved the leader's log start to 5 (the middle of epoch 3), its cache
/// starts with epoch 3 at 5 (`UnifiedLog.maybeIncrementLogStartOffset` →
/// `LeaderEpochFileCache.truncateFromStartAsyncFlush`; at load `LogLoader.load` does it again
/// from the `log-start-offset-checkpoint`). The read (2, 8) diverges with epoch 2 ending at 5:
/// the follower (epoch 0 at 0–1, its own epoch 2 at 2–7, log end 8) truncates to 5 — its
/// records 2–4, other than the leader's, stay (below the leader's log start: no one fetches
/// them from the leader, and the follower's next fetch moves its own log start there). The
/// divergence at 2 is below the truncation point: it survives. Near miss: the leader's log
/// start 0 (its cache keeps epoch 0 at 0): epoch 0 ends at 2, the follower truncates to 2.
#[test]
fn a_leaders_log_start_cuts_the_epochs_it_answers_from() {
    let follower = || copy(2, epochs(0, &cat(&[fetched(0, 2), run(2, "f", 2, 6)])), 2);
    let moved = leader()
        .log_start(5)
        .checkpoint("0\n5\n3 5\n4 8\n7 13\n9 14\n10 17\n");
    let v = check(vec![moved, follower()]);
    assert_eq!(
        verdict(&v),
        survives(2, Severity::Warning),
        "{}",
        divergence(&v).message
    );
    let v = check(vec![leader(), follower()]);
    assert_eq!(verdict(&v), truncates(2, 2, 2, Severity::Warning));
}

/// The read (10, 18) diverges with epoch 10 ending at 17: the follower is cut to the leader's
/// log end. As files: broker 2 led at epoch 9 and wrote 14–17 (high watermark 18: offset 17
/// acknowledged); broker 1, holding 14–16, was elected at epoch 10 at its log end 17 (an
/// unclean election: its cache `10 17`, no batch yet). Broker 2, following, sends (9, 18); the
/// leader's epoch 9 ends at 17 < 18: it truncates to 17 and its acknowledged record 17 is
/// gone: an error naming broker 2, truncating to 17. Near miss: broker 2's high watermark 17
/// — Kafka cuts the same record, but it was never acknowledged (the normal remains of a
/// failover): nothing is said.
///
/// (Was a divergence: copies that agree where both hold offsets were never reported, so the
/// acknowledged tail past the new leader's end went unsaid without the metadata log; the
/// tail rule, `replicas/tail.rs`, now says it.)
#[test]
fn a_followers_tail_past_the_leaders_epoch_end_is_cut() {
    let follower = |hw| {
        copy(
            2,
            epochs(0, &cat(&[fetched(0, 17), run(9, "t", 17, 1)])),
            hw,
        )
    };
    let v = check(vec![leader(), follower(18)]);
    assert_eq!(verdict(&v), truncates(17, 2, 17, Severity::Error));
    let v = check(vec![leader(), follower(17)]);
    assert_eq!(verdict(&v), None);
}

/// `PartitionTest.testUseCheckpointToInitializeHighWatermark`: a replica of six records at
/// epoch 5 whose `replication-offset-checkpoint` says 4 starts (made leader at epoch 6) with
/// high watermark 4 — the checkpoint is what the broker knows was acknowledged. As files:
/// broker 2 holds those six records, checkpoint 4; broker 1, holding 0–3, was elected at epoch 6
/// at its log end 4 (cache `6 4`, no batch yet). Broker 2, following, truncates to 4 (epoch 5
/// ends at 4 on the leader): its records 4–5 were not acknowledged as far as its checkpoint
/// says — nothing is said. Near miss: its checkpoint 5 — offset 4 was acknowledged and is
/// lost (error, broker 2 truncating to 4).
#[test]
fn the_checkpointed_high_watermark_bounds_what_a_cut_tail_loses() {
    let elected = || copy(1, epochs(0, &run(5, "v", 0, 4)), 4).checkpoint("0\n2\n5 0\n6 4\n");
    let old = |hw| copy(2, epochs(0, &run(5, "v", 0, 6)), hw);
    assert_eq!(verdict(&check(vec![elected(), old(4)])), None);
    let v = check(vec![elected(), old(5)]);
    assert_eq!(verdict(&v), truncates(4, 2, 4, Severity::Error));
    assert_eq!(divergence(&v).evidence["tail"]["first_offset"], 4);
}

/// `LeaderEpochIntegrationTest.shouldIncreaseLeaderEpochBetweenLeaderRestarts` and
/// `LeaderEpochIntegrationTest.shouldSupportRequestsForEpochsNotOnTheLeader`: the single
/// replica, bounced twice, wrote one record at each of epochs 0, 2 and 4 (the odd epochs had
/// no leader); asked for epoch 1 it answers epoch 0 ending at 1, for 3 epoch 2 ending at 2, for
/// 4 its log end 3. As followers of that leader (broker 1): a copy whose latest epoch is 1
/// (its record at 1 another one) truncates to 1, a copy whose latest is 3 (its record at 2
/// another one) truncates to 2 — each its own end of the epoch the leader named, no later than
/// the leader's. Near miss: the same copies holding the leader's records (the epoch field is
/// outside the CRC): nothing differs. (Epoch 5, above the leader's, answered undefined: on
/// disk a copy with a batch of epoch 5 is the newer leader's — not expressible.)
#[test]
fn a_leader_answers_an_epoch_it_never_held_with_the_epoch_below() {
    let leader = || {
        copy(
            1,
            epochs(0, &[(0, "a".into()), (2, "b".into()), (4, "c".into())]),
            3,
        )
    };
    let cases = [
        (vec![(0, "a".to_string()), (1, "x".to_string())], 1),
        (
            vec![
                (0, "a".to_string()),
                (2, "b".to_string()),
                (3, "x".to_string()),
            ],
            2,
        ),
    ];
    for (follower, point) in cases {
        let v = check(vec![leader(), copy(2, epochs(0, &follower), point)]);
        assert_eq!(verdict(&v), truncates(point, 2, point, Severity::Warning));
        let same: Vec<(i32, String)> = (follower.iter().enumerate())
            .map(|(o, (e, _))| (*e, ["a", "b", "c"][o].to_string()))
            .collect();
        assert_eq!(
            verdict(&check(vec![leader(), copy(2, epochs(0, &same), point)])),
            None
        );
    }
}
