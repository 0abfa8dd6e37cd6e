//! The worker's internal topics as a distributed Connect cluster (`group.id=connect-cluster`,
//! `exactly.once.source.support=enabled`) leaves them after months, the cleaner included.

use super::{DAY, MIN, T0, marker_at, write_and_check};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};

/// A plain batch (Connect's internal producers disable idempotence:
/// `KafkaConfigBackingStore`/`KafkaOffsetBackingStore`/`KafkaStatusBackingStore` set
/// `enable.idempotence=false`, so their batches carry no producer id) of `recs` at `ts`.
fn plain(recs: Vec<Rec>, ts: i64) -> Batch {
    let mut b = Batch::new(Producer::PLAIN).at(ts);
    for r in recs {
        b = b.record(r.at(ts));
    }
    b
}

/// One transaction of the leader's fencable config producer on `connect-configs-0`
/// (`KafkaConfigBackingStore.sendPrivileged`: `beginTransaction`, the records,
/// `commitTransaction`), its COMMIT 30 ms later unless `unmarked`.
fn privileged(b: &mut PartitionBuilder, p: Producer, recs: Vec<Rec>, ts: i64, unmarked: bool) {
    let mut batch = Batch::new(p).at(ts);
    for r in recs {
        batch = batch.record(r.at(ts));
    }
    b.append(batch);
    if !unmarked {
        marker_at(b, p, true, 0, ts + 30);
    }
}

fn task_config(conn: &str, task: i32) -> Rec {
    Rec::kv(
        format!("task-{conn}-{task}"),
        format!(
            r#"{{"properties":{{"task.class":"io.example.JdbcSourceTask","tables":"t{task}"}}}}"#
        ),
    )
}

