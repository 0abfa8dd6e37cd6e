//! The cleaner's checkpoint against the log: below the log start, above the log end, after
//! a truncation, and a file the broker's reader refuses.

use super::*;
use klogscan::finding::Severity;

/// `foo-0` of twenty batches (`setupIncreasinglyFilthyLogs` with 20 batches: segments at 0,
/// 1, 6, 11, 16 and the empty active one at 20), its log start `log_start` when DeleteRecords
/// moved it, the cleaner's entry `cleaned_to`.
fn foo(log_start: Option<i64>, cleaned_to: i64, txn_at: Option<i64>) -> Verdict {
    let mut ld = LogDirBuilder::new(1).partition(filthy("foo", 0, 20, txn_at));
    if let Some(ls) = log_start {
        ld = ld.log_start_offset("foo", 0, ls);
    }
    let (b, dir) = one_broker(ld, Some(&[("foo", 0, cleaned_to)]));
    empty_active_segment(&dir, "foo", 0, 20);
    b.check()
}

/// `LogCleanerManagerTest.testDirtyOffsetResetIfSmallerThanStartOffset`,
/// `testCleanableOffsetsNeedsCheckpointReset` (its first two calls) and
/// `testCheckpointUpdatedForInvalidOffsetNoCleaning` / `…NotSelected`: after DeleteRecords
/// moved `foo-0`'s log start to 10 (or to its end, 20), the cleaner's entry 0 or 15 lies
/// below it; `LogCleanerManager.cleanableOffsets` takes the log start as the first dirty
/// offset instead and `grabFilthiestCompactedLog` writes it back, whether or not the log is
/// then cleaned. An entry inside `[log start, log end]` (15 over a log starting at 10) is
/// taken as it is. None of these states is a fault: the files before the reset and after
/// it draw nothing from klogscan, and the entry makes the partition known compacted. The
/// segments wholly below the log start stay until the cleaner thread's
/// `deleteOldSegments` (`deletableLogs` takes compacted logs too:
/// `testLogsWithSegmentsToDeleteShouldConsiderCleanupPolicyCompactLogs`); the load deletes
/// none of them and starts the log at the checkpointed log start. (Kafka logs a warning
/// for the reset of a `compact`-only log and none under `compact,delete`; the state is the
/// ordinary outcome of DeleteRecords or retention, which klogscan does not report.)
#[test]
fn a_cleaner_checkpoint_below_the_log_start_is_reset_quietly() {
    for (log_start, cleaned_to) in [(10, 0), (10, 10), (10, 15), (20, 15), (20, 20)] {
        let v = foo(Some(log_start), cleaned_to, None);
        assert!(
            cleaner_findings(&v).is_empty()
                && verified(&v, Kind::CheckpointInconsistent).is_empty(),
            "log start {log_start}, cleaned to {cleaned_to}: {:#?}",
            lines(v.verify.findings())
        );
        assert_no_alarm(&v);
        assert_compacted_by_checkpoint(&v, "foo", 0);
        let p = &v.verify.partitions[0].prediction;
        assert!(p.deleted_segments.is_empty(), "{p:#?}");
        assert_eq!(p.log_start_offset_after, Some(log_start));
    }
}

/// The near miss of [`a_cleaner_checkpoint_below_the_log_start_is_reset_quietly`]: producer
/// 7's transaction begins at 12 and is still open at the log's end. An entry of 5, below the
/// log start 10, says nothing of it (the cleaner resets it to 10 and stops at the last
/// stable offset, 12: `cleanableOffsets`); an entry of 15 inside the log means a pass
/// cleaned past 12, which it does only once the transaction is decided — its marker is lost
/// since (the existing `checkpoint_inconsistent`, `LogCleanerManagerTest.
/// testUndecidedTransactionalDataNotCleanable`).
#[test]
fn a_cleaner_checkpoint_inside_the_log_past_an_open_transaction_is_reported() {
    let below = foo(Some(10), 5, Some(12));
    assert!(
        cleaner_findings(&below).is_empty(),
        "{:#?}",
        lines(below.verify.findings())
    );
    let inside = foo(Some(10), 15, Some(12));
    let found = cleaner_findings(&inside);
    assert_eq!(found.len(), 1, "{:#?}", lines(inside.verify.findings()));
    assert_eq!((found[0].offset, found[0].producer_id), (Some(12), Some(7)));
}

