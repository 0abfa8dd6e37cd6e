//! Which copy of a `__transaction_state` partition the coordinator loads: the broker that
//! becomes the partition's leader loads its own log, from the log start to the log end
//! (`TransactionStateManager.loadTransactionMetadata` reads `replicaManager.getLog` with
//! `FetchIsolation.LOG_END`), at a coordinator epoch that is the new leader epoch; the
//! broker that stops leading drops its cache (`removeTransactionsForTxnTopicPartition`
//! on becoming a follower) and, as a follower, truncates what the new leader does not
//! have.
//!
//! `__transaction_state-0` (one partition, the metadata log's count) is replicated on
//! brokers 1 and 2, led by 1 at leader epoch 0, then by 2 at epoch 1 (ISR `[2]`);
//! `orders-0` is on broker 3. `app` (producer 4000, epoch 2, timeout 60 s) wrote Empty
//! and Ongoing (replicated to both), then broker 1 appended its PrepareCommit, which
//! broker 2 never fetched: broker 1's high watermark stays at 2, below it.

use super::*;
use crate::kafka_quiet_cluster_cases::kraft::change;
use klogscan::testkit::txnlog::state::*;

const PID: (i64, i16) = (4000, 2);
const EMPTY_AT: i64 = T0 + SEC;
const START: i64 = T0 + 2 * SEC;
const PREPARE: i64 = T0 + 3 * SEC;
const LISTED: &[(&str, &[i32])] = &[("orders", &[0])];

/// The cluster above; `replicated`: broker 2 fetched the PrepareCommit too (both copies
/// hold it, high watermark 3) before it took over.
fn world(replicated: bool) -> World {
    let prepare = value(PID, PREPARE_COMMIT, LISTED, (PREPARE, START), 60_000);
    world_ending(replicated, prepare)
}

/// `app`'s Empty of `pid` at `EMPTY_AT` and its Ongoing transaction from `START`, listing
/// `orders-0`, on both brokers' copies of `__transaction_state-0`.
fn begun(w: &mut World, pid: (i64, i16)) {
    for b in [1, 2] {
        let log = w.txn_log(b, 0);
        put(
            log,
            EMPTY_AT,
            "app",
            value(pid, EMPTY, &[], (EMPTY_AT, -1), 60_000),
        );
        put(
            log,
            START,
            "app",
            value(pid, ONGOING, LISTED, (START, START), 60_000),
        );
    }
}

/// [`world`] with `prepare` as the last record broker 1 appended.
fn world_ending(replicated: bool, prepare: TxnValue) -> World {
    let mut w = World::new().kraft(1, 0);
    begun(&mut w, PID);
    let copies: &[i32] = if replicated { &[1, 2] } else { &[1] };
    for &b in copies {
        put(w.txn_log(b, 0), PREPARE, "app", prepare.clone());
    }
    let data = w.part(3, "orders", 0);
    produce(data, Producer::transactional(PID.0, PID.1), 2, START + 100);
    w.later.push(change("__transaction_state", 0, |c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
    }));
    let hw = if replicated { 3 } else { 2 };
    for b in [1, 2] {
        w.high_watermarks
            .push((b, "__transaction_state".into(), 0, hw));
    }
    w
}

