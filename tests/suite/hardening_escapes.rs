//! One escaping rule for every text output: a corpus of hostile names (ESC sequences, OSC 0
//! title, OSC 8 hyperlink, OSC 52 clipboard write, BEL, CR, LF, C1 controls including the
//! one-character CSI U+009B, DEL, backspace) as topic names, directory names, transactional
//! ids and group ids, through every command and every output format, stdout and stderr.
//! Nothing may reach the output raw: no control character but the line feed, and no line
//! forged by a line feed or carriage return inside a name.
#![cfg(all(feature = "testkit", unix))]

use crate::common::run::{Run, klogscan};
use klogscan::testkit::group_scenarios::{self as sc, GroupLog};
use klogscan::testkit::txns::{Cluster, Txn};
use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use std::ffi::OsStr;
use std::path::Path;

/// The corpus: each name is one attack; every one ends in a line break followed by a
/// marker that must never start a line of output. A space before the break keeps the
/// escaped marker a short word (a table wraps it whole, never mid-word).
const ATTACKS: [&str; 8] = [
    "csi\x1b[2J\x1b[31m \rFORGED",
    "osc0\x1b]0;TITLE\x07 \nFORGED",
    "osc8\x1b]8;;http:evil\x1b\\link\x1b]8;;\x1b\\ \nFORGED",
    "osc52\x1b]52;c;QUFBQQ==\x07 \r\nFORGED",
    "c1\u{9b}31m\u{85}\u{90}\u{9d}0;T\u{9c} \nFORGED",
    "bel\x07del\x7fbs\x08\x08 \nFORGED",
    "nul\0tab\tvt\x0bff\x0c \nFORGED",
    "plain-then \nFORGED",
];

/// A data dir with every attack as a topic name (with a hanging transaction whose
/// transactional id is the attack), a directory name that is no topic name, and a group id.
fn hostile_dir(root: &Path) {
    let topics: Vec<&'static str> = ATTACKS
        .iter()
        .map(|a| &*Box::leak(format!("t-{}", as_topic(a)).into_boxed_str()))
        .collect();
    let mut c = Cluster::new(Some("c1")).coordinator(0);
    for (i, t) in topics.iter().enumerate() {
        // A transaction the coordinator completed without this partition's marker:
        // hanging (`find-hanging` lists it: the coordinator's description holds no
        // transaction listing the partition), with suggested `kafka-transactions.sh` lines
        // naming the transactional id and the topic.
        c.run(
            &Txn::new(
                ATTACKS[i],
                Producer::transactional(100 + i as i64, 0),
                &[(t, 0)],
            )
            .skip_marker_on((t, 0)),
        );
    }
    c.advance(3 * 60 * 60_000);
    c.plain(("later", 0), 1);
    c.write(root, 1).unwrap();
    for (i, a) in ATTACKS.iter().enumerate() {
        // Not a topic name (no `-N`): shown by its path.
        let d = root.join(format!("dir{i}-{}", in_file_name(a)));
        let mut b = PartitionBuilder::new("x", 0);
        b.append(Batch::new(Producer::PLAIN).values(["v"]));
        let log = b.write(root).unwrap().segments[0].1.clone();
        std::fs::create_dir_all(&d).unwrap();
        std::fs::rename(&log, d.join("00000000000000000000.log")).unwrap();
    }
    let _ = std::fs::remove_dir_all(root.join("x-0"));
    let mut log = GroupLog::new();
    for a in ATTACKS {
        sc::classic_group(&mut log, a);
    }
    log.write(root, 0).unwrap();
}

/// `a` as a topic name a partition directory can carry (no whitespace: a directory name
/// with whitespace is no partition's).
fn as_topic(a: &str) -> String {
    in_file_name(a)
        .replace(char::is_whitespace, "")
        .replace("FORGED", "")
}

/// `a` as a file name can hold it (NUL cannot be in one).
fn in_file_name(a: &str) -> String {
    a.replace('\0', "\x01")
}

/// What is unsafe in `s`: a raw control character but the line feed, or a line the
/// marker starts.
fn unsafe_in(what: &str, s: &str) -> Vec<String> {
    let mut bad = Vec::new();
    // klogscan's own colours (`--color always`) and the tool's tab-separated columns
    // (`--format find-hanging`, a tab after every padded value) are the output's, not the
    // data's.
    let s = &if what.contains("find-hanging") {
        strip_sgr(s).replace('\t', " ")
    } else {
        strip_sgr(s)
    };
    if let Some((i, c)) = s
        .char_indices()
        .find(|&(_, c)| klogscan::escape::is_control(c) && c != '\n')
    {
        let before: String = s[..i].chars().rev().take(60).collect();
        let before: String = before.chars().rev().collect();
        bad.push(format!("{what}: raw {c:?} after {before:?}"));
    }
    if let Some(l) = s.lines().find(|l| {
        l.trim_start_matches(|c: char| !c.is_alphanumeric())
            .starts_with("FORGED")
    }) {
        bad.push(format!("{what}: a forged line: {l:?}"));
    }
    bad
}

