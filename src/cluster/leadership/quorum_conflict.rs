//! A node's `quorum-state` against the metadata log: the leader it names for an epoch and the
//! leader that epoch's `LeaderChangeMessage` names.
//!
//! KRaft elects at most one leader per epoch (a voter grants one vote per epoch,
//! `QuorumState.transitionToUnattachedVotedState`; a candidate needs a majority; the
//! simulation's `SingleLeader` invariant, `RaftEventSimulationTest`), and the new leader's
//! first batch of the epoch is its `LeaderChangeMessage` (`LeaderState.appendStartOfEpochControlRecords`).
//! Every node stores the leader it learns for the epoch in `quorum-state`
//! (`FileQuorumStateStore.writeElectionState`). A file naming another leader for an epoch whose
//! `LeaderChangeMessage` the cluster's metadata log holds is a state no quorum writes: a file
//! from another cluster or another formatting of this one, or edited by hand. Its node's
//! start takes it (`QuorumState.initialize`: the stored election of the log's latest epoch
//! or later is kept) and follows a node that did not lead that epoch.
//!
//! Silent where the log holds no `LeaderChangeMessage` of the file's epoch (below the
//! snapshot the history starts from, or a later epoch not yet fetched): nothing to compare.

use super::ClusterHistory;
use crate::cluster::report::ScanReport;
use crate::finding::{Finding, Kind};

/// The `quorum_state_leader_conflict` findings of `h`'s copies, each with the index of its
/// copy's partition in `report`.
pub(super) fn findings(h: &ClusterHistory, report: &ScanReport) -> Vec<(Option<usize>, Finding)> {
    let mut out = Vec::new();
    for (path, q) in &h.quorum_states {
        let (Some(named), Some(epoch)) = (q.leader_id.filter(|l| *l >= 0), q.leader_epoch) else {
            continue;
        };
        let logged = (h.log.quorum.iter())
            .find(|e| e.control_type == "LEADER_CHANGE" && e.raft_epoch == epoch)
            .and_then(|e| e.leader_id.map(|l| (e.offset, l)));
        let Some((offset, leader)) = logged.filter(|(_, l)| *l != named) else {
            continue;
        };
        let index = report.partitions.iter().position(|p| &p.path == path);
        let f = Finding::new(
            Kind::QuorumStateLeaderConflict,
            "__cluster_metadata",
            0,
            format!(
                "quorum-state names node {named} the leader of epoch {epoch}, but the metadata log's LeaderChangeMessage of epoch {epoch} (offset {offset}) names node {leader}: no KRaft quorum elects two leaders for one epoch"
            ),
        )
        .segment("quorum-state")
        .evidence(serde_json::json!({
            "file": format!("{path}/quorum-state"),
            "leader_epoch": epoch,
            "quorum_state_leader": named,
            "log_leader": leader,
            "leader_change_offset": offset,
            "metadata_log": h.log.path,
        }))
        .broker("QuorumState.initialize keeps the stored election when its epoch is the log's latest or later: the node starts as a follower of the node the file names at that epoch, which did not lead it, and cannot fetch from it until a later election moves the quorum to a new epoch; a file no quorum writes (another cluster's, an earlier formatting's, or edited)")
        .client_error("none from this file alone: the node's clients fail over while it cannot follow the leader")
        .remediation("with the node stopped, keep the file as evidence and move quorum-state out of the directory: the node starts unattached at the log's latest epoch and learns the leader from the quorum (with the other voters up); find where the file came from before anything else is copied between nodes");
        out.push((index, f));
    }
    out
}
