//! Once the load fails, the prediction says nothing of what it would have done after: for
//! each step of `LogLoader.load` that klogscan predicts a throw at (`load_stops_at`), what
//! the steps before did stands (files deleted or renamed), and what comes after is not
//! reached — no swap completed, no log start, log end or recovery point after the load,
//! no producer-state rebuild, no snapshots after load — in the JSON and in the text. Each
//! case has its twin without the failure, whose prediction is complete.

use super::loader_files::four_segments;
use super::{file, write};
use klogscan::report::style::Style;
use klogscan::report::verify_text::write_verify;
use klogscan::request::{self, Request};
use klogscan::testkit::{Batch, LogDirBuilder, Manifest, PartitionBuilder, Producer};
use klogscan::verify::{BrokerVersion, PartitionVerification, VerifyReport, render};

const V2_8: Option<BrokerVersion> = Some(BrokerVersion(2, 8, 1));

fn verify_report(m: &Manifest, version: Option<BrokerVersion>) -> VerifyReport {
    let a = request::verify(&Request::new([m.dir.parent().unwrap()]), version).unwrap();
    assert_eq!(a.report.partitions.len(), 1);
    a.report
}

fn text(r: &VerifyReport) -> String {
    let mut out = Vec::new();
    write_verify(r, &Style::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The action of leftover `file` (empty: none).
fn action<'a>(v: &'a PartitionVerification, file: &str) -> &'a str {
    (v.prediction.leftovers.iter())
        .find(|l| l.file == file)
        .map_or("", |l| l.action.as_str())
}

/// The load fails at step `stop`: nothing after it is said, in the prediction, the JSON
/// and the text.
fn assert_stopped(r: &VerifyReport, stop: &str, case: &str) {
    let v = &r.partitions[0];
    let p = &v.prediction;
    assert!(p.load_failure.is_some(), "{case}: {p:#?}");
    assert_eq!(p.load_stops_at.as_deref(), Some(stop), "{case}");
    assert_eq!(p.log_start_offset_after, None, "{case}");
    assert_eq!(p.log_end_offset_after, None, "{case}");
    assert_eq!(p.recovery_point_after, None, "{case}");
    let ps = &p.producer_state;
    assert_eq!((ps.producers, ps.open_transactions), (None, None), "{case}");
    assert_eq!(ps.snapshots_after_load, None, "{case}");
    if stop != "producer_state_rebuild" {
        assert_eq!(
            (ps.snapshot.as_deref(), ps.replay_from, ps.replay_to),
            (None, None, None),
            "{case}"
        );
        assert!(!ps.skipped, "{case}");
        assert!(p.created_segment.is_none(), "{case}");
    }
    let json = render::to_json(r);
    let jp = &json["partitions"][0]["prediction"];
    assert_eq!(jp["load_stops_at"], stop, "{case}");
    assert!(jp["log_end_offset_after"].is_null(), "{case}");
    assert!(
        jp["producer_state"]["snapshots_after_load"].is_null(),
        "{case}"
    );
    assert!(jp["producer_state"]["producers"].is_null(), "{case}");
    let t = text(r);
    assert!(t.contains("LOAD FAILS"), "{case}: {t}");
    assert!(t.contains("log end: "), "{case}: {t}");
    assert!(t.contains(" -> not reached"), "{case}: {t}");
    assert!(
        t.contains("snapshots after load: not reached"),
        "{case}: {t}"
    );
    if stop != "producer_state_rebuild" {
        assert!(t.contains("producer state: not rebuilt"), "{case}: {t}");
    }
    // The leftover findings say what the prediction says.
    for l in &p.leftovers {
        if l.action.starts_with("not reached") {
            assert!(
                (v.findings.iter()).all(|f| !f.message.contains(&l.file)
                    || f.broker_behaviour == l.action
                    || f.kind.id() != "leftover_file"),
                "{case}: {:#?}",
                v.findings
            );
        }
    }
}

/// The twin: the load succeeds and the prediction is whole.
fn assert_complete(r: &VerifyReport, case: &str) {
    let p = &r.partitions[0].prediction;
    assert!(p.load_failure.is_none(), "{case}: {:?}", p.load_failure);
    assert_eq!(p.load_stops_at, None, "{case}");
    assert!(p.log_end_offset_after.is_some(), "{case}");
    assert!(p.log_start_offset_after.is_some(), "{case}");
    assert!(p.producer_state.snapshots_after_load.is_some(), "{case}");
    let json = render::to_json(r);
    let jp = &json["partitions"][0]["prediction"];
    assert!(jp.get("load_stops_at").is_none(), "{case}");
    assert!(jp["log_end_offset_after"].is_i64(), "{case}");
    let t = text(r);
    assert!(t.contains("load: ok"), "{case}: {t}");
    assert!(!t.contains("not reached"), "{case}: {t}");
    assert!(!t.contains("not rebuilt"), "{case}: {t}");
}

