//! The names of the cache `RemoteIndexCache.init` cannot parse, and those it deletes first.

use crate::kafka_ricaudit_cases::cache::{ENTRIES, tiered};
use crate::kafka_ricaudit_cases::{cache_name, index_cache};
use klogscan::finding::Kind;
use klogscan::request::{self, Request};
use klogscan::results::ScanOptions;
use klogscan::verify::BrokerVersion;
use std::path::Path;

/// What `verify` (with `version`) says of broker 0's start over the cache of the three
/// copies changed by `edit(cache)`: each `remote_index_cache_corrupt` startup entry's
/// `(exception, message)` and its finding's `evidence.exceptions` (empty when the start is
/// not refused for the cache).
fn refused(
    version: Option<BrokerVersion>,
    edit: &dyn Fn(&Path),
) -> Vec<(String, String, Vec<String>)> {
    let dir = tempfile::tempdir().unwrap();
    let m = tiered().write(dir.path()).unwrap();
    let cache = index_cache(dir.path(), &m.log_dir, &ENTRIES);
    edit(&cache);
    let opts = ScanOptions::default().with_now_ms(crate::kafka_quiet_tiered_cases::now_ms());
    let req = Request::new([dir.path()]).with_options(opts);
    let r = request::verify(&req, version).unwrap().report;
    assert_eq!(r.errors, vec![]);
    let f: Vec<_> = (r.log_dir_findings.iter())
        .filter(|f| f.kind == Kind::RemoteIndexCacheCorrupt)
        .collect();
    let s: Vec<_> = (r.broker_startup.iter())
        .filter(|s| s.reason == "remote_index_cache_corrupt")
        .collect();
    assert_eq!(f.len(), s.len());
    (s.iter().zip(f))
        .map(|(s, f)| {
            assert_eq!((s.broker, s.starts), (Some(0), None));
            assert_eq!(s.thrown_by, "RemoteIndexCache.init");
            assert_eq!(f.message, s.message);
            let ex = (f.evidence["exceptions"].as_array().unwrap().iter())
                .map(|e| e.as_str().unwrap().to_string())
                .collect();
            (s.exception.to_string(), s.message.clone(), ex)
        })
        .collect()
}

const V3_6: Option<BrokerVersion> = Some(BrokerVersion(3, 6, 0));
const V4_0: Option<BrokerVersion> = Some(BrokerVersion(4, 0, 0));
const V4_1: Option<BrokerVersion> = Some(BrokerVersion(4, 1, 0));
const V4_4: Option<BrokerVersion> = Some(BrokerVersion(4, 4, 0));

/// The one exception of the one refused start, or `None` when the start is not refused.
fn exception(version: Option<BrokerVersion>, edit: &dyn Fn(&Path)) -> Option<String> {
    let r = refused(version, edit);
    assert!(r.len() <= 1, "{r:?}");
    r.into_iter().next().map(|(e, _, _)| e)
}

/// A file of `name` (empty) in the cache.
fn touch(cache: &Path, name: &str) {
    std::fs::write(cache.join(name), b"").unwrap();
}

/// `RemoteIndexCacheTest.testDeleteInvalidIndexFilesOnInit` (KAFKA-18787, 4.1): a
/// `.index.deleted` and a `.timeindex.tmp` whose id is a `java.util.UUID` text (36
/// characters, `100_3f1b…c5d.index.deleted`) are gone after `init`, and the sound entries
/// stay. Since 4.1 the first listing deletes every name ending `.deleted` or `.tmp`; before
/// it, `Path.endsWith` compared whole names, nothing was deleted, and the second listing
/// handed `3f1b…c5d` to `Uuid.fromString`, which refuses a text longer than 24 characters
/// (`IllegalArgumentException`): the start failed (what KAFKA-18787 reports).
///
/// On disk: the cache of the three copies with those two names. `verify --broker-version
/// 4.1.0` and `4.4.0`: no finding; `3.6.0` and `4.0.0`: one `remote_index_cache_corrupt`
/// with `IllegalArgumentException` and Kafka's reason (longer than 24 characters); no
/// broker version: nothing (4.1's reading starts). Near misses: a file named `.tmp`
/// exactly, which `Path.endsWith` matches, is deleted by 4.0 too (nothing); the same
/// leftovers with a Kafka `Uuid` id parse and are never opened by 4.0 (nothing).
#[test]
fn leftovers_of_an_unparseable_id_stop_a_start_before_4_1_only() {
    let java_uuid = "3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
    let leftovers = |cache: &Path| {
        touch(cache, &format!("100_{java_uuid}.index.deleted"));
        touch(cache, &format!("100_{java_uuid}.timeindex.tmp"));
    };
    for v in [V4_1, V4_4, None] {
        assert_eq!(exception(v, &leftovers), None, "{v:?}");
    }
    for v in [V3_6, V4_0] {
        let r = refused(v, &leftovers);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].0, "IllegalArgumentException");
        assert!(r[0].1.contains("longer than 24 characters"), "{}", r[0].1);
        assert!(
            r[0].1.contains(&format!("100_{java_uuid}.index.deleted")),
            "{}",
            r[0].1
        );
    }

    // near misses: `.tmp` exactly; the leftovers of a Kafka `Uuid`
    let exact = |cache: &Path| touch(cache, ".tmp");
    assert_eq!(exception(V4_0, &exact), None);
    let sound = |cache: &Path| {
        touch(cache, &format!("{}.deleted", cache_name(100, 9, "index")));
        touch(cache, &format!("{}.tmp", cache_name(100, 9, "timeindex")));
    };
    for v in [V3_6, V4_0, V4_4] {
        assert_eq!(exception(v, &sound), None, "{v:?}");
    }
}

