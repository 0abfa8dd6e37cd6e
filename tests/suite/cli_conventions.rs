//! Issue 14, the command line's conventions and views: completions and man page, examples in
//! every `--help`, colour and ASCII tables, durations with units, `--now now`, `--fail-on`
//! on every scanning command, `dump --format` errors and typed JSON lines, `scan --format
//! jsonl`, the triage summary, the filters (shown, not analysed), the `find-hanging` view
//! and `client_error` on every finding a client can observe.

use assert_cmd::Command;
use serde_json::Value;
use std::path::PathBuf;

fn klogscan() -> Command {
    let mut c = Command::cargo_bin("klogscan").unwrap();
    c.env_remove("NO_COLOR");
    c
}

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = klogscan().args(args).arg(sample()).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn scan_json(args: &[&str]) -> Value {
    let mut a = vec!["scan", "--format", "json"];
    a.extend_from_slice(args);
    let (_, out, err) = run(&a);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"))
}

fn kinds(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}@{}", f["kind"].as_str().unwrap(), f["offset"]))
        .collect()
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = klogscan().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("klogscan"), "{shell}");
        assert!(text.contains("hanging-after"), "{shell}: flags completed");
    }
    klogscan().args(["completions", "tcsh"]).assert().code(2);
    let out = klogscan().arg("man").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(".ie") || text.contains(".TH klogscan"),
        "{text}"
    );
    assert!(text.contains("Offline forensic analyzer"));
}

#[test]
fn every_subcommand_help_has_examples() {
    for sub in [
        "scan",
        "producers",
        "txns",
        "dump",
        "verify",
        "groups",
        "completions",
        "man",
    ] {
        let out = klogscan().args([sub, "--help"]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Examples:"), "{sub}: {text}");
        assert!(text.contains(&format!("klogscan {sub}")), "{sub}: {text}");
    }
}

#[test]
fn colour_only_when_asked_or_on_a_terminal_and_ascii_in_files() {
    let (_, plain, _) = run(&["scan"]);
    assert!(!plain.contains('\x1b'), "no colour into a pipe");
    for l in plain.lines().filter(|l| l.starts_with(['+', '|'])) {
        assert!(l.is_ascii(), "ASCII tables into a pipe:\n{l}");
    }
    let triage = &plain[..plain.find("DETAILS").unwrap()];
    assert!(triage.is_ascii(), "{triage}");
    assert!(plain.contains("+----"), "{plain}");
    let (_, coloured, _) = run(&["scan", "--color", "always"]);
    assert!(coloured.contains("\x1b[1;31m"), "error heading in red");
    // --color auto (the default) into a pipe, and NO_COLOR, stay plain.
    let out = klogscan()
        .env("NO_COLOR", "1")
        .args(["scan", "--color", "auto"])
        .arg(sample())
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains('\x1b'));
    let (_, never, _) = run(&["scan", "--color", "never"]);
    assert_eq!(never, plain);
    klogscan()
        .args(["scan", "--color", "sometimes"])
        .arg(sample())
        .assert()
        .code(2);
}

#[test]
fn identifiers_are_never_broken_in_tables() {
    let (_, text, _) = run(&["scan"]);
    for id in [
        "producer_epoch_regression",
        "marker_without_transaction",
        "codec-snappy-0",
    ] {
        assert!(text.contains(id), "{id} broken:\n{text}");
    }
}

#[test]
fn durations_need_a_unit_and_now_works() {
    let (code, _, err) = run(&["scan", "--hanging-after", "25"]);
    assert_eq!(code, 2);
    assert!(err.contains("needs a unit"), "{err}");
    for d in ["25ms", "30m", "2h", "1h30m", "0"] {
        let (code, _, err) = run(&["scan", "--hanging-after", d, "--format", "json"]);
        assert!(code == 0 || code == 1, "{d}: {err}");
    }
    // --now now: a 2019 transaction is hanging today.
    let v = scan_json(&["--now", "now"]);
    let h = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "hanging_transaction")
        .unwrap();
    assert!(h["evidence"]["reference_time_ms"].as_i64().unwrap() > 1_700_000_000_000);
}

#[test]
fn producers_and_txns_honour_fail_on() {
    for cmd in ["producers", "txns"] {
        assert_eq!(run(&[cmd]).0, 1, "{cmd}: payments-3 holds errors");
        assert_eq!(run(&[cmd, "--fail-on", "never"]).0, 0, "{cmd}");
        assert_eq!(
            run(&[cmd, "--topic", "codec-*"]).0,
            0,
            "{cmd}: clean topics"
        );
        assert_eq!(
            run(&[cmd, "--topic", "payments", "--min-severity", "error"]).0,
            1
        );
    }
}

