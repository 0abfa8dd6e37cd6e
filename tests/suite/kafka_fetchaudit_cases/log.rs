//! `UnifiedLogTest`: what the log's own truncations leave in its epoch cache, and so what a
//! replica answers from when it leads or asks when it follows.

use super::{cat, check, copy, divergence, epochs, run, truncates, verdict};
use klogscan::finding::Severity;

/// `UnifiedLogTest.shouldTruncateLeaderEpochCheckpointFileWhenTruncatingLog`: a follower log of
/// epoch 0 at 0–9, 1 at 10–15, 2 at 16–19, truncated to 11 (`UnifiedLog.truncateTo` →
/// `truncateFromEndAsyncFlush`): the cache keeps `0 0`, `1 10`. On disk, the follower
/// (broker 2) after that truncation, captured before its background flush (the checkpoint
/// still lists `2 16`, past its log end: the next load cuts it, `LogLoader.load`), next to the
/// leader it follows (broker 1: epochs 0 and 1 as the follower kept them, then epoch 3 from
/// 11). Asked for epoch 1, the leader answers 1 ending at 11, the follower's log end: nothing
/// more to truncate, nothing differs. Near miss: the follower before the truncation (its own
/// 11–19 at epochs 1 and 2): the leader answers epoch 1 ending at 11, the follower's epoch 1
/// ends at 16, so it truncates to 11 — the truncation the Kafka test performs.
#[test]
fn a_follower_truncated_into_an_epoch_keeps_that_epochs_entry() {
    let leader = || {
        let p = epochs(
            0,
            &cat(&[run(0, "v", 0, 10), run(1, "v", 10, 1), run(3, "l", 11, 9)]),
        );
        copy(1, p, 20)
    };
    let truncated = epochs(0, &cat(&[run(0, "v", 0, 10), run(1, "v", 10, 1)]));
    let f = copy(2, truncated, 11).checkpoint("0\n3\n0 0\n1 10\n2 16\n");
    assert_eq!(verdict(&check(vec![leader(), f])), None);
    let before = epochs(
        0,
        &cat(&[
            run(0, "v", 0, 10),
            run(1, "v", 10, 1),
            run(1, "f", 11, 5),
            run(2, "f", 16, 4),
        ]),
    );
    let v = check(vec![leader(), copy(2, before, 11)]);
    assert_eq!(
        verdict(&v),
        truncates(11, 2, 11, Severity::Warning),
        "{}",
        divergence(&v).message
    );
}

/// `UnifiedLogTest.shouldUpdateOffsetForLeaderEpochsWhenDeletingSegments` and
/// `UnifiedLogTest.shouldTruncateLeaderEpochsWhenDeletingSegments`: retention deletes the first
/// segment (0–4) and `deleteOldSegments` moves the cache's start up: `0 5`, `1 7`, `2 10`
/// (`0 0` dropped when epoch 1 starts at 5: `1 5`, `2 10`). On disk, the follower (broker 2)
/// whose retention ran, from 5 (epoch 0 to 6, 1 at 7–9, 2 at 10–14), next to the leader
/// (broker 1) holding all of 0–14 at the same epochs: consistent — its latest epoch ends at
/// the leader's log end. Near miss: a leader whose epoch 0 ended at 6 (epoch 3 from 6, its own
/// records): asked for epoch 2 it answers epoch 0 ending at 6; the follower's oldest entry is
/// epoch 0 (moved to 5), ending at 7: it truncates to 6. With epoch 0 gone too (the follower
/// from 7: `1 7`, `2 10`), below its oldest entry the follower answers epoch 0 ending at 7:
/// still 6 — below its own first offset, so its whole log goes (`truncateFullyAndStartAt`),
/// and the divergence at 7 is what it removes.
#[test]
fn a_follower_whose_retention_moved_its_first_epoch_answers_from_its_log_start() {
    let history = |from: i64| {
        let all = cat(&[run(0, "v", 0, 7), run(1, "v", 7, 3), run(2, "v", 10, 5)]);
        epochs(from, &all[from as usize..])
    };
    let leader = copy(1, history(0), 15);
    assert_eq!(verdict(&check(vec![leader, copy(2, history(5), 15)])), None);
    let other = || {
        copy(
            1,
            epochs(0, &cat(&[run(0, "v", 0, 6), run(3, "l", 6, 12)])),
            18,
        )
    };
    let v = check(vec![other(), copy(2, history(5), 6)]);
    assert_eq!(verdict(&v), truncates(6, 2, 6, Severity::Warning));
    let v = check(vec![other(), copy(2, history(7), 7)]);
    assert_eq!(verdict(&v), truncates(7, 2, 6, Severity::Warning));
}
