//! The group findings: the replay's anomalies as [`Finding`]s, and the end-of-log checks
//! (streams groups left at the KIP-1331 barrier, deleted groups whose records stay live).
//!
//! Kafka sources modelled (Kafka 4.x group coordinator):
//! * `GroupCoordinatorShard.replay` — dispatch per record type; unknown types are skipped
//!   by the loader (`CoordinatorLoaderImpl`), anything else that throws fails the load;
//! * `GroupMetadataManager.getOrMaybeCreatePersisted{Consumer,Share,Streams}Group` —
//!   "Group %s is not a … group" for a record of another group type;
//! * `GroupMetadataManager.replay(*GroupMetadataKey, …)`, `replay(*MemberMetadataKey, …)`,
//!   `replay(*TargetAssignmentMetadataKey, …)` — the tombstone order checks
//!   ("Received a tombstone record to delete …");
//! * `ConsumerGroup.updateMember` → `addPartitionEpochs` and `StreamsGroup.updateMember` →
//!   `addTaskProcessId` — a current assignment claiming what another member holds
//!   (`replay::owners`; which releases throw: `evidence.load_fails_in`);
//! * `GroupMetadataManager.replay(ShareGroup…Key, …)` of Kafka 4.0, before KAFKA-19453 —
//!   a share record for a group or member the load does not hold yet (`replay::share`);
//! * `GroupCoordinatorService.runOneStreamsTopologyCleanupCycle` /
//!   `cleanupTopologyForPartition` / `finalizeCleanupAfterDelete` (KIP-1331) — the -2
//!   barrier, the plugin delete, the finalize to -1 and the tombstones of the next sweep.

use super::model::{GroupState, GroupType};
use super::replay::{Anomaly, AnomalyKind, Replay, UNCERTAIN};
use crate::finding::evidence::{self, DeletionJoint, LoadFailsIn, LoadJoint};
use crate::finding::{Finding, Kind, identity_key};
use crate::partition::recovery::BrokerVersion;
use crate::read::format::groups::CONSUMER_OFFSETS;
use serde_json::json;

/// `evidence` with whether the unfinished deletion is one ([`DeletionJoint`]).
fn with_deletion(mut evidence: serde_json::Value, deletion: bool) -> serde_json::Value {
    evidence::merge(&mut evidence, &DeletionJoint { deletion });
    evidence
}

