//! The price table, a trajectory's tokens and a cost's check.

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
        serde_json::from_str(include_str!("../../../docs/data/rexbench-v3-results.json")).unwrap();
    let mut models: Vec<String> =
        paper["agents"].as_array().unwrap().iter().map(|a| a["model"].as_str().unwrap().to_owned()).collect();
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
    assert_eq!(atif_tokens(totals), Some(Tokens { input: 200, output: 50, cache_read: 800, cache_write: 0 }));
    let steps = br#"{"steps": [{"metrics": {"prompt_tokens": 100, "completion_tokens": 5}},
        {"source": "agent"}, {"metrics": {"prompt_tokens": 200, "completion_tokens": 7, "cached_tokens": 150}}]}"#;
    assert_eq!(atif_tokens(steps), Some(Tokens { input: 150, output: 12, cache_read: 150, cache_write: 0 }));
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
        check(Some(0.45), Some(&t), Some(price), Traced::Nothing, true),
        Checked { computed: Some(price_of), mark: None, counted: Some(price_of), checked: true }
    );
    assert_eq!(check(Some(0.48), Some(&t), Some(price), Traced::Nothing, true).mark, None, "within a tenth");
    assert_eq!(
        check(Some(0.045), Some(&t), Some(price), Traced::Nothing, true),
        Checked {
            computed: Some(price_of),
            mark: Some(CostMark::Differs),
            counted: Some(price_of),
            checked: true
        },
        "a tenth of it: the price counts"
    );
    assert_eq!(
        check(Some(0.045), None, Some(price), Traced::Nothing, true),
        Checked { computed: None, mark: Some(CostMark::NoTokens), counted: Some(0.045), checked: false }
    );
    assert_eq!(
        check(None, Some(&t), Some(price), Traced::Nothing, true).mark,
        None,
        "no cost stated: the price is the cost"
    );
    assert_eq!(
        check(Some(0.45), Some(&t), None, Traced::Nothing, true),
        Checked { computed: None, mark: Some(CostMark::Unpriced), counted: Some(0.45), checked: false },
        "no price: unchecked, and marked so"
    );
    // Zero tokens, and nothing paid, for a run that wrote a patch: not believed.
    let none = Tokens { input: 0, output: 0, cache_read: 0, cache_write: 0 };
    assert_eq!(
        check(Some(0.0), Some(&none), Some(price), Traced::Nothing, true),
        Checked {
            computed: Some(0.0),
            mark: Some(CostMark::ImplausibleTokens),
            counted: Some(0.0),
            checked: false
        }
    );
    let input_only = Tokens { input: 50_000, ..none };
    let c = check(Some(0.15), Some(&input_only), Some(price), Traced::Nothing, true);
    assert_eq!((c.mark, c.checked), (Some(CostMark::ImplausibleTokens), false));
    assert_eq!(
        check(Some(0.0), Some(&none), Some(price), Traced::Nothing, false).mark,
        None,
        "no patch written: no token needed"
    );
    let other = Tokens { input: 1, ..t };
    assert_eq!(
        check(Some(0.45), Some(&t), Some(price), Traced::Tokens(other), true).mark,
        Some(CostMark::TrajectoryDisagrees)
    );
    // Tokens stated at a tenth of what the trajectory counts: the most any says counts.
    let tenth = Tokens { input: 10_000, output: 1_000, cache_read: 0, cache_write: 0 };
    let under = check(Some(0.045), Some(&tenth), Some(price), Traced::Tokens(t), true);
    assert_eq!((under.mark, under.checked), (Some(CostMark::TrajectoryDisagrees), false));
    assert!((under.counted.unwrap() - price_of).abs() < 1e-12);
    assert_eq!(check(Some(0.45), Some(&t), Some(price), Traced::Tokens(t), true).mark, None);
}

