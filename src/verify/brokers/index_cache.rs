//! The remote index cache a broker with tiered storage keeps in its first log dir
//! (`remote-log-index-cache`), as its next start reads it.
//!
//! `BrokerServer.startup` (and `KafkaServer.startup` in ZooKeeper mode, 3.6 to 3.9) builds
//! the `RemoteLogManager` when `remote.log.storage.system.enable` is true, handing it the
//! first of `log.dirs` (`config.logDirs.head`); its constructor builds the
//! `RemoteIndexCache`, whose `init` creates `<log dir>/remote-log-index-cache` when absent
//! and lists it twice, each time in the order the file system lists it. The first listing
//! deletes the leftovers: every name ending `.deleted` or `.tmp` since 4.1 (KAFKA-18787);
//! before it the filter compared whole path components, so only a name that is exactly
//! `.deleted` or `.tmp` went (a directory of such a name that is not empty makes
//! `Files.deleteIfExists` throw, wrapped in `KafkaException`). The second cuts a segment id
//! from every name, the text between the first `_` and the first `.`
//! (`String.substring` throws `StringIndexOutOfBoundsException` for a name without `.` or
//! whose first `.` comes before its first `_`; `Uuid.fromString` throws
//! `IllegalArgumentException` for an id that is not 16 bytes of URL-safe base64), and the
//! first time it meets an id, handles the entry of that name's prefix: when its `.index`,
//! `.timeindex` and `.txnindex` all exist it reads the start offset before the first `_`
//! (`Long.parseLong`: `NumberFormatException`; no `_`: `StringIndexOutOfBoundsException`),
//! opens the indexes with it as base offset and runs `OffsetIndex.sanityCheck`,
//! `TimeIndex.sanityCheck` and `TransactionIndex.sanityCheck`; otherwise it deletes the three.
//! Nothing is caught: any exception leaves the `RemoteLogManager` constructor and the
//! broker's start fails (`BrokerServer.startup`'s fatal error).
//!
//! So a name `init` cannot parse, or a corrupt entry that is the only complete one of its
//! id, stops the start whatever the listing order: only which exception comes first depends
//! on it (named when all are the same, else listed in `evidence.exceptions`). An entry whose
//! id a sound complete entry shares throws only when listed first: it never makes a finding,
//! but its exception is among the candidates when something else does. Without a broker
//! version the leftovers are read both ways, and a start is said to fail only when it fails
//! under both.
//!
//! What is claimed, and what is assumed: the cache exists only where a start with remote
//! storage enabled created it, in the log dir that was then the first of `log.dirs`; that
//! both still hold at the next start cannot be read from the files (`assumes`, and the
//! startup entry's `starts` is `null`). Nothing is said when another log dir of the same
//! broker holds a cache too (which one is first is not known), for a broker before 3.6, for a
//! cache that is a symlink (not followed), when a name is not UTF-8 (what Java decodes it to
//! depends on the JVM's encoding), when an entry's file or a leftover directory cannot be
//! read, or when a complete entry's start offset is not ASCII (Java reads every Unicode
//! decimal digit).

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
/// `exception` of a start that throws one of several exceptions (`evidence.exceptions`),
/// whichever the directory's listing order reaches first.
const SEVERAL: &str = "one of several (the listing order decides)";

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
        let leftovers = version.map(|v| match v >= BrokerVersion(4, 1, 0) {
            true => Leftovers::Removed,
            false => Leftovers::Kept,
        });
        let whole = crate::partition::recovery::reads_whole_txn_index_version(version);
        let Some(v) = judge_any(cache, leftovers, whole, mode) else {
            continue;
        };
        if !v.certain.is_empty() {
            report(d, cache, &v, out);
        }
    }
}

/// A point of the cache where `init` throws.
struct Bad {
    /// The entry's prefix (`<start>_<uuid>`); `None` for a name refused as such.
    prefix: Option<String>,
    file: String,
    exception: &'static str,
    message: String,
}

/// What `init` makes of a cache: the points where it throws whatever order the directory
/// lists its names in (`certain`: the start fails when there is one), and the exceptions of
/// the points where it throws only in some orders (an entry whose segment id a sound
/// complete entry shares: `init` loads whichever it lists first).
#[derive(Default)]
struct Verdict {
    certain: Vec<Bad>,
    possible: BTreeSet<&'static str>,
}

