//! Kafka's own leader-epoch and leader-election tests, reproduced as bytes on disk.
//!
//! * `LeaderEpochFileCacheTest` (core/src/test/scala/unit/kafka/server/epoch/), the
//!   checkpoint-file tests of `storage` and `LogLoaderTest`'s epoch cases: each test writes
//!   the partition whose batches carry the epochs Kafka's test assigns, and the
//!   `leader-epoch-checkpoint` the broker's cache would hold afterwards; `verify` must find
//!   that file consistent with the batches, and a stale or wrong file a
//!   `leader_epoch_checkpoint_mismatch`.
//! * `PartitionChangeBuilderTest` and `ReplicationControlManagerTest`
//!   (metadata/src/test/java/org/apache/kafka/controller/): each test replays the
//!   `PartitionRecord` / `PartitionChangeRecord`s Kafka's builder writes in that case and
//!   checks klogscan's leadership history (leader and partition epochs, ISR, ELR, last known
//!   ELR, recovery state) and its judgement of each election (`Choice`).
//!
//! A test marked `#[ignore = "discrepancy: …"]` would hold Kafka's answer where klogscan
//! gives another; none is open (docs/testing.md lists those fixed).
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::ScanOptions;
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use tempfile::TempDir;

mod elections;
mod truncation;

// ----- helpers ----------------------------------------------------------------------------

/// `epoch-cache-0` from offset `start`: one batch of `n` records per `(epoch, n)`, in order.
fn batches(start: i64, layout: &[(i32, usize)]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("epoch-cache", 0)
        .start_offset(start)
        .broker_files(PartitionFileOptions::default());
    for &(epoch, n) in layout {
        p.set_leader_epoch(epoch);
        p.append(Batch::new(Producer::PLAIN).records(n));
    }
    p
}

/// Write `p` into broker 1's log dir (clean shutdown), with `log_start` in
/// `log-start-offset-checkpoint` when given.
fn write(p: PartitionBuilder, log_start: Option<i64>) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let mut ld = LogDirBuilder::new(1);
    if let Some(o) = log_start {
        ld = ld.log_start_offset("epoch-cache", 0, o);
    }
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Replace the partition's `leader-epoch-checkpoint` with `entries` (version 0).
fn set_checkpoint(m: &Manifest, entries: &[(i32, i64)]) {
    let mut text = format!("0\n{}\n", entries.len());
    for (e, o) in entries {
        text.push_str(&format!("{e} {o}\n"));
    }
    std::fs::write(m.dir.join("leader-epoch-checkpoint"), text).unwrap();
}

fn checkpoint_text(m: &Manifest) -> String {
    std::fs::read_to_string(m.dir.join("leader-epoch-checkpoint")).unwrap()
}

/// `verify` of broker 1's log dir, as the CLI runs it.
fn verify(m: &Manifest) -> PartitionVerification {
    let a = request::verify(&Request::new([m.dir.parent().unwrap()]), None).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

/// The messages of `verify`'s `leader_epoch_checkpoint_mismatch` findings.
fn mismatches(m: &Manifest) -> Vec<String> {
    verify(m)
        .findings
        .iter()
        .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
        .map(|f| f.message.clone())
        .collect()
}

/// The one mismatch of `m`, which must contain `text`.
fn one_mismatch(m: &Manifest, text: &str) {
    let v = mismatches(m);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains(text), "{}", v[0]);
}

/// Scan the partition as the CLI does: its rebuilt epochs and its findings.
fn scan(m: &Manifest) -> (Vec<(i32, i64)>, Vec<Finding>) {
    let a = request::run(&Request::new([&m.dir]).with_options(ScanOptions::default())).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    (
        a.report.partitions[0].leader_epochs().to_vec(),
        a.report.findings,
    )
}

// ----- LeaderEpochFileCacheTest: assign -----------------------------------------------------