/// `init`'s second listing cuts a segment id from every name it did not delete
/// (`remoteLogSegmentIdFromRemoteIndexFileName`, uncaught, the same in 3.6 to trunk): a
/// name without `.` or whose first `.` comes before its first `_` makes `String.substring`
/// throw `StringIndexOutOfBoundsException`; a text between them that is not a Kafka `Uuid`
/// makes `Uuid.fromString` throw `IllegalArgumentException`. Whatever the listing order,
/// the start fails (a corrupt entry listed earlier throws first, which is the only part
/// the order decides). No Kafka test writes such a name; `testDeleteInvalidIndexFilesOnInit`
/// is the nearest.
///
/// On disk: the sound cache with `stray` (no `.`), then `a.b_c`, then `notes.txt` (id
/// `notes`), each for every release; then `notes.txt` with the entry of [20,39] given an
/// offset index of 4 bytes: `exception` names no class (one of several) and
/// `evidence.exceptions` lists `CorruptIndexException` and `IllegalArgumentException`. Near
/// misses: a name whose id parses but whose entry lacks its other files
/// (`60_<uuid>.index` alone: `init` deletes it), a name without `_` whose entry is
/// incomplete (`<uuid>.index`): nothing.
#[test]
fn a_name_without_a_segment_id_stops_every_start() {
    let cases = [
        ("stray", "StringIndexOutOfBoundsException", "has no '.'"),
        (
            "a.b_c",
            "StringIndexOutOfBoundsException",
            "comes before its first '_'",
        ),
        (
            "notes.txt",
            "IllegalArgumentException",
            "is not a Kafka Uuid",
        ),
    ];
    for (name, thrown, words) in cases {
        for v in [None, V3_6, V4_0, V4_4] {
            let r = refused(v, &|cache: &Path| touch(cache, name));
            assert_eq!(r.len(), 1, "{name} {v:?}: {r:?}");
            assert_eq!(r[0].0, thrown, "{name} {v:?}");
            assert!(r[0].1.contains(words), "{}", r[0].1);
            assert_eq!(r[0].2, vec![thrown.to_string()]);
        }
    }
    let both = |cache: &Path| {
        touch(cache, "notes.txt");
        std::fs::write(cache.join(cache_name(20, 2, "index")), [0; 4]).unwrap();
    };
    let r = refused(None, &both);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0, "one of several (the listing order decides)");
    assert_eq!(
        r[0].2,
        vec!["CorruptIndexException", "IllegalArgumentException"]
    );
    assert!(
        r[0].1.contains("2 points of the cache are refused"),
        "{}",
        r[0].1
    );

    // near misses: names that parse, of incomplete entries (deleted)
    let incomplete = |cache: &Path| {
        touch(cache, &cache_name(60, 4, "index"));
        let id =
            klogscan::testkit::files::uuid_text(&klogscan::testkit::remote_log::segment_uuid(5));
        touch(cache, &format!("{id}.index"));
    };
    for v in [None, V4_0, V4_4] {
        assert_eq!(exception(v, &incomplete), None, "{v:?}");
    }
}

