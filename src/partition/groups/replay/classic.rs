//! Classic group metadata (type 2), as the load replays it: the record replaces the group
//! (`GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`, 4.x; the 3.x
//! `GroupMetadataManager.readGroupMessageValue` → `GroupMetadata.loadGroup`).

use super::super::model::{Group, GroupType, Member};
use super::super::values::consumer_protocol;
use super::{Input, Replay};
use crate::read::format::groups::StructVal;

impl Replay {
    /// `GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`: a value
    /// replaces the group with a classic group; a tombstone removes it.
    pub(super) fn classic(&mut self, at: &Input<'_>, group: &str, v: Option<&StructVal<'_>>) {
        let Some(v) = v else {
            self.remove_group(at, group);
            return;
        };
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
        // `ClassicGroup.isSimpleGroup`: no protocol type and no member. Such a group (what
        // the classic coordinator stores for a consumer that only commits offsets) gives way
        // to a consumer group like one created by an offset commit.
        g.simple = g.protocol_type.is_none() && g.members.is_empty();
        // The classic group replaces whatever group the id held, and what it tracked.
        self.owners.remove_group(group);
        self.groups.insert(group.to_string(), g);
    }
}
