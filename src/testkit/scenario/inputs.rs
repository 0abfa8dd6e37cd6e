//! What a scenario appends: the producer that writes, the records, v2 batches
//! ([`Batch`]) and legacy magic 0/1 entries ([`Legacy`]).

use crate::testkit::encode::{BatchSpec, Codec};

/// Who wrote a batch: producer id, epoch and whether it is transactional.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Producer {
    pub id: i64,
    pub epoch: i16,
    pub transactional: bool,
}

impl Producer {
    /// A plain (non-idempotent) producer: pid −1, epoch −1, sequence −1.
    pub const PLAIN: Producer = Producer {
        id: -1,
        epoch: -1,
        transactional: false,
    };
    /// An idempotent producer.
    pub fn idempotent(id: i64, epoch: i16) -> Self {
        Producer {
            id,
            epoch,
            transactional: false,
        }
    }
    /// A transactional producer.
    pub fn transactional(id: i64, epoch: i16) -> Self {
        Producer {
            id,
            epoch,
            transactional: true,
        }
    }
    /// The same producer at another epoch (fencing, TV2 markers one above the data, zombies).
    pub fn with_epoch(self, epoch: i16) -> Self {
        Producer { epoch, ..self }
    }
    /// The same producer one epoch up (a TV2 marker's epoch).
    pub fn bumped(self) -> Self {
        self.with_epoch(self.epoch.wrapping_add(1))
    }
}

/// A record to put in a [`Batch`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rec {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Absolute timestamp; default: the batch timestamp plus the record's index.
    pub timestamp: Option<i64>,
    /// Offset delta; default: the record's index (set it to create compaction-like gaps).
    pub offset_delta: Option<i32>,
}

impl Rec {
    /// A record with a key and a value.
    pub fn kv(key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Self {
        Rec {
            key: Some(key.as_ref().to_vec()),
            value: Some(value.as_ref().to_vec()),
            ..Rec::default()
        }
    }
    /// A record with a null key.
    pub fn value(value: impl AsRef<[u8]>) -> Self {
        Rec {
            value: Some(value.as_ref().to_vec()),
            ..Rec::default()
        }
    }
    /// A tombstone: key, null value.
    pub fn tombstone(key: impl AsRef<[u8]>) -> Self {
        Rec {
            key: Some(key.as_ref().to_vec()),
            ..Rec::default()
        }
    }
    /// Add a header (`None` = null header value).
    pub fn header(mut self, key: impl AsRef<[u8]>, value: Option<&[u8]>) -> Self {
        self.headers
            .push((key.as_ref().to_vec(), value.map(|v| v.to_vec())));
        self
    }
    /// Set the absolute timestamp.
    pub fn at(mut self, ts: i64) -> Self {
        self.timestamp = Some(ts);
        self
    }
    /// Set the offset delta.
    pub fn offset_delta(mut self, d: i32) -> Self {
        self.offset_delta = Some(d);
        self
    }
}

/// How a batch's baseSequence is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seq {
    /// Continue the producer's sequence for this epoch (0 for a new epoch).
    Auto,
    /// Exactly this base sequence (gaps, duplicates, wrap-around). The producer's next
    /// automatic sequence continues after it.
    Explicit(i32),
}

type Tweak = Box<dyn Fn(&mut BatchSpec)>;

/// A v2 data batch to append, built fluently.
pub struct Batch {
    pub(super) producer: Producer,
    pub(super) records: Vec<Rec>,
    pub(super) codec: Codec,
    pub(super) seq: Seq,
    pub(super) timestamp: Option<i64>,
    pub(super) leader_epoch: Option<i32>,
    pub(super) log_append_time: bool,
    pub(super) tweak: Option<Tweak>,
}

