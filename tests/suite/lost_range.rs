//! `truncation_below_high_watermark`: the recovery model truncates below the checkpointed
//! high watermark (`UnifiedLog.updateHighWatermark` then clamps it): acknowledged data lost
//! on that replica, an error when no input copy holds the range, a warning naming the copy
//! that does; and the triage's decision and commands for every damage incident.

use std::path::Path;

use klogscan::cluster::lost::LostRange;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::report::triage::{Incident, incidents};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::files::LogDirBuilder;
use klogscan::testkit::scenario::{Batch, FaultKind, PartitionBuilder, Producer, Target};

/// `orders-0`: 10 batches of 2 records (offsets 0..=19), segments at 0 and 8; with
/// `damage`, a byte of the first batch of the second segment (offset 8) flipped inside
/// its records: recovery truncates the log to offset 8.
fn orders(damage: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(3);
    for i in 0..10 {
        p.append(Batch::new(Producer::PLAIN).values([format!("v-{i}a"), format!("v-{i}b")]));
        if i == 3 {
            p.roll();
        }
    }
    if damage {
        p.fault(
            Target::LastLog,
            FaultKind::FlipByte {
                position: 70,
                mask: 0x20,
            },
        );
    }
    p
}

/// Broker 1 holds the damaged copy (unclean shutdown, high watermark `hw`); with `replica`,
/// broker 2 of the same cluster holds an intact one.
fn write(root: &Path, hw: Option<i64>, replica: bool) {
    let mut b1 = LogDirBuilder::new(1).cluster_id("c1").clean_shutdown(false);
    if let Some(hw) = hw {
        b1 = b1.high_watermark("orders", 0, hw);
    }
    b1.partition(orders(true))
        .write(&root.join("broker1"))
        .unwrap();
    if replica {
        LogDirBuilder::new(2)
            .cluster_id("c1")
            .partition(orders(false))
            .write(&root.join("broker2"))
            .unwrap();
    }
}

fn scan(root: &Path) -> ScanReport {
    klogscan::pipeline::scan(&[root.to_path_buf()], &ScanOptions::default())
}

fn lost(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::TruncationBelowHighWatermark)
        .collect()
}

fn damage_incident(r: &ScanReport) -> Incident {
    incidents(&r.findings)
        .into_iter()
        .find(|i| {
            i.members
                .iter()
                .any(|&m| r.findings[m].kind == Kind::CrcMismatch)
        })
        .expect("the damage is an incident")
}

#[test]
fn only_copy_below_the_high_watermark_is_an_error_and_the_decision_saves_first() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), Some(16), false);
    let r = scan(d.path());
    let l = lost(&r);
    assert_eq!(l.len(), 1, "{:#?}", r.findings);
    let f = l[0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.offset, Some(8), "the first offset lost");
    let e = LostRange::of(f).unwrap();
    assert_eq!(
        (
            e.high_watermark,
            e.first_lost_offset,
            e.offsets_lost_at_least
        ),
        (16, 8, 8)
    );
    // Six batches removed (the damaged one's record count is not trusted): 10 records.
    assert_eq!((e.batches_removed, e.records_removed), (6, 10));
    assert_eq!(e.segments.len(), 1);
    assert!(e.intact_copy.is_none() && e.copies.is_empty());
    assert!(
        f.message.contains("at least 8 acknowledged offsets"),
        "{}",
        f.message
    );
    // Caused by the CRC mismatch at the truncation point: one incident.
    assert_eq!(f.caused_by.len(), 1, "{:?}", f.caused_by);
    assert!(
        f.caused_by[0].starts_with("b1:crc_mismatch:orders-0@8"),
        "{:?}",
        f.caused_by
    );
    let inc = damage_incident(&r);
    let decision = inc.decision.as_deref().unwrap();
    assert!(
        decision.contains("only copy of offsets 8..15"),
        "{decision}"
    );
    let cmds = inc.commands.join("\n");
    assert!(cmds.contains("cp -a "), "{cmds}");
    assert!(
        cmds.contains("klogscan dump --deep-iteration --print-data-log "),
        "{cmds}"
    );
    assert!(cmds.contains("kafka-dump-log.sh --files "), "{cmds}");
    assert!(cmds.contains("klogscan verify "), "{cmds}");
    assert!(
        !cmds.contains("kafka-server-start.sh"),
        "no restart before saving: {cmds}"
    );
}

