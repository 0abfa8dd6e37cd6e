//! The SVG timeline of one partition in the HTML report: a lane per producer (its
//! transactions and batches as spans, its markers), the leader epochs, the tiered bands,
//! the LSO/LEO lines, groups' committed offsets and the findings pinned where they happened.
//! Also the colours, label placement and hover texts the per-producer view shares.

use super::{esc, label};
use crate::finding::{Finding, Severity};
use crate::partition::scan::PartitionReport;
use crate::partition::timeline::{SpanKind, Timeline};
use crate::report::format_ms;
use std::fmt::Write as _;

const COLOR_DATA: &str = "#90caf9";
const COLOR_COMMITTED: &str = "#66bb6a";
const COLOR_ABORTED: &str = "#bdbdbd";
const COLOR_OPEN: &str = "#ef5350";

pub(super) fn span_color(k: SpanKind) -> &'static str {
    match k {
        SpanKind::Data => COLOR_DATA,
        SpanKind::Committed => COLOR_COMMITTED,
        SpanKind::Aborted => COLOR_ABORTED,
        SpanKind::Open => COLOR_OPEN,
    }
}

fn sev_color(s: Severity) -> &'static str {
    match s {
        Severity::Error => "#c62828",
        Severity::Warning => "#ef6c00",
        Severity::Info => "#1565c0",
    }
}

pub(super) const W: f64 = 1100.0;
const LEFT: f64 = 120.0;
pub(super) const RIGHT: f64 = 20.0;
const TOP: f64 = 28.0;
const LANE: f64 = 26.0;

/// The SVG timeline of one partition.
pub(super) fn svg(
    h: &mut String,
    p: &PartitionReport,
    fs: &[Finding],
    t: &Timeline,
    committed: &[(String, i64)],
) {
    let remote_first = p.tiered.as_ref().and_then(|r| {
        r.remote
            .first()
            .map(|s| s.0)
            .into_iter()
            .chain(r.log_start_offset)
            .min()
    });
    let first = t
        .first_offset
        .unwrap_or(0)
        .min(p.log_start_offset.unwrap_or(i64::MAX))
        .min(remote_first.unwrap_or(i64::MAX));
    let end = t
        .last_offset
        .map_or(first.saturating_add(1), |l| l.saturating_add(1))
        .max(p.log_end_offset.unwrap_or(0))
        .max(first.saturating_add(1));
    // Offsets from damaged bytes may span the whole i64 range: the scale is taken in
    // floating point and the ticks in 128 bits (no overflow, no panic).
    let span = (end as f64 - first as f64).max(1.0);
    let x = |o: i64| LEFT + ((o as f64 - first as f64) / span) * (W - LEFT - RIGHT);
    // The leader epochs lane sits below the producers' lanes.
    let epochs_row = usize::from(!p.carried.leader_epochs.is_empty());
    let lanes_bottom = TOP + LANE * (t.lanes.len().max(1) + epochs_row) as f64;
    let labelled: Vec<&Finding> = fs.iter().filter(|f| f.offset.is_some()).take(40).collect();
    let height = lanes_bottom + 34.0 + 15.0 * labelled.len() as f64;
    let _ = write!(
        h,
        "<svg class=\"timeline\" role=\"img\" aria-label=\"timeline of {}\" viewBox=\"0 0 {W} {height}\" width=\"{W}\" height=\"{height}\">",
        esc(&label(p))
    );
    // Offset axis.
    let _ = write!(
        h,
        "<g class=\"axis\"><line x1=\"{LEFT}\" y1=\"{lanes_bottom}\" x2=\"{}\" y2=\"{lanes_bottom}\" stroke=\"#999\"/>",
        W - RIGHT
    );
    for k in 0..=4 {
        let o = (i128::from(first) + (i128::from(end) - i128::from(first)) * k / 4) as i64;
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#666\">{o}</text>",
            x(o),
            lanes_bottom + 13.0
        );
    }
    h.push_str("</g>");
    svg_tiered(h, p, end, lanes_bottom, &x);
    // Lanes.
    let lane_y = |pid: Option<i64>| -> Option<f64> {
        let pid = pid?;
        t.lanes
            .iter()
            .position(|l| l.producer_id == pid)
            .map(|i| TOP + LANE * i as f64)
    };
    for (li, lane) in t.lanes.iter().enumerate() {
        svg_lane(h, lane, TOP + LANE * li as f64, &x);
    }
    if epochs_row == 1 {
        svg_epochs(h, p, TOP + LANE * t.lanes.len().max(1) as f64, end, &x);
    }
    svg_stable_and_end(h, p, lanes_bottom, &x);
    svg_committed(h, committed, lanes_bottom, &x);
    // Findings pinned where they happened, labelled below the axis.
    for (k, f) in labelled.iter().enumerate() {
        let Some(o) = f.offset else { continue };
        let fx = x(o) + 1.0;
        let fy = lane_y(f.producer_id).map_or(TOP - 4.0, |y| y + 12.0) + (k % 3) as f64 * 3.0;
        let ly = lanes_bottom + 30.0 + 15.0 * k as f64;
        let color = sev_color(f.severity);
        let text = format!(
            "{} @{o}{}",
            f.kind.id(),
            f.producer_id.map_or(String::new(), |p| format!(
                " (producer {p}@{})",
                f.producer_epoch.unwrap_or(-1)
            )),
        );
        // Right of the pin, or left of it when it would run past the right edge (a
        // finding at the log end).
        let (tx, anchor) = label_at(fx, text.chars().count(), Side::Right);
        let _ = write!(
            h,
            "<g class=\"finding {}\" data-kind=\"{}\" data-offset=\"{o}\" data-id=\"{}\"><title>{} {} at offset {o}: {}</title><line x1=\"{fx:.1}\" y1=\"{fy:.1}\" x2=\"{fx:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"0.6\" stroke-dasharray=\"2 2\"/><circle cx=\"{fx:.1}\" cy=\"{fy:.1}\" r=\"5\" fill=\"{color}\" stroke=\"#fff\" stroke-width=\"1\"/><text x=\"{tx:.1}\" y=\"{ly:.1}\" text-anchor=\"{anchor}\" fill=\"{color}\">{}</text></g>",
            f.severity,
            esc(f.kind.id()),
            esc(&f.id),
            f.severity,
            esc(f.kind.id()),
            esc(&f.message),
            ly - 10.0,
            esc(&text),
        );
    }
    h.push_str("</svg>");
    if t.reduced {
        h.push_str("<p class=\"meta\">Timeline reduced: some producers share the last lane, or neighbouring spans were merged (thick outline; hover for their counts) and markers sampled, to stay within its bounds.</p>");
    }
}

