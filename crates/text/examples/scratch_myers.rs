#![allow(dead_code)]
#[path = "../src/approx.rs"]
mod approx;
use std::time::Instant;
fn main() {
    let mut x = 88172645463325252u64;
    let words: Vec<&str> = "the of and to in is that for review document section editor comment quote change version draft policy budget".split(' ').collect();
    let mut text = String::new();
    while text.len() < 850_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push_str(words[(x % words.len() as u64) as usize]);
        text.push(' ');
    }
    let t = Instant::now();
    let mut acc = 0u64;
    for c in text.chars() {
        acc = acc.wrapping_mul(31).wrapping_add(c as u64);
    }
    println!("chars loop {:.2?} {acc}", t.elapsed());
    let t = Instant::now();
    let mut acc = 0u64;
    for &b in text.as_bytes() {
        acc = acc.wrapping_mul(31).wrapping_add(b as u64);
    }
    println!("bytes loop {:.2?} {acc}", t.elapsed());
    for n in [30usize, 64, 128, 200, 1000] {
        let pat: Vec<char> = "zebra quantum fjord kiwi yodel xylophone banjo walrus vortex umbrella tundra sphinx rhythm quiche plover ".repeat(20).chars().take(n).collect();
        let p = approx::Pattern::new(&pat);
        let mut hits = 0usize;
        let e = (0..7)
            .map(|_| {
                let t = Instant::now();
                approx::search(&p, &text, n / 4, |_, _| hits += 1);
                t.elapsed()
            })
            .min()
            .unwrap();
        println!(
            "n={n} {:.2?} {:.2} ns/char hits={hits}",
            e,
            e.as_nanos() as f64 / text.len() as f64
        );
    }
}
