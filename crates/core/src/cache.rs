//! A small in-memory cache bounded by an estimate of the bytes it holds, evicting the oldest
//! entries first. Each node keeps its own; entries are validated or content-addressed by their
//! users, so nothing here ever needs sharing between nodes.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

pub struct BoundedCache<V> {
    budget: usize,
    inner: Mutex<Entries<V>>,
}

struct Entries<V> {
    map: HashMap<String, (Arc<V>, usize)>,
    order: VecDeque<String>,
    used: usize,
}

impl<V> BoundedCache<V> {
    pub fn new(budget_bytes: usize) -> Self {
        BoundedCache {
            budget: budget_bytes,
            inner: Mutex::new(Entries {
                map: HashMap::new(),
                order: VecDeque::new(),
                used: 0,
            }),
        }
    }

    pub fn get(&self, key: &str) -> Option<Arc<V>> {
        let entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        entries.map.get(key).map(|(value, _)| Arc::clone(value))
    }

    /// Stores `value` under `key`, replacing any previous value, evicting the oldest entries
    /// while over budget. A value heavier than the whole budget is not kept.
    pub fn insert(&self, key: &str, value: Arc<V>, weight: usize) {
        if weight > self.budget {
            return;
        }
        let mut entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, old_weight)) = entries.map.remove(key) {
            entries.used -= old_weight;
            entries.order.retain(|k| k != key);
        }
        while entries.used + weight > self.budget {
            let Some(oldest) = entries.order.pop_front() else {
                break;
            };
            if let Some((_, evicted)) = entries.map.remove(&oldest) {
                entries.used -= evicted;
            }
        }
        entries.used += weight;
        entries.order.push_back(key.to_string());
        entries.map.insert(key.to_string(), (value, weight));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_oldest_beyond_budget_and_replaces_in_place() {
        let cache = BoundedCache::new(10);
        cache.insert("a", Arc::new(1), 4);
        cache.insert("b", Arc::new(2), 4);
        cache.insert("a", Arc::new(3), 4);
        assert_eq!(cache.get("a").as_deref(), Some(&3));
        cache.insert("c", Arc::new(4), 4);
        assert!(cache.get("b").is_none(), "b is now the oldest");
        assert_eq!(cache.get("c").as_deref(), Some(&4));
        cache.insert("huge", Arc::new(5), 11);
        assert!(cache.get("huge").is_none());
    }
}
