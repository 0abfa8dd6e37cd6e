//! The `noncanonical_segment_name` findings: what the next load does with each segment file
//! under a name the broker does not give it ([`super::aliases`]). The scan makes them (it
//! reads no such file, and says so), and `verify` carries them with the prediction's
//! startup actions ([`startup_action`]).

use super::aliases::{Alias, AliasFate};
use crate::finding::{Finding, Kind, Severity};
use serde_json::json;
use std::path::Path;

/// `evidence` with `"symlink": true` when `path` is a symlink (the broker's listing
/// follows it, `File.isFile`; discovery does not without `--follow`, and never reads it).
pub(crate) fn with_symlink(mut evidence: serde_json::Value, path: &Path) -> serde_json::Value {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        evidence["symlink"] = json!(true);
    }
    evidence
}

/// The texts of one alias's finding: severity, fate id, message, broker behaviour, client
/// error, remediation, and the prediction's startup action (`None`: none of its own, a
/// `.swap` leftover's action is the leftover check's).
struct AliasTexts {
    severity: Severity,
    fate: &'static str,
    message: String,
    broker: String,
    client: Option<&'static str>,
    remediation: String,
    action: Option<String>,
}

/// The finding texts of alias `a` of fate `fate` ([`AliasTexts`]); `None` for a `.swap`
/// file an unfinished split deletes (the `leftover_file` finding says so).
fn alias_texts(a: &Alias, fate: &AliasFate) -> Option<AliasTexts> {
    let (name, n) = (&a.name, a.offset);
    let move_out = format!(
        "move {name} out of the partition directory (it is not part of the log; compare it with the segment files first if it may be a newer copy)"
    );
    let read = "LogLoader.loadSegmentFiles reads the offset in the name (LogFileUtils.offsetFromFile: the text before the first '.')";
    Some(match fate {
        AliasFate::CreatesEmpty { segment } => AliasTexts {
            severity: Severity::Error,
            fate: "created_empty",
            message: format!(
                "{name}: never read: the broker's load reads its name as offset {n} and opens {segment} instead, which does not exist, so it creates it empty: the partition gets an empty segment at {n} and none of this file's records"
            ),
            broker: format!(
                "{read} and opens the segment under the broker's name for it (LogSegment.open → FileRecords.open of LogFileUtils.logFile, with StandardOpenOption.CREATE): {segment} is created empty and kept as the segment at {n} (the prediction says whether it is recovered and where the log then starts and ends); {name} stays on disk, never read"
            ),
            client: Some(
                "none of this file's records is served: consumers and followers never see them",
            ),
            remediation: format!(
                "with the broker stopped: if {name} holds this partition's records from offset {n}, rename it to {segment}; otherwise move it out of the partition directory (either way the load then creates no empty segment)"
            ),
            action: Some(format!(
                "never read: the load opens {segment} in its place, created empty"
            )),
        },
        AliasFate::OpensExisting { segment } => AliasTexts {
            severity: Severity::Info,
            fate: "opens_existing",
            message: format!(
                "{name}: never read: the broker's load reads its name as offset {n} and opens {segment}, which exists"
            ),
            broker: format!(
                "{read} and opens the segment under the broker's name for it (LogSegment.open of LogFileUtils.logFile): {segment} is opened again, one segment per base offset (LogSegments.add), and nothing of {name} is read"
            ),
            client: None,
            remediation: move_out,
            action: Some(format!("never read: the load opens {segment}")),
        },
        AliasFate::DeletedBySwap { from, to } => AliasTexts {
            severity: Severity::Info,
            fate: "deleted_by_swap",
            message: format!(
                "{name}: deleted at startup, unread: its name's offset {n} lies in the range [{from}, {to}) the completed swaps clear"
            ),
            broker: "LogLoader.load's second pass deletes every file but the .swap ones whose name's offset (LogFileUtils.offsetFromFile) lies in the swapped range, before any segment is loaded".into(),
            client: None,
            remediation: format!(
                "if {name} is needed, move it out of the partition directory before the broker starts"
            ),
            action: Some(format!(
                "deleted at startup, unread (its offset lies in the swapped range [{from}, {to}))"
            )),
        },
        AliasFate::IndexDeleted { log } => AliasTexts {
            severity: Severity::Info,
            fate: "index_deleted",
            message: format!(
                "{name}: deleted at startup, unread: the broker's load reads its name as offset {n} and finds no {log} when it meets it (an orphaned index)"
            ),
            broker: format!(
                "{read}, looks for LogFileUtils.logFile of it, finds none at that point of its name-ordered loop and deletes the file as an orphaned index"
            ),
            client: None,
            remediation: format!(
                "if {name} is needed, move it out of the partition directory before the broker starts"
            ),
            action: Some(format!("deleted at startup, unread (no {log}: an orphaned index)")),
        },
        AliasFate::IndexIgnored { log } => AliasTexts {
            severity: Severity::Info,
            fate: "index_ignored",
            message: format!(
                "{name}: never read: the broker's load reads its name as offset {n}, finds {log}, and the segment opens only the broker's names of its indexes"
            ),
            broker: format!(
                "{read}, finds LogFileUtils.logFile of it and leaves the file as it is; LogSegment.open reads LogFileUtils.offsetIndexFile, timeIndexFile and transactionIndexFile only"
            ),
            client: None,
            remediation: move_out,
            action: Some("never read (the segment opens the broker's names of its indexes)".into()),
        },
        AliasFate::NegativeBase { segment } => AliasTexts {
            severity: Severity::Warning,
            fate: "negative_base",
            message: format!(
                "{name}: the broker's load reads its name as offset {n}, negative, and opens a segment of that base offset ({segment}, created empty when absent), which no broker writes"
            ),
            broker: format!(
                "LogLoader (loadSegmentFiles, or the first pass for a .swap file) reads the offset in the name (LogFileUtils.offsetFromFile) and opens the segment under the broker's name for it (LogSegment.open, StandardOpenOption.CREATE): {segment}; what the load and the log then make of a segment of a negative base is not predicted (the prediction's outcome is unknown)"
            ),
            client: None,
            remediation: format!(
                "with the broker stopped, move {name} out of the partition directory"
            ),
            action: (!a.swap).then(|| {
                format!("never read: the load opens {segment}, a segment of a negative base (not predicted)")
            }),
        },
        AliasFate::SwapCreatesEmpty { swap, log, replaced } => {
            let stem = name.strip_suffix(".swap").unwrap_or(name);
            let lost = if *replaced {
                format!(", and the records the existing {log} holds are lost")
            } else {
                String::new()
            };
            AliasTexts {
                severity: Severity::Error,
                fate: "swap_created_empty",
                message: format!(
                    "{name}: never read: the broker's load reads its name as offset {n} and opens {swap} instead, which does not exist, so it creates it empty and renames it over {log}: the segment at {n} loads empty{lost}"
                ),
                broker: format!(
                    "LogLoader.load's first pass opens each .log.swap file's segment under the broker's name (LogSegment.open with the .swap suffix → FileRecords.open, StandardOpenOption.CREATE) and reads its end (readNextOffset); the third pass renames every .swap file without its suffix (File.renameTo, which replaces an existing file on a POSIX file system): {swap} becomes {log}, and {name} becomes {stem}, which loadSegmentFiles never reads (it opens {log})"
                ),
                client: Some("none of this file's records is served, and the segment at its offset is empty once the broker starts"),
                remediation: format!(
                    "with the broker stopped, keep a copy of {log} if it exists; then rename {name} to {swap} if it is the cleaner's or a split's output for offset {n}, else move it out of the partition directory"
                ),
                action: None,
            }
        }
        AliasFate::SwapRenamed { to } => AliasTexts {
            severity: Severity::Info,
            fate: "swap_renamed",
            message: format!(
                "{name}: renamed to {to} at startup, unread, and never read under that name"
            ),
            broker: format!(
                "LogLoader.load's third pass renames every .swap file without its suffix; the segment at {n} opens only the broker's names of its files (LogSegment.open), so {to} is never read"
            ),
            client: None,
            remediation: move_out,
            action: None,
        },
        AliasFate::SwapDeleted => return None,
    })
}

