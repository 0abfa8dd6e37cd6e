//! `ResetConsumerGroupOffsetTest`: what `--reset-offsets --execute` writes — one offset
//! commit per partition reset (`Admin.alterConsumerGroupOffsets`), the offset chosen by
//! `ConsumerGroupService.prepareOffsetsToReset` — and what the describe reads back.

use super::*;
use crate::kafka_groupaudit_cases::commit;

/// foo-0 after `produceConsumeAndShutdown` and 100 more records: 200 records, the high
/// watermark at 200; the group committed 100 when its consumer shut down (an Empty
/// classic group, or a KIP-848 group whose member left). `resets` are the commits the
/// reset wrote after that.
fn reset(classic: bool, resets: &[i64]) -> Broker {
    let mut c = Coord::new();
    if classic {
        c.batch("g", vec![classic_group("g", 1, "range", &[("m1", &[0])])]);
        c.batch("g", vec![commit("g", "foo", 0, 100)]);
        c.batch("g", vec![classic_group("g", 2, "range", &[])]);
    } else {
        c.batch("g", consumer_group("g", "m1", 1, &[0]));
        c.batch("g", vec![commit("g", "foo", 0, 100)]);
        c.batch(
            "g",
            vec![
                (8, gm("g", "m1"), None),
                (7, gm("g", "m1"), None),
                (5, gm("g", "m1"), None),
                group_epoch("g", 2),
                target_epoch("g", 2),
            ],
        );
    }
    for &o in resets {
        c.batch("g", vec![commit("g", "foo", 0, o)]);
    }
    Broker::write(vec![data("foo", 0, 200)], &[("foo", 0, 200)], &c)
}

/// `ResetConsumerGroupOffsetTest.testResetOffsetsToCurrentOffset`,
/// `testResetOffsetsShiftPlus`, `testResetOffsetsShiftMinus` (both protocols): each reset
/// is a new commit of the same key, and the describe reads the last one — 100 (to
/// current), 150 (+50), 50 (-50) — lagging the high watermark by 100, 50, 150. Near miss:
/// the commits in the other order leave the other offset.
#[test]
fn the_last_reset_commit_is_the_committed_offset() {
    for classic in [true, false] {
        for (resets, want) in [
            (vec![100], 100),
            (vec![150], 150),
            (vec![50], 50),
            (vec![150, 50], 50),
            (vec![50, 150], 150),
        ] {
            let v = reset(classic, &resets).consumers(&[]);
            assert_eq!(
                describe(&v, "g"),
                [row("foo", 0, Some(want), Some(200), Some(200 - want))],
                "classic: {classic}, resets {resets:?}"
            );
            assert!(kinds(&v).is_empty(), "{v:#}");
        }
    }
}

/// `ResetConsumerGroupOffsetTest.testResetOffsetsToLatest`,
/// `testResetOffsetsShiftByHigherThanLatest` (both protocols) and
/// `ConsumerGroupServiceTest.testAdminRequestsForResetOffsets` (`--to-latest`): the reset
/// writes the latest offset `ListOffsets` gives under `READ_UNCOMMITTED` — the high
/// watermark, 200 — and clamps a shift past it there (`checkOffsetsRange`); the describe
/// prints no lag, and no finding. Near miss: a commit one above the log end (what no
/// reset writes: one the log lost) is `committed_offset_beyond_log_end`.
#[test]
fn a_reset_to_latest_commits_the_high_watermark() {
    for classic in [true, false] {
        let v = reset(classic, &[200]).consumers(&[]);
        assert_eq!(
            describe(&v, "g"),
            [row("foo", 0, Some(200), Some(200), Some(0))]
        );
        assert!(kinds(&v).is_empty(), "{v:#}");
        let v = reset(classic, &[201]).consumers(&[]);
        assert_eq!(
            describe(&v, "g"),
            [row("foo", 0, Some(201), Some(200), Some(-1))]
        );
        assert_eq!(kinds(&v), ["committed_offset_beyond_log_end"]);
    }
}

