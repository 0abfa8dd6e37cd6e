//! The share-partition start offset (SPSO) a load serves, against the data partition it names
//! (`orders-0`, log start 400, log end 600). `SharePartition.maybeInitialize` takes a persisted
//! start offset as is and, when every cached batch is terminal (acknowledged or archived),
//! moves it past the last one (`maybeUpdateCachedStateAndOffsets`). A fetch from an offset past
//! the log end gets OFFSET_OUT_OF_RANGE; `ShareFetchUtils.processFetchResponse` then calls
//! `SharePartition.updateCacheAndOffsets` with the log start, which does nothing when the log
//! start is not above the SPSO. So an SPSO past the log end stalls the share group on the
//! partition until the log grows past it, and the records written in between are never
//! delivered. A start equal to the log end is the ordinary "everything consumed".
//!
//! klogscan's open divergence (docs/testing.md, `kafka_quiet_share_cases::data::
//! twin_an_spso_past_the_log_end_is_reported`) is a snapshot's start; these cases state it
//! precisely for the state a load serves after updates.

use super::{
    ACKNOWLEDGED, ARCHIVED, AVAILABLE, Finding, ORDERS, STATE, Sp, log_dir, orders, run, state_log,
};
use klogscan::finding::Severity;

const SP: Sp = Sp("sg", ORDERS, 0);

fn cluster(recs: Vec<super::Raw>) -> super::Run {
    run(log_dir(vec![orders(0, 400, 600), state_log(0, recs)], None))
}

/// The findings at warning or above on orders-0 or on `__share_group_state` that name group
/// `sg` and carry `needle` in their evidence.
fn naming<'a>(r: &'a super::Run, needle: &str) -> Vec<&'a Finding> {
    let mut v = r.at_least(Severity::Warning, STATE);
    v.extend(
        r.at_least(Severity::Warning, ORDERS)
            .into_iter()
            .filter(|f| f.partition == 0),
    );
    v.retain(|f| f.message.contains("\"sg\"") || f.evidence["group"] == "sg");
    v.retain(|f| f.evidence.to_string().contains(needle));
    v
}

/// A snapshot (start 520, 520..529 released) and an update moving the start to 700: the
/// merge (`ShareCoordinatorShard.merge`) serves start 700 and prunes the batch, so
/// `maybeInitialize` starts the share partition at 700 with nothing cached (`endOffset =
/// startOffset`), 100 past orders-0's end: `SharePartitionTest.testMaybeInitialize` (the
/// persisted start taken as is), `testLsoMovementOnInitializationSharePartition` and
/// `updateCacheAndOffsets`'s refusal of a log start 400 not above 700. Expected: a finding
/// naming the share group, the share partition's start 700 and the log end 600.
#[test]
#[ignore = "divergence: the start offset a load serves (here an update's, 700) is not held against the data log end (600); SharePartition fetches past the end (OFFSET_OUT_OF_RANGE) and updateCacheAndOffsets refuses to move it back"]
fn an_update_moving_the_start_past_the_log_end_is_reported() {
    let r = cluster(vec![
        SP.snapshot((0, 0, 3), 520, &[(520, 529, AVAILABLE, 1)]),
        SP.update(0, 3, 700, &[]),
    ]);
    let f = naming(&r, "700");
    assert!(
        f.iter().any(|f| f.evidence.to_string().contains("600")),
        "{:#?}",
        r.scan.findings
    );
}

/// The agreeing twin: the update moves the start to 600, the log end (every record
/// consumed; the next fetch waits for new records). Quiet.
#[test]
fn an_update_moving_the_start_to_the_log_end_is_quiet() {
    let r = cluster(vec![
        SP.snapshot((0, 0, 3), 520, &[(520, 529, AVAILABLE, 1)]),
        SP.update(0, 3, 600, &[]),
    ]);
    r.assert_quiet();
}

/// A start past the log end reset by the administrator: `kafka-share-groups.sh
/// --reset-offsets` initializes the state again (`ShareCoordinatorShard.initializeState`, a
/// snapshot at state epoch 1, `testInitializeStateSuccess`) at 450; the load serves the
/// latest snapshot. Quiet (a check of the start offset must take the state served, not the
/// first snapshot's).
#[test]
fn a_start_past_the_log_end_reset_by_a_later_snapshot_is_quiet() {
    let r = cluster(vec![
        SP.snapshot((0, 0, 3), 700, &[]),
        SP.snapshot((1, 1, -1), 450, &[]),
    ]);
    r.assert_quiet();
}

/// `SharePartitionTest.testMaybeInitializeWhenReadStateRpcReturnsZeroAvailableRecords`: when
/// every batch served is terminal, `maybeInitialize` moves the start past the last one. Here
/// the state (start 580) holds 580..589 acknowledged and 590..619 archived, past orders-0's end
/// 600 (the log lost records the share group had consumed): the share partition starts at
/// 620, past the log end, with the stall above. Expected: a finding naming the share group and
/// the log end 600.
#[test]
#[ignore = "divergence: state batches past the data log end are not reported; SharePartition.maybeInitialize moves the start past the last terminal batch (620), beyond the log end (600), and stalls"]
fn terminal_batches_past_the_log_end_move_the_start_past_it() {
    let r = cluster(terminal_until(619));
    assert!(!naming(&r, "600").is_empty(), "{:#?}", r.scan.findings);
}

/// The agreeing twin: the terminal batches end at 599; the start moves to 600, the log end.
/// Quiet.
#[test]
fn terminal_batches_up_to_the_log_end_are_quiet() {
    cluster(terminal_until(599)).assert_quiet();
}

fn terminal_until(last: i64) -> Vec<super::Raw> {
    vec![SP.snapshot(
        (0, 0, 3),
        580,
        &[(580, 589, ACKNOWLEDGED, 1), (590, last, ARCHIVED, 5)],
    )]
}