/// The prediction's startup action for alias `a` of fate `fate` (`None`: none of its own:
/// a `.swap` leftover's action is the leftover check's, and a `.swap` file an unfinished
/// split deletes is only that).
pub(crate) fn startup_action(a: &Alias, fate: &AliasFate) -> Option<String> {
    alias_texts(a, fate)?.action
}

/// `noncanonical_segment_name`: one finding per segment file of `topic`-`partition` under a
/// name the broker does not give it (`discover::layout::noncanonical_segment_name`: `5.log`,
/// `+5.log`, `00000000000000000500.copy.log`, `5.index`, `5.log.swap`), saying what the next
/// load does instead of reading it, in the load's name order.
pub(crate) fn alias_findings(
    topic: &str,
    partition: i32,
    fates: &[(&Alias, AliasFate)],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (a, fate) in fates {
        let Some(t) = alias_texts(a, fate) else {
            continue;
        };
        let evidence = with_symlink(
            json!({
                "file": a.path.display().to_string(),
                "offset": a.offset,
                "fate": t.fate,
            }),
            &a.path,
        );
        let mut f = Finding::new(Kind::NoncanonicalSegmentName, topic, partition, t.message)
            .segment(&a.name)
            .severity(t.severity)
            .evidence(evidence)
            .broker(t.broker)
            .remediation(t.remediation);
        if let Some(c) = t.client {
            f = f.client_error(c);
        }
        out.push(f);
    }
    out
}
