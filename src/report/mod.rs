//! Findings → reports: the JSON report (a stable, documented schema: `docs/report-schema.md`)
//! and human tables.

pub mod client;
pub mod consumers;
mod decision;
pub mod filter;
mod groups;
pub mod history;
pub mod html;
pub mod json;
pub mod jsonl;
mod labels;
pub mod style;
pub mod table;

pub mod triage;
mod txns_table;
pub mod verify_text;

/// Format a millisecond timestamp as RFC 3339 UTC (`2019-11-05T10:00:00.000Z`), or the raw
/// number when it is not a plausible time.
pub(crate) fn format_ms(ms: i64) -> String {
    if !(0..=253_402_300_799_999).contains(&ms) {
        return ms.to_string();
    }
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Parse a time given on the command line (with the `jiff` crate): `now`; milliseconds
/// since the epoch; a duration ago (`2h`, `30m`, `1d`, `1h30m`: before the system clock's
/// now); RFC 3339 / ISO 8601 with an offset (`2019-11-05T10:00:00Z`,
/// `2019-11-05T11:00:00+01:00`, fractional seconds allowed); a date and time without an
/// offset, or a date alone (`2019-11-05`: midnight), both read as UTC — the time zone every
/// table prints.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let now = || jiff::Timestamp::now().as_millisecond();
    if s.eq_ignore_ascii_case("now") {
        return Ok(now());
    }
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    // Epoch milliseconds beyond 64 bits: said so, not that they cannot be parsed.
    if let Some(n) = whole_number(s) {
        let (what, bound) = if n < 0 {
            ("small", format!("at least {}", i64::MIN))
        } else {
            ("large", format!("at most {}", i64::MAX))
        };
        return Err(format!(
            "time {s:?} is too {what} (epoch milliseconds are 64-bit: {bound})"
        ));
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) && s.ends_with(|c: char| c.is_ascii_alphabetic())
    {
        match parse_duration(s) {
            Ok(ago) => return Ok(now().saturating_sub(ago)),
            Err(e) if e.ends_with(TOO_LARGE) => return Err(e),
            Err(_) => {}
        }
    }
    // RFC 3339 offsets stop at ±23:59 (jiff's own range is wider).
    let offset_hours = s
        .get(s.len().saturating_sub(6)..)
        .filter(|o| o.starts_with(['+', '-']) && o.as_bytes().get(3) == Some(&b':'))
        .and_then(|o| o[1..3].parse::<u32>().ok());
    let bad = || {
        format!(
            "cannot parse time {s:?}: use now, epoch milliseconds, a duration ago (2h, 30m, 1d), \
             RFC 3339 (2019-11-05T10:00:00Z, 2019-11-05T11:00:00+01:00) or a date (2019-11-05, UTC)"
        )
    };
    if offset_hours.is_some() || s.ends_with(['Z', 'z']) {
        // An offset is given: the instant it names, or an error (never a civil reading).
        return match s.parse::<jiff::Timestamp>() {
            Ok(t) if offset_hours.is_none_or(|h| h <= 23) => Ok(t.as_millisecond()),
            _ => Err(bad()),
        };
    }
    let utc = |dt: jiff::civil::DateTime| {
        dt.to_zoned(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp().as_millisecond())
            .ok()
    };
    if let Some(ms) = s.parse::<jiff::civil::DateTime>().ok().and_then(utc) {
        return Ok(ms);
    }
    if let Some(ms) = s
        .parse::<jiff::civil::Date>()
        .ok()
        .and_then(|d| utc(d.to_datetime(jiff::civil::Time::midnight())))
    {
        return Ok(ms);
    }
    Err(bad())
}

/// The end of [`parse_duration`]'s message for a duration past 64-bit milliseconds (a
/// time "ago" that large says so too, rather than that it cannot be parsed).
const TOO_LARGE: &str =
    " is too large (durations are 64-bit milliseconds: at most about 292 million years)";

