//! The log dir's offset checkpoints as `LogManager.loadLogs` and `loadLog` read them: one
//! read per file and log dir, then each partition's own entry (`getOrDefault(tp, 0)`), of a
//! `HashMap` (`OffsetCheckpointFile.read`: the later of two entries wins); `LogLoader.load`
//! takes the log start as `max(entry, first segment base)`, recovers from the segment holding
//! the recovery point (`LogSegments.values(recoveryPoint, Long.MAX_VALUE)`: from the first
//! when the entry lies below it) and empties a log whose end is below the log start
//! (`deleteSegmentsIfLogStartGreaterThanLogEnd`); `Partition` clamps the high watermark
//! into the log (`UnifiedLog.updateHighWatermark`).

use super::{Dir, TOPIC, about, assert_quiet, log_of, part, recovered};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};

/// The five partitions of `LogManagerTest.testCheckpointForOnlyAffectedLogs`, two segments
/// of 25 one-record batches each (50 appended, flushed: the recovery point is 50).
const TPS: [(&str, i32); 5] = [
    ("test-a", 0),
    ("test-a", 1),
    ("test-a", 2),
    ("test-b", 0),
    ("test-b", 1),
];

/// A log dir after a crash holding [`TPS`].
fn five_partitions() -> LogDirBuilder {
    let mut ld = LogDirBuilder::new(1).clean_shutdown(false);
    for (t, p) in TPS {
        ld = ld.partition(log_of(t, p, 2, 25));
    }
    ld
}

/// `LogManagerTest.testCheckpointRecoveryPoints`, `LogManagerTest.testCheckpointForOnlyAffectedLogs`:
/// `checkpointLogRecoveryOffsets` writes every log's recovery point (50, the flushed end)
/// into one file of the log dir; after a crash each partition's load recovers from its own
/// entry: the segment holding 50 (the second, base 25) and nothing below. Near miss: one
/// partition's entry at 0 (its flush never recorded) recovers both its segments, the others
/// still only their last.
#[test]
fn one_file_holds_every_partitions_recovery_point() {
    let d = Dir::write(five_partitions());
    let v = d.verify();
    for (t, p) in TPS {
        assert_eq!(recovered(part(&v, t, p)), vec![25], "{t}-{p}");
        assert_eq!(part(&v, t, p).prediction.recovery_point, Some(50));
    }
    assert_quiet(&d, &v);
    let d = Dir::write(five_partitions().recovery_point("test-a", 1, 0));
    let v = d.verify();
    for (t, p) in TPS {
        let want = if (t, p) == ("test-a", 1) {
            vec![0, 25]
        } else {
            vec![25]
        };
        assert_eq!(recovered(part(&v, t, p)), want, "{t}-{p}");
    }
}

/// Two log dirs of one broker (`testCheckpointForOnlyAffectedLogs` checkpoints one of them,
/// `checkpointRecoveryOffsetsInDir`): each log dir's file is read for its own partitions
/// only. `test-b-0` lives in the second log dir, whose file says 50; the first log dir's
/// file still names `test-b-0` at 0 (an entry of a partition it does not hold: never read)
/// and `ghost-3`: `test-b-0` recovers from 50. Near miss: the second log dir's file without
/// the entry — the broker's default 0, both segments recovered.
#[test]
fn each_log_dir_reads_its_own_file_for_its_own_partitions() {
    for own_entry in [true, false] {
        let a = Dir::write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .partition(log_of("test-a", 0, 2, 25)),
        );
        a.put(
            "recovery-point-offset-checkpoint",
            "0\n3\ntest-a 0 50\ntest-b 0 0\nghost 3 7\n",
        );
        let b = Dir::write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .partition(log_of("test-b", 0, 2, 25)),
        );
        if !own_entry {
            b.put("recovery-point-offset-checkpoint", "0\n0\n");
        }
        let req = klogscan::request::Request::new([&a.root, &b.root]);
        let v = klogscan::request::verify(&req, None).unwrap().report;
        assert!(v.errors.is_empty(), "{:?}", v.errors);
        assert_eq!(recovered(part(&v, "test-a", 0)), vec![25]);
        let want = if own_entry { vec![25] } else { vec![0, 25] };
        assert_eq!(
            recovered(part(&v, "test-b", 0)),
            want,
            "own entry {own_entry}"
        );
        let loud = crate::common::quiet::loud(v.findings());
        assert!(loud.is_empty(), "{loud:#?}");
    }
}

