//! Filters on the finished report: they select what is shown, never what is analysed (every
//! partition is replayed and cross-checked whatever the filters say, so a finding that
//! depends on another partition — the coordinator's log, another replica — is the same with
//! or without them).

use crate::finding::{Finding, Severity};
use crate::partition::scan::{PartitionReport, SeverityCounts, glob_match};
use crate::results::ScanReport;

/// An offset range: `A..B` (B excluded), `A..=B`, `A..`, `..B`, or a single offset `A`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetRange {
    pub start: i64,
    /// Exclusive end.
    pub end: i64,
}

impl OffsetRange {
    pub fn contains(&self, o: i64) -> bool {
        self.start <= o && o < self.end
    }
}

/// Parse `--offsets`.
pub fn parse_offsets(s: &str) -> Result<OffsetRange, String> {
    let bad = || format!("cannot parse offsets {s:?}: use A..B (B excluded), A..=B, A.., ..B or A");
    // Where a bound is, when it is not the whole value.
    let within = |x: &str| {
        if x == s.trim() {
            String::new()
        } else {
            format!(" in {s:?}")
        }
    };
    // A number beyond 64 bits is too large (or too small), not unparsable.
    let num = |x: &str| {
        let x = x.trim();
        let n = crate::report::whole_number(x).ok_or_else(bad)?;
        i64::try_from(n).map_err(|_| {
            let (what, bound) = if n < 0 {
                ("small", format!("at least {}", i64::MIN))
            } else {
                ("large", format!("at most {}", i64::MAX))
            };
            format!(
                "offset {x}{} is too {what} (offsets are 64-bit: {bound})",
                within(x)
            )
        })
    };
    // What a single offset or `A..=B` selects ends one past it, itself a 64-bit offset.
    let past = |o: i64| {
        o.checked_add(1).ok_or_else(|| {
            format!(
                "offset {o}{} is too large: a single offset, or the B of A..=B, is at most {} (the range selected ends one past it, a 64-bit offset)",
                within(&o.to_string()),
                i64::MAX - 1
            )
        })
    };
    let r = if let Some((a, b)) = s.split_once("..") {
        let start = if a.trim().is_empty() {
            i64::MIN
        } else {
            num(a)?
        };
        let end = if let Some(b) = b.strip_prefix('=') {
            past(num(b)?)?
        } else if b.trim().is_empty() {
            i64::MAX
        } else {
            num(b)?
        };
        OffsetRange { start, end }
    } else {
        let o = num(s)?;
        OffsetRange {
            start: o,
            end: past(o)?,
        }
    };
    if r.start >= r.end {
        return Err(format!("offsets {s:?} select nothing (start >= end)"));
    }
    Ok(r)
}

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Topic globs (`*`, `?`, `[...]`) or `topic-N` partition names as the table shows them,
    /// comma-separated on the command line.
    pub topics: Vec<String>,
    pub partition: Option<i32>,
    /// Producer ids (from `--producer-id`, and the ids a `--transactional-id` maps to).
    pub producer_ids: Vec<i64>,
    /// Findings whose batch timestamp is at or after this (ms).
    pub since: Option<i64>,
    /// Findings whose batch timestamp is at or before this (ms).
    pub until: Option<i64>,
    pub offsets: Option<OffsetRange>,
    pub min_severity: Option<Severity>,
}

impl Filter {
    /// True when the filter hides something.
    pub fn is_active(&self) -> bool {
        !self.topics.is_empty()
            || self.partition.is_some()
            || !self.producer_ids.is_empty()
            || self.since.is_some()
            || self.until.is_some()
            || self.offsets.is_some()
            || self.min_severity.is_some()
    }

    /// Does `topic`-`partition` pass the topic and partition filters?
    pub fn partition_matches(&self, topic: &str, partition: i32) -> bool {
        if self.partition.is_some_and(|p| p != partition) {
            return false;
        }
        self.topics.is_empty()
            || self
                .topics
                .iter()
                .any(|pat| topic_matches(pat, topic, partition))
    }

