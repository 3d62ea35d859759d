//! Which runs of a self-reported submission the maintainers re-run (spec §4e): a keyed
//! hash of public facts, under a key the server commits to before it uses it and
//! reveals later. A submitter cannot know the choice before submitting (the key is
//! secret then); anyone can check it afterwards (the key, once revealed, must hash to
//! the commitment published before the submission, and recomputes every sample).
//!
//! The rule: for each hint condition, the successes with the smallest keyed hashes, as
//! many as [`Rule`] says it takes to catch a stated share of fakes with a stated
//! probability (sampled without replacement: the hypergeometric chance, [`needed`]), and
//! the run of another counted outcome with the smallest keyed hash, among the runs that
//! carry a patch, and the `infra_error` run with the smallest keyed hash, whether or not
//! it carries one: an attempt the submitter says did not run is re-run too, or
//! relabelling a failure would keep it from ever being checked (one with nothing to
//! re-run is so marked in the maintainers' queue, and counts as a failure strictly).
//! Successes are drawn whether or not they carry a patch, for the same reason. Beside
//! the keyed choice, every run whose verdict a regrade changed (section 4i) is sampled. The keyed hash of a run is
//! `HMAC-SHA256(key, "rexbench.sample/v1\n" + bundle id + "\n" + task + "\n" + hint + "\n" + attempt)`,
//! compared as bytes.

use hmac::{Hmac, Mac};
use sha2::{Digest as _, Sha256};

use crate::{Hint, Manifest, Outcome};

/// A sampling key's length in bytes.
pub const KEY_BYTES: usize = 32;

/// What the keyed hash is over, before the run's own facts.
pub const DOMAIN: &str = "rexbench.sample/v1";

/// A run as the rule sees it: facts anyone can read on the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
    pub outcome: Outcome,
    /// Whether the run carries a `patch` artifact: a run without one cannot be re-run
    /// (an `infra_error` run is sampled all the same).
    pub has_patch: bool,
    /// Whether a regrade changed its verdict (section 4i): such a run is always sampled,
    /// or regrading many failures and keeping the lucky ones would go unchecked.
    pub regraded: bool,
}

impl Candidate {
    /// The runs of a manifest, in its order.
    pub fn of(m: &Manifest) -> Vec<Candidate> {
        m.runs
            .iter()
            .map(|r| Candidate {
                task: r.task.to_string(),
                hint: r.hint,
                attempt: r.attempt,
                outcome: r.outcome,
                has_patch: r.artifacts.contains_key("patch"),
                regraded: r.regrade_changed(),
            })
            .collect()
    }

    /// Which of a condition's three slots the run competes for: a success always (one
    /// without a patch, which only an imported bundle may have, is drawn like any other:
    /// left out, it would make the sample's size and what it catches overstate, and a
    /// success that cannot be re-run counts as not reproduced), another counted outcome
    /// if it can be re-run, an `infra_error` run always.
    fn slot(&self) -> Option<Slot> {
        match self.outcome {
            Outcome::InfraError => Some(Slot::InfraError),
            Outcome::Success => Some(Slot::Success),
            _ => self.has_patch.then_some(Slot::Failure),
        }
    }

    /// Whether the rule may choose the run.
    pub fn eligible(&self) -> bool {
        self.slot().is_some()
    }
}

/// The kinds of run the sample takes one of per hint condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    Success,
    Failure,
    InfraError,
}

/// The keyed hash of one run of bundle `bundle_id`.
pub fn keyed_hash(key: &[u8], bundle_id: &str, c: &Candidate) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    let message = format!("{DOMAIN}\n{bundle_id}\n{}\n{}\n{}", c.task, c.hint.as_str(), c.attempt);
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().into()
}

/// How many successes a condition's sample takes (spec §4e): enough that, were at least
/// `share` of a condition's successes fake, at least one fake would be sampled with
/// probability `probability`; at most `cap` successes per submission in all.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The share of fakes to catch, above 0 and at most 1.
    pub share: f64,
    /// The probability of catching one, above 0 and below 1.
    pub probability: f64,
    /// The most successes re-run per submission (what the maintainers can re-run).
    pub cap: u32,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule::DEFAULT
    }
}

