//! `truncateFromEndAsyncFlush`, `truncateFromStartAsyncFlush` and `clearAndFlush`: the file
//! each writes, and the file a crash leaves before its background flush, which the next load
//! cuts again (`LogLoader.load`: at the recovered log end, then at the checkpointed log start).

use super::{batches, clean, crashed, write};
use klogscan::testkit::{Batch, Legacy, LogDirBuilder, Producer};

/// The Kafka tests' cache before their truncations: `2 6 / 3 8 / 4 11`.
const BEFORE: [(i32, i64); 3] = [(2, 6), (3, 8), (4, 11)];

/// A log dir shut down cleanly whose `log-start-offset-checkpoint` holds `lec-0`'s log start
/// `start` (a `DeleteRecords` inside the first segment).
fn clean_from(start: i64) -> LogDirBuilder {
    clean().log_start_offset(super::TOPIC, 0, start)
}

/// `LeaderEpochFileCacheTest.shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries`:
/// `truncateFromEnd(8)` on `2 6 / 3 8 / 4 11` removes the entries starting at 8 or later — `2
/// 6`. On disk (a follower cut back to 8): offsets 6–7 at epoch 2 and the file `2 6`, quiet;
/// the file from before the cut after a crash (its flush is in the background) quiet too — the
/// load cuts at the log end 8 again. Near miss: the crash's file had `3 7` instead of `3 8`: an
/// entry inside the log whose epoch no batch there carries — reported.
#[test]
fn a_truncation_at_an_epochs_start_removes_the_epoch() {
    let p = || batches(6, &[(2, 2)]);
    write(clean(), p(), &[(2, 6)]).assert_quiet();
    write(crashed(), p(), &BEFORE).assert_quiet();
    write(crashed(), p(), &[(2, 6), (3, 7), (4, 11)])
        .assert_mismatch("at offset 7 the checkpoint gives epoch 3 but");
}

/// `LeaderEpochFileCacheTest.shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest`
/// (`truncateFromEnd(9)` keeps `2 6 / 3 8`, latest epoch 3) and the truncation of
/// `LeaderEpochFileCacheTest.testPreviousEpoch`,
/// `LeaderEpochFileCacheTest.testFindPreviousEpoch` and
/// `LeaderEpochFileCacheTest.testFindPreviousEntry` (`truncateFromEnd(18)` on `2 10 / 4 15 / 10
/// 20` keeps `2 10 / 4 15`). On disk: offsets 6–7 at epoch 2, 8 at epoch 3 with the file `2 6 /
/// 3 8` or, after a crash, the file from before the cut: quiet; and 10–14 at epoch 2, 15–17 at
/// epoch 4 after a crash with `2 10 / 4 15 / 10 20`: quiet. Near miss: the batch at 8 carries
/// epoch 2 (the file's `3 8` explained by nothing) — reported.
#[test]
fn a_truncation_between_two_starts_keeps_the_epoch_it_cuts() {
    let p = || batches(6, &[(2, 2), (3, 1)]);
    write(clean(), p(), &[(2, 6), (3, 8)]).assert_quiet();
    write(crashed(), p(), &BEFORE).assert_quiet();
    let previous = batches(10, &[(2, 5), (4, 3)]);
    write(crashed(), previous, &[(2, 10), (4, 15), (10, 20)]).assert_quiet();
    write(clean(), batches(6, &[(2, 3)]), &[(2, 6), (3, 8)])
        .assert_mismatch("at offset 8 the checkpoint gives epoch 3 but");
}

/// `LeaderEpochFileCacheTest.shouldPreserveResetOffsetOnClearEarliestIfOneExists`
/// (`truncateFromStart(8)`: `3 8 / 4 11`),
/// `LeaderEpochFileCacheTest.shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest` (9: `3 9
/// / 4 11`), `LeaderEpochFileCacheTest.shouldRetainLatestEpochOnClearAllEarliest` (11: `4 11`)
/// and
/// `LeaderEpochFileCacheTest.shouldUpdateOffsetBetweenFirstTwoEpochBoundariesOnClearEarliest`
/// (`0 0 / 1 7 / 2 10` at 5: `0 5 / 1 7 / 2 10`). On disk: `DeleteRecords` to each start inside
/// the first segment (offsets 6–7 at epoch 2, 8–10 at 3, 11–13 at 4), the log start in
/// `log-start-offset-checkpoint`, the file the truncation leaves — quiet; and the file from
/// before it after a crash, which the load cuts at the checkpointed start — quiet. Near miss:
/// log start 9 with `3 10 / 4 11`, a first entry moved past the log start — reported.
#[test]
fn a_log_start_moves_the_first_entry_to_it() {
    let p = || batches(6, &[(2, 2), (3, 3), (4, 3)]);
    let cases: [(i64, &[(i32, i64)]); 3] = [
        (8, &[(3, 8), (4, 11)]),
        (9, &[(3, 9), (4, 11)]),
        (11, &[(4, 11)]),
    ];
    for (start, file) in cases {
        write(clean_from(start), p(), file).assert_quiet();
        let ld = crashed().log_start_offset(super::TOPIC, 0, start);
        write(ld, p(), &BEFORE).assert_quiet();
    }
    let first_two = batches(0, &[(0, 7), (1, 3), (2, 2)]);
    write(clean_from(5), first_two, &[(0, 5), (1, 7), (2, 10)]).assert_quiet();
    write(clean_from(9), p(), &[(3, 10), (4, 11)])
        .assert_mismatch("starts above the log start offset 9");
}