/// foo-0 whose log starts at 100: 100 records from offset 100 (retention deleted the
/// segments below, `segment_base` 100), or 200 records from 0 with the log start moved to
/// 100 by `DeleteRecords` (the log-start-offset checkpoint, `segment_base` 0); the group
/// committed `offset`.
fn trimmed(segment_base: i64, offset: i64) -> Broker {
    let mut p = PartitionBuilder::new("foo", 0).start_offset(segment_base);
    p.append(Batch::new(Producer::PLAIN).records((200 - segment_base) as usize));
    let mut c = Coord::new();
    c.batch("g", vec![classic_group("g", 2, "range", &[])]);
    c.batch("g", vec![commit("g", "foo", 0, offset)]);
    Broker::write_with(vec![p], &[("foo", 0, 200)], &[("foo", 0, 100)], &c)
}

/// `ResetConsumerGroupOffsetTest.testResetOffsetsToEarliest`,
/// `testResetOffsetsToEarliestOnOneTopic`, `testResetOffsetsShiftByLowerThanEarliest`: the reset writes the earliest offset
/// `ListOffsets` gives — the log start offset (`UnifiedLog.logStartOffset`: after
/// retention the first segment's base, after `DeleteRecords` the checkpointed start above
/// it) — and clamps a shift below it there; the describe lags by the whole readable log
/// and no finding says the group lost records. Near miss: a commit one below the log start
/// (what the group held before the log was trimmed) is `committed_offset_below_log_start`.
#[test]
fn a_reset_to_earliest_commits_the_log_start() {
    for segment_base in [100, 0] {
        let v = trimmed(segment_base, 100).consumers(&[]);
        assert_eq!(
            describe(&v, "g"),
            [row("foo", 0, Some(100), Some(200), Some(100))],
            "segment base {segment_base}"
        );
        assert_eq!(rows(&v)[0]["data"]["log_start_offset"], 100);
        assert!(kinds(&v).is_empty(), "{v:#}");
        let v = trimmed(segment_base, 99).consumers(&[]);
        assert_eq!(
            kinds(&v),
            ["committed_offset_below_log_start"],
            "segment base {segment_base}"
        );
    }
}

/// `ResetConsumerGroupOffsetTest.testResetOffsetsToEarliestOnTopics`,
/// `testResetOffsetsToEarliestOnTopicsAndPartitions`: a reset writes the commits of the
/// partitions in its scope only (`getPartitionsToReset`); one scoped to foo-1 leaves foo-0
/// the commit it had. Near miss: a scope of both partitions resets both.
#[test]
fn a_scoped_reset_leaves_the_other_partitions_commits() {
    for both in [false, true] {
        let mut c = Coord::new();
        c.batch("g", vec![classic_group("g", 2, "range", &[])]);
        c.batch(
            "g",
            vec![commit("g", "foo", 0, 100), commit("g", "foo", 1, 100)],
        );
        let mut resets = vec![commit("g", "foo", 1, 0)];
        if both {
            resets.push(commit("g", "foo", 0, 0));
        }
        c.batch("g", resets);
        let b = Broker::write(
            vec![data("foo", 0, 100), data("foo", 1, 100)],
            &[("foo", 0, 100), ("foo", 1, 100)],
            &c,
        );
        let foo_0 = if both { 0 } else { 100 };
        assert_eq!(
            describe(&b.consumers(&[]), "g"),
            [
                row("foo", 0, Some(foo_0), Some(100), Some(100 - foo_0)),
                row("foo", 1, Some(0), Some(100), Some(100))
            ]
        );
    }
}

