//! Full-text search latency over a large SQLite database (DESIGN.md §6: 1,000,000 comments,
//! p95 < 50 ms).
//!
//! ```sh
//! cargo run --release -p docreview-store-sqlite --example search_bench -- /tmp/search.db [comments]
//! ```
//!
//! The first run seeds the file (documents of 100 comments, 10% with a reply, bodies of 8–40
//! words drawn from a 30,000-word vocabulary with Zipf frequencies, as natural text has); later
//! runs reuse it. Rows go in through the real schema, so the search triggers index them as any
//! write would. Then it times `search_comments` and `search_reviews` for queries in several word
//! frequency bands, as an org admin (every document) and as a member (link-mode documents, their
//! own and those shared with them), 50 results a page.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use docreview_core::model::Millis;
use docreview_core::store::{
    CommentSearch, ReviewSearch, SearchQuery, SearchStore, SearchTerm, Visibility,
};
use docreview_store_sqlite::SqliteStore;
use rusqlite::{Connection, params};

const VOCABULARY: usize = 30_000;
const COMMENTS_PER_DOCUMENT: usize = 100;
const T0: Millis = 1_700_000_000_000;

/// xorshift64*: reproducible without a dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Pronounceable distinct words; rank 0 is the most frequent.
fn vocabulary() -> Vec<String> {
    const SYLLABLES: [&str; 32] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "pi", "da", "fe", "go", "hu", "ji", "ko",
        "la", "mo", "nu", "pe", "ri", "so", "tu", "ve", "wa", "xi", "yo", "ze", "ba", "ce", "di",
        "fo", "gu",
    ];
    (0..VOCABULARY)
        .map(|mut n| {
            let mut word = String::new();
            loop {
                word.push_str(SYLLABLES[n % 32]);
                n /= 32;
                if n == 0 {
                    break;
                }
            }
            word.push('n');
            word
        })
        .collect()
}

/// Cumulative Zipf (s = 1) weights over the vocabulary's ranks.
fn zipf() -> Vec<f64> {
    let mut total = 0.0;
    let mut cumulative = Vec::with_capacity(VOCABULARY);
    for rank in 0..VOCABULARY {
        total += 1.0 / (rank as f64 + 1.0);
        cumulative.push(total);
    }
    cumulative.iter().map(|c| c / total).collect()
}

fn body(random: &mut Random, words: &[String], cumulative: &[f64]) -> String {
    let n = 8 + random.below(33);
    (0..n)
        .map(|_| {
            let u = random.unit();
            let rank = cumulative.partition_point(|c| *c < u).min(VOCABULARY - 1);
            words[rank].as_str()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn seed(path: &PathBuf, comments: usize) -> rusqlite::Result<()> {
    let words = vocabulary();
    let cumulative = zipf();
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let tx = conn.transaction()?;
    for i in 0..50 {
        tx.execute(
            "INSERT INTO users (id, email, display_name, provider, membership, status, is_admin, created_at) \
             VALUES (?1, ?2, ?1, 'local', 'internal', 'active', 0, 0)",
            params![format!("usr_{i}"), format!("user{i}@example.com")],
        )?;
    }
    let documents = comments.div_ceil(COMMENTS_PER_DOCUMENT);
    let started = Instant::now();
    for d in 0..documents {
        let id = format!("rv_{d:07}");
        let at = T0 + i64::try_from(d).unwrap_or(0) * 1000;
        // One in five restricted; every document owned by one of 50 users.
        let mode = if d % 5 == 0 { "restricted" } else { "link" };
        let version = format!("{id}_v1");
        tx.execute(
            "INSERT INTO reviews (id, title, owner_id, access_mode, tags, archived, comments_revision, \
             structure_revision, change_seq, created_at, updated_at, latest_version_id) \
             VALUES (?1, ?2, ?3, ?4, '[]', 0, 1, 1, 1, ?5, ?5, ?6)",
            params![
                id,
                body(&mut random, &words, &cumulative)
                    .split(' ')
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" "),
                format!("usr_{}", d % 50),
                mode,
                at,
                version
            ],
        )?;
        tx.execute(
            "INSERT INTO versions (id, review_id, seq, label, created_at, source_hash, sections, html) \
             VALUES (?1, ?2, 1, 'v1', ?3, 'sha256:x', '[]', X'')",
            params![version, id, at],
        )?;
        let text: Vec<String> = (0..40)
            .map(|_| body(&mut random, &words, &cumulative))
            .collect();
        tx.execute(
            "INSERT INTO review_texts (review_id, body) VALUES (?1, ?2)",
            params![id, text.join(". ")],
        )?;
        if d % 5 == 0 {
            tx.execute(
                "INSERT INTO review_access (review_id, email, role) VALUES (?1, ?2, 'viewer')",
                params![id, format!("user{}@example.com", (d / 5) % 50)],
            )?;
        }
        for c in 0..COMMENTS_PER_DOCUMENT {
            let comment = format!("cm_{d:07}_{c:03}");
            let created = at + i64::try_from(c).unwrap_or(0);
            tx.execute(
                "INSERT INTO comments (id, review_id, author_id, category, status, body, version_id, anchor, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, '{}', ?8)",
                params![
                    comment,
                    id,
                    format!("usr_{}", random.below(50)),
                    ["note", "revise", "consult"][random.below(3)],
                    if random.below(3) == 0 { "closed" } else { "open" },
                    body(&mut random, &words, &cumulative),
                    version,
                    created
                ],
            )?;
            if random.below(10) == 0 {
                tx.execute(
                    "INSERT INTO messages (id, comment_id, review_id, author_id, body, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        format!("msg_{d:07}_{c:03}"),
                        comment,
                        id,
                        format!("usr_{}", random.below(50)),
                        body(&mut random, &words, &cumulative),
                        created + 1
                    ],
                )?;
            }
        }
        if d % 1000 == 999 {
            eprintln!(
                "seeded {} comments in {:.0?}",
                (d + 1) * COMMENTS_PER_DOCUMENT,
                started.elapsed()
            );
        }
    }
    tx.commit()?;
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    Ok(())
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a rounded index into the non-empty slice"
)]
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn report(label: &str, mut times: Vec<Duration>, hits: usize) {
    times.sort();
    println!(
        "{label:<48} p50 {:>7.2?}  p95 {:>7.2?}  p99 {:>7.2?}  max {:>7.2?}  ({} queries, {hits} hits)",
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        percentile(&times, 0.99),
        times.last().copied().unwrap_or_default(),
        times.len(),
    );
}

