//! Human tables (comfy-table) for `scan`, `producers` and `txns`.

use super::format_ms;
use super::json::txn_distributions;
use super::style::{Style, keep_words_whole, wrap};
use super::triage;
use crate::finding::Severity;
use crate::scan::ScanReport;
use std::io::{self, Write};

/// What the scan's text report shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    pub style: Style,
    /// Only the triage summary and the findings: no partition table.
    pub findings_only: bool,
}

fn place(f: &crate::finding::Finding) -> String {
    if f.topic.is_empty() {
        "-".to_string()
    } else {
        format!("{}-{}", f.topic, f.partition)
    }
}

fn producer(f: &crate::finding::Finding) -> String {
    match (f.producer_id, f.producer_epoch) {
        (Some(p), Some(e)) => format!("{p}@{e}"),
        (Some(p), None) => p.to_string(),
        _ => "-".into(),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
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
            let base = format!("{}-{}", p.topic, p.partition);
            if counts[&(&p.topic, p.partition)] > 1 {
                // The two directories above the partition dir: enough to tell copies apart
                // (`broker-1/data`, `broker-2/data`).
                let path = std::path::Path::new(&p.path);
                let above: Vec<String> = path
                    .ancestors()
                    .skip(1)
                    .take(2)
                    .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect();
                let above: Vec<&str> = above.iter().rev().map(String::as_str).collect();
                format!("{base} ({})", above.join("/"))
            } else {
                base
            }
        })
        .collect()
}

/// Render the scan report for a file or a pipe (ASCII, no colour): see [`write_scan_with`].
pub fn write_scan(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    write_scan_with(report, &TextOptions::default(), w)
}

/// Render the scan report: the triage summary (one block per incident), a per-partition
/// summary, then findings grouped by severity.
pub fn write_scan_with(report: &ScanReport, o: &TextOptions, w: &mut dyn Write) -> io::Result<()> {
    let incidents = triage::incidents(&report.findings);
    triage::write_summary(report, &incidents, &o.style, w)?;
    if !o.findings_only {
        write_partitions(report, &o.style, w)?;
    }
    write_findings(report, &o.style, w)
}

fn write_partitions(report: &ScanReport, style: &Style, w: &mut dyn Write) -> io::Result<()> {
    let labels = partition_labels(report);
    const HEADER: [&str; 11] = [
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
    ];
    let rows: Vec<Vec<String>> = report
        .partitions
        .iter()
        .zip(&labels)
        .enumerate()
        .map(|(i, (p, label))| {
            let c = super::filter::counts(report.partition_findings(i));
            let lso = match (p.last_stable_offset, p.log_end_offset) {
                (Some(l), Some(end)) if l < end => format!("{l} (pinned)"),
                (l, _) => opt(l),
            };
            vec![
                label.clone(),
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
                format!("{}/{}/{}", c.error, c.warning, c.info),
            ]
        })
        .collect();
    let mut t = style.table(&HEADER);
    for r in &rows {
        t.add_row(r.clone());
    }
    if keep_words_whole(&mut t, None) > usize::from(style.width) {
        // A narrow terminal: the columns that matter mid-incident, words kept whole.
        const KEEP: [usize; 6] = [0, 3, 6, 7, 8, 10];
        t = style.table(&["partition", "records", "LEO", "LSO", "txns c/a/o", "E/W/I"]);
        for r in &rows {
            t.add_row(KEEP.iter().map(|&k| r[k].clone()).collect::<Vec<_>>());
        }
        keep_words_whole(&mut t, None);
    }
    writeln!(w, "{t}")?;
    for (p, label) in report.partitions.iter().zip(&labels) {
        if let Some(tr) = &p.truncation {
            writeln!(
                w,
                "recovery of {label} would truncate {} at byte {}{} ({})",
                tr.segment,
                tr.position,
                tr.offset
                    .map(|o| format!(", offset {o}"))
                    .unwrap_or_default(),
                tr.reason
            )?;
        }
    }
    let s = &report.summary;
    let line = format!(
        "{} partitions, {} segments, {} batches, {} records, {} bytes; findings: {} error, {} warning, {} info",
        s.partitions,
        s.segments,
        s.batches,
        s.records,
        s.bytes,
        s.findings.error,
        s.findings.warning,
        s.findings.info
    );
    writeln!(w, "{}", wrap(&line, usize::from(style.width), 0, 2))?;
    Ok(())
}

