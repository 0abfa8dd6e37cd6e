//! The per-producer view (`--producer-id` in the HTML report): what one producer did in
//! every partition it wrote to. One row per partition on one time axis — the batches'
//! timestamps, which with `CreateTime` come from the producer's own clock, so what it did
//! in several partitions at once lines up — with its data and transactions as spans and
//! its COMMIT/ABORT markers; then a table of each row's offsets, batches, epochs and
//! transactions. Drawn from the partitions' timelines (no file is read here).

use super::timeline_svg::{CHAR_W, RIGHT, Side, W, epochs, label_at, span_color, span_title};
use super::{anchor, esc, label};
use crate::partition::timeline::{Lane, ProducerRow, ProducerTimeline, SpanKind, Timeline};
use crate::report::format_ms;
use crate::results::ScanReport;
use std::fmt::Write as _;

/// Left margin: the partitions' names.
const LEFT: f64 = 230.0;
const TOP: f64 = 12.0;
const ROW: f64 = 24.0;

/// A timestamp the time axis can place (`-1`: none; beyond year 9999: not a time).
fn valid(t: i64) -> bool {
    (0..=253_402_300_799_999).contains(&t)
}

/// The section of one producer.
pub(super) fn write(
    h: &mut String,
    report: &ScanReport,
    timelines: &[Option<Timeline>],
    v: &ProducerTimeline,
) {
    let pid = v.producer_id;
    let n = v.rows.len() + v.more;
    let _ = write!(
        h,
        "<section class=\"producer\" id=\"producer-{pid}\" data-producer=\"{pid}\"><h2>Producer {pid}: {n} partition{} written to</h2>",
        if n == 1 { "" } else { "s" }
    );
    if v.rows.is_empty() {
        let _ = writeln!(
            h,
            "<p>Producer {pid} wrote no batch in the partitions shown.</p></section>"
        );
        return;
    }
    svg(h, report, v);
    table(h, report, timelines, v);
    if v.more > 0 {
        let _ = write!(
            h,
            "<p class=\"meta\">… and {} more partitions (the JSON report lists them: <code>--producer-id {pid} --format json</code>).</p>",
            v.more
        );
    }
    h.push_str("</section>\n");
}

/// A row's name, cut to fit the left margin (the whole name is its hover text).
fn row_name(report: &ScanReport, row: &ProducerRow) -> (String, String) {
    let p = &report.partitions[row.partition];
    let mut full = label(p);
    if let Some(b) = p.source.broker_id {
        let _ = write!(full, " (broker {b})");
    }
    if row.shared {
        full.push_str(" shared lane");
    }
    let max = ((LEFT - 10.0) / CHAR_W) as usize;
    let chars: Vec<char> = full.chars().collect();
    let shown = if chars.len() > max {
        let tail: String = chars[chars.len() - (max - 1)..].iter().collect();
        format!("…{tail}")
    } else {
        full.clone()
    };
    (shown, full)
}

/// The rows on one time axis.
fn svg(h: &mut String, report: &ScanReport, v: &ProducerTimeline) {
    let times = v.rows.iter().flat_map(|r| {
        let spans = r
            .lane
            .spans
            .iter()
            .flat_map(|s| [s.first_timestamp, s.last_timestamp]);
        spans.chain(r.lane.markers.iter().map(|m| m.timestamp))
    });
    let (t0, t1) = times
        .filter(|&t| valid(t))
        .fold((i64::MAX, i64::MIN), |(a, b), t| (a.min(t), b.max(t)));
    if t0 > t1 {
        h.push_str("<p class=\"meta\">(no batch timestamps: no time axis; the table says what it wrote)</p>");
        return;
    }
    let t1 = t1.max(t0 + 1);
    let x = |t: i64| LEFT + ((t - t0) as f64 / (t1 - t0) as f64) * (W - LEFT - RIGHT);
    let bottom = TOP + ROW * v.rows.len() as f64;
    let height = bottom + 24.0;
    let _ = write!(
        h,
        "<svg class=\"timeline producer-view\" role=\"img\" aria-label=\"producer {} over time\" viewBox=\"0 0 {W} {height}\" width=\"{W}\" height=\"{height}\">",
        v.producer_id
    );
    let _ = write!(
        h,
        "<g class=\"axis\"><line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"#999\"/>",
        W - RIGHT
    );
    for (t, side) in [
        (t0, Side::Right),
        (t0 + (t1 - t0) / 2, Side::Centre),
        (t1, Side::Left),
    ] {
        let text = format_ms(t);
        let (tx, anchor) = label_at(x(t), text.chars().count(), side);
        let _ = write!(
            h,
            "<text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" fill=\"#666\">{}</text>",
            bottom + 14.0,
            esc(&text)
        );
    }
    h.push_str("</g>");
    for (k, row) in v.rows.iter().enumerate() {
        let y = TOP + ROW * k as f64;
        let (shown, full) = row_name(report, row);
        let _ = write!(
            h,
            "<g class=\"row\" data-partition=\"{}\"><text x=\"4\" y=\"{:.1}\" fill=\"#333\"><title>{}</title>{}</text>",
            esc(&label(&report.partitions[row.partition])),
            y + 15.0,
            esc(&format!(
                "{full}: {}",
                report.partitions[row.partition].path
            )),
            esc(&shown)
        );
        lane(h, &row.lane, v.producer_id, &full, y, &x);
        h.push_str("</g>");
    }
    h.push_str("</svg>");
}

