//! The replay of `__remote_log_metadata`, per user partition, as
//! `TopicBasedRemoteLogMetadataManager`'s consumer applies it to its
//! `RemoteLogMetadataCache` (`RemotePartitionMetadataStore`): each remote segment's
//! lifecycle (COPY_SEGMENT_STARTED → COPY_SEGMENT_FINISHED → DELETE_SEGMENT_STARTED →
//! DELETE_SEGMENT_FINISHED), its offsets, epochs, size and brokers, and the partition's
//! deletion state.
//!
//! All the events of one user partition go to one metadata partition
//! (`RemoteLogMetadataTopicPartitioner`), so replaying each metadata partition in offset
//! order replays each user partition in the order its events were written.
//!
//! One replay stands for every broker: each broker applies only the records of the user
//! partitions it hosts (`ConsumerTask.shouldProcess`), and each user partition's records
//! are the same wherever they are applied. What differs is where a broker's consumer
//! stops: at the first record the cache throws on of a partition it hosts. So each
//! partition's log runs to its own such record ([`PartitionLog::stopped_at`]), and at each
//! such record ([`Stop`]) the replay keeps the logs of the metadata partition's other user
//! partitions as they were before it ([`Replay::log_at`]); which stop holds for which
//! replica is `super::hosting`'s question.

use super::epochs::EpochMaps;
use crate::read::format::remote_log::{
    self, PartitionDeleteState, RemoteLogMetadata, RemoteMetadataError, SegmentState,
};
use std::collections::{BTreeMap, HashMap};

/// A user partition: topic, partition, topic id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UserPartition {
    pub topic: String,
    pub partition: i32,
    pub topic_id: [u8; 16],
}

/// Where an event is in `__remote_log_metadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct EventAt {
    pub metadata_partition: i32,
    pub offset: i64,
}

/// One state a segment went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct StateEvent {
    #[serde(serialize_with = "state_name")]
    pub state: SegmentState,
    pub at: EventAt,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
}

fn state_name<S: serde::Serializer>(s: &SegmentState, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.name())
}

/// One remote segment as the replay leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSegment {
    pub id: [u8; 16],
    pub start_offset: i64,
    pub end_offset: i64,
    /// Epoch → first offset, ascending by epoch (duplicates: the later one, as Kafka's map).
    pub leader_epochs: Vec<(i32, i64)>,
    pub segment_size_in_bytes: i32,
    pub max_timestamp_ms: i64,
    /// The custom metadata of the latest event applied (`createWithUpdates` takes the
    /// update's: an update without it leaves none).
    pub custom_metadata: Option<Vec<u8>>,
    /// The COPY_SEGMENT_STARTED record's `TxnIndexEmpty` (Kafka 4.0+, tag 0; false when
    /// absent): `RemoteLogManager.copyLogSegment` sets it from the local segment's
    /// transaction index at copy.
    pub txn_index_empty: bool,
    /// The current state and every state applied, in order.
    pub state: SegmentState,
    pub history: Vec<StateEvent>,
}

impl RemoteSegment {
    /// The broker that copied the segment (its COPY_SEGMENT_STARTED event).
    pub fn copied_by(&self) -> i32 {
        self.history.first().map_or(-1, |e| e.broker_id)
    }
    /// The last event applied to the segment.
    pub fn last_event(&self) -> EventAt {
        self.history.last().map_or(
            EventAt {
                metadata_partition: -1,
                offset: -1,
            },
            |e| e.at,
        )
    }
}

/// An event the cache does not apply (`RemoteLogMetadataCache` logs it and goes on, or
/// throws, which stops the metadata consumer of a broker hosting the partition).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Ignored {
    pub at: EventAt,
    pub segment_id: String,
    pub why: &'static str,
    /// True when Kafka's cache throws on it (the consumer task stops).
    pub stops_consumer: bool,
}

