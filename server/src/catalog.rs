//! The task cards, as the pages and the API see them: public facts only. A card's
//! expected values reach a page only when the card lists them in `public_expected`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;

use benchmark::builtin::TaskDir;
use benchmark::check::Expectation;
use benchmark::task::TaskCard;
use views::catalog::{Catalog, Expected, TaskInfo};

/// Every task's whole card, by id: what the server's integrity checks read (never shown).
pub type Cards = BTreeMap<String, TaskCard>;

/// Reads every card (the benchmark's and the examples'): their public facts, and the
/// cards themselves.
pub fn load(tasks: &TaskDir) -> anyhow::Result<(Catalog, Cards)> {
    let cards = tasks.cards().with_context(|| format!("reading {}", tasks.origin()))?;
    let infos = cards.values().map(|card| info(card, tasks.path())).collect();
    let paper = benchmark::published::data();
    let checks =
        benchmark::integrity::CHECKS.iter().map(|c| (c.slug.to_owned(), c.looks_for.to_owned())).collect();
    let parity = benchmark::parity::data();
    let parity_runs = benchmark::parity::SIDES
        .iter()
        .map(|side| (side.agent_id().to_owned(), parity.runs(*side)))
        .collect();
    // Spec §5a: the task sets and rules a bundle's claims are held to, as the cards give them.
    let claims = benchmark::taskset::claims(&cards).context("the task sets of the cards")?;
    Ok((Catalog { tasks: infos, paper, checks, parity_runs, claims }, cards))
}

fn info(card: &TaskCard, dir: &Path) -> TaskInfo {
    let readme_path = card.dir.join("README.md");
    let readme = std::fs::read_to_string(&readme_path)
        .unwrap_or_else(|_| format!("# {}\n\n{}\n", card.name, card.summary.clone().unwrap_or_default()));
    // The card loader has checked that every name it lists is one its check reports.
    let expectations = card.check.as_ref().map(|c| c.expectations()).unwrap_or_default();
    let public_expected = expectations
        .into_iter()
        .filter(|(name, _)| card.public_expected.contains(name))
        .map(|(metric, e)| Expected { metric, value: words(e) })
        .collect();
    TaskInfo {
        id: card.id.clone().into(),
        name: card.name.clone(),
        venue: card.venue.clone(),
        extension_type: card.extension_type.clone(),
        summary: card.summary.clone(),
        repository: card.repository.clone(),
        license: card.license.clone(),
        readme,
        public: !card.public_expected.is_empty(),
        check_private: card.check_is_private(),
        outputs: card.outputs,
        attempts: card.attempts,
        heldout: card.integrity.heldout.as_ref().map(|h| (h.how.clone(), h.cost.clone())),
        hint_passages: card.integrity.hint_passages.len(),
        hints_unpublished: card.integrity.hints_unpublished.clone(),
        public_expected,
        example: card.dir.parent().is_some_and(|p| p.ends_with("examples")) && card.dir.starts_with(dir),
    }
}

/// What a metric must be, as a task page says it.
fn words(e: Expectation) -> String {
    match e {
        Expectation::Equals(v) => format!("{v}"),
        Expectation::Within { expected, tolerance } => format!("{expected} ± {tolerance}"),
        Expectation::Range { min, max } => format!("between {min} and {max}"),
    }
}