/// End-of-log checks of a finished replay (called by [`Replay::finish`]).
pub(crate) fn end_of_log(r: &mut Replay) {
    let mut found = Vec::new();
    for g in r.groups.values_mut() {
        if g.group_type != GroupType::Streams || g.description.stored != UNCERTAIN {
            continue;
        }
        let d = g.description;
        let at = d.uncertain_since.unwrap_or(g.last_offset);
        let members = g.members.len();
        if members > 0 {
            // Only an empty group is eligible for the cleanup's delete. With members, -2 is
            // the barrier of a topology push (markTopologyUncertain before the plugin's
            // setTopology) that has no outcome yet: a crash or a transient plugin failure,
            // which the next heartbeat's re-solicit repairs.
            found.push(Anomaly {
                kind: AnomalyKind::DeletionUnfinished,
                group: Some(g.group_id.clone()),
                offset: at,
                position: 0,
                segment: String::new(),
                message: format!(
                    "streams group {:?} ({members} member(s)): from offset {at} on its metadata carries the \"uncertain\" stored-description epoch -2 with no later value: a topology-description push (or a cleanup raced by a rejoining member) left its barrier without an outcome; not a deletion, since only empty groups are cleaned up",
                    g.group_id
                ),
                evidence: with_deletion(json!({"group_id": g.group_id, "barrier_offset": at, "barrier_writes": d.uncertain_writes,
                    "failed_description_epoch": d.failed, "members": members, "offsets": g.offsets.len(),
                    "group_epoch": g.epoch, "topology_epoch": g.topology.as_ref().map(|t| t.epoch)}), false),
                load_fails: false,
                severity: Some(crate::finding::Severity::Info),
                key_version: None,
            });
            continue;
        }
        g.state = GroupState::DeletionUnfinished;
        let how = if d.uncertain_writes >= 2 {
            format!(
                "the barrier was written {} times: the topology-description plugin's delete keeps failing and the group is held back from tombstoning",
                d.uncertain_writes
            )
        } else {
            "either the plugin's delete failed (the group is held back and retried on the next cleanup cycle) or the coordinator stopped after writing the barrier; the log cannot tell which".to_string()
        };
        found.push(Anomaly {
            kind: AnomalyKind::DeletionUnfinished,
            group: Some(g.group_id.clone()),
            offset: at,
            position: 0,
            segment: String::new(),
            message: format!(
                "streams group {:?} (empty): from offset {at} on its metadata carries the \"uncertain\" stored-description epoch -2 with no later value or tombstone: a deletion or expiration (KIP-1331) started and did not finish; {how}",
                g.group_id
            ),
            evidence: with_deletion(json!({"group_id": g.group_id, "barrier_offset": at, "barrier_writes": d.uncertain_writes,
                "failed_description_epoch": d.failed, "members": g.members.len(), "offsets": g.offsets.len(),
                "group_epoch": g.epoch, "topology_epoch": g.topology.as_ref().map(|t| t.epoch)}), true),
            load_fails: false,
            severity: None,
            key_version: None,
        });
    }
    let deleted: Vec<(String, i64, GroupType)> = r
        .deleted
        .values()
        .filter_map(|g| Some((g.group_id.clone(), g.deleted_at?, g.group_type)))
        .collect();
    for (id, at, t) in deleted {
        // Offsets belong to the group id, not to one incarnation: a group converted to
        // another protocol (classic ↔ consumer: the old type's tombstones, then the new
        // type's records) or re-created keeps them.
        let live_again = r.groups.contains_key(&id);
        let mut left: Vec<(i16, i64)> = r
            .live_keys_of(&id)
            .into_iter()
            .filter(|(ty, o)| *o < at && !(live_again && matches!(ty, 0 | 1)))
            .collect();
        if left.is_empty() {
            continue;
        }
        left.sort_by_key(|x| x.1);
        let names: Vec<serde_json::Value> = left
            .iter()
            .take(20)
            .map(|(ty, o)| {
                let name = CONSUMER_OFFSETS
                    .iter()
                    .find(|x| x.id == *ty)
                    .map_or("?", |x| x.name());
                json!({"type": ty, "record": name, "offset": o})
            })
            .collect();
        found.push(Anomaly {
            kind: AnomalyKind::TombstonesIncomplete,
            group: Some(id.clone()),
            offset: at,
            position: 0,
            segment: String::new(),
            message: format!(
                "{} group {id:?} was deleted at offset {at} but {} of its records written before stay live (first: {} at offset {}): once compaction removes the tombstone, the next load rebuilds the group from them",
                t.as_str(),
                left.len(),
                names[0]["record"].as_str().unwrap_or("?"),
                left[0].1
            ),
            evidence: json!({"group_id": id, "group_type": t.as_str(), "deleted_at": at, "live_records": left.len(), "records": names}),
            load_fails: false,
            severity: None,
            key_version: None,
        });
    }
    r.anomalies.extend(found);
}

/// The findings of a finished replay of `topic`-`partition` (pure: no I/O).
pub fn findings(topic: &str, partition: i32, r: &Replay) -> Vec<Finding> {
    findings_of(topic, partition, &r.anomalies)
}

/// [`findings`] from a finished replay's anomalies (what the walk keeps per partition).
pub(crate) fn findings_of(topic: &str, partition: i32, anomalies: &[Anomaly]) -> Vec<Finding> {
    findings_for(topic, partition, anomalies, None)
}

