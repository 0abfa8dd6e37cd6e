//! The whole report: the per-partition stage's output ([`PartitionStage`]) with what the
//! cluster stage adds (findings across partitions, the joined transactions). The renderers
//! read it; `klogscan::results` re-exports it with every type it holds.

use crate::finding::{Finding, Severity};
use crate::partition::results::{
    PartitionReport, PartitionResult, PartitionStage, RESULT_FORMAT_VERSION, ResultFormatError,
    Summary, non_live_counts, severity_counts, summarise,
};
use std::path::PathBuf;

/// The whole report of a scan. `#[non_exhaustive]`: a caller outside this crate gets one
/// from `pipeline`/`request` (or [`ScanReport::default`],
/// [`ScanReport::from_partition_results`]), never by a struct literal.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ScanReport {
    pub inputs: Vec<String>,
    pub summary: Summary,
    pub partitions: Vec<PartitionReport>,
    /// Sorted by topic, partition, offset.
    pub findings: Vec<Finding>,
    /// Paths that could not be read at all.
    pub errors: Vec<(PathBuf, String)>,
    /// Cluster-wide transactions and their statistics (`txns`), once joined.
    pub transactions: Option<crate::cluster::txns::TxnAnalysis>,
    /// The directory ids each replayed metadata log's image registers for each broker
    /// (`cluster::leadership`), which `verify`'s broker checks hold the log dirs'
    /// `directory.id`s against. In no rendered output.
    pub registered_dirs: Vec<crate::cluster::leadership::RegisteredDirs>,
}

impl ScanReport {
    /// Each partition's results, for a cluster check run by another process.
    pub fn partition_results(&self) -> Vec<PartitionResult> {
        (0..self.partitions.len())
            .map(|i| {
                let p = &self.partitions[i];
                PartitionResult {
                    format_version: RESULT_FORMAT_VERSION,
                    partition: p.clone(),
                    findings: self.partition_findings(i).to_vec(),
                    txns: p.carried.outcome.txns.clone(),
                    cluster_inputs: (*p.carried.cluster_inputs).clone(),
                    segment_names: p.carried.segment_names.clone(),
                    timeline: p.carried.timeline().cloned(),
                }
            })
            .collect()
    }

    /// A report from partition results (made by [`Self::partition_results`], here or
    /// elsewhere), ready for `pipeline::run_cluster_checks`.
    pub fn from_partition_results(
        results: Vec<PartitionResult>,
    ) -> Result<ScanReport, ResultFormatError> {
        let mut report = ScanReport::default();
        for r in results {
            if r.format_version != RESULT_FORMAT_VERSION {
                return Err(ResultFormatError::Version {
                    found: r.format_version,
                });
            }
            if r.cluster_inputs.version != crate::partition::walked::FORMAT_VERSION {
                return Err(ResultFormatError::InputsVersion {
                    found: r.cluster_inputs.version,
                });
            }
            let mut p = r.partition;
            if !r.txns.is_empty() {
                p.carried.outcome.txns = r.txns;
            }
            p.carried.cluster_inputs.set(r.cluster_inputs);
            p.carried.segment_names = r.segment_names;
            p.carried.set_timeline(r.timeline.map(Box::new));
            let start = report.findings.len();
            report.findings.extend(r.findings);
            p.carried.finding_range = start..report.findings.len();
            report.partitions.push(p);
        }
        report.summary = summarise(&report.partitions, &report.findings);
        Ok(report)
    }

    /// The highest severity among the findings.
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
    /// True when nothing could be analysed (no partition read).
    pub fn nothing_read(&self) -> bool {
        self.partitions.is_empty() && self.summary.analysed.unwrap_or(0) == 0
    }

    /// True when partitions were analysed but the filters selected none of them.
    pub fn matched_nothing(&self) -> bool {
        self.partitions.is_empty() && self.summary.analysed.unwrap_or(0) > 0
    }

