//! Audit of `ShareCoordinatorShardTest` (apache/kafka, `share-coordinator/src/test/java/org/
//! apache/kafka/coordinator/share/ShareCoordinatorShardTest.java`), the methods no suite test
//! cited before. Each case writes `__share_group_state-0` (and a data partition where the
//! served state meets one) as the share coordinator's load would replay it
//! (`ShareCoordinatorShard.replay`: `handleShareSnapshot` replaces the state whole and keeps
//! the highest leader and state epochs, a snapshot tombstone deletes all of it,
//! `handleShareUpdate` merges into the state or, into none, becomes it with state epoch -1),
//! runs `scan` (plain and `--deep`) and `verify`, and asserts klogscan's answer for Kafka's
//! shape and for a near miss that flips it. The shapes and helpers are
//! `kafka_share_coordinator_cases`'.
//!
//! What the methods hold that reaches the disk: the records a request writes (an update per
//! write until `share.coordinator.snapshot.update.records.per.snapshot` updates were counted
//! since the last snapshot, then a snapshot; a cold snapshot repeating a quiet state; a
//! tombstone per share partition of a deleted topic) and the fences the replay rebuilds
//! from them. A refused request (invalid partition, no metadata image, a fenced epoch, an
//! uninitialized share partition) writes nothing; its shape on disk is the one the refusal
//! keeps from being written.

#![cfg(feature = "testkit")]

use crate::kafka_share_coordinator_cases::{
    ACKNOWLEDGED, AVAILABLE, ORDERS, Raw, Run, STATE, Sp, log_dir, orders, run, state_log,
};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::{topic_id_for, uuid_text};

const SP: Sp = Sp("sg", ORDERS, 0);
const SP1: Sp = Sp("sg", ORDERS, 1);
const PAYMENTS: &str = "payments";
const PAY: Sp = Sp("sg", PAYMENTS, 0);

/// The findings of `kind` in the plain scan.
fn kinds(r: &Run, kind: Kind) -> Vec<&klogscan::finding::Finding> {
    (r.scan.findings.iter())
        .filter(|f| f.kind == kind)
        .collect()
}

// --- testWriteFailsOnUninitializedPartition, testReadFailsOnUninitializedPartition -------

/// `ShareCoordinatorShardTest.testWriteFailsOnUninitializedPartition`,
/// `ShareCoordinatorShardTest.testReadFailsOnUninitializedPartition`: a write or a
/// leader-epoch read of a share partition the coordinator holds no state for is refused
/// (INVALID_REQUEST), so the coordinator's first record of a share partition is always a
/// snapshot (`initializeState`). A log whose first record of a share partition is an update,
/// with nothing pruned (log start 0), was not written that way; the load still takes the
/// update as the whole state (`handleShareUpdate` into none: `ShareGroupOffset.fromRecord`,
/// state epoch -1). klogscan: `share_state_lost` on the update, the start offset the update's.
#[test]
fn an_update_with_no_snapshot_before_it_is_the_whole_state() {
    let recs = vec![SP.update(0, 3, 100, &[(100, 109, ACKNOWLEDGED, 1)])];
    let r = run(log_dir(
        vec![orders(0, 0, 200), state_log(0, recs)],
        Some(0),
    ));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert_eq!(f.offset, Some(0), "{f:#?}");
    assert_eq!(f.evidence["latest_update_offset"], 0, "{}", f.evidence);
    assert_eq!(f.evidence["start_offset"], 100, "{}", f.evidence);
    // Nothing was pruned: the finding says the updates were never preceded by a snapshot,
    // not that one was removed.
    assert!(
        f.message.contains("complete from offset 0"),
        "{}",
        f.message
    );
    assert!(
        f.broker_behaviour
            .contains("not lost by the log's retention"),
        "{f:#?}"
    );
    assert!(
        !f.broker_behaviour.contains("removed by other means"),
        "{f:#?}"
    );
}

/// Near miss of the wording: the initializing snapshot at offset 0 pruned away (log start
/// 1): the same finding says the snapshot was removed by other means than the coordinator's
/// pruning.
#[test]
fn near_miss_an_update_whose_snapshot_was_pruned_says_it_was_removed() {
    let recs = vec![
        SP.snapshot((0, 0, -1), -1, &[]),
        SP.update(0, 3, 100, &[(100, 109, ACKNOWLEDGED, 1)]),
    ];
    let r = run(log_dir(
        vec![orders(0, 0, 200), state_log(0, recs)],
        Some(1),
    ));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert!(
        f.broker_behaviour.contains("removed by other means"),
        "{f:#?}"
    );
    assert!(
        f.message.contains("at or above the log start"),
        "{}",
        f.message
    );
}

/// Near miss: the share partition initialized first (`initializeState`'s snapshot, start -1,
/// no batches), then the same write: the update merges into the snapshot. Quiet.
#[test]
fn near_miss_the_same_update_after_the_initializing_snapshot_is_quiet() {
    let recs = vec![
        SP.snapshot((0, 0, -1), -1, &[]),
        SP.update(0, 3, 100, &[(100, 109, ACKNOWLEDGED, 1)]),
    ];
    run(log_dir(
        vec![orders(0, 0, 200), state_log(0, recs)],
        Some(0),
    ))
    .assert_quiet();
}

