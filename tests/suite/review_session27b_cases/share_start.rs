//! `share_start_beyond_log_end` (`cluster::consumers::share`, `09f6ba4`): a share group's
//! served start held against the data partition's log end — on a data log whose end lies
//! past its last batch, on state for another incarnation of the topic, on a gap in the
//! state batches, and with hostile group names in the remediation. Kafka (2025-10 tree):
//! `SharePartition.maybeInitialize`/`maybeUpdateCachedStateAndOffsets`/
//! `findLastOffsetAcknowledged` (the `GapWindow`), `UnifiedLog.logEndOffset` (the active
//! segment's next offset), `ShareCoordinatorShard.maybeCleanupShareState`.

use crate::kafka_share_coordinator_cases::{
    ACKNOWLEDGED, ORDERS, Sp, log_dir, orders, run, state_log,
};
use klogscan::finding::{Finding, Kind};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

const SP: Sp = Sp("sg", ORDERS, 0);

fn beyond(r: &crate::kafka_share_coordinator_cases::Run) -> Vec<&Finding> {
    (r.scan.findings.iter())
        .filter(|f| f.kind == Kind::ShareStartBeyondLogEnd)
        .collect()
}

/// `orders-0` from 400: plain batches of 20 up to `end`.
fn plain_orders(end: i64) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(ORDERS, 0)
        .start_offset(400)
        .start_time(crate::kafka_share_coordinator_cases::T0);
    for _ in 0..(end - 400) / 20 {
        p.append(Batch::new(Producer::PLAIN).records(20));
    }
    p
}

/// Kafka's log end is the active segment's next offset — for an empty active segment its
/// base (`LocalLog`'s `nextOffsetMetadata` from `LogSegment.readNextOffset`), whatever the
/// batches below it hold. Here `orders-0` holds 400..579 in its first segment and an empty
/// active segment at 600: a crash after the roll to 600 lost the first segment's unflushed
/// tail 580..599 while the new file survived (`LogLoader.recoverLog` truncates no bytes of a
/// shorter but valid segment, so it keeps the later one and the log end stays 600). The
/// share group was delivered everything up to 600 (start 600, the high watermark 600):
/// Kafka serves the next fetch from 600, the log end — no stall. klogscan takes the last
/// batch's next offset (580) for the log end and reports the start 20 past it, an error.
#[test]
fn a_start_at_the_base_of_an_empty_active_segment_is_not_past_the_log_end() {
    let recs = vec![SP.snapshot((0, 2, 3), 600, &[])];
    let dir = tempfile::tempdir().unwrap();
    let ld = log_dir(vec![plain_orders(580), state_log(0, recs)], None)
        .clean_shutdown(false)
        .high_watermark(ORDERS, 0, 600)
        .recovery_point(ORDERS, 0, 400);
    let m = ld.write(dir.path()).unwrap();
    let pd = (m.partitions.iter())
        .find(|p| p.dir.file_name().unwrap() == "orders-0")
        .unwrap();
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(pd.dir.join(format!("{:020}.{ext}", 600)), b"").unwrap();
    }
    let scan = crate::common::quiet::scan_dir(dir.path(), false);
    let f: Vec<_> = (scan.findings.iter())
        .filter(|f| f.kind == Kind::ShareStartBeyondLogEnd)
        .collect();
    assert!(f.is_empty(), "{f:#?}");
}

/// The state of an earlier incarnation of `orders` (its topic id, start 700): the topic was
/// deleted and created again (a new topic id, `orders-0` now 400..600). The coordinator
/// tombstones the old id's state (`maybeCleanupShareState`) and the new topic's share
/// partition is initialized afresh; the old state names no live partition. Quiet.
#[test]
fn state_of_a_deleted_incarnation_of_the_topic_is_not_held_against_the_new_one() {
    let old = Sp("sg", "orders-old-incarnation", 0);
    let recs = vec![old.snapshot((0, 2, 3), 700, &[])];
    let r = run(log_dir(vec![orders(0, 400, 600), state_log(0, recs)], None));
    assert!(beyond(&r).is_empty(), "{:#?}", beyond(&r));
}

