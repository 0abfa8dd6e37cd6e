//! The triage's incidents, commands and clients line.

use super::*;
use crate::finding::assign_ids;
use serde_json::json;

/// The note on the `<broker>` placeholder every kafka-transactions.sh command holds.
const BROKER_NOTE: &str =
    "<broker>: yours to fill in before running (a shell reads < and > as redirections)";

fn chain() -> Vec<Finding> {
    let mut fs = vec![
        Finding::new(
            Kind::MarkerWithoutTransaction,
            "payments",
            3,
            "abort closes nothing",
        )
        .offset(16)
        .producer(4001, 19),
        Finding::new(
            Kind::ProducerEpochRegression,
            "payments",
            3,
            "epoch 18 below 19",
        )
        .offset(21)
        .producer(4001, 18)
        .evidence(json!({"batch": {"timestamp": 1_572_948_010_013i64}})),
        Finding::new(
            Kind::ZombieWrite,
            "payments",
            3,
            "wrote after the ABORT at epoch 19",
        )
        .offset(21)
        .producer(4001, 18)
        .caused_by("producer_epoch_regression:payments-3@21:p4001")
        .evidence(json!({"batch": {"timestamp": 1_572_948_010_013i64}})),
        Finding::new(Kind::HangingTransaction, "payments", 3, "open since 21")
            .offset(21)
            .producer(4001, 18)
            .caused_by("zombie_write:payments-3@21:p4001")
            .evidence(json!({"first_batch": {"timestamp": 1_572_948_010_013i64},
                "last_stable_offset": 21, "coordinator_epoch": 7,
                "last_timestamp": 1_572_948_010_013i64, "idle_ms": 3_592_993})),
        Finding::new(Kind::SequenceGap, "orders", 0, "gap")
            .offset(5)
            .producer(9, 0),
    ];
    assign_ids(&mut fs);
    fs
}

#[test]
fn caused_by_links_make_one_incident_rooted_at_the_cause() {
    let fs = chain();
    let inc = incidents(&fs);
    assert_eq!(inc.len(), 2, "{inc:#?}");
    let pay = inc.iter().find(|i| i.partitions == ["payments-3"]).unwrap();
    assert_eq!(pay.root, "producer_epoch_regression:payments-3@21:p4001");
    assert_eq!(
        pay.follows,
        [
            "zombie_write:payments-3@21:p4001",
            "hanging_transaction:payments-3@21:p4001"
        ]
    );
    assert!(
        pay.summary
            .contains("stuck at 21 since 2019-11-05T10:00:10.013Z"),
        "{}",
        pay.summary
    );
    assert!(
        pay.commands
            .iter()
            .any(|c| c.ends_with("abort --topic payments --partition 3 --start-offset 21"))
    );
    assert!(
        pay.clients
            .iter()
            .any(|c| c.contains("InvalidProducerEpochException"))
    );
    assert!(
        pay.clients
            .iter()
            .any(|c| c.contains("stall silently at offset 21")),
        "{:?}",
        pay.clients
    );
    // The info finding at offset 16 is not linked: not part of the incident.
    assert!(!pay.follows.iter().any(|f| f.starts_with("marker_without")));
}

#[test]
fn repeats_of_a_kind_in_a_partition_are_one_incident() {
    let mut fs: Vec<Finding> = (0..30)
        .map(|k| {
            Finding::new(Kind::SequenceGap, "orders", 0, format!("gap {k}"))
                .offset(k * 10)
                .producer(9, 0)
        })
        .collect();
    fs.push(
        Finding::new(Kind::SequenceGap, "orders", 1, "gap")
            .offset(3)
            .producer(9, 0),
    );
    assign_ids(&mut fs);
    let inc = incidents(&fs);
    assert_eq!(inc.len(), 2);
    assert_eq!(inc[0].follows.len(), 29);
    assert!(
        inc[0].summary.ends_with("(and 29 more sequence_gap)"),
        "{}",
        inc[0].summary
    );
    let r = ScanReport {
        findings: fs,
        ..Default::default()
    };
    let mut out = Vec::new();
    write_summary(&r, &inc, &super::super::style::Style::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("-> 21 more"), "{text}");
}

#[test]
fn info_only_groups_are_not_incidents() {
    let mut fs = vec![Finding::new(Kind::OffsetGap, "t", 0, "gap").offset(3)];
    assign_ids(&mut fs);
    assert!(incidents(&fs).is_empty());
}

