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

/// The `unparseable_file_name` findings of a verification, by file name.
fn unparseable(v: &PartitionVerification) -> Vec<(String, Severity)> {
    of_kind(v, Kind::UnparseableFileName)
        .into_iter()
        .map(|f| (f.segment.clone().unwrap_or_default(), f.severity))
        .collect()
}

/// Files of a partition directory whose names the broker's load parses as offsets and
/// cannot (`LogFileUtils.offsetFromFileName`: `Long.parseLong` of the text before the
/// first '.' throws NumberFormatException): one error each, and the load fails at the
/// first one the broker meets — a `.snapshot` name while the producer-state manager is
/// built (before `LogLoader.load`), else a `.cleaned`/`.swap` one in the first pass, else
/// the first segment file's name in name order (`loadSegmentFiles`). A `.cleaned` name of
/// that kind is no leftover the load deletes: the load never gets that far.
#[test]
fn file_names_the_load_cannot_parse_fail_it() {
    let (d, m) = write(busy(PartitionFileOptions::default()), true);
    let before = run(&m.dir);
    assert!(before.prediction.load_failure.is_none());
    assert!(unparseable(&before).is_empty());
    for name in [
        "notes.log",
        "backup.index",
        "abc.snapshot",
        "00000000000000000000-copy.log",
    ] {
        std::fs::write(m.dir.join(name), b"x").unwrap();
    }
    let v = run(&m.dir);
    let error = |n: &str| (n.to_string(), Severity::Error);
    assert_eq!(
        unparseable(&v),
        vec![
            error("00000000000000000000-copy.log"),
            error("abc.snapshot"),
            error("backup.index"),
            error("notes.log"),
        ]
    );
    let f = &of_kind(&v, Kind::UnparseableFileName)[0];
    assert!(f.broker_behaviour.contains("LogFileUtils.offsetFromFile"));
    assert!(f.broker_behaviour.contains("NumberFormatException"));
    assert!(
        f.remediation
            .as_deref()
            .unwrap()
            .contains("move 00000000000000000000-copy.log out"),
        "{:?}",
        f.remediation
    );
    let failure = |v: &PartitionVerification| {
        let f = v.prediction.load_failure.clone().expect("the load fails");
        assert_eq!(
            (f.kind.as_str(), f.exception.as_str(), f.offset),
            ("unparseable_file_name", "NumberFormatException", None)
        );
        f.message
    };
    // The snapshot's name first: the producer-state manager is built before the load.
    let msg = failure(&v);
    assert!(msg.contains("meets abc.snapshot"), "{msg}");
    assert!(msg.contains("ProducerStateManager"), "{msg}");
    // Without it, the first segment file's name in name order ('0' sorts before 'b').
    std::fs::remove_file(m.dir.join("abc.snapshot")).unwrap();
    let msg = failure(&run(&m.dir));
    assert!(msg.contains("meets 00000000000000000000-copy.log"), "{msg}");
    assert!(msg.contains("LogLoader.loadSegmentFiles"), "{msg}");
    std::fs::remove_file(m.dir.join("00000000000000000000-copy.log")).unwrap();
    assert!(failure(&run(&m.dir)).contains("meets backup.index"));
    // A `.cleaned` name fails the first pass, before any segment file is opened.
    std::fs::write(m.dir.join("junk.cleaned"), b"x").unwrap();
    let v = run(&m.dir);
    let msg = failure(&v);
    assert!(msg.contains("meets junk.cleaned"), "{msg}");
    assert!(msg.contains("removeTempFilesAndCollectSwapFiles"), "{msg}");
    assert!(
        !v.prediction
            .leftovers
            .iter()
            .any(|l| l.file == "junk.cleaned"),
        "{:?}",
        v.prediction.leftovers
    );
    assert!(
        !of_kind(&v, Kind::LeftoverFile)
            .iter()
            .any(|f| f.segment.as_deref() == Some("junk.cleaned"))
    );
    // Summary: one partition fails to load.
    let root = m.dir.parent().unwrap().to_path_buf();
    let r = verify(std::slice::from_ref(&root), &VerifyOptions::default());
    assert_eq!(r.summary.load_failures, 1);
    drop(d);
}