/// `LogCleanerManagerTest.testDirtyOffsetResetIfLargerThanEndOffset` and the third call of
/// `testCleanableOffsetsNeedsCheckpointReset`: the cleaner's entry (200, 25) lies above the
/// log end offset 20. `LogCleanerManager.cleanableOffsets` warns that the checkpointed dirty
/// offset is larger than the log end offset — data at the end of the log was lost or
/// corrupted after a pass cleaned it (a truncation lowers the entry first:
/// `maybeTruncateCheckpoint`) — resets it to the log start and cleans the whole log again.
/// klogscan, which reports a recovery point or a high watermark above the log end as
/// `checkpoint_inconsistent`, should report this entry the same way (a warning naming the
/// file, at the log end offset).
#[test]
fn a_cleaner_checkpoint_above_the_log_end_is_reported() {
    for cleaned_to in [200, 25, 21] {
        let v = foo(None, cleaned_to, None);
        let found = cleaner_findings(&v);
        assert_eq!(
            found.len(),
            1,
            "cleaned to {cleaned_to}: {:#?}",
            lines(v.verify.findings())
        );
        assert_eq!(
            (found[0].severity, found[0].offset),
            (Severity::Warning, Some(20))
        );
    }
}

/// The near miss of [`a_cleaner_checkpoint_above_the_log_end_is_reported`]: an entry at the
/// log end offset (20) itself is valid (`cleanableOffsets` resets only an entry strictly
/// above it), and one above the active segment's base but inside the log too
/// (`testDirtyOffsetLargerThanActiveSegmentBaseOffset`, the empty active segment here
/// starting at the log end): nothing reported.
#[test]
fn a_cleaner_checkpoint_at_the_log_end_is_valid() {
    for cleaned_to in [20, 16] {
        let v = foo(None, cleaned_to, None);
        assert!(
            cleaner_findings(&v).is_empty(),
            "{:#?}",
            lines(v.verify.findings())
        );
        assert_no_alarm(&v);
        assert_compacted_by_checkpoint(&v, "foo", 0);
    }
}

/// `foo-0` as a truncation leaves it: the batches up to `log_end` (producer 7's
/// transaction open at `txn_at`, its COMMIT cut away), the cleaner's entry `cleaned_to`.
fn truncated(log_end: i64, txn_at: Option<i64>, cleaned_to: i64) -> Verdict {
    let ld = LogDirBuilder::new(1).partition(filthy("foo", 0, log_end, txn_at));
    let (b, _dir) = one_broker(ld, Some(&[("foo", 0, cleaned_to)]));
    b.check()
}

/// `LogCleanerManagerTest.testMaybeTruncateCheckpointShouldTruncateData`: `LogManager.
/// truncateTo` cutting a log below its active segment's base calls `LogCleanerManager.
/// maybeTruncateCheckpoint` with the new active segment's base, which lowers a higher entry
/// to it and leaves a lower one. Here a follower truncated `foo-0` (cleaned to 20, producer
/// 7's transaction from 12 committed at 18) to 15, the COMMIT cut away: the segment at 11 is
/// active again and the entry is 11, below the transaction the truncation reopened. A
/// truncation at or above the active base (to 18, the entry 16 kept) moves nothing, and
/// a transaction begun at 17 is above it. klogscan reports no cleaner checkpoint fault.
#[test]
fn a_truncation_lowers_the_cleaner_checkpoint_to_the_active_segment() {
    for (log_end, txn_at, cleaned_to) in [(15, 12, 11), (18, 17, 16)] {
        let v = truncated(log_end, Some(txn_at), cleaned_to);
        assert!(
            verified(&v, Kind::CheckpointInconsistent).is_empty(),
            "truncated to {log_end}: {:#?}",
            lines(v.verify.findings())
        );
        assert_compacted_by_checkpoint(&v, "foo", 0);
    }
}

