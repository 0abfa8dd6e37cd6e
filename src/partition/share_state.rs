//! The share coordinator's load of a `__share_group_state` partition, as far as two rules
//! need it (KIP-932): `ShareCoordinatorShard.replay` keeps per share partition (group,
//! topic id, partition) the state its records leave — a `ShareSnapshot` replaces it whole,
//! a `ShareUpdate` is merged into it (`handleShareUpdate`: into nothing, it becomes the
//! whole state, `ShareGroupOffset.fromRecord`, with state epoch and start offset -1), a
//! snapshot tombstone deletes it. The load (`CoordinatorLoaderImpl`) reads from the log
//! start; the coordinator's pruning (`ShareCoordinatorOffsetsManager.updateState`, behind
//! `ShareCoordinatorService.setupRecordPruning`'s `deleteRecords`) never moves the log start
//! past a live share partition's latest snapshot, and its first record ever is a snapshot
//! (`ShareCoordinatorShard.generateShareStateRecord` writes one for a share partition
//! without state).
//!
//! * `share_state_lost`: a share partition live at the log's end with no snapshot at or
//!   above the log start — its state is an update's alone (the acknowledged and in-flight
//!   records' states, the start offset lost: `SharePartition.startOffsetDuringInitialization`
//!   falls back to `share.auto.offset.reset`);
//! * `share_state_batch_below_start`: a live share partition whose last record is a snapshot
//!   holding a state batch that starts below its start offset (`PersisterStateBatchCombiner`
//!   never writes one): `SharePartition.maybeInitialize` refuses the state and the share
//!   partition cannot be consumed. After an update the combined batches are not modelled.

use crate::finding::{Finding, Kind};
use crate::partition::walked::{LogRecord, RecordSink};
use crate::read::format::groups::{self, Outcome, Topic};
use serde_json::json;
use std::collections::BTreeMap;

/// A share partition: group, topic id, partition.
type Key = (String, [u8; 16], i32);

/// What the replay keeps of one share partition.
#[derive(Debug, Default)]
struct State {
    /// The latest snapshot's offset (`None`: no snapshot read).
    snapshot: Option<i64>,
    /// The offset of the latest record.
    last: i64,
    /// The latest record is a snapshot.
    last_is_snapshot: bool,
    /// The state's start offset and its lowest batch start (from the latest snapshot).
    start_offset: i64,
    lowest_batch: Option<(i64, i64)>,
}

/// The replay of one `__share_group_state` partition, fed record by record in offset order
/// by the scan's walk ([`RecordSink`]).
#[derive(Debug)]
pub struct ShareStateReplay {
    /// Records below it are not loaded (the checkpointed log start; `None`: the first
    /// segment's base, at or below every record).
    log_start: Option<i64>,
    states: BTreeMap<Key, State>,
}

impl ShareStateReplay {
    /// A replay for partition directory `p` (`None`: not a live copy of the share
    /// coordinator's log, the only one a share coordinator loads).
    pub(crate) fn for_partition(
        p: &crate::discover::layout::PartitionDir,
        ctx: &crate::partition::state::PartitionContext,
    ) -> Option<ShareStateReplay> {
        // Not for files named alone either: the directory's other segments are unread.
        let live = matches!(p.kind, Some(crate::discover::layout::DirKind::Normal)) && !p.partial;
        (live && ctx.topic == groups::SHARE_GROUP_STATE_TOPIC).then(|| ShareStateReplay {
            log_start: ctx.log_start_offset,
            states: BTreeMap::new(),
        })
    }

    fn apply(&mut self, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) {
        if self.log_start.is_some_and(|s| offset < s) {
            return;
        }
        // A record that does not decode is `share_state_record_undecodable`'s (the load
        // stops there); a type without a schema is skipped, as the loader skips it.
        let Ok(Outcome::Record(d)) = groups::decode(Topic::ShareGroupState, key, value) else {
            return;
        };
        let k = &d.key;
        let Some(groups::Val::Uuid(u)) = k.get("TopicId") else {
            return;
        };
        let Ok(topic_id) = <[u8; 16]>::try_from(&u[..]) else {
            return;
        };
        let key: Key = (
            k.str("GroupId").unwrap_or_default(),
            topic_id,
            k.int("Partition") as i32,
        );
        let snapshot = d.rtype.id == 0;
        let Some((_, v)) = &d.value else {
            if snapshot {
                self.states.remove(&key);
            }
            return;
        };
        let s = self.states.entry(key).or_default();
        s.last = offset;
        s.last_is_snapshot = snapshot;
        if snapshot {
            s.snapshot = Some(offset);
            s.start_offset = v.int("StartOffset");
            s.lowest_batch = (v.items("StateBatches").iter())
                .filter_map(|b| b.as_struct())
                .map(|b| (b.int("FirstOffset"), b.int("LastOffset")))
                .min();
        }
    }