/// Names the load never parses as offsets, or parses: nothing new, the load ok.
/// `.deleted` files are deleted unread by the first pass (a `.checkpoint.deleted` one left
/// alone), other suffixes are not looked at; `00000000000000000000.copy.log` parses (the
/// text before the first '.'); a directory is not a file the load lists.
#[test]
fn names_the_load_ignores_or_parses_are_not_findings() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    assert!(m.dir.join("leader-epoch-checkpoint").exists());
    for name in [
        "foo.txt",
        "x.log.bak",
        "notes.log.deleted",
        "abc.snapshot.deleted",
        "junk.tmp",
        "README",
        "00000000000000000000.copy.log",
    ] {
        std::fs::write(m.dir.join(name), b"x").unwrap();
    }
    std::fs::write(
        m.dir.join("partition.metadata"),
        b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n",
    )
    .unwrap();
    std::fs::create_dir(m.dir.join("old.log")).unwrap();
    std::fs::create_dir(m.dir.join("backup.snapshot")).unwrap();
    let v = run(&m.dir);
    assert!(unparseable(&v).is_empty(), "{:?}", unparseable(&v));
    assert!(
        v.prediction.load_failure.is_none(),
        "{:?}",
        v.prediction.load_failure
    );
}

/// A hostile file name (terminal controls, markup), and a foreign directory of one: the
/// findings and the JSON carry them exactly (no second escaping of their own), the text
/// report escapes their controls by the one rule (`escape::text`).
#[cfg(unix)]
#[test]
fn a_hostile_unparseable_name_is_escaped_in_text_and_exact_in_json() {
    let (d, m) = write(busy(PartitionFileOptions::default()), true);
    let name = "evil\x1b]0;TITLE\x07<b>&\r\nFORGED.log";
    std::fs::write(m.dir.join(name), b"x").unwrap();
    let root = m.dir.parent().unwrap().to_path_buf();
    let dir = "old\x1b[2J\"<i>\nFORGED";
    std::fs::create_dir(root.join(dir)).unwrap();
    let r = verify(std::slice::from_ref(&root), &VerifyOptions::default());
    let found: Vec<_> = r
        .findings()
        .filter(|f| f.kind == Kind::UnparseableFileName)
        .collect();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].segment.as_deref(), Some(name));
    let foreign: Vec<_> = r
        .findings()
        .filter(|f| f.kind == Kind::ForeignDirectory)
        .collect();
    assert_eq!(foreign.len(), 1);
    assert_eq!(foreign[0].segment.as_deref(), Some(dir));
    let raw = format!("directory {dir} is not");
    assert!(foreign[0].message.contains(&raw), "{}", foreign[0].message);
    let json = klogscan::verify::render::to_json(&r);
    let text = serde_json::to_string(&json).unwrap();
    assert!(
        text.contains(r#"evil\u001b]0;TITLE\u0007<b>&\r\nFORGED.log"#),
        "{text}"
    );
    let mut out = Vec::new();
    klogscan::report::verify_text::write_verify(
        &r,
        &klogscan::report::style::Style::default(),
        &mut out,
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        !out.chars()
            .any(|c| c != '\n' && klogscan::escape::is_control(c)),
        "{out:?}"
    );
    assert!(!out.lines().any(|l| l.starts_with("FORGED")), "{out}");
    assert!(
        out.contains(r"evil\x1b]0;TITLE\x07<b>&\r\nFORGED.log"),
        "{out}"
    );
    assert!(out.contains("LOAD FAILS"), "{out}");
    assert!(out.contains(r#"old\x1b[2J"<i>\nFORGED"#), "{out}");
    drop(d);
}

/// Two batches in segment 0 (offsets 0..=2) with `tail` appended, then segment 3; no
/// producer snapshot (the rebuilds replay from the log start).
fn two_segments(tail: FaultKind) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("rl", 0);
    p.append(Batch::new(Producer::idempotent(3, 0)).records(2));
    p.append(Batch::new(Producer::idempotent(3, 0)).records(1));
    p.roll();
    p.append(Batch::new(Producer::idempotent(3, 0)).records(2));
    p.fault(Target::Log(0), tail);
    p
}

/// Writes `p` after an unclean shutdown with recovery point `rp`, without snapshots.
pub(super) fn unclean_without_snapshots(
    p: PartitionBuilder,
    rp: i64,
) -> (tempfile::TempDir, Manifest) {
    let (d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("rl", 0, rp),
        p,
    );
    for e in std::fs::read_dir(&m.dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(path).unwrap();
        }
    }
    (d, m)
}

