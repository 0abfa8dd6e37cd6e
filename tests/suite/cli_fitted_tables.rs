//! `verify`, `producers`, `groups` (and `--members`), `consumers` and `txns` (and
//! `--cluster`) hold the width as `scan`'s tables do, on the whole real-data tree at 80,
//! 140 and 200 columns: every line fits; narrower layouts name the columns they leave
//! out, and what a narrow terminal does not show as a table is still there (a block per
//! row, the JSON unchanged by the width).

use crate::common::real_data;
use assert_cmd::Command;
use std::path::Path;

fn run(args: &[&str], root: &Path, columns: &str) -> String {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(args)
        .arg(root)
        .env("COLUMNS", columns)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `text` without any white space: what wrapping cannot have changed.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

const COMMANDS: [&[&str]; 7] = [
    &["verify"],
    &["producers"],
    &["groups"],
    &["groups", "--members"],
    &["consumers"],
    &["txns"],
    &["txns", "--cluster"],
];

#[test]
fn every_table_holds_80_140_and_200_columns() {
    let Some(root) = real_data() else { return };
    for args in COMMANDS {
        let mut widest = 0;
        for width in [80usize, 140, 200] {
            let text = run(args, &root, &width.to_string());
            assert!(!text.is_empty(), "{args:?}");
            for line in text.lines() {
                let n = line.chars().count();
                assert!(n <= width, "{args:?} at {width}: {n} columns: {line}");
                widest = widest.max(n);
            }
        }
        // The tables take the room a wide terminal gives (they do not stop at 80).
        assert!(widest > 80, "{args:?}: never wider than 80");
    }
}

#[test]
fn narrow_tables_leave_nothing_out_of_reach() {
    let Some(root) = real_data() else { return };
    // producers: at 80 the coordinator epoch is left out, said so; 200 shows it; the
    // JSON (every field) is the same whatever the width.
    let narrow = run(&["producers"], &root, "80");
    let wide = run(&["producers"], &root, "200");
    assert!(!narrow.contains("| LatestCoordinatorEpoch"), "{narrow}");
    assert!(
        narrow.contains("(left out at 80 columns: LatestCoordinatorEpoch;"),
        "{narrow}"
    );
    assert!(wide.contains("LatestCoordinatorEpoch"), "{wide}");
    assert!(!wide.contains("left out"), "{wide}");
    let j80 = run(&["producers", "--format", "json"], &root, "80");
    assert_eq!(j80, run(&["producers", "--format", "json"], &root, "200"));
    let v: serde_json::Value = serde_json::from_str(&j80).unwrap();
    let parts = v["partitions"].as_array().unwrap();
    assert!(
        parts
            .iter()
            .flat_map(|p| p["producers"].as_array().unwrap())
            .all(|s| s["coordinator_epoch"].is_i64())
    );
    // Every listed partition's full directory is printed (wrapped under its name).
    let text = squeezed(&narrow);
    let listed = parts
        .iter()
        .filter(|p| !p["producers"].as_array().unwrap().is_empty());
    for p in listed {
        let path = p["path"].as_str().unwrap();
        assert!(text.contains(&squeezed(path)), "{path} missing:\n{narrow}");
    }

    // groups: a block per group at 80 names every group and every cell of its row.
    let narrow = run(&["groups"], &root, "80");
    let json = run(&["groups", "--format", "json"], &root, "80");
    assert_eq!(json, run(&["groups", "--format", "json"], &root, "200"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let text = squeezed(&narrow);
    for g in v["groups"].as_array().unwrap() {
        let id = g["group_id"].as_str().unwrap();
        let partition = g["partition"].as_i64().unwrap();
        assert!(text.contains(&squeezed(id)), "{id}:\n{narrow}");
        assert!(text.contains(&format!("PARTITION:{partition}")), "{narrow}");
    }
    assert!(
        narrow.contains("ASSIGNMENT-EPOCH: "),
        "a block per group:\n{narrow}"
    );

    // consumers: every row's topic and committed offset, whatever the width.
    let narrow = run(&["consumers"], &root, "80");
    let json = run(&["consumers", "--format", "json"], &root, "80");
    assert_eq!(json, run(&["consumers", "--format", "json"], &root, "200"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let text = squeezed(&narrow);
    for r in v["consumers"]["rows"].as_array().unwrap() {
        let topic = r["topic"].as_str().unwrap();
        let committed = r["committed_offset"].as_i64().unwrap();
        assert!(text.contains(&squeezed(topic)), "{topic}:\n{narrow}");
        assert!(
            text.contains(&format!("COMMITTED:{committed}")),
            "{committed}:\n{narrow}"
        );
    }

    // verify: every partition's directory, and the JSON the width does not touch.
    let narrow = run(&["verify"], &root, "80");
    let json = run(&["verify", "--format", "json"], &root, "80");
    assert_eq!(json, run(&["verify", "--format", "json"], &root, "200"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let text = squeezed(&narrow);
    for p in v["partitions"].as_array().unwrap() {
        let path = p["path"].as_str().unwrap();
        assert!(text.contains(&squeezed(path)), "{path}:\n{narrow}");
    }

    // txns: long names are cut in their middle and the legend gives their directory.
    let narrow = run(&["txns"], &root, "80");
    let legend = narrow.split("\npaths:\n").nth(1).expect("a legend");
    assert!(legend.contains("  [1] "), "{legend}");
    assert!(
        narrow.contains("(left out at 80 columns: size min/p50/p99/max"),
        "{narrow}"
    );
    let wide = run(&["txns"], &root, "200");
    assert!(wide.contains("size min/p50/p99/max"), "{wide}");
}
