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
        let name = normal(name);
        normal(&self.model) == name || self.ids.iter().any(|id| normal(id) == name)
    }
}

/// A model's name as names are compared: lower case, surrounding space trimmed. A name
/// with an invisible or control character in it (a zero-width space, …) names no model.
fn normal(name: &str) -> String {
    let name = name.trim();
    if name.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{00ad}')
    }) {
        return "\u{0}invisible".to_owned();
    }
    name.to_lowercase()
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

impl Prices {
    /// The price of a manifest's model on `day`: every name it gives (`model_id`,
    /// `model`) must name one and the same model of the table, or there is none (a name
    /// the table does not know beside one it does proves nothing about which was run).
    /// Its row of that day; before its first row, its first row (a date before any
    /// price is the submitter's claim, never a way around the table).
    pub fn of_model<'a>(&self, names: impl IntoIterator<Item = &'a str>, day: Date) -> Option<&Price> {
        let mut model: Option<&str> = None;
        for name in names {
            let row = self.rows.iter().find(|p| p.names(name))?;
            match model {
                Some(m) if m != row.model => return None,
                _ => model = Some(&row.model),
            }
        }
        let model = model?;
        let rows = || self.rows.iter().filter(|p| p.model == model);
        rows().filter(|p| p.from <= day).max_by_key(|p| p.from).or_else(|| rows().min_by_key(|p| p.from))
    }
}

fn date<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
    let text = toml::value::Datetime::deserialize(d)?;
    let day = text.date.ok_or_else(|| serde::de::Error::custom("a date, as 2025-01-31"))?;
    let month = Month::try_from(day.month).map_err(serde::de::Error::custom)?;
    Date::from_calendar_date(day.year.into(), month, day.day).map_err(serde::de::Error::custom)
}

/// What a trajectory says of a run's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traced {
    /// Not an ATIF trajectory, or one that counts no tokens.
    Nothing,
    /// Its tokens.
    Tokens(Tokens),
    /// An ATIF trajectory whose counts do not read (not JSON, a count that is not a whole
    /// number ≥ 0): what it counted cannot be told, so a run's tokens are not borne out.
    Unreadable,
}

/// An ATIF trajectory's tokens: for each kind, the larger of its `final_metrics` total
/// and its steps' metrics summed (an edited total never hides what the steps count).
/// ATIF counts cached tokens within the prompt's, and no cache writes: the prompt's
/// uncached tokens are `input`, its cached ones `cache_read`.
pub fn trajectory_tokens(bytes: &[u8]) -> Traced {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    // What only a trajectory, or a record of tokens, names: a file that names one and does
    // not read as ATIF (not JSON, not an object with `steps` or `final_metrics`, an ATIF
    // object wrapped in another) cannot be told to agree.
    let atif_like = || {
        let head = &bytes[..bytes.len().min(1 << 16)];
        let names = |word: &[u8]| head.windows(word.len()).any(|w| w == word);
        names(b"steps") || names(b"ATIF") || names(b"prompt_tokens") || names(b"completion_tokens")
    };
    let file = match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(file) if file.get("steps").is_some() || file.get("final_metrics").is_some() => file,
        _ => return if atif_like() { Traced::Unreadable } else { Traced::Nothing },
    };
    // A count: absent, or a whole number ≥ 0 (9320.0 is 9320); anything else is unreadable.
    let count = |m: &serde_json::Value, keys: &[&str]| -> Result<Option<u64>, ()> {
        match keys.iter().find_map(|k| m.get(*k)) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => match (v.as_u64(), v.as_f64()) {
                (Some(n), _) => Ok(Some(n)),
                (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < 1e15 => Ok(Some(f as u64)),
                _ => Err(()),
            },
        }
    };
    let kinds = |m: &serde_json::Value| -> Result<[Option<u64>; 3], ()> {
        Ok([
            count(m, &["total_prompt_tokens", "prompt_tokens"])?,
            count(m, &["total_completion_tokens", "completion_tokens"])?,
            count(m, &["total_cached_tokens", "cached_tokens"])?,
        ])
    };
    let read = || -> Result<[Option<u64>; 3], ()> {
        let mut steps = [None::<u64>; 3];
        for step in file.get("steps").and_then(|s| s.as_array()).into_iter().flatten() {
            if let Some(m) = step.get("metrics").filter(|m| !m.is_null()) {
                for (sum, n) in steps.iter_mut().zip(kinds(m)?) {
                    if let Some(n) = n {
                        *sum = Some(sum.unwrap_or(0).saturating_add(n));
                    }
                }
            }
        }
        let totals = match file.get("final_metrics").filter(|m| !m.is_null()) {
            Some(m) => kinds(m)?,
            None => [None; 3],
        };
        let mut out = [None; 3];
        for (o, (a, b)) in out.iter_mut().zip(totals.into_iter().zip(steps)) {
            *o = a.max(b);
        }
        Ok(out)
    };
    match read() {
        Err(()) => Traced::Unreadable,
        Ok([None, None, _]) => Traced::Nothing,
        Ok([prompt, completion, cached]) => {
            let prompt = prompt.unwrap_or(0);
            let cached = cached.unwrap_or(0).min(prompt);
            Traced::Tokens(Tokens {
                input: prompt - cached,
                output: completion.unwrap_or(0),
                cache_read: cached,
                cache_write: 0,
            })
        }
    }
}