/// The tool's Duration(min) runs from LastTimestamp (`TransactionsCommand
/// .printHangingTransactions`), not from the broker-clock floor the idleness may take.
#[test]
fn find_hanging_duration_is_from_the_last_timestamp() {
    let f = Finding::new(Kind::HangingTransaction, "t", 0, "m")
        .offset(3)
        .producer(1, 0)
        .evidence(json!({"last_timestamp": 0, "reference_time_ms": 3_600_000,
            "idle_ms": 1_200_000, "broker_clock_floor_ms": 2_400_000}));
    let rows = hanging_rows(&[f]);
    assert_eq!(rows[0].duration_min, 60);
    // Without a reference time in the evidence, the idleness.
    let f = Finding::new(Kind::HangingTransaction, "t", 0, "m")
        .offset(3)
        .producer(1, 0)
        .evidence(json!({"last_timestamp": 0, "idle_ms": 1_200_000}));
    assert_eq!(hanging_rows(&[f])[0].duration_min, 20);
}

#[test]
fn find_hanging_rows_and_text() {
    let fs = chain();
    let rows = hanging_rows(&fs);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].coordinator_epoch,
            rows[0].start_offset,
            rows[0].duration_min
        ),
        (7, 21, 59)
    );
    let mut out = Vec::new();
    write_hanging(&rows, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("Topic"));
    let cols: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        cols,
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
    // Byte for byte as `ToolsUtils.prettyPrintTable` prints it: every value padded with
    // spaces to its column's width, each followed by a tab.
    assert_eq!(
        lines[1],
        "payments\t3        \t4001      \t18           \t7               \t21         \t1572948010013\t59           \t"
    );
}

/// A hanging transaction whose coordinator names a hostile transactional id, in a
/// partition directory named `topic-N` or not.
fn hanging(topic: &str, partition: i32, id: &str) -> Vec<Finding> {
    let mut fs = vec![
        Finding::new(Kind::HangingTransaction, topic, partition, "open since 21")
            .offset(21)
            .producer(4001, 18)
            .evidence(json!({"coordinator": {"verdict": "alive", "transactional_id": id}})),
    ];
    assign_ids(&mut fs);
    fs
}

#[test]
fn commands_quote_hostile_ids_for_a_posix_shell() {
    for id in ["tx1; touch FILE #", "$(touch FILE)", "`touch FILE`", "it's"] {
        let inc = incidents(&hanging("payments", 3, id));
        let describe = inc[0]
            .commands
            .iter()
            .find(|c| c.contains(" describe "))
            .unwrap();
        let quoted = crate::escape::shell_quote(id).unwrap();
        assert!(
            describe.ends_with(&format!("--transactional-id {quoted}")),
            "{describe}"
        );
        // Only the note on the operator's own placeholder: none for the id.
        assert_eq!(inc[0].notes, vec![BROKER_NOTE.to_string()]);
    }
    // A newline cannot be pasted: a placeholder and a note, never the raw id.
    let inc = incidents(&hanging("payments", 3, "tx1\ntouch FILE"));
    assert!(
        inc[0].commands.iter().all(|c| !c.contains("touch")),
        "{:?}",
        inc[0].commands
    );
    assert!(
        inc[0]
            .commands
            .iter()
            .any(|c| c.ends_with("<transactional-id>"))
    );
    assert_eq!(inc[0].notes.len(), 2, "{:?}", inc[0].notes);
    assert_eq!(inc[0].notes[1], BROKER_NOTE);
}

/// The hanging transaction's incident gives the abort for brokers before 3.0 too
/// (they have no DescribeProducers): producer id, epoch and the coordinator epoch.
#[test]
fn the_abort_is_also_given_for_brokers_before_3_0() {
    let inc = incidents(&chain());
    let old = inc[0]
        .commands
        .iter()
        .find(|c| c.contains("--producer-id"))
        .expect("an abort for older brokers");
    assert!(
        old.contains("abort --topic payments --partition 3 --producer-id 4001 --producer-epoch 18 --coordinator-epoch 7"),
        "{old}"
    );
    // Without a known coordinator epoch the tool's own floor, 0.
    let inc = incidents(&hanging("payments", 3, "tx1"));
    assert!(
        inc[0]
            .commands
            .iter()
            .any(|c| c.contains("--coordinator-epoch 0")),
        "{:?}",
        inc[0].commands
    );
}

