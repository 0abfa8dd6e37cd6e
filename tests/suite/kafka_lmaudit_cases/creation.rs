//! `LogManagerTest.testCreateLog`, `testGetNonExistentLog`, `testLeastLoadedAssignment` and
//! `testLock`:
//! the directories `LogManager.getOrCreateLog` makes (or does not make), where, and what the
//! next start does with them.

use super::files;
use crate::kafka_ckaudit_cases::{Dir, assert_quiet, log_of, part, recovered};
use crate::kafka_quiet_crash_cases::set_len;
use klogscan::finding::{Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::testkit::LogDirBuilder;
use klogscan::testkit::files::{topic_id_for, uuid_text};

/// The cluster of the placement case.
const CLUSTER: &str = "MkU3OEVBNTcwNTJENDM2Qg";

/// `LogManagerTest.testCreateLog`, and the broker dying right after the test's append:
/// `cr-0` holds segment 0 with the one record at leader epoch 0, its indexes preallocated
/// as `AbstractIndex` makes a new one (`log.index.size.max.bytes`, 10 MiB, rounded down to
/// a whole number of entries: 10485760 bytes of offset index, 10485756 of time index, zeros
/// after the entries), `leader-epoch-checkpoint` `0 0`, no checkpoint flush yet (recovery
/// point 0), no clean shutdown. Next start: `LogLoader.recoverLog` recovers segment 0 from
/// the recovery point (rebuilding its indexes), the log ends at 1: infos only. Near miss:
/// the record's bytes never reached the disk (an empty `.log`) while the recovery point
/// says 1 was flushed: "recovery point 1 is above the log end offset 0", a warning.
#[test]
fn a_created_log_with_one_record_and_preallocated_indexes_is_recovered() {
    let write = |rp: i64| {
        let d = Dir::write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("cr", 0, rp)
                .high_watermark("cr", 0, 0)
                .partition(log_of("cr", 0, 1, 1)),
        );
        let dir = d.root.join("cr-0");
        set_len(&dir.join("00000000000000000000.index"), 10_485_760);
        set_len(&dir.join("00000000000000000000.timeindex"), 10_485_756);
        // No roll and no clean shutdown: no producer snapshot was taken.
        std::fs::remove_file(dir.join("00000000000000000001.snapshot")).unwrap();
        d
    };
    let d = write(0);
    assert!(
        files(&d.root.join("cr-0")).contains(&"leader-epoch-checkpoint".to_owned()),
        "{:?}",
        files(&d.root.join("cr-0"))
    );
    let v = d.verify();
    assert_quiet(&d, &v);
    let p = part(&v, "cr", 0);
    assert_eq!(recovered(p), vec![0]);
    assert_eq!(p.prediction.log_end_offset_after, Some(1));
    assert!(p.prediction.truncation.is_none());

    let d = write(1);
    set_len(&d.root.join("cr-0/00000000000000000000.log"), 0);
    let v = d.verify();
    let p = part(&v, "cr", 0);
    assert!(
        (p.findings.iter()).any(|f| f.severity == Severity::Warning
            && f.message.contains("recovery point")
            && f.message.contains("1 is above the log end offset 0")),
        "{:#?}",
        p.findings
    );
}

/// `LogManagerTest.testGetNonExistentLog`: `getLog` creates nothing, so the log dir holds no
/// partition directory; its checkpoints may still name `test-0` (an entry `loadLog` never
/// reads: it looks up only the directories it loads). `scan` and `verify` list no partition
/// and say nothing. Near miss: a `test-0` directory with no segment (`getOrCreateLog` died
/// between the directory and its first segment): `loadLog` loads it and `LogLoader.load`
/// opens a segment at the log start 5 the checkpoint names — a partition, with the
/// segment it creates predicted.
#[test]
fn no_directory_is_no_partition_whatever_the_checkpoints_name() {
    let d = Dir::write(LogDirBuilder::new(1));
    let ckpt = "0\n1\ntest 0 5\n";
    for f in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
        "log-start-offset-checkpoint",
    ] {
        d.put(f, ckpt);
    }
    let v = d.verify();
    assert_quiet(&d, &v);
    assert!(v.partitions.is_empty(), "{:#?}", v.partitions);
    assert!(d.scan().partitions.is_empty());

    std::fs::create_dir(d.root.join("test-0")).unwrap();
    let v = d.verify();
    let p = part(&v, "test", 0);
    assert_eq!(
        p.prediction.created_segment.as_deref(),
        Some("00000000000000000005.log"),
        "{:#?}",
        p.prediction
    );
}

