//! Whether one broker's log dirs agree on who they are: the checks a broker's start runs
//! over the `meta.properties` of all its log dirs before it loads any log, and what
//! `verify` predicts of that start (`broker_startup`).
//!
//! Since 3.7, `MetaPropertiesEnsemble.Loader.load` reads every log dir's file
//! (`MetaProperties.Builder`: a refusal makes the log dir an error dir) and
//! `MetaPropertiesEnsemble.verify` throws `RuntimeException` — the broker does not start —
//! on a `cluster.id` or node id that differs from the one before (in the order of the log
//! dirs' paths, or from the configured one), a `directory.id` that `DirectoryId.reserved`
//! calls reserved, and one `directory.id` in two log dirs. `KafkaRaftServer.initializeLogDirs`
//! calls it with `REQUIRE_AT_LEAST_ONE_VALID` and `REQUIRE_METADATA_LOG_DIR` and then refuses
//! the metadata log (`__cluster_metadata-0`) in any log dir but `metadata.log.dir`
//! (`KafkaException`, since 2.8); `KafkaServer` (ZooKeeper mode) calls it with `REQUIRE_V0`
//! unless a migration is enabled.
//!
//! Before 3.7, `BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs` (2.8 to 3.6)
//! compares the log dirs' files whole (`Properties.equals`: every key and value), except a
//! KRaft broker since 3.4, which compares only their cluster and node ids
//! (`MetaProperties.parse`); a difference throws `InconsistentBrokerMetadataException` and
//! the broker does not start. Before 2.8, `KafkaServer.getBrokerMetadataAndOfflineDirs`
//! compared only `broker.id` and `cluster.id`.
//!
//! Two checks read one log dir alone (3.7 and later): a `directory.id` that is reserved
//! (`reserved_directory_id`), and a file `MetaProperties.Builder` refuses
//! (`meta_properties_refused`: an error dir, offline from the start, except in the log dir
//! holding the metadata log, whose error stops it).
//!
//! One check holds each log dir against the cluster's metadata log (3.7 and later,
//! `registration`): a `directory.id` the image registers for another broker makes the
//! controller refuse the node's registration (`ClusterControlManager.registerBroker`), and
//! its start fails (`duplicate_directory_id`, naming the registering broker).
//!
//! Which log dirs are one broker's: klogscan is given log dirs of many brokers together
//! (every broker of a cluster, several clusters), which is normal and must not be judged as
//! one broker's. Log dirs are one broker's here when their `meta.properties` name the same
//! `cluster.id` and node id (the rule `cluster::duplicates` and the tiering check use) and
//! something proves them two log dirs, not one log dir captured twice (before and after an
//! incident): their own `directory.id`s differ, or — for one `directory.id` in both — each
//! log dir's `recovery-point-offset-checkpoint` names partitions and none the other names,
//! and no live partition directory is in both (a capture of one log dir lists that log
//! dir's partitions each time). A `cluster.id` or node id that differs between log dirs is
//! never judged: two brokers (broker 1 of two clusters, brokers 1 and 2 of one) read the
//! same way as one broker whose log dirs disagree, and nothing on disk tells them apart.

mod index_cache;
mod kraft;
mod registration;

use crate::cluster::leadership::RegisteredDirs;
use crate::discover::layout::{DirKind, Inventory, LogDir};
use crate::finding::{Finding, Kind, Severity, Source};
use crate::partition::recovery::{BrokerVersion, LogDirFiles};
use crate::read::format::checkpoint::{MetaProperties, parse_meta_properties_unverified};
use serde::Serialize;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What `verify` predicts of one broker's start from its log dirs' `meta.properties`: one
/// entry per check that stops it (JSON `broker_startup`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrokerStartup {
    /// The node id the log dirs name.
    pub broker: Option<i32>,
    pub cluster_id: Option<String>,
    /// The log dirs the check read (in path order).
    pub log_dirs: Vec<String>,
    /// `false`: the start fails; `null`: it fails in one mode of the broker and not in the
    /// other (`assumes` says which).
    pub starts: Option<bool>,
    /// The finding kind that says why.
    pub reason: &'static str,
    /// The exception the start throws.
    pub exception: &'static str,
    /// Where Kafka throws it.
    pub thrown_by: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assumes: Option<&'static str>,
}