/// A gap in the state batches (`SharePartitionTest.testMaybeInitializeWithReadStateGaps…`,
/// the `GapWindow` of `maybeInitialize`): start 580, 580..589 and 600..619 acknowledged,
/// 590..599 never acknowledged. `findLastOffsetAcknowledged` stops at the gap and the start
/// lands at 590 — at or below the log end 600 even though the acknowledged batches run past
/// it. Quiet.
#[test]
fn a_gap_in_the_state_stops_the_start_below_the_log_end() {
    let recs = vec![SP.snapshot(
        (0, 2, 3),
        580,
        &[(580, 589, ACKNOWLEDGED, 1), (600, 619, ACKNOWLEDGED, 1)],
    )];
    let r = run(log_dir(vec![orders(0, 400, 600), state_log(0, recs)], None));
    assert!(beyond(&r).is_empty(), "{:#?}", beyond(&r));
}

/// Group ids are any string: the remediation's `kafka-share-groups.sh` line must hand each
/// to the shell as one argument — quoted when it holds shell syntax, joined to `--group`
/// when it starts with `-` (argparse would read it as an option), a placeholder when it
/// holds a control character.
#[test]
fn hostile_group_names_reach_the_reset_command_as_one_argument() {
    let cases: [(&'static str, &str); 3] = [
        ("sg'; touch /tmp/x #", "--group 'sg'\\''; touch /tmp/x #'"),
        ("-sg", "--group=-sg"),
        ("sg\n--execute", "--group <group>"),
    ];
    for (group, want) in cases {
        let sp = Sp(group, ORDERS, 0);
        let recs = vec![sp.snapshot((0, 2, 3), 700, &[])];
        let ld = log_dir(vec![orders(0, 400, 600), state_log(0, recs)], None)
            .high_watermark(ORDERS, 0, 700);
        let r = run(ld);
        let f = beyond(&r);
        assert_eq!(f.len(), 1, "{group:?}: {:#?}", r.scan.findings);
        let rem = f[0].remediation.as_deref().unwrap_or_default();
        assert!(rem.contains(want), "{group:?}: {rem}");
        assert!(!rem.contains('\n'), "{group:?}: {rem}");
    }
}

/// Two copies of `__share_group_state-0`: the leader's (broker 1) holds the share
/// partition's snapshot (start 700) and then its tombstone — `kafka-share-groups.sh
/// --delete-offsets` (`deleteState`) after the data log lost the records the group had
/// been given (high watermark 700, log end 600) — and a follower's (broker 2), offline
/// since, only the snapshot. The coordinator loads the leader's log: no state, the share
/// partition is initialized afresh from `share.auto.offset.reset`; nothing stalls. klogscan
/// reads the starts per share partition from every live copy, the longest first, and takes
/// the first copy that holds the key: the leader's holds none, so the follower's stale 700
/// is held against the log end, an error.
#[test]
fn a_share_partition_deleted_on_the_leaders_state_log_is_not_judged_on_a_stale_copy() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let leader = vec![SP.snapshot((0, 2, 3), 700, &[]), SP.deleted()];
    log_dir(vec![orders(0, 400, 600), state_log(0, leader)], None)
        .high_watermark(ORDERS, 0, 700)
        .write(d1.path())
        .unwrap();
    let follower = vec![SP.snapshot((0, 2, 3), 700, &[])];
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(state_log(0, follower))
        .write(d2.path())
        .unwrap();
    let dirs = vec![d1.path().to_path_buf(), d2.path().to_path_buf()];
    let r = klogscan::pipeline::scan(&dirs, &klogscan::results::ScanOptions::default());
    let f: Vec<_> = (r.findings.iter())
        .filter(|f| f.kind == Kind::ShareStartBeyondLogEnd)
        .collect();
    assert!(f.is_empty(), "{f:#?}");
}

/// The agreeing twin: the follower's copy caught up (the tombstone on both). Quiet.
#[test]
fn a_share_partition_deleted_on_every_state_copy_is_quiet() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let recs = || vec![SP.snapshot((0, 2, 3), 700, &[]), SP.deleted()];
    log_dir(vec![orders(0, 400, 600), state_log(0, recs())], None)
        .high_watermark(ORDERS, 0, 700)
        .write(d1.path())
        .unwrap();
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(state_log(0, recs()))
        .write(d2.path())
        .unwrap();
    let dirs = vec![d1.path().to_path_buf(), d2.path().to_path_buf()];
    let r = klogscan::pipeline::scan(&dirs, &klogscan::results::ScanOptions::default());
    assert!(
        !(r.findings.iter()).any(|f| f.kind == Kind::ShareStartBeyondLogEnd),
        "{:#?}",
        r.findings
    );
}
