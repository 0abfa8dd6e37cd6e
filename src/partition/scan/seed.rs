//! The producer snapshot a scan seeds its replay from when retention moved the log start
//! above 0 (`partition::state` `seed` says which snapshot is evidence and why).

use crate::discover::layout::PartitionDir;
use crate::partition::state::Replay;
use crate::read::format::snapshot::ProducerSnapshot;
use crate::read::segment::{self, FileClass, MmapMode};

/// Seed `replay` from the partition's newest snapshot at or below `first_base`, the first
/// held segment's base offset (`ProducerStateManager.loadFromSnapshot`: the latest
/// snapshot, a corrupt one skipped for the next older), when that snapshot is the one at
/// `first_base` itself. Returns the snapshot's name when seeded, and the snapshot that
/// could not be read (`Err`: the broker may read it, so neither it nor an older one is
/// taken for the state at the log start; the replay starts unseeded).
pub(super) fn seed_replay(
    p: &PartitionDir,
    first_base: i64,
    mmap: MmapMode,
    replay: &mut Replay,
) -> Result<Option<String>, (std::path::PathBuf, std::io::Error)> {
    if first_base <= 0 {
        return Ok(None);
    }
    let mut below: Vec<_> = p
        .snapshots
        .iter()
        .filter(|s| s.offset <= first_base)
        .collect();
    below.sort_by_key(|s| std::cmp::Reverse(s.offset));
    for s in below {
        let data = segment::load(&s.path, FileClass::ProducerSnapshot, mmap, None)
            .map_err(|e| (s.path.clone(), e))?;
        let Ok(snap) = ProducerSnapshot::parse(&data) else {
            continue; // CorruptSnapshotException: the broker falls back to the next older
        };
        if s.offset != first_base || data.changed() {
            // Below the first held batch by deleted offsets the snapshot does not cover.
            return Ok(None);
        }
        let name = s
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        replay.seed_from_snapshot(&name, s.offset, snap.entries());
        return Ok(Some(name));
    }
    Ok(None)
}