    /// Add findings to partitions after the scan (cross-checks such as the coordinator's
    /// and the replicas'): `extra[i]` joins `partitions[i]`'s findings, kept sorted by
    /// offset; every `finding_range` and the severity counts are rebuilt. Findings of no
    /// partition (unreadable paths) stay at the end.
    pub fn add_partition_findings(
        &mut self,
        mut extra: std::collections::BTreeMap<usize, Vec<Finding>>,
    ) {
        if extra.values().all(Vec::is_empty) {
            return;
        }
        let old = std::mem::take(&mut self.findings);
        let mut covered = vec![false; old.len()];
        let mut findings =
            Vec::with_capacity(old.len() + extra.values().map(Vec::len).sum::<usize>());
        for (i, p) in self.partitions.iter_mut().enumerate() {
            let range = p.carried.finding_range.clone();
            let mut mine: Vec<Finding> = old
                .get(range.clone())
                .map(<[Finding]>::to_vec)
                .unwrap_or_default();
            for c in covered.get_mut(range).into_iter().flatten() {
                *c = true;
            }
            if let Some(mut more) = extra.remove(&i) {
                crate::discover::identity::apply_source(&p.source, &mut more);
                mine.extend(more);
                mine.sort_by_key(|f| {
                    (f.offset.unwrap_or(i64::MAX), f.position.unwrap_or(u64::MAX))
                });
            }
            let start = findings.len();
            findings.extend(mine);
            p.carried.finding_range = start..findings.len();
        }
        findings.extend(
            old.into_iter()
                .zip(covered)
                .filter(|(_, c)| !c)
                .map(|(f, _)| f),
        );
        self.findings = findings;
        self.recount_findings();
    }

    /// Recompute `summary.findings` after findings were added or their severity changed.
    pub fn recount_findings(&mut self) {
        crate::finding::assign_ids(&mut self.findings);
        self.summary.findings = severity_counts(&self.findings);
        self.summary.non_live = non_live_counts(&self.partitions, &self.findings);
    }

    /// The findings of `partitions[i]` (several directories may hold the same
    /// topic-partition: copies from several brokers, `-future` dirs).
    pub fn partition_findings(&self, i: usize) -> &[Finding] {
        self.partitions
            .get(i)
            .and_then(|p| self.findings.get(p.carried.finding_range.clone()))
            .unwrap_or(&[])
    }

    /// Each partition's findings ([`Self::partition_findings`]), moved out of the report:
    /// its list of findings is left empty, with every partition's range, and the findings
    /// of no partition are dropped. A consumer that reads each partition's findings on
    /// their own (`verify`) holds them once, not the report's list and a copy.
    pub(crate) fn take_partition_findings(&mut self) -> Vec<Vec<Finding>> {
        let n = self.partitions.len();
        let ranges: Vec<std::ops::Range<usize>> = self
            .partitions
            .iter_mut()
            .map(|p| std::mem::replace(&mut p.carried.finding_range, 0..0))
            .collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&k| (ranges[k].start, ranges[k].end));
        // Ranges are disjoint and inside the list (every stage keeps them so); were they
        // not, each partition gets a copy of its range, as `partition_findings` reads it.
        let disjoint = order
            .windows(2)
            .all(|w| ranges[w[0]].end <= ranges[w[1]].start)
            && ranges
                .iter()
                .all(|r| r.start <= r.end && r.end <= self.findings.len());
        let all = std::mem::take(&mut self.findings);
        if !disjoint {
            return ranges
                .into_iter()
                .map(|r| all.get(r).map(<[Finding]>::to_vec).unwrap_or_default())
                .collect();
        }
        let mut out: Vec<Vec<Finding>> = (0..n).map(|_| Vec::new()).collect();
        let mut all = all.into_iter();
        let mut at = 0;
        for k in order {
            let r = &ranges[k];
            // Findings of no partition between the ranges are dropped.
            if r.start > at {
                all.nth(r.start - at - 1);
            }
            out[k] = all.by_ref().take(r.len()).collect();
            at = r.end;
        }
        out
    }
}

impl From<PartitionStage> for ScanReport {
    fn from(s: PartitionStage) -> Self {
        ScanReport {
            inputs: Vec::new(),
            summary: s.summary,
            partitions: s.partitions,
            findings: s.findings,
            errors: s.errors,
            transactions: None,
            registered_dirs: Vec::new(),
        }
    }
}