/// A rule that says no client sees an error (a marker's epoch check: markers come
/// from the coordinator) is not overridden by the kind's table in the clients line;
/// nor does a copy no client reads give one.
#[test]
fn the_clients_line_follows_a_rule_that_said_none() {
    let mut fs = vec![
        Finding::new(
            Kind::ProducerEpochRegression,
            "payments",
            3,
            "marker epoch 3 below 4",
        )
        .offset(9)
        .producer(5, 3)
        .client_error("none: markers come from the transaction coordinator"),
    ];
    assign_ids(&mut fs);
    let inc = incidents(&fs);
    assert!(inc[0].clients.is_empty(), "{:?}", inc[0].clients);
    fs[0].client_error = None;
    let inc = incidents(&fs);
    assert_eq!(inc[0].clients.len(), 1, "{:?}", inc[0].clients);
    fs[0].source.copy = crate::finding::CopyKind::Delete;
    let inc = incidents(&fs);
    assert!(inc.is_empty() || inc[0].clients.is_empty(), "{:?}", inc);
}

#[test]
fn a_directory_not_named_topic_n_gets_placeholders_not_empty_arguments() {
    let inc = incidents(&hanging("", -1, "tx1"));
    for c in &inc[0].commands {
        assert!(!c.contains("--topic  ") && !c.contains("-1"), "{c}");
    }
    assert!(inc[0].commands[0].ends_with("--topic <topic> --partition <partition>"));
    let mut out = Vec::new();
    let r = ScanReport {
        findings: hanging("", -1, "tx1"),
        ..Default::default()
    };
    write_summary(&r, &inc, &super::super::style::Style::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("note:       <topic>, <partition>"), "{text}");
}

/// The findings of [`chain`] as found in `broker`'s live copy of cluster `cluster`.
fn on(cluster: &str, broker: i32, fs: Vec<Finding>) -> Vec<Finding> {
    fs.into_iter()
        .map(|mut f| {
            let dir = format!("/{cluster}/b{broker}/data");
            f.source = crate::finding::Source {
                cluster_id: Some(cluster.into()),
                broker_id: Some(broker),
                path: Some(format!("{dir}/{}-{}", f.topic, f.partition)),
                log_dir: Some(dir.into()),
                copy: crate::finding::CopyKind::Live,
                kraft: true,
            };
            f
        })
        .collect()
}

/// `chain` on several copies, ids assigned over the whole report.
fn report_of(copies: &[(&str, i32)]) -> Vec<Finding> {
    let mut fs: Vec<Finding> = copies
        .iter()
        .flat_map(|&(c, b)| on(c, b, chain()))
        .collect();
    assign_ids(&mut fs);
    fs
}

fn aborts(inc: &Incident) -> usize {
    inc.commands
        .iter()
        .filter(|c| c.contains(" abort ") && c.contains("--start-offset 21"))
        .count()
}

/// One hanging transaction in the leader's and a follower's live copy of `payments-3`:
/// one incident naming both brokers, its commands once (a second abort would find no open
/// transaction: the first one's marker replicates).
#[test]
fn the_same_hanging_transaction_in_two_brokers_is_one_incident() {
    let fs = report_of(&[("c1", 1), ("c1", 2)]);
    let inc = incidents(&fs);
    let pay: Vec<&Incident> = inc
        .iter()
        .filter(|i| i.summary.starts_with("payments-3"))
        .collect();
    assert_eq!(pay.len(), 1, "{inc:#?}");
    let pay = pay[0];
    assert_eq!(pay.partitions, ["payments-3 (brokers 1, 2)"]);
    assert_eq!(aborts(pay), 1, "{:?}", pay.commands);
    let old = pay.commands.iter().filter(|c| c.contains("--producer-id"));
    assert_eq!(old.count(), 1, "{:?}", pay.commands);
    assert_eq!(pay.root, "b1:producer_epoch_regression:payments-3@21:p4001");
    assert!(
        pay.follows
            .contains(&"b2:hanging_transaction:payments-3@21:p4001".to_string()),
        "{:?}",
        pay.follows
    );
    assert!(
        pay.notes[0].starts_with(
            "payments-3: the same open transaction at offset 21 in the copies of brokers 1, 2: run its abort once"
        ),
        "{:?}",
        pay.notes
    );
    // The text names the other copy's findings by their broker.
    let r = ScanReport {
        findings: fs.clone(),
        ..Default::default()
    };
    let mut out = Vec::new();
    write_summary(&r, &inc, &super::super::style::Style::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("partitions: payments-3 (brokers 1, 2)"),
        "{text}"
    );
    assert!(
        text.contains("hanging_transaction @21 (broker 2)"),
        "{text}"
    );
    // The other partition's incident says its brokers too, and stays one per copy.
    let orders: Vec<&Incident> = inc
        .iter()
        .filter(|i| i.summary.starts_with("orders-0"))
        .collect();
    assert_eq!(orders.len(), 2, "{inc:#?}");
    assert_eq!(orders[0].partitions, ["orders-0 (broker 1)"]);
    // Order and ids are the same on every run.
    let again = incidents(&fs);
    let ids = |v: &[Incident]| v.iter().map(|i| i.root.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&inc), ids(&again));
}