/// `ResetConsumerGroupOffsetTest.testResetOffsetsExistingTopic` (`--to-offset 50
/// --execute` for `new.group`, which has no record), `testResetOffsetsNotExistingGroup`
/// (`--all-topics --to-current` for `missing.group`: it has no committed partition, so
/// nothing is reset and nothing written), `testResetOffsetsExistingTopicSelectedGroups`,
/// `testResetOffsetsExistingTopicAllGroups`, `testResetOffsetsAllTopicsAllGroups`: the
/// commits of a group the coordinator did not know create it as a *simple* classic group
/// (`OffsetMetadataManager.replay` → `getOrMaybeCreateClassicGroup`), described with its
/// rows; the groups a reset selected have the new offset, the others keep theirs; the group
/// no reset wrote for does not exist. Near miss: `missing.group` with one commit exists.
#[test]
fn a_reset_of_an_unknown_group_creates_a_simple_group() {
    for missing_committed in [false, true] {
        let mut c = Coord::new();
        for g in ["g1", "g2", "g3"] {
            c.batch(g, vec![classic_group(g, 2, "range", &[])]);
            c.batch(g, vec![commit(g, "foo", 0, 100)]);
        }
        // `--group g1 --group g2` (or all groups but g3's own later commit) to 50.
        for g in ["g1", "g2"] {
            c.batch(g, vec![commit(g, "foo", 0, 50)]);
        }
        c.batch("new.group", vec![commit("new.group", "foo", 0, 50)]);
        if missing_committed {
            c.batch("missing.group", vec![commit("missing.group", "foo", 0, 1)]);
        }
        let b = Broker::write(vec![data("foo", 0, 100)], &[("foo", 0, 100)], &c);
        let v = b.consumers(&[]);
        for g in ["g1", "g2", "new.group"] {
            assert_eq!(
                describe(&v, g),
                [row("foo", 0, Some(50), Some(100), Some(50))],
                "{g}"
            );
        }
        assert_eq!(
            describe(&v, "g3"),
            [row("foo", 0, Some(100), Some(100), Some(0))]
        );
        let groups = b.groups(&[]);
        let new = group(&groups, "new.group").unwrap();
        assert_eq!(
            (new["type"].as_str(), new["simple"].as_bool()),
            (Some("classic"), Some(true))
        );
        assert_eq!(group(&groups, "g1").unwrap()["simple"], false);
        assert_eq!(group(&groups, "missing.group").is_some(), missing_committed);
        assert_eq!(
            describe(&v, "missing.group").len(),
            usize::from(missing_committed)
        );
    }
}

/// `ResetConsumerGroupOffsetTest.testResetOffsetsToLocalDateTime`,
/// `testResetOffsetsToZonedDateTime`, `testResetOffsetsByDuration`,
/// `testResetOffsetsByDurationToEarliest`: the reset writes the offset `ListOffsets` finds
/// for the time — the first record whose timestamp is at or after it — and the describe
/// lags from there. foo-0 holds 100 records a minute apart; a time between the 40th and
/// the 41st record's gives 40. `testResetOffsetsByDurationFallbackToLatestWhenNoRecords`:
/// on an empty partition no record answers, the reset falls back to the latest offset (0):
/// a commit at the empty log's end, no finding. Near miss: a commit of 1 on the empty
/// partition is beyond its log end.
#[test]
fn a_reset_by_time_commits_the_first_offset_at_or_after_it() {
    let mut p = PartitionBuilder::new("foo", 0)
        .start_time(T)
        .time_step(60_000);
    for _ in 0..100 {
        p.append(Batch::new(Producer::PLAIN).records(1));
    }
    let mut c = Coord::new();
    c.batch("g", vec![classic_group("g", 2, "range", &[])]);
    c.batch("g", vec![commit("g", "foo", 0, 100)]);
    c.batch("g", vec![commit("g", "foo", 0, 40)]);
    c.batch("h", vec![commit("h", "bar", 0, 0)]);
    c.batch("k", vec![commit("k", "bar", 0, 1)]);
    let b = Broker::write(
        vec![p, data("bar", 0, 0)],
        &[("foo", 0, 100), ("bar", 0, 0)],
        &c,
    );
    // The empty partition's active segment, as the broker creates it (empty files).
    for ext in ["log", "index", "timeindex"] {
        let f = b
            .dir
            .path()
            .join(format!("bar-0/00000000000000000000.{ext}"));
        std::fs::write(f, b"").unwrap();
    }
    let v = b.consumers(&[]);
    assert_eq!(
        describe(&v, "g"),
        [row("foo", 0, Some(40), Some(100), Some(60))]
    );
    assert_eq!(
        describe(&v, "h"),
        [row("bar", 0, Some(0), Some(0), Some(0))]
    );
    assert_eq!(
        describe(&v, "k"),
        [row("bar", 0, Some(1), Some(0), Some(-1))]
    );
    let found: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["group"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [(
            "committed_offset_beyond_log_end".to_string(),
            "k".to_string()
        )]
    );
}
