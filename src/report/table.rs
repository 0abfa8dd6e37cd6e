//! Human tables (comfy-table) for `scan`, `producers`, `txns` and `groups`.

pub use super::groups::{write_group_members_with, write_groups_with};
pub use super::txns_table::{
    write_cluster_txns, write_cluster_txns_with, write_txns, write_txns_with,
};

use super::format_ms;
use super::labels::Labels;
use super::style::{Layout, Shape, Style, fit_table, keep_words_whole, led_by, wrap, write_fitted};
use super::triage;
use crate::finding::Severity;
use crate::results::ScanReport;
use comfy_table::Table;
use std::io::{self, Write};

/// What the scan's text report shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    pub style: Style,
    /// Only the triage summary and the findings: no partition table.
    pub findings_only: bool,
}

fn producer(f: &crate::finding::Finding) -> String {
    match (f.producer_id, f.producer_epoch) {
        (Some(p), Some(e)) => format!("{p}@{e}"),
        (Some(p), None) => p.to_string(),
        _ => "-".into(),
    }
}

pub(super) fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

/// Text from the evidence (names, messages quoting it), control characters escaped
/// ([`crate::escape`]): a table must not carry terminal commands or forged lines.
pub(super) fn esc(s: &str) -> String {
    crate::escape::text(s).into_owned()
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
    let brokers: std::collections::BTreeSet<_> = report
        .partitions
        .iter()
        .map(|p| {
            let s = &p.source;
            // A broker without an id is told apart by its log dir.
            let dir = s.broker_id.is_none().then_some(s.log_dir.as_deref());
            (s.broker_id, s.cluster_id.as_deref(), dir)
        })
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

/// Render the scan report for a file or a pipe (ASCII, no colour): see [`write_scan_with`].
pub fn write_scan(report: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
    write_scan_with(report, &TextOptions::default(), w)
}

/// Render the scan report: the triage summary (one block per incident), a per-partition
/// summary, then findings grouped by severity.
pub fn write_scan_with(report: &ScanReport, o: &TextOptions, w: &mut dyn Write) -> io::Result<()> {
    if empty_result(report, w)? {
        return Ok(());
    }
    let incidents = triage::incidents_in(report);
    if o.findings_only && report.findings.is_empty() {
        return writeln!(w, "no finding to show");
    }
    triage::write_summary(report, &incidents, &o.style, w)?;
    let column = broker_column(report);
    let mut labels = Labels::new(report, o.style.width, o.style.unicode);
    if !o.findings_only {
        write_partitions(report, column, &mut labels, &o.style, w)?;
    }
    write_findings(report, column, &mut labels, &o.style, w)?;
    labels.write_legend(o.style.width, w)?;
    if incidents.is_empty() && !report.findings.is_empty() {
        writeln!(w, "\nno incident: no finding of warning or error severity")?;
    } else if incidents.is_empty() {
        writeln!(w, "no incident: no finding")?;
    }
    Ok(())
}

/// Nothing read (the reasons go to stderr: no empty table on stdout), or nothing left
/// after the filters (one line saying so). True when the report is told.
pub(crate) fn empty_result(report: &ScanReport, w: &mut dyn Write) -> io::Result<bool> {
    if report.nothing_read() {
        return Ok(true);
    }
    if report.matched_nothing() {
        let n = report.summary.analysed.unwrap_or(0);
        writeln!(
            w,
            "nothing matches the filters: {n} partition{} analysed, none selected",
            if n == 1 { "" } else { "s" }
        )?;
        return Ok(true);
    }
    Ok(false)
}

fn write_partitions(
    report: &ScanReport,
    column: Option<bool>,
    names: &mut Labels,
    style: &Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    let labels = names.partitions.clone();
    let brokers = column.is_some();
    let with_cluster = column == Some(true);
    let header = with_broker(
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
    );
    let rows: Vec<Vec<String>> = report
        .partitions
        .iter()
        .zip(&labels)
        .enumerate()
        .map(|(i, (p, label))| {
            let c = super::filter::counts(report.partition_findings(i));
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
            with_broker(
                brokers,
                names.broker(&p.source, with_cluster),
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
                    format!("{}/{}/{}", c.error, c.warning, c.info),
                ],
            )
        })
        .collect();
    warn_large_table(rows.len(), "partitions");
    let mut blocks = rows.chunks(LARGE_TABLE_ROWS).peekable();
    if blocks.peek().is_none() {
        writeln!(w, "{}", partitions_table(style, brokers, &header, &[]))?;
    }
    for block in blocks {
        writeln!(w, "{}", partitions_table(style, brokers, &header, block))?;
    }
    for (p, label) in report.partitions.iter().zip(&labels) {
        // With `--no-crc` the point is only the latest recovery can stop at.
        let latest = if p.truncation_unknown.is_some() {
            " at the latest"
        } else {
            ""
        };
        if let Some(tr) = &p.truncation {
            writeln!(
                w,
                "recovery of {label} would truncate {} at byte {}{}{latest} ({})",
                esc(&tr.segment),
                tr.position,
                tr.offset
                    .map(|o| format!(", offset {o}"))
                    .unwrap_or_default(),
                esc(&tr.reason)
            )?;
        }
        if let Some(u) = &p.truncation_unknown {
            writeln!(w, "recovery of {label}: truncation unknown: {}", esc(u))?;
        }
        if let Some(why) = &p.load_failure {
            writeln!(
                w,
                "recovery of {label}: none, the load fails first: {}",
                esc(why)
            )?;
        }
        if let Some(t) = &p.tiered {
            writeln!(w, "tiered {label}: {}", tiered_line(t))?;
        }
    }
    let s = &report.summary;
    let width = usize::from(style.width);
    let line = format!(
        "{}, {}, {}, {}, {}; findings: {} error, {} warning, {} info",
        super::count(s.partitions as u64, "partition"),
        super::count(s.segments as u64, "segment"),
        super::count(s.batches, "batch"),
        super::count(s.records, "record"),
        super::count(s.bytes, "byte"),
        s.findings.error,
        s.findings.warning,
        s.findings.info
    );
    writeln!(w, "{}", wrap(&line, width, 0, 2))?;
    if let Some(t) = report
        .transactions
        .as_ref()
        .filter(|t| t.stats.cluster_transactions > 0)
    {
        let s = &t.stats;
        let line = format!(
            "cluster transactions: {} ({} committed, {} aborted, {} empty, {} open, {} partial, {} mixed)",
            s.cluster_transactions, s.committed, s.aborted, s.empty, s.open, s.partial, s.mixed
        );
        writeln!(w, "{}", wrap(&line, width, 0, 2))?;
    }
    if s.non_live.partitions > 0 {
        let line = format!(
            "of which {} non-live copies (-future/-delete/-stray, not served to consumers); their findings: {} error, {} warning, {} info",
            s.non_live.partitions, s.non_live.error, s.non_live.warning, s.non_live.info
        );
        writeln!(w, "{}", wrap(&line, width, 0, 2))?;
    }
    Ok(())
}

