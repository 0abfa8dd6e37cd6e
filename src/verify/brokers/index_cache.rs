//! The remote index cache a broker with tiered storage keeps in its first log dir
//! (`remote-log-index-cache`), as its next start reads it.
//!
//! `BrokerServer.startup` (and `KafkaServer.startup` in ZooKeeper mode, 3.6 to 3.9) builds
//! the `RemoteLogManager` when `remote.log.storage.system.enable` is true, handing it the
//! first of `log.dirs` (`config.logDirs.head`); its constructor builds the
//! `RemoteIndexCache`, whose `init` creates `<log dir>/remote-log-index-cache` when absent,
//! removes the `.deleted` and `.tmp` files (since 4.1, KAFKA-18787: before it the filter
//! compared whole path components and removed nothing), and then, for every file, reads a
//! segment id from the text between the first `_` and the first `.` of its name: an entry
//! `<start>_<uuid>` whose `.index`, `.timeindex` and `.txnindex` all exist is opened with
//! the start offset of its name as base offset and passed through `OffsetIndex.sanityCheck`,
//! `TimeIndex.sanityCheck` and `TransactionIndex.sanityCheck`, none of which is caught; an
//! entry missing one of its files has the others deleted. A `CorruptIndexException` (or the
//! `KafkaException` of a transaction entry of an unknown version) therefore leaves the
//! constructor and the broker's start fails (`BrokerServer.startup`'s fatal error).
//!
//! What is claimed, and what is assumed: the cache exists only where a start with remote
//! storage enabled created it, in the log dir that was then the first of `log.dirs`; that
//! both still hold at the next start cannot be read from the files (`assumes`, and the
//! startup entry's `starts` is `null`). Nothing is said when another log dir of the same
//! broker holds a cache too (which one is first is not known), for a broker before 3.6, for a
//! cache that is a symlink (not followed), when
//! an entry cannot be read or a name in the cache is one `init` cannot parse (it throws
//! another exception, in the directory's listing order, which klogscan does not know), and of
//! an entry whose segment id another complete entry shares (only the one listed first is
//! loaded).

use super::{BrokerStartup, Dir, push};
use crate::discover::layout::REMOTE_LOG_INDEX_CACHE;
use crate::finding::{Finding, Kind};
use crate::partition::recovery::BrokerVersion;
use crate::read::format::checkpoint::decode_uuid;
use crate::read::format::index::{OffsetIndex, TimeIndex, TxnIndex};
use crate::read::segment::{FileClass, MmapMode, load};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Names listed from one cache at most; a larger directory is not judged.
const MAX_NAMES: usize = 1_000_000;
/// Corrupt entries named in the evidence at most.
const EVIDENCE_CAP: usize = 20;

/// What the next start assumes of a cache it would refuse.
const ASSUMES: &str = "remote.log.storage.system.enable is still true and this log dir is still the first of the broker's log.dirs at its next start (both held when a start created the cache; a broker with remote storage disabled never reads it, and one whose first log dir is another creates a new cache there)";

/// A broker: its `cluster.id` and node id.
type Broker<'a> = (Option<&'a str>, Option<i32>);

/// One broker's caches, each judged as `RemoteIndexCache.init` reads it.
pub(super) fn check(
    dirs: &[Dir],
    version: Option<BrokerVersion>,
    mode: MmapMode,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    if version.is_some_and(|v| v < BrokerVersion(3, 6, 0)) {
        return; // no RemoteIndexCache of these names before 3.6
    }
    // The cache of each log dir that holds one, by broker.
    let mut by_broker: BTreeMap<Broker, Vec<(&Dir, PathBuf)>> = BTreeMap::new();
    for d in dirs {
        let cache = d.ld.path.join(REMOTE_LOG_INDEX_CACHE);
        if std::fs::symlink_metadata(&cache).is_ok_and(|m| m.is_dir()) {
            let key = (d.meta.cluster_id.as_deref(), d.meta.node_id);
            by_broker.entry(key).or_default().push((d, cache));
        }
    }
    for caches in by_broker.values() {
        // Two caches of one broker: which log dir its start reads is not known.
        let [(d, cache)] = caches.as_slice() else {
            continue;
        };
        let removes_leftovers = version.is_none_or(|v| v >= BrokerVersion(4, 1, 0));
        let whole = crate::partition::recovery::reads_whole_txn_index_version(version);
        let Some(bad) = judge(cache, (removes_leftovers, whole), mode) else {
            continue;
        };
        if !bad.is_empty() {
            report(d, cache, &bad, out);
        }
    }
}

