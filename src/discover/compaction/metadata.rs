//! One `__cluster_metadata` partition copy read for the cleanup policies it sets: the
//! image the node's metadata loader builds (`MetadataLoader` over `KafkaMetadataLog`),
//! reduced to `cleanup.policy` per topic incarnation, the broker-level
//! `log.cleanup.policy` values, and the partitions of each topic.

use crate::discover::identity::Identities;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::discover::layout::{Recovered, latest_kraft_snapshot, metadata_log_start};
use crate::finding::{Finding, Kind, Source};
use crate::read::format::Decompressor;
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::metadata::{MetaRecord, RESOURCE_BROKER, RESOURCE_TOPIC, decode_record};
use crate::read::segment::{self, Item, ReadPolicy};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The topic config key of the cleanup policy (`TopicConfig.CLEANUP_POLICY_CONFIG`).
pub const TOPIC_KEY: &str = "cleanup.policy";
/// Its broker-level synonym (`ServerLogConfigs.LOG_CLEANUP_POLICY_CONFIG`, the only one
/// `ServerTopicConfigSynonyms` lists for it), a dynamic broker config.
pub const BROKER_KEY: &str = "log.cleanup.policy";
/// The broker config whose dynamic values (`DynamicProducerStateManagerConfig`, applied to
/// every log's `ProducerStateManagerConfig`) decide how long an idle producer's state is
/// kept.
pub const PRODUCER_ID_EXPIRATION_KEY: &str = "producer.id.expiration.ms";

/// One incarnation of a topic (one topic id) and the `cleanup.policy` its logs lived
/// under.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Incarnation {
    pub name: String,
    /// Its own `cleanup.policy` (`None`: never set, or deleted: the broker levels decide).
    pub policy: Option<String>,
    /// For a deleted incarnation: the broker-level `log.cleanup.policy` values (broker
    /// resource name → value, `""` the cluster default) in force when it was deleted, the
    /// ones `LogManager` last applied to its logs. `None`: the topic is live (the log's
    /// latest values apply).
    pub removed_with: Option<BTreeMap<String, String>>,
}

/// The facts one `__cluster_metadata` partition copy holds (carried by evidence bundles:
/// `Serialize + Deserialize`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClusterMetadata {
    /// Where it was read.
    pub source: Source,
    /// Topic id (`Uuid.toString`, base64) → the incarnation: every topic the copy creates,
    /// live or deleted since.
    #[serde(default)]
    pub incarnations: HashMap<String, Incarnation>,
    /// Topic name → the id of its latest incarnation (live, else the last deleted).
    #[serde(default)]
    pub latest_id: HashMap<String, String>,
    /// Topic name → `cleanup.policy` set by name for a topic no `TopicRecord` of this copy
    /// creates (a log that holds the configs but not the topic's creation): Kafka keys
    /// configs by resource name, so it is the topic's whatever its id.
    #[serde(default)]
    pub unattached: HashMap<String, String>,
    /// Dynamic broker `log.cleanup.policy` values: broker resource name (a node id, `""`
    /// the cluster-wide default) → value.
    #[serde(default)]
    pub broker_policy: BTreeMap<String, String>,
    /// The smallest dynamic `producer.id.expiration.ms` the copy ever set, by broker
    /// resource name (a node id, `""` the cluster-wide default): a value may have been in
    /// force at any time of the history the copy spans (a deletion keeps the smallest).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub producer_id_expiration: BTreeMap<String, i64>,
    /// Topic name → partition ids, from `TopicRecord`/`PartitionRecord` (removed topics
    /// dropped).
    pub partitions: HashMap<String, BTreeSet<i32>>,
    /// The KRaft epoch of the last batch applied (or of the snapshot when none follows it)
    /// and the offset after it: with them copies are ordered as KRaft orders logs
    /// (`OffsetAndEpoch`, the epoch first), as `cluster::leadership` picks the furthest.
    #[serde(default)]
    pub last_epoch: i32,
    #[serde(default)]
    pub end_offset: i64,
    /// A bundle of an earlier build (before topic incarnations and broker levels): its
    /// topic → latest `cleanup.policy` by name (`None`: removed), read as
    /// [`Self::unattached`] is ([`Self::with_legacy`]); never written.
    #[serde(default, rename = "cleanup_policy", skip_serializing)]
    pub(crate) legacy_policy: HashMap<String, Option<String>>,
    /// Records that could not be decoded.
    pub errors: u64,
    /// Batches too large to hold (over `segment::BIG_ENTRY`): CRC-checked streaming, their
    /// records not read, so what is above may miss them (said by [`not_decoded_finding`]).
    pub not_decoded: Vec<NotDecoded>,
}

