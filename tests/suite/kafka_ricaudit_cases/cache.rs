//! The `remote-log-index-cache` directory (`RemoteIndexCache`) in a tiered broker's log dir.

use super::{all_lines, cache_name, index_cache, partitions, prediction};
use crate::kafka_quiet_tiered_cases::{Checked, check, history};
use klogscan::finding::Kind;
use klogscan::testkit::remote_log::TieredLog;
use std::path::Path;

/// `orders-0` of the quiet tiered history: [0,19], [20,39] and [40,59] copied (remote segments
/// 1, 2, 3), the local log from 60, the log start 0.
pub(crate) fn tiered() -> TieredLog {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.copy(2);
    t.local_from(3);
    t.log_start(0);
    t
}

/// The cache's entries of the three copies: `(start, remote segment)`.
pub(crate) const ENTRIES: [(i64, u32); 3] = [(0, 1), (20, 2), (40, 3)];

fn log_dir(d: &Path) -> std::path::PathBuf {
    d.join("broker-0")
}

/// Move `names` from the cache into `orders-0/`.
fn move_into_partition(d: &Path, names: &[String]) {
    let cache = log_dir(d).join("remote-log-index-cache");
    for n in names {
        std::fs::rename(cache.join(n), log_dir(d).join("orders-0").join(n)).unwrap();
    }
}

/// `RemoteIndexCacheTest.testIndexFileNameAndLocationOnDisk` (an entry's three files are
/// `<start>_<uuid>.index`, `.timeindex`, `.txnindex` under `remote-log-index-cache`),
/// `testFetchIndexFromRemoteStorage` (fetched once, then served from those files),
/// `testFetchIndexForMissingTransactionIndex` (no transaction index object: an empty
/// `.txnindex` is created), `testReloadCacheAfterClose` (the files stay when the cache closes
/// and are loaded again by `RemoteIndexCache.init` at the next start), `testCacheEntryExpiry`
/// (evicted entries are re-fetched: the files of the entries in the cache at the stop).
///
/// On disk: broker 0's log dir holds, beside `orders-0` and `__remote_log_metadata-0`, the
/// cache of the three copies (nine files: the remote objects' offset and time indexes, empty
/// transaction indexes). `LogManager.loadLogs` skips the directory by name: the four runs find
/// the same two partitions and say exactly what they say without the cache (quiet); `verify`
/// predicts no load failure and no leftover. Near miss: the entry of [20,39] in `orders-0/`
/// itself, where `LogLoader.loadSegmentFiles` reads every `.index` name as an offset
/// (`LogFileUtils.offsetFromFileName`): `20_<uuid>` is not a number, `NumberFormatException`,
/// and the broker does not start (`unparseable_file_name`).
#[test]
fn an_index_cache_beside_a_tiered_partition_is_not_scanned() {
    let bare = check(vec![tiered()], |_| {});
    let c = check(vec![tiered()], |d| {
        let cache = index_cache(d, &log_dir(d), &ENTRIES);
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 9);
        let txn = cache.join(cache_name(20, 2, "txnindex"));
        assert_eq!(std::fs::metadata(txn).unwrap().len(), 0);
        let idx = cache.join(cache_name(20, 2, "timeindex"));
        assert_eq!(std::fs::metadata(idx).unwrap().len(), 12);
    });
    assert_eq!(
        partitions(&c),
        vec![
            ("__remote_log_metadata".to_string(), 0, Some(0)),
            ("orders".to_string(), 0, Some(0)),
        ]
    );
    assert_eq!(partitions(&c), partitions(&bare));
    assert_eq!(all_lines(&c), all_lines(&bare));
    c.assert_quiet();
    let p = prediction(&c, 0);
    assert_eq!((&p.load_failure, &p.leftovers), (&None, &vec![]));
    assert_eq!(
        c.verify.broker_startup.len(),
        0,
        "{:?}",
        c.verify.broker_startup
    );

    // near miss: one entry's files where the log loader reads them
    let names: Vec<String> = (["index", "timeindex", "txnindex"].iter())
        .map(|e| cache_name(20, 2, e))
        .collect();
    let c = check(vec![tiered()], |d| {
        index_cache(d, &log_dir(d), &ENTRIES);
        move_into_partition(d, &names);
    });
    let p = prediction(&c, 0);
    let f = p.load_failure.as_ref().expect("a load failure");
    assert_eq!(
        (f.kind.as_str(), f.exception.as_str()),
        ("unparseable_file_name", "NumberFormatException")
    );
    assert!(f.message.contains(&names[0]), "{}", f.message);
    assert_eq!(p.load_stops_at.as_deref(), Some("segment_files"));
}

