//! The JSON report of `scan --format json` (schema: `docs/report-schema.md`), and the JSON
//! forms of `producers` and `txns`.

use crate::finding::Finding;
use crate::scan::{PartitionReport, ScanReport, Summary};
use crate::state::{ProducerState, TxnStats};
use serde::Serialize;
use std::io::{self, Write};

/// Version of the report schema. Bumped only for incompatible changes; fields may be added.
pub const REPORT_VERSION: u32 = 1;

#[derive(Serialize)]
struct Doc<'a> {
    klogscan_report: u32,
    inputs: &'a [String],
    summary: &'a Summary,
    partitions: &'a [PartitionReport],
    findings: &'a [Finding],
    errors: Vec<PathError>,
    /// The triage summary: findings grouped into incidents (`docs/report-schema.md`).
    incidents: Vec<super::triage::Incident>,
}

#[derive(Serialize)]
struct PathError {
    path: String,
    error: String,
}

/// Write the scan report as one JSON document.
pub fn write_scan(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let doc = Doc {
        klogscan_report: REPORT_VERSION,
        inputs: &report.inputs,
        summary: &report.summary,
        partitions: &report.partitions,
        findings: &report.findings,
        errors: report
            .errors
            .iter()
            .map(|(p, e)| PathError {
                path: p.display().to_string(),
                error: e.clone(),
            })
            .collect(),
        incidents: super::triage::incidents(&report.findings),
    };
    serde_json::to_writer_pretty(&mut *w, &doc)?;
    writeln!(w)
}

#[derive(Serialize)]
struct ProducersDoc<'a> {
    klogscan_producers: u32,
    partitions: Vec<PartitionProducers<'a>>,
}

#[derive(Serialize)]
struct PartitionProducers<'a> {
    topic: &'a str,
    partition: i32,
    path: &'a str,
    producers: &'a [ProducerState],
}

/// Write the rebuilt producer state of every partition.
pub fn write_producers(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let doc = ProducersDoc {
        klogscan_producers: REPORT_VERSION,
        partitions: report
            .partitions
            .iter()
            .map(|p| PartitionProducers {
                topic: &p.topic,
                partition: p.partition,
                path: &p.path,
                producers: &p.outcome.producers,
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &doc)?;
    writeln!(w)
}

#[derive(Serialize)]
struct TxnsDoc<'a> {
    klogscan_txns: u32,
    partitions: Vec<PartitionTxns<'a>>,
}

#[derive(Serialize)]
struct PartitionTxns<'a> {
    topic: &'a str,
    partition: i32,
    path: &'a str,
    committed: u64,
    aborted: u64,
    open: u64,
    empty_commits: u64,
    empty_aborts: u64,
    size: Distribution,
    duration_ms: Distribution,
    open_transactions: &'a [crate::state::OpenTxn],
}

/// min / percentiles / max of a sample (all zero when empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Distribution {
    pub count: u64,
    pub min: i64,
    pub p50: i64,
    pub p90: i64,
    pub p99: i64,
    pub max: i64,
    pub mean: f64,
}

impl Distribution {
    /// Nearest-rank percentiles of `values`.
    pub fn of(values: impl IntoIterator<Item = i64>) -> Self {
        let mut v: Vec<i64> = values.into_iter().collect();
        if v.is_empty() {
            return Distribution::default();
        }
        v.sort_unstable();
        let rank =
            |p: f64| v[(((p / 100.0) * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Distribution {
            count: v.len() as u64,
            min: v[0],
            p50: rank(50.0),
            p90: rank(90.0),
            p99: rank(99.0),
            max: v[v.len() - 1],
            mean: v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64,
        }
    }
}

/// Size and duration distributions of a partition's completed transactions.
pub fn txn_distributions(s: &TxnStats) -> (Distribution, Distribution) {
    (
        Distribution::of(s.sizes.iter().map(|&x| x as i64)),
        Distribution::of(s.durations_ms.iter().copied()),
    )
}

/// Write transaction statistics per partition.
pub fn write_txns(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let doc = TxnsDoc {
        klogscan_txns: REPORT_VERSION,
        partitions: report
            .partitions
            .iter()
            .map(|p| {
                let s = &p.outcome.txn_stats;
                let (size, duration_ms) = txn_distributions(s);
                PartitionTxns {
                    topic: &p.topic,
                    partition: p.partition,
                    path: &p.path,
                    committed: s.committed,
                    aborted: s.aborted,
                    open: p.outcome.open.len() as u64,
                    empty_commits: s.empty_commits,
                    empty_aborts: s.empty_aborts,
                    size,
                    duration_ms,
                    open_transactions: &p.outcome.open,
                }
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &doc)?;
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_nearest_rank() {
        let d = Distribution::of(1..=100);
        assert_eq!(
            (d.count, d.min, d.p50, d.p90, d.p99, d.max),
            (100, 1, 50, 90, 99, 100)
        );
        assert_eq!(Distribution::of([]), Distribution::default());
        let d = Distribution::of([7]);
        assert_eq!((d.p50, d.p99), (7, 7));
    }
}