/// `shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned`,
/// `shouldNotUpdateEpochAndStartOffsetIfItDidNotChange`,
/// `shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned`,
/// `shouldPersistEpochsBetweenInstances` and
/// `LeaderEpochCheckpointFileWithFailureHandlerTest.shouldPersistAndOverwriteAndReloadFile`:
/// batches at 6 and 8, both epoch 2, give one entry, epoch 2 from offset 6 — the second
/// batch moves nothing. The file the broker writes is `0 / 1 / 2 6`, and `verify` finds it
/// consistent; a file that says epoch 2 starts at 7 or 9 disagrees with the batch at 6.
#[test]
fn assign_keeps_the_first_start_offset_of_an_epoch() {
    let (_d, m) = write(batches(6, &[(2, 2), (2, 2)]), None);
    assert_eq!(checkpoint_text(&m), "0\n1\n2 6\n");
    assert_eq!(scan(&m).0, vec![(2, 6)]);
    assert!(mismatches(&m).is_empty());
    // An epoch older than 2 that the file invents is a mismatch at the batch at 6.
    set_checkpoint(&m, &[(1, 6), (2, 9)]);
    one_mismatch(
        &m,
        "at offset 6 the checkpoint gives epoch 1 but the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 2",
    );
}

/// The same case (`shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned`), the file
/// moved later: `assign` never moves an epoch's start offset up, and only
/// `truncateFromStart` to the log start offset does (at `LogLoader.load` or
/// `maybeIncrementLogStartOffset`). With the log starting at 6 and a batch of epoch 2 there,
/// a file whose epoch 2 starts at 8 is not one the broker writes — with the log start
/// offset in `log-start-offset-checkpoint` or, without an entry there, the first segment's
/// base, after a clean shutdown (which writes the log start checkpoint). After an unclean
/// one the same file has a second reading — a log start of 8 (`DeleteRecords`) that
/// `log-start-offset-checkpoint`, written periodically, had not recorded while the epoch
/// file, flushed right after the truncation, had — so nothing is reported.
#[test]
fn a_first_entry_above_the_log_start_is_not_what_assign_writes() {
    for log_start in [Some(6), None] {
        let (_d, m) = write(batches(6, &[(2, 2), (2, 2)]), log_start);
        set_checkpoint(&m, &[(2, 8)]);
        one_mismatch(
            &m,
            "the checkpoint's first entry (epoch 2 from offset 8) starts above the log start offset 6, but at offset 6",
        );
        std::fs::remove_file(m.dir.parent().unwrap().join(".kafka_cleanshutdown")).unwrap();
        assert!(mismatches(&m).is_empty(), "{log_start:?}");
    }
    // The log start checkpoint at 7, between the first batch and the file's first entry:
    // the batch at 6 (below the log start) is not judged, offset 7 is.
    let (_d, m) = write(batches(6, &[(2, 2), (2, 2)]), Some(7));
    set_checkpoint(&m, &[(2, 8)]);
    one_mismatch(&m, "starts above the log start offset 7, but at offset 7");
    set_checkpoint(&m, &[(2, 7)]);
    assert!(mismatches(&m).is_empty());
}

/// The KRaft metadata log's log start is in no checkpoint: `KafkaMetadataLog.deleteBeforeSnapshot`
/// moves it to a snapshot's end offset (truncating the cache there) and deletes the older
/// snapshots, and the reopened log starts at its first segment. Epoch 2 at 6–9 with the
/// snapshot `8-2` left: the file `2 8` is what the broker wrote; with the earliest snapshot
/// at 7 instead, the log start was never 8 and the same file is a mismatch at 7.
#[test]
fn the_metadata_log_starts_at_its_earliest_snapshot() {
    use klogscan::read::format::metadata::MetaRecord;
    use klogscan::testkit::files::topic_id_for;
    use klogscan::testkit::metadata::MetadataLogBuilder;
    let topic = |name: &str| MetaRecord::Topic {
        name: name.into(),
        topic_id: topic_id_for(name),
    };
    for (snapshot, found) in [(8, None), (7, Some("log start offset 7, but at offset 7"))] {
        let d = tempfile::tempdir().unwrap();
        let mut b =
            MetadataLogBuilder::new(0)
                .start_offset(6)
                .snapshot(snapshot, 2, vec![topic("a")]);
        b.raft_epoch(2);
        for name in ["a", "b", "c", "e"] {
            b.batch(&[topic(name)]);
        }
        let part = b.write(d.path()).unwrap();
        std::fs::write(part.join("leader-epoch-checkpoint"), "0\n1\n2 8\n").unwrap();
        let a = request::verify(&Request::new([d.path()]), None).unwrap();
        let v: Vec<_> = a
            .report
            .partitions
            .iter()
            .flat_map(|p| &p.findings)
            .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
            .map(|f| f.message.clone())
            .collect();
        match found {
            None => assert!(v.is_empty(), "{v:#?}"),
            Some(text) => assert!(v.len() == 1 && v[0].contains(text), "{v:#?}"),
        }
    }
}

