//! `scan`'s tables on the whole real-data tree and the sample broker at 80, 140 and 200
//! columns (`COLUMNS`; piped without it: 140): every line fits (a `fix:` command wrapped as
//! shell line continuations that join back into the command),
//! no partition label is broken across lines, and the paths that tell copies apart are in
//! the legend, once.

use assert_cmd::Command;
use std::path::PathBuf;

fn scan(columns: Option<&str>) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut c = Command::cargo_bin("klogscan").unwrap();
    c.args(["scan", "--fail-on", "never"])
        .arg(root.join("../shared/real-data"))
        .arg(root.join("testdata"))
        .env_remove("COLUMNS");
    if let Some(w) = columns {
        c.env("COLUMNS", w);
    }
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

/// The `fix:` commands of a text report, their `\` continuations joined back.
fn fix_commands(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    let mut in_fix = false;
    for line in text.lines() {
        let cont = open && line.starts_with(&" ".repeat(18));
        if let Some(c) = line.strip_prefix("    fix:        ") {
            in_fix = true;
            out.push(c.to_string());
        } else if cont {
            out.last_mut().unwrap().push_str(&line[18..]);
        } else if in_fix && line.starts_with(&" ".repeat(16)) && !line.starts_with(&" ".repeat(17))
        {
            out.push(line[16..].to_string());
        } else {
            in_fix = false;
        }
        open = in_fix && line.ends_with(" \\");
        if open {
            let last = out.last_mut().unwrap();
            last.truncate(last.len() - 1);
        }
    }
    out
}

#[test]
fn scan_tables_fit_80_140_and_200_columns() {
    if !PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/real-data")
        .is_dir()
    {
        eprintln!("SKIPPED: ../shared/real-data is absent");
        return;
    }
    let piped = scan(None);
    assert_eq!(piped, scan(Some("140")), "piped is the documented 140");
    for width in [80usize, 140, 200] {
        let text = scan(Some(&width.to_string()));
        for line in text.lines() {
            assert!(
                line.chars().count() <= width,
                "{width}: {} columns: {line}",
                line.chars().count()
            );
        }
        // Labels stay whole: no table row continues a label with its reference alone.
        for line in text.lines().filter(|l| l.starts_with('|')) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            assert!(
                !cells
                    .iter()
                    .any(|c| c.starts_with('[') && c.ends_with(']') && !c.contains(' ')),
                "{width}: a reference wrapped away from its label: {line}"
            );
        }
        // Copies of one partition are told apart by a reference to the legend.
        assert!(text.contains("__cluster_metadata-0[1]"), "{width}:\n{text}");
        let legend = text.split("\npaths:\n").nth(1).expect("a legend");
        assert!(legend.contains("  [1] "), "{legend}");
        assert!(
            !text.contains("(ItumelengMogase"),
            "{width}: a path in a cell"
        );
        // The findings' messages keep at least 40 columns (table) or are blocks.
        assert!(text.contains("payments-3"), "{text}");
    }
}

#[test]
fn fix_commands_wrap_as_shell_continuations_that_join_back() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str], columns: &str| {
        let out = Command::cargo_bin("klogscan")
            .unwrap()
            .args(args)
            .arg(root.join("testdata"))
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run(
        &["scan", "--format", "json", "--fail-on", "never"],
        "80",
    ))
    .unwrap();
    let commands: Vec<String> = json["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["commands"].as_array().unwrap())
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert!(
        commands.iter().any(|c| c.chars().count() > 64),
        "a command longer than an 80-column line leaves: {commands:?}"
    );
    for width in ["80", "140", "200"] {
        let text = run(&["scan", "--fail-on", "never"], width);
        let w: usize = width.parse().unwrap();
        assert_eq!(fix_commands(&text), commands, "{width}:\n{text}");
        assert!(text.lines().all(|l| l.chars().count() <= w), "{text}");
        if w == 80 {
            assert!(text.contains(" \\\n                  --"), "{text}");
        }
    }
}