/// Parse a duration: `15m`, `900s`, `1h30m`, `2d`, `500ms`. A number needs a unit (`25`
/// could mean milliseconds, seconds or minutes); only `0` may go without one.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    if let Ok(n) = s.parse::<i64>() {
        return match n {
            0 => Ok(0),
            n if n < 0 => Err(format!("duration {s:?} is negative")),
            n => Err(format!(
                "duration {s:?} needs a unit: {n}ms, {n}s, {n}m, {n}h or {n}d"
            )),
        };
    }
    // A number beyond 64 bits, unit or not, is too large (or negative), not unparsable.
    match whole_number(s) {
        Some(n) if n < 0 => return Err(format!("duration {s:?} is negative")),
        Some(_) => return Err(format!("duration {s:?}{TOO_LARGE}")),
        None => {}
    }
    let bad = || format!("cannot parse duration {s:?}: use e.g. 15m, 900s, 1h30m, 2d, 500ms");
    let mut total = 0i64;
    let mut num = String::new();
    let mut chars = s.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let too_large = || format!("duration {s:?}{TOO_LARGE}");
        let n: i64 = match num.parse() {
            Ok(n) => n,
            Err(_) if !num.is_empty() => return Err(too_large()),
            Err(_) => return Err(bad()),
        };
        num.clear();
        let unit = match c {
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                1
            }
            'd' => 86_400_000,
            'h' => 3_600_000,
            'm' => 60_000,
            's' => 1_000,
            _ => return Err(bad()),
        };
        total = total
            .checked_add(n.checked_mul(unit).ok_or_else(too_large)?)
            .ok_or_else(too_large)?;
        any = true;
    }
    if !num.is_empty() || !any {
        return Err(bad());
    }
    Ok(total)
}

/// A whole number as typed on the command line (an optional sign, then ASCII digits),
/// clamped to `i128`, whose range holds every integer type's; `None` when `s` is not one.
/// It lets a value beyond its type's range be said to be too large (or too small) rather
/// than not a number.
pub fn whole_number(s: &str) -> Option<i128> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let negative = s.starts_with('-');
    Some(
        s.parse::<i128>()
            .unwrap_or(if negative { i128::MIN } else { i128::MAX }),
    )
}

/// `s` as a whole number in `min..=max` (an integer option's value): one beyond the range
/// is said to be too large, negative or too small — with the bound — never that it cannot
/// be parsed.
pub fn parse_whole(s: &str, min: i128, max: i128) -> Result<i128, String> {
    match whole_number(s) {
        None => Err(format!("{s:?} is not a whole number")),
        Some(n) if n > max => Err(format!("{s} is too large (at most {max})")),
        Some(n) if n < min && min == 0 => Err(format!("{s} is negative (at least 0)")),
        Some(n) if n < min => Err(format!("{s} is too small (at least {min})")),
        Some(n) => Ok(n),
    }
}

/// `n` and its noun, singular for one ("1 partition", "2 partitions"; "batch" takes
/// "es").
pub(crate) fn count(n: u64, noun: &str) -> String {
    match (n, noun.ends_with("ch")) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{n} {noun}es"),
        (_, false) => format!("{n} {noun}s"),
    }
}

