//! What the inputs say about each topic's cleanup policy, and what the KRaft metadata log
//! says about the cluster (`LogCleaner`: compaction removes whole batches,
//! so sequence and offset gaps are expected on compacted topics).
//!
//! A partition is known to be **compacted** when
//! * it is the group or transaction coordinator's log (`__consumer_offsets`,
//!   `__transaction_state`: the broker creates them with `cleanup.policy=compact`;
//!   `__share_group_state` and `__remote_log_metadata` are created `delete`), decided when
//!   the scan builds the partition context;
//! * `--compacted TOPIC,…` names its topic;
//! * the `cleaner-offset-checkpoint` of its log dir lists it (the log cleaner writes only
//!   the partitions it cleans: `LogCleanerManager` checkpoints compacted logs only); or
//! * the KRaft metadata log of the **same cluster** ([`crate::discover::identity::same_cluster`])
//!   holds a `ConfigRecord` (resource type TOPIC) `cleanup.policy` whose value lists
//!   `compact`, the latest such record of the topic winning.
//!
//! A partition is known to be **not compacted** when that latest `cleanup.policy` is
//! `delete` alone (and nothing above says compacted). Otherwise its policy is unknown
//! (`None`): the broker-wide `log.cleanup.policy` lives in `server.properties`, outside
//! the data.

use crate::discover::identity::{Identities, same_cluster};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::{Finding, Kind, Source};
use crate::read::format::Decompressor;
use crate::read::format::metadata::{MetaRecord, RESOURCE_TOPIC, decode_record};
use crate::read::segment::{self, Item, ReadPolicy};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The facts one `__cluster_metadata` partition copy holds (carried by evidence bundles:
/// `Serialize + Deserialize`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClusterMetadata {
    /// Where it was read.
    pub source: Source,
    /// Topic → latest `cleanup.policy` value (`None`: removed, back to the default).
    pub cleanup_policy: HashMap<String, Option<String>>,
    /// Topic name → partition ids, from `TopicRecord`/`PartitionRecord` (removed topics
    /// dropped).
    pub partitions: HashMap<String, BTreeSet<i32>>,
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
    /// The number of partitions of `topic`, when the metadata creates it.
    pub fn partition_count(&self, topic: &str) -> Option<i32> {
        self.partitions
            .get(topic)
            .filter(|s| !s.is_empty())
            .map(|s| s.len() as i32)
    }
}