/// One complete entry `init` would refuse.
struct Bad {
    prefix: String,
    file: String,
    exception: &'static str,
    message: String,
}

/// The complete entries of `cache` that `init` refuses, in name order; `None` when the
/// cache cannot be judged (a name `init` cannot parse, an entry that cannot be read).
/// `removes_leftovers`: the release removes `.deleted`/`.tmp` files first; `whole_version`:
/// it reads a transaction index entry's whole int16 version (4.4+).
fn judge(
    cache: &Path,
    (removes_leftovers, whole_version): (bool, bool),
    mode: MmapMode,
) -> Option<Vec<Bad>> {
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(cache).ok()? {
        let name = e.ok()?.file_name().into_string().ok()?;
        if names.len() == MAX_NAMES {
            return None;
        }
        names.insert(name);
    }
    // The entries by segment id (a prefix per id: `init` loads only the first listed).
    let mut prefixes: BTreeMap<[u8; 16], BTreeSet<String>> = BTreeMap::new();
    for n in &names {
        if removes_leftovers && (n.ends_with(".deleted") || n.ends_with(".tmp")) {
            continue;
        }
        let (prefix, uuid) = parse_name(n)?;
        prefixes.entry(uuid).or_default().insert(prefix.to_string());
    }
    let mut bad = Vec::new();
    for ps in prefixes.values() {
        let complete: Vec<&String> = (ps.iter())
            .filter(|p| {
                ["index", "timeindex", "txnindex"]
                    .iter()
                    .all(|e| names.contains(&format!("{p}.{e}")))
            })
            .collect();
        // None complete: nothing loaded; two: which one is loaded depends on the listing
        // order.
        let [prefix] = complete.as_slice() else {
            continue;
        };
        // `offsetFromRemoteIndexFileName`: `Long.parseLong` of the text before the first `_`.
        let start: i64 = prefix.split('_').next()?.parse().ok()?;
        if let Some(b) = entry(cache, (prefix, start), whole_version, mode)? {
            bad.push(b);
        }
    }
    Some(bad)
}

/// `remoteLogSegmentIdFromRemoteIndexFileName` of `name`: its prefix (before the first
/// `.`) and segment id (between the first `_` and the first `.`), `None` where `init`
/// throws (no `.`, a `.` before the first `_`, an id `Uuid.fromString` refuses).
fn parse_name(name: &str) -> Option<(&str, [u8; 16])> {
    let dot = name.find('.')?;
    let id_from = name.find('_').map_or(0, |u| u + 1);
    let id = name.get(id_from..dot)?;
    let uuid = decode_uuid(id).ok()?;
    Some((&name[..dot], uuid))
}

/// The sanity checks `init` runs on the entry `prefix` (offset index, time index,
/// transaction index, in that order) with base offset `start`: `Some(None)` when all pass,
/// `None` when a file cannot be read.
fn entry(
    cache: &Path,
    (prefix, start): (&str, i64),
    whole_version: bool,
    mode: MmapMode,
) -> Option<Option<Bad>> {
    let read = |ext: &str| {
        let path = cache.join(format!("{prefix}.{ext}"));
        let data = load(&path, FileClass::Index, mode, None).ok()?;
        Some((path, data))
    };
    let bad = |path: &Path, exception: &'static str, message: String| Bad {
        prefix: prefix.to_string(),
        file: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        exception,
        message,
    };
    let (path, data) = read("index")?;
    let verdict = OffsetIndex::new(&data, start).sanity_check();
    data.check_unchanged().ok()?;
    if let Err(e) = verdict {
        let m = e.kafka_message(&path.display().to_string());
        return Some(Some(bad(&path, "CorruptIndexException", m)));
    }
    let (path, data) = read("timeindex")?;
    let verdict = TimeIndex::new(&data, start).sanity_check();
    data.check_unchanged().ok()?;
    if let Err(e) = verdict {
        let m = e.kafka_message(&path.display().to_string());
        return Some(Some(bad(&path, "CorruptIndexException", m)));
    }
    let (path, data) = read("txnindex")?;
    let index = TxnIndex::new(&data, start);
    let verdict = match whole_version {
        true => index.sanity_check_since_4_4(),
        false => index.sanity_check(),
    };
    data.check_unchanged().ok()?;
    if let Err(e) = verdict {
        let m = e.kafka_message(&path.display().to_string());
        return Some(Some(bad(&path, e.exception(), m)));
    }
    Some(None)
}