/// `LogManagerTest.testLeastLoadedAssignment`: three log dirs of broker 1, twenty partitions
/// of `test` created one by one, each in the log dir holding fewest (`nextLogDirs`): 7, 7
/// and 6. Next start: `loadLogs` loads each log dir's partitions into `currentLogs`, each
/// once: nothing said. Near miss: `test-0` in a second log dir too (a copy no future rename
/// explains): `loadLog` throws "Duplicate log directories", `loadLogs` rethrows it, and the
/// broker does not start (`duplicate_log_directories`, an error).
#[test]
fn partitions_spread_over_three_log_dirs_each_load_once() {
    let t = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = (0..3).map(|i| t.path().join(format!("d{i}"))).collect();
    for (i, dir) in dirs.iter().enumerate() {
        let mut ld = LogDirBuilder::new(1);
        for p in (0..20).filter(|p| p % 3 == i as i32) {
            ld = ld.partition(log_of("test", p, 1, 2));
        }
        ld.write(dir).unwrap();
        // A KRaft broker's log dirs, told apart by their `directory.id`s.
        let id = uuid_text(&topic_id_for(&format!("log dir {i}")));
        let meta = format!("version=1\nnode.id=1\ncluster.id={CLUSTER}\ndirectory.id={id}\n");
        std::fs::write(dir.join("meta.properties"), meta).unwrap();
    }
    let scan = || {
        let r = request::run(&Request::new([t.path()])).unwrap().report;
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        r
    };
    let r = scan();
    assert_eq!(r.partitions.len(), 20);
    let dup = |r: &klogscan::results::ScanReport| {
        (r.findings.iter())
            .filter(|f| f.kind == Kind::DuplicateLogDirectories)
            .count()
    };
    assert_eq!(dup(&r), 0, "{:#?}", r.findings);
    assert!(crate::common::quiet::loud(&r.findings).is_empty());

    let other = tempfile::tempdir().unwrap();
    let extra = other.path().join("extra");
    LogDirBuilder::new(1)
        .partition(log_of("test", 0, 1, 2))
        .write(&extra)
        .unwrap();
    std::fs::rename(extra.join("test-0"), dirs[1].join("test-0")).unwrap();
    let r = scan();
    assert_eq!(dup(&r), 1, "{:#?}", r.findings);
    assert!(
        (r.findings.iter())
            .any(|f| f.kind == Kind::DuplicateLogDirectories && f.severity == Severity::Error)
    );
}

/// `LogManagerTest.testLock`: `LogManager.lockLogDirs` holds `FileLock` on each log dir's
/// `.lock` and `shutdown` removes the file; a broker that died leaves it, and the next
/// start's `tryLock` takes the file again (the operating system released the dead
/// process's lock). What is on disk: a log dir with an empty `.lock` beside its partition,
/// which `scan` and `verify` read as any log dir, quiet. (The live lock is a property of a
/// running process, not of bytes: `testTwoLogManagersUsingSameDirFails` is not
/// expressible.) Near miss: `.lock` a directory. `lockLogDirs`' `IOException` only queues
/// the log dir on `LogDirFailureChannel` (it leaves `liveLogDirs` when the handler thread
/// runs, after the load), so `loadLogs` still lists it, and its filter's
/// `parseTopicPartitionName(".lock")` throws a `KafkaException` (no `-` in the name), out of
/// `loadLogs`: the broker does not start (`foreign_directory`, an error).
#[test]
fn a_lock_file_left_by_a_dead_broker_is_no_finding() {
    let d = Dir::write(LogDirBuilder::new(1).partition(log_of("locked", 0, 1, 3)));
    d.put(".lock", "");
    let v = d.verify();
    assert_quiet(&d, &v);
    assert_eq!(
        part(&v, "locked", 0).prediction.log_end_offset_after,
        Some(3)
    );

    std::fs::remove_file(d.root.join(".lock")).unwrap();
    std::fs::create_dir(d.root.join(".lock")).unwrap();
    let refused: Vec<_> = (d.verify().findings())
        .filter(|f| f.kind == Kind::ForeignDirectory && f.severity == Severity::Error)
        .map(|f| f.message.clone())
        .collect();
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert!(refused[0].contains(".lock"), "{}", refused[0]);
}
