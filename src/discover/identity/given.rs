//! Cluster ids given on the command line (`--cluster-id ID=PATH`) for evidence copied
//! without `meta.properties`.
//!
//! A broker's log dir names its cluster in `meta.properties` (the broker's
//! `MetaProperties`, checked at startup by `MetaPropertiesEnsemble.verify`: every log dir
//! of one broker carries the same `cluster.id`). Copies of partition directories often
//! leave that file behind, and without it two log dirs are never known to be one cluster,
//! so the joins that need one cluster (the coordinator's confirmation of a transaction,
//! the replica comparison, the KRaft topic configs) do not run.
//!
//! A given id only fills what is missing: a log dir whose `meta.properties` names a
//! cluster keeps it, and naming another one for it is an input error
//! ([`check_given`]). A directory under several given paths takes the id of the deepest
//! one.

use super::read_meta_properties;
use crate::discover::layout::{self, Inventory};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One `--cluster-id ID=PATH`: the directories under `path` belong to cluster `cluster_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenClusterId {
    pub cluster_id: String,
    pub path: PathBuf,
}

impl std::str::FromStr for GivenClusterId {
    type Err = String;

    /// `ID=PATH`: the id before the first `=`, non-empty and without white space or `=`
    /// (a `cluster.id` is a base64 UUID, `MetaProperties` rejects nothing else but empty
    /// ids); the path after it, non-empty.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let Some((id, path)) = s.split_once('=') else {
            return Err(format!(
                "expected ID=PATH (a cluster id, '=', a directory), got {s:?}"
            ));
        };
        if id.is_empty() {
            return Err(format!("the cluster id before '=' is empty in {s:?}"));
        }
        if id.chars().any(char::is_whitespace) {
            return Err(format!("the cluster id {id:?} contains white space"));
        }
        if path.is_empty() {
            return Err(format!("the path after '=' is empty in {s:?}"));
        }
        Ok(GivenClusterId {
            cluster_id: id.to_string(),
            path: PathBuf::from(path),
        })
    }
}

/// Why a set of given cluster ids cannot be used (the CLI's exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GivenClusterIdError {
    #[error("--cluster-id {id}={}: {why}", path.display())]
    Unusable {
        id: String,
        path: PathBuf,
        why: String,
    },
    #[error(
        "--cluster-id {given}={}: {} says cluster.id={found} (a given id only fills a missing meta.properties)",
        path.display(),
        meta.display()
    )]
    Conflict {
        given: String,
        path: PathBuf,
        /// The `meta.properties` that names another cluster.
        meta: PathBuf,
        found: String,
    },
    #[error("--cluster-id gives {} two ids: {a} and {b}", path.display())]
    Twice { path: PathBuf, a: String, b: String },
}

/// A given path, canonical (`None` when it cannot be resolved).
fn canonical(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// Check every given id before anything is read: its path is an existing directory among
/// the inputs (under one, or holding one), no path is given two ids, and no
/// `meta.properties` under a path names another cluster.
pub fn check_given(
    given: &[GivenClusterId],
    inputs: &[PathBuf],
    follow_symlinks: bool,
) -> Result<(), GivenClusterIdError> {
    let inputs: Vec<PathBuf> = inputs.iter().filter_map(|p| canonical(p)).collect();
    let mut seen: BTreeMap<PathBuf, &str> = BTreeMap::new();
    for g in given {
        let unusable = |why: &str| GivenClusterIdError::Unusable {
            id: g.cluster_id.clone(),
            path: g.path.clone(),
            why: why.to_string(),
        };
        let canon = canonical(&g.path).ok_or_else(|| unusable("no such directory"))?;
        if !canon.is_dir() {
            return Err(unusable("not a directory"));
        }
        if !inputs
            .iter()
            .any(|i| canon.starts_with(i) || i.starts_with(&canon))
        {
            return Err(unusable("not among the inputs (nor under or above one)"));
        }
        match seen.insert(canon, &g.cluster_id) {
            Some(a) if a != g.cluster_id => {
                return Err(GivenClusterIdError::Twice {
                    path: g.path.clone(),
                    a: a.to_string(),
                    b: g.cluster_id.clone(),
                });
            }
            _ => {}
        }
        conflicts(g, follow_symlinks)?;
    }
    Ok(())
}

/// The first `meta.properties` governing a directory under `g.path` that names another
/// cluster than `g.cluster_id`.
fn conflicts(g: &GivenClusterId, follow_symlinks: bool) -> Result<(), GivenClusterIdError> {
    let inv = layout::discover_with(
        std::slice::from_ref(&g.path),
        layout::DiscoverOptions { follow_symlinks },
    );
    for ld in &inv.log_dirs {
        let Some(meta) = &ld.meta_properties else {
            continue;
        };
        let Some(found) = read_meta_properties(meta).and_then(|m| m.cluster_id) else {
            continue;
        };
        if found != g.cluster_id {
            return Err(GivenClusterIdError::Conflict {
                given: g.cluster_id.clone(),
                path: g.path.clone(),
                meta: meta.clone(),
                found,
            });
        }
    }
    Ok(())
}

/// Record in `inv` the given id of every log dir, and of every partition directory outside
/// a log dir, under a given path (the deepest given path wins). Identities read it where
/// `meta.properties` names no cluster ([`super::Identities::load`]).
pub fn apply_given(inv: &mut Inventory, given: &[GivenClusterId]) {
    if given.is_empty() {
        return;
    }
    let mut roots: Vec<(PathBuf, &str)> = given
        .iter()
        .filter_map(|g| Some((canonical(&g.path)?, g.cluster_id.as_str())))
        .collect();
    // Deepest first: the first match is the most specific.
    roots.sort_by_key(|(p, _)| std::cmp::Reverse(p.components().count()));
    let id_of = |p: &Path| -> Option<String> {
        let c = canonical(p)?;
        roots
            .iter()
            .find(|(r, _)| c.starts_with(r))
            .map(|(_, id)| id.to_string())
    };
    let mut out = BTreeMap::new();
    for ld in &inv.log_dirs {
        if let Some(id) = id_of(&ld.path) {
            out.insert(ld.path.clone(), id);
        }
    }
    for p in &inv.partitions {
        if let Some(id) = id_of(&p.path) {
            out.insert(p.path.clone(), id);
        }
    }
    inv.given_cluster_ids = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_id_equals_path() {
        let g: GivenClusterId = "abc=/x/y".parse().unwrap();
        assert_eq!(g.cluster_id, "abc");
        assert_eq!(g.path, PathBuf::from("/x/y"));
        // The path may hold '=' itself: the id ends at the first one.
        let g: GivenClusterId = "abc=/x=y".parse().unwrap();
        assert_eq!(g.path, PathBuf::from("/x=y"));
    }

    #[test]
    fn refuses_malformed_values() {
        for (bad, says) in [
            ("abc", "expected ID=PATH"),
            ("=/x", "cluster id before '=' is empty"),
            ("abc=", "path after '=' is empty"),
            ("a b=/x", "white space"),
        ] {
            let e = bad.parse::<GivenClusterId>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
