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
/// its embedded consumer protocol bytes, read at the version they name (empty when they do
/// not decode; whether the load itself throws on the subscription is
/// [`subscription_error`]'s).
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

/// Why the coordinator's load throws on a classic `consumer` member's subscription bytes,
/// if it does. `ClassicGroup.computeSubscribedTopics` (4.x, from
/// `GroupMetadataManager.replay(GroupMetadataKey, …)`) and `GroupMetadata.computeSubscribedTopics`
/// (3.x, from `GroupMetadata.loadGroup`) skip the version the bytes name
/// (`ConsumerProtocol.deserializeVersion`) and read them as version 0, the prefix of every
/// version: the topics, then the user data; what follows is not read. Bytes that end before
/// a length or a count (a buffer underflow, turned into a `SchemaException`) are tolerated:
/// the group loads without knowing its topics. What else the generated reader
/// (`ConsumerProtocolSubscription.read`, `ByteBufferAccessor`) throws is not caught, until
/// KAFKA-20570 (4.2.2, 4.3.2, 4.4.0), whose `ConsumerProtocol` turns it into the
/// `SchemaException` the load catches: those releases throw on none of it.
pub(crate) fn subscription_error(b: &[u8]) -> Option<SubscriptionError> {
    let int = |at: usize, n: usize| -> Option<i64> {
        let x = b.get(at..at + n)?;
        Some(match n {
            2 => i16::from_be_bytes([x[0], x[1]]) as i64,
            _ => i32::from_be_bytes([x[0], x[1], x[2], x[3]]) as i64,
        })
    };
    let fail = |what: &str, kafka: String, since_3_3: bool| {
        Some(SubscriptionError {
            what: what.to_string(),
            kafka_message: kafka,
            since_3_3,
        })
    };
    let count = int(2, 4)?;
    let mut at = 6;
    let left = |at: usize| b.len().saturating_sub(at) as i64;
    if count < 0 {
        return fail(
            &format!("topic count {count}"),
            "non-nullable field topics was serialized as null".into(),
            false,
        );
    }
    if count > left(at) {
        let kafka = format!(
            "Tried to allocate a collection of size {count}, but there are only {} bytes remaining.",
            left(at)
        );
        return fail(&format!("topic count {count}"), kafka, true);
    }
    for i in 0..count {
        let len = int(at, 2)?;
        at += 2;
        if len < 0 {
            let kafka = "non-nullable field topics element was serialized as null".into();
            return fail(&format!("topic {i} of length {len}"), kafka, false);
        }
        if len > left(at) {
            let kafka = format!(
                "Error reading byte array of {len} byte(s): only {} byte(s) available",
                left(at)
            );
            return fail(&format!("topic {i} of length {len}"), kafka, true);
        }
        at += len as usize;
    }
    // UserData: nullable bytes read as a slice (`readByteBuffer`): a length past the end
    // is the JDK's `ByteBuffer.limit` refusal.
    let len = int(at, 4)?;
    if len > left(at + 4) {
        let kafka = format!("newLimit > capacity: ({len} > {})", left(at + 4));
        return fail(&format!("user data of length {len}"), kafka, false);
    }
    None
}

/// What [`subscription_error`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SubscriptionError {
    /// The field and the length or count that does not fit.
    pub what: String,
    /// What Kafka's reader throws.
    pub kafka_message: String,
    /// Thrown since Kafka 3.3 only (`readArray`'s and the collection's size checks): a
    /// read past the end underflowed before, which the load tolerated.
    pub since_3_3: bool,
}

pub(crate) fn tasks(v: &StructVal<'_>, fields: [&str; 3]) -> Vec<String> {
    let mut out = Vec::new();
    for (f, prefix) in fields.iter().zip(["", "standby:", "warmup:"]) {
        assignment(v.items(f), "SubtopologyId", prefix, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Version 3 header, then `count` and topic names (length, bytes), then user data.
    fn bytes(parts: &[&[u8]]) -> Vec<u8> {
        let mut b = vec![0, 3];
        for p in parts {
            b.extend_from_slice(p);
        }
        b
    }

    #[test]
    fn what_the_version_0_read_throws_on_and_what_it_tolerates() {
        let one = 1i32.to_be_bytes();
        let err = |b: &[u8]| subscription_error(b).map(|e| (e.kafka_message, e.since_3_3));
        // Read as the coordinator reads it: topics, user data; the rest of a v3 is unread.
        let good = bytes(&[&one, &[0, 2], b"ab", &(-1i32).to_be_bytes(), &[9, 9, 9]]);
        assert_eq!(err(&good), None);
        // Short buffers (an underflow: SchemaException) are tolerated.
        for short in [
            &b""[..],
            &[0],
            &[0, 0, 0, 0],
            &bytes(&[&one, &[0]]),
            &bytes(&[&one, &[0, 2], b"ab", &[0, 0]]),
        ] {
            assert_eq!(err(short), None, "{short:?}");
        }
        assert_eq!(
            err(&bytes(&[&(-1i32).to_be_bytes()])),
            Some((
                "non-nullable field topics was serialized as null".into(),
                false
            ))
        );
        assert_eq!(
            err(&bytes(&[&9i32.to_be_bytes(), &[0, 0]])),
            Some((
                "Tried to allocate a collection of size 9, but there are only 2 bytes remaining."
                    .into(),
                true
            ))
        );
        assert_eq!(
            err(&bytes(&[&one, &[0xff, 0xff]])),
            Some((
                "non-nullable field topics element was serialized as null".into(),
                false
            ))
        );
        assert_eq!(
            err(&bytes(&[&one, &[0, 5], b"fo"])),
            Some((
                "Error reading byte array of 5 byte(s): only 2 byte(s) available".into(),
                true
            ))
        );
        assert_eq!(
            err(&bytes(&[&one, &[0, 2], b"ab", &7i32.to_be_bytes(), b"x"])),
            Some(("newLimit > capacity: (7 > 1)".into(), false))
        );
    }
}
