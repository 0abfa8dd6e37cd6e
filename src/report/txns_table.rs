//! `klogscan txns` tables: per partition (klog's `txn-stat`), per transactional id, the
//! longest transactions, and with `--cluster` one row per cluster transaction — fitted to
//! the width as every table ([`write_fitted`]). Re-exported by [`super::table`].

use super::format_ms;
use super::json::txn_distributions;
use super::labels::Labels;
use super::style::{Layout, Shape, Style, wrap, write_fitted};
use super::table::{LARGE_TABLE_ROWS, empty_result, esc, opt, warn_large_table};
use crate::results::ScanReport;
use std::io::{self, Write};

/// Render `txns` for a file or a pipe: see [`write_txns_with`].
pub fn write_txns(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    write_txns_with(report, &Style::default(), w)
}

/// Render `txns`: transaction statistics per partition (klog's `txn-stat`), partitions
/// labelled as in `scan`'s tables (a legend of the paths after them).
pub fn write_txns_with(report: &ScanReport, style: &Style, w: &mut dyn Write) -> io::Result<()> {
    if empty_result(report, w)? {
        return Ok(());
    }
    warn_large_table(report.partitions.len(), "transaction statistics");
    let labels = Labels::new(report, style.width, style.unicode);
    let rows: Vec<Vec<String>> = report
        .partitions
        .iter()
        .zip(&labels.partitions)
        .map(|(p, label)| {
            let s = &p.carried.outcome.txn_stats;
            let (size, dur) = txn_distributions(s);
            vec![
                label.clone(),
                s.committed.to_string(),
                s.aborted.to_string(),
                p.carried.outcome.open.len().to_string(),
                (s.empty_commits + s.empty_aborts).to_string(),
                format!("{}/{}/{}/{}", size.min, size.p50, size.p99, size.max),
                format!("{}/{}/{}/{}", dur.min, dur.p50, dur.p99, dur.max),
            ]
        })
        .collect();
    let header = [
        "partition",
        "committed",
        "aborted",
        "open",
        "empty",
        "size min/p50/p99/max",
        "duration ms min/p50/p99/max",
    ];
    let layouts: [Layout<'_>; 1] = [&[
        (0, "partition"),
        (1, "committed"),
        (2, "aborted"),
        (3, "open"),
        (4, "empty"),
    ]];
    let label = Shape {
        lines: Some(0),
        ..Shape::default()
    };
    let mut blocks = rows.chunks(LARGE_TABLE_ROWS).peekable();
    if blocks.peek().is_none() {
        write_fitted(style, label, &header, &[], &layouts, w)?;
    }
    for block in blocks {
        write_fitted(style, label, &header, block, &layouts, w)?;
    }
    let width = usize::from(style.width);
    for p in &report.partitions {
        for o in &p.carried.outcome.open {
            let line = format!(
                "open: {}-{} producer {}@{} since offset {} (last activity {})",
                esc(&p.topic),
                p.partition,
                o.producer_id,
                o.producer_epoch,
                o.first_offset,
                format_ms(o.last_timestamp)
            );
            writeln!(w, "{}", wrap(&line, width, 0, 2))?;
        }
    }
    labels.write_legend(style.width, w)?;
    if let Some(a) = &report.transactions {
        write_txn_stats(&a.stats, style, w)?;
    }
    Ok(())
}

fn dist4(d: &crate::cluster::txns::stats::Distribution) -> String {
    format!("{}/{}/{}/{}", d.min, d.p50, d.p99, d.max)
}

