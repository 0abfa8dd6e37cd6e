//! The commands of a damage incident's decision (`report::decision`): `kafka-topics.sh`,
//! `kafka-server-stop.sh`, `kafka-dump-log.sh`, `kafka-log-dirs.sh`.

use super::*;

/// `TopicCommand.TopicCommandOptions` as far as a describe goes: the options klogscan uses
/// and the checks on them (`--bootstrap-server`, exactly one action, and
/// `--under-replicated-partitions` only with `--describe`). Returns the `--topic` value.
pub(crate) fn kafka_topics(cmd: &str) -> Result<Option<String>, String> {
    let words = shell_words(cmd);
    let p = jopt(
        &words,
        &["bootstrap-server", "command-config", "topic", "topic-id"],
        &[
            "describe",
            "list",
            "create",
            "alter",
            "delete",
            "under-replicated-partitions",
            "unavailable-partitions",
            "exclude-internal",
        ],
    )?;
    if p.tool != "kafka-topics.sh" {
        return Err(format!("another tool: {}", p.tool));
    }
    if !p.has("bootstrap-server") {
        return Err("Missing required argument \"[bootstrap-server]\"".into());
    }
    let actions = ["create", "list", "alter", "describe", "delete"];
    if actions.iter().filter(|a| p.has(a)).count() != 1 {
        return Err("Command must include exactly one action".into());
    }
    if p.has("under-replicated-partitions") && !p.has("describe") {
        return Err("--under-replicated-partitions is only valid with --describe".into());
    }
    Ok(p.value("topic").map(str::to_string))
}

/// `TopicFilter.IncludeList.isTopicAllowed` for a value made of legal topic characters:
/// a Java regex matched against the whole name, where only `.` is special (any character)
/// and `\.` is a literal dot.
fn include_list_allows(value: &str, topic: &str) -> bool {
    let mut pat = Vec::new();
    let mut it = value.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => pat.push(Some(it.next().unwrap())),
            '.' => pat.push(None),
            c => pat.push(Some(c)),
        }
    }
    let t: Vec<char> = topic.chars().collect();
    pat.len() == t.len() && pat.iter().zip(&t).all(|(p, c)| p.is_none_or(|p| p == *c))
}

/// `TopicCommandTest.testDescribe` and `testDescribeUnderReplicatedPartitions`: the
/// decision's `kafka-topics.sh --describe [--under-replicated-partitions] --topic T`
/// commands parse, and the `--topic` value (an include list, `TopicFilterTest.
/// testIncludeLists`) selects the damaged topic and none of its neighbours.
#[test]
fn topic_describe_commands_are_accepted_and_select_the_topic() {
    for topic in ["orders", "-orders"] {
        let d = tempfile::tempdir().unwrap();
        let r = damaged(d.path(), "broker1", topic);
        let i = damage_incident(&r);
        let cmds = commands_of(&i, "kafka-topics.sh");
        assert!(cmds.len() >= 2, "{:#?}", i.commands);
        assert!(
            cmds.iter()
                .any(|c| c.contains("--under-replicated-partitions")),
            "{cmds:#?}"
        );
        for c in cmds {
            let t = kafka_topics(c).unwrap_or_else(|e| panic!("{c}: {e}"));
            let t = t.unwrap_or_else(|| panic!("no --topic in {c}"));
            assert!(include_list_allows(&t, topic), "{c}");
            for other in [
                format!("{topic}-1"),
                format!("x{topic}"),
                format!("{topic}x"),
            ] {
                assert!(!include_list_allows(&t, &other), "{c} selects {other}");
            }
        }
    }
}

/// `TopicCommand.doGetTopics` filters the cluster's topics with `TopicFilter.IncludeList`
/// (`TopicFilterTest.testIncludeLists`: `included-topic.+` is a regex), matched against the
/// whole name: in `--topic orders.eu` the `.` matches any character, so the describe (and
/// the under-replicated watch "until partition 0 leaves this list") also lists
/// `orders-eu`, a legal topic that does not collide with `orders.eu` (`Topic.hasCollision`
/// compares with `.` read as `_`). The value needs its dots escaped (`'orders\.eu'`).
#[test]

fn topic_describe_of_a_dotted_name_selects_only_that_topic() {
    let d = tempfile::tempdir().unwrap();
    let r = damaged(d.path(), "broker1", "orders.eu");
    let i = damage_incident(&r);
    let cmds = commands_of(&i, "kafka-topics.sh");
    assert!(!cmds.is_empty(), "{:#?}", i.commands);
    for c in cmds {
        let t = kafka_topics(c).unwrap().unwrap();
        assert!(include_list_allows(&t, "orders.eu"), "{c}");
        assert!(
            !include_list_allows(&t, "orders-eu"),
            "{c}: --topic {t} is a regex for kafka-topics.sh and also selects orders-eu"
        );
    }
}

