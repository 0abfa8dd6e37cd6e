//! What the replay reads out of record keys and values: group ids, assignments as
//! `topicId:partition` / `subtopology:partition`, classic consumer-protocol members.

use crate::read::format::groups::{self, StructVal, Val};

/// The group a key names.
pub(crate) fn key_group(k: &StructVal<'_>) -> String {
    k.str("GroupId")
        .or_else(|| k.str("group"))
        .unwrap_or_default()
}

/// `topicId:p` (partitions) or `[prefix]subtopology:p` (tasks) of an assignment array.
pub(crate) fn assignment(items: &[Val<'_>], id_field: &str, prefix: &str, out: &mut Vec<String>) {
    use base64::Engine;
    for it in items {
        let Some(s) = it.as_struct() else { continue };
        let id = match s.get(id_field) {
            Some(Val::Uuid(u)) => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(u),
            _ => s.str(id_field).unwrap_or_default(),
        };
        for p in s.ints("Partitions") {
            out.push(format!("{prefix}{id}:{p}"));
        }
    }
}

/// A classic `consumer` member's subscribed topics and assigned `topic-partition`s, from
/// its embedded consumer protocol bytes (empty when they do not decode; the coordinator
/// itself never parses them on load).
pub(crate) fn consumer_protocol(m: &StructVal<'_>) -> (Vec<String>, Vec<String>) {
    use crate::read::format::groups::schema::{
        CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION,
    };
    let bytes = |f: &str| match m.get(f) {
        Some(Val::Bytes(Some(b))) => *b,
        _ => &[],
    };
    let topics = groups::decode_embedded(&CONSUMER_PROTOCOL_SUBSCRIPTION, bytes("subscription"))
        .map(|(_, s)| s.strings("Topics"))
        .unwrap_or_default();
    let mut assigned = Vec::new();
    if let Ok((_, a)) = groups::decode_embedded(&CONSUMER_PROTOCOL_ASSIGNMENT, bytes("assignment"))
    {
        for tp in a.items("AssignedPartitions") {
            let Some(tp) = tp.as_struct() else { continue };
            let topic = tp.str("topic").unwrap_or_default();
            assigned.extend(tp.ints("partitions").iter().map(|p| format!("{topic}-{p}")));
        }
    }
    (topics, assigned)
}

pub(crate) fn tasks(v: &StructVal<'_>, fields: [&str; 3]) -> Vec<String> {
    let mut out = Vec::new();
    for (f, prefix) in fields.iter().zip(["", "standby:", "warmup:"]) {
        assignment(v.items(f), "SubtopologyId", prefix, &mut out);
    }
    out
}