/// A user partition's replayed remote log.
#[derive(Debug, Clone, Default)]
pub struct PartitionLog {
    /// Segments in the order of their COPY_SEGMENT_STARTED. A segment id copied again after
    /// its DELETE_SEGMENT_FINISHED (which the cache forgets) is a second entry: one per
    /// lifecycle.
    pub segments: Vec<RemoteSegment>,
    /// Segment id → its latest entry in `segments`.
    index: HashMap<[u8; 16], usize>,
    /// The per-epoch offset maps reads are served from and the listings retention walks
    /// (`RemoteLogLeaderEpochState`).
    pub epochs: EpochMaps,
    /// The latest partition delete state and where it was written.
    pub delete_state: Option<(PartitionDeleteState, EventAt)>,
    /// The latest event of the partition.
    pub last_event: Option<EventAt>,
    pub ignored: Vec<Ignored>,
    /// The record of the partition the cache threw on: a broker hosting the partition
    /// applies no later record of the metadata partition (its consumer task is closed).
    pub stopped_at: Option<EventAt>,
}

/// A record of `__remote_log_metadata` the metadata consumer cannot take: one that does not
/// deserialize, or one that does but names no user partition (a
/// `RemoteLogSegmentMetadataSnapshotRecord`, [`SNAPSHOT_ON_TOPIC`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable {
    pub at: EventAt,
    pub segment: String,
    pub position: u64,
    pub error: String,
    /// The record deserializes (a snapshot record): the consumer fails after it.
    pub deserializes: bool,
}

/// Why a `RemoteLogSegmentMetadataSnapshotRecord` (api key 3, written only to the 3.6–3.7
/// `remote_log_snapshot` files) on the topic stops the metadata consumer: it deserializes,
/// but `ConsumerTask.processConsumerRecord` asks it for its user partition
/// (`shouldProcess` → `RemoteLogSegmentMetadataSnapshot.topicIdPartition`), which throws
/// before any question of hosting, and `ConsumerTask.ingestRecords` closes the task on
/// that exception (not a retriable one) — on every broker consuming the metadata partition.
pub const SNAPSHOT_ON_TOPIC: &str = "java.lang.UnsupportedOperationException: This metadata does not have topic partition with it. (a RemoteLogSegmentMetadataSnapshotRecord, api key 3, which only remote_log_snapshot files hold: ConsumerTask.shouldProcess asks it for its topic partition)";

/// A record Kafka's cache throws on (IllegalArgumentException): the first of its user
/// partition. Only a broker hosting that partition applies the record
/// (`ConsumerTask.processConsumerRecord` hands a record to the store only when
/// `shouldProcess` holds: the partition is assigned to the broker), so only such a broker
/// stops there: `ConsumerTask.ingestRecords` closes its consumer task on the exception. A
/// broker hosting none of it deserializes the record, skips it and goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub at: EventAt,
    /// The user partition whose record it is.
    pub partition: UserPartition,
    pub segment_id: String,
    pub why: &'static str,
    /// The records of the metadata partition up to it, itself included
    /// ([`Replay::records_after`] counts those after it).
    records_to: u64,
}

/// How many stops of one metadata partition keep the logs as they were there: each kept
/// stop may copy a log a later record changes, so a hostile log throwing at every other
/// record would cost time and memory quadratic in its records. A broker stopped at a later
/// stop is not judged (`hosting::Reading::known`); real logs have one or two stops.
pub const MAX_KEPT_STOPS: usize = 64;

/// The replay of every metadata partition read.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Each user partition's log as a broker hosting it holds it: up to the first of its
    /// records the cache throws on (`PartitionLog::stopped_at`; every broker applying its
    /// records hosts it, so none applies a later one), the records of other partitions
    /// applied whatever they throw on.
    pub partitions: BTreeMap<UserPartition, PartitionLog>,
    /// Per metadata partition, in offset order, the records the cache throws on, one per
    /// user partition (its first). A broker hosting one of those partitions applies the
    /// metadata partition up to the earliest of them (`Self::log_at`).
    pub stops: BTreeMap<i32, Vec<Stop>>,
    /// At each stop, the logs of its metadata partition's user partitions as they were
    /// before it, kept for those a later record changed (`None`: no record of them yet); the
    /// others are as `partitions` holds them. Kept when a later record is applied (copy on
    /// write): nothing is cloned for the partitions nothing changes after the stop.
    before: BTreeMap<EventAt, BTreeMap<UserPartition, Option<PartitionLog>>>,
    /// The records read of each metadata partition.
    records: BTreeMap<i32, u64>,
    pub undecodable: Vec<Undecodable>,
    /// Records or batches the walk could not read: `(metadata partition, why)`.
    pub unread: Vec<(i32, String)>,
    /// Metadata partitions `--max-bytes` read only in part: the events of their user
    /// partitions may lack later ones.
    pub cut: std::collections::BTreeSet<i32>,
}