/// A `.deleted` leftover the first pass deletes as its listing meets it.
fn deleted_leftover(m: &Manifest) -> String {
    let name = format!("{}.deleted", file(7, "log"));
    std::fs::write(m.dir.join(&name), b"x").unwrap();
    name
}

/// `2.log` copied to `2.log.swap`, with `tail` appended.
fn swap_of_2(m: &Manifest, tail: &[u8]) -> String {
    let mut bytes = std::fs::read(m.dir.join(file(2, "log"))).unwrap();
    bytes.extend_from_slice(tail);
    let name = format!("{}.swap", file(2, "log"));
    std::fs::write(m.dir.join(&name), bytes).unwrap();
    name
}

/// A `.snapshot` name `Long.parseLong` refuses throws while the producer-state manager is
/// built, before `LogLoader.load`: not even the `.deleted` file is deleted, the swap not
/// completed.
#[test]
fn a_snapshot_name_fails_before_the_load_does_anything() {
    for bad in [true, false] {
        let (_d, m) = four_segments();
        let deleted = deleted_leftover(&m);
        let swap = swap_of_2(&m, &[]);
        if bad {
            std::fs::write(m.dir.join("x.snapshot"), b"").unwrap();
        }
        let r = verify_report(&m, None);
        let v = &r.partitions[0];
        if bad {
            assert_stopped(&r, "before_load", "x.snapshot");
            assert!(
                action(v, &deleted).starts_with("not reached"),
                "{}",
                action(v, &deleted)
            );
            assert!(
                action(v, &swap).starts_with("not reached"),
                "{}",
                action(v, &swap)
            );
            assert!(!text(&r).contains("swap completed"), "{}", text(&r));
        } else {
            assert_complete(&r, "twin");
            assert!(action(v, &deleted).starts_with("deleted at startup"));
            assert!(action(v, &swap).starts_with("swap completed at startup"));
        }
    }
}

/// The first pass: a `.cleaned` name throws while the directory is listed (a `.deleted`
/// file is deleted only if the listing met it first: not predicted), a `.swap` one once the
/// listing is over (every `.deleted` file gone; the `.cleaned` files, deleted after the
/// swaps are sorted, stay). With both, the `.cleaned` one throws first whatever the names'
/// order.
#[test]
fn a_temp_file_name_fails_the_first_pass() {
    for (bad, names) in [
        ("cleaned", &["a.cleaned"][..]),
        ("swap", &["b.log.swap"][..]),
        ("both", &["a.log.swap", "z.cleaned"][..]),
    ] {
        let (_d, m) = four_segments();
        let deleted = deleted_leftover(&m);
        let cleaned = format!("{}.cleaned", file(2, "log"));
        std::fs::write(m.dir.join(&cleaned), b"").unwrap();
        for n in names {
            std::fs::write(m.dir.join(n), b"").unwrap();
        }
        let r = verify_report(&m, None);
        let v = &r.partitions[0];
        assert_stopped(&r, "first_pass", bad);
        let f = v.prediction.load_failure.as_ref().unwrap();
        let thrower = if bad == "swap" {
            names[0]
        } else {
            names[names.len() - 1]
        };
        assert!(
            f.message.contains(&format!("meets {thrower}")),
            "{bad}: {}",
            f.message
        );
        let d = action(v, &deleted);
        match bad {
            "swap" => assert!(d.starts_with("deleted at startup"), "{bad}: {d}"),
            _ => assert!(d.starts_with("done only if"), "{bad}: {d}"),
        }
        assert!(
            action(v, &cleaned).starts_with("not reached"),
            "{bad}: {}",
            action(v, &cleaned)
        );
    }
    let (_d, m) = four_segments();
    deleted_leftover(&m);
    assert_complete(&verify_report(&m, None), "twin");
}