impl Batch {
    /// An empty batch from `producer` (add records with [`Batch::records`], [`Batch::values`], …).
    pub fn new(producer: Producer) -> Self {
        Batch {
            producer,
            records: Vec::new(),
            codec: Codec::None,
            seq: Seq::Auto,
            timestamp: None,
            leader_epoch: None,
            log_append_time: false,
            tweak: None,
        }
    }
    /// Add `n` generated records `key-i` / `value-i` (i counts within the batch).
    pub fn records(mut self, n: usize) -> Self {
        let start = self.records.len();
        for i in start..start + n {
            self.records
                .push(Rec::kv(format!("key-{i}"), format!("value-{i}")));
        }
        self
    }
    /// Add null-key records with these values.
    pub fn values<I, V>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = V>,
        V: AsRef<[u8]>,
    {
        self.records.extend(values.into_iter().map(Rec::value));
        self
    }
    /// Add one record.
    pub fn record(mut self, r: Rec) -> Self {
        self.records.push(r);
        self
    }
    /// Compress with `codec`.
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }
    /// Use exactly this base sequence.
    pub fn sequence(mut self, s: i32) -> Self {
        self.seq = Seq::Explicit(s);
        self
    }
    /// Set the batch (first record) timestamp; the partition clock moves past it.
    pub fn at(mut self, ts: i64) -> Self {
        self.timestamp = Some(ts);
        self
    }
    /// partitionLeaderEpoch for this batch only.
    pub fn leader_epoch(mut self, e: i32) -> Self {
        self.leader_epoch = Some(e);
        self
    }
    /// LogAppendTime batch.
    pub fn log_append_time(mut self) -> Self {
        self.log_append_time = true;
        self
    }
    /// Mark the batch as cleaned with a delete horizon (attribute bit 6): baseTimestamp
    /// becomes `horizon_ms`, record deltas are rewritten relative to it (they may go negative).
    pub fn delete_horizon(self, horizon_ms: i64) -> Self {
        self.tweak(move |s| {
            let old = s.base_timestamp;
            s.delete_horizon = true;
            s.base_timestamp = horizon_ms;
            for r in &mut s.records {
                r.timestamp_delta = old + r.timestamp_delta - horizon_ms;
            }
        })
    }
    /// Change anything in the final [`BatchSpec`] (every header field, overrides for the
    /// derived ones) just before it is encoded.
    pub fn tweak(mut self, f: impl Fn(&mut BatchSpec) + 'static) -> Self {
        self.tweak = Some(Box::new(f));
        self
    }
}

/// A nullable key and a nullable value.
type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

/// A legacy (magic 0/1) entry to append: one uncompressed message per entry, or a
/// compressed wrapper holding all the values.
#[derive(Debug, Clone)]
pub struct Legacy {
    pub(super) magic: u8,
    pub(super) codec: Codec,
    pub(super) records: Vec<KeyValue>,
    pub(super) timestamp: Option<i64>,
}

impl Legacy {
    /// Magic 0 messages.
    pub fn v0() -> Self {
        Legacy {
            magic: 0,
            codec: Codec::None,
            records: Vec::new(),
            timestamp: None,
        }
    }
    /// Magic 1 messages.
    pub fn v1() -> Self {
        Legacy {
            magic: 1,
            ..Legacy::v0()
        }
    }
    /// Compress into one wrapper (gzip, snappy, lz4; magic 0 lz4 uses the broken HC
    /// automatically, as Kafka wrote it).
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = if self.magic == 0 && codec == Codec::Lz4 {
            Codec::Lz4BrokenHc
        } else {
            codec
        };
        self
    }
    /// Add null-key messages.
    pub fn values<I, V>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = V>,
        V: AsRef<[u8]>,
    {
        self.records.extend(
            values
                .into_iter()
                .map(|v| (None, Some(v.as_ref().to_vec()))),
        );
        self
    }
    /// Add a message with key and value (either may be null).
    pub fn message(mut self, key: Option<&[u8]>, value: Option<&[u8]>) -> Self {
        self.records
            .push((key.map(|k| k.to_vec()), value.map(|v| v.to_vec())));
        self
    }
    /// Timestamp of the first message (magic 1).
    pub fn at(mut self, ts: i64) -> Self {
        self.timestamp = Some(ts);
        self
    }
}
