//! `LeaderEpochFileCache.endOffsetFor`, the answer a consumer's `OffsetsForLeaderEpoch` gets
//! from the cache the file loads: a group's commit (`__consumer_offsets`) validated against the
//! partition's lineage (`cluster::consumers`), as `scan` reports it.

use super::{batches_of, clean, write};
use crate::kafka_consumer_validation_cases::{GROUP, consumer, one_commit};
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::PartitionBuilder;

/// The topic the group commits to.
const TOPIC: &str = "orders";

/// `orders-0` as `p` with the file `entries`, and group "g"'s one commit `(offset, epoch)` on
/// it; the log dir's `scan` findings of the consumer kinds, after `verify` found nothing wrong
/// with the file.
fn commit_on(p: PartitionBuilder, entries: &[(i32, i64)], c: (i64, Option<i32>)) -> Vec<Finding> {
    let w = write(clean().cluster_id("c1"), p, entries);
    let group = transaction_partition_for(GROUP, 50);
    one_commit(c.0, c.1).write(w.log_dir(), group).unwrap();
    let m = w.mismatches();
    assert!(m.is_empty(), "{m:#?}");
    consumer(&w.scan().findings).into_iter().cloned().collect()
}

/// `(case, epoch, end offset)` of a finding's `endOffsetFor` answer.
fn epoch_end(f: &Finding) -> (String, i64, i64) {
    let e = match &f.evidence["validation"]["epoch_end"] {
        v if v.is_object() => v,
        _ => &f.evidence["epoch_end"],
    };
    (
        e["case"].as_str().unwrap_or_default().to_string(),
        e["epoch"].as_i64().unwrap(),
        e["end_offset"].as_i64().unwrap(),
    )
}

/// `LeaderEpochFileCacheTest.shouldTruncateIfMatchingEpochButEarlierStartingOffset`'s answers:
/// after `5 11 / 6 12 / 7 13` and `assign(7, 12)` the cache is `5 11 / 7 12`, and
/// `endOffsetFor(5)` and `endOffsetFor(6)` are both `(5, 12)`. On disk: offset 11 at epoch 5,
/// 12–14 at epoch 7 and that file; the group read offset 12 at epoch 6 before the cut and
/// committed 13 with epoch 6 — the answer `(5, 12)` is below 13: truncation detected (a warning
/// naming the floor epoch 5 and the end 12); a commit of 13 with epoch 5 gets the same end
/// (`committed_offset_past_epoch_end`). Near miss: the commit 12 with epoch 6 — the end 12 is
/// not below it, validation passes (info only).
#[test]
fn an_epoch_cut_by_a_matching_epoch_ends_where_it_starts() {
    let p = || batches_of(TOPIC, 11, &[(5, 1), (7, 3)]);
    let file = [(5, 11), (7, 12)];
    let f = commit_on(p(), &file, (13, Some(6)));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].kind, f[0].severity),
        (Kind::CommittedLeaderEpochUnknown, Severity::Warning)
    );
    assert_eq!(epoch_end(&f[0]), ("in_gap".into(), 5, 12));
    let f = commit_on(p(), &file, (13, Some(5)));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].kind, Kind::CommittedOffsetPastEpochEnd);
    assert_eq!(epoch_end(&f[0]), ("known".into(), 5, 12));
    let f = commit_on(p(), &file, (12, Some(6)));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].kind, f[0].severity),
        (Kind::CommittedLeaderEpochUnknown, Severity::Info)
    );
    assert!(
        f[0].message.contains("validation passes"),
        "{}",
        f[0].message
    );
}

/// `LeaderEpochFileCacheTest.shouldReturnLogEndOffsetIfLatestEpochRequested`: `assign(2, 11)`,
/// `assign(2, 12)`, log end 14 — `endOffsetFor(2, 14)` is `(2, 14)`, the log end. On disk:
/// offsets 11 and 12–13 at epoch 2, the file `2 11`; a commit of 14 with epoch 2 passes
/// validation (no consumer finding). Near miss: a commit of 15 with epoch 2 — above the answer
/// 14: the consumer is moved back to 14 (`committed_offset_beyond_log_end`, answer `latest`
/// `(2, 14)`).
#[test]
fn the_latest_epoch_ends_at_the_log_end() {
    let p = || batches_of(TOPIC, 11, &[(2, 1), (2, 2)]);
    let f = commit_on(p(), &[(2, 11)], (14, Some(2)));
    assert!(f.is_empty(), "{f:#?}");
    let f = commit_on(p(), &[(2, 11)], (15, Some(2)));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].kind, Kind::CommittedOffsetBeyondLogEnd);
    assert_eq!(epoch_end(&f[0]), ("latest".into(), 2, 14));
}

/// `LeaderEpochFileCacheTest.shouldReturnUndefinedOffsetIfUndefinedEpochRequested` and
/// `LeaderEpochFileCacheTest.shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested`:
/// `endOffsetFor(-1)` is undefined whatever the cache holds — and a consumer never asks it: a
/// commit whose `leaderEpoch` is -1 (OffsetCommit value v3) has no epoch to validate
/// (`SubscriptionState`'s `validatePosition` skips a position without one) and is fetched as it
/// is. On disk: offsets 0–4 at epoch 0, 5–9 at epoch 1, the file `0 0 / 1 5`, a commit of 8
/// with epoch -1 inside what epoch 0 once held: no consumer finding. Near miss: the same commit
/// with epoch 0, whose end is 5 — truncation detected.
#[test]
fn a_commit_with_the_undefined_epoch_is_not_validated() {
    let p = || batches_of(TOPIC, 0, &[(0, 5), (1, 5)]);
    let file = [(0, 0), (1, 5)];
    let f = commit_on(p(), &file, (8, Some(-1)));
    assert!(f.is_empty(), "{f:#?}");
    let f = commit_on(p(), &file, (8, Some(0)));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].kind, Kind::CommittedOffsetPastEpochEnd);
    assert_eq!(epoch_end(&f[0]), ("known".into(), 0, 5));
}