#[test]
fn an_intact_replica_makes_it_a_warning_naming_the_copy_and_the_decision_re_fetches() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), Some(16), true);
    let r = scan(d.path());
    let l = lost(&r);
    assert_eq!(l.len(), 1, "{:#?}", r.findings);
    let f = l[0];
    assert_eq!(f.severity, Severity::Warning);
    let e = LostRange::of(f).unwrap();
    let c = e.intact().expect("broker 2 holds the range");
    assert_eq!(c.broker_id, Some(2));
    assert!(c.holds_lost_range && c.at_latest_epoch);
    assert_eq!(e.latest_leader_epoch, Some(3));
    assert!(f.message.contains("broker 2's copy"), "{}", f.message);
    assert!(
        f.message.contains("holds offsets 8..15 intact"),
        "{}",
        f.message
    );
    let inc = damage_incident(&r);
    let decision = inc.decision.as_deref().unwrap();
    assert!(
        decision.contains("truncate and re-fetch: broker 2 holds offsets 8..15"),
        "{decision}"
    );
    let cmds = inc.commands.join("\n");
    for want in [
        "--describe --topic orders",
        "cp -a ",
        "kafka-server-stop.sh",
        "kafka-server-start.sh",
        "--under-replicated-partitions",
    ] {
        assert!(cmds.contains(want), "{want}: {cmds}");
    }
}

#[test]
fn truncation_above_the_high_watermark_loses_nothing_acknowledged() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), Some(6), false);
    let r = scan(d.path());
    assert!(lost(&r).is_empty(), "{:#?}", lost(&r));
    // The damage still gets a decision and commands.
    let inc = damage_incident(&r);
    let decision = inc.decision.as_deref().unwrap();
    assert!(
        decision.contains("at or above the checkpointed high watermark 6"),
        "{decision}"
    );
    assert!(
        inc.commands
            .iter()
            .any(|c| c.starts_with("kafka-server-start.sh"))
    );
}

#[test]
fn without_a_high_watermark_checkpoint_there_is_no_claim_and_the_decision_saves_first() {
    let d = tempfile::tempdir().unwrap();
    // A bare partition directory: no log dir files, no checkpoint.
    orders(true).write(d.path()).unwrap();
    let r = scan(d.path());
    assert!(lost(&r).is_empty());
    let inc = damage_incident(&r);
    let decision = inc.decision.as_deref().unwrap();
    assert!(
        decision.starts_with("save the damaged range first"),
        "{decision}"
    );
    assert!(!inc.commands.is_empty());
}

#[test]
fn damage_recovery_never_reads_gets_a_replacement_decision() {
    let d = tempfile::tempdir().unwrap();
    // A clean shutdown: LogSegment.recover does not run, the broker serves the bytes.
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .high_watermark("orders", 0, 16)
        .partition(orders(true))
        .write(&d.path().join("broker1"))
        .unwrap();
    let r = scan(d.path());
    assert!(lost(&r).is_empty());
    let inc = damage_incident(&r);
    let decision = inc.decision.as_deref().unwrap();
    assert!(decision.starts_with("replace this replica"), "{decision}");
    assert!(
        inc.commands.iter().any(|c| c.starts_with("mv ")),
        "{:?}",
        inc.commands
    );
}

#[test]
fn a_damaged_replica_is_not_an_intact_copy() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), Some(16), false);
    // Broker 2 holds the same damage, recovered the same way.
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .clean_shutdown(false)
        .high_watermark("orders", 0, 16)
        .partition(orders(true))
        .write(&d.path().join("broker2"))
        .unwrap();
    let r = scan(d.path());
    let l = lost(&r);
    assert_eq!(l.len(), 2);
    for f in l {
        assert_eq!(f.severity, Severity::Error);
        let e = LostRange::of(f).unwrap();
        assert_eq!(e.copies.len(), 1);
        assert!(!e.copies[0].holds_lost_range);
    }
}