#[test]
fn a_model_is_priced_only_where_every_name_it_gives_names_it_and_never_without_a_price_for_an_early_date() {
    let prices = Prices::builtin();
    let (day, early) = (day(2026, 6, 1), day(1970, 1, 1));
    let example = prices.of_model(["Example Model"], day).unwrap();
    assert_eq!(prices.of_model(["example-model", " EXAMPLE MODEL "], day), Some(example));
    // A name the table does not know beside a cheap one it does: no price.
    assert_eq!(prices.of_model(["deepseek-r1", "Claude Opus 4.5"], day), None);
    // Two models: no price.
    assert_eq!(prices.of_model(["o4-mini", "Example Model"], day), None);
    // An invisible character names no model.
    assert_eq!(prices.of_model(["Example\u{200b} Model"], day), None);
    assert_eq!(prices.of_model(["Example Model\u{200b}"], day), None);
    // Before its first price: its first price.
    assert_eq!(prices.of_model(["Example Model"], early), Some(example));
}

#[test]
fn a_trajectory_that_does_not_read_or_whose_totals_undercount_its_steps_bears_nothing_out() {
    let good = br#"{"schema_version": "ATIF-v1.4", "steps": [{"metrics": {"prompt_tokens": 9000, "completion_tokens": 300}}],
        "final_metrics": {"total_prompt_tokens": 9000, "total_completion_tokens": 300}}"#;
    let t = Tokens { input: 9000, output: 300, cache_read: 0, cache_write: 0 };
    assert_eq!(trajectory_tokens(good), Traced::Tokens(t));
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(good);
    assert_eq!(trajectory_tokens(&bom), Traced::Tokens(t), "a byte-order mark is read past");
    let whole = String::from_utf8_lossy(good).replace("9000,", "9000.0,");
    assert_eq!(trajectory_tokens(whole.as_bytes()), Traced::Tokens(t), "9000.0 is 9000");
    let mut garbage = good.to_vec();
    garbage.extend_from_slice(b"}garbage");
    assert_eq!(trajectory_tokens(&garbage), Traced::Unreadable);
    for bad in ["9000.5", "\"9000\"", "-1"] {
        let edited = String::from_utf8_lossy(good).replacen("9000", bad, 1);
        assert_eq!(trajectory_tokens(edited.as_bytes()), Traced::Unreadable, "{bad}");
    }
    // Totals edited down: the steps' count stands.
    let low =
        String::from_utf8_lossy(good).replace("\"total_prompt_tokens\": 9000", "\"total_prompt_tokens\": 10");
    assert_eq!(trajectory_tokens(low.as_bytes()), Traced::Tokens(t));
    assert_eq!(trajectory_tokens(b"{\"not\": \"atif\"}"), Traced::Nothing);
    assert_eq!(trajectory_tokens(b"plain text"), Traced::Nothing);
    // A review's (issue 75): counts in a file that does not read as ATIF are not read as
    // no trajectory at all: plain text naming tokens, an ATIF object inside an array or
    // another object.
    assert_eq!(trajectory_tokens(b"prompt_tokens: 1000000"), Traced::Unreadable);
    let wrapped = format!("[{}]", String::from_utf8_lossy(good));
    assert_eq!(trajectory_tokens(wrapped.as_bytes()), Traced::Unreadable);
    let inside = format!("{{\"trajectory\": {}}}", String::from_utf8_lossy(good));
    assert_eq!(trajectory_tokens(inside.as_bytes()), Traced::Unreadable);
    // An unreadable trajectory: the run is marked, unchecked, and counts its most.
    let price = Prices::builtin().find(["Example Model"], day(2026, 6, 1)).unwrap();
    let c = check(Some(0.0001), Some(&t), Some(price), Traced::Unreadable, true);
    assert_eq!((c.mark, c.checked), (Some(CostMark::TrajectoryDisagrees), false));
    assert_eq!(c.counted, Some(price.cost(&t)));
    // A stated cost above its tokens' price beyond the tolerance: marked, the higher counts.
    let over = check(Some(1.0), Some(&t), Some(price), Traced::Nothing, true);
    assert_eq!((over.mark, over.counted, over.checked), (Some(CostMark::Differs), Some(1.0), true));
}
