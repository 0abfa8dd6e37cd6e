//! Kafka 4.0's share-group replay, where it differs from later releases: a share group
//! record (types 10–14) for a group — or member — the load does not hold yet.
//!
//! In 4.0.x (`GroupMetadataManager.replay(ShareGroup…Key, ShareGroup…Value)`, read at the
//! 4.0.0, 4.0.1 and 4.0.2 releases and the 4.0 branch of August 2026), every share replay
//! but a member or group metadata value asks `getOrMaybeCreatePersistedShareGroup` for the
//! group without creating it, which throws for an unknown group ("Share group … not
//! found.", an `IllegalStateException` there), and nothing catches it; the current
//! assignment (value or tombstone) and the member metadata tombstone also ask
//! `ShareGroup.getOrMaybeCreateMember` without creating, which throws
//! `UnknownMemberIdException` for an unknown member. So the
//! load fails on the tombstones a share member's departure or a group's deletion writes,
//! as soon as the cleaner has removed the values before them and not yet the tombstones
//! (`delete.retention.ms`): the commonest shape is a member that left, whose metadata,
//! target and current assignment values are gone while the group's later epoch values sit
//! after its tombstones. KAFKA-19453 (apache/kafka PR #20076 on trunk, #20100 on the 4.1
//! branch, July 2025; in 4.1.0 and every later release, never on the 4.0 branch) made each
//! replay create the group for a value and ignore a tombstone of an unknown group or member
//! (`GroupMetadataManagerTest.testShareGroupRecordsNoExceptionOnReplay`). The replay reports
//! the 4.0 failure (`load_fails_in: kafka_4_before_kafka_19453`) and goes on as 4.1+ does,
//! unless the copy holds a share group state partition metadata record (type 15): only
//! 4.1+ coordinators write it (a 4.0 coordinator has no replay case for it and throws on
//! it whatever the group), so the copy is a 4.1+ coordinator's and the failure not reported.
//!
//! A share record for a group of another type throws in every 4.x release (a
//! `GroupIdNotFoundException` in 4.0, which its share replays do not catch; an
//! `IllegalStateException` since KAFKA-18392, which KAFKA-19453's catch lets through):
//! reported by `Replay::group_mut` as every release's. The retired type 9 (4.0's share
//! partition metadata, also replayed without creating) is skipped unread, as 4.1+ loaders
//! skip it; type 15, which only 4.1+ coordinators write, has no replay case in 4.0 (whose
//! load throws on it whatever the group) and is left to the 4.1+ model.

use super::super::model::GroupType;
use super::{AnomalyKind, Input, Replay};
use crate::finding::evidence::{self, LoadFailsIn, LoadJoint};
use crate::read::format::groups::{CONSUMER_OFFSETS, StructVal};
use serde_json::json;

impl Replay {
    /// Report what Kafka 4.0's load throws on for share record `id` (10–14) of `group`, a
    /// tombstone when `tombstone`; called before the record is applied as 4.1+ applies it.
    pub(super) fn share_before_kafka_19453(
        &mut self,
        at: &Input<'_>,
        group: &str,
        id: i16,
        k: &StructVal<'_>,
        tombstone: bool,
    ) {
        let member = matches!(id, 10 | 13 | 14).then(|| k.str("MemberId").unwrap_or_default());
        // The replays that also ask for the member: a current assignment, value or
        // tombstone, and a member metadata tombstone.
        let asks_member = id == 14 || (id == 10 && tombstone);
        let (what, kafka, kafka_message) = match self.groups.get(group) {
            // Member and group metadata values create the group in 4.0 too.
            None if tombstone || matches!(id, 12..=14) => (
                "a group the load does not hold".to_string(),
                "getOrMaybeCreatePersistedShareGroup",
                format!("Share group {group} not found."),
            ),
            Some(g) if g.group_type == GroupType::Share && asks_member => {
                let m = member.clone().unwrap_or_default();
                if g.members.contains_key(&m) {
                    return;
                }
                (
                    format!("member {m:?}, which the share group does not hold"),
                    "ShareGroup.getOrMaybeCreateMember",
                    format!("Member {m} is not a member of group {group}."),
                )
            }
            // Created (a member or group metadata value), known, or of another type (every
            // release throws: `group_mut`).
            _ => return,
        };
        let name = (CONSUMER_OFFSETS.iter().find(|x| x.id == id)).map_or("?", |x| x.name());
        let record = if tombstone { "tombstone" } else { "value" };
        let since = if tombstone {
            "ignore it"
        } else if what.starts_with("member") {
            "create the member"
        } else {
            "create the group"
        };
        let msg = format!(
            "share group {group:?}: {name} {record} at offset {} for {what}: Kafka 4.0's load throws (\"{kafka_message}\"); releases with KAFKA-19453 (4.1.0 and later) {since}",
            at.offset
        );
        let kafka = format!("GroupMetadataManager.replay({name}Key, …) → {kafka}");
        let mut ev = json!({"group_id": group, "group_type": "share", "record": name, "tombstone": tombstone,
            "kafka": kafka, "kafka_message": kafka_message});
        if let Some(m) = member {
            ev["member_id"] = json!(m);
        }
        evidence::merge(
            &mut ev,
            &LoadJoint {
                load_fails_in: LoadFailsIn::Kafka4BeforeKafka19453,
            },
        );
        self.anomaly(AnomalyKind::LoadFailure, at, group, msg, ev, true);
    }

    /// Forget the 4.0-only failures of a copy that holds a share group state partition
    /// metadata record (a 4.1+ coordinator's copy).
    pub(super) fn drop_kafka_4_0_share_failures(&mut self) {
        if !self.share_state_seen {
            return;
        }
        self.anomalies.retain(|a| !a.fails_only_in_kafka_4_0());
    }
}
