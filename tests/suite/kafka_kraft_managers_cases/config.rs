//! `ConfigurationControlManagerTest` and the topic-config side of topic deletion: which
//! `cleanup.policy` a topic runs under, as the metadata log's `ConfigRecord`s set it.
//!
//! Kafka's replay (`ConfigurationControlManager.replay(ConfigRecord)`, and on a broker
//! `ConfigurationsDelta`): a record with a value sets the key of its resource, one with a
//! null value removes it (back to the next scope); `RemoveTopicRecord` removes every config
//! of the topic (`ConfigurationControlManager.deleteTopicConfigs`). The broker turns the
//! topic's keys over its log defaults into a `LogConfig`, where `compact` is whether the
//! `cleanup.policy` list holds `compact` (lower-cased).

use super::*;

/// `ConfigurationControlManagerTest.testReplay`: a value sets the key, a later record of the
/// same key with a null value removes it. `cleanup.policy=compact` makes `events` compacted
/// (its sequence gap is no finding); once deleted, the topic is back to the broker default,
/// which the log does not hold: unknown (a warning).
#[test]
fn replay_sets_then_a_null_value_deletes() {
    let id = events_id();
    assert_eq!(
        verdict_of(&[vec![topic(EVENTS, id), policy(Some("compact"))]]),
        compacted()
    );
    assert_eq!(
        verdict_of(&[
            vec![topic(EVENTS, id), policy(Some("compact"))],
            vec![policy(None)],
        ]),
        unknown()
    );
    // The latest record wins, whichever way.
    assert_eq!(
        verdict_of(&[
            vec![topic(EVENTS, id), policy(Some("compact"))],
            vec![policy(Some("delete"))],
        ]),
        not_compacted()
    );
    assert_eq!(
        verdict_of(&[
            vec![topic(EVENTS, id), policy(Some("delete"))],
            vec![policy(None)],
            vec![policy(Some("compact"))],
        ]),
        compacted()
    );
}

/// A config of another key, another topic, or a broker, never decides `events`' policy
/// (`testReplay`: configs are per resource and key).
#[test]
fn other_keys_and_resources_do_not_decide() {
    let id = events_id();
    assert_eq!(
        verdict_of(&[vec![
            topic(EVENTS, id),
            topic_config(EVENTS, "retention.ms", Some("1000")),
            topic_config("other", "cleanup.policy", Some("compact")),
            broker_config("1", "cleanup.policy", Some("compact")),
        ]]),
        unknown()
    );
}

/// `ConfigurationControlManagerTest.testIncrementalAlterMultipleConfigValues` with
/// `cleanup.policy`: an APPEND writes the whole resulting list (over the default `delete`
/// when the topic had no value: `getParts`), a SUBTRACT the list left, an APPEND of a value
/// already there writes nothing. `delete,compact` is compacted; SUBTRACT `compact` leaves
/// `delete`: not compacted, the gap an error.
#[test]
fn incremental_append_and_subtract_write_the_whole_list() {
    let id = events_id();
    let appended = vec![topic(EVENTS, id), policy(Some("delete,compact"))];
    assert_eq!(verdict_of(std::slice::from_ref(&appended)), compacted());
    assert_eq!(
        verdict_of(&[appended, vec![policy(Some("delete"))]]),
        not_compacted()
    );
    // `ConfigDef`'s LIST parsing trims around the commas; `LogConfig` lower-cases.
    assert_eq!(
        verdict_of(&[vec![topic(EVENTS, id), policy(Some(" compact , delete "))]]),
        compacted()
    );
}