fn user_partition(p: &remote_log::TopicIdPartition<'_>) -> UserPartition {
    UserPartition {
        topic: String::from_utf8_lossy(p.topic).into_owned(),
        partition: p.partition,
        topic_id: p.topic_id,
    }
}

fn epochs(m: &remote_log::SegmentMetadata<'_>) -> Vec<(i32, i64)> {
    let map: BTreeMap<i32, i64> = m.leader_epochs.iter().collect();
    map.into_iter().collect()
}

/// A segment as record `m` (at `at`, in `state`) describes it, with that one event.
fn segment_of(
    at: EventAt,
    m: &remote_log::SegmentMetadata<'_>,
    state: SegmentState,
) -> RemoteSegment {
    RemoteSegment {
        id: m.segment.id,
        start_offset: m.start_offset,
        end_offset: m.end_offset,
        leader_epochs: epochs(m),
        segment_size_in_bytes: m.segment_size_in_bytes,
        max_timestamp_ms: m.max_timestamp_ms,
        custom_metadata: m.custom_metadata.map(<[u8]>::to_vec),
        txn_index_empty: m.txn_index_empty,
        state,
        history: vec![StateEvent {
            state,
            at,
            broker_id: m.broker_id,
            event_timestamp_ms: m.event_timestamp_ms,
        }],
    }
}

fn id_text(id: &[u8; 16]) -> String {
    crate::read::format::checkpoint::encode_uuid(id)
}

impl Replay {
    /// Apply one record of metadata partition `metadata_partition`.
    pub fn apply(
        &mut self,
        metadata_partition: i32,
        offset: i64,
        value: Option<&[u8]>,
        segment: &str,
        position: u64,
    ) {
        let at = EventAt {
            metadata_partition,
            offset,
        };
        // Counted per metadata partition (a stop's `records_after` is the count since it:
        // no walk over the stops per record, which hostile logs make many).
        *self.records.entry(metadata_partition).or_default() += 1;
        // Every broker consuming this metadata partition stopped at an undecodable record
        // (the deserialization comes before `shouldProcess`): nothing after it is applied.
        if self
            .undecodable
            .iter()
            .any(|u| u.at.metadata_partition == metadata_partition)
        {
            return;
        }
        let decoded = match value {
            None => Err("the record has a null value".to_string()),
            Some(v) => remote_log::decode(v).map_err(|e: RemoteMetadataError| e.to_string()),
        };
        let (error, deserializes) = match decoded {
            Ok(RemoteLogMetadata::Snapshot(_)) => (SNAPSHOT_ON_TOPIC.to_string(), true),
            Ok(r) => return self.apply_record(at, &r),
            Err(error) => (error, false),
        };
        self.undecodable.push(Undecodable {
            at,
            segment: segment.to_string(),
            position,
            error,
            deserializes,
        });
    }

    fn apply_record(&mut self, at: EventAt, r: &RemoteLogMetadata<'_>) {
        let up = match r {
            RemoteLogMetadata::Segment(m) => user_partition(&m.segment.partition),
            RemoteLogMetadata::Update(u) => user_partition(&u.segment.partition),
            RemoteLogMetadata::PartitionDelete(d) => user_partition(&d.partition),
            // On the topic, the consumer stops at it (`Self::apply`, `SNAPSHOT_ON_TOPIC`).
            RemoteLogMetadata::Snapshot(_) => return,
        };
        // A broker applying this partition's records hosts it: its task closed at the
        // partition's earlier record the cache threw on.
        if self
            .partitions
            .get(&up)
            .is_some_and(|l| l.stopped_at.is_some())
        {
            return;
        }
        self.keep_before(&up, at);
        let log = self.partitions.entry(up.clone()).or_default();
        log.last_event = Some(at);
        match r {
            RemoteLogMetadata::Segment(m) => log.add_segment(at, m),
            RemoteLogMetadata::Update(u) => log.update(at, u),
            RemoteLogMetadata::PartitionDelete(d) => {
                if let Some(s) = PartitionDeleteState::from_id(d.state) {
                    log.delete_state = Some((s, at));
                }
            }
            RemoteLogMetadata::Snapshot(_) => {}
        }
        if let Some(mut stop) = thrown(log, &up, at) {
            log.stopped_at = Some(at);
            stop.records_to = self
                .records
                .get(&at.metadata_partition)
                .copied()
                .unwrap_or(0);
            self.stops
                .entry(at.metadata_partition)
                .or_default()
                .push(stop);
        }
    }