/// [`findings_of`] for the loads of `release` (`verify --broker-version`): a failure
/// scoped before a fix that release carries is not made (its load goes past the record to
/// the next one it throws on), one it certainly throws on says so and hides what follows
/// ([`super::release::for_release`]); `None`: every release, the scoped wording.
pub(crate) fn findings_for(
    topic: &str,
    partition: i32,
    anomalies: &[Anomaly],
    release: Option<BrokerVersion>,
) -> Vec<Finding> {
    let anomalies = &*super::release::for_release(anomalies, release);
    let mut out = Vec::new();
    // The broker's load stops at the first record it throws on (a wrong group type, a
    // record that does not deserialize, a tombstone out of the coordinator's order): one
    // finding for that record, the records it would reject from it on counted in its
    // evidence; a rejection after the load's stop is not reached by it and gets no
    // finding of its own — unless the stop is one only some releases meet (`load_fails_in`
    // before a fix): the releases with the fix go past it and stop at the next record of
    // another scope, which gets its finding too.
    let stops = load_stops(anomalies);
    for (i, a) in anomalies.iter().enumerate() {
        let is_rejection = matches!(a.kind, AnomalyKind::LoadFailure | AnomalyKind::Undecodable);
        let stop = stops.contains(&i);
        // Only a record a load stops at is reported; the others (a rejection, or a
        // tombstone out of order) are never reached by the loads that stopped before.
        if (is_rejection || a.load_fails) && !stop {
            continue;
        }
        let kind = match a.kind {
            AnomalyKind::LoadFailure | AnomalyKind::Undecodable => Kind::GroupLoadFailure,
            AnomalyKind::TombstonesIncomplete => Kind::GroupTombstonesIncomplete,
            AnomalyKind::EpochRegression => Kind::GroupEpochRegression,
            AnomalyKind::DeletionUnfinished => Kind::GroupDeletionUnfinished,
            AnomalyKind::IdempotentOffsetCommit => Kind::GroupOffsetCommitInIdempotentBatch,
        };
        let mut evidence = a.evidence.clone();
        if let Some(o) = evidence.as_object_mut() {
            o.insert("load_fails".into(), json!(a.load_fails));
            o.insert("record_offset".into(), json!(a.offset));
            if stop {
                let rejected = anomalies[i..].iter().filter(|a| a.load_fails).count();
                o.insert("rejected_records".into(), json!(rejected));
            }
        }
        let mut f = Finding::new(kind, topic, partition, a.message.clone())
            .offset(a.offset)
            .evidence(evidence)
            .broker(broker_text(a))
            .remediation(remediation(a));
        if let Some(sev) = a.severity {
            f = f.severity(sev);
        }
        if !a.segment.is_empty() {
            f = f.segment(a.segment.clone()).position(a.position);
        }
        if a.kind == AnomalyKind::Undecodable {
            f = f.caused_by(identity_key(
                Kind::OffsetsRecordUndecodable,
                topic,
                partition,
                Some(a.offset),
                None,
            ));
        }
        out.push(f);
    }
    out
}

/// The anomalies a load stops at, by index: the first one the load throws on, and after a
/// stop that only the releases before a fix meet (`LoadFailsIn::Kafka4Before*`,
/// `Kafka3And4BeforeKafka20570`), the next one of a scope no stop before it covers (the
/// releases with that fix replay past the first). A stop of every release (`kafka_4`,
/// `kafka_3_and_4`, a record that does not deserialize) covers all that follows, as does a
/// scoped one decided for the release given (`evidence.broker_version`: its load stops
/// there).
fn load_stops(anomalies: &[Anomaly]) -> Vec<usize> {
    let scope = |a: &Anomaly| match a.kind {
        AnomalyKind::Undecodable => None,
        _ if super::release::decided_for(a).is_some() => None,
        _ => match evidence::read_value::<LoadJoint>(&a.evidence).load_fails_in {
            LoadFailsIn::Kafka4 | LoadFailsIn::Kafka3And4 => None,
            scoped => Some(scoped),
        },
    };
    let mut seen: Vec<LoadFailsIn> = Vec::new();
    let mut stops = Vec::new();
    for (i, a) in anomalies.iter().enumerate().filter(|(_, a)| a.load_fails) {
        match scope(a) {
            None => {
                stops.push(i);
                break;
            }
            Some(s) if !seen.contains(&s) => {
                seen.push(s);
                stops.push(i);
            }
            Some(_) => {}
        }
    }
    stops
}