/// SUBTRACT of every value leaves an empty list: `ConfigurationControlManager.
/// incrementalAlterConfigResource` writes `String.join(",", …)` of what is left, the empty
/// string, which `cleanup.policy`'s `ValidList.in(compact, delete)` accepts (empty allowed).
/// The broker's `LogConfig` then holds neither policy: `compact` is false (the `LogConfig`
/// constructor; Kafka 4.x says so of tiered topics: `validateRemoteStorageRequiresDelete
/// CleanupPolicy` accepts "cleanup.policy being an empty list"). The topic is known not
/// compacted (nothing removes its data): a gap is an error (`Policy::Empty`; the audit
/// found it read as unknown).
#[test]
fn an_empty_policy_list_is_not_compacted() {
    let id = events_id();
    let (c, _, gaps) = verdict_of(&[
        vec![topic(EVENTS, id), policy(Some("delete"))],
        vec![policy(Some(""))],
    ]);
    assert_eq!((c, gaps), (Some(false), vec![Severity::Error]));
}

/// `ReplicationControlManagerTest.testDeleteTopics` / `ConfigurationControlManager.
/// deleteTopicConfigs`: deleting a topic removes its configs, so a topic created again under
/// the same name (a new topic id) starts from the broker default — unknown here — and only
/// its own later records set its policy. The directory is the new incarnation's (its
/// `partition.metadata` names the new id). Twins: the new incarnation sets `delete` (known
/// not compacted); the first one never deleted keeps `compact`.
#[test]
fn a_recreated_topic_does_not_inherit_the_deleted_ones_policy() {
    let (a, b) = (events_id(), events_id2());
    let first = vec![topic(EVENTS, a), policy(Some("compact"))];
    assert_eq!(verdict_of(std::slice::from_ref(&first)), compacted());
    assert_eq!(
        verdict_in(&[first.clone(), vec![remove(a)], vec![topic(EVENTS, b)]], b),
        unknown()
    );
    assert_eq!(
        verdict_in(
            &[
                first.clone(),
                vec![remove(a)],
                vec![topic(EVENTS, b), policy(Some("delete"))],
            ],
            b
        ),
        not_compacted()
    );
    // Deletion and creation in one batch (`testDeleteTopics` then `testCreateTopics`).
    assert_eq!(
        verdict_in(&[first, vec![remove(a), topic(EVENTS, b)]], b),
        unknown()
    );
}

/// A partition directory of the deleted incarnation (its `partition.metadata` names the old
/// topic id) holds data the broker kept under that incarnation's configs: `LogManager`
/// applies a topic's `LogConfig` to its logs while the topic lives, so the old log was
/// cleaned under `compact` and its gap is what the cleaner leaves. The policy is keyed by
/// topic id (`ClusterMetadata::incarnations`; the audit found it keyed by name, the new
/// incarnation's `delete` making the old directory's gap an error).
#[test]
fn a_directory_of_the_deleted_incarnation_keeps_its_policy() {
    let (a, b) = (events_id(), events_id2());
    let d = tempfile::tempdir().unwrap();
    let meta = meta_log(&[
        vec![topic(EVENTS, a), policy(Some("compact"))],
        vec![remove(a)],
        vec![topic(EVENTS, b), policy(Some("delete"))],
    ]);
    let ld = log_dir(d.path(), "b1", 1, Some(gap_partition()), &meta);
    set_events_id(&ld, a);
    let (c, _, gaps) = events_verdict(&scan(&[ld]));
    assert_ne!(c, Some(false), "the old incarnation was compacted");
    assert!(!gaps.contains(&Severity::Error), "{gaps:?}");
}

/// Broker-level defaults: `log.cleanup.policy` is a dynamic broker config
/// (`DynamicLogConfig.ReconfigurableConfigs`, the synonyms of every topic config,
/// `ServerTopicConfigSynonyms`), settable cluster-wide (a BROKER `ConfigRecord` with an
/// empty name). The effective topic config resolves topic value, then the node's broker
/// value, then the cluster default, then the static one (`KafkaConfigSchema.
/// resolveEffectiveTopicConfig`; on a broker `DynamicBrokerConfig`'s precedence, dynamic
/// per-broker over dynamic default over `server.properties`). With the cluster default
/// `compact` in the log and neither a topic value nor a per-broker value, the topic is
/// compacted (the audit found only topic records read: unknown, a warning).
#[test]
fn the_cluster_default_decides_a_topic_without_its_own_value() {
    let (c, _, gaps) = verdict_of(&[vec![
        topic(EVENTS, events_id()),
        broker_config("", "log.cleanup.policy", Some("compact")),
    ]]);
    assert_eq!((c, gaps), (Some(true), vec![]));
}