    /// Before user partition `up` changes at `at`: its log as it was at each earlier stop of
    /// the metadata partition it has not changed since (what a broker stopped there holds).
    fn keep_before(&mut self, up: &UserPartition, at: EventAt) {
        let Some(stops) = self.stops.get(&at.metadata_partition) else {
            return;
        };
        let log = self.partitions.get(up);
        let since = log.and_then(|l| l.last_event);
        for s in (stops.iter().take(MAX_KEPT_STOPS))
            .filter(|s| s.at < at && since.is_none_or(|e| e < s.at))
        {
            self.before
                .entry(s.at)
                .or_default()
                .entry(up.clone())
                .or_insert_with(|| log.cloned());
        }
    }

    /// User partition `up`'s log as a broker holds it whose consumer applied its metadata
    /// partition up to `cut` (exclusive; `None`: to its end): `None` when no record of it
    /// came before.
    pub fn log_at(&self, up: &UserPartition, cut: Option<EventAt>) -> Option<&PartitionLog> {
        let now = self.partitions.get(up)?;
        let Some(cut) = cut else { return Some(now) };
        // Its own stop: the log ends there, with the record the cache threw on.
        if now.stopped_at == Some(cut) {
            return Some(now);
        }
        match self.before.get(&cut).and_then(|kept| kept.get(up)) {
            Some(kept) => kept.as_ref(),
            None => Some(now),
        }
    }

    /// The records of `s`'s metadata partition after it (a broker stopped there applies
    /// none of them).
    pub fn records_after(&self, s: &Stop) -> u64 {
        let read = self
            .records
            .get(&s.at.metadata_partition)
            .copied()
            .unwrap_or(0);
        read.saturating_sub(s.records_to)
    }

    /// Whether the logs as they were at the stop at `at` are kept ([`MAX_KEPT_STOPS`]):
    /// a broker stopped at a later one is not judged on them.
    pub fn kept_at(&self, at: EventAt) -> bool {
        (self.stops.get(&at.metadata_partition))
            .and_then(|v| v.iter().position(|s| s.at == at))
            .is_some_and(|i| i < MAX_KEPT_STOPS)
    }

    /// The stops of every metadata partition, in (metadata partition, offset) order.
    pub fn all_stops(&self) -> impl Iterator<Item = &Stop> {
        self.stops.values().flatten()
    }

    /// Every user partition's log, and the logs kept at the stops (what a broker stopped
    /// there holds): every segment some broker's cache may hold (what the object-store
    /// mirror fetches).
    #[cfg(feature = "remote-object-store-core")]
    pub fn every_log(&self) -> impl Iterator<Item = (&UserPartition, &PartitionLog)> {
        let kept = self
            .before
            .values()
            .flatten()
            .filter_map(|(up, log)| Some((up, log.as_ref()?)));
        self.partitions.iter().chain(kept)
    }
}

/// The stop at `at`, when `log`'s (user partition `up`'s) record there was one the cache
/// throws on.
fn thrown(log: &PartitionLog, up: &UserPartition, at: EventAt) -> Option<Stop> {
    let i = log
        .ignored
        .last()
        .filter(|i| i.at == at && i.stops_consumer)?;
    Some(Stop {
        at,
        partition: up.clone(),
        segment_id: i.segment_id.clone(),
        why: i.why,
        records_to: 0,
    })
}

