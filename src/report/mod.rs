//! Findings → reports: the JSON report (a stable, documented schema: `docs/report-schema.md`)
//! and human tables.

pub mod client;
pub mod filter;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod style;
pub mod table;

pub mod triage;
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

/// Parse a time given on the command line: `now`, milliseconds since the epoch, or RFC 3339
/// (`2019-11-05T10:00:00Z`, fractional seconds and `+hh:mm` offsets allowed).
pub fn parse_time(s: &str) -> Result<i64, String> {
    if s.eq_ignore_ascii_case("now") {
        return std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .map_err(|_| "the system clock is before 1970".to_string());
    }
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    let bad = || {
        format!(
            "cannot parse time {s:?}: use now, epoch milliseconds or RFC 3339 (2019-11-05T10:00:00Z)"
        )
    };
    if !s.is_ascii() {
        return Err(bad());
    }
    let b = s.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let num =
        |r: std::ops::Range<usize>| s.get(r).and_then(|x| x.parse::<i64>().ok()).ok_or_else(bad);
    let (y, mo, d, h, mi, se) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let mut rest = &s[19..];
    let mut millis = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits: String = frac.chars().take_while(|c| c.is_ascii_digit()).collect();
        if digits.is_empty() {
            return Err(bad());
        }
        let mut ms3 = digits.clone();
        ms3.truncate(3);
        while ms3.len() < 3 {
            ms3.push('0');
        }
        millis = ms3.parse().map_err(|_| bad())?;
        rest = &frac[digits.len()..];
    }
    let offset_min = match rest {
        "Z" | "z" | "" => 0,
        o if (o.starts_with('+') || o.starts_with('-')) && o.len() == 6 && &o[3..4] == ":" => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let hh: i64 = o[1..3].parse().map_err(|_| bad())?;
            let mm: i64 = o[4..6].parse().map_err(|_| bad())?;
            if hh > 23 || mm > 59 {
                return Err(bad());
            }
            sign * (hh * 60 + mm)
        }
        _ => return Err(bad()),
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = match mo {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&mo) || !(1..=month_days).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return Err(bad());
    }

    let days = days_from_civil(y, mo as u32, d as u32);
    Ok(((days * 86_400 + h * 3600 + mi * 60 + se) - offset_min * 60) * 1000 + millis)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

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
        let n: i64 = num.parse().map_err(|_| bad())?;
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
            .checked_add(n.checked_mul(unit).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        any = true;
    }
    if !num.is_empty() || !any {
        return Err(bad());
    }
    Ok(total)
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
    }
}
