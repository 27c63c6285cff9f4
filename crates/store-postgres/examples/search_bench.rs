//! Times full-text search on PostgreSQL over a synthetic corpus of 1,000,000 comments (DESIGN.md
//! §6: p95 < 50 ms), through the `Store` API as the server calls it (one page of 50 plus one).
//!
//! ```sh
//! createdb -h 127.0.0.1 -U postgres docreview_bench
//! cargo run --release -p docreview-store-postgres --example search_bench -- \
//!     postgres://postgres@127.0.0.1:5432/docreview_bench
//! ```
//!
//! The first run loads the corpus (a few minutes; later runs reuse it): 10,000 documents (a fifth
//! restricted, a tenth in one of 50 projects), 1,000,000 comments of 5–40 words and 200,000
//! replies, written by 100 internal and 20 external members. Words are drawn from a vocabulary
//! of 20,000 made-up words with a Zipf-like law (the word of rank r about as often as 1/r), as in
//! natural text: a few words occur in most comments, most words in few. Queries are then timed
//! per frequency band of their word, for three callers: an org admin (sees everything), an
//! internal member (link-mode documents, their own and shared ones) and an external member (only
//! their projects' documents).

use std::time::{Duration, Instant};

use docreview_core::store::{CommentSearch, SearchQuery, SearchStore, SearchTerm, Visibility};
use docreview_store_postgres::{PgOptions, PgStore};

const VOCABULARY: usize = 20_000;
const DOCUMENTS: i64 = 10_000;
const COMMENTS: i64 = 1_000_000;
const REPLIES: i64 = 200_000;
const RUNS_PER_QUERY: usize = 10;

/// Word `rank` (1-based) of the made-up vocabulary: syllables spelling the rank in base 20, so
/// every word is distinct and some are prefixes of others, as in real text.
fn word(rank: usize) -> String {
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "re", "tu", "sa", "ne", "po", "di", "fa", "go", "hu", "ji", "be", "ro",
        "vi", "ze", "ta", "mo", "li",
    ];
    let mut n = rank;
    let mut out = String::new();
    loop {
        out.push_str(SYLLABLES[n % 20]);
        n /= 20;
        if n == 0 {
            break;
        }
    }
    if out.len() < 4 {
        out.push('x');
    }
    out
}

/// `count` random words (per row, through `random()`), Zipf-distributed, spelled as `word`
/// spells them (a constant 20-element array: subscripting a long text array would walk it).
fn words_sql(count: &str) -> String {
    let syllable = |divisor: u32| {
        format!(
            "(ARRAY['ka','lo','mi','re','tu','sa','ne','po','di','fa','go','hu','ji','be','ro','vi','ze','ta','mo','li'])\
             [(r.k / {divisor}) % 20 + 1]"
        )
    };
    format!(
        "(SELECT string_agg({first} \
            || CASE WHEN r.k >= 20 THEN {second} ELSE 'x' END \
            || CASE WHEN r.k >= 400 THEN {third} ELSE '' END \
            || CASE WHEN r.k >= 8000 THEN {fourth} ELSE '' END, ' ') \
          FROM (SELECT floor(exp(random() * ln({VOCABULARY})))::int AS k FROM generate_series(1, {count})) r)",
        first = syllable(1),
        second = syllable(20),
        third = syllable(400),
        fourth = syllable(8000),
    )
}