/// Tiered storage: the remote segments and the local log, as bands under the axis.
fn svg_tiered(
    h: &mut String,
    p: &PartitionReport,
    end: i64,
    lanes_bottom: f64,
    x: &dyn Fn(i64) -> f64,
) {
    if let Some(r) = &p.tiered {
        let local = r.local_log_start_offset.map(|a| (a, end.saturating_sub(1)));
        let bands = r
            .remote
            .iter()
            .map(|s| ("remote", *s, "#6a1b9a"))
            .chain(local.map(|l| ("local", l, "#2e7d32")));
        for (name, (a, b), color) in bands {
            let _ = write!(
                h,
                "<rect class=\"{name}\" data-first=\"{a}\" data-last=\"{b}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"3\" fill=\"{color}\"><title>{name} {a}..={b}</title></rect>",
                x(a),
                lanes_bottom + 16.0 + if name == "local" { 4.0 } else { 0.0 },
                (x(b.saturating_add(1)) - x(a)).max(1.0)
            );
        }
    }
}

/// LSO and LEO: one label when they are equal (every healthy partition), else each label on
/// its own side when their lines are close; never past the picture's edges.
fn svg_stable_and_end(
    h: &mut String,
    p: &PartitionReport,
    lanes_bottom: f64,
    x: &dyn Fn(i64) -> f64,
) {
    let (lso, leo) = (p.last_stable_offset, p.log_end_offset);
    let close = matches!((lso, leo), (Some(a), Some(b)) if (x(a) - x(b)).abs() < 70.0);
    for (name, v, color) in [("LSO", lso, "#c62828"), ("LEO", leo, "#555")] {
        if let Some(o) = v {
            let lx = x(o);
            let text = match (name, lso == leo) {
                ("LSO", true) => format!("LSO = LEO {o}"),
                ("LEO", true) => String::new(),
                _ => format!("{name} {o}"),
            };
            let side = match (close && lso != leo, name) {
                (true, "LSO") => Side::Left,
                (true, _) => Side::Right,
                _ => Side::Centre,
            };
            let (tx, anchor) = label_at(lx, text.chars().count(), side);
            let label = if text.is_empty() {
                String::new()
            } else {
                format!(
                    "<text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" fill=\"{color}\">{text}</text>",
                    TOP - 11.0
                )
            };
            let _ = write!(
                h,
                "<g class=\"{}\" data-offset=\"{o}\"><line x1=\"{lx:.1}\" y1=\"{:.1}\" x2=\"{lx:.1}\" y2=\"{lanes_bottom}\" stroke=\"{color}\" stroke-dasharray=\"4 3\"/>{label}<title>{name}: {o}</title></g>",
                name.to_lowercase(),
                TOP - 8.0,
            );
        }
    }
}

