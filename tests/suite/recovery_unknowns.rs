//! What the recovery model cannot know, and says so: with `--no-crc` the walk does not see
//! where `LogSegment.recover` (which checks every batch's CRC, `kafka-format.md` §9) stops.
#![cfg(feature = "testkit")]

use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::report::style::Style;
use klogscan::report::verify_text::write_verify;
use klogscan::results::ScanReport;
use klogscan::testkit::{
    Batch, FaultKind, LogDirBuilder, Manifest, PartitionBuilder, Producer, Target,
};
use klogscan::verify::{VerifyOptions, VerifyReport, render, verify};
use std::path::Path;

/// Three segments of idempotent data, two batches each.
fn three_segments() -> PartitionBuilder {
    let pr = Producer::idempotent(7, 0);
    let mut p = PartitionBuilder::new("three", 0);
    for i in 0..3 {
        if i > 0 {
            p.roll();
        }
        p.append(Batch::new(pr).records(2));
        p.append(Batch::new(pr).records(2));
    }
    // A byte inside the records of the first batch: its CRC fails, its header is intact.
    p.fault(
        Target::Log(0),
        FaultKind::FlipByte {
            position: 70,
            mask: 0x20,
        },
    );
    p
}

fn write(clean: bool) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(clean)
        .recovery_point("three", 0, 0);
    let m = ld.partition(three_segments()).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

fn run(root: &Path, check_crc: bool) -> VerifyReport {
    let mut opts = VerifyOptions::default();
    opts.scan.check_crc = check_crc;
    let r = verify(&[root.to_path_buf()], &opts);
    assert_eq!(r.partitions.len(), 1);
    r
}

