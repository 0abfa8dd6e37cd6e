//! How human output looks on the device it goes to: colour, table borders and width.
//!
//! The CLI decides once (`--color`, `NO_COLOR`, whether stdout is a terminal, the terminal's
//! width) and hands a [`Style`] to the renderers; the library never probes the terminal
//! itself, so output to a file or a pipe is the same on every machine.

use crate::finding::Severity;
use comfy_table::presets::UTF8_FULL_CONDENSED;

/// comfy-table's `ASCII_FULL_CONDENSED` with `+` where the header line crosses a column
/// (its preset draws `=` there: a header separator without junctions).
const ASCII_FULL_CONDENSED: &str = "||--+=++|    ++++++";
use comfy_table::{Cell, Color, ColumnConstraint, ContentArrangement, Table, Width};

/// Width used when the output is not a terminal, or the terminal reports no usable width.
pub const DEFAULT_WIDTH: u16 = 140;
/// Below this many columns a terminal's report is not believed (0 from some CI runners and
/// serial consoles); [`DEFAULT_WIDTH`] is used instead.
pub(crate) const MIN_WIDTH: u16 = 40;

/// Rendering choices for the human formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (severities, headings).
    pub color: bool,
    /// UTF-8 box drawing (terminals) or plain ASCII borders (files, pipes).
    pub unicode: bool,
    /// Total table width in columns.
    pub width: u16,
}

impl Default for Style {
    /// What a file or a pipe gets: no colour, ASCII, [`DEFAULT_WIDTH`].
    fn default() -> Self {
        Style {
            color: false,
            unicode: false,
            width: DEFAULT_WIDTH,
        }
    }
}

impl Style {
    /// The style for a terminal that reports `columns` (0 or tiny → [`DEFAULT_WIDTH`]).
    pub fn terminal(color: bool, columns: Option<u16>) -> Style {
        Style {
            color,
            unicode: true,
            width: sane_width(columns),
        }
    }

    /// The width of human output: `COLUMNS` when set to a number of at least
    /// 40 (on a terminal or not, as `ls` and `git` read it), else the terminal's width
    /// (`terminal`: `None` when stdout is no terminal), else [`DEFAULT_WIDTH`] (files,
    /// pipes, a terminal reporting 0 or a tiny width).
    pub fn width_from(columns: Option<&str>, terminal: Option<u16>) -> u16 {
        columns
            .and_then(|c| c.trim().parse::<u16>().ok())
            .filter(|&c| c >= MIN_WIDTH)
            .unwrap_or_else(|| sane_width(terminal))
    }

    /// A table with this style's borders and width, with `header`.
    pub fn table(&self, header: &[&str]) -> Table {
        let mut t = Table::new();
        t.load_preset(if self.unicode {
            UTF8_FULL_CONDENSED
        } else {
            ASCII_FULL_CONDENSED
        })
        .set_content_arrangement(ContentArrangement::Dynamic)
        .force_no_tty()
        .set_width(self.width);
        if self.color {
            t.enforce_styling();
        }
        t.set_header(header.to_vec());
        t
    }

    /// A table without borders (the columns of Kafka's own tools, `kafka-consumer-groups.sh`),
    /// with this style's width and `header`.
    pub fn plain_table(&self, header: &[&str]) -> Table {
        let mut t = self.table(header);
        t.load_preset(comfy_table::presets::NOTHING);
        t
    }

    /// A cell coloured by severity when colour is on.
    pub fn severity_cell(&self, text: impl Into<String>, sev: Severity) -> Cell {
        let c = Cell::new(text.into());
        if !self.color {
            return c;
        }
        c.fg(match sev {
            Severity::Error => Color::Red,
            Severity::Warning => Color::Yellow,
            Severity::Info => Color::Cyan,
        })
    }

