//! Rule 32: the records of a coordinator's log (`__consumer_offsets`, the group
//! coordinator's; `__share_group_state`, the share coordinator's) as its load deserializes
//! and replays them.

use super::segment_finding;
use crate::finding::{Finding, Kind};
use crate::partition::state::PartitionContext;
use crate::read::format;
use serde_json::json;

/// The group coordinator's topic.
pub(in crate::partition::scan) const OFFSETS_TOPIC: &str = "__consumer_offsets";
/// The share coordinator's topic (KIP-932).
pub(in crate::partition::scan) const SHARE_STATE_TOPIC: &str = "__share_group_state";

/// The coordinator whose log a partition of `topic` is, when rule 32 reads its records.
pub(in crate::partition::scan) fn coordinator_topic(topic: &str) -> Option<format::groups::Topic> {
    match topic {
        OFFSETS_TOPIC => Some(format::groups::Topic::ConsumerOffsets),
        SHARE_STATE_TOPIC => Some(format::groups::Topic::ShareGroupState),
        _ => None,
    }
}

/// Rule 32: every record of a `__consumer_offsets` batch must deserialize as the group
/// coordinator does when it loads the partition (`CoordinatorRecordSerde.deserialize`):
/// every record type 0–24 and value version is read by `format::groups::validate`; a key
/// type without a schema is skipped by the coordinator's loader with a warning, anything
/// else undecodable makes the load throw. One finding per kind
/// per batch (the first record), with the count. Fed record by record by whichever walk
/// decodes the batch's records, so a batch is never decoded twice.
///
/// The share coordinator's `__share_group_state` is read the same way
/// (`ShareCoordinatorRecordSerde`, one loader: `CoordinatorLoaderImpl`): a record that does
/// not deserialize, or a ShareUpdate tombstone (`ShareCoordinatorShard.replay` hands its
/// null value to `handleShareUpdate`, which reads its leader epoch: the replay throws and
/// the loader fails), is a `share_state_record_undecodable`; a key type without a schema is
/// skipped by the loader with a warning and not reported (no release writes one).
pub(in crate::partition::scan) struct OffsetsCheck {
    topic: format::groups::Topic,
    /// (first record offset, key type, count) of records of an unknown type.
    unknown: Option<(i64, i16, u32)>,
    /// (first record offset, error, count) of records that do not deserialize.
    broken: Option<(i64, String, u32)>,
}

impl OffsetsCheck {
    pub(in crate::partition::scan) fn new(topic: format::groups::Topic) -> OffsetsCheck {
        OffsetsCheck {
            topic,
            unknown: None,
            broken: None,
        }
    }

    fn broken(&mut self, offset: i64, error: impl FnOnce() -> String) {
        match &mut self.broken {
            Some((_, _, n)) => *n += 1,
            None => self.broken = Some((offset, error(), 1)),
        }
    }

    pub(in crate::partition::scan) fn record(
        &mut self,
        b: &format::BatchView<'_>,
        r: &format::Record<'_>,
    ) {
        let offset = b.base_offset().wrapping_add(r.offset_delta as i64);
        if self.topic == format::groups::Topic::ShareGroupState {
            match format::groups::validate(self.topic, r.key, r.value) {
                Ok(None) if r.value.is_none() && r.key.and_then(|k| k.get(..2)) == Some(&[0, 1]) => {
                    self.broken(offset, || {
                        "a ShareUpdate record with a null value (a tombstone): ShareCoordinatorShard.replay reads its leader epoch and throws".into()
                    })
                }
                Ok(_) => {}
                Err(e) => self.broken(offset, || e.to_string()),
            }
            return;
        }
        // Types 9 and 18 (retired in 4.1: a 4.1+ loader skips them unread, an older one
        // decodes them) and 24 (never released): a record of theirs that fits no schema
        // of klogscan's has two readings, so none is given (`partition::groups::replay`
        // skips them likewise).
        if r.key
            .and_then(|k| k.get(..2))
            .is_some_and(|t| matches!(i16::from_be_bytes([t[0], t[1]]), 9 | 18 | 24))
        {
            return;
        }
        match format::groups::validate(format::groups::Topic::ConsumerOffsets, r.key, r.value) {
            Ok(Some(t)) => match &mut self.unknown {
                Some((_, _, n)) => *n += 1,
                None => self.unknown = Some((offset, t, 1)),
            },
            Ok(None) => {}
            Err(e) => self.broken(offset, || e.to_string()),
        }
    }

