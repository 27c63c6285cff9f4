//! Rate limits (DESIGN.md §4.7). `FailureLimiter` counts failed attempts per client address, to
//! slow down guessing (DESIGN.md §2: more than ten failed command-line login exchanges a minute
//! from one address give 429). `RateLimiter` bounds writes per credential and per address.
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

/// Token buckets by key: each key may spend `per_minute` at once, and earns them back evenly
/// over a minute. A bucket rather than fixed windows, so a client cannot double its rate at a
/// window's edge, and a burst after a quiet time is allowed (honest batch writers work so).
pub struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    /// What is left to spend, as of `at`.
    tokens: f64,
    at: Millis,
}

impl RateLimiter {
    /// `per_minute` 0 means no limit.
    pub fn new(per_minute: u32) -> Self {
        RateLimiter {
            per_minute,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub fn is_unlimited(&self) -> bool {
        self.per_minute == 0
    }

    /// Spends one request of `key`'s allowance, or answers 429 `rate_limited` with the seconds
    /// until one is earned back.
    pub fn spend(&self, key: &str, now: Millis) -> Result<()> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let capacity = f64::from(self.per_minute);
        let per_ms = capacity / 60_000.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= TRACKED_ADDRESSES && !buckets.contains_key(key) {
            // A full bucket says nothing a new one would not: forget those.
            buckets.retain(|_, bucket| refilled(*bucket, now, per_ms, capacity) < capacity);
        }
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        let tokens = refilled(*bucket, now, per_ms, capacity);
        if tokens >= 1.0 {
            *bucket = Bucket {
                tokens: tokens - 1.0,
                at: now,
            };
            return Ok(());
        }
        let wait_ms = (1.0 - tokens) / per_ms;
        // Whole seconds, rounded up (a wait under one second is still "1").
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let retry_after_secs = (wait_ms / 1000.0).ceil().max(1.0) as u64;
        Err(Error::RateLimited { retry_after_secs })
    }
}

fn refilled(bucket: Bucket, now: Millis, per_ms: f64, capacity: f64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let earned = (now - bucket.at).max(0) as f64 * per_ms;
    (bucket.tokens + earned).min(capacity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_allow_a_burst_then_the_steady_rate() {
        let limiter = RateLimiter::new(60); // one a second
        for _ in 0..60 {
            assert!(limiter.spend("t", 0).is_ok());
        }
        match limiter.spend("t", 0) {
            Err(Error::RateLimited { retry_after_secs }) => assert_eq!(retry_after_secs, 1),
            other => panic!("expected rate limiting, got {other:?}"),
        }
        assert!(limiter.spend("u", 0).is_ok(), "other keys are unaffected");
        assert!(
            limiter.spend("t", 1_000).is_ok(),
            "one earned back a second later"
        );
        assert!(limiter.spend("t", 1_000).is_err());
        assert!(RateLimiter::new(0).spend("t", 0).is_ok(), "0 is no limit");
    }

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
