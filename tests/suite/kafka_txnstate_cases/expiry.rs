//! The expiration of idle transactional ids: `TransactionStateManager.
//! removeExpiredTransactionalIds` appends, per `__transaction_state` partition, a tombstone
//! of each id whose state allows it (Empty, CompleteCommit, CompleteAbort:
//! `TransactionState.isExpirationAllowed`) and whose last update is at least
//! `transactional.id.expiration.ms` (7 days) old, in batches no larger than the
//! partition's `max.message.bytes`; the id leaves the cache once its tombstone is
//! appended. The load reads a tombstone as the id's removal
//! (`loadTransactionMetadata`: `loadedTransactions.remove`).

use super::*;
use klogscan::testkit::txnlog::state::*;

const S: i64 = T0;
/// When the expiration ran: 7 days and an hour after `S`.
const EXPIRED: i64 = S + EXPIRATION_MS + 60 * MIN;
/// The reference time: 8 days after `S`.
const NOW: i64 = S + 8 * 24 * 60 * MIN;

fn coord(w: &mut World, id: &str, t: i64, v: TxnValue) {
    put(w.txn_log(1, partition_for(id, 50)), t, id, v);
}

fn tomb(w: &mut World, id: &str, t: i64) {
    tombstones(w.txn_log(1, partition_for(id, 50)), t, &[id.to_string()]);
}

/// `TransactionStateManagerTest.shouldRemoveCompleteAbortExpiredTransactionalIds`,
/// `TransactionStateManagerTest.shouldRemoveEmptyExpiredTransactionalIds` and
/// `TransactionStateManagerTest.shouldNotRemoveExpiredTransactionalIdsIfLogAppendFails`: an id
/// in CompleteAbort or Empty, last updated more than 7 days ago, gets a tombstone and is gone;
/// an id updated recently stays; an id whose tombstone append failed (NOT_ENOUGH_REPLICAS:
/// nothing appended) stays in the cache as it was.
///
/// On disk: "abort-expired" aborted a transaction on `orders-0` and `orders-1` whose ABORT
/// never reached `orders-1`, then expired; "empty-expired" initialized and expired;
/// "append-failed" is as old but has no tombstone; "not-yet" was updated a day ago. The
/// coordinator holds "append-failed" and "not-yet" only; no `transaction_state_anomaly`. The
/// data left open on `orders-1` belongs to an id the coordinator no longer has: confirmed
/// hanging (`tombstoned`), in `scan`, `verify` and the merge.
#[test]
fn expired_ids_are_removed_and_the_others_kept() {
    let mut w = World::new();
    let o01: &[(&str, &[i32])] = &[("orders", &[0, 1])];
    let id = "abort-expired";
    let p = Producer::transactional(10, 0);
    coord(&mut w, id, S, value((10, 0), ONGOING, o01, (S, S), 60_000));
    produce(w.part(1, "orders", 0), p, 2, S + 10);
    produce(w.part(1, "orders", 1), p, 2, S + 20);
    let v = value((10, 0), PREPARE_ABORT, o01, (S + SEC, S), 60_000);
    coord(&mut w, id, S + SEC, v);
    marker(w.part(1, "orders", 0), p, false, 0, S + SEC + 10);
    let v = value((10, 0), COMPLETE_ABORT, &[], (S + 2 * SEC, S), 60_000);
    coord(&mut w, id, S + 2 * SEC, v);
    coord(
        &mut w,
        "empty-expired",
        S,
        value((11, 0), EMPTY, &[], (S, -1), 60_000),
    );
    let day_ago = NOW - 24 * 60 * MIN;
    let v = value((12, 0), EMPTY, &[], (day_ago, -1), 60_000);
    coord(&mut w, "not-yet", day_ago, v);
    coord(
        &mut w,
        "append-failed",
        S,
        value((13, 0), EMPTY, &[], (S, -1), 60_000),
    );
    tomb(&mut w, "abort-expired", EXPIRED);
    tomb(&mut w, "empty-expired", EXPIRED);
    let b = w.write();
    let o = opts(NOW, None);
    let vw = view(&b, &o);
    let ids: Vec<_> = held(&vw).into_keys().collect();
    assert_eq!(ids, ["append-failed", "not-yet"]);
    let v = b.check_with(o);
    for (name, fs) in reports(&v) {
        assert_eq!(anomalies(&fs), [], "{name}");
        let (f, c) = confirmation(&fs, "orders", 1);
        assert_eq!(f.kind, Kind::HangingTransaction);
        assert_eq!(c["verdict"], "tombstoned", "{name}: {c}");
        assert_eq!(
            (c["hanging"].as_bool(), c["confirmed"].as_bool()),
            (Some(true), Some(true))
        );
        let loud_kinds: Vec<_> = (fs.iter())
            .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
            .map(|f| (f.kind, f.topic.as_str(), f.partition))
            .collect();
        assert_eq!(
            loud_kinds,
            [
                (Kind::HangingTransaction, "orders", 1),
                (Kind::TransactionMarkerMissing, "orders", 1)
            ],
            "{name}"
        );
    }
}