impl Rule {
    /// A 20% share of fakes caught with 90% probability, at most 30 successes re-run.
    pub const DEFAULT: Rule = Rule { share: 0.2, probability: 0.9, cap: 30 };

    /// The rule for a submitter one of whose submissions did not reproduce: half the
    /// share caught with the same probability, and twice the cap.
    pub fn enlarged(self) -> Rule {
        Rule { share: self.share / 2.0, probability: self.probability, cap: self.cap.saturating_mul(2) }
    }

    /// Why the rule cannot be used, if it cannot.
    pub fn problem(&self) -> Option<String> {
        if !(self.share > 0.0 && self.share <= 1.0) {
            Some(format!("the share of fakes to catch must be above 0 and at most 1, not {}", self.share))
        } else if !(self.probability > 0.0 && self.probability < 1.0) {
            Some(format!(
                "the probability of catching one must be above 0 and below 1, not {}",
                self.probability
            ))
        } else if self.cap == 0 {
            Some("the most successes re-run per submission must be at least 1".to_owned())
        } else {
            None
        }
    }
}

/// Of `successes`, how many are fake where `share` of them are: ⌈share · successes⌉, at
/// least one (none of none).
pub fn fakes(successes: u32, share: f64) -> u32 {
    if successes == 0 {
        return 0;
    }
    // The epsilon keeps 0.2 · 5 (1.0000000000000002 in binary) at 1.
    let f = (share * f64::from(successes) - 1e-9).ceil();
    (f.max(1.0) as u32).min(successes)
}

/// The chance that `sampled` of `successes` drawn without replacement miss all `fakes`
/// of them: the product over i < sampled of (successes − fakes − i) / (successes − i),
/// in that order, in double precision.
pub fn miss(successes: u32, fakes: u32, sampled: u32) -> f64 {
    let (n, f) = (f64::from(successes), f64::from(fakes.min(successes)));
    let mut p = 1.0;
    for i in 0..sampled.min(successes) {
        let i = f64::from(i);
        if n - f - i <= 0.0 {
            return 0.0;
        }
        p *= (n - f - i) / (n - i);
    }
    p
}

/// The chance that a sample of `sampled` of `successes` catches a fake, were `share` of
/// them fake.
pub fn catches(successes: u32, sampled: u32, share: f64) -> f64 {
    1.0 - miss(successes, fakes(successes, share), sampled)
}

/// The fewest of `successes` whose sample catches `rule.share` of fakes with
/// `rule.probability` (every one, where no fewer do): the cap is [`sizes`]'s.
pub fn needed(successes: u32, rule: &Rule) -> u32 {
    let f = fakes(successes, rule.share);
    (1..=successes).find(|&k| 1.0 - miss(successes, f, k) >= rule.probability).unwrap_or(successes)
}

/// Each condition's sample of successes (in `Hint::ALL`'s order) from its count of
/// successes that carry a patch: [`needed`], and where their sum is over `rule.cap`,
/// the cap shared out one at a time, each to the condition short of its need whose
/// sample so far catches least ([`catches`]; the first in `Hint::ALL`'s order among
/// equals): the least power over the conditions is as high as the cap allows.
pub fn sizes(successes: [u32; 3], rule: &Rule) -> [u32; 3] {
    let want = successes.map(|s| needed(s, rule));
    if want.iter().sum::<u32>() <= rule.cap {
        return want;
    }
    let mut given = [0u32; 3];
    for _ in 0..rule.cap {
        let power = |h: usize| catches(successes[h], given[h], rule.share);
        let mut best: Option<usize> = None;
        for h in (0..3).filter(|&h| given[h] < want[h]) {
            if best.is_none_or(|b| power(h) < power(b)) {
                best = Some(h);
            }
        }
        let Some(h) = best else { break };
        given[h] += 1;
    }
    given
}

