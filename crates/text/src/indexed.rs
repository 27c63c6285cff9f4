//! `IndexedText`: a string with constant-time code-point ↔ byte offset conversion.
//!
//! Offsets exchanged with clients are code points, while Rust string search works on
//! bytes. Rather than a full per-char table (4–8 bytes per char), we keep one sample
//! every `STRIDE` chars and every `STRIDE` bytes; a conversion then scans at most
//! `STRIDE` bytes, which is constant time and costs ~1/16 of the text in memory.

/// Distance between samples. 64 keeps the residual scan within one cache line or two.
const STRIDE: usize = 64;

/// A text with O(1) code-point ↔ byte offset conversion, built once per version text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedText {
    text: String,
    char_len: usize,
    /// Byte offset of char `i * STRIDE`. Empty for ASCII text, where offsets coincide.
    char_samples: Vec<usize>,
    /// Number of chars starting before byte `i * STRIDE`. Empty for ASCII text.
    byte_samples: Vec<usize>,
}

impl IndexedText {
    pub fn new(text: String) -> Self {
        if text.is_ascii() {
            return Self {
                char_len: text.len(),
                text,
                char_samples: Vec::new(),
                byte_samples: Vec::new(),
            };
        }
        let bytes = text.as_bytes();
        let mut char_samples = Vec::with_capacity(text.len() / STRIDE + 1);
        let mut byte_samples = Vec::with_capacity(text.len() / STRIDE + 1);
        let mut chars = 0usize;
        for (i, &b) in bytes.iter().enumerate() {
            if i % STRIDE == 0 {
                byte_samples.push(chars);
            }
            if is_char_start(b) {
                if chars.is_multiple_of(STRIDE) {
                    char_samples.push(i);
                }
                chars += 1;
            }
        }
        Self {
            text,
            char_len: chars,
            char_samples,
            byte_samples,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Length in code points.
    pub fn char_len(&self) -> usize {
        self.char_len
    }

    /// Whether every char is one byte, so code-point and byte offsets coincide.
    pub fn is_ascii(&self) -> bool {
        self.char_samples.is_empty() && self.char_len == self.text.len()
    }

    /// Byte offset of code point `index`; indices past the end give the text's byte length.
    pub fn char_to_byte(&self, index: usize) -> usize {
        if index >= self.char_len {
            return self.text.len();
        }
        if self.is_ascii() {
            return index;
        }
        let mut byte = self.char_samples[index / STRIDE];
        let bytes = self.text.as_bytes();
        for _ in 0..index % STRIDE {
            byte += 1;
            while byte < bytes.len() && !is_char_start(bytes[byte]) {
                byte += 1;
            }
        }
        byte
    }

    /// Code-point offset of the char containing byte `byte` (its start when `byte` falls
    /// inside a multi-byte char); offsets past the end give `char_len()`.
    pub fn byte_to_char(&self, byte: usize) -> usize {
        if byte >= self.text.len() {
            return self.char_len;
        }
        if self.is_ascii() {
            return byte;
        }
        let base = byte / STRIDE * STRIDE;
        let bytes = self.text.as_bytes();
        let starts = bytes[base..=byte]
            .iter()
            .filter(|&&b| is_char_start(b))
            .count();
        // The char containing `byte` is the last one started at or before it: either
        // within this stride (counted in `starts`) or before it (counted in the sample).
        // At least one of the two counts it, so the subtraction cannot underflow.
        self.byte_samples[byte / STRIDE] + starts - 1
    }

    /// The text between code points `start` and `end`, clamped to the text and to `start <= end`.
    pub fn slice(&self, start: usize, end: usize) -> &str {
        let end = end.min(self.char_len);
        let start = start.min(end);
        &self.text[self.char_to_byte(start)..self.char_to_byte(end)]
    }
}

impl From<String> for IndexedText {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for IndexedText {
    fn from(text: &str) -> Self {
        Self::new(text.to_owned())
    }
}

/// UTF-8 continuation bytes are `0b10xx_xxxx`; every other byte starts a char.
fn is_char_start(b: u8) -> bool {
    b.cast_signed() >= -0x40
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks every offset against a plain char walk, across several sample strides.
    fn check_against_walk(text: &str) {
        let indexed = IndexedText::new(text.to_owned());
        let starts: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
        assert_eq!(indexed.char_len(), starts.len());
        for (i, &b) in starts.iter().enumerate() {
            assert_eq!(indexed.char_to_byte(i), b, "char {i}");
            assert_eq!(indexed.byte_to_char(b), i, "byte {b}");
        }
        assert_eq!(indexed.char_to_byte(starts.len()), text.len());
        assert_eq!(indexed.byte_to_char(text.len()), starts.len());
        for (b, _) in text.char_indices() {
            for inner in 1..text[b..].chars().next().map_or(1, char::len_utf8) {
                assert_eq!(indexed.byte_to_char(b + inner), indexed.byte_to_char(b));
            }
        }
    }

    #[test]
    fn conversions_agree_with_char_walk() {
        check_against_walk("");
        check_against_walk("plain ascii");
        let mixed: String = (0..500)
            .map(|i| ["a", "é", "日本", "😀", " "][i % 5])
            .collect();
        check_against_walk(&mixed);
    }

    #[test]
    fn slice_is_in_code_points_and_clamped() {
        let text = IndexedText::from("aé日😀b");
        assert_eq!(text.char_len(), 5);
        assert_eq!(text.slice(1, 4), "é日😀");
        assert_eq!(text.slice(3, 99), "😀b");
        assert_eq!(text.slice(4, 2), "");
        assert_eq!(text.slice(99, 100), "");
        assert_eq!(text.as_str(), "aé日😀b");
    }
}