/// `RemoteIndexCacheTest.testCacheEntryIsDeletedOnRemoval`, `testRemoveItem`,
/// `testRemoveMultipleItems`, `testClearCacheAndIndexFilesWhenResizeCache`,
/// `testCorrectnessForCacheAndIndexFilesWhenResizeCache`, `testConcurrentCacheDeletedFileExists`
/// (an evicted entry's files are renamed `<name>.deleted` by `Entry.markForCleanup`, then
/// removed by the cleaner thread; a stop between the two leaves them),
/// `testIndexFileAlreadyExistOnDiskButNotInCache` and `testConcurrentRemoveReadForCache` (a
/// fetch writes `<name>.tmp`, then renames it: a stop between the two leaves it).
///
/// On disk: the cache holds the live entry of [0,19], the entry of [20,39] renamed
/// `.deleted` (three files) and `40_<uuid>.index.tmp`. Nothing of it is a partition's
/// leftover: the four runs say what they say without the cache, `verify` predicts no
/// leftover. Near miss: the three `.deleted` files in `orders-0/`, where
/// `LogLoader.removeTempFilesAndCollectSwapFiles` deletes every file ending `.deleted` before
/// it reads a name as an offset: three `deleted` leftovers, and no load failure.
#[test]
fn the_cache_cleaners_deleted_and_tmp_files_are_not_partition_leftovers() {
    let deleted: Vec<String> = (["index", "timeindex", "txnindex"].iter())
        .map(|e| format!("{}.deleted", cache_name(20, 2, e)))
        .collect();
    let leave = |d: &Path| {
        let cache = index_cache(d, &log_dir(d), &ENTRIES);
        for e in ["index", "timeindex", "txnindex"] {
            let n = cache_name(20, 2, e);
            std::fs::rename(cache.join(&n), cache.join(format!("{n}.deleted"))).unwrap();
        }
        for e in ["timeindex", "txnindex"] {
            std::fs::remove_file(cache.join(cache_name(40, 3, e))).unwrap();
        }
        let n = cache_name(40, 3, "index");
        std::fs::rename(cache.join(&n), cache.join(format!("{n}.tmp"))).unwrap();
    };
    let bare = check(vec![tiered()], |_| {});
    let c = check(vec![tiered()], leave);
    assert_eq!(partitions(&c), partitions(&bare));
    assert_eq!(all_lines(&c), all_lines(&bare));
    c.assert_quiet();
    let p = prediction(&c, 0);
    assert_eq!((&p.load_failure, &p.leftovers), (&None, &vec![]));

    // near miss: the renamed files in the partition directory
    let c = check(vec![tiered()], |d| {
        leave(d);
        move_into_partition(d, &deleted);
    });
    let p = prediction(&c, 0);
    assert_eq!(p.load_failure, None);
    let mut got: Vec<(&str, &str)> = (p.leftovers.iter())
        .map(|l| (l.file.as_str(), l.kind.as_str()))
        .collect();
    got.sort();
    let mut want: Vec<(&str, &str)> = deleted.iter().map(|n| (n.as_str(), "deleted")).collect();
    want.sort();
    assert_eq!(got, want);
}

