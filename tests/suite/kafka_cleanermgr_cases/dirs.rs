//! Whose entry is whose: the partitions of one log dir, and a replica moved between two
//! log dirs of one broker.

use super::*;
use klogscan::finding::Severity;

/// `LogCleanerManagerTest.testGrabFilthiestCompactedLogReturnsLogWithDirtiestRatio`,
/// `…IgnoresUncleanablePartitions`, `…IgnoresInProgressPartitions` and
/// `…IgnoresBothInProgressPartitionsAndUncleanablePartitions`: `wishing-well-0/1/2` of 20,
/// 25 and 30 batches, each checkpointed at 20. `grabFilthiestCompactedLog` picks the log
/// with the highest cleanable ratio among those neither in progress nor uncleanable, and
/// only the pass over it moves its entry (`doneCleaning`): here partition 1 was cleaned to
/// 25 while 2 was skipped, and 0 had nothing to clean. The file lists every partition the
/// cleaner ever checkpointed, whichever it picked last: each is known compacted, nothing is
/// reported.
#[test]
fn every_partition_the_cleaner_checkpointed_is_compacted() {
    let mut ld = LogDirBuilder::new(1);
    for (partition, batches) in [(0, 20), (1, 25), (2, 30), (3, 20)] {
        ld = ld.partition(filthy("wishing-well", partition, batches, None));
    }
    let entries = [
        ("wishing-well", 0, 20),
        ("wishing-well", 1, 25),
        ("wishing-well", 2, 20),
    ];
    let (b, _dir) = one_broker(ld, Some(&entries));
    let v = b.check();
    assert_no_alarm(&v);
    for partition in 0..3 {
        assert_compacted_by_checkpoint(&v, "wishing-well", partition);
    }
    // The near miss: partition 3 of the same topic, which no pass has cleaned yet, has no
    // entry (`updateCheckpoints` writes only the partition a pass cleaned or reset): its
    // compaction is not known from the file (the cleaner removed nothing from it).
    for (what, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        assert_eq!(
            compaction(r, "wishing-well", 3),
            vec![(None, None)],
            "{what}"
        );
    }
}

/// An idempotent producer's log as the cleaner leaves it: producer 5's batches at 0 (key
/// a), 2 (b) and 3 (c), the one at 1 (key b, sequence 1) removed — superseded at 2 — then
/// its sequence 4 at 4 in the active segment. Checkpointed at 4.
fn cleaned_idempotent(topic: &str, partition: i32) -> PartitionBuilder {
    let idem = Producer::idempotent(5, 0);
    let mut p = PartitionBuilder::new(topic, partition);
    p.append(Batch::new(idem).sequence(0).record(Rec::kv("a", "0")));
    p.skip_offsets(1);
    p.append(Batch::new(idem).sequence(2).record(Rec::kv("b", "2")));
    p.append(Batch::new(idem).sequence(3).record(Rec::kv("c", "3")));
    p.roll();
    p.append(Batch::new(idem).sequence(4).record(Rec::kv("d", "4")));
    p
}

/// Broker 1 with log dirs `data` (holding `log2-0`) and `data2` (holding `log-0`, moved there
/// by `kafka-reassign-partitions --reassignment-json-file` with a log dir), both cleaned as
/// [`cleaned_idempotent`]; `data`'s cleaner checkpoint lists `in_data`, `data2`'s `in_data2`.
fn moved(in_data: &[(&str, i32, i64)], in_data2: &[(&str, i32, i64)]) -> Verdict {
    let mut b = Brokers::new();
    let ld = LogDirBuilder::new(1).partition(cleaned_idempotent("log2", 0));
    let data = b.write(1, "data", ld, None);
    cleaner_checkpoint(&data, in_data);
    let ld = LogDirBuilder::new(1).partition(cleaned_idempotent("log", 0));
    let data2 = b.write(1, "data2", ld, None);
    cleaner_checkpoint(&data2, in_data2);
    b.check()
}