/// `TransactionStateManagerTest.testSuccessfulReimmigration` (a load at a new
/// coordinator epoch replaces what the partition's cache held) with the class's
/// `loadTransactionsForTxnTopicPartition`: after the leader change, broker 2's
/// coordinator (epoch 1) loads broker 2's log — `app` Ongoing since `START`, listing
/// `orders-0`; broker 1's PrepareCommit, above its high watermark and absent from the new
/// leader, is not the coordinator's state (broker 1 truncates it when it follows) and no
/// marker is ever sent for it. Twenty minutes later, with nothing written since, Kafka's
/// coordinator holds an Ongoing transaction 20 min past its start with a 60 s timeout:
/// the data's open transaction is `alive` in the leader's copy, and the coordinator is
/// not aborting it (`ongoing_past_timeout`, on broker 2's copy); no transaction is in
/// PrepareCommit, so nothing is "stuck in prepare".
///
/// klogscan once took the copy with the highest offsets (across copies of a partition the
/// higher offset won, in the view and in the join), so it read broker 1's uncommitted
/// PrepareCommit: `markers_pending` and `transaction_stuck_in_prepare`. Now the view and
/// the join load the copy of the broker the metadata log names as the partition's leader
/// (`coordinator::LeaderCopies`).
#[test]
fn the_coordinator_loads_the_new_leaders_copy_not_an_uncommitted_tail() {
    let v = world(false)
        .write()
        .check_with(opts(PREPARE + 20 * MIN, None));
    for (name, fs) in reports(&v) {
        let stuck = of_kind(&fs, Kind::TransactionStuckInPrepare);
        assert!(stuck.is_empty(), "{name}: {:#?}", lines(stuck));
        let (_, c) = confirmation(&fs, "orders", 0);
        assert_eq!(c["verdict"], "alive", "{name}: {c}");
        let path = c["record"]["path"].as_str().unwrap_or("");
        assert!(path.contains("broker-2"), "{name}: {path}");
        let past: Vec<_> = of_kind(&fs, Kind::TransactionStateAnomaly)
            .into_iter()
            .filter(|f| f.evidence["anomaly"] == "ongoing_past_timeout")
            .map(|f| f.source.broker_id)
            .collect();
        assert_eq!(past, [Some(2)], "{name}");
    }
}

/// Near miss of [`the_coordinator_loads_the_new_leaders_copy_not_an_uncommitted_tail`]: broker
/// 2 had fetched the PrepareCommit before it took over (both copies hold it, high watermark 3).
/// The new leader's load holds `app` in PrepareCommit and hands it to the marker sender
/// (`TransactionStateManagerTest.shouldWriteTxnMarkersForTransactionInPreparedCommitState`);
/// twenty minutes without a marker, the markers are overdue: `transaction_stuck_in_prepare`,
/// and the data's open transaction is `markers_pending`, not hanging — klogscan says so.
#[test]
fn a_replicated_prepare_is_loaded_by_the_new_leader() {
    let v = world(true)
        .write()
        .check_with(opts(PREPARE + 20 * MIN, None));
    for (name, fs) in reports(&v) {
        let stuck = of_kind(&fs, Kind::TransactionStuckInPrepare);
        assert_eq!(stuck.len(), 1, "{name}: {:#?}", lines(fs.iter().copied()));
        let (_, c) = confirmation(&fs, "orders", 0);
        assert_eq!(c["verdict"], "markers_pending", "{name}: {c}");
        assert_eq!(c["hanging"], false, "{name}");
    }
}

/// Today's choice where the metadata log cannot name the loading broker's copy: the copy
/// with the highest offsets (broker 1's uncommitted PrepareCommit) is read as the
/// coordinator's state, `markers_pending` and `transaction_stuck_in_prepare`, as before.
fn assert_the_furthest_copy_is_read(v: &Verdict) {
    for (name, fs) in reports(v) {
        let stuck = of_kind(&fs, Kind::TransactionStuckInPrepare);
        assert_eq!(stuck.len(), 1, "{name}: {:#?}", lines(fs.iter().copied()));
        assert_eq!(stuck[0].source.broker_id, Some(1), "{name}");
        let (_, c) = confirmation(&fs, "orders", 0);
        assert_eq!(c["verdict"], "markers_pending", "{name}: {c}");
        let path = c["record"]["path"].as_str().unwrap_or("");
        assert!(path.contains("broker-1"), "{name}: {path}");
    }
}

/// Negative of [`the_coordinator_loads_the_new_leaders_copy_not_an_uncommitted_tail`]: the
/// same copies without a metadata log in the inputs. Nothing says which broker leads
/// `__transaction_state-0`, so nothing is guessed: the copy with the highest offsets.
#[test]
fn without_a_metadata_log_the_furthest_copy_is_read() {
    let mut w = world(false);
    w.kraft = None;
    let v = w.write().check_with(opts(PREPARE + 20 * MIN, None));
    assert_the_furthest_copy_is_read(&v);
}

