//! `search comments|docs`.

use clap::Subcommand;
use docreview_client::api::{CommentSearchQuery, DocSearchQuery};

use super::output::{DIM, paint};
use super::{Outcome, Output, signed_in_client};

#[derive(Subcommand)]
pub enum SearchCommand {
    /// Comments and replies that contain the words.
    Comments {
        /// The words (each a prefix; "…" for a phrase).
        words: String,
        /// Only in this document (rv_…).
        #[arg(long)]
        review: Option<String>,
    },
    /// Documents whose title or text contains the words.
    Docs {
        /// The words (each a prefix; "…" for a phrase).
        words: String,
    },
}

pub async fn search(command: SearchCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        SearchCommand::Comments { words, review } => {
            let query = CommentSearchQuery {
                q: Some(words),
                review_id: review,
                ..CommentSearchQuery::default()
            };
            let found = client.search_comments(&query).await?;
            output.answer(&client, &found, |found| {
                for hit in &found.results {
                    anstream::println!(
                        "{} {}  [{}] {}: {}",
                        paint(DIM, &hit.review_id),
                        paint(DIM, &hit.comment_id),
                        hit.status,
                        hit.author.display_name,
                        plain(&hit.snippet)
                    );
                }
            })
        }
        SearchCommand::Docs { words } => {
            let query = DocSearchQuery {
                q: Some(words),
                ..DocSearchQuery::default()
            };
            let found = client.search_docs(&query).await?;
            output.answer(&client, &found, |found| {
                for hit in &found.results {
                    anstream::println!(
                        "{}  {}: {}",
                        paint(DIM, &hit.review.review_id),
                        hit.review.title,
                        plain(&hit.snippet)
                    );
                }
            })
        }
    }
}

/// A search snippet as terminal text: its `<mark>`s as brackets, entities decoded.
fn plain(snippet: &str) -> String {
    snippet
        .replace("<mark>", "[")
        .replace("</mark>", "]")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}
