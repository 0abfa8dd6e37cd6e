//! What `LogManager`'s retention, topic deletion and log creation leave in a log dir, for the
//! `LogManagerTest` methods (core/src/test/scala/unit/kafka/log/, apache/kafka trunk of
//! 2024-10) no earlier klogscan test cited: the retention methods
//! (`testCleanupExpiredSegments`, `testCleanupSegmentsToMaintainSize`,
//! `testDoesntCleanLogsWithCompact*`), the deletion methods
//! (`testCreateAndDeleteOverlyLongTopic`, `testFileReferencesAfterAsyncDelete`) and the
//! creation and placement methods (`testCreateLog`, `testGetNonExistentLog`, `testLock`,
//! `testLeastLoadedAssignment`).
//!
//! Each test writes the log dir the Kafka test's broker leaves (or would leave had it died
//! within `file.delete.delay.ms`), runs `verify` and `scan` through the library and asserts
//! what the broker does at its next start, with a near miss that flips the answer. What the
//! tests hold klogscan to:
//! * retention (`UnifiedLog.deleteOldSegments` through `LogManager.cleanupLogs`) deletes the
//!   oldest segments only — `UnifiedLog.deletableSegments` stops at the first segment it
//!   keeps — and moves the log start to the first kept segment's base, which
//!   `LogManager.checkpointLogStartOffsetsInDir` writes no entry for (only a log start above
//!   the first base is written); the deleted segments' files are renamed `.deleted`
//!   (`LocalLog.deleteSegmentFiles`) and removed `file.delete.delay.ms` later, and a crash
//!   in between leaves them for `LogLoader.removeTempFilesAndCollectSwapFiles` to remove;
//! * the load takes `max(log start entry, first base)` (`LogLoader.load`) and
//!   `ProducerStateManager.truncateAndReload` deletes the producer snapshots at or below it;
//! * `LogManager.asyncDelete` renames a deleted partition `<topic>-<partition>.<uuid>-delete`,
//!   cutting the topic so that the name stays within 255 characters
//!   (`LocalLog.logDirNameWithSuffixCappedLength`), and rewrites the log dir's checkpoints
//!   without it; `LogManager.loadLog` loads such a directory into `logsToBeDeleted`, never
//!   into `currentLogs`, so it meets no live copy; a name `LocalLog.parseTopicPartitionName`
//!   refuses throws a `KafkaException` that `loadLogs` rethrows: the broker does not start;
//! * `LogManager.loadLog` reads only the checkpoint entries of the directories it loads, and
//!   throws (`IllegalStateException`, rethrown by `loadLogs`) when one broker's log dirs
//!   hold one partition twice.
//!
//! Where klogscan disagrees with Kafka the test asserts Kafka's answer and is `#[ignore =
//! "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::kafka_ckaudit_cases::Dir;
use std::path::Path;

mod creation;
mod deletion;
mod retention;

// ----- helpers ----------------------------------------------------------------------------

/// A `-delete`/`-stray` directory's unique id (`LocalLog.logDirNameWithSuffixCappedLength`:
/// a UUID without its dashes).
const UUID: &str = "0123456789abcdef0123456789abcdef";

/// The names of the files in `dir`, sorted.
pub(crate) fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// The base offset a segment-family file is named by (`None` for the other files).
pub(crate) fn base_of(name: &str) -> Option<i64> {
    name.split('.').next().unwrap().parse().ok()
}

/// Apply `f` to every segment-family file of `d`'s directory `pdir` whose base is below
/// `below`.
fn each_below(d: &Dir, pdir: &str, below: i64, f: impl Fn(&Path)) {
    let dir = d.root.join(pdir);
    for name in files(&dir) {
        if base_of(&name).is_some_and(|b| b < below) {
            f(&dir.join(name));
        }
    }
}

/// What retention leaves once `file.delete.delay.ms` is over: the files of the segments
/// below `below` removed.
fn retained_from(d: &Dir, pdir: &str, below: i64) {
    each_below(d, pdir, below, |p| std::fs::remove_file(p).unwrap());
}

/// What retention leaves inside `file.delete.delay.ms`: the files of the segments below
/// `below` renamed `<name>.deleted` (`LocalLog.deleteSegmentFiles`).
fn renamed_deleted_below(d: &Dir, pdir: &str, below: i64) {
    each_below(d, pdir, below, |p| {
        std::fs::rename(p, format!("{}.deleted", p.display())).unwrap()
    });
}

/// Rename `d`'s directory `from` to `to` (the broker's rename of a partition directory).
fn rename_dir(d: &Dir, from: &str, to: &str) {
    std::fs::rename(d.root.join(from), d.root.join(to)).unwrap();
}
