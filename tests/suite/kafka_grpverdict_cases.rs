//! The group coordinator's load failures only the releases before a fix meet
//! (`evidence.load_fails_in`: KAFKA-19453, KAFKA-19862, KAFKA-20254, KAFKA-20570), decided
//! for the release `verify --broker-version` states: a release with the fix loads the
//! record, so there is no `group_load_failure` for it and the load goes on to the next
//! record that release throws on (here one every 4.x release throws on: a record of one
//! group type for a group of another, `GroupMetadataManager.getOrMaybeCreatePersisted*Group`);
//! a release without it certainly throws there (the message says so, the error stays, and
//! the records after it are never reached by that release's load); with no release (scan,
//! the merge of `collect` bundles, verify without `--broker-version`) both failures keep
//! their scoped wording.
//!
//! Which release carries each fix: `src/partition/groups/release.rs` (read in
//! confluentinc/kafka's 4.0–4.4 branches of 2026-08).
#![cfg(feature = "testkit")]

use crate::kafka_groupaudit_cases::share_tombstones::share_epoch;
use crate::kafka_groupaudit_cases::{Coord, FOO_ID, commit, current, g, group_epoch, tombstone};
use crate::kafka_grpdeltaaudit_cases::subscriptions::{POISON, classic};
use crate::kafka_quiet_cluster_cases::{Brokers, lines};
use crate::kafka_streams_cases as streams;
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request};
use klogscan::testkit::LogDirBuilder;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

/// `recs` as one group's `__consumer_offsets` partition of broker 1, one batch each.
pub(crate) fn write(group: &str, recs: Vec<Spec>) -> Brokers {
    let mut c = Coord::new();
    for r in recs {
        c.batch(group, vec![r]);
    }
    let mut ld = LogDirBuilder::new(1);
    for (n, log) in &c.logs {
        ld = ld.partition(log.builder(*n));
    }
    let mut b = Brokers::new();
    b.write(1, "data", ld, None);
    b
}

/// The `group_load_failure` findings (offset order) of `verify --broker-version v`.
pub(crate) fn verify_at(b: &Brokers, v: &str) -> Vec<Finding> {
    let req = Request::new(b.all()).with_options(ScanOptions::default());
    let r = request::verify(&req, Some(v.parse().unwrap()))
        .unwrap()
        .report;
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    failures(r.findings().cloned().collect())
}

fn failures(fs: Vec<Finding>) -> Vec<Finding> {
    let mut f: Vec<Finding> = (fs.into_iter())
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .collect();
    f.sort_by_key(|f| f.offset);
    f
}

/// The `group_load_failure` findings of `scan`, the merge and `verify` without a release,
/// which must agree (offsets and messages); `scan`'s.
pub(crate) fn unstated(b: &Brokers) -> Vec<Finding> {
    let v = b.check_with(ScanOptions::default());
    let scan = failures(v.scan.findings.clone());
    let merge = failures(v.merge.findings.clone());
    let verify = failures(v.verify.findings().cloned().collect());
    let key = |f: &[Finding]| -> Vec<(Option<i64>, String)> {
        f.iter().map(|f| (f.offset, f.message.clone())).collect()
    };
    assert_eq!(key(&scan), key(&merge), "merge");
    assert_eq!(key(&scan), key(&verify), "verify");
    scan
}

/// `(offset, load_fails_in, evidence.broker_version)` of each failure.
pub(crate) fn shape(f: &[Finding]) -> Vec<(Option<i64>, serde_json::Value, serde_json::Value)> {
    f.iter()
        .map(|f| {
            let ev = &f.evidence;
            (
                f.offset,
                ev.get("load_fails_in").cloned().unwrap_or(json!(null)),
                ev.get("broker_version").cloned().unwrap_or(json!(null)),
            )
        })
        .collect()
}

/// A release without the fix: one failure, at `offset`, certain for `v`, the later
/// failure hidden.
pub(crate) fn assert_certain(f: &[Finding], offset: i64, scope: &str, v: &str, fix: &str) {
    assert_eq!(
        shape(f),
        [(Some(offset), json!(scope), json!(v))],
        "{:#?}",
        lines(f)
    );
    let want = format!("Kafka {v}, the release given (--broker-version), is one without {fix}");
    assert!(f[0].message.contains(&want), "{}", f[0].message);
    assert_eq!(f[0].severity.as_str(), "error");
    assert!(
        !f[0].broker_behaviour.contains("Releases with"),
        "{}",
        f[0].broker_behaviour
    );
}

/// A release with the fix: no failure at the scoped record; the next one, of every 4.x
/// release, at `offset`, counting itself alone.
fn assert_goes_on(f: &[Finding], offset: i64) {
    assert_eq!(
        shape(f),
        [(Some(offset), json!(null), json!(null))],
        "{:#?}",
        lines(f)
    );
    assert_eq!(f[0].evidence["rejected_records"], 1);
}

/// No release: the scoped failure at `scoped` and the later one at `later`, as today.
fn assert_unscoped(f: &[Finding], scoped: i64, scope: &str, later: i64) {
    assert_eq!(
        shape(f),
        [
            (Some(scoped), json!(scope), json!(null)),
            (Some(later), json!(null), json!(null)),
        ],
        "{:#?}",
        lines(f)
    );
    assert!(!f[0].message.contains("--broker-version"));
    assert_eq!(f[0].evidence["rejected_records"], 2);
}

