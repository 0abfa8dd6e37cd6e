//! Leader elections in a replayed history, and which of them chose a leader outside the
//! replicas Kafka's controller counts as clean.
//!
//! `PartitionChangeBuilder.electAnyLeader` keeps the current leader when it is still a
//! valid choice, else takes the first valid replica, where `isValidNewLeader` accepts a
//! member of the ISR, or — only when the ISR is empty — a member of the ELR (KIP-966).
//! Past those it may take the single member of the last known ELR
//! (`canElectLastKnownLeader`, ISR and ELR both empty) or, with
//! `unclean.leader.election.enable`, any live replica: both are unclean elections, which
//! set the ISR to the new leader alone and (when not already so) the leader recovery state
//! to RECOVERING (1). Nothing writes the recovery state back before the new leader has
//! recovered, and a second unclean election while it is 1 writes no new value, so the
//! state is evidence for an unclean election but never required: the choice is judged
//! against the ISR and ELR before the change.

use super::replay::{History, PartitionState, Timeline};
use crate::read::format::metadata::{PartitionChange, TopicId};
use serde::{Deserialize, Serialize};

/// How a new leader was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// A member of the ISR before the change.
    Isr,
    /// A member of the ELR while the ISR is empty (`isValidNewLeader`).
    Elr,
    /// Neither: an unclean election (including the last-known-leader path).
    Unclean,
}

/// One leader change to a live leader (a change from another leader or from none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Election {
    pub topic: String,
    pub topic_id: TopicId,
    pub partition: i32,
    /// Metadata offset and time of the change.
    pub offset: i64,
    pub time: i64,
    /// The leader and epoch before (`-1`: none).
    pub previous_leader: i32,
    pub previous_epoch: i32,
    /// The last live leader before the change (the previous leader, or the one before a
    /// leaderless spell); `None` when the history holds none.
    pub last_live_leader: Option<i32>,
    pub leader: i32,
    pub leader_epoch: i32,
    pub isr_before: Vec<i32>,
    pub elr_before: Vec<i32>,
    pub last_known_elr_before: Vec<i32>,
    pub replicas: Vec<i32>,
    /// The recovery state the change wrote (`None`: unchanged).
    pub recovery_state_written: Option<i8>,
    pub recovery_state_after: i8,
    pub choice: Choice,
    /// The change cancelled a reassignment and fell back to an original replica outside
    /// the ISR ([`reassignment_revert`]).
    #[serde(default)]
    pub reassignment_revert: bool,
}

impl Election {
    /// The partition has one replica, the new leader: re-electing it loses nothing.
    pub fn single_replica(&self) -> bool {
        self.replicas.len() <= 1 && self.replicas.iter().all(|r| *r == self.leader)
    }
}

/// How `leader` relates to the state `prev` for the change `c`. `isValidNewLeader` judges
/// the ISR and ELR the change targets, which the record writes when they differ from
/// those before: the ISR after a reassignment it completes, or with members an
/// AlterPartition adds in the same change. What the record shows:
///
/// * RECOVERING written to a partition that was not recovering: only `tryElection`'s
///   unclean path writes it — unclean, whoever was in the ISR before.
/// * the leader in the ISR before, or in a written ISR with other members (an unclean
///   election writes the new leader alone): the ISR.
/// * the leader in the ELR before: the ELR path when the ISR was already empty, or the
///   record keeps a non-empty ELR (an unclean election clears it, `maybeUpdateRecordElr`),
///   or — the ISR emptying in this change as its last member leaves and the chosen ELR
///   member its last one — the partition was not recovering: a partition with an ELR runs
///   a metadata version with leader recovery (4.0+), so an unclean election would have
///   written RECOVERING.
///
/// * the leader alone in the ISR the change writes, outside the ISR and ELR before, with
///   no RECOVERING written to a partition that was not recovering, under a metadata
///   version with leader recovery (3.2+, `recovery_supported`): the ISR the change
///   targeted (an unclean election there would have written RECOVERING).
///
/// * the change completes a reassignment and elects a replica it was adding
///   ([`reassignment_completed`]): the ISR, at any metadata version.
///
/// Otherwise unclean: without the metadata version, such a record is read as unclean
/// (before 3.2 no election writes RECOVERING: the record alone does not tell).
pub fn classify(
    prev: &PartitionState,
    c: &PartitionChange,
    leader: i32,
    recovery_supported: bool,
) -> Choice {
    if c.leader_recovery_state == 1 && prev.recovery_state != 1 {
        return Choice::Unclean;
    }
    let in_written_isr = c
        .isr
        .as_ref()
        .is_some_and(|i| i.len() > 1 && i.contains(&leader));
    if prev.isr.contains(&leader) || in_written_isr {
        return Choice::Isr;
    }
    if reassignment_revert(prev, c, leader) {
        return Choice::Unclean;
    }
    if reassignment_completed(prev, c, leader) {
        return Choice::Isr;
    }
    let alone_in_written_isr = c.isr.as_deref() == Some(&[leader][..]);
    if alone_in_written_isr
        && recovery_supported
        && prev.recovery_state != 1
        && !prev.elr.contains(&leader)
    {
        return Choice::Isr;
    }
    if prev.elr.contains(&leader) {
        let elr_kept = match &c.eligible_leader_replicas {
            None => true,
            Some(e) => !e.is_empty(),
        };
        if prev.isr.is_empty() || elr_kept || prev.recovery_state != 1 {
            return Choice::Elr;
        }
    }
    Choice::Unclean
}

