//! The share coordinator's load of a `__share_group_state` partition, as far as three rules
//! need it (KIP-932): `ShareCoordinatorShard.replay` keeps per share partition (group,
//! topic id, partition) the state its records leave — a `ShareSnapshot` replaces it whole,
//! a `ShareUpdate` is merged into it (`ShareCoordinatorShard.merge`: its start offset unless
//! -1, the batches combined and pruned at that start; into nothing it becomes the whole
//! state as written, `ShareGroupOffset.fromRecord`, state epoch -1), a snapshot tombstone
//! deletes it; the highest state epoch a snapshot carried is kept (`stateEpochMap`). The
//! load (`CoordinatorLoaderImpl`) reads from the log start; the coordinator's pruning
//! (`ShareCoordinatorOffsetsManager.updateState`, behind
//! `ShareCoordinatorService.setupRecordPruning`'s `deleteRecords`) never moves the log start
//! past a live share partition's latest snapshot, and its first record ever is a snapshot
//! (`ShareCoordinatorShard.generateShareStateRecord` writes one for a share partition
//! without state).
//!
//! * `share_state_lost`: a share partition live at the log's end with no snapshot at or
//!   above the log start — its state is an update's alone (the states of the acknowledged
//!   and in-flight records the snapshot held are lost; the start offset too when the update
//!   carries -1, and `SharePartition.startOffsetDuringInitialization` falls back to
//!   `share.auto.offset.reset`);
//! * `share_state_batch_below_start`: a live share partition whose served state holds a
//!   state batch that starts below its start offset: `SharePartition.maybeInitialize`
//!   refuses the state and the share partition cannot be consumed (a warning when the start
//!   is -1 and the default reset policy puts it above the batches);
//! * `share_state_epoch_fenced`: the latest snapshot lowered the state epoch below an
//!   earlier one with no tombstone between: every write of the share partition is fenced.

use crate::finding::{Finding, Kind};
use crate::partition::walked::{LogRecord, RecordSink, ShareStart};
use crate::read::format::groups::{self, Outcome, Topic};
use serde_json::json;
use std::collections::BTreeMap;

/// A share partition: group, topic id, partition.
type Key = (String, [u8; 16], i32);

/// What the replay keeps of one share partition: the state a load serves
/// (`ShareCoordinatorShard.shareStateMap`) as far as the rules need it, and the highest state
/// epoch a snapshot carried (`stateEpochMap`).
#[derive(Debug, Default)]
struct State {
    /// The latest snapshot's offset (`None`: no snapshot read).
    snapshot: Option<i64>,
    /// The offset of the latest record.
    last: i64,
    /// The served start offset (`ShareCoordinatorShard.merge`: an update's unless it is -1).
    start_offset: i64,
    /// The served state batches' offset ranges: a snapshot's, an update's taken alone
    /// (`ShareGroupOffset.fromRecord`, unpruned), or the union the merge prunes at its start
    /// offset (`PersisterStateBatchCombiner.pruneBatches`; the merging of overlaps changes
    /// neither the lowest first offset nor the highest last one, all the rules read).
    batches: std::collections::BTreeSet<Range>,
    /// More than [`MAX_RANGES`] served batches: the batch rules and the start are not
    /// judged.
    overflow: bool,
    /// The served state epoch (-1: an update's alone, `UNINITIALIZED_EPOCH`).
    state_epoch: i32,
    /// The highest state epoch a snapshot carried since the share partition's last
    /// tombstone (`maybeUpdateStateEpochMap`).
    max_state_epoch: Option<i32>,
}

impl State {
    /// The lowest served batch: `(first, last)`.
    fn lowest(&self) -> Option<(i64, i64)> {
        self.batches.first().map(|&(first, last, _)| (first, last))
    }

    /// Where the share partition's start lands once `SharePartition.maybeInitialize` has
    /// cached the served batches: past every batch from the start offset on that is
    /// terminal (acknowledged or archived), contiguous with it
    /// (`maybeUpdateCachedStateAndOffsets`, `findLastOffsetAcknowledged`: a gap is
    /// acquirable and stops it) — at most the first offset of any non-terminal range, which
    /// the combiner may have kept over a terminal one. `None` for a start of -1.
    fn effective_start(&self) -> Option<i64> {
        let start = self.start_offset;
        if start < 0 || self.overflow {
            return None;
        }
        let mut cur = start;
        for &(first, last, state) in &self.batches {
            if first > cur || !terminal(state) {
                break;
            }
            cur = cur.max(last.saturating_add(1));
        }
        let cap = (self.batches.iter())
            .filter(|b| !terminal(b.2))
            .map(|b| b.0.max(start))
            .min();
        Some(cap.map_or(cur, |c| cur.min(c)))
    }