/// How a release treats the `.deleted` and `.tmp` names before it reads the others.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Leftovers {
    /// 4.1 and later (KAFKA-18787): every name ending `.deleted` or `.tmp` is deleted.
    Removed,
    /// 3.6 to 4.0: `Path.endsWith` compares whole names, so only a name that is exactly
    /// `.deleted` or `.tmp` is deleted; the others are read like any name.
    Kept,
}

impl Leftovers {
    fn removes(self, name: &str) -> bool {
        match self {
            Leftovers::Removed => name.ends_with(".deleted") || name.ends_with(".tmp"),
            Leftovers::Kept => name == ".deleted" || name == ".tmp",
        }
    }
}

/// The cache read as a stated release reads it, or, without one, as both readings of the
/// leftovers do: a start is said to fail only when it fails under both, and the exceptions
/// of both are the candidates.
fn judge_any(
    cache: &Path,
    leftovers: Option<Leftovers>,
    whole_version: bool,
    mode: MmapMode,
) -> Option<Verdict> {
    if let Some(l) = leftovers {
        return judge(cache, (l, whole_version), mode);
    }
    // The earlier reading (which reads the entries again) only when 4.1's refuses.
    let mut a = judge(cache, (Leftovers::Removed, whole_version), mode)?;
    if a.certain.is_empty() {
        return Some(a);
    }
    let b = judge(cache, (Leftovers::Kept, whole_version), mode)?;
    if b.certain.is_empty() {
        return Some(Verdict::default());
    }
    for x in b.certain {
        a.possible.insert(x.exception);
        if !a.certain.iter().any(|y| y.file == x.file) {
            a.certain.push(x);
        }
    }
    a.certain.sort_by(|x, y| x.file.cmp(&y.file));
    a.possible.extend(b.possible);
    Some(a)
}

/// The cache as `init` reads it, its points in name order; `None` when it cannot be judged
/// (a name that is not UTF-8, an entry or a leftover directory that cannot be read, a start
/// offset of non-ASCII text). `whole_version`: the release reads a transaction index
/// entry's whole int16 version (4.4+).
fn judge(
    cache: &Path,
    (leftovers, whole_version): (Leftovers, bool),
    mode: MmapMode,
) -> Option<Verdict> {
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(cache).ok()? {
        let name = e.ok()?.file_name().into_string().ok()?;
        if names.len() == MAX_NAMES {
            return None;
        }
        names.insert(name);
    }
    let mut v = Verdict::default();
    // The first listing deletes the leftovers; a directory that is not empty makes
    // `Files.deleteIfExists` throw, which `init` wraps in a `KafkaException` before it reads
    // any other name.
    for n in names.iter().filter(|n| leftovers.removes(n)) {
        let path = cache.join(n);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if meta.is_dir() && std::fs::read_dir(&path).ok()?.next().is_some() {
            v.certain.push(Bad {
                prefix: None,
                file: n.clone(),
                exception: "KafkaException",
                message: "a directory that is not empty where init deletes a leftover .deleted or .tmp file (Files.deleteIfExists throws DirectoryNotEmptyException)".into(),
            });
        }
    }
    if !v.certain.is_empty() {
        return Some(v);
    }
    // The second listing: every name's segment id, then each id's complete entries.
    let mut prefixes: BTreeMap<[u8; 16], BTreeSet<String>> = BTreeMap::new();
    for n in names.iter().filter(|n| !leftovers.removes(n)) {
        match parse_name(n) {
            Ok((prefix, uuid)) => {
                prefixes.entry(uuid).or_default().insert(prefix.to_string());
            }
            Err((exception, message)) => v.certain.push(Bad {
                prefix: None,
                file: n.clone(),
                exception,
                message,
            }),
        }
    }
    for ps in prefixes.values() {
        let mut refused = Vec::new();
        let mut complete = 0;
        for p in ps {
            if ["index", "timeindex", "txnindex"]
                .iter()
                .all(|e| names.contains(&format!("{p}.{e}")))
            {
                complete += 1;
                refused.extend(entry(cache, p, whole_version, mode)?);
            }
        }
        // One complete entry, or several all refused: whichever is listed first throws.
        // Several, one sound: the outcome depends on the listing order.
        if refused.len() == complete {
            v.certain.extend(refused);
        } else {
            v.possible.extend(refused.iter().map(|b| b.exception));
        }
    }
    v.certain.sort_by(|x, y| x.file.cmp(&y.file));
    Some(v)
}

