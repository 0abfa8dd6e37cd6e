//! Leftovers: the log dir's own findings (`unclean_shutdown`, leftovers, unreadable
//! checkpoints) and a partition's leftover files, directory kind and orphaned indexes,
//! with what the broker's startup does with each (`LogLoader.removeTempFilesAndCollectSwapFiles`).

use super::{mk, name_of};
use crate::discover::layout::{DirKind, LeftoverKind, LogDir, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::partition::recovery::aliases::AliasFate;
use crate::partition::recovery::swaps::CompletedSwaps;
use crate::partition::recovery::{LeftoverAction, LogDirFiles};
use crate::partition::scan::PartitionReport;
use serde_json::json;

/// True when Kafka parses directory name `name` as a partition's
/// (`LocalLog.parseTopicPartitionName`): `topic-N`, or `topic-N.<id>-delete|-future|-stray`
/// in the form of its suffix's pattern (`^\S+-\S+\.\S+-suffix$`), the partition a number.
pub(crate) fn kafka_parses_partition_dir(name: &str) -> bool {
    if name.is_empty() || !name.contains('-') {
        return false;
    }
    // `^(\S+)-(\S+)\.(\S+)<suffix>$`: a '-' then a '.', each part non-empty.
    let suffix_form = |stem: &str| {
        !stem.chars().any(char::is_whitespace)
            && stem.char_indices().any(|(i, c)| {
                c == '-'
                    && i > 0
                    && stem[i + 1..]
                        .char_indices()
                        .any(|(k, d)| d == '.' && k > 0 && i + 1 + k + 1 < stem.len())
            })
    };
    let mut base = name;
    for suffix in ["-delete", "-future", "-stray"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            if !suffix_form(stem) {
                return false;
            }
            base = name.rsplit_once('.').map_or(name, |(b, _)| b);
        }
    }
    match base.rsplit_once('-') {
        Some((topic, partition)) => !topic.is_empty() && partition.parse::<i32>().is_ok(),
        None => false,
    }
}

/// `foreign_directory`: every directory of the log dir Kafka cannot parse as a partition's.
/// `LogManager.loadLogs` parses each child directory's name while it filters the ones to
/// load (only `remote-log-index-cache` is skipped first); the `KafkaException` it throws is
/// not an `IOException`, so the log dir is not marked offline: the load, and the broker's
/// start, fail. Read from the log dir itself (a log dir inside an archive is not listed).
fn foreign_directories(ld: &LogDir) -> Vec<Finding> {
    let Ok(entries) = std::fs::read_dir(&ld.path) else {
        return Vec::new();
    };
    let dir = ld.path.display().to_string();
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "remote-log-index-cache" && !kafka_parses_partition_dir(n))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            Finding::new(
                Kind::ForeignDirectory,
                "",
                -1,
                format!("{dir}: directory {n} is not in the form topic-partition (or topic-partition.id-delete/-future/-stray): the broker's log loading fails on it"),
            )
            .segment(n.clone())
            .evidence(json!({"log_dir": dir, "directory": n}))
            .broker("LogManager.loadLogs parses the name of every directory in the log dir (LocalLog.parseTopicPartitionName) and throws KafkaException (\"Kafka's log directories (and children) should only contain Kafka topic data\"); not an IOException, so the log dir is not taken offline: the broker does not start")
            .client_error("none from this directory: the broker does not start, so its clients fail over to other replicas or wait")
            .remediation(format!("move {n} out of the log dir before starting the broker (a file system's lost+found: point log.dirs at a subdirectory of the mount)"))
        })
        .collect()
}

/// Findings about the log dir itself: `unclean_shutdown`, its leftovers, unreadable
/// checkpoints, directories the load fails on.
pub(crate) fn log_dir_findings(
    ld: &LogDir,
    files: &LogDirFiles,
    broker_version: Option<crate::partition::recovery::BrokerVersion>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if !files.has_markers {
        return out;
    }
    out.extend(foreign_directories(ld));
    let dir = ld.path.display().to_string();
    if !files.clean_shutdown {
        out.push(
            Finding::new(
                Kind::UncleanShutdown,
                "",
                -1,
                format!("{dir}: no .kafka_cleanshutdown: the next start recovers every partition from its recovery point"),
            )
            .segment(dir.clone())
            .evidence(json!({"log_dir": dir}))
            .broker("LogManager treats the directory as not cleanly shut down: LogLoader runs LogSegment.recover on every segment at or above each partition's recovery point (CRC check, index rebuild, truncation at the first invalid batch)"),
        );
    }
    for (kind, path) in &ld.leftovers {
        let (action, _) = leftover_action(*kind, &name_of(path), &[]);
        out.push(
            Finding::new(
                Kind::LeftoverFile,
                "",
                -1,
                format!("{dir}: leftover {}: {action}", name_of(path)),
            )
            .segment(name_of(path))
            .evidence(json!({"file": path.display().to_string(), "leftover": kind}))
            .broker(action),
        );
    }
    super::small_files::offset_checkpoints(&dir, files, broker_version, &mut out);
    out
}

