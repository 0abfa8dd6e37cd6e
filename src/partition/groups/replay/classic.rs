//! Classic group metadata (type 2), as the load replays it: the record replaces the group
//! (`GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`, 4.x; the 3.x
//! `GroupMetadataManager.readGroupMessageValue` → `GroupMetadata.loadGroup`).

use super::super::model::{Group, GroupType, Member};
use super::super::values::{consumer_protocol, subscription_error};
use super::{AnomalyKind, Input, Replay};
use crate::finding::evidence::{self, LoadFailsIn, LoadJoint};
use crate::read::format::groups::{StructVal, Val};
use serde_json::json;

impl Replay {
    /// `GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`: a value
    /// replaces the group with a classic group; a tombstone removes it.
    pub(super) fn classic(&mut self, at: &Input<'_>, group: &str, v: Option<&StructVal<'_>>) {
        let Some(v) = v else {
            self.remove_group(at, group);
            return;
        };
        if self.duplicate_static_member(at, group, v) {
            return;
        }
        let generation = v.int("generation") as i32;
        self.check_epoch(at, group, GroupType::Classic, generation, "generation");
        let mut g = Group::new(group, GroupType::Classic, at.offset);
        if let Some(old) = self.groups.get(group) {
            g.first_offset = old.first_offset;
        }
        g.epoch = generation;
        // An empty protocol type is none (`GroupMetadataManager.replay(GroupMetadataKey, …)`).
        g.protocol_type = v.str("protocolType").filter(|t| !t.is_empty());
        g.protocol = v.str("protocol");
        g.leader = v.str("leader");
        g.current_state_timestamp = v
            .get("currentStateTimestamp")
            .map(|t| t.int())
            .filter(|&t| t != -1);
        let consumer = g.protocol_type.as_deref() == Some("consumer");
        for m in v.items("members") {
            let Some(m) = m.as_struct() else { continue };
            let id = m.str("memberId").unwrap_or_default();
            let (subscribed_topics, assigned) = if consumer {
                consumer_protocol(m)
            } else {
                (Vec::new(), Vec::new())
            };
            g.members.insert(
                id.clone(),
                Member {
                    member_id: id,
                    member_epoch: generation,
                    previous_member_epoch: generation,
                    instance_id: m.str("groupInstanceId"),
                    client_id: m.str("clientId").unwrap_or_default(),
                    client_host: m.str("clientHost").unwrap_or_default(),
                    subscribed_topics,
                    assigned,
                    last_offset: at.offset,
                    ..Default::default()
                },
            );
        }
        if consumer && g.protocol.is_some() {
            self.check_subscriptions(at, group, v);
        }
        // `ClassicGroup.isSimpleGroup`: no protocol type and no member. Such a group (what
        // the classic coordinator stores for a consumer that only commits offsets) gives way
        // to a consumer group like one created by an offset commit.
        g.simple = g.protocol_type.is_none() && g.members.is_empty();
        // The classic group replaces whatever group the id held, and what it tracked.
        self.owners.remove_group(group);
        self.groups.insert(group.to_string(), g);
    }

