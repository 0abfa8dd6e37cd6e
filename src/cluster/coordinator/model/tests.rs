use super::*;

fn value(pid: i64, epoch: i16, state: TxnState, parts: &[&str], t: i64) -> CoordValue {
    CoordValue {
        version: 0,
        producer_id: pid,
        previous_producer_id: -1,
        next_producer_id: -1,
        producer_epoch: epoch,
        next_producer_epoch: -1,
        timeout_ms: 60_000,
        state,
        partitions: parts.iter().map(|p| (p.to_string(), 0)).collect(),
        last_update_ms: t,
        start_ms: t,
        client_transaction_version: 0,
    }
}

/// Two ids, each looping Ongoing → PrepareCommit → CompleteCommit over two alternating
/// partition sets (`TransactionMetadata`'s transitions), then `b` tombstoned.
fn log() -> CoordinatorLog {
    let mut records = Vec::new();
    let mut offset = 0;
    for i in 0..10 {
        for (id, pid) in [("a", 1), ("b", 2)] {
            let parts: &[&str] = if i % 2 == 0 { &["x", "y"] } else { &["z"] };
            for state in [
                TxnState::Ongoing,
                TxnState::PrepareCommit,
                TxnState::CompleteCommit,
            ] {
                let listed = if state == TxnState::CompleteCommit {
                    &[][..]
                } else {
                    parts
                };
                let v = value(pid, 0, state, listed, offset * 10);
                records.push(CoordRecord::new(offset, id.into(), Some(v)));
                offset += 1;
            }
        }
    }
    records.push(CoordRecord::new(offset, "b".into(), None));
    let origin = Origin {
        path: "/d/__transaction_state-3".into(),
        live: true,
        ..Origin::default()
    };
    CoordinatorLog::of_records(3, origin, records)
}

#[test]
fn one_replay_gives_the_transactions_and_the_latest_values() {
    let all = CoordModel::of(&log(), None);
    assert_eq!(all.txns.len(), 20);
    assert_eq!(all.summarised, 0);
    assert_eq!(all.records, 61);
    assert!(
        all.txns
            .iter()
            .all(|t| t.commit == Some(true) && t.complete_ms.is_some())
    );
    // The alternating partition sets are shared, not copied per transaction.
    let sets: HashSet<*const BTreeSet<(String, i32)>> = all
        .txns
        .iter()
        .filter_map(|t| t.partitions.as_ref().map(Arc::as_ptr))
        .collect();
    assert_eq!(sets.len(), 2);
    // The view's latest value: `a` CompleteCommit with the last transaction's
    // partitions; `b` removed by its tombstone.
    let a = all.ids["a"].value.as_ref().unwrap();
    assert_eq!(a.state, TxnState::CompleteCommit);
    assert_eq!(a.last_txn_partitions, vec![("z".to_string(), 0)]);
    assert!(a.tombstoned.is_none());
    let b = all.ids["b"].value.as_ref().unwrap();
    assert_eq!(b.tombstoned.as_ref().map(|s| s.offset), Some(60));
    // The history rules saw every record and found nothing.
    assert!(all.history.anomalies.is_empty());
    assert_eq!(all.history.latest.len(), 2);
}

#[test]
fn finished_transactions_of_unwanted_producers_are_counted_but_the_latest_kept() {
    let all = CoordModel::of(&log(), None);
    let only_a = CoordModel::of(&log(), Some(Arc::new(HashSet::from([1]))));
    // Every transaction of producer 1, and `b`'s latest one, in the same order.
    let expect: Vec<&CoordTxn> = all
        .txns
        .iter()
        .filter(|t| t.producer_id == 1 || t.first_record_offset == 57)
        .collect();
    assert_eq!(only_a.txns.iter().collect::<Vec<_>>(), expect);
    assert_eq!(only_a.summarised, 9);
    let none = CoordModel::of(&log(), Some(Arc::default()));
    assert_eq!(none.txns.len(), 2);
    assert_eq!(none.summarised, 18);
    // The view reads the same latest values whatever is kept.
    assert_eq!(
        none.ids["a"].value.as_ref().unwrap().source,
        all.ids["a"].value.as_ref().unwrap().source
    );
}

/// A PrepareCommit whose append failed, then the timeout's PrepareAbort at the fenced
/// epoch and CompleteAbort (`supersedes_failed_prepare`): one transaction, aborted, its
/// first record the Ongoing one — not a commit left without markers beside it. A
/// PrepareAbort at the same epoch (no fence, TV0/1) is no such abort: two.
#[test]
fn an_abort_after_a_failed_prepare_is_the_same_transaction() {
    let run = |abort_epoch: i16| {
        let states = [
            (0, TxnState::Ongoing, &["x"][..]),
            (0, TxnState::PrepareCommit, &["x"][..]),
            (abort_epoch, TxnState::PrepareAbort, &["x"][..]),
            (abort_epoch, TxnState::CompleteAbort, &[][..]),
        ];
        let mut l = log();
        l.records = states
            .iter()
            .enumerate()
            .map(|(i, &(e, st, parts))| {
                let v = value(1, e, st, parts, i as i64 * 10);
                CoordRecord::new(i as i64, "a".into(), Some(v))
            })
            .collect();
        CoordModel::of(&l, None)
    };
    let m = run(1);
    assert_eq!(m.txns.len(), 1, "{:#?}", m.txns);
    let t = &m.txns[0];
    assert_eq!((t.commit, t.end_epoch), (Some(false), Some(1)));
    assert_eq!((t.first_record_offset, t.prepare_offset), (0, Some(2)));
    assert!(t.complete_ms.is_some());
    let kinds: Vec<_> = m.history.anomalies.iter().map(|a| a.kind.id()).collect();
    assert_eq!(kinds, ["failed_prepare_aborted"]);
    let m = run(0);
    assert_eq!(m.txns.len(), 2, "{:#?}", m.txns);
    let kinds: Vec<_> = m.history.anomalies.iter().map(|a| a.kind.id()).collect();
    assert_eq!(kinds, ["invalid_transition"]);
}