/// Read a `__cluster_metadata` partition directory: its newest KRaft snapshot, then its
/// segments, in order (later records win).
pub fn read_cluster_metadata(
    p: &PartitionDir,
    source: Source,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> ClusterMetadata {
    let mut md = ClusterMetadata {
        source,
        ..Default::default()
    };
    let mut names: HashMap<[u8; 16], String> = HashMap::new();
    let mut dec = Decompressor::new(max_decompressed);
    let newest_snapshot = p.kraft_snapshots.iter().max_by_key(|s| s.file_name());
    // The metadata loader applies the snapshot, then the log from the snapshot's end offset
    // (its name's first 20 digits: the offset after its last record) on: the batches below
    // it are what the snapshot already holds (`MetadataLoader`, `KafkaRaftClient` reading
    // from the snapshot id).
    let from = newest_snapshot
        .and_then(|s| s.file_name()?.to_str()?.get(..20)?.parse::<i64>().ok())
        .unwrap_or(0);
    if let Some(s) = newest_snapshot {
        read_file(s, 0, max_bytes, &mut dec, &mut md, &mut names, false);
    }
    // The node opens its metadata log as after an unclean shutdown, from recovery point 0
    // (`KafkaMetadataLog.apply`), so every start recovers every segment: the first batch
    // failing its CRC, or bytes after the last whole batch that do not frame, truncate the
    // log there and the later segments go (`LogLoader.recoverLog`). What follows is never
    // applied by that node; the leadership history ends this copy there too
    // (`cluster::leadership`'s `recovery_stop`).
    for file in p.segments.iter().filter_map(|s| s.log.as_ref()) {
        if read_file(file, from, max_bytes, &mut dec, &mut md, &mut names, true) {
            break;
        }
    }
    md
}

/// Apply the records of `file`'s batches that end at or above offset `from`; with
/// `recover`, up to the first batch that fails its CRC, and whether the walk stopped
/// there or at bytes that do not frame (the node's recovery truncates there).
fn read_file(
    file: &Path,
    from: i64,
    max_bytes: Option<u64>,
    dec: &mut Decompressor,
    md: &mut ClusterMetadata,
    names: &mut HashMap<[u8; 16], String>,
    recover: bool,
) -> bool {
    let mut stopped = false;
    // An entry too large to hold is checked streaming, never buffered; its
    // records are not read, and that is kept to be said.
    let walked = segment::walk_entries_items(file, ReadPolicy::Read, max_bytes, |item| {
        if stopped {
            return;
        }
        let entry = match item {
            Item::Entry(e) => e,
            Item::Big(big) => {
                let head = big.header_only();
                let e = crate::read::format::RawEntry {
                    position: big.position,
                    bytes: &head,
                };
                if let Ok(b) = e.as_v2()
                    && !b.is_control()
                    && big.crc_valid()
                {
                    md.not_decoded.push(NotDecoded {
                        file: file.to_path_buf(),
                        position: big.position,
                        base_offset: b.base_offset(),
                        size: big.len,
                    });
                }
                return;
            }
        };
        let Ok(b) = entry.as_v2() else { return };
        if recover && !b.is_valid() {
            stopped = true;
            return;
        }
        if b.is_control() || !b.is_valid() || b.last_offset() < from {
            return;
        }
        let Ok(recs) = crate::read::format::batch_records(&b, dec) else {
            md.errors += 1;
            return;
        };
        for r in recs {
            let Ok(r) = r else {
                md.errors += 1;
                break;
            };
            let Some(value) = r.value else { continue };
            match decode_record(value) {
                Ok(rec) => apply(rec, md, names),
                Err(_) => md.errors += 1,
            }
        }
    });
    let unframed =
        matches!(walked, Ok((ref tail, _)) if !matches!(tail, crate::read::format::Tail::Clean));
    stopped || (recover && unframed)
}

fn apply(rec: MetaRecord, md: &mut ClusterMetadata, names: &mut HashMap<[u8; 16], String>) {
    match rec {
        MetaRecord::Topic { name, topic_id } => {
            md.partitions.entry(name.clone()).or_default();
            names.insert(topic_id, name);
        }
        MetaRecord::Partition(p) => {
            if let Some(name) = names.get(&p.topic_id) {
                md.partitions
                    .entry(name.clone())
                    .or_default()
                    .insert(p.partition_id);
            }
        }
        MetaRecord::RemoveTopic { topic_id } => {
            if let Some(name) = names.remove(&topic_id) {
                md.partitions.remove(&name);
                md.cleanup_policy.remove(&name);
            }
        }
        MetaRecord::Config {
            resource_type: RESOURCE_TOPIC,
            resource_name,
            name,
            value,
        } if name == "cleanup.policy" => {
            md.cleanup_policy.insert(resource_name, value);
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
                .unwrap_or_else(|| ClusterMetadata {
                    source: ids.source(p),
                    ..Default::default()
                }),
            None => read_cluster_metadata(p, ids.source(p), max_bytes, max_decompressed),
        })
        .collect()
}

/// Why a partition is (or is not) treated as compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Flag,
    CleanerCheckpoint,
    MetadataCompact,
    MetadataDelete,
}

impl Reason {
    /// How the report names the source of the knowledge.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::Flag => "--compacted",
            Reason::CleanerCheckpoint => "cleaner-offset-checkpoint",
            Reason::MetadataCompact => "cleanup.policy with compact (KRaft metadata log)",
            Reason::MetadataDelete => "cleanup.policy=delete (KRaft metadata log)",
        }
    }
}

