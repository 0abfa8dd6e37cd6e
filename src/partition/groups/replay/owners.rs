//! Who holds each partition of a consumer group, and each active task of a streams group,
//! in the members' current assignments, as the coordinator's load tracks it while it
//! replays them:
//!
//! * consumer groups: `ConsumerGroup.updateMember` → `maybeUpdatePartitionEpoch` drops the
//!   member's previous partitions (`removePartitionEpochs`) and sets its assigned and
//!   pending-revocation partitions at its member epoch (`addPartitionEpochs`), which
//!   throws on a partition another member still holds ("Cannot set the epoch of … because
//!   the partition is still owned at epoch …"). Since KAFKA-19862 (PR #20907, December
//!   2025, on trunk for 4.2 and backported to the 4.0 and 4.1 branches) a claim at a
//!   member epoch above the holder's replaces it, one at the same or a lower epoch still
//!   throws, and the removal no longer throws;
//! * streams groups: `StreamsGroup.updateMember` → `maybeUpdateTaskProcessId` sets the
//!   member's active tasks (assigned and pending revocation) to its process id
//!   (`addTaskProcessId`), which throws on a task another member holds ("Cannot set the
//!   process ID of … because the partition is still owned by process ID …"), whatever the
//!   epochs, before KAFKA-19862 (4.1.0 and 4.1.1, the releases with streams groups before
//!   it); since (4.1.2, 4.2.0), it sets the claimant's process and only logs the previous
//!   one, whatever the epochs. A member whose process id is not known when its current assignment is
//!   replayed (no member metadata before it) is not tracked: what its later metadata
//!   record makes of its tasks depends on the release (`removeTaskProcessIds` throws on a
//!   mismatch in the October 2025 tree, only logs it in a later one), so no verdict is
//!   drawn on it. Standby and warm-up
//!   tasks may be held by several processes: no clash;
//! * share groups track nothing: a share partition is shared by design.
//!
//! A clash is reported and the claim taken over by the claimant, so the replay goes on as
//! the releases that accept a newer claim do.

use super::super::model::GroupType;
use super::{AnomalyKind, Input, Replay};
use crate::finding::evidence::{self, LoadFailsIn, LoadJoint};
use serde_json::json;
use std::collections::BTreeMap;

/// The holder of one partition or task: the member and its epoch when it claimed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    pub member: String,
    pub epoch: i32,
}

/// One claim of a current assignment that another member (or the same record twice: a
/// partition both assigned and pending revocation) still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Clash {
    /// `topicId:partition` (consumer) or `subtopology:partition` (streams active task).
    pub item: String,
    pub holder: Holder,
}

/// The holders of every group's partitions or active tasks.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    by_group: BTreeMap<String, BTreeMap<String, Holder>>,
    /// Per group and member: what it holds, to drop on its next record.
    held: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl Owners {
    /// `member` of `group` now holds `assigned` and `pending` (its current assignment) at
    /// `epoch`: what it held before is dropped, and every claim another holder still has
    /// (or that is both assigned and pending) is returned as a [`Clash`]. The claims are
    /// taken whatever the clashes.
    pub(crate) fn update(
        &mut self,
        group: &str,
        member: &str,
        epoch: i32,
        assigned: &[String],
        pending: &[String],
    ) -> Vec<Clash> {
        self.release(group, member);
        let holders = self.by_group.entry(group.to_string()).or_default();
        let mut clashes = Vec::new();
        let mut held = Vec::new();
        for list in [assigned, pending] {
            // One list is a set in Kafka (`Map<Uuid, Set<Integer>>`): a repeat is no claim.
            let mut seen = std::collections::BTreeSet::new();
            for item in list.iter().filter(|i| seen.insert(i.as_str())) {
                let new = Holder {
                    member: member.to_string(),
                    epoch,
                };
                if let Some(prev) = holders.insert(item.clone(), new) {
                    clashes.push(Clash {
                        item: item.clone(),
                        holder: prev,
                    });
                }
                held.push(item.clone());
            }
        }
        if !held.is_empty() {
            self.held
                .entry(group.to_string())
                .or_default()
                .insert(member.to_string(), held);
        }
        clashes
    }

    /// `member` of `group` holds nothing any more (its current assignment tombstoned).
    pub(crate) fn release(&mut self, group: &str, member: &str) {
        let Some(items) = self.held.get_mut(group).and_then(|m| m.remove(member)) else {
            return;
        };
        if let Some(holders) = self.by_group.get_mut(group) {
            for i in items {
                // Only its own claims: one taken over by another member stays that one's.
                if holders.get(&i).is_some_and(|h| h.member == member) {
                    holders.remove(&i);
                }
            }
        }
    }

    /// The group is gone (deleted, or replaced by a group of another type).
    pub(crate) fn remove_group(&mut self, group: &str) {
        self.by_group.remove(group);
        self.held.remove(group);
    }
}

