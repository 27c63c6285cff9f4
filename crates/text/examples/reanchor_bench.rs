//! Benchmark: re-anchor 1,000 quotes from a ~1 MB document onto an edited version.
//!
//! Run with `cargo run --release -p docreview-text --example reanchor_bench`.
//! The edited version keeps most passages (shifted by edits elsewhere), moves some far
//! away, lightly edits some and deletes some, so that about 10% of the quotes need the
//! approximate search. Each result is checked against where the passage really went.
//! With `BENCH_BREAKDOWN=1` it also times each kind of passage separately, and a search
//! for absent quotes of several lengths (the whole-text worst case).

use std::time::Instant;

use docreview_text::{IndexedText, MatchKind, QUOTE_CONTEXT, TextMatch, quote_at, reanchor};

const PASSAGES: usize = 1000;

/// Vocabulary of the synthetic prose: small, so that chance look-alikes of passages
/// exist, as they do in real documents.
const WORDS: &str = "the of and to in is that for it as with was on be by this are or from at which \
an but not have has were their can all been more one also other new some when \
its into only such may these than between during after first most over through \
where under before each review document section editor comment quote change \
version draft policy budget figure table summary proposal meeting team project \
release service request response customer report quarter revenue growth market \
product design system process result analysis question answer decision approach \
problem solution support feature security privacy performance latency storage \
network cluster deployment migration schedule deadline priority owner \
stakeholder risk impact estimate metric target baseline";

/// xorshift64*: deterministic, dependency-free randomness for reproducible runs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "the remainder is below n, a usize"
    )]
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