    /// A served batch whose delivery state `RecordState.forId` does not know and that no
    /// other batch overlaps (the combiner keeps it as it is): `(first, last, state)`. One
    /// pass over the batches, sorted by first offset: a batch overlaps another when an
    /// earlier one reaches it or the next one starts within it.
    fn unknown_state(&self) -> Option<Range> {
        let v: Vec<Range> = self.batches.iter().copied().collect();
        let mut reach = i64::MIN;
        for (i, &b) in v.iter().enumerate() {
            let before = reach >= b.0;
            let after = v.get(i + 1).is_some_and(|n| n.0 <= b.1);
            if !known_state(b.2) && !before && !after {
                return Some(b);
            }
            reach = reach.max(b.1);
        }
        None
    }

    /// `batches` pruned at `start` as `PersisterStateBatchCombiner.pruneBatches` does (-1:
    /// nothing pruned).
    fn prune(&mut self, start: i64) {
        if start == -1 {
            return;
        }
        // Those starting at or above `start` stay as they are: only the ones below it (few
        // once pruned: the start seldom moves back) are cut or dropped.
        let kept = self.batches.split_off(&(start, i64::MIN, i64::MIN));
        let below = std::mem::replace(&mut self.batches, kept);
        self.batches.extend(
            (below.into_iter())
                .filter(|&(_, last, _)| last >= start)
                .map(|(_, last, state)| (start, last, state)),
        );
    }

    /// Add `ranges` to the served batches, or give up on them past [`MAX_RANGES`].
    fn add(&mut self, ranges: Vec<Range>) {
        if !self.overflow {
            self.batches.extend(ranges);
        }
        if self.batches.len() > MAX_RANGES {
            self.batches.clear();
            self.overflow = true;
        }
    }
}

/// A state batch's first and last offsets and its delivery state.
type Range = (i64, i64, i64);

/// The most served batches kept of one share partition: a share-partition leader holds a
/// few thousand in flight (`group.share.partition.max.record.locks`); a state past this
/// (hostile input) is not judged, its memory and time bounded.
const MAX_RANGES: usize = 1 << 16;

/// A terminal delivery state: 2 ACKNOWLEDGED, 4 ARCHIVED
/// (`PersisterStateBatchCombiner.compareBatchDeliveryInfo`'s list).
fn terminal(state: i64) -> bool {
    matches!(state, 2 | 4)
}

/// A delivery state `RecordState.forId` knows (0 AVAILABLE, 1 ACQUIRED, 2 ACKNOWLEDGED,
/// 4 ARCHIVED); any other throws inside `SharePartition.maybeInitialize`.
fn known_state(state: i64) -> bool {
    matches!(state, 0 | 1 | 2 | 4)
}

/// The state batches of a record.
fn batch_ranges(v: &groups::StructVal<'_>) -> Vec<Range> {
    (v.items("StateBatches").iter())
        .filter_map(|b| b.as_struct())
        .map(|b| {
            (
                b.int("FirstOffset"),
                b.int("LastOffset"),
                b.int("DeliveryState"),
            )
        })
        .collect()
}