/// The partition table of `rows`; on a terminal too narrow for it, only the columns that
/// matter mid-incident (then fewer still), words and labels kept whole ([`fit_table`]).
fn partitions_table(style: &Style, brokers: bool, header: &[&str], rows: &[Vec<String>]) -> Table {
    let skip = usize::from(brokers);
    // Columns of the full row: partition 0, records 3, LEO 6, LSO 7, txns 8, findings 10.
    let narrow: [&[(usize, &str)]; 2] = [
        &[
            (0, "partition"),
            (3, "records"),
            (6, "LEO"),
            (7, "LSO"),
            (8, "txns c/a/o"),
            (10, "E/W/I"),
        ],
        &[(0, "partition"), (6, "LEO"), (7, "LSO"), (10, "E/W/I")],
    ];
    let layouts = led_by(brokers.then_some("broker"), &narrow);
    let layouts: Vec<Layout<'_>> = layouts.iter().map(Vec::as_slice).collect();
    fit_table(style, false, header, rows, &layouts, Some(skip)).table
}

fn write_findings(
    report: &ScanReport,
    column: Option<bool>,
    labels: &mut Labels,
    style: &Style,
    w: &mut dyn Write,
) -> io::Result<()> {
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
        warn_large_table(fs.len(), &format!("{} findings", sev.as_str()));
        for block in fs.chunks(LARGE_TABLE_ROWS) {
            write_findings_table(block, column, labels, sev, style, w)?;
        }
        for f in fs.iter().filter(|f| f.remediation.is_some()) {
            let line = format!(
                "remediation ({} {}-{} @{}): {}",
                f.kind,
                esc(&f.topic),
                f.partition,
                opt(f.offset),
                esc(f.remediation.as_deref().unwrap_or(""))
            );
            writeln!(w, "  {}", wrap(&line, usize::from(style.width), 2, 4))?;
        }
    }
    // Paths that could not be read are diagnostics: the CLI prints them on stderr.
    Ok(())
}