/// One row's spans (from their first to their last batch's time) and markers.
fn lane(h: &mut String, l: &Lane, pid: i64, name: &str, y: f64, x: &dyn Fn(i64) -> f64) {
    for s in l
        .spans
        .iter()
        .filter(|s| valid(s.first_timestamp) && valid(s.last_timestamp))
    {
        let (x0, x1) = (x(s.first_timestamp), x(s.last_timestamp));
        let _ = write!(
            h,
            "<rect class=\"span {}\" data-first=\"{}\" data-last=\"{}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"12\" fill=\"{}\" stroke=\"#555\" stroke-width=\"{}\"><title>{}</title></rect>",
            s.kind.as_str(),
            s.first,
            s.last,
            y + 4.0,
            (x1 - x0).max(3.0),
            span_color(s.kind),
            if s.runs > 1 { "1" } else { "0.3" },
            esc(&format!("{name}: {}", span_title(pid, s)))
        );
    }
    for m in l.markers.iter().filter(|m| valid(m.timestamp)) {
        let cx = x(m.timestamp);
        let (tip, base, kind) = if m.commit {
            (y + 1.0, y + 9.0, "COMMIT")
        } else {
            (y + 9.0, y + 1.0, "ABORT")
        };
        let _ = write!(
            h,
            "<polygon class=\"marker {}\" data-offset=\"{}\" points=\"{cx:.1},{tip:.1} {:.1},{base:.1} {:.1},{base:.1}\" fill=\"{}\"><title>{name}: {kind} marker at offset {} — epoch {}, coordinator epoch {}, {}</title></polygon>",
            kind.to_lowercase(),
            m.offset,
            cx - 4.0,
            cx + 4.0,
            if m.commit { "#1b5e20" } else { "#424242" },
            m.offset,
            m.epoch,
            m.coordinator_epoch,
            esc(&format_ms(m.timestamp))
        );
    }
}

/// The lowest low and the highest high of `(low, high)` pairs.
fn bounds<T: Ord + Copy>(pairs: impl Iterator<Item = (T, T)>) -> Option<(T, T)> {
    pairs.reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

/// Per row: offsets, batches, epochs, transactions, markers, times.
fn table(
    h: &mut String,
    report: &ScanReport,
    timelines: &[Option<Timeline>],
    v: &ProducerTimeline,
) {
    h.push_str("<table class=\"producer-rows\"><tr><th>partition</th><th>directory</th><th>offsets</th><th>batches</th><th>epochs</th><th>txns c/a/o</th><th>markers</th><th>first</th><th>last</th></tr>\n");
    for row in &v.rows {
        let p = &report.partitions[row.partition];
        let (_, full) = row_name(report, row);
        let name = if timelines.get(row.partition).is_some_and(Option::is_some) {
            format!(
                "<a href=\"#{}\">{}</a>",
                anchor(row.partition, p),
                esc(&full)
            )
        } else {
            esc(&full)
        };
        let l = &row.lane;
        let offsets = bounds(
            (l.spans.iter().map(|s| (s.first, s.last)))
                .chain(l.markers.iter().map(|m| (m.offset, m.offset))),
        )
        .map_or("-".into(), |(a, b)| format!("{a}..={b}"));
        let batches: u64 = l.spans.iter().map(|s| s.batches).sum();
        let epochs = bounds(
            (l.spans.iter().map(|s| (s.min_epoch, s.epoch)))
                .chain(l.markers.iter().map(|m| (m.epoch, m.epoch))),
        )
        .map_or("-".into(), |(lo, hi)| epochs(lo, hi));
        let committed: u32 = l.spans.iter().map(|s| s.committed).sum();
        let aborted: u32 = l.spans.iter().map(|s| s.aborted).sum();
        let open = l.spans.iter().filter(|s| s.kind == SpanKind::Open).count();
        let times = bounds(
            (l.spans
                .iter()
                .map(|s| (s.first_timestamp, s.last_timestamp)))
            .chain(l.markers.iter().map(|m| (m.timestamp, m.timestamp)))
            .filter(|&(a, b)| valid(a) && valid(b)),
        );
        let (t0, t1) = times.map_or(("-".into(), "-".into()), |(a, b)| {
            (format_ms(a), format_ms(b))
        });
        let _ = writeln!(
            h,
            "<tr><td>{name}</td><td class=\"mono\">{}</td><td>{offsets}</td><td>{batches}</td><td>{}</td><td>{committed}/{aborted}/{open}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.path),
            esc(&epochs),
            l.marker_count,
            esc(&t0),
            esc(&t1),
        );
    }
    h.push_str("</table>\n");
    if v.rows.iter().any(|r| r.shared) {
        h.push_str("<p class=\"meta\">A shared lane: the timeline was collected without asking for this producer (in a bundle), and the producer is among those beyond the lane limit; the row shows every producer of that lane.</p>");
    }
}
