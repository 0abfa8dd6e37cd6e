//! The reference time of the hanging-transaction rule: `--now`, else the newest trusted
//! batch timestamp of the partition's broker log dir — held against the broker's own clock
//! where the log dir shows it (docs/findings.md, "Reference time").
//!
//! A CreateTime is the client's: the leader keeps it as sent (`LogValidator.validateTimestamp`
//! refuses only what lies outside `log.message.timestamp.before/after.max.ms`, both
//! `Long.MAX_VALUE` by default before 4.0), so one producer whose clock runs ahead (a
//! device, a client stamping due times, MirrorMaker 2 keeping a source cluster's times)
//! moves the newest timestamp past the broker's present. The broker's clock shows in the
//! log dir's checkpoint files: `ReplicaManager.checkpointHighWatermarks` rewrites
//! `replication-offset-checkpoint` every `replica.high.watermark.checkpoint.interval.ms`
//! (5 s) while the log dir holds a partition, `LogManager` the recovery-point and log-start
//! checkpoints every 60 s (`log.flush.offset.checkpoint.interval.ms`,
//! `log.flush.start.offset.checkpoint.interval.ms`), and `.kafka_cleanshutdown` is written
//! at a clean shutdown. The newest of their modification times, plus one minute, bounds
//! the moment the broker stopped — on a copy that kept the times (`cp -p`, `rsync -a`,
//! `tar`) of a broker that shut down cleanly (`.kafka_cleanshutdown` present: a copy of a
//! running broker may hold checkpoints copied before later appends); a copy that did not
//! keep them gives the time it was made, later still, and changes nothing. The bound is
//! used only when the batches a broker's clock stamped (markers, LogAppendTime batches, the
//! coordinators' and controllers' topics) all lie within it: times altered otherwise (set
//! back to an archive's default) are not taken. A transaction whose own last write is
//! stamped past the bound is measured from the broker's clock before that write (the
//! replay's `clock_floor`), not from its producer's clock.

use super::ScanOptions;
use super::with_threads;
use crate::discover::layout::{self, Inventory, PartitionDir};
use crate::partition::event::{BatchEvent, Classified, classify};
use crate::partition::results::PartitionReport;
use crate::read::format::TimestampType;
use crate::read::segment::{self, ReadPolicy};
use rayon::prelude::*;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How long after its newest checkpoint write a broker may still have appended: the
/// longest default interval of the periodic checkpoints (60 s).
pub(crate) const CHECKPOINT_SLACK_MS: i64 = 60_000;

