//! The constructor's read of the file, as every new cache reads it
//! (`LeaderEpochFileCacheTest.shouldPersistEpochsBetweenInstances`): since 2.7
//! (`LeaderEpochFileCache` rewritten over a `TreeMap`, KIP-595) each entry goes through
//! `assign` — so a file `writeToFile` never writes (entries going back in epoch or offset) is
//! loaded as the append path would have left it
//! (`LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs`,
//! `LeaderEpochFileCacheTest.shouldEnforceOffsetsIncreaseMonotonically`), and a negative epoch
//! or offset throws `IllegalArgumentException`. Brokers before 2.7 kept the file's entries as
//! they were.

use super::{BrokerVersion, Written, batches, clean, write};
use klogscan::finding::{Kind, Severity};
use serde_json::json;

/// A current broker (the constructor reads the file through `assign`).
const CURRENT: Option<BrokerVersion> = Some(BrokerVersion(3, 9, 0));

/// Files whose entries go back, each loaded by a current broker as `1 0 / 3 5`: `2 6` then `3
/// 5` (an offset going back drops `2 6`), `3 6` then `3 5` (the same epoch from an earlier
/// offset replaces it), `3 5` then `3 6` (the same epoch from a later offset is skipped).
const GOING_BACK: [&[(i32, i64)]; 3] = [
    &[(1, 0), (2, 6), (3, 5)],
    &[(1, 0), (3, 6), (3, 5)],
    &[(1, 0), (3, 5), (3, 6)],
];

/// Each file of [`GOING_BACK`] beside offsets 0–4 at epoch 1 and 5–7 at epoch 3: a current
/// broker's cache after the load is `1 0 / 3 5`, the batches' own — nothing is wrong with the
/// cache it answers from, so no `leader_epoch_checkpoint_mismatch` (the file is not one Kafka
/// writes; what matters to a follower or a consumer is what the load keeps).
#[test]
fn a_file_going_back_is_loaded_as_assign_leaves_it() {
    for file in GOING_BACK {
        let w = write(clean(), batches(0, &[(1, 5), (3, 3)]), file);
        let v = w.verify_as(CURRENT);
        let m = super::of_kind(v.findings(), Kind::LeaderEpochCheckpointMismatch);
        assert!(m.is_empty(), "{file:?}: {m:#?}");
    }
}

/// The near misses of [`a_file_going_back_is_loaded_as_assign_leaves_it`]: the same files where
/// the cache they load is wrong — beside offsets 0–5 at epoch 1 and 6–7 at epoch 2, a current
/// broker's `1 0 / 3 5` gives epoch 3 at 5 where the batch carries 1 — and any such file for a
/// broker before 2.7, which keeps it as it is: reported.
#[test]
fn a_file_going_back_to_a_wrong_cache_is_reported() {
    for file in GOING_BACK {
        let w = write(clean(), batches(0, &[(1, 6), (2, 2)]), file);
        let m = super::of_kind(
            w.verify_as(CURRENT).findings(),
            Kind::LeaderEpochCheckpointMismatch,
        );
        assert_eq!(m.len(), 1, "{file:?}: {m:#?}");
        let w = write(clean(), batches(0, &[(1, 5), (3, 3)]), file);
        let old = Some(BrokerVersion(2, 6, 0));
        let m = super::of_kind(
            w.verify_as(old).findings(),
            Kind::LeaderEpochCheckpointMismatch,
        );
        assert_eq!(m.len(), 1, "{file:?}: {m:#?}");
    }
}

/// A negative epoch or start offset in the file: the constructor's `assign` throws
/// `IllegalArgumentException` ("Received invalid partition leader epoch entry"), which is no
/// `IOException`: `LogManager.loadLogs` rethrows it and the broker does not start. Kafka's
/// answer is a refused file (`evidence.java_exception` `IllegalArgumentException`, the broker
/// not starting). Near miss: epoch 0 in place of -1 — the entry is dropped by the next one at
/// the same offset, the load is whole: quiet.
#[test]
fn a_negative_entry_stops_the_load() {
    let p = || batches(0, &[(1, 5), (3, 3)]);
    for file in [&[(-1, 0), (1, 0), (3, 5)][..], &[(1, 0), (3, 5), (4, -2)]] {
        let w = write(clean(), p(), file);
        let v = w.verify_as(CURRENT);
        let f: Vec<_> = (v.findings())
            .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
            .collect();
        assert_eq!(f.len(), 1, "{file:?}: {f:#?}");
        assert_eq!(f[0].evidence["java_exception"], "IllegalArgumentException");
        assert!(f[0].broker_behaviour.contains("does not start"), "{f:#?}");
    }
    write(clean(), p(), &[(0, 0), (1, 0), (3, 5)]).assert_quiet();
}

// ----- which broker loads the file -------------------------------------------------------

