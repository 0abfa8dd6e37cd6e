//! `kafka-server-start.sh` in a damage incident's decision (`report::decision`), against
//! `bin/kafka-server-start.sh` (a first `-daemon` shifted off to `kafka-run-class.sh`, the
//! other words handed to `kafka.Kafka`) and `Kafka.getPropsFromArgs` (the first argument
//! the properties file, then jopt-simple over `--override k=v` and `--version`; any
//! non-option argument refused: "Found non argument parameters").

use super::words_filled;
use crate::kafka_tools_command_cases::{commands_of, damage_incident, damaged, jopt};

/// How the script starts the broker: in the background or not, with which properties file
/// and overrides.
#[derive(Debug, PartialEq, Eq)]
struct Start {
    daemon: bool,
    properties: String,
    overrides: Vec<String>,
}

fn server_start(words: &[String]) -> Result<Start, String> {
    if words.first().map(String::as_str) != Some("kafka-server-start.sh") {
        return Err(format!("another tool: {words:?}"));
    }
    if words.len() < 2 {
        return Err("USAGE: kafka-server-start.sh [-daemon] server.properties".into());
    }
    let daemon = words[1] == "-daemon";
    let args = &words[1 + usize::from(daemon)..];
    let Some(properties) = args.first() else {
        return Err("USAGE: java [options] kafka.Kafka server.properties".into());
    };
    if args.iter().any(|a| a == "--help" || a == "--version") || properties.starts_with('-') {
        return Err(format!("not a start: {args:?}"));
    }
    // `getPropsFromArgs` parses the words after the file; `jopt` takes the tool's name first.
    let mut rest = vec!["kafka.Kafka".to_string()];
    rest.extend(args[1..].iter().cloned());
    let p = jopt(&rest, &["override"], &["version"])
        .map_err(|e| format!("Found non argument parameters or {e}"))?;
    Ok(Start {
        daemon,
        properties: properties.clone(),
        overrides: p.opts.get("override").cloned().unwrap_or_default(),
    })
}

/// A damaged follower copy (`kafka_tools_command_cases::damaged`: broker 1's `orders`-0
/// flipped at offset 8, broker 2 intact): the decision stops broker 1, then restarts it so
/// it re-fetches from the leader. The restart line starts the broker in the background with
/// the operator's properties file and nothing else (the `# on broker 1: …` note a comment),
/// after the stop (`KafkaConfigTest.testGetKafkaConfigFromArgs`: the file, then
/// overrides). Near miss: the same line with its note not commented out is refused
/// (`testGetKafkaConfigFromArgsNonArgsAtTheEnd`: non-option words after the file).
#[test]
fn the_restart_of_a_damaged_copy_is_a_command_the_script_accepts() {
    for topic in ["orders", "-orders"] {
        let d = tempfile::tempdir().unwrap();
        let r = damaged(d.path(), "broker1", topic);
        let i = damage_incident(&r);
        let starts = commands_of(&i, "kafka-server-start.sh");
        assert_eq!(starts.len(), 1, "{:#?}", i.commands);
        let cmd = starts[0];
        let got = server_start(&words_filled(cmd, &[])).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        let want = Start {
            daemon: true,
            properties: "/etc/kafka/server.properties".into(),
            overrides: Vec::new(),
        };
        assert_eq!(got, want, "{cmd}");
        assert!(cmd.contains("# on broker 1"), "{cmd}");
        let at = |p: &str| i.commands.iter().position(|c| c.starts_with(p));
        let (stop, start) = (at("kafka-server-stop.sh"), at("kafka-server-start.sh"));
        assert!(stop.is_some() && stop < start, "{:#?}", i.commands);
        let uncommented = cmd.replacen('#', "", 1);
        assert!(
            server_start(&words_filled(&uncommented, &[])).is_err(),
            "{uncommented}"
        );
    }
}
