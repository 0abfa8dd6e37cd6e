//! Output safety: text from the evidence (directory and file names, record keys, values,
//! header keys, transactional ids, group names…) is hostile. Written raw to a terminal,
//! ESC and C1 controls (U+009B is a one-character CSI) become SGR, title and clipboard
//! (OSC 52) commands, and CR/LF forge lines (a key holding `\r\n` can print a fake record
//! line, a directory name with `\n` a fake finding line).
//!
//! Every text output (tables, `verify` text, `dump` text, progress, stderr diagnostics)
//! passes such strings through [`text`]: C0 controls (U+0000–U+001F), DEL (U+007F) and C1
//! controls (U+0080–U+009F) become visible escapes — `\n`, `\r`, `\t`, `\x1b`, `\u{9b}` —
//! everything else is unchanged (a backslash stays a backslash, so `\n` in the output is
//! ambiguous between an escaped newline and the two characters; the JSON output is exact).
//! The same rule holds where the text is not a terminal's first: the HTML report (a saved
//! report printed with `cat`), `--format find-hanging` (whose columns are the tool's own
//! tabs), `groups`' tables, the triage's `fix:` lines. The stream writers below
//! ([`JsonWriter::text`], [`SgrWriter`]) apply it too, as a backstop behind the fields.
//! `--format json` needs nothing from here: JSON escapes every control character itself.

use std::borrow::Cow;
use std::fmt::Write as _;

/// True for the characters [`text`] escapes.
pub fn is_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// `s` with every control character (C0, DEL, C1) escaped; borrowed when there is none.
pub fn text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push(&mut out, s);
    Cow::Owned(out)
}

/// Append `s` to `out` with every control character escaped (no allocation of its own).
pub fn push(out: &mut String, s: &str) {
    let mut rest = s;
    while let Some(i) = rest.find(is_control) {
        out.push_str(&rest[..i]);
        let c = rest[i..].chars().next().unwrap_or('\0');
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
        rest = &rest[i + c.len_utf8()..];
    }
    out.push_str(rest);
}