/// Prose of roughly `chars` chars, with sentence punctuation and paragraph breaks.
fn prose(rng: &mut Rng, chars: usize) -> String {
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut out = String::new();
    while out.len() < chars {
        let word = words[rng.below(words.len())];
        out.push_str(word);
        match rng.below(20) {
            0 => out.push_str(". "),
            1 => out.push_str(", "),
            2 => out.push_str(".\n\n"),
            _ => out.push(' '),
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Unchanged,
    Moved,
    Edited,
    Deleted,
}

/// One to three character edits (substitution, insertion, deletion) inside the passage.
fn lightly_edit(rng: &mut Rng, passage: &str) -> String {
    let mut chars: Vec<char> = passage.chars().collect();
    for _ in 0..rng.range(1, 3) {
        let at = rng.below(chars.len());
        match rng.below(3) {
            0 => chars[at] = 'X',
            1 => chars.insert(at, 'Y'),
            _ => {
                chars.remove(at);
            }
        }
    }
    chars.into_iter().collect()
}

fn main() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);

    // Old version: filler, passage, filler, passage, ...
    let mut fillers: Vec<String> = Vec::with_capacity(PASSAGES + 1);
    let mut passages: Vec<String> = Vec::with_capacity(PASSAGES);
    for _ in 0..PASSAGES {
        let len = rng.range(800, 1150);
        fillers.push(prose(&mut rng, len));
        let len = rng.range(20, 200);
        passages.push(prose(&mut rng, len).trim_end().to_owned());
    }
    fillers.push(prose(&mut rng, 500));
    let mut old_text = String::new();
    let mut old_starts = Vec::with_capacity(PASSAGES);
    let mut old_chars = 0;
    for (filler, passage) in fillers.iter().zip(&passages) {
        old_text.push_str(filler);
        old_chars += filler.chars().count();
        old_starts.push(old_chars);
        old_text.push_str(passage);
        old_chars += passage.chars().count();
    }
    old_text.push_str(&fillers[PASSAGES]);
    let old = IndexedText::new(old_text);
    let quotes: Vec<_> = (0..PASSAGES)
        .map(|i| {
            let start = old_starts[i];
            quote_at(
                &old,
                start,
                start + passages[i].chars().count(),
                QUOTE_CONTEXT,
            )
        })
        .collect();

    // Edit plan: 75% unchanged, 15% moved, 6% lightly edited, 4% deleted.
    let ops: Vec<Op> = (0..PASSAGES)
        .map(|_| match rng.below(100) {
            0..75 => Op::Unchanged,
            75..90 => Op::Moved,
            90..96 => Op::Edited,
            _ => Op::Deleted,
        })
        .collect();
    let edited: Vec<String> = passages
        .iter()
        .zip(&ops)
        .map(|(p, op)| match op {
            Op::Edited => lightly_edit(&mut rng, p),
            _ => p.clone(),
        })
        .collect();
    // A moved passage lands in the middle of the filler half the document away.
    let mut arrivals: Vec<Vec<usize>> = vec![Vec::new(); PASSAGES + 1];
    for (i, op) in ops.iter().enumerate() {
        if *op == Op::Moved {
            arrivals[(i + PASSAGES / 2) % PASSAGES].push(i);
        }
    }

    // New version, recording where each surviving passage really is.
    let mut new_text = String::new();
    let mut new_chars = 0;
    let mut expected: Vec<Option<(usize, usize)>> = vec![None; PASSAGES];
    let push = |text: &mut String, chars: &mut usize, s: &str| {
        text.push_str(s);
        *chars += s.chars().count();
    };
    for i in 0..=PASSAGES {
        let mut filler = fillers[i].clone();
        // A fifth of the fillers are rewritten in their middle, shifting everything after.
        if rng.below(5) == 0 && filler.len() > 200 {
            let len = rng.range(0, 800);
            let insert = prose(&mut rng, len);
            filler.replace_range(100..filler.len() - 100, &insert);
        }
        let cut = filler.len() / 2;
        push(&mut new_text, &mut new_chars, &filler[..cut]);
        for &m in &arrivals[i] {
            push(&mut new_text, &mut new_chars, " ");
            let start = new_chars;
            push(&mut new_text, &mut new_chars, &edited[m]);
            expected[m] = Some((start, new_chars));
            push(&mut new_text, &mut new_chars, " ");
        }
        push(&mut new_text, &mut new_chars, &filler[cut..]);
        if i < PASSAGES && ops[i] != Op::Deleted && ops[i] != Op::Moved {
            let start = new_chars;
            push(&mut new_text, &mut new_chars, &edited[i]);
            expected[i] = Some((start, new_chars));
        }
    }
    let build = Instant::now();
    let new = IndexedText::new(new_text);
    let build = build.elapsed();

    let started = Instant::now();
    let results: Vec<Option<TextMatch>> = quotes
        .iter()
        .zip(&old_starts)
        .map(|(quote, &hint)| reanchor(&new, quote, Some(hint)))
        .collect();
    let elapsed = started.elapsed();
    if std::env::var_os("BENCH_BREAKDOWN").is_some() {
        for op in [Op::Unchanged, Op::Moved, Op::Edited, Op::Deleted] {
            let t = Instant::now();
            for i in (0..PASSAGES).filter(|&i| ops[i] == op) {
                let _ = reanchor(&new, &quotes[i], Some(old_starts[i]));
            }
            println!("{op:?}: {:.1?}", t.elapsed());
        }
        for n in [30, 64, 65, 128, 200, 1000, 3000] {
            let absent = docreview_text::TextQuote {
                exact: prose(&mut rng, n).chars().take(n).collect(),
                prefix: String::new(),
                suffix: String::new(),
            };
            let t = Instant::now();
            let got = reanchor(&new, &absent, None);
            println!("absent {n}-char quote: {:.2?} ({got:?})", t.elapsed());
        }
    }

    let (mut exact, mut fuzzy, mut orphaned, mut correct) = (0, 0, 0, 0);
    let mut wrong = Vec::new();
    for (i, result) in results.iter().enumerate() {
        match result.map(|m| m.kind) {
            Some(MatchKind::Exact) => exact += 1,
            Some(MatchKind::Fuzzy) => fuzzy += 1,
            None => orphaned += 1,
        }
        let ok = match (result, expected[i]) {
            (None, None) => true,
            (Some(m), Some((start, end))) => m.start == start && m.end == end,
            _ => false,
        };
        if ok {
            correct += 1;
        } else {
            wrong.push((i, ops[i], *result, expected[i]));
        }
    }
    let count = |op| ops.iter().filter(|&&o| o == op).count();
    println!(
        "old text {} chars, new text {} chars ({} bytes); IndexedText built in {:.2?}",
        old.char_len(),
        new.char_len(),
        new.as_str().len(),
        build
    );
    println!(
        "plan: {} unchanged, {} moved, {} lightly edited, {} deleted",
        count(Op::Unchanged),
        count(Op::Moved),
        count(Op::Edited),
        count(Op::Deleted)
    );
    println!(
        "reanchored {PASSAGES} quotes in {elapsed:.1?}: {exact} exact, {fuzzy} fuzzy, {orphaned} orphaned; {correct} at the expected range"
    );
    for (i, op, got, want) in wrong.iter().take(10) {
        println!("  mismatch #{i} ({op:?}): got {got:?}, expected {want:?}");
    }
}