/// What a coordinator does with a record its load throws on, by version: Kafka 4.x's
/// runtime (`CoordinatorRuntime`: the shard fails and is unloaded; a load is retried only
/// for a newer partition epoch) and, for a record that does not deserialize, the ≤ 3.x
/// coordinator too (`GroupMetadataManager.loadGroupsAndOffsets` catches the error and
/// marks the partition owned; the groups are applied after the read loop, so none is).
pub(crate) const LOAD_THROWS_4X: &str = "the group coordinator's load of this partition throws at this record (Kafka 4.x: GroupCoordinatorShard.replay → GroupMetadataManager/OffsetMetadataManager.replay): the coordinator of the partition fails and is unloaded (CoordinatorRuntime), so all its groups are unavailable (NOT_COORDINATOR); the load is retried only when the partition's leadership moves, and throws again while the record is in the log";

/// [`LOAD_THROWS_4X`] and what a ≤ 3.x coordinator does with a record that does not
/// deserialize.
pub(crate) const LOAD_THROWS_ANY: &str = "the group coordinator's load of this partition throws at this record. Kafka 4.x (GroupCoordinatorShard.replay): the coordinator of the partition fails and is unloaded (CoordinatorRuntime), so all its groups are unavailable (NOT_COORDINATOR) until the partition's leadership moves and a load without the record succeeds. Kafka ≤ 3.x (GroupMetadataManager.loadGroupsAndOffsets): the error is logged (\"Error loading offsets\") and the partition is served with none of its groups loaded: their consumers find no committed offset and reset by auto.offset.reset";

/// What the coordinators do with a consumer group's current assignment that claims a
/// partition another member holds at a lower member epoch (`ConsumerGroup.addPartitionEpochs`),
/// or a streams group's that claims an active task another member holds
/// (`StreamsGroup.addTaskProcessId`), before and since KAFKA-19862.
pub(crate) const LOAD_THROWS_BEFORE_KAFKA_19862: &str = "Kafka 4.x before KAFKA-19862 (PR #20907, December 2025: trunk for 4.2, backported to the 4.0 and 4.1 branches): the group coordinator's load of this partition throws at this record (ConsumerGroup.updateMember → addPartitionEpochs): the coordinator of the partition fails and is unloaded (CoordinatorRuntime), so all its groups are unavailable (NOT_COORDINATOR) until the partition's leadership moves and a load without the record succeeds. Releases with KAFKA-19862 load it: a consumer group claim at a member epoch above the holder's replaces the holder's; a streams group claim (StreamsGroup.updateMember → addTaskProcessId, streams groups being 4.1+) sets the claimant's process whatever the epochs (4.1.2, 4.2.0 and later). Kafka 3.x's own coordinator (GroupMetadataManager.readMessageKey) throws at the first record of a key version above 2 before KAFKA-14869 (3.0.0–3.4.0) and skips consumer and streams group records since (3.4.1, 3.5.0 and later); a 3.6–3.9 broker may run the new group coordinator instead (its configuration's choice)";

/// What the coordinators do with a streams group's record for a group id a simple classic
/// group holds (offsets replayed before it), before and since KAFKA-20254.
pub(crate) const LOAD_THROWS_BEFORE_KAFKA_20254: &str = "Kafka 4.x before KAFKA-20254 (PR #21641, March 2026: trunk, cherry-picked to 4.2): the group coordinator's load of this partition throws at this record (GroupMetadataManager.getOrMaybeCreatePersistedStreamsGroup: \"Group … is not a streams group\"): the coordinator of the partition fails and is unloaded (CoordinatorRuntime), so all its groups are unavailable (NOT_COORDINATOR) until the partition's leadership moves and a load without the record succeeds. Releases with KAFKA-20254 load it: the simple classic group, which has no record of its own, is replaced by the streams group (as getOrMaybeCreatePersistedConsumerGroup always did). Kafka 3.x's own coordinator (GroupMetadataManager.readMessageKey) throws at the first record of a key version above 2 before KAFKA-14869 (3.0.0–3.4.0) and skips streams group records since (3.4.1, 3.5.0 and later); a 3.6–3.9 broker may run the new group coordinator instead (its configuration's choice)";

