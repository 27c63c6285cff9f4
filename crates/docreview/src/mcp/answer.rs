//! How `docreview mcp` keeps every answer whole: answers are JSON of at most
//! [`ANSWER_LIMIT`] characters (characters, not bytes: a page of Chinese is not three times
//! shorter than a page of English), and what does not fit is left for the next page, named by a
//! cursor (or an offset). Nothing is ever cut out of the JSON text; a long string inside an item
//! (a comment's body in a listing) is shortened on purpose, says so, and has a method that
//! reads it whole.

use serde_json::{Value, json};

/// The most characters an answer's JSON text has.
pub const ANSWER_LIMIT: usize = 25_000;
/// Room kept free while filling a page, for `nextCursor` and a hint added afterwards.
const RESERVE: usize = 1_000;

/// The length of `value` as JSON text, in characters.
pub fn json_chars(value: &Value) -> usize {
    value.to_string().chars().count()
}

/// How many characters `c` takes inside a JSON string (`serde_json` writes everything beyond
/// ASCII as it is, and escapes quotes, backslashes and control characters).
pub fn escaped_chars(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if u32::from(c) < 0x20 => 6,
        _ => 1,
    }
}

/// `text` shortened to `max` characters (with `…`), and its length when it was shortened.
pub fn shortened(text: &str, max: usize) -> (String, Option<usize>) {
    let total = text.chars().count();
    if total <= max {
        (text.to_string(), None)
    } else {
        let mut short: String = text.chars().take(max).collect();
        short.push('…');
        (short, Some(total))
    }
}

/// Puts items of `lists` into `envelope` (one array per list, under its name), continuing at
/// `at` (one position per list) and taking the lists in order, as many items as keep the
/// answer within the limit. Returns where the next page starts, or `None` when everything
/// from `at` on was taken. At least one item is taken when any is left, so paging always ends;
/// an item longer than an answer by itself is named in its place.
pub fn fill(envelope: &mut Value, lists: &[(&str, &[Value])], at: &[usize]) -> Option<Vec<usize>> {
    for (name, _) in lists {
        envelope[*name] = json!([]);
    }
    let mut used = json_chars(envelope);
    let mut next: Vec<usize> = lists
        .iter()
        .zip(at)
        .map(|((_, items), &start)| start.min(items.len()))
        .collect();
    let mut taken_any = false;
    for (index, (name, items)) in lists.iter().enumerate() {
        let mut page = Vec::new();
        while next[index] < items.len() {
            let item = &items[next[index]];
            let cost = json_chars(item) + 1;
            if used + cost > ANSWER_LIMIT - RESERVE && taken_any {
                envelope[*name] = Value::Array(page);
                return Some(next);
            }
            if used + cost > ANSWER_LIMIT - RESERVE {
                // Alone longer than an answer (hand-made HTML: a heading's id of 50,000
                // characters): named, so paging goes on past it.
                let placeholder = json!({
                    "omitted": format!("item {} of `{name}` is longer than an answer", next[index]),
                });
                used += json_chars(&placeholder) + 1;
                page.push(placeholder);
            } else {
                used += cost;
                page.push(item.clone());
            }
            taken_any = true;
            next[index] += 1;
        }
        envelope[*name] = Value::Array(page);
    }
    None
}

/// The end of the page of `chars` that starts at `start`: at most `max` characters, and as
/// many as take at most `budget` characters as JSON, counting `extra(position, char)` more
/// for a character (the line break shown before it where blocks meet).
pub fn page_end(
    chars: impl Iterator<Item = char>,
    start: usize,
    max: usize,
    budget: usize,
    mut extra: impl FnMut(usize, char) -> usize,
) -> usize {
    let mut used = 0;
    let mut end = start;
    for c in chars.take(max) {
        let cost = escaped_chars(c) + extra(end, c);
        if used + cost > budget && end > start {
            break;
        }
        used += cost;
        end += 1;
    }
    end
}

/// Why a call was refused, as JSON: the error's kind, the argument at fault when there is one,
/// and a message that says what to do instead.
pub fn refusal_value(error: &str, argument: Option<&str>, message: &str) -> Value {
    let mut value = json!({ "error": error, "message": message });
    if let Some(argument) = argument {
        value["argument"] = json!(argument);
    }
    value
}

/// What a cursor continues: the method, the document (or nothing), the arguments that chose
/// the items, and where the next page starts (positions, or the API's own cursor). Written as
/// one string that names all four, so a cursor sent with another method, another document or
/// other arguments is refused instead of silently read as something else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub method: String,
    pub scope: String,
    pub filter: String,
    pub at: String,
}

