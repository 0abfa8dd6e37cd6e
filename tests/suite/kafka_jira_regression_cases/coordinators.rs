//! The coordinators' logs (`__transaction_state`, `__consumer_offsets`) as a bug left them,
//! or as a broker of the fixed version must load them.

use super::*;
use klogscan::partition::groups::{GroupsOptions, list_groups};
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use klogscan::testkit::txnlog::{TxnValue, state};
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use serde_json::json;

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);

fn scan_dir(dir: &Path) -> ScanReport {
    scan_with(dir, ScanOptions::default())
}

/// KAFKA-16352 (commit 1d6e0b87275, "Txn may get stuck in PrepareCommit or PrepareAbort
/// state"; `TransactionMarkerChannelManagerTest.shouldNotLoseTxnCompletionAfterLoad`).
/// A marker operation of an earlier coordinator epoch removed the pending-completion entry
/// of a reloaded transaction, so once every partition had its COMMIT marker the
/// coordinator never wrote CompleteCommit: `__transaction_state` ends at PrepareCommit while
/// both data partitions hold the marker. The producer's next EndTxn/AddPartitions gets
/// CONCURRENT_TRANSACTIONS until the coordinator moves; a coordinator of the fixed version
/// loading that log re-sends the markers for the Prepare* id and then writes the Complete
/// record (`TransactionStateManager.loadTransactionsForTxnTopicPartition`). klogscan must
/// report the Prepare record as stuck (`prepare_without_complete`, error) and, in the
/// cross-partition view, name both partitions as holding their marker — the data
/// partitions have nothing open; the twin with the CompleteCommit is quiet.
#[test]
fn kafka_16352_prepare_commit_never_completed_after_every_marker() {
    for bug in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator(3);
        let t = Txn::new("app", Producer::transactional(300, 2), &[A, B]);
        c.run(&if bug { t.no_complete() } else { t });
        c.advance(3_600_000);
        c.plain(A, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_dir(dir.path());
        if !bug {
            assert!(serious(&r.findings).is_empty(), "{:#?}", r.findings);
            continue;
        }
        let anomalies = of_kind(&r.findings, Kind::TransactionStateAnomaly);
        assert_eq!(anomalies.len(), 1, "{:#?}", r.findings);
        assert_eq!(anomalies[0].evidence["anomaly"], "prepare_without_complete");
        assert_eq!(anomalies[0].severity, Severity::Error);
        assert!(of_kind(&r.findings, Kind::HangingTransaction).is_empty());
        assert!(of_kind(&r.findings, Kind::TransactionMarkerMissing).is_empty());
        let stuck = of_kind(&r.findings, Kind::TransactionStuckInPrepare);
        assert_eq!(stuck.len(), 1, "{:#?}", r.findings);
        let ev = &stuck[0].evidence;
        assert_eq!(
            ev["partitions_with_marker"].as_array().unwrap().len(),
            2,
            "{ev}"
        );
        assert!(
            ev["partitions_without_marker"]
                .as_array()
                .unwrap()
                .is_empty(),
            "{ev}"
        );
    }
}

/// KAFKA-16352, the same log as above: the cause the findings name. Every listed partition
/// holds the transaction's COMMIT marker, so the markers were delivered and written; what
/// was lost is the coordinator's completion (before the fix
/// `TransactionMarkerChannelManager.removeMarkersForTxn` could drop the pending entry of a
/// reloaded transaction, so `maybeWriteTxnCompletion` never ran:
/// `TransactionMarkerChannelManagerTest.shouldNotLoseTxnCompletionAfterLoad`). klogscan's
/// `transaction_stuck_in_prepare` said "markers not delivered" next to "2 listed
/// partition(s) in the inputs have the marker, 0 do not", and rule 31's
/// `prepare_without_complete` "the markers were never delivered (KAFKA-19999 class)"; now the
/// first names the lost completion and a reload as the fix, the second both readings.
#[test]
fn kafka_16352_stuck_prepare_with_every_marker_is_not_called_undelivered() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(3);
    let t = Txn::new("app", Producer::transactional(300, 2), &[A, B]).no_complete();
    c.run(&t);
    c.advance(3_600_000);
    c.plain(A, 1);
    c.write(dir.path(), 1).unwrap();
    let r = scan_dir(dir.path());
    let stuck = of_kind(&r.findings, Kind::TransactionStuckInPrepare);
    assert_eq!(stuck.len(), 1, "{:#?}", r.findings);
    let anomalies = of_kind(&r.findings, Kind::TransactionStateAnomaly);
    assert_eq!(anomalies.len(), 1, "{:#?}", r.findings);
    for f in stuck.iter().chain(&anomalies) {
        assert!(
            !f.message.contains("not delivered") && !f.message.contains("never delivered"),
            "{:?}: {}",
            f.kind,
            f.message
        );
    }
    assert!(
        stuck[0].message.contains("KAFKA-16352"),
        "{}",
        stuck[0].message
    );
    let fix = stuck[0].remediation.as_deref().unwrap_or_default();
    assert!(fix.contains("re-sends them"), "{fix}");
}