/// Reading a swap's end in the first pass (3.0 and later) throws at its zero-filled tail:
/// the first pass's deletions stand, the swap is not completed (the leftover does not say
/// so), nothing is recovered. Twin: the swap without the zeros is completed.
#[test]
fn a_swap_whose_end_throws_is_not_completed() {
    for zeros in [true, false] {
        let (_d, m) = four_segments();
        let deleted = deleted_leftover(&m);
        let swap = swap_of_2(&m, if zeros { &[0u8; 64] } else { &[] });
        let r = verify_report(&m, None);
        let v = &r.partitions[0];
        if zeros {
            assert_stopped(&r, "swap_read", "zeros");
            assert!(action(v, &deleted).starts_with("deleted at startup"));
            assert!(
                action(v, &swap).starts_with("not reached"),
                "{}",
                action(v, &swap)
            );
            let t = text(&r);
            assert!(!t.contains("swap completed"), "{t}");
            assert!(t.contains("truncate: not reached"), "{t}");
        } else {
            assert_complete(&r, "twin");
            assert!(action(v, &swap).starts_with("swap completed at startup"));
        }
    }
}

/// A `.txnindex` of an unknown version fails `loadSegmentFiles` at its segment (4): the
/// swap was completed before (the third pass), the orphaned index named before segment 4 is
/// deleted, the one named after it is not reached. Twin: a valid `.txnindex`.
#[test]
fn a_txnindex_of_an_unknown_version_stops_the_segment_loop_there() {
    for bad in [true, false] {
        let (_d, m) = four_segments();
        let swap = swap_of_2(&m, &[]);
        let (early, late) = (file(1, "index"), file(9, "index"));
        std::fs::write(m.dir.join(&early), b"").unwrap();
        std::fs::write(m.dir.join(&late), b"").unwrap();
        if bad {
            let mut b = vec![1u8, 0];
            for x in [7i64, 5, 5, 5] {
                b.extend_from_slice(&x.to_be_bytes());
            }
            std::fs::write(m.dir.join(file(4, "txnindex")), b).unwrap();
        }
        let r = verify_report(&m, None);
        let v = &r.partitions[0];
        assert!(
            action(v, &swap).starts_with("swap completed at startup"),
            "{}",
            action(v, &swap)
        );
        assert!(
            action(v, &early).starts_with("deleted at startup"),
            "{}",
            action(v, &early)
        );
        if bad {
            assert_stopped(&r, "segment_files", "txnindex");
            assert!(
                action(v, &late).starts_with("not reached"),
                "{}",
                action(v, &late)
            );
        } else {
            assert_complete(&r, "twin");
            assert!(action(v, &late).starts_with("deleted at startup"));
        }
    }
}

/// Before 3.0 a directory at `2.index.swap` fails `completeSwapOperations` (its recovery
/// resets the index): after `loadSegmentFiles` (the orphaned index deleted), before the
/// swap replaces anything, and before its recovery cuts the swap's zero-filled tail. Twin:
/// an empty regular file there (the swap recovered, its tail cut).
#[test]
fn before_3_0_a_swap_that_cannot_be_opened_is_not_completed() {
    for dir in [true, false] {
        let (_d, m) = four_segments();
        // Its recovery would cut the zeros (a truncation of its own), had it run.
        let swap = swap_of_2(&m, &[0u8; 64]);
        let orphan = file(9, "index");
        std::fs::write(m.dir.join(&orphan), b"").unwrap();
        let at = m.dir.join(format!("{}.swap", file(2, "index")));
        match dir {
            true => std::fs::create_dir(&at).unwrap(),
            false => std::fs::write(&at, b"").unwrap(),
        }
        let r = verify_report(&m, V2_8);
        let v = &r.partitions[0];
        assert!(
            action(v, &orphan).starts_with("deleted at startup"),
            "{}",
            action(v, &orphan)
        );
        if dir {
            assert_stopped(&r, "swap_completion", "dir");
            assert!(
                !action(v, &swap).contains("swap completed"),
                "{}",
                action(v, &swap)
            );
            let t = &v.prediction.truncation;
            assert!(t.is_none(), "{t:#?}");
        } else {
            assert_complete(&r, "twin");
            assert!(action(v, &swap).starts_with("swap completed at startup"));
            assert!(v.prediction.truncation.is_some());
        }
    }
}

/// The last segment's end, read with no recovery before it (a clean shutdown), throws at a
/// zero-filled tail: `recoverLog` stops there, nothing after it. Twin: no tail.
#[test]
fn the_last_segments_end_that_throws_stops_the_load_there() {
    for zeros in [true, false] {
        let (_d, m) = four_segments();
        if zeros {
            let log = m.dir.join(file(6, "log"));
            let mut b = std::fs::read(&log).unwrap();
            b.extend_from_slice(&[0u8; 64]);
            std::fs::write(&log, b).unwrap();
        }
        let r = verify_report(&m, None);
        match zeros {
            true => assert_stopped(&r, "log_end", "zeros"),
            false => assert_complete(&r, "twin"),
        }
    }
}