    /// `text` in bold (and the severity's colour), for headings outside tables.
    pub fn heading(&self, text: &str, sev: Option<Severity>) -> String {
        if !self.color {
            return text.to_string();
        }
        let code = match sev {
            Some(Severity::Error) => "1;31",
            Some(Severity::Warning) => "1;33",
            Some(Severity::Info) => "1;36",
            None => "1",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

/// A terminal width that tables can live with.
pub(crate) fn sane_width(columns: Option<u16>) -> u16 {
    match columns {
        Some(c) if c >= MIN_WIDTH => c,
        _ => DEFAULT_WIDTH,
    }
}

/// Keep every column but `free` at least as wide as its longest word (header included), so
/// that identifiers (kinds, partition names, producer ids) are never broken mid-word; the
/// `free` column (a message) takes what is left and wraps at spaces. When the words do not
/// fit the width, the table grows wider rather than breaking them. Returns the narrowest
/// width the table can then have (callers switch to a narrower layout above the width).
pub(crate) fn keep_words_whole(t: &mut Table, free: Option<usize>) -> usize {
    let n = t.column_count();
    let mut longest = vec![0usize; n];
    let mut measure = |i: usize, s: &str| {
        let w = s
            .split_whitespace()
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0);
        if let Some(l) = longest.get_mut(i) {
            *l = (*l).max(w);
        }
    };
    if let Some(h) = t.header() {
        for (i, c) in h.cell_iter().enumerate() {
            measure(i, &c.content());
        }
    }
    for row in t.row_iter() {
        for (i, c) in row.cell_iter().enumerate() {
            measure(i, &c.content());
        }
    }
    let mut total = n + 1;
    for (i, l) in longest.into_iter().enumerate() {
        // Constraints count the cell padding (one space each side).
        let min = if Some(i) == free { l.min(24) } else { l } + 2;
        total += min;
        if let Some(col) = t.column_mut(i) {
            col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
                u16::try_from(min).unwrap_or(u16::MAX),
            )));
        }
    }
    total
}

/// Keep each line of column `col`'s cells whole (a cell listing one item per line).
pub(crate) fn keep_lines_whole(t: &mut Table, col: usize) {
    let mut longest = 0usize;
    for row in t.row_iter() {
        if let Some(c) = row.cell_iter().nth(col) {
            for l in c.content().lines() {
                longest = longest.max(l.chars().count());
            }
        }
    }
    if let Some(c) = t.column_mut(col) {
        c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
            u16::try_from(longest + 2).unwrap_or(u16::MAX),
        )));
    }
}

/// Wrap `text` at spaces to lines of at most `width` columns (a longer word stays whole on
/// its own line); the first line starts at column `first_col` (after a label the caller
/// writes), continuation lines start with `indent` spaces.
pub fn wrap(text: &str, width: usize, first_col: usize, indent: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut col = first_col;
    let mut line_start = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = word.chars().count();
        if !line_start && col + 1 + len > width {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
            col = indent;
            line_start = true;
        }
        if !line_start {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += len;
        line_start = false;
    }
    out
}

