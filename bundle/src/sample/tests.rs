//! The sample's rule: the keyed choice, its sizes and what they catch.

use super::*;

/// One success per condition: a cap of three.
const ONE: Rule = Rule { share: 0.2, probability: 0.9, cap: 3 };

fn run(task: &str, hint: Hint, attempt: u32, outcome: Outcome) -> Candidate {
    Candidate { task: task.into(), hint, attempt, outcome, has_patch: true, regraded: false }
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
    let a = choose(&[1; 32], "b", &runs, &ONE);
    assert_eq!(a.len(), 6, "{a:?}");
    for hint in Hint::ALL {
        let of = |s: bool| {
            a.iter().filter(|&&i| runs[i].hint == hint && (runs[i].outcome == Outcome::Success) == s).count()
        };
        assert_eq!((of(true), of(false)), (1, 1));
    }
    // Another key or another bundle chooses otherwise (over many keys, some differ).
    assert!((0..20u8).any(|k| choose(&[k; 32], "b", &runs, &ONE) != a));
    assert!((0..20u8).any(|k| choose(&[1; 32], &format!("b{k}"), &runs, &ONE) != a));
}

/// A failure without a patch cannot be re-run and proves nothing for the submitter:
/// never chosen. A success without one (an imported bundle's) is drawn and counted like
/// any success, so that the sample's size and what it catches count it; an
/// `infra_error` always may be.
#[test]
fn failures_without_a_patch_are_never_chosen_and_successes_and_infra_errors_always_may_be() {
    let runs = vec![
        Candidate { has_patch: false, ..run("cogs", Hint::None, 1, Outcome::Success) },
        Candidate { has_patch: false, ..run("cogs", Hint::None, 2, Outcome::WrongResult) },
    ];
    assert_eq!(choose(&[7; 32], "b", &runs, &ONE), [0]);
    assert_eq!(successes(&runs), [1, 0, 0]);
    let runs = vec![Candidate { has_patch: false, ..run("cogs", Hint::None, 2, Outcome::InfraError) }];
    assert_eq!(choose(&[7; 32], "b", &runs, &ONE), [0]);
    // Ten successes, half without a patch: the size is the one ten successes need.
    let runs: Vec<Candidate> = (1..=10)
        .map(|a| Candidate { has_patch: a % 2 == 0, ..run("cogs", Hint::None, a, Outcome::Success) })
        .collect();
    let rule = Rule::DEFAULT;
    assert_eq!(choose(&[7; 32], "b", &runs, &rule).len(), needed(10, &rule) as usize);
}

/// Issue 75, regrade shopping: four failed runs regraded until they pass are each
/// sampled, whatever the key and the cap.
#[test]
fn every_run_a_regrade_changed_is_sampled() {
    let mut runs: Vec<Candidate> = (1..=5).map(|a| run("cogs", Hint::None, a, Outcome::Success)).collect();
    for c in &mut runs[1..] {
        c.regraded = true;
    }
    let capped = Rule { cap: 1, ..Rule::DEFAULT };
    for key in 0..20u8 {
        let chosen = choose(&[key; 32], "b", &runs, &capped);
        assert!([1, 2, 3, 4].iter().all(|i| chosen.contains(i)), "{chosen:?}");
        assert!(chosen.len() <= 5);
    }
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
    let a = choose(&[3; 32], "b", &runs, &ONE);
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
    assert!((0..20u8).any(|k| choose(&[k; 32], "b", &runs, &ONE) != a));
}