/// The first entry may start above the log start where the batches there carry no epoch:
/// legacy (v1) batches at 0–1, then epoch 3 from 2. The file `3 2` is what the broker
/// writes; `3 4` moves epoch 3 up past its batch at 2.
#[test]
fn a_first_entry_above_the_log_start_over_batches_without_an_epoch() {
    use klogscan::testkit::Legacy;
    let mut p = batches(0, &[]);
    p.legacy(Legacy::v1().values(["x", "y"]));
    p.set_leader_epoch(3);
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.append(Batch::new(Producer::PLAIN).records(2));
    let (_d, m) = write(p, None);
    set_checkpoint(&m, &[(3, 2)]);
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(3, 4)]);
    one_mismatch(&m, "starts above the log start offset 0, but at offset 2");
}

/// `shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset`'s near miss of the case
/// above: with the log start offset at 8 (DeleteRecords), the same file `2 8` is exactly
/// what `truncateFromStart(8)` leaves, and nothing is reported.
#[test]
fn a_first_entry_at_the_log_start_is_a_truncation_from_the_start() {
    let (_d, m) = write(batches(6, &[(2, 2), (2, 2)]), Some(8));
    set_checkpoint(&m, &[(2, 8)]);
    assert!(mismatches(&m).is_empty());
}

/// `shouldEnforceMonotonicallyIncreasingStartOffsets`: epoch 2 is assigned at 9 and epoch 3
/// at 9 too (a leader elected and replaced before writing): the cache keeps `3 9` only. On
/// disk: epoch 1 at 0–8, epoch 3 from 9. The broker's file (`1 0`, `3 9`) is consistent;
/// one that puts epoch 2 over the epoch-3 batch is not.
#[test]
fn an_epoch_replaced_at_the_same_offset_leaves_one_entry() {
    let (_d, m) = write(batches(0, &[(1, 9), (3, 2)]), None);
    assert_eq!(checkpoint_text(&m), "0\n2\n1 0\n3 9\n");
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(1, 0), (2, 9), (3, 10)]);
    one_mismatch(
        &m,
        "at offset 9 the checkpoint gives epoch 2 but the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 3",
    );
}

/// `shouldTruncateIfMatchingEpochButEarlierStartingOffset`: 5 at 11, 6 at 12, 7 at 13,
/// then 7 at 12 — the cache ends as `5 11`, `7 12` (epoch 6 is gone). On disk: the batch of
/// epoch 6 at 12 was replaced by one of epoch 7 (a follower truncated and refetched), then
/// epoch 7 goes on at 13. The final file is consistent; the file as it was before the
/// truncation (`6 12`, `7 13`) is a mismatch at 12.
#[test]
fn an_epoch_starting_earlier_drops_the_entries_after_it() {
    let (_d, m) = write(batches(11, &[(5, 1), (7, 1), (7, 1)]), None);
    assert_eq!(checkpoint_text(&m), "0\n2\n5 11\n7 12\n");
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(5, 11), (6, 12), (7, 13)]);
    one_mismatch(
        &m,
        "at offset 12 the checkpoint gives epoch 6 but the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 7",
    );
}