/// A complete entry's start offset: `offsetFromRemoteIndexFileName` reads the text before
/// the first `_` with `Long.parseLong` (`NumberFormatException`), and a name without `_`
/// (its whole prefix is the id) makes `String.substring` throw first. `init` reads it only
/// for the first name of a segment id it meets: when a sound complete entry shares the id,
/// which one is met first depends on the listing order, and nothing is said.
///
/// On disk: the sound cache with the files of [20,39] copied to `x_<uuid 2>.*` beside
/// `20_<uuid 2>.*`: nothing (the order decides); the same with `20_<uuid 2>.*` removed:
/// `NumberFormatException`; with `y_<uuid 2>.*` also (every entry of the id refused):
/// `NumberFormatException`, two points; the entry of a new id `<uuid 6>.*` without `_`:
/// `StringIndexOutOfBoundsException`; and the shared id beside `stray`: the start fails,
/// and the exception may be either (`evidence.exceptions` has both).
#[test]
fn a_start_offset_that_is_not_a_long_stops_the_start_unless_the_order_decides() {
    let copy = |cache: &Path, to: &str| {
        for e in ["index", "timeindex", "txnindex"] {
            let from = cache.join(cache_name(20, 2, e));
            let id = klogscan::testkit::files::uuid_text(
                &klogscan::testkit::remote_log::segment_uuid(2),
            );
            std::fs::copy(from, cache.join(format!("{to}{id}.{e}"))).unwrap();
        }
    };
    let remove = |cache: &Path| {
        for e in ["index", "timeindex", "txnindex"] {
            std::fs::remove_file(cache.join(cache_name(20, 2, e))).unwrap();
        }
    };
    let shared = |cache: &Path| copy(cache, "x_");
    assert_eq!(exception(V4_4, &shared), None);
    let alone = |cache: &Path| {
        copy(cache, "x_");
        remove(cache);
    };
    let r = refused(V4_4, &alone);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0, "NumberFormatException");
    assert!(
        r[0].1.contains("start offset \"x\" is not a long"),
        "{}",
        r[0].1
    );
    let two = |cache: &Path| {
        copy(cache, "x_");
        copy(cache, "y_");
        remove(cache);
    };
    let r = refused(V4_4, &two);
    assert_eq!(r[0].0, "NumberFormatException");
    assert!(
        r[0].1.contains("2 points of the cache are refused"),
        "{}",
        r[0].1
    );
    let no_underscore = |cache: &Path| {
        let id =
            klogscan::testkit::files::uuid_text(&klogscan::testkit::remote_log::segment_uuid(6));
        for e in ["index", "timeindex", "txnindex"] {
            touch(cache, &format!("{id}.{e}"));
        }
    };
    assert_eq!(
        exception(None, &no_underscore).as_deref(),
        Some("StringIndexOutOfBoundsException")
    );
    let with_stray = |cache: &Path| {
        copy(cache, "x_");
        touch(cache, "stray");
    };
    let r = refused(V4_4, &with_stray);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        r[0].2,
        vec!["NumberFormatException", "StringIndexOutOfBoundsException"]
    );
    assert!(
        r[0].1.starts_with("remote-log-index-cache/stray:"),
        "{}",
        r[0].1
    );
}

/// The first listing's deletion (`Files.deleteIfExists`, its `IOException` wrapped in
/// `KafkaException`): a directory named like a leftover that is not empty cannot be
/// deleted, and `init` throws before it reads any other name. An empty one is deleted.
/// Before 4.1 such a name is read in the second listing (its id `x` is no `Uuid`).
///
/// On disk: the sound cache with a directory `x.deleted/` holding one file: 4.1.0 and
/// 4.4.0 `KafkaException`, 4.0.0 `IllegalArgumentException`, no broker version both
/// (either release fails). Near miss: `x.deleted/` empty: nothing from 4.1, still
/// `IllegalArgumentException` for 4.0.
#[test]
fn a_leftover_directory_that_is_not_empty_stops_the_start_from_4_1() {
    let full = |cache: &Path| {
        std::fs::create_dir(cache.join("x.deleted")).unwrap();
        touch(&cache.join("x.deleted"), "f");
    };
    for v in [V4_1, V4_4] {
        assert_eq!(exception(v, &full).as_deref(), Some("KafkaException"));
    }
    assert_eq!(
        exception(V4_0, &full).as_deref(),
        Some("IllegalArgumentException")
    );
    let r = refused(None, &full);
    assert_eq!(r[0].2, vec!["IllegalArgumentException", "KafkaException"]);

    // near miss: the directory empty
    let empty = |cache: &Path| std::fs::create_dir(cache.join("x.deleted")).unwrap();
    assert_eq!(exception(V4_4, &empty), None);
    assert_eq!(
        exception(V4_0, &empty).as_deref(),
        Some("IllegalArgumentException")
    );
}