/// The narrowest message column a findings table may have: below it, each finding is a
/// block (its identifiers on one line, the message wrapped under it).
const MIN_MESSAGE: usize = 40;

/// One table of findings of severity `sev` (or one block per finding where the table would
/// leave the message less than [`MIN_MESSAGE`] columns).
fn write_findings_table(
    fs: &[&crate::finding::Finding],
    column: Option<bool>,
    labels: &mut Labels,
    sev: Severity,
    style: &Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    let brokers = column.is_some();
    let with_cluster = column == Some(true);
    let message = 4 + usize::from(brokers);
    let mut t = style.table(&with_broker(
        brokers,
        "broker",
        vec!["kind", "partition", "offset", "producer", "message"],
    ));
    let mut heads = Vec::with_capacity(fs.len());
    for f in fs {
        let broker = labels.broker(&f.source, with_cluster);
        let place = labels.of_finding(f);
        heads.push(format!(
            "{} {place} @{} {}{}",
            f.kind.id(),
            opt(f.offset),
            producer(f),
            if brokers {
                format!(" broker {broker}")
            } else {
                String::new()
            }
        ));
        t.add_row(with_broker(
            brokers,
            broker.into(),
            vec![
                style.severity_cell(f.kind.id(), sev),
                place.into(),
                opt(f.offset).into(),
                producer(f).into(),
                esc(&f.message).into(),
            ],
        ));
    }
    let width = usize::from(style.width);
    // What the columns but the message need (the message's own minimum, its longest word
    // up to 24 and the padding, taken out of keep_words_whole's total).
    let longest = fs
        .iter()
        .flat_map(|f| f.message.split_whitespace())
        .map(|w| w.chars().count())
        .chain(["message".len()])
        .max()
        .unwrap_or(0);
    let others = keep_words_whole(&mut t, Some(message)).saturating_sub(longest.min(24) + 2);
    if others + MIN_MESSAGE + 2 <= width {
        writeln!(w, "{t}")?;
    } else {
        // A narrow terminal: one block per finding, the message wrapped at spaces.
        for (f, head) in fs.iter().zip(heads) {
            writeln!(w, "{}", style.heading(&wrap(&head, width, 0, 4), Some(sev)))?;
            writeln!(w, "    {}", wrap(&esc(&f.message), width, 4, 4))?;
        }
    }
    Ok(())
}

/// Above this many rows a table is built and measured whole before its first line is
/// written (1M producers took 3 GB): larger ones are printed in blocks of this many rows,
/// each with its header, and stderr says so and suggests `--format json` (which streams).
pub const LARGE_TABLE_ROWS: usize = 10_000;

