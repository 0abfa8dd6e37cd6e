//! Values pasted into the commands klogscan suggests (the triage's `fix:` lines, the JSON
//! report's `commands` and `remediation`, the HTML report) are quoted for POSIX shells
//! (`sh`, `dash`, `bash`, `zsh`, `ksh`): a transactional id, topic or path from the evidence
//! is data, and Kafka accepts any string as a transactional id (`tx1; touch FILE #`,
//! `$(…)`, backticks, an unbalanced quote). Pasted raw, such an id runs as shell code.
//!
//! * [`shell_quote`]: a value made only of characters no POSIX shell treats specially
//!   (`A-Z a-z 0-9 _ - . , : / @ +`) is written as it is; any other is single-quoted, a
//!   quote inside written `'\''`. Inside single quotes a POSIX shell expands nothing.
//! * A value that cannot be pasted safely gets a placeholder (`<transactional-id>`) and a
//!   note saying why, never its raw text: an empty value (an empty argument changes what
//!   the tool parses), and any value holding a control character (C0, DEL, C1: the text
//!   outputs show them as visible escapes, so the command on screen would name another
//!   value, and a newline would end the command) or an invisible format character
//!   (bidirectional overrides, zero-width characters: the command shown would not be the
//!   command run).
//! * Topic and partition arguments are checked as Kafka checks topic names
//!   (`org.apache.kafka.common.internals.Topic.validate`: 1 to 249 characters of
//!   `A-Z a-z 0-9 . _ -`, not `.` or `..`) and partitions as numbers ≥ 0: a directory not
//!   named `topic-N` gives `<topic>`/`<partition>` placeholders and a note, never
//!   `--topic  --partition -1`.

use std::borrow::Cow;

/// True for a character a POSIX shell never treats specially in an unquoted word.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ',' | ':' | '/' | '@' | '+')
}

/// True for an invisible formatting character (Unicode `Cf` ranges that change how text is
/// shown: bidirectional embeddings/overrides/isolates, zero-width characters, the BOM).
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{61c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
}

/// `s` as one word of a POSIX shell command line, or `None` when it cannot be pasted
/// safely (empty, a control character or an invisible formatting character: see the
/// module docs).
///
/// ```
/// use klogscan::escape::shell_quote;
/// assert_eq!(shell_quote("payments").as_deref(), Some("payments"));
/// assert_eq!(shell_quote("tx1; touch FILE #").as_deref(), Some("'tx1; touch FILE #'"));
/// assert_eq!(shell_quote("it's").as_deref(), Some(r"'it'\''s'"));
/// assert_eq!(shell_quote("a\nb"), None);
/// ```
pub fn shell_quote(s: &str) -> Option<Cow<'_, str>> {
    if s.is_empty()
        || s.chars()
            .any(|c| crate::escape::is_control(c) || invisible(c))
    {
        return None;
    }
    if s.chars().all(plain) {
        return Some(Cow::Borrowed(s));
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Some(Cow::Owned(out))
}

/// An option and a value already quoted or checked (`value`): `--name value`, or
/// `--name=value` when the value starts with `-` — the tools' argument parsers (argparse4j,
/// jopt-simple) take a separate word starting with `-` for another option and stop with
/// "expected one argument", and Kafka accepts a topic name or an id starting with `-`.
///
/// ```
/// use klogscan::escape::flag;
/// assert_eq!(flag("topic", "orders"), "--topic orders");
/// assert_eq!(flag("topic", "-orders"), "--topic=-orders");
/// ```
pub fn flag(name: &str, value: &str) -> String {
    if value.starts_with('-') {
        format!("--{name}={value}")
    } else {
        format!("--{name} {value}")
    }
}

/// `--topic` for `kafka-topics.sh`, whose value is a regular expression
/// (`TopicCommand` filters the cluster's topics with `TopicFilter.IncludeList`, matched
/// against whole names): a topic name's dots escaped, so `orders.eu` selects that topic and
/// not `orders-eu` (a legal name beside it: `Topic.hasCollision` reads `.` as `_`, not as
/// `-`), and quoted (a backslash is special to the shell). `value` is what
/// [`ShellArgs::topic`] gave: a topic name (the only regex character one may hold is `.`)
/// or a placeholder, passed as it is.
pub fn topic_regex_flag(value: &str) -> String {
    if !is_topic_name(value) || !value.contains('.') {
        return flag("topic", value);
    }
    let escaped = value.replace('.', "\\.");
    let quoted = shell_quote(&escaped).map_or_else(|| escaped.clone(), |q| q.into_owned());
    // Joined to its option when the name starts with `-` (see [`flag`]): the quotes are
    // gone by the time the tool's parser reads the word.
    match value.starts_with('-') {
        true => format!("--topic={quoted}"),
        false => format!("--topic {quoted}"),
    }
}