    /// Two members with one static instance id: adding the second throws
    /// (`ClassicGroup.add`, 4.x; `GroupMetadata.add`, 3.x, from `loadGroup`), before the
    /// group is stored: the record is reported and skipped.
    fn duplicate_static_member(&mut self, at: &Input<'_>, group: &str, v: &StructVal<'_>) -> bool {
        let mut seen: std::collections::BTreeMap<String, String> = Default::default();
        let mut dup = None;
        for m in v.items("members").iter().filter_map(|m| m.as_struct()) {
            let Some(instance) = m.str("groupInstanceId") else {
                continue;
            };
            let id = m.str("memberId").unwrap_or_default();
            match seen.get(&instance) {
                Some(first) => {
                    dup = Some((instance, first.clone(), id));
                    break;
                }
                None => {
                    seen.insert(instance, id);
                }
            }
        }
        let Some((instance, first, second)) = dup else {
            return false;
        };
        let kafka_message = format!(
            "Static member with groupInstanceId={instance} cannot be added to group {group} since it is already a member."
        );
        let msg = format!(
            "classic group {group:?} at offset {}: members {first:?} and {second:?} have the same static instance id {instance:?}: the coordinator's load throws adding the second (\"{kafka_message}\"), in Kafka 3.x (GroupMetadata.add from loadGroup) and 4.x (ClassicGroup.add) alike",
            at.offset
        );
        let mut ev = json!({"group_id": group, "instance_id": instance, "member_id": second, "first_member_id": first,
            "kafka_message": kafka_message, "kafka": "ClassicGroup.add (4.x) / GroupMetadata.add (3.x)"});
        let load_fails_in = LoadFailsIn::Kafka3And4;
        evidence::merge(&mut ev, &LoadJoint { load_fails_in });
        self.anomaly(AnomalyKind::LoadFailure, at, group, msg, ev, true);
        true
    }

    /// A `consumer` group with a protocol: the load reads every member's subscription
    /// (`ClassicGroup.computeSubscribedTopics`, 4.x; `GroupMetadata.computeSubscribedTopics`,
    /// 3.x) and throws on what [`subscription_error`] finds — before KAFKA-20570, which
    /// catches every error of the read (4.2.2, 4.3.2, 4.4.0) —; the first such member is
    /// reported (Kafka's member order is a hash map's), the others counted.
    fn check_subscriptions(&mut self, at: &Input<'_>, group: &str, v: &StructVal<'_>) {
        let failing: Vec<(String, _)> = v
            .items("members")
            .iter()
            .filter_map(|m| m.as_struct())
            .filter_map(|m| {
                let b = match m.get("subscription") {
                    Some(Val::Bytes(Some(b))) => *b,
                    _ => &[],
                };
                Some((
                    m.str("memberId").unwrap_or_default(),
                    subscription_error(b)?,
                ))
            })
            .collect();
        let Some((member, e)) = failing.first() else {
            return;
        };
        let when = if e.since_3_3 {
            "in Kafka 3.3 and later (earlier releases read a length past the end as a buffer underflow, which the load tolerates: the group loads without its subscribed topics)"
        } else {
            "in Kafka 3.x (GroupMetadata.loadGroup, with the generated reader of 2.7 and later)"
        };
        let msg = format!(
            "classic group {group:?} (protocol type consumer): the subscription of member {member:?} at offset {} does not read as the consumer protocol's version 0 ({}): the coordinator's load throws (\"{}\"), {when} and in 4.x before KAFKA-20570 (ClassicGroup.computeSubscribedTopics: 4.0.x, 4.1.x, 4.2.0–4.2.1, 4.3.0–4.3.1), where only bytes that end early are tolerated; 4.2.2, 4.3.2, 4.4.0 and later tolerate every malformed subscription (ConsumerProtocol) and load the group without its subscribed topics",
            at.offset, e.what, e.kafka_message
        );
        let mut ev = json!({"group_id": group, "member_id": member, "field": e.what, "kafka_message": e.kafka_message,
            "failing_members": failing.len(),
            "kafka": "ClassicGroup.computeSubscribedTopics (4.x) / GroupMetadata.computeSubscribedTopics (3.x)"});
        if e.since_3_3 {
            ev["fails_since"] = json!("3.3");
        }
        // KAFKA-20570 (`ConsumerProtocol.deserializeConsumerProtocolSubscription` wraps every
        // `RuntimeException` of the read in the `SchemaException` the load catches).
        let load_fails_in = LoadFailsIn::Kafka3And4BeforeKafka20570;
        evidence::merge(&mut ev, &LoadJoint { load_fails_in });
        self.anomaly(AnomalyKind::LoadFailure, at, group, msg, ev, true);
    }
}
