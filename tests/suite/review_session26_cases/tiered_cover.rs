//! `remote_copy_unfinished` is info when later finished copies hold all its offsets
//! (`tiering::checks::unfinished`, `covers`: one later COPY_SEGMENT_FINISHED segment whose
//! range contains the orphan's). Kafka: a copy task deletes its own failed copies
//! (`RemoteLogManager.copyLogSegment`), so an orphan is a crash's; the next leader copies
//! from past the highest finished offset (`copyLogSegmentsToRemote`, `findHighestRemoteOffset`)
//! the local segments holding it — its own segments, rolled where it rolled them
//! (`candidateLogSegments`: `logSegments(from, …)` starts at the segment containing `from`);
//! reads find a segment by the lineage's epoch for the offset
//! (`RemoteLogMetadataCache.remoteLogSegmentMetadata(epoch, offset)`, finished segments
//! only); expiration lists an epoch's segments sorted by start offset, finished ones first at
//! a tie (`RemoteLogLeaderEpochState.listAllRemoteLogSegments`), and deletes those the log
//! start, time or size breach (`RLMExpirationTask.cleanupExpiredRemoteLogSegments`).
//!
//! History (`kafka_quiet_tiered_cases::history`): local segments [0,19] [20,39] epoch 0,
//! [40,59] epoch 1, [60,79] epoch 1 then 2 from 70, [80,99] epoch 2. Broker 0 led and
//! crashed mid-upload; broker 1 leads after it.

use crate::kafka_quiet_tiered_cases::{Checked, check, history, lines};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::remote_log::TieredLog;

/// Broker 0 copied [0,19] and [20,39], then started the copy of its own segment
/// [40,79] (it rolled at 80, not at 60) and crashed: the orphan, its objects those of
/// the local segment [40,59] (only its metadata is read here). Then broker 1 leads.
fn orphan_of_40_to_79() -> TieredLog {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    let mut seg = t.remote_segment(2);
    seg.end_offset = 79;
    seg.leader_epochs = vec![(1, 40), (2, 70)];
    t.copy_started_as(seg, 2);
    t.broker(1);
    t
}

/// The plain scan's `remote_copy_unfinished` findings (metadata only).
fn orphans(c: &Checked) -> Vec<&Finding> {
    let (plain, _) = c.of(Kind::RemoteCopyUnfinished);
    assert!(!plain.is_empty(), "{:#?}", lines(&c.scan.findings));
    plain
}

/// Covered only partly: broker 1 copied [60,79] on (its copy of [40,59] never happened)
/// and its local retention is past 59: 40..=59 are served by nothing. The orphan's offsets
/// are not all held by finished copies — the warning stays, as klogscan says (with the
/// gap).
#[test]
fn an_orphan_covered_only_partly_stays_a_warning() {
    let mut t = orphan_of_40_to_79();
    t.copy(3);
    t.local_from(4);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    for f in orphans(&c) {
        assert_eq!(f.severity, Severity::Warning, "{}", f.message);
        assert!(f.evidence.get("covered_by").is_none(), "{}", f.evidence);
    }
    let (gaps, _) = c.of(Kind::RemoteSegmentGap);
    assert!(
        gaps.iter().any(|g| g.offset == Some(40)),
        "{:#?}",
        lines(gaps)
    );
}

/// Divergence: broker 1 rolled its segments at 60 where broker 0 rolled at 80, so its
/// redo of the orphan's offsets is two finished segments, [40,59] and [60,79]
/// (`copyLogSegmentsToRemote` uploads whole local segments from the one holding offset
/// 40). Every offset of the orphan is served, and expiration deletes it with the others:
/// the healthy remains of a crash that `covers` (one segment holding the whole range) does
/// not see — klogscan warns and asks for the broker logs. The same rule should take the
/// union of the later finished copies.
#[test]
fn an_orphan_covered_by_two_later_segments_is_info() {
    let mut t = orphan_of_40_to_79();
    t.copy(2);
    t.copy(3);
    t.local_from(4);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    for f in orphans(&c) {
        assert_eq!(f.severity, Severity::Info, "{}", f.message);
        let by = f.evidence["covered_by"].as_array().map(Vec::len);
        assert_eq!(by, Some(2), "{}", f.evidence);
    }
}

