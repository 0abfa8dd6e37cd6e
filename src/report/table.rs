//! Human tables (comfy-table) for `scan`, `producers` and `txns`.

use super::format_ms;
use super::json::txn_distributions;
use crate::finding::Severity;
use crate::scan::ScanReport;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::io::{self, Write};

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if t.width().is_none() {
        // Not a terminal: wrap at a width that reads well in a file or a pager.
        t.set_width(140);
    }
    t.set_header(header.to_vec());
    t
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

/// Text from the evidence (names, messages quoting it), control characters escaped
/// ([`crate::escape`]): a table must not carry terminal commands or forged lines.
fn esc(s: &str) -> String {
    crate::escape::text(s).into_owned()
}

/// `topic-partition`, plus the path's last components when the same partition appears more
/// than once (several brokers' copies of one partition).
fn partition_labels(report: &ScanReport) -> Vec<String> {
    let mut counts = std::collections::HashMap::new();
    for p in &report.partitions {
        *counts.entry((&p.topic, p.partition)).or_insert(0) += 1;
    }
    report
        .partitions
        .iter()
        .map(|p| {
            let base = format!("{}-{}", esc(&p.topic), p.partition);
            if counts[&(&p.topic, p.partition)] > 1 {
                // The two directories above the partition dir: enough to tell copies apart
                // (`broker-1/data`, `broker-2/data`).
                let path = std::path::Path::new(&p.path);
                let above: Vec<String> = path
                    .ancestors()
                    .skip(1)
                    .take(2)
                    .filter_map(|d| d.file_name().map(|n| esc(&n.to_string_lossy())))
                    .collect();
                let above: Vec<&str> = above.iter().rev().map(String::as_str).collect();
                format!("{base} ({})", above.join("/"))
            } else {
                base
            }
        })
        .collect()
}

/// The broker a source names: its `node.id`/`broker.id` (with the first 8 characters of
/// the cluster id when the report spans several clusters), else the log dir's name.
fn broker_label(s: &crate::finding::Source, with_cluster: bool) -> String {
    let b = match (s.broker_id, &s.log_dir) {
        (Some(b), _) => b.to_string(),
        (None, Some(d)) => {
            let name = std::path::Path::new(d)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| d.clone());
            format!("? ({name})")
        }
        (None, None) => "?".to_string(),
    };
    match (&s.cluster_id, with_cluster) {
        (Some(c), true) => format!("{b}@{}", c.chars().take(8).collect::<String>()),
        _ => b,
    }
}

/// `Some(with_cluster)` when the partitions come from several brokers (then tables get a
/// broker column, naming the cluster too when there are several).
fn broker_column(report: &ScanReport) -> Option<bool> {
    let clusters: std::collections::BTreeSet<Option<&str>> = report
        .partitions
        .iter()
        .map(|p| p.source.cluster_id.as_deref())
        .collect();
    let with_cluster = clusters.len() > 1;
    let brokers: std::collections::BTreeSet<String> = report
        .partitions
        .iter()
        .map(|p| broker_label(&p.source, true))
        .collect();
    (brokers.len() > 1).then_some(with_cluster)
}

/// Prepend the broker column's header or value when `on`.
fn with_broker<T>(on: bool, broker: T, mut row: Vec<T>) -> Vec<T> {
    if on {
        row.insert(0, broker);
    }
    row
}

