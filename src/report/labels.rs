//! Short labels for the tables, with a legend of the paths they stand for.
//!
//! A partition held by several inputs (copies from several brokers, evidence folders) is
//! told apart by where it lies; a broker without a `broker.id` is named by its log dir.
//! Printing those paths in the cells made tables as wide as the longest path and wrapped
//! labels at their spaces, so a cell carries a reference instead — `__consumer_offsets-29[2]`
//! (a topic name never holds `[`) — and the legend below the table gives `[2]` its
//! directory once. A name longer than the column a table can give it is cut in its middle
//! (`_confluent-contr…changelog-0[5]`) and the legend gives the whole partition directory.
//! A label holds no space, so no table breaks it.

use crate::finding::Source;
use crate::results::ScanReport;
use std::collections::HashMap;

/// The labels of a report's partitions and brokers, and the legend of the paths they refer to.
#[derive(Debug, Default)]
pub(crate) struct Labels {
    /// Per partition of the report, in order.
    pub partitions: Vec<String>,
    /// A partition directory's label, by its path (findings name their partition by path).
    by_path: HashMap<String, String>,
    /// The paths referred to, `[1]` first.
    legend: Vec<String>,
    index: HashMap<String, usize>,
    /// The longest name kept whole.
    max_name: usize,
    unicode: bool,
}

impl Labels {
    /// Labels for `report` in a table `width` columns wide.
    pub fn new(report: &ScanReport, width: u16, unicode: bool) -> Labels {
        let mut l = Labels {
            // A third of the width: the other columns of the narrowest table keep the rest.
            max_name: (usize::from(width) / 3).clamp(20, 72),
            unicode,
            ..Default::default()
        };
        let mut counts: HashMap<(&str, i32), usize> = HashMap::new();
        for p in &report.partitions {
            *counts.entry((&p.topic, p.partition)).or_default() += 1;
        }
        for p in &report.partitions {
            let copies = counts[&(p.topic.as_str(), p.partition)] > 1;
            let label = l.partition(&p.topic, p.partition, &p.path, copies);
            l.by_path.insert(p.path.clone(), label.clone());
            l.partitions.push(label);
        }
        l
    }

    /// `[n]` for `path` (added to the legend when new).
    fn reference(&mut self, path: &str) -> String {
        let n = match self.index.get(path) {
            Some(&n) => n,
            None => {
                self.legend.push(path.to_string());
                self.index.insert(path.to_string(), self.legend.len());
                self.legend.len()
            }
        };
        format!("[{n}]")
    }

    /// The label of a partition directory: its name (cut when too long, then referring to
    /// its directory), referring to the directory holding it when it has copies.
    fn partition(&mut self, topic: &str, partition: i32, path: &str, copies: bool) -> String {
        let name = super::partition_name(topic, partition, Some(path));
        if name.chars().count() > self.max_name {
            let short = cut_middle(&name, self.max_name, self.unicode);
            return format!("{short}{}", self.reference(&crate::escape::text(path)));
        }
        if !copies {
            return name;
        }
        let parent = std::path::Path::new(path)
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        format!("{name}{}", self.reference(&crate::escape::text(&parent)))
    }

    /// The label of the partition a finding names (by its path when the report has it).
    pub fn of_finding(&mut self, f: &crate::finding::Finding) -> String {
        if let Some(l) = f.source.path.as_ref().and_then(|p| self.by_path.get(p)) {
            return l.clone();
        }
        let path = f.source.path.as_deref().unwrap_or("");
        self.partition(&f.topic, f.partition, path, false)
    }

    /// The broker a source names: its `node.id`/`broker.id` (with the first 8 characters
    /// of the cluster id when `with_cluster`), else `?` and a reference to its log dir.
    pub fn broker(&mut self, s: &Source, with_cluster: bool) -> String {
        let b = match (s.broker_id, &s.log_dir) {
            (Some(b), _) => b.to_string(),
            (None, Some(d)) => format!("?{}", self.reference(&crate::escape::text(d))),
            (None, None) => "?".to_string(),
        };
        match (&s.cluster_id, with_cluster) {
            (Some(c), true) => format!(
                "{b}@{}",
                crate::escape::text(&c.chars().take(8).collect::<String>())
            ),
            _ => b,
        }
    }

