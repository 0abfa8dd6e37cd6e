//! Verify's checks judged by what the next load does: index files a recovery rebuilds,
//! a follower's `.txnindex` values, directories the load cannot parse.

use super::*;

/// A segment the next load recovers (here: at or above the recovery point after an unclean
/// shutdown) has its indexes rebuilt by `LogSegment.recover`: a stale `.txnindex` there
/// is never read after the restart — info, saying so. Below the recovery point the same
/// damage is served: an error.
#[test]
fn index_damage_in_a_segment_the_load_recovers_is_info() {
    let damaged = || {
        busy(
            PartitionFileOptions::default().damage(Damage::DropTxnIndexEntry {
                segment: 0,
                entry: 0,
            }),
        )
    };
    // Recovered from offset 0.
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("busy", 0, 0),
        damaged(),
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::TxnindexMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(f[0].severity, Severity::Info);
    assert!(
        f[0].broker_behaviour
            .starts_with("rebuilt at the next load"),
        "{}",
        f[0].broker_behaviour
    );
    // Recovery starts at the last segment: segment 0 is served as it is.
    let last = busy(PartitionFileOptions::default());
    let (_d2, m2) = write(last, false);
    let last_base = m2.segments.last().unwrap().0;
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("busy", 0, last_base),
        damaged(),
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::TxnindexMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(f[0].severity, Severity::Error);
    assert!(
        !f[0]
            .broker_behaviour
            .starts_with("rebuilt at the next load")
    );
}

/// A follower appends a fetched chunk at once (`UnifiedLog.appendAsFollower`): a
/// transaction of another producer starting after an ABORT in the same chunk is already
/// ongoing when the abort's `lastStableOffset` is taken, so the follower indexes its first
/// offset where the leader indexed the marker's next offset. Both are right; any other
/// value is wrong.
#[test]
fn a_follower_written_txnindex_entry_is_not_a_mismatch() {
    let with_lso = |lso: i64| {
        let a = Producer::transactional(1, 0);
        let b = Producer::transactional(2, 0);
        let plain = Producer::idempotent(3, 0);
        let mut p = PartitionBuilder::new("flw", 0).leader_epoch(1);
        p.append(Batch::new(a).records(5)); // 0..=4
        p.append(Batch::new(plain).records(3)); // 5..=7
        p.abort(a, 1); // 8
        p.append(Batch::new(plain).records(2)); // 9..=10
        p.append(Batch::new(b).records(2)); // 11..=12
        p.commit(b, 1); // 13
        let (d, m) = write(p, true);
        std::fs::write(
            m.dir.join("00000000000000000000.txnindex"),
            encode_txn_index(&[AbortedTxn {
                producer_id: 1,
                first_offset: 0,
                last_offset: 8,
                last_stable_offset: lso,
            }]),
        )
        .unwrap();
        let v = run(&m.dir);
        drop(d);
        v
    };
    for lso in [9, 11] {
        let v = with_lso(lso);
        assert!(
            of_kind(&v, Kind::TxnindexMismatch).is_empty(),
            "{lso}: {:#?}",
            v.findings
        );
    }
    for lso in [10, 12] {
        let v = with_lso(lso);
        let f = of_kind(&v, Kind::TxnindexMismatch);
        assert_eq!(f.len(), 1, "{lso}: {:#?}", v.findings);
        assert!(
            f[0].message
                .contains("wrong firstOffset or lastStableOffset"),
            "{}",
            f[0].message
        );
    }
}

/// A directory in the log dir Kafka cannot parse as a partition's (`lost+found`,
/// `backup-old`) fails the broker's log loading (`LogManager.loadLogs` →
/// `LocalLog.parseTopicPartitionName` throws KafkaException): one error each. Partition
/// directories in every form Kafka accepts, and `remote-log-index-cache`, give none.
#[test]
fn directories_the_load_cannot_parse_are_foreign_directory_errors() {
    let (d, m) = write(busy(PartitionFileOptions::default()), true);
    let root = m.dir.parent().unwrap().to_path_buf();
    let foreign = || {
        let r = verify(std::slice::from_ref(&root), &VerifyOptions::default());
        let mut f: Vec<(String, klogscan::finding::Severity)> = r
            .findings()
            .filter(|f| f.kind == Kind::ForeignDirectory)
            .map(|f| (f.segment.clone().unwrap_or_default(), f.severity))
            .collect();
        f.sort();
        f
    };
    std::fs::create_dir(root.join("remote-log-index-cache")).unwrap();
    assert!(foreign().is_empty(), "{:?}", foreign());
    std::fs::create_dir(root.join("lost+found")).unwrap();
    std::fs::create_dir(root.join("backup-old")).unwrap();
    assert_eq!(
        foreign(),
        vec![
            ("backup-old".to_string(), Severity::Error),
            ("lost+found".to_string(), Severity::Error)
        ]
    );
    drop(d);
}
