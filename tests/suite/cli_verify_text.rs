//! `verify`'s text report follows the scan tables' rules (issue 14 item 4): colour with
//! `--color always` and on a terminal, none with `--color never`, `NO_COLOR` or into a pipe;
//! ASCII borders into a pipe, UTF-8 on a terminal; lines within the terminal's width with
//! identifiers whole, and a sane width when the terminal reports 0 columns.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::testkit::{
    Batch, Damage, FaultKind, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer,
    Target,
};
use std::path::Path;

/// A partition a broker would truncate (zeros after the last batch), with a stale snapshot
/// and a leftover `.swap` file, after an unclean shutdown.
fn crashed(dir: &Path) {
    let mut p = PartitionBuilder::new("orders", 2).broker_files(
        PartitionFileOptions::default()
            .damage(Damage::StaleSnapshot)
            .damage(Damage::Leftover {
                segment: 0,
                suffix: ".swap".into(),
            }),
    );
    let idem = Producer::idempotent(9, 0);
    p.append(Batch::new(idem).records(4));
    p.roll();
    p.append(Batch::new(idem).records(4));
    p.fault(Target::LastLog, FaultKind::AppendZeros(64));
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .partition(p)
        .write(dir)
        .unwrap();
}

fn verify(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let mut c = Command::cargo_bin("klogscan").unwrap();
    c.env_remove("NO_COLOR").arg("verify").args(args).arg(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    String::from_utf8(c.output().unwrap().stdout).unwrap()
}

/// `verify` on a pseudo-terminal of `cols` columns (util-linux `script`).
fn on_terminal(dir: &Path, cols: u16, env: &[(&str, &str)], args: &str) -> Option<String> {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED (terminal): util-linux `script` is not installed");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_klogscan");
    let cmd = format!(
        "stty cols {cols} rows 60; exec {bin} verify {} {args}",
        dir.display()
    );
    let mut c = std::process::Command::new("script");
    c.args(["-qec", &cmd, "/dev/null"]).env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    Some(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"))
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn verify_colour_follows_color_and_no_color() {
    let dir = tempfile::tempdir().unwrap();
    crashed(dir.path());
    let always = verify(dir.path(), &[], &["--color", "always"]);
    // The truncation mark in the warning colour, the partition name bold.
    assert!(always.contains("\x1b[1;33mTRUNCATE\x1b[0m"), "{always}");
    assert!(always.contains("\x1b[1morders-2\x1b[0m"), "{always}");
    assert_eq!(
        strip_ansi(&always),
        verify(dir.path(), &[], &["--color", "never"]),
        "colour is the only difference"
    );
    // Into a pipe (auto), with NO_COLOR, with --color never: no escape sequence at all.
    for (env, args) in [
        (&[][..], &[][..]),
        (&[("NO_COLOR", "1")][..], &["--color", "auto"][..]),
        (&[][..], &["--color", "never"][..]),
    ] {
        let text = verify(dir.path(), env, args);
        assert!(!text.contains('\x1b'), "{env:?} {args:?}: {text}");
        assert!(
            text.contains("TRUNCATE: 00000000000000000004.log"),
            "{text}"
        );
    }
}

#[test]
fn verify_into_a_pipe_is_ascii_within_the_default_width() {
    let dir = tempfile::tempdir().unwrap();
    crashed(dir.path());
    let text = verify(dir.path(), &[], &[]);
    assert!(text.is_ascii(), "{text}");
    // The findings are a table with ASCII borders, as scan's.
    assert!(text.contains("| severity"), "{text}");
    assert!(text.contains("| snapshot_mismatch"), "{text}");
    for l in text.lines() {
        assert!(
            l.chars().count() <= 140,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

#[test]
fn verify_on_a_terminal_fits_eighty_columns_with_identifiers_whole() {
    let dir = tempfile::tempdir().unwrap();
    crashed(dir.path());
    let Some(raw) = on_terminal(dir.path(), 80, &[], "") else {
        return;
    };
    assert!(
        raw.contains("\x1b["),
        "colour on a terminal by default: {raw}"
    );
    let text = strip_ansi(&raw);
    for l in text.lines() {
        // A path longer than the terminal cannot be broken; nothing else goes over.
        if !l.contains(&dir.path().display().to_string()) {
            assert!(
                l.chars().count() <= 80,
                "{} columns: {l}",
                l.chars().count()
            );
        }
    }
    for id in [
        "snapshot_mismatch",
        "preallocated_tail",
        "unclean_shutdown",
        "00000000000000000004.log",
    ] {
        assert!(text.contains(id), "{id} broken at 80 columns:\n{text}");
    }
    let Some(plain) = on_terminal(dir.path(), 80, &[("NO_COLOR", "1")], "") else {
        return;
    };
    assert!(!plain.contains("\x1b["), "{plain}");
    // 0 columns reported: the default width, not one character per column.
    let Some(zero) = on_terminal(dir.path(), 0, &[], "--color never") else {
        return;
    };
    assert!(zero.contains("┆ kind"), "{zero}");
    let widest = zero.lines().map(|l| l.chars().count()).max().unwrap();
    assert!((60..=140).contains(&widest), "{widest}: {zero}");
}