/// Divergence: the only later copy of [40,59] is listed under epoch 0 (broker 1's log held
/// those offsets under epoch 0, a diverged replica's), while the lineage gives them epoch 1
/// ([40,…) from epoch 1). A read of offset 40 asks the metadata cache for epoch 1's segment
/// holding it (`RemoteLogManager.read` → `fetchRemoteLogSegmentMetadata`) and finds none —
/// the copy is outside the lineage (`isRemoteSegmentWithinLeaderEpochs`: epoch 0 ends at
/// 39), so 40..=59 are unserved. klogscan counts it as covering and says the orphan leaves
/// "nothing unserved", info — beside its own `remote_segment_gap` (error, 40..=59: "the
/// lookup in the offsets' leader epoch" misses the copy) and
/// `remote_segment_abandoned_lineage` for that very copy. `covers` should ask the copy to
/// be within the lineage (`tiering::lineage::within_lineage`), as the gap check does.
#[test]
fn a_cover_outside_the_lineage_serves_nothing() {
    let mut t = history();
    t.copy(0);
    t.copy(1);
    t.copy_started(2);
    t.broker(1);
    let mut cover = t.remote_segment(2);
    cover.leader_epochs = vec![(0, 40)];
    let r = t.copy_started_as(cover, 2);
    t.copy_finished(r);
    t.copy(3);
    t.local_from(4);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    for f in orphans(&c) {
        assert!(f.severity >= Severity::Warning, "{}", f.message);
        assert!(!f.message.contains("nothing unserved"), "{}", f.message);
    }
}

/// Broker 0's orphan of [40,59], broker 1's finished redo, then an expiration run that
/// deleted [0,19], [20,39] and the redo (log start now 60) and has not reached the orphan
/// yet. The run lists epoch 1's segments by start offset, the finished redo before the
/// orphan at their tie, and both breach the log start (their epochs ≤ the lineage's first,
/// 1; end 59 < 60): this is the middle of the run that deletes both — or the next run
/// does. Nothing is unserved (below the log start) and nothing leaks: info, no remediation,
/// `evidence.below_log_start` (was a warning once the cover was deleted).
#[test]
fn an_orphan_whose_cover_retention_deleted_is_still_routine() {
    let mut t = history();
    let a = t.copy(0);
    let b = t.copy(1);
    t.copy_started(2);
    t.broker(1);
    let redo = t.copy(2);
    t.copy(3);
    t.delete(a);
    t.delete(b);
    t.delete(redo);
    t.local_from(4);
    t.log_start(60);
    let c = check(vec![t], |_| {});
    for f in orphans(&c) {
        assert_eq!(f.severity, Severity::Info, "{}", f.message);
        assert!(f.remediation.is_none(), "{:?}", f.remediation);
        assert_eq!(f.evidence["below_log_start"], 60, "{}", f.evidence);
    }
}

/// Twin of the case above: the orphan of [40,59] was copied under epoch 3, a leader of a
/// lineage that did not last (broker 1's cache gives 40..=59 epoch 1 and starts epoch 2 at
/// 70). Below the log start 60 all the same, but not all its epochs are at or below the
/// lineage's first at the log start (1), so `isSegmentBreachByLogStartOffset` never
/// deletes it: it stays a warning, with the remediation and without `below_log_start`.
#[test]
fn an_orphan_of_a_later_epoch_below_the_log_start_stays_a_warning() {
    let mut t = history();
    let a = t.copy(0);
    let b = t.copy(1);
    let mut seg = t.remote_segment(2);
    seg.leader_epochs = vec![(3, 40)];
    t.copy_started_as(seg, 2);
    t.broker(1);
    let redo = t.copy(2);
    t.copy(3);
    t.delete(a);
    t.delete(b);
    t.delete(redo);
    t.local_from(4);
    t.log_start(60);
    let c = check(vec![t], |_| {});
    for f in orphans(&c) {
        assert_eq!(f.severity, Severity::Warning, "{}", f.message);
        assert!(f.remediation.is_some(), "{}", f.message);
        assert!(
            f.evidence.get("below_log_start").is_none(),
            "{}",
            f.evidence
        );
    }
}
