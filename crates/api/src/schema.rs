//! Schemas of text the use cases check, so the API contract states their rules exactly: text that
//! is trimmed before its length is checked (`check_length`), and email addresses as
//! `accounts::normalize_email` accepts them. Fields name them with `#[schema(value_type = …)]`.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

/// What `str::trim` removes (Unicode `White_Space`), as a regex character class body.
const SPACE: &str = r"\t\n\x0B\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";

/// Text of 1 to `max` characters once trimmed.
fn trimmed(max: usize) -> String {
    format!(
        r"^[{SPACE}]*[^{SPACE}](?:[\s\S]{{0,{}}}[^{SPACE}])?[{SPACE}]*$",
        max - 2
    )
}

fn string(pattern: String, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .description(Some(description))
        .into()
}

macro_rules! text_schema {
    ($(#[$meta:meta])* $name:ident => $schema:expr) => {
        $(#[$meta])*
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                $schema
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

text_schema!(
    /// A document's or run's title.
    Title => string(trimmed(300), "1 to 300 characters, not counting spaces around")
);
text_schema!(
    /// A tag.
    Tag => string(trimmed(64), "1 to 64 characters, not counting spaces around")
);
text_schema!(
    /// A person's name.
    DisplayName => string(trimmed(200), "1 to 200 characters, not counting spaces around")
);
text_schema!(
    /// A handle as sent to `PATCH /api/me`: stored in lower case, a leading `@` dropped.
    Handle => string(
        r"^@?[A-Za-z0-9][A-Za-z0-9._-]{0,38}$".to_string(),
        "1 to 39 characters of a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit \
         (compared in lower case; a leading `@` is ignored)"
    )
);
text_schema!(
    /// An email address: one `@`, something before it, a dotted domain after it, no spaces
    /// inside (spaces around are ignored, and it is compared in lower case).
    Email => ObjectBuilder::new()
        .schema_type(Type::String)
        // No `format: email`: validators read it as RFC 5322, which is both stricter and looser.
        .pattern(Some(format!(
            r"^[{SPACE}]*[^@{SPACE}\x00-\x1F\x7F-\x9F]+@[^@.{SPACE}\x00-\x1F\x7F-\x9F]+(?:\.[^@.{SPACE}\x00-\x1F\x7F-\x9F]+)+[{SPACE}]*$"
        )))
        .max_length(Some(254))
        .description(Some("An email address (at most 254 characters)"))
        .into()
);

#[cfg(test)]
mod tests {
    use super::trimmed;

    /// The pattern's class is what Rust trims: every character it lists is trimmed, and
    /// the characters around it are not.
    #[test]
    fn the_space_class_is_what_trim_removes() {
        let listed = [
            '\t', '\n', '\x0B', '\x0C', '\r', ' ', '\u{85}', '\u{A0}', '\u{1680}', '\u{2000}',
            '\u{200A}', '\u{2028}', '\u{2029}', '\u{202F}', '\u{205F}', '\u{3000}',
        ];
        for c in listed {
            assert!(c.is_whitespace(), "{c:?}");
        }
        let whitespace = (0..=0x0010_FFFF_u32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .count();
        // 0x2000..=0x200A is a range of 11; the others are listed one by one.
        assert_eq!(whitespace, listed.len() - 2 + 11);
        assert!(trimmed(300).contains("{0,298}"));
    }

    #[test]
    fn whole_numbers_may_be_written_with_a_zero_fraction() {
        let read = |json: &str| serde_json::from_str::<crate::requests::TextEdit>(json);
        let edit = read(r#"{"body":"x","baseCommentsRevision":5.0}"#).expect("5.0 is 5");
        assert_eq!(edit.base_comments_revision, Some(5));
        assert!(read(r#"{"body":"x","baseCommentsRevision":5.5}"#).is_err());
        let missing = read(r#"{"body":"x"}"#).expect("optional");
        assert_eq!(missing.base_comments_revision, None);
    }
}

/// Integers as JSON Schema counts them: a number with no fraction, `5` or `5.0` alike.
pub mod whole {
    use serde::{Deserialize, Deserializer, de::Error};

    fn convert<T: TryFrom<i64>, E: Error>(number: &serde_json::Number) -> Result<T, E> {
        let whole = number.as_i64().or_else(|| {
            number
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| {
                    #[allow(clippy::cast_possible_truncation, reason = "whole and below 2^53")]
                    let whole = f as i64;
                    whole
                })
        });
        whole
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| E::custom(format!("expected a whole number in range, not {number}")))
    }

    pub fn required<'de, D: Deserializer<'de>, T: TryFrom<i64>>(d: D) -> Result<T, D::Error> {
        convert(&serde_json::Number::deserialize(d)?)
    }

    pub fn optional<'de, D: Deserializer<'de>, T: TryFrom<i64>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        Option::<serde_json::Number>::deserialize(d)?
            .map(|number| convert(&number))
            .transpose()
    }
}

/// A field that must be sent but may be `null` (serde treats a missing `Option` field as `None`
/// unless it is read through a function like this one).
pub fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d)
}