/// `remoteLogSegmentIdFromRemoteIndexFileName` of `name`: its prefix (before the first
/// `.`) and segment id (between the first `_` and the first `.`), or what `init` throws
/// (`String.substring` refuses a name without `.` or with a `.` before the first `_`;
/// `Uuid.fromString` an id that is not 16 bytes of URL-safe base64). The JDK's messages
/// differ between JDKs: the cause is told in words.
fn parse_name(name: &str) -> Result<(&str, [u8; 16]), (&'static str, String)> {
    const SIOOBE: &str = "StringIndexOutOfBoundsException";
    let Some(dot) = name.find('.') else {
        return Err((SIOOBE, "the name has no '.', so init cannot cut a segment id from it (RemoteIndexCache.remoteLogSegmentIdFromRemoteIndexFileName)".into()));
    };
    let id_from = name.find('_').map_or(0, |u| u + 1);
    let Some(id) = name.get(id_from..dot) else {
        return Err((SIOOBE, "the name's first '.' comes before its first '_', so init cannot cut a segment id from it (RemoteIndexCache.remoteLogSegmentIdFromRemoteIndexFileName)".into()));
    };
    match decode_uuid(id) {
        Ok(uuid) => Ok((&name[..dot], uuid)),
        Err(e) => Err((
            "IllegalArgumentException",
            format!("the name's segment id is not a Kafka Uuid (Uuid.fromString): {e}"),
        )),
    }
}

/// `offsetFromRemoteIndexFileName` of a complete entry `prefix`: `Long.parseLong` of the
/// text before its first `_`; `Err(None)` for text klogscan does not read as Java does (not
/// ASCII: Java reads every Unicode decimal digit).
fn start_offset(prefix: &str) -> Result<i64, Option<(&'static str, String)>> {
    let Some(u) = prefix.find('_') else {
        return Err(Some(("StringIndexOutOfBoundsException", "the complete entry's name has no '_', so init cannot cut a start offset from it (RemoteIndexCache.offsetFromRemoteIndexFileName)".into())));
    };
    let text = &prefix[..u];
    if !text.is_ascii() {
        return Err(None);
    }
    text.parse().map_err(|_| {
        Some((
            "NumberFormatException",
            format!("the complete entry's start offset {text:?} is not a long (RemoteIndexCache.offsetFromRemoteIndexFileName: Long.parseLong)"),
        ))
    })
}

