//! Edit-distance primitives for approximate quote matching: Myers' bit-parallel search.
//!
//! The search is Myers (1999) with Hyyrö's block extension for patterns longer than a
//! machine word and Ukkonen's cut-off (only the blocks that can still hold a score within
//! the error limit are advanced), as in the `approx-string-match` library Hypothesis
//! uses. Its cost is about `text_len × active_blocks`, linear in the text.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "char offsets, lengths and edit counts are bounded by one document's length (at most \
              the upload limit, far below i64::MAX), so the usize/i64 casts of the scoring cannot \
              wrap; a score is cast back only when it is ≤ the error limit, so ≥ 0"
)]

/// Bits per block.
const W: usize = 64;

/// Rows of the match-mask table before those of non-ASCII chars: one per ASCII byte, so
/// that the common case needs no symbol lookup.
const ASCII_ROWS: usize = 128;

/// A pattern compiled for bit-parallel search.
pub struct Pattern {
    len: usize,
    blocks: usize,
    /// The pattern's non-ASCII chars, sorted for binary search; char `other[i]` uses row
    /// `ASCII_ROWS + 1 + i`, and row `ASCII_ROWS` (all zeros) serves absent chars.
    other: Vec<char>,
    /// Match masks, `blocks` words per row: bit i of a row's words is set where the
    /// pattern's char i is that row's char.
    peq: Vec<u64>,
}

impl Pattern {
    pub fn new(chars: &[char]) -> Self {
        let len = chars.len();
        let blocks = len.div_ceil(W).max(1);
        let mut other: Vec<char> = chars.iter().copied().filter(|c| !c.is_ascii()).collect();
        other.sort_unstable();
        other.dedup();
        let rows = ASCII_ROWS + 1 + other.len();
        let mut pattern = Self {
            len,
            blocks,
            other,
            peq: vec![0; rows * blocks],
        };
        for (i, &c) in chars.iter().enumerate() {
            let row = pattern.row(c);
            pattern.peq[row * blocks + i / W] |= 1 << (i % W);
        }
        pattern
    }

    #[inline]
    fn row(&self, c: char) -> usize {
        if c.is_ascii() {
            c as usize
        } else {
            match self.other.binary_search(&c) {
                Ok(at) => ASCII_ROWS + 1 + at,
                Err(_) => ASCII_ROWS,
            }
        }
    }

    #[inline]
    fn masks(&self, c: char) -> &[u64] {
        let row = self.row(c);
        &self.peq[row * self.blocks..(row + 1) * self.blocks]
    }

    /// The mask-table row of each char of `text`.
    fn rows<'a>(&'a self, text: &'a str) -> Rows<'a> {
        Rows {
            pattern: self,
            text,
            at: 0,
        }
    }

    /// Rows of the pattern covered by `block` (64 except possibly the last).
    fn block_rows(&self, block: usize) -> usize {
        if block + 1 == self.blocks {
            self.len - block * W
        } else {
            W
        }
    }

    fn last_row_mask(&self, block: usize) -> u64 {
        1 << (self.block_rows(block) - 1)
    }
}

/// Iterator over the mask-table rows of a text's chars. Walks bytes so that ASCII, the
/// bulk of most documents, skips UTF-8 decoding and symbol lookup.
struct Rows<'a> {
    pattern: &'a Pattern,
    text: &'a str,
    /// Always a char boundary: it only advances by whole chars.
    at: usize,
}

impl Iterator for Rows<'_> {
    type Item = usize;

    #[allow(
        clippy::inline_always,
        reason = "the search's innermost step, once per text char"
    )]
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let b = *self.text.as_bytes().get(self.at)?;
        if b < 0x80 {
            self.at += 1;
            Some(usize::from(b))
        } else {
            let c = self.text[self.at..].chars().next()?;
            self.at += c.len_utf8();
            Some(self.pattern.row(c))
        }
    }
}

/// Column state of one block: vertical positive/negative delta vectors.
#[derive(Clone, Copy)]
struct Block {
    pv: u64,
    mv: u64,
}

impl Block {
    const FRESH: Block = Block { pv: !0, mv: 0 };