/// `LogCleanerManagerTest.testAlterCheckpointDirShouldRemoveDataInSrcDirAndAddInNewDir`
/// and `testHandleLogDirFailureShouldRemoveDirAndData`: when the future replica of `log-0`
/// replaces the current one (`LogManager.replaceCurrentWithFutureLog`),
/// `LogCleanerManager.alterCheckpointDir` removes its entry from the source log dir's file
/// (`data`) and adds it to the destination's (`data2`); `log2-0`'s entry stays in `data`.
/// Each log is known compacted from its own log dir's file, and the sequence and offset
/// gaps the cleaner left are not reported.
#[test]
fn the_cleaner_entry_moves_with_the_log_to_its_new_log_dir() {
    let v = moved(&[("log2", 0, 4)], &[("log", 0, 4)]);
    assert_no_alarm(&v);
    assert_compacted_by_checkpoint(&v, "log", 0);
    assert_compacted_by_checkpoint(&v, "log2", 0);
    assert!(verified(&v, Kind::SequenceGap).is_empty());
}

/// The near miss of [`the_cleaner_entry_moves_with_the_log_to_its_new_log_dir`]
/// (`testUpdateCheckpointsShouldRemovePartitionData`: `updateCheckpoints` drops a
/// partition's entry): `log-0` listed nowhere. Nothing says the cleaner removed its batch
/// at 1, so producer 5's sequence gap stays reported, at warning (compaction unknown).
#[test]
fn a_log_no_cleaner_checkpoint_lists_keeps_its_gaps_reported() {
    let v = moved(&[("log2", 0, 4)], &[]);
    assert_compacted_by_checkpoint(&v, "log2", 0);
    assert_eq!(compaction(&v.scan, "log", 0), vec![(None, None)]);
    let gaps: Vec<(String, Severity)> = (verified(&v, Kind::SequenceGap).into_iter())
        .map(|f| (f.topic.clone(), f.severity))
        .collect();
    assert_eq!(gaps, vec![("log".to_string(), Severity::Warning)]);
}

/// The name `ReplicaAlterLogDirsThread`'s copy of `log-0` has (`UnifiedLog.logFutureDirName`).
const FUTURE: &str = "log-0.7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29-future";

/// Copy the files of directory `from` into `to` (created).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Broker 1 moving `log-0` from `data` to `data2`: the live log in `data`, cleaned as
/// [`cleaned_idempotent`] and listed in `data`'s cleaner checkpoint when `listed`; the
/// `-future` copy in `data2` holding the same batches (no cleaner checkpoint there).
fn moving(listed: bool) -> Verdict {
    let mut b = Brokers::new();
    let ld = LogDirBuilder::new(1).partition(cleaned_idempotent("log", 0));
    let data = b.write(1, "data", ld, None);
    let entries: &[(&str, i32, i64)] = if listed { &[("log", 0, 4)] } else { &[] };
    cleaner_checkpoint(&data, entries);
    let data2 = b.write(1, "data2", LogDirBuilder::new(1), None);
    copy_dir(&data.join("log-0"), &data2.join(FUTURE));
    b.check()
}

/// The move still under way: `ReplicaAlterLogDirsThread` copies the current log's batches
/// into the `-future` log as they are (cleaned: producer 5's batch at 1 already gone), and
/// the entry stays in the source log dir until the swap (`alterCheckpointDir` runs in
/// `replaceCurrentWithFutureLog`); the cleaner never cleans a future log (it is not among
/// `LogManager.currentLogs`), and `LogCleanerManager.allCleanerCheckpoints` reads the
/// entries of all the broker's log dirs as one map by topic-partition. The copy's gaps are
/// the live log's, which the cleaner made: the live log is known compacted and nothing is
/// reported on it; the copy should not draw the sequence gap either (klogscan takes an
/// entry only from the copy's own log dir: the copy's compaction is unknown and the gap a
/// warning).
#[test]
fn a_future_copy_of_a_cleaned_log_keeps_its_gaps_quiet() {
    let v = moving(true);
    let gaps: Vec<String> = (verified(&v, Kind::SequenceGap).into_iter())
        .map(|f| f.source.path.clone().unwrap_or_default())
        .collect();
    assert!(
        gaps.is_empty(),
        "{gaps:#?}\n{:#?}",
        lines(v.verify.findings())
    );
    assert_no_alarm(&v);
}

/// The near miss of [`a_future_copy_of_a_cleaned_log_keeps_its_gaps_quiet`]: the source log
/// dir's file does not list `log-0` either; nothing explains the gap in either copy.
#[test]
fn a_future_copy_of_an_unlisted_log_keeps_its_gaps_reported() {
    let v = moving(false);
    let gaps = verified(&v, Kind::SequenceGap);
    assert_eq!(gaps.len(), 2, "{:#?}", lines(v.verify.findings()));
    assert!(gaps.iter().all(|f| f.severity == Severity::Warning));
}