const CURSOR_TAG: &str = "dr1";

impl Cursor {
    pub fn new(method: &str, scope: &str, filter: &str, at: String) -> Self {
        Cursor {
            method: method.to_string(),
            scope: scope.to_string(),
            filter: filter.to_string(),
            at,
        }
    }

    /// A cursor at numeric positions.
    pub fn at_positions(method: &str, scope: &str, filter: &str, at: &[usize]) -> Self {
        let at = at
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(".");
        Cursor::new(method, scope, filter, at)
    }

    pub fn encode(&self) -> String {
        [
            CURSOR_TAG,
            &escape(&self.method),
            &escape(&self.scope),
            &escape(&self.filter),
            &escape(&self.at),
        ]
        .join("~")
    }

    pub fn decode(text: &str) -> Option<Cursor> {
        let mut parts = text.split('~');
        if parts.next()? != CURSOR_TAG {
            return None;
        }
        let cursor = Cursor {
            method: unescape(parts.next()?)?,
            scope: unescape(parts.next()?)?,
            filter: unescape(parts.next()?)?,
            at: unescape(parts.next()?)?,
        };
        parts.next().is_none().then_some(cursor)
    }

    /// The positions of a cursor made by [`Cursor::at_positions`] with `count` of them.
    pub fn positions(&self, count: usize) -> Option<Vec<usize>> {
        let positions: Vec<usize> = self
            .at
            .split('.')
            .map(|part| part.parse().ok())
            .collect::<Option<_>>()?;
        (positions.len() == count).then_some(positions)
    }
}

fn escape(part: &str) -> String {
    part.replace('%', "%25").replace('~', "%7E")
}

fn unescape(part: &str) -> Option<String> {
    let mut out = String::with_capacity(part.len());
    let mut rest = part;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at..at + 3)?;
        out.push(match code {
            "%25" => '%',
            "%7E" => '~',
            _ => return None,
        });
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_as_written_and_garbage_is_no_cursor() {
        let cursor = Cursor::new("comments", "rv_1", "open|a~b%c", "12.0".into());
        assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor.clone()));
        assert_eq!(cursor.positions(2), Some(vec![12, 0]));
        assert_eq!(cursor.positions(1), None);
        for garbage in [
            "",
            "50",
            "dr1~a~b",
            "dr1~a~b~c~d~e",
            "dr2~a~b~c~d",
            "dr1~%zz~b~c~d",
        ] {
            assert_eq!(Cursor::decode(garbage), None, "{garbage}");
        }
    }

    #[test]
    fn filling_takes_what_fits_in_order_and_resumes_where_it_stopped() {
        let big: Vec<Value> = (0..100)
            .map(|i| json!({ "i": i, "pad": "x".repeat(900) }))
            .collect();
        let small: Vec<Value> = (0..10).map(|i| json!({ "j": i })).collect();
        let mut seen = Vec::new();
        let mut at = vec![0, 0];
        loop {
            let mut page = json!({});
            let next = fill(&mut page, &[("big", &big), ("small", &small)], &at);
            assert!(json_chars(&page) <= ANSWER_LIMIT - 500);
            seen.extend(page["big"].as_array().unwrap().iter().cloned());
            seen.extend(page["small"].as_array().unwrap().iter().cloned());
            match next {
                Some(next) => at = next,
                None => break,
            }
        }
        let expected: Vec<Value> = big.iter().chain(&small).cloned().collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn an_item_longer_than_an_answer_is_named_and_paging_goes_on() {
        let items = vec![
            json!({ "id": "a" }),
            json!({ "id": "x".repeat(30_000) }),
            json!({ "id": "b" }),
        ];
        let mut page = json!({});
        let next = fill(&mut page, &[("items", &items)], &[1]);
        assert_eq!(next, None);
        assert!(json_chars(&page) < 1_000, "{page}");
        assert!(page["items"][0]["omitted"].is_string());
        assert_eq!(page["items"][1]["id"], "b");
    }

    #[test]
    fn pages_of_text_count_characters_as_json_writes_them() {
        let text = "中文\"\n\u{1}ab";
        let end = page_end(text.chars(), 0, 100, 5, |_, _| 0);
        assert_eq!(end, 3, "中 文 and the quote's two");
        assert_eq!(page_end(text.chars(), 0, 2, 100, |_, _| 0), 2);
        assert_eq!(
            page_end(text.chars(), 0, 100, 0, |_, _| 0),
            1,
            "one at least"
        );
        assert_eq!(shortened("abcdef", 3), ("abc…".to_string(), Some(6)));
        assert_eq!(shortened("abc", 3), ("abc".to_string(), None));
    }
}