/// The cluster part of `txns`: totals, per transactional id, the longest transactions.
fn write_txn_stats(
    s: &crate::cluster::txns::stats::TxnStatistics,
    style: &Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    let line = format!(
        "cluster transactions: {} ({} committed, {} aborted, {} empty, {} open, {} partial, {} mixed); producers fenced: {}",
        s.cluster_transactions,
        s.committed,
        s.aborted,
        s.empty,
        s.open,
        s.partial,
        s.mixed,
        s.producers_fenced
    );
    writeln!(w, "\n{}", wrap(&line, usize::from(style.width), 0, 2))?;
    let header = [
        "transactional id",
        "producer ids",
        "committed",
        "aborted",
        "empty",
        "open",
        "partial/mixed",
        "fenced",
        "records min/p50/p99/max",
        "bytes min/p50/p99/max",
        "duration ms min/p50/p99/max",
    ];
    let rows: Vec<Vec<String>> = s
        .by_transactional_id
        .iter()
        .map(|r| {
            vec![
                r.transactional_id
                    .as_deref()
                    .map_or_else(|| "(unknown)".into(), esc),
                // Spaced: a long list wraps between ids.
                r.producer_ids
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                r.committed.to_string(),
                r.aborted.to_string(),
                r.empty.to_string(),
                r.open.to_string(),
                format!("{}/{}", r.partial, r.mixed),
                r.fenced.to_string(),
                dist4(&r.size.records),
                dist4(&r.size.bytes),
                dist4(&r.size.duration_ms),
            ]
        })
        .collect();
    let layouts: [Layout<'_>; 2] = [
        &[
            (0, "transactional id"),
            (1, "producer ids"),
            (2, "committed"),
            (3, "aborted"),
            (4, "empty"),
            (5, "open"),
            (6, "partial/mixed"),
            (7, "fenced"),
        ],
        // The producer ids tell apart the rows of an unknown transactional id.
        &[
            (0, "transactional id"),
            (1, "producer ids"),
            (2, "committed"),
            (3, "aborted"),
            (5, "open"),
        ],
    ];
    write_fitted(style, Shape::default(), &header, &rows, &layouts, w)?;
    if s.longest.is_empty() {
        return Ok(());
    }
    let header = [
        "longest",
        "transactional id",
        "producer",
        "outcome",
        "start",
        "duration ms",
        "partitions",
        "records",
    ];
    let rows: Vec<Vec<String>> = s
        .longest
        .iter()
        .enumerate()
        .map(|(i, l)| {
            vec![
                (i + 1).to_string(),
                l.transactional_id
                    .as_deref()
                    .map_or_else(|| "-".into(), esc),
                format!("{}@{}", l.producer_id, l.producer_epoch),
                l.outcome.name().to_string(),
                format_ms(l.start_ms),
                l.duration_ms.to_string(),
                l.partitions.to_string(),
                l.records.to_string(),
            ]
        })
        .collect();
    let layouts: [Layout<'_>; 1] = [&[
        (0, "longest"),
        (1, "transactional id"),
        (2, "producer"),
        (3, "outcome"),
        (5, "duration ms"),
    ]];
    write_fitted(style, Shape::default(), &header, &rows, &layouts, w)
}

/// Render `txns --cluster` for a file or a pipe: see [`write_cluster_txns_with`].
pub fn write_cluster_txns(
    report: &ScanReport,
    filter: &super::filter::TxnFilter,
    w: &mut dyn Write,
) -> io::Result<()> {
    write_cluster_txns_with(report, filter, &Style::default(), w)
}

/// Render `txns --cluster`: one row per cluster transaction passing `filter`, in tables
/// of at most [`LARGE_TABLE_ROWS`] rows (stderr says so above that).
pub fn write_cluster_txns_with(
    report: &ScanReport,
    filter: &super::filter::TxnFilter,
    style: &Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    let rows: Vec<&crate::cluster::txns::ClusterTxn> = report
        .transactions
        .iter()
        .flat_map(|a| &a.transactions)
        .filter(|x| filter.accepts(x))
        .collect();
    warn_large_table(rows.len(), "cluster transactions");
    let mut blocks = rows.chunks(LARGE_TABLE_ROWS).peekable();
    if blocks.peek().is_none() {
        write_cluster_txns_table(style, &[], w)?;
    }
    for block in blocks {
        write_cluster_txns_table(style, block, w)?;
    }
    writeln!(w, "{} cluster transaction(s)", rows.len())
}

fn write_cluster_txns_table(
    style: &Style,
    rows: &[&crate::cluster::txns::ClusterTxn],
    w: &mut dyn Write,
) -> io::Result<()> {
    let header = [
        "transactional id",
        "producer",
        "partitions (first offset → marker offset)",
        "outcome",
        "grouping",
        "start",
        "end",
        "duration ms",
    ];
    let rows: Vec<Vec<String>> = rows.iter().map(|x| cluster_txn_row(x)).collect();
    let layouts: [Layout<'_>; 1] = [&[
        (0, "transactional id"),
        (1, "producer"),
        (2, "partitions (first offset → marker offset)"),
        (3, "outcome"),
        (7, "duration ms"),
    ]];
    write_fitted(
        style,
        Shape {
            lines: Some(2),
            ..Shape::default()
        },
        &header,
        &rows,
        &layouts,
        w,
    )
}

/// One cluster transaction's cells: its partitions one a line.
fn cluster_txn_row(x: &crate::cluster::txns::ClusterTxn) -> Vec<String> {
    let parts: Vec<String> = x
        .partitions
        .iter()
        .map(|p| {
            format!(
                "{}-{} {} → {}",
                esc(&p.topic),
                p.partition,
                p.first_offset,
                match p.marker_offset {
                    Some(m) => format!("{m} {}", p.end.name()),
                    None => "open".into(),
                }
            )
        })
        .collect();
    vec![
        x.transactional_id
            .as_deref()
            .map_or_else(|| "-".into(), esc),
        format!(
            "{}@{}{}",
            x.producer_id,
            x.producer_epoch,
            x.marker_epoch
                .filter(|m| *m != x.producer_epoch)
                .map(|m| format!(" (markers @{m})"))
                .unwrap_or_default()
        ),
        parts.join("\n"),
        x.outcome.name().to_string(),
        x.grouping.name().to_string(),
        format_ms(x.start_ms),
        x.end_ms.map(format_ms).unwrap_or_else(|| "-".into()),
        opt(x.duration_ms),
    ]
}