/// `LogManager.loadLogs` skips `remote-log-index-cache` by name: it is part of the log dir,
/// not a partition and not foreign. `klogscan scan /var/lib/kafka/*` gives it as an input of
/// its own beside the partitions and the log dir's files; it was taken for an input that is
/// not Kafka data (an input error, exit 2) though the log dir given whole is scanned without
/// one.
///
/// On disk: the tiered broker 0 with the cache of `an_index_cache_beside_a_tiered_partition_is_not_scanned`. Every child
/// of its log dir given on its own (the glob): no input error, the same two partitions in one
/// log dir, the same findings as the log dir given whole. Near misses: the cache given alone
/// in a copy that is no log dir (no `meta.properties` or checkpoint beside it) is still an
/// input error, which now says what it is; and one of its files given alone says the same of
/// the file.
#[test]
fn the_index_cache_named_by_a_glob_of_its_log_dir_is_part_of_it() {
    use klogscan::discover::layout::discover;
    use klogscan::request::{self, Request};
    use klogscan::results::ScanOptions;
    let dir = tempfile::tempdir().unwrap();
    let m = tiered().write(dir.path()).unwrap();
    let cache = index_cache(dir.path(), &m.log_dir, &ENTRIES);
    let mut glob: Vec<std::path::PathBuf> = (std::fs::read_dir(&m.log_dir).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    glob.sort();
    assert!(glob.contains(&cache));
    let inv = discover(&glob);
    assert_eq!(inv.input_errors, vec![]);
    assert_eq!((inv.partitions.len(), inv.log_dirs.len()), (2, 1));
    let whole = discover(std::slice::from_ref(&m.log_dir));
    assert_eq!(inv.log_dirs[0].path, whole.log_dirs[0].path);
    let opts = ScanOptions::default().with_now_ms(crate::kafka_quiet_tiered_cases::now_ms());
    let run = |inputs: Vec<std::path::PathBuf>| {
        let r = request::run(&Request::new(inputs).with_options(opts.clone()))
            .unwrap()
            .report;
        assert_eq!(r.errors, vec![]);
        crate::common::quiet::lines(&r.findings)
    };
    assert_eq!(run(glob), run(vec![m.log_dir.clone()]));

    // near misses: the cache outside a log dir, and one of its files, given alone
    let copy = dir.path().join("copy/remote-log-index-cache");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::rename(&cache, &copy).unwrap();
    let inv = discover(std::slice::from_ref(&copy));
    assert_eq!(inv.input_errors.len(), 1, "{:?}", inv.input_errors);
    assert!(
        inv.input_errors[0]
            .1
            .starts_with("not a partition: a broker's remote index cache"),
        "{:?}",
        inv.input_errors
    );
    let file = copy.join(cache_name(20, 2, "index"));
    let inv = discover(std::slice::from_ref(&file));
    assert_eq!(inv.input_errors.len(), 1, "{:?}", inv.input_errors);
    assert!(
        (inv.input_errors[0].1)
            .starts_with("not a partition file: a file of a broker's remote index cache"),
        "{:?}",
        inv.input_errors
    );
}

/// A transaction index of one aborted transaction `(7, 0, 10, 11)`, whose last offset 10
/// lies below the start 20 of the entry [20,39] it is given to (`TransactionIndex.sanityCheck`
/// refuses it).
fn ends_below_its_segment() -> Vec<u8> {
    use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
    encode_txn_index(&[AbortedTxn {
        producer_id: 7,
        first_offset: 0,
        last_offset: 10,
        last_stable_offset: 11,
    }])
}

/// `RemoteIndexCacheTest.testRSMReturnCorruptedIndexFile(TRANSACTION)`: the remote storage
/// hands back a transaction index whose entry ends below the segment's start;
/// `RemoteIndexCache.loadIndexFile` has already moved the fetched file into the cache when
/// `TransactionIndex.sanityCheck` throws `CorruptIndexException`, so the entry's three files
/// stay (`testCorruptCacheIndexFileExistsButNotInCache`: a running cache re-fetches such a
/// file). At the next start `RemoteIndexCache.init` loads every entry whose three files
/// exist and runs the same sanity checks uncaught: the `RemoteLogManager` constructor throws
/// from `BrokerServer.startup`, and the broker does not start while remote storage is enabled.
///
/// On disk: the cache of `an_index_cache_beside_a_tiered_partition_is_not_scanned` whose `20_<uuid>.txnindex` holds one aborted transaction
/// `(7, 0, 10, 11)` (last offset 10 < start 20). `verify` (both runs) reads the cache as
/// `init` does: a `broker_startup` entry for broker 0 that does not say it starts
/// (`starts` null: it assumes remote storage is still enabled and the log dir still the
/// first of `log.dirs`), `CorruptIndexException` from `RemoteIndexCache.init`, and one
/// `remote_index_cache_corrupt` finding at log-dir level carrying Kafka's message; the scans
/// say what they say without the cache. (The near miss, a sound cache, is that case's: no
/// entry.)
///
/// It was a divergence: klogscan never read the cache and predicted a start.
#[test]
fn a_corrupt_index_left_in_the_cache_stops_the_next_start() {
    let bad = ends_below_its_segment();
    let bare = check(vec![tiered()], |_| {});
    let c = check(vec![tiered()], |d| {
        let cache = index_cache(d, &log_dir(d), &ENTRIES);
        std::fs::write(cache.join(cache_name(20, 2, "txnindex")), &bad).unwrap();
    });
    let s = refused(&c, "CorruptIndexException");
    assert_eq!(s.thrown_by, "RemoteIndexCache.init");
    assert!(s.assumes.is_some());
    assert!(
        s.message
            .contains("is less than start offset 20: broker 0's next start"),
        "{}",
        s.message
    );
    assert_eq!(partitions(&c), partitions(&bare));
    for (run, r) in [("scan", &c.scan), ("scan --remote-storage", &c.remote)] {
        let bare_r = if run == "scan" {
            &bare.scan
        } else {
            &bare.remote
        };
        assert_eq!(
            crate::common::quiet::lines(&r.findings),
            crate::common::quiet::lines(&bare_r.findings),
            "{run}"
        );
    }
}

/// The startup entry `verify` and `verify --remote-storage` both give for broker 0 (the
/// same), with `exception`, and their one `remote_index_cache_corrupt` finding.
fn refused<'a>(c: &'a Checked, exception: &str) -> &'a klogscan::verify::BrokerStartup {
    for r in [&c.verify, &c.verify_remote] {
        let s: Vec<_> = (r.broker_startup.iter())
            .filter(|s| s.broker == Some(0))
            .collect();
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].starts, None);
        assert_eq!(s[0].exception, exception);
        assert_eq!(s[0].reason, "remote_index_cache_corrupt");
        let f: Vec<_> = (r.log_dir_findings.iter())
            .filter(|f| f.kind == Kind::RemoteIndexCacheCorrupt)
            .collect();
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].message, s[0].message);
        assert_eq!(f[0].source.broker_id, Some(0));
    }
    assert_eq!(c.verify.broker_startup, c.verify_remote.broker_startup);
    &c.verify.broker_startup[0]
}