/// `shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages` and
/// `shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes`: one-record batches at epochs
/// 0, 0, 0, 1, 1, 1, 2, 2, 2 give `0 0`, `1 3`, `2 6`; epochs 0 then 1 both assigned at 0
/// (epoch 0 never wrote) leave `1 0`. Both files are consistent with their batches.
#[test]
fn epochs_are_tracked_from_the_first_batch_of_each() {
    let (_d, m) = write(
        batches(
            0,
            &[
                (0, 1),
                (0, 1),
                (0, 1),
                (1, 1),
                (1, 1),
                (1, 1),
                (2, 1),
                (2, 1),
                (2, 1),
            ],
        ),
        None,
    );
    assert_eq!(checkpoint_text(&m), "0\n3\n0 0\n1 3\n2 6\n");
    assert_eq!(scan(&m).0, vec![(0, 0), (1, 3), (2, 6)]);
    assert!(mismatches(&m).is_empty());
    let (_d, m) = write(batches(0, &[(1, 5), (2, 5)]), None);
    assert_eq!(checkpoint_text(&m), "0\n2\n1 0\n2 5\n");
    assert!(mismatches(&m).is_empty());
}

/// `shouldEnforceMonotonicallyIncreasingEpochs` as recovery sees it (`LogSegment.recover`
/// assigns only epochs above the cache's latest): batches of epoch 1 at 5, 2 at 6, 1 at 7
/// rebuild `1 5`, `2 6`, and the scan reports the regression at 7.
#[test]
fn recovery_ignores_a_batch_of_a_lower_epoch() {
    let (_d, m) = write(batches(5, &[(1, 1), (2, 1), (1, 1)]), None);
    let (epochs, findings) = scan(&m);
    assert_eq!(epochs, vec![(1, 5), (2, 6)]);
    let reg: Vec<_> = findings
        .iter()
        .filter(|f| f.kind == Kind::LeaderEpochRegression)
        .collect();
    assert_eq!(reg.len(), 1, "{findings:#?}");
    assert_eq!(reg[0].offset, Some(7));
    assert_eq!(reg[0].evidence["previous_leader_epoch"], 2);
    assert_eq!(reg[0].evidence["leader_epoch"], 1);
}

/// `shouldEnforceMonotonicallyIncreasingEpochs` as the broker wrote it: the append path
/// (`UnifiedLog.append` → `maybeAssignEpochStartOffset` → `LeaderEpochFileCache.assign`)
/// assigns epoch 1 at 7 after epoch 2 at 6, and `maybeTruncateNonMonotonicEntries` drops
/// every entry from epoch 1 or offset 7 up: the cache and its file are `1 7` alone. Kafka's
/// own file for these batches is not a checkpoint that disagrees with "the batches"; the
/// batch at 7 does carry epoch 1. Recovery's file (`1 5`, `2 6`) is consistent too.
#[test]
fn the_append_path_truncates_the_cache_on_a_lower_epoch() {
    let (_d, m) = write(batches(5, &[(1, 1), (2, 1), (1, 1)]), None);
    for file in [&[(1, 7)][..], &[(1, 5), (2, 6)]] {
        set_checkpoint(&m, file);
        let v = mismatches(&m);
        assert!(v.is_empty(), "{file:?}: {v:#?}");
    }
}

/// The twins of the case above: files neither reading gives. `2 7` puts epoch 2 over the
/// batch of epoch 1 at 7 (and nothing over 5–6, where recovery's lineage has epochs);
/// `1 6` starts above the log start where recovery's lineage has epoch 1, and puts epoch 1
/// at 6, where the append path's cache, which dropped the entries below 7, has none;
/// `1 5`, `3 7` keeps epoch 1 over 5–6 (the append path dropped it, and the batch at 6 is
/// epoch 2) and puts epoch 3 over the batch of epoch 1 at 7.
#[test]
fn a_file_neither_the_append_path_nor_recovery_writes_is_a_mismatch() {
    let (_d, m) = write(batches(5, &[(1, 1), (2, 1), (1, 1)]), None);
    set_checkpoint(&m, &[(2, 7)]);
    one_mismatch(
        &m,
        "nor is it the cache the append path leaves (each batch's epoch assigned in turn, a lower one dropping the entries from it on: 1 from 7), which gives epoch 1 at offset 7 where the checkpoint gives 2",
    );
    set_checkpoint(&m, &[(1, 6)]);
    one_mismatch(
        &m,
        "the checkpoint's first entry (epoch 1 from offset 6) starts above the log start offset 5, but at offset 5 the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 1: assign never moves an epoch's start offset up, and truncateFromStart moves the first entry to the log start offset exactly; nor is it the cache the append path leaves (each batch's epoch assigned in turn, a lower one dropping the entries from it on: 1 from 7), which gives epoch none at offset 6 where the checkpoint gives 1",
    );
    set_checkpoint(&m, &[(1, 5), (3, 7)]);
    one_mismatch(
        &m,
        "at offset 6 the checkpoint gives epoch 1 but the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 2; nor is it the cache the append path leaves (each batch's epoch assigned in turn, a lower one dropping the entries from it on: 1 from 7), which gives epoch none at offset 5 where the checkpoint gives 1",
    );
}

