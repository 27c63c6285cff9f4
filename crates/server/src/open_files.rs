//! Room for the connection and stream caps under the process's limit on open files. Every
//! connection and every event stream holds a descriptor; when they run out, `accept` fails and
//! nobody else is served (with a soft limit of 256, the 238th stream was never answered), so the
//! caps must run out first: their 429 and closed connections leave room for plain requests.

use crate::listener::ConnectionLimits;

/// Descriptors kept, beyond those open when the server starts, for everything that is not a
/// client's: the database's (a pool grows), outbound webhook and mail connections, files read.
const RESERVED: usize = 128;

impl ConnectionLimits {
    /// These limits fitted under the open-file limit. The soft limit is first raised to the
    /// hard one (as Go's runtime does: systemd leaves services at a soft 1024 for `select()`'s
    /// sake, which this server does not use); when the caps still do not fit, connections get at
    /// most half of the room and event streams the rest. Returns what was changed, to log.
    #[must_use]
    pub fn fit_to_open_files(self) -> (ConnectionLimits, Option<String>) {
        let Some(allowed) = raise_open_file_limit() else {
            return (self, None);
        };
        let room = allowed
            .saturating_sub(open_files())
            .saturating_sub(RESERVED);
        let fitted = self.fitted(room);
        if fitted.total == self.total && fitted.streams_total == self.streams_total {
            return (fitted, None);
        }
        let message = format!(
            "the open-file limit ({allowed}) leaves room for {room} connections and event \
             streams: at most {} connections ({} per address) and {} event streams ({} per \
             address) instead of {} and {}; raise the limit (systemd: LimitNOFILE=) to serve more",
            fitted.total,
            fitted.per_address,
            fitted.streams_total,
            fitted.streams_per_address,
            self.total,
            self.streams_total
        );
        (fitted, Some(message))
    }

    /// These limits with their caps fitted into `room` descriptors.
    fn fitted(self, room: usize) -> ConnectionLimits {
        if self.total.saturating_add(self.streams_total) <= room {
            return self;
        }
        let total = self.total.min(room / 2).max(1);
        let streams_total = self.streams_total.min(room.saturating_sub(total)).max(1);
        ConnectionLimits {
            total,
            per_address: self.per_address.min(total),
            streams_total,
            streams_per_address: self.streams_per_address.min(streams_total),
            ..self
        }
    }
}

/// Raises the soft open-file limit to the hard one; the soft limit now, `None` when unknown or
/// unlimited.
#[cfg(unix)]
fn raise_open_file_limit() -> Option<usize> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if let (Some(current), Some(maximum)) = (limit.current, limit.maximum)
        && current < maximum
        && setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(maximum),
                maximum: Some(maximum),
            },
        )
        .is_ok()
    {
        return usize::try_from(maximum).ok();
    }
    limit
        .current
        .and_then(|current| usize::try_from(current).ok())
}

#[cfg(not(unix))]
fn raise_open_file_limit() -> Option<usize> {
    None
}

/// How many descriptors the process holds now (0 where the system does not say).
fn open_files() -> usize {
    ["/proc/self/fd", "/dev/fd"]
        .iter()
        .find_map(|dir| std::fs::read_dir(dir).ok())
        .map_or(0, Iterator::count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_that_fit_are_kept_and_others_share_the_room() {
        let defaults = ConnectionLimits::default();
        assert_eq!(defaults.fitted(20_000).total, defaults.total);
        assert_eq!(
            defaults.fitted(20_000).streams_total,
            defaults.streams_total
        );

        let fitted = defaults.fitted(896);
        assert_eq!(
            (fitted.total, fitted.per_address),
            (448, defaults.per_address)
        );
        assert_eq!(
            (fitted.streams_total, fitted.streams_per_address),
            (448, 448)
        );

        // Few connections wanted: the streams get the rest of the room.
        let few = ConnectionLimits {
            total: 100,
            ..defaults
        };
        assert_eq!(few.fitted(896).streams_total, 796);

        let none = defaults.fitted(0);
        assert_eq!((none.total, none.per_address), (1, 1));
        assert_eq!((none.streams_total, none.streams_per_address), (1, 1));
    }

    #[test]
    fn the_process_counts_its_open_files() {
        assert!(
            open_files() >= 3,
            "standard input, output and error at least"
        );
    }
}
