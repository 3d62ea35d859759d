//! The task cards, as the pages and the API see them: public facts only. A card's
//! expected values reach a page only when the card lists them in `public_expected`.

use std::path::Path;

use app::catalog::{Catalog, Expected, TaskInfo};
use runner::check::MetricSpec;
use runner::task::TaskCard;

/// Reads every card under `dir` (and `dir/examples`).
pub fn load(dir: &Path) -> Result<Catalog, String> {
    let cards = runner::task::load_all(dir).map_err(|e| format!("reading the task cards: {e}"))?;
    let tasks = cards.into_values().map(|card| info(&card, dir)).collect::<Result<_, _>>()?;
    Ok(Catalog { tasks })
}

fn info(card: &TaskCard, dir: &Path) -> Result<TaskInfo, String> {
    let readme_path = card.dir.join("README.md");
    let readme = std::fs::read_to_string(&readme_path)
        .unwrap_or_else(|_| format!("# {}\n\n{}\n", card.name, card.summary.clone().unwrap_or_default()));
    let metrics = card.check.as_ref().map(|c| c.metrics.as_slice()).unwrap_or_default();
    let public_expected = card
        .public_expected
        .iter()
        .map(|name| {
            metrics
                .iter()
                .find(|m| &m.name == name)
                .map(|m| Expected { metric: name.clone(), value: expectation(m) })
                .ok_or_else(|| {
                    format!("task {}: public_expected names `{name}`, which its check lacks", card.id)
                })
        })
        .collect::<Result<_, _>>()?;
    Ok(TaskInfo {
        id: card.id.clone(),
        name: card.name.clone(),
        venue: card.venue.clone(),
        extension_type: card.extension_type.clone(),
        summary: card.summary.clone(),
        repository: card.repository.clone(),
        license: card.license.clone(),
        readme,
        public_expected,
        example: card.dir.parent().is_some_and(|p| p.ends_with("examples")) && card.dir.starts_with(dir),
    })
}

/// What a metric must be, in words.
fn expectation(m: &MetricSpec) -> String {
    match (m.equals, m.expected, m.tolerance, m.min, m.max) {
        (Some(v), ..) => format!("{v}"),
        (None, Some(v), Some(t), ..) => format!("{v} ± {t}"),
        (None, Some(v), None, ..) => format!("{v}"),
        (None, None, _, Some(lo), Some(hi)) => format!("between {lo} and {hi}"),
        (None, None, _, Some(lo), None) => format!("at least {lo}"),
        (None, None, _, None, Some(hi)) => format!("at most {hi}"),
        _ => "as the checker decides".to_owned(),
    }
}