    fn producer_matches(&self, pid: Option<i64>) -> bool {
        self.producer_ids.is_empty() || pid.is_some_and(|p| self.producer_ids.contains(&p))
    }

    fn time_matches(&self, ts: Option<i64>) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        ts.is_some_and(|t| self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t <= u))
    }

    fn offset_matches(&self, o: Option<i64>) -> bool {
        self.offsets
            .is_none_or(|r| o.is_some_and(|o| r.contains(o)))
    }

    /// Does a finding pass every filter?
    pub fn finding_matches(&self, f: &Finding) -> bool {
        let place = if f.topic.is_empty() {
            self.topics.is_empty() && self.partition.is_none()
        } else {
            self.partition_matches(&f.topic, f.partition)
        };
        place
            && self.producer_matches(f.producer_id)
            && self.time_matches(finding_time(f))
            && self.offset_matches(f.offset)
            && self.min_severity.is_none_or(|m| f.severity >= m)
    }

    /// Is the partition shown, given its findings (a producer filter shows the partitions
    /// where the producer appears)?
    pub fn partition_shown(&self, p: &PartitionReport, findings: &[Finding]) -> bool {
        self.partition_matches(&p.topic, p.partition)
            && (self.producer_ids.is_empty()
                || p.carried
                    .outcome
                    .producers
                    .iter()
                    .any(|s| self.producer_ids.contains(&s.producer_id))
                || findings
                    .iter()
                    .any(|f| self.producer_matches(f.producer_id)))
    }

    /// Reduce a finished report to what the filters select: partitions (with their
    /// producers and open transactions), findings, and the summary's counts. Finding ids
    /// and `caused_by` links are kept as assigned over the whole analysis.
    pub fn apply(&self, report: &mut ScanReport) {
        if !self.is_active() {
            return;
        }
        report.summary.analysed = Some(report.partitions.len());
        let old = std::mem::take(&mut report.findings);
        let mut covered = vec![false; old.len()];
        let mut kept = Vec::new();
        let mut findings = Vec::new();
        for mut p in std::mem::take(&mut report.partitions) {
            let range = p.carried.finding_range.clone();
            let mine = old.get(range.clone()).unwrap_or(&[]);
            for c in covered.get_mut(range).into_iter().flatten() {
                *c = true;
            }
            if !self.partition_shown(&p, mine) {
                continue;
            }
            let start = findings.len();
            findings.extend(mine.iter().filter(|f| self.finding_matches(f)).cloned());
            p.carried.finding_range = start..findings.len();
            p.carried.outcome.producers.retain(|s| {
                self.producer_matches(Some(s.producer_id))
                    && self.time_matches(Some(s.last_timestamp))
                    && self.offset_matches(Some(s.last_offset))
            });
            p.carried.outcome.open.retain(|o| {
                self.producer_matches(Some(o.producer_id))
                    && self.time_matches(Some(o.last_timestamp))
                    && self.offset_matches(Some(o.first_offset))
            });
            p.carried.outcome.shrink();
            kept.push(p);
        }
        findings.extend(
            old.into_iter()
                .zip(covered)
                .filter(|(f, c)| !c && self.finding_matches(f))
                .map(|(f, _)| f),
        );
        report.partitions = kept;
        report.findings = findings;
        let s = &mut report.summary;
        s.partitions = report.partitions.len();
        s.segments = report.partitions.iter().map(|p| p.segments).sum();
        s.batches = report.partitions.iter().map(|p| p.batches).sum();
        s.records = report.partitions.iter().map(|p| p.records).sum();
        s.bytes = report.partitions.iter().map(|p| p.bytes).sum();
        s.findings = counts(&report.findings);
    }

    /// Keep only the findings that pass (for reports other than the scan's).
    pub fn retain_findings(&self, findings: &mut Vec<Finding>) {
        if self.is_active() {
            findings.retain(|f| self.finding_matches(f));
        }
    }
}

