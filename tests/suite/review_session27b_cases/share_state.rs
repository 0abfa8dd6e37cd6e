//! The share-state replay (`partition::share_state`, `98f3d58`) on flows the share
//! coordinator and the share-partition leader write, and on records they never write but
//! a load still meets (2025-10 tree: `ShareCoordinatorShard.replay`/`merge`/`initializeState`,
//! `ShareGroupOffset.fromRecord`/`fromRequest`, `SharePartition.maybeInitialize`/
//! `writeShareGroupState`, `RecordState.forId`, `CoordinatorLoaderImpl.processMemoryRecords`).

use crate::kafka_share_coordinator_cases::{
    ACKNOWLEDGED, ARCHIVED, AVAILABLE, ORDERS, STATE, Sp, log_dir, orders, run, state_log,
};
use klogscan::finding::{Kind, Severity};

const SP: Sp = Sp("sg", ORDERS, 0);

/// The whole flow of a share partition from its first heartbeat:
/// `GroupMetadataManager.buildInitializeShareGroupStateRequest` initializes it at the group
/// epoch with start -1 (`initializeState` → a snapshot from `ShareGroupOffset.fromRequest`:
/// leader epoch -1, no batches); the share-partition leader's first read at leader epoch 3
/// (`readStateAndMaybeUpdateLeaderEpoch` writes an update carrying the served start, -1,
/// and no batches); `maybeInitialize` resolves -1 to the log end (600, `latest`); then its
/// writes (`writeShareGroupState`, its own start in each) as records are acknowledged.
/// Every state served starts at or below its batches: quiet, the start -1 warning included.
#[test]
fn a_share_partition_from_initialization_through_its_leaders_writes_is_quiet() {
    let recs = vec![
        SP.snapshot((0, 2, -1), -1, &[]),
        SP.update(0, 3, -1, &[]),
        SP.update(
            0,
            3,
            600,
            &[(600, 609, ACKNOWLEDGED, 1), (610, 619, AVAILABLE, 1)],
        ),
        SP.update(0, 3, 610, &[(610, 619, ARCHIVED, 5)]),
        SP.update(0, 3, 620, &[]),
    ];
    let r = run(log_dir(vec![orders(0, 400, 700), state_log(0, recs)], None));
    r.assert_quiet();
}

/// `kafka-share-groups.sh --reset-offsets` on the empty group
/// (`GroupMetadataManager.completeAlterShareGroupOffsets` → `initializeState` at the group's
/// current epoch, which only grows: `maybeGetInitializeStateError` would fence a lower one):
/// a snapshot at state epoch 4 replacing the state at state epoch 2, start 450, no batches.
/// Quiet — neither a fence nor a batch below the start.
#[test]
fn a_reset_of_the_offsets_initializes_at_the_current_group_epoch_quietly() {
    let recs = vec![
        SP.snapshot((0, 2, -1), -1, &[]),
        SP.update(0, 3, 600, &[(600, 609, ACKNOWLEDGED, 1)]),
        SP.snapshot((1, 4, -1), 450, &[]),
        SP.update(1, 5, 450, &[(450, 469, AVAILABLE, 1)]),
    ];
    let r = run(log_dir(vec![orders(0, 400, 700), state_log(0, recs)], None));
    r.assert_quiet();
}

/// `RecordState.forId` knows 0, 1, 2 and 4 and throws `IllegalArgumentException` for any
/// other id; `SharePartition.maybeInitialize` builds an `InFlightBatch` from each served
/// batch with it, inside the try whose catch fails the share partition (`FAILED`): a served
/// batch with delivery state 3 (ARCHIVING, never persisted: `PersisterStateBatchCombiner`
/// lists it as not implemented) or 7 makes the share partition unloadable exactly as a
/// batch below the start does: `share_state_unknown_delivery_state` (was: nothing).
#[test]
fn a_served_batch_with_an_unknown_delivery_state_fails_initialization() {
    for state in [3i8, 7] {
        let recs = vec![SP.snapshot((0, 2, 3), 500, &[(500, 509, state, 1)])];
        let r = run(log_dir(vec![orders(0, 400, 700), state_log(0, recs)], None));
        let loud = r.at_least(Severity::Warning, STATE);
        assert!(!loud.is_empty(), "state {state}: {:#?}", r.scan.findings);
        let f = r.one(Kind::ShareStateUnknownDeliveryState, Severity::Error);
        assert_eq!(f.evidence["delivery_state"], state, "{}", f.evidence);
    }
}

/// The agreeing twin: the same batch AVAILABLE (0) loads. Quiet.
#[test]
fn a_served_batch_with_a_known_delivery_state_loads() {
    let recs = vec![SP.snapshot((0, 2, 3), 500, &[(500, 509, AVAILABLE, 1)])];
    run(log_dir(vec![orders(0, 400, 700), state_log(0, recs)], None)).assert_quiet();
}

/// A ShareUpdate key with no value. `ShareCoordinatorRecordSerde` makes it a tombstone and
/// `ShareCoordinatorShard.replay` → `handleShareUpdate` reads `value.leaderEpoch()` of the
/// null value: the `RuntimeException` is not the `UnsupportedVersionException` replay
/// swallows, so `CoordinatorLoaderImpl.processMemoryRecords` rethrows it and the load of the
/// whole `__share_group_state` partition fails (every share group it holds is unserved).
/// The coordinator never writes one (only `newShareStateTombstoneRecord`, a snapshot key).
/// Expected: an error on the state partition at the record; klogscan says
/// `share_state_record_undecodable` there (the replay itself skips it).
#[test]
fn a_share_update_tombstone_fails_the_coordinators_load() {
    let (k, _) = SP.update(0, 3, 500, &[]);
    let recs = vec![SP.snapshot((0, 2, 3), 500, &[]), (k, None)];
    let r = run(log_dir(vec![orders(0, 400, 700), state_log(0, recs)], None));
    let f = r.one(Kind::ShareStateRecordUndecodable, Severity::Error);
    assert_eq!((f.topic.as_str(), f.offset), (STATE, Some(1)), "{f:#?}");
}

/// The agreeing twin: the same key's tombstone as the coordinator writes it (a ShareSnapshot
/// key, `deleteState`): the share partition is deleted, nothing served. Quiet.
#[test]
fn a_share_snapshot_tombstone_deletes_quietly() {
    let recs = vec![SP.snapshot((0, 2, 3), 500, &[]), SP.deleted()];
    let r = run(log_dir(vec![orders(0, 400, 700), state_log(0, recs)], None));
    r.assert_quiet();
    assert!(
        !(r.scan.findings.iter()).any(|f| f.kind == Kind::ShareStateLost),
        "{:#?}",
        r.scan.findings
    );
}
