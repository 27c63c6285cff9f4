//! The closed sets of words the API speaks, each spelled once for JSON, the database and
//! messages.

use serde::{Deserialize, Serialize};

/// Defines a closed set of words with one spelling shared by JSON, the database and error messages.
macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $(#[serde(rename = $text)] $variant),+ }

        impl $name {
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some(Self::$variant),)+ _ => None }
            }
        }

        // By hand: the derive cannot see the spellings through the macro's `serde` attributes.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$($text),+]))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

word_enum!(
    /// Why one item of a batch of run comments was not written.
    BatchItemError {
        QuoteNotFound => "quote_not_found",
        QuoteAmbiguous => "quote_ambiguous",
        InvalidRequest => "invalid_request",
    }
);
word_enum!(Provider { Local => "local", Oidc => "oidc", Service => "service" });
word_enum!(Membership { Internal => "internal", External => "external" });
word_enum!(
    /// `removed`: an external member an admin removed; kept so authorship stays readable, never
    /// listed, and unable to authenticate (registering the email again brings the row back).
    UserStatus { Active => "active", Suspended => "suspended", Removed => "removed" }
);
word_enum!(AccessMode { Link => "link", Restricted => "restricted" });
word_enum!(
    /// A role on one document; later variants include the rights of earlier ones.
    #[derive(PartialOrd, Ord)]
    Role { Viewer => "viewer", Editor => "editor", Owner => "owner" }
);
word_enum!(
    /// The roles that sharing can grant (ownership is transferred, never granted).
    GrantRole { Editor => "editor", Viewer => "viewer" }
);
word_enum!(Category {
    Note => "note",
    Revise => "revise",
    Add => "add",
    Delete => "delete",
    NeedsReview => "needs_review",
    Consult => "consult",
    None => "none",
});
word_enum!(CommentStatus { Open => "open", Closed => "closed" });
word_enum!(
    /// Why one annotation of an import was not written.
    ImportItemError {
        NotAComment => "not_a_comment",
        QuoteNotFound => "quote_not_found",
        InvalidRequest => "invalid_request",
        ParentNotImported => "parent_not_imported",
    }
);
word_enum!(
    /// What `GET /api/reviews/{id}/export` writes: a W3C Web Annotation collection, docreview's
    /// own lossless file, a table, or a readable report.
    ExportFormat { W3c => "w3c", Native => "native", Csv => "csv", Markdown => "markdown" }
);
word_enum!(RunKind { AiReview => "ai_review", Voice => "voice" });
word_enum!(RunStatus {
    Running => "running",
    Completed => "completed",
    Failed => "failed",
    Cancelled => "cancelled",
});
word_enum!(AnchorState { Exact => "exact", Fuzzy => "fuzzy", Orphaned => "orphaned" });
word_enum!(
    /// A role in a project; later variants include the rights of earlier ones.
    #[derive(PartialOrd, Ord)]
    ProjectRole { Viewer => "viewer", Editor => "editor", Manager => "manager" }
);
word_enum!(Scope { Docs => "docs", Access => "access", Comments => "comments", Org => "org" });
word_enum!(
    /// The three shared tokens configured in the environment.
    SharedKind { Agent => "agent", Import => "import", Manage => "manage" }
);

impl GrantRole {
    pub fn role(self) -> Role {
        match self {
            GrantRole::Editor => Role::Editor,
            GrantRole::Viewer => Role::Viewer,
        }
    }
}

impl Category {
    /// The category a word names, or a message that lists the words there are.
    pub fn from_word(word: &str) -> Result<Self, String> {
        Self::parse(word).ok_or_else(|| {
            let words: Vec<&str> = Self::ALL.iter().map(|c| c.as_str()).collect();
            format!("unknown category `{word}`; use one of {}", words.join(", "))
        })
    }
}

