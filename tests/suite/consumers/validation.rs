//! What a consumer does with its commit, case by case: the stall behind a transaction that
//! begins below the log start, the client error of each validation answer, the lineage cut
//! as the broker's load cuts it, KIP-320's detected truncation, and a commit the coordinator
//! cannot serve.

use super::*;

/// `orders-0` (`p`) with its log start checkpointed at 5 (and `epochs` as its
/// `leader-epoch-checkpoint`), `log` as group "g"'s offsets partition: the report at `now`.
fn scan_log_start_five(
    p: PartitionBuilder,
    log: &GroupLog,
    epochs: Option<&str>,
    now: Option<i64>,
) -> klogscan::results::ScanReport {
    let dir = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .clean_shutdown(true)
        .log_start_offset("orders", 0, 5)
        .partition(p)
        .write(dir.path())
        .unwrap();
    log.write(dir.path(), offsets_partition("g")).unwrap();
    if let Some(e) = epochs {
        std::fs::write(dir.path().join("orders-0/leader-epoch-checkpoint"), e).unwrap();
    }
    let opts = klogscan::results::ScanOptions::default().with_now_ms(now);
    let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
    klogscan::pipeline::analyse(&inv, &opts)
}

/// A hanging transaction that begins below the log start (retention and DeleteRecords
/// follow the high watermark, not the last stable offset): the last stable offset is held
/// at the log start (`UnifiedLog.maybeIncrementFirstUnstableOffset`), and a group committed
/// there is stalled — at the log start, while the abort command names the transaction's own
/// first offset. A group past the log start with no hanging transaction is silent (the twin).
#[test]
fn a_group_stalls_at_the_log_start_behind_a_transaction_below_it() {
    for hanging in [true, false] {
        let mut p = PartitionBuilder::new("orders", 0);
        if hanging {
            p.append(Batch::new(Producer::transactional(7, 0)).records(2));
        } else {
            p.append(Batch::new(Producer::PLAIN).records(2));
        }
        p.append(Batch::new(Producer::PLAIN).records(8));
        let mut log = GroupLog::new();
        log.batch(vec![commit("g", "orders", 0, 5, None)]);
        let report = scan_log_start_five(p, &log, None, Some(HOURS_LATER));
        let blocked = of(&report.findings, Kind::GroupBlockedByHangingTransaction);
        if !hanging {
            assert!(blocked.is_empty(), "{blocked:#?}");
            continue;
        }
        assert_eq!(blocked.len(), 1, "{:#?}", report.findings);
        let b = blocked[0];
        assert_eq!(b.severity, Severity::Error);
        assert_eq!(b.evidence["stall_offset"], 5);
        assert_eq!(b.evidence["transaction"]["first_offset"], 0);
        assert!(
            b.evidence["fix_command"]
                .as_str()
                .unwrap()
                .contains("--start-offset 0")
        );
    }
}

/// A commit beyond the log end whose leader epoch the copy does not know gets an undefined
/// end from its validation: `client_error` says the position is reset by the policy (or
/// `LogTruncationException` without a divergent offset), as the message does — not a move
/// back to an epoch's end, which a known epoch gets (the twin).
#[test]
fn the_client_error_follows_the_validation_answer() {
    for (epoch, says) in [
        (2, "without a divergent offset"),
        (0, "moves back to the epoch's end"),
    ] {
        let mut p = PartitionBuilder::new("orders", 0);
        p.append(Batch::new(Producer::PLAIN).records(10));
        let mut log = GroupLog::new();
        log.batch(vec![commit("g", "orders", 0, 12, Some(epoch))]);
        // The high-watermark checkpoint at the commit: this copy held what the group read.
        let c = Cluster::new(vec![p], &log, offsets_partition("g"), &[("orders", 0, 12)]).epochs(
            "orders",
            0,
            &[(0, 0)],
        );
        let (f, _) = c.run(None);
        let beyond = of(&f, Kind::CommittedOffsetBeyondLogEnd);
        assert_eq!(beyond.len(), 1, "{f:#?}");
        let e = beyond[0].client_error.as_deref().unwrap_or("");
        assert!(e.contains(says), "epoch {epoch}: {e}");
    }
}

/// The leader-epoch checkpoint as the broker's load leaves it: an entry starting at or past
/// the log end (a stale epoch whose records a truncated tail took) is dropped
/// (`LogLoader.load` → `truncateFromEndAsyncFlush`), so a commit beyond the log end is
/// validated against the epochs the log still has — epoch 0 is the latest and ends at the
/// log end 8, not at the stale entry's 10 (above both the commit and the log end). Without
/// the stale entry the answer is the same (the twin).
#[test]
fn the_lineage_is_cut_at_the_log_end_as_the_load_cuts_it() {
    for stale in [true, false] {
        let mut p = PartitionBuilder::new("orders", 0);
        p.append(Batch::new(Producer::PLAIN).records(8));
        let mut log = GroupLog::new();
        log.batch(vec![commit("g", "orders", 0, 9, Some(0))]);
        let entries: &[(i32, i64)] = if stale { &[(0, 0), (1, 10)] } else { &[(0, 0)] };
        let c =
            Cluster::new(vec![p], &log, offsets_partition("g"), &[]).epochs("orders", 0, entries);
        let (f, _) = c.run(None);
        let beyond = of(&f, Kind::CommittedOffsetBeyondLogEnd);
        assert_eq!(beyond.len(), 1, "{f:#?}");
        let end = &beyond[0].evidence["validation"]["epoch_end"];
        assert_eq!(
            (end["epoch"].as_i64(), end["end_offset"].as_i64()),
            (Some(0), Some(8)),
            "stale {stale}: {end}"
        );
    }
}

