//! When a coordinator holding a group's load expires its committed offsets: the rule of
//! `OffsetMetadataManager.cleanupExpiredOffsets` (Kafka 4.x; the 3.x `GroupMetadata.
//! removeExpiredOffsets` reads the same), run every `offsets.retention.check.interval.ms`
//! (10 minutes) after the load.
//!
//! A group whose `offsetExpirationCondition()` is present expires each offset of a topic it
//! is not subscribed to once `OffsetExpirationConditionImpl.isOffsetExpired` says so (the
//! explicit `expireTimestamp` of a value version 1 when there is one, else
//! `offsets.retention.minutes` after the condition's base time), unless a transactional
//! commit of the partition is pending (the caller leaves those out). The condition, per
//! group as loaded:
//!
//! * a classic group without protocol type (a "simple" group, offsets only): the commit time;
//! * a classic group with a protocol type and no member (Empty): the time it became empty
//!   (`currentStateTimestamp`, group metadata value v2 and later), else the commit time;
//!   with members it expires only the topics its Stable `consumer`-protocol members do not
//!   subscribe to, and nothing for another protocol type — not judged here (a subscription
//!   Kafka cannot parse leaves it none);
//! * a consumer or streams group without members: the commit time (nothing is subscribed);
//!   a consumer group with members expires only unsubscribed topics — not judged here;
//! * a streams group with members: the commit time for a topic its topology does not read
//!   (`StreamsGroup.isSubscribedToTopic`: the topology's source and repartition source
//!   topics; none without a topology), never for one it reads;
//! * a share group keeps no committed offsets.

use super::model::{Committed, Group, GroupType};
use crate::partition::walked::Expiry;

/// When a coordinator holding `g` as loaded expires its applied commit `c` (`None`: never
/// while the group stays as loaded, or not judged).
pub(crate) fn of(g: &Group, c: &Committed) -> Option<Expiry> {
    let base = match g.group_type {
        GroupType::Classic if g.protocol_type.is_none() => Expiry::CommitTime(c.commit_timestamp),
        GroupType::Classic if g.members.is_empty() => match g.current_state_timestamp {
            Some(t) => Expiry::EmptySince(t),
            None => Expiry::CommitTime(c.commit_timestamp),
        },
        GroupType::Consumer | GroupType::Streams if g.members.is_empty() => {
            Expiry::CommitTime(c.commit_timestamp)
        }
        GroupType::Streams if g.topology.as_ref().is_some_and(|t| t.reads(&c.topic)) => {
            return None;
        }
        GroupType::Streams => Expiry::CommitTime(c.commit_timestamp),
        _ => return None,
    };
    Some(c.expire_timestamp.map_or(base, Expiry::ExpireTimestamp))
}