/// Make `w`'s log dir a KRaft node's (`meta.properties` version 1): KRaft exists only since
/// 2.8, so without `--broker-version` its constructor is known to run each entry through
/// `assign`.
fn kraft(w: &Written) {
    let meta = crate::kafka_quiet_cluster_cases::meta_v1(1, "lec");
    std::fs::write(w.log_dir().join("meta.properties"), meta).unwrap();
}

/// The `leader_epoch_checkpoint_mismatch` findings of `v`.
fn epoch_findings(v: &klogscan::verify::VerifyReport) -> Vec<klogscan::finding::Finding> {
    (v.findings())
        .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
        .cloned()
        .collect()
}

/// A KRaft log dir, no `--broker-version`: the files going back are loaded as `assign`
/// leaves them (quiet over the batches' lineage, reported over another), and a negative entry
/// stops the start (an error). Near miss: the same log dir in ZooKeeper mode (version 0),
/// below.
#[test]
fn a_kraft_log_dir_proves_the_constructor_assigns() {
    for file in GOING_BACK {
        let w = write(clean(), batches(0, &[(1, 5), (3, 3)]), file);
        kraft(&w);
        let m = epoch_findings(&w.verify());
        assert!(m.is_empty(), "{file:?}: {m:#?}");
        let w = write(clean(), batches(0, &[(1, 6), (2, 2)]), file);
        kraft(&w);
        let m = epoch_findings(&w.verify());
        assert_eq!(m.len(), 1, "{file:?}: {m:#?}");
        assert_eq!(m[0].severity, Severity::Warning, "{m:#?}");
        assert!(!m[0].message.contains("before 2.7"), "{m:#?}");
        assert_eq!(m[0].evidence["loaded_by_assign"], json!([[1, 0], [3, 5]]));
    }
    let w = write(
        clean(),
        batches(0, &[(1, 5), (3, 3)]),
        &[(-1, 0), (1, 0), (3, 5)],
    );
    kraft(&w);
    let m = epoch_findings(&w.verify());
    assert_eq!(m.len(), 1, "{m:#?}");
    assert_eq!(m[0].severity, Severity::Error, "{m:#?}");
    assert_eq!(m[0].evidence["java_exception"], "IllegalArgumentException");
    assert!(!m[0].broker_behaviour.contains("before 2.7"), "{m:#?}");
}

/// Without `--broker-version` and in a ZooKeeper-mode log dir both readings hold: a file
/// going back whose `assign`-loaded cache is right is an info saying only a broker before
/// 2.7 answers from the entries as written; one whose loaded cache is wrong too stays a
/// warning; a negative entry is a warning naming 2.7+ as the broker that does not start.
/// Near miss: `--broker-version 2.6`, whose constructor keeps the entries as read — no
/// refusal, the entries compared as they are.
#[test]
fn an_unknown_version_says_which_broker_each_reading_needs() {
    for file in GOING_BACK {
        let w = write(clean(), batches(0, &[(1, 5), (3, 3)]), file);
        let m = epoch_findings(&w.verify());
        assert_eq!(m.len(), 1, "{file:?}: {m:#?}");
        assert_eq!(m[0].severity, Severity::Info, "{m:#?}");
        assert!(
            m[0].message
                .contains("not in ascending epoch and offset order")
                && m[0].message.contains("only for a broker before 2.7")
                && m[0].message.contains("1 from 0, 3 from 5"),
            "{m:#?}"
        );
        let w = write(clean(), batches(0, &[(1, 6), (2, 2)]), file);
        let m = epoch_findings(&w.verify());
        assert_eq!(m.len(), 1, "{file:?}: {m:#?}");
        assert_eq!(m[0].severity, Severity::Warning, "{m:#?}");
        assert!(m[0].message.contains("wrong too"), "{m:#?}");
    }
    let p = || batches(0, &[(1, 5), (3, 3)]);
    for file in [&[(-1, 0), (1, 0), (3, 5)][..], &[(1, 0), (3, 5), (4, -2)]] {
        let m = epoch_findings(&write(clean(), p(), file).verify());
        assert_eq!(m.len(), 1, "{file:?}: {m:#?}");
        assert_eq!(m[0].severity, Severity::Warning, "{m:#?}");
        assert_eq!(m[0].evidence["java_exception"], "IllegalArgumentException");
        let b = &m[0].broker_behaviour;
        assert!(
            b.contains("does not start") && b.contains("before 2.7"),
            "{m:#?}"
        );
    }
    let old = Some(BrokerVersion(2, 6, 0));
    let m = epoch_findings(&write(clean(), p(), &[(-1, 0), (1, 0), (3, 5)]).verify_as(old));
    assert!(m.is_empty(), "{m:#?}");
    let m = epoch_findings(&write(clean(), p(), &[(1, 0), (3, 5), (4, -2)]).verify_as(old));
    assert_eq!(m.len(), 1, "{m:#?}");
    assert!(m[0].evidence["java_exception"].is_null(), "{m:#?}");
    assert!(m[0].message.contains("not in ascending"), "{m:#?}");
}