/// The append path after an epoch regression, with history retention removed: epoch 0 at
/// 0–4 (deleted with its segment, the log starting at 5), then epoch 1 at 5, 2 at 6, 1 at 7.
/// `assign(1, 7)` drops epochs 1 and 2 but keeps `0 0`, which `truncateFromStart(5)` moves
/// to 5: the file `0 5`, `1 7` is Kafka's. An entry below the batches' epochs survives only
/// from before the log's first batch: `0 6` (above it) is not one, and neither is any after
/// a legacy batch cleared the cache.
#[test]
fn an_entry_older_than_the_log_survives_a_lower_epoch() {
    let (_d, m) = write(batches(5, &[(1, 1), (2, 1), (1, 1)]), Some(5));
    set_checkpoint(&m, &[(0, 5), (1, 7)]);
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(0, 0), (1, 7)]);
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(0, 6), (1, 7)]);
    one_mismatch(
        &m,
        "which gives epoch none at offset 6 where the checkpoint gives 0",
    );
    set_checkpoint(&m, &[(0, 5), (3, 7)]);
    one_mismatch(
        &m,
        "which gives epoch 1 at offset 7 where the checkpoint gives 3",
    );
    // A legacy batch at 5 before the same epochs: the cache it cleared keeps nothing older.
    use klogscan::testkit::Legacy;
    let mut p = batches(5, &[]);
    p.legacy(Legacy::v1().values(["x"]));
    for epoch in [1, 2, 1] {
        p.set_leader_epoch(epoch);
        p.append(Batch::new(Producer::PLAIN).records(1));
    }
    let (_d, m) = write(p, Some(5));
    set_checkpoint(&m, &[(1, 8)]);
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(0, 5), (1, 8)]);
    one_mismatch(
        &m,
        "which gives epoch none at offset 5 where the checkpoint gives 0",
    );
}

/// `shouldEnforceOffsetsIncreaseMonotonically`: epoch 2 at 6, then epoch 3 at 5 — the log
/// was truncated to 5 and a new leader wrote there; only `3 5` remains. On disk: epoch 1 at
/// 0–4, epoch 3 from 5. Kafka's file (`1 0`, `3 5`) is consistent; the file that still
/// holds `2 6` above `3 5` is out of order.
#[test]
fn a_later_epoch_at_a_lower_offset_drops_the_conflicting_entry() {
    let (_d, m) = write(batches(0, &[(1, 5), (3, 3)]), None);
    assert_eq!(checkpoint_text(&m), "0\n2\n1 0\n3 5\n");
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(1, 0), (2, 6), (3, 5)]);
    one_mismatch(&m, "not in ascending epoch and offset order");
}

// ----- LeaderEpochFileCacheTest: truncateFromEnd / truncateFromStart ---------------------

