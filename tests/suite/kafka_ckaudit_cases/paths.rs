//! How a log dir is named and what it holds besides partitions: `LogManager` keys its
//! checkpoints by the log dir's canonical file (`LogManagerTest.testRecoveryDirectoryMapping…`),
//! and `loadLogs` loads every child directory but `remote-log-index-cache` (and the KRaft
//! metadata log), parsing each name as a partition's (`UnifiedLog.parseTopicPartitionName`:
//! `KafkaException` otherwise, which stops the start).

use super::{Dir, TOPIC, log_of, part, recovered};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::LogDirBuilder;
use std::path::PathBuf;

/// `ck-0` after a crash, its recovery point `rp`.
fn crashed(rp: i64) -> Dir {
    Dir::write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .partition(log_of(TOPIC, 0, 3, 10))
            .recovery_point(TOPIC, 0, rp),
    )
}

/// `path` relative to the working directory (`..` up to the root, then `path`): a relative
/// name of the log dir without changing the process's directory.
fn relative(path: &std::path::Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap();
    let mut rel = PathBuf::new();
    for _ in cwd.components().skip(1) {
        rel.push("..");
    }
    rel.join(path.strip_prefix("/").unwrap())
}

/// `LogManagerTest.testRecoveryDirectoryMappingWithTrailingSlash`,
/// `LogManagerTest.testRecoveryDirectoryMappingWithRelativeDirectory`: the log dir named
/// with a trailing separator, or relative to the working directory, is the same log dir —
/// its `recovery-point-offset-checkpoint` is the one read for its partitions (recovery point
/// 30: the last segment recovered), exactly as under its plain absolute name. Near miss: the
/// entry at 0 under each name (every segment recovered): the entry, not the name, decides.
#[test]
fn a_log_dir_named_with_a_trailing_slash_or_relatively_reads_its_own_checkpoint() {
    for (rp, want) in [(30, vec![20]), (0, vec![0, 10, 20])] {
        let d = crashed(rp);
        let names = [
            d.root.clone(),
            PathBuf::from(format!("{}/", d.root.display())),
            relative(&d.root),
        ];
        for name in names {
            let v = Dir::verify_path(&name, None);
            let p = part(&v, TOPIC, 0);
            assert_eq!(p.prediction.recovery_point, Some(rp), "{}", name.display());
            assert_eq!(recovered(p), want, "{}", name.display());
        }
    }
}

/// `LogManagerTest.testLoadLogsSkipRemoteIndexCache`: a `remote-log-index-cache` directory
/// (tiered storage's cache of remote indexes) is skipped by `loadLogs`: no partition, no
/// finding. Near miss: a directory `remote-log-index-cache.old`, whose name does not parse as
/// a partition's: `foreign_directory`, an error (the broker does not start).
#[test]
fn the_remote_index_cache_directory_is_not_loaded() {
    let d = crashed(30);
    std::fs::create_dir(d.root.join("remote-log-index-cache")).unwrap();
    std::fs::write(d.root.join("remote-log-index-cache/0_abc.index"), b"").unwrap();
    let v = d.verify();
    assert_eq!(v.partitions.len(), 1, "{:#?}", v.partitions);
    assert!(v.findings().all(|f| f.kind != Kind::ForeignDirectory));
    std::fs::rename(
        d.root.join("remote-log-index-cache"),
        d.root.join("remote-log-index-cache.old"),
    )
    .unwrap();
    let v = d.verify();
    let f: Vec<_> = v
        .findings()
        .filter(|f| f.kind == Kind::ForeignDirectory)
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].severity, Severity::Error);
}
