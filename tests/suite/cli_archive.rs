//! Archives as input (issue 14 item 6): a `.tar`, `.tar.gz`, `.tgz`, `.tar.zst` or `.zip`
//! of `testdata/broker-1` scans to the same findings as the directory, with paths inside the
//! archive (`broker1.tgz!/broker-1/payments-3`); entries that escape the root, links and
//! non-Kafka files are not extracted; a corrupt archive is an input error (exit 2).

use assert_cmd::Command;
use serde_json::Value;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

fn klogscan() -> Command {
    Command::cargo_bin("klogscan").unwrap()
}

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

/// Every file under `testdata/broker-1`, as `(path inside the archive, bytes)`.
fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![sample()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(sample().parent().unwrap()).unwrap();
                out.push((
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn tar_bytes(extra: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in sample_files() {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, &name, data.as_slice()).unwrap();
    }
    extra(&mut b);
    b.into_inner().unwrap()
}

fn write(path: &Path, bytes: &[u8]) {
    File::create(path).unwrap().write_all(bytes).unwrap();
}

fn scan_json(path: &Path) -> (i32, Value, String) {
    let out = klogscan()
        .args(["scan", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    (out.status.code().unwrap(), v, err)
}

/// The findings with the archive's paths written as the directory's: everything else must
/// not depend on directory vs archive.
fn essence(v: &Value, archive: Option<&Path>) -> Value {
    let mut text = serde_json::to_string(&v["findings"]).unwrap();
    if let Some(a) = archive {
        text = text.replace(
            &format!("{}!/broker-1", a.display()),
            &sample().display().to_string(),
        );
    }
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for f in v.as_array_mut().unwrap() {
        f["source"] = Value::Null;
    }
    v
}

#[test]
fn archives_scan_like_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir_code, dir, _) = scan_json(&sample());
    let tar = tar_bytes(|_| {});
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(tar.as_slice(), 3).unwrap();
    let zip = {
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in sample_files() {
            z.start_file(name, o).unwrap();
            z.write_all(&data).unwrap();
        }
        z.finish().unwrap().into_inner()
    };
    for (name, bytes) in [
        ("broker1.tar", &tar),
        ("broker1.tar.gz", &gz),
        ("broker1.tgz", &gz),
        ("broker1.tar.zst", &zst),
        ("broker1.zip", &zip),
    ] {
        let path = tmp.path().join(name);
        write(&path, bytes);
        let before = std::fs::read(&path).unwrap();
        let (code, v, err) = scan_json(&path);
        assert_eq!(code, dir_code, "{name}: {err}");
        assert_eq!(essence(&v, Some(&path)), essence(&dir, None), "{name}");
        assert_eq!(v["summary"], dir["summary"], "{name}");
        let shown = format!("{}!/broker-1/payments-3", path.display());
        let p3 = v["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["topic"] == "payments")
            .unwrap();
        assert_eq!(p3["path"], shown, "{name}");
        assert_eq!(v["inputs"][0], format!("{}!", path.display()), "{name}");
        let text = serde_json::to_string(&v).unwrap();
        assert!(
            !text.contains("klogscan-"),
            "{name}: a temporary path leaked: {text}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{name}: evidence untouched"
        );
    }
    // verify reads archives too, with the same paths.
    let out = klogscan()
        .args(["verify", "--format", "json"])
        .arg(tmp.path().join("broker1.tar.zst"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p3 = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "payments")
        .unwrap();
    let want = format!(
        "{}!/broker-1/payments-3",
        tmp.path().join("broker1.tar.zst").display()
    );
    assert_eq!(p3["path"], want);
    // The HTML report draws timelines from the archive's data (read before the temporary
    // directory goes) and names the archive's paths.
    let tgz = tmp.path().join("broker1.tgz");
    let out = klogscan()
        .args(["scan", "--format", "html"])
        .arg(&tgz)
        .output()
        .unwrap();
    let html = String::from_utf8(out.stdout).unwrap();
    assert_eq!(html.matches("<svg class=\"timeline\"").count(), 1);
    assert!(html.contains("data-kind=\"zombie_write\""));
    assert!(html.contains(&format!("{}!/broker-1/payments-3", tgz.display())));
    assert!(!html.contains("klogscan-"), "no temporary path in the HTML");
    // The text report names the archive too, and producers/txns read archives.
    let path = tmp.path().join("broker1.tgz");
    let out = klogscan().arg("producers").arg(&path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("broker1.tgz!/broker-1/payments-3"), "{text}");
}

#[test]
fn escaping_entries_links_and_other_files_are_not_extracted() {
    let tmp = tempfile::tempdir().unwrap();
    let evil = tar_bytes(|b| {
        // A Kafka-looking file that climbs out of the root (written raw: the builder
        // refuses `..` in names), a symlink, and a non-Kafka file.
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..26].copy_from_slice(b"../escaped-0/00000000.log\0");
        h.set_size(3);
        h.set_mode(0o644);
        h.set_cksum();
        b.append(&h, &b"abc"[..]).unwrap();
        let mut l = tar::Header::new_gnu();
        l.set_entry_type(tar::EntryType::Symlink);
        l.set_size(0);
        l.set_cksum();
        b.append_link(
            &mut l,
            "broker-1/t-0/00000000000000000000.log",
            "/etc/passwd",
        )
        .unwrap();
        let mut r = tar::Header::new_gnu();
        r.set_size(5);
        r.set_mode(0o644);
        r.set_cksum();
        b.append_data(&mut r, "broker-1/README.txt", &b"hello"[..])
            .unwrap();
    });
    let path = tmp.path().join("evil.tar");
    write(&path, &evil);
    let (code, v, err) = scan_json(&path);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("climbs out"), "{err}");
    assert!(err.contains("a link or special file"), "{err}");
    assert!(
        !err.contains("README"),
        "non-Kafka files are skipped silently: {err}"
    );
    assert!(!tmp.path().join("escaped-0").exists());
    let topics: Vec<&str> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["topic"].as_str().unwrap())
        .collect();
    assert!(!topics.contains(&"t"), "{topics:?}");
    assert!(!topics.contains(&"escaped"), "{topics:?}");
}

#[test]
fn a_corrupt_archive_is_an_input_error() {
    let tmp = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar_bytes(|_| {})).unwrap();
    let mut bytes = gz.finish().unwrap();
    bytes.truncate(bytes.len() / 2);
    let path = tmp.path().join("cut.tgz");
    write(&path, &bytes);
    let out = klogscan().arg("scan").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cut.tgz: cannot read it as an archive"),
        "{err}"
    );
    // Beside a good archive: the good one is analysed, the run exits 2.
    let good = tmp.path().join("good.tar");
    write(&good, &tar_bytes(|_| {}));
    let out = klogscan()
        .args(["scan", "--format", "json"])
        .arg(&path)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The good archive's 7 partitions, and those the cut one holds before the cut (its
    // readable prefix is analysed; the error names the last entry read whole).
    let from_cut = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["path"].as_str().unwrap().contains("cut.tgz!/"))
        .count();
    assert!(from_cut > 0, "{v}");
    assert_eq!(v["summary"]["partitions"], 7 + from_cut);
    assert_eq!(v["errors"][0]["path"], path.display().to_string());
    let why = v["errors"][0]["error"].as_str().unwrap_or_default();
    assert!(why.contains("past entry broker-1/"), "{}", v["errors"]);
}