/// `RemoteIndexCacheTest.testRSMReturnCorruptedIndexFile(OFFSET)` and `(TIMESTAMP)`: the
/// offset and time indexes' `sanityCheck`s, which `RemoteIndexCache.init` runs on every
/// complete entry with the start offset of its name as base offset. On disk: the cache of
/// three entries with `20_<uuid>.index` four bytes longer (not a multiple of 8), then with
/// one entry of relative offset -1 (offset 19, below the start 20), then
/// `20_<uuid>.timeindex` with a last timestamp below its first: each stops the start
/// (`CorruptIndexException`, Kafka's message). Near miss: the sound cache of
/// `an_index_cache_beside_a_tiered_partition_is_not_scanned` (no entry).
#[test]
fn a_corrupt_offset_or_time_index_in_the_cache_stops_the_next_start() {
    // The cache with entry [20,39]'s file `ext` made `edit(its bytes)`.
    let with = |ext: &'static str, edit: fn(Vec<u8>) -> Vec<u8>| {
        check(vec![tiered()], move |d| {
            let cache = index_cache(d, &log_dir(d), &ENTRIES);
            let f = cache.join(cache_name(20, 2, ext));
            let bytes = edit(std::fs::read(&f).unwrap());
            std::fs::write(f, bytes).unwrap();
        })
    };
    // (the file, how its bytes are changed, Kafka's words)
    type Edit = fn(Vec<u8>) -> Vec<u8>;
    let cases: [(&str, Edit, &str); 3] = [
        (
            "index",
            |b| [b, vec![0; 4]].concat(),
            "which is neither positive nor a multiple of 8",
        ),
        (
            "index",
            |_| [(-1i32).to_be_bytes(), 0i32.to_be_bytes()].concat(),
            "the last offset is 19 which is less than the base offset 20",
        ),
        (
            "timeindex",
            |_| {
                let entry =
                    |ts: i64, rel: i32| [&ts.to_be_bytes()[..], &rel.to_be_bytes()[..]].concat();
                [entry(100, 1), entry(50, 2)].concat()
            },
            "the last timestamp is 50 which is less than the first timestamp 100",
        ),
    ];
    for (ext, edit, words) in cases {
        let c = with(ext, edit);
        let s = refused(&c, "CorruptIndexException");
        assert!(s.message.contains(words), "{}", s.message);
    }
}

