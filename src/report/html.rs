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
use crate::finding::Finding;
use crate::partition::scan::PartitionReport;
use crate::partition::timeline::{ProducerTimeline, Timeline};
use crate::results::ScanReport;
use std::fmt::Write as _;
use std::io::{self, Write};
use timeline_svg::svg;

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
    let incidents = triage::incidents_in(report);
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
        "<h1>klogscan report</h1><p class=\"meta\">inputs: <span class=\"mono\">{}</span><br>{}, {}, {}, {}, {}; findings: <span class=\"sev-error\">{} error</span>, <span class=\"sev-warning\">{} warning</span>, <span class=\"sev-info\">{} info</span></p>",
        esc(&report.inputs.join(", ")),
        super::count(s.partitions as u64, "partition"),
        super::count(s.segments as u64, "segment"),
        super::count(s.batches, "batch"),
        super::count(s.records, "record"),
        super::count(s.bytes, "byte"),
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
                        "<code>{}</code> @{}{}",
                        esc(f.kind.id()),
                        f.offset.map_or("-".into(), |o| o.to_string()),
                        triage::elsewhere(f, root)
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

mod producer;
mod timeline_svg;

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
