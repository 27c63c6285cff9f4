//! Mail: what a mail says (askama templates, plain text and HTML), the port that sends it
//! (`Mailer`; the binary implements it over SMTP with lettre), and the signed one-click
//! unsubscribe links (RFC 8058) every notification mail carries.
//!
//! A mail is rendered when its row is written (fan-out knows the document, the actor and the
//! excerpt then), so a retry sends the same bytes; a daily digest is rendered when it is sent,
//! since it covers whatever is unread by then.

use std::sync::Arc;

use askama::Template;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::model::NotificationReason;

/// One mail, ready to send (the payload of a `mail` outbox row of kind `notification`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
    /// The signed link of `List-Unsubscribe` (with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`).
    pub unsubscribe_url: Option<String>,
}

/// Why a mail was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFailure {
    /// The server refused for good (a 5xx reply to the recipient or the message): retrying
    /// cannot help. Otherwise (no connection, a 4xx, a timeout) the mail is tried again.
    pub permanent: bool,
    pub detail: String,
}

/// Sends mail; implemented over SMTP by the binary, and by tests.
#[async_trait::async_trait]
pub trait Mailer: Send + Sync {
    async fn send(&self, mail: &Mail) -> Result<(), SendFailure>;
}

/// Mail as configured: without it (`Settings::mail` is `None`) no mail is written or sent.
#[derive(Clone)]
pub struct MailSetup {
    pub mailer: Arc<dyn Mailer>,
    /// The base of every link in a mail, without a trailing slash.
    pub public_url: String,
    /// The hour (UTC, 0–23) daily digests go out.
    pub digest_hour: u8,
}

impl std::fmt::Debug for MailSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSetup")
            .field("public_url", &self.public_url)
            .field("digest_hour", &self.digest_hour)
            .finish_non_exhaustive()
    }
}

/// The name of the instance key that signs unsubscribe links.
pub const UNSUBSCRIBE_KEY: &str = "unsubscribe";

/// HMAC-SHA-256 (RFC 2104) over the workspace's one `sha2`: the `hmac` crate in the tree is
/// built for an older `sha2`, and these eight lines are the whole construction.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The token of a person's unsubscribe link: their id and a signature of it.
pub fn unsubscribe_token(key: &[u8], user_id: &str) -> String {
    let signature = hmac_sha256(key, format!("unsubscribe:{user_id}").as_bytes());
    format!("{user_id}.{}", URL_SAFE_NO_PAD.encode(signature))
}

/// The person an unsubscribe token names, when its signature is right.
pub fn verify_unsubscribe(key: &[u8], token: &str) -> Option<String> {
    let (user_id, signature) = token.rsplit_once('.')?;
    let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
    let expected = hmac_sha256(key, format!("unsubscribe:{user_id}").as_bytes());
    bool::from(expected.as_slice().ct_eq(&signature)).then(|| user_id.to_string())
}

/// How a reason reads in a mail: "… mentioned you", "… replied".
pub fn reason_phrase(reason: NotificationReason) -> &'static str {
    match reason {
        NotificationReason::Mention => "mentioned you",
        NotificationReason::Assigned => "assigned a thread to you",
        NotificationReason::ReviewRequested => "asked you to review a document",
        NotificationReason::Decision => "decided on a document you edit",
        NotificationReason::Reply => "replied in a thread you are in",
        NotificationReason::Comment => "commented on your document",
        NotificationReason::RunCompleted => "finished a review run on your document",
        NotificationReason::WebhookFailed => "reported a webhook that keeps failing",
    }
}

/// One notification as a mail tells it.
#[derive(Debug, Clone)]
pub struct MailItem {
    pub actor: String,
    pub phrase: &'static str,
    pub review_title: String,
    pub excerpt: String,
    pub link: String,
}

#[derive(Template)]
#[template(path = "mail/notification.txt")]
struct NotificationText<'a> {
    item: &'a MailItem,
    unsubscribe_url: &'a str,
    settings_url: &'a str,
}

#[derive(Template)]
#[template(path = "mail/notification.html")]
struct NotificationHtml<'a> {
    item: &'a MailItem,
    unsubscribe_url: &'a str,
    settings_url: &'a str,
}

#[derive(Template)]
#[template(path = "mail/digest.txt")]
struct DigestText<'a> {
    items: &'a [MailItem],
    unsubscribe_url: &'a str,
    settings_url: &'a str,
}

#[derive(Template)]
#[template(path = "mail/digest.html")]
struct DigestHtml<'a> {
    items: &'a [MailItem],
    unsubscribe_url: &'a str,
    settings_url: &'a str,
}

/// The mail of one notification.
pub fn notification_mail(
    to: &str,
    item: &MailItem,
    public_url: &str,
    unsubscribe_url: &str,
) -> Result<Mail, askama::Error> {
    let settings_url = format!("{public_url}/account");
    let text = NotificationText {
        item,
        unsubscribe_url,
        settings_url: &settings_url,
    }
    .render()?;
    let html = NotificationHtml {
        item,
        unsubscribe_url,
        settings_url: &settings_url,
    }
    .render()?;
    Ok(Mail {
        to: to.to_string(),
        subject: one_line(&format!(
            "{} {} on “{}”",
            item.actor, item.phrase, item.review_title
        )),
        text,
        html,
        unsubscribe_url: Some(unsubscribe_url.to_string()),
    })
}

