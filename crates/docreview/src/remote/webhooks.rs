//! `webhooks …`: the organization's webhooks (org admins), their deliveries, pings, secret
//! rotation and redelivery.

use clap::Subcommand;
use docreview_client::api::{DeliveryView, NewWebhook, PageQuery, WebhookChange, WebhookView};

use super::output::{DIM, paint};
use super::{Failure, Outcome, Output, signed_in_client};

#[derive(Subcommand)]
pub enum WebhooksCommand {
    /// The webhooks (the default).
    List,
    /// Register a webhook; prints its signing secret, which is shown only this once.
    Create {
        /// Where deliveries are POSTed (https://).
        url: String,
        /// An event type to send (repeat for more; `*` for all) [default: *].
        #[arg(long = "event", value_name = "TYPE")]
        events: Vec<String>,
        /// Only events on documents of this project.
        #[arg(long)]
        project: Option<String>,
        #[arg(long)]
        description: Option<String>,
    },
    /// One webhook.
    Show {
        /// The webhook's id (wh_…).
        webhook: String,
    },
    /// Change a webhook; `--disable` stops deliveries, `--enable` resumes them.
    Update {
        /// The webhook's id (wh_…).
        webhook: String,
        #[arg(long)]
        url: Option<String>,
        /// The event types to send, replacing the list (repeat for more; `*` for all).
        #[arg(long = "event", value_name = "TYPE")]
        events: Vec<String>,
        /// Only events on documents of this project (`""` for every project).
        #[arg(long)]
        project: Option<String>,
        /// A description (`""` removes it).
        #[arg(long)]
        description: Option<String>,
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
    },
    /// Delete a webhook and its delivery history.
    Delete {
        /// The webhook's id (wh_…).
        webhook: String,
    },
    /// Send a `ping` event to a webhook.
    Ping {
        /// The webhook's id (wh_…).
        webhook: String,
    },
    /// A new signing secret (printed once); the old one also signs for 24 hours.
    RotateSecret {
        /// The webhook's id (wh_…).
        webhook: String,
    },
    /// A webhook's deliveries, newest first.
    Deliveries {
        /// The webhook's id (wh_…).
        webhook: String,
        #[arg(long)]
        limit: Option<usize>,
        /// `nextCursor` of the previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Deliver a delivery's event again (same body, same webhook-id).
    Redeliver {
        /// The webhook's id (wh_…).
        webhook: String,
        /// The delivery's id (dlv_…).
        delivery: String,
    },
}

pub async fn webhooks(command: WebhooksCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        WebhooksCommand::List => {
            let list = client.webhooks().await?;
            output.answer(&client, &list, |list| {
                for webhook in &list.webhooks {
                    print_webhook(webhook);
                }
            })
        }
        WebhooksCommand::Create {
            url,
            events,
            project,
            description,
        } => {
            let events = if events.is_empty() {
                vec!["*".to_string()]
            } else {
                events
            };
            let new = NewWebhook {
                url,
                events,
                project_code: project,
                description,
            };
            let webhook = client.create_webhook(&new).await?;
            output.answer(&client, &webhook, |webhook| {
                print_webhook(webhook);
                print_secret(webhook);
            })
        }
        WebhooksCommand::Show { webhook } => {
            let webhook = client.webhook(&webhook).await?;
            output.answer(&client, &webhook, print_webhook)
        }
        WebhooksCommand::Update {
            webhook,
            url,
            events,
            project,
            description,
            enable,
            disable,
        } => {
            let change = WebhookChange {
                url,
                events: (!events.is_empty()).then_some(events),
                project_code: project.map(|code| (!code.is_empty()).then_some(code)),
                description: description.map(|text| (!text.is_empty()).then_some(text)),
                active: if enable {
                    Some(true)
                } else if disable {
                    Some(false)
                } else {
                    None
                },
            };
            if change.url.is_none()
                && change.events.is_none()
                && change.project_code.is_none()
                && change.description.is_none()
                && change.active.is_none()
            {
                return Err(Failure::usage(
                    "say what to change: --url, --event, --project, --description, --enable or --disable",
                ));
            }
            let webhook = client.update_webhook(&webhook, &change).await?;
            output.answer(&client, &webhook, print_webhook)
        }
        WebhooksCommand::Delete { webhook } => {
            let webhook = client.delete_webhook(&webhook).await?;
            output.answer(&client, &webhook, |w| {
                println!("Deleted {} ({}).", w.id, w.url);
            })
        }
        WebhooksCommand::Ping { webhook } => {
            let delivery = client.ping_webhook(&webhook).await?;
            output.answer(&client, &delivery, print_delivery)
        }
        WebhooksCommand::RotateSecret { webhook } => {
            let webhook = client.rotate_webhook_secret(&webhook).await?;
            output.answer(&client, &webhook, |webhook| {
                print_secret(webhook);
                println!("The previous secret also signs for 24 hours.");
            })
        }
        WebhooksCommand::Deliveries {
            webhook,
            limit,
            cursor,
        } => {
            let list = client
                .webhook_deliveries(&webhook, &PageQuery { limit, cursor })
                .await?;
            output.answer(&client, &list, |list| {
                for delivery in &list.deliveries {
                    print_delivery(delivery);
                }
                if let Some(cursor) = &list.next_cursor {
                    anstream::println!("{}", paint(DIM, format!("more: --cursor {cursor}")));
                }
            })
        }
        WebhooksCommand::Redeliver { webhook, delivery } => {
            let delivery = client.redeliver(&webhook, &delivery).await?;
            output.answer(&client, &delivery, print_delivery)
        }
    }
}

fn print_webhook(webhook: &WebhookView) {
    anstream::println!(
        "{}  {} {}{}{}",
        paint(DIM, &webhook.id),
        webhook.url,
        webhook.events.join(","),
        webhook
            .project_code
            .as_deref()
            .map(|code| format!(" project {code}"))
            .unwrap_or_default(),
        if webhook.active { "" } else { " (disabled)" }
    );
}

fn print_secret(webhook: &WebhookView) {
    if let Some(secret) = &webhook.secret {
        println!("Secret (shown only now): {}", secret.expose());
    }
}

fn print_delivery(delivery: &DeliveryView) {
    anstream::println!(
        "{}  {:<22} {:<9} attempts {}{}{}",
        paint(DIM, &delivery.id),
        delivery.kind,
        delivery.status,
        delivery.attempts,
        delivery
            .last_response_status
            .map(|status| format!(" last {status}"))
            .unwrap_or_default(),
        delivery
            .last_error
            .as_deref()
            .map(|error| format!(" ({error})"))
            .unwrap_or_default()
    );
}