/// The columns a narrower layout of a table keeps: each a column of the full row (by
/// index) and the header it then has.
pub(crate) type Layout<'a> = &'a [(usize, &'a str)];

/// `layouts` with a leading column (a broker, a cluster) when `first` names it: its index
/// 0 kept first in every layout, every other index shifted by one.
pub(crate) fn led_by<'a>(
    first: Option<&'a str>,
    layouts: &[Layout<'a>],
) -> Vec<Vec<(usize, &'a str)>> {
    let skip = usize::from(first.is_some());
    layouts
        .iter()
        .map(|cols| {
            let shifted = cols.iter().map(|&(k, h)| (k + skip, h));
            first.map(|f| (0, f)).into_iter().chain(shifted).collect()
        })
        .collect()
}

/// A table fitted to a width ([`fit_table`]).
pub(crate) struct Fitted {
    pub table: Table,
    /// Whether every word (and every line of the line-whole column) fits the width.
    pub fits: bool,
    /// The headers of the full row's columns the table leaves out.
    pub left_out: Vec<String>,
}

impl Fitted {
    /// The line saying which columns were left out for the width, and where they are.
    pub fn note(&self, width: u16) -> Option<String> {
        (!self.left_out.is_empty()).then(|| {
            format!(
                "(left out at {width} columns: {}; --format json, or a wider COLUMNS, shows them)",
                self.left_out.join(", ")
            )
        })
    }
}

/// The table of `header` and `rows` at `style`'s width (borderless when `plain`): the whole
/// table when its words fit, else the first of `layouts` (narrower column sets) that fits,
/// else the last of them, with `fits` false (callers then print the last layout anyway,
/// or a block per row: [`write_row_blocks`]). Words are never broken
/// ([`keep_words_whole`]); each line of column `lines` (a label, a list one item a line)
/// is kept whole.
pub(crate) fn fit_table(
    style: &Style,
    plain: bool,
    header: &[&str],
    rows: &[Vec<String>],
    layouts: &[Layout<'_>],
    lines: Option<usize>,
) -> Fitted {
    let full: Vec<(usize, &str)> = header.iter().copied().enumerate().collect();
    let width = usize::from(style.width);
    let mut out = None;
    for cols in std::iter::once(full.as_slice()).chain(layouts.iter().copied()) {
        let names: Vec<&str> = cols.iter().map(|c| c.1).collect();
        let mut t = if plain {
            style.plain_table(&names)
        } else {
            style.table(&names)
        };
        for r in rows {
            t.add_row(cols.iter().map(|c| r[c.0].clone()).collect::<Vec<_>>());
        }
        let line_col = lines.and_then(|l| cols.iter().position(|c| c.0 == l));
        let fits = narrowest(&mut t, line_col) <= width;
        let left_out = header
            .iter()
            .enumerate()
            .filter(|(i, _)| !cols.iter().any(|c| c.0 == *i))
            .map(|(_, h)| h.to_string())
            .collect();
        out = Some(Fitted {
            table: t,
            fits,
            left_out,
        });
        if fits {
            break;
        }
    }
    out.expect("the whole table is tried first")
}

/// [`keep_words_whole`] for every column, and each line of column `col` whole when given;
/// the narrowest width the table can then have.
pub(crate) fn narrowest(t: &mut Table, col: Option<usize>) -> usize {
    let total = keep_words_whole(t, None);
    let Some(col) = col else {
        return total;
    };
    let longest_word = |s: &str| {
        s.split_whitespace()
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0)
    };
    let (mut line, mut word) = (0usize, 0usize);
    if let Some(h) = t.header().and_then(|h| h.cell_iter().nth(col)) {
        word = longest_word(&h.content());
    }
    for row in t.row_iter() {
        if let Some(c) = row.cell_iter().nth(col) {
            for l in c.content().lines() {
                line = line.max(l.chars().count());
                word = word.max(longest_word(l));
            }
        }
    }
    if line > word {
        keep_lines_whole(t, col);
    }
    total + line.saturating_sub(word)
}

/// How [`write_fitted`] draws a table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// Borderless (the columns of Kafka's own tools).
    pub plain: bool,
    /// The column whose lines are kept whole (a label, a list one item a line).
    pub lines: Option<usize>,
    /// How many leading cells name a row in its block (the rest are listed under them).
    pub key: usize,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            plain: false,
            lines: None,
            key: 1,
        }
    }
}