/// What startup does with a `.swap` leftover `name` under a noncanonical name, of fate
/// `fate` (`None`: as any, an unfinished split's).
fn alias_swap_action(name: &str, fate: &AliasFate) -> Option<String> {
    let stem = name.strip_suffix(".swap").unwrap_or(name);
    Some(match fate {
        AliasFate::SwapCreatesEmpty { swap, log, .. } => format!(
            "renamed to {stem} at startup, never read: the load opens {swap} in its place, creates it empty and renames it over {log}"
        ),
        AliasFate::SwapRenamed { to } => {
            format!("renamed to {to} at startup, never read under either name")
        }
        AliasFate::NegativeBase { segment } => format!(
            "renamed to {stem} at startup, never read: the load opens {segment}, a segment of a negative base (not predicted)"
        ),
        _ => return None,
    })
}

/// What startup does with a leftover (`LogLoader.removeTempFilesAndCollectSwapFiles`). `swaps` are the
/// partition's other leftovers, for the unfinished-split rule.
fn leftover_action(
    kind: LeftoverKind,
    name: &str,
    cleaned_offsets: &[i64],
) -> (String, &'static str) {
    let num: Option<i64> = name.split('.').next().and_then(|n| n.parse().ok());
    match kind {
        LeftoverKind::Deleted if name.ends_with(".checkpoint.deleted") => (
            "left alone by LogLoader (a KRaft snapshot scheduled for deletion: the Raft layer deletes it)".into(),
            "deleted",
        ),
        LeftoverKind::Deleted => ("deleted at startup (it was scheduled for deletion)".into(), "deleted"),
        LeftoverKind::Cleaned => (
            "deleted at startup (unfinished cleaner or split output)".into(),
            "cleaned",
        ),
        LeftoverKind::Swap
            if num.is_some_and(|n| cleaned_offsets.iter().any(|&c| n >= c)) =>
        {
            (
                "deleted at startup (belongs to an unfinished split: a .cleaned file at or below its offset exists)".into(),
                "swap",
            )
        }
        LeftoverKind::Swap => (
            "swap completed at startup: segment files whose base offset falls in the swapped range are deleted, then the suffix is dropped".into(),
            "swap",
        ),
        LeftoverKind::Tmp if name.ends_with(".checkpoint.part") => (
            "deleted by the Raft layer at startup (interrupted KRaft snapshot write)".into(),
            "tmp",
        ),
        LeftoverKind::Tmp => (
            "ignored; overwritten at the next atomic write of that file (interrupted checkpoint write)".into(),
            "tmp",
        ),
    }
}

/// What a broker before 3.0 does with `name`, a completed `.log.swap` (one of
/// `completed`) or the index `.swap` file at such a swap's base (`Log.loadSegments`:
/// `removeTempFilesAndCollectSwapFiles`, `completeSwapOperations`, `replaceSegments`);
/// `None` for another file.
fn swap_before_3_0_action(
    name: &str,
    swaps: Option<&CompletedSwaps>,
    completed: &std::collections::HashSet<&std::path::Path>,
) -> Option<String> {
    let sw = swaps?;
    let base: i64 = name.split('.').next()?.parse().ok()?;
    let swap = sw
        .segments
        .iter()
        .find(|s| s.base == base && completed.contains(s.path.as_path()))?;
    let log_swap = name_of(&swap.path);
    let stem = name.trim_end_matches(".swap");
    if name == log_swap {
        let replaced = sw.replaced_by(base)?;
        let replaced = match replaced.len() {
            0 => "no segment".to_string(),
            n if n > 20 => format!("{} and {} more", replaced[..20].join(", "), n - 20),
            _ => replaced.join(", "),
        };
        return Some(format!(
            "swap completed at startup (brokers before 3.0: Log.completeSwapOperations): the index files at its base are deleted, the swap segment is recovered whatever the shutdown, then replaces {replaced} (Log.replaceSegments: the segments its recovered offsets cover, renamed .deleted and deleted after file.delete.delay.ms) and {name} is renamed to {stem}"
        ));
    }
    index_swap_segment(name)?;
    Some(format!(
        "rebuilt at startup with {log_swap} (brokers before 3.0: Log.completeSwapOperations opens the swap segment with this index and LogSegment.recover resets and rebuilds it), then renamed to {stem} with it"
    ))
}

