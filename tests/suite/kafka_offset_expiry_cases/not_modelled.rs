//! What klogscan does not model: the expiry a running coordinator applies at the reference
//! time, and the two fields of the log it decides by beyond the commit time — a value v1's
//! explicit `expireTimestamp` and a classic group's `currentStateTimestamp`.
//!
//! A coordinator loading these bytes holds every offset (the load never expires), but its
//! first cleanup cycle (`GroupCoordinatorShard.cleanupGroupMetadata`, scheduled
//! `offsets.retention.check.interval.ms` after the load, 10 minutes by default) tombstones
//! each offset `OffsetExpirationConditionImpl.isOffsetExpired` says is expired at that time,
//! for a group whose `offsetExpirationCondition()` is present and a topic the group is not
//! subscribed to (`OffsetMetadataManager.cleanupExpiredOffsets`).

use super::*;

/// One partition `events-0` whose log starts at 100 (10 records): a commit at 40 is below
/// the log start.
fn events() -> Vec<PartitionBuilder> {
    let mut p = PartitionBuilder::new("events", 0).start_offset(100);
    p.append(Batch::new(Producer::idempotent(5, 0)).records(10));
    vec![p]
}

/// Each `(group, records)` as its own `__consumer_offsets` partition beside `events`.
fn see_groups(groups: &[(&str, Vec<Spec>)]) -> Seen {
    let dir = tempfile::tempdir().unwrap();
    let mut b = LogDirBuilder::new(1).cluster_id("c1").clean_shutdown(true);
    for p in events() {
        b = b.partition(p);
    }
    b.write(dir.path()).unwrap();
    let mut by_partition: std::collections::BTreeMap<i32, GroupLog> = Default::default();
    for (g, recs) in groups {
        by_partition
            .entry(offsets_partition(g))
            .or_default()
            .batch(recs.clone());
    }
    for (p, log) in &by_partition {
        log.write(dir.path(), *p).unwrap();
    }
    read(dir)
}

/// `group`'s `committed_offset_below_log_start` findings.
fn below_start<'a>(s: &'a Seen, group: &str) -> Vec<&'a Finding> {
    s.of(Kind::CommittedOffsetBelowLogStart)
        .into_iter()
        .filter(|f| f.evidence["group"] == group)
        .collect()
}

/// Offsets a coordinator keeps at the reference time, below the log start: each is the
/// `committed_offset_below_log_start` warning, as it should be. `ClassicGroupTest.testOffsetExpirationCondition`
/// cases 3 and 4 (a non-empty group of another protocol type has no condition; a Stable
/// consumer-protocol group never expires a subscribed topic: both kept however old) and
/// `OffsetExpirationConditionImplTest.testIsOffsetExpired` (commit time + retention not
/// reached, explicit expire timestamp not reached).
#[test]
fn offsets_a_coordinator_keeps_below_the_log_start_are_warnings() {
    let s = see_groups(&[
        (
            "active",
            vec![
                classic("active", "consumer", 3, Some(&["events"]), NOW - 9 * DAY),
                commit("active", "events", 0, 40, NOW - 8 * DAY),
            ],
        ),
        (
            "connect",
            vec![
                classic("connect", "connect", 3, Some(&["events"]), NOW - 9 * DAY),
                commit("connect", "events", 0, 40, NOW - 8 * DAY),
            ],
        ),
        ("recent", vec![commit("recent", "events", 0, 40, NOW - DAY)]),
        (
            "explicit-later",
            vec![commit_v1(
                "explicit-later",
                "events",
                0,
                40,
                NOW - 8 * DAY,
                NOW + DAY,
            )],
        ),
    ]);
    for g in ["active", "connect", "recent", "explicit-later"] {
        let f = below_start(&s, g);
        assert_eq!(f.len(), 1, "{g}: {:#?}", s.findings);
        assert_eq!(f[0].severity, Severity::Warning, "{g}");
    }
}