/// Findings per severity.
pub fn counts<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> SeverityCounts {
    let mut c = SeverityCounts::default();
    for f in findings {
        match f.severity {
            Severity::Error => c.error += 1,
            Severity::Warning => c.warning += 1,
            Severity::Info => c.info += 1,
        }
    }
    c
}

/// `pattern` as a topic glob, or as a `topic-N` partition name (`payments-3`, `pay*-3`).
pub(crate) fn topic_matches(pattern: &str, topic: &str, partition: i32) -> bool {
    if glob_match(pattern, topic) {
        return true;
    }
    match pattern.rsplit_once('-') {
        Some((t, n)) => n.parse::<i32>() == Ok(partition) && glob_match(t, topic),
        None => false,
    }
}

/// When the finding happened ([`crate::finding::evidence::WhenJoint`]).
pub(crate) fn finding_time(f: &Finding) -> Option<i64> {
    crate::finding::evidence::WhenJoint::time_of(f)
}

/// Which cluster transactions `txns --cluster` lists: every value of the repeatable
/// filters counts (a transaction passes when it matches any of the `--transactional-id`s,
/// any of the `--producer-id`s, and touches a partition of any `--topic`), and the time
/// window `--from`/`--to` (a transaction overlapping it passes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnFilter {
    pub transactional_ids: Vec<String>,
    pub producer_ids: Vec<i64>,
    /// Topic globs or `topic-N` partition names, as for [`Filter::topics`].
    pub topics: Vec<String>,
    pub partition: Option<i32>,
    pub from_ms: Option<i64>,
    pub to_ms: Option<i64>,
}

