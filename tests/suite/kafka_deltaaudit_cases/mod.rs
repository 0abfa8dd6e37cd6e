//! The Kafka tests added between apache/kafka trunk of 2024-10 and trunk of 2026-08 (with
//! Confluent's merges; its `4.2`–`4.4` branches say which release has a change) in the
//! classes that state what transactions and producer state leave on disk:
//! `TransactionCoordinatorTest`, `TransactionStateManagerTest`, `TransactionMetadataTest`,
//! `ProducerStateManagerTest`, `UnifiedLogTest`'s transaction methods — the methods no test
//! cited before.
//!
//! Each case writes what the coordinator and the partition leaders leave on disk with the
//! testkit (`__transaction_state`, the data partitions with their markers), runs `scan`,
//! `verify` and the merge of the brokers' `collect` bundles where a cluster verdict is
//! involved, and asserts what the newer Kafka does, with the release that changed it where
//! an older one behaves otherwise. Each has a near miss that flips the answer.
#![cfg(feature = "testkit")]

mod load;
mod markers;
mod rotation;

use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_txnstate_cases::{SEC, opts, reports};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::txnlog::TxnValue;

/// A TV2 value (v1, `ClientTransactionVersion` 2) of `pid`/`epoch` in `state`, listing
/// `parts`, updated at `t` (started at `start`), with `PreviousProducerId` `prev` and
/// `NextProducerId` `next`; timeout 60 s.
pub(crate) fn tv2(
    (pid, epoch): (i64, i16),
    state: u8,
    parts: &[(&str, &[i32])],
    (t, start): (i64, i64),
    (prev, next): (i64, i64),
) -> TxnValue {
    crate::kafka_txnstate_cases::value((pid, epoch), state, parts, (t, start), 60_000)
        .v1(prev, next, 2)
}

/// `(kind, severity, evidence.shape or evidence.anomaly)` of the findings at warning or
/// above, and of every `transaction_state_anomaly` and exhaustion finding, sorted.
pub(crate) fn verdicts(fs: &[&Finding]) -> Vec<(Kind, Severity, String)> {
    let mut out: Vec<_> = (fs.iter())
        .filter(|f| {
            f.severity >= Severity::Warning
                || matches!(
                    f.kind,
                    Kind::TransactionStateAnomaly
                        | Kind::ProducerStuckAtExhaustedEpoch
                        | Kind::ProducerFencedOnRetryAfterFailover
                )
        })
        .map(|f| {
            let s = |k: &str| f.evidence[k].as_str().unwrap_or("").to_string();
            let what = [s("shape"), s("anomaly")].concat();
            (f.kind, f.severity, what)
        })
        .collect();
    out.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    out
}
