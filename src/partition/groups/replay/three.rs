//! The first record a Kafka 3.x load before KAFKA-14869 throws on, kept unreported until a
//! release stated to `verify --broker-version` decides it (`groups::release`).
//!
//! Kafka 3.x's own group coordinator (the Scala `GroupMetadataManager.doLoadGroupsAndOffsets`)
//! reads every record's key with `readMessageKey`: key versions 0 and 1 are offset commits, 2
//! classic group metadata. Before KAFKA-14869 (KIP-915's first part: apache/kafka PR #13511,
//! April 2023; in 3.4.1 and 3.5.0 and later — the backports to the 3.0–3.3 branches came after
//! their last releases) any other key version throws `IllegalStateException`, and so does a
//! value version its readers do not know (`readOffsetMessageValue`, `readGroupMessageValue`:
//! versions 0–3 before KIP-915's second part, PR #13526 / #13604 in the same releases, which
//! made version 4 the first flexible one; Kafka 4.1 and later write offset commits at version
//! 4). `loadGroupsAndOffsets` catches the error: the partition is served with none of its
//! groups. Releases with KAFKA-14869 skip a key of another version unread ("Unknown message
//! key … Ignoring it").

use super::super::values::key_group;
use super::{AnomalyKind, Input, Replay, key_version};
use crate::finding::evidence::{self, LoadFailsIn, LoadJoint};
use crate::read::format::groups::{self, CONSUMER_OFFSETS, Outcome, Topic};
use serde_json::json;

impl Replay {
    /// Keep the first record a 3.x load before KAFKA-14869 throws on for its key or value
    /// version, as a `load_fails` false anomaly of scope `kafka_3_before_kafka_14869` (only a
    /// stated release makes it a finding).
    pub(super) fn before_kafka_14869(&mut self, at: &Input<'_>) {
        if self.before_14869_seen {
            return;
        }
        let Some(k) = at.key.and_then(key_version) else {
            return;
        };
        let value = at.value.and_then(key_version);
        let (message, ev) = match (k, value) {
            (0..=2, None | Some(0..=3)) => return,
            (0..=2, Some(v)) => {
                let (what, kafka, kafka_message) = match k {
                    2 => (
                        "a classic group metadata value",
                        "GroupMetadataManager.readGroupMessageValue",
                        format!("Unknown group metadata message version: {v}"),
                    ),
                    _ => (
                        "an offset commit value",
                        "GroupMetadataManager.readOffsetMessageValue",
                        format!("Unknown offset message version: {v}"),
                    ),
                };
                let message = format!(
                    "record at offset {} is {what} of version {v}: Kafka 3.x's group coordinator before KAFKA-14869 (3.0.0–3.4.0) reads versions 0–3 alone and its load throws on it ({kafka}: \"{kafka_message}\"); 3.4.1, 3.5.0 and later read version 4",
                    at.offset
                );
                let ev = json!({"key_version": k, "value_version": v, "kafka": kafka, "kafka_message": kafka_message});
                (message, ev)
            }
            _ => {
                let name =
                    groups::schema::lookup(CONSUMER_OFFSETS, k).map_or("unknown", |x| x.name());
                let kafka_message = format!("Unknown group metadata message version: {k}");
                let message = format!(
                    "record at offset {} has key version {k} ({name}), a record type Kafka 3.x's own group coordinator does not replay: before KAFKA-14869 (3.0.0–3.4.0) its load throws on it (GroupMetadataManager.readMessageKey: \"{kafka_message}\"); 3.4.1, 3.5.0 and later skip it",
                    at.offset
                );
                let ev = json!({"key_version": k, "record": name, "kafka": "GroupMetadataManager.readMessageKey", "kafka_message": kafka_message});
                (message, ev)
            }
        };
        self.before_14869_seen = true;
        // The group of a key a 4.x reader decodes (its value left out), else none.
        let group = match groups::decode(Topic::ConsumerOffsets, at.key, None) {
            Ok(Outcome::Record(d)) => key_group(&d.key),
            _ => String::new(),
        };
        let mut ev = ev;
        ev["group_id"] = json!((!group.is_empty()).then_some(&group));
        let load_fails_in = LoadFailsIn::Kafka3BeforeKafka14869;
        evidence::merge(&mut ev, &LoadJoint { load_fails_in });
        self.anomaly(AnomalyKind::LoadFailure, at, &group, message, ev, false);
    }
}