impl PartitionLog {
    /// `RemoteLogMetadataCache.addCopyInProgressSegment`.
    fn add_segment(&mut self, at: EventAt, m: &remote_log::SegmentMetadata<'_>) {
        let Some(state) = SegmentState::from_id(m.state) else {
            return;
        };
        let ignore = |why, stops_consumer| Ignored {
            at,
            segment_id: id_text(&m.segment.id),
            why,
            stops_consumer,
        };
        if state != SegmentState::CopyStarted {
            self.ignored.push(ignore(
                "a segment's first event must be COPY_SEGMENT_STARTED",
                true,
            ));
            return;
        }
        // A segment DELETE_SEGMENT_FINISHED is gone from the cache
        // (`RemoteLogMetadataCache.handleSegmentWithDeleteSegmentFinishedState` removes its
        // metadata): its id has no state, so a new COPY_SEGMENT_STARTED under it is valid
        // (`RemoteLogSegmentState.isValidTransition(null, …)`) and starts a new lifecycle.
        let existing = self
            .index
            .get(&m.segment.id)
            .copied()
            .filter(|&i| self.segments[i].state != SegmentState::DeleteFinished);
        let from = existing.map(|i| self.segments[i].state);
        if !SegmentState::is_valid_transition(from, state) {
            self.ignored.push(ignore(
                "invalid state transition (ignored by the cache)",
                false,
            ));
            return;
        }
        let seg = segment_of(at, m, state);
        let event = seg.history[0];
        match existing {
            Some(i) => {
                let mut history = std::mem::take(&mut self.segments[i].history);
                history.push(event);
                self.segments[i] = RemoteSegment { history, ..seg };
            }
            None => {
                self.index.insert(m.segment.id, self.segments.len());
                self.segments.push(seg);
            }
        }
        if let Some(&i) = self.index.get(&m.segment.id) {
            self.map_epochs(i);
        }
    }

    /// `RemoteLogMetadataCache.updateRemoteLogSegmentMetadata`.
    fn update(&mut self, at: EventAt, u: &remote_log::SegmentUpdate<'_>) {
        let Some(state) = SegmentState::from_id(u.state) else {
            return;
        };
        let ignore = |why, stops_consumer| Ignored {
            at,
            segment_id: id_text(&u.segment.id),
            why,
            stops_consumer,
        };
        let Some(&i) = self.index.get(&u.segment.id) else {
            self.ignored.push(ignore(
                "an update for a segment never copied (RemoteResourceNotFoundException, caught and logged by RemotePartitionMetadataStore)",
                false,
            ));
            return;
        };
        let seg = &mut self.segments[i];
        if seg.state == SegmentState::DeleteFinished {
            self.ignored.push(ignore(
                "an update for a segment already deleted (the cache forgot it: RemoteResourceNotFoundException, caught and logged)",
                false,
            ));
            return;
        }
        if !SegmentState::is_valid_transition(Some(seg.state), state) {
            self.ignored.push(ignore(
                "invalid state transition (ignored by the cache)",
                false,
            ));
            return;
        }
        if state == SegmentState::CopyStarted {
            self.ignored.push(ignore(
                "an update to COPY_SEGMENT_STARTED (IllegalArgumentException)",
                true,
            ));
            return;
        }
        seg.state = state;
        // `RemoteLogSegmentMetadata.createWithUpdates` takes the update's custom metadata,
        // absent or not: an update without it clears what the copy's carried.
        seg.custom_metadata = u.custom_metadata.map(<[u8]>::to_vec);
        seg.history.push(StateEvent {
            state,
            at,
            broker_id: u.broker_id,
            event_timestamp_ms: u.event_timestamp_ms,
        });
        self.map_epochs(i);
    }

    /// The per-epoch states after segment `i` reached its state (a self transition applies
    /// again, as `RemoteLogMetadataCache.updateRemoteLogSegmentMetadata` does): a copy
    /// started is listed unreferenced in each of its epochs, a finished copy enters each of
    /// its epochs' maps, a delete started leaves them for the unreferenced sets, a delete
    /// finished leaves those ([`EpochMaps`]).
    fn map_epochs(&mut self, i: usize) {
        let s = &self.segments[i];
        match s.state {
            SegmentState::CopyStarted => self.epochs.copy_started(i, s),
            SegmentState::CopyFinished => self.epochs.copy_finished(i, s),
            SegmentState::DeleteStarted => self.epochs.delete_started(i, s),
            SegmentState::DeleteFinished => self.epochs.delete_finished(i, s),
        }
    }

    /// A segment as a `remote_log_snapshot` file holds it (its state as of `at`, the
    /// metadata offset the snapshot was taken at; `RemoteLogMetadataCache` loaded from
    /// the snapshot): one event, the snapshot. Segments are in the file's order.
    pub fn restore(&mut self, at: EventAt, m: &remote_log::SegmentMetadata<'_>) {
        let Some(state) = SegmentState::from_id(m.state) else {
            return;
        };
        // The file lists a segment once per leader epoch it spans (`flushToFile` walks the
        // cache's epoch entries): one segment, its epochs mapped again as the cache
        // re-applies it.
        if let Some(&i) = self.index.get(&m.segment.id) {
            self.map_epochs(i);
            return;
        }
        let i = self.segments.len();
        self.index.insert(m.segment.id, i);
        self.segments.push(segment_of(at, m, state));
        // `FileBasedRemoteLogMetadataCache.loadRemoteLogSegmentMetadata` (3.6–3.7): each
        // state handled as the event that reached it, in the file's order.
        self.map_epochs(i);
        self.last_event = Some(self.last_event.map_or(at, |l| l.max(at)));
    }