/// Where a partition's reference time came from.
pub(super) enum RefSource {
    /// `--now`.
    Given,
    /// The newest batch timestamp of the log dir (or the partition alone), and where.
    Newest(String),
    /// The broker's clock as its checkpoint files show it, below the newest batch
    /// timestamp: `(file, written at, newest batch timestamp, where)`.
    Checkpoint(&'static str, i64, i64, String),
    /// No timestamp anywhere.
    None,
}

impl RefSource {
    pub(super) fn evidence(&self, t: i64) -> serde_json::Value {
        match self {
            RefSource::Given => json!({"ms": t, "source": "--now"}),
            RefSource::Newest(from) => {
                json!({"ms": t, "source": format!("newest batch timestamp: {from}")})
            }
            RefSource::Checkpoint(file, written, newest, from) => json!({
                "ms": t,
                "source": format!(
                    "{file} last written at {written} by the broker's clock, plus one minute: the newest batch timestamp ({newest}, in {from}) is ahead of it, a producer's clock"
                ),
                "newest_batch_timestamp": newest,
                "checkpoint_written_ms": written,
            }),
            RefSource::None => json!({"ms": t, "source": "no batch timestamp found"}),
        }
    }
}

/// The newest timestamps of one reference key.
#[derive(Debug, Clone)]
struct Newest {
    /// The newest trusted batch timestamp, and the partition it is in.
    all: (i64, String),
    /// The newest a broker's clock set.
    broker: i64,
}

/// Each partition's reference time and its source, by [`reference_key`].
pub(super) struct References {
    newest: HashMap<Option<PathBuf>, Newest>,
    /// Per broker log dir, the newest modification time of its checkpoint files.
    written: HashMap<PathBuf, Option<(i64, &'static str)>>,
}

impl References {
    /// The reference time of partition `r` (`now`: `--now`).
    pub(super) fn of(
        &mut self,
        inv: &Inventory,
        r: &PartitionReport,
        now: Option<i64>,
    ) -> (i64, RefSource) {
        if let Some(now) = now {
            return (now, RefSource::Given);
        }
        let key = reference_key(inv, r.carried.log_dir.as_deref(), &r.path);
        let Some(n) = self.newest.get(&key) else {
            return (0, RefSource::None);
        };
        let (t, from) = n.all.clone();
        let broker_dir = key.as_ref().filter(|d| is_broker_log_dir(inv, d));
        let written = broker_dir.and_then(|d| {
            *(self.written.entry(d.clone())).or_insert_with(|| checkpoints_written(inv, d))
        });
        match written {
            Some((at, file)) => {
                let bound = at.saturating_add(CHECKPOINT_SLACK_MS);
                if n.broker != i64::MIN && n.broker <= bound && t > bound {
                    (bound.max(0), RefSource::Checkpoint(file, at, t, from))
                } else {
                    (t.max(0), RefSource::Newest(from))
                }
            }
            None => (t.max(0), RefSource::Newest(from)),
        }
    }
}

/// The newest modification time (ms) of log dir `dir`'s files a running broker rewrites
/// (the offset checkpoints, `.kafka_cleanshutdown`), and which — for a log dir whose broker
/// shut down cleanly only: `.kafka_cleanshutdown` is written once every append has stopped
/// (`LogManager.shutdown`) and deleted at the next start (`LogManager.loadLogs`). A copy of
/// a running broker has none, and its checkpoints may have been copied before later
/// appends; a crashed broker has none either, and is not told apart from it.
fn checkpoints_written(inv: &Inventory, dir: &Path) -> Option<(i64, &'static str)> {
    let ld = inv.log_dirs.iter().find(|l| l.path == dir)?;
    ld.clean_shutdown.as_ref()?;
    let files = [
        (
            &ld.replication_offset_checkpoint,
            "replication-offset-checkpoint",
        ),
        (
            &ld.recovery_point_checkpoint,
            "recovery-point-offset-checkpoint",
        ),
        (
            &ld.log_start_offset_checkpoint,
            "log-start-offset-checkpoint",
        ),
        (&ld.cleaner_offset_checkpoint, "cleaner-offset-checkpoint"),
        (&ld.clean_shutdown, ".kafka_cleanshutdown"),
    ];
    files
        .into_iter()
        .filter_map(|(p, name)| Some((modified_ms(p.as_deref()?)?, name)))
        .reduce(|best, e| if e.0 > best.0 { e } else { best })
}

/// A file's modification time in ms since the epoch (`None`: unknown, or before 1970).
fn modified_ms(p: &Path) -> Option<i64> {
    let t = std::fs::metadata(p).ok()?.modified().ok()?;
    let ms = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// Whether every batch of `p`'s topic is stamped by a broker's clock: the coordinators'
/// logs (`__consumer_offsets`, `__transaction_state`, `__share_group_state`), the
/// remote-log metadata a broker publishes, the controllers' `__cluster_metadata`.
fn broker_written(p: &PartitionReport) -> bool {
    layout::is_internal_topic(&p.topic) || layout::is_kraft_metadata(&p.topic)
}

/// The newest trusted batch timestamps per log dir (key: log dir, or the partition path
/// when it has none), with the partition the newest came from. Scanned partitions give
/// theirs; the other partitions of the same log dirs are read for their newest non-empty
/// segment's batch headers (CRC-checked: a flipped bit must not move the time).
pub(super) fn reference_times(
    inv: &Inventory,
    selected: &[&PartitionDir],
    scanned: &[PartitionReport],
    opts: &ScanOptions,
) -> References {
    let mut newest: HashMap<Option<PathBuf>, Newest> = HashMap::new();
    let mut offer = |key: Option<PathBuf>, (t, broker): (i64, i64), from: String| {
        if t == i64::MIN {
            return;
        }
        let e = newest.entry(key).or_insert(Newest {
            all: (i64::MIN, String::new()),
            broker: i64::MIN,
        });
        if t > e.all.0 {
            e.all = (t, from);
        }
        e.broker = e.broker.max(broker);
    };
    for r in scanned {
        let key = reference_key(inv, r.carried.log_dir.as_deref(), &r.path);
        let t = r.carried.max_timestamp;
        let broker = if broker_written(r) {
            t
        } else {
            r.carried.broker_timestamp
        };
        offer(key, (t, broker), r.path.clone());
    }
    let chosen: std::collections::HashSet<&Path> =
        selected.iter().map(|p| p.path.as_path()).collect();
    let dirs: std::collections::HashSet<&Path> = selected
        .iter()
        .filter_map(|p| p.log_dir.as_deref())
        .filter(|d| is_broker_log_dir(inv, d))
        .collect();
    let others: Vec<&PartitionDir> = inv
        .partitions
        .iter()
        .filter(|p| !chosen.contains(p.path.as_path()))
        .filter(|p| p.log_dir.as_deref().is_some_and(|d| dirs.contains(d)))
        .collect();
    type Found = (Option<PathBuf>, (i64, i64), String);
    let found: Vec<Found> = with_threads(opts.threads, || {
        others
            .par_iter()
            .filter_map(|p| {
                let (t, mut broker) = newest_segment_timestamp(p, opts)?;
                let topic = p.tp.as_ref().map_or("", |tp| tp.topic.as_str());
                if layout::is_internal_topic(topic) || layout::is_kraft_metadata(topic) {
                    broker = t;
                }
                Some((p.log_dir.clone(), (t, broker), p.path.display().to_string()))
            })
            .collect()
    });
    for (key, t, from) in found {
        offer(key, t, from);
    }
    References {
        newest,
        written: HashMap::new(),
    }
}

/// Whether `dir` is known to be one broker's log dir: it holds a broker file
/// (`meta.properties`, a checkpoint, `.kafka_cleanshutdown`, …). A directory recognised only
/// because it holds several partition directories (a hand-over of copies taken at different
/// times) is not: its partitions do not share a timeline.
fn is_broker_log_dir(inv: &Inventory, dir: &Path) -> bool {
    inv.broker_log_dir(dir)
}

/// Which partitions share a reference time: those of one broker log dir; otherwise each
/// partition alone.
fn reference_key(inv: &Inventory, log_dir: Option<&Path>, path: &str) -> Option<PathBuf> {
    match log_dir {
        Some(d) if is_broker_log_dir(inv, d) => Some(d.to_path_buf()),
        _ => Some(PathBuf::from(path)),
    }
}

/// The newest CRC-valid batch timestamp of a partition's newest segment that has one, and
/// the newest of its batches a broker's clock stamped (`i64::MIN`: none). Only headers are
/// needed: an entry too large to hold is CRC-checked streaming (`segment::Item::Big`) and
/// its timestamp read from its header, never buffered whole.
fn newest_segment_timestamp(p: &PartitionDir, opts: &ScanOptions) -> Option<(i64, i64)> {
    for s in p.segments.iter().rev() {
        let Some(log) = s.log.as_deref() else {
            continue;
        };
        let (mut newest, mut broker) = (i64::MIN, i64::MIN);
        let mut event = |e: crate::read::format::RawEntry<'_>, check_crc: bool| {
            let ev = match classify(e) {
                Classified::V2(b) => BatchEvent::from_v2(&b, 0, check_crc),
                Classified::Legacy(m) => BatchEvent::from_legacy(&m, 0, check_crc),
                Classified::Invalid(_) => return,
            };
            if ev.crc_valid && ev.timestamp_type != TimestampType::NoTimestampType {
                newest = newest.max(ev.max_timestamp);
                if ev.broker_stamped() {
                    broker = broker.max(ev.max_timestamp);
                }
            }
        };
        let _ =
            segment::walk_entries_items(log, ReadPolicy::Read, opts.max_bytes, |item| match item {
                segment::Item::Entry(e) => event(e, opts.check_crc),
                segment::Item::Big(b) if !opts.check_crc || b.crc_valid() => {
                    let head = b.header_only();
                    let e = crate::read::format::RawEntry {
                        position: b.position,
                        bytes: &head,
                    };
                    event(e, false);
                }
                segment::Item::Big(_) => {}
            });
        if newest != i64::MIN {
            return Some((newest, broker));
        }
    }
    None
}