/// Negative of [`the_coordinator_loads_the_new_leaders_copy_not_an_uncommitted_tail`]: the
/// metadata log moves the leadership to broker 3, a replica whose copy the inputs lack
/// (brokers 1 and 2 hold theirs). The copy broker 3's coordinator loads is not on disk;
/// neither of the two is it, so the highest offsets decide, as before.
#[test]
fn a_named_leader_without_a_copy_on_disk_leaves_the_furthest_copy() {
    let mut w = world(false);
    w.txn_log(3, 0);
    w.hidden.push((3, "__transaction_state".into(), 0));
    w.later = vec![change("__transaction_state", 0, |c| {
        c.leader = 3;
        c.isr = Some(vec![3]);
    })];
    let v = w.write().check_with(opts(PREPARE + 20 * MIN, None));
    assert_the_furthest_copy_is_read(&v);
}

/// The transaction join reads the new leader's copy too, the shorter one: broker 1's
/// coordinator timed `app` out and appended its abort (`TransactionCoordinator.
/// abortTimedOutTransactions`: PrepareAbort at the fenced epoch 3, `prepareFenceProducerEpoch`),
/// which broker 2 never fetched before it took over. Broker 2's coordinator loads `app`
/// Ongoing at epoch 2 and will time it out itself; nothing was sent for broker 1's
/// PrepareAbort. The join matches the data of `orders-0` to the coordinator's Ongoing
/// transaction (its record at offset 1 of broker 2's copy), so nothing is stuck in prepare and
/// the open transaction on `orders-0` is caused by no coordinator record; without the
/// metadata log the join reads broker 1's PrepareAbort as before (stuck, and the cause of
/// the open transaction).
#[test]
fn the_join_matches_the_data_to_the_new_leaders_shorter_copy() {
    let abort = value((PID.0, 3), PREPARE_ABORT, LISTED, (PREPARE, START), 60_000);
    let o = opts(PREPARE + 20 * MIN, None).with_keep_cluster_txns(true);
    let joined = |v: &Verdict| -> Vec<(&'static str, String, i64)> {
        [("scan", &v.scan), ("merge", &v.merge)]
            .into_iter()
            .map(|(name, r)| {
                let txns = &r.transactions.as_ref().expect("the join ran").transactions;
                let t = (txns.iter().find(|t| t.producer_id == PID.0))
                    .unwrap_or_else(|| panic!("{name}: no transaction of {}", PID.0));
                let c = t.coordinator.as_ref().expect("a coordinator record");
                (name, c.state.name().to_string(), c.last_record_offset)
            })
            .collect()
    };
    let v = world_ending(false, abort.clone())
        .write()
        .check_with(o.clone());
    for (name, state, offset) in joined(&v) {
        assert_eq!((state.as_str(), offset), ("Ongoing", 1), "{name}");
    }
    for (name, fs) in reports(&v) {
        assert!(
            of_kind(&fs, Kind::TransactionStuckInPrepare).is_empty(),
            "{name}"
        );
        let (f, _) = confirmation(&fs, "orders", 0);
        assert!(f.caused_by.is_empty(), "{name}: {:?}", f.caused_by);
    }
    let mut w = world_ending(false, abort);
    w.kraft = None;
    let v = w.write().check_with(o);
    for (name, state, offset) in joined(&v) {
        assert_eq!((state.as_str(), offset), ("PrepareAbort", 2), "{name}");
    }
    for (name, fs) in reports(&v) {
        let stuck = of_kind(&fs, Kind::TransactionStuckInPrepare);
        assert_eq!(stuck.len(), 1, "{name}: {:#?}", lines(fs.iter().copied()));
        let (f, _) = confirmation(&fs, "orders", 0);
        // `verify` too: its ids span the report, so the link to the coordinator's
        // partition resolves there as in the scan.
        assert!(
            f.caused_by.contains(&stuck[0].id),
            "{name}: {:?}",
            f.caused_by
        );
    }
}

