//! Brokers whose log dirs share one path (cp-ansible's `/var/lib/kafka/data` on every
//! host, the same `log.dirs` in every pod): a merge names each directory of such a
//! broker's bundle by the broker, `node-<id>:<path>` (`<cluster id>/node-<id>:<path>` when
//! two clusters' brokers share a node id), so that no two partitions, findings or inputs
//! of the merged report read alike.
//!
//! A directory's identity in a merge is its broker's (cluster id, node id) and its log
//! dir; the path alone is enough only while the paths differ. The renaming is a prefix on
//! every path of the bundle, applied to every string of its frames, as archive members
//! are named by their archive path: a path keeps its components, so the log dir of
//! `node-1:/var/lib/kafka/data/orders-0` is `node-1:/var/lib/kafka/data`.

use super::content::{FileInventory, Header};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The renaming of one bundle's paths: `(path, label:path)`, longest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Relabel {
    maps: Vec<(String, String)>,
}

/// A character that continues a path component (a match must not stop or start inside one).
fn in_component(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '=')
}

impl Relabel {
    fn new(label: &str, paths: impl IntoIterator<Item = String>) -> Self {
        let set: BTreeSet<String> = paths.into_iter().filter(|p| !p.is_empty()).collect();
        let mut maps: Vec<(String, String)> = set
            .into_iter()
            .map(|p| (format!("{label}:{p}"), p))
            .map(|(n, p)| (p, n))
            .collect();
        maps.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        Relabel { maps }
    }

    /// `s` with every renamed path in it prefixed, in one pass (a prefixed path is never
    /// prefixed again). A path matches where it starts a string or follows a character
    /// no path component holds, and where it ends the string or is followed by `/`
    /// (an absolute path also by a character no component holds: prose around it).
    pub fn string(&self, s: &str) -> String {
        if self.maps.is_empty() || !self.maps.iter().any(|(p, _)| s.contains(p.as_str())) {
            return s.to_string();
        }
        let mut out = String::with_capacity(s.len() + 16);
        let mut i = 0;
        let mut prev: Option<char> = None;
        while i < s.len() {
            let rest = &s[i..];
            let starts = prev.is_none_or(|c| !in_component(c) && c != '/');
            let hit = starts
                .then(|| {
                    self.maps.iter().find(|(p, _)| {
                        rest.starts_with(p.as_str())
                            && rest[p.len()..].chars().next().is_none_or(|c| {
                                c == '/' || (p.starts_with('/') && !in_component(c))
                            })
                    })
                })
                .flatten();
            if let Some((p, n)) = hit {
                out.push_str(n);
                i += p.len();
                prev = p.chars().last();
                continue;
            }
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8();
            prev = Some(c);
        }
        out
    }

    /// Rename in place.
    pub fn fix(&self, s: &mut String) {
        if !self.maps.is_empty() {
            let n = self.string(s);
            if n != *s {
                *s = n;
            }
        }
    }

    /// Rename every string (and object key) of a JSON value.
    pub fn value(&self, v: &mut serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) => self.fix(s),
            Value::Array(a) => a.iter_mut().for_each(|v| self.value(v)),
            Value::Object(m) => {
                let old = std::mem::take(m);
                for (k, mut v) in old {
                    self.value(&mut v);
                    m.insert(self.string(&k), v);
                }
            }
            _ => {}
        }
    }

    /// Parse a frame's JSON with its paths renamed.
    pub fn parse<T: serde::de::DeserializeOwned>(&self, b: &[u8]) -> serde_json::Result<T> {
        if self.maps.is_empty() {
            return serde_json::from_slice(b);
        }
        let mut v: serde_json::Value = serde_json::from_slice(b)?;
        self.value(&mut v);
        serde_json::from_value(v)
    }
}

/// Two bundles that cannot be told apart: the same path and no broker identity that
/// differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ambiguous {
    /// Indexes of the two bundles.
    pub first: usize,
    pub second: usize,
    pub dir: String,
}

/// The broker a bundle's log dirs belong to: `(cluster id, node id)` when every log dir
/// says the same (a bundle is one broker's), `None` otherwise.
fn broker_of(h: &Header) -> Option<(Option<String>, i32)> {
    let mut ids = h.log_dirs.iter().map(|d| (d.cluster_id.clone(), d.node_id));
    let first = ids.next()?;
    let node = first.1?;
    ids.all(|i| i == first).then_some((first.0, node))
}