/// Everything the inputs say about cleanup policies.
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    /// `(log dir, topic, partition)` listed in a `cleaner-offset-checkpoint`.
    cleaner: HashSet<(PathBuf, String, i32)>,
    /// The KRaft metadata logs read.
    pub metadata: Vec<ClusterMetadata>,
    /// Topics named by `--compacted`.
    flagged: HashSet<String>,
}

impl Knowledge {
    /// Read the cleaner checkpoints and metadata logs of `inv`.
    /// `flagged`: the topics of `--compacted`; `max_bytes`/`max_decompressed` bound the read
    /// of the metadata log as for a scan.
    pub fn load(
        inv: &Inventory,
        ids: &Identities,
        flagged: &[String],
        max_bytes: Option<u64>,
        max_decompressed: usize,
    ) -> Knowledge {
        use crate::read::format::checkpoint::{TextFileKind, parse_offset_checkpoint};
        let mut cleaner = HashSet::new();
        for ld in &inv.log_dirs {
            let Some(path) = &ld.cleaner_offset_checkpoint else {
                continue;
            };
            let Ok(bytes) = crate::read::segment::load(
                path,
                crate::read::segment::FileClass::Checkpoint,
                crate::read::segment::MmapMode::Never,
                None,
            ) else {
                continue;
            };
            // A malformed checkpoint says nothing (verify reports it).
            let Ok(entries) =
                parse_offset_checkpoint(&bytes, TextFileKind::CleanerOffsetCheckpoint)
            else {
                continue;
            };
            for e in entries {
                cleaner.insert((ld.path.clone(), e.topic, e.partition));
            }
        }
        Knowledge {
            cleaner,
            metadata: load_cluster_metadata(inv, ids, max_bytes, max_decompressed),
            flagged: flagged.iter().cloned().collect(),
        }
    }

    /// Whether `p` is compacted, and why (`None`: unknown).
    pub fn reason(&self, p: &PartitionDir, source: &Source) -> Option<Reason> {
        let tp = p.tp.as_ref()?;
        if self.flagged.contains(&tp.topic) {
            return Some(Reason::Flag);
        }
        if let Some(ld) = &p.log_dir
            && self
                .cleaner
                .contains(&(ld.clone(), tp.topic.clone(), tp.partition))
        {
            return Some(Reason::CleanerCheckpoint);
        }
        self.metadata_policy(p, source)
    }

    /// Whether `p`'s topic is compacted now, as far as the inputs say: `--compacted` names
    /// it, or the KRaft metadata log's latest `cleanup.policy` lists `compact`. A
    /// `cleaner-offset-checkpoint` entry proves the log was cleaned, not that it still is:
    /// `LogCleanerManager.updateCheckpoints` keeps the entry of every log that exists,
    /// whatever its policy became.
    pub fn compact_policy(&self, p: &PartitionDir, source: &Source) -> bool {
        p.tp.as_ref()
            .is_some_and(|tp| self.flagged.contains(&tp.topic))
            || self.metadata_policy(p, source) == Some(Reason::MetadataCompact)
    }

    /// What the same cluster's KRaft metadata log says of `p`'s topic's policy.
    fn metadata_policy(&self, p: &PartitionDir, source: &Source) -> Option<Reason> {
        let tp = p.tp.as_ref()?;
        let policy = self
            .metadata
            .iter()
            .filter(|m| same_cluster(source, &m.source).is_same())
            .find_map(|m| m.cleanup_policy.get(&tp.topic))?
            .as_deref()?;
        let parts: Vec<&str> = policy
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if parts.iter().any(|s| s.eq_ignore_ascii_case("compact")) {
            Some(Reason::MetadataCompact)
        } else if !parts.is_empty() && parts.iter().all(|s| s.eq_ignore_ascii_case("delete")) {
            Some(Reason::MetadataDelete)
        } else {
            None
        }
    }
}