/// `shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest`: `2 6`, `3 8`, `4 11`
/// truncated from the end at 9 keep `2 6`, `3 8`. On disk: the log cut to 9 (epoch 2 at 6–7,
/// epoch 3 at 8). The truncated file is consistent; so is the file before the truncation
/// (whose async flush a crash lost): `LogLoader.load` cuts the cache at the log end
/// (`truncateFromEndAsyncFlush`) before anything reads it. An entry below the log end that
/// disagrees with the batches is still a mismatch.
#[test]
fn truncate_from_end_between_epoch_boundaries() {
    let (_d, m) = write(batches(6, &[(2, 2), (3, 1)]), None);
    assert_eq!(checkpoint_text(&m), "0\n2\n2 6\n3 8\n");
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(2, 6), (3, 8), (4, 11)]);
    assert!(mismatches(&m).is_empty(), "{:#?}", mismatches(&m));
    set_checkpoint(&m, &[(2, 6), (3, 7), (4, 11)]);
    assert_eq!(mismatches(&m).len(), 1, "{:#?}", mismatches(&m));
}

/// `shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries` and `testPreviousEpoch`:
/// truncating at 8 (epoch 3's first offset) removes epoch 3 too, leaving `2 6`; the log
/// ends at 8. Kafka's file is consistent, and so is one still holding an entry from the
/// log end on (the load drops it), at the log end itself included (a leader assigns its
/// epoch at the log end before it appends).
#[test]
fn truncate_from_end_on_an_epoch_boundary() {
    let (_d, m) = write(batches(6, &[(2, 2)]), None);
    assert_eq!(checkpoint_text(&m), "0\n1\n2 6\n");
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[(2, 6), (4, 11)]);
    assert!(mismatches(&m).is_empty(), "{:#?}", mismatches(&m));
    set_checkpoint(&m, &[(2, 6), (4, 8)]);
    assert!(mismatches(&m).is_empty(), "{:#?}", mismatches(&m));
}

/// `shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs`,
/// `shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest`,
/// `shouldPreserveResetOffsetOnClearEarliestIfOneExists`,
/// `shouldRetainLatestEpochOnClearAllEarliest`,
/// `shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset` and
/// `shouldNotClearAnythingIfOffsetToEarly`: `2 6`, `3 8`, `4 11` truncated from the start at
/// 9 / 8 / 11 / 15 / 1 give `3 9, 4 11` / `3 8, 4 11` / `4 11` / `4 15` / all three. On
/// disk: epoch 2 at 6–7, 3 at 8–10, 4 at 11–15, the log start offset in
/// `log-start-offset-checkpoint`. Each truncated file is consistent; one that moves epoch 4
/// is not.
#[test]
fn truncate_from_start_keeps_the_epoch_of_the_log_start() {
    let layout = [(2, 2), (3, 3), (4, 5)];
    let cases: [(i64, &[(i32, i64)]); 5] = [
        (9, &[(3, 9), (4, 11)]),
        (8, &[(3, 8), (4, 11)]),
        (11, &[(4, 11)]),
        (15, &[(4, 15)]),
        (6, &[(2, 6), (3, 8), (4, 11)]),
    ];
    for (log_start, file) in cases {
        let (_d, m) = write(batches(6, &layout), Some(log_start));
        set_checkpoint(&m, file);
        assert!(mismatches(&m).is_empty(), "log start {log_start}: {file:?}");
    }
    let (_d, m) = write(batches(6, &layout), Some(9));
    set_checkpoint(&m, &[(3, 9), (4, 12)]);
    one_mismatch(
        &m,
        "at offset 11 the checkpoint gives epoch 3 but the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 4",
    );
}

/// `shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2` and
/// `shouldWriteCheckpointOnTruncation`: `0 0`, `1 7`, `2 10` truncated from the start at 5
/// keep epoch 0 from 5; `2 6`, `3 8`, `4 11` truncated from the end at 11 and from the start
/// at 8 leave `3 8` alone. Both files are consistent with their logs.
#[test]
fn truncations_from_both_ends() {
    let (_d, m) = write(batches(0, &[(0, 7), (1, 3), (2, 2)]), Some(5));
    set_checkpoint(&m, &[(0, 5), (1, 7), (2, 10)]);
    assert!(mismatches(&m).is_empty());
    let (_d, m) = write(batches(6, &[(2, 2), (3, 3)]), Some(8));
    set_checkpoint(&m, &[(3, 8)]);
    assert!(mismatches(&m).is_empty());
}

// ----- the checkpoint file ----------------------------------------------------------------

