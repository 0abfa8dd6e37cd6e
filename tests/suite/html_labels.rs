//! The HTML timeline's labels stay inside the picture: a finding at the log end is
//! labelled whole (left of its pin), and LSO and LEO are one label when equal.

use assert_cmd::Command;
use klogscan::testkit::{Batch, FaultKind, PartitionBuilder, Producer, Target};

/// The picture's width and the labels' character width the renderer assumes.
const W: f64 = 1100.0;
const CHAR_W: f64 = 9.0;

fn html(dir: &std::path::Path) -> String {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["scan", "--format", "html"])
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// `(x, anchor, text)` of every `<text>` of the timelines.
fn labels(page: &str) -> Vec<(f64, String, String)> {
    let mut out = Vec::new();
    for svg in page.split("<svg class=\"timeline\"").skip(1) {
        let svg = &svg[..svg.find("</svg>").unwrap()];
        for t in svg.split("<text ").skip(1) {
            let attrs = &t[..t.find('>').unwrap()];
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            let attr = |name: &str| {
                attrs
                    .split(&format!("{name}=\""))
                    .nth(1)
                    .map(|r| r[..r.find('"').unwrap()].to_string())
            };
            let x: f64 = attr("x").unwrap().parse().unwrap();
            out.push((
                x,
                attr("text-anchor").unwrap_or("start".into()),
                body.to_string(),
            ));
        }
    }
    out
}

fn extent(x: f64, anchor: &str, text: &str) -> (f64, f64) {
    let w = text.chars().count() as f64 * CHAR_W;
    match anchor {
        "end" => (x - w, x),
        "middle" => (x - w / 2.0, x + w / 2.0),
        _ => (x, x + w),
    }
}

#[test]
fn a_finding_at_the_log_end_is_labelled_inside_the_picture() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0);
    for _ in 0..18 {
        p.append(Batch::new(Producer::PLAIN).values(["v"]));
    }
    // The last batch cut short: truncated_batch at offset 17, the log's end.
    p.fault(Target::LastLog, FaultKind::Truncate { len: 18 * 70 - 20 });
    p.write(d.path()).unwrap();
    let page = html(d.path());
    let ls = labels(&page);
    let finding = ls
        .iter()
        .find(|(_, _, t)| t.starts_with("truncated_batch @17"))
        .expect(&page);
    assert_eq!(finding.1, "end", "left of its pin at the right edge");
    for (x, anchor, text) in &ls {
        let (a, b) = extent(*x, anchor, text);
        assert!(
            a >= 0.0 && b <= W,
            "{text:?} at {x} ({anchor}) runs past the edge"
        );
    }
}

#[test]
fn equal_lso_and_leo_are_one_label() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0);
    // A sequence gap: a timeline is drawn; nothing is open, so LSO = LEO = 4.
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    p.append(
        Batch::new(Producer::idempotent(7, 0))
            .sequence(10)
            .records(2),
    );
    p.write(d.path()).unwrap();
    let page = html(d.path());
    let ls = labels(&page);
    assert!(ls.iter().any(|(_, _, t)| t == "LSO = LEO 4"), "{ls:?}");
    assert!(!ls.iter().any(|(_, _, t)| t.starts_with("LEO ")), "{ls:?}");
}
