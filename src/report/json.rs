//! The JSON report of `scan --format json` (schema: `docs/report-schema.md`), and the JSON
//! forms of `producers` and `txns`.

use super::filter::TxnFilter;
use crate::cluster::txns::stats::{LongTxn, Sizes};
use crate::finding::Finding;
use crate::partition::scan::{PartitionReport, Summary};
use crate::partition::state::{ProducerState, TxnStats};
use crate::results::ScanReport;
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
    /// Cluster-transaction statistics (`docs/report-schema.md`), `null` before the join.
    transactions: Option<TxnSummary<'a>>,
}

/// The cluster-wide transaction statistics, without the per-partition part (the partitions
/// carry their own counts).
#[derive(Serialize)]
struct TxnSummary<'a> {
    cluster_transactions: u64,
    committed: u64,
    aborted: u64,
    empty: u64,
    open: u64,
    partial: u64,
    mixed: u64,
    producers_fenced: u64,
    size: &'a Sizes,
    by_transactional_id: &'a crate::cluster::txns::stats::ByTransactionalId,
    longest: &'a [LongTxn],
}

fn txn_summary(report: &ScanReport) -> Option<TxnSummary<'_>> {
    let s = &report.transactions.as_ref()?.stats;
    Some(TxnSummary {
        cluster_transactions: s.cluster_transactions,
        committed: s.committed,
        aborted: s.aborted,
        empty: s.empty,
        open: s.open,
        partial: s.partial,
        mixed: s.mixed,
        producers_fenced: s.producers_fenced,
        size: &s.size,
        by_transactional_id: &s.by_transactional_id,
        longest: &s.longest,
    })
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
        incidents: super::triage::incidents_in(report),
        transactions: txn_summary(report),
    };
    crate::escape::write_pretty_json(&mut *w, &doc)?;
    writeln!(w)
}

// Serialises an iterator as a JSON array as it goes (no intermediate `Vec`).
use crate::verify::render::Each as Streamed;

#[derive(Serialize)]
struct ProducersDoc<'a, P: Serialize> {
    klogscan_producers: u32,
    partitions: P,
    /// The inputs that could not be read: `unreadable_file` findings and discovery errors
    /// (the command also says so on stderr and exits 2).
    unreadable: Unreadable<'a>,
}

/// What `producers`/`txns` could not read: their tables come from the partitions that were
/// read, so a missing one must be named (never silent).
#[derive(Serialize)]
struct Unreadable<'a> {
    findings: Vec<&'a Finding>,
    errors: Vec<serde_json::Value>,
}

impl<'a> Unreadable<'a> {
    fn of(report: &'a ScanReport) -> Self {
        Unreadable {
            findings: report
                .findings
                .iter()
                .filter(|f| f.kind == crate::finding::Kind::UnreadableFile)
                .collect(),
            errors: report
                .errors
                .iter()
                .map(|(p, e)| serde_json::json!({"path": p.display().to_string(), "error": e}))
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct PartitionProducers<'a> {
    topic: &'a str,
    partition: i32,
    path: &'a str,
    producers: &'a [ProducerState],
}

/// Write the rebuilt producer state of every partition. The document is written as it is
/// serialised (one producer at a time into `w`), whatever the number of producers.
pub fn write_producers(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let doc = ProducersDoc {
        klogscan_producers: REPORT_VERSION,
        unreadable: Unreadable::of(report),
        partitions: Streamed(|| {
            report.partitions.iter().map(|p| PartitionProducers {
                topic: &p.topic,
                partition: p.partition,
                path: &p.path,
                producers: &p.carried.outcome.producers,
            })
        }),
    };
    crate::escape::write_pretty_json(&mut *w, &doc)?;
    writeln!(w)
}

#[derive(Serialize)]
struct TxnsDoc<'a, P: Serialize> {
    klogscan_txns: u32,
    partitions: P,
    /// As in `producers`: the inputs that could not be read.
    unreadable: Unreadable<'a>,
    /// Over cluster transactions (all partitions joined): counts, per transactional id,
    /// the longest ones.
    cluster: Option<TxnSummary<'a>>,
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
    open_transactions: &'a [crate::partition::state::OpenTxn],
    /// Distinct producer ids with transactions in the partition.
    producers: Option<u64>,
    /// Records, batches, bytes and duration of its transactions with data.
    transaction_size: Option<&'a Sizes>,
}

pub use crate::cluster::txns::stats::Distribution;

/// Size and duration distributions of a partition's completed transactions.
pub(crate) fn txn_distributions(s: &TxnStats) -> (Distribution, Distribution) {
    (
        Distribution::of(s.sizes.iter().map(|&x| x as i64)),
        Distribution::of(s.durations_ms.iter().copied()),
    )
}

/// Write transaction statistics per partition (streamed like [`write_producers`]).
pub fn write_txns(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let lookup = report.transactions.as_ref().map(|t| t.stats.by_report());
    let stats_of = |p: &'_ crate::results::PartitionReport| lookup.as_ref()?.get(p);
    let doc = TxnsDoc {
        cluster: txn_summary(report),
        klogscan_txns: REPORT_VERSION,
        unreadable: Unreadable::of(report),
        partitions: Streamed(|| {
            let stats_of = &stats_of;
            report.partitions.iter().map(move |p| {
                let s = &p.carried.outcome.txn_stats;
                let (size, duration_ms) = txn_distributions(s);
                PartitionTxns {
                    topic: &p.topic,
                    partition: p.partition,
                    path: &p.path,
                    committed: s.committed,
                    aborted: s.aborted,
                    open: p.carried.outcome.open.len() as u64,
                    empty_commits: s.empty_commits,
                    empty_aborts: s.empty_aborts,
                    size,
                    duration_ms,
                    open_transactions: &p.carried.outcome.open,
                    producers: stats_of(p).map(|s| s.producers),
                    transaction_size: stats_of(p).map(|s| &s.size),
                }
            })
        }),
    };
    crate::escape::write_pretty_json(&mut *w, &doc)?;
    writeln!(w)
}

#[derive(Serialize)]
struct ClusterDoc<T: Serialize> {
    klogscan_cluster_txns: u32,
    transactions: T,
}

/// Write `txns --cluster`: one object per cluster transaction passing `filter` (streamed
/// like [`write_producers`]).
pub fn write_cluster_txns(
    report: &ScanReport,
    filter: &TxnFilter,
    w: &mut dyn Write,
) -> io::Result<()> {
    let doc = ClusterDoc {
        klogscan_cluster_txns: REPORT_VERSION,
        // Serialised one transaction at a time, whatever their number.
        transactions: Streamed(|| {
            report
                .transactions
                .iter()
                .flat_map(|t| &t.transactions)
                .filter(|t| filter.accepts(t))
        }),
    };
    crate::escape::write_pretty_json(&mut *w, &doc)?;
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