// --- testSubsequentWriteStateSnapshotEpochUpdatesSuccessfully, testReadStateSuccess --------

/// `writeAndReplayRecord` then two writes, as the test does: the initializing snapshot, the
/// leader-epoch update of the first read (start -1, no batch), and two writes at state epoch
/// 0, each an update (the count stays below `snapshot.update.records.per.snapshot`) carrying
/// the snapshot's epoch.
fn subsequent_writes() -> Vec<Raw> {
    vec![
        SP.snapshot((0, 0, -1), -1, &[]),
        SP.update(0, 0, -1, &[]),
        SP.update(0, 0, 0, &[(0, 10, AVAILABLE, 1)]),
        SP.update(0, 0, 0, &[(11, 20, AVAILABLE, 1)]),
    ]
}

/// `ShareCoordinatorShardTest.testSubsequentWriteStateSnapshotEpochUpdatesSuccessfully` (the
/// two updates combine into one state, start 0, batches 0..=20), and the served state read
/// back by `ShareCoordinatorShardTest.testReadStateSuccess` and
/// `ShareCoordinatorShardTest.testReadStateSummarySuccess` (start 0, state epoch 0, the
/// batches): `SharePartition.maybeInitialize` loads it against `orders-0` (0..40). Quiet.
#[test]
fn updates_after_a_snapshot_combine_and_load() {
    run(log_dir(
        vec![orders(0, 0, 40), state_log(0, subsequent_writes())],
        None,
    ))
    .assert_quiet();
}

/// Near miss: the log start moved past the snapshot (not the coordinator's pruning, which
/// keeps every live share partition's latest snapshot): the load starts from the leader-epoch
/// update alone and merges the two writes into it — start offset 0 from the updates, the
/// snapshot's state epoch gone. `share_state_lost` on the last update.
#[test]
fn near_miss_the_same_updates_without_their_snapshot_are_a_loss() {
    let r = run(log_dir(
        vec![orders(0, 0, 40), state_log(0, subsequent_writes())],
        Some(1),
    ));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert_eq!(f.offset, Some(3), "{f:#?}");
    assert_eq!(f.evidence["start_offset"], 0, "{}", f.evidence);
    assert_eq!(f.evidence["log_start_offset"], 1, "{}", f.evidence);
}

// --- testInitializeStateInvalidRequestData ----------------------------------------------

/// A share partition at state epoch 5 (`handleShareSnapshot` keeps 5 in `stateEpochMap`),
/// then an initializing snapshot at `epoch`, start 10, no batch.
fn reinitialized(epoch: i32) -> Vec<Raw> {
    vec![
        SP.snapshot((0, 5, -1), -1, &[]),
        SP.snapshot((1, epoch, -1), 10, &[]),
    ]
}

/// `ShareCoordinatorShardTest.testInitializeStateInvalidRequestData`, its second half: after a
/// snapshot at state epoch 5, an initialize at state epoch 0 is refused (FENCED_STATE_EPOCH),
/// so its snapshot is never written. On disk it would be served (the latest snapshot is the
/// state) while the kept epoch stays 5, and every write at the served epoch is fenced.
/// klogscan: `share_state_epoch_fenced` on the second snapshot.
#[test]
fn an_initialize_below_the_kept_state_epoch_is_fenced() {
    let r = run(log_dir(
        vec![orders(0, 0, 40), state_log(0, reinitialized(0))],
        None,
    ));
    let f = r.one(Kind::ShareStateEpochFenced, Severity::Error);
    assert_eq!(f.offset, Some(1), "{f:#?}");
    assert_eq!(f.evidence["state_epoch"], 0, "{}", f.evidence);
    assert_eq!(f.evidence["highest_state_epoch"], 5, "{}", f.evidence);
}

/// Near miss: the initialize at state epoch 6 (an offsets reset re-initializes at a higher
/// state epoch), which `initializeState` accepts: served and kept agree. Quiet.
#[test]
fn near_miss_an_initialize_above_the_kept_state_epoch_is_quiet() {
    run(log_dir(
        vec![orders(0, 0, 40), state_log(0, reinitialized(6))],
        None,
    ))
    .assert_quiet();
}

// --- testSnapshotColdPartitions* ----------------------------------------------------------

/// Two share partitions (orders-0 and orders-1) snapshotted at 0 and 1; the cold-partition
/// task snapshots the first again at 2 (`snapshotColdPartitions`: the same state, snapshot
/// epoch + 1, a later write timestamp); then an update of each (the first one's is not
/// considered cold again: an update carries no write timestamp).
fn cold() -> Vec<Raw> {
    let b = [(0, 10, AVAILABLE, 1)];
    vec![
        SP.snapshot((0, 0, 0), 0, &b),
        SP1.snapshot((0, 0, 0), 0, &b),
        SP.snapshot((1, 0, 0), 0, &b),
        SP.update(1, 0, 0, &[(0, 10, ACKNOWLEDGED, 1)]),
        SP1.update(0, 0, 0, &[(0, 10, ACKNOWLEDGED, 1)]),
    ]
}

