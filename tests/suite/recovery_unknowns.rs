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
