//! The HTML report's timelines on demand: `--timeline PARTITION…` draws clean partitions
//! too (none without it), the per-producer view (`--producer-id`) lists exactly the
//! partitions the producer wrote to, the timelines come from the scan's one walk and travel
//! in the partition results, and a partition of many batches keeps a bounded timeline.

use assert_cmd::Command;
use klogscan::partition::scan::ScanOptions;
use klogscan::partition::timeline::{Limits, SpanKind};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use std::path::{Path, PathBuf};

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

fn klogscan(args: &[&str], paths: &[&Path]) -> (i32, String, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(args)
        .args(paths)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The partitions whose section (with its SVG timeline) the page holds, in order.
fn sections(html: &str) -> Vec<String> {
    html.split("<section class=\"partition\"")
        .skip(1)
        .filter(|s| s[..s.find("</section>").unwrap()].contains("<svg class=\"timeline\""))
        .map(|s| {
            let r = s.split("data-partition=\"").nth(1).unwrap();
            r[..r.find('"').unwrap()].to_string()
        })
        .collect()
}

/// The rows of producer `pid`'s view: the partitions it lists.
fn producer_rows(html: &str, pid: i64) -> Vec<String> {
    let Some(start) = html.find(&format!(
        "<section class=\"producer\" id=\"producer-{pid}\""
    )) else {
        return Vec::new();
    };
    let sec = &html[start..start + html[start..].find("</section>").unwrap()];
    sec.split("<g class=\"row\" data-partition=\"")
        .skip(1)
        .map(|r| r[..r.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn clean_partitions_get_no_timeline_without_the_flag() {
    let (code, html, _) = klogscan(&["scan", "--format", "html"], &[&sample()]);
    assert_eq!(code, 1);
    assert_eq!(sections(&html), ["payments-3"]);
    assert!(!html.contains("Timelines asked for"));
    assert!(!html.contains("class=\"producer\""));
}

#[test]
fn the_timeline_flag_draws_clean_partitions_by_name_glob_and_path() {
    let legacy = sample().join("legacy-0");
    let legacy = legacy.to_str().unwrap();
    let (code, html, err) = klogscan(
        &[
            "scan",
            "--format",
            "html",
            "--timeline",
            "codec-none-0,codec-lz4-0",
            "--timeline",
            legacy,
        ],
        &[&sample()],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(
        sections(&html),
        ["payments-3", "codec-lz4-0", "codec-none-0", "legacy-0"]
    );
    assert!(html.contains("<h2 id=\"timelines\">Timelines asked for</h2>"));
    // A clean partition's section says so, and its table row links to it.
    let none = &html[html.find("data-partition=\"codec-none-0\"").unwrap()..];
    assert!(none[..none.find("</section>").unwrap()].contains("No finding."));
    assert!(html.contains(">codec-none-0</a></td>"));
    // A glob names every codec partition; a partition with findings is drawn once.
    let (_, html, _) = klogscan(
        &[
            "scan",
            "--format",
            "html",
            "--timeline",
            "codec-*",
            "--timeline",
            "payments-3",
        ],
        &[&sample()],
    );
    assert_eq!(sections(&html).len(), 1 + 5);
    assert_eq!(html.matches("data-partition=\"payments-3\"").count(), 1);
}

#[test]
fn the_timeline_flag_is_refused_where_no_html_is_drawn_and_says_what_matches_nothing() {
    for args in [
        &["scan", "--timeline", "payments-3"][..],
        &["scan", "--format", "json", "--timeline", "payments-3"],
        &["verify", "--timeline", "payments-3"],
    ] {
        let (code, out, err) = klogscan(args, &[&sample()]);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains("--timeline draws timelines in the HTML report"),
            "{err}"
        );
    }
    let (code, html, err) = klogscan(
        &["scan", "--format", "html", "--timeline", "nosuch-9"],
        &[&sample()],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("--timeline nosuch-9: no partition shown matches it"),
        "{err}"
    );
    assert_eq!(sections(&html), ["payments-3"]);
}

/// Producer 7 writes to t-0 and u-1 (transactions there), not to t-1.
fn three_partitions(dir: &Path) {
    let tx = Producer::transactional(7, 2);
    let mut t0 = PartitionBuilder::new("t", 0);
    t0.append(Batch::new(Producer::idempotent(8, 0)).records(2));
    t0.append(Batch::new(tx).records(3));
    t0.commit(tx, 1);
    t0.write(dir).unwrap();
    let mut t1 = PartitionBuilder::new("t", 1);
    t1.append(Batch::new(Producer::idempotent(8, 0)).records(2));
    t1.write(dir).unwrap();
    let mut u1 = PartitionBuilder::new("u", 1);
    u1.append(Batch::new(tx).records(1));
    u1.abort(tx, 1);
    u1.append(Batch::new(tx.bumped()).records(1));
    u1.commit(tx.bumped(), 1);
    u1.write(dir).unwrap();
}

#[test]
fn the_producer_view_lists_exactly_the_partitions_the_producer_wrote_to() {
    let d = tempfile::tempdir().unwrap();
    three_partitions(d.path());
    let (code, html, err) = klogscan(
        &["scan", "--format", "html", "--producer-id", "7,8"],
        &[d.path()],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(producer_rows(&html, 7), ["t-0", "u-1"]);
    assert_eq!(producer_rows(&html, 8), ["t-0", "t-1"]);
    // Its batches, markers and epochs: the COMMIT of t-0, the ABORT then the COMMIT at
    // the bumped epoch in u-1.
    let sec = &html[html.find("id=\"producer-7\"").unwrap()..];
    let sec = &sec[..sec.find("</section>").unwrap()];
    assert_eq!(sec.matches("class=\"marker commit\"").count(), 2);
    assert_eq!(sec.matches("class=\"marker abort\"").count(), 1);
    assert!(sec.contains("<td>2–3</td><td>1/1/0</td>"), "{sec}");
    assert!(sec.contains("<td>2</td><td>1/0/0</td>"), "{sec}");
    // Without --producer-id: no producer view.
    let (_, html, _) = klogscan(&["scan", "--format", "html"], &[d.path()]);
    assert!(producer_rows(&html, 7).is_empty() && !html.contains("class=\"producer\""));
    // A producer that wrote nothing shown: nothing matches, no row.
    let (code, html, _) = klogscan(
        &["scan", "--format", "html", "--producer-id", "9"],
        &[d.path()],
    );
    assert_eq!(code, 0);
    assert!(producer_rows(&html, 9).is_empty());
}

/// A partition of 30 producers: the lanes stop at the limit, but a producer asked for
/// keeps its own in the timeline and the view.
#[test]
fn a_producer_asked_for_keeps_its_own_lane_beyond_the_lane_limit() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0);
    for pid in 100..130 {
        p.append(Batch::new(Producer::idempotent(pid, 0)).records(1));
    }
    p.write(d.path()).unwrap();
    let max = Limits::default().max_lanes;
    let run = |ids: Vec<i64>, asked: Vec<String>| {
        let f = klogscan::report::filter::Filter {
            producer_ids: ids,
            ..Default::default()
        };
        let req = Request::new([d.path()])
            .with_filter(f)
            .with_timelines(true)
            .with_timeline_partitions(asked);
        request::run(&req).unwrap()
    };
    let a = run(Vec::new(), vec!["t-0".into()]);
    let t = a.timelines[0].as_ref().unwrap();
    assert_eq!(t.lanes.len(), max);
    assert!(t.reduced && t.lane_of(129).is_none());
    let a = run(vec![129], Vec::new());
    assert_eq!(a.producer_timelines.len(), 1);
    let v = &a.producer_timelines[0];
    assert_eq!(v.rows.len(), 1);
    assert!(!v.rows[0].shared);
    assert_eq!(v.rows[0].lane.producer_id, 129);
    assert_eq!(v.rows[0].lane.spans[0].first, 29);
}

/// 4 000 transactions of 4 producers in one partition: the timeline stays within its
/// bounds (spans and markers of the whole partition and of each lane), still covers the
/// whole log, and loses no batch.
#[test]
fn the_timeline_of_a_partition_of_many_batches_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("busy", 0);
    let txs: Vec<Producer> = (0..4)
        .map(|i| Producer::transactional(500 + i, 0))
        .collect();
    for n in 0..4000 {
        let tx = txs[n % 4];
        p.append(Batch::new(tx).records(1));
        if n % 10 == 0 {
            p.abort(tx, 0);
        } else {
            p.commit(tx, 0);
        }
    }
    p.write(d.path()).unwrap();
    let req = Request::new([d.path()])
        .with_timelines(true)
        .with_timeline_partitions(vec!["busy-0".into()]);
    let a = request::run(&req).unwrap();
    let t = a.timelines[0].as_ref().unwrap();
    let l = Limits::default();
    let spans: usize = t.lanes.iter().map(|l| l.spans.len()).sum();
    let markers: usize = t.lanes.iter().map(|l| l.markers.len()).sum();
    assert!(t.reduced);
    assert!(
        spans <= l.max_spans && markers <= l.max_markers,
        "{spans} {markers}"
    );
    assert!(
        spans >= l.max_spans / 4,
        "an even summary, not a collapse: {spans}"
    );
    for lane in &t.lanes {
        assert!(lane.spans.len() <= l.max_lane_spans);
        assert_eq!(lane.spans.iter().map(|s| s.batches).sum::<u64>(), 1000);
        assert_eq!(lane.marker_count, 1000);
        assert!(lane.spans.iter().all(|s| s.kind != SpanKind::Open));
        assert!(lane.spans.last().unwrap().last >= t.last_offset.unwrap() - 8);
    }
    let aborted: u32 = t
        .lanes
        .iter()
        .flat_map(|l| &l.spans)
        .map(|s| s.aborted)
        .sum();
    assert_eq!(aborted, 400);
    // The HTML draws no more than the timeline holds.
    let mut out = Vec::new();
    klogscan::report::html::write_scan(&a.report, &a.timelines, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert_eq!(html.matches("<rect class=\"span").count(), spans);
    assert!(html.contains("Timeline reduced"));
}

/// The timeline is collected by the scan's walk, is absent unless asked for, and travels
/// with the partition's results (what a bundle carries).
#[test]
fn the_timeline_travels_in_the_partition_results() {
    let d = tempfile::tempdir().unwrap();
    three_partitions(d.path());
    let root = vec![d.path().to_path_buf()];
    let r = klogscan::pipeline::scan(&root, &ScanOptions::default());
    assert!(r.partitions.iter().all(|p| p.timeline().is_none()));
    let o = ScanOptions::default().with_collect_timelines(true);
    let r = klogscan::pipeline::scan(&root, &o);
    assert!(r.partitions.iter().all(|p| p.timeline().is_some()));
    let results = r.partition_results();
    let json = serde_json::to_string(&results).unwrap();
    let back: Vec<klogscan::results::PartitionResult> = serde_json::from_str(&json).unwrap();
    let again = ScanReport::from_partition_results(back).unwrap();
    for (a, b) in r.partitions.iter().zip(&again.partitions) {
        assert_eq!(a.timeline(), b.timeline());
    }
    // A result written without one reads back without one.
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for x in v.as_array_mut().unwrap() {
        x.as_object_mut().unwrap().remove("timeline");
    }
    let back: Vec<klogscan::results::PartitionResult> = serde_json::from_value(v).unwrap();
    assert!(back.iter().all(|r| r.timeline.is_none()));
}

/// A batch's base offset lies outside its CRC: a flipped or rewritten one can put a batch
/// near `Long.MAX_VALUE` while its CRC still holds. The page's timeline then spans the
/// whole offset range: its scale and axis ticks are drawn without overflow (the debug
/// build panicked in the tick arithmetic), and the page is written.
#[test]
fn a_timeline_spanning_the_whole_offset_range_is_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("huge-span", 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    let m = p.write(dir.path()).unwrap();
    let seg = &m.segments[0].1;
    let mut bytes = std::fs::read(seg).unwrap();
    let second = m.batches[1].position as usize;
    bytes[second..second + 8].copy_from_slice(&(i64::MAX - 2).to_be_bytes());
    std::fs::write(seg, &bytes).unwrap();
    let (code, html, err) = klogscan(
        &["scan", "--format", "html", "--timeline", "huge-span"],
        &[&m.dir],
    );
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    assert!(html.contains("<svg class=\"timeline\""), "{err}");
    assert!(
        !html.contains("NaN") && !html.contains("inf\""),
        "a scale that is a number"
    );
}