/// A metadata batch whose records were not read: larger than `segment::BIG_ENTRY`.
/// KRaft writes metadata batches of at most 8 MiB (`KafkaRaftClient`'s
/// `MAX_BATCH_SIZE_BYTES`), so no controller wrote one this large.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotDecoded {
    /// The file holding it (a segment or a KRaft snapshot).
    pub file: PathBuf,
    pub position: u64,
    pub base_offset: i64,
    /// The entry's length, `12 + size`.
    pub size: u64,
}

impl ClusterMetadata {
    /// `self` as read from a bundle: the by-name policies of an earlier build's bundle
    /// kept as policies by name, which is how that build read them.
    fn with_legacy(mut self) -> ClusterMetadata {
        for (topic, value) in std::mem::take(&mut self.legacy_policy) {
            if let Some(v) = value.filter(|_| !self.latest_id.contains_key(&topic)) {
                self.unattached.entry(topic).or_insert(v);
            }
        }
        self
    }

    /// The number of partitions of `topic`, when the metadata creates it.
    pub fn partition_count(&self, topic: &str) -> Option<i32> {
        self.partitions
            .get(topic)
            .filter(|s| !s.is_empty())
            .map(|s| s.len() as i32)
    }

    /// The incarnation a partition directory of `topic` belongs to: the one its
    /// `partition.metadata` names (`id`; `None` when this copy never created that id),
    /// else the topic's latest. A topic this copy never creates but sets a policy for by
    /// name is one incarnation whatever the id (see [`Self::unattached`]).
    pub fn incarnation(&self, topic: &str, id: Option<&[u8; 16]>) -> Option<Incarnation> {
        let Some(latest) = self.latest_id.get(topic) else {
            let policy = self.unattached.get(topic)?;
            return Some(Incarnation {
                name: topic.to_string(),
                policy: Some(policy.clone()),
                removed_with: None,
            });
        };
        let key = id.map_or_else(|| latest.clone(), encode_uuid);
        self.incarnations.get(&key).cloned()
    }
}

/// The replay's state besides what it keeps: Kafka's config image of TOPIC
/// `cleanup.policy`, keyed by resource name as `ConfigurationControlManager` keys it (a
/// `ConfigRecord` of a topic applies to whichever incarnation lives under the name), and
/// the live topic ids.
#[derive(Default)]
struct Replay {
    md: ClusterMetadata,
    /// Live topic id → name.
    names: HashMap<[u8; 16], String>,
    /// Topic name → `cleanup.policy`.
    topic_policy: BTreeMap<String, String>,
}

