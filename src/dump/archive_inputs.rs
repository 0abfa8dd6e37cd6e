//! `dump` of files inside archives, addressed as the scan reports name them:
//! `broker1.tgz!/broker-1/payments-3/00000000000000000000.log` (one file),
//! `broker1.tgz!/broker-1/payments-3` (every file of a directory inside, in name order) or
//! `broker1.tgz` / `broker1.tgz!` (every Kafka file of the archive).
//!
//! The archive is read once, streamed ([`crate::discover::archive`]): only the Kafka files of the
//! directories asked for are copied, 64 KiB at a time, into a private temporary directory
//! (removed afterwards) and dumped from there; the output names them by their place in the
//! archive ([`Rewrite`]). Memory stays bounded by the decompressor's window and one line of
//! output; disk use by the files copied, capped by [`Limits`].
//!
//! CLI glue of the `klogscan` binary (`#[doc(hidden)]`): not part of the supported library
//! surface (docs/library.md).

use crate::discover::archive::{self, Limits, Prepared, TempError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The dump inputs with archive members replaced by the files extracted for them.
pub struct DumpInputs {
    /// What to dump, in the order given (a directory inside an archive expanded).
    pub paths: Vec<PathBuf>,
    /// The extracted archives (their temporary directory lives as long as this).
    pub prepared: Prepared,
    /// Inputs refused before reading (a member path that climbs out of the archive).
    pub refused: Vec<(PathBuf, String)>,
}

/// `(archive, member inside it)` when `input` names an archive or a member of one; the
/// member is empty for the whole archive. A path that exists as given is never split.
pub(crate) fn split_member(input: &Path) -> Option<(PathBuf, PathBuf)> {
    let is_archive = |p: &Path| p.is_file() && archive::archive_kind(p).ok().flatten().is_some();
    if input.exists() {
        return is_archive(input).then(|| (input.to_path_buf(), PathBuf::new()));
    }
    let s = input.to_str()?;
    for (i, _) in s.match_indices('!') {
        let rest = &s[i + 1..];
        if !(rest.is_empty() || rest.starts_with('/')) {
            continue;
        }
        let a = Path::new(&s[..i]);
        if is_archive(a) {
            return Some((a.to_path_buf(), PathBuf::from(rest.trim_start_matches('/'))));
        }
    }
    None
}

/// Every file under `dir`, in path order (no symlinks followed: the extraction makes none).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// Extract what the archive inputs ask for; other inputs pass unchanged.
pub fn prepare(inputs: &[PathBuf], limits: &Limits) -> Result<DumpInputs, TempError> {
    let mut refused = Vec::new();
    // (input, its archive and member) in order, then each archive once with the
    // directories its members live in (none: all of it).
    let mut split: Vec<(PathBuf, Option<(PathBuf, PathBuf)>)> = Vec::new();
    let mut archives: Vec<(PathBuf, Vec<PathBuf>, bool)> = Vec::new();
    for input in inputs {
        let Some((a, m)) = split_member(input) else {
            split.push((input.clone(), None));
            continue;
        };
        let member = if m.as_os_str().is_empty() {
            m
        } else {
            match archive::safe_relative(&m) {
                Ok(r) => r,
                Err(why) => {
                    refused.push((
                        input.clone(),
                        format!("not a path inside the archive: {why}"),
                    ));
                    continue;
                }
            }
        };
        let dir = member.parent().map(Path::to_path_buf).unwrap_or_default();
        match archives.iter_mut().find(|(x, _, _)| *x == a) {
            Some((_, dirs, all)) => {
                *all |= dir.as_os_str().is_empty();
                dirs.push(dir);
            }
            None => {
                let all = dir.as_os_str().is_empty();
                archives.push((a.clone(), vec![dir], all));
            }
        }
        split.push((input.clone(), Some((a, member))));
    }
    let selected: Vec<(PathBuf, Vec<PathBuf>)> = archives
        .into_iter()
        .map(|(a, dirs, all)| (a, if all { Vec::new() } else { dirs }))
        .collect();
    let prepared = archive::prepare_selected(&selected, limits)?;
    let mut paths = Vec::with_capacity(split.len());
    for (input, s) in split {
        let Some((a, member)) = s else {
            paths.push(input);
            continue;
        };
        let Some(root) = prepared.extracted(&a) else {
            continue; // unreadable: in `prepared.failed`
        };
        let target = root.join(&member);
        if target.is_dir() {
            paths.extend(files_under(&target));
        } else {
            // A member that is not there: the dump says it cannot read it.
            paths.push(target);
        }
    }
    Ok(DumpInputs {
        paths,
        prepared,
        refused,
    })
}

/// A writer that names extracted files by their place in the archive: every temporary
/// root in a line is replaced by `archive!` before the line goes on. Lines are held until
/// their end (or 1 MiB), so memory is one line of output; [`Write::flush`] writes the rest.
pub struct Rewrite<W: Write> {
    inner: W,
    maps: Vec<(Vec<u8>, Vec<u8>)>,
    buf: Vec<u8>,
}

const HOLD: usize = 1 << 20;

impl<W: Write> Rewrite<W> {
    /// Rewrite `prepared`'s temporary roots; `json`: the replacement is escaped as inside a
    /// JSON string, `text`: as text output escapes (control characters shown).
    pub fn new(inner: W, prepared: &Prepared, json: bool) -> Self {
        let maps = prepared
            .roots()
            .iter()
            .map(|(tmp, shown)| {
                let shown = if json {
                    let q = serde_json::to_string(shown).unwrap_or_default();
                    q.get(1..q.len().saturating_sub(1))
                        .unwrap_or_default()
                        .to_string()
                } else {
                    crate::escape::text(shown).into_owned()
                };
                (tmp.clone().into_bytes(), shown.into_bytes())
            })
            .collect();
        Rewrite {
            inner,
            maps,
            buf: Vec::new(),
        }
    }

    fn emit(&mut self, upto: usize) -> io::Result<()> {
        let chunk: Vec<u8> = self.buf.drain(..upto).collect();
        let mut out = Vec::with_capacity(chunk.len());
        let mut i = 0;
        'scan: while i < chunk.len() {
            for (from, to) in &self.maps {
                if !from.is_empty() && chunk[i..].starts_with(from) {
                    out.extend_from_slice(to);
                    i += from.len();
                    continue 'scan;
                }
            }
            out.push(chunk[i]);
            i += 1;
        }
        self.inner.write_all(&out)
    }
}

