//! A share partition's state after ShareUpdate records: the load merges each update into the
//! state so far (`ShareCoordinatorShard.handleShareUpdate` → `merge`): the start offset is the
//! update's unless it is -1, and the batches are `PersisterStateBatchCombiner(state so far,
//! update's batches, that start offset)`, which first drops or cuts every batch below the start
//! offset (when it is not -1) and then merges overlaps. An update into a share partition
//! without state is taken whole (`ShareGroupOffset.fromRecord(ShareUpdateValue)`: its start
//! offset and batches as written, state epoch -1, nothing pruned). `SharePartition.
//! maybeInitialize` then resolves a start offset of -1 through `share.auto.offset.reset`
//! (default `latest`: the data log's end) and fails the share partition on any batch whose
//! first offset is below the start offset.

use super::{
    ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE, STATE, Sp, log_dir, orders, run, state_log,
};
use klogscan::finding::{Kind, Severity};
use serde_json::json;

const SP: Sp = Sp("sg", super::ORDERS, 0);

/// `ShareCoordinatorShard.merge` with `PersisterStateBatchCombinerTest`'s "Current batches
/// with start offset midway are pruned" (so far 100..130, no new batch, start 120: 120..130),
/// the update being what `ShareCoordinatorShardTest.testReadStateLeaderEpochUpdateSuccess`
/// writes (a read from a new share-partition leader: the start offset served, no batches, the
/// new leader epoch). The snapshot before it holds a batch straddling its start offset (which
/// `maybeInitialize` would refuse), but the load serves the combined state: start 120, one
/// batch 120..130, and the share partition initializes. Quiet: the latest snapshot's batch is
/// not the state served.
#[test]
fn an_update_after_a_straddling_snapshot_prunes_it() {
    let recs = vec![
        SP.snapshot((0, 0, 3), 120, &[(100, 130, AVAILABLE, 1)]),
        SP.update(0, 4, 120, &[]),
    ];
    let r = run(log_dir(vec![orders(0, 0, 200), state_log(0, recs)], None));
    r.assert_quiet();
}

/// Twin: the snapshot alone. `SharePartitionTest.testMaybeInitializeWithInvalidStartOffsetStateBatches`
/// (a first batch starting below the start offset): the share partition FAILED, never consumed;
/// the batch straddles the start (100..130 over 120), which is enough.
#[test]
fn twin_a_straddling_batch_in_the_latest_snapshot_fails_initialization() {
    let recs = vec![SP.snapshot((0, 0, 3), 120, &[(100, 130, AVAILABLE, 1)])];
    let r = run(log_dir(vec![orders(0, 0, 200), state_log(0, recs)], None));
    let f = r.one(Kind::ShareStateBatchBelowStart, Severity::Error);
    assert_eq!((f.topic.as_str(), f.offset), (STATE, Some(0)), "{f:#?}");
    assert_eq!(f.evidence["batch"], json!([100, 130]), "{}", f.evidence);
    assert_eq!(f.evidence["start_offset"], 120, "{}", f.evidence);
    assert_eq!(f.evidence["group"], "sg", "{}", f.evidence);
}

/// `PersisterStateBatchCombinerTest` "New batches with start offset midway are pruned" (no
/// batch so far, new 100..130, start 120: 120..130), through the load: the share partition
/// initialized with start -1 (`generateInitializeStateRecord`), then an update moving the
/// start to 120 whose batch still begins at 100 (the coordinator prunes an update's batches
/// when it writes them; the load prunes them again when it merges). Served: start 120,
/// 120..130. Quiet.
#[test]
fn an_updates_own_batch_below_its_start_is_pruned_by_the_merge() {
    let recs = vec![
        SP.snapshot((0, 0, -1), -1, &[]),
        SP.update(0, 3, 120, &[(100, 130, ACKNOWLEDGED, 1)]),
    ];
    let r = run(log_dir(vec![orders(0, 0, 200), state_log(0, recs)], None));
    r.assert_quiet();
}

/// The acknowledgements of `ShareCoordinatorShardTest.testNonSequentialBatchUpdates` with one
/// update per snapshot allowed: a snapshot with start 100 and three acquired batches 100..109,
/// 110..119, 120..129; an update acknowledging 100..109 (start -1: unchanged); an update moving
/// the start to 110 and acknowledging 120..129; then the snapshot the coordinator writes (start
/// 110, 110..119 still acquired, 120..129 acknowledged: the middle batch is not lost, the first
/// is pruned). Every state the load can stop at initializes. Quiet.
#[test]
fn non_sequential_acknowledgements_then_a_snapshot_are_quiet() {
    let r = run(log_dir(
        vec![orders(0, 0, 200), state_log(0, non_sequential(false))],
        None,
    ));
    r.assert_quiet();
}

/// Twin: the final snapshot keeps 100..109 below its start 110 (a combiner without the prune):
/// `maybeInitialize` fails on it (`SharePartitionTest.testMaybeInitializeWithInvalidStartOffsetStateBatches`).
#[test]
fn twin_a_snapshot_keeping_an_acknowledged_batch_below_its_start_is_reported() {
    let r = run(log_dir(
        vec![orders(0, 0, 200), state_log(0, non_sequential(true))],
        None,
    ));
    let f = r.one(Kind::ShareStateBatchBelowStart, Severity::Error);
    assert_eq!(f.offset, Some(3), "{f:#?}");
    assert_eq!(f.evidence["batch"], json!([100, 109]), "{}", f.evidence);
    assert_eq!(f.evidence["start_offset"], 110, "{}", f.evidence);
    assert_eq!(f.evidence["snapshot_offset"], 3, "{}", f.evidence);
}