#[test]
fn dump_format_values_and_errors_match_the_other_commands() {
    let seg = sample().join("payments-3/00000000000000000000.log");
    let bad = klogscan()
        .args(["dump", "--format", "xml"])
        .arg(&seg)
        .output()
        .unwrap();
    let scan_bad = klogscan()
        .args(["scan", "--format", "xml"])
        .arg(sample())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(scan_bad.status.code(), Some(2));
    for e in [&bad.stderr, &scan_bad.stderr] {
        let e = String::from_utf8_lossy(e);
        assert!(
            e.contains("invalid value 'xml' for '--format <FORMAT>'"),
            "{e}"
        );
    }
    // json and jsonl both name the JSON Lines output of dump.
    let a = klogscan()
        .args(["dump", "--format", "json"])
        .arg(&seg)
        .output()
        .unwrap();
    let b = klogscan()
        .args(["dump", "--format", "jsonl"])
        .arg(&seg)
        .output()
        .unwrap();
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn every_dump_json_line_has_a_type() {
    let dir = sample().join("payments-3");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.push(sample().join("meta.properties"));
    files.push(sample().join("replication-offset-checkpoint"));
    files.sort();
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        for flags in [&[][..], &["--verify-index-only"][..]] {
            let out = klogscan()
                .args(["dump", "--format", "json"])
                .args(flags)
                .arg(f)
                .output()
                .unwrap();
            for stream in [&out.stdout, &out.stderr] {
                for line in String::from_utf8_lossy(stream).lines() {
                    if !line.starts_with('{') {
                        continue;
                    }
                    let v: Value = serde_json::from_str(line).unwrap();
                    let t = v["type"].as_str();
                    assert!(t.is_some(), "{}: {line}", f.display());
                    seen.insert(t.unwrap().to_string());
                }
            }
        }
    }
    for t in [
        "file",
        "batch",
        "snapshot_entry",
        "timeindex_entry",
        "empty",
    ] {
        assert!(seen.contains(t), "{t} not seen in {seen:?}");
    }
}

#[test]
fn jsonl_streams_partitions_and_findings() {
    let (code, out, _) = run(&["scan", "--format", "jsonl"]);
    assert_eq!(code, 1);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for l in &lines {
        assert!(l["type"].is_string() && l.get("data").is_some(), "{l}");
    }
    let of = |t: &str| lines.iter().filter(|l| l["type"] == t).count();
    let doc = scan_json(&[]);
    assert_eq!(lines[0]["type"], "begin");
    assert_eq!(lines.last().unwrap()["type"], "summary");
    assert_eq!(of("partition"), doc["partitions"].as_array().unwrap().len());
    assert_eq!(of("finding"), doc["findings"].as_array().unwrap().len());
    assert_eq!(of("incident"), 1);
    // A partition's findings follow its partition line.
    let p = lines
        .iter()
        .position(|l| l["type"] == "partition" && l["data"]["topic"] == "payments")
        .unwrap();
    assert_eq!(lines[p + 1]["type"], "finding");
    assert_eq!(lines[p + 1]["data"]["topic"], "payments");
}

#[test]
fn triage_summary_comes_first_with_cause_clients_and_commands() {
    let (_, text, _) = run(&["scan"]);
    let triage = text.find("TRIAGE: 1 incident").expect(&text);
    let table = text.find("| partition").unwrap();
    assert!(triage < table);
    // Lines wrap at the width (140 into a file): compare with whitespace collapsed.
    let block = text[triage..table]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for want in [
        "payments-3: last stable offset stuck at 21 since 2019-11-05T10:00:10.013Z",
        "zombie producer 4001@18 wrote after being fenced at epoch 19 (KAFKA-9144)",
        "root cause: producer_epoch_regression @21",
        "-> zombie_write @21 -> hanging_transaction @21",
        "producer writes accepted that a leader holding their state refuses with InvalidProducerEpochException; the producer then meets ProducerFencedException (application-recoverable)",
        "--partition 3 --producer-id 4001 --producer-epoch",
        "--coordinator-epoch 7 # the same, on brokers before 3.0",
        "read_committed consumers stall silently at offset 21",
        "kafka-transactions.sh --bootstrap-server <broker> abort --topic payments --partition 3 --start-offset 21",
    ] {
        assert!(block.contains(want), "missing {want:?} in\n{block}");
    }
    let v = scan_json(&[]);
    let inc = &v["incidents"][0];
    // Ids carry the broker (`b1:`, from meta.properties) since findings name their source.
    assert_eq!(
        inc["root"],
        "b1:producer_epoch_regression:payments-3@21:p4001"
    );
    assert_eq!(inc["partitions"][0], "payments-3");
    // A clean input has no triage block.
    let (_, clean, _) = run(&["scan", "--topic", "codec-*"]);
    assert!(!clean.contains("TRIAGE"), "{clean}");
}