pub(super) fn warn_large_table(rows: usize, what: &str) {
    if rows > LARGE_TABLE_ROWS {
        eprintln!(
            "klogscan: {what}: {rows} rows, printed as tables of {LARGE_TABLE_ROWS} rows each; use --format json for a single, streamed document"
        );
    }
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
    if empty_result(report, w)? {
        return Ok(());
    }
    // Partitions without producer ids (plain producers, internal topics) print no table:
    // a line says how many.
    let (with, without): (Vec<_>, Vec<_>) = report
        .partitions
        .iter()
        .partition(|p| !p.carried.outcome.producers.is_empty());
    for p in with {
        let name = super::partition_name(&p.topic, p.partition, Some(&p.path));
        let (name, path) = super::labels::name_and_path(&name, &p.path, style.width, style.unicode);
        writeln!(w, "{name}{path}")?;
        let producers = &p.carried.outcome.producers;
        warn_large_table(
            producers.len(),
            &format!("producers of {}-{}", p.topic, p.partition),
        );
        for block in producers.chunks(LARGE_TABLE_ROWS) {
            write_producers_table(style, block, w)?;
            writeln!(w)?;
        }
    }
    match (without.len(), report.partitions.len()) {
        (0, _) => {}
        (n, all) if n == all => writeln!(
            w,
            "no producer id in the {n} partition{} read (plain producers or none)",
            if n == 1 { "" } else { "s" }
        )?,
        (n, _) => writeln!(
            w,
            "{n} partition{} without producer ids not listed",
            if n == 1 { "" } else { "s" }
        )?,
    }
    Ok(())
}

/// The producers of one partition, as `describe-producers` lists them; narrower (the
/// coordinator epoch left out, shorter headers) or one block per producer where the width
/// asks for it.
fn write_producers_table(
    style: &Style,
    rows: &[crate::partition::state::ProducerState],
    w: &mut dyn Write,
) -> io::Result<()> {
    let header = [
        "ProducerId",
        "ProducerEpoch",
        "LatestCoordinatorEpoch",
        "LastSequence",
        "LastTimestamp",
        "CurrentTransactionStartOffset",
    ];
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|s| {
            vec![
                s.producer_id.to_string(),
                s.producer_epoch.to_string(),
                s.coordinator_epoch.to_string(),
                s.last_sequence.to_string(),
                format!("{} ({})", s.last_timestamp, format_ms(s.last_timestamp)),
                s.current_txn_first_offset
                    .map_or_else(|| "None".to_string(), |o| o.to_string()),
            ]
        })
        .collect();
    let layouts: [Layout<'_>; 2] = [
        &[
            (0, "ProducerId"),
            (1, "Epoch"),
            (2, "CoordinatorEpoch"),
            (3, "LastSequence"),
            (4, "LastTimestamp"),
            (5, "TxnStartOffset"),
        ],
        &[
            (0, "Producer"),
            (1, "Epoch"),
            (3, "Sequence"),
            (4, "LastTimestamp"),
            (5, "TxnStart"),
        ],
    ];
    write_fitted(style, Shape::default(), &header, &rows, &layouts, w)
}

/// `log start S; remote A..=B, C..=D (N segments); local L..=E` for a tiered partition
/// (adjacent or overlapping remote segments merged).
pub(crate) fn tiered_line(t: &crate::results::TieredRanges) -> String {
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for &(a, b) in &t.remote {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    let remote = if merged.is_empty() {
        "none".to_string()
    } else {
        merged
            .iter()
            .map(|(a, b)| format!("{a}..={b}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let local = match (t.local_log_start_offset, t.log_end_offset) {
        (Some(a), Some(e)) if e > a => format!("{a}..={}", e - 1),
        (Some(a), _) => format!("from {a} (empty)"),
        _ => "none".to_string(),
    };
    format!(
        "log start {}; remote {remote} ({} segments); local {local}",
        opt(t.log_start_offset),
        t.remote.len()
    )
}
