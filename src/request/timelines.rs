//! Which timelines the HTML report draws, chosen among those the walk collected
//! (`ScanOptions::collect_timelines`; no file is read here): the partitions with findings
//! (the most severe first), the partitions asked for by `--timeline`, and, for each
//! `--producer-id`, that producer's lane in every partition it wrote to.

use crate::discover::archive::Prepared;
use crate::partition::timeline::{ProducerRow, ProducerTimeline, Timeline};
use crate::report::html::{MAX_PRODUCER_ROWS, MAX_TIMELINES};
use crate::results::ScanReport;
use std::path::Path;

/// What the HTML report draws besides the report.
#[derive(Debug, Default)]
pub(super) struct Chosen {
    /// Aligned with `report.partitions`.
    pub timelines: Vec<Option<Timeline>>,
    pub producers: Vec<ProducerTimeline>,
    pub warnings: Vec<String>,
}

/// The timelines of the partitions that have findings (at most [`MAX_TIMELINES`], most
/// severe first), aligned with `report.partitions`: what their walks collected
/// (`ScanOptions::collect_timelines`).
pub fn timelines(report: &ScanReport) -> Vec<Option<Timeline>> {
    let drawn = with_findings(report);
    report
        .partitions
        .iter()
        .zip(drawn)
        .map(|(p, d)| {
            if d {
                p.carried.timeline().cloned()
            } else {
                None
            }
        })
        .collect()
}

/// Move the drawn timelines out of the report (the others are dropped): those of
/// [`timelines`] and those `asked` for (`topic-N`, a topic glob, or a partition
/// directory's path; at most [`MAX_TIMELINES`] more), and the views of `producer_ids`.
pub(super) fn choose(
    report: &mut ScanReport,
    asked: &[String],
    producer_ids: &[i64],
    inputs: &Prepared,
) -> Chosen {
    let mut drawn = with_findings(report);
    let mut warnings = Vec::new();
    let mut extra = 0usize;
    for spec in asked {
        let mut matched = 0usize;
        for (i, p) in report.partitions.iter().enumerate() {
            if !spec_matches(spec, &p.topic, p.partition, &p.path, inputs) {
                continue;
            }
            matched += 1;
            if drawn[i] || p.carried.timeline().is_none() {
                continue;
            }
            if extra < MAX_TIMELINES {
                drawn[i] = true;
                extra += 1;
            }
        }
        if matched == 0 {
            warnings.push(format!(
                "--timeline {spec}: no partition shown matches it (a topic-N name, a topic glob, or a partition directory)"
            ));
        }
    }
    if extra == MAX_TIMELINES && asked_total(report, asked, inputs) > MAX_TIMELINES {
        warnings.push(format!(
            "--timeline: {MAX_TIMELINES} timelines drawn, the first partitions asked for; name fewer"
        ));
    }
    let producers = producer_ids
        .iter()
        .map(|&pid| producer_view(report, pid))
        .collect();
    let timelines = report
        .partitions
        .iter_mut()
        .zip(drawn)
        .map(|(p, d)| p.carried.take_timeline().filter(|_| d).map(|t| *t))
        .collect();
    Chosen {
        timelines,
        producers,
        warnings,
    }
}

/// How many shown partitions with a timeline the `--timeline` specs name.
fn asked_total(report: &ScanReport, asked: &[String], inputs: &Prepared) -> usize {
    report
        .partitions
        .iter()
        .filter(|p| {
            p.carried.timeline().is_some()
                && asked
                    .iter()
                    .any(|s| spec_matches(s, &p.topic, p.partition, &p.path, inputs))
        })
        .count()
}

/// Producer `pid`'s lane in every partition where it wrote a batch: its own lane, or the
/// shared lane where it has none (a timeline collected without asking for it) and the
/// replay saw it.
fn producer_view(report: &ScanReport, pid: i64) -> ProducerTimeline {
    let mut rows = Vec::new();
    let mut more = 0usize;
    for (i, p) in report.partitions.iter().enumerate() {
        let Some(t) = p.carried.timeline() else {
            continue;
        };
        let row = match t.lane_of(pid) {
            Some(l) => Some((l, false)),
            None => t
                .lanes
                .iter()
                .find(|l| l.merged)
                .filter(|_| {
                    p.carried
                        .outcome
                        .producers
                        .iter()
                        .any(|s| s.producer_id == pid)
                })
                .map(|l| (l, true)),
        };
        let Some((lane, shared)) = row else { continue };
        if rows.len() == MAX_PRODUCER_ROWS {
            more += 1;
            continue;
        }
        rows.push(ProducerRow {
            partition: i,
            lane: lane.clone(),
            shared,
        });
    }
    ProducerTimeline {
        producer_id: pid,
        rows,
        more,
    }
}

/// Does a `--timeline` spec name this partition: as `topic-N` or a topic glob (as
/// `--topic` reads them), or as its directory (as given, as shown for an archive member,
/// or the same directory by another path)?
fn spec_matches(spec: &str, topic: &str, partition: i32, path: &str, inputs: &Prepared) -> bool {
    if !topic.is_empty() && crate::report::filter::topic_matches(spec, topic, partition) {
        return true;
    }
    let given = Path::new(spec);
    if given == Path::new(path) || given == Path::new(&inputs.display(path)) {
        return true;
    }
    let looks_like_path = spec.contains('/') || spec.contains(std::path::MAIN_SEPARATOR);
    looks_like_path
        && matches!(
            (given.canonicalize(), Path::new(path).canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}

/// Per partition: whether it is among the [`MAX_TIMELINES`] most severe partitions with
/// findings.
fn with_findings(report: &ScanReport) -> Vec<bool> {
    let mut order: Vec<(crate::finding::Severity, usize)> = (0..report.partitions.len())
        .filter_map(|i| {
            report
                .partition_findings(i)
                .iter()
                .map(|f| f.severity)
                .max()
                .map(|s| (s, i))
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = vec![false; report.partitions.len()];
    for &(_, i) in order.iter().take(MAX_TIMELINES) {
        out[i] = true;
    }
    out
}