/// The recovery of segment 3 (recovery point 3, unclean shutdown, no snapshot) first
/// rebuilds the producer state from the log start over segment 0, which no recovery has
/// cut: `loadProducersFromRecords` frames its 40 zero bytes, `FileLogInputStream.nextBatch`
/// throws `CorruptRecordException` (size 0 below 14), and the broker does not start. The
/// same bytes as garbage with a size field below 14 throw the same. Twins: from recovery
/// point 0 segment 0 is recovered first (truncated there, no failure); a snapshot at 3
/// means no replay reads segment 0; a zero tail of 17 bytes ends the read quietly.
#[test]
fn a_rebuild_reading_an_unrecovered_zero_tail_fails_the_load() {
    let (_d, m) = unclean_without_snapshots(two_segments(FaultKind::AppendZeros(40)), 3);
    assert_eq!(m.segments.len(), 2);
    let end0 = std::fs::metadata(m.dir.join("00000000000000000000.log"))
        .unwrap()
        .len()
        - 40;
    let v = run(&m.dir);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(
        (f.exception.as_str(), f.kind.as_str()),
        ("CorruptRecordException", "preallocated_tail"),
        "{f:?}"
    );
    assert!(
        f.message
            .contains("segment 00000000000000000000.log at byte")
            && f.message.contains(&format!("byte {end0}"))
            && f.message
                .contains("to recover segment 00000000000000000003.log"),
        "{f:?}"
    );
    // The tail's finding says what reading it does.
    let tail = of_kind(&v, Kind::PreallocatedTail);
    assert_eq!(tail.len(), 1, "{:#?}", v.findings);
    assert!(
        tail[0]
            .broker_behaviour
            .contains("throws CorruptRecordException"),
        "{}",
        tail[0].broker_behaviour
    );
    // Garbage whose first entry declares size 0 (a zero header, then non-zero bytes).
    let mut g = vec![0u8; 40];
    g[30] = 7;
    let (_d, m) = unclean_without_snapshots(two_segments(FaultKind::AppendGarbage(g)), 3);
    let v = run(&m.dir);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(f.exception, "CorruptRecordException", "{f:?}");
    assert!(f.message.contains(&format!("byte {end0}")), "{f:?}");
    // Recovered first: a truncation, no failure.
    let (_d, m) = unclean_without_snapshots(two_segments(FaultKind::AppendZeros(40)), 0);
    let v = run(&m.dir);
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);
    let t = v.prediction.truncation.as_ref().expect("truncated");
    assert_eq!(
        (t.segment.as_str(), t.position),
        ("00000000000000000000.log", end0)
    );
    // 17 bytes: nextBatch ends the read, no failure.
    let (_d, m) = unclean_without_snapshots(two_segments(FaultKind::AppendZeros(17)), 3);
    let v = run(&m.dir);
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);
}

/// With the snapshots the testkit writes (one at 3), the recovery of segment 3 loads the
/// one at its base and replays nothing; the final rebuild loads the one at the log end: no
/// replay reaches segment 0's zero tail, which stays unrecovered damage, not a failure.
#[test]
fn zeros_no_replay_reaches_do_not_fail_the_load() {
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("rl", 0, 3),
        two_segments(FaultKind::AppendZeros(40)),
    );
    assert!(m.dir.join("00000000000000000003.snapshot").exists());
    let v = run(&m.dir);
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);
    assert!(v.prediction.truncation.is_none(), "{:#?}", v.prediction);
    assert!(
        !v.prediction.unrecovered_corruption.is_empty(),
        "{:#?}",
        v.prediction
    );
}

/// A malformed COMMIT (its value 2 bytes, a marker needs 6) in segment 0, which no recovery
/// cuts, inside the rebuild before segment 3's recovery: `EndTransactionMarker.deserialize`
/// throws `InvalidRecordException` in the replay, uncaught. Twin: recovery point 0, where
/// `LogSegment.recover` of segment 0 keeps it (it counts the batch valid before the update
/// throws) and truncates nothing; its end snapshot is at 2 (the update did not move the map
/// end past the marker), so segment 3's rebuild replays it and throws just the same (this
/// twin used to expect a truncation at the marker and no failure).
#[test]
fn a_malformed_marker_in_a_replayed_unrecovered_segment_fails_the_load() {
    let build = || {
        let txn = Producer::transactional(9, 0);
        let mut p = PartitionBuilder::new("rl", 0);
        p.append(Batch::new(txn).records(2)); // 0..=1
        let bad = p.control_raw(txn, 1, Some(vec![0, 0])); // 2
        p.roll();
        p.append(Batch::new(Producer::idempotent(3, 0)).records(2)); // 3..=4
        (p, bad)
    };
    let (p, bad) = build();
    let (_d, m) = unclean_without_snapshots(p, 3);
    let pos = m.batches[bad].position;
    let v = run(&m.dir);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(
        (f.exception.as_str(), f.offset),
        ("InvalidRecordException", Some(2)),
        "{f:?}"
    );
    assert!(
        f.message
            .contains(&format!("segment 00000000000000000000.log, byte {pos}")),
        "{f:?}"
    );
    let (p, _) = build();
    let (_d, m) = unclean_without_snapshots(p, 0);
    let v = run(&m.dir);
    assert!(v.prediction.truncation.is_none(), "{:#?}", v.prediction);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(
        (f.exception.as_str(), f.offset),
        ("InvalidRecordException", Some(2)),
        "{f:?}"
    );
    assert!(
        f.message
            .contains("to recover segment 00000000000000000003.log"),
        "{f:?}"
    );
}

