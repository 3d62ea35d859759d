//! Which runs of a self-reported submission the maintainers re-run (spec §4e): a keyed
//! hash of public facts, under a key the server commits to before it uses it and
//! reveals later. A submitter cannot know the choice before submitting (the key is
//! secret then); anyone can check it afterwards (the key, once revealed, must hash to
//! the commitment published before the submission, and recomputes every sample).
//!
//! The rule: for each hint condition, the success with the smallest keyed hash and the
//! run of another counted outcome with the smallest keyed hash, among the runs that
//! carry a patch, and the `infra_error` run with the smallest keyed hash, whether or not
//! it carries one: an attempt the submitter says did not run is re-run too, or
//! relabelling a failure would keep it from ever being checked (one with nothing to
//! re-run is so marked in the maintainers' queue, and counts as a failure strictly). The keyed hash of a run is
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
            })
            .collect()
    }

    /// Which of a condition's three slots the run competes for: a success or another
    /// counted outcome if it can be re-run, an `infra_error` run always.
    fn slot(&self) -> Option<Slot> {
        match self.outcome {
            Outcome::InfraError => Some(Slot::InfraError),
            Outcome::Success => self.has_patch.then_some(Slot::Success),
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

/// The indices (into `runs`) of the runs the rule samples, in `runs`' order.
pub fn choose(key: &[u8], bundle_id: &str, runs: &[Candidate]) -> Vec<usize> {
    let mut best: std::collections::BTreeMap<(Hint, Slot), ([u8; 32], usize)> = Default::default();
    for (i, c) in runs.iter().enumerate() {
        let Some(kind) = c.slot() else { continue };
        let h = keyed_hash(key, bundle_id, c);
        let slot = best.entry((c.hint, kind)).or_insert((h, i));
        if h < slot.0 {
            *slot = (h, i);
        }
    }
    let mut chosen: Vec<usize> = best.into_values().map(|(_, i)| i).collect();
    chosen.sort_unstable();
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
mod tests {
    use super::*;

    fn run(task: &str, hint: Hint, attempt: u32, outcome: Outcome) -> Candidate {
        Candidate { task: task.into(), hint, attempt, outcome, has_patch: true }
    }

    #[test]
    fn one_success_and_one_failure_per_condition_chosen_by_the_key() {
        let mut runs = Vec::new();
        for hint in Hint::ALL {
            for attempt in 1..=5 {
                let outcome = if attempt % 2 == 0 { Outcome::Success } else { Outcome::WrongResult };
                runs.push(run("cogs", hint, attempt, outcome));
            }
        }
        let a = choose(&[1; 32], "b", &runs);
        assert_eq!(a.len(), 6, "{a:?}");
        for hint in Hint::ALL {
            let of = |s: bool| {
                a.iter()
                    .filter(|&&i| runs[i].hint == hint && (runs[i].outcome == Outcome::Success) == s)
                    .count()
            };
            assert_eq!((of(true), of(false)), (1, 1));
        }
        // Another key or another bundle chooses otherwise (over many keys, some differ).
        assert!((0..20u8).any(|k| choose(&[k; 32], "b", &runs) != a));
        assert!((0..20u8).any(|k| choose(&[1; 32], &format!("b{k}"), &runs) != a));
    }

    #[test]
    fn counted_runs_without_a_patch_are_never_chosen_and_an_infra_error_always_may_be() {
        let runs = vec![
            Candidate { has_patch: false, ..run("cogs", Hint::None, 1, Outcome::Success) },
            Candidate { has_patch: false, ..run("cogs", Hint::None, 2, Outcome::WrongResult) },
        ];
        assert!(choose(&[7; 32], "b", &runs).is_empty());
        let runs = vec![Candidate { has_patch: false, ..run("cogs", Hint::None, 2, Outcome::InfraError) }];
        assert_eq!(choose(&[7; 32], "b", &runs), [0]);
    }

    #[test]
    fn one_infrastructure_error_per_condition_is_chosen_beside_the_others() {
        // Every failure relabelled `infra_error`: the relabelled runs are sampled too.
        let mut runs = Vec::new();
        for hint in Hint::ALL {
            for attempt in 1..=5 {
                let outcome = if attempt == 1 { Outcome::Success } else { Outcome::InfraError };
                runs.push(run("cogs", hint, attempt, outcome));
            }
        }
        runs.push(run("othello", Hint::None, 1, Outcome::WrongResult));
        let a = choose(&[3; 32], "b", &runs);
        for hint in Hint::ALL {
            let of = |o: Outcome| a.iter().filter(|&&i| runs[i].hint == hint && runs[i].outcome == o).count();
            let failures = usize::from(hint == Hint::None);
            assert_eq!(
                (of(Outcome::Success), of(Outcome::InfraError), of(Outcome::WrongResult)),
                (1, 1, failures),
                "{hint:?}: {a:?}"
            );
        }
        // Which infra_error run is the key's choice, as for the others.
        assert!((0..20u8).any(|k| choose(&[k; 32], "b", &runs) != a));
    }

    #[test]
    fn the_variant_is_the_keys_choice_among_those_registered() {
        let variants = ["aa".repeat(32), "bb".repeat(32), "cc".repeat(32)];
        let of = |k: u8, b: &str| {
            choose_variant(&[k; 32], b, "cogs", Hint::None, 1, variants.iter().map(String::as_str))
        };
        let a = of(1, "b").unwrap();
        assert!(variants.iter().any(|v| v == a));
        // The smallest keyed hash, whatever the order the variants come in.
        let reversed =
            choose_variant(&[1; 32], "b", "cogs", Hint::None, 1, variants.iter().rev().map(String::as_str));
        assert_eq!(reversed, Some(a));
        let h = |v: &str| heldout_hash(&[1; 32], "b", "cogs", Hint::None, 1, v);
        assert!(variants.iter().all(|v| h(a) <= h(v)));
        assert!((0..20u8).any(|k| of(k, "b") != Some(a)));
        assert_eq!(choose_variant(&[1; 32], "b", "cogs", Hint::None, 1, []), None);
    }

    #[test]
    fn the_keyed_hash_is_hmac_sha256_of_the_documented_message() {
        // RFC 4231's test case 2, to pin the primitive: key "Jefe".
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(commitment(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