/// `app`'s producer 4000 left a transaction open on `payments-0` at epoch 32765 (no marker
/// was ever written: a hanging transaction), reached epoch 32766 (`Short.MaxValue - 1`: its
/// epochs are exhausted, `TransactionMetadata.isProducerEpochExhausted`) and committed a
/// transaction on `orders-0` at that epoch (both on broker 3); both copies of
/// `__transaction_state-0` hold it, up to CompleteCommit (high watermark 4). Then broker 1,
/// still the leader, answered a new producer instance's InitProducerId by rotating `app` to
/// producer 5000 (`TransactionCoordinator.handleInitProducerId` →
/// `TransactionMetadata.prepareProducerIdRotation`: Empty, epoch 0) and appended that value
/// above its high watermark; broker 2 never fetched it before the metadata log made it the
/// leader (epoch 1, ISR `[2]`). The rotation was never acknowledged, so producer 5000 wrote
/// nothing.
fn rotated_world() -> World {
    const OLD: (i64, i16) = (4000, 32766);
    let mut w = World::new().kraft(1, 0);
    begun(&mut w, OLD);
    for b in [1, 2] {
        let log = w.txn_log(b, 0);
        let prepare = value(OLD, PREPARE_COMMIT, LISTED, (PREPARE, START), 60_000);
        put(log, PREPARE, "app", prepare);
        let done = value(OLD, COMPLETE_COMMIT, LISTED, (PREPARE + 100, START), 60_000);
        put(log, PREPARE + 100, "app", done);
    }
    let rotated = value((5000, 0), EMPTY, &[], (PREPARE + SEC, -1), 60_000);
    put(w.txn_log(1, 0), PREPARE + SEC, "app", rotated);
    let data = w.part(3, "orders", 0);
    let p = Producer::transactional(OLD.0, OLD.1);
    produce(data, p, 2, START + 100);
    marker(data, p, true, 0, PREPARE + 50);
    let hanging = Producer::transactional(OLD.0, OLD.1 - 1);
    produce(w.part(3, "payments", 0), hanging, 2, T0 + SEC / 2);
    w.later.push(change("__transaction_state", 0, |c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
    }));
    for b in [1, 2] {
        w.high_watermarks
            .push((b, "__transaction_state".into(), 0, 4));
    }
    w
}

/// What a selection shows over `b`, as JSON, by where it ran: the library's scan
/// (`request::run`), the CLI's `scan --format json`, the library's verify
/// (`request::verify`), and the library's merge of each broker's `collect` bundle.
/// `select`: `--transactional-id app` (`None`) or `--producer-id P`.
fn shown(b: &Brokers, o: &ScanOptions, select: Option<i64>) -> Vec<(&'static str, Value)> {
    use klogscan::report::filter::Filter;
    use klogscan::request::Request;
    let req = |inputs: Vec<std::path::PathBuf>| {
        let r = Request::new(inputs).with_options(o.clone());
        match select {
            None => r.with_transactional_ids(vec!["app".into()]),
            Some(pid) => r.with_filter(Filter {
                producer_ids: vec![pid],
                ..Filter::default()
            }),
        }
    };
    let json = |r: &klogscan::results::ScanReport| -> Value {
        let mut out = Vec::new();
        klogscan::report::json::write_scan(r, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    };
    let scan = json(&request::run(&req(b.all())).unwrap().report);
    let flag = match select {
        None => ["--transactional-id".to_string(), "app".into()],
        Some(pid) => ["--producer-id".to_string(), pid.to_string()],
    };
    let cli = assert_cmd::Command::cargo_bin("klogscan")
        .unwrap()
        .args([
            "scan",
            "--format",
            "json",
            "--now",
            &o.now_ms.unwrap().to_string(),
        ])
        .args(flag)
        .args(b.all())
        .output()
        .unwrap();
    let cli: Value = serde_json::from_slice(&cli.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&cli.stderr)));
    let verify = request::verify(&req(b.all()), None).unwrap().report;
    let verify = klogscan::verify::render::to_json(&verify);
    let bundles = tempfile::tempdir().unwrap();
    let files: Vec<std::path::PathBuf> = (b.dirs.iter().enumerate())
        .map(|(i, dirs)| {
            let f = bundles.path().join(format!("{i}.klb"));
            let out = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
            klogscan::bundle::collect(dirs, o, out).unwrap();
            f
        })
        .collect();
    let merge = json(&request::run(&req(files).with_bundles(true)).unwrap().report);
    vec![
        ("scan", scan),
        ("cli", cli),
        ("verify", verify),
        ("merge", merge),
    ]
}