/// `SubscriptionStateTest.testTruncationDetectionWithResetPolicy`'s shape on disk: orders-0
/// holds offsets 0–4 at leader epoch 0 and 5–9 at epoch 1; a group committed offset 8 with
/// epoch 0 (it read epoch 0's records up to 7, which the log no longer has past 5). Its
/// validation gets epoch 0's end, 5, below 8: truncation detected. Commits at epoch 0 up to
/// its end, or at epoch 1, pass validation (the twins).
#[test]
fn a_commit_past_its_epochs_end_is_a_detected_truncation() {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.set_leader_epoch(1);
    p.append(Batch::new(Producer::PLAIN).records(5));
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("truncated", "orders", 0, 8, Some(0)),
        commit("at-end", "orders", 0, 5, Some(0)),
        commit("current", "orders", 0, 8, Some(1)),
    ]);
    let c = Cluster::new(vec![p], &log, offsets_partition("truncated"), &[]).epochs(
        "orders",
        0,
        &[(0, 0), (1, 5)],
    );
    let (f, _) = c.run(None);
    let past = of(&f, Kind::CommittedOffsetPastEpochEnd);
    assert_eq!(past.len(), 1, "{f:#?}");
    assert_eq!(past[0].group.as_deref(), Some("truncated"));
    assert_eq!(past[0].evidence["epoch_end"]["end_offset"], 5);
    assert_eq!(past[0].evidence["truncated_read"], 3);
    assert!(
        past[0]
            .client_error
            .as_deref()
            .is_some_and(|e| e.contains("LogTruncationException")),
        "{:?}",
        past[0].client_error
    );
}

/// A consumer verdict rests on the group being served its commit: when the coordinator's
/// load of the group's offsets partition fails (`group_load_failure`), it is not, so the
/// verdict says so and stays a warning. The same commit with a loadable partition is an
/// error (the twin).
#[test]
fn a_commit_the_coordinator_cannot_serve_is_qualified() {
    for broken in [false, true] {
        let mut p = PartitionBuilder::new("orders", 0);
        p.append(Batch::new(Producer::PLAIN).records(10));
        let mut log = GroupLog::new();
        log.batch(vec![commit("g", "orders", 0, 12, None)]);
        if broken {
            log.raw(vec![(
                vec![0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 0],
                Some(vec![0, 3, 0]),
            )]);
        }
        let c = Cluster::new(vec![p], &log, offsets_partition("g"), &[("orders", 0, 12)]);
        let (f, _) = c.run(None);
        let beyond = of(&f, Kind::CommittedOffsetBeyondLogEnd);
        assert_eq!(beyond.len(), 1, "{f:#?}");
        let b = beyond[0];
        if broken {
            assert_eq!(b.severity, Severity::Warning);
            let id = b.evidence["coordinator_load_fails"].as_str().unwrap_or("");
            assert!(!id.is_empty() && b.message.contains(id), "{b:#?}");
            assert!(
                b.client_error
                    .as_deref()
                    .is_some_and(|e| e.contains("NOT_COORDINATOR")),
                "{b:#?}"
            );
        } else {
            assert_eq!(b.severity, Severity::Error);
            assert!(b.evidence.get("coordinator_load_fails").is_none());
        }
    }
}

/// A commit below the log start whose leader epoch is above every epoch of the lineage is
/// validated before any fetch, and the validation gets an undefined end: its client error is
/// the reset by policy (or LogTruncationException), not OffsetOutOfRangeException, which a
/// commit without an epoch gets (the twin).
#[test]
fn a_commit_below_the_log_start_with_an_unknown_newer_epoch() {
    for (epoch, says) in [
        (Some(3), "without a divergent offset"),
        (None, "OffsetOutOfRangeException"),
    ] {
        let mut p = PartitionBuilder::new("orders", 0);
        p.append(Batch::new(Producer::PLAIN).records(10));
        let mut log = GroupLog::new();
        log.batch(vec![commit("g", "orders", 0, 2, epoch)]);
        let report = scan_log_start_five(p, &log, Some("0\n1\n0 5\n"), None);
        let below = of(&report.findings, Kind::CommittedOffsetBelowLogStart);
        assert_eq!(below.len(), 1, "{:#?}", report.findings);
        let e = below[0].client_error.as_deref().unwrap_or("");
        assert!(e.contains(says), "{epoch:?}: {e}");
    }
}

/// A load stopped by a tombstone out of the coordinator's order (a consumer group's metadata
/// tombstoned while its member is live) qualifies the group's verdicts as a record that does
/// not decode does: the stop is read from the offsets partition's typed group anomalies.
#[test]
fn a_load_stopped_by_a_tombstone_qualifies_the_verdicts_too() {
    use klogscan::testkit::group_scenarios::consumer_group;
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::PLAIN).records(10));
    let mut log = GroupLog::new();
    consumer_group(&mut log, "g");
    log.batch(vec![commit("g", "orders", 0, 12, None)]);
    log.batch(vec![(3, serde_json::json!({"groupId": "g"}), None)]);
    let c = Cluster::new(vec![p], &log, offsets_partition("g"), &[("orders", 0, 12)]);
    let (f, _) = c.run(None);
    let stop = of(&f, Kind::GroupTombstonesIncomplete);
    assert_eq!(stop.len(), 1, "{f:#?}");
    let beyond = of(&f, Kind::CommittedOffsetBeyondLogEnd);
    assert_eq!(beyond.len(), 1, "{f:#?}");
    assert_eq!(
        beyond[0].evidence["coordinator_load_fails"],
        stop[0].id.as_str()
    );
    assert_eq!(beyond[0].severity, Severity::Warning);
}
