//! The findings of the leadership history, and the links of other findings to them.

use super::elections::{Choice, Election};
use super::loss::{self, Loss};
use super::{ClusterHistory, RegisteredDirs, load_all_read};
use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::{Finding, Kind, Severity};
use crate::partition::results::ScanOptions;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Evidence of an `unclean_leader_election`.
#[derive(Debug, Serialize)]
struct UncleanEvidence<'a> {
    metadata_offset: i64,
    metadata_time: i64,
    metadata_log: &'a str,
    previous_leader: i32,
    previous_leader_epoch: i32,
    /// The last live leader before the change, when the previous leader is none (-1).
    last_live_leader: Option<i32>,
    new_leader: i32,
    new_leader_epoch: i32,
    isr_before: &'a [i32],
    elr_before: &'a [i32],
    last_known_elr_before: &'a [i32],
    replicas: &'a [i32],
    leader_recovery_state_written: Option<i8>,
    leader_recovery_state_after: i8,
    single_replica: bool,
    /// The first metadata offset before the election that the replay could not apply
    /// (then the verdict rests on possibly stale state: at most a warning).
    #[serde(skip_serializing_if = "Option::is_none")]
    history_gap_before: Option<i64>,
    /// Which unclean path elected it: `last_known_leader` (KIP-966: ISR and ELR empty, the
    /// one last known ELR member; `PartitionChangeBuilder.canElectLastKnownLeader`, taken
    /// by any election type whatever `unclean.leader.election.enable` says) or
    /// `outside_isr` (`electAnyLeader`'s unclean path).
    path: &'static str,
    /// `unclean.leader.election.enable` as the history set it (topic, else broker/cluster).
    unclean_leader_election_enable: Option<String>,
    #[serde(flatten)]
    loss: &'a Loss,
}

