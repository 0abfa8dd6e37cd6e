//! `kafka-cluster.sh unregister` in `duplicate_directory_id`'s remediation, against
//! `ClusterTool.execute` (argparse4j: a subcommand, then its options; each subcommand has a
//! required, mutually exclusive `--bootstrap-server`/`--bootstrap-controller`, and
//! `unregister` a required integer `--id`).

use super::{command_in, words_filled};
use crate::kafka_jbod_cases::cloned_from_broker_1;
use klogscan::finding::Kind;
use std::collections::BTreeMap;

/// The options of `ClusterTool.execute`'s subparsers (long and short names) and whether
/// each takes a value.
const OPTIONS: &[(&str, &str, bool)] = &[
    ("--bootstrap-server", "-b", true),
    ("--bootstrap-controller", "-C", true),
    ("--config", "", true),
    ("--command-config", "-c", true),
    ("--id", "-i", true),
    ("--include-fenced-brokers", "", false),
];

/// The broker id `kafka-cluster.sh unregister` unregisters, as argparse4j and
/// `ClusterTool.execute` read `words`; the parser's refusal otherwise.
fn unregister(words: &[String]) -> Result<i32, String> {
    if words.first().map(String::as_str) != Some("kafka-cluster.sh") {
        return Err(format!("another tool: {words:?}"));
    }
    let sub = words.get(1).ok_or("too few arguments")?;
    let subs = [
        "cluster-id",
        "unregister",
        "unregister-controller",
        "list-endpoints",
        "api-versions",
    ];
    if !subs.contains(&sub.as_str()) {
        return Err(format!("invalid choice: '{sub}'"));
    }
    let mut got: BTreeMap<&str, String> = BTreeMap::new();
    let mut i = 2;
    while i < words.len() {
        let w = &words[i];
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (w.as_str(), None),
        };
        let Some(&(long, _, takes)) = OPTIONS
            .iter()
            .find(|(l, s, _)| *l == name || (!s.is_empty() && *s == name))
        else {
            return Err(format!("unrecognized arguments: '{w}'"));
        };
        // `--id` belongs to the two unregister subparsers, `--include-fenced-brokers` to
        // `list-endpoints`'s.
        let own = match long {
            "--id" => sub.starts_with("unregister"),
            "--include-fenced-brokers" => sub == "list-endpoints",
            _ => true,
        };
        if !own {
            return Err(format!("unrecognized arguments: '{w}'"));
        }
        let v = if takes {
            match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    match words.get(i) {
                        Some(v) if !v.starts_with('-') || v.parse::<i64>().is_ok() => v.clone(),
                        _ => return Err(format!("argument {long}: expected one argument")),
                    }
                }
            }
        } else {
            String::new()
        };
        got.insert(long, v);
        i += 1;
    }
    let connections = ["--bootstrap-server", "--bootstrap-controller"];
    match connections.iter().filter(|c| got.contains_key(*c)).count() {
        0 => {
            return Err(
                "one of the arguments --bootstrap-server --bootstrap-controller is required".into(),
            );
        }
        1 => {}
        _ => return Err("not allowed with argument --bootstrap-server".into()),
    }
    if sub != "unregister" {
        return Err("not a command these cases model".into());
    }
    let id = got.get("--id").ok_or("argument --id is required")?;
    id.parse::<i32>()
        .map_err(|_| format!("argument --id/-i: could not convert '{id}' to Integer"))
}

/// `ClusterToolTest.testUnregister` and `testUnregisterWithBootstrapController`
/// (`unregister --bootstrap-server|--bootstrap-controller … --id N` accepted); the model
/// refuses a line without a connection, without `--id`, or with an id that is no integer.
#[test]
fn the_model_accepts_what_cluster_tool_test_runs_and_refuses_the_rest() {
    let w = |s: &str| words_filled(s, &[]);
    assert_eq!(
        unregister(&w(
            "kafka-cluster.sh unregister --bootstrap-server <broker> --id 1"
        )),
        Ok(1)
    );
    assert_eq!(
        unregister(&w(
            "kafka-cluster.sh unregister --bootstrap-controller c:9093 -i 2"
        )),
        Ok(2)
    );
    for bad in [
        "kafka-cluster.sh unregister --id 1",
        "kafka-cluster.sh unregister --bootstrap-server <broker>",
        "kafka-cluster.sh unregister --bootstrap-server <broker> --id one",
        "kafka-cluster.sh unregister -b <broker> -C c:9093 --id 1",
        "kafka-cluster.sh --bootstrap-server <broker> unregister --id 1",
    ] {
        assert!(unregister(&w(bad)).is_err(), "{bad}");
    }
}

/// `ClusterControlManagerTest.testRegisterWithDuplicateDirectoryId` as
/// `kafka_jbod_cases::a_directory_id_registered_by_another_broker_stops_the_start` builds
/// it (broker 2's `data-2` a clone of broker 1's `data`): `duplicate_directory_id`'s
/// remediation offers to unregister broker 1 with `kafka-cluster.sh unregister`; the line
/// parses and unregisters broker 1 (`ClusterToolTest.testUnregister`). Was `kafka-cluster.sh
/// unregister --id 1`, which argparse4j refuses (the subcommand's connection group is
/// required): the near miss below.
#[test]
fn the_unregister_of_a_duplicate_directory_id_is_a_command_the_tool_accepts() {
    let v = cloned_from_broker_1(|_| {});
    let found: Vec<_> = (v.verify.findings())
        .filter(|f| f.kind == Kind::DuplicateDirectoryId)
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    let rem = found[0].remediation.as_deref().unwrap_or_default();
    let cmd = command_in(rem, "kafka-cluster.sh", ")");
    assert_eq!(
        unregister(&words_filled(cmd, &[])),
        Ok(1),
        "{cmd} (in {rem})"
    );
    assert_eq!(found[0].evidence["registered_by"], 1);
    // Near miss: the line without its connection is refused.
    let bare = cmd.replace(" --bootstrap-server <broker>", "");
    assert_ne!(bare, cmd);
    assert!(unregister(&words_filled(&bare, &[])).is_err(), "{bare}");
}