    /// Advances the block by one text column, given the horizontal delta `h_in` (-1, 0, +1)
    /// entering at its top row; returns the delta leaving its last row (Hyyrö 2003).
    #[allow(
        clippy::inline_always,
        reason = "the search's innermost step, once per text char"
    )]
    #[inline(always)]
    fn advance(&mut self, eq: u64, h_in: i32, last_row: u64) -> i32 {
        let pv = self.pv;
        let mv = self.mv;
        let h_neg = u64::from(h_in < 0);
        let eq = eq | h_neg;
        let xv = eq | mv;
        let xh = ((eq & pv).wrapping_add(pv) ^ pv) | eq;
        let mut ph = mv | !(xh | pv);
        let mut mh = pv & xh;
        let h_out = i32::from(ph & last_row != 0) - i32::from(mh & last_row != 0);
        ph = (ph << 1) | u64::from(h_in > 0);
        mh = (mh << 1) | h_neg;
        self.pv = mh | !(xv | ph);
        self.mv = ph & xv;
        h_out
    }
}

/// Reports, for each text position whose best alignment of the whole pattern ending there
/// has at most `max_errors` edits, `(end, errors)` with `end` the exclusive char offset
/// relative to the start of `text`. Ends are reported in increasing order.
pub fn search(pattern: &Pattern, text: &str, max_errors: usize, report: impl FnMut(usize, usize)) {
    if pattern.len == 0 {
        return;
    }
    if pattern.blocks == 1 {
        search_single(pattern, text, max_errors, report);
    } else {
        search_blocks(pattern, text, max_errors, report);
    }
}

/// The one-word case: patterns of up to 64 chars, kept separate for its tight loop.
fn search_single(
    pattern: &Pattern,
    text: &str,
    max_errors: usize,
    mut report: impl FnMut(usize, usize),
) {
    let last_row = pattern.last_row_mask(0);
    let mut block = Block::FRESH;
    let mut score = pattern.len as i64;
    let k = max_errors as i64;
    let peq = &pattern.peq;
    for (i, row) in pattern.rows(text).enumerate() {
        // Added rather than matched on: the delta is data-dependent, so a branch on it
        // would mispredict constantly.
        score += i64::from(block.advance(peq[row], 0, last_row));
        if score <= k {
            report(i + 1, score as usize);
        }
    }
}

/// Hyyrö's block version with Ukkonen's cut-off, for patterns longer than 64 chars.
///
/// Only the score at the last row of the lowest active block `y` is kept; the one above
/// it, needed when `y` is dropped, follows from block `y`'s vertical deltas. This keeps
/// the per-block work to the bit operations themselves.
fn search_blocks(
    pattern: &Pattern,
    text: &str,
    max_errors: usize,
    mut report: impl FnMut(usize, usize),
) {
    const FULL: u64 = 1 << 63;
    let blocks = pattern.blocks;
    let last = blocks - 1;
    let last_mask = pattern.last_row_mask(last);
    let mask_of = |b: usize| if b == last { last_mask } else { FULL };
    let k = max_errors as i64;
    let mut state = vec![Block::FRESH; blocks];
    let mut y = max_errors.div_ceil(W).saturating_sub(1).min(last);
    // Edit distance at the last row of block y in the current column.
    let mut score = (y * W + pattern.block_rows(y)) as i64;
    for (i, row) in pattern.rows(text).enumerate() {
        let eq = &pattern.peq[row * blocks..(row + 1) * blocks];
        let mut carry = 0i32;
        // Zipped slices rather than indexing: no bounds checks in the hot loop.
        for (block, &e) in state[..y].iter_mut().zip(&eq[..y]) {
            carry = block.advance(e, carry, FULL);
        }
        carry = state[y].advance(eq[y], carry, mask_of(y));
        score += i64::from(carry);
        if y < last && score - i64::from(carry) <= k && (eq[y + 1] & 1 != 0 || carry < 0) {
            // The block below may now reach the limit: bring it in, assuming its previous
            // column was the maximal (all +1) one, which over-estimates only scores > k.
            y += 1;
            state[y] = Block::FRESH;
            let prev = score - i64::from(carry) + pattern.block_rows(y) as i64;
            score = prev + i64::from(state[y].advance(eq[y], carry, mask_of(y)));
        } else {
            while y > 0 && score >= k + W as i64 {
                let rows = pattern.block_rows(y);
                let in_block = if rows == W { !0 } else { (1u64 << rows) - 1 };
                let Block { pv, mv } = state[y];
                score -= i64::from((pv & in_block).count_ones())
                    - i64::from((mv & in_block).count_ones());
                y -= 1;
            }
        }
        if y == last && score <= k {
            report(i + 1, score as usize);
        }
    }
}

