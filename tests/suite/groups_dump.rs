//! `dump --offsets-decoder` in the Kafka 3.8+/4.x JSON shape (the default), its ≤3.7 text
//! switch, `--share-group-state-decoder`, and the `groups` command line.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::dump::{DumpOptions, dump_log};
use klogscan::testkit::group_scenarios as sc;
use serde_json::Value;
use std::path::Path;

pub(crate) fn dump_lines(path: &Path, opts: &DumpOptions) -> Vec<String> {
    let data = std::fs::read(path).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let s = dump_log(path, &data, opts, &mut out, &mut err).unwrap();
    assert_eq!(s.errors, 0, "{}", String::from_utf8_lossy(&err));
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

pub(crate) fn decoder() -> DumpOptions {
    DumpOptions {
        offsets_decoder: true,
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    }
}

/// Key and payload JSON of a record line.
pub(crate) fn key_payload(line: &str) -> (Value, Option<Value>) {
    let k = line.split(" key: ").nth(1).unwrap();
    let (k, p) = match k.split_once(" payload: ") {
        Some((k, p)) => (k, Some(p)),
        None => (k, None),
    };
    let p = p.map(|p| {
        if p == "<DELETE>" {
            Value::Null
        } else {
            serde_json::from_str(p).unwrap()
        }
    });
    (serde_json::from_str(k).unwrap(), p)
}

#[test]
fn every_record_type_prints_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = sc::all_types();
    log.batch(vec![(
        3,
        serde_json::json!({"groupId": "consumer-app"}),
        None,
    )]);
    log.write(dir.path(), 2).unwrap();
    let seg = dir
        .path()
        .join("__consumer_offsets-2/00000000000000000000.log");
    let mut types = std::collections::BTreeSet::new();
    let mut tombstones = 0;
    for l in dump_lines(&seg, &decoder()) {
        if !l.starts_with("| offset: ") {
            continue;
        }
        let (k, p) = key_payload(&l);
        types.insert(k["type"].as_str().unwrap().parse::<i16>().unwrap());
        match p {
            Some(Value::Null) => tombstones += 1,
            Some(p) => assert!(p["version"].is_string() && p["data"].is_object(), "{l}"),
            None => panic!("{l}"),
        }
    }
    // classic (1, 2), consumer (3, 5–8), share (10–15), streams (17, 19–23)
    let want: Vec<i16> = vec![
        1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 17, 19, 20, 21, 22, 23,
    ];
    assert_eq!(types.into_iter().collect::<Vec<_>>(), want);
    assert!(tombstones >= 7);
    // The ≤3.7 text form knows only types 0–2.
    let legacy = DumpOptions {
        legacy_decoder_text: true,
        ..decoder()
    };
    let lines = dump_lines(&seg, &legacy);
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" key: group_metadata::group=classic-app"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" key: Unknown record type 17 at offset "))
    );
}

#[test]
fn real_consumer_offsets_print_as_json_without_errors() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let mut records = 0;
    for f in crate::common::files_with_suffix(&rd.join("broker"), ".log") {
        if !f.to_string_lossy().contains("__consumer_offsets") {
            continue;
        }
        let mut control = false;
        for l in dump_lines(&f, &decoder()) {
            if l.starts_with("baseOffset: ") {
                control = l.contains("isControl: true");
            } else if l.starts_with("| offset: ") && !control {
                let (k, p) = key_payload(&l);
                assert!(matches!(k["type"].as_str(), Some("0" | "1" | "2")), "{l}");
                assert!(p.is_some(), "{l}");
                records += 1;
            }
        }
    }
    assert!(records > 3000, "{records}");
}

