//! An encoder of `__transaction_state` records (schemas `TransactionLogKey` /
//! `TransactionLogValue`), written from
//! the schema and independent of the decoder in `crate::read::format::txnlog`, so each can check
//! the other.
//!
//! ```
//! use klogscan::testkit::txnlog::{TxnValue, key, state};
//! let k = key("app");
//! assert_eq!(&k[..4], &[0, 0, 0, 3]);
//! let v = TxnValue::new(900, 1, state::ONGOING).partitions(&[("orders", &[0])]).encode();
//! assert_eq!(&v[..2], &[0, 0]); // value version 0
//! ```

/// The status bytes of the coordinator's states.
pub mod state {
    /// 0 `Empty`.
    pub const EMPTY: u8 = 0;
    /// 1 `Ongoing`.
    pub const ONGOING: u8 = 1;
    /// 2 `PrepareCommit`.
    pub const PREPARE_COMMIT: u8 = 2;
    /// 3 `PrepareAbort`.
    pub const PREPARE_ABORT: u8 = 3;
    /// 4 `CompleteCommit`.
    pub const COMPLETE_COMMIT: u8 = 4;
    /// 5 `CompleteAbort`.
    pub const COMPLETE_ABORT: u8 = 5;
    /// 6 `Dead` (never written by a broker).
    pub const DEAD: u8 = 6;
    /// 7 `PrepareEpochFence` (never written by a broker).
    pub const PREPARE_EPOCH_FENCE: u8 = 7;
}

/// A key of version `0` for `id`.
pub fn key(id: &str) -> Vec<u8> {
    key_version(0, id)
}