/// `bin/kafka-server-stop.sh` (3.7+) with `--node-id=N`: it reads the node id of each
/// running `kafka.Kafka` process from its properties file, the first line matching
/// `node.id=` (`sed -n "/node.id=/ { s/node.id=//p; q; }"`), and signals only the processes
/// whose value equals N. Returns whether a broker started with `config` is signalled.
fn stop_signals(cmd: &str, config: &str) -> bool {
    let words = shell_words(cmd);
    assert_eq!(words[0], "kafka-server-stop.sh", "{cmd}");
    let joined = words[1..].join(" ");
    let nid = joined
        .split(' ')
        .find_map(|w| w.strip_prefix("--node-id="))
        .map(str::to_string);
    let role = joined
        .split(' ')
        .find_map(|w| w.strip_prefix("--process-role="));
    let Some(nid) = nid else {
        return role.is_none();
    };
    let node_id = config.lines().find_map(|l| {
        let b = l.as_bytes();
        let at = (0..b.len().saturating_sub(7))
            .find(|&i| b[i..].starts_with(b"node") && b[i + 5..].starts_with(b"id="))?;
        Some(format!("{}{}", &l[..at], &l[at + 8..]))
    });
    node_id.as_deref() == Some(nid.as_str())
}

fn stop_commands(i: &Incident) -> Vec<&String> {
    commands_of(i, "kafka-server-stop.sh")
}

/// A KRaft log dir (`meta.properties` version 1, `node.id=1`): the broker's properties file
/// holds `node.id=1`, so `kafka-server-stop.sh --node-id=1` stops it and nothing else.
#[test]
fn server_stop_by_node_id_stops_a_kraft_broker() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    damaged(root, "broker1", "orders");
    std::fs::write(
        root.join("broker1/meta.properties"),
        "#\nversion=1\ncluster.id=c1\nnode.id=1\n",
    )
    .unwrap();
    let r = scan(root);
    let i = damage_incident(&r);
    let stops = stop_commands(&i);
    assert!(!stops.is_empty(), "{:#?}", i.commands);
    for c in stops {
        assert!(c.starts_with("kafka-server-stop.sh --node-id=1 "), "{c}");
        let config = "process.roles=broker\nnode.id=1\nlog.dirs=/data\n";
        assert!(stop_signals(c, config), "{c}");
        let other = "process.roles=broker\nnode.id=2\nlog.dirs=/data\n";
        assert!(!stop_signals(c, other), "{c} stops node 2");
    }
}

/// A ZooKeeper-mode log dir (`meta.properties` version 0, `broker.id=1`, Kafka ≤ 3.9): the
/// broker was started with `broker.id=1` and no `node.id` line, so the 3.7–3.9 script's
/// `--node-id=1` matches no process and stops nothing (it prints nothing and exits 0), while
/// klogscan's next commands move the partition directory of a broker it believes stopped.
/// Without `--node-id` the script signals every `kafka.Kafka` process of the host.
#[test]

fn server_stop_stops_a_zookeeper_mode_broker() {
    let d = tempfile::tempdir().unwrap();
    let r = damaged(d.path(), "broker1", "orders");
    let meta = std::fs::read_to_string(d.path().join("broker1/meta.properties")).unwrap();
    assert!(
        meta.contains("version=0") && meta.contains("broker.id=1"),
        "{meta}"
    );
    let i = damage_incident(&r);
    let stops = stop_commands(&i);
    assert!(!stops.is_empty(), "{:#?}", i.commands);
    let config = "broker.id=1\nzookeeper.connect=zk:2181\nlog.dirs=/data\n";
    for c in stops {
        assert!(
            stop_signals(c, config),
            "{c}: the script looks for node.id= in a ZooKeeper broker's properties ({config:?}) and stops nothing"
        );
    }
}

/// `DumpLogSegments.DumpLogSegmentsOptions`: `--files` is "the comma separated list of data
/// and index log files" (`files = valueOf(filesOpt).split(",")`), required; `--deep-iteration`
/// a flag (`DumpLogSegmentsTest.testDumpLogSegments`: `--deep-iteration --files path`).
fn dump_log_files(cmd: &str) -> Result<Vec<String>, String> {
    let words = shell_words(cmd);
    let p = jopt(
        &words,
        &["files", "max-bytes", "max-message-size"],
        &[
            "deep-iteration",
            "print-data-log",
            "cluster-metadata-decoder",
            "verify-index-only",
            "index-sanity-check",
        ],
    )?;
    if p.tool != "kafka-dump-log.sh" {
        return Err(format!("another tool: {}", p.tool));
    }
    let files = p
        .value("files")
        .ok_or("Missing required argument [files]")?;
    Ok(files.split(',').map(str::to_string).collect())
}

