//! `scan --format jsonl`: the report as JSON Lines, one object per line in ripgrep's
//! `--json` style — `{"type": ..., "data": ...}` — so that a huge report can be processed
//! line by line (`jq -c 'select(.type == "finding")'`) instead of parsed as one document.
//!
//! Lines, in order: `begin` (schema version, inputs); per partition a `partition` line
//! followed by that partition's `finding` lines; `finding` lines of no partition; one
//! `incident` line per triage incident; one `error` line per unreadable path; `summary`.
//! The `data` objects have the same fields as the JSON report's (`docs/report-schema.md`).

use super::json::REPORT_VERSION;
use crate::scan::ScanReport;
use serde::Serialize;
use serde_json::json;
use std::io::{self, Write};

fn line<T: Serialize>(w: &mut dyn Write, kind: &str, data: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *w, &json!({"type": kind, "data": data}))?;
    writeln!(w)
}

/// Write the report as JSON Lines. With `findings_only`, no `partition` lines.
pub fn write_scan(report: &ScanReport, findings_only: bool, w: &mut dyn Write) -> io::Result<()> {
    line(
        w,
        "begin",
        &json!({"klogscan_report": REPORT_VERSION, "inputs": report.inputs}),
    )?;
    let mut covered = vec![false; report.findings.len()];
    for (i, p) in report.partitions.iter().enumerate() {
        if !findings_only {
            line(w, "partition", p)?;
        }
        for f in report.partition_findings(i) {
            line(w, "finding", f)?;
        }
        for c in covered
            .get_mut(p.finding_range.clone())
            .into_iter()
            .flatten()
        {
            *c = true;
        }
    }
    for (f, _) in report.findings.iter().zip(&covered).filter(|(_, c)| !**c) {
        line(w, "finding", f)?;
    }
    for inc in super::triage::incidents(&report.findings) {
        line(w, "incident", &inc)?;
    }
    for (p, e) in &report.errors {
        line(
            w,
            "error",
            &json!({"path": p.display().to_string(), "error": e}),
        )?;
    }
    line(w, "summary", &report.summary)
}
