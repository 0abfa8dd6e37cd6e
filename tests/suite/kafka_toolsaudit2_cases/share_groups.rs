//! `kafka-share-groups.sh` in the share findings' remediations, against
//! `ShareGroupCommandOptions` (Kafka 4.2 tree: `--to-offset`, `--from-file`, `--to-current`
//! and `--export` added to the reset) and `ShareGroupCommand`.

use super::{command_in, words_filled};
use crate::kafka_share_coordinator_cases::{AVAILABLE, ORDERS, STATE, Sp, log_dir, run, state_log};
use crate::kafka_tools_command_cases::group_tool;
use crate::kafka_tools_command_cases::triage_commands::kafka_topics;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};

const ARGS: &[&str] = &[
    "bootstrap-server",
    "group",
    "topic",
    "timeout",
    "command-config",
    "to-offset",
    "from-file",
    "to-datetime",
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
    "offsets",
    "verbose",
];
const SCENARIOS: &[&str] = &[
    "to-offset",
    "to-datetime",
    "to-earliest",
    "to-latest",
    "to-current",
    "from-file",
];

/// What the tool does with a command line it accepts.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    /// `--reset-offsets` of `group` on `partitions` with `scenario`, executed or planned.
    Reset {
        group: String,
        partitions: Vec<(String, i32)>,
        scenario: String,
        execute: bool,
    },
    /// `--delete-offsets` of `group` on whole `topics`.
    DeleteOffsets { group: String, topics: Vec<String> },
}

/// `ShareGroupCommandOptions.checkArgs` (the reset's and the offset deletion's rules, the
/// invalid combinations at its end), the one-action rule of `ShareGroupCommand.main` and
/// `GroupOffsetsResetter.parseTopicsWithPartitions` (`topic:p1,p2`), as the tool reads
/// `words`.
fn share_groups(words: &[String]) -> Result<Action, String> {
    let actions = [
        "list",
        "describe",
        "delete",
        "reset-offsets",
        "delete-offsets",
    ];
    let p = group_tool(words, "kafka-share-groups.sh", (ARGS, FLAGS), &actions)?;
    if p.has("group") && p.has("all-groups") {
        return Err("--group and --all-groups".into());
    }
    if p.has("topic") && (p.has("list") || p.has("describe")) {
        return Err("--topic is valid only with --delete-offsets and --reset-offsets".into());
    }
    let group = p.value("group").map(str::to_string);
    let topics: Vec<String> = p.opts.get("topic").cloned().unwrap_or_default();
    if p.has("delete-offsets") {
        let group = group.ok_or("Option [delete-offsets] takes --group and --topic")?;
        if topics.is_empty() {
            return Err("Option [delete-offsets] takes --group and --topic".into());
        }
        return Ok(Action::DeleteOffsets { group, topics });
    }
    if !p.has("reset-offsets") {
        return Err("not a command these cases model".into());
    }
    if p.has("dry-run") == p.has("execute") {
        return Err("Option [reset-offsets] takes one of --execute and --dry-run".into());
    }
    let group = group.ok_or("Option [reset-offsets] takes the option: [group]")?;
    let scopes = ["topic", "all-topics", "from-file"];
    if scopes.iter().filter(|s| p.has(s)).count() != 1 {
        return Err(
            "Option [reset-offsets] takes one of --topic, --all-topics, --from-file".into(),
        );
    }
    let scenarios: Vec<&&str> = SCENARIOS.iter().filter(|s| p.has(s)).collect();
    if scenarios.len() != 1 {
        return Err(format!("one scenario, got {scenarios:?}"));
    }
    let mut partitions = Vec::new();
    for t in &topics {
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
    Ok(Action::Reset {
        group,
        partitions,
        scenario: scenarios[0].to_string(),
        execute: p.has("execute"),
    })
}

/// `ShareGroupCommandTest.testDeleteShareGroupOffsetsArgsWithoutTopic`,
/// `…WithoutGroup`, `testResetOffsetsArgsFailureWithoutResetOffsetsArgs`,
/// `testResetOffsetsFailureWithoutTopic` and `testListWithUnrecognizedOption`: the model
/// refuses what the tool refuses, so the cases below cannot pass by a lax model.
#[test]
fn the_model_refuses_what_the_tool_refuses() {
    let w = |s: &str| words_filled(s, &[]);
    let b = "kafka-share-groups.sh --bootstrap-server <broker>";
    for bad in [
        format!("{b} --group g --delete-offsets"),
        format!("{b} --topic t --delete-offsets"),
        format!("{b} --group g --topic t:0 --reset-offsets --dry-run"),
        format!("{b} --group g --reset-offsets --to-latest --dry-run"),
        format!("{b} --group g --topic t:0 --reset-offsets --to-latest"),
        format!("{b} --group g --topic t:0 --reset-offsets --to-latest --dry-run --execute"),
        format!("{b} --list --unknown"),
        format!("{b} --group g --topic t --list"),
        "kafka-share-groups.sh --group g --topic t --delete-offsets".to_string(),
    ] {
        assert!(share_groups(&w(&bad)).is_err(), "{bad}");
    }
    let ok = format!("{b} --group g --topic t:0 --reset-offsets --to-latest --dry-run");
    assert!(share_groups(&w(&ok)).is_ok(), "{ok}");
}

/// A data partition of `topic` holding 400..600 in batches of 20 (as
/// `kafka_share_coordinator_cases::orders`, any topic name).
fn data(topic: &str, partition: i32) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition)
        .start_offset(400)
        .start_time(crate::kafka_share_coordinator_cases::T0);
    for _ in 0..10 {
        p.append(Batch::new(Producer::idempotent(7000, 0)).records(20));
    }
    p
}