/// One log dir as the checks read it.
struct Dir<'a> {
    ld: &'a LogDir,
    meta: MetaProperties,
    /// Its live partition directories.
    live: BTreeSet<(&'a str, i32)>,
    /// The partitions its `recovery-point-offset-checkpoint` names (`None`: no file, or
    /// one that was not read).
    checkpointed: Option<BTreeSet<(&'a str, i32)>>,
    /// It holds a live `__cluster_metadata-0`.
    metadata_log: bool,
}

impl Dir<'_> {
    fn path(&self) -> String {
        self.ld.path.display().to_string()
    }
    fn directory_id(&self) -> Option<String> {
        self.meta.directory_id_string()
    }
    fn source(&self) -> Source {
        Source {
            cluster_id: self.meta.cluster_id.as_deref().map(Arc::from),
            broker_id: self.meta.node_id,
            log_dir: Some(Arc::from(self.path())),
            kraft: self.meta.version == 1,
            ..Default::default()
        }
    }
}

/// The checks over the log dirs of `inv` (`files` aligned with `inv.log_dirs`) for a broker
/// of `version` (`None`: a current one), with the directory ids each replayed metadata
/// log's image registers (`registered`), files read under `mmap`: the findings and the
/// startup predictions.
pub(crate) fn check(
    inv: &Inventory,
    files: &[LogDirFiles],
    version: Option<BrokerVersion>,
    registered: &[RegisteredDirs],
    mmap: crate::read::segment::MmapMode,
) -> (Vec<Finding>, Vec<BrokerStartup>) {
    let mut out = (Vec::new(), Vec::new());
    // A bundle's inventory: the files are on other machines.
    if inv.recorded.is_some() {
        return out;
    }
    let (dirs, refused) = read_dirs(inv, files);
    let mut brokers: BTreeMap<(&str, i32), Vec<&Dir>> = BTreeMap::new();
    for d in &dirs {
        if let (Some(c), Some(n)) = (d.meta.cluster_id.as_deref(), d.meta.node_id) {
            brokers.entry((c, n)).or_default().push(d);
        }
    }
    let groups = || brokers.values().filter(|g| g.len() > 1);
    // In the order a start meets them: `MetaPropertiesEnsemble.verify`'s pass over the
    // log dirs in path order (a reserved id where it is, a duplicate at its second log
    // dir), its error-dir check after that pass, then `KafkaRaftServer.initializeLogDirs`'s
    // own checks (the metadata log elsewhere, then each log dir's file and ids).
    let mut pass = (Vec::new(), Vec::new());
    for d in &dirs {
        reserved_id(d, version, &mut pass);
    }
    for group in groups() {
        duplicate_ids(group, version, &mut pass);
    }
    in_path_order(&mut pass);
    out.0.append(&mut pass.0);
    out.1.append(&mut pass.1);
    for r in &refused {
        refused_file(r, version, &mut out);
    }
    for group in groups() {
        whole_files(group, version, &mut out);
        metadata_logs(group, version, &mut out);
    }
    kraft::check(inv, &dirs, version, &mut out);
    // Then the `RemoteLogManager` (its index cache), built before the broker registers.
    index_cache::check(&dirs, version, mmap, &mut out);
    // Then the registration with the controller (`BrokerServer.startup`), which brokers
    // before 3.7 make without directory ids.
    if ensemble(version) {
        registration::check(&dirs, registered, &mut out);
    }
    out
}

/// Put the faults of `verify`'s pass (each with its startup entry) in the order it meets
/// them: by the path of the log dir where it throws (the last of the entry's log dirs).
fn in_path_order(pass: &mut (Vec<Finding>, Vec<BrokerStartup>)) {
    let mut pairs: Vec<(Finding, BrokerStartup)> = std::mem::take(&mut pass.0)
        .into_iter()
        .zip(std::mem::take(&mut pass.1))
        .collect();
    pairs.sort_by(|a, b| a.1.log_dirs.last().cmp(&b.1.log_dirs.last()));
    (pass.0, pass.1) = pairs.into_iter().unzip();
}

