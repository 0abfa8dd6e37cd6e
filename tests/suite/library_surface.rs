//! The library's public modules are exactly the list of docs/library.md ("Public surface
//! and stability"): a new `pub mod` must be a decision written there first.
//!
//! This reads the `pub mod` declarations of `src/` (cheap, no rustdoc run): a module is
//! public when declared `pub mod` without `#[doc(hidden)]` or `#[cfg(feature = "testkit")]`
//! in a public parent. `.ci/run` checks the same list against `cargo doc`'s output.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The modules listed in the ```text block of the "Public surface and stability" section.
fn documented() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/library.md")).unwrap();
    let section = doc
        .split("## Public surface and stability")
        .nth(1)
        .expect("docs/library.md has a \"Public surface and stability\" section");
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section lists the public modules in a ```text block");
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// The file holding the child module `name` of the module in `file`.
fn child_file(file: &Path, name: &str) -> Option<PathBuf> {
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let dir = file.parent().unwrap();
    let base = if stem == "lib" || stem == "mod" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    [
        base.join(format!("{name}.rs")),
        base.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// The public modules declared in `file` (module path `path`), recursively.
fn declared(file: &Path, path: &str, out: &mut BTreeSet<String>) {
    let src = std::fs::read_to_string(file).unwrap();
    let mut hidden = false;
    for line in src.lines().map(str::trim) {
        if line.starts_with("#[") {
            hidden |= line.contains("doc(hidden)") || line.contains("feature = \"testkit\"");
            continue;
        }
        if line.starts_with("//") || line.is_empty() {
            continue;
        }
        // The format layer is its own crate, re-exported whole as `read::format`: the module
        // is public here; its own modules are that crate's surface.
        if let Some(name) = line
            .strip_prefix("pub use klogscan_format as ")
            .map(|r| r.trim_end_matches(';'))
        {
            out.insert(format!("{path}::{name}"));
            continue;
        }
        let decl = line
            .strip_prefix("pub mod ")
            .map(|r| r.trim_end_matches(['{', ';', ' ']));
        if let Some(name) =
            decl.filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            && !hidden
        {
            let child = format!("{path}::{name}");
            out.insert(child.clone());
            if line.ends_with(';') {
                let f = child_file(file, name)
                    .unwrap_or_else(|| panic!("no file for {child} (declared in {file:?})"));
                declared(&f, &child, out);
            }
        }
        hidden = false;
    }
}

#[test]
fn public_modules_are_the_documented_list() {
    let mut found = BTreeSet::new();
    declared(&Path::new(ROOT).join("src/lib.rs"), "klogscan", &mut found);
    let documented = documented();
    let undocumented: Vec<_> = found.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&found).collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "public modules not listed in docs/library.md: {undocumented:?}; listed there but not public: {missing:?}"
    );
}

#[test]
fn internals_are_not_listed() {
    // The modules the surface leaves out on purpose must not creep back into the list.
    let documented = documented();
    for internal in [
        "partition::causes",
        "cluster::compaction",
        "partition::event",
        "fuzzing",
        "discover::identity",
        "partition::recovery",
        "cluster::replicas",
        "partition::state",
        "testkit",
        "cluster::txns",
        "dump::archive_inputs",
        "read::segment::walk",
        "cluster::coordinator::cluster",
    ] {
        assert!(
            !documented.contains(&format!("klogscan::{internal}")),
            "{internal} is internal"
        );
    }
}

/// `ScanOptions` is `#[non_exhaustive]`: outside the crate it is built from its default
/// with the `with_*` setters, each of which sets its own field and nothing else.
#[test]
fn scan_options_are_built_with_setters() {
    use klogscan::read::segment::MmapMode;
    use klogscan::results::ScanOptions;
    let d = ScanOptions::default();
    assert!(d.check_crc && !d.deep && d.keep_producers && d.keep_cluster_txns);
    assert_eq!(
        (d.threads, d.now_ms, d.max_bytes, d.partition),
        (None, None, None, None)
    );
    let o = ScanOptions::default()
        .with_check_crc(false)
        .with_deep(true)
        .with_threads(3)
        .with_now_ms(42)
        .with_hanging_after_ms(60_000)
        .with_topic("orders*")
        .with_partition(7)
        .with_max_bytes(1 << 20)
        .with_max_decompressed(1 << 16)
        .with_max_decompressed_per_file(1 << 24)
        .with_capture_snapshots(true)
        .with_keep_producers(false)
        .with_keep_cluster_txns(false)
        .with_compacted_topics(["a", "b"])
        .with_collect_index_verdicts(true)
        .with_mmap(MmapMode::Never)
        .with_follow_symlinks(true)
        .with_remote_storage(PathBuf::from("/remote"));
    assert!(!o.check_crc && o.deep && o.capture_snapshots && o.collect_index_verdicts);
    assert!(!o.keep_producers && !o.keep_cluster_txns && o.follow_symlinks);
    assert_eq!(
        (o.threads, o.now_ms, o.partition),
        (Some(3), Some(42), Some(7))
    );
    assert_eq!(o.replay.hanging_after_ms, 60_000);
    assert_eq!(o.topic.as_deref(), Some("orders*"));
    assert_eq!(o.max_bytes, Some(1 << 20));
    assert_eq!(
        (o.max_decompressed, o.max_decompressed_per_file),
        (1 << 16, 1 << 24)
    );
    assert_eq!(o.compacted_topics, ["a", "b"]);
    assert_eq!(o.mmap, MmapMode::Never);
    assert_eq!(o.remote_storage, Some(PathBuf::from("/remote")));
    // `None` clears what a setter set (options taken from a caller's `Option`).
    let o = o
        .with_threads(None)
        .with_max_bytes(None)
        .with_remote_storage(None);
    assert_eq!(
        (o.threads, o.max_bytes, o.remote_storage),
        (None, None, None)
    );
}
