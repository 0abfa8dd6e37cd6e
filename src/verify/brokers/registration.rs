//! What the controller does with a broker's registration at its next start (3.7 and
//! later): `ClusterControlManager.registerBroker` refuses a registration naming a
//! directory id that the image registers for another broker (`InvalidRegistrationException`,
//! "Broker N is already registered with directory …":
//! `ClusterControlManagerTest.testRegisterWithDuplicateDirectoryId`). The broker sends the
//! `directory.id` of each online log dir (`BrokerLifecycleManager`, from
//! `LogManager.directoryIdsSet`) and retries; it never registers, and once
//! `initial.broker.registration.timeout.ms` passes `BrokerLifecycleManager` gives up
//! (`RegistrationTimeoutEvent`) and `BrokerServer.startup`, waiting for the controller to
//! acknowledge the broker, throws: the start fails.
//!
//! The image is the replayed metadata log's at its end (`cluster::leadership`'s
//! [`RegisteredDirs`]: only registrations the history holds every later change of), so
//! the verdict holds as of that offset. Judged only where one reading remains: the log
//! dir's `cluster.id` is the metadata log's, its node id is not the registering broker's,
//! the node is a broker (the image names it, or a v1 log dir holds a `LogManager`'s
//! files: a controller-only node registers nothing, and a v0 file may be a ZooKeeper-mode
//! broker's that never registers with a KRaft controller), and the image's
//! `metadata.version` has the controller check directories. One log dir carrying an id
//! its own broker registered (a re-registration), or one whose registering broker was
//! unregistered since, is what the controller accepts: nothing is said.

use super::{BrokerStartup, Dir, push};
use crate::cluster::leadership::RegisteredDirs;
use crate::finding::{Finding, Kind};
use crate::read::format::checkpoint::encode_uuid;
use serde_json::json;
use std::collections::BTreeMap;

/// One log dir of broker `node` carrying a directory id the image registers for `owner`.
struct Conflict<'a, 'b> {
    dir: &'b Dir<'a>,
    id: [u8; 16],
    /// The registering broker and the offset of its `RegisterBrokerRecord`.
    owner: (i32, i64),
}

/// The starts refused over `dirs` (path order) against each image of `registered`: one
/// finding per log dir carrying another broker's registered id, one `broker_startup`
/// entry per broker.
pub(super) fn check(
    dirs: &[Dir],
    registered: &[RegisteredDirs],
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    for r in registered.iter().filter(|r| r.checks_directories()) {
        let Some(cluster) = r.source.cluster_id.as_deref() else {
            continue; // the metadata log's cluster is unknown: not known to be the nodes'
        };
        let mut by_node: BTreeMap<i32, Vec<Conflict>> = BTreeMap::new();
        for d in dirs {
            let (Some(node), Some(id)) = (d.meta.node_id, d.meta.directory_id) else {
                continue;
            };
            if d.meta.cluster_id.as_deref() != Some(cluster)
                || d.meta.reserved_directory_id().is_some()
                || !is_broker(d, node, r)
            {
                continue;
            }
            if let Some(&owner) = r.others(&id, node).first() {
                by_node
                    .entry(node)
                    .or_default()
                    .push(Conflict { dir: d, id, owner });
            }
        }
        for (node, conflicts) in by_node {
            refused(node, &conflicts, dirs, r, out);
        }
    }
}

/// Whether node `node` of log dir `d` registers with the controller at its start: the
/// image names it in a broker record, or the file is v1 (a KRaft node) and the log dir
/// holds the files a broker's `LogManager` writes.
fn is_broker(d: &Dir, node: i32, r: &RegisteredDirs) -> bool {
    let ld = d.ld;
    let log_manager = ld.recovery_point_checkpoint.is_some()
        || ld.log_start_offset_checkpoint.is_some()
        || ld.replication_offset_checkpoint.is_some()
        || ld.clean_shutdown.is_some();
    r.brokers.contains(&node) || d.meta.version == 1 && log_manager
}