/// KAFKA-8803 (commit 6a88d32b9fe, "Remove timestamp check in completeTransitionTo";
/// `TransactionMetadataTest.testTolerateTimeShiftDuringPrepareCommit`,
/// `testTolerateTimeShiftDuringCompleteCommit`, `testTolerateTimeShiftDuringAddPartitions`,
/// `testTolerateUpdateTimeShiftDuringEpochBump`). A coordinator whose wall clock stepped
/// back refused the transition ("timestamp … is smaller than …"), so the transactional id
/// was stuck; since the fix each transition takes the earlier update time. On disk: one
/// transaction whose Empty, Ongoing, PrepareCommit and CompleteCommit values carry
/// `TransactionLastUpdateTimestampMs` each a little below the previous. A coordinator of
/// the fixed version loads them as they are; klogscan must not call a clock step an
/// anomaly.
#[test]
fn kafka_8803_transaction_update_times_that_step_back_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(3);
    let t = c.now();
    let v = |st: u8, shift: i64, start: i64| {
        let v = TxnValue::new(400, 1, st).times(t - shift, start);
        if st == state::EMPTY {
            v
        } else {
            v.partitions(&[("orders", &[0])])
        }
    };
    c.coordinator_record("shift", Some(v(state::EMPTY, 0, -1)));
    c.coordinator_record("shift", Some(v(state::ONGOING, 1, t - 1)));
    c.coordinator_record("shift", Some(v(state::PREPARE_COMMIT, 2, t - 1)));
    c.coordinator_record("shift", Some(v(state::COMPLETE_COMMIT, 3, t - 1)));
    c.advance(60_000);
    c.plain(A, 1);
    c.write(dir.path(), 1).unwrap();
    let r = scan_dir(dir.path());
    assert!(
        of_kind(&r.findings, Kind::TransactionStateAnomaly).is_empty(),
        "{:#?}",
        r.findings
    );
    assert!(serious(&r.findings).is_empty(), "{:#?}", r.findings);
}

/// A classic group `big` (value version 3) whose one member's assignment is `size` bytes.
fn big_group(size: usize) -> Spec {
    use base64::Engine as _;
    let assignment = base64::engine::general_purpose::STANDARD.encode(vec![7u8; size]);
    (
        2,
        json!({"group": "big"}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 1, "protocol": "range",
                   "leader": "m1", "currentStateTimestamp": 1,
                   "members": [{"memberId": "m1", "clientId": "c", "clientHost": "h",
                                "rebalanceTimeout": 60000, "sessionTimeout": 10000,
                                "subscription": "", "assignment": assignment}]}),
        )),
    )
}

fn commit(offset: i64) -> Spec {
    (
        1,
        json!({"group": "big", "topic": "t", "partition": 0}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": -1, "commitTimestamp": 1}),
        )),
    )
}

/// KAFKA-7286 (commit 4a5cba87bcd, "Avoid getting stuck loading large metadata records";
/// `GroupMetadataManagerTest.testLoadGroupWithLargeGroupMetadataRecord`). The loader read
/// `offsets.load.buffer.size` (5 MiB) at a time and made no progress on a batch larger than
/// that: the partition stayed loading forever. The fixed loader grows its buffer to the
/// batch. On disk: an offset commit, then a group metadata record whose member assignment
/// makes the batch larger than 5 MiB, then a second commit. klogscan must load the group
/// and both commits without a `group_load_failure`; the small twin loads the same way.
#[test]
fn kafka_7286_a_group_record_larger_than_the_load_buffer_loads() {
    for size in [6 << 20, 100] {
        let dir = tempfile::tempdir().unwrap();
        let mut log = GroupLog::new();
        log.batch(vec![commit(5)]);
        log.batch(vec![big_group(size)]);
        log.batch(vec![commit(9)]);
        log.write(dir.path(), 0).unwrap();
        let r = scan_dir(dir.path());
        assert!(
            of_kind(&r.findings, Kind::GroupLoadFailure).is_empty(),
            "{size}: {:#?}",
            r.findings
        );
        assert!(serious(&r.findings).is_empty(), "{size}: {:#?}", r.findings);
        let inv = request::discover(&[dir.path().to_path_buf()], &ScanOptions::default()).unwrap();
        let groups = list_groups(&inv, &GroupsOptions::default());
        assert_eq!(groups.len(), 1, "{size}: {groups:#?}");
        assert_eq!(groups[0].group_id, "big");
        assert_eq!(groups[0].leader.as_deref(), Some("m1"));
        let offsets: Vec<i64> = groups[0].offsets.iter().map(|o| o.offset).collect();
        assert_eq!(offsets, [9], "{size}");
    }
}

/// Twin of the case above: the COMMIT marker never reached `orders-1` (the KAFKA-19999
/// class: a partition that keeps refusing WriteTxnMarkers). There the markers really were
/// not delivered: `transaction_stuck_in_prepare` says so, names no KAFKA-16352 and sends the
/// reader to the failing markers, not to a reload.
#[test]
fn kafka_16352_twin_a_partition_without_its_marker_is_undelivered() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(3);
    let t = Txn::new("app", Producer::transactional(300, 2), &[A, B])
        .no_complete()
        .skip_marker_on(B);
    c.run(&t);
    c.advance(3_600_000);
    c.plain(A, 1);
    c.write(dir.path(), 1).unwrap();
    let r = scan_dir(dir.path());
    let stuck = of_kind(&r.findings, Kind::TransactionStuckInPrepare);
    assert_eq!(stuck.len(), 1, "{:#?}", r.findings);
    assert!(
        stuck[0].message.contains("markers not delivered"),
        "{}",
        stuck[0].message
    );
    assert!(
        !stuck[0].message.contains("KAFKA-16352"),
        "{}",
        stuck[0].message
    );
    let fix = stuck[0].remediation.as_deref().unwrap_or_default();
    assert!(fix.starts_with("find why the markers"), "{fix}");
}
