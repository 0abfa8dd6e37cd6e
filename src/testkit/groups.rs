//! An encoder of coordinator records (`__consumer_offsets`, `__share_group_state`),
//! written from Kafka's message schemas (`OffsetCommitKey.json` and its siblings) in a
//! notation of its own and sharing no code with the decoder in `crate::read::format::groups`, so each checks the other.
//!
//! Records are given as the JSON the newest `kafka-dump-log` prints for them (field names
//! with a lower-case first letter, bytes in base64, uuids in Kafka's URL-safe base64);
//! fields left out take their default, tagged fields at their default are not written.
//!
//! ```
//! use klogscan::testkit::groups::record;
//! use serde_json::json;
//! let (k, v) = record(3, json!({"groupId": "g"}), Some((0, json!({"epoch": 5}))));
//! assert_eq!(k, [0, 3, 0, 1, b'g']);
//! assert_eq!(v.unwrap(), [0, 0, 0, 0, 0, 5, 0]);
//! ```

use base64::Engine;
use serde_json::{Map, Value, json};

/// One record type: key and value field lists in the notation below, the value's highest
/// version and first flexible version (`99`: never).
///
/// Notation: fields separated by spaces, each `Name:type` with `?` (nullable),
/// `@a-b` / `@a+` (versions, default `0+`), `#t=d` (tagged field `t`, default `d`:
/// an integer or `null`; `#t` alone: default 0/empty). Types: `i8 i16 i32 i64 u16 bool
/// uuid string bytes`, `[type]` (array), `{fields}` (struct).
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub id: i16,
    pub key: &'static str,
    pub value: &'static str,
    pub max_version: i16,
    pub flexible_from: i16,
}

const fn sp(id: i16, key: &'static str, value: &'static str) -> Spec {
    Spec {
        id,
        key,
        value,
        max_version: 0,
        flexible_from: 0,
    }
}

const G: &str = "GroupId:string";
const GM: &str = "GroupId:string MemberId:string";
const PM: &str = "Topics:[{TopicId:uuid TopicName:string NumPartitions:i32 PartitionMetadata:[{Partition:i32 Racks:[string]}]}]";
const TASKS: &str = "{SubtopologyId:string Partitions:[i32]}";