/// `LeaderEpochFileCacheTest.shouldNotClearAnythingIfOffsetTooEarly` (`truncateFromStart(1)`)
/// and `LeaderEpochFileCacheTest.shouldNotClearAnythingIfOffsetIsFirstOffset`
/// (`truncateFromStart(6)`) leave `2 6 / 3 8 / 4 11` as it is. On disk the cache can start
/// above the log start where the offsets below carry no epoch: a log upgraded from message
/// format v1 (offsets 0–5 in v1 batches, written while the log kept no cache; 6–13 in v2 at
/// epochs 2, 3, 4), with log start 1 or 6 — quiet. Near miss: log start 1 with `2 7 / 3 8 / 4
/// 11`: the v2 batch at 6 carries epoch 2 but the file's first entry starts at 7 — reported.
#[test]
fn a_log_start_at_or_below_the_first_entry_changes_nothing() {
    let p = || {
        let mut p = batches(0, &[]);
        p.legacy(Legacy::v1().values(["a", "b", "c", "d", "e", "f"]));
        for (epoch, n) in [(2, 2), (3, 3), (4, 3)] {
            p.set_leader_epoch(epoch);
            p.append(Batch::new(Producer::PLAIN).records(n));
        }
        p
    };
    write(clean_from(1), p(), &BEFORE).assert_quiet();
    write(clean_from(6), p(), &BEFORE).assert_quiet();
    write(clean_from(1), p(), &[(2, 7), (3, 8), (4, 11)])
        .assert_mismatch("starts above the log start offset 1");
}

/// `LeaderEpochFileCacheTest.shouldWriteCheckpointOnTruncation`: `truncateFromEnd(11)` then
/// `truncateFromStart(8)` leave the file `3 8`. On disk: offsets 6–7 at epoch 2 and 8–10 at
/// epoch 3, log start 8, the file `3 8` — quiet; after a crash before either background flush,
/// the file `2 6 / 3 8 / 4 11` — quiet (the load repeats both cuts). Near miss: the crash's
/// file held `4 10`, inside the log the cut left — reported.
#[test]
fn both_cuts_of_a_truncation_reach_the_file() {
    let p = || batches(6, &[(2, 2), (3, 3)]);
    write(clean_from(8), p(), &[(3, 8)]).assert_quiet();
    let ld = || crashed().log_start_offset(super::TOPIC, 0, 8);
    write(ld(), p(), &BEFORE).assert_quiet();
    write(ld(), p(), &[(2, 6), (3, 8), (4, 10)])
        .assert_mismatch("at offset 10 the checkpoint gives epoch 4 but");
}

/// `LeaderEpochFileCacheTest.shouldClearAllEntries`,
/// `LeaderEpochFileCacheTest.shouldClearEarliestOnEmptyCache`,
/// `LeaderEpochFileCacheTest.shouldClearLatestOnEmptyCache`: `clearAndFlush` writes a file with
/// no entry, and truncating an empty cache changes nothing. On disk: a follower emptied by
/// `UnifiedLog.truncateFullyAndStartAt(100)` (the leader's log start above its end): an empty
/// segment at 100 and the file `0 / 0` — quiet (the load's cuts at 100 leave the empty cache);
/// then five records fetched at epoch 5 and the file `5 100` — quiet. Near miss: the same
/// records with the file still empty (the synchronous flush of `assign(5, 100)` missing, the
/// shutdown clean) — reported.
#[test]
fn a_cleared_cache_writes_a_file_without_entries() {
    write(clean(), batches(100, &[]), &[]).assert_quiet();
    write(clean(), batches(100, &[(5, 5)]), &[(5, 100)]).assert_quiet();
    write(clean(), batches(100, &[(5, 5)]), &[]).assert_mismatch("holds no entry");
}