/// The renaming of each bundle (aligned with `heads`): none for a bundle whose
/// directories no other bundle's share, `node-<id>:` for the others (with the cluster id
/// when two of them have the same node id). An error when two bundles sharing a
/// directory are of the same broker, or of none known.
pub(crate) fn relabels(heads: &[(&Header, &FileInventory)]) -> Result<Vec<Relabel>, Ambiguous> {
    let mut holders: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (h, f)) in heads.iter().enumerate() {
        let dirs = h.log_dirs.iter().map(|d| d.path.as_str());
        let parts = f.partitions.iter().map(|p| p.path.as_str());
        let mut mine: Vec<&str> = dirs.chain(parts).collect();
        mine.sort_unstable();
        mine.dedup();
        for d in mine {
            holders.entry(d).or_default().push(i);
        }
    }
    let mut shared = vec![false; heads.len()];
    for v in holders.values().filter(|v| v.len() > 1) {
        v.iter().for_each(|&i| shared[i] = true);
    }
    let brokers: Vec<Option<(Option<String>, i32)>> =
        heads.iter().map(|(h, _)| broker_of(h)).collect();
    for (dir, v) in holders.iter().filter(|(_, v)| v.len() > 1) {
        for (a, &i) in v.iter().enumerate() {
            for &j in &v[a + 1..] {
                if brokers[i].is_none() || brokers[i] == brokers[j] {
                    return Err(Ambiguous {
                        first: i,
                        second: j,
                        dir: dir.to_string(),
                    });
                }
            }
        }
    }
    let mut per_node: HashMap<i32, BTreeSet<&Option<String>>> = HashMap::new();
    for (b, _) in brokers.iter().zip(&shared).filter(|(_, s)| **s) {
        if let Some((c, n)) = b {
            per_node.entry(*n).or_default().insert(c);
        }
    }
    Ok(heads
        .iter()
        .enumerate()
        .map(|(i, (h, _))| match (&brokers[i], shared[i]) {
            (Some((cluster, node)), true) => {
                let label = match cluster {
                    Some(c) if per_node.get(node).is_some_and(|s| s.len() > 1) => {
                        format!("{c}/node-{node}")
                    }
                    _ => format!("node-{node}"),
                };
                let paths = h.log_dirs.iter().map(|d| d.path.clone());
                Relabel::new(&label, paths.chain(h.inputs.iter().cloned()))
            }
            _ => Relabel::default(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_prefixed_once_and_only_whole() {
        let r = Relabel::new("node-1", ["/var/lib/kafka/data".to_string()]);
        assert_eq!(
            r.string("/var/lib/kafka/data/orders-0/00000000000000000000.log: torn"),
            "node-1:/var/lib/kafka/data/orders-0/00000000000000000000.log: torn"
        );
        assert_eq!(
            r.string("in /var/lib/kafka/data, then"),
            "in node-1:/var/lib/kafka/data, then"
        );
        // Another directory whose name starts alike, and a path under another root.
        assert_eq!(
            r.string("/var/lib/kafka/data-1/x"),
            "/var/lib/kafka/data-1/x"
        );
        assert_eq!(
            r.string("/srv/var/lib/kafka/data/x"),
            "/srv/var/lib/kafka/data/x"
        );
        // The longest path first: an input above the log dir does not split it.
        let r = Relabel::new(
            "node-1",
            [
                "/var/lib/kafka".to_string(),
                "/var/lib/kafka/data".to_string(),
            ],
        );
        assert_eq!(
            r.string("/var/lib/kafka/data/x"),
            "node-1:/var/lib/kafka/data/x"
        );
        assert_eq!(r.string("/var/lib/kafka"), "node-1:/var/lib/kafka");
    }

    #[test]
    fn a_relative_path_is_never_matched_in_prose() {
        let r = Relabel::new("node-2", ["data".to_string()]);
        assert_eq!(r.string("data/t-0"), "node-2:data/t-0");
        assert_eq!(r.string("the data is gone"), "the data is gone");
        assert_eq!(r.string("data"), "node-2:data");
    }
}