/// The findings and the startup entry of broker `node`, whose log dirs `conflicts`
/// carry ids the image `r` registers for other brokers.
fn refused(
    node: i32,
    conflicts: &[Conflict],
    dirs: &[Dir],
    r: &RegisteredDirs,
    out: &mut (Vec<Finding>, Vec<BrokerStartup>),
) {
    let findings: Vec<Finding> = conflicts
        .iter()
        .map(|c| finding(node, c, dirs, r))
        .collect();
    let first = &conflicts[0];
    let s = BrokerStartup {
        broker: Some(node),
        cluster_id: first.dir.meta.cluster_id.clone(),
        log_dirs: conflicts.iter().map(|c| c.dir.path()).collect(),
        starts: Some(false),
        reason: "",
        exception: "RuntimeException",
        thrown_by: "BrokerServer.startup",
        message: findings[0].message.clone(),
        assumes: None,
    };
    let mut findings = findings.into_iter();
    if let Some(f) = findings.next() {
        push(out, f, first.dir.source(), s);
    }
    for (mut f, c) in findings.zip(&conflicts[1..]) {
        f.source = c.dir.source();
        out.0.push(f);
    }
}

/// The `duplicate_directory_id` finding of one conflict.
fn finding(node: i32, c: &Conflict, dirs: &[Dir], r: &RegisteredDirs) -> Finding {
    let (dir, id) = (c.dir.path(), encode_uuid(&c.id));
    let (owner, at) = c.owner;
    let end = r.end_offset;
    // The registering broker's own log dirs of that id in the inputs (where it came from).
    let mut log_dirs = vec![dir.clone()];
    log_dirs.extend(
        dirs.iter()
            .filter(|d| d.meta.node_id == Some(owner) && d.meta.directory_id == Some(c.id))
            .filter(|d| d.meta.cluster_id == c.dir.meta.cluster_id)
            .map(|d| d.path()),
    );
    let message = format!(
        "{dir}/meta.properties carries directory.id {id}, which the metadata log registers for broker {owner} (its registration at metadata offset {at}, still in the image at offset {end}): broker {node}'s next start fails — the controller refuses its registration (ClusterControlManager.registerBroker: InvalidRegistrationException, Broker {owner} is already registered with directory {id})"
    );
    Finding::new(Kind::DuplicateDirectoryId, "", -1, message)
        .segment("meta.properties")
        .evidence(json!({
            "broker": node, "cluster_id": c.dir.meta.cluster_id, "directory_id": id,
            "log_dirs": log_dirs, "registered_by": owner, "registered_at": at,
            "metadata_log": r.source.path, "metadata_offset": end,
            "refused_by": "ClusterControlManager.registerBroker",
        }))
        .broker(format!("ClusterControlManager.registerBroker (3.7 and later, with metadata.version 3.7-IV2 or later) refuses a registration naming a directory id that its directoryToBroker map (rebuilt from the metadata log: ClusterControlManager.replay of RegisterBrokerRecord.LogDirs) holds for another broker: InvalidRegistrationException. Broker {node} sends the directory.id of each online log dir (BrokerLifecycleManager, from LogManager.directoryIdsSet) and retries; it never registers, BrokerLifecycleManager gives up after initial.broker.registration.timeout.ms and BrokerServer.startup, waiting for the controller to acknowledge the broker, throws RuntimeException: the broker does not start, and its partitions stay on their other replicas (offline where it held the only in-sync one). The refusal lasts while broker {owner} stays registered with that directory (an UnregisterBrokerRecord, kafka-cluster.sh unregister, removes it); brokers before 3.7 send no directory ids"))
        // `kafka-cluster.sh unregister` needs a connection: `ClusterTool.execute` gives each
        // subcommand a required group of `--bootstrap-server`/`--bootstrap-controller`
        // (argparse4j refuses the line without one); `--id` is the broker's node id.
        .remediation(format!("{dir} was copied or moved from broker {owner}'s log dir (its directory.id kept): with broker {node} stopped, remove the directory.id line from {dir}/meta.properties (keep a copy of the file), so the start writes the log dir a new id (MetaPropertiesEnsemble.Copier.generateValidDirectoryId); if broker {owner} is gone for good, unregistering it (kafka-cluster.sh unregister --bootstrap-server <broker> --id {owner}) also frees the id"))
}