/// Cancelling a reassignment whose ISR holds only the replicas it was adding falls back to
/// the first original replica alone (`PartitionReassignmentRevert`: its `unclean()`, which
/// the cancellation accepts only with unclean.leader.election.enable); it writes no
/// RECOVERING, since the targeted ISR makes that replica a valid leader. The change clears
/// the adding replicas (and the removing ones, which a record writes only when they change:
/// a reassignment that only added replicas had none).
pub fn reassignment_revert(prev: &PartitionState, c: &PartitionChange, leader: i32) -> bool {
    let clears_removing = match c.removing_replicas.as_deref() {
        Some(r) => r.is_empty(),
        None => prev.removing.is_empty(),
    };
    c.adding_replicas.as_deref() == Some(&[][..])
        && clears_removing
        && !prev.adding.is_empty()
        && !prev.adding.contains(&leader)
        && prev.isr.iter().all(|r| prev.adding.contains(r))
}

/// A change that completes a reassignment and elects one of the replicas it was adding.
/// `PartitionChangeBuilder.completeReassignmentIfNeeded` runs before the election and
/// completes only when the targeted ISR holds every adding replica, which it then keeps as
/// the ISR: such a leader was in that ISR, a valid choice (an unclean pick is by definition
/// outside it). Clean whatever the metadata version: before 3.2 no record says RECOVERING,
/// and this one needs no such word (`PartitionChangeBuilderTest.
/// testIsrEnlargementCompletesReassignment`). The change clears the adding replicas.
pub fn reassignment_completed(prev: &PartitionState, c: &PartitionChange, leader: i32) -> bool {
    c.adding_replicas.as_deref() == Some(&[][..])
        && prev.adding.contains(&leader)
        && c.isr.as_ref().is_none_or(|i| i.contains(&leader))
        && c.replicas.as_ref().is_none_or(|r| r.contains(&leader))
}

/// The elections of one partition's timeline; `metadata_version_at` gives the
/// `metadata.version` level at a metadata offset, when known.
pub fn of_timeline(
    t: &Timeline,
    metadata_version_at: impl Fn(i64) -> Option<i16>,
) -> Vec<Election> {
    let mut out = Vec::new();
    let mut last_live: Option<i32> = None;
    for w in t.steps.windows(2) {
        let (prev, step) = (&w[0].state, &w[1]);
        if prev.leader >= 0 {
            last_live = Some(prev.leader);
        }
        let Some(c) = &step.change else { continue };
        let next = &step.state;
        if c.leader < 0 || c.leader == prev.leader {
            continue;
        }
        out.push(Election {
            topic: t.topic.clone(),
            topic_id: t.topic_id,
            partition: t.partition,
            offset: next.offset,
            time: next.time,
            previous_leader: prev.leader,
            previous_epoch: prev.leader_epoch,
            last_live_leader: last_live,
            leader: next.leader,
            leader_epoch: next.leader_epoch,
            isr_before: prev.isr.clone(),
            elr_before: prev.elr.clone(),
            last_known_elr_before: prev.last_known_elr.clone(),
            replicas: next.replicas.clone(),
            recovery_state_written: (c.leader_recovery_state >= 0)
                .then_some(c.leader_recovery_state),
            recovery_state_after: next.recovery_state,
            // IBP_3_2_IV0 (level 3): MetadataVersion.isLeaderRecoverySupported.
            choice: classify(
                prev,
                c,
                next.leader,
                metadata_version_at(next.offset).is_some_and(|l| l >= 3),
            ),
            reassignment_revert: reassignment_revert(prev, c, next.leader),
        });
    }
    out
}

/// Every election of the history, in partition order.
pub fn all(h: &History) -> Vec<Election> {
    h.partitions
        .values()
        .flat_map(|t| of_timeline(t, |o| h.metadata_version_at(o)))
        .collect()
}
