//! The shell commands klogscan tells an operator to run (a finding's `remediation`, an
//! incident's `commands`), other than `kafka-transactions.sh`
//! (`kafka_transactions_command_cases`), held against the option parsers of the tools they
//! name and the tests of those parsers:
//!
//! * `kafka-consumer-groups.sh` (`ConsumerGroupCommandOptions.checkArgs`,
//!   `ConsumerGroupCommand.ConsumerGroupService.parseTopicsWithPartitions`;
//!   `ResetConsumerGroupOffsetTest`, `DescribeConsumerGroupTest`);
//! * `kafka-topics.sh` (`TopicCommand.doGetTopics` with `TopicFilter.IncludeList`;
//!   `TopicCommandTest`, `TopicFilterTest`);
//! * `kafka-log-dirs.sh` (`LogDirsCommand.LogDirsCommandOptions`; `LogDirsCommandTest`);
//! * `kafka-dump-log.sh` (`DumpLogSegments.DumpLogSegmentsOptions`; `DumpLogSegmentsTest`);
//! * `kafka-server-stop.sh` (`bin/kafka-server-stop.sh`).
//!
//! Each scenario is written with the testkit, scanned, and the command klogscan prints is
//! split into words by a real POSIX shell (`sh -c 'printf …'`, after the `<broker>`-style
//! placeholders an operator fills in are filled) and fed to a small model of the tool's
//! parser (jopt-simple: `--name value` or `--name=value`, a separate word starting with `-`
//! is never an option's value, an unknown option is refused).
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::report::triage::{Incident, incidents};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::files::{LogDirBuilder, topic_id_for, uuid_text};
use klogscan::testkit::group_scenarios::GroupLog;
use klogscan::testkit::scenario::{
    Batch, DEFAULT_START_MS, FaultKind, PartitionBuilder, Producer, Target,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

mod consumer_groups;
pub(crate) mod triage_commands;

// ---------------------------------------------------------------------------------------
// Shell words and a jopt-simple model.
// ---------------------------------------------------------------------------------------

/// The words a POSIX shell makes of `cmd` (placeholders an operator fills in filled first;
/// a `# comment` is dropped by the shell). Panics when the shell creates a file or fails.
pub(crate) fn shell_words(cmd: &str) -> Vec<String> {
    let filled = cmd
        .replace("<broker>", "localhost:9092")
        .replace("<server.properties>", "/etc/kafka/server.properties");
    assert!(
        !filled.contains(" <") && !filled.contains("> "),
        "a placeholder is left in {cmd}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(format!("printf '%s\\0' {filled}"))
        .output()
        .expect("sh runs");
    assert!(out.status.success(), "{cmd}: {out:?}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "{cmd} created a file"
    );
    out.stdout
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8(w.to_vec()).unwrap())
        .collect()
}

/// The options of one invocation, as jopt-simple parses them: each option with its values
/// (an empty list for a flag).
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub(crate) tool: String,
    pub(crate) opts: BTreeMap<String, Vec<String>>,
}

impl Parsed {
    pub(crate) fn has(&self, name: &str) -> bool {
        self.opts.contains_key(name)
    }

    pub(crate) fn value(&self, name: &str) -> Option<&str> {
        self.opts
            .get(name)
            .and_then(|v| v.first())
            .map(String::as_str)
    }
}

/// The checks every group tool (`kafka-consumer-groups.sh`, `kafka-share-groups.sh`,
/// `kafka-streams-groups.sh`) makes first: the tool itself, the required `--bootstrap-server`
/// and exactly one of its `actions` (each tool's `checkArgs` and one-action rule).
pub(crate) fn group_tool(
    words: &[String],
    tool: &str,
    (with_arg, flags): (&[&str], &[&str]),
    actions: &[&str],
) -> Result<Parsed, String> {
    let p = jopt(words, with_arg, flags)?;
    if p.tool != tool {
        return Err(format!("another tool: {}", p.tool));
    }
    if !p.has("bootstrap-server") {
        return Err("Missing required argument \"[bootstrap-server]\"".into());
    }
    if actions.iter().filter(|a| p.has(a)).count() != 1 {
        return Err("Command must include exactly one action".into());
    }
    Ok(p)
}

/// jopt-simple's reading of `words` (the tool first): `with_arg` options take a required
/// argument (`--name=value`, or the next word unless it looks like an option), `flags` take
/// none; anything else starting with `-` is an unrecognized option. A non-option word is
/// refused too (none of klogscan's commands means to pass one: one would be a value split
/// in two by the shell).
pub(crate) fn jopt(words: &[String], with_arg: &[&str], flags: &[&str]) -> Result<Parsed, String> {
    let mut p = Parsed {
        tool: words.first().cloned().unwrap_or_default(),
        ..Parsed::default()
    };
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        let Some(body) = w.strip_prefix("--") else {
            return Err(format!("non-option argument {w:?}"));
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if with_arg.contains(&name) {
            let v = match inline {
                Some(v) => v,
                None => {
                    let next = words.get(i + 1).cloned();
                    match next {
                        Some(n) if !n.starts_with('-') || n.parse::<i64>().is_ok() => {
                            i += 1;
                            n
                        }
                        _ => return Err(format!("Option {name} requires an argument")),
                    }
                }
            };
            p.opts.entry(name.to_string()).or_default().push(v);
        } else if flags.contains(&name) {
            if inline.is_some() {
                return Err(format!("Option {name} does not take an argument"));
            }
            p.opts.entry(name.to_string()).or_default();
        } else {
            return Err(format!("{name} is not a recognized option"));
        }
        i += 1;
    }
    Ok(p)
}

