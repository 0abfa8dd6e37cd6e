//! `LeaderEpochFileCache.assign` on the append path: what the file holds after each batch's
//! epoch was assigned, against the batches on disk.

use super::{batches, clean, of_kind, write};
use klogscan::finding::Kind;

/// `LeaderEpochFileCacheTest.shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned`,
/// `LeaderEpochFileCacheTest.shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned`,
/// `LeaderEpochFileCacheTest.shouldNotUpdateEpochAndStartOffsetIfItDidNotChange`,
/// `LeaderEpochFileCacheTest.shouldSupportEpochsThatDoNotStartFromZero` and
/// `LeaderEpochFileCacheTest.shouldPersistEpochsBetweenInstances`: `assign(2, 6)` then
/// `assign(2, 7)` (the next batch of the same epoch) leaves `2 6`, which a second cache reads
/// back from the file. On disk: a log from offset 6 whose batches at 6 and 7 carry epoch 2, and
/// the file `2 6` — quiet. Near miss: `2 7`, an epoch whose start moved up to its second batch:
/// the file's first entry starts above the log start while the batch at 6 carries epoch 2 (the
/// log dir shut down cleanly, so the log start 6 is on record) — reported.
#[test]
fn an_epoch_keeps_the_start_of_its_first_batch() {
    let p = || batches(6, &[(2, 1), (2, 3)]);
    write(clean(), p(), &[(2, 6)]).assert_quiet();
    write(clean(), p(), &[(2, 7)]).assert_mismatch("starts above the log start offset 6");
}

/// `LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingStartOffsets`: `assign(2, 9)`
/// then `assign(3, 9)` leaves `3 9` alone — a leader elected at the log end that wrote nothing
/// before the next election. On disk: offsets 0–8 at epoch 1, 9–10 at epoch 3, the file `1 0 /
/// 3 9`: quiet. Near miss: the file `1 0 / 2 9` beside the same batches (epoch 3's `assign`,
/// flushed synchronously before its first batch was appended, is missing): at 9 the file says
/// 2, the batch 3 — reported.
#[test]
fn an_epoch_elected_without_a_write_gives_way_at_the_same_offset() {
    let p = || batches(0, &[(1, 9), (3, 2)]);
    write(clean(), p(), &[(1, 0), (3, 9)]).assert_quiet();
    write(clean(), p(), &[(1, 0), (2, 9)])
        .assert_mismatch("at offset 9 the checkpoint gives epoch 2 but");
}

/// `LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes`: `assign(0,
/// 0)`, `assign(1, 0)` (two elections before any write: epoch 0 gives way), five records at
/// epoch 1, `assign(2, 5)`, five at epoch 2 — the cache `1 0 / 2 5`. On disk with that file:
/// quiet; and with `0 0 / 1 0 / 2 5` (both elections' entries, a file `writeToFile` never
/// writes) quiet too: the constructor's `assign` drops `0 0` as it reads `1 0`, as klogscan's
/// reading gives epoch 1 at 0. Near miss: `0 0 / 2 5` — epoch 0 at offsets whose batches carry
/// 1 — reported.
#[test]
fn leaders_changing_at_one_offset_leave_the_last_epoch() {
    let p = || batches(0, &[(1, 5), (2, 5)]);
    write(clean(), p(), &[(1, 0), (2, 5)]).assert_quiet();
    write(clean(), p(), &[(0, 0), (1, 0), (2, 5)]).assert_quiet();
    write(clean(), p(), &[(0, 0), (2, 5)])
        .assert_mismatch("at offset 0 the checkpoint gives epoch 0 but");
}

/// `LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages`: a
/// follower assigns every fetched batch's epoch — three one-record batches at each of epochs 0,
/// 1, 2 — and keeps each epoch's first: `0 0 / 1 3 / 2 6`, quiet. Near miss: `0 0 / 1 5 / 2 8`,
/// each epoch from its last batch: at 3 the file says 0, the batch 1 — reported.
#[test]
fn a_follower_keeps_each_epoch_from_its_first_batch() {
    let layout = [
        (0, 1),
        (0, 1),
        (0, 1),
        (1, 1),
        (1, 1),
        (1, 1),
        (2, 1),
        (2, 1),
        (2, 1),
    ];
    let p = || batches(0, &layout);
    write(clean(), p(), &[(0, 0), (1, 3), (2, 6)]).assert_quiet();
    write(clean(), p(), &[(0, 0), (1, 5), (2, 8)])
        .assert_mismatch("at offset 3 the checkpoint gives epoch 0 but");
}

/// `LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs`: `assign(1, 5)`,
/// `assign(2, 6)`, then a batch of epoch 1 at 7 — the cache drops everything from epoch 1 on
/// and keeps `1 7`. On disk (a follower that copied a log holding the regression): the file `1
/// 7` is the one the append path writes, and `1 5 / 2 6` the one recovery rebuilds
/// (`LogSegment.recover` assigns only epochs above the latest): `verify` takes both; `scan`
/// reports the batches' `leader_epoch_regression`. Near miss: the same file `1 7` over batches
/// without the regression (epoch 2 at 6 and 7): nothing explains it — reported, and no
/// regression.
#[test]
fn an_epoch_regression_leaves_the_append_paths_cache() {
    let regressed = || batches(5, &[(1, 1), (2, 1), (1, 1)]);
    for file in [&[(1, 7)][..], &[(1, 5), (2, 6)]] {
        let w = write(clean(), regressed(), file);
        let m = w.mismatches();
        assert!(m.is_empty(), "{file:?}: {m:#?}");
        let r = of_kind(&w.scan().findings, Kind::LeaderEpochRegression);
        assert_eq!(r.len(), 1, "{r:#?}");
    }
    let w = write(clean(), batches(5, &[(1, 1), (2, 1), (2, 1)]), &[(1, 7)]);
    w.assert_mismatch("starts above the log start offset 5");
}

/// `LeaderEpochFileCacheTest.shouldTruncateIfMatchingEpochButEarlierStartingOffset`: `5 11 / 6
/// 12 / 7 13`, then `assign(7, 12)` — the cache drops epochs 6 and 7 (their starts are not
/// below 12) and keeps `5 11 / 7 12`. On disk (a follower whose log was cut at 12 and refilled
/// from the leader of epoch 7): offsets 11 at epoch 5, 12–14 at epoch 7, the file `5 11 / 7 12`
/// — quiet. Near miss: the file from before the cut, `5 11 / 6 12 / 7 13`, beside the refilled
/// batches (the synchronous flush of `assign(7, 12)` is missing): at 12 the file says 6, the
/// batch 7 — reported. (The answers `endOffsetFor` gives from this cache:
/// `answers::an_epoch_cut_by_a_matching_epoch_ends_where_it_starts`.)
#[test]
fn a_matching_epoch_at_an_earlier_offset_drops_the_later_entries() {
    let p = || batches(11, &[(5, 1), (7, 3)]);
    write(clean(), p(), &[(5, 11), (7, 12)]).assert_quiet();
    write(clean(), p(), &[(5, 11), (6, 12), (7, 13)])
        .assert_mismatch("at offset 12 the checkpoint gives epoch 6 but");
}