/// The finding and the startup entry of a cache with refused entries `bad`.
fn report(d: &Dir, cache: &Path, bad: &[Bad], out: &mut (Vec<Finding>, Vec<BrokerStartup>)) {
    let first = &bad[0];
    // The start throws at the refused entry it lists first, in an order klogscan does not
    // know: the exception is named only when every refused entry throws the same.
    let exception = if bad.iter().all(|b| b.exception == first.exception) {
        first.exception
    } else {
        "CorruptIndexException or KafkaException"
    };
    let dir = cache.display().to_string();
    let node = d.meta.node_id.map_or_else(|| "?".into(), |n| n.to_string());
    let more = match bad.len() {
        1 => String::new(),
        n => format!(
            " ({n} entries of the cache are refused; the start stops at whichever it lists first)"
        ),
    };
    let message = format!(
        "{REMOTE_LOG_INDEX_CACHE}/{}: {}: broker {node}'s next start with remote storage enabled fails — RemoteIndexCache.init throws {exception} out of the RemoteLogManager constructor{more}",
        first.file, first.message
    );
    let entries: Vec<_> = (bad.iter().take(EVIDENCE_CAP))
        .map(|b| json!({"entry": b.prefix, "file": b.file, "exception": b.exception, "message": b.message}))
        .collect();
    let f = Finding::new(Kind::RemoteIndexCacheCorrupt, "", -1, message.clone())
        .segment(format!("{REMOTE_LOG_INDEX_CACHE}/{}", first.file))
        .evidence(json!({"log_dir": d.path(), "cache": dir, "refused": bad.len(), "entries": entries, "assumes": ASSUMES}))
        .broker("RemoteIndexCache.init (3.6 and later), run by the RemoteLogManager constructor that BrokerServer.startup (KafkaServer.startup in ZooKeeper mode) calls when remote.log.storage.system.enable is true, with the first of log.dirs, opens every entry of the cache whose three files exist and runs OffsetIndex.sanityCheck, TimeIndex.sanityCheck and TransactionIndex.sanityCheck on it without catching their exception: the broker does not start; with remote storage disabled the cache is never read")
        .remediation(format!("with broker {node} stopped, delete the refused entry's three files ({}.index, .timeindex, .txnindex) from {dir}, or the whole {REMOTE_LOG_INDEX_CACHE} directory: it holds only copies of the remote segments' indexes, which the broker fetches again from the remote storage when a read needs them (RemoteIndexCache.createCacheEntry) and recreates empty at start; no record, offset or state of a partition is in it", first.prefix));
    let s = BrokerStartup {
        broker: d.meta.node_id,
        cluster_id: d.meta.cluster_id.clone(),
        log_dirs: vec![d.path()],
        starts: None,
        reason: "",
        exception,
        thrown_by: "RemoteIndexCache.init",
        message,
        assumes: Some(ASSUMES),
    };
    push(out, f, d.source(), s);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `remoteLogSegmentIdFromRemoteIndexFileName` and the prefix `init` builds the
    /// entry's three names from.
    #[test]
    fn names_parse_as_init_reads_them() {
        let id = "AAAAAAAAAAAAAAAAAAAAAQ";
        let name = format!("20_{id}.index");
        let (p, u) = parse_name(&name).unwrap();
        assert_eq!((p, u[15]), (format!("20_{id}").as_str(), 1));
        assert!(parse_name(&format!("20_{id}.index.deleted")).is_some());
        assert!(parse_name("20_notauuid.index").is_none());
        assert!(parse_name("no-dot").is_none());
        assert!(parse_name(&format!("a.b_{id}")).is_none());
    }

    /// A log dir of node 1 under `root/name` whose cache holds one entry with an offset
    /// index of 4 bytes (`OffsetIndex.sanityCheck` refuses it).
    fn log_dir(root: &Path, name: &str) -> crate::discover::layout::LogDir {
        let cache = root.join(name).join(REMOTE_LOG_INDEX_CACHE);
        std::fs::create_dir_all(&cache).unwrap();
        let prefix = "20_AAAAAAAAAAAAAAAAAAAAAQ";
        std::fs::write(cache.join(format!("{prefix}.index")), [0; 4]).unwrap();
        std::fs::write(cache.join(format!("{prefix}.timeindex")), []).unwrap();
        std::fs::write(cache.join(format!("{prefix}.txnindex")), []).unwrap();
        crate::discover::layout::LogDir {
            path: root.join(name),
            ..Default::default()
        }
    }

    fn dir(ld: &crate::discover::layout::LogDir) -> Dir<'_> {
        use crate::read::format::checkpoint::parse_meta_properties_unverified;
        Dir {
            ld,
            meta: parse_meta_properties_unverified(b"version=1\nnode.id=1\ncluster.id=c\n")
                .unwrap(),
            live: BTreeSet::new(),
            checkpointed: None,
            metadata_log: false,
        }
    }

    /// A transaction index entry of version int16 1 (`00 01`): the first-byte reading of
    /// every release before 4.4 loads it (version 0), 4.4's whole-int16 one throws
    /// (KAFKA-19562) — so only a stated 4.4 broker's start fails.
    #[test]
    fn a_whole_int16_txn_index_version_is_refused_from_4_4() {
        let t = tempfile::tempdir().unwrap();
        let ld = log_dir(t.path(), "a");
        let cache = ld.path.join(REMOTE_LOG_INDEX_CACHE);
        let prefix = "20_AAAAAAAAAAAAAAAAAAAAAQ";
        std::fs::write(cache.join(format!("{prefix}.index")), []).unwrap();
        let mut entry = 1i16.to_be_bytes().to_vec();
        for v in [7i64, 21, 24, 25] {
            entry.extend_from_slice(&v.to_be_bytes());
        }
        std::fs::write(cache.join(format!("{prefix}.txnindex")), entry).unwrap();
        let run = |v: Option<BrokerVersion>| {
            let mut out = (Vec::new(), Vec::new());
            check(&[dir(&ld)], v, MmapMode::Auto, &mut out);
            out.1.iter().map(|s| s.exception).collect::<Vec<_>>()
        };
        assert_eq!(run(Some(BrokerVersion(4, 4, 0))), vec!["KafkaException"]);
        assert!(run(Some(BrokerVersion(4, 3, 0))).is_empty());
        assert!(run(None).is_empty());
    }

    /// One cache of a broker is judged; two (which is the first of `log.dirs` is not
    /// known), or a broker before 3.6, say nothing.
    #[test]
    fn only_a_brokers_one_cache_is_judged_from_3_6() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (log_dir(t.path(), "a"), log_dir(t.path(), "b"));
        let run = |dirs: &[Dir], v: Option<BrokerVersion>| {
            let mut out = (Vec::new(), Vec::new());
            check(dirs, v, MmapMode::Auto, &mut out);
            out.1.iter().map(|s| s.exception).collect::<Vec<_>>()
        };
        assert_eq!(run(&[dir(&a)], None), vec!["CorruptIndexException"]);
        assert_eq!(
            run(&[dir(&a)], Some(BrokerVersion(3, 6, 0))),
            vec!["CorruptIndexException"]
        );
        assert!(run(&[dir(&a)], Some(BrokerVersion(3, 5, 2))).is_empty());
        assert!(run(&[dir(&a), dir(&b)], None).is_empty());
        // an unparseable name: the exception and its order are not known
        std::fs::write(a.path.join(REMOTE_LOG_INDEX_CACHE).join("stray"), []).unwrap();
        assert!(run(&[dir(&a)], None).is_empty());
    }
}