    /// The findings of the replay (`whole`: every record from the log start was read; none
    /// otherwise).
    pub(crate) fn finish(
        self,
        ctx: &crate::partition::state::PartitionContext,
        whole: bool,
    ) -> Vec<Finding> {
        if !whole {
            return Vec::new();
        }
        let mut out = Vec::new();
        for ((group, topic_id, partition), s) in &self.states {
            let id = crate::read::format::checkpoint::encode_uuid(topic_id);
            let who = format!("share group {group:?}'s partition {id}:{partition}");
            if s.snapshot.is_none() {
                out.push(
                    Finding::new(
                        Kind::ShareStateLost,
                        &ctx.topic,
                        ctx.partition,
                        format!(
                            "{who}: no ShareSnapshot at or above the log start, only updates (the latest at offset {}): the share coordinator's load takes the first update as the whole state (state epoch -1, start offset -1), so the share partition's acknowledged and in-flight records' states and its start offset are lost",
                            s.last
                        ),
                    )
                    .offset(s.last)
                    .evidence(json!({"group": group, "topic_id": id, "partition": partition, "latest_update_offset": s.last, "log_start_offset": self.log_start}))
                    .broker("ShareCoordinatorShard.replay → handleShareUpdate on a share partition without state keeps the update as its state (ShareGroupOffset.fromRecord: state epoch and start offset -1); the coordinator's own pruning never moves the log start past a live share partition's latest snapshot (ShareCoordinatorOffsetsManager.updateState), so the snapshot was removed by other means (DeleteRecords, retention set on the topic)")
                    .client_error("share consumers: none; the share partition restarts from share.auto.offset.reset (SharePartition.startOffsetDuringInitialization), so records are delivered again or skipped")
                    .remediation("check how the log start of this __share_group_state partition moved (kafka-delete-records.sh, retention.ms or retention.bytes set on the topic); set the group's start offset with kafka-share-groups.sh --reset-offsets if the restart position is wrong"),
                );
                continue;
            }
            if let Some((first, last)) = s.lowest_batch.filter(|&(first, _)| {
                s.last_is_snapshot && s.start_offset >= 0 && first < s.start_offset
            }) {
                out.push(
                    Finding::new(
                        Kind::ShareStateBatchBelowStart,
                        &ctx.topic,
                        ctx.partition,
                        format!(
                            "{who}: its state (the ShareSnapshot at offset {}) holds a state batch {first}..={last} starting below its start offset {}: SharePartition.maybeInitialize refuses the state and the share partition cannot be consumed",
                            s.last, s.start_offset
                        ),
                    )
                    .offset(s.last)
                    .evidence(json!({"group": group, "topic_id": id, "partition": partition, "snapshot_offset": s.last, "start_offset": s.start_offset, "batch": [first, last]}))
                    .broker("the share coordinator serves the state as written; SharePartition.maybeInitialize fails the share partition on a state batch whose first offset is below the start offset (IllegalStateException: Failed to initialize the share partition); PersisterStateBatchCombiner never writes such a batch")
                    .client_error("share consumers of this partition receive nothing from it: its initialization fails on every fetch")
                    .remediation("delete the share group's state for this partition (kafka-share-groups.sh --delete-offsets, then it is initialized again from share.auto.offset.reset) once the group is empty"),
                );
            }
        }
        out
    }
}

/// The replay consumes the walk's records in offset order.
impl RecordSink for ShareStateReplay {
    fn record(&mut self, rec: &LogRecord, _segment: &str) {
        self.apply(rec.offset, rec.key.as_deref(), rec.value.as_deref());
    }
    fn marker(&mut self, _producer_id: i64, _commit: bool) {}
    fn unread(&mut self, _segment: &str, _message: &str) {}
}