/// The other side of `resolveEffectiveTopicConfig`: a topic's own value beats the cluster
/// default, and a per-broker value of another broker says nothing of broker 1's log.
#[test]
fn a_topic_value_beats_the_cluster_default() {
    let id = events_id();
    assert_eq!(
        verdict_of(&[vec![
            topic(EVENTS, id),
            broker_config("", "log.cleanup.policy", Some("compact")),
            policy(Some("delete")),
        ]]),
        not_compacted()
    );
    assert_eq!(
        verdict_of(&[vec![
            topic(EVENTS, id),
            broker_config("2", "log.cleanup.policy", Some("compact")),
        ]]),
        unknown()
    );
}

/// `MetadataLoaderTest` / `SnapshotsTest`: a snapshot holds the image (here `events` with
/// `compact`), the log's batches from the snapshot's end offset on are deltas over it.
/// Snapshot alone: compacted. A delta setting `delete`: not compacted. A delta deleting the
/// topic and creating it again: unknown for the new incarnation's directory, `compact` still
/// for the old one's (its log lived under it).
#[test]
fn snapshot_then_deltas() {
    let (a, b) = (events_id(), events_id2());
    let run_in = |deltas: &[Vec<MetaRecord>], id: TopicId| {
        let mut m = MetadataLogBuilder::new(T0).start_offset(10).snapshot(
            10,
            1,
            vec![topic(EVENTS, a), policy(Some("compact"))],
        );
        for r in deltas {
            m.batch(r);
        }
        let d = tempfile::tempdir().unwrap();
        let ld = log_dir(d.path(), "b1", 1, Some(gap_partition()), &m);
        set_events_id(&ld, id);
        events_verdict(&scan(&[ld]))
    };
    let run = |deltas: &[Vec<MetaRecord>]| run_in(deltas, a);
    assert_eq!(run(&[]), compacted());
    assert_eq!(run(&[vec![policy(Some("delete"))]]), not_compacted());
    let recreated = [vec![remove(a)], vec![topic(EVENTS, b)]];
    assert_eq!(run_in(&recreated, b), unknown());
    assert_eq!(run_in(&recreated, a), compacted());
}

/// Several brokers of one cluster each keep a copy of the metadata log; a copy that
/// stopped earlier holds a prefix of the committed log. Here broker 1's copy (no data)
/// ends after `delete`; broker 2's copy — the broker holding `events-0` — goes on to
/// `compact`, which broker 2 applied (`ConfigurationControlManager.replay`: the later record
/// wins) and ran its cleaner under: the data's own broker's copy decides
/// (`Knowledge::copy_for`; the audit found the first copy in input order naming the topic
/// taken, `delete`).
#[test]
fn a_stale_copy_does_not_decide_over_the_furthest() {
    let d = tempfile::tempdir().unwrap();
    let first = vec![topic(EVENTS, events_id()), policy(Some("delete"))];
    let stale = meta_log(std::slice::from_ref(&first));
    let full = meta_log(&[first, vec![policy(Some("compact"))]]);
    let b1 = log_dir(d.path(), "a-b1", 1, None, &stale);
    let b2 = log_dir(d.path(), "b-b2", 2, Some(gap_partition()), &full);
    let (c, _, gaps) = events_verdict(&scan(&[b1, b2]));
    assert_eq!((c, gaps), (Some(true), vec![]));
}

/// The twin of [`a_stale_copy_does_not_decide_over_the_furthest`]: the copies listed the
/// other way round (the furthest first) read `compact`, as Kafka's log says.
#[test]
fn the_furthest_copy_listed_first_decides() {
    let d = tempfile::tempdir().unwrap();
    let first = vec![topic(EVENTS, events_id()), policy(Some("delete"))];
    let stale = meta_log(std::slice::from_ref(&first));
    let full = meta_log(&[first, vec![policy(Some("compact"))]]);
    let b2 = log_dir(d.path(), "a-b2", 2, Some(gap_partition()), &full);
    let b1 = log_dir(d.path(), "b-b1", 1, None, &stale);
    assert_eq!(events_verdict(&scan(&[b2, b1])), compacted());
}