/// What `RemoteIndexCache.init` never reads: an entry missing one of its three files (it
/// deletes the other two), and the cleaner's `.deleted` and a fetch's `.tmp` files (deleted
/// first since 4.1; before it, listed but never opened: only `<prefix>.index`,
/// `.timeindex` and `.txnindex` are). On disk: the cache with the corrupt `.txnindex` of the
/// first case but no `20_<uuid>.timeindex`; then the entry of [20,39] renamed `.deleted`
/// with that corrupt `.txnindex` and an offset index of odd length, beside
/// `40_<uuid>.index.tmp` of odd length next to the sound entry of [40,59]. Neither stops the
/// start: no `broker_startup` entry, no finding, the same lines as without the cache. Near
/// miss: the first case (the entry complete), which does.
#[test]
fn entries_init_deletes_or_never_opens_do_not_stop_the_start() {
    let bad = ends_below_its_segment();
    let bare = check(vec![tiered()], |_| {});
    let quiet = |c: &Checked| {
        assert_eq!(all_lines(c), all_lines(&bare));
        for r in [&c.verify, &c.verify_remote] {
            assert_eq!(r.broker_startup.len(), 0, "{:?}", r.broker_startup);
        }
    };
    let c = check(vec![tiered()], |d| {
        let cache = index_cache(d, &log_dir(d), &ENTRIES);
        std::fs::write(cache.join(cache_name(20, 2, "txnindex")), &bad).unwrap();
        std::fs::remove_file(cache.join(cache_name(20, 2, "timeindex"))).unwrap();
    });
    quiet(&c);
    let c = check(vec![tiered()], |d| {
        let cache = index_cache(d, &log_dir(d), &ENTRIES);
        std::fs::write(cache.join(cache_name(20, 2, "txnindex")), &bad).unwrap();
        std::fs::write(cache.join(cache_name(20, 2, "index")), [0; 12]).unwrap();
        for e in ["index", "timeindex", "txnindex"] {
            let n = cache_name(20, 2, e);
            std::fs::rename(cache.join(&n), cache.join(format!("{n}.deleted"))).unwrap();
        }
        let tmp = format!("{}.tmp", cache_name(40, 3, "index"));
        std::fs::write(cache.join(tmp), [0; 12]).unwrap();
    });
    quiet(&c);
}

/// `dump` of the cache's files. kafka-dump-log takes a file's base offset from the text
/// before its first `.` (`DumpLogSegments.dumpIndex`, `dumpTimeIndex`; `dumpTxnIndex`
/// through `UnifiedLog.offsetFromFile`) and dies with `NumberFormatException` on
/// `20_<uuid>.timeindex`. klogscan prints no entry of such an offset or time index (their
/// entries are relative to a base it cannot know from the name) and says why; the dump
/// exits 1 (it exited 0, nothing dumped). A `.txnindex` entry carries absolute offsets, so
/// klogscan dumps the cache's with its entries (base 0 for the sanity context), exit 0.
/// Near miss: the same time index bytes under the segment's own name are dumped (one entry
/// at offset 39, the last of [20,39]; no `.log` beside it to verify against), exit 0.
#[test]
fn dump_of_the_caches_indexes_needs_a_base_offset_from_the_name() {
    use crate::common::run::klogscan;
    use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
    let dir = tempfile::tempdir().unwrap();
    let m = tiered().write(dir.path()).unwrap();
    let cache = index_cache(dir.path(), &m.log_dir, &ENTRIES);
    let time = cache.join(cache_name(20, 2, "timeindex"));
    let r = klogscan(&["dump".as_ref(), time.as_os_str()], None, 60);
    assert_eq!(r.status.code(), Some(1), "{}{}", r.out, r.err);
    assert_eq!(r.out.lines().count(), 1, "{}", r.out);
    assert!(
        r.err
            .starts_with("Cannot parse a base offset from the file name"),
        "{}",
        r.err
    );
    let txn = cache.join(cache_name(20, 2, "txnindex"));
    let entry = AbortedTxn {
        producer_id: 7,
        first_offset: 21,
        last_offset: 24,
        last_stable_offset: 25,
    };
    std::fs::write(&txn, encode_txn_index(&[entry])).unwrap();
    let r = klogscan(&["dump".as_ref(), txn.as_os_str()], None, 60);
    assert_eq!(r.status.code(), Some(0), "{}{}", r.out, r.err);
    assert!(
        r.out
            .contains("producerId: 7 firstOffset: 21 lastOffset: 24 lastStableOffset: 25"),
        "{}",
        r.out
    );

    // near miss: the segment's own name
    let named = dir.path().join("00000000000000000020.timeindex");
    std::fs::copy(&time, &named).unwrap();
    let r = klogscan(&["dump".as_ref(), named.as_os_str()], None, 60);
    assert_eq!(r.status.code(), Some(0), "{}{}", r.out, r.err);
    let entries: Vec<&str> = r
        .out
        .lines()
        .filter(|l| l.starts_with("timestamp:"))
        .collect();
    assert_eq!(entries.len(), 1, "{}", r.out);
    assert!(entries[0].ends_with("offset: 39"), "{}", r.out);
}