/// A file name that may not be valid UTF-8, for a message: its valid UTF-8 as it is, each
/// byte that is not as `\xNN` (a lossy rendering would hide which bytes they are, and two
/// such names would read alike).
pub fn os_name(name: &std::ffi::OsStr) -> String {
    let mut out = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// A path for text output: lossy UTF-8, control characters escaped.
pub fn path(p: &std::path::Path) -> String {
    text(&p.to_string_lossy()).into_owned()
}

/// Write `value` as pretty-printed JSON to `w` through a 64 KiB buffer.
///
/// `serde_json` writes every token (a brace, a key, a comma, the indentation) as its own
/// `write` call; through a `&mut dyn Write` and a [`JsonWriter`] that is a virtual call and
/// a `memchr` per token. On `scan` of 150 000 transactional ids (a 190 MB document) that
/// was 92 % of the process's instructions; buffered, [`JsonWriter`] sees 64 KiB at a time
/// (it escapes across write boundaries, so where the chunks fall changes nothing).
pub fn write_pretty_json<T: serde::Serialize + ?Sized>(
    w: &mut dyn std::io::Write,
    value: &T,
) -> std::io::Result<()> {
    let mut b = std::io::BufWriter::with_capacity(64 << 10, w);
    serde_json::to_writer_pretty(&mut b, value)?;
    std::io::Write::flush(&mut b)
}

/// A writer that escapes control characters in a UTF-8 stream, across write boundaries.
///
/// * [`JsonWriter::new`] (JSON output): DEL and the C1 controls (U+007F–U+009F), which
///   JSON allows raw and `serde_json` writes raw — printed to a terminal, U+009B is a CSI
///   — become `\u00XX` escapes. In JSON text they can only occur inside strings (the
///   structure is ASCII), so the document stays valid and its values identical.
/// * [`JsonWriter::text`] (tables and reports): every control character except the line
///   feed becomes a visible escape as in [`text`] — a backstop behind the per-field
///   escaping of the renderers (which also escapes line feeds inside names and data).
pub struct JsonWriter<W: std::io::Write> {
    inner: W,
    /// Text mode (see above) rather than JSON mode.
    text: bool,
    /// A 0xC2 lead byte held back until its continuation byte arrives.
    pending_c2: bool,
}

impl<W: std::io::Write> JsonWriter<W> {
    /// JSON mode: DEL and C1 as `\u00XX`.
    pub fn new(inner: W) -> Self {
        JsonWriter {
            inner,
            text: false,
            pending_c2: false,
        }
    }

    /// Text mode: every control character but `\n` escaped.
    pub fn text(inner: W) -> Self {
        JsonWriter {
            inner,
            text: true,
            pending_c2: false,
        }
    }

    fn escape_c1(&mut self, b: u8) -> std::io::Result<()> {
        if self.text {
            write!(self.inner, "\\u{{{:x}}}", b as u32)
        } else {
            write!(self.inner, "\\u{:04x}", b as u32)
        }
    }

    fn escape_ascii(&mut self, b: u8) -> std::io::Result<()> {
        match (self.text, b) {
            (false, _) => write!(self.inner, "\\u{:04x}", b as u32),
            (true, b'\r') => self.inner.write_all(b"\\r"),
            (true, b'\t') => self.inner.write_all(b"\\t"),
            (true, _) => write!(self.inner, "\\x{:02x}", b as u32),
        }
    }

    /// True for an ASCII byte this mode escapes.
    fn escapes(&self, b: u8) -> bool {
        b == 0x7f || (self.text && b < 0x20 && b != b'\n')
    }
}

impl<W: std::io::Write> std::io::Write for JsonWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut from = 0;
        let mut i = 0;
        if self.pending_c2 {
            self.pending_c2 = false;
            match buf.first() {
                Some(&b) if (0x80..=0x9f).contains(&b) => {
                    self.escape_c1(b)?;
                    from = 1;
                    i = 1;
                }
                _ => self.inner.write_all(&[0xc2])?,
            }
        }
        while i < buf.len() {
            // Jump to the next byte that may need escaping: in JSON mode only DEL and a C1
            // lead byte (serde_json escapes the rest), found with memchr; most output has none.
            let next = if self.text {
                buf[i..].iter().position(|&b| b == 0xc2 || self.escapes(b))
            } else {
                memchr::memchr2(0x7f, 0xc2, &buf[i..])
            };
            let Some(skip) = next else { break };
            i += skip;
            let b = buf[i];
            if self.escapes(b) {
                self.inner.write_all(&buf[from..i])?;
                self.escape_ascii(b)?;
                from = i + 1;
            } else if b == 0xc2 {
                match buf.get(i + 1) {
                    Some(&n) if (0x80..=0x9f).contains(&n) => {
                        self.inner.write_all(&buf[from..i])?;
                        self.escape_c1(n)?;
                        i += 1;
                        from = i + 1;
                    }
                    Some(_) => {}
                    None => {
                        self.inner.write_all(&buf[from..i])?;
                        self.pending_c2 = true;
                        from = buf.len();
                    }
                }
            }
            i += 1;
        }
        self.inner.write_all(&buf[from.min(buf.len())..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.pending_c2 {
            self.pending_c2 = false;
            self.inner.write_all(&[0xc2])?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_is_untouched() {
        assert!(matches!(text("payments-0 ünïcode ✓"), Cow::Borrowed(_)));
        assert_eq!(
            text("a\x1b]52;c;AAAA\x07b\r\nc\u{9b}31m\u{7f}\0\t"),
            "a\\x1b]52;c;AAAA\\x07b\\r\\nc\\u{9b}31m\\x7f\\x00\\t"
        );
        // U+00A0 and above are printable: not escaped.
        assert_eq!(text("\u{a0}é"), "\u{a0}é");
        for c in (0u32..0x110000).filter_map(char::from_u32) {
            let e = text(c.encode_utf8(&mut [0; 4])).into_owned();
            assert!(!e.chars().any(is_control), "{c:?}");
        }
    }

    #[test]
    fn json_writer_escapes_c1_and_del_across_writes() {
        use std::io::Write;
        let v = serde_json::json!({"k": "a\u{9b}31m\u{7f}é\u{85}z\u{a0}"});
        let text = serde_json::to_string(&v).unwrap();
        for split in 0..text.len() {
            let mut w = JsonWriter::new(Vec::new());
            w.write_all(&text.as_bytes()[..split]).unwrap();
            w.write_all(&text.as_bytes()[split..]).unwrap();
            w.flush().unwrap();
            let out = String::from_utf8(w.inner).unwrap();
            assert_eq!(out, "{\"k\":\"a\\u009b31m\\u007fé\\u0085z\u{a0}\"}");
            let back: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(back, v);
        }
    }

    /// The buffered pretty printer gives the unbuffered one's bytes, C1 escapes included,
    /// wherever its 64 KiB chunks split a two-byte C1 character.
    #[test]
    fn buffered_pretty_json_is_the_unbuffered_document() {
        use std::io::Write;
        // Strings of every length around the chunk size, each ending in U+009B.
        let v: Vec<String> = (0..40)
            .map(|i| format!("{}\u{9b}", "x".repeat(3000 + 37 * i)))
            .collect();
        let mut want = JsonWriter::new(Vec::new());
        serde_json::to_writer_pretty(&mut want, &v).unwrap();
        want.flush().unwrap();
        let mut got = JsonWriter::new(Vec::new());
        write_pretty_json(&mut got, &v).unwrap();
        got.flush().unwrap();
        assert!(want.inner.len() > 2 * (64 << 10));
        assert_eq!(got.inner, want.inner);
        let out = String::from_utf8(got.inner).unwrap();
        assert_eq!(out.matches("\\u009b").count(), 40);
        assert!(!out.contains('\u{9b}'));
    }

    #[test]
    fn text_writer_escapes_all_but_line_feeds() {
        use std::io::Write;
        let text = "a\x1b[31m\u{9b}b\r\n\tc\u{7f}é\n";
        for split in 0..text.len() {
            let mut w = JsonWriter::text(Vec::new());
            w.write_all(&text.as_bytes()[..split]).unwrap();
            w.write_all(&text.as_bytes()[split..]).unwrap();
            w.flush().unwrap();
            let out = String::from_utf8(w.inner).unwrap();
            assert_eq!(out, "a\\x1b[31m\\u{9b}b\\r\n\\tc\\x7fé\n");
        }
    }

    /// The writers' skip-ahead search finds every byte the per-character rules escape:
    /// long strings mixing plain text, C0, DEL, C1, other two-byte characters led by 0xC2
    /// (U+00A0–U+00BF, never escaped) and longer characters, written in uneven pieces, give
    /// the reference escaping of each character.
    #[test]
    fn writers_match_the_per_character_reference_on_long_mixed_text() {
        use std::io::Write;
        let alphabet = [
            "plain ", "\n", "\u{1b}", "\u{7f}", "\u{85}", "\u{9b}", "\u{a0}", "\u{bf}", "é", "✓",
            "\r\n", "\t", "🙂", "\u{0}",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..200 {
            let mut s = String::new();
            for _ in 0..(round * 7 % 300) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let piece = 1 + round % 23;
            for json in [true, false] {
                let mut w = if json {
                    JsonWriter::new(Vec::new())
                } else {
                    JsonWriter::text(Vec::new())
                };
                for chunk in s.as_bytes().chunks(piece) {
                    w.write_all(chunk).unwrap();
                }
                w.flush().unwrap();
                let mut want = String::new();
                for c in s.chars() {
                    let u = c as u32;
                    match c {
                        '\n' => want.push('\n'),
                        _ if json && (0x7f..=0x9f).contains(&u) => {
                            want.push_str(&format!("\\u{u:04x}"))
                        }
                        _ if !json && is_control(c) => push(&mut want, c.encode_utf8(&mut [0; 4])),
                        _ => want.push(c),
                    }
                }
                assert_eq!(
                    String::from_utf8(w.inner).unwrap(),
                    want,
                    "json={json} piece={piece}"
                );
            }
        }
    }
}

/// A writer for coloured terminal text: every control character except the line feed is
/// escaped as in [`text`], except complete SGR sequences (`ESC [ digits/; m`), which are
/// the colours klogscan itself writes (a hostile name can at most change a colour: no
/// title, clipboard or cursor sequence gets through). C1 controls (UTF-8 `C2 80`–`C2 9F`)
/// are escaped too. An SGR sequence split across two writes is escaped (never seen in
/// practice: each coloured string is written whole).
pub struct SgrWriter<W: std::io::Write> {
    inner: W,
}

impl<W: std::io::Write> SgrWriter<W> {
    pub fn new(inner: W) -> Self {
        SgrWriter { inner }
    }
}

impl<W: std::io::Write> std::io::Write for SgrWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = Vec::with_capacity(buf.len() + 8);
        let mut i = 0;
        while i < buf.len() {
            let b = buf[i];
            if b == 0x1b {
                let mut j = i + 1;
                if buf.get(j) == Some(&b'[') {
                    j += 1;
                    while buf.get(j).is_some_and(|c| c.is_ascii_digit() || *c == b';') {
                        j += 1;
                    }
                    if buf.get(j) == Some(&b'm') {
                        out.extend_from_slice(&buf[i..=j]);
                        i = j + 1;
                        continue;
                    }
                }
                out.extend_from_slice(b"\\x1b");
                i += 1;
            } else if b == 0xc2 && buf.get(i + 1).is_some_and(|c| (0x80..=0x9f).contains(c)) {
                let _ =
                    std::io::Write::write_fmt(&mut out, format_args!("\\u{{{:x}}}", buf[i + 1]));
                i += 2;
            } else if (b < 0x20 && b != b'\n') || b == 0x7f {
                // The rule of [`text`]: `\r`, `\t`, `\xNN`.
                let mut e = String::new();
                push(&mut e, char::from(b).encode_utf8(&mut [0; 4]));
                out.extend_from_slice(e.as_bytes());
                i += 1;
            } else {
                out.push(b);
                i += 1;
            }
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod sgr_tests {
    use std::io::Write;

    #[test]
    fn sgr_passes_other_controls_are_escaped() {
        let mut v = Vec::new();
        let mut w = super::SgrWriter::new(&mut v);
        w.write_all(b"\x1b[1;31mERROR\x1b[0m a\x1b]0;title\x07b\rc\xc2\x9bd\n")
            .unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "\x1b[1;31mERROR\x1b[0m a\\x1b]0;title\\x07b\\rc\\u{9b}d\n"
        );
    }
}

mod shell;
pub use shell::{ShellArgs, flag, is_topic_name, shell_quote, topic_regex_flag};