    pub(in crate::partition::scan) fn report(
        self,
        ctx: &PartitionContext,
        name: &str,
        b: &format::BatchView<'_>,
        out: &mut Vec<Finding>,
    ) {
        if let Some((offset, t, n)) = self.unknown {
            out.push(
                segment_finding(
                    ctx,
                    Kind::OffsetsRecordUnknownType,
                    name,
                    b.position(),
                    format!(
                        "{name}: record at offset {offset} has key type {t}, not a group coordinator record type (Kafka 4.x defines 0-23; 24 exists only in proof-of-concept branches) ({n} such record(s) in the batch at offset {})",
                        b.base_offset()
                    ),
                )
                .offset(offset)
                .evidence(json!({"record_offset": offset, "key_type": t, "records_in_batch": n, "batch_offset": b.base_offset()}))
                .broker("the group coordinator skips it on load with a warning (\"It could be a left over from an aborted upgrade\"; Kafka 4.x, and 3.x from 3.4.1 and 3.5.0: KAFKA-14869), while Kafka 3.0.0-3.4.0 throw (\"Unknown group metadata message version\") and load none of the partition's groups (verify --broker-version decides); kafka-dump-log --offsets-decoder prints \"Unknown record type\""),
            );
        }
        if self.topic == format::groups::Topic::ShareGroupState
            && let Some((offset, error, n)) = self.broken
        {
            out.push(
                segment_finding(
                    ctx,
                    Kind::ShareStateRecordUndecodable,
                    name,
                    b.position(),
                    format!(
                        "{name}: record at offset {offset} fails the share coordinator's load: {error} ({n} such record(s) in the batch at offset {})",
                        b.base_offset()
                    ),
                )
                .offset(offset)
                .evidence(json!({"record_offset": offset, "error": error, "records_in_batch": n, "batch_offset": b.base_offset()}))
                .broker(SHARE_LOAD_THROWS)
                .remediation("dump the record with `klogscan dump --share-group-state-decoder`; find which client or tool wrote to __share_group_state directly"),
            );
        } else if let Some((offset, error, n)) = self.broken {
            out.push(
                segment_finding(
                    ctx,
                    Kind::OffsetsRecordUndecodable,
                    name,
                    b.position(),
                    format!(
                        "{name}: record at offset {offset} does not deserialize as a group coordinator record: {error} ({n} such record(s) in the batch at offset {})",
                        b.base_offset()
                    ),
                )
                .offset(offset)
                .evidence(json!({"record_offset": offset, "error": error, "records_in_batch": n, "batch_offset": b.base_offset()}))
                .broker(crate::partition::groups::check::LOAD_THROWS_ANY)
                .remediation("dump the record with `klogscan dump --offsets-decoder`; find which client or tool wrote to __consumer_offsets directly"),
            );
        }
    }
}

/// What the broker does with a `share_state_record_undecodable`.
const SHARE_LOAD_THROWS: &str = "the share coordinator's load of this partition throws at this record (CoordinatorLoaderImpl: \"Deserializing record … failed\", or \"Replaying record … failed\" for a ShareUpdate tombstone): the coordinator runtime fails and unloads the partition's share coordinator, so the share groups whose share-partition state it holds cannot read or write it until the partition's leadership moves and a load without the record succeeds";