/// A log dir whose `meta.properties` `MetaProperties.Builder` refuses: an error dir.
struct Refused<'a> {
    ld: &'a LogDir,
    why: String,
    /// It holds a live `__cluster_metadata-0`.
    metadata_log: bool,
}

/// Every log dir whose `meta.properties` `MetaProperties.Builder` reads, in path order
/// (the order of the broker's `TreeSet` of log dirs), and those whose file it refuses.
fn read_dirs<'a>(inv: &'a Inventory, files: &'a [LogDirFiles]) -> (Vec<Dir<'a>>, Vec<Refused<'a>>) {
    let mut dirs = Vec::new();
    let mut refused = Vec::new();
    for (i, ld) in inv.log_dirs.iter().enumerate() {
        let Some(meta) = ld.meta_properties.as_deref().and_then(read_meta) else {
            continue;
        };
        let live: BTreeSet<(&str, i32)> = inv
            .partitions
            .iter()
            .filter(|p| p.log_dir.as_ref() == Some(&ld.path))
            .filter(|p| matches!(p.kind, Some(DirKind::Normal)))
            .filter_map(|p| p.tp.as_ref())
            .map(|tp| (tp.topic.as_str(), tp.partition))
            .collect();
        let metadata_log = live.contains(&("__cluster_metadata", 0));
        let meta = match meta {
            Ok(m) => m,
            Err(why) => {
                refused.push(Refused {
                    ld,
                    why,
                    metadata_log,
                });
                continue;
            }
        };
        let checkpointed = match files.get(i).map(|f| &f.recovery_points) {
            Some(Some(Ok(entries))) => Some(
                entries
                    .iter()
                    .map(|e| (e.topic.as_str(), e.partition))
                    .collect(),
            ),
            _ => None,
        };
        dirs.push(Dir {
            ld,
            meta,
            live,
            checkpointed,
            metadata_log,
        });
    }
    dirs.sort_by(|a, b| a.ld.path.cmp(&b.ld.path));
    refused.sort_by(|a, b| a.ld.path.cmp(&b.ld.path));
    (dirs, refused)
}

/// `meta.properties` as `MetaProperties.Builder` reads it: `None` when absent or not read
/// by klogscan (discovery names a file it cannot read; the broker may read it), `Err`
/// with why when the broker's reader refuses its content.
fn read_meta(path: &std::path::Path) -> Option<Result<MetaProperties, String>> {
    let bytes = crate::discover::identity::load_meta_properties(path)?;
    Some(parse_meta_properties_unverified(&bytes).map_err(|e| e.to_string()))
}

/// A `meta.properties` `MetaProperties.Builder` refuses (3.7 and later): the log dir is an
/// error dir, offline from the start; the metadata log dir's stops the start.
fn refused_file(
    r: &Refused,
    version: Option<BrokerVersion>,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    if !ensemble(version) {
        return; // brokers before 3.7 read the file with other rules (RawMetaProperties)
    }
    let dir = r.ld.path.display().to_string();
    let why = &r.why;
    let mut f = Finding::new(
        Kind::MetaPropertiesRefused,
        "",
        -1,
        format!("{dir}/meta.properties is refused by the broker's reader ({why}): a broker since 3.7 takes the log dir offline at its next start (an error dir of MetaPropertiesEnsemble.Loader.load)"),
    )
    .segment("meta.properties")
    .evidence(json!({"log_dir": dir, "error": why, "metadata_log": r.metadata_log,
        "assumes": r.metadata_log.then_some(METADATA_DIR)}))
    .remediation(format!("with the broker stopped, restore {dir}/meta.properties from a backup or from another log dir of the same broker (the same cluster.id and node id; without its directory.id line, so that a KRaft broker writes the log dir a new one), keeping the refused file as evidence"));
    f.source = Source {
        log_dir: Some(Arc::from(dir.as_str())),
        ..Default::default()
    };
    if !r.metadata_log {
        f = f.broker("MetaPropertiesEnsemble.Loader.load (3.7 and later) catches the refusal and makes the log dir an error dir, which the start takes offline (LogManager's initial offline dirs): none of its partitions is served by this broker, which starts without them (it does not start when no log dir has a readable file: REQUIRE_AT_LEAST_ONE_VALID); brokers before 3.7 read the file with other rules (RawMetaProperties) and are not judged here");
        out.0.push(f);
        return;
    }
    let message = format!(
        "{dir}/meta.properties is refused ({why}) and the log dir holds the KRaft metadata log: the node's next start fails — MetaPropertiesEnsemble.verify throws RuntimeException (I/O error in the metadata log directory)"
    );
    f.message = message.clone();
    f = f.broker(format!("MetaPropertiesEnsemble.Loader.load makes the log dir an error dir and MetaPropertiesEnsemble.verify (KafkaRaftServer.initializeLogDirs, 3.7 and later) refuses an error dir as the metadata log dir: {NOT_STARTED}"));
    let s = BrokerStartup {
        broker: None,
        cluster_id: None,
        log_dirs: vec![dir],
        starts: Some(false),
        reason: "",
        exception: "RuntimeException",
        thrown_by: "MetaPropertiesEnsemble.verify",
        message,
        assumes: Some(METADATA_DIR),
    };
    let source = f.source.clone();
    push(out, f, source, s);
}

