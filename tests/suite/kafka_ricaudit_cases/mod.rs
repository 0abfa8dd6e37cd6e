//! Kafka test audit: what tiered storage leaves in a broker's log dir besides partitions, and
//! transactions over tiered storage, the test methods no klogscan test cited before (apache/
//! kafka trunk of 2024-10: core/src/test/scala/unit/kafka/log/remote/RemoteIndexCacheTest.scala,
//! later trunks' storage/src/test/java/org/apache/kafka/storage/internals/log/
//! RemoteIndexCacheTest.java; storage/src/test/java/org/apache/kafka/tiered/storage/
//! integration/TransactionsWithTieredStoreTest.java, which runs core/src/test/scala/
//! integration/kafka/api/TransactionsTest.scala with remote storage and one batch a segment).
//!
//! `RemoteIndexCacheTest` drives the cache a broker with remote storage keeps in its first log
//! dir (`RemoteIndexCache.DIR_NAME`, `remote-log-index-cache`): `<start>_<segment uuid>` with
//! `.index`, `.timeindex` and `.txnindex`, each fetched from the remote segment's object
//! through a `.tmp` file, renamed `.deleted` when the entry is evicted, then removed. Each case
//! here writes that directory beside a tiered partition (testkit `TieredLog`, in
//! `LocalTieredStorage`'s layout; the cache's files are the remote objects' bytes), runs `scan`,
//! `scan --remote-storage`, `verify` and `verify --remote-storage`
//! (`kafka_quiet_tiered_cases::check`), and asserts what a broker's start makes of it: the
//! directory is not a partition (`LogManager.loadLogs` skips it by name), so nothing of it is
//! scanned as a log; `verify` reads it as `RemoteIndexCache.init` does (an entry whose index
//! fails its sanity check stops the start: `remote_index_cache_corrupt`); each with a near
//! miss that flips it (the same files where the log loader reads them, an entry `init`
//! deletes or never opens).
//!
//! `TransactionsWithTieredStoreTest` rolls a segment after every batch and waits until the
//! leader copied every segment below the last stable offset and local retention removed it
//! (`maybeWaitForAtLeastOneSegmentUpload`, `maybeVerifyLocalLogStartOffsets`). Each case writes
//! that: one batch a segment, the copies with the `.txnindex` object of each segment holding
//! an ABORT marker (`RemoteLogManager.copyLogSegment` uploads the local transaction index when
//! it exists), the local log from the first segment not copied; and asserts what a
//! read_committed consumer is served — the aborted transactions `RemoteLogManager.
//! collectAbortedTransactions` collects from the remote indexes, then the local ones — against
//! klogscan's replay of the remote segments and the local log.
//!
//! A test marked `#[ignore = "divergence: …"]` asserts Kafka's answer where klogscan gives
//! another, and fails when run with `--ignored` (see `docs/testing.md`).
#![cfg(feature = "testkit")]

use crate::kafka_quiet_tiered_cases::Checked;
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::remote_log::segment_uuid;
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};
use std::path::{Path, PathBuf};

pub(crate) mod cache;
mod txns;

// ----- helpers ----------------------------------------------------------------------------

/// `orders-0`'s directory in the remote storage under `d` (`LocalTieredStorage`'s layout).
pub(crate) fn remote_dir(d: &Path) -> PathBuf {
    d.join("remote/kafka-tiered-storage")
        .join(format!("orders-0-{}", uuid_text(&topic_id_for("orders"))))
}

/// The name of remote segment `n`'s (1-based, creation order) object `ext` from `start`.
pub(crate) fn object(d: &Path, start: i64, n: u32, ext: &str) -> PathBuf {
    remote_dir(d).join(format!("{start:020}-{}.{ext}", uuid_text(&segment_uuid(n))))
}