/// How text output names a partition directory: `topic-N`; a directory not named
/// `topic-N` (evidence copied into a folder of its own: its topic and partition are not
/// known) by its own name with a trailing `/` (`evidence/`), never `--1`. Control
/// characters escaped.
pub(crate) fn partition_name(topic: &str, partition: i32, path: Option<&str>) -> String {
    if !topic.is_empty() && partition >= 0 {
        return format!("{}-{partition}", crate::escape::text(topic));
    }
    match path.and_then(|p| std::path::Path::new(p).file_name()) {
        Some(n) => format!("{}/", crate::escape::text(&n.to_string_lossy())),
        None if topic.is_empty() => "-".to_string(),
        None => format!("{}-{partition}", crate::escape::text(topic)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            parse_time("2019-11-05T10:00:00Z").unwrap(),
            1_572_948_000_000
        );
        assert_eq!(format_ms(1_572_948_000_123), "2019-11-05T10:00:00.123Z");
        assert_eq!(
            parse_time("2019-11-05T11:00:00.5+01:00").unwrap(),
            1_572_948_000_500
        );
        assert_eq!(parse_time("1572948000000").unwrap(), 1_572_948_000_000);
        assert!(parse_time("yesterday").is_err());
        assert!(parse_time("now").unwrap() > 1_700_000_000_000);
        // Non-ASCII and impossible dates/offsets are errors, never panics or silent rollovers.
        assert!(parse_time("2019-11-05T10:00:00+0é00").is_err());
        assert!(parse_time("2019-02-31T10:00:00Z").is_err());
        assert!(parse_time("2019-04-31T10:00:00Z").is_err());
        assert!(parse_time("2019-11-05T10:00:00+24:00").is_err());
        assert!(parse_time("2019-11-05T10:00:00+01:60").is_err());
        assert_eq!(
            parse_time("2020-02-29T00:00:00Z").unwrap(),
            1_582_934_400_000
        );
        assert!(parse_time("2019-02-29T00:00:00Z").is_err());
        for ms in [951_782_400_000i64, 1_709_164_800_000, 4_102_444_800_000] {
            assert_eq!(parse_time(&format_ms(ms)).unwrap(), ms);
        }
    }

    #[test]
    fn date_only_relative_and_offsets() {
        assert_eq!(parse_time("2019-11-05").unwrap(), 1_572_912_000_000);
        assert_eq!(
            parse_time("2019-11-05T10:00:00").unwrap(),
            1_572_948_000_000
        );
        assert_eq!(
            parse_time("2019-11-05T05:00:00-05:00").unwrap(),
            1_572_948_000_000
        );
        let now = parse_time("now").unwrap();
        for (s, ago) in [("2h", 7_200_000i64), ("30m", 1_800_000), ("1d", 86_400_000)] {
            let t = parse_time(s).unwrap();
            // The clock moves between the two calls: within a minute.
            assert!((now - ago - t).abs() < 60_000, "{s}: {t} vs {now}");
        }
        assert!(parse_time("2h later").is_err());
        assert!(parse_time("2019-13-05").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("15m").unwrap(), 900_000);
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000);
        assert_eq!(parse_duration("500ms").unwrap(), 500);
        assert_eq!(parse_duration("2d").unwrap(), 172_800_000);
        assert!(parse_duration("900").unwrap_err().contains("needs a unit"));
        assert_eq!(parse_duration("0").unwrap(), 0);
        assert!(parse_duration("15x").is_err());
        assert!(parse_duration("-5").is_err());
        assert!(parse_duration("m").is_err());
        for big in [
            "99999999999999d",
            "9223372036854775808ms",
            "106751991168d1d",
        ] {
            assert!(
                parse_duration(big).unwrap_err().ends_with(TOO_LARGE),
                "{big}"
            );
            assert!(parse_time(big).unwrap_err().ends_with(TOO_LARGE), "{big}");
        }
        assert!(!parse_duration("15x").unwrap_err().ends_with(TOO_LARGE));
        // A number alone beyond 64 bits: too large (or negative), not unparsable.
        assert!(
            parse_duration("99999999999999999999")
                .unwrap_err()
                .ends_with(TOO_LARGE)
        );
        assert!(
            parse_duration("-99999999999999999999")
                .unwrap_err()
                .ends_with("is negative")
        );
    }

    #[test]
    fn epoch_milliseconds_beyond_64_bits_are_too_large() {
        let e = parse_time("99999999999999999999").unwrap_err();
        assert!(
            e.contains("is too large") && e.contains("at most 9223372036854775807"),
            "{e}"
        );
        let e = parse_time("-99999999999999999999").unwrap_err();
        assert!(e.contains("is too small"), "{e}");
        assert_eq!(parse_time("9223372036854775807").unwrap(), i64::MAX);
        assert!(
            parse_time("2019-11-05x")
                .unwrap_err()
                .starts_with("cannot parse")
        );
    }

    #[test]
    fn whole_numbers_beyond_their_range_say_so() {
        assert_eq!(whole_number("+7"), Some(7));
        assert_eq!(whole_number("-7"), Some(-7));
        assert_eq!(whole_number(&"9".repeat(60)), Some(i128::MAX));
        assert_eq!(
            whole_number(&format!("-{}", "9".repeat(60))),
            Some(i128::MIN)
        );
        for not in ["", "-", "+", "1.5", " 1", "1e3", "0x10", "--1"] {
            assert_eq!(whole_number(not), None, "{not:?}");
        }
        assert_eq!(parse_whole("5", 0, 10), Ok(5));
        assert_eq!(
            parse_whole("11", 0, 10).unwrap_err(),
            "11 is too large (at most 10)"
        );
        assert_eq!(
            parse_whole("-1", 0, 10).unwrap_err(),
            "-1 is negative (at least 0)"
        );
        assert_eq!(
            parse_whole("-11", -10, 10).unwrap_err(),
            "-11 is too small (at least -10)"
        );
        assert!(
            parse_whole("x", 0, 10)
                .unwrap_err()
                .contains("not a whole number")
        );
    }

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(count(1, "partition"), "1 partition");
        assert_eq!(count(0, "partition"), "0 partitions");
        assert_eq!(count(2, "batch"), "2 batches");
        assert_eq!(count(1, "batch"), "1 batch");
        assert_eq!(count(5099, "byte"), "5099 bytes");
    }
}