/// What a refused file of the log dir holding `__cluster_metadata-0` assumes.
const METADATA_DIR: &str = "the log dir holding __cluster_metadata-0 is the node's metadata.log.dir (a data dir holding a stale copy of the metadata log would only go offline)";

/// Whether a broker of `version` runs `MetaPropertiesEnsemble.verify` (3.7 and later; an
/// unknown version is a current broker).
fn ensemble(version: Option<BrokerVersion>) -> bool {
    version.is_none_or(|v| v >= BrokerVersion(3, 7, 0))
}

const NOT_STARTED: &str = "the broker does not start (the exception reaches the start before any log is loaded): its partitions stay on their other replicas, offline where it held the only in-sync one";

/// A `directory.id` `DirectoryId.reserved` calls reserved.
fn reserved_id(
    d: &Dir,
    version: Option<BrokerVersion>,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    let Some(name) = d.meta.reserved_directory_id() else {
        return;
    };
    if !ensemble(version) {
        return; // read by no broker before 3.7
    }
    let (dir, id) = (d.path(), d.directory_id().unwrap_or_default());
    let message = format!(
        "{dir}/meta.properties: directory.id {id} is the reserved id {name}: the broker's next start fails — MetaPropertiesEnsemble.verify throws RuntimeException (invalid reserved directory ID)"
    );
    let f = Finding::new(Kind::ReservedDirectoryId, "", -1, message.clone())
        .segment("meta.properties")
        .evidence(json!({"log_dir": dir, "directory_id": id, "reserved_as": name, "node_id": d.meta.node_id, "cluster_id": d.meta.cluster_id}))
        .broker(format!("MetaPropertiesEnsemble.verify (KafkaRaftServer.initializeLogDirs, KafkaServer.startup; 3.7 and later) refuses a directory.id that DirectoryId.reserved calls reserved: {NOT_STARTED}; brokers before 3.7 do not read directory.id"))
        .remediation(format!("with the broker stopped, put back the directory.id this log dir had (a backup of {dir}/meta.properties, or the broker's registration in the metadata log); if it never had one, remove the line (keep a copy of the file): a KRaft broker writes a new valid id at its next start (MetaPropertiesEnsemble.Copier.generateValidDirectoryId)"));
    push(
        out,
        f,
        d.source(),
        startup(
            &[d],
            "RuntimeException",
            "MetaPropertiesEnsemble.verify",
            message,
            None,
        ),
    );
}