/// What a sample of `sampled` successes of `successes` (per condition, in `Hint::ALL`'s
/// order) catches: the least, over conditions with successes, of the chance of sampling
/// a fake were `share` of them fake; none where no condition has a success.
pub fn power(successes: [u32; 3], sampled: [u32; 3], share: f64) -> Option<f64> {
    (0..3).filter(|&h| successes[h] > 0).map(|h| catches(successes[h], sampled[h], share)).reduce(f64::min)
}

/// Each condition's successes that carry a patch (the rule's candidates), in
/// `Hint::ALL`'s order.
pub fn successes(runs: &[Candidate]) -> [u32; 3] {
    let mut n = [0u32; 3];
    for c in runs.iter().filter(|c| c.slot() == Some(Slot::Success)) {
        n[hint_index(c.hint)] += 1;
    }
    n
}

fn hint_index(hint: Hint) -> usize {
    Hint::ALL.iter().position(|h| *h == hint).expect("Hint::ALL holds every hint")
}

/// The indices (into `runs`) of the runs the rule samples, in `runs`' order: per
/// condition, the [`sizes`] successes with the smallest keyed hashes, and one of each
/// other slot.
pub fn choose(key: &[u8], bundle_id: &str, runs: &[Candidate], rule: &Rule) -> Vec<usize> {
    choose_sized(key, bundle_id, runs, sizes(successes(runs), rule))
}

/// The rule before samples were sized (one success per condition): the sample of a
/// submission stored then, which keeps no [`Rule`].
pub fn choose_one_each(key: &[u8], bundle_id: &str, runs: &[Candidate]) -> Vec<usize> {
    choose_sized(key, bundle_id, runs, successes(runs).map(|s| s.min(1)))
}

fn choose_sized(key: &[u8], bundle_id: &str, runs: &[Candidate], sizes: [u32; 3]) -> Vec<usize> {
    let mut by_slot: std::collections::BTreeMap<(Hint, Slot), Vec<([u8; 32], usize)>> = Default::default();
    for (i, c) in runs.iter().enumerate() {
        let Some(kind) = c.slot() else { continue };
        by_slot.entry((c.hint, kind)).or_default().push((keyed_hash(key, bundle_id, c), i));
    }
    let mut chosen = Vec::new();
    for ((hint, kind), mut hashed) in by_slot {
        hashed.sort_unstable();
        let take = if kind == Slot::Success { sizes[hint_index(hint)] as usize } else { 1 };
        chosen.extend(hashed.into_iter().take(take).map(|(_, i)| i));
    }
    // Every run whose verdict a regrade changed, beside the keyed choice and beyond the
    // cap.
    chosen.extend(runs.iter().enumerate().filter(|(_, c)| c.regraded && c.eligible()).map(|(i, _)| i));
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

/// What the held-out variant's keyed hash is over, before the run's facts (spec §4l).
pub const HELDOUT_DOMAIN: &str = "rexbench.heldout/v1";

/// The keyed hash of variant `variant` (its digest) for run `(task, hint, attempt)` of
/// bundle `bundle_id`: `HMAC-SHA256(key, "rexbench.heldout/v1\n" + bundle id + "\n" +
/// task + "\n" + hint + "\n" + attempt + "\n" + variant digest)`.
pub fn heldout_hash(
    key: &[u8],
    bundle_id: &str,
    task: &str,
    hint: Hint,
    attempt: u32,
    variant: &str,
) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    let message = format!("{HELDOUT_DOMAIN}\n{bundle_id}\n{task}\n{}\n{attempt}\n{variant}", hint.as_str());
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().into()
}

/// The held-out variant a sampled success is re-run on (spec §4l): of the variants of
/// its task the board had registered when the bundle arrived (their digests), the one
/// with the smallest keyed hash; none where there were none.
pub fn choose_variant<'a>(
    key: &[u8],
    bundle_id: &str,
    task: &str,
    hint: Hint,
    attempt: u32,
    variants: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    variants.into_iter().min_by_key(|v| (heldout_hash(key, bundle_id, task, hint, attempt, v), *v))
}

/// The commitment to a key that the server publishes before using it: the lowercase
/// hex SHA-256 of its bytes.
pub fn commitment(key: &[u8]) -> String {
    hex::encode(Sha256::digest(key))
}

#[cfg(test)]
mod tests;