#[test]
fn groups_command_lists_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    sc::all_types().write(dir.path(), 4).unwrap();
    sc::streams_deleted("gone")
        .write(&dir.path().join("b2"), 4)
        .unwrap();
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["groups", "--type", "streams", "--format", "json"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let ids: Vec<&str> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["group_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["streams-app"]);
    assert_eq!(v["groups"][0]["type"], "streams");
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["groups", "--deleted"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("consumer-app") && text.contains("share-app"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("gone") && l.contains("deleted")),
        "{text}"
    );
    assert!(text.contains("5 group(s)"), "{text}");
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["groups", "--members", "--group", "consumer-app"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.lines().any(|l| l.contains("consumer-app")
            && l.contains("m1")
            && l.contains("AAAAAAAAAAAAAAAAAAAAAQ:0")),
        "{text}"
    );
    assert!(text.contains("1 member(s)"), "{text}");
    Command::cargo_bin("klogscan")
        .unwrap()
        .args(["groups", "--type", "nope"])
        .arg(dir.path())
        .assert()
        .code(2);
    let empty = tempfile::tempdir().unwrap();
    Command::cargo_bin("klogscan")
        .unwrap()
        .arg("groups")
        .arg(empty.path())
        .assert()
        .code(2);
}

#[test]
fn share_group_state_decoder() {
    use klogscan::testkit::groups::share_record;
    use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
    let key =
        serde_json::json!({"groupId": "gs1", "topicId": "Uj5wn_FqTXirEASvVZRY1w", "partition": 0});
    let (k, v) = share_record(1, key, Some((0, serde_json::json!({"stateBatches": []}))));
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("__share_group_state", 0);
    p.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::kv(&k, v.unwrap()))
            .record(Rec::tombstone(&k)),
    );
    p.write(dir.path()).unwrap();
    let seg = dir
        .path()
        .join("__share_group_state-0/00000000000000000000.log");
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["dump", "--share-group-state-decoder"])
        .arg(&seg)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r#"key: {"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}} payload: {"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":[]}}"#), "{text}");
    assert!(text.contains("payload: <DELETE>"), "{text}");
}

/// Metadata record bytes built by hand: frame 1, type, version, then the fields.
fn uuid(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}
fn cstr(out: &mut Vec<u8>, s: &str) {
    out.push(s.len() as u8 + 1);
    out.extend_from_slice(s.as_bytes());
}
fn cints(out: &mut Vec<u8>, v: &[i32]) {
    out.push(v.len() as u8 + 1);
    for x in v {
        out.extend_from_slice(&x.to_be_bytes());
    }
}

#[test]
fn cluster_metadata_decoder_matches_a_real_dump() {
    // The Strimzi KRaft-migration post's kafka-dump-log --cluster-metadata-decoder output
    // (real-data/dumps): TOPIC_RECORD v0, CONFIG_RECORD v0, PARTITION_RECORD v1.
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let text = std::fs::read_to_string(
        rd.join("dumps/strimzi__strimzi.github.io/2024-03-21-kraft-migration.dump.txt"),
    )
    .unwrap();
    let line = |offset: i64| {
        text.lines()
            .find(|l| l.starts_with(&format!("| offset: {offset} ")))
            .unwrap()
            .to_string()
    };
    let topic = "xOxBrcYuSRWgtFuZIBiXIA";
    let mut t = vec![1, 2, 0];
    cstr(&mut t, "my-topic");
    t.extend(uuid(topic));
    t.push(0);
    let mut c = vec![1, 4, 0, 2];
    cstr(&mut c, "my-topic");
    cstr(&mut c, "retention.ms");
    cstr(&mut c, "100000");
    c.push(0);
    let mut p = vec![1, 3, 1];
    p.extend_from_slice(&0i32.to_be_bytes());
    p.extend(uuid(topic));
    cints(&mut p, &[5, 3, 4]);
    cints(&mut p, &[5, 3, 4]);
    cints(&mut p, &[]);
    cints(&mut p, &[]);
    p.extend_from_slice(&5i32.to_be_bytes());
    p.extend_from_slice(&0i32.to_be_bytes());
    p.extend_from_slice(&0i32.to_be_bytes());
    p.push(4);
    for d in [
        "SaZDxfHKu3NMZ7OnFP7YnA",
        "uHY7hO6-42Q7O4k0zLMmtg",
        "p2UpbSD99eygD2ZToiSMzg",
    ] {
        p.extend(uuid(d));
    }
    p.push(0);
    for (offset, bytes) in [(3004, t), (3005, c), (3006, p)] {
        let want = line(offset);
        assert!(
            want.contains(&format!("valueSize: {} ", bytes.len())),
            "{want}"
        );
        let (k, v) = klogscan::dump::coordinator_json::metadata_record(Some(&bytes), offset);
        assert_eq!(k, None);
        assert!(
            want.ends_with(&format!("payload: {}", v.unwrap())),
            "{want}"
        );
    }
}

#[test]
fn real_cluster_metadata_decodes_without_errors() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let opts = DumpOptions {
        cluster_metadata_decoder: true,
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    };
    let mut n = 0;
    let files = crate::common::files_with_suffix(&rd.join("broker"), ".log")
        .into_iter()
        .filter(|f| f.to_string_lossy().contains("__cluster_metadata"));
    for f in files {
        for l in dump_lines(&f, &opts) {
            if l.contains(" payload: ") {
                assert!(l.contains(" payload: {\"type\":\""), "{}: {l}", f.display());
                n += 1;
            }
        }
    }
    assert!(n > 10_000, "{n}");
}
