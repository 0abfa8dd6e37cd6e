//! On a real terminal (a pseudo-terminal from util-linux `script`): colour by default and
//! not with `NO_COLOR`, UTF-8 borders, the terminal's width honoured at 80 columns without
//! breaking identifiers, and a sane width when the terminal reports 0 columns.
//! Skips with a printed reason when `script` is not installed.

use std::path::PathBuf;
use std::process::Command;

fn on_terminal(cols: u16, env: &[(&str, &str)], args: &str) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED (terminal): util-linux `script` is not installed");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_klogscan");
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
    let cmd = format!(
        "stty cols {cols} rows 60; exec {bin} scan {} {args}",
        sample.display()
    );
    let mut c = Command::new("script");
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
fn eighty_columns_fit_and_keep_identifiers_whole() {
    let Some(raw) = on_terminal(80, &[], "") else {
        return;
    };
    assert!(raw.contains("\x1b["), "colour on a terminal by default");
    let text = strip_ansi(&raw);
    assert!(text.contains('┆'), "UTF-8 borders on a terminal");
    for line in text.lines() {
        let is_command = line.trim_start().starts_with("kafka-transactions.sh")
            || line.trim_start().starts_with("fix:");
        if !is_command {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
    }
    for id in [
        "producer_epoch_regression",
        "marker_without_transaction",
        "hanging_transaction",
        "codec-snappy-0",
        "producer.id.expiration.ms",
    ] {
        assert!(text.contains(id), "{id} broken at 80 columns:\n{text}");
    }
}

#[test]
fn no_color_is_honoured_on_a_terminal() {
    let Some(raw) = on_terminal(120, &[("NO_COLOR", "1")], "") else {
        return;
    };
    assert!(!raw.contains("\x1b["), "{raw}");
    let Some(raw) = on_terminal(120, &[], "--color never") else {
        return;
    };
    assert!(!raw.contains("\x1b["));
}

#[test]
fn a_terminal_reporting_zero_columns_gets_a_sane_width() {
    let Some(raw) = on_terminal(0, &[], "--color never") else {
        return;
    };
    // The full partition table at the default width: no one-character columns.
    assert!(raw.contains("┆ segments ┆ batches ┆"), "{raw}");
    assert!(raw.contains("│ codec-snappy-0 "), "{raw}");
}
