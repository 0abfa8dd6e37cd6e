//! `klogscan consumers` output: one row per group × partition, like
//! `kafka-consumer-groups.sh --describe`, with the lag against the last stable offset too;
//! or the whole view as JSON.

use super::style::{Layout, Shape, Style, wrap, wrap_long, write_fitted};
use crate::cluster::consumers::{ConsumerRow, ConsumerView, ConsumersOptions};
use crate::finding::evidence::PendingJoint;
use crate::finding::{Finding, Kind};
use std::io::{self, Write};

/// The finding kinds about what consumers saw.
pub const CONSUMER_KINDS: [Kind; 7] = [
    Kind::CommittedOffsetBeyondLogEnd,
    Kind::CommittedOffsetBelowLogStart,
    Kind::GroupBlockedByHangingTransaction,
    Kind::GroupOffsetsPendingInHangingTransaction,
    Kind::CommittedLeaderEpochUnknown,
    Kind::CommittedOffsetPastEpochEnd,
    Kind::CommittedOffsetTopicIdMismatch,
];

/// The consumer findings that `keep` selects (by group; by topic and partition the data
/// partition's, or for a pending commit one of its pending offsets').
pub fn consumer_findings<'a>(all: &'a [Finding], keep: &ConsumersOptions) -> Vec<&'a Finding> {
    all.iter()
        .filter(|f| CONSUMER_KINDS.contains(&f.kind))
        .filter(|f| {
            keep.group
                .as_deref()
                .is_none_or(|g| f.group.as_deref() == Some(g))
        })
        .filter(|f| {
            if f.kind != Kind::GroupOffsetsPendingInHangingTransaction {
                return keep.topic.as_deref().is_none_or(|t| t == f.topic)
                    && keep.partition.is_none_or(|p| p == f.partition);
            }
            let pending = crate::finding::evidence::read::<PendingJoint>(f).pending_offsets;
            pending.iter().any(|o| {
                keep.topic.as_deref().is_none_or(|t| o.topic == t)
                    && keep.partition.is_none_or(|p| o.partition == p)
            })
        })
        .collect()
}

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The log end, shown only where it differs from the high watermark.
fn log_end(r: &ConsumerRow) -> String {
    match &r.data {
        Some(d) if d.log_end_offset != d.high_watermark => opt(d.log_end_offset),
        Some(_) => "=HW".to_string(),
        None => "-".to_string(),
    }
}

/// [`write_table_with`] for a file or a pipe (140 columns, no colour).
pub fn write_table(
    view: &ConsumerView,
    findings: &[&Finding],
    out: &mut dyn Write,
) -> io::Result<()> {
    write_table_with(view, findings, &Style::default(), out)
}

/// One line per group × partition, what was not matched, then the consumer findings; at
/// `style`'s width, as every table (narrower layouts, then one block per row).
pub fn write_table_with(
    view: &ConsumerView,
    findings: &[&Finding],
    style: &Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    let header = [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "COMMITTED",
        "EPOCH",
        "LOG-START",
        "LSO",
        "HW",
        "LOG-END",
        "LAG(HW)",
        "LAG(LSO)",
        "HANGING",
        "COMMIT-TIME",
    ];
    let rows: Vec<Vec<String>> = view
        .rows
        .iter()
        .map(|r| {
            let d = r.data.as_ref();
            vec![
                crate::escape::text(&r.group_id).into_owned(),
                crate::escape::text(&r.topic).into_owned(),
                r.partition.to_string(),
                r.committed_offset.to_string(),
                r.committed_leader_epoch
                    .map_or_else(|| "-".to_string(), |e| e.to_string()),
                opt(d.and_then(|d| d.log_start_offset)),
                opt(d.and_then(|d| d.last_stable_offset)),
                opt(d.and_then(|d| d.high_watermark)),
                log_end(r),
                opt(r.lag_high_watermark),
                opt(r.lag_last_stable),
                d.and_then(|d| d.hanging.first()).map_or_else(
                    || "-".to_string(),
                    |h| format!("{}@{}", h.producer_id, h.first_offset),
                ),
                r.commit_timestamp.to_string(),
            ]
        })
        .collect();
    let layouts: [Layout<'_>; 2] = [
        &[
            (0, "GROUP"),
            (1, "TOPIC"),
            (2, "PARTITION"),
            (3, "COMMITTED"),
            (6, "LSO"),
            (7, "HW"),
            (9, "LAG(HW)"),
            (10, "LAG(LSO)"),
            (11, "HANGING"),
        ],
        &[
            (0, "GROUP"),
            (1, "TOPIC"),
            (2, "PARTITION"),
            (3, "COMMITTED"),
            (9, "LAG(HW)"),
            (10, "LAG(LSO)"),
        ],
    ];
    write_fitted(
        style,
        Shape {
            plain: true,
            ..Shape::default()
        },
        &header,
        &rows,
        &layouts,
        out,
    )?;
    let width = usize::from(style.width);
    let line = format!(
        "{} row(s), {} group(s); commits naming no partition of the inputs: {} absent, {} of another or unproven cluster; {} pending transactional commit(s)",
        view.rows.len(),
        view.groups.len(),
        view.unmatched.absent,
        view.unmatched.other_cluster,
        view.pending.iter().map(|p| p.offsets.len()).sum::<usize>()
    );
    writeln!(out, "{}", wrap(&line, width, 0, 2))?;
    for f in findings {
        let line = format!(
            "{} {} [{}] {}-{}@{}: {}",
            f.severity,
            f.kind,
            crate::escape::text(f.group.as_deref().unwrap_or("-")),
            crate::escape::text(&f.topic),
            f.partition,
            f.offset.map_or_else(|| "-".to_string(), |o| o.to_string()),
            crate::escape::text(&f.message)
        );
        writeln!(out, "{}", wrap_long(&line, width, 0, 4))?;
    }
    Ok(())
}

/// `{"consumers": {groups, rows, pending, unmatched, unread}, "findings": […]}`.
pub fn to_json(view: &ConsumerView, findings: &[&Finding]) -> serde_json::Value {
    serde_json::json!({ "consumers": view, "findings": findings })
}

/// [`to_json`], written.
pub fn write_json(
    view: &ConsumerView,
    findings: &[&Finding],
    out: &mut dyn Write,
) -> io::Result<()> {
    write_value(&to_json(view, findings), out)
}

/// A JSON document as this renderer writes it (pretty, escaped, a newline after).
pub fn write_value(v: &serde_json::Value, out: &mut dyn Write) -> io::Result<()> {
    crate::escape::write_pretty_json(&mut *out, v)?;
    writeln!(out)
}