fn write_findings(report: &ScanReport, style: &Style, w: &mut dyn Write) -> io::Result<()> {
    for sev in [Severity::Error, Severity::Warning, Severity::Info] {
        let fs: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity == sev)
            .collect();
        if fs.is_empty() {
            continue;
        }
        let heading = format!("{} ({})", sev.as_str().to_uppercase(), fs.len());
        writeln!(w, "\n{}", style.heading(&heading, Some(sev)))?;
        let mut t = style.table(&["kind", "partition", "offset", "producer", "message"]);
        for f in &fs {
            t.add_row(vec![
                style.severity_cell(f.kind.id(), sev),
                place(f).into(),
                opt(f.offset).into(),
                producer(f).into(),
                f.message.clone().into(),
            ]);
        }
        if keep_words_whole(&mut t, Some(4)) <= usize::from(style.width) {
            writeln!(w, "{t}")?;
        } else {
            // A narrow terminal: one block per finding, the message wrapped at spaces.
            let width = usize::from(style.width);
            for f in &fs {
                let head = format!(
                    "{} {} @{} {}",
                    f.kind.id(),
                    place(f),
                    opt(f.offset),
                    producer(f)
                );
                writeln!(w, "{}", style.heading(&head, Some(sev)))?;
                writeln!(w, "    {}", wrap(&f.message, width, 4, 4))?;
            }
        }
        for f in fs.iter().filter(|f| f.remediation.is_some()) {
            let line = format!(
                "remediation ({} {}-{} @{}): {}",
                f.kind,
                f.topic,
                f.partition,
                opt(f.offset),
                f.remediation.as_deref().unwrap_or("")
            );
            writeln!(w, "  {}", wrap(&line, usize::from(style.width), 2, 4))?;
        }
    }
    for (p, e) in &report.errors {
        writeln!(w, "could not read {}: {e}", p.display())?;
    }
    Ok(())
}

/// Render `producers` for a file or a pipe: see [`write_producers_with`].
pub fn write_producers(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    write_producers_with(report, &Style::default(), w)
}

/// Render `producers`: the columns of `kafka-transactions.sh describe-producers`.
pub fn write_producers_with(
    report: &ScanReport,
    style: &Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    for p in &report.partitions {
        writeln!(w, "{}-{} ({})", p.topic, p.partition, p.path)?;
        let mut t = style.table(&[
            "ProducerId",
            "ProducerEpoch",
            "LatestCoordinatorEpoch",
            "LastSequence",
            "LastTimestamp",
            "CurrentTransactionStartOffset",
        ]);
        for s in &p.outcome.producers {
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
        keep_words_whole(&mut t, None);
        writeln!(w, "{t}\n")?;
    }
    Ok(())
}

/// Render `txns` for a file or a pipe: see [`write_txns_with`].
pub fn write_txns(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    write_txns_with(report, &Style::default(), w)
}

/// Render `txns`: transaction statistics per partition (klog's `txn-stat`).
pub fn write_txns_with(report: &ScanReport, style: &Style, w: &mut dyn Write) -> io::Result<()> {
    let mut t = style.table(&[
        "partition",
        "committed",
        "aborted",
        "open",
        "empty",
        "size min/p50/p99/max",
        "duration ms min/p50/p99/max",
    ]);
    for p in &report.partitions {
        let s = &p.outcome.txn_stats;
        let (size, dur) = txn_distributions(s);
        t.add_row(vec![
            format!("{}-{}", p.topic, p.partition),
            s.committed.to_string(),
            s.aborted.to_string(),
            p.outcome.open.len().to_string(),
            (s.empty_commits + s.empty_aborts).to_string(),
            format!("{}/{}/{}/{}", size.min, size.p50, size.p99, size.max),
            format!("{}/{}/{}/{}", dur.min, dur.p50, dur.p99, dur.max),
        ]);
    }
    keep_words_whole(&mut t, None);
    writeln!(w, "{t}")?;
    for p in &report.partitions {
        for o in &p.outcome.open {
            writeln!(
                w,
                "open: {}-{} producer {}@{} since offset {} (last activity {})",
                p.topic,
                p.partition,
                o.producer_id,
                o.producer_epoch,
                o.first_offset,
                format_ms(o.last_timestamp)
            )?;
        }
    }
    Ok(())
}