impl SharedKind {
    /// The fixed user id of the service principal behind a shared token.
    pub fn user_id(self) -> &'static str {
        match self {
            SharedKind::Agent => "svc_agent",
            SharedKind::Import => "svc_import",
            SharedKind::Manage => "svc_manage",
        }
    }

    /// The service principal's handle (reserved: no person can take it).
    pub fn handle(self) -> &'static str {
        match self {
            SharedKind::Agent => "svc-agent",
            SharedKind::Import => "svc-import",
            SharedKind::Manage => "svc-manage",
        }
    }

    pub fn display_name(self) -> &'static str {
        match self {
            SharedKind::Agent => "Agent (shared token)",
            SharedKind::Import => "Import (shared token)",
            SharedKind::Manage => "Manage (shared token)",
        }
    }
}

word_enum!(
    /// How an uploaded body joins a document: a new version, or the latest version's new body.
    VersionMode { AddVersion => "add_version", Replace => "replace" }
);

word_enum!(
    /// What a webhook can subscribe to (DESIGN.md §8.3): the type of each event it is sent, and
    /// of the body's `type`. A new event is one variant here and the place that records it
    /// (`docs/notifications.md` says how).
    WebhookEventType {
        ReviewCreated => "review.created",
        ReviewVersionAdded => "review.version_added",
        ReviewDeleted => "review.deleted",
        CommentCreated => "comment.created",
        CommentReplied => "comment.replied",
        CommentStatusChanged => "comment.status_changed",
        CommentEdited => "comment.edited",
        RunCompleted => "run.completed",
        Ping => "ping",
        ReviewDecision => "review.decision",
        ReviewFinalized => "review.finalized",
    }
);
word_enum!(
    /// Why someone is notified (DESIGN.md §8.1), strongest first: of several reasons one event
    /// gives a person, the earliest in this list wins. A new reason goes where it ranks.
    NotificationReason {
        Mention => "mention",
        Assigned => "assigned",
        ReviewRequested => "review_requested",
        Decision => "decision",
        Reply => "reply",
        Comment => "comment",
        RunCompleted => "run_completed",
        WebhookFailed => "webhook_failed",
    }
);
word_enum!(
    /// How a person's notifications reach them by mail: each at once, one digest a day, or not.
    EmailFrequency { Instant => "instant", Daily => "daily", Off => "off" }
);
word_enum!(
    /// A row of the outbox (a webhook delivery, a mail): waiting or retrying, done, or given up.
    DeliveryStatus { Pending => "pending", Succeeded => "succeeded", Failed => "failed" }
);

impl NotificationReason {
    /// Whether this reason beats `other` (comes earlier in `ALL`).
    pub fn outranks(self, other: NotificationReason) -> bool {
        let rank = |reason| Self::ALL.iter().position(|r| *r == reason);
        rank(self) < rank(other)
    }
}

word_enum!(
    /// A person's verdict on a document (DESIGN.md §8.4).
    DecisionKind {
        Approved => "approved",
        ApprovedWithChanges => "approved_with_changes",
        ChangesRequested => "changes_requested",
        NotRelevant => "not_relevant",
    }
);
word_enum!(
    /// What a document's current decisions add up to (DESIGN.md §8.4).
    Outcome {
        ChangesRequested => "changes_requested",
        ApprovedWithChanges => "approved_with_changes",
        Approved => "approved",
        NotRelevant => "not_relevant",
        Pending => "pending",
    }
);
word_enum!(
    /// Whether a document's review is still going on or was finished (finalized).
    WorkflowState { Open => "open", Finalized => "finalized" }
);
word_enum!(
    /// The reactions a comment or reply can get (GitHub's eight).
    Emoji {
        PlusOne => "+1",
        MinusOne => "-1",
        Laugh => "laugh",
        Confused => "confused",
        Heart => "heart",
        Hooray => "hooray",
        Rocket => "rocket",
        Eyes => "eyes",
    }
);

impl Emoji {
    /// The emoji a word names, or a message that lists the words there are.
    pub fn from_word(word: &str) -> Result<Self, String> {
        Self::parse(word).ok_or_else(|| {
            let words: Vec<&str> = Self::ALL.iter().map(|e| e.as_str()).collect();
            format!("unknown reaction `{word}`; use one of {}", words.join(" "))
        })
    }
}