/// True when `t` is a name Kafka accepts for a topic (`Topic.validate`).
pub fn is_topic_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 249
        && t != "."
        && t != ".."
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The arguments of one suggested command (or sentence holding commands): each value
/// quoted, or a placeholder, with the notes saying why a placeholder stands there.
///
/// ```
/// use klogscan::escape::ShellArgs;
/// let mut a = ShellArgs::default();
/// let line = format!(
///     "kafka-transactions.sh --bootstrap-server <broker> describe --transactional-id {}",
///     a.value("$(reboot)", "transactional-id", "the transactional id")
/// );
/// assert!(line.ends_with("--transactional-id '$(reboot)'"));
/// assert!(a.notes().is_empty());
/// let t = format!("--topic {} --partition {}", a.topic(""), a.partition(-1));
/// assert_eq!(t, "--topic <topic> --partition <partition>");
/// assert_eq!(a.notes().len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellArgs {
    notes: Vec<String>,
}

impl ShellArgs {
    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// `value` quoted ([`shell_quote`]), or `<placeholder>` and a note naming `what`.
    pub fn value(&mut self, value: &str, placeholder: &str, what: &str) -> String {
        match shell_quote(value) {
            Some(q) => q.into_owned(),
            None if value.is_empty() => {
                self.note(format!(
                    "<{placeholder}>: {what} is not known from the data; fill it in"
                ));
                format!("<{placeholder}>")
            }
            None => {
                self.note(format!(
                    "<{placeholder}>: {what} holds control or invisible characters and is not \
                     printed in a command; copy it from the JSON report's evidence"
                ));
                format!("<{placeholder}>")
            }
        }
    }

    /// Add a note of the caller's own (once).
    pub fn note_once(&mut self, n: String) {
        self.note(n);
    }

    /// An option and its value as [`Self::value`] quotes it: `--name value`, or
    /// `--name=value` when the value starts with `-` (the tools' argument parsers,
    /// argparse4j and jopt-simple, would take a separate `-x` for an option and stop with
    /// "expected one argument"; both read `--name=value` as the option's value).
    pub fn option(&mut self, name: &str, value: &str, placeholder: &str, what: &str) -> String {
        let v = self.value(value, placeholder, what);
        if value.starts_with('-') && !v.starts_with('<') {
            format!("--{name}={v}")
        } else {
            format!("--{name} {v}")
        }
    }

    /// A topic argument: the name when Kafka accepts it as a topic name, else `<topic>`
    /// and a note (the partition directory is not named `topic-N`).
    pub fn topic(&mut self, topic: &str) -> String {
        if is_topic_name(topic) {
            return topic.to_string();
        }
        self.note(
            "<topic>, <partition>: the partition directory is not named topic-N, so its \
             topic and partition are not known from the data; fill them in"
                .to_string(),
        );
        "<topic>".to_string()
    }

    /// A partition argument: the number when ≥ 0, else `<partition>` and a note.
    pub fn partition(&mut self, partition: i32) -> String {
        if partition >= 0 {
            return partition.to_string();
        }
        self.note(
            "<topic>, <partition>: the partition directory is not named topic-N, so its \
             topic and partition are not known from the data; fill them in"
                .to_string(),
        );
        "<partition>".to_string()
    }

    /// A file of `kafka-dump-log.sh --files`: quoted, or `<segment>` and a note when no
    /// quoting can carry it — a comma too, since `DumpLogSegments` splits the option's
    /// value at commas (a broker's own log dir holds none, `log.dirs` being split at
    /// commas: only an analysis copy's path does).
    pub fn dump_log_file(&mut self, path: &str) -> String {
        if path.contains(',') {
            self.note(
                "<segment>: the segment's path holds a comma, which kafka-dump-log.sh reads as a separator of its --files list; link the segment under a path without one and name that".to_string(),
            );
            return "<segment>".to_string();
        }
        self.path(path, "segment")
    }

    /// A path argument, quoted, or `<what>` and a note.
    pub fn path(&mut self, path: &str, placeholder: &str) -> String {
        self.value(path, placeholder, &format!("the path of the {placeholder}"))
    }