/// `__consumer_offsets` record types 0–24.
pub static CONSUMER_OFFSETS: &[Spec] = &[
    Spec {
        id: 0,
        key: "group:string topic:string partition:i32",
        value: "offset:i64 metadata:string commitTimestamp:i64",
        max_version: 0,
        flexible_from: 99,
    },
    Spec {
        id: 1,
        key: "group:string topic:string partition:i32",
        value: "offset:i64 leaderEpoch:i32@3+ metadata:string commitTimestamp:i64 expireTimestamp:i64@1-1 topicId:uuid@4+#0",
        max_version: 4,
        flexible_from: 4,
    },
    Spec {
        id: 2,
        key: "group:string",
        value: "protocolType:string generation:i32 protocol:string? leader:string? currentStateTimestamp:i64@2+ members:[{memberId:string groupInstanceId:string?@3+ clientId:string clientHost:string rebalanceTimeout:i32@1+ sessionTimeout:i32 subscription:bytes assignment:bytes}]",
        max_version: 4,
        flexible_from: 4,
    },
    sp(3, G, "Epoch:i32 MetadataHash:i64#0"),
    sp(4, G, PM),
    sp(
        5,
        GM,
        "InstanceId:string? RackId:string? ClientId:string ClientHost:string SubscribedTopicNames:[string] SubscribedTopicRegex:string? RebalanceTimeoutMs:i32 ServerAssignor:string? ClassicMemberMetadata:{SessionTimeoutMs:i32 SupportedProtocols:[{Name:string Metadata:bytes}]}?#0=null",
    ),
    sp(6, G, "AssignmentEpoch:i32 AssignmentTimestamp:i64#0"),
    sp(7, GM, "TopicPartitions:[{TopicId:uuid Partitions:[i32]}]"),
    sp(
        8,
        GM,
        "MemberEpoch:i32 PreviousMemberEpoch:i32 State:i8 AssignedPartitions:[{TopicId:uuid Partitions:[i32] AssignmentEpochs:[i32]?#0=null}] PartitionsPendingRevocation:[{TopicId:uuid Partitions:[i32] AssignmentEpochs:[i32]?#0=null}]",
    ),
    sp(9, G, PM),
    sp(
        10,
        GM,
        "RackId:string? ClientId:string ClientHost:string SubscribedTopicNames:[string]",
    ),
    sp(11, G, "Epoch:i32 MetadataHash:i64"),
    sp(12, G, "AssignmentEpoch:i32 AssignmentTimestamp:i64#0"),
    sp(13, GM, "TopicPartitions:[{TopicId:uuid Partitions:[i32]}]"),
    sp(
        14,
        GM,
        "MemberEpoch:i32 PreviousMemberEpoch:i32 State:i8 AssignedPartitions:[{TopicId:uuid Partitions:[i32]}]",
    ),
    sp(
        15,
        G,
        "InitializingTopics:[{TopicId:uuid TopicName:string Partitions:[i32]}] InitializedTopics:[{TopicId:uuid TopicName:string Partitions:[i32]}] DeletingTopics:[{TopicId:uuid TopicName:string}]",
    ),
    sp(
        16,
        "GroupId:string RegularExpression:string",
        "Topics:[string] Version:i64 Timestamp:i64",
    ),
    sp(
        17,
        G,
        "Epoch:i32 MetadataHash:i64 ValidatedTopologyEpoch:i32#0=-1 LastAssignmentConfigs:[{Key:string Value:string}]?#1=null StoredDescriptionTopologyEpoch:i32#2=-1 FailedDescriptionTopologyEpoch:i32#3=-1",
    ),
    sp(18, G, PM),
    sp(
        19,
        GM,
        "InstanceId:string? RackId:string? ClientId:string ClientHost:string RebalanceTimeoutMs:i32 TopologyEpoch:i32 ProcessId:string UserEndpoint:{Host:string Port:u16}? ClientTags:[{Key:string Value:string}]",
    ),
    sp(20, G, "AssignmentEpoch:i32 AssignmentTimestamp:i64#0"),
    sp(21, GM, const_format_tasks::TARGET),
    sp(22, GM, const_format_tasks::CURRENT),
    sp(
        23,
        G,
        "Epoch:i32 Subtopologies:[{SubtopologyId:string SourceTopics:[string] SourceTopicRegex:[string] StateChangelogTopics:[{Name:string Partitions:i32 ReplicationFactor:i16 TopicConfigs:[{key:string value:string}]}] RepartitionSinkTopics:[string] RepartitionSourceTopics:[{Name:string Partitions:i32 ReplicationFactor:i16 TopicConfigs:[{key:string value:string}]}] CopartitionGroups:[{SourceTopics:[i16] SourceTopicRegex:[i16] RepartitionSourceTopics:[i16]}]}]",
    ),
    sp(
        24,
        G,
        "AssignmentEpoch:i32 ResolvedTopicIdsBySubtopology:[{SubtopologyId:string TopicIds:[uuid]}]",
    ),
];

mod const_format_tasks {
    pub const TARGET: &str = "ActiveTasks:[{SubtopologyId:string Partitions:[i32]}] StandbyTasks:[{SubtopologyId:string Partitions:[i32]}] WarmupTasks:[{SubtopologyId:string Partitions:[i32]}]";
    pub const CURRENT: &str = "MemberEpoch:i32 PreviousMemberEpoch:i32 State:i8 ActiveTasks:[{SubtopologyId:string Partitions:[i32]}] StandbyTasks:[{SubtopologyId:string Partitions:[i32]}] WarmupTasks:[{SubtopologyId:string Partitions:[i32]}] ActiveTasksPendingRevocation:[{SubtopologyId:string Partitions:[i32]}] StandbyTasksPendingRevocation:[{SubtopologyId:string Partitions:[i32]}] WarmupTasksPendingRevocation:[{SubtopologyId:string Partitions:[i32]}]";
}
#[allow(dead_code)]
const _TASKS: &str = TASKS;

