//! `kafka-consumer-groups.sh` in the consumer findings' remediations.

use super::*;

const ARGS: &[&str] = &[
    "bootstrap-server",
    "group",
    "topic",
    "timeout",
    "command-config",
    "to-offset",
    "from-file",
    "to-datetime",
    "by-duration",
    "shift-by",
];
const FLAGS: &[&str] = &[
    "all-topics",
    "list",
    "describe",
    "all-groups",
    "delete",
    "reset-offsets",
    "delete-offsets",
    "dry-run",
    "execute",
    "export",
    "to-earliest",
    "to-latest",
    "to-current",
    "members",
    "verbose",
    "offsets",
];
const SCENARIOS: &[&str] = &[
    "to-offset",
    "shift-by",
    "to-datetime",
    "by-duration",
    "to-earliest",
    "to-latest",
    "to-current",
    "from-file",
];

/// What the tool does with a command line it accepts.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    Describe {
        group: String,
    },
    Reset {
        group: String,
        partitions: Vec<(String, i32)>,
        scenario: String,
        value: Option<String>,
        execute: bool,
    },
}

/// `ConsumerGroupCommandOptions.checkArgs`, the one-action rule of
/// `ConsumerGroupCommand.run`, the reset scope of `getPartitionsToReset` and
/// `parseTopicsWithPartitions` (`topic:p1,p2`), as the tool reads `cmd`.
fn consumer_groups(cmd: &str) -> Result<Action, String> {
    let words = shell_words(cmd);
    let actions = [
        "list",
        "describe",
        "delete",
        "reset-offsets",
        "delete-offsets",
    ];
    let p = group_tool(&words, "kafka-consumer-groups.sh", (ARGS, FLAGS), &actions)?;
    if p.has("group") && p.has("all-groups") {
        return Err("--group and --all-groups".into());
    }
    if p.has("topic") && (p.has("list") || p.has("describe")) {
        return Err("--topic is not valid with --list or --describe".into());
    }
    let group = p.value("group").map(str::to_string);
    if p.has("describe") {
        return group
            .map(|group| Action::Describe { group })
            .ok_or_else(|| "--describe takes --group or --all-groups".into());
    }
    if !p.has("reset-offsets") {
        return Err("not a command these cases model".into());
    }
    if p.has("dry-run") && p.has("execute") {
        return Err("--reset-offsets only accepts one of --execute and --dry-run".into());
    }
    let group = group.ok_or("--reset-offsets takes one of --group, --all-groups")?;
    let scenarios: Vec<&&str> = SCENARIOS.iter().filter(|s| p.has(s)).collect();
    if scenarios.len() != 1 {
        return Err(format!(
            "--reset-offsets needs one scenario, got {scenarios:?}"
        ));
    }
    let scenario = scenarios[0].to_string();
    let value = p.value(&scenario).map(str::to_string);
    if matches!(scenario.as_str(), "to-offset" | "shift-by") {
        value
            .as_deref()
            .unwrap_or_default()
            .parse::<i64>()
            .map_err(|e| format!("--{scenario}: {e}"))?;
    }
    let mut partitions = Vec::new();
    for t in p.opts.get("topic").into_iter().flatten() {
        let (topic, ps) = match t.split(':').collect::<Vec<_>>()[..] {
            [topic, ps] => (topic, ps),
            _ if !t.contains(':') => return Err(format!("whole topic {t}: every partition")),
            _ => return Err(format!("Invalid topic arg '{t}'")),
        };
        for n in ps.split(',') {
            let n = n
                .parse::<i32>()
                .map_err(|_| format!("Invalid partition '{n}' in '{t}'"))?;
            partitions.push((topic.to_string(), n));
        }
    }
    if partitions.is_empty() {
        return Err("One of the reset scopes should be defined: --all-topics, --topic.".into());
    }
    Ok(Action::Reset {
        group,
        partitions,
        scenario,
        value,
        execute: p.has("execute"),
    })
}

/// The text of `s` from `start` up to and including `end` (the first after `start`).
fn between<'a>(s: &'a str, start: &str, end: &str) -> &'a str {
    let a = s.find(start).unwrap_or_else(|| panic!("{start} in {s}"));
    let b = s[a..].find(end).unwrap_or_else(|| panic!("{end} in {s}")) + a + end.len();
    &s[a..b]
}

/// Group ids Kafka accepts and a shell must not read as code or split.
const GROUPS: &[&str] = &["app", "app; touch X #", "it's", "-rf", "$(touch X)", "a b"];