/// Edit distance between `pattern` and each prefix of `text`: returns the fewest edits and
/// every prefix length achieving it, in increasing order. Ties are common at a changed
/// boundary char (substitution inside the span vs. deletion shrinking it), and only the
/// caller can tell them apart. `text` is a char sequence because callers feed it reversed
/// to anchor an alignment at its end.
pub fn best_anchored_prefixes(
    pattern: &Pattern,
    text: impl Iterator<Item = char>,
) -> (usize, Vec<usize>) {
    let mut state = vec![Block::FRESH; pattern.blocks];
    let masks: Vec<u64> = (0..pattern.blocks)
        .map(|b| pattern.last_row_mask(b))
        .collect();
    let mut score = pattern.len as i64;
    let mut best = (pattern.len, vec![0]);
    for (j, c) in text.enumerate() {
        let eq = pattern.masks(c);
        // Row 0 is D[0][j] = j: each column adds one, which anchors the alignment start.
        let mut carry = 1i32;
        for b in 0..pattern.blocks {
            carry = state[b].advance(eq[b], carry, masks[b]);
        }
        score += i64::from(carry);
        let edits = score as usize;
        if edits < best.0 {
            best = (edits, vec![j + 1]);
        } else if edits == best.0 {
            best.1.push(j + 1);
        }
    }
    best
}