/// The twins of [`an_empty_policy_list_is_not_compacted`]: the empty list is a value (it
/// beats the cluster default, as any topic value does), while a null value deletes the
/// topic's key (`ConfigurationControlManager.replay`) and the next level decides — none
/// here: unknown.
#[test]
fn an_empty_policy_is_a_value_a_null_is_none() {
    let id = events_id();
    assert_eq!(
        verdict_of(&[
            vec![topic(EVENTS, id), policy(Some("delete"))],
            vec![policy(Some(""))],
        ]),
        (
            Some(false),
            Some(
                "cleanup.policy=\"\" (empty: neither compact nor delete) (KRaft metadata log)"
                    .into()
            ),
            vec![Severity::Error]
        )
    );
    assert_eq!(
        verdict_of(&[
            vec![topic(EVENTS, id), policy(Some(""))],
            vec![policy(None)],
        ]),
        unknown()
    );
    let (c, _, gaps) = verdict_of(&[vec![
        topic(EVENTS, id),
        broker_config("", "log.cleanup.policy", Some("compact")),
        policy(Some("")),
    ]]);
    assert_eq!((c, gaps), (Some(false), vec![Severity::Error]));
}

/// The lookup by incarnation, its other sides: a directory naming an id the log never
/// created gets nothing from the log (unknown, not the name's policy); a directory without
/// a `partition.metadata` takes the name's latest incarnation (here the new one's `delete`).
#[test]
fn an_unknown_id_says_nothing_and_no_id_takes_the_latest_incarnation() {
    let (a, b) = (events_id(), events_id2());
    let batches = [
        vec![topic(EVENTS, a), policy(Some("compact"))],
        vec![remove(a)],
        vec![topic(EVENTS, b), policy(Some("delete"))],
    ];
    assert_eq!(
        verdict_in(&batches, topic_id_for("never created")),
        unknown()
    );
    let d = tempfile::tempdir().unwrap();
    let ld = log_dir(
        d.path(),
        "b1",
        1,
        Some(gap_partition()),
        &meta_log(&batches),
    );
    std::fs::remove_file(ld.join("events-0").join("partition.metadata")).unwrap();
    let (c, _, gaps) = events_verdict(&scan(&[ld]));
    assert_eq!((c, gaps), (Some(false), vec![Severity::Error]));
}

/// The levels below the topic in `resolveEffectiveTopicConfig` order: the data's own
/// broker's dynamic `log.cleanup.policy` beats the cluster default; a topic value deleted
/// (null) falls through to the cluster default; a cluster default deleted leaves unknown.
/// The compaction reason names the level that decided.
#[test]
fn the_broker_levels_in_order() {
    let id = events_id();
    assert_eq!(
        verdict_of(&[vec![
            topic(EVENTS, id),
            broker_config("", "log.cleanup.policy", Some("compact")),
            broker_config("1", "log.cleanup.policy", Some("delete")),
        ]]),
        (
            Some(false),
            Some(
                "log.cleanup.policy=delete (broker 1's dynamic config, KRaft metadata log)".into()
            ),
            vec![Severity::Error]
        )
    );
    assert_eq!(
        verdict_of(&[
            vec![topic(EVENTS, id), policy(Some("delete"))],
            vec![broker_config("", "log.cleanup.policy", Some("compact"))],
            vec![policy(None)],
        ]),
        (
            Some(true),
            Some(
                "log.cleanup.policy with compact (cluster-wide dynamic default, KRaft metadata log)"
                    .into()
            ),
            vec![]
        )
    );
    assert_eq!(
        verdict_of(&[
            vec![
                topic(EVENTS, id),
                broker_config("", "log.cleanup.policy", Some("compact")),
            ],
            vec![broker_config("", "log.cleanup.policy", None)],
        ]),
        unknown()
    );
}

