//! Which paths given on the command line are Kafka data (inputs).

use super::{PartFile, classify_partition_file, is_log_dir_marker};
use std::path::Path;

/// Whether a file given directly on the command line is Kafka data, judged by its name:
/// a segment-family file (`<offset>.log`, `.index`, `.timeindex`, `.txnindex`, `.snapshot`,
/// `<offset>-<epoch>.checkpoint`), a partition file (`leader-epoch-checkpoint`,
/// `partition.metadata`, `quorum-state`), a log-dir file ([`super::LOG_DIR_MARKERS`], `.lock`), or
/// a leftover of one of those (`.deleted`, `.cleaned`, `.swap`, `.tmp`). Anything else
/// (`/etc/passwd`, `data.bin`, an archive) is an input error whose message says why.
///
/// This is the one place that decides; archive support hooks in before it.
pub fn classify_input_file(path: &Path) -> Result<(), String> {
    if let Some(raw) = path.file_name()
        && raw.to_str().is_none()
    {
        // Never matched lossily (a lossy name could read as a Kafka one it is not).
        return Err(format!(
            "not analysed: the file name {} is not valid UTF-8 (a broker writes ASCII names)",
            crate::escape::os_name(raw)
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if is_log_dir_marker(&name) || name == ".lock" {
        return Ok(());
    }
    match classify_partition_file(&name) {
        PartFile::Unknown | PartFile::Leftover(_, false) => {}
        // Read as given only in the digits form (`5.log`: `PartitionDir::add_given_file`).
        PartFile::Noncanonical(..) if super::parse_segment_file_name(&name).is_none() => {}
        _ => return Ok(()),
    }
    let lower = name.to_ascii_lowercase();
    let archive = [
        ".tar", ".tgz", ".tar.gz", ".gz", ".zip", ".tar.zst", ".zst", ".xz", ".bz2",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext));
    let in_index_cache = (path.parent().and_then(|p| p.file_name()))
        .is_some_and(|n| n == super::REMOTE_LOG_INDEX_CACHE);
    Err(if archive {
        "not Kafka data: an archive (unpack it and give the directory)".to_string()
    } else if in_index_cache {
        // `RemoteIndexCache`'s `<start offset>_<segment id>.index` (`.timeindex`,
        // `.txnindex`, and their `.tmp` and `.deleted`): never a partition's file.
        "not a partition file: a file of a broker's remote index cache (RemoteIndexCache: a copy of a remote segment's index, never loaded as a log); give the log dir that holds the cache".to_string()
    } else {
        "not Kafka data: not a Kafka file name (expected a broker log dir, a partition directory, or a file such as 00000000000000000000.log, .index, .timeindex, .txnindex, .snapshot, leader-epoch-checkpoint, meta.properties)".to_string()
    })
}