/// `s` without complete SGR sequences (`ESC [ digits/; m`).
fn strip_sgr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let n = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[n..].starts_with('m') {
            rest = &after[n + 1..];
        } else {
            out.push('\x1b');
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

fn run(args: &[&OsStr]) -> Run {
    let r = klogscan(args, None, 120);
    r.code();
    r
}

#[test]
fn hostile_names_never_reach_any_output_raw() {
    let t = tempfile::tempdir().unwrap();
    hostile_dir(t.path());
    let root = t.path().as_os_str();
    let s = |x: &'static str| OsStr::new(x);
    let mut runs: Vec<Vec<&OsStr>> = Vec::new();
    for fmt in ["table", "json", "jsonl", "html", "find-hanging"] {
        runs.push(vec![s("scan"), s("--format"), s(fmt), root]);
    }
    runs.push(vec![s("scan"), s("--color"), s("always"), root]);
    for cmd in ["producers", "txns", "verify"] {
        for fmt in ["table", "json"] {
            runs.push(vec![s(cmd), s("--format"), s(fmt), root]);
        }
        runs.push(vec![s(cmd), s("--color"), s("always"), root]);
    }
    for fmt in ["table", "json"] {
        runs.push(vec![s("txns"), s("--cluster"), s("--format"), s(fmt), root]);
        runs.push(vec![s("groups"), s("--format"), s(fmt), root]);
    }
    runs.push(vec![s("groups"), s("--members"), root]);
    let offsets = t
        .path()
        .join("__consumer_offsets-0/00000000000000000000.log");
    let txnlog = t
        .path()
        .join("__transaction_state-0/00000000000000000000.log");
    for fmt in ["text", "json"] {
        for (file, flag) in [
            (&offsets, "--offsets-decoder"),
            (&txnlog, "--transaction-log-decoder"),
        ] {
            runs.push(vec![
                s("dump"),
                s("--format"),
                s(fmt),
                s(flag),
                file.as_os_str(),
            ]);
        }
    }
    let mut bad = Vec::new();
    for args in &runs {
        let r = run(args);
        let what = format!("{:?}", &args[..args.len() - 1]);
        assert!(!r.out.is_empty(), "{what}: no output: {}", r.err);
        bad.extend(unsafe_in(&format!("{what} stdout"), &r.out));
        bad.extend(unsafe_in(&format!("{what} stderr"), &r.err));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `find-hanging` lists hanging transactions with their topic names escaped, columns
/// still separated as the tool separates them.
#[test]
fn find_hanging_rows_carry_escaped_topics() {
    let t = tempfile::tempdir().unwrap();
    hostile_dir(t.path());
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--format"),
        OsStr::new("find-hanging"),
        t.path().as_os_str(),
    ]);
    let rows: Vec<&str> = r.out.lines().skip(1).collect();
    assert_eq!(rows.len(), ATTACKS.len(), "{}", r.out);
    assert!(
        rows.iter().any(|l| l.starts_with("t-csi\\x1b[2J\\x1b[31m")),
        "{}",
        r.out
    );
    // Eight columns, each followed by a tab (`ToolsUtils.printRow`): nine fields, the last
    // empty.
    assert!(
        rows.iter()
            .all(|l| l.split('\t').count() == 9 && l.ends_with('\t')),
        "{}",
        r.out
    );
}

/// The escaped form names what it escapes: the same rule (`\n`, `\r`, `\t`, `\xNN`,
/// `\u{NN}` for C1) in a table, a `verify` text and the triage.
#[test]
fn one_rule_for_every_text_output() {
    let t = tempfile::tempdir().unwrap();
    hostile_dir(t.path());
    let root = t.path().as_os_str();
    for args in [
        vec!["scan"],
        vec!["scan", "--color", "always"],
        vec!["verify"],
        vec!["groups"],
    ] {
        let mut a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        a.push(root);
        let r = run(&a);
        for want in [
            "\\x1b]52;c;QUFBQQ==\\x07 \\r\\nFORGED",
            "osc0\\x1b]0;TITLE\\x07 \\nFORGED",
        ] {
            assert!(r.out.contains(want), "{args:?}: {want} not in {}", r.out);
        }
        assert!(
            r.out
                .contains("c1\\u{9b}31m\\u{85}\\u{90}\\u{9d}0;T\\u{9c} \\nFORGED"),
            "{args:?}: {}",
            r.out
        );
    }
}
