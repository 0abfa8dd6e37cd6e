//! `scan --format html`: one self-contained HTML file (no network, no scripts, no external
//! fonts or styles): the triage summary, a table of every partition, then — for each
//! partition with findings — an SVG timeline of its producers over offsets (transactions
//! as spans coloured by outcome, markers, the findings pinned where they happened, the
//! last stable offset) with hover details (`<title>`), and its findings table.
//!
//! Partitions without findings are listed in a collapsed table only, so a report over
//! 10 000 partitions stays small; timelines are drawn for at most [`MAX_TIMELINES`]
//! partitions (the most severe first), the others keep their findings tables. The
//! timelines are what the scan's walk collected (`partition::timeline`): no file is read
//! here.

use super::format_ms;
use super::triage::{self, Incident};
use crate::finding::{Finding, Severity};
use crate::partition::scan::PartitionReport;
use crate::partition::timeline::{ProducerTimeline, SpanKind, Timeline};
use crate::results::ScanReport;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Incidents told in the triage section (the most severe first).
pub(crate) const MAX_INCIDENTS: usize = 200;
/// Timelines of partitions with findings drawn at most (each is up to ≈ 100 KiB of SVG).
pub const MAX_TIMELINES: usize = 200;
/// Rows of one producer's view across partitions drawn at most.
pub const MAX_PRODUCER_ROWS: usize = 500;

