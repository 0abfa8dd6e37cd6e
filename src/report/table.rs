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

/// Render the scan report: a per-partition summary, then findings grouped by severity.
pub fn write_scan(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let labels = partition_labels(report);
    let mut t = table(&[
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
    ]);
    for (p, label) in report.partitions.iter().zip(&labels) {
        let (mut e, mut wn, mut i) = (0, 0, 0);
        for f in report
            .findings
            .iter()
            .filter(|f| f.topic == p.topic && f.partition == p.partition)
        {
            match f.severity {
                Severity::Error => e += 1,
                Severity::Warning => wn += 1,
                Severity::Info => i += 1,
            }
        }
        let lso = match (p.last_stable_offset, p.log_end_offset) {
            (Some(l), Some(end)) if l < end => format!("{l} (pinned)"),
            (l, _) => opt(l),
        };
        t.add_row(vec![
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
            format!("{e}/{wn}/{i}"),
        ]);
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
        let mut t = table(&["kind", "partition", "offset", "producer", "message"]);
        for f in &fs {
            t.add_row(vec![
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
            ]);
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
    for (p, e) in &report.errors {
        writeln!(w, "could not read {}: {}", crate::escape::path(p), esc(e))?;
    }
    Ok(())
}

/// Render `producers`: the columns of `kafka-transactions.sh describe-producers`.
pub fn write_producers(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    for p in &report.partitions {
        writeln!(w, "{}-{} ({})", esc(&p.topic), p.partition, esc(&p.path))?;
        let mut t = table(&[
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
        writeln!(w, "{t}\n")?;
    }
    Ok(())
}

/// Render `txns`: transaction statistics per partition (klog's `txn-stat`).
pub fn write_txns(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    let mut t = table(&[
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
            format!("{}-{}", esc(&p.topic), p.partition),
            s.committed.to_string(),
            s.aborted.to_string(),
            p.outcome.open.len().to_string(),
            (s.empty_commits + s.empty_aborts).to_string(),
            format!("{}/{}/{}/{}", size.min, size.p50, size.p99, size.max),
            format!("{}/{}/{}/{}", dur.min, dur.p50, dur.p99, dur.max),
        ]);
    }
    writeln!(w, "{t}")?;
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
    Ok(())
}
