//! `kafka-streams-groups.sh --delete` in `group_tombstones_incomplete`'s remediation, against
//! `StreamsGroupCommandOptions.checkArgs` and `StreamsGroupCommand.deleteGroups` (its
//! `preAdminCallChecks`: a group the listing does not hold "does not exist or is not a
//! streams group", a group not EMPTY is refused) and the coordinator the deletion reaches
//! (`CoordinatorRuntime`: a partition whose load failed answers NOT_COORDINATOR;
//! `GroupMetadataManager.validateDeleteGroup`: an unknown group GROUP_ID_NOT_FOUND).

use super::{command_in, words_filled};
use crate::kafka_quiet_streams2_cases::{APP, LEAVE, g, group_life, offsets_log, tomb};
use crate::kafka_tools_command_cases::group_tool;
use klogscan::finding::{Finding, Kind};
use klogscan::testkit::LogDirBuilder;

const ARGS: &[&str] = &[
    "bootstrap-server",
    "group",
    "input-topic",
    "timeout",
    "command-config",
    "to-offset",
    "from-file",
    "to-datetime",
    "by-duration",
    "shift-by",
    "delete-internal-topic",
];
const FLAGS: &[&str] = &[
    "all-input-topics",
    "list",
    "describe",
    "all-groups",
    "delete",
    "delete-offsets",
    "members",
    "offsets",
    "topology",
    "reset-offsets",
    "to-earliest",
    "to-latest",
    "to-current",
    "delete-all-internal-topics",
    "verbose",
    "dry-run",
    "execute",
    "export",
];

/// The group `--delete` deletes, as `StreamsGroupCommandOptions.checkArgs` and the
/// one-action rule read `words`.
fn streams_delete(words: &[String]) -> Result<String, String> {
    let actions = [
        "list",
        "describe",
        "delete",
        "delete-offsets",
        "reset-offsets",
    ];
    let p = group_tool(words, "kafka-streams-groups.sh", (ARGS, FLAGS), &actions)?;
    if !p.has("delete") {
        return Err("Command must include exactly one action: --delete here".into());
    }
    if p.has("input-topic") || p.has("all-input-topics") {
        return Err("Kafka Streams does not support topic-specific offset deletion".into());
    }
    p.value("group")
        .map(str::to_string)
        .ok_or_else(|| "Option [delete] takes one of these options: [all-groups], [group]".into())
}

fn tombstones_incomplete(
    batches: Vec<Vec<crate::kafka_quiet_streams_cases::CoordRecord>>,
) -> Finding {
    let dir = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(offsets_log(batches))
        .write(dir.path())
        .unwrap();
    let r = crate::common::quiet::scan_dir(dir.path(), false);
    let f: Vec<&Finding> = (r.findings.iter())
        .filter(|f| f.kind == Kind::GroupTombstonesIncomplete)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    f[0].clone()
}

/// `StreamsGroupCommandTest.testDeleteStreamsGroup` runs `--delete --group G` against a
/// group the coordinator holds. Here member `b`'s metadata is tombstoned before its current
/// assignment (`kafka_quiet_streams2_cases`' twin): the coordinator's load throws, the
/// partition's coordinator is FAILED and answers NOT_COORDINATOR, so the deletion the tool
/// sends never reaches the group. The remediation says so and offers no `--delete`; was
/// "delete the group again (kafka-consumer-groups.sh / kafka-streams-groups.sh --delete)",
/// which the tool cannot carry out. Near miss: the same life deleted in the coordinator's
/// order loads (no such finding: `a_streams_group_s_life_and_deletion_is_quiet`).
#[test]
fn a_tombstone_that_fails_the_load_offers_no_deletion_through_the_tools() {
    let f = tombstones_incomplete(group_life([19, 22, 21]));
    assert_eq!(f.evidence["load_fails"], true, "{}", f.evidence);
    let rem = f.remediation.as_deref().unwrap_or_default();
    assert!(!rem.contains("delete the group again"), "{rem}");
    assert!(rem.contains("NOT_COORDINATOR"), "{rem}");
    assert!(
        rem.contains("restore the partition from a healthy replica"),
        "{rem}"
    );
    // Near miss: the member's tombstones in the coordinator's order load.
    let dir = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(offsets_log(group_life(LEAVE)))
        .write(dir.path())
        .unwrap();
    let r = crate::common::quiet::scan_dir(dir.path(), false);
    assert!(
        !(r.findings.iter()).any(|f| f.kind == Kind::GroupTombstonesIncomplete),
        "{:#?}",
        r.findings
    );
}

/// The load-accepted shape: the streams group deleted without its topology tombstone (the
/// topology record stays live). After the load the group is gone: `kafka-streams-groups.sh
/// --delete --group clicks` answers "does not exist or is not a streams group"
/// (`preAdminCallChecks`, as `StreamsGroupCommandTest.testDeleteNonStreamsGroup` for a
/// group the listing does not hold as a streams group), and DeleteGroups GROUP_ID_NOT_FOUND
/// (`GroupMetadataManager.validateDeleteGroup`), until the cleaner drops the group
/// tombstone and a load rebuilds the group from the topology. klogscan says "delete the
/// group again (kafka-consumer-groups.sh / kafka-streams-groups.sh --delete)" with no
/// connection, no group, and no word of when it can run.
#[test]
#[ignore = "divergence: group_tombstones_incomplete (load accepted) advises a --delete of a group the load removed; the tool finds no group until compaction drops the tombstone (see the docs/testing.md section)"]
fn a_deleted_group_with_live_records_is_deleted_again_once_it_is_back() {
    let mut life = group_life(LEAVE);
    *life.last_mut().unwrap() = vec![tomb(20, g()), tomb(17, g())];
    let f = tombstones_incomplete(life);
    assert_eq!(f.evidence["load_fails"], false, "{}", f.evidence);
    let rem = f.remediation.as_deref().unwrap_or_default();
    let cmd = command_in(rem, "kafka-streams-groups.sh", " (");
    assert_eq!(
        streams_delete(&words_filled(cmd, &[])),
        Ok(APP.to_string()),
        "{cmd}"
    );
    assert!(
        rem.contains("GROUP_ID_NOT_FOUND") || rem.contains("does not exist"),
        "{rem}"
    );
}

/// The model accepts `StreamsGroupCommandTest.testDeleteStreamsGroup`'s line and refuses
/// what `StreamsGroupCommandOptions.checkArgs` refuses for `--delete`, or an unknown option
/// (`testListWithUnrecognizedOption`).
#[test]
fn the_streams_delete_model_refuses_what_the_tool_refuses() {
    let w = |s: &str| words_filled(s, &[]);
    let b = "kafka-streams-groups.sh --bootstrap-server <broker>";
    assert_eq!(
        streams_delete(&w(&format!("{b} --delete --group app"))),
        Ok("app".into())
    );
    for bad in [
        "kafka-streams-groups.sh --delete --group app".to_string(),
        format!("{b} --delete"),
        format!("{b} --delete --group app --input-topic t"),
        format!("{b} --delete --list --group app"),
        format!("{b} --delete --group app --unknown"),
    ] {
        assert!(streams_delete(&w(&bad)).is_err(), "{bad}");
    }
}
