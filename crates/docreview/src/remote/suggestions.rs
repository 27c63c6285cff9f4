//! `suggestions apply`: comments' suggested changes made into one new version (DESIGN.md §8.5).

use clap::Subcommand;
use docreview_client::api::ApplySuggestions;

use super::output::counted;
use super::{Outcome, Output, signed_in_client};

#[derive(Subcommand)]
pub enum SuggestionsCommand {
    /// Apply comments' suggestions as one new version of the document: its HTML is the base
    /// version's with exactly those passages changed; the comments are closed.
    Apply {
        /// The document's id (rv_…).
        review: String,
        /// The comments whose suggestions to apply (cm_…).
        #[arg(required = true)]
        comments: Vec<String>,
        /// The latest version as you read it (ver_…); another is refused (exit 5).
        #[arg(long, value_name = "VID")]
        base: String,
        /// The new version's label [default: v2, v3, … by count].
        #[arg(long)]
        label: Option<String>,
    },
}

pub async fn suggestions(command: SuggestionsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        SuggestionsCommand::Apply {
            review,
            comments,
            base,
            label,
        } => {
            let input = ApplySuggestions {
                comment_ids: comments,
                base_version_id: base,
                label,
            };
            let applied = client.apply_suggestions(&review, &input).await?;
            output.answer(&client, &applied, |applied| {
                let label = applied
                    .review
                    .source
                    .versions
                    .iter()
                    .find(|v| v.version_id == applied.version_id)
                    .map_or("", |v| v.label.as_str());
                println!(
                    "Applied {} as {label} ({}).",
                    counted(applied.applied.len(), "suggestion"),
                    applied.version_id
                );
            })
        }
    }
}