/// `OffsetCheckpointFileWithFailureHandlerTest.shouldThrowIfVersionIsNotRecognised` and
/// `shouldReturnEmptyMapForEmptyFile`, on `leader-epoch-checkpoint`: a version other than
/// 0 fails the read (a finding naming the version); an empty file reads as no entries, as
/// does `0 / 0` (what `clearAndFlush` writes, `shouldClearAllEntries`) — no read failure,
/// but an empty cache while the batches carry epoch 3: the load rebuilds nothing after a
/// clean shutdown, so the history is lost (a mismatch saying "holds no entry"). With no
/// batch, the empty cache is the right one.
#[test]
fn checkpoint_versions_and_empty_files() {
    let (_d, m) = write(batches(0, &[(3, 2)]), None);
    std::fs::write(m.dir.join("leader-epoch-checkpoint"), "1\n1\n3 0\n").unwrap();
    let v = mismatches(&m);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("version"), "{}", v[0]);
    for empty in ["", "0\n0\n"] {
        std::fs::write(m.dir.join("leader-epoch-checkpoint"), empty).unwrap();
        let v = mismatches(&m);
        assert_eq!(v.len(), 1, "{empty:?}: {v:#?}");
        assert!(v[0].contains("holds no entry"), "{}", v[0]);
    }
    let (_d, m) = write(batches(0, &[]), None);
    for empty in ["", "0\n0\n"] {
        std::fs::write(m.dir.join("leader-epoch-checkpoint"), empty).unwrap();
        assert!(mismatches(&m).is_empty(), "{empty:?}");
    }
}

/// The cache's constructor (`new LeaderEpochFileCache` reads the file through `assign`) on
/// files Kafka does not write: for one epoch listed twice the lower start offset stays
/// (`shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned`), and an epoch below an
/// earlier entry drops it (`shouldEnforceMonotonicallyIncreasingEpochs`). The consumers'
/// view reads a copy's lineage from its file (`CheckpointLineage`: the file's entries into
/// `Lineage::new`), so `endOffsetFor` answers must follow the cache.
#[test]
fn the_lineage_read_from_a_file_is_the_cache_assign_builds() {
    use klogscan::cluster::consumers::Lineage;
    use klogscan::read::format::checkpoint::parse_leader_epoch_checkpoint;
    let lineage = |text: &[u8]| {
        let entries = parse_leader_epoch_checkpoint(text).unwrap();
        let l = Lineage::new(&entries, "leader-epoch-checkpoint");
        l.entries
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect::<Vec<_>>()
    };
    assert_eq!(lineage(b"0\n2\n2 6\n2 10\n"), vec![(2, 6)]);
    assert_eq!(lineage(b"0\n2\n3 10\n2 20\n"), vec![(2, 20)]);
}

// ----- LogLoaderTest ----------------------------------------------------------------------

/// `LogLoaderTest.testLeaderEpochCacheClearedAfterStaticMessageFormatDowngrade` and the
/// append-path clear (`UnifiedLog.append` clears the cache on a v0/v1 batch): v2 batches
/// at epochs 3 and 4, a legacy batch, then v2 batches at epoch 5. The broker's cache is
/// `5 <first epoch-5 offset>` alone after the clear; that file is consistent with the
/// batches. The empty file the clear leaves is not, once the epoch-5 batches are on disk:
/// `assign(5, 6)` wrote the entry before they were appended.
#[test]
fn a_cache_cleared_by_a_legacy_append_starts_again() {
    use klogscan::testkit::Legacy;
    let mut p = batches(0, &[(3, 2), (4, 2)]);
    p.legacy(Legacy::v1().values(["x", "y"]));
    p.set_leader_epoch(5);
    p.append(Batch::new(Producer::PLAIN).records(2));
    let (_d, m) = write(p, None);
    let (epochs, _) = scan(&m);
    assert_eq!(epochs, vec![(3, 0), (4, 2), (5, 6)]);
    set_checkpoint(&m, &[(5, 6)]);
    assert!(mismatches(&m).is_empty());
    set_checkpoint(&m, &[]);
    assert_eq!(mismatches(&m).len(), 1);
}