/// The data's own broker's copy decides over a copy reaching further (that broker ran its
/// cleaner under the image it applied), and a copy of another cluster never decides,
/// however far it reaches: broker 1 holds `events-0` and a copy ending at `delete`.
#[test]
fn the_data_s_broker_copy_decides_and_clusters_never_mix() {
    let d = tempfile::tempdir().unwrap();
    let first = vec![topic(EVENTS, events_id()), policy(Some("delete"))];
    let stale = meta_log(std::slice::from_ref(&first));
    let full = meta_log(&[first.clone(), vec![policy(Some("compact"))]]);
    let b2 = log_dir(d.path(), "a-b2", 2, None, &full);
    let b1 = log_dir(d.path(), "b-b1", 1, Some(gap_partition()), &stale);
    assert_eq!(events_verdict(&scan(&[b2, b1.clone()])), not_compacted());
    // Without broker 1's copy, the other cluster's (further, compact) is not read: the
    // same cluster's stale copy on broker 2 decides.
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("b1");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(gap_partition())
        .write(&data)
        .unwrap();
    let b2 = log_dir(d.path(), "b2", 2, None, &stale);
    let mut other = meta_log(std::slice::from_ref(&first));
    other.raft_epoch(5);
    other.batch(&[policy(Some("compact"))]);
    let c2 = d.path().join("c2-b3");
    LogDirBuilder::new(3).cluster_id("c2").write(&c2).unwrap();
    other.write(&c2).unwrap();
    assert_eq!(events_verdict(&scan(&[c2, data, b2])), not_compacted());
}

/// The furthest copy is by KRaft epoch first (`OffsetAndEpoch.compareTo`), then end
/// offset: a copy with fewer records at a newer epoch holds what was committed, a longer
/// tail at an older epoch was truncated by its followers.
#[test]
fn the_furthest_copy_is_by_epoch_then_offset() {
    let d = tempfile::tempdir().unwrap();
    let first = vec![topic(EVENTS, events_id()), policy(Some("delete"))];
    let mut newer = meta_log(std::slice::from_ref(&first));
    newer.raft_epoch(3);
    newer.batch(&[policy(Some("compact"))]);
    let mut longer = meta_log(std::slice::from_ref(&first));
    longer.batch(&[topic_config(EVENTS, "retention.ms", Some("1"))]);
    longer.batch(&[topic_config(EVENTS, "retention.ms", Some("2"))]);
    let data = d.path().join("b1");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(gap_partition())
        .write(&data)
        .unwrap();
    let b2 = log_dir(d.path(), "b2", 2, None, &longer);
    let b3 = log_dir(d.path(), "b3", 3, None, &newer);
    assert_eq!(events_verdict(&scan(&[data, b2, b3])), compacted());
}

/// `KafkaMetadataLog.truncateToLatestSnapshot` at the node's start: a latest snapshot at a
/// KRaft epoch above the log's latest is past the log, which is truncated fully to it
/// (`truncateFullyAndStartAt`): the snapshot alone is the image, the log's batches after
/// its end offset are gone. Here the snapshot (end 2, epoch 2) holds `compact`, the log
/// (epoch 1) sets `delete` at offset 2: compacted. The twin at the log's own epoch is not
/// past the log (its end offset is not above the log end): the delta applies, `delete`.
#[test]
fn a_snapshot_past_the_log_truncates_it() {
    let run = |snapshot_epoch: i32| {
        let mut m = MetadataLogBuilder::new(T0).snapshot(
            2,
            snapshot_epoch,
            vec![topic(EVENTS, events_id()), policy(Some("compact"))],
        );
        m.batch(&[topic(EVENTS, events_id()), policy(Some("compact"))]);
        m.batch(&[policy(Some("delete"))]);
        let d = tempfile::tempdir().unwrap();
        events_verdict(&scan(&[log_dir(
            d.path(),
            "b1",
            1,
            Some(gap_partition()),
            &m,
        )]))
    };
    assert_eq!(run(2), compacted());
    assert_eq!(run(1), not_compacted());
}
