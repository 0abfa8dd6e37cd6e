//! What a replay of `__share_group_state` keeps besides the state (`ShareCoordinatorShard`):
//! the highest leader and state epochs seen per share partition (`maybeUpdateLeaderEpochMap`,
//! `maybeUpdateStateEpochMap`, cleared by a tombstone), against which every later write is
//! validated (`maybeGetWriteStateError`: FENCED_LEADER_EPOCH, FENCED_STATE_EPOCH); a deleted
//! share partition (`deleteState`) and the pruning offset (`ShareCoordinatorOffsetsManager.
//! updateState`: the least of the live share partitions' latest snapshot offsets, a deleted
//! one leaving the count after its tombstone).

use super::{ACKNOWLEDGED, AVAILABLE, STATE, Sp, log_dir, run, state_log};
use klogscan::finding::{Kind, Severity};

const K1: Sp = Sp("sg", super::ORDERS, 0);
const K2: Sp = Sp("sg", super::ORDERS, 1);
const K3: Sp = Sp("sg2", super::ORDERS, 0);

/// `ShareCoordinatorOffsetsManagerTest` "redundant state multiple keys with delete", as a log
/// from offset 10: snapshots of K1 (10), K2 (11), K3 (12), K2 (13), K1 (14); K3's update (15)
/// and its tombstone (16, `ShareCoordinatorShardTest.testDeleteStateSuccess`); updates of K1
/// and K2. After the tombstone the manager's least live snapshot is K2's at 13 and K3 leaves
/// the count, so the pruning task may move the log start to 13, past K3's only snapshot. The
/// load replays K3's update alone, then its tombstone: no state, nothing lost. Quiet.
#[test]
fn a_deleted_share_partitions_snapshot_pruned_before_its_tombstone_is_quiet() {
    let r = run(log_dir(vec![state_log(10, pruned_keys(true))], Some(13)));
    r.assert_quiet();
    let p = (r.scan.partitions.iter())
        .find(|p| p.topic == STATE)
        .unwrap();
    assert_eq!(p.log_end_offset, Some(19));
}

/// Twin: K3 is not deleted (a K1 update in the tombstone's place), so it is live and the
/// manager's least live snapshot is K3's at 12: a log start of 13 was not the coordinator's
/// pruning, and the load takes K3's update at 15 as its whole state (`share_state_lost`).
#[test]
fn twin_a_live_share_partitions_snapshot_pruned_is_lost() {
    let r = run(log_dir(vec![state_log(10, pruned_keys(false))], Some(13)));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert_eq!(f.offset, Some(15), "{f:#?}");
    assert_eq!(f.evidence["group"], "sg2", "{}", f.evidence);
    assert_eq!(f.evidence["latest_update_offset"], 15, "{}", f.evidence);
    assert_eq!(f.evidence["log_start_offset"], 13, "{}", f.evidence);
}

fn pruned_keys(k3_deleted: bool) -> Vec<super::Raw> {
    let snap = |k: Sp, e: i32, s: i64| k.snapshot((e, 0, 3), s, &[(s, s + 4, AVAILABLE, 1)]);
    vec![
        snap(K1, 0, 100),
        snap(K2, 0, 200),
        snap(K3, 0, 100),
        snap(K2, 1, 205),
        snap(K1, 1, 105),
        K3.update(0, 3, 103, &[(103, 104, ACKNOWLEDGED, 1)]),
        if k3_deleted {
            K3.deleted()
        } else {
            K1.update(1, 3, -1, &[(105, 106, ACKNOWLEDGED, 1)])
        },
        K1.update(1, 3, 107, &[]),
        K2.update(1, 3, 210, &[]),
    ]
}

/// `ShareCoordinatorShardTest.testReplayWithShareSnapshot` (the replay keeps the higher leader
/// epoch) and `ShareCoordinatorShardTest.testWriteStateFencedLeaderEpochError` (a write below
/// it is fenced, so never written): an update at an older leader epoch than the snapshot
/// before it still loads and its state is served; a share-partition leader reads and writes
/// at its own current epoch, never below any the log holds. Quiet.
#[test]
fn an_update_at_an_older_leader_epoch_loads() {
    let recs = vec![
        K1.snapshot((0, 0, 5), 100, &[(100, 109, AVAILABLE, 1)]),
        K1.update(0, 4, 105, &[(105, 109, ACKNOWLEDGED, 1)]),
    ];
    run(log_dir(vec![state_log(0, recs)], None)).assert_quiet();
}