/// The near misses of [`a_truncation_lowers_the_cleaner_checkpoint_to_the_active_segment`]:
/// the entry still 20 after the truncation to 15 (the broker stopped between the truncation
/// and `maybeTruncateCheckpoint`, or the checkpoint came from an older copy); and the
/// truncation to 18, at the active segment's base, which `maybeTruncateCheckpoint` leaves
/// at 16 although it cut the COMMIT of the transaction begun at 12. Either way the cleaner
/// passed offset 12, so producer 7's transaction was decided then, and its marker is gone
/// (a transaction the coordinator will not finish again): the lost-marker
/// `checkpoint_inconsistent` at 12.
#[test]
fn a_cleaner_checkpoint_past_a_transaction_a_truncation_reopened_is_reported() {
    for (log_end, cleaned_to) in [(15, 20), (18, 16)] {
        let v = truncated(log_end, Some(12), cleaned_to);
        let found = cleaner_findings(&v);
        assert!(
            found
                .iter()
                .any(|f| f.offset == Some(12) && f.producer_id == Some(7)),
            "truncated to {log_end}: {:#?}",
            lines(v.verify.findings())
        );
    }
}

/// A log dir holding `foo-0` (twenty batches) and a cleaner checkpoint of `text`.
fn with_cleaner_file(text: &str) -> Verdict {
    let ld = LogDirBuilder::new(1).partition(filthy("foo", 0, 20, None));
    let (b, dir) = one_broker(ld, None);
    std::fs::write(dir.join("cleaner-offset-checkpoint"), text).unwrap();
    b.check()
}

/// The log-dir findings about a cleaner checkpoint that cannot be read.
fn unreadable_cleaner_file(v: &Verdict) -> Vec<&Finding> {
    (v.verify.log_dir_findings.iter())
        .filter(|f| f.kind == Kind::CheckpointInconsistent)
        .filter(|f| f.evidence["file"] == "cleaner-offset-checkpoint")
        .collect()
}

/// `LogCleanerManager.allCleanerCheckpoints`, which every `LogCleanerManagerTest` method
/// asserting on the checkpoint reads through (`testUpdateCheckpointsShouldAddOffsetToPartition`
/// and the others), on a file its reader refuses. `CheckpointFileWithFailureHandler.read`
/// reports an `IOException` (a version other than 0, a count the entries do not match, a
/// line of other than three fields) to `LogDirFailureChannel` — the log dir goes offline at
/// the cleaner thread's first pass after the start (the cleaner enabled, the default) — and `allCleanerCheckpoints` then reads
/// no entry from it. A partition or offset that is not a number throws a
/// `NumberFormatException`, which nothing on the way catches: it escapes
/// `grabFilthiestCompactedLog` and `CleanerThread.doWork`, and `ShutdownableThread.run` ends
/// the cleaner thread (no log of the broker is compacted again until it restarts;
/// `updateCheckpoints` throws it to a deletion too). klogscan reports the other offset
/// checkpoints that cannot be parsed (`checkpoint_inconsistent` at the log dir, an error
/// when the log dir goes offline); it should report this one too.
#[test]
fn a_cleaner_checkpoint_the_broker_cannot_parse_is_reported() {
    for (text, severity, throws) in [
        ("1\n1\nfoo 0 5\n", Some(Severity::Error), "IOException"),
        ("0\n2\nfoo 0 5\n", Some(Severity::Error), "IOException"),
        ("0\n1\nfoo 0\n", Some(Severity::Error), "IOException"),
        ("0\n1\nfoo zero 5\n", None, "NumberFormatException"),
    ] {
        let v = with_cleaner_file(text);
        let found = unreadable_cleaner_file(&v);
        assert_eq!(
            found.len(),
            1,
            "{text:?}: {:#?}",
            lines(v.verify.findings())
        );
        assert!(found[0].severity >= Severity::Warning, "{text:?}");
        if let Some(s) = severity {
            assert_eq!(found[0].severity, s, "{text:?}");
        }
        assert_eq!(found[0].evidence["java_exception"], throws, "{text:?}");
    }
}

/// The near miss of [`a_cleaner_checkpoint_the_broker_cannot_parse_is_reported`]: the
/// empty file `CheckpointFile`'s constructor creates at the start before any pass, the file
/// of no entry a pass leaves, and a well-formed entry all read cleanly
/// (`CheckpointReadBuffer.read` takes a file without a line as no entry): nothing reported.
#[test]
fn a_cleaner_checkpoint_the_broker_reads_is_quiet() {
    for text in ["", "0\n0\n", "0\n1\nfoo 0 5\n"] {
        let v = with_cleaner_file(text);
        assert!(
            unreadable_cleaner_file(&v).is_empty(),
            "{text:?}: {:#?}",
            lines(v.verify.findings())
        );
        assert_no_alarm(&v);
    }
}
