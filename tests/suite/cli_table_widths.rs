//! `scan`'s tables on the whole real-data tree and the sample broker at 80, 140 and 200
//! columns (`COLUMNS`; piped without it: 140): every line but a copy-pastable command fits,
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

fn is_command(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with("fix:") || l.contains("kafka-transactions.sh") || l.contains("kafka-dump-log")
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
        for line in text.lines().filter(|l| !is_command(l)) {
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