/// Render the scan report: a per-partition summary, then findings grouped by severity.
pub fn write_scan(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let labels = partition_labels(report);
    let column = broker_column(report);
    let brokers = column.is_some();
    let with_cluster = column == Some(true);
    let mut t = table(&with_broker(
        brokers,
        "broker",
        vec![
            "partition",
            "segments",
            "batches",
            "records",
            "bytes",
            "log start",
            "LEO",
            "LSO",
            "txns c/a/o",
            "producers",
            "findings E/W/I",
        ],
    ));
    for (p, label) in report.partitions.iter().zip(&labels) {
        let (mut e, mut wn, mut i) = (0, 0, 0);
        for f in report.findings.get(p.finding_range.clone()).unwrap_or(&[]) {
            match f.severity {
                Severity::Error => e += 1,
                Severity::Warning => wn += 1,
                Severity::Info => i += 1,
            }
        }
        let lso = match (p.last_stable_offset, p.log_end_offset) {
            // A non-live copy serves no consumer: its LSO pins nothing.
            (Some(l), Some(end)) if l < end && p.source.copy.is_live() => {
                format!("{l} (pinned)")
            }
            (l, _) => opt(l),
        };
        let label = if p.source.copy.is_live() {
            label.clone()
        } else {
            format!("{label} [{} copy]", p.source.copy.as_str())
        };
        t.add_row(with_broker(
            brokers,
            broker_label(&p.source, with_cluster),
            vec![
                label,
                p.segments.to_string(),
                p.batches.to_string(),
                p.records.to_string(),
                p.bytes.to_string(),
                opt(p.log_start_offset),
                opt(p.log_end_offset),
                lso,
                format!(
                    "{}/{}/{}",
                    p.transactions.committed, p.transactions.aborted, p.transactions.open
                ),
                p.producers.to_string(),
                format!("{e}/{wn}/{i}"),
            ],
        ));
    }
    writeln!(w, "{t}")?;
    for (p, label) in report.partitions.iter().zip(&labels) {
        if let Some(tr) = &p.truncation {
            writeln!(
                w,
                "recovery of {label} would truncate {} at byte {}{} ({})",
                esc(&tr.segment),
                tr.position,
                tr.offset
                    .map(|o| format!(", offset {o}"))
                    .unwrap_or_default(),
                esc(&tr.reason)
            )?;
        }
    }
    let s = &report.summary;
    writeln!(
        w,
        "{} partitions, {} segments, {} batches, {} records, {} bytes; findings: {} error, {} warning, {} info",
        s.partitions,
        s.segments,
        s.batches,
        s.records,
        s.bytes,
        s.findings.error,
        s.findings.warning,
        s.findings.info
    )?;
    if let Some(t) = report
        .transactions
        .as_ref()
        .filter(|t| !t.transactions.is_empty())
    {
        let s = &t.stats;
        writeln!(
            w,
            "cluster transactions: {} ({} committed, {} aborted, {} empty, {} open, {} partial, {} mixed)",
            s.cluster_transactions, s.committed, s.aborted, s.empty, s.open, s.partial, s.mixed
        )?;
    }
    if s.non_live.partitions > 0 {
        writeln!(
            w,
            "of which {} non-live copies (-future/-delete/-stray, not served to consumers); their findings: {} error, {} warning, {} info",
            s.non_live.partitions, s.non_live.error, s.non_live.warning, s.non_live.info
        )?;
    }
    for sev in [Severity::Error, Severity::Warning, Severity::Info] {
        let fs: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity == sev)
            .collect();
        if fs.is_empty() {
            continue;
        }
        writeln!(w, "\n{} ({})", sev.as_str().to_uppercase(), fs.len())?;
        let mut t = table(&with_broker(
            brokers,
            "broker",
            vec!["kind", "partition", "offset", "producer", "message"],
        ));
        for f in &fs {
            t.add_row(with_broker(
                brokers,
                broker_label(&f.source, with_cluster),
                vec![
                    f.kind.id().to_string(),
                    if f.topic.is_empty() {
                        "-".to_string()
                    } else {
                        format!("{}-{}", esc(&f.topic), f.partition)
                    },
                    opt(f.offset),
                    match (f.producer_id, f.producer_epoch) {
                        (Some(p), Some(e)) => format!("{p}@{e}"),
                        (Some(p), None) => p.to_string(),
                        _ => "-".into(),
                    },
                    esc(&f.message),
                ],
            ));
        }
        writeln!(w, "{t}")?;
        for f in fs.iter().filter(|f| f.remediation.is_some()) {
            writeln!(
                w,
                "  remediation ({} {}-{} @{}): {}",
                f.kind,
                esc(&f.topic),
                f.partition,
                opt(f.offset),
                esc(f.remediation.as_deref().unwrap_or(""))
            )?;
        }
    }
    // Paths that could not be read are diagnostics: the CLI prints them on stderr.
    Ok(())
}

/// Above this many rows a table is built and measured whole before its first line is
/// written (1M producers took 3 GB): larger ones are printed in blocks of this many rows,
/// each with its header, and stderr says so and suggests `--format json` (which streams).
pub const LARGE_TABLE_ROWS: usize = 10_000;

fn warn_large_table(rows: usize, what: &str) {
    if rows > LARGE_TABLE_ROWS {
        eprintln!(
            "klogscan: {what}: {rows} rows, printed as tables of {LARGE_TABLE_ROWS} rows each; use --format json for a single, streamed document"
        );
    }
}

/// Render `producers`: the columns of `kafka-transactions.sh describe-producers`.
pub fn write_producers(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    for p in &report.partitions {
        writeln!(w, "{}-{} ({})", esc(&p.topic), p.partition, esc(&p.path))?;
        let producers = &p.outcome.producers;
        warn_large_table(
            producers.len(),
            &format!("producers of {}-{}", p.topic, p.partition),
        );
        let mut blocks = producers.chunks(LARGE_TABLE_ROWS).peekable();
        if blocks.peek().is_none() {
            writeln!(w, "{}\n", producers_table(&[]))?;
        }
        for block in blocks {
            writeln!(w, "{}\n", producers_table(block))?;
        }
    }
    Ok(())
}

fn producers_table(rows: &[crate::state::ProducerState]) -> Table {
    let mut t = table(&[
        "ProducerId",
        "ProducerEpoch",
        "LatestCoordinatorEpoch",
        "LastSequence",
        "LastTimestamp",
        "CurrentTransactionStartOffset",
    ]);
    for s in rows {
        t.add_row(vec![
            s.producer_id.to_string(),
            s.producer_epoch.to_string(),
            s.coordinator_epoch.to_string(),
            s.last_sequence.to_string(),
            format!("{} ({})", s.last_timestamp, format_ms(s.last_timestamp)),
            s.current_txn_first_offset
                .map_or_else(|| "None".to_string(), |o| o.to_string()),
        ]);
    }
    t
}