/// A key of any `version` (a version other than 0 is one the coordinator skips).
pub fn key_version(version: i16, id: &str) -> Vec<u8> {
    let mut k = version.to_be_bytes().to_vec();
    k.extend_from_slice(&(id.len() as i16).to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

/// A `__transaction_state` value; every field settable, the status byte included (so
/// unknown states can be written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnValue {
    /// 0 (non-flexible) or 1 (flexible, with the tagged fields).
    pub version: i16,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub timeout_ms: i32,
    pub status: u8,
    /// `None`: a null array (what Kafka writes for Empty only).
    pub partitions: Option<Vec<(String, Vec<i32>)>>,
    /// The first listed topic is written as a null string (a value Kafka's reader refuses:
    /// the field is not nullable).
    pub null_topic: bool,
    /// The first listed topic's partition ids are written as a null array (refused by
    /// Kafka's reader too).
    pub null_partition_ids: bool,
    pub last_update_ms: i64,
    pub start_ms: i64,
    /// Tag 0 (v1 only; written when not -1).
    pub previous_producer_id: i64,
    /// Tag 1 (v1 only; written when not -1).
    pub next_producer_id: i64,
    /// Tag 2 (v1 only; written when not 0).
    pub client_transaction_version: i16,
    /// Tag 3 (v1 only, newer trunk; written when not -1).
    pub next_producer_epoch: i16,
}

impl TxnValue {
    /// A v0 value of `producer_id`/`producer_epoch` in `status`, timeout 60 s, no
    /// partitions, timestamps 0 and -1. "No partitions" is written as Kafka writes it
    /// (`TransactionLog.valueToBytes`): a null array for Empty, an empty one for every
    /// other state ([`Self::null_partitions`] writes null whatever the state).
    pub fn new(producer_id: i64, producer_epoch: i16, status: u8) -> TxnValue {
        TxnValue {
            version: 0,
            producer_id,
            producer_epoch,
            timeout_ms: 60_000,
            status,
            partitions: (status != state::EMPTY).then(Vec::new),
            null_topic: false,
            null_partition_ids: false,
            last_update_ms: 0,
            start_ms: -1,
            previous_producer_id: -1,
            next_producer_id: -1,
            client_transaction_version: 0,
            next_producer_epoch: -1,
        }
    }
    /// The transaction's partitions, as `(topic, [ids])`.
    pub fn partitions(mut self, ps: &[(&str, &[i32])]) -> TxnValue {
        self.partitions = Some(
            ps.iter()
                .map(|(t, ids)| (t.to_string(), ids.to_vec()))
                .collect(),
        );
        self
    }
    /// A null partition array, whatever the state (Kafka writes one for Empty only; its
    /// reader fails on one in any other state).
    pub fn null_partitions(mut self) -> TxnValue {
        self.partitions = None;
        self
    }
    /// The first listed topic written as a null string.
    pub fn null_topic(mut self) -> TxnValue {
        self.null_topic = true;
        self
    }
    /// The first listed topic's partition ids written as a null array.
    pub fn null_partition_ids(mut self) -> TxnValue {
        self.null_partition_ids = true;
        self
    }
    /// `TransactionLastUpdateTimestampMs` and `TransactionStartTimestampMs`.
    pub fn times(mut self, last_update_ms: i64, start_ms: i64) -> TxnValue {
        self.last_update_ms = last_update_ms;
        self.start_ms = start_ms;
        self
    }
    /// `TransactionTimeoutMs`.
    pub fn timeout(mut self, ms: i32) -> TxnValue {
        self.timeout_ms = ms;
        self
    }
    /// A flexible (v1) value with these tagged fields.
    pub fn v1(mut self, previous: i64, next: i64, client_transaction_version: i16) -> TxnValue {
        self.version = 1;
        self.previous_producer_id = previous;
        self.next_producer_id = next;
        self.client_transaction_version = client_transaction_version;
        self
    }

    /// `NextProducerEpoch` (tag 3; makes the value v1).
    pub fn next_epoch(mut self, epoch: i16) -> TxnValue {
        self.version = 1;
        self.next_producer_epoch = epoch;
        self
    }

    /// The value's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let flex = self.version >= 1;
        let mut v = self.version.to_be_bytes().to_vec();
        v.extend_from_slice(&self.producer_id.to_be_bytes());
        v.extend_from_slice(&self.producer_epoch.to_be_bytes());
        v.extend_from_slice(&self.timeout_ms.to_be_bytes());
        v.push(self.status);
        let len = |v: &mut Vec<u8>, n: Option<usize>| {
            if flex {
                uvarint(v, n.map_or(0, |n| n as u64 + 1));
            } else {
                v.extend_from_slice(&n.map_or(-1, |n| n as i32).to_be_bytes());
            }
        };
        len(&mut v, self.partitions.as_ref().map(Vec::len));
        for (i, (t, ids)) in self.partitions.iter().flatten().enumerate() {
            let first = i == 0;
            if first && self.null_topic {
                if flex {
                    v.push(0);
                } else {
                    v.extend_from_slice(&(-1i16).to_be_bytes());
                }
            } else {
                if flex {
                    uvarint(&mut v, t.len() as u64 + 1);
                } else {
                    v.extend_from_slice(&(t.len() as i16).to_be_bytes());
                }
                v.extend_from_slice(t.as_bytes());
            }
            let ids = (!(first && self.null_partition_ids)).then_some(ids);
            len(&mut v, ids.map(Vec::len));
            for i in ids.into_iter().flatten() {
                v.extend_from_slice(&i.to_be_bytes());
            }
            if flex {
                v.push(0);
            }
        }
        v.extend_from_slice(&self.last_update_ms.to_be_bytes());
        v.extend_from_slice(&self.start_ms.to_be_bytes());
        if flex {
            let mut tags: Vec<(u64, Vec<u8>)> = Vec::new();
            if self.previous_producer_id != -1 {
                tags.push((0, self.previous_producer_id.to_be_bytes().to_vec()));
            }
            if self.next_producer_id != -1 {
                tags.push((1, self.next_producer_id.to_be_bytes().to_vec()));
            }
            if self.client_transaction_version != 0 {
                tags.push((2, self.client_transaction_version.to_be_bytes().to_vec()));
            }
            if self.next_producer_epoch != -1 {
                tags.push((3, self.next_producer_epoch.to_be_bytes().to_vec()));
            }
            uvarint(&mut v, tags.len() as u64);
            for (tag, b) in tags {
                uvarint(&mut v, tag);
                uvarint(&mut v, b.len() as u64);
                v.extend_from_slice(&b);
            }
        }
        v
    }
}

fn uvarint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}
