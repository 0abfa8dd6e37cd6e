//! Topic globs (`--topic`, `ScanOptions::topic`, the report filters), matched with the
//! `globset` crate: `*` any run of characters, `?` one character, `[...]` a class
//! (`[!...]` its complement), `{a,b}` alternatives, `\` escapes the next character. A
//! pattern that is not a valid glob (`[abc`) matches only the name it spells.

use globset::{GlobBuilder, GlobMatcher};
use std::cell::RefCell;
use std::collections::HashMap;

/// At most this many compiled patterns are kept per thread (a user names a handful).
const CACHE_CAP: usize = 64;

thread_local! {
    /// Compiled patterns, so that a filter held against every partition and finding
    /// compiles each of its globs once per thread (`None`: not a valid glob).
    static COMPILED: RefCell<HashMap<String, Option<GlobMatcher>>> = RefCell::new(HashMap::new());
}

fn compile(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// Does `name` match the glob `pattern`?
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?', '[', '{', '\\']) {
        return pattern == name;
    }
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if !c.contains_key(pattern) {
            if c.len() >= CACHE_CAP {
                c.clear();
            }
            c.insert(pattern.to_owned(), compile(pattern));
        }
        match &c[pattern] {
            Some(m) => m.is_match(name),
            None => pattern == name,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn star_matches_any_run_including_none() {
        assert!(glob_match("codec-*", "codec-gzip"));
        assert!(glob_match("codec-*", "codec-"));
        assert!(glob_match("*", "payments"));
        assert!(glob_match("*", ""));
        assert!(glob_match("*-ments", "pay-ments"));
        assert!(glob_match("p*y*s", "payments"));
        assert!(!glob_match("codec-*", "codecs"));
        assert!(!glob_match("pay*", "orders"));
    }

    #[test]
    fn question_mark_matches_exactly_one_character() {
        assert!(glob_match("codec-?z*", "codec-gzip"));
        assert!(glob_match("codec-?z*", "codec-lz4"));
        assert!(!glob_match("codec-?z*", "codec-zstd"));
        assert!(glob_match("orders-?", "orders-1"));
        assert!(!glob_match("orders-?", "orders-"));
        assert!(!glob_match("orders-?", "orders-12"));
    }

    #[test]
    fn literal_patterns_match_only_their_name() {
        assert!(glob_match("payments", "payments"));
        assert!(!glob_match("payments", "payments2"));
        assert!(!glob_match("payments", "Payments"));
        assert!(!glob_match("", "x"));
        assert!(glob_match("", ""));
    }

    #[test]
    fn classes_and_alternatives() {
        assert!(glob_match("orders-[0-2]", "orders-1"));
        assert!(!glob_match("orders-[0-2]", "orders-3"));
        assert!(glob_match("orders-[!0-2]", "orders-3"));
        assert!(!glob_match("orders-[!0-2]", "orders-0"));
        assert!(glob_match("[ab]*", "alpha"));
        assert!(!glob_match("[ab]*", "gamma"));
        assert!(glob_match("{orders,payments}-*", "payments-eu"));
        assert!(!glob_match("{orders,payments}-*", "refunds-eu"));
    }

    #[test]
    fn names_with_metacharacters() {
        // `.` is literal in a glob (not a regex wildcard): Kafka topic names use it.
        assert!(glob_match("app.events_v1-x", "app.events_v1-x"));
        assert!(!glob_match("app.events", "appXevents"));
        assert!(glob_match("app.*", "app.events"));
        // Escaped metacharacters match themselves.
        assert!(glob_match(r"a\*b", "a*b"));
        assert!(!glob_match(r"a\*b", "axb"));
        assert!(glob_match(r"q\?", "q?"));
        assert!(glob_match(r"x\[1\]", "x[1]"));
        // Not a valid glob: it spells the one name it matches.
        assert!(glob_match("[abc", "[abc"));
        assert!(!glob_match("[abc", "a"));
    }
}
