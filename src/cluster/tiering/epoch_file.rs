//! A replica's `leader-epoch-checkpoint` as the tiering check reads it: the lineage its
//! broker's `LeaderEpochFileCache` loads (`LeaderEpochCheckpointFile.read`), or why it
//! could not be read.
//!
//! A file that cannot be read is not one that is absent: the broker reads what klogscan
//! may not (permissions), or fails on what is in its place (a directory or a FIFO:
//! `CheckpointFileWithFailureHandler.read` throws `KafkaStorageException` and the log dir
//! goes offline). Its lineage is unknown, so the verdicts resting on it are not given
//! ([`super::checks`]), and the file is named once, as an `unreadable_file` finding.

use crate::discover::layout::{Inventory, LEADER_EPOCH_CHECKPOINT, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::partition::results::PartitionReport;
use crate::read::format::checkpoint::parse_leader_epoch_checkpoint;
use crate::read::segment::{FileClass, MmapMode, error_reason, load};
use std::path::{Path, PathBuf};

use super::lineage::Lineage;

/// A replica's `leader-epoch-checkpoint` that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub path: PathBuf,
    /// Why: the operating system's error, or what is in the file's place.
    pub error: String,
    /// The `evidence.reason` of its finding (`io_error`, `special_file`, …; what stands in
    /// the file's place, when `said`).
    pub reason: &'static str,
    /// Discovery named it already (a FIFO, a symlink not followed): no finding of its own.
    pub said: bool,
}

impl Unread {
    fn of(path: PathBuf, e: &std::io::Error) -> Self {
        Unread {
            path,
            error: e.to_string(),
            reason: error_reason(e).unwrap_or("io_error"),
            said: false,
        }
    }
}

/// The lineage of the replica in `p`: `Ok(None)` when it has no `leader-epoch-checkpoint`
/// or the file does not parse (`verify` reports that), `Err` when it could not be read —
/// a file without read permission, or, in its place, what discovery did not take for it:
/// a FIFO or a symlink not followed (discovery named them), a directory.
pub fn read(inv: &Inventory, p: &PartitionDir) -> Result<Option<Lineage>, Unread> {
    let read = |f: &Path| {
        load(f, FileClass::Checkpoint, MmapMode::Never, None)
            .map(|d| d.to_vec())
            .map_err(|e| Unread::of(f.to_path_buf(), &e))
    };
    let found = p.leader_epoch_checkpoint.as_deref();
    let bytes = match (found, &inv.recorded) {
        // Not listed as the file (a whole directory listed): absent, unless something
        // else holds its name.
        (None, None) if !p.partial => match in_its_place(inv, p)? {
            Some(f) => Some(read(&f)?),
            None => None,
        },
        _ => {
            let mut failed = None;
            let bytes = inv.small_file(&p.path, found, LEADER_EPOCH_CHECKPOINT, |f| {
                read(f).map_err(|u| failed = Some(u)).ok()
            });
            if let Some(u) = failed {
                return Err(u);
            }
            bytes
        }
    };
    Ok(bytes
        .and_then(|b| parse_leader_epoch_checkpoint(&b).ok())
        .map(|v| Lineage::new(v.into_iter().map(|e| (e.epoch, e.start_offset)))))
}

/// What holds the name `leader-epoch-checkpoint` in `p` when discovery did not take it
/// for the file: `Err` when discovery named it (a FIFO, a symlink not followed); the
/// path of a directory (or a symlink followed to one), which `load` then refuses; `None`
/// when nothing does.
fn in_its_place(inv: &Inventory, p: &PartitionDir) -> Result<Option<PathBuf>, Unread> {
    let path = p.path.join(LEADER_EPOCH_CHECKPOINT);
    if let Some((_, why)) = inv.errors.iter().find(|(e, _)| *e == path) {
        return Err(Unread {
            path,
            error: why.clone(),
            reason: "special_file",
            said: true,
        });
    }
    Ok(p.unknown.contains(&path).then_some(path))
}

/// The `unreadable_file` finding of `u`, on replica `r` (worded as `verify`'s and the
/// other checks' findings of the same file, so that a run meeting it twice says it once).
pub fn finding(r: &PartitionReport, u: &Unread) -> Finding {
    Finding::new(
        Kind::UnreadableFile,
        &r.topic,
        r.partition,
        format!("cannot read {}: {}", u.path.display(), u.error),
    )
    .segment(LEADER_EPOCH_CHECKPOINT)
    .evidence(serde_json::json!({"reason": u.reason, "error": u.error}))
    .broker("not applicable: the tiered-storage verdicts resting on this replica's leader-epoch lineage were not given (remote segments outside the lineage, the log start offset against the remote segments, which gaps a stopped metadata consumer caused); gaps no leader epoch serves are still reported")
}