fn text(r: &VerifyReport) -> String {
    let mut out = Vec::new();
    write_verify(r, &Style::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn without_crc_checks_a_recovery_has_an_unknown_outcome() {
    let (d, m) = write(false);
    // With CRCs checked: recovery of the oldest segment stops at the damaged batch.
    let checked = run(d.path(), true);
    let p = &checked.partitions[0].prediction;
    let t = p.truncation.as_ref().expect("the CRC-bad batch truncates");
    assert_eq!(t.position, m.batches[0].position);
    assert!(p.outcome_unknown.is_none());
    // Without: no truncation is seen, and the prediction says it cannot know.
    let unchecked = run(d.path(), false);
    let p = &unchecked.partitions[0].prediction;
    assert_eq!(p.recovered_segments.len(), 3);
    assert!(p.truncation.is_none());
    let why = p.outcome_unknown.as_deref().expect("outcome unknown");
    assert!(why.contains("CRC not checked"), "{why}");
    assert_eq!(p.log_end_offset_after, None);
    assert_eq!(p.producer_state.replay_to, None);
    assert_eq!(p.producer_state.producers, None);
    let t = text(&unchecked);
    assert!(t.contains("truncate: unknown"), "{t}");
    assert!(!t.contains("truncate: nothing"), "{t}");
    let json = render::to_json(&unchecked);
    assert!(json["partitions"][0]["prediction"]["outcome_unknown"].is_string());
}

#[test]
fn without_crc_checks_nothing_is_unknown_when_no_segment_is_recovered() {
    let (d, m) = write(true);
    let r = run(d.path(), false);
    let p = &r.partitions[0].prediction;
    assert!(p.recovered_segments.is_empty());
    assert!(p.outcome_unknown.is_none());
    assert_eq!(p.log_end_offset_after, Some(m.log_end_offset));
    assert!(text(&r).contains("truncate: nothing"));
    let json = render::to_json(&r);
    assert!(
        json["partitions"][0]["prediction"]
            .get("outcome_unknown")
            .is_none()
    );
}

// `scan`'s own `truncation` comes from the same plan: with `--no-crc` it says the
// truncation is unknown, with verify's words, instead of "none".

fn scan_run(root: &Path, check_crc: bool) -> ScanReport {
    let opts = ScanOptions::default().with_check_crc(check_crc);
    let r = scan(&[root.to_path_buf()], &opts);
    assert_eq!(r.partitions.len(), 1);
    r
}

fn scan_text(r: &ScanReport) -> String {
    let mut out = Vec::new();
    klogscan::report::table::write_scan(r, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn scan_json(r: &ScanReport) -> serde_json::Value {
    let mut out = Vec::new();
    klogscan::report::json::write_scan(r, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn scan_with_crc_checks_knows_its_truncation() {
    let (d, m) = write(false);
    let s = scan_run(d.path(), true);
    let p = &s.partitions[0];
    let t = p.truncation.as_ref().expect("the CRC-bad batch truncates");
    assert_eq!(t.position, m.batches[0].position);
    assert_eq!(p.truncation_unknown, None);
    let json = scan_json(&s);
    assert!(json["partitions"][0].get("truncation_unknown").is_none());
    assert_eq!(
        json["partitions"][0]["truncation"]["position"],
        m.batches[0].position
    );
    let text = scan_text(&s);
    assert!(text.contains("would truncate"), "{text}");
    assert!(!text.contains("unknown"), "{text}");
}

#[test]
fn scan_without_crc_checks_says_its_truncation_is_unknown() {
    let (d, _) = write(false);
    let s = scan_run(d.path(), false);
    let v = run(d.path(), false);
    let p = &s.partitions[0];
    // Not "none" and no offset made up: unknown, in verify's words.
    assert!(p.truncation.is_none());
    let why = p.truncation_unknown.as_deref().expect("truncation unknown");
    assert_eq!(
        Some(why),
        v.partitions[0].prediction.outcome_unknown.as_deref()
    );
    assert!(why.contains("CRC not checked (--no-crc)"), "{why}");
    let json = scan_json(&s);
    assert!(json["partitions"][0]["truncation"].is_null());
    assert_eq!(json["partitions"][0]["truncation_unknown"], why);
    let text = scan_text(&s);
    assert!(
        text.contains("truncation unknown: CRC not checked"),
        "{text}"
    );
}

#[test]
fn scan_without_crc_checks_gives_a_framing_truncation_as_the_latest_point() {
    // A garbage tail after the damaged batch: without CRCs the tail is the latest point
    // recovery can stop at; both commands give it and say it may be earlier.
    let dir = tempfile::tempdir().unwrap();
    let mut p = three_segments();
    p.fault(
        Target::LastLog,
        FaultKind::AppendGarbage(vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3]),
    );
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("three", 0, 0);
    let m = ld.partition(p).write(dir.path()).unwrap();
    let last = m.partitions[0].batches.last().unwrap();
    let log_len = last.position + last.size;
    let s = scan_run(dir.path(), false);
    let v = run(dir.path(), false);
    let a = s.partitions[0].truncation.as_ref().expect("the tail");
    let b = v.partitions[0]
        .prediction
        .truncation
        .as_ref()
        .expect("the tail");
    assert_eq!((&a.segment, a.position), (&b.segment, b.position));
    assert_eq!(a.position, log_len);
    assert!(s.partitions[0].truncation_unknown.is_some());
    let text = scan_text(&s);
    assert!(text.contains("at the latest"), "{text}");
    let tail = s
        .findings
        .iter()
        .find(|f| f.kind == klogscan::Kind::TrailingBytes)
        .expect("trailing_bytes");
    assert!(
        tail.broker_behaviour
            .contains("may stop at an earlier batch"),
        "{}",
        tail.broker_behaviour
    );
}

#[test]
fn scan_without_crc_checks_knows_nothing_is_truncated_when_no_segment_is_recovered() {
    let (d, _) = write(true);
    let s = scan_run(d.path(), false);
    let p = &s.partitions[0];
    assert!(p.truncation.is_none());
    assert_eq!(p.truncation_unknown, None);
    assert!(
        scan_json(&s)["partitions"][0]
            .get("truncation_unknown")
            .is_none()
    );
}

// A log dir's recovery-point or log-start checkpoint that klogscan could not read (here a
// FIFO in its place: a discovery error, named on stderr; mode 000 as another user is the
// same, `hardening_unreadable.rs`) is not an absent one: the broker may read it
// (`LogManager.loadLogs`), so where its recovery starts, or where its log starts, is
// unknown — never the absent file's 0.

/// How the test's log dir holds a checkpoint.
#[derive(Clone, Copy, Debug)]
enum Held {
    /// As the testkit writes it (recovery point 0; no log-start entry).
    Valid,
    /// No file: the broker uses 0 (the first segment's base for the log start).
    Absent,
    /// A FIFO in its place: klogscan does not read it.
    Fifo,
}

/// `three-0` (its first batch's CRC damaged) in a log dir under `root`, `name` held as
/// `held`.
fn write_held(root: &Path, clean: bool, name: &str, held: Held) -> Manifest {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(clean)
        .recovery_point("three", 0, 0);
    let m = ld.partition(three_segments()).write(root).unwrap();
    match held {
        Held::Valid => {}
        Held::Absent => std::fs::remove_file(root.join(name)).unwrap_or(()),
        Held::Fifo => crate::common::mkfifo(&root.join(name)),
    }
    m.partitions.into_iter().next().unwrap()
}

const RP: &str = "recovery-point-offset-checkpoint";
const LS: &str = "log-start-offset-checkpoint";

fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

fn recovered(r: &VerifyReport) -> Vec<String> {
    let p = &r.partitions[0].prediction;
    p.recovered_segments
        .iter()
        .map(|s| s.segment.clone())
        .collect()
}

#[test]
fn a_recovery_point_checkpoint_klogscan_cannot_read_leaves_where_recovery_starts_unknown() {
    for held in [Held::Valid, Held::Absent, Held::Fifo] {
        let d = tempfile::tempdir().unwrap();
        let m = write_held(d.path(), false, RP, held);
        let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
        let v = run(d.path(), true);
        let p = &v.partitions[0].prediction;
        let s = scan_run(d.path(), true);
        let crc = s
            .findings
            .iter()
            .find(|f| f.kind == klogscan::Kind::CrcMismatch)
            .expect("crc_mismatch");
        match held {
            // Recovery point 0 written, or none (the broker's 0): recovery starts at the
            // first segment, the damaged batch truncates it and deletes the rest.
            Held::Valid | Held::Absent => {
                assert_eq!(recovered(&v), [seg(bases[0])]);
                let t = p.truncation.as_ref().expect("the CRC-bad batch truncates");
                assert_eq!(t.position, m.batches[0].position, "{held:?}");
                assert_eq!(p.deleted_segments.len(), 2);
                assert_eq!(p.outcome_unknown, None, "{held:?}");
                assert!(p.unread_checkpoints.is_empty());
                assert_eq!(s.partitions[0].truncation_unknown, None);
                assert!(crc.evidence.get("recovery").is_some());
                let want = match held {
                    Held::Valid => "recovery point: 0 ->",
                    _ => "recovery point: - (0) ->",
                };
                assert!(text(&v).contains(want), "{held:?}: {}", text(&v));
            }
            // Unread: only the last segment is recovered whatever the entry; the damage
            // in the first is not said to be truncated nor served, and both commands say
            // why in the same words.
            Held::Fifo => {
                assert_eq!(recovered(&v), [seg(bases[2])]);
                assert_eq!(p.truncation, None);
                assert!(p.deleted_segments.is_empty());
                assert_eq!(p.recovery_point, None);
                assert_eq!(p.unread_checkpoints, [RP]);
                let why = p.outcome_unknown.as_deref().expect("outcome unknown");
                assert!(why.starts_with("recovery point unknown"), "{why}");
                assert!(why.contains("LogManager.loadLogs"), "{why}");
                assert!(!why.contains("--no-crc"), "{why}");
                assert_eq!(
                    (p.log_end_offset_after, p.recovery_point_after),
                    (None, None)
                );
                assert_eq!(p.producer_state.producers, None);
                assert_eq!(s.partitions[0].truncation_unknown.as_deref(), Some(why));
                let t = text(&v);
                assert!(t.contains("recovery point: unknown"), "{t}");
                assert!(t.contains("truncate: unknown"), "{t}");
                let json = render::to_json(&v);
                assert_eq!(
                    json["partitions"][0]["prediction"]["unread_checkpoints"],
                    serde_json::json!([RP])
                );
                assert!(
                    crc.broker_behaviour.contains(
                        "not noticed on load if the broker's recovery point lies past this segment"
                    ),
                    "{}",
                    crc.broker_behaviour
                );
                assert!(crc.evidence.get("recovery").is_none(), "{:?}", crc.evidence);
                let ck = v
                    .findings()
                    .find(|f| f.kind == klogscan::Kind::CheckpointInconsistent)
                    .expect("the log dir's checkpoint_inconsistent");
                assert_eq!(ck.evidence["read_by_klogscan"], false);
            }
        }
        if !matches!(held, Held::Fifo) {
            assert!(
                render::to_json(&v)["partitions"][0]["prediction"]
                    .get("unread_checkpoints")
                    .is_none()
            );
        }
    }
}

/// After a clean shutdown no segment is recovered from the recovery point: the unread
/// file changes nothing of the outcome (only the recovery point itself is unknown).
#[test]
fn an_unread_recovery_point_after_a_clean_shutdown_leaves_the_outcome_known() {
    let d = tempfile::tempdir().unwrap();
    let m = write_held(d.path(), true, RP, Held::Fifo);
    let v = run(d.path(), true);
    let p = &v.partitions[0].prediction;
    assert!(p.recovered_segments.is_empty());
    assert_eq!(p.outcome_unknown, None);
    assert_eq!(p.unread_checkpoints, [RP]);
    assert_eq!(p.log_end_offset_after, Some(m.log_end_offset));
    assert_eq!(p.recovery_point_after, Some(m.log_end_offset));
    assert!(text(&v).contains("recovery point: unknown"), "{}", text(&v));
    let s = scan_run(d.path(), true);
    assert_eq!(s.partitions[0].truncation_unknown, None);
}

/// Another log dir of the same run, its checkpoint read, is predicted as before.
#[test]
fn an_unread_recovery_point_leaves_other_log_dirs_known() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    write_held(&a, false, RP, Held::Fifo);
    let m = write_held(&b, false, RP, Held::Valid);
    let mut opts = VerifyOptions::default();
    opts.scan.check_crc = true;
    let v = verify(&[a.clone(), b.clone()], &opts);
    assert_eq!(v.partitions.len(), 2);
    for pv in &v.partitions {
        let p = &pv.prediction;
        if Path::new(pv.path()).starts_with(&a) {
            assert!(p.outcome_unknown.is_some());
            assert!(p.deleted_segments.is_empty());
        } else {
            assert!(Path::new(pv.path()).starts_with(&b));
            assert_eq!(p.outcome_unknown, None);
            assert_eq!(p.deleted_segments.len(), 2);
            let t = p.truncation.as_ref().expect("truncated");
            assert_eq!(t.position, m.batches[0].position);
        }
    }
}

/// The log start checkpoint: unread, the log start the load keeps (at least the first
/// segment's base) and whether the load deletes every segment (a checkpoint above the log
/// end) are unknown, after a clean shutdown too; absent, the first segment's base; valid
/// and above the log end, every segment deleted (`checkpoints_inconsistent_with_the_log`).
#[test]
fn a_log_start_checkpoint_klogscan_cannot_read_leaves_the_log_start_unknown() {
    for held in [Held::Absent, Held::Fifo] {
        let d = tempfile::tempdir().unwrap();
        let m = write_held(d.path(), true, LS, held);
        let v = run(d.path(), true);
        let p = &v.partitions[0].prediction;
        assert!(p.deleted_segments.is_empty(), "{held:?}");
        assert_eq!(p.log_start_checkpoint, None);
        match held {
            Held::Fifo => {
                assert_eq!(p.unread_checkpoints, [LS]);
                let why = p.outcome_unknown.as_deref().expect("outcome unknown");
                assert!(why.starts_with("log start unknown"), "{why}");
                assert!(
                    why.contains("LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd"),
                    "{why}"
                );
                assert_eq!(p.log_start_offset_after, None);
                assert_eq!(p.log_end_offset_after, None);
                let s = scan_run(d.path(), true);
                assert_eq!(s.partitions[0].truncation_unknown.as_deref(), Some(why));
            }
            _ => {
                assert!(p.unread_checkpoints.is_empty());
                assert_eq!(p.outcome_unknown, None);
                assert_eq!(p.log_start_offset_after, Some(m.segments[0].0));
                assert_eq!(p.log_end_offset_after, Some(m.log_end_offset));
            }
        }
    }
}

/// A symlink in the checkpoint's place that discovery does not follow (no `--follow`) is
/// unread too: the broker follows it. Followed, it is read as the file it points to.
#[test]
fn a_recovery_point_checkpoint_behind_a_symlink_not_followed_is_unread() {
    let d = tempfile::tempdir().unwrap();
    let m = write_held(d.path(), false, RP, Held::Valid);
    std::fs::rename(d.path().join(RP), d.path().join("rp.saved")).unwrap();
    std::os::unix::fs::symlink("rp.saved", d.path().join(RP)).unwrap();
    for follow in [false, true] {
        let mut opts = VerifyOptions::default();
        opts.scan.follow_symlinks = follow;
        let v = verify(&[d.path().to_path_buf()], &opts);
        let p = &v.partitions[0].prediction;
        if follow {
            assert!(p.unread_checkpoints.is_empty());
            assert_eq!(p.outcome_unknown, None);
            let t = p.truncation.as_ref().expect("truncated");
            assert_eq!(t.position, m.batches[0].position);
        } else {
            assert_eq!(p.unread_checkpoints, [RP]);
            assert!(p.outcome_unknown.is_some());
            assert_eq!(p.truncation, None);
        }
    }
}