/// The replay of one `__share_group_state` partition, fed record by record in offset order
/// by the scan's walk ([`RecordSink`]).
#[derive(Debug)]
pub struct ShareStateReplay {
    /// Records below it are not loaded (the checkpointed log start; `None`: the first
    /// segment's base, at or below every record).
    log_start: Option<i64>,
    /// The log holds every record from offset 0: its first segment's base is 0 and no
    /// checkpointed log start is above it (nothing was ever removed from its start).
    complete_from_zero: bool,
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
        let first_base = (p.segments.iter().find(|s| s.log.is_some())).map(|s| s.base_offset);
        (live && ctx.topic == groups::SHARE_GROUP_STATE_TOPIC).then(|| ShareStateReplay {
            log_start: ctx.log_start_offset,
            complete_from_zero: first_base == Some(0)
                && ctx.log_start_offset.is_none_or(|s| s <= 0),
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
        let fresh = !self.states.contains_key(&key);
        let s = self.states.entry(key).or_default();
        s.last = offset;
        let start = v.int("StartOffset");
        if snapshot {
            // `handleShareSnapshot`: the record is the whole state.
            let epoch = v.int("StateEpoch") as i32;
            s.max_state_epoch = Some(s.max_state_epoch.map_or(epoch, |m| m.max(epoch)));
            s.snapshot = Some(offset);
            s.state_epoch = epoch;
            s.start_offset = start;
            s.batches.clear();
            s.overflow = false;
            s.add(batch_ranges(v));
        } else if fresh {
            // `handleShareUpdate` into no state: `ShareGroupOffset.fromRecord`, as written.
            s.state_epoch = -1;
            s.start_offset = start;
            s.batches.clear();
            s.overflow = false;
            s.add(batch_ranges(v));
        } else {
            // `ShareCoordinatorShard.merge`: the start offset an update's unless -1, its
            // batches combined with the state's and pruned at that start.
            if start != -1 {
                s.start_offset = start;
            }
            s.add(batch_ranges(v));
            let start = s.start_offset;
            s.prune(start);
        }
    }

    /// The end of the partition's walk: the findings of the replay into `findings`, the
    /// served starts into `report`'s cluster inputs — when every record from the log start
    /// was read (no `--max-bytes` stop, no segment unreadable: a record it holds may be a
    /// share partition's snapshot).
    pub(crate) fn conclude(
        self,
        ctx: &crate::partition::state::PartitionContext,
        report: &mut crate::partition::results::PartitionReport,
        findings: &mut Vec<Finding>,
    ) {
        let whole = !report.partially_read
            && (report.carried.segment_walks.iter()).all(|w| w.walk.is_some());
        let (found, starts) = self.finish(ctx, whole);
        findings.extend(found);
        if !starts.is_empty() {
            report.carried.cluster_inputs.share_starts = Some(starts.into());
        }
    }

    /// The findings of the replay (`whole`: every record from the log start was read; none
    /// otherwise).
    pub(crate) fn finish(
        self,
        ctx: &crate::partition::state::PartitionContext,
        whole: bool,
    ) -> (Vec<Finding>, Vec<ShareStart>) {
        if !whole {
            return (Vec::new(), Vec::new());
        }
        let starts = self.starts();
        let mut out = Vec::new();
        for ((group, topic_id, partition), s) in &self.states {
            let id = crate::read::format::checkpoint::encode_uuid(topic_id);
            let who = format!("share group {group:?}'s partition {id}:{partition}");
            let ev = json!({"group": group, "topic_id": id, "partition": partition});
            let mut lost = None;
            if s.snapshot.is_none() {
                let from = (self.log_start, self.complete_from_zero);
                let f = lost_finding(ctx, &who, s, ev.clone(), from);
                lost = Some(f.identity_key());
                out.push(f);
            }
            if let Some(f) = below_start(ctx, &who, s, ev.clone()) {
                out.push(match lost.take() {
                    Some(key) => f.caused_by(key),
                    None => f,
                });
            }
            if let Some(f) = epoch_fenced(ctx, &who, s, ev.clone()) {
                out.push(f);
            }
            if let Some(f) = unknown_state(ctx, &who, s, ev) {
                out.push(f);
            }
        }
        (out, starts)
    }

    /// Every live share partition's served start (a start of -1 left out: the reset
    /// policy resolves it).
    fn starts(&self) -> Vec<ShareStart> {
        (self.states.iter())
            // A share partition that fails to initialize has no start to hold against.
            .filter(|(_, s)| s.unknown_state().is_none())
            .filter_map(|((group, topic_id, partition), s)| {
                Some(ShareStart {
                    group: group.clone(),
                    topic_id: crate::read::format::checkpoint::encode_uuid(topic_id),
                    partition: *partition,
                    start_offset: s.start_offset,
                    effective_start: s.effective_start()?,
                    state_offset: s.last,
                })
            })
            .collect()
    }
}

/// The remediation deleting the share group's state of the share partition in `ev`
/// (`group`, `topic_id`), with `why` after the command's effect. `kafka-share-groups.sh
/// --delete-offsets` takes whole topics (`ShareGroupCommandOptions.checkArgs` wants
/// `--group` and `--topic`; the DeleteShareGroupOffsets request names topics only, and
/// `GroupMetadataManager.sharePartitionsEligibleForOffsetDeletion` deletes the state of
/// every initialized partition of each): the other partitions of the topic lose their
/// state too. The state names the topic by id only: `<topic>` and a note.
fn delete_state(ev: &serde_json::Value, why: &str) -> String {
    let mut a = crate::escape::ShellArgs::default();
    let group = a.option(
        "group",
        ev["group"].as_str().unwrap_or_default(),
        "group",
        "the group id",
    );
    let id = ev["topic_id"].as_str().unwrap_or_default();
    // A topic id's text is URL-safe base64 (`-`, `_`: nothing a shell reads), and may start
    // with `-`: joined to its option then (`flag`).
    let by_id = crate::escape::flag("topic-id", id);
    a.note_once(format!(
        "<topic>: the state names the topic by id, {id}; kafka-topics.sh --bootstrap-server <broker> --describe {by_id} gives its name"
    ));
    format!(
        "once the share group is empty, delete its state of the topic: kafka-share-groups.sh --bootstrap-server <broker> {group} --topic <topic> --delete-offsets (it takes whole topics: the group's state of every partition of the topic is deleted, and each is initialized again from share.auto.offset.reset{why}){}",
        a.suffix()
    )
}

/// `share_state_lost`: no snapshot at or above the log start, the state an update's alone.
fn lost_finding(
    ctx: &crate::partition::state::PartitionContext,
    who: &str,
    s: &State,
    mut ev: serde_json::Value,
    (log_start, complete_from_zero): (Option<i64>, bool),
) -> Finding {
    ev["latest_update_offset"] = json!(s.last);
    ev["log_start_offset"] = json!(log_start);
    ev["start_offset"] = json!(s.start_offset);
    // `ShareGroupOffset.fromRecord(ShareUpdateValue)` keeps the update's start offset (the
    // share-partition leader writes its own in every update), -1 only when it wrote none.
    let (start, restart) = if s.start_offset >= 0 {
        (
            format!("start offset {} from the updates", s.start_offset),
            format!(
                "share consumers: none; the share partition restarts at offset {} (the updates' start offset, SharePartition.startOffsetDuringInitialization takes it as is) with the updates' record states only: records the lost snapshot held as acknowledged or archived may be delivered again",
                s.start_offset
            ),
        )
    } else {
        (
            "start offset -1".to_string(),
            "share consumers: none; the share partition restarts from share.auto.offset.reset (SharePartition.startOffsetDuringInitialization), so records are delivered again or skipped".to_string(),
        )
    };
    const LOAD: &str = "ShareCoordinatorShard.replay → handleShareUpdate on a share partition without state keeps the update as its state (ShareGroupOffset.fromRecord: state epoch -1, the update's start offset and batches as written)";
    const RESET: &str = "set the group's start offset with kafka-share-groups.sh --reset-offsets if the restart position is wrong";
    // A log complete from offset 0 lost nothing: no snapshot was ever written before the
    // updates, which no share coordinator does (a write to a share partition it holds no
    // state for is refused, `ShareCoordinatorShardTest.testWriteFailsOnUninitializedPartition`).
    let never = complete_from_zero;
    let (what, broker, remediation) = if never {
        (
            "no ShareSnapshot in a log complete from offset 0, only updates",
            format!(
                "{LOAD}; a share coordinator writes no update for a share partition it has not initialized (ShareCoordinatorShard refuses the write), so these updates were written by something else (a copy or a tool), not lost by the log's retention"
            ),
            format!(
                "find what wrote updates for this share partition without its initializing ShareSnapshot (the share coordinator does not); {RESET}"
            ),
        )
    } else {
        (
            "no ShareSnapshot at or above the log start, only updates",
            format!(
                "{LOAD}; the coordinator's own pruning never moves the log start past a live share partition's latest snapshot (ShareCoordinatorOffsetsManager.updateState), so the snapshot was removed by other means (DeleteRecords, retention set on the topic)"
            ),
            format!(
                "check how the log start of this __share_group_state partition moved (kafka-delete-records.sh, retention.ms or retention.bytes set on the topic); {RESET}"
            ),
        )
    };
    let held = if never {
        "so the states of acknowledged and in-flight records are whatever the updates say"
    } else {
        "so the states of the acknowledged and in-flight records the snapshot held are lost"
    };
    Finding::new(
        Kind::ShareStateLost,
        &ctx.topic,
        ctx.partition,
        format!(
            "{who}: {what} (the latest at offset {}): the share coordinator's load takes the first update as the whole state (state epoch -1, {start}), {held}",
            s.last
        ),
    )
    .offset(s.last)
    .evidence(ev)
    .broker(broker)
    .client_error(restart)
    .remediation(remediation)
}

/// `share_state_batch_below_start`: the served state holds a batch starting below its start
/// offset — an error when the start is known; a warning when it is -1, which
/// `SharePartition.startOffsetDuringInitialization` resolves through
/// `share.auto.offset.reset` (`latest` by default: the data log's end, above the batches
/// already delivered; `earliest` would keep them).
fn below_start(
    ctx: &crate::partition::state::PartitionContext,
    who: &str,
    s: &State,
    mut ev: serde_json::Value,
) -> Option<Finding> {
    let (first, last) = s.lowest()?;
    let known = s.start_offset >= 0;
    if known && first >= s.start_offset {
        return None;
    }
    let remediation = delete_state(&ev, "");
    let from = if s.snapshot.is_some() {
        format!(
            "the ShareSnapshot at offset {}",
            s.snapshot.unwrap_or_default()
        )
    } else {
        "the updates alone".to_string()
    };
    if let Some(at) = s.snapshot {
        ev["snapshot_offset"] = json!(at);
    }
    ev["state_offset"] = json!(s.last);
    ev["start_offset"] = json!(s.start_offset);
    ev["batch"] = json!([first, last]);
    let f = if known {
        Finding::new(
            Kind::ShareStateBatchBelowStart,
            &ctx.topic,
            ctx.partition,
            format!(
                "{who}: its state ({from}, as of offset {}) holds a state batch {first}..={last} starting below its start offset {}: SharePartition.maybeInitialize refuses the state and the share partition cannot be consumed",
                s.last, s.start_offset
            ),
        )
    } else {
        ev["assumes"] = json!("share.auto.offset.reset=latest (the default)");
        Finding::new(
            Kind::ShareStateBatchBelowStart,
            &ctx.topic,
            ctx.partition,
            format!(
                "{who}: its state ({from}, as of offset {}) has no start offset (-1) but holds state batches from {first}: SharePartition.maybeInitialize resolves the start through share.auto.offset.reset — with the default latest, the data log's end, above these batches, and it refuses the state (with earliest it would load)",
                s.last
            ),
        )
        .severity(crate::finding::Severity::Warning)
    };
    Some(
        f.offset(s.last)
            .evidence(ev)
            .broker("the share coordinator serves the state as its records leave it; SharePartition.maybeInitialize fails the share partition on a state batch whose first offset is below the start offset (IllegalStateException: Failed to initialize the share partition); PersisterStateBatchCombiner prunes batches at the start offset when it merges an update, but a snapshot, or an update taken alone, is served as written")
            .client_error("share consumers of this partition receive nothing from it: its initialization fails on every fetch")
            .remediation(remediation),
    )
}

/// `share_state_unknown_delivery_state`: a served batch whose delivery state no
/// `RecordState` has — `RecordState.forId` throws inside `SharePartition.maybeInitialize`,
/// whose catch fails the share partition.
fn unknown_state(
    ctx: &crate::partition::state::PartitionContext,
    who: &str,
    s: &State,
    mut ev: serde_json::Value,
) -> Option<Finding> {
    let (first, last, state) = s.unknown_state()?;
    let remediation = delete_state(&ev, "");
    ev["state_offset"] = json!(s.last);
    ev["batch"] = json!([first, last]);
    ev["delivery_state"] = json!(state);
    Some(
        Finding::new(
            Kind::ShareStateUnknownDeliveryState,
            &ctx.topic,
            ctx.partition,
            format!(
                "{who}: its state (as of offset {}) holds a state batch {first}..={last} in delivery state {state}, which no RecordState has (0 available, 1 acquired, 2 acknowledged, 4 archived): SharePartition.maybeInitialize fails on it and the share partition cannot be consumed",
                s.last
            ),
        )
        .offset(s.last)
        .evidence(ev)
        .broker("the share coordinator serves the state as its records leave it; SharePartition.maybeInitialize builds each batch's InFlightBatch with RecordState.forId, which throws IllegalArgumentException (Unknown record state id) for any other id, and the share partition is FAILED; the coordinator never persists such a state (ARCHIVING, 3, is never written)")
        .client_error("share consumers of this partition receive nothing from it: its initialization fails on every fetch")
        .remediation(remediation),
    )
}

/// `share_state_epoch_fenced`: the latest snapshot lowered the state epoch below one an
/// earlier snapshot carried, with no tombstone between.
fn epoch_fenced(
    ctx: &crate::partition::state::PartitionContext,
    who: &str,
    s: &State,
    mut ev: serde_json::Value,
) -> Option<Finding> {
    let at = s.snapshot?;
    let max = s
        .max_state_epoch
        .filter(|&m| m > s.state_epoch && s.state_epoch >= 0)?;
    let remediation = delete_state(&ev, "; the tombstones clear the kept state epoch");
    ev["snapshot_offset"] = json!(at);
    ev["state_epoch"] = json!(s.state_epoch);
    ev["highest_state_epoch"] = json!(max);
    Some(
        Finding::new(
            Kind::ShareStateEpochFenced,
            &ctx.topic,
            ctx.partition,
            format!(
                "{who}: the ShareSnapshot at offset {at} carries state epoch {} below the {max} an earlier snapshot carried, with no deletion between: the share coordinator keeps the highest state epoch and refuses every write of the share partition at the served one (FENCED_STATE_EPOCH)",
                s.state_epoch
            ),
        )
        .offset(at)
        .evidence(ev)
        .broker("ShareCoordinatorShard.handleShareSnapshot keeps the highest state epoch seen (maybeUpdateStateEpochMap) and serves the latest snapshot's; the share-partition leader takes the served state epoch (SharePartition.maybeInitialize) and writes with it, and maybeGetWriteStateError refuses a write below the kept epoch: no acknowledgement is persisted and the start offset never moves. The coordinator never writes such a snapshot (initializeState and writeState are fenced the same way)")
        .client_error("share consumers: acknowledgements are not persisted; after a leader change or restart the share partition's records are delivered again from the stale state")
        .remediation(remediation),
    )
}

/// The replay consumes the walk's records in offset order.
impl RecordSink for ShareStateReplay {
    fn record(&mut self, rec: &LogRecord, _segment: &str) {
        self.apply(rec.offset, rec.key.as_deref(), rec.value.as_deref());
    }
    fn marker(&mut self, _producer_id: i64, _commit: bool) {}
    fn unread(&mut self, _segment: &str, _message: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(ranges: &[Range], start: i64) -> State {
        let mut s = State {
            start_offset: start,
            ..State::default()
        };
        s.add(ranges.to_vec());
        s
    }

    /// `PersisterStateBatchCombiner.pruneBatches`: below the start dropped, a straddler cut
    /// at it, the rest kept as they are.
    #[test]
    fn prune_drops_cuts_and_keeps_as_the_combiner_does() {
        let mut s = state(&[(0, 9, 2), (5, 20, 0), (20, 30, 4), (40, 49, 0)], 10);
        s.prune(10);
        let got: Vec<Range> = s.batches.iter().copied().collect();
        assert_eq!(got, vec![(10, 20, 0), (20, 30, 4), (40, 49, 0)]);
        s.prune(-1);
        assert_eq!(s.batches.len(), 3);
    }

    /// The one-pass overlap test agrees with the pairwise one on every small shape.
    #[test]
    fn unknown_state_finds_the_batch_no_other_overlaps() {
        let shapes: &[&[Range]] = &[
            &[(0, 9, 3)],
            &[(0, 9, 3), (5, 7, 0)],
            &[(0, 20, 0), (5, 7, 3), (30, 39, 7)],
            &[(0, 4, 0), (5, 9, 3), (10, 14, 0)],
            &[(0, 4, 7), (0, 9, 0)],
            &[(0, 4, 1), (6, 9, 2)],
        ];
        for ranges in shapes {
            let s = state(ranges, 0);
            let v: Vec<Range> = s.batches.iter().copied().collect();
            let pairwise = v.iter().enumerate().find(|(i, b)| {
                !known_state(b.2)
                    && !(v.iter().enumerate()).any(|(j, o)| j != *i && o.0 <= b.1 && o.1 >= b.0)
            });
            assert_eq!(s.unknown_state(), pairwise.map(|(_, b)| *b), "{ranges:?}");
        }
    }

    /// A hostile state past [`MAX_RANGES`] batches is not kept, and nothing rests on it.
    #[test]
    fn a_state_past_the_batch_cap_is_not_judged() {
        let many: Vec<Range> = (0..=MAX_RANGES as i64).map(|i| (i * 2, i * 2, 3)).collect();
        let s = state(&many, 0);
        assert!(s.overflow && s.batches.is_empty());
        assert_eq!(
            (s.effective_start(), s.unknown_state(), s.lowest()),
            (None, None, None)
        );
    }
}