/// A malformed COMMIT followed by a batch in the one segment recovered: the recovery
/// truncates right after the marker (removing the batch at 3) and snapshots at 2; the final
/// rebuild replays `[2, 3)`, the marker, and throws. Twin: a well-formed COMMIT — nothing
/// truncated, the load succeeds.
#[test]
fn a_malformed_marker_kept_by_its_recovery_fails_the_final_rebuild() {
    let build = |value: Option<Vec<u8>>| {
        let txn = Producer::transactional(9, 0);
        let mut p = PartitionBuilder::new("rl", 0);
        p.append(Batch::new(txn).records(2)); // 0..=1
        let bad = match value {
            Some(v) => p.control_raw(txn, 1, Some(v)), // 2
            None => p.commit(txn, 1),
        };
        p.append(Batch::new(Producer::PLAIN).records(1)); // 3
        (p, bad)
    };
    let (p, bad) = build(Some(vec![0, 0]));
    let (_d, m) = unclean_without_snapshots(p, 0);
    let b = &m.batches[bad];
    let v = run(&m.dir);
    let t = v.prediction.truncation.as_ref().expect("truncated");
    assert_eq!(
        (t.position, t.offset, t.first_removed_offset),
        (b.position + b.size, 3, Some(3))
    );
    let ps = &v.prediction.producer_state;
    assert_eq!((ps.snapshot_offset, ps.replay_from), (Some(2), Some(2)));
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(
        (f.exception.as_str(), f.offset),
        ("InvalidRecordException", Some(2))
    );
    assert!(
        f.message
            .contains("replaying the producer state from offset 2"),
        "{f:?}"
    );
    let (p, _) = build(None);
    let (_d, m) = unclean_without_snapshots(p, 0);
    let v = run(&m.dir);
    assert!(v.prediction.truncation.is_none(), "{:#?}", v.prediction);
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);
}

/// A control batch with a producer id of type 2 (LEADER_CHANGE) or an unknown type 42:
/// `EndTransactionMarker`'s type check throws IllegalArgumentException in the recovery's
/// producer-state update, caught by neither `LogSegment.recover` nor `recoverLog`: the load
/// fails, nothing is truncated, and the scan reports the batch (`invalid_batch`). Twins:
/// the same batch without a producer id (a KRaft control batch: the update skips it), and
/// a recovery point past it with a snapshot at the log end (nothing replays it).
#[test]
fn a_non_marker_control_type_with_a_producer_id_fails_the_load_where_replayed() {
    let build = |ty: i16, producer: Producer| {
        let mut p = PartitionBuilder::new("rl", 0);
        p.append(Batch::new(Producer::transactional(9, 0)).records(2)); // 0..=1
        let at = p.control_raw(producer, ty, Some(vec![0, 0, 0, 0, 0, 0])); // 2
        p.append(Batch::new(Producer::PLAIN).records(1)); // 3
        (p, at)
    };
    for ty in [2, 42] {
        let (p, at) = build(ty, Producer::transactional(9, 0));
        let (_d, m) = unclean_without_snapshots(p, 0);
        let v = run(&m.dir);
        assert!(v.prediction.truncation.is_none(), "{:#?}", v.prediction);
        let f = v.prediction.load_failure.as_ref().expect("the load fails");
        assert_eq!(
            (f.exception.as_str(), f.offset, f.kind.as_str()),
            ("IllegalArgumentException", Some(2), "invalid_batch"),
            "{f:?}"
        );
        assert!(f.message.contains("recovering segment"), "{f:?}");
        let found = v
            .findings
            .iter()
            .find(|f| f.kind == Kind::InvalidBatch && f.position == Some(m.batches[at].position))
            .expect("the batch is reported");
        assert!(
            found.message.contains("with producer id 9"),
            "{}",
            found.message
        );
    }
    let (p, _) = build(2, Producer::PLAIN);
    let (_d, m) = unclean_without_snapshots(p, 0);
    let v = run(&m.dir);
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);
    assert!(
        !v.findings.iter().any(|f| f.kind == Kind::InvalidBatch),
        "{:#?}",
        v.findings
    );
}

