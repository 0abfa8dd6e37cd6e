//! `scan --format jsonl`: the report as JSON Lines, one object per line in ripgrep's
//! `--json` style — `{"type": ..., "data": ...}` — written while the scan runs, so that a
//! huge report can be processed line by line (`jq -c 'select(.type == "finding")'`)
//! instead of parsed as one document.
//!
//! Lines, in order (`docs/report-schema.md`, "JSON Lines"):
//! 1. `begin` (schema version, inputs), before anything is read;
//! 2. per partition, as soon as its own analysis is final (before the cluster checks): its
//!    `partition` line, then its `finding` lines — except the kinds the cluster checks
//!    rewrite in place (`held_back`), which wait for step 3;
//! 3. after the cluster checks, per partition in report order: the `partition` line if it
//!    was not written yet (a partition shown only because of a finding a cluster check
//!    added), then every finding of it not written yet (held back, or added by a cluster
//!    check); then the findings of no partition;
//! 4. one `incident` line per triage incident, one `error` line per unreadable path, and
//!    `summary`.
//!
//! Every finding is written once, in its final form. Should a cluster check ever change a
//! finding that was already written, the final form is written again in step 3 with the
//! same `id`: a later `finding` line replaces an earlier one with the same `id`.
//! The `data` objects have the same fields as the JSON report's.

use super::json::REPORT_VERSION;
use crate::finding::{Finding, Kind};
use crate::results::ScanReport;
use serde::Serialize;
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{self, Write};

/// Kinds a cluster check may still rewrite after the partition's own analysis (the
/// coordinator's confirmation and the cross-partition root-cause links): their lines are
/// written after the cluster checks.
pub(crate) fn held_back(kind: Kind) -> bool {
    matches!(kind, Kind::HangingTransaction | Kind::OpenTransaction)
}

fn encode<T: Serialize>(kind: &str, data: &T) -> io::Result<Vec<u8>> {
    let mut v = serde_json::to_vec(&json!({"type": kind, "data": data}))?;
    v.push(b'\n');
    Ok(v)
}

fn digest(line: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    line.hash(&mut h);
    h.finish()
}

/// A JSON Lines report being written: [`Stream::begin`], [`Stream::partition`] per
/// partition as the pipeline hands it over, [`Stream::finish`] with the complete report.
pub struct Stream<'w> {
    w: &'w mut dyn Write,
    findings_only: bool,
    begun: bool,
    /// Paths of the partitions whose line is written.
    partitions: HashSet<String>,
    /// Digest of each finding line written early → how many times.
    written: HashMap<u64, u32>,
    /// The first write error: the pipeline's callback cannot return one.
    error: Option<io::Error>,
}

impl<'w> Stream<'w> {
    /// A stream to `w`; with `findings_only`, no `partition` lines.
    pub fn new(w: &'w mut dyn Write, findings_only: bool) -> Self {
        Stream {
            w,
            findings_only,
            begun: false,
            partitions: HashSet::new(),
            written: HashMap::new(),
            error: None,
        }
    }

    /// The `begin` line, with the inputs as given.
    pub fn begin(&mut self, inputs: &[String]) -> io::Result<()> {
        self.begun = true;
        self.w.write_all(&encode(
            "begin",
            &json!({"klogscan_report": REPORT_VERSION, "inputs": inputs}),
        )?)?;
        self.w.flush()
    }

    /// One partition whose own analysis is final: `partition` is its JSON form (paths
    /// already as shown), `path` its path as shown, `findings` those that pass the filters,
    /// `shown` whether the filters show the partition. Errors are kept for [`Stream::finish`].
    pub fn partition(
        &mut self,
        partition: &serde_json::Value,
        path: &str,
        findings: &[Finding],
        shown: bool,
    ) {
        if self.error.is_some() || !shown {
            return;
        }
        if let Err(e) = self.write_partition(partition, path, findings) {
            self.error = Some(e);
        }
    }

    fn write_partition(
        &mut self,
        partition: &serde_json::Value,
        path: &str,
        findings: &[Finding],
    ) -> io::Result<()> {
        if !self.findings_only {
            self.w.write_all(&encode("partition", partition)?)?;
            self.partitions.insert(path.to_string());
        }
        for f in findings.iter().filter(|f| !held_back(f.kind)) {
            let line = encode("finding", f)?;
            self.w.write_all(&line)?;
            *self.written.entry(digest(&line)).or_insert(0) += 1;
        }
        self.w.flush()
    }

    /// A finding of the complete report, unless the same line was written early.
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        let line = encode("finding", f)?;
        if let Some(n) = self.written.get_mut(&digest(&line))
            && *n > 0
        {
            *n -= 1;
            return Ok(());
        }
        self.w.write_all(&line)
    }

    /// Everything not written yet, from the complete (filtered, path-mapped) report.
    pub fn finish(mut self, report: &ScanReport) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if !self.begun {
            self.begin(&report.inputs)?;
        }
        let mut covered = vec![false; report.findings.len()];
        for (i, p) in report.partitions.iter().enumerate() {
            if !self.findings_only && !self.partitions.contains(&p.path) {
                self.w.write_all(&encode("partition", p)?)?;
            }
            for f in report.partition_findings(i) {
                self.finding(f)?;
            }
            for c in covered
                .get_mut(p.carried.finding_range.clone())
                .into_iter()
                .flatten()
            {
                *c = true;
            }
        }
        for (f, _) in report.findings.iter().zip(&covered).filter(|(_, c)| !**c) {
            self.finding(f)?;
        }
        for inc in super::triage::incidents_in(report) {
            self.w.write_all(&encode("incident", &inc)?)?;
        }
        for (p, e) in &report.errors {
            self.w.write_all(&encode(
                "error",
                &json!({"path": p.display().to_string(), "error": e}),
            )?)?;
        }
        self.w.write_all(&encode("summary", &report.summary)?)?;
        self.w.flush()
    }
}

/// Write a complete report as JSON Lines at once (the order of [`Stream`] with nothing
/// written early). With `findings_only`, no `partition` lines.
pub fn write_scan(report: &ScanReport, findings_only: bool, w: &mut dyn Write) -> io::Result<()> {
    Stream::new(w, findings_only).finish(report)
}