/// One `directory.id` in two log dirs of one broker (told from one log dir captured twice
/// by their partitions, module docs).
fn duplicate_ids(
    group: &[&Dir],
    version: Option<BrokerVersion>,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    if !ensemble(version) {
        return;
    }
    for (n, a) in group.iter().enumerate() {
        for b in &group[n + 1..] {
            let id = match (a.directory_id(), b.directory_id()) {
                (Some(x), Some(y)) if x == y => x,
                _ => continue,
            };
            if a.meta.reserved_directory_id().is_some() || !two_log_dirs(a, b) {
                continue;
            }
            let (da, db) = (a.path(), b.path());
            let message = format!(
                "{da} and {db} both carry directory.id {id} in meta.properties: broker {}'s next start fails — MetaPropertiesEnsemble.verify throws RuntimeException (duplicate directory ID)",
                node(a)
            );
            let f = Finding::new(Kind::DuplicateDirectoryId, "", -1, message.clone())
                .segment("meta.properties")
                .evidence(json!({
                    "broker": a.meta.node_id, "cluster_id": a.meta.cluster_id, "directory_id": id,
                    "log_dirs": [da, db],
                    "why_two_log_dirs": "each log dir's recovery-point-offset-checkpoint names partitions, none of the other's, and no live partition directory is in both (a capture of one log dir twice lists the same partitions)",
                }))
                .broker(format!("MetaPropertiesEnsemble.verify (3.7 and later) refuses one directory.id in two log dirs: {NOT_STARTED}. Brokers before 3.7 ignore directory.id (a ZooKeeper-mode one before 3.7 compares the files whole: identical files pass)"))
                .remediation(format!("one meta.properties was copied from the other log dir (a new disk set up by copying the file): with broker {} stopped, remove the directory.id line from the log dir that was added later (keep a copy of the file), so the broker writes it a new id at its next start (MetaPropertiesEnsemble.Copier.generateValidDirectoryId)", node(a)));
            let s = startup(
                &[*a, *b],
                "RuntimeException",
                "MetaPropertiesEnsemble.verify",
                message,
                None,
            );
            push(out, f, a.source(), s);
            return; // the start fails at the first one
        }
    }
}

/// Two log dirs of one `directory.id` that are not one log dir captured twice.
fn two_log_dirs(a: &Dir, b: &Dir) -> bool {
    let (Some(ca), Some(cb)) = (&a.checkpointed, &b.checkpointed) else {
        return false;
    };
    !ca.is_empty() && !cb.is_empty() && ca.is_disjoint(cb) && a.live.is_disjoint(&b.live)
}

/// The log dirs of a group proved distinct by their own `directory.id`s (one per id, the
/// first in path order).
fn distinct<'a>(group: &[&'a Dir<'a>]) -> Vec<&'a Dir<'a>> {
    let mut seen = BTreeSet::new();
    group
        .iter()
        .filter(|d| d.directory_id().is_some_and(|id| seen.insert(id)))
        .copied()
        .collect()
}

/// Before 3.7: the files compared whole (`BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs`),
/// which `directory.id`s of their own make differ.
fn whole_files(
    group: &[&Dir],
    version: Option<BrokerVersion>,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    let Some(v) = version else { return };
    if v < BrokerVersion(2, 8, 0) || v >= BrokerVersion(3, 7, 0) {
        return; // before 2.8 only broker.id and cluster.id are compared
    }
    let dirs = distinct(group);
    if dirs.len() < 2 {
        return;
    }
    let all_v1 = dirs.iter().all(|d| d.meta.version == 1);
    // Since 3.4 a KRaft broker compares the parsed cluster and node ids only.
    let parsed = v >= BrokerVersion(3, 4, 0);
    if parsed && all_v1 {
        return;
    }
    let assumes = parsed.then_some("a ZooKeeper-mode broker: a KRaft one (after a migration, with these v0 files) compares only the cluster and node ids since 3.4 and starts");
    let (a, b) = (dirs[0], dirs[1]);
    let (da, db) = (a.path(), b.path());
    let ids = dirs
        .iter()
        .filter_map(|d| d.directory_id())
        .collect::<Vec<_>>();
    let message = format!(
        "broker {}'s log dirs {da} and {db} have meta.properties that differ (directory.id {} and {}, written by Kafka 3.7 or later): a broker of version {v} compares the files whole at start and throws InconsistentBrokerMetadataException{}",
        node(a),
        ids[0],
        ids[1],
        if parsed { " in ZooKeeper mode" } else { "" }
    );
    let f = Finding::new(Kind::InconsistentBrokerMetadata, "", -1, message.clone())
        .severity(if parsed { Severity::Warning } else { Severity::Error })
        .segment("meta.properties")
        .evidence(json!({
            "broker": a.meta.node_id, "cluster_id": a.meta.cluster_id,
            "log_dirs": dirs.iter().map(|d| d.path()).collect::<Vec<_>>(),
            "directory_ids": ids, "broker_version": v.to_string(),
            "versions": dirs.iter().map(|d| d.meta.version).collect::<Vec<_>>(),
            "assumes": assumes,
        }))
        .broker(format!("BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs (2.8 to 3.6; a KRaft broker since 3.4 compares only the cluster and node ids) finds more than one distinct meta.properties among the log dirs and throws InconsistentBrokerMetadataException: {NOT_STARTED}; brokers since 3.7 (MetaPropertiesEnsemble.verify) accept a directory.id of each log dir's own"))
        .remediation("the directory.id lines are what a 3.7 or later broker wrote: run a 3.7 or later broker on these log dirs (the downgrade is what fails), or, to run this version, remove the directory.id line from every log dir's meta.properties (keep copies) so that the files are identical");
    let s = startup(
        &dirs,
        "InconsistentBrokerMetadataException",
        "BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs",
        message,
        assumes,
    );
    push(out, f, a.source(), s);
}

