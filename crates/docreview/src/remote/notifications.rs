//! `notifications [--unread] [--read-all]`.

use clap::Args;
use docreview_client::api::{NotificationQuery, NotificationsRead};

use super::output::{DIM, paint};
use super::{Outcome, Output, signed_in_client};

#[derive(Args)]
pub struct NotificationsArgs {
    /// Only unread notifications.
    #[arg(long)]
    unread: bool,
    /// Mark every notification read (then list what is left unread: nothing).
    #[arg(long)]
    read_all: bool,
    /// How many to list (1 to 200).
    #[arg(long)]
    limit: Option<usize>,
}

pub async fn notifications(args: NotificationsArgs, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    if args.read_all {
        client
            .mark_notifications_read(&NotificationsRead {
                ids: None,
                all: Some(true),
            })
            .await?;
    }
    let query = NotificationQuery {
        unread: (args.unread || args.read_all).then_some(true),
        limit: args.limit,
        cursor: None,
    };
    let list = client.notifications(&query).await?;
    output.show(&list, |list| {
        for n in &list.notifications {
            let who = n
                .actor
                .as_ref()
                .map_or("docreview", |a| a.display_name.as_str());
            anstream::println!(
                "{} {} {:<13} {} on {}: {}",
                if n.read_at.is_none() { "*" } else { " " },
                paint(DIM, &n.created_at),
                n.reason.as_str(),
                who,
                n.review_title.as_deref().unwrap_or("-"),
                n.excerpt
            );
        }
        anstream::println!("{} unread", list.unread_count);
    })
}