fn non_sequential(keep_pruned: bool) -> Vec<super::Raw> {
    let mut last = vec![(110, 119, ACQUIRED, 2), (120, 129, ACKNOWLEDGED, 1)];
    if keep_pruned {
        last.insert(0, (100, 109, ACKNOWLEDGED, 1));
    }
    vec![
        SP.snapshot(
            (3, 0, 0),
            100,
            &[
                (100, 109, ACQUIRED, 1),
                (110, 119, ACQUIRED, 2),
                (120, 129, ACQUIRED, 0),
            ],
        ),
        SP.update(3, 0, -1, &[(100, 109, ACKNOWLEDGED, 1)]),
        SP.update(3, 0, 110, &[(120, 129, ACKNOWLEDGED, 1)]),
        SP.snapshot((4, 0, 0), 110, &last),
    ]
}

/// `ShareGroupOffset.fromRecord(ShareUpdateValue)` takes the first update of a share partition
/// without state as the whole state, batches unpruned: here the log start (42) passed the
/// snapshot and the update left holds 100..130 with start 120. `SharePartition.maybeInitialize`
/// fails on the batch below the start (`testMaybeInitializeWithInvalidStartOffsetStateBatches`):
/// the share partition cannot be consumed at all, an error as `share_state_batch_below_start`
/// says of a snapshot — beyond the state loss `share_state_lost` reports (a warning).
#[test]
fn an_update_alone_holding_a_batch_below_its_start_fails_initialization() {
    let r = run(update_alone(100));
    let errors = r.at_least(Severity::Error, STATE);
    assert!(
        errors
            .iter()
            .any(|f| f.evidence["batch"] == json!([100, 130])),
        "{:#?}",
        r.scan.findings
    );
    // It follows from the lost snapshot: linked to `share_state_lost`, which keeps the
    // update's start offset.
    let lost = r.one(Kind::ShareStateLost, Severity::Warning);
    assert_eq!(lost.evidence["start_offset"], 120, "{}", lost.evidence);
    let f = r.one(Kind::ShareStateBatchBelowStart, Severity::Error);
    assert_eq!(f.caused_by, vec![lost.id.clone()], "{f:#?}");
}

/// The agreeing twin: the update left alone holds 120..130 from its start 120: it initializes
/// with the update's state (a loss of the snapshot's batches, `share_state_lost`, a warning),
/// no failure.
#[test]
fn an_update_alone_with_batches_from_its_start_is_a_loss_not_a_failure() {
    let r = run(update_alone(120));
    let f = r.one(Kind::ShareStateLost, Severity::Warning);
    assert_eq!(f.evidence["latest_update_offset"], 42, "{}", f.evidence);
    assert!(r.at_least(Severity::Error, STATE).is_empty());
}

/// `__share_group_state-0` whose log start 42 passed the share partition's snapshot at 41; the
/// update at 42 holds `first..130` with start 120.
fn update_alone(first: i64) -> klogscan::testkit::LogDirBuilder {
    let recs = vec![
        SP.snapshot((0, 0, 3), 100, &[(100, 130, AVAILABLE, 1)]),
        SP.update(0, 3, 120, &[(first, 130, ARCHIVED, 5)]),
    ];
    log_dir(vec![orders(0, 0, 200), state_log(41, recs)], Some(42))
}

/// A snapshot with start offset -1 and batches (the coordinator never writes one: every
/// snapshot after initialization carries the share-partition leader's start offset).
/// `SharePartition.startOffsetDuringInitialization` resolves -1 through
/// `share.auto.offset.reset`, `latest` when the group sets none
/// (`SharePartitionTest.testMaybeInitializeDefaultStartEpochGroupConfigNotPresent`): the data
/// log's end, 200, above the batch 150..159, so `maybeInitialize` fails
/// (`testMaybeInitializeWithInvalidStartOffsetStateBatches`): `share_state_batch_below_start`
/// at warning, the reset policy it assumes in its evidence (was: nothing, a start of -1
/// skipped).
#[test]
fn a_snapshot_without_a_start_offset_holding_batches_fails_initialization() {
    let recs = vec![SP.snapshot((0, 0, 3), -1, &[(150, 159, AVAILABLE, 1)])];
    let r = run(log_dir(vec![orders(0, 0, 200), state_log(0, recs)], None));
    assert!(
        !r.at_least(Severity::Warning, STATE).is_empty(),
        "{:#?}",
        r.scan.findings
    );
    // The verdict rests on the default reset policy: a warning saying so.
    let f = r.one(Kind::ShareStateBatchBelowStart, Severity::Warning);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence["start_offset"], -1, "{}", f.evidence);
    assert!(f.evidence["assumes"].as_str().is_some(), "{}", f.evidence);
}

/// The agreeing twin: a share partition initialized with start -1 and no batches
/// (`ShareCoordinatorShardTest.testInitializeStateSuccess`; `maybeInitialize` resolves the
/// start, `testMaybeInitializeDefaultStartEpochGroupConfigReturnsEarliest`), then the leader's
/// first write (start 150, batches from it; the merge prunes with 150). Quiet.
#[test]
fn an_initialized_share_partition_then_written_is_quiet() {
    let recs = vec![
        SP.snapshot((0, 0, -1), -1, &[]),
        SP.update(0, 3, 150, &[(150, 159, ACKNOWLEDGED, 1)]),
    ];
    let r = run(log_dir(vec![orders(0, 0, 200), state_log(0, recs)], None));
    r.assert_quiet();
}