/// Render `txns`: transaction statistics per partition (klog's `txn-stat`).
pub fn write_txns(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    warn_large_table(report.partitions.len(), "transaction statistics");
    let mut blocks = report.partitions.chunks(LARGE_TABLE_ROWS).peekable();
    if blocks.peek().is_none() {
        writeln!(w, "{}", txns_table(&[]))?;
    }
    for block in blocks {
        writeln!(w, "{}", txns_table(block))?;
    }
    for p in &report.partitions {
        for o in &p.outcome.open {
            writeln!(
                w,
                "open: {}-{} producer {}@{} since offset {} (last activity {})",
                esc(&p.topic),
                p.partition,
                o.producer_id,
                o.producer_epoch,
                o.first_offset,
                format_ms(o.last_timestamp)
            )?;
        }
    }
    if let Some(a) = &report.transactions {
        write_txn_stats(&a.stats, w)?;
    }
    Ok(())
}

fn txns_table(partitions: &[crate::scan::PartitionReport]) -> Table {
    let mut t = table(&[
        "partition",
        "committed",
        "aborted",
        "open",
        "empty",
        "size min/p50/p99/max",
        "duration ms min/p50/p99/max",
    ]);
    for p in partitions {
        let s = &p.outcome.txn_stats;
        let (size, dur) = txn_distributions(s);
        t.add_row(vec![
            format!("{}-{}", esc(&p.topic), p.partition),
            s.committed.to_string(),
            s.aborted.to_string(),
            p.outcome.open.len().to_string(),
            (s.empty_commits + s.empty_aborts).to_string(),
            format!("{}/{}/{}/{}", size.min, size.p50, size.p99, size.max),
            format!("{}/{}/{}/{}", dur.min, dur.p50, dur.p99, dur.max),
        ]);
    }
    t
}

fn dist4(d: &crate::txns::stats::Distribution) -> String {
    format!("{}/{}/{}/{}", d.min, d.p50, d.p99, d.max)
}

/// The cluster part of `txns`: totals, per transactional id, the longest transactions.
fn write_txn_stats(s: &crate::txns::stats::TxnStatistics, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        "\ncluster transactions: {} ({} committed, {} aborted, {} empty, {} open, {} partial, {} mixed); producers fenced: {}",
        s.cluster_transactions,
        s.committed,
        s.aborted,
        s.empty,
        s.open,
        s.partial,
        s.mixed,
        s.producers_fenced
    )?;
    let mut t = table(&[
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
    ]);
    for r in &s.by_transactional_id {
        t.add_row(vec![
            r.transactional_id
                .clone()
                .unwrap_or_else(|| "(unknown)".into()),
            r.producer_ids
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(","),
            r.committed.to_string(),
            r.aborted.to_string(),
            r.empty.to_string(),
            r.open.to_string(),
            format!("{}/{}", r.partial, r.mixed),
            r.fenced.to_string(),
            dist4(&r.size.records),
            dist4(&r.size.bytes),
            dist4(&r.size.duration_ms),
        ]);
    }
    writeln!(w, "{t}")?;
    if !s.longest.is_empty() {
        let mut t = table(&[
            "longest",
            "transactional id",
            "producer",
            "outcome",
            "start",
            "duration ms",
            "partitions",
            "records",
        ]);
        for (i, l) in s.longest.iter().enumerate() {
            t.add_row(vec![
                (i + 1).to_string(),
                l.transactional_id.clone().unwrap_or_else(|| "-".into()),
                format!("{}@{}", l.producer_id, l.producer_epoch),
                l.outcome.name().to_string(),
                format_ms(l.start_ms),
                l.duration_ms.to_string(),
                l.partitions.to_string(),
                l.records.to_string(),
            ]);
        }
        writeln!(w, "{t}")?;
    }
    Ok(())
}

/// Render `txns --cluster`: one row per cluster transaction passing `filter`.
pub fn write_cluster_txns(
    report: &ScanReport,
    filter: &crate::txns::ClusterFilter,
    w: &mut dyn Write,
) -> io::Result<()> {
    let mut t = table(&[
        "transactional id",
        "producer",
        "partitions (first offset → marker offset)",
        "outcome",
        "grouping",
        "start",
        "end",
        "duration ms",
    ]);
    let mut n = 0;
    for x in report
        .transactions
        .iter()
        .flat_map(|a| &a.transactions)
        .filter(|x| filter.accepts(x))
    {
        n += 1;
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
        t.add_row(vec![
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
        ]);
    }
    writeln!(w, "{t}")?;
    writeln!(w, "{n} cluster transaction(s)")
}