// ---------------------------------------------------------------------------------------
// Scenarios.
// ---------------------------------------------------------------------------------------

fn scan(root: &Path) -> ScanReport {
    klogscan::pipeline::scan(&[root.to_path_buf()], &ScanOptions::default())
}

fn of(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// Where `group` lives with 50 `__consumer_offsets` partitions (`Utils.abs(hashCode) % 50`).
fn offsets_partition(group: &str) -> i32 {
    let h = group
        .encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (if h == i32::MIN { 0 } else { h.abs() }) % 50
}

/// An offset commit of `group` on `topic`-`partition` (value version 1, or 4 naming
/// `topic_id`).
fn commit(
    group: &str,
    topic: &str,
    partition: i32,
    offset: i64,
    topic_id: Option<[u8; 16]>,
) -> (i16, Value, Option<(i16, Value)>) {
    let key = json!({"group": group, "topic": topic, "partition": partition});
    let value = match topic_id {
        None => (
            1,
            json!({"offset": offset, "metadata": "", "commitTimestamp": DEFAULT_START_MS, "expireTimestamp": -1}),
        ),
        Some(id) => (
            4,
            json!({"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": DEFAULT_START_MS, "topicId": uuid_text(&id)}),
        ),
    };
    (1, key, Some(value))
}

/// Broker 1: `topic`-`partition` holding 5 plain records (log end 5, log start
/// `log_start` when given), and `group`'s commit of `offset` in its `__consumer_offsets`
/// partition (naming `topic_id` when given).
fn committed(
    root: &Path,
    group: &str,
    (topic, partition): (&str, i32),
    offset: i64,
    log_start: Option<i64>,
    topic_id: Option<[u8; 16]>,
) {
    let mut p = PartitionBuilder::new(topic, partition);
    p.append(Batch::new(Producer::PLAIN).records(5));
    let mut b = LogDirBuilder::new(1).cluster_id("c1").clean_shutdown(true);
    if let Some(s) = log_start {
        b = b.log_start_offset(topic, partition, s);
    }
    if offset > 5 {
        // A commit beyond the log end: the copy's high-watermark checkpoint says it held
        // what the group read (else it may be a follower behind, an info finding).
        b = b.high_watermark(topic, partition, offset);
    }
    b.partition(p).write(root).unwrap();
    let mut log = GroupLog::new();
    log.batch(vec![commit(group, topic, partition, offset, topic_id)]);
    log.write(root, offsets_partition(group)).unwrap();
}

/// `orders`-style damage: `topic`-0 with 10 batches of 2 records, segments at 0 and 8, a
/// byte of offset 8's batch flipped (recovery truncates there), on broker 1 (unclean
/// shutdown, high watermark 16) under `root/<dir>`; broker 2 holds an intact copy under
/// `root/broker2`.
pub(crate) fn damaged(root: &Path, dir: &str, topic: &str) -> ScanReport {
    let build = |damage: bool| {
        let mut p = PartitionBuilder::new(topic, 0).leader_epoch(3);
        for i in 0..10 {
            p.append(Batch::new(Producer::PLAIN).values([format!("v-{i}a"), format!("v-{i}b")]));
            if i == 3 {
                p.roll();
            }
        }
        if damage {
            p.fault(
                Target::LastLog,
                FaultKind::FlipByte {
                    position: 70,
                    mask: 0x20,
                },
            );
        }
        p
    };
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .clean_shutdown(false)
        .high_watermark(topic, 0, 16)
        .partition(build(true))
        .write(&root.join(dir))
        .unwrap();
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(build(false))
        .write(&root.join("broker2"))
        .unwrap();
    scan(root)
}

pub(crate) fn damage_incident(r: &ScanReport) -> Incident {
    incidents(&r.findings)
        .into_iter()
        .find(|i| {
            i.members
                .iter()
                .any(|&m| r.findings[m].kind == Kind::CrcMismatch)
        })
        .unwrap_or_else(|| panic!("no damage incident in {:#?}", r.findings))
}

/// The incident's commands running `tool`.
pub(crate) fn commands_of<'a>(i: &'a Incident, tool: &str) -> Vec<&'a String> {
    i.commands
        .iter()
        .filter(|c| c.starts_with(&format!("{tool} ")) || **c == tool)
        .collect()
}