/// The daily digest of `items` (at least one).
pub fn digest_mail(
    to: &str,
    items: &[MailItem],
    public_url: &str,
    unsubscribe_url: &str,
) -> Result<Mail, askama::Error> {
    let settings_url = format!("{public_url}/account");
    let text = DigestText {
        items,
        unsubscribe_url,
        settings_url: &settings_url,
    }
    .render()?;
    let html = DigestHtml {
        items,
        unsubscribe_url,
        settings_url: &settings_url,
    }
    .render()?;
    let subject = if items.len() == 1 {
        "docreview: 1 unread notification".to_string()
    } else {
        format!("docreview: {} unread notifications", items.len())
    };
    Ok(Mail {
        to: to.to_string(),
        subject,
        text,
        html,
        unsubscribe_url: Some(unsubscribe_url.to_string()),
    })
}

#[derive(Template)]
#[template(path = "mail/link.txt")]
struct LinkText<'a> {
    intro: &'a str,
    action: &'a str,
    link: &'a str,
    note: &'a str,
    public_url: &'a str,
}

#[derive(Template)]
#[template(path = "mail/link.html")]
struct LinkHtml<'a> {
    intro: &'a str,
    action: &'a str,
    link: &'a str,
    note: &'a str,
    public_url: &'a str,
}

/// A mail whose point is one single-use link (an invitation, a password reset): no
/// `List-Unsubscribe`, since it is not a notification the person could turn off.
fn link_mail(
    to: &str,
    subject: &str,
    intro: &str,
    action: &str,
    link: &str,
    note: &str,
    public_url: &str,
) -> Result<Mail, askama::Error> {
    let text = LinkText {
        intro,
        action,
        link,
        note,
        public_url,
    }
    .render()?;
    let html = LinkHtml {
        intro,
        action,
        link,
        note,
        public_url,
    }
    .render()?;
    Ok(Mail {
        to: to.to_string(),
        subject: one_line(subject),
        text,
        html,
        unsubscribe_url: None,
    })
}

/// The mail of an invitation to join the organization.
pub fn invitation_mail(
    to: &str,
    inviter: &str,
    accept_url: &str,
    public_url: &str,
) -> Result<Mail, askama::Error> {
    link_mail(
        to,
        &format!("{inviter} invited you to docreview"),
        &format!("{inviter} invited you to review documents with them on docreview."),
        "Accept the invitation",
        accept_url,
        "The link works once, for 7 days. If you did not expect this invitation, ignore this mail.",
        public_url,
    )
}

/// The mail of a password reset.
pub fn password_reset_mail(
    to: &str,
    reset_url: &str,
    public_url: &str,
) -> Result<Mail, askama::Error> {
    link_mail(
        to,
        "Reset your docreview password",
        "Someone (hopefully you) asked to reset the password of your docreview account.",
        "Choose a new password",
        reset_url,
        "The link works once, for 1 hour. If you did not ask for it, ignore this mail: your password stays as it is.",
        public_url,
    )
}

/// A subject on one line, at most 150 characters (a title may hold anything).
fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 150 {
        flat
    } else {
        let cut: String = flat.chars().take(149).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231, test case 2.
        let tag = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(tag),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        let tag = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex::encode(tag),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn unsubscribe_tokens_are_bound_to_their_person_and_key() {
        let token = unsubscribe_token(b"key", "usr_1");
        assert_eq!(verify_unsubscribe(b"key", &token).as_deref(), Some("usr_1"));
        assert_eq!(verify_unsubscribe(b"other", &token), None);
        let forged = token.replace("usr_1", "usr_2");
        assert_eq!(verify_unsubscribe(b"key", &forged), None);
        assert_eq!(verify_unsubscribe(b"key", "nonsense"), None);
        assert_eq!(verify_unsubscribe(b"key", "usr_1.!!"), None);
    }

    #[test]
    fn mails_have_both_parts_the_link_and_escaped_html() {
        let item = MailItem {
            actor: "Ada <script>".into(),
            phrase: reason_phrase(NotificationReason::Mention),
            review_title: "Plan & budget".into(),
            excerpt: "@bob look <b>here</b>".into(),
            link: "https://docs.example/reviews/rev_1#thread-cmt_1".into(),
        };
        let mail = notification_mail(
            "bob@example.com",
            &item,
            "https://docs.example",
            "https://docs.example/unsubscribe/t",
        )
        .unwrap();
        assert!(
            mail.text
                .contains("https://docs.example/reviews/rev_1#thread-cmt_1")
        );
        assert!(mail.text.contains("@bob look <b>here</b>"));
        assert!(
            mail.html
                .contains("href=\"https://docs.example/reviews/rev_1#thread-cmt_1\"")
        );
        assert!(!mail.html.contains("<b>"), "{}", mail.html);
        assert!(mail.html.contains("here"));
        assert!(!mail.html.contains("<script>"));
        assert_eq!(
            mail.subject,
            "Ada <script> mentioned you on “Plan & budget”"
        );
    }
}