/// What the coordinators do with a streams group metadata value repeating a key of its
/// `LastAssignmentConfigs` (`replay::duplicates`), since 4.2.
pub(crate) const LOAD_THROWS_SINCE_4_2: &str = "Kafka 4.2 and later: the group coordinator's load of this partition throws at this record (GroupMetadataManager.replay of the streams group metadata collects LastAssignmentConfigs into a map by key, Collectors.toMap: \"Duplicate key …\"): the coordinator of the partition fails and is unloaded (CoordinatorRuntime), so all its groups are unavailable (NOT_COORDINATOR) until the partition's leadership moves and a load without the record succeeds. Kafka 4.1 does not read the field and loads the record; 4.0 has no streams groups; Kafka 3.x's own coordinator throws at the first record of a key version above 2 before KAFKA-14869 (3.0.0–3.4.0) and skips streams group records since";

/// What the coordinators do with a share group record for a group (or member) the load
/// does not hold yet, before and since KAFKA-19453 (`replay::share`).
pub(crate) const LOAD_THROWS_BEFORE_KAFKA_19453: &str = "Kafka 4.0.x (share groups in early access), before KAFKA-19453 (PR #20076 on trunk and #20100 on the 4.1 branch, July 2025: in 4.1.0 and later, never on the 4.0 branch): the group coordinator's load of this partition throws at this record (GroupMetadataManager.replay of the ShareGroup* record → getOrMaybeCreatePersistedShareGroup without creating, or ShareGroup.getOrMaybeCreateMember): the coordinator of the partition fails and is unloaded (CoordinatorRuntime), so all its groups are unavailable (NOT_COORDINATOR) until the partition's leadership moves and a load without the record succeeds (a tombstone goes once the cleaner drops it past delete.retention.ms). Releases with KAFKA-19453 load it: a tombstone of an unknown group or member is ignored, a value creates the group or member. Kafka 3.x's own coordinator (GroupMetadataManager.readMessageKey) throws at the first record of a key version above 2 before KAFKA-14869 (3.0.0–3.4.0) and skips share group records since (3.4.1, 3.5.0 and later); a 3.6–3.9 broker may run the new group coordinator instead (its configuration's choice)";

/// What the coordinators do with a classic `consumer` group whose member's subscription
/// bytes the consumer protocol's reader throws on, before and since KAFKA-20570
/// (`replay::classic`).
pub(crate) const LOAD_THROWS_BEFORE_KAFKA_20570: &str = "the group coordinator's load of this partition throws at this record in the releases before KAFKA-20570. Kafka 4.x before it (PR #22264, May 2026: 4.0.x and 4.1.x, 4.2.0–4.2.1, 4.3.0–4.3.1; GroupMetadataManager.replay(GroupMetadataKey, …) → ClassicGroup.computeSubscribedTopics): the coordinator of the partition fails and is unloaded (CoordinatorRuntime), so all its groups are unavailable (NOT_COORDINATOR) until the partition's leadership moves and a load without the record succeeds. Kafka ≤ 3.x (GroupMetadataManager.loadGroupsAndOffsets): the error is logged (\"Error loading offsets\") and the partition is served with none of its groups loaded: their consumers find no committed offset and reset by auto.offset.reset. Releases with KAFKA-20570 (4.2.2, 4.3.2, 4.4.0 and later: ConsumerProtocol turns every error of the read into the SchemaException the load catches) load it: the group loads without its subscribed topics";

/// What a ≤ 3.x coordinator does with a record its load throws on (the release given,
/// `verify --broker-version`, being one).
pub(crate) const LOAD_THROWS_3X: &str = "the group coordinator's load of this partition throws at this record (Kafka ≤ 3.x: GroupMetadataManager.loadGroupsAndOffsets): the error is logged (\"Error loading offsets\") and the partition is served with none of its groups loaded: their consumers find no committed offset and reset by auto.offset.reset";