/// Width of one character of the timeline's labels, generously (system-ui at the SVG's
/// default 16 px is 7–9 px for these ASCII labels).
pub(super) const CHAR_W: f64 = 9.0;

/// Where a label goes relative to the point it names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Left,
    Centre,
    Right,
}

/// The `x` and `text-anchor` of a label of `chars` characters at `x` on `side`, moved to
/// the other side (or anchored at the edge) when it would run past the picture's edges.
pub(super) fn label_at(x: f64, chars: usize, side: Side) -> (f64, &'static str) {
    let w = chars as f64 * CHAR_W;
    let (lo, hi) = (2.0, W - 2.0);
    match side {
        Side::Right if x + 6.0 + w <= hi => (x + 6.0, "start"),
        Side::Left if x - 6.0 - w >= lo => (x - 6.0, "end"),
        Side::Centre if x - w / 2.0 >= lo && x + w / 2.0 <= hi => (x, "middle"),
        _ if x + w / 2.0 > hi || (side == Side::Right) => ((x - 6.0).max(lo + w), "end"),
        _ => ((x + 6.0).min(hi - w), "start"),
    }
}

/// The most groups' committed offsets marked on one timeline.
const MAX_COMMITTED_MARKS: usize = 50;

/// Each group's committed offset as a diamond on the offset axis (hover: the group).
fn svg_committed(h: &mut String, committed: &[(String, i64)], axis_y: f64, x: &dyn Fn(i64) -> f64) {
    for (group, o) in committed.iter().take(MAX_COMMITTED_MARKS) {
        let (cx, cy) = (x(*o), axis_y);
        let _ = write!(
            h,
            "<g class=\"committed\" data-group=\"{}\" data-offset=\"{o}\"><title>group {} committed offset {o}</title><path d=\"M{cx:.1} {:.1} L{:.1} {cy:.1} L{cx:.1} {:.1} L{:.1} {cy:.1} Z\" fill=\"#1565c0\" stroke=\"#fff\" stroke-width=\"0.8\"/></g>",
            esc(group),
            esc(group),
            cy - 5.0,
            cx + 4.0,
            cy + 5.0,
            cx - 4.0,
        );
    }
}

/// One producer's lane: its name, its transactions and batches as spans, its markers.
fn svg_lane(
    h: &mut String,
    lane: &crate::partition::timeline::Lane,
    y: f64,
    x: &dyn Fn(i64) -> f64,
) {
    let name = if lane.merged {
        "other producers".to_string()
    } else if lane.producer_id < 0 {
        "no producer id".to_string()
    } else {
        format!("producer {}", lane.producer_id)
    };
    let _ = write!(
        h,
        "<g class=\"lane\" data-producer=\"{}\"><text x=\"4\" y=\"{:.1}\" fill=\"#333\">{}</text>",
        lane.producer_id,
        y + 16.0,
        esc(&name)
    );
    for s in &lane.spans {
        let (x0, x1) = (x(s.first), x(s.last.saturating_add(1)));
        let wdt = (x1 - x0).max(2.0);
        let _ = write!(
            h,
            "<rect class=\"span {}{}\" data-first=\"{}\" data-last=\"{}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{wdt:.1}\" height=\"14\" fill=\"{}\" stroke=\"#555\" stroke-width=\"{}\"><title>{}</title></rect>",
            s.kind.as_str(),
            if s.runs > 1 { " merged" } else { "" },
            s.first,
            s.last,
            y + 5.0,
            span_color(s.kind),
            if s.runs > 1 { "1" } else { "0.3" },
            esc(&span_title(lane.producer_id, s)),
        );
        if wdt > 34.0 {
            let _ = write!(
                h,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#222\">{}</text>",
                x0 + 3.0,
                y + 16.0,
                epoch_label(s)
            );
        }
    }
    for m in &lane.markers {
        let cx = x(m.offset) + 1.0;
        let (shape, kind) = if m.commit {
            (
                format!(
                    "{cx:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                    y + 1.0,
                    cx - 4.0,
                    y + 9.0,
                    cx + 4.0,
                    y + 9.0
                ),
                "COMMIT",
            )
        } else {
            (
                format!(
                    "{cx:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                    y + 9.0,
                    cx - 4.0,
                    y + 1.0,
                    cx + 4.0,
                    y + 1.0
                ),
                "ABORT",
            )
        };
        let _ = write!(
            h,
            "<polygon class=\"marker {}\" data-offset=\"{}\" points=\"{shape}\" fill=\"{}\"><title>{kind} marker at offset {} — producer {} epoch {}, coordinator epoch {}, {}</title></polygon>",
            kind.to_lowercase(),
            m.offset,
            if m.commit { "#1b5e20" } else { "#424242" },
            m.offset,
            lane.producer_id,
            m.epoch,
            m.coordinator_epoch,
            esc(&format_ms(m.timestamp))
        );
    }
    h.push_str("</g>");
}