/// `ShareCoordinatorShardTest.testSnapshotColdPartitionsPartialEligiblePartitions`,
/// `ShareCoordinatorShardTest.testSnapshotColdPartitionsSnapshotUpdateNotConsidered`,
/// `ShareCoordinatorShardTest.testSnapshotColdPartitionsDoesNotPerpetuallySnapshot`,
/// `ShareCoordinatorShardTest.testSnapshotColdPartitionsNoEligiblePartitions`: a cold snapshot
/// is a snapshot like any other for the load and for the pruning offset (the least of the
/// live share partitions' latest snapshots: orders-1's at 1). A log start at 1, past the
/// first share partition's original snapshot but not its cold one, loses nothing. Quiet.
#[test]
fn a_cold_snapshot_keeps_the_state_past_the_pruned_original() {
    run(log_dir(
        vec![orders(0, 0, 40), orders(1, 0, 40), state_log(0, cold())],
        Some(1),
    ))
    .assert_quiet();
}

/// Near miss: the log start at 2 passes orders-1's only snapshot (it was not cold): its state
/// is its update's alone. `share_state_lost` for orders-1, none for orders-0.
#[test]
fn near_miss_a_log_start_past_the_uncold_snapshot_loses_it() {
    let r = run(log_dir(
        vec![orders(0, 0, 40), orders(1, 0, 40), state_log(0, cold())],
        Some(2),
    ));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert_eq!(f.evidence["partition"], 1, "{}", f.evidence);
    assert_eq!(f.offset, Some(4), "{f:#?}");
}

// --- testOnTopicsDeletedTopicIds ----------------------------------------------------------

/// orders-0's share partition and payments-0's snapshotted at 0 and 1, an update of orders-0
/// at 2, then `maybeCleanupShareState`'s tombstone at 3 for `deleted`'s share partition.
fn topic_deleted(deleted: Sp) -> Vec<Raw> {
    let b = [(0, 10, AVAILABLE, 1)];
    vec![
        SP.snapshot((0, 0, 0), 0, &b),
        PAY.snapshot((0, 0, 0), 0, &b),
        SP.update(0, 0, 5, &[(0, 4, ACKNOWLEDGED, 1)]),
        deleted.deleted(),
    ]
}

/// `ShareCoordinatorShardTest.testOnTopicsDeletedTopicIds`: topic `orders` deleted, the
/// coordinator writes a tombstone for its share partition only; payments-0's stays. Its
/// snapshot at 0 may then be pruned (the deleted share partition leaves the pruning count;
/// payments-0's latest snapshot is at 1): log start 1. The load replays orders-0's update
/// alone, then its tombstone: no state left; payments-0's snapshot is served. Quiet.
#[test]
fn a_deleted_topics_share_partition_pruned_after_its_tombstone_is_quiet() {
    run(log_dir(
        vec![orders(0, 0, 40), state_log(0, topic_deleted(SP))],
        Some(1),
    ))
    .assert_quiet();
}

/// Near miss: the tombstone names the other topic's share partition (payments deleted, orders
/// not): orders-0 stays live with its update alone past the log start. `share_state_lost`
/// naming orders' topic id; nothing of payments.
#[test]
fn near_miss_the_tombstone_of_the_other_topic_leaves_the_update_alone() {
    let r = run(log_dir(
        vec![orders(0, 0, 40), state_log(0, topic_deleted(PAY))],
        Some(1),
    ));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    let orders_id = uuid_text(&topic_id_for(ORDERS));
    assert_eq!(f.evidence["topic_id"], orders_id, "{}", f.evidence);
    assert_eq!(f.evidence["start_offset"], 5, "{}", f.evidence);
    assert!(
        kinds(&r, Kind::ShareStateEpochFenced).is_empty(),
        "{:#?}",
        r.scan.findings
    );
}

// --- testReadStateFencedLeaderEpochError ------------------------------------------------

/// `ShareCoordinatorShardTest.testReadStateFencedLeaderEpochError`: the replay keeps the
/// highest leader epoch a record carried (5 here) and refuses a read at a lower one. Whether
/// a share-partition leader is fenced depends on the data partition's current leader epoch,
/// which lives in the metadata image, not in the data partition's files: an election appends
/// nothing there, so a data log whose batches stop at epoch 0 does not show the leader's
/// epoch is below 5. Two readings: klogscan stays silent.
#[test]
fn a_state_leader_epoch_above_the_data_logs_epochs_is_not_judged() {
    let recs = vec![
        SP.snapshot((0, 0, -1), -1, &[]),
        SP.update(0, 5, 0, &[(0, 10, AVAILABLE, 1)]),
    ];
    let r = run(log_dir(vec![orders(0, 0, 40), state_log(0, recs)], None));
    r.assert_quiet();
    assert!(
        r.at_least(Severity::Info, STATE)
            .iter()
            .all(|f| !f.message.contains("leader epoch")),
        "{:#?}",
        r.scan.findings
    );
}