    /// Whether the expiration moved on past segment `s`: a delete event of another segment
    /// that had been copied to the end, after `s`'s last event. The copy task's events say
    /// nothing of a delete (3.9+, KAFKA-16853: copies and expiration run as two tasks; the
    /// copy task deletes only its own failed copies), and a cleanup run that reaches a
    /// DELETE_SEGMENT_STARTED segment retries it, publishing DELETE_SEGMENT_STARTED again
    /// (`RemoteLogManager`'s expiration): a later delete of another segment with no retry
    /// of `s` after it means `s` was left behind.
    pub fn expiration_moved_on(&self, s: &RemoteSegment) -> bool {
        let at = s.last_event();
        self.segments.iter().any(|o| {
            let copied = (o.history.iter()).position(|e| e.state == SegmentState::CopyFinished);
            o.id != s.id
                && o.history.iter().enumerate().any(|(k, e)| {
                    e.at > at
                        && copied.is_some_and(|c| k > c)
                        && matches!(
                            e.state,
                            SegmentState::DeleteStarted | SegmentState::DeleteFinished
                        )
                })
        })
    }
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use super::*;
    use crate::testkit::files::topic_id_for;
    use crate::testkit::remote_log::{
        COPY_SEGMENT_FINISHED, COPY_SEGMENT_STARTED, RemoteSegment, encode_segment_metadata,
        encode_segment_update, segment_uuid,
    };

    fn segment(topic: &str, n: u32, start: i64) -> RemoteSegment {
        RemoteSegment {
            topic: topic.into(),
            topic_id: topic_id_for(topic),
            partition: 0,
            id: segment_uuid(n),
            start_offset: start,
            end_offset: start + 9,
            max_timestamp_ms: 1_000,
            leader_epochs: vec![(0, start)],
            size: 100,
            custom_metadata: None,
            txn_index_empty: None,
        }
    }

    /// A hostile metadata partition: 300 user partitions each throwing once (a segment
    /// started twice), a segment of `big` copied after each throw. The logs kept at the
    /// stops stay bounded (each kept stop copies `big`'s growing log once), a stop past
    /// the bound says it is not kept, and every stop still counts the records after it.
    #[test]
    fn stops_past_the_bound_keep_no_copies_and_count_what_follows() {
        let mut r = Replay::default();
        let mut offset = 0;
        let mut apply = |r: &mut Replay, v: Vec<u8>| {
            r.apply(0, offset, Some(&v), "0.log", 0);
            offset += 1;
        };
        for i in 0..300u32 {
            let bad = segment(&format!("t{i}"), i, 0);
            apply(
                &mut r,
                encode_segment_metadata(&bad, 1, 1, COPY_SEGMENT_STARTED),
            );
            apply(
                &mut r,
                encode_segment_update(&bad, 1, 2, None, COPY_SEGMENT_STARTED),
            );
            let big = segment("big", 10_000 + i, 10 * i64::from(i));
            apply(
                &mut r,
                encode_segment_metadata(&big, 1, 3, COPY_SEGMENT_STARTED),
            );
            apply(
                &mut r,
                encode_segment_update(&big, 1, 4, None, COPY_SEGMENT_FINISHED),
            );
        }
        let stops: Vec<&Stop> = r.all_stops().collect();
        assert_eq!(stops.len(), 300);
        assert!(r.before.len() <= MAX_KEPT_STOPS, "{}", r.before.len());
        assert!(r.kept_at(stops[0].at) && r.kept_at(stops[MAX_KEPT_STOPS - 1].at));
        assert!(!r.kept_at(stops[MAX_KEPT_STOPS].at));
        // the first stop is the second record: 1 198 records after it; the last, 2 after
        assert_eq!(r.records_after(stops[0]), 1_198);
        assert_eq!(r.records_after(stops[299]), 2);
        let up = stops[0].partition.clone();
        assert!(r.partitions[&up].stopped_at.is_some());
    }
}