/// A copy covering the lost offsets still does not hold them when (1) its batches differ
/// from this copy's below the high watermark (an unclean election rewrote them: following
/// it, broker 1 truncates to the fork and fetches other records), (2) a batch of its own
/// there fails its CRC (a follower stops at it), (3) it is a `-future` log (it follows the
/// live one and never leads). Each stays an error, the copy listed with why; the intact
/// copy of the same shape makes it a warning (the twin, in the tests above).
#[test]
fn a_diverged_damaged_or_future_copy_holds_nothing() {
    // (1) broker 2 rewrote offsets 6.. at epoch 4.
    let mut rewritten = PartitionBuilder::new("orders", 0).leader_epoch(3);
    for i in 0..10 {
        if i == 3 {
            rewritten.set_leader_epoch(4);
        }
        rewritten
            .append(Batch::new(Producer::PLAIN).values([format!("w-{i}a"), format!("w-{i}b")]));
    }
    let mut damaged_elsewhere = orders(false);
    damaged_elsewhere.fault(
        Target::LastLog,
        FaultKind::FlipByte {
            position: 200,
            mask: 0x20,
        },
    );
    for (name, other, why) in [
        ("diverged", rewritten, "diverges_at:"),
        ("damaged", damaged_elsewhere, "damaged_at:"),
    ] {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), Some(20), false);
        LogDirBuilder::new(2)
            .cluster_id("c1")
            .partition(other)
            .write(&d.path().join("broker2"))
            .unwrap();
        let r = scan(d.path());
        let l = lost(&r);
        assert_eq!(l.len(), 1, "{name}: {:#?}", r.findings);
        assert_eq!(l[0].severity, Severity::Error, "{name}");
        let e = LostRange::of(l[0]).unwrap();
        assert_eq!(e.intact_copy, None, "{name}");
        let c = &e.copies[0];
        assert!(!c.holds_lost_range, "{name}: {c:?}");
        assert!(
            c.not_holding.as_deref().is_some_and(|w| w.starts_with(why)),
            "{name}: {c:?}"
        );
    }
    // (3) an intact -future copy on broker 1's other log dir.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), Some(20), false);
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(orders(false))
        .write(&d.path().join("broker1-dir2"))
        .unwrap();
    std::fs::rename(
        d.path().join("broker1-dir2/orders-0"),
        d.path()
            .join("broker1-dir2/orders-0.0123456789abcdef0123456789abcdef-future"),
    )
    .unwrap();
    let r = scan(d.path());
    let l = lost(&r);
    assert_eq!(l.len(), 1, "{:#?}", r.findings);
    assert_eq!(l[0].severity, Severity::Error);
    let e = LostRange::of(l[0]).unwrap();
    assert_eq!(e.intact_copy, None);
    assert_eq!(e.copies[0].not_holding.as_deref(), Some("not_live"));
}

/// Two live captures of one broker's replica (before and after an incident) are not two
/// replicas: no `replica_divergence` between them, and the earlier capture is no intact
/// copy (`LogManager.loadLogs` holds one live log of a partition per broker). The same
/// copy on another broker is (the twin).
#[test]
fn two_captures_of_one_broker_are_not_replicas() {
    for broker in [1, 2] {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), Some(20), false);
        LogDirBuilder::new(broker)
            .cluster_id("c1")
            .partition(orders(false))
            .write(&d.path().join("before"))
            .unwrap();
        let r = scan(d.path());
        let l = lost(&r);
        assert_eq!(l.len(), 1, "{:#?}", r.findings);
        let e = LostRange::of(l[0]).unwrap();
        assert_eq!(
            e.copies.len(),
            usize::from(broker == 2),
            "broker {broker}: {e:?}"
        );
        assert_eq!(
            l[0].severity,
            if broker == 2 {
                Severity::Warning
            } else {
                Severity::Error
            }
        );
    }
}

/// The message names a copy that covers the range without holding it, and why.
#[test]
fn the_message_says_why_a_covering_copy_holds_nothing() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), Some(20), false);
    let mut rewritten = PartitionBuilder::new("orders", 0).leader_epoch(4);
    rewritten.append(Batch::new(Producer::PLAIN).records(20));
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(rewritten)
        .write(&d.path().join("broker2"))
        .unwrap();
    let r = scan(d.path());
    let l = lost(&r);
    assert_eq!(l.len(), 1, "{:#?}", r.findings);
    assert!(
        l[0].message
            .contains("covers its offsets, but its batches differ"),
        "{}",
        l[0].message
    );
}

/// The damaged copy's own damage in a batch header (a flipped bit of the stored CRC changes
/// its key) is no divergence from the intact copy: that copy still holds the range (a
/// warning naming it).
#[test]
fn damage_in_the_lost_copys_own_header_is_no_divergence() {
    let d = tempfile::tempdir().unwrap();
    let mut damaged = orders(false);
    damaged.fault(
        Target::LastLog,
        FaultKind::FlipByte {
            position: 18,
            mask: 0x01,
        },
    );
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .clean_shutdown(false)
        .high_watermark("orders", 0, 20)
        .partition(damaged)
        .write(&d.path().join("broker1"))
        .unwrap();
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(orders(false))
        .write(&d.path().join("broker2"))
        .unwrap();
    let r = scan(d.path());
    let l = lost(&r);
    assert_eq!(l.len(), 1, "{:#?}", r.findings);
    let e = LostRange::of(l[0]).unwrap();
    assert!(e.copies[0].holds_lost_range, "{e:?}");
    assert_eq!(l[0].severity, Severity::Warning);
}

