//! Kafka-test audit of the replication integration tests across brokers, for the methods no
//! klogscan test cited before: `EpochDrivenReplicationProtocolAcceptanceTest`
//! (core/src/test/scala/unit/kafka/server/epoch/, apache/kafka before KAFKA-17612 removed it
//! with ZooKeeper mode) and `ReassignPartitionsCommandTest` (tools/src/test/java/org/apache/
//! kafka/tools/reassign/; `ReassignPartitionsIntegrationTest` before KAFKA-14595; the 2024-10
//! trunk and the 2026-08 confluentinc/kafka trunk), its alter-log-dirs flows included, and
//! the 2026 trunk's Java `UncleanLeaderElectionTest` (its 2024-10 Scala methods and
//! `LeaderEpochIntegrationTest` are cited by `kafka_electaudit_cases::unclean` and
//! `kafka_fetchaudit_cases::leader`).
//!
//! The model read first: on the follower `AbstractFetcherThread.truncateToEpochEndOffsets`
//! over `LeaderEpochFileCache.endOffsetFor` (KIP-101, KIP-279); on the controller
//! `ReplicationControlManager.changePartitionReassignment`, `PartitionChangeBuilder.
//! completeReassignmentIfNeeded` and `electLeader`, `PartitionReassignmentRevert` (a
//! cancellation); on the brokers `ReplicaManager.applyDelta` (a replica no longer assigned is
//! stopped and deleted: `LogManager.asyncDelete`), `ReplicaAlterLogDirsThread` and
//! `LogManager.replaceCurrentWithFutureLog` (the swap of an intra-broker move); on the load
//! path `LogManager.loadLogs` (two live copies of one partition stop the start),
//! `isStrayKraftReplica` and `recoverAbandonedFutureLogs`.
//!
//! Each case writes every broker's log dirs as the test leaves them (`<root>/broker-<id>/…`,
//! one cluster id; for the KRaft flows each with its copy of the metadata log the test's
//! controller writes), runs `scan`, `verify` and the merge of the brokers' `collect` bundles
//! (`kafka_quiet_cluster_cases::Brokers::check`: the three must agree) and asserts what the
//! Kafka test asserts, with a near miss that flips the answer.
#![cfg(feature = "testkit")]

mod cancel;
mod epoch;
mod movedirs;
mod reassign;
mod unclean;

use crate::kafka_imgaudit_cases::{all_lines, of_kind};
use crate::kafka_quiet_cluster_cases::Verdict;
use klogscan::finding::{Finding, Kind, Severity};

/// What the one `replica_divergence` of scan, verify and the merge says (they must agree):
/// where the copies first differ, which broker truncates to which offset (`None`: the
/// divergence survives or no point is drawn), the severity. `None`: no divergence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cut {
    pub at: i64,
    pub truncates: Option<(i32, i64)>,
    pub severity: Severity,
}

pub(crate) fn cut_of(fs: &[&Finding]) -> Option<Cut> {
    assert!(fs.len() <= 1, "{:#?}", fs.iter().map(|f| &f.message));
    let f = fs.first()?;
    let t = &f.evidence["truncation"];
    let truncates = t["replica"].as_str().map(|p| {
        let tail = p.split("broker-").nth(1).unwrap_or_else(|| panic!("{p}"));
        let id: i32 = tail.split('/').next().unwrap().parse().unwrap();
        (id, t["to_offset"].as_i64().unwrap())
    });
    Some(Cut {
        at: f.offset.unwrap(),
        truncates,
        severity: f.severity,
    })
}

/// The `replica_divergence` verdict of `v` (scan's; verify's and the merge's must equal it).
pub(crate) fn cut(v: &Verdict) -> Option<Cut> {
    let [s, ve, m] = of_kind(v, Kind::ReplicaDivergence);
    let scan = cut_of(&s);
    assert_eq!(scan, cut_of(&ve), "verify: {}", all_lines(v));
    assert_eq!(scan, cut_of(&m), "merge: {}", all_lines(v));
    scan
}

/// The findings of `kind` of scan, asserted equal (kind, broker, partition, offset, severity)
/// in verify and the merge.
pub(crate) fn agreed(v: &Verdict, kind: Kind) -> Vec<&Finding> {
    let [s, ve, m] = of_kind(v, kind);
    let key = |fs: &[&Finding]| -> Vec<_> {
        let mut k: Vec<_> = (fs.iter())
            .map(|f| {
                let p = (f.topic.clone(), f.partition, f.offset, f.severity);
                (f.source.broker_id, p)
            })
            .collect();
        k.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
        k
    };
    assert_eq!(key(&s), key(&ve), "verify: {}", all_lines(v));
    assert_eq!(key(&s), key(&m), "merge: {}", all_lines(v));
    s
}