/// An ATIF trajectory's tokens ([`trajectory_tokens`]), where it counts them readably.
pub fn atif_tokens(bytes: &[u8]) -> Option<Tokens> {
    match trajectory_tokens(bytes) {
        Traced::Tokens(t) => Some(t),
        Traced::Nothing | Traced::Unreadable => None,
    }
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
/// day, if the table has one) and its tokens against what its trajectory says, where the
/// board has one. A stated cost its tokens do not bear out counts at the higher of the
/// two, and so does one whose trajectory disagrees (with its trajectory's price too).
///
/// A run that `wrote` a patch and states no output token is marked `implausible-tokens`,
/// and one whose tokens the table cannot price `unpriced`: neither is checked.
pub fn check(
    stated: Option<f64>,
    tokens: Option<&Tokens>,
    price: Option<&Price>,
    trajectory: Traced,
    wrote: bool,
) -> Checked {
    let computed = tokens.zip(price).map(|(t, p)| p.cost(t));
    let disagrees = match trajectory {
        Traced::Nothing => false,
        Traced::Unreadable => true,
        Traced::Tokens(from_trajectory) => tokens != Some(&from_trajectory),
    };
    let differs = matches!((stated, computed), (Some(s), Some(c)) if (s - c).abs() > (TOLERANCE * c).max(TOLERANCE_USD));
    let implausible = wrote && tokens.is_some_and(|t| t.output == 0);
    let mark = match (stated, tokens) {
        _ if disagrees => Some(CostMark::TrajectoryDisagrees),
        (Some(_), None) => Some(CostMark::NoTokens),
        _ if implausible => Some(CostMark::ImplausibleTokens),
        (_, Some(_)) if price.is_none() => Some(CostMark::Unpriced),
        _ if differs => Some(CostMark::Differs),
        _ => None,
    };
    let checked = computed.is_some() && !disagrees && !implausible;
    let most = |figures: &[Option<f64>]| figures.iter().flatten().copied().reduce(f64::max);
    let counted = if disagrees {
        let traced = match trajectory {
            Traced::Tokens(t) => price.map(|p| p.cost(&t)),
            Traced::Nothing | Traced::Unreadable => None,
        };
        most(&[stated, computed, traced])
    } else if checked {
        if differs { most(&[stated, computed]) } else { computed }
    } else if implausible {
        most(&[stated, computed])
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
    let price = day.and_then(|day| prices.of_model(names, day));
    let traced = trajectory.map_or(Traced::Nothing, trajectory_tokens);
    // An agent that changed the codebase wrote tokens to do it.
    let wrote = run.artifacts.contains_key("patch") && run.outcome != bundle::Outcome::EmptyPatch;
    check(run.cost_usd, run.tokens.as_ref(), price, traced, wrote)
}

#[cfg(test)]
mod tests;
