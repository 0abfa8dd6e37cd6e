//! Values whose lists the group coordinator's replay collects into maps with
//! `Collectors.toMap` and no merge function, which throws `IllegalStateException`
//! ("Duplicate key K (attempted merging values U and V)") on a key's second entry; nothing
//! in the load catches it, so the load of the partition fails there. The coordinator writes
//! these lists from maps (one entry a key): only damaged or hand-written bytes repeat a key.
//!
//! * A share group state partition metadata value (type 15): `GroupMetadataManager.replay(
//!   ShareGroupStatePartitionMetadataKey, …Value)` (4.1 and later, read on the 4.1–4.4
//!   branches of August 2026) collects `InitializingTopics`, then `InitializedTopics`, each
//!   by topic id; the same id once in each list, or twice in `DeletingTopics` (a set), loads.
//!   A 4.0 coordinator throws on any type 15 (no replay case) and no ≤ 3.x one replays it:
//!   the failure is 4.x's (`kafka_4`).
//! * A streams group metadata value (type 17): `GroupMetadataManager.replay(
//!   StreamsGroupMetadataKey, …Value)` collects its `LastAssignmentConfigs` by `Key` since
//!   4.2 (read on the 4.2–4.4 branches of August 2026); 4.1
//!   replays streams groups without reading the tagged field (not in its schema, skipped as
//!   an unknown tag): `kafka_4_since_4_2`.

use super::{AnomalyKind, Input, Replay};
use crate::finding::evidence::{self, LoadFailsIn, LoadJoint};
use crate::read::format::groups::{StructVal, Val};
use base64::Engine;
use serde_json::json;

/// The first key (`key` of each entry of `items`) two entries share: the key, the index of
/// its first entry and that of the repeat.
fn first_repeat<'a, K: Eq + std::hash::Hash>(
    items: &'a [Val<'a>],
    key: impl Fn(&StructVal<'a>) -> Option<K>,
) -> Option<(K, usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    for (i, s) in items.iter().enumerate() {
        let Some(k) = s.as_struct().and_then(&key) else {
            continue;
        };
        if let Some(&first) = seen.get(&k) {
            return Some((k, first, i));
        }
        seen.insert(k, i);
    }
    None
}

impl Replay {
    /// A share group state partition metadata value of `group` (type 15) repeating a topic
    /// id in `InitializingTopics` or `InitializedTopics` (see the module).
    pub(super) fn share_state_duplicates(
        &mut self,
        at: &Input<'_>,
        group: &str,
        v: &StructVal<'_>,
    ) {
        for list in ["InitializingTopics", "InitializedTopics"] {
            let uuid = |s: &StructVal<'_>| match s.get("TopicId")? {
                Val::Uuid(u) => Some(u.to_vec()),
                _ => None,
            };
            let Some((u, _, _)) = first_repeat(v.items(list), uuid) else {
                continue;
            };
            let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(u);
            let msg = format!(
                "share group state partition metadata record at offset {} lists topic id {id} twice in {list}: the coordinator's load throws (IllegalStateException: \"Duplicate key {id} (attempted merging values …)\", GroupMetadataManager.replay collects the list into a map by topic id)",
                at.offset
            );
            let ev = json!({"group_id": group, "list": list, "topic_id": id,
                            "kafka": "GroupMetadataManager.replay(ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue)"});
            self.anomaly(AnomalyKind::LoadFailure, at, group, msg, ev, true);
            // Kafka throws at the first list's duplicate: the second is never collected.
            return;
        }
    }

    /// A streams group metadata value of `group` (type 17) repeating a config key in
    /// `LastAssignmentConfigs` (see the module): Kafka 4.2 and later's load throws.
    pub(super) fn streams_config_duplicates(
        &mut self,
        at: &Input<'_>,
        group: &str,
        v: &StructVal<'_>,
    ) {
        let items = v.items("LastAssignmentConfigs");
        let Some((key, a, b)) = first_repeat(items, |s| s.str("Key")) else {
            return;
        };
        let value = |i: usize| (items[i].as_struct()).and_then(|s| s.str("Value"));
        let (u, w) = (value(a).unwrap_or_default(), value(b).unwrap_or_default());
        let kafka_message = format!("Duplicate key {key} (attempted merging values {u} and {w})");
        let msg = format!(
            "streams group metadata record at offset {} lists the assignment config {key:?} twice in LastAssignmentConfigs: Kafka 4.2 and later's load throws (IllegalStateException: \"{kafka_message}\", GroupMetadataManager.replay collects the list into a map by key); 4.1 does not read the field",
            at.offset
        );
        let mut ev = json!({"group_id": group, "group_type": "streams", "list": "LastAssignmentConfigs", "key": key,
                            "kafka": "GroupMetadataManager.replay(StreamsGroupMetadataKey, StreamsGroupMetadataValue)",
                            "kafka_message": kafka_message});
        let load_fails_in = LoadFailsIn::Kafka4Since42;
        evidence::merge(&mut ev, &LoadJoint { load_fails_in });
        self.anomaly(AnomalyKind::LoadFailure, at, group, msg, ev, true);
    }
}