/// `__share_group_state` record types 0–1.
pub static SHARE_GROUP_STATE: &[Spec] = &[
    sp(
        0,
        "GroupId:string TopicId:uuid Partition:i32",
        "SnapshotEpoch:i32 StateEpoch:i32 LeaderEpoch:i32 StartOffset:i64 DeliveryCompleteCount:i32#0=-1 CreateTimestamp:i64 WriteTimestamp:i64 StateBatches:[{FirstOffset:i64 LastOffset:i64 DeliveryState:i8 DeliveryCount:i16}]",
    ),
    sp(
        1,
        "GroupId:string TopicId:uuid Partition:i32",
        "SnapshotEpoch:i32 LeaderEpoch:i32 StartOffset:i64 DeliveryCompleteCount:i32#0=-1 StateBatches:[{FirstOffset:i64 LastOffset:i64 DeliveryState:i8 DeliveryCount:i16}]",
    ),
];

// ---------------------------------------------------------------------------------------
// The notation, parsed.

/// A parsed type.
#[derive(Debug, Clone, PartialEq)]
pub enum T {
    Prim(&'static str),
    Arr(Box<T>),
    Obj(Vec<F>),
}

/// A parsed field.
#[derive(Debug, Clone, PartialEq)]
pub struct F {
    pub name: String,
    pub ty: T,
    pub nullable: bool,
    pub min: i16,
    pub max: i16,
    /// `(tag, default)`; default `None` = null.
    pub tag: Option<(u32, Option<i64>)>,
}

impl F {
    /// The JSON name.
    pub fn json_name(&self) -> String {
        let mut c = self.name.chars();
        c.next()
            .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
            .unwrap_or_default()
    }
}

const PRIMS: &[&str] = &[
    "i8", "i16", "i32", "i64", "u16", "bool", "uuid", "string", "bytes",
];

/// Parse a field list.
pub fn parse(spec: &str) -> Vec<F> {
    let b = spec.as_bytes();
    let mut pos = 0;
    let out = fields(b, &mut pos);
    assert_eq!(pos, b.len(), "trailing text in {spec}");
    out
}

fn fields(b: &[u8], pos: &mut usize) -> Vec<F> {
    let mut out = Vec::new();
    loop {
        while *pos < b.len() && b[*pos] == b' ' {
            *pos += 1;
        }
        if *pos >= b.len() || b[*pos] == b'}' {
            return out;
        }
        let start = *pos;
        while b[*pos] != b':' {
            *pos += 1;
        }
        let name = String::from_utf8(b[start..*pos].to_vec()).unwrap();
        *pos += 1;
        let ty = ty(b, pos);
        let mut f = F {
            name,
            ty,
            nullable: false,
            min: 0,
            max: i16::MAX,
            tag: None,
        };
        while *pos < b.len() && matches!(b[*pos], b'?' | b'@' | b'#') {
            let c = b[*pos];
            *pos += 1;
            let word_start = *pos;
            while *pos < b.len() && !matches!(b[*pos], b' ' | b'}' | b'?' | b'@' | b'#') {
                *pos += 1;
            }
            let word = std::str::from_utf8(&b[word_start..*pos]).unwrap();
            match c {
                b'?' => f.nullable = true,
                b'@' => {
                    if let Some(a) = word.strip_suffix('+') {
                        f.min = a.parse().unwrap();
                    } else {
                        let (a, z) = word.split_once('-').unwrap();
                        f.min = a.parse().unwrap();
                        f.max = z.parse().unwrap();
                    }
                }
                _ => {
                    let (t, d) = word.split_once('=').unwrap_or((word, "0"));
                    let d = if d == "null" {
                        None
                    } else {
                        Some(d.parse().unwrap())
                    };
                    f.tag = Some((t.parse().unwrap(), d));
                }
            }
        }
        out.push(f);
    }
}

fn ty(b: &[u8], pos: &mut usize) -> T {
    match b[*pos] {
        b'[' => {
            *pos += 1;
            let t = ty(b, pos);
            assert_eq!(b[*pos], b']');
            *pos += 1;
            T::Arr(Box::new(t))
        }
        b'{' => {
            *pos += 1;
            let fs = fields(b, pos);
            assert_eq!(b[*pos], b'}');
            *pos += 1;
            T::Obj(fs)
        }
        _ => {
            let p = PRIMS
                .iter()
                .copied()
                .filter(|p| b[*pos..].starts_with(p.as_bytes()))
                .max_by_key(|p| p.len())
                .expect("a primitive type");
            *pos += p.len();
            T::Prim(p)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Encoding.

fn uv(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length prefix: compact (n+1, 0 = null) or int16/int32 (-1 = null).
fn len(out: &mut Vec<u8>, n: Option<usize>, flex: bool, wide: bool) {
    match (flex, wide) {
        (true, _) => uv(out, n.map_or(0, |n| n as u64 + 1)),
        (false, true) => out.extend_from_slice(&n.map_or(-1i32, |n| n as i32).to_be_bytes()),
        (false, false) => out.extend_from_slice(&n.map_or(-1i16, |n| n as i16).to_be_bytes()),
    }
}

fn b64(s: &str, url: bool) -> Vec<u8> {
    let e = if url {
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
    } else {
        &base64::engine::general_purpose::STANDARD
    };
    e.decode(s).expect("base64")
}

fn prim(out: &mut Vec<u8>, p: &str, v: &Value, nullable: bool, flex: bool) {
    let i = v.as_i64().unwrap_or(0);
    match p {
        "i8" => out.push(i as i8 as u8),
        "i16" => out.extend_from_slice(&(i as i16).to_be_bytes()),
        "u16" => out.extend_from_slice(&(i as u16).to_be_bytes()),
        "i32" => out.extend_from_slice(&(i as i32).to_be_bytes()),
        "i64" => out.extend_from_slice(&i.to_be_bytes()),
        "bool" => out.push(v.as_bool().unwrap_or(false) as u8),
        "uuid" => match v.as_str() {
            Some(s) => out.extend_from_slice(&b64(s, true)),
            None => out.extend_from_slice(&[0; 16]),
        },
        "string" => match v.as_str() {
            Some(s) => {
                len(out, Some(s.len()), flex, false);
                out.extend_from_slice(s.as_bytes());
            }
            None if nullable => len(out, None, flex, false),
            None => len(out, Some(0), flex, false),
        },
        "bytes" => match v.as_str() {
            Some(s) => {
                let b = b64(s, false);
                len(out, Some(b.len()), flex, true);
                out.extend_from_slice(&b);
            }
            None if nullable => len(out, None, flex, true),
            None => len(out, Some(0), flex, true),
        },
        other => panic!("type {other}"),
    }
}

fn enc(out: &mut Vec<u8>, t: &T, v: &Value, nullable: bool, flex: bool, version: i16) {
    match t {
        T::Prim(p) => prim(out, p, v, nullable, flex),
        T::Arr(e) => match v.as_array() {
            Some(a) => {
                len(out, Some(a.len()), flex, true);
                for x in a {
                    enc(out, e, x, false, flex, version);
                }
            }
            None if nullable => len(out, None, flex, true),
            None => len(out, Some(0), flex, true),
        },
        T::Obj(fs) => {
            if nullable {
                if v.is_null() {
                    out.push(0xff);
                    return;
                }
                out.push(1);
            }
            obj(out, fs, v, flex, version);
        }
    }
}

fn obj(out: &mut Vec<u8>, fs: &[F], v: &Value, flex: bool, version: i16) {
    let empty = Map::new();
    let m = v.as_object().unwrap_or(&empty);
    let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();
    for f in fs {
        if version < f.min || version > f.max {
            continue;
        }
        let x = m.get(&f.json_name()).cloned();
        match f.tag {
            Some((tag, _)) => {
                if !flex {
                    continue;
                }
                if let Some(x) = x {
                    let mut b = Vec::new();
                    enc(&mut b, &f.ty, &x, f.nullable, true, version);
                    tagged.push((tag, b));
                }
            }
            None => {
                let x = x.unwrap_or(Value::Null);
                let x = if x.is_null() && !f.nullable {
                    zero(&f.ty)
                } else {
                    x
                };
                enc(out, &f.ty, &x, f.nullable, flex, version)
            }
        }
    }
    if flex {
        tagged.sort_by_key(|t| t.0);
        uv(out, tagged.len() as u64);
        for (tag, b) in tagged {
            uv(out, tag as u64);
            uv(out, b.len() as u64);
            out.extend_from_slice(&b);
        }
    }
}

fn zero(t: &T) -> Value {
    match t {
        T::Prim("string") => json!(""),
        T::Prim("bytes") => json!(""),
        T::Prim("uuid") => json!("AAAAAAAAAAAAAAAAAAAAAA"),
        T::Prim(_) => json!(0),
        T::Arr(_) => json!([]),
        T::Obj(_) => json!({}),
    }
}

/// The spec of `id` in `table`.
pub fn spec(table: &'static [Spec], id: i16) -> &'static Spec {
    table
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no record type {id}"))
}

/// Key bytes: `int16 type` + the key fields (never flexible).
pub fn encode_key(s: &Spec, data: &Value) -> Vec<u8> {
    let mut out = s.id.to_be_bytes().to_vec();
    obj(&mut out, &parse(s.key), data, false, 0);
    out
}

/// Value bytes: `int16 version` + the value fields at `version`.
pub fn encode_value(s: &Spec, version: i16, data: &Value) -> Vec<u8> {
    let mut out = version.to_be_bytes().to_vec();
    obj(
        &mut out,
        &parse(s.value),
        data,
        version >= s.flexible_from,
        version,
    );
    out
}

/// A `__consumer_offsets` record of type `id`: key bytes and value bytes (`None`: a
/// tombstone).
pub fn record(id: i16, key: Value, value: Option<(i16, Value)>) -> (Vec<u8>, Option<Vec<u8>>) {
    let s = spec(CONSUMER_OFFSETS, id);
    (
        encode_key(s, &key),
        value.map(|(v, d)| encode_value(s, v, &d)),
    )
}

/// A `__share_group_state` record.
pub fn share_record(
    id: i16,
    key: Value,
    value: Option<(i16, Value)>,
) -> (Vec<u8>, Option<Vec<u8>>) {
    let s = spec(SHARE_GROUP_STATE, id);
    (
        encode_key(s, &key),
        value.map(|(v, d)| encode_value(s, v, &d)),
    )
}

// ---------------------------------------------------------------------------------------
// Random values (for the encoder/decoder cross-check).

/// A small xorshift generator.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0 | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// A number in `0..n` (0 when `n` is 0): an index into `n` things.
    pub fn pick(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// A random JSON value of the fields `fs` at `version`, as the dump prints it: tagged
/// fields either absent or not at their default; fields of other versions absent.
pub fn random_object(fs: &[F], version: i16, flex: bool, rng: &mut Rng, depth: u32) -> Value {
    let mut m = Map::new();
    for f in fs {
        if version < f.min || version > f.max {
            continue;
        }
        if let Some((_, d)) = f.tag {
            if !flex || rng.below(2) == 0 {
                continue;
            }
            let v = random(&f.ty, f.nullable && d.is_some(), version, rng, depth);
            let is_default = match d {
                Some(d) => v.as_i64() == Some(d) || (d == 0 && is_zero(&v)),
                None => v.is_null(),
            };
            if !is_default {
                m.insert(f.json_name(), v);
            }
            continue;
        }
        m.insert(
            f.json_name(),
            random(&f.ty, f.nullable, version, rng, depth),
        );
    }
    Value::Object(m)
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_i64() == Some(0),
        Value::String(s) => s.is_empty() || s == "AAAAAAAAAAAAAAAAAAAAAA",
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn random(t: &T, nullable: bool, version: i16, rng: &mut Rng, depth: u32) -> Value {
    if nullable && rng.below(4) == 0 {
        return Value::Null;
    }
    match t {
        T::Prim(p) => {
            let r = rng.next_u64();
            match *p {
                "i8" => json!(r as i8),
                "i16" => json!(r as i16),
                "u16" => json!(r as u16),
                "i32" => json!(r as i32),
                "i64" => json!(r as i64),
                "bool" => json!(r & 1 == 1),
                "uuid" => {
                    let b: Vec<u8> = (0..16).map(|_| rng.next_u64() as u8).collect();
                    json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
                }
                "bytes" => {
                    let b: Vec<u8> = (0..rng.below(6)).map(|_| rng.next_u64() as u8).collect();
                    json!(base64::engine::general_purpose::STANDARD.encode(b))
                }
                _ => {
                    let s: String = (0..rng.below(7))
                        .map(|_| b"abz-_.\"\\\xc3"[rng.below(8) as usize] as char)
                        .collect();
                    json!(s)
                }
            }
        }
        T::Arr(e) => {
            let n = if depth > 2 { 0 } else { rng.below(3) };
            Value::Array(
                (0..n)
                    .map(|_| random(e, false, version, rng, depth + 1))
                    .collect(),
            )
        }
        T::Obj(fs) => random_object(fs, version, true, rng, depth + 1),
    }
}
