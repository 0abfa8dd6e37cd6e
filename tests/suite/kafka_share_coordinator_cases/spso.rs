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
//! klogscan: `share_start_beyond_log_end` on the data partition (`cluster::consumers::share`),
//! an error when the data copy's checkpointed high watermark reaches the start (the log lost
//! records the group had been delivered); info, both readings said, when it is below the start
//! too and nothing on the copy shows a cut (a follower behind the leader the group read from) —
//! as `committed_offset_beyond_log_end` reads a commit.

use super::{
    ACKNOWLEDGED, ARCHIVED, AVAILABLE, Finding, ORDERS, STATE, Sp, log_dir, orders, run, state_log,
};
use klogscan::finding::{Kind, Severity};

const SP: Sp = Sp("sg", ORDERS, 0);

fn cluster(recs: Vec<super::Raw>) -> super::Run {
    run(log_dir(vec![orders(0, 400, 600), state_log(0, recs)], None))
}

/// [`cluster`] with orders-0's checkpointed high watermark at `hw` (the copy once held the
/// records up to it as committed).
fn cluster_hw(recs: Vec<super::Raw>, hw: i64) -> super::Run {
    let ld = log_dir(vec![orders(0, 400, 600), state_log(0, recs)], None);
    run(ld.high_watermark(ORDERS, 0, hw))
}

/// The one `share_start_beyond_log_end` of `r`.
fn beyond(r: &super::Run) -> &Finding {
    let v: Vec<&Finding> = (r.scan.findings.iter())
        .filter(|f| f.kind == Kind::ShareStartBeyondLogEnd)
        .collect();
    assert_eq!(v.len(), 1, "{:#?}", r.scan.findings);
    v[0]
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
fn an_update_moving_the_start_past_the_log_end_is_reported() {
    let recs = || {
        vec![
            SP.snapshot((0, 0, 3), 520, &[(520, 529, AVAILABLE, 1)]),
            SP.update(0, 3, 700, &[]),
        ]
    };
    // orders-0's checkpoint held 700 as committed: the log lost what the group was given.
    let r = cluster_hw(recs(), 700);
    let f = naming(&r, "700");
    assert!(
        f.iter().any(|f| f.evidence.to_string().contains("600")),
        "{:#?}",
        r.scan.findings
    );
    let b = beyond(&r);
    assert_eq!((b.severity, b.offset), (Severity::Error, Some(700)));
    assert_eq!(b.group.as_deref(), Some("sg"));
    assert_eq!(b.evidence["log_end_offset"], 600, "{}", b.evidence);
    assert!(
        b.remediation
            .as_deref()
            .unwrap_or_default()
            .contains("kafka-share-groups.sh")
    );
    // Its checkpoint at its log end (600): a follower behind the leader the group read
    // from is the other reading — info, both said.
    let r = cluster(recs());
    let b = beyond(&r);
    assert_eq!(b.severity, Severity::Info, "{}", b.message);
    assert_eq!(b.evidence["replica_behind"]["high_watermark"], 600);
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
fn terminal_batches_past_the_log_end_move_the_start_past_it() {
    let r = cluster_hw(terminal_until(619), 620);
    assert!(!naming(&r, "600").is_empty(), "{:#?}", r.scan.findings);
    let b = beyond(&r);
    assert_eq!(b.evidence["start_offset"], 580, "{}", b.evidence);
    assert_eq!(b.evidence["effective_start"], 620, "{}", b.evidence);
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

/// The start travels in the bundle: `collect` of the log dir, the directory removed, `merge`
/// of the bundle gives the scan's JSON byte for byte, `share_start_beyond_log_end` included
/// (the served starts are the `__share_group_state` partition's cluster inputs).
#[test]
fn the_start_beyond_the_log_end_survives_collect_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let recs = vec![
        SP.snapshot((0, 0, 3), 520, &[(520, 529, AVAILABLE, 1)]),
        SP.update(0, 3, 700, &[]),
    ];
    log_dir(vec![orders(0, 400, 600), state_log(0, recs)], None)
        .high_watermark(ORDERS, 0, 700)
        .write(dir.path())
        .unwrap();
    let dirs = vec![dir.path().to_path_buf()];
    let opts = klogscan::results::ScanOptions::default();
    let scanned = klogscan::pipeline::scan(&dirs, &opts);
    assert!(
        (scanned.findings.iter()).any(|f| f.kind == Kind::ShareStartBeyondLogEnd),
        "{:#?}",
        scanned.findings
    );
    let bundles = tempfile::tempdir().unwrap();
    let f = bundles.path().join("0.klb");
    let w = std::fs::File::create(&f).unwrap();
    klogscan::bundle::collect(&dirs, &opts, std::io::BufWriter::new(w)).unwrap();
    dir.close().unwrap();
    let merged = klogscan::bundle::merge(&[f], &opts).unwrap();
    let (a, b) = (
        crate::common::json(scanned),
        crate::common::json(merged.report),
    );
    assert!(a == b, "merge differs from scan\nscan:\n{a}\nmerge:\n{b}");
}