fn prefix(words: &[&str]) -> SearchQuery {
    SearchQuery {
        terms: words
            .iter()
            .map(|w| SearchTerm::Prefix(w.to_string()))
            .collect(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().unwrap_or_else(|| "/tmp/search.db".to_string()));
    if std::env::var_os("SQL_TIMING").is_some() {
        // Exploration: time each statement read from stdin (one per line) five times.
        let conn = Connection::open(&path)?;
        for line in std::io::stdin().lines() {
            let sql = line?;
            if sql.trim().is_empty() {
                continue;
            }
            if sql.starts_with("EXPLAIN QUERY PLAN") {
                let mut statement = conn.prepare(&sql)?;
                let plan: Vec<String> = statement
                    .query_map([], |row| row.get::<_, String>(3))?
                    .collect::<Result<_, _>>()?;
                println!("{}", plan.join("\n"));
                continue;
            }
            let mut times = Vec::new();
            let mut rows = 0;
            for _ in 0..5 {
                let started = Instant::now();
                let mut statement = conn.prepare(&sql)?;
                let mut cursor = statement.raw_query();
                rows = 0;
                while cursor.next()?.is_some() {
                    rows += 1;
                }
                times.push(started.elapsed());
            }
            times.sort();
            println!(
                "{:>9.2?} (min {:>9.2?}) {rows:>6} rows  {sql}",
                times[2], times[0]
            );
        }
        return Ok(());
    }
    let comments: usize = args.next().map_or(Ok(1_000_000), |n| n.parse())?;
    let fresh = !path.exists();
    let store = SqliteStore::open(&path)?;
    if fresh {
        drop(store);
        seed(&path, comments)?;
    }
    let store = SqliteStore::open(&path)?;
    let words = vocabulary();
    let admin = Visibility::All {
        user_id: "usr_0".to_string(),
    };
    let member = Visibility::Member {
        user_id: "usr_7".to_string(),
        email: "user7@example.com".to_string(),
        internal: true,
    };
    let external = Visibility::Member {
        user_id: "usr_8".to_string(),
        email: "user8@example.com".to_string(),
        internal: false,
    };
    // Warm the page cache as a long-running server would have it.
    for word in &words[..50] {
        let _ = store
            .search_comments(comment_search(admin.clone(), prefix(&[word])))
            .await?;
    }
    let bands: [(&str, std::ops::Range<usize>); 5] = [
        ("ranks 1-10 (in ~15-40% of comments)", 0..10),
        ("ranks 10-100", 10..100),
        ("ranks 100-1000", 100..1000),
        ("ranks 1000-30000 (rare)", 1000..VOCABULARY),
        ("mixed: Zipf-sampled like the text", 0..0),
    ];
    let cumulative = zipf();
    let mut random = Random(42);
    for (who, visibility) in [
        ("admin", &admin),
        ("member", &member),
        ("external", &external),
    ] {
        for (label, band) in &bands {
            let mut times = Vec::new();
            let mut hits = 0;
            for _ in 0..60 {
                let word = if band.is_empty() {
                    let u = random.unit();
                    &words[cumulative.partition_point(|c| *c < u).min(VOCABULARY - 1)]
                } else {
                    &words[band.start + random.below(band.len())]
                };
                let started = Instant::now();
                hits += store
                    .search_comments(comment_search(visibility.clone(), prefix(&[word])))
                    .await?
                    .len();
                times.push(started.elapsed());
            }
            report(&format!("comments, {who}, {label}"), times, hits);
        }
        let mut times = Vec::new();
        let mut hits = 0;
        for _ in 0..60 {
            let a = &words[random.below(100)];
            let b = &words[100 + random.below(900)];
            let started = Instant::now();
            hits += store
                .search_comments(comment_search(visibility.clone(), prefix(&[a, b])))
                .await?
                .len();
            times.push(started.elapsed());
        }
        report(
            &format!("comments, {who}, two words (top 100 + 100-1000)"),
            times,
            hits,
        );
        let mut times = Vec::new();
        let mut hits = 0;
        for _ in 0..60 {
            let word = &words[random.below(1000)];
            let started = Instant::now();
            hits += store
                .search_reviews(ReviewSearch {
                    visibility: visibility.clone(),
                    query: prefix(&[word]),
                    offset: 0,
                    limit: 51,
                })
                .await?
                .len();
            times.push(started.elapsed());
        }
        report(&format!("documents, {who}, ranks 1-1000"), times, hits);
    }
    Ok(())
}

fn comment_search(visibility: Visibility, query: SearchQuery) -> CommentSearch {
    CommentSearch {
        visibility,
        query,
        status: None,
        category: None,
        review_id: None,
        assignee_id: None,
        offset: 0,
        limit: 51,
    }
}
