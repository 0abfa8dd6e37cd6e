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

/// A path for text output: lossy UTF-8, control characters escaped.
pub fn path(p: &std::path::Path) -> String {
    text(&p.to_string_lossy()).into_owned()
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
            assert_eq!(e.chars().any(is_control), false, "{c:?}");
        }
    }
}
