//! What a run cost, checked: its tokens (the bundle format's section 4m) priced with the
//! repository's dated price table (`benchmark/prices.toml`), against the cost the run
//! states. The runner and the Harbor importer read an agent's tokens from what it
//! recorded ([`atif_tokens`] for an ATIF trajectory); the server prices them and marks a
//! run whose stated cost its tokens do not bear out ([`check`]).

use std::sync::LazyLock;

pub use bundle::CostMark;
use bundle::Tokens;
use serde::Deserialize;
use time::{Date, Month};

/// How far a stated cost may be from its tokens' price and still agree: a tenth of the
/// price (providers round, and bill long prompts or batches at other rates), or a tenth
/// of a cent, whichever is more.
pub const TOLERANCE: f64 = 0.10;
pub const TOLERANCE_USD: f64 = 0.001;

/// One row of the price table: dollars per million tokens of each kind, from a date on.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub model: String,
    pub ids: Vec<String>,
    #[serde(deserialize_with = "date")]
    pub from: Date,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub source: String,
}

impl Price {
    /// What `tokens` cost at this price, in dollars.
    pub fn cost(&self, tokens: &Tokens) -> f64 {
        let per = |n: u64, dollars: f64| n as f64 * dollars / 1_000_000.0;
        per(tokens.input, self.input)
            + per(tokens.output, self.output)
            + per(tokens.cache_read, self.cache_read)
            + per(tokens.cache_write, self.cache_write)
    }

    /// Whether a manifest's model name (its `model` or `model_id`) is this row's model.
    pub fn names(&self, name: &str) -> bool {
        let name = name.trim();
        self.model.eq_ignore_ascii_case(name) || self.ids.iter().any(|id| id.eq_ignore_ascii_case(name))
    }
}

/// The price table.
#[derive(Debug, Clone, PartialEq)]
pub struct Prices {
    rows: Vec<Price>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    price: Vec<Price>,
}

impl Prices {
    /// The repository's table, compiled in.
    pub fn builtin() -> &'static Prices {
        static PRICES: LazyLock<Prices> = LazyLock::new(|| {
            Prices::parse(include_str!("../prices.toml"))
                .expect("benchmark/prices.toml reads (its tests say so)")
        });
        &PRICES
    }

    /// Reads a table, refusing a row without a source, a price that is not a finite
    /// number ≥ 0, and two rows of one model from one date.
    pub fn parse(text: &str) -> Result<Prices, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        for (i, p) in file.price.iter().enumerate() {
            let at = format!("price row {} ({})", i + 1, p.model);
            if p.source.trim().is_empty() {
                return Err(format!("{at}: no source"));
            }
            if p.ids.iter().any(|id| id.trim().is_empty()) || p.model.trim().is_empty() {
                return Err(format!("{at}: an empty name"));
            }
            for (kind, v) in [
                ("input", p.input),
                ("output", p.output),
                ("cache_read", p.cache_read),
                ("cache_write", p.cache_write),
            ] {
                if !v.is_finite() || v < 0.0 {
                    return Err(format!("{at}: {kind} {v} is not a price"));
                }
            }
            if file.price[..i].iter().any(|q| q.model == p.model && q.from == p.from) {
                return Err(format!("{at}: a second price from {}", p.from));
            }
        }
        Ok(Prices { rows: file.price })
    }

    pub fn rows(&self) -> &[Price] {
        &self.rows
    }

    /// The price of the model any of `names` names, on `day`: its row with the latest
    /// `from` on or before it. None where no row names the model, or none is that old.
    pub fn find<'a>(&self, names: impl IntoIterator<Item = &'a str> + Clone, day: Date) -> Option<&Price> {
        self.rows
            .iter()
            .filter(|p| p.from <= day && names.clone().into_iter().any(|n| p.names(n)))
            .max_by_key(|p| p.from)
    }
}