/// What `init` does with the complete entry `prefix`: its start offset from the name, then
/// the sanity checks (offset index, time index, transaction index, in that order) with it as
/// base offset. `Some(None)` when all pass, `None` when a file (or the start offset) cannot
/// be read.
fn entry(cache: &Path, prefix: &str, whole_version: bool, mode: MmapMode) -> Option<Option<Bad>> {
    let start = match start_offset(prefix) {
        Ok(s) => s,
        Err(e) => {
            let (exception, message) = e?;
            let (prefix, file) = (Some(prefix.to_string()), prefix.to_string());
            return Some(Some(Bad {
                prefix,
                file,
                exception,
                message,
            }));
        }
    };
    let read = |ext: &str| {
        let path = cache.join(format!("{prefix}.{ext}"));
        let data = load(&path, FileClass::Index, mode, None).ok()?;
        Some((path, data))
    };
    let bad = |path: &Path, exception: &'static str, message: String| Bad {
        prefix: Some(prefix.to_string()),
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

/// The finding and the startup entry of a cache `init` refuses.
fn report(d: &Dir, cache: &Path, v: &Verdict, out: &mut (Vec<Finding>, Vec<BrokerStartup>)) {
    let bad = &v.certain;
    let first = &bad[0];
    // The start throws at the point it lists first, in an order klogscan does not know: the
    // exception is named only when every point (and every entry that may throw first)
    // throws the same.
    let mut all: BTreeSet<&str> = bad.iter().map(|b| b.exception).collect();
    all.extend(&v.possible);
    let (exception, thrown) = match all.len() {
        1 => (first.exception, first.exception.to_string()),
        _ => {
            let names: Vec<&str> = all.iter().copied().collect();
            (
                SEVERAL,
                format!(
                    "one of {} (whichever point it lists first)",
                    names.join(", ")
                ),
            )
        }
    };
    let dir = cache.display().to_string();
    let node = d.meta.node_id.map_or_else(|| "?".into(), |n| n.to_string());
    let more = match bad.len() {
        1 => String::new(),
        n => format!(
            " ({n} points of the cache are refused; the start stops at whichever it lists first)"
        ),
    };
    let message = format!(
        "{REMOTE_LOG_INDEX_CACHE}/{}: {}: broker {node}'s next start with remote storage enabled fails — RemoteIndexCache.init throws {thrown} out of the RemoteLogManager constructor{more}",
        first.file, first.message
    );
    let entries: Vec<_> = (bad.iter().take(EVIDENCE_CAP))
        .map(|b| json!({"entry": b.prefix, "file": b.file, "exception": b.exception, "message": b.message}))
        .collect();
    let f = Finding::new(Kind::RemoteIndexCacheCorrupt, "", -1, message.clone())
        .segment(format!("{REMOTE_LOG_INDEX_CACHE}/{}", first.file))
        .evidence(json!({"log_dir": d.path(), "cache": dir, "refused": bad.len(), "exceptions": all, "entries": entries, "assumes": ASSUMES}))
        .broker("RemoteIndexCache.init (3.6 and later), run by the RemoteLogManager constructor that BrokerServer.startup (KafkaServer.startup in ZooKeeper mode) calls when remote.log.storage.system.enable is true, with the first of log.dirs, reads a segment id from every name of the cache (String.substring, Uuid.fromString), a start offset from every entry whose three files exist (Long.parseLong), and runs OffsetIndex.sanityCheck, TimeIndex.sanityCheck and TransactionIndex.sanityCheck on that entry, without catching any exception: the broker does not start; with remote storage disabled the cache is never read")
        .remediation(format!("with broker {node} stopped, delete {} from {dir}, or the whole {REMOTE_LOG_INDEX_CACHE} directory: it holds only copies of the remote segments' indexes, which the broker fetches again from the remote storage when a read needs them (RemoteIndexCache.createCacheEntry) and recreates empty at start; no record, offset or state of a partition is in it", match &first.prefix {
            Some(p) => format!("the refused entry's three files ({p}.index, .timeindex, .txnindex)"),
            None => format!("{} (not a name the cache's code writes)", first.file),
        }));
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
        assert!(parse_name(&format!("20_{id}.index.deleted")).is_ok());
        // no `_`: the id is the text before the first `.`
        assert!(parse_name(&format!("{id}.index")).is_ok());
        let thrown = |n: &str| parse_name(n).unwrap_err().0;
        assert_eq!(thrown("20_notauuid.index"), "IllegalArgumentException");
        assert_eq!(thrown(".deleted"), "IllegalArgumentException");
        assert_eq!(thrown("no-dot"), "StringIndexOutOfBoundsException");
        assert_eq!(
            thrown(&format!("a.b_{id}")),
            "StringIndexOutOfBoundsException"
        );
        // `Long.parseLong` of the text before the first `_`
        assert_eq!(start_offset(&format!("+20_{id}")).ok(), Some(20));
        let thrown = |p: &str| start_offset(p).unwrap_err().map(|e| e.0);
        assert_eq!(thrown(id), Some("StringIndexOutOfBoundsException"));
        assert_eq!(thrown(&format!("x_{id}")), Some("NumberFormatException"));
        assert_eq!(
            thrown(&format!("99999999999999999999_{id}")),
            Some("NumberFormatException")
        );
        assert_eq!(thrown(&format!("\u{661}_{id}")), None); // Java reads Arabic-Indic 1
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
        // a name `init` cannot parse throws too: which of the two first is not known
        std::fs::write(a.path.join(REMOTE_LOG_INDEX_CACHE).join("stray"), []).unwrap();
        assert_eq!(run(&[dir(&a)], None), vec![SEVERAL]);
    }
}
