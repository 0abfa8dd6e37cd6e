//! What `KafkaRaftServer.initializeLogDirs` requires of each log dir after
//! `MetaPropertiesEnsemble.verify` has passed: a `meta.properties` (a log dir the loader
//! found without one is an *empty* dir to the ensemble, which `verify` accepts), and in it
//! a node id and a cluster id (a v0 file may lack either: `MetaProperties.Builder` reads it,
//! and `verify` requires them of v1 files only). A miss throws `RuntimeException` and the
//! node does not start.
//!
//! Only a KRaft node runs these checks, and only `--broker-version` 4.0 or later says the
//! broker is one (ZooKeeper mode was removed in 4.0). Before, a ZooKeeper-mode broker takes
//! its ids from its configuration and writes a missing file itself, and nothing in the
//! files tells the two modes apart: nothing is said (`KafkaRaftServerTest.
//! testStartupFailsIfMetaPropertiesMissingInSomeLogDir`, `MetaPropertiesTest.
//! testV0SerializationWithJustClusterId`, `…WithJustNodeId`).

use super::{BrokerStartup, Dir, NOT_STARTED, push, startup};
use crate::discover::layout::{Inventory, LogDir};
use crate::finding::{Finding, Kind, Severity, Source};
use crate::partition::recovery::BrokerVersion;
use serde_json::json;
use std::sync::Arc;

/// What a prediction about a log dir without `meta.properties` assumes.
const IN_LOG_DIRS: &str =
    "the directory is one of the node's log.dirs, not a copy that left meta.properties behind";

/// The checks over `inv`'s log dirs (`dirs`: those whose file was read), in the order a
/// start meets them (the log dirs' path order).
pub(super) fn check(
    inv: &Inventory,
    dirs: &[Dir],
    version: Option<BrokerVersion>,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    let Some(v) = version.filter(|v| *v >= BrokerVersion(4, 0, 0)) else {
        return;
    };
    let mut faults: Vec<(String, Finding, Source, BrokerStartup)> = Vec::new();
    // A log dir recognised only by its partition directories is not judged: nothing says
    // a broker used it as a log dir.
    for ld in inv
        .log_dirs
        .iter()
        .filter(|ld| ld.meta_properties.is_none() && ld.has_markers())
    {
        faults.push(missing(ld, v));
    }
    for d in dirs.iter().filter(|d| d.meta.version == 0) {
        faults.extend(incomplete(d, v));
    }
    faults.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, f, source, s) in faults {
        push(out, f, source, s);
    }
}

/// A log dir holding a broker's files but no `meta.properties`.
fn missing(ld: &LogDir, v: BrokerVersion) -> (String, Finding, Source, BrokerStartup) {
    let dir = ld.path.display().to_string();
    let message = format!(
        "{dir} holds a broker's log-dir files but no meta.properties: a broker of version {v} (a KRaft node) with it in log.dirs does not start — KafkaRaftServer.initializeLogDirs throws RuntimeException (no meta.properties found: the directory was never formatted by kafka-storage.sh)"
    );
    let f = Finding::new(Kind::MetaPropertiesMissing, "", -1, message.clone())
        .segment("meta.properties")
        .evidence(json!({"log_dir": dir, "broker_version": v.to_string(), "assumes": IN_LOG_DIRS}))
        .broker(format!("MetaPropertiesEnsemble.Loader.load files a log dir without meta.properties as empty and verify accepts it; KafkaRaftServer.initializeLogDirs (every broker since 4.0) then requires the file in each log dir that is not an error dir: {NOT_STARTED}"))
        .remediation(format!("if {dir} is one of the node's log.dirs: with the node stopped, put back its meta.properties (a backup; or a copy of another log dir's file of the same node without its directory.id line, so the start writes the log dir a new id); if it is a copy, nothing on the broker needs doing"));
    let source = Source {
        log_dir: Some(Arc::from(dir.as_str())),
        ..Default::default()
    };
    let s = BrokerStartup {
        broker: None,
        cluster_id: None,
        log_dirs: vec![dir.clone()],
        starts: None,
        reason: "",
        exception: "RuntimeException",
        thrown_by: "KafkaRaftServer.initializeLogDirs",
        message,
        assumes: Some(IN_LOG_DIRS),
    };
    (dir, f, source, s)
}

/// A v0 file without a node id (`broker.id`) or a `cluster.id`.
fn incomplete(d: &Dir, v: BrokerVersion) -> Option<(String, Finding, Source, BrokerStartup)> {
    let node = d.meta.node_id.is_none().then_some("broker.id");
    let cluster = d.meta.cluster_id.is_none().then_some("cluster.id");
    let lacks: Vec<&str> = [node, cluster].into_iter().flatten().collect();
    if lacks.is_empty() {
        return None;
    }
    let dir = d.path();
    // The node id is asked for first.
    let thrown = if node.is_some() {
        "node ID not found"
    } else {
        "cluster ID not found"
    };
    let message = format!(
        "{dir}/meta.properties (version 0) has no {}: a broker of version {v} (a KRaft node) does not start — KafkaRaftServer.initializeLogDirs throws RuntimeException ({thrown})",
        lacks.join(" and no ")
    );
    let f = Finding::new(Kind::MetaPropertiesIncomplete, "", -1, message.clone())
        .severity(Severity::Error)
        .segment("meta.properties")
        .evidence(json!({"log_dir": dir, "version": 0, "lacks": lacks, "node_id": d.meta.node_id,
            "cluster_id": d.meta.cluster_id, "broker_version": v.to_string()}))
        .broker(format!("MetaPropertiesEnsemble.verify accepts a v0 file without either id (it requires them of v1 files); KafkaRaftServer.initializeLogDirs (every broker since 4.0) then requires both in each log dir: {NOT_STARTED}. A v0 file is what a ZooKeeper-mode broker wrote, which took the missing ids from its configuration and ZooKeeper"))
        .remediation(format!("with the broker stopped, add what {dir}/meta.properties lacks (keep a copy of the file): broker.id=<the node.id of its configuration>, cluster.id=<the cluster's id, from another log dir's meta.properties or the controllers'>; a ZooKeeper-era broker's log dirs reach 4.0 through the KRaft migration, which rewrites these files"));
    let s = startup(
        &[d],
        "RuntimeException",
        "KafkaRaftServer.initializeLogDirs",
        message,
        None,
    );
    Some((dir, f, d.source(), s))
}