fn date<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
    let text = toml::value::Datetime::deserialize(d)?;
    let day = text.date.ok_or_else(|| serde::de::Error::custom("a date, as 2025-01-31"))?;
    let month = Month::try_from(day.month).map_err(serde::de::Error::custom)?;
    Date::from_calendar_date(day.year.into(), month, day.day).map_err(serde::de::Error::custom)
}

/// An ATIF trajectory's tokens: its `final_metrics` totals, else its steps' metrics
/// summed. ATIF counts cached tokens within the prompt's, and no cache writes: the
/// prompt's uncached tokens are `input`, its cached ones `cache_read`. None for a file
/// that is not ATIF or records no prompt or completion tokens.
pub fn atif_tokens(bytes: &[u8]) -> Option<Tokens> {
    #[derive(Deserialize, Default)]
    struct Metrics {
        #[serde(default, alias = "total_prompt_tokens")]
        prompt_tokens: Option<u64>,
        #[serde(default, alias = "total_completion_tokens")]
        completion_tokens: Option<u64>,
        #[serde(default, alias = "total_cached_tokens")]
        cached_tokens: Option<u64>,
    }
    #[derive(Deserialize)]
    struct Step {
        #[serde(default)]
        metrics: Option<Metrics>,
    }
    #[derive(Deserialize)]
    struct Atif {
        #[serde(default)]
        steps: Vec<Step>,
        #[serde(default)]
        final_metrics: Option<Metrics>,
    }
    let file: Atif = serde_json::from_slice(bytes).ok()?;
    let totals = match file.final_metrics {
        Some(m) if m.prompt_tokens.is_some() || m.completion_tokens.is_some() => m,
        _ => {
            let mut sum = Metrics::default();
            let add = |to: &mut Option<u64>, n: Option<u64>| {
                if let Some(n) = n {
                    *to = Some(to.unwrap_or(0).saturating_add(n));
                }
            };
            for m in file.steps.iter().filter_map(|s| s.metrics.as_ref()) {
                add(&mut sum.prompt_tokens, m.prompt_tokens);
                add(&mut sum.completion_tokens, m.completion_tokens);
                add(&mut sum.cached_tokens, m.cached_tokens);
            }
            sum
        }
    };
    if totals.prompt_tokens.is_none() && totals.completion_tokens.is_none() {
        return None;
    }
    let prompt = totals.prompt_tokens.unwrap_or(0);
    let cached = totals.cached_tokens.unwrap_or(0).min(prompt);
    Some(Tokens {
        input: prompt - cached,
        output: totals.completion_tokens.unwrap_or(0),
        cache_read: cached,
        cache_write: 0,
    })
}

/// A run's cost as the board counts it: the price of its tokens where they can be
/// priced (`computed`), what, if anything, is wrong with what it states (`mark`), and
/// the cost its rates sum (`counted`): the computed one where the tokens are borne out
/// (`checked`), else the stated one; where its tokens and its trajectory's disagree, the
/// most that any of the three says, so that under-reporting never lowers a row's cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checked {
    pub computed: Option<f64>,
    pub mark: Option<CostMark>,
    pub counted: Option<f64>,
    pub checked: bool,
}

/// Checks a run's stated cost against its tokens priced at `price` (its model's on its
/// day, if the table has one) and its tokens against those of its trajectory, where the
/// board has one.
pub fn check(
    stated: Option<f64>,
    tokens: Option<&Tokens>,
    price: Option<&Price>,
    trajectory: Option<&Tokens>,
) -> Checked {
    let computed = tokens.zip(price).map(|(t, p)| p.cost(t));
    let disagrees = trajectory.is_some_and(|from_trajectory| tokens != Some(from_trajectory));
    let mark = match (stated, tokens, computed) {
        _ if disagrees => Some(CostMark::TrajectoryDisagrees),
        (Some(_), None, _) => Some(CostMark::NoTokens),
        (Some(s), Some(_), Some(c)) if (s - c).abs() > (TOLERANCE * c).max(TOLERANCE_USD) => {
            Some(CostMark::Differs)
        }
        _ => None,
    };
    let checked = computed.is_some() && !disagrees;
    let counted = if checked {
        computed
    } else if disagrees {
        let traced = trajectory.zip(price).map(|(t, p)| p.cost(t));
        [stated, computed, traced].into_iter().flatten().reduce(f64::max)
    } else {
        stated
    };
    Checked { computed, mark, counted, checked }
}

