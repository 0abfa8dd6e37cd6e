//! Rendering of a [`VerifyReport`]: a text report and the JSON document
//! (`"klogscan_verify": 1`, `docs/verify.md`).

use super::VerifyReport;
use serde_json::json;
use std::io::{self, Write};

/// The JSON document of `klogscan verify --format json` (schema in `docs/verify.md`).
pub fn to_json(r: &VerifyReport) -> serde_json::Value {
    json!({
        "klogscan_verify": 1,
        "inputs": r.inputs,
        "summary": r.summary,
        "partitions": r.partitions.iter().map(|p| json!({
            "topic": p.topic,
            "partition": p.partition,
            "path": p.path,
            "log_dir": p.log_dir,
            "source": p.source,
            "prediction": p.prediction,
        })).collect::<Vec<_>>(),
        "findings": r.findings,
        "errors": r.errors.iter().map(|(p, e)| json!({"path": p.display().to_string(), "error": e})).collect::<Vec<_>>(),
    })
}

/// Write the JSON document (one line-broken, pretty-printed document).
pub fn write_json(r: &VerifyReport, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, &to_json(r))?;
    writeln!(w)
}

/// Text from the evidence with control characters escaped ([`crate::escape`]).
fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    crate::escape::text(s)
}

fn opt(v: Option<i64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// Write the text report: per partition what the broker would do, then the findings.
pub fn write_table(r: &VerifyReport, w: &mut dyn Write) -> io::Result<()> {
    for p in &r.partitions {
        let pr = &p.prediction;
        writeln!(w, "{}-{}  {}", esc(&p.topic), p.partition, esc(&p.path))?;
        let shutdown = match pr.clean_shutdown {
            Some(true) => "clean",
            Some(false) => "unclean (no .kafka_cleanshutdown)",
            None => "unknown (no log dir; assumed unclean)",
        };
        writeln!(
            w,
            "  shutdown: {shutdown}  recovery point: {}  high watermark: {}  log start: {} -> {}  log end: {} -> {}",
            pr.recovery_point.map_or("- (0)".into(), |v| v.to_string()),
            opt(pr.high_watermark),
            opt(pr.first_offset),
            opt(pr.log_start_offset_after),
            opt(pr.log_end_offset),
            opt(pr.log_end_offset_after),
        )?;
        for l in &pr.leftovers {
            writeln!(w, "  startup: {}: {}", esc(&l.file), esc(&l.action))?;
        }
        for s in &pr.recovered_segments {
            writeln!(w, "  recover: {} ({})", esc(&s.segment), esc(&s.reason))?;
        }
        match &pr.truncation {
            Some(t) => writeln!(
                w,
                "  TRUNCATE: {} at byte {} -> log end offset {} ({} bytes removed{}): {}",
                esc(&t.segment),
                t.position,
                t.offset,
                t.bytes_removed,
                t.first_removed_offset
                    .map_or(String::new(), |o| format!(", first removed offset {o}")),
                esc(&t.reason)
            )?,
            None if pr.outcome_unknown.is_some() => writeln!(w, "  truncate: unknown")?,
            None => writeln!(w, "  truncate: nothing")?,
        }
        if let Some(u) = &pr.outcome_unknown {
            writeln!(w, "  outcome unknown: {}", esc(u))?;
        }
        if !pr.deleted_segments.is_empty() {
            writeln!(w, "  DELETE: {}", esc(&pr.deleted_segments.join(", ")))?;
        }
        for c in &pr.unrecovered_corruption {
            writeln!(w, "  not recovered: {}", esc(c))?;
        }
        let ps = &pr.producer_state;
        if ps.skipped {
            writeln!(
                w,
                "  producer state: skipped (no snapshot after a clean shutdown): all producer state forgotten"
            )?;
        } else {
            writeln!(
                w,
                "  producer state: {} then replay [{}, {}){}",
                ps.snapshot.as_deref().map_or(
                    "no snapshot (from the log start)".to_string(),
                    |s| format!("load {}", esc(s))
                ),
                opt(ps.replay_from),
                opt(ps.replay_to),
                match (ps.producers, ps.open_transactions) {
                    (Some(n), Some(o)) => format!(": {n} producers, {o} open transactions"),
                    _ => String::new(),
                }
            )?;
        }
        match &pr.load_failure {
            Some(f) => writeln!(
                w,
                "  LOAD FAILS: {} ({})",
                esc(&f.exception),
                esc(&f.message)
            )?,
            None => writeln!(w, "  load: ok")?,
        }
        writeln!(w)?;
    }
    if r.findings.is_empty() {
        writeln!(w, "No findings.")?;
    } else {
        writeln!(w, "Findings:")?;
        for f in &r.findings {
            let tp = if f.partition >= 0 {
                format!("{}-{}", esc(&f.topic), f.partition)
            } else {
                "(log dir)".into()
            };
            writeln!(
                w,
                "  {:<7} {:<34} {tp}  {}",
                f.severity.as_str(),
                f.kind.id(),
                esc(&f.message)
            )?;
        }
    }
    let s = &r.summary;
    writeln!(
        w,
        "\n{} partitions; {} recovered at load, {} truncated, {} fail to load; findings: {} error, {} warning, {} info",
        s.partitions,
        s.recovered,
        s.truncated,
        s.load_failures,
        s.findings.error,
        s.findings.warning,
        s.findings.info
    )?;
    Ok(())
}