/// At most this many clashes of one record are listed in its evidence.
const LISTED: usize = 20;

/// Active tasks only (`tasks` prefixes standby and warm-up ones).
fn active(items: &[String]) -> Vec<String> {
    items
        .iter()
        .filter(|i| !i.starts_with("standby:") && !i.starts_with("warmup:"))
        .cloned()
        .collect()
}

/// `topicId:p` / `subtopology:p` as Kafka's messages print them (`topicId-p`).
fn kafka_item(item: &str) -> String {
    match item.rsplit_once(':') {
        Some((id, p)) => format!("{id}-{p}"),
        None => item.to_string(),
    }
}

impl Replay {
    /// The current assignment just replayed for `member` of `group` (type `t`): its
    /// partitions (consumer) or active tasks (streams, its process id known) are claimed,
    /// and a claim another member still holds is reported as the load failure it is
    /// (`ConsumerGroup.addPartitionEpochs`, `StreamsGroup.addTaskProcessId`).
    pub(super) fn claim(&mut self, at: &Input<'_>, group: &str, t: GroupType, member: &str) {
        let Some(m) = self.groups.get(group).and_then(|g| g.members.get(member)) else {
            return;
        };
        let (assigned, pending) = match t {
            GroupType::Consumer => (m.assigned.clone(), m.pending_revocation.clone()),
            GroupType::Streams if m.process_id.is_some() => {
                (active(&m.assigned), active(&m.pending_revocation))
            }
            _ => {
                self.owners.release(group, member);
                return;
            }
        };
        let epoch = m.member_epoch;
        let process = m.process_id.clone();
        let clashes = self
            .owners
            .update(group, member, epoch, &assigned, &pending);
        if !clashes.is_empty() {
            self.clashed(at, group, t, member, (epoch, process), &clashes);
        }
    }