/// The KRaft metadata log in two log dirs of one node: `KafkaRaftServer.initializeLogDirs`
/// refuses it in every log dir but `metadata.log.dir`.
fn metadata_logs(
    group: &[&Dir],
    version: Option<BrokerVersion>,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    if version.is_some_and(|v| v < BrokerVersion(2, 8, 0)) {
        return; // no KRaft
    }
    let holders: Vec<&Dir> = distinct(group)
        .into_iter()
        .filter(|d| d.metadata_log)
        .collect();
    if holders.len() < 2 {
        return;
    }
    let paths: Vec<String> = holders.iter().map(|d| d.path()).collect();
    // A v0 file with a directory.id is what a ZooKeeper-mode broker migrating to KRaft
    // writes (KafkaServer.startup, 3.7+): it runs a metadata log too, and its start does
    // not run this check.
    let assumes = holders
        .iter()
        .any(|d| d.meta.version == 0)
        .then_some(KRAFT_NODE);
    let message = format!(
        "node {} holds the KRaft metadata log __cluster_metadata-0 in {} of its log dirs ({}): at most one is its metadata.log.dir, and its next start {}fails — KafkaRaftServer.initializeLogDirs throws KafkaException (unexpected metadata location in a data directory)",
        node(holders[0]),
        holders.len(),
        paths.join(", "),
        if assumes.is_some() {
            "in KRaft mode "
        } else {
            ""
        }
    );
    let f = Finding::new(Kind::UnexpectedMetadataLogDir, "", -1, message.clone())
        .severity(if assumes.is_some() {
            Severity::Warning
        } else {
            Severity::Error
        })
        .segment("__cluster_metadata-0")
        .evidence(json!({"broker": holders[0].meta.node_id, "cluster_id": holders[0].meta.cluster_id, "log_dirs": paths, "assumes": assumes}))
        .broker(format!("KafkaRaftServer.initializeLogDirs (KRaft, 2.8 and later) looks for __cluster_metadata-0 in every log dir with a readable meta.properties other than metadata.log.dir and throws KafkaException when it finds one: {NOT_STARTED}"))
        .remediation("with the node stopped, find which log dir is its metadata.log.dir (or the first of log.dirs when it is not set) and move the __cluster_metadata-0 directory out of every other log dir (keep it as evidence: it is a copy left by a changed metadata.log.dir or a restored backup)");
    let s = startup(
        &holders,
        "KafkaException",
        "KafkaRaftServer.initializeLogDirs",
        message,
        assumes,
    );
    push(out, f, holders[0].source(), s);
}

/// What `unexpected_metadata_log_dir` assumes of log dirs with a v0 `meta.properties`.
const KRAFT_NODE: &str = "a KRaft node (KafkaRaftServer): v0 meta.properties with directory.ids are also what a ZooKeeper-mode broker migrating to KRaft writes (KafkaServer.startup, 3.7 and later), which runs a metadata log without this check and starts";

fn node(d: &Dir) -> String {
    d.meta.node_id.map_or_else(|| "?".into(), |n| n.to_string())
}

