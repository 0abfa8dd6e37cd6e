//! Where `collect` writes its bundle (`--out`): never inside its inputs (they are evidence),
//! never over a pipe or a device by a rename, never a `.partial` left behind.

use crate::common::run::klogscan;
use klogscan::testkit::brokers;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Every path under `root` with its size and modification time: what "unchanged" means.
fn tree(root: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            out.push((e.path(), m.len(), m.modified().unwrap()));
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn collect(inputs: &[&Path], out: &str) -> crate::common::run::Run {
    let mut args: Vec<String> = vec!["collect".into()];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["--out".into(), out.into()]);
    klogscan(&args, None, 120)
}

/// One broker's log dir of the cross-broker scenario, under a temporary root.
fn log_dir() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let b = brokers::cross_broker_txn(&d.path().join("data")).unwrap();
    let dir = b[1][0].clone();
    (d, dir)
}

/// `--out` inside an input is refused before anything is read, and the input is left as
/// it was: inside the log dir, in a partition directory (one not made yet), through a
/// symlink to the log dir, beside a segment named alone (its partition directory), the
/// segment itself, or an archive named alone. Before, the bundle (and its `.partial`) was written there. Near miss: a
/// directory beside the log dir takes it.
#[test]
fn collect_never_writes_inside_its_inputs() {
    let (root, dir) = log_dir();
    let before = tree(root.path());
    let partition = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let segment = std::fs::read_dir(&partition)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap();
    // A file named alone that is no Kafka file (an archive): only the file itself is
    // refused, not its directory.
    let archive = root.path().join("evidence.tgz");
    std::fs::write(&archive, b"not really an archive").unwrap();
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let with_link = tree(root.path());
    for (inputs, out, relation) in [
        (vec![dir.as_path()], dir.join("b.klb"), "is inside"),
        (
            vec![dir.as_path()],
            partition.join("new/b.klb"),
            "is inside",
        ),
        (vec![dir.as_path()], link.join("b.klb"), "is inside"),
        (vec![link.as_path()], dir.join("b.klb"), "is inside"),
        (
            vec![segment.as_path()],
            partition.join("b.klb"),
            "is inside",
        ),
        (vec![segment.as_path()], segment.clone(), "is inside"),
        (vec![archive.as_path()], archive.clone(), "is"),
    ] {
        let r = collect(&inputs, &s(&out));
        assert_eq!(r.code(), 2, "{out:?}: {}", r.err);
        assert!(
            r.err.contains(&format!("{relation} the input")),
            "{out:?}: {}",
            r.err
        );
        assert!(
            r.err.contains("never writes into the evidence"),
            "{}",
            r.err
        );
        assert!(!r.err.contains("bundle 0"), "nothing read: {}", r.err);
        assert_eq!(tree(root.path()), with_link, "{out:?}");
    }
    std::fs::remove_file(&link).unwrap();
    std::fs::remove_file(&archive).unwrap();
    assert_eq!(tree(root.path()), before);
    let beside = root.path().join("bundles");
    std::fs::create_dir(&beside).unwrap();
    let r = collect(&[&dir], &s(&beside.join("b.klb")));
    assert_eq!(r.code(), 0, "{}", r.err);
    assert!(beside.join("b.klb").is_file());
}

/// `-` and a FIFO are written as a stream (a rename would replace the pipe — or, as root, a
/// device such as `/dev/null` — with a regular file): the bytes are the bundle a file
/// gets, and the FIFO is still a FIFO. A directory is refused before the scan, with no
/// `.partial` left beside it (before: the scan ran, the rename failed and `<dir>.partial`
/// stayed).
#[test]
fn collect_streams_into_a_pipe_or_standard_output_and_refuses_a_directory() {
    let (root, dir) = log_dir();
    let file = root.path().join("b.klb");
    assert_eq!(collect(&[&dir], &s(&file)).code(), 0);
    let merged = |bundle: &Path| {
        let args = [
            "merge".to_string(),
            s(bundle),
            "--format".into(),
            "json".into(),
        ];
        let r = klogscan(&args, None, 120);
        assert_ne!(r.code(), 2, "{}", r.err);
        r.out
    };
    let want = merged(&file);

    // The bytes of standard output as they are (the runner reads text).
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_klogscan"))
        .args(["collect".into(), s(&dir), "--out".into(), "-".into()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{err}");
    assert!(err.contains("standard output"), "{err}");
    let streamed = root.path().join("streamed.klb");
    std::fs::write(&streamed, &r.stdout).unwrap();
    assert_eq!(merged(&streamed), want);

    let fifo = root.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let r = collect(&[&dir], &s(&fifo));
    assert_eq!(r.code(), 0, "{}", r.err);
    let bytes = reader.join().unwrap();
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let piped = root.path().join("piped.klb");
    std::fs::write(&piped, bytes).unwrap();
    assert_eq!(merged(&piped), want);

    let target = root.path().join("adir");
    std::fs::create_dir(&target).unwrap();
    let r = collect(&[&dir], &s(&target));
    assert_eq!(r.code(), 2, "{}", r.err);
    assert!(r.err.contains("is a directory"), "{}", r.err);
    assert!(!root.path().join("adir.partial").exists());
}

/// Run `script` under bash with `$0` the binary and `$1`, `$2` the given paths.
fn bash(script: &str, args: &[&Path]) -> std::process::Output {
    std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_klogscan"))
        .args(args)
        .output()
        .unwrap()
}

/// `merge` reads a bundle from a pipe as from its file — process substitution (`merge
/// <(ssh broker klogscan collect … --out -)`) or standard input (`-`, here from `collect
/// --out -` piped): the same report, byte for byte (before: refused as not a regular
/// file, a pipe cannot be read twice; it is now copied once to an unlinked temporary
/// file). A pipe of anything else is refused at its first bytes, an empty one as empty,
/// and `-` twice as such: exit 2 each, naming the input.
#[test]
fn merge_reads_a_bundle_from_a_pipe() {
    let (_root, dir) = log_dir();
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("b.klb");
    assert_eq!(collect(&[dir.as_path()], &s(&file)).code(), 0);
    let want = klogscan(&["merge", &s(&file), "--format", "json"], None, 120);
    assert!(want.out.starts_with('{'), "{}", want.err);
    for script in [
        r#""$0" merge <(cat "$1") --format json"#,
        r#"cat "$1" | "$0" merge - --format json"#,
        r#""$0" collect "$2" --out - 2>/dev/null | "$0" merge - --format json"#,
    ] {
        let o = bash(script, &[&file, &dir]);
        assert_eq!(o.status.code(), Some(want.code()), "{script}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), want.out, "{script}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), want.err, "{script}");
    }
    for (script, says) in [
        (
            r#"head -c 100000 /dev/zero | "$0" merge -"#,
            "not a klogscan bundle",
        ),
        (
            r#""$0" merge <(head -c 100000 /dev/zero)"#,
            "not a klogscan bundle",
        ),
        (
            r#""$0" merge - < /dev/null"#,
            "nothing came through the pipe",
        ),
        (r#""$0" merge - - < "$1""#, "given more than once"),
    ] {
        let o = bash(script, &[&file]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{script}: {err}");
        assert!(err.contains(says), "{script}: {err}");
        assert!(o.stdout.is_empty(), "{script}");
    }
}