/// A span's hover text: its kind, producer, epoch, offsets, batches and times; for a span
/// standing for several runs, how many and of which kinds.
pub(super) fn span_title(pid: i64, s: &crate::partition::timeline::Span) -> String {
    let times = format!(
        "{} → {}",
        format_ms(s.first_timestamp),
        format_ms(s.last_timestamp)
    );
    if s.runs <= 1 {
        return format!(
            "{} producer {pid} epoch {}: offsets {}..{} ({} batches), {times}",
            s.kind.as_str(),
            s.epoch,
            s.first,
            s.last,
            s.batches,
        );
    }
    let data = s.runs.saturating_sub(s.committed).saturating_sub(s.aborted);
    format!(
        "{} runs merged (mostly {}: {} committed, {} aborted transactions, {} data runs) producer {pid} epochs {}: offsets {}..{} ({} batches), {times}",
        s.runs,
        s.kind.as_str(),
        s.committed,
        s.aborted,
        data,
        epoch_range(s),
        s.first,
        s.last,
        s.batches,
    )
}

fn epoch_range(s: &crate::partition::timeline::Span) -> String {
    epochs(s.min_epoch, s.epoch)
}

/// `lo–hi`, or one epoch.
pub(super) fn epochs(lo: i16, hi: i16) -> String {
    if lo == hi {
        hi.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

/// The label inside a wide span: its producer epoch (or their range).
fn epoch_label(s: &crate::partition::timeline::Span) -> String {
    format!("e{}", epoch_range(s))
}

/// The leader epochs lane: each epoch the batches were written at, from its first offset to
/// the next epoch's (the leader changes and elections of the partition, as its replica saw
/// them; an `unclean_leader_election` finding is pinned where its epoch starts).
fn svg_epochs(h: &mut String, p: &PartitionReport, y: f64, end: i64, x: &dyn Fn(i64) -> f64) {
    let _ = write!(
        h,
        "<g class=\"lane epochs\"><text x=\"4\" y=\"{:.1}\" fill=\"#333\">leader epochs</text>",
        y + 16.0
    );
    for (k, (epoch, start)) in p.carried.leader_epochs.iter().enumerate() {
        let next = p.carried.leader_epochs.get(k + 1).map_or(end, |e| e.1);
        let (x0, x1) = (x(*start), x(next.max(start.saturating_add(1))));
        let wdt = (x1 - x0).max(2.0);
        let fill = if k % 2 == 0 { "#ffe0b2" } else { "#ffcc80" };
        let _ = write!(
            h,
            "<rect class=\"epoch\" data-epoch=\"{epoch}\" data-first=\"{start}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{wdt:.1}\" height=\"14\" fill=\"{fill}\" stroke=\"#8d6e63\" stroke-width=\"0.3\"><title>leader epoch {epoch} from offset {start}</title></rect>",
            y + 5.0
        );
        if wdt > 34.0 {
            let _ = write!(
                h,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#222\">epoch {epoch}</text>",
                x0 + 3.0,
                y + 16.0
            );
        }
    }
    h.push_str("</g>");
}
