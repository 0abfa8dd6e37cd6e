//! Java `Properties` text as `Properties.load` reads it, and `meta.properties` after the
//! validity rules of Kafka's `MetaProperties` (built by `MetaProperties.Builder` from what
//! `PropertiesUtils.readPropertiesFile` loads).

use super::{
    CheckpointError, LOST_DIR_ID, METADATA_TOPIC_ID, TextFileKind, ZERO_UUID, decode_uuid,
    encode_uuid,
};

/// Parse a Java `Properties` text (`Properties.load`): `#`/`!` comment lines, blank lines,
/// `key=value`, `key: value` or `key value`, line continuations (odd trailing `\`),
/// escapes (`\t \n \r \f`, `\uXXXX`, `\` + any other char = that char). The bytes are
/// read as ISO-8859-1, as `Properties.load(InputStream)` does. Pairs are returned in file
/// order (a later duplicate key overrides an earlier one in Java; callers use the last).
///
/// The only error is a malformed `\uXXXX` escape (Java throws on it too).
pub fn parse_properties(
    bytes: &[u8],
    file: TextFileKind,
) -> Result<Vec<(String, String)>, CheckpointError> {
    // ISO-8859-1: every byte is the char of the same value.
    let text: String = bytes.iter().map(|&b| b as char).collect();
    let mut out = Vec::new();
    let mut logical = String::new();
    let mut start_line = 0usize;
    let mut continuing = false;
    // Java also ends natural lines at a lone `\r`.
    let natural: Vec<&str> = split_natural_lines(&text);
    for (i, raw) in natural.iter().enumerate() {
        let n = i + 1;
        let line = raw.trim_start_matches([' ', '\t', '\x0C']);
        if !continuing {
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            logical.clear();
            start_line = n;
        }
        // An odd number of trailing backslashes continues the line.
        let trailing = line.bytes().rev().take_while(|&b| b == b'\\').count();
        if trailing % 2 == 1 {
            logical.push_str(&line[..line.len() - 1]);
            continuing = true;
            continue;
        }
        logical.push_str(line);
        continuing = false;
        out.push(split_property(&logical, file, start_line)?);
    }
    if continuing {
        out.push(split_property(&logical, file, start_line)?);
    }
    Ok(out)
}

fn split_natural_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < b.len() {
        out.push(&text[start..]);
    }
    out
}

/// Split one logical line into (key, value) and unescape both.
fn split_property(
    line: &str,
    file: TextFileKind,
    n: usize,
) -> Result<(String, String), CheckpointError> {
    let chars: Vec<char> = line.chars().collect();
    let mut key_end = chars.len();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '=' | ':' | ' ' | '\t' | '\x0C' => {
                key_end = i;
                break;
            }
            _ => i += 1,
        }
    }
    let key_end = key_end.min(chars.len());
    let mut v = key_end;
    while v < chars.len() && matches!(chars[v], ' ' | '\t' | '\x0C') {
        v += 1;
    }
    if v < chars.len() && matches!(chars[v], '=' | ':') {
        v += 1;
        while v < chars.len() && matches!(chars[v], ' ' | '\t' | '\x0C') {
            v += 1;
        }
    }
    let key = unescape(&chars[..key_end], file, n)?;
    let value = unescape(&chars[v.min(chars.len())..], file, n)?;
    Ok((key, value))
}