/// The same shape in two clusters (same broker ids, same topic): two incidents, each
/// naming its cluster.
#[test]
fn the_same_hanging_transaction_in_two_clusters_is_two_incidents() {
    let fs = report_of(&[("c1", 1), ("c1", 2), ("c2", 1), ("c2", 2)]);
    let inc = incidents(&fs);
    let pay: Vec<&Incident> = inc
        .iter()
        .filter(|i| i.summary.starts_with("payments-3"))
        .collect();
    assert_eq!(pay.len(), 2, "{inc:#?}");
    assert_eq!(pay[0].partitions, ["payments-3 (cluster c1, brokers 1, 2)"]);
    assert_eq!(pay[1].partitions, ["payments-3 (cluster c2, brokers 1, 2)"]);
    assert!(pay.iter().all(|i| aborts(i) == 1));
    // A copy of no known cluster is never joined with another.
    let mut fs = report_of(&[("c1", 1), ("c1", 2)]);
    for f in &mut fs {
        f.source.cluster_id = None;
    }
    let pay = incidents(&fs)
        .into_iter()
        .filter(|i| i.summary.starts_with("payments-3"))
        .count();
    assert_eq!(pay, 2);
}

/// A follower that differs (it holds the COMMIT the leader lacks: no hanging transaction
/// there; or another state of the same transaction) is not the same state: apart, the
/// abort given only where the transaction hangs.
#[test]
fn replicas_that_differ_stay_apart() {
    let mut fs = on("c1", 1, chain());
    let committed: Vec<Finding> = chain()
        .into_iter()
        .filter(|f| f.kind != Kind::HangingTransaction)
        .collect();
    fs.extend(on("c1", 2, committed));
    assign_ids(&mut fs);
    let inc = incidents(&fs);
    let pay: Vec<&Incident> = inc
        .iter()
        .filter(|i| i.summary.starts_with("payments-3"))
        .collect();
    assert_eq!(pay.len(), 2, "{inc:#?}");
    assert_eq!(pay[0].partitions, ["payments-3 (broker 1)"]);
    assert_eq!(pay[1].partitions, ["payments-3 (broker 2)"]);
    assert_eq!((aborts(pay[0]), aborts(pay[1])), (1, 0));
    let once = |i: &Incident| i.notes.iter().any(|n| n.contains("run its abort once"));
    assert!(!pay.iter().any(|i| once(i)));
    // The follower's copy of the transaction at another epoch: another state.
    let mut fs = report_of(&[("c1", 1), ("c1", 2)]);
    for f in fs.iter_mut().filter(|f| f.source.broker_id == Some(2)) {
        f.producer_epoch = f.producer_epoch.map(|e| e + 1);
    }
    let pay = incidents(&fs)
        .into_iter()
        .filter(|i| i.summary.starts_with("payments-3"))
        .count();
    assert_eq!(pay, 2);
    // A copy that is not live keeps its own treatment (no commands for it).
    let mut fs = report_of(&[("c1", 1), ("c1", 2)]);
    for f in fs.iter_mut().filter(|f| f.source.broker_id == Some(2)) {
        f.source.copy = crate::finding::CopyKind::Stray;
    }
    let inc = incidents(&fs);
    let pay: Vec<&Incident> = inc
        .iter()
        .filter(|i| i.summary.starts_with("payments-3"))
        .collect();
    assert_eq!(pay.len(), 2, "{inc:#?}");
    assert_eq!(aborts(pay[1]), 0, "{:?}", pay[1].commands);
}

/// One broker's report keeps plain `topic-N` names.
#[test]
fn one_broker_keeps_plain_partition_names() {
    let fs = report_of(&[("c1", 1)]);
    let inc = incidents(&fs);
    assert!(
        inc.iter().any(|i| i.partitions == ["payments-3"]),
        "{inc:#?}"
    );
    assert!(
        inc.iter()
            .flat_map(|i| &i.notes)
            .all(|n| !n.contains("run its abort once")),
        "{inc:#?}"
    );
}