/// Offsets a running coordinator has expired at the reference time (NOW, `offsets.retention.minutes`
/// at its 7-day default): a simple group's commit 8 days old (`ClassicGroup.offsetExpirationCondition`
/// without protocol type: the commit time is the base); a v1 commit of an hour ago whose
/// explicit expire timestamp passed a minute ago (`OffsetExpirationConditionImpl.isOffsetExpired`:
/// the expire timestamp alone decides); an Empty consumer-protocol group that became empty
/// 8 days ago with a commit of an hour ago (the base is `currentStateTimestamp`, core's
/// `testOffsetExpirationSemantics`). Each commit sits below the log start. The coordinator
/// tombstones them at its first cycle and the groups with them, so the group's consumer
/// finds no committed offset and `auto.offset.reset` applies (none: `NoOffsetForPartitionException`,
/// not the `OffsetOutOfRangeException` the finding announces); no records are "lost for the
/// group", which had stopped consuming more than the retention ago. klogscan keeps no
/// reference-time expiry and warns as for a live group.
#[test]
fn offsets_expired_at_the_reference_time_are_no_lost_records_warning() {
    let s = see_groups(&[
        (
            "abandoned",
            vec![commit("abandoned", "events", 0, 40, NOW - 8 * DAY)],
        ),
        (
            "explicit",
            vec![commit_v1(
                "explicit",
                "events",
                0,
                40,
                NOW - 60 * MINUTE,
                NOW - MINUTE,
            )],
        ),
        (
            "emptied",
            vec![
                classic("emptied", "consumer", 4, None, NOW - 8 * DAY),
                commit("emptied", "events", 0, 40, NOW - 60 * MINUTE),
            ],
        ),
    ]);
    for g in ["abandoned", "explicit", "emptied"] {
        // The scan sees the commit (the load holds it) ...
        assert!(
            s.rows(g).contains(&tp("events", 0, 40)),
            "{g}: {:#?}",
            s.view.rows
        );
        // ... but what a coordinator has expired is no warning of lost records.
        let f = below_start(&s, g);
        assert!(
            f.iter().all(|f| f.severity <= Severity::Info),
            "{g}: {f:#?}"
        );
    }
}

/// Every JSON object under `v` (depth first).
fn objects(v: &Value) -> Vec<&serde_json::Map<String, Value>> {
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            out.push(m);
            for x in m.values() {
                out.extend(objects(x));
            }
        }
        Value::Array(a) => {
            for x in a {
                out.extend(objects(x));
            }
        }
        _ => {}
    }
    out
}

/// Whether some value of `m` is the number `n`.
fn holds(m: &serde_json::Map<String, Value>, n: i64) -> bool {
    m.values().any(|x| x.as_i64() == Some(n))
}

/// `klogscan groups --format json` ("every field of every group, members and offsets
/// included"): the object of `group`'s committed offset of `events-0`, and the group's own.
fn group_json(s: &Seen, group: &str) -> (Value, Value) {
    let doc: Value = serde_json::from_str(&s.cli(&["groups", "--format", "json"])).unwrap();
    let g = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group_id"] == group)
        .cloned()
        .unwrap_or_else(|| panic!("no {group} in {doc:#}"));
    let c = objects(&g)
        .into_iter()
        .find(|m| m.get("topic") == Some(&json!("events")))
        .map(|m| Value::Object(m.clone()))
        .unwrap_or_else(|| panic!("no commit of events in {g:#}"));
    (g, c)
}

/// The commit time, the base of every expiry without an explicit timestamp, is in the
/// listing (the twin of the next two).
#[test]
fn the_commit_time_is_listed() {
    let s = see_groups(&[("recent", vec![commit("recent", "events", 0, 40, NOW - DAY)])]);
    let (_, c) = group_json(&s, "recent");
    assert!(holds(c.as_object().unwrap(), NOW - DAY), "{c:#}");
}

/// Core's `testLoadOffsetWithExplicitRetention` / `OffsetAndMetadata.fromRecord`: a value
/// v1's `expireTimestamp` is loaded (`expireTimestampMs`, -1 read as none) and, when
/// present, alone decides the offset's expiry (`OffsetExpirationConditionImpl.isOffsetExpired`,
/// `OffsetExpirationConditionImplTest.testIsOffsetExpired`). klogscan decodes it (dump) but
/// drops it from the replayed commit (`Committed` has no such field), so neither `groups`
/// nor `consumers` can tell an offset that expires tomorrow from one that lives on.
#[test]
fn a_v1_commit_keeps_its_expire_timestamp() {
    let expire = NOW + DAY;
    let s = see_groups(&[(
        "explicit-later",
        vec![commit_v1(
            "explicit-later",
            "events",
            0,
            40,
            NOW - 8 * DAY,
            expire,
        )],
    )]);
    let (_, c) = group_json(&s, "explicit-later");
    assert!(holds(c.as_object().unwrap(), expire), "{c:#}");
}

/// `GroupMetadataManager.replay(GroupMetadataKey, …)` loads a classic group's
/// `currentStateTimestamp` (-1 read as none), and `ClassicGroup.offsetExpirationCondition`
/// bases an Empty group's expiry on it when present (`ClassicGroupTest.testOffsetExpirationCondition`
/// case 2, core's `testOffsetExpirationSemantics`): offsets committed after the group
/// emptied still expire retention after it emptied. klogscan's replay does not keep it, so
/// the group listing cannot say when an empty group's offsets go.
#[test]
fn an_empty_group_keeps_when_it_became_empty() {
    let emptied = NOW - 8 * DAY;
    let s = see_groups(&[(
        "emptied",
        vec![
            classic("emptied", "consumer", 4, None, emptied),
            commit("emptied", "events", 0, 40, NOW - 60 * MINUTE),
        ],
    )]);
    let (g, _) = group_json(&s, "emptied");
    assert!(holds(g.as_object().unwrap(), emptied), "{g:#}");
}
