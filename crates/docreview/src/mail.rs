//! Sending mail over SMTP (lettre on tokio and rustls): the `Mailer` the core's mail sink uses
//! when `DOCREVIEW_SMTP_URL` and `DOCREVIEW_MAIL_FROM` are set.

use std::time::Duration;

use anyhow::{Context, bail};
use docreview_core::mail::{Mail, Mailer, SendFailure};
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// One SMTP exchange at most this long (below the outbox's 30-second lease).
const SMTP_TIMEOUT: Duration = Duration::from_secs(20);

pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailer {
    /// `url`: `smtp://[user:pass@]host:port` (STARTTLS when the server offers it),
    /// `smtp://…?tls=required` (STARTTLS or fail), or `smtps://…` (TLS from the start).
    pub fn new(url: &str, from: &str) -> anyhow::Result<SmtpMailer> {
        let from: Mailbox = from
            .parse()
            .with_context(|| format!("DOCREVIEW_MAIL_FROM `{from}` is not a mail address"))?;
        let mut parsed = url::Url::parse(url).map_err(|_| {
            anyhow::anyhow!("DOCREVIEW_SMTP_URL is not a URL such as smtp://user:pass@host:587")
        })?;
        match parsed.scheme() {
            "smtp" => {
                // STARTTLS whenever the server offers it, unless the URL says otherwise.
                if !parsed.query_pairs().any(|(key, _)| key == "tls") {
                    parsed.query_pairs_mut().append_pair("tls", "opportunistic");
                }
            }
            "smtps" => {}
            other => bail!("DOCREVIEW_SMTP_URL: the scheme `{other}` is not smtp or smtps"),
        }
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(parsed.as_str())
            .map_err(|error| anyhow::anyhow!("DOCREVIEW_SMTP_URL: {error}"))?
            .timeout(Some(SMTP_TIMEOUT))
            .build();
        Ok(SmtpMailer { transport, from })
    }

    fn message(&self, mail: &Mail) -> Result<Message, SendFailure> {
        let refused = |detail: String| SendFailure {
            permanent: true,
            detail,
        };
        let to: Mailbox = mail
            .to
            .parse()
            .map_err(|error| refused(format!("the recipient's address: {error}")))?;
        let mut builder = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .date_now();
        if let Some(url) = &mail.unsubscribe_url {
            // RFC 2369 and RFC 8058: a one-click unsubscribe by POST to the signed link.
            builder = builder
                .raw_header(HeaderValue::new(
                    HeaderName::new_from_ascii_str("List-Unsubscribe"),
                    format!("<{url}>"),
                ))
                .raw_header(HeaderValue::new(
                    HeaderName::new_from_ascii_str("List-Unsubscribe-Post"),
                    "List-Unsubscribe=One-Click".to_string(),
                ));
        }
        builder
            .multipart(MultiPart::alternative_plain_html(
                mail.text.clone(),
                mail.html.clone(),
            ))
            .map_err(|error| refused(format!("building the message: {error}")))
    }
}

#[async_trait::async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &Mail) -> Result<(), SendFailure> {
        let message = self.message(mail)?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|error| SendFailure {
                // A 5xx answer refuses for good; no connection, a timeout or a 4xx may pass.
                permanent: error.is_permanent(),
                detail: error.to_string(),
            })
    }
}
