//! Link-time host services that `sqlite-wasm-rs` imports when built without its
//! `wasm-bindgen` feature: sleep, randomness, wall clock, entropy and local time.
//!
//! The symbol names and contracts are those of `sqlite_wasm_rs::host`; each
//! fallible hook returns `host::OK` or a `host::Error` discriminant. Everything is
//! done with std, which on wasm32-wasip2 reaches the WASI clocks and timers.
//!
//! Randomness comes from `getrandom` 0.4, which on wasm32-wasip2 imports
//! `wasi:random/random.get-random-u64` directly (no further dependencies), the
//! host's cryptographically secure source. std's `RandomState` would avoid the
//! crate, but its output is SipHash-1-3 over host-seeded keys, not a CSPRNG, so
//! it could not honour `fill_entropy`'s contract.

use sqlite_wasm_rs::host::{Error, LocalTime, OK};
use std::mem::MaybeUninit;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Blocks for the requested time (SQLite's busy handler and `sqlite3_sleep`).
#[no_mangle]
pub extern "C" fn rust_sqlite_wasm_host_sleep(seconds: u64, nanoseconds: u32) {
    // Saturate rather than panic on an out-of-range nanosecond field.
    let duration =
        Duration::from_secs(seconds).saturating_add(Duration::from_nanos(nanoseconds.into()));
    std::thread::sleep(duration);
}

/// Seeds SQLite's PRNG (`random()`, `randomblob()`, temp names). Returns the
/// number of bytes written: all of them, or 0 when no randomness is available.
///
/// # Safety
///
/// `buf` must be valid for writes of `len` bytes (or null with `len == 0`).
#[no_mangle]
pub unsafe extern "C" fn rust_sqlite_wasm_host_random(buf: *mut u8, len: usize) -> usize {
    match unsafe { fill_random(buf, len) } {
        Ok(()) => len,
        Err(_) => 0,
    }
}

/// Writes the current UTC time in milliseconds since the Unix epoch to `out`.
///
/// # Safety
///
/// `out` must be null or valid for a write of one `i64`.
#[no_mangle]
pub unsafe extern "C" fn rust_sqlite_wasm_host_epoch_timestamp_in_ms(out: *mut i64) -> i32 {
    let millis = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()),
        Err(before) => i64::try_from(before.duration().as_millis()).map(|ms| -ms),
    };
    match (millis, out.is_null()) {
        (Ok(millis), false) => {
            unsafe { out.write(millis) };
            OK
        }
        _ => Error::InvalidTime as i32,
    }
}

/// Fills all of `buf` with cryptographically secure bytes, or fails.
///
/// # Safety
///
/// `buf` must be valid for writes of `len` bytes (or null with `len == 0`).
#[no_mangle]
pub unsafe extern "C" fn rust_sqlite_wasm_host_fill_entropy(buf: *mut u8, len: usize) -> i32 {
    match unsafe { fill_random(buf, len) } {
        Ok(()) => OK,
        Err(_) => Error::Unavailable as i32,
    }
}

/// Converts Unix seconds to calendar fields for `localtime` modifiers. The
/// component has no time-zone database, so local time is UTC.
///
/// # Safety
///
/// `out` must be null or valid for a write of one `LocalTime`.
#[no_mangle]
pub unsafe extern "C" fn rust_sqlite_wasm_host_localtime(
    unix_seconds: i64,
    out: *mut LocalTime,
) -> i32 {
    match (utc_calendar(unix_seconds), out.is_null()) {
        (Some(time), false) => {
            unsafe { out.write(time) };
            OK
        }
        _ => Error::InvalidTime as i32,
    }
}

/// # Safety
///
/// `buf` must be valid for writes of `len` bytes (or null with `len == 0`).
unsafe fn fill_random(buf: *mut u8, len: usize) -> Result<(), getrandom::Error> {
    if len == 0 {
        return Ok(());
    }
    if buf.is_null() {
        return Err(getrandom::Error::UNEXPECTED);
    }
    // The C side may hand over uninitialised memory, so never view it as `[u8]`.
    let out = unsafe { std::slice::from_raw_parts_mut(buf.cast::<MaybeUninit<u8>>(), len) };
    getrandom::fill_uninit(out).map(|_| ())
}

/// Proleptic Gregorian calendar fields of a UTC instant (H. Hinnant's
/// `civil_from_days`), or `None` if the year does not fit an `i32`.
fn utc_calendar(unix_seconds: i64) -> Option<LocalTime> {
    // Days before each month in a non-leap year.
    const DAYS_BEFORE_MONTH: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

    let days = unix_seconds.div_euclid(86_400);
    let second_of_day = unix_seconds.rem_euclid(86_400);

    // Shift the epoch to 0000-03-01 so leap days fall at the end of a year.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_march_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_march_year + 2) / 153;
    let day = day_of_march_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);

    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let yearday = DAYS_BEFORE_MONTH[(month - 1) as usize] + day - 1 + i64::from(leap && month > 2);

    Some(LocalTime {
        year: i32::try_from(year).ok()?,
        month: month as i32,
        day: day as i32,
        hour: (second_of_day / 3600) as i32,
        minute: (second_of_day / 60 % 60) as i32,
        second: (second_of_day % 60) as i32,
        // 1970-01-01 was a Thursday.
        weekday: (days + 4).rem_euclid(7) as i32,
        yearday: yearday as i32,
        is_dst: 0,
        utc_offset_seconds: 0,
    })
}