async fn load(store: &PgStore) -> Result<(), sqlx::Error> {
    let pool = store.pool();
    let loaded: i64 = sqlx::query_scalar("SELECT count(*) FROM comments")
        .fetch_one(pool)
        .await?;
    if loaded >= COMMENTS {
        println!("corpus present ({loaded} comments)");
        return Ok(());
    }
    let started = Instant::now();
    let steps: Vec<String> = vec![
        "INSERT INTO users (id, email, display_name, provider, membership, status, is_admin, created_at) \
         SELECT 'usr_i' || i, 'i' || i || '@example.com', 'Internal ' || i, 'local', 'internal', 'active', i = 0, 0 \
         FROM generate_series(0, 99) i \
         UNION ALL SELECT 'usr_e' || i, 'e' || i || '@example.com', 'External ' || i, 'local', 'external', 'active', FALSE, 0 \
         FROM generate_series(0, 19) i".into(),
        "INSERT INTO projects (code, name, company, status, in_snapshot) \
         SELECT 'PRJ-' || i, 'Project ' || i, 'ACME', 'active', TRUE FROM generate_series(0, 49) i".into(),
        // Each external member in three projects; every fifth internal member in one.
        "INSERT INTO project_roles (project_code, user_id, role) \
         SELECT 'PRJ-' || ((i * 3 + k) % 50), 'usr_e' || i, 'viewer' FROM generate_series(0, 19) i, generate_series(0, 2) k \
         UNION ALL SELECT 'PRJ-' || (i % 50), 'usr_i' || i, 'editor' FROM generate_series(5, 99, 5) i".into(),
        format!(
            "INSERT INTO reviews (id, title, owner_id, access_mode, tags, archived, comments_revision, structure_revision, \
               change_seq, created_at, updated_at, latest_version_id, structure, project_code) \
             SELECT 'rv_' || i, initcap({title}), 'usr_i' || (i % 100), CASE WHEN i % 5 = 0 THEN 'restricted' ELSE 'link' END, \
               '[]', FALSE, 100, 1, 1, 1700000000000 + i, 1700000000000 + i, 'ver_' || i, NULL, \
               CASE WHEN i % 10 = 3 THEN 'PRJ-' || ((i / 10) % 50) END \
             FROM generate_series(0, {last}) i",
            title = words_sql("3 + i % 5"),
            last = DOCUMENTS - 1
        ),
        format!(
            "INSERT INTO versions (id, review_id, seq, label, created_at, source_hash, sections, html) \
             SELECT 'ver_' || i, 'rv_' || i, 1, 'v1', 1700000000000 + i, 'sha256:' || i, '[]', '' \
             FROM generate_series(0, {last}) i",
            last = DOCUMENTS - 1
        ),
        format!(
            "INSERT INTO review_search (review_id, title, body, version_id) \
             SELECT r.id, r.title, {body}, r.latest_version_id FROM reviews r",
            body = words_sql("300 + length(r.id)")
        ),
        "INSERT INTO review_access (review_id, email, role) \
         SELECT 'rv_' || i, 'i' || ((i * 7) % 100) || '@example.com', 'viewer' FROM generate_series(0, 9999, 5) i".into(),
        format!(
            "INSERT INTO comments (id, review_id, author_id, category, status, body, version_id, anchor, run_id, created_at) \
             SELECT 'cm_' || lpad(i::text, 9, '0'), 'rv_' || (i % {DOCUMENTS}), 'usr_i' || (i % 97), \
               (ARRAY['note','revise','add','delete','consult'])[1 + i % 5], CASE WHEN i % 10 < 7 THEN 'open' ELSE 'closed' END, \
               {body}, 'ver_' || (i % {DOCUMENTS}), \
               '{{\"versionId\":\"ver_x\",\"sectionId\":\"intro\",\"quote\":{{\"exact\":\"a quoted passage of text\",\"prefix\":\"before it \",\"suffix\":\" after it\"}},\"position\":{{\"start\":120,\"end\":144}},\"state\":\"exact\"}}', \
               NULL, 1700000000000 + i * 1000 \
             FROM generate_series(1, {COMMENTS}) i",
            body = words_sql("5 + (i::bigint * 7919) % 36")
        ),
        format!(
            "INSERT INTO messages (id, comment_id, review_id, author_id, body, run_id, created_at) \
             SELECT 'msg_' || lpad(i::text, 9, '0'), 'cm_' || lpad((i * 5 + i % 5)::text, 9, '0'), \
               'rv_' || ((i * 5 + i % 5) % {DOCUMENTS}), \
               'usr_i' || (i % 89), {body}, NULL, 1700000000000 + i * 5000 + 1 \
             FROM generate_series(1, {REPLIES}) i",
            body = words_sql("3 + (i * 131) % 20")
        ),
        "UPDATE comments SET deleted_at = created_at + 1 WHERE id LIKE '%37'".into(),
    ];
    for (index, sql) in steps.iter().enumerate() {
        let step = Instant::now();
        sqlx::query(sql).execute(pool).await?;
        println!("load step {index}: {:.1} s", step.elapsed().as_secs_f64());
    }
    sqlx::query("VACUUM ANALYZE").execute(pool).await?;
    println!("loaded in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a rounded index into the non-empty slice"
)]
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: search_bench postgres://…/database")?;
    // Loading takes minutes: no statement timeout.
    let options = PgOptions {
        statement_timeout: Duration::ZERO,
        ..PgOptions::default()
    };
    let store = PgStore::connect(&url, options).await?;
    load(&store).await?;

    let callers = [
        (
            "admin",
            Visibility::All {
                user_id: "usr_i0".into(),
            },
        ),
        (
            "internal",
            Visibility::Member {
                user_id: "usr_i7".into(),
                email: "i7@example.com".into(),
                internal: true,
            },
        ),
        (
            "external",
            Visibility::Member {
                user_id: "usr_e3".into(),
                email: "e3@example.com".into(),
                internal: false,
            },
        ),
    ];
    // Word ranks by band: the most frequent words occur in most comments, rank 10,000 in a few
    // dozen. Bands of three words each, plus two-word and phrase queries.
    let bands: Vec<(&str, Vec<SearchQuery>)> = [
        ("rank 1-3", vec![1, 2, 3]),
        ("rank 10-30", vec![10, 20, 30]),
        ("rank 100-300", vec![100, 200, 300]),
        ("rank 1000-3000", vec![1000, 2000, 3000]),
        ("rank 10000+", vec![10_000, 15_000, 19_000]),
    ]
    .into_iter()
    .map(|(name, ranks)| {
        let queries = ranks
            .into_iter()
            .map(|rank| SearchQuery {
                terms: vec![SearchTerm::Prefix(word(rank))],
            })
            .collect();
        (name, queries)
    })
    .chain([
        (
            "two words (50, 500)",
            vec![SearchQuery {
                terms: vec![SearchTerm::Prefix(word(50)), SearchTerm::Prefix(word(500))],
            }],
        ),
        (
            "phrase (120, 350)",
            vec![SearchQuery {
                terms: vec![SearchTerm::Phrase(vec![word(120), word(350)])],
            }],
        ),
        // Adversarial: a rare phrase of two very common words. PostgreSQL estimates a phrase as
        // if its words merely co-occurred, so it walks the newest comments far too long.
        (
            "phrase (5, 40)",
            vec![SearchQuery {
                terms: vec![SearchTerm::Phrase(vec![word(5), word(40)])],
            }],
        ),
    ])
    .collect();

    println!(
        "\n{:<22} {:<9} {:>9} {:>9} {:>9} {:>7}",
        "query", "caller", "p50 ms", "p95 ms", "max ms", "hits"
    );
    let mut everything = Vec::new();
    for (band, queries) in &bands {
        for (caller, visibility) in &callers {
            let mut times = Vec::new();
            let mut hits = 0;
            for query in queries {
                // One untimed run: the first plan and cold pages are not what p95 is about.
                let search = |offset| CommentSearch {
                    visibility: visibility.clone(),
                    query: query.clone(),
                    status: None,
                    category: None,
                    review_id: None,
                    assignee_id: None,
                    offset,
                    limit: 51,
                };
                store.search_comments(search(0)).await?;
                for _ in 0..RUNS_PER_QUERY {
                    let started = Instant::now();
                    hits = store.search_comments(search(0)).await?.len();
                    times.push(started.elapsed());
                }
            }
            times.sort();
            everything.extend(times.iter().copied());
            println!(
                "{band:<22} {caller:<9} {:>9.1} {:>9.1} {:>9.1} {hits:>7}",
                ms(percentile(&times, 0.5)),
                ms(percentile(&times, 0.95)),
                ms(percentile(&times, 1.0)),
            );
        }
    }
    everything.sort();
    println!(
        "\nall queries: p50 {:.1} ms, p95 {:.1} ms",
        ms(percentile(&everything, 0.5)),
        ms(percentile(&everything, 0.95))
    );
    Ok(())
}
