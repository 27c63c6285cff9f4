//! Counting failed attempts per client address, to slow down guessing (DESIGN.md §2: more than
//! ten failed command-line login exchanges a minute from one address give 429).
//!
//! Each node counts its own: a limiter is defence in depth (a login code is useless without the
//! PKCE verifier that only the CLI holds), so an exact count across nodes buys nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Result};
use crate::model::Millis;

/// Beyond this many tracked addresses, addresses with no recent failure are forgotten.
const TRACKED_ADDRESSES: usize = 10_000;

pub struct FailureLimiter {
    max_failures: usize,
    window_ms: Millis,
    failures: Mutex<HashMap<String, VecDeque<Millis>>>,
}

impl FailureLimiter {
    pub fn new(max_failures: usize, window_ms: Millis) -> Self {
        FailureLimiter {
            max_failures,
            window_ms,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// 429 `rate_limited` when `address` failed `max_failures` times within the window.
    pub fn check(&self, address: &str, now: Millis) -> Result<()> {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(times) = failures.get_mut(address) else {
            return Ok(());
        };
        while times.front().is_some_and(|at| now - at >= self.window_ms) {
            times.pop_front();
        }
        match times.front() {
            Some(oldest) if times.len() >= self.max_failures => {
                let wait_ms = self.window_ms - (now - oldest);
                Err(Error::RateLimited {
                    retry_after_secs: u64::try_from(wait_ms.max(0) / 1000 + 1).unwrap_or(1),
                })
            }
            _ => Ok(()),
        }
    }

    pub fn record_failure(&self, address: &str, now: Millis) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        if failures.len() >= TRACKED_ADDRESSES {
            let window = self.window_ms;
            failures.retain(|_, times| times.back().is_some_and(|at| now - at < window));
        }
        let times = failures.entry(address.to_string()).or_default();
        times.push_back(now);
        while times.len() > self.max_failures {
            times.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_after_max_failures_within_the_window() {
        let limiter = FailureLimiter::new(3, 60_000);
        for at in [0, 10, 20] {
            assert!(limiter.check("a", at).is_ok());
            limiter.record_failure("a", at);
        }
        match limiter.check("a", 30) {
            Err(Error::RateLimited { retry_after_secs }) => assert_eq!(retry_after_secs, 60),
            other => panic!("expected rate limiting, got {other:?}"),
        }
        assert!(
            limiter.check("b", 30).is_ok(),
            "other addresses are unaffected"
        );
        assert!(
            limiter.check("a", 60_000).is_ok(),
            "the first failure left the window"
        );
    }
}