/// After an unclean shutdown with no snapshot, the recovery of segment 0 meets a
/// non-transactional write inside a transaction and throws: segment 3's recovery is not
/// reached (recovery point 0), nor the final rebuild. Twin: the write is transactional.
#[test]
fn a_recovery_that_throws_stops_the_load_there() {
    for bad in [true, false] {
        let txn = Producer::transactional(1, 0);
        let mut p = PartitionBuilder::new("rs", 0);
        p.append(Batch::new(txn).records(2));
        let writer = if bad { Producer::idempotent(1, 0) } else { txn };
        p.append(Batch::new(writer).records(1).sequence(2));
        p.roll();
        p.append(Batch::new(Producer::idempotent(9, 0)).records(2));
        let (_d, m) = write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("rs", 0, 0),
            p,
        );
        for e in std::fs::read_dir(&m.dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_some_and(|x| x == "snapshot") {
                std::fs::remove_file(path).unwrap();
            }
        }
        let r = verify_report(&m, None);
        let p = &r.partitions[0].prediction;
        if bad {
            assert_stopped(&r, "recovery", "bad");
            let rec: Vec<&str> = (p.recovered_segments.iter())
                .map(|s| s.segment.as_str())
                .collect();
            assert_eq!(rec, [file(0, "log")]);
            assert!(text(&r).contains("truncate: not reached"));
        } else {
            assert_complete(&r, "twin");
            assert_eq!(p.recovered_segments.len(), 2);
        }
    }
}

/// The final rebuild's replay throws at a malformed COMMIT its segment's recovery kept:
/// everything before it stands (the recovery, its truncation, the snapshot it loads and
/// the range it replays), not what the rebuild leaves. Twin: a well-formed COMMIT.
#[test]
fn a_final_rebuild_that_throws_keeps_what_came_before() {
    for bad in [true, false] {
        let txn = Producer::transactional(9, 0);
        let mut p = PartitionBuilder::new("rl", 0);
        p.append(Batch::new(txn).records(2));
        match bad {
            true => p.control_raw(txn, 1, Some(vec![0, 0])),
            false => p.commit(txn, 1),
        };
        p.append(Batch::new(Producer::PLAIN).records(1));
        let (_d, m) = write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("rl", 0, 0),
            p,
        );
        for e in std::fs::read_dir(&m.dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_some_and(|x| x == "snapshot") {
                std::fs::remove_file(path).unwrap();
            }
        }
        let r = verify_report(&m, None);
        let p = &r.partitions[0].prediction;
        if bad {
            assert_stopped(&r, "producer_state_rebuild", "bad");
            assert!(p.truncation.is_some());
            assert_eq!(p.producer_state.replay_from, Some(2));
            assert!(
                text(&r).contains("which throws (the load fails)"),
                "{}",
                text(&r)
            );
        } else {
            assert_complete(&r, "twin");
        }
    }
}

/// Damage no recovery looks at (a flipped byte in the first segment, after the clean
/// shutdown): while the load succeeds, readers fail there; once it fails (an unparseable
/// `.snapshot` name), the broker serves nothing of the log, so no reader meets it — the
/// prediction said "readers will fail there" whatever the load did.
#[test]
fn damage_no_recovery_reads_is_met_by_no_reader_when_the_load_fails() {
    for bad in [false, true] {
        let (_d, m) = four_segments();
        let seg = m.dir.join(file(0, "log"));
        let mut bytes = std::fs::read(&seg).unwrap();
        bytes[18] ^= 0x20; // the first batch's CRC
        std::fs::write(&seg, bytes).unwrap();
        if bad {
            std::fs::write(m.dir.join("x.snapshot"), b"").unwrap();
        }
        let r = verify_report(&m, None);
        let p = &r.partitions[0].prediction;
        assert_eq!(p.unrecovered_corruption.len(), 1, "{bad}: {p:#?}");
        let u = &p.unrecovered_corruption[0];
        assert_eq!(u.contains("readers will fail there"), !bad, "{u}");
        assert_eq!(
            u.contains("no reader meets it while the load fails"),
            bad,
            "{u}"
        );
    }
}
