//! What the recovery model cannot know, and says so: with `--no-crc` the walk does not see
//! where `LogSegment.recover` (which checks every batch's CRC, `kafka-format.md` §9) stops.
#![cfg(feature = "testkit")]

use klogscan::report::style::Style;
use klogscan::report::verify_text::write_verify;
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