/// KAFKA-19453 (4.1.0 and later, never 4.0.x): a share group epoch tombstone of a group
/// the load does not hold (offset 0), then the share group and a streams record for it
/// (offset 2: "Group s is not a streams group", every 4.x release).
/// 4.0.2: certain at 0, nothing after; 4.1.0 and 4.3.1: the streams record alone; no
/// release: both, scoped. Near miss 3.9.0 (whether a 3.x load skips share record types
/// depends on the 3.x release): unchanged, scoped.
#[test]
fn kafka_19453_decided_by_the_stated_release() {
    const G: &str = "s";
    let b = write(
        G,
        vec![tombstone(11, g(G)), share_epoch(G, 5), streams::meta(G, 10)],
    );
    let scope = "kafka_4_before_kafka_19453";
    assert_certain(&verify_at(&b, "4.0.2"), 0, scope, "4.0.2", "KAFKA-19453");
    assert_goes_on(&verify_at(&b, "4.1.0"), 2);
    assert_goes_on(&verify_at(&b, "4.3.1"), 2);
    assert_unscoped(&unstated(&b), 0, scope, 2);
    assert_unscoped(&verify_at(&b, "3.9.0"), 0, scope, 2);
}

/// KAFKA-19862 (4.0.2, 4.1.2, 4.2.0 and later): member B claims foo-0 at epoch 12 while A
/// holds it at 11 (offset 1: A's release compacted away), then a streams record for the
/// consumer group (offset 3, every 4.x release).
/// 4.0.1 and 4.1.1: certain at 1; 4.0.2, 4.1.2, 4.2.0: the streams record alone; no
/// release: both. Near miss: B at A's own epoch 11 throws in every release (`kafka_4`,
/// no scope to decide): 4.2.0 keeps it, unchanged, and it hides the streams record.
#[test]
fn kafka_19862_decided_by_the_stated_release() {
    const G: &str = "fooup";
    let recs = |b_epoch: i32| {
        vec![
            current(G, "memberIdA", 11, 10, 0, &[(FOO_ID, &[0])]),
            current(G, "memberIdB", b_epoch, b_epoch - 1, 0, &[(FOO_ID, &[0])]),
            current(G, "memberIdA", 13, 12, 0, &[(FOO_ID, &[1])]),
            streams::meta(G, 10),
        ]
    };
    let b = write(G, recs(12));
    let scope = "kafka_4_before_kafka_19862";
    for v in ["4.0.1", "4.1.1"] {
        assert_certain(&verify_at(&b, v), 1, scope, v, "KAFKA-19862");
    }
    for v in ["4.0.2", "4.1.2", "4.2.0"] {
        assert_goes_on(&verify_at(&b, v), 3);
    }
    assert_unscoped(&unstated(&b), 1, scope, 3);

    // Near miss: a claim at the holder's own epoch fails every release.
    let b = write(G, recs(11));
    let f = verify_at(&b, "4.2.0");
    assert_eq!(shape(&f), [(Some(1), json!("kafka_4"), json!(null))]);
    assert_eq!(f[0].evidence["rejected_records"], 2);
}

/// KAFKA-20254 (4.2.1 and later): offsets committed for `G` (a simple classic group),
/// then a streams group's metadata for it (offset 1), then a consumer group's epoch for it
/// (offset 2: "Group … is not a consumer group", every 4.x release).
/// 4.1.0 and 4.2.0: certain at 1; 4.2.1 and 4.3.0: the consumer record alone; no release:
/// both. Near miss 4.0.2 (streams groups are 4.1+): unchanged, scoped.
#[test]
fn kafka_20254_decided_by_the_stated_release() {
    const G: &str = "migrated";
    let b = write(
        G,
        vec![
            commit(G, "foo", 0, 42),
            streams::meta(G, 10),
            group_epoch(G, 3),
        ],
    );
    let scope = "kafka_4_before_kafka_20254";
    for v in ["4.1.0", "4.2.0"] {
        assert_certain(&verify_at(&b, v), 1, scope, v, "KAFKA-20254");
    }
    for v in ["4.2.1", "4.3.0"] {
        assert_goes_on(&verify_at(&b, v), 2);
    }
    assert_unscoped(&unstated(&b), 1, scope, 2);
    assert_unscoped(&verify_at(&b, "4.0.2"), 1, scope, 2);
}

/// KAFKA-20570 (4.2.2, 4.3.2, 4.4.0 and later; never 4.0/4.1): a classic `consumer` group
/// whose member's subscription is version 1 with a topic count of -1 (offset 0), then a
/// consumer group's epoch for it (offset 1: "Group … is not a consumer group", every 4.x
/// release).
/// 4.1.2, 4.2.1, 4.3.1: certain at 0 (4.x broker text); 3.9.0 (≤ 3.x throws too): certain,
/// with the 3.x broker text; 4.2.2, 4.3.2, 4.4.0: the consumer record alone; no release:
/// both. Near miss 2.8.0 (before 3.0: not decided): unchanged, scoped.
#[test]
fn kafka_20570_decided_by_the_stated_release() {
    const G: &str = "groupId";
    let b = write(G, vec![classic("consumer", &POISON), group_epoch(G, 3)]);
    let scope = "kafka_3_and_4_before_kafka_20570";
    for v in ["4.1.2", "4.2.1", "4.3.1"] {
        let f = verify_at(&b, v);
        assert_certain(&f, 0, scope, v, "KAFKA-20570");
        assert!(f[0].broker_behaviour.contains("Kafka 4.x"));
    }
    let f = verify_at(&b, "3.9.0");
    assert_certain(&f, 0, scope, "3.9.0", "KAFKA-20570");
    assert!(f[0].broker_behaviour.contains("Kafka ≤ 3.x"));
    assert!(!f[0].broker_behaviour.contains("NOT_COORDINATOR"));
    for v in ["4.2.2", "4.3.2", "4.4.0"] {
        assert_goes_on(&verify_at(&b, v), 1);
    }
    assert_unscoped(&unstated(&b), 0, scope, 1);
    assert_unscoped(&verify_at(&b, "2.8.0"), 0, scope, 1);
}