/// Where a finding of `topic`-`partition` is attached: the new leader's replica, else any
/// replica, else the metadata partition itself.
fn home(copies: &[loss::Copy<'_>], leader: i32, meta: Option<usize>) -> Option<usize> {
    copies
        .iter()
        .find(|c| c.report.source.broker_id == Some(leader))
        .or(copies.first())
        .map(|c| c.index)
        .or(meta)
}

fn selected(opts: &ScanOptions, topic: &str, partition: i32) -> bool {
    opts.topic
        .as_deref()
        .is_none_or(|g| crate::partition::scan::glob_match(g, topic))
        && opts.partition.is_none_or(|p| p == partition)
}

/// The value of `unclean.leader.election.enable` for `topic` at metadata offset `at`.
/// The dynamic `unclean.leader.election.enable` in force for `topic` at metadata offset
/// `at`, as the controller resolves it (`KafkaConfigSchema.resolveEffectiveTopicConfig`):
/// the topic's own value, set since the topic's last removal (`RemoveTopicRecord` deletes
/// its configs: `ConfigurationControlManager.deleteTopicConfigs`); else the controller's own
/// broker value, when the metadata log names the controller (its `LEADER_CHANGE`); else the
/// cluster default (the empty broker name). A deleted value falls through to the next
/// scope. Static `server.properties` values are not in the log: `None` then.
fn unclean_config(h: &ClusterHistory, topic: &str, at: i64) -> Option<String> {
    let name = "unclean.leader.election.enable";
    let removed = h
        .history
        .topics
        .iter()
        .filter(|t| !t.created && t.topic == topic && t.offset <= at)
        .map(|t| t.offset)
        .max()
        .unwrap_or(i64::MIN);
    let latest = |scope: &str, resource: &str, after: i64| {
        h.history
            .configs
            .iter()
            .rfind(|c| {
                c.offset <= at
                    && c.offset > after
                    && c.name == name
                    && c.scope == scope
                    && c.resource == resource
            })
            .and_then(|c| c.value.clone())
    };
    let controller = h
        .log
        .quorum
        .iter()
        .rfind(|q| q.offset <= at && q.leader_id.is_some())
        .and_then(|q| q.leader_id);
    latest("topic", topic, removed)
        .map(|v| format!("{v} (topic)"))
        .or_else(|| {
            controller.and_then(|c| {
                latest("broker", &c.to_string(), i64::MIN).map(|v| format!("{v} (controller {c})"))
            })
        })
        .or_else(|| latest("broker", "", i64::MIN).map(|v| format!("{v} (cluster default)")))
}

/// Whether `e` took the last-known-leader path (`canElectLastKnownLeader`: ISR and ELR
/// empty before it, the last known ELR exactly the new leader).
fn last_known_leader(e: &Election) -> bool {
    e.isr_before.is_empty() && e.elr_before.is_empty() && e.last_known_elr_before == [e.leader]
}

fn unclean_finding(h: &ClusterHistory, e: &Election, loss: &Loss) -> Finding {
    let last_known = last_known_leader(e);
    let lost = loss.old_leader_copy.as_ref().and_then(|c| c.lost_offsets);
    let below = loss
        .old_leader_copy
        .as_ref()
        .and_then(|c| c.lost_below_high_watermark);
    // In the ISR before, unclean all the same: the change wrote RECOVERING, which only the
    // unclean path writes — the leader was outside the ISR the change targeted
    // (`PartitionChangeBuilder.tryElection` judges that one, not the ISR before).
    let outside = if e.isr_before.contains(&e.leader) {
        format!(
            "although it was not in the ISR the change targeted: the record writes leader recovery state RECOVERING, which only an unclean election writes (it was in the ISR {:?} before the change)",
            e.isr_before
        )
    } else {
        format!("although it was not in the ISR {:?}", e.isr_before)
    };
    let mut msg = format!(
        "unclean leader election at metadata offset {}: broker {} became leader of {}-{} at leader epoch {} {outside}{}",
        e.offset,
        e.leader,
        e.topic,
        e.partition,
        e.leader_epoch,
        match (e.isr_before.is_empty(), last_known) {
            (true, true) => format!(
                " nor the ELR {:?}: it was the partition's last known leader (KIP-966)",
                e.elr_before
            ),
            (true, false) => format!(" nor the ELR {:?}", e.elr_before),
            _ => String::new(),
        }
    );
    let truncates_to = loss.old_leader_copy.as_ref().and_then(|c| c.truncates_to);
    match (lost, truncates_to.or(loss.start_offset)) {
        (Some(n), Some(s)) if n > 0 => msg.push_str(&format!(
            "; broker {}'s replica holds {n} offsets ({s}–{}) the new leader's log lacks{}{}",
            e.last_live_leader.unwrap_or(-1),
            s + n - 1,
            below
                .map(|b| format!(", at least {b} of them below its checkpointed high watermark"))
                .unwrap_or_default(),
            if truncates_to.is_some() {
                " (their leader-epoch lineages fork before the new epoch: it truncates there when it follows)"
            } else {
                ""
            }
        )),
        (_, Some(s)) => msg.push_str(&format!("; the new epoch starts at offset {s}")),
        _ => {}
    }
    // A record the replay could not apply before the election: the ISR and epochs it is
    // judged against may be stale (no verdict rests on them alone at error).
    let gap = h.log.gaps.iter().copied().filter(|&g| g < e.offset).min();
    if let Some(g) = gap {
        msg.push_str(&format!(
            "; the history misses a record before it (metadata offset {g} could not be applied), so the ISR and leader epoch it is judged against may be stale"
        ));
    }
    let severity = if e.single_replica() {
        Severity::Info
    } else if lost.is_some_and(|n| n > 0) && gap.is_none() {
        Severity::Error
    } else {
        Severity::Warning
    };
    let evidence = UncleanEvidence {
        metadata_offset: e.offset,
        metadata_time: e.time,
        metadata_log: h.log.path.as_str(),
        previous_leader: e.previous_leader,
        previous_leader_epoch: e.previous_epoch,
        last_live_leader: e.last_live_leader,
        new_leader: e.leader,
        new_leader_epoch: e.leader_epoch,
        isr_before: &e.isr_before,
        elr_before: &e.elr_before,
        last_known_elr_before: &e.last_known_elr_before,
        replicas: &e.replicas,
        leader_recovery_state_written: e.recovery_state_written,
        leader_recovery_state_after: e.recovery_state_after,
        single_replica: e.single_replica(),
        history_gap_before: gap,
        path: if last_known {
            "last_known_leader"
        } else if e.reassignment_revert {
            "reassignment_revert"
        } else {
            "outside_isr"
        },
        unclean_leader_election_enable: unclean_config(h, &e.topic, e.offset),
        loss,
    };
    let mut f = Finding::new(Kind::UncleanLeaderElection, &e.topic, e.partition, msg)
        .severity(severity)
        .evidence(serde_json::to_value(&evidence).unwrap_or_default())
        .broker(if e.reassignment_revert {
            "the controller cancelled a reassignment whose ISR held only the replicas being added and fell back to the first original replica (PartitionReassignmentRevert.unclean, accepted only with unclean.leader.election.enable): its log wins, followers truncate to it, and what only the others held is gone"
        } else if last_known {
            "the controller elected the partition's last known leader with the ISR and ELR empty (PartitionChangeBuilder.canElectLastKnownLeader, KIP-966 — in any election, whatever unclean.leader.election.enable says): its log wins, followers truncate to it, and what it did not hold is gone; it left the ELR through an unclean shutdown, which may have cost its own unflushed tail"
        } else {
            "the controller elected a leader outside the ISR (PartitionChangeBuilder.electAnyLeader, unclean path): the new leader's log wins, followers truncate to it, and what only the old leader held is gone"
        })
        .client_error("none at the election; a consumer whose position is past the new leader's log end validates it after the epoch change (OffsetsForLeaderEpoch, KIP-320): LogTruncationException without a reset policy, else it moves back to the divergence point and reads the new leader's records there; a position without a leader epoch gets OFFSET_OUT_OF_RANGE and resets per auto.offset.reset")
        .remediation(match (e.single_replica(), last_known) {
            (true, true) => "the election itself lost nothing (the only replica was elected again); its unclean shutdown may have lost the tail it had not flushed: check that broker's log recovery at its restart",
            (true, false) => "the election itself lost nothing: the partition's only replica was elected again",
            (false, true) => "compare the other replicas with the new leader's before they are truncated (copy their directories now); unclean.leader.election.enable does not prevent this election (the ELR feature's last-known-leader recovery does it)",
            (false, false) => "compare the old leader's replica with the new leader's before it is truncated (copy its directory now); keep unclean.leader.election.enable=false where durability matters",
        });
    if let Some(o) = loss.start_offset {
        f = f.offset(o);
    }
    f
}

/// The epoch the history gives `e`'s partition next with a live leader, when that leader
/// is `e`'s (the same leader's epoch bumped with nothing written in between: the new epoch
/// then starts where `e`'s would have).
fn next_epoch_same_leader(h: &ClusterHistory, e: &Election) -> Option<i32> {
    let t = h.history.partitions.get(&(e.topic_id, e.partition))?;
    let (epoch, leader) = (t.steps.iter().map(|s| &s.state))
        .filter(|st| st.leader >= 0 && st.leader_epoch > e.leader_epoch)
        .map(|st| (st.leader_epoch, st.leader))
        .next()?;
    (leader == e.leader).then_some(epoch)
}

/// The findings of one history, keyed by partition index; `links` gets, per unclean
/// election `(topic, partition, epoch)`, the identity key of its finding.
fn findings(
    h: &ClusterHistory,
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    meta_index: Option<usize>,
    out: &mut Vec<(Option<usize>, Finding)>,
    links: &mut Vec<ElectionLink>,
) {
    for e in h.elections.iter().filter(|e| e.choice == Choice::Unclean) {
        if !selected(opts, &e.topic, e.partition) {
            continue;
        }
        let copies = loss::copies_of(report, inv, &h.source, (&e.topic, e.partition), &e.topic_id);
        let next = next_epoch_same_leader(h, e);
        let loss = loss::of_election(e, &copies, inv, next);
        let f = unclean_finding(h, e, &loss);
        links.push(ElectionLink {
            topic: e.topic.clone(),
            topic_id: e.topic_id,
            partition: e.partition,
            epoch: e.leader_epoch,
            loser: e.last_live_leader.filter(|b| *b != e.leader),
            key: f.identity_key(),
        });
        out.push((home(&copies, e.leader, meta_index), f));
    }
    out.extend(super::notes::of_log(h, meta_index));
    out.extend(super::quorum_conflict::findings(h, report));
    out.extend(super::epochs::check(h, report, inv));
    out.extend(super::stray::check(h, report, inv, opts.broker_version));
    out.extend(super::future::check(h, report, inv, opts.broker_version));
}

/// An unclean election's finding, for the links.
#[derive(Debug, Clone)]
pub(super) struct ElectionLink {
    pub topic: String,
    /// The incarnation of the topic the election was in.
    pub topic_id: [u8; 16],
    pub partition: i32,
    pub epoch: i32,
    /// The previous leader, who lost the election.
    pub loser: Option<i32>,
    pub key: String,
}

/// Replay every metadata log of `inv`, add the findings to `report` and link the replica
/// divergences and hanging transactions that follow from an unclean election to it; keep
/// each image's registered directory ids in `report.registered_dirs`.
pub fn run(report: &mut ScanReport, inv: &Inventory, opts: &ScanOptions) {
    let (histories, unread) = load_all_read(inv, opts.max_bytes, opts.max_decompressed);
    run_over(report, inv, opts, &histories, &unread);
}

/// [`run`] over the metadata logs already replayed ([`load_all_read`] of `inv`, done once
/// by the pipeline before the coordinator's copy choice reads the histories): the
/// histories and the files that could not be read.
pub fn run_over(
    report: &mut ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    histories: &[ClusterHistory],
    unread: &[(std::path::PathBuf, String)],
) {
    unread_findings(report, unread);
    if histories.is_empty() {
        return;
    }
    report.registered_dirs = histories.iter().map(RegisteredDirs::of).collect();
    let mut out = Vec::new();
    let mut links = Vec::new();
    for h in histories {
        let meta_index = report
            .partitions
            .iter()
            .position(|p| p.source.path == h.source.path);
        findings(h, report, inv, opts, meta_index, &mut out, &mut links);
    }
    attach(report, out);
    if !links.is_empty() {
        super::links::apply(report, inv, histories, &links);
    }
    let softened = super::clean::apply(report, inv, histories);
    if !links.is_empty() || softened {
        report.recount_findings();
    }
}

/// Index the links by `(topic, partition)`.
pub(super) fn by_partition(links: &[ElectionLink]) -> HashMap<(&str, i32), Vec<&ElectionLink>> {
    let mut m: HashMap<(&str, i32), Vec<&ElectionLink>> = HashMap::new();
    for l in links {
        m.entry((l.topic.as_str(), l.partition))
            .or_default()
            .push(l);
    }
    m
}

/// An `unreadable_file` finding for each file of a metadata log the replay could not read
/// (`quorum-state`, the log dir's `bootstrap.checkpoint`, a snapshot), with the metadata
/// partition it was read for: the history, and every verdict resting on it, lacks what
/// they hold. A segment the scan's own walk could not read already has its finding.
fn unread_findings(report: &mut ScanReport, unread: &[(std::path::PathBuf, String)]) {
    // Said already: an `unreadable_file` finding whose file — its `segment`, a name in its
    // partition directory (`source.path`) or a path of its own — is this one.
    let said = |path: &std::path::Path| {
        report
            .findings
            .iter()
            .any(|f| f.names_unreadable_file(path))
    };
    // The metadata partition a file belongs to: the one it is in, or (a log dir's
    // `bootstrap.checkpoint`) the one beside it.
    let owner = |file: &std::path::Path| {
        report.partitions.iter().position(|r| {
            let dir = std::path::Path::new(&r.path);
            r.topic == "__cluster_metadata"
                && (file.parent() == Some(dir) || file.parent() == dir.parent())
        })
    };
    let mut out = Vec::new();
    for (path, why) in unread {
        if said(path) {
            continue;
        }
        let p = path.display().to_string();
        let i = owner(path);
        let (topic, partition) = i.map_or(("", -1), |i| {
            let r = &report.partitions[i];
            (r.topic.as_str(), r.partition)
        });
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let f = Finding::new(
            Kind::UnreadableFile,
            topic,
            partition,
            format!("cannot read {p}: {why}"),
        )
        .segment(if i.is_some() { name } else { p })
        .evidence(serde_json::json!({"reason": "io_error", "error": why}))
        .broker("not applicable: the metadata history lacks what this file holds");
        out.push((i, f));
    }
    attach(report, out);
}

/// Add findings to the report: to the partition at their index, or (`None`) to those of
/// no partition.
fn attach(report: &mut ScanReport, out: Vec<(Option<usize>, Finding)>) {
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    let mut loose = Vec::new();
    for (i, f) in out {
        match i {
            Some(i) => extra.entry(i).or_default().push(f),
            None => loose.push(f),
        }
    }
    report.add_partition_findings(extra);
    if !loose.is_empty() {
        report.findings.extend(loose);
        report.recount_findings();
    }
}
