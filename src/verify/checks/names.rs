//! `unparseable_file_name`, and the startup actions of `noncanonical_segment_name` files.
//!
//! `unparseable_file_name`: every regular file of a partition directory whose name the
//! broker's load parses as an offset and cannot (`LogFileUtils.offsetFromFileName`:
//! `Long.parseLong` of the text before the first `.`). The load throws
//! `NumberFormatException`, which is not an `IOException`: the log dir is not taken
//! offline, the broker's start fails. Which names, and which step of the load meets them:
//! [`unparseable_offset_name`]. The prediction's `load_failure` names the first one the
//! load meets.

use super::{mk, name_of};
use crate::discover::layout::{OffsetNameStep, PartitionDir, unparseable_offset_name};
use crate::finding::{Finding, Kind};
use crate::partition::recovery::LeftoverAction;
use crate::partition::recovery::alias_texts::{self, startup_action};
use crate::partition::recovery::aliases::{Alias, AliasFate};
use crate::partition::scan::PartitionReport;
use serde_json::json;
use std::path::Path;

/// The files of `p` the load cannot parse the names of (those discovery left unrecognised,
/// and `.cleaned`/`.swap` leftovers), one finding each, sorted by name; returns them with
/// the step that throws, for the prediction. Only regular files count (the load lists
/// files only, following links: a symlink to a file counts, followed or not by discovery,
/// a dangling one does not): a directory of such a name is not parsed.
pub(super) fn unparseable_names(
    p: &PartitionDir,
    r: &PartitionReport,
    out: &mut Vec<Finding>,
) -> Vec<(String, OffsetNameStep)> {
    let mut found: Vec<(String, OffsetNameStep, &std::path::Path)> = p
        .unknown
        .iter()
        .chain(p.leftovers.iter().map(|(_, path)| path))
        .filter_map(|path| {
            let name = name_of(path);
            let step = unparseable_offset_name(&name)?;
            let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
            regular.then_some((name, step, path.as_path()))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let start = if crate::discover::layout::is_kraft_metadata(&r.topic) {
        "KafkaMetadataLog.apply throws it and the node does not start"
    } else {
        "LogManager.loadLogs rethrows it and the broker does not start"
    };
    for (name, step, path) in &found {
        out.push(
            mk(
                r,
                Kind::UnparseableFileName,
                name,
                format!(
                    "{name}: the broker's load parses this file's name as an offset and cannot (NumberFormatException): the partition fails to load and the broker does not start"
                ),
            )
            .evidence(alias_texts::with_symlink(
                json!({"file": path.display().to_string(), "parsed_by": step}),
                path,
            ))
            .broker(format!(
                "{} ({}): Long.parseLong of the text before the name's first '.' throws NumberFormatException; no step of the load catches it and it is not an IOException, so the log dir is not taken offline: {start}",
                step.when(),
                step.method()
            ))
            .client_error("none from this file: the broker does not start, so its clients fail over to other replicas or wait")
            .remediation(format!(
                "with the broker stopped, move {name} out of the partition directory (keep it outside the log dirs if it is needed), then start the broker"
            )),
        );
    }
    found.into_iter().map(|(n, s, _)| (n, s)).collect()
}

/// What [`noncanonical_names`] and the leftover checks read of the aliases of a partition
/// (`partition::recovery::aliases`): each one's fate, and the orphaned indexes a created
/// segment adopts.
pub(super) struct NameFates<'a> {
    pub fates: Vec<(&'a Alias, AliasFate)>,
    pub adopted: Vec<&'a Path>,
}

impl NameFates<'_> {
    /// The fate of the file at `path`, when it is an alias.
    pub(super) fn of(&self, path: &Path) -> Option<&AliasFate> {
        self.fates
            .iter()
            .find(|(a, _)| a.path == path)
            .map(|(_, f)| f)
    }
}

/// The prediction's startup action (`noncanonical_name`) of each alias that is not a
/// `.swap` leftover (whose action is the leftover check's); the
/// `noncanonical_segment_name` findings are the scan's
/// (`partition::recovery::alias_texts`), which the verification carries.
pub(super) fn noncanonical_actions(names: &NameFates<'_>, leftovers: &mut Vec<LeftoverAction>) {
    for (a, fate) in &names.fates {
        if let Some(action) = startup_action(a, fate) {
            leftovers.push(LeftoverAction {
                file: a.name.clone(),
                kind: "noncanonical_name".into(),
                action,
            });
        }
    }
}
