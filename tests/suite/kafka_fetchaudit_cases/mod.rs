//! Kafka-test audit of how a follower truncates its log against the leader's, for the test
//! methods no klogscan test cited before (apache/kafka trunk of 2024-10):
//! `AbstractFetcherThreadTest` and `ReplicaFetcherThreadTest`
//! (core/src/test/scala/unit/kafka/server/), the leader-side validation of a follower's last
//! fetched epoch in `PartitionTest` (core/src/test/scala/unit/kafka/cluster/) and the
//! epoch-cache truncations of `UnifiedLogTest` (core/src/test/scala/unit/kafka/log/).
//!
//! The model read first: `AbstractFetcherThread.truncateToEpochEndOffsets` (the
//! `OffsetsForLeaderEpoch` round trip), `truncateOnFetchResponse` (the diverging epoch of a
//! fetch response, computed by the leader in `Partition.readRecords`), both ending in
//! `getOffsetTruncationState`; `truncateToHighWatermark` (a follower without epochs);
//! `UnifiedLog.endOffsetForEpoch` over `LeaderEpochFileCache.endOffsetFor` on either side.
//!
//! Each case writes the leader's and the followers' log dirs as several brokers leave them
//! just before the follower reconciles (`<root>/broker-<id>/data`, one cluster id), runs
//! `scan`, `verify` and the merge of the brokers' `collect` bundles, and holds klogscan's
//! `replica_divergence` verdict — which copy truncates, to which offset, or nothing when the
//! copies are consistent — to the truncation Kafka computes, with a near miss that flips it.
//! Where the Kafka test's answer comes from a mock no pair of logs can produce, the case
//! builds the logs that give the mock's inputs and asserts what trunk's code computes on
//! them (the doc comment says where the two differ).
#![cfg(feature = "testkit")]

mod fetcher;
mod leader;
mod log;

use crate::kafka_quiet_cluster_cases::{Brokers, Verdict, lines};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};

pub(crate) use crate::kafka_fetcher_truncation_cases::{cat, legacy_log, log as epochs, run};

/// One broker's copy of `orders-0`: broker id, the partition, its checkpointed high
/// watermark, and (when given) the `leader-epoch-checkpoint` written over the testkit's.
struct Copy {
    id: i32,
    p: PartitionBuilder,
    hw: i64,
    checkpoint: Option<&'static str>,
    log_start: Option<i64>,
}

fn copy(id: i32, p: PartitionBuilder, hw: i64) -> Copy {
    Copy {
        id,
        p,
        hw,
        checkpoint: None,
        log_start: None,
    }
}

impl Copy {
    /// The broker's `leader-epoch-checkpoint` is `text` (an epoch its broker assigned without
    /// a batch, or the cache after a truncation).
    fn checkpoint(mut self, text: &'static str) -> Copy {
        self.checkpoint = Some(text);
        self
    }

    /// The broker's `log-start-offset-checkpoint` gives `start` (a `DeleteRecords` inside the
    /// first segment).
    fn log_start(mut self, start: i64) -> Copy {
        self.log_start = Some(start);
        self
    }
}

/// The copies written as their brokers' log dirs, then `scan`, `verify` and the merge.
fn check(copies: Vec<Copy>) -> Verdict {
    let mut b = Brokers::new();
    for c in copies {
        let mut ld = LogDirBuilder::new(c.id)
            .partition(c.p)
            .high_watermark("orders", 0, c.hw);
        if let Some(s) = c.log_start {
            ld = ld.log_start_offset("orders", 0, s);
        }
        let dir = b.write(c.id, "data", ld, None);
        if let Some(text) = c.checkpoint {
            std::fs::write(dir.join("orders-0/leader-epoch-checkpoint"), text).unwrap();
        }
    }
    b.check()
}

/// klogscan's verdict on the pair, as the test states Kafka's: `None` when the copies are
/// consistent (no `replica_divergence`); else where they first differ, which broker
/// truncates to which offset (`None` when the divergence survives or no point is drawn) and
/// the severity.
#[derive(Debug, PartialEq)]
struct Cut {
    at: i64,
    truncates: Option<(i32, i64)>,
    severity: Severity,
}

fn cut_in<'f>(fs: impl IntoIterator<Item = &'f Finding> + Clone) -> Option<Cut> {
    let d: Vec<&Finding> = (fs.clone().into_iter())
        .filter(|f| f.kind == Kind::ReplicaDivergence)
        .collect();
    assert!(d.len() <= 1, "{:#?}", lines(fs));
    let f = d.first()?;
    let t = &f.evidence["truncation"];
    let truncates = t["replica"].as_str().map(|p| {
        let id = (1..10)
            .find(|i| p.contains(&format!("broker-{i}/")))
            .unwrap_or_else(|| panic!("{p}"));
        (id, t["to_offset"].as_i64().unwrap())
    });
    Some(Cut {
        at: f.offset.unwrap(),
        truncates,
        severity: f.severity,
    })
}

/// The verdict of `scan`, which `verify` and the merge of the bundles must repeat.
fn verdict(v: &Verdict) -> Option<Cut> {
    let scan = cut_in(&v.scan.findings);
    assert_eq!(
        scan,
        cut_in(&v.merge.findings),
        "merge: {:#?}",
        lines(&v.merge.findings)
    );
    assert_eq!(
        scan,
        cut_in(v.verify.findings()),
        "verify: {:#?}",
        lines(v.verify.findings())
    );
    scan
}

/// The one `replica_divergence` of the scan (for the evidence beyond [`Cut`]).
fn divergence(v: &Verdict) -> &Finding {
    (v.scan.findings.iter())
        .find(|f| f.kind == Kind::ReplicaDivergence)
        .unwrap_or_else(|| panic!("{:#?}", lines(&v.scan.findings)))
}

fn truncates(at: i64, id: i32, to: i64, severity: Severity) -> Option<Cut> {
    Some(Cut {
        at,
        truncates: Some((id, to)),
        severity,
    })
}

fn survives(at: i64, severity: Severity) -> Option<Cut> {
    Some(Cut {
        at,
        truncates: None,
        severity,
    })
}
