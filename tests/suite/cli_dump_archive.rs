//! `dump` reads archives as `scan` does (issue 14 item 6), addressing files inside them as
//! the reports name them: `broker1.tgz!/broker-1/payments-3/00000000000000000000.log`, a
//! directory inside, or the whole archive. The output is the directory's, with the
//! archive's paths.

use assert_cmd::Command;
use std::io::Write;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

fn dump(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .arg("dump")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `testdata/broker-1` as `broker1.tar`, `.tgz`, `.tar.zst` and `.zip` in `dir`.
fn archives(dir: &Path) -> Vec<PathBuf> {
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all("broker-1", testdata().join("broker-1"))
        .unwrap();
    let tar = b.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(tar.as_slice(), 3).unwrap();
    let zip = {
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default();
        let base = testdata().join("broker-1");
        let mut stack = vec![base.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(testdata()).unwrap();
                    z.start_file(rel.to_string_lossy(), o).unwrap();
                    z.write_all(&std::fs::read(&p).unwrap()).unwrap();
                }
            }
        }
        z.finish().unwrap().into_inner()
    };
    let mut out = Vec::new();
    for (name, bytes) in [
        ("broker1.tar", &tar),
        ("broker1.tgz", &gz),
        ("broker1.tar.zst", &zst),
        ("broker1.zip", &zip),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        out.push(p);
    }
    out
}

#[test]
fn dump_reads_a_file_inside_an_archive_like_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = testdata().join("broker-1");
    for a in archives(tmp.path()) {
        for (file, flags) in [
            (
                "payments-3/00000000000000000000.log",
                &["--deep-iteration"][..],
            ),
            ("payments-3/00000000000000000017.snapshot", &[][..]),
            ("payments-3/00000000000000000017.index", &[][..]),
            (
                "codec-zstd-0/00000000000000000000.log",
                &["--print-data-log"][..],
            ),
        ] {
            let real = dir.join(file).display().to_string();
            let member = format!("{}!/broker-1/{file}", a.display());
            for format in ["text", "json"] {
                let mut args = vec!["--format", format];
                args.extend_from_slice(flags);
                let (want_code, want, _) = dump(&[&args[..], &[real.as_str()]].concat());
                let (code, got, err) = dump(&[&args[..], &[member.as_str()]].concat());
                assert_eq!(code, want_code, "{member}: {err}");
                assert_eq!(got, want.replace(&real, &member), "{member} {format}");
                assert!(!got.contains("klogscan-"), "temporary path leaked: {got}");
            }
        }
    }
}

#[test]
fn dump_reads_a_directory_or_the_whole_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let a = &archives(tmp.path())[1];
    let count = |text: &str| text.lines().filter(|l| l.starts_with("Dumping ")).count();
    // A directory inside: each of its files, in name order.
    let (code, text, err) = dump(&[&format!("{}!/broker-1/payments-3", a.display())]);
    assert_eq!(code, 0, "{err}");
    let files = std::fs::read_dir(testdata().join("broker-1/payments-3"))
        .unwrap()
        .count();
    assert_eq!(count(&text), files, "{text}");
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "Dumping {}!/broker-1/payments-3/00000000000000000000.index",
            a.display()
        )
    );
    // The whole archive, as given or as the reports name it (`x.tgz!`).
    for arg in [a.display().to_string(), format!("{}!", a.display())] {
        let (code, text, err) = dump(&[&arg]);
        assert_eq!(code, 0, "{err}");
        assert!(count(&text) > files, "{text}");
        assert!(text.contains(&format!(
            "Dumping {}!/broker-1/codec-lz4-0/00000000000000000000.log",
            a.display()
        )));
        assert!(text.contains(&format!(
            "Dumping {}!/broker-1/meta.properties",
            a.display()
        )));
    }
}

#[test]
fn dump_refuses_missing_climbing_and_corrupt_archive_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let a = &archives(tmp.path())[0];
    // A member that is not in the archive: cannot be read, exit 2, named as asked.
    let missing = format!(
        "{}!/broker-1/payments-3/00000000000000000099.log",
        a.display()
    );
    let (code, _, err) = dump(&[&missing]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("Cannot read {missing}")), "{err}");
    assert!(!err.contains("klogscan-"), "{err}");
    // `..` never leaves the archive.
    let (code, out, err) = dump(&[&format!("{}!/../../etc/passwd", a.display())]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("climbs out"), "{err}");
    // A corrupt archive is an input error; a good file given with it is still dumped.
    let bad = tmp.path().join("bad.tgz");
    std::fs::write(&bad, [0x1f, 0x8b, 0x08, 0, 1, 2, 3, 4]).unwrap();
    let good = testdata().join("broker-1/payments-3/00000000000000000000.log");
    let (code, out, err) = dump(&[&bad.display().to_string(), &good.display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read it as an archive"), "{err}");
    assert!(out.contains("baseOffset: 0"), "{out}");
    // `!/` after a file that is not an archive is just a path that does not exist.
    let txt = tmp.path().join("notes.txt");
    std::fs::write(&txt, "hello").unwrap();
    let (code, _, err) = dump(&[&format!("{}!/x.log", txt.display())]);
    assert_eq!(code, 2);
    assert!(err.contains("Cannot read"), "{err}");
}