/// Two entries of one partition: `OffsetCheckpointFile.read` puts each into a `HashMap`, so
/// the later wins — `ck 0 0` then `ck 0 30` is recovery point 30 (the last segment
/// recovered); the near miss, the same two lines the other way round, is 0 (every segment).
#[test]
fn of_two_entries_of_one_partition_the_later_wins() {
    for (text, rp, want) in [
        ("0\n3\nck 0 0\nck 1 30\nck 0 30\n", 30, vec![20]),
        ("0\n3\nck 0 30\nck 1 30\nck 0 0\n", 0, vec![0, 10, 20]),
    ] {
        let d = Dir::write(crashed_two());
        d.put("recovery-point-offset-checkpoint", text);
        let v = d.verify();
        assert_eq!(part(&v, TOPIC, 0).prediction.recovery_point, Some(rp));
        assert_eq!(recovered(part(&v, TOPIC, 0)), want, "{text:?}");
        assert_eq!(recovered(part(&v, TOPIC, 1)), vec![20]);
        assert!(about(&v, "recovery-point-offset-checkpoint").is_empty());
    }
}

/// `ck-0` and `ck-1`, three segments of ten one-record batches each, after a crash.
fn crashed_two() -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .partition(log_of(TOPIC, 0, 3, 10))
        .partition(log_of(TOPIC, 1, 3, 10))
}