/// `ShareCoordinatorShardTest.testWriteStateFencedStateEpochError`: the replay keeps the
/// highest state epoch a snapshot carried (`maybeUpdateStateEpochMap`), and a write with a
/// lower one is refused with FENCED_STATE_EPOCH. Here a snapshot of state epoch 1 is followed
/// by one of state epoch 0 with no tombstone between (the coordinator never writes it:
/// `initializeState` is fenced the same way and `writeState` copies the current state
/// epoch). After the load the state served carries state epoch 0, which the share-partition
/// leader takes (`SharePartition.maybeInitialize`: `stateEpoch = partitionData.stateEpoch()`)
/// and writes with (`writeShareGroupState`), and every write is fenced: no acknowledgement is
/// persisted and the start offset never moves until the offsets are reset.
#[test]
fn a_snapshot_lowering_the_state_epoch_fences_every_write() {
    let r = run(log_dir(vec![state_log(0, state_epochs(false))], None));
    let loud = r.at_least(Severity::Warning, STATE);
    assert!(
        loud.iter().any(|f| f.offset == Some(1)),
        "{:#?}",
        r.scan.findings
    );
    let f = r.one(Kind::ShareStateEpochFenced, Severity::Error);
    assert_eq!(
        (
            &f.evidence["state_epoch"],
            &f.evidence["highest_state_epoch"]
        ),
        (&serde_json::json!(0), &serde_json::json!(1)),
        "{}",
        f.evidence
    );
}

/// The agreeing twin: the share partition deleted between the two (`deleteState`'s tombstone
/// clears the state-epoch map, `handleShareSnapshot`), then initialized again at state epoch 0
/// (`testDeleteStateSuccess`, `testInitializeStateSuccess`). Quiet.
#[test]
fn a_share_partition_deleted_then_initialized_at_a_lower_state_epoch_is_quiet() {
    run(log_dir(vec![state_log(0, state_epochs(true))], None)).assert_quiet();
}

fn state_epochs(deleted_between: bool) -> Vec<super::Raw> {
    let mut v = vec![K1.snapshot((2, 1, 3), 100, &[(100, 109, AVAILABLE, 1)])];
    if deleted_between {
        v.push(K1.deleted());
    }
    v.push(K1.snapshot((0, 0, -1), 100, &[]));
    v
}

/// `ShareGroupOffset.fromRecord(ShareUpdateValue)` keeps the update's start offset (the
/// share-partition leader writes its start offset in every update:
/// `SharePartition.writeShareGroupState`), and `SharePartition.startOffsetDuringInitialization`
/// uses a persisted start offset as is: after the log start passed the snapshot, the share
/// partition restarts at the update's start offset 120 with the update's batches — the
/// snapshot's batches are lost, not the start offset, and `share.auto.offset.reset` plays no
/// part. `share_state_lost` says the start offset is lost (-1) and the share partition restarts
/// from `share.auto.offset.reset`.
#[test]
fn an_update_alone_keeps_its_start_offset() {
    let r = run(lost(120));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert!(!f.message.contains("start offset -1"), "{}", f.message);
    let client = f.client_error.as_deref().unwrap_or_default();
    assert!(!client.contains("share.auto.offset.reset"), "{client}");
}

/// The agreeing twin: the update left carries start offset -1 (a read at a new leader epoch
/// of a share partition initialized without one: `readStateAndMaybeUpdateLeaderEpoch` writes
/// the start offset it serves), so the start offset is unknown after the load and the share
/// partition restarts from `share.auto.offset.reset`, as the finding says.
#[test]
fn an_update_alone_without_a_start_offset_restarts_from_the_reset_policy() {
    let r = run(lost(-1));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert_eq!(f.evidence["latest_update_offset"], 1, "{}", f.evidence);
    let client = f.client_error.as_deref().unwrap_or_default();
    assert!(client.contains("share.auto.offset.reset"), "{client}");
}

/// A snapshot at 0 pruned away (log start 1) and an update at 1 with start `start`, no batch.
fn lost(start: i64) -> klogscan::testkit::LogDirBuilder {
    let recs = vec![
        K1.snapshot((0, 0, 3), start, &[]),
        K1.update(0, 4, start, &[]),
    ];
    log_dir(vec![state_log(0, recs)], Some(1))
}