fn startup(
    dirs: &[&Dir],
    exception: &'static str,
    thrown_by: &'static str,
    message: String,
    assumes: Option<&'static str>,
) -> BrokerStartup {
    BrokerStartup {
        broker: dirs[0].meta.node_id,
        cluster_id: dirs[0].meta.cluster_id.clone(),
        log_dirs: dirs.iter().map(|d| d.path()).collect(),
        starts: if assumes.is_some() { None } else { Some(false) },
        reason: "",
        exception,
        thrown_by,
        message,
        assumes,
    }
}

/// The starts a 3.7.0 broker does not make: its stray search throws RuntimeException on a
/// log without a topic id ("does not have a topic ID, which is not allowed when running in
/// KRaft mode": `LogManager.findStrayReplicas`, from `BrokerMetadataPublisher.initializeManagers`,
/// whose fatal fault handler stops the process: "Error starting LogManager"). One entry per
/// node, from the `stray_replica` findings (`no_topic_id`) the leadership stage gave for
/// `version` 3.7.0; none for another version.
pub(crate) fn stray_search_stops<'a>(
    findings: impl Iterator<Item = &'a Finding>,
    version: Option<BrokerVersion>,
) -> Vec<BrokerStartup> {
    let mut out: Vec<BrokerStartup> = Vec::new();
    if version != Some(BrokerVersion(3, 7, 0)) {
        return out;
    }
    for f in findings.filter(|f| f.kind == Kind::StrayReplica) {
        let j: crate::finding::evidence::StrayJoint = crate::finding::evidence::read(f);
        if j.reason != "no_topic_id" || out.iter().any(|s| s.broker == Some(j.node_id)) {
            continue;
        }
        out.push(BrokerStartup {
            broker: Some(j.node_id),
            cluster_id: f.source.cluster_id.as_deref().map(str::to_string),
            log_dirs: f.source.log_dir.iter().map(|d| d.to_string()).collect(),
            starts: Some(false),
            reason: Kind::StrayReplica.id(),
            exception: "RuntimeException",
            thrown_by: "LogManager.findStrayReplicas",
            message: f.message.clone(),
            assumes: None,
        });
    }
    out
}

fn push(
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
    mut f: Finding,
    source: Source,
    mut s: BrokerStartup,
) {
    f.source = source;
    s.reason = f.kind.id();
    out.0.push(f);
    out.1.push(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir<'a>(ld: &'a LogDir, live: &[&'a str], checkpointed: Option<&[&'a str]>) -> Dir<'a> {
        let set = |v: &[&'a str]| v.iter().map(|t| (*t, 0)).collect::<BTreeSet<_>>();
        Dir {
            ld,
            meta: parse_meta_properties_unverified(b"version=1\nnode.id=1\ncluster.id=c\n")
                .unwrap(),
            live: set(live),
            checkpointed: checkpointed.map(set),
            metadata_log: false,
        }
    }

    /// One directory id in two log dirs is two log dirs only when both checkpoints name
    /// partitions, none in common, and no live directory is in both.
    #[test]
    fn two_log_dirs_need_disjoint_named_partitions() {
        let ld = LogDir::default();
        let two = |a: Dir, b: Dir| two_log_dirs(&a, &b);
        assert!(two(
            dir(&ld, &["a"], Some(&["a"])),
            dir(&ld, &["b"], Some(&["b"]))
        ));
        assert!(!two(
            dir(&ld, &["a"], Some(&["a", "b"])),
            dir(&ld, &["b"], Some(&["b"]))
        ));
        assert!(!two(
            dir(&ld, &["a"], Some(&["a"])),
            dir(&ld, &["a"], Some(&["b"]))
        ));
        assert!(!two(dir(&ld, &["a"], Some(&["a"])), dir(&ld, &["b"], None)));
        assert!(!two(
            dir(&ld, &[], Some(&[])),
            dir(&ld, &["b"], Some(&["b"]))
        ));
    }

    /// `MetaPropertiesEnsemble` is 3.7's; an unknown version is a current broker.
    #[test]
    fn the_ensemble_runs_from_3_7() {
        assert!(ensemble(None));
        assert!(ensemble(Some(BrokerVersion(3, 7, 0))));
        assert!(!ensemble(Some(BrokerVersion(3, 6, 2))));
    }
}