/// Assert that `--transactional-id app` over `b` shows what `--producer-id pid` shows, and
/// not what `--producer-id other` shows, in each of [`shown`]'s runs.
fn assert_app_resolves_to(b: &Brokers, pid: i64, other: i64) {
    let o = opts(PREPARE + 20 * MIN, None);
    let by_id = shown(b, &o, None);
    let by_pid = shown(b, &o, Some(pid));
    let by_other = shown(b, &o, Some(other));
    for (((name, id), (_, p)), (_, q)) in by_id.iter().zip(&by_pid).zip(&by_other) {
        assert_eq!(
            id, p,
            "{name}: --transactional-id app is not producer {pid}'s"
        );
        assert_ne!(id, q, "{name}: producers {pid} and {other} show the same");
    }
}

/// `TransactionCoordinator.onElection` → `TransactionStateManager.
/// loadTransactionsForTxnTopicPartition` on the new leader: broker 2's coordinator loads its
/// own copy, where `app` is producer 4000 (CompleteCommit); broker 1's rotation to 5000 is
/// nobody's state (broker 1 truncates it as a follower), and `kafka-transactions.sh describe
/// --transactional-id app` answers 4000. So `--transactional-id app` selects producer 4000
/// (`orders-0`) in the library's scan, the CLI's, `verify` and the merge of the bundles: the
/// filter resolves through the copy the scan's coordinator findings follow.
///
/// klogscan once resolved the filter through the copy with the highest offset (broker 1's
/// rotation: producer 5000, which shows nothing) while the findings followed the
/// metadata-named leader's copy.
#[test]
fn transactional_id_resolves_through_the_new_leaders_copy() {
    let b = rotated_world().write();
    assert_app_resolves_to(&b, 4000, 5000);
}

/// Negative of [`transactional_id_resolves_through_the_new_leaders_copy`]: the same copies
/// without a metadata log. Nothing names the loading broker, so the filter resolves as
/// before, through the copy with the highest offset: producer 5000.
#[test]
fn without_a_metadata_log_transactional_id_resolves_through_the_furthest_copy() {
    let mut w = rotated_world();
    w.kraft = None;
    let b = w.write();
    assert_app_resolves_to(&b, 5000, 4000);
}

/// Near miss of [`transactional_id_resolves_through_the_new_leaders_copy`]: the metadata log
/// also moved the partition's replicas to broker 2 alone, and broker 1 deleted its copy
/// (`LogManager.asyncDelete`: a `-delete` directory, still holding the rotation at the highest
/// offset). A copy being deleted is no coordinator's state either: the filter resolves
/// through broker 2's copy (producer 4000), not through the deleted copy's tail.
#[test]
fn a_deleted_copys_tail_is_not_what_transactional_id_resolves_through() {
    let mut w = rotated_world();
    w.later = vec![change("__transaction_state", 0, |c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
        c.replicas = Some(vec![2]);
    })];
    let b = w.write();
    let one = b.path(1, "data");
    crate::kafka_quiet_cluster_cases::kraft::delete_replica(&one, "__transaction_state", 0, &[]);
    assert_app_resolves_to(&b, 4000, 5000);
}