impl TxnFilter {
    /// Whether `t` passes the filter.
    pub fn accepts(&self, t: &crate::cluster::txns::ClusterTxn) -> bool {
        let end = t.end_ms.unwrap_or(i64::MAX);
        let place = Filter {
            topics: self.topics.clone(),
            partition: self.partition,
            ..Filter::default()
        };
        (self.transactional_ids.is_empty()
            || t.transactional_id
                .as_deref()
                .is_some_and(|id| self.transactional_ids.iter().any(|x| x == id)))
            && (self.producer_ids.is_empty() || self.producer_ids.contains(&t.producer_id))
            && ((self.topics.is_empty() && self.partition.is_none())
                || t.partitions
                    .iter()
                    .any(|p| place.partition_matches(&p.topic, p.partition)))
            && self.from_ms.is_none_or(|f| end >= f)
            && self.to_ms.is_none_or(|to| t.start_ms <= to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Kind;
    use serde_json::json;

    #[test]
    fn offsets_ranges() {
        assert_eq!(
            parse_offsets("10..20").unwrap(),
            OffsetRange { start: 10, end: 20 }
        );
        assert_eq!(parse_offsets("10..=20").unwrap().end, 21);
        assert_eq!(parse_offsets("..5").unwrap().start, i64::MIN);
        assert_eq!(parse_offsets("5..").unwrap().end, i64::MAX);
        assert!(parse_offsets("7").unwrap().contains(7));
        assert!(!parse_offsets("7").unwrap().contains(8));
        assert!(parse_offsets("x..3").is_err());
        assert!(parse_offsets("5..5").is_err());
        // Beyond 64 bits, or the largest offset where one past it is needed: too large,
        // not unparsable (before: "cannot parse offsets"). Near misses: the largest bounds
        // that fit.
        for big in [
            "9223372036854775807",
            "9223372036854775808",
            "99999999999999999999999999999999999999999",
            "0..=9223372036854775807",
            "0..9223372036854775808",
            "9223372036854775808..",
        ] {
            let e = parse_offsets(big).unwrap_err();
            assert!(e.contains("is too large"), "{big}: {e}");
        }
        let e = parse_offsets("..-9223372036854775809").unwrap_err();
        assert!(e.contains("is too small"), "{e}");
        assert_eq!(parse_offsets("9223372036854775806").unwrap().end, i64::MAX);
        assert_eq!(
            parse_offsets("0..9223372036854775807").unwrap().end,
            i64::MAX
        );
        assert_eq!(parse_offsets("+5").unwrap().start, 5);
        assert!(parse_offsets("5x").unwrap_err().starts_with("cannot parse"));
    }

    #[test]
    fn topic_patterns_accept_partition_names() {
        assert!(topic_matches("payments-3", "payments", 3));
        assert!(!topic_matches("payments-3", "payments", 4));
        assert!(topic_matches("pay*", "payments", 4));
        assert!(topic_matches("pay*-3", "payments", 3));
        assert!(topic_matches("pay[mn]ents-3", "payments", 3));
        assert!(!topic_matches("pay[!m]ents", "payments", 3));
        // A topic whose name itself ends in -N still matches by name.
        assert!(topic_matches("orders-2024", "orders-2024", 0));
    }

    #[test]
    fn findings_match_on_time_offset_producer_and_severity() {
        let f = Finding::new(Kind::ZombieWrite, "payments", 3, "z")
            .offset(21)
            .producer(4001, 18)
            .evidence(json!({"batch": {"timestamp": 1000}, "marker": {"timestamp": 900}}));
        assert_eq!(finding_time(&f), Some(1000));
        let pass = |flt: Filter| flt.finding_matches(&f);
        assert!(pass(Filter {
            producer_ids: vec![4001],
            ..Default::default()
        }));
        assert!(!pass(Filter {
            producer_ids: vec![5001],
            ..Default::default()
        }));
        assert!(pass(Filter {
            since: Some(1000),
            until: Some(1000),
            ..Default::default()
        }));
        assert!(!pass(Filter {
            since: Some(1001),
            ..Default::default()
        }));
        assert!(pass(Filter {
            offsets: Some(parse_offsets("20..22").unwrap()),
            ..Default::default()
        }));
        assert!(!pass(Filter {
            offsets: Some(parse_offsets("..21").unwrap()),
            ..Default::default()
        }));
        assert!(!pass(Filter {
            topics: vec!["payments-4".into()],
            ..Default::default()
        }));
        let info = Finding::new(Kind::OffsetGap, "payments", 3, "gap");
        let warn = Filter {
            min_severity: Some(Severity::Warning),
            ..Default::default()
        };
        assert!(!warn.finding_matches(&info) && warn.finding_matches(&f));
        // Without a batch: the earliest of the records a finding compares
        // (`transaction_state_anomaly`) or of the entries it lists (`timeindex_mismatch`).
        let g = Finding::new(Kind::TransactionStateAnomaly, "t", 0, "g")
            .evidence(json!({"previous": {"timestamp": 7}, "current": {"timestamp": 9}}));
        assert_eq!(finding_time(&g), Some(7));
        let first = Finding::new(Kind::TransactionStateAnomaly, "t", 0, "g")
            .evidence(json!({"previous": null, "current": {"timestamp": 9}}));
        assert_eq!(finding_time(&first), Some(9));
        let e = Finding::new(Kind::TimeindexMismatch, "t", 0, "g")
            .evidence(json!({"entries": [{"timestamp": 7}, {"timestamp": -1}, {"timestamp": 3}]}));
        assert_eq!(finding_time(&e), Some(3));
        // A time under any other name is not searched for: the writer names its time.
        let g = Finding::new(Kind::OffsetGap, "t", 0, "g")
            .evidence(json!({"a": [{"timestamp": 7}, {"timestamp": 3}]}));
        assert_eq!(finding_time(&g), None);
        assert_eq!(finding_time(&info), None);
    }
}