fn unescape(s: &[char], file: TextFileKind, n: usize) -> Result<String, CheckpointError> {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = s.get(i) else {
            // A lone trailing backslash (only possible at end of input): Java drops it.
            break;
        };
        i += 1;
        match e {
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            'f' => out.push('\x0C'),
            'u' => {
                let hex: String = s.iter().skip(i).take(4).collect();
                let code = if hex.len() == 4 && hex.chars().all(|h| h.is_ascii_hexdigit()) {
                    u32::from_str_radix(&hex, 16).ok()
                } else {
                    None
                };
                let Some(code) = code else {
                    return Err(CheckpointError::new(
                        file,
                        n,
                        format!("malformed \\uxxxx escape \"\\u{hex}\""),
                    ));
                };
                i += 4;
                // A lone surrogate cannot be a Rust char: keep it visible as U+FFFD.
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// The content of `meta.properties` after the broker's validity rules (`MetaProperties.Builder.build`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProperties {
    /// 0 (ZooKeeper-era or migrated) or 1 (KRaft). A missing key means 0.
    pub version: i32,
    /// `broker.id` in v0 (optional), `node.id` in v1 (required).
    pub node_id: Option<i32>,
    /// `cluster.id` (required in v1). Kept as text: the broker does not validate it here.
    pub cluster_id: Option<String>,
    /// `directory.id` (since 3.7): never one of the reserved ids from
    /// [`parse_meta_properties`], possibly one from [`parse_meta_properties_unverified`].
    pub directory_id: Option<[u8; 16]>,
    /// Every key/value pair of the file, in order (unknown keys included).
    pub raw: Vec<(String, String)>,
}

impl MetaProperties {
    /// The directory id as Kafka prints it.
    pub fn directory_id_string(&self) -> Option<String> {
        self.directory_id.as_ref().map(encode_uuid)
    }

    /// The name of the reserved id `directory.id` is, when it is one (`DirectoryId.reserved`:
    /// high half 0 and low half below 100 as a signed long, negative low halves included),
    /// which `MetaPropertiesEnsemble.verify` refuses.
    pub fn reserved_directory_id(&self) -> Option<&'static str> {
        let id = self.directory_id?;
        let (high, low) = id.split_at(8);
        let low = i64::from_be_bytes(low.try_into().unwrap_or([0; 8]));
        match id {
            ZERO_UUID => Some("MIGRATING"),
            METADATA_TOPIC_ID => Some("UNASSIGNED"),
            LOST_DIR_ID => Some("LOST"),
            _ if high == [0; 8] && low < 100 => Some("(DirectoryId.reserved)"),
            _ => None,
        }
    }
}

/// Parse and validate `meta.properties` as `MetaPropertiesEnsemble.Loader.load` and
/// `MetaPropertiesEnsemble.verify` read it: [`parse_meta_properties_unverified`], then a
/// `directory.id` that `DirectoryId.reserved` calls reserved is refused (`verify` throws
/// for it: high half 0, low half below 100 as a signed long — `AAAAAAAAAAAAAAAAAAAAAA`
/// MIGRATING, `…AQ` UNASSIGNED, `…Ag` LOST and the rest of `DirectoryId.reserved`).
pub fn parse_meta_properties(bytes: &[u8]) -> Result<MetaProperties, CheckpointError> {
    let m = parse_meta_properties_unverified(bytes)?;
    if let Some(name) = m.reserved_directory_id() {
        let v = m
            .raw
            .iter()
            .rev()
            .find(|(k, _)| k == "directory.id")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        return Err(CheckpointError::new(
            TextFileKind::MetaProperties,
            find_key_line(bytes, "directory.id"),
            format!("directory.id {v:?} is the reserved id {name}"),
        ));
    }
    Ok(m)
}

/// Parse `meta.properties` as `MetaProperties.Builder(Properties).build()` does, which is
/// what `MetaPropertiesEnsemble.Loader.load` keeps (a refusal makes the log dir an error
/// dir); the ensemble's own checks (`MetaPropertiesEnsemble.verify`, a reserved
/// `directory.id` among them) come after:
/// * `version` missing → 0; trimmed, it must be the int `0` or `1` (` 1`, `01` and `+1` are 1);
/// * v0: `broker.id`, if present, must be an int, untrimmed (it is the node id; `node.id`
///   is ignored);
/// * v1: `node.id` is required and must be an int, untrimmed; `cluster.id` is required;
/// * `directory.id`, if present, must be a UUID (`Uuid.fromString`).
///
/// Not judged: ints in non-ASCII digits, which Java's `Integer.parseInt` reads.
///
/// Errors about a key give the line of its (last) occurrence, or 0 when it is missing.
pub fn parse_meta_properties_unverified(bytes: &[u8]) -> Result<MetaProperties, CheckpointError> {
    const F: TextFileKind = TextFileKind::MetaProperties;
    let raw = parse_properties(bytes, F)?;
    // Line numbers of keys, for messages: re-derive from the text cheaply.
    let line_of = |key: &str| -> usize { find_key_line(bytes, key) };
    let get = |key: &str| -> Option<&str> {
        raw.iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    // `MetaPropertiesVersion.fromNumberString`: `Integer.parseInt` of the value after
    // `String.trim` (which strips every char up to U+0020), then 0 or 1.
    let version = match get("version") {
        None => 0,
        Some(v) => match super::java_int::<i32>(v.trim_matches(|c: char| c <= ' ')) {
            Ok(n @ (0 | 1)) => n,
            Ok(n) => {
                return Err(CheckpointError::new(
                    F,
                    line_of("version"),
                    format!("unknown meta.properties version number {n} (expected 0 or 1)"),
                ));
            }
            Err(_) => {
                return Err(CheckpointError::new(
                    F,
                    line_of("version"),
                    format!("invalid meta.properties version string {v:?}"),
                ));
            }
        },
    };
    // `PropertiesUtils.loadRequiredIntProp`: `Integer.parseInt` of the value as it is
    // (no trim: `node.id=1 ` is refused).
    let int_prop = |key: &str| -> Result<Option<i32>, CheckpointError> {
        match get(key) {
            None => Ok(None),
            Some(v) => super::java_int::<i32>(v).map(Some).map_err(|_| {
                CheckpointError::new(F, line_of(key), format!("{key} {v:?} is not an int32"))
            }),
        }
    };
    let node_id = if version == 0 {
        int_prop("broker.id")?
    } else {
        match int_prop("node.id")? {
            Some(id) => Some(id),
            None => {
                return Err(CheckpointError::new(
                    F,
                    0,
                    "node.id was not found (required in v1)",
                ));
            }
        }
    };
    let cluster_id = get("cluster.id").map(str::to_owned);
    if version == 1 && cluster_id.is_none() {
        return Err(CheckpointError::new(
            F,
            0,
            "cluster.id was not found (required in v1)",
        ));
    }
    let directory_id = match get("directory.id") {
        None => None,
        Some(v) => {
            let id = decode_uuid(v)
                .map_err(|why| CheckpointError::new(F, line_of("directory.id"), why))?;
            Some(id)
        }
    };
    Ok(MetaProperties {
        version,
        node_id,
        cluster_id,
        directory_id,
        raw,
    })
}

/// The 1-based line of the last natural line starting with `key` followed by a
/// separator (good enough for error messages; 0 when not found).
fn find_key_line(bytes: &[u8], key: &str) -> usize {
    let text: String = bytes.iter().map(|&b| b as char).collect();
    let mut found = 0;
    for (i, l) in split_natural_lines(&text).iter().enumerate() {
        let l = l.trim_start_matches([' ', '\t', '\x0C']);
        if let Some(rest) = l.strip_prefix(key)
            && rest.starts_with(['=', ':', ' ', '\t', '\x0C'])
        {
            found = i + 1;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_escapes_and_separators() {
        let p = parse_properties(
            b"# c\n! c2\n  a\\:b = x\\=y\nk: v\\\\w\nu=\\u0041\\q\ncont=ab\\\n   cd\nsp value here\n",
            TextFileKind::MetaProperties,
        )
        .unwrap();
        assert_eq!(
            p,
            vec![
                ("a:b".into(), "x=y".into()),
                ("k".into(), "v\\w".into()),
                ("u".into(), "Aq".into()),
                ("cont".into(), "abcd".into()),
                ("sp".into(), "value here".into()),
            ]
        );
    }
}