/// The base name of the segment (`…0500`) whose index `name` (`…0500.index.swap`, a
/// `.timeindex.swap` or `.txnindex.swap`) is the swap of.
fn index_swap_segment(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".swap")?;
    [".index", ".timeindex", ".txnindex"]
        .iter()
        .find_map(|sfx| stem.strip_suffix(sfx))
}

/// A partition's leftovers, directory kind and orphaned indexes: one `leftover_file`
/// finding each, and the actions the recovery prediction lists.
pub(super) fn partition_leftovers(
    (p, loaded, before_3_0): (&PartitionDir, &PartitionDir, bool),
    r: &PartitionReport,
    swaps: Option<&CompletedSwaps>,
    names: &super::names::NameFates<'_>,
    out: &mut Vec<Finding>,
) -> Vec<LeftoverAction> {
    let mut leftovers = Vec::new();
    let cleaned: Vec<i64> = p
        .leftovers
        .iter()
        .filter(|(k, _)| *k == LeftoverKind::Cleaned)
        .filter_map(|(_, path)| name_of(path).split('.').next()?.parse().ok())
        .collect();
    // One range, from the lowest swap base to the highest next offset among them, is
    // cleared of every other file before the swaps are renamed (`swaps`); a segment at a
    // swapped-in base is overwritten by the rename. Named once (the first 20), whatever
    // the number of swaps.
    let completed: std::collections::HashSet<&std::path::Path> = swaps
        .map(|sw| sw.segments.iter().map(|s| s.path.as_path()).collect())
        .unwrap_or_default();
    let replaced = swaps.map(|sw| {
        let names: Vec<String> = p
            .segments
            .iter()
            .filter(|s| sw.removes(s.base_offset))
            .filter_map(|s| s.log.as_deref().map(name_of))
            .collect();
        match names.len() {
            0 => "no segment".to_string(),
            n if n > 20 => format!("{} and {} more", names[..20].join(", "), n - 20),
            _ => names.join(", "),
        }
    });
    // Index `.swap` files the load renames over the index of a segment it keeps
    // (`swaps::with_index_swaps`), with that segment's log.
    let stand_in: std::collections::HashMap<&std::path::Path, String> = (loaded.segments.iter())
        .filter_map(|s| Some((s, name_of(s.log.as_deref()?))))
        .flat_map(|(s, log)| {
            [&s.index, &s.timeindex, &s.txnindex]
                .into_iter()
                .flatten()
                .map(move |f| (f.as_path(), log.clone()))
        })
        .filter(|(f, _)| f.extension().is_some_and(|x| x == "swap"))
        .collect();
    for (kind, path) in &p.leftovers {
        let name = name_of(path);
        // A `.cleaned` or `.swap` name the load cannot parse fails it first
        // (`unparseable_file_name`): nothing is done with the file.
        if crate::discover::layout::unparseable_offset_name(&name).is_some() {
            continue;
        }
        let (action, k) = leftover_action(*kind, &name, &cleaned);
        let mut action = action;
        if let Some(a) = names.of(path).and_then(|f| alias_swap_action(&name, f)) {
            // A `.swap` file under a noncanonical name: the load opens another in its place.
            action = a;
        } else if let Some(a) = (before_3_0)
            .then(|| swap_before_3_0_action(&name, swaps, &completed))
            .flatten()
        {
            action = a;
        } else if let Some(seg) = (before_3_0).then(|| index_swap_segment(&name)).flatten() {
            action = format!(
                "kept, and the index files of segment {seg} deleted at startup (brokers before 3.0: Log.removeTempFilesAndCollectSwapFiles deletes the indexes of an interrupted swap's base, rebuilt when the segment is recovered for its missing index)"
            );
        } else if let Some(log) = stand_in.get(path.as_path()) {
            action = format!(
                "swap completed at startup: renamed to {} over the index of {log}, which the load keeps: its sanity check and lookups read this file's bytes",
                name.trim_end_matches(".swap")
            );
        } else if let (Some(sw), Some(replaced)) = (swaps, &replaced)
            && completed.contains(path.as_path())
        {
            action = format!(
                "swap completed at startup: range [{}, {}) replaces {replaced} then {name} is renamed to {}",
                sw.from,
                sw.to,
                name.trim_end_matches(".swap")
            );
        }
        out.push(
            mk(
                r,
                Kind::LeftoverFile,
                &name,
                format!("leftover {name}: {action}"),
            )
            .evidence(json!({"file": path.display().to_string(), "leftover": kind}))
            .broker(action.clone()),
        );
        leftovers.push(LeftoverAction {
            file: name,
            kind: k.into(),
            action,
        });
    }
    dir_kind_leftover(p, r, out, &mut leftovers);
    for s in p.orphan_indexes() {
        for f in [&s.index, &s.timeindex, &s.txnindex].into_iter().flatten() {
            let name = name_of(f);
            let action = if names.adopted.contains(&f.as_path()) {
                "kept: the load creates its .log, empty, for a file under another name of the same offset that it meets first (noncanonical_segment_name), and this becomes that segment's index"
            } else {
                "deleted at startup (orphaned index file: its .log is missing)"
            };
            out.push(
                mk(r, Kind::LeftoverFile, &name, format!("{name}: {action}"))
                    .evidence(json!({"file": f.display().to_string()}))
                    .broker(action),
            );
            leftovers.push(LeftoverAction {
                file: name,
                kind: "orphan_index".into(),
                action: action.into(),
            });
        }
    }
    leftovers
}