/// [`check`] of run `run` of a manifest: priced at the price the table gives its
/// agent's `model_id` or `model` on the day the manifest was made, its tokens held to
/// those of its ATIF `trajectory` where it has one. A published run's cost is its source's
/// average (spec §4m): counted as stated, neither checked nor marked.
pub fn check_run(
    prices: &Prices,
    manifest: &bundle::Manifest,
    run: &bundle::Run,
    trajectory: Option<&[u8]>,
) -> Checked {
    if manifest.provenance.kind == bundle::ProvenanceKind::Published {
        return Checked { computed: None, mark: None, counted: run.cost_usd, checked: false };
    }
    let day =
        time::OffsetDateTime::parse(&manifest.created_at, &time::format_description::well_known::Rfc3339)
            .map(|t| t.date())
            .ok();
    let names = manifest.agent.model_id.iter().chain([&manifest.agent.model]).map(String::as_str);
    let price = day.and_then(|day| prices.find(names, day));
    let traced = trajectory.and_then(atif_tokens);
    check(run.cost_usd, run.tokens.as_ref(), price, traced.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u8, d: u8) -> Date {
        Date::from_calendar_date(y, Month::try_from(m).unwrap(), d).unwrap()
    }

    #[test]
    fn the_table_reads_and_every_row_cites_a_source_and_a_date() {
        let prices = Prices::builtin();
        assert!(prices.rows().len() >= 9);
        for p in prices.rows() {
            assert!(p.source.len() > 20, "{} cites no source", p.model);
            assert!(p.from >= day(2024, 1, 1), "{}", p.model);
        }
    }

    #[test]
    fn every_model_the_demo_shows_has_a_price() {
        // The paper's agents' models (docs/data/rexbench-v3-results.json), the parity
        // experiment's (docs/data/harbor-rexbench-parity-2026-02.json) and the example
        // agents' (tasks/examples/*.toml), as the demo's manifests name them.
        let paper: serde_json::Value =
            serde_json::from_str(include_str!("../../docs/data/rexbench-v3-results.json")).unwrap();
        let mut models: Vec<String> = paper["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["model"].as_str().unwrap().to_owned())
            .collect();
        models.push("Claude Sonnet 4.5".into());
        models.push("Example Model".into());
        for model in models {
            assert!(
                Prices::builtin().find([model.as_str()], day(2026, 11, 28)).is_some(),
                "no price for {model} in benchmark/prices.toml"
            );
        }
    }

    #[test]
    fn a_run_is_priced_by_its_models_row_of_its_day() {
        let prices = Prices::builtin();
        let before = prices.find(["deepseek-reasoner"], day(2025, 9, 4)).unwrap();
        let after = prices.find(["DeepSeek-R1"], day(2025, 9, 5)).unwrap();
        assert_eq!((before.output, after.output), (2.19, 1.68));
        assert!(prices.find(["Claude 4.5 Opus"], day(2025, 11, 1)).is_none(), "priced before it was sold");
        assert!(prices.find(["no such model"], day(2026, 1, 1)).is_none());
        let opus = prices.find(["CLAUDE-OPUS-4-5"], day(2026, 1, 1)).unwrap();
        let t = Tokens { input: 1_000_000, output: 100_000, cache_read: 2_000_000, cache_write: 10_000 };
        assert!((opus.cost(&t) - (5.0 + 2.5 + 1.0 + 0.0625)).abs() < 1e-9);
    }

    #[test]
    fn a_table_without_sources_or_with_a_repeated_day_is_refused() {
        let row = |source: &str, from: &str| {
            format!(
                "[[price]]\nmodel = \"M\"\nids = [\"m\"]\nfrom = {from}\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\ncache_write = 1.0\nsource = \"{source}\"\n"
            )
        };
        assert!(Prices::parse(&row("", "2025-01-01")).unwrap_err().contains("no source"));
        let twice = row("a source", "2025-01-01") + &row("another", "2025-01-01");
        assert!(Prices::parse(&twice).unwrap_err().contains("a second price"));
        assert!(Prices::parse(&row("a source", "\"January\"")).is_err());
        assert!(
            Prices::parse(&row("a source", "2025-01-01").replace("2.0", "-2.0"))
                .unwrap_err()
                .contains("not a price")
        );
    }

    #[test]
    fn tokens_come_from_an_atif_trajectorys_totals_or_its_steps() {
        let totals = br#"{"schema_version": "ATIF-v1.4", "steps": [{"metrics": {"prompt_tokens": 1}}],
            "final_metrics": {"total_prompt_tokens": 1000, "total_completion_tokens": 50, "total_cached_tokens": 800}}"#;
        assert_eq!(
            atif_tokens(totals),
            Some(Tokens { input: 200, output: 50, cache_read: 800, cache_write: 0 })
        );
        let steps = br#"{"steps": [{"metrics": {"prompt_tokens": 100, "completion_tokens": 5}},
            {"source": "agent"}, {"metrics": {"prompt_tokens": 200, "completion_tokens": 7, "cached_tokens": 150}}]}"#;
        assert_eq!(
            atif_tokens(steps),
            Some(Tokens { input: 150, output: 12, cache_read: 150, cache_write: 0 })
        );
        assert_eq!(atif_tokens(br#"{"steps": [{"metrics": {}}]}"#), None);
        assert_eq!(atif_tokens(b"not json"), None);
    }

    #[test]
    fn a_stated_cost_is_checked_against_its_tokens_and_its_trajectory() {
        let price = Prices::builtin().find(["Example Model"], day(2026, 6, 1)).unwrap();
        let t = Tokens { input: 100_000, output: 10_000, cache_read: 0, cache_write: 0 };
        let price_of = price.cost(&t); // 0.30 + 0.15
        assert!((price_of - 0.45).abs() < 1e-9);
        assert_eq!(
            check(Some(0.45), Some(&t), Some(price), None),
            Checked { computed: Some(price_of), mark: None, counted: Some(price_of), checked: true }
        );
        assert_eq!(check(Some(0.48), Some(&t), Some(price), None).mark, None, "within a tenth");
        assert_eq!(
            check(Some(0.045), Some(&t), Some(price), None),
            Checked {
                computed: Some(price_of),
                mark: Some(CostMark::Differs),
                counted: Some(price_of),
                checked: true
            },
            "a tenth of it: the price counts"
        );
        assert_eq!(
            check(Some(0.045), None, Some(price), None),
            Checked { computed: None, mark: Some(CostMark::NoTokens), counted: Some(0.045), checked: false }
        );
        assert_eq!(
            check(None, Some(&t), Some(price), None).mark,
            None,
            "no cost stated: the price is the cost"
        );
        assert_eq!(
            check(Some(0.45), Some(&t), None, None),
            Checked { computed: None, mark: None, counted: Some(0.45), checked: false },
            "no price: unchecked"
        );
        let other = Tokens { input: 1, ..t };
        assert_eq!(
            check(Some(0.45), Some(&t), Some(price), Some(&other)).mark,
            Some(CostMark::TrajectoryDisagrees)
        );
        // Tokens stated at a tenth of what the trajectory counts: the most any says counts.
        let tenth = Tokens { input: 10_000, output: 1_000, cache_read: 0, cache_write: 0 };
        let under = check(Some(0.045), Some(&tenth), Some(price), Some(&t));
        assert_eq!((under.mark, under.checked), (Some(CostMark::TrajectoryDisagrees), false));
        assert!((under.counted.unwrap() - price_of).abs() < 1e-12);
        assert_eq!(check(Some(0.45), Some(&t), Some(price), Some(&t)).mark, None);
    }
}