/// Whitespace: an entry is split on `\s+` (tabs, runs of spaces and trailing whitespace read
/// as separators), but the version and count lines are `Integer.parseInt` of the whole line.
/// So tabs and trailing blanks inside entries read as written; a version `0 `, a count ` 2`
/// or a blank last line throw the malformed-line `IOException`: `LogManager.loadLogs` falls
/// back to recovery point 0 for every partition of the log dir, and
/// `CheckpointFileWithFailureHandler.read` has reported the log dir to
/// `LogDirFailureChannel` — it goes offline (an error).
#[test]
fn whitespace_separates_entry_fields_but_not_the_counts() {
    let d = Dir::write(crashed_two());
    d.put(
        "recovery-point-offset-checkpoint",
        "0\n2\nck\t0   30   \nck 1 30\t\n",
    );
    let v = d.verify();
    assert_eq!(recovered(part(&v, TOPIC, 0)), vec![20]);
    assert!(about(&v, "recovery-point-offset-checkpoint").is_empty());
    for text in [
        "0 \n2\nck 0 30\nck 1 30\n",
        "0\n 2\nck 0 30\nck 1 30\n",
        "0\n2\nck 0 30\nck 1 30\n\n",
    ] {
        d.put("recovery-point-offset-checkpoint", text);
        let v = d.verify();
        let f = about(&v, "recovery-point-offset-checkpoint");
        assert_eq!(f.len(), 1, "{text:?}: {f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].evidence["java_exception"], "IOException");
        assert!(f[0].broker_behaviour.contains("goes offline"), "{text:?}");
        for p in [0, 1] {
            assert_eq!(recovered(part(&v, TOPIC, p)), vec![0, 10, 20], "{text:?}");
        }
    }
}

/// Negative offsets, which no broker writes but `Long.parseLong` reads: a recovery point of
/// -5 starts the recovery at the first segment (`LogSegments.values` from below every base:
/// as 0); a log start of -5 loses to the first segment's base (`max`: an info, a stale
/// entry); a high watermark of -1 is clamped up to the log start when the partition becomes
/// leader or follower (quiet). Near misses, each flipping its answer: recovery point 10
/// (the second and third segments recovered), log start 35 (above the log end 30: every
/// segment deleted, an empty log at 35, a warning), high watermark 31 (above the log end:
/// the records acknowledged above 30 are gone, a warning).
#[test]
fn negative_offsets_are_read_as_the_load_reads_them() {
    let d = Dir::write(
        crashed_two()
            .recovery_point(TOPIC, 0, -5)
            .log_start_offset(TOPIC, 0, -5)
            .high_watermark(TOPIC, 0, -1),
    );
    let v = d.verify();
    let p = part(&v, TOPIC, 0);
    assert_eq!(recovered(p), vec![0, 10, 20]);
    assert_eq!(p.prediction.log_start_offset_after, Some(0));
    let loud = crate::common::quiet::loud(v.findings());
    assert!(loud.is_empty(), "{loud:#?}");
    let stale: Vec<_> = (p.findings.iter())
        .filter(|f| f.kind == Kind::CheckpointInconsistent)
        .collect();
    assert_eq!(stale.len(), 1, "{stale:#?}");
    assert_eq!(stale[0].severity, Severity::Info);
    assert!(
        stale[0].message.contains("below the first offset"),
        "{stale:#?}"
    );

    let d = Dir::write(
        crashed_two()
            .recovery_point(TOPIC, 0, 10)
            .high_watermark(TOPIC, 0, 31),
    );
    let v = d.verify();
    let p = part(&v, TOPIC, 0);
    assert_eq!(recovered(p), vec![10, 20]);
    assert_eq!(
        warnings(p),
        vec!["high watermark (replication-offset-checkpoint) 31 is above the log end offset 30"]
    );
    let d = Dir::write(crashed_two().log_start_offset(TOPIC, 0, 35));
    let v = d.verify();
    let p = part(&v, TOPIC, 0);
    assert_eq!(
        (
            p.prediction.log_start_offset_after,
            p.prediction.log_end_offset_after
        ),
        (Some(35), Some(35))
    );
    assert_eq!(
        warnings(p),
        vec!["log start offset 35 (log-start-offset-checkpoint) is above the log end offset 30"]
    );
}

/// The messages of `p`'s `checkpoint_inconsistent` warnings.
fn warnings(p: &klogscan::verify::PartitionVerification) -> Vec<&str> {
    (p.findings.iter())
        .filter(|f| f.kind == Kind::CheckpointInconsistent && f.severity == Severity::Warning)
        .map(|f| f.message.as_str())
        .collect()
}

/// `LogManagerTest.testCheckpointLogStartOffsetForNormalTopic`: 50 one-record batches rolled
/// after every offset divisible by 10 (segments at 0, 11, 21, 31, 41), the log start moved to
/// 31 (`maybeIncrementLogStartOffset`) and checkpointed while all five segments are still
/// there: the load keeps log start 31 (quiet: above the first offset is what DeleteRecords or
/// retention leaves). Then `deleteOldSegments` removes the three below 31 and the next
/// checkpoint writes no entry (the log start is the first segment's base): still 31. Near
/// miss: an entry of 51, above the log end 50 — the load deletes every segment and starts an
/// empty log at 51 (a warning).
#[test]
fn a_log_start_is_kept_until_retention_deletes_the_segments_below_it() {
    let rolled = |start: i64| {
        let mut p = PartitionBuilder::new(TOPIC, 0).start_offset(start);
        while p.next_offset() < 50 {
            let o = p.next_offset();
            p.append(klogscan::testkit::Batch::new(klogscan::testkit::Producer::PLAIN).records(1));
            if o != 0 && o % 10 == 0 {
                p.roll();
            }
        }
        p
    };
    let d = Dir::write(
        LogDirBuilder::new(1)
            .partition(rolled(0))
            .log_start_offset(TOPIC, 0, 31),
    );
    let v = d.verify();
    assert_eq!(
        part(&v, TOPIC, 0).prediction.log_start_offset_after,
        Some(31)
    );
    assert_eq!(part(&v, TOPIC, 0).scan.segments, 5);
    assert_quiet(&d, &v);
    let d = Dir::write(LogDirBuilder::new(1).partition(rolled(31)));
    let v = d.verify();
    assert_eq!(
        part(&v, TOPIC, 0).prediction.log_start_offset_after,
        Some(31)
    );
    assert_quiet(&d, &v);
    let d = Dir::write(
        LogDirBuilder::new(1)
            .partition(rolled(0))
            .log_start_offset(TOPIC, 0, 51),
    );
    let v = d.verify();
    let p = part(&v, TOPIC, 0);
    assert_eq!(
        (
            p.prediction.log_start_offset_after,
            p.prediction.log_end_offset_after
        ),
        (Some(51), Some(51))
    );
    assert_eq!(
        warnings(p),
        vec!["log start offset 51 (log-start-offset-checkpoint) is above the log end offset 50"]
    );
}

/// `LogDirFailureTest.testIOExceptionDuringCheckpoint`, `LogDirFailureTest.testProduceErrorFromFailureOnCheckpoint`:
/// a checkpoint write that fails (`CheckpointFile.write`: the entries go to `<file>.tmp`,
/// flushed, then renamed over the file) leaves the file as it was and at most a partial
/// `.tmp`, which no load reads: the next start reads the old entries (recovery point 30,
/// the last segment recovered), and the `.tmp` is a leftover (info). Near miss: the same
/// partial bytes in the file's place (what a write without the rename would leave): the
/// count does not hold, an `IOException` — recovery from 0 and the log dir offline (an
/// error).
#[test]
fn a_failed_checkpoint_write_leaves_the_old_file_in_place() {
    let partial = "0\n2\nck 0 30\nck 1";
    let d = Dir::write(crashed_two());
    d.put("recovery-point-offset-checkpoint.tmp", partial);
    let v = d.verify();
    assert_eq!(recovered(part(&v, TOPIC, 0)), vec![20]);
    let tmp = about(&v, "recovery-point-offset-checkpoint.tmp");
    assert_eq!(tmp.len(), 1, "{tmp:#?}");
    assert_eq!(
        (tmp[0].kind, tmp[0].severity),
        (Kind::LeftoverFile, Severity::Info)
    );
    assert!(about(&v, "recovery-point-offset-checkpoint").is_empty());
    d.put("recovery-point-offset-checkpoint", partial);
    let v = d.verify();
    assert_eq!(recovered(part(&v, TOPIC, 0)), vec![0, 10, 20]);
    let f = about(&v, "recovery-point-offset-checkpoint");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].broker_behaviour.contains("goes offline"));
}