/// `ResetConsumerGroupOffsetTest.testResetOffsetsToSpecificOffset` (`--to-offset N` with
/// `--dry-run`, then `--execute`) on one partition named as
/// `testResetOffsetsToEarliestOnOneTopicAndPartition` names it (`--topic topic:0`): the
/// group committed 40 on `orders`-3 (and `-orders`-3, a legal topic name starting with
/// `-`), whose log ends at 5. `committed_offset_beyond_log_end`'s remediation gives the
/// dry run and says to run it again with `--execute`: both parse, reset exactly that group
/// and partition to the log end, and a group id or topic from the data reaches the tool as
/// one argument.
#[test]
fn reset_to_the_log_end_is_a_command_the_tool_accepts() {
    for topic in ["orders", "-orders"] {
        for &group in GROUPS {
            let d = tempfile::tempdir().unwrap();
            committed(d.path(), group, (topic, 3), 40, None, None);
            let r = scan(d.path());
            let fs = of(&r, Kind::CommittedOffsetBeyondLogEnd);
            assert_eq!(fs.len(), 1, "{group:?}: {:#?}", r.findings);
            let text = fs[0].remediation.clone().unwrap_or_default();
            let dry = between(&text, "kafka-consumer-groups.sh", "--dry-run");
            assert!(
                text.contains("the same with --execute instead of --dry-run"),
                "{text}"
            );
            let execute = dry.replace("--dry-run", "--execute");
            for (cmd, exec) in [(dry, false), (execute.as_str(), true)] {
                assert_eq!(
                    consumer_groups(cmd),
                    Ok(Action::Reset {
                        group: group.to_string(),
                        partitions: vec![(topic.to_string(), 3)],
                        scenario: "to-offset".into(),
                        value: Some("5".into()),
                        execute: exec,
                    }),
                    "{cmd}"
                );
            }
        }
    }
    // A commit at the log end is no finding, so no command.
    let d = tempfile::tempdir().unwrap();
    committed(d.path(), "app", ("orders", 3), 5, None, None);
    assert!(of(&scan(d.path()), Kind::CommittedOffsetBeyondLogEnd).is_empty());
}

/// `ResetConsumerGroupOffsetTest.testResetOffsetsToEarliestOnOneTopicAndPartition`: the
/// `committed_offset_topic_id_mismatch` remediation resets the group on the partition
/// whose commit belongs to another incarnation of the topic, `--to-earliest --execute`.
#[test]
fn reset_to_earliest_for_another_incarnation_is_a_command_the_tool_accepts() {
    for &group in GROUPS {
        let d = tempfile::tempdir().unwrap();
        let earlier = topic_id_for("orders (deleted)");
        committed(d.path(), group, ("orders", 0), 3, None, Some(earlier));
        let r = scan(d.path());
        let fs = of(&r, Kind::CommittedOffsetTopicIdMismatch);
        assert_eq!(fs.len(), 1, "{group:?}: {:#?}", r.findings);
        let text = fs[0].remediation.clone().unwrap_or_default();
        let cmd = between(&text, "kafka-consumer-groups.sh", "--execute");
        assert_eq!(
            consumer_groups(cmd),
            Ok(Action::Reset {
                group: group.to_string(),
                partitions: vec![("orders".into(), 0)],
                scenario: "to-earliest".into(),
                value: None,
                execute: true,
            }),
            "{cmd}"
        );
    }
    // The commit naming the partition's own topic id: no finding.
    let d = tempfile::tempdir().unwrap();
    committed(
        d.path(),
        "app",
        ("orders", 0),
        3,
        None,
        Some(topic_id_for("orders")),
    );
    assert!(of(&scan(d.path()), Kind::CommittedOffsetTopicIdMismatch).is_empty());
}

/// `DescribeConsumerGroupTest.testDescribeOffsetsOfExistingGroup` (`--describe --group g`,
/// no `--topic`: `checkArgs` refuses `--topic` with `--describe`): the
/// `committed_offset_below_log_start` remediation's describe command.
#[test]
fn describe_of_a_group_behind_the_log_start_is_a_command_the_tool_accepts() {
    for &group in GROUPS {
        let d = tempfile::tempdir().unwrap();
        committed(d.path(), group, ("orders", 0), 1, Some(3), None);
        let r = scan(d.path());
        let fs = of(&r, Kind::CommittedOffsetBelowLogStart);
        assert_eq!(fs.len(), 1, "{group:?}: {:#?}", r.findings);
        let text = fs[0].remediation.clone().unwrap_or_default();
        let a = text.find("kafka-consumer-groups.sh").unwrap();
        let cmd = &text[a..text.rfind(')').unwrap()];
        assert_eq!(
            consumer_groups(cmd),
            Ok(Action::Describe {
                group: group.to_string()
            }),
            "{cmd}"
        );
    }
    let d = tempfile::tempdir().unwrap();
    committed(d.path(), "app", ("orders", 0), 3, Some(3), None);
    assert!(of(&scan(d.path()), Kind::CommittedOffsetBelowLogStart).is_empty());
}