/// Escape text for HTML and SVG (content and attribute values).
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // The text outputs' one rule ([`crate::escape`]): a report saved and later
            // printed with `cat` carries no terminal command and no forged line.
            c if crate::escape::is_control(c) => {
                crate::escape::push(&mut o, c.encode_utf8(&mut [0; 4]))
            }
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em;color:#1d1d1f;background:#fff}
h1{font-size:1.5em;margin:0 0 .2em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:1.2em 0 .3em} code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
.meta{color:#555} table{border-collapse:collapse;margin:.4em 0;font-size:.9em} th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f6} .incident{border-left:6px solid #999;padding:.3em .8em;margin:.8em 0;background:#fafafa}
.incident.error{border-color:#c62828} .incident.warning{border-color:#ef6c00} .incident.info{border-color:#1565c0}
.sev-error{color:#c62828;font-weight:600} .sev-warning{color:#ef6c00;font-weight:600} .sev-info{color:#1565c0}
pre{background:#f4f4f6;padding:.4em .6em;overflow-x:auto;margin:.3em 0} .legend span{display:inline-block;margin-right:1em}
.sw{display:inline-block;width:1em;height:.8em;vertical-align:middle;margin-right:.3em}
svg.timeline{display:block;max-width:100%;height:auto;border:1px solid #e3e3e3;background:#fff}
svg text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px}
details>summary{cursor:pointer}
";

const COLOR_DATA: &str = "#90caf9";
const COLOR_COMMITTED: &str = "#66bb6a";
const COLOR_ABORTED: &str = "#bdbdbd";
const COLOR_OPEN: &str = "#ef5350";

fn span_color(k: SpanKind) -> &'static str {
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

fn label(p: &PartitionReport) -> String {
    super::partition_name(&p.topic, p.partition, Some(&p.path))
}

fn anchor(i: usize, p: &PartitionReport) -> String {
    let mut a = String::from("p-");
    for c in label(p).chars() {
        a.push(
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            },
        );
    }
    let _ = write!(a, "-{i}");
    a
}

/// Write the HTML report. `timelines` is aligned with `report.partitions` (see
/// `request::timelines`); a partition without one gets no SVG.
pub fn write_scan(
    report: &ScanReport,
    timelines: &[Option<Timeline>],
    w: &mut dyn Write,
) -> io::Result<()> {
    write_scan_with(report, timelines, &[], w)
}

/// [`write_scan`], with a section per producer of `producers` (what it did in every
/// partition it wrote to). A clean partition with a timeline in `timelines` (asked for by
/// `--timeline`) gets its section too.
pub fn write_scan_with(
    report: &ScanReport,
    timelines: &[Option<Timeline>],
    producers: &[ProducerTimeline],
    w: &mut dyn Write,
) -> io::Result<()> {
    let incidents = triage::incidents(&report.findings);
    let s = &report.summary;
    let mut h = String::with_capacity(64 << 10);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">");
    let _ = writeln!(
        h,
        "<title>klogscan report: {}</title><style>{STYLE}</style></head><body>",
        esc(&report.inputs.join(", "))
    );
    let _ = writeln!(
        h,
        "<h1>klogscan report</h1><p class=\"meta\">inputs: <span class=\"mono\">{}</span><br>{} partitions, {} segments, {} batches, {} records, {} bytes; findings: <span class=\"sev-error\">{} error</span>, <span class=\"sev-warning\">{} warning</span>, <span class=\"sev-info\">{} info</span></p>",
        esc(&report.inputs.join(", ")),
        s.partitions,
        s.segments,
        s.batches,
        s.records,
        s.bytes,
        s.findings.error,
        s.findings.warning,
        s.findings.info
    );
    write_triage(&mut h, report, &incidents);
    write_partition_table(&mut h, report, timelines);
    h.push_str("<h2 id=\"details\">Partitions with findings</h2>\n");
    h.push_str(LEGEND);
    w.write_all(h.as_bytes())?;
    // Each group's committed offset, marked on its partition's timeline.
    let committed = crate::cluster::consumers::committed_positions(report);
    for (i, p) in report.partitions.iter().enumerate() {
        let fs = report.partition_findings(i);
        if fs.is_empty() {
            continue;
        }
        let mut h = String::with_capacity(16 << 10);
        let tl = timelines.get(i).and_then(Option::as_ref);
        let groups = committed.get(i).map_or(&[][..], Vec::as_slice);
        write_partition(&mut h, i, p, fs, tl, groups);
        w.write_all(h.as_bytes())?;
    }
    // The clean partitions asked for by `--timeline`.
    let mut asked = (0..report.partitions.len())
        .filter(|&i| report.partition_findings(i).is_empty())
        .filter_map(|i| Some((i, timelines.get(i)?.as_ref()?)))
        .peekable();
    if asked.peek().is_some() {
        w.write_all(b"<h2 id=\"timelines\">Timelines asked for</h2>\n")?;
    }
    for (i, tl) in asked {
        let mut h = String::with_capacity(16 << 10);
        let groups = committed.get(i).map_or(&[][..], Vec::as_slice);
        write_partition(&mut h, i, &report.partitions[i], &[], Some(tl), groups);
        w.write_all(h.as_bytes())?;
    }
    for v in producers {
        let mut h = String::with_capacity(16 << 10);
        producer::write(&mut h, report, timelines, v);
        w.write_all(h.as_bytes())?;
    }
    let mut h = String::new();
    let orphan: Vec<&Finding> = {
        let mut covered = vec![false; report.findings.len()];
        for p in &report.partitions {
            for c in covered
                .get_mut(p.carried.finding_range.clone())
                .into_iter()
                .flatten()
            {
                *c = true;
            }
        }
        report
            .findings
            .iter()
            .zip(covered)
            .filter(|(_, c)| !c)
            .map(|(f, _)| f)
            .collect()
    };
    if !orphan.is_empty() {
        h.push_str("<h2>Findings of no partition</h2>");
        findings_table(&mut h, &orphan);
    }
    if !report.errors.is_empty() {
        h.push_str("<h2>Unreadable paths</h2><ul>");
        for (p, e) in &report.errors {
            let _ = write!(
                h,
                "<li><span class=\"mono\">{}</span>: {}</li>",
                esc(&p.display().to_string()),
                esc(e)
            );
        }
        h.push_str("</ul>");
    }
    h.push_str("<p class=\"meta\">Generated by klogscan; this file loads nothing from the network.</p></body></html>\n");
    w.write_all(h.as_bytes())
}

const LEGEND: &str = "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#90caf9\"></i>data</span><span><i class=\"sw\" style=\"background:#66bb6a\"></i>committed transaction</span><span><i class=\"sw\" style=\"background:#bdbdbd\"></i>aborted transaction</span><span><i class=\"sw\" style=\"background:#ef5350\"></i>open transaction</span><span>▲ COMMIT / ▼ ABORT marker</span><span>● finding (hover for details)</span><span>┆ LSO / LEO</span><span style=\"color:#1565c0\">◆ a group's committed offset</span></p>\n";

fn write_triage(h: &mut String, report: &ScanReport, incidents: &[Incident]) {
    let _ = writeln!(
        h,
        "<h2 id=\"triage\">Triage: {} incident{}</h2>",
        incidents.len(),
        if incidents.len() == 1 { "" } else { "s" }
    );
    if incidents.is_empty() {
        h.push_str("<p>No incident: no finding of warning or error severity.</p>\n");
    }
    for (n, inc) in incidents.iter().enumerate().take(MAX_INCIDENTS) {
        let root = &report.findings[inc.members[0]];
        let _ = write!(
            h,
            "<div class=\"incident {}\" data-root=\"{}\"><p><b class=\"sev-{}\">[{}] {}</b> {}</p><ul>",
            inc.severity,
            esc(&inc.root),
            inc.severity,
            n + 1,
            inc.severity.as_str().to_uppercase(),
            esc(&inc.summary)
        );
        let _ = write!(
            h,
            "<li>partitions: {}</li>",
            esc(&inc.partitions.join(", "))
        );
        if let Some(t) = inc.since {
            let _ = write!(h, "<li>since: {}</li>", esc(&format_ms(t)));
        }
        let _ = write!(
            h,
            "<li>root cause: <code>{}</code> @{}: {}</li>",
            esc(root.kind.id()),
            root.offset.map_or("-".into(), |o| o.to_string()),
            esc(&root.message)
        );
        if inc.members.len() > 1 {
            let chain: Vec<String> = inc.members[1..]
                .iter()
                .map(|&i| {
                    let f = &report.findings[i];
                    format!(
                        "<code>{}</code> @{}",
                        esc(f.kind.id()),
                        f.offset.map_or("-".into(), |o| o.to_string())
                    )
                })
                .collect();
            let _ = write!(h, "<li>then: → {}</li>", chain.join(" → "));
        }
        if !inc.clients.is_empty() {
            let _ = write!(h, "<li>clients: {}</li>", esc(&inc.clients.join("; ")));
        }
        h.push_str("</ul>");
        if let Some(d) = &inc.decision {
            let _ = write!(h, "<p>decision: {}</p>", esc(d));
        }
        if !inc.commands.is_empty() {
            let _ = write!(
                h,
                "<pre>{}</pre>",
                inc.commands
                    .iter()
                    .map(|c| esc(c))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        } else if !inc.advice.is_empty() {
            let _ = write!(h, "<p>fix: {}</p>", esc(&inc.advice.join(" ")));
        }
        for n in &inc.notes {
            let _ = write!(h, "<p>note: {}</p>", esc(n));
        }
        h.push_str("</div>\n");
    }
    if incidents.len() > MAX_INCIDENTS {
        let _ = writeln!(
            h,
            "<p>… and {} more incidents (the JSON report's <code>incidents</code> lists them all).</p>",
            incidents.len() - MAX_INCIDENTS
        );
    }
}

fn write_partition_table(h: &mut String, report: &ScanReport, timelines: &[Option<Timeline>]) {
    let row = |h: &mut String, i: usize, p: &PartitionReport| {
        let fs = report.partition_findings(i);
        let c = super::filter::counts(fs);
        let drawn = timelines.get(i).is_some_and(Option::is_some);
        let name = if fs.is_empty() && !drawn {
            esc(&label(p))
        } else {
            format!("<a href=\"#{}\">{}</a>", anchor(i, p), esc(&label(p)))
        };
        let opt = |v: Option<i64>| v.map_or("-".into(), |v| v.to_string());
        let _ = writeln!(
            h,
            "<tr><td>{name}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}/{}</td><td>{}</td><td>{}/{}/{}</td></tr>",
            p.segments,
            p.batches,
            p.records,
            opt(p.log_start_offset),
            opt(p.log_end_offset),
            opt(p.last_stable_offset),
            p.transactions.committed,
            p.transactions.aborted,
            p.transactions.open,
            p.producers,
            c.error,
            c.warning,
            c.info
        );
    };
    const HEAD: &str = "<table><tr><th>partition</th><th>segments</th><th>batches</th><th>records</th><th>log start</th><th>LEO</th><th>LSO</th><th>txns c/a/o</th><th>producers</th><th>findings E/W/I</th></tr>\n";
    let (with, clean): (Vec<usize>, Vec<usize>) =
        (0..report.partitions.len()).partition(|&i| !report.partition_findings(i).is_empty());
    let _ = write!(
        h,
        "<h2 id=\"partitions\">Partitions</h2><p>{} with findings, {} clean.</p>",
        with.len(),
        clean.len()
    );
    if !with.is_empty() {
        h.push_str(HEAD);
        for &i in &with {
            row(h, i, &report.partitions[i]);
        }
        h.push_str("</table>\n");
    }
    if !clean.is_empty() {
        let _ = write!(
            h,
            "<details><summary>{} partitions without findings</summary>{HEAD}",
            clean.len()
        );
        for &i in &clean {
            row(h, i, &report.partitions[i]);
        }
        h.push_str("</table></details>\n");
    }
}

fn findings_table(h: &mut String, fs: &[&Finding]) {
    h.push_str("<table class=\"findings\"><tr><th>severity</th><th>kind</th><th>offset</th><th>producer</th><th>message</th><th>client saw</th><th>remediation</th></tr>\n");
    for f in fs {
        let producer = match (f.producer_id, f.producer_epoch) {
            (Some(p), Some(e)) => format!("{p}@{e}"),
            (Some(p), None) => p.to_string(),
            _ => "-".into(),
        };
        let _ = writeln!(
            h,
            "<tr id=\"f-{}\"><td class=\"sev-{}\">{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&f.id),
            f.severity,
            f.severity,
            esc(f.kind.id()),
            f.offset.map_or("-".into(), |o| o.to_string()),
            esc(&producer),
            esc(&f.message),
            esc(f.client_error.as_deref().unwrap_or("")),
            esc(f.remediation.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table>\n");
}

fn write_partition(
    h: &mut String,
    i: usize,
    p: &PartitionReport,
    fs: &[Finding],
    tl: Option<&Timeline>,
    committed: &[(String, i64)],
) {
    let _ = writeln!(
        h,
        "<section class=\"partition\" id=\"{}\" data-partition=\"{}\"><h3>{}</h3><p class=\"meta mono\">{} — log start {}, LEO {}, LSO {}</p>",
        anchor(i, p),
        esc(&label(p)),
        esc(&label(p)),
        esc(&p.path),
        p.log_start_offset.map_or("-".into(), |o| o.to_string()),
        p.log_end_offset.map_or("-".into(), |o| o.to_string()),
        p.last_stable_offset.map_or("-".into(), |o| o.to_string()),
    );
    if let Some(t) = &p.tiered {
        let _ = writeln!(
            h,
            "<p class=\"meta mono tiered\">tiered: {}</p>",
            esc(&crate::report::table::tiered_line(t))
        );
    }
    match tl {
        Some(t) if t.first_offset.is_some() => svg(h, p, fs, t, committed),
        _ => h.push_str("<p class=\"meta\">(no timeline drawn for this partition)</p>"),
    }
    if fs.is_empty() {
        h.push_str("<p class=\"meta\">No finding.</p>");
    } else {
        let refs: Vec<&Finding> = fs.iter().collect();
        findings_table(h, &refs);
    }
    h.push_str("</section>\n");
}

const W: f64 = 1100.0;
const LEFT: f64 = 120.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 28.0;
const LANE: f64 = 26.0;

/// The SVG timeline of one partition.
fn svg(
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
        .map_or(first + 1, |l| l + 1)
        .max(p.log_end_offset.unwrap_or(0))
        .max(first + 1);
    let span = (end - first) as f64;
    let x = |o: i64| LEFT + ((o - first) as f64 / span) * (W - LEFT - RIGHT);
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
        let o = first + (end - first) * k / 4;
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
        let local = r.local_log_start_offset.map(|a| (a, end - 1));
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
const CHAR_W: f64 = 9.0;

/// Where a label goes relative to the point it names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Centre,
    Right,
}

/// The `x` and `text-anchor` of a label of `chars` characters at `x` on `side`, moved to
/// the other side (or anchored at the edge) when it would run past the picture's edges.
fn label_at(x: f64, chars: usize, side: Side) -> (f64, &'static str) {
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
        let (x0, x1) = (x(s.first), x(s.last + 1));
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
fn span_title(pid: i64, s: &crate::partition::timeline::Span) -> String {
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
fn epochs(lo: i16, hi: i16) -> String {
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
        let (x0, x1) = (x(*start), x(next.max(*start + 1)));
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

mod producer;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("a\u{1b}b\n\u{9b}\t"), "a\\x1bb\\n\\u{9b}\\t");
    }
}
