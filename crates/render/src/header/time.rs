//! Times as perf prints them in the header: ctime(3)'s layout in the local
//! time zone.

pub(super) struct Civil {
    pub(super) year: i64,
    pub(super) month: u32,
    pub(super) day: u32,
    pub(super) hour: u32,
    pub(super) min: u32,
    pub(super) sec: u32,
    pub(super) weekday: u32,
}

/// Broken-down time of `t` seconds since the epoch (already shifted to
/// local time), proleptic Gregorian calendar.
pub(super) fn civil(t: i64) -> Civil {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400) as u32;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month,
        day,
        hour: secs / 3600,
        min: secs / 60 % 60,
        sec: secs % 60,
        // 1970-01-01 was a Thursday.
        weekday: (days + 4).rem_euclid(7) as u32,
    }
}

/// C's ctime(): "Sat Nov 21 10:51:09 2026\n" in local time.
pub(super) fn ctime(t: i64, utc_offset: fn(i64) -> i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let c = civil(t.saturating_add(utc_offset(t)));
    format!(
        "{} {}{:3} {:02}:{:02}:{:02} {}\n",
        DAYS[c.weekday as usize],
        MONTHS[(c.month - 1) as usize % 12],
        c.day,
        c.hour,
        c.min,
        c.sec,
        c.year
    )
}

/// `YYYY-MM-DD HH:MM:SS` (strftime's `%Y-%m-%d %H:%M:%S`) in local time.
pub(super) fn date_time(t: i64, utc_offset: fn(i64) -> i64) -> String {
    let c = civil(t.saturating_add(utc_offset(t)));
    format!(
        "{}-{:02}-{:02} {:02}:{:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.min, c.sec
    )
}
