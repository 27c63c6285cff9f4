//! Review reads answered from rendered JSON: each node keeps the bytes of recent answers, per
//! reading key (see `docreview_core::service::ReviewReading`), so a document read again
//! unchanged is answered without building or serializing anything.

use std::sync::Arc;

use bytes::Bytes;
use docreview_api::views::{ReviewBody, ReviewView};
use docreview_core::cache::BoundedCache;
use docreview_core::identity::sha256;
use docreview_core::model::Millis;
use docreview_core::service::{ReviewReading, Stamp};

/// How much rendered JSON a node keeps.
const RENDERED_BYTES: usize = 16 * 1024 * 1024;

/// A review's JSON as the API answers it, and its entity tag: a digest of those bytes, so every
/// node gives the same tag for the same answer.
#[derive(Clone)]
pub struct ReviewJson {
    pub body: Bytes,
    pub etag: String,
}

impl ReviewJson {
    /// `{ "review": Review }`, serialized.
    pub fn of(review: ReviewView) -> Result<Self, serde_json::Error> {
        let body = Bytes::from(serde_json::to_vec(&ReviewBody { review })?);
        let digest = sha256(&body);
        let etag = digest[..16]
            .iter()
            .fold(String::from("\""), |tag, byte| tag + &format!("{byte:02x}"))
            + "\"";
        Ok(ReviewJson { body, etag })
    }
}

struct Rendered {
    stamp: Stamp,
    valid_until: Millis,
    json: ReviewJson,
}

pub struct RenderedReviews(BoundedCache<Rendered>);

impl Default for RenderedReviews {
    fn default() -> Self {
        RenderedReviews(BoundedCache::new(RENDERED_BYTES))
    }
}

impl RenderedReviews {
    /// The answer for `reading`: kept, or rendered now and kept.
    pub fn answer(&self, reading: &ReviewReading) -> Result<ReviewJson, serde_json::Error> {
        if let Some(kept) = self.0.get(&reading.key)
            && kept.stamp == reading.stamp
            && reading.now < kept.valid_until
        {
            return Ok(kept.json.clone());
        }
        let json = ReviewJson::of(reading.view())?;
        let rendered = Rendered {
            stamp: reading.stamp.clone(),
            valid_until: reading.valid_until,
            json: json.clone(),
        };
        self.0
            .insert(&reading.key, Arc::new(rendered), json.body.len());
        Ok(json)
    }
}