/// `rows` under `header` at `style`'s width: the [`fit_table`] that fits (then a line
/// naming the columns it left out), else one block per row ([`write_row_blocks`]).
pub(crate) fn write_fitted(
    style: &Style,
    shape: Shape,
    header: &[&str],
    rows: &[Vec<String>],
    layouts: &[Layout<'_>],
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let fitted = fit_table(style, shape.plain, header, rows, layouts, shape.lines);
    if !fitted.fits {
        return write_row_blocks(style, shape.key, header, rows, w);
    }
    writeln!(w, "{}", fitted.table)?;
    if let Some(n) = fitted.note(style.width) {
        writeln!(w, "{}", wrap(&n, usize::from(style.width), 0, 2))?;
    }
    Ok(())
}

/// Rows too wide for any table at the width, one block each: the first `key` cells (bold)
/// on a line, then every other cell as `header: value`, wrapped under them — nothing left
/// out, no line longer than the width.
pub(crate) fn write_row_blocks(
    style: &Style,
    key: usize,
    header: &[&str],
    rows: &[Vec<String>],
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let width = usize::from(style.width);
    let flat = |v: &String| v.replace('\n', ", ");
    for r in rows {
        let head: Vec<String> = r.iter().take(key).map(flat).collect();
        writeln!(
            w,
            "{}",
            style.heading(&wrap_long(&head.join(" "), width, 0, 4), None)
        )?;
        let rest: Vec<String> = header
            .iter()
            .zip(r)
            .skip(key)
            .map(|(h, v)| format!("{h}: {}", flat(v)))
            .collect();
        writeln!(w, "    {}", wrap_long(&rest.join("; "), width, 4, 4))?;
    }
    Ok(())
}

/// A word and the white space before it.
type Spaced<'a> = (&'a str, &'a str);

/// A POSIX shell command split into its words, each with the white space before it, and
/// the comment ending it (an unquoted `#` starting a word: to the end), white space first.
/// Quotes (`'…'`, `"…"`) and backslash escapes keep their spaces inside a word.
fn shell_words(cmd: &str) -> (Vec<Spaced<'_>>, Option<Spaced<'_>>) {
    let mut words = Vec::new();
    let b = cmd.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let ws_start = i;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        if b[i] == b'#' {
            return (words, Some((&cmd[ws_start..i], &cmd[i..])));
        }
        let start = i;
        let mut quote: Option<u8> = None;
        while i < b.len() {
            match (quote, b[i]) {
                (None, b' ' | b'\t') => break,
                (None, b'\'' | b'"') => quote = Some(b[i]),
                (Some(q), c) if c == q => quote = None,
                (None | Some(b'"'), b'\\') => i += 1,
                _ => {}
            }
            i += 1;
        }
        let end = i.min(b.len());
        words.push((&cmd[ws_start..start], &cmd[start..end]));
        i = end;
    }
    (words, None)
}

/// A shell command wrapped to lines of at most `width` columns so that a copy-paste still
/// runs: breaks only between arguments, each line but the last ending in ` \` (a line
/// continuation), the next ones indented by `indent` (the first starts at column
/// `first_col`); an argument is never broken (a longer one stays whole on its line). A
/// trailing comment that does not fit goes on its own line, itself wrapped at its spaces
/// into comment lines (`#` first). Removing every `\`, newline and indentation after it
/// (and the newline, indentation and `#` opening a comment's next line) gives `cmd` back.
pub fn wrap_command(cmd: &str, width: usize, first_col: usize, indent: usize) -> String {
    let (words, comment) = shell_words(cmd);
    let pad = " ".repeat(indent);
    let mut out = String::with_capacity(cmd.len() + 32);
    let mut col = first_col;
    let mut empty = true;
    let len = |s: &str| s.chars().count();
    for (k, (ws, word)) in words.iter().enumerate() {
        // The last word needs no room for ` \` unless a comment follows it.
        let tail = if k + 1 < words.len() || comment.is_some() {
            2
        } else {
            0
        };
        if !empty && col + len(ws) + len(word) + tail > width {
            out.push_str(ws);
            out.push_str("\\\n");
            out.push_str(&pad);
            out.push_str(word);
            col = indent + len(word);
        } else {
            out.push_str(ws);
            out.push_str(word);
            col += len(ws) + len(word);
        }
        empty = false;
    }
    let Some((ws, text)) = comment else {
        return out;
    };
    if empty || col + len(ws) + len(text) <= width {
        out.push_str(ws);
        out.push_str(text);
        return out;
    }
    out.push_str(ws);
    out.push_str("\\\n");
    out.push_str(&pad);
    col = indent;
    let mut first = true;
    for (ws, word) in split_spaces(text) {
        if !first && col + len(ws) + len(word) > width {
            out.push('\n');
            out.push_str(&pad);
            out.push('#');
            col = indent + 1;
        }
        out.push_str(ws);
        out.push_str(word);
        col += len(ws) + len(word);
        first = false;
    }
    out
}