/// How many copied segments' `.txnindex` the remote storage holds, each checked to be the
/// local segment's as `RemoteLogManager.copyLogSegment` uploads it when the segment has one
/// (`LogSegmentData.transactionIndex`; `LocalTieredStorage` writes it beside the `.log`;
/// the testkit's `TieredLog` does the same): `history` is written again on its own to read
/// them, and local segment `i` of `copied` is remote segment `i + 1`.
pub(crate) fn uploaded_txn_indexes(d: &Path, history: PartitionBuilder, copied: usize) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(9)
        .partition(history)
        .write(tmp.path())
        .unwrap();
    let local = &m.partitions[0].dir;
    let mut n = 0;
    let bases = m.partitions[0].segments.iter().map(|(b, _)| b);
    for (i, base) in bases.enumerate().take(copied) {
        let f = local.join(format!("{base:020}.txnindex"));
        if f.exists() {
            let uploaded = std::fs::read(object(d, *base, i as u32 + 1, "txnindex")).unwrap();
            assert_eq!(uploaded, std::fs::read(&f).unwrap(), "segment {base}");
            n += 1;
        }
    }
    n
}

/// The broker's `remote-log-index-cache` in log dir `log_dir`, holding an entry for each
/// remote segment `(start, n)` of `entries`, as `RemoteIndexCache.createCacheEntry` leaves
/// it: `<start>_<uuid>.index`, `.timeindex`, `.txnindex` (Kafka's `Uuid.toString`), the
/// bytes of the remote objects; an empty `.txnindex` where the segment has no transaction
/// index object (`RemoteResourceNotFoundException` is answered with an empty stream).
pub(crate) fn index_cache(d: &Path, log_dir: &Path, entries: &[(i64, u32)]) -> PathBuf {
    let cache = log_dir.join("remote-log-index-cache");
    std::fs::create_dir_all(&cache).unwrap();
    for &(start, n) in entries {
        for ext in ["index", "timeindex", "txnindex"] {
            let from = object(d, start, n, ext);
            let to = cache.join(cache_name(start, n, ext));
            if from.exists() {
                std::fs::copy(from, to).unwrap();
            } else {
                std::fs::write(to, b"").unwrap();
            }
        }
    }
    cache
}

/// `RemoteIndexCache.remoteOffsetIndexFileName` (and its time and transaction twins):
/// `<start>_<uuid>.<ext>`, the start not zero-padded.
pub(crate) fn cache_name(start: i64, n: u32, ext: &str) -> String {
    format!("{start}_{}.{ext}", uuid_text(&segment_uuid(n)))
}

/// Every finding of the four runs, as lines, each labelled by its run, sorted; the
/// temporary directory's path written `<dir>`.
pub(crate) fn all_lines(c: &Checked) -> Vec<String> {
    let root = c._dir.path().to_string_lossy().into_owned();
    let mut v: Vec<String> = (c.all().into_iter())
        .map(|(run, f)| format!("[{run}] {}", crate::common::quiet::lines([f])[0]))
        .map(|l| l.replace(&root, "<dir>"))
        .collect();
    v.sort();
    v
}

/// `(topic, partition, broker)` of every partition `scan` found.
pub(crate) fn partitions(c: &Checked) -> Vec<(String, i32, Option<i32>)> {
    let mut v: Vec<(String, i32, Option<i32>)> = (c.scan.partitions.iter())
        .map(|p| (p.topic.clone(), p.partition, p.source.broker_id))
        .collect();
    v.sort();
    v
}

/// `verify`'s (and `verify --remote-storage`'s: they must agree) prediction of broker
/// `broker`'s `orders-0`.
pub(crate) fn prediction(c: &Checked, broker: i32) -> &klogscan::verify::RecoveryPrediction {
    let of = |r: &klogscan::verify::VerifyReport| {
        (r.partitions.iter())
            .find(|p| p.topic == "orders" && p.source.broker_id == Some(broker))
            .map(|p| p.prediction.clone())
            .unwrap()
    };
    assert_eq!(of(&c.verify), of(&c.verify_remote));
    (c.verify.partitions.iter())
        .find(|p| p.topic == "orders" && p.source.broker_id == Some(broker))
        .map(|p| &*p.prediction)
        .unwrap()
}