/// Similarity in [0, 1] of `expected` to the text next to a match, `actual`, where both are
/// aligned at their first char (the side touching the match) and `actual` may run on:
/// `1 - d / len(expected)` with `d` the fewest edits turning `expected` into a prefix of `actual`.
pub fn anchored_similarity(
    expected: impl Iterator<Item = char>,
    actual: impl Iterator<Item = char>,
) -> f64 {
    let expected: Vec<char> = expected.collect();
    if expected.is_empty() {
        return 1.0;
    }
    let pattern = Pattern::new(&expected);
    // An alignment reading more chars has over len/2 insertions, so stopping here can only
    // understate similarities that are below 0.5 anyway.
    let limit = expected.len() + expected.len() / 2 + 1;
    let (edits, _) = best_anchored_prefixes(&pattern, actual.take(limit));
    1.0 - edits as f64 / expected.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lev(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for i in 1..=a.len() {
            let mut cur = vec![i; b.len() + 1];
            for j in 1..=b.len() {
                let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
                cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
            }
            prev = cur;
        }
        prev[b.len()]
    }

    /// Reference semi-global search by plain dynamic programming: for each end, the fewest
    /// edits turning the pattern into some substring ending there.
    fn naive_best_per_end(pattern: &str, text: &str) -> Vec<usize> {
        let p: Vec<char> = pattern.chars().collect();
        let mut column: Vec<usize> = (0..=p.len()).collect();
        let mut out = Vec::new();
        for c in text.chars() {
            let mut diag = column[0];
            column[0] = 0;
            for i in 1..=p.len() {
                let up = column[i];
                column[i] = (diag + usize::from(p[i - 1] != c))
                    .min(up + 1)
                    .min(column[i - 1] + 1);
                diag = up;
            }
            out.push(column[p.len()]);
        }
        out
    }

    fn pseudo_random_text(seed: u64, len: usize, alphabet: &[char]) -> String {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect()
    }

    #[test]
    fn single_block_search_matches_naive() {
        let text = "the quick brown fox jumps over the lazy dog";
        let pattern: Vec<char> = "quikc brwn".chars().collect();
        let compiled = Pattern::new(&pattern);
        let expected = naive_best_per_end("quikc brwn", text);
        let mut got = vec![usize::MAX; expected.len()];
        search(&compiled, text, 4, |end, e| got[end - 1] = e);
        for (i, &e) in expected.iter().enumerate() {
            if e <= 4 {
                assert_eq!(got[i], e, "end {}", i + 1);
            } else {
                assert_eq!(got[i], usize::MAX, "end {}", i + 1);
            }
        }
    }

    #[test]
    fn multi_block_search_matches_naive() {
        // Ukkonen's cut-off only skips blocks that cannot be within the limit, so every
        // reported score must equal the full dynamic programme's, for any limit.
        let alphabet: Vec<char> = "abcé ".chars().collect();
        for seed in [7u64, 11, 12345] {
            let text = pseudo_random_text(seed, 700, &alphabet);
            let chars: Vec<char> = text.chars().collect();
            // A 150-char pattern (3 blocks) taken from the text and then edited.
            let mut pattern: Vec<char> = chars[300..450].to_vec();
            pattern[10] = 'x';
            pattern.remove(70);
            pattern.insert(130, 'y');
            let pattern_str: String = pattern.iter().collect();
            let compiled = Pattern::new(&pattern);
            let expected = naive_best_per_end(&pattern_str, &text);
            for k in [0usize, 3, 20, 40, 63, 64, 65, 100, 149] {
                let mut got = vec![usize::MAX; expected.len()];
                search(&compiled, &text, k, |end, e| got[end - 1] = e);
                for (i, &e) in expected.iter().enumerate() {
                    let want = if e <= k { e } else { usize::MAX };
                    assert_eq!(got[i], want, "seed {seed} k {k} end {}", i + 1);
                }
            }
        }
    }

    #[test]
    fn anchored_prefix_finds_alignment_start() {
        let pattern: Vec<char> = "olleh".chars().collect();
        let compiled = Pattern::new(&pattern);
        // Reversed "xxhelo": best prefix of "olehxx" is "oleh" with one edit.
        assert_eq!(
            best_anchored_prefixes(&compiled, "olehxx".chars()),
            (1, vec![4])
        );
        let long: Vec<char> = pseudo_random_text(3, 200, &['a', 'b', 'c'])
            .chars()
            .collect();
        let compiled = Pattern::new(&long);
        let text: String = long.iter().chain(['z', 'z', 'z'].iter()).collect();
        assert_eq!(
            best_anchored_prefixes(&compiled, text.chars()),
            (0, vec![200])
        );
        // A changed last char: substitution ("abx") and deletion ("ab") tie at one edit.
        let compiled = Pattern::new(&['a', 'b', 'c']);
        assert_eq!(
            best_anchored_prefixes(&compiled, "abxd".chars()),
            (1, vec![2, 3])
        );
    }

    #[test]
    fn anchored_prefix_matches_naive() {
        let alphabet: Vec<char> = "ab日 ".chars().collect();
        for seed in 1..40u64 {
            let pattern: Vec<char> =
                pseudo_random_text(seed, 5 + (seed as usize * 7) % 140, &alphabet)
                    .chars()
                    .collect();
            let text = pseudo_random_text(seed + 1000, 160, &alphabet);
            let chars: Vec<char> = text.chars().collect();
            let pattern_str: String = pattern.iter().collect();
            let want = (0..=chars.len())
                .map(|t| (t, lev(&pattern_str, &chars[..t].iter().collect::<String>())))
                .collect::<Vec<_>>();
            let fewest = want
                .iter()
                .map(|&(_, d)| d)
                .min()
                .expect("t = 0 is always a candidate");
            let want = (
                fewest,
                want.iter()
                    .filter(|&&(_, d)| d == fewest)
                    .map(|&(t, _)| t)
                    .collect(),
            );
            assert_eq!(
                best_anchored_prefixes(&Pattern::new(&pattern), text.chars()),
                want,
                "seed {seed}"
            );
        }
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "the expected ratios are exact in binary")]
    fn similarity_is_one_for_equal_and_drops_with_edits() {
        assert_eq!(anchored_similarity("abcd".chars(), "abcdzzz".chars()), 1.0);
        assert_eq!(anchored_similarity("abcd".chars(), "abxd".chars()), 0.75);
        assert_eq!(anchored_similarity("abcd".chars(), "".chars()), 0.0);
        assert_eq!(anchored_similarity("".chars(), "abc".chars()), 1.0);
    }
}