impl<W: Write> Write for Rewrite<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if let Some(end) = self.buf.iter().rposition(|&b| b == b'\n') {
            self.emit(end + 1)?;
        } else if self.buf.len() > HOLD {
            self.emit(self.buf.len())?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.emit(self.buf.len())?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_split_only_at_an_archive() {
        let d = std::env::temp_dir().join(format!("klogscan-dump-split-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let tar = d.join("b.tar");
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_cksum();
        b.append_data(&mut h, "x/00000000000000000000.log", &[][..])
            .unwrap();
        std::fs::write(&tar, b.into_inner().unwrap()).unwrap();
        let m = |s: &str| split_member(Path::new(s));
        let t = tar.display().to_string();
        assert_eq!(m(&t), Some((tar.clone(), PathBuf::new())));
        assert_eq!(m(&format!("{t}!")), Some((tar.clone(), PathBuf::new())));
        assert_eq!(
            m(&format!("{t}!/x/00000000000000000000.log")),
            Some((tar.clone(), PathBuf::from("x/00000000000000000000.log")))
        );
        // Not an archive, or no `!/` after it: not split.
        assert_eq!(m(&format!("{}!/y", d.display())), None);
        assert_eq!(m(&format!("{t}!x")), None);
        let txt = d.join("n.txt");
        std::fs::write(&txt, b"hello").unwrap();
        assert_eq!(m(&format!("{}!/y", txt.display())), None);
        // `..` inside the archive is refused, never resolved outside the extraction.
        let p = prepare(
            &[PathBuf::from(format!("{t}!/../../etc/passwd"))],
            &Limits::default(),
        )
        .unwrap();
        assert!(p.paths.is_empty());
        assert!(p.refused[0].1.contains("climbs out"), "{:?}", p.refused);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn rewrite_replaces_roots_across_writes() {
        let prepared_roots = [("/tmp/k-1/0".to_string(), "a \"b\".tgz!".to_string())];
        let maps: Vec<(Vec<u8>, Vec<u8>)> = prepared_roots
            .iter()
            .map(|(t, s)| (t.clone().into_bytes(), s.clone().into_bytes()))
            .collect();
        let mut out = Vec::new();
        {
            let mut w = Rewrite {
                inner: &mut out,
                maps,
                buf: Vec::new(),
            };
            w.write_all(b"Dumping /tmp/k-").unwrap();
            w.write_all(b"1/0/t-0/0.log\nplain line\n").unwrap();
            w.write_all(b"/tmp/k-1/0 at the end").unwrap();
            w.flush().unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Dumping a \"b\".tgz!/t-0/0.log\nplain line\na \"b\".tgz! at the end"
        );
    }
}
