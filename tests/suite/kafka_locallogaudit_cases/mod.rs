//! What `LocalLog` — the local log's segment list, its rolls, truncations and deletions —
//! and the lazy indexes of its segments leave in a partition directory, for the Kafka tests
//! no earlier klogscan test cited (apache/kafka trunk of 2024-10): `LocalLogTest`
//! (core/src/test/scala/unit/kafka/log/; storage/…/internals/log/ on newer trunk) and
//! `LazyIndexTest` (storage/…/internals/log/, newer trunk). `LogSegmentsTest` and
//! `LogOffsetMetadataTest` hold only the in-memory segment map and offset metadata: nothing
//! on disk of their own (docs/testing.md's table says which case covers what they touch).
//!
//! Each test writes the directory the Kafka test's log leaves — or would leave had the
//! broker died inside `file.delete.delay.ms`, or between two steps of the method — runs
//! `verify` and `scan` through the library and asserts what the next start's `LogLoader`
//! does, with a near miss that flips the answer. What the tests hold klogscan to:
//! * `LocalLog.deleteSegmentFiles` renames a segment's files `.deleted` (`LogSegment.
//!   changeFileSuffixes`) and removes them now or after `file.delete.delay.ms`;
//!   `LogLoader.removeTempFilesAndCollectSwapFiles` removes every `.deleted` file at the next
//!   start, whatever its base;
//! * a segment's offset and time indexes are `LazyIndex`es: `LogSegment.open` creates the
//!   `.log` only, and the index files appear on the first read or write through them (an
//!   append, a flush, the roll's `onBecomeInactiveSegment`). A segment rolled and never
//!   touched has no index file, and renaming it `.deleted` renames its `.log` alone
//!   (`LazyIndex.renameTo` tolerates the missing file). At load, `loadSegmentFiles` recovers
//!   a segment without its offset index (`LogSegment.sanityCheck`'s `NoSuchFileException`),
//!   whatever the shutdown;
//! * `LocalLog.roll` of an empty active segment at its own base (KAFKA-6388) and
//!   `truncateFullyAndStartAt` go through `createAndDeleteSegment`: the old segment is
//!   renamed first when the new one has its base, else the new one is opened first;
//!   `truncateTo` renames the segments above the target, then cuts the active one;
//! * the load's log end is the last segment's `readNextOffset` (its base when it holds no
//!   batch), its log start `max(log start entry, first base)`, and a directory left with no
//!   segment gets one at the log start entry (`LogLoader.recoverLog`).
//!
//! Where klogscan disagrees with Kafka the test asserts Kafka's answer and is `#[ignore =
//! "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::kafka_ckaudit_cases::{Dir, recovered};
use klogscan::verify::PartitionVerification;

mod deletion;
mod names;
mod rolls;
mod truncation;

// ----- helpers ----------------------------------------------------------------------------

/// `LocalLogTest`'s partition.
const TOPIC: &str = "test_topic";
const PDIR: &str = "test_topic-1";

/// The name of the segment file of `base` with extension `ext`.
fn seg(base: i64, ext: &str) -> String {
    format!("{base:020}.{ext}")
}

// The names of a directory's files, sorted, and the base offset a segment-family file is
// named by: the `LogManager` audit's.
use crate::kafka_lmaudit_cases::{base_of, files as names};

/// Rename the `.log`, `.index` and `.timeindex` files of `d`'s partition whose base is in
/// `bases` to `<name>.deleted` (`LocalLog.deleteSegmentFiles`; the producer snapshots are
/// not segment files); returns the new names.
fn rename_deleted(d: &Dir, bases: impl Fn(i64) -> bool) -> Vec<String> {
    let dir = d.root.join(PDIR);
    let mut out = Vec::new();
    for n in names(&dir) {
        let segment_file = [".log", ".index", ".timeindex"]
            .iter()
            .any(|e| n.ends_with(e));
        if segment_file && base_of(&n).is_some_and(&bases) {
            let to = format!("{n}.deleted");
            std::fs::rename(dir.join(&n), dir.join(&to)).unwrap();
            out.push(to);
        }
    }
    out
}

/// Remove the partition's producer snapshots (`ProducerStateManager.truncateFullyAndStartAt`
/// deletes them at once).
fn remove_snapshots(d: &Dir) {
    let dir = d.root.join(PDIR);
    for n in names(&dir) {
        if n.ends_with(".snapshot") {
            std::fs::remove_file(dir.join(n)).unwrap();
        }
    }
}

/// The files `verify` predicts the load deletes as `.deleted` leftovers, sorted.
fn deleted_leftovers(p: &PartitionVerification) -> Vec<String> {
    let mut v: Vec<String> = (p.prediction.leftovers.iter())
        .filter(|l| l.kind == "deleted")
        .map(|l| l.file.clone())
        .collect();
    v.sort();
    v
}

/// The segments recovered, each once, sorted (a segment missing its offset index is
/// recovered at `loadSegmentFiles` and again by `recoverLog`).
fn recovered_set(p: &PartitionVerification) -> Vec<i64> {
    let mut v = recovered(p);
    v.sort();
    v.dedup();
    v
}

/// `(log start, log end)` after the predicted load.
fn ends(p: &PartitionVerification) -> (Option<i64>, Option<i64>) {
    (
        p.prediction.log_start_offset_after,
        p.prediction.log_end_offset_after,
    )
}