fn one(fs: &[Finding], kind: Kind) -> &Finding {
    let v: Vec<&Finding> = fs.iter().filter(|f| f.kind == kind).collect();
    assert_eq!(v.len(), 1, "{kind}: {fs:#?}");
    v[0]
}

/// `ShareGroupCommandTest.testResetOffsetsToLatestSuccess` and
/// `testResetOffsetsDryRunSuccess` (`--reset-offsets --to-latest`, planned with
/// `--dry-run`, then `--execute`) on one partition as `testResetOffsetsMultipleTopicsSuccess`
/// names it (`--topic topic:0`): share group G's start on `T`-3 is 700, the log ends at 600
/// (`share_start_beyond_log_end`). The remediation's dry run, and the same with `--execute`
/// instead, parse and reset exactly G on `T`-3 to the latest, for group ids and topic names
/// (a leading `-`) a shell or the parser could misread; a group id with a newline gives a
/// placeholder. Near miss: the reset scope is the partition, never the whole topic.
#[test]
fn the_share_reset_of_a_start_past_the_log_end_is_a_command_the_tool_accepts() {
    let groups: [&'static str; 6] = ["sg", "sg'; touch X #", "-sg", "$(touch X)", "a b", "s\ng"];
    for (group, topic) in groups
        .iter()
        .map(|g| (*g, ORDERS))
        .chain([("sg", "-orders")])
    {
        let sp = Sp(group, topic, 3);
        let recs = vec![sp.snapshot((0, 2, 3), 700, &[])];
        let ld =
            log_dir(vec![data(topic, 3), state_log(0, recs)], None).high_watermark(topic, 3, 700);
        let r = run(ld);
        let f = one(&r.scan.findings, Kind::ShareStartBeyondLogEnd);
        assert_eq!((f.severity, f.offset), (Severity::Error, Some(700)));
        let rem = f.remediation.as_deref().unwrap_or_default();
        let dry = command_in(rem, "kafka-share-groups.sh", " (the log end");
        let placeholder = group.contains('\n');
        assert_eq!(
            rem.contains("<group>: the group id holds control"),
            placeholder,
            "{rem}"
        );
        let fill: &[(&str, &str)] = &[("<group>", "sg")];
        let want = |execute| Action::Reset {
            group: if placeholder { "sg" } else { group }.to_string(),
            partitions: vec![(topic.to_string(), 3)],
            scenario: "to-latest".into(),
            execute,
        };
        let got = share_groups(&words_filled(dry, fill)).unwrap_or_else(|e| panic!("{dry}: {e}"));
        assert_eq!(got, want(false), "{dry}");
        // "then the same with --execute instead of --dry-run".
        assert!(
            rem.contains("the same with --execute instead of --dry-run"),
            "{rem}"
        );
        let exec = dry.replace("--dry-run", "--execute");
        let got = share_groups(&words_filled(&exec, fill)).unwrap();
        assert_eq!(got, want(true), "{exec}");
        // "--to-earliest to read again what the log holds".
        let earliest = dry.replace("--to-latest", "--to-earliest");
        match share_groups(&words_filled(&earliest, fill)).unwrap() {
            Action::Reset { scenario, .. } => assert_eq!(scenario, "to-earliest"),
            a => panic!("{a:?}"),
        }
    }
}

/// The share partition `Sp("sg", "orders", 0)`'s state and the finding of `kind` it gives.
fn state_finding(recs: Vec<crate::kafka_share_coordinator_cases::Raw>, kind: Kind) -> Finding {
    let r = run(log_dir(
        vec![
            crate::kafka_share_coordinator_cases::orders(0, 400, 700),
            state_log(0, recs),
        ],
        None,
    ));
    one(&r.scan.findings, kind).clone()
}

/// `ShareGroupCommandTest.testDeleteShareGroupOffsets` (`--delete-offsets --group G --topic
/// T`: the tool takes whole topics; the DeleteShareGroupOffsets request names topics only,
/// and `GroupMetadataManager.sharePartitionsEligibleForOffsetDeletion` deletes the state of
/// every initialized partition of each). The state findings that advise deleting a share
/// partition's state (`share_state_batch_below_start`, `share_state_unknown_delivery_state`,
/// `share_state_epoch_fenced`) give a command the tool accepts, naming the group and the
/// topic (a placeholder: the state names it by id, and a note says how to get its name),
/// and say the deletion covers the whole topic. Was: "delete the share group's state for
/// this partition (kafka-share-groups.sh --delete-offsets …)", no group, no topic, and a
/// scope the tool does not have.
#[test]
fn the_share_state_deletion_is_a_command_the_tool_accepts_for_the_whole_topic() {
    const SP: Sp = Sp("sg", ORDERS, 0);
    let cases = [
        (
            vec![SP.snapshot((0, 0, 3), 520, &[(500, 530, AVAILABLE, 1)])],
            Kind::ShareStateBatchBelowStart,
        ),
        (
            vec![SP.snapshot((0, 2, 3), 500, &[(500, 509, 7, 1)])],
            Kind::ShareStateUnknownDeliveryState,
        ),
        (
            vec![
                SP.snapshot((2, 1, 3), 500, &[(500, 509, AVAILABLE, 1)]),
                SP.snapshot((0, 0, -1), 500, &[]),
            ],
            Kind::ShareStateEpochFenced,
        ),
    ];
    let id = uuid_text(&topic_id_for(ORDERS));
    for (recs, kind) in cases {
        let f = state_finding(recs, kind);
        assert_eq!(f.topic, STATE, "{f:#?}");
        let rem = f.remediation.as_deref().unwrap_or_default();
        let cmd = command_in(rem, "kafka-share-groups.sh", " (it takes");
        let got = share_groups(&words_filled(cmd, &[("<topic>", ORDERS)]))
            .unwrap_or_else(|e| panic!("{kind}: {cmd}: {e}"));
        let want = Action::DeleteOffsets {
            group: "sg".into(),
            topics: vec![ORDERS.into()],
        };
        assert_eq!(got, want, "{kind}: {cmd}");
        assert!(
            rem.contains("every partition of the topic"),
            "{kind}: {rem}"
        );
        assert!(!rem.contains("for this partition"), "{kind}: {rem}");
        // The note's way to the topic's name: a describe by id the tool accepts.
        let by_id = command_in(rem, "kafka-topics.sh", " gives its name");
        assert!(
            by_id.ends_with(&format!("--topic-id {id}")),
            "{kind}: {by_id}"
        );
        kafka_topics(by_id).unwrap_or_else(|e| panic!("{by_id}: {e}"));
        // Near miss: the prose the remediation was (no group, no topic) is refused.
        let old = "kafka-share-groups.sh --bootstrap-server <broker> --delete-offsets";
        assert!(share_groups(&words_filled(old, &[])).is_err());
    }
}

/// Hostile group ids in the state deletion: each reaches the tool as one `--group` value (a
/// leading `-` joined to the option), a newline gives `<group>` and a note.
#[test]
fn the_share_state_deletion_quotes_hostile_group_ids() {
    for group in ["sg'; touch X #", "-sg", "$(touch X)", "a b", "s\ng"] {
        let sp = Sp(group, ORDERS, 0);
        let recs = vec![sp.snapshot((0, 2, 3), 500, &[(500, 509, 7, 1)])];
        let f = state_finding(recs, Kind::ShareStateUnknownDeliveryState);
        let rem = f.remediation.as_deref().unwrap_or_default();
        let cmd = command_in(rem, "kafka-share-groups.sh", " (it takes");
        let placeholder = group.contains('\n');
        assert_eq!(
            rem.contains("<group>: the group id holds control"),
            placeholder,
            "{rem}"
        );
        let fill: &[(&str, &str)] = &[("<topic>", ORDERS), ("<group>", "filled")];
        let got = share_groups(&words_filled(cmd, fill)).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        let want = Action::DeleteOffsets {
            group: if placeholder { "filled" } else { group }.into(),
            topics: vec![ORDERS.into()],
        };
        assert_eq!(got, want, "{cmd}");
    }
}