#[test]
fn findings_only_and_min_severity() {
    let (_, text, _) = run(&["scan", "--findings-only"]);
    assert!(!text.contains("| segments"), "{text}");
    assert!(text.contains("zombie_write"));
    let v = scan_json(&["--min-severity", "error"]);
    assert_eq!(v["summary"]["findings"]["info"], 0);
    assert_eq!(v["summary"]["findings"]["error"], 3);
    let v = scan_json(&["--findings-only", "--min-severity", "warning"]);
    assert!(!kinds(&v).iter().any(|k| k.starts_with("marker_without")));
}

#[test]
fn filters_select_what_is_shown_not_what_is_analysed() {
    let all = scan_json(&[]);
    let by_name = scan_json(&["--topic", "payments-3"]);
    assert_eq!(by_name["partitions"].as_array().unwrap().len(), 1);
    assert_eq!(
        kinds(&by_name),
        kinds(&all),
        "all findings are in payments-3"
    );
    // Same findings (ids, messages, evidence) as the unfiltered analysis.
    assert_eq!(by_name["findings"], all["findings"]);
    assert_eq!(
        scan_json(&["--topic", "payments-4"])["findings"],
        Value::Array(vec![])
    );
    assert_eq!(
        scan_json(&["--topic", "codec-gzip,codec-zstd"])["summary"]["partitions"],
        2
    );
    // Producer: 5001 (idempotent, clean) has no findings but its partition is shown.
    let p5001 = scan_json(&["--producer-id", "5001"]);
    assert!(kinds(&p5001).is_empty());
    assert_eq!(p5001["partitions"][0]["topic"], "payments");
    assert_eq!(kinds(&scan_json(&["--producer-id", "4001"])).len(), 4);
    // Offsets: A..B excludes B.
    assert_eq!(
        kinds(&scan_json(&["--offsets", "16..21"])),
        ["marker_without_transaction@16"]
    );
    assert_eq!(kinds(&scan_json(&["--offsets", "21"])).len(), 3);
    // Time: the zombie's batch is at 10:00:10.013, the ABORT marker at 10:00:07.009.
    assert_eq!(
        kinds(&scan_json(&["--since", "2019-11-05T10:00:08Z"])).len(),
        3
    );
    assert_eq!(
        kinds(&scan_json(&["--until", "2019-11-05T10:00:08Z"])),
        ["marker_without_transaction@16"]
    );
    let (code, _, err) = run(&["scan", "--offsets", "x..y"]);
    assert_eq!(code, 2, "{err}");
    // Filters decide the exit code too: what is shown is what fails.
    assert_eq!(run(&["scan", "--offsets", "16"]).0, 0);
}

#[test]
fn verify_takes_the_same_filters() {
    let (code, out, err) = run(&["verify", "--format", "json", "--topic", "payments-3"]);
    assert_eq!(code, 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["partitions"].as_array().unwrap().len(), 1);
    assert_eq!(v["summary"]["partitions"], 1);
    assert_eq!(v["summary"]["findings"]["error"], 3);
    let (code, out, _) = run(&["verify", "--format", "json", "--topic", "codec-*"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["findings"]["error"], 0);
    assert_eq!(
        run(&["verify", "--format", "html"]).0,
        2,
        "html is for scan"
    );
}

#[test]
fn transactional_id_needs_the_coordinators_log() {
    let (code, _, err) = run(&["scan", "--transactional-id", "app-1"]);
    assert_eq!(code, 2);
    assert!(err.contains("__transaction_state"), "{err}");
}

#[test]
fn find_hanging_view() {
    let (code, out, _) = run(&["scan", "--format", "find-hanging"]);
    assert_eq!(code, 1);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        [
            "Topic",
            "Partition",
            "ProducerId",
            "ProducerEpoch",
            "CoordinatorEpoch",
            "StartOffset",
            "LastTimestamp",
            "Duration(min)"
        ]
    );
    assert_eq!(
        lines[1],
        [
            "payments",
            "3",
            "4001",
            "18",
            "7",
            "21",
            "1572948010013",
            "59"
        ]
    );
    assert_eq!(lines.len(), 2);
}

#[test]
fn observable_findings_carry_client_error() {
    let v = scan_json(&[]);
    for f in v["findings"].as_array().unwrap() {
        let observable = f["kind"] != "marker_without_transaction";
        assert_eq!(f["client_error"].is_string(), observable, "{f}");
    }
    let h = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "hanging_transaction")
        .unwrap();
    assert!(
        h["client_error"]
            .as_str()
            .unwrap()
            .contains("read_committed consumers stall silently")
    );
}

#[test]
fn a_file_that_is_neither_kafka_data_nor_an_archive_is_an_input_error() {
    let readme = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let out = klogscan().arg("scan").arg(&readme).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("README.md: not Kafka data"), "{err}");
    // With real data beside it, the data is still analysed and the run still exits 2.
    let out = klogscan()
        .args(["scan", "--format", "json"])
        .arg(&readme)
        .arg(sample())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["partitions"], 7);
    assert!(
        v["errors"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("README.md")
    );
}