/// `text`'s words, each with the spaces before it.
fn split_spaces(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let ws = rest.len() - rest.trim_start_matches(' ').len();
        let end = rest[ws..].find(' ').map_or(rest.len(), |e| ws + e);
        let item = (&rest[..ws], &rest[ws..end]);
        rest = &rest[end..];
        Some(item)
    })
}

/// [`wrap`], but a word longer than a whole line (a topic name, a member id, a path) is
/// broken too, after a `/`, `-`, `_`, `.` or `,` where one falls in the line, else where
/// the line ends: every line holds `width` (for blocks, where no column can grow).
pub(crate) fn wrap_long(text: &str, width: usize, first_col: usize, indent: usize) -> String {
    let room = width.saturating_sub(indent).max(8);
    let mut out = String::with_capacity(text.len() + 16);
    let mut col = first_col;
    let newline = |out: &mut String| {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', indent));
    };
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut chars: Vec<char> = word.chars().collect();
        let fresh = col == first_col && out.is_empty();
        if chars.len() <= room {
            if !fresh && col + 1 + chars.len() > width {
                newline(&mut out);
                col = indent;
            } else if !fresh {
                out.push(' ');
                col += 1;
            }
            out.extend(&chars);
            col += chars.len();
            continue;
        }
        // A word no line holds: from a line of its own, in pieces.
        if !fresh {
            newline(&mut out);
            col = indent;
        }
        while chars.len() > width.saturating_sub(col).max(1) {
            let fit = width.saturating_sub(col).max(1);
            let cut = chars[..fit]
                .iter()
                .rposition(|c| matches!(c, '/' | '-' | '_' | '.' | ','))
                .filter(|&i| i + 1 >= fit / 2)
                .map_or(fit, |i| i + 1);
            out.extend(&chars[..cut]);
            chars.drain(..cut);
            newline(&mut out);
            col = indent;
        }
        out.extend(&chars);
        col += chars.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_or_tiny_terminal_widths_fall_back() {
        assert_eq!(sane_width(Some(0)), DEFAULT_WIDTH);
        assert_eq!(sane_width(Some(12)), DEFAULT_WIDTH);
        assert_eq!(sane_width(None), DEFAULT_WIDTH);
        assert_eq!(sane_width(Some(80)), 80);
    }

    #[test]
    fn identifiers_are_not_broken_at_80_columns() {
        let s = Style::terminal(false, Some(80));
        let mut t = s.table(&["kind", "partition", "message"]);
        t.add_row(vec![
            "non_transactional_write_in_transaction",
            "a-rather-long-topic-name-17",
            "producer 4001 wrote data outside its transaction while one was open at offset 12",
        ]);
        keep_words_whole(&mut t, Some(2));
        let text = t.to_string();
        assert!(
            text.contains("non_transactional_write_in_transaction"),
            "{text}"
        );
        assert!(text.contains("a-rather-long-topic-name-17"), "{text}");
        assert!(text.is_ascii() || s.unicode);
    }

    #[test]
    fn columns_then_terminal_then_the_default() {
        assert_eq!(Style::width_from(Some("80"), Some(200)), 80);
        assert_eq!(Style::width_from(Some(" 200 "), None), 200);
        assert_eq!(Style::width_from(Some("12"), Some(100)), 100);
        assert_eq!(Style::width_from(Some("wide"), None), DEFAULT_WIDTH);
        assert_eq!(Style::width_from(None, Some(90)), 90);
        assert_eq!(Style::width_from(None, Some(0)), DEFAULT_WIDTH);
        assert_eq!(Style::width_from(None, None), DEFAULT_WIDTH);
    }

    #[test]
    fn wrapping_keeps_words_whole() {
        let w = wrap(
            "the quick brown fox.jumps.over.the.lazy.dog again",
            16,
            0,
            2,
        );
        assert_eq!(w, "the quick brown\n  fox.jumps.over.the.lazy.dog\n  again");
        assert_eq!(wrap("short", 80, 4, 4), "short");
        assert_eq!(wrap("a b c", 6, 4, 4), "a\n    b\n    c");
    }

    #[test]
    fn files_get_ascii_borders_and_no_colour() {
        let s = Style::default();
        let mut t = s.table(&["kind"]);
        t.add_row(vec![s.severity_cell("zombie_write", Severity::Error)]);
        let text = t.to_string();
        assert!(text.is_ascii(), "{text}");
        assert!(!text.contains('\x1b'));
        let c = Style {
            color: true,
            ..Style::default()
        };
        let mut t = c.table(&["kind"]);
        t.add_row(vec![c.severity_cell("zombie_write", Severity::Error)]);
        assert!(
            t.to_string().contains("\x1b["),
            "colour requested: ANSI codes"
        );
    }

    /// `wrap_command`'s output with its continuations removed.
    fn joined(w: &str, indent: usize) -> String {
        let pad = " ".repeat(indent);
        w.replace(&format!("\\\n{pad}"), "")
            .replace(&format!("\n{pad}#"), "")
    }

    #[test]
    fn commands_wrap_at_argument_boundaries_and_join_back() {
        let cmds = [
            "kafka-transactions.sh --bootstrap-server <broker> abort --topic 'my topic' --partition 3 --start-offset 1200",
            "kafka-topics.sh --bootstrap-server <broker> --describe --under-replicated-partitions --topic orders   # watch until partition 3 leaves this list",
            "kafka-dump-log.sh --files '/var/lib/kafka/data/a b/orders-3/00000000000000000000.log' --deep-iteration",
            r#"echo "a \"quoted # not a comment\" word" x#y   # a comment"#,
            "kafka-server-stop.sh   # on broker 1, if it runs",
        ];
        for width in [40, 60, 80, 140] {
            for c in cmds {
                let w = wrap_command(c, width, 16, 18);
                assert_eq!(joined(&w, 18), c, "{width}:\n{w}");
                let (words, _) = shell_words(c);
                let longest = words.iter().map(|(_, w)| w.chars().count()).max().unwrap();
                for (i, l) in w.lines().enumerate() {
                    let n = l.chars().count() + if i == 0 { 16 } else { 0 };
                    // Only an argument (or comment word) longer than a line overruns.
                    assert!(n <= width || n <= 18 + longest + 2, "{width}:\n{w}");
                    // A line ends in a continuation, or is (in) the comment, or is the last.
                    let last = i + 1 == w.lines().count();
                    let comment = l.trim_start().starts_with('#');
                    assert!(last || comment || l.ends_with(" \\"), "{width}: {l:?}");
                }
            }
        }
        // The shell reads the wrapped command as the same words.
        let argv = |script: &str| {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("set -- {script}\nprintf '%s|' \"$@\""))
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        for c in cmds {
            // (`<broker>` would be a redirection.)
            let c = &c.replace("<broker>", "b:9092");
            let w = wrap_command(c, 40, 16, 18);
            assert!(w.lines().count() > 1, "{w}");
            assert_eq!(argv(&w), argv(c), "{w}");
            assert!(argv(c).contains('|'));
        }
        // Quoted spaces are never broken, and a short command stays on one line.
        let w = wrap_command(cmds[0], 60, 16, 18);
        assert!(w.lines().any(|l| l.contains("'my topic'")), "{w}");
        assert_eq!(wrap_command("ls -l", 80, 16, 18), "ls -l");
        let (words, comment) = shell_words(cmds[3]);
        assert_eq!(words.len(), 3, "{words:?}");
        assert_eq!(comment, Some(("   ", "# a comment")));
    }

    #[test]
    fn long_words_break_at_separators_to_hold_the_width() {
        let t = "GROUP: app; MEMBER: _confluent-controlcenter-7-6-0-1-b45c898e-3688-41b9-a95f-726cca17796e-StreamThread-1-consumer-c8883e20; PATH: ../shared/real-data/broker/Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/kraft-combined-logs: x";
        for width in [40, 60, 80] {
            let w = wrap_long(t, width, 4, 4);
            let first = w.lines().next().unwrap();
            assert!(first.chars().count() + 4 <= width, "{width}:\n{w}");
            assert!(
                w.lines().all(|l| l.chars().count() <= width),
                "{width}:\n{w}"
            );
            let no_space = |s: &str| s.replace([' ', '\n'], "");
            assert_eq!(no_space(&w), no_space(t));
        }
        // Words a line holds are left whole, as `wrap` leaves them.
        let short = "the quick brown fox jumps over the lazy dog";
        assert_eq!(wrap_long(short, 16, 0, 2), wrap(short, 16, 0, 2));
        let w = wrap_long(t, 80, 4, 4);
        assert!(w.contains("kraft-combined-logs:"), "{w}");
        assert!(w.contains("MEMBER:"), "{w}");
    }

    #[test]
    fn tables_narrow_by_layout_then_become_blocks() {
        let header = ["partition", "committed", "size min/p50/p99/max", "duration"];
        let rows = vec![vec![
            "orders-0".to_string(),
            "12".to_string(),
            "1/2/3/4".to_string(),
            "10 ms".to_string(),
        ]];
        let layouts: [Layout<'_>; 1] = [&[(0, "partition"), (1, "committed")]];
        let at = |width| Style {
            width,
            ..Style::default()
        };
        let text = |width| {
            let mut out = Vec::new();
            write_fitted(
                &at(width),
                Shape::default(),
                &header,
                &rows,
                &layouts,
                &mut out,
            )
            .unwrap();
            String::from_utf8(out).unwrap()
        };
        // Wide: the whole table, nothing left out.
        let f = fit_table(&at(80), false, &header, &rows, &layouts, Some(0));
        assert!(f.fits && f.left_out.is_empty());
        assert!(text(80).contains("size min/p50/p99/max"), "{}", text(80));
        // Narrower: the layout, naming what it leaves out.
        let f = fit_table(&at(40), false, &header, &rows, &layouts, Some(0));
        assert!(f.fits);
        assert_eq!(f.left_out, ["size min/p50/p99/max", "duration"]);
        let t = text(40);
        assert!(!t.contains("| size"), "{t}");
        let joined = t.replace("\n  ", " ");
        assert!(
            joined.contains("(left out at 40 columns: size min/p50/p99/max, duration;"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 40), "{t}");
        // Narrower than any layout: a block per row, every cell in it.
        let narrow: [Layout<'_>; 1] = [&[(0, "partition"), (2, "size min/p50/p99/max")]];
        let f = fit_table(&at(20), false, &header, &rows, &narrow, None);
        assert!(!f.fits);
        let mut out = Vec::new();
        write_fitted(&at(20), Shape::default(), &header, &rows, &narrow, &mut out).unwrap();
        let t = String::from_utf8(out).unwrap();
        assert_eq!(
            t,
            "orders-0\n    committed: 12;\n    size\n    min/p50/p99/max:\n    1/2/3/4;\n    duration: 10 ms\n"
        );
    }
}