/// `LogSegment.recover` updates the producer state, and its map end, only for batches of
/// magic 2: a recovered segment of legacy entries leaves no end snapshot (its map end stays
/// at the base, 0), so the final rebuild replays from 0. Twin: the same segment ending in a
/// v2 batch — its end snapshot at 4 is loaded.
#[test]
fn a_legacy_tail_leaves_the_recovery_snapshot_at_the_last_v2_batch() {
    let build = |v2_last: bool| {
        let mut p = PartitionBuilder::new("rl", 0);
        for i in 0..3 {
            p.legacy(klogscan::testkit::Legacy::v1().values([i.to_string()]));
        }
        if v2_last {
            p.append(Batch::new(Producer::idempotent(3, 0)).records(1)); // 3
        }
        p
    };
    let (_d, m) = unclean_without_snapshots(build(false), 0);
    let v = run(&m.dir);
    let ps = &v.prediction.producer_state;
    assert_eq!(
        (ps.snapshot_offset, ps.replay_from),
        (None, Some(0)),
        "{ps:#?}"
    );
    let (_d, m) = unclean_without_snapshots(build(true), 0);
    let v = run(&m.dir);
    let ps = &v.prediction.producer_state;
    assert_eq!(
        (ps.snapshot_offset, ps.replay_from),
        (Some(4), Some(4)),
        "{ps:#?}"
    );
}

/// After a clean shutdown nothing is recovered, but the final rebuild replays from the
/// newest snapshot left (here at 3, the others removed) to the log end, over segment 3 and
/// its zero tail: `CorruptRecordException`, the broker does not start. Twin: the snapshot
/// at the log end left too — no replay.
#[test]
fn the_final_rebuild_reading_a_zero_tail_after_a_clean_shutdown_fails_the_load() {
    let build = || {
        let mut p = PartitionBuilder::new("rl", 0);
        p.append(Batch::new(Producer::idempotent(3, 0)).records(3)); // 0..=2
        p.roll();
        p.append(Batch::new(Producer::idempotent(3, 0)).records(3)); // 3..=5
        p.roll();
        p.append(Batch::new(Producer::idempotent(3, 0)).records(2)); // 6..=7
        p.fault(Target::Log(1), FaultKind::AppendZeros(40));
        p
    };
    let keep_only = |m: &Manifest, keep: &[&str]| {
        for e in std::fs::read_dir(&m.dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".snapshot") && !keep.contains(&name.as_str()) {
                std::fs::remove_file(path).unwrap();
            }
        }
    };
    let (_d, m) = write(build(), true);
    keep_only(&m, &["00000000000000000003.snapshot"]);
    let v = run(&m.dir);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(f.exception, "CorruptRecordException", "{f:?}");
    assert!(
        f.message
            .contains("replaying the producer state from offset 3")
            && f.message
                .contains("segment 00000000000000000003.log at byte"),
        "{f:?}"
    );
    let (_d, m) = write(build(), true);
    keep_only(
        &m,
        &[
            "00000000000000000003.snapshot",
            "00000000000000000008.snapshot",
        ],
    );
    let v = run(&m.dir);
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);
}

/// `UnifiedLog.rebuildProducerState`'s `isEmptyBeforeTruncation` is computed on
/// `LogLoader`'s own `ProducerStateManager`, still empty at the final rebuild (map end 0),
/// so after load-time recoveries the final replay runs and its snapshots are known: clean
/// shutdown, segment 3's `.index` missing — 3, 5 and 7 (they used to be left underived).
/// Twin: every index present, no recovery — the same files.
#[test]
fn snapshots_after_load_are_derived_after_an_index_recovery() {
    for missing in [true, false] {
        let idem = Producer::idempotent(3, 0);
        let mut opts = PartitionFileOptions::default();
        if missing {
            opts = opts.damage(Damage::MissingIndex { segment: 1 });
        }
        let mut p = PartitionBuilder::new("rl", 0).broker_files(opts);
        p.append(Batch::new(idem).records(3)); // 0..=2
        p.roll();
        p.append(Batch::new(idem).records(2).sequence(3)); // 3..=4
        p.roll();
        p.append(Batch::new(idem).records(2).sequence(5)); // 5..=6
        let (_d, m) = write(p, true);
        let v = run(&m.dir);
        assert_eq!(v.prediction.recovered_segments.len(), usize::from(missing));
        assert_eq!(
            v.prediction.producer_state.snapshots_after_load.as_deref(),
            Some(&[3, 5, 7][..]),
            "{missing}"
        );
    }
}
