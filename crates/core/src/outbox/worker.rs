//! The delivery loop of each sink: claim what is due, deliver it, record the outcome; then at
//! once again while there was work, else wait for a wake-up (a write on this node added rows)
//! or the poll interval (rows added through other nodes, retries coming due, leases run out).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::Sink;
use crate::Service;

/// How often an idle worker looks for rows it was not woken for.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How often finished rows are pruned.
const PRUNE_INTERVAL: Duration = Duration::from_secs(3600);

/// Wakes a sink's worker on this node when a write added rows for it.
#[derive(Debug, Default)]
pub struct Wakeups {
    event: Notify,
    mail: Notify,
    webhook: Notify,
}

impl Wakeups {
    fn notify(&self, sink: Sink) -> &Notify {
        match sink {
            Sink::Event => &self.event,
            Sink::Mail => &self.mail,
            Sink::Webhook => &self.webhook,
        }
    }

    /// Wakes `sink`'s worker, or lets its next wait return at once if it is busy.
    pub fn wake(&self, sink: Sink) {
        self.notify(sink).notify_one();
    }

    /// Waits for a wake-up of `sink`, at most `poll`.
    pub async fn wait(&self, sink: Sink, poll: Duration) {
        let _ = tokio::time::timeout(poll, self.notify(sink).notified()).await;
    }
}

/// The workers of every sink on this node; dropping this stops them (an attempt cut short is
/// claimed again once its lease runs out).
pub struct Workers {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Workers {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// How often a node with mail set up checks whether today's digests are due.
const DIGEST_CHECK_INTERVAL: Duration = Duration::from_secs(30);

/// Starts one worker per sink, and the digest scheduler when mail is set up.
pub fn start(service: &Arc<Service>) -> Workers {
    let mut tasks: Vec<_> = Sink::ALL
        .into_iter()
        .map(|sink| {
            let service = Arc::clone(service);
            tokio::spawn(async move { work(&service, sink).await })
        })
        .collect();
    if service.mail_enabled() {
        let service = Arc::clone(service);
        tasks.push(tokio::spawn(
            async move { schedule_digests(&service).await },
        ));
    }
    Workers { tasks }
}

async fn schedule_digests(service: &Arc<Service>) {
    loop {
        if let Err(error) = service.schedule_digests().await {
            tracing::warn!(
                error = error.detail(),
                "could not schedule the daily digests"
            );
        }
        tokio::time::sleep(DIGEST_CHECK_INTERVAL).await;
    }
}

async fn work(service: &Arc<Service>, sink: Sink) {
    let mut last_prune = tokio::time::Instant::now();
    loop {
        match service.deliver_due(sink).await {
            Ok(0) => service.outbox_wakeups().wait(sink, POLL_INTERVAL).await,
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(
                    sink = sink.as_str(),
                    error = error.detail(),
                    "outbox worker failed; trying again"
                );
                tokio::time::sleep(POLL_INTERVAL).await;
            }
        }
        if last_prune.elapsed() >= PRUNE_INTERVAL {
            last_prune = tokio::time::Instant::now();
            if let Err(error) = service.prune_outbox(sink).await {
                tracing::warn!(
                    sink = sink.as_str(),
                    error = error.detail(),
                    "could not prune the outbox"
                );
            }
        }
    }
}