    /// Why placeholders stand in the commands (empty when none does).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The notes as one parenthesised sentence to append to a remediation, or `""`.
    pub fn suffix(&self) -> String {
        if self.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.notes.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// `kafka-dump-log.sh --files` splits its value at commas: a path holding one is a
    /// placeholder with its note; another path is quoted as any path, with no note.
    #[test]
    fn a_dump_log_file_never_holds_a_comma() {
        let mut a = ShellArgs::default();
        assert_eq!(a.dump_log_file("/data/t-0/00.log"), "/data/t-0/00.log");
        assert_eq!(a.dump_log_file("/data/a b/00.log"), "'/data/a b/00.log'");
        assert!(a.notes().is_empty());
        assert_eq!(a.dump_log_file("/copy/broker,1/t-0/00.log"), "<segment>");
        assert_eq!(a.notes().len(), 1);
        assert!(a.notes()[0].contains("comma"), "{:?}", a.notes());
    }

    /// Hostile ids: each must reach a POSIX shell as exactly one argument, unchanged.
    const HOSTILE: &[&str] = &[
        "tx1; touch FILE #",
        "$(touch FILE)",
        "`touch FILE`",
        "it's",
        "'",
        "''",
        "\"unbalanced",
        "a'b\"c`d$e\\f",
        "*",
        "~root",
        "-rf",
        "=ls",
        "a b  c",
        "& touch FILE &",
        "| touch FILE",
        "> FILE",
        "!!",
        "${IFS}",
        "ünïcödé-id",
        "x'; touch FILE; echo '",
    ];

    #[test]
    fn plain_words_stay_as_they_are() {
        for s in ["payments", "orders-3", "a.b_c-d", "user@host:/p+q,r", "42"] {
            assert_eq!(shell_quote(s).as_deref(), Some(s));
        }
    }

    #[test]
    fn hostile_values_are_quoted_and_reach_the_shell_as_one_argument() {
        let dir = tempfile::tempdir().unwrap();
        for &id in HOSTILE {
            let q = shell_quote(id).unwrap_or_else(|| panic!("{id:?} refused"));
            assert!(
                q.starts_with('\'') || id.chars().all(plain),
                "{id:?} -> {q}"
            );
            // Run it: `printf '%s\0' <quoted>` must print the id back, once, and touch
            // nothing.
            let out = Command::new("sh")
                .current_dir(dir.path())
                .arg("-c")
                .arg(format!("printf '%s\\0' {q}"))
                .output()
                .expect("sh runs");
            assert!(out.status.success(), "{id:?}: {out:?}");
            assert_eq!(out.stdout, format!("{id}\0").into_bytes(), "{id:?} -> {q}");
            assert!(
                std::fs::read_dir(dir.path()).unwrap().next().is_none(),
                "{id:?} created a file"
            );
        }
    }

    #[test]
    fn values_that_cannot_be_pasted_safely_are_refused() {
        for s in [
            "",
            "tx1\ntouch FILE",
            "tx1\r",
            "a\x1b]52;c;AAAA\x07",
            "a\u{9b}31m",
            "a\u{7f}",
            "a\0b",
            "safe\u{202e}lave",
            "zero\u{200b}width",
        ] {
            assert_eq!(shell_quote(s), None, "{s:?}");
        }
    }

    /// A value starting with `-` is joined to its option (`--group=-rf`), every other stays
    /// a separate word; hostile values reach the shell as one `--name=value` or value
    /// argument either way.
    #[test]
    fn options_join_values_that_look_like_options() {
        let mut a = ShellArgs::default();
        assert_eq!(
            a.option("group", "-rf", "group", "the group id"),
            "--group=-rf"
        );
        assert_eq!(
            a.option("group", "--to-earliest", "group", "the group id"),
            "--group=--to-earliest"
        );
        assert_eq!(
            a.option("group", "- x", "group", "the group id"),
            "--group='- x'"
        );
        assert_eq!(
            a.option("group", "g1", "group", "the group id"),
            "--group g1"
        );
        assert_eq!(
            a.option("group", "", "group", "the group id"),
            "--group <group>"
        );
        assert_eq!(
            a.option("group", "-\n", "group", "the group id"),
            "--group <group>"
        );
        let dir = tempfile::tempdir().unwrap();
        for &id in HOSTILE {
            let opt = ShellArgs::default().option("group", id, "group", "the group id");
            let out = Command::new("sh")
                .current_dir(dir.path())
                .arg("-c")
                .arg(format!("printf '%s\\0' {opt}"))
                .output()
                .expect("sh runs");
            let words: Vec<&[u8]> = out
                .stdout
                .split(|&b| b == 0)
                .filter(|w| !w.is_empty())
                .collect();
            let want = match id.starts_with('-') {
                true => vec![format!("--group={id}").into_bytes()],
                false => vec![b"--group".to_vec(), id.as_bytes().to_vec()],
            };
            assert_eq!(words, want, "{id:?} -> {opt}");
            assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
        }
    }

    #[test]
    fn args_give_placeholders_and_notes_never_raw_text() {
        let mut a = ShellArgs::default();
        let v = a.value(
            "tx\n; touch FILE",
            "transactional-id",
            "the transactional id",
        );
        assert_eq!(v, "<transactional-id>");
        assert_eq!(a.notes().len(), 1);
        assert!(a.notes()[0].contains("JSON report"), "{:?}", a.notes());
        assert!(!a.suffix().contains("touch"));
        // A directory not named topic-N: no empty or negative argument.
        let mut b = ShellArgs::default();
        let line = format!("--topic {} --partition {}", b.topic(""), b.partition(-1));
        assert_eq!(line, "--topic <topic> --partition <partition>");
        assert_eq!(b.notes().len(), 1, "one note for the pair");
        // A real topic name passes as it is; a name Kafka refuses does not.
        let mut c = ShellArgs::default();
        assert_eq!(c.topic("payments.eu_1-x"), "payments.eu_1-x");
        assert_eq!(c.topic("pay;ments"), "<topic>");
        assert_eq!(c.topic(".."), "<topic>");
        assert_eq!(c.topic(&"a".repeat(250)), "<topic>");
        assert_eq!(c.partition(3), "3");
    }
}