/// `connect-configs-0` (one partition, compacted): the cleaned part — a source connector
/// `old-sink` deleted before exactly-once support was enabled (`removeConnectorConfig`: the
/// tombstones of `connector-old-sink` and `target-state-old-sink`, kept with a delete horizon
/// by the cleaner, `LogCleaner`'s `Cleaner.cleanInto` setting it on batches holding
/// tombstones), every earlier value removed — then the head: the leader's transactional
/// producer (`transactional.id` `connect-cluster-connect-cluster`:
/// `DistributedConfig.transactionalProducerId`, used by `KafkaConfigBackingStore.fencableProducerProps`)
/// writes `jdbc-src`'s connector config, its task configs with the `commit-jdbc-src` record
/// in one transaction (`putTaskConfigs`), the task-count record `tasks-fencing-jdbc-src`
/// (`putTaskCountRecord`) and the session key (`putSessionKey`); target-state writes go
/// through the plain producer (`putTargetState` uses `configLog.sendWithReceipt`). A new
/// leader (`claimWritePrivileges` → `initTransactions`: the same id, its epoch bumped by
/// `InitProducerId`) writes the next task configs. `unmarked`: the last transaction's COMMIT
/// never written.
fn configs(unmarked: bool) -> PartitionBuilder {
    let mut b = PartitionBuilder::new("connect-configs", 0);
    b.skip_offsets(41);
    let t = T0 - 30 * DAY;
    let tombs = vec![
        Rec::tombstone("connector-old-sink"),
        Rec::tombstone("target-state-old-sink"),
    ];
    b.append(plain(tombs, t).delete_horizon(t + DAY));
    b.skip_offsets(3);
    let leader = Producer::transactional(7000, 0);
    let t = T0;
    let conf = r#"{"properties":{"connector.class":"io.example.JdbcSource","tasks.max":"2"}}"#;
    privileged(
        &mut b,
        leader,
        vec![Rec::kv("connector-jdbc-src", conf)],
        t,
        false,
    );
    let state = r#"{"state":"STARTED","state.v2":"STARTED"}"#;
    b.append(plain(
        vec![Rec::kv("target-state-jdbc-src", state)],
        t + 100,
    ));
    let tasks = vec![
        task_config("jdbc-src", 0),
        task_config("jdbc-src", 1),
        Rec::kv("commit-jdbc-src", r#"{"tasks":2}"#),
    ];
    privileged(&mut b, leader, tasks, t + 2_000, false);
    let count = vec![Rec::kv("tasks-fencing-jdbc-src", r#"{"task-count":2}"#)];
    privileged(&mut b, leader, count, t + 3_000, false);
    let key = r#"{"key":"c2VjcmV0","algorithm":"HmacSHA256","creation-timestamp":1572948004000}"#;
    privileged(
        &mut b,
        leader,
        vec![Rec::kv("session-key", key)],
        t + 4_000,
        false,
    );
    // a new leader an hour later, the same transactional id one epoch up
    let leader = leader.bumped();
    let t = T0 + 60 * MIN;
    let tasks = vec![
        task_config("jdbc-src", 0),
        task_config("jdbc-src", 1),
        task_config("jdbc-src", 2),
        Rec::kv("commit-jdbc-src", r#"{"tasks":3}"#),
    ];
    privileged(&mut b, leader, tasks, t, unmarked);
    b
}

/// `connect-offsets-N` (25 partitions, compacted) of a source connector without exactly-once
/// (`file-src`: the worker's `OffsetStorageWriter` flushes every `offset.flush.interval.ms`,
/// one minute, through `KafkaOffsetBackingStore.set`'s plain producer): the cleaned part
/// keeps the latest value of each source partition, one of them in a batch whose other
/// records the cleaner removed (`MemoryRecords.filterTo` keeps the batch's base offset and
/// the records' offset deltas); an offset reset (`AbstractHerder.alterConnectorOffsets`
/// with null offsets, KIP-875) wrote a tombstone the cleaner kept with a delete horizon.
fn offsets(n: i32) -> PartitionBuilder {
    let mut b = PartitionBuilder::new("connect-offsets", n);
    b.skip_offsets(500 + n as i64);
    let t = T0 - 10 * DAY;
    let key = |f: &str| format!(r#"["file-src",{{"filename":"/var/log/{f}.log"}}]"#);
    let kept = Batch::new(Producer::PLAIN)
        .record(Rec::kv(key("a"), r#"{"position":4096}"#).at(t))
        .record(
            Rec::kv(key("b"), r#"{"position":777}"#)
                .at(t)
                .offset_delta(2),
        )
        .at(t);
    b.append(kept);
    b.skip_offsets(60);
    b.append(plain(vec![Rec::tombstone(key("c"))], t + DAY).delete_horizon(t + 2 * DAY));
    b.skip_offsets(12);
    for i in 0..20 {
        let ts = T0 + i * MIN;
        let v = format!(r#"{{"position":{}}}"#, 8192 + i * 100);
        b.append(plain(vec![Rec::kv(key("a"), v)], ts));
    }
    b
}

/// `connect-status-N` (5 partitions, compacted): connector and task states
/// (`KafkaStatusBackingStore.put`, `putSafe`, a plain producer with no retries), the active
/// topics (KIP-558, `status-topic-<topic>:connector-<name>`) and a reset of them
/// (`deleteTopic` writes the tombstone), the cleaner having run.
fn status(n: i32, until: i64) -> PartitionBuilder {
    let mut b = PartitionBuilder::new("connect-status", n);
    b.skip_offsets(200);
    let t = T0 - 5 * DAY;
    let tomb = Rec::tombstone("status-topic-legacy:connector-old-sink");
    b.append(plain(vec![tomb], t).delete_horizon(t + DAY));
    b.skip_offsets(7);
    let mut ts = T0;
    let mut generation = 7;
    while ts <= until {
        let key = format!("status-task-jdbc-src-{n}");
        let v = format!(
            r#"{{"state":"RUNNING","trace":null,"worker_id":"10.0.0.{n}:8083","generation":{generation}}}"#
        );
        b.append(plain(vec![Rec::kv(key, v)], ts));
        generation += 1;
        ts += 5 * MIN;
    }
    b
}

/// The three internal topics of a distributed worker group with exactly-once source support,
/// after the cleaner: `connect-configs-0`, `connect-offsets-{0,12,24}`,
/// `connect-status-{1,3}` (the cleaner checkpointed all of them:
/// `LogCleanerManager.updateCheckpoints`; the worker creates them compacted,
/// `TopicAdmin.NewTopicBuilder.compacted` from `KafkaBasedLog`'s topic initializers, and
/// refuses another policy, `TopicAdmin.verifyTopicCleanupPolicyOnlyCompact`). Non-transactional
/// config writes beside the leader's transactions, offsets and statuses from plain producers.
/// Workers read the config topic `read_committed` (`KafkaConfigBackingStore.setupAndCreateKafkaBasedLog`
/// with exactly-once support): nothing blocks them. Nothing at warning or above.
/// Twin: the new leader's task-config transaction never got its COMMIT (no marker while the
/// status topic goes on for 80 minutes): every worker's config consumer stalls at it —
/// `hanging_transaction` on `connect-configs-0`, an error.
#[test]
fn internal_topics_after_the_cleaner_with_transactional_config_writes() {
    for twin in [false, true] {
        let until = T0 + 140 * MIN;
        let mut ld = LogDirBuilder::new(1).partition(configs(twin));
        for n in [0, 12, 24] {
            ld = ld.partition(offsets(n));
        }
        for n in [1, 3] {
            ld = ld.partition(status(n, until));
        }
        let cleaned = [
            ("connect-configs", 0, 46),
            ("connect-offsets", 0, 576),
            ("connect-offsets", 12, 588),
            ("connect-offsets", 24, 600),
            ("connect-status", 1, 208),
            ("connect-status", 3, 208),
        ];
        let q = write_and_check(ld, &cleaned);
        if twin {
            let f = q.assert_reported(
                Kind::HangingTransaction,
                Severity::Error,
                "connect-configs",
                Some(7000),
            );
            assert_eq!(f.producer_epoch, Some(1));
        } else {
            q.assert_quiet();
            let p = &q.scan.partitions;
            assert!(p.iter().all(|p| p.compacted == Some(true)), "{p:#?}");
        }
    }
}