/// Near miss of [`expired_ids_are_removed_and_the_others_kept`]:
/// `TransactionStateManagerTest.shouldNotRemoveOngoingTransactionalIds`,
/// `TransactionStateManagerTest.shouldNotRemovePrepareAbortTransactionalIds` and
/// `TransactionStateManagerTest.shouldNotRemovePrepareCommitTransactionalIds` — ids as old in
/// Ongoing, PrepareAbort or PrepareCommit get no tombstone (`removeExpiredTransactionalIds`
/// appends nothing for them). A tombstone after such a value is none of the coordinator's:
/// `tombstone_while_in_progress` (error) for each, in `scan`, `verify` and the merge.
#[test]
fn no_tombstone_follows_a_transaction_in_progress() {
    let mut w = World::new();
    let other: &[(&str, &[i32])] = &[("other", &[0])];
    let ids = [
        ("ongoing", None),
        ("prepare-abort", Some(PREPARE_ABORT)),
        ("prepare-commit", Some(PREPARE_COMMIT)),
    ];
    for (i, (id, prepare)) in ids.into_iter().enumerate() {
        let pid = (20 + i as i64, 0);
        coord(&mut w, id, S, value(pid, ONGOING, other, (S, S), 60_000));
        if let Some(st) = prepare {
            coord(
                &mut w,
                id,
                S + SEC,
                value(pid, st, other, (S + SEC, S), 60_000),
            );
        }
        tomb(&mut w, id, EXPIRED);
    }
    let v = w.write().check_with(opts(NOW, None));
    for (name, fs) in reports(&v) {
        let want: Vec<(String, String)> = ["ongoing", "prepare-abort", "prepare-commit"]
            .iter()
            .map(|id| ("tombstone_while_in_progress".into(), id.to_string()))
            .collect();
        assert_eq!(anomalies(&fs), want, "{name}");
    }
}

/// `TransactionStateManagerTest.testTransactionExpirationShouldRespectBatchSize`,
/// `TransactionStateManagerTest.testTransactionalExpirationWithOfflineLogDir` and
/// `TransactionStateManagerTest.testTransactionalExpirationWithTooSmallBatchSize`: 1 001
/// expired ids over the 2 partitions of `__transaction_state` (the metadata log's count) are
/// expired with tombstones in several batches per partition, each under the 512-byte
/// `max.message.bytes`; a partition whose log is offline gets none (its ids stay, the others
/// go); with a limit smaller than one tombstone the appends fail and every id stays.
///
/// On disk: `__transaction_state-0` on broker 1 and `-1` on broker 2, each id's Empty value
/// where `partitionFor` puts it, then the tombstones, 16 to a batch. The coordinator holds no
/// id, the ids of partition 1 only, or every id; no anomaly and nothing at warning or above in
/// `scan`, `verify` or the merge.
#[test]
fn expiration_tombstones_in_batches_remove_the_ids_of_the_partitions_they_reached() {
    let ids: Vec<String> = (0..=1000).map(|i| format!("id_{i}")).collect();
    for reached in [vec![0, 1], vec![0], vec![]] {
        let mut w = World::new().kraft(2, 0);
        for (i, id) in ids.iter().enumerate() {
            let tp = partition_for(id, 2);
            let v = value((i as i64, 0), EMPTY, &[], (S, -1), 60_000);
            put(w.txn_log(tp + 1, tp), S + i as i64, id, v);
        }
        for tp in [0, 1].into_iter().filter(|tp| reached.contains(tp)) {
            let mine: Vec<String> = (ids.iter())
                .filter(|id| partition_for(id, 2) == tp)
                .cloned()
                .collect();
            for chunk in mine.chunks(16) {
                tombstones(w.txn_log(tp + 1, tp), EXPIRED, chunk);
            }
        }
        let b = w.write();
        let o = opts(NOW, None);
        let vw = view(&b, &o);
        let kept: Vec<&str> = held(&vw).into_keys().collect();
        let mut want: Vec<&str> = (ids.iter())
            .filter(|id| !reached.contains(&partition_for(id, 2)))
            .map(String::as_str)
            .collect();
        want.sort();
        assert_eq!(kept, want, "tombstones in {reached:?}");
        let v = b.check_with(o);
        for (name, fs) in reports(&v) {
            assert_eq!(anomalies(&fs), [], "{name}");
            assert_no_loud(name, &fs);
        }
        for p in (v.scan.partitions.iter()).filter(|p| p.topic == "__transaction_state") {
            assert!(p.batches > 400, "{}: {} batches", p.partition, p.batches);
        }
    }
}

/// `TransactionStateManagerTest.testTransactionExpirationShouldNotFailWithUninitializedTransactionMetadata`:
/// an id whose first InitProducerId never reached the log (its metadata stayed as first
/// created, producer id and epoch -1) expires all the same: the coordinator appends its
/// tombstone. On disk: a tombstone of an id no value precedes; the load removes nothing and
/// holds no such id; klogscan reports nothing. Near miss: the id initialized again after its
/// tombstone (an Empty value of a new producer) is held.
#[test]
fn a_tombstone_of_an_id_never_written_removes_nothing() {
    for again in [false, true] {
        let mut w = World::new();
        tomb(&mut w, "id", EXPIRED);
        if again {
            let t = EXPIRED + MIN;
            coord(&mut w, "id", t, value((30, 0), EMPTY, &[], (t, -1), 60_000));
        }
        let b = w.write();
        let o = opts(NOW, None);
        let vw = view(&b, &o);
        assert_eq!(held(&vw).contains_key("id"), again, "{vw:#?}");
        let v = b.check_with(o);
        for (name, fs) in reports(&v) {
            assert_eq!(anomalies(&fs), [], "{name}");
            assert_no_loud(name, &fs);
        }
    }
}
