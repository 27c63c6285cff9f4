//! Time and randomness as injected dependencies, so expiry and undo windows are testable.

use crate::model::Millis;

pub trait Clock: Send + Sync {
    fn now(&self) -> Millis;
}

/// The wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Millis {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
    }
}

/// The wall clock moved by a fixed number of milliseconds (`docreview` reads it from
/// `DOCREVIEW_CLOCK_OFFSET_SECS`): the black-box tests issue tokens in the past through the
/// real operator command, to have expired ones.
pub struct OffsetClock(pub Millis);

impl Clock for OffsetClock {
    fn now(&self) -> Millis {
        SystemClock.now().saturating_add(self.0)
    }
}

/// RFC 3339 with milliseconds, in UTC, as every `…Ts` field carries it.
pub fn rfc3339(millis: Millis) -> String {
    let nanos = i128::from(millis) * 1_000_000;
    let Ok(at) = time::OffsetDateTime::from_unix_timestamp_nanos(nanos) else {
        return String::from("1970-01-01T00:00:00.000Z");
    };
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    at.format(&format).unwrap_or_default()
}

/// The instant an RFC 3339 time (as [`rfc3339`] writes it) names; `None` for anything else.
pub fn millis_of(text: &str) -> Option<Millis> {
    let at =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()
}

/// A source of random bytes for ids and secrets, injected like the clock: the operating
/// system's in production ([`OsEntropy`]); a test may give its own to get known ids.
pub trait Entropy: Send + Sync {
    fn fill(&self, buffer: &mut [u8]);
}

/// The operating system's random source.
pub struct OsEntropy;

impl Entropy for OsEntropy {
    fn fill(&self, buffer: &mut [u8]) {
        random_bytes(buffer);
    }
}

/// Fills `buffer` from the operating system's random source.
pub fn random_bytes(buffer: &mut [u8]) {
    // The OS source failing means the machine cannot run securely at all.
    #[allow(clippy::expect_used)]
    getrandom::fill(buffer).expect("the operating system's random source failed");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_milliseconds_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
    }

    #[test]
    fn reads_back_what_it_writes() {
        assert_eq!(
            millis_of(&rfc3339(1_795_000_000_123)),
            Some(1_795_000_000_123)
        );
        assert_eq!(millis_of("yesterday"), None);
    }
}