/// The decision's `kafka-dump-log.sh --files SEGMENT --deep-iteration` names exactly the
/// damaged segment, a path with a space included (quoted: one word).
#[test]
fn dump_log_command_names_the_damaged_segment() {
    for dir in ["broker1", "broker 1"] {
        let d = tempfile::tempdir().unwrap();
        let r = damaged(d.path(), dir, "orders");
        let i = damage_incident(&r);
        let cmds = commands_of(&i, "kafka-dump-log.sh");
        assert_eq!(cmds.len(), 1, "{:#?}", i.commands);
        let want = d
            .path()
            .join(dir)
            .join("orders-0")
            .join(format!("{:020}.log", 8));
        assert_eq!(
            dump_log_files(cmds[0]),
            Ok(vec![want.display().to_string()]),
            "{}",
            cmds[0]
        );
    }
}

/// The same with a comma in the path: quoting keeps it one shell word, but the tool splits
/// `--files` at commas and would look for two files, neither the segment. No such path is
/// passed: `<segment>` stands there, and a note says why and what to do (a broker's own
/// log dir never holds a comma, `log.dirs` being split at commas too: only an analysis
/// copy's path does).
#[test]
fn dump_log_command_names_a_segment_whose_path_holds_a_comma() {
    let d = tempfile::tempdir().unwrap();
    let r = damaged(d.path(), "broker,1", "orders");
    let i = damage_incident(&r);
    let cmds = commands_of(&i, "kafka-dump-log.sh");
    assert_eq!(cmds.len(), 1, "{:#?}", i.commands);
    assert!(
        cmds[0].starts_with("kafka-dump-log.sh --files <segment> --deep-iteration "),
        "{}",
        cmds[0]
    );
    assert!(!cmds[0].contains("broker,1"), "{}", cmds[0]);
    assert!(
        i.notes
            .iter()
            .any(|n| n.starts_with("<segment>: the segment's path holds a comma")),
        "{:#?}",
        i.notes
    );
    // klogscan reads the path whole: its own dump command names the segment.
    let other = commands_of(&i, "klogscan dump");
    assert!(!other.is_empty(), "{:#?}", i.commands);
    assert!(other.iter().all(|c| c.contains("broker,1")), "{other:#?}");
}

/// `LogDirsCommandTest.testLogDirsWithSpecificTopic`: `--bootstrap-server` and `--describe`
/// required, `--topic-list` split at commas into exact topic names (no regex). A damaged
/// `-future` copy's decision describes its topic's log dirs.
#[test]
fn log_dirs_command_of_a_future_copy_names_its_topic() {
    for topic in ["orders", "-orders", "orders.eu"] {
        let d = tempfile::tempdir().unwrap();
        damaged(d.path(), "broker1", topic);
        let live = d.path().join("broker1").join(format!("{topic}-0"));
        let future = live.with_file_name(format!(
            "{topic}-0.{}-future",
            "9f2c4a1b7d3e4f5a8b6c0d1e2f3a4b5c"
        ));
        std::fs::rename(&live, &future).unwrap();
        let r = scan(d.path());
        let i = damage_incident(&r);
        let cmds = commands_of(&i, "kafka-log-dirs.sh");
        assert_eq!(cmds.len(), 1, "{:#?}", i.commands);
        let words = shell_words(cmds[0]);
        let p = jopt(
            &words,
            &[
                "bootstrap-server",
                "command-config",
                "topic-list",
                "broker-list",
            ],
            &["describe"],
        )
        .unwrap_or_else(|e| panic!("{}: {e}", cmds[0]));
        assert!(
            p.has("bootstrap-server") && p.has("describe"),
            "{}",
            cmds[0]
        );
        let topics: Vec<&str> = p
            .value("topic-list")
            .unwrap_or_default()
            .split(',')
            .filter(|t| !t.is_empty())
            .collect();
        assert_eq!(topics, vec![topic], "{}", cmds[0]);
        assert!(
            commands_of(&i, "kafka-server-stop.sh").is_empty(),
            "no restart for a -future copy: {:#?}",
            i.commands
        );
    }
}