    /// Write the legend (nothing when no label refers to a path): one path a line, cut at
    /// its `/` to `width` columns.
    pub fn write_legend(&self, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.legend.is_empty() {
            return Ok(());
        }
        writeln!(w, "paths:")?;
        for (i, p) in self.legend.iter().enumerate() {
            let head = format!("  [{}] ", i + 1);
            writeln!(w, "{head}{}", wrap_path(p, usize::from(width), head.len()))?;
        }
        Ok(())
    }
}

/// A partition's name and its directory (escaped) for a heading: on one line, two spaces
/// apart, when they fit `width`; else the name (cut in its middle when longer than the
/// width: the path under it names it whole) and, under it, the path indented by 4 and
/// wrapped after its `/`. Returns the name and what follows it.
pub(crate) fn name_and_path(name: &str, path: &str, width: u16, unicode: bool) -> (String, String) {
    let path = crate::escape::text(path);
    let w = usize::from(width);
    let (n, p) = (name.chars().count(), path.chars().count());
    if n + 2 + p <= w {
        return (name.to_string(), format!("  {path}"));
    }
    let name = if n > w {
        cut_middle(name, w, unicode)
    } else {
        name.to_string()
    };
    (name, format!("\n    {}", wrap_path(&path, w, 4)))
}

/// `name` cut to `max` characters by replacing its middle with an ellipsis.
fn cut_middle(name: &str, max: usize, unicode: bool) -> String {
    let dots = if unicode { "…" } else { "..." };
    let keep = max.saturating_sub(dots.chars().count());
    let chars: Vec<char> = name.chars().collect();
    let tail = keep / 2;
    let head = keep - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push_str(dots);
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// A path wrapped after its `/` to lines of at most `width` columns, the first starting at
/// column `indent` and the next ones indented as much (a component longer than a whole
/// line is cut where the line ends).
fn wrap_path(path: &str, width: usize, indent: usize) -> String {
    let room = width.saturating_sub(indent).max(8);
    let mut out = String::with_capacity(path.len() + 8);
    let mut col = 0;
    for part in path.split_inclusive('/') {
        let chars: Vec<char> = part.chars().collect();
        for piece in chars.chunks(room) {
            if col > 0 && col + piece.len() > room {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent));
                col = 0;
            }
            out.extend(piece);
            col += piece.len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_in_the_middle() {
        let n = "_confluent-controlcenter-5-1-2-1-KSTREAM-OUTEROTHER-0000000096-store-changelog-0";
        let c = cut_middle(n, 26, false);
        assert_eq!(c.chars().count(), 26);
        assert!(
            c.starts_with("_confluent-") && c.ends_with("changelog-0"),
            "{c}"
        );
        assert!(c.contains("..."));
        assert_eq!(cut_middle(n, 26, true).chars().count(), 26);
    }

    #[test]
    fn paths_wrap_after_a_slash() {
        let p = "../shared/real-data/broker/ItumelengMogase__Real-Time-Data-Pipeline/kafka-data";
        let w = wrap_path(p, 60, 6);
        assert!(w.lines().count() > 1, "{w}");
        for l in w.lines() {
            assert!(l.chars().count() <= 60, "{w}");
        }
        assert_eq!(w.replace(['\n', ' '], ""), p);
        assert_eq!(wrap_path("/a/b", 80, 6), "/a/b");
        let long = format!("/x/{}", "n".repeat(100));
        let w = wrap_path(&long, 40, 6);
        assert!(w.lines().all(|l| l.chars().count() <= 40), "{w}");
        assert_eq!(w.replace(['\n', ' '], ""), long);
    }

    #[test]
    fn a_long_path_goes_under_the_name_wrapped() {
        let p = "../shared/real-data/broker/ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/__consumer_offsets-29";
        let (n, rest) = name_and_path("__consumer_offsets-29", p, 80, false);
        assert_eq!(n, "__consumer_offsets-29");
        assert!(rest.starts_with("\n    "), "{rest}");
        assert!(rest.lines().all(|l| l.chars().count() <= 80), "{rest}");
        assert_eq!(rest.replace(['\n', ' '], ""), p);
        let (n, rest) = name_and_path("orders-0", "/data/orders-0", 80, false);
        assert_eq!(format!("{n}{rest}"), "orders-0  /data/orders-0");
        let long = "x".repeat(100);
        let (n, _) = name_and_path(&long, "/d", 60, true);
        assert_eq!(n.chars().count(), 60);
    }
}