#[test]
fn the_sample_of_successes_is_the_fewest_that_catch_the_share_with_the_probability() {
    let rule = Rule::DEFAULT;
    // Worked by hand: 24 successes, 5 fakes (⌈4.8⌉): 8 drawn miss them all with
    // chance 0.103, 9 with 0.071.
    assert_eq!(fakes(24, 0.2), 5);
    assert!((miss(24, 5, 8) - 0.1028).abs() < 1e-3 && (miss(24, 5, 9) - 0.0707).abs() < 1e-3);
    assert_eq!(needed(24, &rule), 9);
    assert_eq!((needed(5, &rule), needed(10, &rule), needed(0, &rule), needed(1, &rule)), (5, 7, 0, 1));
    // The size follows the count of successes: for every count, the fewest that catch.
    for s in 1..=200 {
        let k = needed(s, &rule);
        assert!(catches(s, k, rule.share) >= rule.probability, "{s}: {k}");
        assert!(k == 1 || catches(s, k - 1, rule.share) < rule.probability, "{s}: {k} is not the fewest");
    }
    // A submitter whose submission did not reproduce: half the share, caught as surely.
    let enlarged = rule.enlarged();
    assert_eq!((enlarged.share, enlarged.cap), (0.1, 60));
    assert_eq!(needed(24, &enlarged), 13);
    assert!(needed(60, &enlarged) > needed(60, &rule));
    // Over the cap, shared out so that the condition that catches least gets the next.
    assert_eq!(sizes([24, 24, 24], &rule), [9, 9, 9]);
    assert_eq!(sizes([24, 24, 24], &Rule { cap: 20, ..rule }), [7, 7, 6]);
    assert_eq!(sizes([24, 2, 0], &Rule { cap: 6, ..rule }), [4, 2, 0]);
    assert_eq!(power([24, 0, 0], [9, 0, 0], 0.2).map(|p| (p * 1000.0).round()), Some(929.0));
    assert_eq!(power([0, 0, 0], [0, 0, 0], 0.2), None);
    for bad in [
        Rule { share: 0.0, ..rule },
        Rule { share: 1.5, ..rule },
        Rule { probability: 1.0, ..rule },
        Rule { probability: f64::NAN, ..rule },
        Rule { cap: 0, ..rule },
    ] {
        assert!(bad.problem().is_some(), "{bad:?}");
    }
    assert_eq!(rule.problem(), None);
}

/// The power test: over many submissions (each its own key and id) whose successes are
/// 20% fake, the share in which the keyed sample takes a fake is the hypergeometric
/// chance the rule promises (at least 90%), within sampling error.
#[test]
fn over_many_submissions_with_a_fifth_faked_the_sample_catches_as_often_as_promised() {
    let rule = Rule::DEFAULT;
    for successes in [5u32, 12, 24, 40] {
        let trials = 2000;
        let mut caught = 0;
        for t in 0..trials {
            let key: [u8; 32] = Sha256::digest(format!("key {successes} {t}")).into();
            let bundle = format!("{:x}", Sha256::digest(format!("bundle {t}")));
            // 12 tasks × 5 attempts without hints; the first `successes` succeed, and a
            // fifth of those (by a second hash, so not the key's order) are fake.
            let mut runs = Vec::new();
            for n in 0..60u32 {
                let outcome = if n < successes { Outcome::Success } else { Outcome::WrongResult };
                runs.push(run(&format!("task{}", n / 5), Hint::None, n % 5 + 1, outcome));
            }
            let mut order: Vec<u32> = (0..successes).collect();
            order.sort_by_key(|n| Sha256::digest(format!("fake {t} {n}")).to_vec());
            let fake: Vec<u32> = order.into_iter().take(fakes(successes, rule.share) as usize).collect();
            let chosen = choose(&key, &bundle, &runs, &rule);
            caught += usize::from(chosen.iter().any(|&i| fake.contains(&(i as u32))));
        }
        let k = needed(successes, &rule);
        let promised = catches(successes, k, rule.share);
        let observed = caught as f64 / f64::from(trials);
        let error = (promised * (1.0 - promised) / f64::from(trials)).sqrt();
        assert!(promised >= rule.probability);
        assert!(
            (observed - promised).abs() <= 4.0 * error + 1e-9,
            "{successes} successes, {k} sampled: caught {observed}, promised {promised}"
        );
        assert!(observed >= rule.probability - 4.0 * error, "{successes}: {observed}");
    }
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