/// Read a `__cluster_metadata` partition directory as its node's metadata loader does
/// (`KafkaMetadataLog.apply`, `discover::layout::kraft_log`): the latest snapshot
/// `recoverSnapshots` keeps (greatest `OffsetAndEpoch`), then the segments' batches from
/// its end offset on, up to where the node's recovery truncates the log — unless
/// `truncateToLatestSnapshot` empties the log (the snapshot is past the recovered log),
/// when the snapshot alone is the image.
pub fn read_cluster_metadata(
    p: &PartitionDir,
    source: Source,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> ClusterMetadata {
    let snapshot = latest_kraft_snapshot(p);
    let mut recovered = Recovered::default();
    let mut r = read_copy(
        p,
        snapshot,
        Some(&mut recovered),
        max_bytes,
        max_decompressed,
    );
    if let Some((end, epoch, _)) = snapshot
        && recovered.truncates_fully(end, epoch, metadata_log_start(p))
    {
        r = read_copy(p, snapshot, None, max_bytes, max_decompressed);
    }
    let Replay {
        mut md,
        names,
        mut topic_policy,
    } = r;
    for (id, name) in names {
        let inc = Incarnation {
            policy: topic_policy.remove(&name),
            name,
            removed_with: None,
        };
        md.incarnations.insert(encode_uuid(&id), inc);
    }
    md.unattached = topic_policy
        .into_iter()
        .filter(|(name, _)| !md.latest_id.contains_key(name))
        .collect();
    md.source = source;
    md
}

/// The replay of `snapshot` (`(end offset, epoch, file)`), then — with `recovered` — the
/// segments' batches from its end offset on, recovery tracked in `recovered`.
fn read_copy(
    p: &PartitionDir,
    snapshot: Option<(i64, i32, &PathBuf)>,
    recovered: Option<&mut Recovered>,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Replay {
    let mut r = Replay::default();
    let mut dec = Decompressor::new(max_decompressed);
    // The metadata loader applies the snapshot, then the log from the snapshot's end offset
    // (the offset after its last record) on: the batches below it are what the snapshot
    // already holds (`MetadataLoader`, `KafkaRaftClient` reading from the snapshot id).
    let from = snapshot.map_or(0, |(end, _, _)| end);
    if let Some((end, epoch, file)) = snapshot {
        read_file(file, 0, max_bytes, &mut dec, &mut r, None);
        r.md.last_epoch = r.md.last_epoch.max(epoch);
        r.md.end_offset = r.md.end_offset.max(end);
    }
    let Some(rec) = recovered else { return r };
    // The node opens its metadata log as after an unclean shutdown, from recovery point 0
    // (`KafkaMetadataLog.apply`), so every start recovers every segment: the first batch
    // failing its CRC, or bytes after the last whole batch that do not frame, truncate the
    // log there and the later segments go (`LogLoader.recoverLog`). What follows is never
    // applied by that node; the leadership history ends this copy there too
    // (`cluster::leadership`'s `recovery_stop`).
    for file in p.segments.iter().filter_map(|s| s.log.as_ref()) {
        if rec.stopped {
            break;
        }
        read_file(file, from, max_bytes, &mut dec, &mut r, Some(rec));
    }
    r
}

/// Apply the records of `file`'s batches that end at or above offset `from`; with
/// `recovered` (a segment), each batch is fed to the recovery model and the walk stops at
/// the first batch that fails its CRC or at bytes that do not frame (the node's recovery
/// truncates there).
fn read_file(
    file: &Path,
    from: i64,
    max_bytes: Option<u64>,
    dec: &mut Decompressor,
    r: &mut Replay,
    mut recovered: Option<&mut Recovered>,
) {
    let segment = recovered.is_some();
    // An entry too large to hold is checked streaming, never buffered; its
    // records are not read, and that is kept to be said.
    let walked = segment::walk_entries_items(file, ReadPolicy::Read, max_bytes, |item| {
        if recovered.as_ref().is_some_and(|rec| rec.stopped) {
            return;
        }
        let entry = match item {
            Item::Entry(e) => e,
            Item::Big(big) => {
                if let Some(rec) = recovered.as_deref_mut() {
                    rec.unknown = true;
                }
                let head = big.header_only();
                let e = crate::read::format::RawEntry {
                    position: big.position,
                    bytes: &head,
                };
                if let Ok(b) = e.as_v2()
                    && !b.is_control()
                    && big.crc_valid()
                {
                    r.md.not_decoded.push(NotDecoded {
                        file: file.to_path_buf(),
                        position: big.position,
                        base_offset: b.base_offset(),
                        size: big.len,
                    });
                }
                return;
            }
        };
        let Ok(b) = entry.as_v2() else {
            if let Some(rec) = recovered.as_deref_mut() {
                rec.unknown = true;
            }
            return;
        };
        if let Some(rec) = recovered.as_deref_mut() {
            rec.batch(
                b.is_valid(),
                b.base_offset(),
                b.last_offset(),
                b.partition_leader_epoch(),
            );
            if rec.stopped {
                return;
            }
        }
        if !b.is_valid() || b.last_offset() < from {
            return;
        }
        if segment {
            r.md.last_epoch = r.md.last_epoch.max(b.partition_leader_epoch());
            r.md.end_offset = r.md.end_offset.max(b.last_offset().saturating_add(1));
        }
        if b.is_control() {
            return;
        }
        let Ok(recs) = crate::read::format::batch_records(&b, dec) else {
            r.md.errors += 1;
            return;
        };
        for rec in recs {
            let Ok(rec) = rec else {
                r.md.errors += 1;
                break;
            };
            let Some(value) = rec.value else { continue };
            match decode_record(value) {
                Ok(m) => apply(m, r),
                Err(_) => r.md.errors += 1,
            }
        }
    });
    if let Some(rec) = recovered {
        match walked {
            // Read only in part (`max_bytes`): the recovered end is unknown.
            Ok((_, read)) if std::fs::metadata(file).is_ok_and(|m| m.len() > read) => {
                rec.unknown = true
            }
            Ok((crate::read::format::Tail::Clean, _)) => {}
            // Bytes after the last whole batch that do not frame: truncated there.
            Ok(_) => rec.stopped = true,
            Err(_) => rec.unknown = true,
        }
    }
}

/// One metadata record, as the broker's image takes it: `TopicsDelta` for topics and
/// partitions, `ConfigurationsDelta` for configs (`ConfigurationControlManager.replay`: a
/// value sets the key of its resource, a null value removes it), and `RemoveTopicRecord`
/// removing every config of the topic (`ConfigurationControlManager.deleteTopicConfigs`)
/// — the deleted incarnation keeps the policy its logs lived under.
fn apply(rec: MetaRecord, r: &mut Replay) {
    let md = &mut r.md;
    match rec {
        MetaRecord::Topic { name, topic_id } => {
            md.partitions.entry(name.clone()).or_default();
            md.latest_id.insert(name.clone(), encode_uuid(&topic_id));
            r.names.insert(topic_id, name);
        }
        MetaRecord::Partition(p) => {
            if let Some(name) = r.names.get(&p.topic_id) {
                md.partitions
                    .entry(name.clone())
                    .or_default()
                    .insert(p.partition_id);
            }
        }
        MetaRecord::RemoveTopic { topic_id } => {
            if let Some(name) = r.names.remove(&topic_id) {
                md.partitions.remove(&name);
                let inc = Incarnation {
                    policy: r.topic_policy.remove(&name),
                    name,
                    removed_with: Some(md.broker_policy.clone()),
                };
                md.incarnations.insert(encode_uuid(&topic_id), inc);
            }
        }
        MetaRecord::Config {
            resource_type,
            resource_name,
            name,
            value,
        } => {
            if resource_type == RESOURCE_BROKER && name == PRODUCER_ID_EXPIRATION_KEY {
                // `DynamicBrokerConfig` validates it as a long; anything else was refused.
                if let Some(ms) = value.as_deref().and_then(|v| v.trim().parse::<i64>().ok()) {
                    let min = md.producer_id_expiration.entry(resource_name).or_insert(ms);
                    *min = (*min).min(ms);
                }
                return;
            }
            let map = match resource_type {
                RESOURCE_TOPIC if name == TOPIC_KEY => &mut r.topic_policy,
                RESOURCE_BROKER if name == BROKER_KEY => &mut md.broker_policy,
                _ => return,
            };
            match value {
                Some(v) => map.insert(resource_name, v),
                None => map.remove(&resource_name),
            };
        }
        _ => {}
    }
}

/// The `batch_not_decoded` finding of a metadata batch whose records were not read: the
/// cleanup policies and partition counts taken from this metadata log may miss what it
/// holds. `partition`: the `__cluster_metadata` partition number.
pub fn not_decoded_finding(partition: i32, n: &NotDecoded) -> Finding {
    let name = n
        .file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    Finding::new(
        Kind::BatchNotDecoded,
        "__cluster_metadata",
        partition,
        format!(
            "{name}: metadata batch at offset {} (byte {}) is {} bytes, more than the {} MiB klogscan holds in memory: its records were not read, so the cleanup policies and partition counts taken from this metadata log may miss them",
            n.base_offset,
            n.position,
            n.size,
            segment::BIG_ENTRY >> 20
        ),
    )
    .offset(n.base_offset)
    .position(n.position)
    .segment(name)
    .evidence(serde_json::json!({
        "size": n.size,
        "max_decoded_size": segment::BIG_ENTRY,
        "file": n.file.display().to_string(),
        "used_for": "cleanup.policy and partition counts (compaction, __transaction_state partition count)",
    }))
    .broker("never written by a controller: KRaft metadata batches are at most 8 MiB (KafkaRaftClient MAX_BATCH_SIZE_BYTES)")
    .remediation({
        let mut a = crate::escape::ShellArgs::default();
        format!(
            "inspect this batch with kafka-dump-log.sh --cluster-metadata-decoder --files {}; give klogscan scan --compacted for the topics whose cleanup.policy matters{}",
            a.dump_log_file(&n.file.display().to_string()),
            a.suffix()
        )
    })
}

/// Every `__cluster_metadata` partition of `inv`, read.
pub fn load_cluster_metadata(
    inv: &Inventory,
    ids: &Identities,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> Vec<ClusterMetadata> {
    inv.partitions
        .iter()
        .filter(|p| p.is_kraft_metadata() && ids.source(p).copy.is_live())
        .map(|p| match &inv.recorded {
            // An inventory rebuilt from bundles: what the collect read there.
            Some(r) => r
                .cluster_metadata
                .get(&p.path)
                .and_then(|json| serde_json::from_str(json).ok())
                .map(ClusterMetadata::with_legacy)
                .unwrap_or_else(|| ClusterMetadata {
                    source: ids.source(p),
                    ..Default::default()
                }),
            None => read_cluster_metadata(p, ids.source(p), max_bytes, max_decompressed),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle of the build before incarnations recorded `cleanup_policy` by name: read
    /// as that build read it (the topic's policy whatever its id), never lost.
    #[test]
    fn an_earlier_bundles_policies_by_name_are_kept() {
        let mut v = serde_json::to_value(ClusterMetadata::default()).unwrap();
        v["cleanup_policy"] = serde_json::json!({"orders": "compact", "gone": null});
        let md = serde_json::from_value::<ClusterMetadata>(v)
            .unwrap()
            .with_legacy();
        let inc = md.incarnation("orders", Some(&[7; 16])).unwrap();
        assert_eq!(inc.policy.as_deref(), Some("compact"));
        assert!(md.incarnation("gone", None).is_none());
        // Never written back.
        let out = serde_json::to_value(&md).unwrap();
        assert!(out.get("cleanup_policy").is_none(), "{out}");
        // A current bundle's own incarnations are not overridden.
        let mut cur = ClusterMetadata::default();
        cur.latest_id.insert("orders".into(), encode_uuid(&[1; 16]));
        cur.legacy_policy
            .insert("orders".into(), Some("compact".into()));
        assert!(cur.with_legacy().unattached.is_empty());
    }
}
