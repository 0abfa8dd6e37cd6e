//! The text report of `klogscan verify`: per partition what the broker would do on its next
//! start, then the findings — with the scan tables' rules ([`Style`]): colour per
//! `--color`/`NO_COLOR` (the partition names bold, `TRUNCATE`/`DELETE`/`LOAD FAILS` and the
//! severities coloured), borders and width per the device, long lines wrapped at spaces so
//! that paths and identifiers stay whole.

use super::style::{Style, keep_words_whole, wrap, wrap_long};
use crate::finding::{Finding, Severity};
use crate::verify::{PartitionVerification, VerifyReport};
use std::io::{self, Write};

fn esc(s: &str) -> String {
    crate::escape::text(s).into_owned()
}

fn opt(v: Option<i64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// One detail line of a partition, indented by 2 and wrapped at the width (continuation
/// lines indented by 4). `mark` (e.g. `TRUNCATE`) is shown in the severity's colour.
fn line(
    w: &mut dyn Write,
    style: &Style,
    mark: Option<(&str, Severity)>,
    text: &str,
) -> io::Result<()> {
    let width = usize::from(style.width);
    match mark {
        Some((m, sev)) => {
            let body = wrap_long(text, width, 2 + m.chars().count() + 2, 4);
            writeln!(w, "  {}: {body}", style.heading(m, Some(sev)))
        }
        None => writeln!(w, "  {}", wrap_long(text, width, 2, 4)),
    }
}

/// The recovery point the load starts from: the entry, `- (0)` without one (the broker
/// uses 0), `unknown` when klogscan could not read the checkpoint.
fn recovery_point(pr: &crate::partition::recovery::RecoveryPrediction) -> String {
    use crate::read::format::checkpoint::TextFileKind;
    let unread = TextFileKind::RecoveryPointOffsetCheckpoint.file_name();
    match pr.recovery_point {
        Some(v) => v.to_string(),
        None if pr.unread_checkpoints.iter().any(|f| f == unread) => {
            "unknown (recovery-point-offset-checkpoint not read)".into()
        }
        None => "- (0)".into(),
    }
}

/// A load that fails before the step that sets `v`: `not reached`, else [`opt`].
fn after(pr: &crate::partition::recovery::RecoveryPrediction, v: Option<i64>) -> String {
    match v {
        None if pr.load_failure.is_some() => "not reached".into(),
        v => opt(v),
    }
}

/// The load fails before its recoveries are over (`load_stops_at`): what they would cut
/// or rebuild is not reached.
fn stops_before_recovered(pr: &crate::partition::recovery::RecoveryPrediction) -> bool {
    (pr.load_stops_at.as_deref())
        .is_some_and(|s| !matches!(s, "log_end" | "producer_state_rebuild"))
}

fn write_partition(w: &mut dyn Write, style: &Style, p: &PartitionVerification) -> io::Result<()> {
    let pr = &p.prediction;
    let name = super::partition_name(&p.topic, p.partition, Some(p.path()));
    let (name, path) = super::labels::name_and_path(&name, p.path(), style.width, style.unicode);
    writeln!(w, "{}{path}", style.heading(&name, None))?;
    let shutdown = match pr.clean_shutdown {
        Some(true) => "clean",
        Some(false) => "unclean (no .kafka_cleanshutdown)",
        None => "unknown (no log dir files; assumed unclean)",
    };
    line(
        w,
        style,
        None,
        &format!(
            "shutdown: {shutdown}  recovery point: {} -> {}  high watermark: {}  log start: {} -> {}  log end: {} -> {}",
            recovery_point(pr),
            after(pr, pr.recovery_point_after),
            opt(pr.high_watermark),
            opt(pr.first_offset),
            after(pr, pr.log_start_offset_after),
            opt(pr.log_end_offset),
            after(pr, pr.log_end_offset_after),
        ),
    )?;
    for l in &pr.leftovers {
        line(
            w,
            style,
            None,
            &format!("startup: {}: {}", esc(&l.file), esc(&l.action)),
        )?;
    }
    for s in &pr.recovered_segments {
        line(
            w,
            style,
            None,
            &format!("recover: {} ({})", esc(&s.segment), esc(&s.reason)),
        )?;
    }
    match &pr.truncation {
        Some(t) => line(
            w,
            style,
            Some(("TRUNCATE", Severity::Warning)),
            &format!(
                "{} at byte {} -> log end offset {} ({} bytes removed{}): {}",
                esc(&t.segment),
                t.position,
                t.offset,
                t.bytes_removed,
                t.first_removed_offset
                    .map_or(String::new(), |o| format!(", first removed offset {o}")),
                esc(&t.reason)
            ),
        )?,
        None if stops_before_recovered(pr) => line(
            w,
            style,
            None,
            "truncate: not reached (the load fails first)",
        )?,
        None if pr.outcome_unknown.is_some() => line(w, style, None, "truncate: unknown")?,
        None => line(w, style, None, "truncate: nothing")?,
    }
    if let Some(u) = &pr.outcome_unknown {
        line(w, style, None, &format!("outcome unknown: {}", esc(u)))?;
    }
    if !pr.deleted_segments.is_empty() {
        line(
            w,
            style,
            Some(("DELETE", Severity::Error)),
            &esc(&pr.deleted_segments.join(", ")),
        )?;
    }
    if let Some(c) = &pr.created_segment {
        line(
            w,
            style,
            None,
            &format!("create: {} (empty; no segment is left)", esc(c)),
        )?;
    }
    for c in &pr.unrecovered_corruption {
        line(w, style, None, &format!("not recovered: {}", esc(c)))?;
    }
    let ps = &pr.producer_state;
    let rebuild_fails = pr.load_stops_at.as_deref() == Some("producer_state_rebuild");
    let state = if pr.load_stops_at.is_some() && !rebuild_fails {
        "producer state: not rebuilt (the load fails first)".to_string()
    } else if ps.skipped {
        "producer state: skipped (no snapshot after a clean shutdown): all producer state forgotten"
            .to_string()
    } else if p.source.copy == crate::finding::CopyKind::Delete {
        "producer state: rebuilt only to offset 0 (a -delete directory): no producer, no open transaction".to_string()
    } else {
        format!(
            "producer state: {} then replay [{}, {}){}",
            ps.snapshot
                .as_deref()
                .map_or("no snapshot (from the log start)".to_string(), |s| {
                    if ps.snapshot_written_at_load {
                        format!("load {} (written by the recovery)", esc(s))
                    } else {
                        format!("load {}", esc(s))
                    }
                }),
            opt(ps.replay_from),
            opt(ps.replay_to),
            match (ps.producers, ps.open_transactions) {
                (Some(n), Some(o)) => format!(": {n} producers, {o} open transactions"),
                (None, Some(o)) => format!(": {o} open transactions"),
                _ if rebuild_fails => ", which throws (the load fails)".to_string(),
                _ => String::new(),
            }
        )
    };
    line(w, style, None, &state)?;
    match &ps.snapshots_after_load {
        Some(files) => line(w, style, None, &snapshots_after_load(files))?,
        None if pr.load_failure.is_some() => {
            line(w, style, None, "snapshots after load: not reached")?
        }
        None => {}
    }
    match &pr.load_failure {
        Some(f) => line(
            w,
            style,
            Some(("LOAD FAILS", Severity::Error)),
            &format!("{} ({})", esc(&f.exception), esc(&f.message)),
        )?,
        None => line(w, style, None, "load: ok")?,
    }
    writeln!(w)
}

fn place(f: &Finding) -> String {
    if f.partition >= 0 {
        format!("{}-{}", esc(&f.topic), f.partition)
    } else {
        "(log dir)".into()
    }
}

/// The findings as one table (severity, kind, partition, message), or one block per finding
/// when the identifiers do not fit the width.
fn write_findings(w: &mut dyn Write, style: &Style, findings: &[&Finding]) -> io::Result<()> {
    if findings.is_empty() {
        return writeln!(w, "No findings.");
    }
    writeln!(w, "{}", style.heading("Findings:", None))?;
    let mut t = style.table(&["severity", "kind", "partition", "message"]);
    for f in findings {
        t.add_row(vec![
            style.severity_cell(f.severity.as_str(), f.severity),
            style.severity_cell(f.kind.id(), f.severity),
            place(f).into(),
            esc(&f.message).into(),
        ]);
    }
    if keep_words_whole(&mut t, Some(3)) <= usize::from(style.width) {
        return writeln!(w, "{t}");
    }
    let width = usize::from(style.width);
    for f in findings {
        let head = format!("{} {} {}", f.severity.as_str(), f.kind.id(), place(f));
        let head = wrap_long(&head, width, 0, 4);
        writeln!(w, "{}", style.heading(&head, Some(f.severity)))?;
        writeln!(w, "    {}", wrap_long(&esc(&f.message), width, 4, 4))?;
    }
    Ok(())
}

/// Write the text report of `verify` in `style`.
pub fn write_verify(r: &VerifyReport, style: &Style, w: &mut dyn Write) -> io::Result<()> {
    // Nothing read: the reasons go to stderr, no empty report on stdout.
    if r.nothing_read() {
        return Ok(());
    }
    if r.matched_nothing() {
        let n = r.summary.analysed.unwrap_or(0);
        return writeln!(
            w,
            "nothing matches the filters: {n} partition{} verified, none selected",
            if n == 1 { "" } else { "s" }
        );
    }
    for p in &r.partitions {
        write_partition(w, style, p)?;
    }
    write_broker_startup(w, style, &r.broker_startup)?;
    write_findings(w, style, &r.findings().collect::<Vec<_>>())?;
    let s = &r.summary;
    // A broker whose log dirs stop its start (said only when one does).
    let brokers: std::collections::BTreeSet<_> = r
        .broker_startup
        .iter()
        .map(|b| {
            let dir = b.broker.is_none().then(|| b.log_dirs.first());
            (&b.cluster_id, b.broker, dir)
        })
        .collect();
    let stopped = match brokers.len() {
        0 => String::new(),
        n => format!(
            ", {n} broker start{} stopped by its log dirs",
            if n == 1 { "" } else { "s" }
        ),
    };
    let summary = format!(
        "{}; {} recovered at load, {} truncated, {} fail to load{stopped}; findings: {} error, {} warning, {} info",
        super::count(s.partitions as u64, "partition"),
        s.recovered,
        s.truncated,
        s.load_failures,
        s.findings.error,
        s.findings.warning,
        s.findings.info
    );
    writeln!(w, "\n{}", wrap(&summary, usize::from(style.width), 0, 2))
}

/// What one broker's log dirs do to its start (`BrokerStartup`): a heading per
/// broker, then `START FAILS:` (or `START FAILS in one mode:`) with the exception.
fn write_broker_startup(
    w: &mut dyn Write,
    style: &Style,
    brokers: &[crate::verify::BrokerStartup],
) -> io::Result<()> {
    for b in brokers {
        let who = match (b.broker, &b.cluster_id) {
            (Some(n), Some(c)) => format!("broker {n} (cluster {})", esc(c)),
            (Some(n), None) => format!("broker {n}"),
            _ => "broker (node id unknown)".into(),
        };
        writeln!(w, "{}", style.heading(&who, None))?;
        line(
            w,
            style,
            None,
            &format!("log dirs: {}", esc(&b.log_dirs.join(", "))),
        )?;
        let (mark, sev) = match b.starts {
            Some(false) => ("START FAILS", Severity::Error),
            _ => ("START FAILS in one mode", Severity::Warning),
        };
        line(
            w,
            style,
            Some((mark, sev)),
            &format!("{} ({}): {}", b.exception, b.thrown_by, esc(&b.message)),
        )?;
        if let Some(a) = b.assumes {
            line(w, style, None, &format!("assumes {a}"))?;
        }
        writeln!(w)?;
    }
    Ok(())
}

/// The snapshot files a load leaves, by offset (the first three and the last two of a long
/// list).
fn snapshots_after_load(files: &[i64]) -> String {
    let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    match files.len() {
        0 => "snapshots after load: none".to_string(),
        n if n <= 6 => format!("snapshots after load: {}", list(files)),
        n => format!(
            "snapshots after load ({n}): {}, …, {}",
            list(&files[..3]),
            list(&files[n - 2..])
        ),
    }
}