    /// One finding for the clashes of one record, by the first.
    fn clashed(
        &mut self,
        at: &Input<'_>,
        group: &str,
        t: GroupType,
        member: &str,
        (epoch, process): (i32, Option<String>),
        clashes: &[Clash],
    ) {
        let c = &clashes[0];
        let holder_process = self
            .groups
            .get(group)
            .and_then(|g| g.members.get(&c.holder.member))
            .and_then(|m| m.process_id.clone())
            .unwrap_or_default();
        let item = kafka_item(&c.item);
        let others = match clashes.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        let (what, kafka, kafka_message, fails_in, versions) = if t == GroupType::Streams {
            (
                "active task",
                "StreamsGroup.updateMember → addTaskProcessId",
                format!(
                    "Cannot set the process ID of {item} to {} because the partition is still owned by process ID {holder_process}",
                    process.as_deref().unwrap_or_default()
                ),
                // KAFKA-19862 made `addTaskProcessId` log instead of throw, whatever the
                // epochs (`StreamsGroup`, 4.1.2 and 4.2.0).
                LoadFailsIn::Kafka4BeforeKafka19862,
                "Kafka 4.1.0 and 4.1.1's load throws (before KAFKA-19862); releases with it (4.1.2, 4.2.0 and later) set the claimant's process whatever the epochs",
            )
        } else {
            let newer = clashes.iter().all(|c| epoch > c.holder.epoch);
            let message = format!(
                "Cannot set the epoch of {item} to {epoch} because the partition is still owned at epoch {}",
                c.holder.epoch
            );
            if newer {
                (
                    "partition",
                    "ConsumerGroup.updateMember → addPartitionEpochs",
                    message,
                    LoadFailsIn::Kafka4BeforeKafka19862,
                    "Kafka 4.x's load throws before KAFKA-19862; releases with it accept a claim at a newer member epoch (it replaces the holder's)",
                )
            } else {
                (
                    "partition",
                    "ConsumerGroup.updateMember → addPartitionEpochs",
                    message,
                    LoadFailsIn::Kafka4,
                    "Kafka 4.x's load throws, KAFKA-19862 or not (it accepts only a claim at a member epoch above the holder's)",
                )
            }
        };
        let holder = if c.holder.member == member {
            "the same record (both assigned and pending revocation)".to_string()
        } else {
            format!("member {:?} at epoch {}", c.holder.member, c.holder.epoch)
        };
        let msg = format!(
            "{} group {group:?}: the current assignment of member {member:?} at epoch {epoch} (offset {}) claims {what} {}{others}, still held by {holder}: {versions} (\"{kafka_message}\")",
            t.as_str(),
            at.offset,
            c.item
        );
        let listed: Vec<_> = clashes
            .iter()
            .take(LISTED)
            .map(|c| json!({"item": c.item, "holder_member": c.holder.member, "holder_epoch": c.holder.epoch}))
            .collect();
        let mut ev = json!({"group_id": group, "group_type": t.as_str(), "member_id": member, "member_epoch": epoch,
            "clashes": clashes.len(), "claims": listed, "kafka": kafka, "kafka_message": kafka_message});
        if let Some(p) = process {
            ev["process_id"] = json!(p);
        }
        evidence::merge(
            &mut ev,
            &LoadJoint {
                load_fails_in: fails_in,
            },
        );
        self.anomaly(AnomalyKind::LoadFailure, at, group, msg, ev, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_claim_clashes_only_with_what_another_member_still_holds() {
        let mut o = Owners::default();
        assert!(o.update("g", "m1", 1, &s(&["t:0", "t:1"]), &[]).is_empty());
        // m1 revokes t:1 (pending), then gives it up; m2 takes it: no clash.
        assert!(
            o.update("g", "m1", 1, &s(&["t:0"]), &s(&["t:1"]))
                .is_empty()
        );
        assert!(o.update("g", "m1", 2, &s(&["t:0"]), &[]).is_empty());
        assert!(o.update("g", "m2", 2, &s(&["t:1", "t:1"]), &[]).is_empty());
        // m1 claims t:1 again while m2 holds it.
        let c = o.update("g", "m1", 3, &s(&["t:0", "t:1"]), &[]);
        assert_eq!(
            c,
            [Clash {
                item: "t:1".into(),
                holder: Holder {
                    member: "m2".into(),
                    epoch: 2
                }
            }]
        );
        // m2's tombstone does not free what m1 took over; another group is apart.
        o.release("g", "m2");
        assert!(o.update("h", "m9", 1, &s(&["t:1"]), &[]).is_empty());
        let c = o.update("g", "m3", 3, &s(&["t:1"]), &[]);
        assert_eq!(c[0].holder.member, "m1");
        // Both assigned and pending in one record: a clash with itself.
        let c = o.update("h", "m9", 2, &s(&["t:5"]), &s(&["t:5"]));
        assert_eq!(c[0].holder.member, "m9");
        o.remove_group("g");
        assert!(o.update("g", "m2", 1, &s(&["t:1"]), &[]).is_empty());
    }
}