fn broker_text(a: &Anomaly) -> &'static str {
    match a.kind {
        AnomalyKind::Undecodable => LOAD_THROWS_ANY,
        _ if a.load_fails && super::release::decided_for(a).is_some() => {
            match super::release::decided_for(a).is_some_and(|v| v >= BrokerVersion(4, 0, 0)) {
                true => LOAD_THROWS_4X,
                false => LOAD_THROWS_3X,
            }
        }
        _ if a.load_fails => match evidence::read_value::<LoadJoint>(&a.evidence).load_fails_in {
            LoadFailsIn::Kafka4 => LOAD_THROWS_4X,
            LoadFailsIn::Kafka3And4 => LOAD_THROWS_ANY,
            LoadFailsIn::Kafka4BeforeKafka19862 => LOAD_THROWS_BEFORE_KAFKA_19862,
            LoadFailsIn::Kafka4BeforeKafka20254 => LOAD_THROWS_BEFORE_KAFKA_20254,
            LoadFailsIn::Kafka4BeforeKafka19453 => LOAD_THROWS_BEFORE_KAFKA_19453,
            LoadFailsIn::Kafka3And4BeforeKafka20570 => LOAD_THROWS_BEFORE_KAFKA_20570,
            LoadFailsIn::Kafka3BeforeKafka14869 => LOAD_THROWS_3X,
            LoadFailsIn::Kafka4Since42 => LOAD_THROWS_SINCE_4_2,
        },
        AnomalyKind::DeletionUnfinished
            if !evidence::read_value::<DeletionJoint>(&a.evidence).deletion =>
        {
            "the group stays live; the coordinator re-solicits the topology description on a member's next heartbeat and the push's outcome replaces the -2 (GroupCoordinatorService topology-description push, markTopologyUncertain)"
        }
        AnomalyKind::DeletionUnfinished => {
            "the coordinator keeps the group: its next cleanup cycle calls the topology-description plugin's deleteTopology again and tombstones the group only after a successful delete cleared the epoch to -1 (GroupCoordinatorService.runOneStreamsTopologyCleanupCycle)"
        }
        AnomalyKind::TombstonesIncomplete => {
            "the load accepts it, but the leftover records are live: compaction keeps them and a later load re-creates the group from them (GroupMetadataManager.getOrMaybeCreatePersisted*Group with createIfNotExists)"
        }
        AnomalyKind::EpochRegression => {
            "the load accepts it (replay sets the epoch it reads): members fenced by the higher epoch can rejoin at a stale epoch; assignments computed for the newer epoch are lost"
        }
        AnomalyKind::IdempotentOffsetCommit => {
            "Kafka 4.x (CoordinatorLoaderImpl hands OffsetMetadataManager.replay the batch's producer id, and any id but -1 makes a commit transactional): the commits stay pending for ever — no COMMIT/ABORT marker of that producer id comes —, the group's committed offsets for those partitions stay as before, and OffsetFetch with require_stable gets UNSTABLE_OFFSET_COMMIT for them until a tombstone of the key (an offset deletion, the group's deletion) clears them. Kafka 3.x (GroupMetadataManager.loadGroupsAndOffsets tests batch.isTransactional): applied as committed offsets"
        }
        _ => "the group coordinator's load of this partition throws at this record",
    }
}