/// A zombie's write is also an epoch regression: one clients line for both, saying what
/// the zombie ends in (PRODUCER_FENCED on its next AddPartitionsToTxn or EndTxn, fatal:
/// application-recoverable); an epoch regression alone stays abortable.
#[test]
fn the_clients_line_says_the_zombie_ends_fenced() {
    let inc = incidents(&chain());
    let producer: Vec<&String> = inc[0]
        .clients
        .iter()
        .filter(|c| c.starts_with("producer writes"))
        .collect();
    assert_eq!(producer.len(), 1, "{:?}", inc[0].clients);
    assert!(
        producer[0].ends_with(
            "refuses with InvalidProducerEpochException; the producer then meets ProducerFencedException (application-recoverable)"
        ),
        "{}",
        producer[0]
    );
    let alone: Vec<Finding> = chain()
        .into_iter()
        .filter(|f| f.kind == Kind::ProducerEpochRegression)
        .collect();
    let inc = incidents(&alone);
    assert!(
        inc[0].clients[0].ends_with("InvalidProducerEpochException (producer-abortable)"),
        "{:?}",
        inc[0].clients
    );
}

/// A TV2 zombie one epoch below an ABORT (the replay's `timeout_abort_possible`): the
/// clients line adds the timeout-abort reading, under which the producer goes on; a zombie
/// without it (TV0/1, or the version unknown) does not (the test above). The line follows
/// the typed evidence, not the client text: the TV2 text alone adds nothing.
#[test]
fn the_clients_line_of_a_tv2_zombie_names_the_timeout_abort_too() {
    let mut text_only = chain();
    for f in text_only.iter_mut().filter(|f| f.kind == Kind::ZombieWrite) {
        f.client_error = Some(crate::partition::state::text::CLIENT_ZOMBIE_TV2.to_string());
    }
    let inc = incidents(&text_only);
    assert!(
        !inc[0]
            .clients
            .iter()
            .any(|c| c.contains("unless the coordinator aborted")),
        "{:?}",
        inc[0].clients
    );
    let mut fs = chain();
    for f in fs.iter_mut().filter(|f| f.kind == Kind::ZombieWrite) {
        use crate::finding::evidence::{self, ZombieJoint};
        let marker = evidence::read::<ZombieJoint>(f).marker;
        let joint = ZombieJoint {
            marker,
            timeout_abort_possible: true,
        };
        evidence::merge(&mut f.evidence, &joint);
    }
    let inc = incidents(&fs);
    let producer: Vec<&String> = inc[0]
        .clients
        .iter()
        .filter(|c| c.starts_with("producer writes"))
        .collect();
    assert_eq!(producer.len(), 1, "{:?}", inc[0].clients);
    assert!(
        producer[0].contains("then meets ProducerFencedException (application-recoverable) — unless the coordinator aborted its transaction on timeout (transaction version 2)"),
        "{}",
        producer[0]
    );
    assert!(
        producer[0].ends_with("it goes on (producer-abortable)"),
        "{}",
        producer[0]
    );
    let fenced = incidents(&chain());
    assert!(
        fenced[0].clients.iter().all(|c| !c.contains("timeout")),
        "{:?}",
        fenced[0].clients
    );
}

/// `verify`'s prediction that the copy's next start forgets the transaction (a
/// `snapshot_mismatch` listing it in `evidence.open`) adds a note to its incident; the
/// abort stays. Not for a mismatch of another copy, nor for one about a snapshot's fields.
#[test]
fn an_incident_says_to_abort_before_a_restart_that_forgets_the_transaction() {
    let forgets = |broker: i32, evidence: serde_json::Value| {
        let f = Finding::new(
            Kind::SnapshotMismatch,
            "payments",
            3,
            "no producer snapshot",
        )
        .offset(21)
        .evidence(evidence);
        on("c1", broker, vec![f]).remove(0)
    };
    let open = json!({"open": [{"producer_id": 4001, "producer_epoch": 18,
        "first_offset": 21, "last_timestamp": 0}]});
    let note = "Broker 1 forgets this transaction at its next start";
    for (mismatch, noted) in [
        (forgets(1, open.clone()), true),
        (forgets(2, open), false),
        (
            forgets(1, json!({"snapshot_offset": 30, "differences": []})),
            false,
        ),
    ] {
        let mut fs = on("c1", 1, chain());
        fs.push(mismatch);
        assign_ids(&mut fs);
        let inc = incidents(&fs);
        let pay = inc
            .iter()
            .find(|i| i.summary.starts_with("payments-3"))
            .unwrap();
        assert_eq!(aborts(pay), 1, "{:?}", pay.commands);
        assert_eq!(
            pay.notes.iter().any(|n| n.starts_with(note)),
            noted,
            "{:?}",
            pay.notes
        );
    }
}
