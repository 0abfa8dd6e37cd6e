//! The shell commands klogscan prints for the Kafka tools `kafka_tools_command_cases` and
//! `kafka_transactions_command_cases` do not hold against their parsers:
//!
//! * `kafka-share-groups.sh` (`ShareGroupCommandOptions.checkArgs`, the one-action rule of
//!   `ShareGroupCommand.main`, `GroupOffsetsResetter.parseTopicsWithPartitions`;
//!   `ShareGroupCommandTest`): the reset of `share_start_beyond_log_end`, the state
//!   deletion of `share_state_batch_below_start`, `share_state_unknown_delivery_state` and
//!   `share_state_epoch_fenced`;
//! * `kafka-cluster.sh` (`ClusterTool.execute`, argparse4j; `ClusterToolTest`): the
//!   `unregister` of `duplicate_directory_id`;
//! * `kafka-server-start.sh` (`bin/kafka-server-start.sh`, `Kafka.getPropsFromArgs`): the
//!   restart of a damage incident's decision;
//! * `kafka-streams-groups.sh --delete` (`StreamsGroupCommandOptions.checkArgs`,
//!   `StreamsGroupCommand.deleteGroups`; `StreamsGroupCommandTest`) in
//!   `group_tombstones_incomplete`'s remediation.
//!
//! The other tools (`kafka-delete-records.sh`, `kafka-reassign-partitions.sh`,
//! `kafka-metadata-shell.sh`, `kafka-storage.sh`) are named in klogscan's prose only, as a
//! cause or a place to look, never as a command line with arguments (docs/testing.md, the
//! section of this audit).
//!
//! Each command is split by a real `sh` (`kafka_tools_command_cases::shell_words`, after
//! the placeholders it leaves are filled) and read by a model of its tool's parser (the
//! jopt-simple model of `kafka_tools_command_cases::jopt`, or an argparse4j one here).
#![cfg(feature = "testkit")]

use crate::kafka_tools_command_cases::shell_words;

mod cluster_tool;
mod server_start;
mod share_groups;
mod streams_groups;

/// `cmd`'s words after `fill` placeholders are filled (`<broker>` and
/// `<server.properties>` are filled by `shell_words`).
fn words_filled(cmd: &str, fill: &[(&str, &str)]) -> Vec<String> {
    let mut c = cmd.to_string();
    for (p, v) in fill {
        c = c.replace(p, v);
    }
    shell_words(&c)
}

/// The command starting at `tool` in `text` (a remediation), up to the end of the command
/// (`end`, excluded; the end of the text when absent).
fn command_in<'a>(text: &'a str, tool: &str, end: &str) -> &'a str {
    let a = text
        .find(tool)
        .unwrap_or_else(|| panic!("no {tool} in {text}"));
    let rest = &text[a..];
    rest.find(end).map_or(rest, |b| &rest[..b])
}