/// `orders-0` as [`orders`] writes it, without the batch at offsets 12..=13 (its offsets
/// skipped and its time on the clock passed, as the cleaner leaves a removed batch: the
/// other batches are the same bytes).
fn orders_without_12() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(3);
    let mut clock = PartitionBuilder::new("orders", 0);
    for i in 0..10 {
        let batch = || Batch::new(Producer::PLAIN).values([format!("v-{i}a"), format!("v-{i}b")]);
        clock.append(batch());
        if i == 6 {
            let passed = clock.now() - p.now();
            p.skip_offsets(2).advance_time(passed);
            continue;
        }
        p.append(batch());
        if i == 3 {
            p.roll();
        }
    }
    p
}

/// A copy that lacks a batch the lost range held is an intact copy only where cleaning
/// explains the gap: on a partition treated as compacted (each broker's cleaner compacts
/// its own copy, `LogCleaner`), the missing batch is the cleaner's work and the copy holds
/// what survives; on a `delete` (or unknown) partition nothing removes a batch from
/// the middle of a log, so the copy holds other records there and the loss stays an
/// error (`replica_divergence` reads the same shapes the same way).
#[test]
fn a_copy_missing_a_batch_holds_the_range_only_when_the_partition_is_compacted() {
    for compacted in [false, true] {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), Some(20), false);
        LogDirBuilder::new(2)
            .cluster_id("c1")
            .partition(orders_without_12())
            .write(&d.path().join("broker2"))
            .unwrap();
        let opts = match compacted {
            true => ScanOptions::default().with_compacted_topics(["orders"]),
            false => ScanOptions::default(),
        };
        let r = klogscan::pipeline::scan(&[d.path().to_path_buf()], &opts);
        let l = lost(&r);
        assert_eq!(l.len(), 1, "compacted {compacted}: {:#?}", r.findings);
        let e = LostRange::of(l[0]).unwrap();
        let c = &e.copies[0];
        assert_eq!(
            c.holds_lost_range, compacted,
            "compacted {compacted}: {c:?}"
        );
        match compacted {
            true => {
                assert_eq!(l[0].severity, Severity::Warning);
                assert_eq!(e.intact_copy.as_deref(), Some(c.path.as_str()));
            }
            false => {
                assert_eq!(l[0].severity, Severity::Error);
                assert_eq!(c.not_holding.as_deref(), Some("diverges_at:12"), "{c:?}");
                assert_eq!(e.intact_copy, None);
            }
        }
    }
}

/// The log dir's `log-start-offset-checkpoint` klogscan could not read (a FIFO in its
/// place): the broker's log start is at least the first segment's base, maybe above the
/// first lost offset (then nothing a consumer could still read is lost). The finding
/// stands on that assumption and says so; with the checkpoint read, it does not.
#[test]
fn an_unread_log_start_checkpoint_makes_the_loss_rest_on_an_assumption() {
    for unread in [false, true] {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), Some(16), false);
        let ckpt = d.path().join("broker1").join("log-start-offset-checkpoint");
        if unread {
            let _ = std::fs::remove_file(&ckpt);
            crate::common::mkfifo(&ckpt);
        }
        let r = scan(d.path());
        let l = lost(&r);
        assert_eq!(l.len(), 1, "unread {unread}: {:#?}", r.findings);
        let f = l[0];
        let e = LostRange::of(f).unwrap();
        let assumes = f.evidence.get("assumes").and_then(|a| a.as_str());
        if unread {
            let a = assumes.expect("the assumption is stated");
            assert!(a.contains("log-start-offset-checkpoint"), "{a}");
            assert!(f.message.contains("log start"), "{}", f.message);
            // Said as what rests on it: a warning, not an error.
            assert_eq!(f.severity, Severity::Warning);
        } else {
            assert!(assumes.is_none(), "{:?}", f.evidence);
            assert_eq!(f.severity, Severity::Error);
        }
        assert_eq!((e.first_lost_offset, e.offsets_lost_at_least), (8, 8));
    }
}