/// The `leftover_file` finding and action of a partition directory whose name says what
/// the load does with it (`-delete`, `-future`, `-stray`).
fn dir_kind_leftover(
    p: &PartitionDir,
    r: &PartitionReport,
    out: &mut Vec<Finding>,
    leftovers: &mut Vec<LeftoverAction>,
) {
    let Some(kind) = &p.kind else {
        return;
    };
    let what = match kind {
        DirKind::Normal => None,
        DirKind::Delete { .. } => Some((
            "delete_dir",
            "loaded without recovery, then deleted: LogLoader.load skips recoverLog for a -delete directory (recovery point and log end 0, the leader-epoch cache emptied, the producer state rebuilt only to offset 0) and LogManager.loadLog queues the log for deletion (removed once file.delete.delay.ms, 60 s by default, has passed)",
        )),
        DirKind::Future { .. } => Some((
            "future_dir",
            "loaded as a future replica (the destination of a move between log dirs)",
        )),
        DirKind::Stray { .. } => Some((
            "stray_dir",
            "kept aside as a stray log: LogManager.loadLog loads and recovers it into strayLogs, apart from the partition's live log; the broker never serves it and never removes it (an operator does, once the live replicas are checked)",
        )),
    };
    if let Some((k, action)) = what {
        let name = name_of(&p.path);
        out.push(
            mk(
                r,
                Kind::LeftoverFile,
                &name,
                format!("directory {name}: {action}"),
            )
            .evidence(json!({"dir": p.path.display().to_string(), "dir_kind": kind}))
            .broker(action),
        );
        leftovers.push(LeftoverAction {
            file: name,
            kind: k.into(),
            action: action.into(),
        });
    }
}

/// The `leftover_file` findings of a load that fails before it does what `actions` (file,
/// action: what startup does once the load gets there) say: their message and broker text
/// take the prediction's words for that file (`not reached`, `done only if …`).
pub(super) fn not_reached(
    actions: &[(String, String)],
    prediction: &crate::partition::recovery::RecoveryPrediction,
    out: &mut [Finding],
) {
    if prediction.load_failure.is_none() {
        return;
    }
    for (file, old) in actions {
        let Some(new) = (prediction.leftovers.iter())
            .find(|l| &l.file == file && l.action != *old)
            .map(|l| &l.action)
        else {
            continue;
        };
        for f in out.iter_mut() {
            // The file's finding, by its typed `segment` (every `leftover_file` names its
            // file there), not by its text.
            if f.kind == Kind::LeftoverFile
                && f.broker_behaviour == *old
                && f.segment.as_deref() == Some(file.as_str())
            {
                f.message = f.message.replace(old.as_str(), new);
                f.broker_behaviour = new.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::kafka_parses_partition_dir as ok;

    /// `LocalLog.parseTopicPartitionName`'s cases (`LogTest`/`UnifiedLogTest`
    /// `testParseTopicPartitionName*`): what loads, and what makes the load throw.
    #[test]
    fn directory_names_as_kafka_parses_them() {
        for good in [
            "orders-0",
            "my-topic-12",
            "__consumer_offsets-49",
            "__cluster_metadata-0",
            "orders-3.a1b2c3d4e5f6-delete",
            "orders-3.a1b2c3d4e5f6-future",
            "orders-3.a1b2c3d4e5f6-stray",
            "t-+5",
        ] {
            assert!(ok(good), "{good}");
        }
        for bad in [
            "",
            "lost+found",
            "backup-old",
            "orders",
            "-0",
            "orders-",
            ".snapshot",
            "orders-0-delete",
            "orders-0.-delete",
            "orders-3.a b-delete",
            "orders-x.abc-future",
        ] {
            assert!(!ok(bad), "{bad}");
        }
    }
}