fn remediation(a: &Anomaly) -> &'static str {
    match a.kind {
        AnomalyKind::LoadFailure | AnomalyKind::Undecodable => {
            "find which tool or client wrote the record (dump it with `klogscan dump --offsets-decoder`); the partition's groups load only once the record is gone: restore the partition from a healthy replica (Kafka 4.x answers the group APIs NOT_COORDINATOR while the load fails, so the group cannot be deleted through them)"
        }
        // A tombstone the load throws on: the coordinator of the partition is FAILED and
        // answers every group request NOT_COORDINATOR (`CoordinatorRuntime`), the deletion
        // `kafka-consumer-groups.sh`/`kafka-streams-groups.sh --delete` sends included.
        AnomalyKind::TombstonesIncomplete if a.load_fails => {
            "find which tool or client wrote the tombstone out of the coordinator's order (dump it with `klogscan dump --offsets-decoder`); the partition's groups load only once the record is gone: restore the partition from a healthy replica (Kafka 4.x answers the group APIs NOT_COORDINATOR while the load fails, so no kafka-consumer-groups.sh, kafka-share-groups.sh or kafka-streams-groups.sh --delete reaches the group)"
        }
        AnomalyKind::TombstonesIncomplete => {
            "delete the group again (kafka-consumer-groups.sh / kafka-streams-groups.sh --delete) so the coordinator writes the missing tombstones in its order"
        }
        AnomalyKind::EpochRegression => {
            "check for a restored or rewritten __consumer_offsets partition; restart the group's members so they rejoin at the current epoch"
        }
        AnomalyKind::IdempotentOffsetCommit => {
            "find the client that writes __consumer_offsets directly with an idempotent producer and stop it (offsets are committed through the group coordinator: OffsetCommit or a transaction's TxnOffsetCommit); on Kafka 4.x clear the stuck keys by deleting the group's offsets for those partitions (kafka-consumer-groups.sh --delete-offsets, which writes their tombstones) and committing them again"
        }
        AnomalyKind::DeletionUnfinished => {
            "check the topology-description plugin (broker logs: \"Topology-description cleanup\", delete-error sensor); once its delete succeeds the next cleanup cycle finishes the deletion"
        }
    }
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use super::*;
    use crate::partition::groups::replay::Input;
    use crate::testkit::groups::record;

    /// The pure path: records in, findings out, no files.
    #[test]
    fn findings_from_records() {
        let recs = [
            record(3, json!({"groupId": "g"}), Some((0, json!({"epoch": 5})))),
            record(3, json!({"groupId": "g"}), Some((0, json!({"epoch": 4})))),
        ];
        let mut r = Replay::new(0, "mem");
        for (i, (k, v)) in recs.iter().enumerate() {
            r.record(Input {
                offset: i as i64,
                producer_id: None,
                idempotent_producer_id: None,
                key: Some(k),
                value: v.as_deref(),
                position: 0,
                segment: "",
            });
        }
        r.finish();
        let f = findings("__consumer_offsets", 0, &r);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].kind, f[0].offset),
            (Kind::GroupEpochRegression, Some(1))
        );
        assert!(f[0].segment.is_none());
        assert_eq!(r.groups["g"].epoch, 4);
    }

    /// A load stops at the first record it throws on; a stop only the releases before a fix
    /// meet lets the next record of another scope stop the releases with the fix.
    #[test]
    fn a_scoped_stop_does_not_hide_a_later_failure_of_another_scope() {
        let a = |fails_in: Option<LoadFailsIn>| Anomaly {
            kind: AnomalyKind::LoadFailure,
            group: Some("g".into()),
            offset: 0,
            position: 0,
            segment: String::new(),
            message: String::new(),
            evidence: match fails_in {
                Some(load_fails_in) => json!(LoadJoint { load_fails_in }),
                None => json!({}),
            },
            load_fails: true,
            severity: None,
            key_version: None,
        };
        let (s19453, s19862) = (
            Some(LoadFailsIn::Kafka4BeforeKafka19453),
            Some(LoadFailsIn::Kafka4BeforeKafka19862),
        );
        // Same scope twice: the second is not reached by any release.
        assert_eq!(load_stops(&[a(s19453), a(s19453)]), [0]);
        // Another scope, then every release: each stops some load; nothing after the last.
        let all = [a(s19453), a(s19453), a(s19862), a(None), a(s19862), a(None)];
        assert_eq!(load_stops(&all), [0, 2, 3]);
        // A stop of every release first hides all that follows, as before.
        assert_eq!(load_stops(&[a(None), a(s19453)]), [0]);
        let f = findings_of("__consumer_offsets", 0, &all);
        let rejected: Vec<_> = f
            .iter()
            .map(|f| f.evidence["rejected_records"].clone())
            .collect();
        assert_eq!(rejected, [json!(6), json!(4), json!(3)]);
    }
}
